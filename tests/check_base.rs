//! `check --base` against real repositories built with git: the base's files are read
//! from its commit, whatever the working tree, the index or the packs hold.

mod common;

use common::TestRepo;
use std::process::Command;

const TEXT: &str = "{\"id\": \"a\", \"input\": \"one\"}\n{\"id\": \"b\", \"input\": \"two\"}\n";

fn committed(files: &[(&str, &str)]) -> TestRepo {
    let repo = TestRepo::new();
    for (path, text) in files {
        repo.write(path, text);
    }
    repo.commit_all("cases");
    repo
}

/// Checks the file out again, as a fresh clone would: the index records its new stat data.
fn check_out_again(repo: &TestRepo, path: &str) {
    repo.remove(path);
    repo.git(&["checkout", "--", path]);
}

fn demo_with_a_case_edited_in_place() -> TestRepo {
    let repo = TestRepo::with_fixture("demo");
    repo.evalock(&["check", "--base", "HEAD"])
        .assert_code(0)
        .assert_not_contains("EL102");
    repo.replace(
        "evals/support.jsonl",
        "I want my money back.",
        "I want my money back!",
    );
    repo
}

#[test]
fn check_base_compares_an_unstaged_edit_with_the_bytes_of_the_base() {
    let repo = demo_with_a_case_edited_in_place();
    // The index still names the base's blob for this path: only its stat data tell the
    // file has changed since, so the base must read its own bytes.
    repo.evalock(&["check", "--base", "HEAD"])
        .assert_code(2)
        .assert_contains("EL102 case-edited-in-place")
        .assert_contains("`refund-no-order-id`");
}

#[test]
fn check_base_compares_a_staged_edit_with_the_bytes_of_the_base() {
    let repo = demo_with_a_case_edited_in_place();
    repo.git(&["add", "evals/support.jsonl"]);
    for source in [&[][..], &["--staged"][..]] {
        let mut args = vec!["check", "--base", "HEAD"];
        args.extend_from_slice(source);
        repo.evalock(&args)
            .assert_code(2)
            .assert_contains("EL102 case-edited-in-place")
            .assert_contains("`refund-no-order-id`");
    }
}

/// Two suites, one of two files, locked, committed and checked out again.
fn two_suites() -> TestRepo {
    let repo = committed(&[
        (
            "evalock.toml",
            "version = 1\n\n[[suite]]\nname = \"a\"\ncases = [\"evals/a/*.jsonl\"]\n\n[[suite]]\nname = \"b\"\ncases = [\"evals/b.jsonl\"]\n",
        ),
        ("evals/a/1.jsonl", TEXT),
        (
            "evals/a/2.jsonl",
            "{\"id\": \"c\", \"input\": \"three\"}\n{\"id\": \"d\", \"input\": \"four\"}\n",
        ),
        ("evals/b.jsonl", TEXT),
    ]);
    repo.evalock(&["lock"]).assert_code(0);
    repo.commit_all("lock");
    for path in [
        "evalock.lock",
        "evals/a/1.jsonl",
        "evals/a/2.jsonl",
        "evals/b.jsonl",
    ] {
        check_out_again(&repo, path);
    }
    repo
}

/// `check --base BASE --format json --no-cache`, with `source`'s options (none: the
/// working tree).
fn check_json(repo: &TestRepo, base: &str, source: &[&str]) -> common::Run {
    let mut args = vec!["check", "--base", base, "--format", "json", "--no-cache"];
    args.extend_from_slice(source);
    repo.evalock(&args)
}

/// Each finding of a JSON report as `describe` puts it, in report order.
fn described(run: &common::Run, describe: impl Fn(&serde_json::Value) -> String) -> Vec<String> {
    let report: serde_json::Value = serde_json::from_str(&run.stdout).expect("a JSON report");
    report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(describe)
        .collect()
}

/// Each finding's rule and subject, in report order.
fn findings(run: &common::Run) -> Vec<String> {
    described(run, |finding| {
        let subject = &finding["subject"];
        format!(
            "{} {}/{}",
            finding["rule"].as_str().unwrap_or_default(),
            subject["suite"].as_str().unwrap_or_default(),
            subject["case"].as_str().unwrap_or_default()
        )
    })
}

/// Each finding's rule and file, in report order.
fn rules_and_files(run: &common::Run) -> Vec<String> {
    described(run, |finding| {
        let path = finding["location"]["path"].as_str().unwrap_or_default();
        format!("{} {path}", finding["rule"].as_str().unwrap_or_default())
    })
}

#[test]
fn check_base_judges_the_same_whatever_the_base_shares_with_the_judged_content() {
    let repo = two_suites();
    // Nothing changed: every suite and the lock are the base's.
    for source in [&[][..], &["--staged"][..], &["--rev", "HEAD"][..]] {
        let run = check_json(&repo, "HEAD", source);
        assert_eq!(findings(run.assert_code(0)), Vec::<String>::new());
    }
    // Suite `a` changes: a case of its second file edited in place (its first file is
    // still the base's, and copied out of the judged suite), then that file deleted (the
    // judged suite is then one file of the base's two); suite `b` and the lock do not.
    repo.replace("evals/a/2.jsonl", "\"three\"", "\"tres\"");
    let run = repo.evalock(&["check", "--base", "HEAD", "--format", "json", "--no-cache"]);
    assert_eq!(findings(run.assert_code(2)), ["EL101 a/c", "EL102 a/c"]);
    repo.remove("evals/a/2.jsonl");
    repo.git(&["add", "-A"]);
    for source in [&[][..], &["--staged"][..]] {
        let run = check_json(&repo, "HEAD", source);
        assert_eq!(findings(run.assert_code(2)), ["EL103 a/c", "EL103 a/d"]);
    }
    // Locked and committed, the lock changes too and is read from the base.
    repo.evalock(&["lock"]).assert_code(0);
    repo.commit_all("remove a file");
    let run = repo.evalock(&[
        "check", "--rev", "HEAD", "--base", "HEAD~1", "--format", "json",
    ]);
    assert_eq!(findings(run.assert_code(2)), ["EL103 a/c", "EL103 a/d"]);
}

#[test]
fn check_base_reads_the_base_skill_files_a_pull_request_changed() {
    let skill = |name: &str, tools: &str| {
        format!("---\nname: {name}\ndescription: Does {name} things. Use when asked for {name}.\nmetadata:\n  version: \"1.0.0\"\nallowed-tools: {tools}\n---\n\n# {name}\n")
    };
    let repo = committed(&[
        (
            "evalock.toml",
            "version = 1\n\n[skills]\nroots = [\"skills/*\"]\nallowed_permissions = [\"Read\", \"Grep\", \"Bash(git:*)\"]\n",
        ),
        ("skills/notes/SKILL.md", &skill("notes", "Read Grep")),
        ("skills/notes/style.md", "# Style\n"),
        ("skills/tidy/SKILL.md", &skill("tidy", "Read")),
    ]);
    repo.evalock(&["lock"]).assert_code(0);
    repo.commit_all("lock");
    repo.git(&["checkout", "-q", "-b", "feature"]);
    // The pull request widens one skill's tools and commits it.
    repo.replace(
        "skills/notes/SKILL.md",
        "Read Grep",
        "Read Grep Bash(git:push)",
    );
    repo.evalock(&["lock"]).assert_code(0);
    repo.commit_all("widen");
    for path in [
        "skills/notes/SKILL.md",
        "skills/notes/style.md",
        "skills/tidy/SKILL.md",
    ] {
        check_out_again(&repo, path);
    }
    for source in [&[][..], &["--staged"][..], &["--rev", "HEAD"][..]] {
        let run = check_json(&repo, "main", source);
        assert_eq!(
            rules_and_files(&run),
            ["EL212 skills/notes/SKILL.md", "EL209 skills/notes/SKILL.md"],
            "{source:?}"
        );
    }
    // Nothing changed against the feature itself: every skill file is shared, and quiet.
    let run = repo.evalock(&["check", "--base", "HEAD", "--format", "json", "--no-cache"]);
    assert_eq!(rules_and_files(&run), Vec::<String>::new());
}

#[test]
fn check_base_reads_a_changed_lock_whole_for_each_suite_it_changed() {
    let repo = two_suites();
    repo.git(&["checkout", "-q", "-b", "feature"]);
    // The pull request edits a case of suite `a` in place and locks it: that suite's
    // entries change, suite `b`'s are the base's. Then one digest of suite `b` is edited
    // by hand: that suite's entries are no longer the base's either, by one entry, and its
    // summary no longer matches them.
    repo.replace("evals/a/2.jsonl", "\"three\"", "\"tres\"");
    repo.evalock(&["lock"]).assert_code(0);
    let lock = repo.read("evalock.lock");
    let b_entry = lock.find("[case.b.b]").expect("the entry of b/b");
    let digest = b_entry + lock[b_entry..].find("sha256:").expect("its digest") + 7;
    let flipped = if &lock[digest..=digest] == "0" {
        "1"
    } else {
        "0"
    };
    let tampered = [&lock[..digest], flipped, &lock[digest + 1..]].concat();
    repo.write("evalock.lock", &tampered);
    for source in [&[][..], &["--staged"][..]] {
        repo.git(&["add", "-A"]);
        let run = check_json(&repo, "main", source);
        assert_eq!(
            findings(run.assert_code(2)),
            ["EL101 b/", "EL102 a/c", "EL101 b/b"],
            "{source:?}"
        );
    }
    // Committed, and the lock checked out again so the index vouches for it.
    repo.commit_all("edit in place");
    check_out_again(&repo, "evalock.lock");
    for source in [&[][..], &["--rev", "HEAD"][..]] {
        let run = check_json(&repo, "main", source);
        assert_eq!(
            findings(run.assert_code(2)),
            ["EL101 b/", "EL102 a/c", "EL101 b/b"],
            "{source:?}"
        );
    }
    // The hand edit undone and relocked: suite `b` is the base's again, and quiet.
    repo.evalock(&["lock"]).assert_code(0);
    repo.commit_all("relock");
    let run = repo.evalock(&["check", "--base", "main", "--format", "json", "--no-cache"]);
    assert_eq!(findings(run.assert_code(2)), ["EL102 a/c"]);
}

/// A fresh clone holds every object in a pack, older versions of the lock stored as
/// deltas of newer ones: the verdict is the same as with loose objects.
#[test]
fn check_base_judges_a_packed_repository_as_a_loose_one() {
    let repo = two_suites();
    let merge_base = repo.git(&["rev-parse", "HEAD"]).trim().to_owned();
    for (number, input) in [(1, "a case main added"), (2, "another one")] {
        let b_cases = repo.read("evals/b.jsonl");
        let added = format!("{{\"id\": \"main-{number}\", \"input\": \"{input}\"}}\n");
        repo.write("evals/b.jsonl", format!("{b_cases}{added}"));
        repo.evalock(&["lock"]).assert_code(0);
        repo.commit_all("main moves on");
    }
    repo.git(&["checkout", "-q", "-b", "feature", &merge_base]);
    repo.replace("evals/a/2.jsonl", "\"three\"", "\"tres\"");
    repo.evalock(&["lock"]).assert_code(0);
    repo.commit_all("edit in place");
    let mut reports = Vec::new();
    for layout in ["loose", "packed"] {
        if layout == "packed" {
            repo.git(&["repack", "-q", "-a", "-d", "-f", "--depth=50"]);
            repo.git(&["prune-packed"]);
            let loose = Command::new("git")
                .args(["count-objects", "-v"])
                .current_dir(repo.path())
                .output()
                .expect("git count-objects")
                .stdout;
            assert!(String::from_utf8_lossy(&loose).starts_with("count: 0\n"));
        }
        for source in [&[][..], &["--rev", "HEAD"][..]] {
            let run = check_json(&repo, &merge_base, source);
            assert_eq!(findings(run.assert_code(2)), ["EL102 a/c"], "{layout}");
            let mut report: serde_json::Value = serde_json::from_str(&run.stdout).expect("JSON");
            report["source"].take();
            reports.push(report);
        }
    }
    assert!(reports.windows(2).all(|pair| pair[0] == pair[1]));
}

/// The base parses again each case file whose bytes the index cannot vouch for: an edit
/// of the same length, with the file's modification time put back as it was, still
/// changes the file's inode change time, so it is compared with the base's own bytes.
#[test]
fn check_base_sees_an_edit_that_keeps_the_size_and_the_modification_time() {
    let repo = demo_with_a_case_edited_in_place();
    repo.git(&["checkout", "--", "evals/support.jsonl"]);
    // Written well before the index records it: its index entry is not racy.
    let stamp = "2026-01-01 00:00:00.123456789";
    let touch = || {
        let touched = Command::new("touch")
            .args(["-m", "-d", stamp, "evals/support.jsonl"])
            .current_dir(repo.path())
            .status()
            .expect("touch");
        assert!(touched.success());
    };
    touch();
    repo.git(&["update-index", "--refresh"]);
    repo.evalock(&["check", "--base", "HEAD", "--no-cache"])
        .assert_code(0)
        .assert_not_contains("EL102");
    // One character for another: the same size, and the same modification time.
    repo.replace(
        "evals/support.jsonl",
        "I want my money back.",
        "I want my money back!",
    );
    touch();
    repo.evalock(&["check", "--base", "HEAD", "--no-cache"])
        .assert_code(2)
        .assert_contains("EL102 case-edited-in-place")
        .assert_contains("`refund-no-order-id`");
}

/// The base reads a file from the working tree only where the index vouches that both
/// hold the same object: a skill widened in the working tree, not staged (its index entry
/// still names the base's object), is compared with the base's own bytes.
#[test]
fn check_base_reads_an_unstaged_edit_s_base_from_git() {
    let skill = "---\nname: notes\ndescription: Does notes things. Use when asked for notes.\nmetadata:\n  version: \"1.0.0\"\nallowed-tools: Read\n---\n\n# notes\n";
    let repo = committed(&[
        (
            "evalock.toml",
            "version = 1\n\n[skills]\nroots = [\"skills/*\"]\nallowed_permissions = [\"Read\", \"Grep\"]\n",
        ),
        ("skills/notes/SKILL.md", skill),
    ]);
    repo.evalock(&["lock"]).assert_code(0);
    repo.commit_all("lock");
    check_out_again(&repo, "skills/notes/SKILL.md");
    let run = check_json(&repo, "HEAD", &[]);
    assert_eq!(rules_and_files(run.assert_code(0)), Vec::<String>::new());
    repo.replace(
        "skills/notes/SKILL.md",
        "allowed-tools: Read",
        "allowed-tools: Read Grep",
    );
    repo.evalock(&["lock"]).assert_code(0);
    let run = check_json(&repo, "HEAD", &[]);
    assert_eq!(
        rules_and_files(&run),
        ["EL212 skills/notes/SKILL.md", "EL209 skills/notes/SKILL.md"]
    );
}
