//! Running every review of a calibration (each round of plants, each trial) at once, up to
//! the run's jobs, each in a job slot's checkout of the commit with that round's plants.
//!
//! The checkouts are prepared on the calling thread, one after the other (they read the
//! commit's objects); the reviewers run on threads of their own. Results come back in the
//! order of the reviews, whatever order they finished in, so that the report is the same for
//! every number of jobs.
//!
//! A slot already in use is brought to the next round by writing what differs, a new one
//! (or one kept from an earlier run) by writing or checking every file, which on a big
//! repository costs far more than a quick review. So when no slot is idle the loop waits for
//! a running review to end before it opens another slot, but no longer than the costliest
//! preparation of the repository so far: with fast reviewers the run stays in the slots it
//! has (a second full checkout of babel/babel is seconds, a review of `echo` milliseconds),
//! with slow ones each further slot opens at most that much later, and the reviews run
//! `--jobs` at once as before. The rule holds across the runs sharing one [`Jobs`] (the
//! units of a suite, [`Jobs::slot_within`]): a unit that starts while another uses the
//! repository's slots waits for one the same way. Which slot a review runs in changes nothing
//! in its report.

use crate::error::CalibrateError;
use crate::jobs::Jobs;
use crate::reviewer::{self, ReviewRun};
use crate::tree::CommitTree;
use revcal_process::SignalWatch;
use std::sync::Arc;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// One review to run.
#[derive(Debug, Clone)]
pub(crate) struct Review {
    /// What this review's checkout holds.
    pub(crate) round: Arc<crate::slots::Round>,
    /// What names `round` (reviews with the same tag have the same checkout).
    pub(crate) tag: String,
    /// Which trial (from 1).
    pub(crate) trial: usize,
}

/// An in-process reviewer, and the base each of its reviews is told.
#[derive(Clone, Copy)]
pub(crate) struct InProcess<'a> {
    pub(crate) reviewer: &'a dyn crate::in_process::InProcessReviewer,
    pub(crate) base: &'a str,
}

/// How every review runs.
pub(crate) struct Settings<'a> {
    /// The shell command (`{base}` already substituted, its program resolved).
    pub(crate) command: &'a str,
    /// Exit codes that mean the reviewer finished.
    pub(crate) ok_codes: &'a [i32],
    /// The reviewer's process group is killed after this.
    pub(crate) timeout: Duration,
    /// Bytes of stdout kept.
    pub(crate) output_cap: usize,
    /// Environment variables every review gets (besides its token, its commit, `PWD`,
    /// `TMPDIR` and its slot's build and cache directories).
    pub(crate) env: &'a [(&'static str, String)],
    /// Variables of revcal's environment the reviewer does not get ([`crate::reach`]).
    pub(crate) withheld: &'a [String],
    /// The key of the repository whose commit the reviews check out (its slots are its own).
    pub(crate) repository: &'a str,
    /// A reviewer run inside revcal instead of `command`.
    pub(crate) in_process: Option<InProcess<'a>>,
    /// Fault injection: panic once the first review runs.
    pub(crate) panic_during_review: bool,
}

/// Progress of the reviews.
pub(crate) trait Observer: Sync {
    /// `running` reviews run and `finished` of `total` are done.
    fn reviews(&self, running: usize, finished: usize, total: usize);
}

/// What a review thread sends back: the review's index, its slot and how it went.
type Done = (usize, crate::slots::Slot, Result<ReviewRun, CalibrateError>);

/// Runs `reviews` of `tree`'s commit through `jobs`; the runs in the order of `reviews`. The
/// first error (in that order) stops the reviews not yet started; a signal stops them all.
pub(crate) fn run_all(
    jobs: &Jobs,
    tree: &CommitTree,
    reviews: &[Review],
    settings: &Settings<'_>,
    signals: &SignalWatch,
    observer: &dyn Observer,
) -> Result<Vec<ReviewRun>, CalibrateError> {
    let total = reviews.len();
    let mut tally =
        Tally { results: (0..total).map(|_| None).collect(), running: 0, finished: 0, stopped: false };
    // Descendants of a reviewer that left its process group stay revcal's descendants while
    // the reviews run, so that each review's leftovers can be ended before its slot is reused.
    let subreaper = revcal_process::Subreaper::start();
    std::thread::scope(|scope| {
        // Should this thread unwind (a panic), every review still running is stopped, so that
        // the scope can end and the run directory be removed.
        let _stop = StopOnPanic(signals);
        let (sender, receiver) = mpsc::channel::<Done>();
        let mut next = 0usize;
        loop {
            while !tally.stopped && next < total && signals.received().is_none() {
                let review = &reviews[next];
                let slot = if tally.running == 0 {
                    let since = Instant::now();
                    loop {
                        let step = Duration::from_millis(100);
                        match jobs.slot_within(settings.repository, &review.tag, since, step) {
                            Ok(Some(slot)) => break Ok(Some(slot)),
                            Ok(None) if signals.received().is_some() => break Ok(None),
                            Ok(None) => {}
                            Err(error) => break Err(error),
                        }
                    }
                } else {
                    match jobs.idle_slot(settings.repository, &review.tag) {
                        Ok(None) => {
                            // What waiting for a busy slot may cost before a new one is opened.
                            let budget = jobs.costliest_preparation(settings.repository);
                            match receiver.recv_timeout(budget) {
                                // A slot came free sooner than a new one would be ready.
                                Ok(done) => {
                                    tally.finish(done, reviews, jobs, settings, observer);
                                    continue;
                                }
                                Err(_) => jobs.try_slot(settings.repository, &review.tag),
                            }
                        }
                        other => other,
                    }
                };
                let mut slot = match slot {
                    Ok(Some(slot)) => slot,
                    Ok(None) => break,
                    Err(error) => {
                        tally.results[next] = Some(Err(error));
                        tally.stopped = true;
                        break;
                    }
                };
                let preparing = jobs.preparation(settings.repository);
                if let Err(error) = slot.prepare(tree, &review.round) {
                    drop(preparing);
                    jobs.give_back(slot, settings.repository, None);
                    tally.results[next] = Some(Err(error));
                    tally.stopped = true;
                    break;
                }
                preparing.done();
                let index = next;
                let trial = review.trial;
                let head = review.round.git.head.to_string();
                let sender = sender.clone();
                scope.spawn(move || {
                    // A panic is sent back as an error first, so that this loop never waits
                    // for a result that will not come; the scope then re-raises it.
                    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        match settings.in_process {
                            Some(in_process) => run_in_process(&slot, in_process, &head, trial),
                            None => run_one(jobs, &slot, settings, &head, signals),
                        }
                    }));
                    match outcome {
                        Ok(outcome) => {
                            let _ = sender.send((index, slot, outcome));
                        }
                        Err(panic) => {
                            let failed = CalibrateError::io(
                                "run a review in",
                                slot.tree(),
                                std::io::Error::other("the thread running it panicked"),
                            );
                            let _ = sender.send((index, slot, Err(failed)));
                            std::panic::resume_unwind(panic);
                        }
                    }
                });
                next += 1;
                tally.running += 1;
                observer.reviews(tally.running, tally.finished, total);
                if settings.panic_during_review {
                    panic!("injected panic while a review runs (REVCAL_TEST_PANIC_DURING_REVIEW)");
                }
            }
            if tally.running == 0 {
                break;
            }
            let Ok(done) = receiver.recv() else { break };
            tally.finish(done, reviews, jobs, settings, observer);
        }
    });
    drop(subreaper);
    if let Some(signal) = signals.received() {
        return Err(CalibrateError::Interrupted { signal, name: revcal_process::signal_name(signal) });
    }
    let mut runs = Vec::with_capacity(total);
    for result in tally.results {
        match result {
            Some(Ok(run)) => runs.push(run),
            Some(Err(error)) => return Err(error),
            // Not started: an earlier review failed (and its error came first).
            None => break,
        }
    }
    if runs.len() < total {
        // Only a signal stops reviews without an error, and that returned above.
        return Err(CalibrateError::io(
            "run every review in",
            jobs.dir(),
            std::io::Error::other("a review ended without a result"),
        ));
    }
    Ok(runs)
}

/// The reviews' results so far, and how many run and are done.
struct Tally {
    results: Vec<Option<Result<ReviewRun, CalibrateError>>>,
    running: usize,
    finished: usize,
    /// An error came: no further review starts.
    stopped: bool,
}

impl Tally {
    /// Takes in a review that ended: its slot put away (it keeps nothing that tells its round
    /// from another's) and given back, its result kept.
    fn finish(
        &mut self,
        done: Done,
        reviews: &[Review],
        jobs: &Jobs,
        settings: &Settings<'_>,
        observer: &dyn Observer,
    ) {
        let (index, mut slot, outcome) = done;
        self.running -= 1;
        self.finished += 1;
        let tag = match slot.put_away(&reviews[index].round) {
            Ok(()) => Some(reviews[index].tag.clone()),
            Err(error) => {
                tracing::warn!("{error}; the slot is swept before its next review");
                None
            }
        };
        jobs.give_back(slot, settings.repository, tag);
        if outcome.is_err() {
            self.stopped = true;
        }
        self.results[index] = Some(outcome);
        observer.reviews(self.running, self.finished, self.results.len());
    }
}

/// One review in `slot`: the reviewer with this review's token, then every process it left
/// behind ended (also those that left its process group), before the slot is reused.
fn run_one(
    jobs: &Jobs,
    slot: &crate::slots::Slot,
    settings: &Settings<'_>,
    head: &str,
    signals: &SignalWatch,
) -> Result<ReviewRun, CalibrateError> {
    let token = jobs.command_token();
    let checkout = slot.tree();
    let mut env: Vec<(&str, String)> =
        settings.env.iter().map(|(key, value)| (*key, value.clone())).collect();
    env.push(("REVCAL_COMMIT", head.to_owned()));
    env.push((revcal_process::RUN_TOKEN_VARIABLE, token.clone()));
    // Its working directory, never one inherited from revcal (the user's repository, say).
    env.push(("PWD", checkout.display().to_string()));
    env.push(("TMPDIR", slot.tmp().display().to_string()));
    // The slot's own build and cache directories, whatever the user's environment says:
    // slots build at once, and planted code is no build of the user's. Cargo's target
    // directory and the caches keyed by content are kept from review to review; what judges
    // freshness by the second goes in the temporary directory, emptied before each review.
    let caches = slot.caches();
    std::fs::create_dir_all(&caches).map_err(|e| CalibrateError::io("create", &caches, e))?;
    env.push(("CARGO_TARGET_DIR", slot.target_dir().display().to_string()));
    env.extend(crate::reach::reviewer_cache_env(&caches));
    env.extend(crate::reach::fresh_output_env(&slot.tmp().join("build")));
    let outcome = reviewer::run_reviewer(
        settings.command,
        settings.ok_codes,
        &checkout,
        settings.timeout,
        settings.output_cap,
        &env,
        settings.withheld,
        signals,
    );
    revcal_process::end_descendants(&token);
    tracing::debug!(slot = slot.number(), ok = outcome.is_ok(), "review finished");
    outcome
}

/// One review in `slot` by an in-process reviewer: its answer is the review's output, as a
/// command's standard output would be.
fn run_in_process(
    slot: &crate::slots::Slot,
    in_process: InProcess<'_>,
    head: &str,
    trial: usize,
) -> Result<ReviewRun, CalibrateError> {
    let started = std::time::Instant::now();
    let checkout = slot.tree();
    let request =
        crate::in_process::ReviewRequest { checkout: &checkout, base: in_process.base, commit: head, trial };
    let output = in_process.reviewer.review(&request).map_err(|message| CalibrateError::InProcessReview {
        reviewer: in_process.reviewer.name(),
        message,
    })?;
    tracing::debug!(slot = slot.number(), "in-process review finished");
    Ok(ReviewRun {
        exit_code: 0,
        output,
        truncated: false,
        stderr_tail: String::new(),
        elapsed: started.elapsed(),
        checkout,
    })
}

/// Raises a stop on the watch when dropped during a panic.
struct StopOnPanic<'a>(&'a SignalWatch);

impl Drop for StopOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.raise(libc::SIGABRT);
        }
    }
}
