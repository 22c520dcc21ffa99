//! Runs action.yml's steps the way the Actions runner does (`bash --noprofile --norc -eo
//! pipefail`, `GITHUB_OUTPUT` per step, one `GITHUB_STEP_SUMMARY`, `${{ … }}` replaced,
//! `if:` evaluated) on a real pull request in a temp git repository, with the built
//! binary standing in for the cached one. This proves the shell around evalock: the
//! merge base, the gate code, the outputs, the summary and the posting fallbacks.

mod common;

use common::{TestRepo, EVALOCK};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// What a simulated job did.
struct Job {
    /// The exit code of the step that failed the job, or 0.
    code: i32,
    outputs: BTreeMap<String, String>,
    summary: String,
    log: String,
    /// `RUNNER_TEMP`, kept while the job's files are read.
    _temp: Option<tempfile::TempDir>,
}

struct Runner<'a> {
    action: Value,
    inputs: BTreeMap<String, String>,
    /// `github.event_name` and the payload `github.event.*` reads.
    event_name: String,
    event: Value,
    workspace: &'a Path,
    temp: PathBuf,
    steps: BTreeMap<String, BTreeMap<String, String>>,
}

impl<'a> Runner<'a> {
    fn new(repo: &'a TestRepo, temp: &Path, inputs: &[(&str, &str)]) -> Runner<'a> {
        let text = std::fs::read_to_string(common::manifest_dir().join("action.yml"))
            .expect("read action.yml");
        let action: Value = serde_saphyr::from_str(&text).expect("action.yml is YAML");
        let mut values: BTreeMap<String, String> = action["inputs"]
            .as_object()
            .expect("inputs")
            .iter()
            .map(|(name, input)| {
                (
                    name.clone(),
                    input["default"].as_str().unwrap_or_default().to_owned(),
                )
            })
            .collect();
        values.insert("token".into(), "test-token-never-printed".into());
        for (name, value) in inputs {
            assert!(values.contains_key(*name), "action.yml has no input {name}");
            values.insert((*name).to_owned(), (*value).to_owned());
        }
        Runner {
            action,
            inputs: values,
            event_name: "pull_request".to_owned(),
            event: serde_json::json!({
                "pull_request": {
                    "base": {"sha": repo.git(&["rev-parse", "main"]).trim()},
                    "head": {"sha": repo.git(&["rev-parse", "HEAD"]).trim()},
                }
            }),
            workspace: repo.path(),
            temp: temp.to_path_buf(),
            steps: BTreeMap::new(),
        }
    }

    /// The value of one `${{ … }}` expression: plain lookups, or `a || b` (the first
    /// that is not empty).
    fn lookup(&self, expression: &str) -> String {
        if let Some((first, rest)) = expression.split_once("||") {
            let value = self.lookup(first);
            return if value.is_empty() {
                self.lookup(rest)
            } else {
                value
            };
        }
        let path: Vec<&str> = expression.trim().split('.').collect();
        match path.as_slice() {
            ["inputs", name] => self.inputs.get(*name).cloned().unwrap_or_else(|| panic!("unknown input {name}")),
            ["steps", id, "outputs", name] => {
                self.steps.get(*id).and_then(|outputs| outputs.get(*name)).cloned().unwrap_or_default()
            }
            ["github", "event_name"] => self.event_name.clone(),
            ["github", "event", keys @ ..] => keys
                .iter()
                .try_fold(&self.event, |value, key| value.get(*key))
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            ["runner", "os"] => "Linux".into(),
            ["runner", "arch"] => "X64".into(),
            _ => panic!("the simulated runner does not know `{expression}`: teach it, or keep action.yml simple"),
        }
    }

    fn interpolate(&self, text: &str) -> String {
        let mut result = String::new();
        let mut rest = text;
        while let Some(start) = rest.find("${{") {
            let end = rest[start..]
                .find("}}")
                .map(|end| start + end)
                .expect("closing }}");
            result.push_str(&rest[..start]);
            result.push_str(&self.lookup(&rest[start + 3..end]));
            rest = &rest[end + 2..];
        }
        result.push_str(rest);
        result
    }

    /// `a != 'x' && b == ''`: the only form of condition the action uses.
    fn condition(&self, expression: &str) -> bool {
        expression.split("&&").all(|comparison| {
            let (left, right, equal) = match comparison.split_once("!=") {
                Some((left, right)) => (left, right, false),
                None => {
                    let (left, right) = comparison.split_once("==").expect("a comparison");
                    (left, right, true)
                }
            };
            let literal = right.trim().trim_matches('\'');
            (self.lookup(left) == literal) == equal
        })
    }

    fn run(mut self) -> Job {
        let summary = self.temp.join("step-summary.md");
        std::fs::write(&summary, "").expect("summary file");
        let mut log = String::new();
        let mut code = 0;
        let steps = self.action["runs"]["steps"]
            .as_array()
            .expect("steps")
            .clone();
        for (index, step) in steps.iter().enumerate() {
            if let Some(condition) = step["if"].as_str() {
                if !self.condition(condition) {
                    continue;
                }
            }
            let outputs = match step["uses"].as_str() {
                Some(uses) => self.restore_cache(uses, step),
                None => {
                    let (step_code, outputs, step_log) = self.run_script(index, step, &summary);
                    log.push_str(&step_log);
                    code = step_code;
                    outputs
                }
            };
            if let Some(id) = step["id"].as_str() {
                self.steps.insert(id.to_owned(), outputs);
            }
            if code != 0 {
                break;
            }
        }
        let outputs = self.action["outputs"]
            .as_object()
            .expect("outputs")
            .iter()
            .map(|(name, output)| {
                (
                    name.clone(),
                    self.interpolate(output["value"].as_str().expect("value")),
                )
            })
            .collect();
        Job {
            code,
            outputs,
            summary: std::fs::read_to_string(summary).expect("summary"),
            log,
            _temp: None,
        }
    }

    /// `actions/cache`: a hit, with the binary under test as the cached evalock.
    fn restore_cache(&self, uses: &str, step: &Value) -> BTreeMap<String, String> {
        assert!(
            uses.starts_with("actions/cache@"),
            "unexpected action {uses}"
        );
        let root =
            PathBuf::from(self.interpolate(step["with"]["path"].as_str().expect("cache path")));
        std::fs::create_dir_all(root.join("bin")).expect("cache dir");
        std::fs::copy(EVALOCK, root.join("bin/evalock")).expect("restore binary");
        BTreeMap::from([("cache-hit".to_owned(), "true".to_owned())])
    }

    fn run_script(
        &self,
        index: usize,
        step: &Value,
        summary: &Path,
    ) -> (i32, BTreeMap<String, String>, String) {
        assert_eq!(step["shell"], "bash", "step {index} must say `shell: bash`");
        let script = self.temp.join(format!("step-{index}.sh"));
        std::fs::write(&script, step["run"].as_str().expect("run")).expect("write script");
        let output_file = self.temp.join(format!("step-{index}.out"));
        std::fs::write(&output_file, "").expect("output file");
        let directory = match step["working-directory"].as_str() {
            Some(directory) => self.workspace.join(self.interpolate(directory)),
            None => self.workspace.to_path_buf(),
        };
        let mut command = Command::new("bash");
        command
            .args(["--noprofile", "--norc", "-eo", "pipefail"])
            .arg(&script)
            .current_dir(directory)
            .env("CI", "true")
            .env("GITHUB_ACTIONS", "true")
            .env("GITHUB_OUTPUT", &output_file)
            .env("GITHUB_STEP_SUMMARY", summary)
            .env("GITHUB_ACTION_PATH", common::manifest_dir())
            .env("GITHUB_WORKSPACE", self.workspace)
            .env("RUNNER_TEMP", &self.temp)
            .env("HOME", self.workspace)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env_remove("GIT_INDEX_FILE")
            .env_remove("NO_COLOR");
        if let Some(env) = step["env"].as_object() {
            for (name, value) in env {
                command.env(name, self.interpolate(value.as_str().expect("env value")));
            }
        }
        let output = command.output().expect("run bash");
        let log = format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        let outputs = std::fs::read_to_string(&output_file)
            .expect("read outputs")
            .lines()
            .filter_map(|line| line.split_once('='))
            .map(|(name, value)| (name.to_owned(), value.to_owned()))
            .collect();
        (output.status.code().unwrap_or(-1), outputs, log)
    }
}

/// The demo project on `main`; branch `pr` (checked out) edits a shipped case in place.
fn pull_request_with_edited_case(project_dir: &str) -> TestRepo {
    let repo = TestRepo::new();
    common::copy_tree(&common::fixture("demo"), &repo.join(project_dir));
    repo.commit_all("adopt evalock");
    repo.git(&["checkout", "-q", "-b", "pr"]);
    repo.replace(
        &format!("{project_dir}/evals/support.jsonl"),
        "I want my money back.",
        "I want my money back, now.",
    );
    repo.commit_all("edit a shipped case in place");
    repo
}

/// A clean pull request on the demo (11 `support` cases, 3 `escalation` cases).
fn clean_pull_request() -> TestRepo {
    let repo = TestRepo::with_fixture("demo");
    repo.git(&["checkout", "-q", "-b", "pr"]);
    repo.write("notes.txt", "unrelated change\n");
    repo.commit_all("unrelated");
    repo
}

/// The action on a merge queue's group: GitHub's own `merge_group` payload, its base and
/// head replaced by the repository's commits.
fn run_action_in_merge_queue(repo: &TestRepo, inputs: &[(&str, &str)]) -> Job {
    let temp = tempfile::tempdir().expect("runner temp");
    let mut runner = Runner::new(repo, temp.path(), inputs);
    let text = std::fs::read_to_string(
        common::manifest_dir().join("tests/github-api/webhooks/merge_group.checks_requested.json"),
    )
    .expect("merge_group payload");
    let mut event: Value = serde_json::from_str(&text).expect("payload is JSON");
    assert!(
        event["pull_request"].is_null(),
        "a merge group has no pull request"
    );
    event["merge_group"]["base_sha"] = Value::from(repo.git(&["rev-parse", "main"]).trim());
    event["merge_group"]["head_sha"] = Value::from(repo.git(&["rev-parse", "HEAD"]).trim());
    runner.event_name = "merge_group".to_owned();
    runner.event = event;
    let mut job = runner.run();
    job._temp = Some(temp);
    job
}

/// The action on GitHub's own `pull_request.opened` payload, its commits replaced by the
/// repository's and its head moved to a fork.
fn run_action_from_fork(repo: &TestRepo, inputs: &[(&str, &str)]) -> Job {
    let temp = tempfile::tempdir().expect("runner temp");
    let mut runner = Runner::new(repo, temp.path(), inputs);
    let text = std::fs::read_to_string(
        common::manifest_dir().join("tests/github-api/webhooks/pull_request.opened.json"),
    )
    .expect("pull_request payload");
    let mut event: Value = serde_json::from_str(&text).expect("payload is JSON");
    let pull = &mut event["pull_request"];
    pull["base"]["sha"] = Value::from(repo.git(&["rev-parse", "main"]).trim());
    pull["head"]["sha"] = Value::from(repo.git(&["rev-parse", "HEAD"]).trim());
    let base_repo = pull["base"]["repo"]["full_name"]
        .as_str()
        .unwrap()
        .to_owned();
    pull["head"]["repo"]["full_name"] = Value::from(format!(
        "someone-else/{}",
        base_repo.split('/').nth(1).unwrap()
    ));
    runner.event = event;
    let mut job = runner.run();
    job._temp = Some(temp);
    job
}

fn run_action(repo: &TestRepo, inputs: &[(&str, &str)]) -> Job {
    let temp = tempfile::tempdir().expect("runner temp");
    let mut job = Runner::new(repo, temp.path(), inputs).run();
    job._temp = Some(temp);
    job
}

#[test]
fn a_case_edited_in_place_blocks_with_annotations_summary_and_reports() {
    let repo = pull_request_with_edited_case(".");
    let job = run_action(&repo, &[("comment-mode", "annotations")]);
    assert_eq!(job.code, 2, "the gate exits with check's code\n{}", job.log);
    assert_eq!(job.outputs["verdict"], "BLOCK");
    assert_eq!(job.outputs["exit-code"], "2");
    assert!(
        job.log
            .contains("::error file=evals/support.jsonl,line=2,title=EL102 case-edited-in-place::"),
        "{}",
        job.log
    );
    assert!(job.log.contains("merge base of "), "{}", job.log);
    assert!(
        job.summary.starts_with("## ❌ evalock check: BLOCK"),
        "{}",
        job.summary
    );
    assert!(
        job.summary.contains("**base:** "),
        "judged against the merge base:\n{}",
        job.summary
    );
    for output in ["results", "sarif", "junit"] {
        assert!(
            Path::new(&job.outputs[output]).is_file(),
            "{output} = {:?}",
            job.outputs[output]
        );
    }
    assert_eq!(
        job.outputs["run-results"], "",
        "no suites configured, nothing ran"
    );
    assert!(!job.log.contains("test-token-never-printed"));
}

#[test]
fn posting_failures_never_change_the_gate() {
    let repo = pull_request_with_edited_case(".");
    // `evalock github` cannot post here (no API, no event file): it says why, falls back to
    // annotations and exits 0 (documented); the gate decides.
    let job = run_action(&repo, &[("comment-mode", "review")]);
    assert_eq!(job.code, 2, "{}", job.log);
    assert!(job.log.contains("not posted ("), "{}", job.log);
    assert!(
        job.log.contains("title=EL102 case-edited-in-place::"),
        "{}",
        job.log
    );
    assert!(!job.log.contains("test-token-never-printed"), "{}", job.log);
}

#[test]
fn a_clean_pull_request_passes() {
    let repo = clean_pull_request();
    let job = run_action(&repo, &[("comment-mode", "off")]);
    assert_eq!(job.code, 0, "{}", job.log);
    assert_eq!(job.outputs["verdict"], "PASS");
    assert_eq!(job.outputs["exit-code"], "0");
    assert!(
        job.summary.starts_with("## ✅ evalock check: PASS"),
        "{}",
        job.summary
    );
    assert!(!job.log.contains("::error"), "{}", job.log);
}

#[test]
fn a_project_in_a_subfolder_reports_repository_paths() {
    let repo = pull_request_with_edited_case("evals-project");
    let job = run_action(
        &repo,
        &[
            ("comment-mode", "annotations"),
            ("working-directory", "evals-project"),
        ],
    );
    assert_eq!(job.code, 2, "{}", job.log);
    assert!(
        job.log
            .contains("::error file=evals-project/evals/support.jsonl,line=2,"),
        "{}",
        job.log
    );
    let sarif = std::fs::read_to_string(&job.outputs["sarif"]).expect("sarif");
    assert!(sarif.contains("\"uri\": \"evals-project/evals/support.jsonl\""));
}

#[test]
fn bad_inputs_stop_before_anything_runs() {
    let repo = pull_request_with_edited_case(".");
    let job = run_action(&repo, &[("comment-mode", "loud")]);
    assert_eq!(job.code, 64, "{}", job.log);
    assert!(
        job.log
            .contains("comment-mode is 'loud': use review, summary, annotations or off"),
        "{}",
        job.log
    );
}

/// A pull request over a base whose case file git can no longer read (its object is
/// gone from a damaged clone): `check --base` ends in an error (exit 70, no report) while
/// `run`, which reads only the pull request's own files, succeeds.
fn pull_request_over_a_damaged_base() -> TestRepo {
    let repo = TestRepo::new();
    common::copy_tree(&common::fixture("demo"), repo.path());
    let cases = repo.read("evals/support.jsonl");
    repo.write("evals/support.jsonl", format!("{cases}\n"));
    repo.commit_all("a blank line only the base has");
    let blob = repo.git(&["rev-parse", "HEAD:evals/support.jsonl"]);
    let blob = blob.trim();
    repo.git(&["checkout", "-q", "-b", "pr"]);
    repo.write("evals/support.jsonl", cases);
    repo.commit_all("drop the blank line");
    let object = repo.join(&format!(".git/objects/{}/{}", &blob[..2], &blob[2..]));
    std::fs::remove_file(object).expect("the base's blob is a loose object");
    repo
}

#[test]
fn a_check_that_ends_in_an_error_blocks_even_when_the_run_passes() {
    let repo = pull_request_over_a_damaged_base();
    let job = run_action(&repo, &[("suites", "all"), ("comment-mode", "review")]);
    assert_eq!(job.code, 70, "{}", job.log);
    assert_eq!(job.outputs["exit-code"], "70");
    assert_eq!(
        job.outputs["verdict"], "BLOCK",
        "the gate fails, so the verdict cannot read PASS or WARN\n{}",
        job.log
    );
    assert!(
        job.summary.starts_with("## ❌ evalock: BLOCK"),
        "{}",
        job.summary
    );
    assert!(
        job.summary.contains("**exit code:** 70"),
        "the summary shows the gate's code\n{}",
        job.summary
    );
    assert!(
        job.summary
            .contains("`evalock check` ended with exit code 70")
            && job.summary.contains("evals/support.jsonl"),
        "the summary says which command failed and its error\n{}",
        job.summary
    );
    assert!(
        !job.summary.contains("**exit code:** 0"),
        "the run's report alone is not the verdict\n{}",
        job.summary
    );
    assert!(
        !job.log.contains("not posted ("),
        "no review is posted for a report the gate disowns\n{}",
        job.log
    );
    assert_eq!(job.outputs["results"], "");
    assert!(
        Path::new(&job.outputs["run-results"]).is_file(),
        "the run's own results are kept\n{}",
        job.log
    );
}

#[test]
fn a_run_that_ends_in_an_error_blocks_even_when_the_check_passes() {
    let repo = clean_pull_request();
    let job = run_action(
        &repo,
        &[("suites", "no-such-suite"), ("comment-mode", "review")],
    );
    assert_eq!(job.code, 64, "{}", job.log);
    assert_eq!(job.outputs["exit-code"], "64");
    assert_eq!(job.outputs["verdict"], "BLOCK", "{}", job.log);
    assert!(
        job.summary
            .contains("`evalock run` ended with exit code 64")
            && job.summary.contains("no-such-suite"),
        "{}",
        job.summary
    );
    assert!(
        !job.summary.contains("evalock check: PASS"),
        "{}",
        job.summary
    );
    assert!(!job.log.contains("not posted ("), "{}", job.log);
}

#[test]
fn a_clean_pull_request_with_suites_passes_without_errors() {
    let repo = clean_pull_request();
    let job = run_action(&repo, &[("suites", "all"), ("comment-mode", "off")]);
    assert_eq!(job.code, 0, "{}", job.log);
    assert_eq!(job.outputs["exit-code"], "0");
    assert_ne!(job.outputs["verdict"], "BLOCK", "{}", job.log);
    assert!(job.summary.contains("**exit code:** 0"), "{}", job.summary);
    assert!(
        !job.summary.contains("ended with exit code"),
        "{}",
        job.summary
    );
    assert!(Path::new(&job.outputs["results"]).is_file());
    assert!(!job.log.contains("::error"), "{}", job.log);
}

#[test]
fn suites_split_on_spaces_commas_and_newlines_and_all_means_every_suite() {
    let repo = clean_pull_request();
    // `suites: |` in YAML ends the value with a newline.
    for suites in ["all\n", "all, support", "support,\nescalation\n"] {
        let job = run_action(&repo, &[("suites", suites), ("comment-mode", "off")]);
        assert_eq!(job.code, 0, "suites {suites:?}\n{}", job.log);
        assert!(
            job.log.contains("14 cases: 14 PASS"),
            "suites {suites:?} runs every suite\n{}",
            job.log
        );
    }
    let job = run_action(&repo, &[("suites", " support\n"), ("comment-mode", "off")]);
    assert_eq!(job.code, 0, "{}", job.log);
    assert!(job.log.contains("11 cases: 11 PASS"), "{}", job.log);
    let job = run_action(&repo, &[("suites", "\n"), ("comment-mode", "off")]);
    assert_eq!(job.code, 0, "{}", job.log);
    assert_eq!(
        job.outputs["run-results"], "",
        "no names: only checks\n{}",
        job.log
    );
}

/// A merge queue's group is judged against its base, and nothing is posted: there is no
/// pull request in the payload, and the required check's verdict is the gate's code.
#[test]
fn a_merge_queue_group_is_gated_against_its_base_and_nothing_is_posted() {
    let repo = pull_request_with_edited_case(".");
    let job = run_action_in_merge_queue(&repo, &[("comment-mode", "review")]);
    assert_eq!(job.code, 2, "{}", job.log);
    assert_eq!(job.outputs["verdict"], "BLOCK");
    assert!(job.log.contains("merge base of "), "{}", job.log);
    assert!(job.log.contains("EL102"), "{}", job.log);
    assert!(!job.log.contains("not a pull request"), "{}", job.log);
    assert!(
        !job.log.contains("posting to the pull request"),
        "{}",
        job.log
    );
    assert!(job.summary.contains("BLOCK"), "{}", job.summary);

    let clean = clean_pull_request();
    let job = run_action_in_merge_queue(&clean, &[("comment-mode", "review")]);
    assert_eq!(job.code, 0, "{}", job.log);
    assert_eq!(job.outputs["verdict"], "PASS");
}

/// A pull request from a fork has no secrets: the suites are not run, the check is
/// judged alone, and the verdict says so plainly, passing or failing by `fork-policy`.
#[test]
fn a_fork_pull_request_skips_the_suites_and_says_so() {
    let repo = clean_pull_request();
    let warned = run_action_from_fork(&repo, &[("suites", "all"), ("comment-mode", "off")]);
    assert_eq!(warned.code, 0, "{}", warned.log);
    assert_eq!(warned.outputs["verdict"], "WARN");
    assert!(
        warned
            .log
            .contains("suites not run: fork pull request without secrets"),
        "{}",
        warned.log
    );
    assert!(warned
        .summary
        .contains("suites not run: fork pull request without secrets"));
    assert!(!warned.log.contains("EL504"), "{}", warned.log);
    assert_eq!(warned.outputs["run-results"], "", "no run");

    let blocked = run_action_from_fork(
        &repo,
        &[
            ("suites", "all"),
            ("comment-mode", "off"),
            ("fork-policy", "block"),
        ],
    );
    assert_eq!(blocked.code, 1, "{}", blocked.log);
    assert_eq!(blocked.outputs["verdict"], "BLOCK");
    assert!(blocked
        .log
        .contains("::error title=evalock::suites not run: fork pull request without secrets"));

    // Without suites to run, a fork is judged like any pull request.
    let check_only = run_action_from_fork(&repo, &[("comment-mode", "off")]);
    assert_eq!(check_only.code, 0, "{}", check_only.log);
    assert_eq!(check_only.outputs["verdict"], "PASS");
    // And a pull request from the repository itself runs its suites.
    let own = run_action(&repo, &[("suites", "all"), ("comment-mode", "off")]);
    assert!(!own.log.contains("suites not run"), "{}", own.log);

    let bad = run_action_from_fork(&repo, &[("fork-policy", "maybe")]);
    assert_eq!(bad.code, 64, "{}", bad.log);
}

/// The demo with baselines accepted on `main`; branch `pr` swaps the model for one whose
/// prompt lost a rule.
fn model_swap_pull_request() -> TestRepo {
    let repo = TestRepo::with_fixture("demo");
    repo.evalock(&["run"]).assert_code(0);
    repo.evalock(&["accept", "--reason", "last good"])
        .assert_code(0);
    repo.commit_all("baselines");
    repo.git(&["checkout", "-q", "-b", "pr"]);
    repo.replace(
        "evalock.toml",
        "\"completers/stub.py\"]\nmodel = \"acme-support-stub\"",
        "\"completers/stub.py\", \"regressed\"]\nmodel = \"acme-support-next\"",
    );
    repo.evalock(&["lock"]).assert_code(0);
    repo.commit_all("swap the support model");
    repo
}

#[test]
fn compare_puts_the_matrix_in_the_summary_and_each_regression_on_its_line() {
    let repo = model_swap_pull_request();
    let job = run_action(
        &repo,
        &[
            ("suites", "all"),
            ("compare", "true"),
            ("comment-mode", "annotations"),
        ],
    );
    assert_ne!(job.code, 0, "{}", job.log);
    assert_eq!(job.outputs["verdict"], "BLOCK");
    assert!(
        job.summary.contains("## evalock compare: BLOCK")
            && job
                .summary
                .contains("must\\_not\\_call: forbidden\\_tool:create\\_refund"),
        "{}",
        job.summary
    );
    assert!(
        job.log.contains("::notice file=evalock.toml,line=17")
            && job.log.contains("EL512 behaviour-matrix"),
        "{}",
        job.log
    );
    assert!(
        job.log.contains("::error file=evals/support.jsonl,line=2")
            && job.log.contains("EL501 regressed"),
        "{}",
        job.log
    );
    // Without the input, nothing is compared.
    let plain = run_action(&repo, &[("suites", "all"), ("comment-mode", "annotations")]);
    assert!(
        !plain.summary.contains("evalock compare"),
        "{}",
        plain.summary
    );
    assert!(!plain.log.contains("EL512"), "{}", plain.log);
}

#[test]
fn a_compare_input_that_is_not_true_or_false_stops_the_job() {
    let repo = clean_pull_request();
    let job = run_action(&repo, &[("compare", "yes")]);
    assert_eq!(job.code, 64, "{}", job.log);
    assert!(
        job.log.contains("compare is 'yes': use true or false"),
        "{}",
        job.log
    );
}
