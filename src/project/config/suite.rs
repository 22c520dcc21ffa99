//! `[[suite]]`: one suite's keys as written, with the accessors the rest of the crate
//! reads them through.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toml::Spanned;

/// One suite: a set of golden cases judged against one prompt with one grader.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SuiteConfig {
    /// Suite name: letters, digits, `-`, `_`, `.`; used as a key in the lock.
    #[schemars(with = "String")]
    pub name: Spanned<String>,
    /// Globs of case files (JSONL, JSON or YAML), relative to the project root.
    pub cases: Vec<String>,
    /// How cases are identified when their records have no `id` (datasets of other
    /// runners): a key path (`"metadata.case_id"`), or `{ content = ["input"] }`, a digest
    /// of the named fields. Absent: each case's own string `id`.
    #[serde(default)]
    pub id: Option<CaseIdRule>,
    /// The prompt file, or several; their bytes are pinned.
    #[serde(default)]
    pub prompt: Option<OneOrMany>,
    /// Grader id from `[grader.<id>]`; the built-in grader when absent.
    #[serde(default)]
    pub grader: Option<String>,
    /// Last-good completions of this suite, written only by `evalock accept`.
    #[serde(default)]
    pub baseline: Option<String>,
    /// Completer argv (no shell): one JSON object on stdin per case, completion on stdout.
    #[serde(default)]
    pub completer: Option<Vec<String>>,
    /// `exact`, `ws-v1` or `json-v1`.
    #[serde(default = "default_normalizer")]
    pub normalizer: String,
    /// Model name, recorded in baselines.
    #[serde(default)]
    pub model: Option<String>,
    /// Samples per case, 1 to 1000 (a case's `n` overrides it).
    #[serde(default)]
    #[schemars(with = "Option<u32>", range(min = 1, max = 1000))]
    pub samples: Option<Spanned<u32>>,
    /// Per-case timeout for this suite, in seconds (at least 1).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub timeout_secs: Option<u64>,
    /// Envelope pins against last-good: the share a passing case's completion may grow
    /// (`size`, default 0.10) and its time (`time`, default 0.15, pinned only where
    /// last-good took a second or more) before EL510.
    #[serde(default)]
    pub envelope: Option<EnvelopeSlack>,
    /// The line of evalock.toml that writes each of `cases`, in order. Set by
    /// [`Config::parse`](super::Config::parse); findings about a glob (one that matches no file) point there.
    #[serde(skip)]
    #[schemars(skip)]
    pub case_glob_lines: Vec<u32>,
}

/// A suite's envelope slack: shares of growth allowed over last-good.
#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EnvelopeSlack {
    /// Characters of the normalized completion: 0.10 lets it grow by 10 %.
    #[serde(default)]
    #[schemars(range(min = 0.0))]
    pub size: Option<f64>,
    /// Milliseconds: 0.15 lets it take 15 % longer.
    #[serde(default)]
    #[schemars(range(min = 0.0))]
    pub time: Option<f64>,
}

impl EnvelopeSlack {
    /// The seeds' slack: a completion may grow by 10 %, a case take 15 % longer.
    pub const DEFAULT_SIZE: f64 = 0.10;
    pub const DEFAULT_TIME: f64 = 0.15;

    pub fn size_or_default(&self) -> f64 {
        self.size.unwrap_or(Self::DEFAULT_SIZE)
    }

    pub fn time_or_default(&self) -> f64 {
        self.time.unwrap_or(Self::DEFAULT_TIME)
    }
}

/// A suite's `id`: a key path, or the content of named fields.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum CaseIdRule {
    /// A dotted key path to a string or whole number: `"metadata.case_id"`.
    KeyPath(String),
    /// The identity is a digest of these fields, canonicalized as in case-v1.
    Content { content: Vec<String> },
}

fn default_normalizer() -> String {
    "exact".into()
}

impl SuiteConfig {
    pub fn name(&self) -> &str {
        self.name.get_ref()
    }

    /// Samples per case, when the suite sets them.
    pub fn samples(&self) -> Option<u32> {
        self.samples.as_ref().map(|samples| *samples.get_ref())
    }

    /// Each case glob with the line of evalock.toml that writes it (1 when not known).
    pub fn case_globs(&self) -> impl Iterator<Item = (&String, u32)> {
        self.cases.iter().enumerate().map(|(index, pattern)| {
            let line = self.case_glob_lines.get(index).copied().unwrap_or(1);
            (pattern, line)
        })
    }

    pub fn prompt_paths(&self) -> Vec<String> {
        match &self.prompt {
            None => Vec::new(),
            Some(OneOrMany::One(path)) => vec![path.clone()],
            Some(OneOrMany::Many(paths)) => paths.clone(),
        }
    }
}

#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum OneOrMany {
    One(String),
    Many(Vec<String>),
}
