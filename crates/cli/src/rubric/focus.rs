//! `revcal rubric get ID --focus AREA`: a focus area's checks and red flags, as text to
//! paste into a reviewer's prompt (docs/rubric-format.md, "focus_areas").

use crate::args::DocumentFormat;
use crate::output::outln;
use anyhow::{Context, Result};
use revcal_rubric_model::{FocusArea, Rubric, suggest};

/// The areas named by `names` (case-insensitive, each once, in the order asked), or a
/// message naming the first unknown one with the rubric's areas.
pub(super) fn select<'r>(rubric: &'r Rubric, names: &[String]) -> Result<Vec<&'r FocusArea>, String> {
    let mut areas: Vec<&FocusArea> = Vec::new();
    for name in names.iter().map(|n| n.trim()).filter(|n| !n.is_empty()) {
        let Some(area) = rubric.focus_area(name) else {
            let known: Vec<&str> = rubric.focus_areas.iter().map(|a| a.name.as_str()).collect();
            let hint = if known.is_empty() {
                format!("rubric `{}` has no focus areas", rubric.key())
            } else {
                let lowered: Vec<String> = known.iter().map(|k| k.to_lowercase()).collect();
                match suggest::closest(&name.to_lowercase(), lowered.iter().map(String::as_str)) {
                    Some(near) => format!("did you mean `{near}`? Its focus areas are {}", known.join(", ")),
                    None => format!("its focus areas are {}", known.join(", ")),
                }
            };
            return Err(format!("no focus area `{name}` in rubric `{}`; {hint}", rubric.key()));
        };
        if !areas.iter().any(|seen| std::ptr::eq(*seen, area)) {
            areas.push(area);
        }
    }
    Ok(areas)
}

/// The areas in `format`: prompt text by default, or the areas as YAML or JSON.
pub(super) fn render(
    rubric: &Rubric,
    areas: &[&FocusArea],
    format: Option<DocumentFormat>,
) -> Result<String> {
    match format {
        None => Ok(prompt(rubric, areas)),
        Some(DocumentFormat::Json) => Ok(serde_json::to_string_pretty(areas)? + "\n"),
        Some(DocumentFormat::Yaml) => revcal_rubric_repo::to_yaml_string(&areas)
            .map_err(anyhow::Error::msg)
            .context("cannot write the focus areas as YAML"),
    }
}

/// Plain text a reviewer's prompt can include as is: what to check, which findings fail the
/// review, and how to raise them so that `revcal score` sees them.
fn prompt(rubric: &Rubric, areas: &[&FocusArea]) -> String {
    let mut out = String::new();
    let names: Vec<&str> = areas.iter().map(|a| a.name.as_str()).collect();
    outln!(out, "Focus of this review: {} ({})", names.join(", "), rubric.key());
    for area in areas {
        outln!(out);
        outln!(out, "## {}", area.name);
        outln!(out);
        outln!(out, "{}", area.description.trim());
        outln!(out);
        outln!(out, "Check that:");
        for check in &area.checks {
            outln!(out, "- {}", check.trim());
        }
        if !area.red_flags.is_empty() {
            outln!(out);
            outln!(out, "Red flags (any one of them fails the review):");
            for flag in &area.red_flags {
                outln!(out, "- {}: {}", flag.id, flag.description.trim());
            }
        }
    }
    outln!(out);
    outln!(out, "In your review, set `rubric_focus: [{}]`.", names.join(", "));
    outln!(
        out,
        "Raise a red flag by its id: `red_flags: [id, ...]`, or `red_flag: id` on the issue that shows it."
    );
    out
}
