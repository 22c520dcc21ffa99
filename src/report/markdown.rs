//! Markdown for a job summary (`GITHUB_STEP_SUMMARY`) or a pull-request comment: the
//! verdict, counts by severity and by rule, one table per suite, then every finding with
//! `path:line`, most severe first. Output stays under a byte budget (1 MiB for a step
//! summary); what does not fit is counted in a closing notice, never cut mid-line.

pub(crate) mod escape;

use super::text::{cut, plural, subject_group, subject_name, SUITE_ITSELF};
use super::Report;
use crate::finding::{Finding, Verdict};
use crate::rules::{RuleId, Severity};
use escape::{code, fenced, inline, table_cell};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

/// GitHub accepts at most 1 MiB of step summary per step; a little is left for a heading
/// the caller may add.
pub const STEP_SUMMARY_LIMIT: usize = 1024 * 1024 - 4096;

/// Rows per suite table before the rest are counted instead of listed.
const MAX_TABLE_ROWS: usize = 100;
/// Bytes of one finding's detail (a completion diff) shown before it is cut.
const MAX_DETAIL_BYTES: usize = 8 * 1024;
/// Room kept for the truncation notice.
const NOTICE_RESERVE: usize = 512;

/// The job summary, under [`STEP_SUMMARY_LIMIT`].
pub fn render(report: &Report) -> String {
    render_within(report, STEP_SUMMARY_LIMIT)
}

/// The summary in at most `max_bytes` bytes (a PR comment allows 65,536 characters).
pub fn render_within(report: &Report, max_bytes: usize) -> String {
    let mut page = Page::new(max_bytes);
    page.push(&header(report));
    if let Some(table) = strata_table(report) {
        page.push(&table);
    }
    if let Some(trend) = &report.trend {
        page.push(&super::trend::mermaid(trend));
    }
    if report.findings.is_empty() {
        return page.finish();
    }
    page.push(&counts_by_severity(report));
    page.push(&counts_by_rule(report));
    // The tables are an overview and the findings after them the substance: the tables
    // take at most half of the budget and say how many they leave out.
    let tables_end = page.text.len() + max_bytes / 2;
    let tables = suite_tables(report);
    page.push("### By suite\n\n");
    for (index, table) in tables.iter().enumerate() {
        if page.text.len() + table.len() > tables_end {
            page.push(&format!(
                "_… {} not shown._\n\n",
                plural(tables.len() - index, "more table is", "more tables are")
            ));
            break;
        }
        page.push(table);
    }
    page.push("### Findings\n\n");
    for finding in by_severity(&report.findings) {
        if page.truncated || !page.push(&finding_item(finding)) {
            page.omitted_findings += 1;
        }
    }
    page.finish()
}

/// A run's pass rates per stratum as a table (the job summary and the pull-request
/// summary); `None` without strata.
pub fn strata_table(report: &Report) -> Option<String> {
    if report.strata.is_empty() {
        return None;
    }
    let mut table = String::from(
        "| stratum | cases | pass | fail | rate |\n| --- | ---: | ---: | ---: | ---: |\n",
    );
    for (name, rate) in &report.strata {
        let shown = rate
            .rate
            .map_or_else(|| "–".to_owned(), |rate| format!("{:.0} %", rate * 100.0));
        table.push_str(&format!(
            "| {} | {} | {} | {} | {shown} |\n",
            table_cell(name),
            rate.cases,
            rate.pass,
            rate.fail
        ));
    }
    table.push('\n');
    Some(table)
}

/// Text that grows block by block until the budget is spent; later blocks are skipped.
struct Page {
    text: String,
    max_bytes: usize,
    truncated: bool,
    omitted_findings: usize,
}

impl Page {
    fn new(max_bytes: usize) -> Page {
        Page {
            text: String::new(),
            max_bytes,
            truncated: false,
            omitted_findings: 0,
        }
    }

    /// Appends `block` if it fits (leaving room for the notice); false when skipped.
    fn push(&mut self, block: &str) -> bool {
        let room = self.max_bytes.saturating_sub(NOTICE_RESERVE);
        if self.truncated || self.text.len() + block.len() > room {
            self.truncated = true;
            return false;
        }
        self.text.push_str(block);
        true
    }

    fn finish(mut self) -> String {
        if self.truncated {
            let omitted = if self.omitted_findings > 0 {
                format!(
                    "{} not shown",
                    plural(self.omitted_findings, "finding is", "findings are")
                )
            } else {
                "Some sections are not shown".to_owned()
            };
            let notice = format!(
                "\n> [!NOTE]\n> **Truncated:** {omitted}: this summary is kept under {} KiB. The job log and `evalock report --from <report.json> --format human` list every finding.\n",
                self.max_bytes / 1024
            );
            let (kept, _) = cut(&notice, self.max_bytes.saturating_sub(self.text.len()));
            self.text.push_str(kept);
        }
        self.text
    }
}

fn verdict_icon(verdict: Verdict) -> &'static str {
    match verdict {
        Verdict::Pass => "✅",
        Verdict::Warn => "⚠️",
        Verdict::Block => "❌",
    }
}

fn severity_icon(severity: Severity) -> &'static str {
    match severity {
        Severity::Refuse => "⛔",
        Severity::Error => "❌",
        Severity::Warn => "⚠️",
        Severity::Note => "ℹ️",
    }
}

fn header(report: &Report) -> String {
    let verdict = report.verdict();
    let mut text = format!(
        "## {} evalock {}: {}\n\n",
        verdict_icon(verdict),
        inline(&report.command),
        verdict.as_str()
    );
    let _ = write!(text, "**Judged:** {}", inline(&report.source));
    if let Some(base) = &report.base {
        let _ = write!(text, " · **base:** {}", inline(base));
    }
    let _ = write!(
        text,
        " · **exit code:** {} · {}",
        report.exit_code(),
        plural(report.findings.len(), "finding", "findings")
    );
    if !report.subjects.is_empty() {
        let _ = write!(
            text,
            " in {}",
            plural(report.subjects.len(), "subject", "subjects")
        );
    }
    text.push_str("\n\n");
    text
}

fn counts_by_severity(report: &Report) -> String {
    let counts = report.counts();
    let mut text = String::from("| severity | findings |\n| --- | ---: |\n");
    for (severity, count) in [
        (Severity::Refuse, counts.refuse),
        (Severity::Error, counts.error),
        (Severity::Warn, counts.warn),
        (Severity::Note, counts.note),
    ] {
        let _ = writeln!(
            text,
            "| {} {} | {count} |",
            severity_icon(severity),
            severity.as_str()
        );
    }
    text.push('\n');
    text
}

fn counts_by_rule(report: &Report) -> String {
    let mut by_rule: BTreeMap<RuleId, (usize, Severity)> = BTreeMap::new();
    for finding in &report.findings {
        let entry = by_rule.entry(finding.rule).or_insert((0, finding.severity));
        entry.0 += 1;
        entry.1 = entry.1.max(finding.severity);
    }
    let mut text = String::from(
        "### By rule\n\n| rule | name | severity | findings |\n| --- | --- | --- | ---: |\n",
    );
    for (rule, (count, severity)) in by_rule {
        let _ = writeln!(
            text,
            "| {} | {} | {} {} | {count} |",
            rule.id(),
            rule.name(),
            severity_icon(severity),
            severity.as_str()
        );
    }
    text.push('\n');
    text
}

/// One table per suite (and `skills`, `graders`, `project`): each subject with findings,
/// its worst severity and its rules.
fn suite_tables(report: &Report) -> Vec<String> {
    let mut groups: BTreeMap<String, BTreeMap<String, Vec<&Finding>>> = BTreeMap::new();
    for finding in &report.findings {
        let name = subject_name(&finding.subject, Some(finding));
        groups
            .entry(subject_group(&finding.subject))
            .or_default()
            .entry(name)
            .or_default()
            .push(finding);
    }
    let mut judged: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for subject in &report.subjects {
        judged
            .entry(subject_group(subject))
            .or_default()
            .insert(subject_name(subject, None));
    }
    let mut blocks = Vec::new();
    for (group, subjects) in groups {
        let mut text = match judged.get(&group) {
            Some(judged) => judged_heading(&group, subjects.keys(), judged),
            None => format!(
                "#### {}: {} with findings\n\n",
                code(&group),
                plural(subjects.len(), "subject", "subjects")
            ),
        };
        text.push_str("| subject | worst | rules |\n| --- | --- | --- |\n");
        for (name, findings) in subjects.iter().take(MAX_TABLE_ROWS) {
            let worst = findings
                .iter()
                .map(|finding| finding.severity)
                .max()
                .unwrap_or(Severity::Note);
            let mut rules: Vec<String> = findings
                .iter()
                .map(|finding| format!("{} {}", finding.rule.id(), finding.rule.name()))
                .collect();
            rules.dedup();
            let _ = writeln!(
                text,
                "| {} | {} {} | {} |",
                table_cell(&code(name)),
                severity_icon(worst),
                worst.as_str(),
                rules.join(", ")
            );
        }
        if subjects.len() > MAX_TABLE_ROWS {
            let _ = writeln!(text, "| … | | {} more |", subjects.len() - MAX_TABLE_ROWS);
        }
        text.push('\n');
        blocks.push(text);
    }
    blocks
}

/// `support: 2 of 10 with findings`, where both numbers count judged subjects only:
/// subjects with findings that were not judged (a case removed from the judged content,
/// the suite as a whole) are named after the share, never counted in it.
fn judged_heading<'a>(
    group: &str,
    with_findings: impl Iterator<Item = &'a String>,
    judged: &BTreeSet<String>,
) -> String {
    let mut among_judged = 0;
    let mut not_judged = 0;
    let mut the_suite = false;
    for name in with_findings {
        if judged.contains(name) {
            among_judged += 1;
        } else if name == SUITE_ITSELF {
            the_suite = true;
        } else {
            not_judged += 1;
        }
    }
    let mut text = format!(
        "#### {}: {among_judged} of {} with findings",
        code(group),
        judged.len()
    );
    if not_judged > 0 {
        let _ = write!(
            text,
            ", plus {} not judged",
            plural(not_judged, "subject", "subjects")
        );
    }
    if the_suite {
        text.push_str(", plus the suite itself");
    }
    text.push_str("\n\n");
    text
}

/// Findings most severe first, in report order within a severity.
fn by_severity(findings: &[Finding]) -> Vec<&Finding> {
    let mut ordered: Vec<&Finding> = findings.iter().collect();
    ordered.sort_by_key(|finding| std::cmp::Reverse(finding.severity));
    ordered
}

fn finding_item(finding: &Finding) -> String {
    let place = finding
        .location
        .as_ref()
        .map(|location| format!(" {}", code(&location.display())))
        .unwrap_or_default();
    let mut text = format!(
        "- {} **{} {}**{place}: {}\\\n  **Fix:** {}\n",
        severity_icon(finding.severity),
        finding.rule.id(),
        finding.rule.name(),
        inline(&finding.message),
        inline(&finding.help)
    );
    if let Some(detail) = &finding.detail {
        let (shown, was_cut) = cut(detail, MAX_DETAIL_BYTES);
        let mut shown = shown.to_owned();
        if was_cut {
            shown.push_str("\n… (detail truncated)");
        }
        text.push_str("\n  <details><summary>Detail</summary>\n\n");
        for line in fenced(&shown).lines() {
            let _ = writeln!(text, "  {line}");
        }
        text.push_str("\n  </details>\n\n");
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::finding::{Location, Subject};

    fn report_with(count: usize) -> Report {
        let findings = (0..count)
            .map(|index| {
                Finding::new(
                    RuleId::Regressed,
                    Subject::case("support", &format!("case-{index:04}")),
                    format!("case {index} regressed"),
                )
                .at(Location::line(
                    "evals/support.jsonl",
                    u32::try_from(index + 1).unwrap_or(u32::MAX),
                ))
                .detail("-old\n+new\n".repeat(20))
            })
            .collect();
        Report::new("run", "working tree".into(), None, findings)
    }

    #[test]
    fn stays_within_the_budget_and_says_what_it_left_out() {
        let report = report_with(400);
        let text = render_within(&report, 16 * 1024);
        assert!(text.len() <= 16 * 1024, "{}", text.len());
        assert!(text.contains("**Truncated:**"), "{text}");
        let shown = text.matches("- ❌ **EL501 regressed**").count();
        assert!(shown > 0 && shown < 400);
        assert!(
            text.contains(&format!("{} findings are not shown", 400 - shown)),
            "{text}"
        );
        let full = render(&report);
        assert!(full.len() <= STEP_SUMMARY_LIMIT);
        assert!(!full.contains("Truncated"));
    }

    /// Cases deleted since the lock have findings but were not judged: the share counts
    /// judged cases only, and the others are named beside it.
    #[test]
    fn subjects_that_were_not_judged_are_not_counted_among_the_judged() {
        let finding = |subject: Subject| Finding::new(RuleId::CaseUnlocked, subject, "x");
        let findings = vec![
            finding(Subject::case("support", "address-change")),
            finding(Subject::case("support", "cancel-subscription")),
        ];
        let judged = (0..10).map(|index| Subject::case("support", &format!("case-{index}")));
        let report = Report::new("check", "working tree".into(), None, findings.clone())
            .with_subjects(judged.clone());
        let text = render(&report);
        assert!(
            text.contains("#### `support`: 0 of 10 with findings, plus 2 subjects not judged\n"),
            "{text}"
        );
        let mut findings = findings;
        findings.push(finding(Subject::case("support", "case-3")));
        findings.push(finding(Subject::suite("support")));
        let report =
            Report::new("check", "working tree".into(), None, findings).with_subjects(judged);
        let text = render(&report);
        assert!(
            text.contains("#### `support`: 1 of 10 with findings, plus 2 subjects not judged, plus the suite itself\n"),
            "{text}"
        );
    }

    /// 150 suites of 10 findings: the suite tables alone fill a 64 KiB budget, and used
    /// to leave no room for a single finding.
    #[test]
    fn suite_tables_leave_room_for_the_findings() {
        let findings = (0..150)
            .flat_map(|suite| {
                (0..10).map(move |case| {
                    Finding::new(
                        RuleId::Regressed,
                        Subject::case(
                            &format!("suite-{suite:03}"),
                            &format!("suite-{suite:03}-case-{case:02}-refund-no-order"),
                        ),
                        "regressed",
                    )
                    .at(Location::line(
                        format!("evals/suite-{suite:03}.jsonl"),
                        case + 1,
                    ))
                })
            })
            .collect();
        let report = Report::new("run", "working tree".into(), None, findings);
        let text = render_within(&report, 64 * 1024);
        assert!(text.len() <= 64 * 1024, "{}", text.len());
        let tables = text.matches("\n#### `suite-").count();
        assert!(tables > 0 && tables < 150, "{tables}");
        assert!(
            text.contains(&format!("_… {} more tables are not shown._", 150 - tables)),
            "{text}"
        );
        let shown = text.matches("- ❌ **EL501 regressed**").count();
        assert!(shown > 100, "{shown} findings shown");
        assert!(
            text.contains(&format!("{} findings are not shown", 1500 - shown)),
            "{text}"
        );
    }

    #[test]
    fn a_clean_report_is_one_short_paragraph() {
        let report = Report::new(
            "check",
            "index".into(),
            Some("main (1234567)".into()),
            Vec::new(),
        );
        assert_eq!(render(&report), "## ✅ evalock check: PASS\n\n**Judged:** index · **base:** main (1234567) · **exit code:** 0 · 0 findings\n\n");
    }
}
