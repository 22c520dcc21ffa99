//! `run --completions` reading the results of other runners as they write them: the real
//! promptfoo (installed from npm by the README's test command) run offline with its
//! `echo` provider, and the real inspect_ai (from PyPI) run offline with its mock model.
//! Each result is matched to its case by the suite's identity rule, then graded,
//! baselined and gated by evalock.

mod common;

use common::{manifest_dir, TestRepo};
use std::path::PathBuf;
use std::process::Command;

fn promptfoo() -> PathBuf {
    let binary = manifest_dir().join("tests/npm/node_modules/.bin/promptfoo");
    assert!(
        binary.exists(),
        "promptfoo is not installed: run the README's test command, which runs `npm ci --prefix tests/npm`"
    );
    binary
}

/// `promptfoo eval` in the repository, offline: no telemetry, update check, cache or
/// sharing, its database in the repository's `.promptfoo`.
fn promptfoo_eval(repo: &TestRepo, out: &str) {
    let output = Command::new(promptfoo())
        .args([
            "eval",
            "-c",
            "promptfooconfig.yaml",
            "-o",
            out,
            "--no-cache",
            "--no-table",
        ])
        .current_dir(repo.path())
        .env("PROMPTFOO_DISABLE_TELEMETRY", "1")
        .env("PROMPTFOO_DISABLE_UPDATE", "1")
        .env("PROMPTFOO_DISABLE_SHARING", "1")
        .env("PROMPTFOO_CONFIG_DIR", repo.join(".promptfoo"))
        .output()
        .expect("promptfoo starts");
    // promptfoo exits 100 when a test fails: its output file is written all the same.
    assert!(
        repo.join(out).exists(),
        "promptfoo eval wrote no {out}: {}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// The promptfoo fixture answered by `echo`, which returns the rendered prompt: the
/// prompt file is rewritten so that each test's assertions hold on the echo.
fn promptfoo_project() -> TestRepo {
    let repo = TestRepo::with_fixture("promptfoo");
    repo.replace("promptfooconfig.yaml", "  - openai:gpt-4o-mini", "  - echo");
    repo.write(
        "prompts/support.txt",
        "Order, return and refund desk (password, canada). Context: {{context}} {{policy}} Question: {{question}}\n",
    );
    repo.write(".gitignore", ".promptfoo/\n");
    repo.evalock(&["init"]).assert_code(0);
    repo.evalock(&["lock"]).assert_code(0);
    repo.commit_all("adopt evalock");
    repo
}

#[test]
fn promptfoo_output_is_graded_baselined_and_gated_by_the_lock_s_identity() {
    let repo = promptfoo_project();
    promptfoo_eval(&repo, "out.json");
    let run = repo.evalock(&["run", "--completions", "out.json"]);
    run.assert_code(0).assert_contains("4 cases: 4 PASS");
    repo.evalock(&["accept", "--reason", "first promptfoo run"])
        .assert_code(0);
    repo.commit_all("baselines");
    repo.evalock(&["check"]).assert_code(0);

    // The prompt now says what every test (its `defaultTest`) forbids: promptfoo's next
    // output regresses.
    repo.write(
        "prompts/support.txt",
        "As an AI, I answer for the order, return and refund desk (password, canada). Context: {{context}} {{policy}} Question: {{question}}\n",
    );
    repo.evalock(&["lock"]).assert_code(0);
    promptfoo_eval(&repo, "next.json");
    repo.evalock(&["run", "--completions", "next.json"])
        .assert_code(1)
        .assert_contains("EL501")
        .assert_contains("not-icontains");
}

#[test]
fn a_promptfoo_result_for_a_test_evalock_does_not_lock_is_refused_at_its_place() {
    let repo = promptfoo_project();
    promptfoo_eval(&repo, "out.json");
    // The test's question is reworded after promptfoo ran: its logged vars are no case.
    repo.replace(
        "promptfooconfig.yaml",
        "question: Where is my order 1234?",
        "question: Where is my order 1235?",
    );
    repo.evalock(&["lock"]).assert_code(0);
    repo.evalock(&["run", "--completions", "out.json"])
        .assert_code(65)
        .assert_contains("out.json: results.results[")
        .assert_contains("promptfoo result matches no case: suite `promptfooconfig` (the content of `vars`) would call it `sha256:");
}

fn python_with_inspect() -> &'static str {
    let found = Command::new("python3")
        .args(["-c", "import inspect_ai"])
        .status()
        .is_ok_and(|status| status.success());
    assert!(
        found,
        "inspect_ai is not installed: run the README's test command, which installs tests/requirements.txt"
    );
    "python3"
}

/// Runs a task of the inspect fixture on the mock model; the path of its JSON log.
fn inspect_eval(repo: &TestRepo, task: &str, epochs: u32) -> String {
    let output = Command::new(python_with_inspect())
        .args(["run_mock.py", task, "logs", &epochs.to_string()])
        .current_dir(repo.path())
        .env("INSPECT_DISPLAY", "none")
        .output()
        .expect("python3 starts");
    assert!(
        output.status.success(),
        "inspect eval {task}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let path = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    assert!(path.ends_with(".json"), "{path}");
    path
}

/// `evalock run --suite SUITE --completions LOG --out OUT` in the repository.
fn run_log(repo: &TestRepo, suite: &str, log: &str, out: &str) -> common::Run {
    repo.evalock(&["run", "--suite", suite, "--completions", log, "--out", out])
}

fn inspect_project() -> TestRepo {
    let repo = TestRepo::with_fixture("inspect");
    repo.write(".gitignore", "logs/\n__pycache__/\n");
    repo.evalock(&["init"]).assert_code(0);
    // Samples with ids get the built-in grader from init; these are inspect's.
    repo.replace(
        "evalock.toml",
        "cases = [\"data/capitals.jsonl\"]\n",
        "cases = [\"data/capitals.jsonl\"]\ngrader = \"inspect-includes\"\n",
    );
    repo.evalock(&["lock"]).assert_code(0);
    repo.commit_all("adopt evalock");
    repo
}

#[test]
fn inspect_logs_are_matched_by_content_or_by_id_and_gated() {
    let repo = inspect_project();
    assert!(repo
        .read("evalock.toml")
        .contains("id = { content = [\"input\"] }"));
    // Samples without ids, one with a chat-message input, over two epochs: by `input`.
    let arithmetic = inspect_eval(&repo, "arithmetic", 2);
    run_log(&repo, "arithmetic", &arithmetic, "a.json")
        .assert_code(0)
        .assert_contains("3 cases: 3 PASS");
    // Samples with ids: by `id`.
    let capitals = inspect_eval(&repo, "capitals", 1);
    run_log(&repo, "capitals", &capitals, "c.json")
        .assert_code(0)
        .assert_contains("2 cases: 2 PASS");
    for results in ["a.json", "c.json"] {
        repo.evalock(&["accept", "--from", results, "--reason", "first inspect run"])
            .assert_code(0);
    }
    repo.commit_all("baselines");
    repo.evalock(&["check"]).assert_code(0);

    // The model gets one capital wrong: the next log regresses against last-good.
    repo.replace("answers.json", "\"Berlin.\"", "\"Bonn.\"");
    let capitals = inspect_eval(&repo, "capitals", 1);
    run_log(&repo, "capitals", &capitals, "c.json")
        .assert_code(1)
        .assert_contains("EL501")
        .assert_contains("capital-de");
}

#[test]
fn an_inspect_log_of_samples_evalock_does_not_lock_is_refused() {
    let repo = inspect_project();
    let arithmetic = inspect_eval(&repo, "arithmetic", 1);
    // The dataset changed after inspect ran: the logged inputs are no locked case.
    repo.replace("data/arithmetic.jsonl", "What is 2 + 2?", "What is 2 + 3?");
    repo.evalock(&["lock"]).assert_code(0);
    repo.evalock(&["run", "--suite", "arithmetic", "--completions", &arithmetic])
        .assert_code(65)
        .assert_contains(": samples[0]")
        .assert_contains("inspect_ai result matches no case");
    // A log written in inspect's default `.eval` format is named for what it is.
    repo.write("logs/run.eval", b"PK\x03\x04not json");
    repo.evalock(&["run", "--completions", "logs/run.eval"])
        .assert_code(65)
        .assert_contains("inspect log convert --to json");
}
