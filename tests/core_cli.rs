//! The core loop end to end: real git repositories, the real binary.
//! Freeze the demo, break it in each way the core rules guard, read the message, fix it.

mod common;

use common::TestRepo;

/// The demo project, locked and committed on `main`, with a `feature` branch checked out.
fn locked_demo() -> TestRepo {
    let repo = TestRepo::with_fixture("demo");
    repo.evalock(&["lock"]).assert_code(0);
    repo.commit_all("lock the demo");
    repo.git(&["checkout", "-q", "-b", "feature"]);
    repo
}

const REFUND_V3: &str = r#""id": "refund-no-order-id", "version": 3"#;

fn line_of(repo: &TestRepo, path: &str, needle: &str) -> usize {
    repo.read(path)
        .lines()
        .position(|line| line.contains(needle))
        .expect("needle present")
        + 1
}

#[test]
fn the_committed_demo_lock_is_current() {
    let repo = TestRepo::with_fixture("demo");
    repo.evalock(&["lock", "--check"]).assert_code(0);
    repo.evalock(&["check"])
        .assert_code(0)
        .assert_contains("PASS");
}

/// `lock` compares what it would write with the lock on disk by their digests, streamed:
/// a current lock is left alone (same file, not rewritten), any other is replaced whole.
#[test]
fn lock_leaves_a_current_lock_alone_and_replaces_any_other_whole() {
    use std::os::unix::fs::MetadataExt;
    let repo = TestRepo::with_fixture("demo");
    let current = repo.read_bytes("evalock.lock");
    let inode = || std::fs::metadata(repo.join("evalock.lock")).unwrap().ino();
    let before = inode();
    repo.evalock(&["lock"])
        .assert_code(0)
        .assert_contains("evalock.lock is up to date");
    assert_eq!(inode(), before, "a current lock is not rewritten");
    // One byte more (a trailing newline) is a different lock; so is garbage, or nothing.
    let mut longer = current.clone();
    longer.push(b'\n');
    for stale in [longer, b"not a lock at all\n".to_vec(), Vec::new()] {
        repo.write("evalock.lock", &stale);
        repo.evalock(&["lock"])
            .assert_code(0)
            .assert_contains("wrote evalock.lock");
        assert_eq!(repo.read_bytes("evalock.lock"), current);
    }
    repo.remove("evalock.lock");
    repo.evalock(&["lock"])
        .assert_code(0)
        .assert_contains("wrote evalock.lock");
    assert_eq!(repo.read_bytes("evalock.lock"), current);
}

#[test]
fn editing_a_case_in_place_is_refused_against_the_base_until_its_version_is_bumped() {
    let repo = locked_demo();
    repo.replace(
        "evals/support.jsonl",
        "I want my money back.",
        "I want my money back now.",
    );
    let line = line_of(&repo, "evals/support.jsonl", "refund-no-order-id");
    repo.evalock(&["lock"]).assert_code(0);
    repo.commit_all("tweak a shipped case");

    let run = repo.evalock(&["check", "--base", "main"]);
    run.assert_code(2)
        .assert_contains(&format!(
            "evals/support.jsonl:{line}: EL102 case-edited-in-place"
        ))
        .assert_contains("bump `version` to 4");

    repo.replace(
        "evals/support.jsonl",
        REFUND_V3,
        r#""id": "refund-no-order-id", "version": 4"#,
    );
    repo.evalock(&["lock"]).assert_code(0);
    repo.commit_all("bump the case");
    repo.evalock(&["check", "--base", "main"]).assert_code(0);
}

#[test]
fn a_base_that_cannot_be_read_is_a_warning_so_the_change_that_repairs_it_can_pass() {
    for (file, breakage) in [
        ("evalock.toml", "bogus_key = 1\n"),
        ("evalock.lock", "<<<<<<< HEAD\n"),
    ] {
        let repo = TestRepo::with_fixture("demo");
        repo.evalock(&["lock"]).assert_code(0);
        repo.commit_all("lock the demo");
        let good = repo.read(file);
        repo.write(file, format!("{good}{breakage}"));
        repo.commit_all("break the base (a push that skipped the hook)");
        repo.git(&["checkout", "-q", "-b", "repair"]);
        repo.write(file, &good);
        repo.commit_all("repair it");

        let judged = repo.evalock(&["check", "--base", "main"]);
        judged
            .assert_code(0)
            .assert_contains("EL108 base-unreadable (warn): the base revision main (")
            .assert_contains(&format!("cannot be read ({file}:"))
            .assert_contains("nothing was compared with it");
        // The change itself is still judged in full.
        repo.replace("evals/support.jsonl", "I want my money back.", "Refund me.");
        repo.evalock(&["check", "--base", "main"])
            .assert_code(2)
            .assert_contains("EL101 case-unlocked")
            .assert_contains("EL108");
        // A readable base is compared as before, without the warning.
        repo.git(&["checkout", "-q", "--", "."]);
        repo.evalock(&["check", "--base", "main~1"])
            .assert_code(0)
            .assert_not_contains("EL108");
    }
}

#[test]
fn an_unlocked_edit_says_which_case_and_what_to_do() {
    let repo = locked_demo();
    repo.replace("evals/support.jsonl", "I want my money back.", "Refund me.");
    let line = line_of(&repo, "evals/support.jsonl", "refund-no-order-id");
    repo.evalock(&["check"])
        .assert_code(2)
        .assert_contains(&format!(
            "evals/support.jsonl:{line}: EL101 case-unlocked (refuse): case `refund-no-order-id` (evals/support.jsonl:{line}) changed but is still version 3"
        ))
        .assert_contains("bump `version` to 4");
}

#[test]
fn a_deleted_case_is_refused_and_a_retired_one_is_clean() {
    let repo = locked_demo();
    let original = repo.read("evals/support.jsonl");
    let without: String = original
        .lines()
        .filter(|line| !line.contains("\"shipping-cost\""))
        .map(|line| format!("{line}\n"))
        .collect();
    repo.write("evals/support.jsonl", &without);
    repo.evalock(&["lock"]).assert_code(0);
    repo.commit_all("drop a case");
    repo.evalock(&["check", "--base", "main"])
        .assert_code(2)
        .assert_contains("EL103 case-removed")
        .assert_contains("`shipping-cost`")
        .assert_not_contains("EL101");

    let retired = original.replace(
        r#"{"id": "shipping-cost", "version": 1,"#,
        r#"{"id": "shipping-cost", "version": 1, "retired": true,"#,
    );
    assert_ne!(retired, original);
    repo.write("evals/support.jsonl", &retired);
    repo.evalock(&["lock"]).assert_code(0);
    repo.commit_all("retire instead");
    repo.evalock(&["check", "--base", "main"]).assert_code(0);
    assert!(repo
        .read("evalock.lock")
        .contains("[case.support.shipping-cost]\nversion = 1\n"));
    assert!(repo.read("evalock.lock").contains("retired = true"));
}

#[test]
fn a_retirement_not_yet_locked_is_named_as_one() {
    let repo = locked_demo();
    let original = repo.read("evals/support.jsonl");
    let retired = original.replace(
        r#"{"id": "shipping-cost", "version": 1,"#,
        r#"{"id": "shipping-cost", "version": 1, "retired": true,"#,
    );
    assert_ne!(retired, original);
    repo.write("evals/support.jsonl", &retired);
    repo.evalock(&["check"])
        .assert_code(2)
        .assert_contains("case `shipping-cost` (evals/support.jsonl:11) is retired but evalock.lock still has it active")
        .assert_contains("run `evalock lock` to record the retirement")
        .assert_not_contains("bump `version`");
    // Retired and edited at once is not a plain retirement.
    let edited = retired.replace(r#""retired": true,"#, r#""retired": true, "note": "x","#);
    assert_ne!(edited, retired);
    repo.write("evals/support.jsonl", &edited);
    repo.evalock(&["check"])
        .assert_code(2)
        .assert_contains(
            "case `shipping-cost` (evals/support.jsonl:11) was retired and edited, still version 1",
        )
        .assert_contains("bump `version` to 2");
    repo.write("evals/support.jsonl", &retired);
    repo.evalock(&["lock"]).assert_code(0);
    repo.evalock(&["check"]).assert_code(0);
}

#[test]
fn staged_check_judges_only_the_staged_bytes() {
    let repo = locked_demo();
    // Staged: a harmless relock-free change elsewhere; unstaged: an unlocked case edit.
    repo.write("notes.txt", "unrelated\n");
    repo.git(&["add", "notes.txt"]);
    repo.replace(
        "evals/support.jsonl",
        "Cancel my subscription today.",
        "Cancel it.",
    );
    repo.evalock(&["check", "--staged"]).assert_code(0);
    repo.evalock(&["check"])
        .assert_code(2)
        .assert_contains("cancel-subscription");

    // Staging the edit makes the staged check see it.
    repo.git(&["add", "evals/support.jsonl"]);
    repo.evalock(&["check", "--staged"])
        .assert_code(2)
        .assert_contains("cancel-subscription");
}

#[test]
fn staged_check_sees_an_edit_that_only_the_index_holds() {
    let repo = locked_demo();
    // Put an edited case into the index only, with the working tree untouched.
    let edited = repo
        .read("evals/support.jsonl")
        .replace("Cancel my subscription today.", "Cancel it.");
    let blob = {
        repo.write(".scratch", &edited);
        let id = repo
            .git(&["hash-object", "-w", ".scratch"])
            .trim()
            .to_owned();
        repo.remove(".scratch");
        id
    };
    repo.git(&[
        "update-index",
        "--cacheinfo",
        &format!("100644,{blob},evals/support.jsonl"),
    ]);
    repo.evalock(&["check"]).assert_code(0);
    repo.evalock(&["check", "--staged"])
        .assert_code(2)
        .assert_contains("cancel-subscription");

    // GIT_INDEX_FILE points evalock at another index, as `git commit <paths>` does.
    let clean_index = repo.join(".git/clean-index");
    std::fs::copy(repo.join(".git/index"), &clean_index).unwrap();
    repo.git(&["checkout", "HEAD", "--", "evals/support.jsonl"]);
    let alternate = repo.join(".git/alternate-index");
    repo.git(&["read-tree", "HEAD"]);
    std::fs::copy(repo.join(".git/index"), &alternate).unwrap();
    repo.git(&[
        "update-index",
        "--cacheinfo",
        &format!("100644,{blob},evals/support.jsonl"),
    ]);
    repo.evalock_with(
        &["check", "--staged"],
        &[("GIT_INDEX_FILE", alternate.to_str().unwrap())],
    )
    .assert_code(0);
    repo.evalock(&["check", "--staged"]).assert_code(2);
}

#[test]
fn reformatting_case_files_does_not_move_any_digest() {
    let repo = locked_demo();
    let lock_before = repo.read("evalock.lock");
    // JSONL: reorder keys and respace one line.
    repo.replace(
        "evals/support.jsonl",
        r#"{"id": "shipping-cost", "version": 1, "stratum": "policy","#,
        r#"{ "stratum":"policy" ,"version":1,"id":"shipping-cost","#,
    );
    // YAML: flow style instead of block style, comments and blank lines.
    repo.replace("evals/escalation.yaml", "    status_in: [escalated]\n    must_call: [escalate_to_human]\n\n- id: legal", "    must_call:\n      - escalate_to_human   # the tool\n    status_in: [\"escalated\"]\n\n\n- id: legal");
    repo.evalock(&["check"]).assert_code(0);
    repo.evalock(&["lock"]).assert_code(0);
    assert_eq!(repo.read("evalock.lock"), lock_before);
}

#[test]
fn a_prompt_change_is_refused_until_relocked() {
    let repo = locked_demo();
    repo.replace("prompts/support.txt", "Never invent", "Do not invent");
    repo.evalock(&["check"])
        .assert_code(2)
        .assert_contains("prompts/support.txt: EL107 prompt-unlocked")
        .assert_contains("changed (sha256:");
    repo.evalock(&["lock", "--check"]).assert_code(2);
    repo.evalock(&["lock"]).assert_code(0);
    repo.evalock(&["check"]).assert_code(0);
}

#[test]
fn lock_is_refused_in_ci_and_leaves_the_file_untouched() {
    let repo = locked_demo();
    repo.replace("prompts/support.txt", "Never invent", "Do not invent");
    let before = repo.read_bytes("evalock.lock");
    for value in ["true", "1", "yes"] {
        repo.evalock_with(&["lock"], &[("CI", value)])
            .assert_code(2)
            .assert_contains(
                "evalock.lock: EL403 baseline-written-in-ci (refuse): refused: CI is set, and CI never writes evalock.lock",
            );
        assert_eq!(repo.read_bytes("evalock.lock"), before);
    }
    // A report like any other: in the format asked for.
    repo.evalock_with(&["lock", "--format", "json"], &[("CI", "true")])
        .assert_code(2)
        .assert_contains("\"rule\": \"EL403\"")
        .assert_contains("\"verdict\": \"BLOCK\"");
    assert_eq!(repo.read_bytes("evalock.lock"), before);
    // `CI=false` is not CI; `--check` is allowed in CI and reports without writing.
    repo.evalock_with(&["lock", "--check"], &[("CI", "true")])
        .assert_code(2)
        .assert_contains("EL107");
    assert_eq!(repo.read_bytes("evalock.lock"), before);
    repo.evalock_with(&["lock"], &[("CI", "false")])
        .assert_code(0);
    assert_ne!(repo.read_bytes("evalock.lock"), before);
}

/// `CI` holding bytes that are not UTF-8 is still `CI` set, and not `false`, `0` or empty.
#[cfg(unix)]
#[test]
fn a_ci_value_that_is_not_utf8_is_still_ci() {
    use std::os::unix::ffi::OsStrExt;
    let repo = locked_demo();
    repo.replace("prompts/support.txt", "Never invent", "Do not invent");
    let before = repo.read_bytes("evalock.lock");
    let value = std::ffi::OsStr::from_bytes(b"tr\xffue");
    repo.evalock_with(&["lock"], &[("CI", value)])
        .assert_code(2)
        .assert_contains("EL403");
    assert_eq!(repo.read_bytes("evalock.lock"), before);
}

#[test]
fn rev_judges_a_commit_not_the_working_tree() {
    let repo = locked_demo();
    repo.replace("prompts/support.txt", "Never invent", "Do not invent");
    repo.commit_all("unlocked prompt change");
    repo.git(&["checkout", "-q", "main"]);
    repo.evalock(&["check"]).assert_code(0);
    repo.evalock(&["check", "--rev", "feature"])
        .assert_code(2)
        .assert_contains("EL107");
    repo.evalock(&["check", "--rev", "main"]).assert_code(0);
    repo.evalock(&["check", "--rev", "no-such-branch"])
        .assert_code(64)
        .assert_contains("cannot resolve revision `no-such-branch`: no branch, tag or commit")
        .assert_contains("git rev-parse --verify no-such-branch");
    repo.evalock(&["check", "--base", "main~40"])
        .assert_code(64)
        .assert_contains("cannot resolve revision `main~40`");
    repo.evalock(&["check", "--rev", "main:prompts"])
        .assert_code(64)
        .assert_contains("`main:prompts` names a tree or a file, not a commit");
}

#[test]
fn an_ambiguous_short_id_is_called_ambiguous() {
    let repo = locked_demo();
    // A thousand blobs: some two of them share their first four hex digits.
    let names: Vec<String> = (0..1000).map(|number| format!("blobs/{number}")).collect();
    for name in &names {
        repo.write(name, name.clone());
    }
    let mut arguments = vec!["hash-object", "-w"];
    arguments.extend(names.iter().map(String::as_str));
    let ids = repo.git(&arguments);
    let mut prefixes: Vec<&str> = ids.lines().map(|id| &id[..4]).collect();
    prefixes.sort_unstable();
    let shared = prefixes
        .windows(2)
        .find(|pair| pair[0] == pair[1])
        .map(|pair| pair[0])
        .expect("two of a thousand ids share four hex digits");
    repo.evalock(&["check", "--rev", shared])
        .assert_code(64)
        .assert_contains(&format!(
            "cannot resolve revision `{shared}`: Short id {shared} is ambiguous. Candidates are:"
        ));
}

#[test]
fn base_rules_use_the_merge_base_not_the_moving_base_branch() {
    let repo = locked_demo();
    // main moves on after the branch point: it edits a case properly (version bump).
    repo.git(&["checkout", "-q", "main"]);
    repo.replace(
        "evals/support.jsonl",
        r#""id": "shipping-cost", "version": 1"#,
        r#""id": "shipping-cost", "version": 2"#,
    );
    repo.evalock(&["lock"]).assert_code(0);
    repo.commit_all("bump shipping-cost on main");
    repo.git(&["checkout", "-q", "feature"]);
    // feature never saw that change: comparing with main's tip would call it a rollback.
    repo.evalock(&["check", "--base", "main"])
        .assert_code(0)
        .assert_contains("merge base of main");
}

#[test]
fn duplicate_ids_and_malformed_cases_point_at_the_line() {
    let repo = locked_demo();
    let mut text = repo.read("evals/support.jsonl");
    text.push_str(
        "{\"id\": \"shipping-cost\", \"version\": 1}\n{\"id\": \"broken\", \"x\": NaN}\n",
    );
    repo.write("evals/support.jsonl", &text);
    let run = repo.evalock(&["check"]);
    run.assert_code(2)
        .assert_contains("evals/support.jsonl:13: EL104 duplicate-case-id")
        .assert_contains("first at evals/support.jsonl:11")
        .assert_contains("evals/support.jsonl:14:");
    assert!(run.all().contains("EL105 malformed-case"), "{}", run.all());
    // A lock is never written over cases that cannot be frozen.
    let before = repo.read_bytes("evalock.lock");
    repo.evalock(&["lock"]).assert_code(2);
    assert_eq!(repo.read_bytes("evalock.lock"), before);
}

const CAFE_NFC: &str = "caf\u{e9}";
const CAFE_NFD: &str = "cafe\u{301}";

fn jsonl_case(id: &str) -> String {
    format!("{{\"id\": \"{id}\", \"version\": 1}}\n")
}

/// `café` typed with U+00E9 and with `e` + U+0301 look the same on every screen: one
/// suite cannot hold both, in one file or in two, and the lock is not written over them.
#[test]
fn ids_equal_after_unicode_normalisation_are_duplicates() {
    let repo = locked_demo();
    let mut text = repo.read("evals/support.jsonl");
    text.push_str(&jsonl_case(CAFE_NFC));
    text.push_str(&jsonl_case(CAFE_NFD));
    repo.write("evals/support.jsonl", &text);
    repo.evalock(&["check"])
        .assert_code(2)
        .assert_contains("evals/support.jsonl:14: EL104 duplicate-case-id")
        .assert_contains("(first at evals/support.jsonl:13) after Unicode NFC normalisation")
        .assert_contains("spell both ids the same way")
        .assert_not_contains("is used twice");
    let before = repo.read_bytes("evalock.lock");
    repo.evalock(&["lock"]).assert_code(2);
    assert_eq!(repo.read_bytes("evalock.lock"), before);

    // Across two files of one suite (`evals/*.yaml`).
    let repo = locked_demo();
    repo.write("evals/a-twin.yaml", format!("id: {CAFE_NFD}\nversion: 1\n"));
    repo.write("evals/b-twin.yaml", format!("id: {CAFE_NFC}\nversion: 1\n"));
    repo.evalock(&["check"])
        .assert_code(2)
        .assert_contains("evals/b-twin.yaml:1: EL104 duplicate-case-id")
        .assert_contains("(first at evals/a-twin.yaml:1) after Unicode NFC normalisation");
}

/// Different non-ASCII ids are different, and suites do not share ids: the same
/// `café` in two spellings in two suites is no duplicate.
#[test]
fn distinct_non_ascii_ids_and_other_suites_are_not_duplicates() {
    let repo = locked_demo();
    let mut text = repo.read("evals/support.jsonl");
    text.push_str(&jsonl_case(CAFE_NFD));
    text.push_str(&jsonl_case("na\u{ef}ve"));
    text.push_str(&jsonl_case("cafe"));
    repo.write("evals/support.jsonl", &text);
    repo.write(
        "evals/twin.yaml",
        format!("id: {CAFE_NFC}\nversion: 1\nexpect:\n  must_call: [escalate_to_human]\n"),
    );
    repo.evalock(&["lock"]).assert_code(0);
    repo.evalock(&["check"])
        .assert_code(0)
        .assert_not_contains("EL104");
    assert!(repo.read("evalock.lock").contains(CAFE_NFD));
}

/// A YAML file of one case that opens with comments: its findings point at the case's
/// first key, not at the comment on line 1.
#[test]
fn a_single_yaml_case_after_comments_is_found_at_its_first_key() {
    let repo = locked_demo();
    repo.write(
        "evals/solo.yaml",
        "# One case on its own.\n# Escalates on request.\n\n---\nid: solo\nversion: 1\nexpect:\n  must_call: [escalate_to_human]\n",
    );
    repo.write("evals/broken.yaml", "# Not a case yet.\nid: 7\n");
    repo.evalock(&["check"])
        .assert_code(2)
        .assert_contains("evals/solo.yaml:5: EL101 case-unlocked")
        .assert_contains("evals/broken.yaml:2:1: EL105 malformed-case");
}

/// Two cases of one file with the same fault are two findings: a fingerprint that is the
/// same for both would make GitHub (one comment per fingerprint) and code scanning (one
/// alert per fingerprint) show the first and silently drop the second.
#[test]
fn the_same_fault_in_two_cases_of_one_file_is_two_findings() {
    let repo = locked_demo();
    for id in ["angry-customer-escalates", "simple-question-stays"] {
        repo.replace(
            "evals/escalation.yaml",
            &format!("- id: {id}\n  version: 1\n"),
            &format!("- id: {id}\n  version: 1\n  version: 1\n"),
        );
    }
    let run = repo.evalock(&["check", "--format", "json"]);
    run.assert_code(2);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).expect("a JSON report");
    let fingerprints: Vec<&str> = report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|finding| finding["rule"] == "EL105")
        .filter_map(|finding| finding["fingerprint"].as_str())
        .collect();
    assert_eq!(fingerprints.len(), 2, "{}", run.stdout);
    assert_ne!(fingerprints[0], fingerprints[1], "{}", run.stdout);
}

/// A duplicate key inside one case of a YAML (or JSON) document refuses that case alone,
/// as on a JSONL line: an in-place edit of another case of the same file is still named.
#[test]
fn a_duplicate_key_in_one_yaml_case_leaves_the_files_other_cases_checked() {
    let repo = locked_demo();
    repo.replace(
        "evals/escalation.yaml",
        "- id: angry-customer-escalates\n  version: 1\n",
        "- id: angry-customer-escalates\n  version: 1\n  version: 1\n",
    );
    repo.replace(
        "evals/escalation.yaml",
        "my lawyer will contact you.",
        "my lawyer will call you.",
    );
    let legal = line_of(&repo, "evals/escalation.yaml", "id: legal-threat-escalates");
    repo.evalock(&["check"])
        .assert_code(2)
        .assert_contains(
            "evals/escalation.yaml:4:3: EL105 malformed-case (refuse): duplicate key `version`",
        )
        .assert_contains(&format!(
            "evals/escalation.yaml:{legal}: EL101 case-unlocked (refuse): case `legal-threat-escalates`"
        ))
        // The other cases load and hash as they did: nothing else is reported.
        .assert_not_contains("simple-question-stays")
        .assert_not_contains("is missing from");
}

/// A case glob that matches no file is reported on the line of evalock.toml that writes
/// it, like every other finding about the config.
#[test]
fn a_glob_that_matches_no_case_file_points_at_its_line() {
    let repo = locked_demo();
    repo.remove("evals/escalation.yaml");
    let line = line_of(&repo, "evalock.toml", "cases = [\"evals/*.yaml\"]");
    repo.evalock(&["check"])
        .assert_code(2)
        .assert_contains(&format!(
            "evalock.toml:{line}: EL105 malformed-case (refuse): suite `escalation`: no case file matches `evals/*.yaml`"
        ));
    let json = repo.evalock(&["check", "--format", "json"]);
    assert!(
        json.stdout.contains(&format!(
            "\"path\": \"evalock.toml\",\n        \"line\": {line},"
        )),
        "{}",
        json.stdout
    );
}

/// A case glob written as a directory's name matches no file (a glob matches files): the
/// finding says so and suggests a glob of the files in it.
#[test]
fn a_case_glob_that_names_a_directory_says_so() {
    let repo = locked_demo();
    let config = repo
        .read("evalock.toml")
        .replace("cases = [\"evals/*.yaml\"]", "cases = [\"evals/\"]");
    repo.write("evalock.toml", &config);
    let line = line_of(&repo, "evalock.toml", "cases = [\"evals/\"]");
    repo.evalock(&["check"])
        .assert_code(2)
        .assert_contains(&format!(
            "evalock.toml:{line}: EL105 malformed-case (refuse): suite `escalation`: `evals/` is a directory, and a case glob matches files"
        ))
        .assert_contains("for example `evals/*.jsonl`")
        .assert_not_contains("no case file matches");
}

/// Case files behind a symlinked folder are not the project's (symlinks are never
/// followed): the finding names the symlink instead of only saying nothing matches.
#[test]
fn a_case_glob_through_a_symlinked_folder_names_the_symlink() {
    let repo = locked_demo();
    std::fs::rename(repo.join("evals"), repo.join("real-evals")).expect("move");
    std::os::unix::fs::symlink("real-evals", repo.join("evals")).expect("symlink");
    let line = line_of(&repo, "evalock.toml", "cases = [\"evals/*.yaml\"]");
    repo.evalock(&["check"])
        .assert_code(2)
        .assert_contains(&format!(
            "evalock.toml:{line}: EL105 malformed-case (refuse): suite `escalation`: no case file matches `evals/*.yaml`: `evals` is a symlink, and evalock never follows symlinks"
        ));
}

/// A case file replaced by a symlink to the same text is refused at the file, in the
/// working tree (even right after a check that was remembered) and in the index; the
/// file itself passes.
#[test]
fn a_symlink_in_place_of_a_case_file_is_refused() {
    let repo = locked_demo();
    // Without its command grader, a check of the demo is remembered.
    repo.replace("evalock.toml", "grader = \"escalation\"\n", "");
    repo.evalock(&["lock"]).assert_code(0);
    repo.commit_all("built-in grader only");
    std::thread::sleep(std::time::Duration::from_millis(2_100));
    repo.evalock(&["check"]).assert_code(0);
    repo.evalock(&["check", "--verbose"])
        .assert_code(0)
        .assert_contains("its report is reused");
    std::fs::rename(
        repo.join("evals/support.jsonl"),
        repo.join("support-real.jsonl"),
    )
    .expect("move");
    std::os::unix::fs::symlink("../support-real.jsonl", repo.join("evals/support.jsonl"))
        .expect("symlink");
    const REFUSED: &str = "evals/support.jsonl:1:1: EL105 malformed-case (refuse): evals/support.jsonl is a symlink, and evalock never follows symlinks";
    repo.evalock(&["check"])
        .assert_code(2)
        .assert_contains(REFUSED);
    repo.git(&["add", "-A"]);
    repo.evalock(&["check", "--staged"])
        .assert_code(2)
        .assert_contains(REFUSED);

    // Quiet: the file itself again.
    std::fs::remove_file(repo.join("evals/support.jsonl")).expect("remove");
    std::fs::rename(
        repo.join("support-real.jsonl"),
        repo.join("evals/support.jsonl"),
    )
    .expect("move back");
    repo.evalock(&["check"])
        .assert_code(0)
        .assert_not_contains("is a symlink");
}

/// A case file larger than the 8 MiB blocks the working tree is read in: findings past
/// the first block point at the same lines as a check of the index, which reads the file
/// whole.
#[test]
fn a_case_file_larger_than_a_read_block_is_judged_line_for_line() {
    let repo = locked_demo();
    let original = repo.read("evals/support.jsonl");
    let template = original.lines().nth(2).expect("a third case").to_owned();
    let padding = "p".repeat(700);
    let mut text = original.clone();
    for number in 0..12_000 {
        let id = format!("\"bulk-{number:05}\", \"note\": \"{padding}\"");
        text.push_str(&template.replacen("\"refund-with-order-id\"", &id, 1));
        text.push('\n');
    }
    assert!(text.len() > 10 << 20, "{} bytes", text.len());
    repo.write("evals/support.jsonl", &text);
    repo.evalock(&["lock"]).assert_code(0);
    repo.commit_all("twelve thousand more cases");
    repo.evalock(&["check"]).assert_code(0);

    let edited = text
        .replacen(
            "\"bulk-11000\", \"note\": \"p",
            "\"bulk-11000\", \"note\": \"q",
            1,
        )
        .replacen("{\"id\": \"bulk-11500\",", "{\"id\": \"bulk-11500\",,", 1);
    repo.write("evals/support.jsonl", &edited);
    let first_bulk_line = original.lines().count() + 1;
    let (edited_line, malformed_line) = (first_bulk_line + 11_000, first_bulk_line + 11_500);
    let from_tree = repo.evalock(&["check"]);
    from_tree
        .assert_code(2)
        .assert_contains(&format!(
            "evals/support.jsonl:{edited_line}: EL101 case-unlocked"
        ))
        .assert_contains(&format!(
            "evals/support.jsonl:{malformed_line}:21: EL105 malformed-case"
        ))
        // Its case did not load: the EL105 finding says why, not a "missing" one.
        .assert_not_contains("locked case `bulk-11500` (version 1) is missing");
    repo.git(&["add", "evals/support.jsonl"]);
    let from_index = repo.evalock(&["check", "--staged"]);
    from_index.assert_code(2);
    let findings = |output: &str| -> Vec<String> {
        output
            .lines()
            .filter(|line| line.starts_with("evals/support.jsonl:"))
            .map(str::to_owned)
            .collect()
    };
    assert_eq!(findings(&from_tree.stdout), findings(&from_index.stdout));
    assert_eq!(findings(&from_tree.stdout).len(), 2, "{}", from_tree.all());
}

#[test]
fn malformed_config_and_lock_exit_65_with_a_position() {
    let repo = locked_demo();
    let config = repo.read("evalock.toml");
    repo.write(
        "evalock.toml",
        config.replace(
            "normalizer = \"ws-v1\"\n\n[[suite]]",
            "normaliser = \"ws-v1\"\n\n[[suite]]",
        ),
    );
    repo.evalock(&["check"])
        .assert_code(65)
        .assert_contains("evalock.toml:")
        .assert_contains("normaliser");
    repo.write("evalock.toml", &config);

    let lock = repo.read("evalock.lock");
    repo.write(
        "evalock.lock",
        lock.replacen(
            "[case.support.address-change]",
            "<<<<<<< HEAD\n[case.support.address-change]",
            1,
        ),
    );
    repo.evalock(&["check"])
        .assert_code(65)
        .assert_contains("evalock.lock:")
        .assert_contains("run `evalock lock`");
    // `lock` regenerates a conflicted lock from the cases.
    repo.evalock(&["lock"]).assert_code(0);
    assert_eq!(repo.read("evalock.lock"), lock);
}

#[test]
fn json_output_is_stable_and_machine_readable() {
    let repo = locked_demo();
    repo.replace("prompts/support.txt", "Never invent", "Do not invent");
    let run = repo.evalock(&["check", "--format", "json"]);
    run.assert_code(2);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).expect("valid JSON");
    assert_eq!(report["schema"], "evalock.findings/v1");
    assert_eq!(report["verdict"], "BLOCK");
    assert_eq!(report["exit_code"], 2);
    let finding = &report["findings"][0];
    assert_eq!(finding["rule"], "EL107");
    assert_eq!(finding["name"], "prompt-unlocked");
    assert_eq!(finding["severity"], "refuse");
    assert_eq!(finding["location"]["path"], "prompts/support.txt");
    assert_eq!(finding["subject"]["suite"], "support");
    assert_eq!(finding["fingerprint"].as_str().unwrap().len(), 16);
}

#[test]
fn dash_c_runs_in_another_directory_and_init_detects_the_project() {
    let repo = TestRepo::new();
    common::copy_tree(&common::fixture("demo"), &repo.join("project"));
    std::fs::remove_file(repo.join("project/evalock.toml")).unwrap();
    std::fs::remove_file(repo.join("project/evalock.lock")).unwrap();
    // A case whose number only warns (finer than a double) does not hide its file.
    let cases = repo.read("project/evals/support.jsonl");
    repo.write(
        "project/evals/support.jsonl",
        format!(
            "{cases}{{\"id\": \"long-ticket\", \"input\": {{\"ticket\": 9007199254740993}}}}\n"
        ),
    );
    repo.evalock(&["-C", "project", "init"])
        .assert_code(0)
        .assert_contains("suite support: evals/support.jsonl");
    repo.write("project/evals/support.jsonl", cases);
    let config = repo.read("project/evalock.toml");
    assert!(
        config.contains("prompt = \"prompts/support.txt\""),
        "{config}"
    );
    assert!(
        config.contains("cases = [\"evals/escalation.yaml\"]"),
        "{config}"
    );
    repo.evalock(&["-C", "project", "init"])
        .assert_code(64)
        .assert_contains("--force");
    repo.evalock(&["-C", "project", "check"])
        .assert_code(2)
        .assert_contains("no evalock.lock yet");
    repo.evalock(&["-C", "project", "lock"]).assert_code(0);
    repo.evalock(&["-C", "project", "check"]).assert_code(0);
    // A project in a subdirectory of the repository works from the index too.
    repo.commit_all("adopt evalock in a subdirectory");
    repo.evalock(&["-C", "project", "check", "--staged"])
        .assert_code(0);
    repo.evalock(&["-C", "project", "check", "--rev", "HEAD"])
        .assert_code(0);
    // Like `git -C`: relative paths on the command line are read from DIR as well.
    repo.evalock(&[
        "-C",
        "project",
        "check",
        "--format",
        "json",
        "--output",
        "report.json",
    ])
    .assert_code(0);
    assert!(repo.join("project/report.json").is_file());
    assert!(!repo.join("report.json").exists());
    repo.evalock(&["-C", "project", "report", "--from", "report.json"])
        .assert_code(0)
        .assert_contains("PASS");
}

/// Started in a subfolder, evalock finds the project above, as git finds its repository:
/// findings keep their project-relative paths, `--output` and `--out` land where it was
/// started, and the default results file stays at the project root. The search stops at the git work tree's
/// top: a nested repository, or a folder outside any repository, is not taken for the
/// project that happens to be above it.
#[test]
fn commands_started_in_a_subfolder_find_the_project_above_within_the_repository() {
    let repo = locked_demo();
    // Nothing names a file: no word about where paths are from.
    repo.evalock(&["-C", "evals", "check"])
        .assert_code(0)
        .assert_contains("PASS")
        .assert_not_contains("note: paths below");
    repo.replace("evals/support.jsonl", "money back.", "money back now.");
    repo.evalock(&[
        "-C",
        "evals",
        "check",
        "--format",
        "json",
        "--output",
        "report.json",
    ])
    .assert_code(2);
    let report = repo.read("evals/report.json");
    assert!(
        report.contains("\"path\": \"evals/support.jsonl\""),
        "{report}"
    );
    assert!(!repo.join("report.json").exists());
    repo.git(&["checkout", "-q", "--", "evals/support.jsonl"]);
    repo.evalock(&["-C", "evals", "lock", "--check"])
        .assert_code(0);
    // Started below the project, the results file and the findings are named as the
    // project names them, once said. (`-C evals` above is read from the top: it names
    // paths from the project's own folder.)
    let run = repo.evalock_in("evals", &["run", "--suite", "support"]);
    run.assert_code(0)
        .assert_contains("results in ./.evalock/results.json");
    assert_eq!(
        run.all()
            .matches("note: paths below are relative to ../, the folder of evalock.toml")
            .count(),
        1,
        "{}",
        run.all()
    );
    assert!(repo.join(".evalock/results.json").is_file());
    assert!(!repo.join("evals/.evalock").exists());
    repo.evalock(&["-C", "evals", "review"]).assert_code(0);
    // Each path option names what it named from the subfolder: a results file given by
    // name is written and read there, like every other file named on the command line.
    repo.evalock(&[
        "-C",
        "evals",
        "run",
        "--suite",
        "support",
        "--out",
        "mine.json",
    ])
    .assert_code(0);
    assert!(repo.join("evals/mine.json").is_file());
    assert!(!repo.join("mine.json").exists());
    repo.evalock(&["-C", "evals", "review", "--from", "mine.json"])
        .assert_code(0)
        .assert_not_contains("no results");
    repo.evalock_in(
        "evals",
        &[
            "accept",
            "--reason",
            "from the subfolder",
            "--from",
            "mine.json",
        ],
    )
    .assert_code(0)
    .assert_contains("note: paths below are relative to ../");
    repo.git(&["checkout", "-q", "--", "."]);
    repo.remove("evals/mine.json");
    repo.write(
        "evals/made.jsonl",
        "{\"case_id\": \"nope\", \"completion\": \"x\"}\n",
    );
    repo.evalock(&[
        "-C",
        "evals",
        "run",
        "--suite",
        "support",
        "--completions",
        "made.jsonl",
    ])
    .assert_code(65)
    .assert_contains("evals/made.jsonl:1: names case `nope`, which no suite holds");
    // Exits 0 once it has read its input (a missing file is 64).
    repo.evalock(&["-C", "evals", "github", "--from", "report.json"])
        .assert_code(0);
    repo.write(
        "evals/helper/SKILL.md",
        "---\nname: helper\ndescription: x\n---\nhi\n",
    );
    repo.evalock(&["-C", "evals", "skills", "audit", "helper"])
        .assert_code(1)
        .assert_contains("EL203 evals/helper/SKILL.md:4");
    // A skill no root lists is EL213 to `check`: this one was for the audit only.
    repo.evalock(&["check"])
        .assert_code(2)
        .assert_contains("EL213 skill-unlisted");
    repo.remove("evals/helper/SKILL.md");
    repo.evalock(&["-C", "evals", "hook", "install"])
        .assert_code(0);
    // `init` below the project would split it: refused unless asked for.
    repo.evalock(&["-C", "evals", "init"])
        .assert_code(64)
        .assert_contains("already holds the project this folder belongs to");
    assert!(!repo.join("evals/evalock.toml").exists());
    let hook = repo.read(".git/hooks/pre-commit");
    assert!(hook.contains("\nproject_dir='.'\n"), "{hook}");

    // Quiet where there is no project to find.
    std::fs::create_dir(repo.join("evals/nested")).expect("mkdir");
    repo.git_run(&["-C", "evals/nested", "init", "-q"])
        .assert_code(0);
    repo.evalock(&["-C", "evals/nested", "check"])
        .assert_code(64)
        .assert_contains("no evalock.toml");
    std::fs::remove_dir_all(repo.join("evals/nested")).expect("rm");
    repo.evalock(&["-C", "evals", "init", "--force"])
        .assert_code(0);
    assert!(repo.join("evals/evalock.toml").is_file());
    repo.remove("evals/evalock.toml");
    std::fs::remove_dir_all(repo.join(".git")).expect("rm .git");
    repo.evalock(&["-C", "evals", "check"])
        .assert_code(64)
        .assert_contains("no evalock.toml");
    repo.evalock(&["check"]).assert_code(0);
}

/// A number finer than a double (a long ticket id written as a number) loads, locks and
/// passes with a warning at its line and column: RFC 8785 hashes its nearest double, so
/// an edit below that precision does not move the digest, which is what the warning is
/// for. The warm check, answered from the cache, warns again; numbers written in any other
/// spelling stay quiet.
#[test]
fn numbers_finer_than_a_double_are_warned_about_where_they_are_written() {
    let repo = locked_demo();
    let append = |line: &str| {
        let cases = repo.read("evals/support.jsonl");
        repo.write("evals/support.jsonl", format!("{cases}{line}\n"));
        cases.lines().count() + 1
    };
    append(
        r#"{"id": "plain-numbers", "input": {"a": 1.50, "b": 1e21, "c": 0.1, "d": 123456789012345, "e": "9007199254740993"}, "expect": {"must_include": ["order"]}}"#,
    );
    repo.evalock(&["lock"]).assert_code(0);
    repo.evalock(&["check"])
        .assert_code(0)
        .assert_not_contains("EL105");

    let line = append(
        r#"{"id": "long-ticket", "input": {"ticket": 9007199254740993}, "expect": {"must_include": ["order"]}}"#,
    );
    repo.evalock(&["lock"]).assert_code(0);
    let at = format!("evals/support.jsonl:{line}:43: EL105 malformed-case (warn)");
    let cold = repo.evalock(&["check"]);
    cold.assert_code(0)
        .assert_contains(&at)
        .assert_contains("hashes as 9007199254740992");
    let warm = repo.evalock(&["check"]);
    assert_eq!(warm.stdout, cold.stdout);

    // In YAML too, decimals included, where the number is written.
    let yaml = repo.read("evals/escalation.yaml");
    let yaml_line = yaml.lines().count() + 4;
    repo.write(
        "evals/escalation.yaml",
        format!("{yaml}\n- id: fine-score\n  input:\n    score: 0.1000000000000000000001\n    quiet: 0.1\n  expect:\n    must_call: [escalate_to_human]\n"),
    );
    repo.evalock(&["lock"]).assert_code(0);
    let cold = repo.evalock(&["check"]);
    cold.assert_code(0)
        .assert_contains(&format!(
            "evals/escalation.yaml:{yaml_line}:12: EL105 malformed-case (warn)"
        ))
        .assert_contains("the number 0.1000000000000000000001 hashes as 0.1")
        .assert_contains(&at);
    assert_eq!(repo.evalock(&["check"]).stdout, cold.stdout);
    repo.write("evals/escalation.yaml", &yaml);
    repo.evalock(&["lock"]).assert_code(0);
    repo.commit_all("a case with a long ticket number");
    // A warning is not a broken file: a case deleted beside it is still missed.
    let cases = repo.read("evals/support.jsonl");
    let without_plain: String = cases
        .lines()
        .filter(|line| !line.contains("plain-numbers"))
        .map(|line| format!("{line}\n"))
        .collect();
    repo.write("evals/support.jsonl", &without_plain);
    repo.evalock(&["check", "--base", "main"])
        .assert_code(2)
        .assert_contains("locked case `plain-numbers` (version 1) is missing");
    repo.write("evals/support.jsonl", &cases);

    // The edit the warning was about: invisible to the digest, even against the base.
    repo.replace(
        "evals/support.jsonl",
        "\"ticket\": 9007199254740993",
        "\"ticket\": 9007199254740992",
    );
    repo.evalock(&["check", "--base", "main"])
        .assert_code(0)
        .assert_not_contains("EL102")
        .assert_not_contains("EL105");
}

/// A run that fails before its report is written removes the report an earlier run left
/// at `--output`: a pipeline reading it must not see the old PASS. Paths in the way of a
/// file are bad input (65), not internal errors (70).
#[test]
fn a_failed_check_leaves_no_stale_report_and_bad_paths_are_not_internal_errors() {
    let repo = locked_demo();
    repo.evalock(&["check", "--format", "json", "--output", "report.json"])
        .assert_code(0);
    assert!(repo.read("report.json").contains("\"verdict\": \"PASS\""));
    let config = repo.read("evalock.toml");
    repo.write("evalock.toml", format!("{config}\nbogus = 1\n"));
    repo.evalock(&["check", "--format", "json", "--output", "report.json"])
        .assert_code(65);
    assert!(!repo.join("report.json").exists());
    repo.write("evalock.toml", config);
    std::fs::create_dir(repo.join("a-directory")).expect("mkdir");
    repo.evalock(&["check", "--output", "a-directory"])
        .assert_code(65)
        .assert_contains("a-directory");
    repo.evalock(&["report", "--from", "a-directory"])
        .assert_code(65);
    // A directory where evalock's own files go is named as one, never "no lock yet".
    let lock = repo.read("evalock.lock");
    repo.remove("evalock.lock");
    std::fs::create_dir(repo.join("evalock.lock")).expect("mkdir");
    repo.evalock(&["check"])
        .assert_code(65)
        .assert_contains("evalock.lock is a directory")
        .assert_not_contains("no evalock.lock yet");
    std::fs::remove_dir(repo.join("evalock.lock")).expect("rmdir");
    repo.write("evalock.lock", lock);
    repo.evalock(&["report", "--from", "no-such-report.json"])
        .assert_code(64);
}

/// A `--from` file that is a symlink looping back on itself is bad input (65, named),
/// whichever command reads it, as a directory in its place is; never an internal error.
#[test]
fn a_from_file_that_is_a_symlink_loop_is_bad_input() {
    let repo = locked_demo();
    std::os::unix::fs::symlink("loop.json", repo.join("loop.json")).expect("symlink");
    for command in [
        vec!["review", "--from", "loop.json"],
        vec!["accept", "--from", "loop.json", "--reason", "r"],
        vec!["report", "--from", "loop.json"],
        vec!["github", "--from", "loop.json"],
        vec!["merge", "loop.json", "--out", "merged.json"],
    ] {
        repo.evalock(&command)
            .assert_code(65)
            .assert_contains("loop.json");
    }
}

/// A prompt path that holds a directory cannot be used as a file (exit 65, named as a
/// directory), as the lock in the same place; a prompt that is simply gone stays a
/// refusal (EL107, exit 2) that `evalock lock` or a restore fixes.
#[test]
fn a_directory_where_a_prompt_goes_is_named_as_one() {
    let repo = locked_demo();
    let prompt = repo.read("prompts/support.txt");
    repo.remove("prompts/support.txt");
    repo.evalock(&["check"])
        .assert_code(2)
        .assert_contains("EL107")
        .assert_contains("prompts/support.txt of suite `support` is missing");
    std::fs::create_dir(repo.join("prompts/support.txt")).expect("mkdir");
    for command in [&["check"][..], &["lock"], &["run", "--suite", "support"]] {
        repo.evalock(command)
            .assert_code(65)
            .assert_contains("prompts/support.txt is a directory")
            .assert_contains("prompt of suite `support`")
            .assert_not_contains("missing");
    }
    std::fs::remove_dir(repo.join("prompts/support.txt")).expect("rmdir");
    repo.write("prompts/support.txt", prompt);
    repo.evalock(&["check"]).assert_code(0);
}

#[test]
fn git_options_outside_a_repository_are_usage_errors_and_a_plain_check_needs_no_git() {
    let repo = TestRepo::with_fixture("demo");
    std::fs::remove_dir_all(repo.join(".git")).expect("remove .git");
    repo.evalock(&["check"]).assert_code(0);
    for args in [
        &["check", "--staged"][..],
        &["check", "--rev", "HEAD"],
        &["check", "--base", "main"],
        &["hook", "install"],
    ] {
        repo.evalock(args)
            .assert_code(64)
            .assert_contains("is not inside a git repository: run this in a clone")
            .assert_not_contains("Could not find");
    }
}

#[test]
fn usage_errors_exit_64() {
    let repo = TestRepo::new();
    repo.evalock(&["check", "--no-such-flag"]).assert_code(64);
    repo.evalock(&["check", "--staged", "--rev", "HEAD"])
        .assert_code(64);
    repo.evalock(&["check"])
        .assert_code(64)
        .assert_contains("evalock init");
    repo.evalock(&["-C", "/definitely/not/here", "check"])
        .assert_code(64);
    repo.evalock(&["--help"])
        .assert_code(0)
        .assert_contains("Exit codes");
}

/// `evalock check | head -1`: the reader goes away before the report is written. The
/// command must still exit with its own code, quietly, not panic on the closed pipe.
#[test]
fn a_reader_that_stops_early_does_not_crash_the_command() {
    use std::process::{Command, Stdio};
    let repo = locked_demo();
    repo.write("prompts/support.txt", "drifted\n");
    for (args, expected) in [
        (&["check"][..], 2),
        (&["check", "--format", "sarif"][..], 2),
        // Written as it is serialized, through a buffer of its own.
        (&["check", "--format", "json"][..], 2),
        (&["rules"][..], 0),
    ] {
        let mut child = Command::new(common::EVALOCK)
            .args(args)
            .current_dir(repo.path())
            .env_remove("CI")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn evalock");
        // Close the read end before evalock writes anything.
        drop(child.stdout.take());
        let output = child.wait_with_output().expect("wait");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(expected), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert!(stderr.is_empty(), "{args:?}: {stderr}");
    }
}

/// `lock` pins what it can, and never lets "wrote evalock.lock" read as "clean": what
/// `check` still refuses and no lock can fix is listed (a prompt file that is gone), in
/// every format. Its exit code says the lock was written (0), so its last line says that
/// and what still blocks `check`, never a BLOCK verdict the exit code contradicts. A
/// symlinked lock is refused like `check` refuses it, never followed.
#[test]
fn lock_lists_what_it_cannot_pin_and_refuses_a_symlinked_lock() {
    let repo = locked_demo();
    repo.remove("prompts/support.txt");
    let locked = repo.evalock(&["lock"]);
    // The lock is written (exit 0); `check`, the gate, still refuses.
    locked
        .assert_code(0)
        .assert_contains("wrote evalock.lock")
        .assert_contains("but `evalock check` still refuses what no lock can pin")
        .assert_contains("prompts/support.txt: EL107")
        .assert_contains("restore prompts/support.txt, or point `prompt` of suite `support`")
        .assert_contains("evalock lock (working tree): wrote evalock.lock; `evalock check` still refuses 1 finding above (exit 2) until they are fixed")
        .assert_not_contains("BLOCK");
    repo.evalock(&["lock"])
        .assert_code(0)
        .assert_contains("evalock lock (working tree): evalock.lock is up to date; `evalock check` still refuses 1 finding above")
        .assert_not_contains("BLOCK");
    let as_json = repo.evalock(&["lock", "--format", "json"]);
    as_json
        .assert_code(0)
        .assert_contains("prompts/support.txt: EL107");
    let report: serde_json::Value =
        serde_json::from_str(&as_json.stdout).expect("lock --format json prints a report");
    assert_eq!(report["verdict"], "PASS");
    repo.evalock(&["lock", "--check"]).assert_code(2);
    repo.evalock(&["check"]).assert_code(2);
    repo.git(&["checkout", "--", "prompts/support.txt"]);
    repo.evalock(&["lock"])
        .assert_code(0)
        .assert_not_contains("still refuses");

    std::fs::rename(repo.join("evalock.lock"), repo.join("real.lock")).expect("rename");
    std::os::unix::fs::symlink("real.lock", repo.join("evalock.lock")).expect("symlink");
    for args in [&["lock"][..], &["lock", "--check"], &["check"]] {
        repo.evalock(args)
            .assert_code(65)
            .assert_contains("symlink");
    }
}

/// A suite's `digest` and `prompt` lines summarize its entries: a lock whose summary was
/// edited by hand (or kept from one side of a merge conflict) is refused by `check` and the
/// hook, as `lock --check` refuses it; the recipes a lock was written with are named.
#[test]
fn a_lock_whose_suite_summaries_disagree_with_its_entries_is_refused() {
    let repo = locked_demo();
    repo.evalock(&["check"]).assert_code(0);
    let lock = repo.read("evalock.lock");
    let digest_line = lock
        .lines()
        .skip_while(|line| *line != "[suite.support]")
        .find(|line| line.starts_with("digest = "))
        .expect("the support suite's digest")
        .to_owned();
    let edited = lock.replacen(
        &digest_line,
        "digest = \"sha256:0000000000000000000000000000000000000000000000000000000000000000\"",
        1,
    );
    repo.write("evalock.lock", &edited);
    for args in [&["check"][..], &["lock", "--check"]] {
        repo.evalock(args)
            .assert_code(2)
            .assert_contains("suite `support`: `digest` does not match its case entries");
    }
    repo.git(&["add", "evalock.lock"]);
    repo.evalock(&["check", "--staged"])
        .assert_code(2)
        .assert_contains("`digest` does not match");
    repo.write("evalock.lock", &lock);
    repo.git(&["add", "evalock.lock"]);
    repo.evalock(&["check", "--staged"]).assert_code(0);

    repo.write(
        "evalock.lock",
        lock.replacen("case = \"case-v1\"", "case = \"case-v2\"", 1),
    );
    repo.evalock(&["check"])
        .assert_code(2)
        .assert_contains("case = \"case-v2\" (this evalock writes \"case-v1\")")
        .assert_not_contains("Recipes {");
}

/// In a conflicted merge the index holds only git's stages 1 to 3 of a file: `--staged`
/// names the conflict (exit 64, as for any read of it) instead of judging the file as
/// deleted.
#[test]
fn staged_check_in_a_conflicted_merge_names_the_conflict() {
    let repo = locked_demo();
    repo.replace("evals/support.jsonl", "I want my money back.", "Refund me.");
    repo.commit_all("feature edit");
    repo.git(&["checkout", "-q", "main"]);
    repo.replace(
        "evals/support.jsonl",
        "I want my money back.",
        "Money back.",
    );
    repo.commit_all("main edit");
    let merge = repo.git_run(&["merge", "-q", "feature"]);
    assert_ne!(merge.code, 0, "the merge must conflict");
    repo.evalock(&["check", "--staged"])
        .assert_code(64)
        .assert_contains("evals/support.jsonl has unresolved merge conflicts in the index")
        .assert_not_contains("retired");
    // Resolved and added, it is judged as usual.
    repo.git(&["checkout", "--theirs", "--", "evals/support.jsonl"]);
    repo.git(&["add", "evals/support.jsonl"]);
    repo.evalock(&["check", "--staged"])
        .assert_code(2)
        .assert_contains("EL101 case-unlocked")
        .assert_not_contains("merge conflicts");
}

/// A submodule (gitlink) where evalock.toml or evalock.lock goes is what a checkout of it
/// is, a directory: bad input (65) named as such in the index and in a commit, as a
/// folder in its place is in the working tree; never "no evalock.toml" (64), which would
/// send the user to `evalock init`.
#[test]
fn a_submodule_where_evalocks_own_files_go_is_bad_input_in_every_source() {
    let repo = locked_demo();
    let head = repo.git(&["rev-parse", "HEAD"]);
    for file in ["evalock.toml", "evalock.lock"] {
        repo.git(&["rm", "--cached", "-q", file]);
        repo.git(&[
            "update-index",
            "--add",
            "--cacheinfo",
            &format!("160000,{},{file}", head.trim()),
        ]);
        let expected = format!("{file} is a directory (a folder or a git submodule) in the index");
        repo.evalock(&["check", "--staged"])
            .assert_code(65)
            .assert_contains(&expected);
        repo.git(&["commit", "-q", "-m", "a submodule in the way"]);
        let expected = format!("{file} is a directory (a folder or a git submodule) in the HEAD");
        repo.evalock(&["check", "--rev", "HEAD"])
            .assert_code(65)
            .assert_contains(&expected);
        // The working tree still holds the file, and is judged on it.
        repo.evalock(&["check"]).assert_code(0);
        // A folder in its place there is the same mistake, said the same way.
        let bytes = repo.read_bytes(file);
        repo.remove(file);
        std::fs::create_dir(repo.join(file)).expect("mkdir");
        repo.evalock(&["check"])
            .assert_code(65)
            .assert_contains(&format!(
                "{file} is a directory (a folder or a git submodule) in the working tree"
            ));
        std::fs::remove_dir(repo.join(file)).expect("rmdir");
        repo.write(file, bytes);
        repo.git(&["rm", "--cached", "-q", file]);
        repo.git(&["add", file]);
        repo.git(&["commit", "-q", "-m", "the file is back"]);
        repo.evalock(&["check", "--staged"]).assert_code(0);
    }
}

/// An evalock.toml with nothing in it is a valid project with nothing to pin (`check` and
/// `lock` pass), but `run` and `accept` have nothing to do: a usage error (64, so no gate
/// passes on a run that never happened) that says how to add a suite.
#[test]
fn run_and_accept_without_suites_say_how_to_add_one() {
    let repo = TestRepo::new();
    repo.write("evalock.toml", "");
    repo.evalock(&["lock"]).assert_code(0);
    repo.evalock(&["check"]).assert_code(0);
    for (command, action) in [
        (&["run"][..], "run"),
        (&["accept", "--reason", "first recording"], "accept"),
    ] {
        repo.evalock(command)
            .assert_code(64)
            .assert_contains(&format!(
                "evalock.toml defines no [[suite]], so there is nothing to {action}: add one, such as `[[suite]]`"
            ))
            .assert_not_contains("no results at");
    }
    assert!(!repo.join(".evalock/results.json").exists());
}

/// An evalock.toml that configures nothing passes `check` and `lock`, which reads as
/// "everything is fine". One line on standard error says nothing is pinned and how to
/// add something; the exit code stays 0, and the pre-commit hook (`check --staged`) and a
/// configured project print no such line.
#[test]
fn an_empty_configuration_passes_with_a_note_that_nothing_is_configured() {
    const NOTE: &str = "note: evalock.toml configures no suite, grader or skill";
    let repo = TestRepo::new();
    repo.write("evalock.toml", "version = 1\n");
    for command in [&["lock"][..], &["check"], &["check", "--format", "json"]] {
        let run = repo.evalock(command);
        run.assert_code(0);
        assert!(run.stderr.contains(NOTE), "{command:?}: {}", run.stderr);
        assert!(run.stderr.contains("`[[suite]]`"), "{}", run.stderr);
        assert!(!run.stdout.contains(NOTE), "{}", run.stdout);
    }
    repo.commit_all("adopt evalock");
    repo.evalock(&["check", "--staged"])
        .assert_code(0)
        .assert_not_contains(NOTE);
    // Quiet: a configured project.
    let demo = locked_demo();
    demo.evalock(&["lock"])
        .assert_code(0)
        .assert_not_contains(NOTE);
    demo.evalock(&["check"])
        .assert_code(0)
        .assert_not_contains(NOTE);
}

/// A file-wide problem past the first read block still stands for the whole file, as
/// when the file is read whole: a carriage return near the end outranks a malformed line
/// before it, from the working tree and from git alike.
#[test]
fn a_carriage_return_past_the_first_read_block_stands_for_the_file() {
    let line = |number: usize| {
        format!(
            "{{\"id\": \"case-{number:06}\", \"input\": \"{}\"}}\n",
            "x".repeat(80)
        )
    };
    let text: String = (1..=100_000).map(line).collect();
    assert!(text.len() > 9 << 20, "the file spans more than one block");
    let repo = TestRepo::new();
    repo.write(
        "evalock.toml",
        "version = 1\n\n[[suite]]\nname = \"big\"\ncases = [\"evals/big.jsonl\"]\n",
    );
    repo.write("evals/big.jsonl", &text);
    repo.evalock(&["lock"]).assert_code(0);
    repo.commit_all("lock a large file");

    let broken = text
        .replace("{\"id\": \"case-095000\",", "{\"id\": \"case-095000\"")
        .replace(
            "{\"id\": \"case-099999\", \"input\": \"x",
            "{\"id\": \"case-099999\", \"input\": \"\r\nx",
        );
    repo.write("evals/big.jsonl", &broken);
    for args in [&["check"][..], &["check", "--staged"]] {
        if args.len() == 2 {
            repo.git(&["add", "evals/big.jsonl"]);
        }
        let run = repo.evalock(args);
        run.assert_code(2).assert_contains("evals/big.jsonl:99999:");
        assert!(!run.stdout.contains("big.jsonl:95000:"), "{}", run.all());
    }

    // Quiet: the malformed line alone is reported at its own line.
    repo.write(
        "evals/big.jsonl",
        text.replace("{\"id\": \"case-095000\",", "{\"id\": \"case-095000\""),
    );
    repo.evalock(&["check"])
        .assert_code(2)
        .assert_contains("evals/big.jsonl:95000:")
        .assert_not_contains("big.jsonl:99999:");
}
