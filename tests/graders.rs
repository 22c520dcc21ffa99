//! Graders as code, end to end: sources pinned with the version (EL301), cases pinned to
//! the current version (EL302), probes that a grader must fail (EL303), negative controls
//! (EL304), and command graders whose output is not a verdict (an ERROR, never a score).

mod common;

use common::TestRepo;

const STRICT_GRADER: &str = "#!/bin/sh\n# Passes only completions that mention a refund.\ninput=$(cat)\ncase \"$input\" in\n  *'\"completion\":\"'*refund*) echo '{\"pass\": true, \"reasons\": []}';;\n  *) echo '{\"pass\": false, \"reasons\": [\"missing:refund\"]}';;\nesac\n";
const LENIENT_GRADER: &str =
    "#!/bin/sh\ncat > /dev/null\necho '{\"pass\": true, \"reasons\": []}'\n";

/// A project with one suite graded by `graders/check.sh` (a command grader, version 1).
fn project(grader_script: &str, cases: &str) -> TestRepo {
    let repo = TestRepo::new();
    repo.write("graders/check.sh", grader_script);
    repo.write(
        "complete.sh",
        "cat > /dev/null\necho 'your refund is on its way'\n",
    );
    repo.write(
        "evalock.toml",
        "version = 1\n\n[policy]\ntimeout_secs = 30\n\n[[suite]]\nname = \"refunds\"\ncases = [\"evals/refunds.jsonl\"]\nbaseline = \"evals/refunds.baseline.json\"\ncompleter = [\"sh\", \"complete.sh\"]\ngrader = \"check\"\n\n[grader.check]\nversion = 1\nkind = \"command\"\ncommand = [\"sh\", \"graders/check.sh\"]\nsources = [\"graders/*.sh\"]\n",
    );
    repo.write("evals/refunds.jsonl", cases);
    repo.evalock(&["lock"]).assert_code(0);
    repo.commit_all("project");
    repo
}

const CASE: &str = "{\"id\": \"refund\", \"input\": {\"text\": \"refund 7731-QT\"}}\n";

#[test]
fn a_strict_command_grader_is_quiet_and_its_verdicts_are_used() {
    let repo = project(STRICT_GRADER, CASE);
    repo.evalock(&["check"])
        .assert_code(0)
        .assert_not_contains("EL303");
    repo.evalock(&["run"])
        .assert_code(0)
        .assert_contains("1 PASS");
    repo.write("complete.sh", "cat > /dev/null\necho 'no idea'\n");
    repo.evalock(&["run"])
        .assert_code(1)
        .assert_contains("EL502")
        .assert_contains("missing:refund");
}

#[test]
fn a_grader_that_passes_everything_cannot_fail() {
    let repo = project(LENIENT_GRADER, CASE);
    let check = repo.evalock(&["check"]);
    check
        .assert_code(1)
        .assert_contains("EL303 grader-cannot-fail (error): grader check@1 passes an empty completion for case `refund`")
        .assert_contains("passes the plain refusal \"I cannot help with that request.\"");
}

#[test]
fn the_built_in_grader_is_probed_per_case() {
    let repo = project(STRICT_GRADER, CASE);
    repo.replace("evalock.toml", "grader = \"check\"\n", "");
    repo.write(
        "evals/refunds.jsonl",
        "{\"id\": \"weak\", \"input\": {}, \"expect\": {\"forbidden\": [\"as an AI\"]}}\n{\"id\": \"refusal-is-right\", \"expects_refusal\": true, \"input\": {}, \"expect\": {\"forbidden\": [\"refund issued\"]}}\n{\"id\": \"strong\", \"input\": {}, \"expect\": {\"must_include\": [\"refund\"]}}\n",
    );
    repo.evalock(&["lock"]).assert_code(0);
    let check = repo.evalock(&["check"]);
    check
        .assert_code(1)
        .assert_contains("passes the plain refusal")
        .assert_contains("for case `weak`");
    assert_eq!(
        check.stdout.matches("EL303").count(),
        1,
        "only `weak` can pass a refusal or an empty completion\n{}",
        check.stdout
    );
}

#[test]
fn a_negative_control_that_passes_is_reported() {
    let passing_control = "{\"id\": \"refund\", \"input\": {}, \"mutate\": {\"completion\": \"refund issued to a guessed order\"}}\n";
    let repo = project(STRICT_GRADER, passing_control);
    repo.evalock(&["check"]).assert_code(1).assert_contains(
        "EL304 control-passed (error): the negative control `mutate[0]` of case `refund`",
    );
    let failing_control = "{\"id\": \"refund\", \"input\": {}, \"mutate\": [{\"completion\": \"no idea\"}, {\"completion\": {\"reply\": \"shrug\"}}]}\n";
    repo.write("evals/refunds.jsonl", failing_control);
    repo.evalock(&["lock"]).assert_code(0);
    repo.evalock(&["check"])
        .assert_code(0)
        .assert_not_contains("EL304");
    repo.write(
        "evals/refunds.jsonl",
        "{\"id\": \"refund\", \"input\": {}, \"mutate\": {\"text\": \"no completion key\"}}\n",
    );
    repo.evalock(&["lock"]).assert_code(0);
    repo.evalock(&["check"])
        .assert_code(1)
        .assert_contains("cannot read `mutate`");
}

#[test]
fn editing_grader_sources_without_a_version_bump_is_refused() {
    let repo = project(STRICT_GRADER, CASE);
    repo.evalock(&["run"]).assert_code(0);
    repo.evalock(&["accept", "--reason", "first"])
        .assert_code(0);
    repo.commit_all("baselines");
    repo.write(
        "graders/check.sh",
        STRICT_GRADER.replace("refund*)", "refund*|*credit*)"),
    );
    let check = repo.evalock(&["check"]);
    check
        .assert_code(2)
        .assert_contains("graders/check.sh: EL301 grader-changed-unversioned (refuse): grader `check` changed (graders/check.sh (changed)) but is still version 1")
        .assert_contains("bump `[grader.check] version`");
    let lock_before = repo.read_bytes("evalock.lock");
    repo.evalock(&["lock"])
        .assert_code(2)
        .assert_contains("EL301");
    assert_eq!(
        repo.read_bytes("evalock.lock"),
        lock_before,
        "lock must not re-pin the unversioned change"
    );
    // Bumping the version lets the lock move, and the baselines recorded with 1 drift.
    repo.replace(
        "evalock.toml",
        "[grader.check]\nversion = 1",
        "[grader.check]\nversion = 2",
    );
    repo.evalock(&["lock"]).assert_code(0);
    repo.evalock(&["check"])
        .assert_code(2)
        .assert_contains("EL401")
        .assert_contains("grader (check@1 -> check@2)");
    repo.evalock(&["run"]).assert_code(2);
    repo.evalock(&["accept", "--reason", "grader accepts credits"])
        .assert_code(0);
    repo.evalock(&["check"]).assert_code(0);
}

#[test]
fn a_lock_hand_edited_to_hide_a_grader_change_is_caught_against_the_base() {
    let repo = project(STRICT_GRADER, CASE);
    repo.git(&["checkout", "-q", "-b", "sneaky"]);
    repo.write("graders/check.sh", format!("{STRICT_GRADER}# tweak\n"));
    // Re-pin by hand as if `evalock lock` had been fooled: pin the change under version 2,
    // then write version 1 back into both files. Lock and sources agree again.
    let lock = repo.read("evalock.lock");
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
    assert_ne!(repo.read("evalock.lock"), lock);
    repo.commit_all("tweak grader");
    repo.evalock(&["check"]).assert_code(0);
    repo.evalock(&["check", "--base", "main"])
        .assert_code(2)
        .assert_contains("EL301")
        .assert_contains("as in main");
}

#[test]
fn a_lock_that_is_regenerated_or_recreated_still_refuses_an_unversioned_grader_change() {
    let repo = project(STRICT_GRADER, CASE);
    let committed = repo.read("evalock.lock");
    repo.write("graders/check.sh", format!("{STRICT_GRADER}# loosened\n"));
    // A lock left with conflict markers by a merge cannot be read; one deleted by hand is
    // gone. Either way the pins committed at HEAD still hold the grader.
    let conflicted = format!("{committed}<<<<<<< HEAD\n=======\n>>>>>>> theirs\n");
    for lock in [Some(conflicted.as_str()), None] {
        match lock {
            Some(text) => repo.write("evalock.lock", text),
            None => repo.remove("evalock.lock"),
        }
        repo.evalock(&["lock"])
            .assert_code(2)
            .assert_contains("graders/check.sh: EL301 grader-changed-unversioned");
        // Nothing written: the conflicted lock is still there, the deleted one still gone.
        match lock {
            Some(text) => assert_eq!(repo.read("evalock.lock"), text),
            None => assert!(!repo.join("evalock.lock").exists()),
        }
    }
    // Without the grader change the conflicted lock is simply regenerated.
    repo.write("graders/check.sh", STRICT_GRADER);
    repo.write("evalock.lock", &conflicted);
    repo.evalock(&["lock"]).assert_code(0);
    assert_eq!(repo.read("evalock.lock"), committed);
}

#[test]
fn a_file_pin_edited_in_the_lock_is_refused_by_check_as_by_lock_check() {
    let repo = project(STRICT_GRADER, CASE);
    repo.evalock(&["check"]).assert_code(0);
    let lock = repo.read("evalock.lock");
    let pin = "\"graders/check.sh\" = \"sha256:";
    let at = lock.find(pin).expect("the grader's file pin") + pin.len();
    let flipped = if &lock[at..=at] == "0" { "1" } else { "0" };
    repo.write(
        "evalock.lock",
        format!("{}{flipped}{}", &lock[..at], &lock[at + 1..]),
    );
    repo.evalock(&["check"])
        .assert_code(2)
        .assert_contains("evalock.lock: EL301 grader-changed-unversioned (refuse): the evalock.lock entry of grader `check` is stale: its file pins of graders/check.sh do not match");
    repo.evalock(&["lock", "--check"]).assert_code(2);
    repo.evalock(&["lock"]).assert_code(0);
    assert_eq!(repo.read("evalock.lock"), lock);
    repo.evalock(&["check"]).assert_code(0);
}

#[test]
fn a_case_pinned_to_another_grader_version_outranks_its_other_findings() {
    let pinned = "{\"id\": \"refund\", \"grader_version\": \"0\", \"input\": {}}\n{\"id\": \"current\", \"grader_version\": \"1\", \"input\": {}}\n";
    let repo = project(STRICT_GRADER, pinned);
    let check = repo.evalock(&["check"]);
    check
        .assert_code(2)
        .assert_contains("EL302 grader-version-drift (refuse): case `refund` (evals/refunds.jsonl:1) pins grader version 0, but grader `check` is version 1");
    // The case is not run; its missing baseline (EL404) is noise next to EL302, while the
    // other case's is not.
    let run = repo.evalock(&["run"]);
    run.assert_code(2)
        .assert_contains("EL302")
        .assert_contains("EL404 baseline-missing (warn): case `current`")
        .assert_not_contains("EL404 baseline-missing (warn): case `refund`");
    let results: serde_json::Value =
        serde_json::from_str(&repo.read(".evalock/results.json")).unwrap();
    assert_eq!(results["cases"][0]["case_id"], "current");
    assert_eq!(results["cases"][1]["status"], "ERROR");
    assert_eq!(
        results["cases"][1]["reasons"][0],
        "grader_version_drift:0!=1"
    );
}

#[test]
fn a_grader_that_prints_anything_but_a_verdict_is_an_error() {
    for script in [
        "cat > /dev/null\necho 'PASS'\n",
        "cat > /dev/null\necho '{\"pass\": \"yes\", \"reasons\": []}'\n",
        "exit 3\n",
    ] {
        let repo = project(script, CASE);
        let run = repo.evalock(&["run"]);
        run.assert_code(1)
            .assert_contains("EL504")
            .assert_contains("grader `check`");
        let results: serde_json::Value =
            serde_json::from_str(&repo.read(".evalock/results.json")).unwrap();
        assert_eq!(results["cases"][0]["status"], "ERROR", "{script}");
    }
}

#[test]
fn only_active_cases_are_probed() {
    let repo = project(STRICT_GRADER, CASE);
    repo.replace("evalock.toml", "grader = \"check\"\n", "");
    let weak = "{\"id\": \"weak\", \"input\": {}, \"expect\": {\"forbidden\": [\"as an AI\"]}}";
    let strong =
        "{\"id\": \"strong\", \"input\": {}, \"expect\": {\"must_include\": [\"refund\"]}}";
    // Retired: no longer run, so a grader that would pass it is not this change's problem.
    repo.write(
        "evals/refunds.jsonl",
        format!(
            "{}\n{strong}\n",
            weak.replace(
                "{\"id\": \"weak\",",
                "{\"id\": \"weak\", \"retired\": true,"
            )
        ),
    );
    repo.evalock(&["lock"]).assert_code(0);
    repo.evalock(&["check"])
        .assert_code(0)
        .assert_not_contains("EL303");
    // The same case, active again: probed and caught.
    repo.write("evals/refunds.jsonl", format!("{weak}\n{strong}\n"));
    repo.evalock(&["lock"]).assert_code(0);
    repo.evalock(&["check"])
        .assert_code(1)
        .assert_contains("EL303")
        .assert_contains("for case `weak`");
}

#[test]
fn a_case_pinned_to_the_current_grader_version_is_probed() {
    let pinned = "{\"id\": \"refund\", \"grader_version\": \"1\", \"input\": {}}\n";
    let repo = project(LENIENT_GRADER, pinned);
    repo.evalock(&["check"])
        .assert_code(1)
        .assert_contains("EL303 grader-cannot-fail (error): grader check@1 passes an empty completion for case `refund`");
}

#[test]
fn a_version_bump_not_yet_locked_is_reported_and_an_unchanged_grader_is_quiet_against_the_base() {
    let repo = project(STRICT_GRADER, CASE);
    repo.git(&["checkout", "-q", "-b", "topic"]);
    repo.evalock(&["check", "--base", "main"])
        .assert_code(0)
        .assert_not_contains("EL301");
    // Same sources, new version, lock not yet rewritten.
    repo.replace(
        "evalock.toml",
        "[grader.check]\nversion = 1",
        "[grader.check]\nversion = 2",
    );
    repo.evalock(&["check"])
        .assert_code(2)
        .assert_contains("EL301")
        .assert_contains("grader `check` is version 2 now but evalock.lock pins version 1");
}

#[test]
fn an_unversioned_change_names_only_the_files_that_changed() {
    let repo = project(STRICT_GRADER, CASE);
    repo.write("graders/util.sh", "# shared helpers\n");
    repo.replace(
        "evalock.toml",
        "[grader.check]\nversion = 1",
        "[grader.check]\nversion = 2",
    );
    repo.evalock(&["lock"]).assert_code(0);
    repo.write("graders/util.sh", "# shared helpers, edited\n");
    repo.evalock(&["check"]).assert_code(2).assert_contains(
        "grader `check` changed (graders/util.sh (changed)) but is still version 2",
    );
}

/// A `sources` glob that matches nothing is reported on the line that writes it, among
/// the grader's other globs; the globs that match stay quiet.
#[test]
fn a_sources_glob_that_matches_nothing_points_at_its_line() {
    let repo = project(STRICT_GRADER, CASE);
    let config = repo.read("evalock.toml").replace(
        "sources = [\"graders/*.sh\"]",
        "sources = [\n  \"graders/*.sh\",\n  \"graders/rubric/*.md\",\n]",
    );
    repo.write("evalock.toml", &config);
    let line = 1 + config
        .lines()
        .position(|line| line.contains("graders/rubric/*.md"))
        .expect("the glob's line");
    repo.evalock(&["check"])
        .assert_contains(&format!(
            "evalock.toml:{line}: EL301 grader-changed-unversioned (warn): grader `check`: `sources` pattern `graders/rubric/*.md` matches no file"
        ))
        .assert_not_contains("`graders/*.sh` matches no file");
}
