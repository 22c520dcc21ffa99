//! `evalock check`: judge one snapshot against its lock and, optionally, a base revision.

use super::staged::{self, StagedTriage};
use crate::cache::{
    CacheContext, CheckMemo, Counted, FileStore, Handover, MemoKey, RecordingSource, Tally,
};
use crate::checks::check_project;
use crate::error::{Error, Result};
use crate::finding::{Finding, Subject};
use crate::grade::GraderProgram;
use crate::model::{CaseDetail, LoadCache, LoadOptions, Project};
use crate::report::{plural, Report};
use crate::rules::RuleId;
use crate::source::{self, trailer_values, ContentSource, CountingSource, GitRepo, SourceSpec};
use crate::trace::Trace;
use gix::ObjectId;
use std::path::PathBuf;
use std::time::Instant;

#[derive(Debug, Clone)]
pub struct CheckOptions {
    pub project_root: PathBuf,
    pub source: SourceSpec,
    /// A revision whose merge base with the judged content supplies the base-revision rules.
    pub base: Option<String>,
    /// Use and update the incremental cache in `.evalock/cache` (same verdict either way).
    pub cache: bool,
    /// Whether the report must list every subject judged (the JSON, JUnit and Markdown
    /// reports print them). Without, a remembered report comes back with none: reading
    /// 200,000 of them back would cost a warm check more than everything else.
    pub subjects: bool,
}

/// The base revision to compare with, resolved to a commit.
struct Base {
    repo: GitRepo,
    commit: ObjectId,
    description: String,
    /// `Rebaseline-Reason:` trailers of the commits between the base and HEAD.
    rebaseline_reasons: Vec<String>,
}

/// A finished check, and whether its verdict depends on more than the content read.
struct Judged {
    report: Report,
    /// Command graders were probed: their behaviour is not content evalock read, so the
    /// report is not remembered.
    ran_commands: bool,
}

pub fn check(options: &CheckOptions) -> Result<Report> {
    check_traced(options, &Trace::new())
}

/// [`check`], noting in `trace` which shortcuts it took and what it read.
pub fn check_traced(options: &CheckOptions, trace: &Trace) -> Result<Report> {
    let content: Box<dyn ContentSource> = match (&options.source, &options.base) {
        // The pre-commit path: a commit that touches nothing evalock tracks is answered
        // without loading the lock.
        (SourceSpec::Index, None) => match staged::triage(&options.project_root)? {
            StagedTriage::Untouched(report) => {
                trace.step("nothing staged is a file evalock reads: passed on the index's list of paths, without reading the lock");
                return Ok(report);
            }
            StagedTriage::Judge(index) => index,
        },
        _ => source::open(&options.project_root, &options.source)?,
    };
    let mut report = check_content(options, content.as_ref(), trace)?;
    if options.source == SourceSpec::Index {
        staged::name_unstaged_files(
            &mut report.findings,
            content.as_ref(),
            &options.project_root,
        );
    }
    Ok(report)
}

fn check_content(
    options: &CheckOptions,
    content: &dyn ContentSource,
    trace: &Trace,
) -> Result<Report> {
    let base = match &options.base {
        Some(base) => Some(resolve_base(options, base)?),
        None => None,
    };
    let cache = options
        .cache
        .then(|| CacheContext::open(&options.project_root))
        .flatten();
    let Some(cache) = cache else {
        trace.step(match options.cache {
            true => "the cache in .evalock/cache could not be opened: it is not used",
            false => "the cache in .evalock/cache is not used (--no-cache)",
        });
        return Ok(judge(options, content, base.as_ref(), None, None, trace)?.report);
    };
    let kind = match options.source {
        SourceSpec::Worktree => "worktree",
        SourceSpec::Index | SourceSpec::Revision(_) => "git",
    };
    let key = memo_key(options, content, base.as_ref());
    let memo = CheckMemo::open(&cache, kind);
    if let Some(report) = memo.recall(&key, content, options.subjects) {
        trace.step(
            "every file the last check read is unchanged: its report is reused from .evalock/cache",
        );
        return Ok(report);
    }
    let recording = RecordingSource::new(content);
    let store = FileStore::open(&cache, kind);
    let base_store = (base.is_some() && kind != "git").then(|| FileStore::open(&cache, "git"));
    let base_cache: &dyn LoadCache = base_store.as_ref().unwrap_or(&store);
    let judged = judge(
        options,
        &recording,
        base.as_ref(),
        Some(&store),
        Some(base_cache),
        trace,
    )?;
    // The case-file cache and the memo are separate files: written at once.
    rayon::join(
        || {
            store.save();
            if let Some(base_store) = base_store {
                base_store.save();
            }
        },
        || {
            if !judged.ran_commands {
                memo.remember(&key, &recording, &judged.report, options.subjects);
            }
        },
    );
    Ok(judged.report)
}

/// Everything besides the content read that the report depends on. The source's
/// description is part of the report (`HEAD (1a2b3c4)`): a commit with the same content
/// under another id must not be reported under the old one.
fn memo_key(options: &CheckOptions, content: &dyn ContentSource, base: Option<&Base>) -> MemoKey {
    let (commit, reasons) = match base {
        Some(base) => (
            base.commit.to_string(),
            base.rebaseline_reasons.join("\u{1f}"),
        ),
        None => (String::new(), String::new()),
    };
    MemoKey(format!(
        "check\nsource={:?}\ndescription={}\nbase={commit}\nreasons={reasons}\nci={}",
        options.source,
        content.describe(),
        crate::is_ci()
    ))
}

fn judge(
    options: &CheckOptions,
    content: &dyn ContentSource,
    base: Option<&Base>,
    cache: Option<&dyn LoadCache>,
    base_cache: Option<&dyn LoadCache>,
    trace: &Trace,
) -> Result<Judged> {
    let content = &CountingSource::new(content);
    // What the base holds unchanged is loaded once, for the judged content: its suites and
    // its lock are then shared, and the base reads only what changed.
    let handover = base.map(|base| {
        Handover::new(match options.source {
            SourceSpec::Worktree => base.repo.staged_index().ok(),
            SourceSpec::Index | SourceSpec::Revision(_) => None,
        })
    });
    let judged_side = handover
        .as_ref()
        .map(|handover| handover.judged_side(cache));
    let cache = match &judged_side {
        Some(side) => Some(side as &dyn LoadCache),
        None => cache,
    };
    let judged_tally = cache.map(Tally::new);
    let cache = judged_tally.as_ref().map(|tally| tally as &dyn LoadCache);
    // The base's files: from the index wherever it holds the base's trees unchanged.
    let snapshot = match base {
        Some(base) => Some(base.repo.commit_source_with(
            base.commit,
            base.description.clone(),
            handover.as_ref().and_then(Handover::index),
        )?),
        None => None,
    };
    let snapshot = snapshot
        .as_ref()
        .map(|snapshot| CountingSource::new(snapshot));
    if let (Some(snapshot), Some(handover)) = (&snapshot, &handover) {
        handover.read_base_lock_first(content, snapshot, trace);
    }
    let started = Instant::now();
    let mut project =
        Project::load_summary(content, cache)?.with_workdir(options.project_root.clone());
    trace_load(trace, "", content, judged_tally.as_ref(), ".evalock/cache");
    trace.step(format!("judged content loaded in {}", seconds(started)));
    let mut unreadable_base = None;
    let base_project = match (base, &snapshot, &handover) {
        (Some(base), Some(snapshot), Some(handover)) => {
            project.rebaseline_reasons = base.rebaseline_reasons.clone();
            let base_side = handover.base_side(base_cache);
            let base_tally = Tally::new(&base_side);
            let started = Instant::now();
            let loaded = load_base(snapshot, &base_tally);
            let reused_from = "the judged content or .evalock/cache";
            trace_load(trace, "base: ", snapshot, Some(&base_tally), reused_from);
            trace.step(format!("base loaded in {}", seconds(started)));
            match loaded {
                Ok(base_project) => base_project,
                Err(error) => {
                    unreadable_base = Some(base_unreadable(base, error)?);
                    None
                }
            }
        }
        _ => None,
    };
    drop(handover);
    let ran_commands = project.suites.iter().any(|suite| {
        matches!(
            project.grader_for(&suite.name).program,
            GraderProgram::Command(_)
        )
    });
    let started = Instant::now();
    let mut findings = check_project(&project, base_project.as_ref());
    trace.step(format!(
        "rules applied{} in {}",
        match ran_commands {
            true => ", with command graders run on empty and refusal completions,",
            false => "",
        },
        seconds(started)
    ));
    findings.extend(unreadable_base);
    if let (Some(base), Some(base_project)) = (base, base_project.as_ref()) {
        findings.extend(unreadable_base_baselines(base, base_project));
    }
    // Freeing a large project takes longer than what is left to do (subjects, remember,
    // print): on a worker, meanwhile.
    rayon::spawn(move || drop(base_project));
    if options.source == SourceSpec::Index {
        staged::add_staging_step(&mut findings);
    }
    let report = Report::new(
        "check",
        project.source.clone(),
        base.map(|base| base.description.clone()),
        findings,
    );
    // Gathering 200,000 subjects costs a cold check a tenth of its time: only for a
    // report that lists them.
    let report = match options.subjects {
        true => report.with_subjects(project.into_subjects()),
        false => {
            rayon::spawn(move || drop(project));
            report
        }
    };
    Ok(Judged {
        report,
        ran_commands,
    })
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
fn load_base(snapshot: &dyn ContentSource, cache: &dyn LoadCache) -> Result<Option<Project>> {
    let options = LoadOptions {
        detail: CaseDetail::Summary,
        case_cache: Some(cache),
        ..LoadOptions::default()
    };
    Project::load_with_options(snapshot, &options)
}

/// What a load read from `source` and what `tally` found in its cache (or, for the base,
/// shared with the judged content).
fn trace_load(
    trace: &Trace,
    side: &str,
    source: &CountingSource<'_>,
    tally: Option<&Tally<'_>>,
    reused_from: &str,
) {
    let (files, bytes) = source.read_so_far();
    let described = source.describe();
    let from = match described.as_str() {
        "working tree" | "index" => format!("the {described}"),
        _ => described,
    };
    trace.step(format!(
        "{side}read {} ({}) from {from}",
        plural(files as usize, "file", "files"),
        byte_size(bytes),
    ));
    let Some(tally) = tally else {
        return;
    };
    let mut reused = Vec::new();
    for (what, singular, plural_form) in [
        (Counted::CaseFiles, "case file", "case files"),
        (Counted::SkillFiles, "skill file", "skill files"),
    ] {
        if tally.count(what) > 0 {
            reused.push(plural(tally.count(what), singular, plural_form));
        }
    }
    if tally.count(Counted::Locks) > 0 {
        reused.push("the lock".to_owned());
    }
    if !reused.is_empty() {
        trace.step(format!(
            "{side}reused from {reused_from}: {}",
            reused.join(", ")
        ));
    }
}

/// The time since `started`: `0.21 s`.
pub fn seconds(started: Instant) -> String {
    format!("{:.2} s", started.elapsed().as_secs_f64())
}

/// `512 B`, `1.3 KiB`, `150.2 MiB`.
fn byte_size(bytes: u64) -> String {
    const UNITS: [&str; 3] = ["KiB", "MiB", "GiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut size = bytes as f64 / 1024.0;
    let mut unit = 0;
    while size >= 1024.0 && unit + 1 < UNITS.len() {
        size /= 1024.0;
        unit += 1;
    }
    format!("{size:.1} {}", UNITS[unit])
}
