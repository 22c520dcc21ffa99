//! `evalock compare OLD NEW` on the demo: a model swap's behaviour matrix, REGRESS and
//! GAIN rows, per suite and stratum, the envelope's size channel, critical cases, and the
//! exit code `--fail-on` chooses.

mod common;

use common::TestRepo;
use serde_json::Value;

/// Two runs of the demo: the stub as shipped (`old.json`), then another model whose
/// prompt lost a rule (`new.json`). `refund-no-order-id` is critical.
fn swapped() -> TestRepo {
    let repo = TestRepo::with_fixture("demo");
    repo.replace(
        "evals/support.jsonl",
        "{\"id\": \"refund-no-order-id\", ",
        "{\"id\": \"refund-no-order-id\", \"critical\": true, ",
    );
    repo.evalock(&["lock"]).assert_code(0);
    repo.evalock(&["run", "--out", "old.json"]).assert_code(0);
    repo.swap_demo_model();
    repo.evalock(&["lock"]).assert_code(0);
    repo.evalock(&["run", "--out", "new.json"]);
    repo
}

#[test]
fn a_model_swap_shows_what_it_broke_behaviour_by_behaviour() {
    let repo = swapped();
    let run = repo.evalock(&["compare", "old.json", "new.json"]);
    run.assert_code(1)
        .assert_contains(
            "contexts differ: suite support: model acme-support-stub -> acme-support-next",
        )
        .assert_contains("support/refund-no-order-id (critical)")
        .assert_contains("forbidden_tool:create_refund")
        .assert_contains("suite support: 2 REGRESS, 9 SAME")
        .assert_contains("stratum refund: 1 REGRESS, 1 SAME")
        .assert_contains("correctness 12/14 stable")
        .assert_contains("evalock compare: BLOCK (2 REGRESS, 12 SAME)");
    // The critical case is listed first.
    let first_case = run
        .stdout
        .lines()
        .find(|line| line.starts_with("  support/") || line.starts_with("  escalation/"))
        .unwrap();
    assert!(
        first_case.contains("refund-no-order-id (critical)"),
        "{first_case}"
    );
    // The size of its completion grew past its slack: the size channel names it.
    assert!(
        run.stdout
            .lines()
            .any(|line| line.contains("refund-no-order-id")
                && line.contains(" size ")
                && line.contains("BREACH")),
        "{}",
        run.stdout
    );
    // The other way round, the same rows are gains, and nothing fails.
    repo.evalock(&["compare", "new.json", "old.json"])
        .assert_code(0)
        .assert_contains("GAIN")
        .assert_contains("evalock compare: PASS (2 GAIN, 12 SAME)");
}

#[test]
fn fail_on_chooses_what_fails_and_critical_regressions_always_do() {
    let repo = swapped();
    // Nothing chosen: the critical case's regression still fails.
    repo.evalock(&["compare", "old.json", "new.json", "--fail-on", "none"])
        .assert_code(1);
    repo.replace("evals/support.jsonl", "\"critical\": true, ", "");
    repo.evalock(&["lock"]).assert_code(0);
    repo.evalock(&["run", "--out", "new.json"]);
    repo.evalock(&["compare", "old.json", "new.json", "--fail-on", "none"])
        .assert_code(0);
    repo.evalock(&["compare", "old.json", "old.json", "--fail-on", "envelope"])
        .assert_code(0);
    repo.evalock(&[
        "compare",
        "old.json",
        "new.json",
        "--fail-on",
        "envelope",
        "--latency-slack",
        "100",
    ])
    .assert_code(1);
    repo.evalock(&["compare", "old.json", "new.json", "--fail-on", "sometimes"])
        .assert_code(64)
        .assert_contains("use regress, error, gone, new, envelope or none");
    repo.evalock(&["compare", "old.json", "missing.json"])
        .assert_code(64);
}

#[test]
fn the_comparison_reads_as_json_and_markdown() {
    let repo = swapped();
    let json = repo.evalock(&["compare", "old.json", "new.json", "--format", "json"]);
    json.assert_code(1);
    let document: Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(document["schema"], "evalock.compare/v1");
    assert_eq!(document["verdict"], "BLOCK");
    let regressed: Vec<&str> = document["cases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|case| case["verdict"] == "REGRESS")
        .map(|case| case["case_id"].as_str().unwrap())
        .collect();
    assert_eq!(regressed, vec!["refund-no-order-id", "no-ai-disclaimer"]);
    assert_eq!(document["per_stratum"]["tone"]["REGRESS"], 1);
    let markdown = repo.evalock(&["compare", "old.json", "new.json", "--format", "markdown"]);
    markdown
        .assert_contains("## evalock compare: BLOCK")
        .assert_contains("| case | behaviour | old | new | verdict |")
        .assert_contains(
            "| must\\_not\\_call: forbidden\\_tool:create\\_refund | pass | fail | **REGRESS** |",
        );
}

/// Each result and each baseline entry records every assertion's outcome, and `compare`
/// judges them one by one; a results file without them compares by reason codes.
#[test]
fn assertions_are_recorded_and_compared_one_by_one() {
    let repo = swapped();
    let assertions = |file: &str, case: &str| -> Vec<Value> {
        let results: Value = serde_json::from_str(&repo.read(file)).expect("results");
        results["cases"]
            .as_array()
            .unwrap()
            .iter()
            .find(|result| result["case_id"] == case)
            .map(|result| result["assertions"].as_array().cloned().unwrap_or_default())
            .unwrap()
    };
    let old = assertions("old.json", "refund-no-order-id");
    let keys: Vec<&str> = old
        .iter()
        .map(|outcome| outcome["key"].as_str().unwrap())
        .collect();
    assert_eq!(
        keys,
        ["require_clarification", "must_not_call", "forbidden"]
    );
    assert!(old.iter().all(|outcome| outcome["pass"] == true), "{old:?}");
    let new = assertions("new.json", "refund-no-order-id");
    assert_eq!(new[1]["pass"], false);
    assert_eq!(new[1]["reasons"][0], "forbidden_tool:create_refund");
    // The escalation suite's command grader reports no assertions.
    assert!(assertions("old.json", "angry-customer-escalates").is_empty());
    // Accepted, they are part of the baseline entry, and `compare --base` uses them.
    let swapped_config = repo.read("evalock.toml");
    repo.replace(
        "evalock.toml",
        "\"completers/stub.py\", \"regressed\"]",
        "\"completers/stub.py\"]",
    );
    repo.replace(
        "evalock.toml",
        "model = \"acme-support-next\"",
        "model = \"acme-support-stub\"",
    );
    repo.evalock(&["lock"]).assert_code(0);
    repo.evalock(&["accept", "--from", "old.json", "--reason", "last good"])
        .assert_code(0);
    repo.write("evalock.toml", swapped_config);
    repo.evalock(&["lock"]).assert_code(0);
    let baseline = repo.read("evals/support.baseline.json");
    assert!(
        baseline.contains("\"key\": \"must_not_call\""),
        "{baseline}"
    );
    repo.commit_all("accept");
    repo.evalock(&["compare", "--base", "HEAD", "new.json"])
        .assert_code(1)
        .assert_contains("must_not_call: forbidden_tool:create_refund");
    // Without recorded assertions, the rows are the reason codes.
    let text = repo.read("new.json");
    let mut stripped: Value = serde_json::from_str(&text).unwrap();
    for case in stripped["cases"].as_array_mut().unwrap() {
        case.as_object_mut().unwrap().remove("assertions");
    }
    repo.write("bare.json", serde_json::to_string(&stripped).unwrap());
    let bare = repo.evalock(&["compare", "old.json", "bare.json"]);
    bare.assert_code(1)
        .assert_contains("forbidden_tool:create_refund")
        .assert_not_contains("must_not_call:");
}

/// A model swap drifts every baseline (EL401, exit 2), and the run still says what the
/// swap did to each recorded verdict, so the author sees it before re-recording.
#[test]
fn a_run_after_a_model_swap_shows_what_it_did_to_the_recorded_verdicts() {
    let repo = TestRepo::with_fixture("demo");
    repo.evalock(&["run"]).assert_code(0);
    repo.evalock(&["accept", "--reason", "last good"])
        .assert_code(0);
    let quiet = repo.evalock(&["run"]);
    assert!(
        !quiet.stderr.contains("another context"),
        "{}",
        quiet.stderr
    );
    repo.replace(
        "evalock.toml",
        "\"completers/stub.py\"]\nmodel = \"acme-support-stub\"",
        "\"completers/stub.py\", \"regressed\"]\nmodel = \"acme-support-next\"",
    );
    repo.evalock(&["lock"]).assert_code(0);
    let run = repo.evalock(&["run"]);
    run.assert_code(2)
        .assert_contains("EL401 baseline-drifted")
        .assert_contains("against last-good recorded in another context (EL401), this run: 2 REGRESS, 9 SAME")
        .assert_contains("support/refund-no-order-id  must_not_call: forbidden_tool:create_refund  pass -> fail  REGRESS");
}

#[test]
fn the_comparison_reads_as_sarif_for_code_scanning() {
    let repo = swapped();
    let sarif = repo.evalock(&["compare", "old.json", "new.json", "--format", "sarif"]);
    sarif.assert_code(1);
    let document: Value = serde_json::from_str(&sarif.stdout).expect("SARIF is JSON");
    assert_eq!(document["version"], "2.1.0");
    let rules: Vec<&str> = document["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|result| result["ruleId"].as_str().unwrap())
        .collect();
    assert_eq!(
        rules.iter().filter(|rule| **rule == "EL501").count(),
        2,
        "{rules:?}"
    );
    assert!(rules.contains(&"EL512"), "{rules:?}");
    let quiet = repo.evalock(&["compare", "old.json", "old.json", "--format", "sarif"]);
    quiet.assert_code(0);
    let document: Value = serde_json::from_str(&quiet.stdout).expect("SARIF is JSON");
    assert!(
        !document["runs"][0]["results"]
            .as_array()
            .unwrap()
            .iter()
            .any(|result| result["ruleId"] == "EL501"),
        "{document}"
    );
}
