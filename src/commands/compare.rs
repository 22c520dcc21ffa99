//! `evalock compare --base REV`: the last-good side of a comparison read from the
//! baselines committed at a revision, so a pull request's run is compared with what its
//! base accepted, behaviour by behaviour.

use crate::commands::project::Project;
use crate::error::{Error, Result};
use crate::finding::{Finding, Location, Subject};
use crate::rules::RuleId;
use crate::run::compare::{Comparison, Verdict};
use crate::run::results::{BaselineUse, CaseResult, Results, Status, RESULTS_SCHEMA};
use crate::source::SourceSpec;
use std::collections::BTreeMap;
use std::path::Path;

/// The baselines at `revision` as the results of a run: each entry a case that passed
/// (or failed, with the reasons it was accepted failing), with its completion and time.
pub fn baselines_as_results(project_root: &Path, revision: &str) -> Result<Results> {
    let source = crate::source::open(project_root, &SourceSpec::Revision(revision.to_owned()))?;
    baselines_in(source.as_ref())
}

/// What a run whose baselines were recorded against another context (a model, prompt or
/// completer swap: EL401, so not compared digest by digest) did to their verdicts: its
/// drifted cases compared with the working tree's baselines, behaviour by behaviour.
/// `None` when no case drifted.
pub fn drifted_against_baselines(project_root: &Path, results: &Results) -> Option<Comparison> {
    let drifted: std::collections::BTreeSet<(&str, &str)> = results
        .cases
        .iter()
        .filter(|case| case.baseline == BaselineUse::Drifted)
        .map(|case| (case.suite.as_str(), case.case_id.as_str()))
        .collect();
    if drifted.is_empty() {
        return None;
    }
    let mut last_good = baselines_in(&crate::source::WorktreeSource::new(project_root)).ok()?;
    let keep = |case: &CaseResult| drifted.contains(&(case.suite.as_str(), case.case_id.as_str()));
    last_good.cases.retain(keep);
    let mut now = results.clone();
    now.cases.retain(keep);
    Some(crate::run::compare::compare(
        &last_good,
        &now,
        "last-good",
        "this run",
        crate::run::compare::Slack::default(),
    ))
}

fn baselines_in(source: &dyn crate::source::ContentSource) -> Result<Results> {
    let project = Project::load_if_configured(source)?.ok_or_else(|| {
        Error::Usage(format!(
            "{} has no evalock.toml, so it has no baselines to compare with",
            source.describe()
        ))
    })?;
    Ok(baselines_of(&project, source.describe()))
}

/// The baselines of a loaded project as the results of a run (see
/// [`baselines_as_results`]); `source` names the snapshot it was loaded from.
pub fn baselines_of(project: &Project, source: String) -> Results {
    let mut cases = Vec::new();
    for (suite_name, baseline) in &project.baselines {
        let Some(entries) = baseline.entries() else {
            continue;
        };
        let suite = project.suite(suite_name);
        for (case_id, entry) in entries {
            let case = suite.and_then(|suite| suite.case(case_id));
            let (file, line, end_line) = match case {
                Some(case) => (case.file.to_string(), case.line, case.end_line),
                None => (
                    baseline.path.clone(),
                    baseline.line_of(case_id).unwrap_or(1),
                    baseline.line_of(case_id).unwrap_or(1),
                ),
            };
            let value = case.map(|case| case.value());
            cases.push(CaseResult {
                suite: suite_name.clone(),
                case_id: case_id.clone(),
                case_version: case.map_or(1, |case| case.version),
                file,
                line,
                end_line,
                status: match entry.passed {
                    true => Status::Pass,
                    false => Status::Fail,
                },
                reasons: entry.failure.clone(),
                digest: Some(entry.digest),
                completion: Some(entry.completion.clone()),
                baseline: BaselineUse::Compared,
                baseline_digest: Some(entry.digest),
                context: entry.context.clone(),
                agreement: 1.0,
                duration_ms: entry.duration_ms.unwrap_or(0),
                samples: Vec::new(),
                stratum: value
                    .and_then(|value| value.get("stratum"))
                    .and_then(serde_json::Value::as_str)
                    .map(str::to_owned),
                critical: value.and_then(|value| value.get("critical"))
                    == Some(&serde_json::Value::Bool(true)),
                envelope: Vec::new(),
                flip_rate: None,
                assertions: entry.assertions.clone(),
                usage: crate::run::envelope::usage(&entry.completion),
            });
        }
    }
    cases.sort_by(|a, b| (&a.suite, &a.case_id).cmp(&(&b.suite, &b.case_id)));
    let mut counts = BTreeMap::new();
    for case in &cases {
        *counts.entry(case.status).or_insert(0) += 1;
    }
    Results {
        schema: RESULTS_SCHEMA.to_owned(),
        evalock_version: env!("CARGO_PKG_VERSION").to_owned(),
        source,
        commit: None,
        full: true,
        fail_on_diff: false,
        stretch_high: project.config.policy.stretch_high,
        shard: None,
        suites: project.baselines.keys().cloned().collect(),
        completions: BTreeMap::new(),
        counts,
        strata: crate::run::strata::rates(&cases),
        noise: project
            .baselines
            .iter()
            .filter_map(|(suite, baseline)| Some((suite.clone(), *baseline.noise()?.0)))
            .collect(),
        cases,
        findings: Vec::new(),
    }
}

/// A comparison as findings, for a review: each regressed case at its line (EL501, with
/// its behaviour rows), and for each suite whose runs differ in context (another model,
/// prompt or completer) or that regressed, its matrix (EL512) on the suite's `model` line
/// of evalock.toml, else its prompt, so the review shows what a swap did where it was made.
pub fn findings(comparison: &Comparison, project_root: &Path) -> Vec<Finding> {
    let mut findings = Vec::new();
    let mut matrices: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for case in &comparison.cases {
        let rows: Vec<String> = case
            .behaviours
            .iter()
            .filter(|row| row.verdict != Verdict::Same)
            .map(|row| {
                let mark = |held: Option<bool>| match held {
                    Some(true) => "pass",
                    Some(false) => "fail",
                    None => "-",
                };
                format!(
                    "| {} | {} | {} | {} | {} |",
                    crate::report::markdown_escape(&case.case_id),
                    crate::report::markdown_escape(&row.behaviour),
                    mark(row.old),
                    mark(row.new),
                    row.verdict.as_str()
                )
            })
            .collect();
        matrices
            .entry(case.suite.as_str())
            .or_default()
            .extend(rows.iter().cloned());
        if case.verdict != Verdict::Regress {
            continue;
        }
        let lost: Vec<&str> = case
            .behaviours
            .iter()
            .filter(|row| row.verdict == Verdict::Regress && row.behaviour != "passes")
            .map(|row| row.behaviour.as_str())
            .collect();
        let message = format!(
            "case `{}` ({}:{}) held at {} and fails in {}{}",
            case.case_id,
            case.file,
            case.line,
            comparison.old,
            comparison.new,
            match lost.is_empty() {
                true => String::new(),
                false => format!(": lost {}", lost.join("; ")),
            }
        );
        findings.push(
            Finding::new(
                RuleId::Regressed,
                Subject::case(&case.suite, &case.case_id),
                message,
            )
            .at(Location::line(&case.file, case.line))
            .detail(format!(
                "| case | behaviour | old | new | verdict |\n| --- | --- | --- | --- | --- |\n{}",
                rows.join("\n")
            )),
        );
    }
    let config = std::fs::read_to_string(project_root.join(crate::project::config::CONFIG_FILE))
        .unwrap_or_default();
    for (suite, rows) in matrices {
        let differs: Vec<&String> = comparison
            .contexts_differ
            .iter()
            .filter(|change| change.starts_with(&format!("suite {suite}: ")))
            .collect();
        if differs.is_empty() && rows.is_empty() {
            continue;
        }
        let rate = comparison
            .rates
            .get(suite)
            .map(|rate| format!("; {}", rate.describe()))
            .unwrap_or_default();
        let changes = match differs.is_empty() {
            true => String::new(),
            false => format!(
                " ({})",
                differs
                    .iter()
                    .map(|change| change.trim_start_matches(&format!("suite {suite}: ")))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        findings.push(
            Finding::new(
                RuleId::BehaviourMatrix,
                Subject::suite(suite),
                format!(
                    "suite `{suite}`{changes} against {}: {} behaviours changed{rate}",
                    comparison.old,
                    rows.len()
                ),
            )
            .at(suite_anchor(&config, suite))
            .detail(match rows.is_empty() {
                true => "every behaviour held".to_owned(),
                false => format!(
                    "| case | behaviour | old | new | verdict |\n| --- | --- | --- | --- | --- |\n{}",
                    rows.join("\n")
                ),
            }),
        );
    }
    findings
}

/// Where a suite's matrix goes: its `model` line in evalock.toml, else its `prompt` line,
/// else its `name` line.
fn suite_anchor(config: &str, suite: &str) -> Location {
    let file = crate::project::config::CONFIG_FILE;
    let lines: Vec<&str> = config.lines().collect();
    let named = |line: &&str| {
        let line = line.trim();
        line.starts_with("name")
            && line.split_once('=').is_some_and(|(_, value)| {
                value.trim().trim_matches(|c| c == '"' || c == '\'') == suite
            })
    };
    let Some(start) = lines.iter().position(named) else {
        return Location::file(file);
    };
    let end = lines[start + 1..]
        .iter()
        .position(|line| line.trim_start().starts_with('['))
        .map_or(lines.len(), |offset| start + 1 + offset);
    let block_start = lines[..start]
        .iter()
        .rposition(|line| line.trim_start().starts_with('['))
        .unwrap_or(0);
    let key_line = |key: &str| {
        (block_start..end).find(|index| {
            let line = lines[*index].trim_start();
            line.strip_prefix(key)
                .is_some_and(|rest| rest.trim_start().starts_with('='))
        })
    };
    let index = key_line("model")
        .or_else(|| key_line("prompt"))
        .unwrap_or(start);
    Location::line(file, u32::try_from(index + 1).unwrap_or(u32::MAX))
}
