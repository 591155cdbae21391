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
pub fn wilson_interval(successes: usize, trials: usize) -> Option<Interval> {
    if trials == 0 {
        return None;
    }
    let n = trials as f64;
    let p = successes.min(trials) as f64 / n;
    let z2 = Z_95 * Z_95;
    let denominator = 1.0 + z2 / n;
    let centre = (p + z2 / (2.0 * n)) / denominator;
    let half_width = Z_95 * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt() / denominator;
    Some(Interval { low: (centre - half_width).max(0.0), high: (centre + half_width).min(1.0) })
}
