//! JSONL case files read in blocks of whole lines instead of whole: a case file far larger
//! than the rest of the suite costs the block being parsed (its chunks in parallel) and the
//! cases found so far, not its full text.
//!
//! The result is exactly what [`super::cases::parse_case_file_with`] gives for the whole
//! bytes, problems included: the file-wide checks keep their precedence across blocks (a
//! byte order mark, then the first invalid UTF-8, then the first CRLF, then the first
//! merge-conflict marker; any of them replaces the cases).

use super::case_lines::{parse_json_lines, ConflictMarker};
use super::cases::{CaseDetail, CaseProblem, ParsedCaseFile, ProblemKind, CONFLICT_MESSAGE};
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
///
/// The next block is read while the last one is checked and parsed: the reading stays on
/// this thread (the reader need not move), the parsing is handed to the thread pool.
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
    let mut file = FileSoFar::default();
    // Where the next block starts: the lines of the blocks before it, as their parse
    // counted them (no pass of its own over a block to count them).
    let mut first_line = 1u32;
    let mut next = blocks.next_block()?;
    while let Some(block) = next {
        let last = blocks.finished();
        let mut taken = Ok(None);
        let mut following = Ok(None);
        match last {
            // The last block (of most files, the only one): nothing to read meanwhile.
            true => taken = file.take(path, first_line, &block, detail),
            false => rayon::in_place_scope(|scope| {
                scope.spawn(|_| taken = file.take(path, first_line, &block, detail));
                following = blocks.next_block();
            }),
        }
        let lines = match taken {
            Ok(lines) => lines,
            Err(problem) => return Ok(only(problem)),
        };
        if !last {
            // A block that was only checked (the file has a problem that stands for it)
            // is counted here. A block before the last ends with a newline, after which
            // `split` counts one more, empty, line: the next block's first.
            let lines = lines.unwrap_or_else(|| {
                let newlines = memchr::memchr_iter(b'\n', &block).count();
                u32::try_from(newlines)
                    .unwrap_or(u32::MAX)
                    .saturating_add(1)
            });
            first_line = first_line.saturating_add(lines.saturating_sub(1));
        }
        blocks.give_back(block);
        next = following?;
    }
    Ok(match file.crlf.or(file.conflict) {
        Some(problem) => only(problem),
        None => file.parsed,
    })
}

/// What the blocks of a file read so far make of it.
#[derive(Default)]
struct FileSoFar {
    parsed: ParsedCaseFile,
    /// Found in an earlier block, these replace the cases unless a later block has a
    /// problem that takes precedence (invalid UTF-8 over both, a CRLF over a marker).
    crlf: Option<TextProblem>,
    conflict: Option<TextProblem>,
}

impl FileSoFar {
    /// Checks and parses the block whose first line is `first_line`: its number of lines
    /// when it was parsed (as `split('\n')` counts them), `None` when it was only checked.
    /// A problem that stands for the whole file at once (a byte order mark, invalid UTF-8)
    /// ends the file.
    fn take(
        &mut self,
        path: &str,
        first_line: u32,
        block: &[u8],
        detail: CaseDetail,
    ) -> Result<Option<u32>, TextProblem> {
        if first_line == 1 && starts_with_byte_order_mark(block) {
            return Err(byte_order_mark_problem());
        }
        let from_block = |(line, column, message): TextProblem| {
            (line.saturating_add(first_line - 1), column, message)
        };
        let text = require_utf8(block).map_err(from_block)?;
        if self.crlf.is_some() {
            return Ok(None);
        }
        if let Some(problem) = crlf_problem(text) {
            self.crlf = Some(from_block(problem));
            self.parsed = ParsedCaseFile::default();
            return Ok(None);
        }
        if self.conflict.is_some() {
            return Ok(None);
        }
        match parse_json_lines(path, text, first_line, detail) {
            Ok(parsed) => {
                self.parsed.append(parsed.parts);
                Ok(Some(parsed.lines))
            }
            Err(ConflictMarker(line)) => {
                self.conflict = Some((line, 1, CONFLICT_MESSAGE.into()));
                self.parsed = ParsedCaseFile::default();
                Ok(None)
            }
        }
    }
}

/// Whole lines of a stream, about `block_bytes` at a time (a longer line comes whole).
struct LineBlocks<R> {
    input: R,
    block_bytes: usize,
    /// What was read after the last block's last newline: the start of a line.
    carry: Vec<u8>,
    /// A block given back, whose buffer the next one reuses.
    spare: Vec<u8>,
    read_before: bool,
    at_end: bool,
}

impl<R: Read> LineBlocks<R> {
    fn new(input: R, block_bytes: usize) -> Self {
        LineBlocks {
            input,
            block_bytes,
            carry: Vec::new(),
            spare: Vec::new(),
            read_before: false,
            at_end: false,
        }
    }

    fn next_block(&mut self) -> io::Result<Option<Vec<u8>>> {
        let mut buffer = std::mem::take(&mut self.spare);
        buffer.clear();
        buffer.append(&mut self.carry);
        loop {
            if !self.at_end {
                // The first read fills the first reservation (most case files end there);
                // later ones make room for a whole block first: a buffer grown by doubling
                // could take twice a block.
                match self.read_before {
                    true => buffer.reserve_exact(self.block_bytes),
                    false => buffer.reserve_exact(self.block_bytes.min(FIRST_RESERVE)),
                }
                self.read_before = true;
                let room = (buffer.capacity() - buffer.len()).min(self.block_bytes);
                let read = (&mut self.input)
                    .take(room as u64)
                    .read_to_end(&mut buffer)?;
                self.at_end = read < room;
            }
            let end = match self.at_end {
                true => buffer.len(),
                // A line longer than a block: read on until it ends.
                false => match memchr::memrchr(b'\n', &buffer) {
                    Some(newline) => newline + 1,
                    None => continue,
                },
            };
            if end == 0 {
                return Ok(None);
            }
            self.carry.extend_from_slice(&buffer[end..]);
            buffer.truncate(end);
            return Ok(Some(buffer));
        }
    }

    /// Whether everything was read and handed out.
    fn finished(&self) -> bool {
        self.at_end && self.carry.is_empty()
    }

    /// A block done with: its buffer holds the next one.
    fn give_back(&mut self, block: Vec<u8>) {
        self.spare = block;
    }
}

#[cfg(test)]
mod tests;
