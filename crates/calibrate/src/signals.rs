//! Termination signals observed, never acted on asynchronously: while files are planted,
//! SIGINT, SIGTERM and SIGHUP only set a flag, and the run notices it at its next poll,
//! kills the reviewer's process group and restores the tree on the ordinary return path.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// The signals that end a calibration early (and are handled so that files are restored).
pub(crate) const HANDLED: [i32; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// A registration of [`HANDLED`] signals for as long as it lives.
#[derive(Debug)]
pub(crate) struct SignalWatch {
    received: Arc<AtomicUsize>,
    ids: Vec<signal_hook::SigId>,
}

impl SignalWatch {
    /// Starts observing the signals. A failure to register is an error: without the
    /// handlers a Ctrl-C would leave planted bugs in the tree.
    pub(crate) fn install() -> std::io::Result<SignalWatch> {
        let received = Arc::new(AtomicUsize::new(0));
        let mut ids = Vec::with_capacity(HANDLED.len());
        for signal in HANDLED {
            let value = usize::try_from(signal).unwrap_or(usize::MAX);
            ids.push(signal_hook::flag::register_usize(signal, Arc::clone(&received), value)?);
        }
        // A write past the file size limit (setrlimit(2), RLIMIT_FSIZE) raises SIGXFSZ, whose
        // default action ends the process mid-write; handled, the write fails with EFBIG
        // instead (signal(7)) and the run takes its ordinary error path, restoring the tree.
        ids.push(signal_hook::flag::register(libc::SIGXFSZ, Arc::new(AtomicBool::new(false)))?);
        Ok(SignalWatch { received, ids })
    }

    /// A watch that never fires (for runs that must not install handlers).
    pub(crate) fn inert() -> SignalWatch {
        SignalWatch { received: Arc::new(AtomicUsize::new(0)), ids: Vec::new() }
    }

    /// The first signal received since installation, if any.
    pub(crate) fn received(&self) -> Option<i32> {
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
pub(crate) fn name(signal: i32) -> &'static str {
    match signal {
        libc::SIGINT => "SIGINT",
        libc::SIGTERM => "SIGTERM",
        libc::SIGHUP => "SIGHUP",
        _ => "a signal",
    }
}
