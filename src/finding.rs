//! Findings: what every check returns and every reporter renders.

use crate::digest::sha256_hex;
use crate::rules::{RuleId, Severity};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// Where a finding points: a repository-relative path and a 1-based line span.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Location {
    pub path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_line: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub column: Option<u32>,
}

impl Location {
    pub fn file(path: impl Into<String>) -> Self {
        Location {
            path: path.into(),
            line: None,
            end_line: None,
            column: None,
        }
    }

    pub fn line(path: impl Into<String>, line: u32) -> Self {
        Location {
            path: path.into(),
            line: Some(line),
            end_line: Some(line),
            column: None,
        }
    }

    pub fn span(path: impl Into<String>, start: u32, end: u32) -> Self {
        Location {
            path: path.into(),
            line: Some(start),
            end_line: Some(end.max(start)),
            column: None,
        }
    }

    pub fn with_column(mut self, column: u32) -> Self {
        self.column = Some(column);
        self
    }

    /// `path:line:col`, `path:line` or `path`, as terminals and editors expect.
    pub fn display(&self) -> String {
        match (self.line, self.column) {
            (Some(line), Some(column)) => format!("{}:{line}:{column}", self.path),
            (Some(line), None) => format!("{}:{line}", self.path),
            _ => self.path.clone(),
        }
    }
}

/// Another place a finding is about, besides its [`Location`]: where a review places it
/// when its own lines did not change.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Related {
    pub kind: RelatedKind,
    #[serde(flatten)]
    pub location: Location,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RelatedKind {
    /// A prompt file of the case's suite: an edit there explains a moved outcome.
    Prompt,
    /// Where the subject stood at the base revision (a case removed since, EL103): the
    /// old side of the pull request's diff.
    Base,
}

/// What a finding is about, independent of where it is printed.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Subject {
    /// Shared: every case of a suite names it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suite: Option<Arc<str>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub case: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skill: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grader: Option<String>,
    /// A tool server: `<configuration file>#<server name>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
}

impl Subject {
    pub fn case(suite: &str, case: &str) -> Self {
        Subject {
            suite: Some(suite.into()),
            case: Some(case.to_owned()),
            ..Subject::default()
        }
    }

    pub fn suite(suite: &str) -> Self {
        Subject {
            suite: Some(suite.into()),
            ..Subject::default()
        }
    }

    pub fn skill(skill: &str) -> Self {
        Subject {
            skill: Some(skill.to_owned()),
            ..Subject::default()
        }
    }

    pub fn grader(grader: &str) -> Self {
        Subject {
            grader: Some(grader.to_owned()),
            ..Subject::default()
        }
    }

    /// A tool server of a configuration file.
    pub fn server(config: &str, name: &str) -> Self {
        Subject {
            server: Some(format!("{config}#{name}")),
            ..Subject::default()
        }
    }

    fn key(&self) -> String {
        let mut key = [
            self.suite.as_deref(),
            self.case.as_deref(),
            self.skill.as_deref(),
            self.grader.as_deref(),
        ]
        .iter()
        .map(|part| part.unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\u{1f}");
        // Appended only when set, so that the fingerprints of every other subject stay
        // what they were before servers existed.
        if let Some(server) = &self.server {
            key.push('\u{1f}');
            key.push_str(server);
        }
        key
    }
}

/// One thing a check found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    pub rule: RuleId,
    pub severity: Severity,
    pub message: String,
    /// What the person at the terminal should do next.
    pub help: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<Location>,
    pub subject: Subject,
    /// Stable across line moves: rule, subject and a discriminator, never a line number.
    pub fingerprint: String,
    /// Optional long-form detail, such as a completion diff.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// Other places it is about (see [`Related`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub related: Vec<Related>,
    /// The fix that replaces one line, when there is one (see [`Suggestion`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suggestion: Option<Suggestion>,
}

/// A fix that is one line of the judged file, replaced: what a pull-request comment
/// offers as a change the reviewer commits with one click.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Suggestion {
    /// The line of the finding's file it replaces (1-based): the finding's own line, or
    /// for a finding about a whole file (a removed case) the line the fix goes beside.
    pub line: u32,
    /// What replaces the line, without a final line break: the line fixed, or the line
    /// with lines put before or after it (`\n` between them).
    pub text: String,
}

impl Finding {
    /// A finding with the rule's default severity and help.
    pub fn new(rule: RuleId, subject: Subject, message: impl Into<String>) -> Self {
        let row = rule.rule();
        let mut finding = Finding {
            rule,
            severity: row.severity,
            message: message.into(),
            help: row.help.to_owned(),
            location: None,
            subject,
            fingerprint: String::new(),
            detail: None,
            related: Vec::new(),
            suggestion: None,
        };
        finding.fingerprint = finding.compute_fingerprint("");
        finding
    }

    pub fn at(mut self, location: Location) -> Self {
        self.location = Some(location);
        self
    }

    pub fn help(mut self, help: impl Into<String>) -> Self {
        self.help = help.into();
        self
    }

    pub fn severity(mut self, severity: Severity) -> Self {
        self.severity = severity;
        self
    }

    pub fn related(mut self, kind: RelatedKind, location: Location) -> Self {
        self.related.push(Related { kind, location });
        self
    }

    pub fn detail(mut self, detail: impl Into<String>) -> Self {
        self.detail = Some(detail.into());
        self
    }

    /// Distinguishes several findings of one rule on one subject (a file name, a pattern).
    pub fn discriminator(mut self, discriminator: &str) -> Self {
        self.fingerprint = self.compute_fingerprint(discriminator);
        self
    }

    fn compute_fingerprint(&self, discriminator: &str) -> String {
        let material = format!(
            "{}\u{1e}{}\u{1e}{}",
            self.rule.id(),
            self.subject.key(),
            discriminator
        );
        sha256_hex(material.as_bytes())[..16].to_owned()
    }
}

/// Sorts findings into the one order every reporter uses: by path, line, rule, subject.
pub fn sort_findings(findings: &mut [Finding]) {
    findings.sort_by(|left, right| {
        let left_key = (
            left.location.as_ref().map(|l| (&l.path, l.line)),
            left.rule,
            &left.subject,
            &left.message,
        );
        let right_key = (
            right.location.as_ref().map(|l| (&l.path, l.line)),
            right.rule,
            &right.subject,
            &right.message,
        );
        left_key.cmp(&right_key)
    });
}

/// PASS / WARN / BLOCK, as release managers read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Verdict {
    Pass,
    Warn,
    Block,
}

impl Verdict {
    /// The verdict of findings by severity alone: what a gate without `--fail-on-diff` says.
    pub fn of(findings: &[Finding]) -> Verdict {
        match findings.iter().map(|finding| finding.severity).max() {
            Some(Severity::Refuse | Severity::Error) => Verdict::Block,
            Some(Severity::Warn) => Verdict::Warn,
            _ => Verdict::Pass,
        }
    }

    /// The verdict of the gate: BLOCK whenever the exit code fails it, including moved
    /// completions under `--fail-on-diff` (exit 3), whose findings are only notes.
    pub fn of_gate(findings: &[Finding], fail_on_diff: bool) -> Verdict {
        match exit_code_for(findings, fail_on_diff) {
            exit_code::CLEAN => Verdict::of(findings),
            _ => Verdict::Block,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "PASS",
            Verdict::Warn => "WARN",
            Verdict::Block => "BLOCK",
        }
    }
}

/// The documented exit codes.
pub use crate::error::exit_code;

/// The exit code for a set of findings: refused (2) over failures (1) over moved-only (3).
pub fn exit_code_for(findings: &[Finding], fail_on_diff: bool) -> i32 {
    let worst = findings.iter().map(|finding| finding.severity).max();
    match worst {
        Some(Severity::Refuse) => exit_code::REFUSED,
        Some(Severity::Error) => exit_code::FAILURES,
        _ if fail_on_diff && findings.iter().any(|finding| finding.rule == RuleId::Moved) => {
            exit_code::MOVED
        }
        _ => exit_code::CLEAN,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finding(rule: RuleId) -> Finding {
        Finding::new(rule, Subject::case("support", "a"), "m")
    }

    #[test]
    fn exit_codes_rank_refuse_over_failure_over_moved() {
        assert_eq!(exit_code_for(&[], true), 0);
        assert_eq!(exit_code_for(&[finding(RuleId::Moved)], false), 0);
        assert_eq!(exit_code_for(&[finding(RuleId::Moved)], true), 3);
        assert_eq!(
            exit_code_for(&[finding(RuleId::Moved), finding(RuleId::Regressed)], true),
            1
        );
        assert_eq!(
            exit_code_for(
                &[
                    finding(RuleId::Regressed),
                    finding(RuleId::CaseEditedInPlace),
                    finding(RuleId::Moved)
                ],
                true
            ),
            2
        );
        assert_eq!(exit_code_for(&[finding(RuleId::BaselineMissing)], true), 0);
    }

    #[test]
    fn fingerprint_ignores_location_but_not_subject() {
        let first = finding(RuleId::CaseUnlocked).at(Location::line("a.jsonl", 3));
        let moved = finding(RuleId::CaseUnlocked).at(Location::line("a.jsonl", 9));
        assert_eq!(first.fingerprint, moved.fingerprint);
        let other = Finding::new(RuleId::CaseUnlocked, Subject::case("support", "b"), "m");
        assert_ne!(first.fingerprint, other.fingerprint);
        assert_ne!(
            first.fingerprint,
            first.clone().discriminator("x").fingerprint
        );
    }

    /// Kills the mutant that replaces `sort_findings` with a no-op: every reporter relies
    /// on one order (file, line, rule, subject), so output is stable across runs.
    #[test]
    fn findings_sort_by_file_then_line_then_rule() {
        let mut findings = vec![
            finding(RuleId::CaseUnlocked).at(Location::line("b.jsonl", 1)),
            finding(RuleId::CaseRemoved).at(Location::line("a.jsonl", 9)),
            finding(RuleId::CaseUnlocked).at(Location::line("a.jsonl", 9)),
            finding(RuleId::CaseUnlocked).at(Location::line("a.jsonl", 2)),
            finding(RuleId::Moved),
        ];
        sort_findings(&mut findings);
        let order: Vec<(Option<String>, RuleId)> = findings
            .iter()
            .map(|finding| {
                (
                    finding.location.as_ref().map(Location::display),
                    finding.rule,
                )
            })
            .collect();
        assert_eq!(
            order,
            vec![
                (None, RuleId::Moved),
                (Some("a.jsonl:2".into()), RuleId::CaseUnlocked),
                (Some("a.jsonl:9".into()), RuleId::CaseUnlocked),
                (Some("a.jsonl:9".into()), RuleId::CaseRemoved),
                (Some("b.jsonl:1".into()), RuleId::CaseUnlocked),
            ]
        );
    }

    #[test]
    fn verdict_follows_the_worst_severity() {
        assert_eq!(Verdict::of(&[]), Verdict::Pass);
        assert_eq!(Verdict::of(&[finding(RuleId::Moved)]), Verdict::Pass);
        assert_eq!(
            Verdict::of(&[finding(RuleId::BaselineMissing)]),
            Verdict::Warn
        );
        assert_eq!(Verdict::of(&[finding(RuleId::Failing)]), Verdict::Block);
    }

    /// Exit 3 fails the gate, so its verdict cannot read PASS (or WARN).
    #[test]
    fn a_gate_failed_by_moved_completions_blocks() {
        let moved = [finding(RuleId::Moved), finding(RuleId::BaselineMissing)];
        assert_eq!(exit_code_for(&moved, true), exit_code::MOVED);
        assert_eq!(Verdict::of_gate(&moved, true), Verdict::Block);
        assert_eq!(Verdict::of_gate(&moved, false), Verdict::Warn);
        assert_eq!(
            Verdict::of_gate(&[finding(RuleId::Moved)], false),
            Verdict::Pass
        );
        assert_eq!(Verdict::of_gate(&[], true), Verdict::Pass);
        assert_eq!(
            Verdict::of_gate(&[finding(RuleId::BaselineMissing)], true),
            Verdict::Warn
        );
        assert_eq!(
            Verdict::of_gate(&[finding(RuleId::Failing)], false),
            Verdict::Block
        );
    }
}
