//! The machine-readable format. Field names are documented in the README and stable:
//! new fields may be added, existing ones never change meaning.

use super::{Counts, Report};
use crate::finding::Finding;
use serde::Serialize;

pub const FINDINGS_SCHEMA: &str = "evalock.findings/v1";

#[derive(Serialize)]
struct JsonReport<'a> {
    schema: &'static str,
    command: &'a str,
    verdict: &'static str,
    exit_code: i32,
    source: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    base: Option<&'a str>,
    counts: Counts,
    findings: Vec<JsonFinding<'a>>,
}

#[derive(Serialize)]
struct JsonFinding<'a> {
    name: &'static str,
    #[serde(flatten)]
    finding: &'a Finding,
}

pub fn render(report: &Report) -> String {
    let document = JsonReport {
        schema: FINDINGS_SCHEMA,
        command: &report.command,
        verdict: report.verdict().as_str(),
        exit_code: report.exit_code(),
        source: &report.source,
        base: report.base.as_deref(),
        counts: report.counts(),
        findings: report
            .findings
            .iter()
            .map(|finding| JsonFinding {
                name: finding.rule.name(),
                finding,
            })
            .collect(),
    };
    let mut text = serde_json::to_string_pretty(&document)
        .unwrap_or_else(|error| format!("{{\"error\":\"{error}\"}}"));
    text.push('\n');
    text
}
