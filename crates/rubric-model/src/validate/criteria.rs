//! Per-criterion checks: names, anchors (RL-02), examples (RL-03), thresholds (RL-05)
//! and shares (SHARE).

use super::document::{check_identifier, check_unique_names};
use super::num;
use crate::anchor::AnchorKey;
use crate::pointer;
use crate::rule::{LintIssue, Rule};
use crate::types::{Criterion, Rubric, Scale};
use std::collections::HashMap;

/// Tolerance on the sum of shares.
const SHARE_TOLERANCE: f64 = 0.001;

pub(super) fn check(rubric: &Rubric, scale_is_valid: bool, issues: &mut Vec<LintIssue>) {
    if rubric.criteria.is_empty() {
        issues.push(
            LintIssue::error(
                Rule::Schema,
                "/criteria",
                "criteria is empty: a rubric needs at least one criterion",
            )
            .with_hint("add a criterion with name, description, weight, threshold, anchors and examples"),
        );
    }
    check_unique_names(
        rubric.criteria.iter().map(|c| c.name.as_str()),
        "criteria",
        "criterion",
        "give each criterion its own name, or merge the two",
        issues,
    );
    for (index, criterion) in rubric.criteria.iter().enumerate() {
        let at = pointer::build(["criteria".to_owned(), index.to_string()]);
        check_identifier(&criterion.name, &pointer::join(&at, "name"), "criterion name", issues);
        if criterion.description.trim().is_empty() {
            issues.push(
                LintIssue::error(
                    Rule::Schema,
                    pointer::join(&at, "description"),
                    "criterion description is empty",
                )
                .with_hint("say what the criterion measures"),
            );
        }
        if scale_is_valid && !rubric.scale.contains(criterion.threshold) {
            issues.push(
                LintIssue::error(
                    Rule::Threshold,
                    pointer::join(&at, "threshold"),
                    format!(
                        "threshold {} of `{}` is outside the scale {}..{}",
                        num(criterion.threshold),
                        criterion.name,
                        rubric.scale.min,
                        rubric.scale.max
                    ),
                )
                .with_hint(format!("pick a value between {} and {}", rubric.scale.min, rubric.scale.max)),
            );
        }
        let scale = scale_is_valid.then_some(rubric.scale);
        check_anchors(criterion, scale, &at, issues);
        check_examples(criterion, scale, &at, issues);
    }
    check_shares(rubric, issues);
}

/// RL-02. Without a usable scale only the entries themselves are checked.
fn check_anchors(criterion: &Criterion, scale: Option<Scale>, at: &str, issues: &mut Vec<LintIssue>) {
    let anchors_at = pointer::join(at, "anchors");
    // Which anchor key covers each point, to report overlaps against the first cover.
    let mut covered_by: HashMap<u32, String> = HashMap::new();
    for (key, text) in criterion.anchors.iter() {
        let key_at = pointer::join(&anchors_at, key);
        if text.trim().is_empty() {
            issues.push(
                LintIssue::error(
                    Rule::Anchors,
                    key_at.clone(),
                    format!("anchor `{key}` of `{}` is empty", criterion.name),
                )
                .with_hint("describe what an artifact at this score looks like"),
            );
        }
        let parsed = match AnchorKey::parse(key) {
            Ok(parsed) => parsed,
            Err(error) => {
                issues.push(
                    LintIssue::error(Rule::Anchors, key_at, error.to_string())
                        .with_hint("write a point such as `3` or an ascending band such as `\"9-10\"`"),
                );
                continue;
            }
        };
        let Some(scale) = scale else { continue };
        let points = parsed.points();
        if *points.start() < scale.min || *points.end() > scale.max {
            issues.push(
                LintIssue::error(
                    Rule::Anchors,
                    key_at,
                    format!("anchor `{parsed}` is outside the scale {}..{}", scale.min, scale.max),
                )
                .with_hint(format!("anchors cover points {} to {} only", scale.min, scale.max)),
            );
            continue;
        }
        // Report the first point this key shares with an earlier anchor, once; still count
        // the key's other points as covered so that no phantom gap follows.
        let overlap =
            points.clone().find_map(|point| covered_by.get(&point).map(|earlier| (point, earlier.clone())));
        if let Some((point, earlier)) = overlap {
            issues.push(
                LintIssue::error(
                    Rule::Anchors,
                    key_at.clone(),
                    format!("point {point} is covered twice, by anchor `{earlier}` and by anchor `{parsed}`"),
                )
                .with_hint("each point of the scale needs exactly one anchor")
                .with_related(pointer::join(&anchors_at, &earlier), "first covered here"),
            );
        }
        for point in points {
            covered_by.entry(point).or_insert_with(|| key.to_owned());
        }
    }
    let Some(scale) = scale else { return };
    let gaps: Vec<u32> = (scale.min..=scale.max).filter(|p| !covered_by.contains_key(p)).collect();
    if !gaps.is_empty() {
        let list = describe_points(&gaps);
        issues.push(
            LintIssue::error(
                Rule::Anchors,
                anchors_at,
                format!(
                    "anchors of `{}` leave {list} of the scale {}..{} uncovered",
                    criterion.name, scale.min, scale.max
                ),
            )
            .with_hint(format!("add an anchor for {list}, or widen a band to include it")),
        );
    }
}

/// "point 4" or "points 2, 4-6".
fn describe_points(points: &[u32]) -> String {
    let mut runs: Vec<String> = Vec::new();
    let mut iter = points.iter().copied().peekable();
    while let Some(start) = iter.next() {
        let mut end = start;
        while iter.peek() == Some(&(end + 1)) {
            end += 1;
            iter.next();
        }
        runs.push(if start == end { start.to_string() } else { format!("{start}-{end}") });
    }
    let noun = if points.len() == 1 { "point" } else { "points" };
    format!("{noun} {}", runs.join(", "))
}

/// RL-03. Without a usable scale only the entries themselves are checked.
fn check_examples(criterion: &Criterion, scale: Option<Scale>, at: &str, issues: &mut Vec<LintIssue>) {
    let examples_at = pointer::join(at, "examples");
    let mut present = Vec::new();
    for (key, text) in criterion.examples.iter() {
        let key_at = pointer::join(&examples_at, key);
        let score = key
            .strip_prefix("score_")
            .filter(|digits| !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|digits| digits.parse::<u32>().ok());
        let Some(score) = score else {
            let example = scale.map_or_else(|| "score_5".to_owned(), |s| format!("score_{}", s.max));
            issues.push(
                LintIssue::error(Rule::Examples, key_at, format!("example key `{key}` is not `score_<n>`"))
                    .with_hint(format!("name examples after their score, e.g. `{example}`")),
            );
            continue;
        };
        if text.trim().is_empty() {
            issues.push(
                LintIssue::error(Rule::Examples, key_at.clone(), format!("example `{key}` is empty"))
                    .with_hint("quote or describe a real artifact that earns this score"),
            );
        }
        match scale {
            Some(scale) if score < scale.min || score > scale.max => issues.push(
                LintIssue::error(
                    Rule::Examples,
                    key_at,
                    format!("example `{key}` is outside the scale {}..{}", scale.min, scale.max),
                )
                .with_hint(format!("examples are for scores {} to {}", scale.min, scale.max)),
            ),
            _ => present.push(score),
        }
    }
    let Some(scale) = scale else { return };
    let missing: Vec<String> = [scale.min, scale.max]
        .into_iter()
        .filter(|end| !present.contains(end))
        .map(|end| format!("score_{end}"))
        .collect();
    if !missing.is_empty() {
        issues.push(
            LintIssue::error(
                Rule::Examples,
                examples_at,
                format!("examples of `{}` lack {}", criterion.name, missing.join(" and ")),
            )
            .with_hint(format!(
                "every criterion needs examples for the scale's minimum and maximum (score_{} and score_{})",
                scale.min, scale.max
            )),
        );
    }
}

fn check_shares(rubric: &Rubric, issues: &mut Vec<LintIssue>) {
    let with_share = rubric.criteria.iter().filter(|c| c.share.is_some()).count();
    if with_share == 0 {
        return;
    }
    for (index, criterion) in rubric.criteria.iter().enumerate() {
        if let Some(share) = criterion.share
            && !(share > 0.0 && share <= 1.0)
        {
            issues.push(
                LintIssue::error(
                    Rule::Share,
                    format!("/criteria/{index}/share"),
                    format!("share {} of `{}` is outside (0, 1]", num(share), criterion.name),
                )
                .with_hint("a share is the fraction of the overall score a criterion carries, in (0, 1]"),
            );
        }
    }
    if with_share < rubric.criteria.len() {
        let others = if with_share == 1 {
            "1 other criterion does".to_owned()
        } else {
            format!("{with_share} other criteria do")
        };
        for (index, criterion) in rubric.criteria.iter().enumerate() {
            if criterion.share.is_none() {
                issues.push(
                    LintIssue::error(
                        Rule::Share,
                        format!("/criteria/{index}"),
                        format!("criterion `{}` has no share, but {others}", criterion.name),
                    )
                    .with_hint(
                        "give every criterion a share, or remove all shares to weigh criteria equally",
                    ),
                );
            }
        }
        return;
    }
    let sum: f64 = rubric.criteria.iter().filter_map(|c| c.share).sum();
    if (sum - 1.0).abs() > SHARE_TOLERANCE || sum.is_nan() {
        let difference = 1.0 - sum;
        let hint = if difference > 0.0 {
            format!("add {} across the shares", trim_float(difference))
        } else {
            format!("remove {} from the shares", trim_float(-difference))
        };
        issues.push(
            LintIssue::error(Rule::Share, "/criteria", format!("shares sum to {}, not 1.0", trim_float(sum)))
                .with_hint(hint),
        );
    }
}

/// Rounds away floating-point noise for messages (0.30000000000000004 -> 0.3).
fn trim_float(value: f64) -> String {
    let rounded = (value * 1e6).round() / 1e6;
    num(rounded)
}
