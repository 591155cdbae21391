//! The [`Scorer`]s, one per [`ScorerKind`](crate::ScorerKind): `string`, `repro` and `judge`.

use crate::error::CalibrateError;
use crate::findings::Finding;
use crate::judge::{Judge, JudgeError, JudgeRequest};
use crate::plants::Plant;
use crate::scoring::Scorer;
use crate::scratch::Scratch;
use crate::signals::SignalWatch;

/// `string`: a finding that locates a plant identifies it (not trustworthy: an echo of the
/// diff scores 1.0).
#[derive(Debug, Default)]
pub(crate) struct StringScorer;

impl Scorer for StringScorer {
    fn identifies(&mut self, _plant: &Plant, _finding: &Finding) -> Result<bool, CalibrateError> {
        Ok(true)
    }
}

/// `repro`: the finding's repro command passes on the original tree and fails with only
/// this plant applied (both in a scratch copy). A finding without repro identifies nothing.
pub(crate) struct ReproScorer<'a> {
    /// Where the repro commands run.
    pub(crate) scratch: &'a mut Scratch,
    /// Interrupts long repro commands.
    pub(crate) signals: &'a SignalWatch,
}

impl Scorer for ReproScorer<'_> {
    fn identifies(&mut self, plant: &Plant, finding: &Finding) -> Result<bool, CalibrateError> {
        match finding.repro.as_deref().map(str::trim).filter(|r| !r.is_empty()) {
            Some(repro) => Ok(self.scratch.discriminate(repro, plant, self.signals)?.discriminates()),
            None => Ok(false),
        }
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

/// `judge`: the judge's verdict. Errors fail closed: never a match. Without `failures` (the
/// controls) the run stops with the judge's error; with it (the real review) errors are
/// recorded there and scoring goes on. When a scratch tree is at hand, findings that carry a
/// repro are also checked by it, and the judge's agreement with the repro-verified ones is
/// counted.
pub(crate) struct JudgeScorer<'a> {
    /// The judge.
    pub(crate) judge: &'a dyn Judge,
    /// For `judgeAgreement`: where repro commands run.
    pub(crate) scratch: Option<&'a mut Scratch>,
    /// Interrupts long repro commands.
    pub(crate) signals: &'a SignalWatch,
    /// Repro-verified findings seen.
    pub(crate) verified: usize,
    /// Of those, the ones the judge agreed with.
    pub(crate) agreed: usize,
    /// Where errors are recorded instead of stopping the run.
    pub(crate) failures: Option<&'a mut JudgeFailures>,
}

impl Scorer for JudgeScorer<'_> {
    fn identifies(&mut self, plant: &Plant, finding: &Finding) -> Result<bool, CalibrateError> {
        if let Some(received) = self.signals.received() {
            return Err(CalibrateError::Interrupted {
                signal: received,
                name: crate::signals::name(received),
            });
        }
        if let Some(failures) = self.failures.as_deref_mut()
            && failures.stopped
        {
            failures.count += 1;
            return Ok(false);
        }
        let request = JudgeRequest::new(plant.clone(), finding);
        let verdict = match self.judge.judge(&request) {
            Ok(verdict) => verdict,
            Err(error) => {
                let Some(failures) = self.failures.as_deref_mut() else {
                    return Err(CalibrateError::Judge(error));
                };
                tracing::warn!(plant = %plant.location(), "the judge gave no verdict (counted as not identified): {error}");
                failures.count += 1;
                failures.stopped |= !matches!(error, JudgeError::BadAnswer { .. });
                failures.first.get_or_insert(error);
                return Ok(false);
            }
        };
        if let (Some(scratch), Some(repro)) =
            (self.scratch.as_deref_mut(), finding.repro.as_deref().map(str::trim).filter(|r| !r.is_empty()))
            && scratch.discriminate(repro, plant, self.signals)?.discriminates()
        {
            self.verified += 1;
            self.agreed += usize::from(verdict);
        }
        Ok(verdict)
    }
}
