//! Reads `evalock.lock` in the exact shape [`Lock::render`] writes, without a TOML parser:
//! a 200,000-case lock parses in a fraction of the time. The result is only used when it
//! renders back to the very same text, which proves it is what the TOML parser would
//! return (render and parse round-trip); anything else goes to the TOML parser.
//!
//! The lock is streamed, never held whole (30 MiB for 200,000 cases). Its case entries,
//! nearly all of it, are read strictly: each line must be what `render` writes for the
//! entry read so far, so the entries read render back to the text they were read from.
//! The rest of the file is kept as text and compared with the rendering of what was read
//! from it, with the entries where they stood.

use super::lock::{
    is_bare_key, toml_string, CaseEntries, CaseLock, GraderLock, Lock, Recipes, SuiteLock,
};
use super::skill_lock::SkillLock;
use crate::hash::Digest;
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::io::Read;
use std::sync::Arc;

/// How much of the lock is read at a time.
const READ_BUFFER: usize = 1 << 16;

/// The lock, if `text` is exactly what `render` writes for it.
#[cfg(test)]
pub(super) fn parse_rendered(text: &str) -> Option<Lock> {
    parse_rendered_from(text.as_bytes())
}

/// The lock, if what `input` yields is exactly what `render` writes for it.
pub(super) fn parse_rendered_from(input: impl Read) -> Option<Lock> {
    let mut lines = Lines::new(input);
    let parsed = read_lines(&mut lines);
    if lines.failed {
        return None;
    }
    let Parsed {
        mut lock,
        graders,
        skills,
        outside,
        cases_at,
    } = parsed?;
    // Graders (between the suites and the cases) and skills (last) are few: their tables
    // go through the TOML parser.
    lock.graders = toml::from_str::<GraderTables>(&graders).ok()?.grader;
    lock.skills = toml::from_str::<SkillTables>(&skills).ok()?.skill;
    let mut rendered = String::with_capacity(outside.len());
    lock.render_head_into(&mut rendered).ok()?;
    let head = rendered.len();
    lock.render_skills_into(&mut rendered).ok()?;
    (rendered == outside && cases_at.is_none_or(|at| at == head)).then_some(lock)
}

/// The part of the lock a line belongs to; each starts at its first table header.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Section {
    Suites,
    Graders,
    Cases,
    Skills,
}

/// One line of the lock.
struct Line<'a> {
    /// The line without its newline.
    text: &'a str,
    /// Whether a newline ends it (every line but perhaps the last).
    newline: bool,
    section: Section,
}

/// The lines of the lock, one at a time, each with the section it belongs to.
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
            failed: false,
        }
    }

    fn next_line(&mut self) -> Option<Line<'_>> {
        if self.position == self.text.len() && !self.refill() {
            return None;
        }
        let rest = &self.text.as_bytes()[self.position..];
        let (length, newline) = match memchr::memchr(b'\n', rest) {
            Some(at) => (at, true),
            None => (rest.len(), false),
        };
        let start = self.position;
        self.position += length + usize::from(newline);
        let text = &self.text[start..start + length];
        self.section = match self.section {
            Section::Suites if text.starts_with("[grader.") => Section::Graders,
            Section::Suites | Section::Graders if text.starts_with("[case.") => Section::Cases,
            _ if text.starts_with("[skill.") => Section::Skills,
            current => current,
        };
        Some(Line {
            text,
            newline,
            section: self.section,
        })
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

/// Which table the lines being read outside the case entries belong to.
enum Table {
    Top,
    Recipes,
    Suite(String),
    SuitePrompts(String),
}

/// A table header outside the case entries, its keys decoded (borrowed when they need no
/// decoding).
enum Header<'a> {
    Recipes,
    Suite(Cow<'a, str>),
    SuitePrompts(Cow<'a, str>),
}

/// What [`read_lines`] gathers.
struct Parsed {
    /// The lock without its graders and skills.
    lock: Lock,
    /// The grader tables and the skill tables, for the TOML parser.
    graders: String,
    skills: String,
    /// Every byte of the file outside the case entries, in order.
    outside: String,
    /// Where the case entries stood in `outside`, when there are any.
    cases_at: Option<usize>,
}

fn read_lines<R: Read>(lines: &mut Lines<R>) -> Option<Parsed> {
    let mut lock = Lock::new();
    let mut recipes = Recipes {
        case: String::new(),
        prompt: String::new(),
        tree: String::new(),
        suite: String::new(),
    };
    let mut lock_version = None;
    let mut table = Table::Top;
    // Placeholders until the table's `digest` line: computed once, not per suite or entry.
    let placeholder = Digest::of_bytes(b"");
    let mut entries = EntryReader::new(placeholder);
    let (mut graders, mut skills, mut outside) = (String::new(), String::new(), String::new());
    let mut cases_at = None;
    while let Some(line) = lines.next_line() {
        if line.section == Section::Cases {
            if cases_at.is_none() {
                // The blank line before the first entry is where the entries start.
                if !outside.ends_with("\n\n") {
                    return None;
                }
                outside.pop();
                cases_at = Some(outside.len());
            }
            if !line.newline {
                return None;
            }
            entries.line(line.text, &mut lock)?;
            continue;
        }
        // A blank line after the last entry belongs to what follows (a skill table).
        if entries.take_blank() {
            outside.push('\n');
        }
        outside.push_str(line.text);
        if line.newline {
            outside.push('\n');
        }
        let text = line.text;
        match line.section {
            Section::Graders => {
                graders.push_str(text);
                graders.push('\n');
                continue;
            }
            Section::Skills => {
                skills.push_str(text);
                skills.push('\n');
                continue;
            }
            Section::Suites | Section::Cases => {}
        }
        if text.is_empty() || text.starts_with('#') {
            continue;
        }
        if let Some(header) = text.strip_prefix('[') {
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
            };
            continue;
        }
        let (key, value) = split_assignment(text)?;
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
        }
    }
    if entries.take_blank() {
        outside.push('\n');
    }
    entries.finish(&mut lock)?;
    lock.lock_version = lock_version?;
    lock.recipes = recipes;
    Some(Parsed {
        lock,
        graders,
        skills,
        outside,
        cases_at,
    })
}

/// The line an entry expects next.
#[derive(Clone, Copy, PartialEq, Eq)]
enum EntryLine {
    /// A table header, after the blank line before it.
    Header,
    Version,
    Digest,
    File,
    /// `retired = true`, a blank line or the end of the entries.
    Retired,
    /// A blank line or the end of the entries.
    Blank,
}

/// Reads the case entries strictly, line by line: each line must be what `render` writes
/// for the entry being read, in its place. Suites come in order, and so do the ids within
/// each suite.
struct EntryReader {
    expect: EntryLine,
    /// A blank line was read after an entry: the next header's, or what follows the entries.
    blank: bool,
    /// The suite being read, with its entries so far: the last one is being read.
    suite: Option<(String, CaseEntries)>,
    /// The suite's key as its headers write it, with the dot after it: the next header
    /// that starts with these bytes names the same suite, without reading its key again.
    suite_written: String,
    /// The last `file` value as written, with its path (neighbouring entries share it).
    last_file: Option<(String, Arc<str>)>,
    /// Placeholders until the entry's own lines.
    no_file: Arc<str>,
    placeholder: Digest,
}

impl EntryReader {
    fn new(placeholder: Digest) -> Self {
        EntryReader {
            // The blank line before the first entry was read where the entries start.
            expect: EntryLine::Header,
            blank: false,
            suite: None,
            suite_written: String::new(),
            last_file: None,
            no_file: Arc::from(""),
            placeholder,
        }
    }

    fn line(&mut self, text: &str, lock: &mut Lock) -> Option<()> {
        match self.expect {
            EntryLine::Header => return self.header(text, lock),
            EntryLine::Retired | EntryLine::Blank if text.is_empty() => {
                self.expect = EntryLine::Header;
                self.blank = true;
                return Some(());
            }
            _ => {}
        }
        let entry = self.suite.as_mut()?.1.last_mut()?;
        self.expect = match self.expect {
            EntryLine::Version => {
                entry.version = rendered_decimal(text.strip_prefix("version = ")?)?;
                EntryLine::Digest
            }
            EntryLine::Digest => {
                let quoted = text.strip_prefix("digest = ")?;
                // Exactly `sha256:` and 64 lowercase hex digits, as written.
                entry.digest = Digest::parse(quoted.strip_prefix('"')?.strip_suffix('"')?).ok()?;
                EntryLine::File
            }
            EntryLine::File => {
                let quoted = text.strip_prefix("file = ")?;
                entry.file = match &self.last_file {
                    Some((written, path)) if written == quoted => Arc::clone(path),
                    _ => {
                        let path = read_string(quoted)?;
                        if toml_string(&path) != quoted {
                            return None;
                        }
                        let path: Arc<str> = Arc::from(path);
                        self.last_file = Some((quoted.to_owned(), Arc::clone(&path)));
                        path
                    }
                };
                EntryLine::Retired
            }
            EntryLine::Retired if text == "retired = true" => {
                entry.retired = true;
                EntryLine::Blank
            }
            _ => return None,
        };
        Some(())
    }

    /// `[case.<suite>.<id>]`, each key written as `render` writes it.
    fn header(&mut self, text: &str, lock: &mut Lock) -> Option<()> {
        let header = text.strip_prefix("[case.")?.strip_suffix(']')?;
        if let Some(rest) = header.strip_prefix(self.suite_written.as_str()) {
            if self.suite.is_some() {
                return self.entry(rest);
            }
        }
        let (suite, rest) = split_rendered_key(header)?;
        let rest = rest?;
        if self.suite.as_ref().is_none_or(|(last, _)| *last != suite) {
            // Suites in order, each once; the last one's sizes size the next one's
            // entries, which then seldom grow (each growth copies them).
            if self.suite.as_ref().is_some_and(|(last, _)| **last > *suite) {
                return None;
            }
            let (count, id_bytes) = self.suite.as_ref().map_or((0, 0), |(_, entries)| {
                (entries.len(), entries.iter().map(|(id, _)| id.len()).sum())
            });
            self.finish_suite(lock)?;
            let entries = CaseEntries::with_capacity(count, id_bytes);
            self.suite = Some((suite.into_owned(), entries));
        }
        self.suite_written.clear();
        self.suite_written
            .push_str(&header[..header.len() - rest.len()]);
        self.entry(rest)
    }

    /// The id of an entry header, after its suite's key and dot.
    fn entry(&mut self, rest: &str) -> Option<()> {
        let (id, rest) = split_rendered_key(rest)?;
        if rest.is_some() {
            return None;
        }
        let entry = CaseLock {
            version: 0,
            digest: self.placeholder,
            file: Arc::clone(&self.no_file),
            retired: false,
        };
        // Ids out of order or repeated are not the rendered shape.
        self.suite.as_mut()?.1.push_sorted(&id, entry)?;
        self.expect = EntryLine::Version;
        self.blank = false;
        Some(())
    }

    /// Whether a blank line after the last entry read is still unclaimed; it is claimed.
    fn take_blank(&mut self) -> bool {
        std::mem::take(&mut self.blank)
    }

    /// Files the suite just read; a suite seen twice is not the rendered shape.
    fn finish_suite(&mut self, lock: &mut Lock) -> Option<()> {
        if let Some((suite, entries)) = self.suite.take() {
            if lock.cases.insert(suite, entries).is_some() {
                return None;
            }
        }
        Some(())
    }

    /// The end of the entries: the last one must be whole.
    fn finish(&mut self, lock: &mut Lock) -> Option<()> {
        if let EntryLine::Version | EntryLine::Digest | EntryLine::File = self.expect {
            return None;
        }
        self.finish_suite(lock)
    }
}

/// A number as `render` writes it: decimal digits, no sign, no leading zero.
fn rendered_decimal(digits: &str) -> Option<u64> {
    let canonical = digits.bytes().all(|byte| byte.is_ascii_digit())
        && (digits.len() == 1 || !digits.starts_with('0'));
    canonical.then(|| digits.parse().ok()).flatten()
}

fn read_header(header: &str) -> Option<Header<'_>> {
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

/// [`split_key`] for a key written as `render` writes it: bare whenever it can be.
fn split_rendered_key(text: &str) -> Option<(Cow<'_, str>, Option<&str>)> {
    let (key, rest) = split_key(text)?;
    if text.starts_with('"') {
        let written = &text[..text.len() - rest.map_or(0, |rest| rest.len() + 1)];
        if is_bare_key(&key) || toml_string(&key) != written {
            return None;
        }
    }
    Some((key, rest))
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
    is_bare_key(text).then_some(Cow::Borrowed(text))
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
            let newline = if line.newline { "\n" } else { "" };
            read.push(format!("{}{newline}", line.text));
        }
        (read, lines.failed)
    }

    /// Lines come out whole and in order however the reads fall: across blocks, inside
    /// multi-byte characters, longer than a block, with or without a last newline (each
    /// line says whether it had one).
    #[test]
    fn lines_are_whole_whatever_the_reads() {
        let long = "é".repeat(READ_BUFFER);
        let text = format!("a = 1\n\n東京 = \"🙂\"\n{long}\nlast");
        for input in [text.clone(), format!("{text}\n")] {
            let expected: Vec<String> = input.split_inclusive('\n').map(str::to_owned).collect();
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

    /// Any text the fast path takes renders back to itself: a rendered lock edited at
    /// random (bytes deleted, inserted or changed, lines doubled, dropped or swapped) is
    /// either declined or read as a lock whose rendering is the edited text.
    #[test]
    fn whatever_is_read_renders_back_to_the_text_read() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move |bound: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % bound as u64) as usize
        };
        let mut small = tricky_lock();
        small.graders.clear();
        for text in [tricky_lock().render(), small.render()] {
            assert!(parse_rendered(&text).is_some());
            let inserts = [
                "\n", " ", "0", "1", "\"", "\\", "a", "#", "[", "]", "=", ".", "\r", "\u{85}", "é",
            ];
            let (mut read, mut declined) = (0, 0);
            for _ in 0..4_000 {
                let lines: Vec<&str> = text.split_inclusive('\n').collect();
                let mut edited = text.clone();
                match next(6) {
                    0 => {
                        let at = next(edited.len());
                        if edited.is_char_boundary(at) && edited.is_char_boundary(at + 1) {
                            edited.remove(at);
                        }
                    }
                    1 => {
                        let at = next(edited.len());
                        if edited.is_char_boundary(at) {
                            edited.insert_str(at, inserts[next(inserts.len())]);
                        }
                    }
                    2 => {
                        let at = next(edited.len());
                        let byte = edited.as_bytes()[at];
                        let replacement = match byte {
                            b'0'..=b'8' => Some((byte + 1) as char),
                            b'a'..=b'y' => Some((byte + 1) as char),
                            b'"' => Some('\''),
                            _ => None,
                        };
                        if let Some(replacement) = replacement {
                            edited.replace_range(at..at + 1, &replacement.to_string());
                        }
                    }
                    3 => {
                        let at = next(lines.len());
                        let mut changed = lines.clone();
                        changed.insert(at, lines[at]);
                        edited = changed.concat();
                    }
                    4 => {
                        let mut changed = lines.clone();
                        changed.remove(next(lines.len()));
                        edited = changed.concat();
                    }
                    _ => {
                        let at = next(lines.len() - 1);
                        let mut changed = lines.clone();
                        changed.swap(at, at + 1);
                        edited = changed.concat();
                    }
                }
                match parse_rendered(&edited) {
                    Some(lock) => {
                        assert_eq!(
                            lock.render(),
                            edited,
                            "read an edit at byte {}",
                            first_difference(&edited, &text)
                        );
                        read += 1;
                    }
                    None => declined += 1,
                }
            }
            // Most edits break the shape; some (a changed digit in a digest or version, a
            // line swapped with its twin) are another lock in the same shape.
            assert!(
                declined > 2_000 && read > 100,
                "{read} read, {declined} declined"
            );
        }
    }

    /// Entries written otherwise than `render` writes them are declined, each alone.
    #[test]
    fn case_entries_are_read_only_as_render_writes_them() {
        let lock = tricky_lock();
        let text = lock.render();
        let entry = "\n[case.support.plain-id_1]\nversion = 11\n";
        assert!(text.contains(entry), "{text}");
        let digest = format!("digest = \"{}\"\n", bytes_digest(b"plain-id_1"));
        assert!(text.contains(&digest));
        for edited in [
            text.replace(entry, "\n[case.support.\"plain-id_1\"]\nversion = 11\n"),
            text.replace(entry, "\n[case.\"support\".plain-id_1]\nversion = 11\n"),
            text.replace(entry, "\n[case.support.plain-id_1]\nversion = +11\n"),
            text.replace(entry, "\n[case.support.plain-id_1]\nversion = 011\n"),
            text.replace(entry, "\n[case.support.plain-id_1]\nversion = 11 \n"),
            text.replace(entry, "\n[case.support.plain-id_1]\r\nversion = 11\n"),
            text.replace(entry, "\n[case.support.plain-id_1]\nversion=11\n"),
            text.replace(
                entry,
                "\n[case.support.plain-id_1]\nversion = 11\nversion = 11\n",
            ),
            text.replace(entry, "\n\n[case.support.plain-id_1]\nversion = 11\n"),
            text.replace(
                &digest,
                &digest
                    .to_uppercase()
                    .replace("DIGEST = \"SHA256:", "digest = \"sha256:"),
            ),
            text.replace(
                &digest,
                &digest
                    .replace("\"sha256:", "\"sha256:\\u0030")
                    .replacen('0', "", 1),
            ),
            text.replace(&digest, ""),
            text.replacen(
                "file = \"evals/support.jsonl\"",
                "file = \"evals/\\u0073upport.jsonl\"",
                1,
            ),
            text.replacen(
                "file = \"evals/support.jsonl\"",
                "file = 'evals/support.jsonl'",
                1,
            ),
            text.replacen("retired = true\n", "retired = false\n", 1),
            text.replacen("retired = true\n", "retired = true\n\n", 1),
            text.replacen(
                "file = \"evals/support.jsonl\"\n",
                "file = \"evals/support.jsonl\"\nretired = true\nretired = true\n",
                1,
            ),
            text.replacen("[case.support.", "[case.support2.", 1),
        ] {
            assert!(edited != text, "the edit must change the text");
            assert!(
                parse_rendered(&edited).is_none(),
                "must decline an edit at byte {}",
                first_difference(&edited, &text)
            );
        }
        // Suites out of order: the entries of the first two suites (`a.b`, `quote"d`)
        // swapped.
        let first = text.find("\n[case.").unwrap();
        let second_suite = text[first..]
            .find("\n[case.\"quote")
            .map(|at| first + at)
            .unwrap();
        let third = text[second_suite + 1..]
            .find("\n[case.support")
            .map(|at| second_suite + 1 + at)
            .unwrap();
        let swapped = format!(
            "{}{}{}{}",
            &text[..first],
            &text[second_suite..third],
            &text[first..second_suite],
            &text[third..]
        );
        assert_eq!(swapped.len(), text.len());
        assert!(parse_rendered(&swapped).is_none());
    }
}
