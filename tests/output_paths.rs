//! A report or results file is never written over a file the project reads: the lock
//! (written only by `evalock lock`), evalock.toml, case files, prompts, baselines. Such an
//! output path is a usage error, and nothing is written or removed.

mod common;

use common::TestRepo;

const REFUSED: [&str; 6] = [
    "evalock.lock",
    "./evals/../evalock.lock",
    "evalock.toml",
    "evals/support.jsonl",
    "prompts/support.txt",
    "evals/support.baseline.json",
];

#[test]
fn check_and_report_refuse_to_write_over_the_projects_files() {
    let repo = TestRepo::with_fixture("demo");
    let lock = repo.read("evalock.lock");
    let config = repo.read("evalock.toml");
    for output in REFUSED {
        repo.evalock(&["check", "--format", "json", "--output", output])
            .assert_code(64)
            .assert_contains(&format!("--output {output}: this is "))
            .assert_contains("which evalock reads");
    }
    repo.evalock(&["check", "--output", "evalock.lock"])
        .assert_code(64)
        .assert_contains("the project's lock (evalock.lock, written only by `evalock lock`)");
    repo.evalock(&["check", "--output", "evals/support.jsonl"])
        .assert_contains("a case file of suite `support`");
    // Started in a subfolder, the path is read from there.
    repo.evalock(&["-C", "evals", "check", "--output", "../evalock.toml"])
        .assert_code(64)
        .assert_contains("the project's configuration (evalock.toml)");
    repo.evalock(&["check", "--format", "json", "--output", "report.json"])
        .assert_code(0);
    repo.evalock(&[
        "report",
        "--from",
        "report.json",
        "--output",
        "evalock.lock",
    ])
    .assert_code(64)
    .assert_contains("--output evalock.lock: this is the project's lock");
    assert_eq!(repo.read("evalock.lock"), lock);
    assert_eq!(repo.read("evalock.toml"), config);
    repo.evalock(&["check"]).assert_code(0);
}

/// A check that fails removes a stale report at `--output`; that must never remove the
/// project's own files.
#[test]
fn a_failing_check_does_not_remove_the_file_named_as_its_output() {
    let repo = TestRepo::with_fixture("demo");
    let lock = repo.read("evalock.lock");
    repo.write("evalock.lock", format!("{lock}x"));
    repo.evalock(&["check", "--output", "evalock.toml"])
        .assert_code(64);
    assert!(repo.join("evalock.toml").is_file());
}

#[test]
fn run_and_merge_refuse_to_write_results_over_the_projects_files() {
    let repo = TestRepo::with_fixture("demo");
    let lock = repo.read("evalock.lock");
    repo.evalock(&["run", "--out", "evalock.lock"])
        .assert_code(64)
        .assert_contains("--out evalock.lock: this is the project's lock");
    repo.evalock(&[
        "run",
        "--suite",
        "support",
        "--out",
        "evals/escalation.yaml",
    ])
    .assert_code(64)
    .assert_contains("a case file of suite `escalation`");
    repo.evalock(&[
        "run",
        "--suite",
        "support",
        "--shard",
        "1/1",
        "--out",
        "shard-1.json",
    ])
    .assert_code(0);
    repo.evalock(&["merge", "shard-1.json", "--out", "evalock.lock"])
        .assert_code(64)
        .assert_contains("--out evalock.lock: this is the project's lock");
    assert_eq!(repo.read("evalock.lock"), lock);
}

/// Paths the project does not read are written as before.
#[test]
fn reports_beside_the_projects_files_are_written() {
    let repo = TestRepo::with_fixture("demo");
    for output in ["report.json", "evals/report.json", "reports/evalock.lock"] {
        repo.evalock(&["check", "--format", "json", "--output", output])
            .assert_code(0);
        assert!(
            repo.read(output).contains("\"verdict\": \"PASS\""),
            "{output}"
        );
    }
    repo.evalock(&["check"]).assert_code(0);
}
