//! Hand-written schema fragments for the parts of the format that derives cannot express,
//! and the generation of the whole schema.

use crate::types::Rubric;
use schemars::{Schema, SchemaGenerator, json_schema};

/// Anchor keys: a point (`3`) or a band (`9-10`).
pub const ANCHOR_KEY_PATTERN: &str = r"^[0-9]+(-[0-9]+)?$";
/// Example keys: `score_<n>`.
pub const EXAMPLE_KEY_PATTERN: &str = r"^score_[0-9]+$";

pub(crate) fn anchors(_: &mut SchemaGenerator) -> Schema {
    json_schema!({
        "description": "What each point of the scale looks like. Keys are single points (`3`) or bands (`9-10`); together they cover every point of the scale exactly once.",
        "type": "object",
        "minProperties": 1,
        "patternProperties": { "^[0-9]+(-[0-9]+)?$": { "type": "string", "minLength": 1 } },
        "additionalProperties": false
    })
}

pub(crate) fn examples(_: &mut SchemaGenerator) -> Schema {
    json_schema!({
        "description": "Example artifacts keyed `score_<n>`; the scale's minimum and maximum are required.",
        "type": "object",
        "minProperties": 1,
        "patternProperties": { "^score_[0-9]+$": { "type": "string", "minLength": 1 } },
        "additionalProperties": false
    })
}

/// The JSON Schema (draft 2020-12) of a rubric file, generated from the Rust types.
///
/// This is what `rubrics/schema.json` holds and what loaders validate against.
///
/// ```
/// let schema = revcal_rubric_model::json_schema();
/// assert_eq!(schema["title"], "revcal rubric");
/// assert!(schema["required"].as_array().unwrap().iter().any(|f| f == "rubric_id"));
/// ```
pub fn json_schema() -> serde_json::Value {
    let mut schema = schemars::schema_for!(Rubric);
    schema.insert("$id".to_owned(), "https://revcal.dev/schemas/rubric.schema.json".into());
    let mut value = schema.to_value();
    tidy(&mut value);
    // Identity first, so that the published file reads top-down.
    let mut ordered = serde_json::Map::new();
    if let serde_json::Value::Object(mut fields) = value {
        for key in ["$schema", "$id", "title", "description"] {
            if let Some(field) = fields.remove(key) {
                ordered.insert(key.to_owned(), field);
            }
        }
        ordered.extend(fields);
    }
    serde_json::Value::Object(ordered)
}

/// Removes what schemars adds for Rust's sake but a rubric author's editor should not see:
/// non-standard `format`s (`double`, `uint32`) and `null` as an alternative type for
/// optional fields (an author leaves an optional field out rather than writing `null`).
fn tidy(value: &mut serde_json::Value) {
    use serde_json::Value;
    match value {
        Value::Object(object) => {
            let rust_format = object.get("format").and_then(Value::as_str).is_some_and(|f| {
                matches!(
                    f,
                    "double"
                        | "float"
                        | "int32"
                        | "int64"
                        | "uint"
                        | "uint8"
                        | "uint16"
                        | "uint32"
                        | "uint64"
                )
            });
            if rust_format {
                object.remove("format");
            }
            if let Some(Value::Array(types)) = object.get("type") {
                let kept: Vec<Value> = types.iter().filter(|t| *t != "null").cloned().collect();
                if kept.len() == 1 {
                    object.insert("type".to_owned(), kept[0].clone());
                }
            }
            object.values_mut().for_each(tidy);
        }
        Value::Array(items) => items.iter_mut().for_each(tidy),
        _ => {}
    }
}

/// The schema as pretty-printed JSON with a trailing newline, byte for byte what
/// `rubrics/schema.json` must contain.
pub fn json_schema_text() -> String {
    let mut text = serde_json::to_string_pretty(&json_schema()).unwrap_or_default();
    text.push('\n');
    text
}
