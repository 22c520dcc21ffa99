//! `evalock.lock`: TOML, deterministic and sorted, one reviewable line group per case so
//! that branches adding different cases merge cleanly.

use super::config::GraderKind;
use super::skill_lock::{render_skills, validate_skill_paths, SkillLock};
use crate::error::{Error, Result};
use crate::grade::GraderProgram;
use crate::hash::{Digest, BYTES_RECIPE, CASE_RECIPE, TREE_RECIPE};
use crate::source::ContentSource;
use crate::text::{line_of_first, require_clean_text, LineIndex};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt::{self, Write};
use std::sync::Arc;

pub const LOCK_FILE: &str = "evalock.lock";
pub const LOCK_VERSION: u32 = 1;
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
}

impl GraderLock {
    /// The entry for a grader that runs `program`.
    pub fn new(version: &str, program: &GraderProgram, digest: Digest) -> GraderLock {
        let (kind, command) = match program {
            GraderProgram::Builtin => (GraderKind::Builtin, None),
            GraderProgram::Command(argv) => (GraderKind::Command, Some(argv.clone())),
        };
        GraderLock {
            version: version.to_owned(),
            kind: Some(kind),
            command,
            digest,
            files: BTreeMap::new(),
        }
    }

    /// What the lock says the grader runs, read as the config is (a `command` beside
    /// `kind = "builtin"` is never run); `None` when the lock predates pinning it.
    pub fn program(&self) -> Option<GraderProgram> {
        match (self.kind?, &self.command) {
            (GraderKind::Command, command) => {
                Some(GraderProgram::Command(command.clone().unwrap_or_default()))
            }
            (GraderKind::Builtin, _) => Some(GraderProgram::Builtin),
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

/// One suite's case entries, sorted by id as the lock lists them, found by binary search.
/// A large lock is read in this order: its entries are kept as read, not built into a tree,
/// and their ids are kept one after the other in one buffer (200,000 of them).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(
    from = "BTreeMap<String, CaseLock>",
    into = "BTreeMap<String, CaseLock>"
)]
pub struct CaseEntries {
    /// The ids, one after the other.
    ids: String,
    /// Each entry with where its id ends in `ids` (it starts where the one before ends).
    entries: Vec<(usize, CaseLock)>,
}

impl CaseEntries {
    /// Room for `entries` entries whose ids take `id_bytes` bytes in all.
    pub(super) fn with_capacity(entries: usize, id_bytes: usize) -> CaseEntries {
        CaseEntries {
            ids: String::with_capacity(id_bytes),
            entries: Vec::with_capacity(entries),
        }
    }

    /// Adds an entry after the others; `None` (and nothing added) unless its id comes
    /// after theirs.
    pub(super) fn push_sorted(&mut self, id: &str, entry: CaseLock) -> Option<()> {
        if self.last_id().is_some_and(|last| last >= id) {
            return None;
        }
        self.ids.push_str(id);
        self.entries.push((self.ids.len(), entry));
        Some(())
    }

    /// The entry added last.
    pub(super) fn last_mut(&mut self) -> Option<&mut CaseLock> {
        self.entries.last_mut().map(|(_, entry)| entry)
    }

    fn last_id(&self) -> Option<&str> {
        self.entries
            .len()
            .checked_sub(1)
            .map(|index| self.id(index))
    }

    fn start(&self, index: usize) -> usize {
        match index {
            0 => 0,
            _ => self.entries[index - 1].0,
        }
    }

    fn id(&self, index: usize) -> &str {
        &self.ids[self.start(index)..self.entries[index].0]
    }

    fn position(&self, id: &str) -> std::result::Result<usize, usize> {
        let mut range = 0..self.entries.len();
        // A binary search by index: each probe needs its neighbour's end for its start.
        while !range.is_empty() {
            let middle = range.start + range.len() / 2;
            match self.id(middle).cmp(id) {
                std::cmp::Ordering::Less => range.start = middle + 1,
                std::cmp::Ordering::Greater => range.end = middle,
                std::cmp::Ordering::Equal => return Ok(middle),
            }
        }
        Err(range.start)
    }

    pub fn get(&self, id: &str) -> Option<&CaseLock> {
        let index = self.position(id).ok()?;
        Some(&self.entries[index].1)
    }

    /// Adds the entry of `id`, or replaces it: then the one it replaced. Adding anywhere
    /// but at the end moves the entries after it.
    pub fn insert(&mut self, id: String, entry: CaseLock) -> Option<CaseLock> {
        match self.position(&id) {
            Ok(index) => Some(std::mem::replace(&mut self.entries[index].1, entry)),
            Err(index) => {
                let start = self.start(index);
                self.ids.insert_str(start, &id);
                for (end, _) in &mut self.entries[index..] {
                    *end += id.len();
                }
                self.entries.insert(index, (start + id.len(), entry));
                None
            }
        }
    }

    #[cfg(test)]
    pub fn remove(&mut self, id: &str) -> Option<CaseLock> {
        let index = self.position(id).ok()?;
        let start = self.start(index);
        self.ids.replace_range(start..start + id.len(), "");
        for (end, _) in &mut self.entries[index + 1..] {
            *end -= id.len();
        }
        Some(self.entries.remove(index).1)
    }

    /// The entries in id order.
    pub fn iter(&self) -> CaseEntriesIter<'_> {
        CaseEntriesIter {
            ids: &self.ids,
            start: 0,
            entries: self.entries.iter(),
        }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// The entries of a [`CaseEntries`] with their ids, in id order.
#[derive(Debug, Clone)]
pub struct CaseEntriesIter<'a> {
    ids: &'a str,
    start: usize,
    entries: std::slice::Iter<'a, (usize, CaseLock)>,
}

impl<'a> Iterator for CaseEntriesIter<'a> {
    type Item = (&'a str, &'a CaseLock);

    fn next(&mut self) -> Option<Self::Item> {
        let (end, entry) = self.entries.next()?;
        let id = &self.ids[self.start..*end];
        self.start = *end;
        Some((id, entry))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.entries.size_hint()
    }
}

impl ExactSizeIterator for CaseEntriesIter<'_> {}

impl<'a> IntoIterator for &'a CaseEntries {
    type Item = (&'a str, &'a CaseLock);
    type IntoIter = CaseEntriesIter<'a>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl From<BTreeMap<String, CaseLock>> for CaseEntries {
    fn from(map: BTreeMap<String, CaseLock>) -> Self {
        let id_bytes = map.keys().map(String::len).sum();
        let mut entries = CaseEntries::with_capacity(map.len(), id_bytes);
        for (id, entry) in map {
            // A map's keys are sorted and distinct.
            let _ = entries.push_sorted(&id, entry);
        }
        entries
    }
}

impl From<CaseEntries> for BTreeMap<String, CaseLock> {
    fn from(entries: CaseEntries) -> Self {
        entries
            .iter()
            .map(|(id, entry)| (id.to_owned(), entry.clone()))
            .collect()
    }
}

/// As into a map: sorted by id, the last entry of an id kept.
impl FromIterator<(String, CaseLock)> for CaseEntries {
    fn from_iter<I: IntoIterator<Item = (String, CaseLock)>>(entries: I) -> Self {
        BTreeMap::from_iter(entries).into()
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
        }
    }

    /// Reads the lock at `path`: streamed through the line reader when the source can
    /// stream it and it has the shape `evalock lock` writes (so the text is never held
    /// whole), else parsed from its bytes by [`Lock::parse`], which also locates errors.
    pub fn read(source: &dyn ContentSource, path: &str) -> Result<Option<Lock>> {
        if let Some(reader) = source.reader(path)? {
            let streamed = super::lock_fast::parse_rendered_from(reader).filter(|lock| {
                // Errors are located from the text: the bytes path below reports them.
                lock.lock_version == LOCK_VERSION
                    && lock.validate(path, "").is_ok()
                    && validate_skill_paths(path, "", &lock.skills).is_ok()
            });
            if streamed.is_some() {
                return Ok(streamed);
            }
        }
        match source.read(path)? {
            Some(bytes) => Lock::parse(path, &bytes).map(Some),
            None => Ok(None),
        }
    }

    /// Parses a lock; `path` is used in messages.
    pub fn parse(path: &str, bytes: &[u8]) -> Result<Lock> {
        let text = require_clean_text(bytes).map_err(|(line, column, message)| {
            Error::malformed(format!("{path}:{line}:{column}"), message)
        })?;
        if let Some(line) = conflict_marker_line(text) {
            return Err(Error::malformed(
                format!("{path}:{line}"),
                "unresolved merge conflict: run `evalock lock` to regenerate the lock from the merged cases",
            ));
        }
        let parsed = match super::lock_fast::parse_rendered_from(text.as_bytes()) {
            Some(lock) => Ok(lock),
            None => toml::from_str::<Lock>(text),
        };
        let lock: Lock = parsed.map_err(|error| {
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
        Ok(lock)
    }

    /// What TOML cannot refuse for us: paths that leave the project and ids no case can have.
    fn validate(&self, path: &str, text: &str) -> Result<()> {
        let regenerate = "; run `evalock lock` to regenerate the lock from the cases";
        for suite in self.suites.keys().chain(self.cases.keys()) {
            if !crate::model::config::is_valid_name(suite) {
                let line = line_of_first(
                    text,
                    &[
                        &format!("[suite.{}", toml_key(suite)),
                        &format!("[case.{}", toml_key(suite)),
                    ],
                );
                return Err(Error::malformed(
                    format!("{path}:{line}"),
                    format!("suite name {suite:?} is not a valid suite name{regenerate}"),
                ));
            }
        }
        for (suite, cases) in &self.cases {
            // Neighbouring entries share their file (one allocation): checked once.
            let mut checked_file: Option<&Arc<str>> = None;
            for (id, case) in cases {
                let header = || format!("[case.{}.{}]", toml_key(suite), toml_key(id));
                // Control characters: C0, DEL and C1; an ASCII id needs no decoding.
                let control = match id.is_ascii() {
                    true => id.bytes().any(|byte| byte < 0x20 || byte == 0x7f),
                    false => id.chars().any(char::is_control),
                };
                if control {
                    let line = line_of_first(text, &[&header(), &toml_string(id)]);
                    return Err(Error::malformed(
                        format!("{path}:{line}"),
                        format!("case id {id:?} in suite `{suite}` contains control characters (newline, NUL, ...){regenerate}"),
                    ));
                }
                if checked_file.is_some_and(|file| Arc::ptr_eq(file, &case.file)) {
                    continue;
                }
                if let Err(error) = crate::hash::validate_relative_path(&case.file) {
                    let line = line_of_first(
                        text,
                        &[&format!("file = {}", toml_string(&case.file)), &header()],
                    );
                    return Err(Error::malformed(
                        format!("{path}:{line}"),
                        format!("case `{suite}/{id}`: {error}{regenerate}"),
                    ));
                }
                checked_file = Some(&case.file);
            }
        }
        for grader in self.graders.values() {
            for file in grader.files.keys() {
                if let Err(error) = crate::hash::validate_relative_path(file) {
                    let line = line_of_first(text, &[&toml_key(file), file]);
                    return Err(Error::malformed(
                        format!("{path}:{line}"),
                        format!("grader source entry: {error}{regenerate}"),
                    ));
                }
            }
        }
        for suite in self.suites.values() {
            for prompt in suite.prompts.keys() {
                if let Err(error) = crate::hash::validate_relative_path(prompt) {
                    let line = line_of_first(text, &[&toml_key(prompt), prompt]);
                    return Err(Error::malformed(
                        format!("{path}:{line}"),
                        format!("prompt entry: {error}{regenerate}"),
                    ));
                }
            }
        }
        Ok(())
    }

    /// The lock as the exact text `evalock lock` writes: sorted, commented, no timestamps.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let _ = self.render_into(&mut out);
        out
    }

    /// Writes the rendered lock piece by piece: [`Self::render_head_into`], the case
    /// entries, then the skills.
    pub fn render_into(&self, out: &mut impl Write) -> std::fmt::Result {
        self.render_head_into(out)?;
        self.render_cases_into(out)?;
        self.render_skills_into(out)
    }

    /// Everything before the case entries: the header, recipes, suites and graders.
    pub(super) fn render_head_into(&self, out: &mut impl Write) -> std::fmt::Result {
        out.write_str("# evalock.lock: written by `evalock lock`. Review it in pull requests; never edit it by hand.\n")?;
        writeln!(out, "lock_version = {}", self.lock_version)?;
        out.write_str("\n[recipes]\n")?;
        writeln!(out, "case = {}", toml_string(&self.recipes.case))?;
        writeln!(out, "prompt = {}", toml_string(&self.recipes.prompt))?;
        writeln!(out, "tree = {}", toml_string(&self.recipes.tree))?;
        writeln!(out, "suite = {}", toml_string(&self.recipes.suite))?;
        for (name, suite) in &self.suites {
            writeln!(out, "\n[suite.{}]", toml_key(name))?;
            writeln!(out, "digest = {}", toml_string(&suite.digest.to_string()))?;
            if let Some(prompt) = &suite.prompt {
                writeln!(out, "prompt = {}", toml_string(&prompt.to_string()))?;
            }
            if !suite.prompts.is_empty() {
                writeln!(out, "\n[suite.{}.prompts]", toml_key(name))?;
                for (path, digest) in &suite.prompts {
                    writeln!(
                        out,
                        "{} = {}",
                        toml_key(path),
                        toml_string(&digest.to_string())
                    )?;
                }
            }
        }
        for (id, grader) in &self.graders {
            let _ = writeln!(out, "\n[grader.{}]", toml_key(id));
            let _ = writeln!(out, "version = {}", toml_string(&grader.version));
            if let Some(kind) = grader.kind {
                let _ = writeln!(out, "kind = {}", toml_string(kind.as_str()));
            }
            if let Some(command) = &grader.command {
                let _ = writeln!(out, "command = {}", toml_string_array(command));
            }
            let _ = writeln!(out, "digest = {}", toml_string(&grader.digest.to_string()));
            if !grader.files.is_empty() {
                let _ = writeln!(out, "\n[grader.{}.files]", toml_key(id));
                for (path, digest) in &grader.files {
                    let _ = writeln!(
                        out,
                        "{} = {}",
                        toml_key(path),
                        toml_string(&digest.to_string())
                    );
                }
            }
        }
        Ok(())
    }

    /// The case entries, each after a blank line.
    fn render_cases_into(&self, out: &mut impl Write) -> std::fmt::Result {
        // 200,000 entries in a large lock: they are put together in one buffer, without
        // the formatting machinery, and written 32 KiB at a time.
        const BATCH: usize = 32 * 1024;
        let mut entries = String::with_capacity(BATCH + 1024);
        // Neighbouring entries share their file: its line is written once per run of them.
        let mut file_line: Option<(&Arc<str>, String)> = None;
        for (suite, cases) in &self.cases {
            let suite_key = toml_key(suite);
            for (id, case) in cases {
                entries.push_str("\n[case.");
                entries.push_str(&suite_key);
                entries.push('.');
                write_toml_key(&mut entries, id)?;
                entries.push_str("]\nversion = ");
                push_decimal(&mut entries, case.version);
                entries.push_str("\ndigest = \"");
                case.digest.write_text(&mut entries)?;
                entries.push('"');
                match &file_line {
                    Some((file, line)) if Arc::ptr_eq(file, &case.file) => entries.push_str(line),
                    _ => {
                        let mut line = String::from("\nfile = ");
                        write_toml_string(&mut line, &case.file)?;
                        line.push('\n');
                        entries.push_str(&line);
                        file_line = Some((&case.file, line));
                    }
                }
                if case.retired {
                    entries.push_str("retired = true\n");
                }
                if entries.len() >= BATCH {
                    out.write_str(&entries)?;
                    entries.clear();
                }
            }
        }
        out.write_str(&entries)
    }

    /// The skill tables, last in the lock.
    pub(super) fn render_skills_into(&self, out: &mut impl Write) -> std::fmt::Result {
        let mut skills = String::new();
        render_skills(&mut skills, &self.skills);
        out.write_str(&skills)
    }
}

impl Default for Lock {
    fn default() -> Self {
        Lock::new()
    }
}

/// The 1-based line of the first git conflict marker, if any.
pub fn conflict_marker_line(text: &str) -> Option<usize> {
    crate::text::split_lines(text)
        .position(is_conflict_marker)
        .map(|index| index + 1)
}

/// Whether a line (without its newline) is a git conflict marker.
pub fn is_conflict_marker(line: &str) -> bool {
    line.starts_with("<<<<<<< ") || line == "=======" || line.starts_with(">>>>>>> ")
}

/// A TOML key: bare when it can be, else a basic string.
pub fn toml_key(key: &str) -> String {
    TomlKey(key).to_string()
}

/// A TOML basic string. JSON string escapes are a subset TOML accepts.
pub fn toml_string(value: &str) -> String {
    TomlString(value).to_string()
}

/// A TOML array of basic strings on one line: `["python3", "graders/check.py"]`.
pub fn toml_string_array(values: &[String]) -> String {
    let items: Vec<String> = values.iter().map(|value| toml_string(value)).collect();
    format!("[{}]", items.join(", "))
}

/// Writes [`toml_key`] without building a string (a lock renders 200,000 of them).
pub struct TomlKey<'a>(pub &'a str);

impl fmt::Display for TomlKey<'_> {
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_toml_key(out, self.0)
    }
}

/// Writes [`toml_string`] without building a string.
pub struct TomlString<'a>(pub &'a str);

impl fmt::Display for TomlString<'_> {
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_toml_string(out, self.0)
    }
}

/// [`toml_key`] into any writer.
fn write_toml_key(out: &mut impl Write, key: &str) -> fmt::Result {
    match is_bare_key(key) {
        true => out.write_str(key),
        false => write_toml_string(out, key),
    }
}

/// Whether TOML takes `key` unquoted (and [`toml_key`] writes it so).
pub(super) fn is_bare_key(key: &str) -> bool {
    !key.is_empty()
        && key
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || byte == b'-' || byte == b'_')
}

/// [`toml_string`] into any writer.
fn write_toml_string(out: &mut impl Write, value: &str) -> fmt::Result {
    out.write_char('"')?;
    let mut plain_from = 0;
    for (at, character) in value.char_indices() {
        let escape = match character {
            '"' => Some("\\\""),
            '\\' => Some("\\\\"),
            '\n' => Some("\\n"),
            '\t' => Some("\\t"),
            '\r' => Some("\\r"),
            control if control.is_control() => None,
            _ => continue,
        };
        out.write_str(&value[plain_from..at])?;
        match escape {
            Some(escape) => out.write_str(escape)?,
            None => write!(out, "\\u{:04X}", u32::from(character))?,
        }
        plain_from = at + character.len_utf8();
    }
    out.write_str(&value[plain_from..])?;
    out.write_char('"')
}

/// `value` in decimal, as `{}` formats it.
pub(super) fn push_decimal(out: &mut String, mut value: u64) {
    let mut digits = [0u8; 20];
    let mut start = digits.len();
    loop {
        start -= 1;
        digits[start] = b'0' + (value % 10) as u8;
        value /= 10;
        if value == 0 {
            break;
        }
    }
    out.push_str(std::str::from_utf8(&digits[start..]).unwrap_or_default());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::bytes_digest;

    #[test]
    fn decimals_are_written_as_formatting_writes_them() {
        for value in [0, 1, 9, 10, 99, 100, 1001, 4_294_967_296, u64::MAX] {
            let mut written = String::from("x");
            push_decimal(&mut written, value);
            assert_eq!(written, format!("x{value}"));
        }
    }

    fn sample() -> Lock {
        let mut lock = Lock::new();
        lock.suites.insert(
            "support".into(),
            SuiteLock {
                digest: bytes_digest(b"suite"),
                prompt: Some(bytes_digest(b"prompt")),
                prompts: [("prompts/support.txt".to_owned(), bytes_digest(b"prompt"))].into(),
            },
        );
        lock.graders.insert(
            "strict".into(),
            GraderLock {
                files: [("graders/strict.py".to_owned(), bytes_digest(b"py"))].into(),
                ..GraderLock::new(
                    "struct-3",
                    &GraderProgram::Command(vec!["python3".into(), "graders/strict.py".into()]),
                    bytes_digest(b"tree"),
                )
            },
        );
        let cases = lock.cases.entry("support".into()).or_default();
        cases.insert(
            "refund \"quoted\" id".into(),
            CaseLock {
                version: 3,
                digest: bytes_digest(b"a"),
                file: "evals/support.jsonl".into(),
                retired: false,
            },
        );
        cases.insert(
            "old-case".into(),
            CaseLock {
                version: 1,
                digest: bytes_digest(b"b"),
                file: "evals/support.jsonl".into(),
                retired: true,
            },
        );
        lock
    }

    #[test]
    fn render_then_parse_round_trips() {
        let lock = sample();
        let text = lock.render();
        assert_eq!(Lock::parse("evalock.lock", text.as_bytes()).unwrap(), lock);
        assert_eq!(
            text,
            Lock::parse("evalock.lock", text.as_bytes())
                .unwrap()
                .render(),
            "render must be stable"
        );
    }

    #[test]
    fn each_case_is_its_own_line_group() {
        let text = sample().render();
        assert!(
            text.contains("\n[case.support.old-case]\nversion = 1\n"),
            "{text}"
        );
        assert!(
            text.contains("[case.support.\"refund \\\"quoted\\\" id\"]"),
            "{text}"
        );
    }

    #[test]
    fn conflict_markers_are_whole_line_markers() {
        let cases: &[(&str, Option<usize>)] = &[
            ("<<<<<<< HEAD\n", Some(1)),
            ("a\n=======", Some(2)),
            ("a\n=======\nb", Some(2)),
            ("a\n=======x\n>>>>>>> b", Some(3)),
            ("a\n<<<<<<<\n x <<<<<<< y\n", None),
            ("x = \"=======\"\n\n\n>>>>>>> other\n<<<<<<< HEAD", Some(4)),
            ("<a>\n=b\n>>>>>>>\n==\n=======\n", Some(5)),
            ("{\"a\": \"<<<<<<< \"}\n{\"b\": 1}\n", None),
            ("=======", Some(1)),
            (">>>>>>> x", Some(1)),
            ("", None),
        ];
        for (text, line) in cases {
            assert_eq!(conflict_marker_line(text), *line, "{text:?}");
        }
    }

    #[test]
    fn conflict_markers_are_reported_with_their_line() {
        let text = "lock_version = 1\n<<<<<<< HEAD\nx\n=======\ny\n>>>>>>> branch\n";
        let error = Lock::parse("evalock.lock", text.as_bytes()).unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("evalock.lock:2: unresolved merge conflict"),
            "{error}"
        );
        assert_eq!(error.exit_code(), 65);
    }

    #[test]
    fn truncated_lock_is_malformed_with_a_line() {
        let text = sample().render();
        let truncated = &text[..text.len() - 20];
        let error = Lock::parse("evalock.lock", truncated.as_bytes()).unwrap_err();
        assert!(error.to_string().starts_with("evalock.lock:"), "{error}");
    }

    #[test]
    fn traversal_in_lock_paths_is_refused() {
        let text = sample()
            .render()
            .replace("evals/support.jsonl", "../../etc/passwd");
        assert!(Lock::parse("evalock.lock", text.as_bytes()).is_err());
    }

    #[test]
    fn case_entries_behave_as_a_map_sorted_by_id() {
        let entry = |version: u64| CaseLock {
            version,
            digest: bytes_digest(&version.to_le_bytes()),
            file: Arc::from("evals/a.jsonl"),
            retired: false,
        };
        let mut entries = CaseEntries::default();
        let mut map = BTreeMap::new();
        // Inserts, replacements and removals in a scrambled order, "b" < "b-1" < "b1" < "é".
        let ids = ["b1", "a", "\u{e9}", "b", "b-1", "a", "", "b1", "z"];
        for (step, id) in ids.iter().enumerate() {
            let version = step as u64;
            assert_eq!(
                entries.insert(id.to_string(), entry(version)),
                map.insert(id.to_string(), entry(version))
            );
            if step % 4 == 3 {
                assert_eq!(entries.remove("a"), map.remove("a"));
            }
            assert!(
                entries
                    .iter()
                    .eq(map.iter().map(|(id, entry)| (id.as_str(), entry))),
                "after {id:?}"
            );
            assert_eq!(entries.len(), map.len());
        }
        for id in ids.iter().chain(&["missing", "b0", "\u{ff}"]) {
            assert_eq!(entries.get(id), map.get(*id), "{id:?}");
        }
        // Collected like a map: sorted, the last entry of an id kept; and back again.
        let collected: CaseEntries = [("y", 1), ("x", 2), ("y", 3)]
            .map(|(id, version)| (id.to_string(), entry(version)))
            .into_iter()
            .collect();
        let versions: Vec<_> = collected.iter().map(|(id, e)| (id, e.version)).collect();
        assert_eq!(versions, [("x", 2), ("y", 3)]);
        assert_eq!(
            BTreeMap::from(collected.clone()),
            BTreeMap::from_iter(collected.iter().map(|(id, e)| (id.to_owned(), e.clone())))
        );
        assert!(CaseEntries::default().is_empty());
        // Entries read in order are pushed; one out of order or repeated is refused.
        let mut pushed = CaseEntries::with_capacity(2, 4);
        assert_eq!(pushed.push_sorted("b", entry(1)), Some(()));
        assert_eq!(pushed.push_sorted("b", entry(2)), None);
        assert_eq!(pushed.push_sorted("a", entry(3)), None);
        assert_eq!(pushed.push_sorted("bb", entry(4)), Some(()));
        pushed.last_mut().unwrap().version = 5;
        let versions: Vec<_> = pushed.iter().map(|(id, e)| (id, e.version)).collect();
        assert_eq!(versions, [("b", 1), ("bb", 5)]);
        assert_eq!(pushed.iter().len(), 2);
    }

    #[test]
    fn ids_with_control_characters_are_refused_at_their_line() {
        let with_id = |id: &str| {
            let mut lock = sample();
            let entry = CaseLock {
                version: 1,
                digest: bytes_digest(id.as_bytes()),
                file: Arc::from("evals/support.jsonl"),
                retired: false,
            };
            lock.cases
                .entry("support".into())
                .or_default()
                .insert(id.to_owned(), entry);
            let text = lock.render();
            (Lock::parse("evalock.lock", text.as_bytes()), text)
        };
        // C0, DEL and C1 controls, in ASCII ids and in ids with other characters.
        for id in [
            "a\u{0}",
            "a\nb",
            "a\u{1f}",
            "a\u{7f}",
            "\u{e9}\u{7f}",
            "\u{e9}\u{85}",
            "\u{9f}",
        ] {
            let (parsed, text) = with_id(id);
            let error = parsed.unwrap_err().to_string();
            assert!(
                error.contains("contains control characters"),
                "{id:?}: {error}"
            );
            let line = 1 + text
                .lines()
                .position(|line| line.contains(&toml_string(id)))
                .unwrap();
            assert!(
                error.starts_with(&format!("evalock.lock:{line}:")),
                "{id:?}: {error}"
            );
        }
        for id in ["a b", "a~", "\u{e9}t\u{e9}", "\u{a0}", "\u{2028}"] {
            assert!(with_id(id).0.is_ok(), "{id:?}");
        }
    }

    #[test]
    fn every_distinct_file_of_a_suite_is_checked_even_after_shared_ones() {
        for bad_id in ["a-1", "a-3", "a-5"] {
            let mut lock = sample();
            let cases = lock.cases.entry("support".into()).or_default();
            let shared: Arc<str> = Arc::from("evals/shared.jsonl");
            for index in 1..=5 {
                let id = format!("a-{index}");
                let file = match id == bad_id {
                    true => Arc::from("evals/../../outside.jsonl"),
                    false => Arc::clone(&shared),
                };
                let entry = CaseLock {
                    version: 1,
                    digest: bytes_digest(id.as_bytes()),
                    file,
                    retired: false,
                };
                cases.insert(id, entry);
            }
            let error = Lock::parse("evalock.lock", lock.render().as_bytes()).unwrap_err();
            assert!(
                error
                    .to_string()
                    .contains(&format!("case `support/{bad_id}`")),
                "{error}"
            );
        }
    }

    #[test]
    fn a_lock_read_from_the_working_tree_streams_and_still_locates_its_errors() {
        let directory = tempfile::tempdir().unwrap();
        let source = crate::source::WorktreeSource::new(directory.path());
        assert_eq!(Lock::read(&source, "evalock.lock").unwrap(), None);

        let text = sample().render();
        std::fs::write(directory.path().join("evalock.lock"), &text).unwrap();
        assert_eq!(Lock::read(&source, "evalock.lock").unwrap(), Some(sample()));

        // A hand-written lock takes the TOML path and reads the same.
        let spaced = text.replace("lock_version = 1\n", "lock_version   =   1\n");
        std::fs::write(directory.path().join("evalock.lock"), &spaced).unwrap();
        assert_eq!(Lock::read(&source, "evalock.lock").unwrap(), Some(sample()));

        // A lock in the rendered shape that fails validation is reported at its line.
        let mut bad = sample();
        let entries = bad.cases.remove("support").unwrap();
        bad.cases.insert("bad name!".into(), entries);
        let text = bad.render();
        std::fs::write(directory.path().join("evalock.lock"), &text).unwrap();
        let error = Lock::read(&source, "evalock.lock").unwrap_err().to_string();
        let line = text
            .lines()
            .position(|line| line.starts_with("[case.\"bad name!\""))
            .unwrap()
            + 1;
        assert!(error.contains(&format!("evalock.lock:{line}")), "{error}");
    }
}
