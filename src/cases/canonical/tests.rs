//! The fast path must agree with serde_json + serde_json_canonicalizer on every input it
//! accepts, and must decline every input the slow path rejects.

use super::key_order::KNOWN_ORDERS;
use super::numbers::{canonical_number, is_shortest_decimal, write_formatted_number};
use super::strings::{append, append_within, next_special};
use super::*;
use crate::cases::strict_json::StrictValue;
use crate::digest::canonical_json;

/// What the slow path makes of `text`: the canonical form, or `None` when it rejects it.
fn slow(text: &str) -> Option<String> {
    let StrictValue(value) = serde_json::from_str::<StrictValue>(text).ok()?;
    if !value.is_object() {
        return None;
    }
    canonical_json(&value).ok()
}

fn fast(text: &str) -> Option<String> {
    let mut canonicalizer = Canonicalizer::new();
    let object = canonicalizer.object(text, &[], None)?;
    Some(String::from_utf8(object.canonical.to_vec()).expect("canonical output is UTF-8"))
}

/// Fast and slow agree whenever fast answers, and fast answers on all valid objects we
/// expect to be common (`must_answer`).
fn assert_agrees(text: &str, must_answer: bool) {
    let expected = slow(text);
    match fast(text) {
        Some(actual) => assert_eq!(Some(actual), expected, "fast path differs on {text:?}"),
        None => assert!(
            !must_answer || expected.is_none(),
            "fast path declined valid {text:?}"
        ),
    }
}

#[test]
fn agrees_on_hand_picked_inputs() {
    for text in [
        r#"{"b":1,"a":2}"#,
        r#"{ "id" : "x" , "version" : 2 }"#,
        r#"{"a":[1,2,{"z":null,"y":true,"x":false}],"b":"\u00e9\n\t\"\\\/"}"#,
        r#"{"n":[0,-0,1.0,1.5,-2.25e3,1E30,4.50,2e-3,0.000000000000000000000000001,333333333.33333329]}"#,
        r#"{"big":[12345678901234567890,-9223372036854775809,123456789012345678901234567890,9007199254740993]}"#,
        r#"{"e":"\ud83d\ude00","f":"\u0000\u001f\u007f\u2028"}"#,
        "{\"\\u20ac\":1,\"\\r\":2,\"\\ufb33\":3,\"1\":4,\"\\ud83d\\ude00\":5,\"\\u0080\":6,\"\\u00f6\":7}",
        r#"{"nested":{"b":{"d":1,"c":2},"a":[]},"empty":{}}"#,
        "{\"emoji\":\"🙂 東京\",\"raw\":\"café\"}",
        r#"{"x":-0.0,"y":1e-7,"z":1e21,"w":1e20}"#,
        // Keys alike in their first eight bytes, a key that is another's prefix, a key
        // ending in NUL (equal to its shorter twin once zero-padded), supplementary
        // characters against U+E000..U+FFFF within the first eight bytes.
        r#"{"grader_version":1,"grader_v":2,"grader_versio":3,"grader_vers":4,"grader":5}"#,
        r#"{"a\u0000":1,"a":2,"a\u0000\u0000":3,"":4}"#,
        "{\"ab\u{10000}\":1,\"ab\u{e000}\":2,\"ab\u{ffff}\":3,\"ab\":4,\"abc\":5}",
        "{\"same-prefix-\u{10000}\":1,\"same-prefix-\u{e000}\":2,\"same-prefix-z\":3}",
        // Short keys with text after them: their prefixes come from one load, masked
        // (unmasked, the quote after `a` would put it after `a!`).
        "{\"a!\":\"0123456789abcdef\",\"a\":\"0123456789abcdef\"}",
        "{\"zz\":\"0123456789abcdef\",\"z\":\"0123456789abcdef\",\"\u{e9}\":\"0123456789\",\"\u{10000}\":0,\"e\\u0301\":\"0123456789abcdef\",\"\":\"0123456789abcdef\"}",
        // Objects out of order inside objects in order inside objects out of order, side by
        // side, in arrays, and after the last member: each is put in order where it sits.
        r#"{"b":{"a":{"z":1,"y":{"q":[{"s":1,"r":2},{"u":{"w":3,"v":4}}],"p":5}},"c":{"e":6,"d":7}},"a":[{"h":8,"g":9},{}]}"#,
        r#"{"a":{"b":{"c":{"e":1,"d":2}}},"z":[[{"y":1,"x":2}],{"k":{"m":1,"l":2}}],"m":{"o":{"q":1,"p":2},"n":3}}"#,
    ] {
        assert_agrees(text, true);
    }
}

/// One canonicalizer goes from line to line: nothing of a line stays for the next.
#[test]
fn a_reused_canonicalizer_agrees_on_every_line() {
    let mut canonicalizer = Canonicalizer::new();
    for text in [
        r#"{"b":{"d":1,"c":2},"a":1}"#,
        r#"{"a":1,"b":2}"#,
        r#"{"a":{"b":1}}"#,
        r#"{"a":1,"a":2}"#,
        r#"{"z":[{"y":1,"x":{"w":2,"v":3}}],"retired":false}"#,
        r#"{"b":1,"a":2}"#,
    ] {
        let reused = canonicalizer
            .object(text, &[], None)
            .map(|object| String::from_utf8(object.canonical.to_vec()).unwrap());
        assert_eq!(reused, slow(text), "{text}");
    }
}

/// Orders decided by key prefixes are kept for objects of the same shape: more shapes of
/// one size than are kept, in turn and in between, nested and at the top, give what the
/// slow path gives, as do lines alike in their prefixes but not in their keys.
#[test]
fn known_orders_are_used_only_for_the_same_prefixes() {
    let keys = [
        "id", "version", "input", "expect", "n", "tags", "metadata", "stratum",
    ];
    let mut shapes = Vec::new();
    for rotation in 0..keys.len() {
        for step in [1, 3, 5] {
            let picked: Vec<&str> = (0..4)
                .map(|at| keys[(rotation + at * step) % keys.len()])
                .collect();
            let mut seen = std::collections::BTreeSet::new();
            if picked.iter().all(|key| seen.insert(*key)) {
                shapes.push(picked);
            }
        }
    }
    assert!(shapes.len() > 2 * KNOWN_ORDERS);
    let line = |shape: &[&str], value: usize| {
        let members: Vec<String> = shape
            .iter()
            .enumerate()
            .map(|(at, key)| format!(r#""{key}":{{"b":{value},"a":{at}}}"#))
            .collect();
        format!("{{{}}}", members.join(","))
    };
    let mut canonicalizer = Canonicalizer::new();
    let mut check = |text: &str| {
        let reused = canonicalizer
            .object(text, &[], None)
            .map(|object| String::from_utf8(object.canonical.to_vec()).unwrap());
        assert_eq!(reused, slow(text), "{text}");
    };
    for round in 0..3 {
        for (index, shape) in shapes.iter().enumerate() {
            check(&line(shape, round));
            // The first shapes again while later ones push them out.
            check(&line(&shapes[index % 3], round));
        }
    }
    for text in [
        r#"{"b":1,"a":2}"#,
        r#"{"b":3,"a":4}"#,
        // The same prefixes, a duplicate key: declined, never taken for the known shape.
        r#"{"b":1,"b":2}"#,
        // Long keys alike in their first eight bytes: decided by more than their prefixes.
        r#"{"same-prefix-b":1,"same-prefix-a":2}"#,
        r#"{"same-prefix-a":1,"same-prefix-b":2}"#,
        // A key zero-padded to the prefix of another, then that other.
        r#"{"b":1,"a\u0000":2}"#,
        r#"{"b":1,"a":2}"#,
        // A prefix shared with a key that is not in UTF-8 byte order past its prefix.
        "{\"z\":1,\"same-prefix-\u{e000}\":2}",
        "{\"z\":1,\"same-prefix-\u{10000}\":2}",
    ] {
        check(text);
    }
}

#[test]
fn declines_what_the_slow_path_rejects() {
    for text in [
        r#"{"a":1,"a":2}"#,
        r#"{"long-key-alike":1,"long-key-other":2,"long-key-alike":3}"#,
        r#"{"a\u0000":1,"a":2,"a\u0000":3}"#,
        r#"{"b":1,"a":2,"b":3}"#,
        r#"{"a":1e400}"#,
        r#"{"a":-1e400}"#,
        r#"{"a":NaN}"#,
        r#"{"a":"\ud800"}"#,
        r#"{"a":"\udc00"}"#,
        r#"{"a":"\ud800\u0041"}"#,
        "{\"a\":\"tab\tinside\"}",
        r#"{"a":01}"#,
        r#"{"a":1.}"#,
        r#"{"a":.5}"#,
        r#"{"a":+1}"#,
        r#"{"a":1,}"#,
        r#"{"a" 1}"#,
        r#"{"a":tru}"#,
        r#"{"a":"\x"}"#,
        r#"{"a":1} x"#,
        r#"[1,2]"#,
        r#""text""#,
        "",
        "{",
    ] {
        assert_eq!(fast(text), None, "fast path must decline {text:?}");
    }
}

#[test]
fn deep_nesting_goes_to_the_slow_path() {
    let deep = format!("{{\"a\":{}1{}}}", "[".repeat(200), "]".repeat(200));
    assert_eq!(fast(&deep), None);
    let shallow = format!("{{\"a\":{}1{}}}", "[".repeat(50), "]".repeat(50));
    assert_agrees(&shallow, true);
}

#[test]
fn reports_wanted_members_and_the_contract_without_the_excluded_one() {
    let text = r#"{"version": 2, "retired": true, "id": "a", "input": {"id": "inner"}}"#;
    let mut canonicalizer = Canonicalizer::new();
    let object = canonicalizer
        .object(text, &["id", "version"], Some("retired"))
        .unwrap();
    assert_eq!(
        object.canonical,
        br#"{"id":"a","input":{"id":"inner"},"retired":true,"version":2}"#
    );
    assert_eq!(
        object.without_excluded.unwrap(),
        br#"{"id":"a","input":{"id":"inner"},"version":2}"#
    );
    let raw: Vec<(&str, &str)> = object
        .members
        .iter()
        .map(|member| (member.key, &text[member.raw_value.clone()]))
        .collect();
    assert_eq!(
        raw,
        vec![("id", "\"a\""), ("retired", "true"), ("version", "2")]
    );

    let object = canonicalizer
        .object(r#"{"id":"b"}"#, &["id"], Some("retired"))
        .unwrap();
    assert!(object.without_excluded.is_none());

    // Objects out of order inside the members kept are put in order in both forms.
    let text = r#"{"retired":false,"input":{"z":{"c":1,"b":[{"e":2,"d":3}]},"a":0},"id":"c"}"#;
    let object = canonicalizer
        .object(text, &["id"], Some("retired"))
        .unwrap();
    assert_eq!(
        object.canonical,
        br#"{"id":"c","input":{"a":0,"z":{"b":[{"d":3,"e":2}],"c":1}},"retired":false}"#
    );
    assert_eq!(
        object.without_excluded.unwrap(),
        br#"{"id":"c","input":{"a":0,"z":{"b":[{"d":3,"e":2}],"c":1}}}"#
    );
}

#[test]
fn wanted_members_are_matched_by_their_whole_decoded_key() {
    const WANTED: &[&str] = &["grader_version", "n", "id"];
    let text = concat!(
        r#"{"grader_versiom": 1, "grader_versions": 2, "grader_v": 3, "nn": 4, "#,
        r#""gr\u0061der_version": "g", "\u006e": 5, "i": 6, "id\u0000": 7}"#
    );
    let mut canonicalizer = Canonicalizer::new();
    let object = canonicalizer.object(text, WANTED, None).unwrap();
    let found: Vec<(&str, &str)> = object
        .members
        .iter()
        .map(|member| (member.key, &text[member.raw_value.clone()]))
        .collect();
    assert_eq!(found, vec![("grader_version", "\"g\""), ("n", "5")]);

    // Other members asked for on the same canonicalizer are matched from then on.
    let object = canonicalizer
        .object(r#"{"grader_version": "g", "id": "a"}"#, &["id"], None)
        .unwrap();
    let keys: Vec<&str> = object.members.iter().map(|member| member.key).collect();
    assert_eq!(keys, vec!["id"]);
}

/// A small deterministic generator of JSON texts, valid and slightly broken.
struct Generator(u64);

impl Generator {
    fn next(&mut self) -> u64 {
        // xorshift64*: deterministic, no dependency.
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, bound: u64) -> u64 {
        self.next() % bound
    }

    fn whitespace(&mut self, out: &mut String) {
        for _ in 0..self.below(3) {
            out.push([' ', '\t', '\n', '\r'][self.below(4) as usize]);
        }
    }

    fn string(&mut self, out: &mut String) {
        const PIECES: &[&str] = &[
            "a",
            "b",
            "Z",
            "id",
            "é",
            "東",
            "🙂",
            "\\n",
            "\\\"",
            "\\\\",
            "\\/",
            "\\u00e9",
            "\\u0001",
            "\\ud83d\\ude00",
            "\\uffff",
            "\\ue000",
            "\u{e000}",
            "\u{10000}",
            " ",
            "\u{7f}",
            "\\b",
            "\\f",
            "\\t",
            "\\r",
            "\\u0000",
            "\\u0022",
            "\\u005c",
            "\\u001F",
            "a plain run longer than one eight-byte word",
        ];
        out.push('"');
        for _ in 0..self.below(6) {
            out.push_str(PIECES[self.below(PIECES.len() as u64) as usize]);
        }
        out.push('"');
    }

    fn number(&mut self, out: &mut String) {
        const NUMBERS: &[&str] = &[
            "0",
            "-0",
            "7",
            "-13",
            "1.5",
            "0.1",
            "100",
            "1e3",
            "1E-3",
            "2.5e+10",
            "123456789012345",
            "1234567890123456",
            "99999999999999999999",
            "-9007199254740993",
            "0.000001",
            "1e-7",
            "1e21",
            "1e20",
            "5e-324",
            "1.7976931348623157e308",
            "4.35",
            "0.30000000000000004",
            "-0.0",
            "3.0",
        ];
        out.push_str(NUMBERS[self.below(NUMBERS.len() as u64) as usize]);
    }

    fn value(&mut self, out: &mut String, depth: u32) {
        let choice = if depth > 4 {
            self.below(5)
        } else {
            self.below(7)
        };
        match choice {
            0 => self.string(out),
            1 => self.number(out),
            2 => out.push_str(["true", "false", "null"][self.below(3) as usize]),
            3 | 5 => self.object(out, depth + 1),
            4 | 6 => {
                out.push('[');
                for index in 0..self.below(4) {
                    if index > 0 {
                        out.push(',');
                    }
                    self.whitespace(out);
                    self.value(out, depth + 1);
                    self.whitespace(out);
                }
                out.push(']');
            }
            _ => unreachable!(),
        }
    }

    fn object(&mut self, out: &mut String, depth: u32) {
        out.push('{');
        for index in 0..self.below(5) {
            if index > 0 {
                out.push(',');
            }
            self.whitespace(out);
            self.string(out);
            self.whitespace(out);
            out.push(':');
            self.whitespace(out);
            self.value(out, depth);
            self.whitespace(out);
        }
        out.push('}');
    }
}

#[test]
fn agrees_with_the_slow_path_on_generated_inputs() {
    let mut generator = Generator(0x5eed_1234_abcd_ef01);
    let mut answered = 0;
    for _ in 0..6_000 {
        let mut text = String::new();
        generator.object(&mut text, 0);
        assert_agrees(&text, false);
        answered += usize::from(fast(&text).is_some());
        // One byte deleted: often invalid, and the fast path must then agree or decline.
        if !text.is_empty() {
            let cut = generator.below(text.len() as u64) as usize;
            if text.is_char_boundary(cut) && text.is_char_boundary(cut + 1) {
                let mut broken = text.clone();
                broken.remove(cut);
                assert_agrees(&broken, false);
            }
        }
    }
    // Generated objects with duplicate keys are declined; most others must be answered.
    assert!(
        answered > 3_000,
        "fast path answered only {answered} of 6000"
    );
}

#[test]
fn finds_the_first_special_byte_at_every_offset() {
    for length in 0..40 {
        let plain = "é".repeat(length / 2) + &"a".repeat(length % 2);
        assert_eq!(next_special(plain.as_bytes()), None, "{plain:?}");
        for special in [b'"', b'\\', 0x00, 0x1f] {
            for at in 0..=plain.len() {
                if !plain.is_char_boundary(at) {
                    continue;
                }
                let mut bytes = plain.as_bytes().to_vec();
                bytes.insert(at, special);
                bytes.push(b'"');
                assert_eq!(next_special(&bytes), Some(at), "{bytes:?}");
            }
        }
    }
}

/// Every byte value, at every position of three 16-byte blocks and the tail after them,
/// against the plain definition.
#[test]
fn every_byte_value_is_judged_as_the_plain_definition_does() {
    let plain = |bytes: &[u8]| {
        bytes
            .iter()
            .position(|byte| *byte == b'"' || *byte == b'\\' || *byte < 0x20)
    };
    for value in 0..=u8::MAX {
        for length in [1, 15, 16, 17, 31, 48, 53] {
            for at in 0..length {
                let mut bytes = vec![b'x'; length];
                bytes[at] = value;
                assert_eq!(next_special(&bytes), plain(&bytes), "{value:#x} at {at}");
            }
        }
    }
}

/// Every byte that is not special, as filler before the first special byte and between
/// it and a second one (whose borrow marks must not move the answer).
#[test]
fn no_other_byte_is_taken_for_a_special_one() {
    let fillers = (0x20..=0xffu8).filter(|byte| *byte != b'"' && *byte != b'\\');
    for filler in fillers {
        assert_eq!(next_special(&[filler; 51]), None, "{filler:#x}");
        for special in [b'"', b'\\', 0x00, 0x1f, 0x0a] {
            for at in 0..41 {
                let mut bytes = vec![filler; 41];
                bytes.insert(at, special);
                bytes.insert(at + 1 + (at % 3), 0x01);
                assert_eq!(next_special(&bytes), Some(at), "{filler:#x} {bytes:?}");
            }
        }
    }
}

#[test]
fn escapes_in_values_come_out_canonical() {
    for (input, canonical) in [
        (r#"{"a":"\u0041\u00e9\ud83d\ude42"}"#, "{\"a\":\"Aé🙂\"}"),
        (r#"{"a":"\/\"\\\b\f\n\r\t"}"#, r#"{"a":"/\"\\\b\f\n\r\t"}"#),
        (
            r#"{"a":"\u0022\u005c\u0001\u001F\u007f"}"#,
            "{\"a\":\"\\\"\\\\\\u0001\\u001f\u{7f}\"}",
        ),
        (
            r#"{"a":"tab\there and a long plain run"}"#,
            r#"{"a":"tab\there and a long plain run"}"#,
        ),
    ] {
        assert_eq!(fast(input).as_deref(), Some(canonical), "{input}");
        assert_agrees(input, true);
    }
}

/// Plain decimals are copied as written only when that is what ECMAScript prints: every
/// literal of up to 18 digits, with the point anywhere and zeros where they matter, is
/// compared with the formatted value.
#[test]
fn decimals_copied_as_written_are_what_formatting_gives() {
    let mut copied = 0;
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = |bound: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % bound
    };
    for _ in 0..200_000 {
        let length = 1 + next(18) as usize;
        let mut digits: Vec<u8> = (0..length).map(|_| b'0' + next(10) as u8).collect();
        // Runs of zeros at the start, the end or inside are what the rules turn on.
        match next(4) {
            0 => digits[..length.min(1 + next(8) as usize)].fill(b'0'),
            1 => digits[length - length.min(1 + next(3) as usize)..].fill(b'0'),
            _ => {}
        }
        let point = 1 + next(length as u64) as usize;
        let whole = match digits[..point].iter().position(|digit| *digit != b'0') {
            Some(first) if first < point => &digits[first..point],
            _ => b"0".as_slice(),
        };
        let mut literal = String::from_utf8(whole.to_vec()).unwrap();
        if point < length {
            literal.push('.');
            literal.push_str(std::str::from_utf8(&digits[point..]).unwrap());
        }
        for signed in [literal.clone(), format!("-{literal}")] {
            let mut formatted = Vec::new();
            write_formatted_number(signed.as_bytes(), &mut formatted).expect("finite");
            let digits = signed.strip_prefix('-').unwrap_or(&signed);
            if is_shortest_decimal(digits.as_bytes()) {
                copied += 1;
                assert_eq!(String::from_utf8(formatted).unwrap(), signed);
            } else if signed.contains('.') && !signed.ends_with('0') && digits.len() <= 9 {
                // Short decimals are declined only for the zeros rule.
                assert!(digits.starts_with("0.000000"), "{signed} declined");
            }
        }
    }
    assert!(copied > 100_000, "only {copied} copied");
    for (literal, copied) in [
        ("0.141614", true),
        ("0.000001", true),
        ("0.0000001", false),
        ("1.50", false),
        ("2.0", false),
        ("123456789012.345", true),
        ("1234567890123.456", false),
        ("0.1234567890123456", false),
        ("1e3", false),
        ("10", false),
    ] {
        assert_eq!(is_shortest_decimal(literal.as_bytes()), copied, "{literal}");
    }
}

/// A number is precise when its RFC 8785 form keeps the value written, however it is
/// written, or when it is a double written out in full; it is imprecise when the digest
/// holds only a neighbouring double.
#[test]
fn numbers_finer_than_a_double_are_told_apart_from_other_spellings() {
    for (literal, exact) in [
        ("0", true),
        ("-0", true),
        ("-0.000", true),
        ("1.50", true),
        ("1E2", true),
        ("1e+2", true),
        ("100e-2", true),
        ("0.1", true),
        ("123456789012345", true),
        ("9007199254740992", true),
        ("1e21", true),
        ("100000000000000000000", true),
        ("1.7976931348623157e308", true),
        ("5e-324", true),
        ("0.30000000000000004", true),
        // A double written out with up to 17 digits, as `%.17g` printers write 0.7, 0.1
        // and the smallest subnormal: the spelling of that very double.
        ("0.69999999999999996", true),
        ("-0.10000000000000001", true),
        ("1.0000000000000000e-1", true),
        ("4.9406564584124654e-324", true),
        ("9007199254740993", false),
        ("9007199254740993.0", false),
        ("0.69999999999999997", false),
        ("0.100000000000000001", false),
        // 0.1 written to 18 digits: more than any double needs, so not a printer's spelling.
        ("0.100000000000000006", false),
        ("-9007199254740993", false),
        ("1152921504606846976", false),
        ("12345678901234567891", false),
        ("0.10000000000000000001", false),
        ("1.00000000000000000001", false),
        ("1e-400", false),
        ("1e-99999999999999999999999", false),
    ] {
        assert_eq!(is_precise_number(literal.as_bytes()), exact, "{literal}");
    }
}

/// Integers of up to 20 digits, against u128 arithmetic: exact exactly when the RFC 8785
/// form reads back as the same integer.
#[test]
fn integer_exactness_agrees_with_integer_arithmetic() {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let (mut exact, mut inexact) = (0, 0);
    for _ in 0..50_000 {
        let digits = 1 + next() % 20;
        let mut literal: String = (0..digits)
            .map(|_| char::from(b'0' + (next() % 10) as u8))
            .collect();
        // Powers of two and their neighbours are where the boundary is.
        if next() % 4 == 0 {
            let power = 1u128 << (40 + next() % 24);
            literal = (power + u128::from(next() % 3) - 1).to_string();
        }
        let literal = literal.trim_start_matches('0');
        let literal = if literal.is_empty() { "0" } else { literal };
        let written: u128 = literal.parse().expect("digits");
        let hashed = canonical_number(literal.as_bytes()).expect("finite");
        let hashed: u128 = hashed
            .parse()
            .expect("an integer below 1e21 prints as digits");
        let expected = written == hashed;
        assert_eq!(
            is_precise_number(literal.as_bytes()),
            expected,
            "{literal} hashes as {hashed}"
        );
        if expected {
            exact += 1
        } else {
            inexact += 1
        }
    }
    assert!(
        exact > 10_000 && inexact > 10_000,
        "{exact} exact, {inexact} inexact"
    );
}

/// The scan skips strings (digits in them are not numbers), and the canonicalizer
/// reports the same literals while it writes the object.
#[test]
fn the_scan_and_the_canonicalizer_find_the_same_imprecise_numbers() {
    let text = r#"{"id": "9007199254740993", "a": [1.5, 9007199254740993, {"b\"": -12345678901234567891}], "c": 0.1, "d": 1e-400, "e": "\"1e-400"}"#;
    let found: Vec<&str> = imprecise_numbers(text.as_bytes())
        .into_iter()
        .map(|range| &text[range])
        .collect();
    assert_eq!(
        found,
        ["9007199254740993", "-12345678901234567891", "1e-400"]
    );
    let mut canonicalizer = Canonicalizer::new();
    let object = canonicalizer.object(text, &[], None).expect("valid");
    let reported: Vec<&str> = object
        .imprecise_numbers
        .iter()
        .map(|range| &text[range.clone()])
        .collect();
    assert_eq!(reported, found);
    let plain = r#"{"id": "x", "n": [0, 1.50, 1e21, 123456789012345, "9007199254740993"]}"#;
    assert!(imprecise_numbers(plain.as_bytes()).is_empty());
    let object = canonicalizer.object(plain, &[], None).expect("valid");
    assert!(object.imprecise_numbers.is_empty());
}

/// Block copies append exactly the range, whatever its length and however close to the
/// end of its buffer, after what `out` already holds.
#[test]
fn appended_ranges_are_exactly_the_range() {
    let from: Vec<u8> = (0..100u8).collect();
    for start in [0, 1, 40, 60, 67, 68, 69, 83, 84, 85, 99, 100] {
        for length in [0, 1, 15, 16, 17, 31, 32, 33, 40] {
            let end = start + length;
            if end > from.len() {
                continue;
            }
            let mut out = b"head".to_vec();
            append(&mut out, &from, start..end);
            assert_eq!(out[..4], *b"head");
            assert_eq!(out[4..], from[start..end], "{start}..{end}");

            let mut within = from.clone();
            append_within(&mut within, start..end);
            assert_eq!(within[..100], from[..]);
            assert_eq!(within[100..], from[start..end], "within {start}..{end}");
        }
    }
}

/// A short ASCII key read from one load gives the end and the prefix the general reading
/// gives, and anything else (long keys, escapes, other characters, text ending early) is
/// left to the general reading.
#[test]
fn short_keys_read_in_one_load_match_the_general_reading() {
    let bodies = [
        "",
        "a",
        "id",
        "version",
        "1234567",
        "12345678",
        "123456789",
        "a\\\"b",
        "\\n",
        "é",
        "ab\u{7f}",
        "a\u{1}",
        "z~",
        " ",
    ];
    for body in bodies {
        for after in ["", ":1}", ":1,\"b\":2}", "         "] {
            let text = format!("\"{body}\"{after}");
            let input = text.as_bytes();
            let general = decode_string(input, 0, &mut Vec::new()).filter(|(_, decoded)| !decoded);
            match super::short_ascii_key(input, 0) {
                Some((end, prefix)) => {
                    let (general_end, _) = general.expect("a short key has no escapes");
                    assert_eq!(end, general_end, "{text:?}");
                    let keys = Keys {
                        input,
                        decoded: &[],
                    };
                    let member = Member::new(1..end - 1, true, keys);
                    assert_eq!(prefix, member.prefix, "{text:?}");
                    assert!(member.byte_ordered && body.is_ascii() && body.len() < 8);
                }
                None => assert!(
                    general.is_none()
                        || !body.is_ascii()
                        || body.len() >= 8
                        // The load needs the eight bytes after the opening quote.
                        || text.len() < 9,
                    "{text:?} is short, plain and ASCII"
                ),
            }
        }
    }
}

#[test]
fn whitespace_is_skipped_to_the_first_other_byte() {
    fn reference(input: &[u8], mut position: usize) -> usize {
        while input
            .get(position)
            .is_some_and(|byte| b" \t\n\r".contains(byte))
        {
            position += 1;
        }
        position
    }
    let alphabet = [b' ', b'\t', b'\n', b'\r', b'a', b'"', 0x1f, 0x21];
    // Every text of up to four bytes over the alphabet, from every position.
    let mut texts = vec![Vec::new()];
    for _ in 0..4 {
        let longer: Vec<Vec<u8>> = texts
            .iter()
            .filter(|text| text.len() == texts.last().map_or(0, Vec::len))
            .flat_map(|text| {
                alphabet.iter().map(move |byte| {
                    let mut text = text.clone();
                    text.push(*byte);
                    text
                })
            })
            .collect();
        texts.extend(longer);
    }
    assert_eq!(texts.len(), 1 + 8 + 64 + 512 + 4096);
    for text in &texts {
        for position in 0..=text.len() + 1 {
            assert_eq!(
                skip_whitespace(text, position),
                reference(text, position),
                "{text:?} from {position}"
            );
        }
    }
}
