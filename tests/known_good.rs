//! Positive probes (EL305): a case's known-good completions (`expect_pass`) must pass its
//! grader, the counterpart of EL303 and EL304. A grader stricter than the people who
//! wrote the answers is flagged on the case's line; once the grader accepts them, quiet.

mod common;

use common::TestRepo;

fn project(case: &str) -> TestRepo {
    let repo = TestRepo::new();
    repo.write(
        "evalock.toml",
        "version = 1\n\n[[suite]]\nname = \"support\"\ncases = [\"evals/support.jsonl\"]\n",
    );
    repo.write("evals/support.jsonl", format!("{{\"id\": \"hello\", \"input\": \"hi\", \"expect\": {{\"must_include\": [\"hello\"]}}}}\n{case}\n"));
    repo.evalock(&["lock"]).assert_code(0);
    repo
}

#[test]
fn a_known_good_completion_the_grader_fails_is_flagged_on_the_case() {
    let repo = project(
        r#"{"id": "warranty", "input": "How long is the warranty?", "expect": {"must_include": ["2 years"]}, "expect_pass": [{"completion": "The kettle has a 2 years warranty."}, {"completion": "The warranty lasts two years."}]}"#,
    );
    let check = repo.evalock(&["check"]);
    check
        .assert_code(1)
        .assert_contains("evals/support.jsonl:2: EL305 known-good-rejected (error): grader builtin@1 fails the known-good completion `expect_pass[1]` of case `warranty` (evals/support.jsonl:2)")
        .assert_not_contains("expect_pass[0]");
    // The JSONL fast path and a YAML file read the same.
    let yaml = TestRepo::new();
    yaml.write(
        "evalock.toml",
        "version = 1\n\n[[suite]]\nname = \"support\"\ncases = [\"evals/support.yaml\"]\n",
    );
    yaml.write(
        "evals/support.yaml",
        "- id: warranty\n  input: How long is the warranty?\n  expect:\n    must_include: [2 years]\n  expect_pass:\n    completion: The warranty lasts two years.\n",
    );
    yaml.evalock(&["lock"]).assert_code(0);
    yaml.evalock(&["check"])
        .assert_code(1)
        .assert_contains("evals/support.yaml:1: EL305 known-good-rejected (error)");
}

#[test]
fn known_good_completions_the_grader_accepts_stay_quiet() {
    let repo = project(
        r#"{"id": "warranty", "input": "How long is the warranty?", "expect": {"must_include": ["2 years"]}, "expect_pass": {"completion": "The kettle has a 2 years warranty."}}"#,
    );
    repo.evalock(&["check"])
        .assert_code(0)
        .assert_not_contains("EL305");
}

#[test]
fn an_unreadable_expect_pass_is_named() {
    let repo = project(
        r#"{"id": "warranty", "input": "x", "expect": {"must_include": ["2 years"]}, "expect_pass": [{"text": "2 years"}]}"#,
    );
    repo.evalock(&["check"]).assert_code(1).assert_contains(
        "case `warranty`: cannot read `expect_pass`: each entry needs a `completion`",
    );
}
