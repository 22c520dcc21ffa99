//! EL306 and EL307: a grader that names a labels file is measured against it, and the
//! lock pins the measurement (the labels' digest, the grader version, the counts). `check`
//! re-measures and refuses a pin that is missing, stale or not what the labels give; a
//! grader below the floors is uncalibrated, a warning in `check` and an error in `run`,
//! whose passes it cannot make green.

use crate::commands::calibrate::measure_labels;
use crate::commands::lock::file_digest;
use crate::commands::project::Project;
use crate::error::Result;
use crate::finding::{Finding, Location, Subject};
use crate::graders::calibration::{of_counts, Confusion};
use crate::project::config::{GraderConfig, CONFIG_FILE};
use crate::project::lock::{CalibrationLock, LOCK_FILE};
use crate::rules::{RuleId, Severity};
use crate::source::ContentSource;
use std::collections::BTreeSet;
use std::path::Path;

/// What `check` finds of every grader's calibration.
pub fn check(project: &Project, source: &dyn ContentSource, root: &Path) -> Result<Vec<Finding>> {
    let mut findings = Vec::new();
    if project.lock.is_none() {
        return Ok(findings);
    }
    for (id, grader) in &project.config.graders {
        let Some(labels) = &grader.labels else {
            continue;
        };
        let stale = |message: String| {
            Finding::new(RuleId::CalibrationStale, Subject::grader(id), message)
                .at(Location::line(CONFIG_FILE, grader.line))
        };
        let pinned = match current_pin(project, source, id, grader) {
            Ok(pinned) => pinned,
            Err(why) => {
                findings.push(stale(why));
                continue;
            }
        };
        let measured = match measure_labels(source, root, id, labels) {
            Ok(counts) => counts,
            Err(error) => {
                findings.push(stale(format!(
                    "grader `{id}` could not be measured against {labels}: {error}"
                )));
                continue;
            }
        };
        if measured != counts_of(&pinned) {
            findings.push(stale(format!(
                "{LOCK_FILE} pins grader `{id}` at {} against {labels}, and the labels give {}",
                describe(&counts_of(&pinned)),
                describe(&measured)
            )));
            continue;
        }
        if let Some(finding) = uncalibrated(id, grader, &pinned) {
            findings.push(finding.severity(Severity::Warn));
        }
    }
    Ok(findings)
}

/// What `run` finds for the suites it runs: each graded by an uncalibrated grader (below
/// the floors, or not measured against its labels as they are) is an error.
pub fn run(
    project: &Project,
    source: &dyn ContentSource,
    selected: &BTreeSet<String>,
) -> Vec<Finding> {
    let mut findings = Vec::new();
    for (id, grader) in &project.config.graders {
        if grader.labels.is_none() {
            continue;
        }
        let graded: Vec<&str> = selected
            .iter()
            .map(String::as_str)
            .filter(|suite| project.grader_for(suite).id == *id)
            .collect();
        if graded.is_empty() {
            continue;
        }
        let finding = match current_pin(project, source, id, grader) {
            Ok(pinned) => uncalibrated(id, grader, &pinned),
            Err(why) => Some(
                Finding::new(
                    RuleId::GraderUncalibrated,
                    Subject::grader(id),
                    format!("{why}: grader `{id}` counts as uncalibrated, and its passes cannot make this run green"),
                )
                .at(Location::line(CONFIG_FILE, grader.line))
                .help("run `evalock lock` to measure the grader against its labels"),
            ),
        };
        if let Some(finding) = finding {
            findings.push(finding.detail(format!("suites graded by it: {}", graded.join(", "))));
        }
    }
    findings
}

/// The lock's calibration of grader `id`, when it was measured against the labels as
/// they are and the grader's current version; else why not.
fn current_pin(
    project: &Project,
    source: &dyn ContentSource,
    id: &str,
    grader: &GraderConfig,
) -> std::result::Result<CalibrationLock, String> {
    let labels = grader.labels.as_deref().unwrap_or_default();
    let pinned = project
        .lock
        .as_ref()
        .and_then(|lock| lock.graders.get(id))
        .and_then(|locked| locked.calibration.clone())
        .ok_or_else(|| {
            format!(
                "grader `{id}` names labels {labels}, and {LOCK_FILE} pins no calibration of it"
            )
        })?;
    let digest = file_digest(source, labels)
        .ok_or_else(|| format!("grader `{id}` names labels {labels}, and there is no such file"))?;
    if pinned.labels != digest {
        return Err(format!(
            "{labels} changed since {LOCK_FILE} measured grader `{id}` against it"
        ));
    }
    if pinned.version != grader.version.0 {
        return Err(format!(
            "{LOCK_FILE} measured grader `{id}` at version {}, and it is version {} now",
            pinned.version, grader.version.0
        ));
    }
    Ok(pinned)
}

fn counts_of(pinned: &CalibrationLock) -> Confusion {
    Confusion {
        tp: pinned.tp,
        fp: pinned.fp,
        tn: pinned.tn,
        fn_: pinned.fn_,
    }
}

fn describe(counts: &Confusion) -> String {
    format!(
        "{} labels (both pass {}, false successes {}, both fail {}, false failures {})",
        counts.n(),
        counts.tp,
        counts.fp,
        counts.tn,
        counts.fn_
    )
}

/// EL307 for a grader whose pinned calibration is below the floors.
fn uncalibrated(id: &str, grader: &GraderConfig, pinned: &CalibrationLock) -> Option<Finding> {
    let calibration = of_counts(&counts_of(pinned));
    if calibration.below_floor.is_empty() {
        return None;
    }
    let false_success = calibration
        .false_success
        .map(|rate| {
            format!(
                "; it passes {:.0} % of what people failed",
                rate.value * 100.0
            )
        })
        .unwrap_or_default();
    Some(
        Finding::new(
            RuleId::GraderUncalibrated,
            Subject::grader(id),
            format!(
                "grader `{id}` is uncalibrated against {}: {}{false_success}; its passes cannot make a run green",
                grader.labels.as_deref().unwrap_or_default(),
                calibration.below_floor.join(", ")
            ),
        )
        .at(Location::line(CONFIG_FILE, grader.line)),
    )
}
