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

/// A case's result before anything is judged: ERROR, with no reasons, completion,
/// baseline comparison or samples yet.
pub fn unjudged_result(suite: &str, case: &Case, context: BaselineContext) -> CaseResult {
    CaseResult {
        suite: suite.to_owned(),
        case_id: case.id.clone(),
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
    }
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
        baseline: run.baseline.usage(),
        baseline_digest: match run.baseline {
            BaselineRef::Usable(entry) => Some(entry.digest),
            _ => None,
        },
        duration_ms,
        samples,
        ..unjudged_result(run.suite, case, run.context)
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
