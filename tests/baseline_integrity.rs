//! What a change may do to the baseline files, against the base revision and on disk: a
//! deleted entry or file is a re-recording that needs a reason (EL406) unless its case was
//! retired; a re-recording by `evalock accept` is reasoned even when its reason repeats
//! the base's; a file with a key twice is refused with the line of the second (EL402);
//! and `accept` writes every suite's file or none.

mod common;

use common::TestRepo;

/// The demo after its first recording: baselines accepted and committed on `main`.
fn accepted_demo() -> TestRepo {
    let repo = TestRepo::with_fixture("demo");
    repo.write(".gitignore", ".evalock/\n");
    repo.evalock(&["run"]).assert_code(0);
    repo.evalock(&["accept", "--reason", "first recording"])
        .assert_code(0);
    repo.commit_all("record the stub's completions as last-good");
    repo
}

fn use_variant(repo: &TestRepo, variant: &str) {
    repo.replace(
        "evalock.toml",
        "completer = [\"python3\", \"completers/stub.py\"]",
        &format!("completer = [\"python3\", \"completers/stub.py\", \"{variant}\"]"),
    );
}

/// The baseline file without one entry, as a hand would leave it.
fn without_entry(repo: &TestRepo, path: &str, id: &str) -> String {
    let mut value: serde_json::Value = serde_json::from_str(&repo.read(path)).unwrap();
    value["entries"].as_object_mut().unwrap().remove(id);
    format!("{}\n", serde_json::to_string_pretty(&value).unwrap())
}

fn temporary_files_in(repo: &TestRepo, dir: &str) -> Vec<String> {
    std::fs::read_dir(repo.join(dir))
        .unwrap()
        .filter_map(|entry| entry.ok())
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with(".evalock-tmp"))
        .collect()
}

/// Edits one entry of the support suite's baseline by hand, as a person would.
fn edit_support_entry(repo: &TestRepo, id: &str, edit: impl FnOnce(&mut serde_json::Value)) {
    let path = "evals/support.baseline.json";
    let mut baseline: serde_json::Value = serde_json::from_str(&repo.read(path)).unwrap();
    edit(&mut baseline["entries"][id]);
    repo.write(
        path,
        format!("{}\n", serde_json::to_string_pretty(&baseline).unwrap()),
    );
}

#[test]
fn a_deleted_entry_of_an_active_case_needs_a_reason() {
    let repo = accepted_demo();
    repo.git(&["checkout", "-q", "-b", "drop-entry"]);
    // The completion moved: deleting its entry would otherwise slip past --fail-on-diff.
    use_variant(&repo, "moved");
    repo.write(
        "evals/support.baseline.json",
        without_entry(&repo, "evals/support.baseline.json", "warranty-question"),
    );
    repo.commit_all("moved wording");
    repo.evalock(&["run", "--fail-on-diff"])
        .assert_code(0)
        .assert_contains("EL404");
    repo.evalock(&["check", "--base", "main"])
        .assert_code(2)
        .assert_contains("evals/support.baseline.json: EL406 rebaseline-without-reason (refuse): baseline entry `warranty-question` was deleted from evals/support.baseline.json since main (")
        .assert_contains("case `warranty-question` (evals/support.jsonl:9) is still active")
        .assert_contains("fix: record it again: `evalock run --suite support`");
    // A trailer on a commit since the base is a reason.
    repo.git(&[
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "drop it\n\nRebaseline-Reason: warranty wording is re-recorded next",
    ]);
    repo.evalock(&["check", "--base", "main"])
        .assert_code(0)
        .assert_not_contains("EL406");
}

#[test]
fn a_deleted_or_unconfigured_baseline_file_needs_a_reason() {
    let repo = accepted_demo();
    repo.git(&["checkout", "-q", "-b", "drop-file"]);
    repo.git(&["rm", "-q", "evals/escalation.baseline.json"]);
    repo.commit_all("no escalation baseline");
    repo.evalock(&["check", "--base", "main"])
        .assert_code(2)
        .assert_contains("evals/escalation.baseline.json: EL406 rebaseline-without-reason (refuse): baseline evals/escalation.baseline.json of suite `escalation` was deleted since main (")
        .assert_contains("3 active cases (angry-customer-escalates, legal-threat-escalates, simple-question-stays)");
    repo.git(&[
        "checkout",
        "-q",
        "main",
        "--",
        "evals/escalation.baseline.json",
    ]);
    repo.replace(
        "evalock.toml",
        "baseline = \"evals/escalation.baseline.json\"\n",
        "",
    );
    repo.commit_all("escalation without baselines");
    repo.evalock(&["check", "--base", "main"])
        .assert_code(2)
        .assert_contains("of suite `escalation` is no longer configured");
}

#[test]
fn entries_of_retired_cases_go_without_a_reason() {
    let repo = accepted_demo();
    repo.git(&["checkout", "-q", "-b", "retire"]);
    repo.replace(
        "evals/support.jsonl",
        "{\"id\": \"shipping-cost\", \"version\": 1,",
        "{\"id\": \"shipping-cost\", \"version\": 1, \"retired\": true,",
    );
    repo.evalock(&["lock"]).assert_code(0);
    // By hand, as accept would.
    repo.write(
        "evals/support.baseline.json",
        without_entry(&repo, "evals/support.baseline.json", "shipping-cost"),
    );
    repo.commit_all("retire shipping-cost");
    repo.evalock(&["check", "--base", "main"])
        .assert_code(0)
        .assert_not_contains("EL406");
    // And by accept, which drops the entries of retired cases.
    repo.git(&[
        "checkout",
        "-q",
        "main",
        "--",
        "evals/support.baseline.json",
    ]);
    repo.evalock(&["run"]).assert_code(0);
    repo.evalock(&["accept", "--reason", "shipping-cost retired"])
        .assert_code(0)
        .assert_contains("dropped support/shipping-cost");
    repo.commit_all("accept");
    repo.evalock(&["check", "--base", "main"])
        .assert_code(0)
        .assert_contains("PASS (no findings)");
}

#[test]
fn a_re_recording_by_accept_is_reasoned_even_with_the_base_reason() {
    let repo = accepted_demo();
    repo.git(&["checkout", "-q", "-b", "moved"]);
    use_variant(&repo, "moved");
    repo.evalock(&["run", "--fail-on-diff"]).assert_code(3);
    repo.evalock(&["accept", "--reason", "first recording"])
        .assert_code(0)
        .assert_contains("recorded support/warranty-question");
    repo.commit_all("warmer warranty wording");
    repo.evalock(&["check", "--base", "main"])
        .assert_code(0)
        .assert_contains("PASS (no findings)");
}

#[test]
fn a_hand_edit_that_keeps_the_base_reason_is_named_as_one() {
    let repo = accepted_demo();
    repo.git(&["checkout", "-q", "-b", "by-hand"]);
    use_variant(&repo, "moved");
    repo.evalock(&["run"]).assert_code(0);
    // The moved entry copied into the file by hand, with the base's reason and commit.
    let results: serde_json::Value =
        serde_json::from_str(&repo.read(".evalock/results.json")).unwrap();
    let moved = results["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|case| case["case_id"] == "warranty-question")
        .unwrap();
    edit_support_entry(&repo, "warranty-question", |entry| {
        entry["completion"] = moved["completion"].clone();
        entry["digest"] = moved["digest"].clone();
    });
    repo.commit_all("by hand");
    repo.evalock(&["check", "--base", "main"])
        .assert_code(2)
        .assert_contains("EL406 rebaseline-without-reason (refuse): baseline entry `warranty-question` in evals/support.baseline.json changed since main (")
        .assert_contains("it keeps the reason (\"first recording\") and the run commit recorded there, so it was not re-recorded by `evalock accept`")
        .assert_contains(&format!(
            "fix: restore it (`git checkout {} -- evals/support.baseline.json`)",
            repo.git(&["rev-parse", "--short", "main"]).trim()
        ));

    // Only the completion's text edited, its digest left as recorded, and the reason
    // blanked: changed all the same, and said to have no reason.
    repo.git(&[
        "checkout",
        "-q",
        "main",
        "--",
        "evals/support.baseline.json",
    ]);
    edit_support_entry(&repo, "warranty-question", |entry| {
        entry["completion"] = serde_json::Value::String(format!(
            "{} (edited)",
            entry["completion"].as_str().unwrap_or_default()
        ));
        entry["reason"] = serde_json::Value::String(String::new());
    });
    repo.commit_all("the text alone, by hand");
    repo.evalock(&["check", "--base", "main"])
        .assert_code(2)
        .assert_contains("EL406 rebaseline-without-reason (refuse): baseline entry `warranty-question` in evals/support.baseline.json changed since main (")
        .assert_contains(") with no reason recorded");
}

#[test]
fn a_baseline_with_a_key_twice_is_refused_on_the_line_of_the_second() {
    let repo = accepted_demo();
    let text = repo.read("evals/support.baseline.json");
    let key = "    \"warranty-question\": {";
    let start = text.find(key).unwrap();
    let end = text.rfind("\n  }\n}").unwrap();
    // A second entry for the case after the last one; serde alone would keep it.
    let duplicate = text[start..end].replace("Good news", "Bad news");
    let doubled = format!("{},\n{duplicate}{}", &text[..end], &text[end..]);
    let line = doubled[..doubled.rfind(key).unwrap()].matches('\n').count() + 1;
    repo.write("evals/support.baseline.json", &doubled);
    repo.evalock(&["check"])
        .assert_code(2)
        .assert_contains(&format!(
            "evals/support.baseline.json:{line}:5: EL402 baseline-tampered (refuse): baseline evals/support.baseline.json of suite `support` cannot be read: duplicate key `warranty-question`"
        ));
    repo.evalock(&["run", "--suite", "support"])
        .assert_code(2)
        .assert_contains("duplicate key `warranty-question`");
    repo.evalock(&["accept", "--reason", "x"])
        .assert_code(65)
        .assert_contains(&format!(
            "evals/support.baseline.json:{line}:5: duplicate key"
        ));
    // The file as accept writes it, each key once, is clean.
    repo.write("evals/support.baseline.json", &text);
    repo.evalock(&["check"])
        .assert_code(0)
        .assert_contains("PASS (no findings)");
}

#[test]
fn a_directory_in_the_way_of_a_baseline_is_reported_and_accept_writes_nothing() {
    let repo = TestRepo::with_fixture("demo");
    repo.evalock(&["run"]).assert_code(0);
    std::fs::create_dir(repo.join("evals/support.baseline.json")).unwrap();
    repo.evalock(&["run"])
        .assert_code(2)
        .assert_contains("evals/support.baseline.json: EL402 baseline-tampered (refuse): baseline evals/support.baseline.json of suite `support` is a directory, not a file")
        .assert_not_contains("has no baseline in evals/support.baseline.json yet");
    repo.evalock(&["accept", "--reason", "first recording"])
        .assert_code(65)
        .assert_contains("evals/support.baseline.json: a directory is in the way")
        .assert_contains("nothing was written");
    assert!(!repo.join("evals/escalation.baseline.json").exists());
    assert!(temporary_files_in(&repo, "evals").is_empty());
    // Out of the way, accept writes both.
    std::fs::remove_dir(repo.join("evals/support.baseline.json")).unwrap();
    repo.evalock(&["run"]).assert_code(0);
    repo.evalock(&["accept", "--reason", "first recording"])
        .assert_code(0)
        .assert_contains("wrote evals/escalation.baseline.json")
        .assert_contains("wrote evals/support.baseline.json");
}

/// A symlink is never followed, and its target string is not read as the baseline even
/// when it parses as one: on disk, staged and committed it is refused (EL402), and accept
/// writes nothing through it.
#[test]
fn a_symlink_in_place_of_a_baseline_is_refused_even_when_its_target_parses() {
    let repo = accepted_demo();
    let path = "evals/escalation.baseline.json";
    let value: serde_json::Value = serde_json::from_str(&repo.read(path)).unwrap();
    let compact = serde_json::to_string(&value).unwrap();
    repo.remove(path);
    std::os::unix::fs::symlink(&compact, repo.join(path)).unwrap();
    let refused = "evals/escalation.baseline.json: EL402 baseline-tampered (refuse): baseline evals/escalation.baseline.json of suite `escalation` is a symlink";
    repo.evalock(&["check"])
        .assert_code(2)
        .assert_contains(refused);
    repo.git(&["add", "-A"]);
    repo.evalock(&["check", "--staged"])
        .assert_code(2)
        .assert_contains(refused);
    repo.commit_all("a symlink for a baseline");
    repo.evalock(&["check", "--rev", "HEAD"])
        .assert_code(2)
        .assert_contains(refused);
    repo.evalock(&["run", "--suite", "escalation"])
        .assert_code(2);
    repo.evalock(&["accept", "--reason", "again"])
        .assert_code(65)
        .assert_contains("evals/escalation.baseline.json: a symlink stands where")
        .assert_contains("nothing was written");
    assert!(repo.join(path).is_symlink());
}

/// A base whose baseline file cannot be read compares nothing with it: `check --base`
/// says so (EL108, a warning) instead of passing silently.
#[test]
fn a_base_baseline_that_cannot_be_read_is_named_not_silently_skipped() {
    let repo = accepted_demo();
    let path = "evals/escalation.baseline.json";
    let recorded = repo.read(path);
    repo.write(path, "garbage\n");
    repo.commit_all("a broken baseline");
    repo.write(path, recorded);
    repo.commit_all("the baseline repaired");
    repo.evalock(&["check", "--base", "HEAD~1"])
        .assert_code(0)
        .assert_contains("EL108 base-unreadable (warn): baseline evals/escalation.baseline.json of suite `escalation` in the base revision HEAD~1");
    repo.evalock(&["check", "--base", "HEAD"])
        .assert_code(0)
        .assert_not_contains("EL108");
    // A suite the judged side no longer has: its base baseline is still read, to say so.
    let config = repo.read("evalock.toml");
    let start = config
        .find("[[suite]]\nname = \"escalation\"")
        .expect("suite");
    let end = config.find("# A command grader").expect("grader");
    repo.write(
        "evalock.toml",
        format!("{}{}", &config[..start], &config[end..]),
    );
    repo.evalock(&["check", "--base", "HEAD~1"])
        .assert_contains("EL108 base-unreadable (warn): baseline evals/escalation.baseline.json of suite `escalation` in the base revision HEAD~1");
    repo.evalock(&["check", "--base", "HEAD"])
        .assert_not_contains("EL108");
}

#[test]
fn a_file_in_the_way_of_a_baseline_folder_writes_nothing() {
    let repo = TestRepo::with_fixture("demo");
    repo.replace(
        "evalock.toml",
        "baseline = \"evals/support.baseline.json\"",
        "baseline = \"evals/recorded/support.baseline.json\"",
    );
    repo.write("evals/recorded", "not a folder\n");
    repo.evalock(&["run"]).assert_code(0);
    repo.evalock(&["accept", "--reason", "first recording"])
        .assert_code(65)
        .assert_contains("evals/recorded: this is a file, but evals/recorded/support.baseline.json needs it to be a directory");
    assert!(!repo.join("evals/escalation.baseline.json").exists());
    assert!(temporary_files_in(&repo, "evals").is_empty());
}

/// accept serialises itself with a lock file in `.evalock/`: a file named `.evalock` in
/// its way is named with what to do, as `run` names it, not reported as `File exists`.
#[test]
fn a_file_in_the_way_of_accepts_lock_folder_is_named() {
    let repo = TestRepo::with_fixture("demo");
    repo.evalock(&["run", "--out", "results.json"])
        .assert_code(0);
    repo.write(".evalock", "not a folder\n");
    repo.evalock(&[
        "accept",
        "--reason",
        "first recording",
        "--from",
        "results.json",
    ])
    .assert_code(65)
    .assert_contains(
        ".evalock: this is a file, but ./.evalock/accept.lock needs it to be a directory",
    )
    .assert_not_contains("File exists");
    assert!(!repo.join("evals/support.baseline.json").exists());
    // Out of the way, accept writes.
    repo.remove(".evalock");
    repo.evalock(&[
        "accept",
        "--reason",
        "first recording",
        "--from",
        "results.json",
    ])
    .assert_code(0)
    .assert_contains("wrote evals/support.baseline.json");
}
