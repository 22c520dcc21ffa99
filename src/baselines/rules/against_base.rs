//! EL406 and EL407: what a change did to the baselines compared with the base revision.

use super::entry_location;
use super::Side;
use crate::baselines::{BaselineEntry, BaselineState, SuiteBaseline};
use crate::cases::suite::SuiteModel;
use crate::finding::{Finding, Location, Subject};
use crate::graders::rules::active_cases;
use crate::rules::RuleId;
use std::collections::BTreeMap;

/// Whether two entries record a different completion or context (reason and commit aside).
/// Completions compare by what they hash to: a check keeps digests, not completions.
fn entry_changed(
    (baseline, id, current): (&SuiteBaseline, &str, &BaselineEntry),
    base: Option<(&SuiteBaseline, &BaselineEntry)>,
) -> bool {
    base.is_none_or(|(base_baseline, base)| {
        base.digest != current.digest
            || base_baseline.stored_digest(id, base) != baseline.stored_digest(id, current)
            || base.context != current.context
            || base.passed != current.passed
    })
}

/// EL110: the noise floor recorded beside the baselines is higher than the base's: more
/// of a suite's changes would be called "within noise". A first floor, or a lower one, is
/// not a loosening.
pub fn noise_floor_raised(
    base: &Side<'_>,
    suite: &SuiteModel,
    baseline: &SuiteBaseline,
) -> Option<Finding> {
    let (now, line) = baseline.noise()?;
    let (then, _) = base.baselines.get(&suite.name)?.noise()?;
    (now.mde > then.mde).then(|| {
        Finding::new(
            RuleId::PolicyLoosened,
            Subject::suite(&suite.name),
            format!(
                "{} raises suite `{}`'s noise floor from {:.1} to {:.1} points, compared with {}: larger changes would pass as within noise",
                baseline.path, suite.name, then.mde, now.mde, base.source
            ),
        )
        .at(Location::line(&baseline.path, line))
        .help(format!(
            "measure it again (`evalock run --repeat N`, then `evalock accept`) after reducing the noise; if the wider floor is intended, give a commit since the base the trailer `Evalock-Approved: EL110 {}: <why>`",
            baseline.path
        ))
        .discriminator("noise-floor")
    })
}

/// EL406: compared with the base, baselines changed without a reason, unless a commit
/// since the base carries a `Rebaseline-Reason:` trailer. A re-recording made by
/// `evalock accept` carries one: `--reason` is required, and the entry names the commit of
/// the run it came from. An entry changed by hand keeps the base's reason and run commit;
/// an entry, or the whole file, deleted by hand carries none. Entries of cases that were
/// retired or removed go without one: `accept` drops them (EL405), and EL103 guards the
/// cases themselves.
pub fn rebaselined_without_reason(
    project: &Side<'_>,
    base: &Side<'_>,
    suite: &SuiteModel,
    baseline: &SuiteBaseline,
) -> Vec<Finding> {
    if !project.rebaseline_reasons.is_empty() {
        return Vec::new();
    }
    let base_baseline = base.baselines.get(&suite.name).map(|baseline| &**baseline);
    let base_entries = base_baseline.and_then(SuiteBaseline::entries);
    let mut findings = changed_without_reason(base, suite, baseline, base_baseline);
    if let Some(base_entries) = base_entries {
        let gone = if project.baselines.contains_key(&suite.name) {
            "was deleted"
        } else {
            "is no longer configured (its `baseline` key left evalock.toml)"
        };
        findings.extend(removed_without_reason(
            base,
            suite,
            baseline,
            base_entries,
            gone,
        ));
    }
    findings
}

/// Whether a changed entry says why it changed: a reason, and one that is new or comes
/// with a new run.
fn entry_has_reason(entry: &BaselineEntry, base_entry: Option<&BaselineEntry>) -> bool {
    !entry.reason.trim().is_empty()
        && base_entry.is_none_or(|base_entry| {
            base_entry.reason != entry.reason
                || (entry.commit.is_some() && base_entry.commit != entry.commit)
        })
}

/// The base revision as git names it (`a012454` from `main (a012454)`), for commands.
fn base_revision<'a>(base: &Side<'a>) -> &'a str {
    base.source
        .rsplit_once('(')
        .and_then(|(_, rest)| rest.strip_suffix(')'))
        .unwrap_or(base.source)
}

fn rerecord_or_trailer_help(base: &Side<'_>, suite: &SuiteModel, path: &str) -> String {
    format!(
        "restore it (`git checkout {} -- {path}`), run `evalock run --suite {1}` and record the change with `evalock accept --suite {1} --reason \"…\"`; or give a commit since the base a `Rebaseline-Reason: …` trailer",
        base_revision(base),
        suite.name
    )
}

/// Entries that differ from the base without a reason of their own.
fn changed_without_reason(
    base: &Side<'_>,
    suite: &SuiteModel,
    baseline: &SuiteBaseline,
    base_baseline: Option<&SuiteBaseline>,
) -> Vec<Finding> {
    let Some(entries) = baseline.entries() else {
        return Vec::new();
    };
    entries
        .iter()
        .filter_map(|(id, entry)| {
            let base_side = base_baseline.and_then(|base_baseline| {
                Some((base_baseline, base_baseline.entries()?.get(id)?))
            });
            let base_entry = base_side.map(|(_, base_entry)| base_entry);
            if !entry_changed((baseline, id, entry), base_side)
                || entry_has_reason(entry, base_entry)
            {
                return None;
            }
            let why = match base_entry {
                Some(_) if !entry.reason.trim().is_empty() => format!(
                    "but it keeps the reason (\"{}\") and the run commit recorded there, so it was not re-recorded by `evalock accept`",
                    entry.reason.trim()
                ),
                _ => "with no reason recorded".to_owned(),
            };
            Some(
                Finding::new(
                    RuleId::RebaselineWithoutReason,
                    Subject::case(&suite.name, id),
                    format!(
                        "baseline entry `{id}` in {} changed since {} {why}",
                        baseline.path, base.source
                    ),
                )
                .at(entry_location(baseline, id))
                .help(rerecord_or_trailer_help(base, suite, &baseline.path)),
            )
        })
        .collect()
}

/// Entries of active cases that the base had and this change deleted, one by one or with
/// the whole file. `accept` never drops the entry of an active case, so only a hand did.
fn removed_without_reason(
    base: &Side<'_>,
    suite: &SuiteModel,
    baseline: &SuiteBaseline,
    base_entries: &BTreeMap<String, BaselineEntry>,
    gone: &str,
) -> Vec<Finding> {
    let removed: Vec<&str> = active_cases(suite)
        .map(|case| &*case.id)
        .filter(|id| base_entries.contains_key(*id))
        .filter(|id| match &baseline.state {
            BaselineState::Parsed { file, .. } => !file.entries.contains_key(*id),
            BaselineState::Absent => true,
            // Refused as EL402 already.
            BaselineState::Malformed { .. } | BaselineState::Directory | BaselineState::Symlink => {
                false
            }
        })
        .collect();
    let help = format!(
        "record it again: `evalock run --suite {0}`, then `evalock accept --suite {0} --reason \"…\"` (or restore it: `git checkout {1} -- {2}`); or give a commit since the base a `Rebaseline-Reason: …` trailer",
        suite.name,
        base_revision(base),
        baseline.path
    );
    if matches!(baseline.state, BaselineState::Absent) {
        if removed.is_empty() {
            return Vec::new();
        }
        return vec![Finding::new(
            RuleId::RebaselineWithoutReason,
            Subject::suite(&suite.name),
            format!(
                "baseline {} of suite `{}` {gone} since {}, with the entries of {} active case{} ({}): dropping a baseline is a re-recording, and no reason was recorded",
                baseline.path,
                suite.name,
                base.source,
                removed.len(),
                if removed.len() == 1 { "" } else { "s" },
                removed.join(", ")
            ),
        )
        .at(Location::file(&baseline.path))
        .help(help)];
    }
    removed
        .into_iter()
        .map(|id| {
            let case_location = suite
                .case(id)
                .map(|case| format!(" ({}:{})", case.file, case.line))
                .unwrap_or_default();
            Finding::new(
                RuleId::RebaselineWithoutReason,
                Subject::case(&suite.name, id),
                format!(
                    "baseline entry `{id}` was deleted from {} since {}, but case `{id}`{case_location} is still active: deleting an entry is a re-recording, and no reason was recorded",
                    baseline.path, base.source
                ),
            )
            .at(Location::file(&baseline.path))
            .help(help.clone())
        })
        .collect()
}

/// EL407: one change both edits the suite's contracts or prompt and re-records baselines
/// that existed before.
pub fn mixed_change(base: &Side<'_>, suite: &SuiteModel, baseline: &SuiteBaseline) -> Vec<Finding> {
    let (Some(base_suite), Some(entries)) = (base.suite(&suite.name), baseline.entries()) else {
        return Vec::new();
    };
    let Some(base_baseline) = base.baselines.get(&suite.name) else {
        return Vec::new();
    };
    let Some(base_entries) = base_baseline.entries() else {
        return Vec::new();
    };
    let rerecorded: Vec<&String> = entries
        .iter()
        .filter(|(id, entry)| {
            base_entries.get(*id).is_some_and(|base_entry| {
                entry_changed((baseline, id, entry), Some((base_baseline, base_entry)))
            })
        })
        .map(|(id, _)| id)
        .collect();
    if rerecorded.is_empty() {
        return Vec::new();
    }
    let mut contract_changes: Vec<String> = Vec::new();
    if suite.prompt_digest() != base_suite.prompt_digest() {
        contract_changes.push("its prompt".into());
    }
    for case in suite.cases() {
        if base_suite
            .case(&case.id)
            .is_some_and(|base_case| base_case.contract_digest() != case.contract_digest())
        {
            contract_changes.push(format!("case `{}`", case.id));
        }
    }
    if contract_changes.is_empty() {
        return Vec::new();
    }
    vec![Finding::new(
        RuleId::MixedChange,
        Subject::suite(&suite.name),
        format!(
            "suite `{}`: this change edits {} and re-records {} existing baseline entr{}",
            suite.name,
            contract_changes.join(", "),
            rerecorded.len(),
            if rerecorded.len() == 1 { "y" } else { "ies" }
        ),
    )
    .at(Location::file(&baseline.path))]
}
