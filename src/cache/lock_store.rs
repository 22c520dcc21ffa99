//! The lock as last read, by content identity: a check after a case file edit takes the
//! unchanged `evalock.lock` (31.6 MiB of text for 200,000 cases, parsed on one core while
//! the other waits) from a compact copy of what was read from it.
//!
//! One lock is kept, in a cache file of its own, read only when a check asks for the lock:
//! a check that reuses its last report never reads it, and the store of case and skill
//! files does not grow by it.

use super::codec::{Decoder, Encoder};
use super::{key_tag, CacheContext};
use crate::model::{CaseEntries, CaseLock, Lock, LockRead};
use crate::source::ContentIdentity;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

pub struct LockStore {
    context: CacheContext,
    name: String,
}

impl LockStore {
    /// The store for one kind of source (`worktree` or `git`: their identities differ).
    pub fn open(context: &CacheContext, kind: &str) -> LockStore {
        LockStore {
            context: context.clone(),
            name: format!("lock-{}.bin", key_tag(kind)),
        }
    }

    /// The lock read from content with this identity, when it is the one kept.
    pub fn get(&self, identity: &ContentIdentity) -> Option<LockRead> {
        let body = self.context.read(&self.name)?;
        let mut decoder = Decoder::new(&body);
        if decoder.identity()? != *identity {
            return None;
        }
        let read = decode_lock(&mut decoder)?;
        decoder.is_done().then_some(read)
    }

    /// Keeps `read` as the lock of content with this identity, in place of the one kept.
    /// Written piece by piece: the entries of a large lock are never encoded whole.
    pub fn put(&self, identity: &ContentIdentity, read: &LockRead) {
        if !self.context.is_settled(identity) {
            return;
        }
        let Ok(head) = serde_json::to_vec(&Lock {
            cases: BTreeMap::new(),
            ..(*read.lock).clone()
        }) else {
            return;
        };
        let Ok(mut writer) = self.context.writer(&self.name) else {
            return;
        };
        let mut encoder = Encoder::with_capacity(head.len() + 1024);
        encoder.identity(identity);
        encoder.blob(&head);
        encoder.varint(read.case_digests.len() as u64);
        for (suite, digest) in &read.case_digests {
            encoder.short_str(suite);
            encoder.digest(digest);
        }
        encoder.varint(read.lock.cases.len() as u64);
        let mut written = writer.append(encoder.bytes());
        for (suite, entries) in &read.lock.cases {
            let mut encoder = Encoder::with_capacity(64 + 56 * entries.len());
            encode_suite(&mut encoder, suite, entries);
            written = written.and_then(|()| writer.append(encoder.bytes()));
        }
        if written.is_ok() {
            let _ = writer.finish();
        }
    }
}

/// One suite's case entries: the files they name once, then each entry with the index of
/// its file.
fn encode_suite(encoder: &mut Encoder, suite: &str, entries: &CaseEntries) {
    // Neighbouring entries name the same file (a lock read from text shares it): only a
    // change of file is looked up.
    let mut files: HashMap<&str, u64> = HashMap::new();
    let mut in_order = Vec::new();
    let mut last: Option<(&Arc<str>, u64)> = None;
    let file_indices: Vec<u64> = entries
        .iter()
        .map(|(_, entry)| match last {
            Some((file, index)) if Arc::ptr_eq(file, &entry.file) => index,
            _ => {
                let index = *files.entry(&entry.file).or_insert_with(|| {
                    in_order.push(&*entry.file);
                    in_order.len() as u64 - 1
                });
                last = Some((&entry.file, index));
                index
            }
        })
        .collect();
    encoder.short_str(suite);
    encoder.varint(in_order.len() as u64);
    for file in &in_order {
        encoder.short_str(file);
    }
    encoder.varint(entries.len() as u64);
    encoder.varint(entries.iter().map(|(id, _)| id.len() as u64).sum());
    for ((id, entry), file) in entries.iter().zip(file_indices) {
        encoder.short_str(id);
        encoder.varint(entry.version);
        encoder.digest(&entry.digest);
        encoder.varint(file);
        encoder.bool(entry.retired);
    }
}

fn decode_lock(decoder: &mut Decoder) -> Option<LockRead> {
    let mut lock: Lock = serde_json::from_slice(decoder.blob()?).ok()?;
    let mut case_digests = BTreeMap::new();
    for _ in 0..decoder.varint()? {
        let suite = decoder.short_str()?.to_owned();
        case_digests.insert(suite, decoder.digest()?);
    }
    for _ in 0..decoder.varint()? {
        let (suite, entries) = decode_suite(decoder)?;
        lock.cases.insert(suite, entries);
    }
    Some(LockRead {
        lock: Arc::new(lock),
        case_digests,
    })
}

fn decode_suite(decoder: &mut Decoder) -> Option<(String, CaseEntries)> {
    let suite = decoder.short_str()?.to_owned();
    let files = (0..decoder.varint()?)
        .map(|_| decoder.short_str().map(Arc::<str>::from))
        .collect::<Option<Vec<_>>>()?;
    let count = decoder.varint_len()?;
    let id_bytes = decoder.varint_len()?;
    // Sizes from the file are trusted only as far as its bytes go.
    let mut entries = CaseEntries::with_capacity(
        count.min(decoder.rest().len()),
        id_bytes.min(decoder.rest().len()),
    );
    for _ in 0..count {
        let id = decoder.short_str()?;
        let entry = CaseLock {
            version: decoder.varint()?,
            digest: decoder.digest()?,
            file: Arc::clone(files.get(decoder.varint_len()?)?),
            retired: decoder.bool()?,
        };
        entries.push_sorted(id, entry)?;
    }
    Some((suite, entries))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::Digest;
    use crate::model::SuiteLock;

    fn context(directory: &std::path::Path) -> CacheContext {
        crate::cache::tests::context(directory, "this build")
    }

    fn digest(byte: u8) -> Digest {
        Digest::from_sha256_bytes(&[byte; 32])
    }

    fn stat(size: u64) -> ContentIdentity {
        ContentIdentity::Stat {
            size,
            modified_ns: 1,
            changed_ns: 1,
            inode: 7,
            device: 3,
        }
    }

    fn lock_read() -> LockRead {
        let mut lock = Lock::new();
        lock.suites.insert(
            "support".to_owned(),
            SuiteLock {
                digest: digest(1),
                prompt: Some(digest(2)),
                prompts: BTreeMap::from([("prompts/support.txt".to_owned(), digest(2))]),
            },
        );
        let mut entries = CaseEntries::default();
        for (id, file, retired) in [
            ("a", "evals/one.jsonl", false),
            ("b", "evals/two.jsonl", true),
            ("c\u{e9}", "evals/one.jsonl", false),
        ] {
            let entry = CaseLock {
                version: 3,
                digest: digest(id.len() as u8),
                file: Arc::from(file),
                retired,
            };
            entries.push_sorted(id, entry).expect("sorted");
        }
        lock.cases.insert("support".to_owned(), entries);
        lock.cases
            .insert("empty".to_owned(), CaseEntries::default());
        LockRead::new(lock, None)
    }

    #[test]
    fn a_kept_lock_comes_back_equal_for_its_identity_only() {
        let directory = tempfile::tempdir().expect("temporary folder");
        let store = LockStore::open(&context(directory.path()), "worktree");
        let read = lock_read();
        assert!(store.get(&stat(10)).is_none());
        store.put(&stat(10), &read);
        let back = store.get(&stat(10)).expect("kept");
        assert_eq!(*back.lock, *read.lock);
        assert_eq!(back.case_digests, read.case_digests);
        assert!(store.get(&stat(11)).is_none());
        assert!(store
            .get(&ContentIdentity::Object("1234".to_owned()))
            .is_none());
        // The entries that name one file share it, as a lock parsed from text does.
        let entries = &back.lock.cases["support"];
        let (first, third) = (
            entries.get("a").expect("a"),
            entries.get("c\u{e9}").expect("c"),
        );
        assert!(Arc::ptr_eq(&first.file, &third.file));
        // Another lock replaces it.
        let mut other = (*read.lock).clone();
        other.cases.remove("empty");
        store.put(&stat(12), &LockRead::new(other.clone(), None));
        assert!(store.get(&stat(10)).is_none());
        assert_eq!(*store.get(&stat(12)).expect("kept").lock, other);
    }

    /// The shipped fixtures' locks: graders with commands and sources, skills with their
    /// files, sources and acknowledgements, cases over several files.
    #[test]
    fn the_fixtures_locks_come_back_equal() {
        let directory = tempfile::tempdir().expect("temporary folder");
        let store = LockStore::open(&context(directory.path()), "git");
        for text in [
            include_str!("../../fixtures/demo/evalock.lock"),
            include_str!("../../fixtures/skills/evalock.lock"),
        ] {
            let lock = Lock::parse("evalock.lock", text.as_bytes()).expect("a valid lock");
            let read = LockRead::new(lock, None);
            let identity = ContentIdentity::Object(format!("{:x}", text.len()));
            store.put(&identity, &read);
            let back = store.get(&identity).expect("kept");
            assert_eq!(*back.lock, *read.lock);
            assert_eq!(back.case_digests, read.case_digests);
        }
    }

    #[test]
    fn a_damaged_or_unsorted_copy_is_no_lock() {
        let directory = tempfile::tempdir().expect("temporary folder");
        let context = context(directory.path());
        let store = LockStore::open(&context, "worktree");
        store.put(&stat(10), &lock_read());
        let file = directory.path().join(&store.name);
        let bytes = std::fs::read(&file).expect("written");
        for cut in [1, bytes.len() / 2, bytes.len() - 1] {
            std::fs::write(&file, &bytes[..cut]).expect("cut");
            assert!(store.get(&stat(10)).is_none(), "cut at {cut}");
        }
        let mut flipped = bytes.clone();
        let middle = flipped.len() / 2;
        flipped[middle] ^= 0x20;
        std::fs::write(&file, &flipped).expect("flipped");
        assert!(store.get(&stat(10)).is_none());

        // Entries out of order decode to nothing, even under a valid seal.
        let mut encoder = Encoder::default();
        encoder.identity(&stat(10));
        encoder.blob(&serde_json::to_vec(&Lock::new()).expect("json"));
        encoder.varint(0);
        encoder.varint(1);
        encoder.short_str("support");
        encoder.varint(1);
        encoder.short_str("evals/one.jsonl");
        encoder.varint(2);
        encoder.varint(2);
        for id in ["b", "a"] {
            encoder.short_str(id);
            encoder.varint(1);
            encoder.digest(&digest(1));
            encoder.varint(0);
            encoder.bool(false);
        }
        assert!(context.write(&store.name, encoder.bytes()).is_some());
        assert!(store.get(&stat(10)).is_none());
    }

    #[test]
    fn content_that_may_still_change_is_not_kept() {
        let directory = tempfile::tempdir().expect("temporary folder");
        let store = LockStore::open(&context(directory.path()), "worktree");
        let now = ContentIdentity::Stat {
            size: 10,
            modified_ns: i128::MAX,
            changed_ns: i128::MAX,
            inode: 7,
            device: 3,
        };
        store.put(&now, &lock_read());
        assert!(store.get(&now).is_none());
    }
}
