//! `evalock.toml`: suites, skills, graders and policy. Unknown keys are errors with
//! `path:line:col`; `config.schema.json` mirrors these types for editors.

use crate::error::{Error, Result};
use crate::text::{line_of_first, require_clean_text, LineIndex};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::ops::Range;
use toml::Spanned;

pub const CONFIG_FILE: &str = "evalock.toml";

#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
/// evalock configuration: suites of golden cases, skills, graders and the gate policy.
/// Paths and globs are relative to the folder holding evalock.toml.
pub struct Config {
    /// Format version of this file; only 1 exists.
    #[serde(default = "default_config_version")]
    pub version: u32,
    #[serde(default)]
    pub policy: Policy,
    #[serde(default, rename = "suite")]
    pub suites: Vec<SuiteConfig>,
    #[serde(default)]
    pub skills: Option<SkillsConfig>,
    #[serde(default, rename = "grader")]
    pub graders: BTreeMap<String, GraderConfig>,
}

fn default_config_version() -> u32 {
    1
}

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
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            agreement_min: default_agreement_min(),
            fail_on_diff: false,
            secrets: Vec::new(),
            timeout_secs: default_timeout_secs(),
            max_output_bytes: default_max_output_bytes(),
        }
    }
}

fn default_agreement_min() -> f64 {
    1.0
}
fn default_timeout_secs() -> u64 {
    60
}
fn default_max_output_bytes() -> u64 {
    1024 * 1024
}

/// One suite: a set of golden cases judged against one prompt with one grader.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SuiteConfig {
    /// Suite name: letters, digits, `-`, `_`, `.`; used as a key in the lock.
    #[schemars(with = "String")]
    pub name: Spanned<String>,
    /// Globs of case files (JSONL, JSON or YAML), relative to the project root.
    pub cases: Vec<String>,
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
    /// The line of evalock.toml that writes each of `cases`, in order. Set by
    /// [`Config::parse`]; findings about a glob (one that matches no file) point there.
    #[serde(skip)]
    #[schemars(skip)]
    pub case_glob_lines: Vec<u32>,
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

/// Where skills live and what they may do.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SkillsConfig {
    /// Globs naming skill folders (each holds a `SKILL.md`): `skills/*`, `.claude/skills/*`.
    #[serde(default)]
    pub roots: Vec<String>,
    /// Plugin marketplace manifests (`.claude-plugin/marketplace.json`) listing skill paths.
    #[serde(default)]
    pub marketplaces: Vec<String>,
    /// Permissions (skill.json) and tools (`allowed-tools`) a skill may declare; `*` is a
    /// wildcard. Absent: the seed article's `fs:read:workspace`, `fs:write:./out`, `net:none`.
    #[serde(default = "default_allowed_permissions")]
    pub allowed_permissions: Vec<String>,
    /// Globs of skill folders copied from another repository: they must record
    /// `source.repo` and a real `source.commit` in skill.json (EL202).
    #[serde(default)]
    pub vendored: Vec<String>,
    /// Extra risky-content patterns, name -> regex (EL206). A built-in name replaces the
    /// built-in pattern; an empty regex switches it off.
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, String>")]
    pub risky_patterns: BTreeMap<String, Spanned<String>>,
    /// Warnings a reviewer acknowledged after reading the file (EL205 declared
    /// executables, EL206 risky lines), each tied to the reviewed bytes by digest.
    #[serde(default, rename = "acknowledge")]
    pub acknowledgements: Vec<Acknowledgement>,
    /// The line of `allowed_permissions` in evalock.toml (1 when it is not written), for
    /// findings about the allowlist itself.
    #[serde(skip)]
    #[schemars(skip)]
    pub allowed_permissions_line: u32,
    /// The line of evalock.toml that writes each of `roots`, in order, for findings
    /// about a root (one that finds no skill).
    #[serde(skip)]
    #[schemars(skip)]
    pub root_lines: Vec<u32>,
    /// The line of evalock.toml that writes each of `marketplaces`, in order.
    #[serde(skip)]
    #[schemars(skip)]
    pub marketplace_lines: Vec<u32>,
}

impl SkillsConfig {
    /// Each root glob with the line of evalock.toml that writes it (1 when not known).
    pub fn root_globs(&self) -> impl Iterator<Item = (&String, u32)> {
        with_lines(&self.roots, &self.root_lines)
    }

    /// Each marketplace path with the line of evalock.toml that writes it (1 when not known).
    pub fn marketplace_paths(&self) -> impl Iterator<Item = (&String, u32)> {
        with_lines(&self.marketplaces, &self.marketplace_lines)
    }
}

fn with_lines<'a>(
    values: &'a [String],
    lines: &'a [u32],
) -> impl Iterator<Item = (&'a String, u32)> {
    values
        .iter()
        .enumerate()
        .map(|(index, value)| (value, lines.get(index).copied().unwrap_or(1)))
}

impl Default for SkillsConfig {
    fn default() -> Self {
        SkillsConfig {
            roots: Vec::new(),
            marketplaces: Vec::new(),
            allowed_permissions: default_allowed_permissions(),
            vendored: Vec::new(),
            risky_patterns: BTreeMap::new(),
            acknowledgements: Vec::new(),
            allowed_permissions_line: 1,
            root_lines: Vec::new(),
            marketplace_lines: Vec::new(),
        }
    }
}

/// The seed article's allowlist: a policy vocabulary, used until a project sets its own.
pub fn default_allowed_permissions() -> Vec<String> {
    ["fs:read:workspace", "fs:write:./out", "net:none"]
        .map(String::from)
        .to_vec()
}

/// One reviewed warning: `rule` on `file`, whose bytes had `digest` when it was read.
/// When the file changes the acknowledgement no longer applies and the warning returns.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Acknowledgement {
    /// `EL205` (declared executable) or `EL206` (risky content), by id or name.
    #[schemars(with = "String")]
    pub rule: Spanned<String>,
    /// Project-relative path of the reviewed file.
    pub file: String,
    /// `sha256:` digest of the reviewed bytes, as evalock prints it in the warning.
    #[schemars(with = "String", regex(pattern = r"^sha256:[0-9a-f]{64}$"))]
    pub digest: crate::hash::Digest,
    /// Why it is acceptable: who reviewed it, and how.
    pub reason: String,
}

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
    /// The line of evalock.toml that says what the grader runs: its `command`, else its
    /// table header. Set by [`Config::parse`]; findings about the grader point there.
    #[serde(skip)]
    pub line: u32,
    /// The line of evalock.toml that writes each of `sources`, in order. Set by
    /// [`Config::parse`]; findings about a glob (one that matches no file) point there.
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

pub const NORMALIZERS: &[&str] = &["exact", "ws-v1", "json-v1"];

/// Samples per case a suite's `samples` (and a case's `n`, and `run --samples`) may ask for.
pub const SAMPLES_RANGE: std::ops::RangeInclusive<u32> = 1..=1000;

impl Config {
    /// Parses and validates `evalock.toml`; `path` is used in messages.
    pub fn parse(path: &str, bytes: &[u8]) -> Result<Config> {
        let text = require_clean_text(bytes).map_err(|(line, column, message)| {
            Error::malformed(format!("{path}:{line}:{column}"), message)
        })?;
        if let Some(line) = super::lock::conflict_marker_line(text) {
            return Err(Error::malformed(
                format!("{path}:{line}"),
                "unresolved merge conflict: keep the side you want, delete the markers, then run `evalock check`",
            ));
        }
        let mut config: Config = toml::from_str(text).map_err(|error| {
            let message = crate::text::shorten(
                error.message().trim(),
                crate::text::MAX_PARSER_MESSAGE_CHARS,
            );
            let message = message.as_ref();
            let message = match error.span().and_then(|span| single_table_header(text, span, message)) {
                Some(header) => format!("`[{header}]` opens a single table, but `{header}` is a list of tables: write `[[{header}]]` above each entry"),
                None => with_suggestion(message),
            };
            Error::malformed(location_of(path, text, error.span()), message)
        })?;
        config.validate(path, text)?;
        config.locate_graders(text);
        config.locate_case_globs(text);
        if let Some(skills) = &mut config.skills {
            skills.allowed_permissions_line = text
                .lines()
                .position(|line| line.trim_start().starts_with("allowed_permissions"))
                .map_or(1, |index| u32::try_from(index + 1).unwrap_or(u32::MAX));
            // Where `[skills]` is not a table of its own (`skills = {…}`), the lines
            // stay unknown and findings point at the file's first line.
            if let Some(inside) = table_header_offset(text, "[skills]") {
                let lines = LineIndex::new(text.as_bytes());
                skills.root_lines = glob_lines(text, &lines, inside, "roots", &skills.roots);
                skills.marketplace_lines =
                    glob_lines(text, &lines, inside, "marketplaces", &skills.marketplaces);
            }
        }
        Ok(config)
    }

    /// Records where each grader says what it runs, and where each of its `sources` globs
    /// is written, for findings made after parsing.
    fn locate_graders(&mut self, text: &str) {
        let lines = LineIndex::new(text.as_bytes());
        for (id, grader) in &mut self.graders {
            let headers = [format!("[grader.{id}]"), format!("[grader.\"{id}\"]")];
            let header_at = headers
                .iter()
                .filter_map(|header| text.find(header.as_str()))
                .min();
            grader.line = match &grader.command {
                Some(command) => lines.line_of(command.span().start),
                None => line_of_first(text, &[&headers[0], &headers[1]]),
            };
            let inside = match &grader.command {
                Some(command) => command.span().start,
                None => header_at.map_or(0, |at| at + 1),
            };
            grader.source_lines = glob_lines(text, &lines, inside, "sources", &grader.sources);
        }
    }

    /// Records the line of each suite's case globs, for findings made after parsing.
    fn locate_case_globs(&mut self, text: &str) {
        let lines = LineIndex::new(text.as_bytes());
        for suite in &mut self.suites {
            let inside = suite.name.span().start;
            suite.case_glob_lines = glob_lines(text, &lines, inside, "cases", &suite.cases);
        }
    }

    fn validate(&self, path: &str, text: &str) -> Result<()> {
        if self.version != 1 {
            return Err(Error::malformed(
                format!("{path}:{}", line_of_first(text, &["version"])),
                format!("unsupported config version {}: only 1 exists", self.version),
            ));
        }
        let mut seen = BTreeMap::new();
        for suite in &self.suites {
            let at = || location_of(path, text, Some(suite.name.span()));
            // A key of this suite's table, for messages about its value; the suite's
            // `name` when the key is not written in the table.
            let key_at = |key: &str| {
                let span = key_span_in_table(text, suite.name.span().start, key)
                    .unwrap_or_else(|| suite.name.span());
                location_of(path, text, Some(span))
            };
            let name = suite.name();
            if !is_valid_name(name) {
                return Err(Error::malformed(
                    at(),
                    format!("suite name `{name}` must be 1-64 characters of letters, digits, `-`, `_` or `.`"),
                ));
            }
            if seen.insert(name.to_owned(), ()).is_some() {
                return Err(Error::malformed(
                    at(),
                    format!("suite `{name}` is defined twice"),
                ));
            }
            if suite.cases.is_empty() {
                return Err(Error::malformed(
                    at(),
                    format!("suite `{name}` lists no `cases` globs"),
                ));
            }
            if !NORMALIZERS.contains(&suite.normalizer.as_str()) {
                return Err(Error::malformed(
                    key_at("normalizer"),
                    format!(
                        "suite `{name}`: unknown normalizer `{}` (use one of: {})",
                        suite.normalizer,
                        NORMALIZERS.join(", ")
                    ),
                ));
            }
            if let Some(grader) = &suite.grader {
                if !self.graders.contains_key(grader) {
                    return Err(Error::malformed(
                        key_at("grader"),
                        format!("suite `{name}` names grader `{grader}`, but there is no `[grader.{grader}]` table"),
                    ));
                }
            }
            if matches!(&suite.completer, Some(argv) if argv.is_empty()) {
                return Err(Error::malformed(
                    key_at("completer"),
                    format!("suite `{name}`: `completer` must name a program"),
                ));
            }
            if let Some(samples) = &suite.samples {
                if !SAMPLES_RANGE.contains(samples.get_ref()) {
                    return Err(Error::malformed(
                        location_of(path, text, Some(samples.span())),
                        format!(
                            "suite `{name}`: `samples` must be an integer from {} to {} (as a case's `n`), not {}",
                            SAMPLES_RANGE.start(),
                            SAMPLES_RANGE.end(),
                            samples.get_ref()
                        ),
                    ));
                }
            }
            for pattern in &suite.cases {
                validate_glob(path, text, &format!("suite `{name}`: case glob"), pattern)?;
            }
            for prompt in suite.prompt_paths() {
                validate_path(path, text, &format!("suite `{name}`: prompt"), &prompt)?;
            }
            if let Some(baseline) = &suite.baseline {
                validate_path(path, text, &format!("suite `{name}`: baseline"), baseline)?;
            }
        }
        self.refuse_shared_baselines(path, text)?;
        if let Some(skills) = &self.skills {
            for pattern in skills.roots.iter().chain(&skills.marketplaces) {
                validate_glob(path, text, "skills", pattern)?;
            }
        }
        for (id, grader) in &self.graders {
            if !is_valid_name(id) {
                return Err(Error::malformed(format!("{path}:{}", line_of_first(text, &[id])), format!("grader id `{id}` must be 1-64 characters of letters, digits, `-`, `_` or `.`")));
            }
            let grader_line = line_of_first(
                text,
                &[&format!("[grader.{id}]"), &format!("[grader.\"{id}\"]"), id],
            );
            if grader.kind == GraderKind::Command && grader.argv().is_none_or(<[String]>::is_empty)
            {
                return Err(Error::malformed(
                    format!("{path}:{grader_line}"),
                    format!("grader `{id}` is a command grader but has no `command`: add `command = [\"program\", \"arg\"]`"),
                ));
            }
            for pattern in &grader.sources {
                validate_glob(path, text, &format!("grader `{id}`: source"), pattern)?;
            }
        }
        if let Some(skills) = &self.skills {
            skills.validate(path, text)?;
        }
        if !(0.0..=1.0).contains(&self.policy.agreement_min) {
            return Err(Error::malformed(
                policy_key_location(path, text, "agreement_min"),
                "policy.agreement_min must be between 0.0 and 1.0",
            ));
        }
        // 0 would make every completion an EL504 error: nothing could ever pass.
        if self.policy.max_output_bytes == 0 {
            return Err(Error::malformed(
                policy_key_location(path, text, "max_output_bytes"),
                format!(
                    "policy.max_output_bytes must be at least 1 (the default is {}): with 0 every completion is too large",
                    default_max_output_bytes()
                ),
            ));
        }
        // A timeout of 0 seconds gives no completer any time at all.
        let zero_timeout = if self.policy.timeout_secs == 0 {
            Some((
                "policy.timeout_secs".to_owned(),
                policy_key_location(path, text, "timeout_secs"),
            ))
        } else {
            self.suites
                .iter()
                .find(|suite| suite.timeout_secs == Some(0))
                .map(|suite| {
                    let span = key_span_in_table(text, suite.name.span().start, "timeout_secs")
                        .unwrap_or_else(|| suite.name.span());
                    (
                        format!("suite `{}`: timeout_secs", suite.name()),
                        location_of(path, text, Some(span)),
                    )
                })
        };
        if let Some((key, location)) = zero_timeout {
            return Err(Error::malformed(
                location,
                format!(
                    "{key} must be at least 1 second (the default is {}): with 0 no completer has any time",
                    default_timeout_secs()
                ),
            ));
        }
        Ok(())
    }

    /// Each suite's baseline file holds that suite alone: `accept` rewrites the whole file
    /// for one suite, so a second suite naming it would lose the first one's entries, and
    /// reading it for the wrong suite is refused as tampering.
    fn refuse_shared_baselines(&self, path: &str, text: &str) -> Result<()> {
        let mut owners: BTreeMap<&str, &SuiteConfig> = BTreeMap::new();
        for suite in &self.suites {
            let Some(baseline) = suite.baseline.as_deref() else {
                continue;
            };
            let Some(first) = owners.insert(baseline, suite) else {
                continue;
            };
            let baseline_at = |owner: &SuiteConfig| {
                let span = key_span_in_table(text, owner.name.span().start, "baseline")
                    .unwrap_or_else(|| owner.name.span());
                location_of(path, text, Some(span))
            };
            return Err(Error::malformed(
                baseline_at(suite),
                format!(
                    "suite `{}`: baseline `{baseline}` is already suite `{}`'s ({}); a baseline file holds one suite, and `evalock accept` rewrites it whole: give suite `{}` a file of its own, such as `{}`",
                    suite.name(),
                    first.name(),
                    baseline_at(first),
                    suite.name(),
                    own_baseline_path(baseline, suite.name()),
                ),
            ));
        }
        Ok(())
    }

    pub fn suite(&self, name: &str) -> Option<&SuiteConfig> {
        self.suites.iter().find(|suite| suite.name() == name)
    }
}

/// `evals/<suite>.baseline.json`, in the folder of `taken`: a baseline path for `suite`.
fn own_baseline_path(taken: &str, suite: &str) -> String {
    match taken.rsplit_once('/') {
        Some((folder, _)) => format!("{folder}/{suite}.baseline.json"),
        None => format!("{suite}.baseline.json"),
    }
}

/// The JSON Schema of `evalock.toml` (shipped as `config.schema.json` for editors).
pub fn config_schema() -> String {
    let schema = schemars::schema_for!(Config);
    let mut text = serde_json::to_string_pretty(&schema).unwrap_or_default();
    text.push('\n');
    text
}

impl SkillsConfig {
    fn validate(&self, path: &str, text: &str) -> Result<()> {
        let at_table = || format!("{path}:{}", table_line(text, "[skills]"));
        for pattern in self.roots.iter().chain(&self.vendored) {
            crate::skills::compile_folder_globs(std::slice::from_ref(pattern))
                .map_err(|error| Error::malformed(at_table(), error.to_string()))?;
        }
        for marketplace in &self.marketplaces {
            crate::hash::validate_relative_path(marketplace).map_err(|error| {
                Error::malformed(at_table(), format!("skills.marketplaces: {error}"))
            })?;
        }
        for (name, pattern) in &self.risky_patterns {
            crate::skills::scan::compile_pattern(name, pattern.get_ref()).map_err(|message| {
                Error::malformed(
                    location_of(path, text, Some(pattern.span())),
                    format!("skills.risky_patterns.{name}: {message}"),
                )
            })?;
        }
        for acknowledgement in &self.acknowledgements {
            let at = || location_of(path, text, Some(acknowledgement.rule.span()));
            let rule = crate::rules::RuleId::parse(acknowledgement.rule.get_ref());
            if !matches!(
                rule,
                Some(
                    crate::rules::RuleId::SkillExecutable | crate::rules::RuleId::SkillRiskyContent
                )
            ) {
                return Err(Error::malformed(
                    at(),
                    format!(
                        "skills.acknowledge: rule `{}` cannot be acknowledged; only EL205 (declared executables) and EL206 (risky content) can",
                        acknowledgement.rule.get_ref()
                    ),
                ));
            }
            crate::hash::validate_relative_path(&acknowledgement.file)
                .map_err(|error| Error::malformed(at(), format!("skills.acknowledge: {error}")))?;
            if acknowledgement.reason.trim().is_empty() {
                return Err(Error::malformed(
                    at(),
                    "skills.acknowledge: give a `reason` (who reviewed the file, and how)",
                ));
            }
        }
        Ok(())
    }
}

/// The 1-based line of a table header such as `[skills]`, or 1.
fn table_line(text: &str, header: &str) -> usize {
    text.lines()
        .position(|line| line.trim() == header)
        .map_or(1, |index| index + 1)
}

/// The longest suite or grader name, in characters.
pub const MAX_NAME_CHARS: usize = 64;

/// Names that are safe as lock keys and file names.
pub fn is_valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_NAME_CHARS
        && name
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.'))
}

/// The location (`path:line:col`, at the value's opening quote) of a string value in the
/// config, for checks made after parsing; `path:1` when it is not written as such.
fn value_location(path: &str, text: &str, value: &str) -> String {
    let written = [
        format!("\"{value}\""),
        format!("'{value}'"),
        value.to_owned(),
    ];
    let offset = written
        .iter()
        .filter(|needle| !needle.is_empty())
        .find_map(|needle| text.find(needle.as_str()));
    location_of(path, text, offset.map(|start| start..start + value.len()))
}

/// A project-relative path: no `..`, not absolute; evalock never reads or writes outside
/// the project.
fn validate_path(path: &str, text: &str, what: &str, value: &str) -> Result<()> {
    crate::hash::validate_relative_path(value).map_err(|error| {
        Error::malformed(
            value_location(path, text, value),
            format!("{what} `{value}`: {error}; use a path inside the project"),
        )
    })
}

/// A glob relative to the project root that compiles and cannot match outside it.
fn validate_glob(path: &str, text: &str, what: &str, pattern: &str) -> Result<()> {
    let reason = if pattern.starts_with('/') {
        Some("absolute paths are not allowed")
    } else if pattern.split('/').any(|part| part == "..") {
        Some("`..` is not allowed")
    } else if pattern.contains(['\0', '\n', '\r']) {
        Some("NUL and newline are not allowed in paths")
    } else {
        None
    };
    if let Some(reason) = reason {
        return Err(Error::malformed(
            value_location(path, text, pattern),
            format!(
                "{what} `{}`: {reason}; use a glob relative to the project root",
                pattern.escape_debug()
            ),
        ));
    }
    globset::Glob::new(pattern).map(|_| ()).map_err(|error| {
        Error::malformed(
            value_location(path, text, pattern),
            format!("{what}: invalid glob `{pattern}`: {error}"),
        )
    })
}

/// The line that writes each of `patterns`, the globs of `key` in the table that holds byte
/// `inside`: where the glob is written after that key, within its table; else the key's
/// line (else `inside`'s, when the key is not found).
fn glob_lines(
    text: &str,
    lines: &LineIndex,
    inside: usize,
    key: &str,
    patterns: &[String],
) -> Vec<u32> {
    let key_at = key_span_in_table(text, inside, key).map_or(inside, |span| span.start);
    let table_end = text[key_at..]
        .find("\n[")
        .map_or(text.len(), |index| key_at + index);
    let written = &text[key_at..table_end];
    patterns
        .iter()
        .map(|pattern| {
            let offset = [format!("\"{pattern}\""), format!("'{pattern}'")]
                .iter()
                .filter_map(|needle| written.find(needle.as_str()))
                .min()
                .unwrap_or(0);
            lines.line_of(key_at + offset)
        })
        .collect()
}

/// serde's "unknown field `promt`, expected one of `name`, `cases`, `prompt`, …", ending in
/// "; did you mean `prompt`?" when one expected key is a slip away from the unknown one.
/// serde's names for the number types (`expected u32`) said as a person would.
fn in_plain_words(message: &str) -> String {
    let Some((before, expected)) = message.rsplit_once("expected ") else {
        return message.to_owned();
    };
    let plain = match expected {
        "u8" | "u16" | "u32" | "u64" | "usize" => "a whole number, 0 or more",
        "i8" | "i16" | "i32" | "i64" | "isize" => "a whole number",
        "f32" | "f64" => "a number",
        _ => return message.to_owned(),
    };
    format!("{before}expected {plain}")
}

fn with_suggestion(message: &str) -> String {
    let Some(rest) = message.strip_prefix("unknown field `") else {
        return in_plain_words(message);
    };
    let Some((unknown, expected)) = rest.split_once('`') else {
        return message.to_owned();
    };
    let closest = expected
        .split('`')
        .skip(1)
        .step_by(2)
        .map(|key| {
            // `timeout` for `timeout_secs`: a key cut short is as near as a typo.
            let cut_short = unknown.chars().count() >= 4 && key.starts_with(unknown);
            let distance = if cut_short {
                1
            } else {
                edit_distance(unknown, key)
            };
            (distance, key)
        })
        .filter(|(distance, key)| *distance <= 2.max(key.len() / 3))
        .min();
    match closest {
        Some((_, key)) => format!("{message}; did you mean `{key}`?"),
        None => message.to_owned(),
    }
}

/// Levenshtein distance over characters: insertions, deletions and substitutions.
fn edit_distance(one: &str, two: &str) -> usize {
    let two: Vec<char> = two.chars().collect();
    let mut previous: Vec<usize> = (0..=two.len()).collect();
    for (row, first) in one.chars().enumerate() {
        let mut current = vec![row + 1];
        for (column, second) in two.iter().enumerate() {
            let substitution = previous[column] + usize::from(first != *second);
            current.push(
                substitution
                    .min(previous[column + 1] + 1)
                    .min(current[column] + 1),
            );
        }
        previous = current;
    }
    previous[two.len()]
}

/// Where `key` is written in `[policy]`, as `path:line:col`; its first mention when the
/// table is written inline.
fn policy_key_location(path: &str, text: &str, key: &str) -> String {
    let span = table_header_offset(text, "[policy]")
        .and_then(|inside| key_span_in_table(text, inside, key));
    match span {
        Some(span) => location_of(path, text, Some(span)),
        None => format!("{path}:{}", line_of_first(text, &[key])),
    }
}

/// The name of the `[name]` header at `span` when serde's `message` says a map was found
/// where a sequence was expected: a key that takes a list of tables (`[[suite]]`,
/// `[[skills.acknowledge]]`) written as one table.
fn single_table_header<'a>(text: &'a str, span: Range<usize>, message: &str) -> Option<&'a str> {
    if !message.starts_with("invalid type: map, expected a sequence") {
        return None;
    }
    let header = text
        .get(span.start..)?
        .strip_prefix('[')
        .filter(|rest| !rest.starts_with('['))?;
    let name = header.split(']').next()?.trim();
    (!name.is_empty() && !name.contains('\n')).then_some(name)
}

/// The byte offset just inside the table opened by the header line `header`.
fn table_header_offset(text: &str, header: &str) -> Option<usize> {
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let written = line.split('#').next().unwrap_or("").trim();
        if written == header {
            return Some(offset + (line.len() - line.trim_start().len()) + 1);
        }
        offset += line.len();
    }
    None
}

/// Where `key = …` is written in the table that holds byte `inside` (from that table's
/// header to the next one), as the span of the key.
fn key_span_in_table(text: &str, inside: usize, key: &str) -> Option<Range<usize>> {
    let table_start = text[..inside].rfind("\n[").map_or(0, |index| index + 1);
    let mut offset = table_start;
    for (index, line) in text[table_start..].split_inclusive('\n').enumerate() {
        let trimmed = line.trim_start();
        if index > 0 && trimmed.starts_with('[') {
            return None;
        }
        let rest = trimmed.strip_prefix(key).map(str::trim_start);
        if rest.is_some_and(|rest| rest.starts_with('=')) {
            let start = offset + (line.len() - trimmed.len());
            return Some(start..start + key.len());
        }
        offset += line.len();
    }
    None
}

fn location_of(path: &str, text: &str, span: Option<Range<usize>>) -> String {
    match span {
        Some(span) => {
            let (line, column) =
                LineIndex::new(text.as_bytes()).position_of(text.as_bytes(), span.start);
            format!("{path}:{line}:{column}")
        }
        None => format!("{path}:1"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_case_glob_knows_its_line_within_its_own_suite() {
        let text = "[[suite]]\nname = \"a\"\ncases = [\"shared/*.jsonl\"]\n\n[[suite]]\nname = \"b\"\ncases = [\n  \"b/*.jsonl\",\n  'shared/*.jsonl',\n  \"c/\\u002A.yaml\",\n]\n";
        let config = Config::parse("evalock.toml", text.as_bytes()).unwrap();
        let lines = |index: usize| -> Vec<u32> {
            config.suites[index]
                .case_globs()
                .map(|(_, line)| line)
                .collect()
        };
        assert_eq!(lines(0), vec![3]);
        // Not the first suite's glob that reads the same; an escaped one falls back to
        // the `cases` key.
        assert_eq!(lines(1), vec![8, 9, 7]);
    }

    #[test]
    fn a_bad_suite_value_is_reported_on_its_own_line() {
        let text = "[[suite]]\nname = \"a\"\ncases = [\"a.jsonl\"]\n\n[[suite]]\nname = \"b\"\ncases = [\"b.jsonl\"]\n# grader = \"commented\"\nmodel = \"m\"\n  grader = \"nope\"\nnormalizer = \"ws-v1\"\n";
        let error = Config::parse("evalock.toml", text.as_bytes()).unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("evalock.toml:10:3: suite `b` names grader `nope`"),
            "{error}"
        );
        let text = text
            .replace("  grader = \"nope\"\n", "")
            .replace("ws-v1", "ws-v9");
        let error = Config::parse("evalock.toml", text.as_bytes()).unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("evalock.toml:10:1: suite `b`: unknown normalizer"),
            "{error}"
        );
    }

    #[test]
    fn parses_a_minimal_config() {
        let config = Config::parse(
            "evalock.toml",
            b"[[suite]]\nname = \"support\"\ncases = [\"evals/*.jsonl\"]\nprompt = \"prompts/support.txt\"\n",
        )
        .unwrap();
        assert_eq!(config.suites[0].name(), "support");
        assert_eq!(config.suites[0].prompt_paths(), vec!["prompts/support.txt"]);
        assert_eq!(config.suites[0].normalizer, "exact");
    }

    #[test]
    fn unknown_keys_are_errors_with_a_line() {
        let error = Config::parse(
            "evalock.toml",
            b"[[suite]]\nname = \"s\"\ncases = [\"a\"]\ncasess = 1\n",
        )
        .unwrap_err();
        let message = error.to_string();
        assert!(message.starts_with("evalock.toml:4:"), "{message}");
        assert!(message.contains("casess"), "{message}");
        assert_eq!(error.exit_code(), 65);
    }

    #[test]
    fn unknown_grader_reference_points_at_its_line() {
        let error = Config::parse(
            "evalock.toml",
            b"\n[[suite]]\nname = \"s\"\ncases = [\"a\"]\ngrader = \"nope\"\n",
        )
        .unwrap_err();
        assert!(
            error.to_string().starts_with("evalock.toml:5:1:"),
            "{error}"
        );
    }

    #[test]
    fn duplicate_suite_names_are_refused() {
        let error = Config::parse(
            "c",
            b"[[suite]]\nname = \"s\"\ncases = [\"a\"]\n[[suite]]\nname = \"s\"\ncases = [\"b\"]\n",
        )
        .unwrap_err();
        assert!(error.to_string().contains("defined twice"));
    }

    #[test]
    fn grader_versions_accept_strings_and_integers() {
        let config = Config::parse(
            "c",
            b"[grader.a]\nversion = 3\n[grader.b]\nversion = \"sem-2026-09-16\"\n",
        )
        .unwrap();
        assert_eq!(config.graders["a"].version.0, "3");
        assert_eq!(config.graders["b"].version.0, "sem-2026-09-16");
    }
}
