//! Putting the judge's questions to it many at once, with an outcome that does not depend on
//! how many at once or in which order the answers came.
//!
//! Scoring runs in passes over the findings, in their fixed order (trial, round, finding,
//! plant nearest first). A pass takes each verdict from the [`Answers`] the judge gave so far;
//! a question not asked yet leaves its finding waiting and is collected. The collected
//! questions (each asked once, however often it comes up) are then put to the judge, up to
//! `--jobs` at once, and the next pass goes further. The last pass, with every question it
//! needs answered, is the score. Which questions are asked depends only on the answers, never
//! on timing, so the report is the same for every number of jobs. A judge with a call budget
//! is asked one question at a time, in order, so that the questions that fall past the budget
//! are the same ones every time.

use crate::error::CalibrateError;
use crate::jobs::Jobs;
use crate::plants::{JudgedForm, Plant};
use crate::scorers::{JudgeFailures, JudgeScorer};
use crate::scoring::{Scored, score_with_progress};
use crate::scratch::Scratch;
use revcal_findings::Finding;
use revcal_judge::{Judge, JudgeError, JudgeRequest};
use revcal_process::SignalWatch;
use std::collections::{HashMap, HashSet};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A judge error kept as the answer to a question.
#[derive(Debug)]
pub(crate) struct Failed {
    text: String,
    judge: String,
    bad_answer: bool,
    error: Option<Box<JudgeError>>,
}

impl Failed {
    fn new(judge: &str, error: JudgeError) -> Failed {
        Failed {
            text: error.to_string(),
            judge: judge.to_owned(),
            bad_answer: matches!(error, JudgeError::BadAnswer { .. }),
            error: Some(Box::new(error)),
        }
    }

    /// True for an answer that is not what was asked for (the judge may still answer other
    /// questions); false for a failing provider, a refused key or a spent budget.
    pub(crate) fn is_bad_answer(&self) -> bool {
        self.bad_answer
    }

    /// The error itself (the first time; after that, its message).
    pub(crate) fn take(&mut self) -> JudgeError {
        self.error.take().map_or_else(
            || JudgeError::Backend { judge: self.judge.clone(), message: self.text.clone() },
            |error| *error,
        )
    }
}

impl std::fmt::Display for Failed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

/// The judge's answers, by question, and the questions a pass found unanswered.
#[derive(Debug, Default)]
pub(crate) struct Answers {
    book: HashMap<String, Result<bool, Failed>>,
    wanted: Vec<(String, JudgeRequest)>,
    wanted_keys: HashSet<String>,
}

impl Answers {
    /// The verdict on `finding` about `plant`, when the judge was asked; otherwise the
    /// question is kept for the next round of asking and the answer is `None`.
    pub(crate) fn verdict(&mut self, plant: &Plant, finding: &Finding) -> Option<Result<bool, &mut Failed>> {
        let request = JudgeRequest::new(plant.judged(), finding);
        let key = match serde_json::to_string(&request) {
            Ok(key) => key,
            Err(error) => {
                let key = format!("unencodable {}:{} {}", plant.file, plant.line, finding.text);
                self.book
                    .entry(key.clone())
                    .or_insert_with(|| Err(Failed::new("judge", JudgeError::Request(error))));
                return self.book.get_mut(&key).map(|answer| answer.as_mut().map(|verdict| *verdict));
            }
        };
        if !self.book.contains_key(&key) {
            if self.wanted_keys.insert(key.clone()) {
                self.wanted.push((key, request));
            }
            return None;
        }
        self.book.get_mut(&key).map(|answer| answer.as_mut().map(|verdict| *verdict))
    }

    /// Puts every question collected since the last call to `judge`: up to the run's jobs at
    /// once, or one at a time in order when the judge has a call budget. After an error that
    /// stops the judge (see [`JudgeFailures`]), later questions are not sent (their answers
    /// could not count). `answered` is called once per answer.
    fn ask(
        &mut self,
        judge: &dyn Judge,
        jobs: &Jobs,
        signals: &SignalWatch,
        answered: &(dyn Fn() + Sync),
    ) -> Result<(), CalibrateError> {
        self.wanted_keys.clear();
        let questions = std::mem::take(&mut self.wanted);
        let results: Vec<Mutex<Option<Result<bool, Failed>>>> =
            questions.iter().map(|_| Mutex::new(None)).collect();
        // The position of the first question whose error stops the judge: none after it is sent.
        let stop_at = AtomicUsize::new(usize::MAX);
        let next = AtomicUsize::new(0);
        let workers = if judge.call_budget().is_some() { 1 } else { jobs.count().min(questions.len()) };
        // Asks the questions in order, each once, up to (not including) position `limit`.
        let work = |limit: usize| {
            while let Ok(index) = next.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |index| {
                (index < limit).then_some(index + 1)
            }) {
                let Some((_, request)) = questions.get(index) else { break };
                if index > stop_at.load(Ordering::SeqCst) || signals.received().is_some() {
                    continue;
                }
                let _permit = jobs.judge_permit();
                let answer = judge.judge(request).map_err(|error| Failed::new(judge.name(), error));
                if answer.as_ref().is_err_and(|failed| !failed.is_bad_answer()) {
                    stop_at.fetch_min(index, Ordering::SeqCst);
                }
                if let Ok(mut slot) = results[index].lock() {
                    *slot = Some(answer);
                }
                answered();
            }
        };
        if workers <= 1 {
            work(questions.len());
        } else {
            // The first question alone: a judge that fails at once (a refused key, a server
            // that is down) is then asked nothing more.
            work(1);
            std::thread::scope(|scope| {
                for _ in 0..workers {
                    scope.spawn(|| work(questions.len()));
                }
            });
        }
        if let Some(signal) = signals.received() {
            return Err(CalibrateError::Interrupted { signal, name: revcal_process::signal_name(signal) });
        }
        for ((key, _), result) in questions.into_iter().zip(results) {
            if let Some(answer) = result.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner) {
                self.book.insert(key, answer);
            }
        }
        Ok(())
    }
}

/// One scoring task: the plants of a review and the findings it reported.
pub(crate) type Task<'p> = (Vec<&'p Plant>, &'p [Finding]);

/// What [`score`] found.
#[derive(Debug)]
pub(crate) struct Judged {
    /// Each task's score.
    pub(crate) scored: Vec<Scored>,
    /// Per task: (repro-verified findings, of which the judge agreed).
    pub(crate) agreement: Vec<(usize, usize)>,
}

/// Scores `tasks` with `judge` (see the module's docs). With `failures`, judge errors are
/// counted there and scoring goes on; without, the first one stops the run. With `scratch`,
/// findings with a repro command are checked by it too, for the judge's agreement.
/// `answered` is called once per question the judge answered.
#[allow(clippy::too_many_arguments)]
pub(crate) fn score(
    tasks: &[Task<'_>],
    judge: &dyn Judge,
    jobs: &Jobs,
    mut scratch: Option<&mut Scratch<'_>>,
    signals: &SignalWatch,
    mut failures: Option<&mut JudgeFailures>,
    answered: &(dyn Fn() + Sync),
) -> Result<Judged, CalibrateError> {
    let mut answers = Answers::default();
    loop {
        // A pass: how far the answers so far go, and which questions are still open.
        let mut pass_failures = failures.as_ref().map(|_| JudgeFailures::default());
        let mut scorer = JudgeScorer {
            answers: &mut answers,
            scratch: None,
            signals,
            verified: 0,
            agreed: 0,
            failures: pass_failures.as_mut(),
            keep_first_error: false,
        };
        let mut open = false;
        for (plants, findings) in tasks {
            open |= score_with_progress(plants, findings, &mut scorer, &mut || {})?.incomplete;
        }
        if !open || answers.wanted.is_empty() {
            break;
        }
        answers.ask(judge, jobs, signals, answered)?;
    }
    // The last pass, every answer in: the score, the repro checks and the errors.
    let mut judged =
        Judged { scored: Vec::with_capacity(tasks.len()), agreement: Vec::with_capacity(tasks.len()) };
    for (plants, findings) in tasks {
        let mut scorer = JudgeScorer {
            answers: &mut answers,
            scratch: scratch.as_deref_mut(),
            signals,
            verified: 0,
            agreed: 0,
            failures: failures.as_deref_mut(),
            keep_first_error: true,
        };
        let scored = score_with_progress(plants, findings, &mut scorer, &mut || {})?;
        judged.agreement.push((scorer.verified, scorer.agreed));
        judged.scored.push(scored);
    }
    Ok(judged)
}
