//! What the baseline files may hold and where: a file with a key twice is refused with
//! the line of the second (EL402), and `accept` writes every suite's file or none.

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

fn temporary_files_in(repo: &TestRepo, dir: &str) -> Vec<String> {
    std::fs::read_dir(repo.join(dir))
        .unwrap()
        .filter_map(|entry| entry.ok())
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with(".evalock-tmp"))
        .collect()
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
