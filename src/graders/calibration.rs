//! How far a grader agrees with people (the seeds' "The Overly Generous AI Judge"): over
//! completions a person labelled pass or fail, the grader's agreement, Cohen's κ, its
//! false-success rate (it passes what the person failed, the key figure) and its
//! false-failure rate, each with a 95 % interval. Below the seeds' floors (20 labels,
//! agreement 0.8, κ 0.6) the grader is uncalibrated.

use serde::Serialize;

/// The seeds' floors for a calibrated grader.
pub const MIN_LABELS: usize = 20;
pub const MIN_AGREEMENT: f64 = 0.8;
pub const MIN_KAPPA: f64 = 0.6;

/// Counts of (grader, person) verdicts: tp = both pass, fp = grader passes what the
/// person failed, tn = both fail, fn = grader fails what the person passed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Confusion {
    pub tp: usize,
    pub fp: usize,
    pub tn: usize,
    #[serde(rename = "fn")]
    pub fn_: usize,
}

impl Confusion {
    pub fn add(&mut self, grader_pass: bool, person_pass: bool) {
        match (grader_pass, person_pass) {
            (true, true) => self.tp += 1,
            (true, false) => self.fp += 1,
            (false, false) => self.tn += 1,
            (false, true) => self.fn_ += 1,
        }
    }

    pub fn n(&self) -> usize {
        self.tp + self.fp + self.tn + self.fn_
    }
}

/// A share and its 95 % interval; `None` when nothing was counted.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Rate {
    pub value: f64,
    pub low: f64,
    pub high: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Calibration {
    #[serde(flatten)]
    pub counts: Confusion,
    pub agreement: Option<Rate>,
    pub kappa: Option<Rate>,
    /// Grader passes among the completions a person failed.
    pub false_success: Option<Rate>,
    /// Grader failures among the completions a person passed.
    pub false_failure: Option<Rate>,
    /// Why the grader is not calibrated; empty when it is.
    pub below_floor: Vec<String>,
}

/// Wilson's score interval for `k` of `n` at 95 %.
pub fn wilson(k: usize, n: usize) -> Option<Rate> {
    if n == 0 {
        return None;
    }
    let (k, n, z) = (k as f64, n as f64, 1.96_f64);
    let p = k / n;
    let denominator = 1.0 + z * z / n;
    let center = (p + z * z / (2.0 * n)) / denominator;
    let half = z * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt() / denominator;
    Some(Rate {
        value: p,
        low: (center - half).max(0.0),
        high: (center + half).min(1.0),
    })
}

/// Cohen's κ; `None` when chance agreement is total (one verdict only, on both sides).
pub fn kappa(counts: &Confusion) -> Option<f64> {
    let n = counts.n() as f64;
    if n == 0.0 {
        return None;
    }
    let (tp, fp, tn, fn_) = (
        counts.tp as f64,
        counts.fp as f64,
        counts.tn as f64,
        counts.fn_ as f64,
    );
    let observed = (tp + tn) / n;
    let chance = ((tp + fp) * (tp + fn_) + (tn + fn_) * (tn + fp)) / (n * n);
    (chance < 1.0).then(|| (observed - chance) / (1.0 - chance))
}

/// Indices drawn with replacement by a small deterministic generator (xorshift64*): a
/// bootstrap gives the same interval on every machine.
pub struct Resampler(u64);

impl Resampler {
    pub fn new() -> Resampler {
        Resampler(0x9E37_79B9_7F4A_7C15)
    }

    /// An index below `bound` (at least 1).
    pub fn index(&mut self, bound: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) % bound.max(1) as u64) as usize
    }
}

impl Default for Resampler {
    fn default() -> Self {
        Resampler::new()
    }
}

/// The 2.5th and 97.5th percentiles of `values` (sorted here); `fallback` when empty.
pub fn percentile_interval(mut values: Vec<f64>, fallback: f64) -> (f64, f64) {
    values.sort_by(f64::total_cmp);
    let at = |share: f64| {
        values
            .get(((values.len() as f64 - 1.0) * share).round() as usize)
            .copied()
            .unwrap_or(fallback)
    };
    (at(0.025), at(0.975))
}

/// κ's 95 % interval by bootstrap over the labelled pairs, with a fixed seed so the
/// report is the same on every machine.
fn kappa_interval(pairs: &[(bool, bool)], point: f64) -> Rate {
    const RESAMPLES: usize = 2000;
    let mut resampler = Resampler::new();
    let values: Vec<f64> = (0..RESAMPLES)
        .filter_map(|_| {
            let mut counts = Confusion::default();
            for _ in 0..pairs.len() {
                let (grader, person) = pairs[resampler.index(pairs.len())];
                counts.add(grader, person);
            }
            kappa(&counts)
        })
        .collect();
    let (low, high) = percentile_interval(values, point);
    Rate {
        value: point,
        low,
        high,
    }
}

/// The calibration of a grader whose verdicts are counted in `counts` (as the lock
/// keeps them).
pub fn of_counts(counts: &Confusion) -> Calibration {
    let mut pairs = vec![(true, true); counts.tp];
    pairs.extend(vec![(true, false); counts.fp]);
    pairs.extend(vec![(false, false); counts.tn]);
    pairs.extend(vec![(false, true); counts.fn_]);
    calibrate(&pairs)
}

/// The calibration of a grader over `(grader passed, person passed)` pairs.
pub fn calibrate(pairs: &[(bool, bool)]) -> Calibration {
    let mut counts = Confusion::default();
    for (grader, person) in pairs {
        counts.add(*grader, *person);
    }
    let agreement = wilson(counts.tp + counts.tn, counts.n());
    let kappa_value = kappa(&counts);
    let mut below_floor = Vec::new();
    if counts.n() < MIN_LABELS {
        below_floor.push(format!("{} labels, fewer than {MIN_LABELS}", counts.n()));
    }
    if let Some(rate) = agreement.filter(|rate| rate.value < MIN_AGREEMENT) {
        below_floor.push(format!("agreement {:.2} below {MIN_AGREEMENT}", rate.value));
    }
    match kappa_value {
        Some(value) if value < MIN_KAPPA => {
            below_floor.push(format!("κ {value:.2} below {MIN_KAPPA}"))
        }
        None if counts.n() > 0 => below_floor.push(
            "κ undefined: grader and people each gave one verdict only; label both passing and failing completions".to_owned(),
        ),
        _ => {}
    }
    Calibration {
        counts,
        agreement,
        kappa: kappa_value.map(|point| kappa_interval(pairs, point)),
        false_success: wilson(counts.fp, counts.fp + counts.tn),
        false_failure: wilson(counts.fn_, counts.fn_ + counts.tp),
        below_floor,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(tp: usize, fp: usize, tn: usize, fn_: usize) -> Vec<(bool, bool)> {
        let mut out = vec![(true, true); tp];
        out.extend(vec![(true, false); fp]);
        out.extend(vec![(false, false); tn]);
        out.extend(vec![(false, true); fn_]);
        out
    }

    #[test]
    fn a_generous_grader_is_named_by_its_false_successes() {
        // The seed's toy arithmetic: 20 true successes, 80 failures; TPR 0.9, FPR 0.15.
        let report = calibrate(&pairs(18, 12, 68, 2));
        assert_eq!(report.counts.n(), 100);
        let false_success = report.false_success.unwrap();
        assert!((false_success.value - 0.15).abs() < 1e-9);
        assert!(false_success.low < 0.15 && false_success.high > 0.15);
        assert!((report.agreement.unwrap().value - 0.86).abs() < 1e-9);
        let kappa = report.kappa.unwrap();
        assert!((kappa.value - 0.6).abs() < 0.05, "{kappa:?}");
        assert!(kappa.low <= kappa.value && kappa.value <= kappa.high);
    }

    #[test]
    fn floors_name_what_is_missing() {
        let few = calibrate(&pairs(5, 0, 5, 0));
        assert_eq!(few.below_floor, ["10 labels, fewer than 20"]);
        let lenient = calibrate(&pairs(10, 10, 5, 0));
        assert!(lenient
            .below_floor
            .iter()
            .any(|why| why.starts_with("agreement 0.60")));
        assert!(lenient.below_floor.iter().any(|why| why.starts_with("κ ")));
        let one_sided = calibrate(&pairs(25, 0, 0, 0));
        assert!(one_sided.below_floor[0].starts_with("κ undefined"));
        let good = calibrate(&pairs(12, 1, 11, 1));
        assert!(good.below_floor.is_empty(), "{:?}", good.below_floor);
        assert_eq!(wilson(0, 0), None);
    }
}
