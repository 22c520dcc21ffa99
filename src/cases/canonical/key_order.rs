//! RFC 8785 member order: UTF-16 code units of the decoded keys, decided from 8-byte key
//! prefixes whenever they can decide it (sorting integers, or reusing the order of an
//! object of the same shape), apart from the parser that feeds it.

use super::strings::{self, append, append_within};
use super::Canonicalizer;
use std::cmp::Ordering;
use std::ops::Range;

/// One member of an object being canonicalized.
#[derive(Debug, Clone)]
pub(super) struct Member {
    /// The decoded key: in the input when it has no escapes (it is its own decoding),
    /// else in `Canonicalizer::keys`.
    pub(super) key: Range<usize>,
    pub(super) key_in_input: bool,
    /// `"key":value` in canonical form, in `Canonicalizer::out`.
    pub(super) segment: Range<usize>,
    /// The value as written in the input.
    pub(super) raw_value: Range<usize>,
    /// The first eight bytes of the decoded key, big-endian, zero-padded: decides most
    /// comparisons without looking at the key.
    pub(super) prefix: u64,
    /// Whether the key's UTF-8 byte order is its UTF-16 order (no character above U+FFFF).
    pub(super) byte_ordered: bool,
}

/// Where decoded keys are: the input line and the buffer of keys that had escapes.
#[derive(Clone, Copy)]
pub(super) struct Keys<'a> {
    pub(super) input: &'a [u8],
    pub(super) decoded: &'a [u8],
}

impl Member {
    pub(super) fn new(key: Range<usize>, key_in_input: bool, keys: Keys<'_>) -> Self {
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

    pub(super) fn key_bytes<'k>(&self, keys: Keys<'k>) -> &'k [u8] {
        match self.key_in_input {
            true => &keys.input[self.key.clone()],
            false => &keys.decoded[self.key.clone()],
        }
    }

    /// RFC 8785 order: UTF-16 code units of the decoded keys.
    #[inline]
    pub(super) fn cmp_key(&self, other: &Member, keys: Keys<'_>) -> Ordering {
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

impl Canonicalizer {
    /// Puts the members in RFC 8785 order (UTF-16 code units of the decoded keys); refuses
    /// duplicate keys. At the top level also records the wanted members.
    pub(super) fn finish_object(
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
}

/// The first eight bytes of `key`, big-endian, zero-padded: [`Member::prefix`].
pub(super) fn key_prefix(key: &[u8]) -> u64 {
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
pub(super) fn short_ascii_key(input: &[u8], start: usize) -> Option<(usize, u64)> {
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
pub(super) fn order_by_prefixes(
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
pub(super) const KNOWN_ORDERS: usize = 8;

/// The last few orders [`order_by_prefixes`] decided, each with the key prefixes it was
/// worked out from, in input order. The same prefixes in the same places give the same
/// order (the prefixes alone decided it), which then costs a comparison instead of a sort.
#[derive(Debug, Default)]
pub(super) struct KnownOrders {
    shapes: Vec<(Vec<u64>, Vec<usize>)>,
    /// The shape the next one replaces, once there are [`KNOWN_ORDERS`].
    next: usize,
}

impl KnownOrders {
    pub(super) fn find(&self, members: &[Member], order: &mut Vec<usize>) -> bool {
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
    pub(super) fn remember(&mut self, members: &[Member], order: &[usize]) {
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

/// Compares two UTF-8 strings by their UTF-16 code units, as RFC 8785 sorts keys.
pub(super) fn utf16_cmp(left: &[u8], right: &[u8]) -> Ordering {
    if left.is_ascii() && right.is_ascii() {
        return left.cmp(right);
    }
    match (std::str::from_utf8(left), std::str::from_utf8(right)) {
        (Ok(left), Ok(right)) => left.encode_utf16().cmp(right.encode_utf16()),
        _ => left.cmp(right),
    }
}
