//! The [`Scorer`]s, one per [`ScorerKind`](crate::ScorerKind): `string`, `repro` and `judge`.

use crate::error::CalibrateError;
use crate::judging::Answers;
use crate::plants::Plant;
use crate::scoring::{Identified, Scorer};
use crate::scratch::Scratch;
use revcal_findings::Finding;
use revcal_judge::JudgeError;
use revcal_process::SignalWatch;

/// `string`: a finding that locates a plant identifies it (not trustworthy: an echo of the
/// diff scores 1.0).
#[derive(Debug, Default)]
pub(crate) struct StringScorer;

impl Scorer for StringScorer {
    fn identifies(&mut self, _plant: &Plant, _finding: &Finding) -> Result<Identified, CalibrateError> {
        Ok(Identified::Yes)
    }
}

/// `repro`: the finding's repro command passes on the original tree and fails with only
/// this plant applied (both in the scratch copy of the reviewer's commands, sandboxed), or
/// runs past its time limit with it (caught by timeout: the plant makes the code hang). A
/// finding without repro identifies nothing.
pub(crate) struct ReproScorer<'a, 's> {
    /// Where the repro commands run.
    pub(crate) scratch: &'a mut Scratch<'s>,
    /// Interrupts long repro commands.
    pub(crate) signals: &'a SignalWatch,
}

impl Scorer for ReproScorer<'_, '_> {
    fn identifies(&mut self, plant: &Plant, finding: &Finding) -> Result<Identified, CalibrateError> {
        let Some(repro) = finding.repro.as_deref().map(str::trim).filter(|r| !r.is_empty()) else {
            return Ok(Identified::No);
        };
        let (command, origin) = crate::scratch::repro_command(plant, repro);
        let result = self.scratch.discriminate(command, plant, origin, self.signals)?;
        Ok(if result.discriminates() {
            Identified::Yes
        } else if result.timed_out() {
            Identified::ByTimeout
        } else {
            Identified::No
        })
    }
}

/// The judge errors met while scoring the real review: each counts as "not identified" and is
/// reported apart from misses. After an error that is not a bad answer (the provider is
/// failing, the key is refused, the budget is spent), the judge is not asked again and every
/// further question counts as an error too.
#[derive(Debug, Default)]
pub(crate) struct JudgeFailures {
    /// Questions without a verdict.
    pub(crate) count: usize,
    /// The first error.
    pub(crate) first: Option<JudgeError>,
    /// No more questions are asked.
    pub(crate) stopped: bool,
}

/// `judge`: the judge's verdict, looked up in the answers the judge gave (asked beforehand,
/// many at once; an unasked question is [`Identified::Unknown`] and is collected in
/// `asked` to be put to the judge). Errors fail closed: never a match. Without `failures` (the
/// controls) the run stops with the judge's error; with it (the real review) errors are
/// recorded there and scoring goes on. When a scratch tree is at hand, findings that carry a
/// repro are also checked by it, and the judge's agreement with the repro-verified ones is
/// counted.
pub(crate) struct JudgeScorer<'a, 's> {
    /// The judge's answers so far.
    pub(crate) answers: &'a mut Answers,
    /// For `judgeAgreement`: where repro commands run.
    pub(crate) scratch: Option<&'a mut Scratch<'s>>,
    /// Interrupts long repro commands.
    pub(crate) signals: &'a SignalWatch,
    /// Repro-verified findings seen.
    pub(crate) verified: usize,
    /// Of those, the ones the judge agreed with.
    pub(crate) agreed: usize,
    /// Where errors are recorded instead of stopping the run.
    pub(crate) failures: Option<&'a mut JudgeFailures>,
    /// Keep the first error in `failures` (the last pass; an earlier one only counts).
    pub(crate) keep_first_error: bool,
}

impl Scorer for JudgeScorer<'_, '_> {
    fn identifies(&mut self, plant: &Plant, finding: &Finding) -> Result<Identified, CalibrateError> {
        if let Some(received) = self.signals.received() {
            return Err(CalibrateError::Interrupted {
                signal: received,
                name: revcal_process::signal_name(received),
            });
        }
        if let Some(failures) = self.failures.as_deref_mut()
            && failures.stopped
        {
            failures.count += 1;
            return Ok(Identified::No);
        }
        let verdict = match self.answers.verdict(plant, finding) {
            None => return Ok(Identified::Unknown),
            Some(Ok(verdict)) => verdict,
            Some(Err(error)) => {
                let Some(failures) = self.failures.as_deref_mut() else {
                    return Err(CalibrateError::Judge(error.take()));
                };
                tracing::warn!(plant = %plant.location(), "the judge gave no verdict (counted as not identified): {error}");
                failures.count += 1;
                failures.stopped |= !error.is_bad_answer();
                if failures.first.is_none() && self.keep_first_error {
                    failures.first = Some(error.take());
                }
                return Ok(Identified::No);
            }
        };
        if let (Some(scratch), Some(repro)) =
            (self.scratch.as_deref_mut(), finding.repro.as_deref().map(str::trim).filter(|r| !r.is_empty()))
            && let (command, origin) = crate::scratch::repro_command(plant, repro)
            && scratch.discriminate(command, plant, origin, self.signals)?.discriminates()
        {
            self.verified += 1;
            self.agreed += usize::from(verdict);
        }
        Ok(verdict.into())
    }
}
