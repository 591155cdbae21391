//! What the report says about scoring: the scorer a run used and what each finding turned out
//! to be. Scoring itself (which plants a reviewer's findings caught) is revcal-calibrate's.

use serde::{Deserialize, Serialize};

/// How a finding is judged to identify a plant it locates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ScorerKind {
    /// A judge decides whether the finding describes the planted defect.
    Judge,
    /// The finding's `repro` command passes on the original and fails on the mutant.
    Repro,
    /// Location only: not trustworthy (an echo of the diff scores 1.0).
    String,
}

impl ScorerKind {
    /// The name used on the command line and in the report.
    pub fn as_str(self) -> &'static str {
        match self {
            ScorerKind::Judge => "judge",
            ScorerKind::Repro => "repro",
            ScorerKind::String => "string",
        }
    }

    /// False for the string scorer, whose recall an echo of the diff maxes out.
    pub fn trustworthy(self) -> bool {
        self != ScorerKind::String
    }
}

impl std::fmt::Display for ScorerKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for ScorerKind {
    type Err = String;
    fn from_str(text: &str) -> Result<ScorerKind, String> {
        match text {
            "judge" => Ok(ScorerKind::Judge),
            "repro" => Ok(ScorerKind::Repro),
            "string" => Ok(ScorerKind::String),
            other => Err(format!("unknown scorer `{other}`: expected judge, repro or string")),
        }
    }
}

/// What one finding turned out to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FindingOutcome {
    /// It locates and identifies the plant at this index (in the order the plants were
    /// scored, or, in a [`TrialRecord`](crate::TrialRecord), added to the report).
    TruePositive(usize),
    /// It locates no plant.
    FalsePositive,
    /// It locates a plant but identifies none: neither true nor false positive.
    LocatedOnly,
    /// The reviewer made it on the unplanted change too (the same file and message, its line
    /// moved by the plants' edits): an old finding, neither true nor false positive.
    Preexisting,
}
