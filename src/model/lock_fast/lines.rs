//! The lock's lines, streamed block by block and each tagged with the section it belongs
//! to: the lock is never held whole.

use std::io::Read;

/// How much of the lock is read at a time.
pub(super) const READ_BUFFER: usize = 1 << 16;

/// The part of the lock a line belongs to; each starts at its first table header.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Section {
    Suites,
    Graders,
    Cases,
    Skills,
}

/// One line of the lock.
pub(super) struct Line<'a> {
    /// The line without its newline.
    pub(super) text: &'a str,
    /// Whether a newline ends it (every line but perhaps the last).
    pub(super) newline: bool,
    pub(super) section: Section,
}

/// The lines of the lock, one at a time, each with the section it belongs to.
///
/// The file is read in blocks; the whole lines of each block are validated as UTF-8 at
/// once and kept as text, from which lines are borrowed (a newline never falls inside a
/// UTF-8 sequence, so every cut at one is a character boundary).
pub(super) struct Lines<R> {
    input: R,
    /// Whole lines of the file, validated, newlines included (the last line of the file
    /// may lack its newline).
    text: String,
    /// Where the next line starts in `text`.
    position: usize,
    /// Bytes read after the last newline: the start of a line still being read.
    partial: Vec<u8>,
    section: Section,
    /// Reading failed (I/O, invalid UTF-8): the lines ended early.
    pub(super) failed: bool,
}

impl<R: Read> Lines<R> {
    pub(super) fn new(input: R) -> Self {
        Lines {
            input,
            text: String::new(),
            position: 0,
            partial: Vec::new(),
            section: Section::Suites,
            failed: false,
        }
    }

    pub(super) fn next_line(&mut self) -> Option<Line<'_>> {
        if self.position == self.text.len() && !self.refill() {
            return None;
        }
        let rest = &self.text.as_bytes()[self.position..];
        let (length, newline) = match memchr::memchr(b'\n', rest) {
            Some(at) => (at, true),
            None => (rest.len(), false),
        };
        let start = self.position;
        self.position += length + usize::from(newline);
        let text = &self.text[start..start + length];
        self.section = match self.section {
            Section::Suites if text.starts_with("[grader.") => Section::Graders,
            Section::Suites | Section::Graders if text.starts_with("[case.") => Section::Cases,
            _ if text.starts_with("[skill.") => Section::Skills,
            current => current,
        };
        Some(Line {
            text,
            newline,
            section: self.section,
        })
    }

    /// The next block's whole lines into `text`; false at the end or on an error (then
    /// `failed`).
    fn refill(&mut self) -> bool {
        self.text.clear();
        self.position = 0;
        loop {
            let start = self.partial.len();
            let mut block = (&mut self.input).take(READ_BUFFER as u64);
            let read = match block.read_to_end(&mut self.partial) {
                Ok(read) => read,
                Err(_) => {
                    self.failed = true;
                    return false;
                }
            };
            let whole = match read {
                // The end of the file: what is left is its last line.
                0 => self.partial.len(),
                _ => match memchr::memrchr(b'\n', &self.partial[start..]) {
                    Some(newline) => start + newline + 1,
                    None => continue,
                },
            };
            if whole == 0 {
                return false;
            }
            match simdutf8::basic::from_utf8(&self.partial[..whole]) {
                Ok(lines) => self.text.push_str(lines),
                Err(_) => {
                    self.failed = true;
                    return false;
                }
            }
            self.partial.drain(..whole);
            return true;
        }
    }
}
