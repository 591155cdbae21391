//! What can go wrong in a review. A review that fails is an error, never an empty review.

use std::path::PathBuf;

/// An error of the built-in reviewer.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReviewError {
    /// git could not show the change.
    #[error("cannot read the change in {}: {message}", dir.display())]
    Git {
        /// Where git ran.
        dir: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// A revision that git would read as an option, or that is empty.
    #[error("`{rev}` is not a revision")]
    Rev {
        /// The revision given.
        rev: String,
    },
    /// git's diff could not be read.
    #[error("cannot read git's diff at line {line}: {message}")]
    Diff {
        /// The diff's line.
        line: usize,
        /// What was wrong.
        message: String,
    },
    /// A file to review could not be read.
    #[error("cannot read {}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A file to review is not UTF-8 text.
    #[error("{} is not UTF-8 text", path.display())]
    NotText {
        /// The file.
        path: PathBuf,
    },
    /// The change holds nothing to review (no file with a line in the new version).
    #[error("the change holds nothing to review (no added or modified text file)")]
    Empty,
    /// The change is larger than the reviewer is allowed to send.
    #[error(
        "the change is {bytes} bytes, more than the {max} a review may send: review fewer files, or raise the limit"
    )]
    TooLarge {
        /// Its size.
        bytes: usize,
        /// The limit.
        max: usize,
    },
    /// A focus area the rubric lacks.
    #[error("no focus area `{name}` in rubric `{rubric}`; its focus areas are: {known}")]
    UnknownFocus {
        /// The name asked for.
        name: String,
        /// The rubric.
        rubric: String,
        /// Its areas, comma-separated (`none` when it has none).
        known: String,
    },
    /// The provider gave no usable answer (after retries), or the budget ran out, or the
    /// answer did not fit the review's schema.
    #[error("reviewer {reviewer} gave no review")]
    Model {
        /// `provider:model`.
        reviewer: String,
        /// Why.
        #[source]
        source: revcal_judge::JudgeError,
    },
}
