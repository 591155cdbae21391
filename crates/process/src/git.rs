//! The `git` program, for what revcal leaves to it (clones, fetches, `apply`, `log
//! --numstat`): every crate runs it through [`git`], so that it runs the same way everywhere
//! (no terminal prompt for credentials, nothing on stdin) and fails with one error shape,
//! whose arguments and message never show a URL's credentials.

use std::path::{Path, PathBuf};

/// A `git` command that could not run or exited unsuccessfully.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("git {args} in {}: {message}", dir.display())]
pub struct GitError {
    /// Where it ran.
    pub dir: PathBuf,
    /// Its arguments, joined by spaces (the user information of URLs redacted).
    pub args: String,
    /// What git printed on stderr, trimmed, or why it could not start (the user information
    /// of URLs redacted: git names the URL it failed to reach).
    pub message: String,
}

/// Runs `git ARGS` in `dir` and returns its standard output. Git never prompts (for a
/// password, say): `GIT_TERMINAL_PROMPT=0` and stdin from `/dev/null`.
///
/// ```
/// let dir = tempfile::tempdir().unwrap();
/// revcal_process::git(dir.path(), &["init", "-q"]).unwrap();
/// let error = revcal_process::git(dir.path(), &["fetch", "https://u:secret@127.0.0.1:9/r.git"]).unwrap_err();
/// assert!(error.args.contains("https://[redacted]@127.0.0.1:9/r.git") && !error.to_string().contains("secret"));
/// ```
pub fn git(dir: &Path, args: &[&str]) -> Result<Vec<u8>, GitError> {
    let failed = |message: &str| GitError {
        dir: dir.to_path_buf(),
        args: crate::redact_url_credentials(&args.join(" ")).into_owned(),
        message: crate::redact_url_credentials(message.trim()).into_owned(),
    };
    let mut command = std::process::Command::new("git");
    command.args(args).current_dir(dir).env("GIT_TERMINAL_PROMPT", "0").stdin(std::process::Stdio::null());
    // SAFETY: prctl is async-signal-safe; git is killed should revcal itself be killed.
    unsafe {
        use std::os::unix::process::CommandExt;
        command.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            Ok(())
        });
    }
    let output = command.output().map_err(|error| failed(&format!("cannot run git: {error}")))?;
    if !output.status.success() {
        return Err(failed(&String::from_utf8_lossy(&output.stderr)));
    }
    Ok(output.stdout)
}
