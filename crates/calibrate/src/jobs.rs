//! How much of a run happens at once (`--jobs N`): at most N reviews, each in a job slot of
//! its own, and at most N judge questions. One [`Jobs`] may be shared by several runs
//! ([`Calibration::shared_jobs`](crate::Calibration::shared_jobs); revcal-suite shares one
//! by every unit of a suite), so that they run at most N reviews in all. It owns the run
//! directory, which goes with it, and the job slots: in the run directory, or, with a
//! [`CheckoutCache`], kept between runs per repository.

use crate::cache::CheckoutCache;
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
    cache: Option<CheckoutCache>,
}

/// A slot not in use: the repository it checks out (its key) and what its checkout holds.
#[derive(Debug)]
struct Idle {
    slot: Slot,
    repository: String,
    tag: Option<String>,
}

/// The slots not in use, how many exist, and the repositories whose cache was pruned.
#[derive(Debug, Default)]
struct SlotPool {
    idle: Vec<Idle>,
    made: usize,
    /// Slots of the run directory made so far (their numbers).
    fresh: usize,
    pruned: Vec<String>,
}

/// The most kept slots of one repository the runs at once may hold.
const MAX_KEPT_SLOTS: usize = 256;

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
            cache: None,
        })
    }

    /// The same jobs, with their slots kept between runs in `cache` (per repository), so
    /// that a run writes only what differs from what an earlier one left. Without it, slots
    /// live in the run directory and go with it.
    pub fn with_checkout_cache(mut self, cache: CheckoutCache) -> Jobs {
        self.cache = Some(cache);
        self
    }

    /// The checkout cache the slots are kept in, if any.
    pub fn checkout_cache(&self) -> Option<&CheckoutCache> {
        self.cache.as_ref()
    }

    /// Where the object store shared by the checkouts `id` names lives (see
    /// [`crate::review_commit`]), and whether an earlier run wrote it whole: in the checkout
    /// cache when there is one, else in the run directory.
    pub(crate) fn object_store(&self, repository: &str, id: &str) -> Result<(PathBuf, bool), CalibrateError> {
        match &self.cache {
            Some(cache) => Ok(crate::cache::pack_dir(&cache.repository(repository)?, id)),
            None => Ok((self.fresh_path("objects").join("objects"), false)),
        }
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

    /// An idle slot of `repository` (its key), preferring one last prepared with `tag` (its
    /// checkout then needs the least rewriting), or a new one while fewer than `count` exist
    /// (in the checkout cache, the first slot of the repository no other run holds; an idle
    /// slot of another repository is given up for it when all exist); `None` when every slot
    /// is in use.
    pub(crate) fn try_slot(&self, repository: &str, tag: &str) -> Result<Option<Slot>, CalibrateError> {
        self.take_slot(repository, tag, true)
    }

    /// An idle slot of `repository` (see [`Self::try_slot`]), never a new one: `None` when
    /// none is idle.
    pub(crate) fn idle_slot(&self, repository: &str, tag: &str) -> Result<Option<Slot>, CalibrateError> {
        self.take_slot(repository, tag, false)
    }

    fn take_slot(&self, repository: &str, tag: &str, make: bool) -> Result<Option<Slot>, CalibrateError> {
        let mut pool = lock(&self.slots);
        let mine = |idle: &Idle| idle.repository == repository;
        if let Some(position) =
            pool.idle.iter().position(|idle| mine(idle) && idle.tag.as_deref() == Some(tag))
        {
            return Ok(Some(pool.idle.swap_remove(position).slot));
        }
        if let Some(position) = pool.idle.iter().position(mine) {
            return Ok(Some(pool.idle.swap_remove(position).slot));
        }
        if !make {
            return Ok(None);
        }
        if pool.made >= self.count {
            // Every slot exists: one of another repository makes room (its manifest saved).
            if pool.idle.is_empty() {
                return Ok(None);
            }
            drop(pool.idle.remove(0));
            pool.made -= 1;
        }
        let slot = self.make_slot(&mut pool, repository)?;
        pool.made += 1;
        Ok(Some(slot))
    }

    /// A new slot of `repository`: the first of its slots in the checkout cache no run holds
    /// (the cache pruned to its bound the first time), or the next one of the run directory.
    fn make_slot(&self, pool: &mut SlotPool, repository: &str) -> Result<Slot, CalibrateError> {
        let Some(cache) = &self.cache else {
            pool.fresh += 1;
            return Ok(Slot::new(self.dir(), pool.fresh));
        };
        let home = cache.repository(repository)?;
        if !pool.pruned.iter().any(|key| key == repository) {
            cache.prune(repository);
            pool.pruned.push(repository.to_owned());
        }
        // Slots this run holds are locked too: the first free number is another's or new.
        for number in 1..=MAX_KEPT_SLOTS {
            if let Some(slot) = Slot::kept(&home, number)? {
                return Ok(slot);
            }
        }
        pool.fresh += 1;
        tracing::warn!(dir = %home.display(), "every kept slot of the repository is held by other runs: this run's slot is thrown away at its end");
        Ok(Slot::new(self.dir(), pool.fresh))
    }

    /// Waits up to `wait` for a slot (see [`Self::try_slot`]).
    pub(crate) fn slot_within(
        &self,
        repository: &str,
        tag: &str,
        wait: Duration,
    ) -> Result<Option<Slot>, CalibrateError> {
        if let Some(slot) = self.try_slot(repository, tag)? {
            return Ok(Some(slot));
        }
        let pool = lock(&self.slots);
        drop(self.slot_freed.wait_timeout(pool, wait).unwrap_or_else(std::sync::PoisonError::into_inner));
        self.try_slot(repository, tag)
    }

    /// Gives back a slot of `repository` whose checkout now holds what `tag` names.
    pub(crate) fn give_back(&self, slot: Slot, repository: &str, tag: Option<String>) {
        lock(&self.slots).idle.push(Idle { slot, repository: repository.to_owned(), tag });
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
