//! Reviewer calibration: plant bugs, run the reviewer in scratch checkouts, parse findings,
//! score recall.
//!
//! A [`Calibration`] takes a commit, plants bugs in the files it changed (chosen by the
//! mutation engine, or read from a plants file), runs the reviewer on scratch checkouts of the
//! planted commit (many reviews at once, each in a checkout of its own), reads the reviewer's
//! findings in whatever format it speaks and scores how many plants it caught. The user's
//! repository is only read (its objects, with gix): nothing is written to its work tree,
//! index, HEAD, refs or stash. [`recover`] puts back what earlier releases, which planted in
//! the work tree, left behind.
//!
//! The public API is what a tool embedding the crate needs, all at the crate root:
//!
//! - running: [`Calibration`] (a builder; [`Calibration::run`] returns a [`Report`]),
//!   [`Progress`] events, [`recover`] and what it did ([`Recovered`]), [`ScorerKind`];
//! - plants: [`Plant`], the one type for a planted bug (chosen by the run, shown to the judge,
//!   recorded in the report);
//! - the report, which is revcal-report's (its model, figures, gate, baseline comparison and
//!   renderings; a tool that only reads or renders reports depends on that crate and builds
//!   neither git nor tree-sitter), re-exported here under the names it always had: [`Report`]
//!   with its records ([`PlantOutcome`], [`PlantStatus`], [`TrialOutcome`], [`CategoryScore`],
//!   [`Controls`], [`ControlOutcome`], [`Interval`]), its builder ([`ReportBuilder`] fed with
//!   [`Plant`]s and [`TrialRecord`]s of [`FindingOutcome`]s) and its comparison with a
//!   baseline ([`Report::compare_with`]); the whole crate is the [`report`] module;
//! - judging: a [`revcal_judge::Judge`] given to [`Calibration::judge`] decides, for the judge
//!   scorer, whether a finding describes a plant ([`JudgedForm::judged`] is what it is told);
//! - findings: read by [`revcal_findings::parse_findings`];
//! - real bugs, in the [`bugs`] module (revcal-bugs' miner, re-exported): [`bugs::BugMiner`]
//!   mines a repository's fixes into [`bugs::Bug`]s; [`bugs::read_bugs_file`] and
//!   [`bugs::write_bugs_yaml`] read and write the bugs file;
//! - for crates built over a calibration run (revcal-suite runs a suite of many commits as
//!   many runs and pools their reports into one): [`jobs::Jobs`], job slots shared by several
//!   runs ([`Calibration::shared_jobs`]); the [`report`] figures (`assemble`,
//!   `Counts`, `scores_by`, `settle`, `ratio`, `wilson_interval_of_mean`, `GATE_EPSILON`), so
//!   that a pooled report is computed by the same code as a run's; and the [`input`] module,
//!   which reads a user's files within a size and nesting limit, the one door to YAML, and
//!   confines the paths they name;
//! - errors: [`CalibrateError`], with [`PlantError`], [`ApplyError`], [`revcal_judge::JudgeError`] and
//!   [`ReportError`] as its sources.
//!
//! Inside, the modules follow the flow (docs/calibration.md#the-flow): `targets` (gix: the
//! commit's changed files) and `tree` (the commit's files, the one rule for targets), `plants`
//! and `selection` (plants files, mutants as plants), witness checks in a `scratch` copy (run
//! in the Landlock `sandbox`), `controls`, the reviews (`jobs`, `rundir`, `slots` and
//! `objects` for the scratch checkouts, `reviews` to run them at once, each `reviewer` run
//! through `revcal_process`, which also ends escaped descendants), the findings read by
//! `revcal_findings`,
//! `scoring` with the `scorers`, `judging` (the judge's questions at once), and `assemble`
//! (a run's records into revcal-report's report); `guard` recovers the journals of earlier
//! releases; `flow` drives them all.
//!
//! ```
//! use revcal_calibrate::{Calibration, ScorerKind};
//! use std::process::Command;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // A repository with one commit.
//! let dir = tempfile::tempdir()?;
//! let repo = dir.path().join("repo");
//! std::fs::create_dir_all(repo.join("src"))?;
//! std::fs::write(repo.join("src/calc.py"), "def add(a, b):\n    return a + b\n")?;
//! for args in [&["init", "-q"][..], &["add", "."], &["-c", "user.name=a", "-c", "user.email=a@b", "commit", "-qm", "calc"]] {
//!     assert!(Command::new("git").args(args).current_dir(&repo).status()?.success());
//! }
//! // One planted bug, with a witness that proves it is a bug.
//! let plants = dir.path().join("plants.yaml");
//! std::fs::write(&plants, "- file: src/calc.py\n  line: 2\n  original: a + b\n  mutated: a - b\n  witness: grep -q 'a + b' src/calc.py\n")?;
//! // A reviewer that reads the code and reports a subtraction, with a repro command that
//! // fails on the bug.
//! let reviewer = r#"grep -q 'a - b' src/calc.py && echo '[{"file": "src/calc.py", "line": 2, "message": "subtracts", "repro": "grep -q \"a + b\" src/calc.py"}]' || echo '[]'"#;
//!
//! let report = Calibration::builder()
//!     .dir(&repo)
//!     .review_cmd(reviewer)
//!     .plants_file(&plants)
//!     .scorer(ScorerKind::Repro)
//!     .min_plants(1)
//!     .run()?;
//! assert_eq!((report.caught, report.total, report.recall), (1, 1, 1.0));
//! assert!(report.gate_pass);
//! // The reviewer ran in a scratch checkout: the repository was never written.
//! assert_eq!(std::fs::read_to_string(repo.join("src/calc.py"))?, "def add(a, b):\n    return a + b\n");
//! # Ok(())
//! # }
//! ```

mod assemble;
mod beneath;
pub mod bugs;
mod cache;
mod checkout;
mod clean;
mod controls;
mod donor;
mod error;
mod flow;
mod guard;
pub mod in_process;
pub mod input;
pub mod jobs;
mod judging;
mod objects;
mod plants;
mod preexisting;
mod reach;
mod review_commit;
mod reviewer;
mod reviews;
mod rundir;
mod scorers;
mod scoring;
mod scratch;
mod selection;
mod slots;
mod targets;
mod tree;

pub use cache::{CachedRepository, CheckoutCache};
pub use checkout::write_checkout;
pub use error::CalibrateError;
pub use flow::{BuildCheck, Calibration, DEFAULT_REPRO_MEMORY, Progress, recover};
pub use guard::Recovered;
pub use plants::{ApplyError, JudgedForm, MAX_PLANTS_FILE_BYTES, Plant, PlantError, check_plants_text};
pub use reach::WITHHELD_VARIABLES;
pub use report::{
    BaselineComparison, CategoryScore, Change, ControlOutcome, Controls, EntryScore, Gates, Interval,
    JudgeChecks, PlantDifference, PlantOutcome, PlantStatus, Report, ReportBuilder, ReportError,
    SuiteSummary, TrialOutcome, TrialRecord, UnitError, compare_with_baseline, plant_differences,
};
/// The calibration report (revcal-report): its model, figures, gate and renderings, under
/// the names this crate has always used.
pub use revcal_report as report;
pub use reviewer::DEFAULT_OK_EXIT_CODES;
pub use scoring::{FindingOutcome, ScorerKind};
pub use tree::{CheckoutLimits, MAX_PATH_DEPTH};
