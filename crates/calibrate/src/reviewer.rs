//! Running the reviewer under review: a shell command with `{base}` substituted, in its own
//! process group, with a timeout and a cap on the output it may leave in memory.

use crate::error::CalibrateError;
use crate::process::{self, Exit, Finished, ShellCommand};
use crate::signals::SignalWatch;
use std::path::Path;
use std::time::Duration;

/// Bytes of reviewer output kept by default (the rest is read and dropped).
pub(crate) const DEFAULT_OUTPUT_CAP: usize = 8 * 1024 * 1024;

/// `command` with every `{base}` replaced by `base`.
pub(crate) fn substitute_base(command: &str, base: &str) -> String {
    command.replace("{base}", base)
}

/// What the reviewer printed and how it ended.
#[derive(Debug, Clone)]
pub(crate) struct ReviewRun {
    /// Its exit code (one of the accepted codes: anything else is a crash and an error).
    pub(crate) exit_code: i32,
    /// Its standard output, lossily decoded, at most the cap.
    pub(crate) output: String,
    /// True when its output went past the cap.
    pub(crate) truncated: bool,
    /// Wall time.
    pub(crate) elapsed: Duration,
}

/// The last lines of a command's stderr, for error messages.
fn stderr_tail(finished: &Finished) -> String {
    let text = String::from_utf8_lossy(&finished.stderr);
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(5)..].join("\n  ")
}

/// The exit codes accepted from a reviewer by default: 0 (nothing found) and 2 (findings).
pub const DEFAULT_OK_EXIT_CODES: [i32; 2] = [0, 2];

/// Runs the reviewer in `work_tree`. A signal, a timeout or an exit code not in `ok_codes`
/// is an error; the caller restores the tree either way.
pub(crate) fn run_reviewer(
    command: &str,
    ok_codes: &[i32],
    work_tree: &Path,
    timeout: Duration,
    output_cap: usize,
    env: &[(&str, String)],
    signals: &SignalWatch,
) -> Result<ReviewRun, CalibrateError> {
    let shell = ShellCommand {
        script: command,
        dir: work_tree,
        timeout,
        output_cap,
        env,
        stdin: None,
        kill_past_cap: false,
        memory_cap: None,
        sandbox: None,
    };
    let finished = process::run(&shell, signals)
        .map_err(|source| CalibrateError::ReviewerStart { command: command.to_owned(), source })?;
    match finished.exit {
        Exit::Code(code) if ok_codes.contains(&code) => Ok(ReviewRun {
            exit_code: code,
            output: String::from_utf8_lossy(&finished.stdout).into_owned(),
            truncated: finished.stdout_truncated,
            elapsed: finished.elapsed,
        }),
        Exit::Interrupted(signal) => {
            Err(CalibrateError::Interrupted { signal, name: crate::signals::name(signal) })
        }
        Exit::TimedOut => Err(CalibrateError::ReviewerTimedOut {
            seconds: timeout.as_secs(),
            stderr: stderr_tail(&finished),
        }),
        other => Err(CalibrateError::ReviewerCrashed {
            status: other.to_string(),
            code: match other {
                Exit::Code(code) => Some(code),
                _ => None,
            },
            accepted: ok_codes.to_vec(),
            stderr: stderr_tail(&finished),
        }),
    }
}
