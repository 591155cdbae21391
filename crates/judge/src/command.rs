//! `--judge-cmd CMD`: a judge that is any shell command.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde_json::Value;

use super::{Judge, JudgeError, JudgeRequest};
use revcal_process::SignalWatch;
use revcal_process::{self as process, Exit, ShellCommand};

/// How much of stderr is kept for error messages.
const STDERR_KEPT: usize = 2048;
/// How much of a bad answer is quoted in an error message.
const ANSWER_QUOTED: usize = 200;

/// A judge that runs a shell command (`sh -c CMD`) per request: the request as one JSON
/// document on stdin, `{"match": true|false}` expected on stdout (other keys are ignored).
///
/// Anything else is a [`JudgeError`], never a match: output that is not JSON, a missing or
/// non-boolean `match`, a non-zero exit, more output than the limit, or no answer within the
/// timeout (the command's whole process group is then killed). It runs like the reviewer: in
/// its own process group, which is killed once the command exits, so nothing it left in the
/// background keeps the judge waiting.
#[derive(Debug, Clone)]
pub struct CommandJudge {
    command: String,
    timeout: Duration,
    output_limit: usize,
    working_dir: Option<PathBuf>,
    max_calls: Option<u64>,
    /// Requests made, shared by clones (threads asking one judge share one budget).
    calls: Arc<AtomicU64>,
}

impl CommandJudge {
    /// The default time limit per request.
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);
    /// The default limit on the size of the answer, in bytes.
    pub const DEFAULT_OUTPUT_LIMIT: usize = 1024 * 1024;

    /// A judge that runs `command` with `sh -c`.
    pub fn new(command: impl Into<String>) -> Self {
        CommandJudge {
            command: command.into(),
            timeout: Self::DEFAULT_TIMEOUT,
            output_limit: Self::DEFAULT_OUTPUT_LIMIT,
            working_dir: None,
            max_calls: None,
            calls: Arc::new(AtomicU64::new(0)),
        }
    }

    /// Refuse to run the command more than `max` times ([`JudgeError::Budget`] past it), as
    /// the built-in judge refuses to send more requests.
    pub fn max_calls(mut self, max: Option<u64>) -> Self {
        self.max_calls = max;
        self
    }

    /// How many times the command has been run.
    pub fn calls(&self) -> u64 {
        self.calls.load(Ordering::SeqCst)
    }

    /// Kill the command and report an error when it has not answered after `timeout`.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Kill the command and report an error when it prints more than `bytes` on stdout.
    pub fn output_limit(mut self, bytes: usize) -> Self {
        self.output_limit = bytes;
        self
    }

    /// Run the command in `dir` instead of the current directory.
    pub fn current_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.working_dir = Some(dir.into());
        self
    }

    /// The command line.
    pub fn command(&self) -> &str {
        &self.command
    }

    /// Run the command once with `input` on stdin; its stdout, or why there is none.
    fn run(&self, input: &[u8]) -> Result<Vec<u8>, JudgeError> {
        let command = ShellCommand::new(
            &self.command,
            self.working_dir.as_deref().unwrap_or(Path::new(".")),
            self.timeout,
        )
        .output_cap(self.output_limit)
        .stdin(input)
        .kill_past_cap(true);
        // The judge is not interrupted by signals itself: the calibration run that asks it
        // notices them between requests.
        let finished = process::run(&command, &SignalWatch::inert())
            .map_err(|source| JudgeError::Spawn { command: self.command.clone(), source })?;
        if finished.stdout_truncated {
            return Err(JudgeError::OutputTooLarge {
                command: self.command.clone(),
                limit: self.output_limit,
            });
        }
        match finished.exit {
            Exit::Code(0) => Ok(finished.stdout),
            Exit::TimedOut => Err(self.timed_out()),
            status => {
                let kept = &finished.stderr[..finished.stderr.len().min(STDERR_KEPT)];
                Err(JudgeError::Exit {
                    command: self.command.clone(),
                    status: status.to_string(),
                    stderr: revcal_process::redact_url_credentials(&String::from_utf8_lossy(kept))
                        .into_owned(),
                })
            }
        }
    }

    fn timed_out(&self) -> JudgeError {
        JudgeError::Timeout { command: self.command.clone(), seconds: self.timeout.as_secs_f64() }
    }

    /// The verdict in an answer: `{"match": true|false}`.
    fn verdict(&self, answer: &[u8]) -> Result<bool, JudgeError> {
        let quoted = || {
            let text = String::from_utf8_lossy(answer);
            let text = revcal_process::redact_url_credentials(text.trim());
            let text = text.as_ref();
            match text.char_indices().nth(ANSWER_QUOTED) {
                Some((cut, _)) => format!("{}...", &text[..cut]),
                None => text.to_string(),
            }
        };
        let value: Value = serde_json::from_slice(answer).map_err(|source| JudgeError::NotJson {
            command: self.command.clone(),
            output: quoted(),
            source,
        })?;
        match value.get("match") {
            Some(Value::Bool(verdict)) => Ok(*verdict),
            _ => Err(JudgeError::NoVerdict { command: self.command.clone(), output: quoted() }),
        }
    }
}

impl Judge for CommandJudge {
    fn name(&self) -> &str {
        "judge-cmd"
    }

    fn call_budget(&self) -> Option<u64> {
        self.max_calls
    }

    fn judge(&self, request: &JudgeRequest) -> Result<bool, JudgeError> {
        let input = serde_json::to_vec(request).map_err(JudgeError::Request)?;
        // Counted before the run, atomically: concurrent requests cannot overrun the budget.
        if let Some(max) = self.max_calls
            && self.calls.fetch_add(1, Ordering::SeqCst) >= max
        {
            self.calls.fetch_sub(1, Ordering::SeqCst);
            return Err(JudgeError::Budget { max });
        }
        if self.max_calls.is_none() {
            self.calls.fetch_add(1, Ordering::SeqCst);
        }
        let answer = self.run(&input)?;
        let verdict = self.verdict(&answer)?;
        tracing::debug!(command = %self.command, plant = %request.plant.file, line = request.plant.line, verdict, "judge verdict");
        Ok(verdict)
    }
}
