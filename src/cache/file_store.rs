//! Parsed case files (summaries: ids, versions, digests, spans, problems) and read skill
//! files (digest, executable signals, risky lines) by path and content identity, so an
//! unchanged file is never read or hashed again; the lock too, in a [`LockStore`] of its
//! own.

use super::codec::{Decoder, Encoder};
use super::lock_store::LockStore;
use super::skill_files::{decode_read_file, encode_read_file, skill_key};
use super::{key_tag, CacheContext, CacheWriter};
use crate::grade::probe::{MustFail, ProbeOutcome};
use crate::hash::Digest;
use crate::model::{
    Case, CaseProblem, CaseValue, LoadCache, LockRead, ParsedCaseFile, ProblemKind, SharedText,
};
use crate::skills::ReadFile;
use crate::source::ContentIdentity;
use compact_str::CompactString;
use std::collections::HashMap;
use std::ops::Range;
use std::sync::{Arc, Mutex};

/// Where one entry sits in the store's body.
#[derive(Debug)]
struct IndexedEntry {
    identity: ContentIdentity,
    /// The whole entry (path, identity, parse result), copied as is when kept.
    whole: Range<usize>,
    /// The encoded parse result.
    parsed: Range<usize>,
}

/// One cache file of parsed case files and read skill files, decoded lazily: only the
/// entries a run asks for. A skill file's entry is keyed by its path behind the
/// fingerprint of the risky patterns it was scanned with (see [`skill_key`]), so a path
/// that is both a case file and a skill file has two entries.
pub struct FileStore {
    context: CacheContext,
    name: String,
    body: Vec<u8>,
    entries: HashMap<String, IndexedEntry>,
    used: Mutex<Vec<String>>,
    added: Mutex<Additions>,
    locks: LockStore,
}

/// The entries a run added, streamed into the next cache file as they come instead of
/// held until the end (tens of MiB for a large suite).
#[derive(Default)]
struct Additions {
    writer: Option<CacheWriter>,
    count: usize,
    /// Writing failed: nothing more is added and the old file stays.
    failed: bool,
}

impl FileStore {
    /// The store for one kind of source (`worktree` or `git`: their identities differ).
    pub fn open(context: &CacheContext, kind: &str) -> FileStore {
        let name = format!("files-{}.bin", key_tag(kind));
        let body = context.read(&name).unwrap_or_default();
        let entries = index_entries(&body).unwrap_or_default();
        FileStore {
            context: context.clone(),
            name,
            body,
            entries,
            used: Mutex::new(Vec::new()),
            added: Mutex::new(Additions::default()),
            locks: LockStore::open(context, kind),
        }
    }

    /// Finishes the next cache file with the old entries this run used, when anything
    /// changed.
    pub fn save(self) {
        let used = self.used.into_inner().unwrap_or_default();
        let added = self.added.into_inner().unwrap_or_default();
        if added.failed || (added.count == 0 && used.len() == self.entries.len()) {
            return;
        }
        let writer = match added.writer {
            Some(writer) => Ok(writer),
            None => self.context.writer(&self.name),
        };
        let _ = writer.and_then(|mut writer| {
            for path in &used {
                if let Some(entry) = self.entries.get(path) {
                    writer.append(&self.body[entry.whole.clone()])?;
                }
            }
            writer.finish()
        });
    }
}

/// Reads the entry headers only; the parse results are decoded when asked for.
fn index_entries(body: &[u8]) -> Option<HashMap<String, IndexedEntry>> {
    let mut decoder = Decoder::new(body);
    let mut entries = HashMap::new();
    while !decoder.is_done() {
        let entry_start = decoder.position();
        let path = decoder.string()?;
        let identity = decoder.identity()?;
        let length = decoder.len()?;
        let start = decoder.position();
        decoder.raw(length)?;
        let end = decoder.position();
        entries.insert(
            path,
            IndexedEntry {
                identity,
                whole: entry_start..end,
                parsed: start..end,
            },
        );
    }
    Some(entries)
}

impl FileStore {
    /// The entry `key` decoded by `decode` when it was stored for `identity`; kept for the
    /// next cache file once decoded.
    fn entry<T>(
        &self,
        key: &str,
        identity: &ContentIdentity,
        decode: impl FnOnce(&[u8]) -> Option<T>,
    ) -> Option<T> {
        let entry = self.entries.get(key)?;
        if entry.identity != *identity {
            return None;
        }
        let decoded = decode(self.body.get(entry.parsed.clone())?)?;
        if let Ok(mut used) = self.used.lock() {
            used.push(key.to_owned());
        }
        Some(decoded)
    }

    /// Streams a new entry `key` into the next cache file, its body written by `encode`
    /// (`capacity` bytes are expected in all). Content that may still change within a
    /// timestamp tick is not kept.
    fn add(
        &self,
        key: &str,
        identity: &ContentIdentity,
        capacity: usize,
        encode: impl FnOnce(&mut Encoder),
    ) {
        if !self.context.is_settled(identity) {
            return;
        }
        let mut encoder = Encoder::with_capacity(capacity + key.len());
        encoder.str(key);
        encoder.identity(identity);
        encoder.length_prefixed(encode);
        let Ok(mut added) = self.added.lock() else {
            return;
        };
        if added.failed {
            return;
        }
        let written = match added.writer.as_mut() {
            Some(writer) => writer.append(encoder.bytes()),
            None => self.context.writer(&self.name).and_then(|mut writer| {
                writer.append(encoder.bytes())?;
                added.writer = Some(writer);
                Ok(())
            }),
        };
        match written {
            Ok(()) => added.count += 1,
            Err(_) => {
                added.failed = true;
                added.writer = None;
            }
        }
    }
}

impl LoadCache for FileStore {
    fn get_lock(&self, identity: &ContentIdentity) -> Option<LockRead> {
        self.locks.get(identity)
    }

    /// Not on the first check of a cache (a fresh clone, a CI job): its copy of the lock
    /// would cost every such check a little and spare none.
    fn put_lock(&self, identity: &ContentIdentity, lock: &LockRead) {
        if !self.entries.is_empty() {
            self.locks.put(identity, lock);
        }
    }

    fn get(&self, path: &str, identity: &ContentIdentity) -> Option<ParsedCaseFile> {
        self.entry(path, identity, |bytes| decode_parsed(path, bytes))
    }

    fn put(&self, path: &str, identity: ContentIdentity, parsed: &ParsedCaseFile) {
        // Sized for the usual summary (about 64 bytes a case) so it seldom grows.
        let capacity = 256 + 80 * parsed.cases.len();
        self.add(path, &identity, capacity, |body| {
            encode_parsed(body, parsed)
        });
    }

    fn get_skill_file(
        &self,
        path: &str,
        identity: &ContentIdentity,
        patterns: &Digest,
    ) -> Option<ReadFile> {
        self.entry(&skill_key(path, patterns), identity, decode_read_file)
    }

    fn put_skill_file(
        &self,
        path: &str,
        identity: ContentIdentity,
        patterns: &Digest,
        read: &ReadFile,
    ) {
        let capacity = 256 + read.bytes.as_ref().map_or(0, Vec::len);
        let key = skill_key(path, patterns);
        self.add(&key, &identity, capacity, |body| {
            encode_read_file(body, read)
        });
    }
}

/// The flags byte of an encoded case: which optional parts follow.
const HAS_CONTRACT: u8 = 1;
const RETIRED: u8 = 2;
const HAS_GRADER_VERSION: u8 = 4;

/// A summary in few bytes: numbers as varints, optional parts behind one flags byte
/// (200,000 cases are a 13 MB cache file, not 20 MB).
fn encode_parsed(encoder: &mut Encoder, parsed: &ParsedCaseFile) {
    encoder.varint(parsed.cases.len() as u64);
    for case in &parsed.cases {
        encoder.short_str(&case.id);
        encoder.varint(case.version);
        encoder.digest(&case.digest);
        let flag = |set: bool, bit: u8| if set { bit } else { 0 };
        let flags = flag(case.contract.is_some(), HAS_CONTRACT)
            | flag(case.retired, RETIRED)
            | flag(case.grader_version.is_some(), HAS_GRADER_VERSION);
        encoder.u8(flags);
        if let Some(contract) = &case.contract {
            encoder.digest(contract);
        }
        encoder.varint(u64::from(case.line));
        encoder.varint(u64::from(case.end_line));
        if let Some(version) = case.grader_version.as_deref() {
            encoder.short_str(version);
        }
        encode_probe(encoder, case.probe());
    }
    encoder.varint(parsed.problems.len() as u64);
    for problem in &parsed.problems {
        encoder.bool(problem.kind == ProblemKind::ImpreciseNumber);
        encoder.varint(u64::from(problem.line));
        encoder.varint(u64::from(problem.column));
        encoder.short_str(&problem.message);
    }
}

/// A summary's probe outcome: the must-fail completions that passed (0 empty, 1 refusal,
/// 2 + i for `mutate[i]`), then why the controls could not be read.
fn encode_probe(encoder: &mut Encoder, outcome: Option<&ProbeOutcome>) {
    let empty = ProbeOutcome::default();
    let outcome = outcome.unwrap_or(&empty);
    encoder.varint(outcome.passed.len() as u64);
    for kind in &outcome.passed {
        encoder.varint(match kind {
            MustFail::EmptyProbe => 0,
            MustFail::RefusalProbe => 1,
            MustFail::Control(index) => 2 + *index as u64,
        });
    }
    encoder.bool(outcome.malformed_controls.is_some());
    if let Some(why) = outcome.malformed_controls.as_deref() {
        encoder.short_str(why);
    }
}

fn decode_probe(decoder: &mut Decoder<'_>) -> Option<ProbeOutcome> {
    let count = decoder.varint_len()?;
    let mut passed = Vec::new();
    for _ in 0..count {
        passed.push(match decoder.varint()? {
            0 => MustFail::EmptyProbe,
            1 => MustFail::RefusalProbe,
            code => MustFail::Control(usize::try_from(code - 2).ok()?),
        });
    }
    let malformed_controls = match decoder.bool()? {
        true => Some(decoder.short_str()?.to_owned()),
        false => None,
    };
    Some(ProbeOutcome {
        passed,
        malformed_controls,
    })
}

fn decode_parsed(path: &str, bytes: &[u8]) -> Option<ParsedCaseFile> {
    let mut decoder = Decoder::new(bytes);
    let case_count = decoder.varint_len()?;
    let mut cases = Vec::with_capacity(case_count.min(bytes.len()));
    let file: Arc<str> = Arc::from(path);
    let mut grader_versions = SharedText::default();
    for _ in 0..case_count {
        let id = CompactString::from(decoder.short_str()?);
        let version = decoder.varint()?;
        let digest = decoder.digest()?;
        let flags = decoder.u8()?;
        if flags & !(HAS_CONTRACT | RETIRED | HAS_GRADER_VERSION) != 0 {
            return None;
        }
        let contract = match flags & HAS_CONTRACT != 0 {
            true => Some(Box::new(decoder.digest()?)),
            false => None,
        };
        let line = decoder.varint_u32()?;
        let end_line = decoder.varint_u32()?;
        let grader_version = match flags & HAS_GRADER_VERSION != 0 {
            true => Some(grader_versions.share(decoder.short_str()?)),
            false => None,
        };
        cases.push(Case {
            id,
            version,
            digest,
            contract,
            file: Arc::clone(&file),
            line,
            end_line,
            retired: flags & RETIRED != 0,
            grader_version,
            body: CaseValue::probed(decode_probe(&mut decoder)?),
        });
    }
    let problem_count = decoder.varint_len()?;
    let mut problems = Vec::with_capacity(problem_count.min(bytes.len()));
    for _ in 0..problem_count {
        let kind = match decoder.bool()? {
            true => ProblemKind::ImpreciseNumber,
            false => ProblemKind::Malformed,
        };
        problems.push(CaseProblem {
            kind,
            file: path.to_owned(),
            line: decoder.varint_u32()?,
            column: decoder.varint_u32()?,
            message: decoder.short_str()?.to_owned(),
        });
    }
    decoder
        .is_done()
        .then_some(ParsedCaseFile { cases, problems })
}
