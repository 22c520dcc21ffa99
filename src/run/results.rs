//! The results file a run writes (`.evalock/results.json` by default): every case's status,
//! reasons, normalized completion, digests, timing and samples, and the run's findings.
//! `accept` records baselines from it, `review` diffs it, reporters render its findings.
//! Cases are sorted by suite then case id, so shard results merge by concatenation
//! (`evalock merge`, [`crate::commands::merge`]).

use crate::baselines::BaselineContext;
use crate::digest::Digest;
use crate::error::{Error, Result};
use crate::finding::Finding;
use crate::run::shard::ShardRecord;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

pub const RESULTS_SCHEMA: &str = "evalock.results/v1";

fn is_default_stretch_high(share: &f64) -> bool {
    *share == crate::project::config::default_stretch_high()
}

pub use crate::baselines::SuiteNoise;

/// One stratum's cases, passes and failures (errors count as neither), as
/// [`crate::run::strata`] counts them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct StratumRate {
    pub cases: usize,
    pub pass: usize,
    pub fail: usize,
    pub rate: Option<f64>,
}
/// Where `run` writes and `accept`/`review` read by default, relative to the project root.
pub use crate::project::config::DEFAULT_RESULTS_PATH;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Results {
    pub schema: String,
    pub evalock_version: String,
    /// The content that was run: `working tree`.
    pub source: String,
    /// HEAD when the run started, if the project is in a git repository.
    pub commit: Option<String>,
    /// Every suite ran (no `--suite` filter): orphaned baseline entries were judged.
    pub full: bool,
    /// `--fail-on-diff` (or `policy.fail_on_diff`): moved completions exit 3.
    pub fail_on_diff: bool,
    /// `policy.stretch_high` of the run, for `merge` to judge the ceiling of the whole run
    /// as `run` does (written only when it is not the default).
    #[serde(
        default = "crate::project::config::default_stretch_high",
        skip_serializing_if = "is_default_stretch_high"
    )]
    pub stretch_high: f64,
    /// Set by `run --shard K/N`: which shard this is and what it ran against. `merge`
    /// checks it and leaves it out of the merged (unsharded) results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<ShardRecord>,
    /// Suites that ran, by name.
    pub suites: Vec<String>,
    /// Per suite that ran, what produced its completions
    /// ([`completion_source`](crate::run::completer::completion_source)): `accept` refuses
    /// results of a completer that is no longer the configured one. Absent in files of
    /// older versions, which `accept` refuses too.
    #[serde(default)]
    pub completions: BTreeMap<String, String>,
    /// Status -> number of cases.
    pub counts: BTreeMap<Status, usize>,
    /// Pass rates per stratum (cases that name one).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub strata: BTreeMap<String, StratumRate>,
    /// `run --repeat`: each suite's noise floor.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub noise: BTreeMap<String, SuiteNoise>,
    /// Sorted by suite, then case id.
    pub cases: Vec<CaseResult>,
    /// Everything the run found, in report order.
    pub findings: Vec<Finding>,
}

/// A case's outcome, compared with its baseline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Status {
    /// Passes, and matches its baseline (or has none to match).
    Pass,
    /// Passes, but the normalized completion moved from the baseline.
    Moved,
    /// Fails (and failed at baseline, or has no baseline).
    Fail,
    /// Passed at baseline, fails now.
    Regressed,
    /// Failed at baseline, passes now.
    Improved,
    /// No score: the completer or grader failed, or the case cannot be judged.
    Error,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pass => "PASS",
            Status::Moved => "MOVED",
            Status::Fail => "FAIL",
            Status::Regressed => "REGRESSED",
            Status::Improved => "IMPROVED",
            Status::Error => "ERROR",
        }
    }

    /// Whether `accept` may record the case as last-good.
    pub fn is_passing(self) -> bool {
        matches!(self, Status::Pass | Status::Moved | Status::Improved)
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What the case's baseline entry allowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BaselineUse {
    /// The suite configures no `baseline`.
    None,
    /// No entry for the case yet (EL404).
    Missing,
    /// Recorded against another context: not compared (EL401).
    Drifted,
    /// The entry or file fails its own digest: not compared (EL402).
    Tampered,
    /// Compared.
    Compared,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CaseResult {
    pub suite: String,
    pub case_id: String,
    pub case_version: u64,
    pub file: String,
    pub line: u32,
    pub end_line: u32,
    pub status: Status,
    /// Reason codes of failing samples (deduplicated), or what went wrong.
    pub reasons: Vec<String>,
    /// Digest of `completion`: the most common normalized completion across samples.
    pub digest: Option<Digest>,
    pub completion: Option<String>,
    pub baseline: BaselineUse,
    pub baseline_digest: Option<Digest>,
    /// The context the completion was produced against (what `accept` records).
    pub context: BaselineContext,
    /// Share of samples whose normalized completion equals `completion`.
    pub agreement: f64,
    pub duration_ms: u64,
    pub samples: Vec<SampleResult>,
    /// The case's `stratum`, for pass rates per stratum (`evalock compare`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stratum: Option<String>,
    /// The case says `"critical": true`: its regressions always block a comparison.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub critical: bool,
    /// Envelope channels (`size`, `time`) past their slack over last-good (EL510).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub envelope: Vec<String>,
    /// `run --repeat`: the share of repeats whose verdict was not the case's usual one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flip_rate: Option<f64>,
    /// Each assertion of the case over the modal completion, as its grader judged it
    /// ([`crate::graders::assertion_outcomes`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub assertions: Vec<crate::graders::AssertionOutcome>,
    /// The tokens the completer reported for the modal completion (its envelope's `usage`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
}

/// What the completer said a completion cost: its envelope's `usage`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Usage {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SampleResult {
    pub sample: u32,
    /// PASS, FAIL or ERROR.
    pub status: Status,
    pub digest: Option<Digest>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
    pub reasons: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub duration_ms: u64,
}

/// What to do when a results file is missing: run first, and for a file named with
/// `--from`, write it there with `--out`.
fn no_results_message(display: &str) -> String {
    if display == DEFAULT_RESULTS_PATH {
        format!("no results at {display}: run `evalock run` first (or pass --from FILE)")
    } else {
        format!(
            "no results at {display}: `evalock run --out {display}` writes them there (without --from, {DEFAULT_RESULTS_PATH} is read)"
        )
    }
}

impl Results {
    pub fn render(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).unwrap_or_default();
        text.push('\n');
        text
    }

    /// Reads a results file; `display` names it in messages.
    pub fn read(path: &Path, display: &str) -> Result<Results> {
        let bytes = match std::fs::read(path) {
            Ok(bytes) => bytes,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                return Err(Error::Usage(no_results_message(display)))
            }
            Err(error) => return Err(Error::io(display, error)),
        };
        Results::parse(display, &bytes)
    }

    /// Parses a results file's bytes; `label` names it in messages.
    pub fn parse(label: &str, bytes: &[u8]) -> Result<Results> {
        let results: Results = serde_json::from_slice(bytes)
            .map_err(|error| Error::malformed_json(label, bytes, &error))?;
        if results.schema != RESULTS_SCHEMA {
            return Err(Error::malformed(
                format!("{label}:1"),
                format!("schema `{}` is not `{RESULTS_SCHEMA}`", results.schema),
            ));
        }
        Ok(results)
    }

    pub fn count(cases: &[CaseResult]) -> BTreeMap<Status, usize> {
        let mut counts = BTreeMap::new();
        for case in cases {
            *counts.entry(case.status).or_insert(0) += 1;
        }
        counts
    }
}
