//! The calibration report: its model, its figures and gate, the comparison with a baseline,
//! and its renderings. Every number described in docs/calibration.md#reading-the-report is
//! computed here, in one place; the JSON is the model's (through serde), and a human summary
//! for the terminal ([`render_human`]), JUnit XML for CI systems ([`render_junit`]) and a
//! self-contained HTML page ([`render_html`]) render it.
//!
//! The crate depends on serde, thiserror and revcal-record only: a tool that reads, compares
//! or renders reports builds neither git nor tree-sitter. revcal-calibrate, which runs a
//! calibration and fills the report, re-exports every name below under the same name.
//!
//! The caller records what happened (each [`Plant`], and per trial which plants were caught
//! by which finding and what each finding turned out to be, a [`TrialRecord`] of
//! [`FindingOutcome`]s) and [`ReportBuilder::build`] computes recall, precision, the Wilson
//! interval, per-category scores, judge agreement and the gate. [`Report::compare_with`]
//! compares a report with a baseline and fails the gate on a significant drop.
//!
//! A report pooled from many runs' reports (revcal-suite's, of a suite's units) is computed
//! by the same code: [`assemble`] makes a report's figures (recall, precision, the gate, the
//! recall interval, findings per plant, judge agreement) from its [`Counts`], [`scores_by`]
//! the per-category and per-kind figures, [`settle`] the rounds' numbers, flags and
//! false-alarm figures ([`CleanFigures`]); [`ratio`], [`wilson_interval_of_mean`] and
//! [`GATE_EPSILON`] are the rules they follow, for a caller that checks figures it is given.
//! A benchmark (revcal-bench's) groups a suite's plants by language, category, kind and the
//! date of their fix: [`group_scores`] gives each group's recall and interval, recorded in the
//! report's [`BenchmarkFigures`].
//!
//! A renderer only reads a finished report: every figure it shows is the report's own, so
//! the JSON and each rendering of one report never disagree, and a suite's pooled report
//! renders like a run's. Text from the reviewer, the repository or a suite file (findings,
//! source lines, file and entry names) is escaped in XML and HTML; the renderers never fail
//! and never print.
//!
//! ```
//! use revcal_report::{FindingOutcome, Gates, Plant, PlantStatus, Report, ScorerKind, TrialRecord};
//! use revcal_report::{render_html, render_human, render_junit};
//!
//! let plant = |line, category: &str| Plant::new("src/lib.rs", line, category, "op", "a < b", "a <= b");
//! let mut trial = TrialRecord::new(Some(0));
//! trial.caught_by.insert(0, "off by one at src/lib.rs:3".into());
//! trial.findings = vec![FindingOutcome::TruePositive(0), FindingOutcome::FalsePositive];
//! let report = Report::builder("abc123", ScorerKind::Judge, Gates { min_recall: 0.5, min_precision: None })
//!     .plant(plant(3, "off-by-one"))
//!     .plant(plant(9, "arithmetic"))
//!     .trial(trial)
//!     .build()
//!     .unwrap();
//! assert_eq!((report.caught, report.total, report.recall), (1, 2, 0.5));
//! assert_eq!(report.precision, Some(0.5));
//! assert!(report.gate_pass);
//! assert_eq!(report.plants[1].status, PlantStatus::Missed);
//!
//! assert!(render_human(&report, false).starts_with("revcal calibrate PASS"));
//! assert!(render_junit(&report).contains(r#"failures="1""#));
//! assert!(render_html(&report).contains("<svg"));
//! ```

mod baseline;
mod benchmark;
mod builder;
mod escape;
mod html;
mod human;
mod junit;
mod model;
mod plant;
mod rounds;
mod scorer;
mod wilson;

pub use baseline::{BaselineComparison, Change, PlantDifference, compare_with_baseline, plant_differences};
pub use benchmark::{BenchmarkFigures, GroupMember, GroupScore, group_score, group_scores};
pub use builder::{Counts, GATE_EPSILON, assemble, scores_by};
pub use builder::{Gates, JudgeChecks, ReportBuilder, ReportError, TrialRecord};
pub use html::render_html;
pub use human::render_human;
pub use junit::render_junit;
pub use model::{
    CategoryScore, CleanExcluded, CleanRounds, ControlOutcome, Controls, EntryScore, PlantOutcome,
    PlantStatus, Report, SuiteSummary, TrialOutcome, UnitError, ratio,
};
pub use plant::{Plant, PlantEdit, PlantSpan};
pub use revcal_record::JudgeUsage;
pub use rounds::{CleanFigures, settle};
pub use rounds::{
    LocatedFinding, MAX_FINDING_CHARS, MAX_ROUND_FINDINGS, ReviewRound, RoundPlant, RoundStatus, RoundTrial,
    TouchedLines, keep_findings, locates_lines,
};
pub use scorer::{FindingOutcome, ScorerKind};
pub use wilson::Interval;
pub use wilson::wilson_interval_of_mean;
