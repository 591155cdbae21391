//! The clean rounds' changes: neutral edits (`revcal_mutate::neutral_edits`, a mirrored
//! comparison that changes no behaviour) chosen from the seed, each as a one-line plant that
//! carries no bug, so that a clean round is planted, built and reviewed exactly as a planted
//! one is.

use crate::plants::{Plant, Sources, overlaps};
use std::path::Path;

/// The operator name of a neutral edit (never a bug category's operator).
pub(crate) const NEUTRAL_OPERATOR: &str = "neutral-mirror";
/// The category a neutral edit carries as a plant: it is never counted as one (clean rounds
/// are reported apart, in `rounds` and the false-alarm figures).
const NEUTRAL_CATEGORY: &str = "none";

/// Up to `n` neutral edits in `targets` (relative paths read from `sources`), on lines no
/// plant of `plants` changes, chosen deterministically from `seed`. Files that cannot be read
/// or parsed are skipped with a note in the log.
pub(crate) fn choose(
    sources: &dyn Sources,
    targets: &[String],
    plants: &[Plant],
    n: usize,
    seed: u64,
) -> Vec<Plant> {
    let options = revcal_mutate::Options::default();
    let mut sites = Vec::new();
    for target in targets {
        let source = match sources.read_text(target, options.max_file_bytes as u64) {
            Ok(source) => source,
            Err(error) => {
                tracing::info!(file = %target, %error, "no neutral edits: the target cannot be read");
                continue;
            }
        };
        match revcal_mutate::neutral_edits(Path::new(target), &source, &options) {
            Ok(edits) => sites.extend(
                edits
                    .into_iter()
                    .filter(|edit| edit.line == edit.end_line && !edit.original_line.contains('\n'))
                    .filter_map(|edit| as_plant(&edit))
                    .filter(|(_, edit)| !plants.iter().any(|plant| overlaps(plant, edit))),
            ),
            Err(error) => tracing::info!(file = %target, %error, "no neutral edits"),
        }
    }
    let chosen = revcal_mutate::select_neutral(
        &sites.iter().map(|(edit, _)| edit.clone()).collect::<Vec<_>>(),
        n,
        seed,
    );
    chosen
        .iter()
        .filter_map(|edit| sites.iter().find(|(site, _)| site == edit).map(|(_, plant)| plant.clone()))
        .collect()
}

/// A neutral edit as a one-line plant (with the edit kept beside it for the selection).
fn as_plant(edit: &revcal_mutate::NeutralEdit) -> Option<(revcal_mutate::NeutralEdit, Plant)> {
    let line = u32::try_from(edit.line).ok()?;
    let plant = Plant::new(
        edit.file.clone(),
        line,
        NEUTRAL_CATEGORY,
        NEUTRAL_OPERATOR,
        edit.original_line.clone(),
        edit.mutated_line.clone(),
    )
    .with_defect(format!("none: `{}` written `{}`, which behaves the same", edit.original, edit.replacement));
    Some((edit.clone(), plant))
}
