//! The case entries of one suite: the bulk of a lock (200,000 of them), kept sorted in one
//! buffer of ids and found by binary search, apart from the lock's other tables because
//! their layout is all about size and speed.

use super::CaseLock;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;

/// One suite's case entries, sorted by id as the lock lists them, found by binary search.
/// A large lock is read in this order: its entries are kept as read, not built into a tree,
/// and their ids are kept one after the other in one buffer (200,000 of them).
///
/// Cloning shares the entries (they are copied on the first change): two locks of one
/// check with a base hold a suite that did not change once (see [`CaseEntries::shares`]).
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(
    from = "BTreeMap<String, CaseLock>",
    into = "BTreeMap<String, CaseLock>"
)]
pub struct CaseEntries(Arc<Body>);

#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Body {
    /// The ids, one after the other.
    ids: String,
    /// Each entry with where its id ends in `ids` (it starts where the one before ends).
    entries: Vec<(usize, CaseLock)>,
}

impl PartialEq for CaseEntries {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0) || self.0 == other.0
    }
}

impl Eq for CaseEntries {}

impl CaseEntries {
    /// Room for `entries` entries whose ids take `id_bytes` bytes in all.
    pub(crate) fn with_capacity(entries: usize, id_bytes: usize) -> CaseEntries {
        CaseEntries(Arc::new(Body {
            ids: String::with_capacity(id_bytes),
            entries: Vec::with_capacity(entries),
        }))
    }

    /// Whether both are the very same entries, held once.
    pub fn shares(&self, other: &CaseEntries) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    /// The entries to change, copied first when they are shared.
    fn body_mut(&mut self) -> &mut Body {
        Arc::make_mut(&mut self.0)
    }

    /// Adds an entry after the others; `None` (and nothing added) unless its id comes
    /// after theirs.
    pub(crate) fn push_sorted(&mut self, id: &str, entry: CaseLock) -> Option<()> {
        if self.last_id().is_some_and(|last| last >= id) {
            return None;
        }
        let body = self.body_mut();
        body.ids.push_str(id);
        body.entries.push((body.ids.len(), entry));
        Some(())
    }

    /// The entry added last.
    pub(in crate::model) fn last_mut(&mut self) -> Option<&mut CaseLock> {
        self.body_mut().entries.last_mut().map(|(_, entry)| entry)
    }

    fn last_id(&self) -> Option<&str> {
        self.0
            .entries
            .len()
            .checked_sub(1)
            .map(|index| self.0.id(index))
    }

    pub fn get(&self, id: &str) -> Option<&CaseLock> {
        let index = self.0.position(id).ok()?;
        Some(&self.0.entries[index].1)
    }

    /// Adds the entry of `id`, or replaces it: then the one it replaced. Adding anywhere
    /// but at the end moves the entries after it.
    pub fn insert(&mut self, id: String, entry: CaseLock) -> Option<CaseLock> {
        let body = self.body_mut();
        match body.position(&id) {
            Ok(index) => Some(std::mem::replace(&mut body.entries[index].1, entry)),
            Err(index) => {
                let start = body.start(index);
                body.ids.insert_str(start, &id);
                for (end, _) in &mut body.entries[index..] {
                    *end += id.len();
                }
                body.entries.insert(index, (start + id.len(), entry));
                None
            }
        }
    }

    #[cfg(test)]
    pub fn remove(&mut self, id: &str) -> Option<CaseLock> {
        let body = self.body_mut();
        let index = body.position(id).ok()?;
        let start = body.start(index);
        body.ids.replace_range(start..start + id.len(), "");
        for (end, _) in &mut body.entries[index + 1..] {
            *end -= id.len();
        }
        Some(body.entries.remove(index).1)
    }

    /// The entries in id order.
    pub fn iter(&self) -> CaseEntriesIter<'_> {
        CaseEntriesIter {
            ids: &self.0.ids,
            start: 0,
            entries: self.0.entries.iter(),
        }
    }

    pub fn len(&self) -> usize {
        self.0.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.entries.is_empty()
    }
}

impl Body {
    fn start(&self, index: usize) -> usize {
        match index {
            0 => 0,
            _ => self.entries[index - 1].0,
        }
    }

    fn id(&self, index: usize) -> &str {
        &self.ids[self.start(index)..self.entries[index].0]
    }

    fn position(&self, id: &str) -> std::result::Result<usize, usize> {
        let mut range = 0..self.entries.len();
        // A binary search by index: each probe needs its neighbour's end for its start.
        while !range.is_empty() {
            let middle = range.start + range.len() / 2;
            match self.id(middle).cmp(id) {
                std::cmp::Ordering::Less => range.start = middle + 1,
                std::cmp::Ordering::Greater => range.end = middle,
                std::cmp::Ordering::Equal => return Ok(middle),
            }
        }
        Err(range.start)
    }
}

/// The entries of a [`CaseEntries`] with their ids, in id order.
#[derive(Debug, Clone)]
pub struct CaseEntriesIter<'a> {
    ids: &'a str,
    start: usize,
    entries: std::slice::Iter<'a, (usize, CaseLock)>,
}

impl<'a> Iterator for CaseEntriesIter<'a> {
    type Item = (&'a str, &'a CaseLock);

    fn next(&mut self) -> Option<Self::Item> {
        let (end, entry) = self.entries.next()?;
        let id = &self.ids[self.start..*end];
        self.start = *end;
        Some((id, entry))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.entries.size_hint()
    }
}

impl ExactSizeIterator for CaseEntriesIter<'_> {}

impl<'a> IntoIterator for &'a CaseEntries {
    type Item = (&'a str, &'a CaseLock);
    type IntoIter = CaseEntriesIter<'a>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl From<BTreeMap<String, CaseLock>> for CaseEntries {
    fn from(map: BTreeMap<String, CaseLock>) -> Self {
        let id_bytes = map.keys().map(String::len).sum();
        let mut entries = CaseEntries::with_capacity(map.len(), id_bytes);
        for (id, entry) in map {
            // A map's keys are sorted and distinct.
            let _ = entries.push_sorted(&id, entry);
        }
        entries
    }
}

impl From<CaseEntries> for BTreeMap<String, CaseLock> {
    fn from(entries: CaseEntries) -> Self {
        entries
            .iter()
            .map(|(id, entry)| (id.to_owned(), entry.clone()))
            .collect()
    }
}

/// As into a map: sorted by id, the last entry of an id kept.
impl FromIterator<(String, CaseLock)> for CaseEntries {
    fn from_iter<I: IntoIterator<Item = (String, CaseLock)>>(entries: I) -> Self {
        BTreeMap::from_iter(entries).into()
    }
}
