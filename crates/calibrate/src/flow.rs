//! The calibration flow described in docs/calibration.md#the-flow, driven by
//! [`Calibration::builder`]: targets (from the commit's objects) -> plants -> build check ->
//! witness check -> controls -> every review (rounds x trials) in a scratch checkout of its
//! own, `--jobs` at once -> parse findings -> score -> report. Nothing is written to the
//! user's repository.

use crate::controls::{echo_findings, oracle_findings};
use crate::error::CalibrateError;
use crate::guard::{self, Recovered};
use crate::jobs::Jobs;
use crate::plants::{Plant, Planting, apply_to, read_plants_file, resolve_specs_with};
use crate::report::{
    CleanExcluded, ControlOutcome, Controls, LocatedFinding, ReviewRound, RoundPlant, RoundStatus,
    RoundTrial, TouchedLines, keep_findings, locates_lines,
};
use crate::reviewer::{self, ReviewRun};
use crate::scorers::{JudgeFailures, ReproScorer, StringScorer};
use crate::scoring::{Scored, ScorerKind, located_pairs, score_with_progress};
use crate::scratch::{Origin, Scratch};
use crate::targets::{Repository, choose_targets};
use crate::tree::CommitTree;
use revcal_findings::{Finding, ParsedFindings, parse_findings};
use revcal_judge::{Judge, JudgeError};
use revcal_process::SignalWatch;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// A progress event, for a progress bar (the library never prints).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Progress {
    /// A stage begins; `total` steps when known.
    Stage {
        /// What is happening, in a few words.
        label: String,
        /// Steps in this stage.
        total: Option<u64>,
    },
    /// One step of the current stage is done.
    Step,
    /// The reviews: how many run right now, and how many of all are finished.
    Reviews {
        /// Reviews running.
        running: u64,
        /// Reviews finished.
        finished: u64,
        /// Reviews in all (rounds x trials).
        total: u64,
    },
    /// The run is over (the bar can go).
    Done,
}

/// Whether each plant is built, in a scratch copy, before the review: a plant that breaks the
/// build would be "caught" by any compiler-backed reviewer without being read, and with it
/// applied such a reviewer could not run at all.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum BuildCheck {
    /// `cargo check --all-targets` when a `Cargo.toml` is at the root of the commit; no check
    /// otherwise.
    #[default]
    Auto,
    /// No build check.
    Off,
    /// This shell command, run in the scratch copy with each plant applied in turn.
    Command(String),
}

impl BuildCheck {
    /// The default command for a Rust project.
    pub const CARGO: &'static str = "cargo check --all-targets";

    /// The command to run in a checkout of `tree`, if any.
    fn command(&self, tree: &CommitTree) -> Option<String> {
        match self {
            BuildCheck::Auto => tree.entries().contains_key("Cargo.toml").then(|| Self::CARGO.to_owned()),
            BuildCheck::Off => None,
            BuildCheck::Command(command) if command.trim().is_empty() => None,
            BuildCheck::Command(command) => Some(command.clone()),
        }
    }
}

/// Why a plant is not counted, when it is not for being equivalent.
#[derive(Debug, Clone)]
pub(crate) enum Exclusion {
    /// Its witness or build ran past its time limit (twice) or its memory cap.
    Runaway(String),
    /// The build fails with it applied.
    Build(String),
}

/// A review's score, and (repro-verified findings, of which the judge agreed).
type ScoredReview = (Scored, (usize, usize));

/// The default memory cap of witness and repro commands: 4 GiB.
pub const DEFAULT_REPRO_MEMORY: u64 = 4 << 30;

/// The id of git's empty tree (SHA-1), the base of a root commit.
const EMPTY_TREE: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

type ProgressFn = Box<dyn Fn(Progress) + Send + Sync>;

/// Fault injection for the test that proves a panic inside revcal stops the reviews and
/// removes the run's scratch checkouts: when this variable is set, the run panics while a
/// review runs. Not a setting.
const PANIC_DURING_REVIEW: &str = "REVCAL_TEST_PANIC_DURING_REVIEW";

/// How a calibration is set up; build one with [`Calibration::builder`].
pub struct Calibration {
    dir: PathBuf,
    review_cmd: String,
    in_process: Option<Arc<dyn crate::in_process::InProcessReviewer>>,
    commit: String,
    files: Vec<String>,
    plants: usize,
    seed: u64,
    profile: revcal_mutate::Profile,
    plants_file: Option<PathBuf>,
    also_synthetic: bool,
    one_at_a_time: bool,
    clean_rounds: usize,
    preexisting_filter: Option<bool>,
    min_recall: f64,
    min_precision: Option<f64>,
    min_plants: usize,
    scorer: ScorerKind,
    judge: Option<Box<dyn Judge>>,
    review_timeout: Duration,
    repro_timeout: Duration,
    repro_memory: Option<u64>,
    checkout_limits: crate::tree::CheckoutLimits,
    checkout_cache: Option<crate::cache::CheckoutCache>,
    sandbox_repro: bool,
    reviewer_env: Vec<String>,
    trials: usize,
    build: BuildCheck,
    output_cap: usize,
    ok_exit_codes: Vec<i32>,
    handle_signals: bool,
    jobs: usize,
    shared_jobs: Option<Arc<Jobs>>,
    progress: Option<ProgressFn>,
}

impl std::fmt::Debug for Calibration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Calibration")
            .field("dir", &self.dir)
            .field("review_cmd", &self.review_cmd)
            .field("commit", &self.commit)
            .field("scorer", &self.scorer)
            .field("judge", &self.judge.as_ref().map(|j| j.name().to_owned()))
            .finish_non_exhaustive()
    }
}

impl Calibration {
    /// A calibration in the current directory with the defaults documented in
    /// docs/calibration.md#flags (set the reviewer with [`review_cmd`](Self::review_cmd)):
    /// commit HEAD, 8 plants, min recall 0.5, min plants 3, scorer judge, review timeout
    /// 1800 s, 1 trial, as many jobs as cores.
    pub fn builder() -> Calibration {
        Calibration {
            dir: PathBuf::from("."),
            review_cmd: String::new(),
            in_process: None,
            commit: "HEAD".into(),
            files: Vec::new(),
            plants: 8,
            seed: 0,
            profile: revcal_mutate::Profile::Default,
            plants_file: None,
            also_synthetic: false,
            one_at_a_time: false,
            clean_rounds: 0,
            preexisting_filter: None,
            min_recall: 0.5,
            min_precision: None,
            min_plants: 3,
            scorer: ScorerKind::Judge,
            judge: None,
            review_timeout: Duration::from_secs(1800),
            repro_timeout: Duration::from_secs(300),
            repro_memory: Some(DEFAULT_REPRO_MEMORY),
            checkout_limits: crate::tree::CheckoutLimits::default(),
            checkout_cache: None,
            sandbox_repro: true,
            reviewer_env: Vec::new(),
            trials: 1,
            build: BuildCheck::Auto,
            output_cap: reviewer::DEFAULT_OUTPUT_CAP,
            ok_exit_codes: reviewer::DEFAULT_OK_EXIT_CODES.to_vec(),
            handle_signals: true,
            jobs: crate::jobs::default_count(),
            shared_jobs: None,
            progress: None,
        }
    }

    /// The repository (any directory inside its work tree, or a bare repository). Only its
    /// objects are read; nothing in it is written.
    pub fn dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.dir = dir.into();
        self
    }
    /// The reviewer's shell command; `{base}` becomes the base commit. It runs in a scratch
    /// checkout of the commit; a program given as a relative path (`./review.sh`) is found
    /// from the current directory.
    pub fn review_cmd(mut self, command: impl Into<String>) -> Self {
        self.review_cmd = command.into();
        self
    }
    /// A reviewer that runs inside revcal (the built-in LLM reviewer) instead of a command:
    /// it is asked for each review with its checkout; what it answers is parsed and scored as
    /// a command's output is. It takes the place of [`review_cmd`](Self::review_cmd).
    pub fn in_process_reviewer(mut self, reviewer: Arc<dyn crate::in_process::InProcessReviewer>) -> Self {
        self.in_process = Some(reviewer);
        self
    }
    /// The reviewer's name in the report: the in-process reviewer's, else the command.
    fn reviewer_name(&self) -> String {
        match &self.in_process {
            Some(reviewer) => reviewer.name(),
            None => self.review_cmd.clone(),
        }
    }
    /// The commit whose changed files are the targets.
    pub fn commit(mut self, rev: impl Into<String>) -> Self {
        self.commit = rev.into();
        self
    }
    /// Fallback targets when the commit touches no eligible file.
    pub fn files(mut self, files: Vec<String>) -> Self {
        self.files = files;
        self
    }
    /// How many plants the mutation engine selects.
    pub fn plants(mut self, n: usize) -> Self {
        self.plants = n;
        self
    }
    /// The selection seed (same seed, same plants).
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }
    /// The mutation profile plants are chosen from (docs/mutation.md#profiles): every
    /// operator (the default) or the realistic one.
    pub fn profile(mut self, profile: revcal_mutate::Profile) -> Self {
        self.profile = profile;
        self
    }
    /// Plants from a JSON/YAML file (a plants file or a bugs file) instead of the mutation
    /// engine.
    pub fn plants_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.plants_file = Some(path.into());
        self
    }
    /// With a plants file, also plant [`plants`](Self::plants) mutants from the commit's files
    /// (never on a line the file's entries change): real and synthetic bugs in one run, with
    /// recall for each kind in the report's `per_kind`.
    pub fn also_synthetic(mut self, yes: bool) -> Self {
        self.also_synthetic = yes;
        self
    }
    /// Plant each bug alone, one review per plant (per trial), instead of all at once: for
    /// real bugs that change the same lines, which cannot be planted together (they are
    /// otherwise left out). The findings of every review are scored against its one plant and
    /// reported together.
    pub fn one_at_a_time(mut self, yes: bool) -> Self {
        self.one_at_a_time = yes;
        self
    }
    /// Also review this many *clean* changes (default 0): each a behaviour-preserving
    /// neutral edit (a mirrored comparison, see `revcal_mutate::neutral_edits`) on a line no
    /// plant touches, chosen from the seed, built like a plant, and reviewed in a scratch
    /// checkout exactly as a planted round is. A clean review the reviewer flags (a finding
    /// within 3 lines of the edit) is a false alarm: the report gains `falseAlarmRate` and
    /// its interval, and every round with its findings in `rounds`. Fewer sites than asked
    /// run what exists, and the report says so.
    pub fn clean_rounds(mut self, n: usize) -> Self {
        self.clean_rounds = n;
        self
    }
    /// Whether each trial also reviews the unplanted change, so that a finding the reviewer
    /// made there too is set aside (the same file and message, its line moved by the round's
    /// edits): neither a catch nor a false positive nor a false alarm, counted in the report's
    /// `preexisting`. By default on for a reviewer command (a linter's old warnings) and off
    /// for an in-process reviewer (an LLM words a finding differently each time, so its
    /// findings seldom match, and each trial would cost one more review).
    pub fn preexisting_filter(mut self, on: bool) -> Self {
        self.preexisting_filter = Some(on);
        self
    }
    /// Whether this run reviews the unplanted change and sets aside what is found there too.
    fn filters_preexisting(&self) -> bool {
        self.preexisting_filter.unwrap_or(self.in_process.is_none())
    }
    /// The recall gate.
    pub fn min_recall(mut self, min: f64) -> Self {
        self.min_recall = min;
        self
    }
    /// The precision gate (unset by default).
    pub fn min_precision(mut self, min: Option<f64>) -> Self {
        self.min_precision = min;
        self
    }
    /// Fewer valid plants is an error, never a pass.
    pub fn min_plants(mut self, min: usize) -> Self {
        self.min_plants = min;
        self
    }
    /// The scorer.
    pub fn scorer(mut self, scorer: ScorerKind) -> Self {
        self.scorer = scorer;
        self
    }
    /// The judge (required by the judge scorer; also measures `judgeAgreement`).
    pub fn judge(mut self, judge: Box<dyn Judge>) -> Self {
        self.judge = Some(judge);
        self
    }
    /// The reviewer's process group is killed after this.
    pub fn review_timeout(mut self, timeout: Duration) -> Self {
        self.review_timeout = timeout;
        self
    }
    /// Each witness or repro command is killed after this.
    pub fn repro_timeout(mut self, timeout: Duration) -> Self {
        self.repro_timeout = timeout;
        self
    }
    /// Each witness or repro command's process group is killed once its resident memory goes
    /// past this many bytes (default 4 GiB; `None`: no cap). A plant whose witness is killed
    /// for it is excluded as a runaway.
    pub fn repro_memory(mut self, bytes: Option<u64>) -> Self {
        self.repro_memory = bytes;
        self
    }
    /// How much a commit may make the run write: the largest file and the most bytes of one
    /// checkout (default 100 MiB and 2 GiB). A commit past them is refused with an error
    /// naming the file, before it fills the disk or the memory.
    pub fn checkout_limits(mut self, limits: crate::tree::CheckoutLimits) -> Self {
        self.checkout_limits = limits;
        self
    }
    /// Keep the job slots' checkouts between runs in `cache`, per repository (default: none,
    /// each run writes fresh checkouts into its run directory and removes them): a run then
    /// writes only the files that differ from what an earlier run left, and removes nothing.
    /// What a reviewer changed in a kept checkout is undone before the next review, as in a
    /// fresh one. With [`shared_jobs`](Self::shared_jobs), the shared jobs' cache is used.
    pub fn checkout_cache(mut self, cache: Option<crate::cache::CheckoutCache>) -> Self {
        self.checkout_cache = cache;
        self
    }
    /// Run witness and repro commands in a sandbox (default on): they may write only beneath
    /// their scratch copy and temporary directories and make no TCP connection (Linux
    /// Landlock, as far as the kernel offers it; the report says how far). A reviewer prints
    /// its repro commands, so without the sandbox a hostile reviewer runs any command as the
    /// user.
    pub fn sandbox_repro(mut self, on: bool) -> Self {
        self.sandbox_repro = on;
        self
    }
    /// Pass these variables of revcal's environment on to the reviewer and its repro
    /// commands, which revcal would otherwise withhold from them: a variable revcal reads a
    /// provider, a judge, a ledger or the authority's key from
    /// ([`WITHHELD_VARIABLES`](crate::WITHHELD_VARIABLES)), or one whose value names the
    /// user's repository (docs/calibration.md#against-a-hostile-reviewer).
    pub fn reviewer_env(mut self, names: Vec<String>) -> Self {
        self.reviewer_env = names;
        self
    }
    /// Run the review this many times (at least 1).
    pub fn trials(mut self, trials: usize) -> Self {
        self.trials = trials.max(1);
        self
    }
    /// Build each plant before the review (default [`BuildCheck::Auto`]); a plant whose build
    /// fails is excluded with the reason, and a build that fails on the original tree stops
    /// the run.
    pub fn build_check(mut self, build: BuildCheck) -> Self {
        self.build = build;
        self
    }
    /// Bytes of reviewer output kept.
    pub fn output_cap(mut self, bytes: usize) -> Self {
        self.output_cap = bytes;
        self
    }
    /// The exit codes that mean the reviewer finished (default 0 and 2). Linters exit 1 when
    /// they find something (ruff, ESLint) or with a bit mask (pylint: 4 warning, 8 refactor,
    /// 16 convention, so 28 for all three); list those here. Any other code is a crash.
    pub fn ok_exit_codes(mut self, codes: impl Into<Vec<i32>>) -> Self {
        self.ok_exit_codes = codes.into();
        self
    }
    /// Observe every signal whose default action would end the process (SIGINT, SIGTERM,
    /// SIGHUP, SIGQUIT, SIGUSR1, ...) during the run (default on) so that the reviews are
    /// stopped and the scratch checkouts removed; turn off when the embedding program handles
    /// signals itself.
    pub fn handle_signals(mut self, on: bool) -> Self {
        self.handle_signals = on;
        self
    }
    /// How many reviews (each in a scratch checkout of its own) and judge questions run at
    /// once (at least 1; default: the number of cores). The report is the same for every
    /// number.
    pub fn jobs(mut self, jobs: usize) -> Self {
        self.jobs = jobs.max(1);
        self
    }
    /// The jobs this calibration was set up with.
    pub fn jobs_count(&self) -> usize {
        self.jobs
    }
    /// The checkout cache this calibration keeps its slots in, if any.
    pub fn kept_checkouts(&self) -> Option<&crate::cache::CheckoutCache> {
        self.checkout_cache.as_ref()
    }
    /// Run in the slots of `jobs`, shared with other calibrations (a suite's units): at most
    /// `jobs.count()` reviews run at once over all of them, and this calibration's own
    /// [`jobs`](Calibration::jobs) count is not used to make slots.
    pub fn shared_jobs(mut self, jobs: Arc<Jobs>) -> Self {
        self.shared_jobs = Some(jobs);
        self
    }
    /// Progress events for a progress bar.
    pub fn on_progress(mut self, progress: impl Fn(Progress) + Send + Sync + 'static) -> Self {
        self.progress = Some(Box::new(progress));
        self
    }
    fn emit(&self, event: Progress) {
        if let Some(progress) = &self.progress {
            progress(event);
        }
    }

    fn stage(&self, label: &str, total: Option<usize>) {
        self.emit(Progress::Stage { label: label.into(), total: total.map(|t| t as u64) });
    }

    /// Runs the calibration. Every error is operational (exit 1); a failed gate is a report
    /// with `gate_pass == false`.
    pub fn run(self) -> Result<crate::report::Report, CalibrateError> {
        let outcome = self.measure();
        self.emit(Progress::Done);
        let (measurement, judge_failure) = outcome?;
        let report = crate::assemble::report(&measurement).map_err(CalibrateError::Report)?;
        match judge_failure {
            Some(source) => Err(CalibrateError::JudgeErrors {
                count: report.judge_errors.unwrap_or(0),
                report: Box::new(report),
                source,
            }),
            None => Ok(report),
        }
    }

    /// The measurement, and the first judge error met while scoring the review (the
    /// measurement then counts the questions left without a verdict).
    fn measure(&self) -> Result<(Measurement, Option<JudgeError>), CalibrateError> {
        if self.review_cmd.trim().is_empty() && self.in_process.is_none() {
            return Err(CalibrateError::NoReviewer);
        }
        let repo = Repository::discover(&self.dir)?;
        if self.scorer == ScorerKind::Judge && self.judge.is_none() {
            return Err(CalibrateError::NoJudge);
        }
        let signals = if self.handle_signals {
            SignalWatch::install().map_err(CalibrateError::Signals)?
        } else {
            SignalWatch::inert()
        };
        if guard::journal_dir(repo.git_dir()).exists() {
            tracing::warn!(
                "an earlier release of revcal left planted files and their restore journal in {}: recover them (--recover) before trusting the work tree; this run reads only the commit",
                guard::journal_dir(repo.git_dir()).display()
            );
        }
        let commit = repo.commit(&self.commit)?;

        self.stage("choosing plants", None);
        let tree = repo.commit_tree(&commit)?.with_limits(self.checkout_limits);
        // One rule for every target, however it was named (docs/calibration.md#the-flow).
        let fallback =
            self.files.iter().map(|file| tree.check_target(file)).collect::<Result<Vec<_>, _>>()?;
        let synthetic = |count: usize| -> Result<Vec<Plant>, CalibrateError> {
            let targets = choose_targets(&commit, &fallback)?;
            for target in &targets {
                tree.check_target(target)?;
            }
            crate::selection::select_plants(&tree, &targets, count, self.seed, self.profile)
        };
        let mut plants = match &self.plants_file {
            Some(file) => {
                let mut plants =
                    resolve_specs_with(file, &read_plants_file(file)?, &tree, self.one_at_a_time)?;
                if self.also_synthetic {
                    // Both kinds in one run: mutants on lines no entry of the file changes.
                    // Chosen from a larger pool, so that the ones left out for sharing a line
                    // with an entry are replaced.
                    let changed_lines: usize = plants
                        .iter()
                        .map(|p| p.edits.iter().map(|e| e.old.len().max(1)).sum::<usize>().max(1))
                        .sum();
                    let chosen = synthetic(self.plants + changed_lines)?;
                    let kept: Vec<Plant> = chosen
                        .into_iter()
                        .filter(|mutant| !plants.iter().any(|plant| crate::plants::overlaps(plant, mutant)))
                        .take(self.plants)
                        .collect();
                    plants.extend(kept);
                }
                plants
            }
            None => synthetic(self.plants)?,
        };
        for plant in &mut plants {
            plant.file = tree.check_target(&plant.file)?;
            for edit in &mut plant.edits {
                edit.file = tree.check_target(&edit.file)?;
            }
        }
        let jobs = match &self.shared_jobs {
            Some(jobs) => Arc::clone(jobs),
            None => {
                let jobs = Jobs::new(self.jobs)?;
                Arc::new(match &self.checkout_cache {
                    Some(cache) => jobs.with_checkout_cache(cache.clone()),
                    None => jobs,
                })
            }
        };
        // What the reviewer's commands do not get of revcal's environment.
        let reach = crate::reach::Reach::new(&self.reviewer_env, &[repo.location(), repo.git_dir()]);
        // Witness, build and repro commands run in copies of the commit's files, made on
        // first use: one for the user's commands, one for the reviewer's.
        let mut scratch = Scratch::deferred(
            &tree,
            &jobs,
            self.repro_timeout,
            self.repro_memory,
            self.sandbox_repro,
            reach.withheld().to_vec(),
        );

        let (excluded, excluded_reasons) = self.check_plants(&tree, &plants, &mut scratch, &signals)?;
        // Real bugs add and remove lines: where each valid plant sits once all are planted.
        let is_valid: Vec<bool> = excluded.iter().map(|x| !x).collect();
        if self.one_at_a_time {
            for (plant, _) in plants.iter_mut().zip(&is_valid).filter(|(_, valid)| **valid) {
                crate::plants::place(std::slice::from_mut(plant), &[true]);
            }
        } else {
            crate::plants::place(&mut plants, &is_valid);
        }
        let valid: Vec<&Plant> = plants.iter().zip(&excluded).filter(|(_, x)| !**x).map(|(p, _)| p).collect();
        if valid.len() < self.min_plants || valid.is_empty() {
            let runaway =
                excluded_reasons.iter().filter(|r| matches!(r, Some(Exclusion::Runaway(_)))).count();
            let unbuildable =
                excluded_reasons.iter().filter(|r| matches!(r, Some(Exclusion::Build(_)))).count();
            return Err(CalibrateError::TooFewPlants {
                valid: valid.len(),
                equivalent: excluded.iter().filter(|x| **x).count() - runaway - unbuildable,
                runaway,
                unbuildable,
                min: self.min_plants,
            });
        }

        let (clean, clean_excluded) =
            self.choose_clean(&commit, &fallback, &tree, &plants, &mut scratch, &signals)?;

        // Controls, through the same scorer and judge as the real review.
        let oracle_plants: Vec<&Plant> = match self.scorer {
            ScorerKind::Repro => valid.iter().copied().filter(|p| p.witness.is_some()).collect(),
            _ => valid.clone(),
        };
        let (echo_review, oracle_review) = (echo_findings(&valid), oracle_findings(&oracle_plants));
        self.stage(
            "scoring controls",
            Some(located_pairs(&valid, &echo_review) + located_pairs(&oracle_plants, &oracle_review)),
        );
        let mut tasks = vec![(valid.clone(), echo_review.as_slice())];
        if !oracle_plants.is_empty() {
            tasks.push((oracle_plants.clone(), oracle_review.as_slice()));
        }
        let scored = self.score_tasks(&tasks, &jobs, &mut scratch, &signals, None)?;
        let (echo, oracle) = (&scored[0].0, scored.get(1).map(|(scored, _)| scored));
        // The echo control is not enforced under the string scorer, which it maxes out.
        let controls = Controls {
            echo: ControlOutcome::echo(echo.caught(), valid.len(), self.scorer.trustworthy()),
            oracle: match oracle {
                Some(scored) => ControlOutcome::oracle(scored.caught(), oracle_plants.len()),
                None => {
                    ControlOutcome::not_run("1.0", "no plant has a witness to serve as the oracle's repro")
                }
            },
        };
        for (control, outcome) in [("echo", &controls.echo), ("oracle", &controls.oracle)] {
            if outcome.enforced && outcome.passed == Some(false) {
                return Err(CalibrateError::ControlFailed {
                    control,
                    outcome: outcome.clone(),
                    scorer: self.scorer,
                });
            }
        }

        // Every review, each in a scratch checkout: every plant at once, or each alone (one
        // review per plant), times the trials.
        let rounds: Vec<Vec<usize>> = if self.one_at_a_time {
            (0..valid.len()).map(|index| vec![index]).collect()
        } else {
            vec![(0..valid.len()).collect()]
        };
        // Each trial reviews the planted rounds, then the clean ones, all alike.
        let round_plants: Vec<Vec<&Plant>> =
            rounds.iter().map(|round| round.iter().map(|&index| valid[index]).collect()).collect();
        let mut all_rounds = round_plants.clone();
        all_rounds.extend(clean.iter().map(|edit| vec![edit]));
        // And, to set aside what the reviewer finds there too, the unplanted change: a round
        // without any edit, last in each trial.
        let filter_preexisting = self.filters_preexisting();
        if filter_preexisting {
            all_rounds.push(Vec::new());
        }
        let runs = self.review(&repo, &commit, &tree, &jobs, &all_rounds, &reach, &signals)?;
        // A finding's path is read against every file the run changes: `__init__.py` names a
        // plant's file only when no other changed file has that name.
        let changed_files =
            revcal_record::ChangedFiles::new(all_rounds.iter().flatten().flat_map(|plant| plant.files()));

        // Score every planted review against its round's plants, then put each trial together;
        // a clean review is not scored (it has no plant), only its findings are kept.
        let per_trial = all_rounds.len();
        let mut planted_runs: Vec<(usize, ReviewRun, ParsedFindings)> = Vec::with_capacity(runs.len());
        let mut clean_runs: Vec<(usize, usize, ParsedFindings)> = Vec::new();
        // Per trial, the findings of the review of the unplanted change.
        let mut unplanted: Vec<Vec<Finding>> = vec![Vec::new(); self.trials];
        for (index, run) in runs.into_iter().enumerate() {
            tracing::debug!(elapsed = ?run.elapsed, exit_code = run.exit_code, "reviewer finished");
            let mut parsed = parse_findings(&relative_to_checkout(&run.output, &run.checkout));
            crate::plants::resolve_finding_paths(&mut parsed.findings, &changed_files);
            if run.truncated {
                tracing::warn!(
                    "the reviewer printed more than {} bytes; only the first were read for findings",
                    self.output_cap
                );
            }
            for warning in &parsed.warnings {
                tracing::warn!("reviewer output: {warning}");
            }
            let (trial, round) = (index / per_trial, index % per_trial);
            if round < rounds.len() {
                planted_runs.push((round, run, parsed));
            } else if round < rounds.len() + clean.len() {
                clean_runs.push((trial, round - rounds.len(), parsed));
            } else {
                unplanted[trial] = parsed.findings;
            }
        }
        // Findings the reviewer made on the unplanted change too are set aside: neither
        // catches nor false positives nor false alarms (docs/calibration.md#findings-the-reviewer-had-already).
        let mut preexisting_planted = vec![0usize; planted_runs.len()];
        let mut preexisting_clean = vec![0usize; self.trials];
        if filter_preexisting {
            for (index, (round, _, parsed)) in planted_runs.iter_mut().enumerate() {
                let trial = index / rounds.len().max(1);
                let findings = std::mem::take(&mut parsed.findings);
                let (kept, count) =
                    crate::preexisting::set_aside(findings, &unplanted[trial], &round_plants[*round]);
                parsed.findings = kept;
                preexisting_planted[index] = count;
            }
            for (trial, index, parsed) in &mut clean_runs {
                let findings = std::mem::take(&mut parsed.findings);
                let (kept, count) =
                    crate::preexisting::set_aside(findings, &unplanted[*trial], &[&clean[*index]]);
                parsed.findings = kept;
                preexisting_clean[*trial] += count;
            }
        }
        let tasks: Vec<(Vec<&Plant>, &[Finding])> = planted_runs
            .iter()
            .map(|(round, _, parsed)| (round_plants[*round].clone(), parsed.findings.as_slice()))
            .collect();
        let label = if self.trials > 1 {
            format!("scoring the findings of {} trials", self.trials)
        } else {
            "scoring the findings".to_owned()
        };
        self.stage(
            &label,
            Some(tasks.iter().map(|(plants, findings)| located_pairs(plants, findings)).sum()),
        );
        let mut failures = JudgeFailures::default();
        let scored = self.score_tasks(&tasks, &jobs, &mut scratch, &signals, Some(&mut failures))?;
        let mut review_rounds: Vec<ReviewRound> = round_plants
            .iter()
            .map(|plants| ReviewRound {
                round: 0,
                entry: None,
                commit: None,
                plants: plants
                    .iter()
                    .map(|plant| RoundPlant {
                        file: plant.file.clone(),
                        line: plant.line,
                        category: plant.category.clone(),
                    })
                    .collect(),
                touched: Vec::new(),
                original: None,
                mutated: None,
                trials: Vec::new(),
            })
            .collect();
        review_rounds.extend(clean.iter().map(|edit| ReviewRound {
            round: 0,
            entry: None,
            commit: None,
            plants: Vec::new(),
            touched: vec![TouchedLines { file: edit.file.clone(), first: edit.line, last: edit.line }],
            original: Some(edit.original.clone()),
            mutated: Some(edit.mutated.clone()),
            trials: Vec::new(),
        }));
        let mut trials = Vec::with_capacity(self.trials);
        let mut reviews = planted_runs.into_iter().zip(scored).zip(preexisting_planted);
        for trial in 1..=self.trials {
            let mut merged: Option<Trial> = None;
            for (round, indices) in rounds.iter().enumerate() {
                let Some((((_, run, parsed), (scored, judge_checks)), preexisting)) = reviews.next() else {
                    break;
                };
                let plants = &round_plants[round];
                let statuses = scored
                    .caught_by
                    .iter()
                    .map(|caught| if caught.is_some() { RoundStatus::Caught } else { RoundStatus::Missed })
                    .collect();
                let (findings, findings_left_out) = keep_findings(located(&parsed), |finding| {
                    plants.iter().any(|plant| {
                        locates_lines(
                            finding,
                            &plant.file,
                            plant.line,
                            plant.end_line.unwrap_or(plant.line),
                            &changed_files,
                        )
                    })
                });
                review_rounds[round].trials.push(RoundTrial {
                    trial,
                    statuses,
                    flagged: false,
                    findings,
                    findings_left_out,
                });
                let this = Trial {
                    run,
                    parsed,
                    scored: scored.for_plants(indices, valid.len()),
                    judge_checks,
                    preexisting,
                };
                merged = Some(match merged {
                    None => this,
                    Some(so_far) => so_far.and(this),
                });
            }
            trials.extend(merged);
        }
        for (trial, index, parsed) in clean_runs {
            let edit = &clean[index];
            let (findings, findings_left_out) = keep_findings(located(&parsed), |finding| {
                locates_lines(finding, &edit.file, edit.line, edit.line, &changed_files)
            });
            review_rounds[rounds.len() + index].trials.push(RoundTrial {
                trial: trial + 1,
                statuses: Vec::new(),
                flagged: false,
                findings,
                findings_left_out,
            });
        }
        let measurement = Measurement {
            commit: commit.id,
            scorer: self.scorer,
            min_recall: self.min_recall,
            min_precision: self.min_precision,
            plants: plants.clone(),
            excluded,
            excluded_reasons,
            trials,
            rounds: review_rounds,
            clean: (self.clean_rounds > 0).then_some((self.clean_rounds, clean_excluded)),
            preexisting_in_clean: filter_preexisting.then_some(preexisting_clean),
            reviewer: self.reviewer_name(),
            reviewer_usage: self.in_process.as_ref().map(|reviewer| reviewer.usage()).unwrap_or_default(),
            controls,
            judge_usage: self.judge.as_ref().and_then(|judge| judge.usage()),
            judge_errors: (self.scorer == ScorerKind::Judge).then_some(failures.count),
            repro_sandbox: Some(
                if self.sandbox_repro {
                    revcal_process::Sandbox::new(vec![std::env::temp_dir()]).probe()
                } else {
                    revcal_process::Enforcement::Off
                }
                .describe()
                .to_owned(),
            ),
        };
        Ok((measurement, failures.first))
    }

    /// The clean rounds' neutral edits: up to `clean_rounds` of them, chosen from the seed
    /// among the sites of the target files (and the plants' files) on lines no plant
    /// changes, each as a one-line plant that is no bug. With a build command each is built
    /// like a plant, and one whose build fails is excluded with the reason.
    fn choose_clean(
        &self,
        commit: &crate::targets::CommitInfo,
        fallback: &[String],
        tree: &CommitTree,
        plants: &[Plant],
        scratch: &mut Scratch<'_>,
        signals: &SignalWatch,
    ) -> Result<(Vec<Plant>, Vec<CleanExcluded>), CalibrateError> {
        if self.clean_rounds == 0 {
            return Ok((Vec::new(), Vec::new()));
        }
        self.stage("choosing clean changes", None);
        let mut targets = choose_targets(commit, fallback).unwrap_or_default();
        targets.extend(plants.iter().flat_map(|plant| plant.files()).map(str::to_owned));
        targets.sort();
        targets.dedup();
        let mut checked = Vec::new();
        for target in targets {
            if let Ok(target) = tree.check_target(&target) {
                checked.push(target);
            }
        }
        let edits = crate::clean::choose(tree, &checked, plants, self.clean_rounds, self.seed);
        let mut kept = Vec::with_capacity(edits.len());
        let mut excluded = Vec::new();
        let build = self.build.command(tree);
        if build.is_some() {
            self.stage("building each clean change", Some(edits.len()));
        }
        for edit in edits {
            if let Some(build) = &build {
                let exit = scratch.run(build, Some(&edit), Origin::User, signals)?;
                self.emit(Progress::Step);
                if !exit.success() {
                    tracing::info!(edit = %edit.location(), "clean change excluded: `{build}` fails with it applied ({exit})");
                    excluded.push(CleanExcluded {
                        entry: None,
                        file: edit.file.clone(),
                        line: edit.line,
                        reason: format!("build: `{build}` fails with the neutral edit applied"),
                    });
                    continue;
                }
            }
            kept.push(edit);
        }
        Ok((kept, excluded))
    }

    /// The build check and the witness check: which plants are excluded, and why when it is
    /// not for being equivalent (parallel to `plants`).
    #[allow(clippy::type_complexity)]
    fn check_plants(
        &self,
        tree: &CommitTree,
        plants: &[Plant],
        scratch: &mut Scratch<'_>,
        signals: &SignalWatch,
    ) -> Result<(Vec<bool>, Vec<Option<Exclusion>>), CalibrateError> {
        let mut excluded = vec![false; plants.len()];
        // Why a plant is excluded when it is not for being equivalent: it ran away, or it
        // breaks the build.
        let mut excluded_reasons: Vec<Option<Exclusion>> = vec![None; plants.len()];
        if let Some(build) = self.build.command(tree) {
            self.stage("building each plant", Some(plants.len()));
            let original = scratch.run(&build, None, Origin::User, signals)?;
            if !original.success() {
                let output = scratch.output_tail(&build, None, Origin::User).unwrap_or_default().to_owned();
                return Err(CalibrateError::BuildFails {
                    command: build,
                    status: original.to_string(),
                    output,
                });
            }
            for (index, plant) in plants.iter().enumerate() {
                let exit = scratch.run(&build, Some(plant), Origin::User, signals)?;
                if !exit.success() {
                    tracing::info!(plant = %plant.location(), "plant excluded: `{build}` fails with it applied ({exit})");
                    excluded[index] = true;
                    excluded_reasons[index] = Some(match exit {
                        revcal_process::Exit::TimedOut => Exclusion::Runaway(format!(
                            "`{build}` ran past its time limit with the plant applied, twice"
                        )),
                        revcal_process::Exit::OutOfMemory(cap) => Exclusion::Runaway(format!(
                            "`{build}` used more than {} MiB of memory with the plant applied",
                            cap >> 20
                        )),
                        _ => Exclusion::Build(format!("`{build}` fails with the plant applied ({exit})")),
                    });
                }
                self.emit(Progress::Step);
            }
        }
        // Witness check: a witness must pass on the original and fail on the mutant.
        let witnessed = plants
            .iter()
            .zip(&excluded)
            .filter(|(plant, excluded)| plant.witness.is_some() && !**excluded)
            .count();
        self.stage("checking witnesses", Some(witnessed));
        // Every witness on the original first: the scratch tree stays unchanged between these
        // runs, so build-based witnesses (cargo test, ...) build the original once.
        for witness in
            plants.iter().zip(&excluded).filter(|(_, x)| !**x).filter_map(|(p, _)| p.witness.as_deref())
        {
            scratch.run(witness, None, Origin::User, signals)?;
        }
        for (index, plant) in plants.iter().enumerate() {
            if let Some(witness) = plant.witness.as_ref().filter(|_| !excluded[index]) {
                let result = scratch.discriminate(witness, plant, Origin::User, signals)?;
                if result.runaway() {
                    // The reason names no measured time: it goes into the report, which must
                    // not depend on how busy the machine was (the log has the times).
                    let reason = match result.mutant {
                        revcal_process::Exit::OutOfMemory(cap) => {
                            format!(
                                "its witness used more than {} MiB of memory with the plant applied",
                                cap >> 20
                            )
                        }
                        _ => "its witness ran past its time limit with the plant applied, twice".to_owned(),
                    };
                    tracing::warn!(
                        plant = %plant.location(),
                        limit = ?scratch.plant_timeout(witness),
                        original = ?scratch.baseline(witness).unwrap_or_default(),
                        "runaway plant excluded: {reason}"
                    );
                    excluded[index] = true;
                    excluded_reasons[index] = Some(Exclusion::Runaway(reason));
                } else if !result.discriminates() {
                    tracing::info!(plant = %plant.location(), original = %result.original, mutant = %result.mutant, "equivalent plant excluded");
                    excluded[index] = true;
                }
                self.emit(Progress::Step);
            }
        }
        Ok((excluded, excluded_reasons))
    }

    /// Scores each task (a review's plants and findings) with this run's scorer, in order;
    /// each with (repro-verified findings, of which the judge agreed) when the judge scores.
    /// With `failures`, judge errors are recorded there (never a match) instead of stopping
    /// the run. Emits one progress step per located (finding, plant) pair.
    fn score_tasks(
        &self,
        tasks: &[(Vec<&Plant>, &[Finding])],
        jobs: &Jobs,
        scratch: &mut Scratch<'_>,
        signals: &SignalWatch,
        failures: Option<&mut JudgeFailures>,
    ) -> Result<Vec<ScoredReview>, CalibrateError> {
        let mut checked = || self.emit(Progress::Step);
        let mut scored = Vec::with_capacity(tasks.len());
        match self.scorer {
            ScorerKind::String => {
                for (plants, findings) in tasks {
                    scored.push((
                        score_with_progress(plants, findings, &mut StringScorer, &mut checked)?,
                        (0, 0),
                    ));
                }
            }
            ScorerKind::Repro => {
                let mut scorer = ReproScorer { scratch, signals };
                for (plants, findings) in tasks {
                    scored.push((score_with_progress(plants, findings, &mut scorer, &mut checked)?, (0, 0)));
                }
            }
            ScorerKind::Judge => {
                let Some(judge) = self.judge.as_deref() else {
                    return Err(CalibrateError::NoJudge);
                };
                let total: u64 =
                    tasks.iter().map(|(plants, findings)| located_pairs(plants, findings) as u64).sum();
                let stepped = AtomicU64::new(0);
                let answered = || {
                    if stepped.fetch_add(1, Ordering::SeqCst) < total {
                        self.emit(Progress::Step);
                    }
                };
                let judged =
                    crate::judging::score(tasks, judge, jobs, Some(scratch), signals, failures, &answered)?;
                // Questions asked once for several findings, and pairs decided without a
                // question, still count as steps.
                for _ in stepped.load(Ordering::SeqCst)..total {
                    self.emit(Progress::Step);
                }
                scored.extend(judged.scored.into_iter().zip(judged.agreement));
            }
        }
        Ok(scored)
    }

    /// Runs every review: each trial of each round, in a scratch checkout of the commit with
    /// that round's plants, `--jobs` at once; the runs in the order trial by trial, round by
    /// round.
    #[allow(clippy::too_many_arguments)]
    fn review(
        &self,
        repo: &Repository,
        commit: &crate::targets::CommitInfo,
        tree: &CommitTree,
        jobs: &Jobs,
        rounds: &[Vec<&Plant>],
        reach: &crate::reach::Reach,
        signals: &SignalWatch,
    ) -> Result<Vec<ReviewRun>, CalibrateError> {
        // Every file any round changes: each review's checkout holds this round's version of
        // each, so that its `.git` and its files look the same whatever the round is.
        let changed: BTreeSet<String> =
            rounds.iter().flatten().flat_map(|plant| plant.files()).map(str::to_owned).collect();
        // The repository's slots (kept per repository in the checkout cache) and the object
        // store its checkouts of this commit share.
        let repository = crate::cache::repository_key(repo.git_dir());
        let store = crate::review_commit::store_id(&commit.id, &changed, self.checkout_limits.max_file_bytes);
        let (objects, written) = jobs.object_store(&repository, &store)?;
        let commit_id = gix::ObjectId::from_hex(commit.id.as_bytes())
            .map_err(|e| CalibrateError::git("read the commit's id", e))?;
        let commits = crate::review_commit::ReviewCommits::new(
            repo.gix(),
            commit_id,
            commit.tree,
            changed,
            (&objects, written),
            self.checkout_limits.max_file_bytes,
        )?;
        let mut originals: BTreeMap<&str, Vec<u8>> = BTreeMap::new();
        for file in commits.changed() {
            originals.insert(file, tree.file(file)?);
        }
        let mut round_checkouts = Vec::with_capacity(rounds.len());
        for round in rounds {
            let mut by_file: BTreeMap<&str, Vec<&Plant>> = BTreeMap::new();
            for plant in round {
                for file in plant.files() {
                    by_file.entry(file).or_default().push(plant);
                }
            }
            let mut files = BTreeMap::new();
            for (file, original) in &originals {
                let bytes = match by_file.get(file) {
                    Some(file_plants) => apply_to(original, file, file_plants)
                        .map_err(|source| CalibrateError::ApplyPlant { file: (*file).to_owned(), source })?,
                    None => original.clone(),
                };
                files.insert((*file).to_owned(), bytes);
            }
            let git = commits.round(&files)?;
            round_checkouts.push(Arc::new(crate::slots::Round { files, git }));
        }
        let reviews: Vec<crate::reviews::Review> = (0..self.trials)
            .flat_map(|trial| {
                round_checkouts.iter().enumerate().map(move |(round, checkout)| crate::reviews::Review {
                    round: Arc::clone(checkout),
                    tag: format!("{}:{round}", commit.id),
                    trial: trial + 1,
                })
            })
            .collect();
        // A root commit has no parent: its base is the empty tree, so `git diff {base}` shows it all.
        let base = commit.base.clone().unwrap_or_else(|| EMPTY_TREE.to_owned());
        let start = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
        let command = reviewer::substitute_base(&reviewer::resolve_program(&self.review_cmd, &start), &base);
        // No path to the user's repository: its files are the unplanted ones
        // (docs/calibration.md#against-a-hostile-reviewer).
        let env = [("REVCAL_BASE", base.clone()), ("REVCAL_CALIBRATION", "1".to_owned())];
        let settings = crate::reviews::Settings {
            command: &command,
            ok_codes: &self.ok_exit_codes,
            timeout: self.review_timeout,
            output_cap: self.output_cap,
            env: &env,
            withheld: reach.withheld(),
            repository: &repository,
            in_process: self
                .in_process
                .as_deref()
                .map(|reviewer| crate::reviews::InProcess { reviewer, base: &base }),
            panic_during_review: std::env::var_os(PANIC_DURING_REVIEW).is_some(),
        };
        self.stage("running the reviews", Some(reviews.len()));
        // The reviews run in an order drawn afresh for each run: a reviewer that counts its
        // reviews cannot tell the planted round (listed first) from the clean ones. The runs
        // come back in the reviews' own order, so the report does not depend on it.
        let order = run_order(reviews.len());
        let in_order: Vec<crate::reviews::Review> =
            order.iter().map(|&index| reviews[index].clone()).collect();
        let runs = crate::reviews::run_all(jobs, tree, &in_order, &settings, signals, self)?;
        let mut placed: Vec<Option<ReviewRun>> = (0..runs.len()).map(|_| None).collect();
        for (run, &index) in runs.into_iter().zip(&order) {
            placed[index] = Some(run);
        }
        Ok(placed.into_iter().flatten().collect())
    }
}

impl crate::reviews::Observer for Calibration {
    fn reviews(&self, running: usize, finished: usize, total: usize) {
        self.emit(Progress::Reviews {
            running: running as u64,
            finished: finished as u64,
            total: total as u64,
        });
    }
}

/// A random order of `count` reviews (Fisher-Yates, seeded from the operating system's
/// randomness; the identity when there is none).
fn run_order(count: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..count).collect();
    let mut seed = [0u8; 8];
    if getrandom::fill(&mut seed).is_err() {
        return order;
    }
    let mut state = u64::from_le_bytes(seed) | 1;
    for last in (1..order.len()).rev() {
        // xorshift64: plenty to shuffle a few hundred reviews.
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let pick = usize::try_from(state % (last as u64 + 1)).unwrap_or(0);
        order.swap(last, pick);
    }
    order
}

/// The findings of a review that name a file and a line, in the reviewer's order.
fn located(parsed: &ParsedFindings) -> Vec<LocatedFinding> {
    parsed
        .findings
        .iter()
        .filter_map(|finding| match (finding.file.as_deref(), finding.line) {
            (Some(file), Some(line)) if !file.trim().is_empty() && line > 0 => {
                Some(LocatedFinding { file: file.to_owned(), line, body: finding.text.clone() })
            }
            _ => None,
        })
        .collect()
}

/// The reviewer's output with every path into its checkout made relative to the repository
/// (`/…/slot-2/tree/src/a.rs` becomes `src/a.rs`, the checkout itself `.`): findings must not
/// depend on which slot ran the review.
fn relative_to_checkout(output: &str, checkout: &Path) -> String {
    let mut text = output.to_owned();
    let canonical = checkout.canonicalize().unwrap_or_else(|_| checkout.to_path_buf());
    for root in [canonical.as_path(), checkout] {
        let root = root.display().to_string();
        if root.len() > 1 && text.contains(&root) {
            text = text.replace(&format!("{root}/"), "").replace(&root, ".");
        }
    }
    text
}

/// One review of the planted checkout.
#[derive(Debug, Clone)]
pub(crate) struct Trial {
    /// How the reviewer ran.
    pub(crate) run: ReviewRun,
    /// What its output parsed to.
    pub(crate) parsed: ParsedFindings,
    /// What it caught.
    pub(crate) scored: Scored,
    /// (repro-verified findings, of which the judge agreed), when a judge scored.
    pub(crate) judge_checks: (usize, usize),
    /// Findings set aside as made on the unplanted change too (not in `parsed`).
    pub(crate) preexisting: usize,
}

impl Trial {
    /// This trial and `other`, the reviews of other plants in the same trial, as one: the
    /// findings one after the other, the highest exit code, the wall times added.
    fn and(mut self, other: Trial) -> Trial {
        let offset = self.parsed.findings.len();
        self.run.exit_code = self.run.exit_code.max(other.run.exit_code);
        self.run.truncated |= other.run.truncated;
        self.run.elapsed += other.run.elapsed;
        self.run.output.push('\n');
        self.run.output.push_str(&other.run.output);
        if self.run.stderr_tail.is_empty() {
            self.run.stderr_tail = other.run.stderr_tail;
        }
        self.parsed.format = self.parsed.format.or(other.parsed.format);
        self.parsed.findings.extend(other.parsed.findings);
        self.parsed.warnings.extend(other.parsed.warnings);
        self.parsed.embedded |= other.parsed.embedded;
        for (mine, theirs) in self.scored.caught_by.iter_mut().zip(other.scored.caught_by) {
            if mine.is_none() {
                *mine = theirs.map(|finding| finding + offset);
            }
        }
        self.scored.findings.extend(other.scored.findings);
        self.judge_checks.0 += other.judge_checks.0;
        self.judge_checks.1 += other.judge_checks.1;
        self.preexisting += other.preexisting;
        self
    }
}

/// Everything a run measured, before it becomes a report.
#[derive(Debug, Clone)]
pub(crate) struct Measurement {
    /// The commit's full id.
    pub(crate) commit: String,
    /// The scorer used.
    pub(crate) scorer: ScorerKind,
    /// The recall gate.
    pub(crate) min_recall: f64,
    /// The precision gate.
    pub(crate) min_precision: Option<f64>,
    /// Every plant chosen, excluded ones included.
    pub(crate) plants: Vec<Plant>,
    /// Parallel to `plants`: excluded (as equivalent, or as a runaway).
    pub(crate) excluded: Vec<bool>,
    /// Parallel to `plants`: why a runaway or unbuildable plant was excluded (`None` for the
    /// others).
    pub(crate) excluded_reasons: Vec<Option<Exclusion>>,
    /// One per review; scores index the valid (not excluded) plants in order.
    pub(crate) trials: Vec<Trial>,
    /// Every review round (planted, then clean), each with its trials.
    pub(crate) rounds: Vec<ReviewRound>,
    /// With clean rounds asked for: how many, and the neutral edits excluded.
    pub(crate) clean: Option<(usize, Vec<CleanExcluded>)>,
    /// With the filter of findings made on the unplanted change: those set aside in each
    /// trial's clean reviews (the planted reviews' are in `trials`).
    pub(crate) preexisting_in_clean: Option<Vec<usize>>,
    /// The reviewer's command.
    pub(crate) reviewer: String,
    /// What the in-process reviewer spent, one entry per model it asked (empty for a command).
    pub(crate) reviewer_usage: Vec<revcal_judge::JudgeUsage>,
    /// The controls' scores.
    pub(crate) controls: Controls,
    /// What the judge spent, when it keeps count.
    pub(crate) judge_usage: Option<revcal_judge::JudgeUsage>,
    /// Review questions the judge gave no verdict on (judge scorer only).
    pub(crate) judge_errors: Option<usize>,
    /// How far witness and repro commands were sandboxed.
    pub(crate) repro_sandbox: Option<String>,
}

/// Restores the files recorded in a restore journal that an earlier release of revcal left
/// in the repository containing `dir` (it planted in the work tree; a run killed with SIGKILL
/// left its plants there) byte-for-byte with their mode bits, then removes the journal.
/// Nothing to restore is [`Recovered::NothingToRecover`]. This release never writes a journal.
pub fn recover(dir: &Path) -> Result<Recovered, CalibrateError> {
    let repo = Repository::discover(dir)?;
    match repo.work_tree() {
        Some(work_tree) => guard::recover(work_tree, repo.git_dir()),
        None => Ok(Recovered::NothingToRecover),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reviews_run_in_an_order_drawn_for_each_run() {
        let orders: Vec<Vec<usize>> = (0..50).map(|_| run_order(6)).collect();
        for order in &orders {
            let mut sorted = order.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, (0..6).collect::<Vec<_>>(), "a permutation: {order:?}");
        }
        // The chance that 50 draws all put the first review first is 6^-50.
        assert!(orders.iter().any(|order| order[0] != 0), "{orders:?}");
        assert!(run_order(0).is_empty() && run_order(1) == [0]);
    }
}
