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
    let literal =
        json!({"args": {"search": {"filter": {"status": "open"}, "page": {"eq": 1, "size": 2}}}});
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
        crate::graders::REFUSAL_PROBE,
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
