//! The command-grader protocol, as pure functions: what a grader reads on stdin
//! (`{"case", "completion"}`) and what it must print (`{"pass", "score"?, "reasons"}`).
//! Anything else it prints is an error, never a score.

use super::Grade;
use serde::Deserialize;
use serde_json::{json, Value};

/// The request a command grader reads on stdin: the whole case and the raw completion.
pub fn request(case: &Value, completion: &str) -> Vec<u8> {
    let mut bytes =
        serde_json::to_vec(&json!({ "case": case, "completion": completion })).unwrap_or_default();
    bytes.push(b'\n');
    bytes
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Verdict {
    pass: bool,
    #[serde(default)]
    score: Option<f64>,
    reasons: Vec<String>,
}

/// Reads a grader's stdout: exactly one JSON object `{pass: bool, score?: number,
/// reasons: [string]}`. The error says what was wrong, for the EL504 message.
pub fn parse_verdict(stdout: &[u8]) -> Result<Grade, String> {
    let text = std::str::from_utf8(stdout).map_err(|_| "its output is not UTF-8".to_owned())?;
    if text.trim().is_empty() {
        return Err(
            "it printed nothing; expected {\"pass\": true|false, \"reasons\": [...]}".into(),
        );
    }
    let verdict: Verdict = serde_json::from_str(text.trim()).map_err(|error| {
        format!("its output is not {{\"pass\": bool, \"score\"?: number, \"reasons\": [string]}}: {error}")
    })?;
    if verdict.score.is_some_and(|score| !score.is_finite()) {
        return Err("its score is not a finite number".into());
    }
    let mut reasons = verdict.reasons;
    if !verdict.pass && reasons.is_empty() {
        reasons.push("grader_failed".into());
    }
    Ok(Grade {
        pass: verdict.pass,
        score: verdict.score,
        reasons,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_the_documented_shape() {
        let grade =
            parse_verdict(br#"{"pass": false, "score": 0.25, "reasons": ["missing:refund"]}"#)
                .unwrap();
        assert!(!grade.pass);
        assert_eq!(grade.score, Some(0.25));
        assert_eq!(grade.reasons, vec!["missing:refund"]);
        assert!(
            parse_verdict(b"{\"pass\": true, \"reasons\": []}\n")
                .unwrap()
                .pass
        );
        assert_eq!(
            parse_verdict(br#"{"pass": false, "reasons": []}"#)
                .unwrap()
                .reasons,
            vec!["grader_failed"]
        );
    }

    #[test]
    fn anything_else_is_an_error() {
        for output in [
            &b""[..],
            b"PASS",
            b"0.9",
            br#"{"pass": "yes", "reasons": []}"#,
            br#"{"pass": true}"#,
            br#"{"pass": true, "reasons": [], "extra": 1}"#,
            br#"{"pass": true, "reasons": []} trailing"#,
            br#"{"pass": true, "reasons": [1]}"#,
            b"\xff",
        ] {
            assert!(
                parse_verdict(output).is_err(),
                "{:?}",
                String::from_utf8_lossy(output)
            );
        }
    }

    #[test]
    fn request_carries_case_and_completion() {
        let bytes = request(&json!({"id": "a"}), "hi");
        let value: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(value, json!({"case": {"id": "a"}, "completion": "hi"}));
    }
}
