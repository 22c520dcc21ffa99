//! EL4xx: baselines. Entries recorded against another context are drifted (EL401) and
//! never compared; entries whose digest does not match their own completion are
//! tampered (EL402); cases without entries (EL404), entries without cases (EL405), and
//! against the base: re-recordings without a reason (EL406) or mixed with contract
//! changes (EL407).

use crate::baselines::{BaselineContext, BaselineEntry, BaselineState, SuiteBaseline};
use crate::cases::suite::SuiteModel;
use crate::cases::Case;
use crate::finding::{Finding, Location, Subject};
use crate::graders::rules::active_cases;
use crate::graders::sources::GraderModel;
use crate::graders::{completion_digest, Normalizer};
use crate::project::config::Config;
use crate::rules::RuleId;
use std::collections::{BTreeMap, BTreeSet};

/// What the EL4xx rules read of one snapshot of the project.
#[derive(Clone, Copy)]
pub struct Side<'a> {
    pub config: &'a Config,
    pub graders: &'a [GraderModel],
    pub suites: &'a [SuiteModel],
    /// The baselines of the suites that configure one, by suite name.
    pub baselines: &'a BTreeMap<String, std::sync::Arc<SuiteBaseline>>,
    /// `Rebaseline-Reason:` trailers of the commits since the base.
    pub rebaseline_reasons: &'a [String],
    /// `working tree`, `index`, `main (1a2b3c4)`.
    pub source: &'a str,
}

impl Side<'_> {
    pub fn suite(&self, name: &str) -> Option<&SuiteModel> {
        self.suites.iter().find(|suite| suite.name == name)
    }

    fn grader_reference(&self, suite: &str) -> String {
        crate::graders::sources::grader_for(self.config, self.graders, suite).reference()
    }
}

mod against_base;
mod in_turn;
pub use against_base::{mixed_change, rebaselined_without_reason};
pub use in_turn::{check_in_turn, BaselineSources, InTurn};

/// Which baseline findings a caller wants.
#[derive(Debug, Clone, Copy)]
pub struct Scope {
    /// Every suite is judged: entries without an active case are orphans (EL405).
    pub full: bool,
    /// A suite that never recorded a baseline file reports each case as missing (EL404).
    /// `run` does; `check` only reports cases missing from a file that exists, so a suite
    /// that has not started recording is not nagged on every commit.
    pub absent_file_is_missing: bool,
}

/// What the baselines of `suites` say without running anything.
pub fn check(
    project: &Side<'_>,
    base: Option<&Side<'_>>,
    suites: &BTreeSet<String>,
    scope: Scope,
) -> Vec<Finding> {
    project
        .suites
        .iter()
        .filter(|suite| suites.contains(&suite.name))
        .flat_map(|suite| check_suite(project, base, suite, scope))
        .collect()
}

/// What the baselines of one suite say: those of `project.baselines` and
/// `base.baselines` that are the suite's.
fn check_suite(
    project: &Side<'_>,
    base: Option<&Side<'_>>,
    suite: &SuiteModel,
    scope: Scope,
) -> Vec<Finding> {
    let mut findings = Vec::new();
    let Some(baseline) = project.baselines.get(&suite.name) else {
        // Unconfiguring a suite's baseline drops its entries as surely as deleting them.
        if let Some(base_baseline) = base.and_then(|base| base.baselines.get(&suite.name)) {
            let unconfigured = SuiteBaseline {
                path: base_baseline.path.clone(),
                state: BaselineState::Absent,
            };
            findings.extend(
                base.into_iter().flat_map(|base| {
                    rebaselined_without_reason(project, base, suite, &unconfigured)
                }),
            );
        }
        return findings;
    };
    findings.extend(tampered(suite, baseline));
    findings.extend(drifted(project, suite, baseline));
    if scope.absent_file_is_missing || !matches!(baseline.state, BaselineState::Absent) {
        findings.extend(missing(suite, baseline));
    }
    if scope.full {
        findings.extend(orphans(suite, baseline));
    }
    if let Some(base) = base {
        findings.extend(rebaselined_without_reason(project, base, suite, baseline));
        findings.extend(mixed_change(base, suite, baseline));
        findings.extend(against_base::noise_floor_raised(base, suite, baseline));
    }
    findings
}

fn entry_location(baseline: &SuiteBaseline, case_id: &str) -> Location {
    match baseline.line_of(case_id) {
        Some(line) => Location::line(&baseline.path, line),
        None => Location::file(&baseline.path),
    }
}

fn rerecord_help(suite: &str) -> String {
    format!("run `evalock run --suite {suite}`, read the diff, then `evalock accept --suite {suite} --reason \"…\"`")
}

/// The context a case's completion is recorded against now.
pub fn current_context(project: &Side<'_>, suite: &SuiteModel, case: &Case) -> BaselineContext {
    let config = project.config.suite(&suite.name);
    BaselineContext {
        case: case.digest,
        prompt: suite.prompt_digest(),
        grader: project.grader_reference(&suite.name),
        normalizer: config
            .map(|config| config.normalizer.clone())
            .unwrap_or_else(|| "exact".into()),
        model: config.and_then(|config| config.model.clone()),
    }
}

/// Which parts of a recorded context moved, in words: `prompt (sha256:1 -> sha256:2)`.
pub fn context_changes(recorded: &BaselineContext, current: &BaselineContext) -> Vec<String> {
    let short = |digest: &Option<crate::digest::Digest>| {
        digest
            .as_ref()
            .map(|d| d.short().to_owned())
            .unwrap_or("none".into())
    };
    let mut changes = Vec::new();
    if recorded.case != current.case {
        changes.push(format!(
            "case ({} -> {})",
            recorded.case.short(),
            current.case.short()
        ));
    }
    if recorded.prompt != current.prompt {
        changes.push(format!(
            "prompt ({} -> {})",
            short(&recorded.prompt),
            short(&current.prompt)
        ));
    }
    if recorded.grader != current.grader {
        changes.push(format!(
            "grader ({} -> {})",
            recorded.grader, current.grader
        ));
    }
    if recorded.normalizer != current.normalizer {
        changes.push(format!(
            "normalizer ({} -> {})",
            recorded.normalizer, current.normalizer
        ));
    }
    if recorded.model != current.model {
        let name = |model: &Option<String>| model.clone().unwrap_or_else(|| "none".into());
        changes.push(format!(
            "model ({} -> {})",
            name(&recorded.model),
            name(&current.model)
        ));
    }
    changes
}

/// Whether an entry's stored completion still hashes to its digest, in its normal form.
pub fn entry_is_intact(entry: &BaselineEntry) -> bool {
    Normalizer::parse(&entry.context.normalizer)
        .is_some_and(|normalizer| normalizer.normalize(&entry.completion) == entry.completion)
        && completion_digest(&entry.completion) == entry.digest
}

/// EL402: a malformed file, or an entry whose digest is not its completion's.
pub fn tampered(suite: &SuiteModel, baseline: &SuiteBaseline) -> Vec<Finding> {
    let help = format!(
        "baselines are written only by `evalock accept`: restore the committed file (`git restore --source=HEAD --staged --worktree -- {}`) or re-record it (`evalock run --suite {1}`, then `evalock accept --suite {1} --reason \"…\"`)",
        crate::text::shell_word(&baseline.path),
        suite.name
    );
    match &baseline.state {
        BaselineState::Absent => Vec::new(),
        BaselineState::Malformed { line, column, message } => vec![Finding::new(
            RuleId::BaselineTampered,
            Subject::suite(&suite.name),
            format!("baseline {} of suite `{}` cannot be read: {message}", baseline.path, suite.name),
        )
        .at(Location::line(&baseline.path, *line).with_column(*column))
        .help(help.clone())],
        BaselineState::Directory => vec![Finding::new(
            RuleId::BaselineTampered,
            Subject::suite(&suite.name),
            format!(
                "baseline {} of suite `{}` is a directory, not a file: no baseline can be read from it",
                baseline.path, suite.name
            ),
        )
        .at(Location::file(&baseline.path))
        .help(format!(
            "move the directory out of the way (each suite's baselines are one file, written by `evalock accept`), then `evalock run --suite {0}` and `evalock accept --suite {0} --reason \"…\"`",
            suite.name
        ))],
        BaselineState::Symlink => vec![Finding::new(
            RuleId::BaselineTampered,
            Subject::suite(&suite.name),
            format!(
                "baseline {} of suite `{}` is a symlink, and evalock never follows symlinks: no baseline can be read from it",
                baseline.path, suite.name
            ),
        )
        .at(Location::file(&baseline.path))
        .help(format!(
            "replace the symlink with the suite's own baseline file: remove it, then `evalock run --suite {0}` and `evalock accept --suite {0} --reason \"…\"`",
            suite.name
        ))],
        BaselineState::Parsed { .. } => baseline
            .tampered()
            .map(|(id, entry, actual)| {
                Finding::new(
                    RuleId::BaselineTampered,
                    Subject::case(&suite.name, id),
                    format!(
                        "baseline entry `{id}` in {} says {}, but its stored completion hashes to {} under {}",
                        baseline.path,
                        entry.digest.short(),
                        actual.short(),
                        entry.context.normalizer
                    ),
                )
                .at(entry_location(baseline, id))
                .help(help.clone())
            })
            .collect(),
    }
}

/// EL401: entries recorded against another case, prompt, grader, normalizer or model.
pub fn drifted(project: &Side<'_>, suite: &SuiteModel, baseline: &SuiteBaseline) -> Vec<Finding> {
    let mut findings = Vec::new();
    // All but the case's digest is the suite's: worked out once, not once a case (the
    // suite's configuration is found by name, and its grader reference written anew).
    let mut current: Option<BaselineContext> = None;
    for case in active_cases(suite) {
        let Some(entry) = baseline.entry(&case.id) else {
            continue;
        };
        let current = current.get_or_insert_with(|| current_context(project, suite, case));
        current.case = case.digest;
        let changes = context_changes(&entry.context, current);
        if changes.is_empty() {
            continue;
        }
        findings.push(
            Finding::new(
                RuleId::BaselineDrifted,
                Subject::case(&suite.name, &case.id),
                format!(
                    "baseline of case `{}` ({}) was recorded against another {}: refusing to compare",
                    case.id,
                    entry_location(baseline, &case.id).display(),
                    changes.join(", ")
                ),
            )
            .at(Location::span(&*case.file, case.line, case.end_line))
            .help(rerecord_help(&suite.name)),
        );
    }
    findings
}

/// EL404: active cases without a baseline entry.
pub fn missing(suite: &SuiteModel, baseline: &SuiteBaseline) -> Vec<Finding> {
    if baseline.is_unreadable() {
        return Vec::new();
    }
    active_cases(suite)
        .filter(|case| baseline.entry(&case.id).is_none())
        .map(|case| {
            Finding::new(
                RuleId::BaselineMissing,
                Subject::case(&suite.name, &case.id),
                format!(
                    "case `{}` ({}:{}) has no baseline in {} yet",
                    case.id, case.file, case.line, baseline.path
                ),
            )
            .at(Location::span(&*case.file, case.line, case.end_line))
            .help(rerecord_help(&suite.name))
        })
        .collect()
}

/// EL405: entries for cases that are gone or retired.
pub fn orphans(suite: &SuiteModel, baseline: &SuiteBaseline) -> Vec<Finding> {
    let active: BTreeSet<&str> = active_cases(suite).map(|case| &*case.id).collect();
    let Some(entries) = baseline.entries() else {
        return Vec::new();
    };
    entries
        .keys()
        .filter(|id| !active.contains(id.as_str()))
        .map(|id| {
            let why = if suite.case(id).is_some() { "is retired" } else { "no longer exists" };
            Finding::new(
                RuleId::BaselineOrphan,
                Subject::case(&suite.name, id),
                format!("baseline entry `{id}` in {}: the case {why} in suite `{}`", baseline.path, suite.name),
            )
            .at(entry_location(baseline, id))
            .help(format!("drop it by re-recording the suite: `evalock run --suite {0}` then `evalock accept --suite {0} --reason \"…\"`", suite.name))
        })
        .collect()
}
