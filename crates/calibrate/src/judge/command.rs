//! `--judge-cmd CMD`: a judge that is any shell command.

use std::io::{ErrorKind, Read, Write};
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::{Judge, JudgeError, JudgeRequest};

/// How much of stderr is kept for error messages.
const STDERR_KEPT: usize = 2048;
/// How long stdout may stay open after the command exited (held by a background process).
const EXIT_GRACE: Duration = Duration::from_millis(500);
/// How much of a bad answer is quoted in an error message.
const ANSWER_QUOTED: usize = 200;

/// A judge that runs a shell command (`sh -c CMD`) per request: the request as one JSON
/// document on stdin, `{"match": true|false}` expected on stdout (other keys are ignored).
///
/// Anything else is a [`JudgeError`], never a match: output that is not JSON, a missing or
/// non-boolean `match`, a non-zero exit, more output than the limit, or no answer within the
/// timeout (the command's whole process group is then killed).
#[derive(Debug, Clone)]
pub struct CommandJudge {
    command: String,
    timeout: Duration,
    output_limit: usize,
    working_dir: Option<PathBuf>,
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
        }
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
    fn run(&self, input: Vec<u8>) -> Result<Vec<u8>, JudgeError> {
        let mut command = Command::new("sh");
        command
            .arg("-c")
            .arg(&self.command)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(dir) = &self.working_dir {
            command.current_dir(dir);
        }
        // Its own process group, so that a timeout kills whatever the command started too.
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        let mut child =
            command.spawn().map_err(|source| JudgeError::Spawn { command: self.command.clone(), source })?;
        let deadline = Instant::now() + self.timeout;

        if let Some(mut stdin) = child.stdin.take() {
            // A judge may answer without reading all of its input; a broken pipe is fine.
            thread::spawn(move || {
                let _ = stdin.write_all(&input);
            });
        }
        let overflowed = Arc::new(AtomicBool::new(false));
        let stdout = child
            .stdout
            .take()
            .map(|out| read_in_background(out, self.output_limit, Some(Arc::clone(&overflowed))));
        let stderr = child.stderr.take().map(|err| read_in_background(err, STDERR_KEPT, None));

        let status = match self.wait(&mut child, deadline, &overflowed) {
            Ok(status) => status,
            Err(error) => {
                kill_group(&mut child);
                return Err(error);
            }
        };
        let stdout = match stdout.map(|rx| self.collect_after_exit(&rx, &mut child, deadline)).transpose() {
            Ok(output) => output.unwrap_or_default(),
            Err(Waited::TimedOut) => return Err(self.timed_out()),
            Err(Waited::Failed(source)) => {
                return Err(JudgeError::Io { command: self.command.clone(), source });
            }
        };
        if stdout.overflowed {
            return Err(JudgeError::OutputTooLarge {
                command: self.command.clone(),
                limit: self.output_limit,
            });
        }
        if !status.success() {
            let stderr = stderr
                .and_then(|rx| rx.recv_timeout(Duration::from_millis(200)).ok())
                .and_then(Result::ok)
                .map(|captured| String::from_utf8_lossy(&captured.bytes).into_owned())
                .unwrap_or_default();
            return Err(JudgeError::Exit { command: self.command.clone(), status: describe(status), stderr });
        }
        Ok(stdout.bytes)
    }

    /// Wait for the command to exit, stopping early when its stdout overflows.
    fn wait(
        &self,
        child: &mut Child,
        deadline: Instant,
        overflowed: &AtomicBool,
    ) -> Result<ExitStatus, JudgeError> {
        let mut pause = Duration::from_millis(1);
        loop {
            match child.try_wait() {
                Ok(Some(status)) => return Ok(status),
                Ok(None) => {}
                Err(source) => return Err(JudgeError::Io { command: self.command.clone(), source }),
            }
            if overflowed.load(Ordering::Acquire) {
                return Err(JudgeError::OutputTooLarge {
                    command: self.command.clone(),
                    limit: self.output_limit,
                });
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(self.timed_out());
            }
            thread::sleep(pause.min(deadline - now));
            pause = (pause * 2).min(Duration::from_millis(20));
        }
    }

    /// The command's stdout once it has exited. A background process it left behind may hold
    /// the pipe open: after a short grace the process group is killed, which closes the pipe.
    fn collect_after_exit(
        &self,
        stdout: &Receiver<std::io::Result<Captured>>,
        child: &mut Child,
        deadline: Instant,
    ) -> Result<Captured, Waited> {
        let grace = (Instant::now() + EXIT_GRACE).min(deadline);
        match receive_by(stdout, grace) {
            Err(Waited::TimedOut) => {
                tracing::debug!(command = %self.command, "judge exited but its output is still open; killing its group");
                kill_group(child);
                receive_by(stdout, Instant::now() + EXIT_GRACE)
            }
            other => other,
        }
    }

    fn timed_out(&self) -> JudgeError {
        JudgeError::Timeout { command: self.command.clone(), seconds: self.timeout.as_secs_f64() }
    }

    /// The verdict in an answer: `{"match": true|false}`.
    fn verdict(&self, answer: &[u8]) -> Result<bool, JudgeError> {
        let quoted = || {
            let text = String::from_utf8_lossy(answer);
            let text = text.trim();
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

    fn judge(&self, request: &JudgeRequest) -> Result<bool, JudgeError> {
        let input = serde_json::to_vec(request).map_err(JudgeError::Request)?;
        let answer = self.run(input)?;
        let verdict = self.verdict(&answer)?;
        tracing::debug!(command = %self.command, plant = %request.plant.file, line = request.plant.line, verdict, "judge verdict");
        Ok(verdict)
    }
}

/// Output read from a pipe, up to a limit.
#[derive(Default)]
struct Captured {
    bytes: Vec<u8>,
    overflowed: bool,
}

/// Read `pipe` on a thread, keeping at most `limit` bytes. With an overflow flag the reader
/// raises it and stops (closing the pipe) once the limit is passed; without one it drains and
/// discards the rest so that the command never blocks on a full pipe.
fn read_in_background(
    mut pipe: impl Read + Send + 'static,
    limit: usize,
    overflow_flag: Option<Arc<AtomicBool>>,
) -> Receiver<std::io::Result<Captured>> {
    let (sender, receiver) = mpsc::channel();
    thread::spawn(move || {
        let mut captured = Captured { bytes: Vec::new(), overflowed: false };
        let mut buffer = [0u8; 8192];
        let result = loop {
            match pipe.read(&mut buffer) {
                Ok(0) => break Ok(captured),
                Ok(read) => {
                    let room = limit.saturating_sub(captured.bytes.len());
                    captured.bytes.extend_from_slice(&buffer[..read.min(room)]);
                    if read > room {
                        captured.overflowed = true;
                        if let Some(flag) = &overflow_flag {
                            flag.store(true, Ordering::Release);
                            break Ok(captured);
                        }
                    }
                }
                Err(error) if error.kind() == ErrorKind::Interrupted => {}
                Err(error) => break Err(error),
            }
        };
        let _ = sender.send(result);
    });
    receiver
}

enum Waited {
    TimedOut,
    Failed(std::io::Error),
}

/// The reader's result, waiting no later than `deadline` (a background process may hold the
/// pipe open after the command itself exited).
fn receive_by(receiver: &Receiver<std::io::Result<Captured>>, deadline: Instant) -> Result<Captured, Waited> {
    match receiver.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
        Ok(Ok(captured)) => Ok(captured),
        Ok(Err(error)) => Err(Waited::Failed(error)),
        Err(RecvTimeoutError::Timeout) => Err(Waited::TimedOut),
        Err(RecvTimeoutError::Disconnected) => {
            Err(Waited::Failed(std::io::Error::other("output reader stopped")))
        }
    }
}

/// Kill the command's process group (it leads its own group), then reap it.
fn kill_group(child: &mut Child) {
    #[cfg(unix)]
    if let Ok(pid) = i32::try_from(child.id()) {
        // SAFETY: kill(2) with a negative pid signals the process group the child leads; it
        // touches no memory of ours.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// An exit status in words.
fn describe(status: ExitStatus) -> String {
    #[cfg(unix)]
    if let Some(signal) = std::os::unix::process::ExitStatusExt::signal(&status) {
        return format!("killed by signal {signal}");
    }
    match status.code() {
        Some(code) => format!("exit code {code}"),
        None => status.to_string(),
    }
}
