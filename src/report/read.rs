//! Reading saved reports back, whatever command wrote them: the file's `schema` field
//! picks the reader, so each new kind of saved file is one more match arm.

use super::{json, Report};
use crate::error::{Error, Result};
use serde::Deserialize;

/// Every schema [`read_report`] understands, for messages.
pub const READABLE_SCHEMAS: &[&str] = &[json::FINDINGS_SCHEMA, crate::run::results::RESULTS_SCHEMA];

#[derive(Deserialize)]
struct SchemaOnly {
    #[serde(default)]
    schema: Option<String>,
}

/// Reads a saved report (`evalock check --format json`, …); `label` names the file in errors.
pub fn read_report(label: &str, bytes: &[u8]) -> Result<Report> {
    let peek: SchemaOnly = serde_json::from_slice(bytes).map_err(|error| {
        match Error::malformed_json(label, bytes, &error) {
            Error::Malformed { location, message } => {
                Error::malformed(location, format!("not a JSON report: {message}"))
            }
            other => other,
        }
    })?;
    match peek.schema.as_deref() {
        Some(json::FINDINGS_SCHEMA) => json::parse(label, bytes),
        // [run] results files (`evalock run --out`) are read here.
        Some(crate::run::results::RESULTS_SCHEMA) => {
            crate::run::results::Results::parse(label, bytes)
                .map(|results| Report::of_run(&results))
        }
        Some(other) => Err(unreadable(label, &format!("schema `{other}`"))),
        None => Err(unreadable(label, "no `schema` field")),
    }
}

fn unreadable(label: &str, what: &str) -> Error {
    Error::malformed(
        label,
        format!(
            "{what}: `evalock report` reads {}; write one with `evalock check --format json --output FILE`",
            READABLE_SCHEMAS.join(", ")
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::finding::{Finding, Subject};
    use crate::rules::RuleId;

    #[test]
    fn json_errors_are_located_once_and_from_one() {
        let empty = read_report("empty.json", b"").unwrap_err().to_string();
        assert_eq!(
            empty,
            "empty.json:1:1: not a JSON report: EOF while parsing a value"
        );
        let broken = read_report("r.json", b"{\n  \"schema\": }")
            .unwrap_err()
            .to_string();
        assert!(
            broken.starts_with("r.json:2:13: not a JSON report: "),
            "{broken}"
        );
        assert!(!broken.contains("at line"), "{broken}");
    }

    #[test]
    fn reads_findings_reports_and_names_what_it_cannot_read() {
        let report = Report::new(
            "check",
            "index".into(),
            None,
            vec![Finding::new(
                RuleId::CaseRemoved,
                Subject::case("s", "c"),
                "gone",
            )],
        );
        let read = read_report("r.json", json::render(&report).as_bytes()).expect("readable");
        assert_eq!(read.findings, report.findings);
        let error = read_report("r.json", br#"{"schema": "evalock.results/v9"}"#)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            error.starts_with(
                "r.json: schema `evalock.results/v9`: `evalock report` reads evalock.findings/v1"
            ),
            "{error}"
        );
        let error = read_report("r.json", b"[1, 2]")
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(error.starts_with("r.json:1:"), "{error}");
        let error = read_report("r.json", b"{}")
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(error.contains("no `schema` field"), "{error}");
    }
}
