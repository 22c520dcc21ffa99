//! SARIF 2.1.0, the format GitHub code scanning uploads (`github/codeql-action/upload-sarif`).
//! Rule metadata comes from the rule table; each result carries evalock's line-independent
//! fingerprint, so code scanning follows a finding when its line moves.

use super::text::{subject_group, subject_name};
use super::Report;
use crate::finding::{Finding, Location};
use crate::rules::{RuleId, Severity, RULES};
use serde_json::{json, Map, Value};

pub const SARIF_SCHEMA_URI: &str = "https://json.schemastore.org/sarif-2.1.0.json";

/// The key under `partialFingerprints`; versioned so the recipe can change without
/// code scanning mistaking old alerts for new ones.
pub const FINGERPRINT_KEY: &str = "evalockFingerprint/v1";

/// Code scanning needs a file for every result; findings about no file point at the config.
const UNLOCATED_PATH: &str = "evalock.toml";

pub fn render(report: &Report) -> String {
    let log = json!({
        "$schema": SARIF_SCHEMA_URI,
        "version": "2.1.0",
        "runs": [{
            "tool": { "driver": driver() },
            "columnKind": "unicodeCodePoints",
            "results": report.findings.iter().map(result).collect::<Vec<_>>(),
        }],
    });
    let mut text = serde_json::to_string_pretty(&log)
        .unwrap_or_else(|error| format!("{{\"error\":\"{error}\"}}"));
    text.push('\n');
    text
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

fn result(finding: &Finding) -> Value {
    let mut result = Map::new();
    result.insert("ruleId".into(), json!(finding.rule.id()));
    result.insert("ruleIndex".into(), json!(rule_index(finding.rule)));
    result.insert("level".into(), json!(level(finding.severity)));
    result.insert(
        "message".into(),
        json!({ "text": format!("{}\nFix: {}", finding.message, finding.help) }),
    );
    let mut location = Map::new();
    location.insert(
        "physicalLocation".into(),
        physical_location(finding.location.as_ref()),
    );
    let group = subject_group(&finding.subject);
    let name = subject_name(&finding.subject, Some(finding));
    location.insert(
        "logicalLocations".into(),
        json!([{ "name": name, "fullyQualifiedName": format!("{group}/{name}"), "kind": "object" }]),
    );
    result.insert("locations".into(), json!([Value::Object(location)]));
    result.insert(
        "partialFingerprints".into(),
        json!({ FINGERPRINT_KEY: finding.fingerprint }),
    );
    let mut properties = Map::new();
    properties.insert("evalock-severity".into(), json!(finding.severity.as_str()));
    properties.insert("subject".into(), json!(finding.subject));
    if let Some(detail) = &finding.detail {
        properties.insert("detail".into(), json!(detail));
    }
    result.insert("properties".into(), Value::Object(properties));
    Value::Object(result)
}

/// The rule's position in `tool.driver.rules`, which lists the rule table in order.
fn rule_index(rule: RuleId) -> usize {
    rule as usize
}

fn physical_location(location: Option<&Location>) -> Value {
    let path = location.map_or(UNLOCATED_PATH, |location| location.path.as_str());
    let mut physical = Map::new();
    physical.insert(
        "artifactLocation".into(),
        json!({ "uri": uri_path(path), "uriBaseId": "%SRCROOT%" }),
    );
    if let Some(start_line) = location.and_then(|location| location.line) {
        let mut region = Map::new();
        region.insert("startLine".into(), json!(start_line.max(1)));
        let end_line = location
            .and_then(|location| location.end_line)
            .unwrap_or(start_line)
            .max(start_line);
        region.insert("endLine".into(), json!(end_line.max(1)));
        if let Some(column) = location.and_then(|location| location.column) {
            region.insert("startColumn".into(), json!(column.max(1)));
        }
        physical.insert("region".into(), Value::Object(region));
    }
    Value::Object(physical)
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
