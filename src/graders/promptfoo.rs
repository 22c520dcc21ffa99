//! `grader = "promptfoo"`: promptfoo's deterministic assertions, read as a test's
//! `assert` list writes them, graded in process. A type that needs a model or code
//! (`llm-rubric`, `javascript`, `python`, `similar`, …) fails closed: it is never
//! skipped, and the reason points to command graders.

use super::Grade;
use regex::RegexBuilder;
use serde_json::Value;

/// The grader's id (a suite's `grader = "promptfoo"`) and version, as baselines record them.
pub use crate::project::config::PROMPTFOO_GRADER_ID;
pub const PROMPTFOO_GRADER_VERSION: &str = "1";

/// The verdict of a test's `assert` list on one completion: every assertion must hold.
pub fn grade(asserts: Option<&Value>, completion: &str) -> Grade {
    let mut reasons = Vec::new();
    match asserts {
        None | Some(Value::Null) => {
            reasons.push("no_assertions: the test has no `assert` list".to_owned())
        }
        Some(Value::Array(list)) if list.is_empty() => {
            reasons.push("no_assertions: the test's `assert` list is empty".to_owned())
        }
        Some(Value::Array(list)) => {
            for (index, assertion) in list.iter().enumerate() {
                if let Err(reason) = holds(assertion, completion) {
                    reasons.push(format!("assert[{index}]: {reason}"));
                }
            }
        }
        Some(_) => reasons.push("malformed_assert: `assert` must be a list".to_owned()),
    }
    Grade::from_reasons(reasons)
}

/// Whether one assertion holds; `Err` says why not.
fn holds(assertion: &Value, completion: &str) -> Result<(), String> {
    let Some(kind) = assertion.get("type").and_then(Value::as_str) else {
        return Err("malformed: an assertion needs a string `type`".to_owned());
    };
    let (negated, base) = match kind.strip_prefix("not-") {
        Some(base) => (true, base),
        None => (false, kind),
    };
    let value = assertion.get("value");
    let outcome = match base {
        "equals" => Ok(completion.trim() == text_of(value)?.trim()),
        "contains" => Ok(completion.contains(text_of(value)?.as_str())),
        "icontains" => Ok(completion
            .to_lowercase()
            .contains(&text_of(value)?.to_lowercase())),
        "contains-any" => Ok(list_of(value)?.iter().any(|item| completion.contains(item.as_str()))),
        "contains-all" => Ok(list_of(value)?.iter().all(|item| completion.contains(item.as_str()))),
        "icontains-any" => {
            let lower = completion.to_lowercase();
            Ok(list_of(value)?.iter().any(|item| lower.contains(&item.to_lowercase())))
        }
        "icontains-all" => {
            let lower = completion.to_lowercase();
            Ok(list_of(value)?.iter().all(|item| lower.contains(&item.to_lowercase())))
        }
        "starts-with" => Ok(completion.starts_with(text_of(value)?.as_str())),
        "regex" => {
            let pattern = text_of(value)?;
            RegexBuilder::new(&pattern)
                .size_limit(1 << 20)
                .build()
                .map(|regex| regex.is_match(completion))
                .map_err(|_| format!("malformed: `{kind}` has an invalid regex"))
        }
        "is-json" => Ok(serde_json::from_str::<Value>(completion.trim()).is_ok()),
        "contains-json" => Ok(contains_json(completion)),
        other => {
            return Err(format!(
                "unsupported: assertion type `{other}` is not deterministic and cannot be graded in process; grade this suite with a command grader (`[grader.<id>]` with `kind = \"command\"`)"
            ))
        }
    }?;
    match outcome != negated {
        true => Ok(()),
        false if negated => Err(format!("{kind}: the completion matches what it must not")),
        false => Err(format!("{kind}: not satisfied")),
    }
}

fn text_of(value: Option<&Value>) -> Result<String, String> {
    match value {
        Some(Value::String(text)) => Ok(text.clone()),
        Some(Value::Number(number)) => Ok(number.to_string()),
        Some(Value::Bool(flag)) => Ok(flag.to_string()),
        _ => Err("malformed: the assertion needs a `value`".to_owned()),
    }
}

/// A list value, or a comma-separated string as promptfoo's CSV writes one.
fn list_of(value: Option<&Value>) -> Result<Vec<String>, String> {
    match value {
        Some(Value::Array(items)) => items.iter().map(|item| text_of(Some(item))).collect(),
        Some(Value::String(text)) => {
            Ok(text.split(',').map(|item| item.trim().to_owned()).collect())
        }
        _ => Err("malformed: the assertion needs a list `value`".to_owned()),
    }
}

/// Whether some `{…}` or `[…]` span of the completion is JSON.
fn contains_json(completion: &str) -> bool {
    completion.char_indices().any(|(start, character)| {
        matches!(character, '{' | '[')
            && serde_json::Deserializer::from_str(&completion[start..])
                .into_iter::<Value>()
                .next()
                .is_some_and(|value| value.is_ok())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn passes(asserts: Value, completion: &str) -> bool {
        grade(Some(&asserts), completion).pass
    }

    #[test]
    fn each_deterministic_type_passes_and_fails() {
        let cases = [
            (
                json!({"type": "equals", "value": "Paris"}),
                "Paris\n",
                "Lyon",
            ),
            (
                json!({"type": "contains", "value": "4"}),
                "it is 4",
                "it is four",
            ),
            (
                json!({"type": "icontains", "value": "PARIS"}),
                "paris!",
                "lyon",
            ),
            (
                json!({"type": "contains-any", "value": ["a", "b"]}),
                "xbx",
                "xyz",
            ),
            (json!({"type": "contains-all", "value": "a, b"}), "ab", "a"),
            (json!({"type": "regex", "value": "^\\d+$"}), "42", "4 2"),
            (
                json!({"type": "starts-with", "value": "Yes"}),
                "Yes, sure",
                "No",
            ),
            (json!({"type": "is-json"}), "{\"a\": 1}", "{a: 1}"),
            (
                json!({"type": "contains-json"}),
                "here: {\"a\": [1]} done",
                "no json",
            ),
            (
                json!({"type": "not-contains", "value": "sorry"}),
                "done",
                "sorry, no",
            ),
        ];
        for (assertion, good, bad) in cases {
            assert!(
                passes(json!([assertion.clone()]), good),
                "{assertion} on {good:?}"
            );
            assert!(
                !passes(json!([assertion.clone()]), bad),
                "{assertion} on {bad:?}"
            );
        }
    }

    #[test]
    fn what_cannot_be_graded_in_process_fails_closed() {
        let verdict = grade(
            Some(&json!([{"type": "llm-rubric", "value": "is polite"}])),
            "Hello!",
        );
        assert!(!verdict.pass);
        assert!(
            verdict.reasons[0].contains("`llm-rubric` is not deterministic"),
            "{:?}",
            verdict.reasons
        );
        assert!(verdict.reasons[0].contains("command grader"));
        assert!(!grade(None, "anything").pass, "no assertions is no pass");
        assert!(
            !passes(json!([{"type": "regex", "value": "("}]), "x"),
            "a bad regex fails"
        );
    }
}
