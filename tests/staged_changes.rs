//! The staged-change detection behind the pre-commit fast path, checked against git
//! itself: for every index state, the paths evalock says the next commit changes are
//! exactly those `git diff --cached --name-only --no-renames` lists.

mod common;

use common::TestRepo;
use evalock::source::{ContentSource, GitRepo, StagedChanges};
use std::path::Path;

fn staged_paths(root: &Path) -> StagedChanges {
    GitRepo::discover(root)
        .expect("repository")
        .staged_index()
        .expect("index")
        .changes_since_head()
        .expect("diff")
}

fn git_says(repo: &TestRepo) -> Vec<String> {
    let output = repo.git(&["diff", "--cached", "--name-only", "--no-renames", "-z"]);
    let mut paths: Vec<String> = output
        .split('\0')
        .filter(|path| !path.is_empty())
        .map(str::to_owned)
        .collect();
    paths.sort();
    paths
}

#[track_caller]
fn assert_matches_git(repo: &TestRepo, situation: &str) {
    let ours = match staged_paths(repo.path()) {
        StagedChanges::Paths(paths) => paths,
        StagedChanges::Unknown => panic!("{situation}: undecided, but git knows"),
    };
    assert_eq!(ours, git_says(repo), "{situation}");
}

/// A repository with a few levels of folders, committed.
fn tree_repo() -> TestRepo {
    let repo = TestRepo::new();
    for dir in ["a", "a/deep", "a/deep/er", "b", "c.d", "c"] {
        for file in ["one.txt", "two.txt"] {
            repo.write(&format!("{dir}/{file}"), format!("{dir}/{file}\n"));
        }
    }
    repo.write("top.txt", "top\n");
    repo.write("c-d", "sorts between c and c.d\n");
    repo.commit_all("tree");
    repo
}

#[test]
fn a_fresh_commit_stages_nothing() {
    let repo = tree_repo();
    assert_eq!(staged_paths(repo.path()), StagedChanges::Paths(Vec::new()));
    assert_matches_git(&repo, "clean");
}

#[test]
fn edits_additions_removals_and_mode_changes_are_found_at_any_depth() {
    let repo = tree_repo();
    repo.write("a/deep/er/one.txt", "changed\n");
    repo.write("a/deep/new/file.txt", "new\n");
    repo.write("new-top.txt", "new\n");
    repo.git(&["add", "-A"]);
    assert_matches_git(&repo, "edit and additions");
    repo.git(&["rm", "-q", "b/two.txt"]);
    repo.git(&["rm", "-q", "-r", "-f", "a/deep/er"]);
    assert_matches_git(&repo, "file and folder removed");
    repo.git(&["update-index", "--chmod=+x", "c/one.txt"]);
    assert_matches_git(&repo, "mode change only");
    repo.git(&["commit", "-q", "-m", "next"]);
    assert_eq!(staged_paths(repo.path()), StagedChanges::Paths(Vec::new()));
}

#[test]
fn a_valid_cache_tree_of_another_commit_is_not_taken_for_head() {
    let repo = tree_repo();
    repo.write("a/deep/er/two.txt", "changed\n");
    repo.git(&["rm", "-q", "c/one.txt"]);
    repo.git(&["add", "-A"]);
    repo.git(&["commit", "-q", "-m", "next"]);
    // The index keeps the cache tree written by that commit, which is no longer HEAD's.
    repo.git(&["reset", "-q", "--soft", "HEAD~1"]);
    assert_matches_git(&repo, "after reset --soft");
    let StagedChanges::Paths(paths) = staged_paths(repo.path()) else {
        panic!("undecided")
    };
    assert_eq!(
        paths,
        vec!["a/deep/er/two.txt".to_owned(), "c/one.txt".to_owned()]
    );
}

#[test]
fn a_file_that_becomes_a_folder_and_back_is_found() {
    let repo = tree_repo();
    repo.git(&["rm", "-q", "top.txt"]);
    repo.write("top.txt/inner.txt", "now a folder\n");
    repo.git(&["rm", "-q", "-r", "b"]);
    repo.write("b", "now a file\n");
    repo.git(&["add", "-A"]);
    assert_matches_git(&repo, "file to folder and folder to file");
}

#[test]
fn symlinks_and_intent_to_add_entries_follow_what_the_commit_records() {
    let repo = tree_repo();
    std::os::unix::fs::symlink("one.txt", repo.join("a/link")).expect("symlink");
    repo.git(&["add", "a/link"]);
    repo.write("b/later.txt", "not staged yet\n");
    repo.git(&["add", "-N", "b/later.txt"]);
    assert_matches_git(&repo, "symlink added, intent-to-add file");
    let StagedChanges::Paths(paths) = staged_paths(repo.path()) else {
        panic!("undecided")
    };
    assert_eq!(paths, vec!["a/link".to_owned()]);
}

#[test]
fn an_index_without_a_cache_tree_is_compared_entry_by_entry() {
    let repo = tree_repo();
    repo.write("a/deep/two.txt", "changed\n");
    repo.git(&["add", "a/deep/two.txt"]);
    // Rebuild the index from its own listing: same entries, no cache-tree extension.
    let listing = repo.git(&["ls-files", "--stage", "-z"]);
    std::fs::remove_file(repo.join(".git/index")).expect("remove index");
    let mut child = std::process::Command::new("git")
        .args(["update-index", "-z", "--index-info"])
        .current_dir(repo.path())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .stdin(std::process::Stdio::piped())
        .spawn()
        .expect("git update-index");
    use std::io::Write as _;
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(listing.as_bytes())
        .expect("write listing");
    assert!(child.wait().expect("wait").success());
    assert_matches_git(&repo, "no cache tree");
    let StagedChanges::Paths(paths) = staged_paths(repo.path()) else {
        panic!("undecided")
    };
    assert_eq!(paths, vec!["a/deep/two.txt".to_owned()]);
}

/// `a/one.txt` edited on a branch `topic` and on `main`, and `topic` merged into `main`:
/// the index holds the conflict.
fn conflict_in_the_index(repo: &TestRepo) {
    repo.git(&["checkout", "-q", "-b", "topic"]);
    repo.write("a/one.txt", "topic\n");
    repo.commit_all("topic");
    repo.git(&["checkout", "-q", "main"]);
    repo.write("a/one.txt", "main\n");
    repo.commit_all("main");
    let merge = repo.git_run(&["merge", "topic"]);
    assert_ne!(merge.code, 0, "expected a conflict");
}

#[test]
fn unmerged_paths_are_changes() {
    let repo = tree_repo();
    conflict_in_the_index(&repo);
    let StagedChanges::Paths(paths) = staged_paths(repo.path()) else {
        panic!("undecided")
    };
    assert_eq!(paths, vec!["a/one.txt".to_owned()]);
}

#[test]
fn a_first_commit_is_undecided() {
    let repo = TestRepo::new();
    repo.write("evalock.toml", "version = 1\n");
    repo.git(&["add", "evalock.toml"]);
    assert_eq!(staged_paths(repo.path()), StagedChanges::Unknown);
}

#[test]
fn a_project_in_a_folder_sees_its_own_paths_only() {
    let repo = tree_repo();
    repo.write("a/deep/one.txt", "changed\n");
    repo.write("b/one.txt", "changed\n");
    repo.git(&["add", "-A"]);
    assert_eq!(
        staged_paths(&repo.join("a")),
        StagedChanges::Paths(vec!["deep/one.txt".to_owned()])
    );
}

/// A fixed linear congruential sequence of numbers, each below the bound asked for, so a
/// failure reproduces.
fn sequence(seed: u64) -> impl FnMut(u64) -> u64 {
    let mut state = seed;
    move |bound| {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) % bound
    }
}

/// One random change to the index of a [`tree_repo`]: a file written and staged (and
/// made executable), a folder unstaged, or reset to HEAD; or, now and then, a commit of
/// whatever is staged, when something is. True for a commit.
fn random_change(repo: &TestRepo, step: usize, next: &mut impl FnMut(u64) -> u64) -> bool {
    let dirs = ["a", "a/deep", "a/deep/er", "b", "c", "c.d", "e/f"];
    let dir = dirs[next(dirs.len() as u64) as usize];
    let file = format!("{dir}/f{}.txt", next(4));
    match next(6) {
        0 | 1 => {
            repo.write(&file, format!("step {step}\n"));
            repo.git(&["add", &file]);
        }
        2 => {
            repo.git(&["rm", "-q", "-r", "-f", "--cached", "--ignore-unmatch", dir]);
        }
        3 => {
            repo.write(&file, format!("step {step}\n"));
            repo.git(&["add", &file]);
            repo.git(&["update-index", "--chmod=+x", &file]);
        }
        4 => {
            repo.git(&["reset", "-q", "HEAD", "--", dir]);
        }
        _ => {
            if !git_says(repo).is_empty() {
                repo.git(&["commit", "-q", "-m", &format!("step {step}")]);
                return true;
            }
        }
    }
    false
}

/// Many random operations, each followed by a comparison with git.
#[test]
fn random_index_states_agree_with_git() {
    let repo = tree_repo();
    let mut next = sequence(0x5eed_0fe7_a10c_4b1d);
    for step in 0..40 {
        random_change(&repo, step, &mut next);
        assert_matches_git(&repo, &format!("step {step}"));
    }
}

/// Everything a snapshot of `revision` holds, seen from `root`: each file with its kind
/// and object id, and what it cannot pin; as evalock reads the commit's trees, and as
/// `git ls-tree` lists them.
fn snapshots(root: &Path, revision: &str) -> (String, String) {
    let git = GitRepo::discover(root).expect("repository");
    let commit = git.resolve_commit(revision).expect("commit");
    let snapshot = git
        .commit_source(commit, revision.into())
        .expect("snapshot");
    let listing = snapshot.listing("").expect("listing");
    let mut read = String::new();
    for file in &listing.files {
        let identity = snapshot.identity(&file.path).expect("identity");
        read.push_str(&format!("{} {:?} {identity:?}\n", file.path, file.kind));
    }
    for unpinnable in &listing.unpinnable {
        read.push_str(&format!(
            "unpinnable {} {:?}\n",
            unpinnable.path, unpinnable.reason
        ));
    }
    let listed = std::process::Command::new("git")
        .args(["ls-tree", "-r", "-z", revision])
        .current_dir(root)
        .output()
        .expect("git ls-tree")
        .stdout;
    let (mut files, mut unpinnable) = (String::new(), String::new());
    for record in listed
        .split(|byte| *byte == 0)
        .filter(|record| !record.is_empty())
    {
        let record = String::from_utf8_lossy(record);
        let (meta, path) = record.split_once('\t').expect("mode, type, id and path");
        let fields: Vec<&str> = meta.split(' ').collect();
        let (mode, id) = (fields[0], fields[2]);
        if path.contains('\u{fffd}') {
            unpinnable.push_str(&format!("unpinnable {path} NameNotUtf8\n"));
            continue;
        }
        let kind = match mode {
            "100644" => "File",
            "100755" => "Executable",
            "120000" => "Symlink",
            _ => {
                unpinnable.push_str(&format!("unpinnable {path} Submodule\n"));
                continue;
            }
        };
        files.push_str(&format!("{path} {kind} Some(Object(\"{id}\"))\n"));
    }
    (read, files + &unpinnable)
}

#[track_caller]
fn assert_same_snapshots(root: &Path, revisions: &[&str], situation: &str) {
    for revision in revisions {
        let (read, listed) = snapshots(root, revision);
        assert!(!read.is_empty(), "{situation}: {revision} holds files");
        assert_eq!(read, listed, "{situation}: {revision}");
    }
}

/// A commit's files are what git lists for it, whatever the index holds (other commits'
/// trees, entries only intended to be added, conflicts, no cache-tree), and from a folder
/// of the repository as from its top.
#[test]
fn a_commit_s_files_are_what_git_lists() {
    let repo = tree_repo();
    std::os::unix::fs::symlink("one.txt", repo.join("a/link")).expect("symlink");
    repo.write("a/deep/run.sh", "#!/bin/sh\n");
    repo.git(&["add", "-A"]);
    repo.git(&["update-index", "--chmod=+x", "a/deep/run.sh"]);
    let gitlink = "160000,1111111111111111111111111111111111111111,a/deep/sub";
    repo.git(&["update-index", "--add", "--cacheinfo", gitlink]);
    // A name that is not UTF-8 cannot be pinned, whichever way it is read.
    use std::os::unix::ffi::OsStrExt as _;
    let odd = std::ffi::OsStr::from_bytes(b"caf\xe9.txt");
    std::fs::write(repo.join("b").join(odd), "latin-1\n").expect("odd name");
    repo.git(&["add", "-A"]);
    repo.git(&["commit", "-q", "-m", "kinds"]);
    let every = ["HEAD", "HEAD~1"];
    assert_same_snapshots(repo.path(), &every, "fresh commit");
    assert_same_snapshots(&repo.join("a"), &every, "from a folder");
    // The index moves on from HEAD: staged edits, an entry only intended to be added.
    repo.write("a/deep/er/one.txt", "edited\n");
    repo.write("c/new.txt", "new\n");
    repo.git(&["add", "a/deep/er/one.txt", "c/new.txt"]);
    repo.write("b/later.txt", "not staged yet\n");
    repo.git(&["add", "-N", "b/later.txt"]);
    assert_same_snapshots(repo.path(), &every, "staged changes");
    // Committed with the entry only intended to be added still there: the commit writes
    // the index's cache-tree, and that entry stays out of it.
    repo.git(&["commit", "-q", "-m", "edits"]);
    assert_same_snapshots(repo.path(), &every, "committed beside an intended file");
    repo.git(&["add", "-A"]);
    assert_same_snapshots(repo.path(), &["HEAD", "HEAD~1", "HEAD~2"], "after a commit");
    // A conflict in the index.
    repo.git(&["commit", "-q", "-m", "later"]);
    conflict_in_the_index(&repo);
    assert_same_snapshots(repo.path(), &["HEAD", "topic", "HEAD~3"], "conflict");
}

/// Random index states against the commits made along the way.
#[test]
fn random_commits_read_as_git_lists_them() {
    let repo = tree_repo();
    let mut next = sequence(0x0dd_5eed_1234_5678);
    let mut commits = vec!["HEAD".to_owned()];
    for step in 0..30 {
        if random_change(&repo, step, &mut next) {
            commits.push(repo.git(&["rev-parse", "HEAD"]).trim().to_owned());
        }
        let revisions: Vec<&str> = commits.iter().map(String::as_str).collect();
        assert_same_snapshots(repo.path(), &revisions, &format!("step {step}"));
    }
}
