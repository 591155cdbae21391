//! Two reviewers' reports of the same benchmark, compared plant by plant: is A better than B,
//! or is the difference noise? The test is revcal-report's baseline comparison
//! ([`compare_with_baseline`]): McNemar's exact test on the plants one caught and the other
//! missed when both reports hold the same plants (Fisher's exact test otherwise), asked both
//! ways; the two-sided p-value is twice the smaller one-sided one (at most 1).

use std::collections::{BTreeMap, HashMap};

use revcal_calibrate::report::{PlantOutcome, PlantStatus, Report, compare_with_baseline};
use serde::Serialize;

use crate::BenchError;

/// One reviewer's side of a comparison.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Side {
    /// Plants it caught (plant-runs with trials).
    pub caught: usize,
    /// Valid plants it was measured on.
    pub total: usize,
    /// caught / total.
    pub recall: f64,
}

/// The comparison over one set of plants (all of them, or one kind).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PairedFigures {
    /// `mcnemar` (both reports hold the same valid plants: paired) or `fisher`.
    pub test: String,
    /// Plants valid in both reports.
    pub shared_plants: usize,
    /// Reviewer A.
    pub a: Side,
    /// Reviewer B.
    pub b: Side,
    /// Shared plants A caught and B missed (discordant pairs).
    pub a_only: usize,
    /// Shared plants B caught and A missed (discordant pairs).
    pub b_only: usize,
    /// The one-sided p-value of "A is better than B".
    pub p_a_better: f64,
    /// The one-sided p-value of "B is better than A".
    pub p_b_better: f64,
    /// The two-sided p-value: twice the smaller one-sided one, at most 1.
    pub p_value: f64,
    /// Plants valid in one report and not in the other (excluded, or absent).
    pub different_plants: usize,
}

/// Two reports compared.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Comparison {
    /// The suite both ran (`sha256:…`).
    pub suite: String,
    /// The benchmark both ran, when their reports name it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub benchmark: Option<String>,
    /// Reviewer A, as its report names it.
    pub reviewer_a: Option<String>,
    /// Reviewer B, as its report names it.
    pub reviewer_b: Option<String>,
    /// `all` plants, and each kind (`real`, `synthetic`) either report holds.
    pub kinds: BTreeMap<String, PairedFigures>,
}

/// What identifies a plant in both reports: its entry, file, line and lines.
fn key(plant: &PlantOutcome) -> (Option<&str>, &str, u32, &str, &str) {
    (plant.entry.as_deref(), &plant.file, plant.line, &plant.original, &plant.mutated)
}

/// Each valid plant of `report`, and whether it was caught.
fn valid(report: &Report) -> HashMap<(Option<&str>, &str, u32, &str, &str), bool> {
    report
        .plants
        .iter()
        .filter(|plant| plant.status != PlantStatus::Excluded)
        .map(|plant| (key(plant), plant.status == PlantStatus::Caught))
        .collect()
}

/// `report` with only the plants `keep` keeps.
fn only(report: &Report, keep: &dyn Fn(&PlantOutcome) -> bool) -> Report {
    let mut kept = report.clone();
    kept.plants.retain(|plant| keep(plant));
    kept
}

/// The comparison of `a` and `b` over their plants.
fn paired(a: &Report, b: &Report) -> PairedFigures {
    // `compare_with_baseline(baseline, now)` gives the p-value of "now dropped below
    // baseline": with A as the baseline, that A is better.
    let a_better = compare_with_baseline(a, b, 0.05);
    let b_better = compare_with_baseline(b, a, 0.05);
    let (in_a, in_b) = (valid(a), valid(b));
    let (mut a_only, mut b_only) = (0, 0);
    for (plant, caught_a) in &in_a {
        if let Some(caught_b) = in_b.get(plant) {
            a_only += usize::from(*caught_a && !caught_b);
            b_only += usize::from(!caught_a && *caught_b);
        }
    }
    let side = |caught: usize, total: usize| Side {
        caught,
        total,
        recall: if total == 0 { 0.0 } else { caught as f64 / total as f64 },
    };
    let overall = &a_better.overall;
    let (p_a_better, p_b_better) = (a_better.overall.p_value, b_better.overall.p_value);
    PairedFigures {
        test: a_better.test.clone(),
        shared_plants: a_better.shared_plants,
        a: side(overall.caught_before, overall.total_before),
        b: side(overall.caught_now, overall.total_now),
        a_only,
        b_only,
        p_a_better,
        p_b_better,
        p_value: (2.0 * p_a_better.min(p_b_better)).min(1.0),
        different_plants: a_better.different_plants.len(),
    }
}

/// Compares reviewer A's report `a` with reviewer B's `b`: both must be reports of the same
/// suite (the same benchmark over the same languages), else they measure different things
/// and are refused.
pub fn compare(a: &Report, b: &Report) -> Result<Comparison, BenchError> {
    let (Some(suite_a), Some(suite_b)) = (&a.suite, &b.suite) else {
        return Err(BenchError::Data {
            message:
                "both reports must be reports of a suite (`revcal bench standard --json`, or --save-baseline)"
                    .into(),
        });
    };
    if suite_a.hash != suite_b.hash {
        return Err(BenchError::Data {
            message: format!(
                "the reports are of different suites ({} and {}): another benchmark, another version of it, or another --language selection",
                suite_a.hash, suite_b.hash
            ),
        });
    }
    let mut kinds = BTreeMap::new();
    kinds.insert("all".to_owned(), paired(a, b));
    let mut names: Vec<&str> = a.plants.iter().chain(&b.plants).map(|plant| plant.kind.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    for kind in names {
        let keep = |plant: &PlantOutcome| plant.kind == kind;
        kinds.insert(kind.to_owned(), paired(&only(a, &keep), &only(b, &keep)));
    }
    let benchmark = |report: &Report| report.benchmark.as_ref().map(|figures| figures.name.clone());
    Ok(Comparison {
        suite: suite_a.hash.clone(),
        benchmark: benchmark(a).or_else(|| benchmark(b)),
        reviewer_a: a.reviewer.clone(),
        reviewer_b: b.reviewer.clone(),
        kinds,
    })
}
