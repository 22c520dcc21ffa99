//! What `check --base` would load twice. A pull request changes a few case files of
//! hundreds, and often not the lock; the base revision holds the rest byte for byte. The
//! judged content's load is shared with the base's instead of the base reading the same
//! bytes from git (often a chain of deltas in a pack) and parsing them again:
//!
//! - a suite whose case files are all the base's is the same content in both snapshots,
//!   held once;
//! - so is the lock when it is the base's;
//! - of a suite where some files changed, each unchanged file's cases are copied out of
//!   the judged suite, and only the changed files are parsed from the base;
//! - a skill file that is the base's, scanned with the same risky patterns, is read,
//!   hashed and scanned once.
//!
//! When the lock changed, the base's is read first, before the judged content: its text
//! (read whole from git) is then freed before the judged content is loaded, and each
//! suite's entries in the judged lock that are the same as the base's are held once.
//!
//! Bytes are known to be the base's only when they have the same path and their git
//! object id equals the base's. Content from the index or a commit has that id; a
//! working-tree file has it only when the index vouches for it (see
//! [`StagedIndex::vouched_blob`]). Anything else is parsed from the base as before, so the
//! report is the same either way.

use crate::hash::Digest;
use crate::model::{read_lock, LoadCache, Lock, LockRead, ParsedCaseFile, SuiteCases, LOCK_FILE};
use crate::skills::ReadFile;
use crate::source::{ContentIdentity, ContentSource, StagedIndex};
use crate::trace::Trace;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// The judged content's loads, kept for the base by the object ids they were read from.
pub struct Handover {
    /// Vouches for working-tree files; `None` for content from git, or without an index.
    index: Option<StagedIndex>,
    kept: Mutex<Kept>,
}

#[derive(Default)]
struct Kept {
    /// By the path of each case file: its object id, and the suite content it is part of.
    files: HashMap<String, (String, Arc<SuiteCases>)>,
    /// The lock, with its object id.
    lock: Option<(String, LockRead)>,
    /// The base's lock, read ahead of the judged content, with its object id.
    base_lock: Option<(String, LockRead)>,
    /// By the path of each skill file: its object id, the fingerprint of the risky
    /// patterns it was scanned with, and what reading it found.
    skill_files: HashMap<String, (String, Digest, ReadFile)>,
}

impl Handover {
    pub fn new(index: Option<StagedIndex>) -> Handover {
        Handover {
            index,
            kept: Mutex::new(Kept::default()),
        }
    }

    /// The cache the judged content loads through: `inner` (the cache on disk, if any),
    /// with every suite and lock it loads kept for the base when its object ids are known.
    pub fn judged_side<'a>(&'a self, inner: Option<&'a dyn LoadCache>) -> JudgedSide<'a> {
        JudgedSide {
            handover: self,
            inner,
        }
    }

    /// The cache the base loads through: what the judged content's load kept, then `inner`.
    pub fn base_side<'a>(&'a self, inner: Option<&'a dyn LoadCache>) -> BaseSide<'a> {
        BaseSide {
            handover: self,
            inner,
        }
    }

    /// The index that vouches for working-tree files, when the judged content is the
    /// working tree.
    pub fn index(&self) -> Option<&StagedIndex> {
        self.index.as_ref()
    }

    /// Reads the base's lock now, before the judged content, unless the judged lock is
    /// known to be the same bytes (the base then shares the judged content's, as for case
    /// files). Memory: the base's lock is read as a stream where it can be (see
    /// `streamed_lock`), else whole from git, and freed before the judged content is
    /// loaded, instead of alongside all of it. Errors are left for the base's
    /// own load to report, in their place.
    pub fn read_base_lock_first(
        &self,
        judged: &dyn ContentSource,
        base: &dyn ContentSource,
        trace: &Trace,
    ) {
        let Ok(Some(ContentIdentity::Object(base_id))) = base.identity(LOCK_FILE) else {
            return;
        };
        let judged_identity = judged.identity(LOCK_FILE).ok().flatten();
        let judged_id = judged_identity
            .as_ref()
            .and_then(|identity| self.object_id(LOCK_FILE, identity));
        if judged_id.as_ref() == Some(&base_id) {
            trace.step("base lock: the same bytes as the judged lock, read once for both");
            return;
        }
        let streamed = self.streamed_lock(&base_id, judged_identity.as_ref());
        let read = match streamed {
            Some((lock, origin)) => {
                trace.step(format!("base lock: streamed {origin}"));
                Ok(Some(LockRead::new(lock, None)))
            }
            None => {
                trace.step("base lock: read whole from git");
                read_lock(base, None)
            }
        };
        if let (Ok(Some(read)), Some(mut kept)) = (read, self.kept()) {
            kept.base_lock = Some((base_id, read));
        }
    }

    /// The base's lock `base_id` read as a stream from the repository's packs or loose
    /// objects, from the working tree's lock (stat data `judged`) where its delta chain
    /// passes through the blob that file holds: the object database would hold the whole
    /// text, and both texts for a delta. Taken only when it parses as `evalock lock`
    /// writes it and its bytes are the object's.
    /// With the lock, where its bytes came from.
    fn streamed_lock(
        &self,
        base_id: &str,
        judged: Option<&ContentIdentity>,
    ) -> Option<(Lock, &'static str)> {
        let id = gix::ObjectId::from_hex(base_id.as_bytes()).ok()?;
        let worktree = judged.map(|identity| (LOCK_FILE, identity));
        let mut reader = self.index.as_ref()?.object_stream(id, worktree)?;
        let origin = reader.origin();
        let lock = Lock::read_rendered(&mut reader, LOCK_FILE, None)?;
        // Whatever the parser left unread still counts.
        std::io::copy(&mut reader, &mut std::io::sink()).ok()?;
        reader.is_object(&id).then_some((lock, origin))
    }

    fn object_id(&self, path: &str, identity: &ContentIdentity) -> Option<String> {
        match identity {
            ContentIdentity::Object(id) => Some(id.clone()),
            ContentIdentity::Stat { .. } => self
                .index
                .as_ref()?
                .vouched_blob(path, identity)
                .map(|id| id.to_string()),
        }
    }

    fn kept(&self) -> Option<std::sync::MutexGuard<'_, Kept>> {
        self.kept.lock().ok()
    }

    /// The suite content that holds `path` as the base's bytes `identity`.
    fn content_of(&self, path: &str, identity: &ContentIdentity) -> Option<Arc<SuiteCases>> {
        let ContentIdentity::Object(base_id) = identity else {
            return None;
        };
        let kept = self.kept()?;
        let (id, content) = kept.files.get(path)?;
        (id == base_id).then(|| Arc::clone(content))
    }
}

pub struct JudgedSide<'a> {
    handover: &'a Handover,
    inner: Option<&'a dyn LoadCache>,
}

impl LoadCache for JudgedSide<'_> {
    fn get(&self, path: &str, identity: &ContentIdentity) -> Option<ParsedCaseFile> {
        self.inner?.get(path, identity)
    }

    fn put(&self, path: &str, identity: ContentIdentity, parsed: &ParsedCaseFile) {
        if let Some(inner) = self.inner {
            inner.put(path, identity, parsed);
        }
    }

    fn put_suite(&self, identities: &[ContentIdentity], content: &Arc<SuiteCases>) {
        let files: Vec<_> = content
            .files()
            .iter()
            .zip(identities)
            .filter_map(|(path, identity)| {
                let id = self.handover.object_id(path, identity)?;
                Some((path.clone(), (id, Arc::clone(content))))
            })
            .collect();
        if let Some(mut kept) = self.handover.kept() {
            kept.files.extend(files);
        }
    }

    fn put_lock(&self, identity: &ContentIdentity, lock: &LockRead) {
        let Some(id) = self.handover.object_id(LOCK_FILE, identity) else {
            return;
        };
        if let Some(mut kept) = self.handover.kept() {
            kept.lock = Some((id, lock.clone()));
        }
    }

    fn known_lock(&self) -> Option<LockRead> {
        let kept = self.handover.kept()?;
        kept.base_lock.as_ref().map(|(_, read)| read.clone())
    }

    fn get_skill_file(
        &self,
        path: &str,
        identity: &ContentIdentity,
        patterns: &Digest,
    ) -> Option<ReadFile> {
        self.inner?.get_skill_file(path, identity, patterns)
    }

    fn put_skill_file(
        &self,
        path: &str,
        identity: ContentIdentity,
        patterns: &Digest,
        read: &ReadFile,
    ) {
        if let Some(inner) = self.inner {
            inner.put_skill_file(path, identity.clone(), patterns, read);
        }
        let Some(id) = self.handover.object_id(path, &identity) else {
            return;
        };
        if let Some(mut kept) = self.handover.kept() {
            kept.skill_files
                .insert(path.to_owned(), (id, *patterns, read.clone()));
        }
    }
}

pub struct BaseSide<'a> {
    handover: &'a Handover,
    inner: Option<&'a dyn LoadCache>,
}

impl LoadCache for BaseSide<'_> {
    fn get(&self, path: &str, identity: &ContentIdentity) -> Option<ParsedCaseFile> {
        match self.handover.content_of(path, identity) {
            Some(content) => content.file(path),
            None => self.inner?.get(path, identity),
        }
    }

    fn put(&self, path: &str, identity: ContentIdentity, parsed: &ParsedCaseFile) {
        if let Some(inner) = self.inner {
            inner.put(path, identity, parsed);
        }
    }

    fn get_suite(
        &self,
        files: &[String],
        identities: &[ContentIdentity],
    ) -> Option<Arc<SuiteCases>> {
        let content = self
            .handover
            .content_of(files.first()?, identities.first()?)?;
        let same = content.files() == files
            && files.iter().zip(identities).all(|(path, identity)| {
                self.handover
                    .content_of(path, identity)
                    .is_some_and(|other| Arc::ptr_eq(&other, &content))
            });
        same.then_some(content)
    }

    fn get_lock(&self, identity: &ContentIdentity) -> Option<LockRead> {
        let ContentIdentity::Object(base_id) = identity else {
            return None;
        };
        let kept = self.handover.kept()?;
        let mut locks = kept.lock.iter().chain(&kept.base_lock);
        let (_, lock) = locks.find(|(id, _)| id == base_id)?;
        Some(lock.clone())
    }

    fn get_skill_file(
        &self,
        path: &str,
        identity: &ContentIdentity,
        patterns: &Digest,
    ) -> Option<ReadFile> {
        let shared = || {
            let ContentIdentity::Object(base_id) = identity else {
                return None;
            };
            let kept = self.handover.kept()?;
            let (id, scanned_with, read) = kept.skill_files.get(path)?;
            (id == base_id && scanned_with == patterns).then(|| read.clone())
        };
        shared().or_else(|| self.inner?.get_skill_file(path, identity, patterns))
    }

    fn put_skill_file(
        &self,
        path: &str,
        identity: ContentIdentity,
        patterns: &Digest,
        read: &ReadFile,
    ) {
        if let Some(inner) = self.inner {
            inner.put_skill_file(path, identity, patterns, read);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::tests::FakeSource;
    use crate::hash::bytes_digest;
    use crate::model::{parse_case_file, CaseLock, Lock};

    /// A cache on disk stand-in: remembers what is put, answers what was.
    #[derive(Default)]
    struct Remembered(Mutex<HashMap<(String, ContentIdentity), ParsedCaseFile>>);

    impl LoadCache for Remembered {
        fn get(&self, path: &str, identity: &ContentIdentity) -> Option<ParsedCaseFile> {
            let remembered = self.0.lock().ok()?;
            remembered
                .get(&(path.to_owned(), identity.clone()))
                .cloned()
        }

        fn put(&self, path: &str, identity: ContentIdentity, parsed: &ParsedCaseFile) {
            if let Ok(mut remembered) = self.0.lock() {
                remembered.insert((path.to_owned(), identity), parsed.clone());
            }
        }
    }

    const PATH: &str = "evals/a.jsonl";

    fn object(id: &str) -> ContentIdentity {
        ContentIdentity::Object(id.to_owned())
    }

    fn parsed() -> ParsedCaseFile {
        parse_case_file(PATH, br#"{"id": "a", "input": "x"}"#)
    }

    fn stat() -> ContentIdentity {
        ContentIdentity::Stat {
            size: 25,
            modified_ns: 1,
            changed_ns: 1,
            inode: 2,
            device: 3,
        }
    }

    /// A suite of two files, `evals/a.jsonl` (one case and a malformed line) and
    /// `evals/b.jsonl` (two cases), joined as a load joins them.
    fn two_files() -> (ParsedCaseFile, ParsedCaseFile, Arc<SuiteCases>) {
        let first = parse_case_file(PATH, b"{\"id\": \"a\", \"input\": \"x\"}\n{oops\n");
        let second = parse_case_file(
            OTHER,
            b"{\"id\": \"b\", \"input\": \"y\"}\n{\"id\": \"c\", \"input\": \"z\"}\n",
        );
        assert_eq!((first.cases.len(), first.problems.len()), (1, 1));
        let mut joined = first.clone();
        joined.cases.extend(second.cases.clone());
        joined.problems.extend(second.problems.clone());
        let files = vec![PATH.to_owned(), OTHER.to_owned()];
        (first, second, Arc::new(SuiteCases::new(files, joined)))
    }

    const OTHER: &str = "evals/b.jsonl";

    fn lock() -> LockRead {
        LockRead {
            lock: Arc::new(crate::model::Lock::new()),
            case_digests: Default::default(),
        }
    }

    #[test]
    fn a_suite_of_the_same_bytes_is_shared_whole() {
        let (_, _, content) = two_files();
        let handover = Handover::new(None);
        handover
            .judged_side(None)
            .put_suite(&[object("1111"), object("2222")], &content);
        let base = handover.base_side(None);
        let files = content.files();
        let shared = base.get_suite(files, &[object("1111"), object("2222")]);
        assert!(shared.is_some_and(|shared| Arc::ptr_eq(&shared, &content)));
        // Another file's bytes, or other files, are not the suite.
        assert!(base
            .get_suite(files, &[object("1111"), object("3333")])
            .is_none());
        assert!(base.get_suite(&files[..1], &[object("1111")]).is_none());
        let more = [files.to_vec(), vec!["evals/c.jsonl".to_owned()]].concat();
        let identities = [object("1111"), object("2222"), object("4444")];
        assert!(base.get_suite(&more, &identities).is_none());
    }

    #[test]
    fn of_a_suite_that_changed_each_unchanged_file_is_copied_out_as_parsed_alone() {
        let (first, second, content) = two_files();
        let handover = Handover::new(None);
        handover
            .judged_side(None)
            .put_suite(&[object("1111"), object("2222")], &content);
        let base = handover.base_side(None);
        assert_eq!(base.get(PATH, &object("1111")), Some(first));
        assert_eq!(base.get(OTHER, &object("2222")), Some(second.clone()));
        // Asked again, the same copy: nothing is taken away from the judged content.
        assert_eq!(base.get(OTHER, &object("2222")), Some(second));
        assert_eq!(content.cases().len(), 3);
        // Other bytes, or a path the judged content does not hold, are parsed from the base.
        assert_eq!(base.get(PATH, &object("2222")), None);
        assert_eq!(base.get("evals/c.jsonl", &object("1111")), None);
    }

    #[test]
    fn the_lock_is_shared_only_for_the_same_bytes() {
        let handover = Handover::new(None);
        let judged = lock();
        handover
            .judged_side(None)
            .put_lock(&object("5555"), &judged);
        let base = handover.base_side(None);
        assert!(base
            .get_lock(&object("5555"))
            .is_some_and(|shared| Arc::ptr_eq(&shared.lock, &judged.lock)));
        assert!(base.get_lock(&object("6666")).is_none());
    }

    /// A skill's SKILL.md holding `bytes`, as read.
    fn skill_md(bytes: &[u8]) -> ReadFile {
        ReadFile {
            file: crate::skills::SkillFile {
                path: "SKILL.md".into(),
                kind: crate::hash::EntryKind::File,
                digest: crate::hash::bytes_digest(bytes),
                binary: false,
                executable: Vec::new(),
                risky: Vec::new(),
                link_target: None,
            },
            bytes: Some(bytes.to_vec()),
        }
    }

    #[test]
    fn a_skill_file_is_shared_only_for_the_same_bytes_and_patterns() {
        let patterns = crate::skills::scan::RiskyPatterns::builtin();
        let read = skill_md(b"x");
        const SKILL: &str = "skills/a/SKILL.md";
        let handover = Handover::new(None);
        let fingerprint = *patterns.fingerprint();
        handover
            .judged_side(None)
            .put_skill_file(SKILL, object("7777"), &fingerprint, &read);
        let base = handover.base_side(None);
        let shared = base.get_skill_file(SKILL, &object("7777"), &fingerprint);
        assert_eq!(shared.map(|shared| shared.bytes), Some(read.bytes.clone()));
        assert!(base
            .get_skill_file(SKILL, &object("8888"), &fingerprint)
            .is_none());
        assert!(base
            .get_skill_file("skills/b/SKILL.md", &object("7777"), &fingerprint)
            .is_none());
        let other = crate::hash::bytes_digest(b"other patterns");
        assert!(base
            .get_skill_file(SKILL, &object("7777"), &other)
            .is_none());
    }

    #[test]
    fn working_tree_content_no_index_vouches_for_is_not_shared() {
        let (_, _, content) = two_files();
        let handover = Handover::new(None);
        let judged = handover.judged_side(None);
        judged.put_suite(&[stat(), stat()], &content);
        judged.put_lock(&stat(), &lock());
        let patterns = crate::hash::bytes_digest(b"");
        judged.put_skill_file("skills/a/SKILL.md", stat(), &patterns, &skill_md(b"x"));
        let kept = handover.kept().expect("not poisoned");
        assert!(kept.files.is_empty() && kept.lock.is_none() && kept.skill_files.is_empty());
    }

    #[test]
    fn both_sides_still_use_the_cache_on_disk() {
        let disk = Remembered::default();
        let handover = Handover::new(None);
        let judged = handover.judged_side(Some(&disk));
        judged.put(PATH, stat(), &parsed());
        assert_eq!(disk.get(PATH, &stat()), Some(parsed()));
        assert_eq!(judged.get(PATH, &stat()), Some(parsed()));
        let base = handover.base_side(Some(&disk));
        // Nothing kept for this path: the disk answers, and what the base parses goes there.
        base.put(OTHER, object("4444"), &parsed());
        assert_eq!(base.get(OTHER, &object("4444")), Some(parsed()));
    }

    /// A lock of suites `a` and `b`, one case each, `b`'s at `version`.
    fn lock_text(version: u64) -> String {
        let mut lock = Lock::new();
        for (suite, version) in [("a", 1), ("b", version)] {
            let entry = CaseLock {
                version,
                digest: bytes_digest(suite.as_bytes()),
                file: Arc::from(format!("evals/{suite}.jsonl")),
                retired: false,
            };
            lock.cases
                .entry(suite.into())
                .or_default()
                .insert("c".into(), entry);
        }
        lock.render()
    }

    fn sources(judged_version: u64, judged_id: &str) -> (FakeSource, FakeSource) {
        let (judged, base) = (FakeSource::default(), FakeSource::default());
        judged.put(LOCK_FILE, &lock_text(judged_version), judged_id);
        base.put(LOCK_FILE, &lock_text(1), "base");
        (judged, base)
    }

    #[test]
    fn a_changed_lock_is_read_from_the_base_first_and_its_unchanged_suites_shared() {
        let (judged, base) = sources(2, "judged");
        let handover = Handover::new(None);
        let trace = Trace::new();
        handover.read_base_lock_first(&judged, &base, &trace);
        // No index to stream from: git's whole text.
        assert_eq!(trace.steps(), ["base lock: read whole from git"]);
        let judged_side = handover.judged_side(None);
        let known = judged_side
            .known_lock()
            .expect("the base's lock, read first");
        let read = read_lock(&judged, Some(&judged_side))
            .expect("read")
            .expect("a lock");
        let alone = read_lock(&judged, None).expect("read").expect("a lock");
        assert_eq!(read.lock, alone.lock);
        assert_eq!(read.case_digests, alone.case_digests);
        assert!(read.lock.cases["a"].shares(&known.lock.cases["a"]));
        assert!(!read.lock.cases["b"].shares(&known.lock.cases["b"]));
        // The base takes the lock read first, not the judged one.
        let base_side = handover.base_side(None);
        let taken = base_side.get_lock(&object("base")).expect("kept");
        assert!(Arc::ptr_eq(&taken.lock, &known.lock));
        assert!(base_side.get_lock(&object("other")).is_none());
    }

    #[test]
    fn a_lock_that_is_the_base_s_is_read_once_from_the_judged_content() {
        let (judged, base) = sources(1, "base");
        let handover = Handover::new(None);
        let trace = Trace::new();
        handover.read_base_lock_first(&judged, &base, &trace);
        assert_eq!(
            trace.steps(),
            ["base lock: the same bytes as the judged lock, read once for both"]
        );
        let judged_side = handover.judged_side(None);
        assert!(judged_side.known_lock().is_none());
        let read = read_lock(&judged, Some(&judged_side))
            .expect("read")
            .expect("a lock");
        let taken = handover.base_side(None).get_lock(&object("base"));
        assert!(taken.is_some_and(|taken| Arc::ptr_eq(&taken.lock, &read.lock)));
    }

    #[test]
    fn a_base_lock_that_cannot_be_read_is_left_to_the_base_s_load() {
        let (judged, base) = sources(2, "judged");
        base.put(LOCK_FILE, "lock_version = [", "base");
        let handover = Handover::new(None);
        handover.read_base_lock_first(&judged, &base, &Trace::new());
        assert!(handover.judged_side(None).known_lock().is_none());
        assert!(read_lock(&base, Some(&handover.base_side(None))).is_err());
    }
}
