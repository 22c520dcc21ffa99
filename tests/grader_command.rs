//! What a grader runs is pinned with its version, like its sources: a command grader's
//! argv (or its kind) changed without a version bump is EL301, against the lock and
//! against `--base`, even when the new command names a script outside `sources`.

mod common;

use common::TestRepo;

const STRICT_GRADER: &str = "#!/bin/sh\n# Passes only completions that mention a refund.\ninput=$(cat)\ncase \"$input\" in\n  *'\"completion\":\"'*refund*) echo '{\"pass\": true, \"reasons\": []}';;\n  *) echo '{\"pass\": false, \"reasons\": [\"missing:refund\"]}';;\nesac\n";
const LENIENT_GRADER: &str =
    "#!/bin/sh\ncat > /dev/null\necho '{\"pass\": true, \"reasons\": []}'\n";
const CASE: &str = "{\"id\": \"refund\", \"input\": {\"text\": \"refund 7731-QT\"}}\n";
const COMMAND: &str = "command = [\"sh\", \"graders/check.sh\"]";
/// The line of `command` in the evalock.toml of [`project`].
const COMMAND_LINE: u32 = 16;

/// A project with one suite graded by `graders/check.sh` (a command grader, version 1),
/// its baseline accepted and committed on `main`.
fn project() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("graders/check.sh", STRICT_GRADER);
    repo.write(
        "complete.sh",
        "cat > /dev/null\necho 'your refund is on its way'\n",
    );
    repo.write(
        "evalock.toml",
        format!("version = 1\n\n[policy]\ntimeout_secs = 30\n\n[[suite]]\nname = \"refunds\"\ncases = [\"evals/refunds.jsonl\"]\nbaseline = \"evals/refunds.baseline.json\"\ncompleter = [\"sh\", \"complete.sh\"]\ngrader = \"check\"\n\n[grader.check]\nversion = 1\nkind = \"command\"\n{COMMAND}\nsources = [\"graders/*.sh\"]\n"),
    );
    assert_eq!(
        repo.read("evalock.toml")
            .lines()
            .position(|line| line == COMMAND),
        Some(COMMAND_LINE as usize - 1)
    );
    repo.write("evals/refunds.jsonl", CASE);
    repo.evalock(&["lock"]).assert_code(0);
    repo.evalock(&["run"]).assert_code(0);
    repo.evalock(&["accept", "--reason", "first"])
        .assert_code(0);
    repo.commit_all("project");
    repo
}

fn unversioned(against: &str, now: &str, before: &str) -> String {
    format!("evalock.toml:{COMMAND_LINE}: EL301 grader-changed-unversioned (refuse): grader `check` changed (runs {now} instead of {before}) but is still version 1 as in {against}")
}

const PINNED_ARGV: &str = "[\"sh\", \"graders/check.sh\"]";

#[test]
fn a_changed_argv_without_a_version_bump_is_refused_and_never_re_pinned() {
    // A new script outside `sources`, and an added flag to the pinned one.
    let changes = [
        (
            "command = [\"sh\", \"lenient.sh\"]",
            "[\"sh\", \"lenient.sh\"]",
        ),
        (
            "command = [\"sh\", \"graders/check.sh\", \"--lenient\"]",
            "[\"sh\", \"graders/check.sh\", \"--lenient\"]",
        ),
    ];
    for (command, argv) in changes {
        let repo = project();
        repo.write("lenient.sh", LENIENT_GRADER);
        repo.replace("evalock.toml", COMMAND, command);
        repo.evalock(&["check"])
            .assert_code(2)
            .assert_contains(&unversioned("evalock.lock", argv, PINNED_ARGV))
            .assert_contains("bump `[grader.check] version` in evalock.toml, run `evalock lock`");
        repo.evalock(&["lock", "--check"])
            .assert_code(2)
            .assert_contains("EL301");
        let lock_before = repo.read_bytes("evalock.lock");
        repo.evalock(&["lock"])
            .assert_code(2)
            .assert_contains("EL301");
        assert_eq!(
            repo.read_bytes("evalock.lock"),
            lock_before,
            "lock must not re-pin the unversioned change"
        );
        // A worse completion passes the loosened grader: the run is refused, and its
        // verdicts are never recorded as last-good.
        repo.write("complete.sh", "cat > /dev/null\necho 'no idea'\n");
        repo.evalock(&["run"])
            .assert_code(2)
            .assert_contains("EL301")
            .assert_contains("BLOCK");
        let baseline_before = repo.read_bytes("evals/refunds.baseline.json");
        repo.evalock(&["accept", "--reason", "looks fine"])
            .assert_code(2)
            .assert_contains("refused: grader `check` changed (runs ")
            .assert_contains("nothing was written");
        assert_eq!(
            repo.read_bytes("evals/refunds.baseline.json"),
            baseline_before
        );
    }
}

#[test]
fn switching_a_command_grader_to_the_built_in_one_is_a_change_too() {
    let repo = project();
    repo.replace(
        "evalock.toml",
        "kind = \"command\"\n",
        "kind = \"builtin\"\n",
    );
    repo.evalock(&["check"])
        .assert_code(2)
        .assert_contains(&unversioned(
            "evalock.lock",
            "the built-in grader",
            PINNED_ARGV,
        ));
}

#[test]
fn a_lock_regenerated_over_a_changed_argv_is_caught_against_the_base() {
    let repo = project();
    repo.git(&["checkout", "-q", "-b", "sneaky"]);
    repo.write("lenient.sh", LENIENT_GRADER);
    repo.replace(
        "evalock.toml",
        COMMAND,
        "command = [\"sh\", \"lenient.sh\"]",
    );
    // Re-pin as if `evalock lock` had been fooled: pin the change under version 2, then
    // write version 1 back into both files. Lock and config agree again.
    let config = repo.read("evalock.toml");
    repo.replace(
        "evalock.toml",
        "[grader.check]\nversion = 1",
        "[grader.check]\nversion = 2",
    );
    repo.evalock(&["lock"]).assert_code(0);
    repo.write("evalock.toml", &config);
    repo.replace(
        "evalock.lock",
        "[grader.check]\nversion = \"2\"",
        "[grader.check]\nversion = \"1\"",
    );
    assert!(repo
        .read("evalock.lock")
        .contains("command = [\"sh\", \"lenient.sh\"]\n"));
    repo.commit_all("loosen the grader");
    // Against its own lock only the gaps show: a script outside `sources`, and a grader
    // that passes anything.
    repo.evalock(&["check"])
        .assert_code(1)
        .assert_contains("evalock.toml:16: EL301 grader-changed-unversioned (warn): grader `check` runs `lenient.sh`, which no `sources` pattern matches, so edits to it are not pinned")
        .assert_contains("EL303")
        .assert_not_contains("(refuse)");
    repo.evalock(&["check", "--base", "main"])
        .assert_code(2)
        .assert_contains(&unversioned(
            "main",
            "[\"sh\", \"lenient.sh\"]",
            PINNED_ARGV,
        ));
}

#[test]
fn an_unchanged_argv_is_quiet_and_its_pin_is_in_the_lock() {
    let repo = project();
    let lock = repo.read("evalock.lock");
    assert!(
        lock.contains("[grader.check]\nversion = \"1\"\nkind = \"command\"\ncommand = [\"sh\", \"graders/check.sh\"]\ndigest = \"sha256:"),
        "{lock}"
    );
    repo.git(&["checkout", "-q", "-b", "topic"]);
    // Formatting the array differently is not a change of what runs.
    repo.replace(
        "evalock.toml",
        COMMAND,
        "command = [ 'sh',\n  \"graders/check.sh\" ]",
    );
    repo.evalock(&["lock", "--check"]).assert_code(0);
    repo.evalock(&["check"])
        .assert_code(0)
        .assert_not_contains("EL301");
    repo.commit_all("reformat");
    repo.evalock(&["check", "--base", "main"])
        .assert_code(0)
        .assert_not_contains("EL301");
}

#[test]
fn a_changed_argv_with_a_version_bump_drifts_the_baselines_as_a_source_change_does() {
    let repo = project();
    repo.git(&["checkout", "-q", "-b", "topic"]);
    repo.write("graders/strict.sh", STRICT_GRADER);
    repo.replace(
        "evalock.toml",
        COMMAND,
        "command = [\"sh\", \"graders/strict.sh\"]",
    );
    repo.replace(
        "evalock.toml",
        "[grader.check]\nversion = 1",
        "[grader.check]\nversion = 2",
    );
    repo.evalock(&["lock"]).assert_code(0);
    repo.evalock(&["check"])
        .assert_code(2)
        .assert_not_contains("EL301")
        .assert_contains("EL401")
        .assert_contains("grader (check@1 -> check@2)");
    repo.evalock(&["run"]).assert_code(2);
    repo.evalock(&["accept", "--reason", "the grader moved to strict.sh"])
        .assert_code(0);
    repo.evalock(&["check"]).assert_code(0);
    repo.commit_all("move the grader");
    repo.evalock(&["check", "--base", "main"])
        .assert_code(0)
        .assert_not_contains("EL301");
}

#[test]
fn a_lock_that_predates_pinning_the_argv_asks_for_evalock_lock() {
    let repo = project();
    let pinned = "kind = \"command\"\ncommand = [\"sh\", \"graders/check.sh\"]\n";
    repo.replace("evalock.lock", pinned, "");
    repo.evalock(&["check"])
        .assert_code(2)
        .assert_contains("EL301 grader-changed-unversioned (refuse): grader `check`: evalock.lock pins its sources but not what it runs (`kind`, `command`); it was written by an earlier evalock")
        .assert_contains("run `evalock lock`");
    // Nothing pinned to compare with: `lock` pins what is configured, at the same version.
    repo.evalock(&["lock"]).assert_code(0);
    assert!(repo.read("evalock.lock").contains(pinned));
    repo.evalock(&["check"]).assert_code(0);
}

#[test]
fn the_demo_grader_swapped_for_a_lenient_script_is_refused_at_its_line() {
    let repo = TestRepo::with_fixture("demo");
    repo.evalock(&["lock", "--check"])
        .assert_not_contains("EL301");
    repo.write(
        "lenient.py",
        "import sys\nsys.stdin.read()\nprint('{\"pass\": true, \"reasons\": []}')\n",
    );
    repo.replace(
        "evalock.toml",
        "command = [\"python3\", \"graders/escalation.py\"]",
        "command = [\"python3\", \"lenient.py\"]",
    );
    repo.evalock(&["check"])
        .assert_code(2)
        .assert_contains("evalock.toml:35: EL301 grader-changed-unversioned (refuse): grader `escalation` changed (runs [\"python3\", \"lenient.py\"] instead of [\"python3\", \"graders/escalation.py\"]) but is still version 1 as in evalock.lock");
}

#[test]
fn a_file_the_command_runs_outside_sources_is_a_warning_until_it_is_pinned() {
    let repo = project();
    repo.write("tools/helper.sh", LENIENT_GRADER);
    repo.replace(
        "evalock.toml",
        COMMAND,
        "command = [\"sh\", \"./graders/check.sh\", \"tools/helper.sh\", \"--strict\"]",
    );
    repo.replace(
        "evalock.toml",
        "[grader.check]\nversion = 1",
        "[grader.check]\nversion = 2",
    );
    repo.evalock(&["lock"]).assert_code(0);
    let check = repo.evalock(&["check"]);
    check
        .assert_contains("EL301 grader-changed-unversioned (warn): grader `check` runs `tools/helper.sh`, which no `sources` pattern matches")
        .assert_contains("add `tools/helper.sh` to `[grader.check] sources`")
        .assert_not_contains("runs `graders/check.sh`")
        .assert_not_contains("--strict`");
    repo.replace(
        "evalock.toml",
        "sources = [\"graders/*.sh\"]",
        "sources = [\"graders/*.sh\", \"tools/helper.sh\"]",
    );
    repo.replace(
        "evalock.toml",
        "[grader.check]\nversion = 2",
        "[grader.check]\nversion = 3",
    );
    repo.evalock(&["lock"]).assert_code(0);
    repo.evalock(&["check"]).assert_not_contains("EL301");
}
