//! Calibration suites: one reviewer over many commits of many repositories, spread over
//! machines by shards and merged into one report (docs/suites.md).
//!
//! A suite's work units are its entries times their trials. Each unit is a single
//! [`Calibration`] run (revcal-calibrate) on the entry's commit (its reviews in scratch
//! checkouts, never the user's tree); its [`Report`] is kept whole. Units run at once, sharing
//! one pool of job slots ([`revcal_calibrate::jobs::Jobs`]): at most `--jobs` reviews in all.
//! [`run_units`] runs a list of units ([`Shard::select`] picks a shard's), a [`ShardResult`]
//! carries them to another machine, [`merge`] checks that the shard results make up the whole
//! suite, and the pooled report is computed from the units alone, in the suite's order, so
//! that merged shards print exactly what the unsharded run prints. The pooled figures are
//! calibrate's own ([`revcal_calibrate::report::assemble`] and its neighbours): a suite's
//! report and a run's are computed by the same code.
//!
//! The public API: the suite file ([`Suite`], [`SuiteEntry`], [`RepoSource`],
//! [`MAX_SUITE_FILE_BYTES`]); its units ([`Unit`], [`Suite::units`]) and their outcomes
//! ([`UnitResult`], [`SuiteEvent`]); running them ([`run_units`]) and the report of a whole
//! suite ([`suite_report`]); shards ([`Shard`], [`ShardResult`], [`EntryPlan`],
//! [`SHARD_FORMAT`], [`MAX_SHARD_FILE_BYTES`]) and their merge ([`merge`], [`Merged`]); an
//! entry's repository and a clean checkout of one of its commits, for tools that run
//! commands there ([`locate_repository`], [`check_out`], [`Checkout`]: revcal-bench's set-up
//! and fix dates); errors ([`SuiteError`]; a signal stops a run with [`CalibrateError::Interrupted`]).
//!
//! ```
//! use revcal_calibrate::{Calibration, Gates, ScorerKind};
//! use revcal_suite::{Shard, ShardResult, Suite, merge, run_units, suite_report};
//! use std::process::Command;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // A repository with one commit, in the suite's directory.
//! let dir = tempfile::tempdir()?;
//! let repo = dir.path().join("calc");
//! std::fs::create_dir_all(repo.join("src"))?;
//! std::fs::write(repo.join("src/calc.py"), "def add(a, b):\n    return a + b\n")?;
//! for args in [&["init", "-q"][..], &["add", "."], &["-c", "user.name=a", "-c", "user.email=a@b", "commit", "-qm", "calc"]] {
//!     assert!(Command::new("git").args(args).current_dir(&repo).status()?.success());
//! }
//! // One planted bug, and a suite of one entry reviewed twice.
//! std::fs::write(dir.path().join("plants.yaml"), "- file: src/calc.py\n  line: 2\n  original: a + b\n  mutated: a - b\n  witness: grep -q 'a + b' src/calc.py\n")?;
//! std::fs::write(dir.path().join("suite.yaml"), "entries:\n  - {repo: calc, plants_file: plants.yaml, trials: 2}\n")?;
//! let suite = Suite::read(&dir.path().join("suite.yaml"))?;
//! assert_eq!(suite.units().len(), 2);
//!
//! // Every unit, each a calibration set up by `configure` (here: a reviewer that reads the
//! // code and reports a subtraction, with a repro command that fails on the bug).
//! let reviewer = r#"grep -q 'a - b' src/calc.py && echo '[{"file": "src/calc.py", "line": 2, "message": "subtracts", "repro": "grep -q \"a + b\" src/calc.py"}]' || echo '[]'"#;
//! let gates = Gates { min_recall: 0.5, min_precision: None };
//! let configure = || Calibration::builder().review_cmd(reviewer).scorer(ScorerKind::Repro).min_plants(1).jobs(1);
//! let units = run_units(&suite, &suite.units(), &dir.path().join("repos"), &configure, &mut |_| {})?;
//! let report = suite_report(&suite, &units, gates, ScorerKind::Repro);
//! assert_eq!((report.caught, report.total, report.gate_pass), (2, 2, true));
//!
//! // The same units as two shards (each would run on a machine of its own), merged: the
//! // same report.
//! let shards = (1..=2).map(|index| {
//!     let shard = Shard { index, count: 2 };
//!     let mine = units.iter().filter(|u| shard.select(&suite.units()).iter().any(|s| s.trial == u.trial)).cloned().collect();
//!     (format!("shard{index}.json").into(), ShardResult::new(&suite, shard, serde_json::Value::Null, gates, ScorerKind::Repro, mine))
//! });
//! assert_eq!(merge(shards.collect())?.report(), report);
//! # Ok(())
//! # }
//! ```

mod checkout;
mod file;
mod pool;
mod shard;

pub use checkout::{Checkout, check_out, locate_repository};
pub use file::{MAX_SUITE_FILE_BYTES, RepoSource, Suite, SuiteEntry};
pub use shard::{MAX_SHARD_FILE_BYTES, Merged, SHARD_FORMAT, Shard, ShardResult, merge};

use std::path::{Path, PathBuf};
use std::sync::{Arc, mpsc};

use serde::{Deserialize, Serialize};

use revcal_calibrate::jobs::Jobs;
use revcal_calibrate::{CalibrateError, Calibration, Gates, Report, ScorerKind};

/// Why a suite cannot be read, run or merged.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SuiteError {
    /// The suite file cannot be read.
    #[error("cannot read suite file {}", path.display())]
    Read {
        /// The suite file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The suite file is not a valid suite.
    #[error("{}: {message}", path.display())]
    File {
        /// The suite file.
        path: PathBuf,
        /// What is wrong, naming the entry and field.
        message: String,
    },
    /// An entry's repository cannot be used.
    #[error("repository {repo}: {message}")]
    Repository {
        /// The repository as the suite names it.
        repo: String,
        /// What went wrong.
        message: String,
    },
    /// A shard result file that is not one (its JSON, its size).
    #[error("{}: {message}", path.display())]
    Shard {
        /// The shard file.
        path: PathBuf,
        /// What is wrong, naming the line and field.
        message: String,
    },
    /// Shard results that do not make up one suite run.
    #[error("{message}")]
    Merge {
        /// Which shards, and what is wrong with them.
        message: String,
    },
}

/// One work unit: a trial of an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Unit {
    /// Index of the entry in the suite.
    pub entry: usize,
    /// 1-based trial.
    pub trial: usize,
}

/// What a shard result records of each entry: enough to pool without the suite file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EntryPlan {
    /// The entry's name.
    pub name: String,
    /// Its trials.
    pub trials: usize,
}

/// The outcome of one work unit: the single run's report, or the error that ended it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UnitResult {
    /// The entry's name.
    pub entry: String,
    /// The 1-based trial.
    pub trial: usize,
    /// The run's report (one trial).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub report: Option<Report>,
    /// The error that ended the run (its units count neither as misses nor as catches).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// A suite run's progress, for the caller to show.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SuiteEvent {
    /// A unit starts: its position among the units being run.
    UnitStarted {
        /// 1-based position.
        number: usize,
        /// Units being run.
        of: usize,
        /// The entry's name.
        entry: String,
        /// The trial.
        trial: usize,
    },
    /// A unit ended in an error (it will be listed in the report, not counted).
    UnitFailed {
        /// The entry's name.
        entry: String,
        /// The trial.
        trial: usize,
        /// What went wrong.
        error: String,
    },
}

/// An error and its sources, as one line, redacted: it is shown, and stored in shard files
/// and reports (a reviewer's stderr in it may print a key; a repository URL, a token).
fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(next) = source {
        text.push_str(": ");
        text.push_str(&next.to_string());
        source = next.source();
    }
    revcal_process::redact_url_credentials(&text).into_owned()
}

/// Runs `units` of `suite`, each as one [`Calibration`] from `configure` (the reviewer, scorer,
/// judge, gates, limits and jobs; this sets the directory, commit, plants, seed and one trial)
/// at the entry's commit. URL repositories are cloned into `repos_dir`
/// once. Units run at once, up to the calibration's jobs, and share one pool of job slots;
/// with more than one job, the units' own progress events are not sent (they would
/// interleave): `on_event` reports each unit.
///
/// A unit that fails is recorded with its error and the next one runs; only a signal stops
/// the run (`Err(CalibrateError::Interrupted)`, every review stopped and the scratch
/// checkouts removed). The results are in the order of `units`.
pub fn run_units(
    suite: &Suite,
    units: &[Unit],
    repos_dir: &Path,
    configure: &dyn Fn() -> Calibration,
    on_event: &mut dyn FnMut(SuiteEvent),
) -> Result<Vec<UnitResult>, CalibrateError> {
    let template = configure();
    let jobs = Jobs::new(template.jobs_count())?;
    // Every unit of a repository shares its slots: kept in the checkout cache between units
    // (and runs) when the calibrations keep them.
    let jobs = Arc::new(match template.kept_checkouts() {
        Some(cache) => jobs.with_checkout_cache(cache.clone()),
        None => jobs,
    });
    let mut located: Vec<Option<Result<(PathBuf, String), String>>> = vec![None; suite.entries.len()];
    let mut outcomes: Vec<Option<Result<Report, UnitFailure>>> = (0..units.len()).map(|_| None).collect();
    let mut interrupted = None;
    std::thread::scope(|scope| {
        let (sender, receiver) = mpsc::channel::<(usize, Result<Report, UnitFailure>)>();
        let (mut next, mut running) = (0usize, 0usize);
        loop {
            while interrupted.is_none() && next < units.len() && running < jobs.count() {
                let (position, unit) = (next, units[next]);
                next += 1;
                let entry = &suite.entries[unit.entry];
                on_event(SuiteEvent::UnitStarted {
                    number: position + 1,
                    of: units.len(),
                    entry: entry.name.clone(),
                    trial: unit.trial,
                });
                let source = located[unit.entry]
                    .get_or_insert_with(|| {
                        checkout::locate_repository(&entry.repo, &entry.commit, repos_dir)
                            .map_err(|e| chain(&e))
                    })
                    .clone();
                let (repo, commit) = match source {
                    Ok(found) => found,
                    Err(error) => {
                        outcomes[position] = Some(Err(UnitFailure::Failed(error)));
                        report_failure(
                            &suite.entries[unit.entry],
                            unit,
                            outcomes[position].as_ref(),
                            on_event,
                        );
                        continue;
                    }
                };
                let mut calibration = configure().shared_jobs(Arc::clone(&jobs));
                if jobs.count() > 1 {
                    calibration = calibration.on_progress(|_| {});
                }
                let sender = sender.clone();
                scope.spawn(move || {
                    let outcome = run_unit(entry, &repo, commit, calibration);
                    let _ = sender.send((position, outcome));
                });
                running += 1;
            }
            if running == 0 {
                break;
            }
            let Ok((position, outcome)) = receiver.recv() else { break };
            running -= 1;
            match outcome {
                Err(UnitFailure::Interrupted(error)) => {
                    interrupted.get_or_insert(error);
                }
                outcome => {
                    let unit = units[position];
                    outcomes[position] = Some(outcome);
                    report_failure(&suite.entries[unit.entry], unit, outcomes[position].as_ref(), on_event);
                }
            }
        }
    });
    if let Some(error) = interrupted {
        return Err(error);
    }
    let mut results = Vec::with_capacity(units.len());
    for (unit, outcome) in units.iter().zip(outcomes) {
        let entry = &suite.entries[unit.entry];
        let (report, error) = match outcome {
            Some(Ok(report)) => (Some(report), None),
            Some(Err(UnitFailure::Failed(error))) => (None, Some(error)),
            Some(Err(UnitFailure::Interrupted(error))) => return Err(error),
            None => (None, Some("the unit did not run".to_owned())),
        };
        results.push(UnitResult { entry: entry.name.clone(), trial: unit.trial, report, error });
    }
    Ok(results)
}

/// Tells `on_event` that a unit failed, when it did.
fn report_failure(
    entry: &SuiteEntry,
    unit: Unit,
    outcome: Option<&Result<Report, UnitFailure>>,
    on_event: &mut dyn FnMut(SuiteEvent),
) {
    if let Some(Err(UnitFailure::Failed(error))) = outcome {
        on_event(SuiteEvent::UnitFailed {
            entry: entry.name.clone(),
            trial: unit.trial,
            error: error.clone(),
        });
    }
}

/// How a unit did not give a report.
enum UnitFailure {
    /// A signal: the suite stops.
    Interrupted(CalibrateError),
    /// Anything else: recorded, and the suite goes on.
    Failed(String),
}

/// One unit: `calibration`, single-trial, of `entry` at `commit` of `repo` (only its objects
/// are read: each review has a scratch checkout of its own).
fn run_unit(
    entry: &SuiteEntry,
    repo: &Path,
    commit: String,
    calibration: Calibration,
) -> Result<Report, UnitFailure> {
    let mut calibration = calibration
        .dir(repo)
        .commit(commit)
        .files(entry.files.clone())
        .seed(entry.seed)
        .one_at_a_time(entry.one_at_a_time)
        .clean_rounds(entry.clean_rounds)
        .trials(1);
    if let Some(plants) = entry.plants {
        calibration = calibration.plants(plants);
    }
    if let Some(file) = &entry.plants_file {
        calibration = calibration.plants_file(file).also_synthetic(entry.plants.is_some());
    }
    if let Some(command) = &entry.build_cmd {
        calibration = calibration.build_check(revcal_calibrate::BuildCheck::Command(command.clone()));
    }
    calibration.run().map_err(|error| match error {
        CalibrateError::Interrupted { .. } => UnitFailure::Interrupted(error),
        error => UnitFailure::Failed(chain(&error)),
    })
}

impl ShardResult {
    /// The result of `shard` of `suite`: its units' outcomes and what merge checks.
    pub fn new(
        suite: &Suite,
        shard: Shard,
        settings: serde_json::Value,
        gates: Gates,
        scorer: ScorerKind,
        units: Vec<UnitResult>,
    ) -> ShardResult {
        ShardResult {
            format: SHARD_FORMAT.to_owned(),
            revcal_version: env!("CARGO_PKG_VERSION").to_owned(),
            suite_hash: suite.hash.clone(),
            entries: suite.plan(),
            settings,
            gates,
            scorer,
            shard,
            units,
            regression_alpha: None,
        }
    }
}

/// The report of a whole suite from all of its units (the unsharded run's report; merged
/// shards give the same through [`Merged::report`]).
pub fn suite_report(suite: &Suite, units: &[UnitResult], gates: Gates, scorer: ScorerKind) -> Report {
    pool::pool(&suite.hash, &suite.plan(), units, gates, scorer)
}
