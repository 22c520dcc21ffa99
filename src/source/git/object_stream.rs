//! An object read as a stream, without holding it whole: a delta chain folded into one
//! delta of its root (see [`super::delta_ops`]), applied to the root's bytes as they are
//! needed, and proved to be the object by its id.
//!
//! `check --base` reads the base's lock when a pull request changed it. The object database
//! rebuilds a delta with its base and its result in memory, 63 MiB for a 31.6 MiB lock,
//! and a whole object inflated at once. Here the root is read from a file holding its bytes
//! (the working tree's lock, when the index vouches that it is the root), or inflated from
//! its pack entry or loose file in order, with only a window kept behind: a lock's delta
//! copies its base's lines in order, but for a few short copies from anywhere, which are
//! read first. A delta whose long copies go back past the window has its root inflated
//! whole (half what git holds for it). Whatever is read is hashed as git hashes a blob; a
//! stream whose bytes are not the object's is refused at its end, so nothing read from it
//! can be taken for the object.

use super::delta_ops::{malformed, Delta, Op};
use super::inflating::{Inflating, KEEP};
use std::fs::File;
use std::io::{self, Read};

/// The object a delta rebuilds from its root, as a stream.
pub struct ObjectStream {
    delta: Delta,
    /// The next instruction.
    next: usize,
    /// What the instruction being carried out has still to produce.
    pending: Option<Op>,
    root: Root,
    produced: u64,
    hasher: gix::hash::Hasher,
}

/// Where the bytes a delta copies come from.
pub(super) enum Root {
    /// A file holding them, read wherever the delta copies from.
    File(File),
    /// A zlib stream inflated in order.
    Inflating(Box<Inflating>),
    /// The bytes themselves, for a delta that copies in no order a window can follow.
    Memory(Vec<u8>),
}

impl ObjectStream {
    /// The blob `delta` rebuilds from `root`, which holds `root_size` bytes; `None` when
    /// the delta applies to a base of another size.
    pub(super) fn new(
        root: Root,
        root_size: u64,
        mut delta: Delta,
        hash: gix::hash::Kind,
    ) -> Option<ObjectStream> {
        if delta.base_size != root_size {
            return None;
        }
        let root = match root {
            Root::File(file) if file.metadata().ok()?.len() != root_size => return None,
            Root::Memory(bytes) if bytes.len() as u64 != root_size => return None,
            Root::Inflating(inflating) => {
                if take_strays(&mut delta, &inflating).ok()? {
                    Root::Inflating(inflating)
                } else {
                    Root::Memory((*inflating).into_whole(root_size).ok()?)
                }
            }
            root => root,
        };
        let mut hasher = gix::hash::hasher(hash);
        hasher.update(format!("blob {}\0", delta.size).as_bytes());
        Some(ObjectStream {
            delta,
            next: 0,
            pending: None,
            root,
            produced: 0,
            hasher,
        })
    }

    /// Where the bytes come from, for `check --verbose`.
    pub fn origin(&self) -> &'static str {
        match self.root {
            Root::File(_) => "from the working tree's file, through the delta chain from it",
            Root::Inflating(_) => "from git's objects, inflated in order with 1 MiB kept behind",
            Root::Memory(_) => "through its delta chain, from a root inflated whole",
        }
    }

    /// Whether everything read was exactly the object `id`: all of it, and hashing to it.
    pub fn is_object(self, id: &gix::oid) -> bool {
        self.produced == self.delta.size
            && self.pending.is_none()
            && self.next == self.delta.ops.len()
            && self
                .hasher
                .try_finalize()
                .is_ok_and(|hashed| hashed.as_ref() == id)
    }
}

impl Read for ObjectStream {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if out.is_empty() {
            return Ok(0);
        }
        let op = match self.pending.take() {
            Some(op) => op,
            None => match self.delta.ops.get(self.next) {
                Some(op) => {
                    self.next += 1;
                    *op
                }
                None => return Ok(0),
            },
        };
        let (written, rest) = match op {
            Op::Copy { offset, len } => {
                // At most a window's length: all of it is then still in the window.
                let count = out
                    .len()
                    .min(usize::try_from(len).unwrap_or(usize::MAX))
                    .min(KEEP as usize);
                self.root.read_at(offset, &mut out[..count])?;
                let rest = Op::Copy {
                    offset: offset + count as u64,
                    len: len - count as u64,
                };
                (count, rest)
            }
            Op::Insert { start, len } => {
                let count = out.len().min(len);
                out[..count].copy_from_slice(&self.delta.inserted[start..start + count]);
                let rest = Op::Insert {
                    start: start + count,
                    len: len - count,
                };
                (count, rest)
            }
        };
        if !matches!(rest, Op::Copy { len: 0, .. } | Op::Insert { len: 0, .. }) {
            self.pending = Some(rest);
        }
        self.produced += written as u64;
        self.hasher.update(&out[..written]);
        Ok(written)
    }
}

impl Root {
    /// Fills `out` with the root's bytes at `offset`.
    fn read_at(&mut self, offset: u64, out: &mut [u8]) -> io::Result<()> {
        match self {
            Root::File(file) => match super::packs::read_at(file, out, offset) {
                Some(read) if read == out.len() => Ok(()),
                _ => Err(malformed("a copy reaches past the end of its base")),
            },
            Root::Inflating(inflating) => inflating.read_at(offset, out),
            Root::Memory(bytes) => {
                let from = usize::try_from(offset).unwrap_or(usize::MAX);
                let bytes = from
                    .checked_add(out.len())
                    .and_then(|end| bytes.get(from..end))
                    .ok_or_else(|| malformed("a copy reaches past the end of its base"))?;
                out.copy_from_slice(bytes);
                Ok(())
            }
        }
    }
}

/// A copy at most this long, from outside the window around the copies before it, is a
/// stray: git matches a few bytes wherever it finds them (a digest's prefix, say).
const STRAY: u64 = 4096;

/// The most bytes strays may copy in all.
const MAX_STRAYS: u64 = 1 << 20;

/// Reads the bytes the stray copies of `delta` take from `root`, in a pass of their own
/// over a second reader of the root, and makes each an insertion of them: what is left
/// copies in order, within the window. False, with `delta` unchanged, when a longer copy
/// goes back further than the window or the strays copy more than [`MAX_STRAYS`] bytes:
/// the root is then needed whole.
fn take_strays(delta: &mut Delta, root: &Inflating) -> io::Result<bool> {
    let mut reached = 0u64;
    let mut strays = Vec::new();
    for (index, op) in delta.ops.iter().enumerate() {
        let Op::Copy { offset, len } = *op else {
            continue;
        };
        let behind = offset + KEEP < reached;
        if len <= STRAY && (behind || offset > reached + KEEP) {
            strays.push((offset, len, index));
        } else if behind {
            return Ok(false);
        } else {
            reached = reached.max(offset + len);
        }
    }
    if strays.is_empty() {
        return Ok(true);
    }
    if strays.iter().map(|(_, len, _)| len).sum::<u64>() > MAX_STRAYS {
        return Ok(false);
    }
    strays.sort_unstable();
    let mut pass = root.again()?;
    for (offset, len, index) in strays {
        let start = delta.inserted.len();
        delta.inserted.resize(start + len as usize, 0);
        pass.read_at(offset, &mut delta.inserted[start..])?;
        delta.ops[index] = Op::Insert {
            start,
            len: len as usize,
        };
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    /// A blob of `size` bytes written loose into a new repository, with its id and the
    /// file that holds it.
    fn loose_blob(size: usize) -> (tempfile::TempDir, Vec<u8>, gix::ObjectId, File) {
        let folder = tempfile::tempdir().expect("temporary folder");
        let git = |args: &[&str]| {
            let output = Command::new("git")
                .args(args)
                .current_dir(folder.path())
                .output()
                .expect("git runs");
            assert!(output.status.success(), "git {args:?}: {output:?}");
            String::from_utf8(output.stdout).expect("UTF-8")
        };
        git(&["init", "-q"]);
        // Bytes that do not repeat, so zlib cannot shrink them to nothing.
        let mut state = 0x9e37_79b9_u32;
        let bytes: Vec<u8> = (0..size)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 17;
                state ^= state << 5;
                (state >> 24) as u8
            })
            .collect();
        std::fs::write(folder.path().join("blob"), &bytes).expect("write");
        let id = git(&["hash-object", "-w", "blob"]);
        let id = gix::ObjectId::from_hex(id.trim().as_bytes()).expect("id");
        let hex = id.to_string();
        let path = folder
            .path()
            .join(".git/objects")
            .join(&hex[..2])
            .join(&hex[2..]);
        let file = File::open(path).expect("the loose object");
        (folder, bytes, id, file)
    }

    fn stream(file: File, ops: Vec<Op>, size: u64) -> ObjectStream {
        let (inflating, root_size) = Inflating::loose_blob(file).expect("a loose blob");
        let delta = Delta {
            base_size: root_size,
            size,
            ops,
            inserted: b"inserted".to_vec(),
        };
        ObjectStream::new(
            Root::Inflating(Box::new(inflating)),
            root_size,
            delta,
            gix::hash::Kind::Sha1,
        )
        .expect("sizes agree")
    }

    #[test]
    fn a_loose_blob_streams_whole_and_is_its_object() {
        for size in [0, 1, 40, 3 << 20] {
            let (_folder, bytes, id, file) = loose_blob(size);
            let (inflating, root_size) = Inflating::loose_blob(file).expect("a loose blob");
            assert_eq!(root_size, size as u64);
            let whole = Delta::whole(root_size);
            let mut reader = ObjectStream::new(
                Root::Inflating(Box::new(inflating)),
                root_size,
                whole,
                gix::hash::Kind::Sha1,
            )
            .expect("sizes agree");
            let mut read = Vec::new();
            reader.read_to_end(&mut read).expect("inflated");
            assert_eq!(read, bytes);
            assert!(reader.is_object(&id), "{size} bytes");
        }
    }

    /// Copies in order, skipping ahead and stepping back less than the window: read
    /// through the window. A long copy further back than the window: read from the root
    /// inflated whole.
    #[test]
    fn copies_step_back_within_the_window_or_read_the_root_whole() {
        let size = 5 << 20;
        let (_folder, bytes, _, file) = loose_blob(size);
        // Longer than strays, which are read first (see the next test).
        let long = 2 * STRAY as usize;
        let ahead = 3 << 20;
        let half_back = ahead - (KEEP as usize / 2);
        let in_order = vec![
            Op::Copy { offset: 10, len: 5 },
            Op::Insert { start: 0, len: 8 },
            Op::Copy {
                offset: ahead as u64,
                len: long as u64,
            },
            Op::Copy {
                offset: half_back as u64,
                len: long as u64,
            },
        ];
        let mut reader = stream(file, in_order, 13 + 2 * long as u64);
        let mut read = Vec::new();
        reader.read_to_end(&mut read).expect("in order");
        let expected = [
            &bytes[10..15],
            b"inserted",
            &bytes[ahead..ahead + long],
            &bytes[half_back..half_back + long],
        ]
        .concat();
        assert_eq!(read, expected);

        // Longer than strays, which are read first (see the next test): the root is then
        // read whole, as git would.
        let (_folder, bytes, _, file) = loose_blob(size);
        let back = [(4 << 20, long), (0, long)];
        let too_far_back = back
            .iter()
            .map(|&(offset, len)| Op::Copy {
                offset: offset as u64,
                len: len as u64,
            })
            .collect();
        let mut reader = stream(file, too_far_back, 2 * long as u64);
        assert!(matches!(reader.root, Root::Memory(_)));
        let mut read = Vec::new();
        reader.read_to_end(&mut read).expect("read whole");
        let expected = [&bytes[4 << 20..(4 << 20) + long], &bytes[..long]].concat();
        assert_eq!(read, expected);
    }

    /// A short copy from far ahead or far behind the copies around it is read in a pass
    /// of its own; with more than a mebibyte of them, the root is read whole.
    #[test]
    fn short_copies_out_of_order_are_read_first() {
        let size = 5 << 20;
        let (_folder, bytes, _, file) = loose_blob(size);
        let far: usize = 4 << 20;
        let strays = vec![
            Op::Copy {
                offset: 0,
                len: 100,
            },
            Op::Copy {
                offset: far as u64,
                len: 32,
            },
            Op::Copy {
                offset: 100,
                len: 100,
            },
            Op::Copy {
                offset: far as u64 + 10,
                len: 20,
            },
            Op::Copy {
                offset: 3 << 20,
                len: 50,
            },
            Op::Copy { offset: 7, len: 9 },
        ];
        let mut reader = stream(file, strays, 311);
        let mut read = Vec::new();
        reader.read_to_end(&mut read).expect("strays read first");
        let expected = [
            &bytes[..100],
            &bytes[far..far + 32],
            &bytes[100..200],
            &bytes[far + 10..far + 30],
            &bytes[3 << 20..(3 << 20) + 50],
            &bytes[7..16],
        ]
        .concat();
        assert_eq!(read, expected);

        let (_folder, bytes, _, file) = loose_blob(size);
        let offsets = (0..600).map(|step| if step % 2 == 0 { 0 } else { far });
        let long_and_far = offsets
            .clone()
            .map(|offset| Op::Copy {
                offset: offset as u64,
                len: STRAY,
            })
            .collect();
        let mut reader = stream(file, long_and_far, 600 * STRAY);
        assert!(
            matches!(reader.root, Root::Memory(_)),
            "more than a mebibyte out of order: read whole"
        );
        let mut read = Vec::new();
        reader.read_to_end(&mut read).expect("read whole");
        let stray = STRAY as usize;
        let expected: Vec<u8> = offsets
            .flat_map(|offset| bytes[offset..offset + stray].to_vec())
            .collect();
        assert_eq!(read, expected);
    }

    /// A loose object cut short or with bytes changed in its compressed stream reads as an
    /// error or as other bytes than the object, never as the object, and never panics.
    #[test]
    fn a_damaged_stream_is_never_taken_for_its_object() {
        let (folder, _, id, mut file) = loose_blob(200_000);
        let mut compressed = Vec::new();
        file.read_to_end(&mut compressed).expect("read");
        let damaged_path = folder.path().join("damaged");
        let mut damages = vec![compressed[..compressed.len() / 2].to_vec()];
        for at in [2, 40, compressed.len() / 3, compressed.len() - 3] {
            let mut flipped = compressed.clone();
            flipped[at] ^= 0x5a;
            damages.push(flipped);
        }
        for (number, damaged) in damages.into_iter().enumerate() {
            std::fs::write(&damaged_path, damaged).expect("write");
            let file = File::open(&damaged_path).expect("open");
            let Some((inflating, size)) = Inflating::loose_blob(file) else {
                continue;
            };
            let root = Root::Inflating(Box::new(inflating));
            let Some(mut reader) =
                ObjectStream::new(root, size, Delta::whole(size), gix::hash::Kind::Sha1)
            else {
                continue;
            };
            let read = reader.read_to_end(&mut Vec::new());
            assert!(read.is_err() || !reader.is_object(&id), "damage {number}");
        }
    }

    #[test]
    fn a_copy_past_the_end_of_its_root_is_an_error() {
        let (_folder, _, _, file) = loose_blob(1000);
        let mut reader = stream(
            file,
            vec![Op::Copy {
                offset: 990,
                len: 20,
            }],
            20,
        );
        assert!(reader.read_to_end(&mut Vec::new()).is_err());
    }

    #[test]
    fn a_file_of_another_size_is_not_the_root() {
        let (_folder, _, _, file) = loose_blob(100);
        let delta = Delta::whole(99);
        assert!(ObjectStream::new(Root::File(file), 99, delta, gix::hash::Kind::Sha1).is_none());
    }
}
