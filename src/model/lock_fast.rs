//! Reads `evalock.lock` in the exact shape [`Lock::render`] writes, without a TOML parser:
//! a 200,000-case lock parses in a fraction of the time. The result is only used when it
//! renders back to the very same text, which proves it is what the TOML parser would
//! return (render and parse round-trip); anything else goes to the TOML parser.
//!
//! The lock is streamed, never held whole (30 MiB for 200,000 cases): the rendering is
//! compared with a second read of the file. A file that changed between the two reads
//! fails the comparison, unless its new text is exactly the rendering of what was read
//! first, which then is what it holds.

use super::lock::{CaseEntries, CaseLock, GraderLock, Lock, Recipes, SuiteLock};
use super::skill_lock::SkillLock;
use super::SharedText;
use crate::hash::Digest;
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;
use std::io::{BufRead, BufReader, Read};
use std::sync::Arc;

/// How much of the lock is read at a time.
const READ_BUFFER: usize = 1 << 16;

/// The lock, if `text` is exactly what `render` writes for it.
#[cfg(test)]
pub(super) fn parse_rendered(text: &str) -> Option<Lock> {
    parse_rendered_from(text.as_bytes(), || Some(text.as_bytes()))
}

/// The lock, if what `input` yields is exactly what `render` writes for it; `reopen`
/// reads the same file again for the comparison.
pub(super) fn parse_rendered_from<R: Read>(
    input: impl Read,
    reopen: impl FnOnce() -> Option<R>,
) -> Option<Lock> {
    let mut lines = Lines::new(input);
    let lock = read_lines(&mut lines);
    let Lines {
        graders,
        skills,
        failed,
        ..
    } = lines;
    let mut lock = lock.filter(|_| !failed)?;
    // Graders (between the suites and the cases) and skills (last) are few: their tables
    // go through the TOML parser; the many case tables are read line by line.
    lock.graders = toml::from_str::<GraderTables>(&graders).ok()?.grader;
    lock.skills = toml::from_str::<SkillTables>(&skills).ok()?.skill;
    let mut rendered = Comparing {
        input: BufReader::with_capacity(READ_BUFFER, reopen()?),
        same: true,
    };
    lock.render_into(&mut rendered).ok()?;
    rendered.finish().then_some(lock)
}

/// The part of the lock a line belongs to; each starts at its first table header.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Section {
    Suites,
    Graders,
    Cases,
    Skills,
}

/// The lines of the suite and case tables, one at a time; grader and skill tables are
/// set aside as text.
///
/// The file is read in blocks; the whole lines of each block are validated as UTF-8 at
/// once and kept as text, from which lines are borrowed (a newline never falls inside a
/// UTF-8 sequence, so every cut at one is a character boundary).
struct Lines<R> {
    input: R,
    /// Whole lines of the file, validated, newlines included (the last line of the file
    /// may lack its newline).
    text: String,
    /// Where the next line starts in `text`.
    position: usize,
    /// Bytes read after the last newline: the start of a line still being read.
    partial: Vec<u8>,
    section: Section,
    graders: String,
    skills: String,
    /// Reading failed (I/O, invalid UTF-8): the lines ended early.
    failed: bool,
}

impl<R: Read> Lines<R> {
    fn new(input: R) -> Self {
        Lines {
            input,
            text: String::new(),
            position: 0,
            partial: Vec::new(),
            section: Section::Suites,
            graders: String::new(),
            skills: String::new(),
            failed: false,
        }
    }

    fn next_line(&mut self) -> Option<&str> {
        let line = loop {
            if self.position == self.text.len() && !self.refill() {
                return None;
            }
            let rest = &self.text.as_bytes()[self.position..];
            let length = memchr::memchr(b'\n', rest).map_or(rest.len(), |newline| newline + 1);
            let start = self.position;
            self.position += length;
            let line = &self.text[start..self.position];
            let next = match self.section {
                Section::Suites if line.starts_with("[grader.") => Section::Graders,
                Section::Suites | Section::Graders if line.starts_with("[case.") => Section::Cases,
                _ if line.starts_with("[skill.") => Section::Skills,
                current => current,
            };
            self.section = next;
            match next {
                Section::Graders => self.graders.push_str(line),
                Section::Skills => self.skills.push_str(line),
                Section::Suites | Section::Cases => break start..self.position,
            }
        };
        let line = &self.text[line];
        Some(line.strip_suffix('\n').unwrap_or(line))
    }

    /// The next block's whole lines into `text`; false at the end or on an error (then
    /// `failed`).
    fn refill(&mut self) -> bool {
        self.text.clear();
        self.position = 0;
        loop {
            let start = self.partial.len();
            let mut block = (&mut self.input).take(READ_BUFFER as u64);
            let read = match block.read_to_end(&mut self.partial) {
                Ok(read) => read,
                Err(_) => {
                    self.failed = true;
                    return false;
                }
            };
            let whole = match read {
                // The end of the file: what is left is its last line.
                0 => self.partial.len(),
                _ => match memchr::memrchr(b'\n', &self.partial[start..]) {
                    Some(newline) => start + newline + 1,
                    None => continue,
                },
            };
            if whole == 0 {
                return false;
            }
            match simdutf8::basic::from_utf8(&self.partial[..whole]) {
                Ok(lines) => self.text.push_str(lines),
                Err(_) => {
                    self.failed = true;
                    return false;
                }
            }
            self.partial.drain(..whole);
            return true;
        }
    }
}

/// Text being written, compared as it comes with the same number of bytes read from
/// `input`: equal only if every piece matched and nothing is left over.
struct Comparing<R> {
    input: BufReader<R>,
    same: bool,
}

impl<R: Read> Comparing<R> {
    fn matches(&mut self, mut expected: &[u8]) -> bool {
        while !expected.is_empty() {
            let buffered = match self.input.fill_buf() {
                Ok(buffered) if !buffered.is_empty() => buffered,
                _ => return false,
            };
            let length = buffered.len().min(expected.len());
            if buffered[..length] != expected[..length] {
                return false;
            }
            self.input.consume(length);
            expected = &expected[length..];
        }
        true
    }

    fn finish(mut self) -> bool {
        self.same && self.input.fill_buf().is_ok_and(|rest| rest.is_empty())
    }
}

impl<R: Read> fmt::Write for Comparing<R> {
    fn write_str(&mut self, piece: &str) -> fmt::Result {
        self.same = self.same && self.matches(piece.as_bytes());
        Ok(())
    }
}

/// The `[grader.…]` tables between the suites and the cases.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct GraderTables {
    #[serde(default)]
    grader: BTreeMap<String, GraderLock>,
}

/// The `[skill.…]` tables at the end of a lock.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct SkillTables {
    #[serde(default)]
    skill: BTreeMap<String, SkillLock>,
}

/// Which table the lines being read belong to.
enum Table {
    Top,
    Recipes,
    Suite(String),
    SuitePrompts(String),
    /// The entry being read is `current_case`.
    Case,
}

/// A table header as written, its keys decoded (borrowed when they need no decoding).
enum Header<'a> {
    Recipes,
    Suite(Cow<'a, str>),
    SuitePrompts(Cow<'a, str>),
    Case(Cow<'a, str>, Cow<'a, str>),
}

fn read_lines<R: Read>(lines: &mut Lines<R>) -> Option<Lock> {
    let mut lock = Lock::new();
    let mut recipes = Recipes {
        case: String::new(),
        prompt: String::new(),
        tree: String::new(),
        suite: String::new(),
    };
    let mut lock_version = None;
    let mut table = Table::Top;
    // Cases arrive sorted by suite, then id: a suite's entries are collected in order and
    // its map built in one go (full nodes, one comparison per entry) as soon as the next
    // suite starts, so only one suite's list exists at a time.
    let mut suite_cases: Option<(String, Vec<(String, CaseLock)>)> = None;
    // Neighbouring cases usually live in the same file: they share its path.
    let mut files = SharedText::default();
    let no_file: Arc<str> = Arc::from("");
    let mut current_case: Option<(String, CaseLock)> = None;
    // Placeholders until the table's `digest` line: computed once, not per case.
    let placeholder = Digest::of_bytes(b"");
    while let Some(line) = lines.next_line() {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(header) = line.strip_prefix('[') {
            finish_case(&mut suite_cases, current_case.take())?;
            table = match read_header(header.strip_suffix(']')?)? {
                Header::Recipes => Table::Recipes,
                Header::Suite(name) => {
                    let empty = SuiteLock {
                        digest: placeholder,
                        prompt: None,
                        prompts: BTreeMap::new(),
                    };
                    lock.suites.insert(name.to_string(), empty);
                    Table::Suite(name.into_owned())
                }
                Header::SuitePrompts(name) => Table::SuitePrompts(name.into_owned()),
                Header::Case(suite, id) => {
                    if suite_cases.as_ref().is_none_or(|(last, _)| *last != suite) {
                        // Suites tend to be of a size: the last one's sizes the next one's
                        // list, which then seldom grows (each growth copies it).
                        let last_size = suite_cases.as_ref().map_or(0, |(_, cases)| cases.len());
                        finish_suite(&mut lock, suite_cases.take())?;
                        suite_cases = Some((suite.into_owned(), Vec::with_capacity(last_size)));
                    }
                    let entry = CaseLock {
                        version: 0,
                        digest: placeholder,
                        file: Arc::clone(&no_file),
                        retired: false,
                    };
                    current_case = Some((id.into_owned(), entry));
                    Table::Case
                }
            };
            continue;
        }
        let (key, value) = split_assignment(line)?;
        match &table {
            Table::Top if key == "lock_version" => lock_version = Some(value.parse().ok()?),
            Table::Top => return None,
            Table::Recipes => {
                let value = read_string(value)?.into_owned();
                match key {
                    "case" => recipes.case = value,
                    "prompt" => recipes.prompt = value,
                    "tree" => recipes.tree = value,
                    "suite" => recipes.suite = value,
                    _ => return None,
                }
            }
            Table::Suite(name) => {
                let suite = lock.suites.get_mut(name)?;
                let digest = read_digest(value)?;
                match key {
                    "digest" => suite.digest = digest,
                    "prompt" => suite.prompt = Some(digest),
                    _ => return None,
                }
            }
            Table::SuitePrompts(name) => {
                let digest = read_digest(value)?;
                lock.suites
                    .get_mut(name)?
                    .prompts
                    .insert(read_key(key)?.into_owned(), digest);
            }
            Table::Case => {
                let (_, entry) = current_case.as_mut()?;
                match key {
                    "version" => entry.version = value.parse().ok()?,
                    "digest" => entry.digest = read_digest(value)?,
                    "file" => entry.file = files.share(&read_string(value)?),
                    "retired" if value == "true" => entry.retired = true,
                    _ => return None,
                }
            }
        }
    }
    lock.lock_version = lock_version?;
    lock.recipes = recipes;
    finish_case(&mut suite_cases, current_case.take())?;
    finish_suite(&mut lock, suite_cases)?;
    Some(lock)
}

/// Files a suite's entries, read in order, as its map; a suite seen twice is not the
/// rendered shape.
fn finish_suite(lock: &mut Lock, suite: Option<(String, Vec<(String, CaseLock)>)>) -> Option<()> {
    if let Some((suite, entries)) = suite {
        if lock
            .cases
            .insert(suite, CaseEntries::from_sorted(entries))
            .is_some()
        {
            return None;
        }
    }
    Some(())
}

/// Files the case just read under its suite; ids out of order or repeated are not the
/// rendered shape.
fn finish_case(
    suite_cases: &mut Option<(String, Vec<(String, CaseLock)>)>,
    case: Option<(String, CaseLock)>,
) -> Option<()> {
    if let Some((id, entry)) = case {
        let (_, entries) = suite_cases.as_mut()?;
        if entries.last().is_some_and(|(last, _)| *last >= id) {
            return None;
        }
        entries.push((id, entry));
    }
    Some(())
}

fn read_header(header: &str) -> Option<Header<'_>> {
    // Case tables are nearly all of them: their prefix is tried first.
    if let Some(rest) = header.strip_prefix("case.") {
        let (suite, rest) = split_key(rest)?;
        let (id, rest) = split_key(rest?)?;
        return rest.is_none().then_some(Header::Case(suite, id));
    }
    if header == "recipes" {
        return Some(Header::Recipes);
    }
    let (name, rest) = split_key(header.strip_prefix("suite.")?)?;
    match rest {
        None => Some(Header::Suite(name)),
        Some("prompts") => Some(Header::SuitePrompts(name)),
        Some(_) => None,
    }
}

/// The first key of a dotted header and what follows its dot.
fn split_key(text: &str) -> Option<(Cow<'_, str>, Option<&str>)> {
    let end = if text.starts_with('"') {
        quoted_end(text)?
    } else {
        memchr::memchr(b'.', text.as_bytes()).unwrap_or(text.len())
    };
    let (key, rest) = text.split_at(end);
    let key = read_key(key)?;
    match rest.is_empty() {
        true => Some((key, None)),
        false => Some((key, Some(rest.strip_prefix('.')?))),
    }
}

/// `key = value` split at the first ` = `.
fn split_assignment(line: &str) -> Option<(&str, &str)> {
    let bytes = line.as_bytes();
    memchr::memchr_iter(b'=', bytes)
        .find(|&at| at > 0 && bytes[at - 1] == b' ' && bytes.get(at + 1) == Some(&b' '))
        .map(|at| (&line[..at - 1], &line[at + 2..]))
}

/// A quoted digest, `"sha256:…"`.
fn read_digest(text: &str) -> Option<Digest> {
    Digest::parse(&read_string(text)?).ok()
}

/// The byte after the closing quote of the basic string `text` starts with.
fn quoted_end(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut position = 1;
    while position < bytes.len() {
        match bytes[position] {
            b'\\' => position += 2,
            b'"' => return Some(position + 1),
            _ => position += 1,
        }
    }
    None
}

fn read_key(text: &str) -> Option<Cow<'_, str>> {
    if text.starts_with('"') {
        return read_string(text);
    }
    let bare = !text.is_empty()
        && text
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || byte == b'-' || byte == b'_');
    bare.then_some(Cow::Borrowed(text))
}

/// A TOML basic string with the escapes `toml_string` writes.
fn read_string(text: &str) -> Option<Cow<'_, str>> {
    let inner = text.strip_prefix('"')?.strip_suffix('"')?;
    if memchr::memchr2(b'\\', b'"', inner.as_bytes()).is_none() {
        return Some(Cow::Borrowed(inner));
    }
    let mut out = String::with_capacity(inner.len());
    let mut characters = inner.chars();
    while let Some(character) = characters.next() {
        match character {
            '"' => return None,
            '\\' => out.push(match characters.next()? {
                '"' => '"',
                '\\' => '\\',
                'n' => '\n',
                't' => '\t',
                'r' => '\r',
                'u' => {
                    let hex: String = characters.by_ref().take(4).collect();
                    char::from_u32(u32::from_str_radix(&hex, 16).ok()?)?
                }
                _ => return None,
            }),
            other => out.push(other),
        }
    }
    Some(Cow::Owned(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::bytes_digest;
    use crate::model::trickle::Trickle;

    fn tricky_lock() -> Lock {
        let mut lock = Lock::new();
        for suite in ["support", "a.b", "quote\"d", "tab\tand\u{7f}", "ünï"] {
            lock.suites.insert(
                suite.into(),
                SuiteLock {
                    digest: bytes_digest(suite.as_bytes()),
                    prompt: (suite != "a.b").then(|| bytes_digest(b"p")),
                    prompts: [("prompts/x y.txt".to_owned(), bytes_digest(b"p"))].into(),
                },
            );
            let cases = lock.cases.entry(suite.into()).or_default();
            for id in [
                "plain-id_1",
                "with space",
                "dot.ted",
                "q\"uote",
                "back\\slash",
                "new\nline",
                "é🙂",
                "",
            ] {
                let entry = CaseLock {
                    version: 1 + id.len() as u64,
                    digest: bytes_digest(id.as_bytes()),
                    file: format!("evals/{suite}.jsonl").into(),
                    retired: id.len() % 2 == 0,
                };
                cases.insert(id.into(), entry);
            }
        }
        // Grader tables sit between the suites and the cases; a grader whose file path
        // or argv looks like a table header must not split the text there.
        for (id, file) in [("struct", "graders/[case.x].py"), ("a.b", "g\n[case.y]")] {
            let argv = vec![
                "python3".to_owned(),
                file.to_owned(),
                "--q\"uote".to_owned(),
            ];
            lock.graders.insert(
                id.into(),
                GraderLock {
                    files: [(file.to_owned(), bytes_digest(file.as_bytes()))].into(),
                    ..GraderLock::new(
                        &format!("{id}-3"),
                        &crate::grade::GraderProgram::Command(argv),
                        bytes_digest(id.as_bytes()),
                    )
                },
            );
        }
        let builtin = GraderLock::new(
            "1",
            &crate::grade::GraderProgram::Builtin,
            bytes_digest(b"builtin"),
        );
        lock.graders.insert("plain".into(), builtin);
        // A grader pinned before evalock pinned what it runs: no `kind`, no `command`.
        let older = GraderLock {
            kind: None,
            ..GraderLock::new(
                "2",
                &crate::grade::GraderProgram::Builtin,
                bytes_digest(b"o"),
            )
        };
        lock.graders.insert("older".into(), older);
        lock
    }

    #[test]
    fn reads_what_render_writes_exactly_as_toml_does() {
        let lock = tricky_lock();
        let text = lock.render();
        let fast = parse_rendered(&text).expect("the rendered shape is read without TOML");
        let slow: Lock = toml::from_str(&text).unwrap();
        assert_eq!(fast, slow);
        assert_eq!(fast, lock);
        let mut without_graders = tricky_lock();
        without_graders.graders.clear();
        assert_eq!(
            parse_rendered(&without_graders.render()),
            Some(without_graders),
            "a lock without graders is read without TOML too"
        );
        let empty = Lock::new().render();
        assert_eq!(parse_rendered(&empty), Some(Lock::new()));
    }

    fn first_difference(one: &str, other: &str) -> usize {
        one.bytes()
            .zip(other.bytes())
            .position(|(a, b)| a != b)
            .unwrap_or(one.len().min(other.len()))
    }

    #[test]
    fn declines_anything_that_is_not_the_rendered_shape() {
        let text = tricky_lock().render();
        for edited in [
            text.replace("version = 7\n", "version = 07\n"),
            text.replace("version = 7\n", "version  = 7\n"),
            text.replacen("\n[case.", "\n# note\n[case.", 1),
            text.replace("lock_version = 1", "lock_version = 1 # one"),
            format!("{text}\n"),
            text.replacen("file = ", "file= ", 1),
            text.replacen(
                "\n\n[case.support.plain-id_1]",
                "\n[case.support.plain-id_1]",
                1,
            ),
            text[..text.len() - 5].to_owned(),
        ] {
            assert!(edited != text, "the edit must change the text");
            assert!(
                parse_rendered(&edited).is_none(),
                "must decline an edit that differs at byte {}",
                first_difference(&edited, &text)
            );
        }
    }

    #[test]
    fn a_lock_of_many_buffers_is_compared_to_its_last_byte() {
        let mut lock = Lock::new();
        let cases = lock.cases.entry("support".into()).or_default();
        for number in 0..3_000 {
            let id = format!("case-{number:05}");
            let entry = CaseLock {
                version: 1,
                digest: bytes_digest(id.as_bytes()),
                file: "evals/support.jsonl".into(),
                retired: false,
            };
            cases.insert(id, entry);
        }
        let text = lock.render();
        assert!(text.len() > 4 * READ_BUFFER, "{} bytes", text.len());
        assert_eq!(parse_rendered(&text).as_ref(), Some(&lock));
        // A version written `01` reads as 1 but renders as `1`: the comparison must see
        // it in every block, including the last one.
        for at in [0, READ_BUFFER + 7, 3 * READ_BUFFER + 1, text.len() - 200] {
            let start = text[at..]
                .find("version = 1\n")
                .map(|offset| at + offset)
                .expect("a version after the offset");
            let edited = format!(
                "{}version = 01\n{}",
                &text[..start],
                &text[start + "version = 1\n".len()..]
            );
            assert!(parse_rendered(&edited).is_none(), "an edit at byte {start}");
            // Same length, same entry once read, another text: the comparison must see it.
            let line_end = start + text[start..].find("\nfile = ").expect("a file line");
            let (version, digest) = text[start..line_end].split_once('\n').expect("two lines");
            let swapped = format!("{}{digest}\n{version}{}", &text[..start], &text[line_end..]);
            assert_eq!(swapped.len(), text.len());
            assert!(parse_rendered(&swapped).is_none(), "a swap at byte {start}");
        }
        assert!(parse_rendered(&format!("{text}#")).is_none());
        assert!(parse_rendered(&text[..text.len() - 1]).is_none());
    }

    fn all_lines(input: impl Read) -> (Vec<String>, bool) {
        let mut lines = Lines::new(input);
        let mut read = Vec::new();
        while let Some(line) = lines.next_line() {
            read.push(line.to_owned());
        }
        (read, lines.failed)
    }

    /// Lines come out whole and in order however the reads fall: across blocks, inside
    /// multi-byte characters, longer than a block, with or without a last newline.
    #[test]
    fn lines_are_whole_whatever_the_reads() {
        let long = "é".repeat(READ_BUFFER);
        let text = format!("a = 1\n\n東京 = \"🙂\"\n{long}\nlast");
        for input in [text.clone(), format!("{text}\n")] {
            let expected: Vec<String> = input
                .strip_suffix('\n')
                .unwrap_or(&input)
                .split('\n')
                .map(str::to_owned)
                .collect();
            let trickled = Trickle::new(input.as_bytes());
            assert_eq!(all_lines(trickled), (expected.clone(), false));
            assert_eq!(all_lines(input.as_bytes()), (expected, false));
        }
        // Invalid UTF-8 ends the lines and marks the read as failed, in any block.
        for at in [0, 3, READ_BUFFER + 5] {
            let mut bytes = text.clone().into_bytes();
            bytes[at] = 0xFF;
            let trickled = Trickle::new(&bytes);
            assert!(all_lines(trickled).1, "a bad byte at {at}");
        }
    }

    /// The file read for the comparison is not the one parsed (it changed in between):
    /// only its exact rendering passes, so what is returned is what the file holds.
    #[test]
    fn a_lock_that_changed_between_the_two_reads_is_declined() {
        let text = tricky_lock().render();
        let other = Lock::new().render();
        let twice = |first: &str, second: &str| {
            parse_rendered_from(first.as_bytes(), || Some(second.as_bytes()))
        };
        assert_eq!(twice(&text, &text), Some(tricky_lock()));
        assert!(twice(&text, &other).is_none());
        assert!(twice(&other, &text).is_none());
        assert!(twice(&text, &text[..text.len() / 2]).is_none());
        assert!(parse_rendered_from(text.as_bytes(), || None::<&[u8]>).is_none());
    }
}
