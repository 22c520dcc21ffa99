//! EL3xx: graders as code. Sources and what runs pinned with their version (EL301),
//! cases pinned to the current version (EL302), graders that cannot fail (EL303) and
//! negative controls that pass (EL304).

use crate::cases::suite::SuiteModel;
use crate::cases::Case;
use crate::digest::Digest;
use crate::finding::{Finding, Location, Subject};
use crate::graders::probe::{probe_builtin, probe_case, Probe};
use crate::graders::sources::GraderModel;
use crate::graders::{Grader, GraderProgram, REFUSAL_PROBE};
use crate::project::config::{Config, CONFIG_FILE};
use crate::project::lock::toml_string_array;
use crate::project::lock::{GraderLock, Lock, LOCK_FILE};
use crate::rules::{RuleId, Severity};
use rayon::prelude::*;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// What the EL3xx rules read of one snapshot of the project.
#[derive(Clone, Copy)]
pub struct Side<'a> {
    pub config: &'a Config,
    pub graders: &'a [GraderModel],
    pub suites: &'a [SuiteModel],
    pub lock: Option<&'a Lock>,
    /// `working tree`, `index`, `main (1a2b3c4)`.
    pub source: &'a str,
}

impl Side<'_> {
    pub fn grader_model(&self, id: &str) -> Option<&GraderModel> {
        self.graders.iter().find(|grader| grader.id == id)
    }

    /// The grader a suite uses.
    pub fn grader_for(&self, suite: &str) -> Grader {
        crate::graders::sources::grader_for(self.config, self.graders, suite)
    }
}

/// Grades one completion of a case of a suite with a command grader (the caller starts
/// the process): whether it passed. Without one, command graders are not probed.
pub type CommandGrading<'a> = &'a (dyn Fn(&str, &Grader, &Value, &str) -> bool + Sync);

/// Every grader check for the suites in `suites` (EL301 looks at all graders).
pub fn check(
    project: &Side<'_>,
    base: Option<&Side<'_>>,
    suites: &BTreeSet<String>,
    command_grading: Option<CommandGrading<'_>>,
) -> Vec<Finding> {
    let mut findings = graders_unversioned(project, base);
    let selected: Vec<&SuiteModel> = project
        .suites
        .iter()
        .filter(|suite| suites.contains(&suite.name))
        .collect();
    for suite in &selected {
        findings.extend(grader_version_drift(project, suite));
    }
    findings.extend(graders_that_cannot_fail(
        project,
        &selected,
        command_grading,
    ));
    findings
}

fn case_location(case: &Case) -> Location {
    Location::span(&*case.file, case.line, case.end_line)
}

/// Cases that are run: not retired.
pub fn active_cases(suite: &SuiteModel) -> impl Iterator<Item = &Case> {
    suite.first_of_each_id().filter(|case| !case.retired)
}

/// EL301 as `evalock lock` enforces it: re-pinning a changed grader (sources or what it
/// runs) under the same version would launder the change, so the lock is not written.
pub fn changed_without_version_bump(graders: &[GraderModel], lock: &Lock) -> Vec<Finding> {
    graders
        .iter()
        .filter_map(|grader| {
            let locked = lock.graders.get(&grader.id)?;
            if locked.version != grader.version {
                return None;
            }
            unversioned_change(grader, &Pinned::from_lock(locked), LOCK_FILE)
        })
        .collect()
}

/// EL301: a grader's sources or what it runs moved but its version did not (against the
/// lock and the base).
pub fn graders_unversioned(project: &Side<'_>, base: Option<&Side<'_>>) -> Vec<Finding> {
    let mut findings = Vec::new();
    let Some(lock) = project.lock else {
        return findings;
    };
    for grader in project.graders {
        findings.extend(unmatched_sources(grader));
        findings.extend(unpinned_command_files(grader));
        let Some(locked) = lock.graders.get(&grader.id) else {
            findings.push(needs_lock(
                grader,
                format!(
                    "grader `{}` (version {}) is not pinned in {LOCK_FILE}",
                    grader.id, grader.version
                ),
            ));
            continue;
        };
        if locked.version != grader.version {
            findings.push(needs_lock(
                grader,
                format!(
                    "grader `{}` is version {} now but {LOCK_FILE} pins version {}",
                    grader.id, grader.version, locked.version
                ),
            ));
            continue;
        }
        if let Some(finding) = unversioned_change(grader, &Pinned::from_lock(locked), LOCK_FILE) {
            findings.push(finding);
            continue;
        }
        findings.extend(stale_file_pins(grader, locked));
        if GraderProgram::locked(locked).is_none() {
            findings.push(needs_lock(
                grader,
                format!(
                    "grader `{}`: {LOCK_FILE} pins its sources but not what it runs (`kind`, `command`); it was written by an earlier evalock",
                    grader.id
                ),
            ));
        }
        let base_grader = base.and_then(|base| Some((base, base.grader_model(&grader.id)?)));
        if let Some((base, base_grader)) = base_grader {
            if base_grader.version == grader.version {
                findings.extend(unversioned_change(
                    grader,
                    &Pinned::from_model(base_grader),
                    base.source,
                ));
            }
        }
    }
    for id in lock
        .graders
        .keys()
        .filter(|id| project.grader_model(id).is_none())
    {
        findings.push(
            Finding::new(
                RuleId::GraderChangedUnversioned,
                Subject::grader(id),
                format!("grader `{id}` is pinned in {LOCK_FILE} but no longer configured in {CONFIG_FILE}"),
            )
            .at(Location::file(CONFIG_FILE))
            .help("restore `[grader.…]`, or run `evalock lock` if removing it is intended"),
        );
    }
    findings
}

/// The lock's per-file pins of a grader whose tree digest still matches its sources: a
/// file pin that differs was edited in the lock, and would name the wrong file (or none)
/// when the grader next drifts. `lock --check` refuses such a lock; so does `check`.
fn stale_file_pins(grader: &GraderModel, locked: &GraderLock) -> Option<Finding> {
    let current = Pinned::from_model(grader).files;
    let stale: Vec<&str> = current
        .keys()
        .chain(locked.files.keys())
        .filter(|path| current.get(*path) != locked.files.get(*path))
        .map(String::as_str)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    if stale.is_empty() {
        return None;
    }
    let finding = Finding::new(
        RuleId::GraderChangedUnversioned,
        Subject::grader(&grader.id),
        format!(
            "the {LOCK_FILE} entry of grader `{}` is stale: its file pins of {} do not match the sources its digest matches (the lock was edited)",
            grader.id,
            stale.join(", ")
        ),
    )
    .at(Location::file(LOCK_FILE))
    .help("run `evalock lock` and commit evalock.lock; review how the lock came to differ");
    Some(finding)
}

/// `sources` globs that match nothing: the grader's code they meant is not pinned.
fn unmatched_sources(grader: &GraderModel) -> impl Iterator<Item = Finding> + '_ {
    grader.unmatched_sources.iter().map(|(pattern, line)| {
        Finding::new(
            RuleId::GraderChangedUnversioned,
            Subject::grader(&grader.id),
            format!(
                "grader `{}`: `sources` pattern `{pattern}` matches no file, so nothing of it is pinned",
                grader.id
            ),
        )
        .severity(Severity::Warn)
        .at(Location::line(CONFIG_FILE, *line))
        .help("fix the glob in `[grader.…] sources`, then run `evalock lock`")
        .discriminator(pattern)
    })
}

/// Files the grader's `command` runs that its `sources` leave out: the argv is pinned,
/// but edits to them would pass unseen.
fn unpinned_command_files(grader: &GraderModel) -> impl Iterator<Item = Finding> + '_ {
    grader.unpinned_command_files.iter().map(|path| {
        Finding::new(
            RuleId::GraderChangedUnversioned,
            Subject::grader(&grader.id),
            format!(
                "grader `{}` runs `{path}`, which no `sources` pattern matches, so edits to it are not pinned",
                grader.id
            ),
        )
        .severity(Severity::Warn)
        .at(Location::line(CONFIG_FILE, grader.line))
        .help(format!(
            "add `{path}` to `[grader.{}] sources`, bump the grader's `version`, then run `evalock lock`",
            grader.id
        ))
        .discriminator(&format!("unpinned:{path}"))
    })
}

/// The lock does not pin the grader as configured, and no change hides behind it.
fn needs_lock(grader: &GraderModel, message: String) -> Finding {
    Finding::new(
        RuleId::GraderChangedUnversioned,
        Subject::grader(&grader.id),
        message,
    )
    .at(Location::file(CONFIG_FILE))
    .help("run `evalock lock` to pin the grader's version with its sources and what it runs")
}

/// What one grader version was pinned with, in the lock or in the base revision.
struct Pinned {
    digest: Digest,
    files: BTreeMap<String, Digest>,
    /// `None` when the lock predates pinning what a grader runs.
    program: Option<GraderProgram>,
}

impl Pinned {
    fn from_lock(locked: &GraderLock) -> Pinned {
        Pinned {
            digest: locked.digest,
            files: locked.files.clone(),
            program: GraderProgram::locked(locked),
        }
    }

    fn from_model(grader: &GraderModel) -> Pinned {
        Pinned {
            digest: grader.digest,
            files: grader
                .files
                .iter()
                .map(|file| (file.path.clone(), file.digest))
                .collect(),
            program: Some(grader.program()),
        }
    }
}

/// EL301 when `grader`, still at the version of `pinned`, runs something else or has
/// other sources; `against` names where the pin is (`evalock.lock`, `main`).
fn unversioned_change(grader: &GraderModel, pinned: &Pinned, against: &str) -> Option<Finding> {
    let program = grader.program();
    let program_moved = pinned.program.as_ref().filter(|pinned| **pinned != program);
    let sources_moved = pinned.digest != grader.digest;
    if program_moved.is_none() && !sources_moved {
        return None;
    }
    let mut moved: Vec<String> = Vec::new();
    if let Some(pinned_program) = program_moved {
        moved.push(format!(
            "runs {} instead of {}",
            describe_program(&program),
            describe_program(pinned_program)
        ));
    }
    if sources_moved {
        moved.extend(moved_files(grader, &pinned.files));
    }
    let first_file = grader
        .files
        .iter()
        .find(|file| pinned.files.get(&file.path) != Some(&file.digest))
        .map(|file| file.path.clone());
    // What it runs is said in evalock.toml; a changed source file is where to look else.
    let location = match (program_moved, first_file) {
        (None, Some(file)) => Location::file(file),
        _ => Location::line(CONFIG_FILE, grader.line),
    };
    let finding = Finding::new(
        RuleId::GraderChangedUnversioned,
        Subject::grader(&grader.id),
        format!(
            "grader `{}` changed ({}) but is still version {} as in {against}",
            grader.id,
            moved.join(", "),
            grader.version
        ),
    )
    .at(location)
    .help(format!(
        "bump `[grader.{}] version` in {CONFIG_FILE}, run `evalock lock`, then re-record baselines with `evalock run` and `evalock accept --reason \"…\"`",
        grader.id
    ))
    .discriminator(against);
    Some(finding)
}

/// The source files added, changed or removed since `pinned`; `file modes` when only
/// those moved.
fn moved_files(grader: &GraderModel, pinned: &BTreeMap<String, Digest>) -> Vec<String> {
    let current: BTreeMap<&str, &Digest> = grader
        .files
        .iter()
        .map(|file| (file.path.as_str(), &file.digest))
        .collect();
    let mut moved: Vec<String> = Vec::new();
    for (path, digest) in &current {
        match pinned.get(*path) {
            None => moved.push(format!("{path} (added)")),
            Some(old) if old != *digest => moved.push(format!("{path} (changed)")),
            Some(_) => {}
        }
    }
    for path in pinned
        .keys()
        .filter(|path| !current.contains_key(path.as_str()))
    {
        moved.push(format!("{path} (removed)"));
    }
    if moved.is_empty() {
        moved.push("file modes".into());
    }
    moved
}

/// A grader's program as a reader of evalock.toml knows it.
fn describe_program(program: &GraderProgram) -> String {
    match program {
        GraderProgram::Builtin => "the built-in grader".into(),
        GraderProgram::Command(argv) => toml_string_array(argv),
        GraderProgram::Promptfoo => "promptfoo's deterministic assertions".into(),
        GraderProgram::Inspect(scorer) => format!("inspect's `{}` scorer", scorer.id()),
    }
}

/// EL302: a case pins a grader version that is not the suite grader's current one.
pub fn grader_version_drift(project: &Side<'_>, suite: &SuiteModel) -> Vec<Finding> {
    let grader = project.grader_for(&suite.name);
    active_cases(suite)
        .filter_map(|case| {
            let pinned = case.grader_version.as_deref()?;
            (pinned != grader.version).then(|| {
                Finding::new(
                    RuleId::GraderVersionDrift,
                    Subject::case(&suite.name, &case.id),
                    format!(
                        "case `{}` ({}:{}) pins grader version {pinned}, but grader `{}` is version {}",
                        case.id, case.file, case.line, grader.id, grader.version
                    ),
                )
                .at(case_location(case))
                .help(format!(
                    "review the case against grader {}: set `grader_version` to {:?} and bump the case `version` to {}, then run `evalock lock`",
                    grader.reference(),
                    grader.version,
                    case.version + 1
                ))
            })
        })
        .collect()
}

/// EL303 and EL304: every probe and negative control must fail its grader. Command
/// graders are probed only through `command_grading`. Cases are probed in parallel and
/// one at a time: nothing per probe is kept but the findings.
pub fn graders_that_cannot_fail(
    project: &Side<'_>,
    suites: &[&SuiteModel],
    command_grading: Option<CommandGrading<'_>>,
) -> Vec<Finding> {
    let mut findings = Vec::new();
    for suite in suites {
        let grader = project.grader_for(&suite.name);
        let grading = match (&grader.program, command_grading) {
            (GraderProgram::Command(_), None) => continue,
            (_, grading) => grading,
        };
        let probed: Vec<&Case> = active_cases(suite)
            .filter(|case| {
                case.grader_version
                    .as_deref()
                    .is_none_or(|pinned| pinned == grader.version)
            })
            .collect();
        let per_case: Vec<Vec<Finding>> = probed
            .par_iter()
            .map(|case| must_fail_findings(suite, case, &grader, grading))
            .collect();
        findings.extend(per_case.into_iter().flatten());
    }
    findings
}

/// The probes and negative controls of one case that its grader lets pass: worked out by
/// the load for the built-in grader, graded here for a command grader.
fn must_fail_findings(
    suite: &SuiteModel,
    case: &Case,
    grader: &Grader,
    command_grading: Option<CommandGrading<'_>>,
) -> Vec<Finding> {
    let outcome = match (&grader.program, command_grading) {
        (GraderProgram::Command(_), Some(grading)) => probe_case(case, |_, completion| {
            grading(&suite.name, grader, case.value(), completion)
        }),
        (GraderProgram::Promptfoo, _) => probe_case(case, |_, completion| {
            crate::graders::promptfoo::grade(case.value().get("assert"), completion).pass
        }),
        (GraderProgram::Inspect(scorer), _) => probe_case(case, |_, completion| {
            crate::graders::inspect::grade(*scorer, case.value().get("target"), completion).pass
        }),
        _ => probe_builtin(case),
    };
    let mut findings: Vec<Finding> = outcome
        .passed
        .iter()
        .map(|kind| must_fail_finding(suite, case, grader, *kind))
        .collect();
    for index in &outcome.rejected {
        findings.push(
            Finding::new(
                RuleId::KnownGoodRejected,
                Subject::case(&suite.name, &case.id),
                format!(
                    "grader {} fails the known-good completion `expect_pass[{index}]` of case `{}` ({}:{})",
                    grader.reference(),
                    case.id,
                    case.file,
                    case.line
                ),
            )
            .at(case_location(case))
            .discriminator(&format!("expect_pass-{index}")),
        );
    }
    if let Some(problem) = &outcome.malformed_known_good {
        findings.push(
            Finding::new(
                RuleId::KnownGoodRejected,
                Subject::case(&suite.name, &case.id),
                problem.clone(),
            )
            .at(case_location(case))
            .help("write `expect_pass` as {\"completion\": …} or a list of them")
            .discriminator("malformed"),
        );
    }
    if let Some(problem) = &outcome.malformed_controls {
        findings.push(
            Finding::new(
                RuleId::ControlPassed,
                Subject::case(&suite.name, &case.id),
                problem.clone(),
            )
            .at(case_location(case))
            .help("write `mutate` as {\"completion\": …} or a list of them")
            .discriminator("malformed"),
        );
    }
    findings
}

fn must_fail_finding(suite: &SuiteModel, case: &Case, grader: &Grader, kind: Probe) -> Finding {
    let subject = Subject::case(&suite.name, &case.id);
    let grader = grader.reference();
    let finding = match kind {
        Probe::EmptyProbe => Finding::new(
            RuleId::GraderCannotFail,
            subject,
            format!("grader {grader} passes an empty completion for case `{}` ({}:{})", case.id, case.file, case.line),
        )
        .discriminator("empty"),
        Probe::RefusalProbe => Finding::new(
            RuleId::GraderCannotFail,
            subject,
            format!(
                "grader {grader} passes the plain refusal {REFUSAL_PROBE:?} for case `{}` ({}:{})",
                case.id, case.file, case.line
            ),
        )
        .help("add an assertion a refusal fails (`json`, `must_include`, `must_call`), or mark the case `\"expects_refusal\": true` if refusing is the right answer")
        .discriminator("refusal"),
        Probe::Control(index) => Finding::new(
            RuleId::ControlPassed,
            subject,
            format!(
                "the negative control `mutate[{index}]` of case `{}` ({}:{}) passes grader {grader}",
                case.id, case.file, case.line
            ),
        )
        .discriminator(&format!("mutate-{index}")),
        // A known-good completion is no must-fail: its rejection is reported apart.
        Probe::KnownGood(index) => Finding::new(
            RuleId::KnownGoodRejected,
            subject,
            format!(
                "the known-good completion `expect_pass[{index}]` of case `{}` ({}:{}) was judged as a must-fail by grader {grader}",
                case.id, case.file, case.line
            ),
        )
        .discriminator(&format!("expect_pass-{index}")),
    };
    finding.at(case_location(case))
}

/// EL302 outranks everything else said about the same case: the case is scored
/// against a retired contract, so its other findings are noise.
pub fn drop_outranked(findings: &mut Vec<Finding>) {
    let suite_and_case = |finding: &Finding| {
        (
            finding.subject.suite.as_deref().map(str::to_owned),
            finding.subject.case.clone(),
        )
    };
    let drifted: BTreeSet<(Option<String>, Option<String>)> = findings
        .iter()
        .filter(|finding| finding.rule == RuleId::GraderVersionDrift)
        .map(suite_and_case)
        .collect();
    findings.retain(|finding| {
        finding.rule == RuleId::GraderVersionDrift
            || finding.subject.case.is_none()
            || !drifted.contains(&suite_and_case(finding))
    });
}
