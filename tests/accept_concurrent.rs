//! Two `evalock accept` processes at once on one project (a real git repository, a real
//! completer run first) never corrupt, interleave or silently undo each other's baselines.
//!
//! accept reads the baseline file, merges the run into it and writes it back; it holds an
//! exclusive lock (`.evalock/accept.lock`) over the whole read-merge-write and writes
//! through `write_atomic`. Sensitivity, measured by removing the lock from accept: the
//! different-cases test loses one writer's entry in nearly every round (both read the
//! empty baseline); the whole-file test still passes, as write_atomic alone keeps each
//! file whole.

mod common;

use common::TestRepo;
use evalock::baselines::rules::entry_is_intact;
use evalock::baselines::BaselineFile;
use std::process::Child;

/// Enough cases that the baseline is ~100 KB: a torn write would be caught half-way.
const CASES: usize = 200;
const ROUNDS: usize = 4;
const BASELINE: &str = "evals/big.baseline.json";

fn project() -> TestRepo {
    let repo = TestRepo::new();
    // Answers with its whole request, so every case's completion differs.
    repo.write("complete.sh", "printf 'hello '\ncat\n");
    repo.write(
        "evalock.toml",
        format!(
            "version = 1\n\n[policy]\ntimeout_secs = 60\n\n[[suite]]\nname = \"big\"\ncases = [\"evals/big.jsonl\"]\nbaseline = \"{BASELINE}\"\ncompleter = [\"sh\", \"complete.sh\"]\n"
        ),
    );
    let cases: String = (0..CASES)
        .map(|index| {
            format!(
                "{{\"id\": \"case-{index}\", \"input\": {{\"text\": \"question {index} {}\"}}, \"expect\": {{\"must_include\": [\"hello\"]}}}}\n",
                "padding ".repeat(40)
            )
        })
        .collect();
    repo.write("evals/big.jsonl", cases);
    repo.evalock(&["lock"]).assert_code(0);
    repo.commit_all("big suite");
    repo.evalock(&["run", "--jobs", "2"]).assert_code(0);
    repo
}

fn spawn_accept(repo: &TestRepo, args: &[&str]) -> Child {
    repo.spawn_evalock(&[&["accept"], args].concat())
}

fn wait_ok(child: Child) {
    let output = child.wait_with_output().expect("wait for accept");
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Parses the baseline and checks every entry against its digest (what EL402 checks).
fn verified_baseline(repo: &TestRepo) -> BaselineFile {
    let file = BaselineFile::parse("big", &repo.read_bytes(BASELINE))
        .unwrap_or_else(|problem| panic!("the baseline does not parse: {problem:?}"));
    for (id, entry) in &file.entries {
        assert!(entry_is_intact(entry), "entry `{id}` fails its digest");
    }
    file
}

fn forget_baseline(repo: &TestRepo) {
    let _ = std::fs::remove_file(repo.join(BASELINE));
}

/// What one accept writes alone, from no baseline.
fn sole_output(repo: &TestRepo, reason: &str) -> Vec<u8> {
    forget_baseline(repo);
    wait_ok(spawn_accept(repo, &["--reason", reason]));
    repo.read_bytes(BASELINE)
}

#[test]
fn two_concurrent_accepts_leave_one_writers_whole_baseline() {
    let repo = project();
    let first = sole_output(&repo, "first writer");
    let second = sole_output(&repo, "second writer");
    assert_ne!(
        first, second,
        "the two writers' outputs differ (their reasons)"
    );
    for round in 0..ROUNDS {
        forget_baseline(&repo);
        let one = spawn_accept(&repo, &["--reason", "first writer"]);
        let two = spawn_accept(&repo, &["--reason", "second writer"]);
        wait_ok(one);
        wait_ok(two);
        let written = repo.read_bytes(BASELINE);
        assert!(
            written == first || written == second,
            "round {round}: the baseline is neither writer's complete output"
        );
        assert_eq!(verified_baseline(&repo).entries.len(), CASES);
    }
    // The project as evalock itself sees it: no EL402, every case matches its baseline.
    repo.evalock(&["run", "--jobs", "2"])
        .assert_code(0)
        .assert_not_contains("EL402");
    let leftovers: Vec<String> = std::fs::read_dir(repo.join("evals"))
        .expect("read evals")
        .flatten()
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with(".evalock-tmp-"))
        .collect();
    assert!(leftovers.is_empty(), "temp files left: {leftovers:?}");
}

#[test]
fn concurrent_accepts_of_different_cases_keep_both() {
    let repo = project();
    for round in 0..ROUNDS {
        forget_baseline(&repo);
        let (a, b) = (
            format!("case-{round}"),
            format!("case-{}", CASES - 1 - round),
        );
        let one = spawn_accept(&repo, &["--case", &a, "--reason", "first writer"]);
        let two = spawn_accept(&repo, &["--case", &b, "--reason", "second writer"]);
        wait_ok(one);
        wait_ok(two);
        let file = verified_baseline(&repo);
        let ids: Vec<&str> = file.entries.keys().map(String::as_str).collect();
        let mut expected = vec![a.as_str(), b.as_str()];
        expected.sort_unstable();
        assert_eq!(
            ids, expected,
            "round {round}: one accept undid the other's entry"
        );
        assert_eq!(file.entries[&a].reason, "first writer");
        assert_eq!(file.entries[&b].reason, "second writer");
    }
}
