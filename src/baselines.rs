//! Baselines: one deterministic JSON file per suite holding each case's last-good
//! (human-accepted) normalized completion, its digest, and the context it was recorded
//! against. Written only by `evalock accept`.

pub mod rules;

use crate::cases::strict_json::duplicate_key_position;
use crate::digest::{validate_relative_path, Digest, EntryKind};
use crate::error::{Error, Result};
use crate::source::{ContentSource, Entry};
use crate::text::conflict_marker_line;
use crate::text::{json_error_position, require_clean_text};
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

pub const BASELINE_SCHEMA: &str = "evalock.baseline/v1";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BaselineFile {
    pub schema: String,
    pub suite: String,
    /// By case id, sorted.
    #[serde(deserialize_with = "unique_entries")]
    pub entries: BTreeMap<String, BaselineEntry>,
    /// The suite's noise floor, as `evalock run --repeat N` measured it and `accept`
    /// recorded it: kept beside the baselines, so a pull request that raises it is seen
    /// (EL110), and `compare` calls a suite-level change under it "within noise".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noise: Option<SuiteNoise>,
}

/// What repeating a suite measured (`run --repeat`, [`crate::run::noise`]).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SuiteNoise {
    pub repeats: usize,
    pub cases: usize,
    /// Pass rate of repeat 1 minus repeat 2, in percentage points, with its 95 % interval.
    pub delta: f64,
    pub low: f64,
    pub high: f64,
    /// The minimum detectable effect: a pass-rate change smaller than this many points is
    /// within noise.
    pub mde: f64,
    pub flaky: usize,
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
    /// For a case accepted while failing (`accept --include-failing`): the reasons it
    /// failed with. Failing the same way again is a known failure, a note; failing any
    /// other way blocks.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failure: Vec<String>,
    /// How long the case took when it was accepted (all samples), for its time pin.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    /// Each assertion's outcome when it was accepted, for `compare --base`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub assertions: Vec<crate::graders::AssertionOutcome>,
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
            noise: None,
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
        // One pass: a field given twice is refused by the derived reader, a case given
        // twice by `unique_entries` (serde would keep the last of two equal map keys).
        let file: BaselineFile =
            serde_json::from_str(text).map_err(|error| read_problem(text, &error))?;
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

/// serde_json appends " at line L column C"; the position is reported separately.
fn message_without_position(error: &serde_json::Error) -> String {
    let message = error.to_string();
    match message.rfind(" at line ") {
        Some(index) => message[..index].to_owned(),
        None => message,
    }
}

/// Reads the entries map, refusing a case id given twice as soon as its second key is
/// read (so the parser's position is that key's).
fn unique_entries<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> std::result::Result<BTreeMap<String, BaselineEntry>, D::Error> {
    struct Entries;
    impl<'de> Visitor<'de> for Entries {
        type Value = BTreeMap<String, BaselineEntry>;

        fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
            formatter.write_str("a map of case ids to baseline entries")
        }

        fn visit_map<A: MapAccess<'de>>(
            self,
            mut access: A,
        ) -> std::result::Result<Self::Value, A::Error> {
            let mut entries = BTreeMap::new();
            while let Some(id) = access.next_key::<String>()? {
                if entries.contains_key(&id) {
                    return Err(de::Error::custom(format!("duplicate key `{id}`")));
                }
                let entry = access.next_value()?;
                entries.insert(id, entry);
            }
            Ok(entries)
        }
    }
    deserializer.deserialize_map(Entries)
}

/// A problem reading a baseline; a key given twice (a case or a field) is reported where
/// its second occurrence starts.
fn read_problem(text: &str, error: &serde_json::Error) -> (u32, u32, String) {
    let message = message_without_position(error);
    let duplicate = message
        .strip_prefix("duplicate key `")
        .or_else(|| message.strip_prefix("duplicate field `"))
        .and_then(|rest| rest.strip_suffix('`'));
    if let Some(key) = duplicate {
        let (line, column) = duplicate_key_position(text, error)
            .unwrap_or_else(|| json_error_position(text.as_bytes(), error));
        let message =
            format!("duplicate key `{key}`: a baseline holds one entry per case and each key once");
        return (line, column, message);
    }
    let (line, column) = json_error_position(text.as_bytes(), error);
    (line, column, message)
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
        /// Entries whose stored completion is not what their digest says, in its normal
        /// form, with the digest it hashes to (EL402): worked out as the file is read,
        /// since a load for checking keeps no completion.
        tampered: BTreeMap<String, Digest>,
        /// 1-based line of each entry, for findings that point at it.
        lines: BTreeMap<String, u32>,
        /// The line of the noise floor's `mde`, when the file records one.
        noise_line: Option<u32>,
    },
    Malformed {
        line: u32,
        column: u32,
        message: String,
    },
    /// A directory stands where the file belongs: nothing can be read or written there.
    Directory,
    /// A symlink stands where the file belongs. It is never followed, and its target
    /// string is not a baseline, even when it happens to parse as one.
    Symlink,
}

impl SuiteBaseline {
    pub fn entries(&self) -> Option<&BTreeMap<String, BaselineEntry>> {
        match &self.state {
            BaselineState::Parsed { file, .. } => Some(&file.entries),
            _ => None,
        }
    }

    /// Whether the file is there but cannot be read as a baseline.
    pub fn is_unreadable(&self) -> bool {
        matches!(
            self.state,
            BaselineState::Malformed { .. } | BaselineState::Directory | BaselineState::Symlink
        )
    }

    pub fn entry(&self, case_id: &str) -> Option<&BaselineEntry> {
        self.entries().and_then(|entries| entries.get(case_id))
    }

    /// Each entry whose completion does not hash to its digest, with what it hashes to.
    pub fn tampered(&self) -> impl Iterator<Item = (&str, &BaselineEntry, &Digest)> {
        let (entries, tampered) = match &self.state {
            BaselineState::Parsed { file, tampered, .. } => (Some(&file.entries), Some(tampered)),
            _ => (None, None),
        };
        tampered
            .into_iter()
            .flatten()
            .filter_map(move |(id, actual)| {
                let entry = entries?.get(id)?;
                Some((id.as_str(), entry, actual))
            })
    }

    /// What the completion stored in `entry` (the entry of `case_id`) hashes to: its
    /// digest unless the entry was tampered with.
    pub fn stored_digest<'a>(&'a self, case_id: &str, entry: &'a BaselineEntry) -> &'a Digest {
        match &self.state {
            BaselineState::Parsed { tampered, .. } => {
                tampered.get(case_id).unwrap_or(&entry.digest)
            }
            _ => &entry.digest,
        }
    }

    /// Whether the entry for `case_id` stores a completion that hashes to its digest.
    pub fn is_intact(&self, case_id: &str) -> bool {
        match &self.state {
            BaselineState::Parsed { tampered, .. } => !tampered.contains_key(case_id),
            _ => false,
        }
    }

    /// The recorded noise floor and the line of its `mde`.
    pub fn noise(&self) -> Option<(&SuiteNoise, u32)> {
        match &self.state {
            BaselineState::Parsed {
                file, noise_line, ..
            } => Some((file.noise.as_ref()?, noise_line.unwrap_or(1))),
            _ => None,
        }
    }

    pub fn line_of(&self, case_id: &str) -> Option<u32> {
        match &self.state {
            BaselineState::Parsed { lines, .. } => lines.get(case_id).copied(),
            _ => None,
        }
    }
}

/// How much of each baseline entry a load keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum BaselineDetail {
    /// Every completion: running, accepting, comparing and reviewing read them.
    #[default]
    Full,
    /// No completion (each is verified against its digest as the file is read), failure
    /// reasons or assertion outcomes: all that checks need. Once every suite is accepted,
    /// the completions are more bytes than the cases.
    Digests,
}

/// Baselines parsed once across the snapshots of one command, by suite, path, detail and
/// the git object they hold: `report --trend` reads the baselines of many commits, most
/// of them the same objects. (`check --base` shares a baseline the pull request did not
/// touch in [`rules::check_in_turn`] instead, which keeps none past its suite's rules.)
#[derive(Default)]
pub struct ParsedBaselines {
    parsed: std::sync::Mutex<BaselinesByObject>,
}

type BaselinesByObject =
    std::collections::HashMap<(String, String, BaselineDetail, gix::ObjectId), Arc<SuiteBaseline>>;

impl ParsedBaselines {
    /// The baseline of `suite` at `path`, parsed from `source` unless another snapshot of
    /// the check parsed the same object already.
    pub fn load(
        &self,
        source: &dyn ContentSource,
        suite: &str,
        path: &str,
        detail: BaselineDetail,
    ) -> Result<Arc<SuiteBaseline>> {
        let key = match source.object_id(path) {
            Ok(Some(id)) => (suite.to_owned(), path.to_owned(), detail, id),
            _ => return load_baseline(source, suite, path, detail).map(Arc::new),
        };
        if let Some(found) = self
            .parsed
            .lock()
            .ok()
            .and_then(|map| map.get(&key).cloned())
        {
            return Ok(found);
        }
        let loaded = Arc::new(load_baseline(source, suite, path, detail)?);
        // A file rewritten while it was read is not shared under the object it was.
        let unchanged = matches!(source.object_id(path), Ok(Some(id)) if id == key.3);
        if let (true, Ok(mut map)) = (unchanged, self.parsed.lock()) {
            map.insert(key, Arc::clone(&loaded));
        }
        Ok(loaded)
    }
}

/// Refuses a baseline path from evalock.toml that is not a plain relative path.
pub fn check_baseline_path(suite: &str, path: &str) -> Result<()> {
    validate_relative_path(path).map_err(|error| {
        Error::malformed("evalock.toml", format!("suite `{suite}`: baseline {error}"))
    })
}

/// Loads the baseline of a suite from `path` (a project-relative path from evalock.toml).
pub fn load_baseline(
    source: &dyn ContentSource,
    suite: &str,
    path: &str,
    detail: BaselineDetail,
) -> Result<SuiteBaseline> {
    check_baseline_path(suite, path)?;
    // A new suite has no baseline until its first `accept`: that costs one stat.
    let without_content = |state| {
        Ok(SuiteBaseline {
            path: path.to_owned(),
            state,
        })
    };
    match source.entry_of(path)? {
        None => return without_content(BaselineState::Absent),
        Some(Entry::Directory) => return without_content(BaselineState::Directory),
        Some(Entry::File(EntryKind::Symlink)) => return without_content(BaselineState::Symlink),
        Some(Entry::File(_)) => {}
    }
    let state = match source.read(path)? {
        None => BaselineState::Absent,
        Some(bytes) => match BaselineFile::parse(suite, &bytes) {
            Ok(mut file) => {
                let tampered = file
                    .entries
                    .iter()
                    .filter(|(_, entry)| !rules::entry_is_intact(entry))
                    .map(|(id, entry)| {
                        let actual = crate::graders::completion_digest(&entry.completion);
                        (id.clone(), actual)
                    })
                    .collect();
                if detail == BaselineDetail::Digests {
                    for entry in file.entries.values_mut() {
                        entry.completion = String::new();
                        entry.failure = Vec::new();
                        entry.assertions = Vec::new();
                    }
                }
                let lines = entry_lines(&bytes, &file);
                let noise_line = file
                    .noise
                    .is_some()
                    .then(|| memchr::memmem::rfind(&bytes, b"\n    \"mde\": "))
                    .flatten()
                    .map(|offset| line_number(&bytes, offset + 1));
                BaselineState::Parsed {
                    file,
                    tampered,
                    lines,
                    noise_line,
                }
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
    // Only the key lines of entries start with exactly four spaces and a quote, so they
    // are searched for directly and the lines between them only counted: walking every
    // line took an eighth of a check once every suite was accepted.
    let mut lines = BTreeMap::new();
    let (mut line, mut counted) = (1u32, 0usize);
    for newline in memchr::memmem::find_iter(bytes, b"\n    \"") {
        let newlines = memchr::memchr_iter(b'\n', &bytes[counted..newline]).count();
        line = line.saturating_add(u32::try_from(newlines).unwrap_or(u32::MAX));
        counted = newline;
        let start = newline + 1;
        let end = memchr::memchr(b'\n', &bytes[start..]).map_or(bytes.len(), |at| start + at);
        let Some(key) = std::str::from_utf8(&bytes[start..end])
            .ok()
            .and_then(|text| text.strip_prefix("    "))
            .and_then(|text| text.strip_suffix(": {"))
        else {
            continue;
        };
        let Ok(id) = serde_json::from_str::<String>(key) else {
            continue;
        };
        if file.entries.contains_key(&id) {
            lines.entry(id).or_insert(line.saturating_add(1));
        }
    }
    lines
}

/// The 1-based line of byte `offset`.
fn line_number(bytes: &[u8], offset: usize) -> u32 {
    let before = bytes.get(..offset).unwrap_or(bytes);
    u32::try_from(memchr::memchr_iter(b'\n', before).count() + 1).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::digest::bytes_digest;
    use crate::text::LineIndex;

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
                failure: Vec::new(),
                duration_ms: None,
                assertions: Vec::new(),
                completion: "hello".into(),
            },
        );
        file
    }

    /// Each entry is found at its key line, and the noise floor at its `mde`, however many
    /// lines the entries before them take.
    #[test]
    fn entries_and_the_noise_floor_are_found_at_their_lines() {
        let mut file = sample();
        let mut second = file.entries["b-case"].clone();
        second.failure = vec!["wrong_total".into()];
        file.entries.insert("a \"quoted\" case".into(), second);
        file.noise = Some(SuiteNoise {
            repeats: 2,
            cases: 2,
            delta: 0.0,
            low: -1.0,
            high: 1.0,
            mde: 2.0,
            flaky: 0,
        });
        let text = file.render();
        let line_of = |needle: &str| {
            u32::try_from(
                text.lines()
                    .position(|line| line.starts_with(needle))
                    .expect(needle)
                    + 1,
            )
            .expect("line")
        };
        let directory = tempfile::tempdir().expect("temp dir");
        std::fs::write(directory.path().join("b.json"), &text).expect("write");
        let source = crate::source::WorktreeSource::new(directory.path());
        let loaded =
            load_baseline(&source, "support", "b.json", BaselineDetail::Digests).expect("loads");
        assert_eq!(loaded.line_of("b-case"), Some(line_of("    \"b-case\": {")));
        assert_eq!(
            loaded.line_of("a \"quoted\" case"),
            Some(line_of("    \"a \\\"quoted\\\" case\": {"))
        );
        assert_eq!(loaded.line_of("missing"), None);
        assert_eq!(
            loaded.noise().map(|(_, line)| line),
            Some(line_of("    \"mde\": "))
        );
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

    /// The sample rendered with its one entry listed twice, the second with another
    /// completion: serde alone would keep the second.
    fn with_duplicate_entry() -> String {
        let text = sample().render();
        let start = text.find("    \"b-case\"").unwrap();
        let end = text.rfind("\n  }\n}").unwrap();
        let entry = &text[start..end];
        let second = entry.replace("\"completion\": \"hello\"", "\"completion\": \"bye\"");
        format!("{},\n{second}{}", &text[..end], &text[end..])
    }

    #[test]
    fn a_duplicate_entry_is_refused_on_its_second_line() {
        let text = with_duplicate_entry();
        let (line, column, message) = BaselineFile::parse("support", text.as_bytes()).unwrap_err();
        assert!(message.contains("duplicate key `b-case`"), "{message}");
        let second = text.match_indices("\"b-case\"").nth(1).unwrap().0;
        assert_eq!(
            (line, column),
            LineIndex::new(text.as_bytes()).position_of(text.as_bytes(), second),
            "{text}"
        );
    }

    #[test]
    fn a_duplicate_key_inside_an_entry_is_refused() {
        let text = sample().render().replacen(
            "\"passed\": true,",
            "\"passed\": true,\n      \"passed\": true,",
            1,
        );
        let (line, _, message) = BaselineFile::parse("support", text.as_bytes()).unwrap_err();
        assert!(message.contains("`passed`"), "{message}");
        assert_eq!(line, 8, "{text}");
    }
}
