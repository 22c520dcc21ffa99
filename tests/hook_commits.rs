//! Real commits through the installed hook: each commit is judged on exactly the bytes it
//! records, whichever way git builds them (`git commit`, `-a`, `<paths>`, partial staging,
//! `--amend`, merges).

mod common;
mod git_sandbox;

use git_sandbox::{Sandbox, CASE_BUMPED, CASE_EDITED, CASE_FILE, CASE_TEXT, CASE_VERSION};

fn with_hook() -> Sandbox {
    let sandbox = Sandbox::demo();
    sandbox.evalock(&["hook", "install"]).assert_code(0);
    sandbox.repo.write("notes.txt", "unrelated notes\n");
    sandbox.git_ok(&["add", "notes.txt"]);
    sandbox.git_ok(&["commit", "-q", "-m", "notes"]);
    sandbox
}

fn edit_case_in_place(sandbox: &Sandbox) {
    sandbox.repo.replace(CASE_FILE, CASE_TEXT, CASE_EDITED);
}

#[track_caller]
fn assert_refused(sandbox: &Sandbox, run: &common::Run, head_before: &str) {
    assert_ne!(run.code, 0, "the commit went through\n{}", run.all());
    run.assert_contains("evals/support.jsonl:2: EL101 case-unlocked (refuse)")
        .assert_contains("bump `version` to 4")
        .assert_contains("`evalock lock` and `git add evalock.lock`")
        .assert_contains("evalock stopped this commit");
    assert_eq!(
        sandbox.head(),
        head_before,
        "HEAD moved although the hook refused"
    );
}

#[test]
fn an_in_place_edit_is_refused_and_a_bump_with_relock_goes_through() {
    let sandbox = with_hook();
    let head = sandbox.head();
    edit_case_in_place(&sandbox);
    sandbox.git_ok(&["add", CASE_FILE]);
    let refused = sandbox.git(&["commit", "-m", "reword a shipped case"]);
    assert_refused(&sandbox, &refused, &head);

    sandbox.repo.replace(CASE_FILE, CASE_VERSION, CASE_BUMPED);
    sandbox.evalock(&["lock"]).assert_code(0);
    sandbox.git_ok(&["add", CASE_FILE, "evalock.lock"]);
    sandbox
        .git(&["commit", "-m", "refund-no-order-id v4"])
        .assert_code(0)
        .assert_contains("PASS");
    assert_ne!(sandbox.head(), head);
    assert!(sandbox.committed(CASE_FILE).contains(CASE_BUMPED));
    sandbox.evalock(&["check", "--rev", "HEAD"]).assert_code(0);
}

#[test]
fn unstaged_drift_is_not_judged_but_commit_all_records_and_refuses_it() {
    let sandbox = with_hook();
    let head = sandbox.head();
    edit_case_in_place(&sandbox);
    sandbox.repo.write("notes.txt", "more notes\n");
    sandbox.git_ok(&["add", "notes.txt"]);
    let plain = sandbox.git(&["commit", "-m", "notes only"]);
    plain
        .assert_code(0)
        .assert_contains("no staged change touches what evalock tracks");
    assert!(!sandbox.committed(CASE_FILE).contains(CASE_EDITED));

    let head = {
        assert_ne!(sandbox.head(), head);
        sandbox.head()
    };
    let all = sandbox.git(&["commit", "-a", "-m", "everything"]);
    assert_refused(&sandbox, &all, &head);
}

#[test]
fn commit_of_paths_judges_those_paths_over_head_not_the_rest_of_the_index() {
    let sandbox = with_hook();
    // A drifted case is staged, but only notes.txt is committed.
    edit_case_in_place(&sandbox);
    sandbox.git_ok(&["add", CASE_FILE]);
    sandbox.repo.write("notes.txt", "notes, edited\n");
    sandbox
        .git(&["commit", "-m", "notes only", "notes.txt"])
        .assert_code(0);
    assert_eq!(sandbox.committed("notes.txt"), "notes, edited\n");
    assert!(!sandbox.committed(CASE_FILE).contains(CASE_EDITED));
    assert!(
        sandbox.staged(CASE_FILE).contains(CASE_EDITED),
        "the staged case stays staged"
    );

    // And the other way round: the committed path drifts, the staged rest is harmless.
    sandbox.git_ok(&["reset", "-q", CASE_FILE]);
    sandbox.repo.write("notes.txt", "notes, staged\n");
    sandbox.git_ok(&["add", "notes.txt"]);
    let head = sandbox.head();
    let refused = sandbox.git(&["commit", "-m", "the case", CASE_FILE]);
    assert_refused(&sandbox, &refused, &head);
}

#[test]
fn a_partially_staged_file_is_judged_on_its_staged_bytes() {
    let sandbox = with_hook();
    // Staged: a proper new version with its lock. Working tree on top: an in-place edit of
    // another case, never staged.
    sandbox.repo.replace(CASE_FILE, CASE_VERSION, CASE_BUMPED);
    sandbox.repo.replace(CASE_FILE, CASE_TEXT, CASE_EDITED);
    sandbox.evalock(&["lock"]).assert_code(0);
    sandbox.git_ok(&["add", CASE_FILE, "evalock.lock"]);
    sandbox.repo.replace(
        CASE_FILE,
        "Cancel my subscription today.",
        "Cancel my subscription right now.",
    );
    sandbox
        .evalock(&["check"])
        .assert_code(2)
        .assert_contains("cancel-subscription");
    sandbox.git(&["commit", "-m", "v4 only"]).assert_code(0);
    let committed = sandbox.committed(CASE_FILE);
    assert!(
        committed.contains(CASE_BUMPED) && !committed.contains("right now"),
        "{committed}"
    );

    // The reverse: the index holds a drifted case (built with update-index --cacheinfo)
    // while the working tree is clean.
    let head = sandbox.head();
    sandbox.git_ok(&["checkout", "--", CASE_FILE]);
    sandbox.evalock(&["check"]).assert_code(0);
    let drifted = sandbox
        .committed(CASE_FILE)
        .replace("Cancel my subscription today.", "Cancel it.");
    sandbox.stage_only(CASE_FILE, &drifted);
    let refused = sandbox.git(&["commit", "-m", "staged drift"]);
    assert_ne!(refused.code, 0, "{}", refused.all());
    refused
        .assert_contains("EL101")
        .assert_contains("cancel-subscription");
    assert_eq!(sandbox.head(), head);
}

#[test]
fn amend_is_judged_on_the_amended_content() {
    let sandbox = with_hook();
    let head = sandbox.head();
    edit_case_in_place(&sandbox);
    sandbox.git_ok(&["add", CASE_FILE]);
    let refused = sandbox.git(&["commit", "--amend", "--no-edit"]);
    assert_refused(&sandbox, &refused, &head);

    sandbox.git_ok(&["checkout", "HEAD", "--", CASE_FILE]);
    sandbox
        .git(&["commit", "--amend", "-m", "notes, reworded"])
        .assert_code(0);
    assert_ne!(sandbox.head(), head);
}

#[test]
fn a_commit_of_unrelated_files_passes_without_loading_the_lock() {
    let sandbox = with_hook();
    // A lock that cannot even be parsed proves the fast path never reads it.
    sandbox.repo.write("evalock.lock", "lock_version = [\n");
    sandbox.git_ok(&["add", "evalock.lock"]);
    sandbox.git_ok(&[
        "commit",
        "-q",
        "--no-verify",
        "-m",
        "broken lock, hook skipped",
    ]);
    sandbox.repo.write("src/app.py", "print('hello')\n");
    sandbox.git_ok(&["add", "src/app.py"]);
    sandbox
        .repo
        .evalock(&["check", "--staged", "--verbose"])
        .assert_code(0)
        .assert_contains("evalock: nothing staged is a file evalock reads");
    sandbox
        .git(&["commit", "-m", "app"])
        .assert_code(0)
        .assert_contains("no staged change touches what evalock tracks");
    // Touching a tracked file brings the full check, which does read the lock.
    sandbox
        .repo
        .write("prompts/support.txt", "You are a support agent.\n");
    sandbox.git_ok(&["add", "prompts/support.txt"]);
    sandbox
        .git(&["commit", "-m", "prompt"])
        .assert_code(1)
        .assert_contains("evalock.lock:1");
}

#[test]
fn a_clean_merge_that_brings_drift_is_refused_by_pre_merge_commit() {
    let sandbox = with_hook();
    sandbox.git_ok(&["checkout", "-q", "-b", "topic"]);
    edit_case_in_place(&sandbox);
    sandbox.git_ok(&[
        "commit",
        "-q",
        "-a",
        "--no-verify",
        "-m",
        "drift, hook skipped",
    ]);
    sandbox.git_ok(&["checkout", "-q", "main"]);
    sandbox.repo.write("notes.txt", "main moves on\n");
    sandbox.git_ok(&["commit", "-q", "-a", "-m", "notes on main"]);
    let head = sandbox.head();
    let merge = sandbox.git(&["merge", "--no-ff", "--no-edit", "topic"]);
    assert_ne!(merge.code, 0, "{}", merge.all());
    merge
        .assert_contains("EL101")
        .assert_contains("refund-no-order-id");
    assert_eq!(sandbox.head(), head);
    sandbox.git_ok(&["merge", "--abort"]);
}

#[test]
fn a_lock_conflict_resolved_by_relocking_commits_the_merge() {
    let sandbox = with_hook();
    let first_case = r#""id": "order-status-known-id", "version": 2"#;
    let last_case = r#""id": "cancel-subscription", "version": 1"#;
    sandbox.git_ok(&["checkout", "-q", "-b", "topic"]);
    sandbox.repo.replace(
        CASE_FILE,
        first_case,
        r#""id": "order-status-known-id", "version": 3"#,
    );
    sandbox
        .repo
        .replace(CASE_FILE, "Where is my package?", "Where is my parcel?");
    sandbox.evalock(&["lock"]).assert_code(0);
    sandbox
        .git(&["commit", "-a", "-m", "order-status v3"])
        .assert_code(0);
    sandbox.git_ok(&["checkout", "-q", "main"]);
    sandbox.repo.replace(
        CASE_FILE,
        last_case,
        r#""id": "cancel-subscription", "version": 2"#,
    );
    sandbox.repo.replace(
        CASE_FILE,
        "Cancel my subscription today.",
        "Cancel my plan today.",
    );
    sandbox.evalock(&["lock"]).assert_code(0);
    sandbox
        .git(&["commit", "-a", "-m", "cancel-subscription v2"])
        .assert_code(0);

    let merge = sandbox.git(&["merge", "--no-edit", "topic"]);
    assert_ne!(merge.code, 0);
    merge.assert_contains("CONFLICT (content): Merge conflict in evalock.lock");
    sandbox.evalock(&["lock"]).assert_code(0);
    sandbox.git_ok(&["add", "evalock.lock"]);
    sandbox
        .git(&["commit", "--no-edit"])
        .assert_code(0)
        .assert_contains("PASS");
    let merged = sandbox.committed(CASE_FILE);
    assert!(merged.contains("Where is my parcel?") && merged.contains("Cancel my plan today."));
    sandbox.evalock(&["check", "--rev", "HEAD"]).assert_code(0);
}

/// Hook runners that `cd` into the project's folder before running evalock get the
/// GIT_INDEX_FILE git hands hooks (`.git/index` for a plain commit, relative): git
/// resolves it from the top of the work tree, and so must evalock.
#[test]
fn a_hook_that_runs_evalock_from_a_subfolder_reads_the_index_git_names() {
    let sandbox = Sandbox::demo();
    let hook = sandbox.repo.join(".git/hooks/pre-commit");
    std::fs::write(
        &hook,
        "#!/bin/sh\ncd evals && exec evalock check --staged\n",
    )
    .expect("hook");
    std::fs::set_permissions(&hook, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("chmod");
    sandbox.repo.write("notes.txt", "unrelated notes\n");
    sandbox.git_ok(&["add", "notes.txt"]);
    sandbox.git(&["commit", "-q", "-m", "notes"]).assert_code(0);

    let head = sandbox.head();
    edit_case_in_place(&sandbox);
    sandbox.git_ok(&["add", CASE_FILE]);
    let refused = sandbox.git(&["commit", "-m", "reword a shipped case"]);
    assert_ne!(
        refused.code,
        0,
        "the commit went through\n{}",
        refused.all()
    );
    refused
        .assert_contains("note: paths below are relative to ../, the folder of evalock.toml")
        .assert_contains("evals/support.jsonl:2: EL101 case-unlocked (refuse)");
    assert_eq!(sandbox.head(), head);

    // The same, with the variable as git sets it, from a folder below the top.
    let mut command = sandbox.command(common::EVALOCK);
    command
        .args(["check", "--staged"])
        .current_dir(sandbox.repo.join("evals"))
        .env("GIT_INDEX_FILE", ".git/index");
    sandbox
        .run(command)
        .assert_code(2)
        .assert_contains("EL101 case-unlocked");
}

/// A new case file (and prompt) written, named in evalock.toml and locked, but never `git add`ed: the
/// commit does not hold it, so the hook refuses; the fix it gives is to stage the file,
/// not to fix the glob or to restore and retire its cases. A case file deleted for real
/// keeps the usual advice.
#[test]
fn a_new_case_file_that_was_not_staged_is_named_with_the_git_add_it_needs() {
    let sandbox = with_hook();
    let head = sandbox.head();
    sandbox.repo.write(
        "evals/gift wrap.jsonl",
        "{\"id\": \"gift-wrap\", \"input\": {\"messages\": [{\"role\": \"user\", \"content\": \"Gift wrap?\"}]}, \"expect\": {\"must_include\": [\"gift\"]}}\n",
    );
    sandbox.repo.replace(
        "evalock.toml",
        "cases = [\"evals/support.jsonl\"]",
        "cases = [\"evals/support.jsonl\", \"evals/gift*.jsonl\"]",
    );
    // A second prompt for the suite, not staged either.
    sandbox
        .repo
        .write("prompts/gifts.txt", "Mention gift wrapping when asked.\n");
    sandbox.repo.replace(
        "evalock.toml",
        "prompt = \"prompts/support.txt\"",
        "prompt = [\"prompts/support.txt\", \"prompts/gifts.txt\"]",
    );
    sandbox.evalock(&["lock"]).assert_code(0);
    sandbox.git_ok(&["add", "evalock.toml", "evalock.lock"]);
    let prompt = sandbox.evalock(&["check", "--staged"]);
    prompt
        .assert_code(2)
        .assert_contains("prompt file prompts/gifts.txt of suite `support` is missing")
        .assert_contains("fix: the working tree has it, the commit does not: `git add -- prompts/gifts.txt`, then commit again");
    sandbox.git_ok(&["add", "prompts/gifts.txt"]);
    let stage = "the working tree has it, the commit does not: `git add -- 'evals/gift wrap.jsonl'`, then commit again";
    let refused = sandbox.git(&["commit", "-m", "gift wrap case"]);
    assert_ne!(refused.code, 0, "{}", refused.all());
    refused
        .assert_contains("no case file matches `evals/gift*.jsonl`")
        .assert_contains(
            "locked case `gift-wrap` (version 1) is missing from evals/gift wrap.jsonl",
        )
        .assert_contains(&format!("fix: {stage}"))
        .assert_not_contains("fix the glob")
        .assert_not_contains("retired");
    assert_eq!(sandbox.head(), head);
    // The advice follows the working tree, also when the index's report is remembered.
    let text = sandbox.repo.read("evals/gift wrap.jsonl");
    sandbox.repo.remove("evals/gift wrap.jsonl");
    sandbox
        .evalock(&["check", "--staged"])
        .assert_code(2)
        .assert_not_contains("the working tree has it");
    sandbox.repo.write("evals/gift wrap.jsonl", &text);
    sandbox
        .evalock(&["check", "--staged"])
        .assert_code(2)
        .assert_contains(stage);
    // As told: stage it, commit again.
    sandbox.git_ok(&["add", "evals/gift wrap.jsonl"]);
    sandbox
        .git(&["commit", "-m", "gift wrap case"])
        .assert_code(0);
    // Deleted from the working tree too: a removal, with the usual advice.
    sandbox.git_ok(&["rm", "-q", "evals/gift wrap.jsonl"]);
    sandbox
        .evalock(&["check", "--staged"])
        .assert_code(2)
        .assert_contains("fix the glob in evalock.toml, or add the case file")
        .assert_contains("\"retired\": true")
        .assert_not_contains("the working tree has it");
}

/// The `git add` the hook prints works as typed, also for a case file git ignores (it
/// needs `-f`) whose name holds glob characters (git would match `[1]` as a pattern).
#[test]
fn the_git_add_for_an_ignored_case_file_with_glob_characters_works_as_printed() {
    let sandbox = with_hook();
    sandbox.repo.write(".gitignore", "evals/private/\n");
    sandbox.git_ok(&["add", ".gitignore"]);
    sandbox.repo.write(
        "evals/private/new[1].jsonl",
        "{\"id\": \"private-1\", \"input\": \"hi\"}\n",
    );
    sandbox.repo.replace(
        "evalock.toml",
        "cases = [\"evals/support.jsonl\"]",
        "cases = [\"evals/support.jsonl\", \"evals/private/*.jsonl\"]",
    );
    sandbox.evalock(&["lock"]).assert_code(0);
    sandbox.git_ok(&["add", "evalock.toml", "evalock.lock"]);
    let command = "git add -f -- ':(literal)evals/private/new[1].jsonl'";
    sandbox
        .evalock(&["check", "--staged"])
        .assert_code(2)
        .assert_contains(&format!(
            "the working tree has it, the commit does not: `{command}`"
        ));
    let typed = std::process::Command::new("sh")
        .args(["-c", command])
        .current_dir(sandbox.path())
        .status()
        .expect("sh runs");
    assert!(typed.success(), "the printed command failed");
    sandbox.evalock(&["check", "--staged"]).assert_code(0);
}
