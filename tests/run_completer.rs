//! The completer seam end to end: real processes behind `evalock run`, in real git
//! repositories. Completers here are small shell scripts (fast to start).

mod common;

use common::{process_is_gone, TestRepo};
use serde_json::Value;
use std::time::Duration;

/// A one-suite project whose completer is a shell script; `expect` applies to every case.
fn project(policy: &str, script: &str, cases: &[&str]) -> TestRepo {
    let repo = TestRepo::new();
    repo.write("complete.sh", script);
    let timeout = if policy.contains("timeout_secs") {
        ""
    } else {
        "timeout_secs = 30\n"
    };
    repo.write(
        "evalock.toml",
        format!(
            "version = 1\n\n[policy]\n{timeout}{policy}\n\n[[suite]]\nname = \"mini\"\ncases = [\"evals/mini.jsonl\"]\nbaseline = \"evals/mini.baseline.json\"\ncompleter = [\"sh\", \"complete.sh\"]\nnormalizer = \"ws-v1\"\n"
        ),
    );
    let mut lines = String::new();
    for case in cases {
        lines.push_str(case);
        lines.push('\n');
    }
    repo.write("evals/mini.jsonl", lines);
    repo.evalock(&["lock"]).assert_code(0);
    repo.commit_all("mini project");
    repo
}

fn results(repo: &TestRepo) -> Value {
    serde_json::from_str(&repo.read(".evalock/results.json")).expect("results file is JSON")
}

const SIMPLE_CASE: &str =
    r#"{"id": "greet", "input": {"text": "hi"}, "expect": {"must_include": ["hello"]}}"#;

#[test]
fn a_hanging_completer_is_killed_with_its_whole_process_group() {
    let script = "echo $$ > pids\nsleep 1000 &\necho $! >> pids\nwait\n";
    let repo = project("timeout_secs = 2", script, &[SIMPLE_CASE]);
    let run = repo.evalock(&["run"]);
    run.assert_code(1)
        .assert_contains("EL504")
        .assert_contains("timed out after 2s");
    assert_eq!(results(&repo)["cases"][0]["status"], "ERROR");
    let pids = repo.read("pids");
    let pids: Vec<&str> = pids.split_whitespace().collect();
    assert_eq!(
        pids.len(),
        2,
        "the completer and its child wrote their pids: {pids:?}"
    );
    // The kill was sent before `run` exited; reaping by init can lag a moment. (Two
    // seconds leave a loaded machine time to start the script before the deadline.)
    for pid in &pids {
        let gone = (0..200).any(|_| {
            let gone = process_is_gone(pid);
            if !gone {
                std::thread::sleep(Duration::from_millis(10));
            }
            gone
        });
        assert!(gone, "process {pid} outlived the run");
    }
}

#[test]
fn a_completer_printing_a_gigabyte_is_stopped_at_the_cap() {
    let script = "cat > /dev/null\nhead -c 1073741824 /dev/zero | tr '\\0' 'x'\n";
    let repo = project("max_output_bytes = 65536", script, &[SIMPLE_CASE]);
    let run = repo.evalock(&["run"]);
    run.assert_code(1)
        .assert_contains("EL504")
        .assert_contains("printed more than 65536 bytes");
    let results = results(&repo);
    assert_eq!(results["cases"][0]["status"], "ERROR");
    assert!(
        results["cases"][0]["completion"].is_null(),
        "an oversized output is never scored"
    );
}

#[test]
fn crashes_and_empty_output_are_errors_never_scores() {
    let crash = project(
        "",
        "cat > /dev/null\necho 'model unavailable' >&2\nexit 7\n",
        &[SIMPLE_CASE],
    );
    crash
        .evalock(&["run"])
        .assert_code(1)
        .assert_contains("exited with status 7")
        .assert_contains("model unavailable");
    let empty = project("", "cat > /dev/null\nprintf '  \\n'\n", &[SIMPLE_CASE]);
    empty
        .evalock(&["run"])
        .assert_code(1)
        .assert_contains("EL504")
        .assert_contains("empty completion");
}

#[test]
fn the_completer_reads_one_request_and_never_sees_tokens_or_secrets() {
    let script = "cat > request.json\necho \"hello token=${GITHUB_TOKEN:-none} actions=${ACTIONS_RUNTIME_TOKEN:-none} key=${ACME_API_KEY:-none} kept=${KEEP_ME:-none}\"\n";
    let repo = project("secrets = [\"ACME_API_KEY\"]", script, &[SIMPLE_CASE]);
    let run = repo.evalock_with(
        &["run"],
        &[
            ("GITHUB_TOKEN", "ghp_s3cret"),
            ("ACTIONS_RUNTIME_TOKEN", "rt"),
            ("ACME_API_KEY", "k3y"),
            ("KEEP_ME", "yes"),
        ],
    );
    run.assert_code(0).assert_not_contains("ghp_s3cret");
    let completion = results(&repo)["cases"][0]["completion"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert_eq!(
        completion,
        "hello token=none actions=none key=none kept=yes"
    );
    let request: Value = serde_json::from_str(&repo.read("request.json")).unwrap();
    assert_eq!(request["suite"], "mini");
    assert_eq!(request["case_id"], "greet");
    assert_eq!(request["sample"], 0);
    assert_eq!(request["input"], serde_json::json!({"text": "hi"}));
}

#[test]
fn results_keep_their_order_whatever_the_parallelism() {
    // Later cases answer first: completion order must not leak into the results.
    let script = "input=$(cat)\ncase \"$input\" in *'\"c1\"'*) sleep 0.3;; *'\"c2\"'*) sleep 0.2;; esac\necho \"hello $input\" | head -c 40\n";
    let cases: Vec<String> = (1..=6)
        .map(|index| {
            format!(
                r#"{{"id": "c{index}", "input": {{}}, "expect": {{"must_include": ["hello"]}}}}"#
            )
        })
        .collect();
    let case_refs: Vec<&str> = cases.iter().map(String::as_str).collect();
    let repo = project("", script, &case_refs);
    repo.evalock(&["run", "--jobs", "1"]).assert_code(0);
    let serial = results(&repo);
    repo.evalock(&["run", "--jobs", "4"]).assert_code(0);
    let parallel = results(&repo);
    let ids = |results: &Value| -> Vec<String> {
        results["cases"]
            .as_array()
            .unwrap()
            .iter()
            .map(|case| case["case_id"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(ids(&serial), vec!["c1", "c2", "c3", "c4", "c5", "c6"]);
    assert_eq!(ids(&serial), ids(&parallel));
    for (one, other) in serial["cases"]
        .as_array()
        .unwrap()
        .iter()
        .zip(parallel["cases"].as_array().unwrap())
    {
        assert_eq!(one["digest"], other["digest"]);
    }
}

const SAMPLED_CASE: &str =
    r#"{"id": "flaky", "n": 5, "input": {}, "expect": {"must_include": ["answer"]}}"#;
/// Sample 3 of 5 answers differently (both answers pass the assertions).
const FLAKY_SCRIPT: &str =
    "input=$(cat)\ncase \"$input\" in *'\"sample\":3'*) echo 'answer B';; *) echo 'answer A';; esac\n";

#[test]
fn four_of_five_agreeing_samples_fail_agreement_min_one() {
    let repo = project("agreement_min = 1.0", FLAKY_SCRIPT, &[SAMPLED_CASE]);
    let run = repo.evalock(&["run"]);
    run.assert_code(1)
        .assert_contains("EL505")
        .assert_contains("4 of 5 samples agree (0.80 < agreement_min 1.00)");
    run.assert_contains("-answer A")
        .assert_contains("+answer B");
    let results = results(&repo);
    let case = &results["cases"][0];
    assert_eq!(case["samples"].as_array().unwrap().len(), 5);
    assert_eq!(case["agreement"], 0.8);
    assert_eq!(case["status"], "FAIL");
    assert_eq!(case["completion"], "answer A");
}

#[test]
fn agreement_at_the_threshold_passes() {
    let repo = project("agreement_min = 0.8", FLAKY_SCRIPT, &[SAMPLED_CASE]);
    repo.evalock(&["run"])
        .assert_code(0)
        .assert_not_contains("EL505");
    // --samples applies to cases without `n`.
    let steady = project("", "cat > /dev/null\necho 'hello'\n", &[SIMPLE_CASE]);
    steady.evalock(&["run", "--samples", "3"]).assert_code(0);
    assert_eq!(
        results(&steady)["cases"][0]["samples"]
            .as_array()
            .unwrap()
            .len(),
        3
    );
}

/// REGRESSED means "passed at baseline and fails now": samples that all pass but disagree
/// fail with EL505 alone, also when the most common one is the baseline's completion.
#[test]
fn disagreeing_samples_that_all_pass_are_not_a_regression() {
    let repo = project("agreement_min = 0.8", FLAKY_SCRIPT, &[SAMPLED_CASE]);
    repo.evalock(&["run"]).assert_code(0);
    repo.evalock(&["accept", "--reason", "first recording"])
        .assert_code(0);
    repo.commit_all("record the baseline");
    repo.evalock(&["run"])
        .assert_code(0)
        .assert_not_contains("EL5");
    assert_eq!(results(&repo)["cases"][0]["status"], "PASS");

    repo.replace("evalock.toml", "agreement_min = 0.8", "agreement_min = 1.0");
    let run = repo.evalock(&["run"]);
    run.assert_code(1)
        .assert_contains("EL505 samples-disagree (error)")
        .assert_contains("4 of 5 samples agree")
        .assert_not_contains("EL501")
        .assert_not_contains("regressed");
    let results = results(&repo);
    let case = &results["cases"][0];
    assert_eq!(case["status"], "FAIL");
    assert_eq!(case["baseline"], "compared");
    assert_eq!(case["completion"], "answer A");
    assert_eq!(
        case["reasons"],
        serde_json::json!(["samples_disagree:0.80<1.00"])
    );
    assert_eq!(results["counts"], serde_json::json!({"FAIL": 1}));
}

#[test]
fn jobs_outside_one_to_256_are_usage_errors() {
    let repo = project("", "cat > /dev/null\necho hello\n", &[SIMPLE_CASE]);
    for jobs in ["0", "257", "100000", "-1"] {
        repo.evalock(&["run", &format!("--jobs={jobs}")])
            .assert_code(64)
            .assert_contains("--jobs");
    }
    repo.evalock(&["run", "--jobs", "100000"])
        .assert_code(64)
        .assert_contains("100000 is not in 1..=256");
    repo.evalock(&["run", "--help"]).assert_contains("1 to 256");
    repo.evalock(&["run", "--jobs", "2"]).assert_code(0);
    repo.evalock(&["run", "-j", "1"]).assert_code(0);
}

/// What `run` reads and writes is checked before any completer starts: a results path
/// with a directory in the way, a completions file with a key twice or naming a suite the
/// project does not have. Each is bad input with its path (65), and nothing runs.
#[test]
fn run_inputs_and_destination_are_checked_before_anything_runs() {
    let repo = project("", "echo ran >> ran.log\necho hello\n", &[SIMPLE_CASE]);
    std::fs::create_dir_all(repo.join("out.json")).expect("mkdir");
    repo.evalock(&["run", "--out", "out.json"])
        .assert_code(65)
        .assert_contains("out.json")
        .assert_contains("a directory is in the way");
    assert!(!repo.join("ran.log").exists(), "the completer ran");
    let id = "greet";
    repo.write(
        "twice.jsonl",
        format!("{{\"case_id\": \"{id}\", \"completion\": \"a\", \"completion\": \"b\"}}\n"),
    );
    repo.evalock(&["run", "--completions", "twice.jsonl"])
        .assert_code(65)
        .assert_contains("twice.jsonl:1:")
        .assert_contains("duplicate key");
    repo.write(
        "elsewhere.jsonl",
        format!("{{\"suite\": \"nope\", \"case_id\": \"{id}\", \"completion\": \"a\"}}\n"),
    );
    repo.evalock(&["run", "--completions", "elsewhere.jsonl"])
        .assert_code(65)
        .assert_contains("elsewhere.jsonl:1: names suite `nope`");
    repo.write(
        "mini.jsonl",
        format!("{{\"suite\": \"mini\", \"case_id\": \"{id}\", \"completion\": \"hello\"}}\n"),
    );
    repo.evalock(&["run", "--completions", "mini.jsonl"])
        .assert_code(0);
}

#[test]
fn completions_made_elsewhere_are_graded_from_a_file() {
    let repo = project(
        "",
        "exit 9\n",
        &[
            SIMPLE_CASE,
            r#"{"id": "other", "input": {}, "expect": {"must_include": ["x"]}}"#,
        ],
    );
    repo.write(
        "made-elsewhere.jsonl",
        "{\"case_id\": \"greet\", \"completion\": \"hello there\"}\n",
    );
    let run = repo.evalock(&["run", "--completions", "made-elsewhere.jsonl"]);
    run.assert_code(1)
        .assert_contains("no completion for case `other` in made-elsewhere.jsonl");
    let results = results(&repo);
    assert_eq!(results["cases"][0]["case_id"], "greet");
    assert_eq!(results["cases"][0]["status"], "PASS");
    assert_eq!(results["cases"][1]["status"], "ERROR");
    repo.write("broken.jsonl", "{\"case_id\": \"greet\"}\n");
    repo.evalock(&["run", "--completions", "broken.jsonl"])
        .assert_code(65)
        .assert_contains("broken.jsonl:1");
}

/// A completion whose `case_id` no suite holds (a typo, an id from another export) would be
/// silently unused; it is refused with its line before anything runs, as an unknown
/// `suite` is. A retired case still counts: a file written before it was retired is fine.
#[test]
fn completions_for_a_case_no_suite_holds_are_refused_with_their_line() {
    let repo = project(
        "",
        "exit 9\n",
        &[
            SIMPLE_CASE,
            r#"{"id": "old", "retired": true, "input": {}, "expect": {"must_include": ["x"]}}"#,
        ],
    );
    repo.write(
        "elsewhere.jsonl",
        "{\"case_id\": \"greet\", \"completion\": \"hello\"}\n{\"case_id\": \"old\", \"completion\": \"x\"}\n",
    );
    repo.evalock(&["run", "--completions", "elsewhere.jsonl"])
        .assert_code(0);
    repo.write(
        "typo.jsonl",
        "{\"case_id\": \"greet\", \"completion\": \"hello\"}\n{\"case_id\": \"gret\", \"completion\": \"hello\"}\n",
    );
    repo.evalock(&["run", "--completions", "typo.jsonl"])
        .assert_code(65)
        .assert_contains("typo.jsonl:2: names case `gret`, which no suite holds");
    repo.write(
        "wrong-suite.jsonl",
        "{\"suite\": \"mini\", \"case_id\": \"gret\", \"completion\": \"hello\"}\n",
    );
    repo.evalock(&["run", "--completions", "wrong-suite.jsonl"])
        .assert_code(65)
        .assert_contains(
            "wrong-suite.jsonl:1: names case `gret`, which suite `mini` does not hold",
        );
    assert!(
        !repo.join(".evalock/results.json").exists()
            || repo.read(".evalock/results.json").contains("\"greet\"")
    );
}

#[test]
fn usage_errors_name_what_to_fix() {
    let repo = project("", "cat > /dev/null\necho hello\n", &[SIMPLE_CASE]);
    repo.evalock(&["run", "--suite", "nope"])
        .assert_code(64)
        .assert_contains("no suite `nope`")
        .assert_contains("mini");
    repo.replace(
        "evalock.toml",
        "completer = [\"sh\", \"complete.sh\"]\n",
        "",
    );
    repo.evalock(&["run"])
        .assert_code(64)
        .assert_contains("has no `completer`");
}

#[test]
fn the_results_file_is_a_report_other_formats_can_render() {
    let repo = project("", "cat > /dev/null\necho 'goodbye'\n", &[SIMPLE_CASE]);
    repo.evalock(&["run"]).assert_code(1);
    let json = repo.evalock(&[
        "report",
        "--from",
        ".evalock/results.json",
        "--format",
        "json",
    ]);
    // Rendering is not gating: `report` exits 0, the report carries the run's exit code.
    json.assert_code(0);
    let report: Value = serde_json::from_str(&json.stdout).expect("a findings report");
    assert_eq!(report["command"], "run");
    assert_eq!(report["exit_code"], 1);
    assert!(report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|finding| finding["rule"] == "EL502" && finding["subject"]["case"] == "greet"));
    repo.evalock(&[
        "report",
        "--from",
        ".evalock/results.json",
        "--format",
        "junit",
    ])
    .assert_code(0)
    .assert_contains("<testcase name=\"greet\" classname=\"evalock.mini\"");
}

/// A completion's terminal escapes are shown, not obeyed: `evil` followed by "erase the
/// line" would vanish from the reviewer's screen in `run` and `review` diffs.
#[test]
fn terminal_escapes_in_a_completion_are_shown_in_its_diff() {
    let script = "if [ -f evil ]; then printf 'hello evil\\033[2K\\rhello fine'; else printf 'hello fine'; fi\n";
    let repo = project("", script, &[SIMPLE_CASE]);
    repo.evalock(&["run"]).assert_code(0);
    repo.evalock(&["accept", "--reason", "first"])
        .assert_code(0);
    // The quiet case: nothing moved, nothing to show.
    repo.evalock(&["run"]).assert_code(0);
    repo.evalock(&["review"])
        .assert_code(0)
        .assert_contains("nothing moved");

    repo.write("evil", "");
    let run = repo.evalock(&["run"]);
    run.assert_code(0)
        .assert_contains("EL503")
        .assert_contains("+hello evil\\u{1b}[2K");
    let review = repo.evalock(&["review"]);
    review
        .assert_code(0)
        .assert_contains("MOVED mini/greet")
        .assert_contains("+hello evil\\u{1b}[2K");
    for output in [run.all(), review.all()] {
        assert!(
            !output.contains('\u{1b}'),
            "a raw escape was printed:\n{output}"
        );
    }
}

/// What a completer prints on stderr is quoted in EL504, escapes shown: `run` and
/// `report` print it on a terminal.
#[test]
fn terminal_escapes_in_a_completers_stderr_are_shown() {
    let script = "cat > /dev/null\nprintf 'quota hit\\033[2K\\rall good' >&2\nexit 1\n";
    let repo = project("", script, &[SIMPLE_CASE]);
    let run = repo.evalock(&["run"]);
    run.assert_code(1)
        .assert_contains("EL504")
        .assert_contains("stderr: quota hit\\u{1b}[2K\\rall good");
    let report = repo.evalock(&["report", "--from", ".evalock/results.json"]);
    report
        .assert_code(0)
        .assert_contains("stderr: quota hit\\u{1b}[2K\\rall good");
    for output in [run.all(), report.all()] {
        assert!(
            !output.contains('\u{1b}') && !output.contains('\r'),
            "a raw control character was printed:\n{output}"
        );
    }
    // The JSON report keeps the stderr as it was: only the terminal format escapes it.
    let json = repo.evalock(&[
        "report",
        "--from",
        ".evalock/results.json",
        "--format",
        "json",
    ]);
    json.assert_code(0)
        .assert_contains("quota hit\\u001b[2K\\rall good");
}

/// `run --suite` reads only the suites it runs: another suite whose baseline cannot be
/// read (here a directory) is refused by a full run and never opened by the selective one.
#[test]
fn run_suite_reads_only_the_suites_it_runs() {
    let repo = project("", "echo '{\"completion\": \"hello\"}'\n", &[SIMPLE_CASE]);
    let other = "\n[[suite]]\nname = \"other\"\ncases = [\"evals/other.jsonl\"]\nbaseline = \"evals/other.baseline.json\"\ncompleter = [\"sh\", \"complete.sh\"]\n";
    let config = repo.read("evalock.toml") + other;
    repo.write("evalock.toml", config);
    repo.write("evals/other.jsonl", format!("{SIMPLE_CASE}\n"));
    repo.evalock(&["lock"]).assert_code(0);
    std::fs::create_dir(repo.join("evals/other.baseline.json")).unwrap();

    repo.evalock(&["run"])
        .assert_contains("other.baseline.json");
    repo.evalock(&["run", "--suite", "mini"])
        .assert_code(0)
        .assert_not_contains("other.baseline.json");
    let results = results(&repo);
    assert_eq!(results["suites"], serde_json::json!(["mini"]));
    assert_eq!(results["cases"].as_array().unwrap().len(), 1);

    // A completions file may name cases of suites the run does not load; an unknown
    // suite is still refused.
    let run_mini_with = |lines: &str| {
        repo.write("completions.jsonl", lines);
        repo.evalock(&[
            "run",
            "--suite",
            "mini",
            "--completions",
            "completions.jsonl",
        ])
    };
    run_mini_with(
        "{\"suite\": \"mini\", \"case_id\": \"greet\", \"completion\": \"hello\"}\n{\"suite\": \"other\", \"case_id\": \"greet\", \"completion\": \"hello\"}\n",
    )
    .assert_code(0)
    .assert_not_contains("other.baseline.json");
    run_mini_with("{\"suite\": \"nope\", \"case_id\": \"greet\", \"completion\": \"hello\"}\n")
        .assert_code(65)
        .assert_contains("names suite `nope`");
    repo.evalock(&["run", "--suite", "nope"])
        .assert_code(64)
        .assert_contains("no suite `nope` in evalock.toml (suites: mini, other)");
}
