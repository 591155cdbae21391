//! The report: exactly the keys of docs/calibration.md#reading-the-report, every number
//! computed from recorded outcomes, and the comparison with a baseline (its human, JUnit and
//! HTML renderings are tested in `render.rs`).

use std::collections::BTreeSet;

use crate::fixtures::{gates, one_trial, report, three_trials, with_plants};
use revcal_report::{
    ControlOutcome, Controls, FindingOutcome, Gates, JudgeChecks, Plant, PlantStatus, Report, ReportBuilder,
    ReportError, ScorerKind, TrialRecord,
};
use serde_json::Value;

/// The keys of docs/calibration.md#reading-the-report, before the documented additions.
const BASE_KEYS: [&str; 16] = [
    "recall",
    "caught",
    "total",
    "precision",
    "truePositives",
    "falsePositives",
    "minRecall",
    "minPrecision",
    "gatePass",
    "scorer",
    "judgeAgreement",
    "equivalentExcluded",
    "commit",
    "reviewExitCode",
    "perCategory",
    "plants",
];
const BASE_PLANT_KEYS: [&str; 7] = ["file", "line", "category", "operator", "status", "original", "mutated"];

fn keys(value: &Value) -> BTreeSet<&str> {
    value.as_object().unwrap().keys().map(String::as_str).collect()
}

#[test]
fn the_json_has_exactly_the_spec_keys_plus_the_documented_additions() {
    let json = serde_json::to_value(report()).unwrap();
    let expected: BTreeSet<&str> = BASE_KEYS
        .iter()
        .copied()
        .chain([
            "recallInterval",
            "trustworthy",
            "controls",
            "runawayExcluded",
            "buildExcluded",
            "caughtByTimeout",
            "findingsPerPlant",
            "perKind",
            "findings",
            "judgeChecks",
        ])
        .collect();
    assert_eq!(keys(&json), expected);
    // The counts behind judgeAgreement and findingsPerPlant, so both can be recomputed.
    assert_eq!(json["judgeChecks"], serde_json::json!({"reproVerified": 2, "judgeAgreed": 1}));
    assert_eq!(json["findings"], 4);
    // Every plant here is synthetic: one kind, scored like the whole.
    assert_eq!(json["perKind"]["synthetic"]["total"], json["total"]);
    assert_eq!(json["perKind"]["synthetic"]["caught"], json["caught"]);

    let plant_keys: BTreeSet<&str> =
        BASE_PLANT_KEYS.iter().copied().chain(["defect", "diff", "caughtBy", "kind"]).collect();
    for plant in json["plants"].as_array().unwrap() {
        assert_eq!(keys(plant), plant_keys);
    }
    for score in json["perCategory"].as_object().unwrap().values() {
        assert_eq!(keys(score), BTreeSet::from(["caught", "total", "recall"]));
    }
    assert_eq!(keys(&json["recallInterval"]), BTreeSet::from(["low", "high"]));
    assert_eq!(keys(&json["controls"]), BTreeSet::from(["echo", "oracle"]));
}

#[test]
fn every_number_is_computed_from_the_outcomes() {
    let report = report();
    assert_eq!((report.caught, report.total), (2, 3));
    assert!((report.recall - 2.0 / 3.0).abs() < 1e-12);
    assert_eq!((report.true_positives, report.false_positives), (2, 1));
    assert!((report.precision.unwrap() - 2.0 / 3.0).abs() < 1e-12, "located-only counts as neither");
    assert_eq!(report.judge_agreement, Some(0.5));
    assert_eq!(report.equivalent_excluded, 1);
    assert_eq!(report.review_exit_code, Some(0));
    assert!(report.gate_pass, "2/3 >= 0.6");
    assert!(report.trustworthy);
    assert!(report.trials.is_empty(), "no per-trial results for one trial");

    let statuses: Vec<PlantStatus> = report.plants.iter().map(|p| p.status).collect();
    assert_eq!(
        statuses,
        [PlantStatus::Caught, PlantStatus::Missed, PlantStatus::Caught, PlantStatus::Excluded]
    );
    assert_eq!(report.plants[0].caught_by.as_deref(), Some("off by one at src/a.rs:10"));
    assert_eq!(report.plants[1].caught_by, None);
    assert_eq!(
        report.plants[1].diff,
        "--- a/src/a.rs\n+++ b/src/a.rs\n@@ -40 +40 @@\n-let end = start;\n+let end = start + 1;\n"
    );

    let off_by_one = &report.per_category["off-by-one"];
    assert_eq!((off_by_one.caught, off_by_one.total, off_by_one.recall), (1, 2, 0.5));
    assert_eq!(report.per_category["null-handling"].recall, 1.0);
    assert!(
        !report.per_category.contains_key("arithmetic"),
        "a category with only excluded plants has no score"
    );

    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["plants"][3]["status"], "excluded");
    assert_eq!(json["plants"][0]["status"], "caught");
    assert_eq!(json["minPrecision"], Value::Null);
}

#[test]
fn precision_is_null_when_nothing_was_scored_never_one() {
    let mut trial = TrialRecord::new(Some(0));
    trial.findings = vec![FindingOutcome::LocatedOnly];
    let report =
        with_plants(Report::builder("HEAD", ScorerKind::Repro, gates(0.5))).trial(trial).build().unwrap();
    assert_eq!(report.precision, None);
    assert_eq!(report.judge_agreement, None);
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["precision"], Value::Null);
    assert_eq!(json["judgeAgreement"], Value::Null);
    assert_eq!(json["recall"], 0.0);
    assert_eq!(json["gatePass"], false);
}

#[test]
fn a_precision_gate_fails_when_precision_is_undefined_or_low() {
    let build = |findings: Vec<FindingOutcome>, min_precision| {
        let mut trial = one_trial();
        trial.findings = findings;
        with_plants(Report::builder(
            "HEAD",
            ScorerKind::Judge,
            Gates { min_recall: 0.5, min_precision: Some(min_precision) },
        ))
        .trial(trial)
        .build()
        .unwrap()
    };
    assert!(!build(vec![], 0.1).gate_pass, "null precision fails a precision gate");
    assert!(!build(vec![FindingOutcome::TruePositive(0), FindingOutcome::FalsePositive], 0.6).gate_pass);
    assert!(build(vec![FindingOutcome::TruePositive(0), FindingOutcome::FalsePositive], 0.5).gate_pass);
}

#[test]
fn the_recall_gate_is_inclusive() {
    let mut trial = TrialRecord::new(Some(2));
    for index in 0..3 {
        trial.caught_by.insert(index, "x".into());
    }
    let plants: Vec<Plant> =
        (1..=5).map(|line| Plant::new("f.py", line * 10, "boundary", "op", "a", "b")).collect();
    let at = |min| {
        Report::builder("HEAD", ScorerKind::Repro, gates(min))
            .plants(plants.clone())
            .trial(trial.clone())
            .build()
            .unwrap()
    };
    assert!(at(0.6).gate_pass, "3/5 meets 0.6");
    assert!(!at(0.61).gate_pass);
    assert_eq!(at(0.6).review_exit_code, Some(2));
}

/// The interval's published values are checked where it is computed (report/wilson.rs).
#[test]
fn the_recall_interval_contains_the_recall() {
    let report = report();
    let interval = report.recall_interval.unwrap();
    assert!(interval.low < report.recall && report.recall < interval.high);
}

#[test]
fn trials_pool_counts_and_report_each_run() {
    let report = three_trials();
    // Plant 0 caught 3 times, plant 1 once, plant 2 once: 5 of 3 plants x 3 trials.
    assert_eq!((report.caught, report.total), (5, 9));
    assert!((report.recall - 5.0 / 9.0).abs() < 1e-12);
    assert_eq!(report.trials.len(), 3);
    let recalls: Vec<f64> = report.trials.iter().map(|t| t.recall).collect();
    let mean = recalls.iter().sum::<f64>() / 3.0;
    assert!((report.recall - mean).abs() < 1e-12, "pooled recall is the mean recall");
    assert_eq!(report.trials[1].caught, 2);
    assert_eq!(report.trials[1].precision, Some(1.0));
    assert_eq!(report.review_exit_code, Some(2));
    let caught_in: Vec<Option<usize>> = report.plants.iter().map(|p| p.caught_in_trials).collect();
    assert_eq!(caught_in, [Some(3), Some(1), Some(1), None]);
    let statuses: Vec<PlantStatus> = report.plants.iter().map(|p| p.status).collect();
    assert_eq!(
        statuses,
        [PlantStatus::Caught, PlantStatus::Missed, PlantStatus::Missed, PlantStatus::Excluded],
        "caught means caught in at least half of the trials"
    );
    assert_eq!(report.plants[1].caught_by.as_deref(), Some("end is one too far"));
    let json = serde_json::to_value(&report).unwrap();
    assert!(keys(&json).contains("trials"));
    assert_eq!(json["trials"][0]["trial"], 1);
    assert!(keys(&json["plants"][0]).contains("caughtInTrials"));
    // Plant 0 was caught in every trial; plants 1 and 2 in one of three.
    assert_eq!(report.trial_agreement, Some(1.0 / 3.0));
    assert_eq!(report.findings_per_plant, Some(8.0 / 9.0), "4 + 2 + 2 findings over 3 plants x 3 trials");
}

#[test]
fn trials_do_not_narrow_the_interval_of_a_deterministic_reviewer() {
    // The same 8 bugs seen 3 times are still 8 bugs: 24/24 must not claim more than 8/8.
    let plants = |builder: ReportBuilder| {
        (0..8).fold(builder, |b, i| {
            b.plant(Plant::new("src/a.rs", 10 * i + 1, "arithmetic", "op", "a + b", "a - b"))
        })
    };
    let all_caught = || {
        let mut trial = TrialRecord::new(Some(0));
        for i in 0..8 {
            trial.caught_by.insert(i, format!("finding {i}"));
            trial.findings.push(FindingOutcome::TruePositive(i));
        }
        trial
    };
    let once =
        plants(Report::builder("HEAD", ScorerKind::Repro, gates(0.5))).trial(all_caught()).build().unwrap();
    let thrice = plants(Report::builder("HEAD", ScorerKind::Repro, gates(0.5)))
        .trial(all_caught())
        .trial(all_caught())
        .trial(all_caught())
        .build()
        .unwrap();
    assert_eq!((thrice.caught, thrice.total), (24, 24));
    assert_eq!(thrice.recall_interval, once.recall_interval, "the interval of 8 plants, not 24 draws");
    let low = thrice.recall_interval.unwrap().low;
    assert!((low - 0.6756).abs() < 1e-3, "Wilson 8/8 starts at 0.68, not 0.86: {low}");
    assert_eq!(thrice.trial_agreement, Some(1.0));
    assert_eq!(once.trial_agreement, None, "one trial has no run-to-run agreement");

    // Half the plants caught in every trial, against each plant caught in half the trials:
    // the same mean, and never a narrower interval than one trial of the same 8 plants.
    let mut halves = plants(Report::builder("HEAD", ScorerKind::Repro, gates(0.5)));
    for trial in 0..4 {
        let mut record = TrialRecord::new(Some(0));
        for i in 0..8 {
            if (i + trial) % 2 == 0 {
                record.caught_by.insert(i, "x".into());
            }
        }
        halves = halves.trial(record);
    }
    let halves = halves.build().unwrap();
    assert!((halves.recall - 0.5).abs() < 1e-12);
    assert_eq!(halves.trial_agreement, Some(0.0));
    let interval = halves.recall_interval.unwrap();
    assert!(interval.low < 0.22 && interval.high > 0.78, "{interval:?}");
}

#[test]
fn contradictory_outcomes_are_errors() {
    let mut trial = TrialRecord::new(Some(0));
    trial.caught_by.insert(9, "x".into());
    let error =
        with_plants(Report::builder("HEAD", ScorerKind::Judge, gates(0.5))).trial(trial).build().unwrap_err();
    assert_eq!(error, ReportError::UnknownPlant { trial: 1, index: 9, plants: 4 });

    let mut trial = TrialRecord::new(Some(0));
    trial.caught_by.insert(3, "x".into());
    let error =
        with_plants(Report::builder("HEAD", ScorerKind::Judge, gates(0.5))).trial(trial).build().unwrap_err();
    assert!(
        error.to_string().contains("src/c.rs:3 is excluded") || error.to_string().contains("(src/c.rs:3)"),
        "{error}"
    );

    let error = with_plants(Report::builder("HEAD", ScorerKind::Judge, gates(0.5))).build().unwrap_err();
    assert_eq!(error, ReportError::NoTrials { plants: 3 });

    let error = with_plants(Report::builder("HEAD", ScorerKind::Judge, gates(1.5)))
        .trial(one_trial())
        .build()
        .unwrap_err();
    assert!(error.to_string().contains("min-recall must be between 0 and 1"), "{error}");

    let mut trial = one_trial();
    trial.judge_checks = JudgeChecks { repro_verified: 1, judge_agreed: 2 };
    assert!(
        with_plants(Report::builder("HEAD", ScorerKind::Judge, gates(0.5))).trial(trial).build().is_err()
    );
}

#[test]
fn controls_say_which_failed_and_what_it_scored() {
    let controls = Controls { echo: ControlOutcome::echo(3, 8, true), oracle: ControlOutcome::oracle(7, 8) };
    let failures = controls.failures();
    assert_eq!(failures.len(), 2);
    assert!(
        failures[0].contains("echo control scored recall 0.38 (3/8)") && failures[0].contains("<= 0.2"),
        "{}",
        failures[0]
    );
    assert!(failures[1].contains("oracle control scored recall 0.88 (7/8)"), "{}", failures[1]);

    let under_string =
        Controls { echo: ControlOutcome::echo(8, 8, false), oracle: ControlOutcome::oracle(8, 8) };
    assert!(under_string.failures().is_empty(), "an unenforced echo is reported, not enforced");
    assert_eq!(under_string.echo.passed, Some(false));
    assert_eq!(ControlOutcome::echo(1, 5, true).passed, Some(true), "0.2 is allowed");
    assert_eq!(
        ControlOutcome::oracle(0, 0).passed,
        Some(false),
        "an oracle with nothing to catch proves nothing"
    );
}

mod properties {
    use proptest::prelude::*;
    use revcal_report::{FindingOutcome, Gates, Plant, Report, TrialRecord};

    fn class() -> impl Strategy<Value = FindingOutcome> {
        prop_oneof![
            (0usize..12).prop_map(FindingOutcome::TruePositive),
            Just(FindingOutcome::FalsePositive),
            Just(FindingOutcome::LocatedOnly)
        ]
    }

    proptest! {
        #[test]
        fn numbers_stay_consistent(
            excluded in prop::collection::vec(any::<bool>(), 0..12),
            caught in prop::collection::vec(prop::collection::vec(any::<bool>(), 12), 1..4),
            findings in prop::collection::vec(prop::collection::vec(class(), 0..10), 4),
            min_recall in 0.0f64..=1.0,
        ) {
            let valid = excluded.iter().filter(|e| !**e).count();
            let mut builder = Report::builder("HEAD", revcal_report::ScorerKind::Judge, Gates { min_recall, min_precision: None });
            for (i, excluded) in excluded.iter().enumerate() {
                let plant = Plant::new("f.rs", i as u32 + 1, ["a", "b", "c"][i % 3], "op", "x", "y");
                builder = if *excluded { builder.excluded_plant(plant) } else { builder.plant(plant) };
            }
            for (t, row) in caught.iter().enumerate() {
                let mut trial = TrialRecord::new(Some(0));
                for (i, hit) in row.iter().enumerate().take(excluded.len()) {
                    if *hit && !excluded[i] {
                        trial.caught_by.insert(i, format!("finding {i}"));
                    }
                }
                trial.findings = findings[t].clone();
                builder = builder.trial(trial);
            }
            let report = builder.build().unwrap();
            prop_assert_eq!(report.total, valid * caught.len());
            prop_assert!(report.caught <= report.total);
            prop_assert!((0.0..=1.0).contains(&report.recall));
            prop_assert_eq!(report.equivalent_excluded, excluded.len() - valid);
            match report.precision {
                None => prop_assert_eq!(report.true_positives + report.false_positives, 0),
                Some(p) => prop_assert!((0.0..=1.0).contains(&p) && report.true_positives + report.false_positives > 0),
            }
            if let Some(interval) = report.recall_interval {
                prop_assert!(interval.low <= report.recall + 1e-12 && report.recall <= interval.high + 1e-12);
            }
            let category_caught: usize = report.per_category.values().map(|c| c.caught).sum();
            let category_total: usize = report.per_category.values().map(|c| c.total).sum();
            prop_assert_eq!((category_caught, category_total), (report.caught, report.total));
            prop_assert_eq!(report.gate_pass, report.total > 0 && report.recall + 1e-9 >= min_recall);
            let json = serde_json::to_value(&report).unwrap();
            prop_assert_eq!(json["plants"].as_array().unwrap().len(), excluded.len());
        }
    }
}

#[test]
fn a_baseline_of_other_plants_is_compared_by_fishers_exact_test() {
    let build = |lines: std::ops::Range<u32>, caught: usize| {
        let mut builder = Report::builder("HEAD", ScorerKind::Repro, gates(0.0));
        let mut trial = TrialRecord::new(Some(0));
        for (index, line) in lines.enumerate() {
            builder = builder.plant(Plant::new("src/a.rs", line, "arithmetic", "op", "a + b", "a - b"));
            if index < caught {
                trial.caught_by.insert(index, "x".into());
            }
        }
        builder.trial(trial).build().unwrap()
    };
    let baseline = build(1..9, 8);
    let mut now = build(100..108, 2);
    now.compare_with(&baseline, 0.05);
    let comparison = now.baseline.as_ref().unwrap();
    assert_eq!((comparison.test.as_str(), comparison.shared_plants), ("fisher", 0));
    // 8/8 before, 2/8 now: the hypergeometric lower tail, 45 / 12870.
    assert!((comparison.overall.p_value - 45.0 / 12870.0).abs() < 1e-12, "{}", comparison.overall.p_value);
    assert!(comparison.regression && !now.gate_pass, "a significant drop fails the gate");
    let mut same = build(100..108, 8);
    same.compare_with(&baseline, 0.05);
    assert!(!same.baseline.as_ref().unwrap().regression && same.gate_pass);
}

#[test]
fn catches_by_timeout_are_counted_apart_and_only_where_the_plant_is_caught() {
    let plant = |line| Plant::new("src/lib.rs", line, "arithmetic", "op", "a + b", "a - b");
    let gates = Gates { min_recall: 0.5, min_precision: None };
    let mut trial = TrialRecord::new(Some(0));
    trial.caught_by.insert(0, "the loop never ends".into());
    trial.caught_by.insert(1, "wrong sum".into());
    trial.caught_by_timeout.insert(0);
    trial.findings = vec![FindingOutcome::TruePositive(0), FindingOutcome::TruePositive(1)];
    let report = Report::builder("c", ScorerKind::Repro, gates)
        .plant(plant(1))
        .plant(plant(2))
        .trial(trial.clone())
        .build()
        .unwrap();
    assert_eq!((report.caught, report.caught_by_timeout), (2, 1));
    assert_eq!(report.plants[0].caught_by_timeout, Some(1));
    assert_eq!(report.plants[1].caught_by_timeout, None);
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["caughtByTimeout"], 1);
    assert_eq!(json["plants"][0]["caughtByTimeout"], 1);
    assert!(json["plants"][1].get("caughtByTimeout").is_none());

    // A plant caught by timeout that is not caught contradicts itself.
    trial.caught_by.remove(&0);
    let error = Report::builder("c", ScorerKind::Repro, gates)
        .plant(plant(1))
        .plant(plant(2))
        .trial(trial)
        .build()
        .unwrap_err();
    assert!(matches!(error, ReportError::TimeoutNotCaught { trial: 1, index: 0 }), "{error}");
}
