//! Running revcal as a reviewer's user would: `calibrate --record-to` refuses to hold the
//! authority's key where the reviewer could read any process (root with CAP_SYS_PTRACE), so
//! when the tests run as root, the runs that record do so as `nobody`, in a directory handed
//! over to it. Otherwise they run as the tests' own user, unchanged.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The user id the reviewer's runs take when the tests run as root.
const NOBODY: u32 = 65534;

/// True when the tests run as root.
pub(crate) fn tests_run_as_root() -> bool {
    // SAFETY: geteuid only reads this process's credentials.
    unsafe { libc::geteuid() == 0 }
}

/// Makes `command` run as an unprivileged user when the tests run as root: `dir` (where it
/// works, reads and writes) is handed over to that user, `HOME` is set to it and `PATH`
/// left to the system's directories (root's own may be unreadable). Dropping what it returns
/// gives `dir` back to root (git refuses to work in a repository another user owns), so keep
/// it until the command has run.
#[must_use = "dropping it gives the directory back before the command runs"]
pub(crate) fn as_reviewer_user(command: &mut Command, dir: &Path) -> Option<HandBack> {
    if !tests_run_as_root() {
        return None;
    }
    chown(dir, NOBODY);
    command
        .uid(NOBODY)
        .gid(NOBODY)
        .env("HOME", dir)
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env_remove("XDG_CACHE_HOME");
    Some(HandBack { dir: dir.to_owned() })
}

/// Gives a directory handed over by [`as_reviewer_user`] back to root when dropped.
pub(crate) struct HandBack {
    dir: PathBuf,
}

impl Drop for HandBack {
    fn drop(&mut self) {
        chown(&self.dir, 0);
    }
}

fn chown(dir: &Path, user: u32) {
    let status = Command::new("chown").arg("-R").arg(format!("{user}:{user}")).arg(dir).status().unwrap();
    assert!(status.success(), "chown {}", dir.display());
}
