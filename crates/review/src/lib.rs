//! The built-in LLM code reviewer of revcal (`revcal review`, `revcal calibrate --reviewer`).
//!
//! A [`Change`] (a commit's diff, a checkout against its base, or whole files) is shown to a
//! model with a prompt built from a rubric of the library (what a good review is, criterion
//! by criterion, plus the checks and red flags of the focus areas asked for); the change is
//! untrusted and sits inside a fence named by a fresh nonce. The model answers one JSON
//! object that must fit [`answer_schema`]: anything else is an error, never an empty review.
//! From the answer come the findings `revcal calibrate` reads
//! ([`ReviewAnswer::findings_document`]) and the review `revcal score` scores
//! ([`ReviewAnswer::review_document`]).
//!
//! The model is asked through the judge's client ([`revcal_judge::LlmJudge::ask_json`]):
//! the same providers and environment variables, retries, budget, cache and structured
//! output. A [`Council`] asks several models at once.
//!
//! ```
//! use revcal_review::{Change, answer_schema, parse_answer};
//! use revcal_rubric_model::Rubric;
//! use serde_json::json;
//!
//! let rubric: Rubric = serde_json::from_value(json!({
//!     "rubric_id": "tiny_review_v1", "name": "Tiny", "version": "1.0.0", "artifact_type": "code_review",
//!     "criteria": [{"name": "accuracy", "description": "Findings are real.", "weight": "essential",
//!                   "threshold": 3, "anchors": {"1": "Wrong", "3": "Mostly right", "5": "Right"},
//!                   "examples": {"score_1": "Claims a bug that cannot happen.", "score_5": "Names the real bug."}}],
//!     "scoring": {"pass_threshold": 3},
//! })).unwrap();
//! let change = Change::from_unified_diff(
//!     "diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-if n > 0:\n+if n >= 0:\n",
//! ).unwrap();
//! assert_eq!(change.files[0].changed_lines, vec![1]);
//!
//! // The provider is asked for JSON fitting this schema; here is what a model answered.
//! assert_eq!(answer_schema(&rubric, &[], 20)["required"][0], "findings");
//! let answer = json!({
//!     "findings": [{"file": "a.py", "line": 1, "severity": "major", "category": "bug",
//!                   "message": "`>=` lets n = 0 through", "suggestion": "", "repro": ""}],
//!     "rubric_scores": {"accuracy": 4}, "confidence": 0.8, "rationale": "One boundary bug.",
//! });
//! let review = parse_answer(&rubric, &[], &answer).unwrap();
//! assert_eq!(review.findings_document()["findings"][0]["line"], 1);
//! assert_eq!(review.review_document(&rubric, &[])["issues"][0]["severity"], "major");
//! // An answer that does not fit is an error naming the field.
//! let wrong = json!({"findings": [], "rubric_scores": {"accuracy": 9}, "confidence": 0.8, "rationale": ""});
//! assert!(parse_answer(&rubric, &[], &wrong).unwrap_err().contains("outside the scale"));
//! ```

mod answer;
mod change;
mod error;
pub mod prompt;
mod reviewer;

pub use answer::{FindingSeverity, MAX_FINDINGS, ReviewAnswer, ReviewFinding, answer_schema, parse_answer};
pub use change::{Change, ChangedFile, DEFAULT_CONTEXT_LINES, DEFAULT_MAX_CHANGE_BYTES};
pub use error::ReviewError;
pub use reviewer::{Council, LlmReviewer};
