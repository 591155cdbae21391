//! The figures of a calibration record checked against its rounds (what "flagged" means and
//! how the `summary` is counted are revcal-record's: [`flagged`], [`Summary::of`]). A record
//! whose stated figures differ from its rounds' is refused, so a status flipped by hand (or a
//! figure edited) does not go unnoticed unless every figure that depends on it is edited to
//! match.

use super::{CalibrationRecord, CategoryFigures, ChangedFiles, RecordError, Summary, flagged};
use std::collections::BTreeMap;

impl CalibrationRecord {
    /// Refuses a record whose stated figures are not what its rounds give.
    pub(super) fn check_figures(&self) -> Result<(), RecordError> {
        for (index, round) in self.rounds.iter().enumerate() {
            let files = ChangedFiles::of(&self.rounds, round);
            for (number, trial) in round.trials.iter().enumerate() {
                let recomputed = flagged(round, trial, &files);
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
