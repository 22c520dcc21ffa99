//! When the index vouches that a working-tree file holds a blob's exact bytes (`check
//! --base` then parses that file once, for both sides), checked against real
//! repositories built with git.

mod common;

use common::TestRepo;
use evalock::source::{ContentSource, GitRepo, WorktreeSource};
use std::process::Command;

const CASES: &str = "evals/cases.jsonl";
const TEXT: &str = "{\"id\": \"a\", \"input\": \"one\"}\n{\"id\": \"b\", \"input\": \"two\"}\n";

fn vouched(repo: &TestRepo, path: &str) -> Option<String> {
    let identity = WorktreeSource::new(repo.path())
        .identity(path)
        .expect("stat")
        .expect("a regular file");
    GitRepo::discover(repo.path())
        .expect("repository")
        .staged_index()
        .expect("index")
        .vouched_blob(path, &identity)
        .map(|id| id.to_string())
}

fn blob_id(repo: &TestRepo, path: &str) -> String {
    repo.git(&["rev-parse", &format!(":{path}")])
        .trim()
        .to_owned()
}

fn committed(files: &[(&str, &str)]) -> TestRepo {
    let repo = TestRepo::new();
    for (path, text) in files {
        repo.write(path, text);
    }
    repo.commit_all("cases");
    repo
}

/// Checks the file out again, as a fresh clone would: the index records its new stat data.
/// File and index are then often written within one tick of the file system's clock,
/// which leaves the entry racily clean until git next refreshes the index (`git status`
/// does, once the clock has moved on).
fn check_out_again(repo: &TestRepo, path: &str) {
    repo.remove(path);
    repo.git(&["checkout", "--", path]);
    refresh_index(repo);
}

/// Lets the clock move on past the index just written, then has git refresh it, so the
/// entries it wrote are no longer racily clean.
fn refresh_index(repo: &TestRepo) {
    std::thread::sleep(std::time::Duration::from_millis(50));
    repo.git(&["status", "--porcelain"]);
}

#[test]
fn a_file_checked_out_and_untouched_is_its_blob() {
    let repo = committed(&[(CASES, TEXT)]);
    assert_eq!(vouched(&repo, CASES), Some(blob_id(&repo, CASES)));
    check_out_again(&repo, CASES);
    assert_eq!(vouched(&repo, CASES), Some(blob_id(&repo, CASES)));
}

#[test]
fn a_file_edited_since_the_index_was_written_is_not() {
    let repo = committed(&[(CASES, TEXT)]);
    // Same size: only the stat data tell.
    repo.write(CASES, TEXT.replace("one", "uno"));
    assert_eq!(vouched(&repo, CASES), None);
    repo.git(&["add", CASES]);
    refresh_index(&repo);
    assert_eq!(vouched(&repo, CASES), Some(blob_id(&repo, CASES)));
}

#[test]
fn a_file_changed_no_earlier_than_the_index_was_written_is_not() {
    let repo = committed(&[(CASES, TEXT)]);
    assert!(vouched(&repo, CASES).is_some());
    // The index now looks written before the file last changed: "racily clean", where an
    // edit within one timestamp tick would leave the same stat data.
    let status = Command::new("touch")
        .args(["-d", "@978307200"])
        .arg(repo.join(".git/index"))
        .status()
        .expect("touch");
    assert!(status.success());
    assert_eq!(vouched(&repo, CASES), None);
}

#[test]
fn a_file_a_filter_rewrites_on_checkout_is_not() {
    let repo = committed(&[(".gitattributes", "*.jsonl text eol=crlf\n"), (CASES, TEXT)]);
    check_out_again(&repo, CASES);
    assert!(std::fs::read_to_string(repo.join(CASES))
        .expect("read")
        .contains("\r\n"));
    // Clean to git (the index records the checked-out file), but not the blob's bytes.
    assert_eq!(repo.git(&["status", "--porcelain"]).trim(), "");
    assert_eq!(vouched(&repo, CASES), None);
}

#[test]
fn only_a_tracked_regular_file_is() {
    let repo = committed(&[(CASES, TEXT)]);
    repo.write("evals/new.jsonl", TEXT);
    assert_eq!(vouched(&repo, "evals/new.jsonl"), None);
    repo.git(&["add", "--intent-to-add", "evals/new.jsonl"]);
    assert_eq!(vouched(&repo, "evals/new.jsonl"), None);
}

/// The demo project, locked and committed, with its refund case edited in place (same
/// version) in the working tree, keeping the file's size.
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

#[test]
fn a_project_in_a_folder_of_the_repository_is_vouched_for_by_its_own_paths() {
    let repo = committed(&[("eval suite/evals/cases.jsonl", TEXT)]);
    let project = repo.join("eval suite");
    let identity = WorktreeSource::new(&project)
        .identity(CASES)
        .expect("stat")
        .expect("a regular file");
    let index = GitRepo::discover(&project)
        .expect("repository")
        .staged_index()
        .expect("index");
    assert_eq!(
        index
            .vouched_blob(CASES, &identity)
            .map(|id| id.to_string()),
        Some(blob_id(&repo, "eval suite/evals/cases.jsonl"))
    );
}

/// Two suites, one of two files, locked and committed, with every file vouched for (the
/// case files and the lock are then shared with the base, not read again from git).
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
        assert_eq!(vouched(&repo, path), Some(blob_id(&repo, path)), "{path}");
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
    // The pull request widens one skill's tools and commits it: the working tree's file is
    // then vouched for, as the feature's blob, not the base's.
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
        assert_eq!(vouched(&repo, path), Some(blob_id(&repo, path)), "{path}");
    }
    for source in [&[][..], &["--staged"][..], &["--rev", "HEAD"][..]] {
        let run = check_json(&repo, "main", source);
        assert_eq!(
            rules_and_files(&run),
            ["EL209 skills/notes/SKILL.md"],
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
    assert_eq!(
        vouched(&repo, "evalock.lock"),
        Some(blob_id(&repo, "evalock.lock"))
    );
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

/// A fresh clone holds every object in a pack, the older lock stored as a delta of the
/// newer: the base's lock is then rebuilt from the working tree's (which the index vouches
/// for) and the delta, never whole in memory. The verdict is the same as from git.
#[test]
fn check_base_rebuilds_a_base_lock_stored_as_a_delta_of_the_working_tree_s() {
    let repo = two_suites();
    repo.git(&["checkout", "-q", "-b", "feature"]);
    repo.replace("evals/a/2.jsonl", "\"three\"", "\"tres\"");
    let added = "{\"id\": \"e\", \"input\": \"five, a longer case than the others\"}\n";
    let b_cases = repo.read("evals/b.jsonl");
    repo.write("evals/b.jsonl", format!("{b_cases}{added}"));
    repo.evalock(&["lock"]).assert_code(0);
    repo.commit_all("edit in place, add a case");
    repo.git(&["repack", "-q", "-a", "-d", "-f"]);
    check_out_again(&repo, "evalock.lock");
    let judged = blob_id(&repo, "evalock.lock");
    let base = repo
        .git(&["rev-parse", "main:evalock.lock"])
        .trim()
        .to_owned();
    let pack = std::fs::read_dir(repo.join(".git/objects/pack"))
        .expect("pack folder")
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .find(|path| path.extension().is_some_and(|extension| extension == "idx"))
        .expect("a pack");
    let listing = repo.git(&["verify-pack", "-v", &pack.to_string_lossy()]);
    let stored = listing
        .lines()
        .find(|line| line.starts_with(&base))
        .expect("the base lock in the pack");
    assert!(
        stored.ends_with(&format!(" 1 {judged}")),
        "the base lock is a delta of the judged one: {stored}"
    );
    for source in [&[][..], &["--rev", "HEAD"][..]] {
        let run = check_json(&repo, "main", source);
        assert_eq!(findings(run.assert_code(2)), ["EL102 a/c"], "{source:?}");
    }
    // The working tree's lock edited since (the index no longer vouches for it): the
    // base's lock is read from git instead, with the same verdict on the base's side.
    let lock = repo.read("evalock.lock");
    repo.write("evalock.lock", format!("{lock}\n"));
    let run = repo.evalock(&["check", "--base", "main", "--format", "json", "--no-cache"]);
    assert!(findings(&run).contains(&"EL102 a/c".to_owned()));
}

/// Wherever git stores a lock (loose; whole in a pack; a delta, or a chain of deltas, of
/// another version than the working tree's), it streams from the repository as git's
/// bytes, proved by its id. The pull request's verdict is the one given with the base's
/// lock read from git (`--rev HEAD` reads it so).
#[test]
fn check_base_streams_a_base_lock_wherever_git_stores_it() {
    use std::io::Read as _;
    let repo = two_suites();
    let merge_base = repo.git(&["rev-parse", "HEAD"]).trim().to_owned();
    // The main line moves on with two more versions of the lock.
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
    let versions: Vec<String> = ["HEAD", "main", "main~1", "main~2"]
        .iter()
        .map(|commit| repo.git(&["rev-parse", &format!("{commit}:evalock.lock")]))
        .map(|id| id.trim().to_owned())
        .collect();
    for layout in ["loose", "packed"] {
        if layout == "packed" {
            repo.git(&["repack", "-q", "-a", "-d", "-f", "--depth=50"]);
        }
        check_out_again(&repo, "evalock.lock");
        let identity = WorktreeSource::new(repo.path())
            .identity("evalock.lock")
            .expect("stat")
            .expect("a regular file");
        let git_repo = GitRepo::discover(repo.path()).expect("repository");
        let index = git_repo.staged_index().expect("index");
        for id in &versions {
            let object = gix::ObjectId::from_hex(id.as_bytes()).expect("an id");
            let bytes = Command::new("git")
                .args(["cat-file", "blob", id])
                .current_dir(repo.path())
                .output()
                .expect("git cat-file")
                .stdout;
            for worktree in [None, Some(("evalock.lock", &identity))] {
                let mut stream = index
                    .object_stream(object, worktree)
                    .unwrap_or_else(|| panic!("{id} streams ({layout})"));
                let mut read = Vec::new();
                stream.read_to_end(&mut read).expect("read");
                assert_eq!(read, bytes, "{id} ({layout})");
                assert!(stream.is_object(&object), "{id} ({layout})");
            }
        }
        let streamed = check_json(&repo, &merge_base, &["--verbose"]);
        let from_git = check_json(&repo, &merge_base, &["--rev", "HEAD", "--verbose"]);
        assert_eq!(findings(streamed.assert_code(2)), ["EL102 a/c"], "{layout}");
        // The check itself took the stream (`--verbose` says how the base's lock was
        // read); a commit's content has no index to vouch for it, so git reads it whole.
        let how = |run: &common::Run| -> Vec<String> {
            let lines = run.stderr.lines();
            let read = lines.filter(|line| line.starts_with("evalock: base lock: "));
            read.map(str::to_owned).collect()
        };
        let expected = match layout {
            "loose" => "from git's objects, inflated in order",
            _ => "",
        };
        let streamed_how = how(&streamed);
        assert!(
            matches!(&streamed_how[..], [line] if line.starts_with(&format!("evalock: base lock: streamed {expected}"))),
            "{layout}: {streamed_how:?}"
        );
        assert_eq!(
            how(&from_git),
            ["evalock: base lock: read whole from git"],
            "{layout}"
        );
        // Suite `b` and `a/1.jsonl`, unchanged since the merge base, are the judged
        // content's, shared; so is the base's lock, read first.
        let shared =
            "evalock: base: reused from the judged content or .evalock/cache: 2 case files, the lock";
        for run in [&streamed, &from_git] {
            assert!(
                run.stderr.lines().any(|line| line == shared),
                "{layout}: {}",
                run.stderr
            );
        }
        let report = |run: &common::Run| {
            let mut report: serde_json::Value = serde_json::from_str(&run.stdout).expect("JSON");
            report["source"].take();
            report
        };
        assert_eq!(report(&streamed), report(&from_git), "{layout}");
    }
}
