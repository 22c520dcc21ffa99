//! A zlib stream (a pack entry's data, a loose object's file) inflated in order, with a
//! window of what was inflated last kept for copies that step back a little: the root of an
//! [`super::object_stream::ObjectStream`] that is never held whole.

use super::delta_ops::malformed;
use std::fs::File;
use std::io::{self, BufReader, Read};

/// How far behind the furthest byte asked for the window reaches.
pub(super) const KEEP: u64 = 1 << 20;

/// How much is inflated at a time.
const CHUNK: usize = 1 << 16;

/// A zlib stream inflated in order, with a window of what was inflated last.
pub(super) struct Inflating {
    input: BufReader<FileAt>,
    /// Where the stream starts in its file.
    origin: u64,
    state: gix::zlib::Decompress,
    /// Inflated bytes, the first at `start` in the inflated stream.
    window: Vec<u8>,
    start: u64,
    /// The bytes before the root's first in the inflated stream (a loose object's header).
    skip: u64,
    /// Whether nothing is dropped from the window.
    keep_all: bool,
}

impl Inflating {
    /// The zlib stream starting at `offset` of `file`.
    pub(super) fn at(file: File, offset: u64) -> Inflating {
        Inflating {
            input: BufReader::with_capacity(
                CHUNK,
                FileAt {
                    file,
                    position: offset,
                },
            ),
            origin: offset,
            state: gix::zlib::Decompress::new(),
            window: Vec::new(),
            start: 0,
            skip: 0,
            keep_all: false,
        }
    }

    /// A loose object's file, with the size its header gives when it is a blob's.
    pub(super) fn loose_blob(file: File) -> Option<(Inflating, u64)> {
        const LONGEST_HEADER: u64 = 32;
        let mut inflating = Inflating::at(file, 0);
        inflating.fill_to(LONGEST_HEADER).ok()?;
        let head = &inflating.window;
        let end = head.iter().position(|byte| *byte == 0)?;
        let size = std::str::from_utf8(head[..end].strip_prefix(b"blob ")?)
            .ok()?
            .parse()
            .ok()?;
        inflating.skip = end as u64 + 1;
        Some((inflating, size))
    }

    /// Another reader of the same stream, from its start.
    pub(super) fn again(&self) -> io::Result<Inflating> {
        let file = self.input.get_ref().file.try_clone()?;
        Ok(Inflating {
            skip: self.skip,
            ..Inflating::at(file, self.origin)
        })
    }

    /// The root's `size` bytes, inflated whole.
    pub(super) fn into_whole(mut self, size: u64) -> io::Result<Vec<u8>> {
        const LARGEST: u64 = 1 << 30;
        let end = self.skip + size;
        if self.start != 0 || end > LARGEST {
            return Err(malformed("the base cannot be read whole"));
        }
        self.window
            .reserve_exact((end as usize + CHUNK).saturating_sub(self.window.len()));
        self.keep_all = true;
        if !self.fill_to(end)? {
            return Err(malformed("the base ends before its size"));
        }
        let mut bytes = self.window;
        bytes.truncate(end as usize);
        bytes.drain(..self.skip as usize);
        Ok(bytes)
    }

    pub(super) fn read_at(&mut self, offset: u64, out: &mut [u8]) -> io::Result<()> {
        let offset = offset + self.skip;
        if offset < self.start {
            return Err(malformed("a copy goes back further than the window kept"));
        }
        let end = offset + out.len() as u64;
        if !self.fill_to(end)? || self.start + (self.window.len() as u64) < end {
            return Err(malformed("a copy reaches past the end of its base"));
        }
        let from = (offset - self.start) as usize;
        out.copy_from_slice(&self.window[from..from + out.len()]);
        Ok(())
    }

    /// Inflates until the window reaches `end`, dropping what lies more than [`KEEP`]
    /// bytes behind it; false when the stream ends first.
    fn fill_to(&mut self, end: u64) -> io::Result<bool> {
        while self.start + (self.window.len() as u64) < end {
            let behind = end.saturating_sub(self.start).saturating_sub(KEEP);
            if behind > KEEP && !self.keep_all {
                let dropped = behind.min(self.window.len() as u64);
                self.window.drain(..dropped as usize);
                self.start += dropped;
            }
            let filled = self.window.len();
            self.window.resize(filled + CHUNK, 0);
            let written = self.inflate_into(filled);
            let count = match &written {
                Ok(Some(count)) => *count,
                _ => 0,
            };
            self.window.truncate(filled + count);
            if written?.is_none() {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// One step of the inflater into the window from `filled` on: the bytes it wrote, or
    /// `None` when it can go no further (the stream's end, or input that makes no
    /// progress, which a corrupt stream may; gix's own reader treats that as a bug).
    fn inflate_into(&mut self, filled: usize) -> io::Result<Option<usize>> {
        use io::BufRead;
        loop {
            let input = self.input.fill_buf()?;
            let flush = match input.is_empty() {
                true => gix::zlib::FlushDecompress::Finish,
                false => gix::zlib::FlushDecompress::None,
            };
            let (before_in, before_out) = (self.state.total_in(), self.state.total_out());
            let status = self
                .state
                .decompress(input, &mut self.window[filled..], flush)
                .map_err(|error| io::Error::new(io::ErrorKind::InvalidData, error.to_string()))?;
            let consumed = (self.state.total_in() - before_in) as usize;
            let written = (self.state.total_out() - before_out) as usize;
            self.input.consume(consumed);
            if written > 0 {
                return Ok(Some(written));
            }
            if consumed == 0 || status == gix::zlib::Status::StreamEnd {
                return Ok(None);
            }
        }
    }
}

/// A file read from a position on, with positioned reads.
struct FileAt {
    file: File,
    position: u64,
}

impl Read for FileAt {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let read = super::packs::read_at(&self.file, out, self.position)
            .ok_or_else(|| io::Error::other("cannot read the object's file"))?;
        self.position += read as u64;
        Ok(read)
    }
}
