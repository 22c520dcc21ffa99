//! Baselines: one deterministic JSON file per suite holding each case's last-good
//! (human-accepted) normalized completion, its digest, and the context it was recorded
//! against. Written only by `evalock accept`.

use crate::error::{Error, Result};
use crate::hash::{validate_relative_path, Digest};
use crate::model::lock::conflict_marker_line;
use crate::source::ContentSource;
use crate::text::{require_clean_text, LineIndex};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

pub const BASELINE_SCHEMA: &str = "evalock.baseline/v1";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BaselineFile {
    pub schema: String,
    pub suite: String,
    /// By case id, sorted.
    pub entries: BTreeMap<String, BaselineEntry>,
}

/// One case's last-good completion.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BaselineEntry {
    /// sha256 of `completion` (which is already normalized).
    pub digest: Digest,
    /// Whether the case passed when it was accepted (false only with `--include-failing`).
    pub passed: bool,
    pub context: BaselineContext,
    /// The commit the run was made at, for people reading the file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// Why it was (re-)recorded: `evalock accept --reason`.
    #[serde(default)]
    pub reason: String,
    /// The full normalized completion.
    pub completion: String,
}

/// What a baseline entry was recorded against. Any part that moved makes it drifted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BaselineContext {
    /// `case-v1` digest of the case.
    pub case: Digest,
    /// Digest of the suite's prompt (absent for suites without one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<Digest>,
    /// `grader-id@version`.
    pub grader: String,
    pub normalizer: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
}

impl BaselineFile {
    pub fn new(suite: &str) -> BaselineFile {
        BaselineFile {
            schema: BASELINE_SCHEMA.into(),
            suite: suite.into(),
            entries: BTreeMap::new(),
        }
    }

    /// The exact text `evalock accept` writes: sorted, two-space indented, one key per line.
    pub fn render(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).unwrap_or_default();
        text.push('\n');
        text
    }

    /// Parses a baseline file; problems come back as (line, column, message).
    pub fn parse(
        suite: &str,
        bytes: &[u8],
    ) -> std::result::Result<BaselineFile, (u32, u32, String)> {
        let text = require_clean_text(bytes)?;
        if let Some(line) = conflict_marker_line(text) {
            let line = u32::try_from(line).unwrap_or(u32::MAX);
            return Err((
                line,
                1,
                "unresolved merge conflict: run the suite and re-record it with `evalock accept`"
                    .into(),
            ));
        }
        let file: BaselineFile = serde_json::from_str(text).map_err(|error| {
            let message = error.to_string();
            let message = message
                .rfind(" at line ")
                .map(|index| message[..index].to_owned())
                .unwrap_or(message);
            (
                u32::try_from(error.line()).unwrap_or(1).max(1),
                u32::try_from(error.column()).unwrap_or(1).max(1),
                message,
            )
        })?;
        if file.schema != BASELINE_SCHEMA {
            return Err((
                1,
                1,
                format!("schema `{}` is not `{BASELINE_SCHEMA}`", file.schema),
            ));
        }
        if file.suite != suite {
            return Err((
                1,
                1,
                format!(
                    "this baseline belongs to suite `{}`, not `{suite}`",
                    file.suite
                ),
            ));
        }
        Ok(file)
    }
}

/// A suite's baseline file as found in one snapshot.
#[derive(Debug, Clone)]
pub struct SuiteBaseline {
    pub path: String,
    pub state: BaselineState,
}

#[derive(Debug, Clone)]
pub enum BaselineState {
    /// Nothing accepted yet.
    Absent,
    Parsed {
        file: BaselineFile,
        /// 1-based line of each entry, for findings that point at it.
        lines: BTreeMap<String, u32>,
    },
    Malformed {
        line: u32,
        column: u32,
        message: String,
    },
}

impl SuiteBaseline {
    pub fn entries(&self) -> Option<&BTreeMap<String, BaselineEntry>> {
        match &self.state {
            BaselineState::Parsed { file, .. } => Some(&file.entries),
            _ => None,
        }
    }

    pub fn entry(&self, case_id: &str) -> Option<&BaselineEntry> {
        self.entries().and_then(|entries| entries.get(case_id))
    }

    pub fn line_of(&self, case_id: &str) -> Option<u32> {
        match &self.state {
            BaselineState::Parsed { lines, .. } => lines.get(case_id).copied(),
            _ => None,
        }
    }
}

/// Loads the baseline of a suite from `path` (a project-relative path from evalock.toml).
pub fn load_baseline(source: &dyn ContentSource, suite: &str, path: &str) -> Result<SuiteBaseline> {
    validate_relative_path(path).map_err(|error| {
        Error::malformed("evalock.toml", format!("suite `{suite}`: baseline {error}"))
    })?;
    let state = match source.read(path)? {
        None => BaselineState::Absent,
        Some(bytes) => match BaselineFile::parse(suite, &bytes) {
            Ok(file) => {
                let lines = entry_lines(&bytes, &file);
                BaselineState::Parsed { file, lines }
            }
            Err((line, column, message)) => BaselineState::Malformed {
                line,
                column,
                message,
            },
        },
    };
    Ok(SuiteBaseline {
        path: path.to_owned(),
        state,
    })
}

/// Finds each entry's key line (`    "<id>": {`) as `render` writes it.
fn entry_lines(bytes: &[u8], file: &BaselineFile) -> BTreeMap<String, u32> {
    let index = LineIndex::new(bytes);
    let text = String::from_utf8_lossy(bytes);
    let mut lines = BTreeMap::new();
    for id in file.entries.keys() {
        let key = format!(
            "\n    {}: {{",
            serde_json::to_string(id).unwrap_or_default()
        );
        if let Some(offset) = text.find(&key) {
            lines.insert(id.clone(), index.line_of(offset + 1));
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::bytes_digest;

    fn sample() -> BaselineFile {
        let mut file = BaselineFile::new("support");
        file.entries.insert(
            "b-case".into(),
            BaselineEntry {
                digest: bytes_digest(b"hello"),
                passed: true,
                context: BaselineContext {
                    case: bytes_digest(b"case"),
                    prompt: Some(bytes_digest(b"prompt")),
                    grader: "builtin@1".into(),
                    normalizer: "ws-v1".into(),
                    model: None,
                },
                commit: None,
                reason: "first".into(),
                completion: "hello".into(),
            },
        );
        file
    }

    #[test]
    fn render_parse_round_trip_and_lines() {
        let text = sample().render();
        let parsed = BaselineFile::parse("support", text.as_bytes()).unwrap();
        assert_eq!(parsed, sample());
        assert_eq!(parsed.render(), text);
        let lines = entry_lines(text.as_bytes(), &parsed);
        assert_eq!(lines["b-case"], 5, "{text}");
    }

    #[test]
    fn malformed_files_report_a_position() {
        let (line, _, message) =
            BaselineFile::parse("support", b"{\n  \"schema\": 1\n}").unwrap_err();
        assert_eq!(line, 2, "{message}");
        let (line, _, _) = BaselineFile::parse("other", sample().render().as_bytes()).unwrap_err();
        assert_eq!(line, 1);
        let conflicted = format!("<<<<<<< HEAD\n{}", sample().render());
        assert!(BaselineFile::parse("support", conflicted.as_bytes())
            .unwrap_err()
            .2
            .contains("merge conflict"));
    }
}
