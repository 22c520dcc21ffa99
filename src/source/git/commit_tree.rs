//! The files of a commit's tree, as a snapshot holds them.
//!
//! Walking a tree reads every tree object below it. In a fresh clone those objects lie
//! scattered through one large pack, which the object database reads through a mapping:
//! each one read brings the pages around it into the process's memory too (about 21 MB
//! for the 700 trees of a 200,000-case project with 10,000 other files). Where the index
//! holds a tree unchanged, as its cache-tree extension records (git keeps it for every
//! directory a checkout or commit wrote), the files below it are the index's entries
//! there, and that tree's objects need not be read. The base of a pull request differs
//! from its head in a few directories: nearly all of its walk is then the index's.

use super::staged::{child_named, read_tree, snapshot_path};
use crate::error::Result;
use crate::hash::EntryKind;
use crate::source::{Unpinnable, UnpinnableReason};
use gix::bstr::{BStr, ByteSlice};
use gix::index::entry::{Flags, Mode};
use gix::index::extension::Tree as CacheTree;
use gix::objs::tree::EntryKind as TreeKind;
use gix::ObjectId;
use std::collections::{BTreeMap, BTreeSet};

/// A snapshot's files by project-relative path, with the paths it cannot pin.
pub(super) struct TreeFiles {
    pub entries: BTreeMap<String, (ObjectId, EntryKind)>,
    pub unpinnable: BTreeSet<Unpinnable>,
}

/// The files of the tree `tree` below the project folder `prefix` (empty for the top of
/// the repository), taking from `index` each subtree its cache-tree holds unchanged.
pub(super) fn tree_files(
    repo: &gix::Repository,
    tree: ObjectId,
    prefix: &str,
    index: Option<&gix::index::File>,
) -> Result<TreeFiles> {
    let mut walk = Walk {
        repo,
        index,
        prefix,
        files: TreeFiles {
            entries: BTreeMap::new(),
            unpinnable: BTreeSet::new(),
        },
    };
    walk.tree(b"", tree, index.and_then(|index| index.tree()))?;
    Ok(walk.files)
}

struct Walk<'a> {
    repo: &'a gix::Repository,
    index: Option<&'a gix::index::File>,
    prefix: &'a str,
    files: TreeFiles,
}

impl Walk<'_> {
    /// The files below `directory` (empty, or ending in `/`), whose tree is `id`.
    fn tree(&mut self, directory: &[u8], id: ObjectId, cache: Option<&CacheTree>) -> Result<()> {
        if !self.reaches_project(directory) {
            return Ok(());
        }
        let unchanged = cache.filter(|cache| cache.id == id);
        if let Some(count) = unchanged.and_then(|cache| cache.num_entries) {
            if self.take_from_index(directory, count) {
                return Ok(());
            }
        }
        for entry in read_tree(self.repo, id, "")?.entries {
            let mut path = directory.to_vec();
            path.extend_from_slice(&entry.filename);
            if entry.mode.is_tree() {
                path.push(b'/');
                let child = cache.and_then(|cache| child_named(cache, &entry.filename));
                self.tree(&path, entry.oid, child)?;
            } else {
                self.file(path.as_bstr(), entry.mode.kind(), entry.oid);
            }
        }
        Ok(())
    }

    /// Whether the project folder lies below or above `directory`.
    fn reaches_project(&self, directory: &[u8]) -> bool {
        let prefix = self.prefix.as_bytes();
        directory.is_empty()
            || prefix.is_empty()
            || directory.starts_with(prefix) && directory.get(prefix.len()) == Some(&b'/')
            || prefix.starts_with(&directory[..directory.len() - 1])
                && prefix.get(directory.len() - 1) == Some(&b'/')
    }

    /// Records the index's entries below `directory` as that tree's files, when they are
    /// the `count` entries its cache-tree was computed from, each one a plain staged file
    /// (no conflict, no entry only intended to be added, no sparse directory); false, and
    /// nothing recorded, otherwise. git itself never keeps a cache-tree valid over the
    /// others; an index written by another tool is not taken on trust.
    fn take_from_index(&mut self, directory: &[u8], count: u32) -> bool {
        let Some(index) = self.index else {
            return false;
        };
        let entries = match directory {
            [] => index.entries(),
            _ => index
                .prefixed_entries(directory.as_bstr())
                .unwrap_or_default(),
        };
        let plain = |entry: &gix::index::Entry| {
            entry.stage_raw() == 0
                && !entry.flags.contains(Flags::INTENT_TO_ADD)
                && entry.mode != Mode::DIR
        };
        if entries.len() != count as usize || !entries.iter().all(plain) {
            return false;
        }
        for entry in entries {
            let Some(mode) = entry.mode.to_tree_entry_mode() else {
                continue;
            };
            self.file(entry.path(index), mode.kind(), entry.id);
        }
        true
    }

    fn file(&mut self, repo_path: &BStr, kind: TreeKind, id: ObjectId) {
        let unpinnable = &mut self.files.unpinnable;
        let Some(path) = snapshot_path(self.prefix, repo_path, unpinnable) else {
            return;
        };
        let kind = match kind {
            TreeKind::Blob => EntryKind::File,
            TreeKind::BlobExecutable => EntryKind::Executable,
            TreeKind::Link => EntryKind::Symlink,
            TreeKind::Commit => {
                unpinnable.insert(Unpinnable {
                    path,
                    reason: UnpinnableReason::Submodule,
                });
                return;
            }
            TreeKind::Tree => return,
        };
        self.files.entries.insert(path, (id, kind));
    }
}
