//! Semantic checks: the rules of the format that a JSON Schema cannot express.
//!
//! [`validate`] runs every check and returns every issue; it never stops at the first.
//! Checks that the schema also makes (id patterns, the version format) run here too, so
//! that a rubric built in code is held to the same contract as one loaded from a file.

mod criteria;
mod document;
mod focus;
mod patterns;
mod uri;

pub use document::{identifier_hint, version_problem};
pub use patterns::{escape_literal_dots, literal_dot_warning};
pub use uri::uri_reference_problem;

use crate::rule::LintIssue;
use crate::types::Rubric;

/// Runs every semantic check on `rubric` and returns all issues found, errors and
/// warnings, in document order.
///
/// ```
/// use revcal_rubric_model::{Rubric, Rule, validate};
/// let rubric: Rubric = serde_yaml::from_str(r#"
/// rubric_id: tiny_v1
/// name: Tiny
/// version: "1.0"
/// artifact_type: notes
/// criteria:
///   - name: clarity
///     description: Can a reader act on it?
///     weight: essential
///     threshold: 3
///     anchors: {1: Unreadable, 2: Vague, 3: Usable, 4: Clear, 5: Crisp}
///     examples: {score_1: "stuff", score_5: "Rename `id` to `user_id` in api.rs:12."}
/// scoring: {pass_threshold: 3.5}
/// "#).unwrap();
/// let issues = validate(&rubric);
/// assert_eq!(issues.len(), 1);
/// assert_eq!(issues[0].rule, Rule::Version);
/// assert_eq!(issues[0].pointer, "/version");
/// ```
pub fn validate(rubric: &Rubric) -> Vec<LintIssue> {
    let mut issues = Vec::new();
    document::check(rubric, &mut issues);
    // Every range check measures against the scale: with a broken scale they would only
    // repeat its error.
    let scale_is_valid = document::scale_is_usable(rubric.scale);
    criteria::check(rubric, scale_is_valid, &mut issues);
    patterns::check(rubric, &mut issues);
    if scale_is_valid {
        document::check_ceilings(rubric, &mut issues);
        document::check_scoring(rubric, &mut issues);
    } else {
        document::check_ceiling_criteria(rubric, &mut issues);
    }
    focus::check(rubric, &mut issues);
    document::check_calibration_dataset(rubric, &mut issues);
    issues
}

/// Formats a score for messages: `7` rather than `7.0`, `3.5` as is.
pub(crate) fn num(value: f64) -> String {
    if value.fract() == 0.0 && value.abs() < 1e15 { format!("{value:.0}") } else { format!("{value}") }
}
