//! The files of a commit's tree, as a snapshot holds them: only the folders on the way to
//! the project and below it are read.

use super::staged::{read_tree, snapshot_path};
use crate::digest::EntryKind;
use crate::error::Result;
use crate::source::{Unpinnable, UnpinnableReason};
use gix::bstr::{BStr, ByteSlice};
use gix::objs::tree::EntryKind as TreeKind;
use gix::ObjectId;
use std::collections::{BTreeMap, BTreeSet};

/// A snapshot's files by project-relative path, with the paths it cannot pin.
pub(super) struct TreeFiles {
    pub entries: BTreeMap<String, (ObjectId, EntryKind)>,
    pub unpinnable: BTreeSet<Unpinnable>,
}

/// The files of the tree `tree` below the project folder `prefix` (empty for the top of
/// the repository).
pub(super) fn tree_files(
    repo: &gix::Repository,
    tree: ObjectId,
    prefix: &str,
) -> Result<TreeFiles> {
    let mut walk = Walk {
        repo,
        prefix,
        files: TreeFiles {
            entries: BTreeMap::new(),
            unpinnable: BTreeSet::new(),
        },
    };
    walk.tree(b"", tree)?;
    Ok(walk.files)
}

struct Walk<'a> {
    repo: &'a gix::Repository,
    prefix: &'a str,
    files: TreeFiles,
}

impl Walk<'_> {
    /// The files below `directory` (empty, or ending in `/`), whose tree is `id`.
    fn tree(&mut self, directory: &[u8], id: ObjectId) -> Result<()> {
        if !self.reaches_project(directory) {
            return Ok(());
        }
        for entry in read_tree(self.repo, id, "")?.entries {
            let mut path = directory.to_vec();
            path.extend_from_slice(&entry.filename);
            if entry.mode.is_tree() {
                path.push(b'/');
                self.tree(&path, entry.oid)?;
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
