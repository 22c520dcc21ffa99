//! `evalock hook install|uninstall` against real repositories: where the hook goes
//! (core.hooksPath, linked work trees), what happens to a hook that was already there,
//! and that uninstall leaves everything as it was.

mod common;
mod git_sandbox;

use common::EVALOCK;
use git_sandbox::{Sandbox, CASE_EDITED, CASE_FILE, CASE_TEXT};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

const FOREIGN_HOOK: &str = "#!/bin/sh\necho \"foreign hook ran\" >> foreign.log\nexit 0\n";

fn listing(dir: &Path) -> Vec<(String, Vec<u8>, u32)> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .expect("hooks dir")
        .map(|entry| {
            let entry = entry.expect("entry");
            let mode = entry.metadata().expect("metadata").permissions().mode() & 0o777;
            (
                entry.file_name().to_string_lossy().into_owned(),
                std::fs::read(entry.path()).expect("read"),
                mode,
            )
        })
        .collect();
    files.sort();
    files
}

fn mode_of(path: &Path) -> u32 {
    std::fs::metadata(path)
        .expect("metadata")
        .permissions()
        .mode()
        & 0o777
}

fn write_hook(path: &Path, script: &str) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("hooks dir");
    std::fs::write(path, script).expect("write hook");
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

/// What git itself considers the hooks folder.
fn git_hooks_dir(sandbox: &Sandbox) -> PathBuf {
    let reported = sandbox.git_ok(&["rev-parse", "--git-path", "hooks"]);
    let path = PathBuf::from(reported.trim());
    if path.is_absolute() {
        path
    } else {
        sandbox.path().join(path)
    }
}

/// The folder of the `git` on PATH, for a PATH that holds git but no evalock.
fn folder_of_git() -> PathBuf {
    let path = std::env::var_os("PATH").expect("PATH");
    std::env::split_paths(&path)
        .find(|dir| dir.join("git").is_file())
        .expect("git on PATH")
}

fn commit_unrelated(sandbox: &Sandbox, content: &str) -> common::Run {
    sandbox.repo.write("notes.txt", content);
    sandbox.git_ok(&["add", "notes.txt"]);
    sandbox.git(&["commit", "-m", "notes"])
}

#[test]
fn install_then_uninstall_leaves_the_hooks_folder_as_it_was() {
    let sandbox = Sandbox::demo();
    sandbox.git_ok(&["config", "--unset", "core.hooksPath"]);
    let hooks = git_hooks_dir(&sandbox);
    std::fs::create_dir_all(&hooks).expect("hooks dir");
    let before = listing(&hooks);

    let install = sandbox.evalock(&["hook", "install"]);
    install
        .assert_code(0)
        .assert_contains("installed evalock's pre-commit hook")
        .assert_contains("pre-merge-commit");
    for name in ["pre-commit", "pre-merge-commit"] {
        let path = hooks.join(name);
        assert_eq!(mode_of(&path), 0o755, "{name}");
        let script = std::fs::read_to_string(&path).expect("hook");
        assert!(script.contains("# evalock-managed-hook"));
        assert!(script.contains("\nproject_dir='.'\n"), "{script}");
        assert!(
            script.contains(&format!("\nfallback_evalock='{EVALOCK}'\n")),
            "{script}"
        );
    }
    sandbox
        .evalock(&["hook", "install"])
        .assert_code(0)
        .assert_contains("evalock's pre-commit hook is up to date");

    let uninstall = sandbox.evalock(&["hook", "uninstall"]);
    uninstall
        .assert_code(0)
        .assert_contains("removed evalock's pre-commit hook");
    assert_eq!(listing(&hooks), before);
    sandbox
        .evalock(&["hook", "uninstall"])
        .assert_code(0)
        .assert_contains("no pre-commit hook to remove");
}

#[test]
fn core_hooks_path_is_where_the_hook_goes_and_runs() {
    let sandbox = Sandbox::demo();
    sandbox.git_ok(&["config", "core.hooksPath", ".githooks"]);
    sandbox
        .evalock(&["hook", "install"])
        .assert_code(0)
        .assert_contains(".githooks/pre-commit");
    assert_eq!(git_hooks_dir(&sandbox), sandbox.path().join(".githooks"));
    assert!(sandbox.path().join(".githooks/pre-commit").is_file());
    assert!(!sandbox.path().join(".git/hooks/pre-commit").exists());
    sandbox.repo.replace(CASE_FILE, CASE_TEXT, CASE_EDITED);
    sandbox.git_ok(&["add", CASE_FILE]);
    let refused = sandbox.git(&["commit", "-m", "drift"]);
    assert_ne!(refused.code, 0);
    refused.assert_contains("EL101");

    let shared = tempfile::tempdir().expect("shared hooks");
    sandbox.git_ok(&[
        "config",
        "core.hooksPath",
        shared.path().to_str().expect("utf-8"),
    ]);
    sandbox.evalock(&["hook", "install"]).assert_code(0);
    assert!(shared.path().join("pre-commit").is_file());
    assert!(shared.path().join("pre-merge-commit").is_file());
}

#[test]
fn a_linked_work_tree_shares_the_hook() {
    let sandbox = Sandbox::demo();
    sandbox.git_ok(&["config", "--unset", "core.hooksPath"]);
    sandbox.evalock(&["hook", "install"]).assert_code(0);
    let linked = tempfile::tempdir().expect("linked work tree");
    let linked_path = linked.path().join("feature");
    sandbox.git_ok(&[
        "worktree",
        "add",
        "-q",
        "-b",
        "feature",
        linked_path.to_str().expect("utf-8"),
    ]);
    let case = linked_path.join(CASE_FILE);
    let text = std::fs::read_to_string(&case)
        .expect("case")
        .replacen(CASE_TEXT, CASE_EDITED, 1);
    std::fs::write(&case, text).expect("edit case");
    let mut add = sandbox.command("git");
    add.current_dir(&linked_path).args(["add", CASE_FILE]);
    sandbox.run(add).assert_code(0);
    let mut commit = sandbox.command("git");
    commit
        .current_dir(&linked_path)
        .args(["commit", "-m", "drift in a linked work tree"]);
    let refused = sandbox.run(commit);
    assert_ne!(refused.code, 0, "{}", refused.all());
    refused.assert_contains("EL101");
}

#[test]
fn a_foreign_hook_is_chained_first_and_restored_byte_for_byte() {
    let sandbox = Sandbox::demo();
    let hook = sandbox.path().join(".git/hooks/pre-commit");
    write_hook(&hook, FOREIGN_HOOK);
    let install = sandbox.evalock(&["hook", "install"]);
    install
        .assert_code(0)
        .assert_contains("the pre-commit hook that was there runs first");
    assert_eq!(
        std::fs::read_to_string(hook.with_file_name("pre-commit.before-evalock")).expect("kept"),
        FOREIGN_HOOK
    );

    commit_unrelated(&sandbox, "first\n")
        .assert_code(0)
        .assert_contains("no staged change touches what evalock tracks");
    assert_eq!(sandbox.repo.read("foreign.log"), "foreign hook ran\n");

    // A failing earlier hook stops the commit before evalock runs.
    write_hook(
        &hook.with_file_name("pre-commit.before-evalock"),
        "#!/bin/sh\necho 'lint failed'\nexit 3\n",
    );
    let blocked = commit_unrelated(&sandbox, "second\n");
    assert_ne!(blocked.code, 0);
    blocked
        .assert_contains("lint failed")
        .assert_not_contains("evalock check (");
    write_hook(
        &hook.with_file_name("pre-commit.before-evalock"),
        FOREIGN_HOOK,
    );

    sandbox
        .evalock(&["hook", "uninstall"])
        .assert_code(0)
        .assert_contains("put back the one that was there");
    assert_eq!(
        std::fs::read_to_string(&hook).expect("restored"),
        FOREIGN_HOOK
    );
    assert_eq!(mode_of(&hook), 0o755);
    assert!(!hook.with_file_name("pre-commit.before-evalock").exists());
    assert!(!hook.with_file_name("pre-merge-commit").exists());
}

#[test]
fn force_moves_a_foreign_hook_aside_without_running_it() {
    let sandbox = Sandbox::demo();
    let hook = sandbox.path().join(".git/hooks/pre-commit");
    write_hook(&hook, FOREIGN_HOOK);
    sandbox
        .evalock(&["hook", "install", "--force"])
        .assert_code(0)
        .assert_contains("no longer runs");
    commit_unrelated(&sandbox, "first\n").assert_code(0);
    assert!(
        !sandbox.path().join("foreign.log").exists(),
        "the replaced hook ran"
    );
    sandbox.evalock(&["hook", "uninstall"]).assert_code(0);
    assert_eq!(
        std::fs::read_to_string(&hook).expect("restored"),
        FOREIGN_HOOK
    );
}

#[test]
fn uninstall_never_removes_a_hook_that_is_not_evalocks() {
    let sandbox = Sandbox::demo();
    let hook = sandbox.path().join(".git/hooks/pre-commit");
    write_hook(&hook, FOREIGN_HOOK);
    sandbox
        .evalock(&["hook", "uninstall"])
        .assert_code(0)
        .assert_contains("is not evalock's hook: left alone");
    assert_eq!(std::fs::read_to_string(&hook).expect("kept"), FOREIGN_HOOK);
}

#[test]
fn install_changes_nothing_when_an_earlier_hook_is_already_kept() {
    let sandbox = Sandbox::demo();
    let hooks = sandbox.path().join(".git/hooks");
    write_hook(&hooks.join("pre-commit"), FOREIGN_HOOK);
    write_hook(
        &hooks.join("pre-commit.before-evalock"),
        "#!/bin/sh\nexit 0\n",
    );
    let before = listing(&hooks);
    let refused = sandbox.evalock(&["hook", "install"]);
    refused
        .assert_code(64)
        .assert_contains("already holds an earlier one");
    assert_eq!(listing(&hooks), before);
}

#[test]
fn a_project_in_a_subfolder_is_checked_from_the_top_of_the_work_tree() {
    let sandbox = Sandbox::demo();
    // Move the demo into a subfolder of the repository.
    std::fs::create_dir(sandbox.path().join("eval suite")).expect("subfolder");
    sandbox.git_ok(&[
        "mv",
        "evalock.toml",
        "evalock.lock",
        "evals",
        "prompts",
        "eval suite/",
    ]);
    sandbox.git_ok(&["commit", "-q", "-m", "move the project"]);
    sandbox
        .evalock(&["-C", "eval suite", "hook", "install"])
        .assert_code(0);
    let script =
        std::fs::read_to_string(sandbox.path().join(".git/hooks/pre-commit")).expect("hook");
    assert!(script.contains("\nproject_dir='eval suite'\n"), "{script}");

    let case = format!("eval suite/{CASE_FILE}");
    sandbox.repo.replace(&case, CASE_TEXT, CASE_EDITED);
    sandbox.git_ok(&["add", &case]);
    let refused = sandbox.git(&["commit", "-m", "drift"]);
    assert_ne!(refused.code, 0, "{}", refused.all());
    // The paths and commands are the project's: the report says where that is, as the
    // commit was made from the top of the work tree.
    refused
        .assert_contains("note: paths below are relative to eval suite/, the folder of evalock.toml; run the commands there")
        .assert_contains("evals/support.jsonl:2: EL101");
    sandbox.git_ok(&["reset", "-q", "--hard"]);
    commit_unrelated(&sandbox, "top-level notes\n").assert_code(0);
}

#[test]
fn without_evalock_on_path_the_installing_binary_runs_or_the_hook_says_what_to_do() {
    let sandbox = Sandbox::demo();
    sandbox.evalock(&["hook", "install"]).assert_code(0);
    let short_path = format!("{}:/usr/bin:/bin", folder_of_git().display());
    sandbox.repo.replace(CASE_FILE, CASE_TEXT, CASE_EDITED);
    sandbox.git_ok(&["add", CASE_FILE]);
    let mut commit = sandbox.command("git");
    commit
        .env("PATH", &short_path)
        .args(["commit", "-m", "drift"]);
    let refused = sandbox.run(commit);
    assert_ne!(refused.code, 0);
    refused.assert_contains("EL101");

    let hook = sandbox.path().join(".git/hooks/pre-commit");
    let script = std::fs::read_to_string(&hook).expect("hook");
    let moved = script.replace(
        &format!("fallback_evalock='{EVALOCK}'"),
        "fallback_evalock='/nonexistent/evalock'",
    );
    write_hook(&hook, &moved);
    let mut commit = sandbox.command("git");
    commit
        .env("PATH", &short_path)
        .args(["commit", "-m", "drift"]);
    let stopped = sandbox.run(commit);
    assert_ne!(stopped.code, 0);
    stopped
        .assert_contains("`evalock` is not on PATH")
        .assert_contains("git commit --no-verify");
}

/// A hook that cannot work is not installed: for a folder with no evalock.toml (every
/// commit would then fail), or into a core.hooksPath set in the user's git configuration
/// (the hook would run in every other repository too). Set for this repository only, the
/// same folder is fine.
#[test]
fn install_refuses_a_folder_without_a_project_and_a_hooks_path_every_repository_shares() {
    let sandbox = Sandbox::demo();
    let hooks = git_hooks_dir(&sandbox);
    std::fs::create_dir_all(sandbox.path().join("docs")).expect("mkdir");
    let config = sandbox.path().join("evalock.toml");
    let aside = sandbox.path().join("docs/evalock.toml.aside");
    std::fs::rename(&config, &aside).expect("move the project's evalock.toml aside");
    sandbox
        .evalock(&["-C", "docs", "hook", "install"])
        .assert_code(64)
        .assert_contains("/docs: the hook checks the project there")
        .assert_contains("evalock init");
    assert!(!hooks.join("pre-commit").exists());
    std::fs::rename(&aside, &config).expect("put evalock.toml back");

    let shared = tempfile::tempdir().expect("shared hooks");
    let shared_path = shared.path().to_str().expect("utf-8");
    sandbox.git_ok(&["config", "--unset", "core.hooksPath"]);
    sandbox.git_ok(&["config", "--global", "core.hooksPath", shared_path]);
    sandbox
        .evalock(&["hook", "install"])
        .assert_code(64)
        .assert_contains("core.hooksPath is set in")
        .assert_contains("outside this repository");
    assert!(!shared.path().join("pre-commit").exists());

    sandbox.git_ok(&["config", "core.hooksPath", shared_path]);
    sandbox.evalock(&["hook", "install"]).assert_code(0);
    assert!(shared.path().join("pre-commit").is_file());
}
