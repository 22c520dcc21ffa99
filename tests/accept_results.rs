//! What `evalock accept` trusts of a results file: nothing it can verify without running
//! anything again. A status, completion or sample verdict edited after the run, or results
//! produced by another completer than the one configured now, are refused (exit 2) with
//! the case and the file named, and nothing is written.

mod common;

use common::TestRepo;
use serde_json::Value;

const RESULTS: &str = ".evalock/results.json";
const BASELINE: &str = "evals/exact.baseline.json";

/// Two suites graded by the built-in grader: `exact` keeps completions as produced,
/// `spaced` collapses whitespace. In each, case `ok` passes and case `bad` fails.
fn graded_project() -> TestRepo {
    let repo = TestRepo::new();
    repo.write(".gitignore", ".evalock/\n");
    repo.write(
        "evalock.toml",
        "version = 1\n\n[[suite]]\nname = \"exact\"\ncases = [\"evals/exact.jsonl\"]\nbaseline = \"evals/exact.baseline.json\"\n\n[[suite]]\nname = \"spaced\"\ncases = [\"evals/spaced.jsonl\"]\nbaseline = \"evals/spaced.baseline.json\"\nnormalizer = \"ws-v1\"\n",
    );
    let cases = "{\"id\": \"ok\", \"version\": 1, \"input\": \"hi\", \"expect\": {\"must_include\": \"order\"}}\n{\"id\": \"bad\", \"version\": 1, \"input\": \"hi\", \"expect\": {\"must_include\": \"order\"}}\n";
    repo.write("evals/exact.jsonl", cases);
    repo.write("evals/spaced.jsonl", cases);
    repo.write(
        "completions.jsonl",
        "{\"suite\": \"exact\", \"case_id\": \"ok\", \"completion\": \"Your order ships today.\"}\n{\"suite\": \"exact\", \"case_id\": \"bad\", \"completion\": \"No idea.\"}\n{\"suite\": \"spaced\", \"case_id\": \"ok\", \"completion\": \"Your  order ships.\"}\n{\"suite\": \"spaced\", \"case_id\": \"bad\", \"completion\": \"No idea.\"}\n",
    );
    repo.evalock(&["lock"]).assert_code(0);
    repo.evalock(&["run", "--completions", "completions.jsonl"])
        .assert_code(1);
    repo
}

fn results(repo: &TestRepo) -> Value {
    serde_json::from_str(&repo.read(RESULTS)).expect("results parse")
}

/// Edits one case of the results file by hand.
fn edit_case(repo: &TestRepo, suite: &str, id: &str, edit: impl FnOnce(&mut Value)) {
    let mut value = results(repo);
    let case = value["cases"]
        .as_array_mut()
        .expect("cases")
        .iter_mut()
        .find(|case| case["suite"] == suite && case["case_id"] == id)
        .expect("the case ran");
    edit(case);
    repo.write(
        RESULTS,
        serde_json::to_string_pretty(&value).expect("render"),
    );
}

/// accept refuses, naming the case and the results file, and writes nothing.
fn assert_refused(repo: &TestRepo, case: &str, why: &str) {
    repo.evalock(&["accept", "--reason", "looks right"])
        .assert_code(2)
        .assert_contains(&format!("refused: case `{case}` in {RESULTS}: {why}"))
        .assert_contains("run `evalock run --suite")
        .assert_contains("nothing was written");
    assert!(!repo.join(BASELINE).exists(), "accept wrote a baseline");
    assert!(!repo.join("evals/spaced.baseline.json").exists());
}

#[test]
fn an_untouched_results_file_is_accepted() {
    let repo = graded_project();
    repo.evalock(&["accept", "--reason", "first recording"])
        .assert_code(0);
    let baseline: Value = serde_json::from_str(&repo.read(BASELINE)).expect("baseline");
    assert_eq!(
        baseline["entries"]["ok"]["completion"],
        "Your order ships today."
    );
    assert!(baseline["entries"].get("bad").is_none());
    // Known failures re-grade as the failures they are.
    repo.evalock(&["accept", "--reason", "known", "--include-failing"])
        .assert_code(0);
}

#[test]
fn a_status_turned_to_pass_by_hand_is_refused() {
    let repo = graded_project();
    edit_case(&repo, "exact", "bad", |case| case["status"] = "PASS".into());
    assert_refused(
        &repo,
        "bad",
        "it is PASS but sample 0 is FAIL, so the results file was changed after `evalock run` wrote it",
    );
}

#[test]
fn a_pass_the_built_in_grader_does_not_give_is_refused() {
    let repo = graded_project();
    edit_case(&repo, "exact", "bad", |case| {
        case["status"] = "PASS".into();
        case["reasons"] = Value::Array(Vec::new());
        case["samples"][0]["status"] = "PASS".into();
        case["samples"][0]["reasons"] = Value::Array(Vec::new());
    });
    assert_refused(
        &repo,
        "bad",
        "sample 0 is recorded PASS, but grader `builtin@1` grades its completion FAIL (missing:order)",
    );
}

#[test]
fn a_completion_edited_after_the_run_is_refused() {
    let repo = graded_project();
    edit_case(&repo, "exact", "ok", |case| {
        case["completion"] = "Your order ships tomorrow.".into();
    });
    assert_refused(&repo, "ok", "the completion does not match its digest");

    // Digests recomputed to match: the samples never produced it.
    let repo = graded_project();
    let text = "Your order ships tomorrow.";
    let digest = evalock::graders::completion_digest(text).to_string();
    edit_case(&repo, "exact", "ok", |case| {
        case["completion"] = text.into();
        case["digest"] = digest.clone().into();
    });
    assert_refused(&repo, "ok", "no sample produced the completion");
}

#[test]
fn a_completion_the_normalizer_would_not_write_is_refused() {
    let repo = graded_project();
    assert_eq!(
        results(&repo)["cases"]
            .as_array()
            .expect("cases")
            .iter()
            .find(|case| case["suite"] == "spaced" && case["case_id"] == "ok")
            .expect("ran")["completion"],
        "Your order ships."
    );
    let text = "Your  order ships.";
    let digest = evalock::graders::completion_digest(text).to_string();
    edit_case(&repo, "spaced", "ok", |case| {
        case["completion"] = text.into();
        case["digest"] = digest.clone().into();
        case["samples"][0]["digest"] = digest.clone().into();
    });
    assert_refused(
        &repo,
        "ok",
        "the completion is not what the suite's normalizer `ws-v1` makes of it",
    );
}

/// Results record what produced each suite's completions; accept refuses them once
/// evalock.toml configures another completer, until `run` runs the new one.
#[test]
fn results_of_another_completer_are_refused_until_run_again() {
    let repo = TestRepo::with_fixture("demo");
    repo.write(".gitignore", ".evalock/\n");
    repo.evalock(&["run"]).assert_code(0);
    let sources = results(&repo)["completions"].clone();
    assert!(
        sources["support"]
            .as_str()
            .is_some_and(|source| source.starts_with("sha256:")),
        "{sources}"
    );
    let original = "completer = [\"python3\", \"completers/stub.py\"]";
    let changed = "completer = [\"python3\", \"completers/stub.py\", \"moved\"]";
    repo.replace("evalock.toml", original, changed);
    repo.evalock(&["accept", "--reason", "first recording"])
        .assert_code(2)
        .assert_contains("refused: the results in .evalock/results.json are stale: suite `support`'s `completer`, a script file its argv names, its `model` or `samples` changed since `evalock run` produced its completions; run `evalock run --suite support` again; nothing was written");
    assert!(!repo.join("evals/support.baseline.json").exists());

    // Run with the new completer: accepted.
    repo.evalock(&["run"]).assert_code(0);
    repo.evalock(&["accept", "--reason", "first recording"])
        .assert_code(0);
}

/// A project whose suite `exact` is completed by the shell script `bin/complete.sh`,
/// run by `completer` (an evalock.toml array); its case passes.
fn scripted_project(completer: &str) -> TestRepo {
    let repo = TestRepo::new();
    repo.write(".gitignore", ".evalock/\n");
    repo.write(
        "evalock.toml",
        format!("version = 1\n\n[[suite]]\nname = \"exact\"\ncases = [\"evals/exact.jsonl\"]\nbaseline = \"{BASELINE}\"\ncompleter = {completer}\n"),
    );
    repo.write(
        "evals/exact.jsonl",
        "{\"id\": \"ok\", \"version\": 1, \"input\": \"hi\", \"expect\": {\"must_include\": \"order\"}}\n",
    );
    repo.write(
        "bin/complete.sh",
        "cat >/dev/null\necho 'Your order ships today.'\n",
    );
    repo.evalock(&["lock"]).assert_code(0);
    repo.evalock(&["run"]).assert_code(0);
    repo
}

/// The script a completer's argv names decides its completions as much as the argv:
/// edited after the run, the results are no last-good answer of the script of the day.
#[test]
fn results_of_a_completer_script_edited_since_the_run_are_refused() {
    let repo = scripted_project("[\"sh\", \"bin/complete.sh\"]");
    repo.write(
        "bin/complete.sh",
        "cat >/dev/null\necho 'Your order ships tomorrow.'\n",
    );
    repo.evalock(&["accept", "--reason", "first recording"])
        .assert_code(2)
        .assert_contains("refused: the results in .evalock/results.json are stale: suite `exact`'s `completer`, a script file its argv names, its `model` or `samples` changed since `evalock run` produced its completions; run `evalock run --suite exact` again; nothing was written");
    assert!(!repo.join(BASELINE).exists(), "accept wrote a baseline");

    // Run the edited script: accepted.
    repo.evalock(&["run"]).assert_code(0);
    repo.evalock(&["accept", "--reason", "first recording"])
        .assert_code(0);
    let baseline: Value = serde_json::from_str(&repo.read(BASELINE)).expect("baseline");
    assert_eq!(
        baseline["entries"]["ok"]["completion"],
        "Your order ships tomorrow.\n"
    );
}

#[test]
fn results_of_an_unchanged_completer_script_are_accepted() {
    // The program itself counts when it is a project file, as `./bin/complete.sh` is.
    let repo = scripted_project("[\"sh\", \"./bin/complete.sh\"]");
    repo.evalock(&["accept", "--reason", "first recording"])
        .assert_code(0)
        .assert_not_contains("stale");
    assert!(repo.join(BASELINE).exists());
}

/// An argv that names no project file is digested as before script files counted, so
/// results written then stay current.
#[test]
fn a_completer_that_names_no_file_digests_its_settings_alone() {
    let repo =
        scripted_project("[\"sh\", \"-c\", \"cat >/dev/null; echo 'Your order ships today.'\"]");
    let settings = serde_json::json!({
        "completer": ["sh", "-c", "cat >/dev/null; echo 'Your order ships today.'"],
        "model": null,
        "samples": 1,
    });
    let text = evalock::digest::canonical_json(&settings).expect("canonical");
    assert_eq!(
        results(&repo)["completions"]["exact"],
        evalock::digest::bytes_digest(text.as_bytes()).to_string()
    );
    repo.write("bin/complete.sh", "echo unrelated\n");
    repo.evalock(&["accept", "--reason", "first recording"])
        .assert_code(0)
        .assert_not_contains("stale");
}

/// Completions from a file were chosen by whoever ran them: a completer changed since is
/// not what produced them, and they are accepted.
#[test]
fn results_of_a_completions_file_do_not_depend_on_the_completer() {
    let repo = graded_project();
    assert_eq!(results(&repo)["completions"]["exact"], "file");
    repo.replace(
        "evalock.toml",
        "name = \"exact\"\n",
        "name = \"exact\"\ncompleter = [\"python3\", \"complete.py\"]\n",
    );
    repo.evalock(&["accept", "--reason", "from the file"])
        .assert_code(0);
}

/// A results file from before completions were recorded cannot say which completer made
/// them: refused, with the command that writes a current one.
#[test]
fn results_that_do_not_say_what_produced_them_are_refused() {
    let repo = graded_project();
    let mut value = results(&repo);
    value.as_object_mut().expect("object").remove("completions");
    repo.write(
        RESULTS,
        serde_json::to_string_pretty(&value).expect("render"),
    );
    repo.evalock(&["accept", "--reason", "old results"])
        .assert_code(2)
        .assert_contains("refused: the results in .evalock/results.json are stale: they do not record what produced suite `exact`'s completions (written by an older evalock); run `evalock run --suite exact` again");
    assert!(!repo.join(BASELINE).exists());
}

/// `run --samples N` decides how many samples each case gets: results of one sample are no
/// last-good answer of a suite that evalock.toml samples three times, and three samples
/// asked on the command line are what a later `samples = 3` configures.
#[test]
fn results_of_another_sample_count_than_configured_are_refused() {
    let repo = TestRepo::with_fixture("demo");
    repo.write(".gitignore", ".evalock/\n");
    let original = "normalizer = \"ws-v1\"\n\n[[suite]]\nname = \"escalation\"";
    let sampled = "normalizer = \"ws-v1\"\nsamples = 3\n\n[[suite]]\nname = \"escalation\"";
    repo.replace("evalock.toml", original, sampled);
    repo.evalock(&["lock"]).assert_code(0);
    repo.evalock(&["run", "--suite", "support", "--samples", "1"])
        .assert_code(0);
    repo.evalock(&["accept", "--reason", "one sample", "--suite", "support"])
        .assert_code(2)
        .assert_contains("suite `support`'s `completer`, a script file its argv names, its `model` or `samples` changed since `evalock run` produced its completions");
    assert!(!repo.join("evals/support.baseline.json").exists());

    repo.replace("evalock.toml", sampled, original);
    repo.evalock(&["lock"]).assert_code(0);
    repo.evalock(&["run", "--suite", "support", "--samples", "3"])
        .assert_code(0);
    repo.replace("evalock.toml", original, sampled);
    repo.evalock(&["lock"]).assert_code(0);
    repo.evalock(&["accept", "--reason", "three samples", "--suite", "support"])
        .assert_code(0);
}

/// A suite renamed after the run: its results cannot be recorded under either name, and
/// accept says so instead of claiming the suite has no baseline file.
#[test]
fn a_suite_renamed_after_the_run_is_named_as_skipped() {
    let repo = graded_project();
    // Quiet: nothing renamed, no suite is skipped.
    repo.evalock(&["accept", "--reason", "first recording"])
        .assert_code(0)
        .assert_not_contains("skipped suite");
    repo.replace("evalock.toml", "name = \"exact\"", "name = \"verbatim\"");
    repo.evalock(&["accept", "--reason", "after a rename"])
        .assert_code(0)
        .assert_contains("skipped suite `exact`: it ran, but evalock.toml has no such suite any more (renamed or removed)")
        .assert_not_contains("no suite in the results has a `baseline` file");
    // With every suite of the results gone, nothing is accepted, and it says why.
    repo.replace("evalock.toml", "name = \"spaced\"", "name = \"loose\"");
    repo.evalock(&["accept", "--reason", "after two renames"])
        .assert_code(0)
        .assert_contains("skipped suite `spaced`")
        .assert_contains("nothing to accept: no suite of the results is still in evalock.toml");
}

/// Results another evalock wrote are re-run, not re-graded: its grader may give other
/// reasons, and a disagreement would be blamed on an edit nobody made.
#[test]
fn results_of_another_evalock_version_are_refused() {
    let repo = graded_project();
    let written = results(&repo)["evalock_version"].clone();
    assert_eq!(written, env!("CARGO_PKG_VERSION"));
    let mut value = results(&repo);
    value["evalock_version"] = Value::from("0.0.9");
    repo.write(
        RESULTS,
        serde_json::to_string_pretty(&value).expect("render"),
    );
    repo.evalock(&["accept", "--reason", "from an older evalock"])
        .assert_code(2)
        .assert_contains("refused: the results in .evalock/results.json are stale: evalock 0.0.9 wrote them and this is evalock")
        .assert_contains("run `evalock run` again; nothing was written");
    assert!(!repo.join(BASELINE).exists(), "accept wrote a baseline");
}
