//! The cache's own mechanics against a fake source whose identities the test controls.

use super::*;
use crate::finding::{Finding, Location, Subject};
use crate::hash::EntryKind;
use crate::model::{parse_case_file_with, CaseDetail, LoadCache};
use crate::report::Report;
use crate::rules::RuleId;
use crate::source::{ContentSource, SourceFile};
use std::collections::BTreeMap;
use std::sync::Mutex;

/// Files by path: content and the identity the source vouches for.
#[derive(Default)]
pub(super) struct FakeSource {
    files: Mutex<BTreeMap<String, (Vec<u8>, ContentIdentity)>>,
}

impl FakeSource {
    pub(super) fn put(&self, path: &str, content: &str, identity: &str) {
        let entry = (
            content.as_bytes().to_vec(),
            ContentIdentity::Object(identity.to_owned()),
        );
        self.files.lock().unwrap().insert(path.to_owned(), entry);
    }
}

impl ContentSource for FakeSource {
    fn describe(&self) -> String {
        "fake".into()
    }
    fn read(&self, path: &str) -> crate::Result<Option<Vec<u8>>> {
        Ok(self
            .files
            .lock()
            .unwrap()
            .get(path)
            .map(|(bytes, _)| bytes.clone()))
    }
    fn kind_of(&self, path: &str) -> crate::Result<Option<EntryKind>> {
        Ok(self
            .files
            .lock()
            .unwrap()
            .contains_key(path)
            .then_some(EntryKind::File))
    }
    fn list(&self, dir: &str) -> crate::Result<Vec<SourceFile>> {
        let prefix = format!("{dir}/");
        let files = self.files.lock().unwrap();
        Ok(files
            .keys()
            .filter(|path| dir.is_empty() || path.starts_with(&prefix))
            .map(|path| SourceFile {
                path: path.clone(),
                kind: EntryKind::File,
            })
            .collect())
    }
    fn identity(&self, path: &str) -> crate::Result<Option<ContentIdentity>> {
        Ok(self
            .files
            .lock()
            .unwrap()
            .get(path)
            .map(|(_, identity)| identity.clone()))
    }
}

pub(super) fn context(directory: &std::path::Path, binary: &str) -> CacheContext {
    CacheContext {
        directory: directory.to_path_buf(),
        binary: binary.into(),
        started_ns: 10_000_000_000_000,
    }
}

fn report() -> Report {
    let finding = Finding::new(RuleId::CaseUnlocked, Subject::case("s", "c"), "changed")
        .at(Location::span("evals/a.jsonl", 3, 4).with_column(2))
        .detail("a diff");
    Report::new(
        "check",
        "fake".into(),
        Some("main (abc1234)".into()),
        vec![finding],
    )
    .with_subjects([Subject::case("s", "c"), Subject::skill("skills/x")])
}

/// Reads through a recording source as a check would.
fn record(source: &FakeSource) -> RecordingSource<'_> {
    let recording = RecordingSource::new(source);
    recording.read("evalock.toml").unwrap();
    recording.read("evalock.lock").unwrap();
    recording.list("evals").unwrap();
    recording.identity("evals/a.jsonl").unwrap();
    recording
}

#[test]
fn the_memo_answers_only_while_everything_it_read_is_unchanged() {
    let directory = tempfile::tempdir().unwrap();
    let source = FakeSource::default();
    source.put("evalock.toml", "config", "c1");
    source.put("evals/a.jsonl", "{}", "a1");
    source.put("unrelated.txt", "x", "u1");
    let key = MemoKey("check worktree".into());
    let memo = CheckMemo::open(&context(directory.path(), "bin-1"), "worktree");
    memo.remember(&key, &record(&source), &report(), true);

    let recalled = memo.recall(&key, &source, true).expect("nothing changed");
    assert_eq!(recalled.findings, report().findings);
    assert_eq!(recalled.subjects, report().subjects);
    assert_eq!(
        (recalled.source.as_str(), recalled.base.as_deref()),
        ("fake", Some("main (abc1234)"))
    );

    source.put("unrelated.txt", "y", "u2");
    assert!(
        memo.recall(&key, &source, true).is_some(),
        "an unrelated change keeps the memo"
    );
    assert!(
        memo.recall(&MemoKey("check index".into()), &source, true)
            .is_none(),
        "another key misses"
    );
    assert!(
        CheckMemo::open(&context(directory.path(), "bin-2"), "worktree")
            .recall(&key, &source, true)
            .is_none()
    );

    source.put("evals/a.jsonl", "{}", "a2");
    assert!(
        memo.recall(&key, &source, true).is_none(),
        "a changed identity misses"
    );
    source.put("evals/a.jsonl", "{}", "a1");
    source.put("evals/b.jsonl", "{}", "b1");
    assert!(
        memo.recall(&key, &source, true).is_none(),
        "a new file in a listed directory misses"
    );
    source.files.lock().unwrap().remove("evals/b.jsonl");
    source.put("evalock.lock", "lock", "l1");
    assert!(
        memo.recall(&key, &source, true).is_none(),
        "a file that appeared where none was misses"
    );
}

#[test]
fn subjects_are_read_back_only_when_wanted_and_only_their_own() {
    let directory = tempfile::tempdir().unwrap();
    let source = FakeSource::default();
    source.put("evalock.toml", "config", "c1");
    source.put("evals/a.jsonl", "{}", "a1");
    let key = MemoKey("check worktree".into());
    let cache = context(directory.path(), "bin-1");
    let memo = CheckMemo::open(&cache, "worktree");
    memo.remember(&key, &record(&source), &report(), true);
    assert!(!report().subjects.is_empty());

    let without = memo.recall(&key, &source, false).expect("nothing changed");
    assert_eq!(without.findings, report().findings);
    assert!(without.subjects.is_empty());
    let with = memo.recall(&key, &source, true).expect("nothing changed");
    assert_eq!(with.subjects, report().subjects);

    // The subjects of another report (another memo written later, then its main file
    // lost) are refused: the memo names its own by their checksum.
    let subjects_file = directory.path().join(
        std::fs::read_dir(directory.path())
            .unwrap()
            .map(|entry| entry.unwrap().file_name().into_string().unwrap())
            .find(|name| name.ends_with("-subjects.bin"))
            .expect("a subjects file"),
    );
    let saved = std::fs::read(&subjects_file).unwrap();
    let mut other = report();
    other.subjects.truncate(1);
    let other_dir = tempfile::tempdir().unwrap();
    let other_memo = CheckMemo::open(&context(other_dir.path(), "bin-1"), "worktree");
    other_memo.remember(&key, &record(&source), &other, true);
    let other_subjects = std::fs::read_dir(other_dir.path())
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .find(|path| path.to_string_lossy().ends_with("-subjects.bin"))
        .unwrap();
    std::fs::copy(&other_subjects, &subjects_file).unwrap();
    assert!(memo.recall(&key, &source, true).is_none());
    assert!(memo.recall(&key, &source, false).is_some());
    // Missing or torn subjects: a miss when wanted, no harm otherwise.
    std::fs::write(&subjects_file, &saved[..saved.len() - 1]).unwrap();
    assert!(memo.recall(&key, &source, true).is_none());
    std::fs::remove_file(&subjects_file).unwrap();
    assert!(memo.recall(&key, &source, true).is_none());
    assert!(memo.recall(&key, &source, false).is_some());
    std::fs::write(&subjects_file, &saved).unwrap();
    assert_eq!(
        memo.recall(&key, &source, true)
            .map(|report| report.subjects),
        Some(report().subjects)
    );

    // A check whose report listed no subjects did not gather them: its memo serves a
    // report without subjects, never one that must list them (even with an earlier
    // subjects file still there).
    let mut listless = report();
    listless.subjects.clear();
    memo.remember(&key, &record(&source), &listless, false);
    assert_eq!(
        memo.recall(&key, &source, false)
            .map(|report| report.findings),
        Some(report().findings)
    );
    assert!(memo.recall(&key, &source, true).is_none());
}

#[test]
fn content_without_identity_or_too_fresh_is_not_remembered() {
    let directory = tempfile::tempdir().unwrap();
    let source = FakeSource::default();
    source.put("evalock.toml", "config", "c1");
    let key = MemoKey("k".into());
    let cache = context(directory.path(), "bin");
    let fresh = ContentIdentity::Stat {
        size: 1,
        modified_ns: cache.started_ns,
        changed_ns: 0,
        inode: 1,
        device: 1,
    };
    assert!(!cache.is_settled(&fresh));
    let old = ContentIdentity::Stat {
        size: 1,
        modified_ns: 0,
        changed_ns: 0,
        inode: 1,
        device: 1,
    };
    assert!(cache.is_settled(&old));

    let recording = RecordingSource::new(&source);
    recording.read("evalock.toml").unwrap();
    recording.record(memo_dependency_for_test("evals/a.jsonl", fresh));
    let memo = CheckMemo::open(&cache, "worktree");
    memo.remember(&key, &recording, &report(), true);
    assert!(memo.recall(&key, &source, true).is_none());
}

fn memo_dependency_for_test(path: &str, identity: ContentIdentity) -> memo::Dependency {
    memo::Dependency::Content(path.to_owned(), Some(identity))
}

#[test]
fn case_files_come_back_exactly_and_only_for_the_same_identity() {
    let directory = tempfile::tempdir().unwrap();
    let cache = context(directory.path(), "bin");
    let text = concat!(
        "{\"id\":\"a\",\"version\":2}\n{\"id\":\"b\",\"retired\":true}\nnot json\n",
        "{\"id\":\"c\",\"grader_version\":\"g-1\"}\n",
        "{\"id\":\"d\",\"expect\":{\"forbidden\":[\"x\"]},\"mutate\":[{\"completion\":\"y\"}]}\n",
        "{\"id\":\"e\",\"expect\":{\"must_include\":[\"x\"]},\"mutate\":3}\n",
        // Ids kept inline in a case (up to 24 bytes) and on the heap.
        "{\"id\":\"ffffffffffffffffffffffff\"}\n{\"id\":\"ggggggggggggggggggggggggg\"}\n",
    );
    let parsed = parse_case_file_with("evals/a.jsonl", text.as_bytes(), CaseDetail::Summary);
    let probed: Vec<_> = parsed
        .cases
        .iter()
        .filter_map(|case| case.probe())
        .collect();
    assert!(probed[3].passed.len() == 2 && probed[4].malformed_controls.is_some());
    let identity = ContentIdentity::Object("blob-1".into());

    let store = FileStore::open(&cache, "git");
    assert!(store.get("evals/a.jsonl", &identity).is_none());
    store.put("evals/a.jsonl", identity.clone(), &parsed);
    store.save();

    let store = FileStore::open(&cache, "git");
    assert_eq!(store.get("evals/a.jsonl", &identity), Some(parsed.clone()));
    assert_eq!(
        parsed
            .cases
            .iter()
            .map(|case| case.id.len())
            .collect::<Vec<_>>(),
        [1, 1, 1, 1, 1, 24, 25]
    );
    assert!(store
        .get("evals/a.jsonl", &ContentIdentity::Object("blob-2".into()))
        .is_none());
    assert!(store.get("evals/other.jsonl", &identity).is_none());
    assert!(FileStore::open(&cache, "worktree")
        .get("evals/a.jsonl", &identity)
        .is_none());
}

#[test]
fn a_store_dropped_before_it_saves_leaves_the_previous_file_alone() {
    let directory = tempfile::tempdir().unwrap();
    let cache = context(directory.path(), "bin");
    let parsed = parse_case_file_with("evals/a.jsonl", b"{\"id\":\"a\"}\n", CaseDetail::Summary);
    let first = ContentIdentity::Object("blob-1".into());
    let store = FileStore::open(&cache, "git");
    store.put("evals/a.jsonl", first.clone(), &parsed);
    store.save();
    let cache_dir = directory.path().to_path_buf();
    let listing = || {
        let mut names: Vec<_> = std::fs::read_dir(&cache_dir)
            .unwrap()
            .map(|entry| entry.unwrap().file_name())
            .collect();
        names.sort();
        names
    };
    let saved = listing();

    // Entries added are already streaming into a temporary file; dropping the store
    // removes it and keeps the saved file.
    let store = FileStore::open(&cache, "git");
    store.put(
        "evals/b.jsonl",
        ContentIdentity::Object("blob-2".into()),
        &parsed,
    );
    drop(store);
    assert_eq!(listing(), saved);
    let store = FileStore::open(&cache, "git");
    assert_eq!(store.get("evals/a.jsonl", &first), Some(parsed.clone()));
    assert!(store
        .get("evals/b.jsonl", &ContentIdentity::Object("blob-2".into()))
        .is_none());

    // Saved, the next file holds the entry used and the entry added.
    store.put(
        "evals/b.jsonl",
        ContentIdentity::Object("blob-2".into()),
        &parsed,
    );
    store.save();
    assert_eq!(listing(), saved);
    let store = FileStore::open(&cache, "git");
    assert!(store.get("evals/a.jsonl", &first).is_some());
    assert!(store
        .get("evals/b.jsonl", &ContentIdentity::Object("blob-2".into()))
        .is_some());
}

#[test]
fn skill_files_are_stored_beside_case_files_by_path_identity_and_patterns() {
    use crate::hash::Digest;
    use crate::skills::{ReadFile, SkillFile};
    let directory = tempfile::tempdir().expect("temp dir");
    let cache = context(directory.path(), "bin");
    // One path that is both a case file and a skill file.
    let path = "skills/a/cases.jsonl";
    let parsed = parse_case_file_with(path, b"{\"id\":\"a\"}\n", CaseDetail::Summary);
    let read = ReadFile {
        file: SkillFile {
            path: "cases.jsonl".into(),
            kind: EntryKind::File,
            digest: Digest::of_bytes(b"{\"id\":\"a\"}\n"),
            binary: false,
            executable: Vec::new(),
            risky: Vec::new(),
            link_target: None,
        },
        bytes: None,
    };
    let identity = ContentIdentity::Object("blob-1".into());
    let patterns = Digest::of_bytes(b"the built-in patterns");
    let store = FileStore::open(&cache, "git");
    assert!(store.get_skill_file(path, &identity, &patterns).is_none());
    store.put(path, identity.clone(), &parsed);
    store.put_skill_file(path, identity.clone(), &patterns, &read);
    store.save();

    let store = FileStore::open(&cache, "git");
    let found = store
        .get_skill_file(path, &identity, &patterns)
        .expect("kept");
    assert_eq!(found.file, read.file);
    assert_eq!(store.get(path, &identity), Some(parsed));
    let other_blob = ContentIdentity::Object("blob-2".into());
    assert!(store.get_skill_file(path, &other_blob, &patterns).is_none());
    let other_patterns = Digest::of_bytes(b"the project's own patterns");
    assert!(store
        .get_skill_file(path, &identity, &other_patterns)
        .is_none());
    // Saved again, the entries this run used are kept.
    store.save();
    let store = FileStore::open(&cache, "git");
    assert!(store.get_skill_file(path, &identity, &patterns).is_some());
}
