//! `evalock merge`: the results files of `run --shard 1/N` … `run --shard N/N` combined into
//! exactly the results file an unsharded run writes, after proving they belong together:
//! one file per shard, all of one N, one evalock version, commit, source, suite selection,
//! gate setting and input identity, and every case in the shard that owns it.

use crate::commands::run::RunOutcome;
use crate::error::{Error, Result};
use crate::finding::sort_findings;
use crate::run::results::Results;
use crate::run::shard::{shard_of, Shard, ShardRecord};
use crate::source::atomic::write_atomic;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone)]
pub struct MergeOptions {
    /// The shards' results files, in any order.
    pub inputs: Vec<PathBuf>,
    /// Where the merged results go.
    pub out: PathBuf,
    /// Gate moved completions (exit 3) even when the shards ran without `--fail-on-diff`.
    pub fail_on_diff: bool,
}

/// One shard's results, with the name of its file for messages.
struct ShardFile {
    label: String,
    record: ShardRecord,
    results: Results,
}

pub fn merge(options: &MergeOptions) -> Result<RunOutcome> {
    if options.inputs.is_empty() {
        return Err(Error::Usage(
            "name the shards' results files: `evalock merge shard-*.json --out results.json`"
                .into(),
        ));
    }
    super::refuse_project_file("--out", Path::new("."), &options.out)?;
    let shards = options
        .inputs
        .iter()
        .map(read_shard)
        .collect::<Result<Vec<_>>>()?;
    let shards = complete_set(shards)?;
    let first = &shards[0];
    for shard in &shards[1..] {
        same_run(first, shard)?;
    }
    let mut owner: BTreeMap<(&str, &str), &str> = BTreeMap::new();
    for shard in &shards {
        for case in &shard.results.cases {
            if let Some(other) = owner.insert((&case.suite, &case.case_id), &shard.label) {
                return Err(Error::malformed(
                    &shard.label,
                    format!(
                        "case `{}` of suite `{}` is also in {other}: each case belongs to exactly one shard",
                        case.case_id, case.suite
                    ),
                ));
            }
        }
    }

    for shard in &shards {
        verify_partition(shard)?;
    }

    let mut merged = first.results.clone();
    merged.shard = None;
    merged.fail_on_diff = first.results.fail_on_diff || options.fail_on_diff;
    merged.cases = shards
        .iter()
        .flat_map(|shard| shard.results.cases.iter().cloned())
        .collect();
    merged
        .cases
        .sort_by(|left, right| (&left.suite, &left.case_id).cmp(&(&right.suite, &right.case_id)));
    merged.counts = Results::count(&merged.cases);
    merged.strata = crate::run::strata::rates(&merged.cases);
    merged.findings = shards
        .iter()
        .flat_map(|shard| shard.results.findings.iter().cloned())
        .collect();
    // Each shard held part of every stratum: the ceiling is judged on the whole run.
    merged.findings.extend(crate::run::strata::ceiling_findings(
        &merged.cases,
        merged.stretch_high,
    ));
    sort_findings(&mut merged.findings);

    write_atomic(&options.out, merged.render().as_bytes())?;
    Ok(RunOutcome {
        report: crate::report::Report::of_run(&merged),
        results: merged,
        results_path: options.out.clone(),
    })
}

fn read_shard(path: &PathBuf) -> Result<ShardFile> {
    let label = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|error| match error.kind() {
        std::io::ErrorKind::NotFound => Error::Usage(format!(
            "{label}: no such file; each shard writes one with `evalock run --shard K/N --out FILE`"
        )),
        _ => Error::io(&label, error),
    })?;
    let results = Results::parse(&label, &bytes)?;
    let Some(record) = results.shard.clone() else {
        return Err(Error::malformed(
            format!("{label}:1"),
            "not the results of a shard: write each with `evalock run --shard K/N --out FILE`",
        ));
    };
    if record.count == 0 || record.index == 0 || record.index > record.count {
        return Err(Error::malformed(
            format!("{label}:1"),
            format!(
                "shard {}/{} is not a shard: K must be between 1 and N",
                record.index, record.count
            ),
        ));
    }
    if Results::count(&results.cases) != results.counts {
        return Err(Error::malformed(
            format!("{label}:1"),
            "`counts` does not match the cases listed: the file was edited or truncated",
        ));
    }
    Ok(ShardFile {
        label,
        record,
        results,
    })
}

/// The shards sorted by K, refusing a mix of N, a shard twice, or a shard missing.
fn complete_set(mut shards: Vec<ShardFile>) -> Result<Vec<ShardFile>> {
    let count = shards[0].record.count;
    if let Some(other) = shards.iter().find(|shard| shard.record.count != count) {
        return Err(Error::malformed(
            &other.label,
            format!(
                "shard {} is one of {} shards, but {} is shard {}: every shard must come from the same `--shard K/N` split",
                other.record.shard(),
                other.record.count,
                shards[0].label,
                shards[0].record.shard()
            ),
        ));
    }
    shards.sort_by_key(|shard| shard.record.index);
    for pair in shards.windows(2) {
        if pair[0].record.index == pair[1].record.index {
            return Err(Error::malformed(
                &pair[1].label,
                format!(
                    "shard {} again (also {}): pass each shard's results once",
                    pair[1].record.shard(),
                    pair[0].label
                ),
            ));
        }
    }
    let missing: Vec<String> = (1..=count)
        .filter(|index| !shards.iter().any(|shard| shard.record.index == *index))
        .map(|index| Shard { index, count }.to_string())
        .collect();
    if !missing.is_empty() {
        let given: Vec<String> = shards
            .iter()
            .map(|shard| format!("{} ({})", shard.record.shard(), shard.label))
            .collect();
        return Err(Error::malformed(
            &shards[0].label,
            format!(
                "shard {} {} missing; given: {}. Pass every shard's results: `evalock run --shard K/{count} --out FILE` for K = 1..{count}",
                missing.join(", "),
                if missing.len() == 1 { "is" } else { "are" },
                given.join(", ")
            ),
        ));
    }
    Ok(shards)
}

/// Refuses shards that ran different evalock versions, commits, content or options.
fn same_run(first: &ShardFile, other: &ShardFile) -> Result<()> {
    let (a, b) = (&first.results, &other.results);
    let differs = |what: &str, left: String, right: String| {
        Err(Error::malformed(
            &other.label,
            format!(
                "{what} is {right}, but {} has {left}: merge only shards of one run (same commit, evalock.toml, evalock.lock and options)",
                first.label
            ),
        ))
    };
    let show = |value: &Option<String>| value.clone().unwrap_or_else(|| "none".into());
    if a.evalock_version != b.evalock_version {
        return differs(
            "evalock version",
            a.evalock_version.clone(),
            b.evalock_version.clone(),
        );
    }
    if a.commit != b.commit {
        return differs("commit", show(&a.commit), show(&b.commit));
    }
    if a.source != b.source {
        return differs("source", a.source.clone(), b.source.clone());
    }
    if a.suites != b.suites || a.full != b.full {
        return differs(
            "the suite selection",
            suite_selection(a),
            suite_selection(b),
        );
    }
    if a.fail_on_diff != b.fail_on_diff {
        return differs(
            "fail_on_diff",
            a.fail_on_diff.to_string(),
            b.fail_on_diff.to_string(),
        );
    }
    if a.completions != b.completions {
        // The identity does not read the completer's script files; an edit between
        // shards would otherwise leave the merge claiming the first shard's script.
        return differs(
            "what produced the completions (the `completer`, the script files its argv names, `model` and `samples`)",
            completion_sources(a),
            completion_sources(b),
        );
    }
    if first.record.identity != other.record.identity {
        return differs(
            "the input identity (evalock.toml, evalock.lock, case, prompt and baseline content)",
            first.record.identity.to_string(),
            other.record.identity.to_string(),
        );
    }
    Ok(())
}

/// Each suite's completion source, as `suite=source` pairs in suite order.
fn completion_sources(results: &Results) -> String {
    let pairs: Vec<String> = results
        .completions
        .iter()
        .map(|(suite, source)| format!("{suite}={source}"))
        .collect();
    pairs.join(", ")
}

/// The suites a run selected, as its command line did: naming every suite with `--suite`
/// is not a full run (orphaned baseline entries are not judged), so the two must read
/// differently.
fn suite_selection(results: &Results) -> String {
    let suites = results
        .suites
        .iter()
        .map(|suite| format!("`{suite}`"))
        .collect::<Vec<_>>()
        .join(", ");
    match results.full {
        true => format!("every suite ({suites}, no --suite)"),
        false => format!("--suite {suites}"),
    }
}

/// Every case and finding of a shard must be one the shard owns: anything else means the
/// file was produced by another partition or edited.
fn verify_partition(shard: &ShardFile) -> Result<()> {
    let record = &shard.record;
    if let Some(case) = shard
        .results
        .cases
        .iter()
        .find(|case| shard_of(&case.suite, &case.case_id, record.count) != record.index)
    {
        return Err(Error::malformed(
            &shard.label,
            format!(
                "case `{}` of suite `{}` belongs to shard {}/{}, not {}: the file was edited or written by another evalock",
                case.case_id,
                case.suite,
                shard_of(&case.suite, &case.case_id, record.count),
                record.count,
                record.shard()
            ),
        ));
    }
    if let Some(finding) = shard
        .results
        .findings
        .iter()
        .find(|finding| !record.shard().owns_finding(finding))
    {
        return Err(Error::malformed(
            &shard.label,
            format!(
                "finding {} ({}) belongs to shard {}/{}, not {}: the file was edited or written by another evalock",
                finding.rule.rule().id,
                finding.message,
                Shard::owner_of(finding, record.count),
                record.count,
                record.shard()
            ),
        ));
    }
    Ok(())
}
