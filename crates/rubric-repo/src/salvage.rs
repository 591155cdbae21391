//! Checking what can be checked in a document the schema rejected.
//!
//! When one criterion has a type error (`weight: heavy`), the whole document cannot
//! become a typed [`Rubric`], yet its other criteria still deserve their anchors,
//! examples and thresholds checked in the same run. This module drops the list items that
//! do not parse, checks the rest, maps item indices back to the document, and suppresses
//! the checks that need the whole list (shares summing to 1, ceilings naming criteria).

use revcal_rubric_model::{
    Ceiling, Criterion, FocusArea, LintIssue, LintSeverity, NegativeCriterion, Rubric, Rule, pointer, suggest,
};
use serde::de::DeserializeOwned;
use serde_json::Value;

/// A typed rubric built from the parts of a document that parse.
pub(crate) struct Salvaged {
    pub rubric: Rubric,
    /// For each list, the document indices of the items kept, when any were dropped.
    reduced: Vec<(&'static str, Vec<usize>)>,
    /// Names of the criteria that were dropped (as far as they could be read).
    dropped_names: Vec<String>,
    /// Names of every criterion written in the document, kept or dropped.
    all_names: Vec<String>,
    /// True when `criteria` is not a list at all: then no criterion name is known.
    criteria_unreadable: bool,
}

/// Builds a rubric from `document` without the list items that fail to parse. `None` when
/// a top-level field itself is broken (then no semantic check is meaningful).
pub(crate) fn salvage(document: &Value) -> Option<Salvaged> {
    let mut document = document.clone();
    let mut reduced = Vec::new();
    let criteria_unreadable = !document.get("criteria").is_some_and(Value::is_array);
    // Criterion names by position, read from the document as written.
    let written_names: Vec<Option<String>> = document
        .get("criteria")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|item| item.get("name").and_then(Value::as_str).map(str::to_owned))
        .collect();
    // Scalars written where text belongs (`version: 1.0`) were reported by the schema;
    // read them as their text so that the rest of the document can still be checked.
    for field in
        ["$schema", "rubric_id", "name", "version", "artifact_type", "description", "calibration_dataset"]
    {
        if let Some(slot) = document.get_mut(field)
            && (slot.is_number() || slot.is_boolean())
        {
            *slot = Value::String(slot.to_string());
        }
    }
    keep_parsable::<Criterion>(&mut document, "criteria", &mut reduced);
    keep_parsable::<NegativeCriterion>(&mut document, "negative_criteria", &mut reduced);
    keep_parsable::<Ceiling>(&mut document, "ceilings", &mut reduced);
    keep_parsable::<FocusArea>(&mut document, "focus_areas", &mut reduced);
    let rubric = serde_json::from_value(document).ok()?;
    // The criteria that did not parse are the ones whose positions were not kept.
    let kept_criteria = reduced.iter().find(|(list, _)| *list == "criteria").map(|(_, kept)| kept);
    let dropped_names = written_names
        .iter()
        .enumerate()
        .filter(|(index, _)| kept_criteria.is_some_and(|kept| !kept.contains(index)))
        .filter_map(|(_, name)| name.clone())
        .collect();
    let all_names = written_names.into_iter().flatten().collect();
    Some(Salvaged { rubric, reduced, dropped_names, all_names, criteria_unreadable })
}

fn keep_parsable<T: DeserializeOwned>(
    document: &mut Value,
    list: &'static str,
    reduced: &mut Vec<(&'static str, Vec<usize>)>,
) {
    let Some(slot) = document.get_mut(list) else { return };
    let items = match slot.take() {
        Value::Array(items) => items,
        _ => Vec::new(),
    };
    let total = items.len();
    let mut repaired = false;
    let (kept_indices, kept): (Vec<usize>, Vec<Value>) = items
        .into_iter()
        .enumerate()
        .filter_map(|(index, item)| {
            if T::deserialize(&item).is_ok() {
                return Some((index, item));
            }
            // An item with a value of the wrong kind (`share: "0.5"`, `weight: critical`) is
            // still checked for everything else (its anchors, its name among the others)
            // with that value read as the nearest valid one.
            let item = repair(item);
            T::deserialize(&item).is_ok().then(|| {
                repaired = true;
                (index, item)
            })
        })
        .unzip();
    // Checks over the whole list (shares summing to 1, one essential criterion) are left out
    // when an item was dropped or repaired: they would judge a list the author did not write.
    if kept.len() != total || total == 0 || repaired {
        reduced.push((list, kept_indices));
    }
    *slot = Value::Array(kept);
}

/// `item` with its fields of the wrong kind replaced by the nearest valid value: a number
/// written as text becomes the number, and a weight that is neither `essential` nor
/// `important` becomes `important`. The schema has already reported each of them.
fn repair(mut item: Value) -> Value {
    let Some(fields) = item.as_object_mut() else { return item };
    for (key, value) in fields.iter_mut() {
        // Text fields stay text, whatever they hold (`name: "2024"`).
        if matches!(key.as_str(), "name" | "id" | "description" | "criterion" | "pattern") {
            continue;
        }
        if let Some(number) = value.as_str().and_then(|text| text.trim().parse::<f64>().ok())
            && let Some(number) = serde_json::Number::from_f64(number)
        {
            *value = Value::Number(number);
        }
        if key == "weight" && !matches!(value.as_str(), Some("essential" | "important")) {
            *value = Value::String("important".to_owned());
        }
    }
    item
}

impl Salvaged {
    /// True when `list` lost items (or was not a list).
    fn reduced(&self, list: &str) -> bool {
        self.reduced.iter().any(|(name, _)| *name == list)
    }

    /// Maps an issue found on the salvaged rubric back to the document; `None` for
    /// issues that only arise because items were dropped.
    pub(crate) fn translate(&self, mut issue: LintIssue) -> Option<LintIssue> {
        let criteria_reduced = self.reduced("criteria");
        let needs_all_criteria = match issue.rule {
            Rule::Share => issue.pointer == "/criteria" || pointer::segments(&issue.pointer).len() == 2,
            // A ceiling may name a criterion that was dropped: only then is "no such
            // criterion" an artefact of the salvage.
            Rule::Ceiling => {
                issue.pointer.ends_with("/criterion") && self.names_dropped_criterion(&issue.pointer)
            }
            Rule::Threshold => issue.severity == LintSeverity::Warning,
            Rule::Schema => issue.pointer == "/criteria",
            _ => false,
        };
        if criteria_reduced && needs_all_criteria {
            return None;
        }
        if issue.rule == Rule::Ceiling && issue.pointer.ends_with("/criterion") {
            // Suggest among every criterion written, not only those that parsed.
            let written = pointer::segments(&issue.pointer)
                .get(1)
                .and_then(|i| i.parse::<usize>().ok())
                .and_then(|i| self.rubric.ceilings.get(i))
                .map(|c| c.criterion.clone())
                .unwrap_or_default();
            if let Some(near) = suggest::closest(&written, self.all_names.iter().map(String::as_str)) {
                issue.hint = Some(format!("did you mean `{near}`?"));
            }
        }
        issue.pointer = self.remap(&issue.pointer);
        if let Some(related) = issue.related.as_mut() {
            related.pointer = self.remap(&related.pointer);
        }
        Some(issue)
    }

    fn names_dropped_criterion(&self, ceiling_pointer: &str) -> bool {
        if self.criteria_unreadable {
            return true;
        }
        let index = pointer::segments(ceiling_pointer).get(1).and_then(|i| i.parse::<usize>().ok());
        let named = index.and_then(|i| self.rubric.ceilings.get(i)).map(|c| c.criterion.as_str());
        named.is_some_and(|name| self.dropped_names.iter().any(|dropped| dropped == name))
    }

    fn remap(&self, at: &str) -> String {
        let mut segments = pointer::segments(at);
        if let [list, index, ..] = segments.as_mut_slice()
            && let Some((_, kept)) = self.reduced.iter().find(|(name, _)| name == list)
            && let Some(original) = index.parse::<usize>().ok().and_then(|i| kept.get(i))
        {
            *index = original.to_string();
        }
        pointer::build(&segments)
    }
}
