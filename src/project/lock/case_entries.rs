//! One suite's case entries: a list sorted by id, found by binary search. A large lock
//! holds 200,000 of them, and a tree of them costs half as much again as the list.

use super::CaseLock;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One suite's case entries, sorted by id, each id once.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(
    from = "BTreeMap<String, CaseLock>",
    into = "BTreeMap<String, CaseLock>"
)]
/// Ids as boxed strings: a lock of 200,000 cases, read twice by `check --base`, keeps
/// them all.
pub struct CaseEntries(Vec<(Box<str>, CaseLock)>);

impl CaseEntries {
    pub fn new() -> CaseEntries {
        CaseEntries::default()
    }

    fn position(&self, id: &str) -> Result<usize, usize> {
        self.0
            .binary_search_by(|(entry_id, _)| (**entry_id).cmp(id))
    }

    pub fn get(&self, id: &str) -> Option<&CaseLock> {
        self.position(id).ok().map(|index| &self.0[index].1)
    }

    /// Adds the entry of `id`, or replaces it: then the one it replaced.
    pub fn insert(&mut self, id: String, entry: CaseLock) -> Option<CaseLock> {
        match self.position(&id) {
            Ok(index) => Some(std::mem::replace(&mut self.0[index].1, entry)),
            Err(index) => {
                self.0.insert(index, (id.into_boxed_str(), entry));
                None
            }
        }
    }

    /// Entries already sorted by id, each id once.
    pub(super) fn from_sorted(entries: Vec<(Box<str>, CaseLock)>) -> CaseEntries {
        debug_assert!(entries.windows(2).all(|pair| pair[0].0 < pair[1].0));
        CaseEntries(entries)
    }

    /// The entries in id order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&str, &CaseLock)> + Clone + '_ {
        self.0.iter().map(|(id, entry)| (&**id, entry))
    }

    /// The ids in order.
    pub fn keys(&self) -> impl Iterator<Item = &str> + '_ {
        self.0.iter().map(|(id, _)| &**id)
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl<'a> IntoIterator for &'a CaseEntries {
    type Item = (&'a str, &'a CaseLock);
    type IntoIter = std::iter::Map<
        std::slice::Iter<'a, (Box<str>, CaseLock)>,
        fn(&'a (Box<str>, CaseLock)) -> (&'a str, &'a CaseLock),
    >;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter().map(|(id, entry)| (&**id, entry))
    }
}

impl From<BTreeMap<String, CaseLock>> for CaseEntries {
    fn from(map: BTreeMap<String, CaseLock>) -> Self {
        CaseEntries(
            map.into_iter()
                .map(|(id, entry)| (id.into_boxed_str(), entry))
                .collect(),
        )
    }
}

impl From<CaseEntries> for BTreeMap<String, CaseLock> {
    fn from(entries: CaseEntries) -> Self {
        entries
            .0
            .into_iter()
            .map(|(id, entry)| (id.into_string(), entry))
            .collect()
    }
}

/// As into a map: sorted by id, the last entry of an id kept.
impl FromIterator<(String, CaseLock)> for CaseEntries {
    fn from_iter<I: IntoIterator<Item = (String, CaseLock)>>(entries: I) -> Self {
        BTreeMap::from_iter(entries).into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::digest::bytes_digest;

    #[test]
    fn case_entries_behave_as_a_map_sorted_by_id() {
        let entry = |version: u64| CaseLock {
            version,
            digest: bytes_digest(&version.to_le_bytes()),
            file: "evals/a.jsonl".into(),
            retired: false,
        };
        let mut entries = CaseEntries::default();
        let mut map = BTreeMap::new();
        let ids = ["b1", "a", "\u{e9}", "b", "b-1", "a", "", "b1", "z"];
        for (step, id) in ids.iter().enumerate() {
            let version = step as u64;
            assert_eq!(
                entries.insert(id.to_string(), entry(version)),
                map.insert(id.to_string(), entry(version))
            );
            assert!(entries
                .iter()
                .eq(map.iter().map(|(id, entry)| (id.as_str(), entry))));
        }
        for id in ids.iter().chain(&["missing", "b0", "\u{ff}"]) {
            assert_eq!(entries.get(id), map.get(*id), "{id:?}");
        }
        let sorted =
            CaseEntries::from_sorted(vec![("b".into(), entry(1)), ("bb".into(), entry(4))]);
        assert_eq!(sorted.keys().collect::<Vec<_>>(), ["b", "bb"]);
    }
}
