//! Unified diffs as GitHub (`application/vnd.github.v3.diff`) and `git diff` print them,
//! reduced to what a review comment needs: which lines of each file's new version (the
//! RIGHT side) are inside a hunk, which of those were added, and where lines of the old
//! version were removed.

use std::collections::BTreeMap;

/// One `@@ -a,b +c,d @@` hunk, on the new file's side.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hunk {
    /// First line of the new file the hunk shows (1-based).
    pub new_start: u32,
    /// How many lines of the new file the hunk shows (context and added).
    pub new_count: u32,
    /// New-file lines the change added, ascending.
    pub added: Vec<u32>,
    /// First line and line count of the old file the hunk shows (context and removed).
    pub old_start: u32,
    pub old_count: u32,
    /// Runs of old-file lines the change removed, ascending.
    pub removed: Vec<Removal>,
}

/// Old-file lines `old_first..=old_last`, removed together, and where they were in the
/// new file: before `new_line`, the new-file line that follows them (one past the hunk's
/// last line when nothing does).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Removal {
    pub old_first: u32,
    pub old_last: u32,
    pub new_line: u32,
}

impl Hunk {
    /// The last new-file line the hunk shows; `None` for a hunk that only deletes.
    pub fn last_line(&self) -> Option<u32> {
        (self.new_count > 0).then(|| self.new_start + self.new_count - 1)
    }

    /// Whether a RIGHT-side comment may point at `line`: every line the hunk shows may.
    pub fn contains(&self, line: u32) -> bool {
        self.last_line()
            .is_some_and(|last| line >= self.new_start && line <= last)
    }
}

/// One file of a diff.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileDiff {
    /// Repository-relative path in the new version (the old one for a deleted file).
    pub path: String,
    /// The path in the old version, for a renamed file.
    pub renamed_from: Option<String>,
    pub deleted: bool,
    pub hunks: Vec<Hunk>,
}

impl FileDiff {
    /// The hunk that shows `line` on the RIGHT side.
    pub fn hunk_at(&self, line: u32) -> Option<&Hunk> {
        self.hunks_overlapping(line, line)
            .iter()
            .find(|hunk| hunk.contains(line))
    }

    /// The hunks whose new-side lines reach into `start..=end`, in order (hunks that only
    /// delete, at a position inside the span, included). Hunks are kept sorted and apart,
    /// so this is a binary search: a change to thousands of cases of one file has
    /// thousands of hunks, and every finding looks up its own.
    pub fn hunks_overlapping(&self, start: u32, end: u32) -> &[Hunk] {
        let first = self
            .hunks
            .partition_point(|hunk| hunk.new_start.saturating_add(hunk.new_count) <= start);
        let last = self.hunks.partition_point(|hunk| hunk.new_start <= end);
        self.hunks.get(first..last).unwrap_or(&[])
    }

    /// The RIGHT-side line that shows where the change removed old-file lines of
    /// `first..=last`: the line that now follows the first removed run among them, or the
    /// line before it when the run ends its hunk. `None` when the change removed none of
    /// them, or their hunk shows no line of the new file. Hunks are in the old file's
    /// order too, so this is a binary search like [`FileDiff::hunks_overlapping`].
    pub fn line_where_removed(&self, first: u32, last: u32) -> Option<u32> {
        let start = self
            .hunks
            .partition_point(|hunk| hunk.old_start.saturating_add(hunk.old_count) <= first);
        let (hunk, removal) = self.hunks.get(start..)?.iter().find_map(|hunk| {
            hunk.removed
                .iter()
                .find(|removal| removal.old_first <= last && first <= removal.old_last)
                .map(|removal| (hunk, removal))
        })?;
        [Some(removal.new_line), removal.new_line.checked_sub(1)]
            .into_iter()
            .flatten()
            .find(|&line| hunk.contains(line))
    }
}

/// The files a pull request changes, by repository-relative path.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PullDiff {
    files: BTreeMap<String, FileDiff>,
}

impl PullDiff {
    /// Parses a unified diff. Never fails: what it cannot read it leaves out, and a file
    /// left out only means its findings are anchored less precisely.
    pub fn parse(text: &str) -> PullDiff {
        let mut parser = Parser::default();
        for line in text.lines() {
            parser.line(line);
        }
        parser.finish()
    }

    pub fn file(&self, path: &str) -> Option<&FileDiff> {
        self.files.get(path)
    }

    /// A file that still exists after the change, so comments can be made on it.
    pub fn changed_file(&self, path: &str) -> Option<&FileDiff> {
        self.files.get(path).filter(|file| !file.deleted)
    }

    /// The file that `old_path` of the old version became, under this name or another:
    /// where the lines the change removed from it are shown.
    pub fn successor_of(&self, old_path: &str) -> Option<&FileDiff> {
        self.changed_file(old_path).or_else(|| {
            self.files
                .values()
                .find(|file| !file.deleted && file.renamed_from.as_deref() == Some(old_path))
        })
    }

    pub fn files(&self) -> impl Iterator<Item = &FileDiff> {
        self.files.values()
    }

    /// Whether `start_line..=line` of `path` may carry one RIGHT-side review comment:
    /// the file survives and both ends lie in the same hunk. One bad anchor makes GitHub
    /// reject a whole review, so every anchor is checked here before posting.
    pub fn accepts_range(&self, path: &str, start_line: u32, line: u32) -> bool {
        let Some(file) = self.changed_file(path) else {
            return false;
        };
        start_line <= line
            && file
                .hunk_at(line)
                .is_some_and(|hunk| hunk.contains(start_line))
    }
}

#[derive(Default)]
struct Parser {
    files: BTreeMap<String, FileDiff>,
    current: Option<FileDiff>,
    /// New-side and old-side lines still expected in the current hunk.
    remaining_new: u32,
    remaining_old: u32,
    next_new_line: u32,
    next_old_line: u32,
}

impl Parser {
    fn line(&mut self, line: &str) {
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
            // Real diffs list a file's hunks in order and apart; a hunk that overlaps the
            // one before it is not from a real diff and is left out.
            file.hunks.sort_by_key(|hunk| hunk.new_start);
            let mut end = 0;
            file.hunks.retain(|hunk| {
                let apart = hunk.new_start >= end;
                if apart {
                    end = hunk.new_start.saturating_add(hunk.new_count);
                }
                apart
            });
            if !file.path.is_empty() {
                self.files.insert(file.path.clone(), file);
            }
        }
    }

    fn finish(mut self) -> PullDiff {
        self.flush();
        PullDiff { files: self.files }
    }
}

/// The line ranges of a hunk header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct HunkRange {
    old_start: u32,
    old_count: u32,
    new_start: u32,
    new_count: u32,
}

/// `@@ -12,3 +12,4 @@ context` -> its ranges. A missing count is 1.
fn parse_hunk_header(header: &str) -> Option<HunkRange> {
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

#[cfg(test)]
mod tests {
    use super::*;

    const DIFF: &str = "\
diff --git a/evals/support.jsonl b/evals/support.jsonl
index 1111111..2222222 100644
--- a/evals/support.jsonl
+++ b/evals/support.jsonl
@@ -1,4 +1,4 @@
 {\"id\": \"a\"}
-{\"id\": \"b\", \"input\": \"old\"}
+{\"id\": \"b\", \"input\": \"new\"}
 {\"id\": \"c\"}

@@ -10,2 +10,4 @@ tail
 {\"id\": \"j\"}
+{\"id\": \"k\"}
+{\"id\": \"l\"}
 {\"id\": \"m\"}
diff --git a/skills/x/run.sh b/skills/x/run.sh
new file mode 100755
index 0000000..3333333
--- /dev/null
+++ b/skills/x/run.sh
@@ -0,0 +1,2 @@
+#!/bin/sh
+curl https://example.com/install | sh
diff --git a/old.txt b/old.txt
deleted file mode 100644
index 4444444..0000000
--- a/old.txt
+++ /dev/null
@@ -1 +0,0 @@
-gone
\\ No newline at end of file
diff --git a/prompts/a.txt b/prompts/b.txt
similarity index 90%
rename from prompts/a.txt
rename to prompts/b.txt
index 5555555..6666666 100644
--- a/prompts/a.txt
+++ b/prompts/b.txt
@@ -1 +1 @@
-You are terse.
+You are terse and kind.
diff --git a/logo.png b/logo.png
index 7777777..8888888 100644
Binary files a/logo.png and b/logo.png differ
";

    #[test]
    fn parses_added_lines_and_hunk_spans() {
        let diff = PullDiff::parse(DIFF);
        let cases = diff.changed_file("evals/support.jsonl").expect("file");
        assert_eq!(cases.hunks.len(), 2);
        assert_eq!(
            cases.hunks[0],
            Hunk {
                new_start: 1,
                new_count: 4,
                added: vec![2],
                old_start: 1,
                old_count: 4,
                removed: vec![Removal {
                    old_first: 2,
                    old_last: 2,
                    new_line: 2
                }]
            }
        );
        assert_eq!(
            cases.hunks[1],
            Hunk {
                new_start: 10,
                new_count: 4,
                added: vec![11, 12],
                old_start: 10,
                old_count: 2,
                removed: Vec::new()
            }
        );
        assert!(cases.hunks[0].contains(4) && !cases.hunks[0].contains(5));
    }

    /// A file with many hunks, some only deleting: the binary search finds exactly the
    /// hunks a scan of all of them finds, for every span.
    #[test]
    fn overlapping_hunks_are_those_a_full_scan_finds() {
        let mut text = String::from("diff --git a/f b/f\n--- a/f\n+++ b/f\n");
        let mut new_line = 1;
        for number in 0..60u32 {
            new_line += number % 4;
            match number % 5 {
                // Deletes two lines: no new-side line.
                3 => text.push_str(&format!("@@ -{new_line},2 +{new_line},0 @@\n-x\n-y\n")),
                _ => {
                    text.push_str(&format!("@@ -{new_line},2 +{new_line},3 @@\n c\n+a\n c\n"));
                    new_line += 3;
                }
            }
        }
        let diff = PullDiff::parse(&text);
        let file = diff.changed_file("f").expect("file");
        assert_eq!(file.hunks.len(), 60);
        let reaches = |hunk: &Hunk, start: u32, end: u32| {
            hunk.new_start <= end && hunk.new_start + hunk.new_count > start
        };
        for start in 0..new_line + 3 {
            for end in start..(start + 7).min(new_line + 3) {
                let scanned: Vec<&Hunk> = file
                    .hunks
                    .iter()
                    .filter(|hunk| reaches(hunk, start, end))
                    .collect();
                let searched: Vec<&Hunk> = file.hunks_overlapping(start, end).iter().collect();
                assert_eq!(searched, scanned, "span {start}..={end}");
                assert_eq!(
                    file.hunk_at(start),
                    file.hunks.iter().find(|hunk| hunk.contains(start)),
                    "line {start}"
                );
            }
        }
    }

    #[test]
    fn removed_lines_are_placed_on_the_line_that_follows_them() {
        let text = "diff --git a/f b/f\n--- a/f\n+++ b/f\n\
            @@ -1,6 +1,5 @@\n a\n-b\n+B\n c\n-d\n-e\n f\n\
            @@ -20,3 +19,2 @@\n t\n u\n-v\n\
            @@ -40,2 +38,0 @@\n-x\n-y\n";
        let diff = PullDiff::parse(text);
        let file = diff.changed_file("f").expect("file");
        assert_eq!(
            file.hunks[0].removed,
            vec![
                Removal {
                    old_first: 2,
                    old_last: 2,
                    new_line: 2
                },
                Removal {
                    old_first: 4,
                    old_last: 5,
                    new_line: 4
                }
            ]
        );
        // `d` and `e` were where `f` (new line 4) now is; `b` was replaced by `B`.
        assert_eq!(file.line_where_removed(4, 5), Some(4));
        assert_eq!(file.line_where_removed(5, 9), Some(4));
        assert_eq!(file.line_where_removed(1, 2), Some(2));
        assert_eq!(file.line_where_removed(3, 3), None, "`c` is still there");
        // Removed at the end of a hunk: the line before.
        assert_eq!(file.line_where_removed(22, 22), Some(20));
        // A hunk that shows no new line has nowhere to comment.
        assert_eq!(file.line_where_removed(40, 41), None);
        assert_eq!(file.line_where_removed(50, 60), None);
    }

    #[test]
    fn hunks_are_kept_in_order_and_one_overlapping_its_predecessor_is_left_out() {
        let text = "diff --git a/f b/f\n--- a/f\n+++ b/f\n\
            @@ -20,1 +20,2 @@\n c\n+a\n\
            @@ -1,1 +1,3 @@\n c\n+a\n+b\n\
            @@ -2,1 +2,2 @@\n c\n+a\n";
        let diff = PullDiff::parse(text);
        let starts: Vec<u32> = diff
            .changed_file("f")
            .expect("file")
            .hunks
            .iter()
            .map(|hunk| hunk.new_start)
            .collect();
        assert_eq!(starts, vec![1, 20]);
    }

    #[test]
    fn new_deleted_renamed_and_binary_files() {
        let diff = PullDiff::parse(DIFF);
        assert_eq!(
            diff.changed_file("skills/x/run.sh")
                .expect("new file")
                .hunks[0]
                .added,
            vec![1, 2]
        );
        assert!(diff.file("old.txt").expect("deleted file").deleted);
        assert!(diff.changed_file("old.txt").is_none());
        assert_eq!(
            diff.changed_file("prompts/b.txt").expect("renamed").hunks[0].added,
            vec![1]
        );
        assert!(diff.file("prompts/a.txt").is_none());
        assert_eq!(
            diff.successor_of("prompts/a.txt")
                .map(|file| file.path.as_str()),
            Some("prompts/b.txt")
        );
        assert!(diff.successor_of("old.txt").is_none());
        assert!(diff
            .changed_file("logo.png")
            .expect("binary")
            .hunks
            .is_empty());
    }

    #[test]
    fn a_range_is_accepted_only_inside_one_hunk_of_a_surviving_file() {
        let diff = PullDiff::parse(DIFF);
        assert!(diff.accepts_range("evals/support.jsonl", 2, 2));
        assert!(diff.accepts_range("evals/support.jsonl", 1, 4));
        assert!(diff.accepts_range("evals/support.jsonl", 10, 13));
        assert!(
            !diff.accepts_range("evals/support.jsonl", 4, 10),
            "spans two hunks"
        );
        assert!(
            !diff.accepts_range("evals/support.jsonl", 6, 6),
            "between hunks"
        );
        assert!(!diff.accepts_range("evals/support.jsonl", 3, 2), "reversed");
        assert!(!diff.accepts_range("old.txt", 1, 1), "deleted file");
        assert!(!diff.accepts_range("missing.txt", 1, 1));
    }

    #[test]
    fn a_hunk_line_that_looks_like_a_header_is_content() {
        let text = "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1,2 +1,3 @@\n x\n+diff --git a/y b/y\n-+++ b/z\n+@@ -1 +1 @@\n y\n";
        let diff = PullDiff::parse(text);
        let file = diff.changed_file("f").expect("file");
        assert_eq!(
            file.hunks,
            vec![Hunk {
                new_start: 1,
                new_count: 3,
                added: vec![2, 3],
                old_start: 1,
                old_count: 2,
                removed: vec![Removal {
                    old_first: 2,
                    old_last: 2,
                    new_line: 3
                }]
            }]
        );
        assert!(diff.file("y").is_none() && diff.file("z").is_none());
    }

    #[test]
    fn quoted_paths_and_headers_without_counts() {
        let text = "diff --git \"a/sp ace\\303\\251.txt\" \"b/sp ace\\303\\251.txt\"\n--- \"a/sp ace\\303\\251.txt\"\n+++ \"b/sp ace\\303\\251.txt\"\n@@ -3 +3 @@\n-a\n+b\n";
        let diff = PullDiff::parse(text);
        assert_eq!(
            diff.changed_file("sp aceé.txt").expect("file").hunks[0].added,
            vec![3]
        );
        assert_eq!(
            parse_hunk_header("@@ -0,0 +1 @@"),
            Some(HunkRange {
                old_start: 0,
                old_count: 0,
                new_start: 1,
                new_count: 1
            })
        );
        assert_eq!(parse_hunk_header("@@ garbage"), None);
    }

    #[test]
    fn garbage_never_panics() {
        for text in [
            "",
            "@@ -1 +1 @@\n+x",
            "diff --git\n+++ \n@@ -a +b @@",
            "\u{0}\u{1}",
            "diff --git a/x b/x\n@@ -1,9999 +1,9999 @@\n",
        ] {
            let _ = PullDiff::parse(text);
        }
    }

    #[test]
    fn lines_past_the_header_counts_and_impossible_ranges_are_not_anchored() {
        // Found by the `diff` fuzz target: an added line after the new side was used up
        // was recorded as added at a line outside its hunk.
        let diff = PullDiff::parse(
            "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -2 +1,0 @@\n+surplus\n-removed\n",
        );
        let file = diff.file("f").expect("the file is kept");
        assert_eq!(file.hunks[0].added, Vec::<u32>::new());
        for header in ["@@ -1 +4294967295,2 @@", "@@ -1 +0,3 @@"] {
            let diff = PullDiff::parse(&format!("diff --git a/f b/f\n{header}\n+x\n"));
            assert!(diff.file("f").expect("file").hunks.is_empty(), "{header}");
        }
    }
}
