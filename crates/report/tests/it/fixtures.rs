//! The reports the tests of the report's model (`model.rs`) and of its renderers
//! (`render.rs`) are made of.

use revcal_report::{
    ControlOutcome, Controls, FindingOutcome, Gates, JudgeChecks, Plant, Report, ReportBuilder, ScorerKind,
    TrialRecord,
};

pub(crate) fn gates(min_recall: f64) -> Gates {
    Gates { min_recall, min_precision: None }
}

/// Three valid plants and, last, one excluded as equivalent.
pub(crate) fn with_plants(builder: ReportBuilder) -> ReportBuilder {
    builder.plants(plants()).excluded_plant(Plant::new(
        "src/c.rs",
        3,
        "arithmetic",
        "plus-minus",
        "a + b",
        "a - b",
    ))
}

pub(crate) fn plants() -> Vec<Plant> {
    vec![
        Plant::new("src/a.rs", 10, "off-by-one", "relational-boundary", "if i < n {", "if i <= n {")
            .with_defect("`<` became `<=`: one iteration too many"),
        Plant::new("src/a.rs", 40, "off-by-one", "plus-one", "let end = start;", "let end = start + 1;"),
        Plant::new("src/b.rs", 7, "null-handling", "drop-default", "x.unwrap_or(0)", "x.unwrap()"),
    ]
}

pub(crate) fn one_trial() -> TrialRecord {
    let mut trial = TrialRecord::new(Some(0));
    trial.caught_by.insert(0, "off by one at src/a.rs:10".into());
    trial.caught_by.insert(2, "unwrap panics on None".into());
    trial.findings = vec![
        FindingOutcome::TruePositive(0),
        FindingOutcome::TruePositive(2),
        FindingOutcome::FalsePositive,
        FindingOutcome::LocatedOnly,
    ];
    trial.judge_checks = JudgeChecks { repro_verified: 2, judge_agreed: 1 };
    trial
}

pub(crate) fn report() -> Report {
    with_plants(Report::builder("0123456789abcdef0123456789abcdef01234567", ScorerKind::Judge, gates(0.6)))
        .trial(one_trial())
        .controls(Controls { echo: ControlOutcome::echo(0, 3, true), oracle: ControlOutcome::oracle(3, 3) })
        .build()
        .unwrap()
}

/// The plants of [`with_plants`] reviewed three times: plant 0 caught in every trial, plants
/// 1 and 2 in one of three.
pub(crate) fn three_trials() -> Report {
    let mut second = TrialRecord::new(Some(2));
    second.caught_by.insert(0, "boundary bug".into());
    second.caught_by.insert(1, "end is one too far".into());
    second.findings = vec![FindingOutcome::TruePositive(0), FindingOutcome::TruePositive(1)];
    let mut third = TrialRecord::new(Some(0));
    third.caught_by.insert(0, "again".into());
    third.findings = vec![FindingOutcome::TruePositive(0), FindingOutcome::FalsePositive];
    with_plants(Report::builder("HEAD", ScorerKind::Judge, gates(0.5)))
        .trial(one_trial())
        .trial(second)
        .trial(third)
        .build()
        .unwrap()
}
