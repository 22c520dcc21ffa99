//! The machine-readable format. Field names are documented in the README and stable:
//! new fields may be added, existing ones never change meaning. [`parse`] reads it back,
//! so a saved report can be re-rendered in any format (`evalock report --from`).

use super::{Counts, Report};
use crate::error::{Error, Result};
use crate::finding::{Finding, Location, Subject};
use crate::rules::{RuleId, Severity};
use serde::{Deserialize, Serialize};

pub const FINDINGS_SCHEMA: &str = "evalock.findings/v1";

/// The longest suggested line a saved report may carry: a comment holds 65,536 UTF-16 units.
const MAX_SUGGESTION_BYTES: usize = 60_000;

#[derive(Serialize)]
struct JsonReport<'a> {
    schema: &'static str,
    command: &'a str,
    verdict: &'static str,
    exit_code: i32,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    fail_on_diff: bool,
    source: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    base: Option<&'a str>,
    #[serde(skip_serializing_if = "str::is_empty")]
    path_prefix: &'a str,
    counts: Counts,
    findings: Vec<JsonFinding<'a>>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    subjects: &'a [Subject],
    /// A run's pass rates per stratum.
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    strata: &'a std::collections::BTreeMap<String, crate::run::results::StratumRate>,
    #[serde(skip_serializing_if = "Option::is_none")]
    trend: Option<&'a super::trend::Trend>,
}

#[derive(Serialize)]
struct JsonFinding<'a> {
    name: &'static str,
    #[serde(flatten)]
    finding: &'a Finding,
}

/// The report, written as it is serialized: a report lists every case it judged (200,000
/// subjects are 14 MB of JSON), which is never held as one string.
pub fn write(report: &Report, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    let document = JsonReport {
        schema: FINDINGS_SCHEMA,
        command: &report.command,
        verdict: report.verdict().as_str(),
        exit_code: report.exit_code(),
        fail_on_diff: report.fail_on_diff,
        source: &report.source,
        base: report.base.as_deref(),
        path_prefix: &report.path_prefix,
        counts: report.counts(),
        findings: report
            .findings
            .iter()
            .map(|finding| JsonFinding {
                name: finding.rule.name(),
                finding,
            })
            .collect(),
        subjects: &report.subjects,
        strata: &report.strata,
        trend: report.trend.as_deref(),
    };
    serde_json::to_writer_pretty(&mut *out, &document)?;
    out.write_all(b"\n")
}

pub fn render(report: &Report) -> String {
    let mut bytes = Vec::new();
    if let Err(error) = write(report, &mut bytes) {
        return format!("{{\"error\":\"{error}\"}}\n");
    }
    String::from_utf8(bytes)
        .unwrap_or_else(|error| String::from_utf8_lossy(error.as_bytes()).into_owned())
}

/// What a saved findings report holds; derived fields (verdict, counts, names) are
/// recomputed from the findings rather than trusted.
#[derive(Deserialize)]
struct SavedReport {
    schema: String,
    command: String,
    source: String,
    #[serde(default)]
    base: Option<String>,
    /// Written by `evalock report --path-prefix`: the paths already carry it.
    #[serde(default)]
    path_prefix: String,
    #[serde(default)]
    fail_on_diff: bool,
    /// Older writers did not record `fail_on_diff`; exit code 3 implies it.
    #[serde(default)]
    exit_code: Option<i32>,
    findings: Vec<SavedFinding>,
    #[serde(default)]
    subjects: Vec<Subject>,
    #[serde(default)]
    strata: std::collections::BTreeMap<String, crate::run::results::StratumRate>,
    #[serde(default)]
    trend: Option<Box<super::trend::Trend>>,
}

#[derive(Deserialize)]
struct SavedFinding {
    rule: String,
    severity: String,
    message: String,
    help: String,
    #[serde(default)]
    location: Option<Location>,
    #[serde(default)]
    subject: Subject,
    fingerprint: String,
    #[serde(default)]
    detail: Option<String>,
    #[serde(default)]
    related: Vec<crate::finding::Related>,
    #[serde(default)]
    suggestion: Option<crate::finding::Suggestion>,
}

/// Reads a report written by [`render`]; `label` names the file in errors.
pub fn parse(label: &str, bytes: &[u8]) -> Result<Report> {
    let saved: SavedReport = serde_json::from_slice(bytes)
        .map_err(|error| Error::malformed_json(label, bytes, &error))?;
    if saved.schema != FINDINGS_SCHEMA {
        return Err(Error::malformed(
            label,
            format!("schema is `{}`, expected `{FINDINGS_SCHEMA}`", saved.schema),
        ));
    }
    let findings = saved
        .findings
        .into_iter()
        .enumerate()
        .map(|(index, finding)| {
            finding
                .into_finding()
                .map_err(|message| Error::malformed(label, format!("findings[{index}]: {message}")))
        })
        .collect::<Result<Vec<_>>>()?;
    let mut report = Report::new(&saved.command, saved.source, saved.base, findings)
        .with_subjects(saved.subjects);
    report.fail_on_diff =
        saved.fail_on_diff || saved.exit_code == Some(crate::finding::exit_code::MOVED);
    report.path_prefix = saved.path_prefix;
    report.strata = saved.strata;
    report.trend = saved.trend;
    Ok(report)
}

impl SavedFinding {
    fn into_finding(self) -> std::result::Result<Finding, String> {
        let rule = RuleId::parse(&self.rule)
            .ok_or_else(|| format!("unknown rule `{}` (`evalock rules` lists them)", self.rule))?;
        let severity = parse_severity(&self.severity)?;
        // The fingerprint goes into hidden HTML comments on pull requests: only the
        // letters and digits evalock writes there are taken.
        let fingerprint = &self.fingerprint;
        if fingerprint.is_empty()
            || fingerprint.len() > 64
            || !fingerprint.bytes().all(|byte| byte.is_ascii_alphanumeric())
        {
            return Err(format!(
                "fingerprint `{}` is not one evalock writes (letters and digits, at most 64)",
                fingerprint.escape_debug()
            ));
        }
        // A suggestion is posted as a change a reviewer commits: lines that replace one
        // line of the file the finding names, at the line it names (any line, for a
        // finding about the whole file).
        if let Some(suggestion) = &self.suggestion {
            let at_its_line = self
                .location
                .as_ref()
                .is_some_and(|location| location.line.is_none_or(|line| line == suggestion.line));
            if !at_its_line
                || suggestion.line == 0
                || suggestion.text.contains('\r')
                || suggestion.text.len() > MAX_SUGGESTION_BYTES
            {
                return Err(
                    "`suggestion` must replace one line of its finding's file (its own line, when it names one) with at most 60,000 bytes, without carriage returns"
                        .to_owned(),
                );
            }
        }
        Ok(Finding {
            rule,
            severity,
            message: self.message,
            help: self.help,
            location: self.location,
            subject: self.subject,
            fingerprint: self.fingerprint,
            detail: self.detail,
            related: self.related,
            suggestion: self.suggestion,
        })
    }
}

fn parse_severity(text: &str) -> std::result::Result<Severity, String> {
    [
        Severity::Note,
        Severity::Warn,
        Severity::Error,
        Severity::Refuse,
    ]
    .into_iter()
    .find(|severity| severity.as_str() == text)
    .ok_or_else(|| format!("unknown severity `{text}`: expected refuse, error, warn or note"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Report {
        let edited = Finding::new(
            RuleId::CaseEditedInPlace,
            Subject::case("support", "a"),
            "case `a` was edited in place",
        )
        .at(Location::span("evals/support.jsonl", 14, 15).with_column(3))
        .detail("- old\n+ new")
        .discriminator("x");
        let moved = Finding::new(RuleId::Moved, Subject::case("support", "b"), "moved");
        let mut report = Report::new(
            "run",
            "index".into(),
            Some("main (1234567)".into()),
            vec![edited, moved],
        )
        .with_subjects([Subject::case("support", "a"), Subject::case("support", "b")]);
        report.fail_on_diff = true;
        report
    }

    #[test]
    fn parse_reads_back_what_render_wrote() {
        let report = sample();
        let text = render(&report);
        let parsed = parse("saved.json", text.as_bytes()).expect("parses");
        assert_eq!(parsed.findings, report.findings);
        assert_eq!(parsed.subjects, report.subjects);
        assert_eq!(
            (parsed.command.as_str(), parsed.source.as_str()),
            ("run", "index")
        );
        assert_eq!(parsed.base, report.base);
        assert!(parsed.fail_on_diff);
        assert_eq!(render(&parsed), text);
    }

    #[test]
    fn parse_errors_name_the_file_and_place() {
        let error = parse("saved.json", b"{\n  \"schema\": 3\n}")
            .err()
            .map(|error| error.to_string())
            .unwrap_or_default();
        assert!(error.starts_with("saved.json:2:"), "{error}");
        let other = render(&sample()).replace(FINDINGS_SCHEMA, "other/v9");
        let error = parse("saved.json", other.as_bytes())
            .err()
            .map(|error| error.to_string())
            .unwrap_or_default();
        assert!(error.contains("schema is `other/v9`"), "{error}");
        let bad_rule = render(&sample()).replacen("\"EL102\"", "\"EL999\"", 1);
        let error = parse("saved.json", bad_rule.as_bytes())
            .err()
            .map(|error| error.to_string())
            .unwrap_or_default();
        assert!(
            error.contains("findings[0]: unknown rule `EL999`"),
            "{error}"
        );
    }

    /// A suggestion is posted as a change to commit: a saved report's is read back only
    /// at the finding's own line, without carriage returns.
    #[test]
    fn a_suggestion_is_read_back_only_at_its_finding() {
        let mut report = sample();
        report.findings[0].suggestion = Some(crate::finding::Suggestion {
            line: 14,
            text: "{\"id\": \"a\", \"version\": 2}".into(),
        });
        let saved = render(&report);
        let parsed = parse("saved.json", saved.as_bytes()).expect("parses");
        assert_eq!(parsed.findings, report.findings);
        // Lines that replace the finding's own line, as a restored case's do, read back.
        report.findings[0].suggestion = Some(crate::finding::Suggestion {
            line: 14,
            text: "{\"id\": \"b\", \"retired\": true}\n{\"id\": \"a\"}".into(),
        });
        let parsed = parse("saved.json", render(&report).as_bytes()).expect("parses");
        assert_eq!(parsed.findings, report.findings);
        for (line, text) in [(14, "{}\r\n+evil"), (15, "{}")] {
            let mut crafted = report.clone();
            crafted.findings[0].suggestion = Some(crate::finding::Suggestion {
                line,
                text: text.into(),
            });
            let error = parse("saved.json", render(&crafted).as_bytes())
                .err()
                .map(|error| error.to_string())
                .unwrap_or_default();
            assert!(
                error.contains("findings[0]: `suggestion` must replace one line"),
                "{error}"
            );
        }
    }

    /// A fingerprint is written into a hidden HTML comment on the pull request: one that
    /// could end that comment is refused, one evalock wrote is read.
    #[test]
    fn a_fingerprint_that_is_not_letters_and_digits_is_refused() {
        let saved = render(&sample());
        let fingerprint = &sample().findings[0].fingerprint;
        assert!(parse("saved.json", saved.as_bytes()).is_ok());
        let crafted = saved.replacen(&format!("\"{fingerprint}\""), "\"x --> <img src=x>\"", 1);
        assert_ne!(crafted, saved);
        let error = parse("saved.json", crafted.as_bytes())
            .err()
            .map(|error| error.to_string())
            .unwrap_or_default();
        assert!(
            error
                .contains("findings[0]: fingerprint `x --> <img src=x>` is not one evalock writes"),
            "{error}"
        );
    }
}
