//! The renderings of a calibration report (revcal-calibrate's [`Report`](revcal_calibrate::Report)): a human summary
//! for the terminal ([`render_human`]), JUnit XML for CI systems ([`render_junit`]) and a
//! self-contained HTML page ([`render_html`]).
//!
//! A renderer only reads a finished report: every figure it shows is the report's own, so
//! the JSON and each rendering of one report never disagree, and a suite's pooled report
//! (revcal-suite) renders like a run's. Text from the reviewer, the repository or a suite
//! file (findings, source lines, file and entry names) is escaped in XML and HTML; the
//! renderers never fail and never print.
//!
//! ```
//! use revcal_calibrate::{FindingOutcome, Gates, Plant, Report, ScorerKind, TrialRecord};
//! use revcal_report::{render_html, render_human, render_junit};
//!
//! let plant = |line, category: &str| Plant::new("src/lib.rs", line, category, "op", "a < b", "a <= b");
//! let mut trial = TrialRecord::new(Some(0));
//! trial.caught_by.insert(0, "off by one at src/lib.rs:3".into());
//! trial.findings = vec![FindingOutcome::TruePositive(0)];
//! let report = Report::builder("abc123", ScorerKind::Judge, Gates { min_recall: 0.5, min_precision: None })
//!     .plant(plant(3, "off-by-one"))
//!     .plant(plant(9, "arithmetic"))
//!     .trial(trial)
//!     .build()
//!     .unwrap();
//! assert!(render_human(&report, false).starts_with("revcal calibrate PASS"));
//! assert!(render_junit(&report).contains(r#"failures="1""#));
//! assert!(render_html(&report).contains("<svg"));
//! ```

mod escape;
mod html;
mod human;
mod junit;

pub use html::render_html;
pub use human::render_human;
pub use junit::render_junit;
