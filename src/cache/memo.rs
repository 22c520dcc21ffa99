//! The check memo: the last report, with everything the check read to produce it. A
//! later check with the same options whose every dependency is unchanged returns that
//! report without loading the project; this is what makes a pre-commit hook with nothing
//! relevant staged cost about as much as `git diff --cached`.
//!
//! Checks are pure functions of what they read through a [`ContentSource`], so recording
//! the reads (content identities, kinds, directory listings) is a complete key.

use super::codec::{Decoder, Encoder};
use super::{key_tag, CacheContext};
use crate::error::Result;
use crate::finding::{Finding, Location, Subject};
use crate::hash::EntryKind;
use crate::model::cases::SharedText;
use crate::report::Report;
use crate::rules::{RuleId, Severity};
use crate::source::{ContentIdentity, ContentSource, Listing, SourceFile, UnpinnableReason};
use rayon::prelude::*;
use sha2::{Digest as _, Sha256};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// What a check was asked: the command, the source, the resolved base, CI or not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoKey(pub String);

/// One thing a check looked at, and what it found.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Dependency {
    /// A file's content by identity (`None`: absent).
    Content(String, Option<ContentIdentity>),
    Kind(String, Option<EntryKind>),
    /// A directory's listing, by the SHA-256 of its paths and kinds.
    Listing(String, [u8; 32]),
}

/// A content source that remembers every read, for the memo.
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

    pub(super) fn record(&self, dependency: Dependency) {
        match self.dependencies.lock() {
            Ok(mut dependencies) => dependencies.push(dependency),
            Err(_) => self.verifiable.store(false, Ordering::Relaxed),
        }
    }

    /// What was read, deduplicated; `None` when it cannot be verified later (content
    /// without identity, or one path seen with two identities during the run).
    fn dependencies(&self) -> Option<Vec<Dependency>> {
        if !self.verifiable.load(Ordering::Relaxed) {
            return None;
        }
        let mut dependencies = self.dependencies.lock().ok()?.clone();
        dependencies.sort();
        dependencies.dedup();
        let mut seen = BTreeMap::new();
        for dependency in &dependencies {
            let (tag, path) = match dependency {
                Dependency::Content(path, _) => (0, path),
                Dependency::Kind(path, _) => (1, path),
                Dependency::Listing(path, _) => (2, path),
            };
            if seen.insert((tag, path), ()).is_some() {
                return None;
            }
        }
        Some(dependencies)
    }
}

fn listing_digest(listing: &Listing) -> [u8; 32] {
    let mut hasher = Sha256::new();
    for file in &listing.files {
        hasher.update(file.path.as_bytes());
        hasher.update([b' ', file.kind.letter() as u8, b'\n']);
    }
    for entry in &listing.unpinnable {
        let reason = match entry.reason {
            UnpinnableReason::Submodule => b's',
            UnpinnableReason::NameNotUtf8 => b'n',
        };
        hasher.update(entry.path.as_bytes());
        hasher.update([b' ', b'?', reason, b'\n']);
    }
    hasher.finalize().into()
}

impl ContentSource for RecordingSource<'_> {
    fn describe(&self) -> String {
        self.inner.describe()
    }

    fn reader(&self, path: &str) -> Result<Option<Box<dyn std::io::Read + '_>>> {
        // The identity is taken first: a change during the read then shows later.
        let identity = self.inner.identity(path)?;
        let reader = self.inner.reader(path)?;
        if reader.is_some() {
            match identity {
                Some(_) => self.record(Dependency::Content(path.to_owned(), identity)),
                None => self.verifiable.store(false, Ordering::Relaxed),
            }
        }
        Ok(reader)
    }

    fn read(&self, path: &str) -> Result<Option<Vec<u8>>> {
        // The identity is taken first: a change during the read then shows later.
        let identity = self.inner.identity(path)?;
        let bytes = self.inner.read(path)?;
        match (&identity, &bytes) {
            (Some(_), Some(_)) | (None, None) => {
                self.record(Dependency::Content(path.to_owned(), identity))
            }
            (None, Some(_)) | (Some(_), None) => self.verifiable.store(false, Ordering::Relaxed),
        }
        Ok(bytes)
    }

    fn kind_of(&self, path: &str) -> Result<Option<EntryKind>> {
        let kind = self.inner.kind_of(path)?;
        self.record(Dependency::Kind(path.to_owned(), kind));
        Ok(kind)
    }

    fn is_directory(&self, path: &str) -> Result<bool> {
        // "Nothing there" is recorded by the absent read that comes first; a directory in
        // the way is rare enough not to be worth remembering.
        let is_directory = self.inner.is_directory(path)?;
        if is_directory {
            self.verifiable.store(false, Ordering::Relaxed);
        }
        Ok(is_directory)
    }

    fn list(&self, dir: &str) -> Result<Vec<SourceFile>> {
        Ok(self.listing(dir)?.files)
    }

    fn listing(&self, dir: &str) -> Result<Listing> {
        let listing = self.inner.listing(dir)?;
        self.record(Dependency::Listing(
            dir.to_owned(),
            listing_digest(&listing),
        ));
        Ok(listing)
    }

    fn identity(&self, path: &str) -> Result<Option<ContentIdentity>> {
        let identity = self.inner.identity(path)?;
        if identity.is_some() {
            self.record(Dependency::Content(path.to_owned(), identity.clone()));
        }
        Ok(identity)
    }
}

/// The remembered report of the last check of one kind of source. Its subjects (one per
/// case: most of its size) are in a file of their own, read only when they are wanted.
pub struct CheckMemo {
    context: CacheContext,
    name: String,
    subjects_name: String,
}

impl CheckMemo {
    pub fn open(context: &CacheContext, kind: &str) -> CheckMemo {
        let tag = key_tag(kind);
        CheckMemo {
            context: context.clone(),
            name: format!("check-{tag}.bin"),
            subjects_name: format!("check-{tag}-subjects.bin"),
        }
    }

    /// The remembered report, when the key matches and nothing it depends on changed.
    /// Without `with_subjects`, its subjects are left unread (the report lists none).
    pub fn recall(
        &self,
        key: &MemoKey,
        source: &dyn ContentSource,
        with_subjects: bool,
    ) -> Option<Report> {
        let body = self.context.read(&self.name)?;
        let mut decoder = Decoder::new(&body);
        if decoder.str()? != key.0 {
            return None;
        }
        let dependencies = (0..decoder.len()?)
            .map(|_| decode_dependency(&mut decoder))
            .collect::<Option<Vec<_>>>()?;
        // The checks are file-system calls (stat, directory listings) and the report is
        // large: both at once, the checks spread over the worker threads while this thread
        // decodes (its allocator grows its heap in large steps; a worker's grows a page
        // range at a time, thousands of system calls for a large report).
        let (unchanged, report) = std::thread::scope(|scope| {
            let verifying = scope.spawn(|| {
                dependencies
                    .par_iter()
                    .all(|dependency| still_holds(dependency, source) == Some(true))
            });
            let report = decode_report(&mut decoder).and_then(|report| {
                let seal: Option<super::Seal> = match decoder.bool()? {
                    true => Some(decoder.raw(size_of::<super::Seal>())?.try_into().ok()?),
                    false => None,
                };
                decoder.is_done().then_some((report, seal))
            });
            (verifying.join().unwrap_or(false), report)
        });
        let (mut report, seal) = unchanged.then_some(report).flatten()?;
        if with_subjects {
            // A check whose report listed no subjects did not gather them.
            let body = self.context.read_sealed(&self.subjects_name, &seal?)?;
            let mut decoder = Decoder::new(&body);
            report.subjects = decode_subjects(&mut decoder).filter(|_| decoder.is_done())?;
        }
        Some(report)
    }

    /// Remembers `report` with what `recording` saw, unless something cannot be verified
    /// later or changed too recently to be trusted. `with_subjects`: the report holds its
    /// subjects (a report that lists none, as the human one, is judged without gathering
    /// them, and a later check that lists them judges again).
    pub fn remember(
        &self,
        key: &MemoKey,
        recording: &RecordingSource<'_>,
        report: &Report,
        with_subjects: bool,
    ) {
        let Some(dependencies) = recording.dependencies() else {
            return;
        };
        let settled = dependencies.iter().all(|dependency| match dependency {
            Dependency::Content(_, Some(identity)) => self.context.is_settled(identity),
            _ => true,
        });
        if !settled {
            return;
        }
        // The subjects first: the memo names them by their checksum, so a memo is never
        // paired with the subjects of another.
        let seal = match with_subjects {
            true => {
                let mut subjects = Encoder::default();
                encode_subjects(&mut subjects, &report.subjects);
                let Some(seal) = self.context.write(&self.subjects_name, subjects.bytes()) else {
                    return;
                };
                Some(seal)
            }
            false => None,
        };
        let mut encoder = Encoder::default();
        encoder.str(&key.0);
        encoder.len(dependencies.len());
        for dependency in &dependencies {
            encode_dependency(&mut encoder, dependency);
        }
        encode_report(&mut encoder, report);
        encoder.bool(seal.is_some());
        if let Some(seal) = seal {
            encoder.raw(&seal);
        }
        self.context.write(&self.name, encoder.bytes());
    }
}

/// `Some(true)` when the dependency is unchanged; errors count as changed.
fn still_holds(dependency: &Dependency, source: &dyn ContentSource) -> Option<bool> {
    Some(match dependency {
        Dependency::Content(path, Some(identity)) => {
            source.identity(path).ok()?.as_ref() == Some(identity)
        }
        Dependency::Content(path, None) => {
            source.kind_of(path).ok()?.is_none() && !source.is_directory(path).ok()?
        }
        Dependency::Kind(path, kind) => source.kind_of(path).ok()? == *kind,
        Dependency::Listing(dir, digest) => listing_digest(&source.listing(dir).ok()?) == *digest,
    })
}

fn encode_dependency(encoder: &mut Encoder, dependency: &Dependency) {
    match dependency {
        Dependency::Content(path, identity) => {
            encoder.u8(0);
            encoder.str(path);
            encoder.bool(identity.is_some());
            if let Some(identity) = identity {
                encoder.identity(identity);
            }
        }
        Dependency::Kind(path, kind) => {
            encoder.u8(1);
            encoder.str(path);
            encoder.u8(kind.map_or(0, |kind| kind.letter() as u8));
        }
        Dependency::Listing(dir, digest) => {
            encoder.u8(2);
            encoder.str(dir);
            encoder.raw(digest);
        }
    }
}

fn decode_dependency(decoder: &mut Decoder<'_>) -> Option<Dependency> {
    Some(match decoder.u8()? {
        0 => {
            let path = decoder.string()?;
            let identity = match decoder.bool()? {
                true => Some(decoder.identity()?),
                false => None,
            };
            Dependency::Content(path, identity)
        }
        1 => {
            let path = decoder.string()?;
            let kind = match decoder.u8()? {
                0 => None,
                b'f' => Some(EntryKind::File),
                b'x' => Some(EntryKind::Executable),
                b'l' => Some(EntryKind::Symlink),
                _ => return None,
            };
            Dependency::Kind(path, kind)
        }
        2 => Dependency::Listing(decoder.string()?, decoder.raw(32)?.try_into().ok()?),
        _ => return None,
    })
}

fn encode_report(encoder: &mut Encoder, report: &Report) {
    encoder.str(&report.command);
    encoder.str(&report.source);
    encoder.optional_str(report.base.as_deref());
    encoder.bool(report.fail_on_diff);
    encoder.len(report.findings.len());
    for finding in &report.findings {
        encoder.str(finding.rule.id());
        encoder.str(finding.severity.as_str());
        encoder.str(&finding.message);
        encoder.str(&finding.help);
        encoder.bool(finding.location.is_some());
        if let Some(location) = &finding.location {
            encoder.str(&location.path);
            encoder.optional_u32(location.line);
            encoder.optional_u32(location.end_line);
            encoder.optional_u32(location.column);
        }
        let subject = &finding.subject;
        encode_subject(encoder, subject);
        encoder.str(&finding.fingerprint);
        encoder.optional_str(finding.detail.as_deref());
    }
}

fn encode_subjects(encoder: &mut Encoder, subjects: &[Subject]) {
    encoder.len(subjects.len());
    for subject in subjects {
        encode_subject(encoder, subject);
    }
}

fn decode_subjects(decoder: &mut Decoder<'_>) -> Option<Vec<Subject>> {
    let count = decoder.len()?;
    let mut subjects = Vec::with_capacity(count.min(decoder.rest().len()));
    let mut suites = SharedText::default();
    for _ in 0..count {
        subjects.push(decode_subject(decoder, &mut suites)?);
    }
    Some(subjects)
}

fn encode_subject(encoder: &mut Encoder, subject: &Subject) {
    for part in [
        subject.suite.as_deref(),
        subject.case.as_deref(),
        subject.skill.as_deref(),
        subject.grader.as_deref(),
    ] {
        encoder.optional_str(part);
    }
}

/// One subject; consecutive subjects of one suite share its name.
fn decode_subject(decoder: &mut Decoder<'_>, suites: &mut SharedText) -> Option<Subject> {
    Some(Subject {
        suite: decoder.optional_str()?.map(|suite| suites.share(suite)),
        case: decoder.optional_string()?,
        skill: decoder.optional_string()?,
        grader: decoder.optional_string()?,
    })
}

fn decode_report(decoder: &mut Decoder<'_>) -> Option<Report> {
    let command = decoder.string()?;
    let source = decoder.string()?;
    let base = decoder.optional_string()?;
    let fail_on_diff = decoder.bool()?;
    let count = decoder.len()?;
    let mut findings = Vec::with_capacity(count.min(decoder.rest().len()));
    for _ in 0..count {
        let rule = RuleId::parse(decoder.str()?)?;
        let severity = match decoder.str()? {
            "note" => Severity::Note,
            "warn" => Severity::Warn,
            "error" => Severity::Error,
            "refuse" => Severity::Refuse,
            _ => return None,
        };
        let message = decoder.string()?;
        let help = decoder.string()?;
        let location = match decoder.bool()? {
            true => Some(Location {
                path: decoder.string()?,
                line: decoder.optional_u32()?,
                end_line: decoder.optional_u32()?,
                column: decoder.optional_u32()?,
            }),
            false => None,
        };
        let subject = decode_subject(decoder, &mut SharedText::default())?;
        let fingerprint = decoder.string()?;
        let detail = decoder.optional_string()?;
        findings.push(Finding {
            rule,
            severity,
            message,
            help,
            location,
            subject,
            fingerprint,
            detail,
        });
    }
    Some(Report {
        command,
        source,
        base,
        findings,
        subjects: Vec::new(),
        fail_on_diff,
        path_prefix: String::new(),
    })
}
