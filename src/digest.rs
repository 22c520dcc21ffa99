//! The versioned hash recipes. Their names are stored in the lock, so a recipe's
//! output must never change: a new behaviour gets a new recipe name.

use crate::error::Error;
use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};
use std::fmt;

pub const CASE_RECIPE: &str = "case-v1";
pub const TREE_RECIPE: &str = "tree-v1";
pub const BYTES_RECIPE: &str = "bytes-v1";

/// A SHA-256 digest, written with its algorithm: `sha256:<64 hex>`. Kept as its 32 bytes
/// (a suite of 200k cases holds hundreds of thousands of them); ordered like its text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Digest([u8; 32]);

const DIGEST_PREFIX: &str = "sha256:";
/// How many hex digits of a digest messages print.
pub const SHORT_HEX_DIGITS: usize = 12;

impl Digest {
    pub fn of_bytes(bytes: &[u8]) -> Digest {
        Digest(Sha256::digest(bytes).into())
    }

    /// A digest from the 32 bytes of a SHA-256 hash.
    pub fn from_sha256_bytes(bytes: &[u8; 32]) -> Digest {
        Digest(*bytes)
    }

    /// The 32 bytes of the hash.
    pub fn sha256_bytes(&self) -> [u8; 32] {
        self.0
    }

    /// The hex part, without `sha256:`.
    pub fn hex(&self) -> String {
        hex(&self.0)
    }

    /// A short form for messages: `sha256:` and the first twelve hex digits, the prefix
    /// the seed articles print beside a moved completion (`sha256:0123456789ab`).
    pub fn short(&self) -> String {
        format!("{DIGEST_PREFIX}{}", hex(&self.0[..SHORT_HEX_DIGITS / 2]))
    }

    pub fn parse(text: &str) -> Result<Digest, String> {
        let hex = text
            .strip_prefix(DIGEST_PREFIX)
            .ok_or_else(|| format!("digest `{text}` must start with `sha256:`"))?;
        let malformed = || format!("digest `{text}` must be `sha256:` and 64 lowercase hex digits");
        if hex.len() != 64 {
            return Err(malformed());
        }
        let mut bytes = [0u8; 32];
        // Eight digits at a time (a lock has 200,000 digests).
        for (four, digits) in bytes
            .chunks_exact_mut(4)
            .zip(hex.as_bytes().chunks_exact(8))
        {
            let word = u64::from_be_bytes(digits.try_into().unwrap_or_default());
            let value = hex_word(word).ok_or_else(malformed)?;
            four.copy_from_slice(&value.to_be_bytes());
        }
        Ok(Digest(bytes))
    }
}

/// Eight lowercase hex digits (the first in the highest byte of `word`) as the 32-bit
/// number they write; `None` when any byte is not one.
fn hex_word(word: u64) -> Option<u32> {
    const ONES: u64 = u64::from_be_bytes([1; 8]);
    const HIGHS: u64 = ONES << 7;
    // For bytes below 0x80, the high bit of each byte of `word + (0x80 - limit)` says
    // whether the byte is at least `limit` (no carry crosses into the next byte).
    let at_least = |limit: u8| word.wrapping_add(ONES * u64::from(0x80 - limit)) & HIGHS;
    let digit = at_least(b'0') & !at_least(b'9' + 1);
    let letter = at_least(b'a') & !at_least(b'f' + 1);
    if word & HIGHS != 0 || digit | letter != HIGHS {
        return None;
    }
    // Each byte's value: its low four bits, plus nine for a letter.
    let nibbles = (word & (ONES * 0x0f)) + (letter >> 7) * 9;
    // Pairs of nibbles into bytes, then the four bytes together.
    let pairs = (nibbles | nibbles >> 4) & 0x00ff_00ff_00ff_00ff;
    let quads = (pairs | pairs >> 8) & 0x0000_ffff_0000_ffff;
    Some((quads | quads >> 16) as u32)
}

impl TryFrom<String> for Digest {
    type Error = String;
    fn try_from(text: String) -> Result<Self, Self::Error> {
        Digest::parse(&text)
    }
}

impl From<Digest> for String {
    fn from(digest: Digest) -> String {
        digest.to_string()
    }
}

impl fmt::Display for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write_text(f)
    }
}

impl Digest {
    /// `sha256:` and the hex digits, into any writer (the lock writes 200,000 of them).
    pub fn write_text(&self, out: &mut impl fmt::Write) -> fmt::Result {
        let mut text = [0u8; DIGEST_PREFIX.len() + 64];
        text[..DIGEST_PREFIX.len()].copy_from_slice(DIGEST_PREFIX.as_bytes());
        for (pair, byte) in text[DIGEST_PREFIX.len()..].chunks_exact_mut(2).zip(self.0) {
            pair.copy_from_slice(&HEX_PAIRS[usize::from(byte)]);
        }
        // Only ASCII was written.
        out.write_str(std::str::from_utf8(&text).unwrap_or_default())
    }
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

fn hex(bytes: &[u8]) -> String {
    let mut hex = String::with_capacity(bytes.len() * 2);
    push_hex(&mut hex, bytes);
    hex
}

const HEX_DIGITS: &[u8; 16] = b"0123456789abcdef";

/// Each byte as its two lowercase hex digits: a digest is written a byte at a time.
const HEX_PAIRS: [[u8; 2]; 256] = {
    let mut pairs = [[0u8; 2]; 256];
    let mut byte = 0;
    while byte < 256 {
        pairs[byte] = [HEX_DIGITS[byte >> 4], HEX_DIGITS[byte & 0xf]];
        byte += 1;
    }
    pairs
};

fn push_hex(out: &mut String, bytes: &[u8]) {
    for byte in bytes {
        out.push(char::from(HEX_DIGITS[usize::from(byte >> 4)]));
        out.push(char::from(HEX_DIGITS[usize::from(byte & 0xf)]));
    }
}

/// RFC 8785 (JCS) serialization of a JSON value.
pub fn canonical_json(value: &serde_json::Value) -> Result<String, Error> {
    serde_json_canonicalizer::to_string(value)
        .map_err(|error| Error::Canonicalize(error.to_string()))
}

/// `case-v1`: sha256 of the case's RFC 8785 serialization.
pub fn case_digest(case: &serde_json::Value) -> Result<Digest, Error> {
    Ok(Digest::of_bytes(canonical_json(case)?.as_bytes()))
}

/// A case whose `vars` name files: sha256 over its `case-v1` hex digest, then
/// `\n<path>\0<bytes-v1 hex>` for each file, sorted by path. Cases naming no file keep
/// their `case-v1` digest.
pub fn with_files(case: &Digest, files: &[(String, Digest)]) -> Digest {
    let mut text = case.hex();
    for (path, digest) in files {
        text.push('\n');
        text.push_str(path);
        text.push('\0');
        text.push_str(&digest.hex());
    }
    Digest::of_bytes(text.as_bytes())
}

/// `bytes-v1`: sha256 of exact bytes.
pub fn bytes_digest(bytes: &[u8]) -> Digest {
    Digest::of_bytes(bytes)
}

/// The kind of a tree entry, as `tree-v1` writes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum EntryKind {
    /// A regular file.
    #[serde(rename = "f")]
    File,
    /// A regular file with an executable bit.
    #[serde(rename = "x")]
    Executable,
    /// A symlink, hashed as its target string and never followed.
    #[serde(rename = "l")]
    Symlink,
}

impl EntryKind {
    pub fn letter(self) -> char {
        match self {
            EntryKind::File => 'f',
            EntryKind::Executable => 'x',
            EntryKind::Symlink => 'l',
        }
    }
}

/// One `tree-v1` entry: kind, content digest and a validated relative path.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct TreeEntry {
    pub path: String,
    pub kind: EntryKind,
    pub digest: Digest,
}

/// `tree-v1`: one line per entry, `<kind> <hex> <path>\n`, byte-sorted by path; sha256 of the lines.
pub fn tree_digest(entries: &[TreeEntry]) -> Result<Digest, Error> {
    let mut sorted: Vec<&TreeEntry> = entries.iter().collect();
    sorted.sort_by(|left, right| left.path.as_bytes().cmp(right.path.as_bytes()));
    let mut listing = String::new();
    let mut previous: Option<&str> = None;
    for entry in sorted {
        validate_relative_path(&entry.path)?;
        if previous == Some(entry.path.as_str()) {
            return Err(Error::InvalidPath {
                path: entry.path.clone(),
                reason: "listed twice".into(),
            });
        }
        previous = Some(&entry.path);
        listing.push(entry.kind.letter());
        listing.push(' ');
        listing.push_str(&entry.digest.hex());
        listing.push(' ');
        listing.push_str(&entry.path);
        listing.push('\n');
    }
    Ok(Digest::of_bytes(listing.as_bytes()))
}

/// Rejects absolute paths, `..`, empty components, backslashes, NUL and newlines.
pub fn validate_relative_path(path: &str) -> Result<(), Error> {
    let reason = if path.is_empty() {
        Some("empty path")
    } else if path.starts_with('/') {
        Some("absolute paths are not allowed")
    } else if path.contains(['\0', '\n', '\r']) {
        Some("NUL and newline are not allowed in paths")
    } else if path.contains('\\') {
        Some("use `/` as the separator")
    } else if path.split('/').any(|part| part == "..") {
        Some("`..` is not allowed")
    } else if path.split('/').any(|part| part.is_empty() || part == ".") {
        Some("empty or `.` path components are not allowed")
    } else {
        None
    };
    match reason {
        Some(reason) => Err(Error::InvalidPath {
            path: path.escape_debug().to_string(),
            reason: reason.into(),
        }),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    // Test vectors from RFC 8785 section 3.2.2 (sorting) and appendix B (numbers).
    #[test]
    fn jcs_matches_rfc_8785_examples() {
        let input = r#"{
          "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
          "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
          "literals": [null, true, false]
        }"#;
        let value: serde_json::Value = serde_json::from_str(input).unwrap();
        assert_eq!(
            canonical_json(&value).unwrap(),
            r#"{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}"#
        );
    }

    #[test]
    fn jcs_sorts_keys_by_utf16_code_units() {
        // RFC 8785 section 3.2.3.
        let input = r#"{"\u20ac":"Euro Sign","\r":"Carriage Return","\ufb33":"Hebrew Letter Dalet With Dagesh","1":"One","\ud83d\ude00":"Emoji: Grinning Face","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis"}"#;
        let value: serde_json::Value = serde_json::from_str(input).unwrap();
        assert_eq!(
            canonical_json(&value).unwrap(),
            "{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\u{80}\":\"Control\",\"\u{f6}\":\"Latin Small Letter O With Diaeresis\",\"\u{20ac}\":\"Euro Sign\",\"\u{1f600}\":\"Emoji: Grinning Face\",\"\u{fb33}\":\"Hebrew Letter Dalet With Dagesh\"}"
        );
    }

    #[test]
    fn jcs_number_vectors_from_rfc_8785_appendix_b() {
        for (bits, expected) in [
            (0x0000000000000000_u64, "0"),
            (0x8000000000000000, "0"),
            (0x0000000000000001, "5e-324"),
            (0x7fefffffffffffff, "1.7976931348623157e+308"),
            (0x4340000000000000, "9007199254740992"),
            (0x444b1ae4d6e2ef50, "1e+21"),
            (0x3eb0c6f7a0b5ed8d, "0.000001"),
            (0x3eb0c6f7a0b5ed8c, "9.999999999999997e-7"),
            (0x41b3de4355555555, "333333333.3333333"),
        ] {
            let value = json!(f64::from_bits(bits));
            assert_eq!(canonical_json(&value).unwrap(), expected, "bits {bits:#x}");
        }
    }

    #[test]
    fn case_digest_ignores_formatting_but_not_values() {
        let compact: serde_json::Value = serde_json::from_str(r#"{"id":"a","version":1}"#).unwrap();
        let spaced: serde_json::Value =
            serde_json::from_str("{ \"version\" : 1,\n \"id\" : \"a\" }").unwrap();
        let edited: serde_json::Value = serde_json::from_str(r#"{"id":"a","version":2}"#).unwrap();
        assert_eq!(
            case_digest(&compact).unwrap(),
            case_digest(&spaced).unwrap()
        );
        assert_ne!(
            case_digest(&compact).unwrap(),
            case_digest(&edited).unwrap()
        );
        // Fixed vector: the canonical form is exactly `{"id":"a","version":1}`.
        assert_eq!(
            case_digest(&spaced).unwrap(),
            bytes_digest(br#"{"id":"a","version":1}"#)
        );
    }

    #[test]
    fn digests_order_and_round_trip_like_their_text() {
        let mut digests: Vec<Digest> = (0u8..40).map(|n| bytes_digest(&[n])).collect();
        let mut texts: Vec<String> = digests.iter().map(Digest::to_string).collect();
        digests.sort();
        texts.sort();
        assert_eq!(
            digests.iter().map(Digest::to_string).collect::<Vec<_>>(),
            texts
        );
        for digest in &digests {
            assert_eq!(Digest::parse(&digest.to_string()), Ok(*digest));
            assert_eq!(
                digest.short(),
                digest.to_string()[..DIGEST_PREFIX.len() + SHORT_HEX_DIGITS]
            );
            assert_eq!(format!("sha256:{}", digest.hex()), digest.to_string());
        }
    }

    #[test]
    fn sha256_of_known_input() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(
            bytes_digest(b"").to_string(),
            "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }

    #[test]
    fn tree_digest_is_the_sha256_of_sorted_lines() {
        let entries = vec![
            TreeEntry {
                path: "scripts/run.sh".into(),
                kind: EntryKind::Executable,
                digest: bytes_digest(b"#!/bin/sh\n"),
            },
            TreeEntry {
                path: "SKILL.md".into(),
                kind: EntryKind::File,
                digest: bytes_digest(b"abc"),
            },
        ];
        let expected_listing = format!(
            "f {} SKILL.md\nx {} scripts/run.sh\n",
            sha256_hex(b"abc"),
            sha256_hex(b"#!/bin/sh\n")
        );
        assert_eq!(
            tree_digest(&entries).unwrap(),
            bytes_digest(expected_listing.as_bytes())
        );
    }

    #[test]
    fn tree_digest_rejects_bad_paths() {
        for bad in ["../x", "/abs", "a/../b", "a\nb", "a\0b", "", "a//b", "./a"] {
            let entries = vec![TreeEntry {
                path: bad.into(),
                kind: EntryKind::File,
                digest: bytes_digest(b""),
            }];
            assert!(tree_digest(&entries).is_err(), "{bad:?} must be rejected");
        }
    }

    #[test]
    fn digest_round_trips_through_its_bytes() {
        let digest = bytes_digest(b"abc");
        assert_eq!(Digest::from_sha256_bytes(&digest.sha256_bytes()), digest);
        assert_eq!(digest.sha256_bytes()[0], 0xba);
    }

    #[test]
    fn digest_parse_validates() {
        assert!(Digest::parse("sha256:abc").is_err());
        assert!(Digest::parse(&format!("md5:{}", "0".repeat(64))).is_err());
        assert!(Digest::parse(&format!("sha256:{}", "A".repeat(64))).is_err());
        assert!(Digest::parse(&format!("sha256:{}", "a".repeat(64))).is_ok());
        // One bad digit anywhere, the neighbours of the hex ranges included.
        let good = "0123456789abcdef".repeat(4);
        for position in 0..64 {
            for bad in ["/", ":", "`", "g", "G", "F", " ", "\u{e9}"] {
                let mut text = good.clone();
                // Same length: a two-byte character takes the place of two digits.
                let end = (position + bad.len()).min(64);
                text.replace_range(end - bad.len()..end, bad);
                let text = format!("sha256:{text}");
                assert!(Digest::parse(&text).is_err(), "{text}");
            }
        }
    }

    #[test]
    fn digest_parse_reads_every_digit_in_every_place() {
        let base = "0123456789abcdef".repeat(4);
        for position in 0..64 {
            for byte in 0u8..0x80 {
                let mut text = base.clone().into_bytes();
                text[position] = byte;
                let hex = String::from_utf8(text).unwrap();
                let parsed = Digest::parse(&format!("sha256:{hex}"));
                match byte {
                    b'0'..=b'9' | b'a'..=b'f' => {
                        let expected: Vec<u8> = (0..32)
                            .map(|at| u8::from_str_radix(&hex[2 * at..2 * at + 2], 16).unwrap())
                            .collect();
                        assert_eq!(
                            parsed.map(|digest| digest.0.to_vec()),
                            Ok(expected),
                            "{hex}"
                        );
                    }
                    _ => assert!(parsed.is_err(), "{hex:?}"),
                }
            }
        }
        let all_high = Digest::parse(&format!("sha256:{}", "f".repeat(64))).unwrap();
        assert_eq!(all_high.0, [0xff; 32]);
    }
}
