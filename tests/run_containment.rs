//! Completer containment beyond the process group: a grandchild that calls `setsid`
//! (a new session, so it escapes the group kill) must still die with the run, both when
//! the completer times out and when it exits normally leaving the grandchild behind.
//! Linux only: elsewhere evalock kills the process group alone (see src/run/contain.rs).
//!
//! Seen failing: with the evalock of main before containment (group kill only), both
//! tests fail with "process … outlived the run": the `sleep 1000` lives on under init.
#![cfg(target_os = "linux")]

mod common;

use common::{process_is_gone, TestRepo};
use std::time::Duration;

const CASE: &str =
    r#"{"id": "greet", "input": {"text": "hi"}, "expect": {"must_include": ["hello"]}}"#;

/// Starts a grandchild in its own session that writes its pid and hangs; waits until the
/// pid is written, so the grandchild has certainly left the group before what follows.
const ESCAPE: &str = "cat > /dev/null\n\
setsid sh -c 'echo $$ > grandchild.pid; exec sleep 1000' < /dev/null > /dev/null 2>&1 &\n\
while [ ! -s grandchild.pid ]; do sleep 0.01; done\n";

fn project(timeout_secs: u32, script: &str) -> TestRepo {
    let repo = TestRepo::new();
    repo.write("complete.sh", script);
    repo.write(
        "evalock.toml",
        format!(
            "version = 1\n\n[policy]\ntimeout_secs = {timeout_secs}\n\n[[suite]]\nname = \"mini\"\ncases = [\"evals/mini.jsonl\"]\ncompleter = [\"sh\", \"complete.sh\"]\n"
        ),
    );
    repo.write("evals/mini.jsonl", format!("{CASE}\n"));
    repo.evalock(&["lock"]).assert_code(0);
    repo.commit_all("mini project");
    repo
}

/// Asserts the grandchild died with the run; kills it first if not, so a failing test
/// leaves nothing behind.
fn assert_grandchild_gone(repo: &TestRepo) {
    let pid = repo.read("grandchild.pid").trim().to_owned();
    assert!(!pid.is_empty(), "the grandchild wrote its pid");
    // evalock kills and reaps it before exiting; a short poll only absorbs /proc lag.
    let gone = (0..100).any(|_| {
        let gone = process_is_gone(&pid);
        if !gone {
            std::thread::sleep(Duration::from_millis(10));
        }
        gone
    });
    if !gone {
        let _ = std::process::Command::new("kill")
            .args(["-9", &pid])
            .status();
    }
    assert!(gone, "process {pid} (setsid grandchild) outlived the run");
}

#[test]
fn a_setsid_grandchild_dies_when_the_completer_times_out() {
    let repo = project(2, &format!("{ESCAPE}sleep 1000\n"));
    repo.evalock(&["run"])
        .assert_code(1)
        .assert_contains("EL504")
        .assert_contains("timed out after 2s");
    assert_grandchild_gone(&repo);
}

#[test]
fn a_setsid_grandchild_left_behind_by_a_finished_completer_dies_with_the_run() {
    let repo = project(30, &format!("{ESCAPE}echo hello\n"));
    let run = repo.evalock(&["run"]);
    run.assert_code(0);
    assert_grandchild_gone(&repo);
}
