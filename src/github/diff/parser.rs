//! The line-by-line reader behind [`PullDiff::parse`]: file headers, renames, deletions
//! and hunk bodies, kept apart from the diff's types because it is all about git's text.

use super::{FileDiff, Hunk, PullDiff, Removal};
use std::collections::BTreeMap;

#[derive(Default)]
pub(super) struct Parser {
    files: BTreeMap<String, FileDiff>,
    current: Option<FileDiff>,
    /// New-side and old-side lines still expected in the current hunk.
    remaining_new: u32,
    remaining_old: u32,
    next_new_line: u32,
    next_old_line: u32,
}

impl Parser {
    pub(super) fn line(&mut self, line: &str) {
        if self.fits_in_hunk(line) {
            self.hunk_line(line);
            return;
        }
        self.remaining_new = 0;
        self.remaining_old = 0;
        if let Some(rest) = line.strip_prefix("diff --git ") {
            self.start_file(path_from_git_header(rest));
        } else if let Some(rest) = line.strip_prefix("+++ ") {
            if let (Some(file), Some(path)) = (self.current.as_mut(), strip_side_prefix(rest, "b/"))
            {
                file.path = path;
            }
        } else if let Some(rest) = line.strip_prefix("--- ") {
            // The old name only matters when the new side is /dev/null (a deleted file).
            if let (Some(file), Some(path)) = (self.current.as_mut(), strip_side_prefix(rest, "a/"))
            {
                if file.path.is_empty() {
                    file.path = path;
                }
            }
        } else if line.starts_with("deleted file mode") {
            if let Some(file) = self.current.as_mut() {
                file.deleted = true;
            }
        } else if let Some(rest) = line.strip_prefix("rename from ") {
            if let Some(file) = self.current.as_mut() {
                file.renamed_from = Some(unquote(rest));
            }
        } else if let Some(rest) = line.strip_prefix("rename to ") {
            if let Some(file) = self.current.as_mut() {
                file.path = unquote(rest);
            }
        } else if line.starts_with("@@ ") {
            self.start_hunk(line);
        }
    }

    /// Whether `line` is content of the current hunk: it starts with ' ', '+', '-' or
    /// '\\' and the header's counts still leave room for it (an added line needs a new-side
    /// line left, a removed one an old-side line, context both). Anything else means the
    /// hunk was shorter than its header said, so the line is read as a header again; an
    /// added line past the count would otherwise be anchored outside its hunk.
    fn fits_in_hunk(&self, line: &str) -> bool {
        let (new, old) = (self.remaining_new > 0, self.remaining_old > 0);
        match line.as_bytes().first() {
            Some(b'+') => new,
            Some(b'-') => old,
            Some(b'\\') => new || old,
            // An empty line is a context line whose leading space was trimmed.
            Some(b' ') | None => new && old,
            Some(_) => false,
        }
    }

    fn start_file(&mut self, path: Option<String>) {
        self.flush();
        self.current = Some(FileDiff {
            path: path.unwrap_or_default(),
            ..FileDiff::default()
        });
    }

    fn start_hunk(&mut self, header: &str) {
        let Some(range) = parse_hunk_header(header) else {
            return;
        };
        let Some(file) = self.current.as_mut() else {
            return;
        };
        file.hunks.push(Hunk {
            new_start: range.new_start,
            new_count: range.new_count,
            added: Vec::new(),
            old_start: range.old_start,
            old_count: range.old_count,
            removed: Vec::new(),
        });
        self.remaining_old = range.old_count;
        self.remaining_new = range.new_count;
        self.next_new_line = range.new_start;
        self.next_old_line = range.old_start;
    }

    fn hunk_line(&mut self, line: &str) {
        let Some(hunk) = self.current.as_mut().and_then(|file| file.hunks.last_mut()) else {
            return;
        };
        match line.as_bytes().first() {
            Some(b'+') => {
                hunk.added.push(self.next_new_line);
                self.next_new_line += 1;
                self.remaining_new = self.remaining_new.saturating_sub(1);
            }
            Some(b'-') => {
                let (old_line, new_line) = (self.next_old_line, self.next_new_line);
                match hunk.removed.last_mut() {
                    Some(run) if run.new_line == new_line && run.old_last + 1 == old_line => {
                        run.old_last = old_line;
                    }
                    _ => hunk.removed.push(Removal {
                        old_first: old_line,
                        old_last: old_line,
                        new_line,
                    }),
                }
                self.next_old_line += 1;
                self.remaining_old = self.remaining_old.saturating_sub(1);
            }
            Some(b'\\') => {}
            // A context line; an empty line is a context line whose leading space was trimmed.
            _ => {
                self.next_new_line += 1;
                self.next_old_line += 1;
                self.remaining_new = self.remaining_new.saturating_sub(1);
                self.remaining_old = self.remaining_old.saturating_sub(1);
            }
        }
    }

    fn flush(&mut self) {
        if let Some(mut file) = self.current.take() {
            // Real diffs list a file's hunks in order and apart, on both sides; a hunk
            // that overlaps the one before it, on either side, is not from a real diff and
            // is left out (two hunks of a deleted file both start at new line 0, so only
            // their old sides tell them apart).
            file.hunks.sort_by_key(|hunk| hunk.new_start);
            let (mut new_end, mut old_end) = (0, 0);
            file.hunks.retain(|hunk| {
                let apart = hunk.new_start >= new_end && hunk.old_start >= old_end;
                if apart {
                    new_end = hunk.new_start.saturating_add(hunk.new_count);
                    old_end = hunk.old_start.saturating_add(hunk.old_count);
                }
                apart
            });
            if !file.path.is_empty() {
                self.files.insert(file.path.clone(), file);
            }
        }
    }

    pub(super) fn finish(mut self) -> PullDiff {
        self.flush();
        PullDiff { files: self.files }
    }
}

/// The line ranges of a hunk header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct HunkRange {
    pub(super) old_start: u32,
    pub(super) old_count: u32,
    pub(super) new_start: u32,
    pub(super) new_count: u32,
}

/// `@@ -12,3 +12,4 @@ context` -> its ranges. A missing count is 1.
pub(super) fn parse_hunk_header(header: &str) -> Option<HunkRange> {
    let mut parts = header.split(' ');
    parts.next()?; // "@@"
    let old = parts.next()?.strip_prefix('-')?;
    let new = parts.next()?.strip_prefix('+')?;
    let count = |range: &str| -> Option<(u32, u32)> {
        match range.split_once(',') {
            Some((start, count)) => Some((start.parse().ok()?, count.parse().ok()?)),
            None => Some((range.parse().ok()?, 1)),
        }
    };
    let (old_start, old_count) = count(old)?;
    let (new_start, new_count) = count(new)?;
    // Line 0 exists only in an empty range, and a range past u32::MAX in no real file;
    // refusing both keeps every anchor a real line and the line arithmetic exact.
    if new_start == 0 && new_count > 0 {
        return None;
    }
    new_start.checked_add(new_count)?;
    old_start.checked_add(old_count)?;
    Some(HunkRange {
        old_start,
        old_count,
        new_start,
        new_count,
    })
}

/// `a/x b/x` -> `x`; the `+++`/`rename to` lines, when present, correct it later.
fn path_from_git_header(rest: &str) -> Option<String> {
    if rest.starts_with('"') {
        let (_, new) = rest.rsplit_once(" \"")?;
        return strip_side_prefix(&format!("\"{new}"), "b/");
    }
    let (_, new) = rest.rsplit_once(" b/")?;
    Some(new.to_owned())
}

/// `b/path` (possibly quoted, possibly followed by a tab) -> `path`; `/dev/null` -> None.
fn strip_side_prefix(text: &str, side: &str) -> Option<String> {
    let text = text.split('\t').next().unwrap_or(text);
    let path = unquote(text);
    if path == "/dev/null" {
        return None;
    }
    Some(path.strip_prefix(side).unwrap_or(&path).to_owned())
}

/// Undoes git's C-style quoting of unusual paths (`"a\tb"`, octal UTF-8 bytes).
fn unquote(text: &str) -> String {
    let Some(inner) = text
        .strip_prefix('"')
        .and_then(|rest| rest.strip_suffix('"'))
    else {
        return text.to_owned();
    };
    let mut bytes = Vec::with_capacity(inner.len());
    let mut chars = inner.bytes().peekable();
    while let Some(byte) = chars.next() {
        if byte != b'\\' {
            bytes.push(byte);
            continue;
        }
        match chars.next() {
            Some(b'n') => bytes.push(b'\n'),
            Some(b't') => bytes.push(b'\t'),
            Some(digit @ b'0'..=b'7') => {
                let mut value = u32::from(digit - b'0');
                for _ in 0..2 {
                    if let Some(next @ b'0'..=b'7') = chars.peek().copied() {
                        value = value * 8 + u32::from(next - b'0');
                        chars.next();
                    }
                }
                bytes.push(u8::try_from(value).unwrap_or(b'?'));
            }
            Some(other) => bytes.push(other),
            None => {}
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}
