//! Concurrent writers never corrupt or interleave evalock's state files: each write is a
//! temp file in the same directory, fsync, rename. Processes are real and race for real;
//! a concurrent reader must never see a half-written lock.
//!
//! Sensitivity, measured by swapping `write_atomic` for `std::fs::write`: the thread test
//! fails at once (readers see empty and partial files); the process test rarely does,
//! since each process writes once, so it guards interleaving and the end state.

mod common;

use common::TestRepo;
use std::sync::atomic::{AtomicBool, Ordering};

/// Enough cases that one lock is a few hundred kilobytes: a non-atomic write would be
/// caught half-way by the other writer or the reader.
const CASES: usize = 1000;
const ROUNDS: usize = 6;

fn cases_file(variant: &str) -> String {
    (0..CASES)
        .map(|index| format!("{{\"id\": \"case-{index}\", \"input\": \"{variant} {index}\"}}\n"))
        .collect()
}

fn project() -> TestRepo {
    let repo = TestRepo::new();
    repo.write(
        "evalock.toml",
        "[[suite]]\nname = \"big\"\ncases = [\"evals/big.jsonl\"]\n",
    );
    repo.write("evals/big.jsonl", cases_file("a"));
    repo.commit_all("big suite");
    repo
}

/// The lock `evalock lock` writes for one variant of the cases, computed sequentially.
fn expected_lock(repo: &TestRepo, variant: &str) -> Vec<u8> {
    repo.write("evals/big.jsonl", cases_file(variant));
    repo.evalock(&["lock"]).assert_code(0);
    repo.read_bytes("evalock.lock")
}

/// Writes through a rename so each writer reads one whole variant of the cases.
fn switch_cases(repo: &TestRepo, variant: &str) {
    let staging = repo.join("evals/.big.jsonl.next");
    std::fs::write(&staging, cases_file(variant)).expect("write cases");
    std::fs::rename(&staging, repo.join("evals/big.jsonl")).expect("rename cases");
}

#[test]
fn two_concurrent_locks_leave_one_whole_lock_and_readers_never_see_half_of_one() {
    let repo = project();
    let lock_a = expected_lock(&repo, "a");
    let lock_b = expected_lock(&repo, "b");
    assert_ne!(lock_a, lock_b);
    let mut outcomes = std::collections::BTreeSet::new();
    for round in 0..ROUNDS {
        let (first, second) = if round % 2 == 0 {
            ("a", "b")
        } else {
            ("b", "a")
        };
        // Start from the other lock, so every round really writes.
        std::fs::write(
            repo.join("evalock.lock"),
            if first == "a" { &lock_b } else { &lock_a },
        )
        .expect("reset lock");
        switch_cases(&repo, first);
        let writers_done = AtomicBool::new(false);
        let torn_reads = std::thread::scope(|scope| {
            // A reader in a tight loop: every read must be one writer's whole lock.
            let reader = scope.spawn(|| {
                let mut torn = 0usize;
                while !writers_done.load(Ordering::Relaxed) {
                    let seen = std::fs::read(repo.join("evalock.lock")).unwrap_or_default();
                    if seen != lock_a && seen != lock_b {
                        torn += 1;
                    }
                }
                torn
            });
            let writer_one = repo.spawn_evalock(&["lock"]);
            let checker = repo.spawn_evalock(&["lock", "--check"]);
            switch_cases(&repo, second);
            let writer_two = repo.spawn_evalock(&["lock"]);
            for child in [writer_one, writer_two] {
                let output = child.wait_with_output().expect("wait");
                assert_eq!(
                    output.status.code(),
                    Some(0),
                    "{}",
                    String::from_utf8_lossy(&output.stderr)
                );
            }
            let checked = checker.wait_with_output().expect("wait");
            // 0 (up to date) or 2 (stale) are both honest; 65 would mean a torn read.
            assert!(
                matches!(checked.status.code(), Some(0 | 2)),
                "`lock --check` saw a broken lock: {}",
                String::from_utf8_lossy(&checked.stderr)
            );
            writers_done.store(true, Ordering::Relaxed);
            reader.join().expect("reader")
        });
        assert_eq!(
            torn_reads, 0,
            "round {round}: a reader saw a lock that was neither writer's whole output"
        );
        let written = repo.read_bytes("evalock.lock");
        assert!(
            written == lock_a || written == lock_b,
            "round {round}: the lock is neither writer's output"
        );
        evalock::project::lock::Lock::parse("evalock.lock", &written).expect("the lock parses");
        outcomes.insert(written == lock_a);
    }
    let leftovers: Vec<_> = std::fs::read_dir(repo.path())
        .expect("read dir")
        .flatten()
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with(".evalock-tmp-"))
        .collect();
    assert!(
        leftovers.is_empty(),
        "temp files left behind: {leftovers:?}"
    );
}

#[test]
fn many_concurrent_atomic_writes_of_different_sizes_never_mix() {
    // The library primitive itself, from many threads at once: every read sees exactly
    // one writer's bytes, never a prefix or a mix.
    let directory = tempfile::tempdir().expect("temp dir");
    let path = directory.path().join("evalock.lock");
    let contents: Vec<Vec<u8>> = (0..6)
        .map(|writer| vec![b'a' + writer as u8; 50_000 + writer * 37_000])
        .collect();
    evalock::source::atomic::write_atomic(&path, &contents[0]).expect("first write");
    std::thread::scope(|scope| {
        for content in &contents {
            let path = &path;
            scope.spawn(move || {
                for _ in 0..30 {
                    evalock::source::atomic::write_atomic(path, content).expect("atomic write");
                }
            });
        }
        scope.spawn(|| {
            for _ in 0..300 {
                let seen = std::fs::read(&path).expect("read");
                assert!(
                    contents.contains(&seen),
                    "read {} bytes that no writer wrote whole",
                    seen.len()
                );
            }
        });
    });
    let names: Vec<_> = std::fs::read_dir(directory.path())
        .expect("read dir")
        .flatten()
        .map(|entry| entry.file_name())
        .collect();
    assert_eq!(names.len(), 1, "temp files left behind: {names:?}");
}
