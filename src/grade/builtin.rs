//! The built-in deterministic grader: a case's `expect` assertions over one completion.
//! It never calls a model and it fails closed: an assertion it cannot evaluate, an
//! unknown assertion, or a case with no assertions is a failure, never a pass.
//! Every failure is a grep-friendly reason code such as `missing_key:status`.

use super::envelope::Completion;
use super::expect::{Assertions, Clarification, Expect, Strings};
use super::Grade;
use regex::{Regex, RegexBuilder};
use serde_json::{Map, Value};
use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt;

/// Grades `raw` against the case's `expect` (absent: no assertions, which fails).
pub fn grade(expect: Option<&Value>, raw: &str) -> Grade {
    grade_with(&Expect::of_value(expect), &Completion::read(raw))
}

/// [`grade`] with `expect` and the completion already read.
pub fn grade_with(expect: &Expect<'_>, completion: &Completion<'_>) -> Grade {
    Grade::from_reasons(assess(expect, completion, false).found)
}

/// Whether `completion` passes: `grade(expect, raw).pass`, but stops at the first failure
/// (the probes of EL303 and EL304 need only the verdict, for every case of every check).
pub fn passes(expect: &Expect<'_>, completion: &Completion<'_>) -> bool {
    !assess(expect, completion, true).failed
}

fn assess(expect: &Expect<'_>, completion: &Completion<'_>, stop_at_first: bool) -> Reasons {
    let mut reasons = Reasons::new(stop_at_first);
    if completion.raw.trim().is_empty() {
        reasons.push(format_args!("empty_completion"));
        if reasons.settled() {
            return reasons;
        }
    }
    match expect {
        Expect::Missing => reasons.push(format_args!("no_assertions")),
        Expect::Object(expect) if expect.members == 0 => {
            reasons.push(format_args!("no_assertions"))
        }
        Expect::Object(expect) => check_all(expect, completion, &mut reasons),
        Expect::NotObject => reasons.push(format_args!("invalid_expect")),
    }
    reasons
}

/// Failure reasons in the order found, without repeats.
struct Reasons {
    found: Vec<String>,
    failed: bool,
    /// Only the verdict is wanted: the first reason settles it, and no reason is written
    /// out (the probes grade every case several times in every check).
    stop_at_first: bool,
}

impl Reasons {
    fn new(stop_at_first: bool) -> Self {
        Reasons {
            found: Vec::new(),
            failed: false,
            stop_at_first,
        }
    }

    fn push(&mut self, reason: fmt::Arguments<'_>) {
        self.failed = true;
        if self.stop_at_first {
            return;
        }
        let reason = reason.to_string();
        if !self.found.contains(&reason) {
            self.found.push(reason);
        }
    }

    /// The verdict is known and nothing more is wanted.
    fn settled(&self) -> bool {
        self.stop_at_first && self.failed
    }
}

fn check_all(expect: &Assertions<'_>, completion: &Completion<'_>, reasons: &mut Reasons) {
    for key in &expect.unknown {
        reasons.push(format_args!("unknown_assertion:{key}"));
        if reasons.settled() {
            return;
        }
    }
    if expect.wants_json {
        match (&completion.json, completion.object()) {
            (None, _) => reasons.push(format_args!("parse_fail")),
            (Some(_), None) => reasons.push(format_args!("not_object")),
            (Some(_), Some(object)) => check_json(expect, object, reasons),
        }
        if reasons.settled() {
            return;
        }
    }
    check_text(expect, completion, reasons);
    if reasons.settled() {
        return;
    }
    check_tools(expect, completion, reasons);
}

/// The strings of an assertion (none when absent); an invalid one is reported as such.
fn strings<'e>(
    assertion: Option<&'e Strings<'_>>,
    key: &str,
    reasons: &mut Reasons,
) -> Vec<&'e str> {
    match assertion {
        None => Vec::new(),
        Some(strings) => strings.valid().unwrap_or_else(|| {
            reasons.push(format_args!("invalid_assertion:{key}"));
            Vec::new()
        }),
    }
}

fn check_json(expect: &Assertions<'_>, object: &Map<String, Value>, reasons: &mut Reasons) {
    if !matches!(expect.json, None | Some(Value::Bool(_))) {
        reasons.push(format_args!("invalid_assertion:json"));
    }
    for key in strings(expect.required_keys.as_ref(), "required_keys", reasons) {
        if !object.contains_key(key) {
            reasons.push(format_args!("missing_key:{key}"));
        }
    }
    if expect.allowed_keys.is_some() {
        let allowed = strings(expect.allowed_keys.as_ref(), "allowed_keys", reasons);
        for key in object.keys().filter(|key| !allowed.contains(&key.as_str())) {
            reasons.push(format_args!("unexpected_key:{key}"));
        }
    }
    if let Some(allowed) = &expect.status_in {
        match (allowed, object.get("status")) {
            (Value::Array(allowed), Some(status)) if allowed.contains(status) => {}
            (Value::Array(_), Some(Value::String(status))) => {
                reasons.push(format_args!("status_not_in:{status}"))
            }
            (Value::Array(_), Some(other)) => reasons.push(format_args!("status_not_in:{other}")),
            (Value::Array(_), None) => reasons.push(format_args!("missing_key:status")),
            _ => reasons.push(format_args!("invalid_assertion:status_in")),
        }
    }
    match &expect.equals {
        None => {}
        Some(Value::Object(pairs)) => {
            let document = Value::Object(object.clone());
            for (path, expected) in pairs {
                match lookup(&document, path) {
                    None => reasons.push(format_args!("missing_path:{path}")),
                    Some(actual) if actual == expected => {}
                    Some(_) => reasons.push(format_args!("not_equal:{path}")),
                }
            }
        }
        Some(_) => reasons.push(format_args!("invalid_assertion:equals")),
    }
}

/// A value inside a JSON document by path: a JSON pointer (`/a/0/b`), or dotted
/// (`a.0.b`, optionally starting with `$.`) where a number indexes an array.
pub fn lookup<'v>(document: &'v Value, path: &str) -> Option<&'v Value> {
    if path.starts_with('/') {
        return document.pointer(path);
    }
    let dotted = path.strip_prefix("$.").unwrap_or(path);
    dotted
        .split('.')
        .try_fold(document, |value, segment| match value {
            Value::Object(map) => map.get(segment),
            Value::Array(items) => items.get(segment.parse::<usize>().ok()?),
            _ => None,
        })
}

/// Text assertions read what the assistant said: the decoded reply of a JSON envelope,
/// else the completion as written, and, when it is a JSON document without a reply, each
/// of its strings decoded. `forbidden` and `forbid_patterns` read every string of an
/// envelope too (tool-call arguments, other fields), so nothing forbidden passes behind an
/// escape or inside a call.
fn check_text(expect: &Assertions<'_>, completion: &Completion<'_>, reasons: &mut Reasons) {
    let said = completion.asserted_text();
    let is_envelope = completion.reply_field().is_some();
    let any_text = expect.must_include.is_some()
        || expect.forbidden.is_some()
        || expect.forbid_patterns.is_some()
        || expect.regex.is_some();
    let decoded = if any_text {
        completion.decoded_strings()
    } else {
        Vec::new()
    };
    // What positive assertions (`must_include`, `regex`) may match, and what negative
    // ones (`forbidden`, `forbid_patterns`) must not.
    let required_in: Vec<&str> = match is_envelope {
        true => vec![said],
        false => std::iter::once(said)
            .chain(decoded.iter().copied())
            .collect(),
    };
    let forbidden_in: Vec<&str> = std::iter::once(said)
        .chain(decoded.iter().copied())
        .collect();
    let lowered =
        |texts: &[&str]| -> Vec<String> { texts.iter().map(|text| text.to_lowercase()).collect() };
    if expect.must_include.is_some() {
        let haystacks = lowered(&required_in);
        for needle in strings(expect.must_include.as_ref(), "must_include", reasons) {
            let needle_lowered = needle.to_lowercase();
            if !haystacks.iter().any(|text| text.contains(&needle_lowered)) {
                reasons.push(format_args!("missing:{needle}"));
            }
        }
    }
    if expect.forbidden.is_some() {
        let haystacks = lowered(&forbidden_in);
        for phrase in strings(expect.forbidden.as_ref(), "forbidden", reasons) {
            let phrase_lowered = phrase.to_lowercase();
            if haystacks.iter().any(|text| text.contains(&phrase_lowered)) {
                reasons.push(format_args!("forbidden:{phrase}"));
            }
        }
    }
    for pattern in strings(expect.forbid_patterns.as_ref(), "forbid_patterns", reasons) {
        match compile(pattern, true) {
            Some(regex) if forbidden_in.iter().any(|text| regex.is_match(text)) => {
                reasons.push(format_args!("forbid_pattern:{pattern}"))
            }
            Some(_) => {}
            None => reasons.push(format_args!("invalid_regex:{pattern}")),
        }
    }
    for pattern in strings(expect.regex.as_ref(), "regex", reasons) {
        match compile(pattern, false) {
            Some(regex) if required_in.iter().any(|text| regex.is_match(text)) => {}
            Some(_) => reasons.push(format_args!("regex_mismatch:{pattern}")),
            None => reasons.push(format_args!("invalid_regex:{pattern}")),
        }
    }
    match &expect.max_chars {
        None => {}
        Some(Value::Number(number)) if number.as_u64().is_some() => {
            let limit = number.as_u64().unwrap_or(0);
            let count = said.chars().count() as u64;
            if count > limit {
                reasons.push(format_args!("too_long:{count}>{limit}"));
            }
        }
        Some(_) => reasons.push(format_args!("invalid_assertion:max_chars")),
    }
}

/// `forbid_patterns` match case-insensitively (as the seeds' graders do); `regex` is
/// taken as written (`(?i)` makes it case-insensitive).
/// Each pattern is compiled once per thread (a suite repeats its patterns case after
/// case, and probes grade every case several times).
fn compile(pattern: &str, case_insensitive: bool) -> Option<Regex> {
    /// Past this many patterns the cache starts over, bounding its memory.
    const MAX_CACHED: usize = 4096;
    thread_local! {
        /// Case-sensitive patterns, then case-insensitive ones.
        static COMPILED: RefCell<[HashMap<String, Option<Regex>>; 2]> = RefCell::default();
    }
    COMPILED.with(|compiled| {
        let mut compiled = compiled.borrow_mut();
        let compiled = &mut compiled[usize::from(case_insensitive)];
        if let Some(regex) = compiled.get(pattern) {
            return regex.clone();
        }
        let regex = RegexBuilder::new(pattern)
            .case_insensitive(case_insensitive)
            .size_limit(1 << 20)
            .build()
            .ok();
        if compiled.len() >= MAX_CACHED {
            compiled.clear();
        }
        compiled.insert(pattern.to_owned(), regex.clone());
        regex
    })
}

fn check_tools(expect: &Assertions<'_>, completion: &Completion<'_>, reasons: &mut Reasons) {
    for name in strings(expect.must_call.as_ref(), "must_call", reasons) {
        if completion.calls_named(name).next().is_none() {
            reasons.push(format_args!("missing_tool:{name}"));
        }
    }
    let forbidden_calls = strings(expect.must_not_call.as_ref(), "must_not_call", reasons);
    for name in &forbidden_calls {
        if completion.calls_named(name).next().is_some() {
            reasons.push(format_args!("forbidden_tool:{name}"));
        }
    }
    if !forbidden_calls.is_empty() {
        unreadable_calls(completion, reasons);
    }
    match &expect.args {
        None => {}
        Some(Value::Object(tools)) => {
            for (tool, spec) in tools {
                check_arguments(tool, spec, completion, reasons);
            }
        }
        Some(_) => reasons.push(format_args!("invalid_assertion:args")),
    }
    match &expect.require_clarification {
        None | Some(Clarification::Required(false)) => {}
        Some(Clarification::Required(true)) => check_clarification(completion, &[], reasons),
        Some(Clarification::Patterns(patterns)) => {
            let patterns = strings(Some(patterns), "require_clarification", reasons);
            check_clarification(completion, &patterns, reasons);
        }
        Some(Clarification::Invalid) => {
            reasons.push(format_args!("invalid_assertion:require_clarification"))
        }
    }
}

/// A call the grader cannot read may be any call: assertions that forbid calls fail
/// closed on it, naming where it is (`unreadable_tool_call:tool_calls[1]`).
fn unreadable_calls(completion: &Completion<'_>, reasons: &mut Reasons) {
    for at in &completion.unreadable_calls {
        reasons.push(format_args!("unreadable_tool_call:{at}"));
    }
}

/// Every expected argument must equal what the first call to `tool` passed; a plain value
/// or `{"eq": value}`.
fn check_arguments(tool: &str, spec: &Value, completion: &Completion<'_>, reasons: &mut Reasons) {
    let Value::Object(expected) = spec else {
        reasons.push(format_args!("invalid_assertion:args.{tool}"));
        return;
    };
    let Some(call) = completion.calls_named(tool).next() else {
        reasons.push(format_args!("missing_tool:{tool}"));
        return;
    };
    for (key, rule) in expected {
        let wanted = match rule {
            Value::Object(rule) if rule.len() == 1 && rule.contains_key("eq") => &rule["eq"],
            other => other,
        };
        if call.arguments.get(key) != Some(wanted) {
            reasons.push(format_args!("arg_mismatch:{tool}.{key}"));
        }
    }
}

/// Underspecified input: completing is the failure. Any tool call fails, and the reply
/// must ask: contain a `?`, or match one of the given patterns (case-insensitive).
fn check_clarification(completion: &Completion<'_>, patterns: &[&str], reasons: &mut Reasons) {
    for call in &completion.tool_calls {
        reasons.push(format_args!(
            "completed_without_clarification:{}",
            call.name
        ));
    }
    unreadable_calls(completion, reasons);
    let reply = completion.reply_text();
    let asked = if patterns.is_empty() {
        reply.contains('?')
    } else {
        patterns
            .iter()
            .any(|pattern| compile(pattern, true).is_some_and(|regex| regex.is_match(reply)))
    };
    if !asked {
        reasons.push(format_args!("no_clarifying_question"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn reasons(expect: Value, completion: &str) -> Vec<String> {
        grade(Some(&expect), completion).reasons
    }

    #[test]
    fn seed_status_case_passes_and_fails_with_reason_codes() {
        let expect = json!({"json": true, "required_keys": ["status", "order_id"], "forbidden": ["as an AI", "I think"], "status_in": ["paid", "pending", "failed"]});
        assert!(grade(Some(&expect), r#"{"status":"paid","order_id":"ord_1042"}"#).pass);
        assert_eq!(reasons(expect.clone(), "not json"), vec!["parse_fail"]);
        assert_eq!(
            reasons(expect.clone(), r#"{"order_id":"x"}"#),
            vec!["missing_key:status"]
        );
        assert_eq!(
            reasons(
                expect.clone(),
                r#"{"status":"lost","order_id":"x","note":"As an AI I think"}"#
            ),
            vec![
                "status_not_in:lost",
                "forbidden:as an AI",
                "forbidden:I think"
            ]
        );
        assert_eq!(reasons(expect.clone(), "[1]"), vec!["not_object"]);
        // A status that is not a string is reported as such, not as a bad assertion
        // (kills `delete match arm (Value::Array(_), Some(other))`).
        assert_eq!(
            reasons(expect, r#"{"status":7,"order_id":"x"}"#),
            vec!["status_not_in:7"]
        );
    }

    #[test]
    fn allowed_keys_and_equals_on_paths() {
        let expect = json!({"allowed_keys": ["error", "detail"], "equals": {"error": "missing_order_id", "/detail/0": 1, "detail.1": 2}});
        assert!(
            grade(
                Some(&expect),
                r#"{"error":"missing_order_id","detail":[1,2]}"#
            )
            .pass
        );
        assert_eq!(
            reasons(expect, r#"{"error":"other","extra":true,"detail":[1]}"#),
            vec![
                "unexpected_key:extra",
                "not_equal:error",
                "missing_path:detail.1"
            ]
        );
    }

    #[test]
    fn text_assertions() {
        let expect = json!({"must_include": ["2 Years"], "forbid_patterns": ["tracking number I made up"], "regex": ["^\\S"], "max_chars": 20});
        assert!(grade(Some(&expect), "Warranty: 2 years.").pass);
        assert_eq!(
            reasons(expect, " TRACKING NUMBER I MADE UP is long"),
            vec![
                "missing:2 Years",
                "forbid_pattern:tracking number I made up",
                "regex_mismatch:^\\S",
                "too_long:34>20"
            ]
        );
        assert_eq!(reasons(json!({"regex": "("}), "x"), vec!["invalid_regex:("]);
    }

    #[test]
    fn text_assertions_read_the_decoded_reply_of_an_envelope() {
        assert_eq!(
            reasons(
                json!({"forbidden": ["désolé"]}),
                r#"{"reply": "Je suis d\u00e9sol\u00e9"}"#
            ),
            vec!["forbidden:désolé"]
        );
        assert!(reasons(
            json!({"must_include": ["café"]}),
            r#"{"reply": "caf\u00e9"}"#
        )
        .is_empty());
        assert_eq!(
            reasons(
                json!({"forbidden": ["say \"yes\""]}),
                r#"{"reply": "I say \"yes\""}"#
            ),
            vec!["forbidden:say \"yes\""]
        );
        // Only the reply is said: the envelope around it is not counted or matched.
        let envelope = r#"{"reply": "Hello", "status": "answered", "tool_calls": [{"name": "lookup", "arguments": {"q": "a long query"}}]}"#;
        assert!(reasons(json!({"max_chars": 5, "regex": ["^Hello$"]}), envelope).is_empty());
        assert_eq!(
            reasons(json!({"must_include": ["answered"]}), envelope),
            vec!["missing:answered"]
        );
        // ... but nothing forbidden hides in a call.
        assert_eq!(
            reasons(json!({"forbid_patterns": ["long QUERY"]}), envelope),
            vec!["forbid_pattern:long QUERY"]
        );
        // A JSON document without a reply: each assertion alone reads its strings decoded.
        let document = r#"{"note": "a r\u0065fund was issued"}"#;
        assert_eq!(
            reasons(json!({"forbidden": ["refund"]}), document),
            vec!["forbidden:refund"]
        );
        assert!(reasons(json!({"must_include": ["refund"]}), document).is_empty());
        assert!(reasons(json!({"regex": ["r.fund was"]}), document).is_empty());
    }

    #[test]
    fn unreadable_calls_fail_only_assertions_that_forbid_calls() {
        let unreadable = r#"{"reply": "Which order?", "tool_calls": [{"id": "call_1"}]}"#;
        assert_eq!(
            reasons(json!({"must_not_call": ["create_refund"]}), unreadable),
            vec!["unreadable_tool_call:tool_calls[0]"]
        );
        assert_eq!(
            reasons(json!({"require_clarification": true}), unreadable),
            vec!["unreadable_tool_call:tool_calls[0]"]
        );
        assert!(reasons(json!({"must_include": ["order"]}), unreadable).is_empty());
        assert_eq!(
            reasons(json!({"must_call": ["create_refund"]}), unreadable),
            vec!["missing_tool:create_refund"]
        );
    }

    #[test]
    fn tool_call_assertions() {
        let expect = json!({"must_call": ["get_order"], "must_not_call": ["create_refund"], "args": {"get_order": {"order_id": {"eq": "1842-AX"}}}});
        let good = r#"{"tool_calls":[{"name":"get_order","arguments":{"order_id":"1842-AX"}}]}"#;
        assert!(grade(Some(&expect), good).pass);
        let bad = r#"{"tool_calls":[{"name":"get_order","arguments":{"order_id":"1"}},{"name":"create_refund","arguments":{}}]}"#;
        assert_eq!(
            reasons(expect.clone(), bad),
            vec![
                "forbidden_tool:create_refund",
                "arg_mismatch:get_order.order_id"
            ]
        );
        assert_eq!(
            reasons(expect, "I looked it up."),
            vec!["missing_tool:get_order"]
        );
        // An argument expected to be an object is compared as written; only `{"eq": v}`
        // (that one key) is unwrapped.
        let call = r#"{"tool_calls":[{"name":"search","arguments":{"filter":{"status":"open"},"page":{"eq":1,"size":2}}}]}"#;
        let literal = json!({"args": {"search": {"filter": {"status": "open"}, "page": {"eq": 1, "size": 2}}}});
        assert!(reasons(literal, call).is_empty());
        let unwrapped = json!({"args": {"search": {"filter": {"eq": {"status": "open"}}}}});
        assert!(reasons(unwrapped, call).is_empty());
    }

    #[test]
    fn require_clarification_makes_completing_the_failure() {
        let expect = json!({"require_clarification": true, "must_not_call": ["create_refund"]});
        assert!(grade(Some(&expect), "Which order id should I refund?").pass);
        assert!(grade(Some(&expect), r#"{"reply":"Which order?","tool_calls":[]}"#).pass);
        assert_eq!(
            reasons(
                expect,
                r#"{"reply":"Refund issued.","tool_calls":[{"name":"create_refund","arguments":{"order_id":"guess"}}]}"#
            ),
            vec![
                "forbidden_tool:create_refund",
                "completed_without_clarification:create_refund",
                "no_clarifying_question"
            ]
        );
        let patterns = json!({"require_clarification": ["order (id|number)", "which order"]});
        assert!(grade(Some(&patterns), "Please send the order number.").pass);
        assert_eq!(reasons(patterns, "Done?"), vec!["no_clarifying_question"]);
    }

    #[test]
    fn fails_closed() {
        assert_eq!(grade(None, "anything").reasons, vec!["no_assertions"]);
        assert_eq!(reasons(json!({}), "anything"), vec!["no_assertions"]);
        assert_eq!(
            reasons(json!({"error_equals": "x"}), "anything"),
            vec!["unknown_assertion:error_equals"]
        );
        // Neither text nor a negative or fractional limit is a limit (kills `replace match
        // guard number.as_u64().is_some() with true`).
        for limit in [json!("ten"), json!(-5), json!(2.5)] {
            assert_eq!(
                reasons(json!({ "max_chars": limit }), "x"),
                vec!["invalid_assertion:max_chars"]
            );
        }
        assert_eq!(
            reasons(json!({"forbidden": ["x"]}), "  "),
            vec!["empty_completion"]
        );
        assert_eq!(reasons(json!("nope"), "x"), vec!["invalid_expect"]);
        // A list with one non-string member is invalid as a whole, not half-checked
        // (kills `replace match guard items.iter().all(Value::is_string) with true`).
        assert_eq!(
            reasons(json!({"must_include": ["ok", 3]}), "ok"),
            vec!["invalid_assertion:must_include"]
        );
    }

    #[test]
    fn the_verdict_alone_agrees_with_the_full_grade() {
        let expects = [
            json!(null),
            json!({}),
            json!([1]),
            json!({"must_include": ["refund", "days"]}),
            json!({"forbidden": ["cannot"], "max_chars": 40}),
            json!({"json": true, "required_keys": ["answer"], "status_in": ["ok"]}),
            json!({"equals": {"answer": "yes"}, "allowed_keys": ["answer", "status"]}),
            json!({"forbid_patterns": ["(?:sorry|cannot)"], "regex": ["^[A-Z]"]}),
            json!({"must_call": ["lookup"], "args": {"lookup": {"id": 7}}}),
            json!({"must_not_call": ["delete"], "require_clarification": true}),
            json!({"schema": {}, "must_include": "ok"}),
            json!({"regex": ["("]}),
        ];
        let completions = [
            "",
            "   ",
            crate::grade::REFUSAL_PROBE,
            "Refund within 30 days",
            "ok",
            r#"{"answer": "yes", "status": "ok"}"#,
            r#"{"answer": "no"}"#,
            r#"{"tool_calls": [{"name": "lookup", "arguments": {"id": 7}}]}"#,
            r#"{"tool_calls": [{"name": "delete", "arguments": {}}]}"#,
            r#"{"reply": "Refund within 30 days, \u00e9", "tool_calls": [{"id": 1}]}"#,
            "[1, 2]",
        ];
        for expect in &expects {
            for completion in completions {
                assert_eq!(
                    passes(
                        &Expect::of_value(Some(expect)),
                        &Completion::read(completion)
                    ),
                    grade(Some(expect), completion).pass,
                    "{expect} / {completion:?}"
                );
            }
        }
        let refund = json!({"must_include": ["refund"]});
        assert!(passes(
            &Expect::of_value(Some(&refund)),
            &Completion::read("Refund now")
        ));
        assert!(!passes(&Expect::Missing, &Completion::read("anything")));
    }

    #[test]
    fn a_pattern_compiled_once_keeps_its_case_sensitivity() {
        let insensitive = json!({"forbid_patterns": ["REFUND"]});
        let sensitive = json!({"regex": ["REFUND"]});
        for _ in 0..2 {
            assert_eq!(
                reasons(insensitive.clone(), "refund please"),
                vec!["forbid_pattern:REFUND"]
            );
            assert_eq!(
                reasons(sensitive.clone(), "refund please"),
                vec!["regex_mismatch:REFUND"]
            );
            assert!(reasons(sensitive.clone(), "REFUND please").is_empty());
        }
    }
}
