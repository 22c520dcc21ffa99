//! The project as the pull request's merge base has it: the old side of the diff, where
//! the files the pull request deletes still are.

use super::event::PullRequest;
use crate::source::{GitRepo, GitSnapshot};

/// The merge base of the pull request's base and head (the commit GitHub's diff starts
/// from), or its base when they share no history; `None` when the commits are not in
/// this clone (a shallow checkout) or outside a pull request.
pub fn base_source(repo: Option<&GitRepo>, pull: Option<&PullRequest>) -> Option<GitSnapshot> {
    let (repo, pull) = repo.zip(pull)?;
    let base = repo.resolve_commit(&pull.base_sha).ok()?;
    let head = repo.resolve_commit(&pull.head_sha).ok()?;
    let merge_base = repo.merge_base(base, head).ok().flatten().unwrap_or(base);
    let short = merge_base.to_string();
    repo.commit_source(
        merge_base,
        format!("merge base ({})", &short[..short.len().min(7)]),
    )
    .ok()
}
