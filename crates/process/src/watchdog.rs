//! The watchdog: a process of its own that ends a run's processes once revcal is gone, also
//! when revcal was killed with SIGKILL and could end nothing itself.
//!
//! revcal forks it when a run begins and keeps the write end of a pipe whose read end only
//! the watchdog holds. When revcal dies, however it dies, the kernel closes the write end; the
//! watchdog's read returns end-of-file, and it ends every process whose environment carries a
//! token of the run (see [`command_token`](crate::command_token)), every descendant of one and
//! the process group of each, then exits. The death-signal of a child (`PR_SET_PDEATHSIG`)
//! reaches only that child; a reviewer's grandchild that left its group (`setsid`, a double
//! fork) is re-parented to init when revcal dies, and only the token finds it then.
//!
//! The watchdog is a fork of revcal that never executes another program: between `fork` and
//! its exit it makes only async-signal-safe system calls (no allocation, no lock), on buffers
//! of its stack and on the run's token, which revcal wrote before forking.

use crate::reap::run_prefix;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// The name the watchdog runs under (`ps`, `/proc/PID/comm`; at most 15 bytes).
pub const WATCHDOG_NAME: &str = "revcal-watchdog";

/// The same name, as the C string prctl(2) takes.
const WATCHDOG_NAME_C: &[u8] = b"revcal-watchdog\0";

/// How often the watchdog looks again for processes it has signalled that still run, and
/// for how many rounds: 20 ms, 250 rounds (5 s).
const ROUND_NANOS: libc::c_long = 20_000_000;
const ROUNDS: u32 = 250;

/// The processes one look at `/proc` keeps track of (their parent links make descendants
/// findable); a process past this many is still ended when it carries the token itself.
const TABLE: usize = 4096;

/// The watchdog of one run: ends the run's processes once this value is dropped (after a run
/// that ended on its own ways there is normally nothing left to end) or this process dies.
#[derive(Debug)]
pub struct Watchdog {
    pid: libc::pid_t,
    pipe: Option<OwnedFd>,
}

impl Watchdog {
    /// Forks the watchdog of the run whose token is `run` (the token its commands' tokens
    /// are made from with [`command_token`](crate::command_token)).
    pub fn start(run: &str) -> std::io::Result<Watchdog> {
        let prefix = run_prefix(run);
        // SAFETY: getpid and getpgrp only read this process's ids.
        let (me, group) = unsafe { (libc::getpid(), libc::getpgrp()) };
        let mut fds: [libc::c_int; 2] = [-1, -1];
        // SAFETY: pipe2 writes two descriptors into the array we own; close-on-exec, so that
        // no program revcal runs inherits the write end (it would keep the pipe open).
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: both descriptors were just made and are owned by nothing else.
        let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        // SAFETY: the child runs `watch`, which makes only async-signal-safe system calls and
        // never returns (it ends with _exit), as fork(2) requires of a multithreaded process.
        match unsafe { libc::fork() } {
            -1 => Err(std::io::Error::last_os_error()),
            0 => unsafe { watch(read.as_raw_fd(), me, group, &prefix) },
            pid => {
                drop(read);
                tracing::debug!(pid, "watchdog started");
                Ok(Watchdog { pid, pipe: Some(write) })
            }
        }
    }

    /// The watchdog's process id.
    pub fn pid(&self) -> u32 {
        u32::try_from(self.pid).unwrap_or(0)
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        // Closing the pipe makes the watchdog end what is left of the run; then it exits.
        drop(self.pipe.take());
        // SAFETY: waits for our own child; it exits within its few seconds of rounds.
        unsafe { libc::waitpid(self.pid, std::ptr::null_mut(), 0) };
    }
}

/// The watchdog's life: wait for the pipe to close, end the run's processes, exit.
///
/// # Safety
///
/// Only in the child of `fork`; it never returns.
unsafe fn watch(pipe: libc::c_int, parent: libc::pid_t, parent_group: libc::pid_t, prefix: &[u8]) -> ! {
    // SAFETY (whole function): every call below is an async-signal-safe system call on
    // memory of this stack frame or on `prefix`, which nothing frees in this process.
    unsafe {
        // A session of its own: a Ctrl-C to revcal's terminal, or a signal to revcal's process
        // group, does not end it before revcal is gone.
        libc::setsid();
        libc::prctl(libc::PR_SET_NAME, WATCHDOG_NAME_C.as_ptr());
        // revcal's signal handlers write to revcal's pipes: the defaults here.
        let mut empty: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut empty);
        let mut default: libc::sigaction = std::mem::zeroed();
        default.sa_sigaction = libc::SIG_DFL;
        default.sa_mask = empty;
        for signal in 1..65 {
            // SIGKILL and SIGSTOP refuse it, harmlessly.
            libc::sigaction(signal, &default, std::ptr::null_mut());
        }
        libc::sigprocmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut());
        // Every other descriptor closed: it holds none of revcal's pipes, outputs or files open
        // (a caller waiting for revcal's output to end must not wait for the watchdog).
        if libc::dup2(pipe, 0) != 0 {
            libc::_exit(1);
        }
        close_from(1);
        let mut byte = 0u8;
        loop {
            let read = libc::read(0, (&raw mut byte).cast(), 1);
            if read > 0 {
                continue;
            }
            if read < 0 && *libc::__errno_location() == libc::EINTR {
                continue;
            }
            break;
        }
        let me = libc::getpid();
        for _ in 0..ROUNDS {
            if end_round(me, parent, parent_group, prefix) == 0 {
                break;
            }
            let pause = libc::timespec { tv_sec: 0, tv_nsec: ROUND_NANOS };
            libc::nanosleep(&pause, std::ptr::null_mut());
        }
        libc::_exit(0)
    }
}

/// Closes every descriptor from `first` on.
unsafe fn close_from(first: libc::c_uint) {
    // SAFETY: close_range and close only close descriptors of this process.
    unsafe {
        if libc::syscall(libc::SYS_close_range, first, libc::c_uint::MAX, 0) == 0 {
            return;
        }
        // Before Linux 5.9: one by one, up to the descriptor limit.
        let mut limit: libc::rlimit = std::mem::zeroed();
        let last = if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 {
            limit.rlim_cur.min(1 << 16) as libc::c_int
        } else {
            1024
        };
        for fd in first as libc::c_int..last {
            libc::close(fd);
        }
    }
}

/// One process, as a look at `/proc` saw it.
#[derive(Clone, Copy)]
struct Seen {
    pid: libc::pid_t,
    parent: libc::pid_t,
    group: libc::pid_t,
    marked: bool,
}

/// One look at `/proc`: every process carrying the run's token, every descendant of one,
/// and their process groups, signalled with SIGKILL. Returns how many such processes were
/// still running (zombies aside), so 0 once none is left.
unsafe fn end_round(me: libc::pid_t, parent: libc::pid_t, parent_group: libc::pid_t, prefix: &[u8]) -> usize {
    let empty = Seen { pid: 0, parent: 0, group: 0, marked: false };
    let mut table = [empty; TABLE];
    let mut count = 0usize;
    let mut alive = 0usize;
    // SAFETY: system calls on descriptors and buffers of this frame.
    unsafe {
        let proc_dir = libc::open(c"/proc".as_ptr(), libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC);
        if proc_dir < 0 {
            return 0;
        }
        // linux_dirent64 records, 8-byte aligned.
        let mut buffer = [0u64; 1024];
        loop {
            let read = libc::syscall(
                libc::SYS_getdents64,
                proc_dir,
                buffer.as_mut_ptr(),
                std::mem::size_of_val(&buffer),
            );
            if read <= 0 {
                break;
            }
            let bytes = std::slice::from_raw_parts(buffer.as_ptr().cast::<u8>(), read as usize);
            let mut offset = 0usize;
            while offset + 19 < bytes.len() {
                let record = usize::from(u16::from_ne_bytes([bytes[offset + 16], bytes[offset + 17]]));
                if record == 0 {
                    break;
                }
                let name = &bytes[offset + 19..(offset + record).min(bytes.len())];
                offset += record;
                let Some(pid) = parse_pid(name) else { continue };
                if pid == me || pid == parent {
                    continue;
                }
                let Some((state, seen_parent, group)) = stat_of(pid) else { continue };
                if state == b'Z' {
                    continue;
                }
                let seen = Seen { pid, parent: seen_parent, group, marked: carries(pid, prefix) };
                if count < TABLE {
                    table[count] = seen;
                    count += 1;
                } else if seen.marked {
                    alive += 1;
                    end(seen, parent_group);
                }
            }
        }
        libc::close(proc_dir);
        // Descendants of a marked process, whatever their environment (`env -i`).
        loop {
            let mut changed = false;
            for index in 0..count {
                if table[index].marked {
                    continue;
                }
                let child_of_marked = table[..count].iter().any(|p| p.marked && p.pid == table[index].parent);
                if child_of_marked {
                    table[index].marked = true;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        for seen in &table[..count] {
            if seen.marked {
                alive += 1;
                end(*seen, parent_group);
            }
        }
    }
    alive
}

/// Signals `seen` and its process group (unless that is revcal's own group, where the user's
/// other processes may be, or init's) with SIGKILL.
unsafe fn end(seen: Seen, parent_group: libc::pid_t) {
    // SAFETY: kill and killpg only send signals, to processes of the run.
    unsafe {
        libc::kill(seen.pid, libc::SIGKILL);
        if seen.group > 1 && seen.group != parent_group {
            libc::killpg(seen.group, libc::SIGKILL);
        }
    }
}

/// The pid a `/proc` entry's name (NUL-terminated) spells, if it is one.
fn parse_pid(name: &[u8]) -> Option<libc::pid_t> {
    let mut pid: libc::pid_t = 0;
    let mut digits = 0;
    for &byte in name {
        match byte {
            0 => break,
            b'0'..=b'9' => {
                pid = pid.checked_mul(10)?.checked_add(libc::pid_t::from(byte - b'0'))?;
                digits += 1;
            }
            _ => return None,
        }
    }
    (digits > 0).then_some(pid)
}

/// `/proc/PID/` followed by `file` and a NUL, in `out`; its length without the NUL.
fn proc_path(pid: libc::pid_t, file: &[u8], out: &mut [u8; 64]) -> usize {
    let mut digits = [0u8; 12];
    let mut count = 0;
    let mut rest = pid.unsigned_abs();
    loop {
        digits[count] = b'0' + (rest % 10) as u8;
        count += 1;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    let mut length = 0;
    for &byte in b"/proc/".iter().chain(digits[..count].iter().rev()).chain(b"/").chain(file) {
        out[length] = byte;
        length += 1;
    }
    out[length] = 0;
    length
}

/// (state, parent pid, process group) from `/proc/PID/stat` (proc_pid_stat(5): fields 3, 4
/// and 5, after the parenthesised command name, which may itself hold parentheses).
unsafe fn stat_of(pid: libc::pid_t) -> Option<(u8, libc::pid_t, libc::pid_t)> {
    let mut path = [0u8; 64];
    proc_path(pid, b"stat", &mut path);
    let mut buffer = [0u8; 1024];
    // SAFETY: open, read and close on a path and a buffer of this frame.
    let length = unsafe {
        let fd = libc::open(path.as_ptr().cast(), libc::O_RDONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return None;
        }
        let read = libc::read(fd, buffer.as_mut_ptr().cast(), buffer.len());
        libc::close(fd);
        usize::try_from(read).ok()?
    };
    let text = &buffer[..length];
    let close = text.iter().rposition(|byte| *byte == b')')?;
    let mut fields = text[close + 1..].split(|byte| *byte == b' ').filter(|field| !field.is_empty());
    let state = *fields.next()?.first()?;
    let parent = parse_pid(fields.next()?)?;
    let group = parse_pid(fields.next()?)?;
    Some((state, parent, group))
}

/// True when an entry of `/proc/PID/environ` starts with `prefix`; read in pieces of a
/// stack buffer, however long the environment.
unsafe fn carries(pid: libc::pid_t, prefix: &[u8]) -> bool {
    let mut path = [0u8; 64];
    proc_path(pid, b"environ", &mut path);
    // SAFETY: open, read and close on a path and a buffer of this frame.
    unsafe {
        let fd = libc::open(path.as_ptr().cast(), libc::O_RDONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return false;
        }
        let mut buffer = [0u8; 4096];
        // Where in the current entry the reading is, and whether it still matches the prefix.
        let (mut position, mut matching) = (0usize, true);
        let mut found = false;
        'read: loop {
            let read = libc::read(fd, buffer.as_mut_ptr().cast(), buffer.len());
            let Ok(read) = usize::try_from(read) else { break };
            if read == 0 {
                break;
            }
            for &byte in &buffer[..read] {
                if byte == 0 {
                    (position, matching) = (0, true);
                    continue;
                }
                if matching {
                    if byte != prefix[position] {
                        matching = false;
                    } else if position + 1 == prefix.len() {
                        found = true;
                        break 'read;
                    }
                }
                position += 1;
            }
        }
        libc::close(fd);
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reap::{RUN_TOKEN_VARIABLE, command_token, run_token};
    use std::time::{Duration, Instant};

    /// Starts `sleep 613` carrying `token`, in a session of its own, through a double fork
    /// (its parent exits at once, so it is no child of this process); returns its pid.
    fn start_escaped_sleeper(token: &str, dir: &std::path::Path) -> i32 {
        let pidfile = dir.join("pid");
        let script = format!(
            "( setsid sh -c 'echo $$ > {0}; exec sleep 613' </dev/null >/dev/null 2>&1 & )",
            pidfile.display()
        );
        let status = std::process::Command::new("sh")
            .args(["-c", &script])
            .env(RUN_TOKEN_VARIABLE, token)
            .status()
            .unwrap();
        assert!(status.success());
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(pid) = std::fs::read_to_string(&pidfile).ok().and_then(|t| t.trim().parse().ok())
                && sleeping(pid)
            {
                return pid;
            }
            assert!(Instant::now() < deadline, "the sleeper never started");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// True while `pid` runs `sleep 613` (not as a zombie).
    fn sleeping(pid: i32) -> bool {
        std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|line| line == b"sleep\x00613\x00")
            && std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .is_ok_and(|stat| stat.rsplit_once(") ").is_some_and(|(_, rest)| !rest.starts_with('Z')))
    }

    #[test]
    fn a_dropped_watchdog_ends_the_processes_of_its_run_and_no_other() {
        let dir = tempfile::tempdir().unwrap();
        let run = run_token();
        let watchdog = Watchdog::start(&run).unwrap();
        // It names itself once forked: `ps` shows it under its name.
        let named = || {
            std::fs::read_to_string(format!("/proc/{}/comm", watchdog.pid()))
                .is_ok_and(|comm| comm.trim() == WATCHDOG_NAME)
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        while !named() {
            assert!(Instant::now() < deadline, "the watchdog never took its name");
            std::thread::sleep(Duration::from_millis(5));
        }
        std::fs::create_dir_all(dir.path().join("ours")).unwrap();
        std::fs::create_dir_all(dir.path().join("theirs")).unwrap();
        let ours = start_escaped_sleeper(&command_token(&run, 7), &dir.path().join("ours"));
        // Another run's token that starts with this run's: not this run's.
        let theirs = start_escaped_sleeper(&format!("{run}7.1"), &dir.path().join("theirs"));
        drop(watchdog);
        assert!(!sleeping(ours), "the run's process outlived its watchdog");
        assert!(sleeping(theirs), "another run's process was ended");
        assert_eq!(crate::reap::end_run(&format!("{run}7")), 1, "ended by the next look");
        assert!(!sleeping(theirs));
    }

    #[test]
    fn pids_and_paths_are_spelt_without_allocating() {
        assert_eq!(parse_pid(b"1234\0"), Some(1234));
        assert_eq!(parse_pid(b"self\0"), None);
        assert_eq!(parse_pid(b"\0"), None);
        let mut out = [0u8; 64];
        let length = proc_path(4_194_304, b"environ", &mut out);
        assert_eq!(&out[..=length], b"/proc/4194304/environ\0");
    }
}
