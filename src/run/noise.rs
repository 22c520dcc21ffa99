//! The noise floor of a suite (the seeds' "Calibrate the Noise Floor of Your Eval
//! Harness"): `run --repeat N` runs the same version N times. A case whose verdict flips
//! between repeats more often than `flaky_max` is flaky, and its verdict does not move the
//! gate until it is fixed; the A/A difference of the first two repeats, bootstrapped over
//! cases, bounds the smallest pass-rate change the suite can tell from noise.

use crate::graders::calibration::{percentile_interval, Resampler};
use crate::run::results::{CaseResult, Status};
use std::collections::BTreeMap;

pub use crate::run::results::SuiteNoise;

/// A case's verdict in one repeat: passing or not; an ERROR has none.
fn verdict(case: &CaseResult) -> Option<bool> {
    (case.status != Status::Error).then(|| case.status.is_passing())
}

/// Each case's flip rate over the repeats: the share of repeats whose verdict is not the
/// case's most common one.
pub fn flip_rates(repeats: &[Vec<CaseResult>]) -> BTreeMap<(String, String), f64> {
    let mut verdicts: BTreeMap<(String, String), Vec<bool>> = BTreeMap::new();
    for repeat in repeats {
        for case in repeat {
            if let Some(pass) = verdict(case) {
                verdicts
                    .entry((case.suite.clone(), case.case_id.clone()))
                    .or_default()
                    .push(pass);
            }
        }
    }
    verdicts
        .into_iter()
        .map(|(key, verdicts)| {
            let passes = verdicts.iter().filter(|pass| **pass).count();
            let minority = passes.min(verdicts.len() - passes);
            (key, minority as f64 / verdicts.len() as f64)
        })
        .collect()
}

/// Per suite, the A/A difference of two repeats, bootstrapped over the cases both judged.
pub fn noise_floor(
    first: &[CaseResult],
    second: &[CaseResult],
    repeats: usize,
    flaky: &BTreeMap<String, usize>,
) -> BTreeMap<String, SuiteNoise> {
    const RESAMPLES: usize = 2000;
    let mut paired: BTreeMap<&str, Vec<(f64, f64)>> = BTreeMap::new();
    let by_key: BTreeMap<(&str, &str), &CaseResult> = second
        .iter()
        .map(|case| ((case.suite.as_str(), case.case_id.as_str()), case))
        .collect();
    for case in first {
        let Some(other) = by_key.get(&(case.suite.as_str(), case.case_id.as_str())) else {
            continue;
        };
        if let (Some(a), Some(b)) = (verdict(case), verdict(other)) {
            paired
                .entry(&case.suite)
                .or_default()
                .push((f64::from(u8::from(a)), f64::from(u8::from(b))));
        }
    }
    paired
        .into_iter()
        .map(|(suite, pairs)| {
            let mean = |pick: &[(f64, f64)]| {
                let n = pick.len() as f64;
                100.0 * pick.iter().map(|(a, b)| a - b).sum::<f64>() / n
            };
            let delta = mean(&pairs);
            let mut resampler = Resampler::new();
            let deltas: Vec<f64> = (0..RESAMPLES)
                .map(|_| {
                    let pick: Vec<(f64, f64)> = (0..pairs.len())
                        .map(|_| pairs[resampler.index(pairs.len())])
                        .collect();
                    mean(&pick)
                })
                .collect();
            let (low, high) = percentile_interval(deltas, delta);
            (
                suite.to_owned(),
                SuiteNoise {
                    repeats,
                    cases: pairs.len(),
                    delta,
                    low,
                    high,
                    mde: low.abs().max(high.abs()),
                    flaky: flaky.get(suite).copied().unwrap_or(0),
                },
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn case(id: &str, status: Status) -> CaseResult {
        serde_json::from_value(serde_json::json!({
            "suite": "s", "case_id": id, "case_version": 1, "file": "f.jsonl", "line": 1, "end_line": 1,
            "status": status, "reasons": [], "digest": null, "completion": "x",
            "baseline": "none", "baseline_digest": null,
            "context": {"case": format!("sha256:{}", "0".repeat(64)), "grader": "builtin@1", "normalizer": "exact"},
            "agreement": 1.0, "duration_ms": 1, "samples": []
        }))
        .unwrap()
    }

    #[test]
    fn a_case_that_flips_is_measured_and_a_steady_one_is_not() {
        let repeats = vec![
            vec![case("steady", Status::Pass), case("coin", Status::Pass)],
            vec![case("steady", Status::Pass), case("coin", Status::Fail)],
            vec![case("steady", Status::Pass), case("coin", Status::Pass)],
        ];
        let rates = flip_rates(&repeats);
        assert_eq!(rates[&("s".to_owned(), "steady".to_owned())], 0.0);
        assert!((rates[&("s".to_owned(), "coin".to_owned())] - 1.0 / 3.0).abs() < 1e-9);
    }

    #[test]
    fn identical_repeats_have_no_noise_and_a_coin_has_some() {
        let steady: Vec<CaseResult> = (0..20)
            .map(|i| case(&format!("c{i}"), Status::Pass))
            .collect();
        let floor = noise_floor(&steady, &steady, 2, &BTreeMap::new());
        assert_eq!(floor["s"].mde, 0.0);
        let flipped: Vec<CaseResult> = (0..20)
            .map(|i| {
                case(
                    &format!("c{i}"),
                    if i % 4 == 0 {
                        Status::Fail
                    } else {
                        Status::Pass
                    },
                )
            })
            .collect();
        let floor = noise_floor(&steady, &flipped, 2, &BTreeMap::new());
        assert_eq!(floor["s"].delta, 25.0);
        assert!(
            floor["s"].mde >= 25.0 && floor["s"].low <= 25.0,
            "{:?}",
            floor["s"]
        );
    }
}
