//! How much of a run happens at once (`--jobs N`): at most N reviews, each in a job slot of
//! its own, and at most N judge questions. One [`Jobs`] may be shared by several runs
//! ([`Calibration::shared_jobs`](crate::Calibration::shared_jobs); revcal-suite shares one
//! by every unit of a suite), so that they run at most N reviews in all. It owns the run
//! directory (the scratch checkouts of the slots), which goes with it.

use crate::error::CalibrateError;
use crate::rundir::RunDir;
use crate::slots::Slot;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Duration;

/// The job slots and judge permits of one run or of several sharing them, and their run
/// directory (removed when the last holder drops it).
#[derive(Debug)]
pub struct Jobs {
    count: usize,
    run_dir: RunDir,
    slots: Mutex<SlotPool>,
    slot_freed: Condvar,
    judge_busy: Mutex<usize>,
    judge_freed: Condvar,
    names: AtomicUsize,
    commands: AtomicUsize,
}

/// The slots not in use, and how many were made.
#[derive(Debug, Default)]
struct SlotPool {
    idle: Vec<(Slot, Option<String>)>,
    made: usize,
}

/// The default number of jobs: the number of cores.
pub(crate) fn default_count() -> usize {
    std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
}

/// Locks `mutex`, also after a thread panicked while holding it (the data is counters and
/// idle slots, valid at every step).
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Jobs {
    /// `count` jobs (at least 1) and a new run directory; `Err` when the directory cannot be
    /// made.
    pub fn new(count: usize) -> Result<Jobs, CalibrateError> {
        Ok(Jobs {
            count: count.max(1),
            run_dir: RunDir::create()?,
            slots: Mutex::new(SlotPool::default()),
            slot_freed: Condvar::new(),
            judge_busy: Mutex::new(0),
            judge_freed: Condvar::new(),
            names: AtomicUsize::new(0),
            commands: AtomicUsize::new(0),
        })
    }

    /// How many reviews (and judge questions) may run at once.
    pub fn count(&self) -> usize {
        self.count
    }

    /// The run directory.
    pub(crate) fn dir(&self) -> &Path {
        self.run_dir.path()
    }

    /// A path in the run directory no one else uses: `PREFIX-N`.
    pub(crate) fn fresh_path(&self, prefix: &str) -> PathBuf {
        let number = self.names.fetch_add(1, Ordering::SeqCst) + 1;
        self.dir().join(format!("{prefix}-{number}"))
    }

    /// A fresh token for one command of the run (a review, a witness, build or repro
    /// command): its processes carry it, so that they can be ended alone, and all of the
    /// run's at once by the run's watchdog should revcal die.
    pub(crate) fn command_token(&self) -> String {
        let number = self.commands.fetch_add(1, Ordering::SeqCst) + 1;
        revcal_process::command_token(self.run_dir.run(), number)
    }

    /// An idle slot, preferring one last prepared with `tag` (its checkout then needs the
    /// least rewriting), or a new one while fewer than `count` exist; `None` when every slot
    /// is in use.
    pub(crate) fn try_slot(&self, tag: &str) -> Option<Slot> {
        let mut pool = lock(&self.slots);
        if let Some(position) = pool.idle.iter().position(|(_, last)| last.as_deref() == Some(tag)) {
            return Some(pool.idle.swap_remove(position).0);
        }
        if let Some((slot, _)) = pool.idle.pop() {
            return Some(slot);
        }
        if pool.made < self.count {
            pool.made += 1;
            return Some(Slot::new(self.dir(), pool.made));
        }
        None
    }

    /// Waits up to `wait` for a slot (see [`Self::try_slot`]).
    pub(crate) fn slot_within(&self, tag: &str, wait: Duration) -> Option<Slot> {
        if let Some(slot) = self.try_slot(tag) {
            return Some(slot);
        }
        let pool = lock(&self.slots);
        drop(self.slot_freed.wait_timeout(pool, wait).unwrap_or_else(std::sync::PoisonError::into_inner));
        self.try_slot(tag)
    }

    /// Gives back a slot whose checkout now holds what `tag` names.
    pub(crate) fn give_back(&self, slot: Slot, tag: Option<String>) {
        lock(&self.slots).idle.push((slot, tag));
        self.slot_freed.notify_all();
    }

    /// Waits for one of the `count` judge permits; it is given back when dropped.
    pub(crate) fn judge_permit(&self) -> JudgePermit<'_> {
        let mut busy = lock(&self.judge_busy);
        while *busy >= self.count {
            busy = self.judge_freed.wait(busy).unwrap_or_else(std::sync::PoisonError::into_inner);
        }
        *busy += 1;
        JudgePermit { jobs: self }
    }
}

/// The right to ask the judge one question.
#[derive(Debug)]
pub(crate) struct JudgePermit<'a> {
    jobs: &'a Jobs,
}

impl Drop for JudgePermit<'_> {
    fn drop(&mut self) {
        let mut busy = lock(&self.jobs.judge_busy);
        *busy = busy.saturating_sub(1);
        self.jobs.judge_freed.notify_one();
    }
}
