//! Reading the lock's TOML. Its bulk is one small table per case (200,000 in a large
//! project), and one TOML parse of the whole document builds a spanned tree of all of them:
//! 0.85 s and 250 MB for a 31 MiB lock. Cut at its table headers, the document is parsed by
//! toml in pieces instead: the case tables one by one, side by side, and the rest as one
//! document (0.19 s on two cores, 35 MB). Anything unusual (a header toml must read, a
//! table twice, a piece that does not parse alone) goes to the whole-document parse, which
//! decides, and locates every error.

use super::{CaseEntries, CaseLock, GraderLock, Lock, Recipes, SkillLock, SuiteLock};
use crate::digest::Digest;
use rayon::prelude::*;
use serde::Deserialize;
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Parses the lock's text (already known to be clean UTF-8 without conflict markers).
pub(super) fn from_toml(text: &str) -> Result<Lock, toml::de::Error> {
    match by_table(text) {
        Some(lock) => Ok(lock),
        None => toml::from_str(text),
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
}

const CASE_HEADER: &str = "[case.";

/// A case table's body as toml reads it, its strings borrowed from the text.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CaseBody<'a> {
    version: u64,
    #[serde(borrow)]
    digest: Cow<'a, str>,
    #[serde(borrow)]
    file: Cow<'a, str>,
    #[serde(default)]
    retired: bool,
}

fn by_table(text: &str) -> Option<Lock> {
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
        // Parsed side by side, straight into the suite's list; each worker shares the path
        // of the file its neighbouring entries name.
        let unusual = AtomicBool::new(false);
        let entries: Vec<(String, CaseLock)> = case_tables[range]
            .par_iter()
            .map_init(
                || None::<Arc<str>>,
                |last_file, table| {
                    case_entry(table, last_file).unwrap_or_else(|| {
                        unusual.store(true, Ordering::Relaxed);
                        (String::new(), CaseLock::placeholder())
                    })
                },
            )
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

/// One `[case.<suite>.<id>]` table's id and entry, its file shared with `last_file` when
/// it is the same; `None` when it is anything else.
fn case_entry(table: &str, last_file: &mut Option<Arc<str>>) -> Option<(String, CaseLock)> {
    let (header, body) = table.split_once('\n').unwrap_or((table, ""));
    let (_, id) = case_keys(header)?;
    let body: CaseBody = toml::from_str(body).ok()?;
    let file = match last_file {
        Some(file) if **file == *body.file => Arc::clone(file),
        _ => Arc::clone(last_file.insert(Arc::from(&*body.file))),
    };
    let entry = CaseLock {
        version: body.version,
        digest: Digest::parse(&body.digest).ok()?,
        file,
        retired: body.retired,
    };
    Some((id.into_owned(), entry))
}

/// The suite and id a case table's header names; `None` for any other header.
fn case_keys(header: &str) -> Option<(Cow<'_, str>, Cow<'_, str>)> {
    let bare = |key: &str| {
        !key.is_empty()
            && key
                .bytes()
                .all(|byte| byte.is_ascii_alphanumeric() || byte == b'-' || byte == b'_')
    };
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
            let pieces = from_toml(&text);
            match (whole, pieces) {
                (Ok(whole), Ok(pieces)) => assert_eq!(whole, pieces, "{text}"),
                (Err(whole), Err(pieces)) => assert_eq!(whole.to_string(), pieces.to_string()),
                (whole, pieces) => panic!("{text}: {whole:?} against {pieces:?}"),
            }
        }
    }
}
