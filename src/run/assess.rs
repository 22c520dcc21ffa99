//! Judging one case from its graded samples and its baseline, as pure logic: the status
//! (PASS, MOVED, FAIL, REGRESSED, IMPROVED, ERROR) and the EL5xx findings that explain it.

use super::diff::completion_diff;
use super::results::{BaselineUse, CaseResult, SampleResult, Status};
use crate::checks::baselines::{context_changes, current_context, entry_is_intact};
use crate::finding::{Finding, Location, Subject};
use crate::grade::{completion_digest, Grade};
use crate::hash::Digest;
use crate::model::{BaselineContext, BaselineEntry, Case, Project, SuiteModel};
use crate::rules::RuleId;
use std::collections::HashMap;
use std::time::Duration;

/// One sample: its grade and normalized completion, or why there is none (EL504).
#[derive(Debug, Clone)]
pub struct SampleOutcome {
    pub sample: u32,
    pub outcome: Result<(Grade, String), String>,
    pub duration: Duration,
}

/// What a case's baseline allows.
#[derive(Debug, Clone, Copy)]
pub enum BaselineRef<'a> {
    NotConfigured,
    Missing,
    Drifted,
    Tampered,
    Usable(&'a BaselineEntry),
}

impl BaselineRef<'_> {
    fn usage(&self) -> BaselineUse {
        match self {
            BaselineRef::NotConfigured => BaselineUse::None,
            BaselineRef::Missing => BaselineUse::Missing,
            BaselineRef::Drifted => BaselineUse::Drifted,
            BaselineRef::Tampered => BaselineUse::Tampered,
            BaselineRef::Usable(_) => BaselineUse::Compared,
        }
    }
}

/// The baseline entry of a case, if it may be compared with (EL401/EL402 otherwise).
pub fn baseline_ref<'p>(project: &'p Project, suite: &SuiteModel, case: &Case) -> BaselineRef<'p> {
    let Some(baseline) = project.baselines.get(&suite.name) else {
        return BaselineRef::NotConfigured;
    };
    if baseline.is_unreadable() {
        return BaselineRef::Tampered;
    }
    match baseline.entry(&case.id) {
        None => BaselineRef::Missing,
        Some(entry) if !entry_is_intact(entry) => BaselineRef::Tampered,
        Some(entry)
            if !context_changes(&entry.context, &current_context(project, suite, case))
                .is_empty() =>
        {
            BaselineRef::Drifted
        }
        Some(entry) => BaselineRef::Usable(entry),
    }
}

/// Everything needed to judge one case.
pub struct CaseRun<'a> {
    pub suite: &'a str,
    pub case: &'a Case,
    pub context: BaselineContext,
    pub samples: Vec<SampleOutcome>,
    pub baseline: BaselineRef<'a>,
    pub agreement_min: f64,
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

/// The case's result and the findings that explain it.
pub fn assess(run: CaseRun<'_>) -> (CaseResult, Vec<Finding>) {
    let case = run.case;
    let location = Location::span(&*case.file, case.line, case.end_line);
    let subject = Subject::case(run.suite, &case.id);
    let at = format!("{}:{}", case.file, case.line);
    let samples: Vec<SampleResult> = run.samples.iter().map(sample_result).collect();
    let duration_ms = samples.iter().map(|sample| sample.duration_ms).sum();
    let mut result = CaseResult {
        suite: run.suite.to_owned(),
        case_id: case.id.clone(),
        case_version: case.version,
        file: case.file.to_string(),
        line: case.line,
        end_line: case.end_line,
        status: Status::Error,
        reasons: Vec::new(),
        digest: None,
        completion: None,
        baseline: run.baseline.usage(),
        baseline_digest: match run.baseline {
            BaselineRef::Usable(entry) => Some(entry.digest),
            _ => None,
        },
        context: run.context,
        agreement: 0.0,
        duration_ms,
        samples,
    };
    let mut findings = Vec::new();

    if let Some((sample, error)) = run.samples.iter().find_map(|sample| {
        sample
            .outcome
            .as_ref()
            .err()
            .map(|error| (sample.sample, error))
    }) {
        result.reasons = vec![format!("error:{error}")];
        let which = if run.samples.len() > 1 {
            format!(" sample {sample}:")
        } else {
            String::new()
        };
        findings.push(
            Finding::new(
                RuleId::CompleterError,
                subject,
                format!("case `{}` ({at}):{which} {error}", case.id),
            )
            .at(location),
        );
        return (result, findings);
    }

    let graded: Vec<(&Grade, &str)> = run
        .samples
        .iter()
        .filter_map(|sample| sample.outcome.as_ref().ok())
        .map(|(grade, text)| (grade, text.as_str()))
        .collect();
    let (modal, agreement) = modal_completion(&graded);
    result.agreement = agreement;
    result.digest = Some(completion_digest(modal));
    result.completion = Some(modal.to_owned());
    let mut reasons: Vec<String> = Vec::new();
    for (grade, _) in &graded {
        for reason in grade.reasons.iter().filter(|_| !grade.pass) {
            if !reasons.contains(reason) {
                reasons.push(reason.clone());
            }
        }
    }
    let samples_pass = graded.iter().all(|(grade, _)| grade.pass);
    let agrees = agreement + 1e-9 >= run.agreement_min;
    if !agrees {
        reasons.push(format!(
            "samples_disagree:{agreement:.2}<{:.2}",
            run.agreement_min
        ));
        let agreeing = graded.iter().filter(|(_, text)| *text == modal).count();
        let outlier = graded
            .iter()
            .map(|(_, text)| *text)
            .find(|text| *text != modal)
            .unwrap_or(modal);
        let mut finding = Finding::new(
            RuleId::SamplesDisagree,
            subject.clone(),
            format!(
                "case `{}` ({at}): {agreeing} of {} samples agree ({agreement:.2} < agreement_min {:.2})",
                case.id,
                graded.len(),
                run.agreement_min
            ),
        )
        .at(location.clone());
        if let Some(diff) =
            completion_diff(modal, outlier, "most common sample", "disagreeing sample")
        {
            finding = finding.detail(diff);
        }
        findings.push(finding);
    }
    result.reasons = reasons.clone();
    let passes = samples_pass && agrees;
    let digest = completion_digest(modal);
    let reason_list = if reasons.is_empty() {
        String::new()
    } else {
        format!(": {}", reasons.join(", "))
    };
    result.status = match (run.baseline, passes) {
        (BaselineRef::Usable(entry), true) if entry.passed && entry.digest == digest => {
            Status::Pass
        }
        (BaselineRef::Usable(entry), true) if entry.passed => {
            let mut finding = Finding::new(
                RuleId::Moved,
                subject.clone(),
                format!(
                    "case `{}` ({at}) still passes, but its completion moved ({} -> {})",
                    case.id,
                    entry.digest.short(),
                    digest.short()
                ),
            )
            .at(location.clone());
            if let Some(diff) = diff_against(entry, modal, &digest) {
                finding = finding.detail(diff);
            }
            findings.push(finding);
            Status::Moved
        }
        (BaselineRef::Usable(_), true) => {
            findings.push(
                Finding::new(
                    RuleId::Improved,
                    subject.clone(),
                    format!(
                        "case `{}` ({at}) failed at baseline and passes now",
                        case.id
                    ),
                )
                .at(location.clone()),
            );
            Status::Improved
        }
        // Only a sample that fails its assertions is a regression; samples that all pass
        // but disagree are FAIL with EL505 alone, whatever the baseline says.
        (BaselineRef::Usable(entry), false) if entry.passed && !samples_pass => {
            let mut finding = Finding::new(
                RuleId::Regressed,
                subject.clone(),
                format!(
                    "case `{}` ({at}) passed at baseline and fails now{reason_list}",
                    case.id
                ),
            )
            .at(location.clone());
            if let Some(diff) = diff_against(entry, modal, &digest) {
                finding = finding.detail(diff);
            }
            findings.push(finding);
            Status::Regressed
        }
        (_, true) => Status::Pass,
        (_, false) => {
            if !samples_pass {
                findings.push(
                    Finding::new(
                        RuleId::Failing,
                        subject,
                        format!("case `{}` ({at}) fails{reason_list}", case.id),
                    )
                    .at(location),
                );
            }
            Status::Fail
        }
    };
    (result, findings)
}

fn diff_against(entry: &BaselineEntry, current: &str, digest: &Digest) -> Option<String> {
    completion_diff(
        &entry.completion,
        current,
        &format!("baseline ({})", entry.digest.short()),
        &format!("current ({})", digest.short()),
    )
}

/// The most common normalized completion (the first one on ties) and the share of
/// samples equal to it.
fn modal_completion<'t>(graded: &[(&Grade, &'t str)]) -> (&'t str, f64) {
    // Counted in one pass (a case may ask for up to 1,000 samples).
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for (_, text) in graded {
        *counts.entry(text).or_default() += 1;
    }
    let mut best: (&str, usize) = ("", 0);
    for (_, text) in graded {
        let count = counts[text];
        if count > best.1 {
            best = (text, count);
        }
    }
    let agreement = if graded.is_empty() {
        0.0
    } else {
        best.1 as f64 / graded.len() as f64
    };
    (best.0, agreement)
}

fn sample_result(sample: &SampleOutcome) -> SampleResult {
    let duration_ms = millis(sample.duration);
    match &sample.outcome {
        Ok((grade, normalized)) => SampleResult {
            sample: sample.sample,
            status: if grade.pass {
                Status::Pass
            } else {
                Status::Fail
            },
            digest: Some(completion_digest(normalized)),
            score: grade.score,
            reasons: grade.reasons.clone(),
            error: None,
            duration_ms,
        },
        Err(error) => SampleResult {
            sample: sample.sample,
            status: Status::Error,
            digest: None,
            score: None,
            reasons: Vec::new(),
            error: Some(error.clone()),
            duration_ms,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::bytes_digest;
    use crate::model::parse_case_file;

    fn case() -> Case {
        parse_case_file(
            "evals/a.jsonl",
            b"{\"id\": \"a\", \"expect\": {\"must_include\": [\"ok\"]}}\n",
        )
        .cases
        .remove(0)
    }

    fn context() -> BaselineContext {
        BaselineContext {
            case: bytes_digest(b"case"),
            prompt: None,
            grader: "builtin@1".into(),
            normalizer: "exact".into(),
            model: None,
        }
    }

    fn entry(completion: &str, passed: bool) -> BaselineEntry {
        BaselineEntry {
            digest: completion_digest(completion),
            passed,
            context: context(),
            commit: None,
            reason: "r".into(),
            completion: completion.into(),
        }
    }

    fn sample(index: u32, completion: &str) -> SampleOutcome {
        let grade = crate::grade::builtin::grade(case().value().get("expect"), completion);
        SampleOutcome {
            sample: index,
            outcome: Ok((grade, completion.to_owned())),
            duration: Duration::ZERO,
        }
    }

    fn judge(samples: Vec<SampleOutcome>, baseline: BaselineRef<'_>) -> (Status, Vec<RuleId>) {
        let (result, findings) = judge_full(samples, baseline);
        (
            result.status,
            findings.iter().map(|finding| finding.rule).collect(),
        )
    }

    #[test]
    fn status_follows_the_baseline() {
        let passed = entry("ok", true);
        let failed = entry("nope", false);
        assert_eq!(
            judge(vec![sample(0, "ok")], BaselineRef::Usable(&passed)),
            (Status::Pass, vec![])
        );
        assert_eq!(
            judge(vec![sample(0, "ok!")], BaselineRef::Usable(&passed)),
            (Status::Moved, vec![RuleId::Moved])
        );
        assert_eq!(
            judge(vec![sample(0, "no")], BaselineRef::Usable(&passed)),
            (Status::Regressed, vec![RuleId::Regressed])
        );
        assert_eq!(
            judge(vec![sample(0, "ok")], BaselineRef::Usable(&failed)),
            (Status::Improved, vec![RuleId::Improved])
        );
        assert_eq!(
            judge(vec![sample(0, "no")], BaselineRef::Usable(&failed)),
            (Status::Fail, vec![RuleId::Failing])
        );
        assert_eq!(
            judge(vec![sample(0, "no")], BaselineRef::Missing),
            (Status::Fail, vec![RuleId::Failing])
        );
        // A drifted baseline is never compared: a moved completion is just a pass.
        assert_eq!(
            judge(vec![sample(0, "ok!")], BaselineRef::Drifted),
            (Status::Pass, vec![])
        );
    }

    #[test]
    fn an_error_in_any_sample_is_an_error_never_a_score() {
        let error = SampleOutcome {
            sample: 1,
            outcome: Err("completer timed out".into()),
            duration: Duration::ZERO,
        };
        assert_eq!(
            judge(vec![sample(0, "ok"), error], BaselineRef::Missing),
            (Status::Error, vec![RuleId::CompleterError])
        );
    }

    fn judge_full(
        samples: Vec<SampleOutcome>,
        baseline: BaselineRef<'_>,
    ) -> (CaseResult, Vec<Finding>) {
        let case = case();
        assess(CaseRun {
            suite: "s",
            case: &case,
            context: context(),
            samples,
            baseline,
            agreement_min: 1.0,
        })
    }

    /// Kills `delete match arm BaselineRef::Usable(entry)`: a result records which baseline
    /// it was compared with, and only when it was compared.
    #[test]
    fn a_result_records_the_baseline_it_was_compared_with() {
        let passed = entry("ok", true);
        let (result, _) = judge_full(vec![sample(0, "ok")], BaselineRef::Usable(&passed));
        assert_eq!(result.baseline_digest, Some(passed.digest));
        let (result, _) = judge_full(vec![sample(0, "ok")], BaselineRef::Drifted);
        assert_eq!(result.baseline_digest, None);
    }

    /// Kills `replace > with >=` in the sample label: one sample is never called "sample 0".
    #[test]
    fn a_single_sample_error_names_no_sample() {
        let error = SampleOutcome {
            sample: 0,
            outcome: Err("completer timed out".into()),
            duration: Duration::ZERO,
        };
        let (_, findings) = judge_full(vec![error], BaselineRef::Missing);
        assert_eq!(
            findings[0].message,
            "case `a` (evals/a.jsonl:1): completer timed out"
        );
        let error = SampleOutcome {
            sample: 1,
            outcome: Err("completer timed out".into()),
            duration: Duration::ZERO,
        };
        let (_, findings) = judge_full(vec![sample(0, "ok"), error], BaselineRef::Missing);
        assert_eq!(
            findings[0].message,
            "case `a` (evals/a.jsonl:1): sample 1: completer timed out"
        );
    }

    /// Kills the `delete !` mutants where reasons are collected: a failing case lists the
    /// reasons of its failing samples, each once.
    #[test]
    fn a_failing_case_lists_each_reason_once() {
        let (result, findings) =
            judge_full(vec![sample(0, "no"), sample(1, "no")], BaselineRef::Missing);
        assert_eq!(result.status, Status::Fail);
        assert_eq!(result.reasons.len(), 1, "{:?}", result.reasons);
        let expected = format!("fails: {}", result.reasons[0]);
        assert!(
            findings[0].message.ends_with(&expected),
            "{}",
            findings[0].message
        );
    }

    /// Kills the `millis` mutants: a case's duration is the sum of its samples'.
    #[test]
    fn a_case_takes_as_long_as_its_samples() {
        let mut first = sample(0, "ok");
        first.duration = Duration::from_millis(1500);
        let mut second = sample(1, "ok");
        second.duration = Duration::from_millis(250);
        let (result, _) = judge_full(vec![first, second], BaselineRef::Missing);
        assert_eq!(result.duration_ms, 1750);
        assert_eq!(result.samples[0].duration_ms, 1500);
    }

    /// Kills `delete !` before `samples_pass` in the no-baseline arm: samples that pass but
    /// disagree fail the case with EL505 alone, not also EL502.
    #[test]
    fn disagreeing_passing_samples_without_a_baseline_fail_with_el505_only() {
        let samples = vec![sample(0, "ok"), sample(1, "ok then")];
        assert_eq!(
            judge(samples, BaselineRef::Missing),
            (Status::Fail, vec![RuleId::SamplesDisagree])
        );
    }

    /// Kills the `modal_completion` comparison mutants: on a tie the first completion is
    /// the modal one, and agreement is the share of samples equal to it.
    #[test]
    fn the_modal_completion_is_the_most_common_then_the_first() {
        let grade = Grade::from_reasons(Vec::new());
        let graded = [(&grade, "b"), (&grade, "a")];
        assert_eq!(modal_completion(&graded), ("b", 0.5));
        let graded = [(&grade, "b"), (&grade, "a"), (&grade, "a")];
        let (modal, agreement) = modal_completion(&graded);
        assert_eq!(modal, "a");
        assert!((agreement - 2.0 / 3.0).abs() < 1e-12);
        assert_eq!(modal_completion(&[]), ("", 0.0));
    }

    /// Kills the mutants in EL505's message and detail: how many samples agree, and a
    /// diff against the sample that does not.
    #[test]
    fn el505_counts_the_agreeing_samples_and_shows_the_outlier() {
        let samples = vec![sample(0, "ok"), sample(1, "ok then"), sample(2, "ok")];
        let (_, findings) = judge_full(samples, BaselineRef::Missing);
        assert_eq!(findings.len(), 1);
        assert!(
            findings[0]
                .message
                .contains("2 of 3 samples agree (0.67 < agreement_min 1.00)"),
            "{}",
            findings[0].message
        );
        let detail = findings[0].detail.as_deref().expect("a diff");
        assert!(detail.contains("+ok then"), "{detail}");
    }

    /// Kills `replace diff_against -> Option<String>` mutants: EL503 and EL501 carry the
    /// diff from the baseline's completion to the current one.
    #[test]
    fn moved_and_regressed_show_the_diff_from_the_baseline() {
        let passed = entry("ok", true);
        for current in ["ok!", "no"] {
            let (_, findings) = judge_full(vec![sample(0, current)], BaselineRef::Usable(&passed));
            let detail = findings[0].detail.as_deref().expect("a diff");
            assert!(
                detail.contains("-ok\n")
                    || detail.contains(
                        "-ok
"
                    ),
                "{detail}"
            );
            assert!(detail.contains(&format!("+{current}")), "{detail}");
        }
    }

    /// Samples that all pass but disagree are not a regression (REGRESSED is "passed at
    /// baseline and fails now"): FAIL with EL505 alone, whether or not the most common
    /// completion is the baseline's, and whatever the baseline recorded.
    #[test]
    fn disagreeing_passing_samples_fail_with_el505_only_whatever_the_baseline() {
        let passed = entry("ok", true);
        let failed = entry("nope", false);
        for baseline in [&passed, &failed] {
            for modal in ["ok", "ok now"] {
                let samples = vec![sample(0, modal), sample(1, modal), sample(2, "ok then")];
                let (result, findings) = judge_full(samples, BaselineRef::Usable(baseline));
                assert_eq!(result.status, Status::Fail, "{modal}");
                assert_eq!(
                    findings
                        .iter()
                        .map(|finding| finding.rule)
                        .collect::<Vec<_>>(),
                    vec![RuleId::SamplesDisagree]
                );
                assert_eq!(result.reasons, vec!["samples_disagree:0.67<1.00"]);
            }
        }
    }

    /// A failing sample among disagreeing ones is still a regression, with its diff.
    #[test]
    fn a_failing_sample_among_disagreeing_ones_regresses() {
        let passed = entry("ok", true);
        let samples = vec![sample(0, "no"), sample(1, "no"), sample(2, "ok")];
        assert_eq!(
            judge(samples, BaselineRef::Usable(&passed)),
            (
                Status::Regressed,
                vec![RuleId::SamplesDisagree, RuleId::Regressed]
            )
        );
    }
}
