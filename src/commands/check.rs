//! `evalock check`: judge one snapshot against its lock and, optionally, a base revision.

use super::staged::{self, StagedTriage};
use crate::checks::check_project;
use crate::error::Result;
use crate::model::Project;
use crate::report::Report;
use crate::source::{self, trailer_values, ContentSource, GitRepo, SourceSpec};
use std::path::PathBuf;

#[derive(Debug, Clone)]
pub struct CheckOptions {
    pub project_root: PathBuf,
    pub source: SourceSpec,
    /// A revision whose merge base with the judged content supplies the base-revision rules.
    pub base: Option<String>,
}

pub fn check(options: &CheckOptions) -> Result<Report> {
    let content: Box<dyn ContentSource> = match (&options.source, &options.base) {
        // The pre-commit path: a commit that touches nothing evalock tracks is answered
        // without loading the lock.
        (SourceSpec::Index, None) => match staged::triage(&options.project_root)? {
            StagedTriage::Untouched(report) => return Ok(report),
            StagedTriage::Judge(index) => index,
        },
        _ => source::open(&options.project_root, &options.source)?,
    };
    let mut project = Project::load(content.as_ref())?.with_workdir(options.project_root.clone());
    let base_project = match &options.base {
        Some(base) => load_base(options, base)?,
        None => None,
    };
    if let Some((_, _, reasons)) = &base_project {
        project.rebaseline_reasons = reasons.clone();
    }
    let base_project = base_project.map(|(project, description, _)| (project, description));
    let mut findings = check_project(&project, base_project.as_ref().map(|(project, _)| project));
    if options.source == SourceSpec::Index {
        staged::add_staging_step(&mut findings);
    }
    let report = Report::new(
        "check",
        project.source.clone(),
        base_project.map(|(_, description)| description),
        findings,
    );
    Ok(report.with_subjects(project.subjects()))
}

/// Loads the project at the merge base of `base` and the judged content (HEAD for the
/// working tree and the index), so commits that landed on the base branch after the
/// branch point are not blamed on this change.
fn load_base(options: &CheckOptions, base: &str) -> Result<Option<(Project, String, Vec<String>)>> {
    let repo = GitRepo::discover(&options.project_root)?;
    let base_commit = repo.resolve_commit(base)?;
    let head_revision = match &options.source {
        SourceSpec::Revision(revision) => revision.as_str(),
        SourceSpec::Worktree | SourceSpec::Index => "HEAD",
    };
    let head = repo.resolve_commit(head_revision).ok();
    let merge_base = match head {
        Some(head) => repo.merge_base(base_commit, head)?.unwrap_or(base_commit),
        None => base_commit,
    };
    // Re-recorded baselines may carry their reason in a `Rebaseline-Reason:` trailer.
    let rebaseline_reasons = match head {
        Some(head) => repo
            .commit_messages(merge_base, head)?
            .iter()
            .flat_map(|message| trailer_values(message, "Rebaseline-Reason"))
            .collect(),
        None => Vec::new(),
    };
    let short = &merge_base.to_string()[..7];
    let description = if merge_base == base_commit {
        format!("{base} ({short})")
    } else {
        format!("merge base of {base} ({short})")
    };
    let snapshot = repo.commit_source(merge_base, description.clone())?;
    Ok(Project::load_if_configured(&snapshot)?
        .map(|project| (project, description, rebaseline_reasons)))
}
