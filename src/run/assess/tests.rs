use super::*;
use crate::cases::parse_case_file;
use crate::digest::bytes_digest;

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
        failure: Vec::new(),
        duration_ms: None,
        assertions: Vec::new(),
        completion: completion.into(),
    }
}

fn sample(index: u32, completion: &str) -> SampleOutcome {
    let grade = crate::graders::builtin::grade(case().value().get("expect"), completion);
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
        slack: crate::run::envelope::Slack::default(),
        grader: &crate::graders::GraderProgram::Builtin,
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
