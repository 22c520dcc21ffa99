//! What a caller asked to learn about an object besides its canonical form: the wanted
//! top-level members, and the form without the excluded one.

use super::key_order::{key_prefix, Keys, Member};
use super::{Canonicalizer, TopLevelMember};

impl Canonicalizer {
    /// The wanted top-level members and the object without the excluded one, both in the
    /// order [`Self::finish_object`] left in `order`.
    pub(super) fn record_top_level(&mut self, input: &[u8], members_start: usize) {
        let keys = Keys {
            input,
            decoded: &self.keys,
        };
        let excluded = self.wanted.excluded;
        let members = &self.members[members_start..];
        let mut excluded_found = false;
        for member in self.order.iter().map(|index| &members[*index]) {
            if let Some(name) = self.wanted.find(member, keys) {
                self.top_level.push(TopLevelMember {
                    key: name,
                    raw_value: member.raw_value.clone(),
                });
                excluded_found |= excluded == Some(name);
            }
        }
        if excluded_found {
            self.contract.push(b'{');
            let mut first = true;
            for member in self.order.iter().map(|index| &members[*index]) {
                if excluded.is_some_and(|name| member.key_bytes(keys) == name.as_bytes()) {
                    continue;
                }
                if !first {
                    self.contract.push(b',');
                }
                first = false;
                self.contract
                    .extend_from_slice(&self.out[member.segment.clone()]);
            }
            self.contract.push(b'}');
        }
    }
}

/// The top-level members a caller wants, each with its key's sort prefix: a member's key
/// is matched by its length and prefix (its whole text only past eight bytes), with no
/// call to compare bytes. Worked out again only when the caller asks for other members.
#[derive(Debug, Default)]
pub(super) struct WantedKeys {
    asked: &'static [&'static str],
    excluded: Option<&'static str>,
    /// The wanted names then the excluded one, with their prefixes.
    names: Vec<(&'static str, u64)>,
}

impl WantedKeys {
    pub(super) fn set(&mut self, wanted: &'static [&'static str], excluded: Option<&'static str>) {
        if std::ptr::eq(self.asked, wanted) && self.excluded == excluded && !self.names.is_empty() {
            return;
        }
        self.asked = wanted;
        self.excluded = excluded;
        self.names.clear();
        self.names.extend(
            wanted
                .iter()
                .chain(excluded.iter())
                .map(|name| (*name, key_prefix(name.as_bytes()))),
        );
    }

    pub(super) fn find(&self, member: &Member, keys: Keys<'_>) -> Option<&'static str> {
        let length = member.key.len();
        let (name, _) = self.names.iter().find(|(name, prefix)| {
            name.len() == length
                && *prefix == member.prefix
                && (length <= 8 || member.key_bytes(keys)[8..] == name.as_bytes()[8..])
        })?;
        Some(name)
    }
}
