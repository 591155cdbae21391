//! Why a verdict is what it is: one reason per cause, in words a reviewer can act on.

use crate::number::format_score as f;
use crate::review::Severity;
use std::fmt;

/// One cause of a FAIL or UNCLEAR verdict.
#[derive(Debug, Clone, PartialEq)]
pub enum Reason {
    /// FAIL: an issue blocks (critical, major, unrecognised or missing severity).
    BlockingIssue {
        /// Its severity.
        severity: Severity,
        /// `file:line`, when the issue has one.
        location: Option<String>,
        /// Its message.
        message: String,
    },
    /// FAIL: the review raised a red flag of an area in its focus.
    RedFlag {
        /// The red flag's id.
        id: String,
        /// The focus area that defines it.
        area: String,
        /// The rubric's description of the flag.
        description: String,
    },
    /// FAIL: a negative criterion's pattern appears in the artifact.
    NegativePattern {
        /// The negative criterion.
        criterion: String,
        /// The pattern.
        pattern: String,
        /// 1-based line of the match.
        line: usize,
        /// The matched text.
        matched: String,
    },
    /// FAIL: an essential criterion scored below the rubric's `essential_minimum`.
    EssentialBelowMinimum {
        /// The criterion.
        criterion: String,
        /// Its score.
        score: f64,
        /// The rubric's essential minimum.
        minimum: f64,
    },
    /// UNCLEAR: the review gives no confidence.
    ConfidenceMissing {
        /// The rubric's confidence threshold.
        threshold: f64,
    },
    /// UNCLEAR: the confidence is below the rubric's `confidence_threshold`.
    ConfidenceLow {
        /// The review's confidence.
        confidence: f64,
        /// The rubric's threshold.
        threshold: f64,
    },
    /// UNCLEAR: the final score is below the rubric's `pass_threshold`.
    BelowPassThreshold {
        /// The final score.
        final_score: f64,
        /// The rubric's pass threshold.
        pass_threshold: f64,
    },
    /// UNCLEAR: a criterion scored below its own threshold.
    CriterionBelowThreshold {
        /// The criterion.
        criterion: String,
        /// Its score.
        score: f64,
        /// Its threshold.
        threshold: f64,
    },
}

impl Reason {
    /// True for the reasons that make a verdict FAIL (the others make it UNCLEAR).
    pub fn fails(&self) -> bool {
        matches!(
            self,
            Reason::BlockingIssue { .. }
                | Reason::RedFlag { .. }
                | Reason::NegativePattern { .. }
                | Reason::EssentialBelowMinimum { .. }
        )
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reason::BlockingIssue { severity, location, message } => {
                let at = location.as_ref().map(|l| format!(" at {l}")).unwrap_or_default();
                match severity {
                    Severity::Unrecognised(text) => write!(
                        out,
                        "blocking issue{at} (severity `{text}` is not critical, major, minor, high or low, so it blocks): {message}"
                    ),
                    Severity::Missing => {
                        write!(out, "blocking issue{at} (no severity, so it blocks): {message}")
                    }
                    known => write!(out, "blocking issue{at} ({known}): {message}"),
                }
            }
            Reason::RedFlag { id, area, description } => {
                write!(out, "red flag `{id}` of focus area {area} (in the review's focus): {description}")
            }
            Reason::NegativePattern { criterion, pattern, line, matched } => write!(
                out,
                "negative criterion `{criterion}`: pattern `{pattern}` matches the artifact at line {line} ({matched:?})"
            ),
            Reason::EssentialBelowMinimum { criterion, score, minimum } => write!(
                out,
                "essential criterion `{criterion}` scored {}, below the essential minimum {}",
                f(*score),
                f(*minimum)
            ),
            Reason::ConfidenceMissing { threshold } => {
                write!(
                    out,
                    "missing confidence: the review gives none (the rubric needs at least {})",
                    f(*threshold)
                )
            }
            Reason::ConfidenceLow { confidence, threshold } => write!(
                out,
                "low confidence: {} is below the confidence threshold {}",
                f(*confidence),
                f(*threshold)
            ),
            Reason::BelowPassThreshold { final_score, pass_threshold } => write!(
                out,
                "final score {} is below the pass threshold {}",
                f(*final_score),
                f(*pass_threshold)
            ),
            Reason::CriterionBelowThreshold { criterion, score, threshold } => {
                write!(out, "`{criterion}` scored {}, below its threshold {}", f(*score), f(*threshold))
            }
        }
    }
}
