//! Case files that `check --base` would parse twice. A pull request changes a few case
//! files of hundreds; the base revision holds the others byte for byte. The judged
//! content's parse of such a file is handed to the base's load instead of the base
//! reading the file from git (often a chain of deltas in a pack) and parsing it again.
//!
//! A file is handed over only when its bytes are known to be the base's: it has the same
//! path, and its git object id equals the base's. A file from the index or a commit has
//! that id; a working-tree file has it only when the index vouches for it (see
//! [`StagedIndex::vouched_blob`]). Anything else is parsed from the base as before, so the
//! report is the same either way.

use crate::model::{CaseFileCache, ParsedCaseFile};
use crate::source::{ContentIdentity, StagedIndex};
use std::collections::HashMap;
use std::sync::Mutex;

/// The parses waiting for the base, by path, with the object id of the bytes parsed.
pub struct Handover {
    /// Vouches for working-tree files; `None` for content from git, or without an index.
    index: Option<StagedIndex>,
    waiting: Mutex<HashMap<String, (String, ParsedCaseFile)>>,
}

impl Handover {
    pub fn new(index: Option<StagedIndex>) -> Handover {
        Handover {
            index,
            waiting: Mutex::new(HashMap::new()),
        }
    }

    /// The cache the judged content loads through: `inner` (the cache on disk, if any),
    /// with every parse it yields kept for the base when its object id is known.
    pub fn judged_side<'a>(&'a self, inner: Option<&'a dyn CaseFileCache>) -> JudgedSide<'a> {
        JudgedSide {
            handover: self,
            inner,
        }
    }

    /// The cache the base loads through: the parses handed over, then `inner`.
    pub fn base_side<'a>(&'a self, inner: Option<&'a dyn CaseFileCache>) -> BaseSide<'a> {
        BaseSide {
            handover: self,
            inner,
        }
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

    fn keep(&self, path: &str, identity: &ContentIdentity, parsed: &ParsedCaseFile) {
        let Some(id) = self.object_id(path, identity) else {
            return;
        };
        if let Ok(mut waiting) = self.waiting.lock() {
            waiting.insert(path.to_owned(), (id, parsed.clone()));
        }
    }

    /// The parse of `path` handed over for the base's `identity`, taken (each is asked
    /// for once).
    fn take(&self, path: &str, identity: &ContentIdentity) -> Option<ParsedCaseFile> {
        let ContentIdentity::Object(base_id) = identity else {
            return None;
        };
        let mut waiting = self.waiting.lock().ok()?;
        match waiting.get(path) {
            Some((id, _)) if id == base_id => waiting.remove(path).map(|(_, parsed)| parsed),
            _ => None,
        }
    }
}

pub struct JudgedSide<'a> {
    handover: &'a Handover,
    inner: Option<&'a dyn CaseFileCache>,
}

impl CaseFileCache for JudgedSide<'_> {
    fn get(&self, path: &str, identity: &ContentIdentity) -> Option<ParsedCaseFile> {
        let parsed = self.inner?.get(path, identity)?;
        self.handover.keep(path, identity, &parsed);
        Some(parsed)
    }

    fn put(&self, path: &str, identity: ContentIdentity, parsed: &ParsedCaseFile) {
        self.handover.keep(path, &identity, parsed);
        if let Some(inner) = self.inner {
            inner.put(path, identity, parsed);
        }
    }
}

pub struct BaseSide<'a> {
    handover: &'a Handover,
    inner: Option<&'a dyn CaseFileCache>,
}

impl CaseFileCache for BaseSide<'_> {
    fn get(&self, path: &str, identity: &ContentIdentity) -> Option<ParsedCaseFile> {
        self.handover
            .take(path, identity)
            .or_else(|| self.inner?.get(path, identity))
    }

    fn put(&self, path: &str, identity: ContentIdentity, parsed: &ParsedCaseFile) {
        if let Some(inner) = self.inner {
            inner.put(path, identity, parsed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::parse_case_file;

    /// A cache on disk stand-in: remembers what is put, answers what was.
    #[derive(Default)]
    struct Remembered(Mutex<HashMap<(String, ContentIdentity), ParsedCaseFile>>);

    impl CaseFileCache for Remembered {
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

    #[test]
    fn the_base_takes_the_parse_of_the_same_bytes_once() {
        let handover = Handover::new(None);
        handover
            .judged_side(None)
            .put(PATH, object("1111"), &parsed());
        let base = handover.base_side(None);
        assert_eq!(base.get(PATH, &object("1111")), Some(parsed()));
        assert_eq!(base.get(PATH, &object("1111")), None, "taken, not copied");
    }

    #[test]
    fn other_bytes_or_another_path_are_parsed_from_the_base() {
        let handover = Handover::new(None);
        handover
            .judged_side(None)
            .put(PATH, object("1111"), &parsed());
        let base = handover.base_side(None);
        assert_eq!(base.get(PATH, &object("2222")), None);
        assert_eq!(base.get("evals/b.jsonl", &object("1111")), None);
        assert_eq!(base.get(PATH, &object("1111")), Some(parsed()));
    }

    #[test]
    fn a_working_tree_file_no_index_vouches_for_is_not_handed_over() {
        let handover = Handover::new(None);
        handover.judged_side(None).put(PATH, stat(), &parsed());
        assert!(handover
            .waiting
            .lock()
            .is_ok_and(|waiting| waiting.is_empty()));
    }

    #[test]
    fn both_sides_still_use_the_cache_on_disk() {
        let disk = Remembered::default();
        let handover = Handover::new(None);
        let judged = handover.judged_side(Some(&disk));
        judged.put(PATH, stat(), &parsed());
        assert_eq!(disk.get(PATH, &stat()), Some(parsed()));
        // A hit on disk is handed over too.
        disk.put("evals/b.jsonl", object("3333"), &parsed());
        assert_eq!(judged.get("evals/b.jsonl", &object("3333")), Some(parsed()));
        let base = handover.base_side(Some(&disk));
        assert_eq!(base.get("evals/b.jsonl", &object("3333")), Some(parsed()));
        assert!(handover
            .waiting
            .lock()
            .is_ok_and(|waiting| waiting.is_empty()));
        // What was not handed over comes from the disk; what the base parses goes there.
        base.put(PATH, object("4444"), &parsed());
        assert_eq!(base.get(PATH, &object("4444")), Some(parsed()));
    }
}
