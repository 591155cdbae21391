//! Verifying the candidates on `jobs` threads, newest first, and deciding when to stop: once
//! `max_bugs` are kept, once the tests already fail at the fix of [`BROKEN_IN_A_ROW`]
//! candidates in a row (the test command does not work on this history), or on a signal (the
//! verdicts reached before it are kept, and reported with the stop). A stop ends the
//! verifications under way at once: their processes are ended through their workspaces' run
//! tokens, whatever process group or session they moved to.
//!
//! The threads report to the calling thread, which alone calls `progress`: each candidate's
//! verdict, and each phase that has run for a second ([`ANNOUNCE_AFTER`]), so that a long
//! test run is never silent and quick phases do not flood the output.

use super::history::Candidate;
use super::verify::{self, Abort, Control, Phase};
use super::{BROKEN_IN_A_ROW, Bug, BugsError, MineEvent, RejectReason, Stop};
use revcal_process as process;
use revcal_process::SignalWatch;
use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// A phase is announced once it has run this long.
const ANNOUNCE_AFTER: Duration = Duration::from_secs(1);

/// How often the calling thread looks at the phases under way (and, while stopping, ends the
/// processes still running).
const TICK: Duration = Duration::from_millis(100);

/// What to verify, and when to stop.
pub(crate) struct Plan<'a> {
    /// Newest first.
    pub(crate) candidates: &'a [Candidate],
    /// Shared by every verification.
    pub(crate) settings: &'a verify::Settings<'a>,
    /// Verifications at once.
    pub(crate) jobs: usize,
    /// Stop once this many bugs are kept.
    pub(crate) max_bugs: Option<usize>,
    /// Never stop for tests that fail at the fix.
    pub(crate) keep_going: bool,
}

/// Each candidate's result in its position (`None`: not verified), and how mining ended.
pub(crate) struct Outcome {
    pub(crate) results: Vec<Option<Result<Bug, RejectReason>>>,
    /// Candidates under way when mining stopped.
    pub(crate) cut_short: usize,
    pub(crate) stopped: Option<Stop>,
}

/// What a verifying thread tells the calling thread.
enum Message {
    /// Candidate `index` began `phase` at `at`.
    Phase { index: usize, phase: Phase, at: Instant },
    /// Candidate `index` ended at `at`, after `elapsed`.
    Done {
        index: usize,
        result: Result<Result<Bug, RejectReason>, BugsError>,
        elapsed: Duration,
        at: Instant,
    },
}

/// Counts the candidates in a row (in the order their verdicts arrive) whose tests already
/// fail at the fix. A candidate whose tests ran and told something else (kept, no flip,
/// flaky) breaks the series; one rejected before its tests could tell (the reversal, the
/// build, a timeout) neither counts nor breaks it.
#[derive(Debug, Default)]
struct BrokenSeries {
    in_a_row: usize,
    first_example: Option<String>,
}

impl BrokenSeries {
    fn observe(&mut self, outcome: &Result<Bug, RejectReason>) {
        match outcome {
            Err(RejectReason::TestsFailAtFix { example, .. }) => {
                self.in_a_row += 1;
                self.first_example.get_or_insert_with(|| example.clone());
            }
            Ok(_)
            | Err(
                RejectReason::NoTestFlips { .. }
                | RejectReason::Flaky { .. }
                | RejectReason::NotAtTarget { .. },
            ) => {
                *self = BrokenSeries::default();
            }
            Err(_) => {}
        }
    }
}

/// The phase each candidate under way is in, until it is announced.
#[derive(Default)]
struct Announcer {
    pending: BTreeMap<usize, (Phase, Instant)>,
}

impl Announcer {
    /// Candidate `index` began `phase` at `at` (or, with `None`, ended then): the phase it
    /// leaves is announced if it ran long enough unannounced. Returns the phase to announce.
    fn next(&mut self, index: usize, phase: Option<Phase>, at: Instant) -> Option<Phase> {
        let left = match phase {
            Some(phase) => self.pending.insert(index, (phase, at)),
            None => self.pending.remove(&index),
        };
        left.and_then(|(left, since)| (at.saturating_duration_since(since) >= ANNOUNCE_AFTER).then_some(left))
    }

    /// The phases that have now run long enough, each announced once.
    fn due(&mut self, now: Instant) -> Vec<(usize, Phase)> {
        let due: Vec<(usize, Phase)> = self
            .pending
            .iter()
            .filter(|(_, (_, since))| now.saturating_duration_since(*since) >= ANNOUNCE_AFTER)
            .map(|(index, (phase, _))| (*index, *phase))
            .collect();
        for (index, _) in &due {
            self.pending.remove(index);
        }
        due
    }
}

/// Verifies `plan`'s candidates; see the [module documentation](self).
pub(crate) fn verify_all(
    plan: &Plan<'_>,
    signals: &SignalWatch,
    progress: &mut dyn FnMut(MineEvent),
) -> Result<Outcome, BugsError> {
    let candidates = plan.candidates;
    let total = candidates.len();
    let jobs = plan.jobs.min(total);
    // One token per thread: ending one verification's processes leaves the others' alone.
    // All are made from one run token, which the watchdog looks for should revcal die with
    // tests still running (SIGKILL ends no test itself).
    let run = process::run_token();
    let tokens: Vec<String> = (0..jobs).map(|thread| process::command_token(&run, thread)).collect();
    let watchdog = process::Watchdog::start(&run).map_err(|cause| BugsError::Io {
        what: "start the watchdog of the tests' processes".into(),
        cause,
    })?;
    // Descendants whose parent exits are re-parented to revcal, and so reaped by it.
    let subreaper = process::Subreaper::start();
    let next = Mutex::new(0usize);
    let stop = AtomicBool::new(false);
    let (sender, receiver) = mpsc::channel::<Message>();
    let mut results: Vec<Option<Result<Bug, RejectReason>>> = vec![None; total];
    let mut failure = None;
    let mut stopped = None;
    std::thread::scope(|scope| {
        for token in &tokens {
            let sender = sender.clone();
            let (next, stop) = (&next, &stop);
            scope.spawn(move || verify_some(plan, token, next, stop, signals, &sender));
        }
        drop(sender);
        let mut announcer = Announcer::default();
        let mut series = BrokenSeries::default();
        let (mut done, mut kept) = (0usize, 0usize);
        let announce = |progress: &mut dyn FnMut(MineEvent), index: usize, phase: Phase| {
            progress(MineEvent::Phase {
                number: index + 1,
                total,
                fix_commit: candidates[index].id.clone(),
                phase,
            });
        };
        loop {
            let message = receiver.recv_timeout(TICK);
            let stopping = stop.load(Ordering::SeqCst);
            match message {
                Ok(Message::Phase { index, phase, at }) if !stopping => {
                    if let Some(left) = announcer.next(index, Some(phase), at) {
                        announce(progress, index, left);
                    }
                }
                Ok(Message::Phase { .. }) => {}
                Ok(Message::Done { index, result, elapsed, at }) => {
                    if let Some(left) = announcer.next(index, None, at).filter(|_| !stopping) {
                        announce(progress, index, left);
                    }
                    let outcome = match result {
                        Ok(outcome) => outcome,
                        // Ended by the signal: the stop below says so.
                        Err(BugsError::Interrupted { .. }) => {
                            stop.store(true, Ordering::SeqCst);
                            continue;
                        }
                        Err(error) => {
                            failure.get_or_insert(error);
                            stop.store(true, Ordering::SeqCst);
                            continue;
                        }
                    };
                    // After a stop, what was under way is not counted: `max` bugs exactly.
                    if stopping {
                        continue;
                    }
                    done += 1;
                    series.observe(&outcome);
                    kept += usize::from(outcome.is_ok());
                    progress(MineEvent::Checked {
                        done,
                        total,
                        fix_commit: candidates[index].id.clone(),
                        subject: candidates[index].subject.clone(),
                        rejected: outcome.as_ref().err().cloned(),
                        elapsed,
                    });
                    results[index] = Some(outcome);
                    let reason = if plan.max_bugs.is_some_and(|max| kept >= max) {
                        Some(Stop::MaxReached { bugs: kept })
                    } else if !plan.keep_going && series.in_a_row >= BROKEN_IN_A_ROW {
                        let example = series.first_example.clone().unwrap_or_default();
                        Some(Stop::TestsFailAtFix { in_a_row: series.in_a_row, example })
                    } else {
                        None
                    };
                    let picked = next.lock().map_or(total, |next| *next);
                    // Nothing left to stop when every candidate has its verdict.
                    if let Some(reason) = reason.filter(|_| done < total) {
                        stop.store(true, Ordering::SeqCst);
                        progress(MineEvent::Stopped { stop: reason.clone(), in_flight: picked - done });
                        stopped = Some(reason);
                    }
                }
                Err(mpsc::RecvTimeoutError::Timeout) if !stopping => {
                    for (index, phase) in announcer.due(Instant::now()) {
                        announce(progress, index, phase);
                    }
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
            if let Some(signal) = signals.received()
                && stopped.is_none()
            {
                let reason = Stop::Signal { signal, name: process::signal_name(signal) };
                stop.store(true, Ordering::SeqCst);
                let picked = next.lock().map_or(total, |next| *next);
                progress(MineEvent::Stopped { stop: reason.clone(), in_flight: picked.saturating_sub(done) });
                stopped = Some(reason);
            }
            if stop.load(Ordering::SeqCst) {
                // The threads see the stop after their current command; end it now, and any
                // command one of them started just before it saw the stop.
                for token in &tokens {
                    process::end_descendants(token);
                }
            }
        }
    });
    for token in &tokens {
        process::end_descendants(token);
    }
    drop(subreaper);
    drop(watchdog);
    // A signal that came as the last verdicts did (after the loop's last look) stops too.
    if let Some(signal) = signals.received()
        && stopped.is_none()
    {
        stopped = Some(Stop::Signal { signal, name: process::signal_name(signal) });
    }
    if let Some(error) = failure {
        return Err(error);
    }
    let picked = next.lock().map_or(total, |next| *next);
    let cut_short = (0..picked).filter(|index| results[*index].is_none()).count();
    Ok(Outcome { results, cut_short, stopped })
}

/// One verifying thread: takes the next candidate until none is left or mining stops, in a
/// scratch clone of its own made on first use.
fn verify_some(
    plan: &Plan<'_>,
    token: &str,
    next: &Mutex<usize>,
    stop: &AtomicBool,
    signals: &SignalWatch,
    sender: &mpsc::Sender<Message>,
) {
    let mut workspace = None;
    loop {
        let index = {
            let Ok(mut next) = next.lock() else { return };
            if *next >= plan.candidates.len() || stop.load(Ordering::SeqCst) || signals.received().is_some() {
                return;
            }
            *next += 1;
            *next - 1
        };
        let started = Instant::now();
        let phase = |phase: Phase| {
            let _ = sender.send(Message::Phase { index, phase, at: Instant::now() });
        };
        let control = Control { signals, cancel: stop, phase: &phase };
        let result = match &mut workspace {
            Some(workspace) => Ok(workspace),
            None => verify::Workspace::new(plan.settings.repo, token).map(|made| workspace.insert(made)),
        }
        .map_err(Abort::Failed)
        .and_then(|workspace| verify::verify(&plan.candidates[index], plan.settings, workspace, &control));
        let result = match result {
            Ok(outcome) => Ok(outcome),
            Err(Abort::Failed(error)) => Err(error),
            Err(Abort::Cancelled) => return,
        };
        let failed = result.is_err();
        let message = Message::Done { index, result, elapsed: started.elapsed(), at: Instant::now() };
        if sender.send(message).is_err() || failed {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn broken() -> Result<Bug, RejectReason> {
        Err(RejectReason::TestsFailAtFix { failing: 2, example: "ERROR tests/test_a.py".into() })
    }

    #[test]
    fn a_series_of_broken_runs_is_broken_by_a_test_that_told_something_else() {
        let mut series = BrokenSeries::default();
        series.observe(&broken());
        series.observe(&Err(RejectReason::ReversalDoesNotApply { detail: "moved".into() }));
        series.observe(&broken());
        assert_eq!(series.in_a_row, 2, "a rejection before any test neither counts nor breaks");
        series.observe(&Err(RejectReason::NoTestFlips { detail: "pass with the bug too".into() }));
        assert_eq!((series.in_a_row, series.first_example.as_deref()), (0, None));
        series.observe(&broken());
        assert_eq!((series.in_a_row, series.first_example.as_deref()), (1, Some("ERROR tests/test_a.py")));
    }

    #[test]
    fn a_phase_is_announced_once_it_has_run_a_second() {
        let start = Instant::now();
        let at = |millis: u64| start + Duration::from_millis(millis);
        let mut announcer = Announcer::default();
        assert_eq!(announcer.next(0, Some(Phase::BuildAtFix), at(0)), None);
        // The build took 0.2 s: not announced when the tests begin.
        assert_eq!(announcer.next(0, Some(Phase::TestsAtFix), at(200)), None);
        assert_eq!(announcer.due(at(900)), vec![]);
        assert_eq!(announcer.due(at(1200)), vec![(0, Phase::TestsAtFix)]);
        assert_eq!(announcer.due(at(5000)), vec![], "once");
        // A phase that ran a second without a tick in between is announced when it ends.
        assert_eq!(announcer.next(1, Some(Phase::WitnessAtFix), at(0)), None);
        assert_eq!(announcer.next(1, None, at(1500)), Some(Phase::WitnessAtFix));
    }
}
