//! Counts what a load found in its cache, for `check --verbose`: a [`LoadCache`] that
//! passes every call on and counts the answers.

use crate::hash::Digest;
use crate::model::{LoadCache, LockRead, ParsedCaseFile, SuiteCases};
use crate::skills::ReadFile;
use crate::source::ContentIdentity;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// `inner`, counted.
pub struct Tally<'a> {
    inner: &'a dyn LoadCache,
    counts: [AtomicUsize; Counted::ALL.len()],
}

/// What a tally counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Counted {
    /// Case files whose parse the cache answered, alone or within a whole suite.
    CaseFiles,
    /// Skill files the cache answered (read, hashed and scanned before).
    SkillFiles,
    /// Locks the cache answered.
    Locks,
}

impl Counted {
    const ALL: [Counted; 3] = [Counted::CaseFiles, Counted::SkillFiles, Counted::Locks];
}

impl<'a> Tally<'a> {
    pub fn new(inner: &'a dyn LoadCache) -> Tally<'a> {
        Tally {
            inner,
            counts: Default::default(),
        }
    }

    /// How many of `what` the cache answered.
    pub fn count(&self, what: Counted) -> usize {
        self.counts[what as usize].load(Ordering::Relaxed)
    }

    fn add(&self, what: Counted, count: usize) {
        self.counts[what as usize].fetch_add(count, Ordering::Relaxed);
    }

    fn answered<T>(&self, answer: Option<T>, what: Counted) -> Option<T> {
        if answer.is_some() {
            self.add(what, 1);
        }
        answer
    }
}

impl LoadCache for Tally<'_> {
    fn get(&self, path: &str, identity: &ContentIdentity) -> Option<ParsedCaseFile> {
        self.answered(self.inner.get(path, identity), Counted::CaseFiles)
    }

    fn put(&self, path: &str, identity: ContentIdentity, parsed: &ParsedCaseFile) {
        self.inner.put(path, identity, parsed);
    }

    fn get_suite(
        &self,
        files: &[String],
        identities: &[ContentIdentity],
    ) -> Option<Arc<SuiteCases>> {
        let content = self.inner.get_suite(files, identities);
        if content.is_some() {
            self.add(Counted::CaseFiles, files.len());
        }
        content
    }

    fn put_suite(&self, identities: &[ContentIdentity], content: &Arc<SuiteCases>) {
        self.inner.put_suite(identities, content);
    }

    fn get_lock(&self, identity: &ContentIdentity) -> Option<LockRead> {
        self.answered(self.inner.get_lock(identity), Counted::Locks)
    }

    fn put_lock(&self, identity: &ContentIdentity, lock: &LockRead) {
        self.inner.put_lock(identity, lock);
    }

    fn known_lock(&self) -> Option<LockRead> {
        self.inner.known_lock()
    }

    fn get_skill_file(
        &self,
        path: &str,
        identity: &ContentIdentity,
        patterns: &Digest,
    ) -> Option<ReadFile> {
        let read = self.inner.get_skill_file(path, identity, patterns);
        self.answered(read, Counted::SkillFiles)
    }

    fn put_skill_file(
        &self,
        path: &str,
        identity: ContentIdentity,
        patterns: &Digest,
        read: &ReadFile,
    ) {
        self.inner.put_skill_file(path, identity, patterns, read);
    }
}
