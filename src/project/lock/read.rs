//! Reading the lock's TOML. Its bulk is one small table per case (200,000 in a large
//! project), and one TOML parse of the whole document builds a spanned tree of all of them:
//! 0.85 s and 250 MB for a 31 MiB lock. Cut at its table headers, the document is parsed in
//! pieces instead: the rest as one document, by toml, and the case tables one by one, side
//! by side, from the events of toml's own parser (`toml_parser`: a third of the time that
//! building a document for each of them takes, 0.08 s against 0.23 s on one core). Anything
//! unusual (a header toml must read, a table twice, a key or value other than the ones the
//! lock writes, a piece that does not parse alone) goes to the whole-document parse, which
//! decides, and locates every error.

use super::{CaseEntries, CaseLock, GraderLock, Lock, Recipes, SkillLock, SuiteLock};
use crate::digest::Digest;
use rayon::prelude::*;
use serde::Deserialize;
use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Parses the lock's text (already known to be clean UTF-8 without conflict markers),
/// with the case tables of `only` these suites when given (the others are not parsed).
pub(super) fn from_toml(
    text: &str,
    only: Option<&BTreeSet<String>>,
) -> Result<Lock, toml::de::Error> {
    match by_table(text, only) {
        Some(lock) => Ok(lock),
        None => {
            let mut lock: Lock = toml::from_str(text)?;
            if let Some(only) = only {
                lock.cases.retain(|suite, _| only.contains(suite));
            }
            Ok(lock)
        }
    }
}

/// Everything of the lock but its case tables.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Head {
    lock_version: u32,
    recipes: Recipes,
    #[serde(default, rename = "suite")]
    suites: BTreeMap<String, SuiteLock>,
    #[serde(default, rename = "grader")]
    graders: BTreeMap<String, GraderLock>,
    #[serde(default, rename = "skill")]
    skills: BTreeMap<String, SkillLock>,
    #[serde(default)]
    mcp: super::mcp::McpLocks,
}

pub(super) const CASE_HEADER: &str = "[case.";

/// The text of a basic string (`"…"`) that holds no escape and no control character:
/// what decoding it gives, without the character-by-character decoder (digests and paths,
/// 400,000 of them in a large lock, are such strings).
fn plain_basic_string(event: toml_parser::parser::Event, raw: &str) -> Option<&str> {
    use toml_parser::decoder::Encoding;
    let inner = raw.strip_prefix('"')?.strip_suffix('"')?;
    let plain = event.encoding() == Some(Encoding::BasicString)
        && !inner
            .bytes()
            .any(|byte| byte == b'\\' || byte == b'"' || byte < 0x20 || byte == 0x7f);
    plain.then_some(inner)
}

/// What reading a case table needs, kept from one table to the next.
#[derive(Default)]
struct Scratch {
    tokens: Vec<toml_parser::lexer::Token>,
    events: Vec<toml_parser::parser::Event>,
    last_file: Option<Arc<str>>,
}

/// A case table's body, its strings borrowed from the text where they need no unescaping.
struct CaseBody<'a> {
    version: u64,
    digest: Cow<'a, str>,
    file: Cow<'a, str>,
    retired: bool,
}

impl<'a> CaseBody<'a> {
    /// The body's `key = value` lines, read from toml's parser events; `None` for
    /// anything else: a key twice or unknown, a value of another type, a syntax error.
    fn read(body: &'a str, scratch: &mut Scratch) -> Option<CaseBody<'a>> {
        use toml_parser::decoder::{IntegerRadix, ScalarKind};
        use toml_parser::parser::EventKind;
        let source = toml_parser::Source::new(body);
        scratch.tokens.clear();
        scratch.tokens.extend(source.lex());
        scratch.events.clear();
        let mut errors: Vec<toml_parser::ParseError> = Vec::new();
        toml_parser::parser::parse_document(&scratch.tokens, &mut scratch.events, &mut errors);
        let (mut version, mut digest, mut file, mut retired) = (None, None, None, None);
        let mut key = None;
        for &event in &scratch.events {
            match event.kind() {
                EventKind::Whitespace | EventKind::Newline | EventKind::Comment => {}
                EventKind::KeyValSep => {}
                // Only bare keys, one at a time: `a.b = …` or `"version"` go to toml.
                EventKind::SimpleKey if key.is_none() && event.encoding().is_none() => {
                    key = Some(source.get(event)?.as_str());
                }
                EventKind::Scalar => {
                    let raw = source.get(event)?;
                    let (value, kind) = match plain_basic_string(event, raw.as_str()) {
                        Some(inner) => (Cow::Borrowed(inner), ScalarKind::String),
                        None => {
                            let mut value = Cow::Borrowed("");
                            let kind = raw.decode_scalar(&mut value, &mut errors);
                            (value, kind)
                        }
                    };
                    let slot_was_empty = match (key.take()?, kind) {
                        ("version", ScalarKind::Integer(IntegerRadix::Dec)) => {
                            version.replace(value.parse::<u64>().ok()?).is_none()
                        }
                        ("digest", ScalarKind::String) => digest.replace(value).is_none(),
                        ("file", ScalarKind::String) => file.replace(value).is_none(),
                        ("retired", ScalarKind::Boolean(flag)) => retired.replace(flag).is_none(),
                        _ => return None,
                    };
                    if !slot_was_empty {
                        return None;
                    }
                }
                _ => return None,
            }
        }
        (errors.is_empty() && key.is_none()).then_some(())?;
        Some(CaseBody {
            version: version?,
            digest: digest?,
            file: file?,
            retired: retired.unwrap_or(false),
        })
    }
}

fn by_table(text: &str, only: Option<&BTreeSet<String>>) -> Option<Lock> {
    let mut head = String::new();
    let mut case_tables = Vec::new();
    for table in tables(text) {
        match table.starts_with(CASE_HEADER) {
            true => case_tables.push(table),
            false => head.push_str(table),
        }
    }
    let head: Head = toml::from_str(&head).ok()?;
    // The tables of each suite, which a lock lists together.
    let mut suites: Vec<(Cow<'_, str>, std::ops::Range<usize>)> = Vec::new();
    for (index, table) in case_tables.iter().enumerate() {
        let (suite, _) = case_keys(table.lines().next().unwrap_or_default())?;
        match suites.last_mut() {
            Some((last, range)) if *last == suite => range.end = index + 1,
            _ => suites.push((suite, index..index + 1)),
        }
    }
    let mut cases: BTreeMap<String, CaseEntries> = BTreeMap::new();
    for (suite, range) in suites {
        if only.is_some_and(|only| !only.contains(suite.as_ref())) {
            continue;
        }
        // Parsed side by side, straight into the suite's list; each worker shares the path
        // of the file its neighbouring entries name.
        let unusual = AtomicBool::new(false);
        let entries: Vec<(Box<str>, CaseLock)> = case_tables[range]
            .par_iter()
            .map_init(Scratch::default, |scratch, table| {
                case_entry(table, scratch).unwrap_or_else(|| {
                    unusual.store(true, Ordering::Relaxed);
                    (Box::default(), CaseLock::placeholder())
                })
            })
            .collect();
        let sorted = entries.windows(2).all(|pair| pair[0].0 < pair[1].0);
        if unusual.into_inner() || !sorted {
            return None;
        }
        // A suite listed in two places: the whole document decides.
        if cases
            .insert(suite.into_owned(), CaseEntries::from_sorted(entries))
            .is_some()
        {
            return None;
        }
    }
    Some(Lock {
        lock_version: head.lock_version,
        recipes: head.recipes,
        suites: head.suites,
        graders: head.graders,
        cases,
        skills: head.skills,
        mcp: head.mcp,
    })
}

/// The text cut before every line that opens with `[`: each piece a table (the first,
/// what precedes the first table). Joined, the pieces are the text.
fn tables(text: &str) -> impl Iterator<Item = &str> {
    let bytes = text.as_bytes();
    let mut start = 0;
    let mut search = 0;
    std::iter::from_fn(move || {
        if start >= text.len() {
            return None;
        }
        loop {
            match memchr::memchr(b'\n', &bytes[search..]) {
                Some(offset) => {
                    let next = search + offset + 1;
                    search = next;
                    if bytes.get(next) == Some(&b'[') {
                        let piece = &text[start..next];
                        start = next;
                        return Some(piece);
                    }
                }
                None => {
                    let piece = &text[start..];
                    start = text.len();
                    return Some(piece);
                }
            }
        }
    })
}

/// One `[case.<suite>.<id>]` table's id and entry, its file shared with the one before
/// when it is the same; `None` when it is anything else.
fn case_entry(table: &str, scratch: &mut Scratch) -> Option<(Box<str>, CaseLock)> {
    let (header, body) = table.split_once('\n').unwrap_or((table, ""));
    let (_, id) = case_keys(header)?;
    let body = CaseBody::read(body, scratch)?;
    let file = match &scratch.last_file {
        Some(file) if **file == *body.file => Arc::clone(file),
        _ => Arc::clone(scratch.last_file.insert(Arc::from(&*body.file))),
    };
    let entry = CaseLock {
        version: body.version,
        digest: Digest::parse(&body.digest).ok()?,
        file,
        retired: body.retired,
    };
    Some((id.into(), entry))
}

/// Whether `byte` may stand in a bare TOML key (`A-Za-z0-9_-`).
pub(super) fn is_bare_key_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'-' || byte == b'_'
}

/// The suite and id a case table's header names; `None` for any other header.
pub(super) fn case_keys(header: &str) -> Option<(Cow<'_, str>, Cow<'_, str>)> {
    let bare = |key: &str| !key.is_empty() && key.bytes().all(is_bare_key_byte);
    let inner = header.strip_prefix(CASE_HEADER)?;
    if let Some((suite, id)) = inner
        .strip_suffix(']')
        .and_then(|keys| keys.split_once('.'))
    {
        if bare(suite) && bare(id) {
            return Some((Cow::Borrowed(suite), Cow::Borrowed(id)));
        }
    }
    // A quoted key, or anything else TOML may write in a header: toml reads it.
    let table: toml::Table = toml::from_str(header).ok()?;
    let (case, suites) = single(&table)?;
    let (suite, ids) = single(suites.as_table()?)?;
    let (id, entry) = single(ids.as_table()?)?;
    let empty = entry.as_table().is_some_and(toml::Table::is_empty);
    (case == "case" && empty).then(|| (Cow::Owned(suite.clone()), Cow::Owned(id.clone())))
}

/// The one key of a table and its value.
fn single(table: &toml::Table) -> Option<(&String, &toml::Value)> {
    let mut entries = table.iter();
    let first = entries.next()?;
    entries.next().is_none().then_some(first)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pieces_join_back_into_the_text() {
        for text in ["", "a = 1\n", "[a]\nx = 1\n\n[b]\n", "a\n[b]\n[c]", "[a]"] {
            let pieces: Vec<&str> = tables(text).collect();
            assert_eq!(pieces.concat(), text);
            assert!(pieces.iter().skip(1).all(|piece| piece.starts_with('[')));
        }
    }

    #[test]
    fn headers_toml_must_read_are_read_by_toml() {
        let keys = |header: &str| {
            case_keys(header).map(|(suite, id)| (suite.into_owned(), id.into_owned()))
        };
        assert_eq!(
            keys("[case.support.refund]"),
            Some(("support".into(), "refund".into()))
        );
        assert_eq!(
            keys("[case.support.\"refund \\\"quoted\\\" id\"]"),
            Some(("support".into(), "refund \"quoted\" id".into()))
        );
        assert_eq!(
            keys("[ case . 'a.b' . c ]"),
            None,
            "not a case header by its prefix"
        );
        assert_eq!(keys("[case.support]"), None);
        assert_eq!(keys("[case.a.b.c]"), None);
        assert_eq!(keys("[case.a.b] # comment"), Some(("a".into(), "b".into())));
    }

    /// A case table's body read from parser events is what toml reads, or nothing: toml
    /// then decides.
    #[test]
    fn case_bodies_read_from_events_are_what_toml_reads() {
        let digest = format!("sha256:{}", "0".repeat(64));
        let bodies = [
            format!("version = 3\ndigest = \"{digest}\"\nfile = \"evals/a.jsonl\"\n"),
            format!("version = 1\ndigest = \"{digest}\"\nfile = \"a \\\"b\\\".jsonl\"\nretired = true\n\n"),
            format!("file = 'x.jsonl' # literal\nversion = 7\ndigest = \"{digest}\"\n"),
            format!("version = 1\ndigest = \"{digest}\"\n"),
            format!("version = 1_000\ndigest = \"{digest}\"\nfile = \"a\"\n"),
            format!("version = -1\ndigest = \"{digest}\"\nfile = \"a\"\n"),
            format!("version = 1\nversion = 2\ndigest = \"{digest}\"\nfile = \"a\"\n"),
            format!("version = 1\ndigest = \"{digest}\"\nfile = \"a\"\nextra = 1\n"),
            format!("\"version\" = 1\ndigest = \"{digest}\"\nfile = \"a\"\n"),
            format!("version = 1\ndigest = \"{digest}\"\nfile = [\"a\"]\n"),
            format!("version = 1\ndigest = \"{digest}\" file = \"a\"\n"),
            format!("version = 1\ndigest = \"{digest}\"\nfile = \"a\"\nretired = \"yes\"\n"),
        ];
        #[derive(serde::Deserialize, PartialEq, Debug)]
        #[serde(deny_unknown_fields)]
        struct Reference {
            version: u64,
            digest: String,
            file: String,
            #[serde(default)]
            retired: bool,
        }
        for body in &bodies {
            let read = CaseBody::read(body, &mut Scratch::default()).map(|read| Reference {
                version: read.version,
                digest: read.digest.into_owned(),
                file: read.file.into_owned(),
                retired: read.retired,
            });
            let reference = toml::from_str::<Reference>(body).ok();
            if let Some(read) = read {
                assert_eq!(Some(read), reference, "{body}");
            }
        }
        assert!(CaseBody::read(&bodies[0], &mut Scratch::default()).is_some());
        assert!(CaseBody::read(&bodies[1], &mut Scratch::default()).is_some());
        assert!(CaseBody::read(&bodies[2], &mut Scratch::default()).is_some());
        assert!(
            CaseBody::read(&bodies[6], &mut Scratch::default()).is_none(),
            "a key twice"
        );
    }

    /// Whatever a piece cannot decide alone, the whole document decides: the same lock
    /// or the same error.
    #[test]
    fn unusual_locks_read_as_the_whole_document_reads_them() {
        let entry = "version = 1\ndigest = \"sha256:0000000000000000000000000000000000000000000000000000000000000000\"\nfile = \"a.jsonl\"\n";
        let head = "lock_version = 1\n[recipes]\ncase = \"case-v1\"\nprompt = \"bytes-v1\"\ntree = \"tree-v1\"\nsuite = \"suite-v1\"\n";
        let texts = [
            format!("{head}\n[case.s.a]\n{entry}\n[case.s.b]\n{entry}"),
            format!("{head}\n[case.s.a]\n{entry}\n[case.s.a]\n{entry}"),
            format!(
                "{head}\n[case.s]\na = {{ version = 1, digest = \"sha256:{}\", file = \"x\" }}\n",
                "0".repeat(64)
            ),
            format!("{head}\n[case.s.a]\n{entry}x = \"\"\"\n[case.s.b]\n\"\"\"\n"),
            format!("{head}\n[case.s.a]\n{entry}\n[case.s.a.more]\n"),
            format!("{head}\n[[case.s.a]]\n{entry}"),
        ];
        for text in texts {
            let whole = toml::from_str::<Lock>(&text);
            let pieces = from_toml(&text, None);
            match (whole, pieces) {
                (Ok(whole), Ok(pieces)) => assert_eq!(whole, pieces, "{text}"),
                (Err(whole), Err(pieces)) => assert_eq!(whole.to_string(), pieces.to_string()),
                (whole, pieces) => panic!("{text}: {whole:?} against {pieces:?}"),
            }
        }
    }

    #[test]
    fn only_the_named_suites_cases_are_read() {
        let digest = format!("sha256:{}", "0".repeat(64));
        let entry = |suite: &str| {
            format!(
                "[case.{suite}.a]\nversion = 1\ndigest = \"{digest}\"\nfile = \"{suite}.jsonl\"\n"
            )
        };
        let text = format!(
            "lock_version = 1\n[recipes]\ncase = \"case-v1\"\nprompt = \"bytes-v1\"\ntree = \"tree-v1\"\nsuite = \"suite-v1\"\n\n{}\n{}\n{}",
            entry("one"),
            entry("two"),
            entry("three")
        );
        let all = from_toml(&text, None).unwrap();
        assert_eq!(all.cases.len(), 3);
        let only: BTreeSet<String> = ["two".to_owned()].into();
        let some = from_toml(&text, Some(&only)).unwrap();
        assert_eq!(some.cases.keys().collect::<Vec<_>>(), ["two"]);
        assert_eq!(some.cases["two"], all.cases["two"]);
        // A lock the tables cannot be read from is read whole, then narrowed the same way.
        let unusual = format!(
            "{text}\n[case.two.b]\nversion = 1\ndigest = \"{digest}\"\nfile = \"x\"\nx = 1\n"
        );
        let whole = from_toml(&unusual, Some(&only));
        assert!(whole.is_err() || whole.unwrap().cases.keys().eq(["two"]));
    }
}
