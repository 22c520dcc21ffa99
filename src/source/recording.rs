//! A source that records what is read through it (content identities, kinds, directory
//! listings), so that a later run can tell, without reading anything, whether all of it is
//! still the same: the key of `check`'s memo.

use super::{ContentIdentity, ContentSource, Entry, Listing, SourceFile, UnpinnableReason};
use crate::digest::EntryKind;
use crate::error::Result;
use rayon::slice::ParallelSliceMut as _;
use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// One thing a run looked at, and what it found.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Dependency {
    /// A file's content by identity (`None`: absent).
    Content(String, Option<ContentIdentity>),
    Kind(String, Option<EntryKind>),
    /// A directory's listing, by the SHA-256 (hex) of its paths and kinds, executable
    /// files as files (see [`ContentSource::listed_names`]).
    Listing(String, String),
    /// The files named one of some names anywhere (the names joined by `/`), by the
    /// SHA-256 (hex) of their paths (see [`ContentSource::files_named`]).
    Named(String, String),
    /// Whether a path is a directory (a plugin folder a marketplace names).
    Directory(String, bool),
    /// What stands at a path (see [`ContentSource::entry_of`]).
    Entry(String, Option<Entry>),
}

impl Dependency {
    /// Whether the dependency still holds in `source`; an error counts as changed.
    pub fn holds(&self, source: &dyn ContentSource) -> bool {
        let holds = || -> Result<bool> {
            Ok(match self {
                Dependency::Content(path, Some(identity)) => {
                    source.identity(path)?.as_ref() == Some(identity)
                }
                Dependency::Content(path, None) => {
                    source.kind_of(path)?.is_none() && !source.is_directory(path)?
                }
                Dependency::Kind(path, kind) => source.kind_of(path)? == *kind,
                Dependency::Listing(dir, digest) => {
                    listing_digest(&source.listed_names(dir)?) == *digest
                }
                Dependency::Named(names, digest) => {
                    let names: Vec<&str> = names.split('/').collect();
                    paths_digest(&source.files_named(&names)?) == *digest
                }
                Dependency::Directory(path, is) => source.is_directory(path)? == *is,
                Dependency::Entry(path, entry) => source.entry_of(path)? == *entry,
            })
        };
        holds().unwrap_or(false)
    }
}

/// A content source that remembers every read.
pub struct RecordingSource<'a> {
    inner: &'a dyn ContentSource,
    dependencies: Mutex<Vec<Dependency>>,
    /// False once something was read whose content the source cannot identify.
    verifiable: AtomicBool,
}

impl<'a> RecordingSource<'a> {
    pub fn new(inner: &'a dyn ContentSource) -> Self {
        RecordingSource {
            inner,
            dependencies: Mutex::new(Vec::new()),
            verifiable: AtomicBool::new(true),
        }
    }

    fn record(&self, dependency: Dependency) {
        match self.dependencies.lock() {
            Ok(mut dependencies) => dependencies.push(dependency),
            Err(_) => self.unverifiable(),
        }
    }

    fn unverifiable(&self) {
        self.verifiable.store(false, Ordering::Relaxed);
    }

    /// What was read, sorted and deduplicated (taken: what is read later is recorded
    /// anew); `None` when it cannot be verified later (content without identity, or one
    /// path seen two ways during the run).
    pub fn dependencies(&self) -> Option<Vec<Dependency>> {
        if !self.verifiable.load(Ordering::Relaxed) {
            return None;
        }
        let mut dependencies = std::mem::take(&mut *self.dependencies.lock().ok()?);
        dependencies.par_sort_unstable();
        dependencies.dedup();
        // Sorted, two findings of one path by one kind of dependency are neighbours.
        fn key(dependency: &Dependency) -> (u8, &str) {
            match dependency {
                Dependency::Content(path, _) => (0, path),
                Dependency::Kind(path, _) => (1, path),
                Dependency::Listing(path, _) => (2, path),
                Dependency::Named(names, _) => (3, names),
                Dependency::Directory(path, _) => (4, path),
                Dependency::Entry(path, _) => (5, path),
            }
        }
        let seen_once = dependencies
            .windows(2)
            .all(|pair| key(&pair[0]) != key(&pair[1]));
        seen_once.then_some(dependencies)
    }
}

fn paths_digest(paths: &[String]) -> String {
    let mut hasher = Sha256::new();
    for path in paths {
        hasher.update(path.as_bytes());
        hasher.update(b"\n");
    }
    crate::digest::Digest::from_sha256_bytes(&hasher.finalize().into()).hex()
}

fn listing_digest(listing: &Listing) -> String {
    let mut hasher = Sha256::new();
    for file in &listing.files {
        let kind = match file.kind {
            EntryKind::Executable => EntryKind::File,
            kind => kind,
        };
        hasher.update(file.path.as_bytes());
        hasher.update([b' ', kind.letter() as u8, b'\n']);
    }
    for entry in &listing.unpinnable {
        let reason = match entry.reason {
            UnpinnableReason::Submodule => b's',
            UnpinnableReason::NameNotUtf8 => b'n',
        };
        hasher.update(entry.path.as_bytes());
        hasher.update([b' ', b'?', reason, b'\n']);
    }
    crate::digest::Digest::from_sha256_bytes(&hasher.finalize().into()).hex()
}

impl ContentSource for RecordingSource<'_> {
    fn describe(&self) -> String {
        self.inner.describe()
    }

    fn read(&self, path: &str) -> Result<Option<Vec<u8>>> {
        // The identity is taken first: a change during the read then shows later.
        let identity = self.inner.identity(path)?;
        let bytes = self.inner.read(path)?;
        match (&identity, &bytes) {
            (Some(_), Some(_)) | (None, None) => {
                self.record(Dependency::Content(path.to_owned(), identity))
            }
            (None, Some(_)) | (Some(_), None) => self.unverifiable(),
        }
        Ok(bytes)
    }

    fn read_into(&self, path: &str, buffer: &mut Vec<u8>) -> Result<bool> {
        let identity = self.inner.identity(path)?;
        let present = self.inner.read_into(path, buffer)?;
        match (&identity, present) {
            (Some(_), true) | (None, false) => {
                self.record(Dependency::Content(path.to_owned(), identity))
            }
            (None, true) | (Some(_), false) => self.unverifiable(),
        }
        Ok(present)
    }

    fn read_blocks(
        &self,
        path: &str,
        block: usize,
        each: &mut (dyn FnMut(&[u8]) + Send),
    ) -> Result<bool> {
        let identity = self.inner.identity(path)?;
        let present = self.inner.read_blocks(path, block, each)?;
        match (&identity, present) {
            (Some(_), true) | (None, false) => {
                self.record(Dependency::Content(path.to_owned(), identity))
            }
            (None, true) | (Some(_), false) => self.unverifiable(),
        }
        Ok(present)
    }

    fn kind_of(&self, path: &str) -> Result<Option<EntryKind>> {
        let kind = self.inner.kind_of(path)?;
        self.record(Dependency::Kind(path.to_owned(), kind));
        Ok(kind)
    }

    fn is_directory(&self, path: &str) -> Result<bool> {
        let is_directory = self.inner.is_directory(path)?;
        self.record(Dependency::Directory(path.to_owned(), is_directory));
        Ok(is_directory)
    }

    fn entry_of(&self, path: &str) -> Result<Option<Entry>> {
        let entry = self.inner.entry_of(path)?;
        self.record(Dependency::Entry(path.to_owned(), entry));
        Ok(entry)
    }

    fn list(&self, dir: &str) -> Result<Vec<SourceFile>> {
        Ok(self.listing(dir)?.files)
    }

    fn listed_names(&self, dir: &str) -> Result<Listing> {
        let listing = self.inner.listed_names(dir)?;
        self.record(Dependency::Listing(
            dir.to_owned(),
            listing_digest(&listing),
        ));
        Ok(listing)
    }

    fn listing(&self, dir: &str) -> Result<Listing> {
        let listing = self.inner.listing(dir)?;
        self.record(Dependency::Listing(
            dir.to_owned(),
            listing_digest(&listing),
        ));
        Ok(listing)
    }

    fn files_named(&self, names: &[&str]) -> Result<Vec<String>> {
        let found = self.inner.files_named(names)?;
        self.record(Dependency::Named(names.join("/"), paths_digest(&found)));
        Ok(found)
    }

    /// Not recorded: an object id decides only whether a file is parsed again, never what
    /// parsing it yields.
    fn object_id(&self, path: &str) -> Result<Option<gix::ObjectId>> {
        self.inner.object_id(path)
    }

    fn identity(&self, path: &str) -> Result<Option<ContentIdentity>> {
        let identity = self.inner.identity(path)?;
        if identity.is_some() {
            self.record(Dependency::Content(path.to_owned(), identity.clone()));
        }
        Ok(identity)
    }
}
