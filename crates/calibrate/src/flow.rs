//! The calibration flow described in docs/calibration.md#the-flow, driven by
//! [`Calibration::builder`]: refuse a dirty tree -> targets -> plants -> build check -> witness check ->
//! controls -> journal -> plant -> review (K trials) -> restore -> parse findings -> score ->
//! report.

use crate::controls::{echo_findings, oracle_findings};
use crate::error::CalibrateError;
use crate::findings::{ParsedFindings, parse_findings};
use crate::guard::{self, Guard, Lock, Recovered};
use crate::judge::{Judge, JudgeError};
use crate::plants::{Plant, apply_to, read_plants_file, resolve_specs_with};
use crate::report::{ControlOutcome, Controls};
use crate::reviewer::{self, ReviewRun};
use crate::scorers::{JudgeFailures, JudgeScorer, ReproScorer, StringScorer};
use crate::scoring::{Scored, Scorer, ScorerKind, located_pairs, score_with_progress};
use crate::scratch::Scratch;
use crate::signals::SignalWatch;
use crate::targets::{Repository, check_target, choose_targets};
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A progress event, for a progress bar (the library never prints).
#[derive(Debug, Clone, PartialEq, Eq)]
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
    /// The run is over (the bar can go).
    Done,
}

/// Whether each plant is built, in a scratch copy, before the review: a plant that breaks the
/// build would be "caught" by any compiler-backed reviewer without being read, and with it
/// applied such a reviewer could not run at all.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum BuildCheck {
    /// `cargo check --all-targets` when a `Cargo.toml` is at the root of the work tree; no
    /// check otherwise.
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

    /// The command to run in `work_tree`, if any.
    fn command(&self, work_tree: &Path) -> Option<String> {
        match self {
            BuildCheck::Auto => work_tree.join("Cargo.toml").is_file().then(|| Self::CARGO.to_owned()),
            BuildCheck::Off => None,
            BuildCheck::Command(command) if command.trim().is_empty() => None,
            BuildCheck::Command(command) => Some(command.clone()),
        }
    }
}

/// Why a plant is not counted, when it is not for being equivalent.
#[derive(Debug, Clone)]
pub(crate) enum Exclusion {
    /// Its witness or build ran past its time limit or memory cap.
    Runaway(String),
    /// The build fails with it applied.
    Build(String),
}

/// The default memory cap of witness and repro commands: 4 GiB.
pub const DEFAULT_REPRO_MEMORY: u64 = 4 << 30;

/// The id of git's empty tree (SHA-1), the base of a root commit.
const EMPTY_TREE: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

type ProgressFn = Box<dyn Fn(Progress) + Send + Sync>;

/// Fault injection for the test that proves a panic inside revcal restores the tree: when
/// this variable is set, the run panics while the plants are in the tree. Not a setting.
const PANIC_DURING_REVIEW: &str = "REVCAL_TEST_PANIC_DURING_REVIEW";

/// How a calibration is set up; build one with [`Calibration::builder`].
pub struct Calibration {
    dir: PathBuf,
    review_cmd: String,
    commit: String,
    files: Vec<String>,
    plants: usize,
    seed: u64,
    profile: revcal_mutate::Profile,
    plants_file: Option<PathBuf>,
    also_synthetic: bool,
    one_at_a_time: bool,
    min_recall: f64,
    min_precision: Option<f64>,
    min_plants: usize,
    scorer: ScorerKind,
    judge: Option<Box<dyn Judge>>,
    review_timeout: Duration,
    repro_timeout: Duration,
    repro_memory: Option<u64>,
    sandbox_repro: bool,
    trials: usize,
    build: BuildCheck,
    output_cap: usize,
    ok_exit_codes: Vec<i32>,
    handle_signals: bool,
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
    /// docs/calibration.md#flags (set the reviewer with [`review_cmd`](Self::review_cmd)): commit HEAD, 8 plants, min recall 0.5, min plants 3, scorer judge, review timeout
    /// 1800 s, 1 trial.
    pub fn builder() -> Calibration {
        Calibration {
            dir: PathBuf::from("."),
            review_cmd: String::new(),
            commit: "HEAD".into(),
            files: Vec::new(),
            plants: 8,
            seed: 0,
            profile: revcal_mutate::Profile::Default,
            plants_file: None,
            also_synthetic: false,
            one_at_a_time: false,
            min_recall: 0.5,
            min_precision: None,
            min_plants: 3,
            scorer: ScorerKind::Judge,
            judge: None,
            review_timeout: Duration::from_secs(1800),
            repro_timeout: Duration::from_secs(300),
            repro_memory: Some(DEFAULT_REPRO_MEMORY),
            sandbox_repro: true,
            trials: 1,
            build: BuildCheck::Auto,
            output_cap: reviewer::DEFAULT_OUTPUT_CAP,
            ok_exit_codes: reviewer::DEFAULT_OK_EXIT_CODES.to_vec(),
            handle_signals: true,
            progress: None,
        }
    }

    /// The repository (any directory inside its work tree).
    pub fn dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.dir = dir.into();
        self
    }
    /// The reviewer's shell command; `{base}` becomes the base commit.
    pub fn review_cmd(mut self, command: impl Into<String>) -> Self {
        self.review_cmd = command.into();
        self
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
    /// Run witness and repro commands in a sandbox (default on): they may write only beneath
    /// their scratch copy and temporary directories and make no TCP connection (Linux
    /// Landlock, as far as the kernel offers it; the report says how far). A reviewer prints
    /// its repro commands, so without the sandbox a hostile reviewer runs any command as the
    /// user.
    pub fn sandbox_repro(mut self, on: bool) -> Self {
        self.sandbox_repro = on;
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
    /// SIGHUP, SIGQUIT, SIGUSR1, ...) during the run (default on) so that files are restored;
    /// turn off when the embedding program handles signals itself.
    pub fn handle_signals(mut self, on: bool) -> Self {
        self.handle_signals = on;
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
        if self.review_cmd.trim().is_empty() {
            return Err(CalibrateError::NoReviewer);
        }
        let repo = Repository::discover(&self.dir)?;
        // The lock first, then the tree: a run that read the files before taking it could read
        // another run's plants as the originals (docs/calibration.md#never-losing-your-work).
        let lock = Lock::acquire(repo.git_dir())?;
        repo.ensure_clean()?;
        if self.scorer == ScorerKind::Judge && self.judge.is_none() {
            return Err(CalibrateError::NoJudge);
        }
        let signals = if self.handle_signals {
            SignalWatch::install().map_err(CalibrateError::Signals)?
        } else {
            SignalWatch::inert()
        };
        let work_tree = repo.work_tree().to_path_buf();
        let commit = repo.commit(&self.commit)?;

        self.stage("choosing plants", None);
        let tracked_files = repo.tracked_files()?;
        let tracked: HashSet<String> = tracked_files.iter().cloned().collect();
        // One rule for every target, however it was named (docs/calibration.md#never-losing-your-work).
        let fallback = self
            .files
            .iter()
            .map(|file| check_target(&work_tree, &tracked, file))
            .collect::<Result<Vec<_>, _>>()?;
        let synthetic = |count: usize| -> Result<Vec<Plant>, CalibrateError> {
            let targets = choose_targets(&commit, &fallback)?;
            for target in &targets {
                check_target(&work_tree, &tracked, target)?;
            }
            crate::selection::select_plants(&work_tree, &targets, count, self.seed, self.profile)
        };
        let mut plants = match &self.plants_file {
            Some(file) => {
                let mut plants =
                    resolve_specs_with(file, &read_plants_file(file)?, &work_tree, self.one_at_a_time)?;
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
            plant.file = check_target(&work_tree, &tracked, &plant.file)?;
            for edit in &mut plant.edits {
                edit.file = check_target(&work_tree, &tracked, &edit.file)?;
            }
        }
        // Witness and repro commands run in a copy of the tracked files, made on first use.
        let mut scratch = Scratch::deferred(
            &work_tree,
            tracked_files,
            self.repro_timeout,
            self.repro_memory,
            self.sandbox_repro,
        );

        let mut excluded = vec![false; plants.len()];
        // Why a plant is excluded when it is not for being equivalent: it ran away, or it
        // breaks the build.
        let mut excluded_reasons: Vec<Option<Exclusion>> = vec![None; plants.len()];
        if let Some(build) = self.build.command(&work_tree) {
            self.stage("building each plant", Some(plants.len()));
            let original = scratch.run(&build, None, &signals)?;
            if !original.success() {
                return Err(CalibrateError::BuildFails { command: build, status: original.to_string() });
            }
            for (index, plant) in plants.iter().enumerate() {
                let exit = scratch.run(&build, Some(plant), &signals)?;
                if !exit.success() {
                    let reason = format!("`{build}` fails with the plant applied ({exit})");
                    tracing::info!(plant = %plant.location(), "plant excluded: {reason}");
                    excluded[index] = true;
                    excluded_reasons[index] = Some(match exit {
                        crate::process::Exit::TimedOut | crate::process::Exit::OutOfMemory(_) => {
                            Exclusion::Runaway(reason)
                        }
                        _ => Exclusion::Build(reason),
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
            scratch.run(witness, None, &signals)?;
        }
        for (index, plant) in plants.iter().enumerate() {
            if let Some(witness) = plant.witness.as_ref().filter(|_| !excluded[index]) {
                let result = scratch.discriminate(witness, plant, &signals)?;
                if result.runaway() {
                    let reason = match result.mutant {
                        crate::process::Exit::OutOfMemory(cap) => {
                            format!(
                                "its witness used more than {} MiB of memory with the plant applied",
                                cap >> 20
                            )
                        }
                        _ => format!(
                            "its witness ran past {:.1} s with the plant applied ({:.2} s on the original tree)",
                            scratch.plant_timeout(witness).as_secs_f64(),
                            scratch.baseline(witness).unwrap_or_default().as_secs_f64()
                        ),
                    };
                    tracing::warn!(plant = %plant.location(), "runaway plant excluded: {reason}");
                    excluded[index] = true;
                    excluded_reasons[index] = Some(Exclusion::Runaway(reason));
                } else if !result.discriminates() {
                    tracing::info!(plant = %plant.location(), original = %result.original, mutant = %result.mutant, "equivalent plant excluded");
                    excluded[index] = true;
                }
                self.emit(Progress::Step);
            }
        }
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
        let excluded_count = excluded.iter().filter(|x| **x).count();
        if valid.len() < self.min_plants || valid.is_empty() {
            return Err(CalibrateError::TooFewPlants {
                valid: valid.len(),
                excluded: excluded_count,
                min: self.min_plants,
            });
        }

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
        let mut agreement = (0, 0);
        let echo = self.score_with(&valid, &echo_review, &mut scratch, &signals, &mut agreement, None)?;
        let oracle = if oracle_plants.is_empty() {
            None
        } else {
            Some(self.score_with(
                &oracle_plants,
                &oracle_review,
                &mut scratch,
                &signals,
                &mut agreement,
                None,
            )?)
        };
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

        // Plant, review, restore: every plant at once, or each alone (one review per plant).
        let rounds: Vec<Vec<usize>> = if self.one_at_a_time {
            (0..valid.len()).map(|index| vec![index]).collect()
        } else {
            vec![(0..valid.len()).collect()]
        };
        let mut round_runs = Vec::with_capacity(rounds.len());
        for round in &rounds {
            let round_plants: Vec<&Plant> = round.iter().map(|&index| valid[index]).collect();
            round_runs.push(self.review(&repo, &lock, &commit.base, &round_plants, &signals)?);
        }

        // Score every trial: each round's findings against its plants, put together.
        let trial_count = round_runs.first().map_or(0, Vec::len);
        let mut trials = Vec::with_capacity(trial_count);
        let mut failures = JudgeFailures::default();
        for trial in 0..trial_count {
            let number = trial + 1;
            let mut merged: Option<Trial> = None;
            for (round, runs) in rounds.iter().zip(&round_runs) {
                let run = runs[trial].clone();
                tracing::debug!(elapsed = ?run.elapsed, exit_code = run.exit_code, "reviewer finished");
                let parsed = parse_findings(&run.output);
                if run.truncated {
                    tracing::warn!(
                        "the reviewer printed more than {} bytes; only the first were read for findings",
                        self.output_cap
                    );
                }
                for warning in &parsed.warnings {
                    tracing::warn!("reviewer output: {warning}");
                }
                let label = if trial_count > 1 {
                    format!("scoring the findings of trial {number}/{trial_count}")
                } else {
                    "scoring the findings".to_owned()
                };
                let round_plants: Vec<&Plant> = round.iter().map(|&index| valid[index]).collect();
                self.stage(&label, Some(located_pairs(&round_plants, &parsed.findings)));
                let mut judge_checks = (0, 0);
                let scored = self.score_with(
                    &round_plants,
                    &parsed.findings,
                    &mut scratch,
                    &signals,
                    &mut judge_checks,
                    Some(&mut failures),
                )?;
                let this = Trial { run, parsed, scored: scored.for_plants(round, valid.len()), judge_checks };
                merged = Some(match merged {
                    None => this,
                    Some(so_far) => so_far.and(this),
                });
            }
            trials.extend(merged);
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
            controls,
            judge_usage: self.judge.as_ref().and_then(|judge| judge.usage()),
            judge_errors: (self.scorer == ScorerKind::Judge).then_some(failures.count),
            repro_sandbox: Some(
                if self.sandbox_repro {
                    crate::sandbox::Sandbox::new(vec![std::env::temp_dir()]).probe()
                } else {
                    crate::sandbox::Enforcement::Off
                }
                .describe()
                .to_owned(),
            ),
        };
        Ok((measurement, failures.first))
    }

    /// Scores `findings` against `plants` with this run's scorer; `agreement` accumulates
    /// (repro-verified, judge agreed) when the judge scores. With `failures`, judge errors are
    /// recorded there (never a match) instead of stopping the run.
    fn score_with(
        &self,
        plants: &[&Plant],
        findings: &[crate::findings::Finding],
        scratch: &mut Scratch,
        signals: &SignalWatch,
        agreement: &mut (usize, usize),
        failures: Option<&mut JudgeFailures>,
    ) -> Result<Scored, CalibrateError> {
        let mut checked = || self.emit(Progress::Step);
        match self.scorer {
            ScorerKind::String => score_with_progress(plants, findings, &mut StringScorer, &mut checked),
            ScorerKind::Repro => {
                score_with_progress(plants, findings, &mut ReproScorer { scratch, signals }, &mut checked)
            }
            ScorerKind::Judge => {
                let Some(judge) = self.judge.as_deref() else {
                    return Err(CalibrateError::NoJudge);
                };
                let mut scorer =
                    JudgeScorer { judge, scratch: Some(scratch), signals, verified: 0, agreed: 0, failures };
                let scored =
                    score_with_progress(plants, findings, &mut scorer as &mut dyn Scorer, &mut checked)?;
                agreement.0 += scorer.verified;
                agreement.1 += scorer.agreed;
                Ok(scored)
            }
        }
    }

    /// Journals, plants, runs the reviewer `trials` times and restores, on every path.
    fn review(
        &self,
        repo: &Repository,
        lock: &Lock,
        base: &Option<String>,
        plants: &[&Plant],
        signals: &SignalWatch,
    ) -> Result<Vec<ReviewRun>, CalibrateError> {
        let work_tree = repo.work_tree();
        let mut by_file: BTreeMap<&str, Vec<&Plant>> = BTreeMap::new();
        for plant in plants {
            for file in plant.files() {
                by_file.entry(file).or_default().push(plant);
            }
        }
        let mut planted = Vec::with_capacity(by_file.len());
        for (file, file_plants) in &by_file {
            let path = work_tree.join(file);
            let original = std::fs::read(&path).map_err(|e| CalibrateError::io("read", &path, e))?;
            let mutated = apply_to(&original, file, file_plants)
                .map_err(|source| CalibrateError::ApplyPlant { file: (*file).to_owned(), source })?;
            planted.push((PathBuf::from(file), mutated));
        }
        let files: Vec<PathBuf> = planted.iter().map(|(file, _)| file.clone()).collect();
        // A root commit has no parent: its base is the empty tree, so `git diff {base}` shows it all.
        let base = base.clone().unwrap_or_else(|| EMPTY_TREE.to_owned());
        let command = reviewer::substitute_base(&self.review_cmd, &base);
        let token = crate::process::run_token();
        let env = [
            ("REVCAL_BASE", base.clone()),
            ("REVCAL_CALIBRATION", "1".to_owned()),
            (crate::process::RUN_TOKEN_VARIABLE, token.clone()),
        ];

        let panic_during_review = std::env::var_os(PANIC_DURING_REVIEW).is_some();
        // A reviewer may commit, stage or stash the plants: what git holds besides the work
        // tree is compared after the review (docs/calibration.md#never-losing-your-work).
        let state_before = repo.state()?;
        let mut guard = Guard::begin(lock, work_tree, &files)?;
        let subreaper = crate::process::Subreaper::start();
        self.stage("running the reviewer", Some(self.trials));
        let reviewed = (|| {
            let mut runs = Vec::with_capacity(self.trials);
            for _ in 0..self.trials {
                // Re-plant before each trial: a reviewer may have edited the files.
                for (file, bytes) in &planted {
                    guard.write(file, bytes)?;
                }
                if let Some(signal) = signals.received() {
                    return Err(CalibrateError::Interrupted { signal, name: crate::signals::name(signal) });
                }
                let run = reviewer::run_reviewer(
                    &command,
                    &self.ok_exit_codes,
                    work_tree,
                    self.review_timeout,
                    self.output_cap,
                    &env,
                    signals,
                )?;
                if panic_during_review {
                    panic!("injected panic while the plants are in the tree ({PANIC_DURING_REVIEW})");
                }
                runs.push(run);
                self.emit(Progress::Step);
            }
            Ok(runs)
        })();
        // Whatever the reviewer started ends before the restore, also what left its process
        // group, so that nothing writes the plants back afterwards.
        crate::process::end_descendants(&token);
        drop(subreaper);
        let restored = guard.restore();
        let changes = repo.state().map(|state| state_before.changes(&state));
        if let (Err(_), Ok(changes)) = (&reviewed, &changes) {
            for change in changes {
                tracing::warn!("the reviewer changed the repository beyond its files: {change}");
            }
        }
        let runs = reviewed?;
        restored?;
        let changes = changes?;
        if !changes.is_empty() {
            return Err(CalibrateError::RepositoryChanged { changes });
        }
        if let Some(signal) = signals.received() {
            return Err(CalibrateError::Interrupted { signal, name: crate::signals::name(signal) });
        }
        Ok(runs)
    }
}

/// One review of the planted tree.
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
    /// Parallel to `plants`: why a runaway plant was excluded (`None` for the others).
    pub(crate) excluded_reasons: Vec<Option<Exclusion>>,
    /// One per review; scores index the valid (not excluded) plants in order.
    pub(crate) trials: Vec<Trial>,
    /// The controls' scores.
    pub(crate) controls: Controls,
    /// What the judge spent, when it keeps count.
    pub(crate) judge_usage: Option<crate::judge::JudgeUsage>,
    /// Review questions the judge gave no verdict on (judge scorer only).
    pub(crate) judge_errors: Option<usize>,
    /// How far witness and repro commands were sandboxed.
    pub(crate) repro_sandbox: Option<String>,
}

/// Restores the files recorded in the restore journal of the repository containing `dir`
/// (what an interrupted run left planted) byte-for-byte with their mode bits, then removes
/// the journal.
pub fn recover(dir: &Path) -> Result<Recovered, CalibrateError> {
    let repo = Repository::discover(dir)?;
    guard::recover(repo.work_tree(), repo.git_dir())
}
