//! SARIF 2.1.0, the format GitHub code scanning uploads (`github/codeql-action/upload-sarif`).
//! Rule metadata comes from the rule table; each result carries evalock's line-independent
//! fingerprint, so code scanning follows a finding when its line moves.

use super::text::{subject_group, subject_name};
use super::Report;
use crate::finding::{Finding, Location, Subject};
use crate::rules::{RuleId, Severity, RULES};
use serde::Serialize;
use serde_json::{json, Value};

pub const SARIF_SCHEMA_URI: &str = "https://json.schemastore.org/sarif-2.1.0.json";

/// The key under `partialFingerprints`; versioned so the recipe can change without
/// code scanning mistaking old alerts for new ones.
pub const FINGERPRINT_KEY: &str = "evalockFingerprint/v1";

/// Code scanning rejects a run with more results than this (GitHub's documented hard
/// limit, "Results per run"): a larger report keeps its most severe findings.
pub const MAX_RESULTS: usize = 25_000;

/// The log, written field by field from the findings (a suite of 200,000 cases can yield
/// as many findings: no JSON tree is built for them).
#[derive(Serialize)]
struct Log<'a> {
    #[serde(rename = "$schema")]
    schema: &'static str,
    version: &'static str,
    runs: [Run<'a>; 1],
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Run<'a> {
    tool: Tool,
    column_kind: &'static str,
    results: Vec<SarifResult<'a>>,
    /// Only when findings were left out, to say so where code scanning shows it.
    #[serde(skip_serializing_if = "Option::is_none")]
    invocations: Option<[Invocation; 1]>,
}

#[derive(Serialize)]
struct Tool {
    driver: Value,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Invocation {
    execution_successful: bool,
    tool_execution_notifications: [Notification; 1],
}

#[derive(Serialize)]
struct Notification {
    level: &'static str,
    message: Text,
}

#[derive(Serialize)]
struct Text {
    text: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SarifResult<'a> {
    rule_id: &'static str,
    rule_index: usize,
    level: &'static str,
    message: Text,
    locations: [ResultLocation; 1],
    partial_fingerprints: Fingerprints<'a>,
    properties: Properties<'a>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ResultLocation {
    physical_location: PhysicalLocation,
    logical_locations: [LogicalLocation; 1],
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PhysicalLocation {
    artifact_location: ArtifactLocation,
    #[serde(skip_serializing_if = "Option::is_none")]
    region: Option<Region>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ArtifactLocation {
    uri: String,
    uri_base_id: &'static str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Region {
    start_line: u32,
    end_line: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    start_column: Option<u32>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct LogicalLocation {
    name: String,
    fully_qualified_name: String,
    kind: &'static str,
}

#[derive(Serialize)]
struct Fingerprints<'a> {
    #[serde(rename = "evalockFingerprint/v1")]
    fingerprint: &'a str,
}

#[derive(Serialize)]
struct Properties<'a> {
    #[serde(rename = "evalock-severity")]
    severity: &'static str,
    subject: &'a Subject,
    #[serde(skip_serializing_if = "Option::is_none")]
    detail: Option<&'a str>,
}

pub fn render(report: &Report) -> String {
    // Code scanning needs a file for every result; findings about no file point at the
    // project's config, in the project's folder like every other path.
    let unlocated_path = report.config_path();
    let kept = kept_findings(&report.findings);
    let left_out = report.findings.len() - kept.len();
    let log = Log {
        schema: SARIF_SCHEMA_URI,
        version: "2.1.0",
        runs: [Run {
            tool: Tool { driver: driver() },
            column_kind: "unicodeCodePoints",
            results: kept
                .into_iter()
                .map(|finding| result(finding, &unlocated_path))
                .collect(),
            invocations: (left_out > 0).then(|| [left_out_notice(left_out, report.findings.len())]),
        }],
    };
    let mut text = serde_json::to_string_pretty(&log)
        .unwrap_or_else(|error| format!("{{\"error\":\"{error}\"}}"));
    text.push('\n');
    text
}

/// The findings a run can hold, in report order: all of them up to [`MAX_RESULTS`], else
/// the most severe (refuse, then error, warn, note; earlier first within a severity).
fn kept_findings(findings: &[Finding]) -> Vec<&Finding> {
    if findings.len() <= MAX_RESULTS {
        return findings.iter().collect();
    }
    let mut order: Vec<usize> = (0..findings.len()).collect();
    // Stable: findings of one severity keep their report order.
    order.sort_by_key(|&index| std::cmp::Reverse(findings[index].severity));
    order.truncate(MAX_RESULTS);
    order.sort_unstable();
    order.into_iter().map(|index| &findings[index]).collect()
}

fn left_out_notice(left_out: usize, total: usize) -> Invocation {
    Invocation {
        execution_successful: true,
        tool_execution_notifications: [Notification {
            level: "warning",
            message: Text {
                text: format!(
                    "{left_out} of {total} findings are left out of this file (the least \
                     severe): code scanning rejects a run of more than {MAX_RESULTS} results. \
                     The verdict and exit code count every finding; `--format json` lists them \
                     all."
                ),
            },
        }],
    }
}

/// SARIF has three levels that gate; `refuse` and `error` both stop a merge.
pub fn level(severity: Severity) -> &'static str {
    match severity {
        Severity::Refuse | Severity::Error => "error",
        Severity::Warn => "warning",
        Severity::Note => "note",
    }
}

fn driver() -> Value {
    json!({
        "name": "evalock",
        "version": env!("CARGO_PKG_VERSION"),
        "semanticVersion": env!("CARGO_PKG_VERSION"),
        "rules": RULES.iter().map(|rule| json!({
            "id": rule.id,
            "name": rule.name,
            "shortDescription": { "text": sentence(rule.summary) },
            "fullDescription": { "text": format!("{} Fix: {}", sentence(rule.summary), sentence(rule.help)) },
            "help": {
                "text": format!("Fix: {}", sentence(rule.help)),
                "markdown": format!("**{} {}**: {}\n\n**Fix:** {}", rule.id, rule.name, sentence(rule.summary), sentence(rule.help)),
            },
            "defaultConfiguration": { "level": level(rule.severity) },
            "properties": {
                "tags": ["evalock", family(rule.id)],
                "precision": "very-high",
                "evalock-severity": rule.severity.as_str(),
            },
        })).collect::<Vec<_>>(),
    })
}

/// The rule family, from the id's hundreds digit (`EL2xx` are skill rules).
fn family(id: &str) -> &'static str {
    match id.as_bytes().get(2) {
        Some(b'1') => "cases",
        Some(b'2') => "skills",
        Some(b'3') => "graders",
        Some(b'4') => "baselines",
        Some(b'5') => "runs",
        _ => "other",
    }
}

fn sentence(text: &str) -> String {
    let mut sentence = String::with_capacity(text.len() + 1);
    let mut chars = text.chars();
    if let Some(first) = chars.next() {
        sentence.extend(first.to_uppercase());
        sentence.push_str(chars.as_str());
    }
    if !sentence.ends_with('.') {
        sentence.push('.');
    }
    sentence
}

fn result<'a>(finding: &'a Finding, unlocated_path: &str) -> SarifResult<'a> {
    let group = subject_group(&finding.subject);
    let name = subject_name(&finding.subject, Some(finding));
    SarifResult {
        rule_id: finding.rule.id(),
        rule_index: rule_index(finding.rule),
        level: level(finding.severity),
        message: Text {
            text: format!("{}\nFix: {}", finding.message, finding.help),
        },
        locations: [ResultLocation {
            physical_location: physical_location(finding.location.as_ref(), unlocated_path),
            logical_locations: [LogicalLocation {
                fully_qualified_name: format!("{group}/{name}"),
                name,
                kind: "object",
            }],
        }],
        partial_fingerprints: Fingerprints {
            fingerprint: &finding.fingerprint,
        },
        properties: Properties {
            severity: finding.severity.as_str(),
            subject: &finding.subject,
            detail: finding.detail.as_deref(),
        },
    }
}

/// The rule's position in `tool.driver.rules`, which lists the rule table in order.
fn rule_index(rule: RuleId) -> usize {
    rule as usize
}

fn physical_location(location: Option<&Location>, unlocated_path: &str) -> PhysicalLocation {
    let path = location.map_or(unlocated_path, |location| location.path.as_str());
    let region = location.and_then(|location| {
        let start_line = location.line?;
        Some(Region {
            start_line: start_line.max(1),
            end_line: location
                .end_line
                .unwrap_or(start_line)
                .max(start_line)
                .max(1),
            start_column: location.column.map(|column| column.max(1)),
        })
    });
    PhysicalLocation {
        artifact_location: ArtifactLocation {
            uri: uri_path(path),
            uri_base_id: "%SRCROOT%",
        },
        region,
    }
}

/// A relative path as a URI reference: every byte outside the unreserved set and `/`
/// is percent-encoded, so spaces, `#` and `%` in file names survive.
pub fn uri_path(path: &str) -> String {
    let mut uri = String::with_capacity(path.len());
    for byte in path.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~' | b'/') {
            uri.push(char::from(byte));
        } else {
            uri.push_str(&format!("%{byte:02X}"));
        }
    }
    uri
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_map_refuse_and_error_to_error() {
        assert_eq!(level(Severity::Refuse), "error");
        assert_eq!(level(Severity::Error), "error");
        assert_eq!(level(Severity::Warn), "warning");
        assert_eq!(level(Severity::Note), "note");
    }

    #[test]
    fn uri_paths_are_percent_encoded() {
        assert_eq!(uri_path("evals/support.jsonl"), "evals/support.jsonl");
        assert_eq!(
            uri_path("evals/my cases#1%.jsonl"),
            "evals/my%20cases%231%25.jsonl"
        );
        assert_eq!(uri_path("évals/a"), "%C3%A9vals/a");
    }

    #[test]
    fn rule_index_points_at_the_rule_in_the_driver() {
        for rule in RuleId::ALL {
            assert_eq!(RULES[rule_index(*rule)].id, rule.id());
        }
        assert_eq!(family("EL206"), "skills");
        assert_eq!(sentence("a case changed"), "A case changed.");
    }
}
