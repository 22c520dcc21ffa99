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
