//! `evalock github` end to end: a real git repository with a pull request branch, the
//! built binary, and a fake GitHub that validates every request against GitHub's
//! vendored API descriptions.

mod common;
use std::collections::BTreeSet;
mod github_support;

use evalock::finding::{Finding, Location, RelatedKind, Subject};
use evalock::rules::{RuleId, Severity};
use github_support::scenario::{
    comment_with, in_project, run_findings, shows_rule, writes, Scenario, PROJECT, SKILL_SCRIPT,
};
use github_support::{READ_ONLY_TOKEN, WRITE_TOKEN};

#[test]
fn the_review_anchors_each_finding_is_idempotent_and_cleans_up_after_a_fix() {
    let mut scenario = Scenario::new();
    scenario.check().assert_code(2);
    let check_report = scenario.path("check.json");
    let run_report = scenario.write_report("run.json", run_findings());

    let first = scenario.github(WRITE_TOKEN, &[&check_report, &run_report], &[]);
    first
        .assert_code(0)
        .assert_contains("summary comment created");
    let reviews = scenario.github.with(|state| state.reviews.clone());
    assert_eq!(reviews.len(), 1, "one review per run");
    assert_eq!(reviews[0].event, "COMMENT");
    let comments = scenario.github.review_comments();

    // (a) the edited case, on its own line.
    let edited = comment_with(&comments, "EL102");
    assert_eq!(
        (edited.path.as_str(), edited.line, edited.start_line),
        ("ai/evals/support.jsonl", Some(3), None)
    );
    assert!(
        edited.body.contains("**Fix:**") && edited.body.contains("<!-- evalock:fp="),
        "{}",
        edited.body
    );
    // Its fix is one line the diff shows: offered as a change to commit with one click,
    // the line as it is with `version` bumped from 1 to 2, and nothing else.
    let edited_line = scenario
        .repo
        .read("ai/evals/support.jsonl")
        .lines()
        .nth(2)
        .expect("line 3")
        .to_owned();
    let suggested = edited_line.replace("\"version\": 1,", "\"version\": 2,");
    assert_ne!(suggested, edited_line);
    assert!(
        edited
            .body
            .contains(&format!("```suggestion\n{suggested}\n```\n")),
        "{}",
        edited.body
    );
    assert_eq!(edited.body.matches("```suggestion").count(), 1);
    // (b) the regression of an unchanged case, on the prompt hunk that caused it.
    let regressed = comment_with(&comments, "EL501");
    assert_eq!(
        (regressed.path.as_str(), regressed.line),
        ("ai/prompts/support.txt", Some(5))
    );
    assert!(
        regressed
            .body
            .contains("```diff\n-{\"status\": \"need_order_id\"}"),
        "{}",
        regressed.body
    );
    assert!(regressed.body.contains(
        "case `no-invented-tracking` of suite `support` (`evals/support.jsonl:4`) did not change"
    ));
    // (c) the risky line of the skill.
    let risky = comment_with(&comments, "EL206");
    assert_eq!((risky.path.as_str(), risky.line), (SKILL_SCRIPT, Some(3)));
    // The prompt change itself, on the changed prompt line.
    let prompt = comment_with(&comments, "EL107");
    assert_eq!(
        (prompt.path.as_str(), prompt.line),
        ("ai/prompts/support.txt", Some(5))
    );
    // (e) an unchanged line of a changed file: a file-level comment.
    let drift = comment_with(&comments, "EL302");
    assert_eq!(
        (drift.path.as_str(), drift.subject_type.as_str(), drift.line),
        ("ai/evals/support.jsonl", "file", None)
    );
    assert!(
        drift
            .body
            .contains("At `evals/support.jsonl:11`, outside the lines this pull request changes."),
        "{}",
        drift.body
    );
    // Not on a line of the diff: no suggestion, whatever the finding.
    for comment in comments.iter().filter(|comment| comment.id != edited.id) {
        assert!(!comment.body.contains("```suggestion"), "{}", comment.body);
    }
    // (d) outside the diff: only in the summary.
    assert!(!comments
        .iter()
        .any(|comment| comment.body.contains("EL404")));
    let summaries = scenario.github.with(|state| state.issue_comments.clone());
    assert_eq!(summaries.len(), 1);
    assert!(
        summaries[0].body.contains("## ❌ evalock: BLOCK"),
        "{}",
        summaries[0].body
    );
    assert!(
        summaries[0]
            .body
            .contains("**EL404 baseline-missing** (warn) `ai/evals/escalation.yaml:2`"),
        "{}",
        summaries[0].body
    );
    assert!(summaries[0].body.contains("| support |"));

    // Run twice: nothing new is posted, nothing is edited.
    scenario.github.clear_log();
    let second = scenario.github(WRITE_TOKEN, &[&check_report, &run_report], &[]);
    second
        .assert_code(0)
        .assert_contains("summary comment unchanged");
    assert_eq!(writes(&scenario.github), Vec::<String>::new());
    assert_eq!(scenario.github.review_comments().len(), comments.len());

    // The edited case's two findings, EL102 and EL101, share its line: one comment.
    assert_eq!(comment_with(&comments, "EL101").id, edited.id);

    // A person replies to the risky line's comment; then (a) is fixed, and the risky line
    // is no longer reported.
    scenario.github.human_reply(risky.id, "Why is this needed?");
    scenario.repo.replace(
        "ai/evals/support.jsonl",
        "Please refund order 7731-QX",
        "Please refund order 7731-QT",
    );
    scenario.push("restore the case");
    scenario.check().assert_code(2);
    let mut fixed_run = run_findings();
    fixed_run.retain(|finding| finding.rule != RuleId::SkillRiskyContent);
    let fixed_run_report = scenario.write_report("run-fixed.json", fixed_run);
    scenario.github.clear_log();
    let third = scenario.github(WRITE_TOKEN, &[&check_report, &fixed_run_report], &[]);
    third
        .assert_code(0)
        .assert_contains("resolved 1")
        .assert_contains("left 1 with replies");
    assert!(
        scenario
            .github
            .thread_of(edited.id)
            .expect("thread")
            .resolved,
        "the fixed findings' thread is resolved"
    );
    assert!(
        !scenario
            .github
            .thread_of(risky.id)
            .expect("thread")
            .resolved,
        "a thread with a human reply is left alone"
    );
    assert!(
        !scenario
            .github
            .thread_of(regressed.id)
            .expect("thread")
            .resolved
    );
    assert_eq!(
        scenario.github.with(|state| state.reviews.len()),
        1,
        "nothing new to review"
    );
    let summaries = scenario.github.with(|state| state.issue_comments.clone());
    assert_eq!(summaries.len(), 1, "the summary is edited in place");
    assert!(summaries[0].body.contains(&scenario.head_sha[..12]));
    assert!(writes(&scenario.github)
        .iter()
        .any(|write| write.contains("issues/update-comment")));
}

#[test]
fn a_read_only_token_falls_back_to_annotations_and_the_step_summary() {
    let scenario = Scenario::new();
    let gate = scenario.check();
    gate.assert_code(2);
    let check_report = scenario.path("check.json");
    let run_report = scenario.write_report("run.json", run_findings());
    let run = scenario.github(READ_ONLY_TOKEN, &[&check_report, &run_report], &[]);
    run.assert_code(0)
        .assert_contains(
            "::error file=ai/evals/support.jsonl,line=3,title=EL102 case-edited-in-place::",
        )
        .assert_contains("::error file=ai/prompts/support.txt")
        .assert_contains("read-only token")
        .assert_contains("not posted");
    assert!(
        run.stdout
            .lines()
            .filter(|line| line.starts_with("::error "))
            .count()
            <= 10
    );
    let step_summary =
        std::fs::read_to_string(scenario.path("step-summary.md")).expect("step summary written");
    assert!(
        step_summary.contains(": BLOCK")
            && step_summary.contains("EL206")
            && step_summary
                .contains("_evalock did not post to the pull request: the token may not write"),
        "{step_summary}"
    );
    assert!(step_summary.len() < 1024 * 1024);
    // The action writes the same job summary before posting: it is not written twice.
    scenario
        .github(READ_ONLY_TOKEN, &[&check_report, &run_report], &[])
        .assert_code(0);
    let step_summary =
        std::fs::read_to_string(scenario.path("step-summary.md")).expect("step summary");
    assert_eq!(
        step_summary.matches(": BLOCK\n").count(),
        1,
        "{step_summary}"
    );
    assert_eq!(step_summary.matches("_evalock did not post").count(), 2);
    assert!(scenario
        .github
        .with(|state| state.reviews.is_empty() && state.issue_comments.is_empty()));
    assert!(
        scenario
            .github
            .log()
            .iter()
            .any(|logged| logged.status == 403),
        "the write was refused by GitHub"
    );
}

/// The skill's script grows to 42 lines, room for many findings on lines of their own.
fn push_a_longer_script(scenario: &mut Scenario) {
    let many_lines: String = (1..=40)
        .map(|index| format!("echo step {index}\n"))
        .collect();
    scenario.repo.write(
        SKILL_SCRIPT,
        format!("#!/bin/sh\ngit log --oneline -20\n{many_lines}"),
    );
    scenario.push("a longer script");
}

#[test]
fn thirty_five_findings_make_thirty_comments_and_five_summary_lines() {
    let mut scenario = Scenario::new();
    push_a_longer_script(&mut scenario);
    let findings: Vec<Finding> = (0..35)
        .map(|index| {
            Finding::new(
                RuleId::SkillRiskyContent,
                Subject::skill("release-notes"),
                format!("risky step {index}"),
            )
            .at(Location::line(
                "skills/release-notes/scripts/collect.sh",
                7 + index,
            ))
            .discriminator(&format!("step-{index}"))
        })
        .collect();
    // One of them spans several added lines: a multi-line comment inside one hunk.
    let mut findings = findings;
    // It ends above the others' lines: findings that end on one line share a comment.
    findings[0].location = Some(Location::span(
        "skills/release-notes/scripts/collect.sh",
        3,
        6,
    ));
    let report = scenario.write_report("many.json", findings);
    scenario
        .github(WRITE_TOKEN, &[&report], &[])
        .assert_code(0)
        .assert_contains("posted 30 inline");
    let comments = scenario.github.review_comments();
    assert_eq!(comments.len(), 30);
    let spanning = comments
        .iter()
        .find(|comment| comment.body.contains("risky step 0\n"))
        .expect("step 0 is inline");
    assert_eq!((spanning.start_line, spanning.line), (Some(3), Some(6)));
    assert!(
        comments
            .iter()
            .filter(|comment| comment.start_line.is_some())
            .count()
            == 1,
        "start_line only for ranges"
    );
    let summary = scenario
        .github
        .with(|state| state.issue_comments[0].body.clone());
    assert!(summary.contains("### Not shown inline (5)"), "{summary}");
    assert_eq!(summary.matches("_(over the comment limit)_").count(), 5);
}

/// A risky step of the long script, `line` lines in.
fn risky_step(line: u32, what: &str, severity: Severity) -> Finding {
    let mut finding = Finding::new(
        RuleId::SkillRiskyContent,
        Subject::skill("release-notes"),
        format!("risky {what}"),
    )
    .at(Location::line(
        "skills/release-notes/scripts/collect.sh",
        line,
    ))
    .discriminator(what);
    finding.severity = severity;
    finding
}

/// A finding joins the line of an open comment while `others` new findings elsewhere,
/// more severe, come first: the comment's id, and the scenario after the second run.
fn a_finding_joins_an_open_comment(others: u32) -> (Scenario, u64) {
    let mut scenario = Scenario::new();
    push_a_longer_script(&mut scenario);
    let old = risky_step(41, "old step", Severity::Warn);
    let first = scenario.write_report("first.json", vec![old.clone()]);
    scenario.github(WRITE_TOKEN, &[&first], &[]).assert_code(0);
    let comments = scenario.github.review_comments();
    assert_eq!(comments.len(), 1, "{comments:#?}");
    let mut findings = vec![old, risky_step(41, "joined step", Severity::Warn)];
    findings.extend(
        (0..others)
            .map(|index| risky_step(7 + index, &format!("other step {index}"), Severity::Error)),
    );
    let second = scenario.write_report("second.json", findings);
    scenario.github(WRITE_TOKEN, &[&second], &[]).assert_code(0);
    (scenario, comments[0].id)
}

/// A finding joins the line of an open comment: the comment that shows both replaces the
/// old one, which held its slot, so it posts even when more severe findings fill the
/// rest of the cap. The cap is on open comments: 30 at most, the old one resolved.
#[test]
fn a_comment_that_replaces_an_open_one_takes_its_slot() {
    for others in [30, 29] {
        let (scenario, old) = a_finding_joins_an_open_comment(others);
        assert!(scenario.github.thread_of(old).expect("thread").resolved);
        let comments = scenario.github.review_comments();
        let open: Vec<_> = comments
            .iter()
            .filter(|comment| {
                !scenario
                    .github
                    .thread_of(comment.id)
                    .is_some_and(|thread| thread.resolved)
            })
            .collect();
        assert_eq!(open.len(), 30, "{others} others");
        let merged = comments
            .iter()
            .find(|comment| comment.id != old && comment.line == Some(41))
            .unwrap_or_else(|| panic!("a comment showing both: {comments:#?}"));
        assert!(
            merged.body.contains("risky old step") && merged.body.contains("risky joined step"),
            "{}",
            merged.body
        );
        let summary = scenario
            .github
            .with(|state| state.issue_comments[0].body.clone());
        if others == 30 {
            assert!(summary.contains("### Not shown inline (1)"), "{summary}");
            assert!(
                summary.contains("_(over the comment limit)_: risky other step 29"),
                "{summary}"
            );
        } else {
            assert!(!summary.contains("Not shown inline"), "{summary}");
        }
        assert!(scenario.github.violations().is_empty());
    }
}

/// The cap holds per pull request, not per run: 400 findings make 30 comments; a re-run
/// with the same findings posts nothing new; when findings are fixed their comments
/// resolve and the freed slots go to the most severe findings still in the summary.
#[test]
fn the_comment_cap_holds_for_the_pull_request_across_runs() {
    let mut scenario = Scenario::new();
    let many_lines: String = (1..=420)
        .map(|index| format!("echo step {index}\n"))
        .collect();
    scenario.repo.write(
        SKILL_SCRIPT,
        format!("#!/bin/sh\ngit log --oneline -20\n{many_lines}"),
    );
    scenario.push("a script of 420 steps");
    let step = |index: u32| {
        // The first 100 are errors, the rest warnings: errors get the slots first.
        let severity = if index < 100 {
            Severity::Error
        } else {
            Severity::Warn
        };
        risky_step(7 + index, &format!("step {index}"), severity)
    };
    let all: Vec<Finding> = (0..400).map(step).collect();
    let open_count = |scenario: &Scenario| {
        let comments = scenario.github.review_comments();
        comments
            .iter()
            .filter(|comment| {
                !scenario
                    .github
                    .thread_of(comment.id)
                    .is_some_and(|thread| thread.resolved)
            })
            .count()
    };
    let first = scenario.write_report("run1.json", all.clone());
    scenario.github(WRITE_TOKEN, &[&first], &[]).assert_code(0);
    assert_eq!(scenario.github.review_comments().len(), 30);
    let commented: Vec<u64> = scenario
        .github
        .review_comments()
        .iter()
        .filter_map(|comment| comment.line)
        .collect();
    assert!(
        commented.iter().all(|line| *line < 7 + 100),
        "errors first: {commented:?}"
    );

    // The same findings again: nothing new is posted.
    let again = scenario.write_report("run2.json", all.clone());
    scenario.github(WRITE_TOKEN, &[&again], &[]).assert_code(0);
    assert_eq!(scenario.github.review_comments().len(), 30);
    assert_eq!(open_count(&scenario), 30);

    // Ten of the commented findings are fixed: their comments resolve, and ten of the
    // errors that waited in the summary take the freed slots.
    let fixed: BTreeSet<u64> = commented.iter().take(10).copied().collect();
    let remaining: Vec<Finding> = all
        .iter()
        .filter(|finding| {
            !fixed.contains(&u64::from(finding.location.as_ref().unwrap().line.unwrap()))
        })
        .cloned()
        .collect();
    let third = scenario.write_report("run3.json", remaining.clone());
    scenario.github(WRITE_TOKEN, &[&third], &[]).assert_code(0);
    assert_eq!(scenario.github.review_comments().len(), 40);
    assert_eq!(open_count(&scenario), 30);
    let newest: Vec<u64> = scenario.github.review_comments()[30..]
        .iter()
        .filter_map(|comment| comment.line)
        .collect();
    assert!(
        newest.iter().all(|line| *line < 7 + 100),
        "errors take the slots: {newest:?}"
    );
    let summary = scenario
        .github
        .with(|state| state.issue_comments[0].body.clone());
    assert!(summary.contains("### Not shown inline (360)"), "{summary}");

    // And a fourth run of the same: still nothing new.
    let fourth = scenario.write_report("run4.json", remaining);
    scenario.github(WRITE_TOKEN, &[&fourth], &[]).assert_code(0);
    assert_eq!(scenario.github.review_comments().len(), 40);
    assert!(scenario.github.violations().is_empty());
}

#[test]
fn a_diff_too_large_for_the_api_is_read_from_git() {
    let scenario = Scenario::new();
    scenario.check();
    scenario.github.with(|state| state.diff_too_large = true);
    let run = scenario.github(WRITE_TOKEN, &[&scenario.path("check.json")], &[]);
    run.assert_code(0).assert_contains("HTTP 406");
    let comments = scenario.github.review_comments();
    assert_eq!(comment_with(&comments, "EL102").line, Some(3));
}

/// GitHub refuses a review whose comments are off its diff (422). Here the diff it serves
/// lacks the prompt and skill files, while git's diff, which evalock reads when the API
/// cannot serve one, has them: the review is refused and its findings go to the summary,
/// listed as refused rather than as over the comment limit.
#[test]
fn findings_of_a_review_github_refuses_are_in_the_summary_with_the_reason() {
    let scenario = Scenario::new();
    scenario.check();
    scenario.github.with(|state| {
        state.diff_too_large = true;
        let only_cases = state
            .diff
            .split("diff --git ")
            .filter(|file| file.starts_with("a/ai/evals/"))
            .map(|file| format!("diff --git {file}"))
            .collect::<String>();
        assert!(only_cases.contains("support.jsonl"), "{only_cases}");
        state.diff = only_cases;
    });
    scenario
        .github(WRITE_TOKEN, &[&scenario.path("check.json")], &[])
        .assert_code(0)
        .assert_contains("GitHub rejected the review, so its findings are in the summary instead");
    assert!(scenario.github.review_comments().is_empty());
    let summary = scenario
        .github
        .with(|state| state.issue_comments[0].body.clone());
    assert!(summary.contains("### Not shown inline"), "{summary}");
    assert!(summary.contains("EL102"), "{summary}");
    assert!(!summary.contains("over the comment limit"), "{summary}");
}

#[test]
fn server_errors_and_secondary_rate_limits_are_retried() {
    let scenario = Scenario::new();
    let report = scenario.write_report("run.json", run_findings());
    scenario.github.with(|state| {
        state.injected_failures = vec![
            (502, None, "Server Error".into()),
            (403, Some(1), "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.".into()),
            (503, None, "Service Unavailable".into()),
        ];
    });
    scenario
        .github(WRITE_TOKEN, &[&report], &[])
        .assert_code(0)
        .assert_contains("summary comment created");
    let statuses: Vec<u16> = scenario
        .github
        .log()
        .iter()
        .map(|logged| logged.status)
        .take(4)
        .collect();
    assert_eq!(statuses, vec![502, 403, 503, 200]);
    assert_eq!(
        scenario.github.review_comments().len(),
        3,
        "EL501 on the prompt, EL206 on the script, EL302 on its file"
    );
}

#[test]
fn when_github_keeps_failing_the_run_still_exits_zero_and_says_why() {
    let scenario = Scenario::new();
    let report = scenario.write_report("run.json", run_findings());
    scenario
        .github
        .with(|state| state.injected_failures = vec![(500, None, "boom".into()); 4]);
    let run = scenario.github(WRITE_TOKEN, &[&report], &[]);
    run.assert_code(0)
        .assert_contains("could not post to the pull request")
        .assert_contains("HTTP 500");
    // Annotations point at the findings' own lines: GitHub shows them on any line of a file.
    run.assert_contains("::error file=ai/evals/support.jsonl,line=4")
        .assert_contains("::error file=ai/skills/release-notes/scripts/collect.sh,line=3");
}

#[test]
fn summaries_and_comments_are_found_on_later_pages() {
    let scenario = Scenario::new();
    let report = scenario.write_report("run.json", run_findings());
    scenario.github(WRITE_TOKEN, &[&report], &[]).assert_code(0);
    // Bury evalock's comments under more than a page of other people's comments.
    scenario.github.with(|state| {
        let summary = state.issue_comments.remove(0);
        for index in 0..150 {
            let id = state.new_id();
            state.issue_comments.push(github_support::IssueComment {
                id,
                body: format!("comment {index}"),
                user: "octocat".into(),
            });
        }
        state.issue_comments.push(summary);
        let ours = std::mem::take(&mut state.review_comments);
        let template = ours[0].clone();
        for index in 0..120 {
            let id = state.new_id();
            state.review_comments.push(github_support::ReviewComment {
                id,
                body: format!("note {index}"),
                user: "octocat".into(),
                review_id: None,
                ..template.clone()
            });
        }
        state.review_comments.extend(ours);
    });
    scenario.github.clear_log();
    scenario
        .github(WRITE_TOKEN, &[&report], &[])
        .assert_code(0)
        .assert_contains("summary comment unchanged");
    assert_eq!(
        writes(&scenario.github),
        Vec::<String>::new(),
        "found on page 2, nothing reposted"
    );
    assert!(
        scenario
            .github
            .log()
            .iter()
            .filter(|logged| logged.operation == "issues/list-comments")
            .count()
            >= 2
    );
}

#[test]
fn outside_a_pull_request_or_without_a_token_it_annotates_and_exits_zero() {
    let scenario = Scenario::new();
    let report = scenario.write_report("run.json", run_findings());
    let push = scenario.github(WRITE_TOKEN, &[&report], &[("GITHUB_EVENT_NAME", "push")]);
    push.assert_code(0)
        .assert_contains("`push` event is not a pull request")
        .assert_contains("::error file=ai/evals/support.jsonl,line=4");
    let no_token = scenario.github("", &[&report], &[]);
    no_token
        .assert_code(0)
        .assert_contains("no token in $GITHUB_TOKEN")
        .assert_contains("::warning file=ai/evals/escalation.yaml");
    let annotations = scenario.github(
        WRITE_TOKEN,
        &[&report],
        &[
            ("EVALOCK_COMMENT_MODE", "annotations"),
            ("GITHUB_EVENT_NAME", "pull_request_target"),
        ],
    );
    annotations
        .assert_code(0)
        .assert_contains("annotations mode")
        .assert_contains("::error file=ai/skills/release-notes/scripts/collect.sh,line=3");
    assert!(
        scenario.github.log().is_empty(),
        "no API call without a pull request or a token, or in annotations mode"
    );
}

/// The fake must reject what GitHub rejects, or the tests above prove nothing.
#[test]
fn the_fake_github_rejects_what_github_rejects() {
    let scenario = Scenario::new();
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let (owner, repo, number) = scenario
        .github
        .with(|state| (state.owner.clone(), state.repo.clone(), state.number));
    let url = format!(
        "{}/repos/{owner}/{repo}/pulls/{number}/reviews",
        scenario.github.api_url()
    );
    let post = |body: serde_json::Value| {
        let mut response = agent
            .post(&url)
            .header("Authorization", &format!("Bearer {WRITE_TOKEN}"))
            .content_type("application/json")
            .send(body.to_string().as_bytes())
            .expect("request");
        (
            response.status().as_u16(),
            response.body_mut().read_to_string().unwrap_or_default(),
        )
    };
    let comment = |path: &str, line: u32| serde_json::json!({ "path": path, "line": line, "side": "RIGHT", "body": "x" });
    let review = |comments: Vec<serde_json::Value>| serde_json::json!({ "commit_id": scenario.head_sha, "body": "b", "event": "COMMENT", "comments": comments });
    // One comment off the diff rejects the whole review.
    let (status, body) = post(review(vec![
        comment(SKILL_SCRIPT, 3),
        comment("ai/evals/escalation.yaml", 2),
    ]));
    assert_eq!(status, 422);
    assert!(
        body.contains("Pull request review thread line must be part of the diff"),
        "{body}"
    );
    assert!(
        scenario.github.review_comments().is_empty(),
        "nothing of a rejected review is kept"
    );
    // A body of 65,536 characters is too long.
    let mut long = comment(SKILL_SCRIPT, 3);
    long["body"] = serde_json::json!("x".repeat(65_536));
    assert_eq!(post(review(vec![long])).0, 422);
    // So is one of 32,768 emoji: 65,536 UTF-16 units, if fewer characters.
    let mut emoji = comment(SKILL_SCRIPT, 3);
    emoji["body"] = serde_json::json!("\u{1F600}".repeat(32_768));
    assert_eq!(post(review(vec![emoji])).0, 422);
    assert_eq!(post(review(vec![comment(SKILL_SCRIPT, 3)])).0, 200);
    // LEFT numbers the old version and takes the lines the change removed: the edited
    // case's old line 3, not its unchanged neighbour on line 2.
    let left = |line: u32| serde_json::json!({ "path": "ai/evals/support.jsonl", "line": line, "side": "LEFT", "body": "x" });
    assert_eq!(post(review(vec![left(2)])).0, 422);
    assert_eq!(post(review(vec![left(3)])).0, 200);
    assert!(scenario.github.violations().is_empty());
    // A property GitHub does not know, or a wrong type, is a schema violation.
    let mut unknown = comment(SKILL_SCRIPT, 3);
    unknown["subject_type"] = serde_json::json!("file");
    assert_eq!(post(review(vec![unknown])).0, 400);
    let mut wrong_type = review(Vec::new());
    wrong_type["event"] = serde_json::json!("SHOUT");
    assert_eq!(post(wrong_type).0, 400);
    let violations = scenario.github.violations();
    assert!(
        violations
            .iter()
            .any(|violation| violation.contains("`subject_type` is not a property")),
        "{violations:?}"
    );
    assert!(
        violations
            .iter()
            .any(|violation| violation.contains("\"SHOUT\" is not one of")),
        "{violations:?}"
    );
}

#[test]
fn a_report_that_cannot_be_read_is_a_malformed_input_error() {
    let scenario = Scenario::new();
    std::fs::write(scenario.path("bad.json"), "{\"schema\": ").expect("write");
    let run = scenario.github(WRITE_TOKEN, &[&scenario.path("bad.json")], &[]);
    run.assert_code(65).assert_contains("bad.json:1:");
    let missing = scenario.github(WRITE_TOKEN, &[&scenario.path("missing.json")], &[]);
    missing
        .assert_code(64)
        .assert_contains("missing.json: no such file");
    assert!(
        scenario.github.log().is_empty(),
        "nothing is posted from a bad report"
    );
}

#[test]
fn a_report_with_repository_paths_is_placed_the_same() {
    // `evalock report --path-prefix` writes repository-relative paths; the prefix is
    // then not added a second time.
    let scenario = Scenario::new();
    let report = scenario.write_prefixed_report("prefixed.json", run_findings(), "ai");
    scenario.github(WRITE_TOKEN, &[&report], &[]).assert_code(0);
    let comments = scenario.github.review_comments();
    assert_eq!(comment_with(&comments, "EL206").path, SKILL_SCRIPT);
    assert_eq!(
        comment_with(&comments, "EL501").path,
        "ai/prompts/support.txt"
    );
    let summary = scenario
        .github
        .with(|state| state.issue_comments[0].body.clone());
    assert!(
        summary.contains("`ai/evals/escalation.yaml:2`"),
        "{summary}"
    );
}

/// A fork's pull request: the untrusted job saved its reports and the event payload; a
/// trusted job on `workflow_run` posts them with `--event`, and only when the payload's
/// head is the commit that run checked out.
#[test]
fn a_trusted_workflow_run_job_posts_the_reports_of_a_forks_run() {
    let scenario = Scenario::new();
    let report = scenario.write_report("run.json", run_findings());
    let event: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(scenario.path("event.json")).unwrap())
            .unwrap();
    let head = event["pull_request"]["head"]["sha"]
        .as_str()
        .unwrap()
        .to_owned();
    let forged = scenario.github_from_workflow_run(WRITE_TOKEN, &[&report], &"0".repeat(40));
    forged
        .assert_code(0)
        .assert_contains("refusing to post about another commit");
    assert!(scenario.github.review_comments().is_empty());
    assert!(scenario
        .github
        .with(|state| state.issue_comments.is_empty()));
    scenario
        .github_from_workflow_run(WRITE_TOKEN, &[&report], &head)
        .assert_code(0);
    assert!(!scenario.github.review_comments().is_empty());
    assert!(scenario.github.violations().is_empty());
}

#[test]
fn summary_mode_posts_only_the_sticky_summary() {
    let scenario = Scenario::new();
    let report = scenario.write_report("run.json", run_findings());
    scenario
        .github(
            WRITE_TOKEN,
            &[&report],
            &[("EVALOCK_COMMENT_MODE", "summary")],
        )
        .assert_code(0);
    assert!(scenario.github.review_comments().is_empty());
    let summary = scenario
        .github
        .with(|state| state.issue_comments[0].body.clone());
    assert!(summary.contains("### Not shown inline (4)"), "{summary}");
    let diff_requests = scenario
        .github
        .log()
        .iter()
        .filter(|logged| logged.operation == "pulls/get")
        .count();
    assert_eq!(diff_requests, 0, "no diff needed for a summary");
}

#[test]
fn the_sticky_summary_charts_the_pass_rate_trend_the_report_carries() {
    use evalock::report::trend::{SuiteTrend, Trend};
    let scenario = Scenario::new();
    let mut report =
        evalock::report::Report::new("run", "working tree".into(), None, run_findings());
    report.trend = Some(Box::new(Trend {
        points: vec!["1a2b3c4".into(), "this run".into()],
        suites: std::collections::BTreeMap::from([(
            "support".to_owned(),
            SuiteTrend {
                rates: vec![Some(100.0), Some(81.8)],
                strata: std::collections::BTreeMap::new(),
            },
        )]),
    }));
    let path = scenario.path("trend.json");
    std::fs::write(&path, evalock::report::json::render(&report)).unwrap();
    scenario
        .github(
            WRITE_TOKEN,
            &[&path],
            &[("EVALOCK_COMMENT_MODE", "summary")],
        )
        .assert_code(0);
    let summary = scenario
        .github
        .with(|state| state.issue_comments[0].body.clone());
    assert!(
        summary.contains("```mermaid\nxychart-beta\n    title \"support: pass rate (%)\"\n    x-axis [\"1a2b3c4\", \"this run\"]"),
        "{summary}"
    );
    // A report without a trend draws none.
    let scenario = Scenario::new();
    let plain = scenario.write_report("run.json", run_findings());
    scenario
        .github(
            WRITE_TOKEN,
            &[&plain],
            &[("EVALOCK_COMMENT_MODE", "summary")],
        )
        .assert_code(0);
    let summary = scenario
        .github
        .with(|state| state.issue_comments[0].body.clone());
    assert!(!summary.contains("```mermaid"), "{summary}");
}

#[test]
fn projects_sharing_a_repository_keep_to_their_own_comments() {
    // The demo at the top, nested in it (`ai/`), and beside that (`ml/`): the same suites
    // and cases, so the same fingerprints, in three projects of one pull request.
    let projects = [".", PROJECT, "ml"];
    let mut scenario = Scenario::with_projects(&projects);
    let report_of = |project: &str| format!("check-{}.json", project.replace('.', "top"));
    let check_all = |scenario: &Scenario| {
        for project in projects {
            scenario
                .check_in(project, &report_of(project))
                .assert_code(2);
        }
    };
    let github_in = |scenario: &Scenario, project: &str| {
        let run = scenario.github_in(
            project,
            WRITE_TOKEN,
            &[&scenario.path(&report_of(project))],
            &[],
        );
        run.assert_code(0);
        run
    };
    check_all(&scenario);
    for project in projects {
        github_in(&scenario, project).assert_contains("summary comment created");
    }
    let comments = scenario.github.review_comments();
    let edited_case_of = |project: &str| {
        let path = in_project(project, "evals/support.jsonl");
        comments
            .iter()
            .find(|comment| comment.path == path && shows_rule(comment, "EL102"))
            .unwrap_or_else(|| panic!("no EL102 comment on {path}: {comments:#?}"))
            .id
    };
    let edited: Vec<u64> = projects
        .iter()
        .map(|project| edited_case_of(project))
        .collect();
    let on_top: Vec<_> = comments
        .iter()
        .filter(|comment| !comment.path.starts_with("ai/") && !comment.path.starts_with("ml/"))
        .collect();
    assert_eq!(comments.len(), 3 * on_top.len(), "{comments:#?}");

    // Run again, in each: nothing new, nothing cleaned up.
    scenario.github.clear_log();
    for project in projects {
        github_in(&scenario, project).assert_contains("summary comment unchanged");
    }
    assert_eq!(writes(&scenario.github), Vec::<String>::new());

    // The project at the top fixes its case: only its own threads are resolved.
    scenario.repo.replace(
        "evals/support.jsonl",
        "Please refund order 7731-QX",
        "Please refund order 7731-QT",
    );
    scenario.push("restore the case at the top");
    check_all(&scenario);
    github_in(&scenario, ".").assert_contains("resolved ");
    let resolved: Vec<String> = scenario.github.with(|state| {
        state
            .threads
            .iter()
            .filter(|thread| thread.resolved)
            .filter_map(|thread| {
                state
                    .review_comments
                    .iter()
                    .find(|comment| comment.id == thread.first_comment)
                    .map(|comment| comment.path.clone())
            })
            .collect()
    });
    assert!(
        !resolved.is_empty() && resolved.iter().all(|path| path == "evals/support.jsonl"),
        "{resolved:?}"
    );
    assert!(
        scenario
            .github
            .thread_of(edited[0])
            .expect("thread")
            .resolved
    );
    for id in &edited[1..] {
        assert!(!scenario.github.thread_of(*id).expect("thread").resolved);
    }
    scenario.github.clear_log();
    for project in &projects[1..] {
        github_in(&scenario, project).assert_contains("posted 0 inline");
    }
    assert!(
        writes(&scenario.github)
            .iter()
            .all(|write| write.contains("issues/update-comment")),
        "only the summaries change (the head moved): {:?}",
        writes(&scenario.github)
    );
}

#[test]
fn a_prefixed_report_on_a_file_the_pull_request_deletes_is_prefixed_once() {
    // The action prefixes its report (`evalock report --path-prefix`) and writes the job
    // summary before `evalock github` runs; the file is only at the merge base.
    let mut scenario = Scenario::new();
    scenario.repo.remove("ai/evals/escalation.yaml");
    scenario.push("delete the escalation cases");
    let removed = Finding::new(
        RuleId::CaseRemoved,
        Subject::case("escalation", "angry-customer-escalates"),
        "case `angry-customer-escalates` (version 1, evals/escalation.yaml) was removed instead of retired",
    )
    .at(Location::file("evals/escalation.yaml"))
    // As `evalock check --base` reports it: where the case stood at the base.
    .related(RelatedKind::Base, Location::span("evals/escalation.yaml", 2, 11));
    let report = scenario.write_prefixed_report("prefixed.json", vec![removed], "ai");
    let markdown = scenario.repo.evalock(&[
        "report",
        "--from",
        report.to_str().expect("utf-8"),
        "--format",
        "markdown",
    ]);
    markdown.assert_code(0);
    std::fs::write(scenario.path("step-summary.md"), &markdown.stdout).expect("step summary");

    let fallback = scenario.github(READ_ONLY_TOKEN, &[&report], &[]);
    fallback
        .assert_code(0)
        .assert_contains("::error file=ai/evals/escalation.yaml,title=EL103")
        .assert_not_contains("ai/ai/");
    let step_summary =
        std::fs::read_to_string(scenario.path("step-summary.md")).expect("step summary");
    assert_eq!(
        step_summary.matches(&markdown.stdout).count(),
        1,
        "the job summary is not written twice:\n{step_summary}"
    );
    assert!(!step_summary.contains("ai/ai/"), "{step_summary}");

    scenario
        .github(WRITE_TOKEN, &[&report], &[])
        .assert_code(0)
        .assert_contains("summary comment created");
    let summary = scenario
        .github
        .with(|state| state.issue_comments[0].body.clone());
    assert!(!summary.contains("ai/ai/"), "{summary}");
    // The case stood on lines 2-11 at the merge base: shown there, on the removed side.
    let removed = comment_with(&scenario.github.review_comments(), "EL103").clone();
    assert_eq!(
        (
            removed.path.as_str(),
            removed.side.as_deref(),
            removed.start_line
        ),
        ("ai/evals/escalation.yaml", Some("LEFT"), Some(2)),
        "{removed:#?}"
    );
}

/// Case ids and messages are the pull request author's text, posted as the bot: on
/// GitHub they must stay text (no team mention, no image, no extra table row).
#[test]
fn untrusted_case_ids_are_escaped_in_comments_and_the_summary() {
    let scenario = Scenario::new();
    let mention = "x` @octo-org/everyone <img src=x> `y";
    let row = "z\n| injected | row |";
    let findings = vec![
        Finding::new(
            RuleId::CaseEditedInPlace,
            Subject::case("support", mention),
            format!("case `{mention}` (evals/support.jsonl:3) was edited in place"),
        )
        .at(Location::line("evals/support.jsonl", 3)),
        Finding::new(
            RuleId::BaselineMissing,
            Subject::case("escalation", row),
            format!("case `{row}` has no baseline yet @octocat"),
        )
        .at(Location::span("evals/escalation.yaml", 2, 11)),
    ];
    let report = scenario.write_report("untrusted.json", findings);
    scenario.github(WRITE_TOKEN, &[&report], &[]).assert_code(0);
    let comments = scenario.github.review_comments();
    let edited = comment_with(&comments, "EL102");
    assert!(
        edited.body.contains(
            "case `x` @\u{200B}octo-org/everyone \\<img src=x\\> `y` (evals/support.jsonl:3)"
        ),
        "{}",
        edited.body
    );
    let summary = scenario
        .github
        .with(|state| state.issue_comments[0].body.clone());
    assert!(!summary.contains("\n| injected"), "{summary}");
    assert!(
        summary.contains("| escalation | 0 | 0 | 1 | 0 | `z \\| injected \\| row \\|` (EL404) |"),
        "{summary}"
    );
    assert!(
        summary.contains("has no baseline yet @\u{200B}octocat\n"),
        "{summary}"
    );
}

#[test]
fn a_removed_case_is_shown_where_it_was_removed_not_on_another_case() {
    // One case of a file is edited, a later one of several lines is deleted.
    let mut scenario = Scenario::new();
    let cases = "ai/evals/escalation.yaml";
    scenario.repo.replace(
        cases,
        "This is the third time my order is late.",
        "This is the fourth time my order is late.",
    );
    let text = scenario.repo.read(cases);
    scenario
        .repo
        .write(cases, without_the_legal_threat_case(&text));
    scenario.push("edit one escalation case, delete another");
    scenario.check().assert_code(2);
    scenario
        .github(WRITE_TOKEN, &[&scenario.path("check.json")], &[])
        .assert_code(0);
    let comments = scenario.github.review_comments();
    let edited = comment_with(&comments, "EL102");
    let removed = comment_with(&comments, "EL103");
    assert!(
        removed.body.contains("legal-threat-escalates"),
        "{}",
        removed.body
    );
    assert_eq!(
        (removed.path.as_str(), removed.line),
        (cases, line_after_the_removed_case(&scenario, cases)),
        "on the line that took the removed case's place, not on the edit at line {:?}",
        edited.line
    );
}

#[test]
fn a_secondary_rate_limit_that_outlasts_the_retries_is_not_called_a_read_only_token() {
    let scenario = Scenario::new();
    let report = scenario.write_report("run.json", run_findings());
    let limited =
        "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.";
    scenario
        .github
        .with(|state| state.injected_failures = vec![(403, Some(1), limited.into()); 4]);
    let run = scenario.github(WRITE_TOKEN, &[&report], &[]);
    run.assert_code(0)
        .assert_contains("could not post to the pull request: GitHub's rate limit was still in force after retrying; re-run the job in a few minutes")
        .assert_contains("HTTP 403 You have exceeded a secondary rate limit")
        .assert_not_contains("read-only token")
        .assert_contains("::error file=ai/evals/support.jsonl,line=4");
    let step_summary =
        std::fs::read_to_string(scenario.path("step-summary.md")).expect("step summary");
    assert!(
        step_summary.contains("_evalock did not post to the pull request: GitHub's rate limit"),
        "{step_summary}"
    );
}

/// GraphQL answers a spent rate limit with 200 and a `RATE_LIMITED` error. The review goes
/// on over REST: the outdated comment is deleted instead of resolved, and the note names the
/// rate limit rather than calling threads unavailable for no reason given.
#[test]
fn a_spent_graphql_rate_limit_is_named_and_outdated_comments_are_deleted() {
    let mut scenario = Scenario::new();
    scenario.check().assert_code(2);
    let check_report = scenario.path("check.json");
    scenario
        .github(WRITE_TOKEN, &[&check_report], &[])
        .assert_code(0);
    let edited = comment_with(&scenario.github.review_comments(), "EL102").id;
    scenario.repo.replace(
        "ai/evals/support.jsonl",
        "Please refund order 7731-QX",
        "Please refund order 7731-QT",
    );
    scenario.push("restore the case");
    scenario.check().assert_code(2);
    scenario
        .github
        .with(|state| state.graphql_rate_limited = true);
    scenario
        .github(WRITE_TOKEN, &[&check_report], &[])
        .assert_code(0)
        .assert_contains("GitHub's GraphQL rate limit is spent, so outdated comments are deleted instead of resolved")
        .assert_contains("API rate limit exceeded for user ID 1.")
        .assert_not_contains("review threads are unavailable");
    assert!(
        !scenario
            .github
            .review_comments()
            .iter()
            .any(|comment| comment.id == edited),
        "the fixed finding's comment is deleted"
    );
}

/// The lines a comment's suggestion block puts in place of its line, if it has one.
fn suggested_lines(comment: &github_support::ReviewComment) -> Option<String> {
    let start = comment.body.find("```suggestion\n")? + "```suggestion\n".len();
    let end = start + comment.body[start..].find("\n```")?;
    Some(comment.body[start..end].to_owned())
}

/// What GitHub's **Commit suggestion** does: the commented line of the new side replaced
/// by the suggestion's lines.
fn commit_suggestion(repo: &common::TestRepo, comment: &github_support::ReviewComment) {
    let lines = suggested_lines(comment).expect("a suggestion");
    let path = comment.path.as_str();
    let line = comment.line.expect("a line comment") as usize;
    let text = repo.read(path);
    let mut kept: Vec<&str> = text.lines().collect();
    kept.splice(line - 1..line, [lines.as_str()]);
    repo.write(path, format!("{}\n", kept.join("\n")));
}

/// Cases deleted from JSONL get the click that puts them back retired, where the pull
/// request removed them: two neighbours restored by one suggestion on the line that took
/// their place, and a retired last case restored after the line that now ends the file.
/// Committed, they leave no EL103. A case of several lines (YAML) gets none.
#[test]
fn a_removed_case_gets_the_suggestion_that_puts_it_back_retired() {
    let mut scenario = Scenario::new();
    let cases = "ai/evals/support.jsonl";
    let text = scenario.repo.read(cases);
    let line_of = |id: &str| {
        text.lines()
            .find(|line| line.starts_with(&format!("{{\"id\": \"{id}\"")))
            .expect("case line")
            .to_owned()
    };
    let removed = [
        "cancel-subscription",
        "delete-account-confirm",
        "legacy-greeting",
    ];
    let kept: Vec<&str> = text
        .lines()
        .filter(|line| !removed.iter().any(|id| line.contains(&format!("\"{id}\""))))
        .collect();
    scenario.repo.write(cases, format!("{}\n", kept.join("\n")));
    let yaml = "ai/evals/escalation.yaml";
    let escalation = scenario.repo.read(yaml);
    scenario
        .repo
        .write(yaml, without_the_legal_threat_case(&escalation));
    scenario.push("delete three support cases and an escalation case");
    scenario.check().assert_code(2);
    scenario
        .github(WRITE_TOKEN, &[&scenario.path("check.json")], &[])
        .assert_code(0);
    let comments = scenario.github.review_comments();
    let on_removals: Vec<_> = comments
        .iter()
        .filter(|comment| shows_rule(comment, "EL103") && comment.path == cases)
        .collect();
    assert_eq!(on_removals.len(), 2, "{on_removals:#?}");
    let with_retired = |id: &str| {
        let line = line_of(id);
        let close = line.rfind('}').expect("}");
        format!("{}, \"retired\": true}}", &line[..close])
    };
    // The two neighbours, before the line that took their place.
    let address = kept
        .iter()
        .position(|line| line.contains("\"address-change\""))
        .expect("kept");
    let neighbours = on_removals
        .iter()
        .find(|comment| comment.line == Some(address as u64 + 1))
        .unwrap_or_else(|| panic!("on the line after the removal: {on_removals:#?}"));
    assert_eq!(
        suggested_lines(neighbours),
        Some(format!(
            "{}\n{}\n{}",
            with_retired("cancel-subscription"),
            with_retired("delete-account-confirm"),
            kept[address]
        )),
        "{}",
        neighbours.body
    );
    // The retired last case, as it was, after the line that now ends the file.
    let last = on_removals
        .iter()
        .find(|comment| comment.line == Some(kept.len() as u64))
        .unwrap_or_else(|| panic!("on the last line: {on_removals:#?}"));
    assert_eq!(
        suggested_lines(last),
        Some(format!(
            "{}\n{}",
            kept[kept.len() - 1],
            line_of("legacy-greeting")
        ))
    );
    let on_yaml = comments
        .iter()
        .find(|comment| shows_rule(comment, "EL103") && comment.path == yaml)
        .expect("the YAML removal");
    assert_eq!(suggested_lines(on_yaml), None, "{}", on_yaml.body);

    // Committing both puts every JSONL case back, retired: no EL103 is left for them.
    commit_suggestion(&scenario.repo, last);
    commit_suggestion(&scenario.repo, neighbours);
    scenario.repo.evalock(&["-C", PROJECT, "lock"]);
    scenario.push("commit the suggestions");
    scenario.check();
    let report = std::fs::read_to_string(scenario.path("check.json")).expect("report");
    let report: serde_json::Value = serde_json::from_str(&report).expect("JSON");
    let still_removed: Vec<&str> = report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|finding| finding["rule"] == "EL103")
        .filter_map(|finding| finding["subject"]["case"].as_str())
        .collect();
    assert_eq!(still_removed, vec!["legal-threat-escalates"]);
}

/// A case removed from a file that the pull request also renames is shown where it was
/// removed, in the renamed file, not only in the summary.
#[test]
fn a_case_removed_from_a_renamed_file_is_shown_where_it_was_removed() {
    let mut scenario = Scenario::new();
    let cases = "ai/evals/escalation.yaml";
    let renamed = "ai/evals/escalations.yaml";
    let text = scenario.repo.read(cases);
    scenario.repo.git(&["mv", cases, renamed]);
    scenario
        .repo
        .write(renamed, without_the_legal_threat_case(&text));
    scenario.push("rename the escalation cases, delete one");
    scenario.check().assert_code(2);
    scenario
        .github(WRITE_TOKEN, &[&scenario.path("check.json")], &[])
        .assert_code(0);
    let comments = scenario.github.review_comments();
    let removed = comment_with(&comments, "EL103");
    assert_eq!(
        (removed.path.as_str(), removed.line),
        (renamed, line_after_the_removed_case(&scenario, renamed)),
        "{}",
        removed.body
    );
    // The note says why the comment is on another file's name, and not that the case did
    // not change.
    assert!(
        removed.body.contains(
            "Removed from `ai/evals/escalation.yaml`, which this pull request renamed to this file."
        ) && !removed.body.contains("did not change"),
        "{}",
        removed.body
    );
}

/// `escalation.yaml`'s text without its case `legal-threat-escalates`, which spans
/// several lines.
fn without_the_legal_threat_case(text: &str) -> String {
    let start = text.find("- id: legal-threat-escalates").expect("case");
    let end = text.find("- id: simple-question-stays").expect("next case");
    format!("{}{}", &text[..start], &text[end..])
}

/// The line of `path` where the case after the removed one starts: where a comment on
/// the removal belongs.
fn line_after_the_removed_case(scenario: &Scenario, path: &str) -> Option<u64> {
    let index = scenario
        .repo
        .read(path)
        .lines()
        .position(|line| line == "- id: simple-question-stays")
        .expect("next case");
    Some(index as u64 + 1)
}

/// Cases inserted above an edited case move it down: the comment on the edit follows it to
/// its new line, and the new cases are commented on their own lines.
#[test]
fn an_edited_case_moved_down_by_new_cases_is_commented_on_its_new_line() {
    let mut scenario = Scenario::new();
    let cases = "ai/evals/support.jsonl";
    let text = scenario.repo.read(cases);
    let new_cases =
        "{\"id\": \"new-one\", \"input\": \"hi\"}\n{\"id\": \"new-two\", \"input\": \"hello\"}\n";
    scenario.repo.write(cases, format!("{new_cases}{text}"));
    scenario.push("two new cases on top");
    scenario.check().assert_code(2);
    let run = scenario.github(WRITE_TOKEN, &[&scenario.path("check.json")], &[]);
    run.assert_code(0);
    let comments = scenario.github.review_comments();
    let edited = comment_with(&comments, "EL102");
    let edited_line = scenario
        .repo
        .read(cases)
        .lines()
        .position(|line| line.contains("7731-QX"))
        .map(|index| index as u64 + 1);
    assert_eq!((edited.path.as_str(), edited.line), (cases, edited_line));
    let unlocked: Vec<_> = comments
        .iter()
        .filter(|comment| comment.body.contains("EL101"))
        .map(|comment| (comment.path.as_str(), comment.line))
        .collect();
    assert!(
        unlocked.contains(&(cases, Some(1))),
        "{unlocked:?}\n{}",
        run.all()
    );
    assert!(unlocked.contains(&(cases, Some(2))), "{unlocked:?}");
}

/// A pull request that deletes a whole case file: each removed case is shown on its own
/// removed lines (the LEFT side, numbered as at the merge base), and a second run
/// recognizes those comments instead of posting them again.
#[test]
fn the_cases_of_a_deleted_file_are_shown_on_their_removed_lines() {
    let mut scenario = Scenario::new();
    let cases = "ai/evals/escalation.yaml";
    let base_text = scenario.repo.read(cases);
    scenario.repo.remove(cases);
    scenario.push("delete the escalation cases");
    scenario.check().assert_code(2);
    let report = scenario.path("check.json");
    scenario.github(WRITE_TOKEN, &[&report], &[]).assert_code(0);
    assert!(scenario.github.violations().is_empty());
    let comments = scenario.github.review_comments();
    let removed: Vec<_> = comments
        .iter()
        .filter(|comment| comment.body.contains("EL103"))
        .collect();
    let case_ids = [
        "angry-customer-escalates",
        "legal-threat-escalates",
        "simple-question-stays",
    ];
    assert_eq!(removed.len(), case_ids.len(), "{comments:#?}");
    for id in case_ids {
        let comment = removed
            .iter()
            .find(|comment| comment.body.contains(&format!("`{id}`")))
            .unwrap_or_else(|| panic!("a comment on {id}: {removed:#?}"));
        let first_line = base_text
            .lines()
            .position(|line| line == format!("- id: {id}"))
            .map(|index| index as u64 + 1);
        assert_eq!(
            (
                comment.path.as_str(),
                comment.side.as_deref(),
                comment.start_line.or(comment.line)
            ),
            (cases, Some("LEFT"), first_line),
            "{comment:#?}"
        );
        assert_eq!(comment.start_side.as_deref(), Some("LEFT"));
        // To the case's last line: not into the blank line or the case after it.
        let last_line = comment.line.expect("line") as usize;
        assert!(base_text
            .lines()
            .nth(last_line - 1)
            .is_some_and(|line| !line.is_empty()));
        assert!(base_text
            .lines()
            .nth(last_line)
            .is_none_or(|line| line.is_empty()));
    }

    scenario.github.clear_log();
    scenario
        .github(WRITE_TOKEN, &[&report], &[])
        .assert_code(0)
        .assert_contains("summary comment unchanged");
    assert_eq!(writes(&scenario.github), Vec::<String>::new());
    assert_eq!(scenario.github.review_comments().len(), comments.len());
}

/// A skill file the pull request deletes has nothing left to point at on the new side: a
/// finding about it is a file-level comment on the deleted file, which GitHub shows in the
/// diff. A finding on a file the pull request does not touch stays in the summary.
#[test]
fn a_finding_on_a_deleted_file_is_a_comment_on_that_file() {
    let mut scenario = Scenario::new();
    scenario.repo.remove(SKILL_SCRIPT);
    scenario.push("drop the collect script");
    let missing = |path: &str| {
        Finding::new(
            RuleId::SkillTampered,
            Subject::skill("release-notes"),
            format!("locked skill file {path} is missing"),
        )
        .at(Location::file(path))
    };
    let report = scenario.write_report(
        "deleted.json",
        vec![
            missing("skills/release-notes/scripts/collect.sh"),
            missing("skills/release-notes/scripts/untouched.sh"),
        ],
    );
    scenario.github(WRITE_TOKEN, &[&report], &[]).assert_code(0);
    assert!(
        scenario.github.violations().is_empty(),
        "{:?}",
        scenario.github.violations()
    );
    let comments = scenario.github.review_comments();
    assert_eq!(comments.len(), 1, "{comments:#?}");
    assert_eq!(
        (comments[0].path.as_str(), comments[0].subject_type.as_str()),
        (SKILL_SCRIPT, "file")
    );
    assert!(comments[0].body.contains("EL201"), "{}", comments[0].body);
    let summary = scenario
        .github
        .with(|state| state.issue_comments[0].body.clone());
    assert!(summary.contains("untouched.sh"), "{summary}");
    assert!(
        !summary.contains("scripts/collect.sh is missing"),
        "{summary}"
    );

    scenario.github.clear_log();
    scenario.github(WRITE_TOKEN, &[&report], &[]).assert_code(0);
    assert_eq!(writes(&scenario.github), Vec::<String>::new());
}

/// An edited case has two findings on its line (EL101 and EL102): they share one comment
/// whose marker carries both fingerprints. A re-run posts nothing; when one of the two
/// goes away (the case gets a new version), the comment is replaced by one showing the
/// finding that is left.
#[test]
fn findings_on_one_line_share_a_comment_replaced_when_they_change() {
    let mut scenario = Scenario::new();
    let cases = "ai/evals/support.jsonl";
    scenario.check().assert_code(2);
    let report = scenario.path("check.json");
    scenario.github(WRITE_TOKEN, &[&report], &[]).assert_code(0);
    let comments = scenario.github.review_comments();
    let on_the_edit: Vec<_> = comments
        .iter()
        .filter(|comment| comment.path == cases && comment.line == Some(3))
        .collect();
    assert_eq!(on_the_edit.len(), 1, "{comments:#?}");
    let shared = on_the_edit[0];
    assert!(
        shows_rule(shared, "EL101") && shows_rule(shared, "EL102"),
        "{}",
        shared.body
    );
    let marker = shared
        .body
        .lines()
        .find(|line| line.starts_with("<!-- evalock:fp="))
        .expect("marker");
    assert_eq!(marker.matches(',').count(), 1, "two fingerprints: {marker}");
    assert_eq!(shared.body.matches("<!-- evalock:fp=").count(), 1);
    let review = scenario.github.with(|state| state.reviews[0].body.clone());
    assert!(
        review.contains(" new findings on the changed lines"),
        "{review}"
    );

    scenario.github.clear_log();
    scenario
        .github(WRITE_TOKEN, &[&report], &[])
        .assert_code(0)
        .assert_contains("posted 0 inline and 0 file comment(s)")
        .assert_contains("summary comment unchanged");
    assert_eq!(writes(&scenario.github), Vec::<String>::new());

    // A new version: no longer edited in place, still not locked.
    scenario.repo.replace(
        cases,
        "\"refund-with-order-id\", \"version\": 1",
        "\"refund-with-order-id\", \"version\": 2",
    );
    scenario.push("bump the edited case's version");
    scenario.check().assert_code(2);
    scenario
        .github(WRITE_TOKEN, &[&report], &[])
        .assert_code(0)
        .assert_contains("resolved 1");
    assert!(
        scenario
            .github
            .thread_of(shared.id)
            .expect("thread")
            .resolved,
        "the comment showing both findings is resolved"
    );
    let comments = scenario.github.review_comments();
    let replacement = comments
        .iter()
        .find(|comment| comment.id != shared.id && comment.path == cases && comment.line == Some(3))
        .unwrap_or_else(|| panic!("a new comment on the case: {comments:#?}"));
    assert!(
        shows_rule(replacement, "EL101") && !shows_rule(replacement, "EL102"),
        "{}",
        replacement.body
    );
    // What is left is fixed by `evalock lock`: no line to suggest.
    assert!(
        !replacement.body.contains("```suggestion"),
        "{}",
        replacement.body
    );
    assert!(scenario.github.violations().is_empty());
}

/// A case changed at the version the lock has (EL101, here without a base to call it
/// EL102) carries the same bump as EL102 does; once bumped, the EL101 that asks only for
/// `evalock lock` carries none.
#[test]
fn a_case_changed_at_its_locked_version_is_offered_the_bump() {
    let repo = common::TestRepo::with_fixture("demo");
    let cases = "evals/support.jsonl";
    repo.replace(
        cases,
        "Please refund order 7731-QT",
        "Please refund order 7731-QX",
    );
    let suggestions = |repo: &common::TestRepo| -> Vec<(String, serde_json::Value)> {
        let run = repo.evalock(&["check", "--format", "json"]);
        let report: serde_json::Value = serde_json::from_str(&run.stdout).expect("JSON");
        report["findings"]
            .as_array()
            .expect("findings")
            .iter()
            .filter(|finding| finding["rule"] == "EL101")
            .map(|finding| {
                (
                    finding["message"].to_string(),
                    finding["suggestion"].clone(),
                )
            })
            .collect()
    };
    let line = repo.read(cases).lines().nth(2).expect("line 3").to_owned();
    let bumped = line.replace("\"version\": 1,", "\"version\": 2,");
    assert_ne!(bumped, line);
    assert_eq!(
        suggestions(&repo),
        vec![(
            suggestions(&repo)[0].0.clone(),
            serde_json::json!({"line": 3, "text": bumped})
        )]
    );
    repo.write(cases, repo.read(cases).replace(&line, &bumped));
    let after = suggestions(&repo);
    assert_eq!(after.len(), 1, "{after:?}");
    assert!(
        after[0].0.contains("version 1 in evalock.lock, 2 now"),
        "{after:?}"
    );
    assert_eq!(after[0].1, serde_json::Value::Null);
}
