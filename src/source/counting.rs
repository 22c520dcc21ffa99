//! A source that counts the files read from it and their bytes, for `check --verbose`.

use super::{ContentIdentity, ContentSource, EntryKind, Listing, SourceFile};
use crate::error::Result;
use std::io::{self, Read};
use std::sync::atomic::{AtomicU64, Ordering};

/// `inner`, with every file read from it counted.
pub struct CountingSource<'a> {
    inner: &'a dyn ContentSource,
    files: AtomicU64,
    bytes: AtomicU64,
}

impl<'a> CountingSource<'a> {
    pub fn new(inner: &'a dyn ContentSource) -> CountingSource<'a> {
        CountingSource {
            inner,
            files: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
        }
    }

    /// The files read so far (whole or as a stream), and their bytes.
    pub fn read_so_far(&self) -> (u64, u64) {
        (
            self.files.load(Ordering::Relaxed),
            self.bytes.load(Ordering::Relaxed),
        )
    }
}

/// A stream whose bytes are counted as they are read.
struct CountingReader<'a, R> {
    inner: R,
    bytes: &'a AtomicU64,
}

impl<R: Read> Read for CountingReader<'_, R> {
    fn read(&mut self, buffer: &mut [u8]) -> io::Result<usize> {
        let read = self.inner.read(buffer)?;
        self.bytes.fetch_add(read as u64, Ordering::Relaxed);
        Ok(read)
    }
}

impl ContentSource for CountingSource<'_> {
    fn describe(&self) -> String {
        self.inner.describe()
    }

    fn read(&self, path: &str) -> Result<Option<Vec<u8>>> {
        let bytes = self.inner.read(path)?;
        if let Some(bytes) = &bytes {
            self.files.fetch_add(1, Ordering::Relaxed);
            self.bytes.fetch_add(bytes.len() as u64, Ordering::Relaxed);
        }
        Ok(bytes)
    }

    fn kind_of(&self, path: &str) -> Result<Option<EntryKind>> {
        self.inner.kind_of(path)
    }

    fn is_directory(&self, path: &str) -> Result<bool> {
        self.inner.is_directory(path)
    }

    fn list(&self, dir: &str) -> Result<Vec<SourceFile>> {
        self.inner.list(dir)
    }

    fn listing(&self, dir: &str) -> Result<Listing> {
        self.inner.listing(dir)
    }

    fn reader(&self, path: &str) -> Result<Option<Box<dyn Read + '_>>> {
        let Some(inner) = self.inner.reader(path)? else {
            return Ok(None);
        };
        self.files.fetch_add(1, Ordering::Relaxed);
        Ok(Some(Box::new(CountingReader {
            inner,
            bytes: &self.bytes,
        })))
    }

    fn identity(&self, path: &str) -> Result<Option<ContentIdentity>> {
        self.inner.identity(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::WorktreeSource;

    #[test]
    fn files_read_whole_or_streamed_are_counted_with_their_bytes() {
        let root = tempfile::tempdir().expect("temp dir");
        std::fs::write(root.path().join("a.jsonl"), "{}\n{}\n").expect("write");
        std::fs::write(root.path().join("b.txt"), "four").expect("write");
        let worktree = WorktreeSource::new(root.path());
        let counting = CountingSource::new(&worktree);
        assert_eq!(counting.read_so_far(), (0, 0));
        assert_eq!(
            counting.read("b.txt").expect("read"),
            Some(b"four".to_vec())
        );
        assert_eq!(counting.read("absent").expect("read"), None);
        assert_eq!(counting.read_so_far(), (1, 4));
        let mut streamed = String::new();
        counting
            .reader("a.jsonl")
            .expect("open")
            .expect("a stream")
            .read_to_string(&mut streamed)
            .expect("read");
        assert_eq!(streamed, "{}\n{}\n");
        assert_eq!(counting.read_so_far(), (2, 10));
        // Looking at a file is not reading it.
        assert!(counting.identity("a.jsonl").expect("stat").is_some());
        assert_eq!(
            counting.kind_of("b.txt").expect("kind"),
            Some(EntryKind::File)
        );
        assert_eq!(counting.read_so_far(), (2, 10));
    }
}
