//! JUnit XML for test-report viewers: one `<testsuite>` per suite (plus `skills`,
//! `graders`, `project`; a suite of one of those names is `suite:<name>`), one
//! `<testcase>` per judged subject. Refuse and error findings are failures (a completer
//! crash is an `<error>`: the case was never scored); warnings and notes go to the test
//! case's `<system-out>`.

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
    // Counted first, so the document is written once, front to back (a report of 200,000
    // cases is a document of a hundred megabytes).
    let counts: Vec<(usize, usize)> = suites
        .values()
        .map(|cases| {
            let errors = cases.values().filter(|case| case.has_error()).count();
            let failures = cases
                .values()
                .filter(|case| case.has_failure() && !case.has_error())
                .count();
            (failures, errors)
        })
        .collect();
    let tests: usize = suites.values().map(BTreeMap::len).sum();
    let failures: usize = counts.iter().map(|(failures, _)| failures).sum();
    let errors: usize = counts.iter().map(|(_, errors)| errors).sum();
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    xml.push_str("<testsuites name=\"");
    push_attribute(
        &mut xml,
        &format!("evalock {}: {}", report.command, report.verdict().as_str()),
    );
    let _ = writeln!(
        xml,
        "\" tests=\"{tests}\" failures=\"{failures}\" errors=\"{errors}\" skipped=\"0\">"
    );
    for ((suite_name, cases), (suite_failures, suite_errors)) in suites.iter().zip(counts) {
        xml.push_str("  <testsuite name=\"");
        push_attribute(&mut xml, suite_name);
        let _ = writeln!(
            xml,
            "\" tests=\"{}\" failures=\"{suite_failures}\" errors=\"{suite_errors}\" skipped=\"0\">",
            cases.len()
        );
        let classname = format!("evalock.{suite_name}");
        for (case_name, case) in cases {
            write_test_case(&mut xml, &classname, case_name, case);
        }
        xml.push_str("  </testsuite>\n");
    }
    xml.push_str("</testsuites>\n");
    xml
}

fn write_test_case(out: &mut String, classname: &str, case_name: &str, case: &TestCase) {
    out.push_str("    <testcase name=\"");
    push_attribute(out, case_name);
    out.push_str("\" classname=\"");
    push_attribute(out, classname);
    out.push('"');
    if let Some(location) = case
        .findings
        .iter()
        .find_map(|finding| finding.location.as_ref())
    {
        out.push_str(" file=\"");
        push_attribute(out, &location.path);
        out.push('"');
        if let Some(line) = location.line {
            let _ = write!(out, " line=\"{line}\"");
        }
    }
    if case.findings.is_empty() {
        out.push_str("/>\n");
        return;
    }
    out.push_str(">\n");
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
        let _ = write!(out, "      <{element} type=\"");
        push_attribute(out, finding.rule.id());
        out.push_str("\" message=\"");
        push_attribute(
            out,
            &format!(
                "{} {}: {}",
                finding.rule.id(),
                finding.rule.name(),
                finding.message
            ),
        );
        out.push_str("\">");
        push_text(out, &describe(finding));
        let _ = writeln!(out, "</{element}>");
    }
    let quiet: Vec<_> = case
        .findings
        .iter()
        .filter(|finding| finding.severity < Severity::Error)
        .collect();
    if !quiet.is_empty() {
        let lines: Vec<String> = quiet.iter().map(|finding| describe(finding)).collect();
        out.push_str("      <system-out>");
        push_text(out, &lines.join("\n"));
        out.push_str("</system-out>\n");
    }
    out.push_str("    </testcase>\n");
}

/// The whole finding as plain text: where, what, how to fix it, and any detail.
fn describe(finding: &Finding) -> String {
    let mut text = format!(
        "{}\nfix: {}",
        super::text::finding_headline(finding, &finding.message),
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
    push_text(&mut escaped, value);
    escaped
}

/// An attribute value in double quotes; line breaks and tabs are kept as character
/// references because parsers normalise literal ones to spaces.
pub fn attribute(value: &str) -> String {
    let mut escaped = String::with_capacity(value.len());
    push_attribute(&mut escaped, value);
    escaped
}

/// [`text`], written at the end of `out`.
fn push_text(out: &mut String, value: &str) {
    for character in value.chars() {
        push_text_char(out, character);
    }
}

fn push_text_char(out: &mut String, character: char) {
    match character {
        '&' => out.push_str("&amp;"),
        '<' => out.push_str("&lt;"),
        '>' => out.push_str("&gt;"),
        '\t' | '\n' => out.push(character),
        '\r' => out.push_str("&#13;"),
        _ if is_xml_char(character) => out.push(character),
        _ => out.push('\u{FFFD}'),
    }
}

/// [`attribute`], written at the end of `out`.
fn push_attribute(out: &mut String, value: &str) {
    for character in value.chars() {
        match character {
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' => out.push_str("&#10;"),
            '\t' => out.push_str("&#9;"),
            _ => push_text_char(out, character),
        }
    }
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
