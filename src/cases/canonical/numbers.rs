//! JSON numbers: the grammar, and ECMAScript formatting of their f64 values as RFC 8785
//! requires (short integers and plain decimals are their own formatting).

use super::strings::string_end;
use super::EXACT_INTEGER_DIGITS;
use std::ops::Range;

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
/// Short integers and plain decimals print as themselves. `Some(false)` when the literal
/// is finer than the double (see [`is_precise_number`]).
pub(super) fn write_canonical_number(literal: &[u8], out: &mut Vec<u8>) -> Option<bool> {
    if is_own_form(literal) {
        match literal {
            b"-0" => out.push(b'0'),
            _ => out.extend_from_slice(literal),
        }
        return Some(true);
    }
    let start = out.len();
    let value = write_formatted_number(literal, out)?;
    let written = DecimalValue::of(literal);
    // A plain integer is taken at its word (an id, a count): it must survive as written.
    let integer = literal
        .iter()
        .all(|byte| byte.is_ascii_digit() || *byte == b'-');
    Some(
        written == DecimalValue::of(&out[start..])
            || (!integer && spells_its_double(&written, value)),
    )
}

/// Whether the number `literal` (JSON grammar) is no finer than the double RFC 8785
/// hashes it as. It is when the double's RFC 8785 form keeps its value (`1.50`, `1E2`,
/// `0.1`) or when it is how a printer writes that double with as many digits as it has
/// (`0.69999999999999996` is 0.7 written with 17, as `%.17g` does; a plain integer is
/// never such a spelling). It is not for an integer that RFC 8785 writes otherwise, such
/// as `9007199254740993`, more than 17 significant digits, or a value that becomes zero
/// (`1e-400`): those hash as a neighbour, and an edit below that precision would not move
/// the digest. A literal out of a double's range is refused elsewhere and counts as
/// precise here.
pub(crate) fn is_precise_number(literal: &[u8]) -> bool {
    is_own_form(literal) || write_canonical_number(literal, &mut Vec::new()).unwrap_or(true)
}

/// The most significant digits a double ever needs to be written exactly enough to read
/// back as itself.
const DOUBLE_ROUND_TRIP_DIGITS: usize = 17;

/// Whether `written` is `value` printed, correctly rounded, with as many significant
/// digits as `written` has (at most 17).
fn spells_its_double(written: &DecimalValue<'_>, value: f64) -> bool {
    let digits = written.digits.len();
    // Zero (no digits) never gets here: every spelling of it is its RFC 8785 form.
    let Some(after_the_first) = digits.checked_sub(1) else {
        return false;
    };
    if digits > DOUBLE_ROUND_TRIP_DIGITS {
        return false;
    }
    let printed = format!("{:.*e}", after_the_first, value);
    DecimalValue::of(printed.as_bytes()) == *written
}

/// The RFC 8785 form of the number `literal` (`None` out of a double's range).
pub(crate) fn canonical_number(literal: &[u8]) -> Option<String> {
    let mut out = Vec::new();
    write_canonical_number(literal, &mut out)?;
    String::from_utf8(out).ok()
}

/// Short integers and plain decimals: their ECMAScript form is the literal (but `-0`,
/// which prints as `0`).
fn is_own_form(literal: &[u8]) -> bool {
    let digits = literal.strip_prefix(b"-").unwrap_or(literal);
    let short_integer =
        digits.len() <= EXACT_INTEGER_DIGITS && digits.iter().all(u8::is_ascii_digit);
    short_integer || is_shortest_decimal(digits)
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

/// The general case: the literal's value formatted by `ryu-js` (ECMAScript rules). Returns
/// that value.
pub(super) fn write_formatted_number(literal: &[u8], out: &mut Vec<u8>) -> Option<f64> {
    let value: f64 = std::str::from_utf8(literal).ok()?.parse().ok()?;
    if !value.is_finite() {
        return None;
    }
    let mut buffer = ryu_js::Buffer::new();
    out.extend_from_slice(buffer.format_finite(value).as_bytes());
    Some(value)
}

/// The exact value of a decimal literal (JSON's grammar, or ECMAScript's `1e+21`): equal
/// for equal values however they are written. Zero has no sign.
#[derive(Debug, PartialEq, Eq)]
struct DecimalValue<'a> {
    negative: bool,
    /// The significant digits, without leading or trailing zeros (empty for zero).
    digits: DigitRuns<'a>,
    /// The power of ten of the last significant digit.
    exponent: i64,
}

/// Significant digits that may straddle the decimal point: the whole part's, then the
/// fraction's, compared as one sequence.
#[derive(Debug)]
struct DigitRuns<'a>(&'a [u8], &'a [u8]);

impl DigitRuns<'_> {
    fn iter(&self) -> impl Iterator<Item = &u8> {
        self.0.iter().chain(self.1.iter())
    }

    fn len(&self) -> usize {
        self.0.len() + self.1.len()
    }
}

impl PartialEq for DigitRuns<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl Eq for DigitRuns<'_> {}

impl<'a> DecimalValue<'a> {
    fn of(text: &'a [u8]) -> DecimalValue<'a> {
        let (negative, unsigned) = match text.strip_prefix(b"-") {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        let (mantissa, written_exponent) =
            match unsigned.iter().position(|byte| matches!(byte, b'e' | b'E')) {
                Some(at) => (&unsigned[..at], exponent_value(&unsigned[at + 1..])),
                None => (unsigned, 0),
            };
        let (whole, fraction) = match mantissa.iter().position(|byte| *byte == b'.') {
            Some(point) => (&mantissa[..point], &mantissa[point + 1..]),
            None => (mantissa, &mantissa[mantissa.len()..]),
        };
        let fraction_digits = i64::try_from(fraction.len()).unwrap_or(i64::MAX);
        let mut exponent = written_exponent.saturating_sub(fraction_digits);
        let whole = trim_start_zeros(whole);
        let (whole, fraction) = match whole.is_empty() {
            true => (whole, trim_start_zeros(fraction)),
            false => (whole, fraction),
        };
        // Trailing zeros move into the exponent, from the fraction, then the whole part.
        let kept_fraction = trim_end_zeros(fraction);
        exponent = exponent
            .saturating_add(i64::try_from(fraction.len() - kept_fraction.len()).unwrap_or(0));
        let (whole, fraction) = match kept_fraction.is_empty() {
            true => {
                let kept_whole = trim_end_zeros(whole);
                exponent = exponent
                    .saturating_add(i64::try_from(whole.len() - kept_whole.len()).unwrap_or(0));
                (kept_whole, kept_fraction)
            }
            false => (whole, kept_fraction),
        };
        if whole.is_empty() && fraction.is_empty() {
            return DecimalValue {
                negative: false,
                digits: DigitRuns(whole, fraction),
                exponent: 0,
            };
        }
        DecimalValue {
            negative,
            digits: DigitRuns(whole, fraction),
            exponent,
        }
    }
}

/// An exponent's value, saturating (`1e-99999999999999999999` is zero, not an error).
fn exponent_value(text: &[u8]) -> i64 {
    let (negative, digits) = match text {
        [b'-', rest @ ..] => (true, rest),
        [b'+', rest @ ..] => (false, rest),
        _ => (false, text),
    };
    let magnitude = digits.iter().fold(0i64, |value, digit| {
        value
            .saturating_mul(10)
            .saturating_add(i64::from(digit - b'0'))
    });
    match negative {
        true => -magnitude,
        false => magnitude,
    }
}

fn trim_start_zeros(digits: &[u8]) -> &[u8] {
    let zeros = digits.iter().take_while(|digit| **digit == b'0').count();
    &digits[zeros..]
}

fn trim_end_zeros(digits: &[u8]) -> &[u8] {
    let zeros = digits
        .iter()
        .rev()
        .take_while(|digit| **digit == b'0')
        .count();
    &digits[..digits.len() - zeros]
}

/// The number literals in JSON `text` whose exact value a double does not hold (see
/// [`is_precise_number`]), in order, as byte ranges. Numbers inside strings are
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

#[cfg(test)]
mod tests {
    use super::DecimalValue;

    /// Equal values however they are written (point, exponent, zeros, sign of zero);
    /// different values never equal.
    #[test]
    fn decimal_values_compare_by_value_not_by_spelling() {
        let same = |left: &str, right: &str| {
            DecimalValue::of(left.as_bytes()) == DecimalValue::of(right.as_bytes())
        };
        for (left, right) in [
            ("1e2", "100"),
            ("1E+2", "100.000"),
            ("100e-2", "1"),
            ("12.5e-3", "0.0125"),
            ("1.50", "1.5"),
            ("15e-1", "1.5"),
            ("0.000", "-0"),
            ("1e21", "1000000000000000000000"),
            ("1.2345e+4", "12345"),
            ("-7.0e0", "-7"),
        ] {
            assert!(same(left, right), "{left} = {right}");
        }
        for (left, right) in [
            ("1e2", "1e3"),
            ("1e3", "100"),
            ("-1", "1"),
            ("12.5e-3", "0.125"),
            ("105", "15"),
            ("1.05", "1.5"),
            ("1e-400", "0"),
            ("9007199254740993", "9007199254740992"),
        ] {
            assert!(!same(left, right), "{left} != {right}");
        }
    }
}
