//! A git snapshot whose files are read, where another source holds the same objects,
//! from that source: a check with a base reads the base's unchanged files from the
//! working tree (through the page cache) instead of from git's packs, whose pages count
//! against the process for as long as it maps them. On the benchmark's pull request,
//! reading its 300 skills' SKILL.md from the pack mapped 22 MB of it.

use super::{ContentIdentity, ContentSource, GitSnapshot, Listing, SourceFile};
use crate::digest::EntryKind;
use crate::error::Result;
use gix::ObjectId;

pub struct SameObjects<'a> {
    snapshot: GitSnapshot,
    other: &'a dyn ContentSource,
}

impl<'a> SameObjects<'a> {
    /// `snapshot`, reading from `other` each file that both hold as the same object.
    pub fn new(snapshot: GitSnapshot, other: &'a dyn ContentSource) -> SameObjects<'a> {
        SameObjects { snapshot, other }
    }

    /// The bytes of `path` from the other source, when it holds `path` as the object
    /// `id` before and after reading it (a file changed meanwhile is read from git).
    fn read_same(&self, path: &str, id: ObjectId) -> Result<Option<Vec<u8>>> {
        if self.other.object_id(path)? != Some(id) {
            return Ok(None);
        }
        let bytes = self.other.read(path)?;
        match self.other.object_id(path)? == Some(id) {
            true => Ok(bytes),
            false => Ok(None),
        }
    }
}

impl ContentSource for SameObjects<'_> {
    fn describe(&self) -> String {
        self.snapshot.describe()
    }

    fn read(&self, path: &str) -> Result<Option<Vec<u8>>> {
        if let Some(id) = self.snapshot.object_id(path)? {
            if let Some(bytes) = self.read_same(path, id)? {
                return Ok(Some(bytes));
            }
        }
        self.snapshot.read(path)
    }

    fn kind_of(&self, path: &str) -> Result<Option<EntryKind>> {
        self.snapshot.kind_of(path)
    }

    fn is_directory(&self, path: &str) -> Result<bool> {
        self.snapshot.is_directory(path)
    }

    fn list(&self, dir: &str) -> Result<Vec<SourceFile>> {
        self.snapshot.list(dir)
    }

    fn listing(&self, dir: &str) -> Result<Listing> {
        self.snapshot.listing(dir)
    }

    fn identity(&self, path: &str) -> Result<Option<ContentIdentity>> {
        self.snapshot.identity(path)
    }

    fn object_id(&self, path: &str) -> Result<Option<ObjectId>> {
        self.snapshot.object_id(path)
    }
}
