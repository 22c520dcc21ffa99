//! The demo end to end, as the seed "Diff Last-Good Completions" walks it: accepted
//! baselines are clean, an invariant break exits 1 with the diff, a prompt edit is refused
//! (2) until re-recorded, a silent move exits 3 with --fail-on-diff. Plus the integrity of
//! baselines: tampering, writes in CI, reasons against the base revision.

mod common;

use common::TestRepo;

/// The demo after its first recording: baselines accepted and committed on `main`.
fn accepted_demo() -> TestRepo {
    let repo = TestRepo::with_fixture("demo");
    repo.evalock(&["run"]).assert_code(0);
    repo.evalock(&["accept", "--reason", "first recording"])
        .assert_code(0);
    repo.commit_all("record the stub's completions as last-good");
    repo
}

fn use_variant(repo: &TestRepo, variant: &str) {
    let text = repo.read("evalock.toml");
    let text = text.replace(
        "completer = [\"python3\", \"completers/stub.py\"]",
        &format!("completer = [\"python3\", \"completers/stub.py\", \"{variant}\"]"),
    );
    repo.write("evalock.toml", text);
}

#[test]
fn the_demo_is_clean_and_its_runs_match_the_accepted_baselines() {
    let repo = TestRepo::with_fixture("demo");
    repo.evalock(&["check"])
        .assert_code(0)
        .assert_contains("PASS (no findings)");
    let first = repo.evalock(&["run"]);
    first.assert_code(0).assert_contains("14 cases: 14 PASS");
    // One line for the rule, with a count, not one per case.
    assert_eq!(
        first
            .stdout
            .matches("EL404 baseline-missing (warn)")
            .count(),
        1
    );
    first.assert_contains("(and 13 more like it; `--format json` lists each)");
    let listed = repo.evalock(&[
        "report",
        "--from",
        ".evalock/results.json",
        "--format",
        "json",
    ]);
    assert_eq!(listed.stdout.matches("\"EL404\"").count(), 14);
    repo.evalock(&["accept", "--reason", "first recording"])
        .assert_code(0)
        .assert_contains("wrote evals/support.baseline.json: 11 recorded");
    repo.evalock(&["check"])
        .assert_code(0)
        .assert_contains("PASS (no findings)");
    let run = repo.evalock(&["run"]);
    run.assert_code(0)
        .assert_contains("14 cases: 14 PASS")
        .assert_not_contains("EL404");
    assert!(repo.join(".evalock/results.json").exists());
    repo.evalock(&["review"])
        .assert_code(0)
        .assert_contains("nothing moved, regressed or improved");
}

#[test]
fn a_regressed_completer_fails_with_the_case_and_its_diff() {
    let repo = accepted_demo();
    use_variant(&repo, "regressed");
    let run = repo.evalock(&["run", "--suite", "support"]);
    run.assert_code(1)
        .assert_contains(
            "evals/support.jsonl:2: EL501 regressed (error): case `refund-no-order-id`",
        )
        .assert_contains("forbidden_tool:create_refund")
        .assert_contains("-  \"reply\": \"Which order id should I refund?\",")
        .assert_contains("+  \"reply\": \"Your refund has been issued for your last order.\",")
        .assert_contains("evals/support.jsonl:8: EL501 regressed (error): case `no-ai-disclaimer`")
        .assert_contains("forbidden:as an AI");
    let review = repo.evalock(&["review"]);
    review
        .assert_code(0)
        .assert_contains("REGRESSED support/refund-no-order-id (evals/support.jsonl:2)");
    review.assert_contains("--- baseline (sha256:");
    // Only passing cases are accepted: the regressions keep their last-good entries.
    let before = repo.read("evals/support.baseline.json");
    let accept = repo.evalock(&["accept", "--reason", "try"]);
    accept
        .assert_code(0)
        .assert_contains("skipped support/refund-no-order-id REGRESSED");
    assert_eq!(repo.read("evals/support.baseline.json"), before);
    repo.evalock(&["accept", "--reason", "try", "--case", "refund-no-order-id"])
        .assert_code(64);
}

#[test]
fn a_silent_move_exits_3_only_with_fail_on_diff() {
    let repo = accepted_demo();
    use_variant(&repo, "moved");
    let run = repo.evalock(&["run", "--suite", "support", "--fail-on-diff"]);
    run.assert_code(3)
        .assert_contains("EL503 moved (note): case `warranty-question`")
        .assert_contains(
            "+  \"reply\": \"Good news: the kettle has a 2 years warranty, parts and labour.\",",
        );
    repo.evalock(&["run", "--suite", "support"]).assert_code(0);
    // Accepting the move makes it the new last-good completion.
    repo.evalock(&["accept", "--reason", "warmer warranty wording"])
        .assert_code(0)
        .assert_contains("recorded support/warranty-question");
    repo.evalock(&["run", "--suite", "support", "--fail-on-diff"])
        .assert_code(0);
    assert!(repo
        .read("evals/support.baseline.json")
        .contains("\"reason\": \"warmer warranty wording\""));
}

/// After a run, the next step names the results file the run wrote: `review` and
/// `accept` read `.evalock/results.json` unless given `--from`, so after `run --out FILE`
/// the bare commands would show and record an older run. A first run, whose passing cases
/// have no baseline yet, is told to accept them; a run with nothing to do is told nothing.
#[test]
fn the_next_step_after_a_run_names_the_results_file_it_wrote() {
    let repo = TestRepo::with_fixture("demo");
    let first = repo.evalock(&["run"]);
    first.assert_code(0).assert_contains(
        "next: `evalock accept --reason \"…\"` records the passing cases that have no baseline yet",
    );
    repo.evalock(&["accept", "--reason", "first recording"])
        .assert_code(0);
    repo.evalock(&["run"])
        .assert_code(0)
        .assert_not_contains("next:");
    use_variant(&repo, "moved");
    repo.evalock(&["run", "--suite", "support"])
        .assert_code(0)
        .assert_contains(
            "next: `evalock review` shows every moved completion; `evalock accept --reason",
        );
    let out = repo.join("runs/moved run.json");
    let out = std::path::absolute(&out).expect("absolute");
    let quoted = format!("'{}'", out.display());
    let run = repo.evalock(&["run", "--suite", "support", "--out", "runs/moved run.json"]);
    run.assert_code(0)
        .assert_contains(&format!("`evalock review --from {quoted}`"))
        .assert_contains(&format!("`evalock accept --from {quoted} --reason"));
    // The command it names works as written (from anywhere: the path is absolute).
    repo.evalock(&["review", "--from", &out.display().to_string()])
        .assert_code(0)
        .assert_contains("MOVED support/warranty-question");
}

/// `merge` runs wherever it is started, not in the project: its results file is only the
/// one `accept` reads by default when it is the project's `.evalock/results.json`. Merged
/// into `.evalock/results.json` of a folder below the project, the next step names it
/// with `--from`, and works as written from there.
#[test]
fn the_next_step_after_a_merge_below_the_project_names_the_file_it_wrote() {
    let repo = TestRepo::with_fixture("demo");
    for shard in ["1/2", "2/2"] {
        let out = format!("shard-{}.json", &shard[..1]);
        repo.evalock(&["run", "--suite", "support", "--shard", shard, "--out", &out])
            .assert_code(0);
    }
    let merged = std::path::absolute(repo.join("evals/.evalock/results.json")).expect("absolute");
    let from = format!("--from {}", merged.display());
    let merge = [
        "-C",
        "evals",
        "merge",
        "../shard-1.json",
        "../shard-2.json",
        "--out",
        ".evalock/results.json",
    ];
    repo.evalock(&merge)
        .assert_code(0)
        .assert_contains(&format!("next: `evalock accept {from} --reason"));
    repo.evalock(&[
        "-C",
        "evals",
        "accept",
        "--from",
        &merged.display().to_string(),
        "--reason",
        "merged",
    ])
    .assert_code(0);
    // Merged where the project keeps its results, it needs no --from.
    repo.remove("evals/support.baseline.json");
    repo.evalock(&[
        "merge",
        "shard-1.json",
        "shard-2.json",
        "--out",
        ".evalock/results.json",
    ])
    .assert_code(0)
    .assert_contains("next: `evalock accept --reason");
}

/// Exit 3 fails the gate, so no report may read PASS: every format says BLOCK, and the
/// same move without --fail-on-diff stays PASS.
#[test]
fn a_move_that_fails_the_gate_is_blocked_in_every_format() {
    let repo = accepted_demo();
    use_variant(&repo, "moved");
    let json = repo.evalock(&[
        "run",
        "--suite",
        "support",
        "--fail-on-diff",
        "--format",
        "json",
    ]);
    json.assert_code(3);
    let report: serde_json::Value = serde_json::from_str(&json.stdout).expect("a JSON report");
    assert_eq!(report["verdict"], "BLOCK");
    assert_eq!(report["exit_code"], 3);
    assert_eq!(report["fail_on_diff"], true);
    repo.evalock(&["run", "--suite", "support", "--fail-on-diff"])
        .assert_code(3)
        .assert_contains("): BLOCK (")
        .assert_contains("; moved completions fail the gate with --fail-on-diff)");
    let from = ["report", "--from", ".evalock/results.json", "--format"];
    let render = |format: &str| {
        let mut args = from.to_vec();
        args.push(format);
        let run = repo.evalock(&args);
        run.assert_code(0);
        run.stdout
    };
    let markdown = render("markdown");
    assert!(
        markdown.starts_with("## ❌ evalock run: BLOCK"),
        "{markdown}"
    );
    assert!(markdown.contains("**exit code:** 3"), "{markdown}");
    assert!(render("junit").contains("evalock run: BLOCK"));
    assert!(render("human").contains(": BLOCK ("));
    assert!(render("json").contains("\"verdict\": \"BLOCK\""));

    // The same move, gate not asked to fail on it: exit 0. The reworded answers are a
    // quarter longer than last-good, past the size pin: a warning (EL510), not a failure.
    let json = repo.evalock(&["run", "--suite", "support", "--format", "json"]);
    json.assert_code(0);
    let report: serde_json::Value = serde_json::from_str(&json.stdout).expect("a JSON report");
    assert_eq!(report["verdict"], "WARN");
    assert_eq!(report["exit_code"], 0);
    let breaches = report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|finding| finding["rule"] == "EL510")
        .count();
    assert!(breaches > 0, "{}", json.stdout);
    let markdown = render("markdown");
    assert!(
        markdown.starts_with("## ⚠️ evalock run: WARN"),
        "{markdown}"
    );
}

#[test]
fn a_prompt_edit_is_refused_until_re_recorded() {
    let repo = accepted_demo();
    repo.write(
        "prompts/support.txt",
        format!(
            "{}- Keep replies under two sentences.\n",
            repo.read("prompts/support.txt")
        ),
    );
    let run = repo.evalock(&["run", "--suite", "support"]);
    run.assert_code(2)
        .assert_contains("EL107 prompt-unlocked")
        .assert_contains(
            "EL401 baseline-drifted (refuse): baseline of case `order-status-known-id`",
        )
        .assert_contains("recorded against another prompt (sha256:");
    repo.evalock(&["lock"]).assert_code(0);
    repo.evalock(&["check"])
        .assert_code(2)
        .assert_contains("EL401")
        .assert_contains("fix: run `evalock run --suite support`, read the diff, then `evalock accept --suite support --reason \"…\"`")
        .assert_not_contains("EL107");
    repo.evalock(&["run", "--suite", "support"]).assert_code(2);
    repo.evalock(&["accept", "--reason", "prompt asks for shorter replies"])
        .assert_code(0);
    repo.evalock(&["check"]).assert_code(0);
    repo.evalock(&["run", "--suite", "support"]).assert_code(0);
}

#[test]
fn accept_refuses_stale_results() {
    let repo = TestRepo::with_fixture("demo");
    repo.evalock(&["run", "--suite", "support"]).assert_code(0);
    repo.replace(
        "evals/support.jsonl",
        "\"max_chars\": 300",
        "\"max_chars\": 280",
    );
    let accept = repo.evalock(&["accept", "--reason", "x"]);
    accept
        .assert_code(2)
        .assert_contains("stale for case `shipping-cost`")
        .assert_contains("case (sha256:");
}

#[test]
fn accept_in_ci_is_refused_and_writes_nothing() {
    let repo = accepted_demo();
    use_variant(&repo, "moved");
    repo.evalock(&["run", "--suite", "support"]).assert_code(0);
    let before = repo.read_bytes("evals/support.baseline.json");
    let accept = repo.evalock_with(&["accept", "--reason", "from CI"], &[("CI", "true")]);
    accept
        .assert_code(2)
        .assert_contains("EL403 baseline-written-in-ci")
        .assert_contains("nothing was written");
    assert_eq!(
        repo.read_bytes("evals/support.baseline.json"),
        before,
        "the baseline must stay byte-identical"
    );
    let leftovers: Vec<_> = std::fs::read_dir(repo.join("evals"))
        .unwrap()
        .filter_map(|entry| entry.ok())
        .filter(|entry| {
            entry
                .file_name()
                .to_string_lossy()
                .starts_with(".evalock-tmp")
        })
        .collect();
    assert!(leftovers.is_empty());
    // CI=false is not CI.
    repo.evalock_with(&["accept", "--reason", "local"], &[("CI", "false")])
        .assert_code(0);
    assert_ne!(repo.read_bytes("evals/support.baseline.json"), before);
}

#[test]
fn a_hand_edited_baseline_digest_is_tampering() {
    let repo = accepted_demo();
    let text = repo.read("evals/support.baseline.json");
    let start = text.find("\"digest\": \"sha256:").unwrap() + "\"digest\": \"sha256:".len();
    let edited = format!(
        "{}{}{}",
        &text[..start],
        "0".repeat(64),
        &text[start + 64..]
    );
    repo.write("evals/support.baseline.json", edited);
    let check = repo.evalock(&["check"]);
    check.assert_code(2).assert_contains("evals/support.baseline.json:5: EL402 baseline-tampered (refuse): baseline entry `address-change`");
    repo.evalock(&["run", "--suite", "support"])
        .assert_code(2)
        .assert_contains("EL402");
    // A completion edited to match a forged digest is still caught: its digest moves.
    repo.write(
        "evals/support.baseline.json",
        text.replacen("12 Rue Oberkampf", "13 Rue Oberkampf", 1),
    );
    repo.evalock(&["check"])
        .assert_code(2)
        .assert_contains("EL402");
    repo.write(
        "evals/support.baseline.json",
        "{\n  \"schema\": \"evalock.baseline/v1\",\n  \"suite\": \"support\"\n",
    );
    repo.evalock(&["check"])
        .assert_code(2)
        .assert_contains("evals/support.baseline.json:4:")
        .assert_contains("EL402");
    repo.evalock(&["run", "--suite", "support"]).assert_code(2);
    repo.evalock(&["accept", "--reason", "x"])
        .assert_code(65)
        .assert_contains("evals/support.baseline.json:4:");
}

#[test]
fn baselines_changed_against_the_base_need_a_reason() {
    let repo = accepted_demo();
    repo.git(&["checkout", "-q", "-b", "rerecord"]);
    // A hand re-recording: consistent digest, but the old reason.
    let text = repo.read("evals/support.baseline.json");
    let old = "Shipping within France, Lyon included, is free.";
    let new = "Shipping to Lyon is free.";
    let old_entry_digest = digest_of_entry(&text, "shipping-cost");
    let new_completion = entry_completion(&text, "shipping-cost").replace(old, new);
    let new_digest = format!("sha256:{}", sha256_hex(new_completion.as_bytes()));
    repo.write(
        "evals/support.baseline.json",
        text.replacen(old, new, 1)
            .replacen(&old_entry_digest, &new_digest, 1),
    );
    repo.commit_all("tweak shipping answer");
    repo.evalock(&["check"]).assert_code(0);
    let check = repo.evalock(&["check", "--base", "main"]);
    check
        .assert_code(2)
        .assert_contains("EL406 rebaseline-without-reason")
        .assert_contains("`shipping-cost`");
    // A trailer on a commit since the base is a reason.
    repo.git(&[
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "record why\n\nRebaseline-Reason: shorter shipping answer",
    ]);
    repo.evalock(&["check", "--base", "main"])
        .assert_code(0)
        .assert_not_contains("EL406");
}

#[test]
fn re_recording_with_a_contract_change_in_one_change_is_a_warning() {
    let repo = accepted_demo();
    repo.git(&["checkout", "-q", "-b", "mixed"]);
    repo.write(
        "prompts/support.txt",
        format!("{}- Be brief.\n", repo.read("prompts/support.txt")),
    );
    repo.evalock(&["lock"]).assert_code(0);
    repo.evalock(&["run", "--suite", "support"]).assert_code(2);
    repo.evalock(&["accept", "--reason", "prompt asks for brevity"])
        .assert_code(0);
    repo.commit_all("brevity");
    let check = repo.evalock(&["check", "--base", "main"]);
    check
        .assert_code(0)
        .assert_contains("EL407 mixed-change (warn)")
        .assert_contains("edits its prompt");
    check.assert_not_contains("EL406");
}

#[test]
fn orphaned_entries_are_reported_on_full_runs_and_dropped_by_accept() {
    let repo = accepted_demo();
    repo.replace(
        "evals/support.jsonl",
        "{\"id\": \"shipping-cost\", \"version\": 1,",
        "{\"id\": \"shipping-cost\", \"version\": 1, \"retired\": true,",
    );
    repo.evalock(&["lock"]).assert_code(0);
    repo.evalock(&["check"])
        .assert_code(0)
        .assert_contains("EL405 baseline-orphan (warn): baseline entry `shipping-cost`");
    repo.evalock(&["run", "--suite", "support"])
        .assert_code(0)
        .assert_not_contains("EL405");
    repo.evalock(&["run"])
        .assert_code(0)
        .assert_contains("EL405");
    repo.evalock(&["accept", "--reason", "shipping-cost retired"])
        .assert_code(0)
        .assert_contains("dropped support/shipping-cost");
    repo.evalock(&["check"])
        .assert_code(0)
        .assert_not_contains("EL405");
}

#[test]
fn a_new_case_has_no_baseline_until_accepted_and_known_failures_can_improve() {
    let repo = accepted_demo();
    let mut cases = repo.read("evals/support.jsonl");
    cases.push_str("{\"id\": \"gift-wrap\", \"input\": {\"messages\": [{\"role\": \"user\", \"content\": \"Do you gift wrap?\"}]}, \"expect\": {\"must_include\": [\"gift\"]}}\n");
    repo.write("evals/support.jsonl", cases);
    repo.evalock(&["lock"]).assert_code(0);
    repo.evalock(&["check"])
        .assert_code(0)
        .assert_contains("EL404 baseline-missing (warn): case `gift-wrap`");
    let run = repo.evalock(&["run", "--suite", "support"]);
    run.assert_code(1)
        .assert_contains("EL502 failing (error): case `gift-wrap`")
        .assert_contains("missing:gift");
    repo.evalock(&[
        "accept",
        "--reason",
        "known gap",
        "--case",
        "gift-wrap",
        "--include-failing",
    ])
    .assert_code(0);
    // A known failure: still failing the same way is a note, not a gate failure.
    repo.evalock(&["run", "--suite", "support"])
        .assert_code(0)
        .assert_contains("EL502 failing (note): case `gift-wrap`")
        .assert_contains("is a known failure")
        .assert_not_contains("EL404");
    repo.replace(
        "completers/stub.py",
        "\"Welcome to Acme support. How can I help?\"",
        "\"Welcome to Acme support. We gift wrap for free.\"",
    );
    repo.evalock(&["run", "--suite", "support"])
        .assert_code(0)
        .assert_contains("EL506 improved (note): case `gift-wrap`");
}

/// The `"digest"` of a baseline entry, found by its key.
fn digest_of_entry(text: &str, id: &str) -> String {
    let entry = &text[text.find(&format!("\"{id}\": {{")).unwrap()..];
    let start = entry.find("\"digest\": \"").unwrap() + "\"digest\": \"".len();
    entry[start..start + 71].to_owned()
}

/// The `"completion"` of a baseline entry, unescaped.
fn entry_completion(text: &str, id: &str) -> String {
    let value: serde_json::Value = serde_json::from_str(text).unwrap();
    value["entries"][id]["completion"]
        .as_str()
        .unwrap()
        .to_owned()
}

fn sha256_hex(bytes: &[u8]) -> String {
    evalock::digest::sha256_hex(bytes)
}

/// `review` after the baseline file was broken (a merge left conflict markers): it says the
/// file cannot be read, where, and how to restore it, not that the case's entry is gone.
#[test]
fn review_names_a_baseline_file_it_cannot_read() {
    let repo = accepted_demo();
    use_variant(&repo, "moved");
    repo.evalock(&["run", "--suite", "support"]).assert_code(0);
    // The quiet case: the moved completion is diffed against its entry.
    repo.evalock(&["review"])
        .assert_code(0)
        .assert_contains("MOVED support/warranty-question")
        .assert_contains("--- baseline (sha256:")
        .assert_not_contains("note:");

    let text = repo.read("evals/support.baseline.json");
    repo.write(
        "evals/support.baseline.json",
        format!("<<<<<<< HEAD\n{text}"),
    );
    repo.evalock(&["review"])
        .assert_code(0)
        .assert_contains("MOVED support/warranty-question")
        .assert_contains("note: evals/support.baseline.json:1:1 cannot be read as a baseline")
        .assert_contains("unresolved merge conflict")
        .assert_not_contains("entry is gone");

    repo.remove("evals/support.baseline.json");
    repo.evalock(&["review"])
        .assert_code(0)
        .assert_contains("note: its baseline file evals/support.baseline.json is gone");
}

/// `review` and `accept` with no results file say how to make one: a first run, or for a
/// file named with `--from`, a run that writes it there.
#[test]
fn a_missing_results_file_is_named_with_the_run_that_writes_it() {
    let repo = accepted_demo();
    repo.remove(".evalock/results.json");
    for command in [&["review"][..], &["accept", "--reason", "new answers"]] {
        repo.evalock(command)
            .assert_code(64)
            .assert_contains("no results at .evalock/results.json: run `evalock run` first");
        let mut with_from = command.to_vec();
        with_from.extend(["--from", "out/results.json"]);
        repo.evalock(&with_from)
            .assert_code(64)
            .assert_contains(
                "no results at out/results.json: `evalock run --out out/results.json` writes them there",
            )
            .assert_not_contains("pass --from");
    }
}

/// A suite named twice is accepted once, as `run` runs it once: one file written, one
/// summary line, not the same recording reported twice.
#[test]
fn a_suite_named_twice_is_accepted_once() {
    let repo = accepted_demo();
    use_variant(&repo, "moved");
    repo.evalock(&["run", "--suite", "support"]).assert_code(0);
    let accept = repo.evalock(&[
        "accept",
        "--reason",
        "warmer warranty wording",
        "--suite",
        "support",
        "--suite",
        "support",
    ]);
    accept
        .assert_code(0)
        .assert_contains("wrote evals/support.baseline.json: 1 recorded, 10 unchanged");
    assert_eq!(
        accept.all().matches("evals/support.baseline.json").count(),
        1,
        "one summary for one suite:\n{}",
        accept.all()
    );
    assert_eq!(accept.all().matches("recorded support/").count(), 1);
}

/// The README's quick start, `./demo.sh`, finds the binary cargo built wherever
/// `CARGO_TARGET_DIR` (or `build.target-dir`) put it, not only under `target/`. Run here
/// from a copy of the script and the demo (no `target/` beside them), with a stand-in
/// `cargo` that builds nothing and reports a target folder holding this build's binary.
#[cfg(unix)]
#[test]
fn demo_sh_runs_the_binary_from_cargos_target_dir() {
    use std::os::unix::fs::PermissionsExt;
    let scratch = tempfile::tempdir().unwrap();
    let here = scratch.path().join("checkout");
    common::copy_tree(&common::fixture("demo"), &here.join("fixtures/demo"));
    std::fs::copy(common::manifest_dir().join("demo.sh"), here.join("demo.sh")).unwrap();
    let target = scratch.path().join("elsewhere");
    std::fs::create_dir_all(target.join("release")).unwrap();
    std::os::unix::fs::symlink(common::EVALOCK, target.join("release/evalock")).unwrap();
    let bin = scratch.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let cargo = bin.join("cargo");
    std::fs::write(
        &cargo,
        format!(
            "#!/bin/sh\ncase \"$1\" in\n  build) exit 0 ;;\n  metadata) printf '{{\"target_directory\": \"%s\"}}\\n' '{}' ;;\n  *) exit 1 ;;\nesac\n",
            target.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&cargo, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let output = std::process::Command::new("bash")
        .arg(here.join("demo.sh"))
        .env("PATH", path)
        .env_remove("CI")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "demo.sh failed:\n{stdout}\n{stderr}"
    );
    assert!(stdout.contains("EL501"), "{stdout}");
    // It ends by saying how to put that binary on PATH for the tour.
    assert!(
        stdout.contains(&format!(
            "export PATH=\"{}:$PATH\"",
            target.join("release").display()
        )),
        "{stdout}"
    );
}

#[test]
fn a_run_of_one_case_counts_it_in_the_singular() {
    let repo = TestRepo::with_fixture("demo");
    // Shard 4 of 4 holds one of the demo's 14 cases (its shard is a hash of suite and id).
    repo.evalock(&["run", "--shard", "4/4", "--out", "one.json"])
        .assert_code(0)
        .assert_contains("1 case: 1 PASS; results in ./one.json")
        .assert_not_contains("1 cases");
}
