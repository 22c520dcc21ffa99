//! `evalock.toml`: suites, skills, graders and policy. Unknown keys are errors with
//! `path:line:col`; `config.schema.json` mirrors these types for editors.

use crate::error::{Error, Result};
use crate::rules::{RuleId, Severity};
use crate::text::{require_clean_text, LineIndex};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

mod baseline_paths;
mod gate;
mod grader;
mod locate;
mod mcp;
mod policy;
mod skills;
mod suite;
#[cfg(test)]
mod tests;
mod toml_errors;
mod validate;

pub use gate::{DebtConfig, DebtEntry, DebtKey, RuleLevel};
pub use grader::{
    GraderConfig, GraderKind, VersionLabel, IN_PROCESS_GRADER_IDS, PROMPTFOO_GRADER_ID,
};
use locate::{glob_lines, location_of, table_header_offset};
pub use mcp::{McpConfig, WELL_KNOWN_CONFIGS};
pub use policy::{default_stretch_high, Policy, POLICY_KEYS};
pub use skills::{compile_pattern, default_allowed_permissions, Acknowledgement, SkillsConfig};

/// Where `evalock run` writes its results unless `--out` says otherwise.
pub const DEFAULT_RESULTS_PATH: &str = ".evalock/results.json";
pub use suite::{CaseIdRule, EnvelopeSlack, OneOrMany, SuiteConfig};
use toml_errors::{single_table_header, with_suggestion};
pub use validate::{is_valid_name, MAX_NAME_CHARS};

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
    /// Tool servers (MCP) locked like skills: their launch and their tools.
    #[serde(default)]
    pub mcp: Option<McpConfig>,
    #[serde(default, rename = "grader")]
    pub graders: BTreeMap<String, GraderConfig>,
    /// Per-rule severities by id or name: `EL203 = "warn"`, `skill-name-invalid = "off"`.
    /// Integrity rules cannot be lowered.
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, RuleLevel>")]
    pub rules: BTreeMap<String, toml::Spanned<RuleLevel>>,
    /// Findings adopted as debt when evalock was introduced (`evalock debt` lists them).
    #[serde(default)]
    pub debt: DebtConfig,
    /// The line of each `[rules]` entry, by the name it is written with.
    #[serde(skip)]
    pub rule_lines: BTreeMap<String, u32>,
    /// Lines of what EL110 may point at: `[policy]` keys by name, acknowledgements in order.
    #[serde(skip)]
    pub gate_lines: GateLines,
}

/// Where evalock.toml writes the settings a change may loosen.
#[derive(Debug, Clone, Default)]
pub struct GateLines {
    pub policy: BTreeMap<&'static str, u32>,
    pub acknowledgements: Vec<u32>,
    /// The line of each suite's `envelope`, by suite name.
    pub envelopes: BTreeMap<String, u32>,
}

fn default_config_version() -> u32 {
    1
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
        if let Some(line) = crate::text::conflict_marker_line(text) {
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
        let lines = LineIndex::new(text.as_bytes());
        for entry in &mut config.debt.findings {
            entry.line = lines.line_of(entry.rule.span().start);
        }
        config.rule_lines = config
            .rules
            .iter()
            .map(|(name, level)| (name.clone(), lines.line_of(level.span().start)))
            .collect();
        for key in POLICY_KEYS {
            let line = crate::text::line_of_first(
                text,
                &[&format!("{key} ="), &format!("{key}="), "[policy]"],
            );
            config.gate_lines.policy.insert(key, line);
        }
        if let Some(skills) = &config.skills {
            config.gate_lines.acknowledgements = skills
                .acknowledgements
                .iter()
                .map(|acknowledgement| lines.line_of(acknowledgement.rule.span().start))
                .collect();
        }
        if let Some(mcp) = &mut config.mcp {
            if let Some(inside) = table_header_offset(text, "[mcp]") {
                mcp.config_lines = glob_lines(text, &lines, inside, "configs", &mcp.configs);
            }
            for server in mcp.snapshots.keys() {
                let line = crate::text::line_of_first(
                    text,
                    &[
                        &format!("{server} ="),
                        &format!("\"{server}\" ="),
                        "[mcp.snapshots]",
                        "snapshots",
                    ],
                );
                mcp.snapshot_lines.insert(server.clone(), line);
            }
        }
        for suite in config
            .suites
            .iter()
            .filter(|suite| suite.envelope.is_some())
        {
            let span = locate::key_span_in_table(text, suite.name.span().start, "envelope");
            let line = lines.line_of(span.map_or(suite.name.span().start, |span| span.start));
            config
                .gate_lines
                .envelopes
                .insert(suite.name().to_owned(), line);
        }
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

    /// Whether the config names nothing evalock pins: no suite, no grader, no skill
    /// roots or marketplaces. A check of it passes, but only because it looks at nothing.
    pub fn guards_nothing(&self) -> bool {
        self.suites.is_empty()
            && self.graders.is_empty()
            && self
                .skills
                .as_ref()
                .is_none_or(|skills| skills.roots.is_empty() && skills.marketplaces.is_empty())
            && self.mcp.is_none()
    }

    /// The severity `[rules]` gives `rule`: `None` when it is off.
    pub fn severity_of(&self, rule: RuleId) -> Option<Severity> {
        self.rule_level(rule).severity()
    }

    /// `[rules]`' level for `rule`, or its default from the rule table.
    pub fn rule_level(&self, rule: RuleId) -> RuleLevel {
        self.rules
            .iter()
            .find(|(name, _)| RuleId::parse(name) == Some(rule))
            .map_or(RuleLevel::of(rule.rule().severity), |(_, level)| {
                *level.get_ref()
            })
    }

    pub fn suite(&self, name: &str) -> Option<&SuiteConfig> {
        self.suites.iter().find(|suite| suite.name() == name)
    }
}

/// The JSON Schema of `evalock.toml` (shipped as `config.schema.json` for editors).
pub fn config_schema() -> String {
    let schema = schemars::schema_for!(Config);
    let mut text = serde_json::to_string_pretty(&schema).unwrap_or_default();
    text.push('\n');
    text
}
