//! The release gate of `evalock changelog --fail-on`: which kinds of change fail a
//! release job.

use super::Changelog;
use std::collections::BTreeSet;

/// What `--fail-on` gates a release on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Gate {
    /// A case that passed at the earlier revision's last-good fails in the later one's.
    Regress,
    /// A case accepted while failing since the earlier revision.
    KnownFailure,
    /// A case retired or removed.
    Retired,
    /// A case's version bumped.
    Bumped,
    /// A baseline entry accepted again since the earlier revision.
    Reaccepted,
    /// A suite's model, prompt or grader, or a grader's version, sources or calibration.
    Context,
}

impl Gate {
    const WORDS: [(&'static str, Gate); 6] = [
        ("regress", Gate::Regress),
        ("known-failure", Gate::KnownFailure),
        ("retired", Gate::Retired),
        ("bumped", Gate::Bumped),
        ("reaccepted", Gate::Reaccepted),
        ("context", Gate::Context),
    ];

    /// A comma-separated list of gates, or `none`.
    pub fn parse_list(text: &str) -> std::result::Result<BTreeSet<Gate>, String> {
        let mut gates = BTreeSet::new();
        for word in text
            .split(',')
            .map(str::trim)
            .filter(|word| !word.is_empty())
        {
            if word == "none" {
                continue;
            }
            let gate = Gate::WORDS
                .iter()
                .find(|(name, _)| *name == word)
                .map(|(_, gate)| *gate)
                .ok_or_else(|| {
                    let names: Vec<&str> = Gate::WORDS.iter().map(|(name, _)| *name).collect();
                    format!(
                        "--fail-on `{word}` is not one of: {}, none",
                        names.join(", ")
                    )
                })?;
            gates.insert(gate);
        }
        Ok(gates)
    }

    pub fn as_str(self) -> &'static str {
        Gate::WORDS
            .iter()
            .find(|(_, gate)| *gate == self)
            .map_or("", |(name, _)| name)
    }
}

impl Changelog {
    /// The gates of `gates` this changelog trips, each once.
    pub fn tripped(&self, gates: &BTreeSet<Gate>) -> Vec<Gate> {
        let strata = || self.suites.iter().flat_map(|suite| suite.strata.iter());
        gates
            .iter()
            .copied()
            .filter(|gate| match gate {
                Gate::Regress => strata().any(|stratum| !stratum.regressed.is_empty()),
                Gate::KnownFailure => {
                    strata().any(|stratum| !stratum.known_failures_added.is_empty())
                }
                Gate::Retired => strata()
                    .any(|stratum| !stratum.retired.is_empty() || !stratum.removed.is_empty()),
                Gate::Bumped => strata().any(|stratum| !stratum.bumped.is_empty()),
                Gate::Reaccepted => {
                    strata().any(|stratum| stratum.accepted.iter().any(|accepted| !accepted.first))
                }
                Gate::Context => {
                    !self.graders.is_empty()
                        || self.suites.iter().any(|suite| {
                            suite.model.is_some()
                                || suite.prompt.is_some()
                                || suite.grader.is_some()
                        })
                }
            })
            .collect()
    }
}
