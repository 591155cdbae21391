//! The planted bug: where, what, and the sentence that describes it.

use crate::{Category, Language};
use serde::{Deserialize, Serialize};

/// One planted bug. Its JSON form has exactly the keys listed in [docs/mutation.md][json],
/// in this order.
///
/// Positions: `line`/`end_line` are 1-based; `column`/`end_column` are 1-based and count
/// characters (Unicode scalar values), not bytes; `end_column` is exclusive (the column just
/// past the last replaced character). `start_byte..end_byte` is the byte range of `original`
/// in the file.
///
/// [json]: https://github.com/revcal/revcal/blob/main/docs/mutation.md#the-mutant-and-its-json-form
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Mutant {
    /// Stable id: a hash of the file, the byte range, the operator and the replacement.
    pub id: String,
    /// The file's path as given to [`generate_mutants`](crate::generate_mutants).
    pub file: String,
    /// The file's language.
    pub language: Language,
    /// 1-based line of the first replaced character.
    pub line: usize,
    /// 1-based column (in characters) of the first replaced character.
    pub column: usize,
    /// 1-based line of the end of the replaced text.
    pub end_line: usize,
    /// 1-based column (in characters) just past the replaced text.
    pub end_column: usize,
    /// Byte offset where `original` starts.
    pub start_byte: usize,
    /// Byte offset where `original` ends (exclusive).
    pub end_byte: usize,
    /// The kind of defect.
    pub category: Category,
    /// The operator that made the mutant (e.g. `comparison-boundary`).
    pub operator: String,
    /// One sentence: what is now wrong and its likely effect.
    pub description: String,
    /// The replaced source text: bytes `start_byte..end_byte` of the file.
    pub original: String,
    /// The text that takes its place.
    pub replacement: String,
    /// The source lines that hold `original`, without the final line break: `line..=end_line`,
    /// or `line..end_line` when `original` ends with a line break (removed lines).
    pub original_line: String,
    /// The same lines once `replacement` is applied; empty when the lines are removed
    /// (see [`Mutant::removes_lines`]).
    pub mutated_line: String,
}

impl Mutant {
    /// `file:line:column`, for messages.
    pub fn location(&self) -> String {
        format!("{}:{}:{}", self.file, self.line, self.column)
    }

    /// True when the two mutants change overlapping bytes of the same file.
    pub fn overlaps(&self, other: &Mutant) -> bool {
        self.file == other.file && ranges_overlap(self.byte_range(), other.byte_range())
    }

    /// True when the mutant removes whole lines: a deleted statement takes its line, line
    /// break included, so that no blank indentation is left (`original` starts at column 1
    /// and ends with a line break, `replacement` is empty, `mutated_line` is empty).
    pub fn removes_lines(&self) -> bool {
        self.column == 1 && self.replacement.is_empty() && self.original.ends_with('\n')
    }

    /// True when a calibration can plant the mutant as a change of one line: it changes one
    /// line, or removes one line of code (with the blank line beside it that would otherwise
    /// be left doubled).
    pub fn is_one_line(&self) -> bool {
        if self.removes_lines() {
            return self.original_line.lines().filter(|line| !line.trim().is_empty()).count() == 1;
        }
        self.line == self.end_line && !self.original_line.contains('\n')
    }

    /// The byte range of `original`.
    pub fn byte_range(&self) -> std::ops::Range<usize> {
        self.start_byte..self.end_byte
    }
}

/// Half-open ranges overlap when each starts before the other ends. Two empty ranges at
/// the same offset also overlap: both would insert at one place.
pub(crate) fn ranges_overlap(a: std::ops::Range<usize>, b: std::ops::Range<usize>) -> bool {
    (a.start < b.end && b.start < a.end) || (a.start == b.start)
}

/// The stable id: FNV-1a (64 bits) over the parts, separated so that no two different part
/// lists hash the same input. A hand-written hash keeps ids identical across platforms and
/// dependency upgrades.
pub(crate) fn mutant_id(file: &str, start: usize, end: usize, operator: &str, replacement: &str) -> String {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    let mut hash = OFFSET;
    let start = start.to_string();
    let end = end.to_string();
    for part in [file, &start, &end, operator, replacement] {
        for byte in part.bytes().chain([0xff]) {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(PRIME);
        }
    }
    format!("{hash:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_stable_and_sensitive_to_every_part() {
        let base = mutant_id("a.rs", 1, 2, "op", "x");
        assert_eq!(base, mutant_id("a.rs", 1, 2, "op", "x"));
        assert_eq!(base.len(), 16);
        for other in [
            mutant_id("b.rs", 1, 2, "op", "x"),
            mutant_id("a.rs", 11, 2, "op", "x"),
            mutant_id("a.rs", 1, 22, "op", "x"),
            mutant_id("a.rs", 1, 2, "op2", "x"),
            mutant_id("a.rs", 1, 2, "op", "y"),
        ] {
            assert_ne!(base, other);
        }
    }

    #[test]
    fn overlap_is_strict_for_non_empty_ranges() {
        assert!(ranges_overlap(0..5, 4..6));
        assert!(!ranges_overlap(0..5, 5..6));
        assert!(ranges_overlap(3..3, 3..3));
    }
}
