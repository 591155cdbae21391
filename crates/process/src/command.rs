//! Running a shell command the way revcal needs it: in its own process group (so the whole
//! group can be killed, grandchildren included), with a timeout, with its output captured up
//! to a cap (a command that prints gigabytes is drained, not stored, or stopped), optionally
//! fed bytes on stdin, under a memory cap and a sandbox, and interruptible by a
//! [`SignalWatch`]. The reviewer, the witness and repro scripts, the tests the bug miner runs
//! and the `--judge-cmd` judge all run through [`run`].

use crate::sandbox::Sandbox;
use crate::signals::SignalWatch;
use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How a command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Exit {
    /// It exited with this code.
    Code(i32),
    /// A signal it did not handle ended it.
    Signal(i32),
    /// It ran past its timeout and its process group was killed.
    TimedOut,
    /// revcal received this signal; the command's process group was killed.
    Interrupted(i32),
    /// Its process group's resident memory went past the cap (bytes) and it was killed.
    OutOfMemory(u64),
}

impl Exit {
    /// True for exit code 0.
    pub fn success(self) -> bool {
        self == Exit::Code(0)
    }
}

impl std::fmt::Display for Exit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Exit::Code(code) => write!(f, "exit code {code}"),
            Exit::Signal(signal) => write!(f, "killed by signal {signal}"),
            Exit::TimedOut => write!(f, "timed out"),
            Exit::Interrupted(signal) => write!(f, "stopped by {}", crate::signals::signal_name(*signal)),
            Exit::OutOfMemory(cap) => write!(f, "killed past {} MiB of memory", cap >> 20),
        }
    }
}

/// What a finished command left behind.
#[derive(Debug, Clone)]
pub struct Finished {
    /// How it ended.
    pub exit: Exit,
    /// Standard output, at most the cap.
    pub stdout: Vec<u8>,
    /// True when standard output went past the cap (the rest was read and dropped).
    pub stdout_truncated: bool,
    /// Standard error, at most the cap.
    pub stderr: Vec<u8>,
    /// Wall time.
    pub elapsed: Duration,
}

/// A shell command to run: `sh -c SCRIPT` in a directory, with a timeout; the rest has
/// defaults (1 MiB of output kept, no extra environment, `/dev/null` on stdin, output past the
/// cap drained, no memory cap, no sandbox) that the builder methods change.
///
/// ```
/// use revcal_process::{Exit, ShellCommand, SignalWatch, run};
/// use std::time::Duration;
///
/// let dir = std::env::temp_dir();
/// let command = ShellCommand::new("read word; echo \"got $word\"", &dir, Duration::from_secs(10))
///     .stdin(b"hello\n");
/// let done = run(&command, &SignalWatch::inert()).unwrap();
/// assert_eq!((done.exit, done.stdout.as_slice()), (Exit::Code(0), &b"got hello\n"[..]));
/// ```
#[derive(Debug, Clone)]
pub struct ShellCommand<'a> {
    script: &'a str,
    dir: &'a Path,
    timeout: Duration,
    output_cap: usize,
    env: &'a [(&'a str, String)],
    withhold: &'a [String],
    stdin: Option<&'a [u8]>,
    kill_past_cap: bool,
    memory_cap: Option<u64>,
    sandbox: Option<&'a Sandbox>,
}

impl<'a> ShellCommand<'a> {
    /// The output kept by default: 1 MiB of stdout and of stderr.
    pub const DEFAULT_OUTPUT_CAP: usize = 1 << 20;

    /// `sh -c script` in `dir`, its whole process group killed after `timeout`.
    pub fn new(script: &'a str, dir: &'a Path, timeout: Duration) -> Self {
        ShellCommand {
            script,
            dir,
            timeout,
            output_cap: Self::DEFAULT_OUTPUT_CAP,
            env: &[],
            withhold: &[],
            stdin: None,
            kill_past_cap: false,
            memory_cap: None,
            sandbox: None,
        }
    }

    /// Keep at most `bytes` of stdout and of stderr.
    pub fn output_cap(mut self, bytes: usize) -> Self {
        self.output_cap = bytes;
        self
    }

    /// Extra environment variables.
    pub fn env(mut self, env: &'a [(&'a str, String)]) -> Self {
        self.env = env;
        self
    }

    /// Variables of this process's environment the command does not get (before
    /// [`env`](Self::env) is applied, so a variable named in both gets the value given there).
    pub fn withhold(mut self, names: &'a [String]) -> Self {
        self.withhold = names;
        self
    }

    /// Bytes written to the command's stdin (from a thread of their own, so that a command
    /// that never reads its input cannot block the run); without them it reads `/dev/null`.
    pub fn stdin(mut self, input: &'a [u8]) -> Self {
        self.stdin = Some(input);
        self
    }

    /// Kill the process group as soon as stdout goes past the output cap, instead of draining
    /// the rest: for commands whose oversized output is an error, not a warning. The run then
    /// ends with [`Finished::stdout_truncated`] set and, usually, [`Exit::Signal`].
    pub fn kill_past_cap(mut self, kill: bool) -> Self {
        self.kill_past_cap = kill;
        self
    }

    /// Kill the process group once its resident memory (the sum over its processes) goes
    /// past this many bytes. Checked by polling, so a fast allocator may overshoot briefly.
    pub fn memory_cap(mut self, bytes: Option<u64>) -> Self {
        self.memory_cap = bytes;
        self
    }

    /// Run the command under `sandbox` (witness and repro commands).
    pub fn sandbox(mut self, sandbox: Option<&'a Sandbox>) -> Self {
        self.sandbox = sandbox;
        self
    }

    /// The script given to `sh -c`.
    pub fn script(&self) -> &str {
        self.script
    }

    /// The time limit.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }
}

/// Kills a process group when dropped: nothing a command started outlives its run, on any
/// path out of [`run`] (return, error, panic).
struct GroupKiller {
    pgid: libc::pid_t,
}

impl GroupKiller {
    fn kill(&self) {
        // SAFETY: killpg only sends a signal; ESRCH (group already gone) is the normal case.
        unsafe {
            libc::killpg(self.pgid, libc::SIGKILL);
        }
    }
}

impl Drop for GroupKiller {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A pipe drained on its own thread into a capped buffer.
struct Drain {
    buffer: Arc<Mutex<(Vec<u8>, bool)>>,
    thread: JoinHandle<()>,
}

impl Drain {
    fn start(mut pipe: impl Read + Send + 'static, cap: usize) -> Drain {
        let buffer = Arc::new(Mutex::new((Vec::new(), false)));
        let shared = Arc::clone(&buffer);
        let thread = std::thread::spawn(move || {
            let mut chunk = vec![0u8; 64 * 1024];
            loop {
                match pipe.read(&mut chunk) {
                    Ok(0) => break,
                    Ok(read) => {
                        let Ok(mut guard) = shared.lock() else { break };
                        let (kept, truncated) = &mut *guard;
                        let room = cap.saturating_sub(kept.len());
                        kept.extend_from_slice(&chunk[..read.min(room)]);
                        if read > room {
                            *truncated = true;
                        }
                    }
                    Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(_) => break,
                }
            }
        });
        Drain { buffer, thread }
    }

    /// True once the pipe delivered more than the cap.
    fn overflowed(&self) -> bool {
        self.buffer.lock().map_or(true, |guard| guard.1)
    }

    /// Waits briefly for the pipe to close (a process that left the group may hold it open
    /// forever), then takes what was read.
    fn finish(self) -> (Vec<u8>, bool) {
        let deadline = Instant::now() + Duration::from_secs(2);
        while !self.thread.is_finished() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        if self.thread.is_finished() {
            let _ = self.thread.join();
        }
        match self.buffer.lock() {
            Ok(mut guard) => (std::mem::take(&mut guard.0), guard.1),
            Err(_) => (Vec::new(), true),
        }
    }
}

/// Resident memory of every process in process group `pgid`, in bytes: field 5 (pgrp) and
/// field 24 (rss, in pages) of proc_pid_stat(5).
fn group_resident_bytes(pgid: libc::pid_t) -> u64 {
    // SAFETY: sysconf only reads a system constant.
    let page = u64::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(4096);
    let Ok(entries) = std::fs::read_dir("/proc") else { return 0 };
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            let fields: Vec<&str> = stat.get(stat.rfind(')')? + 1..)?.split_whitespace().collect();
            let group: libc::pid_t = fields.get(2)?.parse().ok()?;
            let pages: u64 = fields.get(21)?.parse().ok()?;
            (group == pgid).then_some(pages * page)
        })
        .sum()
}

/// How an exit status reads as an [`Exit`].
fn exit_of(status: std::process::ExitStatus) -> Exit {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => Exit::Code(code),
        (None, Some(signal)) => Exit::Signal(signal),
        (None, None) => Exit::Code(-1),
    }
}

/// The variables that point git at a repository (git(1), "ENVIRONMENT"): set in revcal's own
/// environment (revcal run from a git hook, say), they would send a reviewer's `git` commands
/// to the user's repository instead of its checkout's.
pub const GIT_LOCATION_VARIABLES: [&str; 8] = [
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
    "GIT_PREFIX",
];

/// Runs `command` to completion, timeout, interruption or (with
/// [`ShellCommand::kill_past_cap`]) too much output.
pub fn run(command: &ShellCommand<'_>, signals: &SignalWatch) -> std::io::Result<Finished> {
    run_clearing(command, &[], signals)
}

/// [`run`] in a checkout of its own: without [`GIT_LOCATION_VARIABLES`], so that `git` in the
/// command finds the repository of its working directory.
pub fn run_isolated(command: &ShellCommand<'_>, signals: &SignalWatch) -> std::io::Result<Finished> {
    run_clearing(command, &GIT_LOCATION_VARIABLES, signals)
}

/// [`run`] with the variables `clear` removed from the command's environment.
fn run_clearing(
    command: &ShellCommand<'_>,
    clear: &[&str],
    signals: &SignalWatch,
) -> std::io::Result<Finished> {
    let started = Instant::now();
    let mut builder = Command::new("sh");
    builder
        .arg("-c")
        .arg(command.script)
        .current_dir(command.dir)
        .stdin(if command.stdin.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    for key in clear.iter().copied().chain(command.withhold.iter().map(String::as_str)) {
        builder.env_remove(key);
    }
    for (key, value) in command.env {
        builder.env(key, value);
    }
    #[cfg(target_os = "linux")]
    // SAFETY: prctl is async-signal-safe; it asks the kernel to kill the shell should
    // revcal itself be killed (SIGKILL cannot be handled, so this is the only cleanup left).
    unsafe {
        builder.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            Ok(())
        });
    }
    if let Some(sandbox) = command.sandbox {
        let mut ruleset = Some(sandbox.prepare().map_err(std::io::Error::other)?);
        // SAFETY: restrict only makes the landlock_restrict_self and prctl system calls on
        // the ruleset prepared above; it allocates nothing on success.
        unsafe {
            builder.pre_exec(move || match ruleset.take() {
                Some(ruleset) => crate::sandbox::restrict(ruleset),
                None => Ok(()),
            });
        }
    }
    let mut child = builder.spawn()?;
    let killer = GroupKiller { pgid: libc::pid_t::try_from(child.id()).unwrap_or(0) };
    let stdout = child.stdout.take().map(|pipe| Drain::start(pipe, command.output_cap));
    let stderr = child.stderr.take().map(|pipe| Drain::start(pipe, command.output_cap));
    if let (Some(mut pipe), Some(input)) = (child.stdin.take(), command.stdin) {
        let input = input.to_vec();
        // Detached: a command may exit without reading its input (the write then fails with a
        // broken pipe, which is fine), and the pipe closes once everything is written.
        std::thread::spawn(move || {
            let _ = pipe.write_all(&input);
        });
    }
    let deadline = started + command.timeout;
    let mut pause = Duration::from_millis(1);
    let mut memory_checked = started;
    let exit = loop {
        if let Some(status) = child.try_wait()? {
            break exit_of(status);
        }
        if command.kill_past_cap && stdout.as_ref().is_some_and(Drain::overflowed) {
            killer.kill();
            break exit_of(child.wait()?);
        }
        if let Some(signal) = signals.received() {
            killer.kill();
            let _ = child.wait();
            break Exit::Interrupted(signal);
        }
        if Instant::now() >= deadline {
            killer.kill();
            let _ = child.wait();
            break Exit::TimedOut;
        }
        if let Some(cap) = command.memory_cap
            && memory_checked.elapsed() >= Duration::from_millis(50)
        {
            memory_checked = Instant::now();
            if group_resident_bytes(killer.pgid) > cap {
                killer.kill();
                let _ = child.wait();
                break Exit::OutOfMemory(cap);
            }
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(25));
    };
    // Whatever the shell left running in its group goes too, so that nothing writes to the
    // tree after it is restored and the pipes close.
    killer.kill();
    let (stdout, stdout_truncated) = stdout.map(Drain::finish).unwrap_or_default();
    let (stderr, _) = stderr.map(Drain::finish).unwrap_or_default();
    Ok(Finished { exit, stdout, stdout_truncated, stderr, elapsed: started.elapsed() })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shell(script: &str, timeout: Duration, cap: usize) -> Finished {
        let dir = tempfile::tempdir().unwrap();
        let command = ShellCommand {
            script,
            dir: dir.path(),
            timeout,
            output_cap: cap,
            env: &[],
            withhold: &[],
            stdin: None,
            kill_past_cap: false,
            memory_cap: None,
            sandbox: None,
        };
        run(&command, &SignalWatch::inert()).unwrap()
    }

    #[test]
    fn stdin_is_fed_and_closed_and_a_command_that_ignores_it_does_not_block() {
        let dir = tempfile::tempdir().unwrap();
        let input = vec![b'x'; 1 << 20];
        let mut command = ShellCommand {
            script: "wc -c",
            dir: dir.path(),
            timeout: Duration::from_secs(20),
            output_cap: 1024,
            env: &[],
            withhold: &[],
            stdin: Some(&input),
            kill_past_cap: false,
            memory_cap: None,
            sandbox: None,
        };
        let done = run(&command, &SignalWatch::inert()).unwrap();
        assert_eq!(done.exit, Exit::Code(0));
        assert_eq!(String::from_utf8_lossy(&done.stdout).trim(), "1048576");

        // 1 MiB is far more than a pipe buffer: a blocking write would hang until the timeout.
        command.script = "echo answered";
        let done = run(&command, &SignalWatch::inert()).unwrap();
        assert_eq!(done.exit, Exit::Code(0));
        assert_eq!(done.stdout, b"answered\n");
        assert!(done.elapsed < Duration::from_secs(10), "took {:?}", done.elapsed);

        command.stdin = None;
        command.script = "cat";
        let done = run(&command, &SignalWatch::inert()).unwrap();
        assert_eq!((done.exit, done.stdout.len()), (Exit::Code(0), 0), "no stdin reads as empty");
    }

    #[test]
    fn kill_past_cap_stops_a_flood_instead_of_draining_it() {
        let dir = tempfile::tempdir().unwrap();
        let command = ShellCommand {
            script: "yes flood",
            dir: dir.path(),
            timeout: Duration::from_secs(20),
            output_cap: 4096,
            env: &[],
            withhold: &[],
            stdin: None,
            kill_past_cap: true,
            memory_cap: None,
            sandbox: None,
        };
        let done = run(&command, &SignalWatch::inert()).unwrap();
        assert!(done.stdout_truncated);
        assert_eq!(done.stdout.len(), 4096);
        assert_eq!(done.exit, Exit::Signal(libc::SIGKILL));
        assert!(done.elapsed < Duration::from_secs(10), "took {:?}", done.elapsed);
    }

    #[test]
    fn exit_codes_and_output_are_captured() {
        let done = shell("echo out; echo err >&2; exit 3", Duration::from_secs(10), 1024);
        assert_eq!(done.exit, Exit::Code(3));
        assert_eq!(done.stdout, b"out\n");
        assert_eq!(done.stderr, b"err\n");
        assert!(!done.stdout_truncated);
    }

    #[test]
    fn output_past_the_cap_is_drained_and_dropped() {
        let done = shell("head -c 3000000 /dev/zero", Duration::from_secs(20), 1000);
        assert_eq!(done.exit, Exit::Code(0));
        assert_eq!(done.stdout.len(), 1000);
        assert!(done.stdout_truncated);
    }

    #[test]
    fn a_hanging_group_is_killed_at_the_timeout_grandchildren_included() {
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("late");
        let script = format!("(sleep 1; touch {}) & sleep 30", marker.display());
        let done = shell(&script, Duration::from_millis(200), 1024);
        assert_eq!(done.exit, Exit::TimedOut);
        assert!(done.elapsed < Duration::from_secs(5));
        std::thread::sleep(Duration::from_millis(1300));
        assert!(!marker.exists(), "the background grandchild was killed with the group");
    }
}
