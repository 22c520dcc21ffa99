//! `expect` read straight from JSON text the canonicalizer has already accepted (valid
//! JSON, no duplicate keys): the hot path of a check, a few times cheaper than going
//! through serde. It reads exactly what the serde reading does (tests hold the two to
//! each other); anything unexpected is `None` and the caller takes the reference path.

use super::{Assertions, Expect, FromLoose, Member, Scalar};
use crate::cases::canonical::{read_string, skip_value, skip_whitespace, NestedKey, NestedMember};
use serde_json::Value;
use std::borrow::Cow;
use std::ops::Range;

impl<'a> Expect<'a> {
    /// The `expect` member from the members the canonicalizer recorded of it
    /// ([`Canonicalizer::object_opening`]): the same reading as [`Self::of_checked_text`]
    /// of the member's text `raw`, without finding the members' ends or decoding their
    /// keys again. `members` is `None` when the member is not an object.
    ///
    /// [`Canonicalizer::object_opening`]: crate::cases::canonical::Canonicalizer::object_opening
    pub fn of_opened_members(
        text: &'a str,
        raw: Range<usize>,
        members: Option<&[NestedMember]>,
        decoded_keys: &str,
    ) -> Option<Expect<'a>> {
        let Some(members) = members else {
            return Expect::of_checked_text(text.get(raw)?);
        };
        let mut assertions = Assertions::default();
        for member in members {
            let key = match &member.key {
                NestedKey::InInput(range) => Cow::Borrowed(text.get(range.clone())?),
                NestedKey::Decoded(range) => {
                    Cow::Owned(decoded_keys.get(range.clone())?.to_owned())
                }
            };
            let value = &member.raw_value;
            let end = read_member(&mut assertions, key, text, value.start, Some(value.end))?;
            (end == value.end).then_some(())?;
        }
        Some(Expect::Object(assertions))
    }

    /// The `expect` member from its JSON text, which the canonicalizer accepted.
    pub fn of_checked_text(text: &'a str) -> Option<Expect<'a>> {
        let bytes = text.as_bytes();
        let start = skip_whitespace(bytes, 0);
        match bytes.get(start)? {
            b'{' => {}
            b'n' => return Some(Expect::Missing),
            _ => return Some(Expect::NotObject),
        }
        let mut assertions = Assertions::default();
        let mut position = skip_whitespace(bytes, start + 1);
        if bytes.get(position) == Some(&b'}') {
            return Some(Expect::Object(assertions));
        }
        loop {
            let (key, after_key) = read_string(text, position)?;
            position = skip_whitespace(bytes, after_key);
            if bytes.get(position) != Some(&b':') {
                return None;
            }
            let value_start = skip_whitespace(bytes, position + 1);
            let value_end = read_member(&mut assertions, key, text, value_start, None)?;
            position = skip_whitespace(bytes, value_end);
            match bytes.get(position)? {
                b',' => position = skip_whitespace(bytes, position + 1),
                b'}' => return Some(Expect::Object(assertions)),
                _ => return None,
            }
        }
    }
}

/// The member `key` whose value starts at `start` in `text` into `assertions`; the position
/// after the value. `end`, when known, spares finding it again where the value itself need
/// not be read (lists are read where they stand: skipping them first would scan them twice).
fn read_member<'a>(
    assertions: &mut Assertions<'a>,
    key: Cow<'a, str>,
    text: &'a str,
    start: usize,
    end: Option<usize>,
) -> Option<usize> {
    let end_of_value = || end.or_else(|| skip_value(text.as_bytes(), start));
    Some(match Member::of(&key) {
        Member::Value => {
            let value_end = end_of_value()?;
            let raw = text.get(start..value_end)?;
            assertions.set_value(&key, serde_json::from_str::<Value>(raw).ok()?);
            value_end
        }
        Member::Strings => {
            let (strings, value_end) = loose(text, start)?;
            assertions.set_strings(&key, strings);
            value_end
        }
        Member::Clarification => {
            let (clarification, value_end) = loose(text, start)?;
            assertions.members += 1;
            assertions.require_clarification = Some(clarification);
            value_end
        }
        Member::Unknown => {
            let value_end = end_of_value()?;
            assertions.members += 1;
            assertions.unknown.push(key);
            value_end
        }
    })
}

/// An assertion's value from the text at `start`, with the position after it, through the
/// same [`FromLoose`] rules as the serde reading: a string, a list (of strings or not),
/// `true`/`false`, or anything else.
fn loose<'a, T: FromLoose<'a>>(text: &'a str, start: usize) -> Option<(T, usize)> {
    Some(match text.as_bytes().get(start)? {
        b'"' => {
            let (string, end) = read_string(text, start)?;
            (T::scalar(Scalar::Text(string)), end)
        }
        b'[' => {
            let (items, end) = string_list(text, start)?;
            (T::list(items), end)
        }
        _ => {
            let end = skip_value(text.as_bytes(), start)?;
            let scalar = match text.get(start..end)? {
                "true" => Scalar::Bool(true),
                "false" => Scalar::Bool(false),
                _ => Scalar::Other,
            };
            (T::scalar(scalar), end)
        }
    })
}

/// The items of the JSON array at `start`, `Some` when all of them are strings (`None`
/// inside: an item that is not; the outer `None`: text that is not an array), with the
/// position after the array.
#[allow(clippy::option_option)]
fn string_list(text: &str, start: usize) -> Option<(Option<Vec<Cow<'_, str>>>, usize)> {
    let bytes = text.as_bytes();
    let mut items = Some(Vec::new());
    let mut position = skip_whitespace(bytes, start + 1);
    if bytes.get(position) == Some(&b']') {
        return Some((items, position + 1));
    }
    loop {
        let end = match bytes.get(position)? {
            b'"' => {
                let (item, end) = read_string(text, position)?;
                if let Some(list) = items.as_mut() {
                    list.push(item);
                }
                end
            }
            _ => {
                items = None;
                skip_value(bytes, position)?
            }
        };
        position = skip_whitespace(bytes, end);
        match bytes.get(position)? {
            b',' => position = skip_whitespace(bytes, position + 1),
            b']' => return Some((items, position + 1)),
            _ => return None,
        }
    }
}
