//! A scratch copy of the tracked tree, where witness and repro commands run: once on the
//! original and once per plant with only that plant applied. The user's tree is never
//! touched by these commands, and results are cached per (command, plant).

use crate::error::CalibrateError;
use crate::plants::{Plant, apply_to};
use crate::process::{self, Exit, ShellCommand};
use crate::sandbox::Sandbox;
use crate::signals::SignalWatch;
use std::collections::HashMap;
use std::fs;
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
    /// memory proves nothing either way (the plant is a runaway, see [`Self::runaway`]).
    pub(crate) fn discriminates(&self) -> bool {
        self.original.success()
            && match self.mutant {
                Exit::Code(code) => code != 0,
                Exit::Signal(_) => true,
                Exit::TimedOut | Exit::OutOfMemory(_) | Exit::Interrupted(_) => false,
            }
    }

    /// True when the run on the mutant was stopped for running too long or eating memory.
    pub(crate) fn runaway(&self) -> bool {
        self.original.success() && matches!(self.mutant, Exit::TimedOut | Exit::OutOfMemory(_))
    }
}

/// A temporary copy of the tree, made on first use: a run whose witness and repro commands
/// never run copies nothing.
#[derive(Debug)]
pub(crate) struct Scratch {
    dir: Option<tempfile::TempDir>,
    tracked: Vec<String>,
    source: PathBuf,
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

/// The copy of the tree and the commands' temporary directory, inside the scratch directory.
const TREE: &str = "tree";
const TMP: &str = "tmp";

/// A plant's time limit is `MULTIPLIER` times the command's time on the original tree, at
/// least `FLOOR`, never more than the repro timeout: cargo-mutants' rule for its test timeout
/// (five times the baseline, <https://mutants.rs/timeouts.html>), with a floor of 1 s instead of
/// its 20 s because a witness is one check, not a whole build and test suite.
const MULTIPLIER: u32 = 5;
const FLOOR: Duration = Duration::from_secs(1);

impl Scratch {
    /// A scratch copy of the `tracked` files (relative paths) of `work_tree`, made when a
    /// command first runs in it. Each command is killed after `timeout`.
    /// Each command's process group is killed past `memory_cap` bytes of resident memory;
    /// with `sandboxed`, each runs in the [`Sandbox`].
    pub(crate) fn deferred(
        work_tree: &Path,
        tracked: Vec<String>,
        timeout: Duration,
        memory_cap: Option<u64>,
        sandboxed: bool,
    ) -> Scratch {
        Scratch {
            dir: None,
            tracked,
            source: work_tree.to_path_buf(),
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
        self.baseline(script)
            .map_or(self.timeout, |baseline| (baseline * MULTIPLIER).max(FLOOR).min(self.timeout))
    }

    /// The copy's root, making the copy when it does not exist yet.
    fn materialise(&mut self) -> Result<PathBuf, CalibrateError> {
        if let Some(dir) = &self.dir {
            return Ok(dir.path().join(TREE));
        }
        let dir = tempfile::Builder::new()
            .prefix("revcal-scratch-")
            .tempdir()
            .map_err(|e| CalibrateError::io("create a scratch directory in", std::env::temp_dir(), e))?;
        // Directories already made: a 10,000-file tree has far fewer directories than files.
        let mut made: std::collections::HashSet<PathBuf> = std::collections::HashSet::new();
        for relative in &self.tracked {
            let from = self.source.join(relative);
            let to = dir.path().join(TREE).join(relative);
            let Ok(meta) = fs::symlink_metadata(&from) else { continue };
            if let Some(parent) = to.parent().filter(|parent| !made.contains(*parent)) {
                fs::create_dir_all(parent).map_err(|e| CalibrateError::io("create", parent, e))?;
                made.insert(parent.to_path_buf());
            }
            let copied = if meta.file_type().is_symlink() {
                fs::read_link(&from).and_then(|target| std::os::unix::fs::symlink(target, &to))
            } else {
                fs::copy(&from, &to).map(|_| ())
            };
            copied.map_err(|e| CalibrateError::io("copy into a scratch tree:", &from, e))?;
        }
        tracing::debug!(files = self.tracked.len(), dir = %dir.path().display(), "scratch copy made");
        let root = dir.path().join(TREE);
        // Commands get a temporary directory of their own beside the copy: with the sandbox
        // on, the copy and this are all they may write to.
        let tmp = dir.path().join(TMP);
        fs::create_dir_all(&root)
            .and_then(|()| fs::create_dir_all(&tmp))
            .map_err(|e| CalibrateError::io("create", &tmp, e))?;
        self.env.push(("TMPDIR", tmp.display().to_string()));
        // Cargo builds inside the copy even when the user's environment points
        // CARGO_TARGET_DIR at a shared directory: the sandbox would refuse those writes, and
        // a plant's build must not land in the user's cache.
        self.env.push(("CARGO_TARGET_DIR", dir.path().join("target").display().to_string()));
        if self.sandboxed {
            // The system's temporary directory too (build caches live there): a tree inside it
            // is therefore not protected from these commands (docs/calibration.md#against-a-hostile-reviewer).
            let writable = vec![dir.path().to_path_buf(), std::env::temp_dir()];
            self.sandbox = Some(Sandbox::new(writable));
        }
        self.dir = Some(dir);
        Ok(root)
    }

    /// Puts the planted files (if any) back to their original bytes.
    fn unplant(&mut self) -> Result<(), CalibrateError> {
        for file in std::mem::take(&mut self.planted) {
            let root = self.materialise()?;
            let path = self.source.join(&file);
            let original = fs::read(&path).map_err(|e| CalibrateError::io("read", &path, e))?;
            write_keeping_mode(&root.join(&file), &original)?;
        }
        Ok(())
    }

    fn plant(&mut self, plant: &Plant) -> Result<(), CalibrateError> {
        self.unplant()?;
        for file in plant.files() {
            let path = self.source.join(file);
            let original = fs::read(&path).map_err(|e| CalibrateError::io("read", &path, e))?;
            let mutated = apply_to(&original, file, &[plant])
                .map_err(|source| CalibrateError::ApplyPlant { file: file.to_owned(), source })?;
            let root = self.materialise()?;
            write_keeping_mode(&root.join(file), &mutated)?;
            self.planted.push(file.to_owned());
        }
        Ok(())
    }

    /// Runs `script` on the original (`plant` None) or with only `plant` applied.
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
        let root = self.materialise()?;
        let timeout = if plant.is_some() { self.plant_timeout(script) } else { self.timeout };
        let command = ShellCommand {
            script,
            dir: &root,
            timeout,
            output_cap: 64 * 1024,
            env: &self.env,
            stdin: None,
            kill_past_cap: false,
            memory_cap: self.memory_cap,
            sandbox: self.sandbox.as_ref(),
        };
        let finished = process::run(&command, signals)
            .map_err(|source| CalibrateError::Command { command: script.to_owned(), source })?;
        if let Exit::Interrupted(signal) = finished.exit {
            return Err(CalibrateError::Interrupted { signal, name: crate::signals::name(signal) });
        }
        tracing::debug!(script, plant = ?plant.map(Plant::location), exit = %finished.exit, "scratch run");
        if plant.is_none() {
            self.baselines.insert(script.to_owned(), finished.elapsed);
        }
        self.results.insert(key, finished.exit);
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

fn write_keeping_mode(path: &Path, bytes: &[u8]) -> Result<(), CalibrateError> {
    use std::os::unix::fs::PermissionsExt;
    let failed = |e| CalibrateError::io("write", path, e);
    if fs::symlink_metadata(path).is_ok_and(|meta| meta.file_type().is_symlink()) {
        // The copy keeps links as links: writing through one would reach outside the copy.
        return Err(CalibrateError::Symlink { path: path.to_path_buf() });
    }
    let mode = fs::metadata(path).map(|m| m.permissions().mode()).unwrap_or(0o644);
    fs::set_permissions(path, fs::Permissions::from_mode(mode | 0o200)).map_err(failed)?;
    fs::write(path, bytes).map_err(failed)?;
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).map_err(failed)
}
