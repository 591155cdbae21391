//! Focus areas (FOCUS): unique area names regardless of case, unique red-flag ids across
//! the rubric, and the text every area and flag needs (docs/rubric-format.md, "focus_areas").

use super::document::check_identifier;
use crate::pointer;
use crate::rule::{LintIssue, Rule};
use crate::types::Rubric;
use std::collections::HashMap;

pub(super) fn check(rubric: &Rubric, issues: &mut Vec<LintIssue>) {
    // Reviews name areas case-insensitively, so `Security` and `security` are one area.
    let mut area_names: HashMap<String, usize> = HashMap::new();
    // A review raises a red flag by its id alone: two flags with one id, in one area or in
    // two, would make the review ambiguous.
    let mut flag_ids: HashMap<&str, (usize, usize)> = HashMap::new();
    for (index, area) in rubric.focus_areas.iter().enumerate() {
        let at = pointer::build(["focus_areas".to_owned(), index.to_string()]);
        check_area_name(&area.name, &pointer::join(&at, "name"), issues);
        match area_names.get(&area.name.to_lowercase()) {
            Some(&first) => issues.push(
                LintIssue::error(
                    Rule::Focus,
                    pointer::join(&at, "name"),
                    format!(
                        "focus area `{}` is defined twice (names are compared regardless of case)",
                        area.name
                    ),
                )
                .with_hint("give each focus area its own name, or merge the two")
                .with_related(format!("/focus_areas/{first}/name"), "first defined here"),
            ),
            None => {
                area_names.insert(area.name.to_lowercase(), index);
            }
        }
        non_empty(&area.description, &pointer::join(&at, "description"), "focus area description", issues);
        if area.checks.is_empty() {
            issues.push(
                LintIssue::error(
                    Rule::Schema,
                    pointer::join(&at, "checks"),
                    format!("focus area `{}` has no checks", area.name),
                )
                .with_hint("list what a reviewer focused on this area looks for"),
            );
        }
        for (check_index, text) in area.checks.iter().enumerate() {
            let check_at = pointer::build([
                "focus_areas".to_owned(),
                index.to_string(),
                "checks".to_owned(),
                check_index.to_string(),
            ]);
            non_empty(text, &check_at, "check", issues);
        }
        for (flag_index, flag) in area.red_flags.iter().enumerate() {
            let flag_at = pointer::build([
                "focus_areas".to_owned(),
                index.to_string(),
                "red_flags".to_owned(),
                flag_index.to_string(),
            ]);
            let id_at = pointer::join(&flag_at, "id");
            check_identifier(&flag.id, &id_at, "red-flag id", issues);
            non_empty(
                &flag.description,
                &pointer::join(&flag_at, "description"),
                "red-flag description",
                issues,
            );
            match flag_ids.get(flag.id.as_str()) {
                Some(&(first_area, first_flag)) => {
                    let where_first = if first_area == index {
                        "in this area".to_owned()
                    } else {
                        format!("in focus area `{}`", rubric.focus_areas[first_area].name)
                    };
                    issues.push(
                        LintIssue::error(
                            Rule::Focus,
                            id_at,
                            format!("red flag `{}` is already defined {where_first}", flag.id),
                        )
                        .with_hint(
                            "red-flag ids are unique across the rubric: rename one, or remove the repeat",
                        )
                        .with_related(
                            format!("/focus_areas/{first_area}/red_flags/{first_flag}/id"),
                            "first defined here",
                        ),
                    );
                }
                None => {
                    flag_ids.insert(&flag.id, (index, flag_index));
                }
            }
        }
    }
}

/// An area name is a word (letters, digits, `_`, `-`), so that `--focus NAME` and
/// `rubric_focus: NAME` can name it without quoting.
fn check_area_name(name: &str, at: &str, issues: &mut Vec<LintIssue>) {
    let mut chars = name.chars();
    let valid = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if !valid {
        let suggestion: String = name
            .trim()
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' })
            .collect();
        let suggestion = suggestion.trim_start_matches(|c: char| !c.is_ascii_alphabetic());
        let hint = if suggestion.is_empty() {
            "start with a letter, then letters, digits, `_` or `-`".to_owned()
        } else {
            format!("start with a letter, then letters, digits, `_` or `-`, e.g. `{suggestion}`")
        };
        issues.push(
            LintIssue::error(
                Rule::Schema,
                at,
                format!("focus area name `{name}` is not a word (^[A-Za-z][A-Za-z0-9_-]*$)"),
            )
            .with_hint(hint),
        );
    }
}

fn non_empty(text: &str, at: &str, what: &str, issues: &mut Vec<LintIssue>) {
    if text.trim().is_empty() {
        issues.push(
            LintIssue::error(Rule::Schema, at, format!("{what} is empty")).with_hint("say it in words"),
        );
    }
}
