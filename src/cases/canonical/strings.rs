//! JSON strings as the canonicalizer reads and writes them: finding their special bytes
//! sixteen or eight at a time, decoding escapes, writing RFC 8785 escapes.

/// The position after the closing quote of the string whose opening quote is at `start`.
pub(super) fn string_end(input: &[u8], start: usize) -> Option<usize> {
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

/// The position of the first byte at or after `position` that is not JSON whitespace.
/// Compact JSON has none there and `json.dumps` one space: both are settled by looking at
/// two bytes, without a loop.
#[inline]
pub(crate) fn skip_whitespace(input: &[u8], position: usize) -> usize {
    match input.get(position..position + 2) {
        // Bytes above the space are never whitespace.
        Some([first, _]) if *first > b' ' => position,
        Some([b' ', second]) if *second > b' ' => position + 1,
        _ => skip_whitespace_run(input, position),
    }
}

fn skip_whitespace_run(input: &[u8], mut position: usize) -> usize {
    while let Some(b' ' | b'\t' | b'\n' | b'\r') = input.get(position) {
        position += 1;
    }
    position
}

/// Finds the end of the string starting at `start` (its opening quote). Returns the
/// position after the closing quote, and whether the decoded text was written to `scratch`
/// (only when the string has escapes; otherwise the raw bytes are the decoded text).
#[inline]
pub(super) fn decode_string(
    input: &[u8],
    start: usize,
    scratch: &mut Vec<u8>,
) -> Option<(usize, bool)> {
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
pub(super) fn write_string_value(input: &[u8], start: usize, out: &mut Vec<u8>) -> Option<usize> {
    // Text is copied in runs as long as its canonical form is what is written: short
    // escapes (`\n`, `\"`, …) are their own canonical form and do not end a run.
    let mut run_start = start;
    let mut position = start + 1;
    loop {
        position += next_special(input.get(position..)?)?;
        match input[position] {
            b'"' => {
                append(out, input, run_start..position + 1);
                return Some(position + 1);
            }
            b'\\' => {
                let escape = *input.get(position + 1)?;
                if let b'"' | b'\\' | b'b' | b'f' | b'n' | b'r' | b't' = escape {
                    position += 2;
                    continue;
                }
                append(out, input, run_start..position);
                position += 2;
                match escape {
                    b'/' => out.push(b'/'),
                    b'u' => {
                        let (character, end) = decode_unicode_escape(input, position)?;
                        position = end;
                        let mut buffer = [0u8; 4];
                        let length = character.encode_utf8(&mut buffer).len();
                        match character {
                            '"' | '\\' | '\u{0}'..='\u{1f}' => {
                                write_escaped(&buffer[..length], out)
                            }
                            // One to four bytes: all four copied at once, then cut back.
                            _ => {
                                let kept = out.len() + length;
                                out.extend_from_slice(&buffer);
                                out.truncate(kept);
                            }
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

/// Appends `from[range]` to `out`. Most runs copied while canonicalizing are a few bytes
/// long (keys, words between escapes, short members): one is copied as a fixed block of
/// 16 or 32 bytes, when `from` has that many, and cut back, instead of through a call
/// that copies any length.
#[inline]
pub(super) fn append(out: &mut Vec<u8>, from: &[u8], range: std::ops::Range<usize>) {
    let length = range.len();
    let rest = from.get(range.start..).unwrap_or_default();
    let kept = out.len() + length;
    if length <= 16 {
        if let Some(block) = rest.first_chunk::<16>() {
            out.extend_from_slice(block);
            out.truncate(kept);
            return;
        }
    } else if length <= 32 {
        if let Some(block) = rest.first_chunk::<32>() {
            out.extend_from_slice(block);
            out.truncate(kept);
            return;
        }
    }
    out.extend_from_slice(&from[range]);
}

/// [`append`] of a range of `out` itself.
#[inline]
pub(super) fn append_within(out: &mut Vec<u8>, range: std::ops::Range<usize>) {
    let length = range.len();
    let kept = out.len() + length;
    if length <= 32 {
        if let Some(block) = out
            .get(range.start..)
            .and_then(|rest| rest.first_chunk::<32>().copied())
        {
            out.extend_from_slice(&block);
            out.truncate(kept);
            return;
        }
    }
    out.extend_from_within(range);
}

/// The offset of the first `"`, `\` or control character in `bytes`, eight bytes at a
/// time.
#[inline]
pub(super) fn next_special(bytes: &[u8]) -> Option<usize> {
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
pub(super) fn first_special(word: u64) -> Option<usize> {
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
pub(super) fn write_canonical_string(decoded: &[u8], out: &mut Vec<u8>) {
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
