//! `evalock calibrate` against people's labels (the seeds' "The Overly Generous AI
//! Judge"): a grader that passes what people failed is named by its false-success rate and
//! is uncalibrated (exit 1); one that agrees is calibrated (exit 0); labels that are not
//! labels are refused at their line.

mod common;

use common::TestRepo;

fn project() -> TestRepo {
    let repo = TestRepo::new();
    repo.write(
        "evalock.toml",
        "version = 1\n\n[[suite]]\nname = \"support\"\ncases = [\"evals/support.jsonl\"]\n",
    );
    repo.write(
        "evals/support.jsonl",
        "{\"id\": \"warranty\", \"input\": \"How long is the warranty?\", \"expect\": {\"must_include\": [\"2 years\"]}}\n",
    );
    repo.evalock(&["lock"]).assert_code(0);
    repo
}

fn label(completion: &str, verdict: &str) -> String {
    format!("{{\"case_id\": \"warranty\", \"completion\": \"{completion}\", \"verdict\": \"{verdict}\", \"labeller\": \"ana\"}}\n")
}

/// `tp` right answers, `fp` wrong ones the grader lets through, `tn` wrong ones it fails,
/// `fn_` right ones it fails.
fn labels(tp: usize, fp: usize, tn: usize, fn_: usize) -> String {
    let mut text = String::new();
    text.push_str(&label("The kettle has a 2 years warranty.", "pass").repeat(tp));
    text.push_str(
        &label(
            "2 years, but only if you buy our extended plan for $99.",
            "fail",
        )
        .repeat(fp),
    );
    text.push_str(&label("I am not sure.", "fail").repeat(tn));
    text.push_str(&label("The warranty lasts two years.", "pass").repeat(fn_));
    text
}

#[test]
fn a_generous_grader_is_uncalibrated_and_named_by_its_false_successes() {
    let repo = project();
    repo.write("labels.jsonl", labels(12, 6, 6, 0));
    repo.evalock(&["calibrate", "--labels", "labels.jsonl"])
        .assert_code(1)
        .assert_contains(
            "evalock calibrate: suite support, grader builtin@1, 24 labels from labels.jsonl",
        )
        .assert_contains("false success   0.50 [")
        .assert_contains("(the grader passes 6 of the 12 completions people failed)")
        .assert_contains("uncalibrated: agreement 0.75 below 0.8");
    let json = repo.evalock(&[
        "calibrate",
        "--suite",
        "support",
        "--labels",
        "labels.jsonl",
        "--format",
        "json",
    ]);
    let document: serde_json::Value = serde_json::from_str(&json.stdout).expect("json");
    assert_eq!(document[0]["fp"], 6);
    assert_eq!(document[0]["false_success"]["value"], 0.5);
}

#[test]
fn a_grader_that_agrees_with_people_is_calibrated() {
    let repo = project();
    repo.write("labels.jsonl", labels(12, 1, 10, 1));
    repo.evalock(&[
        "calibrate",
        "--grader",
        "builtin",
        "--labels",
        "labels.jsonl",
    ])
    .assert_code(0)
    .assert_contains("agreement       0.92 [")
    .assert_contains("calibrated: meets the floors (20 labels, agreement 0.8, kappa 0.6)");
    repo.write("few.jsonl", labels(5, 0, 5, 0));
    repo.evalock(&["calibrate", "--labels", "few.jsonl"])
        .assert_code(1)
        .assert_contains("uncalibrated: 10 labels, fewer than 20");
}

#[test]
fn labels_that_are_not_labels_are_refused_at_their_line() {
    let repo = project();
    repo.write(
        "labels.jsonl",
        format!(
            "{}{{\"case_id\": \"nope\", \"completion\": \"x\", \"verdict\": \"pass\"}}\n",
            label("2 years", "pass")
        ),
    );
    repo.evalock(&["calibrate", "--labels", "labels.jsonl"])
        .assert_code(65)
        .assert_contains("labels.jsonl:2")
        .assert_contains("names case `nope`, which suite `support` does not have");
    repo.write(
        "labels.jsonl",
        "{\"case_id\": \"warranty\", \"completion\": \"x\", \"verdict\": \"maybe\"}\n",
    );
    repo.evalock(&["calibrate", "--labels", "labels.jsonl"])
        .assert_code(65)
        .assert_contains("labels.jsonl:1")
        .assert_contains("`verdict` is \"pass\" or \"fail\"");
    repo.evalock(&["calibrate", "--suite", "other", "--labels", "labels.jsonl"])
        .assert_code(64)
        .assert_contains("no suite `other`");
}

/// A project whose grader `judge` names `labels.jsonl`, answered by a completer that
/// gives the right answer.
fn pinned_project(labels_text: &str) -> TestRepo {
    let repo = TestRepo::new();
    repo.write(
        "evalock.toml",
        "version = 1\n\n[grader.judge]\nversion = 1\nlabels = \"labels.jsonl\"\n\n[[suite]]\nname = \"support\"\ncases = [\"evals/support.jsonl\"]\ngrader = \"judge\"\ncompleter = [\"sh\", \"tools/answer.sh\"]\n",
    );
    repo.write(
        "evals/support.jsonl",
        "{\"id\": \"warranty\", \"input\": \"How long is the warranty?\", \"expect\": {\"must_include\": [\"2 years\"]}}\n",
    );
    repo.write(
        "tools/answer.sh",
        "#!/bin/sh\ncat > /dev/null\necho 'The kettle has a 2 years warranty.'\n",
    );
    repo.write("labels.jsonl", labels_text);
    repo.evalock(&["lock"]).assert_code(0);
    repo
}

#[test]
fn the_lock_pins_a_calibration_and_editing_the_labels_or_the_version_reopens_it() {
    let repo = pinned_project(&labels(12, 1, 10, 1));
    let lock = repo.read("evalock.lock");
    assert!(
        lock.contains("[grader.judge.calibration]\nlabels = \"sha256:")
            && lock.contains("version = \"1\"\ntp = 12\nfp = 1\ntn = 10\nfn = 1\n"),
        "{lock}"
    );
    repo.evalock(&["check"]).assert_code(0);
    repo.evalock(&["run"]).assert_code(0);
    // The calibration without `--labels`: the grader's own file.
    repo.evalock(&["calibrate", "--grader", "judge"])
        .assert_code(0)
        .assert_contains("24 labels from labels.jsonl");
    // Labels edited: the pin is stale until `lock` measures again.
    repo.write("labels.jsonl", labels(12, 2, 9, 1));
    repo.evalock(&["check"])
        .assert_code(2)
        .assert_contains("evalock.toml:3: EL306 calibration-stale (refuse): labels.jsonl changed since evalock.lock measured grader `judge` against it");
    repo.evalock(&["run"])
        .assert_code(1)
        .assert_contains("EL307 grader-uncalibrated");
    repo.evalock(&["lock"]).assert_code(0);
    repo.evalock(&["check"]).assert_code(0);
    // A version bump re-opens it too.
    repo.replace("evalock.toml", "version = 1\nlabels", "version = 2\nlabels");
    repo.evalock(&["check"])
        .assert_code(2)
        .assert_contains("measured grader `judge` at version 1, and it is version 2 now");
    repo.evalock(&["lock"]).assert_code(0);
    // Counts written by hand are not what the labels give.
    repo.replace("evalock.lock", "fp = 2\n", "fp = 0\n");
    repo.evalock(&["check"])
        .assert_code(2)
        .assert_contains("and the labels give 24 labels (both pass 12, false successes 2");
}

#[test]
fn an_uncalibrated_grader_warns_in_check_and_its_passes_cannot_make_a_run_green() {
    let repo = pinned_project(&labels(12, 6, 6, 0));
    repo.evalock(&["check"])
        .assert_code(0)
        .assert_contains("EL307 grader-uncalibrated (warn): grader `judge` is uncalibrated against labels.jsonl: agreement 0.75 below 0.8, κ 0.50 below 0.6; it passes 50 % of what people failed");
    let run = repo.evalock(&["run"]);
    run.assert_code(1)
        .assert_contains("EL307 grader-uncalibrated (error)")
        .assert_contains("its passes cannot make a run green");
    // A grader without labels is not judged by them.
    repo.replace("evalock.toml", "labels = \"labels.jsonl\"\n", "");
    repo.evalock(&["lock"]).assert_code(0);
    assert!(!repo.read("evalock.lock").contains("calibration"));
    repo.evalock(&["run"]).assert_code(0);
}

#[test]
fn dropping_a_graders_labels_is_a_loosening_against_the_base() {
    let repo = pinned_project(&labels(12, 1, 10, 1));
    repo.commit_all("calibrated judge");
    repo.git(&["switch", "-q", "-c", "drop-labels"]);
    repo.replace("evalock.toml", "labels = \"labels.jsonl\"\n", "");
    repo.evalock(&["lock"]).assert_code(0);
    repo.commit_all("no more labels");
    repo.evalock(&["check", "--base", "main"])
        .assert_code(2)
        .assert_contains("evalock.toml:3: EL110 policy-loosened (refuse): evalock.toml drops grader `judge`'s labels (labels.jsonl)");
    // Keeping them (another labels file) is no loosening.
    repo.replace(
        "evalock.toml",
        "version = 1\n\n[[suite]]",
        "version = 1\nlabels = \"labels.jsonl\"\n\n[[suite]]",
    );
    repo.evalock(&["lock"]).assert_code(0);
    repo.commit_all("labels back");
    repo.evalock(&["check", "--base", "main"]).assert_code(0);
}
