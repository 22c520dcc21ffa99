//! Parsed case files (summaries: ids, versions, digests, spans, problems) by path and
//! content identity, so an unchanged file is never read or hashed again.

use super::codec::{Decoder, Encoder};
use super::{key_tag, CacheContext, CacheWriter};
use crate::grade::probe::{MustFail, ProbeOutcome};
use crate::model::{
    Case, CaseFileCache, CaseProblem, CaseValue, ParsedCaseFile, ProblemKind, SharedText,
};
use crate::source::ContentIdentity;
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

/// One cache file of parsed case files, decoded lazily: only the entries a run asks for.
pub struct CaseFileStore {
    context: CacheContext,
    name: String,
    body: Vec<u8>,
    entries: HashMap<String, IndexedEntry>,
    used: Mutex<Vec<String>>,
    added: Mutex<Additions>,
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

impl CaseFileStore {
    /// The store for one kind of source (`worktree` or `git`: their identities differ).
    pub fn open(context: &CacheContext, kind: &str) -> CaseFileStore {
        let name = format!("cases-{}.bin", key_tag(kind));
        let body = context.read(&name).unwrap_or_default();
        let entries = index_entries(&body).unwrap_or_default();
        CaseFileStore {
            context: context.clone(),
            name,
            body,
            entries,
            used: Mutex::new(Vec::new()),
            added: Mutex::new(Additions::default()),
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

impl CaseFileCache for CaseFileStore {
    fn get(&self, path: &str, identity: &ContentIdentity) -> Option<ParsedCaseFile> {
        let entry = self.entries.get(path)?;
        if entry.identity != *identity {
            return None;
        }
        let parsed = decode_parsed(path, self.body.get(entry.parsed.clone())?)?;
        if let Ok(mut used) = self.used.lock() {
            used.push(path.to_owned());
        }
        Some(parsed)
    }

    fn put(&self, path: &str, identity: ContentIdentity, parsed: &ParsedCaseFile) {
        if !self.context.is_settled(&identity) {
            return;
        }
        let mut encoder = Encoder::default();
        encoder.str(path);
        encoder.identity(&identity);
        encoder.length_prefixed(|body| encode_parsed(body, parsed));
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

fn encode_parsed(encoder: &mut Encoder, parsed: &ParsedCaseFile) {
    encoder.len(parsed.cases.len());
    for case in &parsed.cases {
        encoder.str(&case.id);
        encoder.u64(case.version);
        encoder.digest(&case.digest);
        encoder.bool(case.contract.is_some());
        if let Some(contract) = &case.contract {
            encoder.digest(contract);
        }
        encoder.u32(case.line);
        encoder.u32(case.end_line);
        encoder.bool(case.retired);
        encoder.optional_str(case.grader_version.as_deref());
        encode_probe(encoder, case.probe());
    }
    encoder.len(parsed.problems.len());
    for problem in &parsed.problems {
        encoder.bool(problem.kind == ProblemKind::ImpreciseNumber);
        encoder.u32(problem.line);
        encoder.u32(problem.column);
        encoder.str(&problem.message);
    }
}

/// A summary's probe outcome: the must-fail completions that passed (0 empty, 1 refusal,
/// 2 + i for `mutate[i]`), then why the controls could not be read.
fn encode_probe(encoder: &mut Encoder, outcome: Option<&ProbeOutcome>) {
    let empty = ProbeOutcome::default();
    let outcome = outcome.unwrap_or(&empty);
    encoder.len(outcome.passed.len());
    for kind in &outcome.passed {
        encoder.u64(match kind {
            MustFail::EmptyProbe => 0,
            MustFail::RefusalProbe => 1,
            MustFail::Control(index) => 2 + *index as u64,
        });
    }
    encoder.optional_str(outcome.malformed_controls.as_deref());
}

fn decode_probe(decoder: &mut Decoder<'_>) -> Option<ProbeOutcome> {
    let count = decoder.len()?;
    let mut passed = Vec::new();
    for _ in 0..count {
        passed.push(match decoder.u64()? {
            0 => MustFail::EmptyProbe,
            1 => MustFail::RefusalProbe,
            code => MustFail::Control(usize::try_from(code - 2).ok()?),
        });
    }
    Some(ProbeOutcome {
        passed,
        malformed_controls: decoder.optional_string()?,
    })
}

fn decode_parsed(path: &str, bytes: &[u8]) -> Option<ParsedCaseFile> {
    let mut decoder = Decoder::new(bytes);
    let case_count = decoder.len()?;
    let mut cases = Vec::with_capacity(case_count.min(bytes.len()));
    let file: Arc<str> = Arc::from(path);
    let mut grader_versions = SharedText::default();
    for _ in 0..case_count {
        let id = decoder.string()?;
        let version = decoder.u64()?;
        let digest = decoder.digest()?;
        let contract = match decoder.bool()? {
            true => Some(Box::new(decoder.digest()?)),
            false => None,
        };
        cases.push(Case {
            id,
            version,
            digest,
            contract,
            file: Arc::clone(&file),
            line: decoder.u32()?,
            end_line: decoder.u32()?,
            retired: decoder.bool()?,
            grader_version: decoder
                .optional_str()?
                .map(|version| grader_versions.share(version)),
            body: CaseValue::probed(decode_probe(&mut decoder)?),
        });
    }
    let problem_count = decoder.len()?;
    let mut problems = Vec::with_capacity(problem_count.min(bytes.len()));
    for _ in 0..problem_count {
        let kind = match decoder.bool()? {
            true => ProblemKind::ImpreciseNumber,
            false => ProblemKind::Malformed,
        };
        problems.push(CaseProblem {
            kind,
            file: path.to_owned(),
            line: decoder.u32()?,
            column: decoder.u32()?,
            message: decoder.string()?,
        });
    }
    decoder
        .is_done()
        .then_some(ParsedCaseFile { cases, problems })
}
