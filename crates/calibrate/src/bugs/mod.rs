//! Real bugs as plants: mine a repository's history for fixes that came with a test, and
//! verify each by re-introducing it (Defects4J's method).
//!
//! A candidate is a non-merge commit that changes 1-3 source files in a supported language
//! with a dozen changed lines or fewer, adds or changes a test file, and touches nothing else
//! but docs ([`history`]). Each candidate is verified in a scratch clone that shares the
//! repository's objects (the user's work tree and refs are never touched): at the fix commit
//! F the test command runs once, F's source hunks are reversed, the build is checked, the
//! tests run again; the tests that fail with the bug and passed at F are the trigger, and
//! the command restricted to them ([`runner`]) is the witness. The witness is rerun at F and
//! with the bug to rule out a flaky test, and the reversal must apply to the target commit:
//! the bugs file holds it as a patch against the target.

mod file;
mod history;
mod patch;

pub(crate) use patch::hunks;
mod runner;
mod shape;
mod verify;

pub use file::{Bug, read_bugs_file, write_bugs_yaml};
pub use runner::Ecosystem;

use crate::signals::SignalWatch;
use history::{CandidateRule, candidate};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Why mining could not run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BugsError {
    /// A git command failed.
    #[error("git {args} in {}: {message}", dir.display())]
    Git {
        /// Where it ran.
        dir: PathBuf,
        /// Its arguments.
        args: String,
        /// What git printed (or why it could not start).
        message: String,
    },
    /// A scratch directory or a test command could not be set up.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A signal asked revcal to stop; the scratch clones were removed.
    #[error("stopped by {name}")]
    Interrupted {
        /// The signal's number.
        signal: i32,
        /// The signal's name.
        name: &'static str,
    },
}

/// Runs git in `dir` and returns its standard output.
pub(crate) fn git(dir: &Path, args: &[String]) -> Result<Vec<u8>, BugsError> {
    let output = std::process::Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| BugsError::Git {
            dir: dir.to_path_buf(),
            args: args.join(" "),
            message: e.to_string(),
        })?;
    if !output.status.success() {
        return Err(BugsError::Git {
            dir: dir.to_path_buf(),
            args: args.join(" "),
            message: String::from_utf8_lossy(&output.stderr).trim().to_owned(),
        });
    }
    Ok(output.stdout)
}

/// Why a candidate was not kept.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "reason", rename_all = "kebab-case")]
#[non_exhaustive]
pub enum RejectReason {
    /// The tree at the fix has no known test setup and no `--test-cmd` was given.
    NoTestCommand,
    /// The fix's source hunks do not reverse onto the target commit (the code moved on).
    ReversalDoesNotApply {
        /// What `git apply` said.
        detail: String,
    },
    /// The code does not build with the fix reversed (no review target), or already not
    /// at the fix (an old fix and today's tools).
    BuildBreaks {
        /// Which build failed, and the end of its output.
        detail: String,
    },
    /// No test fails with the bug that passed at the fix.
    NoTestFlips {
        /// What the runs showed.
        detail: String,
    },
    /// The witness does not give the same answer on a rerun.
    Flaky {
        /// Which rerun disagreed.
        detail: String,
    },
    /// A test run went past `--test-timeout`.
    TimedOut {
        /// Which run.
        detail: String,
    },
}

impl RejectReason {
    /// The reason's kebab-case name (as in the JSON).
    pub fn name(&self) -> &'static str {
        match self {
            RejectReason::NoTestCommand => "no-test-command",
            RejectReason::ReversalDoesNotApply { .. } => "reversal-does-not-apply",
            RejectReason::BuildBreaks { .. } => "build-breaks",
            RejectReason::NoTestFlips { .. } => "no-test-flips",
            RejectReason::Flaky { .. } => "flaky",
            RejectReason::TimedOut { .. } => "timed-out",
        }
    }
}

impl std::fmt::Display for RejectReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RejectReason::NoTestCommand => {
                write!(f, "no test command: no Cargo.toml, Python project file or package.json at the fix")
            }
            RejectReason::ReversalDoesNotApply { detail } => {
                write!(f, "the reversal does not apply to the target: {detail}")
            }
            RejectReason::BuildBreaks { detail } => {
                write!(f, "the build breaks {detail}")
            }
            RejectReason::NoTestFlips { detail } => write!(f, "no test flips: {detail}"),
            RejectReason::Flaky { detail } => write!(f, "flaky: {detail}"),
            RejectReason::TimedOut { detail } => write!(f, "timed out: {detail}"),
        }
    }
}

/// A candidate that was verified and not kept.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Rejection {
    /// The fix commit.
    pub fix_commit: String,
    /// Its subject line.
    pub fix_subject: String,
    /// Why it was not kept.
    #[serde(flatten)]
    pub reason: RejectReason,
}

/// What mining found.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MineReport {
    /// The repository's root.
    pub repo: PathBuf,
    /// The commit the patches apply to.
    pub target: String,
    /// Commits read from the history.
    pub scanned: usize,
    /// Commits that passed the candidate rule.
    pub candidates: usize,
    /// Candidates left unverified because `max` bugs were found first.
    pub unverified: usize,
    /// The bugs kept, newest fix first.
    pub verified: Vec<Bug>,
    /// The candidates not kept, with their reasons, newest first.
    pub rejected: Vec<Rejection>,
    /// Wall time in seconds.
    pub seconds: f64,
}

/// A step of mining, for progress display.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum MineEvent {
    /// The history was read.
    Scanned {
        /// Commits read.
        commits: usize,
        /// Candidates among them (before `max`).
        candidates: usize,
    },
    /// One candidate's verification ended.
    Checked {
        /// How many candidates have ended so far.
        done: usize,
        /// Candidates to verify.
        total: usize,
        /// The fix commit.
        fix_commit: String,
        /// Its subject.
        subject: String,
        /// `None` when kept, else why not.
        rejected: Option<RejectReason>,
        /// Time the verification took.
        elapsed: Duration,
    },
}

/// Mines a repository's history for real bugs; see the [module documentation](self).
///
/// ```no_run
/// use revcal_calibrate::BugMiner;
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let report = BugMiner::new("path/to/repo").max_bugs(10).jobs(2).mine(&mut |_event| {})?;
/// println!("{} of {} candidates verified", report.verified.len(), report.candidates);
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct BugMiner {
    repo: PathBuf,
    range: Option<String>,
    max_commits: usize,
    max_bugs: Option<usize>,
    test_cmd: Option<String>,
    build_cmd: Option<String>,
    jobs: usize,
    test_timeout: Duration,
    target: String,
    rule: CandidateRule,
}

/// The number of commits read when no range is given.
pub const DEFAULT_MAX_COMMITS: usize = 2000;

impl BugMiner {
    /// A miner for the repository at `repo`, with the defaults: the last
    /// [`DEFAULT_MAX_COMMITS`] commits of HEAD, patches against HEAD, the ecosystem's test
    /// command, one job, ten minutes per test run.
    pub fn new(repo: impl Into<PathBuf>) -> BugMiner {
        BugMiner {
            repo: repo.into(),
            range: None,
            max_commits: DEFAULT_MAX_COMMITS,
            max_bugs: None,
            test_cmd: None,
            build_cmd: None,
            jobs: 1,
            test_timeout: Duration::from_secs(600),
            target: "HEAD".into(),
            rule: CandidateRule { max_source_files: 3, max_changed_lines: 12 },
        }
    }

    /// A `git log` range (`v1.0..HEAD`); all of it is read.
    pub fn range(mut self, range: impl Into<String>) -> Self {
        self.range = Some(range.into());
        self
    }

    /// How many commits of HEAD to read when no range is given.
    pub fn max_commits(mut self, commits: usize) -> Self {
        self.max_commits = commits;
        self
    }

    /// Stop once this many bugs are verified (newest fixes first).
    pub fn max_bugs(mut self, bugs: usize) -> Self {
        self.max_bugs = Some(bugs);
        self
    }

    /// The test command (a shell script run at the repository root).
    pub fn test_cmd(mut self, cmd: impl Into<String>) -> Self {
        self.test_cmd = Some(cmd.into());
        self
    }

    /// The build check run after the fix is reversed (exit 0: it builds).
    pub fn build_cmd(mut self, cmd: impl Into<String>) -> Self {
        self.build_cmd = Some(cmd.into());
        self
    }

    /// Candidates verified at once, each in its own scratch clone.
    pub fn jobs(mut self, jobs: usize) -> Self {
        self.jobs = jobs.max(1);
        self
    }

    /// Time limit of one test (or build) run.
    pub fn test_timeout(mut self, timeout: Duration) -> Self {
        self.test_timeout = timeout;
        self
    }

    /// The commit the bugs file's patches apply to (default HEAD).
    pub fn target(mut self, rev: impl Into<String>) -> Self {
        self.target = rev.into();
        self
    }

    /// The largest fix: source files and changed source lines (added plus deleted).
    pub fn max_fix_size(mut self, files: usize, lines: u32) -> Self {
        self.rule = CandidateRule { max_source_files: files, max_changed_lines: lines };
        self
    }

    /// Reads the history, verifies the candidates and reports; `progress` hears of each step.
    pub fn mine(&self, progress: &mut dyn FnMut(MineEvent)) -> Result<MineReport, BugsError> {
        let started = Instant::now();
        let signals = SignalWatch::install()
            .map_err(|source| BugsError::Io { what: "install the signal handlers".into(), source })?;
        // The clones are made from elsewhere: they need the work tree's root, absolute.
        let root = git(&self.repo, &["rev-parse".into(), "--show-toplevel".into()])?;
        let repo = PathBuf::from(String::from_utf8_lossy(&root).trim());
        let target = String::from_utf8_lossy(&git(
            &repo,
            &["rev-parse".into(), "--verify".into(), format!("{}^{{commit}}", self.target)],
        )?)
        .trim()
        .to_owned();
        let (range, limit) = match &self.range {
            Some(range) => (range.clone(), None),
            None => (target.clone(), Some(self.max_commits)),
        };
        let commits = history::log(&repo, &range, limit)?;
        let candidates: Vec<history::Candidate> = commits
            .iter()
            .filter_map(|commit| match candidate(commit, self.rule) {
                Ok(found) => Some(found),
                Err(why) => {
                    tracing::trace!(commit = %commit.id, why, "not a candidate");
                    None
                }
            })
            .collect();
        tracing::info!(commits = commits.len(), candidates = candidates.len(), "history read");
        progress(MineEvent::Scanned { commits: commits.len(), candidates: candidates.len() });

        let settings = verify::Settings {
            repo: &repo,
            target: &target,
            test_cmd: self.test_cmd.as_deref(),
            build_cmd: self.build_cmd.as_deref(),
            timeout: self.test_timeout,
        };
        let results = self.verify_all(&candidates, &settings, &signals, progress)?;
        let mut verified = Vec::new();
        let mut rejected = Vec::new();
        let mut unverified = 0;
        for (candidate, result) in candidates.iter().zip(results) {
            match result {
                Some(Ok(bug)) => verified.push(bug),
                Some(Err(reason)) => rejected.push(Rejection {
                    fix_commit: candidate.id.clone(),
                    fix_subject: candidate.subject.clone(),
                    reason,
                }),
                None => unverified += 1,
            }
        }
        Ok(MineReport {
            repo,
            target,
            scanned: commits.len(),
            candidates: candidates.len(),
            unverified,
            verified,
            rejected,
            seconds: started.elapsed().as_secs_f64(),
        })
    }

    /// Verifies candidates on `jobs` threads, newest first, until `max_bugs` are kept; the
    /// result for each candidate is in its position (`None`: not verified).
    fn verify_all(
        &self,
        candidates: &[history::Candidate],
        settings: &verify::Settings<'_>,
        signals: &SignalWatch,
        progress: &mut dyn FnMut(MineEvent),
    ) -> Result<Vec<Option<Result<Bug, RejectReason>>>, BugsError> {
        let next = Mutex::new(0usize);
        let kept = Mutex::new(0usize);
        // Set when a verification could not run: the other threads stop at their next pick.
        let failed = AtomicBool::new(false);
        let (sender, receiver) =
            mpsc::channel::<(usize, Result<Result<Bug, RejectReason>, BugsError>, Duration)>();
        let mut results: Vec<Option<Result<Bug, RejectReason>>> = vec![None; candidates.len()];
        let mut failure = None;
        std::thread::scope(|scope| {
            for _ in 0..self.jobs.min(candidates.len()) {
                let sender = sender.clone();
                let (next, kept, failed) = (&next, &kept, &failed);
                scope.spawn(move || {
                    let mut workspace = None;
                    loop {
                        let index = {
                            let Ok(mut next) = next.lock() else { return };
                            let enough =
                                self.max_bugs.is_some_and(|max| kept.lock().map_or(true, |k| *k >= max));
                            let stopped = failed.load(Ordering::SeqCst) || signals.received().is_some();
                            if *next >= candidates.len() || enough || stopped {
                                return;
                            }
                            *next += 1;
                            *next - 1
                        };
                        let started = Instant::now();
                        let result = match &mut workspace {
                            Some(workspace) => Ok(workspace),
                            None => verify::Workspace::new(settings.repo).map(|made| workspace.insert(made)),
                        }
                        .and_then(|workspace| {
                            verify::verify(&candidates[index], settings, workspace, signals)
                        });
                        if matches!(result, Ok(Ok(_)))
                            && let Ok(mut kept) = kept.lock()
                        {
                            *kept += 1;
                        }
                        let stop = result.is_err();
                        if stop {
                            failed.store(true, Ordering::SeqCst);
                        }
                        if sender.send((index, result, started.elapsed())).is_err() || stop {
                            return;
                        }
                    }
                });
            }
            drop(sender);
            for (done, (index, result, elapsed)) in (1..).zip(receiver) {
                match result {
                    Ok(outcome) => {
                        progress(MineEvent::Checked {
                            done,
                            total: candidates.len(),
                            fix_commit: candidates[index].id.clone(),
                            subject: candidates[index].subject.clone(),
                            rejected: outcome.as_ref().err().cloned(),
                            elapsed,
                        });
                        results[index] = Some(outcome);
                    }
                    Err(error) => {
                        failure.get_or_insert(error);
                    }
                }
            }
        });
        if let Some(signal) = signals.received() {
            return Err(BugsError::Interrupted { signal, name: crate::signals::name(signal) });
        }
        match failure {
            Some(error) => Err(error),
            None => Ok(results),
        }
    }
}
