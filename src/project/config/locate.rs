//! Where things are written in evalock.toml: serde's spans cover only some values, so
//! these find the line (or `path:line:col`) of table headers, keys, globs and values for
//! messages and findings made after parsing.

use super::Config;
use crate::text::{line_of_first, LineIndex};
use std::ops::Range;

impl Config {
    /// Records where each grader says what it runs, and where each of its `sources` globs
    /// is written, for findings made after parsing.
    pub(super) fn locate_graders(&mut self, text: &str) {
        let lines = LineIndex::new(text.as_bytes());
        for (id, grader) in &mut self.graders {
            let headers = [format!("[grader.{id}]"), format!("[grader.\"{id}\"]")];
            let header_at = headers
                .iter()
                .filter_map(|header| text.find(header.as_str()))
                .min();
            grader.line = match &grader.command {
                Some(command) => lines.line_of(command.span().start),
                None => line_of_first(text, &[&headers[0], &headers[1]]),
            };
            let inside = match &grader.command {
                Some(command) => command.span().start,
                None => header_at.map_or(0, |at| at + 1),
            };
            grader.source_lines = glob_lines(text, &lines, inside, "sources", &grader.sources);
        }
    }

    /// Records the line of each suite's case globs, for findings made after parsing.
    pub(super) fn locate_case_globs(&mut self, text: &str) {
        let lines = LineIndex::new(text.as_bytes());
        for suite in &mut self.suites {
            let inside = suite.name.span().start;
            suite.case_glob_lines = glob_lines(text, &lines, inside, "cases", &suite.cases);
        }
    }
}

/// The 1-based line of a table header such as `[skills]`, or 1.
pub(super) fn table_line(text: &str, header: &str) -> usize {
    text.lines()
        .position(|line| line.trim() == header)
        .map_or(1, |index| index + 1)
}

/// The location (`path:line:col`, at the value's opening quote) of a string value in the
/// config, for checks made after parsing; `path:1` when it is not written as such.
pub(super) fn value_location(path: &str, text: &str, value: &str) -> String {
    let written = [
        format!("\"{value}\""),
        format!("'{value}'"),
        value.to_owned(),
    ];
    let offset = written
        .iter()
        .filter(|needle| !needle.is_empty())
        .find_map(|needle| text.find(needle.as_str()));
    location_of(path, text, offset.map(|start| start..start + value.len()))
}

/// The line that writes each of `patterns`, the globs of `key` in the table that holds byte
/// `inside`: where the glob is written after that key, within its table; else the key's
/// line (else `inside`'s, when the key is not found).
pub(super) fn glob_lines(
    text: &str,
    lines: &LineIndex,
    inside: usize,
    key: &str,
    patterns: &[String],
) -> Vec<u32> {
    let key_at = key_span_in_table(text, inside, key).map_or(inside, |span| span.start);
    let table_end = text[key_at..]
        .find("\n[")
        .map_or(text.len(), |index| key_at + index);
    let written = &text[key_at..table_end];
    patterns
        .iter()
        .map(|pattern| {
            let offset = [format!("\"{pattern}\""), format!("'{pattern}'")]
                .iter()
                .filter_map(|needle| written.find(needle.as_str()))
                .min()
                .unwrap_or(0);
            lines.line_of(key_at + offset)
        })
        .collect()
}

/// Where `key` is written in `[policy]`, as `path:line:col`; its first mention when the
/// table is written inline.
pub(super) fn policy_key_location(path: &str, text: &str, key: &str) -> String {
    let span = table_header_offset(text, "[policy]")
        .and_then(|inside| key_span_in_table(text, inside, key));
    match span {
        Some(span) => location_of(path, text, Some(span)),
        None => format!("{path}:{}", line_of_first(text, &[key])),
    }
}

/// The byte offset just inside the table opened by the header line `header`.
pub(super) fn table_header_offset(text: &str, header: &str) -> Option<usize> {
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let written = line.split('#').next().unwrap_or("").trim();
        if written == header {
            return Some(offset + (line.len() - line.trim_start().len()) + 1);
        }
        offset += line.len();
    }
    None
}

/// Where `key = …` is written in the table that holds byte `inside` (from that table's
/// header to the next one), as the span of the key.
pub(super) fn key_span_in_table(text: &str, inside: usize, key: &str) -> Option<Range<usize>> {
    let table_start = text[..inside].rfind("\n[").map_or(0, |index| index + 1);
    let mut offset = table_start;
    for (index, line) in text[table_start..].split_inclusive('\n').enumerate() {
        let trimmed = line.trim_start();
        if index > 0 && trimmed.starts_with('[') {
            return None;
        }
        let rest = trimmed.strip_prefix(key).map(str::trim_start);
        if rest.is_some_and(|rest| rest.starts_with('=')) {
            let start = offset + (line.len() - trimmed.len());
            return Some(start..start + key.len());
        }
        offset += line.len();
    }
    None
}

pub(super) fn location_of(path: &str, text: &str, span: Option<Range<usize>>) -> String {
    match span {
        Some(span) => {
            let (line, column) =
                LineIndex::new(text.as_bytes()).position_of(text.as_bytes(), span.start);
            format!("{path}:{line}:{column}")
        }
        None => format!("{path}:1"),
    }
}
