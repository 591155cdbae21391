//! What can be wrong with a model's answer; every problem is an error, never a match.

/// What is wrong with a provider's answer (every one is an error, never a match).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum AnswerProblem {
    /// The body is not JSON (an HTML page from a proxy, a cut body).
    NotJson(String),
    /// The body is JSON but not this provider's answer shape.
    Shape(String),
    /// The output cap was reached before the answer was complete.
    Truncated(String),
    /// The model (or a safety filter) refused.
    Refused(String),
    /// No text at all.
    Empty(String),
}

impl std::fmt::Display for AnswerProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AnswerProblem::NotJson(start) => write!(f, "the answer is not JSON: {start:?}"),
            AnswerProblem::Shape(what) => write!(f, "the answer is not what was asked for: {what}"),
            AnswerProblem::Truncated(what) => write!(f, "the answer was cut off ({what}): not a verdict"),
            AnswerProblem::Refused(what) => write!(f, "the model refused to answer ({what})"),
            AnswerProblem::Empty(what) => write!(f, "the answer is empty ({what})"),
        }
    }
}
