//! Numbers finer than a double: RFC 8785 hashes a number by its nearest double, so a
//! case holding `9007199254740993` (or a decimal with more digits than a double keeps)
//! would not see an edit below that precision. Such cases load and lock; each of those
//! numbers is a warning at the place it is written.

use super::case_documents::Element;
use super::cases::{column_u32, line_u32, CaseProblem, ProblemKind};
use serde_json::Value;

impl CaseProblem {
    /// The warning for the number `literal` at `line:column`, which the case's digest
    /// holds only as its nearest double.
    pub fn imprecise_number(file: &str, line: u32, column: u32, literal: &str) -> CaseProblem {
        const SHOWN: usize = 40;
        let shown = match literal.char_indices().nth(SHOWN) {
            Some((cut, _)) => format!("{}…", &literal[..cut]),
            None => literal.to_owned(),
        };
        let hashed = crate::jcs::canonical_number(literal.as_bytes()).unwrap_or_default();
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
    let ranges = crate::jcs::imprecise_numbers(text.as_bytes());
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
            column_u32(range.start - line_start + 1),
            literal,
        ));
    }
    problems
}

/// Warnings for the integers of a YAML case that a double does not hold exactly, at the
/// case's line (YAML's parser keeps integers exact but not the digits of decimals, so only
/// integers are seen).
pub(super) fn imprecise_yaml_integers(path: &str, element: &Element) -> Vec<CaseProblem> {
    let mut problems = Vec::new();
    let mut pending = vec![&element.value];
    while let Some(value) = pending.pop() {
        match value {
            Value::Number(number)
                if !crate::jcs::is_precise_number(number.to_string().as_bytes()) =>
            {
                problems.push(CaseProblem::imprecise_number(
                    path,
                    element.line,
                    1,
                    &number.to_string(),
                ));
            }
            Value::Array(items) => pending.extend(items.iter().rev()),
            Value::Object(members) => pending.extend(members.values().rev()),
            _ => {}
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::parse_case_file;

    /// Each problem's kind and place, in order.
    fn places(parsed: &crate::model::ParsedCaseFile) -> Vec<(ProblemKind, u32, u32)> {
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
        assert_eq!(places(&parsed), [(ProblemKind::ImpreciseNumber, 3, 1)]);

        let quiet = "- id: a\n  x: [0.1, 1.50, 9007199254740992, \"9007199254740993\"]\n";
        assert!(parse_case_file("cases.yaml", quiet.as_bytes())
            .problems
            .is_empty());
        let quiet = "[{\"id\": \"a\", \"x\": [0.1, 1.50, 1e21, \"9007199254740993\"]}]";
        assert!(parse_case_file("cases.json", quiet.as_bytes())
            .problems
            .is_empty());
    }
}
