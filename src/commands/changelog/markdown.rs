//! A changelog as Markdown for release notes: one summary table, then per suite what moved
//! (model, prompt, grader), a table by stratum and the cases by kind of change. Lists are
//! cut after [`LISTED`] ids (the JSON has them all).

use super::{Accepted, Changelog, GraderChange, Moved, Presence, StratumChangelog, SuiteChangelog};
use crate::report::markdown::escape::{code, inline, table_cell};
use crate::run::compare::Verdict;
use std::collections::BTreeMap;
use std::fmt::Write;

/// How many case ids a list shows before `and N more`.
const LISTED: usize = 20;

pub fn render(changelog: &Changelog) -> String {
    let mut out = format!(
        "# Behaviour changelog: {} → {}\n\n",
        inline(&changelog.from),
        inline(&changelog.to)
    );
    if changelog.suites.is_empty() && changelog.graders.is_empty() {
        out.push_str("No suite, case, baseline or grader changed.\n");
        return out;
    }
    if !changelog.suites.is_empty() {
        out.push_str(
            "| suite | added | retired | bumped | accepted | known failures | REGRESS | GAIN | pass rate |\n\
             | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n",
        );
        for suite in &changelog.suites {
            let total = Totals::of(suite.strata.iter());
            let name = match suite.presence {
                Presence::Added => format!("{} (new)", table_cell(&code(&suite.suite))),
                Presence::Removed => format!("{} (removed)", table_cell(&code(&suite.suite))),
                Presence::Kept => table_cell(&code(&suite.suite)),
            };
            let _ = writeln!(
                out,
                "| {name} | {} | {} |",
                total.cells(),
                rate(&suite.pass_rate)
            );
        }
        out.push('\n');
    }
    for suite in &changelog.suites {
        suite_section(&mut out, suite);
    }
    if !changelog.graders.is_empty() {
        out.push_str("## Graders\n\n");
        for grader in &changelog.graders {
            let _ = writeln!(out, "- {}", grader_line(grader));
        }
        out.push('\n');
    }
    out
}

fn suite_section(out: &mut String, suite: &SuiteChangelog) {
    let _ = writeln!(out, "## Suite {}\n", code(&suite.suite));
    let optional = |value: &Option<String>| match value {
        Some(value) => code(value),
        None => "none".to_owned(),
    };
    if let Some(model) = &suite.model {
        let _ = writeln!(
            out,
            "- model: {} → {}",
            optional(&model.from),
            optional(&model.to)
        );
    }
    if let Some(prompt) = &suite.prompt {
        let _ = writeln!(
            out,
            "- prompt: {} → {}",
            optional(&prompt.from),
            optional(&prompt.to)
        );
    }
    if let Some(grader) = &suite.grader {
        let _ = writeln!(
            out,
            "- grader: {} → {}",
            code(&grader.from),
            code(&grader.to)
        );
    }
    if suite.model.is_some() || suite.prompt.is_some() || suite.grader.is_some() {
        out.push('\n');
    }
    if suite.strata.is_empty() {
        return;
    }
    out.push_str(
        "| stratum | added | retired | bumped | accepted | known failures | REGRESS | GAIN | SAME | NEW | GONE |\n\
         | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n",
    );
    for stratum in &suite.strata {
        let count = |verdict| stratum.verdicts.get(&verdict).copied().unwrap_or(0);
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} |",
            stratum_name(stratum, true),
            Totals::of(std::iter::once(stratum)).cells(),
            count(Verdict::Same),
            count(Verdict::New),
            count(Verdict::Gone),
        );
    }
    out.push('\n');
    let lists: [(&str, Items); 7] = [
        (
            "Regressed (passed at the earlier last-good, fail now)",
            |s| ids(&s.regressed),
        ),
        ("Gained", |s| ids(&s.gained)),
        ("Added", |s| ids(&s.added)),
        ("Retired", |s| {
            ids(&s
                .retired
                .iter()
                .chain(&s.removed)
                .cloned()
                .collect::<Vec<_>>())
        }),
        ("Version bumped", |s| {
            s.bumped
                .iter()
                .map(|bump| {
                    (
                        bump.case_id.clone(),
                        format!(" ({} → {})", bump.from, bump.to),
                    )
                })
                .collect()
        }),
        ("Known failures added", |s| {
            s.known_failures_added
                .iter()
                .map(|known| match known.reasons.is_empty() {
                    true => (known.case_id.clone(), String::new()),
                    false => (
                        known.case_id.clone(),
                        format!(" ({})", known.reasons.join("; ")),
                    ),
                })
                .collect()
        }),
        ("Known failures cleared", |s| ids(&s.known_failures_cleared)),
    ];
    for (title, items) in lists {
        let mut lines = Vec::new();
        for stratum in &suite.strata {
            let items = items(stratum);
            if !items.is_empty() {
                lines.push(format!(
                    "{}: {}",
                    stratum_name(stratum, false),
                    listed(&items)
                ));
            }
        }
        if !lines.is_empty() {
            let _ = writeln!(out, "**{title}**\n");
            for line in lines {
                let _ = writeln!(out, "- {line}");
            }
            out.push('\n');
        }
    }
    accepted_section(out, suite);
}

/// Case ids without notes.
fn ids(ids: &[String]) -> Vec<(String, String)> {
    ids.iter().map(|id| (id.clone(), String::new())).collect()
}

/// One kind of change in a stratum: each case id with a note to print after it.
type Items = fn(&StratumChangelog) -> Vec<(String, String)>;

/// Accepted entries grouped by the reason given to `accept`.
fn accepted_section(out: &mut String, suite: &SuiteChangelog) {
    let mut by_reason: BTreeMap<&str, Vec<&Accepted>> = BTreeMap::new();
    for accepted in suite.strata.iter().flat_map(|stratum| &stratum.accepted) {
        by_reason
            .entry(accepted.reason.as_str())
            .or_default()
            .push(accepted);
    }
    if by_reason.is_empty() {
        return;
    }
    out.push_str("**Baselines accepted**\n\n");
    for (reason, entries) in by_reason {
        let first = entries.iter().filter(|entry| entry.first).count();
        let again = entries.len() - first;
        let counts = match (first, again) {
            (0, again) => format!("{again} re-accepted"),
            (first, 0) => format!("{first} first accepted"),
            (first, again) => format!("{again} re-accepted, {first} first accepted"),
        };
        let reason = match reason.trim().is_empty() {
            true => "no reason given".to_owned(),
            false => format!("“{}”", inline(reason)),
        };
        let cases: Vec<String> = entries.iter().map(|entry| entry.case_id.clone()).collect();
        let _ = writeln!(out, "- {reason} ({counts}): {}", listed(&ids(&cases)));
    }
    out.push('\n');
}

fn grader_line(grader: &GraderChange) -> String {
    let mut parts = Vec::new();
    match grader.presence {
        Presence::Added => parts.push("added".to_owned()),
        Presence::Removed => parts.push("removed".to_owned()),
        Presence::Kept => {}
    }
    if let Some(Moved {
        from: Some(from),
        to: Some(to),
    }) = &grader.version
    {
        parts.push(format!("version {} → {}", code(from), code(to)));
    }
    if grader.sources_changed {
        parts.push("sources changed".to_owned());
    }
    if let Some(calibration) = &grader.calibration {
        let describe = |side: &Option<super::Calibration>| match side {
            Some(side) => format!(
                "{} labels, {:.1} % agreement at version {}",
                side.labels,
                100.0 * side.agreement,
                code(&side.version)
            ),
            None => "uncalibrated".to_owned(),
        };
        parts.push(format!(
            "calibration {} → {}",
            describe(&calibration.from),
            describe(&calibration.to)
        ));
    }
    format!("{}: {}", code(&grader.grader), parts.join("; "))
}

fn stratum_name(stratum: &StratumChangelog, cell: bool) -> String {
    match (&stratum.stratum, cell) {
        (Some(name), true) => table_cell(&code(name)),
        (Some(name), false) => code(name),
        (None, _) => "no stratum".to_owned(),
    }
}

/// Up to [`LISTED`] case ids as code spans, each with its note, then how many more.
fn listed(items: &[(String, String)]) -> String {
    let shown: Vec<String> = items
        .iter()
        .take(LISTED)
        .map(|(id, note)| format!("{}{}", code(id), inline(note)))
        .collect();
    match items.len().saturating_sub(LISTED) {
        0 => shown.join(", "),
        more => format!("{} and {more} more", shown.join(", ")),
    }
}

fn rate(rate: &Moved<Option<f64>>) -> String {
    let one = |rate: Option<f64>| rate.map_or("-".to_owned(), |rate| format!("{rate:.1} %"));
    format!("{} → {}", one(rate.from), one(rate.to))
}

/// Counts of one or more strata, as the summary columns.
struct Totals {
    added: usize,
    retired: usize,
    bumped: usize,
    accepted: usize,
    failures_added: usize,
    failures_cleared: usize,
    regressed: usize,
    gained: usize,
}

impl Totals {
    fn of<'a>(strata: impl Iterator<Item = &'a StratumChangelog>) -> Totals {
        let mut totals = Totals {
            added: 0,
            retired: 0,
            bumped: 0,
            accepted: 0,
            failures_added: 0,
            failures_cleared: 0,
            regressed: 0,
            gained: 0,
        };
        for stratum in strata {
            totals.added += stratum.added.len();
            totals.retired += stratum.retired.len() + stratum.removed.len();
            totals.bumped += stratum.bumped.len();
            totals.accepted += stratum.accepted.len();
            totals.failures_added += stratum.known_failures_added.len();
            totals.failures_cleared += stratum.known_failures_cleared.len();
            totals.regressed += stratum.regressed.len();
            totals.gained += stratum.gained.len();
        }
        totals
    }

    fn cells(&self) -> String {
        format!(
            "{} | {} | {} | {} | +{} / −{} | {} | {}",
            self.added,
            self.retired,
            self.bumped,
            self.accepted,
            self.failures_added,
            self.failures_cleared,
            self.regressed,
            self.gained
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_list_is_cut_and_counted() {
        let items: Vec<(String, String)> = (0..25)
            .map(|index| (format!("case-{index}"), String::new()))
            .collect();
        let text = listed(&items);
        assert!(text.starts_with("`case-0`, `case-1`"), "{text}");
        assert!(text.ends_with("`case-19` and 5 more"), "{text}");
        assert_eq!(listed(&items[..2]), "`case-0`, `case-1`");
        let noted = [("a*b".to_owned(), " (1 → 2) *x*".to_owned())];
        assert_eq!(listed(&noted), "`a*b` (1 → 2) \\*x\\*");
    }

    #[test]
    fn untrusted_text_cannot_break_the_table() {
        let stratum = StratumChangelog {
            stratum: Some("a|b".to_owned()),
            ..StratumChangelog::default()
        };
        assert_eq!(stratum_name(&stratum, true), "`a\\|b`");
    }
}
