//! A JSONL case file read block by block, its whole lines parsed as each block arrives:
//! a file of 156 MiB then costs a reused block of memory instead of its own size, and no
//! page faults for a buffer of that size (a tenth of a check of one such file). What it
//! yields is exactly what [`crate::cases::parse_case_file_in_parts`] yields for the whole
//! text, problems and their precedence included.

use super::jsonl::{byte_line_chunks, chunk_target, parse_chunk, ConflictMarker};
use super::parse::CONFLICT_MESSAGE;
use super::{CaseDetail, CaseProblem, ParsedCaseFile, ProblemKind};
use crate::text::lfs_pointer::POINTER_MAX_BYTES;
use crate::text::{
    byte_order_mark_problem, crlf_problem, require_utf8, starts_with_byte_order_mark, TextProblem,
};
use rayon::prelude::*;

/// Blocks of about this size are read at a time; a smaller file is one block.
pub const BLOCK_BYTES: usize = 8 << 20;

/// A file-wide problem, by precedence: the one a whole read reports is the one that comes
/// first in this order, then in the file.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum FileProblem {
    ByteOrderMark,
    NotUtf8(TextProblem),
    CarriageReturn(TextProblem),
    ConflictMarker(u32),
}

/// The state of one file's read.
pub struct JsonLinesStream<'a> {
    path: &'a str,
    detail: CaseDetail,
    /// The start of a line that the blocks so far have not finished.
    pending: Vec<u8>,
    /// The number of the next line to parse.
    next_line: u32,
    started: bool,
    parts: Vec<ParsedCaseFile>,
    problem: Option<FileProblem>,
    /// The file's bytes while they are few enough to be a Git LFS pointer, and how many
    /// it has.
    head: Vec<u8>,
    length: usize,
}

impl<'a> JsonLinesStream<'a> {
    pub fn new(path: &'a str, detail: CaseDetail) -> Self {
        JsonLinesStream {
            path,
            detail,
            pending: Vec::new(),
            next_line: 1,
            started: false,
            parts: Vec::new(),
            problem: None,
            head: Vec::new(),
            length: 0,
        }
    }

    /// The file's next bytes.
    pub fn push(&mut self, block: &[u8]) {
        // Only a file that is still short enough to be a pointer is kept: a large one's
        // first block is already too long, and nothing is copied.
        self.length = self.length.saturating_add(block.len());
        match self.length < POINTER_MAX_BYTES {
            true => self.head.extend_from_slice(block),
            false => self.head = Vec::new(),
        }
        if !self.started && !block.is_empty() {
            // The mark's three bytes may come in more than one block.
            if self.pending.len() + block.len() < 3 {
                self.pending.extend_from_slice(block);
                return;
            }
            self.started = true;
            let mut start = self.pending.clone();
            start.extend_from_slice(&block[..block.len().min(3)]);
            if starts_with_byte_order_mark(&start) {
                self.problem = Some(FileProblem::ByteOrderMark);
            }
        }
        let Some(last_newline) = memchr::memrchr(b'\n', block) else {
            self.pending.extend_from_slice(block);
            return;
        };
        let mut rest = &block[..=last_newline];
        if !self.pending.is_empty() {
            // The line the earlier blocks began, finished by this one.
            let end = memchr::memchr(b'\n', rest).map_or(rest.len(), |newline| newline + 1);
            let mut line = std::mem::take(&mut self.pending);
            line.extend_from_slice(&rest[..end]);
            self.parse(&line);
            rest = &rest[end..];
        }
        self.parse(rest);
        self.pending.extend_from_slice(&block[last_newline + 1..]);
    }

    /// What the file yielded: its cases in parts, or the one problem that stands for it.
    pub fn finish(mut self) -> Vec<ParsedCaseFile> {
        if self.length < POINTER_MAX_BYTES {
            if let Some(pointer) = CaseProblem::of_lfs_pointer(self.path, &self.head) {
                return vec![pointer];
            }
        }
        if !self.started && starts_with_byte_order_mark(&self.pending) {
            self.problem = Some(FileProblem::ByteOrderMark);
        }
        let last = std::mem::take(&mut self.pending);
        self.parse(&last);
        let Some(problem) = self.problem else {
            return self.parts;
        };
        let (line, column, message) = match problem {
            FileProblem::ByteOrderMark => byte_order_mark_problem(),
            FileProblem::NotUtf8(problem) | FileProblem::CarriageReturn(problem) => problem,
            FileProblem::ConflictMarker(line) => (line, 1, CONFLICT_MESSAGE.into()),
        };
        let problem = CaseProblem {
            kind: ProblemKind::Malformed,
            file: self.path.to_owned(),
            line,
            column,
            message,
        };
        vec![ParsedCaseFile {
            cases: Vec::new(),
            problems: vec![problem],
        }]
    }

    /// Parses whole lines (the last may lack its newline, at the end of the file), unless
    /// a problem already stands for the file: then only looks for one that comes before it.
    /// The lines are checked and parsed in chunks side by side (checked one block at a
    /// time before its parse, a 156 MiB file left a core idle for a tenth of its check).
    fn parse(&mut self, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        let first_line = self.next_line;
        let lines = memchr::memchr_iter(b'\n', bytes).count();
        self.next_line = first_line.saturating_add(u32::try_from(lines).unwrap_or(u32::MAX));
        let (path, detail) = (self.path, self.detail);
        let check_only = self.problem.is_some();
        let chunks = byte_line_chunks(bytes, first_line, chunk_target(bytes.len()));
        let read: Vec<Result<Option<ParsedCaseFile>, FileProblem>> = chunks
            .par_iter()
            .map(|&(first_line, chunk)| read_chunk(path, first_line, chunk, detail, check_only))
            .collect();
        // In file order: the first problem of the highest precedence wins.
        for chunk in read {
            match chunk {
                Err(problem) => self.found(problem),
                Ok(Some(part)) if self.problem.is_none() => self.parts.push(part),
                Ok(_) => {}
            }
        }
    }

    fn found(&mut self, problem: FileProblem) {
        if self.problem.as_ref().is_none_or(|found| problem < *found) {
            self.problem = Some(problem);
            self.parts.clear();
        }
    }
}

/// One chunk of whole lines, whose first line is `first_line` of the file: its cases, or
/// the file-wide problem it holds (`check_only`: only the problem).
fn read_chunk(
    path: &str,
    first_line: u32,
    chunk: &[u8],
    detail: CaseDetail,
    check_only: bool,
) -> Result<Option<ParsedCaseFile>, FileProblem> {
    // Where a problem is in the file, from where it is in `chunk`.
    let in_file = |(line, column, message): TextProblem| {
        (first_line.saturating_add(line - 1), column, message)
    };
    let text = require_utf8(chunk).map_err(|problem| FileProblem::NotUtf8(in_file(problem)))?;
    if let Some(problem) = crlf_problem(text) {
        return Err(FileProblem::CarriageReturn(in_file(problem)));
    }
    if check_only {
        return Ok(None);
    }
    parse_chunk(path, first_line, text, detail)
        .map(Some)
        .map_err(|ConflictMarker(line)| FileProblem::ConflictMarker(line))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cases::identity::Identity;
    use crate::cases::parse_case_file_in_parts;

    /// The file read in blocks of `block` bytes.
    fn streamed(bytes: &[u8], block: usize, detail: CaseDetail) -> ParsedCaseFile {
        let mut stream = JsonLinesStream::new("evals/a.jsonl", detail);
        for piece in bytes.chunks(block) {
            stream.push(piece);
        }
        ParsedCaseFile::joined(stream.finish())
    }

    fn whole(bytes: &[u8], detail: CaseDetail) -> ParsedCaseFile {
        ParsedCaseFile::joined(parse_case_file_in_parts(
            "evals/a.jsonl",
            bytes,
            detail,
            &Identity::Member,
            None,
        ))
    }

    /// Whatever the blocks, the same cases, or the same one problem, as the whole text
    /// gives: every file-wide problem wherever it falls, and the one of them that wins.
    #[test]
    fn blocks_read_as_the_whole_text_reads() {
        let case = |id: &str| {
            format!("{{\"id\": \"{id}\", \"input\": \"caf\u{e9} \u{1f642}\", \"expect\": {{\"must_include\": [\"x\"]}}}}\n")
        };
        let cases: String = (0..40).map(|number| case(&format!("c{number}"))).collect();
        let mut texts: Vec<Vec<u8>> = vec![
            Vec::new(),
            b"\n\n".to_vec(),
            cases.clone().into_bytes(),
            cases.trim_end().as_bytes().to_vec(),
            format!("\n{cases}\n\n").into_bytes(),
            format!("{cases}{{\"id\": broken\n{}", case("after")).into_bytes(),
            format!("\u{feff}{cases}").into_bytes(),
            b"\xEF\xBB".to_vec(),
            format!("{cases}<<<<<<< HEAD\n{}=======\n>>>>>>> other\n", case("x")).into_bytes(),
            format!("{cases}x\r\ny\n").into_bytes(),
        ];
        let mut invalid = cases.clone().into_bytes();
        invalid.splice(700..700, [0xC3, b'(']);
        texts.push(invalid.clone());
        // Problems of lower precedence first in the file: the higher one still wins.
        let mut crlf_then_invalid = format!("a\r\n{cases}").into_bytes();
        crlf_then_invalid.extend_from_slice(&[0xFF, b'\n']);
        texts.push(crlf_then_invalid);
        texts.push(format!("<<<<<<< HEAD\n{cases}z\r\n").into_bytes());
        let mut marker_then_invalid = format!("{cases}>>>>>>> x\n").into_bytes();
        marker_then_invalid.extend_from_slice(&invalid);
        texts.push(marker_then_invalid);
        // And higher ones first: a later problem of lower precedence changes nothing, nor
        // does a second one of the same kind.
        let mut invalid_then_crlf = invalid.clone();
        invalid_then_crlf.extend_from_slice(b"q\r\n<<<<<<< x\n");
        invalid_then_crlf.extend_from_slice(&invalid);
        texts.push(invalid_then_crlf);
        texts.push(format!("{cases}x\r\n{cases}<<<<<<< x\ny\r\n").into_bytes());
        texts.push(format!("\u{feff}{cases}x\r\n").into_bytes());
        // A Git LFS pointer is one problem however it comes; a longer file that starts
        // like one is read as lines.
        let pointer = "version https://git-lfs.github.com/spec/v1\noid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\nsize 12345\n";
        texts.push(pointer.as_bytes().to_vec());
        texts.push(format!("{pointer}{cases}").into_bytes());
        for text in &texts {
            for detail in [CaseDetail::Summary, CaseDetail::Full] {
                let expected = whole(text, detail);
                for block in [1, 2, 3, 5, 64, 997, 1 << 20] {
                    assert_eq!(
                        streamed(text, block, detail),
                        expected,
                        "{:?} in blocks of {block}",
                        String::from_utf8_lossy(text)
                    );
                }
            }
        }
        let kinds = |text: &[u8]| -> Vec<ProblemKind> {
            whole(text, CaseDetail::Summary)
                .problems
                .iter()
                .map(|problem| problem.kind)
                .collect()
        };
        assert_eq!(kinds(pointer.as_bytes()), [ProblemKind::LfsPointer]);
        assert!(!kinds(format!("{pointer}{cases}").as_bytes()).contains(&ProblemKind::LfsPointer));
    }
}
