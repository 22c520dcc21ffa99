//! TOML keys, basic strings and digests read back exactly as the lock's renderer writes
//! them, without a TOML parser.

use crate::hash::Digest;
use crate::model::lock::{is_bare_key, toml_string};
use std::borrow::Cow;

/// [`split_key`] for a key written as `render` writes it: bare whenever it can be.
pub(super) fn split_rendered_key(text: &str) -> Option<(Cow<'_, str>, Option<&str>)> {
    let (key, rest) = split_key(text)?;
    if text.starts_with('"') {
        let written = &text[..text.len() - rest.map_or(0, |rest| rest.len() + 1)];
        if is_bare_key(&key) || toml_string(&key) != written {
            return None;
        }
    }
    Some((key, rest))
}

/// The first key of a dotted header and what follows its dot.
pub(super) fn split_key(text: &str) -> Option<(Cow<'_, str>, Option<&str>)> {
    let end = if text.starts_with('"') {
        quoted_end(text)?
    } else {
        memchr::memchr(b'.', text.as_bytes()).unwrap_or(text.len())
    };
    let (key, rest) = text.split_at(end);
    let key = read_key(key)?;
    match rest.is_empty() {
        true => Some((key, None)),
        false => Some((key, Some(rest.strip_prefix('.')?))),
    }
}

/// `key = value` split at the first ` = `.
pub(super) fn split_assignment(line: &str) -> Option<(&str, &str)> {
    let bytes = line.as_bytes();
    memchr::memchr_iter(b'=', bytes)
        .find(|&at| at > 0 && bytes[at - 1] == b' ' && bytes.get(at + 1) == Some(&b' '))
        .map(|at| (&line[..at - 1], &line[at + 2..]))
}

/// A quoted digest, `"sha256:…"`.
pub(super) fn read_digest(text: &str) -> Option<Digest> {
    Digest::parse(&read_string(text)?).ok()
}

/// The byte after the closing quote of the basic string `text` starts with.
fn quoted_end(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut position = 1;
    while position < bytes.len() {
        match bytes[position] {
            b'\\' => position += 2,
            b'"' => return Some(position + 1),
            _ => position += 1,
        }
    }
    None
}

pub(super) fn read_key(text: &str) -> Option<Cow<'_, str>> {
    if text.starts_with('"') {
        return read_string(text);
    }
    is_bare_key(text).then_some(Cow::Borrowed(text))
}

/// A TOML basic string with the escapes `toml_string` writes.
pub(super) fn read_string(text: &str) -> Option<Cow<'_, str>> {
    let inner = text.strip_prefix('"')?.strip_suffix('"')?;
    if memchr::memchr2(b'\\', b'"', inner.as_bytes()).is_none() {
        return Some(Cow::Borrowed(inner));
    }
    let mut out = String::with_capacity(inner.len());
    let mut characters = inner.chars();
    while let Some(character) = characters.next() {
        match character {
            '"' => return None,
            '\\' => out.push(match characters.next()? {
                '"' => '"',
                '\\' => '\\',
                'n' => '\n',
                't' => '\t',
                'r' => '\r',
                'u' => {
                    let hex: String = characters.by_ref().take(4).collect();
                    char::from_u32(u32::from_str_radix(&hex, 16).ok()?)?
                }
                _ => return None,
            }),
            other => out.push(other),
        }
    }
    Some(Cow::Owned(out))
}
