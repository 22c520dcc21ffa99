//! The sticky summary comment (and the step summary when nothing can be posted):
//! verdict, counts by severity and by rule, one table per suite, and the findings that
//! are not inline comments.

use super::anchor::Anchor;
use super::body::{utf16_len, MAX_BODY_UNITS};
use super::plan::Anchored;
use crate::finding::Verdict;
use crate::report::markdown::escape::{code, inline, inline_cell, table_cell};
use crate::report::Report;
use crate::rules::{RuleId, Severity};
use crate::text::shorten;
use std::collections::BTreeMap;
use std::fmt::Write;

/// What the summary says about this run besides the findings.
pub struct SummaryContext<'a> {
    /// The project root within the repository (`""` at the top).
    pub prefix: &'a str,
    pub head_sha: Option<&'a str>,
    /// Findings that are review comments on the pull request (new or from earlier runs).
    /// No per-run counts: a re-run with nothing new must leave the comment as it is.
    pub commented: usize,
}

/// The hidden marker that finds this project's sticky comment again.
pub fn summary_marker(prefix: &str) -> String {
    format!(
        "<!-- evalock:summary project={} -->",
        if prefix.is_empty() { "." } else { prefix }
    )
}

/// Characters of a name (command, source, base, suite, case id) shown before it is cut.
const MAX_NAME_CHARS: usize = 200;
/// Characters of a listed finding's message or fix shown before it is cut.
const MAX_LINE_CHARS: usize = 500;
/// UTF-16 units of the per-suite table's rows. The whole body must stay under GitHub's
/// [`MAX_BODY_UNITS`]; the findings listed after the table are shown nowhere else on the
/// pull request, so the table gets a third and they get the rest.
const MAX_SUITES_TABLE_UNITS: usize = MAX_BODY_UNITS / 3;

/// Renders the summary. `listed` are the findings the summary must show one by one.
/// Everything that comes from the report (case ids, messages, the judged source) is
/// escaped: the pull request's files write it, and the summary is posted as the bot.
pub fn render(report: &Report, listed: &[&Anchored], context: &SummaryContext<'_>) -> String {
    let mut text = String::new();
    let verdict = report.verdict();
    let icon = match verdict {
        Verdict::Pass => "✅",
        Verdict::Warn => "⚠️",
        Verdict::Block => "❌",
    };
    let _ = writeln!(
        text,
        "{}\n## {icon} evalock: {}\n",
        summary_marker(context.prefix),
        verdict.as_str()
    );
    let mut facts = vec![format!(
        "{} on {}",
        name(&report.command),
        inline(&shorten(&report.source, MAX_NAME_CHARS))
    )];
    if let Some(base) = &report.base {
        facts.push(format!(
            "against {}",
            inline(&shorten(base, MAX_NAME_CHARS))
        ));
    }
    if let Some(sha) = context.head_sha {
        facts.push(format!(
            "head {}",
            code(&sha.chars().take(12).collect::<String>())
        ));
    }
    if !context.prefix.is_empty() {
        facts.push(format!("project {}", name(context.prefix)));
    }
    let _ = writeln!(text, "{}\n", facts.join(" · "));
    if let Some(table) = crate::report::markdown::strata_table(report) {
        text.push_str(&table);
    }
    if let Some(trend) = &report.trend {
        text.push_str(&crate::report::trend::mermaid(trend));
    }
    if report.findings.is_empty() {
        text.push_str("No findings: everything is locked and nothing regressed.\n");
        return text;
    }
    counts_table(&mut text, report);
    rules_table(&mut text, report);
    suites_table(&mut text, report);
    let _ = writeln!(
        text,
        "{} finding{} commented on the changed lines; {} listed below.\n",
        context.commented,
        if context.commented == 1 {
            " is"
        } else {
            "s are"
        },
        listed.len()
    );
    listed_findings(&mut text, listed, context.prefix);
    text
}

fn counts_table(text: &mut String, report: &Report) {
    let counts = report.counts();
    text.push_str("| severity | findings |\n| --- | ---: |\n");
    for (severity, count) in [
        (Severity::Refuse, counts.refuse),
        (Severity::Error, counts.error),
        (Severity::Warn, counts.warn),
        (Severity::Note, counts.note),
    ] {
        if count > 0 {
            let _ = writeln!(text, "| {severity} | {count} |");
        }
    }
    text.push('\n');
}

fn rules_table(text: &mut String, report: &Report) {
    let mut by_rule: BTreeMap<RuleId, usize> = BTreeMap::new();
    for finding in &report.findings {
        *by_rule.entry(finding.rule).or_default() += 1;
    }
    text.push_str("| rule | name | findings |\n| --- | --- | ---: |\n");
    for (rule, count) in by_rule {
        let _ = writeln!(text, "| {} | {} | {count} |", rule.id(), rule.name());
    }
    text.push('\n');
}

/// One row per suite: findings by severity and the cases they name.
fn suites_table(text: &mut String, report: &Report) {
    #[derive(Default)]
    struct Row<'a> {
        counts: [usize; 4],
        /// Each case with the rules it broke, in report order.
        cases: Vec<(&'a str, Vec<&'static str>)>,
    }
    let mut rows: BTreeMap<&str, Row> = BTreeMap::new();
    for finding in &report.findings {
        let Some(suite) = finding.subject.suite.as_deref() else {
            continue;
        };
        let row = rows.entry(suite).or_default();
        row.counts[3 - finding.severity as usize] += 1;
        if let Some(case) = finding.subject.case.as_deref() {
            match row.cases.iter_mut().find(|(name, _)| *name == case) {
                Some((_, rules)) if !rules.contains(&finding.rule.id()) => {
                    rules.push(finding.rule.id())
                }
                Some(_) => {}
                None => row.cases.push((case, vec![finding.rule.id()])),
            }
        }
    }
    if rows.is_empty() {
        return;
    }
    text.push_str("### Per suite\n\n| suite | refuse | error | warn | note | cases |\n| --- | ---: | ---: | ---: | ---: | --- |\n");
    let total = rows.len();
    let mut table_units = 0;
    for (shown, (suite, row)) in rows.into_iter().enumerate() {
        let mut cases = row
            .cases
            .iter()
            .take(10)
            .map(|(case, rules)| format!("{} ({})", table_cell(&name(case)), rules.join(", ")))
            .collect::<Vec<_>>()
            .join(", ");
        if row.cases.len() > 10 {
            let _ = write!(cases, ", … {} more", row.cases.len() - 10);
        }
        let [refuse, error, warn, note] = row.counts;
        let line = format!(
            "| {} | {refuse} | {error} | {warn} | {note} | {cases} |\n",
            inline_cell(&shorten(suite, MAX_NAME_CHARS))
        );
        table_units += utf16_len(&line);
        if table_units > MAX_SUITES_TABLE_UNITS {
            let more = total - shown;
            let _ = writeln!(
                text,
                "| … {more} more suite{} | | | | | run `evalock check` locally, or read the job log |",
                if more == 1 { "" } else { "s" }
            );
            break;
        }
        text.push_str(&line);
    }
    text.push('\n');
}

/// The findings that are not inline comments, until the body would get too long. What
/// comes before them is bounded (names cut, the per-suite table capped, one row per
/// rule), so the budget left for them is never negative.
fn listed_findings(text: &mut String, listed: &[&Anchored], prefix: &str) {
    if listed.is_empty() {
        return;
    }
    let _ = writeln!(text, "### Not shown inline ({})\n", listed.len());
    let budget = MAX_BODY_UNITS - 2_000;
    let mut length = utf16_len(text);
    for (index, item) in listed.iter().enumerate() {
        let finding = &item.finding;
        let place = match (&finding.location, &item.anchor) {
            (Some(location), _) => {
                let path = if prefix.is_empty() {
                    location.display()
                } else {
                    format!("{prefix}/{}", location.display())
                };
                code(&path)
            }
            (None, _) => "(no file)".to_owned(),
        };
        let why = match item.anchor {
            Anchor::Summary => "",
            _ => " _(over the comment limit)_",
        };
        let line = format!(
            "- **{} {}** ({}) {place}{why}: {}\n  fix: {}\n",
            finding.rule.id(),
            finding.rule.name(),
            finding.severity,
            one_line(&finding.message),
            one_line(&finding.help)
        );
        length += utf16_len(&line);
        if length > budget {
            let _ = writeln!(
                text,
                "- … and {} more: run `evalock check` locally, or read the job log",
                listed.len() - index
            );
            return;
        }
        text.push_str(&line);
    }
}

/// Untrusted text for one list item: cut, then escaped (so the cut cannot split an
/// escape or a code span); line breaks become spaces.
fn one_line(text: &str) -> String {
    inline(&shorten(text, MAX_LINE_CHARS))
}

/// A name as a code span, cut when long.
fn name(text: &str) -> String {
    code(&shorten(text, MAX_NAME_CHARS))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::finding::{Finding, Location, Subject};

    /// The strictest way GitHub may count a body: in UTF-16 code units.
    fn units(text: &str) -> usize {
        text.encode_utf16().count()
    }

    fn report(findings: Vec<Finding>) -> Report {
        Report::new(
            "check",
            "working tree".into(),
            Some("main (abc1234)".into()),
            findings,
        )
    }

    /// Every finding of `report`, for the summary only.
    fn all_on_summary(report: &Report) -> Vec<Anchored> {
        Anchored::all(&report.findings, |_| Anchor::Summary)
    }

    /// The summary of `report` with every finding listed, then with none, each checked
    /// to stay under GitHub's limit.
    fn summaries_within_the_limit(report: &Report) -> Vec<String> {
        let anchored = all_on_summary(report);
        [anchored.iter().collect::<Vec<_>>(), Vec::new()]
            .iter()
            .map(|listed| {
                let text = render(report, listed, &context());
                assert!(
                    units(&text) < MAX_BODY_UNITS,
                    "{} UTF-16 units",
                    units(&text)
                );
                text
            })
            .collect()
    }

    fn context() -> SummaryContext<'static> {
        SummaryContext {
            prefix: "",
            head_sha: Some("0123456789abcdef0123456789abcdef01234567"),
            commented: 2,
        }
    }

    #[test]
    fn a_clean_run_says_so() {
        let text = render(&report(Vec::new()), &[], &context());
        assert!(
            text.starts_with("<!-- evalock:summary project=. -->\n## ✅ evalock: PASS"),
            "{text}"
        );
        assert!(text.contains("head `0123456789ab`"));
        assert!(text.contains("No findings"));
    }

    #[test]
    fn counts_rules_suites_and_listed_findings() {
        let findings = vec![
            Finding::new(
                RuleId::Regressed,
                Subject::case("support", "a"),
                "a regressed",
            )
            .at(Location::line("evals/s.jsonl", 2)),
            Finding::new(
                RuleId::CaseEditedInPlace,
                Subject::case("support", "b"),
                "b edited",
            )
            .at(Location::line("evals/s.jsonl", 3)),
            Finding::new(
                RuleId::BaselineMissing,
                Subject::case("escalation", "c"),
                "no baseline",
            ),
        ];
        let report = report(findings);
        let listed = Anchored {
            finding: report.findings[2].clone(),
            anchor: Anchor::Summary,
        };
        let text = render(&report, &[&listed], &context());
        assert!(text.contains("## ❌ evalock: BLOCK"));
        assert!(
            text.contains("| refuse | 1 |\n| error | 1 |\n| warn | 1 |"),
            "{text}"
        );
        assert!(text.contains("| EL501 | regressed | 1 |"));
        assert!(
            text.contains("| support | 1 | 1 | 0 | 0 | `a` (EL501), `b` (EL102) |"),
            "{text}"
        );
        assert!(text.contains("### Not shown inline (1)\n\n- **EL404 baseline-missing** (warn) (no file): no baseline"), "{text}");
        assert!(text.contains("2 findings are commented on the changed lines; 1 listed below."));
    }

    /// Case ids and messages come from the pull request: a line break cannot add a table
    /// row, and nothing outside a code span mentions anyone or renders HTML.
    #[test]
    fn case_ids_and_messages_are_escaped_in_the_summary() {
        let findings = vec![
            Finding::new(
                RuleId::Regressed,
                Subject::case("support", "a\n| injected | row |"),
                "regressed",
            ),
            Finding::new(
                RuleId::BaselineMissing,
                Subject::case("support", "b"),
                "case `` @octocat <img src=x> **bold** ` has no baseline",
            )
            .at(Location::line("evals/a`b.jsonl", 2)),
        ];
        let report = Report::new(
            "check",
            "working tree".into(),
            Some("@octocat <b>".into()),
            findings,
        );
        let listed = Anchored {
            finding: report.findings[1].clone(),
            anchor: Anchor::Summary,
        };
        let text = render(&report, &[&listed], &context());
        assert!(
            text.contains("| support | 0 | 1 | 1 | 0 | `a \\| injected \\| row \\|` (EL501), `b` (EL404) |\n\n"),
            "{text}"
        );
        assert!(!text.contains("\n| injected"), "{text}");
        assert!(text.contains("against @\u{200B}octocat \\<b\\>"), "{text}");
        assert!(
            text.contains("(warn) ``evals/a`b.jsonl:2``: case \\`\\` @\u{200B}octocat \\<img src=x\\> \\*\\*bold\\*\\* \\` has no baseline\n"),
            "{text}"
        );
    }

    /// 150 suites of 10 regressed cases each: the per-suite table alone used to pass
    /// GitHub's limit, which then refused the whole summary.
    #[test]
    fn many_suites_keep_the_whole_body_under_the_comment_limit() {
        let findings: Vec<Finding> = (0..150)
            .flat_map(|suite| {
                (0..10).map(move |case| {
                    Finding::new(
                        RuleId::Regressed,
                        Subject::case(
                            &format!("suite-{suite:03}"),
                            &format!("suite-{suite:03}-case-{case:02}-refund-no-order"),
                        ),
                        format!("case passed at baseline and fails now ({suite}/{case})"),
                    )
                    .at(Location::line(
                        format!("evals/suite-{suite:03}.jsonl"),
                        case + 1,
                    ))
                })
            })
            .collect();
        let report = report(findings);
        let texts = summaries_within_the_limit(&report);
        for (listed, text) in [true, false].into_iter().zip(texts) {
            assert!(
                text.contains(
                    "| suite-000 | 0 | 10 | 0 | 0 | `suite-000-case-00-refund-no-order` (EL501), "
                ),
                "{text}"
            );
            let more = text
                .lines()
                .find(|line| line.starts_with("| … "))
                .expect("the table says how many suites it leaves out");
            let rows = text
                .lines()
                .filter(|line| line.starts_with("| suite-"))
                .count();
            assert_eq!(more, format!("| … {} more suites | | | | | run `evalock check` locally, or read the job log |", 150 - rows));
            if listed {
                assert!(text.contains("more: run `evalock check` locally"), "{text}");
                assert!(text.contains("fails now (0/0)\n"), "{text}");
            }
        }
    }

    #[test]
    fn a_huge_list_stays_under_the_comment_limit() {
        let findings: Vec<Finding> = (0..3000)
            .map(|index| {
                Finding::new(
                    RuleId::CaseUnlocked,
                    Subject::case("s", &format!("case-{index}")),
                    "x".repeat(300),
                )
                .at(Location::line("evals/s.jsonl", index))
            })
            .collect();
        let report = report(findings);
        let anchored = all_on_summary(&report);
        let listed: Vec<&Anchored> = anchored.iter().collect();
        let text = render(
            &report,
            &listed,
            &SummaryContext {
                prefix: "proj",
                ..context()
            },
        );
        assert!(units(&text) < MAX_BODY_UNITS);
        assert!(text.contains("more: run `evalock check` locally"));
        assert!(text.contains("`proj/evals/s.jsonl:1`"));
        assert!(text.starts_with("<!-- evalock:summary project=proj -->"));
    }

    /// Suites, cases and messages full of emoji: the summary stays under the limit
    /// counted in UTF-16 units, where each of them is two.
    #[test]
    fn a_summary_full_of_emoji_stays_under_the_limit_in_utf16_units() {
        let findings: Vec<Finding> = (0..3000)
            .map(|index| {
                Finding::new(
                    RuleId::CaseUnlocked,
                    Subject::case(
                        &format!("{}{}", "\u{1F4E6}".repeat(150), index % 300),
                        &format!("{}{index}", "\u{1F600}".repeat(150)),
                    ),
                    "\u{1F525}".repeat(600),
                )
                .help("\u{1F4A9}".repeat(600))
                .at(Location::line("evals/s.jsonl", index))
            })
            .collect();
        let report = report(findings);
        for text in summaries_within_the_limit(&report) {
            assert!(text.contains(" more suites | "), "{text}");
        }
    }
}
