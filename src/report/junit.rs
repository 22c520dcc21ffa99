//! JUnit XML for test-report viewers: one `<testsuite>` per suite (plus `skills`,
//! `graders`, `project`), one `<testcase>` per judged subject. Refuse and error findings
//! are failures (a completer crash is an `<error>`: the case was never scored); warnings
//! and notes go to the test case's `<system-out>`.

use super::text::{subject_group, subject_name};
use super::Report;
use crate::finding::Finding;
use crate::rules::{RuleId, Severity};
use std::collections::BTreeMap;
use std::fmt::Write as _;

#[derive(Default)]
struct TestCase<'a> {
    findings: Vec<&'a Finding>,
}

impl TestCase<'_> {
    fn has_error(&self) -> bool {
        self.findings.iter().any(|finding| is_error(finding))
    }

    fn has_failure(&self) -> bool {
        self.findings.iter().any(|finding| is_failure(finding))
    }
}

fn is_error(finding: &Finding) -> bool {
    finding.rule == RuleId::CompleterError && finding.severity >= Severity::Error
}

fn is_failure(finding: &Finding) -> bool {
    finding.severity >= Severity::Error && !is_error(finding)
}

type Suites<'a> = BTreeMap<String, BTreeMap<String, TestCase<'a>>>;

fn collect(report: &Report) -> Suites<'_> {
    let mut suites: Suites = BTreeMap::new();
    for subject in &report.subjects {
        suites
            .entry(subject_group(subject))
            .or_default()
            .entry(subject_name(subject, None))
            .or_default();
    }
    for finding in &report.findings {
        let name = subject_name(&finding.subject, Some(finding));
        suites
            .entry(subject_group(&finding.subject))
            .or_default()
            .entry(name)
            .or_default()
            .findings
            .push(finding);
    }
    suites
}

pub fn render(report: &Report) -> String {
    let suites = collect(report);
    let mut body = String::new();
    let (mut tests, mut failures, mut errors) = (0, 0, 0);
    for (suite_name, cases) in &suites {
        let suite_failures = cases
            .values()
            .filter(|case| case.has_failure() && !case.has_error())
            .count();
        let suite_errors = cases.values().filter(|case| case.has_error()).count();
        tests += cases.len();
        failures += suite_failures;
        errors += suite_errors;
        let _ = writeln!(
            body,
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{suite_failures}\" errors=\"{suite_errors}\" skipped=\"0\">",
            attribute(suite_name),
            cases.len()
        );
        for (case_name, case) in cases {
            write_test_case(&mut body, suite_name, case_name, case);
        }
        body.push_str("  </testsuite>\n");
    }
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        xml,
        "<testsuites name=\"{}\" tests=\"{tests}\" failures=\"{failures}\" errors=\"{errors}\" skipped=\"0\">",
        attribute(&format!("evalock {}: {}", report.command, report.verdict().as_str()))
    );
    xml.push_str(&body);
    xml.push_str("</testsuites>\n");
    xml
}

fn write_test_case(out: &mut String, suite_name: &str, case_name: &str, case: &TestCase) {
    let mut opening = format!(
        "    <testcase name=\"{}\" classname=\"{}\"",
        attribute(case_name),
        attribute(&format!("evalock.{suite_name}"))
    );
    if let Some(location) = case
        .findings
        .iter()
        .find_map(|finding| finding.location.as_ref())
    {
        let _ = write!(opening, " file=\"{}\"", attribute(&location.path));
        if let Some(line) = location.line {
            let _ = write!(opening, " line=\"{line}\"");
        }
    }
    if case.findings.is_empty() {
        let _ = writeln!(out, "{opening}/>");
        return;
    }
    let _ = writeln!(out, "{opening}>");
    for finding in case
        .findings
        .iter()
        .filter(|finding| finding.severity >= Severity::Error)
    {
        let element = if is_error(finding) {
            "error"
        } else {
            "failure"
        };
        let _ = writeln!(
            out,
            "      <{element} type=\"{}\" message=\"{}\">{}</{element}>",
            attribute(finding.rule.id()),
            attribute(&format!(
                "{} {}: {}",
                finding.rule.id(),
                finding.rule.name(),
                finding.message
            )),
            text(&describe(finding)),
        );
    }
    let quiet: Vec<_> = case
        .findings
        .iter()
        .filter(|finding| finding.severity < Severity::Error)
        .collect();
    if !quiet.is_empty() {
        let lines: Vec<String> = quiet.iter().map(|finding| describe(finding)).collect();
        let _ = writeln!(
            out,
            "      <system-out>{}</system-out>",
            text(&lines.join("\n"))
        );
    }
    out.push_str("    </testcase>\n");
}

/// The whole finding as plain text: where, what, how to fix it, and any detail.
fn describe(finding: &Finding) -> String {
    let place = finding
        .location
        .as_ref()
        .map(|location| format!("{}: ", location.display()))
        .unwrap_or_default();
    let mut text = format!(
        "{place}{} {} ({}): {}\nfix: {}",
        finding.rule.id(),
        finding.rule.name(),
        finding.severity,
        finding.message,
        finding.help
    );
    if let Some(detail) = &finding.detail {
        let _ = write!(text, "\n\n{detail}");
    }
    text
}

/// Character data: markup escaped, and characters XML 1.0 cannot carry at all (most
/// control characters) replaced by U+FFFD so the document stays well-formed.
pub fn text(value: &str) -> String {
    let mut escaped = String::with_capacity(value.len());
    for character in value.chars() {
        match character {
            '&' => escaped.push_str("&amp;"),
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            '\t' | '\n' => escaped.push(character),
            '\r' => escaped.push_str("&#13;"),
            _ if is_xml_char(character) => escaped.push(character),
            _ => escaped.push('\u{FFFD}'),
        }
    }
    escaped
}

/// An attribute value in double quotes; line breaks and tabs are kept as character
/// references because parsers normalise literal ones to spaces.
pub fn attribute(value: &str) -> String {
    let mut escaped = String::with_capacity(value.len());
    for character in value.chars() {
        match character {
            '"' => escaped.push_str("&quot;"),
            '\'' => escaped.push_str("&apos;"),
            '\n' => escaped.push_str("&#10;"),
            '\t' => escaped.push_str("&#9;"),
            _ => escaped.push_str(&text(&character.to_string())),
        }
    }
    escaped
}

fn is_xml_char(character: char) -> bool {
    matches!(character, '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..='\u{10FFFF}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_keeps_documents_well_formed() {
        assert_eq!(text("a < b && c > d"), "a &lt; b &amp;&amp; c &gt; d");
        assert_eq!(text("bell\u{7}\r\n"), "bell\u{FFFD}&#13;\n");
        assert_eq!(
            attribute("say \"hi\"\n'x'\t<"),
            "say &quot;hi&quot;&#10;&apos;x&apos;&#9;&lt;"
        );
        assert_eq!(text("emoji 🦀 stays"), "emoji 🦀 stays");
    }
}
