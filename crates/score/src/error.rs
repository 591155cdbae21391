//! Errors: a document that cannot be read, and a review that does not fit its rubric.

use crate::document::Format;
use std::fmt;

/// A 1-based line and column (in characters) in a review document.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Position {
    /// Line, from 1.
    pub line: usize,
    /// Column, from 1.
    pub column: usize,
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.column)
    }
}

/// A review document that is not valid JSON or YAML.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{message}", position_prefix(*position))]
pub struct ParseError {
    /// The syntax the document was read as.
    pub format: Format,
    /// Where the parser stopped, when it knows.
    pub position: Option<Position>,
    /// The parser's description of the problem.
    pub message: String,
}

fn position_prefix(position: Option<Position>) -> String {
    position.map(|p| format!("line {}, column {}: ", p.line, p.column)).unwrap_or_default()
}

/// One thing wrong with a review: the field (a path such as `rubric_scores.accuracy`,
/// `issues[2].line`, or `[1].confidence` for the second member of a council), and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// Path of the offending field from the document root.
    pub field: String,
    /// Which council member (0-based) the field belongs to, for a council.
    pub member: Option<usize>,
    /// What is wrong and, where it helps, what is allowed.
    pub message: String,
    /// Where the field is written, when the review came from a document.
    pub position: Option<Position>,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(position) = self.position {
            write!(f, "line {}, column {}: ", position.line, position.column)?;
        }
        if let Some(member) = self.member {
            write!(f, "council member {member}: ")?;
        }
        write!(f, "`{}`: {}", self.field, self.message)
    }
}

/// Why a review could not be read or scored.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ScoreError {
    /// The document is not valid JSON or YAML.
    #[error("cannot parse the review as {format}: {0}", format = .0.format)]
    Parse(#[from] ParseError),
    /// The review breaks the format or does not fit the rubric: every problem found.
    #[error("invalid review: {}", list(problems))]
    Invalid {
        /// Each problem, in document order.
        problems: Vec<Problem>,
    },
    /// A council needs at least one member.
    #[error("a council needs at least one review; the array is empty")]
    EmptyCouncil,
    /// A fail pattern of the rubric does not compile (a validated rubric never has one).
    #[error("negative criterion `{criterion}`: fail pattern `{pattern}` does not compile: {cause}")]
    Pattern {
        /// The negative criterion.
        criterion: String,
        /// The pattern as written.
        pattern: String,
        /// The regex compiler's error (said in the message, so it is not also the error's `source`: a chain says it once).
        cause: regex::Error,
    },
}

impl ScoreError {
    /// The problems of an [`ScoreError::Invalid`] error (empty for the others).
    pub fn problems(&self) -> &[Problem] {
        match self {
            ScoreError::Invalid { problems } => problems,
            _ => &[],
        }
    }
}

fn list(problems: &[Problem]) -> String {
    problems.iter().map(Problem::to_string).collect::<Vec<_>>().join("; ")
}
