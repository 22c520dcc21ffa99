//! The case entries, nearly all of a lock, read strictly line by line: each line must be
//! what `render` writes for the entry read so far.

use super::toml_reading::{read_string, split_rendered_key};
use crate::hash::Digest;
use crate::model::lock::{toml_string, CaseEntries, CaseLock, Lock};
use std::sync::Arc;

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
pub(super) struct EntryReader<'a> {
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
    /// Entries to share with each suite read that turns out to hold the same.
    known: Option<&'a Lock>,
}

impl<'a> EntryReader<'a> {
    pub(super) fn new(placeholder: Digest, known: Option<&'a Lock>) -> Self {
        EntryReader {
            // The blank line before the first entry was read where the entries start.
            expect: EntryLine::Header,
            blank: false,
            suite: None,
            suite_written: String::new(),
            last_file: None,
            no_file: Arc::from(""),
            placeholder,
            known,
        }
    }

    pub(super) fn line(&mut self, text: &str, lock: &mut Lock) -> Option<()> {
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
    pub(super) fn take_blank(&mut self) -> bool {
        std::mem::take(&mut self.blank)
    }

    /// Files the suite just read (the known entries instead, when they are the same); a
    /// suite seen twice is not the rendered shape.
    fn finish_suite(&mut self, lock: &mut Lock) -> Option<()> {
        if let Some((suite, mut entries)) = self.suite.take() {
            let known = self.known.and_then(|known| known.cases.get(&suite));
            if let Some(known) = known.filter(|known| **known == entries) {
                entries = known.clone();
            }
            if lock.cases.insert(suite, entries).is_some() {
                return None;
            }
        }
        Some(())
    }

    /// The end of the entries: the last one must be whole.
    pub(super) fn finish(&mut self, lock: &mut Lock) -> Option<()> {
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
