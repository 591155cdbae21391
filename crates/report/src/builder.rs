//! Turning what happened in a calibration run into the report's numbers.

use std::collections::BTreeMap;

use crate::{
    CategoryScore, CleanExcluded, Controls, FindingOutcome, Plant, PlantOutcome, PlantStatus, Report,
    ReviewRound, ScorerKind, TrialOutcome, ratio, wilson_interval_of_mean,
};

/// Slack for comparing a computed ratio with a gate typed by a user (0.6 vs 3/5), and a
/// figure recomputed from records with the one a report states.
pub const GATE_EPSILON: f64 = 1e-9;

/// The longest reviewer name a report keeps, in bytes (what a calibration record takes).
const MAX_REVIEWER_BYTES: usize = 200;
/// Recall, precision and the gate, from the counts: the one place they are computed, for
/// one run ([`ReportBuilder::build`]) and for a suite's pooled units (through [`assemble`]).
pub(crate) struct Gated {
    /// Caught over plant-runs, 0 when there were none.
    pub(crate) recall: f64,
    /// True over scored findings; `None` when nothing was scored.
    pub(crate) precision: Option<f64>,
    /// Both gates pass (recall inclusive of its minimum, and never with no plant-run).
    pub(crate) pass: bool,
}

/// [`Gated`] figures of `caught` of `total` plant-runs and the findings scored.
pub(crate) fn gate(
    caught: usize,
    total: usize,
    true_positives: usize,
    false_positives: usize,
    gates: Gates,
) -> Gated {
    let recall = ratio(caught, total).unwrap_or(0.0);
    let precision = ratio(true_positives, true_positives + false_positives);
    let recall_gate = total > 0 && recall + GATE_EPSILON >= gates.min_recall;
    let precision_gate =
        gates.min_precision.is_none_or(|min| precision.is_some_and(|p| p + GATE_EPSILON >= min));
    Gated { recall, precision, pass: recall_gate && precision_gate }
}

/// The counts a report's figures are computed from: one run's, or a suite's pooled units'.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Plant-runs caught.
    pub caught: usize,
    /// Of them, caught by a repro that ran past its timeout.
    pub caught_by_timeout: usize,
    /// Plant-runs of valid plants.
    pub total: usize,
    /// Valid plants: the sample size of the recall interval.
    pub valid_plants: usize,
    /// Findings that identified a plant.
    pub true_positives: usize,
    /// Findings scored that identified none.
    pub false_positives: usize,
    /// Findings the reviewer reported.
    pub findings: usize,
    /// Where both the judge and the repro check ran, and how often they agreed.
    pub checks: JudgeChecks,
}

/// A report's figures from its counts (recall, precision, the gate, the recall interval,
/// findings per plant, judge agreement), everything else empty: the one assembly of a
/// report, which a run ([`ReportBuilder::build`]) and a suite (revcal-suite's pool) complete,
/// by struct update, with what only they know (plants, categories, trials, controls...).
pub fn assemble(counts: Counts, gates: Gates, scorer: ScorerKind, commit: String) -> Report {
    let Counts {
        caught,
        caught_by_timeout,
        total,
        valid_plants,
        true_positives,
        false_positives,
        findings,
        checks,
    } = counts;
    let Gated { recall, precision, pass } = gate(caught, total, true_positives, false_positives, gates);
    Report {
        recall,
        caught,
        caught_by_timeout,
        total,
        precision,
        true_positives,
        false_positives,
        min_recall: gates.min_recall,
        min_precision: gates.min_precision,
        gate_pass: pass,
        scorer,
        judge_agreement: ratio(checks.judge_agreed, checks.repro_verified),
        equivalent_excluded: 0,
        runaway_excluded: 0,
        build_excluded: 0,
        commit,
        review_exit_code: None,
        per_category: BTreeMap::new(),
        per_kind: BTreeMap::new(),
        plants: Vec::new(),
        recall_interval: wilson_interval_of_mean(recall, valid_plants).filter(|_| total > 0),
        findings_per_plant: ratio(findings, total),
        trial_agreement: None,
        trials: Vec::new(),
        trustworthy: true,
        controls: None,
        judge: None,
        reviewer_usage: Vec::new(),
        judge_errors: None,
        repro_sandbox: None,
        baseline: None,
        findings,
        preexisting: None,
        judge_checks: (checks.repro_verified > 0).then_some(checks),
        suite: None,
        entries: Vec::new(),
        warnings: Vec::new(),
        reviewer: None,
        rounds: Vec::new(),
        clean_rounds: None,
        false_alarms: None,
        clean_reviews: None,
        false_alarm_rate: None,
        false_alarm_interval: None,
        benchmark: None,
    }
}

/// Caught and total per group (a category, a kind) from each valid plant's `(group, caught,
/// runs)`, with each group's recall: the per-category figures of a run and of a suite.
pub fn scores_by(
    plants: impl IntoIterator<Item = (String, usize, usize)>,
) -> BTreeMap<String, CategoryScore> {
    let mut scores: BTreeMap<String, CategoryScore> = BTreeMap::new();
    for (group, caught, runs) in plants {
        let score = scores.entry(group).or_insert(CategoryScore { caught: 0, total: 0, recall: 0.0 });
        score.caught += caught;
        score.total += runs;
    }
    for score in scores.values_mut() {
        score.recall = ratio(score.caught, score.total).unwrap_or(0.0);
    }
    scores
}

/// The gates a run must pass.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Gates {
    /// Recall must be at least this.
    pub min_recall: f64,
    /// Precision must be at least this, when set (an undefined precision then fails).
    pub min_precision: Option<f64>,
}

/// `real` or `synthetic`: the report's name for the kind of a plant.
fn kind(plant: &Plant) -> &'static str {
    if plant.is_real() { "real" } else { "synthetic" }
}

/// A one-hunk unified diff of a plant's changed lines.
fn plant_diff(plant: &Plant) -> String {
    let (file, line) = (&plant.file, plant.line);
    let lines = |text: &str, marker: char| -> String {
        let text = text.trim_end_matches(['\r', '\n']);
        if text.is_empty() && plant.is_real() {
            return String::new();
        }
        text.split('\n').map(|l| format!("{marker}{}\n", l.trim_end_matches('\r'))).collect()
    };
    format!(
        "--- a/{file}\n+++ b/{file}\n@@ -{line} +{line} @@\n{}{}",
        lines(&plant.original, '-'),
        lines(&plant.mutated, '+')
    )
}

/// How often the judge agreed with the repro check, where both ran.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
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
    /// What every finding of this run turned out to be.
    pub findings: Vec<FindingOutcome>,
    /// Judge agreement with repro-verified findings.
    pub judge_checks: JudgeChecks,
    /// The caught plants (indices, as in `caught_by`) whose finding's repro command ran
    /// past its time limit with the plant applied: caught by timeout.
    pub caught_by_timeout: std::collections::BTreeSet<usize>,
}

impl TrialRecord {
    /// An empty trial with the reviewer's exit code.
    pub fn new(review_exit_code: Option<i32>) -> Self {
        TrialRecord { review_exit_code, ..TrialRecord::default() }
    }

    fn true_positives(&self) -> usize {
        self.findings.iter().filter(|f| matches!(f, FindingOutcome::TruePositive(_))).count()
    }

    fn false_positives(&self) -> usize {
        self.findings.iter().filter(|f| **f == FindingOutcome::FalsePositive).count()
    }

    fn preexisting(&self) -> usize {
        self.findings.iter().filter(|f| **f == FindingOutcome::Preexisting).count()
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
    /// A trial says a plant was caught by timeout but not that it was caught.
    #[error("trial {trial}: plant #{index} is caught by timeout but not caught")]
    TimeoutNotCaught {
        /// 1-based trial number.
        trial: usize,
        /// The plant index.
        index: usize,
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
    scorer: ScorerKind,
    gates: Gates,
    /// Every plant, with whether it was excluded as equivalent.
    plants: Vec<(Plant, bool)>,
    /// Why each runaway plant (by index into `plants`) was excluded.
    runaway: BTreeMap<usize, String>,
    /// Why each plant that breaks the build (by index into `plants`) was excluded.
    unbuildable: BTreeMap<usize, String>,
    trials: Vec<TrialRecord>,
    controls: Option<Controls>,
    judge: Option<revcal_record::JudgeUsage>,
    reviewer_usage: Vec<revcal_record::JudgeUsage>,
    judge_errors: Option<usize>,
    repro_sandbox: Option<String>,
    trustworthy: bool,
    warnings: Vec<String>,
    reviewer: Option<String>,
    rounds: Vec<ReviewRound>,
    clean: Option<(usize, Vec<CleanExcluded>)>,
    /// With the filter of findings made on the unplanted change: those set aside in each
    /// trial's clean reviews (the planted reviews' are in the trials' outcomes).
    preexisting_in_clean: Option<Vec<usize>>,
}

impl Report {
    /// Start a report for `commit`, scored by `scorer`, against `gates`.
    pub fn builder(commit: impl Into<String>, scorer: ScorerKind, gates: Gates) -> ReportBuilder {
        ReportBuilder {
            commit: commit.into(),
            scorer,
            gates,
            plants: Vec::new(),
            runaway: BTreeMap::new(),
            unbuildable: BTreeMap::new(),
            trials: Vec::new(),
            controls: None,
            judge: None,
            reviewer_usage: Vec::new(),
            judge_errors: None,
            repro_sandbox: None,
            trustworthy: true,
            warnings: Vec::new(),
            reviewer: None,
            rounds: Vec::new(),
            clean: None,
            preexisting_in_clean: None,
        }
    }
}

impl ReportBuilder {
    /// Add a plant; trials refer to plants by the order they were added (from 0).
    pub fn plant(mut self, plant: Plant) -> Self {
        self.plants.push((plant, false));
        self
    }

    /// Add several plants.
    pub fn plants(mut self, plants: impl IntoIterator<Item = Plant>) -> Self {
        self.plants.extend(plants.into_iter().map(|plant| (plant, false)));
        self
    }

    /// Add a plant excluded as equivalent (its witness did not discriminate): it is listed,
    /// never counted, and no trial may catch it.
    pub fn excluded_plant(mut self, plant: Plant) -> Self {
        self.plants.push((plant, true));
        self
    }

    /// Add a runaway plant: its witness ran past its time limit or its memory cap with the
    /// plant applied, so whether it is a bug is unknown. Listed with `reason`, never counted,
    /// and no trial may catch it.
    pub fn runaway_plant(mut self, plant: Plant, reason: impl Into<String>) -> Self {
        self.runaway.insert(self.plants.len(), reason.into());
        self.plants.push((plant, true));
        self
    }

    /// Add a plant that breaks the build: a compiler-backed reviewer would "catch" it without
    /// reading it, so it is listed with `reason`, never counted, and no trial may catch it.
    pub fn unbuildable_plant(mut self, plant: Plant, reason: impl Into<String>) -> Self {
        self.unbuildable.insert(self.plants.len(), reason.into());
        self.plants.push((plant, true));
        self
    }

    /// Add the outcome of one review run.
    pub fn trial(mut self, trial: TrialRecord) -> Self {
        self.trials.push(trial);
        self
    }

    /// Record what the judge spent.
    pub fn judge_usage(mut self, usage: Option<revcal_record::JudgeUsage>) -> Self {
        self.judge = usage;
        self
    }

    /// Record what the built-in reviewer spent, one entry per model it asked.
    pub fn reviewer_usage(mut self, usage: Vec<revcal_record::JudgeUsage>) -> Self {
        self.reviewer_usage = usage;
        self
    }

    /// Record how many questions the judge gave no verdict on (counted as not identified,
    /// reported apart from misses).
    pub fn judge_errors(mut self, errors: Option<usize>) -> Self {
        self.judge_errors = errors;
        self
    }

    /// Record that the findings the reviewer made on the unplanted change were set aside
    /// ([`FindingOutcome::Preexisting`] in the trials' planted reviews), and how many were in
    /// each trial's clean reviews (in the trials' order): each trial's `preexisting` and the
    /// report's are the sums of both.
    pub fn preexisting_filter(mut self, in_clean_reviews: Vec<usize>) -> Self {
        self.preexisting_in_clean = Some(in_clean_reviews);
        self
    }

    /// Record how far witness and repro commands were sandboxed (`landlock`, a partial or
    /// missing Landlock, or `off`).
    pub fn repro_sandbox(mut self, sandbox: Option<String>) -> Self {
        self.repro_sandbox = sandbox;
        self
    }

    /// Record the controls' results.
    pub fn controls(mut self, controls: Controls) -> Self {
        self.controls = Some(controls);
        self
    }

    /// Warnings for the report's readers (each a sentence), in the order given.
    pub fn warnings(mut self, warnings: Vec<String>) -> Self {
        self.warnings = warnings;
        self
    }

    /// The reviewer measured (its command), cut at 200 bytes.
    pub fn reviewer(mut self, reviewer: impl Into<String>) -> Self {
        let mut reviewer: String = reviewer.into();
        if reviewer.len() > MAX_REVIEWER_BYTES {
            let mut cut = MAX_REVIEWER_BYTES;
            while !reviewer.is_char_boundary(cut) {
                cut -= 1;
            }
            reviewer.truncate(cut);
        }
        self.reviewer = Some(reviewer);
        self
    }

    /// Add a review round (numbered in the order added, from 1). Each trial's `flagged` is
    /// computed here, by the calibration record's rule.
    pub fn round(mut self, round: ReviewRound) -> Self {
        self.rounds.push(round);
        self
    }

    /// Clean rounds were asked for: `requested` of them, and the neutral edits `excluded`
    /// (the clean rounds themselves are added with [`round`](Self::round)). Adds the
    /// false-alarm figures to the report.
    pub fn clean_rounds(mut self, requested: usize, excluded: Vec<CleanExcluded>) -> Self {
        self.clean = Some((requested, excluded));
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
        let valid = self.plants.iter().filter(|(_, excluded)| !excluded).count();

        // How many trials caught each plant (by timeout among them), and the first finding
        // that did.
        let mut caught_in = vec![0usize; self.plants.len()];
        let mut timed_out_in = vec![0usize; self.plants.len()];
        let mut caught_by: Vec<Option<&String>> = vec![None; self.plants.len()];
        for trial in &self.trials {
            for (index, text) in &trial.caught_by {
                caught_in[*index] += 1;
                caught_by[*index].get_or_insert(text);
                timed_out_in[*index] += usize::from(trial.caught_by_timeout.contains(index));
            }
        }

        let caught: usize = caught_in.iter().sum();
        let total = valid * trial_count;
        let true_positives: usize = self.trials.iter().map(TrialRecord::true_positives).sum();
        let false_positives: usize = self.trials.iter().map(TrialRecord::false_positives).sum();
        let verified: usize = self.trials.iter().map(|t| t.judge_checks.repro_verified).sum();
        let agreed: usize = self.trials.iter().map(|t| t.judge_checks.judge_agreed).sum();

        // Caught and total over valid plants, by category and by kind.
        let valid_plants = || self.plants.iter().zip(&caught_in).filter(|((_, excluded), _)| !excluded);
        let per_category = scores_by(
            valid_plants().map(|((plant, _), caught)| (plant.category.clone(), *caught, trial_count)),
        );
        let per_kind = scores_by(
            valid_plants().map(|((plant, _), caught)| (kind(plant).to_owned(), *caught, trial_count)),
        );

        let mut plants: Vec<PlantOutcome> = self
            .plants
            .iter()
            .enumerate()
            .map(|(index, (plant, excluded))| {
                let status = if *excluded {
                    PlantStatus::Excluded
                } else if caught_in[index] > 0 && 2 * caught_in[index] >= trial_count {
                    PlantStatus::Caught
                } else {
                    PlantStatus::Missed
                };
                PlantOutcome {
                    file: plant.file.clone(),
                    line: plant.line,
                    category: plant.category.clone(),
                    operator: plant.operator.clone(),
                    status,
                    original: plant.original.clone(),
                    mutated: plant.mutated.clone(),
                    defect: Some(plant.defect.clone()).filter(|defect| !defect.is_empty()),
                    diff: plant_diff(plant),
                    caught_by: caught_by[index].cloned(),
                    caught_in_trials: (trial_count > 1 && !excluded).then_some(caught_in[index]),
                    caught_by_timeout: (timed_out_in[index] > 0).then_some(timed_out_in[index]),
                    excluded_reason: self
                        .runaway
                        .get(&index)
                        .map(|reason| format!("runaway: {reason}"))
                        .or_else(|| self.unbuildable.get(&index).map(|reason| format!("build: {reason}"))),
                    kind: kind(plant).to_owned(),
                    end_line: plant.end_line,
                    fix_commit: plant.fix_commit.clone(),
                    entry: None,
                }
            })
            .collect();
        // Read as a listing of the code: by file, then line (the sort is stable, so plants on
        // one line keep the order they were chosen in).
        plants.sort_by(|a, b| (&a.file, a.line).cmp(&(&b.file, b.line)));

        let in_clean = |index: usize| {
            self.preexisting_in_clean.as_ref().and_then(|clean| clean.get(index)).copied().unwrap_or(0)
        };
        let trials = if trial_count > 1 {
            self.trials
                .iter()
                .enumerate()
                .map(|(index, trial)| trial_outcome(index, trial, valid, in_clean(index)))
                .collect()
        } else {
            Vec::new()
        };

        let mut rounds = self.rounds;
        let clean = crate::rounds::settle(&mut rounds, self.clean);

        let counts = Counts {
            caught,
            caught_by_timeout: timed_out_in.iter().sum(),
            total,
            valid_plants: valid,
            true_positives,
            false_positives,
            findings: self.trials.iter().map(|t| t.findings.len()).sum(),
            checks: JudgeChecks { repro_verified: verified, judge_agreed: agreed },
        };
        Ok(Report {
            equivalent_excluded: self.plants.len() - valid - self.runaway.len() - self.unbuildable.len(),
            runaway_excluded: self.runaway.len(),
            build_excluded: self.unbuildable.len(),
            review_exit_code: self.trials.iter().filter_map(|t| t.review_exit_code).max(),
            per_category,
            per_kind,
            plants,
            trial_agreement: (trial_count > 1)
                .then(|| {
                    let unanimous = caught_in
                        .iter()
                        .zip(&self.plants)
                        .filter(|(caught, (_, excluded))| {
                            !excluded && (**caught == 0 || **caught == trial_count)
                        })
                        .count();
                    ratio(unanimous, valid)
                })
                .flatten(),
            trials,
            trustworthy: self.trustworthy,
            controls: self.controls,
            judge: self.judge,
            reviewer_usage: self.reviewer_usage,
            judge_errors: self.judge_errors,
            repro_sandbox: self.repro_sandbox,
            preexisting: self.preexisting_in_clean.as_ref().map(|clean| {
                clean.iter().sum::<usize>() + self.trials.iter().map(TrialRecord::preexisting).sum::<usize>()
            }),
            warnings: self.warnings,
            reviewer: self.reviewer,
            rounds,
            clean_rounds: clean.clean_rounds,
            false_alarms: clean.false_alarms,
            clean_reviews: clean.clean_reviews,
            false_alarm_rate: clean.false_alarm_rate,
            false_alarm_interval: clean.false_alarm_interval,
            ..assemble(counts, self.gates, self.scorer, self.commit)
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
        let valid = self.plants.iter().filter(|(_, excluded)| !excluded).count();
        if valid > 0 && self.trials.is_empty() {
            return Err(ReportError::NoTrials { plants: valid });
        }
        for (number, trial) in (1..).zip(&self.trials) {
            if let Some(index) =
                trial.caught_by_timeout.iter().find(|index| !trial.caught_by.contains_key(index))
            {
                return Err(ReportError::TimeoutNotCaught { trial: number, index: *index });
            }
            for index in trial.caught_by.keys().copied() {
                let (plant, excluded) = self.plants.get(index).ok_or(ReportError::UnknownPlant {
                    trial: number,
                    index,
                    plants: self.plants.len(),
                })?;
                if *excluded {
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

fn trial_outcome(
    index: usize,
    trial: &TrialRecord,
    valid: usize,
    preexisting_in_clean: usize,
) -> TrialOutcome {
    let caught = trial.caught_by.len();
    let true_positives = trial.true_positives();
    let false_positives = trial.false_positives();
    TrialOutcome {
        trial: index + 1,
        recall: ratio(caught, valid).unwrap_or(0.0),
        caught,
        total: valid,
        precision: ratio(true_positives, true_positives + false_positives),
        true_positives,
        false_positives,
        review_exit_code: trial.review_exit_code,
        preexisting: trial.preexisting() + preexisting_in_clean,
    }
}
