//! `evalock lock [--check]`: (re)write `evalock.lock` from the working tree, atomically.

use crate::cases::rules as cases;
use crate::cases::CaseDetail;
use crate::commands::check::families::check_project;
use crate::commands::project::{LoadOptions, Project};
use crate::error::{Error, Result};
use crate::finding::{Finding, Location, Subject};
use crate::project::config::CONFIG_FILE;
use crate::project::lock::{Lock, LOCK_FILE};
use crate::report::Report;
use crate::rules::{RuleId, Severity};
use crate::source::atomic::write_atomic;
use crate::source::{ContentSource, GitRepo, WorktreeSource};
use std::path::Path;

/// What `lock` did.
#[derive(Debug)]
pub struct LockOutcome {
    pub report: Report,
    /// The lock file was (re)written.
    pub written: bool,
    /// The lock on disk differed from what the sources produce.
    pub changed: bool,
    /// The lock on disk is now what the sources produce (written, or already current).
    pub pinned: bool,
    /// After a successful `lock`: what `evalock check` still refuses, which no lock can
    /// fix (a missing prompt, a file a skill cannot pin, …). Listed, so that "wrote
    /// evalock.lock" is never read as "the project is clean"; not the report's findings,
    /// whose exit code says whether the lock was written (`check` is the gate).
    pub remaining: Vec<Finding>,
}

pub fn lock(project_root: &Path, check_only: bool, ci: bool) -> Result<LockOutcome> {
    let source = WorktreeSource::new(project_root);
    if ci && !check_only {
        return Ok(refused_in_ci(&source));
    }
    let lock_path = project_root.join(LOCK_FILE);
    if std::fs::symlink_metadata(&lock_path).is_ok_and(|metadata| metadata.is_symlink()) {
        return Err(Error::malformed(
            LOCK_FILE,
            "is a symlink, and evalock never follows symlinks: replace it with the file itself",
        ));
    }
    let existing = match std::fs::read(&lock_path) {
        Ok(bytes) => Some(bytes),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => None,
        Err(error) => return Err(Error::io(LOCK_FILE, error)),
    };
    let project = load_project(&source, check_only)?;
    let mut blocking = blocking_findings(&project);
    // The lock pins the graders: a source changed without a version bump is not re-pinned.
    if let Some(pinned) = grader_pins(&source, project_root) {
        blocking.extend(crate::graders::rules::changed_without_version_bump(
            &project.graders,
            &pinned,
        ));
    }
    let mut new_lock = project.to_lock();
    pin_calibrations(&mut new_lock, &project, &source, project_root)?;
    let rendered = new_lock.render();
    let changed = existing.as_deref() != Some(rendered.as_bytes());
    if !blocking.is_empty() {
        let report = Report::new("lock", project.source.clone(), None, blocking);
        return Ok(not_written(report, changed));
    }
    if check_only {
        return Ok(not_written(lock_check_report(&project, changed), changed));
    }
    if changed {
        write_atomic(&lock_path, rendered.as_bytes())?;
    }
    Ok(pinned_outcome(project, new_lock, changed, &source))
}

/// Each grader that names a labels file, measured against it and pinned with the labels'
/// digest and its version.
fn pin_calibrations(
    lock: &mut Lock,
    project: &Project,
    source: &WorktreeSource,
    project_root: &Path,
) -> Result<()> {
    for (id, grader) in &project.config.graders {
        let (Some(labels), Some(entry)) = (&grader.labels, lock.graders.get_mut(id)) else {
            continue;
        };
        let counts = crate::commands::calibrate::measure_labels(source, project_root, id, labels)?;
        let Some(digest) = file_digest(source, labels) else {
            continue;
        };
        entry.calibration = Some(crate::project::lock::CalibrationLock {
            labels: digest,
            version: grader.version.0.clone(),
            tp: counts.tp,
            fp: counts.fp,
            tn: counts.tn,
            fn_: counts.fn_,
        });
    }
    Ok(())
}

/// The project as `lock` needs it: `--check` compares with the lock on disk, so it reads
/// it; a lock about to be rewritten is not read.
fn load_project(source: &WorktreeSource, check_only: bool) -> Result<Project> {
    if check_only {
        return Project::load_summary(source);
    }
    let options = LoadOptions {
        read_lock: false,
        detail: CaseDetail::Summary,
        ..Default::default()
    };
    Project::load_with_options(source, &options)?.ok_or_else(|| {
        Error::Usage(format!(
            "no {CONFIG_FILE} in the working tree: run `evalock init` to create one"
        ))
    })
}

/// `lock --check`: what `check` finds, or, when that is nothing, that the lock on disk
/// is not what `lock` would write.
fn lock_check_report(project: &Project, changed: bool) -> Report {
    let mut findings = check_project(project, None);
    if changed && findings.is_empty() {
        findings.push(
            Finding::new(
                RuleId::CaseUnlocked,
                Subject::default(),
                format!("{LOCK_FILE} is not what `evalock lock` writes"),
            )
            .at(Location::file(LOCK_FILE))
            .help("run `evalock lock` and commit the result"),
        );
    }
    Report::new("lock --check", project.source.clone(), None, findings)
        .with_subjects(project.subjects())
}

/// After the lock on disk is what the sources produce: what `check` still refuses.
fn pinned_outcome(
    project: Project,
    new_lock: Lock,
    changed: bool,
    source: &dyn ContentSource,
) -> LockOutcome {
    let source_description = project.source.clone();
    let mut locked = project;
    locked.replace_lock(Some(new_lock));
    let mut remaining = check_project(&locked, None);
    crate::gate::apply(&mut remaining, &locked.config, None, &[], &|path| {
        file_digest(source, path)
    });
    remaining.retain(|finding| finding.severity >= Severity::Error);
    LockOutcome {
        report: Report::new("lock", source_description, None, Vec::new()),
        written: changed,
        changed,
        pinned: true,
        remaining,
    }
}

/// The digest of a project file's bytes, as `[debt]` records it.
pub fn file_digest(source: &dyn ContentSource, path: &str) -> Option<crate::digest::Digest> {
    crate::source::read_regular_file(source, path)
        .ok()
        .flatten()
        .map(|bytes| crate::digest::Digest::of_bytes(&bytes))
}

/// An outcome in which the lock on disk was left as it was.
fn not_written(report: Report, changed: bool) -> LockOutcome {
    LockOutcome {
        report,
        written: false,
        changed,
        pinned: false,
        remaining: Vec::new(),
    }
}

/// EL403: CI never writes the lock. A report like any other, so `--format` is honoured.
fn refused_in_ci(source: &WorktreeSource) -> LockOutcome {
    let finding = Finding::new(
        RuleId::BaselineWrittenInCi,
        Subject::default(),
        format!("refused: CI is set, and CI never writes {LOCK_FILE}; nothing was written"),
    )
    .at(Location::file(LOCK_FILE))
    .help(
        "run `evalock lock` locally and commit the result, or use `evalock lock --check` to verify",
    );
    not_written(
        Report::new("lock", source.describe(), None, vec![finding]),
        false,
    )
}

/// The lock whose grader pins a new lock must respect: the one on disk, or, when it is
/// missing or cannot be read (conflict markers after a merge, a hand edit), the one
/// committed at HEAD. A lock that cannot be read is replaced, but regenerating it must not
/// re-pin a grader changed without a version bump, and neither may deleting it first.
fn grader_pins(source: &WorktreeSource, project_root: &Path) -> Option<Lock> {
    if let Ok(Some(lock)) = Lock::read(source, LOCK_FILE) {
        return Some(lock);
    }
    let repo = GitRepo::discover(project_root).ok()?;
    let committed = repo.revision_source("HEAD").ok()?;
    Lock::read(&committed, LOCK_FILE).ok().flatten()
}

/// Cases that cannot be frozen: a lock written over them would pin garbage. (A warning,
/// such as a number finer than a double, does not stop the lock.)
fn blocking_findings(project: &Project) -> Vec<Finding> {
    let mut findings = Vec::new();
    for suite in &project.suites {
        findings.extend(cases::malformed_cases(suite));
        findings.extend(cases::duplicate_case_ids(suite));
    }
    findings.retain(|finding| finding.severity != Severity::Warn);
    crate::finding::sort_findings(&mut findings);
    findings
}
