//! evalock under the real pre-commit framework (https://pre-commit.com), installed by
//! `.ci/run` from tests/requirements.txt. Nothing here reaches the network: the hooks are
//! `language: system` and run the evalock built for these tests.
//!
//! The `language: rust` hook is validated against pre-commit's own manifest schema but not
//! run: pre-commit would `cargo install` evalock from source in release mode, which needs
//! crates.io and takes minutes on the CI machine's two cores.

mod common;
mod git_sandbox;

use common::{manifest_dir, EVALOCK};
use git_sandbox::{Sandbox, CASE_BUMPED, CASE_EDITED, CASE_FILE, CASE_TEXT, CASE_VERSION};
use std::process::Command;

/// `pre-commit` as installed: the console script on PATH, else the module.
fn pre_commit(sandbox: &Sandbox, args: &[&str]) -> common::Run {
    let on_path = std::env::var_os("PATH")
        .map(|path| std::env::split_paths(&path).any(|dir| dir.join("pre-commit").is_file()))
        .unwrap_or(false);
    let mut command: Command = if on_path {
        sandbox.command("pre-commit")
    } else {
        let mut module = sandbox.command("python3");
        module.args(["-m", "pre_commit"]);
        module
    };
    command.args(args);
    let run = sandbox.run(command);
    assert!(
        !run.stderr.contains("No module named pre_commit"),
        "pre-commit is not installed: run `python3 -m pip install -r tests/requirements.txt`"
    );
    run
}

/// The demo with a `repo: local` configuration that runs the built evalock, installed
/// for commits and merges.
fn with_framework() -> Sandbox {
    let sandbox = Sandbox::demo();
    // pre-commit refuses to install while core.hooksPath is set.
    sandbox.git_ok(&["config", "--unset", "core.hooksPath"]);
    let config = format!(
        "repos:\n  - repo: local\n    hooks:\n      - id: evalock\n        name: evalock\n        entry: \"'{EVALOCK}' check --staged\"\n        language: system\n        pass_filenames: false\n        always_run: true\n        require_serial: true\n        stages: [pre-commit, pre-merge-commit]\n"
    );
    sandbox.repo.write(".pre-commit-config.yaml", config);
    sandbox.git_ok(&["add", ".pre-commit-config.yaml"]);
    sandbox.git_ok(&["commit", "-q", "-m", "pre-commit configuration"]);
    pre_commit(
        &sandbox,
        &[
            "install",
            "--hook-type",
            "pre-commit",
            "--hook-type",
            "pre-merge-commit",
        ],
    )
    .assert_code(0);
    sandbox
}

#[test]
fn the_framework_refuses_an_in_place_edit_and_accepts_bump_and_relock() {
    let sandbox = with_framework();
    let head = sandbox.head();
    sandbox.repo.replace(CASE_FILE, CASE_TEXT, CASE_EDITED);
    sandbox.git_ok(&["add", CASE_FILE]);
    let refused = sandbox.git(&["commit", "-m", "reword a shipped case"]);
    assert_ne!(refused.code, 0, "{}", refused.all());
    refused
        .assert_contains("Failed")
        .assert_contains("evals/support.jsonl:2: EL101 case-unlocked")
        .assert_contains("`evalock lock` and `git add evalock.lock`");
    assert_eq!(sandbox.head(), head);

    sandbox.repo.replace(CASE_FILE, CASE_VERSION, CASE_BUMPED);
    sandbox.evalock(&["lock"]).assert_code(0);
    sandbox.git_ok(&["add", CASE_FILE, "evalock.lock"]);
    sandbox
        .git(&["commit", "-m", "refund-no-order-id v4"])
        .assert_code(0)
        .assert_contains("Passed");
    assert_ne!(sandbox.head(), head);
}

#[test]
fn the_framework_judges_staged_bytes_not_the_working_tree() {
    let sandbox = with_framework();
    sandbox.repo.replace(CASE_FILE, CASE_TEXT, CASE_EDITED);
    sandbox.repo.write("notes.txt", "unrelated\n");
    sandbox.git_ok(&["add", "notes.txt"]);
    sandbox
        .git(&["commit", "-m", "notes"])
        .assert_code(0)
        .assert_contains("Passed");
    assert!(
        sandbox.repo.read(CASE_FILE).contains(CASE_EDITED),
        "the unstaged edit survives the framework's stash"
    );
    let all = sandbox.git(&["commit", "-a", "-m", "everything"]);
    assert_ne!(all.code, 0, "{}", all.all());
    all.assert_contains("EL101");
}

/// This repository's `.pre-commit-hooks.yaml`, as a hook repository of its own.
fn hook_repository() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("hook repository");
    std::fs::copy(
        manifest_dir().join(".pre-commit-hooks.yaml"),
        dir.path().join(".pre-commit-hooks.yaml"),
    )
    .expect("copy manifest");
    let git = |args: &[&str]| {
        let status = Command::new("git")
            .args(args)
            .current_dir(dir.path())
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("HOME", dir.path())
            .env_remove("GIT_INDEX_FILE")
            .env_remove("GIT_DIR")
            .status()
            .expect("git");
        assert!(status.success(), "git {args:?}");
    };
    git(&["init", "-q", "-b", "main"]);
    git(&["add", ".pre-commit-hooks.yaml"]);
    git(&[
        "-c",
        "user.name=Test",
        "-c",
        "user.email=test@example.com",
        "commit",
        "-q",
        "-m",
        "hooks",
    ]);
    dir
}

#[test]
fn the_published_system_hook_runs_through_try_repo() {
    let sandbox = Sandbox::demo();
    let hooks = hook_repository();
    let hooks_path = hooks.path().to_str().expect("utf-8 path");
    sandbox.repo.write("notes.txt", "unrelated\n");
    sandbox.git_ok(&["add", "notes.txt"]);
    pre_commit(&sandbox, &["try-repo", hooks_path, "evalock-system"])
        .assert_code(0)
        .assert_contains("Passed");

    sandbox.repo.replace(CASE_FILE, CASE_TEXT, CASE_EDITED);
    sandbox.git_ok(&["add", CASE_FILE]);
    let refused = pre_commit(&sandbox, &["try-repo", hooks_path, "evalock-system"]);
    assert_ne!(refused.code, 0, "{}", refused.all());
    refused.assert_contains("Failed").assert_contains("EL101");
}

#[test]
fn the_hooks_manifest_is_valid_and_declares_both_variants() {
    let sandbox = Sandbox::demo();
    let manifest = manifest_dir().join(".pre-commit-hooks.yaml");
    pre_commit(
        &sandbox,
        &["validate-manifest", manifest.to_str().expect("utf-8 path")],
    )
    .assert_code(0);

    let text = std::fs::read_to_string(&manifest).expect("manifest");
    let hooks: Vec<serde_json::Value> = serde_saphyr::from_str(&text).expect("YAML list");
    let ids: Vec<&str> = hooks
        .iter()
        .filter_map(|hook| hook["id"].as_str())
        .collect();
    assert_eq!(ids, ["evalock", "evalock-system"]);
    for (hook, language) in hooks.iter().zip(["rust", "system"]) {
        assert_eq!(hook["language"], language);
        assert_eq!(hook["entry"], "evalock check --staged");
        assert_eq!(hook["pass_filenames"], false);
        assert_eq!(hook["always_run"], true);
        assert_eq!(hook["require_serial"], true);
        assert_eq!(
            hook["stages"],
            serde_json::json!(["pre-commit", "pre-merge-commit"])
        );
    }
}
