//! The controls: two synthetic reviewers scored through the same scorer and judge as the
//! real one. The echo reviewer names each plant's file:line and quotes the changed line
//! (what a reviewer that merely reads the diff would say); a trustworthy scorer gives it
//! recall <= 0.2 ([`ControlOutcome::ECHO_MAX_RECALL`](crate::ControlOutcome::ECHO_MAX_RECALL)).
//! The oracle states each defect (and, for the repro scorer, carries the
//! plant's witness as its repro); a working scorer gives it 1.0.

use crate::plants::{Plant, Planting};
use revcal_findings::{Finding, FindingFormat};

/// The echo reviewer's findings: location and the changed line, no understanding.
pub(crate) fn echo_findings(plants: &[&Plant]) -> Vec<Finding> {
    plants
        .iter()
        .map(|plant| {
            let mut finding = Finding::new(
                FindingFormat::Findings,
                format!("This line changed: `{}`", plant.mutated.trim()),
            );
            let (file, line) = plant.placed_at();
            finding.file = Some(file.to_owned());
            finding.line = Some(line);
            finding
        })
        .collect()
}

/// The oracle reviewer's findings: each defect stated, with the witness as repro.
pub(crate) fn oracle_findings(plants: &[&Plant]) -> Vec<Finding> {
    plants
        .iter()
        .map(|plant| {
            let mut finding = Finding::new(
                FindingFormat::Findings,
                format!("{} (`{}` was `{}`)", plant.defect, plant.mutated.trim(), plant.original.trim()),
            );
            let (file, line) = plant.placed_at();
            finding.file = Some(file.to_owned());
            finding.line = Some(line);
            finding.repro = plant.witness.clone();
            finding
        })
        .collect()
}
