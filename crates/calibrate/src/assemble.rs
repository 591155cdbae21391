//! From what a run measured to the report: each plant and each trial are recorded with the
//! report builder (trial scores index the valid plants, the report all of them), and the
//! report (revcal-report) computes the numbers.

use crate::flow::{Exclusion, Measurement};
use crate::report::{Gates, JudgeChecks, Report, ReportError, TrialRecord};
use crate::scoring::FindingOutcome;

/// The report of a measurement.
pub(crate) fn report(measurement: &Measurement) -> Result<Report, ReportError> {
    let gates = Gates { min_recall: measurement.min_recall, min_precision: measurement.min_precision };
    let mut builder = Report::builder(measurement.commit.clone(), measurement.scorer, gates)
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
            .chain(std::iter::repeat_n(FindingOutcome::Preexisting, trial.preexisting))
            .collect();
        record.judge_checks =
            JudgeChecks { repro_verified: trial.judge_checks.0, judge_agreed: trial.judge_checks.1 };
        builder = builder.trial(record);
    }
    for round in &measurement.rounds {
        builder = builder.round(round.clone());
    }
    if let Some((requested, excluded)) = &measurement.clean {
        builder = builder.clean_rounds(*requested, excluded.clone());
    }
    if let Some(in_clean) = &measurement.preexisting_in_clean {
        builder = builder.preexisting_filter(in_clean.clone());
    }
    builder
        .reviewer(measurement.reviewer.clone())
        .controls(measurement.controls.clone())
        .judge_usage(measurement.judge_usage.clone())
        .reviewer_usage(measurement.reviewer_usage.clone())
        .judge_errors(measurement.judge_errors)
        .repro_sandbox(measurement.repro_sandbox.clone())
        .warnings(warnings(measurement))
        .build()
}

/// Lines of a reviewer's output quoted in a warning, and the most characters of each.
const QUOTED_LINES: usize = 5;
const QUOTED_CHARS: usize = 160;

/// What the figures cannot show by themselves (docs/calibration.md#reading-the-report).
fn warnings(measurement: &Measurement) -> Vec<String> {
    let mut warnings = Vec::new();
    let findings: usize =
        measurement.trials.iter().map(|trial| trial.parsed.findings.len() + trial.preexisting).sum();
    if let Some(first) = measurement.trials.first().filter(|_| findings == 0) {
        let printed = match quote(&first.run.output) {
            Some(lines) => format!("its output began:\n  {lines}"),
            None => match quote(&first.run.stderr_tail) {
                Some(lines) => format!("it printed nothing on stdout; its stderr ended:\n  {lines}"),
                None => "it printed nothing".to_owned(),
            },
        };
        warnings.push(format!(
            "the reviewer reported no finding in any review: if it did find something, its output is in a form revcal does not read (check its output format: see docs/findings.md); {printed}"
        ));
    }
    let with_repro = measurement
        .trials
        .iter()
        .flat_map(|trial| &trial.parsed.findings)
        .filter(|finding| finding.repro.as_deref().is_some_and(|repro| !repro.trim().is_empty()))
        .count();
    if measurement.scorer == crate::scoring::ScorerKind::Repro && findings > 0 && with_repro == 0 {
        warnings.push(format!(
            "none of the reviewer's {findings} findings carries a repro command, so under --scorer repro none can count as a catch and the recall is 0 by construction: use --scorer judge, or have the reviewer print a `repro` command with each finding (docs/findings.md)"
        ));
    }
    if let Some((requested, excluded)) = &measurement.clean {
        let changes = measurement.rounds.iter().filter(|round| round.is_clean()).count();
        if changes < *requested {
            let why = if excluded.is_empty() {
                "the target files hold no more sites for a neutral edit (a mirrored comparison of names, fields or literals) on lines without a plant".to_owned()
            } else {
                format!(
                    "{} neutral edits failed the build check (listed in `cleanRounds.excluded`), and the target files hold no more sites",
                    excluded.len()
                )
            };
            let measured_on =
                if changes == 1 { "1 clean change".to_owned() } else { format!("{changes} clean changes") };
            warnings.push(format!(
                "{requested} clean rounds were asked for, {changes} ran: {why}; the false-alarm rate is measured on {measured_on}"
            ));
        }
    }
    warnings
}

/// The first lines of `text` that hold something, each cut short and with control characters
/// shown as `?` (a reviewer's output is untrusted: no escape sequence reaches a terminal).
fn quote(text: &str) -> Option<String> {
    let lines: Vec<String> = text
        .lines()
        .filter(|line| !line.trim().is_empty())
        .take(QUOTED_LINES)
        .map(|line| {
            let mut shown: String =
                line.chars().take(QUOTED_CHARS).map(|c| if c.is_control() { '?' } else { c }).collect();
            if line.chars().count() > QUOTED_CHARS {
                shown.push('…');
            }
            shown
        })
        .collect();
    (!lines.is_empty()).then(|| lines.join("\n  "))
}
