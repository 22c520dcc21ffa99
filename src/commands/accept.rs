//! `evalock accept --reason TEXT`: record the passing cases of the last run as last-good
//! baselines, atomically. Refused when CI is set: baselines are frozen by people.

use crate::baselines::rules::{context_changes, current_context};
use crate::baselines::{BaselineEntry, BaselineFile, BaselineState};
use crate::commands::project::Project;
use crate::error::{Error, Result};
use crate::finding::{Finding, Location, Subject};
use crate::graders::rules::{active_cases, graders_unversioned};
use crate::project::config::CONFIG_FILE;
use crate::report::Report;
use crate::rules::{RuleId, Severity};
use crate::run::results::{CaseResult, Results, Status};
use crate::source::atomic::write_all_atomic;
use crate::source::WorktreeSource;
use std::collections::BTreeSet;
use std::path::PathBuf;

mod verify;

#[derive(Debug, Clone)]
pub struct AcceptOptions {
    pub project_root: PathBuf,
    pub reason: String,
    /// Suites to accept; empty accepts every suite of the results that has a baseline.
    pub suites: Vec<String>,
    /// Cases to accept; empty accepts every passing case of the selected suites.
    pub cases: Vec<String>,
    /// The results file, relative to the project root.
    pub from: PathBuf,
    /// Also record failing cases, as known failures (`passed: false`).
    pub include_failing: bool,
    pub ci: bool,
}

/// What accept wrote for one suite.
#[derive(Debug, Clone)]
pub struct AcceptedSuite {
    pub suite: String,
    pub path: String,
    pub recorded: Vec<String>,
    pub unchanged: usize,
    pub dropped: Vec<String>,
    /// The suite's noise floor (minimum detectable effect, in points), when this accept
    /// recorded a new one.
    pub noise_floor: Option<f64>,
}

#[derive(Debug)]
pub struct AcceptOutcome {
    pub report: Report,
    pub suites: Vec<AcceptedSuite>,
    /// `suite/case STATUS` of cases left out because they do not pass.
    pub skipped: Vec<String>,
    /// Suites of the results that evalock.toml no longer has (renamed or removed since
    /// the run): nothing of theirs can be recorded.
    pub gone_suites: Vec<String>,
}

/// Serialises concurrent `accept`s of one project, relative to its root.
pub const ACCEPT_LOCK: &str = ".evalock/accept.lock";

pub fn accept(options: &AcceptOptions) -> Result<AcceptOutcome> {
    let source = WorktreeSource::new(&options.project_root);
    if options.ci {
        // Refused before the lock: CI writes nothing, not even the lock file.
        return Ok(refused_in_ci(&Project::load(&source)?, &options.suites));
    }
    if options.reason.trim().is_empty() {
        return Err(Error::Usage(
            "--reason must say why these completions are the new last-good ones".into(),
        ));
    }
    // accept reads each baseline, merges the run into it and writes it back. Atomic
    // writes alone keep every file whole, but two accepts at once would both read the
    // old files: the later rename silently drops what the other recorded, and with
    // several suites the files could come from different writers. So the whole
    // read-merge-write holds an exclusive lock; the second accept waits, then merges into
    // what the first wrote.
    let _lock = crate::source::atomic::lock_exclusive(&options.project_root.join(ACCEPT_LOCK))?;
    let project = Project::load(&source)?;
    if project.suites.is_empty() {
        return Err(super::no_suite_to("accept"));
    }
    let display = options.from.display().to_string();
    let results = Results::read(&options.project_root.join(&options.from), &display)?;
    let suites = selected_suites(&project, &results, &options.suites)?;
    refuse_unversioned_graders(&project, &suites)?;
    verify::refuse_other_version(&results, &display)?;
    verify::refuse_other_completer(&project, &options.project_root, &results, &suites, &display)?;
    for case_id in &options.cases {
        if !results
            .cases
            .iter()
            .any(|case| &case.case_id == case_id && suites.contains(&case.suite))
        {
            return Err(Error::Usage(format!(
                "case `{case_id}` is not in {display} for the selected suites"
            )));
        }
    }
    let mut writes = Vec::new();
    let mut accepted = Vec::new();
    let mut skipped = Vec::new();
    for suite in &suites {
        let (file, summary) =
            accept_suite(&project, &results, suite, options, &display, &mut skipped)?;
        if !summary.recorded.is_empty()
            || !summary.dropped.is_empty()
            || summary.noise_floor.is_some()
        {
            writes.push((
                destination(&options.project_root, &summary.path),
                file.render().into_bytes(),
            ));
        }
        accepted.push(summary);
    }
    write_all_atomic(&writes)?;
    let gone_suites = results
        .suites
        .iter()
        .filter(|suite| project.config.suite(suite).is_none())
        .cloned()
        .collect();
    Ok(AcceptOutcome {
        report: Report::new("accept", project.source.clone(), None, Vec::new()),
        suites: accepted,
        skipped,
        gone_suites,
    })
}

fn refused_in_ci(project: &Project, suites: &[String]) -> AcceptOutcome {
    let paths: Vec<String> = project
        .baselines
        .iter()
        .filter(|(suite, _)| suites.is_empty() || suites.contains(suite))
        .map(|(_, baseline)| baseline.path.clone())
        .collect();
    let location = paths
        .first()
        .cloned()
        .unwrap_or_else(|| CONFIG_FILE.to_owned());
    let finding = Finding::new(
        RuleId::BaselineWrittenInCi,
        Subject::default(),
        format!(
            "refused: CI is set, and CI never writes baselines; nothing was written ({})",
            if paths.is_empty() { "no baseline files".to_owned() } else { paths.join(", ") }
        ),
    )
    .at(Location::file(location))
    .help(
        "run `evalock run` and `evalock accept --reason \"…\"` locally, read the diff, and commit the baseline files",
    );
    AcceptOutcome {
        report: Report::new("accept", project.source.clone(), None, vec![finding]),
        suites: Vec::new(),
        skipped: Vec::new(),
        gone_suites: Vec::new(),
    }
}

/// Verdicts of a grader that changed under its pinned version are no last-good answers:
/// recording them would carry the unversioned change into the baselines.
fn refuse_unversioned_graders(project: &Project, suites: &[String]) -> Result<()> {
    let graders: BTreeSet<String> = suites
        .iter()
        .map(|suite| project.grader_for(suite).id)
        .collect();
    let refused = graders_unversioned(&project.graders_side(), None)
        .into_iter()
        .find(|finding| {
            finding.severity == Severity::Refuse
                && finding
                    .subject
                    .grader
                    .as_ref()
                    .is_some_and(|id| graders.contains(id))
        });
    match refused {
        Some(finding) => Err(Error::Refused(format!(
            "refused: {}; nothing was written: {}",
            finding.message, finding.help
        ))),
        None => Ok(()),
    }
}

/// Where a baseline file is written, as the user would name it (`evals/…` from the root).
fn destination(project_root: &std::path::Path, path: &str) -> PathBuf {
    if project_root == std::path::Path::new(".") {
        PathBuf::from(path)
    } else {
        project_root.join(path)
    }
}

/// Raised before anything is written: accept writes every suite's file or none.
fn directory_in_the_way(path: &str) -> Error {
    Error::malformed(
        path,
        "a directory is in the way of this suite's baseline file: move or remove it, then accept again; nothing was written",
    )
}

fn symlink_in_the_way(path: &str) -> Error {
    Error::malformed(
        path,
        "a symlink stands where this suite's baseline file goes, and evalock never follows symlinks: remove it, then accept again; nothing was written",
    )
}

/// The suites to accept: those named, else every suite of the results with a baseline.
fn selected_suites(project: &Project, results: &Results, names: &[String]) -> Result<Vec<String>> {
    if names.is_empty() {
        return Ok(results
            .suites
            .iter()
            .filter(|suite| project.baselines.contains_key(*suite))
            .cloned()
            .collect());
    }
    let mut selected = Vec::new();
    for name in names {
        if project.config.suite(name).is_none() {
            return Err(Error::Usage(format!("no suite `{name}` in evalock.toml")));
        }
        if !project.baselines.contains_key(name) {
            return Err(Error::Usage(format!(
                "suite `{name}` has no `baseline` file: add `baseline = \"evals/{name}.baseline.json\"` to its [[suite]] table"
            )));
        }
        if !results.suites.contains(name) {
            return Err(Error::Usage(format!(
                "suite `{name}` did not run in these results: run `evalock run --suite {name}`"
            )));
        }
        // `--suite S --suite S` accepts S once, as `run` runs it once.
        if !selected.contains(name) {
            selected.push(name.clone());
        }
    }
    Ok(selected)
}

fn accept_suite(
    project: &Project,
    results: &Results,
    suite_name: &str,
    options: &AcceptOptions,
    display: &str,
    skipped: &mut Vec<String>,
) -> Result<(BaselineFile, AcceptedSuite)> {
    let baseline = &project.baselines[suite_name];
    let mut file = match &baseline.state {
        BaselineState::Parsed { file, .. } => file.clone(),
        BaselineState::Absent => BaselineFile::new(suite_name),
        BaselineState::Malformed {
            line,
            column,
            message,
        } => {
            return Err(Error::malformed(
                format!("{}:{line}:{column}", baseline.path),
                format!(
                    "{message}; restore the committed file (`git restore --source=HEAD --staged --worktree -- {}`) or delete it, then accept again",
                    baseline.path
                ),
            ))
        }
        BaselineState::Directory => return Err(directory_in_the_way(&baseline.path)),
        BaselineState::Symlink => return Err(symlink_in_the_way(&baseline.path)),
    };
    let mut summary = AcceptedSuite {
        suite: suite_name.to_owned(),
        path: baseline.path.clone(),
        recorded: Vec::new(),
        unchanged: 0,
        dropped: Vec::new(),
        noise_floor: None,
    };
    for result in results.cases.iter().filter(|case| case.suite == suite_name) {
        if !options.cases.is_empty() && !options.cases.contains(&result.case_id) {
            continue;
        }
        let known_failure =
            options.include_failing && matches!(result.status, Status::Fail | Status::Regressed);
        if !result.status.is_passing() && !known_failure {
            if !options.cases.is_empty() {
                return Err(Error::Usage(format!(
                    "case `{}` is {} in {display}: only passing cases are accepted as last-good",
                    result.case_id, result.status
                )));
            }
            skipped.push(format!("{suite_name}/{} {}", result.case_id, result.status));
            continue;
        }
        let entry = entry_from_result(
            project,
            suite_name,
            result,
            &results.commit,
            &options.reason,
            display,
        )?;
        let unchanged = file.entries.get(&result.case_id).is_some_and(|existing| {
            existing.digest == entry.digest
                && existing.context == entry.context
                && existing.passed == entry.passed
        });
        if unchanged {
            summary.unchanged += 1;
        } else {
            file.entries.insert(result.case_id.clone(), entry);
            summary.recorded.push(result.case_id.clone());
        }
    }
    // A run repeated with `--repeat` measured the suite's noise floor: it is recorded
    // with the baselines; a run that did not measure it keeps the recorded one.
    if let Some(noise) = results.noise.get(suite_name) {
        if file.noise.as_ref() != Some(noise) {
            summary.noise_floor = Some(noise.mde);
        }
        file.noise = Some(*noise);
    }
    if options.cases.is_empty() {
        let suite = project.suite(suite_name);
        let active: BTreeSet<&str> = suite
            .map(|suite| active_cases(suite).map(|case| &*case.id).collect())
            .unwrap_or_default();
        let orphans: Vec<String> = file
            .entries
            .keys()
            .filter(|id| !active.contains(id.as_str()))
            .cloned()
            .collect();
        for id in orphans {
            file.entries.remove(&id);
            summary.dropped.push(id);
        }
    }
    Ok((file, summary))
}

/// A baseline entry from a case's result, after checking that the run still describes
/// the project as it is now.
fn entry_from_result(
    project: &Project,
    suite_name: &str,
    result: &CaseResult,
    commit: &Option<String>,
    reason: &str,
    display: &str,
) -> Result<BaselineEntry> {
    let stale = |why: String| {
        Error::Refused(format!(
            "refused: the results in {display} are stale for case `{}`: {why}; run `evalock run --suite {suite_name}` again",
            result.case_id
        ))
    };
    let suite = project
        .suite(suite_name)
        .ok_or_else(|| stale("its suite is gone".into()))?;
    let case = active_cases(suite)
        .find(|case| *case.id == *result.case_id)
        .ok_or_else(|| stale("the case is gone or retired".into()))?;
    let changes = context_changes(
        &result.context,
        &current_context(&project.baselines_side(), suite, case),
    );
    if !changes.is_empty() {
        return Err(stale(format!("{} moved since the run", changes.join(", "))));
    }
    let (completion, digest) =
        verify::verified_completion(project, suite_name, case, result, display)?;
    Ok(BaselineEntry {
        digest,
        passed: result.status.is_passing(),
        context: result.context.clone(),
        commit: commit.clone(),
        reason: reason.trim().to_owned(),
        failure: match result.status.is_passing() {
            true => Vec::new(),
            false => result.reasons.clone(),
        },
        duration_ms: Some(result.duration_ms),
        assertions: result.assertions.clone(),
        completion: completion.to_owned(),
    })
}
