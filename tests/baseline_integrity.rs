//! What a change may do to the baseline files: a file with a key twice is refused with
//! the line of the second (EL402).

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
