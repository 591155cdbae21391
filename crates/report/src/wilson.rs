//! The Wilson score interval: a confidence interval for a proportion that stays inside [0, 1]
//! and behaves at 0/n and n/n, where the normal approximation does not.

use serde::{Deserialize, Serialize};

/// The two-sided 95% normal quantile.
const Z_95: f64 = 1.959_963_984_540_054;

/// A confidence interval for a proportion.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    /// Lower bound.
    pub low: f64,
    /// Upper bound.
    pub high: f64,
}

/// The Wilson 95% interval of `successes` out of `trials`; `None` when there are no trials.
#[cfg(test)]
pub(crate) fn wilson_interval(successes: usize, trials: usize) -> Option<Interval> {
    if trials == 0 {
        return None;
    }
    wilson_interval_of_mean(successes.min(trials) as f64 / trials as f64, trials)
}

/// The Wilson 95% interval of a mean `p` of `n` rates in [0, 1] (the share of trials in which
/// each plant was caught). A rate in [0, 1] with mean `p` has a variance of at most
/// `p (1 - p)`, so this is never narrower than the interval of the mean clustered by plant;
/// with one trial the rates are 0 or 1 and it is the usual Wilson interval.
pub fn wilson_interval_of_mean(p: f64, n: usize) -> Option<Interval> {
    if n == 0 || !p.is_finite() {
        return None;
    }
    let p = p.clamp(0.0, 1.0);
    let n = n as f64;
    let z2 = Z_95 * Z_95;
    let denominator = 1.0 + z2 / n;
    let centre = (p + z2 / (2.0 * n)) / denominator;
    let half_width = Z_95 * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt() / denominator;
    // At 0 and at 1 the bound is exactly 0 (or 1); the subtraction leaves rounding crumbs
    // (5.6e-17) that a report must not show as a lower bound above nothing caught.
    let low = if p == 0.0 { 0.0 } else { (centre - half_width).max(0.0) };
    let high = if p == 1.0 { 1.0 } else { (centre + half_width).min(1.0) };
    Some(Interval { low, high })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wilson_interval_matches_published_values() {
        let close = |a: f64, b: f64| (a - b).abs() < 1e-4;
        for (k, n, low, high) in [
            (8, 10, 0.4902, 0.9433),
            (0, 10, 0.0, 0.2775),
            (10, 10, 0.7225, 1.0),
            (1, 8, 0.0224, 0.4709),
            (5, 10, 0.2366, 0.7634),
        ] {
            let interval = wilson_interval(k, n).unwrap();
            assert!(close(interval.low, low) && close(interval.high, high), "{k}/{n}: {interval:?}");
        }
        assert_eq!(wilson_interval(0, 0), None);
        // Eight plants each caught in every one of three trials: the interval of eight plants.
        assert_eq!(wilson_interval_of_mean(24.0 / 24.0, 8), wilson_interval(8, 8));
        assert!(wilson_interval_of_mean(0.5, 8).unwrap().low < wilson_interval(12, 24).unwrap().low);
    }

    #[test]
    fn nothing_caught_has_a_lower_bound_of_exactly_zero_and_everything_an_upper_of_one() {
        for n in 1..200 {
            assert_eq!(wilson_interval(0, n).unwrap().low, 0.0, "0 of {n}");
            assert_eq!(wilson_interval(n, n).unwrap().high, 1.0, "{n} of {n}");
        }
    }
}
