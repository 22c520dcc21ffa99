//! What one run posts, decided without the network: which findings share a comment
//! (those at one place), which comments are new inline or file-level ones (at most 30),
//! which findings go to the summary, which comments are already on the pull request, and
//! what happens to comments whose findings changed or disappeared.

use super::anchor::{Anchor, Side};
use super::api::{ReviewComment, ReviewThread};
use super::body::{marker_fingerprints, read_marker, MAX_FINDINGS_PER_COMMENT};
use crate::finding::Finding;
use std::collections::{BTreeMap, BTreeSet};

/// At most this many new comments per run; GitHub's UI and reviewers cope with no more.
pub const MAX_INLINE_COMMENTS: usize = 30;

/// A finding with the place it will be shown.
#[derive(Debug, Clone)]
pub struct Anchored {
    pub finding: Finding,
    pub anchor: Anchor,
}

/// One comment: the findings shown at one place, most severe first. Its marker carries
/// all their fingerprints, so it is current exactly while the same findings are there.
#[derive(Debug, Clone)]
pub struct Comment {
    pub anchor: Anchor,
    pub findings: Vec<Finding>,
}

impl Comment {
    /// The fingerprints the comment's marker carries, as a set: what a re-run compares.
    pub fn fingerprints(&self) -> BTreeSet<&str> {
        self.findings
            .iter()
            .map(|finding| finding.fingerprint.as_str())
            .collect()
    }

    /// Its findings, each with the comment's place, for the summary.
    fn into_anchored(self) -> impl Iterator<Item = Anchored> {
        let anchor = self.anchor;
        self.findings.into_iter().map(move |finding| Anchored {
            finding,
            anchor: anchor.clone(),
        })
    }
}

/// What to do with an evalock comment whose findings are gone or changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cleanup {
    /// Resolve its thread (GraphQL): the conversation stays readable, collapsed.
    Resolve { comment_id: u64, thread_id: String },
    /// No thread to resolve (GraphQL unavailable): delete the comment.
    Delete { comment_id: u64 },
    /// A person replied: the conversation is theirs, left as it is.
    KeepForHuman { comment_id: u64 },
}

#[derive(Debug, Default)]
pub struct Plan {
    /// New comments on lines, in the order they are posted.
    pub inline: Vec<Comment>,
    /// New file-level comments.
    pub file_level: Vec<Comment>,
    /// Findings with nothing in the diff to attach to.
    pub summary_only: Vec<Anchored>,
    /// Anchorable findings beyond the comment cap.
    pub overflow: Vec<Anchored>,
    /// Comments already on the pull request (an open thread) with the same findings.
    pub already_posted: Vec<Comment>,
    pub cleanups: Vec<Cleanup>,
}

impl Plan {
    /// Everything the summary lists because it is not (or not yet) a comment.
    pub fn summary_findings(&self) -> impl Iterator<Item = &Anchored> {
        self.summary_only.iter().chain(&self.overflow)
    }

    /// Moves comments that could not be posted to the summary.
    pub fn to_summary(&mut self, comments: Vec<Comment>) {
        self.overflow
            .extend(comments.into_iter().flat_map(Comment::into_anchored));
    }

    /// How many findings are, or now will be, comments on the pull request.
    pub fn commented_findings(&self) -> usize {
        [&self.inline, &self.file_level, &self.already_posted]
            .into_iter()
            .flatten()
            .map(|comment| comment.findings.len())
            .sum()
    }
}

/// Existing review comments, seen through their markers.
pub struct Existing<'a> {
    pub comments: &'a [ReviewComment],
    /// `None` when threads could not be listed: then nothing can be resolved, and every
    /// marked comment counts as open.
    pub threads: Option<&'a [ReviewThread]>,
    /// This project's folder in the repository (`""` at the top): only comments whose
    /// marker names it are this run's to count and to clean up.
    pub prefix: &'a str,
}

pub fn plan(mut anchored: Vec<Anchored>, existing: &Existing<'_>, max_comments: usize) -> Plan {
    // The most severe findings get the inline slots, and head their comment; the order is
    // otherwise the usual one.
    anchored.sort_by_key(|item| std::cmp::Reverse(item.finding.severity));
    let mut plan = Plan::default();
    let mut seen = BTreeSet::new();
    let mut placed = Vec::new();
    for item in anchored {
        if matches!(item.anchor, Anchor::Summary) {
            plan.summary_only.push(item);
        } else if !seen.insert(item.finding.fingerprint.clone()) {
            // The same finding twice (two reports said it): it is shown once.
            plan.already_posted.push(Comment {
                anchor: item.anchor,
                findings: vec![item.finding],
            });
        } else {
            placed.push(item);
        }
    }
    let comments = comments_by_place(placed);
    let open = open_markers(existing);
    let current: BTreeSet<BTreeSet<&str>> = comments
        .iter()
        .map(Comment::fingerprints)
        .chain(plan.summary_only.iter().map(|item| {
            // A finding that went to the summary keeps the comment it had on its own.
            BTreeSet::from([item.finding.fingerprint.as_str()])
        }))
        .collect();
    plan.cleanups = cleanups(existing, &current);
    for comment in comments.iter().cloned() {
        if open.contains(&comment.fingerprints()) {
            plan.already_posted.push(comment);
        } else if plan.inline.len() + plan.file_level.len() >= max_comments {
            plan.to_summary(vec![comment]);
        } else if matches!(comment.anchor, Anchor::File { .. }) {
            plan.file_level.push(comment);
        } else {
            plan.inline.push(comment);
        }
    }
    plan
}

/// Where on the pull request a comment shows: GitHub shows a line comment below its last
/// line, so comments that end on the same line of the same side are in one place.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Place {
    Line { path: String, side: Side, line: u32 },
    File { path: String },
}

fn place_of(anchor: &Anchor) -> Option<Place> {
    match anchor {
        Anchor::Lines {
            path, side, line, ..
        } => Some(Place::Line {
            path: path.clone(),
            side: *side,
            line: *line,
        }),
        Anchor::File { path } => Some(Place::File { path: path.clone() }),
        Anchor::Summary => None,
    }
}

/// One comment per place, in the order of each place's first (most severe) finding, each
/// with its findings in the order given, at most [`MAX_FINDINGS_PER_COMMENT`] to a
/// comment. A line comment spans the widest range of its findings: ranges that end on
/// the same line of one hunk (or one run of removed lines) overlap, so their union is in
/// it too.
fn comments_by_place(placed: Vec<Anchored>) -> Vec<Comment> {
    let mut comments: Vec<Comment> = Vec::new();
    let mut open_comment: BTreeMap<Place, usize> = BTreeMap::new();
    for item in placed {
        let Some(place) = place_of(&item.anchor) else {
            continue;
        };
        match open_comment.get(&place).copied() {
            Some(index)
                if comments
                    .get(index)
                    .is_some_and(|comment| comment.findings.len() < MAX_FINDINGS_PER_COMMENT) =>
            {
                if let Some(comment) = comments.get_mut(index) {
                    widen(&mut comment.anchor, &item.anchor);
                    comment.findings.push(item.finding);
                }
            }
            _ => {
                open_comment.insert(place, comments.len());
                comments.push(Comment {
                    anchor: item.anchor,
                    findings: vec![item.finding],
                });
            }
        }
    }
    comments
}

fn widen(anchor: &mut Anchor, other: &Anchor) {
    if let (
        Anchor::Lines { start_line, .. },
        Anchor::Lines {
            start_line: other_start,
            ..
        },
    ) = (anchor, other)
    {
        *start_line = (*start_line).min(*other_start);
    }
}

/// The fingerprints of a comment this project posted (not a reply), if it is one.
/// Fingerprints do not name the project, so another project in the same repository (a
/// sibling folder, or one nested in this one) can post the very same fingerprint: the
/// marker's project tells them apart. A marker from before markers named their project
/// counts by the comment's path, which is exact for a repository with one project.
fn own_fingerprints<'a>(comment: &'a ReviewComment, prefix: &str) -> Option<BTreeSet<&'a str>> {
    if comment.in_reply_to_id.is_some() {
        return None;
    }
    let marker = read_marker(&comment.body)?;
    let ours = match marker.project {
        Some(project) => project == prefix,
        None => belongs_to_project(&comment.path, prefix),
    };
    ours.then(|| marker.fingerprints.into_iter().collect())
}

fn belongs_to_project(path: &str, prefix: &str) -> bool {
    prefix.is_empty()
        || path
            .strip_prefix(prefix)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// The fingerprint sets of this project's comments in unresolved threads.
fn open_markers<'a>(existing: &Existing<'a>) -> BTreeSet<BTreeSet<&'a str>> {
    let resolved: BTreeSet<u64> = existing
        .threads
        .into_iter()
        .flatten()
        .filter(|thread| thread.is_resolved)
        .filter_map(|thread| thread.first_comment_id)
        .collect();
    existing
        .comments
        .iter()
        .filter(|comment| !resolved.contains(&comment.id))
        .filter_map(|comment| own_fingerprints(comment, existing.prefix))
        .collect()
}

/// This project's comments that show no current set of findings: one of their findings
/// is gone, or a finding joined or left their place.
fn cleanups(existing: &Existing<'_>, current: &BTreeSet<BTreeSet<&str>>) -> Vec<Cleanup> {
    let threads_by_comment: Option<BTreeMap<u64, &ReviewThread>> =
        existing.threads.map(|threads| {
            threads
                .iter()
                .filter_map(|thread| Some((thread.first_comment_id?, thread)))
                .collect()
        });
    let human_replied: BTreeSet<u64> = existing
        .comments
        .iter()
        .filter(|comment| marker_fingerprints(&comment.body).is_none())
        .filter_map(|comment| comment.in_reply_to_id)
        .collect();
    let mut cleanups = Vec::new();
    for comment in existing.comments {
        let Some(fingerprints) = own_fingerprints(comment, existing.prefix) else {
            continue;
        };
        if current.contains(&fingerprints) {
            continue;
        }
        let cleanup = if human_replied.contains(&comment.id) {
            Cleanup::KeepForHuman {
                comment_id: comment.id,
            }
        } else {
            match &threads_by_comment {
                Some(threads) => match threads.get(&comment.id) {
                    Some(thread) if thread.is_resolved => continue,
                    Some(thread) => Cleanup::Resolve {
                        comment_id: comment.id,
                        thread_id: thread.id.clone(),
                    },
                    None => Cleanup::Delete {
                        comment_id: comment.id,
                    },
                },
                None => Cleanup::Delete {
                    comment_id: comment.id,
                },
            }
        };
        cleanups.push(cleanup);
    }
    cleanups
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::finding::{Location, Subject};
    use crate::rules::{RuleId, Severity};

    fn anchored(case: &str, anchor: Anchor) -> Anchored {
        let finding = Finding::new(RuleId::CaseEditedInPlace, Subject::case("s", case), "m")
            .at(Location::line("f.jsonl", 1));
        Anchored { finding, anchor }
    }

    fn line(path: &str) -> Anchor {
        line_at(path, 1)
    }

    fn line_at(path: &str, line: u32) -> Anchor {
        Anchor::Lines {
            path: path.to_owned(),
            side: Side::Right,
            start_line: line,
            line,
        }
    }

    /// A comment of the project at the top of the repository, or a person's reply.
    fn comment(
        id: u64,
        path: &str,
        finding: Option<&Anchored>,
        reply_to: Option<u64>,
    ) -> ReviewComment {
        let body = match finding {
            Some(item) => format!(
                "x\n{}",
                super::super::body::fingerprint_marker(&[&item.finding.fingerprint], "")
            ),
            None => "a person's reply".to_owned(),
        };
        ReviewComment {
            id,
            path: path.to_owned(),
            body,
            in_reply_to_id: reply_to,
        }
    }

    fn nothing() -> Existing<'static> {
        Existing {
            comments: &[],
            threads: Some(&[]),
            prefix: "",
        }
    }

    #[test]
    fn thirty_comments_at_most_and_the_most_severe_first() {
        let mut items: Vec<Anchored> = (0..35)
            .map(|index| anchored(&format!("c{index:02}"), line_at("f.jsonl", index + 1)))
            .collect();
        items[34].finding.severity = Severity::Refuse;
        for item in items.iter_mut().take(34) {
            item.finding.severity = Severity::Warn;
        }
        let plan = plan(items, &nothing(), MAX_INLINE_COMMENTS);
        assert_eq!(plan.inline.len(), 30);
        assert_eq!(plan.overflow.len(), 5);
        assert_eq!(
            plan.inline[0].findings[0].subject.case.as_deref(),
            Some("c34")
        );
        assert_eq!(plan.summary_findings().count(), 5);
    }

    #[test]
    fn file_comments_count_towards_the_cap_and_summary_findings_do_not() {
        let items = vec![
            anchored(
                "a",
                Anchor::File {
                    path: "f.jsonl".into(),
                },
            ),
            anchored("b", Anchor::Summary),
            anchored("c", line_at("f.jsonl", 1)),
            anchored("d", line_at("f.jsonl", 2)),
        ];
        let plan = plan(items, &nothing(), 2);
        assert_eq!(
            (
                plan.file_level.len(),
                plan.inline.len(),
                plan.summary_only.len(),
                plan.overflow.len()
            ),
            (1, 1, 1, 1)
        );
    }

    #[test]
    fn posted_findings_are_skipped_and_gone_ones_cleaned_up() {
        let still = anchored("still", line("f.jsonl"));
        let gone = anchored("gone", line("f.jsonl"));
        let discussed = anchored("discussed", line("f.jsonl"));
        let comments = vec![
            comment(1, "f.jsonl", Some(&still), None),
            comment(2, "f.jsonl", Some(&gone), None),
            comment(3, "f.jsonl", Some(&discussed), None),
            comment(4, "f.jsonl", None, Some(3)),
        ];
        let threads = vec![
            ReviewThread {
                id: "T1".into(),
                is_resolved: false,
                first_comment_id: Some(1),
            },
            ReviewThread {
                id: "T2".into(),
                is_resolved: false,
                first_comment_id: Some(2),
            },
            ReviewThread {
                id: "T3".into(),
                is_resolved: false,
                first_comment_id: Some(3),
            },
        ];
        let existing = Existing {
            comments: &comments,
            threads: Some(&threads),
            prefix: "",
        };
        let plan = plan(
            vec![still, anchored("new", line_at("f.jsonl", 2))],
            &existing,
            30,
        );
        assert_eq!(plan.already_posted.len(), 1);
        assert_eq!(plan.inline.len(), 1);
        assert_eq!(
            plan.cleanups,
            vec![
                Cleanup::Resolve {
                    comment_id: 2,
                    thread_id: "T2".into()
                },
                Cleanup::KeepForHuman { comment_id: 3 }
            ]
        );
    }

    #[test]
    fn without_threads_gone_comments_are_deleted_and_resolved_ones_reposted() {
        let item = anchored("a", line("f.jsonl"));
        let gone = anchored("gone", line("f.jsonl"));
        let comments = vec![
            comment(1, "f.jsonl", Some(&item), None),
            comment(2, "f.jsonl", Some(&gone), None),
        ];
        let existing = Existing {
            comments: &comments,
            threads: None,
            prefix: "",
        };
        let plan_without_threads = plan(vec![item.clone()], &existing, 30);
        assert_eq!(
            plan_without_threads.cleanups,
            vec![Cleanup::Delete { comment_id: 2 }]
        );
        assert_eq!(plan_without_threads.already_posted.len(), 1);
        // A finding whose earlier thread was resolved is back: it is posted again.
        let threads = vec![
            ReviewThread {
                id: "T1".into(),
                is_resolved: true,
                first_comment_id: Some(1),
            },
            ReviewThread {
                id: "T2".into(),
                is_resolved: true,
                first_comment_id: Some(2),
            },
        ];
        let existing = Existing {
            comments: &comments,
            threads: Some(&threads),
            prefix: "",
        };
        let plan_again = plan(vec![item], &existing, 30);
        assert_eq!(plan_again.inline.len(), 1);
        assert!(
            plan_again.cleanups.is_empty(),
            "resolved threads need nothing more"
        );
    }

    fn comment_of_project(id: u64, path: &str, item: &Anchored, project: &str) -> ReviewComment {
        let body = format!(
            "x\n{}",
            super::super::body::fingerprint_marker(&[&item.finding.fingerprint], project)
        );
        ReviewComment {
            body,
            ..comment(id, path, None, None)
        }
    }

    #[test]
    fn comments_of_another_project_in_the_same_repository_are_left_alone() {
        let gone = anchored("gone", line("other/f.jsonl"));
        let comments = vec![comment_of_project(9, "other/f.jsonl", &gone, "other")];
        let existing = Existing {
            comments: &comments,
            threads: None,
            prefix: "proj",
        };
        assert!(plan(Vec::new(), &existing, 30).cleanups.is_empty());
        assert!(belongs_to_project("proj/a", "proj") && !belongs_to_project("project/a", "proj"));
    }

    #[test]
    fn a_project_at_the_top_leaves_a_nested_project_its_comments() {
        // Both projects have a case `same`; the nested one also had `gone`.
        let same = anchored("same", line("f.jsonl"));
        let gone = anchored("gone", line("nested/f.jsonl"));
        let comments = vec![
            comment_of_project(1, "nested/f.jsonl", &same, "nested"),
            comment_of_project(2, "nested/f.jsonl", &gone, "nested"),
        ];
        let existing = Existing {
            comments: &comments,
            threads: None,
            prefix: "",
        };
        let top = plan(vec![same], &existing, 30);
        assert_eq!(
            (top.inline.len(), top.already_posted.len()),
            (1, 0),
            "the nested project's comment is not this project's"
        );
        assert!(top.cleanups.is_empty(), "{:?}", top.cleanups);
    }

    #[test]
    fn markers_without_a_project_count_by_their_path() {
        // Posted by a version whose markers did not name the project.
        let still = anchored("still", line("proj/f.jsonl"));
        let gone = anchored("gone", line("proj/f.jsonl"));
        let legacy = |id: u64, item: &Anchored| ReviewComment {
            body: format!("x\n<!-- evalock:fp={} -->", item.finding.fingerprint),
            ..comment(id, "proj/f.jsonl", None, None)
        };
        let comments = vec![legacy(1, &still), legacy(2, &gone)];
        let existing = Existing {
            comments: &comments,
            threads: None,
            prefix: "proj",
        };
        let again = plan(vec![still], &existing, 30);
        assert_eq!(again.already_posted.len(), 1, "not posted a second time");
        assert_eq!(again.cleanups, vec![Cleanup::Delete { comment_id: 2 }]);
    }

    fn unlocked(case: &str, anchor: Anchor) -> Anchored {
        let finding = Finding::new(RuleId::CaseUnlocked, Subject::case("s", case), "m")
            .at(Location::line("f.jsonl", 1));
        Anchored { finding, anchor }
    }

    #[test]
    fn findings_at_one_place_share_a_comment_and_the_cap_counts_comments() {
        // The less severe finding spans more lines: the comment takes the widest range.
        let mut warn = unlocked("a", wide_anchor(1, 2));
        warn.finding.severity = Severity::Warn;
        let items = vec![
            warn,
            anchored("a", line_at("f.jsonl", 2)),
            anchored("b", line_at("f.jsonl", 3)),
            // Same line, other side: another place.
            anchored(
                "c",
                Anchor::Lines {
                    path: "f.jsonl".into(),
                    side: Side::Left,
                    start_line: 2,
                    line: 2,
                },
            ),
        ];
        let plan = plan(items, &nothing(), 2);
        assert_eq!(plan.inline.len(), 2, "{:?}", plan.inline);
        let shared = &plan.inline[0];
        let rules: Vec<RuleId> = shared.findings.iter().map(|finding| finding.rule).collect();
        assert_eq!(
            rules,
            vec![RuleId::CaseEditedInPlace, RuleId::CaseUnlocked],
            "the most severe first"
        );
        assert_eq!(shared.anchor, wide_anchor(1, 2), "the widest range");
        assert_eq!(plan.overflow.len(), 1, "one comment over the cap of two");
        assert_eq!(plan.commented_findings(), 3);
    }

    fn wide_anchor(start_line: u32, line: u32) -> Anchor {
        Anchor::Lines {
            path: "f.jsonl".into(),
            side: Side::Right,
            start_line,
            line,
        }
    }

    fn shared_comment(id: u64, items: &[&Anchored]) -> ReviewComment {
        let fingerprints: Vec<&str> = items
            .iter()
            .map(|item| item.finding.fingerprint.as_str())
            .collect();
        ReviewComment {
            body: format!(
                "x\n{}",
                super::super::body::fingerprint_marker(&fingerprints, "")
            ),
            ..comment(id, "f.jsonl", None, None)
        }
    }

    #[test]
    fn a_shared_comment_is_current_while_its_findings_are_the_same() {
        let edited = anchored("a", line("f.jsonl"));
        let unlocked_too = unlocked("a", line("f.jsonl"));
        let comments = vec![shared_comment(1, &[&unlocked_too, &edited])];
        let existing = Existing {
            comments: &comments,
            threads: None,
            prefix: "",
        };
        let same = plan(vec![unlocked_too.clone(), edited.clone()], &existing, 30);
        assert_eq!(
            (
                same.already_posted.len(),
                same.inline.len(),
                same.cleanups.len()
            ),
            (1, 0, 0),
            "the same set in another order is the same comment"
        );
        // One of the two is gone: the comment is replaced by one showing the other.
        let fewer = plan(vec![unlocked_too.clone()], &existing, 30);
        assert_eq!(fewer.inline.len(), 1);
        assert_eq!(fewer.cleanups, vec![Cleanup::Delete { comment_id: 1 }]);
        // Comments of one finding each (an earlier version): replaced by a shared one.
        let singles = vec![
            comment(1, "f.jsonl", Some(&edited), None),
            comment(2, "f.jsonl", Some(&unlocked_too), None),
        ];
        let existing = Existing {
            comments: &singles,
            threads: None,
            prefix: "",
        };
        let merged = plan(vec![edited, unlocked_too], &existing, 30);
        assert_eq!(merged.inline.len(), 1);
        assert_eq!(
            merged.cleanups,
            vec![
                Cleanup::Delete { comment_id: 1 },
                Cleanup::Delete { comment_id: 2 }
            ]
        );
    }

    #[test]
    fn a_crowded_place_gets_as_many_comments_as_its_findings_need() {
        let items: Vec<Anchored> = (0..MAX_FINDINGS_PER_COMMENT + 1)
            .map(|index| anchored(&format!("c{index}"), line("f.jsonl")))
            .collect();
        let plan = plan(items, &nothing(), 30);
        let sizes: Vec<usize> = plan
            .inline
            .iter()
            .map(|comment| comment.findings.len())
            .collect();
        assert_eq!(sizes, vec![MAX_FINDINGS_PER_COMMENT, 1]);
    }
}
