//! Git access through gix: the index and commits as content sources, revision
//! resolution and merge bases. Nothing else in evalock talks to git objects.

use super::{ContentIdentity, ContentSource, Listing, SourceFile, Unpinnable, UnpinnableReason};
use crate::digest::EntryKind;
use crate::error::{Error, Result};
use gix::ObjectId;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

mod commit_tree;
mod ignored;
mod staged;
mod worktree_objects;

pub use ignored::git_ignored;
pub use staged::{StagedChanges, StagedIndex};
pub use worktree_objects::WorktreeObjects;

/// A discovered repository and where the project sits inside its work tree.
/// One commit of a range: what `check --base` reads of it.
#[derive(Debug, Clone)]
pub struct CommitInfo {
    pub id: ObjectId,
    pub parent: Option<ObjectId>,
    pub message: String,
}

pub struct GitRepo {
    repo: gix::ThreadSafeRepository,
    /// The project root relative to the work tree, `/`-separated, `""` at the top.
    prefix: String,
}

impl GitRepo {
    pub fn discover(project_root: &Path) -> Result<GitRepo> {
        let repo = gix::discover(project_root).map_err(|error| {
            use gix::discover::upwards::Error as Upwards;
            match error.downcast_any_ref::<Upwards>() {
                // Not a failure of git: the command was asked for somewhere it cannot work.
                Some(
                    Upwards::NoGitRepository { .. }
                    | Upwards::NoGitRepositoryWithinCeiling { .. }
                    | Upwards::NoGitRepositoryWithinFs { .. },
                ) => Error::Usage(format!(
                    "{} is not inside a git repository: run this in a clone, or `git init` \
                     and commit first",
                    std::path::absolute(project_root)
                        .as_deref()
                        .unwrap_or(project_root)
                        .display()
                )),
                _ => Error::git(format!(
                    "cannot open the git repository around {}: {error}",
                    project_root.display()
                )),
            }
        })?;
        let workdir = repo.workdir().ok_or_else(|| {
            Error::git("the repository has no work tree (bare repositories are not supported)")
        })?;
        let prefix = project_prefix(workdir, project_root)?;
        Ok(GitRepo {
            repo: repo.into_sync(),
            prefix,
        })
    }

    fn local(&self) -> gix::Repository {
        self.repo.to_thread_local()
    }

    /// The project root relative to the repository's work tree (`""` at the top).
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// Resolves a revision (`main`, `HEAD~2`, a SHA) to a commit id.
    pub fn resolve_commit(&self, revision: &str) -> Result<ObjectId> {
        let repo = self.local();
        let id = repo
            .rev_parse_single(revision)
            .map_err(|error| unresolved_revision(revision, &error.to_string()))?;
        let commit = id
            .object()
            .map_err(Error::git)?
            .peel_to_commit()
            .map_err(|_| {
                Error::Usage(format!(
                    "`{revision}` names a tree or a file, not a commit: pass a branch, tag or commit"
                ))
            })?;
        Ok(commit.id)
    }

    /// The best common ancestor of two commits, if any.
    pub fn merge_base(&self, one: ObjectId, two: ObjectId) -> Result<Option<ObjectId>> {
        let repo = self.local();
        let base = repo.merge_base(one, two).map_err(Error::git)?;
        Ok(base.map(|id| id.detach()))
    }

    /// The full messages of the commits in `base..head` (reachable from `head`, not from
    /// `base`), newest first.
    /// The commits reachable from `head` and not from `base`, newest first: id, first
    /// parent and message.
    pub fn commits_since(&self, base: ObjectId, head: ObjectId) -> Result<Vec<CommitInfo>> {
        let repo = self.local();
        let walk = repo
            .rev_walk([head])
            .with_hidden([base])
            .all()
            .map_err(Error::git)?;
        let mut commits = Vec::new();
        for info in walk {
            let commit = info.map_err(Error::git)?.object().map_err(Error::git)?;
            commits.push(CommitInfo {
                id: commit.id,
                parent: commit.parent_ids().next().map(|id| id.detach()),
                message: commit.message_raw_sloppy().to_string(),
            });
        }
        Ok(commits)
    }

    /// Up to `count` commits along the first-parent history of `head`, newest first. A
    /// shallow clone ends where its history does.
    pub fn first_parents(&self, head: ObjectId, count: usize) -> Result<Vec<ObjectId>> {
        let repo = self.local();
        let mut commits = Vec::new();
        let mut next = Some(head);
        while let Some(id) = next.filter(|_| commits.len() < count) {
            let Ok(commit) = repo.find_commit(id) else {
                break;
            };
            commits.push(id);
            next = commit.parent_ids().next().map(|id| id.detach());
        }
        Ok(commits)
    }

    /// The staged content: the index (honouring `GIT_INDEX_FILE`).
    pub fn index_source(&self) -> Result<GitSnapshot> {
        Ok(self.staged_index()?.into_snapshot())
    }

    /// The index, read once, for the pre-commit fast path and then, if needed, a full check.
    pub fn staged_index(&self) -> Result<StagedIndex> {
        StagedIndex::open(self)
    }

    /// Where git looks for hooks: `core.hooksPath` (relative to the top of the work tree,
    /// where git runs hooks) or the `hooks` folder of the common git directory, which
    /// linked work trees share.
    pub fn hooks_dir(&self) -> Result<PathBuf> {
        let repo = self.local();
        let configured = repo
            .config_snapshot()
            .trusted_path("core.hooksPath")
            .map_err(|error| Error::git(format!("cannot read core.hooksPath: {error}")))?;
        let hooks_dir = match configured {
            Some(path) if !path.as_os_str().is_empty() => match repo.workdir() {
                Some(workdir) if path.is_relative() => workdir.join(path),
                _ => path,
            },
            _ => repo.common_dir().join("hooks"),
        };
        // `./.git/hooks` reads worse than `.git/hooks` in messages and means the same.
        Ok(hooks_dir
            .components()
            .filter(|part| *part != std::path::Component::CurDir)
            .collect())
    }

    /// Where the `core.hooksPath` in effect was set, when it comes from outside this
    /// repository (the user's or the system's git configuration, the environment): hooks
    /// written there run in every repository that configuration reaches.
    pub fn shared_hooks_path_origin(&self) -> Option<String> {
        use gix::config::Source;
        let repo = self.local();
        let config = repo.config_snapshot();
        let section = config
            .plumbing()
            .sections_by_name("core")?
            .filter(|section| section.value("hooksPath").is_some())
            .last()?;
        let meta = section.meta();
        match meta.source {
            Source::Local | Source::Worktree => None,
            source => Some(match &meta.path {
                Some(path) => path.display().to_string(),
                None => format!("{source:?} configuration").to_lowercase(),
            }),
        }
    }

    /// The content of a commit's tree.
    pub fn revision_source(&self, revision: &str) -> Result<GitSnapshot> {
        let commit_id = self.resolve_commit(revision)?;
        let description = format!("{revision} ({})", &commit_id.to_string()[..7]);
        self.commit_source(commit_id, description)
    }

    pub fn commit_source(&self, commit_id: ObjectId, description: String) -> Result<GitSnapshot> {
        let repo = self.local();
        let tree = repo
            .find_commit(commit_id)
            .map_err(Error::git)?
            .tree_id()
            .map_err(Error::git)?;
        let files = commit_tree::tree_files(&repo, tree.detach(), &self.prefix)?;
        Ok(GitSnapshot {
            repo: self.repo.clone(),
            entries: files.entries,
            unmerged: BTreeSet::new(),
            unpinnable: files.unpinnable,
            description,
        })
    }

    /// The diff of a pull request from `base` to `head` (commits by any name), as GitHub
    /// shows it: from their merge base, or from `base` when they share no history.
    pub fn pull_request_diff(&self, base: &str, head: &str) -> Result<String> {
        let base = self.resolve_commit(base)?;
        let head = self.resolve_commit(head)?;
        let merge_base = self.merge_base(base, head)?.unwrap_or(base);
        self.unified_diff(merge_base, head)
    }

    /// The unified diff from one commit to another as `git diff` prints it (renames
    /// detected, no colour, no external diff tools, paths unquoted), for when the GitHub
    /// API refuses to produce a pull request's diff because it is too large.
    pub fn unified_diff(&self, from: ObjectId, to: ObjectId) -> Result<String> {
        let repo = self.local();
        let workdir = repo
            .workdir()
            .ok_or_else(|| Error::git("the repository has no work tree"))?;
        let output = std::process::Command::new("git")
            .current_dir(workdir)
            .args([
                "-c",
                "core.quotePath=false",
                "diff",
                "--no-color",
                "--no-ext-diff",
                "--no-textconv",
                "-M",
            ])
            .arg(format!("{from}..{to}"))
            .stdin(std::process::Stdio::null())
            .output()
            .map_err(|error| Error::git(format!("cannot run `git diff`: {error}")))?;
        if !output.status.success() {
            return Err(Error::git(format!(
                "`git diff {from}..{to}` failed: {}",
                String::from_utf8_lossy(&output.stderr).trim()
            )));
        }
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    }
}

/// The values of `<key>:` trailer lines in a commit message (the key matched without
/// regard to case, as git does), trimmed and non-empty.
pub fn trailer_values(message: &str, key: &str) -> Vec<String> {
    message
        .lines()
        .filter_map(|line| {
            let (name, value) = line.split_once(':')?;
            (name.trim().eq_ignore_ascii_case(key) && !value.trim().is_empty())
                .then(|| value.trim().to_owned())
        })
        .collect()
}

/// The index git would read: GIT_INDEX_FILE when set, which git resolves, when relative,
/// from the top of the work tree (where it runs hooks and where it moves before reading
/// it), not from the folder a command was started in; else the repository's own index.
fn index_path(repo: &gix::Repository) -> PathBuf {
    match std::env::var_os("GIT_INDEX_FILE") {
        Some(value) if !value.is_empty() => {
            let path = PathBuf::from(value);
            match repo.workdir() {
                Some(top) if path.is_relative() => top.join(path),
                _ => path,
            }
        }
        _ => repo.index_path(),
    }
}

fn project_prefix(workdir: &Path, project_root: &Path) -> Result<String> {
    let canonical = |path: &Path| {
        path.canonicalize()
            .map_err(|error| Error::io(path.display().to_string(), error))
    };
    let workdir = canonical(workdir)?;
    let project_root = canonical(project_root)?;
    let relative = project_root.strip_prefix(&workdir).map_err(|_| {
        Error::git(format!(
            "{} is outside the work tree {}",
            project_root.display(),
            workdir.display()
        ))
    })?;
    let parts: Vec<String> = relative
        .components()
        .map(|part| part.as_os_str().to_string_lossy().into_owned())
        .collect();
    Ok(parts.join("/"))
}

/// A frozen snapshot of git content: the index or one commit's tree.
pub struct GitSnapshot {
    repo: gix::ThreadSafeRepository,
    entries: BTreeMap<String, (ObjectId, EntryKind)>,
    unmerged: BTreeSet<String>,
    /// Submodules and names that are not UTF-8, sorted by path.
    unpinnable: BTreeSet<Unpinnable>,
    description: String,
}

/// The index as a source (`--staged`).
pub type IndexSource = GitSnapshot;
/// A commit as a source (`--rev`, `--base`).
pub type RevisionSource = GitSnapshot;

impl GitSnapshot {
    /// The git blob id of a path, for caches keyed by content.
    pub fn blob_id(&self, path: &str) -> Option<ObjectId> {
        self.entries.get(path).map(|(id, _)| *id)
    }

    /// The same snapshot, reading its objects through `repo` (another handle on the same
    /// repository): the one it was read with, and the pack pages it mapped, can then go.
    pub fn read_through(self, repo: &GitRepo) -> GitSnapshot {
        GitSnapshot {
            repo: repo.repo.clone(),
            ..self
        }
    }

    fn unmerged_error(&self, path: &str) -> Error {
        Error::Usage(format!("{path} has unresolved merge conflicts in the index: resolve them and `git add` the file"))
    }
}

impl ContentSource for GitSnapshot {
    fn describe(&self) -> String {
        self.description.clone()
    }

    fn read(&self, path: &str) -> Result<Option<Vec<u8>>> {
        if self.unmerged.contains(path) {
            return Err(self.unmerged_error(path));
        }
        let Some((id, _)) = self.entries.get(path) else {
            return Ok(None);
        };
        let repo = self.repo.to_thread_local();
        let object = repo.find_object(*id).map_err(|error| {
            Error::git(format!(
                "cannot read {path} from {}: {error}",
                self.description
            ))
        })?;
        let mut data = object.detach().data;
        // A blob stored as a delta is resolved in a buffer that also holds its base: as
        // large again as the blob, for as long as the caller keeps the bytes.
        data.shrink_to_fit();
        Ok(Some(data))
    }

    fn kind_of(&self, path: &str) -> Result<Option<EntryKind>> {
        if self.unmerged.contains(path) {
            return Err(self.unmerged_error(path));
        }
        Ok(self.entries.get(path).map(|(_, kind)| *kind))
    }

    fn is_directory(&self, path: &str) -> Result<bool> {
        // A snapshot holds files only: a directory is there when a file lies below it, or
        // a submodule stands there (every checkout of it is a directory, as the working
        // tree shows it).
        let prefix = directory_prefix(path);
        let submodule = self
            .unpinnable
            .iter()
            .any(|entry| entry.path == path && entry.reason == UnpinnableReason::Submodule);
        Ok(!prefix.is_empty()
            && (submodule
                || self
                    .entries
                    .range(prefix.clone()..)
                    .next()
                    .is_some_and(|(entry, _)| entry.starts_with(&prefix))))
    }

    fn identity(&self, path: &str) -> Result<Option<ContentIdentity>> {
        if self.unmerged.contains(path) {
            return Err(self.unmerged_error(path));
        }
        Ok(self
            .entries
            .get(path)
            .map(|(id, _)| ContentIdentity::Object(id.to_string())))
    }

    fn object_id(&self, path: &str) -> Result<Option<ObjectId>> {
        Ok(self
            .entries
            .get(path)
            .filter(|(_, kind)| matches!(kind, EntryKind::File | EntryKind::Executable))
            .filter(|_| !self.unmerged.contains(path))
            .map(|(id, _)| *id))
    }

    fn list(&self, dir: &str) -> Result<Vec<SourceFile>> {
        let prefix = directory_prefix(dir);
        // A conflicted file has no single staged version: a listing without it would read
        // as if it had been deleted (globs matching nothing, cases to retire).
        let unmerged = self.unmerged.range(prefix.clone()..).next();
        if let Some(path) = unmerged.filter(|path| path.starts_with(&prefix)) {
            return Err(self.unmerged_error(path));
        }
        Ok(self
            .entries
            .range(prefix.clone()..)
            .take_while(|(path, _)| path.starts_with(&prefix))
            .map(|(path, (_, kind))| SourceFile {
                path: path.clone(),
                kind: *kind,
            })
            .collect())
    }

    fn listing(&self, dir: &str) -> Result<Listing> {
        Ok(Listing {
            files: self.list(dir)?,
            unpinnable: super::unpinnable_below(&self.unpinnable, &directory_prefix(dir)),
        })
    }
}

/// `dir/`, or `""` for the whole project: what every path below `dir` starts with.
fn directory_prefix(dir: &str) -> String {
    if dir.is_empty() {
        String::new()
    } else {
        format!("{dir}/")
    }
}

/// Why a revision did not resolve, in the user's terms (the parser's own message names
/// its internals); an ambiguous abbreviation keeps the candidates it lists.
fn unresolved_revision(revision: &str, detail: &str) -> Error {
    if detail.contains("ambiguous") {
        return Error::Usage(format!("cannot resolve revision `{revision}`: {detail}"));
    }
    Error::Usage(format!(
        "cannot resolve revision `{revision}`: no branch, tag or commit by that name here (check with `git rev-parse --verify {revision}`); in a shallow CI clone, fetch it first or check out with `fetch-depth: 0`"
    ))
}
