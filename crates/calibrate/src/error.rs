//! The one error type of a calibration run.

use std::path::PathBuf;

/// Why a calibration could not produce a trustworthy report. Every variant is an
/// operational error (exit 1 in the CLI); a failed gate is not an error but a report with
/// `gate_pass == false`.
#[derive(Debug, thiserror::Error)]
pub enum CalibrateError {
    /// The directory is not inside a git work tree.
    #[error(
        "{path} is not a git repository: calibration plants bugs only where git can prove the tree is restored"
    )]
    NotARepository {
        /// The directory that was given.
        path: PathBuf,
        /// What gix said.
        reason: String,
    },
    /// Tracked files have uncommitted changes; nothing was touched.
    #[error(
        "the work tree has uncommitted changes ({}); commit or stash them first: calibration changes files and must be able to prove it put them back",
        .files.join(", ")
    )]
    DirtyTree {
        /// The changed paths, relative to the work tree (at most a handful).
        files: Vec<String>,
    },
    /// A restore journal from an interrupted run is present.
    #[error(
        "a restore journal from an interrupted run is present at {}: run `revcal calibrate --recover` first",
        .journal.display()
    )]
    JournalPresent {
        /// The journal directory.
        journal: PathBuf,
    },
    /// A git operation failed.
    #[error("git: {0}")]
    Git(String),
    /// The commit touches no eligible file and no fallback files were given.
    #[error("{0}")]
    NoTargets(String),
    /// A plants file could not be read or one of its entries is wrong.
    #[error("{0}")]
    Plants(#[from] crate::plants::PlantError),
    /// Fewer valid plants than required.
    #[error(
        "only {valid} valid plant(s) ({excluded} excluded as equivalent), fewer than --min-plants {min}: a recall measured on so few bugs says nothing"
    )]
    TooFewPlants {
        /// Plants left after the witness check.
        valid: usize,
        /// Plants excluded as equivalent.
        excluded: usize,
        /// The minimum asked for.
        min: usize,
    },
    /// The scorer cannot run (e.g. `judge` without a judge).
    #[error("{0}")]
    Scorer(String),
    /// A control run scored outside its bounds: the scorer is broken.
    #[error("{0}")]
    ControlFailed(String),
    /// The reviewer crashed, timed out or could not be started.
    #[error("{0}")]
    Reviewer(String),
    /// A signal asked the run to stop; the tree was restored.
    #[error("interrupted by {name}; every planted file was restored")]
    Interrupted {
        /// The signal number.
        signal: i32,
        /// Its name (SIGINT, ...).
        name: &'static str,
    },
    /// Restoring failed: the journal stays in place for `--recover`.
    #[error("could not restore {path}: {source}; the journal is kept: run `revcal calibrate --recover`")]
    Restore {
        /// The file that could not be restored.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The recovery journal is unreadable.
    #[error("the restore journal at {path} is unreadable: {reason}")]
    Journal {
        /// The journal file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// Any other I/O failure, with what was being done.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The measured outcomes contradict each other (a bug in revcal).
    #[error("cannot build the report: {0}")]
    Report(String),
    /// The judge failed (fail closed: never a match).
    #[error("judge: {0}")]
    Judge(String),
}

impl CalibrateError {
    /// Wraps an I/O error with what was being done.
    pub(crate) fn io(context: impl Into<String>, source: std::io::Error) -> CalibrateError {
        CalibrateError::Io { context: context.into(), source }
    }
}
