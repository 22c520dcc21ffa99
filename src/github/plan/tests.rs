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

/// A finding joins the place of an open comment. The open comment holds its slot (the cap
/// is on open comments), so the merged comment that replaces it can always take it;
/// with no slot at all the open comment stays, not resolved, and the newcomer is listed
/// as over the limit. A more severe new finding does not displace an open comment: it
/// waits in the summary for a freed slot.
#[test]
fn an_open_comment_stays_when_the_comment_replacing_it_is_over_the_cap() {
    let mut old = anchored("old", line_at("f.jsonl", 5));
    let mut joined = unlocked("joined", line_at("f.jsonl", 5));
    old.finding.severity = Severity::Warn;
    joined.finding.severity = Severity::Warn;
    let mut first = anchored("first", line_at("f.jsonl", 1));
    first.finding.severity = Severity::Refuse;
    let comments = vec![comment(1, "f.jsonl", Some(&old), None)];
    let threads = vec![ReviewThread {
        id: "T1".into(),
        is_resolved: false,
        first_comment_id: Some(1),
    }];
    let existing = Existing {
        comments: &comments,
        threads: Some(&threads),
        prefix: "",
    };
    let items = vec![old.clone(), joined.clone(), first.clone()];
    let fingerprints = |comments: &[Comment]| -> Vec<Vec<String>> {
        comments
            .iter()
            .map(|comment| {
                comment
                    .findings
                    .iter()
                    .map(|finding| finding.fingerprint.clone())
                    .collect()
            })
            .collect()
    };
    let none = plan(items.clone(), &existing, 0);
    assert_eq!(
        none.cleanups,
        Vec::new(),
        "the open comment is not resolved"
    );
    assert!(none.inline.is_empty());
    assert_eq!(
        fingerprints(&none.already_posted),
        vec![vec![old.finding.fingerprint.clone()]]
    );
    let listed: Vec<&str> = none
        .summary_findings()
        .map(|item| item.finding.fingerprint.as_str())
        .collect();
    assert_eq!(
        listed,
        vec![
            first.finding.fingerprint.as_str(),
            joined.finding.fingerprint.as_str()
        ]
    );
    assert_eq!(none.overflow.len(), 2, "listed as over the comment limit");
    assert_eq!(none.commented_findings(), 1);

    let one = plan(items.clone(), &existing, 1);
    assert_eq!(
        one.cleanups,
        vec![Cleanup::Resolve {
            comment_id: 1,
            thread_id: "T1".into()
        }]
    );
    assert_eq!(one.inline.len(), 1);
    assert_eq!(
        one.inline[0].findings.len(),
        2,
        "the merged comment takes the old one's slot"
    );
    let listed: Vec<&str> = one
        .summary_findings()
        .map(|item| item.finding.fingerprint.as_str())
        .collect();
    assert_eq!(listed, vec![first.finding.fingerprint.as_str()]);

    let room = plan(items, &existing, 2);
    assert_eq!(room.inline.len(), 2);
    assert_eq!(room.inline[1].findings.len(), 2, "the merged comment");
    assert!(room.already_posted.is_empty());
    assert_eq!(room.summary_findings().count(), 0);
}

/// Two open comments whose findings now share one place, over the cap: both stay, and
/// nothing is listed, since every finding still has its comment. A comment that shows a
/// finding that is gone is replaced even over the cap: it would show what is not there.
#[test]
fn over_the_cap_open_comments_stay_only_while_their_findings_are_all_there() {
    let a = anchored("a", line_at("f.jsonl", 5));
    let b = unlocked("b", line_at("f.jsonl", 5));
    let gone = anchored("gone", line_at("f.jsonl", 5));
    let comments = vec![
        comment(1, "f.jsonl", Some(&a), None),
        comment(2, "f.jsonl", Some(&b), None),
        shared_comment(3, &[&a, &gone]),
    ];
    let existing = Existing {
        comments: &comments,
        threads: None,
        prefix: "",
    };
    let full = plan(vec![a.clone(), b.clone()], &existing, 0);
    assert_eq!(full.already_posted.len(), 2);
    assert_eq!(full.summary_findings().count(), 0);
    assert_eq!(full.cleanups, vec![Cleanup::Delete { comment_id: 3 }]);
}
