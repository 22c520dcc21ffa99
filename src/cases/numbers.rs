//! Numbers finer than a double: RFC 8785 hashes a number by its nearest double, so a
//! case holding `9007199254740993` (or a decimal with more digits than a double keeps)
//! would not see an edit below that precision. Such cases load and lock; each of those
//! numbers is a warning at the place it is written.

use crate::cases::{column_u32, line_u32, CaseProblem, ProblemKind};
use crate::text::code_point_column;

impl CaseProblem {
    /// The warning for the number `literal` at `line:column`, which the case's digest
    /// holds only as its nearest double.
    pub fn imprecise_number(file: &str, line: u32, column: u32, literal: &str) -> CaseProblem {
        CaseProblem::imprecise_spelling(file, line, column, literal, literal)
    }

    /// [`Self::imprecise_number`] for a number `written` in another syntax than JSON's
    /// (YAML's `+.5`, `017`, `12_345`), whose JSON spelling is `literal`.
    fn imprecise_spelling(
        file: &str,
        line: u32,
        column: u32,
        written: &str,
        literal: &str,
    ) -> CaseProblem {
        const SHOWN: usize = 40;
        let shown = match written.char_indices().nth(SHOWN) {
            Some((cut, _)) => format!("{}…", &written[..cut]),
            None => written.to_owned(),
        };
        let hashed =
            crate::cases::canonical::canonical_number(literal.as_bytes()).unwrap_or_default();
        CaseProblem {
            kind: ProblemKind::ImpreciseNumber,
            file: file.to_owned(),
            line,
            column,
            message: format!(
                "the number {shown} hashes as {hashed}: RFC 8785 keeps a number only as precisely as a double does, so an edit below that precision would not move the case's digest"
            ),
        }
    }
}

/// Warnings for the numbers of a JSON case file that a double does not hold exactly, at
/// their line and column.
pub(super) fn imprecise_json_numbers(path: &str, text: &str) -> Vec<CaseProblem> {
    let ranges = crate::cases::canonical::imprecise_numbers(text.as_bytes());
    let mut problems = Vec::with_capacity(ranges.len());
    let (mut line, mut line_start, mut counted_to) = (1usize, 0usize, 0usize);
    for range in ranges {
        for newline in memchr::memchr_iter(b'\n', &text.as_bytes()[counted_to..range.start]) {
            line += 1;
            line_start = counted_to + newline + 1;
        }
        counted_to = range.start;
        let literal = text.get(range.clone()).unwrap_or_default();
        problems.push(CaseProblem::imprecise_number(
            path,
            line_u32(line),
            code_point_column(
                text.as_bytes().get(line_start..).unwrap_or_default(),
                range.start - line_start + 1,
            ),
            literal,
        ));
    }
    problems
}

/// Warnings for the numbers of a YAML case file that a double does not hold exactly, at
/// their line and column: the plain, untagged scalars in value position written as
/// decimal numbers (`12345678901234567891`, `0.1000000000000000000001`, `1e-400`), which
/// YAML reads as numbers and RFC 8785 hashes as their nearest double. Text the parser
/// stops on yields what was found before (the load reports the error itself).
pub(super) fn imprecise_yaml_numbers(path: &str, text: &str) -> Vec<CaseProblem> {
    use granit_parser::{Event, Parser, ScalarStyle};
    let mut problems = Vec::new();
    if !may_hold_imprecise_numbers(text.as_bytes()) {
        return problems;
    }
    let mut place = YamlPlace::default();
    for (event, span) in Parser::new_from_str(text).map_while(Result::ok) {
        match event {
            Event::Scalar(value, style, _, tag) => {
                if place.is_value() && style == ScalarStyle::Plain && tag.is_none() {
                    if let Some(literal) = json_number_of_yaml(&value) {
                        if !crate::cases::canonical::is_precise_number(literal.as_bytes()) {
                            problems.push(CaseProblem::imprecise_spelling(
                                path,
                                line_u32(span.start.line()),
                                column_u32(span.start.col() + 1),
                                &value,
                                &literal,
                            ));
                        }
                    }
                }
                place.complete();
            }
            Event::Alias(_) => place.complete(),
            Event::MappingStart(..) => place.open(true),
            Event::SequenceStart(..) => place.open(false),
            Event::MappingEnd | Event::SequenceEnd => place.close(),
            _ => {}
        }
    }
    problems
}

/// Where the YAML events being read are: in mapping keys or values, or in sequences.
#[derive(Default)]
struct YamlPlace {
    open: Vec<Collection>,
}

struct Collection {
    /// For a mapping, whether its next node is a key; `None` for a sequence.
    awaiting_key: Option<bool>,
    /// Whether the collection is (inside) a mapping key.
    in_key: bool,
}

impl YamlPlace {
    /// Whether a node starting here is a value: neither a mapping key nor inside one.
    fn is_value(&self) -> bool {
        self.open
            .last()
            .is_none_or(|collection| !collection.in_key && collection.awaiting_key != Some(true))
    }

    /// A node ended here: a mapping waits for the other half of its pair.
    fn complete(&mut self) {
        if let Some(Collection {
            awaiting_key: Some(awaiting_key),
            ..
        }) = self.open.last_mut()
        {
            *awaiting_key = !*awaiting_key;
        }
    }

    fn open(&mut self, mapping: bool) {
        let in_key = !self.is_value();
        self.open.push(Collection {
            awaiting_key: mapping.then_some(true),
            in_key,
        });
    }

    fn close(&mut self) {
        self.open.pop();
        self.complete();
    }
}

/// A cheap look for what could be a number finer than a double: a run of at least 16
/// digits (dots and underscores inside it allowed) or an exponent of three digits or
/// more. Numbers without either have at most 15 significant digits within a double's
/// normal range, which a double always holds.
fn may_hold_imprecise_numbers(text: &[u8]) -> bool {
    let mut digits = 0;
    for (index, byte) in text.iter().enumerate() {
        match byte {
            b'0'..=b'9' => {
                digits += 1;
                if digits >= 16 {
                    return true;
                }
            }
            b'.' | b'_' => {}
            b'e' | b'E' if digits > 0 => {
                let rest = &text[index + 1..];
                let rest = rest
                    .strip_prefix(b"-")
                    .or(rest.strip_prefix(b"+"))
                    .unwrap_or(rest);
                if rest.iter().take_while(|byte| byte.is_ascii_digit()).count() >= 3 {
                    return true;
                }
                digits = 0;
            }
            _ => digits = 0,
        }
    }
    false
}

/// The JSON spelling of a YAML plain scalar written as a decimal number, or `None` for
/// any other scalar. These are what the YAML reader takes for numbers in base ten: YAML
/// 1.2's core grammar `[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?`, leading zeros
/// included (`017` is 17), and integers with single underscores between digits
/// (`12_345`, not after a leading zero).
fn json_number_of_yaml(scalar: &str) -> Option<String> {
    let (negative, unsigned) = match scalar.as_bytes().first()? {
        b'-' => (true, &scalar[1..]),
        b'+' => (false, &scalar[1..]),
        _ => (false, scalar),
    };
    let all_digits = |part: &str| part.bytes().all(|byte| byte.is_ascii_digit());
    let grouped;
    let unsigned = if unsigned.contains('_') {
        let groups_ok = !unsigned.starts_with('0')
            && unsigned
                .split('_')
                .all(|group| !group.is_empty() && all_digits(group));
        if !groups_ok {
            return None;
        }
        grouped = unsigned.replace('_', "");
        grouped.as_str()
    } else {
        unsigned
    };
    let (mantissa, exponent) = match unsigned.find(['e', 'E']) {
        Some(at) => (&unsigned[..at], Some(&unsigned[at + 1..])),
        None => (unsigned, None),
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let exponent_ok = exponent.is_none_or(|exponent| {
        let digits = exponent.strip_prefix(['-', '+']).unwrap_or(exponent);
        !digits.is_empty() && all_digits(digits)
    });
    if !all_digits(whole)
        || !all_digits(fraction)
        || (whole.is_empty() && fraction.is_empty())
        || !exponent_ok
    {
        return None;
    }
    let whole = whole.trim_start_matches('0');
    let mut literal = String::with_capacity(scalar.len() + 2);
    if negative {
        literal.push('-');
    }
    literal.push_str(if whole.is_empty() { "0" } else { whole });
    if !fraction.is_empty() {
        literal.push('.');
        literal.push_str(fraction);
    }
    if let Some(exponent) = exponent {
        literal.push('e');
        literal.push_str(exponent);
    }
    Some(literal)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cases::parse_case_file;

    /// Each problem's kind and place, in order.
    fn places(parsed: &crate::cases::ParsedCaseFile) -> Vec<(ProblemKind, u32, u32)> {
        parsed
            .problems
            .iter()
            .map(|problem| (problem.kind, problem.line, problem.column))
            .collect()
    }

    #[test]
    fn numbers_finer_than_a_double_in_json_and_yaml_files_are_warnings_at_their_place() {
        let json = "[\n  {\"id\": \"a\", \"x\": 1.5},\n  {\"id\": \"b\",\n   \"x\": 9007199254740993},\n  {\"x\": 9007199254740993}\n]\n";
        let parsed = parse_case_file("cases.json", json.as_bytes());
        assert_eq!(parsed.cases.len(), 2);
        // The third element is no case (no id): refused, and not warned about.
        assert_eq!(
            places(&parsed),
            [
                (ProblemKind::Malformed, 5, 1),
                (ProblemKind::ImpreciseNumber, 4, 9)
            ]
        );
        assert!(parsed.problems[1]
            .message
            .contains("hashes as 9007199254740992"));

        let yaml = "- id: a\n  x: 123456789012345\n- id: b\n  x: [1, 12345678901234567891]\n";
        let parsed = parse_case_file("cases.yaml", yaml.as_bytes());
        assert_eq!(parsed.cases.len(), 2);
        assert_eq!(places(&parsed), [(ProblemKind::ImpreciseNumber, 4, 10)]);

        let quiet = "- id: a\n  x: [0.1, 1.50, 9007199254740992, \"9007199254740993\"]\n";
        assert!(parse_case_file("cases.yaml", quiet.as_bytes())
            .problems
            .is_empty());
        let quiet = "[{\"id\": \"a\", \"x\": [0.1, 1.50, 1e21, \"9007199254740993\"]}]";
        assert!(parse_case_file("cases.json", quiet.as_bytes())
            .problems
            .is_empty());
    }

    #[test]
    fn yaml_decimals_finer_than_a_double_are_warnings_at_their_place() {
        let yaml = concat!(
            "- id: a\n",
            "  x: 0.1000000000000000000001\n",
            "  y: {deep: [+.12345678901234567891, 1e-400]}\n",
            "  quiet: [0.1, 1.50, 0.69999999999999996, 1e21, 1.7976931348623157e308]\n",
            "- id: b\n",
            "  12345678901234567891: keys are text\n",
            "  quoted: \"0.1000000000000000000001\"\n",
            "  tagged: !!str 0.1000000000000000000001\n",
            "  anchored: &n 123456789012345678\n",
            "  again: *n\n",
            "  zeros: 012345678901234567\n",
            "  grouped: 12_345_678_901_234_567_891\n",
            "  not_grouped: 0_123_456_789_012_345_678\n",
            "  words: 1234567890123456789 apples\n",
        );
        let parsed = parse_case_file("cases.yaml", yaml.as_bytes());
        assert_eq!(parsed.cases.len(), 2, "{:?}", parsed.problems);
        assert_eq!(
            places(&parsed),
            [
                (ProblemKind::ImpreciseNumber, 2, 6),
                (ProblemKind::ImpreciseNumber, 3, 14),
                (ProblemKind::ImpreciseNumber, 3, 38),
                (ProblemKind::ImpreciseNumber, 9, 16),
                (ProblemKind::ImpreciseNumber, 11, 10),
                (ProblemKind::ImpreciseNumber, 12, 12),
            ]
        );
        let messages: Vec<&str> = parsed.problems.iter().map(|p| p.message.as_str()).collect();
        assert!(messages[0].starts_with("the number 0.1000000000000000000001 hashes as 0.1:"));
        assert!(
            messages[1].contains("the number +.12345678901234567891 hashes as 0.12345678901234568")
        );
        assert!(messages[2].contains("1e-400 hashes as 0"));
        assert!(messages[4].contains("the number 012345678901234567 hashes as 12345678901234568"));
        assert!(messages[5]
            .contains("the number 12_345_678_901_234_567_891 hashes as 12345678901234567000"));

        // Inside a complex key (which no case loads with), nothing is a value.
        let key = "? [0.1000000000000000000001, {a: 9007199254740993}]\n: [9007199254740993]\n";
        let found: Vec<(u32, u32)> = imprecise_yaml_numbers("k.yaml", key)
            .iter()
            .map(|problem| (problem.line, problem.column))
            .collect();
        assert_eq!(found, [(2, 4)]);
        // Integers past 2^64 load as doubles: warned about like the others.
        let huge = "- id: a\n  x: 123456789012345678901234567\n- id: b\n  x: 1234567890123456789012345678901234567890\n";
        let parsed = parse_case_file("cases.yaml", huge.as_bytes());
        assert_eq!(
            places(&parsed),
            [
                (ProblemKind::ImpreciseNumber, 2, 6),
                (ProblemKind::ImpreciseNumber, 4, 6)
            ],
            "{:?}",
            parsed.problems
        );
        // A case that did not load is refused, not warned about.
        let refused = "- x: 0.1000000000000000000001\n- id: b\n";
        let parsed = parse_case_file("cases.yaml", refused.as_bytes());
        assert_eq!(places(&parsed), [(ProblemKind::Malformed, 1, 1)]);
        // One case as a whole file, and a mapping of cases by id.
        let single = "id: a\nx: 9007199254740993\n";
        let parsed = parse_case_file("case.yaml", single.as_bytes());
        assert_eq!(places(&parsed), [(ProblemKind::ImpreciseNumber, 2, 4)]);
        let keyed = "a:\n  x: 1\nb:\n  x: 9007199254740993\n";
        let parsed = parse_case_file("cases.yml", keyed.as_bytes());
        assert_eq!(parsed.cases.len(), 2, "{:?}", parsed.problems);
        assert_eq!(places(&parsed), [(ProblemKind::ImpreciseNumber, 4, 6)]);
    }

    #[test]
    fn yaml_scalars_written_as_decimal_numbers_are_read_in_json_spelling() {
        let spelled = |scalar| json_number_of_yaml(scalar);
        assert_eq!(spelled("+.5").as_deref(), Some("0.5"));
        assert_eq!(spelled("-1.").as_deref(), Some("-1"));
        assert_eq!(spelled("0.25E+3").as_deref(), Some("0.25e+3"));
        assert_eq!(spelled("7e-2").as_deref(), Some("7e-2"));
        assert_eq!(spelled("0").as_deref(), Some("0"));
        assert_eq!(spelled("017").as_deref(), Some("17"));
        assert_eq!(spelled("-00.5").as_deref(), Some("-0.5"));
        assert_eq!(spelled("000").as_deref(), Some("0"));
        assert_eq!(spelled("-12_345").as_deref(), Some("-12345"));
        for other in [
            "", "-", ".", "1e", "1e+", "0x1F", "0o17", ".inf", "1.2.3", "e5", "1 2", "12a", "1__0",
            "_10", "10_", "0_17", "1_0.5", "1.0_5", "1_0e5",
        ] {
            assert_eq!(spelled(other), None, "{other}");
        }
    }

    #[test]
    fn only_long_digit_runs_or_long_exponents_are_looked_at() {
        assert!(may_hold_imprecise_numbers(b"x: 1234567890.123456"));
        assert!(may_hold_imprecise_numbers(b"x: 1e-400"));
        assert!(may_hold_imprecise_numbers(b"x: 2.5E+100"));
        assert!(may_hold_imprecise_numbers(b"x: 12_345_678_901_234_567"));
        assert!(!may_hold_imprecise_numbers(b"x: 123456789.012345"));
        assert!(!may_hold_imprecise_numbers(
            b"x: 1e-99, y: 12345 12345 12345"
        ));
        assert!(!may_hold_imprecise_numbers(b"name: e100 and 1e"));
    }
}
