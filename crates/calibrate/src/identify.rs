//! The [`Identify`] implementations behind the `repro` and `judge` scorers.

use crate::error::CalibrateError;
use crate::findings::Finding;
use crate::judge::{Judge, JudgeRequest, PlantedDefect};
use crate::plants::Plant;
use crate::scoring::Identify;
use crate::scratch::Scratch;
use crate::signals::SignalWatch;

/// The judge's view of a plant.
pub fn planted_defect(plant: &Plant) -> PlantedDefect {
    PlantedDefect {
        file: plant.file.clone(),
        line: plant.line,
        category: plant.category.clone(),
        operator: plant.operator.clone(),
        defect: plant.defect.clone(),
        original: plant.original.clone(),
        mutated: plant.mutated.clone(),
    }
}

/// `repro`: the finding's repro command passes on the original tree and fails with only
/// this plant applied (both in a scratch copy). A finding without repro identifies nothing.
pub struct ReproScorer<'a> {
    /// Where the repro commands run.
    pub scratch: &'a mut Scratch,
    /// Interrupts long repro commands.
    pub signals: &'a SignalWatch,
}

impl Identify for ReproScorer<'_> {
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
pub struct JudgeScorer<'a> {
    /// The judge.
    pub judge: &'a dyn Judge,
    /// For `judgeAgreement`: where repro commands run.
    pub scratch: Option<&'a mut Scratch>,
    /// Interrupts long repro commands.
    pub signals: &'a SignalWatch,
    /// Repro-verified findings seen.
    pub verified: usize,
    /// Of those, the ones the judge agreed with.
    pub agreed: usize,
}

impl Identify for JudgeScorer<'_> {
    fn identifies(&mut self, plant: &Plant, finding: &Finding) -> Result<bool, CalibrateError> {
        if let Some(received) = self.signals.received() {
            return Err(CalibrateError::Interrupted {
                signal: received,
                name: crate::signals::name(received),
            });
        }
        let request = JudgeRequest::new(planted_defect(plant), finding);
        let verdict = self.judge.judge(&request).map_err(|e| CalibrateError::Judge(e.to_string()))?;
        if let (Some(scratch), Some(repro)) =
            (self.scratch.as_deref_mut(), finding.repro.as_deref().map(str::trim).filter(|r| !r.is_empty()))
        {
            if scratch.discriminate(repro, plant, self.signals)?.discriminates() {
                self.verified += 1;
                self.agreed += usize::from(verdict);
            }
        }
        Ok(verdict)
    }
}
