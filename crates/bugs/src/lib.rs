//! Real bugs as plants: mine a repository's history for fixes that came with a test, and
//! verify each by re-introducing it (Defects4J's method).
//!
//! A candidate is a non-merge commit that changes 1-3 source files in a supported language
//! with a dozen changed lines or fewer, adds or changes a test file, and touches nothing else
//! but docs (`history`). Each candidate is verified in a scratch clone that shares the
//! repository's objects (the user's work tree and refs are never touched): first the fix's
//! source hunks are reversed onto the target commit (the bugs file holds the result as a
//! patch against the target; a fix that cannot be put back costs no test run), then at the
//! fix commit F the test command runs once, F's source hunks are reversed, the build is
//! checked, the tests run again; the tests that fail with the bug and passed at F are the
//! trigger, and the command restricted to them (`runner`) is the witness, rerun at F and
//! with the bug to rule out a flaky test, and run at the target, without and with the
//! bugs file's patch, where every user of the file will run it (`verify`). Mining stops once `max_bugs` are kept
//! or when the tests already fail at the fix of [`BROKEN_IN_A_ROW`] candidates in a row, and
//! a stop ends the work under way (`schedule`).

mod file;
mod history;
mod patch;
mod runner;
mod schedule;
mod shape;
mod verify;

pub use file::{Bug, write_bugs_yaml};
pub use patch::{Hunk, hunks};
pub use runner::Ecosystem;
pub use verify::Phase;

use history::{CandidateRule, candidate};
use revcal_process::SignalWatch;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
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
    #[error("{what}: {cause}")]
    Io {
        /// What was being done.
        what: String,
        /// The I/O error (said in the message, so it is not also the error's `source`: a chain says it once).
        cause: std::io::Error,
    },
    /// A bug could not be written as YAML (the bugs file is then not written at all).
    #[error("cannot write the bug fixed by {fix_commit} as YAML: {message}")]
    Yaml {
        /// The commit that fixed the bug.
        fix_commit: String,
        /// What the YAML writer said.
        message: String,
    },
    /// A signal asked revcal to stop; the scratch clones were removed. (Once verification
    /// has begun, [`BugMiner::mine`] reports a signal as [`Stop::Signal`] instead, with the
    /// bugs verified before it.)
    #[error("stopped by {name}")]
    Interrupted {
        /// The signal's number.
        signal: i32,
        /// The signal's name.
        name: &'static str,
    },
}

/// Runs git in `dir` (through `revcal_process::git`, the one runner of git) and returns its
/// standard output: the crate's one git helper, giving git's error the miner's shape.
pub(crate) fn git<S: AsRef<str>>(dir: &Path, args: &[S]) -> Result<Vec<u8>, BugsError> {
    let args: Vec<&str> = args.iter().map(AsRef::as_ref).collect();
    revcal_process::git(dir, &args).map_err(|error| BugsError::Git {
        dir: error.dir,
        args: error.args,
        message: error.message,
    })
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
    /// Tests already fail at the fix itself and none flips with the bug: the test command
    /// does not work at this commit (a missing dependency, a runner that refuses the
    /// project's configuration, an old layout).
    TestsFailAtFix {
        /// How many tests the run at the fix named as failing (0: it named none, and only its
        /// exit code said so).
        failing: usize,
        /// The first line of that run's output that names a failure, or its exit and the end
        /// of its output.
        example: String,
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
    /// The witness does not reproduce the bug at the target (where the bugs file's patch
    /// applies), although it did at the fix: it fails there without the bug, or passes with it.
    NotAtTarget {
        /// What the runs at the target showed.
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
            RejectReason::TestsFailAtFix { .. } => "tests-fail-at-fix",
            RejectReason::NoTestFlips { .. } => "no-test-flips",
            RejectReason::Flaky { .. } => "flaky",
            RejectReason::NotAtTarget { .. } => "not-at-target",
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
            RejectReason::TestsFailAtFix { failing, example } => {
                write!(f, "{}, for example: {example}", tests_fail_at_fix(*failing))
            }
            RejectReason::NoTestFlips { detail } => write!(f, "no test flips: {detail}"),
            RejectReason::Flaky { detail } => write!(f, "flaky: {detail}"),
            RejectReason::NotAtTarget { detail } => write!(f, "not a bug of the target: {detail}"),
            RejectReason::TimedOut { detail } => write!(f, "timed out: {detail}"),
        }
    }
}

/// "N tests already fail at the fix", or, when the run named none, that the tests do.
pub fn tests_fail_at_fix(failing: usize) -> String {
    match failing {
        0 => "the tests already fail at the fix".to_owned(),
        1 => "1 test already fails at the fix".to_owned(),
        n => format!("{n} tests already fail at the fix"),
    }
}

/// A candidate that was verified and not kept.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RejectedFix {
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
    /// The repository's root (a bare repository's own directory).
    pub repo: PathBuf,
    /// The commit the patches apply to.
    pub target: String,
    /// The `git log` range read, as given (`None`: the last commits of the target).
    pub range: Option<String>,
    /// Whether only the first-parent line was read (`git log --first-parent`).
    pub first_parent: bool,
    /// Commits read from the history.
    pub scanned: usize,
    /// When a range read with merges in it, how many of its commits are on its first-parent
    /// line (git's `A..B` also holds the commits merged in from side branches).
    pub first_parent_commits: Option<usize>,
    /// Commits passed over by the candidate rule, counted by reason (`no-test`,
    /// `build-or-other-code`, `too-many-lines`, `merge-or-root`, `no-source`,
    /// `too-many-source-files`, `binary-source`); `-v` names each.
    pub skipped: BTreeMap<String, usize>,
    /// Commits that passed the candidate rule but read as features, not fixes (unless
    /// [`BugMiner::include_features`]): not verified.
    pub features: Vec<SetAside>,
    /// Commits that passed the candidate rule and are verified (features set aside).
    pub candidates: usize,
    /// Candidates not verified because mining stopped first (see `stopped`).
    pub unverified: usize,
    /// Of those, the candidates whose verification was under way when mining stopped: their
    /// processes were ended and their results, if any, not counted.
    pub cut_short: usize,
    /// Why mining stopped before every candidate was verified, if it did.
    pub stopped: Option<Stop>,
    /// The bugs kept, newest fix first.
    pub verified: Vec<Bug>,
    /// The candidates not kept, with their reasons, newest first.
    pub rejected: Vec<RejectedFix>,
    /// Wall time in seconds.
    pub seconds: f64,
}

/// A commit that passed the candidate rule and was set aside as a feature.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SetAside {
    /// The commit.
    pub fix_commit: String,
    /// Its subject line.
    pub fix_subject: String,
    /// Why it reads as a feature.
    pub why: String,
}

/// Why a candidate reads as a feature rather than a fix, if it does: its subject marks one
/// (`feat:`, `add ...` with no word of a fix), or its source part only adds code (so that
/// the reversal only removes it) defining a name that its tests call: the "bug" would be a
/// missing API, which no reviewer of the code can be asked to see.
fn feature(repo: &Path, candidate: &history::Candidate) -> Result<Option<String>, BugsError> {
    if let Some(why) = history::feature_subject(&candidate.subject) {
        return Ok(Some(why));
    }
    if !candidate.only_adds {
        return Ok(None);
    }
    let added = |paths: &[String]| -> Result<String, BugsError> {
        let mut args = vec!["show".to_owned(), "--format=".into(), "--unified=0".into(), "--no-color".into()];
        args.push(candidate.id.clone());
        args.push("--".into());
        args.extend(paths.iter().cloned());
        let diff = git(repo, &args)?;
        Ok(String::from_utf8_lossy(&diff)
            .lines()
            .filter(|line| line.starts_with('+') && !line.starts_with("+++"))
            .map(|line| &line[1..])
            .collect::<Vec<_>>()
            .join("\n"))
    };
    let names = history::defined_names(&added(&candidate.sources)?);
    if names.is_empty() {
        return Ok(None);
    }
    let tests = added(&candidate.tests)?;
    let words: std::collections::BTreeSet<&str> =
        tests.split(|c: char| !(c.is_alphanumeric() || c == '_')).filter(|word| !word.is_empty()).collect();
    let called: Vec<String> = names.into_iter().filter(|name| words.contains(name.as_str())).collect();
    Ok((!called.is_empty()).then(|| {
        let called: Vec<String> = called.iter().map(|name| format!("`{name}`")).collect();
        format!("its reversal only removes code that its tests call by name ({})", called.join(", "))
    }))
}

/// A commit id, shortened for messages.
fn short(commit: &str) -> &str {
    &commit[..commit.len().min(10)]
}

/// Why mining stopped before every candidate was verified.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "reason", rename_all = "kebab-case", rename_all_fields = "camelCase")]
#[non_exhaustive]
pub enum Stop {
    /// `max_bugs` bugs were verified.
    MaxReached {
        /// How many.
        bugs: usize,
    },
    /// The tests already failed at the fix of this many candidates in a row (with no test
    /// flipping): the test command does not work on this history. `keep_going` verifies on.
    TestsFailAtFix {
        /// How many candidates in a row.
        in_a_row: usize,
        /// The first such candidate's example of a failure.
        example: String,
    },
    /// A signal (SIGINT, SIGTERM, SIGHUP) asked revcal to stop: the verifications under way
    /// were ended, and the bugs verified before it are in the report.
    Signal {
        /// The signal's number.
        signal: i32,
        /// Its name.
        name: &'static str,
    },
}

/// Candidates in a row whose tests already fail at the fix before mining stops (unless
/// [`BugMiner::keep_going`]).
pub const BROKEN_IN_A_ROW: usize = 3;

/// A step of mining, for progress display.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum MineEvent {
    /// The history was read.
    Scanned {
        /// The range read, as given (`None`: the last commits of the target).
        range: Option<String>,
        /// Whether only the first-parent line was read.
        first_parent: bool,
        /// Commits read.
        commits: usize,
        /// See [`MineReport::first_parent_commits`].
        first_parent_commits: Option<usize>,
        /// Candidates among them (before `max`), features set aside.
        candidates: usize,
        /// Commits that passed the candidate rule but read as features (not verified).
        features: usize,
        /// Commits passed over by the candidate rule, by reason.
        skipped: BTreeMap<String, usize>,
    },
    /// A phase of a candidate's verification has been running for a second (shorter phases
    /// are not announced, so a candidate gives at most one event a second).
    Phase {
        /// The candidate's place among the candidates, newest first, from 1.
        number: usize,
        /// Candidates to verify.
        total: usize,
        /// The fix commit.
        fix_commit: String,
        /// The phase.
        phase: Phase,
    },
    /// Mining stops before every candidate was verified; the verifications under way are
    /// being ended.
    Stopped {
        /// Why.
        stop: Stop,
        /// Verifications under way, ended without a result.
        in_flight: usize,
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

/// Mines a repository's history for real bugs; see the [crate documentation](crate).
///
/// ```no_run
/// use revcal_bugs::BugMiner;
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
    first_parent: bool,
    max_commits: usize,
    max_bugs: Option<usize>,
    keep_going: bool,
    include_features: bool,
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
            first_parent: false,
            max_commits: DEFAULT_MAX_COMMITS,
            max_bugs: None,
            keep_going: false,
            include_features: false,
            test_cmd: None,
            build_cmd: None,
            jobs: 1,
            test_timeout: Duration::from_secs(600),
            target: "HEAD".into(),
            rule: CandidateRule { max_source_files: 3, max_changed_lines: 12 },
        }
    }

    /// A `git log` range (`v1.0..HEAD`); all of it is read. As in git, `A..B` is every
    /// commit reachable from B and not from A, the commits of side branches merged in between
    /// included; see [`first_parent`](Self::first_parent).
    pub fn range(mut self, range: impl Into<String>) -> Self {
        self.range = Some(range.into());
        self
    }

    /// Read only the first-parent line of the range (`git log --first-parent`): the commits
    /// made on the branch itself and its merge commits, not the commits merged in.
    pub fn first_parent(mut self, first_parent: bool) -> Self {
        self.first_parent = first_parent;
        self
    }

    /// How many commits of HEAD to read when no range is given.
    pub fn max_commits(mut self, commits: usize) -> Self {
        self.max_commits = commits;
        self
    }

    /// Stop once this many bugs are verified (newest fixes first); the verifications then
    /// under way are ended.
    pub fn max_bugs(mut self, bugs: usize) -> Self {
        self.max_bugs = Some(bugs);
        self
    }

    /// Verify every candidate even after [`BROKEN_IN_A_ROW`] candidates in a row whose tests
    /// already fail at the fix (by default mining stops there: the test command does not
    /// work on this history).
    pub fn keep_going(mut self, keep_going: bool) -> Self {
        self.keep_going = keep_going;
        self
    }

    /// Verify the candidates that read as features too (by default they are set aside and
    /// counted in [`MineReport::features`]: a commit whose message marks a feature, or whose
    /// reversal only removes code its tests call by name, is no bug fix).
    pub fn include_features(mut self, include: bool) -> Self {
        self.include_features = include;
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
    /// Every process a test or build command started, also one that left its process group
    /// or session, has ended when this returns. A signal during verification ends it early
    /// and is reported in [`MineReport::stopped`] ([`Stop::Signal`]), with every bug verified
    /// before it: hours of verification are not lost to a Ctrl-C.
    pub fn mine(&self, progress: &mut dyn FnMut(MineEvent)) -> Result<MineReport, BugsError> {
        let started = Instant::now();
        let signals = SignalWatch::install()
            .map_err(|cause| BugsError::Io { what: "install the signal handlers".into(), cause })?;
        // The clones are made from elsewhere: they need the work tree's root, absolute, or a
        // bare repository's own directory (a mirror has no work tree).
        let bare = git(&self.repo, &["rev-parse", "--is-bare-repository"])?;
        let root = if String::from_utf8_lossy(&bare).trim() == "true" {
            git(&self.repo, &["rev-parse", "--absolute-git-dir"])?
        } else {
            git(&self.repo, &["rev-parse", "--show-toplevel"])?
        };
        let repo = PathBuf::from(String::from_utf8_lossy(&root).trim());
        let target = String::from_utf8_lossy(&git(
            &repo,
            &["rev-parse", "--verify", &format!("{}^{{commit}}", self.target)],
        )?)
        .trim()
        .to_owned();
        let (range, limit) = match &self.range {
            Some(range) => (range.clone(), None),
            None => (target.clone(), Some(self.max_commits)),
        };
        let commits = history::log(&repo, &range, limit, self.first_parent)?;
        // `A..B` surprises: HEAD~60..HEAD may hold hundreds of commits. Say how many are on
        // the first-parent line when merges brought in others.
        let first_parent_commits = match &self.range {
            Some(range) if !self.first_parent && commits.iter().any(|c| c.parents.len() > 1) => {
                Some(history::count_first_parent(&repo, range)?)
            }
            _ => None,
        };
        let mut skipped: BTreeMap<String, usize> = BTreeMap::new();
        let mut features = Vec::new();
        let mut candidates: Vec<history::Candidate> = Vec::new();
        for commit in &commits {
            let found = match candidate(commit, self.rule) {
                Ok(found) => found,
                Err(skip) => {
                    // `-v` lists every commit passed over, with its reason.
                    tracing::info!(
                        "passed over {} {:?}: {} ({})",
                        short(&commit.id),
                        commit.subject,
                        skip.reason,
                        skip.detail
                    );
                    *skipped.entry(skip.reason.to_owned()).or_default() += 1;
                    continue;
                }
            };
            if !self.include_features
                && let Some(why) = feature(&repo, &found)?
            {
                tracing::info!("set aside as a feature {} {:?}: {why}", short(&found.id), found.subject);
                features.push(SetAside {
                    fix_commit: found.id.clone(),
                    fix_subject: found.subject.clone(),
                    why,
                });
                continue;
            }
            candidates.push(found);
        }
        tracing::info!(commits = commits.len(), candidates = candidates.len(), "history read");
        progress(MineEvent::Scanned {
            range: self.range.clone(),
            first_parent: self.first_parent,
            commits: commits.len(),
            first_parent_commits,
            candidates: candidates.len(),
            features: features.len(),
            skipped: skipped.clone(),
        });

        let settings = verify::Settings {
            repo: &repo,
            target: &target,
            test_cmd: self.test_cmd.as_deref(),
            build_cmd: self.build_cmd.as_deref(),
            timeout: self.test_timeout,
        };
        let plan = schedule::Plan {
            candidates: &candidates,
            settings: &settings,
            jobs: self.jobs,
            max_bugs: self.max_bugs,
            keep_going: self.keep_going,
        };
        let outcome = schedule::verify_all(&plan, &signals, progress)?;
        let mut verified = Vec::new();
        let mut rejected = Vec::new();
        let mut unverified = 0;
        for (candidate, result) in candidates.iter().zip(outcome.results) {
            match result {
                Some(Ok(bug)) => verified.push(bug),
                Some(Err(reason)) => rejected.push(RejectedFix {
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
            range: self.range.clone(),
            first_parent: self.first_parent,
            scanned: commits.len(),
            first_parent_commits,
            skipped,
            features,
            candidates: candidates.len(),
            unverified,
            cut_short: outcome.cut_short,
            stopped: outcome.stopped,
            verified,
            rejected,
            seconds: started.elapsed().as_secs_f64(),
        })
    }
}
