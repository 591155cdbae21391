//! The figures of a calibration record, recomputed from its rounds: what "flagged" means,
//! and the `summary` a reader checks. A record whose stated figures differ from its rounds'
//! is refused, so a status flipped by hand (or a figure edited) does not go unnoticed
//! unless every figure that depends on it is edited to match.

use super::{CalibrationRecord, Finding, PlantStatus, RecordError, Round, TouchedLines, Trial};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// How far (in lines) a finding may be from a touched line and still locate it: the
/// calibration scorer's rule for locating a plant (same file name, line within +-3).
pub const LOCATE_TOLERANCE: u64 = 3;

/// The figures of a calibration record.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Summary {
    /// Rounds that carried a plant.
    pub planted_rounds: u64,
    /// Rounds that did not (clean changes).
    pub clean_rounds: u64,
    /// Reviews: every trial of every round (one request, review and outcome each).
    pub reviews: u64,
    /// Plants, over all rounds.
    pub plants: u64,
    /// Plants caught, counted once per trial that caught them.
    pub caught: u64,
    /// Trials of planted rounds the reviewer flagged (REQUEST_CHANGES on a bug).
    pub flagged_planted: u64,
    /// Trials of clean rounds the reviewer flagged (false alarms).
    pub flagged_clean: u64,
    /// By bug category: plants caught and plants shown, both counted per trial.
    pub per_category: BTreeMap<String, CategoryFigures>,
}

/// One category's figures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CategoryFigures {
    /// Plants of the category caught, once per trial.
    pub caught: u64,
    /// Plants of the category, once per trial.
    pub total: u64,
}

impl Summary {
    /// The figures of `rounds`.
    pub fn of(rounds: &[Round]) -> Summary {
        let mut summary = Summary::default();
        for round in rounds {
            let trials = round.trials.len() as u64;
            summary.reviews += trials;
            summary.plants += round.plants.len() as u64;
            if round.is_planted() {
                summary.planted_rounds += 1;
            } else {
                summary.clean_rounds += 1;
            }
            for trial in &round.trials {
                let flagged = flagged(round, trial);
                match (round.is_planted(), flagged) {
                    (true, true) => summary.flagged_planted += 1,
                    (false, true) => summary.flagged_clean += 1,
                    _ => {}
                }
                for (plant, status) in round.plants.iter().zip(&trial.statuses) {
                    let category = summary.per_category.entry(plant.category.clone()).or_default();
                    category.total += 1;
                    if *status == PlantStatus::Caught {
                        category.caught += 1;
                        summary.caught += 1;
                    }
                }
            }
        }
        summary
    }
}

/// Whether the reviewer flagged the round's change in `trial`: a planted round when it
/// caught at least one of its plants (a review that only points elsewhere approved buggy
/// code); a clean round when a finding locates a line the change touched.
pub fn flagged(round: &Round, trial: &Trial) -> bool {
    if round.is_planted() {
        trial.statuses.contains(&PlantStatus::Caught)
    } else {
        trial.findings.iter().any(|finding| round.touched.iter().any(|touched| locates(finding, touched)))
    }
}

/// True when `finding` locates a line of `touched`: the same file name (the scorer compares
/// base names, since reviewers write paths many ways) and a line within
/// [`LOCATE_TOLERANCE`] of the touched lines.
pub fn locates(finding: &Finding, touched: &TouchedLines) -> bool {
    base_name(&finding.file) == base_name(&touched.file)
        && finding.line.saturating_add(LOCATE_TOLERANCE) >= touched.first
        && finding.line <= touched.last.saturating_add(LOCATE_TOLERANCE)
}

fn base_name(path: &str) -> &str {
    path.rsplit(['/', '\\']).next().unwrap_or(path)
}

impl CalibrationRecord {
    /// Refuses a record whose stated figures are not what its rounds give.
    pub(super) fn check_figures(&self) -> Result<(), RecordError> {
        for (index, round) in self.rounds.iter().enumerate() {
            for (number, trial) in round.trials.iter().enumerate() {
                let recomputed = flagged(round, trial);
                if trial.flagged != recomputed {
                    let why = match (round.is_planted(), recomputed) {
                        (true, true) => "a plant of the round is caught in this trial",
                        (true, false) => "no plant of the round is caught in this trial",
                        (false, true) => "a finding locates a line the clean change touched",
                        (false, false) => "no finding locates a line the clean change touched",
                    };
                    return Err(RecordError::Figure {
                        field: format!("rounds[{index}].trials[{number}].flagged"),
                        stated: trial.flagged.to_string(),
                        recomputed: format!("{recomputed} ({why})"),
                    });
                }
            }
        }
        let recomputed = Summary::of(&self.rounds);
        let stated = &self.summary;
        let counts = [
            ("planted_rounds", stated.planted_rounds, recomputed.planted_rounds),
            ("clean_rounds", stated.clean_rounds, recomputed.clean_rounds),
            ("reviews", stated.reviews, recomputed.reviews),
            ("plants", stated.plants, recomputed.plants),
            ("caught", stated.caught, recomputed.caught),
            ("flagged_planted", stated.flagged_planted, recomputed.flagged_planted),
            ("flagged_clean", stated.flagged_clean, recomputed.flagged_clean),
        ];
        if let Some((name, stated, recomputed)) =
            counts.iter().find(|(_, stated, recomputed)| stated != recomputed)
        {
            return Err(RecordError::Figure {
                field: format!("summary.{name}"),
                stated: stated.to_string(),
                recomputed: recomputed.to_string(),
            });
        }
        if stated.per_category != recomputed.per_category {
            let show = |figures: &BTreeMap<String, CategoryFigures>| {
                figures
                    .iter()
                    .map(|(category, f)| format!("{category} {}/{}", f.caught, f.total))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            return Err(RecordError::Figure {
                field: "summary.per_category".into(),
                stated: format!("[{}]", show(&stated.per_category)),
                recomputed: format!("[{}]", show(&recomputed.per_category)),
            });
        }
        Ok(())
    }
}
