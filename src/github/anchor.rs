//! Where on the pull request a finding is shown: the most specific changed line it is
//! about, a file-level comment on a changed file, or the summary comment.

use super::diff::{FileDiff, Hunk, PullDiff};
use crate::finding::{Finding, RelatedKind};
use crate::rules::RuleId;

/// Which version of a file a line comment numbers its lines in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Side {
    /// The old version (the merge base): for lines the change removed.
    Left,
    /// The new version (the head): for added lines and their context.
    Right,
}

impl Side {
    /// The name GitHub's API uses for `side` and `start_side`.
    pub fn as_str(self) -> &'static str {
        match self {
            Side::Left => "LEFT",
            Side::Right => "RIGHT",
        }
    }
}

/// A place on the pull request. Paths are repository-relative.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Anchor {
    /// Lines `start_line..=line` of `side`, always inside one hunk: on the RIGHT side any
    /// line the hunk shows, on the LEFT side only lines the change removed (one run).
    Lines {
        path: String,
        side: Side,
        start_line: u32,
        line: u32,
    },
    /// A comment on a changed file as a whole (`subject_type: file`).
    File { path: String },
    /// Nothing in the diff to attach to: the finding goes into the summary comment.
    Summary,
}

/// What anchoring needs besides the finding (which carries its related places: its
/// suite's prompt files, where a removed case stood at the base): the diff, and where the
/// project sits in the repository.
pub struct AnchorContext<'a> {
    pub diff: &'a PullDiff,
    /// The project root relative to the repository (`""` at the top).
    pub prefix: &'a str,
}

impl AnchorContext<'_> {
    /// A project-relative path as the repository (and GitHub) names it.
    pub fn repo_path(&self, project_path: &str) -> String {
        if self.prefix.is_empty() {
            project_path.to_owned()
        } else {
            format!("{}/{project_path}", self.prefix)
        }
    }

    /// Anchors a finding, then checks the anchor against the diff once more: a range that
    /// the diff does not accept becomes a file-level comment or goes to the summary.
    pub fn anchor(&self, finding: &Finding) -> Anchor {
        let anchor = self.choose(finding);
        match anchor {
            Anchor::Lines {
                ref path,
                side,
                start_line,
                line,
            } if !self.diff_accepts(path, side, start_line, line) => self.file_or_summary(finding),
            Anchor::File { ref path } if self.diff.shown_file(path).is_none() => Anchor::Summary,
            other => other,
        }
    }

    fn diff_accepts(&self, path: &str, side: Side, start_line: u32, line: u32) -> bool {
        match side {
            Side::Right => self.diff.accepts_range(path, start_line, line),
            Side::Left => self.diff.accepts_removed_range(path, start_line, line),
        }
    }

    fn choose(&self, finding: &Finding) -> Anchor {
        if finding.rule == RuleId::CaseRemoved {
            // A removed case has no line at the head: its place is where the diff removed
            // it, on the line that took its place or, when no line did (its file was
            // deleted), on its own removed lines. Any other change of its file is about
            // another case.
            return self
                .removal_of_case(finding)
                .or_else(|| self.removed_lines_of_case(finding))
                .unwrap_or_else(|| self.file_or_summary(finding));
        }
        if let Some(anchor) = self.changed_lines_of_finding(finding) {
            return anchor;
        }
        if let Some(anchor) = self.changed_prompt_hunk(finding) {
            return anchor;
        }
        if let Some(anchor) = self.hunk_context_of_finding(finding) {
            return anchor;
        }
        if let Some(anchor) = self.changed_hunk_of_whole_file_finding(finding) {
            return anchor;
        }
        self.file_or_summary(finding)
    }

    /// A finding about a whole file (a prompt or skill file changed against the lock)
    /// goes on the file's first change: that is where a reviewer looks.
    fn changed_hunk_of_whole_file_finding(&self, finding: &Finding) -> Option<Anchor> {
        let location = finding
            .location
            .as_ref()
            .filter(|location| location.line.is_none())?;
        self.first_change_of(&self.repo_path(&location.path))
    }

    /// The line that shows where the diff removed the finding's case: in its file, or in
    /// the file that the pull request renamed it to.
    fn removal_of_case(&self, finding: &Finding) -> Option<Anchor> {
        let (old_path, first, last) = self.removed_case_lines(finding)?;
        let file = self.diff.successor_of(&old_path)?;
        let line = file.line_where_removed(first, last)?;
        Some(Anchor::Lines {
            path: file.path.clone(),
            side: Side::Right,
            start_line: line,
            line,
        })
    }

    /// The case's own lines on the diff's LEFT side, where the change removed them: for a
    /// case of a deleted file, or one whose removal left no new-side line to point at.
    fn removed_lines_of_case(&self, finding: &Finding) -> Option<Anchor> {
        let (old_path, first, last) = self.removed_case_lines(finding)?;
        let file = self
            .diff
            .successor_of(&old_path)
            .or_else(|| self.diff.deleted_file(&old_path))?;
        let (start_line, line) = file.removed_lines_within(first, last)?;
        Some(Anchor::Lines {
            path: file.path.clone(),
            side: Side::Left,
            start_line,
            line,
        })
    }

    /// The repository path and base-version lines of the case a removal finding is about.
    fn removed_case_lines(&self, finding: &Finding) -> Option<(String, u32, u32)> {
        let at_base = finding
            .related
            .iter()
            .find(|related| related.kind == RelatedKind::Base)?;
        let first = at_base.location.line?;
        let last = at_base.location.end_line.unwrap_or(first);
        Some((self.repo_path(&at_base.location.path), first, last))
    }

    /// A file-level comment when the pull request shows the finding's file (changed,
    /// deleted, or binary with no hunks), else the summary.
    fn file_or_summary(&self, finding: &Finding) -> Anchor {
        match finding
            .location
            .as_ref()
            .map(|location| self.repo_path(&location.path))
        {
            Some(path) if self.diff.shown_file(&path).is_some() => Anchor::File { path },
            _ => Anchor::Summary,
        }
    }

    /// The finding's own span, narrowed to the lines the change added in one hunk.
    fn changed_lines_of_finding(&self, finding: &Finding) -> Option<Anchor> {
        let (path, file, start, end) = self.located_file(finding)?;
        // The hunk with the most added lines in the span; the first one on a tie
        // (`max_by_key` keeps the last maximum, hence the reversed walk).
        let added = file
            .hunks_overlapping(start, end)
            .iter()
            .rev()
            .map(|hunk| added_within(hunk, start, end))
            .filter(|added| !added.is_empty())
            .max_by_key(Vec::len)?;
        Some(Anchor::Lines {
            path,
            side: Side::Right,
            start_line: *added.first()?,
            line: *added.last()?,
        })
    }

    /// The finding's span where it overlaps a hunk but the change only removed lines there.
    fn hunk_context_of_finding(&self, finding: &Finding) -> Option<Anchor> {
        let (path, file, start, end) = self.located_file(finding)?;
        let hunk = file.hunks_overlapping(start, end).iter().find(|hunk| {
            hunk.last_line()
                .is_some_and(|last| hunk.new_start <= end && start <= last)
        })?;
        let last = hunk.last_line()?;
        Some(Anchor::Lines {
            path,
            side: Side::Right,
            start_line: start.max(hunk.new_start),
            line: end.min(last),
        })
    }

    /// The first changed hunk of the suite's prompt files: the change that made a case
    /// regress while its own fixture lines did not move.
    fn changed_prompt_hunk(&self, finding: &Finding) -> Option<Anchor> {
        finding
            .related
            .iter()
            .filter(|related| related.kind == RelatedKind::Prompt)
            .find_map(|prompt| self.first_change_of(&self.repo_path(&prompt.location.path)))
    }

    /// The added lines of a file's first hunk that shows any new-side line (its context
    /// when the hunk only deletes).
    fn first_change_of(&self, path: &str) -> Option<Anchor> {
        let file = self.diff.changed_file(path)?;
        let hunk = file.hunks.iter().find(|hunk| hunk.last_line().is_some())?;
        let (start_line, line) = match (hunk.added.first(), hunk.added.last()) {
            (Some(first), Some(last)) => (*first, *last),
            _ => (hunk.new_start, hunk.last_line()?),
        };
        Some(Anchor::Lines {
            path: path.to_owned(),
            side: Side::Right,
            start_line,
            line,
        })
    }

    fn located_file(&self, finding: &Finding) -> Option<(String, &FileDiff, u32, u32)> {
        let location = finding.location.as_ref()?;
        let start = location.line?;
        let end = location.end_line.unwrap_or(start).max(start);
        let path = self.repo_path(&location.path);
        let file = self.diff.changed_file(&path)?;
        Some((path, file, start, end))
    }
}

fn added_within(hunk: &Hunk, start: u32, end: u32) -> Vec<u32> {
    hunk.added
        .iter()
        .copied()
        .filter(|line| (start..=end).contains(line))
        .collect()
}

#[cfg(test)]
mod tests;
