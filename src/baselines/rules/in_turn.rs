//! The baseline rules of a check, one suite at a time: each suite's baseline (and the
//! base revision's) is read when its rules run and dropped after, so a check holds the
//! entries of the suites in hand instead of every suite's. Once every suite is accepted
//! the entries outweigh the rest of what a check keeps: on 200,000 accepted cases they
//! were 136 MB of a 250 MB peak.

use super::{check_suite, Scope, Side};
use crate::baselines::{load_baseline, BaselineDetail, SuiteBaseline};
use crate::cases::suite::SuiteModel;
use crate::error::Result;
use crate::finding::Finding;
use crate::source::ContentSource;
use rayon::prelude::*;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// Where each side's baselines are read from.
#[derive(Clone, Copy)]
pub struct BaselineSources<'a> {
    pub head: &'a dyn ContentSource,
    /// The base revision's snapshot, when there is a base.
    pub base: Option<&'a dyn ContentSource>,
}

/// What the rules found, and which of the base revision's baselines could not be read.
#[derive(Default)]
pub struct InTurn {
    pub findings: Vec<Finding>,
    /// `(suite, path)` of each baseline of the base revision that is there but is no
    /// baseline (malformed, a folder or a symlink): its entries were compared with nothing.
    pub unreadable_at_base: Vec<(String, String)>,
}

/// [`super::check`] for sides whose `baselines` were not loaded with them: each suite's
/// baseline is read from `sources` as its rules run (side by side, a suite per thread),
/// and dropped after. A base baseline that is the same object as the judged one is read
/// once. The base's suites that the judged side no longer has are read only to say
/// whether they can be.
pub fn check_in_turn(
    project: &Side<'_>,
    base: Option<&Side<'_>>,
    suites: &BTreeSet<String>,
    scope: Scope,
    sources: BaselineSources<'_>,
) -> Result<InTurn> {
    let judged: Vec<&SuiteModel> = project
        .suites
        .iter()
        .filter(|suite| suites.contains(&suite.name))
        .collect();
    let per_suite: Vec<Result<InTurn>> = judged
        .par_iter()
        .map(|suite| {
            let head = read(project, sources.head, &suite.name, None)?;
            let at_base = match (base, sources.base) {
                (Some(base), Some(base_source)) => {
                    read(base, base_source, &suite.name, head.as_ref())?
                }
                _ => None,
            };
            let unreadable_at_base = unreadable(&suite.name, at_base.as_ref());
            let (head, at_base) = (one(&suite.name, head), one(&suite.name, at_base));
            let side = Side {
                baselines: &head,
                ..*project
            };
            let base_side = base.map(|base| Side {
                baselines: &at_base,
                ..*base
            });
            Ok(InTurn {
                findings: check_suite(&side, base_side.as_ref(), suite, scope),
                unreadable_at_base,
            })
        })
        .collect();
    let judged_names: BTreeSet<&str> = judged.iter().map(|suite| suite.name.as_str()).collect();
    let gone_from_judged: Vec<Result<InTurn>> = match (base, sources.base) {
        (Some(base), Some(base_source)) => base
            .suites
            .par_iter()
            .filter(|suite| !judged_names.contains(suite.name.as_str()))
            .map(|suite| {
                let at_base = read(base, base_source, &suite.name, None)?;
                Ok(InTurn {
                    findings: Vec::new(),
                    unreadable_at_base: unreadable(&suite.name, at_base.as_ref()),
                })
            })
            .collect(),
        _ => Vec::new(),
    };
    let mut found = InTurn::default();
    // The first suite's error in config order, as when they were read with the project.
    for part in per_suite.into_iter().chain(gone_from_judged) {
        let part = part?;
        found.findings.extend(part.findings);
        found.unreadable_at_base.extend(part.unreadable_at_base);
    }
    Ok(found)
}

/// A baseline read, with the object it was read from when that stayed the same while it
/// was read.
struct Read {
    baseline: Arc<SuiteBaseline>,
    object: Option<gix::ObjectId>,
}

/// The baseline `side` configures for `suite`, read from `source`; the judged side's
/// (`judged`) when it is the same path, read from the object this one holds.
fn read(
    side: &Side<'_>,
    source: &dyn ContentSource,
    suite: &str,
    judged: Option<&Read>,
) -> Result<Option<Read>> {
    let Some(path) = side
        .config
        .suite(suite)
        .and_then(|config| config.baseline.as_deref())
    else {
        return Ok(None);
    };
    let before = source.object_id(path).ok().flatten();
    if let Some(judged) = judged {
        if judged.baseline.path == path && judged.object.is_some() && judged.object == before {
            return Ok(Some(Read {
                baseline: Arc::clone(&judged.baseline),
                object: before,
            }));
        }
    }
    let baseline = Arc::new(load_baseline(source, suite, path, BaselineDetail::Digests)?);
    let after = source.object_id(path).ok().flatten();
    Ok(Some(Read {
        baseline,
        object: before.filter(|_| after == before),
    }))
}

fn one(suite: &str, read: Option<Read>) -> BTreeMap<String, Arc<SuiteBaseline>> {
    read.map(|read| (suite.to_owned(), read.baseline))
        .into_iter()
        .collect()
}

fn unreadable(suite: &str, read: Option<&Read>) -> Vec<(String, String)> {
    read.map(|read| &read.baseline)
        .filter(|baseline| baseline.is_unreadable())
        .map(|baseline| (suite.to_owned(), baseline.path.clone()))
        .into_iter()
        .collect()
}
