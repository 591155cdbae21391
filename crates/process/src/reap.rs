//! Ending what a run started: a token every command of a run carries in its environment, the
//! child subreaper that keeps orphaned descendants of the run attached to this process, and
//! [`end_descendants`], which ends every process carrying the token and whatever descends from
//! one, wherever it moved.

use std::time::{Duration, Instant};

/// The environment variable that marks every process a run started (its value is a fresh
/// random token per run): descendants inherit it, also those that leave the process group.
pub const RUN_TOKEN_VARIABLE: &str = "REVCAL_RUN_TOKEN";

/// A fresh token for [`RUN_TOKEN_VARIABLE`].
pub fn run_token() -> String {
    let mut bytes = [0u8; 16];
    if getrandom::fill(&mut bytes).is_err() {
        // No randomness: still unique enough among this user's processes to find ours.
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |elapsed| elapsed.as_nanos());
        return format!("{}-{nanos}", std::process::id());
    }
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// Makes this process the child subreaper (prctl(2), PR_SET_CHILD_SUBREAPER) while it lives:
/// a descendant whose parent exits is re-parented to revcal instead of to init, so that it
/// stays a descendant that [`end_descendants`] finds through its parent. The previous setting
/// comes back on drop.
pub struct Subreaper {
    previous: libc::c_int,
}

impl Subreaper {
    /// Turns the subreaper attribute on.
    pub fn start() -> Subreaper {
        let mut previous: libc::c_int = 0;
        // SAFETY: PR_GET_CHILD_SUBREAPER writes one int through the pointer we own; SET only
        // sets a flag of this process.
        unsafe {
            libc::prctl(libc::PR_GET_CHILD_SUBREAPER, &mut previous as *mut libc::c_int);
            libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1 as libc::c_ulong);
        }
        Subreaper { previous }
    }
}

impl Drop for Subreaper {
    fn drop(&mut self) {
        // SAFETY: as in start.
        unsafe {
            libc::prctl(libc::PR_SET_CHILD_SUBREAPER, self.previous as libc::c_ulong);
        }
    }
}

/// (state, parent pid) of process `pid` from /proc/PID/stat (proc_pid_stat(5): fields 3 and
/// 4, after the parenthesised command name).
fn state_and_parent(pid: i32) -> Option<(char, i32)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let mut fields = stat.get(stat.rfind(')')? + 1..)?.split_whitespace();
    let state = fields.next()?.chars().next()?;
    Some((state, fields.next()?.parse().ok()?))
}

/// What marks the processes to end: the token of one command, or every token of a run.
#[derive(Clone, Copy)]
enum Mark<'a> {
    /// `REVCAL_RUN_TOKEN=TOKEN` exactly.
    Exact(&'a [u8]),
    /// `REVCAL_RUN_TOKEN=RUN.` followed by anything (see [`command_token`]).
    Prefix(&'a [u8]),
}

/// True when `pid`'s environment holds an entry `mark` matches; only the user's own processes
/// are readable, which are the only ones a reviewer can start.
fn carries(pid: i32, mark: Mark<'_>) -> bool {
    std::fs::read(format!("/proc/{pid}/environ")).is_ok_and(|environ| {
        environ.split(|byte| *byte == 0).any(|entry| match mark {
            Mark::Exact(needle) => entry == needle,
            Mark::Prefix(needle) => entry.starts_with(needle),
        })
    })
}

/// The token of one command of the run whose token is `run` (from [`run_token`]):
/// `RUN.COMMAND`. Each command's processes can be ended alone ([`end_descendants`]), and every
/// process of the run at once ([`end_run`], the [`Watchdog`](crate::Watchdog)).
pub fn command_token(run: &str, command: impl std::fmt::Display) -> String {
    format!("{run}.{command}")
}

/// The bytes every environment entry of a command of run `run` starts with.
pub(crate) fn run_prefix(run: &str) -> Vec<u8> {
    format!("{RUN_TOKEN_VARIABLE}={}", command_token(run, "")).into_bytes()
}

/// Ends every process that carries this token, and every descendant of one, whatever
/// process group or session it moved to (`setsid`, a double fork), and waits until none is
/// left (at most a few seconds). Zombies re-parented to revcal are reaped.
pub fn end_descendants(token: &str) {
    let needle = format!("{RUN_TOKEN_VARIABLE}={token}").into_bytes();
    end_marked(Mark::Exact(&needle));
}

/// Ends every process of the run whose token is `run` (every command token made with
/// [`command_token`] from it) and every descendant of one, as [`end_descendants`] does;
/// returns how many processes it ended. For processes a run killed with SIGKILL left behind.
pub fn end_run(run: &str) -> usize {
    end_marked(Mark::Prefix(&run_prefix(run)))
}

/// Ends the processes `mark` finds and their descendants; how many it ended.
fn end_marked(mark: Mark<'_>) -> usize {
    let me = libc::pid_t::try_from(std::process::id()).unwrap_or(0);
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut ended: std::collections::HashSet<i32> = std::collections::HashSet::new();
    loop {
        let Ok(entries) = std::fs::read_dir("/proc") else { return ended.len() };
        let processes: Vec<(i32, char, i32)> = entries
            .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<i32>().ok())
            .filter(|pid| *pid != me)
            .filter_map(|pid| state_and_parent(pid).map(|(state, parent)| (pid, state, parent)))
            .collect();
        let mut marked: std::collections::HashSet<i32> = processes
            .iter()
            .filter(|(pid, state, _)| *state != 'Z' && carries(*pid, mark))
            .map(|(pid, _, _)| *pid)
            .collect();
        loop {
            let before = marked.len();
            for (pid, _, parent) in &processes {
                if marked.contains(parent) {
                    marked.insert(*pid);
                }
            }
            if marked.len() == before {
                break;
            }
        }
        let mut alive = 0;
        for (pid, state, parent) in &processes {
            if !(marked.contains(pid) || ended.contains(pid)) {
                continue;
            }
            if *state == 'Z' {
                if *parent == me {
                    // SAFETY: reaps a zombie child of ours that this run ended; WNOHANG never blocks.
                    unsafe { libc::waitpid(*pid, std::ptr::null_mut(), libc::WNOHANG) };
                }
                continue;
            }
            alive += 1;
            ended.insert(*pid);
            // SAFETY: kill only sends a signal, to a process this run started (it carries the
            // run's token or descends from one that does).
            unsafe { libc::kill(*pid, libc::SIGKILL) };
        }
        if alive == 0 || Instant::now() >= deadline {
            if alive > 0 {
                tracing::warn!(alive, "processes started by the reviewer outlived every attempt to end them");
            }
            return ended.len();
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}
