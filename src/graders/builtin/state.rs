//! What the agent left, not what it said (the seeds' AgentTwin): `expect.state` asserts
//! on the envelope's `state` at dotted paths (`equals`, `at_most`, `at_least`; a plain
//! value is `equals`), and `no_duplicate_call` on side effects done twice. A completion
//! that claims success (`claimed_outcome` or `outcome` = `SUCCESS`) while the state
//! disproves it fails with its own reason, `claimed_not_verified`.

use super::{strings, Reasons};
use crate::graders::envelope::Completion;
use crate::graders::expect::Assertions;
use serde_json::Value;

pub(super) fn check_state(
    expect: &Assertions<'_>,
    completion: &Completion<'_>,
    reasons: &mut Reasons,
) {
    for tool in strings(
        expect.no_duplicate_call.as_ref(),
        "no_duplicate_call",
        reasons,
    ) {
        let calls = completion.calls_named(tool).count();
        if calls > 1 {
            reasons.push(format_args!("duplicate_call:{tool}"));
        }
    }
    let Some(spec) = &expect.state else {
        return;
    };
    let Some(checks) = state_checks(spec) else {
        reasons.push(format_args!("invalid_assertion:state"));
        return;
    };
    let Some(state) = completion.object().and_then(|object| object.get("state")) else {
        reasons.push(format_args!("no_state"));
        return;
    };
    let mut disproved = false;
    for (path, check) in checks {
        let found = at_path(state, path);
        let holds = match (found, check) {
            (None, _) => None,
            (Some(value), Check::Equals(expected)) => Some(same(value, expected)),
            (Some(value), Check::AtMost(limit)) => value.as_f64().map(|n| n <= limit),
            (Some(value), Check::AtLeast(limit)) => value.as_f64().map(|n| n >= limit),
            (Some(_), Check::Invalid) => {
                reasons.push(format_args!("invalid_assertion:state.{path}"));
                continue;
            }
        };
        match holds {
            Some(true) => {}
            Some(false) => {
                disproved = true;
                reasons.push(format_args!("state_mismatch:{path}"));
            }
            None => {
                disproved = true;
                reasons.push(format_args!("state_missing:{path}"));
            }
        }
    }
    if disproved && claims_success(completion) {
        reasons.push(format_args!("claimed_not_verified"));
    }
}

enum Check<'v> {
    Equals(&'v Value),
    AtMost(f64),
    AtLeast(f64),
    Invalid,
}

/// `[{"path": …, "equals": …}]` or `{"<path>": <value> | {"equals"|"at_most"|"at_least": …}}`.
fn state_checks(spec: &Value) -> Option<Vec<(&str, Check<'_>)>> {
    match spec {
        Value::Array(items) => items
            .iter()
            .map(|item| {
                let path = item.get("path")?.as_str()?;
                Some((path, check_of(item)))
            })
            .collect(),
        Value::Object(map) if !map.is_empty() => Some(
            map.iter()
                .map(|(path, body)| (path.as_str(), check_of(body)))
                .collect(),
        ),
        _ => None,
    }
}

/// One path's check: `{"equals": v}`, `{"at_most": n}`, `{"at_least": n}`, or a value
/// to equal.
fn check_of(body: &Value) -> Check<'_> {
    let Value::Object(map) = body else {
        return Check::Equals(body);
    };
    if let Some(expected) = map.get("equals") {
        return Check::Equals(expected);
    }
    let limit = |key: &str| map.get(key).and_then(Value::as_f64);
    match (limit("at_most"), limit("at_least")) {
        (Some(limit), None) => Check::AtMost(limit),
        (None, Some(limit)) => Check::AtLeast(limit),
        _ => Check::Invalid,
    }
}

/// The value at a dotted path (`orders.ORD-1001.refund_count`); a list takes an index.
fn at_path<'v>(state: &'v Value, path: &str) -> Option<&'v Value> {
    path.split('.').try_fold(state, |value, key| match value {
        Value::Object(map) => map.get(key),
        Value::Array(items) => key.parse::<usize>().ok().and_then(|index| items.get(index)),
        _ => None,
    })
}

/// Equal as JSON, numbers by value (`1` and `1.0` agree).
fn same(found: &Value, expected: &Value) -> bool {
    match (found.as_f64(), expected.as_f64()) {
        (Some(a), Some(b)) => a == b,
        _ => found == expected,
    }
}

/// Whether the envelope reports success: `claimed_outcome` or `outcome` = `SUCCESS`.
fn claims_success(completion: &Completion<'_>) -> bool {
    let Some(object) = completion.object() else {
        return false;
    };
    ["claimed_outcome", "outcome"]
        .iter()
        .filter_map(|key| object.get(*key).and_then(Value::as_str))
        .any(|claimed| claimed.eq_ignore_ascii_case("success"))
}

#[cfg(test)]
mod tests {
    use crate::graders::builtin::grade;
    use serde_json::json;

    fn reasons(expect: serde_json::Value, completion: &str) -> Vec<String> {
        grade(Some(&expect), completion).reasons
    }

    const ONCE: &str = r#"{"reply": "Your refund of $40 is on its way.", "claimed_outcome": "SUCCESS", "tool_calls": [{"name": "get_refund_policy", "arguments": {}}, {"name": "refund_payment", "arguments": {"amount": 40}}], "state": {"orders": {"ORD-1001": {"refund_count": 1, "refunded_amount": 40}}}}"#;
    const TWICE: &str = r#"{"reply": "Your refund of $40 is on its way.", "claimed_outcome": "SUCCESS", "tool_calls": [{"name": "refund_payment", "arguments": {"amount": 40}}, {"name": "refund_payment", "arguments": {"amount": 40}}], "state": {"orders": {"ORD-1001": {"refund_count": 2, "refunded_amount": 80}}}}"#;

    #[test]
    fn the_state_decides_where_the_reply_cannot() {
        let expect = json!({
            "must_include": ["refund"],
            "state": [
                {"path": "orders.ORD-1001.refund_count", "equals": 1},
                {"path": "orders.ORD-1001.refunded_amount", "at_most": 40}
            ],
            "no_duplicate_call": ["refund_payment"]
        });
        assert!(reasons(expect.clone(), ONCE).is_empty());
        assert_eq!(
            reasons(expect, TWICE),
            [
                "duplicate_call:refund_payment",
                "state_mismatch:orders.ORD-1001.refund_count",
                "state_mismatch:orders.ORD-1001.refunded_amount",
                "claimed_not_verified"
            ]
        );
    }

    #[test]
    fn a_missing_state_or_path_fails_and_an_honest_failure_is_no_false_claim() {
        let expect = json!({"state": {"orders.ORD-1001.refund_count": 1}});
        assert_eq!(
            reasons(expect.clone(), r#"{"reply": "done"}"#),
            ["no_state"]
        );
        assert_eq!(
            reasons(
                expect.clone(),
                r#"{"reply": "handed to a person", "claimed_outcome": "PARTIAL", "state": {"orders": {}}}"#
            ),
            ["state_missing:orders.ORD-1001.refund_count"]
        );
        assert_eq!(
            reasons(json!({"state": 3}), ONCE),
            ["invalid_assertion:state"]
        );
        assert_eq!(
            reasons(
                json!({"state": {"orders.ORD-1001.refund_count": {"at_most": "x"}}}),
                ONCE
            ),
            ["invalid_assertion:state.orders.ORD-1001.refund_count"]
        );
    }
}
