//! Scratch copies of the commit's files, where witness, build and repro commands run: once on
//! the original and once per plant with only that plant applied. The user's own build and
//! witness commands run in one copy, with the user's environment, network and caches; the
//! repro commands a reviewer prints run in another, in the sandbox, with the reviewer's
//! environment: nothing a reviewer's command leaves in its copy is ever run as the user's.
//! The user's tree is never touched by these commands, and results are cached per (origin,
//! command, plant).
//!
//! A command's time limit with a plant applied comes from its time on the original: five
//! times that, but never less than a floor of 20 s (cargo-mutants' rule), so that a loaded
//! machine does not make an ordinary run look like a runaway; and a run stopped at its limit
//! is run once more before it counts as timed out.

use crate::error::CalibrateError;
use crate::jobs::Jobs;
use crate::plants::{Plant, Planting, apply_to};
use crate::tree::CommitTree;
use revcal_process::Sandbox;
use revcal_process::SignalWatch;
use revcal_process::{self as process, Exit, ShellCommand};
use std::collections::HashMap;
use std::fs;
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What a command did on the original and on one mutant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Discrimination {
    /// Exit on the original tree.
    pub(crate) original: Exit,
    /// Exit with the plant applied.
    pub(crate) mutant: Exit,
}

impl Discrimination {
    /// Passes on the original and fails on the mutant. A mutant run stopped for its time or
    /// memory is not a failure (see [`Self::runaway`] and [`Self::timed_out`]).
    pub(crate) fn discriminates(&self) -> bool {
        self.original.success()
            && match self.mutant {
                Exit::Code(code) => code != 0,
                Exit::Signal(_) => true,
                // Stopped from outside (time, memory, a signal), or an ending not known yet:
                // never counted as the plant failing its witness.
                _ => false,
            }
    }

    /// Passes on the original and ran past its time limit with the plant applied, twice.
    pub(crate) fn timed_out(&self) -> bool {
        self.original.success() && self.mutant == Exit::TimedOut
    }

    /// True when the run on the mutant was stopped for running too long or eating memory.
    pub(crate) fn runaway(&self) -> bool {
        self.original.success() && matches!(self.mutant, Exit::TimedOut | Exit::OutOfMemory(_))
    }
}

/// Whose a command run in a scratch copy is: that decides the copy it runs in, its sandbox
/// and its environment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Origin {
    /// The user's own build and witness commands: with the user's environment, network and
    /// download caches (cargo's registry, Go's module and build caches, pip's and npm's),
    /// outside the sandbox; only build output (cargo's, Python's byte code, mypy's and
    /// ruff's caches) goes to directories of the copy's.
    User,
    /// A repro command a reviewer printed: in the sandbox (unless it is turned off), in a copy
    /// of its own that no user command ever runs in, with the environment the reviewer gets
    /// ([`crate::reach`]) and build and cache directories of the copy's.
    Reviewer,
}

impl Origin {
    /// The prefix of the copy's directory in the run directory.
    fn directory(self) -> &'static str {
        match self {
            Origin::User => "scratch",
            Origin::Reviewer => "repro",
        }
    }
}

/// The command and the copy to run a finding's `repro` with: a repro that is the plant's own
/// witness is the user's command, whose runs by the witness check stand; any other is the
/// reviewer's.
pub(crate) fn repro_command<'p>(plant: &'p Plant, repro: &'p str) -> (&'p str, Origin) {
    match plant.witness.as_deref() {
        Some(witness) if witness.trim() == repro.trim() => (witness, Origin::User),
        _ => (repro, Origin::Reviewer),
    }
}

/// One copy of the commit's files, made on first use: a run whose commands of this origin
/// never run copies nothing.
struct TreeCopy {
    dir: PathBuf,
    made: bool,
    planted: Vec<String>,
    env: Vec<(&'static str, String)>,
    sandbox: Option<Sandbox>,
}

/// How a command ended, and the last lines of what it printed.
#[derive(Debug, Clone)]
struct Ran {
    exit: Exit,
    tail: String,
}

/// The scratch copies of the commit's files where the user's build and witness commands and
/// the reviewer's repro commands run, one copy for each ([`Origin`]); results are cached per
/// (origin, command, plant).
pub(crate) struct Scratch<'a> {
    tree: &'a CommitTree,
    jobs: &'a Jobs,
    user: TreeCopy,
    reviewer: TreeCopy,
    timeout: Duration,
    memory_cap: Option<u64>,
    /// Run the reviewer's commands sandboxed.
    sandboxed: bool,
    /// Variables the reviewer's commands do not get.
    withheld: Vec<String>,
    results: HashMap<(Origin, String, Option<String>), Ran>,
    /// Wall time of each command on the original tree.
    baselines: HashMap<(Origin, String), Duration>,
}

impl std::fmt::Debug for Scratch<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scratch")
            .field("user", &self.user.dir)
            .field("reviewer", &self.reviewer.dir)
            .finish_non_exhaustive()
    }
}

/// The copy of the tree, the commands' temporary directory, their cargo target directory,
/// their caches and the build output emptied before each command, inside a copy's directory.
const TREE: &str = "tree";
const TMP: &str = "tmp";
const TARGET: &str = "target";
const CACHES: &str = "caches";
const FRESH: &str = "fresh";

/// Lines of a command's output kept for its error message.
const TAIL_LINES: usize = 10;

/// A plant's time limit is `MULTIPLIER` times the command's time on the original tree, at
/// least `FLOOR`, never more than the repro timeout: cargo-mutants' rule for its test timeout
/// (five times the baseline, at least 20 s, <https://mutants.rs/timeouts.html>). The floor is
/// what a loaded machine does not reach by accident: below it, how busy the machine was would
/// decide which plants count.
const MULTIPLIER: u32 = 5;
/// See [`MULTIPLIER`].
pub(crate) const FLOOR: Duration = Duration::from_secs(20);

impl<'a> Scratch<'a> {
    /// Scratch copies of the files of `tree` in the run directory of `jobs` (each made when a
    /// command of its origin first runs). Each command is killed after `timeout`, and its
    /// process group past `memory_cap` bytes of resident memory; with `sandboxed`, the
    /// reviewer's commands run in the [`Sandbox`]; they never get the variables `withheld`.
    pub(crate) fn deferred(
        tree: &'a CommitTree,
        jobs: &'a Jobs,
        timeout: Duration,
        memory_cap: Option<u64>,
        sandboxed: bool,
        withheld: Vec<String>,
    ) -> Scratch<'a> {
        let copy = |origin: Origin| TreeCopy {
            dir: jobs.fresh_path(origin.directory()),
            made: false,
            planted: Vec::new(),
            env: Vec::new(),
            sandbox: None,
        };
        Scratch {
            tree,
            jobs,
            user: copy(Origin::User),
            reviewer: copy(Origin::Reviewer),
            timeout,
            memory_cap,
            sandboxed,
            withheld,
            results: HashMap::new(),
            baselines: HashMap::new(),
        }
    }

    fn copy(&mut self, origin: Origin) -> &mut TreeCopy {
        match origin {
            Origin::User => &mut self.user,
            Origin::Reviewer => &mut self.reviewer,
        }
    }

    /// The time the user's command `script` took on the original tree, once it ran there.
    pub(crate) fn baseline(&self, script: &str) -> Option<Duration> {
        self.baselines.get(&(Origin::User, script.to_owned())).copied()
    }

    /// The time limit of the user's command `script` with a plant applied: derived from its
    /// baseline, capped by the repro timeout.
    pub(crate) fn plant_timeout(&self, script: &str) -> Duration {
        plant_limit(self.baseline(script), self.timeout)
    }

    /// The last lines `script` printed (stdout, then stderr) on the original tree (`plant`
    /// None) or with `plant` applied, once it ran there.
    pub(crate) fn output_tail(&self, script: &str, plant: Option<&Plant>, origin: Origin) -> Option<&str> {
        let key = (origin, script.to_owned(), plant.map(|p| p.id.clone()));
        self.results.get(&key).map(|ran| ran.tail.as_str())
    }

    /// The root of the copy of `origin`, making the copy when it does not exist yet.
    fn materialise(&mut self, origin: Origin) -> Result<PathBuf, CalibrateError> {
        let (tree, sandboxed) = (self.tree, self.sandboxed);
        let copy = self.copy(origin);
        let root = copy.dir.join(TREE);
        if copy.made {
            return Ok(root);
        }
        let tmp = copy.dir.join(TMP);
        for dir in [&root, &tmp] {
            fs::create_dir_all(dir).map_err(|e| CalibrateError::io("create", dir, e))?;
        }
        let paths = tree.sorted_paths().into_iter();
        let handle = root_handle(&root)?;
        crate::slots::write_entries(
            tree,
            handle.as_fd(),
            &root,
            paths,
            &std::collections::BTreeMap::new(),
            0,
        )?;
        tracing::debug!(files = tree.entries().len(), dir = %copy.dir.display(), ?origin, "scratch copy made");
        // A temporary directory of their own beside the copy: with the sandbox on, the copy
        // and this are all the reviewer's commands may write to.
        copy.env.push(("TMPDIR", tmp.display().to_string()));
        let target = copy.dir.join(TARGET);
        // Build output goes in the copy even when the user's environment points it at a
        // directory of the user's: a plant's build must not land there. Cargo's is kept from
        // command to command; the output judged fresh by the second is emptied before each.
        copy.env.push(("CARGO_TARGET_DIR", target.display().to_string()));
        copy.env.extend(crate::reach::fresh_output_env(&copy.dir.join(FRESH)));
        match origin {
            // Go's build cache is keyed by content and npm's holds downloads: the user's serve.
            Origin::User => {}
            Origin::Reviewer => {
                copy.env.push(("PWD", root.display().to_string()));
                copy.env.extend(crate::reach::reviewer_cache_env(&copy.dir.join(CACHES)));
                if sandboxed {
                    // No network in the sandbox: cargo and Go use what is cached (the user's
                    // own builds fetched it) instead of failing on a connection.
                    copy.env.push(("CARGO_NET_OFFLINE", "true".to_owned()));
                    copy.env.push(("GOPROXY", "off".to_owned()));
                    // The system's temporary directory too (tools write there whatever
                    // TMPDIR says): a tree inside it is therefore not protected from these
                    // commands (docs/calibration.md#against-a-hostile-reviewer).
                    let writable = vec![copy.dir.clone(), std::env::temp_dir()];
                    copy.sandbox = Some(Sandbox::new(writable));
                }
            }
        }
        copy.made = true;
        Ok(root)
    }

    /// Puts the planted files (if any) of the copy of `origin` back to their original bytes.
    fn unplant(&mut self, origin: Origin) -> Result<(), CalibrateError> {
        let root = self.materialise(origin)?;
        for file in std::mem::take(&mut self.copy(origin).planted) {
            let original = self.tree.file(&file)?;
            put(self.tree, &root, &file, &original)?;
        }
        Ok(())
    }

    fn plant(&mut self, plant: &Plant, origin: Origin) -> Result<(), CalibrateError> {
        self.unplant(origin)?;
        let root = self.materialise(origin)?;
        for file in plant.files() {
            let original = self.tree.file(file)?;
            let mutated = apply_to(&original, file, &[plant])
                .map_err(|source| CalibrateError::ApplyPlant { file: file.to_owned(), source })?;
            put(self.tree, &root, file, &mutated)?;
            self.copy(origin).planted.push(file.to_owned());
        }
        Ok(())
    }

    /// Runs `script` of `origin` on the original (`plant` None) or with only `plant`
    /// applied. A run with the plant that goes past its time limit is run once more: only a
    /// second timeout counts.
    pub(crate) fn run(
        &mut self,
        script: &str,
        plant: Option<&Plant>,
        origin: Origin,
        signals: &SignalWatch,
    ) -> Result<Exit, CalibrateError> {
        let key = (origin, script.to_owned(), plant.map(|p| p.id.clone()));
        if let Some(ran) = self.results.get(&key) {
            return Ok(ran.exit);
        }
        match plant {
            Some(plant) => self.plant(plant, origin)?,
            None => self.unplant(origin)?,
        }
        let timeout = match plant {
            Some(_) => plant_limit(self.baselines.get(&(origin, script.to_owned())).copied(), self.timeout),
            None => self.timeout,
        };
        let mut ran = self.run_once(script, plant, origin, timeout, signals)?;
        if plant.is_some() && ran.exit == Exit::TimedOut {
            tracing::info!(script, plant = ?plant.map(Plant::location), limit = ?timeout, "ran past its time limit with the plant applied; running it once more");
            ran = self.run_once(script, plant, origin, timeout, signals)?;
        }
        let exit = ran.exit;
        self.results.insert(key, ran);
        Ok(exit)
    }

    fn run_once(
        &mut self,
        script: &str,
        plant: Option<&Plant>,
        origin: Origin,
        timeout: Duration,
        signals: &SignalWatch,
    ) -> Result<Ran, CalibrateError> {
        let root = self.materialise(origin)?;
        let copy = match origin {
            Origin::User => &self.user,
            Origin::Reviewer => &self.reviewer,
        };
        let fresh = copy.dir.join(FRESH);
        crate::rundir::remove_tree(&fresh).map_err(|e| CalibrateError::io("empty", &fresh, e))?;
        // Every process of the run carries a token of it: should revcal die, the run's
        // watchdog ends them. The reviewer's are ended after each command, as a review's are.
        let token = self.jobs.command_token();
        let mut env = copy.env.clone();
        env.push((revcal_process::RUN_TOKEN_VARIABLE, token.clone()));
        let withheld: &[String] = match origin {
            Origin::User => &[],
            Origin::Reviewer => &self.withheld,
        };
        let command = ShellCommand::new(script, &root, timeout)
            .output_cap(64 * 1024)
            .env(&env)
            .withhold(withheld)
            .memory_cap(self.memory_cap)
            .sandbox(copy.sandbox.as_ref());
        let finished = process::run_isolated(&command, signals);
        if origin == Origin::Reviewer {
            revcal_process::end_descendants(&token);
        }
        let finished =
            finished.map_err(|source| CalibrateError::Command { command: script.to_owned(), source })?;
        if let Exit::Interrupted(signal) = finished.exit {
            return Err(CalibrateError::Interrupted { signal, name: revcal_process::signal_name(signal) });
        }
        let ran = Ran { exit: finished.exit, tail: tail(&finished.stdout, &finished.stderr) };
        tracing::debug!(script, ?origin, plant = ?plant.map(Plant::location), exit = %finished.exit, elapsed = ?finished.elapsed, "scratch run");
        if plant.is_none() {
            self.baselines.insert((origin, script.to_owned()), finished.elapsed);
            // A command that fails on the unplanted tree credits no finding: say why.
            if !finished.exit.success() {
                tracing::info!(script, ?origin, exit = %finished.exit, tail = %ran.tail, "fails on the unplanted tree, so it identifies no plant");
            }
        }
        Ok(ran)
    }

    /// Runs `script` of `origin` on the original and with `plant` applied.
    pub(crate) fn discriminate(
        &mut self,
        script: &str,
        plant: &Plant,
        origin: Origin,
        signals: &SignalWatch,
    ) -> Result<Discrimination, CalibrateError> {
        let original = self.run(script, None, origin, signals)?;
        let mutant =
            if original.success() { self.run(script, Some(plant), origin, signals)? } else { original };
        Ok(Discrimination { original, mutant })
    }
}

/// The last [`TAIL_LINES`] non-blank lines of `stdout`, then those of `stderr`, each line at
/// most 300 characters, control characters shown as `?` (the text goes to a terminal). Each
/// stream's own end: a test runner prints its failures on one and its progress on the other,
/// and the last lines of both together would often be progress only.
fn tail(stdout: &[u8], stderr: &[u8]) -> String {
    let ends: Vec<String> = [stdout, stderr]
        .into_iter()
        .map(|stream| {
            let text = String::from_utf8_lossy(stream);
            let lines: Vec<String> = text
                .lines()
                .filter(|line| !line.trim().is_empty())
                .map(|line| {
                    line.chars()
                        .take(300)
                        .map(|c| if c.is_control() && c != '\t' { '?' } else { c })
                        .collect()
                })
                .collect();
            lines[lines.len().saturating_sub(TAIL_LINES)..].join("\n")
        })
        .filter(|end| !end.is_empty())
        .collect();
    ends.join("\n")
}

/// A command's time limit with a plant applied, from its time on the original (see
/// [`MULTIPLIER`]), never more than `timeout`.
fn plant_limit(baseline: Option<Duration>, timeout: Duration) -> Duration {
    baseline.map_or(timeout, |baseline| (baseline * MULTIPLIER).max(FLOOR).min(timeout))
}

/// A handle on a copy's root: its files are written through it, never through a path a
/// command run in the copy could have turned into a link.
fn root_handle(root: &Path) -> Result<std::os::fd::OwnedFd, CalibrateError> {
    crate::beneath::open_root(root).map_err(|e| CalibrateError::io("open", root, e))
}

/// Replaces `file` of the copy at `root` with `bytes`, with the mode `tree` gives it: a new
/// file, so that nothing a command left there (a link, a hard link to a file elsewhere) is
/// written through.
fn put(tree: &CommitTree, root: &Path, file: &str, bytes: &[u8]) -> Result<(), CalibrateError> {
    let mode = tree.entries().get(file).map_or(0o644, |entry| crate::slots::mode_of(entry.kind));
    let handle = root_handle(root)?;
    crate::beneath::Writer::new(handle.as_fd())
        .replace_file(file, bytes, mode)
        .map(drop)
        .map_err(|e| CalibrateError::io("write", root.join(file), e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plants_limit_is_five_times_the_original_never_under_20_s_never_over_the_timeout() {
        let timeout = Duration::from_secs(300);
        assert_eq!(plant_limit(Some(Duration::from_millis(10)), timeout), Duration::from_secs(20));
        assert_eq!(plant_limit(Some(Duration::from_secs(10)), timeout), Duration::from_secs(50));
        assert_eq!(plant_limit(Some(Duration::from_secs(100)), timeout), timeout);
        assert_eq!(
            plant_limit(Some(Duration::from_millis(10)), Duration::from_secs(3)),
            Duration::from_secs(3)
        );
        assert_eq!(plant_limit(None, timeout), timeout);
    }

    #[test]
    fn a_tail_keeps_the_end_of_each_stream() {
        // cargo test: the failures on stdout, then a dozen lines of progress on stderr.
        let stdout = "running 3 tests\ntest a ... FAILED\n\nfailures:\n    a\ntest result: FAILED. 2 passed; 1 failed\n";
        let stderr: String = (1..=12).map(|n| format!("     Running tests/t{n}.rs\n")).collect();
        let end = tail(stdout.as_bytes(), stderr.as_bytes());
        assert!(end.contains("test a ... FAILED"), "{end}");
        assert!(end.contains("test result: FAILED"), "{end}");
        assert!(end.contains("Running tests/t12.rs") && !end.contains("Running tests/t2.rs\n"), "{end}");
        assert_eq!(end.lines().count(), 5 + TAIL_LINES, "{end}");
        assert_eq!(tail(b"", b"\x1b[31merror\n"), "?[31merror");
    }
}
