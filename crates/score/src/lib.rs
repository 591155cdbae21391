//! Review scoring: a review's rubric scores, confidence and issues in; a verdict out.
//!
//! One algorithm serves every rubric ([docs/scoring.md](https://github.com/revcal/revcal/blob/main/docs/scoring.md#2-the-algorithm)), and every number it uses comes from the
//! rubric file: shares (or the mean without them), ceilings, per-criterion thresholds,
//! `pass_threshold`, `essential_minimum`, `confidence_threshold` and negative patterns.
//!
//! 1. weighted = sum of share x score (the mean score when the rubric has no shares);
//! 2. final = weighted capped by every ceiling whose criterion scores below its `below`;
//! 3. critical and major issues block, minor ones are suggestions, and an unrecognised or
//!    missing severity blocks (fail closed);
//! 4. FAIL on a blocking issue, a negative pattern in the artifact, an essential
//!    criterion below `essential_minimum`, or a red flag of a focus area the review
//!    names in `rubric_focus` (red flags of other areas are listed only); else UNCLEAR
//!    on missing or low confidence, a final score below `pass_threshold`, or a criterion
//!    below its threshold; else PASS.
//!
//! Scores outside the scale, missing or unknown criteria, and unknown focus areas or
//! red-flag ids are errors, never clamped or ignored.
//! A council (several reviews of one artifact) is scored with [`Scorer::score_council`].
//!
//! ```
//! use revcal_rubric_model::Rubric;
//! use revcal_score::{Scorer, Verdict, parse_document, Reviews};
//!
//! let rubric: Rubric = serde_yaml::from_str(r#"
//! rubric_id: commit_message_v1
//! name: Commit message
//! version: 1.0.0
//! artifact_type: commit_message
//! criteria:
//!   - name: accuracy
//!     description: Says what the change does.
//!     weight: essential
//!     share: 0.6
//!     threshold: 3
//!     anchors: {1: Wrong, 2: Misleading, 3: Vague, 4: Right, 5: Right and precise}
//!     examples: {score_1: "fix", score_5: "Parse dates in UTC (#412)"}
//!   - name: brevity
//!     description: Short subject line.
//!     weight: important
//!     share: 0.4
//!     threshold: 3
//!     anchors: {1: Essay, 2: Long, 3: Fine, 4: Short, 5: Crisp}
//!     examples: {score_1: "...", score_5: "Parse dates in UTC"}
//! negative_criteria:
//!   - {name: no_wip, fail_patterns: ["\\bwip\\b"]}
//! ceilings:
//!   - {criterion: accuracy, below: 3, cap: 2.5}
//! scoring: {pass_threshold: 3.5}
//! "#).unwrap();
//!
//! let document = parse_document(r#"{
//!   "rubric_scores": {"accuracy": 2, "brevity": 5},
//!   "confidence": 0.9,
//!   "issues": [{"severity": "minor", "location": "msg:1", "message": "Say which parser."}]
//! }"#, None).unwrap();
//! let Reviews::Single(review) = document.reviews else { unreachable!() };
//!
//! let scorer = Scorer::new(&rubric).unwrap();
//! let evaluation = scorer.score(&review, Some("Parse dates in UTC")).unwrap();
//! assert_eq!(evaluation.weighted_score, 3.2); // 0.6 x 2 + 0.4 x 5
//! assert_eq!(evaluation.final_score, 2.5); // accuracy below 3 caps it
//! assert_eq!(evaluation.verdict(), Verdict::Unclear);
//! assert_eq!(evaluation.suggestions[0].file.as_deref(), Some("msg"));
//!
//! // A negative pattern in the artifact fails it, whatever the scores.
//! let wip = scorer.score(&review, Some("WIP: parse dates")).unwrap();
//! assert_eq!(wip.verdict(), Verdict::Fail);
//! assert_eq!(wip.negative_matches[0].matched, "WIP");
//!
//! // Scores outside the scale are errors that name the field.
//! let bad = parse_document("rubric_scores: {accuracy: 6, brevity: 4}", None).unwrap();
//! let Reviews::Single(bad) = bad.reviews else { unreachable!() };
//! let error = scorer.score(&bad, None).unwrap_err();
//! assert_eq!(error.problems()[0].field, "rubric_scores.accuracy");
//! ```

mod council;
mod document;
mod error;
mod evaluate;
mod input;
mod negative;
mod number;
mod reason;
mod report;
mod review;

pub use council::{CouncilEvaluation, score_council};
pub use document::Format;
pub use error::{ParseError, Position, Problem, ScoreError};
pub use evaluate::{CriterionResult, Evaluation, RaisedFlag, Scorer, Verdict, score};
pub use input::{ReviewDocument, Reviews, parse_document};
pub use negative::PatternMatch;
pub use number::format_score;
pub use reason::Reason;
pub use review::{Issue, Review, Severity};
