//! The skill entries of `evalock.lock`: one line group per skill folder, then one line per
//! file (`"scripts/run.sh" = "x sha256:…"`), so drift names the file and branches that
//! touch different skills merge cleanly.

use super::{toml_key, toml_string};
use crate::digest::{validate_relative_path, Digest, EntryKind};
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// What `evalock lock` froze for one skill folder.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SkillLock {
    /// The `name` of its front matter, when it has one.
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub version: Option<String>,
    pub source: SourceLock,
    /// `tree-v1` over every file of the folder.
    pub digest: Digest,
    /// `allowed-tools` of SKILL.md.
    #[serde(default)]
    pub allowed_tools: Vec<String>,
    /// `permissions` of skill.json.
    #[serde(default)]
    pub permissions: Vec<String>,
    /// Declared executables (skill-relative paths).
    #[serde(default)]
    pub executables: Vec<String>,
    /// Warnings a reviewer acknowledged in evalock.toml: `<rule> <path> <digest>`.
    #[serde(default)]
    pub acknowledged: Vec<String>,
    /// Every file, skill-relative.
    #[serde(default)]
    pub files: BTreeMap<String, FileLock>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SourceKind {
    /// Authored in this repository.
    #[default]
    Local,
    /// Copied from another repository at a commit.
    Vendored,
    /// Resolved from a registry at a version, pinned by content digest.
    Registry,
}

/// Where the skill came from, as declared when it was locked.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SourceLock {
    pub kind: SourceKind,
    #[serde(default)]
    pub repo: Option<String>,
    #[serde(default)]
    pub commit: Option<String>,
    #[serde(default)]
    pub registry: Option<String>,
    #[serde(default)]
    pub version: Option<String>,
    #[serde(default)]
    pub digest: Option<String>,
}

/// One pinned file: its `tree-v1` kind and digest, written `"<kind> sha256:<hex>"`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct FileLock {
    pub kind: EntryKind,
    pub digest: Digest,
}

impl TryFrom<String> for FileLock {
    type Error = String;
    fn try_from(text: String) -> std::result::Result<Self, Self::Error> {
        let (kind, digest) = text
            .split_once(' ')
            .ok_or_else(|| format!("file entry `{text}` must be `<f|x|l> sha256:<hex>`"))?;
        let kind = match kind {
            "f" => EntryKind::File,
            "x" => EntryKind::Executable,
            "l" => EntryKind::Symlink,
            other => return Err(format!("file kind `{other}` must be `f`, `x` or `l`")),
        };
        Ok(FileLock {
            kind,
            digest: Digest::parse(digest)?,
        })
    }
}

impl From<FileLock> for String {
    fn from(file: FileLock) -> String {
        format!("{} {}", file.kind.letter(), file.digest)
    }
}

/// Rejects traversal in skill folder and file paths of a parsed lock.
pub fn validate_skill_paths(
    lock_path: &str,
    text: &str,
    skills: &BTreeMap<String, SkillLock>,
) -> Result<()> {
    let regenerate = "; run `evalock lock` to regenerate the lock";
    for (folder, skill) in skills {
        let header = format!("[skill.{}", toml_key(folder));
        validate_relative_path(folder).map_err(|error| {
            let line = crate::text::line_of_first(text, &[&header, folder]);
            Error::malformed(
                format!("{lock_path}:{line}"),
                format!("skill entry: {error}{regenerate}"),
            )
        })?;
        for file in skill.files.keys().chain(&skill.executables) {
            validate_relative_path(file).map_err(|error| {
                let line = crate::text::line_of_first(text, &[&toml_key(file), file, &header]);
                Error::malformed(
                    format!("{lock_path}:{line}"),
                    format!("skill `{folder}`: {error}{regenerate}"),
                )
            })?;
        }
    }
    Ok(())
}

/// Appends the skill entries to a lock being rendered.
pub fn render_skills(out: &mut String, skills: &BTreeMap<String, SkillLock>) {
    for (folder, skill) in skills {
        let key = toml_key(folder);
        let _ = writeln!(out, "\n[skill.{key}]");
        if let Some(name) = &skill.name {
            let _ = writeln!(out, "name = {}", toml_string(name));
        }
        if let Some(version) = &skill.version {
            let _ = writeln!(out, "version = {}", toml_string(version));
        }
        let _ = writeln!(out, "source = {}", render_source(&skill.source));
        let _ = writeln!(out, "digest = {}", toml_string(&skill.digest.to_string()));
        let _ = writeln!(out, "allowed_tools = {}", toml_array(&skill.allowed_tools));
        let _ = writeln!(out, "permissions = {}", toml_array(&skill.permissions));
        let _ = writeln!(out, "executables = {}", toml_array(&skill.executables));
        let _ = writeln!(out, "acknowledged = {}", toml_array(&skill.acknowledged));
        let _ = writeln!(out, "\n[skill.{key}.files]");
        for (path, file) in &skill.files {
            let _ = writeln!(
                out,
                "{} = {}",
                toml_key(path),
                toml_string(&String::from(file.clone()))
            );
        }
    }
}

fn render_source(source: &SourceLock) -> String {
    let kind = match source.kind {
        SourceKind::Local => "local",
        SourceKind::Vendored => "vendored",
        SourceKind::Registry => "registry",
    };
    let mut fields = vec![format!("kind = {}", toml_string(kind))];
    for (key, value) in [
        ("registry", &source.registry),
        ("version", &source.version),
        ("digest", &source.digest),
        ("repo", &source.repo),
        ("commit", &source.commit),
    ] {
        if let Some(value) = value {
            fields.push(format!("{key} = {}", toml_string(value)));
        }
    }
    format!("{{ {} }}", fields.join(", "))
}

fn toml_array(items: &[String]) -> String {
    let quoted: Vec<String> = items.iter().map(|item| toml_string(item)).collect();
    format!("[{}]", quoted.join(", "))
}
