//! Writing mutants into source text.

use crate::{Mutant, MutateError};

/// Returns `source` with every mutant's `replacement` written over its `original`.
///
/// The mutants must all belong to `source` and must not overlap: each mutant's range is
/// checked against the source (it must hold the mutant's `original`), and two mutants that
/// change overlapping bytes are refused with [`MutateError::Overlap`]. The order of
/// `mutants` does not matter.
pub fn apply(source: &str, mutants: &[Mutant]) -> Result<String, MutateError> {
    let mut ordered: Vec<&Mutant> = mutants.iter().collect();
    ordered.sort_by_key(|mutant| (mutant.start_byte, mutant.end_byte));
    for mutant in &ordered {
        check_original(source, mutant)?;
    }
    for pair in ordered.windows(2) {
        if crate::mutant::ranges_overlap(pair[0].byte_range(), pair[1].byte_range()) {
            return Err(MutateError::Overlap {
                first: pair[0].id.clone(),
                first_at: pair[0].location(),
                second: pair[1].id.clone(),
                second_at: pair[1].location(),
            });
        }
    }
    let mut output = String::with_capacity(source.len() + 64);
    let mut copied = 0;
    for mutant in ordered {
        output.push_str(&source[copied..mutant.start_byte]);
        output.push_str(&mutant.replacement);
        copied = mutant.end_byte;
    }
    output.push_str(&source[copied..]);
    Ok(output)
}

/// The source must hold the mutant's `original` at its range, on character boundaries.
fn check_original(source: &str, mutant: &Mutant) -> Result<(), MutateError> {
    let Some(found) = source.get(mutant.start_byte..mutant.end_byte) else {
        return Err(MutateError::OutOfRange {
            id: mutant.id.clone(),
            at: mutant.location(),
            start_byte: mutant.start_byte,
            end_byte: mutant.end_byte,
            len: source.len(),
        });
    };
    if found != mutant.original {
        return Err(MutateError::OriginalMismatch {
            id: mutant.id.clone(),
            at: mutant.location(),
            start_byte: mutant.start_byte,
            end_byte: mutant.end_byte,
            expected: mutant.original.clone(),
            found: found.chars().take(80).collect(),
        });
    }
    Ok(())
}
