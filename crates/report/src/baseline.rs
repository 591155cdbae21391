//! Comparing a report with an earlier one of the same reviewer: did recall drop, overall or in
//! a category, by more than chance explains?
//!
//! The unit is the plant, never plant x trial (a plant seen in three trials is still one bug).
//! When both reports hold the same plants (same file, line, original and mutated line), the
//! test is paired: an exact one-sided McNemar test on the plants caught before and missed now
//! against those missed before and caught now. Otherwise the two samples are independent and
//! the test is Fisher's exact test, one-sided, on caught / valid plants. A category is compared
//! at `alpha / k` for `k` categories compared (Bonferroni), the overall recall at `alpha`.

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};

use crate::{PlantOutcome, PlantStatus, Report};

/// The comparison with a baseline report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BaselineComparison {
    /// `mcnemar` (the same plants, paired) or `fisher` (different plants).
    pub test: String,
    /// The significance level of the overall test.
    pub alpha: f64,
    /// Plants found in both reports (the pairs of the paired test).
    pub shared_plants: usize,
    /// The overall recall, before and now.
    pub overall: Change,
    /// Each category present in both reports.
    pub per_category: BTreeMap<String, Change>,
    /// The categories whose recall dropped significantly (at `alpha / k`).
    pub regressed: Vec<String>,
    /// True when the overall recall or a category's dropped significantly.
    pub regression: bool,
    /// The plants counted in one report and not in the other, and why: the two runs were
    /// not measured on quite the same plants.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub different_plants: Vec<PlantDifference>,
}

/// A plant counted in one of two reports and not in the other.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PlantDifference {
    /// The plant's file.
    pub file: String,
    /// Its line.
    pub line: u32,
    /// What the first report says of it: `caught`, `missed`, `excluded (REASON)` or `absent`.
    pub before: String,
    /// What the second report says of it, in the same words.
    pub now: String,
}

/// The plants valid (counted) in one of `before` and `now` and excluded from, or absent in,
/// the other, each with what each report says of it: why two reviewers compared side by side
/// (or a run and its baseline) were not measured on the same plants.
pub fn plant_differences(before: &Report, now: &Report) -> Vec<PlantDifference> {
    let key = |plant: &PlantOutcome| {
        (plant.entry.clone(), plant.file.clone(), plant.line, plant.original.clone(), plant.mutated.clone())
    };
    let words = |plant: Option<&PlantOutcome>| match plant {
        None => "absent".to_owned(),
        Some(plant) => match (plant.status, &plant.excluded_reason) {
            (PlantStatus::Caught, _) => "caught".to_owned(),
            (PlantStatus::Missed, _) => "missed".to_owned(),
            (PlantStatus::Excluded, Some(reason)) => format!("excluded ({reason})"),
            (PlantStatus::Excluded, None) => "excluded (equivalent)".to_owned(),
        },
    };
    let mut keys: Vec<_> = before.plants.iter().chain(&now.plants).map(key).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter_map(|wanted| {
            let find = |report: &Report| report.plants.iter().find(|plant| key(plant) == wanted).cloned();
            let (was, is) = (find(before), find(now));
            let counted = |plant: &Option<PlantOutcome>| {
                plant.as_ref().is_some_and(|p| p.status != PlantStatus::Excluded)
            };
            (counted(&was) != counted(&is)).then(|| PlantDifference {
                file: wanted.1.clone(),
                line: wanted.2,
                before: words(was.as_ref()),
                now: words(is.as_ref()),
            })
        })
        .collect()
}

/// Recall before and now, and the one-sided p-value of "it dropped".
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Change {
    /// Plants caught in the baseline.
    pub caught_before: usize,
    /// Valid plants in the baseline.
    pub total_before: usize,
    /// Plants caught now.
    pub caught_now: usize,
    /// Valid plants now.
    pub total_now: usize,
    /// The probability of a drop at least this large if nothing changed.
    pub p_value: f64,
    /// `p_value` below the level this change was tested at.
    pub dropped: bool,
}

/// What identifies a plant across two runs: its suite entry (none outside a suite), file,
/// line, original and mutated line.
type PlantKey<'a> = (Option<&'a str>, &'a str, u32, &'a str, &'a str);

/// Each valid plant of `report`: caught or not, and its category.
fn statuses(report: &Report) -> HashMap<PlantKey<'_>, (bool, String)> {
    report
        .plants
        .iter()
        .filter(|plant| plant.status != PlantStatus::Excluded)
        .map(|plant| {
            let key = (
                plant.entry.as_deref(),
                plant.file.as_str(),
                plant.line,
                plant.original.as_str(),
                plant.mutated.as_str(),
            );
            (key, (plant.status == PlantStatus::Caught, plant.category.clone()))
        })
        .collect()
}

/// Compares `now` with `baseline` at significance level `alpha` (see the module's docs).
pub fn compare_with_baseline(baseline: &Report, now: &Report, alpha: f64) -> BaselineComparison {
    let (before, after) = (statuses(baseline), statuses(now));
    let shared: Vec<(bool, bool, &str)> = before
        .iter()
        .filter_map(|(key, (was, category))| after.get(key).map(|(is, _)| (*was, *is, category.as_str())))
        .collect();
    let paired = !shared.is_empty() && shared.len() == before.len() && shared.len() == after.len();

    let change = |category: Option<&str>, level: f64| -> Change {
        let in_category = |plant_category: &str| category.is_none_or(|c| c == plant_category);
        let count = |statuses: &HashMap<PlantKey<'_>, (bool, String)>| {
            let plants = statuses.values().filter(|(_, c)| in_category(c));
            let (caught, total) =
                plants.fold((0, 0), |(caught, total), (was, _)| (caught + usize::from(*was), total + 1));
            (caught, total)
        };
        let ((caught_before, total_before), (caught_now, total_now)) = (count(&before), count(&after));
        let p_value = if paired {
            let (mut lost, mut gained) = (0, 0);
            for (was, is, plant_category) in &shared {
                if in_category(plant_category) {
                    lost += usize::from(*was && !is);
                    gained += usize::from(!was && *is);
                }
            }
            binomial_upper_tail(lost, lost + gained)
        } else {
            fisher_lower_tail(caught_now, total_now, caught_before, total_before)
        };
        Change { caught_before, total_before, caught_now, total_now, p_value, dropped: p_value < level }
    };

    let categories: Vec<String> = {
        let mut names: Vec<String> = now
            .per_category
            .keys()
            .filter(|name| baseline.per_category.contains_key(*name))
            .cloned()
            .collect();
        names.sort();
        names
    };
    let category_level = alpha / categories.len().max(1) as f64;
    let per_category: BTreeMap<String, Change> =
        categories.iter().map(|name| (name.clone(), change(Some(name), category_level))).collect();
    let regressed: Vec<String> =
        per_category.iter().filter(|(_, change)| change.dropped).map(|(name, _)| name.clone()).collect();
    let overall = change(None, alpha);
    BaselineComparison {
        test: if paired { "mcnemar" } else { "fisher" }.to_owned(),
        alpha,
        shared_plants: shared.len(),
        regression: overall.dropped || !regressed.is_empty(),
        overall,
        per_category,
        regressed,
        different_plants: plant_differences(baseline, now),
    }
}

/// P(X >= k) for X ~ Binomial(n, 1/2): the exact one-sided McNemar p-value of `k` plants lost
/// among `n` that changed. 1 when nothing changed.
fn binomial_upper_tail(k: usize, n: usize) -> f64 {
    if n == 0 {
        return 1.0;
    }
    let half_n = (n as f64) * std::f64::consts::LN_2;
    (k..=n).map(|i| (ln_choose(n, i) - half_n).exp()).sum::<f64>().min(1.0)
}

/// Fisher's exact test, one-sided: the probability that `now` catches `caught_now` of
/// `total_now` plants or fewer, when both samples share one catch rate (the hypergeometric
/// lower tail given the total caught).
fn fisher_lower_tail(caught_now: usize, total_now: usize, caught_before: usize, total_before: usize) -> f64 {
    let (population, successes) = (total_now + total_before, caught_now + caught_before);
    if total_now == 0 || total_before == 0 {
        return 1.0;
    }
    let low = successes.saturating_sub(total_before);
    let denominator = ln_choose(population, total_now);
    (low..=caught_now)
        .map(|x| {
            (ln_choose(successes, x) + ln_choose(population - successes, total_now - x) - denominator).exp()
        })
        .sum::<f64>()
        .min(1.0)
}

/// ln(n choose k), exactly enough for the sample sizes of a calibration.
fn ln_choose(n: usize, k: usize) -> f64 {
    if k > n {
        return f64::NEG_INFINITY;
    }
    let k = k.min(n - k);
    (0..k).map(|i| ((n - i) as f64).ln() - ((i + 1) as f64).ln()).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_tails_match_hand_computation() {
        // 5 lost, 0 gained: 0.5^5.
        assert!((binomial_upper_tail(5, 5) - 0.03125).abs() < 1e-12);
        // 3 lost of 4 changed: (4 + 1) / 16.
        assert!((binomial_upper_tail(3, 4) - 5.0 / 16.0).abs() < 1e-12);
        assert_eq!(binomial_upper_tail(0, 0), 1.0);
        // 8/8 before, 2/8 now: P = C(10,2) C(6,6) / C(16,8) + C(10,1)... computed exactly:
        // hypergeometric lower tail at 2 with N=16, K=10, n=8.
        let expected = (0..=2usize)
            .map(|x| (ln_choose(10, x) + ln_choose(6, 8 - x) - ln_choose(16, 8)).exp())
            .sum::<f64>();
        assert!((fisher_lower_tail(2, 8, 8, 8) - expected).abs() < 1e-12);
        assert!((expected - 0.003_496).abs() < 1e-5, "{expected}");
        // The same rate is no evidence of a drop.
        assert!(fisher_lower_tail(4, 8, 4, 8) > 0.5);
    }
}
