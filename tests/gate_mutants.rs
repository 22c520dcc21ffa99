//! Tests written to kill mutants that cargo-mutants found surviving in the gate logic
//! (see README, "Hardening"). Each names the mutant it kills.

mod common;

use common::TestRepo;

/// Kills `src/checks/mod.rs: replace drop_superseded with ()`: a case removed vs the base
/// is reported once, as EL103, not also as EL101 "missing from the lock's file".
#[test]
fn a_removed_case_is_reported_as_removed_only() {
    let repo = TestRepo::with_fixture("demo");
    let cases = repo.read("evals/support.jsonl");
    let kept: String = cases
        .lines()
        .filter(|line| !line.contains("\"refund-no-order-id\""))
        .map(|line| format!("{line}\n"))
        .collect();
    assert_ne!(kept, cases);
    repo.write("evals/support.jsonl", kept);
    let run = repo.evalock(&["check", "--base", "HEAD"]);
    run.assert_code(2).assert_contains("EL103");
    let mentions: Vec<&str> = run
        .stdout
        .lines()
        .filter(|line| line.contains("refund-no-order-id") && line.contains(": EL"))
        .collect();
    assert_eq!(mentions.len(), 1, "reported more than once: {mentions:#?}");
    assert!(mentions[0].contains("EL103"), "{mentions:#?}");
}

/// Kills `src/checks/cases/against_lock.rs: replace || with && in cases_unlocked` (the
/// `file` clause): a case moved unchanged to another file of its suite keeps its digest
/// but must be re-locked, since the lock records where it lives.
#[test]
fn a_case_moved_to_another_file_of_its_suite_must_be_relocked() {
    let repo = TestRepo::with_fixture("demo");
    let cases = repo.read("evals/escalation.yaml");
    let start = cases
        .find("- id: simple-question-stays")
        .expect("fixture case");
    let end = cases[start..]
        .find("\n\n")
        .map_or(cases.len(), |offset| start + offset + 1);
    repo.write(
        "evals/escalation.yaml",
        format!("{}{}", &cases[..start], &cases[end..]),
    );
    repo.write("evals/escalation-more.yaml", &cases[start..end]);
    repo.evalock(&["check"])
        .assert_code(2)
        .assert_contains("EL101")
        .assert_contains("case `simple-question-stays` (evals/escalation-more.yaml:1) moved or changed its lock metadata");
}

/// Kills `src/checks/cases/against_lock.rs: replace || with && in cases_unlocked` (the
/// `version` clause): a lock whose recorded version was edited by hand no longer matches
/// the case, even though the digest does.
#[test]
fn a_hand_edited_version_in_the_lock_is_refused() {
    let repo = TestRepo::with_fixture("demo");
    repo.replace(
        "evalock.lock",
        "[case.escalation.angry-customer-escalates]\nversion = 1\n",
        "[case.escalation.angry-customer-escalates]\nversion = 2\n",
    );
    repo.evalock(&["check"])
        .assert_code(2)
        .assert_contains("case `angry-customer-escalates`")
        .assert_contains("moved or changed its lock metadata");
}

/// Kills `src/checks/cases/against_lock.rs: replace && with || in cases_unlocked` (the
/// guard that tells an edit in place from a new version): an edited case whose version
/// was bumped is a new version to lock, not an edit in place.
#[test]
fn an_edit_with_a_bumped_version_asks_only_for_a_relock() {
    let repo = TestRepo::with_fixture("demo");
    repo.replace(
        "evals/support.jsonl",
        r#""id": "refund-no-order-id", "version": 3"#,
        r#""id": "refund-no-order-id", "version": 4, "note": "stricter""#,
    );
    repo.evalock(&["check"])
        .assert_code(2)
        .assert_contains("case `refund-no-order-id` (evals/support.jsonl:2) changed: version 3 in evalock.lock, 4 now")
        .assert_not_contains("still version");
}

/// A retired case stays in its file: deleting it, even re-locked, is a removal (EL103)
/// against the base, so its id cannot come back later with another contract.
#[test]
fn deleting_an_already_retired_case_is_a_removal() {
    let repo = TestRepo::with_fixture("demo");
    let cases = repo.read("evals/support.jsonl");
    let kept: String = cases
        .lines()
        .filter(|line| !line.contains("\"legacy-greeting\""))
        .map(|line| format!("{line}\n"))
        .collect();
    assert_ne!(kept, cases);
    repo.write("evals/support.jsonl", kept);
    repo.evalock(&["lock"]).assert_code(0);
    repo.evalock(&["check"]).assert_code(0);
    repo.evalock(&["check", "--base", "HEAD"])
        .assert_code(2)
        .assert_contains("EL103")
        .assert_contains(
            "retired case `legacy-greeting` (version 1, evals/support.jsonl) was deleted",
        );
}

/// One bad byte in a case file is one EL105 finding at its line, not every other case of
/// the file reported missing (EL101) or removed (EL103) because the file did not load.
#[test]
fn a_file_that_does_not_load_is_malformed_not_emptied() {
    let repo = TestRepo::with_fixture("demo");
    let cases = repo.read("evals/support.jsonl");
    let mut lines: Vec<String> = cases.lines().map(str::to_owned).collect();
    lines[4].push('\r');
    repo.write("evals/support.jsonl", lines.join("\n") + "\n");
    for args in [&["check"][..], &["check", "--base", "HEAD"]] {
        repo.evalock(args)
            .assert_code(2)
            .assert_contains("evals/support.jsonl:5:")
            .assert_contains("EL105")
            .assert_not_contains("EL101")
            .assert_not_contains("EL103");
    }
    // A case really deleted from a file that loads is still reported both ways.
    let without_first: String = cases
        .lines()
        .skip(1)
        .map(|line| format!("{line}\n"))
        .collect();
    repo.write("evals/support.jsonl", without_first);
    repo.evalock(&["check"])
        .assert_code(2)
        .assert_contains("EL101");
    repo.evalock(&["check", "--base", "HEAD"])
        .assert_code(2)
        .assert_contains("EL103");
}

/// Kills `src/checks/cases/against_lock.rs: delete match arm (None, _) in
/// prompts_unlocked`: a prompt file that disappeared is refused, not silently skipped.
#[test]
fn a_missing_prompt_file_is_refused() {
    let repo = TestRepo::with_fixture("demo");
    repo.remove("prompts/support.txt");
    repo.evalock(&["check"])
        .assert_code(2)
        .assert_contains("prompts/support.txt: EL107")
        .assert_contains(
            "prompt file prompts/support.txt of suite `support` is missing (or is a symlink)",
        );
}

/// Kills `src/checks/cases/against_lock.rs: delete match arm (Some(_), None) in
/// prompts_unlocked`: a suite pointed at a new prompt file must pin it, and the old pin
/// is reported too.
#[test]
fn a_new_prompt_file_must_be_locked() {
    let repo = TestRepo::with_fixture("demo");
    repo.write(
        "prompts/support-v2.txt",
        "You are Acme's support agent, version two.\n",
    );
    repo.replace(
        "evalock.toml",
        "prompt = \"prompts/support.txt\"",
        "prompt = \"prompts/support-v2.txt\"",
    );
    repo.evalock(&["check"])
        .assert_code(2)
        .assert_contains(
            "prompt file prompts/support-v2.txt of suite `support` is not in evalock.lock",
        )
        .assert_contains(
            "prompt prompts/support.txt is pinned for suite `support` but no longer configured",
        );
}
