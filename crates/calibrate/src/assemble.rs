//! From what a run measured to the report: plants become [`PlantRecord`]s, each trial a
//! [`TrialRecord`], the controls their outcomes; the report module computes the numbers.

use crate::flow::Measurement;
use crate::report::{
    ControlOutcome, Controls, FindingClass, Gates, JudgeChecks, PlantRecord, Report, ReportError, TrialRecord,
};
use crate::scoring::{FindingOutcome, ScorerKind};

/// The report of a measurement.
pub fn report(measurement: &Measurement) -> Result<Report, ReportError> {
    let gates = Gates { min_recall: measurement.min_recall, min_precision: measurement.min_precision };
    let records = measurement.plants.iter().zip(&measurement.excluded).map(|(plant, excluded)| {
        let record = PlantRecord::new(
            plant.file.clone(),
            plant.line,
            plant.category.clone(),
            plant.operator.clone(),
            plant.original.clone(),
            plant.mutated.clone(),
        )
        .with_defect(plant.defect.clone());
        if *excluded { record.excluded() } else { record }
    });
    // Trial scores index the valid plants; the report indexes all of them.
    let valid_to_all: Vec<usize> =
        measurement.excluded.iter().enumerate().filter(|(_, excluded)| !**excluded).map(|(i, _)| i).collect();
    let mut builder = Report::builder(measurement.commit.clone(), measurement.scorer.as_str(), gates)
        .plants(records)
        .trustworthy(measurement.scorer.trustworthy());
    for trial in &measurement.trials {
        let mut record = TrialRecord::new(Some(trial.run.exit_code));
        for (valid_index, caught_by) in trial.scored.caught_by.iter().enumerate() {
            if let (Some(finding), Some(index)) = (caught_by, valid_to_all.get(valid_index)) {
                let text = trial.parsed.findings.get(*finding).map(|f| f.text.clone()).unwrap_or_default();
                record.caught_by.insert(*index, text);
            }
        }
        record.findings = trial
            .scored
            .findings
            .iter()
            .map(|outcome| match outcome {
                FindingOutcome::TruePositive(_) => FindingClass::TruePositive,
                FindingOutcome::FalsePositive => FindingClass::FalsePositive,
                FindingOutcome::LocatedOnly => FindingClass::LocatedOnly,
            })
            .collect();
        record.judge_checks =
            JudgeChecks { repro_verified: trial.judge_checks.0, judge_agreed: trial.judge_checks.1 };
        builder = builder.trial(record);
    }
    let controls = &measurement.controls;
    let echo_enforced = measurement.scorer != ScorerKind::String;
    let oracle = match controls.oracle {
        Some((caught, total)) => ControlOutcome::oracle(caught, total),
        None => ControlOutcome {
            recall: 0.0,
            caught: 0,
            total: 0,
            requirement: "1.0 (not run: no plant has a witness to serve as the oracle's repro)".into(),
            passed: false,
            enforced: false,
        },
    };
    builder
        .controls(Controls {
            echo: ControlOutcome::echo(controls.echo.0, controls.echo.1, echo_enforced),
            oracle,
        })
        .build()
}
