//! GitHub Actions workflow commands (`::error file=…,line=…::message`): annotations on
//! the run and, for changed files, on the pull request's diff. GitHub shows at most ten
//! errors, ten warnings and ten notices per step, so the most severe findings are
//! annotated and the rest are listed in the log and counted in one closing `::notice`.

use super::text::{finding_headline, plural, severity_tally};
use super::Report;
use crate::digest::sha256_hex;
use crate::finding::Finding;
use crate::rules::Severity;
use std::fmt::Write as _;

/// Annotations GitHub shows per step and level.
pub const MAX_PER_LEVEL: usize = 10;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Level {
    Error,
    Warning,
    Notice,
}

impl Level {
    fn of(severity: Severity) -> Level {
        match severity {
            Severity::Refuse | Severity::Error => Level::Error,
            Severity::Warn => Level::Warning,
            Severity::Note => Level::Notice,
        }
    }

    fn command(self) -> &'static str {
        match self {
            Level::Error => "error",
            Level::Warning => "warning",
            Level::Notice => "notice",
        }
    }
}

pub fn render(report: &Report) -> String {
    let mut ordered: Vec<&Finding> = report.findings.iter().collect();
    ordered.sort_by_key(|finding| std::cmp::Reverse(finding.severity));
    let notices = ordered
        .iter()
        .filter(|finding| Level::of(finding.severity) == Level::Notice)
        .count();
    let errors = ordered
        .iter()
        .filter(|finding| Level::of(finding.severity) == Level::Error)
        .count();
    let warnings = ordered.len() - notices - errors;
    let needs_summary =
        errors > MAX_PER_LEVEL || warnings > MAX_PER_LEVEL || notices > MAX_PER_LEVEL;
    // The closing summary is a notice too, so it takes one of the ten notice slots.
    let notice_slots = if needs_summary {
        MAX_PER_LEVEL - 1
    } else {
        MAX_PER_LEVEL
    };
    let mut annotated = String::new();
    let mut omitted: Vec<&Finding> = Vec::new();
    let mut used = [0usize; 3];
    for finding in ordered {
        let level = Level::of(finding.severity);
        let slot = level as usize;
        let limit = if level == Level::Notice {
            notice_slots
        } else {
            MAX_PER_LEVEL
        };
        if used[slot] < limit {
            used[slot] += 1;
            annotated.push_str(&annotation(level, finding));
        } else {
            omitted.push(finding);
        }
    }
    if omitted.is_empty() {
        return annotated;
    }
    annotated.push_str(&log_listing(&omitted));
    annotated.push_str(&summary_notice(report, &omitted));
    annotated
}

fn annotation(level: Level, finding: &Finding) -> String {
    let mut properties = Vec::new();
    if let Some(location) = &finding.location {
        properties.push(format!("file={}", escape_property(&location.path)));
        if let Some(line) = location.line {
            properties.push(format!("line={line}"));
            if let Some(end_line) = location.end_line.filter(|end_line| *end_line > line) {
                properties.push(format!("endLine={end_line}"));
            }
            if let Some(column) = location.column {
                properties.push(format!("col={column}"));
            }
        }
    }
    properties.push(format!(
        "title={}",
        escape_property(&format!("{} {}", finding.rule.id(), finding.rule.name()))
    ));
    let message = format!("{}\nFix: {}", finding.message, finding.help);
    format!(
        "::{} {}::{}\n",
        level.command(),
        properties.join(","),
        escape_data(&message)
    )
}

/// The findings without an annotation, as plain log lines. Workflow commands are switched
/// off around them (with a token derived from the text, so the text cannot contain it),
/// so a message that starts with `::` cannot act as a command.
fn log_listing(findings: &[&Finding]) -> String {
    let mut lines = String::new();
    for finding in findings {
        let message = finding.message.replace(['\r', '\n'], " ");
        let _ = writeln!(lines, "{}", finding_headline(finding, &message));
    }
    let token = format!("evalock-{}", &sha256_hex(lines.as_bytes())[..32]);
    format!("::stop-commands::{token}\n{lines}::{token}::\n")
}

fn summary_notice(report: &Report, omitted: &[&Finding]) -> String {
    let count = |severity: Severity| {
        omitted
            .iter()
            .filter(|finding| finding.severity == severity)
            .count()
    };
    let parts = severity_tally(count);
    let title = format!(
        "evalock {}: {} more not annotated",
        report.command,
        plural(omitted.len(), "finding", "findings")
    );
    let message = format!(
        "GitHub shows {MAX_PER_LEVEL} annotations per level and step; {} more ({}) are listed in this step's log and in the job summary. Verdict: {}.",
        plural(omitted.len(), "finding", "findings"),
        parts.join(", "),
        report.verdict().as_str()
    );
    format!(
        "::notice title={}::{}\n",
        escape_property(&title),
        escape_data(&message)
    )
}

/// A command's message: `%`, CR and LF are percent-encoded (as `@actions/core` does).
pub fn escape_data(text: &str) -> String {
    text.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// A command's property value: like [`escape_data`], plus `:` and `,`, which end a property.
pub fn escape_property(text: &str) -> String {
    escape_data(text).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::finding::{Location, Subject};
    use crate::rules::RuleId;

    #[test]
    fn escaping_follows_the_toolkit() {
        assert_eq!(
            escape_data("50% done\r\nnext: a,b"),
            "50%25 done%0D%0Anext: a,b"
        );
        assert_eq!(escape_property("dir:a,b%\n"), "dir%3Aa%2Cb%25%0A");
    }

    #[test]
    fn one_annotation_carries_file_lines_title_and_fix() {
        let finding = Finding::new(
            RuleId::CaseEditedInPlace,
            Subject::case("support", "a"),
            "case `a` changed: 100%",
        )
        .at(Location::span("evals/a,b.jsonl", 14, 16).with_column(2))
        .help("bump `version`");
        let report = Report::new("check", "index".into(), None, vec![finding]);
        assert_eq!(
            render(&report),
            "::error file=evals/a%2Cb.jsonl,line=14,endLine=16,col=2,title=EL102 case-edited-in-place::case `a` changed: 100%25%0AFix: bump `version`\n"
        );
    }
}
