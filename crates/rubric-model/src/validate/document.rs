//! Whole-document checks: identity fields, the scale, ceilings, scoring thresholds and
//! the calibration dataset reference.

use super::{num, uri::uri_reference_problem};
use crate::pointer;
use crate::rule::{LintIssue, Rule};
use crate::suggest::closest;
use crate::types::{Rubric, Scale, Weight};

/// Largest number of points a scale may have: every point needs an anchor.
const MAX_SCALE_POINTS: u32 = 101;

/// True when the scale is a range that anchors can cover; every check that measures
/// against the scale waits for this, so that a broken scale is one error, not twenty.
pub(super) fn scale_is_usable(scale: Scale) -> bool {
    scale.min < scale.max && scale.points() <= MAX_SCALE_POINTS
}

pub(super) fn check(rubric: &Rubric, issues: &mut Vec<LintIssue>) {
    check_identifier(&rubric.rubric_id, "/rubric_id", "rubric_id", issues);
    if rubric.name.trim().is_empty() {
        issues.push(
            LintIssue::error(Rule::Schema, "/name", "name is empty")
                .with_hint("give the rubric a human-readable name"),
        );
    }
    if let Some((message, hint)) = version_problem(&rubric.version) {
        issues.push(LintIssue::error(Rule::Version, "/version", message).with_hint(hint));
    }
    check_identifier(&rubric.artifact_type, "/artifact_type", "artifact_type", issues);
    let scale = rubric.scale;
    if scale.min >= scale.max {
        issues.push(
            LintIssue::error(
                Rule::Scale,
                "/scale",
                format!("scale {}..{} has no range: min must be below max", scale.min, scale.max),
            )
            .with_hint("for example `scale: {min: 1, max: 5}`"),
        );
    } else if scale.points() > MAX_SCALE_POINTS {
        issues.push(
            LintIssue::error(
                Rule::Scale,
                "/scale",
                format!(
                    "scale {}..{} has {} points; at most {MAX_SCALE_POINTS} are allowed",
                    scale.min,
                    scale.max,
                    scale.points()
                ),
            )
            .with_hint("every point needs an anchor; use a 1..5 or 1..10 scale"),
        );
    }
}

/// Checks a lower snake_case identifier (`rubric_id`, `artifact_type`, names).
pub(super) fn check_identifier(value: &str, at: &str, field: &str, issues: &mut Vec<LintIssue>) {
    let mut chars = value.chars();
    let valid = chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if !valid {
        issues.push(
            LintIssue::error(
                Rule::Schema,
                at,
                format!("{field} `{value}` is not lower snake_case (^[a-z][a-z0-9_]*$)"),
            )
            .with_hint(identifier_hint(value)),
        );
    }
}

/// NAME: each name in `names` (the items of the list at `/list`) is defined once; a
/// repeat points back at the first definition.
pub(super) fn check_unique_names<'a>(
    names: impl Iterator<Item = &'a str>,
    list: &str,
    noun: &str,
    hint: &str,
    issues: &mut Vec<LintIssue>,
) {
    let mut first_seen: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for (index, name) in names.enumerate() {
        match first_seen.get(name) {
            Some(&first) => issues.push(
                LintIssue::error(
                    Rule::Name,
                    format!("/{list}/{index}/name"),
                    format!("{noun} `{name}` is defined twice"),
                )
                .with_hint(hint)
                .with_related(format!("/{list}/{first}/name"), "first defined here"),
            ),
            None => {
                first_seen.insert(name, index);
            }
        }
    }
}

/// A fix hint for a name that is not lower snake_case, suggesting the nearest valid name.
///
/// ```
/// use revcal_rubric_model::validate::identifier_hint;
/// assert!(identifier_hint("User-Story v1").contains("`user_story_v1`"));
/// ```
pub fn identifier_hint(value: &str) -> String {
    let suggestion: String = value
        .trim()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '_' })
        .collect();
    let suggestion = suggestion.trim_start_matches(|c: char| c == '_' || c.is_ascii_digit());
    if suggestion.is_empty() {
        "use lower snake_case: a letter, then letters, digits or `_`".to_owned()
    } else {
        format!("use lower snake_case, e.g. `{suggestion}`")
    }
}

/// Why `version` is not `MAJOR.MINOR.PATCH`, with a hint, or `None` when it is.
///
/// ```
/// use revcal_rubric_model::validate::version_problem;
/// assert!(version_problem("1.0.0").is_none());
/// assert!(version_problem("1.0").unwrap().1.contains("1.0.0"));
/// assert!(version_problem("v1.0.0").unwrap().1.contains("1.0.0"));
/// assert!(version_problem("1.0.0-beta").is_some());
/// ```
pub fn version_problem(version: &str) -> Option<(String, String)> {
    let is_number = |part: &str| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit());
    let parts: Vec<&str> = version.split('.').collect();
    if parts.len() == 3 && parts.iter().all(|p| is_number(p)) {
        return None;
    }
    let message = format!("version `{version}` is not MAJOR.MINOR.PATCH");
    let trimmed = version.trim().trim_start_matches(['v', 'V']);
    let core = trimmed.split(['-', '+']).next().unwrap_or(trimmed);
    let mut numbers: Vec<&str> = core.split('.').collect();
    let hint = if numbers.iter().all(|p| is_number(p)) && numbers.len() <= 3 {
        while numbers.len() < 3 {
            numbers.push("0");
        }
        let fixed = numbers.join(".");
        if trimmed.len() != core.len() {
            format!("pre-release and build tags are not allowed: write `{fixed}`")
        } else if version.trim().starts_with(['v', 'V']) {
            format!("drop the `v`: write `{fixed}` (quoted in YAML if it looks like a number)")
        } else {
            format!("write `\"{fixed}\"`")
        }
    } else {
        "write three numbers separated by dots, e.g. `\"1.0.0\"`".to_owned()
    };
    Some((message, hint))
}

/// CEILING: every ceiling names a criterion of the rubric.
pub(super) fn check_ceiling_criteria(rubric: &Rubric, issues: &mut Vec<LintIssue>) {
    let names: Vec<&str> = rubric.criteria.iter().map(|c| c.name.as_str()).collect();
    for (index, ceiling) in rubric.ceilings.iter().enumerate() {
        let at = pointer::build(["ceilings".to_owned(), index.to_string()]);
        if rubric.criterion(&ceiling.criterion).is_none() {
            let hint = match closest(&ceiling.criterion, names.iter().copied()) {
                Some(near) => format!("did you mean `{near}`?"),
                None => format!("criteria are: {}", names.join(", ")),
            };
            issues.push(
                LintIssue::error(
                    Rule::Ceiling,
                    pointer::join(&at, "criterion"),
                    format!(
                        "ceiling names criterion `{}`, which this rubric does not define",
                        ceiling.criterion
                    ),
                )
                .with_hint(hint),
            );
        }
    }
}

pub(super) fn check_ceilings(rubric: &Rubric, issues: &mut Vec<LintIssue>) {
    check_ceiling_criteria(rubric, issues);
    let scale = rubric.scale;
    for (index, ceiling) in rubric.ceilings.iter().enumerate() {
        let at = pointer::build(["ceilings".to_owned(), index.to_string()]);
        for (field, value) in [("below", ceiling.below), ("cap", ceiling.cap)] {
            if !scale.contains(value) {
                issues.push(
                    LintIssue::error(
                        Rule::Ceiling,
                        pointer::join(&at, field),
                        format!(
                            "ceiling {field} {} is outside the scale {}..{}",
                            num(value),
                            scale.min,
                            scale.max
                        ),
                    )
                    .with_hint(format!("pick a value between {} and {}", scale.min, scale.max)),
                );
            }
        }
        if scale.contains(ceiling.below) && ceiling.below <= f64::from(scale.min) {
            issues.push(
                LintIssue::warning(
                    Rule::Ceiling,
                    pointer::join(&at, "below"),
                    format!(
                        "ceiling never applies: no score is below {}, the scale's minimum",
                        num(ceiling.below)
                    ),
                )
                .with_hint("raise `below`, or remove the ceiling"),
            );
        }
    }
}

pub(super) fn check_scoring(rubric: &Rubric, issues: &mut Vec<LintIssue>) {
    let scale = rubric.scale;
    let scoring = &rubric.scoring;
    let inside = |field: &str, value: f64, issues: &mut Vec<LintIssue>| {
        if !scale.contains(value) {
            issues.push(
                LintIssue::error(
                    Rule::Threshold,
                    format!("/scoring/{field}"),
                    format!("{field} {} is outside the scale {}..{}", num(value), scale.min, scale.max),
                )
                .with_hint(format!("pick a value between {} and {}", scale.min, scale.max)),
            );
        }
    };
    inside("pass_threshold", scoring.pass_threshold, issues);
    if let Some(minimum) = scoring.essential_minimum {
        inside("essential_minimum", minimum, issues);
        if !rubric.criteria.iter().any(|c| c.weight == Weight::Essential) {
            issues.push(
                LintIssue::warning(
                    Rule::Threshold,
                    "/scoring/essential_minimum",
                    "essential_minimum has no effect: no criterion is essential",
                )
                .with_hint("mark a criterion `weight: essential`, or remove essential_minimum"),
            );
        }
    }
    if !(0.0..=1.0).contains(&scoring.confidence_threshold) {
        issues.push(
            LintIssue::error(
                Rule::Schema,
                "/scoring/confidence_threshold",
                format!("confidence_threshold {} is outside 0..1", num(scoring.confidence_threshold)),
            )
            .with_hint("confidence is a probability; the default is 0.7"),
        );
    }
}

pub(super) fn check_calibration_dataset(rubric: &Rubric, issues: &mut Vec<LintIssue>) {
    if let Some(reference) = &rubric.calibration_dataset
        && let Some((message, hint)) = uri_reference_problem(reference)
    {
        issues.push(
            LintIssue::error(
                Rule::CalibrationDataset,
                "/calibration_dataset",
                format!("calibration_dataset `{reference}` is not a valid URI reference: {message}"),
            )
            .with_hint(hint),
        );
    }
}
