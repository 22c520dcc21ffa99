//! Judging one case from its graded samples and its baseline, as pure logic: the status
//! (PASS, MOVED, FAIL, REGRESSED, IMPROVED, ERROR) and the EL5xx findings that explain it.

use super::diff::completion_diff;
use super::results::{BaselineUse, CaseResult, SampleResult, Status};
use crate::baselines::rules as baselines;
use crate::baselines::rules::{context_changes, current_context};
use crate::baselines::{BaselineContext, BaselineEntry};
use crate::cases::suite::SuiteModel;
use crate::cases::Case;
use crate::digest::Digest;
use crate::finding::{Finding, Location, Subject};
use crate::graders::{completion_digest, Grade};
use crate::rules::RuleId;
use std::collections::HashMap;
use std::time::Duration;

#[cfg(test)]
mod tests;

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
pub fn baseline_ref<'p>(
    project: &baselines::Side<'p>,
    suite: &SuiteModel,
    case: &Case,
) -> BaselineRef<'p> {
    let Some(baseline) = project.baselines.get(&suite.name) else {
        return BaselineRef::NotConfigured;
    };
    if baseline.is_unreadable() {
        return BaselineRef::Tampered;
    }
    match baseline.entry(&case.id) {
        None => BaselineRef::Missing,
        Some(_) if !baseline.is_intact(&case.id) => BaselineRef::Tampered,
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
    /// The suite's envelope slack against last-good (EL510).
    pub slack: crate::run::envelope::Slack,
    /// What grades the case, for its assertions' outcomes.
    pub grader: &'a crate::graders::GraderProgram,
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

/// A case's result before anything is judged: ERROR, with no reasons, completion,
/// baseline comparison or samples yet.
pub fn unjudged_result(suite: &str, case: &Case, context: BaselineContext) -> CaseResult {
    CaseResult {
        suite: suite.to_owned(),
        case_id: case.id.to_string(),
        case_version: case.version,
        file: case.file.to_string(),
        line: case.line,
        end_line: case.end_line,
        status: Status::Error,
        reasons: Vec::new(),
        digest: None,
        completion: None,
        baseline: BaselineUse::None,
        baseline_digest: None,
        context,
        agreement: 0.0,
        duration_ms: 0,
        samples: Vec::new(),
        stratum: case
            .value()
            .get("stratum")
            .and_then(serde_json::Value::as_str)
            .map(str::to_owned),
        critical: case.value().get("critical") == Some(&serde_json::Value::Bool(true)),
        envelope: Vec::new(),
        flip_rate: None,
        assertions: Vec::new(),
        usage: None,
    }
}

/// The case's result and the findings that explain it.
pub fn assess(run: CaseRun<'_>) -> (CaseResult, Vec<Finding>) {
    let place = Place::of(run.suite, run.case);
    let samples: Vec<SampleResult> = run.samples.iter().map(sample_result).collect();
    let duration_ms = samples.iter().map(|sample| sample.duration_ms).sum();
    let mut result = CaseResult {
        baseline: run.baseline.usage(),
        baseline_digest: match run.baseline {
            BaselineRef::Usable(entry) => Some(entry.digest),
            _ => None,
        },
        duration_ms,
        samples,
        ..unjudged_result(run.suite, run.case, run.context)
    };
    if let Some((reason, finding)) = completer_error(&run.samples, &place) {
        result.reasons = vec![reason];
        return (result, vec![finding]);
    }

    let graded: Vec<(&Grade, &str)> = run
        .samples
        .iter()
        .filter_map(|sample| sample.outcome.as_ref().ok())
        .map(|(grade, text)| (grade, text.as_str()))
        .collect();
    let (modal, agreement) = modal_completion(&graded);
    let digest = completion_digest(modal);
    result.agreement = agreement;
    result.digest = Some(digest);
    result.completion = Some(modal.to_owned());
    let mut reasons = failure_reasons(&graded);
    let mut findings = Vec::new();
    let samples_pass = graded.iter().all(|(grade, _)| grade.pass);
    let agrees = agreement + 1e-9 >= run.agreement_min;
    if !agrees {
        reasons.push(format!(
            "samples_disagree:{agreement:.2}<{:.2}",
            run.agreement_min
        ));
        findings.push(disagreement(
            &place,
            &graded,
            modal,
            agreement,
            run.agreement_min,
        ));
    }
    let judged = Judged {
        samples_pass,
        agrees,
        completion: modal,
        digest,
        reasons: &reasons,
    };
    let (status, finding) = judge_against_baseline(&place, run.baseline, &judged);
    result.status = status;
    findings.extend(finding);
    if let (BaselineRef::Usable(entry), Status::Pass | Status::Moved) = (run.baseline, status) {
        let breaches = crate::run::envelope::breaches(
            crate::run::envelope::Envelope::of(Some(&entry.completion), entry.duration_ms),
            crate::run::envelope::Envelope::of(Some(modal), Some(duration_ms)),
            &run.slack,
        );
        for breach in &breaches {
            result.envelope.push(breach.channel.to_owned());
            findings.push(
                place
                    .finding(
                        RuleId::EnvelopeBreach,
                        format!(
                            "case `{}` ({}) still passes, but its envelope broke its pin: {}",
                            place.case.id,
                            place.at,
                            breach.describe()
                        ),
                    )
                    .discriminator(breach.channel),
            );
        }
    }
    result.assertions =
        crate::graders::assertion_outcomes(run.grader, run.case.value(), modal, &reasons);
    result.usage = crate::run::envelope::usage(modal);
    result.reasons = reasons;
    (result, findings)
}

/// Where a case's findings point and how their messages name it.
struct Place<'c> {
    case: &'c Case,
    subject: Subject,
    location: Location,
    /// `path:line`, for messages.
    at: String,
}

impl<'c> Place<'c> {
    fn of(suite: &str, case: &'c Case) -> Place<'c> {
        Place {
            case,
            subject: Subject::case(suite, &case.id),
            location: Location::span(&*case.file, case.line, case.end_line),
            at: format!("{}:{}", case.file, case.line),
        }
    }

    fn finding(&self, rule: RuleId, message: String) -> Finding {
        Finding::new(rule, self.subject.clone(), message).at(self.location.clone())
    }
}

/// The first sample without a completion makes the whole case an ERROR (EL504), never a
/// score: its reason for the result and its finding.
fn completer_error(samples: &[SampleOutcome], place: &Place<'_>) -> Option<(String, Finding)> {
    let (sample, error) = samples.iter().find_map(|sample| {
        sample
            .outcome
            .as_ref()
            .err()
            .map(|error| (sample.sample, error))
    })?;
    let which = if samples.len() > 1 {
        format!(" sample {sample}:")
    } else {
        String::new()
    };
    let message = format!("case `{}` ({}):{which} {error}", place.case.id, place.at);
    Some((
        format!("error:{error}"),
        place.finding(RuleId::CompleterError, message),
    ))
}

/// The reasons of every failing sample, each once, in the order the samples gave them.
fn failure_reasons(graded: &[(&Grade, &str)]) -> Vec<String> {
    let mut reasons: Vec<String> = Vec::new();
    for (grade, _) in graded.iter().filter(|(grade, _)| !grade.pass) {
        for reason in &grade.reasons {
            if !reasons.contains(reason) {
                reasons.push(reason.clone());
            }
        }
    }
    reasons
}

/// EL505: too few samples gave the most common completion; the detail diffs it against
/// the first sample that differs.
fn disagreement(
    place: &Place<'_>,
    graded: &[(&Grade, &str)],
    modal: &str,
    agreement: f64,
    agreement_min: f64,
) -> Finding {
    let agreeing = graded.iter().filter(|(_, text)| *text == modal).count();
    let outlier = graded
        .iter()
        .map(|(_, text)| *text)
        .find(|text| *text != modal)
        .unwrap_or(modal);
    let finding = place.finding(
        RuleId::SamplesDisagree,
        format!(
            "case `{}` ({}): {agreeing} of {} samples agree ({agreement:.2} < agreement_min {agreement_min:.2})",
            place.case.id,
            place.at,
            graded.len(),
        ),
    );
    match completion_diff(modal, outlier, "most common sample", "disagreeing sample") {
        Some(diff) => finding.detail(diff),
        None => finding,
    }
}

/// What the samples of a case came to, before the baseline is consulted.
struct Judged<'a> {
    /// Every sample passed its grader.
    samples_pass: bool,
    /// Enough samples agree (`agreement_min`).
    agrees: bool,
    /// The most common completion, and its digest.
    completion: &'a str,
    digest: Digest,
    reasons: &'a [String],
}

/// The case's status against its baseline, and the finding that explains it, if any.
fn judge_against_baseline(
    place: &Place<'_>,
    baseline: BaselineRef<'_>,
    judged: &Judged<'_>,
) -> (Status, Option<Finding>) {
    let id = &place.case.id;
    let at = &place.at;
    let digest = judged.digest;
    let with_diff = |finding: Finding, entry: &BaselineEntry| match diff_against(
        entry,
        judged.completion,
        &digest,
    ) {
        Some(diff) => finding.detail(diff),
        None => finding,
    };
    let reason_list = if judged.reasons.is_empty() {
        String::new()
    } else {
        format!(": {}", judged.reasons.join(", "))
    };
    let passes = judged.samples_pass && judged.agrees;
    match (baseline, passes) {
        (BaselineRef::Usable(entry), true) if entry.passed && entry.digest == digest => {
            (Status::Pass, None)
        }
        (BaselineRef::Usable(entry), true) if entry.passed => {
            let finding = place.finding(
                RuleId::Moved,
                format!(
                    "case `{id}` ({at}) still passes, but its completion moved ({} -> {})",
                    entry.digest.short(),
                    digest.short()
                ),
            );
            (Status::Moved, Some(with_diff(finding, entry)))
        }
        (BaselineRef::Usable(_), true) => (
            Status::Improved,
            Some(place.finding(
                RuleId::Improved,
                format!("case `{id}` ({at}) failed at baseline and passes now"),
            )),
        ),
        // Only a sample that fails its assertions is a regression; samples that all pass
        // but disagree are FAIL with EL505 alone, whatever the baseline says.
        (BaselineRef::Usable(entry), false) if entry.passed && !judged.samples_pass => {
            let finding = place.finding(
                RuleId::Regressed,
                format!("case `{id}` ({at}) passed at baseline and fails now{reason_list}"),
            );
            (Status::Regressed, Some(with_diff(finding, entry)))
        }
        (BaselineRef::Usable(entry), false)
            if !entry.passed && !judged.samples_pass && !entry.failure.is_empty() =>
        {
            known_failure(place, entry, judged)
        }
        (_, true) => (Status::Pass, None),
        (_, false) if !judged.samples_pass => (
            Status::Fail,
            Some(place.finding(
                RuleId::Failing,
                format!("case `{id}` ({at}) fails{reason_list}"),
            )),
        ),
        (_, false) => (Status::Fail, None),
    }
}

/// A case accepted while failing (a stretch case): failing for the reasons it was accepted
/// with is a note, failing for any other is EL502, naming both.
fn known_failure(
    place: &Place<'_>,
    entry: &BaselineEntry,
    judged: &Judged<'_>,
) -> (Status, Option<Finding>) {
    let id = &place.case.id;
    let at = &place.at;
    let now: std::collections::BTreeSet<&String> = judged.reasons.iter().collect();
    let accepted: std::collections::BTreeSet<&String> = entry.failure.iter().collect();
    let finding = match now == accepted {
        true => place
            .finding(
                RuleId::Failing,
                format!(
                    "case `{id}` ({at}) is a known failure: it fails as it did when accepted failing ({}): {}",
                    entry.reason,
                    entry.failure.join(", ")
                ),
            )
            .severity(crate::rules::Severity::Note)
            .help("a known failure does not fail the gate; when it passes, `evalock accept` records it (EL506)"),
        false => place.finding(
            RuleId::Failing,
            format!(
                "case `{id}` ({at}) fails differently from its accepted failure: now {}; accepted failing with {}",
                judged.reasons.join(", "),
                entry.failure.join(", ")
            ),
        ),
    };
    (Status::Fail, Some(finding))
}

/// The completion diff against last-good, led by where their tool calls first part.
fn diff_against(entry: &BaselineEntry, current: &str, digest: &Digest) -> Option<String> {
    let diff = completion_diff(
        &entry.completion,
        current,
        &format!("baseline ({})", entry.digest.short()),
        &format!("current ({})", digest.short()),
    )?;
    match crate::graders::envelope::trajectory_divergence(&entry.completion, current) {
        Some(step) => Some(format!("trajectory: {step}\n{diff}")),
        None => Some(diff),
    }
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
