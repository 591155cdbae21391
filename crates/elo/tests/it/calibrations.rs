//! Stand-in calibrations (a reviewer that catches every plant and raises one false alarm in
//! ten clean changes, and one that approves everything) as calibration records, and the
//! ratings RFC-001's table gives them, computed here from the RFC's rules without the
//! crate's engine or policy.

use revcal_elo::{
    CalibrationRecord, Finding, Plant, PlantStatus, RECORD_FORMAT, RECORD_VERSION, Round, Summary,
    TouchedLines, Trial,
};
use std::collections::BTreeMap;

/// The rounds of the stand-in calibration, in order: the plants' categories of a planted
/// round, or `None` for a clean round (10 of 24).
pub(crate) const ROUNDS: [Option<&[&str]>; 24] = [
    Some(&["off-by-one"]),
    Some(&["null-handling"]),
    None,
    Some(&["boundary"]),
    Some(&["off-by-one"]),
    None,
    Some(&["off-by-one", "null-handling"]),
    None,
    Some(&["null-handling"]),
    Some(&["off-by-one"]),
    None,
    Some(&["boundary"]),
    None,
    Some(&["off-by-one"]),
    Some(&["null-handling"]),
    None,
    Some(&["boundary", "off-by-one"]),
    None,
    Some(&["null-handling"]),
    None,
    Some(&["boundary"]),
    None,
    Some(&["off-by-one"]),
    None,
];

/// The clean round (by its position among the clean rounds) the careful reviewer flags.
const FALSE_ALARM: usize = 3;

/// How a stand-in reviewer behaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StandIn {
    /// Catches every plant; flags one clean change of ten (a finding on a touched line);
    /// on the other clean changes it points at lines the change did not touch.
    Careful,
    /// Approves everything, without a finding.
    Rubber,
}

/// A stand-in calibration of `reviewer` with `trials` trials per round, dated `ts`, for the
/// report whose hash is `report_sha256`.
pub(crate) fn record(stand_in: StandIn, report_sha256: &str, trials: u64, ts: u64) -> CalibrationRecord {
    let mut rounds = Vec::new();
    let mut clean_seen = 0;
    for (index, kinds) in ROUNDS.iter().enumerate() {
        let number = index as u64 + 1;
        let file = format!("src/module_{number}.rs");
        match kinds {
            Some(categories) => {
                let plants: Vec<Plant> = categories
                    .iter()
                    .enumerate()
                    .map(|(n, category)| Plant {
                        file: file.clone(),
                        line: 10 + 20 * n as u64,
                        category: (*category).to_owned(),
                    })
                    .collect();
                let trial_of = |trial: u64| match stand_in {
                    StandIn::Careful => Trial {
                        trial,
                        statuses: vec![PlantStatus::Caught; plants.len()],
                        flagged: true,
                        findings: plants
                            .iter()
                            .map(|plant| Finding {
                                file: plant.file.clone(),
                                line: plant.line + 1,
                                body: format!("{} bug here", plant.category),
                            })
                            .collect(),
                    },
                    StandIn::Rubber => Trial {
                        trial,
                        statuses: vec![PlantStatus::Missed; plants.len()],
                        flagged: false,
                        findings: Vec::new(),
                    },
                };
                let trials = (1..=trials).map(trial_of).collect();
                rounds.push(Round {
                    round: number,
                    entry: None,
                    commit: None,
                    plants,
                    touched: Vec::new(),
                    trials,
                });
            }
            None => {
                clean_seen += 1;
                let touched = vec![TouchedLines { file: file.clone(), first: 40, last: 44 }];
                let alarm = stand_in == StandIn::Careful && clean_seen == FALSE_ALARM;
                let trial_of = |trial: u64| match stand_in {
                    StandIn::Careful => Trial {
                        trial,
                        statuses: Vec::new(),
                        flagged: alarm,
                        findings: vec![Finding {
                            // On a touched line for the false alarm; far from them otherwise.
                            file: format!("./{file}"),
                            line: if alarm { 43 } else { 200 },
                            body: "this looks wrong".to_owned(),
                        }],
                    },
                    StandIn::Rubber => {
                        Trial { trial, statuses: Vec::new(), flagged: false, findings: Vec::new() }
                    }
                };
                let trials = (1..=trials).map(trial_of).collect();
                rounds.push(Round {
                    round: number,
                    entry: None,
                    commit: None,
                    plants: Vec::new(),
                    touched,
                    trials,
                });
            }
        }
    }
    let summary = Summary::of(&rounds);
    CalibrationRecord {
        format: RECORD_FORMAT.to_owned(),
        version: RECORD_VERSION,
        report_sha256: report_sha256.to_owned(),
        commit: "9fceb02d0ae598e95dc970b74767f19372d61af8".to_owned(),
        repo: Some("github.com/acme/payments".to_owned()),
        reviewer: match stand_in {
            StandIn::Careful => "careful-bot".to_owned(),
            StandIn::Rubber => "rubber-stamp".to_owned(),
        },
        ts,
        rounds,
        summary,
    }
}

/// A rating as RFC-001 computes it: start 1200; base deltas +25 (REQUEST_CHANGES, incident),
/// -30 (APPROVE, incident), -5 (REQUEST_CHANGES, no incident), +5 (APPROVE, no incident);
/// applied delta = base x K / 20 with K = 40 before the 20th scored review, 20 from it.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(crate) struct Expected {
    pub(crate) rating: f64,
    pub(crate) reviews: u64,
    pub(crate) decisive: u64,
    pub(crate) correct: u64,
}

impl Expected {
    pub(crate) fn start() -> Expected {
        Expected { rating: 1200.0, ..Expected::default() }
    }

    /// Scores one decisive verdict: `flagged` is REQUEST_CHANGES, else APPROVE.
    pub(crate) fn score(&mut self, flagged: bool, incident: bool) {
        let base = match (flagged, incident) {
            (true, true) => 25.0,
            (false, true) => -30.0,
            (true, false) => -5.0,
            (false, false) => 5.0,
        };
        let k = if self.reviews < 20 { 40.0 } else { 20.0 };
        self.rating += base * k / 20.0;
        self.reviews += 1;
        self.decisive += 1;
        if flagged == incident {
            self.correct += 1;
        }
    }

    pub(crate) fn accuracy(&self) -> Option<f64> {
        (self.decisive > 0).then(|| self.correct as f64 / self.decisive as f64)
    }
}

/// The scope names of the expectation: `all`, `verified`, `reported` and `domain:<cat>`.
pub(crate) type Expectations = BTreeMap<String, Expected>;

/// Scores, in the record's order, every trial of every round of `record` in `scopes` (for a
/// verified calibration: all, verified and the round's domains; a clean round's domains are
/// every category the calibration planted).
pub(crate) fn expect_record(expected: &mut Expectations, record: &CalibrationRecord, verified: bool) {
    let mut every_category: Vec<String> = record
        .rounds
        .iter()
        .flat_map(|round| round.plants.iter().map(|plant| plant.category.clone()))
        .collect();
    every_category.sort();
    every_category.dedup();
    for round in &record.rounds {
        let incident = !round.plants.is_empty();
        let mut domains: Vec<String> = if incident {
            round.plants.iter().map(|plant| plant.category.clone()).collect()
        } else {
            every_category.clone()
        };
        domains.sort();
        domains.dedup();
        for trial in &round.trials {
            let mut scopes = vec!["all".to_owned()];
            if verified {
                scopes.push("verified".to_owned());
                scopes.extend(domains.iter().map(|domain| format!("domain:{domain}")));
            } else {
                scopes.push("reported".to_owned());
            }
            for scope in scopes {
                expected.entry(scope).or_insert_with(Expected::start).score(trial.flagged, incident);
            }
        }
    }
}
