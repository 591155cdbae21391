//! The [`Scorer`]s, one per [`ScorerKind`](crate::ScorerKind): `string`, `repro` and `judge`.

use crate::error::CalibrateError;
use crate::findings::Finding;
use crate::judge::{Judge, JudgeRequest};
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

/// `judge`: the judge's verdict. Errors fail closed: the run stops with the judge's error.
/// When a scratch tree is at hand, findings that carry a repro are also checked by it, and
/// the judge's agreement with the repro-verified ones is counted.
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
}

impl Scorer for JudgeScorer<'_> {
    fn identifies(&mut self, plant: &Plant, finding: &Finding) -> Result<bool, CalibrateError> {
        if let Some(received) = self.signals.received() {
            return Err(CalibrateError::Interrupted {
                signal: received,
                name: crate::signals::name(received),
            });
        }
        let request = JudgeRequest::new(plant.clone(), finding);
        let verdict = self.judge.judge(&request).map_err(CalibrateError::Judge)?;
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
