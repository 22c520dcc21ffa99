//! `evalock compare --base REV`: the last-good side of a comparison read from the
//! baselines committed at a revision, so a pull request's run is compared with what its
//! base accepted, behaviour by behaviour.

use crate::commands::project::Project;
use crate::error::{Error, Result};
use crate::run::results::{BaselineUse, CaseResult, Results, Status, RESULTS_SCHEMA};
use crate::source::SourceSpec;
use std::collections::BTreeMap;
use std::path::Path;

/// The baselines at `revision` as the results of a run: each entry a case that passed
/// (or failed, with the reasons it was accepted failing), with its completion and time.
pub fn baselines_as_results(project_root: &Path, revision: &str) -> Result<Results> {
    let source = crate::source::open(project_root, &SourceSpec::Revision(revision.to_owned()))?;
    let project = Project::load_if_configured(source.as_ref())?.ok_or_else(|| {
        Error::Usage(format!(
            "{} has no evalock.toml, so it has no baselines to compare with",
            source.describe()
        ))
    })?;
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
    Ok(Results {
        schema: RESULTS_SCHEMA.to_owned(),
        evalock_version: env!("CARGO_PKG_VERSION").to_owned(),
        source: source.describe(),
        commit: None,
        full: true,
        fail_on_diff: false,
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
    })
}
