//! From what a run measured to the report: each plant and each trial are recorded with the
//! report builder (trial scores index the valid plants, the report all of them), and the
//! report module computes the numbers.

use crate::flow::{Exclusion, Measurement};
use crate::report::{Gates, JudgeChecks, Report, ReportError, TrialRecord};
use crate::scoring::FindingOutcome;

/// The report of a measurement.
pub(crate) fn report(measurement: &Measurement) -> Result<Report, ReportError> {
    let gates = Gates { min_recall: measurement.min_recall, min_precision: measurement.min_precision };
    let mut builder = Report::builder(measurement.commit.clone(), measurement.scorer.as_str(), gates)
        .trustworthy(measurement.scorer.trustworthy());
    for ((plant, excluded), reason) in
        measurement.plants.iter().zip(&measurement.excluded).zip(&measurement.excluded_reasons)
    {
        builder = match (excluded, reason) {
            (true, Some(Exclusion::Runaway(reason))) => builder.runaway_plant(plant.clone(), reason.clone()),
            (true, Some(Exclusion::Build(reason))) => {
                builder.unbuildable_plant(plant.clone(), reason.clone())
            }
            (true, None) => builder.excluded_plant(plant.clone()),
            (false, _) => builder.plant(plant.clone()),
        };
    }
    // Trial scores index the valid plants; the report indexes all of them.
    let valid_to_all: Vec<usize> =
        measurement.excluded.iter().enumerate().filter(|(_, excluded)| !**excluded).map(|(i, _)| i).collect();
    let to_all = |valid_index: usize| valid_to_all.get(valid_index).copied();
    for trial in &measurement.trials {
        let mut record = TrialRecord::new(Some(trial.run.exit_code));
        for (valid_index, caught_by) in trial.scored.caught_by.iter().enumerate() {
            if let (Some(finding), Some(index)) = (caught_by, to_all(valid_index)) {
                let text = trial.parsed.findings.get(*finding).map(|f| f.text.clone()).unwrap_or_default();
                record.caught_by.insert(index, text);
                if trial.scored.by_timeout.get(valid_index).copied().unwrap_or(false) {
                    record.caught_by_timeout.insert(index);
                }
            }
        }
        record.findings = trial
            .scored
            .findings
            .iter()
            .map(|outcome| match *outcome {
                FindingOutcome::TruePositive(valid_index) => {
                    FindingOutcome::TruePositive(to_all(valid_index).unwrap_or(valid_index))
                }
                other => other,
            })
            .collect();
        record.judge_checks =
            JudgeChecks { repro_verified: trial.judge_checks.0, judge_agreed: trial.judge_checks.1 };
        builder = builder.trial(record);
    }
    builder
        .controls(measurement.controls.clone())
        .judge_usage(measurement.judge_usage.clone())
        .judge_errors(measurement.judge_errors)
        .repro_sandbox(measurement.repro_sandbox.clone())
        .build()
}
