//! Git's delta format read into instructions, and a chain of deltas folded into one delta
//! of the chain's first base.
//!
//! A pack may store an object as a delta of another delta, and so on down to a whole
//! object (the chain's root). Folding the chain gives the object as copies of the root's
//! bytes and inserted bytes, without rebuilding any object in between: each delta is a few
//! kilobytes where each object it rebuilds can be tens of megabytes.

use std::io;

/// One instruction of a delta.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Op {
    /// Bytes of the base, from this offset.
    Copy { offset: u64, len: u64 },
    /// Bytes the delta holds, at this position of [`Delta::inserted`].
    Insert { start: usize, len: usize },
}

impl Op {
    fn len(self) -> u64 {
        match self {
            Op::Copy { len, .. } => len,
            Op::Insert { len, .. } => len as u64,
        }
    }
}

/// A delta: the size of the base it applies to, the size of what it rebuilds, and its
/// instructions, whose lengths add up to that size.
#[derive(Debug, Default)]
pub(super) struct Delta {
    pub base_size: u64,
    pub size: u64,
    pub ops: Vec<Op>,
    /// The bytes every [`Op::Insert`] points into.
    pub inserted: Vec<u8>,
}

impl Delta {
    /// Reads a delta as git writes it: two sizes, then copy and insert instructions.
    #[cfg(test)]
    pub fn parse(bytes: &[u8]) -> io::Result<Delta> {
        let mut inserted = Vec::new();
        let delta = Delta::parse_into(bytes, &mut inserted)?;
        Ok(Delta { inserted, ..delta })
    }

    /// The whole of a `size`-byte base, as a delta of it.
    pub fn whole(size: u64) -> Delta {
        Delta {
            base_size: size,
            size,
            ops: if size == 0 {
                Vec::new()
            } else {
                vec![Op::Copy {
                    offset: 0,
                    len: size,
                }]
            },
            inserted: Vec::new(),
        }
    }

    /// `outer`, a delta of the object this delta rebuilds, as a delta of this delta's
    /// base: each of its copies is replaced by the instructions that produce those bytes.
    pub fn then(self, outer: &[u8]) -> io::Result<Delta> {
        let mut folded = Delta {
            base_size: self.base_size,
            inserted: self.inserted,
            ..Delta::default()
        };
        let inner_ops = self.ops;
        // Where each inner instruction's bytes start in the object it rebuilds.
        let mut starts = Vec::with_capacity(inner_ops.len());
        let mut at = 0u64;
        for op in &inner_ops {
            starts.push(at);
            at += op.len();
        }
        let outer = Delta::parse_into(outer, &mut folded.inserted)?;
        if outer.base_size != self.size {
            return Err(malformed(
                "a delta's base is not the size the delta below rebuilds",
            ));
        }
        folded.size = outer.size;
        for op in outer.ops {
            let Op::Copy { offset, len } = op else {
                folded.ops.push(op);
                continue;
            };
            // The last inner instruction starting at or before `offset`.
            let mut index = starts.partition_point(|start| *start <= offset) - 1;
            let mut skip = offset - starts[index];
            let mut left = len;
            while left > 0 {
                let piece = inner_ops[index];
                let take = left.min(piece.len() - skip);
                folded.ops.push(match piece {
                    Op::Copy { offset, .. } => Op::Copy {
                        offset: offset + skip,
                        len: take,
                    },
                    Op::Insert { start, .. } => Op::Insert {
                        start: start + skip as usize,
                        len: take as usize,
                    },
                });
                left -= take;
                skip = 0;
                index += 1;
            }
        }
        Ok(folded)
    }

    /// Parses `bytes`, appending what they insert to `inserted` (the returned delta's own
    /// `inserted` is left empty).
    fn parse_into(bytes: &[u8], inserted: &mut Vec<u8>) -> io::Result<Delta> {
        let mut reader = Bytes { bytes, position: 0 };
        let base_size = reader.size()?;
        let size = reader.size()?;
        let mut ops = Vec::new();
        let mut produced = 0u64;
        while let Some(command) = reader.next() {
            let op = if command & 0x80 != 0 {
                // Copy: which of four offset bytes and three size bytes follow, by the bits set.
                let mut offset = 0u64;
                let mut len = 0u64;
                for (bit, shift) in (0..4).map(|byte| (1 << byte, 8 * byte)) {
                    if command & bit != 0 {
                        offset |= u64::from(reader.byte()?) << shift;
                    }
                }
                for (bit, shift) in (0..3).map(|byte| (0x10 << byte, 8 * byte)) {
                    if command & bit != 0 {
                        len |= u64::from(reader.byte()?) << shift;
                    }
                }
                if len == 0 {
                    len = 0x10000;
                }
                if offset + len > base_size {
                    return Err(malformed("a copy reaches past the end of its base"));
                }
                Op::Copy { offset, len }
            } else if command != 0 {
                let run = reader.take(usize::from(command))?;
                let start = inserted.len();
                inserted.extend_from_slice(run);
                Op::Insert {
                    start,
                    len: run.len(),
                }
            } else {
                return Err(malformed("a reserved instruction"));
            };
            produced += op.len();
            if produced > size {
                return Err(malformed("the delta yields more than its size"));
            }
            ops.push(op);
        }
        if produced != size {
            return Err(malformed("the delta yields less than its size"));
        }
        Ok(Delta {
            base_size,
            size,
            ops,
            inserted: Vec::new(),
        })
    }
}

/// A delta's bytes, read from the front.
struct Bytes<'a> {
    bytes: &'a [u8],
    position: usize,
}

impl Bytes<'_> {
    fn next(&mut self) -> Option<u8> {
        let byte = self.bytes.get(self.position).copied();
        self.position += 1;
        byte
    }

    fn byte(&mut self) -> io::Result<u8> {
        self.next()
            .ok_or_else(|| malformed("a copy instruction is cut short"))
    }

    fn take(&mut self, count: usize) -> io::Result<&[u8]> {
        let run = self
            .bytes
            .get(self.position..self.position + count)
            .ok_or_else(|| malformed("an insertion runs past the end of the delta"))?;
        self.position += count;
        Ok(run)
    }

    fn size(&mut self) -> io::Result<u64> {
        let rest = self.bytes.get(self.position..).unwrap_or_default();
        let (size, used) = delta_size(rest).ok_or_else(|| malformed("a size is cut short"))?;
        self.position += used;
        Ok(size)
    }
}

/// A size at the start of a delta: seven bits a byte, least significant first, the high
/// bit set on every byte but the last. With the number of bytes it took.
pub(super) fn delta_size(bytes: &[u8]) -> Option<(u64, usize)> {
    let mut size = 0u64;
    for (position, byte) in bytes.iter().enumerate().take(10) {
        size |= u64::from(byte & 0x7f) << (7 * position);
        if byte & 0x80 == 0 {
            return Some((size, position + 1));
        }
    }
    None
}

pub(super) fn malformed(what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("malformed delta: {what}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An instruction to encode: a copy (offset, length) or an insertion.
    enum Write<'a> {
        Copy(u32, u32),
        Insert(&'a [u8]),
    }

    /// A delta of a `base_size`-byte base rebuilding `size` bytes with `ops` (written as
    /// git writes them: every offset and length byte present).
    fn encode(base_size: u64, size: u64, ops: &[Write]) -> Vec<u8> {
        let mut bytes = Vec::new();
        for mut value in [base_size, size] {
            loop {
                let low = (value & 0x7f) as u8;
                value >>= 7;
                bytes.push(if value == 0 { low } else { low | 0x80 });
                if value == 0 {
                    break;
                }
            }
        }
        for op in ops {
            match op {
                Write::Copy(offset, len) => {
                    bytes.push(0x80 | 0x0f | 0x70);
                    bytes.extend_from_slice(&offset.to_le_bytes());
                    bytes.extend_from_slice(&len.to_le_bytes()[..3]);
                }
                Write::Insert(insert) => {
                    bytes.push(insert.len() as u8);
                    bytes.extend_from_slice(insert);
                }
            }
        }
        bytes
    }

    /// What `delta` rebuilds from `base`.
    fn apply(delta: &Delta, base: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        for op in &delta.ops {
            match *op {
                Op::Copy { offset, len } => {
                    out.extend_from_slice(&base[offset as usize..(offset + len) as usize])
                }
                Op::Insert { start, len } => {
                    out.extend_from_slice(&delta.inserted[start..start + len])
                }
            }
        }
        out
    }

    #[test]
    fn a_delta_reads_its_sizes_copies_and_insertions() {
        let bytes = encode(10, 7, &[Write::Copy(2, 3), Write::Insert(b"xyzw")]);
        let delta = Delta::parse(&bytes).expect("a delta");
        assert_eq!((delta.base_size, delta.size), (10, 7));
        assert_eq!(apply(&delta, b"0123456789"), b"234xyzw");
    }

    #[test]
    fn malformed_deltas_are_refused() {
        let cases: [(&str, Vec<u8>); 6] = [
            ("copy past the base", encode(4, 3, &[Write::Copy(2, 3)])),
            ("more than its size", encode(10, 2, &[Write::Copy(0, 3)])),
            ("less than its size", encode(10, 4, &[Write::Copy(0, 3)])),
            ("insertion cut short", {
                let mut bytes = encode(1, 3, &[Write::Insert(b"abc")]);
                bytes.pop();
                bytes
            }),
            ("reserved", {
                let mut bytes = encode(1, 0, &[]);
                bytes.push(0);
                bytes
            }),
            ("sizes cut short", vec![0x80]),
        ];
        for (what, bytes) in cases {
            assert!(Delta::parse(&bytes).is_err(), "{what}");
        }
    }

    /// A chain of three deltas folded into one delta of the first base rebuilds what
    /// applying them one after another rebuilds, copies split across instructions too.
    #[test]
    fn a_folded_chain_rebuilds_what_its_deltas_rebuild_in_turn() {
        let root = b"the quick brown fox jumps over the lazy dog".to_vec();
        let first = encode(
            root.len() as u64,
            30,
            &[
                Write::Copy(4, 16),
                Write::Insert(b"[inserted]"),
                Write::Copy(35, 4),
            ],
        );
        let first_object = apply(&Delta::parse(&first).expect("first"), &root);
        assert_eq!(first_object, b"quick brown fox [inserted]lazy");
        // Copies that start inside an insertion and span three instructions.
        let second = encode(
            30,
            24,
            &[Write::Copy(12, 15), Write::Insert(b"!!"), Write::Copy(0, 7)],
        );
        let second_object = apply(&Delta::parse(&second).expect("second"), &first_object);
        let third = encode(
            24,
            12,
            &[Write::Copy(20, 4), Write::Insert(b"--"), Write::Copy(3, 6)],
        );
        let third_object = apply(&Delta::parse(&third).expect("third"), &second_object);

        let folded = Delta::parse(&first)
            .and_then(|delta| delta.then(&second))
            .expect("two folded");
        assert_eq!(apply(&folded, &root), second_object);
        let folded = folded.then(&third).expect("three folded");
        assert_eq!((folded.base_size, folded.size), (root.len() as u64, 12));
        assert_eq!(apply(&folded, &root), third_object);
    }

    /// A small deterministic generator, so a failure names its seed.
    struct Random(u64);

    impl Random {
        fn below(&mut self, bound: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % bound.max(1)
        }
    }

    /// A random delta of `base` (copies of random ranges, random insertions), encoded.
    fn random_delta(random: &mut Random, base: &[u8]) -> Vec<u8> {
        let mut pieces: Vec<(u32, u32, Vec<u8>)> = Vec::new();
        let mut size = 0u64;
        for _ in 0..random.below(12) {
            if random.below(2) == 0 && !base.is_empty() {
                let offset = random.below(base.len() as u64);
                let len = 1 + random.below(base.len() as u64 - offset);
                pieces.push((offset as u32, len as u32, Vec::new()));
                size += len;
            } else {
                let len = 1 + random.below(20);
                let bytes = (0..len).map(|_| b'a' + random.below(26) as u8).collect();
                pieces.push((0, 0, bytes));
                size += len;
            }
        }
        let ops: Vec<Write> = pieces
            .iter()
            .map(|(offset, len, bytes)| match bytes.is_empty() {
                true => Write::Copy(*offset, *len),
                false => Write::Insert(bytes),
            })
            .collect();
        encode(base.len() as u64, size, &ops)
    }

    /// Random chains of up to six deltas fold into what applying them in turn rebuilds;
    /// any bytes at all parse or are refused, never a panic.
    #[test]
    fn random_chains_fold_and_random_bytes_never_panic() {
        for seed in 1..300u64 {
            let mut random = Random(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
            let root: Vec<u8> = (0..1 + random.below(200)).map(|byte| byte as u8).collect();
            let mut objects = vec![root.clone()];
            let mut folded = Delta::whole(root.len() as u64);
            for _ in 0..1 + random.below(6) {
                let last = objects.last().expect("the root at least");
                let bytes = random_delta(&mut random, last);
                let delta = Delta::parse(&bytes).expect("a valid delta");
                objects.push(apply(&delta, last));
                folded = folded.then(&bytes).expect("folds");
            }
            assert_eq!(
                apply(&folded, &root),
                *objects.last().expect("rebuilt"),
                "seed {seed}"
            );

            let noise: Vec<u8> = (0..random.below(64))
                .map(|_| random.below(256) as u8)
                .collect();
            if let Ok(delta) = Delta::parse(&noise) {
                assert_eq!(delta.ops.iter().map(|op| op.len()).sum::<u64>(), delta.size);
                let _ = Delta::whole(delta.base_size).then(&noise);
            }
        }
    }

    #[test]
    fn a_delta_of_another_size_does_not_fold() {
        let first = encode(10, 5, &[Write::Copy(0, 5)]);
        let second = encode(6, 6, &[Write::Copy(0, 6)]);
        let folded = Delta::parse(&first).and_then(|delta| delta.then(&second));
        assert!(folded.is_err());
    }

    #[test]
    fn delta_sizes_read_as_git_writes_them() {
        assert_eq!(delta_size(&[0x05]), Some((5, 1)));
        // 300 = 0b10_0101100: low seven bits first, with the high bit set.
        assert_eq!(delta_size(&[0xac, 0x02, 0x7f]), Some((300, 2)));
        assert_eq!(delta_size(&[0x80, 0x80]), None, "truncated");
        assert_eq!(delta_size(&[0xff; 11]), None, "longer than a u64");
        assert_eq!(delta_size(&[]), None);
    }
}
