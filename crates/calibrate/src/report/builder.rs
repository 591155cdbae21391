//! Turning what happened in a calibration run into the report's numbers.

use std::collections::BTreeMap;

use super::{CategoryScore, Controls, PlantReport, PlantStatus, Report, TrialReport, ratio, wilson_interval};

/// Slack for comparing a computed ratio with a gate typed by a user (0.6 vs 3/5).
const GATE_EPSILON: f64 = 1e-9;

/// The gates a run must pass.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Gates {
    /// Recall must be at least this.
    pub min_recall: f64,
    /// Precision must be at least this, when set (an undefined precision then fails).
    pub min_precision: Option<f64>,
}

/// A plant as the caller knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlantRecord {
    /// The file, relative to the repository root.
    pub file: String,
    /// The 1-based line.
    pub line: u32,
    /// The bug category.
    pub category: String,
    /// The mutation operator.
    pub operator: String,
    /// The whole line before the change.
    pub original: String,
    /// The whole line after the change.
    pub mutated: String,
    /// What is now wrong, in one sentence.
    pub defect: Option<String>,
    /// A unified diff of the change; one is made from the two lines when absent.
    pub diff: Option<String>,
    /// Excluded as equivalent (its witness did not discriminate).
    pub excluded: bool,
}

impl PlantRecord {
    /// A valid plant with no defect sentence and a diff made from its two lines.
    pub fn new(
        file: impl Into<String>,
        line: u32,
        category: impl Into<String>,
        operator: impl Into<String>,
        original: impl Into<String>,
        mutated: impl Into<String>,
    ) -> Self {
        PlantRecord {
            file: file.into(),
            line,
            category: category.into(),
            operator: operator.into(),
            original: original.into(),
            mutated: mutated.into(),
            defect: None,
            diff: None,
            excluded: false,
        }
    }

    /// The same plant with a defect sentence.
    pub fn with_defect(mut self, defect: impl Into<String>) -> Self {
        self.defect = Some(defect.into());
        self
    }

    /// The same plant with a diff.
    pub fn with_diff(mut self, diff: impl Into<String>) -> Self {
        self.diff = Some(diff.into());
        self
    }

    /// The same plant, excluded as equivalent.
    pub fn excluded(mut self) -> Self {
        self.excluded = true;
        self
    }

    /// A one-hunk unified diff of the changed line.
    fn default_diff(&self) -> String {
        let (file, line) = (&self.file, self.line);
        format!(
            "--- a/{file}\n+++ b/{file}\n@@ -{line} +{line} @@\n-{}\n+{}\n",
            self.original.trim_end_matches(['\r', '\n']),
            self.mutated.trim_end_matches(['\r', '\n'])
        )
    }
}

/// How one finding was scored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FindingClass {
    /// It located and identified a plant.
    TruePositive,
    /// It located no plant.
    FalsePositive,
    /// It located a plant without identifying it: neither true nor false positive.
    LocatedOnly,
}

impl FindingClass {
    /// Classify a finding from whether it located any plant and identified any plant it located.
    pub fn classify(located_any: bool, identified_any: bool) -> Self {
        match (located_any, identified_any) {
            (true, true) => FindingClass::TruePositive,
            (true, false) => FindingClass::LocatedOnly,
            (false, _) => FindingClass::FalsePositive,
        }
    }
}

/// How often the judge agreed with the repro check, where both ran.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct JudgeChecks {
    /// Findings whose repro command verified them.
    pub repro_verified: usize,
    /// Of those, the ones the judge also matched.
    pub judge_agreed: usize,
}

/// What happened in one review run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrialRecord {
    /// The reviewer's exit code.
    pub review_exit_code: Option<i32>,
    /// Index of each caught plant (in the order plants were added) -> text of the finding that
    /// caught it.
    pub caught_by: BTreeMap<usize, String>,
    /// The classification of every finding of this run.
    pub findings: Vec<FindingClass>,
    /// Judge agreement with repro-verified findings.
    pub judge_checks: JudgeChecks,
}

impl TrialRecord {
    /// An empty trial with the reviewer's exit code.
    pub fn new(review_exit_code: Option<i32>) -> Self {
        TrialRecord { review_exit_code, ..TrialRecord::default() }
    }

    fn count(&self, class: FindingClass) -> usize {
        self.findings.iter().filter(|c| **c == class).count()
    }
}

/// A recorded outcome that contradicts the plants.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ReportError {
    /// A trial names a plant index that was never added.
    #[error("trial {trial}: plant #{index} is caught, but only {plants} plants were recorded")]
    UnknownPlant {
        /// 1-based trial number.
        trial: usize,
        /// The plant index.
        index: usize,
        /// How many plants there are.
        plants: usize,
    },
    /// A trial says an excluded plant was caught.
    #[error("trial {trial}: plant #{index} ({file}:{line}) is excluded as equivalent and cannot be caught")]
    CaughtExcluded {
        /// 1-based trial number.
        trial: usize,
        /// The plant index.
        index: usize,
        /// Its file.
        file: String,
        /// Its line.
        line: u32,
    },
    /// There are valid plants but no review ran.
    #[error("{plants} valid plants but no trial was recorded")]
    NoTrials {
        /// How many valid plants there are.
        plants: usize,
    },
    /// A gate is not a number between 0 and 1.
    #[error("{gate} must be between 0 and 1, got {value}")]
    BadGate {
        /// `min-recall` or `min-precision`.
        gate: &'static str,
        /// The value given.
        value: f64,
    },
    /// More judge agreements than verified findings.
    #[error("trial {trial}: the judge agreed on {agreed} findings but only {verified} were repro-verified")]
    BadJudgeChecks {
        /// 1-based trial number.
        trial: usize,
        /// Agreements recorded.
        agreed: usize,
        /// Verified findings recorded.
        verified: usize,
    },
}

/// Collects a run's outcomes; [`ReportBuilder::build`] computes every number.
#[derive(Debug, Clone)]
pub struct ReportBuilder {
    commit: String,
    scorer: String,
    gates: Gates,
    plants: Vec<PlantRecord>,
    trials: Vec<TrialRecord>,
    controls: Option<Controls>,
    trustworthy: bool,
}

impl Report {
    /// Start a report for `commit`, scored by `scorer`, against `gates`.
    pub fn builder(commit: impl Into<String>, scorer: impl Into<String>, gates: Gates) -> ReportBuilder {
        ReportBuilder {
            commit: commit.into(),
            scorer: scorer.into(),
            gates,
            plants: Vec::new(),
            trials: Vec::new(),
            controls: None,
            trustworthy: true,
        }
    }
}

impl ReportBuilder {
    /// Add a plant; trials refer to plants by the order they were added (from 0).
    pub fn plant(mut self, plant: PlantRecord) -> Self {
        self.plants.push(plant);
        self
    }

    /// Add several plants.
    pub fn plants(mut self, plants: impl IntoIterator<Item = PlantRecord>) -> Self {
        self.plants.extend(plants);
        self
    }

    /// Add the outcome of one review run.
    pub fn trial(mut self, trial: TrialRecord) -> Self {
        self.trials.push(trial);
        self
    }

    /// Record the controls' results.
    pub fn controls(mut self, controls: Controls) -> Self {
        self.controls = Some(controls);
        self
    }

    /// Mark the number as (un)trustworthy; true unless told otherwise.
    pub fn trustworthy(mut self, trustworthy: bool) -> Self {
        self.trustworthy = trustworthy;
        self
    }

    /// Compute every number of the report.
    pub fn build(self) -> Result<Report, ReportError> {
        self.check()?;
        let trial_count = self.trials.len();
        let valid = self.plants.iter().filter(|p| !p.excluded).count();

        // How many trials caught each plant, and the first finding that did.
        let mut caught_in = vec![0usize; self.plants.len()];
        let mut caught_by: Vec<Option<&String>> = vec![None; self.plants.len()];
        for trial in &self.trials {
            for (index, text) in &trial.caught_by {
                caught_in[*index] += 1;
                caught_by[*index].get_or_insert(text);
            }
        }

        let caught: usize = caught_in.iter().sum();
        let total = valid * trial_count;
        let recall = ratio(caught, total).unwrap_or(0.0);
        let true_positives: usize = self.trials.iter().map(|t| t.count(FindingClass::TruePositive)).sum();
        let false_positives: usize = self.trials.iter().map(|t| t.count(FindingClass::FalsePositive)).sum();
        let precision = ratio(true_positives, true_positives + false_positives);
        let verified: usize = self.trials.iter().map(|t| t.judge_checks.repro_verified).sum();
        let agreed: usize = self.trials.iter().map(|t| t.judge_checks.judge_agreed).sum();

        let recall_gate = total > 0 && recall + GATE_EPSILON >= self.gates.min_recall;
        let precision_gate = match self.gates.min_precision {
            Some(min) => precision.is_some_and(|p| p + GATE_EPSILON >= min),
            None => true,
        };

        let mut per_category: BTreeMap<String, CategoryScore> = BTreeMap::new();
        for (plant, caught) in self.plants.iter().zip(&caught_in).filter(|(p, _)| !p.excluded) {
            let score = per_category.entry(plant.category.clone()).or_insert(CategoryScore {
                caught: 0,
                total: 0,
                recall: 0.0,
            });
            score.caught += caught;
            score.total += trial_count;
        }
        for score in per_category.values_mut() {
            score.recall = ratio(score.caught, score.total).unwrap_or(0.0);
        }

        let plants = self
            .plants
            .iter()
            .enumerate()
            .map(|(index, plant)| {
                let status = if plant.excluded {
                    PlantStatus::Excluded
                } else if caught_in[index] > 0 && 2 * caught_in[index] >= trial_count {
                    PlantStatus::Caught
                } else {
                    PlantStatus::Missed
                };
                PlantReport {
                    file: plant.file.clone(),
                    line: plant.line,
                    category: plant.category.clone(),
                    operator: plant.operator.clone(),
                    status,
                    original: plant.original.clone(),
                    mutated: plant.mutated.clone(),
                    defect: plant.defect.clone(),
                    diff: plant.diff.clone().unwrap_or_else(|| plant.default_diff()),
                    caught_by: caught_by[index].cloned(),
                    caught_in_trials: (trial_count > 1 && !plant.excluded).then_some(caught_in[index]),
                }
            })
            .collect();

        let trials = if trial_count > 1 {
            self.trials.iter().enumerate().map(|(index, trial)| trial_report(index, trial, valid)).collect()
        } else {
            Vec::new()
        };

        Ok(Report {
            recall,
            caught,
            total,
            precision,
            true_positives,
            false_positives,
            min_recall: self.gates.min_recall,
            min_precision: self.gates.min_precision,
            gate_pass: recall_gate && precision_gate,
            scorer: self.scorer,
            judge_agreement: ratio(agreed, verified),
            equivalent_excluded: self.plants.len() - valid,
            commit: self.commit,
            review_exit_code: self.trials.iter().filter_map(|t| t.review_exit_code).max(),
            per_category,
            plants,
            recall_interval: wilson_interval(caught, total),
            trials,
            trustworthy: self.trustworthy,
            controls: self.controls,
        })
    }

    /// Reject outcomes that contradict the plants or the gates.
    fn check(&self) -> Result<(), ReportError> {
        let in_unit = |value: f64| (0.0..=1.0).contains(&value);
        if !in_unit(self.gates.min_recall) {
            return Err(ReportError::BadGate { gate: "min-recall", value: self.gates.min_recall });
        }
        if let Some(value) = self.gates.min_precision.filter(|v| !in_unit(*v)) {
            return Err(ReportError::BadGate { gate: "min-precision", value });
        }
        let valid = self.plants.iter().filter(|p| !p.excluded).count();
        if valid > 0 && self.trials.is_empty() {
            return Err(ReportError::NoTrials { plants: valid });
        }
        for (number, trial) in (1..).zip(&self.trials) {
            for index in trial.caught_by.keys().copied() {
                let plant = self.plants.get(index).ok_or(ReportError::UnknownPlant {
                    trial: number,
                    index,
                    plants: self.plants.len(),
                })?;
                if plant.excluded {
                    return Err(ReportError::CaughtExcluded {
                        trial: number,
                        index,
                        file: plant.file.clone(),
                        line: plant.line,
                    });
                }
            }
            let checks = trial.judge_checks;
            if checks.judge_agreed > checks.repro_verified {
                return Err(ReportError::BadJudgeChecks {
                    trial: number,
                    agreed: checks.judge_agreed,
                    verified: checks.repro_verified,
                });
            }
        }
        Ok(())
    }
}

fn trial_report(index: usize, trial: &TrialRecord, valid: usize) -> TrialReport {
    let caught = trial.caught_by.len();
    let true_positives = trial.count(FindingClass::TruePositive);
    let false_positives = trial.count(FindingClass::FalsePositive);
    TrialReport {
        trial: index + 1,
        recall: ratio(caught, valid).unwrap_or(0.0),
        caught,
        total: valid,
        precision: ratio(true_positives, true_positives + false_positives),
        true_positives,
        false_positives,
        review_exit_code: trial.review_exit_code,
    }
}
