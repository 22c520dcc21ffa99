//! The terminal format: `path:line: EL102 case-edited-in-place: …`, then what to do.

use super::text::{location_prefix, severity_tally};
use super::Report;
use crate::finding::{exit_code, Finding, Verdict};
use crate::rules::{RuleId, Severity};
use crate::text::visible_controls;
use std::fmt::Write as _;

const RESET: &str = "\x1b[0m";
const BOLD: &str = "\x1b[1m";
const DIM: &str = "\x1b[2m";

fn severity_colour(severity: Severity) -> &'static str {
    match severity {
        Severity::Refuse => "\x1b[1;31m",
        Severity::Error => "\x1b[31m",
        Severity::Warn => "\x1b[33m",
        Severity::Note => "\x1b[36m",
    }
}

fn painted(colour: bool, style: &str, text: &str) -> String {
    if colour {
        format!("{style}{text}{RESET}")
    } else {
        text.to_owned()
    }
}

/// Renders findings for a terminal, then the verdict line; `colour` adds ANSI styling.
pub fn render(report: &Report, colour: bool) -> String {
    let paint = |style: &str, text: &str| painted(colour, style, text);
    let mut out = render_findings(report, colour);
    let counts = report.counts();
    let verdict = report.verdict();
    let verdict_style = match verdict {
        Verdict::Pass => "\x1b[1;32m",
        Verdict::Warn => "\x1b[1;33m",
        Verdict::Block => "\x1b[1;31m",
    };
    let judged = match &report.base {
        Some(base) => format!("{} vs {}", report.source, base),
        None => report.source.clone(),
    };
    let parts = severity_tally(|severity| counts.of(severity));
    let mut tally = if parts.is_empty() {
        "no findings".to_owned()
    } else {
        parts.join(", ")
    };
    if report.exit_code() == exit_code::MOVED {
        tally.push_str("; moved completions fail the gate with --fail-on-diff");
    }
    if !report.findings.is_empty() {
        out.push('\n');
    }
    let _ = writeln!(
        out,
        "evalock {} ({judged}): {} ({tally})",
        report.command,
        paint(verdict_style, verdict.as_str())
    );
    out
}

/// The findings alone, without a verdict line: for a command that lists what another
/// command (`check`) would say, which is not its own verdict.
pub fn render_findings(report: &Report, colour: bool) -> String {
    let paint = |style: &str, text: &str| painted(colour, style, text);
    let mut out = String::new();
    let repeats = repeated_quiet_rules(&report.findings);
    let mut collapsed = std::collections::BTreeSet::new();
    for finding in &report.findings {
        let key = (finding.rule, finding.severity);
        let more = repeats.get(&key).copied();
        if more.is_some() && !collapsed.insert(key) {
            continue;
        }
        let count = more.map_or(String::new(), |total| {
            format!(
                " (and {} more like it; `--format json` lists each)",
                total - 1
            )
        });
        let _ = writeln!(
            out,
            "{}{} {} ({}): {}{count}",
            paint(BOLD, &location_prefix(finding)),
            paint(severity_colour(finding.severity), finding.rule.id()),
            paint(BOLD, finding.rule.name()),
            paint(severity_colour(finding.severity), finding.severity.as_str()),
            visible_controls(&finding.message)
        );
        // A note is information: one line, unless its fix is a command to run next.
        if finding.severity > Severity::Note
            || finding.detail.is_some()
            || finding.help.contains("`evalock ")
        {
            let _ = writeln!(
                out,
                "  {} {}",
                paint(DIM, "fix:"),
                visible_controls(&finding.help)
            );
        }
        if let Some(detail) = &finding.detail {
            for line in detail.lines() {
                let _ = writeln!(out, "    {}", visible_controls(line));
            }
        }
    }
    out
}

/// Warnings and notes that repeat for many subjects (a baseline missing for every case
/// of a first run) say one thing: each such rule is printed once, with a count. Findings
/// with a detail (a diff) and anything that fails the gate are always printed each.
fn repeated_quiet_rules(
    findings: &[Finding],
) -> std::collections::BTreeMap<(RuleId, Severity), usize> {
    const COLLAPSE_FROM: usize = 4;
    let mut counts = std::collections::BTreeMap::new();
    for finding in findings {
        if finding.severity <= Severity::Warn && finding.detail.is_none() {
            *counts.entry((finding.rule, finding.severity)).or_insert(0) += 1;
        }
    }
    // Notes of one rule are one line from the second on; warnings from the fourth.
    counts.retain(|(_, severity), count| {
        *count >= COLLAPSE_FROM || (*severity == Severity::Note && *count >= 2)
    });
    counts
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::finding::{Location, Subject};

    #[test]
    fn renders_location_rule_and_fix() {
        let finding = Finding::new(
            RuleId::CaseEditedInPlace,
            Subject::case("support", "a"),
            "case `a` was edited in place",
        )
        .at(Location::line("evals/support.jsonl", 14))
        .help("bump `version` to 4 and run `evalock lock`");
        let report = Report::new(
            "check",
            "index".into(),
            Some("main (1234567)".into()),
            vec![finding],
        );
        let text = render(&report, false);
        assert!(text.starts_with("evals/support.jsonl:14: EL102 case-edited-in-place (refuse): case `a` was edited in place\n"), "{text}");
        assert!(
            text.contains("  fix: bump `version` to 4 and run `evalock lock`\n"),
            "{text}"
        );
        assert!(
            text.ends_with("evalock check (index vs main (1234567)): BLOCK (1 refused)\n"),
            "{text}"
        );
        assert!(!text.contains('\x1b'));
        assert!(render(&report, true).contains('\x1b'));
    }

    #[test]
    fn moved_completions_under_fail_on_diff_block_and_say_why() {
        let moved = Finding::new(RuleId::Moved, Subject::case("support", "a"), "moved");
        let mut report = Report::new("run", "working tree".into(), None, vec![moved]);
        assert!(render(&report, false).ends_with("evalock run (working tree): PASS (1 note)\n"));
        report.fail_on_diff = true;
        let text = render(&report, false);
        assert!(
            text.ends_with("evalock run (working tree): BLOCK (1 note; moved completions fail the gate with --fail-on-diff)\n"),
            "{text}"
        );
    }
}
