//! RFC 8785 (JCS) straight from JSON text, without building a `serde_json::Value`: the hot
//! path of `case-v1` for large suites.
//!
//! It only answers when it can prove that its output equals what `serde_json` (with the
//! strict duplicate-key and finite-number rules) followed by [`crate::hash::canonical_json`]
//! produces. Anything else (invalid JSON, duplicate keys, numbers out of range, lone
//! surrogates, deep nesting, a top level that is not an object) yields `None`, and the
//! caller takes the slow path, which also produces the exact error message.

use std::borrow::Cow;
use std::cmp::Ordering;
use std::ops::Range;

/// Nesting deeper than this goes to the slow path (serde_json's own limit is 128).
const MAX_DEPTH: u32 = 100;
/// Integers with at most this many digits are exact in an f64 and print as themselves.
const EXACT_INTEGER_DIGITS: usize = 15;

/// One member of an object being canonicalized.
#[derive(Debug, Clone)]
struct Member {
    /// The decoded key: in the input when it has no escapes (it is its own decoding),
    /// else in `Canonicalizer::keys`.
    key: Range<usize>,
    key_in_input: bool,
    /// `"key":value` in canonical form, in `Canonicalizer::out`.
    segment: Range<usize>,
    /// The value as written in the input.
    raw_value: Range<usize>,
    /// The first eight bytes of the decoded key, big-endian, zero-padded: decides most
    /// comparisons without looking at the key.
    prefix: u64,
    /// Whether the key's UTF-8 byte order is its UTF-16 order (no character above U+FFFF).
    byte_ordered: bool,
}

/// Where decoded keys are: the input line and the buffer of keys that had escapes.
#[derive(Clone, Copy)]
struct Keys<'a> {
    input: &'a [u8],
    decoded: &'a [u8],
}

impl Member {
    fn new(key: Range<usize>, key_in_input: bool, keys: Keys<'_>) -> Self {
        let mut member = Member {
            key,
            key_in_input,
            segment: 0..0,
            raw_value: 0..0,
            prefix: 0,
            byte_ordered: true,
        };
        let decoded = member.key_bytes(keys);
        let mut head = [0u8; 8];
        for (slot, byte) in head.iter_mut().zip(decoded) {
            *slot = *byte;
        }
        member.prefix = u64::from_be_bytes(head);
        member.byte_ordered = decoded.is_ascii() || decoded.iter().all(|byte| *byte < 0xF0);
        member
    }

    fn key_bytes<'k>(&self, keys: Keys<'k>) -> &'k [u8] {
        match self.key_in_input {
            true => &keys.input[self.key.clone()],
            false => &keys.decoded[self.key.clone()],
        }
    }

    /// RFC 8785 order: UTF-16 code units of the decoded keys.
    #[inline]
    fn cmp_key(&self, other: &Member, keys: Keys<'_>) -> Ordering {
        let whole = || (self.key_bytes(keys), other.key_bytes(keys));
        if self.byte_ordered && other.byte_ordered {
            // Zero padding keeps the prefixes in byte order; equal ones need the rest.
            self.prefix.cmp(&other.prefix).then_with(|| {
                let (left, right) = whole();
                left.cmp(right)
            })
        } else {
            let (left, right) = whole();
            utf16_cmp(left, right)
        }
    }
}

/// A top-level member of the canonicalized object, as written in the input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopLevelMember {
    pub key: &'static str,
    pub raw_value: Range<usize>,
}

/// Reusable buffers: one per worker thread keeps canonicalization allocation-free.
#[derive(Debug, Default)]
pub struct Canonicalizer {
    out: Vec<u8>,
    keys: Vec<u8>,
    members: Vec<Member>,
    /// The RFC 8785 order of the members of the object just finished, as indices.
    order: Vec<usize>,
    reorder: Vec<u8>,
    scratch: Vec<u8>,
    contract: Vec<u8>,
    wanted: &'static [&'static str],
    top_level: Vec<TopLevelMember>,
    contract_excluded: Option<&'static str>,
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
        self.keys.clear();
        self.members.clear();
        self.contract.clear();
        self.top_level.clear();
        self.wanted = wanted;
        self.contract_excluded = excluded;
        let input = text.as_bytes();
        let mut position = skip_whitespace(input, 0);
        if input.get(position) != Some(&b'{') {
            return None;
        }
        position = self.parse_object(input, position, 1)?;
        if skip_whitespace(input, position) != input.len() {
            return None;
        }
        let has_excluded =
            excluded.is_some_and(|name| self.top_level.iter().any(|member| member.key == name));
        Some(CanonicalObject {
            canonical: &self.out,
            without_excluded: has_excluded.then_some(self.contract.as_slice()),
            members: &self.top_level,
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
                write_canonical_number(&input[position..end], &mut self.out)?;
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
            let (key_end, decoded_from_scratch) =
                decode_string(input, position, &mut self.scratch)?;
            let key = match decoded_from_scratch {
                true => {
                    let key_start = self.keys.len();
                    self.keys.extend_from_slice(&self.scratch);
                    write_canonical_string(&self.scratch, &mut self.out);
                    key_start..self.keys.len()
                }
                // No escapes: nothing in it needs one either, so the key is written as is.
                false => {
                    self.out.extend_from_slice(&input[position..key_end]);
                    position + 1..key_end - 1
                }
            };
            let keys = Keys {
                input,
                decoded: &self.keys,
            };
            let member = Member::new(key, !decoded_from_scratch, keys);
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

    /// Puts the members in RFC 8785 order (UTF-16 code units of the decoded keys); refuses
    /// duplicate keys. At the top level also records the wanted members.
    fn finish_object(
        &mut self,
        input: &[u8],
        object_start: usize,
        members_start: usize,
        top_level: bool,
    ) -> Option<()> {
        let keys = Keys {
            input,
            decoded: &self.keys,
        };
        let members = &mut self.members[members_start..];
        let in_order = members
            .windows(2)
            .all(|pair| pair[0].cmp_key(&pair[1], keys) == Ordering::Less);
        // The order is worked out on indices: members are too large to move around.
        let order = &mut self.order;
        order.clear();
        order.extend(0..members.len());
        if !in_order {
            order.sort_unstable_by(|left, right| members[*left].cmp_key(&members[*right], keys));
            if order
                .windows(2)
                .any(|pair| members[pair[0]].cmp_key(&members[pair[1]], keys) == Ordering::Equal)
            {
                return None;
            }
            self.reorder.clear();
            self.reorder.extend_from_slice(&self.out[object_start..]);
            self.out.truncate(object_start);
            self.out.push(b'{');
            for (position, index) in order.iter().enumerate() {
                if position > 0 {
                    self.out.push(b',');
                }
                let member = &mut members[*index];
                let local = member.segment.start - object_start..member.segment.end - object_start;
                let new_start = self.out.len();
                self.out.extend_from_slice(&self.reorder[local]);
                member.segment = new_start..self.out.len();
            }
            self.out.push(b'}');
        }
        if top_level {
            self.record_top_level(input, members_start);
        }
        Some(())
    }

    /// The wanted top-level members and the object without the excluded one, both in the
    /// order [`Self::finish_object`] left in `order`.
    fn record_top_level(&mut self, input: &[u8], members_start: usize) {
        let keys = Keys {
            input,
            decoded: &self.keys,
        };
        let excluded = self.contract_excluded;
        let members = &self.members[members_start..];
        let mut excluded_found = false;
        for member in self.order.iter().map(|index| &members[*index]) {
            let key = member.key_bytes(keys);
            let known = self
                .wanted
                .iter()
                .chain(excluded.iter())
                .find(|name| name.as_bytes() == key);
            if let Some(name) = known {
                self.top_level.push(TopLevelMember {
                    key: name,
                    raw_value: member.raw_value.clone(),
                });
            }
            excluded_found |= excluded.is_some_and(|name| name.as_bytes() == key);
        }
        if excluded_found {
            self.contract.push(b'{');
            let mut first = true;
            for member in self.order.iter().map(|index| &members[*index]) {
                if excluded.is_some_and(|name| member.key_bytes(keys) == name.as_bytes()) {
                    continue;
                }
                if !first {
                    self.contract.push(b',');
                }
                first = false;
                self.contract
                    .extend_from_slice(&self.out[member.segment.clone()]);
            }
            self.contract.push(b'}');
        }
    }
}

/// The string whose opening quote is at `start` in JSON text: its decoded text (borrowed
/// when it has no escapes) and the position after its closing quote.
pub(crate) fn read_string(text: &str, start: usize) -> Option<(Cow<'_, str>, usize)> {
    let mut scratch = Vec::new();
    let (end, decoded) = decode_string(text.as_bytes(), start, &mut scratch)?;
    let value = match decoded {
        true => Cow::Owned(String::from_utf8(scratch).ok()?),
        false => Cow::Borrowed(text.get(start + 1..end - 1)?),
    };
    Some((value, end))
}

/// The position after the value at `start` in JSON text the canonicalizer accepted (its
/// grammar is not checked again: only quotes, escapes and brackets are followed).
pub(crate) fn skip_value(input: &[u8], start: usize) -> Option<usize> {
    match *input.get(start)? {
        b'"' => string_end(input, start),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut position = start;
            loop {
                match *input.get(position)? {
                    b'"' => {
                        position = string_end(input, position)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth = depth.checked_sub(1)?;
                        if depth == 0 {
                            return Some(position + 1);
                        }
                    }
                    _ => {}
                }
                position += 1;
            }
        }
        _ => {
            let length = input[start..]
                .iter()
                .take_while(|byte| {
                    !matches!(byte, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
                })
                .count();
            (length > 0).then_some(start + length)
        }
    }
}

/// The position after the closing quote of the string whose opening quote is at `start`.
fn string_end(input: &[u8], start: usize) -> Option<usize> {
    let mut position = start + 1;
    loop {
        position += next_special(input.get(position..)?)?;
        match input[position] {
            b'"' => return Some(position + 1),
            b'\\' => position += 2,
            _ => return None,
        }
    }
}

pub(crate) fn skip_whitespace(input: &[u8], mut position: usize) -> usize {
    while let Some(b' ' | b'\t' | b'\n' | b'\r') = input.get(position) {
        position += 1;
    }
    position
}

/// Finds the end of the string starting at `start` (its opening quote). Returns the
/// position after the closing quote, and whether the decoded text was written to `scratch`
/// (only when the string has escapes; otherwise the raw bytes are the decoded text).
#[inline]
fn decode_string(input: &[u8], start: usize, scratch: &mut Vec<u8>) -> Option<(usize, bool)> {
    let mut position = start + 1 + next_special(input.get(start + 1..)?)?;
    match input[position] {
        b'"' => return Some((position + 1, false)),
        b'\\' => {}
        _ => return None,
    }
    scratch.clear();
    scratch.extend_from_slice(&input[start + 1..position]);
    loop {
        match *input.get(position)? {
            b'"' => return Some((position + 1, true)),
            b'\\' => {
                let escape = *input.get(position + 1)?;
                position += 2;
                let decoded = match escape {
                    b'"' => '"',
                    b'\\' => '\\',
                    b'/' => '/',
                    b'b' => '\u{8}',
                    b'f' => '\u{c}',
                    b'n' => '\n',
                    b'r' => '\r',
                    b't' => '\t',
                    b'u' => {
                        let (character, end) = decode_unicode_escape(input, position)?;
                        position = end;
                        character
                    }
                    _ => return None,
                };
                let mut buffer = [0u8; 4];
                scratch.extend_from_slice(decoded.encode_utf8(&mut buffer).as_bytes());
            }
            byte if byte < 0x20 => return None,
            byte => {
                scratch.push(byte);
                position += 1;
            }
        }
    }
}

/// Writes the string value starting at `start` (its opening quote) to `out` in JCS form,
/// decoding and re-escaping in one pass; the position after its closing quote.
fn write_string_value(input: &[u8], start: usize, out: &mut Vec<u8>) -> Option<usize> {
    // Text is copied in runs as long as its canonical form is what is written: short
    // escapes (`\n`, `\"`, …) are their own canonical form and do not end a run.
    let mut run_start = start;
    let mut position = start + 1;
    loop {
        position += next_special(input.get(position..)?)?;
        match input[position] {
            b'"' => {
                out.extend_from_slice(&input[run_start..=position]);
                return Some(position + 1);
            }
            b'\\' => {
                let escape = *input.get(position + 1)?;
                if let b'"' | b'\\' | b'b' | b'f' | b'n' | b'r' | b't' = escape {
                    position += 2;
                    continue;
                }
                out.extend_from_slice(&input[run_start..position]);
                position += 2;
                match escape {
                    b'/' => out.push(b'/'),
                    b'u' => {
                        let (character, end) = decode_unicode_escape(input, position)?;
                        position = end;
                        let mut buffer = [0u8; 4];
                        let encoded = character.encode_utf8(&mut buffer).as_bytes();
                        match character {
                            '"' | '\\' | '\u{0}'..='\u{1f}' => write_escaped(encoded, out),
                            // One to four bytes: pushed, not a call to copy them.
                            _ => encoded.iter().for_each(|byte| out.push(*byte)),
                        }
                    }
                    _ => return None,
                }
                run_start = position;
            }
            // A raw control character: not JSON.
            _ => return None,
        }
    }
}

/// The offset of the first `"`, `\` or control character in `bytes`, eight bytes at a
/// time.
#[inline]
fn next_special(bytes: &[u8]) -> Option<usize> {
    let mut chunks = bytes.chunks_exact(8);
    let mut offset = 0;
    for chunk in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        if let Some(index) = first_special(u64::from_le_bytes(word)) {
            return Some(offset + index);
        }
        offset += 8;
    }
    // The tail, padded with a byte that is not special.
    let tail = chunks.remainder();
    let mut word = [b'a'; 8];
    word[..tail.len()].copy_from_slice(tail);
    first_special(u64::from_le_bytes(word)).map(|index| offset + index)
}

/// The index of the first `"`, `\` or control character among the eight bytes of `word`
/// (little-endian: its lowest byte comes first).
#[inline]
fn first_special(word: u64) -> Option<usize> {
    const ONES: u64 = u64::from_le_bytes([1; 8]);
    const HIGHS: u64 = ONES << 7;
    // The high bit of each byte below `limit` (limits up to 128). A borrow can also mark
    // bytes after the first such byte, never one before it: the lowest mark is exact.
    let below = |word: u64, limit: u8| word.wrapping_sub(ONES * u64::from(limit)) & !word & HIGHS;
    let marks = below(word ^ (ONES * u64::from(b'"')), 1)
        | below(word ^ (ONES * u64::from(b'\\')), 1)
        | below(word, 0x20);
    (marks != 0).then(|| marks.trailing_zeros() as usize / 8)
}

/// Decodes the four hex digits at `position` (after `\u`), joining a surrogate pair.
/// Lone surrogates go to the slow path, which rejects them as serde_json does.
fn decode_unicode_escape(input: &[u8], position: usize) -> Option<(char, usize)> {
    let first = hex4(input.get(position..position + 4)?)?;
    match first {
        0xD800..=0xDBFF => {
            if input.get(position + 4..position + 6)? != b"\\u" {
                return None;
            }
            let second = hex4(input.get(position + 6..position + 10)?)?;
            if !(0xDC00..=0xDFFF).contains(&second) {
                return None;
            }
            let code = 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00);
            Some((char::from_u32(code)?, position + 10))
        }
        0xDC00..=0xDFFF => None,
        _ => Some((char::from_u32(first)?, position + 4)),
    }
}

fn hex4(digits: &[u8]) -> Option<u32> {
    digits.iter().try_fold(0u32, |value, digit| {
        Some(value * 16 + char::from(*digit).to_digit(16)?)
    })
}

/// JCS string output: `"` and `\` escaped, control characters as short escapes or
/// `\u00xx`, everything else as UTF-8.
fn write_canonical_string(decoded: &[u8], out: &mut Vec<u8>) {
    out.push(b'"');
    write_escaped(decoded, out);
    out.push(b'"');
}

/// The body of a JCS string: `decoded` with `"`, `\` and control characters escaped.
fn write_escaped(decoded: &[u8], out: &mut Vec<u8>) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut clean_start = 0;
    for (index, &byte) in decoded.iter().enumerate() {
        let escape: &[u8] = match byte {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0x08 => b"\\b",
            0x0c => b"\\f",
            0x00..=0x1f => &[
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[usize::from(byte >> 4)],
                HEX[usize::from(byte & 0xf)],
            ],
            _ => continue,
        };
        out.extend_from_slice(&decoded[clean_start..index]);
        out.extend_from_slice(escape);
        clean_start = index + 1;
    }
    out.extend_from_slice(&decoded[clean_start..]);
}

/// The end of the JSON number starting at `start`, validating the grammar
/// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`.
fn number_end(input: &[u8], start: usize) -> Option<usize> {
    let digits_from = |mut position: usize| {
        let first = position;
        while input.get(position).is_some_and(u8::is_ascii_digit) {
            position += 1;
        }
        (position > first).then_some(position)
    };
    let mut position = start;
    if input.get(position) == Some(&b'-') {
        position += 1;
    }
    position = match input.get(position)? {
        b'0' => position + 1,
        b'1'..=b'9' => digits_from(position)?,
        _ => return None,
    };
    if input.get(position) == Some(&b'.') {
        position = digits_from(position + 1)?;
    }
    if let Some(b'e' | b'E') = input.get(position) {
        position += 1;
        if let Some(b'+' | b'-') = input.get(position) {
            position += 1;
        }
        position = digits_from(position)?;
    }
    Some(position)
}

/// ECMAScript number formatting of the literal's f64 value, as `case-v1` requires.
/// Short integers and plain decimals print as themselves.
fn write_canonical_number(literal: &[u8], out: &mut Vec<u8>) -> Option<()> {
    let digits = literal.strip_prefix(b"-").unwrap_or(literal);
    if digits.len() <= EXACT_INTEGER_DIGITS && digits.iter().all(u8::is_ascii_digit) {
        if digits == b"0" {
            out.push(b'0');
        } else {
            out.extend_from_slice(literal);
        }
        return Some(());
    }
    if is_shortest_decimal(digits) {
        out.extend_from_slice(literal);
        return Some(());
    }
    write_formatted_number(literal, out)
}

/// Whether a grammatical literal without its sign, `int.frac`, is already what ECMAScript
/// prints for its value: no exponent, no trailing zero in the fraction, at most 15
/// significant digits (every such decimal maps to its own double, whose shortest
/// round-trip digits are therefore its own), and, below 1, fewer than six zeros after
/// the point (smaller numbers print with an exponent).
fn is_shortest_decimal(digits: &[u8]) -> bool {
    let Some(point) = digits.iter().position(|byte| *byte == b'.') else {
        return false;
    };
    let (whole, fraction) = (&digits[..point], &digits[point + 1..]);
    if !fraction.iter().all(u8::is_ascii_digit) || fraction.last().is_none_or(|last| *last == b'0')
    {
        return false;
    }
    let significant = match whole {
        b"0" => {
            let zeros = fraction.iter().take_while(|digit| **digit == b'0').count();
            if zeros >= 6 {
                return false;
            }
            fraction.len() - zeros
        }
        _ => whole.len() + fraction.len(),
    };
    significant <= EXACT_INTEGER_DIGITS
}

/// The general case: the literal's value formatted by `ryu-js` (ECMAScript rules).
fn write_formatted_number(literal: &[u8], out: &mut Vec<u8>) -> Option<()> {
    let value: f64 = std::str::from_utf8(literal).ok()?.parse().ok()?;
    if !value.is_finite() {
        return None;
    }
    let mut buffer = ryu_js::Buffer::new();
    out.extend_from_slice(buffer.format_finite(value).as_bytes());
    Some(())
}

/// Compares two UTF-8 strings by their UTF-16 code units, as RFC 8785 sorts keys.
fn utf16_cmp(left: &[u8], right: &[u8]) -> Ordering {
    if left.is_ascii() && right.is_ascii() {
        return left.cmp(right);
    }
    match (std::str::from_utf8(left), std::str::from_utf8(right)) {
        (Ok(left), Ok(right)) => left.encode_utf16().cmp(right.encode_utf16()),
        _ => left.cmp(right),
    }
}

#[cfg(test)]
mod tests;
