//! Rubric types, their JSON Schema, and the semantic checks a schema cannot express.
//!
//! A rubric says how to score one kind of artifact (a code review, a user story, a test
//! plan): its criteria, what each point of the scale looks like, the thresholds that turn
//! scores into a verdict, and patterns that fail an artifact outright. This crate is pure
//! data and checks: it reads no files. `revcal-rubric-repo` loads rubric files and maps
//! the issues found here to file, line and column.
//!
//! ```
//! use revcal_rubric_model::{Rubric, Rule, LintSeverity, validate};
//!
//! let yaml = r#"
//! rubric_id: changelog_v1
//! name: Changelog entry
//! version: 1.0.0
//! artifact_type: changelog
//! criteria:
//!   - name: accuracy
//!     description: Does the entry describe what the change really does?
//!     weight: essential
//!     threshold: 3
//!     anchors: {1: Wrong, 2: Misleading, 3: Mostly right, 4: Right, 5: Right and precise}
//!     examples:
//!       score_1: "Fixed stuff."
//!       score_5: "Fix: `parse_date` no longer accepts 31 February (#412)."
//! negative_criteria:
//!   - name: no_vague_language
//!     fail_patterns: ["etc.", "misc"]
//! scoring: {pass_threshold: 3.5}
//! "#;
//! let rubric: Rubric = serde_yaml::from_str(yaml).unwrap();
//! assert_eq!(rubric.key(), "changelog_v1@1.0.0");
//!
//! let issues = validate(&rubric);
//! // `etc.` probably meant a literal dot: a warning, not an error.
//! assert_eq!(issues.len(), 1);
//! assert_eq!((issues[0].rule, issues[0].severity), (Rule::Pattern, LintSeverity::Warning));
//! assert_eq!(issues[0].pointer, "/negative_criteria/0/fail_patterns/0");
//! ```

mod anchor;
pub mod pointer;
mod rule;
mod schema_parts;
pub mod suggest;
mod text_map;
mod types;
pub mod validate;

pub use anchor::{AnchorKey, AnchorKeyError};
pub use rule::{LintIssue, LintSeverity, Related, Rule};
pub use schema_parts::{ANCHOR_KEY_PATTERN, EXAMPLE_KEY_PATTERN, json_schema, json_schema_text};
pub use text_map::TextMap;
pub use types::{
    Ceiling, Criterion, DEFAULT_CONFIDENCE_THRESHOLD, FocusArea, NegativeCriterion, RedFlag, Rubric, Scale,
    Scoring, Weight, compile_pattern,
};
pub use validate::validate;
