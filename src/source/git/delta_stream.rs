//! An object stored in a pack as a delta of another, rebuilt as a stream from a file that
//! holds the other object's bytes (the working tree's copy of it), and proved to be the
//! object by its id.
//!
//! `check --base` reads the base's lock when a pull request changed it. In a CI checkout
//! the older lock is stored as a delta of the newer one, and the object database resolves
//! a delta with both texts in memory: 63 MiB for a 31.6 MiB lock, before anything else of
//! the check is loaded. The newer lock is usually the working tree's, byte for byte (the
//! index vouches for it), and a lock's delta is a few kilobytes: the base's lock is then
//! streamed, copying from the working tree's file what the delta copies from its base.
//! Whatever is read is hashed as git hashes a blob; a reader whose bytes are not the
//! object's is refused at its end, so nothing read from it can be taken for the object.

use std::fs::File;
use std::io::{self, Read};

/// The object a delta rebuilds from the file holding its base, as a stream.
pub struct DeltaReader {
    base: File,
    /// The delta's instructions, after its two sizes.
    delta: Vec<u8>,
    /// The next instruction.
    position: usize,
    pending: Pending,
    size: u64,
    produced: u64,
    hasher: gix::hash::Hasher,
}

/// What the instruction being carried out has still to produce.
enum Pending {
    None,
    /// Bytes of the base at this offset.
    Copy {
        offset: u64,
        left: u64,
    },
    /// Bytes of the delta itself, from this position.
    Insert {
        start: usize,
        left: usize,
    },
}

impl DeltaReader {
    /// A reader of the object `delta` rebuilds from `base`; `None` unless `delta` starts
    /// with the sizes of a base as long as the file and of a result.
    pub(super) fn new(base: File, delta: Vec<u8>, hash: gix::hash::Kind) -> Option<DeltaReader> {
        let (base_size, base_bytes) = super::pack_sizes::delta_size(&delta)?;
        let (size, size_bytes) = super::pack_sizes::delta_size(&delta[base_bytes..])?;
        if base.metadata().ok()?.len() != base_size {
            return None;
        }
        let mut hasher = gix::hash::hasher(hash);
        hasher.update(format!("blob {size}\0").as_bytes());
        Some(DeltaReader {
            base,
            position: base_bytes + size_bytes,
            delta,
            pending: Pending::None,
            size,
            produced: 0,
            hasher,
        })
    }

    /// Whether everything read was exactly the object `id`: all of it, and hashing to it.
    pub fn is_object(self, id: &gix::oid) -> bool {
        self.produced == self.size
            && matches!(self.pending, Pending::None)
            && self.position == self.delta.len()
            && self
                .hasher
                .try_finalize()
                .is_ok_and(|hashed| hashed.as_ref() == id)
    }

    /// Decodes the next instruction into `pending`; false at the end of the delta.
    fn next_instruction(&mut self) -> io::Result<bool> {
        let Some(&command) = self.delta.get(self.position) else {
            return Ok(false);
        };
        self.position += 1;
        self.pending = if command & 0x80 != 0 {
            // Copy: which of four offset bytes and three size bytes follow, by the bits set.
            let mut offset = 0u64;
            let mut left = 0u64;
            for (bit, shift) in (0..4).map(|byte| (1 << byte, 8 * byte)) {
                if command & bit != 0 {
                    offset |= u64::from(self.take_byte()?) << shift;
                }
            }
            for (bit, shift) in (0..3).map(|byte| (0x10 << byte, 8 * byte)) {
                if command & bit != 0 {
                    left |= u64::from(self.take_byte()?) << shift;
                }
            }
            if left == 0 {
                left = 0x10000;
            }
            Pending::Copy { offset, left }
        } else if command != 0 {
            let left = usize::from(command);
            if self.position + left > self.delta.len() {
                return Err(malformed("an insertion runs past the end of the delta"));
            }
            let start = self.position;
            self.position += left;
            Pending::Insert { start, left }
        } else {
            return Err(malformed("a reserved instruction"));
        };
        Ok(true)
    }

    fn take_byte(&mut self) -> io::Result<u8> {
        let byte = self.delta.get(self.position).copied();
        self.position += 1;
        byte.ok_or_else(|| malformed("a copy instruction is cut short"))
    }
}

impl Read for DeltaReader {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if out.is_empty() {
            return Ok(0);
        }
        loop {
            let written = match &mut self.pending {
                Pending::Copy { offset, left } if *left > 0 => {
                    let count = out.len().min(usize::try_from(*left).unwrap_or(usize::MAX));
                    read_exact_at(&self.base, &mut out[..count], *offset)?;
                    *offset += count as u64;
                    *left -= count as u64;
                    count
                }
                Pending::Insert { start, left } if *left > 0 => {
                    let count = out.len().min(*left);
                    out[..count].copy_from_slice(&self.delta[*start..*start + count]);
                    *start += count;
                    *left -= count;
                    count
                }
                _ => {
                    self.pending = Pending::None;
                    if !self.next_instruction()? {
                        return Ok(0);
                    }
                    continue;
                }
            };
            self.produced += written as u64;
            if self.produced > self.size {
                return Err(malformed("the delta yields more than its size"));
            }
            self.hasher.update(&out[..written]);
            return Ok(written);
        }
    }
}

fn malformed(what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("malformed delta: {what}"),
    )
}

/// Fills `buffer` from `file` at `offset`; an error when the file ends first.
fn read_exact_at(file: &File, buffer: &mut [u8], offset: u64) -> io::Result<()> {
    match super::pack_sizes::read_at(file, buffer, offset) {
        Some(read) if read == buffer.len() => Ok(()),
        _ => Err(malformed("a copy reaches past the end of its base")),
    }
}
