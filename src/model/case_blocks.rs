//! JSONL case files read in blocks of whole lines instead of whole: a case file far larger
//! than the rest of the suite costs the block being parsed (its chunks in parallel) and the
//! cases found so far, not its full text.
//!
//! The result is exactly what [`super::cases::parse_case_file_with`] gives for the whole
//! bytes, problems included: the file-wide checks keep their precedence across blocks (a
//! byte order mark, then the first invalid UTF-8, then the first CRLF, then the first
//! merge-conflict marker; any of them replaces the cases).

use super::case_lines::parse_json_lines;
use super::cases::{CaseDetail, CaseProblem, ParsedCaseFile, ProblemKind, CONFLICT_MESSAGE};
use super::lock::conflict_marker_line;
use crate::text::{
    byte_order_mark_problem, crlf_problem, require_utf8, starts_with_byte_order_mark, TextProblem,
};
use std::io::{self, Read};

/// How much of a case file is read and parsed at a time.
const BLOCK_BYTES: usize = 8 << 20;
/// The first read of a file reserves this much: most case files are smaller.
const FIRST_RESERVE: usize = 1 << 20;

/// Parses the JSONL case file `reader` yields, one block of whole lines at a time.
pub(super) fn parse_json_lines_from(
    path: &str,
    reader: impl Read,
    detail: CaseDetail,
) -> io::Result<ParsedCaseFile> {
    parse_in_blocks(path, reader, detail, BLOCK_BYTES)
}

/// [`parse_json_lines_from`] with blocks of about `block_bytes`: public for the fuzz
/// targets, which hold it to the whole-file parse with blocks of a few bytes.
#[doc(hidden)]
pub fn parse_in_blocks(
    path: &str,
    reader: impl Read,
    detail: CaseDetail,
    block_bytes: usize,
) -> io::Result<ParsedCaseFile> {
    let only = |(line, column, message): TextProblem| ParsedCaseFile {
        cases: Vec::new(),
        problems: vec![CaseProblem {
            kind: ProblemKind::Malformed,
            file: path.to_owned(),
            line,
            column,
            message,
        }],
    };
    let mut blocks = LineBlocks::new(reader, block_bytes);
    let mut parsed = ParsedCaseFile::default();
    // Found in an earlier block, these replace the cases unless a later block has a problem
    // that takes precedence (invalid UTF-8 over both, a CRLF over a marker).
    let mut crlf = None;
    let mut conflict = None;
    while let Some((first_line, block)) = blocks.next_block()? {
        if first_line == 1 && starts_with_byte_order_mark(block) {
            return Ok(only(byte_order_mark_problem()));
        }
        let from_block = |(line, column, message): TextProblem| {
            (line.saturating_add(first_line - 1), column, message)
        };
        let text = match require_utf8(block) {
            Ok(text) => text,
            Err(problem) => return Ok(only(from_block(problem))),
        };
        if crlf.is_some() {
            continue;
        }
        if let Some(problem) = crlf_problem(text) {
            crlf = Some(from_block(problem));
            parsed = ParsedCaseFile::default();
            continue;
        }
        if conflict.is_some() {
            continue;
        }
        match conflict_marker_line(text) {
            Some(line) => {
                let line = u32::try_from(line).unwrap_or(u32::MAX);
                conflict = Some(from_block((line, 1, CONFLICT_MESSAGE.into())));
                parsed = ParsedCaseFile::default();
            }
            None => parsed.append(parse_json_lines(path, text, first_line, detail)),
        }
    }
    Ok(match crlf.or(conflict) {
        Some(problem) => only(problem),
        None => parsed,
    })
}

/// Whole lines of a stream, about `block_bytes` at a time (a longer line comes whole),
/// each block with the number of its first line.
struct LineBlocks<R> {
    input: R,
    block_bytes: usize,
    /// The block handed out last, then what was read after it (the start of a line).
    buffer: Vec<u8>,
    handed_out: usize,
    first_line: u32,
    read_before: bool,
    at_end: bool,
}

impl<R: Read> LineBlocks<R> {
    fn new(input: R, block_bytes: usize) -> Self {
        LineBlocks {
            input,
            block_bytes,
            buffer: Vec::with_capacity(block_bytes.min(FIRST_RESERVE)),
            handed_out: 0,
            first_line: 1,
            read_before: false,
            at_end: false,
        }
    }

    fn next_block(&mut self) -> io::Result<Option<(u32, &[u8])>> {
        if self.handed_out > 0 {
            let newlines = memchr::memchr_iter(b'\n', &self.buffer[..self.handed_out]).count();
            let newlines = u32::try_from(newlines).unwrap_or(u32::MAX);
            self.first_line = self.first_line.saturating_add(newlines);
            self.buffer.drain(..self.handed_out);
            self.handed_out = 0;
        }
        loop {
            if !self.at_end {
                // The first read fills the first reservation (most case files end there);
                // later ones make room for a whole block first: a buffer grown by doubling
                // could take twice a block.
                if self.read_before {
                    self.buffer.reserve_exact(self.block_bytes);
                }
                self.read_before = true;
                let room = (self.buffer.capacity() - self.buffer.len()).min(self.block_bytes);
                let read = (&mut self.input)
                    .take(room as u64)
                    .read_to_end(&mut self.buffer)?;
                self.at_end = read < room;
            }
            let end = match self.at_end {
                true => self.buffer.len(),
                // A line longer than a block: read on until it ends.
                false => match memchr::memrchr(b'\n', &self.buffer) {
                    Some(newline) => newline + 1,
                    None => continue,
                },
            };
            if end == 0 {
                return Ok(None);
            }
            self.handed_out = end;
            return Ok(Some((self.first_line, &self.buffer[..end])));
        }
    }
}

#[cfg(test)]
mod tests;
