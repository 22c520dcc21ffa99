use super::*;
use crate::graders::builtin::{grade, grade_with, passes};
use crate::graders::envelope::Completion;
use crate::graders::REFUSAL_PROBE;

/// `expect` members of every shape the grader tells apart, as written in case files.
const EXPECTS: &[&str] = &[
    "null",
    "{}",
    "[1, {\"a\": [2]}]",
    "\"nope\"",
    "7",
    "true",
    "{\"must_include\": [\"refund\", \"caf\\u00e9\", \"\\\"q\\\"\"]}",
    "{\"must_include\": \"Refund\"}",
    "{\"must_include\": [\"ok\", 3], \"forbidden\": [\"x\"]}",
    "{\"must_include\": [[\"nested\"], {\"k\": [1]}], \"regex\": [\"^I\"]}",
    "{\"schema\": {\"type\": \"object\"}, \"must_not_include\": [\"as an AI\"], \"max_words\": 9}",
    "{\"json\": false, \"required_keys\": false, \"allowed_keys\": false, \"status_in\": false, \"equals\": false, \"must_include\": [\"cannot\"]}",
    "{\"json\": true, \"required_keys\": [\"answer\"], \"status_in\": [\"ok\", 1]}",
    "{\"json\": 1, \"required_keys\": true, \"allowed_keys\": [\"answer\", 2]}",
    "{\"allowed_keys\": [\"answer\", \"status\"], \"equals\": {\"answer\": \"yes\", \"/status\": \"ok\"}}",
    "{\"equals\": [1], \"status_in\": \"ok\"}",
    "{\"forbid_patterns\": [\"(?:sorry|cannot)\"], \"regex\": \"(\", \"max_chars\": 40}",
    "{\"max_chars\": -1, \"forbidden\": null}",
    "{\"max_chars\": 2.5, \"must_call\": \"lookup\"}",
    "{\"must_call\": [\"lookup\"], \"must_not_call\": [\"delete\"], \"args\": {\"lookup\": {\"id\": {\"eq\": 7}}}}",
    "{\"args\": {\"lookup\": 3}, \"must_not_call\": {\"x\": 1}}",
    "{\"require_clarification\": true}",
    "{\"require_clarification\": false, \"must_include\": [\"help\"]}",
    "{\"require_clarification\": [\"which (order|id)\"]}",
    "{\"require_clarification\": [\"ok\", 2]}",
    "{\"require_clarification\": \"which\"}",
    "{\"unknown_one\": 1, \"must_include\": [\"x\"], \"unknown_\\u0074wo\": [\"y\"]}",
];

const COMPLETIONS: &[&str] = &[
    "",
    "  ",
    REFUSAL_PROBE,
    "Refund within 30 days, caf\u{e9} \"q\"",
    "ok",
    "{\"answer\": \"yes\", \"status\": \"ok\"}",
    "{\"answer\": \"no\", \"extra\": 1}",
    "{\"reply\": \"Which order id?\", \"tool_calls\": [{\"name\": \"lookup\", \"arguments\": {\"id\": 7}}]}",
    "{\"tool_calls\": [{\"name\": \"delete\", \"arguments\": {}}]}",
    "{\"reply\": \"Which caf\\u00e9? \\\"q\\\"\", \"tool_calls\": [{\"tool\": {\"name\": \"delete\"}}, {\"id\": 1}]}",
    "[1, 2]",
];

#[test]
fn text_and_value_readings_are_the_same_assertions() {
    for text in EXPECTS {
        let value: Value = serde_json::from_str(text).expect("valid JSON");
        let from_text = Expect::of_text(text).expect("valid JSON");
        assert_eq!(from_text, Expect::of_value(Some(&value)), "{text}");
    }
    assert_eq!(Expect::of_value(None), Expect::Missing);
    assert_eq!(Expect::of_text("{"), None);
}

#[test]
fn the_text_reading_grades_as_the_value_does() {
    let mut failures = 0;
    for text in EXPECTS {
        let value: Value = serde_json::from_str(text).expect("valid JSON");
        let expect = Expect::of_text(text).expect("valid JSON");
        for raw in COMPLETIONS {
            let completion = Completion::read(raw);
            let full = grade(Some(&value), raw);
            assert_eq!(grade_with(&expect, &completion), full, "{text} / {raw:?}");
            assert_eq!(passes(&expect, &completion), full.pass, "{text} / {raw:?}");
            failures += usize::from(!full.pass);
        }
    }
    // The table must exercise both verdicts, and many reasons.
    assert!(failures > 100 && failures < EXPECTS.len() * COMPLETIONS.len());
}

#[test]
fn shapes_are_kept_for_the_grader_to_name() {
    fn read(text: &str) -> Assertions<'_> {
        match Expect::of_text(text) {
            Some(Expect::Object(assertions)) => *assertions,
            other => panic!("{text}: {other:?}"),
        }
    }
    let mixed = read(EXPECTS[8]);
    assert_eq!(
        mixed.must_include,
        Some(Strings::Invalid { is_false: false })
    );
    assert_eq!(mixed.forbidden, Some(Strings::Valid(vec!["x".into()])));
    // A list with lists and objects in it is invalid, and what follows is still read.
    let nested = read(EXPECTS[9]);
    assert_eq!(
        nested.must_include,
        Some(Strings::Invalid { is_false: false })
    );
    assert_eq!(nested.regex, Some(Strings::Valid(vec!["^I".into()])));
    // Escapes are decoded; plain strings are borrowed from the text.
    let escaped = read(EXPECTS[6]);
    let Some(Strings::Valid(items)) = &escaped.must_include else {
        panic!("{escaped:?}")
    };
    assert_eq!(items, &["refund", "caf\u{e9}", "\"q\""]);
    assert!(matches!(items[0], Cow::Borrowed(_)));
    assert!(matches!(items[1], Cow::Owned(_)));
    // Every JSON assertion `false`: no JSON completion wanted; one other value wants it.
    let all_false = read(EXPECTS[11]);
    assert!(!all_false.wants_json);
    assert_eq!(
        all_false.required_keys,
        Some(Strings::Invalid { is_false: true })
    );
    assert!(read(EXPECTS[13]).wants_json);
    assert!(read("{\"required_keys\": true}").wants_json);
    assert!(read("{\"equals\": {}}").wants_json);
    assert!(!read("{\"max_chars\": 3, \"args\": {}}").wants_json);
    // Unknown members in the order written, keys decoded.
    let unknown = read(EXPECTS[26]);
    assert_eq!(unknown.unknown, vec!["unknown_one", "unknown_two"]);
    assert_eq!(unknown.members, 3);
    assert_eq!(read("{}").members, 0);
    assert_eq!(
        read(EXPECTS[24]).require_clarification,
        Some(Clarification::Patterns(Strings::Invalid {
            is_false: false
        }))
    );
    assert_eq!(
        read(EXPECTS[25]).require_clarification,
        Some(Clarification::Invalid)
    );
    assert_eq!(Expect::of_text("null"), Some(Expect::Missing));
    for not_object in ["[1]", "\"x\"", "3", "-2.5", "false"] {
        assert_eq!(
            Expect::of_text(not_object),
            Some(Expect::NotObject),
            "{not_object}"
        );
    }
}

/// `expect` read from its text (as a check reads a case file) is `expect` read from its
/// value (as a run reads a loaded case).
fn assert_text_reading_is_the_value_reading(text: &str) {
    let value: Value = serde_json::from_str(text).expect(text);
    assert_eq!(
        Expect::of_text(text),
        Some(Expect::of_value(Some(&value))),
        "{text}"
    );
}

#[test]
fn the_text_reading_is_the_value_reading() {
    for text in EXPECTS {
        assert_text_reading_is_the_value_reading(text);
    }
    // Generated objects: every assertion name and some unknown ones, values of every
    // shape (strings with escapes and brackets in them, nested containers, lists of
    // mixed items), odd whitespace.
    const NAMES: &[&str] = &[
        "json",
        "required_keys",
        "allowed_keys",
        "status_in",
        "equals",
        "must_include",
        "forbidden",
        "forbid_patterns",
        "regex",
        "max_chars",
        "must_call",
        "must_not_call",
        "args",
        "require_clarification",
        "schema",
        "max_words",
        "caf\\u00e9",
    ];
    const VALUES: &[&str] = &[
        "true",
        "false",
        "null",
        "0",
        "-2.5e3",
        "\"plain\"",
        "\"br]ack}ets, \\\"quoted\\\" \\\\ \\u00e9 \\ud83d\\ude42\"",
        "[]",
        "[ \"a\" , \"b\\n\" ]",
        "[\"a\", 1]",
        "[[\"nested\"], \"x\"]",
        "[{\"k\": \"]\"}, \"y\"]",
        "{}",
        "{\"a\": [1, {\"b\": \"}\"}], \"c\": null}",
        "{\"order_id\": {\"eq\": \"1842-AX\"}}",
        "{\"expect\": {\"forbidden\": \"x\"}}",
        "[{\"must_include\": \"y\"}]",
    ];
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = |bound: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % bound as u64) as usize
    };
    let spaces = [" ", "", "\n\t", "  "];
    for _ in 0..5_000 {
        let mut names: Vec<&str> = Vec::new();
        for _ in 0..next(6) {
            let name = NAMES[next(NAMES.len())];
            if !names.contains(&name) {
                names.push(name);
            }
        }
        let members: Vec<String> = names
            .iter()
            .map(|name| {
                let space = spaces[next(spaces.len())];
                format!(
                    "{space}\"{name}\"{space}:{space}{}{space}",
                    VALUES[next(VALUES.len())]
                )
            })
            .collect();
        let text = format!("{{{}}}", members.join(","));
        assert_text_reading_is_the_value_reading(&text);
    }
}
