//! A working tree for unit tests that records every path it is asked about.

use super::{ContentSource, SourceFile, WorktreeSource};
use crate::digest::EntryKind;
use crate::error::Result;
use std::path::Path;
use std::sync::Mutex;

/// The working tree at a root, recording each path read, looked at or listed (a listed
/// folder as `dir/`, the root as `/`).
pub(crate) struct Recording {
    inner: WorktreeSource,
    touched: Mutex<Vec<String>>,
}

impl Recording {
    pub(crate) fn new(root: &Path) -> Recording {
        Recording {
            inner: WorktreeSource::new(root),
            touched: Mutex::new(Vec::new()),
        }
    }

    /// The working tree itself, which records nothing.
    pub(crate) fn inner(&self) -> &WorktreeSource {
        &self.inner
    }

    /// Every path asked about so far, in order.
    pub(crate) fn touched(&self) -> Vec<String> {
        self.touched.lock().expect("lock").clone()
    }

    /// The folders listed so far, in order.
    pub(crate) fn listed(&self) -> Vec<String> {
        self.touched()
            .into_iter()
            .filter(|path| path.ends_with('/'))
            .collect()
    }

    fn record(&self, path: String) {
        self.touched.lock().expect("lock").push(path);
    }
}

impl ContentSource for Recording {
    fn describe(&self) -> String {
        "recording".into()
    }
    fn read(&self, path: &str) -> Result<Option<Vec<u8>>> {
        self.record(path.to_owned());
        self.inner.read(path)
    }
    fn kind_of(&self, path: &str) -> Result<Option<EntryKind>> {
        self.record(path.to_owned());
        self.inner.kind_of(path)
    }
    fn list(&self, dir: &str) -> Result<Vec<SourceFile>> {
        self.record(format!("{dir}/"));
        self.inner.list(dir)
    }
    fn is_directory(&self, path: &str) -> Result<bool> {
        self.record(path.to_owned());
        self.inner.is_directory(path)
    }
}
