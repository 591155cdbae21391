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
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

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
    /// How each repository's slots are used, by its key.
    usage: BTreeMap<String, Usage>,
}

/// How the slots of one repository are used by every run sharing the jobs.
#[derive(Debug, Default)]
struct Usage {
    /// Slots taken and not given back.
    in_use: usize,
    /// Checkouts being prepared now.
    preparing: usize,
    /// The longest a preparation of one of its checkouts took so far.
    costliest: Option<Duration>,
    /// When the last preparation of one of its checkouts ended.
    last_prepared: Option<Instant>,
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
        let slot = self.take_from(&mut pool, repository, tag, make)?;
        if slot.is_some() {
            // A slot taken is prepared next: under way from now (see `Self::preparation`).
            let usage = pool.usage.entry(repository.to_owned()).or_default();
            usage.in_use += 1;
            usage.preparing += 1;
        }
        Ok(slot)
    }

    fn take_from(
        &self,
        pool: &mut SlotPool,
        repository: &str,
        tag: &str,
        make: bool,
    ) -> Result<Option<Slot>, CalibrateError> {
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
        let slot = self.make_slot(pool, repository)?;
        pool.made += 1;
        tracing::debug!(repository, slots = pool.made, "a new job slot");
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

    /// A slot for a run none of whose reviews runs now, or `None` after waiting up to `step`
    /// (the caller looks at signals and asks again, with the same `since`, the moment it
    /// first asked). An idle slot of `repository` comes at once, and a new one while no slot
    /// of it is in use. While other runs sharing these jobs use its slots, a new checkout
    /// would cost a preparation, so this waits for one of theirs to come back, but no longer
    /// than the costliest preparation of the repository so far (counted from `since`, or from
    /// the end of the last preparation when that is later; while none has ended, as long as
    /// one is under way): units of a suite with a fast reviewer then share one slot, and with
    /// a slow one each opens its own at most one preparation after the slot it waited for
    /// began its review.
    pub(crate) fn slot_within(
        &self,
        repository: &str,
        tag: &str,
        since: Instant,
        step: Duration,
    ) -> Result<Option<Slot>, CalibrateError> {
        if let Some(slot) = self.take_slot(repository, tag, self.may_open(repository, since))? {
            return Ok(Some(slot));
        }
        let pool = lock(&self.slots);
        drop(self.slot_freed.wait_timeout(pool, step).unwrap_or_else(std::sync::PoisonError::into_inner));
        self.take_slot(repository, tag, self.may_open(repository, since))
    }

    /// Whether a run that has waited since `since` for a slot of `repository` may open a new
    /// one (see [`Self::slot_within`]).
    fn may_open(&self, repository: &str, since: Instant) -> bool {
        let pool = lock(&self.slots);
        let Some(usage) = pool.usage.get(repository) else { return true };
        // Time spent waiting while a checkout was prepared does not count: that slot was not
        // reviewing yet, and with a fast reviewer it comes back a moment after.
        let since = usage.last_prepared.map_or(since, |prepared| prepared.max(since));
        usage.in_use == 0
            || match usage.costliest {
                Some(costliest) => since.elapsed() >= costliest,
                None => usage.preparing == 0,
            }
    }

    /// The longest a preparation of a checkout of `repository` took so far, by any run
    /// sharing these jobs (zero before one ended): what waiting for a busy slot may cost
    /// before a new one is worth opening.
    pub(crate) fn costliest_preparation(&self, repository: &str) -> Duration {
        lock(&self.slots).usage.get(repository).and_then(|usage| usage.costliest).unwrap_or_default()
    }

    /// The preparation of the checkout of a slot of `repository` just taken: under way since
    /// it was taken, until the guard is dropped; [`Preparation::done`] records how long it
    /// took. Every slot taken gets one at once.
    pub(crate) fn preparation(&self, repository: &str) -> Preparation<'_> {
        Preparation { jobs: self, repository: repository.to_owned(), started: Instant::now() }
    }

    /// Records that a preparation of a checkout of `repository` took `took`.
    fn record_preparation(&self, repository: &str, took: Duration) {
        let mut pool = lock(&self.slots);
        let usage = pool.usage.entry(repository.to_owned()).or_default();
        usage.costliest = Some(usage.costliest.map_or(took, |costliest| costliest.max(took)));
        usage.last_prepared = Some(Instant::now());
    }

    /// Gives back a slot of `repository` whose checkout now holds what `tag` names.
    pub(crate) fn give_back(&self, slot: Slot, repository: &str, tag: Option<String>) {
        let mut pool = lock(&self.slots);
        if let Some(usage) = pool.usage.get_mut(repository) {
            usage.in_use = usage.in_use.saturating_sub(1);
        }
        pool.idle.push(Idle { slot, repository: repository.to_owned(), tag });
        drop(pool);
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

/// A preparation of a checkout under way (see [`Jobs::preparation`]); it ends when dropped,
/// also when the preparation failed or its thread unwinds.
#[derive(Debug)]
pub(crate) struct Preparation<'a> {
    jobs: &'a Jobs,
    repository: String,
    started: Instant,
}

impl Preparation<'_> {
    /// The preparation succeeded: its time counts towards the costliest one.
    pub(crate) fn done(self) {
        self.jobs.record_preparation(&self.repository, self.started.elapsed());
    }
}

impl Drop for Preparation<'_> {
    fn drop(&mut self) {
        let mut pool = lock(&self.jobs.slots);
        if let Some(usage) = pool.usage.get_mut(&self.repository) {
            usage.preparing = usage.preparing.saturating_sub(1);
        }
        drop(pool);
        // Runs waiting for a slot look again: the wait they may afford is known now.
        self.jobs.slot_freed.notify_all();
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

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: Duration = Duration::ZERO;

    #[test]
    fn a_run_waits_for_a_busy_slot_up_to_the_costliest_preparation_then_opens_its_own() {
        let jobs = Jobs::new(2).unwrap();
        let first =
            jobs.slot_within("repo", "a", Instant::now(), NOW).unwrap().expect("no slot in use: a new one");
        let preparing = jobs.preparation("repo");
        // While the first checkout is prepared and no preparation has ended, a second run waits.
        assert!(jobs.slot_within("repo", "a", Instant::now(), NOW).unwrap().is_none());
        // Another repository's slots are another matter.
        let other = jobs.slot_within("other", "a", Instant::now(), NOW).unwrap().expect("its own slot");
        drop(jobs.preparation("other"));
        jobs.give_back(other, "other", None);
        drop(preparing);
        jobs.record_preparation("repo", Duration::from_secs(3600));
        // Waited less than the costliest preparation: it keeps waiting for the busy slot ...
        assert!(jobs.slot_within("repo", "a", Instant::now(), NOW).unwrap().is_none());
        // ... also when it asked long ago: the wait counts from the end of the last preparation.
        let long_ago =
            Instant::now().checked_sub(Duration::from_secs(7200)).expect("the clock reaches back 2 h");
        assert!(jobs.slot_within("repo", "a", long_ago, NOW).unwrap().is_none());
        // Once that preparation is as far back as the costliest one, it opens a slot of its own.
        lock(&jobs.slots).usage.get_mut("repo").unwrap().last_prepared = Some(long_ago);
        let second = jobs.slot_within("repo", "a", long_ago, NOW).unwrap().expect("waited long enough");
        drop(jobs.preparation("repo"));
        assert_eq!(jobs.costliest_preparation("repo"), Duration::from_secs(3600));
        // A slot given back is taken at once, however short the wait.
        jobs.give_back(first, "repo", Some("a".into()));
        let again = jobs.slot_within("repo", "a", Instant::now(), NOW).unwrap().expect("the idle slot");
        drop(jobs.preparation("repo"));
        jobs.give_back(again, "repo", None);
        jobs.give_back(second, "repo", None);
    }

    #[test]
    fn a_failed_preparation_does_not_hold_other_runs_back() {
        let jobs = Jobs::new(2).unwrap();
        let first = jobs.slot_within("repo", "a", Instant::now(), NOW).unwrap().unwrap();
        let preparing = jobs.preparation("repo");
        assert!(jobs.slot_within("repo", "a", Instant::now(), NOW).unwrap().is_none());
        // It failed (or its thread unwound) without giving the slot back: no preparation is
        // under way, none has ended, so nothing is worth waiting for.
        drop(preparing);
        let second = jobs.slot_within("repo", "a", Instant::now(), NOW).unwrap();
        assert!(second.is_some(), "a new slot");
        drop(first);
    }
}
