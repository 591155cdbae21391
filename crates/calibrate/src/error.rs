//! The one error type of a calibration run.
//!
//! Messages describe the problem in the product's words; a program that drives the library
//! (the `revcal calibrate` command) adds its own flag names as context. Underlying errors
//! (I/O, git, the judge, the report) are kept as [`source`](std::error::Error::source)s, so
//! print the whole chain.

use std::path::PathBuf;

use crate::plants::{ApplyError, PlantError};
use crate::report::{ControlOutcome, ReportError};
use crate::scoring::ScorerKind;
use revcal_judge::JudgeError;

/// An underlying error of a type the library does not expose (gix, a journal's contents).
pub(crate) type BoxedError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Why a calibration could not produce a trustworthy report. Every variant is an
/// operational error (exit 1 in the CLI); a failed gate is not an error but a report with
/// `gate_pass == false`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CalibrateError {
    /// No reviewer command was given.
    #[error("no reviewer command was given")]
    NoReviewer,
    /// The in-process reviewer (the built-in LLM reviewer) gave no review.
    #[error("reviewer {reviewer} gave no review: {message}")]
    InProcessReview {
        /// Its name.
        reviewer: String,
        /// Why (its whole error chain, in words).
        message: String,
    },
    /// The directory is not inside a git repository.
    #[error("{} is not a git repository: calibration plants bugs in a commit", path.display())]
    NotARepository {
        /// The directory that was given.
        path: PathBuf,
        /// Why it is not one (what gix said).
        #[source]
        source: BoxedError,
    },
    /// A calibration of an earlier release still runs in this repository and holds its
    /// restore journal: its run restores the files itself.
    #[error(
        "another calibration (process {pid}) is running in this repository and holds its restore journal at {}; wait for it to finish",
        .journal.display()
    )]
    Busy {
        /// The process that holds the journal.
        pid: u32,
        /// The journal directory.
        journal: PathBuf,
    },
    /// A git operation failed.
    #[error("git: cannot {operation}")]
    Git {
        /// What was being done (`resolve \`HEAD~3\``, `read the index`, ...).
        operation: String,
        /// What git (gix, or the `git` command) said.
        #[source]
        source: BoxedError,
    },
    /// The commit touches no eligible file and no eligible fallback files were given.
    #[error(
        "commit {} changes no eligible source file ({changed} changed file(s): Rust, JavaScript, TypeScript, Python, Java and Go sources count, tests and configuration do not){}",
        crate::targets::short(commit),
        if fallback.is_empty() {
            "; name fallback target files".to_owned()
        } else {
            format!("; none of the fallback target files ({}) is eligible either", fallback.join(", "))
        }
    )]
    NoTargets {
        /// The commit's full id.
        commit: String,
        /// How many files it changed (none of them eligible).
        changed: usize,
        /// The fallback target files given (none of them eligible).
        fallback: Vec<String>,
    },
    /// A file named as a target breaks the rule for files calibration may write to.
    #[error(
        "{path} cannot be planted in: {reason} (calibration plants only in regular files of the commit, reached without a symbolic link)"
    )]
    Untargetable {
        /// The path as it was given.
        path: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A plants file could not be read or one of its entries is wrong.
    #[error(transparent)]
    Plants(#[from] PlantError),
    /// A plant could not be applied to its file.
    #[error("cannot plant into {file}")]
    ApplyPlant {
        /// The file, relative to the work tree.
        file: String,
        /// Why the plant does not fit the file's current content.
        #[source]
        source: ApplyError,
    },
    /// Fewer valid plants than required.
    #[error(
        "fewer valid plants ({valid}, after excluding {}) than the minimum ({min}): a recall measured on so few bugs says nothing",
        excluded_words(*equivalent, *runaway, *unbuildable)
    )]
    TooFewPlants {
        /// Plants left after the build and witness checks.
        valid: usize,
        /// Plants excluded as equivalent (their witness passes with the plant applied).
        equivalent: usize,
        /// Plants excluded as runaways (their witness or build ran past its time limit,
        /// twice, or past the memory cap, with the plant applied).
        runaway: usize,
        /// Plants excluded because the build fails with them applied.
        unbuildable: usize,
        /// The minimum asked for.
        min: usize,
    },
    /// The build command fails on the original tree, before any plant: nothing can be
    /// measured against a build that is already broken.
    #[error(
        "the build command `{command}` fails on the original tree ({status}), before any plant; it ran outside the sandbox, with your environment, network and caches, in a copy of the commit's files{}",
        last_lines(.output)
    )]
    BuildFails {
        /// The command.
        command: String,
        /// How it ended.
        status: String,
        /// The last lines it printed (stdout, then stderr).
        output: String,
    },
    /// The judge scorer was chosen but no judge is configured.
    #[error("the judge scorer needs a judge and none is configured; failing closed rather than guessing")]
    NoJudge,
    /// A control run scored outside its bounds: the scorer is broken.
    #[error(
        "the {control} control ({}) scored recall {:.2} under the {scorer} scorer; it must score {}: the scorer is broken",
        control_description(control, *scorer),
        outcome.recall.unwrap_or(0.0),
        outcome.requirement
    )]
    ControlFailed {
        /// `echo` or `oracle`.
        control: &'static str,
        /// What it scored and what it had to.
        outcome: ControlOutcome,
        /// The scorer it ran through.
        scorer: ScorerKind,
    },
    /// The reviewer could not be started.
    #[error("cannot start the reviewer `{command}`")]
    ReviewerStart {
        /// The reviewer's command line.
        command: String,
        /// The operating-system error.
        #[source]
        source: std::io::Error,
    },
    /// The reviewer ran past its time limit; its process group was killed.
    #[error(
        "the reviewer ran past its time limit ({seconds}s) and its process group was killed{}",
        stderr_suffix(stderr)
    )]
    ReviewerTimedOut {
        /// The time limit in seconds.
        seconds: u64,
        /// The last lines of its stderr.
        stderr: String,
    },
    /// The shell could not run the reviewer's command: 127, not found; 126, not executable.
    #[error(
        "the reviewer's command could not run: {} (exit code {code} from the shell running `{command}`){}",
        if *code == 127 { "a program in it was not found" } else { "a program in it is not executable" },
        stderr_suffix(stderr)
    )]
    ReviewerCouldNotRun {
        /// The command as run.
        command: String,
        /// 126 or 127.
        code: i32,
        /// The last lines of its stderr (the shell says which program).
        stderr: String,
    },
    /// The reviewer exited with a code it is not allowed, or was killed by a signal.
    #[error(
        "the reviewer crashed ({status}; the exit codes accepted from it are {}){}",
        join_codes(accepted),
        stderr_suffix(stderr)
    )]
    ReviewerCrashed {
        /// How it ended, in words (`exit code 1`, `killed by signal 9`).
        status: String,
        /// Its exit code, when it exited rather than being killed.
        code: Option<i32>,
        /// The exit codes accepted from the reviewer.
        accepted: Vec<i32>,
        /// The last lines of its stderr.
        stderr: String,
    },
    /// A witness or repro command could not be started.
    #[error("cannot run `{command}`")]
    Command {
        /// The command line.
        command: String,
        /// The operating-system error.
        #[source]
        source: std::io::Error,
    },
    /// A signal asked the run to stop; every review was stopped and the run's scratch
    /// checkouts removed (the user's repository was never written).
    #[error("interrupted by {name}; every review was stopped and its scratch checkout removed")]
    Interrupted {
        /// The signal number.
        signal: i32,
        /// Its name (SIGINT, ...).
        name: &'static str,
    },
    /// Restoring from a journal of an earlier release failed: the journal stays in place.
    #[error("could not restore {}; the restore journal is kept to recover from", path.display())]
    Restore {
        /// The file that could not be restored.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The recovery journal is unreadable.
    #[error("the restore journal at {} is unreadable", path.display())]
    Journal {
        /// The journal file.
        path: PathBuf,
        /// What is wrong with it.
        #[source]
        source: BoxedError,
    },
    /// The commit's tree is one git itself would refuse (a name held twice, a path nested
    /// too deep): it is not checked out.
    #[error("the commit's tree is refused at {path}: {reason}")]
    CraftedTree {
        /// The path (shortened when long).
        path: String,
        /// What is wrong there.
        reason: String,
    },
    /// A commit would make a checkout larger than its limit allows.
    #[error(
        "{what} holds {} MiB, more than the limit of {} MiB",
        size.div_ceil(1 << 20),
        limit >> 20
    )]
    TooLarge {
        /// What is too large (a file of the commit, all the files of a checkout).
        what: String,
        /// Its size in bytes.
        size: u64,
        /// The limit in bytes.
        limit: u64,
    },
    /// A file to plant in (or its place in a scratch copy) is a symbolic link.
    #[error("{} is a symbolic link; calibration plants only in regular files", path.display())]
    Symlink {
        /// The link.
        path: PathBuf,
    },
    /// The signal handlers that stop the reviews on SIGINT, SIGTERM, SIGHUP and every other
    /// signal that would end the process could not be installed.
    #[error(
        "cannot watch for the signals that end a process (SIGINT, SIGTERM, SIGHUP, ...), without which an interrupted run would leave reviewers running and scratch checkouts behind"
    )]
    Signals(#[source] std::io::Error),
    /// Any other I/O failure, with what was being done to which path.
    #[error("cannot {action} {}", path.display())]
    Io {
        /// What was being done (`read`, `write the restore journal in`, ...).
        action: &'static str,
        /// The path it was done to.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The measured outcomes contradict each other (a bug in revcal).
    #[error("cannot build the report")]
    Report(#[source] ReportError),
    /// The judge gave no verdict (fail closed: never a match, and the run stops).
    #[error("the judge gave no verdict")]
    Judge(#[source] JudgeError),
    /// The judge gave no verdict on some questions about the review: they count as not
    /// identified, and the report (which counts them apart from misses) is attached.
    #[error(
        "the judge gave no verdict on {count} question(s) about the review; they are counted as not caught (apart from misses), so the recall is only a lower bound"
    )]
    JudgeErrors {
        /// Questions without a verdict.
        count: usize,
        /// The report of the run, with `judge_errors` set.
        report: Box<crate::report::Report>,
        /// The first judge error.
        #[source]
        source: JudgeError,
    },
}

impl CalibrateError {
    /// Wraps an I/O error with what was being done to which path.
    pub(crate) fn io(
        action: &'static str,
        path: impl Into<PathBuf>,
        source: std::io::Error,
    ) -> CalibrateError {
        CalibrateError::Io { action, path: path.into(), source }
    }

    /// A git failure while doing `operation`.
    pub(crate) fn git(operation: impl Into<String>, source: impl Into<BoxedError>) -> CalibrateError {
        CalibrateError::Git { operation: operation.into(), source: source.into() }
    }
}

/// `2 as equivalent, 1 as a runaway` (or `none`).
fn excluded_words(equivalent: usize, runaway: usize, unbuildable: usize) -> String {
    let mut words = Vec::new();
    if equivalent > 0 {
        words.push(format!("{equivalent} as equivalent"));
    }
    if runaway > 0 {
        words.push(format!("{runaway} as {}", if runaway == 1 { "a runaway" } else { "runaways" }));
    }
    if unbuildable > 0 {
        words.push(format!("{unbuildable} breaking the build"));
    }
    if words.is_empty() { "none".to_owned() } else { words.join(", ") }
}

/// What each control is, for its failure message.
fn control_description(control: &str, scorer: ScorerKind) -> &'static str {
    match (control, scorer) {
        ("echo", _) => "a reviewer that only quotes each changed line",
        (_, ScorerKind::Repro) => "a reviewer that states every defect with its witness as repro",
        _ => "a reviewer that states every defect",
    }
}

/// `; its stderr ends with: ...` when there is a stderr tail.
/// `0, 1 or 2`.
fn join_codes(codes: &[i32]) -> String {
    let words: Vec<String> = codes.iter().map(i32::to_string).collect();
    match words.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => words.join(""),
    }
}

fn stderr_suffix(stderr: &str) -> String {
    if stderr.is_empty() { String::new() } else { format!("; its stderr ends with:\n  {stderr}") }
}

/// `; its last lines:` and the lines, indented, when a command printed any.
fn last_lines(output: &str) -> String {
    if output.trim().is_empty() {
        String::from("; it printed nothing")
    } else {
        format!("; its last lines:\n  {}", output.lines().collect::<Vec<_>>().join("\n  "))
    }
}
