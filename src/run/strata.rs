//! Pass rates per stratum, and the ceiling detector of the seeds' "A Perfect Pass Rate Is a
//! Blind Harness": a stratum too thin to tell luck from coverage, stretch cases that
//! all pass (the harness stopped measuring), and an easy case that fails (catastrophic).

use crate::finding::{Finding, Location, Subject};
use crate::rules::{RuleId, Severity};
use crate::run::results::CaseResult;
pub use crate::run::results::StratumRate;
use std::collections::BTreeMap;

/// The stratum of cases meant to fail for now, and of cases that must never fail.
pub const STRETCH: &str = "stretch";
pub const EASY: &str = "easy";

/// Rates per stratum name, over every suite.
pub fn rates(cases: &[CaseResult]) -> BTreeMap<String, StratumRate> {
    let mut rates: BTreeMap<String, StratumRate> = BTreeMap::new();
    for case in cases {
        let Some(stratum) = &case.stratum else {
            continue;
        };
        add(rates.entry(stratum.clone()).or_default(), case);
    }
    for rate in rates.values_mut() {
        finish(rate);
    }
    rates
}

fn add(rate: &mut StratumRate, case: &CaseResult) {
    rate.cases += 1;
    match case.status {
        status if status.is_passing() => rate.pass += 1,
        crate::run::results::Status::Error => {}
        _ => rate.fail += 1,
    }
}

fn finish(rate: &mut StratumRate) {
    let judged = rate.pass + rate.fail;
    rate.rate = (judged > 0).then(|| rate.pass as f64 / judged as f64);
}

/// The difficulty bands of the seed's harness; a suite whose strata include one of them is
/// banded, and the ceiling detector judges it. Strata by topic (`refund`, `tone`) are
/// only counted.
pub const BANDS: [&str; 3] = [EASY, "medium", STRETCH];

/// EL507–EL509 for each banded suite; a stretch stratum passing `stretch_high` or more
/// (`[policy] stretch_high`, the seed's `--stretch-high`) is too easy.
pub fn ceiling_findings(cases: &[CaseResult], stretch_high: f64) -> Vec<Finding> {
    let mut by_suite: BTreeMap<&str, BTreeMap<&str, (StratumRate, &CaseResult)>> = BTreeMap::new();
    for case in cases {
        let Some(stratum) = &case.stratum else {
            continue;
        };
        let entry = by_suite
            .entry(&case.suite)
            .or_default()
            .entry(stratum)
            .or_insert((StratumRate::default(), case));
        add(&mut entry.0, case);
    }
    let mut findings = Vec::new();
    by_suite.retain(|_, strata| strata.keys().any(|stratum| BANDS.contains(stratum)));
    for (suite, strata) in &mut by_suite {
        for (stratum, (rate, first)) in strata.iter_mut() {
            finish(rate);
            let at = Location::line(&first.file, first.line);
            if rate.cases < 2 {
                findings.push(
                    Finding::new(
                        RuleId::StratumTooSmall,
                        Subject::suite(suite),
                        format!(
                            "suite `{suite}`: stratum `{stratum}` holds {} case: too few to tell luck from coverage, so the suite cannot be green",
                            rate.cases
                        ),
                    )
                    .at(at.clone())
                    .discriminator(stratum),
                );
            }
            let Some(share) = rate.rate else { continue };
            if *stratum == STRETCH && share >= stretch_high {
                findings.push(
                    Finding::new(
                        RuleId::StretchTooEasy,
                        Subject::suite(suite),
                        format!(
                            "suite `{suite}`: stretch_too_easy: {}/{} stretch cases pass ({:.0} %, at least {:.0} % means they no longer stretch)",
                            rate.pass,
                            rate.pass + rate.fail,
                            share * 100.0,
                            stretch_high * 100.0
                        ),
                    )
                    .at(at.clone())
                    .discriminator(stratum),
                );
            }
            if *stratum == EASY && share < 1.0 {
                findings.push(
                    Finding::new(
                        RuleId::EasyFailed,
                        Subject::suite(suite),
                        format!(
                            "suite `{suite}`: {} of {} easy cases fail: the easy stratum must always pass",
                            rate.fail,
                            rate.pass + rate.fail
                        ),
                    )
                    .at(at)
                    .discriminator(stratum),
                );
            }
        }
        let all_pass = strata
            .values()
            .all(|(rate, _)| rate.fail == 0 && rate.pass > 0);
        if all_pass && !strata.contains_key(STRETCH) {
            let first = strata.values().next().map(|(_, case)| *case);
            let mut finding = Finding::new(
                RuleId::StretchTooEasy,
                Subject::suite(suite),
                format!(
                    "suite `{suite}` passes every case and has no `stretch` stratum: nothing shows it can still fail"
                ),
            )
            .severity(Severity::Note)
            .help("add cases in a `stretch` stratum that the current version fails on purpose, and accept them with `evalock accept --include-failing`")
            .discriminator("no-stretch");
            if let Some(first) = first {
                finding = finding.at(Location::line(&first.file, first.line));
            }
            findings.push(finding);
        }
    }
    findings
}
