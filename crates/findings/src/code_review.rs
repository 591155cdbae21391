//! The code-review output and input of `revcal score` (docs/findings.md, "The code-review
//! output of `revcal score`"): `issues`, or
//! `blocking_issues` and `suggestions`, each with `file` + `line` or `location: "file:line"`.
//! A council (an array of reviews) contributes the issues of every member.

use serde_json::{Map, Value};

use super::{Finding, FindingFormat, generic};

/// The arrays of a review that hold issues, in the order they are read.
const ISSUE_ARRAYS: &[&str] = &["blocking_issues", "issues", "suggestions"];

pub(super) fn recognise(value: &Value) -> Option<(FindingFormat, Vec<Finding>, Vec<String>)> {
    let reviews: Vec<(&Map<String, Value>, String)> = match value {
        Value::Object(review) if is_review(review) => vec![(review, String::new())],
        Value::Array(members) if !members.is_empty() => {
            let reviews: Option<Vec<_>> = members
                .iter()
                .enumerate()
                .map(|(index, member)| {
                    member.as_object().filter(|m| is_review(m)).map(|m| (m, format!("[{index}]")))
                })
                .collect();
            reviews?
        }
        _ => return None,
    };
    let mut warnings = Vec::new();
    let mut findings = Vec::new();
    for (review, prefix) in reviews {
        for key in ISSUE_ARRAYS {
            match review.get(*key) {
                Some(Value::Array(items)) => findings.extend(generic::items_to_findings(
                    items,
                    FindingFormat::CodeReview,
                    &format!("{prefix}{key}"),
                    &mut warnings,
                )),
                Some(Value::Null) | None => {}
                Some(other) => warnings.push(format!(
                    "{prefix}{key}: expected an array, found {}; skipped",
                    generic::kind(other)
                )),
            }
        }
    }
    Some((FindingFormat::CodeReview, findings, warnings))
}

/// A review has an issue array or rubric scores.
fn is_review(object: &Map<String, Value>) -> bool {
    ISSUE_ARRAYS.iter().any(|key| object.get(*key).is_some_and(Value::is_array))
        || object.get("rubric_scores").is_some_and(Value::is_object)
}
