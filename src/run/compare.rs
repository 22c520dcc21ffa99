//! `evalock compare OLD NEW`: what a change did to behaviour, case by case and behaviour
//! by behaviour, between two runs (results files). Verdicts are compared even when the
//! two sides ran against another model, prompt or grader: that is the point of a swap,
//! and the comparison names what differs. Size and latency are compared too, with slack.

use crate::run::results::{CaseResult, Results, Status};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// A case's or a behaviour's verdict between the two runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Verdict {
    Regress,
    Error,
    Gone,
    Gain,
    New,
    Same,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Regress => "REGRESS",
            Verdict::Error => "ERROR",
            Verdict::Gone => "GONE",
            Verdict::Gain => "GAIN",
            Verdict::New => "NEW",
            Verdict::Same => "SAME",
        }
    }
}

pub use super::envelope::{Breach, Slack};

/// One behaviour of one case: whether it held in each run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Behaviour {
    /// `passes` (the case as a whole), or the reason code of an assertion that failed on
    /// either side (`forbidden_tool:create_refund`).
    pub behaviour: String,
    pub old: Option<bool>,
    pub new: Option<bool>,
    pub verdict: Verdict,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CaseComparison {
    pub suite: String,
    pub case_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stratum: Option<String>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub critical: bool,
    /// Where the case is in the new run (else the old one).
    pub file: String,
    pub line: u32,
    pub old: Option<Status>,
    pub new: Option<Status>,
    pub verdict: Verdict,
    pub behaviours: Vec<Behaviour>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub breaches: Vec<Breach>,
}

/// Counts of verdicts.
pub type Tally = BTreeMap<Verdict, usize>;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    pub schema: &'static str,
    pub old: String,
    pub new: String,
    /// What differs between the runs' contexts: `model acme-1 -> acme-2`.
    pub contexts_differ: Vec<String>,
    /// Critical cases first, then by suite and id.
    pub cases: Vec<CaseComparison>,
    pub per_suite: BTreeMap<String, Tally>,
    pub per_stratum: BTreeMap<String, Tally>,
    /// Per channel (`correctness`, `size`, `time`): cases stable, cases compared.
    pub stable: BTreeMap<&'static str, (usize, usize)>,
    pub slack: Slack,
    /// Each suite's pass rate on both sides, and whether the change is within its noise
    /// floor.
    pub rates: BTreeMap<String, SuiteRate>,
}

/// A suite's pass rate in each run, in percent, and its change against the noise floor
/// (`run --repeat`, from either results file or the baselines).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SuiteRate {
    pub old: Option<f64>,
    pub new: Option<f64>,
    /// New minus old, in percentage points.
    pub change: Option<f64>,
    /// The minimum detectable effect, in points.
    pub noise_floor: Option<f64>,
    /// A change smaller than the noise floor: not a measured difference.
    pub within_noise: bool,
}

impl SuiteRate {
    /// `pass rate 90.0 % -> 85.0 % (-5.0 points, within noise: floor 6.0 points)`.
    pub fn describe(&self) -> String {
        let rate = |rate: Option<f64>| rate.map_or("-".to_owned(), |rate| format!("{rate:.1} %"));
        let mut text = format!("pass rate {} -> {}", rate(self.old), rate(self.new));
        if let Some(change) = self.change {
            let judged = match (self.noise_floor, self.within_noise) {
                (Some(floor), true) => format!(", within noise: floor {floor:.1} points"),
                (Some(floor), false) => format!(", beyond the noise floor of {floor:.1} points"),
                (None, _) => ", no noise floor measured".to_owned(),
            };
            text.push_str(&format!(" ({change:+.1} points{judged})"));
        }
        text
    }
}

/// Each suite's pass rate in `old` and `new`, judged against the first noise floor found
/// in `new`, then `old`.
fn suite_rates(old: &Results, new: &Results) -> BTreeMap<String, SuiteRate> {
    let rate = |results: &Results, suite: &str| {
        let cases: Vec<&CaseResult> = results
            .cases
            .iter()
            .filter(|case| case.suite == suite)
            .collect();
        (!cases.is_empty()).then(|| {
            let passed = cases.iter().filter(|case| passing(case.status)).count();
            100.0 * passed as f64 / cases.len() as f64
        })
    };
    let suites: BTreeSet<&str> = old
        .cases
        .iter()
        .chain(&new.cases)
        .map(|case| case.suite.as_str())
        .collect();
    suites
        .into_iter()
        .map(|suite| {
            let (before, after) = (rate(old, suite), rate(new, suite));
            let change = before.zip(after).map(|(before, after)| after - before);
            let noise_floor = new
                .noise
                .get(suite)
                .or_else(|| old.noise.get(suite))
                .map(|noise| noise.mde);
            let within_noise = match (change, noise_floor) {
                (Some(change), Some(floor)) => change.abs() < floor,
                _ => false,
            };
            (
                suite.to_owned(),
                SuiteRate {
                    old: before,
                    new: after,
                    change,
                    noise_floor,
                    within_noise,
                },
            )
        })
        .collect()
}

fn passing(status: Status) -> bool {
    status.is_passing()
}

/// Compares two runs.
pub fn compare(
    old: &Results,
    new: &Results,
    old_label: &str,
    new_label: &str,
    slack: Slack,
) -> Comparison {
    let key = |case: &CaseResult| (case.suite.clone(), case.case_id.clone());
    let olds: BTreeMap<_, &CaseResult> = old.cases.iter().map(|case| (key(case), case)).collect();
    let news: BTreeMap<_, &CaseResult> = new.cases.iter().map(|case| (key(case), case)).collect();
    let keys: BTreeSet<_> = olds.keys().chain(news.keys()).cloned().collect();
    let mut cases = Vec::new();
    let mut contexts = BTreeSet::new();
    let mut stable: BTreeMap<&'static str, (usize, usize)> = BTreeMap::new();
    for key in keys {
        let (before, after) = (olds.get(&key).copied(), news.get(&key).copied());
        if let (Some(before), Some(after)) = (before, after) {
            contexts.extend(context_changes(before, after));
        }
        let comparison = compare_case(before, after, slack);
        if let (Some(was), Some(is)) = (before, after) {
            let correct = comparison.verdict == Verdict::Same;
            let entry = stable.entry("correctness").or_default();
            entry.0 += usize::from(correct);
            entry.1 += 1;
            let tokens_reported = was.usage.is_some() && is.usage.is_some();
            for channel in ["size", "time", "tokens"] {
                if channel == "tokens" && !tokens_reported {
                    continue;
                }
                let entry = stable.entry(channel).or_default();
                entry.0 += usize::from(
                    !comparison
                        .breaches
                        .iter()
                        .any(|breach| breach.channel == channel),
                );
                entry.1 += 1;
            }
        }
        cases.push(comparison);
    }
    cases.sort_by(|a, b| {
        (!a.critical, &a.suite, &a.case_id).cmp(&(!b.critical, &b.suite, &b.case_id))
    });
    let mut per_suite: BTreeMap<String, Tally> = BTreeMap::new();
    let mut per_stratum: BTreeMap<String, Tally> = BTreeMap::new();
    for case in &cases {
        *per_suite
            .entry(case.suite.clone())
            .or_default()
            .entry(case.verdict)
            .or_default() += 1;
        if let Some(stratum) = &case.stratum {
            *per_stratum
                .entry(stratum.clone())
                .or_default()
                .entry(case.verdict)
                .or_default() += 1;
        }
    }
    Comparison {
        schema: "evalock.compare/v1",
        old: old_label.to_owned(),
        new: new_label.to_owned(),
        contexts_differ: contexts.into_iter().collect(),
        cases,
        per_suite,
        per_stratum,
        stable,
        slack,
        rates: suite_rates(old, new),
    }
}

fn context_changes(before: &CaseResult, after: &CaseResult) -> Vec<String> {
    let (a, b) = (&before.context, &after.context);
    let mut changes = Vec::new();
    if a.model != b.model {
        changes.push(format!(
            "suite {}: model {} -> {}",
            after.suite,
            a.model.as_deref().unwrap_or("(none)"),
            b.model.as_deref().unwrap_or("(none)")
        ));
    }
    if a.prompt != b.prompt {
        let short = |digest: &Option<crate::digest::Digest>| {
            digest.map_or("(none)".to_owned(), |d| d.short())
        };
        changes.push(format!(
            "suite {}: prompt {} -> {}",
            after.suite,
            short(&a.prompt),
            short(&b.prompt)
        ));
    }
    if a.grader != b.grader {
        changes.push(format!(
            "suite {}: grader {} -> {}",
            after.suite, a.grader, b.grader
        ));
    }
    if a.normalizer != b.normalizer {
        changes.push(format!(
            "suite {}: normalizer {} -> {}",
            after.suite, a.normalizer, b.normalizer
        ));
    }
    changes
}

/// The outcome of assertion `key` on a side that judged the case.
fn assertion<'a>(
    case: Option<&'a CaseResult>,
    key: &str,
) -> Option<&'a crate::graders::AssertionOutcome> {
    case.filter(|case| case.status != Status::Error)?
        .assertions
        .iter()
        .find(|outcome| outcome.key == key)
}

fn compare_case(
    before: Option<&CaseResult>,
    after: Option<&CaseResult>,
    slack: Slack,
) -> CaseComparison {
    let shown = after.or(before).expect("a case on one side at least");
    let verdict = match (before, after) {
        (None, Some(_)) => Verdict::New,
        (Some(_), None) => Verdict::Gone,
        (Some(a), Some(b)) if a.status == Status::Error || b.status == Status::Error => {
            Verdict::Error
        }
        (Some(a), Some(b)) => match (passing(a.status), passing(b.status)) {
            (true, false) => Verdict::Regress,
            (false, true) => Verdict::Gain,
            (true, true) => Verdict::Same,
            (false, false) => {
                let lost: BTreeSet<&String> = b
                    .reasons
                    .iter()
                    .filter(|r| !a.reasons.contains(r))
                    .collect();
                match lost.is_empty() {
                    true if a.reasons.iter().any(|r| !b.reasons.contains(r)) => Verdict::Gain,
                    true => Verdict::Same,
                    false => Verdict::Regress,
                }
            }
        },
        (None, None) => Verdict::Same,
    };
    let mut behaviours = Vec::new();
    let holds = |case: Option<&CaseResult>, reason: &str| {
        case.map(|case| case.status != Status::Error && !case.reasons.iter().any(|r| r == reason))
    };
    behaviours.push(Behaviour {
        behaviour: "passes".to_owned(),
        old: before.map(|case| passing(case.status)),
        new: after.map(|case| passing(case.status)),
        verdict: behaviour_verdict(
            before.map(|case| passing(case.status)),
            after.map(|case| passing(case.status)),
        ),
    });
    let judged = || {
        before
            .into_iter()
            .chain(after)
            .filter(|case| case.status != Status::Error)
    };
    // Assertion by assertion when every judged side recorded them; the reasons no
    // assertion accounts for (samples that disagree) stay rows of their own.
    let by_assertion =
        judged().next().is_some() && judged().all(|case| !case.assertions.is_empty());
    let mut covered: BTreeSet<&String> = BTreeSet::new();
    if by_assertion {
        let mut keys: Vec<&str> = Vec::new();
        for outcome in judged().flat_map(|case| &case.assertions) {
            if !keys.contains(&outcome.key.as_str()) {
                keys.push(&outcome.key);
            }
        }
        for key in keys {
            let (was, is) = (assertion(before, key), assertion(after, key));
            let mut reasons: Vec<&String> = Vec::new();
            for reason in was
                .into_iter()
                .chain(is)
                .flat_map(|outcome| &outcome.reasons)
            {
                if !reasons.contains(&reason) {
                    reasons.push(reason);
                }
                covered.insert(reason);
            }
            let (old, new) = (
                was.map(|outcome| outcome.pass),
                is.map(|outcome| outcome.pass),
            );
            behaviours.push(Behaviour {
                behaviour: match reasons.is_empty() {
                    true => key.to_owned(),
                    false => format!(
                        "{key}: {}",
                        reasons
                            .iter()
                            .map(|reason| reason.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                },
                old,
                new,
                verdict: behaviour_verdict(old, new),
            });
        }
    }
    let reasons: BTreeSet<&String> = judged()
        .flat_map(|case| &case.reasons)
        .filter(|reason| !covered.contains(reason))
        .collect();
    for reason in reasons {
        let (old, new) = (holds(before, reason), holds(after, reason));
        behaviours.push(Behaviour {
            behaviour: reason.clone(),
            old,
            new,
            verdict: behaviour_verdict(old, new),
        });
    }
    let breaches = match (before, after) {
        (Some(a), Some(b)) => super::envelope::breaches(
            super::envelope::Envelope::of(a.completion.as_deref(), Some(a.duration_ms)),
            super::envelope::Envelope::of(b.completion.as_deref(), Some(b.duration_ms)),
            &slack,
        ),
        _ => Vec::new(),
    };
    CaseComparison {
        suite: shown.suite.clone(),
        case_id: shown.case_id.clone(),
        stratum: shown.stratum.clone(),
        // The new run says whether the case is critical now.
        critical: after.map_or(before.is_some_and(|case| case.critical), |case| {
            case.critical
        }),
        file: shown.file.clone(),
        line: shown.line,
        old: before.map(|case| case.status),
        new: after.map(|case| case.status),
        verdict,
        behaviours,
        breaches,
    }
}

fn behaviour_verdict(old: Option<bool>, new: Option<bool>) -> Verdict {
    match (old, new) {
        (Some(true), Some(false)) => Verdict::Regress,
        (Some(false), Some(true)) => Verdict::Gain,
        (None, Some(_)) => Verdict::New,
        (Some(_), None) => Verdict::Gone,
        _ => Verdict::Same,
    }
}

/// What makes `compare` fail.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FailOn {
    pub verdicts: BTreeSet<Verdict>,
    /// Envelope breaches (`envelope` in `--fail-on`).
    pub envelope: bool,
}

impl FailOn {
    /// `regress,error` (the default), also `gone`, `new`, `envelope`.
    pub fn parse(text: &str) -> Result<FailOn, String> {
        let mut fail_on = FailOn::default();
        for word in text
            .split(',')
            .map(str::trim)
            .filter(|word| !word.is_empty())
        {
            match word {
                "regress" => drop(fail_on.verdicts.insert(Verdict::Regress)),
                "error" => drop(fail_on.verdicts.insert(Verdict::Error)),
                "gone" => drop(fail_on.verdicts.insert(Verdict::Gone)),
                "new" => drop(fail_on.verdicts.insert(Verdict::New)),
                "envelope" => fail_on.envelope = true,
                "none" => {}
                other => {
                    return Err(format!(
                        "--fail-on names `{other}`: use regress, error, gone, new, envelope or none, separated by commas"
                    ))
                }
            }
        }
        Ok(fail_on)
    }
}

impl Comparison {
    /// Exit 1 when a case's verdict or an envelope breach is one `fail_on` names; a
    /// critical case's regression always.
    pub fn exit_code(&self, fail_on: &FailOn) -> i32 {
        let fails = self.cases.iter().any(|case| {
            fail_on.verdicts.contains(&case.verdict)
                || (case.critical && case.verdict == Verdict::Regress)
                || (fail_on.envelope && !case.breaches.is_empty())
        });
        i32::from(fails)
    }

    pub fn tally(&self) -> Tally {
        let mut tally = Tally::new();
        for case in &self.cases {
            *tally.entry(case.verdict).or_default() += 1;
        }
        tally
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn case(id: &str, status: Status, reasons: &[&str], completion: &str, ms: u64) -> CaseResult {
        serde_json::from_value(serde_json::json!({
            "suite": "s", "case_id": id, "case_version": 1, "file": "f.jsonl", "line": 1, "end_line": 1,
            "status": status, "reasons": reasons, "digest": null, "completion": completion,
            "baseline": "none", "baseline_digest": null,
            "context": {"case": format!("sha256:{}", "0".repeat(64)), "grader": "builtin@1", "normalizer": "exact"},
            "agreement": 1.0, "duration_ms": ms, "samples": []
        }))
        .unwrap()
    }

    #[test]
    fn verdicts_follow_each_case_and_behaviour() {
        let before = case("a", Status::Pass, &[], "ok", 10);
        let after = case("a", Status::Fail, &["forbidden:refund"], "ok", 10);
        let compared = compare_case(Some(&before), Some(&after), Slack::default());
        assert_eq!(compared.verdict, Verdict::Regress);
        assert_eq!(compared.behaviours[1].behaviour, "forbidden:refund");
        assert_eq!(compared.behaviours[1].verdict, Verdict::Regress);
        assert_eq!(
            compare_case(Some(&after), Some(&before), Slack::default()).verdict,
            Verdict::Gain
        );
        assert_eq!(
            compare_case(Some(&before), Some(&before), Slack::default()).verdict,
            Verdict::Same
        );
        assert_eq!(
            compare_case(None, Some(&before), Slack::default()).verdict,
            Verdict::New
        );
        assert_eq!(
            compare_case(Some(&before), None, Slack::default()).verdict,
            Verdict::Gone
        );
        // Failing on both sides, one behaviour more lost: a regression.
        let worse = case(
            "a",
            Status::Fail,
            &["forbidden:refund", "missing_key:status"],
            "ok",
            10,
        );
        assert_eq!(
            compare_case(Some(&after), Some(&worse), Slack::default()).verdict,
            Verdict::Regress
        );
    }

    #[test]
    fn size_and_time_past_their_slack_are_breaches() {
        let before = case("a", Status::Pass, &[], "0123456789", 1000);
        let grown = case("a", Status::Pass, &[], "0123456789abcdefghijklmnop", 1160);
        let breaches = compare_case(Some(&before), Some(&grown), Slack::default()).breaches;
        let channels: Vec<&str> = breaches.iter().map(|breach| breach.channel).collect();
        assert_eq!(channels, vec!["size", "time"]);
        let within = case("a", Status::Pass, &[], "0123456789a", 1140);
        assert!(compare_case(Some(&before), Some(&within), Slack::default())
            .breaches
            .is_empty());
        let fast = case("a", Status::Pass, &[], "0123456789", 400);
        let slower = case("a", Status::Pass, &[], "0123456789", 900);
        assert!(
            compare_case(Some(&fast), Some(&slower), Slack::default())
                .breaches
                .is_empty(),
            "under the floor"
        );
    }
}
