//! Errors of the mutation engine.

use std::path::PathBuf;

/// What can go wrong while generating, selecting or applying mutants.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MutateError {
    /// The file's extension belongs to no supported language.
    #[error("{path}: unsupported file type (expected .rs, .js, .mjs, .cjs, .jsx or .py)")]
    UnsupportedLanguage {
        /// The path as given.
        path: PathBuf,
    },
    /// The compiled grammar does not match the tree-sitter runtime.
    #[error("{language}: the tree-sitter grammar cannot be loaded: {message}")]
    Grammar {
        /// The language whose grammar failed.
        language: &'static str,
        /// The runtime's explanation.
        message: String,
    },
    /// The file is larger than [`Options::max_file_bytes`](crate::Options::max_file_bytes).
    #[error(
        "{path}: {size} bytes is larger than the limit of {limit} bytes; raise `max_file_bytes` to mutate it"
    )]
    FileTooLarge {
        /// The path as given.
        path: PathBuf,
        /// The file's size in bytes.
        size: usize,
        /// The configured limit.
        limit: usize,
    },
    /// tree-sitter gave up on the file (it only does so when cancelled or out of memory).
    #[error("{path}: tree-sitter could not parse the file")]
    ParseFailed {
        /// The path as given.
        path: PathBuf,
    },
    /// A mutant's byte range lies outside the source it is applied to (or splits a character).
    #[error("mutant {id} ({at}): bytes {start_byte}..{end_byte} are outside the {len}-byte source")]
    OutOfRange {
        /// The mutant's id.
        id: String,
        /// The mutant's `file:line:column`.
        at: String,
        /// Start of the range.
        start_byte: usize,
        /// End of the range.
        end_byte: usize,
        /// Length of the source.
        len: usize,
    },
    /// The source at a mutant's range is not the mutant's `original` text: the file changed
    /// since the mutant was generated, or the mutant belongs to another file.
    #[error(
        "mutant {id} ({at}): expected `{expected}` at bytes {start_byte}..{end_byte}, found `{found}`; the file changed since the mutant was generated"
    )]
    OriginalMismatch {
        /// The mutant's id.
        id: String,
        /// The mutant's `file:line:column`.
        at: String,
        /// Start of the range.
        start_byte: usize,
        /// End of the range.
        end_byte: usize,
        /// The mutant's `original`.
        expected: String,
        /// What the source holds there.
        found: String,
    },
    /// Two mutants given to [`apply`](fn@crate::apply) change overlapping bytes.
    #[error(
        "mutants {first} ({first_at}) and {second} ({second_at}) overlap; apply them one at a time or pick non-overlapping mutants with `select`"
    )]
    Overlap {
        /// The id of the mutant that starts first.
        first: String,
        /// `file:line:column` of the first mutant.
        first_at: String,
        /// The id of the other mutant.
        second: String,
        /// `file:line:column` of the other mutant.
        second_at: String,
    },
    /// A category name that is not one of [`Category::ALL`](crate::Category::ALL).
    #[error("unknown category `{name}`; expected one of: {expected}")]
    UnknownCategory {
        /// The name given.
        name: String,
        /// The valid names, comma-separated.
        expected: String,
    },
    /// An operator name that no language defines.
    #[error("unknown operator `{name}`; `revcal mutate --list-operators` lists them")]
    UnknownOperator {
        /// The name given.
        name: String,
    },
}
