//! RFC 8785 (JCS) straight from JSON text, without building a `serde_json::Value`: the hot
//! path of `case-v1` for large suites.
//!
//! It only answers when it can prove that its output equals what `serde_json` (with the
//! strict duplicate-key and finite-number rules) followed by [`crate::digest::canonical_json`]
//! produces. Anything else (invalid JSON, duplicate keys, numbers out of range, lone
//! surrogates, deep nesting, a top level that is not an object) yields `None`, and the
//! caller takes the slow path, which also produces the exact error message.
//!
//! Kept because it buys more than 2× on a cold check: it is about 5× faster than
//! `serde_json` followed by `serde_json_canonicalizer` on the benchmark's cases, without
//! which a cold check of the benchmark layout would take about 3× `sha256sum` instead of
//! 1× (docs/performance.md). Its differential tests (`canonical/tests.rs`) and the `jcs` fuzz target
//! hold it to the library.

use std::ops::Range;
use wanted_members::WantedKeys;

mod key_order;
mod numbers;
mod strings;
mod wanted_members;

use key_order::{short_ascii_key, Keys, KnownOrders, Member};
pub use numbers::imprecise_numbers;
pub(crate) use numbers::{canonical_number, is_precise_number};
use numbers::{number_end, write_canonical_number};
pub(crate) use strings::skip_whitespace;
use strings::{append, decode_string, write_canonical_string, write_string_value};

/// Nesting deeper than this goes to the slow path (serde_json's own limit is 128).
const MAX_DEPTH: u32 = 100;
/// Integers with at most this many digits are exact in an f64 and print as themselves.
const EXACT_INTEGER_DIGITS: usize = 15;

/// A top-level member of the canonicalized object, as written in the input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopLevelMember {
    pub key: &'static str,
    pub raw_value: Range<usize>,
}

/// Reusable buffers: one per worker thread keeps canonicalization allocation-free.
#[derive(Debug, Default)]
pub struct Canonicalizer {
    /// The object's canonical form, from `canonical_start` on.
    out: Vec<u8>,
    canonical_start: usize,
    keys: Vec<u8>,
    members: Vec<Member>,
    /// The RFC 8785 order of the members of the object just finished, as indices.
    order: Vec<usize>,
    /// Key prefixes with member indices, sorted when the prefixes decide the order.
    by_prefix: Vec<(u64, usize)>,
    /// Orders worked out from prefixes, kept for objects of the same shape (the lines of
    /// a JSONL file repeat a few shapes with their keys in the same places).
    known_orders: KnownOrders,
    reorder: Vec<u8>,
    scratch: Vec<u8>,
    contract: Vec<u8>,
    wanted: WantedKeys,
    top_level: Vec<TopLevelMember>,
    imprecise: Vec<Range<usize>>,
}

/// The result of canonicalizing one top-level object.
#[derive(Debug)]
pub struct CanonicalObject<'a> {
    /// The RFC 8785 serialization of the whole object.
    pub canonical: &'a [u8],
    /// The serialization without the excluded member, when the object has it.
    pub without_excluded: Option<&'a [u8]>,
    /// The wanted top-level members with where their values are in the input.
    pub members: &'a [TopLevelMember],
    /// The number literals whose exact value the canonical form does not keep (finer than
    /// a double), as ranges of the input.
    pub imprecise_numbers: &'a [Range<usize>],
}

impl Canonicalizer {
    pub fn new() -> Self {
        Canonicalizer::default()
    }

    /// Canonicalizes `text`, which must hold exactly one JSON object. `wanted` names the
    /// top-level members whose raw input ranges are reported; `excluded` names a member
    /// the object is also serialized without (when present).
    pub fn object<'a>(
        &'a mut self,
        text: &str,
        wanted: &'static [&'static str],
        excluded: Option<&'static str>,
    ) -> Option<CanonicalObject<'a>> {
        self.out.clear();
        self.canonical_start = 0;
        self.keys.clear();
        self.members.clear();
        self.contract.clear();
        self.top_level.clear();
        self.imprecise.clear();
        self.wanted.set(wanted, excluded);
        let input = text.as_bytes();
        let mut position = skip_whitespace(input, 0);
        if input.get(position) != Some(&b'{') {
            return None;
        }
        position = self.parse_object(input, position, 1)?;
        if skip_whitespace(input, position) != input.len() {
            return None;
        }
        // The serialization without the excluded member is only written when it was found.
        let has_excluded = !self.contract.is_empty();
        Some(CanonicalObject {
            canonical: &self.out[self.canonical_start..],
            without_excluded: has_excluded.then_some(self.contract.as_slice()),
            members: &self.top_level,
            imprecise_numbers: &self.imprecise,
        })
    }

    fn parse_value(&mut self, input: &[u8], position: usize, depth: u32) -> Option<usize> {
        match *input.get(position)? {
            b'{' => self.parse_object(input, position, depth + 1),
            b'[' => self.parse_array(input, position, depth + 1),
            b'"' => write_string_value(input, position, &mut self.out),
            b't' => self.literal(input, position, b"true"),
            b'f' => self.literal(input, position, b"false"),
            b'n' => self.literal(input, position, b"null"),
            b'-' | b'0'..=b'9' => {
                let end = number_end(input, position)?;
                if !write_canonical_number(&input[position..end], &mut self.out)? {
                    self.imprecise.push(position..end);
                }
                Some(end)
            }
            _ => None,
        }
    }

    fn literal(&mut self, input: &[u8], position: usize, word: &[u8]) -> Option<usize> {
        let end = position + word.len();
        (input.get(position..end)? == word).then(|| {
            self.out.extend_from_slice(word);
            end
        })
    }

    fn parse_array(&mut self, input: &[u8], start: usize, depth: u32) -> Option<usize> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.out.push(b'[');
        let mut position = skip_whitespace(input, start + 1);
        if input.get(position) == Some(&b']') {
            self.out.push(b']');
            return Some(position + 1);
        }
        loop {
            position = self.parse_value(input, position, depth)?;
            position = skip_whitespace(input, position);
            match *input.get(position)? {
                b',' => {
                    self.out.push(b',');
                    position = skip_whitespace(input, position + 1);
                }
                b']' => {
                    self.out.push(b']');
                    return Some(position + 1);
                }
                _ => return None,
            }
        }
    }

    fn parse_object(&mut self, input: &[u8], start: usize, depth: u32) -> Option<usize> {
        if depth > MAX_DEPTH {
            return None;
        }
        let object_start = self.out.len();
        let keys_start = self.keys.len();
        let members_start = self.members.len();
        self.out.push(b'{');
        let mut position = skip_whitespace(input, start + 1);
        if input.get(position) == Some(&b'}') {
            self.out.push(b'}');
            return Some(position + 1);
        }
        loop {
            if input.get(position) != Some(&b'"') {
                return None;
            }
            let segment_start = self.out.len();
            // Most keys are short ASCII words: read, checked and given their prefix from
            // one 8-byte load.
            let (key_end, member) = match short_ascii_key(input, position) {
                Some((key_end, prefix)) => {
                    append(&mut self.out, input, position..key_end);
                    let member = Member {
                        key: position + 1..key_end - 1,
                        key_in_input: true,
                        segment: 0..0,
                        raw_value: 0..0,
                        prefix,
                        byte_ordered: true,
                    };
                    (key_end, member)
                }
                None => {
                    let (key_end, decoded_from_scratch) =
                        decode_string(input, position, &mut self.scratch)?;
                    let key = match decoded_from_scratch {
                        true => {
                            let key_start = self.keys.len();
                            self.keys.extend_from_slice(&self.scratch);
                            write_canonical_string(&self.scratch, &mut self.out);
                            key_start..self.keys.len()
                        }
                        // No escapes: nothing in it needs one either, so the key is
                        // written as is.
                        false => {
                            append(&mut self.out, input, position..key_end);
                            position + 1..key_end - 1
                        }
                    };
                    let keys = Keys {
                        input,
                        decoded: &self.keys,
                    };
                    (key_end, Member::new(key, !decoded_from_scratch, keys))
                }
            };
            self.out.push(b':');
            position = skip_whitespace(input, key_end);
            if input.get(position) != Some(&b':') {
                return None;
            }
            let value_start = skip_whitespace(input, position + 1);
            let value_end = self.parse_value(input, value_start, depth)?;
            self.members.push(Member {
                segment: segment_start..self.out.len(),
                raw_value: value_start..value_end,
                ..member
            });
            position = skip_whitespace(input, value_end);
            match *input.get(position)? {
                b',' => {
                    self.out.push(b',');
                    position = skip_whitespace(input, position + 1);
                }
                b'}' => {
                    self.out.push(b'}');
                    position += 1;
                    break;
                }
                _ => return None,
            }
        }
        self.finish_object(input, object_start, members_start, depth == 1)?;
        self.members.truncate(members_start);
        self.keys.truncate(keys_start);
        Some(position)
    }
}

#[cfg(test)]
mod tests;
