//! Plants chosen by the mutation engine: every target file's mutants, a seeded stratified
//! sample of them, each turned into a one-line plant (a changed line, or a removed one).

use crate::error::CalibrateError;
use crate::plants::{Plant, from_mutant};
use std::path::Path;

/// Up to `n` plants from the mutants of `targets` (relative paths read from `sources`). Files
/// that cannot be read or parsed are skipped with a warning in the log.
pub(crate) fn select_plants(
    sources: &dyn crate::plants::Sources,
    targets: &[String],
    n: usize,
    seed: u64,
    profile: revcal_mutate::Profile,
) -> Result<Vec<Plant>, CalibrateError> {
    let options = revcal_mutate::Options { profile, ..revcal_mutate::Options::default() };
    let mut candidates = Vec::new();
    for target in targets {
        let source = match sources.read_text(target, options.max_file_bytes as u64) {
            Ok(source) => source,
            Err(error) => {
                tracing::warn!(file = %target, %error, "skipped: the target cannot be mutated");
                continue;
            }
        };
        match revcal_mutate::generate_mutants(Path::new(target), &source, &options) {
            // What can be planted: one line changed, or one line of code removed.
            Ok(mutants) => candidates.extend(mutants.into_iter().filter(revcal_mutate::Mutant::is_one_line)),
            Err(error) => tracing::warn!(file = %target, %error, "skipped: no mutants"),
        }
    }
    Ok(revcal_mutate::select(&candidates, n, seed)
        .iter()
        .filter_map(|mutant| from_mutant(mutant, &mutant.file))
        .collect())
}
