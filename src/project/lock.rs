//! `evalock.lock`: TOML, deterministic and sorted, one reviewable line group per case so
//! that branches adding different cases merge cleanly.

use super::config::GraderKind;
pub mod mcp;
pub mod skills;

use crate::digest::{Digest, BYTES_RECIPE, CASE_RECIPE, TREE_RECIPE};
use crate::error::{Error, Result};
use crate::source::ContentSource;
use crate::text::{conflict_marker_line, line_of_first, require_clean_text, LineIndex};
use serde::{Deserialize, Serialize};
use skills::{validate_skill_paths, SkillLock};
use std::collections::BTreeMap;
use std::sync::Arc;

mod narrow;
mod read;
mod render;
#[cfg(test)]
mod tests;
mod toml_values;
mod validate;

pub use toml_values::{toml_key, toml_string, toml_string_array};

mod case_entries;
pub use case_entries::CaseEntries;

pub const LOCK_FILE: &str = "evalock.lock";
pub const LOCK_VERSION: u32 = 1;
/// The blocks a lock narrowed to some suites is read in: small enough to stay in a cache.
const NARROWING_BLOCK: usize = 1 << 20;
/// Suite digest recipe: sha256 over `<id as JSON> <version> <digest>\n`, sorted by id.
pub const SUITE_RECIPE: &str = "suite-v1";

#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Lock {
    pub lock_version: u32,
    pub recipes: Recipes,
    #[serde(default, rename = "suite")]
    pub suites: BTreeMap<String, SuiteLock>,
    /// Graders by id: version, what they run and the digest of their sources.
    #[serde(default, rename = "grader")]
    pub graders: BTreeMap<String, GraderLock>,
    /// Cases by suite, then by id.
    #[serde(default, rename = "case")]
    pub cases: BTreeMap<String, CaseEntries>,
    /// Skills by folder path.
    #[serde(default, rename = "skill")]
    pub skills: BTreeMap<String, SkillLock>,
    /// Tool servers by configuration file, then by name.
    #[serde(default)]
    pub mcp: mcp::McpLocks,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Recipes {
    pub case: String,
    pub prompt: String,
    pub tree: String,
    pub suite: String,
}

impl Default for Recipes {
    fn default() -> Self {
        Recipes {
            case: CASE_RECIPE.into(),
            prompt: BYTES_RECIPE.into(),
            tree: TREE_RECIPE.into(),
            suite: SUITE_RECIPE.into(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SuiteLock {
    /// Digest over all the suite's case entries (`suite-v1`).
    pub digest: Digest,
    /// Digest of the prompt: `bytes-v1` of one file, `tree-v1` over several.
    #[serde(default)]
    pub prompt: Option<Digest>,
    /// Per prompt file, so drift names the file.
    #[serde(default)]
    pub prompts: BTreeMap<String, Digest>,
}

/// A grader's version pinned with what it runs and the `tree-v1` digest of its sources.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct GraderLock {
    pub version: String,
    /// `builtin` or `command`; absent from locks written before evalock pinned it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<GraderKind>,
    /// The argv of a command grader.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<Vec<String>>,
    pub digest: Digest,
    /// Per source file, so drift names the file.
    #[serde(default)]
    pub files: BTreeMap<String, Digest>,
    /// How the grader agreed with its labels file, when it names one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calibration: Option<CalibrationLock>,
}

/// A grader measured against people's labels: the labels' `bytes-v1` digest, the grader
/// version measured, and the counts of (grader, person) verdicts. Editing the labels or
/// bumping the version re-opens it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CalibrationLock {
    pub labels: Digest,
    pub version: String,
    /// Both pass.
    pub tp: usize,
    /// The grader passes what the person failed: a false success.
    pub fp: usize,
    /// Both fail.
    pub tn: usize,
    /// The grader fails what the person passed.
    #[serde(rename = "fn")]
    pub fn_: usize,
}

impl GraderLock {
    /// The entry for a grader of `kind` that runs `command` (a command grader's argv).
    pub fn new(
        version: &str,
        kind: GraderKind,
        command: Option<Vec<String>>,
        digest: Digest,
    ) -> GraderLock {
        GraderLock {
            version: version.to_owned(),
            kind: Some(kind),
            command,
            digest,
            files: BTreeMap::new(),
            calibration: None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CaseLock {
    pub version: u64,
    pub digest: Digest,
    pub file: Arc<str>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub retired: bool,
}

impl CaseLock {
    /// An entry that stands for none, where a reader needs a value before it gives up.
    pub(super) fn placeholder() -> CaseLock {
        CaseLock {
            version: 0,
            digest: Digest::from_sha256_bytes(&[0; 32]),
            file: Arc::from(""),
            retired: false,
        }
    }
}

impl Lock {
    pub fn new() -> Lock {
        Lock {
            lock_version: LOCK_VERSION,
            recipes: Recipes::default(),
            suites: BTreeMap::new(),
            graders: BTreeMap::new(),
            cases: BTreeMap::new(),
            skills: BTreeMap::new(),
            mcp: BTreeMap::new(),
        }
    }

    /// Reads and parses the lock at `path`; `None` when there is none.
    pub fn read(source: &dyn ContentSource, path: &str) -> Result<Option<Lock>> {
        Lock::read_suites(source, path, None)
    }

    /// [`Lock::read`] narrowed to `only` these suites when given: their suite and case
    /// entries, the recipes and the graders, and no skill or tool server (`run --suite`
    /// reads none). The tables of the others are passed over as the lock is read.
    pub fn read_suites(
        source: &dyn ContentSource,
        path: &str,
        only: Option<&std::collections::BTreeSet<String>>,
    ) -> Result<Option<Lock>> {
        if let Some(only) = only {
            let mut narrowing = narrow::Narrowing::new(only);
            if !source.read_blocks(path, NARROWING_BLOCK, &mut |block| narrowing.push(block))? {
                return Ok(None);
            }
            // Anything the narrowed lines do not decide, the whole lock does: it also
            // locates every error.
            let narrowed = narrowing
                .finish()
                .and_then(|kept| Lock::parse_suites(path, &kept, Some(only)).ok());
            if let Some(lock) = narrowed {
                return Ok(Some(lock));
            }
        }
        match source.read(path)? {
            Some(bytes) => Lock::parse_suites(path, &bytes, only).map(Some),
            None => Ok(None),
        }
    }

    /// Parses a lock; `path` is used in messages.
    pub fn parse(path: &str, bytes: &[u8]) -> Result<Lock> {
        Lock::parse_suites(path, bytes, None)
    }

    fn parse_suites(
        path: &str,
        bytes: &[u8],
        only: Option<&std::collections::BTreeSet<String>>,
    ) -> Result<Lock> {
        let text = require_clean_text(bytes).map_err(|(line, column, message)| {
            Error::malformed(format!("{path}:{line}:{column}"), message)
        })?;
        if let Some(line) = conflict_marker_line(text) {
            return Err(Error::malformed(
                format!("{path}:{line}"),
                "unresolved merge conflict: run `evalock lock` to regenerate the lock from the merged cases",
            ));
        }
        let mut lock: Lock = read::from_toml(text, only).map_err(|error| {
            let location = match error.span() {
                Some(span) => {
                    let (line, column) =
                        LineIndex::new(text.as_bytes()).position_of(text.as_bytes(), span.start);
                    format!("{path}:{line}:{column}")
                }
                None => format!("{path}:1"),
            };
            Error::malformed(
                location,
                format!(
                    "{}; run `evalock lock` to regenerate it",
                    crate::text::shorten(
                        error.message().trim(),
                        crate::text::MAX_PARSER_MESSAGE_CHARS
                    )
                ),
            )
        })?;
        if lock.lock_version != LOCK_VERSION {
            return Err(Error::malformed(
                format!("{path}:{}", line_of_first(text, &["lock_version"])),
                format!("lock_version {} is not supported (this evalock writes {LOCK_VERSION}): upgrade evalock, or run `evalock lock` to rewrite it", lock.lock_version),
            ));
        }
        lock.validate(path, text)?;
        validate_skill_paths(path, text, &lock.skills)?;
        if let Some(only) = only {
            lock.narrow_to(only);
        }
        Ok(lock)
    }

    /// What [`Lock::read_suites`] keeps of `only` these suites, however the lock was read.
    fn narrow_to(&mut self, only: &std::collections::BTreeSet<String>) {
        self.suites.retain(|suite, _| only.contains(suite));
        self.cases.retain(|suite, _| only.contains(suite));
        self.skills.clear();
        self.mcp = mcp::McpLocks::default();
    }
}

impl Default for Lock {
    fn default() -> Self {
        Lock::new()
    }
}
