//! `evalock check`: judge one snapshot against its lock and, optionally, a base revision.

use super::staged::{self, StagedTriage};
use crate::cases::CaseDetail;
use crate::commands::check::families::check_project;
use crate::commands::project::{LoadOptions, Project};
use crate::error::{Error, Result};
use crate::finding::{Finding, Subject};
use crate::graders::GraderProgram;
use crate::report::Report;
use crate::rules::RuleId;
use crate::source::{self, trailer_values, ContentSource, GitRepo, RecordingSource, SourceSpec};
use gix::ObjectId;
use std::path::PathBuf;

pub mod families;
mod memo;

pub use memo::CACHE_DIR;

#[derive(Debug, Clone)]
pub struct CheckOptions {
    pub project_root: PathBuf,
    pub source: SourceSpec,
    /// A revision whose merge base with the judged content supplies the base-revision rules.
    pub base: Option<String>,
    /// Use and update the memo in `.evalock/cache` (same verdict either way).
    pub cache: bool,
    /// Whether the report must list every subject judged (the JSON, JUnit and Markdown
    /// reports print them; gathering 200,000 costs a cold check a tenth of its time).
    pub subjects: bool,
}

/// A finished check, and how its verdict was reached (`check --verbose` says).
#[derive(Debug)]
pub struct Checked {
    pub report: Report,
    pub shortcut: Shortcut,
}

/// Which way a check reached its verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shortcut {
    /// Every rule was applied to the content.
    None,
    /// No staged path is one evalock reads: passed on the index's list of paths.
    UntouchedCommit,
    /// Every file the last check read is unchanged: its report was reused.
    Memo,
}

impl Shortcut {
    /// What `--verbose` prints.
    pub fn describe(self) -> &'static str {
        match self {
            Shortcut::None => "every rule was applied to the content",
            Shortcut::UntouchedCommit => "nothing staged is a file evalock reads: passed on the index's list of paths, without reading the lock",
            Shortcut::Memo => "every file the last check read is unchanged: its report is reused from .evalock/cache",
        }
    }
}

/// The base revision to compare with, resolved to a commit.
struct Base {
    repo: GitRepo,
    commit: ObjectId,
    description: String,
    /// `Rebaseline-Reason:` trailers of the commits between the base and HEAD.
    rebaseline_reasons: Vec<String>,
}

pub fn check(options: &CheckOptions) -> Result<Report> {
    check_explained(options).map(|checked| checked.report)
}

/// [`check`], saying which way the verdict was reached.
pub fn check_explained(options: &CheckOptions) -> Result<Checked> {
    let content: Box<dyn ContentSource> = match (&options.source, &options.base) {
        // The pre-commit path: a commit that touches nothing evalock tracks is answered
        // without loading the lock.
        (SourceSpec::Index, None) => match staged::triage(&options.project_root)? {
            StagedTriage::Untouched(report) => {
                return Ok(Checked {
                    report,
                    shortcut: Shortcut::UntouchedCommit,
                })
            }
            StagedTriage::Judge(index) => index,
        },
        _ => source::open(&options.project_root, &options.source)?,
    };
    let mut checked = check_content(options, content.as_ref())?;
    if options.source == SourceSpec::Index {
        staged::name_unstaged_files(
            &mut checked.report.findings,
            content.as_ref(),
            &options.project_root,
        );
    }
    Ok(checked)
}

fn check_content(options: &CheckOptions, content: &dyn ContentSource) -> Result<Checked> {
    let base = match &options.base {
        Some(base) => Some(resolve_base(options, base)?),
        None => None,
    };
    let kind = match options.source {
        SourceSpec::Worktree => "worktree",
        SourceSpec::Index | SourceSpec::Revision(_) => "git",
    };
    let memo = options
        .cache
        .then(|| memo::Memo::open(&options.project_root, kind))
        .flatten();
    let Some(memo) = memo else {
        let (report, _) = judge(options, content, base.as_ref())?;
        return Ok(Checked {
            report,
            shortcut: Shortcut::None,
        });
    };
    let question = question(options, content, base.as_ref());
    if let Some(report) = memo.recall(&question, content) {
        return Ok(Checked {
            report,
            shortcut: Shortcut::Memo,
        });
    }
    let recording = RecordingSource::new(content);
    let (report, ran_commands) = judge(options, &recording, base.as_ref())?;
    // Command graders were probed: their behaviour is not content evalock read.
    if !ran_commands {
        memo.remember(&question, &recording, &report);
    }
    Ok(Checked {
        report,
        shortcut: Shortcut::None,
    })
}

/// Everything besides the content read that the report depends on. The source's
/// description is part of the report (`HEAD (1a2b3c4)`): a commit with the same content
/// under another id must not be reported under the old one.
fn question(options: &CheckOptions, content: &dyn ContentSource, base: Option<&Base>) -> String {
    let (commit, reasons) = match base {
        Some(base) => (
            base.commit.to_string(),
            base.rebaseline_reasons.join("\u{1f}"),
        ),
        None => (String::new(), String::new()),
    };
    format!(
        "check\nsource={:?}\ndescription={}\nbase={commit}\nreasons={reasons}\nci={}\nsubjects={}",
        options.source,
        content.describe(),
        crate::is_ci(),
        options.subjects,
    )
}

/// Every rule applied to the content (and the base); also whether command graders ran.
fn judge(
    options: &CheckOptions,
    content: &dyn ContentSource,
    base: Option<&Base>,
) -> Result<(Report, bool)> {
    let project = Project::load_summary(content)?.with_workdir(options.project_root.clone());
    let mut unreadable_base = None;
    let base_project = match base {
        Some(base) => {
            let snapshot = base
                .repo
                .commit_source(base.commit, base.description.clone())?;
            match load_base(&snapshot) {
                Ok(base_project) => base_project,
                Err(error) => {
                    unreadable_base = Some(base_unreadable(base, error)?);
                    None
                }
            }
        }
        None => None,
    };
    let mut project = project;
    if let Some(base) = base {
        project.rebaseline_reasons = base.rebaseline_reasons.clone();
    }
    let ran_commands = project.suites.iter().any(|suite| {
        matches!(
            project.grader_for(&suite.name).program,
            GraderProgram::Command(_)
        )
    });
    let mut findings = check_project(&project, base_project.as_ref());
    findings.extend(unreadable_base);
    if let (Some(base), Some(base_project)) = (base, base_project.as_ref()) {
        findings.extend(unreadable_base_baselines(base, base_project));
    }
    if options.source == SourceSpec::Index {
        staged::add_staging_step(&mut findings);
    }
    project.relate_prompts(&mut findings);
    let report = Report::new(
        "check",
        project.source.clone(),
        base.map(|base| base.description.clone()),
        findings,
    );
    let report = match options.subjects {
        true => report.with_subjects(project.subjects()),
        false => report,
    };
    Ok((report, ran_commands))
}

/// Resolves the merge base of `base` and the judged content (HEAD for the working tree
/// and the index), so commits that landed on the base branch after the branch point are
/// not blamed on this change.
fn resolve_base(options: &CheckOptions, base: &str) -> Result<Base> {
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
    Ok(Base {
        repo,
        commit: merge_base,
        description,
        rebaseline_reasons,
    })
}

/// EL108 for a base whose own files cannot be read (a malformed `evalock.toml`, a lock
/// committed with conflict markers): the change is judged on its own rather than refused,
/// or the change that repairs the base could never pass. Any other error (git, I/O) stays
/// an error.
fn base_unreadable(base: &Base, error: Error) -> Result<Finding> {
    if !matches!(error, Error::Malformed { .. } | Error::InvalidPath { .. }) {
        return Err(error);
    }
    Ok(Finding::new(
        RuleId::BaseUnreadable,
        Subject::default(),
        format!(
            "the base revision {} cannot be read ({error}): nothing was compared with it",
            base.description
        ),
    ))
}

/// EL108 for each baseline file of the base that cannot be read (malformed, a directory
/// or a symlink in its place): its entries are compared with nothing, so say so rather
/// than pass silently.
fn unreadable_base_baselines<'a>(
    base: &'a Base,
    base_project: &'a Project,
) -> impl Iterator<Item = Finding> + 'a {
    base_project
        .baselines
        .iter()
        .filter(|(_, baseline)| baseline.is_unreadable())
        .map(move |(suite, baseline)| {
            Finding::new(
                RuleId::BaseUnreadable,
                Subject::suite(suite),
                format!(
                    "baseline {} of suite `{suite}` in the base revision {} cannot be read: its entries were compared with nothing",
                    baseline.path, base.description
                ),
            )
        })
}

/// The project at the base commit; `None` when it predates evalock.
fn load_base(snapshot: &dyn ContentSource) -> Result<Option<Project>> {
    let options = LoadOptions {
        detail: CaseDetail::Summary,
        ..LoadOptions::default()
    };
    Project::load_with_options(snapshot, &options)
}
