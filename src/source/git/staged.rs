//! The index as the next commit will record it, and which paths that commit changes
//! compared with HEAD.
//!
//! The comparison is what `git diff --cached --name-only --no-renames` answers, computed
//! from the index and the trees of HEAD. Wherever the index's cache-tree extension is
//! valid and names the same tree as HEAD, the whole subtree is unchanged and skipped;
//! elsewhere entries are compared one by one. Whatever cannot be decided exactly
//! (no HEAD commit yet, a sparse directory entry that differs, a path that is not UTF-8)
//! makes the answer [`StagedChanges::Unknown`], so callers judge everything instead.

use super::{GitRepo, GitSnapshot};
use crate::digest::EntryKind;
use crate::error::{Error, Result};
use crate::source::{Unpinnable, UnpinnableReason};
use gix::bstr::{BStr, ByteSlice};
use gix::index::entry::{Flags, Mode, Stage};
use gix::index::extension::Tree as CacheTree;
use gix::ObjectId;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ops::Range;

/// The staged content, read once from the index file (honouring `GIT_INDEX_FILE`).
pub struct StagedIndex {
    repo: gix::ThreadSafeRepository,
    index: gix::index::File,
    prefix: String,
}

/// What the next commit changes compared with HEAD.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StagedChanges {
    /// Project-relative paths the commit adds, modifies, removes or changes the kind of,
    /// sorted; paths outside the project are left out.
    Paths(Vec<String>),
    /// Not decidable cheaply and exactly: judge the whole index.
    Unknown,
}

impl StagedIndex {
    pub(super) fn open(git: &GitRepo) -> Result<StagedIndex> {
        let repo = git.local();
        let index_path = super::index_path(&repo);
        // The trailing checksum is not recomputed: git verified and wrote this index
        // moments before running the hook, and hashing it is a third of the read. One
        // thread: starting more costs more than a pre-commit-sized index takes to decode.
        let options = gix::index::decode::Options {
            thread_limit: Some(1),
            ..Default::default()
        };
        let index = gix::index::File::at_or_default(&index_path, repo.object_hash(), true, options)
            .map_err(|error| {
                Error::git(format!(
                    "cannot read the index {}: {error}",
                    index_path.display()
                ))
            })?;
        Ok(StagedIndex {
            repo: git.repo.clone(),
            index,
            prefix: git.prefix.clone(),
        })
    }

    fn repo_path(&self, project_path: &str) -> String {
        if self.prefix.is_empty() {
            project_path.to_owned()
        } else {
            format!("{}/{project_path}", self.prefix)
        }
    }

    /// The object id of a project-relative file as staged; `None` when the next commit
    /// will not hold it as a file (absent, only intended to be added, or a symlink, which
    /// is never followed).
    pub fn file_id(&self, path: &str) -> Option<ObjectId> {
        let repo_path = self.repo_path(path);
        let entry = self
            .index
            .entry_by_path_and_stage(repo_path.as_bytes().as_bstr(), Stage::Unconflicted)?;
        let regular = !entry.flags.contains(Flags::INTENT_TO_ADD)
            && matches!(entry.mode, Mode::FILE | Mode::FILE_EXECUTABLE);
        regular.then_some(entry.id)
    }

    /// The staged bytes of a project-relative file; `None` when [`StagedIndex::file_id`]
    /// has none.
    pub fn read_file(&self, path: &str) -> Result<Option<Vec<u8>>> {
        let Some(id) = self.file_id(path) else {
            return Ok(None);
        };
        let repo = self.repo.to_thread_local();
        let object = repo
            .find_object(id)
            .map_err(|error| Error::git(format!("cannot read {path} from the index: {error}")))?;
        Ok(Some(object.detach().data))
    }

    /// Every path the next commit changes compared with HEAD.
    pub fn changes_since_head(&self) -> Result<StagedChanges> {
        let repo = self.repo.to_thread_local();
        // No HEAD commit (a first commit) or a HEAD that is not a commit: everything staged
        // is new, so there is nothing to skip.
        let Ok(head_tree) = repo.head_tree_id() else {
            return Ok(StagedChanges::Unknown);
        };
        let mut diff = TreeDiff {
            repo: &repo,
            index: &self.index,
            changed: BTreeSet::new(),
            undecidable: false,
        };
        let all_entries = 0..self.index.entries().len();
        diff.directory(
            b"",
            all_entries,
            Some(head_tree.detach()),
            self.index.tree(),
        )?;
        if diff.undecidable {
            return Ok(StagedChanges::Unknown);
        }
        let mut paths = Vec::with_capacity(diff.changed.len());
        for repo_path in diff.changed {
            let Ok(text) = String::from_utf8(repo_path) else {
                return Ok(StagedChanges::Unknown);
            };
            if let Some(path) = project_relative(&self.prefix, &text) {
                paths.push(path);
            }
        }
        Ok(StagedChanges::Paths(paths))
    }

    /// The index as a content source for a full check, without reading it again.
    /// Entries only intended to be added (`git add -N`) are left out: the commit will not
    /// hold them.
    pub fn into_snapshot(self) -> GitSnapshot {
        let mut entries = BTreeMap::new();
        let mut unmerged = BTreeSet::new();
        let mut unpinnable = BTreeSet::new();
        for entry in self.index.entries() {
            let Some(path) = snapshot_path(&self.prefix, entry.path(&self.index), &mut unpinnable)
            else {
                continue;
            };
            if entry.stage_raw() != 0 {
                unmerged.insert(path);
                continue;
            }
            if entry.flags.contains(Flags::INTENT_TO_ADD) {
                continue;
            }
            let kind = match entry.mode {
                Mode::FILE => EntryKind::File,
                Mode::FILE_EXECUTABLE => EntryKind::Executable,
                Mode::SYMLINK => EntryKind::Symlink,
                Mode::COMMIT => {
                    unpinnable.insert(Unpinnable {
                        path,
                        reason: UnpinnableReason::Submodule,
                    });
                    continue;
                }
                _ => continue,
            };
            entries.insert(path, (entry.id, kind));
        }
        GitSnapshot {
            repo: self.repo,
            entries,
            unmerged,
            unpinnable,
            description: "index".into(),
        }
    }
}

/// The project-relative path of a repository path for a snapshot: `None` outside the
/// project, and `None` for a name that is not UTF-8, which is recorded as unpinnable.
pub(super) fn snapshot_path(
    prefix: &str,
    repo_path: &[u8],
    unpinnable: &mut BTreeSet<Unpinnable>,
) -> Option<String> {
    let repo_path = String::from_utf8_lossy(repo_path);
    let path = project_relative(prefix, &repo_path)?;
    if matches!(repo_path, std::borrow::Cow::Owned(_)) {
        unpinnable.insert(Unpinnable {
            path,
            reason: UnpinnableReason::NameNotUtf8,
        });
        return None;
    }
    Some(path)
}

fn project_relative(prefix: &str, repo_path: &str) -> Option<String> {
    if prefix.is_empty() {
        return Some(repo_path.to_owned());
    }
    repo_path
        .strip_prefix(prefix)?
        .strip_prefix('/')
        .map(str::to_owned)
}

/// One walk over the index against HEAD's trees, collecting changed repository paths.
struct TreeDiff<'a> {
    repo: &'a gix::Repository,
    index: &'a gix::index::File,
    changed: BTreeSet<Vec<u8>>,
    undecidable: bool,
}

/// A HEAD tree entry: its mode and object id.
type HeadEntry = (gix::object::tree::EntryMode, ObjectId);

impl TreeDiff<'_> {
    /// Compares the index entries in `range` (all below `directory`, which is empty or ends
    /// in `/`) with the HEAD tree `head_tree` of that directory.
    fn directory(
        &mut self,
        directory: &[u8],
        range: Range<usize>,
        head_tree: Option<ObjectId>,
        cache: Option<&CacheTree>,
    ) -> Result<()> {
        if let (Some(cache), Some(head_tree)) = (cache, head_tree) {
            if cache.num_entries.is_some() && cache.id == head_tree {
                return Ok(());
            }
        }
        let mut head_entries = match head_tree {
            Some(id) => self.tree_entries(id)?,
            None => HashMap::new(),
        };
        let entries = self.index.entries();
        let mut position = range.start;
        while position < range.end && !self.undecidable {
            let entry = &entries[position];
            let path = entry.path(self.index);
            let rest = &path[directory.len()..];
            match rest.find_byte(b'/') {
                None => {
                    match head_entries.remove(rest.as_bytes()) {
                        Some((mode, id)) if mode.is_tree() => {
                            // A folder in HEAD became a file.
                            let mut folder = path.to_vec();
                            folder.push(b'/');
                            self.removed_tree(&folder, id)?;
                            self.compare_file(path, entry, None);
                        }
                        head_entry => self.compare_file(path, entry, head_entry),
                    }
                    position += 1;
                }
                Some(slash) => {
                    let name = &rest[..slash];
                    let subdirectory = &path[..directory.len() + slash + 1];
                    let end = position
                        + entries[position..range.end].partition_point(|other| {
                            other.path(self.index).starts_with(subdirectory)
                        });
                    let head_entry = head_entries.remove(name);
                    if entry.mode == Mode::DIR {
                        // A sparse-index directory entry stands for a whole tree.
                        if head_entry.is_none_or(|(_, id)| id != entry.id) {
                            self.undecidable = true;
                        }
                    } else {
                        let head_subtree = match head_entry {
                            Some((mode, id)) if mode.is_tree() => Some(id),
                            Some(_) => {
                                // A file in HEAD became a directory.
                                self.changed
                                    .insert(subdirectory[..subdirectory.len() - 1].to_vec());
                                None
                            }
                            None => None,
                        };
                        let cache_child = cache.and_then(|cache| child_named(cache, name));
                        self.directory(subdirectory, position..end, head_subtree, cache_child)?;
                    }
                    position = end;
                }
            }
        }
        for (name, (mode, id)) in head_entries {
            let mut path = directory.to_vec();
            path.extend_from_slice(&name);
            if mode.is_tree() {
                path.push(b'/');
                self.removed_tree(&path, id)?;
            } else {
                self.changed.insert(path);
            }
        }
        Ok(())
    }

    fn compare_file(
        &mut self,
        path: &BStr,
        entry: &gix::index::Entry,
        head_entry: Option<HeadEntry>,
    ) {
        let staged_kind = entry.mode.to_tree_entry_mode().map(|mode| mode.kind());
        let unchanged = entry.stage_raw() == 0
            && !entry.flags.contains(Flags::INTENT_TO_ADD)
            && head_entry
                .is_some_and(|(mode, id)| Some(mode.kind()) == staged_kind && id == entry.id);
        // An intent-to-add entry is not committed, so it changes nothing.
        let absent_on_both_sides =
            entry.flags.contains(Flags::INTENT_TO_ADD) && head_entry.is_none();
        if !unchanged && !absent_on_both_sides {
            self.changed.insert(path.to_vec());
        }
    }

    /// Records every path below a tree that HEAD has and the index does not.
    fn removed_tree(&mut self, directory: &[u8], id: ObjectId) -> Result<()> {
        for (name, (mode, child_id)) in self.tree_entries(id)? {
            let mut path = directory.to_vec();
            path.extend_from_slice(&name);
            if mode.is_tree() {
                path.push(b'/');
                self.removed_tree(&path, child_id)?;
            } else {
                self.changed.insert(path);
            }
        }
        Ok(())
    }

    fn tree_entries(&self, id: ObjectId) -> Result<HashMap<Vec<u8>, HeadEntry>> {
        Ok(read_tree(self.repo, id, " of HEAD")?
            .entries
            .into_iter()
            .map(|entry| (entry.filename.into(), (entry.mode, entry.oid)))
            .collect())
    }
}

/// The tree object `id`, decoded; `whose` ends the error messages (` of HEAD`).
pub(super) fn read_tree(
    repo: &gix::Repository,
    id: ObjectId,
    whose: &str,
) -> Result<gix::objs::Tree> {
    let tree = repo
        .find_tree(id)
        .map_err(|error| Error::git(format!("cannot read tree {id}{whose}: {error}")))?;
    let decoded = tree
        .decode()
        .map_err(|error| Error::git(format!("cannot decode tree {id}{whose}: {error}")))?;
    Ok(decoded.into())
}

pub(super) fn child_named<'a>(cache: &'a CacheTree, name: &[u8]) -> Option<&'a CacheTree> {
    cache
        .children
        .iter()
        .find(|child| child.name.as_slice() == name)
}
