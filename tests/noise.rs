//! `run --repeat N` (the seeds' "Calibrate the Noise Floor of Your Eval Harness"): the
//! same version run N times. A case whose verdict flips more than `flaky_max` is flaky
//! (EL511) and stops moving the gate; each suite reports its A/A noise floor. A steady
//! suite has none, and a flaky_max that tolerates the flips keeps the case gating.

mod common;

use common::TestRepo;

/// `coin` fails on the first call and passes on the next, alternating; `steady` always passes.
const COMPLETER: &str = r#"import json, os, sys
case = json.loads(sys.stdin.read())
if case["case_id"] == "coin":
    path = ".coin-count"
    count = int(open(path).read()) if os.path.exists(path) else 0
    open(path, "w").write(str(count + 1))
    print("hello" if count % 2 else "nope")
else:
    print("hello")
"#;

fn project(policy: &str) -> TestRepo {
    let repo = TestRepo::new();
    repo.write(
        "evalock.toml",
        format!("version = 1\n{policy}\n[[suite]]\nname = \"greet\"\ncases = [\"evals/greet.jsonl\"]\ncompleter = [\"python3\", \"complete.py\"]\n"),
    );
    repo.write(
        "evals/greet.jsonl",
        "{\"id\": \"coin\", \"input\": \"hi\", \"expect\": {\"must_include\": [\"hello\"]}}\n{\"id\": \"steady\", \"input\": \"hi\", \"expect\": {\"must_include\": [\"hello\"]}}\n",
    );
    repo.write("complete.py", COMPLETER);
    repo.evalock(&["lock"]).assert_code(0);
    repo
}

#[test]
fn a_case_that_flips_is_flaky_and_stops_moving_the_gate() {
    let repo = project("");
    let run = repo.evalock(&["run", "--repeat", "4"]);
    run.assert_code(0)
        .assert_contains("evals/greet.jsonl:1: EL511 case-flaky (warn): case `coin` (evals/greet.jsonl:1) flipped in 50 % of 4 repeats (flaky_max 0)")
        .assert_contains("EL502 failing (note): case `coin` (evals/greet.jsonl:1) fails: missing:hello (flaky over --repeat: not gating)")
        .assert_contains("noise floor of suite greet: A/A -50.0 points [")
        .assert_contains("1 flaky");
    let results: serde_json::Value =
        serde_json::from_str(&repo.read(".evalock/results.json")).expect("results");
    assert_eq!(results["noise"]["greet"]["repeats"], 4);
    assert_eq!(results["cases"][0]["flip_rate"], 0.5);
    assert_eq!(results["cases"][1]["flip_rate"], 0.0);
    // Without --repeat, the same failure gates.
    repo.remove(".coin-count");
    repo.evalock(&["run"])
        .assert_code(1)
        .assert_contains("EL502 failing (error)");
}

#[test]
fn a_flaky_max_that_tolerates_the_flips_keeps_the_case_gating() {
    let repo = project("\n[policy]\nflaky_max = 0.5\n");
    repo.evalock(&["run", "--repeat", "2"])
        .assert_code(1)
        .assert_not_contains("EL511")
        .assert_contains("EL502 failing (error)");
}

#[test]
fn repeat_is_not_for_a_shard() {
    let repo = project("");
    repo.evalock(&["run", "--repeat", "2", "--shard", "1/2"])
        .assert_code(64)
        .assert_contains("--repeat measures a whole suite's noise: run it without --shard");
}
