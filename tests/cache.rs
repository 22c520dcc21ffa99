//! The memo of the last check never changes a verdict: a stale memo (a file edited with
//! its mtime restored), a truncated or corrupted one gives exactly what `--no-cache` gives.

mod common;

use common::{Run, TestRepo};
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

/// A check that read files changed within this window is not remembered; the tests wait
/// it out once so that the memo is really written and consulted.
const SETTLE: Duration = Duration::from_millis(2_100);

/// The demo without its command grader: a check that runs a command is never
/// remembered (see `a_command_grader_keeps_the_check_from_being_remembered`).
fn demo() -> TestRepo {
    let repo = TestRepo::with_fixture("demo");
    repo.replace("evalock.toml", "grader = \"escalation\"\n", "");
    repo.evalock(&["lock"]).assert_code(0);
    repo.commit_all("built-in grader only");
    std::thread::sleep(SETTLE);
    repo
}

fn cache_files(repo: &TestRepo) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(repo.join(".evalock/cache")) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .map(|entry| entry.expect("cache entry").path())
        .filter(|path| {
            path.extension()
                .is_some_and(|extension| extension == "json")
        })
        .collect();
    files.sort();
    files
}

/// The same check with and without the cache: same exit code, same report.
#[track_caller]
fn assert_same_as_uncached(repo: &TestRepo, args: &[&str]) -> Run {
    let cached = repo.evalock(args);
    let mut uncached_args = args.to_vec();
    uncached_args.push("--no-cache");
    let uncached = repo.evalock(&uncached_args);
    assert_eq!(
        cached.code,
        uncached.code,
        "exit codes differ\n--- cached\n{}\n--- uncached\n{}",
        cached.all(),
        uncached.all()
    );
    assert_eq!(cached.stdout, uncached.stdout);
    cached
}

/// Sets a file's modification time, as `touch -d` does.
fn set_mtime(repo: &TestRepo, relative: &str, stamp: &str) {
    let status = Command::new("touch")
        .args(["-m", "-d", stamp])
        .arg(repo.join(relative))
        .status()
        .expect("touch");
    assert!(status.success());
}

fn mtime_of(repo: &TestRepo, relative: &str) -> String {
    let output = Command::new("stat")
        .args(["-c", "%y"])
        .arg(repo.join(relative))
        .output()
        .expect("stat");
    String::from_utf8_lossy(&output.stdout).trim().to_owned()
}

#[test]
fn warm_check_writes_the_memo_and_agrees_with_a_cold_one() {
    let repo = demo();
    repo.evalock(&["check"])
        .assert_code(0)
        .assert_contains("PASS");
    assert_eq!(
        cache_files(&repo).len(),
        1,
        "one memo of the working tree's check"
    );
    assert!(
        repo.join(".evalock/.gitignore").exists(),
        "the memo's folder ignores itself in git"
    );
    let status = std::process::Command::new("git")
        .args(["status", "--porcelain", "--untracked-files=all"])
        .current_dir(repo.path())
        .output()
        .unwrap();
    assert!(
        !String::from_utf8_lossy(&status.stdout).contains(".evalock"),
        "git sees nothing of .evalock/"
    );
    let warm = repo.evalock(&["check", "--verbose"]);
    assert!(
        warm.stderr
            .contains("its report is reused from .evalock/cache"),
        "{}",
        warm.stderr
    );
    assert_same_as_uncached(&repo, &["check"]).assert_code(0);
    assert_same_as_uncached(&repo, &["check", "--format", "json"]).assert_code(0);
    assert_same_as_uncached(&repo, &["check", "--format", "json"]).assert_code(0);
    assert_same_as_uncached(&repo, &["check"]).assert_code(0);
    repo.evalock(&["check", "--staged"]).assert_code(0);
    repo.evalock(&["check", "--rev", "HEAD"]).assert_code(0);
    assert_eq!(
        cache_files(&repo).len(),
        3,
        "one more for git's content, one for what the hook's configuration tracks"
    );
    assert!(
        repo.git(&["status", "--porcelain"]).is_empty(),
        "the memo must not show up in git status"
    );
}

#[test]
fn a_command_grader_keeps_the_check_from_being_remembered() {
    let repo = TestRepo::with_fixture("demo");
    std::thread::sleep(SETTLE);
    repo.evalock(&["check"]).assert_code(0);
    assert_eq!(cache_files(&repo), Vec::<PathBuf>::new());
    assert_same_as_uncached(&repo, &["check"]).assert_code(0);
}

#[test]
fn an_edit_with_the_old_mtime_restored_is_still_seen() {
    let repo = demo();
    let stamp = mtime_of(&repo, "evals/support.jsonl");
    repo.evalock(&["check"]).assert_code(0);
    repo.evalock(&["check"]).assert_code(0);

    // Same size, same mtime: only the inode change time tells the edit apart.
    repo.replace("evals/support.jsonl", "\"version\": 3", "\"version\": 4");
    set_mtime(&repo, "evals/support.jsonl", &stamp);
    assert_eq!(mtime_of(&repo, "evals/support.jsonl"), stamp);
    assert_same_as_uncached(&repo, &["check"])
        .assert_code(2)
        .assert_contains("EL101");
}

/// An edit of the lock that keeps its size and restores its modification time is still
/// seen (by the inode change time): the memo is not taken.
#[test]
fn an_edited_lock_is_read_again() {
    let repo = demo();
    repo.evalock(&["check"]).assert_code(0);
    // One hex digit of a case's digest, in place.
    let stamp = mtime_of(&repo, "evalock.lock");
    let lock = repo.read("evalock.lock");
    let at = lock.find("[case.").expect("a case entry");
    let digit = at + lock[at..].find("digest = \"sha256:").expect("its digest") + 17;
    let flipped = match &lock[digit..=digit] {
        "0" => "1",
        _ => "0",
    };
    repo.write(
        "evalock.lock",
        format!("{}{flipped}{}", &lock[..digit], &lock[digit + 1..]),
    );
    set_mtime(&repo, "evalock.lock", &stamp);
    assert_eq!(repo.read("evalock.lock").len(), lock.len());
    let read_again = repo.evalock(&["check", "--verbose"]);
    read_again.assert_code(2).assert_contains("EL101");
    assert!(
        read_again.stderr.contains("every rule was applied"),
        "{}",
        read_again.stderr
    );
    assert_same_as_uncached(&repo, &["check"])
        .assert_code(2)
        .assert_contains("EL101");
}

#[test]
fn truncated_or_corrupted_cache_files_are_ignored() {
    let repo = demo();
    repo.evalock(&["check"]).assert_code(0);
    let files = cache_files(&repo);
    assert!(!files.is_empty());
    repo.replace("evals/support.jsonl", "\"version\": 3", "\"version\": 4");

    for file in &files {
        let bytes = std::fs::read(file).expect("read cache");
        std::fs::write(file, &bytes[..bytes.len() / 2]).expect("truncate cache");
    }
    assert_same_as_uncached(&repo, &["check"])
        .assert_code(2)
        .assert_contains("EL101");

    repo.replace("evals/support.jsonl", "\"version\": 4", "\"version\": 3");
    std::thread::sleep(SETTLE);
    repo.evalock(&["check"]).assert_code(0);
    for file in cache_files(&repo) {
        let mut bytes = std::fs::read(&file).expect("read cache");
        let middle = bytes.len() / 2;
        bytes[middle] ^= 0x55;
        std::fs::write(&file, bytes).expect("corrupt cache");
    }
    assert_same_as_uncached(&repo, &["check"]).assert_code(0);
    std::fs::write(
        repo.join(".evalock/cache/check-worktree.json"),
        b"not a memo\n{}",
    )
    .expect("write garbage");
    assert_same_as_uncached(&repo, &["check"]).assert_code(0);
}

#[test]
fn staged_checks_follow_the_index_not_the_memo() {
    let repo = demo();
    repo.evalock(&["check", "--staged"]).assert_code(0);

    // Nothing relevant staged: the memo answers, and it is right.
    repo.write("notes/todo.md", "unrelated\n");
    repo.git(&["add", "notes/todo.md"]);
    assert_same_as_uncached(&repo, &["check", "--staged"]).assert_code(0);

    // An unstaged edit is not judged; once staged it is.
    repo.replace("evals/support.jsonl", "\"version\": 3", "\"version\": 4");
    assert_same_as_uncached(&repo, &["check", "--staged"]).assert_code(0);
    repo.git(&["add", "evals/support.jsonl"]);
    assert_same_as_uncached(&repo, &["check", "--staged"])
        .assert_code(2)
        .assert_contains("EL101");

    // A new case file matching a suite's glob changes the listing the memo depends on.
    repo.git(&["checkout", "-q", "--", "."]);
    repo.git(&["reset", "-q"]);
    repo.evalock(&["check", "--staged"]).assert_code(0);
    repo.write("evals/extra.yaml", "- id: brand-new\n  input: hi\n");
    repo.git(&["add", "evals/extra.yaml"]);
    assert_same_as_uncached(&repo, &["check", "--staged"])
        .assert_code(2)
        .assert_contains("brand-new");
}

#[test]
fn a_rebuilt_lock_or_config_invalidates_the_memo() {
    let repo = demo();
    repo.evalock(&["check"]).assert_code(0);
    std::thread::sleep(SETTLE);
    repo.evalock(&["check"]).assert_code(0);
    repo.remove("evalock.lock");
    assert_same_as_uncached(&repo, &["check"])
        .assert_code(2)
        .assert_contains("no evalock.lock");
    repo.git(&["checkout", "-q", "--", "evalock.lock"]);
    repo.replace(
        "evalock.toml",
        "prompt = \"prompts/support.txt\"",
        "prompt = \"prompts/escalation.txt\"",
    );
    assert_same_as_uncached(&repo, &["check"])
        .assert_code(2)
        .assert_contains("EL107");
}

#[test]
fn a_revision_check_names_the_commit_it_judged_not_the_remembered_one() {
    let repo = demo();
    let first = repo
        .git(&["rev-parse", "--short=7", "HEAD"])
        .trim()
        .to_owned();
    repo.evalock(&["check", "--rev", "HEAD"])
        .assert_code(0)
        .assert_contains(&format!("HEAD ({first})"));
    // The same content, remembered: the memo answers for the same commit.
    assert_same_as_uncached(&repo, &["check", "--rev", "HEAD"])
        .assert_contains(&format!("HEAD ({first})"));

    // A new commit with the same files: the verdict is the same, the commit is not.
    repo.git(&[
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "nothing evalock reads",
    ]);
    let second = repo
        .git(&["rev-parse", "--short=7", "HEAD"])
        .trim()
        .to_owned();
    assert_same_as_uncached(&repo, &["check", "--rev", "HEAD"])
        .assert_code(0)
        .assert_contains(&format!("HEAD ({second})"))
        .assert_not_contains(&first);
}

/// `--verbose` says which way a check reached its verdict, and how long it took; without
/// `--verbose`, none of it is said.
#[test]
fn verbose_says_which_way_the_verdict_was_reached() {
    let repo = demo();
    let quiet = repo.evalock(&["check"]);
    quiet.assert_code(0);
    assert!(!quiet.stderr.contains("evalock:"), "{}", quiet.stderr);
    let lines = |run: &Run| -> Vec<String> {
        run.stderr
            .lines()
            .filter(|line| {
                line.starts_with("evalock: ") && !line.starts_with("evalock: checked in ")
            })
            .map(str::to_owned)
            .collect()
    };
    let warm = repo.evalock(&["check", "--verbose"]);
    assert_eq!(
        lines(&warm),
        ["evalock: every file the last check read is unchanged: its report is reused from .evalock/cache"]
    );
    assert!(
        warm.stderr.contains("evalock: checked in "),
        "{}",
        warm.stderr
    );
    let uncached = repo.evalock(&["check", "--verbose", "--no-cache"]);
    assert_eq!(
        lines(&uncached),
        ["evalock: every rule was applied to the content"]
    );
    let edited = repo.read("evals/support.jsonl");
    repo.write("evals/support.jsonl", format!("{edited}\n"));
    let cold = repo.evalock(&["check", "--verbose"]);
    assert_eq!(
        lines(&cold),
        ["evalock: every rule was applied to the content"]
    );
}

/// The hook remembers which paths a configuration tracks by the configuration's object
/// id: a commit that stages an untracked path is passed from the memo, and once the
/// configuration tracks that path, the same kind of commit is judged in full.
#[test]
fn the_hook_remembers_what_a_configuration_tracks_by_its_content() {
    let repo = demo();
    let memo = repo.join(".evalock/cache/staged-paths.json");
    let untouched = "evalock: nothing staged is a file evalock reads";
    repo.write(
        "notes/extra.jsonl",
        "{\"id\": \"brand-new\", \"input\": \"hi\"}\n",
    );
    repo.git(&["add", "notes/extra.jsonl"]);
    repo.evalock(&["check", "--staged", "--verbose"])
        .assert_code(0)
        .assert_contains(untouched);
    assert!(memo.is_file(), "the hook wrote no memo");
    // Answered from the memo, the same way.
    repo.evalock(&["check", "--staged", "--verbose"])
        .assert_code(0)
        .assert_contains(untouched);

    // The suite now reads notes/*.jsonl: a commit that stages one of them is judged.
    repo.git(&["reset", "-q"]);
    repo.replace(
        "evalock.toml",
        "cases = [\"evals/support.jsonl\"]",
        "cases = [\"evals/support.jsonl\", \"notes/*.jsonl\"]",
    );
    repo.remove("notes/extra.jsonl");
    repo.write(
        "notes/first.jsonl",
        "{\"id\": \"first-note\", \"input\": \"hi\"}\n",
    );
    repo.evalock(&["lock"]).assert_code(0);
    repo.commit_all("the support suite reads notes too");
    repo.write(
        "notes/extra.jsonl",
        "{\"id\": \"brand-new\", \"input\": \"hi\"}\n",
    );
    repo.git(&["add", "notes/extra.jsonl"]);
    assert_same_as_uncached(&repo, &["check", "--staged"])
        .assert_code(2)
        .assert_contains("brand-new");

    // A memo that does not read back is ignored, and `--no-cache` writes none.
    std::fs::write(&memo, b"not a memo").expect("corrupt the memo");
    repo.evalock(&["check", "--staged"])
        .assert_code(2)
        .assert_contains("brand-new");
    std::fs::remove_file(&memo).expect("remove the memo");
    repo.evalock(&["check", "--staged", "--no-cache"])
        .assert_code(2);
    assert!(!memo.exists(), "--no-cache wrote a memo");
}

/// A memo checks folders by their entries, not by each file's mode: a file made
/// executable is seen all the same, through its own identity (its inode change time).
#[test]
fn a_file_made_executable_is_seen_through_the_memo() {
    let repo = TestRepo::new();
    repo.write(
        "evalock.toml",
        "version = 1\n\n[skills]\nroots = [\"skills/*\"]\nallowed_permissions = [\"Read\"]\n",
    );
    repo.write(
        "skills/notes/SKILL.md",
        "---\nname: notes\ndescription: Takes notes. Use when asked to take notes.\nmetadata:\n  version: \"1.0.0\"\nallowed-tools: Read\n---\n\n# notes\n",
    );
    repo.write("skills/notes/reference/style.md", "# Style\n");
    repo.evalock(&["lock"]).assert_code(0);
    repo.commit_all("a skill");
    std::thread::sleep(SETTLE);
    repo.evalock(&["check"]).assert_code(0);
    repo.evalock(&["check", "--verbose"])
        .assert_code(0)
        .assert_contains("its report is reused");
    std::fs::set_permissions(
        repo.join("skills/notes/reference/style.md"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .expect("chmod");
    assert_same_as_uncached(&repo, &["check"])
        .assert_code(2)
        .assert_contains("skills/notes/reference/style.md");
}

/// What the memo of the last working-tree check says it looked at for `path`.
fn memo_dependencies_naming(repo: &TestRepo, path: &str) -> Vec<serde_json::Value> {
    let text = repo.read(".evalock/cache/check-worktree.json");
    let header = text.lines().next().expect("a memo header line");
    let header: serde_json::Value = serde_json::from_str(header).expect("memo header is JSON");
    header["dependencies"]
        .as_array()
        .expect("dependencies")
        .iter()
        .filter(|dependency| {
            dependency
                .as_object()
                .and_then(|variant| variant.values().next())
                .and_then(|fields| fields.get(0))
                .and_then(serde_json::Value::as_str)
                == Some(path)
        })
        .cloned()
        .collect()
}

/// The state of every suite `evalock init` writes, until its first `accept`: a baseline
/// configured that does not exist yet. It costs one stat, remembered as one entry; the
/// file is never opened. Once the file exists it is read (the content is a dependency).
#[test]
fn a_configured_but_missing_baseline_costs_one_stat() {
    let repo = TestRepo::new();
    repo.write(
        "evals/support.jsonl",
        "{\"id\": \"a\", \"input\": \"hi\", \"expect\": {\"must_include\": [\"hello\"]}}\n",
    );
    repo.evalock(&["init"]).assert_code(0);
    assert!(repo
        .read("evalock.toml")
        .contains("baseline = \"evals/support.baseline.json\""));
    repo.evalock(&["lock"]).assert_code(0);
    repo.commit_all("adopt evalock");
    std::thread::sleep(SETTLE);
    repo.evalock(&["check"]).assert_code(0);
    assert_eq!(
        memo_dependencies_naming(&repo, "evals/support.baseline.json"),
        vec![serde_json::json!({"Entry": ["evals/support.baseline.json", null]})],
    );

    repo.write("evals/support.baseline.json", "{}\n");
    std::thread::sleep(SETTLE);
    repo.evalock(&["check"]);
    let seen = memo_dependencies_naming(&repo, "evals/support.baseline.json");
    assert!(
        seen.iter()
            .any(|dependency| dependency.get("Content").is_some()),
        "a present baseline is read: {seen:?}"
    );
}

fn skill(name: &str) -> String {
    format!("---\nname: {name}\ndescription: \"Greets the user by name.\"\nversion: 1.0.0\n---\n\n# {name}\n\nSay hello.\n")
}

/// A memo takes a folder the last check listed as unchanged while its stamp (stat data)
/// is, since a folder's stat data change with every entry added, removed or renamed in it;
/// and the files that steer what the tree-wide walk leaves out (`.gitignore`,
/// `.git/info/exclude`) by their own. Every change below is seen through a memo written
/// with stamps, as a check without the memo sees it; unchanged, the memo is reused.
#[test]
fn the_memo_sees_each_change_to_the_folders_and_ignore_rules_it_stamped() {
    let repo = TestRepo::new();
    repo.write(
        "evals/support.jsonl",
        "{\"id\": \"a\", \"input\": \"hi\", \"expect\": {\"must_include\": [\"hello\"]}}\n",
    );
    repo.write("skills/greet/SKILL.md", skill("greet"));
    repo.write(".gitignore", "vendor/\n");
    repo.write("vendor/tool/SKILL.md", skill("tool"));
    repo.write("kept/tool/SKILL.md", skill("kept"));
    repo.write(".git/info/exclude", "kept/\n");
    // A folder that ignores everything in it, its own `.gitignore` included.
    repo.write("build/.gitignore", "*\n");
    repo.write("build/tool/SKILL.md", skill("built"));
    repo.evalock(&["init"]).assert_code(0);
    repo.evalock(&["lock"]).assert_code(0);
    repo.commit_all("adopt evalock");
    let remembered = || {
        std::thread::sleep(SETTLE);
        repo.evalock(&["check"]).assert_code(0);
        repo.evalock(&["check", "--verbose"])
            .assert_code(0)
            .assert_contains("its report is reused from .evalock/cache");
        let header = std::fs::read_to_string(repo.join(".evalock/cache/check-worktree.json"))
            .expect("the memo");
        let header: serde_json::Value =
            serde_json::from_str(header.lines().next().expect("its header")).expect("JSON");
        let stamped = |kind: &str| {
            header["dependencies"]
                .as_array()
                .expect("dependencies")
                .iter()
                .filter_map(|dependency| dependency.get(kind))
                .all(|fields| {
                    fields[2]
                        .as_array()
                        .is_some_and(|stamps| !stamps.is_empty())
                })
        };
        assert!(stamped("Listing") && stamped("Named"), "{header}");
    };
    let seen = |rule: &str, path: &str| {
        assert_same_as_uncached(&repo, &["check"])
            .assert_code(2)
            .assert_contains(&format!("{path}/SKILL.md"))
            .assert_contains(rule);
    };

    remembered();
    // A skill in a new folder nothing lists, and one in a folder the skill root lists.
    repo.write("plugins/x/skills/y/SKILL.md", skill("y"));
    seen("EL213", "plugins/x/skills/y");
    std::fs::remove_dir_all(repo.join("plugins")).expect("removed");
    remembered();
    repo.write("skills/wave/SKILL.md", skill("wave"));
    seen("EL2", "skills/wave");
    std::fs::remove_dir_all(repo.join("skills/wave")).expect("removed");
    remembered();
    // An ignore rule taken out in place: the folder it hid is seen.
    repo.write(".gitignore", "other/\n");
    seen("EL213", "vendor/tool");
    repo.write(".gitignore", "vendor/\n");
    remembered();
    repo.write(".git/info/exclude", "");
    seen("EL213", "kept/tool");
    repo.write(".git/info/exclude", "kept/\n");
    remembered();
    repo.write("build/.gitignore", "");
    seen("EL213", "build/tool");
}
