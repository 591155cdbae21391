//! The run's own directory, `revcal-run-*` under the system temporary directory: the job
//! slots' checkouts and build directories, the scratch copies of witness, build and repro
//! commands and the checkouts' git metadata all live in it. It names its owner (pid and start
//! time) and the run's token, which every process the run starts carries; the run's
//! [`Watchdog`] ends those processes should revcal die. The directory is removed on every way
//! out of a run (return, error, panic, a handled signal); a directory whose owner is gone (a
//! run killed with SIGKILL) is removed by the next run, which first ends whatever process of
//! that run is still running (its watchdog killed too, say) and says so.

use crate::error::CalibrateError;
use revcal_process::Watchdog;
use serde::{Deserialize, Serialize};
use std::fs;
use std::path::{Path, PathBuf};

/// The prefix of every run directory's name.
pub(crate) const PREFIX: &str = "revcal-run-";
/// The file naming a run directory's owner.
const OWNER: &str = "owner.json";

/// A process: its pid and its start time (clock ticks since boot, field 22 of
/// proc_pid_stat(5)), so that a recycled pid is not taken for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Owner {
    pub(crate) pid: u32,
    pub(crate) start_time: Option<u64>,
}

impl Owner {
    /// This process.
    pub(crate) fn current() -> Owner {
        Owner::of(std::process::id())
    }

    /// Process `pid`, as it runs now.
    pub(crate) fn of(pid: u32) -> Owner {
        Owner { pid, start_time: start_time(pid) }
    }

    /// True while the process that wrote this record still runs.
    pub(crate) fn alive(&self) -> bool {
        match (start_time(self.pid), self.start_time) {
            (Some(now), Some(then)) => now == then,
            (Some(_), None) => true,
            (None, _) => false,
        }
    }
}

/// What a run directory's owner file records: the owner, and the run's token (absent in the
/// records of earlier releases).
#[derive(Debug, Clone, Serialize, Deserialize)]
struct RunRecord {
    #[serde(flatten)]
    owner: Owner,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    run: Option<String>,
}

/// The start time of process `pid` from `/proc/PID/stat` (proc_pid_stat(5): field 22, counted
/// after the parenthesised command name, which may itself hold spaces and parentheses).
fn start_time(pid: u32) -> Option<u64> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(19)?.parse().ok()
}

/// A run's directory, removed when dropped, and the run's token and watchdog.
#[derive(Debug)]
pub(crate) struct RunDir {
    path: PathBuf,
    run: String,
    watchdog: Option<Watchdog>,
}

impl RunDir {
    /// Ends what runs that are gone left running and removes their directories, then makes
    /// this run's, with its token and its watchdog.
    pub(crate) fn create() -> Result<RunDir, CalibrateError> {
        let temp = std::env::temp_dir();
        clean_stale(&temp);
        let failed = |e| CalibrateError::io("create a run directory in", &temp, e);
        let path = tempfile::Builder::new().prefix(PREFIX).tempdir_in(&temp).map_err(failed)?.keep();
        let run = revcal_process::run_token();
        let mut dir = RunDir { path, run, watchdog: None };
        // The record first: should revcal be killed right after starting a command, the next
        // run finds the token there.
        let record = RunRecord { owner: Owner::current(), run: Some(dir.run.clone()) };
        let record = serde_json::to_vec(&record).map_err(std::io::Error::other);
        record
            .and_then(|record| fs::write(dir.path.join(OWNER), record))
            .map_err(|e| CalibrateError::io("write the owner of", &dir.path, e))?;
        let watchdog = Watchdog::start(&dir.run)
            .map_err(|e| CalibrateError::io("start the watchdog of", &dir.path, e))?;
        dir.watchdog = Some(watchdog);
        tracing::debug!(dir = %dir.path.display(), "run directory made");
        Ok(dir)
    }

    /// Its path.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// The run's token: every command of the run carries a token made from it
    /// ([`revcal_process::command_token`]).
    pub(crate) fn run(&self) -> &str {
        &self.run
    }
}

impl Drop for RunDir {
    fn drop(&mut self) {
        // The watchdog first: whatever of the run still runs is ended (and writes no more)
        // before its directory goes.
        drop(self.watchdog.take());
        if let Err(error) = remove_tree(&self.path) {
            tracing::warn!(
                "cannot remove the run directory {}: {error}; the next run removes it",
                self.path.display()
            );
        }
    }
}

/// Removes every `revcal-run-*` directory in `temp` whose owner is no longer running, after
/// ending every process of that run still running (a run killed with SIGKILL together with
/// its watchdog leaves them). A directory without a readable owner record is left alone: a
/// run may be making it.
pub(crate) fn clean_stale(temp: &Path) {
    let Ok(entries) = fs::read_dir(temp) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        if !name.to_str().is_some_and(|name| name.starts_with(PREFIX)) {
            continue;
        }
        let path = entry.path();
        let Some(record) = fs::read(path.join(OWNER))
            .ok()
            .and_then(|bytes| serde_json::from_slice::<RunRecord>(&bytes).ok())
        else {
            continue;
        };
        let owner = record.owner;
        if owner.alive() {
            continue;
        }
        if let Some(run) = &record.run {
            let ended = revcal_process::end_run(run);
            if ended > 0 {
                tracing::warn!(
                    "ended {ended} process(es) left running by an earlier run (pid {}) that was killed before it could end them",
                    owner.pid
                );
            }
        }
        match remove_tree(&path) {
            Ok(()) => {
                tracing::info!(dir = %path.display(), pid = owner.pid, "removed the run directory of a run that is gone")
            }
            Err(error) => {
                tracing::warn!(dir = %path.display(), "cannot remove the run directory of a run that is gone: {error}")
            }
        }
    }
}

/// Removes `path` and everything beneath it, also directories a reviewer made unreadable or
/// unwritable (`chmod 000`); symbolic links are removed, never followed, and nothing is
/// reached through one ([`crate::beneath::remove_path`]). A missing path is fine.
pub(crate) fn remove_tree(path: &Path) -> std::io::Result<()> {
    crate::beneath::remove_path(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn unreadable_and_unwritable_directories_are_removed_and_links_are_not_followed() {
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("keep"), "keep").unwrap();
        let root = tempfile::tempdir().unwrap();
        let tree = root.path().join("tree");
        std::fs::create_dir_all(tree.join("a/b/c")).unwrap();
        std::fs::write(tree.join("a/b/c/file"), "x").unwrap();
        std::os::unix::fs::symlink(outside.path(), tree.join("a/link")).unwrap();
        for (dir, mode) in [("a/b/c", 0o000), ("a/b", 0o500), ("a", 0o000)] {
            fs::set_permissions(tree.join(dir), fs::Permissions::from_mode(mode)).unwrap();
        }
        remove_tree(&tree).unwrap();
        assert!(!tree.exists());
        assert_eq!(std::fs::read_to_string(outside.path().join("keep")).unwrap(), "keep");
        remove_tree(&tree).unwrap();
    }

    #[test]
    fn a_run_directory_whose_owner_is_gone_is_removed_and_a_live_ones_is_kept() {
        let temp = tempfile::tempdir().unwrap();
        let mut dead = std::process::Command::new("true").spawn().unwrap();
        dead.wait().unwrap();
        let gone = temp.path().join(format!("{PREFIX}gone"));
        let live = temp.path().join(format!("{PREFIX}live"));
        let unowned = temp.path().join(format!("{PREFIX}unowned"));
        for dir in [&gone, &live, &unowned] {
            std::fs::create_dir_all(dir.join("slot-1/tree/x")).unwrap();
        }
        fs::set_permissions(gone.join("slot-1/tree/x"), fs::Permissions::from_mode(0o000)).unwrap();
        let record = |owner: Owner| serde_json::to_vec(&owner).unwrap();
        std::fs::write(gone.join(OWNER), record(Owner { pid: dead.id(), start_time: Some(1) })).unwrap();
        std::fs::write(live.join(OWNER), record(Owner::current())).unwrap();
        clean_stale(temp.path());
        assert!(!gone.exists());
        assert!(live.exists() && unowned.exists());
    }

    #[test]
    fn the_processes_a_run_that_is_gone_left_running_are_ended_before_its_directory_goes() {
        let temp = tempfile::tempdir().unwrap();
        let mut dead = std::process::Command::new("true").spawn().unwrap();
        dead.wait().unwrap();
        let (gone_run, live_run) = (revcal_process::run_token(), revcal_process::run_token());
        let start = |run: &str| {
            std::process::Command::new("sleep")
                .arg("611")
                .env(revcal_process::RUN_TOKEN_VARIABLE, revcal_process::command_token(run, 3))
                .spawn()
                .unwrap()
        };
        let (left, mut running) = (start(&gone_run), start(&live_run));
        // Until a child has executed `sleep`, its environment is this process's: wait until
        // both carry their tokens (on a loaded machine that may take a while).
        for child in [&left, &running] {
            while !std::fs::read(format!("/proc/{}/environ", child.id()))
                .is_ok_and(|environ| environ.windows(17).any(|w| w == b"REVCAL_RUN_TOKEN="))
            {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
        }
        for (name, owner, run) in [
            ("gone", Owner { pid: dead.id(), start_time: Some(1) }, &gone_run),
            ("live", Owner::current(), &live_run),
        ] {
            let dir = temp.path().join(format!("{PREFIX}{name}"));
            std::fs::create_dir_all(&dir).unwrap();
            let record = RunRecord { owner, run: Some(run.clone()) };
            std::fs::write(dir.join(OWNER), serde_json::to_vec(&record).unwrap()).unwrap();
        }
        clean_stale(temp.path());
        // Ended, and reaped by the cleanup (it is this process's child).
        let runs = |pid: u32| {
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .is_ok_and(|stat| stat.rsplit_once(") ").is_some_and(|(_, rest)| !rest.starts_with('Z')))
        };
        assert!(!runs(left.id()), "the gone run's process was ended");
        assert!(runs(running.id()));
        assert!(running.try_wait().unwrap().is_none(), "a live run's process is its own");
        assert!(!temp.path().join(format!("{PREFIX}gone")).exists());
        assert!(temp.path().join(format!("{PREFIX}live")).exists());
        running.kill().unwrap();
        running.wait().unwrap();
    }
}
