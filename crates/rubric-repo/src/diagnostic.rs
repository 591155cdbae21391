//! Diagnostics: an issue placed at a file, line and column.

use crate::marks::Span;
use revcal_rubric_model::{LintSeverity, Rule};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// One problem in one rubric file, ready to show to its author.
///
/// Its JSON form starts with exactly `file, line, column, pointer, rule, severity,
/// message, hint`; `end_line`, `end_column` and `related` follow.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    /// The file, as found by the loader (relative paths stay relative).
    #[serde(serialize_with = "serialize_path")]
    pub file: PathBuf,
    /// 1-based line of the offending node.
    pub line: usize,
    /// 1-based column (in characters) of the offending node.
    pub column: usize,
    /// JSON pointer to the offending node (`""` for the whole document).
    pub pointer: String,
    /// The rule that was broken.
    pub rule: Rule,
    /// Error or warning.
    pub severity: LintSeverity,
    /// What is wrong.
    pub message: String,
    /// How to fix it, when there is something useful to say.
    pub hint: Option<String>,
    /// Line where the offending node ends.
    pub end_line: usize,
    /// Column (exclusive) where the offending node ends.
    pub end_column: usize,
    /// Other places the message refers to (the first definition of a duplicate, ...).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub related: Vec<RelatedLocation>,
}

/// A second place that a diagnostic refers to, possibly in another file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RelatedLocation {
    /// The file.
    #[serde(serialize_with = "serialize_path")]
    pub file: PathBuf,
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
    /// What is there ("first defined here").
    pub note: String,
}

impl Diagnostic {
    pub(crate) fn new(
        file: &Path,
        span: Span,
        pointer: String,
        rule: Rule,
        severity: LintSeverity,
        message: String,
    ) -> Self {
        Diagnostic {
            file: file.to_path_buf(),
            line: span.start.line,
            column: span.start.column,
            pointer,
            rule,
            severity,
            message,
            hint: None,
            end_line: span.end.line,
            end_column: span.end.column,
            related: Vec::new(),
        }
    }

    pub(crate) fn with_hint(mut self, hint: Option<String>) -> Self {
        self.hint = hint;
        self
    }

    /// True for errors (warnings are false).
    pub fn is_error(&self) -> bool {
        self.severity == LintSeverity::Error
    }

    /// The dotted field path of the pointer, e.g. `criteria[0].threshold`.
    pub fn field(&self) -> String {
        revcal_rubric_model::pointer::field_path(&self.pointer)
    }
}

fn serialize_path<S: serde::Serializer>(path: &Path, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(&path.to_string_lossy())
}
