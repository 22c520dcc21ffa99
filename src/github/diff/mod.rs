//! Unified diffs as GitHub (`application/vnd.github.v3.diff`) and `git diff` print them,
//! reduced to what a review comment needs: which lines of each file's new version (the
//! RIGHT side) are inside a hunk, which of those were added, and which lines of the old
//! version (the LEFT side) were removed and where.

use std::collections::BTreeMap;

mod parser;
#[cfg(test)]
mod tests;

use parser::Parser;

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
        let (hunk, removal) = self.first_removal_within(first, last)?;
        [Some(removal.new_line), removal.new_line.checked_sub(1)]
            .into_iter()
            .flatten()
            .find(|&line| hunk.contains(line))
    }

    /// The old-file lines of `first..=last` that the change removed, as one LEFT-side
    /// range: the first run of removed lines among them, cut to `first..=last`. A run lies
    /// inside one hunk, so the range can carry one comment. `None` when the change removed
    /// none of them.
    pub fn removed_lines_within(&self, first: u32, last: u32) -> Option<(u32, u32)> {
        let (_, removal) = self.first_removal_within(first, last)?;
        Some((removal.old_first.max(first), removal.old_last.min(last)))
    }

    /// The first run of removed lines that overlaps old-file lines `first..=last`, and its
    /// hunk. Hunks are in old-file order: the search starts at the first hunk that reaches
    /// `first` and stops at the first that starts past `last`, so anchoring many removed
    /// cases stays linear in the diff.
    fn first_removal_within(&self, first: u32, last: u32) -> Option<(&Hunk, &Removal)> {
        let start = self
            .hunks
            .partition_point(|hunk| hunk.old_start.saturating_add(hunk.old_count) <= first);
        self.hunks
            .get(start..)?
            .iter()
            .take_while(|hunk| hunk.old_start <= last)
            .find_map(|hunk| {
                hunk.removed
                    .iter()
                    .find(|removal| removal.old_first <= last && first <= removal.old_last)
                    .map(|removal| (hunk, removal))
            })
    }

    /// Whether old-file lines `start_line..=line` were all removed, in one run of one hunk:
    /// the red lines a LEFT-side comment may point at.
    pub fn removed_run_holds(&self, start_line: u32, line: u32) -> bool {
        start_line <= line
            && self
                .first_removal_within(start_line, line)
                .is_some_and(|(_, removal)| {
                    removal.old_first <= start_line && line <= removal.old_last
                })
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

    /// A file the change deletes: its old lines are all on the LEFT side.
    pub fn deleted_file(&self, path: &str) -> Option<&FileDiff> {
        self.files.get(path).filter(|file| file.deleted)
    }

    /// A file that still exists after the change, so comments can be made on it.
    pub fn changed_file(&self, path: &str) -> Option<&FileDiff> {
        self.files.get(path).filter(|file| !file.deleted)
    }

    /// A file the pull request shows, deleted ones and those without hunks (binary,
    /// empty) included: GitHub takes a file-level comment on any of them.
    pub fn shown_file(&self, path: &str) -> Option<&FileDiff> {
        self.files.get(path)
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

    /// Whether old-side lines `start_line..=line` of `path` may carry one LEFT-side review
    /// comment: the change removed all of them, in one run of one hunk. `path` is the name
    /// GitHub shows the file under: the old one for a deleted file, the new one for a
    /// renamed file.
    pub fn accepts_removed_range(&self, path: &str, start_line: u32, line: u32) -> bool {
        self.files
            .get(path)
            .is_some_and(|file| file.removed_run_holds(start_line, line))
    }
}
