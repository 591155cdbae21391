//! Running the reviewer under review: a shell command with `{base}` substituted, in its own
//! process group, in its checkout, with a timeout and a cap on the output it may leave in
//! memory.

use crate::error::CalibrateError;
use revcal_process::SignalWatch;
use revcal_process::{self as process, Exit, Finished, ShellCommand};
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
    /// The last lines of its standard error, for a warning when its output held no finding.
    pub(crate) stderr_tail: String,
    /// Wall time.
    pub(crate) elapsed: Duration,
    /// The checkout it ran in (its working directory): paths into it in its findings are
    /// made relative to the repository.
    pub(crate) checkout: std::path::PathBuf,
}

/// `command` with its program, when given as a relative path (`./review.sh`,
/// `scripts/review.py`, after any `NAME=value` assignments), made absolute against `start`
/// (the directory revcal was started in), as long as a file is there: the reviewer runs in a
/// checkout, where a relative path would name another file or none.
pub(crate) fn resolve_program(command: &str, start: &Path) -> String {
    let mut rest = command.trim_start();
    let mut prefix_len = command.len() - rest.len();
    loop {
        let word_len = shell_word_len(rest);
        if word_len == 0 {
            return command.to_owned();
        }
        let word = &rest[..word_len];
        let is_assignment = word.split_once('=').is_some_and(|(name, _)| {
            !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        });
        if is_assignment {
            let after = &rest[word_len..];
            let trimmed = after.trim_start();
            prefix_len += word_len + (after.len() - trimmed.len());
            rest = trimmed;
            continue;
        }
        // Only a plain word: a quoted or expanded program is left to the shell.
        if word.contains(['\'', '"', '$', '`', '\\'])
            || !word.contains('/')
            || word.starts_with('/')
            || word.starts_with('~')
        {
            return command.to_owned();
        }
        let relative: std::path::PathBuf =
            Path::new(word).components().filter(|part| *part != std::path::Component::CurDir).collect();
        let resolved = start.join(relative);
        if !resolved.is_file() {
            return command.to_owned();
        }
        let quoted = format!("'{}'", resolved.display().to_string().replace('\'', r"'\''"));
        return format!("{}{quoted}{}", &command[..prefix_len], &rest[word_len..]);
    }
}

/// The length of the shell word at the start of `text`: up to the first unquoted blank or
/// control operator (quotes are skipped over whole).
fn shell_word_len(text: &str) -> usize {
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for (index, c) in text.char_indices() {
        if escaped {
            escaped = false;
            continue;
        }
        match (quote, c) {
            (None, '\\') => escaped = true,
            (None, '\'' | '"') => quote = Some(c),
            (Some(open), _) if c == open => quote = None,
            (None, c) if c.is_whitespace() || ";&|<>()".contains(c) => return index,
            _ => {}
        }
    }
    text.len()
}

/// The last lines of a command's stderr, for error messages.
fn stderr_tail(finished: &Finished) -> String {
    let text = String::from_utf8_lossy(&finished.stderr);
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(5)..].join("\n  ")
}

/// The shell's exit code for a command it found but could not execute (POSIX).
pub(crate) const COMMAND_NOT_EXECUTABLE: i32 = 126;
/// The shell's exit code for a command it did not find (POSIX).
pub(crate) const COMMAND_NOT_FOUND: i32 = 127;

/// The exit codes accepted from a reviewer by default: 0 (nothing found) and 2 (findings).
pub const DEFAULT_OK_EXIT_CODES: [i32; 2] = [0, 2];

/// Runs the reviewer in `work_tree` (its checkout), with `env` set and `withheld` removed
/// from revcal's environment. A signal, a timeout or an exit code not in `ok_codes` is an
/// error.
#[allow(clippy::too_many_arguments)]
pub(crate) fn run_reviewer(
    command: &str,
    ok_codes: &[i32],
    work_tree: &Path,
    timeout: Duration,
    output_cap: usize,
    env: &[(&str, String)],
    withheld: &[String],
    signals: &SignalWatch,
) -> Result<ReviewRun, CalibrateError> {
    let shell =
        ShellCommand::new(command, work_tree, timeout).output_cap(output_cap).env(env).withhold(withheld);
    let finished = process::run_isolated(&shell, signals)
        .map_err(|source| CalibrateError::ReviewerStart { command: command.to_owned(), source })?;
    match finished.exit {
        // The shell's own codes for "not found" and "not executable": the reviewer never ran,
        // whatever --ok-exit-codes says.
        Exit::Code(code @ (COMMAND_NOT_EXECUTABLE | COMMAND_NOT_FOUND)) => {
            Err(CalibrateError::ReviewerCouldNotRun {
                command: command.to_owned(),
                code,
                stderr: stderr_tail(&finished),
            })
        }
        Exit::Code(code) if ok_codes.contains(&code) => Ok(ReviewRun {
            exit_code: code,
            output: String::from_utf8_lossy(&finished.stdout).into_owned(),
            truncated: finished.stdout_truncated,
            stderr_tail: stderr_tail(&finished),
            elapsed: finished.elapsed,
            checkout: work_tree.to_path_buf(),
        }),
        Exit::Interrupted(signal) => {
            Err(CalibrateError::Interrupted { signal, name: revcal_process::signal_name(signal) })
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_relative_program_is_found_from_the_start_directory_and_nothing_else_changes() {
        let start = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(start.path().join("scripts")).unwrap();
        std::fs::write(start.path().join("review.sh"), "").unwrap();
        std::fs::write(start.path().join("scripts/it's.py"), "").unwrap();
        let at = |name: &str| {
            format!("'{}'", start.path().join(name).display().to_string().replace('\'', r"'\''"))
        };
        let cases = [
            ("./review.sh {base}", format!("{} {{base}}", at("review.sh"))),
            (
                "  LLM_CMD=\"claude -p\" X=1 ./review.sh --base {base}",
                format!("  LLM_CMD=\"claude -p\" X=1 {} --base {{base}}", at("review.sh")),
            ),
            ("./review.sh;echo", format!("{};echo", at("review.sh"))),
            ("review.sh", "review.sh".to_owned()),
            ("python3 ./review.sh", "python3 ./review.sh".to_owned()),
            ("./missing.sh", "./missing.sh".to_owned()),
            ("/bin/true", "/bin/true".to_owned()),
            ("'./review.sh'", "'./review.sh'".to_owned()),
            ("$HOME/review.sh", "$HOME/review.sh".to_owned()),
            ("", String::new()),
        ];
        for (command, expected) in cases {
            assert_eq!(resolve_program(command, start.path()), expected, "{command:?}");
        }
        // An escaped program is the shell's to read.
        assert_eq!(resolve_program("scripts/it\\'s.py", start.path()), "scripts/it\\'s.py");
    }
}
