//! `[grader.<id>]`: a grader's keys, its kind, and the version label that accepts a
//! string or an integer.

use schemars::JsonSchema;

/// The grader a suite names without configuring it (`grader = "promptfoo"`): promptfoo's
/// deterministic assertions, graded in process.
pub const PROMPTFOO_GRADER_ID: &str = "promptfoo";
/// The graders a suite may name without a `[grader.<id>]` table: promptfoo's assertions
/// and inspect_ai's `includes()` and `exact()` scorers, graded in process.
pub const IN_PROCESS_GRADER_IDS: [&str; 3] =
    [PROMPTFOO_GRADER_ID, "inspect-includes", "inspect-exact"];
use serde::{Deserialize, Serialize};
use toml::Spanned;

/// One grader: its version, pinned with what it runs (`kind`, `command`) and the digest
/// of its sources.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GraderConfig {
    pub version: VersionLabel,
    #[serde(default)]
    pub kind: GraderKind,
    #[serde(default)]
    pub sources: Vec<String>,
    /// argv of a `command` grader.
    #[serde(default)]
    #[schemars(with = "Option<Vec<String>>")]
    pub command: Option<Spanned<Vec<String>>>,
    /// JSONL of completions people labelled (`{"case_id", "completion", "verdict":
    /// "pass"|"fail", "labeller"}`): `evalock lock` measures the grader against them and
    /// pins the result; below the floors the grader's passes cannot make a run green.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<String>,
    /// The line of evalock.toml that says what the grader runs: its `command`, else its
    /// table header. Set by [`Config::parse`](super::Config::parse); findings about the grader point there.
    #[serde(skip)]
    pub line: u32,
    /// The line of evalock.toml that writes each of `sources`, in order. Set by
    /// [`Config::parse`](super::Config::parse); findings about a glob (one that matches no file) point there.
    #[serde(skip)]
    pub source_lines: Vec<u32>,
}

impl GraderConfig {
    /// Each `sources` glob with the line of evalock.toml that writes it (1 when not known).
    pub fn source_globs(&self) -> impl Iterator<Item = (&String, u32)> {
        self.sources.iter().enumerate().map(|(index, pattern)| {
            let line = self.source_lines.get(index).copied().unwrap_or(1);
            (pattern, line)
        })
    }

    /// The argv of a command grader, as written.
    pub fn argv(&self) -> Option<&[String]> {
        self.command
            .as_ref()
            .map(|command| command.get_ref().as_slice())
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum GraderKind {
    #[default]
    Builtin,
    Command,
}

impl GraderKind {
    /// As written in evalock.toml and evalock.lock.
    pub fn as_str(self) -> &'static str {
        match self {
            GraderKind::Builtin => "builtin",
            GraderKind::Command => "command",
        }
    }
}

/// A version label written as a string (`"struct-3"`) or an integer (`3`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(from = "VersionInput", into = "String")]
pub struct VersionLabel(pub String);

#[derive(Deserialize)]
#[serde(untagged)]
enum VersionInput {
    Text(String),
    Number(i64),
}

impl JsonSchema for VersionLabel {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "VersionLabel".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "A version label: a string such as \"struct-3\" or an integer.",
            "type": ["string", "integer"]
        })
    }
}

impl From<VersionInput> for VersionLabel {
    fn from(input: VersionInput) -> Self {
        match input {
            VersionInput::Text(text) => VersionLabel(text),
            VersionInput::Number(number) => VersionLabel(number.to_string()),
        }
    }
}

impl From<VersionLabel> for String {
    fn from(label: VersionLabel) -> String {
        label.0
    }
}

impl std::fmt::Display for VersionLabel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
