//! The project as the pull request's merge base has it: the old side of the diff, where
//! the files the pull request deletes, and the cases it removes, still are.

use super::anchor::RemovedCaseLines;
use super::event::PullRequest;
use crate::cases::{parse_case_file_with, CaseDetail};
use crate::finding::Finding;
use crate::rules::RuleId;
use crate::source::{ContentSource, GitRepo, GitSnapshot};
use std::collections::{BTreeMap, BTreeSet};

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

/// Where each case that a finding says was removed (EL103) stood at the merge base, by
/// project-relative file and case id: the diff's old side is that commit, so these lines
/// find the hunk that removed the case.
pub fn removed_case_lines(base: &dyn ContentSource, findings: &[Finding]) -> RemovedCaseLines {
    let mut wanted: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for finding in findings
        .iter()
        .filter(|finding| finding.rule == RuleId::CaseRemoved)
    {
        if let (Some(location), Some(case)) = (&finding.location, &finding.subject.case) {
            wanted.entry(&location.path).or_default().insert(case);
        }
    }
    let mut lines = RemovedCaseLines::new();
    for (path, cases) in wanted {
        let Ok(Some(bytes)) = base.read(path) else {
            continue;
        };
        for case in parse_case_file_with(path, &bytes, CaseDetail::Summary).cases {
            if cases.contains(case.id.as_str()) {
                lines
                    .entry((path.to_owned(), case.id))
                    .or_insert((case.line, case.end_line));
            }
        }
    }
    lines
}
