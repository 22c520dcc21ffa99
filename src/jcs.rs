//! RFC 8785 (JCS) straight from JSON text, without building a `serde_json::Value`: the hot
//! path of `case-v1` for large suites.
//!
//! It only answers when it can prove that its output equals what `serde_json` (with the
//! strict duplicate-key and finite-number rules) followed by [`crate::hash::canonical_json`]
//! produces. Anything else (invalid JSON, duplicate keys, numbers out of range, lone
//! surrogates, deep nesting, a top level that is not an object) yields `None`, and the
//! caller takes the slow path, which also produces the exact error message.

use std::cmp::Ordering;
use std::ops::Range;

mod numbers;
mod strings;

pub(crate) use numbers::{canonical_number, is_precise_number};
use numbers::{number_end, write_canonical_number};
use strings::{
    append, append_within, decode_string, string_end, write_canonical_string, write_string_value,
};
pub(crate) use strings::{read_string, skip_value, skip_whitespace};

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
        // Where the text holds eight bytes from the key's start (nearly always), a shorter
        // key is those eight bytes with the ones after it masked off.
        let head = match key_in_input {
            true => keys.input.get(member.key.start..),
            false => Some(decoded),
        };
        member.prefix = match head.and_then(|head| head.first_chunk::<8>()) {
            Some(head) if decoded.len() >= 8 => u64::from_be_bytes(*head),
            Some(head) => u64::from_be_bytes(*head) & !(u64::MAX >> (8 * decoded.len())),
            // Shorter keys at the very end are shifted in byte by byte.
            None => key_prefix(decoded),
        };
        member.byte_ordered = match decoded.len() <= 8 {
            true => member.prefix & 0x8080_8080_8080_8080 == 0,
            false => decoded.is_ascii(),
        } || decoded.iter().all(|byte| *byte < 0xF0);
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
    /// Set just before the value of the top-level member named by `opened` is parsed:
    /// when that value is an object, its members are recorded in `opened_members`.
    open_next: bool,
    opened: Option<&'static str>,
    opened_prefix: u64,
    opened_object: bool,
    opened_members: Vec<NestedMember>,
    opened_keys: String,
}

/// A member of the object value of the top-level member a caller asked to open (a case's
/// `expect`), as written in the input: a reader of that object needs neither to find its
/// members' ends nor to decode their keys again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NestedMember {
    pub key: NestedKey,
    pub raw_value: Range<usize>,
}

/// Where a [`NestedMember`]'s decoded key is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NestedKey {
    /// In the input, between its quotes (it has no escapes).
    InInput(Range<usize>),
    /// In [`CanonicalObject::opened_keys`] (it had escapes).
    Decoded(Range<usize>),
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
    /// The members of the opened member's value, in input order, when that value is an
    /// object (see [`Canonicalizer::object_opening`]).
    pub opened: Option<&'a [NestedMember]>,
    /// The decoded keys of the opened members that had escapes.
    pub opened_keys: &'a str,
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
        self.object_opening(text, wanted, excluded, None)
    }

    /// [`Self::object`], also recording the members of the top-level member `opened` when
    /// its value is an object.
    pub fn object_opening<'a>(
        &'a mut self,
        text: &str,
        wanted: &'static [&'static str],
        excluded: Option<&'static str>,
        opened: Option<&'static str>,
    ) -> Option<CanonicalObject<'a>> {
        self.out.clear();
        if self.opened != opened {
            self.opened = opened;
            self.opened_prefix = opened.map_or(0, |name| key_prefix(name.as_bytes()));
        }
        self.open_next = false;
        self.opened_object = false;
        self.opened_members.clear();
        self.opened_keys.clear();
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
            opened: self.opened_object.then_some(self.opened_members.as_slice()),
            opened_keys: &self.opened_keys,
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
        self.open_next = false;
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
        let opening = std::mem::take(&mut self.open_next);
        self.opened_object |= opening;
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
            self.open_next = depth == 1 && self.opens(&member, input);
            let value_end = self.parse_value(input, value_start, depth)?;
            self.open_next = false;
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
        if opening {
            self.record_opened(members_start)?;
        }
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
        if in_order {
            order.extend(0..members.len());
        } else {
            let by_prefixes = self.known_orders.find(members, order) || {
                let decided = order_by_prefixes(members, &mut self.by_prefix, order);
                if decided {
                    self.known_orders.remember(members, order);
                }
                decided
            };
            if !by_prefixes {
                order.extend(0..members.len());
                order
                    .sort_unstable_by(|left, right| members[*left].cmp_key(&members[*right], keys));
                if order.windows(2).any(|pair| {
                    members[pair[0]].cmp_key(&members[pair[1]], keys) == Ordering::Equal
                }) {
                    return None;
                }
            }
            // Two members of a nested object (`{"role":…,"content":…}`) swap places in
            // the object's own bytes: the first is set aside, the second moved to the
            // front, and the first written after it.
            if !top_level && members.len() == 2 {
                let first = members[0].segment.clone();
                let second = members[1].segment.clone();
                self.scratch.clear();
                self.scratch.extend_from_slice(&self.out[first.clone()]);
                self.out.copy_within(second.clone(), first.start);
                let comma = first.start + second.len();
                self.out[comma] = b',';
                self.out[comma + 1..second.end].copy_from_slice(&self.scratch);
                return Some(());
            }
            // Nothing follows the top-level object: its members are copied once, in order,
            // after it, and the canonical form starts there. A nested object's are copied
            // out, then back in order.
            let copied_from = match top_level {
                true => {
                    self.canonical_start = self.out.len();
                    None
                }
                false => {
                    self.reorder.clear();
                    self.reorder.extend_from_slice(&self.out[object_start..]);
                    self.out.truncate(object_start);
                    Some(object_start)
                }
            };
            self.out.push(b'{');
            for (position, index) in order.iter().enumerate() {
                if position > 0 {
                    self.out.push(b',');
                }
                let member = &mut members[*index];
                let new_start = self.out.len();
                let segment = member.segment.clone();
                match copied_from {
                    None => append_within(&mut self.out, segment),
                    Some(start) => append(
                        &mut self.out,
                        &self.reorder,
                        segment.start - start..segment.end - start,
                    ),
                }
                member.segment = new_start..self.out.len();
            }
            self.out.push(b'}');
        }
        if top_level {
            self.record_top_level(input, members_start);
        }
        Some(())
    }

    /// Whether `member` (at the top level) is the one whose object value is opened.
    #[inline]
    fn opens(&self, member: &Member, input: &[u8]) -> bool {
        let Some(name) = self.opened else {
            return false;
        };
        let keys = Keys {
            input,
            decoded: &self.keys,
        };
        member.key.len() == name.len()
            && member.prefix == self.opened_prefix
            && (name.len() <= 8 || member.key_bytes(keys)[8..] == name.as_bytes()[8..])
    }

    /// Records the members of the opened object, in input order, with their keys.
    fn record_opened(&mut self, members_start: usize) -> Option<()> {
        for member in &self.members[members_start..] {
            let key = match member.key_in_input {
                true => NestedKey::InInput(member.key.clone()),
                false => {
                    let decoded = std::str::from_utf8(self.keys.get(member.key.clone())?).ok()?;
                    let start = self.opened_keys.len();
                    self.opened_keys.push_str(decoded);
                    NestedKey::Decoded(start..self.opened_keys.len())
                }
            };
            self.opened_members.push(NestedMember {
                key,
                raw_value: member.raw_value.clone(),
            });
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
        let excluded = self.wanted.excluded;
        let members = &self.members[members_start..];
        let mut excluded_found = false;
        for member in self.order.iter().map(|index| &members[*index]) {
            if let Some(name) = self.wanted.find(member, keys) {
                self.top_level.push(TopLevelMember {
                    key: name,
                    raw_value: member.raw_value.clone(),
                });
                excluded_found |= excluded == Some(name);
            }
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

/// The top-level members a caller wants, each with its key's sort prefix: a member's key
/// is matched by its length and prefix (its whole text only past eight bytes), with no
/// call to compare bytes. Worked out again only when the caller asks for other members.
#[derive(Debug, Default)]
struct WantedKeys {
    asked: &'static [&'static str],
    excluded: Option<&'static str>,
    /// The wanted names then the excluded one, with their prefixes.
    names: Vec<(&'static str, u64)>,
}

impl WantedKeys {
    fn set(&mut self, wanted: &'static [&'static str], excluded: Option<&'static str>) {
        if std::ptr::eq(self.asked, wanted) && self.excluded == excluded && !self.names.is_empty() {
            return;
        }
        self.asked = wanted;
        self.excluded = excluded;
        self.names.clear();
        self.names.extend(
            wanted
                .iter()
                .chain(excluded.iter())
                .map(|name| (*name, key_prefix(name.as_bytes()))),
        );
    }

    fn find(&self, member: &Member, keys: Keys<'_>) -> Option<&'static str> {
        let length = member.key.len();
        let (name, _) = self.names.iter().find(|(name, prefix)| {
            name.len() == length
                && *prefix == member.prefix
                && (length <= 8 || member.key_bytes(keys)[8..] == name.as_bytes()[8..])
        })?;
        Some(name)
    }
}

/// The first eight bytes of `key`, big-endian, zero-padded: [`Member::prefix`].
fn key_prefix(key: &[u8]) -> u64 {
    key.iter()
        .take(8)
        .enumerate()
        .fold(0, |prefix, (index, byte)| {
            prefix | u64::from(*byte) << (56 - 8 * index)
        })
}

/// The key whose opening quote is at `start`, when it is ASCII without escapes and its
/// closing quote is among the eight bytes after the opening one: the position after the
/// closing quote, and the key's sort prefix (its bytes, big-endian, zero-padded).
#[inline]
fn short_ascii_key(input: &[u8], start: usize) -> Option<(usize, u64)> {
    let word = u64::from_le_bytes(*input.get(start + 1..)?.first_chunk::<8>()?);
    let length = strings::first_special(word)?;
    if input[start + 1 + length] != b'"' {
        return None;
    }
    // The key's bytes: the lowest `length` of the little-endian word.
    let key = match length {
        0 => 0,
        _ => word & (u64::MAX >> (64 - 8 * length)),
    };
    (key & 0x8080_8080_8080_8080 == 0).then(|| (start + length + 2, key.swap_bytes()))
}

/// Orders `members` by their key prefixes alone, which decides the order when every key is
/// byte-ordered and no two prefixes are equal (the usual object: short, distinct keys).
/// Sorting plain integers costs a fraction of comparing members. `false` when the prefixes
/// do not decide (then `order` is left empty).
fn order_by_prefixes(
    members: &[Member],
    by_prefix: &mut Vec<(u64, usize)>,
    order: &mut Vec<usize>,
) -> bool {
    if !members.iter().all(|member| member.byte_ordered) {
        return false;
    }
    by_prefix.clear();
    by_prefix.extend(
        members
            .iter()
            .enumerate()
            .map(|(index, member)| (member.prefix, index)),
    );
    by_prefix.sort_unstable_by_key(|(prefix, _)| *prefix);
    if by_prefix.windows(2).any(|pair| pair[0].0 == pair[1].0) {
        return false;
    }
    order.extend(by_prefix.iter().map(|(_, index)| *index));
    true
}

/// How many object shapes [`KnownOrders`] keeps.
const KNOWN_ORDERS: usize = 8;

/// The last few orders [`order_by_prefixes`] decided, each with the key prefixes it was
/// worked out from, in input order. The same prefixes in the same places give the same
/// order (the prefixes alone decided it), which then costs a comparison instead of a sort.
#[derive(Debug, Default)]
struct KnownOrders {
    shapes: Vec<(Vec<u64>, Vec<usize>)>,
    /// The shape the next one replaces, once there are [`KNOWN_ORDERS`].
    next: usize,
}

impl KnownOrders {
    fn find(&self, members: &[Member], order: &mut Vec<usize>) -> bool {
        let known = self.shapes.iter().find(|(prefixes, _)| {
            prefixes.len() == members.len()
                && prefixes
                    .iter()
                    .zip(members)
                    .all(|(prefix, member)| *prefix == member.prefix && member.byte_ordered)
        });
        match known {
            Some((_, known_order)) => {
                order.extend_from_slice(known_order);
                true
            }
            None => false,
        }
    }

    /// Keeps `order` for the prefixes of `members`, in place of the oldest shape once
    /// there are [`KNOWN_ORDERS`] (its buffers are reused).
    fn remember(&mut self, members: &[Member], order: &[usize]) {
        if self.shapes.len() < KNOWN_ORDERS {
            self.next = self.shapes.len();
            self.shapes.push(Default::default());
        }
        let (prefixes, known_order) = &mut self.shapes[self.next];
        prefixes.clear();
        prefixes.extend(members.iter().map(|member| member.prefix));
        known_order.clear();
        known_order.extend_from_slice(order);
        self.next = (self.next + 1) % KNOWN_ORDERS;
    }
}

/// The number literals in JSON `text` whose exact value a double does not hold (see
/// [`numbers::is_precise_number`]), in order, as byte ranges. Numbers inside strings are
/// not numbers; text that is not JSON ends the scan where it stops making sense.
pub fn imprecise_numbers(text: &[u8]) -> Vec<Range<usize>> {
    let mut found = Vec::new();
    let mut position = 0;
    while let Some(byte) = text.get(position) {
        match byte {
            b'"' => match string_end(text, position) {
                Some(end) => position = end,
                None => break,
            },
            b'-' | b'0'..=b'9' => {
                let Some(end) = number_end(text, position) else {
                    break;
                };
                if !is_precise_number(&text[position..end]) {
                    found.push(position..end);
                }
                position = end;
            }
            _ => position += 1,
        }
    }
    found
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
