//! `[skills]` and `[[skills.acknowledge]]`: where skills live, what they may declare and
//! which warnings a reviewer acknowledged.

use regex::{Regex, RegexBuilder};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use toml::Spanned;

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
    /// Globs of files or folders holding a SKILL.md that no agent loads as a skill (test
    /// fixtures, examples, templates): without them, a SKILL.md outside every root and
    /// marketplace is EL213.
    #[serde(default)]
    pub exclude: Vec<String>,
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
            exclude: Vec::new(),
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
    pub digest: crate::digest::Digest,
    /// Why it is acceptable: who reviewed it, and how.
    pub reason: String,
}

/// Compiles one risky pattern of `[skills.risky_patterns]` as evalock uses it:
/// case-insensitive, one line at a time.
pub fn compile_pattern(name: &str, pattern: &str) -> Result<Regex, String> {
    if name.is_empty()
        || !name
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_'))
    {
        return Err(format!(
            "pattern name `{name}` must be letters, digits, `-` or `_`"
        ));
    }
    RegexBuilder::new(pattern)
        .case_insensitive(true)
        .multi_line(true)
        .size_limit(1 << 20)
        .build()
        .map_err(|error| {
            format!(
                "invalid regex: {}",
                error.to_string().lines().last().unwrap_or("syntax error")
            )
        })
}
