//! JSON numbers: the grammar, and ECMAScript formatting of their f64 values as RFC 8785
//! requires (short integers and plain decimals are their own formatting).

use super::EXACT_INTEGER_DIGITS;

/// The end of the JSON number starting at `start`, validating the grammar
/// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`.
pub(super) fn number_end(input: &[u8], start: usize) -> Option<usize> {
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
pub(super) fn write_canonical_number(literal: &[u8], out: &mut Vec<u8>) -> Option<()> {
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
pub(super) fn is_shortest_decimal(digits: &[u8]) -> bool {
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
pub(super) fn write_formatted_number(literal: &[u8], out: &mut Vec<u8>) -> Option<()> {
    let value: f64 = std::str::from_utf8(literal).ok()?.parse().ok()?;
    if !value.is_finite() {
        return None;
    }
    let mut buffer = ryu_js::Buffer::new();
    out.extend_from_slice(buffer.format_finite(value).as_bytes());
    Some(())
}
