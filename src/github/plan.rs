//! What one run posts, decided without the network: which findings get a new inline or
//! file-level comment (at most 30), which go to the summary, which are already on the
//! pull request, and what happens to comments whose finding disappeared.

use super::anchor::Anchor;
use super::api::{ReviewComment, ReviewThread};
use super::body::{marker_fingerprint, read_marker};
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

/// What to do with an evalock comment whose finding is gone.
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
    pub inline: Vec<Anchored>,
    /// New file-level comments.
    pub file_level: Vec<Anchored>,
    /// Findings with nothing in the diff to attach to.
    pub summary_only: Vec<Anchored>,
    /// Anchorable findings beyond the comment cap.
    pub overflow: Vec<Anchored>,
    /// Findings whose comment is already on the pull request (an open thread).
    pub already_posted: Vec<Anchored>,
    pub cleanups: Vec<Cleanup>,
}

impl Plan {
    /// Everything the summary lists because it is not (or not yet) a comment.
    pub fn summary_findings(&self) -> impl Iterator<Item = &Anchored> {
        self.summary_only.iter().chain(&self.overflow)
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
    // The most severe findings get the inline slots; the order is otherwise the usual one.
    anchored.sort_by_key(|item| std::cmp::Reverse(item.finding.severity));
    let open = open_markers(existing);
    let current: BTreeSet<&str> = anchored
        .iter()
        .map(|item| item.finding.fingerprint.as_str())
        .collect();
    let cleanups = cleanups(existing, &current);
    let mut plan = Plan {
        cleanups,
        ..Plan::default()
    };
    let mut posted_this_run = BTreeSet::new();
    for item in anchored {
        let fingerprint = item.finding.fingerprint.clone();
        if matches!(item.anchor, Anchor::Summary) {
            plan.summary_only.push(item);
        } else if open.contains(fingerprint.as_str()) || !posted_this_run.insert(fingerprint) {
            plan.already_posted.push(item);
        } else if plan.inline.len() + plan.file_level.len() >= max_comments {
            plan.overflow.push(item);
        } else if matches!(item.anchor, Anchor::File { .. }) {
            plan.file_level.push(item);
        } else {
            plan.inline.push(item);
        }
    }
    plan
}

/// The fingerprint of a comment this project posted (not a reply), if it is one.
/// Fingerprints do not name the project, so another project in the same repository (a
/// sibling folder, or one nested in this one) can post the very same fingerprint: the
/// marker's project tells them apart. A marker from before markers named their project
/// counts by the comment's path, which is exact for a repository with one project.
fn own_fingerprint<'a>(comment: &'a ReviewComment, prefix: &str) -> Option<&'a str> {
    if comment.in_reply_to_id.is_some() {
        return None;
    }
    let marker = read_marker(&comment.body)?;
    let ours = match marker.project {
        Some(project) => project == prefix,
        None => belongs_to_project(&comment.path, prefix),
    };
    ours.then_some(marker.fingerprint)
}

fn belongs_to_project(path: &str, prefix: &str) -> bool {
    prefix.is_empty()
        || path
            .strip_prefix(prefix)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// This project's fingerprints that already have a comment in an unresolved thread.
fn open_markers<'a>(existing: &Existing<'a>) -> BTreeSet<&'a str> {
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
        .filter_map(|comment| own_fingerprint(comment, existing.prefix))
        .collect()
}

fn cleanups(existing: &Existing<'_>, current: &BTreeSet<&str>) -> Vec<Cleanup> {
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
        .filter(|comment| marker_fingerprint(&comment.body).is_none())
        .filter_map(|comment| comment.in_reply_to_id)
        .collect();
    let mut cleanups = Vec::new();
    for comment in existing.comments {
        let Some(fingerprint) = own_fingerprint(comment, existing.prefix) else {
            continue;
        };
        if current.contains(fingerprint) {
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
    use crate::github::anchor::Side;
    use crate::rules::{RuleId, Severity};

    fn anchored(case: &str, anchor: Anchor) -> Anchored {
        let finding = Finding::new(RuleId::CaseEditedInPlace, Subject::case("s", case), "m")
            .at(Location::line("f.jsonl", 1));
        Anchored { finding, anchor }
    }

    fn line(path: &str) -> Anchor {
        Anchor::Lines {
            path: path.to_owned(),
            side: Side::Right,
            start_line: 1,
            line: 1,
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
                super::super::body::fingerprint_marker(&item.finding.fingerprint, "")
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
            .map(|index| anchored(&format!("c{index:02}"), line("f.jsonl")))
            .collect();
        items[34].finding.severity = Severity::Refuse;
        for item in items.iter_mut().take(34) {
            item.finding.severity = Severity::Warn;
        }
        let plan = plan(items, &nothing(), MAX_INLINE_COMMENTS);
        assert_eq!(plan.inline.len(), 30);
        assert_eq!(plan.overflow.len(), 5);
        assert_eq!(plan.inline[0].finding.subject.case.as_deref(), Some("c34"));
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
            anchored("c", line("f.jsonl")),
            anchored("d", line("f.jsonl")),
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
        let plan = plan(vec![still, anchored("new", line("f.jsonl"))], &existing, 30);
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
            super::super::body::fingerprint_marker(&item.finding.fingerprint, project)
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
}
