//! The incremental cache in `.evalock/cache/`: an optimisation, never a source of truth.
//!
//! Every file carries the identity of the binary that wrote it and a checksum of its
//! contents (XXH3-128: it guards against torn and damaged files, not against someone who
//! can write the cache, who could as well write a matching SHA-256); a file that is
//! truncated, corrupted, or written by another build is ignored as if absent. Entries are
//! found by [`ContentIdentity`] (git object ids, or the working tree's size, modification
//! and inode-change times, inode and device), so content that may have changed is never
//! matched. A cold CI clone has no cache and computes everything; the answer is the same
//! either way.

mod codec;
mod file_store;
mod handover;
mod lock_store;
mod memo;
mod skill_files;
mod tally;

pub use file_store::FileStore;
pub use handover::Handover;
pub use memo::{CheckMemo, MemoKey, RecordingSource};
pub use tally::{Counted, Tally};

use crate::hash::sha256_hex;
use crate::source::ContentIdentity;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};
use xxhash_rust::xxh3::Xxh3Default;

/// Where the cache lives, relative to the project root.
pub const CACHE_DIR: &str = ".evalock/cache";
const MAGIC: &[u8; 8] = b"EVLCACHE";
const FORMAT: u32 = 6;
/// The checksum a cache file ends with; it also names the file to another that must be
/// read with it.
type Seal = [u8; 16];
/// Files changed this recently may still change within one timestamp tick (FAT has 2 s),
/// which their stat data would not show: they are not cached until they settle.
const SETTLE_NS: i128 = 2_000_000_000;

/// What the cache knows about the running binary and the clock.
#[derive(Debug, Clone)]
pub struct CacheContext {
    directory: PathBuf,
    /// evalock's version and the executable's size and modification time: a rebuilt
    /// binary never trusts what another build computed.
    binary: String,
    /// When this run started, in nanoseconds since the epoch.
    started_ns: i128,
}

impl CacheContext {
    /// The cache of the project at `project_root`; `None` when the binary cannot be
    /// identified (then nothing is cached).
    pub fn open(project_root: &Path) -> Option<CacheContext> {
        let executable = std::env::current_exe().ok()?;
        let metadata = std::fs::metadata(executable).ok()?;
        let modified = metadata
            .modified()
            .ok()?
            .duration_since(UNIX_EPOCH)
            .ok()?
            .as_nanos();
        let binary = format!(
            "{} {} {modified}",
            env!("CARGO_PKG_VERSION"),
            metadata.len()
        );
        let started_ns = i128::try_from(
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .ok()?
                .as_nanos(),
        )
        .ok()?;
        Some(CacheContext {
            directory: project_root.join(CACHE_DIR),
            binary,
            started_ns,
        })
    }

    /// Whether content with this identity is old enough to be remembered.
    fn is_settled(&self, identity: &ContentIdentity) -> bool {
        match identity {
            ContentIdentity::Object(_) => true,
            ContentIdentity::Stat {
                modified_ns,
                changed_ns,
                ..
            } => (*modified_ns).max(*changed_ns) < self.started_ns - SETTLE_NS,
        }
    }

    fn file(&self, name: &str) -> PathBuf {
        self.directory.join(name)
    }

    /// The body of a cache file, or `None` when it is absent, from another binary, or
    /// does not match its checksum.
    fn read(&self, name: &str) -> Option<Vec<u8>> {
        self.read_with_seal(name).map(|(body, _)| body)
    }

    /// The body of a cache file, only if its checksum is `seal` (what [`Self::write`]
    /// returned for it): a file that must belong with another.
    fn read_sealed(&self, name: &str, seal: &Seal) -> Option<Vec<u8>> {
        self.read_with_seal(name)
            .and_then(|(body, found)| (found == *seal).then_some(body))
    }

    /// The body of a cache file and the checksum it ends with.
    fn read_with_seal(&self, name: &str) -> Option<(Vec<u8>, Seal)> {
        let mut bytes = std::fs::read(self.file(name)).ok()?;
        let (content, checksum) =
            bytes.split_at_checked(bytes.len().checked_sub(size_of::<Seal>())?)?;
        let seal: Seal = checksum.try_into().ok()?;
        if seal_of(content) != seal {
            return None;
        }
        let mut decoder = codec::Decoder::new(content);
        if decoder.raw(MAGIC.len())? != MAGIC
            || decoder.u32()? != FORMAT
            || decoder.str()? != self.binary
        {
            return None;
        }
        // The body stays where it was read (tens of MiB for a large suite, not copied).
        let (header, content) = (decoder.position(), content.len());
        bytes.truncate(content);
        bytes.drain(..header);
        Some((bytes, seal))
    }

    /// Writes a cache file and returns its checksum (its seal); `None` when it could not
    /// be written. Failures are otherwise ignored: the cache is only an optimisation. No
    /// fsync: a torn file fails its checksum and is ignored.
    fn write(&self, name: &str, body: &[u8]) -> Option<Seal> {
        self.try_write(name, body).ok()
    }

    fn try_write(&self, name: &str, body: &[u8]) -> std::io::Result<Seal> {
        let mut writer = self.writer(name)?;
        writer.append(body)?;
        writer.finish()
    }

    /// A cache file written piece by piece, so a large one is never whole in memory.
    fn writer(&self, name: &str) -> std::io::Result<CacheWriter> {
        std::fs::create_dir_all(&self.directory)?;
        let ignore = self.directory.join(".gitignore");
        if !ignore.exists() {
            std::fs::write(
                ignore,
                "# evalock's incremental cache: never commit it.\n*\n",
            )?;
        }
        let mut header = codec::Encoder::default();
        header.raw(MAGIC);
        header.u32(FORMAT);
        header.str(&self.binary);
        let mut writer = CacheWriter {
            file: tempfile::NamedTempFile::new_in(&self.directory)?,
            hasher: Xxh3Default::new(),
            target: self.file(name),
        };
        writer.append(header.bytes())?;
        Ok(writer)
    }
}

/// A cache file being written: a temporary file in the cache directory that
/// [`CacheWriter::finish`] seals with its checksum and renames into place. Dropped
/// unfinished, it is removed and the previous file stays.
struct CacheWriter {
    file: tempfile::NamedTempFile,
    hasher: Xxh3Default,
    target: PathBuf,
}

impl CacheWriter {
    fn append(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.hasher.update(bytes);
        self.file.write_all(bytes)
    }

    /// No fsync: a torn file fails its checksum and is ignored. Returns the checksum.
    fn finish(mut self) -> std::io::Result<Seal> {
        let checksum = self.hasher.digest128().to_le_bytes();
        self.file.write_all(&checksum)?;
        self.file
            .persist(&self.target)
            .map_err(|error| error.error)?;
        Ok(checksum)
    }
}

/// The checksum of a cache file's `content` (everything before its checksum).
fn seal_of(content: &[u8]) -> Seal {
    xxhash_rust::xxh3::xxh3_128(content).to_le_bytes()
}

/// A short, file-name-safe tag for a key.
fn key_tag(key: &str) -> String {
    sha256_hex(key.as_bytes())[..16].to_owned()
}

#[cfg(test)]
mod tests;
