//! The report's records: the [`Report`] itself and what it lists (plants, trials, controls,
//! a suite's entries), with [`ratio`], the rule of its ratios.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::{
    BaselineComparison, BenchmarkFigures, Interval, JudgeChecks, ReviewRound, ScorerKind,
    compare_with_baseline,
};

/// The calibration report. Serialises with exactly the keys listed in
/// docs/calibration.md#reading-the-report (camelCase): the base keys plus `recallInterval`,
/// `trials` (only when there was more than one), `trustworthy` and `controls`; each plant adds
/// `defect`, `diff`, `caughtBy` (and `caughtInTrials` with trials).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// caught / total; 0 when there is nothing to catch. With trials, the mean recall.
    pub recall: f64,
    /// Plants caught (summed over trials).
    pub caught: usize,
    /// Of `caught`, those caught by timeout: the finding's repro command passed on the
    /// original and ran past its time limit (twice) with the plant applied, so the plant made
    /// the code hang and the finding showed it (Stryker counts a timeout as detected).
    #[serde(default)]
    pub caught_by_timeout: usize,
    /// Valid (non-excluded) plants (times the number of trials).
    pub total: usize,
    /// TP / (TP + FP); `null` when there are neither.
    pub precision: Option<f64>,
    /// Findings that located and identified a plant.
    pub true_positives: usize,
    /// Findings that located no plant.
    pub false_positives: usize,
    /// The recall gate.
    pub min_recall: f64,
    /// The precision gate, when set.
    pub min_precision: Option<f64>,
    /// recall >= minRecall and, when set, precision >= minPrecision (a `null` precision fails it).
    pub gate_pass: bool,
    /// The scorer; in JSON its name: `judge`, `repro` or `string`.
    pub scorer: ScorerKind,
    /// Share of repro-verified findings the judge agreed with; `null` when none were verified.
    pub judge_agreement: Option<f64>,
    /// Plants excluded as equivalent (their witness did not discriminate).
    pub equivalent_excluded: usize,
    /// Plants excluded as runaways (their witness ran past its time limit or memory cap with
    /// the plant applied): not caught, not missed, each listed with its reason.
    #[serde(default)]
    pub runaway_excluded: usize,
    /// Plants excluded because the build fails with them applied (`--build-cmd`): not caught,
    /// not missed, each listed with its reason.
    #[serde(default)]
    pub build_excluded: usize,
    /// The commit whose changed files were the targets.
    pub commit: String,
    /// The reviewer's exit code (the highest over trials); `null` when it had none.
    pub review_exit_code: Option<i32>,
    /// Per bug category, over valid plants.
    pub per_category: BTreeMap<String, CategoryScore>,
    /// Per kind of plant (`real`, `synthetic`), over valid plants: one number must not hide
    /// the other.
    #[serde(default)]
    pub per_kind: BTreeMap<String, CategoryScore>,
    /// Every plant, excluded ones included.
    pub plants: Vec<PlantOutcome>,
    /// Wilson 95% interval of the recall over the valid plants (with trials, of the mean of
    /// each plant's catch rate: the trials of a plant are not independent samples); `null`
    /// when there is nothing to catch.
    pub recall_interval: Option<Interval>,
    /// Findings per valid plant and trial: every finding, whatever became of it, over
    /// `total`. Precision counts findings and recall counts plants; this relates the two.
    /// `null` when there is nothing to catch.
    #[serde(default)]
    pub findings_per_plant: Option<f64>,
    /// With more than one trial: the share of valid plants with the same outcome in every
    /// trial (caught in all or in none), the reviewer's run-to-run agreement.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trial_agreement: Option<f64>,
    /// One entry per trial when the review ran more than once.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub trials: Vec<TrialOutcome>,
    /// False when the scorer cannot tell a finding that names the defect from one that only
    /// points at its line (the `string` scorer).
    pub trustworthy: bool,
    /// The echo and oracle controls, when they ran.
    pub controls: Option<Controls>,
    /// What the judge spent (provider, model, calls, cache hits, tokens), when the judge keeps
    /// count (the built-in LLM judge does).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge: Option<revcal_record::JudgeUsage>,
    /// What the built-in reviewer spent (`--reviewer`), one entry per model it asked
    /// (provider, model, calls, cache hits, tokens); empty for a reviewer command.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reviewer_usage: Vec<revcal_record::JudgeUsage>,
    /// Under the judge scorer: questions about the review the judge gave no verdict on. Each
    /// counts as "not identified" (so recall is a lower bound) and the run exits 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge_errors: Option<usize>,
    /// How far witness and repro commands ran sandboxed: `landlock`, `landlock (partial: ...)`,
    /// `none (...)` when the kernel offers no Landlock, or `off` when turned off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repro_sandbox: Option<String>,
    /// The comparison with a baseline report, when one was given; a significant drop fails
    /// the gate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<BaselineComparison>,
    /// Every finding the reviewer reported, over all trials, whatever became of it
    /// (`findingsPerPlant` is this over `total`).
    #[serde(default)]
    pub findings: usize,
    /// When the reviewer's findings on the unplanted change were set aside: how many findings
    /// of the planted and clean reviews it had made there too (the same file and message, the
    /// line moved by the round's edits), over all trials. Neither catches nor false positives
    /// nor false alarms; counted in `findings`. `null` when the filter was off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preexisting: Option<usize>,
    /// The counts behind `judgeAgreement`, when some finding was repro-verified.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge_checks: Option<JudgeChecks>,
    /// A suite's report (`revcal calibrate suite`, `merge`): its hash, work units and the
    /// units that failed (not counted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suite: Option<SuiteSummary>,
    /// A suite's report: recall per entry, in the suite's order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub entries: Vec<EntryScore>,
    /// What the figures cannot show by themselves: a reviewer whose output held no finding at
    /// all, findings that cannot count under the repro scorer. Each a sentence.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// The reviewer the calibration measured: its command (or the built-in reviewer's
    /// name), at most 200 bytes. `revcal elo record` names the reviewer by it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reviewer: Option<String>,
    /// Every review round: each change shown to the reviewer (its plants, or a clean
    /// round's touched lines) and, per trial, the plants' statuses, whether the reviewer
    /// flagged the change and its located findings. What `revcal elo record` records.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rounds: Vec<ReviewRound>,
    /// With `--clean-rounds`: how many were asked for, run, and excluded (and why).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clean_rounds: Option<CleanRounds>,
    /// Clean reviews the reviewer flagged (false alarms), summed over trials.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub false_alarms: Option<usize>,
    /// Clean reviews: clean changes times trials.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clean_reviews: Option<usize>,
    /// `falseAlarms / cleanReviews`: with trials, the mean of each clean change's flag rate;
    /// `null` with no clean review.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub false_alarm_rate: Option<f64>,
    /// Wilson 95% interval of the false-alarm rate over the clean changes (with trials, of
    /// the mean, as `recallInterval`: the trials of one change are not independent samples).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub false_alarm_interval: Option<Interval>,
    /// A benchmark's report (`revcal bench standard`): recall per language, category and
    /// kind, and before and after a date, each with its interval over plants.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub benchmark: Option<BenchmarkFigures>,
}

/// What became of the clean rounds asked for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CleanRounds {
    /// Clean rounds asked for (`--clean-rounds`).
    pub requested: usize,
    /// Clean changes reviewed: fewer than asked when the targets hold fewer sites for a
    /// neutral edit, or some failed the build check.
    pub changes: usize,
    /// Neutral edits chosen but not reviewed, with the reason.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub excluded: Vec<CleanExcluded>,
}

/// A neutral edit left out of the clean rounds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CleanExcluded {
    /// In a suite's report: the entry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entry: Option<String>,
    /// Its file.
    pub file: String,
    /// Its line.
    pub line: u32,
    /// Why (`build: ...`).
    pub reason: String,
}

/// What a suite's report says about the suite itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SuiteSummary {
    /// The suite's hash (`sha256:` of the suite file and its plants files).
    pub hash: String,
    /// Work units (entry x trial) in the suite.
    pub units: usize,
    /// Units that ended in an error: not counted as misses or catches; the run exits 1.
    #[serde(default)]
    pub unit_errors: Vec<UnitError>,
}

/// A work unit that ended in an error.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UnitError {
    /// The entry's name.
    pub entry: String,
    /// The 1-based trial.
    pub trial: usize,
    /// What went wrong.
    pub error: String,
}

/// Recall of one entry of a suite.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EntryScore {
    /// The entry's name.
    pub name: String,
    /// The commit its plants went into; `null` when no unit of it ran.
    pub commit: Option<String>,
    /// Its trials (work units).
    pub trials: usize,
    /// Plants caught, summed over trials.
    pub caught: usize,
    /// Valid plants times the trials in which each was valid.
    pub total: usize,
    /// caught / total (0 with nothing to catch).
    pub recall: f64,
    /// Wilson 95% interval over this entry's valid plants; `null` with nothing to catch.
    pub recall_interval: Option<Interval>,
    /// Units of this entry that ended in an error.
    pub errors: usize,
}

impl Report {
    /// Compares this report with `baseline` (see [`compare_with_baseline`]), records the
    /// comparison, and fails the gate when recall dropped significantly at `alpha`.
    pub fn compare_with(&mut self, baseline: &Report, alpha: f64) {
        let comparison = compare_with_baseline(baseline, self, alpha);
        if comparison.regression {
            self.gate_pass = false;
        }
        self.baseline = Some(comparison);
    }
}

/// Recall of one bug category.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CategoryScore {
    /// Plants of this category caught (summed over trials).
    pub caught: usize,
    /// Valid plants of this category (times the number of trials).
    pub total: usize,
    /// caught / total.
    pub recall: f64,
}

/// What became of a plant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PlantStatus {
    /// A finding located and identified it (in at least half of the trials).
    Caught,
    /// No finding identified it.
    Missed,
    /// Not counted: its witness did not discriminate (an equivalent mutant), or ran away with
    /// the plant applied (see [`PlantOutcome::excluded_reason`]).
    Excluded,
}

impl PlantStatus {
    /// `caught`, `missed` or `excluded`.
    pub fn name(self) -> &'static str {
        match self {
            PlantStatus::Caught => "caught",
            PlantStatus::Missed => "missed",
            PlantStatus::Excluded => "excluded",
        }
    }
}

/// What became of one plant: its entry in the report's `plants`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PlantOutcome {
    /// The file, relative to the repository root.
    pub file: String,
    /// The 1-based line.
    pub line: u32,
    /// The bug category.
    pub category: String,
    /// The mutation operator.
    pub operator: String,
    /// Caught, missed or excluded.
    pub status: PlantStatus,
    /// The whole line before the change.
    pub original: String,
    /// The whole line after the change.
    pub mutated: String,
    /// What is now wrong, in one sentence.
    pub defect: Option<String>,
    /// A unified diff of the change.
    pub diff: String,
    /// The text of the finding that caught it.
    pub caught_by: Option<String>,
    /// In how many trials it was caught (only with more than one trial).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caught_in_trials: Option<usize>,
    /// In how many trials it was caught by timeout: the finding's repro command passed on
    /// the original and ran past its time limit (twice) with the plant applied; absent when
    /// none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caught_by_timeout: Option<usize>,
    /// Why an excluded plant is not counted, when it is not for being equivalent:
    /// `runaway: ...` or `build: ...`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub excluded_reason: Option<String>,
    /// `synthetic` (a mutant or a hand-written line) or `real` (a bug re-introduced from a
    /// bugs file's patch).
    #[serde(default = "synthetic")]
    pub kind: String,
    /// The last line of a plant over several lines (a real bug), in the planted file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_line: Option<u32>,
    /// The commit that fixed a real bug.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fix_commit: Option<String>,
    /// In a suite's report: the entry the plant belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entry: Option<String>,
}

fn synthetic() -> String {
    "synthetic".into()
}

/// The result of one review run when there were several: an entry of the report's `trials`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TrialOutcome {
    /// 1-based trial number.
    pub trial: usize,
    /// This trial's recall.
    pub recall: f64,
    /// Plants caught in this trial.
    pub caught: usize,
    /// Valid plants.
    pub total: usize,
    /// This trial's precision.
    pub precision: Option<f64>,
    /// This trial's true positives.
    pub true_positives: usize,
    /// This trial's false positives.
    pub false_positives: usize,
    /// The reviewer's exit code in this trial.
    pub review_exit_code: Option<i32>,
    /// This trial's findings (of its planted and clean reviews) set aside as made on the
    /// unplanted change too.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub preexisting: usize,
}

fn is_zero(count: &usize) -> bool {
    *count == 0
}

/// The control reviewers' results (the flow checks them before the review runs, and the
/// report carries them).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Controls {
    /// The echo reviewer: names each plant's file:line and quotes the changed line.
    pub echo: ControlOutcome,
    /// The oracle reviewer: states each defect.
    pub oracle: ControlOutcome,
}

impl Controls {
    /// One message per enforced control that failed, saying what it scored and what it needed.
    pub fn failures(&self) -> Vec<String> {
        [("echo", &self.echo), ("oracle", &self.oracle)]
            .into_iter()
            .filter(|(_, control)| control.enforced && control.passed == Some(false))
            .map(|(name, control)| {
                format!(
                    "the {name} control scored recall {:.2} ({}/{}) but must score {}: the scorer is broken",
                    control.recall.unwrap_or(0.0),
                    control.caught,
                    control.total,
                    control.requirement
                )
            })
            .collect()
    }
}

/// How a control reviewer scored, or why it did not run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ControlOutcome {
    /// Its recall; `null` when it did not run.
    pub recall: Option<f64>,
    /// Plants it caught.
    pub caught: usize,
    /// Plants it was scored on.
    pub total: usize,
    /// What it must score (`<= 0.2`, `1.0`).
    pub requirement: String,
    /// Whether it met the requirement; `null` when it did not run.
    pub passed: Option<bool>,
    /// Whether a failure stops the run (the echo control is not enforced under `string`).
    pub enforced: bool,
    /// Why it did not run, when it did not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_run: Option<String>,
}

impl ControlOutcome {
    /// The largest recall the echo control may score.
    pub const ECHO_MAX_RECALL: f64 = 0.2;

    /// The echo control: passes with recall <= 0.2.
    pub fn echo(caught: usize, total: usize, enforced: bool) -> Self {
        let recall = ratio(caught, total).unwrap_or(0.0);
        ControlOutcome {
            recall: Some(recall),
            caught,
            total,
            requirement: format!("<= {}", Self::ECHO_MAX_RECALL),
            passed: Some(recall <= Self::ECHO_MAX_RECALL),
            enforced,
            not_run: None,
        }
    }

    /// The oracle control: passes when it catches every plant (and there is at least one).
    pub fn oracle(caught: usize, total: usize) -> Self {
        ControlOutcome {
            recall: Some(ratio(caught, total).unwrap_or(0.0)),
            caught,
            total,
            requirement: "1.0".to_string(),
            passed: Some(total > 0 && caught == total),
            enforced: true,
            not_run: None,
        }
    }

    /// A control that did not run, and why: no score, nothing passed or failed.
    pub fn not_run(requirement: &str, reason: impl Into<String>) -> Self {
        ControlOutcome {
            recall: None,
            caught: 0,
            total: 0,
            requirement: requirement.to_owned(),
            passed: None,
            enforced: false,
            not_run: Some(reason.into()),
        }
    }
}

/// `part / whole`, `None` when `whole` is 0: every ratio of a report (recall, precision,
/// findings per plant, agreement) is this.
pub fn ratio(part: usize, whole: usize) -> Option<f64> {
    (whole > 0).then(|| part as f64 / whole as f64)
}
