//! A scratch copy of the commit's files, where witness, build and repro commands run: once on
//! the original and once per plant with only that plant applied. The user's tree is never
//! touched by these commands, and results are cached per (command, plant).
//!
//! A command's time limit with a plant applied comes from its time on the original: five
//! times that, but never less than a floor of 20 s (cargo-mutants' rule), so that a loaded
//! machine does not make an ordinary run look like a runaway; and a run stopped at its limit
//! is run once more before it counts as timed out.

use crate::error::CalibrateError;
use crate::plants::{Plant, Planting, apply_to};
use crate::tree::CommitTree;
use revcal_process::Sandbox;
use revcal_process::SignalWatch;
use revcal_process::{self as process, Exit, ShellCommand};
use std::collections::HashMap;
use std::fs;
use std::os::fd::AsFd;
use std::path::PathBuf;
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

/// A copy of the commit's files, made on first use: a run whose witness and repro commands
/// never run copies nothing.
pub(crate) struct Scratch<'a> {
    tree: &'a CommitTree,
    dir: PathBuf,
    made: bool,
    planted: Vec<String>,
    timeout: Duration,
    memory_cap: Option<u64>,
    env: Vec<(&'static str, String)>,
    results: HashMap<(String, Option<String>), Exit>,
    /// Wall time of each command on the original tree.
    baselines: HashMap<String, Duration>,
    /// Run commands sandboxed (the sandbox is made with the copy).
    sandboxed: bool,
    sandbox: Option<Sandbox>,
}

impl std::fmt::Debug for Scratch<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scratch").field("dir", &self.dir).field("made", &self.made).finish_non_exhaustive()
    }
}

/// The copy of the tree, the commands' temporary directory and their cargo target directory,
/// inside the scratch directory.
const TREE: &str = "tree";
const TMP: &str = "tmp";
const TARGET: &str = "target";

/// A plant's time limit is `MULTIPLIER` times the command's time on the original tree, at
/// least `FLOOR`, never more than the repro timeout: cargo-mutants' rule for its test timeout
/// (five times the baseline, at least 20 s, <https://mutants.rs/timeouts.html>). The floor is
/// what a loaded machine does not reach by accident: below it, how busy the machine was would
/// decide which plants count.
const MULTIPLIER: u32 = 5;
/// See [`MULTIPLIER`].
pub(crate) const FLOOR: Duration = Duration::from_secs(20);

impl<'a> Scratch<'a> {
    /// A scratch copy of the files of `tree` in the directory `dir` (made when a command
    /// first runs). Each command is killed after `timeout`, and its process group past
    /// `memory_cap` bytes of resident memory; with `sandboxed`, each runs in the [`Sandbox`].
    pub(crate) fn deferred(
        tree: &'a CommitTree,
        dir: PathBuf,
        timeout: Duration,
        memory_cap: Option<u64>,
        sandboxed: bool,
    ) -> Scratch<'a> {
        Scratch {
            tree,
            dir,
            made: false,
            planted: Vec::new(),
            timeout,
            memory_cap,
            env: Vec::new(),
            results: HashMap::new(),
            baselines: HashMap::new(),
            sandboxed,
            sandbox: None,
        }
    }

    /// The time `script` took on the original tree, once it ran there.
    pub(crate) fn baseline(&self, script: &str) -> Option<Duration> {
        self.baselines.get(script).copied()
    }

    /// The time limit of `script` with a plant applied: derived from its baseline, capped by
    /// the repro timeout.
    pub(crate) fn plant_timeout(&self, script: &str) -> Duration {
        plant_limit(self.baseline(script), self.timeout)
    }

    /// The copy's root, making the copy when it does not exist yet.
    fn materialise(&mut self) -> Result<PathBuf, CalibrateError> {
        let root = self.dir.join(TREE);
        if self.made {
            return Ok(root);
        }
        let tmp = self.dir.join(TMP);
        for dir in [&root, &tmp] {
            fs::create_dir_all(dir).map_err(|e| CalibrateError::io("create", dir, e))?;
        }
        let paths = self.tree.entries().keys().map(String::as_str);
        let handle = self.root_handle()?;
        crate::slots::write_entries(
            self.tree,
            handle.as_fd(),
            &root,
            paths,
            &std::collections::BTreeMap::new(),
            0,
        )?;
        tracing::debug!(files = self.tree.entries().len(), dir = %self.dir.display(), "scratch copy made");
        // Commands get a temporary directory of their own beside the copy: with the sandbox
        // on, the copy and this are all they may write to.
        self.env.push(("TMPDIR", tmp.display().to_string()));
        // Cargo builds inside the scratch directory even when the user's environment points
        // CARGO_TARGET_DIR at a shared directory: the sandbox would refuse those writes, and
        // a plant's build must not land in the user's cache.
        self.env.push(("CARGO_TARGET_DIR", self.dir.join(TARGET).display().to_string()));
        if self.sandboxed {
            // The system's temporary directory too (build caches live there): a tree inside it
            // is therefore not protected from these commands (docs/calibration.md#against-a-hostile-reviewer).
            let writable = vec![self.dir.clone(), std::env::temp_dir()];
            self.sandbox = Some(Sandbox::new(writable));
        }
        self.made = true;
        Ok(root)
    }

    /// A handle on the copy's root: its files are written through it, never through a path
    /// a command run in the copy could have turned into a link.
    fn root_handle(&self) -> Result<std::os::fd::OwnedFd, CalibrateError> {
        let root = self.dir.join(TREE);
        crate::beneath::open_root(&root).map_err(|e| CalibrateError::io("open", &root, e))
    }

    /// Replaces `file` of the copy with `bytes`, with the mode the commit gives it: a new
    /// file, so that nothing a command left there (a link, a hard link to a file elsewhere)
    /// is written through.
    fn put(&mut self, file: &str, bytes: &[u8]) -> Result<(), CalibrateError> {
        let root = self.materialise()?;
        let mode = match self.tree.entries().get(file) {
            Some(entry) => crate::slots::mode_of(entry.kind),
            None => 0o644,
        };
        let handle = self.root_handle()?;
        crate::beneath::Writer::new(handle.as_fd())
            .replace_file(file, bytes, mode)
            .map(drop)
            .map_err(|e| CalibrateError::io("write", root.join(file), e))
    }

    /// Puts the planted files (if any) back to their original bytes.
    fn unplant(&mut self) -> Result<(), CalibrateError> {
        for file in std::mem::take(&mut self.planted) {
            let original = self.tree.file(&file)?;
            self.put(&file, &original)?;
        }
        Ok(())
    }

    fn plant(&mut self, plant: &Plant) -> Result<(), CalibrateError> {
        self.unplant()?;
        for file in plant.files() {
            let original = self.tree.file(file)?;
            let mutated = apply_to(&original, file, &[plant])
                .map_err(|source| CalibrateError::ApplyPlant { file: file.to_owned(), source })?;
            self.put(file, &mutated)?;
            self.planted.push(file.to_owned());
        }
        Ok(())
    }

    /// Runs `script` on the original (`plant` None) or with only `plant` applied. A run with
    /// the plant that goes past its time limit is run once more: only a second timeout
    /// counts.
    pub(crate) fn run(
        &mut self,
        script: &str,
        plant: Option<&Plant>,
        signals: &SignalWatch,
    ) -> Result<Exit, CalibrateError> {
        let key = (script.to_owned(), plant.map(|p| p.id.clone()));
        if let Some(exit) = self.results.get(&key) {
            return Ok(*exit);
        }
        match plant {
            Some(plant) => self.plant(plant)?,
            None => self.unplant()?,
        }
        let timeout = if plant.is_some() { self.plant_timeout(script) } else { self.timeout };
        let mut exit = self.run_once(script, plant, timeout, signals)?;
        if plant.is_some() && exit == Exit::TimedOut {
            tracing::info!(script, plant = ?plant.map(Plant::location), limit = ?timeout, "ran past its time limit with the plant applied; running it once more");
            exit = self.run_once(script, plant, timeout, signals)?;
        }
        self.results.insert(key, exit);
        Ok(exit)
    }

    fn run_once(
        &mut self,
        script: &str,
        plant: Option<&Plant>,
        timeout: Duration,
        signals: &SignalWatch,
    ) -> Result<Exit, CalibrateError> {
        let root = self.materialise()?;
        let command = ShellCommand::new(script, &root, timeout)
            .output_cap(64 * 1024)
            .env(&self.env)
            .memory_cap(self.memory_cap)
            .sandbox(self.sandbox.as_ref());
        let finished = process::run_isolated(&command, signals)
            .map_err(|source| CalibrateError::Command { command: script.to_owned(), source })?;
        if let Exit::Interrupted(signal) = finished.exit {
            return Err(CalibrateError::Interrupted { signal, name: revcal_process::signal_name(signal) });
        }
        tracing::debug!(script, plant = ?plant.map(Plant::location), exit = %finished.exit, elapsed = ?finished.elapsed, "scratch run");
        if plant.is_none() {
            self.baselines.insert(script.to_owned(), finished.elapsed);
        }
        Ok(finished.exit)
    }

    /// Runs `script` on the original and with `plant` applied.
    pub(crate) fn discriminate(
        &mut self,
        script: &str,
        plant: &Plant,
        signals: &SignalWatch,
    ) -> Result<Discrimination, CalibrateError> {
        let original = self.run(script, None, signals)?;
        let mutant = if original.success() { self.run(script, Some(plant), signals)? } else { original };
        Ok(Discrimination { original, mutant })
    }
}

/// A command's time limit with a plant applied, from its time on the original (see
/// [`MULTIPLIER`]), never more than `timeout`.
fn plant_limit(baseline: Option<Duration>, timeout: Duration) -> Duration {
    baseline.map_or(timeout, |baseline| (baseline * MULTIPLIER).max(FLOOR).min(timeout))
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
}
