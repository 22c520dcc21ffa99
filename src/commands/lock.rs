//! `evalock lock [--check]`: (re)write `evalock.lock` from the working tree, atomically.

use crate::checks::{cases, check_project};
use crate::error::{Error, Result};
use crate::finding::{Finding, Location, Subject};
use crate::fs_util::write_atomic;
use crate::model::{CaseDetail, LoadOptions, Lock, Project, CONFIG_FILE, LOCK_FILE};
use crate::report::Report;
use crate::rules::{RuleId, Severity};
use crate::source::WorktreeSource;
use std::path::Path;

/// What `lock` did.
#[derive(Debug)]
pub struct LockOutcome {
    pub report: Report,
    /// The lock file was (re)written.
    pub written: bool,
    /// The lock on disk differed from what the sources produce.
    pub changed: bool,
    /// After a successful `lock`: what `evalock check` still refuses, which no lock can
    /// fix (a missing prompt, a file a skill cannot pin, …). Listed, so that "wrote
    /// evalock.lock" is never read as "the project is clean".
    pub remaining: Vec<Finding>,
}

pub fn lock(project_root: &Path, check_only: bool, ci: bool) -> Result<LockOutcome> {
    if ci && !check_only {
        return Err(Error::Refused(format!(
            "refused: CI is set, and CI never writes {LOCK_FILE}. Run `evalock lock` locally and commit the result, or use `evalock lock --check` to verify"
        )));
    }
    let source = WorktreeSource::new(project_root);
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
    let project = if check_only {
        Project::load_summary(&source, None)?
    } else {
        let options = LoadOptions {
            read_lock: false,
            detail: CaseDetail::Summary,
            case_cache: None,
        };
        Project::load_with_options(&source, &options)?.ok_or_else(|| {
            Error::Usage(format!(
                "no {CONFIG_FILE} in the working tree: run `evalock init` to create one"
            ))
        })?
    };
    let mut blocking = blocking_findings(&project);
    if let Some(pinned) = existing
        .as_deref()
        .and_then(|bytes| Lock::parse(LOCK_FILE, bytes).ok())
    {
        blocking.extend(crate::checks::graders::changed_without_version_bump(
            &project, &pinned,
        ));
    }
    let new_lock = project.to_lock();
    let rendered = new_lock.render();
    let changed = existing.as_deref() != Some(rendered.as_bytes());
    if !blocking.is_empty() {
        let report = Report::new("lock", project.source.clone(), None, blocking);
        return Ok(LockOutcome {
            report,
            written: false,
            changed,
            remaining: Vec::new(),
        });
    }
    if check_only {
        let mut findings = check_project(&project, None);
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
        let report = Report::new("lock --check", project.source.clone(), None, findings)
            .with_subjects(project.subjects());
        return Ok(LockOutcome {
            report,
            written: false,
            changed,
            remaining: Vec::new(),
        });
    }
    if changed {
        debug_assert!(Lock::parse(LOCK_FILE, rendered.as_bytes()).is_ok());
        write_atomic(&lock_path, rendered.as_bytes())?;
    }
    let source_description = project.source.clone();
    let mut locked = project;
    locked.replace_lock(Some(new_lock));
    let remaining = check_project(&locked, None)
        .into_iter()
        .filter(|finding| finding.severity == Severity::Refuse)
        .collect();
    Ok(LockOutcome {
        report: Report::new("lock", source_description, None, Vec::new()),
        written: changed,
        changed,
        remaining,
    })
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
