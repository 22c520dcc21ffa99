//! `evalock changelog A..B`: what changed in behaviour between two revisions, read from
//! what each of them committed (evalock.toml, evalock.lock, the case files and the
//! baselines), per suite and stratum: cases added, retired and version-bumped, baselines
//! (re-)accepted with the reason given to `accept`, model, prompt and grader changes,
//! known failures added and cleared, and the REGRESS / GAIN matrix between the two
//! last-good sets. Nothing is run: it is a release note, and a release job's gate.

use crate::baselines::{BaselineEntry, SuiteBaseline};
use crate::commands::compare::baselines_of;
use crate::commands::project::Project;
use crate::error::{Error, Result};
use crate::project::lock::{CalibrationLock, CaseLock};
use crate::run::compare::{compare, Slack, Tally, Verdict};
use crate::source::SourceSpec;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

pub mod gate;
pub mod markdown;

pub use gate::Gate;

pub const CHANGELOG_SCHEMA: &str = "evalock.changelog/v1";

/// A value at the earlier revision and at the later one.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Moved<T> {
    pub from: T,
    pub to: T,
}

/// Whether a suite or grader is in both revisions or in one only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Presence {
    Added,
    Removed,
    Kept,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Changelog {
    pub schema: &'static str,
    /// The earlier revision as it was read: `v1.0 (1a2b3c4)`.
    pub from: String,
    pub to: String,
    /// Suites that changed in any way, by name.
    pub suites: Vec<SuiteChangelog>,
    /// Graders whose version, sources or calibration changed, by id.
    pub graders: Vec<GraderChange>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SuiteChangelog {
    pub suite: String,
    pub presence: Presence,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<Moved<Option<String>>>,
    /// The digest over the suite's prompt files, as the lock pins it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt: Option<Moved<Option<String>>>,
    /// `grader-id@version` (`built-in` for the built-in grader).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grader: Option<Moved<String>>,
    /// Pass rate of the last-good set, in percent (`None` without baselines).
    pub pass_rate: Moved<Option<f64>>,
    /// By stratum, cases without one last (`stratum` absent).
    pub strata: Vec<StratumChangelog>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct StratumChangelog {
    pub stratum: Option<String>,
    pub added: Vec<String>,
    pub retired: Vec<String>,
    /// Cases whose entry left the lock (a retired case keeps its entry).
    pub removed: Vec<String>,
    pub bumped: Vec<Bump>,
    /// Baseline entries recorded since the earlier revision, with their reasons.
    pub accepted: Vec<Accepted>,
    pub known_failures_added: Vec<KnownFailure>,
    pub known_failures_cleared: Vec<String>,
    /// Verdicts between the two last-good sets: REGRESS (passed, now fails), GAIN, SAME,
    /// NEW (only in the later set), GONE.
    pub verdicts: Tally,
    pub regressed: Vec<String>,
    pub gained: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Bump {
    pub case_id: String,
    pub from: u64,
    pub to: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Accepted {
    pub case_id: String,
    /// `accept --reason`, empty when none was given.
    pub reason: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// The case had no baseline entry at the earlier revision.
    pub first: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KnownFailure {
    pub case_id: String,
    pub reasons: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GraderChange {
    pub grader: String,
    pub presence: Presence,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<Moved<Option<String>>>,
    /// The digest over its sources moved.
    pub sources_changed: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub calibration: Option<Moved<Option<Calibration>>>,
}

/// A grader's pinned calibration: the grader version it was measured at, how many labels
/// and how often it agreed with them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Calibration {
    pub version: String,
    pub labels: usize,
    pub agreement: f64,
}

impl Calibration {
    fn of(lock: &CalibrationLock) -> Calibration {
        let labels = lock.tp + lock.fp + lock.tn + lock.fn_;
        let agreement = match labels {
            0 => 0.0,
            _ => (lock.tp + lock.tn) as f64 / labels as f64,
        };
        Calibration {
            version: lock.version.clone(),
            labels,
            agreement,
        }
    }
}

/// `A..B`, `A..` (to `HEAD`) or `A` (to `HEAD`): the two revisions.
pub fn parse_range(text: &str) -> Result<(String, String)> {
    let usage = |why: &str| {
        Error::Usage(format!(
            "changelog range `{text}` {why}: give `A..B` (tags or commits), or `A` for `A..HEAD`"
        ))
    };
    if text.contains("...") {
        return Err(usage("is a symmetric difference"));
    }
    let (from, to) = match text.split_once("..") {
        Some((from, to)) => (from.trim(), to.trim()),
        None => (text.trim(), ""),
    };
    if from.is_empty() {
        return Err(usage("names no earlier revision"));
    }
    let to = match to.is_empty() {
        true => "HEAD",
        false => to,
    };
    Ok((from.to_owned(), to.to_owned()))
}

/// The changelog between the committed revisions `from` and `to` of the project at
/// `project_root`. A revision without evalock.toml (from before evalock was adopted)
/// counts as a project without suites.
pub fn changelog(project_root: &Path, from: &str, to: &str) -> Result<Changelog> {
    let load = |revision: &str| -> Result<(Option<Project>, String)> {
        let source = crate::source::open(project_root, &SourceSpec::Revision(revision.to_owned()))?;
        Ok((
            Project::load_if_configured(source.as_ref())?,
            source.describe(),
        ))
    };
    let (old, from_label) = load(from)?;
    let (new, to_label) = load(to)?;
    let Some(either) = new.as_ref().or(old.as_ref()) else {
        return Err(Error::Usage(format!(
            "neither {from_label} nor {to_label} has an evalock.toml: there is nothing to compare"
        )));
    };
    // A revision from before evalock was adopted has no last-good set.
    let last_good = |side: Option<&Project>, label: &str| {
        let mut results = baselines_of(side.unwrap_or(either), label.to_owned());
        if side.is_none() {
            results.cases.clear();
            results.suites.clear();
            results.noise.clear();
            results.counts.clear();
            results.strata.clear();
        }
        results
    };
    let matrix = compare(
        &last_good(old.as_ref(), &from_label),
        &last_good(new.as_ref(), &to_label),
        &from_label,
        &to_label,
        Slack::default(),
    );
    let (old, new) = (Side::of(old.as_ref()), Side::of(new.as_ref()));
    let mut suites = Vec::new();
    let names: BTreeSet<&str> = old.suite_names().chain(new.suite_names()).collect();
    for name in names {
        let mut strata: BTreeMap<Option<String>, StratumChangelog> = BTreeMap::new();
        let stratum_of = |id: &str| new.stratum(name, id).or_else(|| old.stratum(name, id));
        let (old_cases, new_cases) = (old.cases(name), new.cases(name));
        for (id, entry) in &new_cases {
            match old_cases.get(id) {
                None if entry.retired => strata
                    .entry(stratum_of(id))
                    .or_default()
                    .retired
                    .push((*id).to_owned()),
                None => strata
                    .entry(stratum_of(id))
                    .or_default()
                    .added
                    .push((*id).to_owned()),
                Some(before) if entry.retired && !before.retired => strata
                    .entry(stratum_of(id))
                    .or_default()
                    .retired
                    .push((*id).to_owned()),
                Some(before) if !entry.retired && before.version != entry.version => {
                    strata.entry(stratum_of(id)).or_default().bumped.push(Bump {
                        case_id: (*id).to_owned(),
                        from: before.version,
                        to: entry.version,
                    })
                }
                Some(_) => {}
            }
        }
        for id in old_cases.keys().filter(|id| !new_cases.contains_key(*id)) {
            strata
                .entry(stratum_of(id))
                .or_default()
                .removed
                .push((*id).to_owned());
        }
        let (old_entries, new_entries) = (old.baseline(name), new.baseline(name));
        for (id, entry) in &new_entries {
            let before = old_entries.get(id);
            if before.is_none_or(|before| recorded_again(before, entry)) {
                strata
                    .entry(stratum_of(id))
                    .or_default()
                    .accepted
                    .push(Accepted {
                        case_id: (*id).to_owned(),
                        reason: entry.reason.clone(),
                        commit: entry.commit.clone(),
                        first: before.is_none(),
                    });
            }
            let was_known = before.filter(|before| !before.passed);
            if !entry.passed && was_known.is_none_or(|before| before.failure != entry.failure) {
                strata
                    .entry(stratum_of(id))
                    .or_default()
                    .known_failures_added
                    .push(KnownFailure {
                        case_id: (*id).to_owned(),
                        reasons: entry.failure.clone(),
                    });
            }
        }
        for (id, before) in &old_entries {
            let still = new_entries.get(id).is_some_and(|entry| !entry.passed);
            if !before.passed && !still {
                strata
                    .entry(stratum_of(id))
                    .or_default()
                    .known_failures_cleared
                    .push((*id).to_owned());
            }
        }
        for case in matrix.cases.iter().filter(|case| case.suite == name) {
            let stratum = strata.entry(stratum_of(&case.case_id)).or_default();
            *stratum.verdicts.entry(case.verdict).or_default() += 1;
            match case.verdict {
                Verdict::Regress => stratum.regressed.push(case.case_id.clone()),
                Verdict::Gain => stratum.gained.push(case.case_id.clone()),
                _ => {}
            }
        }
        let presence = match (old.has_suite(name), new.has_suite(name)) {
            (false, _) => Presence::Added,
            (_, false) => Presence::Removed,
            _ => Presence::Kept,
        };
        let kept = presence == Presence::Kept;
        let suite = SuiteChangelog {
            suite: name.to_owned(),
            presence,
            // A suite that is new or gone has no earlier or later model to compare.
            model: moved(old.model(name), new.model(name)).filter(|_| kept),
            prompt: moved(old.prompt(name), new.prompt(name)).filter(|_| kept),
            grader: moved(old.grader(name), new.grader(name)).filter(|_| kept),
            pass_rate: Moved {
                from: old.pass_rate(name),
                to: new.pass_rate(name),
            },
            strata: strata
                .into_iter()
                .map(|(stratum, changes)| StratumChangelog { stratum, ..changes })
                .filter(StratumChangelog::changed)
                .collect(),
        };
        let changed = presence != Presence::Kept
            || suite.model.is_some()
            || suite.prompt.is_some()
            || suite.grader.is_some()
            || !suite.strata.is_empty();
        if changed {
            suites.push(suite);
        }
    }
    // Strata without a name sort first in a BTreeMap; they read best last.
    for suite in &mut suites {
        suite
            .strata
            .sort_by_key(|stratum| stratum.stratum.is_none());
    }
    Ok(Changelog {
        schema: CHANGELOG_SCHEMA,
        from: from_label,
        to: to_label,
        suites,
        graders: grader_changes(&old, &new),
    })
}

/// `from` and `to` when they differ.
fn moved<T: PartialEq>(from: T, to: T) -> Option<Moved<T>> {
    (from != to).then_some(Moved { from, to })
}

/// Whether a baseline entry was recorded again: any part of what `accept` writes moved.
fn recorded_again(before: &BaselineEntry, after: &BaselineEntry) -> bool {
    before.digest != after.digest
        || before.passed != after.passed
        || before.context != after.context
        || before.commit != after.commit
        || before.reason != after.reason
}

fn grader_changes(old: &Side, new: &Side) -> Vec<GraderChange> {
    let ids: BTreeSet<&str> = old.grader_ids().chain(new.grader_ids()).collect();
    ids.into_iter()
        .filter_map(|id| {
            let (before, after) = (old.grader_lock(id), new.grader_lock(id));
            let presence = match (before.is_some(), after.is_some()) {
                (false, _) => Presence::Added,
                (_, false) => Presence::Removed,
                _ => Presence::Kept,
            };
            let version = |lock: Option<&crate::project::lock::GraderLock>| {
                lock.map(|lock| lock.version.clone())
            };
            let calibration = |lock: Option<&crate::project::lock::GraderLock>| {
                lock.and_then(|lock| lock.calibration.as_ref())
                    .map(Calibration::of)
            };
            let change = GraderChange {
                grader: id.to_owned(),
                presence,
                version: moved(version(before), version(after)),
                sources_changed: presence == Presence::Kept
                    && before.map(|lock| lock.digest) != after.map(|lock| lock.digest),
                calibration: moved(calibration(before), calibration(after)),
            };
            let changed = presence != Presence::Kept
                || change.version.is_some()
                || change.sources_changed
                || change.calibration.is_some();
            changed.then_some(change)
        })
        .collect()
}

impl StratumChangelog {
    fn changed(&self) -> bool {
        let moved = self
            .verdicts
            .iter()
            .any(|(verdict, count)| *verdict != Verdict::Same && *count > 0);
        moved
            || !(self.added.is_empty()
                && self.retired.is_empty()
                && self.removed.is_empty()
                && self.bumped.is_empty()
                && self.accepted.is_empty()
                && self.known_failures_added.is_empty()
                && self.known_failures_cleared.is_empty())
    }
}

/// One revision's project, or none before evalock was adopted.
struct Side<'a> {
    project: Option<&'a Project>,
}

impl<'a> Side<'a> {
    fn of(project: Option<&'a Project>) -> Side<'a> {
        Side { project }
    }

    fn suite_names(&self) -> impl Iterator<Item = &'a str> + '_ {
        self.project
            .into_iter()
            .flat_map(|project| project.config.suites.iter())
            .map(|suite| suite.name.get_ref().as_str())
    }

    fn has_suite(&self, name: &str) -> bool {
        self.suite_names().any(|suite| suite == name)
    }

    fn config(&self, name: &str) -> Option<&'a crate::project::config::SuiteConfig> {
        self.project?.config.suite(name)
    }

    fn model(&self, name: &str) -> Option<String> {
        self.config(name)?.model.clone()
    }

    fn prompt(&self, name: &str) -> Option<String> {
        let lock = self.project?.lock.as_ref()?;
        lock.suites.get(name)?.prompt.map(|digest| digest.short())
    }

    fn grader(&self, name: &str) -> String {
        let id = self.config(name).and_then(|suite| suite.grader.clone());
        let Some(id) = id else {
            return "built-in".to_owned();
        };
        match self.grader_lock(&id) {
            Some(lock) => format!("{id}@{}", lock.version),
            None => id,
        }
    }

    fn grader_ids(&self) -> impl Iterator<Item = &'a str> + '_ {
        self.project
            .and_then(|project| project.lock.as_ref())
            .into_iter()
            .flat_map(|lock| lock.graders.keys())
            .map(String::as_str)
    }

    fn grader_lock(&self, id: &str) -> Option<&'a crate::project::lock::GraderLock> {
        self.project?.lock.as_ref()?.graders.get(id)
    }

    fn cases(&self, name: &str) -> BTreeMap<&'a str, &'a CaseLock> {
        let entries = self
            .project
            .and_then(|project| project.lock.as_ref())
            .and_then(|lock| lock.cases.get(name));
        entries
            .into_iter()
            .flat_map(|entries| entries.iter())
            .collect()
    }

    fn baseline(&self, name: &str) -> BTreeMap<&'a str, &'a BaselineEntry> {
        let baseline: Option<&'a SuiteBaseline> = self
            .project
            .and_then(|project| project.baselines.get(name))
            .map(AsRef::as_ref);
        baseline
            .and_then(SuiteBaseline::entries)
            .into_iter()
            .flatten()
            .map(|(id, entry)| (id.as_str(), entry))
            .collect()
    }

    fn pass_rate(&self, name: &str) -> Option<f64> {
        let entries = self.baseline(name);
        let passed = entries.values().filter(|entry| entry.passed).count();
        (!entries.is_empty()).then(|| 100.0 * passed as f64 / entries.len() as f64)
    }

    fn stratum(&self, name: &str, id: &str) -> Option<String> {
        let case = self.project?.suite(name)?.case(id)?;
        case.value()
            .get("stratum")
            .and_then(serde_json::Value::as_str)
            .map(str::to_owned)
    }
}
