//! A source that records what is read through it (content identities, kinds, directory
//! listings), so that a later run can tell, without reading anything, whether all of it is
//! still the same: the key of `check`'s memo.

use super::{ContentIdentity, ContentSource, Entry, Listing, SourceFile, Stamp, UnpinnableReason};
use crate::digest::EntryKind;
use crate::error::Result;
use rayon::prelude::*;
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
    /// files as files (see [`ContentSource::listed_names`]), and the stamps of the
    /// folders read: while they hold, the listing is not read again.
    Listing(String, String, Vec<Stamp>),
    /// The files named one of some names anywhere (the names joined by `/`), by the
    /// SHA-256 (hex) of their paths (see [`ContentSource::files_named`]), and the stamps
    /// of the folders walked and of the ignore files that steered the walk.
    Named(String, String, Vec<Stamp>),
    /// Whether a path is a directory (a plugin folder a marketplace names).
    Directory(String, bool),
    /// What stands at a path (see [`ContentSource::entry_of`]).
    Entry(String, Option<Entry>),
}

/// Whether every one of `dependencies` still holds in `source`. A stamp several of them
/// share (a skill's folder, walked for its root and for the whole tree) is taken once, and
/// the stamps are taken first: the folders they find real spare the files below them the
/// symlink check of their way.
pub fn all_hold(dependencies: &[Dependency], source: &dyn ContentSource) -> bool {
    let mut stamps: Vec<&Stamp> = dependencies
        .iter()
        .flat_map(|dependency| match dependency {
            Dependency::Listing(_, _, stamps) | Dependency::Named(_, _, stamps) => {
                stamps.as_slice()
            }
            _ => &[],
        })
        .collect();
    stamps.sort_unstable();
    stamps.dedup();
    let changed: std::collections::HashSet<&str> = stamps
        .par_iter()
        .filter(|(path, stamp)| !matches!(source.stamp(path), Ok(now) if now == *stamp))
        .map(|(path, _)| path.as_str())
        .collect();
    let stamps_hold = |stamps: &[Stamp]| {
        !stamps.is_empty()
            && stamps
                .iter()
                .all(|(path, _)| !changed.contains(path.as_str()))
    };
    dependencies
        .par_iter()
        .all(|dependency| dependency.holds_where(source, &stamps_hold))
}

impl Dependency {
    /// Whether the dependency still holds in `source`; an error counts as changed.
    pub fn holds(&self, source: &dyn ContentSource) -> bool {
        self.holds_where(source, &|stamps| stamps_hold(source, stamps))
    }

    /// [`Dependency::holds`], with `stamps_hold` telling whether stamps are unchanged.
    fn holds_where(
        &self,
        source: &dyn ContentSource,
        stamps_hold: &(dyn Fn(&[Stamp]) -> bool + Sync),
    ) -> bool {
        let holds = || -> Result<bool> {
            Ok(match self {
                Dependency::Content(path, Some(identity)) => {
                    source.identity(path)?.as_ref() == Some(identity)
                }
                Dependency::Content(path, None) => {
                    source.kind_of(path)?.is_none() && !source.is_directory(path)?
                }
                Dependency::Kind(path, kind) => source.kind_of(path)? == *kind,
                Dependency::Listing(dir, digest, stamps) => {
                    stamps_hold(stamps) || listing_digest(&source.listed_names(dir)?) == *digest
                }
                Dependency::Named(names, digest, stamps) => {
                    let names: Vec<&str> = names.split('/').collect();
                    stamps_hold(stamps) || paths_digest(&source.files_named(&names)?) == *digest
                }
                Dependency::Directory(path, is) => source.is_directory(path)? == *is,
                Dependency::Entry(path, entry) => source.entry_of(path)? == *entry,
            })
        };
        holds().unwrap_or(false)
    }
}

/// Whether every stamp is still what it was (none: nothing vouches, the listing is read).
fn stamps_hold(source: &dyn ContentSource, stamps: &[Stamp]) -> bool {
    !stamps.is_empty()
        && stamps
            .par_iter()
            .all(|(path, stamp)| matches!(source.stamp(path), Ok(now) if now == *stamp))
}

impl Dependency {
    /// Drops the stamps that changed since `settled_ns` (nanoseconds since the epoch): a
    /// folder changed within a timestamp tick of its stamp may change again unseen, so
    /// its listing is checked by its content instead.
    pub fn drop_unsettled_stamps(&mut self, settled_ns: i128) {
        if let Dependency::Listing(_, _, stamps) | Dependency::Named(_, _, stamps) = self {
            let settled = stamps.iter().all(|(_, stamp)| match stamp {
                Some(ContentIdentity::Stat {
                    modified_ns,
                    changed_ns,
                    ..
                }) => (*modified_ns).max(*changed_ns) < settled_ns,
                Some(ContentIdentity::Object(_)) | None => true,
            });
            if !settled {
                stamps.clear();
            }
        }
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
                Dependency::Listing(path, ..) => (2, path),
                Dependency::Named(names, ..) => (3, names),
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
        let (listing, stamps) = self.inner.listed_names_stamped(dir)?;
        self.record(Dependency::Listing(
            dir.to_owned(),
            listing_digest(&listing),
            stamps,
        ));
        Ok(listing)
    }

    fn listing(&self, dir: &str) -> Result<Listing> {
        let (listing, stamps) = self.inner.listing_stamped(dir)?;
        self.record(Dependency::Listing(
            dir.to_owned(),
            listing_digest(&listing),
            stamps,
        ));
        Ok(listing)
    }

    fn files_named(&self, names: &[&str]) -> Result<Vec<String>> {
        let (found, stamps) = self.inner.files_named_stamped(names)?;
        self.record(Dependency::Named(
            names.join("/"),
            paths_digest(&found),
            stamps,
        ));
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    /// A folder whose stamp is `stamp` now, holding one file, that counts its listings.
    struct Folder {
        stamp: Option<ContentIdentity>,
        listings: AtomicUsize,
    }

    impl ContentSource for Folder {
        fn describe(&self) -> String {
            "a folder".into()
        }
        fn read(&self, _path: &str) -> Result<Option<Vec<u8>>> {
            Ok(None)
        }
        fn kind_of(&self, _path: &str) -> Result<Option<EntryKind>> {
            Ok(None)
        }
        fn list(&self, _dir: &str) -> Result<Vec<SourceFile>> {
            self.listings.fetch_add(1, Ordering::Relaxed);
            Ok(vec![SourceFile {
                path: "skills/a/SKILL.md".into(),
                kind: EntryKind::File,
            }])
        }
        fn stamp(&self, _path: &str) -> Result<Option<ContentIdentity>> {
            Ok(self.stamp.clone())
        }
    }

    fn stat(modified_ns: i128) -> ContentIdentity {
        ContentIdentity::Stat {
            size: 4096,
            modified_ns,
            changed_ns: modified_ns,
            inode: 7,
            device: 1,
        }
    }

    fn folder(stamp: Option<ContentIdentity>) -> Folder {
        Folder {
            stamp,
            listings: AtomicUsize::new(0),
        }
    }

    /// While a listing's folders keep their stamps it is taken as unchanged unread; once
    /// one differs it is listed, and holds only if what it lists is the same.
    #[test]
    fn a_listing_whose_folders_keep_their_stamps_is_not_listed_again() {
        let listed = folder(None);
        let digest = listing_digest(&listed.listed_names("skills").expect("lists"));
        let stamps = vec![("skills".to_owned(), Some(stat(10)))];
        let dependency = Dependency::Listing("skills".into(), digest.clone(), stamps.clone());

        let unchanged = folder(Some(stat(10)));
        assert!(dependency.holds(&unchanged));
        assert_eq!(unchanged.listings.load(Ordering::Relaxed), 0);

        let touched = folder(Some(stat(11)));
        assert!(dependency.holds(&touched), "touched, and listing the same");
        assert_eq!(touched.listings.load(Ordering::Relaxed), 1);

        let changed = Dependency::Listing("skills".into(), "another listing".into(), stamps);
        assert!(!changed.holds(&touched));
        let unstamped = Dependency::Listing("skills".into(), "another listing".into(), Vec::new());
        assert!(!unstamped.holds(&unchanged), "no stamps vouch for nothing");
    }

    /// A folder changed within the settling window of a check keeps no stamps in its memo:
    /// the next check lists it.
    #[test]
    fn stamps_newer_than_the_settled_time_are_dropped() {
        let stamped = |stamp: i128| {
            Dependency::Named(
                "SKILL.md".into(),
                "digest".into(),
                vec![
                    ("".into(), Some(stat(5))),
                    (".git/info/exclude".into(), None),
                    ("skills".into(), Some(stat(stamp))),
                ],
            )
        };
        let mut settled = stamped(9);
        settled.drop_unsettled_stamps(10);
        assert_eq!(settled, stamped(9));
        let mut recent = stamped(10);
        recent.drop_unsettled_stamps(10);
        assert_eq!(
            recent,
            Dependency::Named("SKILL.md".into(), "digest".into(), Vec::new())
        );
    }
}
