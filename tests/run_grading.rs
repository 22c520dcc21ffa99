//! The built-in grader end to end on JSON envelopes: `evalock run --completions` grades
//! completions made elsewhere in a real git repository, and the results file says how
//! each case was judged.

mod common;

use common::TestRepo;
use serde_json::{json, Value};

/// A one-suite project with one case per `(id, expect)`, graded against `completions`
/// (`(case id, completion text)`) with `run --completions`; returns each case's status and
/// reasons, in case order.
fn grade(cases: &[(&str, Value)], completions: &[(&str, &str)]) -> Vec<(String, Value)> {
    let repo = TestRepo::new();
    repo.write(
        "evalock.toml",
        "version = 1\n\n[[suite]]\nname = \"mini\"\ncases = [\"evals/mini.jsonl\"]\n",
    );
    let mut lines = String::new();
    for (id, expect) in cases {
        lines.push_str(&json!({"id": id, "input": {}, "expect": expect}).to_string());
        lines.push('\n');
    }
    repo.write("evals/mini.jsonl", lines);
    let mut made = String::new();
    for (id, completion) in completions {
        made.push_str(&json!({"case_id": id, "completion": completion}).to_string());
        made.push('\n');
    }
    repo.write("made.jsonl", made);
    repo.evalock(&["lock"]).assert_code(0);
    repo.commit_all("mini project");
    let run = repo.evalock(&["run", "--completions", "made.jsonl"]);
    assert!(
        [0, 1].contains(&run.code),
        "unexpected exit {}: {}",
        run.code,
        run.all()
    );
    let results: Value =
        serde_json::from_str(&repo.read(".evalock/results.json")).expect("results file is JSON");
    results["cases"]
        .as_array()
        .expect("cases")
        .iter()
        .map(|case| {
            (
                format!(
                    "{} {}",
                    case["case_id"].as_str().unwrap_or("?"),
                    case["status"]
                ),
                case["reasons"].clone(),
            )
        })
        .collect()
}

fn verdict(id: &str, status: &str, reasons: Value) -> (String, Value) {
    (format!("{id} \"{status}\""), reasons)
}

#[test]
fn text_assertions_read_the_decoded_reply_of_an_envelope() {
    let cases = [
        ("accent-forbidden", json!({"forbidden": ["désolé"]})),
        ("accent-required", json!({"must_include": ["café"]})),
        ("quote-forbidden", json!({"forbidden": ["say \"yes\""]})),
        (
            "pattern-forbidden",
            json!({"forbid_patterns": ["d[ée]sol[ée]"]}),
        ),
        ("reply-regex", json!({"regex": ["^Un café"]})),
        ("reply-length", json!({"max_chars": 12})),
        ("call-forbidden", json!({"forbidden": ["as an AI"]})),
    ];
    let completions = [
        (
            "accent-forbidden",
            r#"{"reply": "Je suis d\u00e9sol\u00e9"}"#,
        ),
        ("accent-required", r#"{"reply": "Un caf\u00e9 ?"}"#),
        ("quote-forbidden", r#"{"text": "I say \"yes\" to that"}"#),
        ("pattern-forbidden", r#"{"content": "D\u00c9SOL\u00c9"}"#),
        ("reply-regex", r#"{"reply": "Un caf\u00e9 ?"}"#),
        (
            "reply-length",
            r#"{"reply": "Done.", "tool_calls": [{"name": "lookup", "arguments": {"note": "a long argument that is not said to anyone"}}]}"#,
        ),
        (
            "call-forbidden",
            r#"{"reply": "Sent.", "tool_calls": [{"name": "notify", "arguments": {"text": "As an AI, I refunded you"}}]}"#,
        ),
    ];
    assert_eq!(
        grade(&cases, &completions),
        vec![
            verdict("accent-forbidden", "FAIL", json!(["forbidden:désolé"])),
            verdict("accent-required", "PASS", json!([])),
            verdict("call-forbidden", "FAIL", json!(["forbidden:as an AI"])),
            verdict(
                "pattern-forbidden",
                "FAIL",
                json!(["forbid_pattern:d[ée]sol[ée]"])
            ),
            verdict("quote-forbidden", "FAIL", json!(["forbidden:say \"yes\""])),
            verdict("reply-length", "PASS", json!([])),
            verdict("reply-regex", "PASS", json!([])),
        ]
    );
}

#[test]
fn plain_text_and_clean_envelopes_are_graded_as_before() {
    let cases = [
        (
            "plain-polite",
            json!({"forbidden": ["désolé"], "must_include": ["café"]}),
        ),
        ("plain-escape", json!({"must_include": ["café"]})),
        ("plain-long", json!({"max_chars": 5})),
        (
            "envelope-clean",
            json!({"forbidden": ["désolé"], "must_include": ["café"]}),
        ),
        (
            "document",
            json!({"forbidden": ["as an AI"], "must_include": ["order_id"]}),
        ),
        ("document-escaped", json!({"must_include": ["café"]})),
    ];
    let completions = [
        ("plain-polite", "Un café ?"),
        // Plain text is read as written: an escape in prose is not decoded.
        ("plain-escape", r"Un caf\u00e9 ?"),
        ("plain-long", "longer than five"),
        (
            "envelope-clean",
            r#"{"reply": "Un caf\u00e9 ?", "status": "ok"}"#,
        ),
        // A JSON document without a reply is read whole, and its strings decoded.
        (
            "document",
            r#"{"status": "lost", "order_id": "x", "note": "As an AI I think"}"#,
        ),
        ("document-escaped", r#"{"answer": "caf\u00e9"}"#),
    ];
    assert_eq!(
        grade(&cases, &completions),
        vec![
            verdict("document", "FAIL", json!(["forbidden:as an AI"])),
            verdict("document-escaped", "PASS", json!([])),
            verdict("envelope-clean", "PASS", json!([])),
            verdict("plain-escape", "FAIL", json!(["missing:café"])),
            verdict("plain-long", "FAIL", json!(["too_long:16>5"])),
            verdict("plain-polite", "PASS", json!([])),
        ]
    );
}

#[test]
fn must_not_call_sees_every_call_shape_inside_tool_calls() {
    let no_refund = json!({"must_not_call": ["create_refund"]});
    let ids = [
        "function",
        "name",
        "tool",
        "tool-name",
        "top-tool",
        "top-tool-name",
    ];
    let cases: Vec<(&str, Value)> = ids.iter().map(|id| (*id, no_refund.clone())).collect();
    let completions = [
        (
            "function",
            r#"{"tool_calls": [{"type": "function", "function": {"name": "create_refund", "arguments": "{}"}}]}"#,
        ),
        (
            "name",
            r#"{"tool_calls": [{"name": "create_refund", "arguments": {}}]}"#,
        ),
        (
            "tool",
            r#"{"tool_calls": [{"tool": {"name": "create_refund", "args": {"order_id": "7"}}}]}"#,
        ),
        (
            "tool-name",
            r#"{"reply": "Done.", "tool_calls": [{"tool_name": "create_refund", "arguments": {}}]}"#,
        ),
        (
            "top-tool",
            r#"{"tool": {"name": "create_refund", "args": {}}, "text": "Done."}"#,
        ),
        (
            "top-tool-name",
            r#"{"tool_name": "create_refund", "arguments": {}, "content": "Done."}"#,
        ),
    ];
    // `ids` are in case order (suite, then id), as the results file lists them.
    let expected: Vec<(String, Value)> = ids
        .iter()
        .map(|id| verdict(id, "FAIL", json!(["forbidden_tool:create_refund"])))
        .collect();
    assert_eq!(grade(&cases, &completions), expected);
}

#[test]
fn a_call_that_cannot_be_read_fails_closed_and_readable_other_calls_stay_quiet() {
    let no_refund = json!({"must_not_call": ["create_refund"]});
    let ids = [
        "bad-element",
        "bad-function",
        "bad-list",
        "bad-name",
        "bad-tool",
        "clean-calls",
        "clean-null",
        "no-calls-asked",
    ];
    let cases: Vec<(&str, Value)> = ids
        .iter()
        .map(|id| match *id {
            // No assertion about calls: an unreadable call is nobody's business.
            "no-calls-asked" => (*id, json!({"must_include": ["done"]})),
            _ => (*id, no_refund.clone()),
        })
        .collect();
    let completions = [
        (
            "bad-element",
            r#"{"reply": "Done.", "tool_calls": [{"name": "get_order"}, {"id": "call_1", "type": "function"}]}"#,
        ),
        (
            "bad-function",
            r#"{"tool_calls": [{"function": "create_refund"}]}"#,
        ),
        ("bad-list", r#"{"tool_calls": {"name": "create_refund"}}"#),
        (
            "bad-name",
            r#"{"tool_calls": [{"tool_name": ["create_refund"]}]}"#,
        ),
        ("bad-tool", r#"{"tool": "create_refund", "reply": "Done."}"#),
        (
            "clean-calls",
            r#"{"reply": "Which order?", "tool_calls": [{"tool_name": "get_order", "arguments": {}}, {"tool": {"name": "lookup", "args": {}}}]}"#,
        ),
        (
            "clean-null",
            r#"{"reply": "Which order?", "tool_name": null}"#,
        ),
        (
            "no-calls-asked",
            r#"{"reply": "done", "tool_calls": [{"id": "call_1"}]}"#,
        ),
    ];
    assert_eq!(
        grade(&cases, &completions),
        vec![
            verdict(
                "bad-element",
                "FAIL",
                json!(["unreadable_tool_call:tool_calls[1]"])
            ),
            verdict(
                "bad-function",
                "FAIL",
                json!(["unreadable_tool_call:tool_calls[0].function"])
            ),
            verdict(
                "bad-list",
                "FAIL",
                json!(["unreadable_tool_call:tool_calls"])
            ),
            verdict(
                "bad-name",
                "FAIL",
                json!(["unreadable_tool_call:tool_calls[0].tool_name"])
            ),
            verdict("bad-tool", "FAIL", json!(["unreadable_tool_call:tool"])),
            verdict("clean-calls", "PASS", json!([])),
            verdict("clean-null", "PASS", json!([])),
            verdict("no-calls-asked", "PASS", json!([])),
        ]
    );
}
