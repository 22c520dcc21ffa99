//! `evalock check`: judge one snapshot against its lock and, optionally, a base revision.

use super::staged::{self, StagedTriage};
use crate::cases::load::ParsedFiles;
use crate::cases::CaseDetail;
use crate::commands::check::families::check_project_reading_baselines;
use crate::commands::memo::Memo;
use crate::commands::project::{LoadOptions, Project};
use crate::error::{Error, Result};
use crate::finding::{Finding, Subject};
use crate::graders::GraderProgram;
use crate::project::lock::Lock;
use crate::report::Report;
use crate::rules::RuleId;
use crate::skills::SkillDetail;
use crate::source::{
    self, trailer_values, ContentSource, GitRepo, GitSnapshot, RecordingSource, SameObjects,
    SourceSpec,
};
use gix::ObjectId;
use std::collections::BTreeSet;
use std::path::PathBuf;

pub mod families;

pub use crate::commands::memo::CACHE_DIR;

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
    /// The commits between the base and HEAD: short id and message.
    commits: Vec<(String, String)>,
    /// The same commits, for judging EL407 one commit at a time.
    range: Vec<crate::source::CommitInfo>,
    /// HEAD of the judged content, when it has one.
    head: Option<ObjectId>,
}

pub fn check(options: &CheckOptions) -> Result<Report> {
    check_explained(options).map(|checked| checked.report)
}

/// [`check`], saying which way the verdict was reached.
pub fn check_explained(options: &CheckOptions) -> Result<Checked> {
    let content: Box<dyn ContentSource> = match (&options.source, &options.base) {
        // The pre-commit path: a commit that touches nothing evalock tracks is answered
        // without loading the lock.
        (SourceSpec::Index, None) => match staged::triage(&options.project_root, options.cache)? {
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
        if options.base.is_none() {
            staged::defer_rerecording(
                &mut checked.report,
                content.as_ref(),
                &options.project_root,
            )?;
        }
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
        .then(|| Memo::open(&options.project_root, &format!("check-{kind}")))
        .flatten();
    let Some(memo) = memo else {
        let (report, _) = judge(options, content, base.as_ref())?;
        return Ok(Checked {
            report,
            shortcut: Shortcut::None,
        });
    };
    let question = question(options, content, base.as_ref());
    let remembered = memo
        .recall(&question, content)
        .and_then(|text| crate::report::json::parse("memo", text.as_bytes()).ok());
    if let Some(report) = remembered {
        return Ok(Checked {
            report,
            shortcut: Shortcut::Memo,
        });
    }
    let recording = RecordingSource::new(content);
    let (report, ran_commands) = judge(options, &recording, base.as_ref())?;
    // Command graders were probed: their behaviour is not content evalock read.
    if !ran_commands {
        memo.remember(&question, &recording, &crate::report::json::render(&report));
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
            base.commits
                .iter()
                .map(|(id, message)| format!("{id}\u{1e}{message}"))
                .collect::<Vec<_>>()
                .join("\u{1f}"),
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
    // With a base, each case file of the base that holds the same object as the judged
    // one is not parsed again (in a pull request, nearly all of them).
    let parsed_files = base.map(|_| ParsedFiles::default());
    // Baselines are read suite by suite as their rules run (`check_project_reading_baselines`).
    // Without a base, nothing but the graders' probes reads a case's graded members
    // (EL110 compares them with the base's): only what probing found is kept.
    let detail = match base {
        Some(_) => CaseDetail::Summary,
        None => CaseDetail::Probed(crate::graders::probe::PROBE_GRADED),
    };
    let load_options = LoadOptions {
        detail,
        parsed_files: parsed_files.as_ref(),
        find_unlisted: true,
        read_baselines: false,
        ..LoadOptions::default()
    };
    let base_read = base.map(|base| read_base(options, base)).transpose()?;
    let project =
        Project::load_required(content, &load_options)?.with_workdir(options.project_root.clone());
    let mut unreadable_base = None;
    // Kept for the fixes that put back what the base had.
    let mut base_snapshot = None;
    let base_project = match base.zip(base_read) {
        Some((base, (snapshot, base_lock))) => {
            let snapshot = &*base_snapshot.insert(SameObjects::new(snapshot, content));
            // The base's skills are compared on what they declare.
            let base_options = LoadOptions {
                skill_detail: SkillDetail::Declarations,
                find_unlisted: false,
                ..load_options
            };
            match Project::load_with_lock(snapshot, &base_options, base_lock) {
                Ok(base_project) => base_project,
                Err(error) => {
                    unreadable_base = Some(base_unreadable(base, error)?);
                    None
                }
            }
        }
        _ => None,
    };
    let mut project = project;
    if let Some(base) = base {
        project.rebaseline_reasons = base.rebaseline_reasons.clone();
    }
    if let Some(base_project) = &base_project {
        project.identify_as_base(content, base_project)?;
    }
    let ran_commands = project.suites.iter().any(|suite| {
        matches!(
            project.grader_for(&suite.name).program,
            GraderProgram::Command(_)
        )
    });
    let sources = crate::baselines::rules::BaselineSources {
        head: content,
        base: base_snapshot
            .as_ref()
            .filter(|_| base_project.is_some())
            .map(|snapshot| snapshot as &dyn ContentSource),
    };
    let checked = check_project_reading_baselines(&project, base_project.as_ref(), sources)?;
    let mut findings = checked.findings;
    findings.extend(crate::commands::calibration_pins::check(
        &project,
        content,
        &options.project_root,
    )?);
    if let Some(base) = base {
        judge_mixed_changes_by_commit(&mut findings, &project, base, options, content)?;
    }
    findings.extend(unreadable_base);
    if let Some(base) = base {
        findings.extend(unreadable_base_baselines(base, &checked.unreadable_at_base));
    }
    if options.source == SourceSpec::Index {
        staged::add_staging_step(&mut findings);
    }
    project.relate_prompts(&mut findings);
    project.name_identities(&mut findings);
    apply_gate(
        &mut findings,
        &project,
        base.zip(base_project.as_ref()),
        content,
    );
    crate::commands::suggest::suggest_fixes(
        &mut findings,
        content,
        base_snapshot
            .as_ref()
            .map(|snapshot| snapshot as &dyn ContentSource),
    );
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
    // Freeing 200,000 cases takes a core 20 to 40 ms: done beside the report's printing
    // instead of before it.
    rayon::spawn(move || drop((project, base_project)));
    Ok((report, ran_commands))
}

/// The base's files and its lock, read before the judged snapshot is loaded and through a
/// repository of its own. Walking the base's trees maps pages of git's pack all over it
/// (22 MB for the benchmark's 1,000 trees), git resolves a lock stored as a delta in a
/// buffer twice the lock's size, and a pack stays mapped as long as its repository is
/// open: all of it is gone before the judged snapshot's model is built, instead of adding
/// to it. The snapshot then reads what else it needs through `base.repo`.
fn read_base(options: &CheckOptions, base: &Base) -> Result<(GitSnapshot, Result<Option<Lock>>)> {
    let repo = GitRepo::discover(&options.project_root)?;
    let snapshot = repo.commit_source(base.commit, base.description.clone())?;
    let lock = Project::read_lock(&snapshot);
    Ok((snapshot.read_through(&base.repo), lock))
}

/// EL407 is about one change that both moves a suite's contract and re-records its
/// baselines, so that neither can be reviewed apart. Judged over the whole range, the
/// advice it gives (split them into commits) could never be followed: so a suite's
/// EL407 stands only when one commit of the range (or the uncommitted change on top of
/// them) touches both its case or prompt files and its baseline file.
fn judge_mixed_changes_by_commit(
    findings: &mut Vec<Finding>,
    project: &Project,
    base: &Base,
    options: &CheckOptions,
    content: &dyn ContentSource,
) -> Result<()> {
    if !findings
        .iter()
        .any(|finding| finding.rule == RuleId::MixedChange)
    {
        return Ok(());
    }
    let paths_of = |suite: &str| -> Option<(Vec<String>, String)> {
        let model = project.suites.iter().find(|model| model.name == suite)?;
        let baseline = project.config.suite(suite)?.baseline.clone()?;
        let mut contract: Vec<String> = model.case_files().to_vec();
        contract.extend(model.prompts.iter().map(|prompt| prompt.path.clone()));
        Some((contract, baseline))
    };
    let snapshot = |commit: ObjectId| base.repo.commit_source(commit, commit.to_string());
    let mut mixed_suites = BTreeSet::new();
    let suites: BTreeSet<String> = findings
        .iter()
        .filter(|finding| finding.rule == RuleId::MixedChange)
        .filter_map(|finding| finding.subject.suite.as_deref().map(str::to_owned))
        .collect();
    for suite in &suites {
        let Some((contract, baseline)) = paths_of(suite) else {
            mixed_suites.insert(suite.clone());
            continue;
        };
        let touches_both = |changed: &dyn Fn(&str) -> Result<bool>| -> Result<bool> {
            if !changed(&baseline)? {
                return Ok(false);
            }
            for path in &contract {
                if changed(path)? {
                    return Ok(true);
                }
            }
            Ok(false)
        };
        let mut mixed = false;
        for commit in &base.range {
            let after = snapshot(commit.id)?;
            let before = match commit.parent {
                Some(parent) => Some(snapshot(parent)?),
                None => None,
            };
            let changed = |path: &str| -> Result<bool> {
                let old = match &before {
                    Some(before) => before.identity(path)?,
                    None => None,
                };
                Ok(after.identity(path)? != old)
            };
            mixed = touches_both(&changed)?;
            if mixed {
                break;
            }
        }
        // What the working tree or the index adds on top of HEAD is one more change.
        let uncommitted = !matches!(options.source, SourceSpec::Revision(_));
        if let (false, true, Some(head)) = (mixed, uncommitted, base.head) {
            let committed = snapshot(head)?;
            let changed = |path: &str| -> Result<bool> {
                Ok(source::read_regular_file(content, path)?
                    != source::read_regular_file(&committed, path)?)
            };
            mixed = touches_both(&changed)?;
        }
        if mixed {
            mixed_suites.insert(suite.clone());
        }
    }
    findings.retain(|finding| {
        finding.rule != RuleId::MixedChange
            || finding
                .subject
                .suite
                .as_deref()
                .is_some_and(|suite| mixed_suites.contains(suite))
    });
    Ok(())
}

/// `[rules]`, `[debt]` and `Evalock-Approved:` trailers, as [`crate::gate`] applies them.
fn apply_gate(
    findings: &mut Vec<Finding>,
    project: &Project,
    base: Option<(&Base, &Project)>,
    content: &dyn ContentSource,
) -> crate::gate::Gated {
    let (approvals, unreadable) = match base {
        Some((base, _)) => crate::gate::approvals(&base.commits),
        None => (Vec::new(), Vec::new()),
    };
    findings.extend(unreadable.into_iter().map(|trailer| {
        Finding::new(
            RuleId::PolicyLoosened,
            Subject::default(),
            format!("the trailer {trailer} approves nothing: it names no rule, path or reason"),
        )
        .severity(crate::rules::Severity::Warn)
        .help(format!(
            "write it as `{}: <rule> <path>: <reason>`, as the finding it approves names them",
            crate::gate::APPROVAL_TRAILER
        ))
        .discriminator(&trailer)
    }));
    let gate_base = base.map(|(base, base_project)| crate::gate::Base {
        config: &base_project.config,
        description: &base.description,
    });
    let digest_of = |path: &str| crate::commands::lock::file_digest(content, path);
    let gated = crate::gate::apply(
        findings,
        &project.config,
        gate_base.as_ref(),
        &approvals,
        &digest_of,
    );
    crate::finding::sort_findings(findings);
    gated
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
    let range = match head {
        Some(head) => repo.commits_since(merge_base, head)?,
        None => Vec::new(),
    };
    let commits: Vec<(String, String)> = range
        .iter()
        .map(|commit| {
            (
                commit.id.to_string()[..7].to_owned(),
                commit.message.clone(),
            )
        })
        .collect();
    // Re-recorded baselines may carry their reason in a `Rebaseline-Reason:` trailer.
    let rebaseline_reasons = commits
        .iter()
        .flat_map(|(_, message)| trailer_values(message, "Rebaseline-Reason"))
        .collect();
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
        commits,
        range,
        head,
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
    unreadable: &'a [(String, String)],
) -> impl Iterator<Item = Finding> + 'a {
    unreadable.iter().map(move |(suite, path)| {
        Finding::new(
            RuleId::BaseUnreadable,
            Subject::suite(suite),
            format!(
                "baseline {path} of suite `{suite}` in the base revision {} cannot be read: its entries were compared with nothing",
                base.description
            ),
        )
    })
}
