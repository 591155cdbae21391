//! Termination signals observed, never acted on asynchronously: while a run has commands
//! going, every signal whose default action ends the process (signal(7): SIGINT, SIGTERM,
//! SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, the real-time signals, ...) only sets a flag;
//! [`run`](crate::run) notices it at its next poll and kills the command's process group, and
//! the run cleans up on its ordinary return path. SIGPIPE and SIGXFSZ are only caught, not a
//! reason to stop: the write that raised them fails with EPIPE or EFBIG and takes the ordinary
//! error path. SIGKILL and SIGSTOP cannot be caught; SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGSYS,
//! SIGTRAP and SIGABRT report a fault in revcal itself and keep their default action.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// The signals that end a run early: each is handled, so that the run stops its commands and
/// cleans up on its ordinary return path.
pub fn handled_signals() -> Vec<i32> {
    let mut signals = vec![
        libc::SIGINT,
        libc::SIGTERM,
        libc::SIGHUP,
        libc::SIGQUIT,
        libc::SIGUSR1,
        libc::SIGUSR2,
        libc::SIGALRM,
        libc::SIGVTALRM,
        libc::SIGPROF,
        libc::SIGXCPU,
        libc::SIGIO,
        libc::SIGPWR,
        libc::SIGSTKFLT,
    ];
    signals.extend(libc::SIGRTMIN()..=libc::SIGRTMAX());
    signals
}

/// Signals caught only so that they do not end the process (see the module docs).
const CAUGHT_ONLY: [i32; 2] = [libc::SIGPIPE, libc::SIGXFSZ];

/// Names of the real-time signals by offset from SIGRTMIN.
const REAL_TIME: [&str; 33] = [
    "SIGRTMIN",
    "SIGRTMIN+1",
    "SIGRTMIN+2",
    "SIGRTMIN+3",
    "SIGRTMIN+4",
    "SIGRTMIN+5",
    "SIGRTMIN+6",
    "SIGRTMIN+7",
    "SIGRTMIN+8",
    "SIGRTMIN+9",
    "SIGRTMIN+10",
    "SIGRTMIN+11",
    "SIGRTMIN+12",
    "SIGRTMIN+13",
    "SIGRTMIN+14",
    "SIGRTMIN+15",
    "SIGRTMIN+16",
    "SIGRTMIN+17",
    "SIGRTMIN+18",
    "SIGRTMIN+19",
    "SIGRTMIN+20",
    "SIGRTMIN+21",
    "SIGRTMIN+22",
    "SIGRTMIN+23",
    "SIGRTMIN+24",
    "SIGRTMIN+25",
    "SIGRTMIN+26",
    "SIGRTMIN+27",
    "SIGRTMIN+28",
    "SIGRTMIN+29",
    "SIGRTMIN+30",
    "SIGRTMIN+31",
    "SIGRTMIN+32",
];

/// A registration of the [`handled_signals`] (and the caught-only ones) for as long as it lives.
#[derive(Debug)]
pub struct SignalWatch {
    received: Arc<AtomicUsize>,
    ids: Vec<signal_hook::SigId>,
}

impl SignalWatch {
    /// Starts observing the signals. A failure to register is an error: without the
    /// handlers a Ctrl-C would leave the run's commands running and its files behind.
    pub fn install() -> std::io::Result<SignalWatch> {
        let received = Arc::new(AtomicUsize::new(0));
        let handled = handled_signals();
        let mut ids = Vec::with_capacity(handled.len() + CAUGHT_ONLY.len());
        for signal in handled {
            let value = usize::try_from(signal).unwrap_or(usize::MAX);
            ids.push(signal_hook::flag::register_usize(signal, Arc::clone(&received), value)?);
        }
        // A write past the file size limit (setrlimit(2), RLIMIT_FSIZE) raises SIGXFSZ, and a
        // write to a closed pipe SIGPIPE; both would end the process mid-write. Caught, the
        // write fails with EFBIG or EPIPE instead (signal(7)) and the run takes its ordinary
        // error path, restoring the tree.
        for signal in CAUGHT_ONLY {
            ids.push(signal_hook::flag::register(signal, Arc::new(AtomicBool::new(false)))?);
        }
        Ok(SignalWatch { received, ids })
    }

    /// A watch that never fires (for runs that must not install handlers).
    pub fn inert() -> SignalWatch {
        SignalWatch { received: Arc::new(AtomicUsize::new(0)), ids: Vec::new() }
    }

    /// Acts as if `signal` had been received (when none was yet): every command running under
    /// this watch is stopped at its next poll. For a run that must stop its reviews because
    /// it is itself unwinding from a panic.
    pub fn raise(&self, signal: i32) {
        let value = usize::try_from(signal).unwrap_or(usize::MAX);
        let _ = self.received.compare_exchange(0, value, Ordering::SeqCst, Ordering::SeqCst);
    }

    /// The first signal received since installation, if any.
    pub fn received(&self) -> Option<i32> {
        match self.received.load(Ordering::SeqCst) {
            0 => None,
            value => i32::try_from(value).ok(),
        }
    }
}

impl Drop for SignalWatch {
    fn drop(&mut self) {
        for id in self.ids.drain(..) {
            signal_hook::low_level::unregister(id);
        }
    }
}

/// The conventional name of a handled signal.
pub fn signal_name(signal: i32) -> &'static str {
    match signal {
        libc::SIGINT => "SIGINT",
        libc::SIGTERM => "SIGTERM",
        libc::SIGHUP => "SIGHUP",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGUSR1 => "SIGUSR1",
        libc::SIGUSR2 => "SIGUSR2",
        libc::SIGALRM => "SIGALRM",
        libc::SIGVTALRM => "SIGVTALRM",
        libc::SIGPROF => "SIGPROF",
        libc::SIGXCPU => "SIGXCPU",
        libc::SIGIO => "SIGIO",
        libc::SIGPWR => "SIGPWR",
        libc::SIGSTKFLT => "SIGSTKFLT",
        _ => signal
            .checked_sub(libc::SIGRTMIN())
            .and_then(|offset| usize::try_from(offset).ok())
            .and_then(|offset| REAL_TIME.get(offset).copied())
            .unwrap_or("a signal"),
    }
}
