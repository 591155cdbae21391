//! Scoring: which plants a reviewer's findings caught. A plant is caught only when one
//! finding both locates it (same basename, line within 3) and identifies it, where
//! "identifies" is the [`Scorer`]'s call: a repro command that discriminates, a judge's
//! verdict, or (the string scorer) nothing more than the location. The scorers themselves are
//! in `scorers.rs`.

use crate::error::CalibrateError;
use crate::plants::{Plant, Planting};
use revcal_findings::Finding;
pub use revcal_report::{FindingOutcome, ScorerKind};

/// Whether a finding identifies a plant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Identified {
    /// It does not.
    No,
    /// It does.
    Yes,
    /// Its repro command passes on the original and runs past its time limit with the plant
    /// applied (twice): the plant makes the code hang, and the finding showed it.
    ByTimeout,
    /// Not known yet: the judge has not answered this question (the finding's remaining
    /// plants wait for the answer).
    Unknown,
}

impl From<bool> for Identified {
    fn from(yes: bool) -> Identified {
        if yes { Identified::Yes } else { Identified::No }
    }
}

/// Decides whether a finding that locates a plant identifies it: one implementation per
/// [`ScorerKind`] (`StringScorer`, `ReproScorer`, `JudgeScorer`).
pub(crate) trait Scorer {
    /// Whether `finding` identifies `plant`. Errors fail closed (the run stops).
    fn identifies(&mut self, plant: &Plant, finding: &Finding) -> Result<Identified, CalibrateError>;
}

/// The outcome of scoring one review.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Scored {
    /// For each plant, the index of the first finding that caught it.
    pub(crate) caught_by: Vec<Option<usize>>,
    /// For each finding, what it was.
    pub(crate) findings: Vec<FindingOutcome>,
    /// For each plant, true when the finding that caught it did so by a repro command that
    /// timed out with the plant applied.
    pub(crate) by_timeout: Vec<bool>,
    /// True when some question is not answered yet ([`Identified::Unknown`]): the result is
    /// not final.
    pub(crate) incomplete: bool,
}

impl Scored {
    /// The same result in the numbering of a larger set of `total` plants, where this one was
    /// scored against the plants at `indices` of it.
    pub(crate) fn for_plants(self, indices: &[usize], total: usize) -> Scored {
        let mut caught_by = vec![None; total];
        let mut by_timeout = vec![false; total];
        for (local, (finding, timeout)) in self.caught_by.into_iter().zip(self.by_timeout).enumerate() {
            if let Some(&index) = indices.get(local) {
                caught_by[index] = finding;
                by_timeout[index] = timeout;
            }
        }
        let findings = self
            .findings
            .into_iter()
            .map(|outcome| match outcome {
                FindingOutcome::TruePositive(local) => {
                    FindingOutcome::TruePositive(indices.get(local).copied().unwrap_or(local))
                }
                other => other,
            })
            .collect();
        Scored { caught_by, findings, by_timeout, incomplete: self.incomplete }
    }

    /// Plants caught.
    pub(crate) fn caught(&self) -> usize {
        self.caught_by.iter().filter(|c| c.is_some()).count()
    }
}

/// Scores `findings` against `plants`. Each finding is checked against the plants it locates,
/// nearest line first, and counts for the first one it identifies.
#[cfg(test)]
pub(crate) fn score(
    plants: &[&Plant],
    findings: &[Finding],
    scorer: &mut dyn Scorer,
) -> Result<Scored, CalibrateError> {
    score_with_progress(plants, findings, scorer, &mut || {})
}

/// How many (finding, plant) pairs [`score_with_progress`] checks: every plant each finding
/// locates.
pub(crate) fn located_pairs(plants: &[&Plant], findings: &[Finding]) -> usize {
    findings.iter().map(|finding| plants.iter().filter(|plant| plant.located_by(finding)).count()).sum()
}

/// [`score`], calling `checked` once per located (finding, plant) pair: after the scorer's
/// answer, or without asking when an earlier plant was identified, so that a progress bar
/// reaches [`located_pairs`] exactly.
pub(crate) fn score_with_progress(
    plants: &[&Plant],
    findings: &[Finding],
    scorer: &mut dyn Scorer,
    checked: &mut dyn FnMut(),
) -> Result<Scored, CalibrateError> {
    let mut caught_by = vec![None; plants.len()];
    let mut by_timeout = vec![false; plants.len()];
    let mut outcomes = Vec::with_capacity(findings.len());
    let mut incomplete = false;
    for (finding_index, finding) in findings.iter().enumerate() {
        let mut located: Vec<usize> = (0..plants.len()).filter(|&i| plants[i].located_by(finding)).collect();
        if located.is_empty() {
            outcomes.push(FindingOutcome::FalsePositive);
            continue;
        }
        let found_line = finding.line.unwrap_or(0);
        // Nearest first, in the planted tree the reviewer read (a plant's recorded line is
        // the original's: lines other plants removed or added above it moved it).
        located.sort_by_key(|&i| plants[i].distance_to(found_line));
        let mut outcome = FindingOutcome::LocatedOnly;
        let mut waiting = false;
        for plant_index in located {
            if outcome == FindingOutcome::LocatedOnly && !waiting {
                match scorer.identifies(plants[plant_index], finding)? {
                    Identified::No => {}
                    identified @ (Identified::Yes | Identified::ByTimeout) => {
                        outcome = FindingOutcome::TruePositive(plant_index);
                        if caught_by[plant_index].is_none() {
                            caught_by[plant_index] = Some(finding_index);
                            by_timeout[plant_index] = identified == Identified::ByTimeout;
                        }
                    }
                    Identified::Unknown => waiting = true,
                }
            }
            checked();
        }
        incomplete |= waiting;
        outcomes.push(outcome);
    }
    Ok(Scored { caught_by, findings: outcomes, by_timeout, incomplete })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scorers::StringScorer;
    use revcal_findings::FindingFormat;

    fn plant(file: &str, line: u32) -> Plant {
        Plant::new(file, line, "c", "o", "a", "b").with_defect("d")
    }

    fn finding(file: &str, line: u32, text: &str) -> Finding {
        let mut finding = Finding::new(FindingFormat::Findings, text.into());
        finding.file = Some(file.into());
        finding.line = Some(line);
        finding
    }

    impl Scored {
        /// Findings that locate and identify a plant.
        fn true_positives(&self) -> usize {
            self.findings.iter().filter(|f| matches!(f, FindingOutcome::TruePositive(_))).count()
        }

        /// Findings that locate no plant.
        fn false_positives(&self) -> usize {
            self.findings.iter().filter(|f| **f == FindingOutcome::FalsePositive).count()
        }

        /// caught / plants, or 0 with no plants.
        fn recall(&self) -> f64 {
            if self.caught_by.is_empty() { 0.0 } else { self.caught() as f64 / self.caught_by.len() as f64 }
        }
    }

    struct Says(&'static str);
    impl Scorer for Says {
        fn identifies(&mut self, _plant: &Plant, finding: &Finding) -> Result<Identified, CalibrateError> {
            Ok(finding.text.contains(self.0).into())
        }
    }

    #[test]
    fn located_and_identified_is_caught_located_only_is_neither_elsewhere_is_false() {
        let (a, b) = (plant("src/a.rs", 10), plant("src/b.rs", 40));
        let mut findings = [
            finding("a.rs", 12, "bug here"),
            finding("src/b.rs", 40, "style nit"),
            finding("src/c.rs", 1, "bug elsewhere"),
        ];
        // Paths are read against the changed files first, as a run does.
        crate::plants::resolve_finding_paths(
            &mut findings,
            &revcal_record::ChangedFiles::new(["src/a.rs", "src/b.rs"]),
        );
        let scored = score(&[&a, &b], &findings, &mut Says("bug")).unwrap();
        assert_eq!(scored.caught_by, vec![Some(0), None]);
        assert_eq!(
            scored.findings,
            vec![FindingOutcome::TruePositive(0), FindingOutcome::LocatedOnly, FindingOutcome::FalsePositive]
        );
        assert_eq!((scored.true_positives(), scored.false_positives()), (1, 1));
        assert!((scored.recall() - 0.5).abs() < 1e-9);
        let scored = score(&[&a, &b], &findings, &mut StringScorer).unwrap();
        assert_eq!(scored.caught(), 2);
        // A finding without a file or a line locates nothing.
        let (mut no_line, mut no_file) = (finding("src/a.rs", 10, "bug"), finding("src/a.rs", 10, "bug"));
        no_line.line = None;
        no_file.file = None;
        assert_eq!(score(&[&a], &[no_line, no_file], &mut StringScorer).unwrap().caught(), 0);
    }

    /// A deleted statement moves the plants below it up a line: the findings of a reviewer
    /// that read the planted file name them where they now are, and each is credited to its
    /// own plant (two plants a line apart included), as the oracle's are.
    #[test]
    fn plants_below_a_deleted_line_are_matched_where_the_reviewer_saw_them() {
        let mut deletion = plant("src/a.py", 2);
        deletion.original = "    x = 1".into();
        deletion.mutated = String::new();
        deletion.edits = vec![revcal_report::PlantEdit {
            file: "src/a.py".into(),
            start: 1,
            old: vec!["    x = 1".into()],
            new: Vec::new(),
        }];
        let (mut upper, mut lower) = (plant("src/a.py", 20), plant("src/a.py", 21));
        upper.original = "a < b".into();
        lower.original = "c < d".into();
        let mut plants = vec![deletion, upper, lower];
        crate::plants::place(&mut plants, &[true, true, true]);
        assert_eq!(plants[1].placed_at(), ("src/a.py", 19));
        assert_eq!(plants[2].placed_at(), ("src/a.py", 20));
        let refs: Vec<&Plant> = plants.iter().collect();
        // The reviewer flags the two lines where it read them: 19 and 20.
        let findings = [finding("src/a.py", 19, "bug"), finding("src/a.py", 20, "bug")];
        let scored = score(&refs, &findings, &mut StringScorer).unwrap();
        assert_eq!(scored.caught_by, vec![None, Some(0), Some(1)], "each finding credits its own plant");
        // The oracle states each plant where it sits.
        let oracle = crate::controls::oracle_findings(&refs);
        let lines: Vec<Option<u32>> = oracle.iter().map(|finding| finding.line).collect();
        assert_eq!(lines, vec![Some(2), Some(19), Some(20)]);
        assert_eq!(score(&refs, &oracle, &mut StringScorer).unwrap().caught(), 3);
    }
}
