//! `[policy]`: the gate-wide settings and their defaults, apart so the defaults that
//! validation quotes in its messages live next to the keys they fill.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The `[policy]` keys EL110 guards: a change that makes one more lenient is refused
/// against the base.
pub const POLICY_KEYS: [&str; 6] = [
    "agreement_min",
    "fail_on_diff",
    "flaky_max",
    "max_output_bytes",
    "stretch_high",
    "timeout_secs",
];

/// Gate-wide settings.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Policy {
    /// Minimum share of samples that must agree (EL505).
    #[serde(default = "default_agreement_min")]
    pub agreement_min: f64,
    /// Exit 3 when completions moved but still pass.
    #[serde(default)]
    pub fail_on_diff: bool,
    /// Environment variables never passed to completers or graders (besides
    /// `GITHUB_TOKEN` and `ACTIONS_*`, which are always removed).
    #[serde(default)]
    pub secrets: Vec<String>,
    /// Per-case completer timeout, in seconds (at least 1).
    #[serde(default = "default_timeout_secs")]
    #[schemars(range(min = 1))]
    pub timeout_secs: u64,
    /// Largest completion accepted, in bytes (at least 1).
    #[serde(default = "default_max_output_bytes")]
    #[schemars(range(min = 1))]
    pub max_output_bytes: u64,
    /// Share of `run --repeat` repeats a case's verdict may flip before it is flaky (EL511)
    /// and stops moving the gate; 0 makes any flip flaky.
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub flaky_max: f64,
    /// A `stretch` stratum passing this share or more is too easy (EL508, the seeds'
    /// `--stretch-high`): its cases no longer stretch.
    #[serde(default = "default_stretch_high")]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub stretch_high: f64,
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            agreement_min: default_agreement_min(),
            fail_on_diff: false,
            secrets: Vec::new(),
            timeout_secs: default_timeout_secs(),
            max_output_bytes: default_max_output_bytes(),
            flaky_max: 0.0,
            stretch_high: default_stretch_high(),
        }
    }
}

pub fn default_stretch_high() -> f64 {
    0.80
}

fn default_agreement_min() -> f64 {
    1.0
}
pub(super) fn default_timeout_secs() -> u64 {
    60
}
pub(super) fn default_max_output_bytes() -> u64 {
    1024 * 1024
}
