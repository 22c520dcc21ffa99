//! Sharded runs (`evalock run --shard K/N`): which shard owns a case, and what a shard's
//! results record so `evalock merge` can prove the shards belong together.
//!
//! A case's shard is a hash of its suite and id alone, so adding or removing other cases
//! never moves it. Findings follow their case (an orphaned baseline entry follows the id it
//! is recorded under); findings about no case (a suite, a grader, the project) belong to
//! shard 1. Every finding is therefore reported by exactly one shard, and the shards'
//! findings together are the unsharded run's.

use crate::baselines::SuiteBaseline;
use crate::digest::{bytes_digest, Digest};
use crate::error::{Error, Result};
use crate::finding::Finding;
use crate::project::config::CONFIG_FILE;
use crate::project::lock::{Lock, LOCK_FILE};
use crate::source::ContentSource;
use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};
use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

/// Shard `index` of `count` (1-based, `1 <= index <= count`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

const SHARD_USAGE: &str = "expected K/N with 1 <= K <= N, e.g. `--shard 1/4`";

impl FromStr for Shard {
    type Err = Error;

    fn from_str(text: &str) -> Result<Shard> {
        // clap names the flag and the value; the message says what is wrong with it.
        let usage = |why: &str| Error::Usage(format!("{why}; {SHARD_USAGE}"));
        let (index, count) = text
            .split_once('/')
            .ok_or_else(|| usage("not of the form K/N"))?;
        let number = |part: &str, name: &str| {
            part.trim()
                .parse::<u32>()
                .map_err(|_| usage(&format!("{name} `{part}` is not a whole number")))
        };
        let (index, count) = (number(index, "K")?, number(count, "N")?);
        if count == 0 {
            return Err(usage("N must be at least 1"));
        }
        if index == 0 || index > count {
            return Err(usage(&format!("K must be between 1 and {count}")));
        }
        Ok(Shard { index, count })
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// The shard (1-based, of `count`) that owns case `case_id` of `suite`: the first 8 bytes
/// of SHA-256 over `suite\0case_id`, as a big-endian u64, modulo `count`.
pub fn shard_of(suite: &str, case_id: &str, count: u32) -> u32 {
    let mut hasher = Sha256::new();
    hasher.update(suite.as_bytes());
    hasher.update([0]);
    hasher.update(case_id.as_bytes());
    let hash = hasher.finalize();
    let mut first = [0u8; 8];
    first.copy_from_slice(&hash[..8]);
    let slot = u64::from_be_bytes(first) % u64::from(count.max(1));
    // `slot < count <= u32::MAX`, so the conversion cannot fail.
    u32::try_from(slot).unwrap_or(0) + 1
}

impl Shard {
    pub fn owns_case(&self, suite: &str, case_id: &str) -> bool {
        shard_of(suite, case_id, self.count) == self.index
    }

    /// The shard that reports `finding`: its case's, else shard 1.
    pub fn owner_of(finding: &Finding, count: u32) -> u32 {
        match (&finding.subject.suite, &finding.subject.case) {
            (Some(suite), Some(case)) => shard_of(suite, case, count),
            _ => 1,
        }
    }

    pub fn owns_finding(&self, finding: &Finding) -> bool {
        Shard::owner_of(finding, self.count) == self.index
    }
}

/// What a shard's results file records: which shard it is, and the identity of everything
/// the run read, so shards of different content are never merged.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShardRecord {
    pub index: u32,
    pub count: u32,
    /// Digest over evalock.toml, evalock.lock, the current content digests of every case,
    /// prompt, grader and skill (the lock the project would write now), the baseline files,
    /// the completions file (`--completions`) and `--samples`.
    pub identity: Digest,
}

impl ShardRecord {
    pub fn shard(&self) -> Shard {
        Shard {
            index: self.index,
            count: self.count,
        }
    }
}

/// The identity of a run's inputs (see [`ShardRecord::identity`]).
pub fn run_identity(
    current: &Lock,
    baselines: &BTreeMap<String, std::sync::Arc<SuiteBaseline>>,
    source: &dyn ContentSource,
    completions: Option<&[u8]>,
    samples: Option<u32>,
) -> Result<Digest> {
    let mut framed: Vec<u8> = b"evalock-run-identity-v1\0".to_vec();
    let mut part = |name: &str, bytes: Option<&[u8]>| {
        framed.extend_from_slice(name.as_bytes());
        framed.push(0);
        match bytes {
            Some(bytes) => {
                framed.extend_from_slice(&(bytes.len() as u64).to_be_bytes());
                framed.extend_from_slice(bytes);
            }
            None => framed.extend_from_slice(b"absent"),
        }
    };
    part(CONFIG_FILE, source.read(CONFIG_FILE)?.as_deref());
    part(LOCK_FILE, source.read(LOCK_FILE)?.as_deref());
    part("current content", Some(current.render().as_bytes()));
    for baseline in baselines.values() {
        part(&baseline.path, source.read(&baseline.path)?.as_deref());
    }
    part("--completions", completions);
    let samples = samples.map(|samples| samples.to_string());
    part("--samples", samples.as_deref().map(str::as_bytes));
    Ok(bytes_digest(&framed))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_k_of_n_and_refuses_everything_else() {
        assert_eq!(
            "2/4".parse::<Shard>().ok(),
            Some(Shard { index: 2, count: 4 })
        );
        assert_eq!(
            "1/1".parse::<Shard>().ok().map(|s| s.to_string()),
            Some("1/1".into())
        );
        for bad in ["0/4", "5/4", "1/0", "x", "1/", "/4", "-1/4", "1/4/2", ""] {
            let error = bad.parse::<Shard>().expect_err(bad);
            assert!(matches!(error, Error::Usage(_)), "{bad}: {error}");
        }
    }

    #[test]
    fn every_case_has_exactly_one_shard_and_keeps_it() {
        for id in ["a", "b", "greet", "refund-policy-7"] {
            let shard = shard_of("support", id, 4);
            assert!((1..=4).contains(&shard));
            assert_eq!(shard, shard_of("support", id, 4), "deterministic");
            let owners = (1..=4)
                .filter(|index| {
                    Shard {
                        index: *index,
                        count: 4,
                    }
                    .owns_case("support", id)
                })
                .count();
            assert_eq!(owners, 1);
        }
        assert_eq!(shard_of("s", "anything", 1), 1);
    }

    #[test]
    fn the_hash_separates_suite_from_id() {
        // "ab" + "c" and "a" + "bc" must not collide by construction.
        let spread: std::collections::BTreeSet<u32> = (0..64)
            .map(|n| shard_of("suite", &format!("case-{n}"), 4))
            .collect();
        assert_eq!(spread.len(), 4, "64 ids spread over all 4 shards");
        assert_ne!(shard_of("ab", "c", u32::MAX), shard_of("a", "bc", u32::MAX));
    }
}
