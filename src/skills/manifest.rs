//! The optional `skill.json` manifest of a local package, as in the seed article: `name`,
//! `version`, `source {repo, commit}` (or `{registry, version, digest}`, or `"local"`),
//! `permissions[]`, `executables[]` and `files{path: sha256}`. Paths are validated before
//! anything is read: an entry such as `../../etc/passwd` is refused, never opened.

use super::front_matter::Located;
use super::Problem;
use crate::cases::strict_json::{duplicate_key_position, StrictValue};
use crate::digest::validate_relative_path;
use crate::text::{json_error_position, LineIndex};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

pub const MANIFEST_FILE: &str = "skill.json";

/// Where a skill came from, as its manifest declares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SourceDecl {
    /// Authored in this repository: its git history is its provenance.
    Local,
    /// Copied from another repository (`repo` + `commit`) or resolved from a registry.
    Remote(RemoteSource),
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RemoteSource {
    pub repo: Option<String>,
    pub commit: Option<String>,
    /// Set for registry skills: the registry's name or URL.
    pub registry: Option<String>,
    /// The registry version the skill was resolved at.
    pub version: Option<String>,
    /// The content digest (tree-v1 of every file but skill.json) the skill was pinned at.
    pub digest: Option<String>,
    /// Line of `source.commit`, or of `source` when absent.
    pub commit_line: u32,
}

impl RemoteSource {
    pub fn is_registry(&self) -> bool {
        self.registry.is_some()
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Manifest {
    pub name: Option<Located<String>>,
    pub version: Option<Located<String>>,
    pub source: Option<Located<SourceDecl>>,
    pub permissions: Option<Located<Vec<String>>>,
    pub executables: Option<Located<Vec<String>>>,
    /// Skill-relative path -> sha256 hex, only for paths that stayed inside the skill.
    pub files: Option<Located<BTreeMap<String, String>>>,
}

/// Parses a skill.json. A syntax error is fatal; field problems are collected and the
/// rest of the manifest is still used.
pub fn parse_manifest(bytes: &[u8]) -> Result<(Manifest, Vec<Problem>), Problem> {
    // JSON parsers stop at a byte order mark with "expected value", which names nothing
    // a person can see in an editor.
    if bytes.starts_with(&[0xEF, 0xBB, 0xBF]) {
        return Err(Problem::at(
            1,
            1,
            "skill.json starts with a byte order mark; save it as UTF-8 without BOM",
        ));
    }
    let text = std::str::from_utf8(bytes).map_err(|error| {
        let (line, column) = LineIndex::new(bytes).position_of(bytes, error.valid_up_to());
        Problem::at(line, column, "skill.json is not valid UTF-8")
    })?;
    let StrictValue(document) = serde_json::from_str::<StrictValue>(text).map_err(|error| {
        let message = error.to_string();
        let message = message
            .split(" at line ")
            .next()
            .unwrap_or(&message)
            .to_owned();
        let (line, column) = duplicate_key_position(text, &error)
            .unwrap_or_else(|| json_error_position(bytes, &error));
        Problem::at(line, column, format!("invalid JSON: {message}"))
    })?;
    let Value::Object(object) = document else {
        return Err(Problem::at(1, 1, "skill.json must hold one JSON object"));
    };
    let lines = KeyLines::new(text);
    let mut reader = ManifestReader {
        object: &object,
        lines: &lines,
        problems: Vec::new(),
    };
    let manifest = Manifest {
        name: reader.string("name"),
        version: reader.string("version"),
        source: reader.source(),
        permissions: reader.strings("permissions"),
        executables: reader.paths("executables"),
        files: reader.files(),
    };
    Ok((manifest, reader.problems))
}

struct ManifestReader<'a> {
    object: &'a Map<String, Value>,
    lines: &'a KeyLines,
    problems: Vec<Problem>,
}

impl ManifestReader<'_> {
    fn line(&self, path: &[&str]) -> u32 {
        self.lines.line_of(path)
    }

    fn problem(&mut self, path: &[&str], message: String) {
        let line = self.line(path);
        self.problems.push(Problem::at(line, 1, message));
    }

    fn located<T>(&self, key: &str, value: T) -> Located<T> {
        let line = self.line(&[key]);
        Located {
            value,
            line,
            end_line: line,
        }
    }

    fn string(&mut self, key: &str) -> Option<Located<String>> {
        match self.object.get(key)? {
            Value::String(text) => Some(self.located(key, text.clone())),
            _ => {
                self.problem(&[key], format!("`{key}` must be a string"));
                None
            }
        }
    }

    fn strings(&mut self, key: &str) -> Option<Located<Vec<String>>> {
        let Some(Value::Array(items)) = self.object.get(key) else {
            if self.object.contains_key(key) {
                self.problem(&[key], format!("`{key}` must be a list of strings"));
            }
            return None;
        };
        let mut values = Vec::new();
        for item in items {
            match item {
                Value::String(text) => values.push(text.clone()),
                other => self.problem(
                    &[key],
                    format!("`{key}` must hold only strings, found {other}"),
                ),
            }
        }
        Some(self.located(key, values))
    }

    fn paths(&mut self, key: &str) -> Option<Located<Vec<String>>> {
        let mut listed = self.strings(key)?;
        let mut kept = Vec::new();
        for path in std::mem::take(&mut listed.value) {
            match validate_relative_path(&path) {
                Ok(()) => kept.push(path),
                Err(error) => self.problem(&[key], refused_path(key, &error)),
            }
        }
        listed.value = kept;
        Some(listed)
    }

    fn files(&mut self) -> Option<Located<BTreeMap<String, String>>> {
        let Some(Value::Object(entries)) = self.object.get("files") else {
            if self.object.contains_key("files") {
                self.problem(
                    &["files"],
                    "`files` must map skill-relative paths to sha256 digests".into(),
                );
            }
            return None;
        };
        // Other manifests group their files by role (`"files": {"core": {…}}`): with no
        // string value, this is no map of pins, and the lock pins every file anyway.
        if !entries.is_empty()
            && entries
                .values()
                .all(|value| value.is_object() || value.is_array())
        {
            return None;
        }
        let mut files = BTreeMap::new();
        for (path, digest) in entries {
            if let Err(error) = validate_relative_path(path) {
                self.problem(&["files", path], refused_path("files", &error));
                continue;
            }
            match digest.as_str().and_then(parse_sha256) {
                Some(hex) => {
                    files.insert(path.clone(), hex);
                }
                None => self.problem(
                    &["files", path],
                    format!("`files.{path}` must be a sha256 digest (64 lowercase hex digits, optionally prefixed `sha256:`)"),
                ),
            }
        }
        Some(self.located("files", files))
    }

    fn source(&mut self) -> Option<Located<SourceDecl>> {
        let declared = match self.object.get("source")? {
            Value::String(text) if text == "local" => SourceDecl::Local,
            Value::Object(fields) => {
                let mut remote = RemoteSource {
                    commit_line: self.line(&["source", "commit"]),
                    ..RemoteSource::default()
                };
                for (key, slot) in [
                    ("repo", &mut remote.repo),
                    ("commit", &mut remote.commit),
                    ("registry", &mut remote.registry),
                    ("version", &mut remote.version),
                    ("digest", &mut remote.digest),
                ] {
                    match fields.get(key) {
                        None | Some(Value::Null) => {}
                        Some(Value::String(text)) => *slot = Some(text.clone()),
                        Some(_) => self.problems.push(Problem::at(
                            self.lines.line_of(&["source", key]),
                            1,
                            format!("`source.{key}` must be a string"),
                        )),
                    }
                }
                SourceDecl::Remote(remote)
            }
            _ => {
                self.problem(
                    &["source"],
                    "`source` must be \"local\" or an object with `repo` and `commit`".into(),
                );
                return None;
            }
        };
        Some(self.located("source", declared))
    }
}

/// serde reports a duplicate key where its object ends; the second spelling of the key
/// is where a reader needs to look.
fn refused_path(key: &str, error: &crate::error::Error) -> String {
    format!("`{key}` names a path outside the skill ({error}); refused without reading it: list only paths inside the skill folder")
}

/// `sha256:<hex>` or bare `<hex>` (the article's form) -> hex.
fn parse_sha256(text: &str) -> Option<String> {
    let hex = text.strip_prefix("sha256:").unwrap_or(text);
    (hex.len() == 64
        && hex
            .bytes()
            .all(|byte| matches!(byte, b'0'..=b'9' | b'a'..=b'f')))
    .then(|| hex.to_owned())
}

/// The 1-based line of every object key in a JSON text, by key path, so manifest
/// findings anchor on the line that declares them.
struct KeyLines {
    lines: BTreeMap<Vec<String>, u32>,
}

impl KeyLines {
    fn new(text: &str) -> KeyLines {
        let bytes = text.as_bytes();
        let mut lines = BTreeMap::new();
        // One frame per open container: its key path and whether it is an object.
        let mut frames: Vec<(Vec<String>, bool)> = Vec::new();
        let mut pending_key: Option<String> = None;
        let mut line = 1_u32;
        let mut index = 0;
        while index < bytes.len() {
            match bytes[index] {
                b'\n' => line += 1,
                b'"' => {
                    let end = string_end(bytes, index);
                    let in_object = frames.last().is_some_and(|(_, is_object)| *is_object);
                    if in_object && next_significant(bytes, end + 1) == Some(b':') {
                        let key = text
                            .get(index..=end)
                            .and_then(|quoted| serde_json::from_str::<String>(quoted).ok())
                            .unwrap_or_default();
                        let mut path = frames
                            .last()
                            .map(|(path, _)| path.clone())
                            .unwrap_or_default();
                        path.push(key.clone());
                        lines.entry(path).or_insert(line);
                        pending_key = Some(key);
                    }
                    index = end;
                }
                open @ (b'{' | b'[') => {
                    let mut path = frames
                        .last()
                        .map(|(path, _)| path.clone())
                        .unwrap_or_default();
                    if let Some(key) = pending_key.take() {
                        path.push(key);
                    } else if !frames.is_empty() {
                        path.push("[]".into());
                    }
                    frames.push((path, open == b'{'));
                }
                b'}' | b']' => {
                    frames.pop();
                    pending_key = None;
                }
                b',' => pending_key = None,
                _ => {}
            }
            index += 1;
        }
        KeyLines { lines }
    }

    /// The line of the key at `path`, else of its nearest ancestor, else 1.
    fn line_of(&self, path: &[&str]) -> u32 {
        (1..=path.len())
            .rev()
            .find_map(|length| {
                let key: Vec<String> = path[..length]
                    .iter()
                    .map(|part| (*part).to_owned())
                    .collect();
                self.lines.get(&key).copied()
            })
            .unwrap_or(1)
    }
}

/// Index of the closing quote of the string starting at `start`.
fn string_end(bytes: &[u8], start: usize) -> usize {
    let mut index = start + 1;
    while index < bytes.len() {
        match bytes[index] {
            b'\\' => index += 2,
            b'"' => return index,
            _ => index += 1,
        }
    }
    bytes.len().saturating_sub(1)
}

fn next_significant(bytes: &[u8], from: usize) -> Option<u8> {
    bytes
        .get(from..)?
        .iter()
        .copied()
        .find(|byte| !byte.is_ascii_whitespace())
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIXED: &str = r#"{
  "name": "changelog-summarizer",
  "version": "1.0.0",
  "source": {
    "repo": "https://example.com/team/changelog-skill",
    "commit": "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
  },
  "permissions": ["fs:read:workspace", "fs:write:./out", "net:none"],
  "executables": ["scripts/collect.sh"],
  "files": {
    "SKILL.md": "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "scripts/collect.sh": "sha256:60303ae22b998861bce3b28f33eec1be758a213c86c93c076dbe9f558c11c752"
  }
}"#;

    #[test]
    fn reads_the_article_manifest_with_lines() {
        let (manifest, problems) = parse_manifest(FIXED.as_bytes()).unwrap();
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(
            manifest
                .version
                .as_ref()
                .map(|version| (version.value.as_str(), version.line)),
            Some(("1.0.0", 3))
        );
        let Some(Located {
            value: SourceDecl::Remote(source),
            line,
            ..
        }) = &manifest.source
        else {
            panic!("source")
        };
        assert_eq!((*line, source.commit_line), (4, 6));
        assert_eq!(
            source.repo.as_deref(),
            Some("https://example.com/team/changelog-skill")
        );
        assert_eq!(
            manifest
                .permissions
                .as_ref()
                .map(|permissions| permissions.line),
            Some(8)
        );
        let files = manifest.files.unwrap();
        assert_eq!(files.value.len(), 2);
        assert_eq!(files.value["scripts/collect.sh"].len(), 64);
    }

    #[test]
    fn traversal_is_refused_with_its_line() {
        let text = "{\n  \"files\": {\n    \"SKILL.md\": \"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08\",\n    \"../../etc/passwd\": \"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08\"\n  },\n  \"executables\": [\"/bin/sh\"]\n}";
        let (manifest, problems) = parse_manifest(text.as_bytes()).unwrap();
        assert_eq!(
            manifest.files.unwrap().value.keys().collect::<Vec<_>>(),
            ["SKILL.md"]
        );
        assert!(manifest.executables.unwrap().value.is_empty());
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert_eq!(problems[0].line, 6);
        assert_eq!(problems[1].line, 4);
        assert!(
            problems[1].message.contains("refused without reading it"),
            "{}",
            problems[1].message
        );
    }

    #[test]
    fn syntax_errors_and_duplicates_are_fatal_with_a_position() {
        let error = parse_manifest(b"{\n  \"name\": \"a\",\n  \"name\": \"b\"\n}").unwrap_err();
        assert_eq!(error.line, 3, "{error:?}");
        let error = parse_manifest(b"{\n  \"name\": \n}").unwrap_err();
        assert_eq!(error.line, 3, "{error:?}");
        assert!(parse_manifest(b"[1]").is_err());
    }

    #[test]
    fn wrong_types_are_problems_not_panics() {
        let (manifest, problems) = parse_manifest(
            br#"{"version": 1, "permissions": "net:any", "source": 5, "files": {"a": "md5:x"}}"#,
        )
        .unwrap();
        assert!(
            manifest.version.is_none()
                && manifest.permissions.is_none()
                && manifest.source.is_none()
        );
        assert_eq!(problems.len(), 4, "{problems:?}");
    }

    #[test]
    fn key_lines_follow_escapes_inside_strings() {
        let text = "{\n  \"a\\\"b\": \"x\\\\\\\" {\\\\\",\n  \"c\": {\n    \"d\": \"\\\"e\\\": 1\"\n  }\n}";
        serde_json::from_str::<serde_json::Value>(text).expect("valid JSON");
        let keys = KeyLines::new(text);
        assert_eq!(keys.line_of(&["a\"b"]), 2);
        assert_eq!(keys.line_of(&["c"]), 3);
        assert_eq!(keys.line_of(&["c", "d"]), 4);
        assert_eq!(
            keys.line_of(&["c", "e"]),
            3,
            "a key's lookalike inside a value"
        );
        assert_eq!(keys.lines.len(), 3, "{:?}", keys.lines);
        // Text cut inside a string or an escape is read to its end, never past it.
        for cut in ["{\"a", "{\"a\\", "\""] {
            assert!(KeyLines::new(cut).lines.is_empty());
        }
    }

    #[test]
    fn file_digests_are_64_lowercase_hex_digits() {
        let hex = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";
        assert_eq!(parse_sha256(hex).as_deref(), Some(hex));
        assert_eq!(parse_sha256(&format!("sha256:{hex}")).as_deref(), Some(hex));
        for bad in [
            &hex[1..],
            &hex.to_uppercase(),
            &format!("{}g", &hex[1..]),
            &format!("{hex}0"),
            "",
        ] {
            assert_eq!(parse_sha256(bad), None, "{bad}");
        }
    }

    #[test]
    fn registry_and_local_sources() {
        let (manifest, _) =
            parse_manifest(br#"{"source": {"registry": "skills.example", "version": "2.1.0", "digest": "sha256:ab"}}"#).unwrap();
        let Some(Located {
            value: SourceDecl::Remote(source),
            ..
        }) = manifest.source
        else {
            panic!()
        };
        assert!(source.is_registry());
        let (manifest, _) = parse_manifest(br#"{"source": "local"}"#).unwrap();
        assert_eq!(
            manifest.source.map(|source| source.value),
            Some(SourceDecl::Local)
        );
    }
}
