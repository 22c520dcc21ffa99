//! Reporters: every format renders the same findings. They return text; the binary
//! decides where it goes.

pub mod github;
pub mod human;
pub mod json;
pub mod junit;
pub mod markdown;
pub mod read;
pub mod sarif;
mod text;
pub mod trend;

pub use read::read_report;
pub use text::plural;

/// Text for a Markdown table cell, escaped as the job summary escapes it.
pub fn markdown_escape(text: &str) -> String {
    markdown::escape::inline_cell(text)
}

use crate::finding::{exit_code_for, sort_findings, Finding, Subject, Verdict};
use crate::rules::Severity;
use rayon::prelude::*;
use serde::Serialize;
use std::collections::BTreeSet;

/// What a command found, with enough context for any reporter.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// The command that produced it: `check`, `lock`, `run`.
    pub command: String,
    /// The content judged: `working tree`, `index`, `main (1a2b3c4)`.
    pub source: String,
    /// The base revision compared with, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base: Option<String>,
    pub findings: Vec<Finding>,
    /// Every subject that was judged (each case, skill, grader), with or without findings,
    /// so JUnit and the summary can count what passed. Empty when the command does not
    /// know (reporters then list only subjects with findings).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub subjects: Vec<Subject>,
    /// Whether moved-only findings fail the gate (exit 3).
    #[serde(skip)]
    pub fail_on_diff: bool,
    /// The project's folder within the repository once [`Report::with_path_prefix`] has
    /// prefixed the paths with it (`""` otherwise): a finding about no file is about the
    /// project's `evalock.toml`, which lives there.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub path_prefix: String,
    /// A run's pass rates per stratum (empty for other commands and unbanded suites).
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub strata: std::collections::BTreeMap<String, crate::run::results::StratumRate>,
    /// Pass rates along the first-parent history (`report --trend N`), drawn as charts
    /// in the step summary and the sticky comment.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trend: Option<Box<trend::Trend>>,
}

/// Findings per severity.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    pub refuse: usize,
    pub error: usize,
    pub warn: usize,
    pub note: usize,
}

impl Counts {
    pub fn of(&self, severity: Severity) -> usize {
        match severity {
            Severity::Refuse => self.refuse,
            Severity::Error => self.error,
            Severity::Warn => self.warn,
            Severity::Note => self.note,
        }
    }
}

impl Report {
    /// A run as a report: its findings, every case it judged, and its gate setting.
    pub fn of_run(results: &crate::run::results::Results) -> Report {
        let subjects = results
            .cases
            .iter()
            .map(|case| Subject::case(&case.suite, &case.case_id));
        let mut report = Report::new(
            "run",
            results.source.clone(),
            None,
            results.findings.clone(),
        )
        .with_subjects(subjects);
        report.fail_on_diff = results.fail_on_diff;
        report.strata = results.strata.clone();
        report
    }

    pub fn new(
        command: &str,
        source: String,
        base: Option<String>,
        findings: Vec<Finding>,
    ) -> Report {
        Report {
            command: command.to_owned(),
            source,
            base,
            findings,
            subjects: Vec::new(),
            fail_on_diff: false,
            path_prefix: String::new(),
            strata: std::collections::BTreeMap::new(),
            trend: None,
        }
    }

    /// Records every subject that was judged (kept sorted and unique).
    pub fn with_subjects(mut self, subjects: impl IntoIterator<Item = Subject>) -> Report {
        let mut unique: Vec<Subject> = subjects.into_iter().collect();
        // Usually they come sorted and unique already: one pass over them proves it.
        if !unique.is_sorted_by(|left, right| left < right) {
            unique.par_sort_unstable();
            unique.dedup();
        }
        self.subjects = unique;
        self
    }

    /// PASS / WARN / BLOCK, agreeing with the exit code (exit 3 is BLOCK).
    pub fn verdict(&self) -> Verdict {
        Verdict::of_gate(&self.findings, self.fail_on_diff)
    }

    pub fn exit_code(&self) -> i32 {
        exit_code_for(&self.findings, self.fail_on_diff)
    }

    pub fn counts(&self) -> Counts {
        let mut counts = Counts::default();
        for finding in &self.findings {
            match finding.severity {
                Severity::Refuse => counts.refuse += 1,
                Severity::Error => counts.error += 1,
                Severity::Warn => counts.warn += 1,
                Severity::Note => counts.note += 1,
            }
        }
        counts
    }

    /// One report out of several (`check` and `run` of one pull request): findings that
    /// share a fingerprint and a rule are reported once, the first source and base win,
    /// and moved-only findings fail the gate if any part asked for that.
    pub fn merge(reports: Vec<Report>) -> Option<Report> {
        let mut reports = reports.into_iter();
        let mut merged = reports.next()?;
        let mut commands = vec![merged.command.clone()];
        let mut seen: BTreeSet<(String, crate::rules::RuleId)> = merged
            .findings
            .iter()
            .map(|finding| (finding.fingerprint.clone(), finding.rule))
            .collect();
        let mut subjects: BTreeSet<Subject> = merged.subjects.drain(..).collect();
        for report in reports {
            if !commands.contains(&report.command) {
                commands.push(report.command.clone());
            }
            merged.base = merged.base.or(report.base);
            if merged.path_prefix.is_empty() {
                merged.path_prefix = report.path_prefix;
            }
            merged.fail_on_diff |= report.fail_on_diff;
            // A check's report has no pass rates: the run's merged after it brings them.
            if merged.strata.is_empty() {
                merged.strata = report.strata;
            }
            merged.trend = merged.trend.or(report.trend);
            subjects.extend(report.subjects);
            for finding in report.findings {
                if seen.insert((finding.fingerprint.clone(), finding.rule)) {
                    merged.findings.push(finding);
                }
            }
        }
        merged.command = commands.join(" + ");
        merged.subjects = subjects.into_iter().collect();
        sort_findings(&mut merged.findings);
        Some(merged)
    }

    /// Prefixes every finding's path with `prefix` (`evals-project/`): GitHub resolves
    /// annotation, SARIF and review paths against the repository root, while evalock
    /// reports them relative to the project, which may live in a subdirectory.
    pub fn with_path_prefix(mut self, prefix: &str) -> Report {
        let prefix = prefix.trim_matches('/');
        if prefix.is_empty() || prefix == "." {
            return self;
        }
        for location in self.locations_mut() {
            location.path = format!("{prefix}/{}", location.path);
        }
        self.path_prefix = join_path(prefix, &self.path_prefix);
        self
    }

    /// The report with the prefix [`Report::with_path_prefix`] added taken off again:
    /// every path relative to the project, as its checks wrote them.
    pub fn project_relative(mut self) -> Report {
        let prefix = std::mem::take(&mut self.path_prefix);
        if prefix.is_empty() {
            return self;
        }
        for location in self.locations_mut() {
            let stripped = location
                .path
                .strip_prefix(prefix.as_str())
                .and_then(|rest| rest.strip_prefix('/'));
            if let Some(stripped) = stripped {
                location.path = stripped.to_owned();
            }
        }
        self
    }

    fn locations_mut(&mut self) -> impl Iterator<Item = &mut crate::finding::Location> {
        self.findings.iter_mut().flat_map(|finding| {
            let related = finding
                .related
                .iter_mut()
                .map(|related| &mut related.location);
            finding.location.iter_mut().chain(related)
        })
    }

    /// The project's `evalock.toml`, relative to where the paths are: what a finding about
    /// no file points at where a format needs a file (SARIF).
    pub fn config_path(&self) -> String {
        join_path(&self.path_prefix, "evalock.toml")
    }
}

fn join_path(folder: &str, path: &str) -> String {
    match (folder.is_empty(), path.is_empty()) {
        (true, _) => path.to_owned(),
        (false, true) => folder.to_owned(),
        (false, false) => format!("{folder}/{path}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::finding::Location;
    use crate::rules::RuleId;

    fn finding(rule: RuleId, case: &str) -> Finding {
        Finding::new(
            rule,
            Subject::case("support", case),
            format!("{case} message"),
        )
        .at(Location::line("evals/support.jsonl", 3))
    }

    #[test]
    fn merge_keeps_each_finding_once_and_every_subject() {
        let check = Report::new(
            "check",
            "working tree".into(),
            Some("main (1234567)".into()),
            vec![finding(RuleId::CaseUnlocked, "a")],
        )
        .with_subjects([Subject::case("support", "a"), Subject::case("support", "b")]);
        let mut run = Report::new(
            "run",
            "working tree".into(),
            None,
            vec![
                finding(RuleId::CaseUnlocked, "a"),
                finding(RuleId::Moved, "b"),
            ],
        )
        .with_subjects([Subject::case("support", "b"), Subject::case("support", "c")]);
        run.fail_on_diff = true;
        let merged = Report::merge(vec![check, run]).expect("two reports");
        assert_eq!(merged.command, "check + run");
        assert_eq!(merged.base.as_deref(), Some("main (1234567)"));
        assert_eq!(merged.findings.len(), 2);
        assert_eq!(merged.subjects.len(), 3);
        assert_eq!(merged.exit_code(), 2);
        assert!(merged.fail_on_diff);
        assert!(Report::merge(Vec::new()).is_none());
    }

    #[test]
    fn subjects_are_listed_sorted_and_once_whatever_order_they_come_in() {
        let subjects = |cases: &[&str]| -> Vec<Subject> {
            let report = Report::new("check", "index".into(), None, Vec::new());
            let listed = report.with_subjects(cases.iter().map(|case| Subject::case("s", case)));
            listed.subjects
        };
        let expected = subjects(&["a", "b", "c"]);
        assert_eq!(expected.len(), 3);
        assert!(expected.is_sorted());
        // Sorted and unique, sorted with a repeat, unsorted with a repeat.
        assert_eq!(subjects(&["a", "b", "b", "c"]), expected);
        assert_eq!(subjects(&["c", "a", "b", "a"]), expected);
    }

    #[test]
    fn path_prefix_applies_to_located_findings_only() {
        let unlocated = Finding::new(RuleId::SkillVersion, Subject::skill("s"), "m");
        let report = Report::new(
            "check",
            "index".into(),
            None,
            vec![finding(RuleId::CaseUnlocked, "a"), unlocated],
        );
        let prefixed = report.clone().with_path_prefix("project/");
        assert_eq!(
            prefixed.findings[0]
                .location
                .as_ref()
                .map(|l| l.path.as_str()),
            Some("project/evals/support.jsonl")
        );
        assert!(prefixed.findings[1].location.is_none());
        let unchanged = report.with_path_prefix("");
        assert_eq!(
            unchanged.findings[0]
                .location
                .as_ref()
                .map(|l| l.path.as_str()),
            Some("evals/support.jsonl")
        );
    }
}
