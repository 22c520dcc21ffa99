//! JSONL case files, the format large suites use. For checks ([`CaseDetail::Summary`]) each
//! line is canonicalized straight from its text (see [`crate::cases::canonical`]) instead of through a
//! `serde_json::Value`; big files are cut into chunks of whole lines hashed in parallel.

use super::documents::Element;
use super::strict_json::{duplicate_key_position, StrictValue};
use crate::cases::canonical::Canonicalizer;
use crate::cases::{
    case_fields, case_from_element, json_error_message_at, Case, CaseDetail, CaseProblem,
    GradedMembers, ParsedCaseFile, ProblemKind, SharedText, VarFiles, GRADED_MEMBERS,
};
use crate::digest::bytes_digest;
use crate::text::{code_point_column, is_conflict_marker, split_lines};
use rayon::prelude::*;
use serde_json::Value;
use std::sync::Arc;

/// A text up to this size (most case files) is parsed as one chunk: the files of a suite
/// already keep the cores busy side by side.
const WHOLE_TEXT_BYTES: usize = 1 << 20;
/// A larger text (a large file, or a block of one) is cut into chunks of about this size,
/// hashed in parallel: small enough that the cores run out of work together at the end of
/// each block (1 MiB chunks left one idle for part of a chunk at each of them).
const CHUNK_BYTES: usize = 1 << 18;
/// The top-level members [`case_fields`] interprets, then the ones graders read.
const INTERPRETED_MEMBERS: &[&str] = &[
    "id",
    "version",
    "retired",
    "grader_version",
    "n",
    "expect",
    "expects_refusal",
    "mutate",
    "expect_pass",
    "vars",
];

/// One case per non-blank line of `text`; a bad line is a problem at its line and the rest
/// still load. The cases come per chunk, in file order, to be joined
/// ([`ParsedCaseFile::joined`]) once a caller that owns the text has freed it.
///
/// A merge-conflict marker stands for the whole text instead: `Err` with the line of the
/// first one. The parse looks for markers itself, at the start of each line it visits
/// anyway, so `text` needs no pass of its own for them.
pub(crate) fn parse_json_lines(
    path: &str,
    text: &str,
    detail: CaseDetail,
) -> Result<Vec<ParsedCaseFile>, ConflictMarker> {
    parse_json_lines_from(path, 1, text, detail)
}

/// [`parse_json_lines`] for a piece of a file whose first line is `first_line`.
pub(crate) fn parse_json_lines_from(
    path: &str,
    first_line: u32,
    text: &str,
    detail: CaseDetail,
) -> Result<Vec<ParsedCaseFile>, ConflictMarker> {
    parse_json_lines_in_chunks(path, first_line, text, detail, chunk_target(text.len()))
}

/// The line of the first merge-conflict marker of a JSONL text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ConflictMarker(pub u32);

fn parse_json_lines_in_chunks(
    path: &str,
    first_line: u32,
    text: &str,
    detail: CaseDetail,
    chunk_bytes: usize,
) -> Result<Vec<ParsedCaseFile>, ConflictMarker> {
    let chunks = line_chunks(text, first_line, chunk_bytes);
    // The chunks are in file order: the first marker found is the file's first.
    chunks
        .par_iter()
        .map(|(first_line, chunk)| parse_chunk(path, *first_line, chunk, detail))
        .collect()
}

/// The lines of `text` as `text.split('\n')` counts them.
fn line_count(text: &str) -> usize {
    memchr::memchr_iter(b'\n', text.as_bytes()).count() + 1
}

/// Cuts `text`, whose first line is `first_line`, at newlines into pieces of about
/// `target` bytes, each with the number of its first line. Joining the pieces with `\n`
/// gives back `text`.
fn line_chunks(text: &str, first_line: u32, target: usize) -> Vec<(u32, &str)> {
    // Cut at newlines, which are never inside a character.
    line_cuts(text.as_bytes(), first_line, target)
        .into_iter()
        .map(|(first_line, range)| (first_line, &text[range]))
        .collect()
}

/// [`line_chunks`] of bytes that may not be UTF-8.
pub(crate) fn byte_line_chunks(bytes: &[u8], first_line: u32, target: usize) -> Vec<(u32, &[u8])> {
    line_cuts(bytes, first_line, target)
        .into_iter()
        .map(|(first_line, range)| (first_line, &bytes[range]))
        .collect()
}

fn line_cuts(bytes: &[u8], first_line: u32, target: usize) -> Vec<(u32, std::ops::Range<usize>)> {
    let mut chunks = Vec::new();
    let mut first_line = first_line;
    let mut start = 0;
    while bytes.len() - start > target {
        let Some(newline) = memchr::memchr(b'\n', &bytes[start + target..]) else {
            break;
        };
        let end = start + target + newline;
        chunks.push((first_line, start..end));
        let newlines = memchr::memchr_iter(b'\n', &bytes[start..end]).count() + 1;
        first_line = first_line.saturating_add(u32::try_from(newlines).unwrap_or(u32::MAX));
        start = end + 1;
    }
    chunks.push((first_line, start..bytes.len()));
    chunks
}

/// How large the chunks of a text of `len` bytes are that are parsed side by side.
pub(crate) fn chunk_target(len: usize) -> usize {
    match len <= WHOLE_TEXT_BYTES {
        true => WHOLE_TEXT_BYTES,
        false => CHUNK_BYTES,
    }
}

/// The cases of one chunk, whose first line is `first_line` of its file.
pub(crate) fn parse_chunk(
    path: &str,
    first_line: u32,
    chunk: &str,
    detail: CaseDetail,
) -> Result<ParsedCaseFile, ConflictMarker> {
    let mut parsed = ParsedCaseFile::default();
    // A case a line: a large file is most of a check's memory, and cases in a vector
    // grown by doubling would take up to twice their size.
    parsed.cases.reserve_exact(line_count(chunk));
    // One canonicalizer a thread, kept from chunk to chunk and file to file: the key
    // orders it learns hold across the files of a suite (with 20,000 files of ten cases,
    // learning them again for each was a tenth of a check).
    thread_local! {
        static CANONICALIZER: std::cell::RefCell<Canonicalizer> =
            std::cell::RefCell::new(Canonicalizer::new());
    }
    CANONICALIZER.with_borrow_mut(|canonicalizer| {
        parse_lines(path, first_line, chunk, detail, canonicalizer, parsed)
    })
}

fn parse_lines(
    path: &str,
    first_line: u32,
    chunk: &str,
    detail: CaseDetail,
    canonicalizer: &mut Canonicalizer,
    mut parsed: ParsedCaseFile,
) -> Result<ParsedCaseFile, ConflictMarker> {
    let mut lines = Summarizer {
        detail,
        canonicalizer,
        interpreted: Vec::new(),
        grader_versions: SharedText::default(),
        file: Arc::from(path),
    };
    for (index, line_text) in split_lines(chunk).enumerate() {
        let line = first_line.saturating_add(u32::try_from(index).unwrap_or(u32::MAX));
        // A line that opens an object (nearly all) is neither blank nor a marker.
        if !line_text.starts_with('{') {
            if is_conflict_marker(line_text) {
                return Err(ConflictMarker(line));
            }
            if line_text.trim().is_empty() {
                continue;
            }
        }
        let fast = match detail {
            CaseDetail::Summary | CaseDetail::Probed(_) => {
                case_from_text(&mut lines, line, line_text, &mut parsed.problems)
            }
            CaseDetail::Full => None,
        };
        let result = fast.unwrap_or_else(|| {
            case_through_value(&lines.file, line, line_text, detail, &mut parsed.problems)
        });
        match result {
            Ok(case) => parsed.cases.push(case),
            Err(problem) => parsed.problems.push(problem),
        }
    }
    Ok(parsed)
}

/// The reference path: parse into a value, then canonicalize it. Gives the exact error.
/// A loaded case's numbers finer than a double are warnings in `problems`.
fn case_through_value(
    file: &Arc<str>,
    line: u32,
    line_text: &str,
    detail: CaseDetail,
    problems: &mut Vec<CaseProblem>,
) -> Result<Case, CaseProblem> {
    match serde_json::from_str::<StrictValue>(line_text) {
        Ok(StrictValue(value)) => {
            let element = Element {
                value,
                line,
                end_line: line,
                key: None,
            };
            let case = case_from_element(file, element, detail)?;
            let imprecise = crate::cases::canonical::imprecise_numbers(line_text.as_bytes());
            problems.extend(imprecise_number_problems(file, line, line_text, &imprecise));
            Ok(case)
        }
        Err(error) => Err(CaseProblem {
            kind: ProblemKind::Malformed,
            file: file.to_string(),
            line,
            column: duplicate_key_position(line_text, &error).map_or_else(
                || code_point_column(line_text.as_bytes(), error.column()),
                |(_, column)| column,
            ),
            message: json_error_message_at(&error, line_text),
        }),
    }
}

/// What the fast path keeps from line to line of a chunk.
struct Summarizer<'c> {
    detail: CaseDetail,
    canonicalizer: &'c mut Canonicalizer,
    /// The interpreted members of the current line; reused from line to line.
    interpreted: Vec<(&'static str, Value)>,
    grader_versions: SharedText,
    file: Arc<str>,
}

/// The fast path: `None` when the line needs the reference path (invalid JSON, duplicate
/// keys, …). Only the members evalock interprets are parsed into values. A loaded case's
/// numbers finer than a double are warnings in `problems`.
fn case_from_text(
    lines: &mut Summarizer<'_>,
    line: u32,
    line_text: &str,
    problems: &mut Vec<CaseProblem>,
) -> Option<Result<Case, CaseProblem>> {
    let Summarizer {
        detail,
        canonicalizer,
        interpreted,
        grader_versions,
        file,
    } = lines;
    let object = canonicalizer.object(line_text, INTERPRETED_MEMBERS, Some("retired"))?;
    // What graders read is kept as its text; what evalock interprets, as values.
    let mut graded: [(&str, &str); 4] = [("", ""); 4];
    interpreted.clear();
    let mut var_files = None;
    for member in object.members {
        let raw = line_text.get(member.raw_value.clone())?;
        if let Some(slot) = GRADED_MEMBERS.iter().position(|name| *name == member.key) {
            graded[slot] = (member.key, raw);
        }
        if member.key == "vars" {
            // Only vars that name files are read into a value.
            if raw.contains("file://") {
                var_files = VarFiles::of_vars(Some(&member_value(raw)?));
            }
            continue;
        }
        if !matches!(member.key, "expect" | "mutate" | "expect_pass") {
            interpreted.push((member.key, member_value(raw)?));
        }
    }
    let fields = match case_fields(interpreted.as_slice()) {
        Ok(fields) => fields,
        Err(message) => {
            return Some(Err(CaseProblem {
                kind: ProblemKind::Malformed,
                file: file.to_string(),
                line,
                column: 1,
                message,
            }))
        }
    };
    let (version, retired) = (fields.version, fields.retired);
    let grader_version = fields
        .grader_version
        .map(|version| grader_versions.share(&version));
    let body = detail.summary_body(fields.id, GradedMembers::of_texts(graded));
    let id = fields.id.to_owned();
    let digest = bytes_digest(object.canonical);
    let contract = object
        .without_excluded
        .map(bytes_digest)
        .filter(|contract| *contract != digest)
        .map(Box::new);
    problems.extend(imprecise_number_problems(
        file,
        line,
        line_text,
        object.imprecise_numbers,
    ));
    Some(Ok(Case {
        id: id.into(),
        version,
        digest,
        contract,
        file: Arc::clone(file),
        line,
        end_line: line,
        retired,
        grader_version,
        body,
        var_files,
    }))
}

/// The warnings for the number literals at `ranges` of the JSONL line `line`.
fn imprecise_number_problems<'a>(
    file: &'a str,
    line: u32,
    line_text: &'a str,
    ranges: &'a [std::ops::Range<usize>],
) -> impl Iterator<Item = CaseProblem> + 'a {
    ranges.iter().map(move |range| {
        let literal = line_text.get(range.clone()).unwrap_or_default();
        let column = code_point_column(line_text.as_bytes(), range.start + 1);
        CaseProblem::imprecise_number(file, line, column, literal)
    })
}

/// The value of a member the canonicalizer has already validated (so no duplicate keys,
/// no leading zeros, no out-of-range numbers): literals, plain strings and short integers
/// directly, the rest through serde_json.
fn member_value(raw: &str) -> Option<Value> {
    match raw.as_bytes() {
        [b'"', body @ .., b'"'] if !body.contains(&b'\\') => {
            Some(Value::String(raw[1..raw.len() - 1].to_owned()))
        }
        // Short unsigned integers (`version`, `n`): what serde_json reads them as.
        digits @ [b'0'..=b'9', ..]
            if digits.len() <= 19 && digits.iter().all(u8::is_ascii_digit) =>
        {
            raw.parse::<u64>().ok().map(Value::from)
        }
        b"true" => Some(Value::Bool(true)),
        b"false" => Some(Value::Bool(false)),
        b"null" => Some(Value::Null),
        _ => serde_json::from_str(raw).ok(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cases::{parse_case_file_with, CaseBody};
    use crate::text::conflict_marker_line;

    #[test]
    fn member_values_are_what_serde_json_reads() {
        for raw in [
            "0",
            "7",
            "1001",
            "1234567890123456789",
            "18446744073709551615",
            "98446744073709551615",
            "1.0",
            "1e3",
            "-3",
            "\"plain\"",
            "\"caf\\u00e9 \\\"q\\\"\"",
            "\"\"",
            "true",
            "false",
            "null",
            "{\"must_include\": [\"a\", 2], \"x\": {\"y\": null}}",
            "[1, \"two\"]",
        ] {
            let expected: Option<Value> = serde_json::from_str(raw).ok();
            assert!(expected.is_some(), "{raw}");
            assert_eq!(member_value(raw), expected, "{raw}");
        }
    }

    #[test]
    fn chunks_rejoin_to_the_text_and_know_their_first_line() {
        let text = "a\nbb\n\nccc\ndddd\ne\n";
        for target in [1, 2, 3, 5, 100] {
            let chunks = line_chunks(text, 1, target);
            let joined: Vec<&str> = chunks.iter().map(|(_, chunk)| *chunk).collect();
            assert_eq!(joined.join("\n"), text, "target {target}");
            for (first_line, chunk) in &chunks {
                let first_line_text = text.split('\n').nth(*first_line as usize - 1);
                assert_eq!(first_line_text, chunk.split('\n').next(), "target {target}");
            }
        }
        let numbered: Vec<(u32, &str)> = line_chunks("l1\nl2\nl3\nl4", 1, 2);
        assert_eq!(numbered, vec![(1, "l1"), (2, "l2"), (3, "l3"), (4, "l4")]);
    }

    /// A case file of up to a mebibyte is one chunk (a suite's files already run side by
    /// side); a larger text is cut into quarter-mebibyte chunks, so that the cores run out
    /// of work together at the end of each block of a large file.
    #[test]
    fn only_texts_over_a_mebibyte_are_cut_and_then_finely() {
        let line = format!("{{\"id\": \"c\", \"input\": \"{}\"}}\n", "x".repeat(1000));
        let text_of = |bytes: usize| line.repeat(bytes / line.len());
        let parts = |text: &str| {
            let parsed =
                parse_json_lines("a.jsonl", text, CaseDetail::Summary).expect("no conflict marker");
            parsed.len()
        };
        assert_eq!(parts(&text_of(WHOLE_TEXT_BYTES)), 1);
        let large = text_of(2 * WHOLE_TEXT_BYTES);
        assert_eq!(parts(&large), large.len().div_ceil(CHUNK_BYTES));
    }

    /// The parse finds merge-conflict markers where a scan of the whole text for them
    /// (`conflict_marker_line`, the definition) finds the first one, whatever the chunks;
    /// lines that only look like markers are parsed as lines.
    #[test]
    fn the_parse_finds_the_first_conflict_marker_where_a_scan_of_the_text_does() {
        let lookalikes = [
            "<<<<<<<",
            " =======",
            "========",
            ">>>>>>>theirs",
            "{\"id\": \"<<<<<<< HEAD\"}",
        ];
        let mut lines: Vec<String> = (0..60)
            .map(|number| match number % 7 {
                0 => String::new(),
                1 => "not json".to_owned(),
                2 => lookalikes[number % lookalikes.len()].to_owned(),
                _ => format!("{{\"id\": \"c{number}\", \"input\": {{\"text\": \"{number}\"}}}}"),
            })
            .collect();
        let quiet = lines.join("\n");
        let mut texts = vec![(quiet.clone(), None)];
        for (at, marker) in [
            (0, "<<<<<<< HEAD"),
            (13, "======="),
            (41, ">>>>>>> theirs"),
            (60, "======="),
        ] {
            lines.insert(at, marker.to_owned());
            let text = lines.join("\n");
            let expected = conflict_marker_line(&text);
            assert!(expected.is_some(), "{marker} at {at}");
            texts.push((text, expected));
        }
        for (text, expected) in &texts {
            for chunk_bytes in [1, 7, 64, 333, 1 << 20] {
                let found = parse_json_lines_in_chunks(
                    "a.jsonl",
                    1,
                    text,
                    CaseDetail::Summary,
                    chunk_bytes,
                )
                .err()
                .map(|ConflictMarker(line)| line as usize);
                assert_eq!(found, *expected, "chunks of {chunk_bytes}: {text}");
            }
        }
        let parsed = parse_json_lines("a.jsonl", &quiet, CaseDetail::Summary)
            .expect("look-alikes are not markers");
        let loaded = parsed.iter().map(|part| part.cases.len()).sum::<usize>();
        assert!(loaded > 30, "{loaded} cases");
    }

    /// Summary and full loads agree on everything but the kept values (a summary keeps the
    /// graded members of each case as their text), line by line,
    /// including problems, across the chunk boundaries of a large file.
    #[test]
    fn summary_equals_full_without_values() {
        let mut text = String::new();
        for number in 0..3_000 {
            let line = match number % 97 {
                0 => "{\"id\": \"dup\", \"id\": \"dup\"}".to_owned(),
                1 => format!("{{\"id\": \"r{number}\", \"retired\": true, \"version\": 2}}"),
                2 => format!("{{\"id\": \"v{number}\", \"version\": 1.0}}"),
                3 => String::new(),
                4 => "not json".to_owned(),
                5 => format!("{{\"id\": \"n{number}\", \"n\": 1001}}"),
                // Numbers finer than a double: warnings, and the case still loads.
                8 => format!(
                    "{{\"id\": \"big{number}\", \"input\": {{\"ticket\": 9007199254740993, \"t\": [0.10000000000000000001, \"1e-400\", 1e-400]}}}}"
                ),
                // Every interpreted member, strings with and without escapes.
                6 => format!(
                    "{{\"mutate\": [{{\"completion\": \"x\"}}], \"id\": \"caf\\u00e9-{number}\", \"grader_version\": \"v\\\"2\", \"expect\": {{\"must_include\": [\"x\"]}}, \"expects_refusal\": true, \"n\": 3, \"retired\": false, \"version\": 4}}"
                ),
                7 => format!(
                    "{{\"id\": \"p{number}\", \"grader_version\": \"plain\", \"expect\": {{\"must_include\": [\"\\u00e9\"]}}, \"mutate\": {{\"completion\": \"\\u00e9\"}}, \"expects_refusal\": false, \"retired\": true}}"
                ),
                _ => format!(
                    "{{\"version\": {}, \"id\": \"case-{number}\", \"input\": {{\"text\": \"caf\\u00e9 {number}\", \"t\": 0.7}}, \"grader_version\": 3}}",
                    1 + number % 3
                ),
            };
            text.push_str(&line);
            text.push('\n');
        }
        let full = parse_case_file_with("big.jsonl", text.as_bytes(), CaseDetail::Full);
        let parts = parse_json_lines_in_chunks("big.jsonl", 1, &text, CaseDetail::Summary, 4096);
        let summary = ParsedCaseFile::joined(parts.expect("the text has no conflict marker"));
        assert!(
            line_chunks(&text, 1, 4096).len() > 10,
            "the file must span several chunks"
        );
        let without_values: Vec<Case> = full
            .cases
            .iter()
            .cloned()
            .map(|case| Case {
                body: CaseBody::Graded(GradedMembers::of_value(case.value())),
                ..case
            })
            .collect();
        assert_eq!(summary.cases, without_values);
        assert_eq!(summary.problems, full.problems);
        assert!(
            summary.problems.len() > 100,
            "{} problems",
            summary.problems.len()
        );
        assert!(summary
            .cases
            .iter()
            .any(|case| case.retired && case.contract.is_some()));
        let imprecise: Vec<(u32, u32)> = summary
            .problems
            .iter()
            .filter(|problem| !problem.is_malformed())
            .map(|problem| (problem.line, problem.column))
            .collect();
        assert_eq!(imprecise.len(), 3 * 31, "{imprecise:?}");
        assert_eq!(imprecise[..3], [(9, 36), (9, 60), (9, 94)]);
        assert!(summary.cases.iter().any(|case| &*case.id == "big8"));
        assert_eq!(summary.cases.last().map(|case| case.line), Some(3_000));
    }
}
