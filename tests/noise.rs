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

/// Four cases answered "hello" unless `fail.txt` names them.
fn banded_project() -> TestRepo {
    let repo = TestRepo::new();
    repo.write(
        "evalock.toml",
        "version = 1\n\n[[suite]]\nname = \"greet\"\ncases = [\"evals/greet.jsonl\"]\nbaseline = \"evals/greet.baseline.json\"\ncompleter = [\"python3\", \"complete.py\"]\n",
    );
    let cases: String = ["c1", "c2", "c3", "c4"]
        .iter()
        .map(|id| format!("{{\"id\": \"{id}\", \"input\": \"hi\", \"expect\": {{\"must_include\": [\"hello\"]}}}}\n"))
        .collect();
    repo.write("evals/greet.jsonl", cases);
    repo.write(
        "complete.py",
        "import json, os, sys\ncase = json.loads(sys.stdin.read())\nfailing = open('fail.txt').read().split() if os.path.exists('fail.txt') else []\nprint('nope' if case['case_id'] in failing else 'hello')\n",
    );
    repo.evalock(&["lock"]).assert_code(0);
    repo
}

#[test]
fn the_noise_floor_is_kept_beside_the_baselines_and_raising_it_is_a_loosening() {
    let repo = banded_project();
    repo.evalock(&["run", "--repeat", "3"]).assert_code(0);
    repo.evalock(&["accept", "--reason", "first floor"])
        .assert_code(0)
        .assert_contains(
            "recorded the noise floor of suite greet: changes under 0.0 points are within noise",
        );
    let baseline = repo.read("evals/greet.baseline.json");
    assert!(
        baseline.contains("\"noise\": {") && baseline.contains("\"mde\": 0.0"),
        "{baseline}"
    );
    // A run without --repeat keeps the recorded floor.
    repo.evalock(&["run"]).assert_code(0);
    repo.evalock(&["accept", "--reason", "again"])
        .assert_code(0)
        .assert_contains("nothing to write");
    repo.commit_all("baselines with their noise floor");
    repo.git(&["switch", "-q", "-c", "wider"]);
    repo.replace("evals/greet.baseline.json", "\"mde\": 0.0", "\"mde\": 30.0");
    repo.commit_all("a wider floor");
    let line = repo
        .read("evals/greet.baseline.json")
        .lines()
        .position(|line| line.contains("\"mde\""))
        .expect("mde line")
        + 1;
    repo.evalock(&["check", "--base", "main"])
        .assert_code(2)
        .assert_contains(&format!("evals/greet.baseline.json:{line}: EL110 policy-loosened (refuse): evals/greet.baseline.json raises suite `greet`'s noise floor from 0.0 to 30.0 points"));
    repo.approve("Evalock-Approved: EL110 evals/greet.baseline.json: measured on the new sampler");
    repo.evalock(&["check", "--base", "main"]).assert_code(0);
    // A lower floor is stricter: no loosening.
    repo.git(&["switch", "-q", "-c", "narrower"]);
    repo.replace(
        "evals/greet.baseline.json",
        "\"mde\": 30.0",
        "\"mde\": 10.0",
    );
    repo.commit_all("a narrower floor");
    repo.evalock(&["check", "--base", "wider"])
        .assert_code(0)
        .assert_not_contains("EL110");
}

#[test]
fn compare_calls_a_suite_change_under_the_noise_floor_within_noise() {
    let repo = banded_project();
    repo.evalock(&["run", "--repeat", "2"]).assert_code(0);
    repo.evalock(&["accept", "--reason", "floor"])
        .assert_code(0);
    repo.replace("evals/greet.baseline.json", "\"mde\": 0.0", "\"mde\": 30.0");
    repo.commit_all("baselines, floor 30 points");
    repo.write("fail.txt", "c1\n");
    repo.evalock(&["run", "--out", "one.json"]).assert_code(1);
    repo.evalock(&["compare", "--base", "HEAD", "one.json"])
        .assert_code(1)
        .assert_contains("suite greet: ")
        .assert_contains(
            "pass rate 100.0 % -> 75.0 % (-25.0 points, within noise: floor 30.0 points)",
        );
    repo.write("fail.txt", "c1\nc2\n");
    repo.evalock(&["run", "--out", "two.json"]).assert_code(1);
    let markdown = repo.evalock(&[
        "compare", "--base", "HEAD", "two.json", "--format", "markdown",
    ]);
    markdown.assert_contains("- suite `greet`: pass rate 100.0 % -> 50.0 % (-50.0 points, beyond the noise floor of 30.0 points)");
    let json = repo.evalock(&["compare", "--base", "HEAD", "two.json", "--format", "json"]);
    let document: serde_json::Value = serde_json::from_str(&json.stdout).expect("json");
    assert_eq!(document["rates"]["greet"]["within_noise"], false);
    assert_eq!(document["rates"]["greet"]["noise_floor"], 30.0);
}
