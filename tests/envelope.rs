//! The seeds' envelope walkthrough ("The Completion Matched. The Envelope Did Not."): a
//! case that still passes but grew past its size pin, or slowed past its time pin, over
//! last-good is EL510, named by its channel, and the run says how many cases held every
//! channel. Within the slack, or with a suite's wider `envelope`, it stays quiet.

mod common;

use common::TestRepo;

const COMPLETER: &str = r#"import json, os, sys, time
case = json.loads(sys.stdin.read())
time.sleep(float(os.environ.get("DELAY", "0")))
answer = {"city": "Paris", "country": "France"}
if os.environ.get("VERBOSE"):
    answer["note"] = "Paris is the capital and largest city of France, on the Seine."
print(json.dumps(answer))
"#;

fn project(envelope: &str) -> TestRepo {
    let repo = TestRepo::new();
    repo.write(
        "evalock.toml",
        format!("version = 1\n\n[[suite]]\nname = \"capitals\"\ncases = [\"evals/capitals.jsonl\"]\nbaseline = \"evals/capitals.baseline.json\"\ncompleter = [\"python3\", \"complete.py\"]\nnormalizer = \"json-v1\"\n{envelope}"),
    );
    repo.write(
        "evals/capitals.jsonl",
        "{\"id\": \"capital_json\", \"input\": \"Reply with JSON only: city and country of France's capital.\", \"expect\": {\"required_keys\": [\"city\", \"country\"], \"equals\": {\"city\": \"Paris\"}}}\n",
    );
    repo.write("complete.py", COMPLETER);
    repo.evalock(&["lock"]).assert_code(0);
    repo
}

fn accept(repo: &TestRepo, env: &[(&str, &str)]) {
    repo.evalock_with(&["run"], env).assert_code(0);
    repo.evalock(&["accept", "--reason", "last-good"])
        .assert_code(0);
}

#[test]
fn a_passing_completion_past_its_size_pin_is_named_as_the_size_channel() {
    let repo = project("");
    accept(&repo, &[]);
    repo.evalock(&["run"])
        .assert_code(0)
        .assert_contains("against last-good: 1/1 stable")
        .assert_not_contains("EL510");
    let grown = repo.evalock_with(&["run"], &[("VERBOSE", "1")]);
    grown
        .assert_code(0)
        .assert_contains("evals/capitals.jsonl:1: EL510 envelope-breach (warn): case `capital_json` (evals/capitals.jsonl:1) still passes, but its envelope broke its pin: size ")
        .assert_contains("size 107 chars against 35 at last-good (+206 %, slack 10 %)")
        .assert_contains("slack 10 %)")
        .assert_contains("against last-good: 0/1 stable (size 1)");
    let results = repo.read(".evalock/results.json");
    assert!(
        results.contains("\"envelope\": [\n        \"size\"\n      ]"),
        "{results}"
    );
}

#[test]
fn a_team_that_sets_el510_to_error_fails_the_gate_on_a_breach() {
    let repo = project("\n[rules]\nEL510 = \"error\"\n");
    accept(&repo, &[]);
    repo.evalock_with(&["run"], &[("VERBOSE", "1")])
        .assert_code(1)
        .assert_contains("EL510 envelope-breach (error)");
}

#[test]
fn a_suite_with_a_wider_size_slack_stays_quiet() {
    let repo = project("envelope = { size = 3.0 }\n");
    accept(&repo, &[]);
    repo.evalock_with(&["run"], &[("VERBOSE", "1")])
        .assert_code(0)
        .assert_not_contains("EL510")
        .assert_contains("against last-good: 1/1 stable");
}

#[test]
fn time_is_pinned_where_last_good_took_a_second_and_not_below() {
    let repo = project("");
    accept(&repo, &[("DELAY", "1.0")]);
    repo.evalock_with(&["run"], &[("DELAY", "1.8")])
        .assert_code(0)
        .assert_contains("its envelope broke its pin: time ")
        .assert_contains("against last-good: 0/1 stable (time 1)");
    let quick = project("");
    accept(&quick, &[]);
    quick
        .evalock_with(&["run"], &[("DELAY", "0.5")])
        .assert_code(0)
        .assert_not_contains("EL510");
}

#[test]
fn a_negative_slack_is_refused_with_its_line() {
    let repo = TestRepo::new();
    repo.write(
        "evalock.toml",
        "version = 1\n\n[[suite]]\nname = \"capitals\"\ncases = [\"evals/capitals.jsonl\"]\nenvelope = { size = -1 }\n",
    );
    repo.evalock(&["check"])
        .assert_code(65)
        .assert_contains("evalock.toml:6:1")
        .assert_contains("`envelope.size` must be a share of growth of 0 or more");
}

const COUNTING_COMPLETER: &str = r#"import json, os, sys
case = json.loads(sys.stdin.read())
tokens = int(os.environ.get("TOKENS", "200"))
print(json.dumps({"city": "Paris", "country": "France", "usage": {"input_tokens": 30, "output_tokens": tokens}}))
"#;

#[test]
fn output_tokens_the_completer_reports_are_recorded_and_pinned() {
    let repo = project("");
    repo.write("complete.py", COUNTING_COMPLETER);
    repo.evalock(&["lock"]).assert_code(0);
    accept(&repo, &[]);
    let results: serde_json::Value =
        serde_json::from_str(&repo.read(".evalock/results.json")).expect("results");
    assert_eq!(results["cases"][0]["usage"]["output_tokens"], 200);
    assert_eq!(results["cases"][0]["usage"]["input_tokens"], 30);
    repo.evalock_with(&["run"], &[("TOKENS", "205")])
        .assert_not_contains("EL510");
    repo.evalock_with(&["run"], &[("TOKENS", "400")])
        .assert_contains("EL510 envelope-breach (warn): case `capital_json` (evals/capitals.jsonl:1) still passes, but its envelope broke its pin: tokens 400 output tokens against 200 at last-good (+100 %, slack 10 %)")
        .assert_contains("(tokens 1)");
}
