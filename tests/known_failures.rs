//! A stretch case accepted while failing (`accept --include-failing`) is a known failure:
//! failing the same way again is a note that does not fail the gate, passing again is
//! IMPROVED, and failing any other way blocks.

mod common;

use common::TestRepo;

/// The demo with a stretch case the stub cannot pass: it names Saturday.
fn with_stretch_case() -> TestRepo {
    let repo = TestRepo::with_fixture("demo");
    let cases = repo.read("evals/support.jsonl");
    repo.write(
        "evals/support.jsonl",
        format!(
            "{cases}{}\n",
            r#"{"id": "hours-without-weekend", "stratum": "stretch", "input": {"messages": [{"role": "user", "content": "What are your opening hours?"}]}, "expect": {"json": true, "status_in": ["answered"], "forbidden": ["Saturday"]}}"#
        ),
    );
    repo.evalock(&["lock"]).assert_code(0);
    repo.commit_all("a stretch case");
    repo
}

fn completions(repo: &TestRepo, stretch: &str) {
    // Every support case answered as the stub would, but the stretch case as given.
    repo.evalock(&["run", "--suite", "support", "--out", "stub.json"]);
    let results: serde_json::Value = serde_json::from_str(&repo.read("stub.json")).unwrap();
    let mut lines = String::new();
    for case in results["cases"].as_array().unwrap() {
        let id = case["case_id"].as_str().unwrap();
        let completion = match id {
            "hours-without-weekend" => stretch.to_owned(),
            _ => case["completion"].as_str().unwrap().to_owned(),
        };
        lines.push_str(
            &serde_json::json!({"suite": "support", "case_id": id, "completion": completion})
                .to_string(),
        );
        lines.push('\n');
    }
    repo.write("completions.jsonl", lines);
}

#[test]
fn a_known_failure_is_a_note_until_it_fails_differently() {
    let repo = with_stretch_case();
    let first = repo.evalock(&["run", "--suite", "support"]);
    first
        .assert_code(1)
        .assert_contains("EL502 failing (error): case `hours-without-weekend`");
    // Without --include-failing it is not recorded; with it, it is a known failure.
    repo.evalock(&[
        "accept",
        "--suite",
        "support",
        "--reason",
        "first recording",
    ])
    .assert_code(0);
    repo.evalock(&[
        "accept",
        "--suite",
        "support",
        "--include-failing",
        "--reason",
        "stretch: weekends are not ready",
    ])
    .assert_code(0);
    let baseline = repo.read("evals/support.baseline.json");
    assert!(baseline.contains("\"failure\""), "{baseline}");
    repo.commit_all("accept");
    repo.evalock(&["run", "--suite", "support"])
        .assert_code(0)
        .assert_contains("EL502 failing (note): case `hours-without-weekend`")
        .assert_contains("is a known failure")
        .assert_contains("stretch: weekends are not ready");

    // Failing another way: the reply is no longer an answer at all.
    completions(
        &repo,
        r#"{"status": "refused", "reply": "Closed on Saturday.", "tool_calls": []}"#,
    );
    repo.evalock(&[
        "run",
        "--suite",
        "support",
        "--completions",
        "completions.jsonl",
    ])
    .assert_code(1)
    .assert_contains("EL502 failing (error)")
    .assert_contains("fails differently from its accepted failure");

    // Passing: IMPROVED.
    completions(
        &repo,
        r#"{"status": "answered", "reply": "We are open from 9:00 to 18:00 on weekdays.", "tool_calls": []}"#,
    );
    repo.evalock(&[
        "run",
        "--suite",
        "support",
        "--completions",
        "completions.jsonl",
    ])
    .assert_code(0)
    .assert_contains("EL506 improved");
}
