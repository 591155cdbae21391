//! A repository's environment directory, `$REVCAL_BENCH_ENVS/<name>`: what its test command
//! and witnesses need besides its own files (a virtualenv, `node_modules`), made once by its
//! `setup` command, run in a fresh checkout of its target with `ENV` naming the directory.

use std::path::Path;
use std::time::Duration;

use revcal_process::{ShellCommand, SignalWatch};

use crate::manifest::ManifestRepository;
use crate::{BenchError, ENVS_VARIABLE, repository_source};

/// What [`set_up`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SetupOutcome {
    /// The directory was there already: nothing ran.
    Present,
    /// The setup command ran and succeeded (or there was none: the directory is empty).
    Made,
}

/// The last lines of a command's output, for an error message.
fn tail(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let lines: Vec<&str> = text.lines().filter(|line| !line.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(12)..].join("\n")
}

/// Makes `envs/<name>` for `repository` unless it is there (`force` removes it first): runs
/// its `setup` with `sh -c` in a fresh checkout of its target (from `repos_dir/<name>` or a
/// clone of its URL made in `repos_dir`), with `ENV` set to the directory and
/// `REVCAL_BENCH_ENVS` to `envs`, in a process group of its own, killed after `timeout` or on
/// a signal `signals` watches. A setup that fails leaves no directory behind (the next run
/// tries again); one that succeeds without making the directory leaves an empty one.
pub fn set_up(
    repository: &ManifestRepository,
    envs: &Path,
    repos_dir: &Path,
    force: bool,
    timeout: Duration,
    signals: &SignalWatch,
) -> Result<SetupOutcome, BenchError> {
    let fail = |message: String| BenchError::Repository { name: repository.name.clone(), message };
    let dir = envs.join(&repository.name);
    if dir.exists() || dir.is_symlink() {
        if !force {
            return Ok(SetupOutcome::Present);
        }
        std::fs::remove_dir_all(&dir).map_err(|e| fail(format!("cannot remove {}: {e}", dir.display())))?;
    }
    std::fs::create_dir_all(envs).map_err(|e| fail(format!("cannot create {}: {e}", envs.display())))?;
    if repository.setup.trim().is_empty() {
        std::fs::create_dir_all(&dir).map_err(|e| fail(format!("cannot create {}: {e}", dir.display())))?;
        return Ok(SetupOutcome::Made);
    }
    let source = repository_source(&repository.name, &repository.url, repos_dir);
    let (repo, commit) = revcal_suite::locate_repository(&source, &repository.target, repos_dir)?;
    let checkout = revcal_suite::check_out(&repo, &commit)?;
    let env = [("ENV", dir.display().to_string()), (ENVS_VARIABLE, envs.display().to_string())];
    let command =
        ShellCommand::new(&repository.setup, &checkout.tree, timeout).env(&env).output_cap(256 << 10);
    tracing::info!(repository = %repository.name, env = %dir.display(), "setting up: {}", repository.setup);
    let finished = revcal_process::run(&command, signals);
    let outcome = match finished {
        Ok(done) if done.exit.success() => Ok(SetupOutcome::Made),
        Ok(done) => {
            let mut output = tail(&done.stderr);
            if output.is_empty() {
                output = tail(&done.stdout);
            }
            Err(fail(format!(
                "its setup `{}` failed ({}); its output ends:\n{output}",
                repository.setup, done.exit
            )))
        }
        Err(error) => Err(fail(format!("cannot run its setup: {error}"))),
    };
    match outcome {
        Ok(made) => {
            std::fs::create_dir_all(&dir)
                .map_err(|e| fail(format!("cannot create {}: {e}", dir.display())))?;
            Ok(made)
        }
        Err(error) => {
            let _ = std::fs::remove_dir_all(&dir);
            Err(error)
        }
    }
}
