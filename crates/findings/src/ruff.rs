//! ruff's `--output-format json` (an array of violations) and `json-lines` (one per line):
//! `{code, message, filename, location: {row, column}, severity, url}`.

use serde_json::{Map, Value};

use super::fields;
use super::{Finding, FindingFormat, generic};

/// An array of ruff violations, or a single one.
pub(super) fn recognise(value: &Value) -> Option<(FindingFormat, Vec<Finding>, Vec<String>)> {
    let mut warnings = Vec::new();
    let findings = match value {
        Value::Array(items) if items.iter().filter_map(Value::as_object).any(is_violation) => {
            generic::each_object(items, "", &mut warnings, from_violation)
        }
        Value::Object(object) if is_violation(object) => vec![from_violation(object, "", &mut warnings)],
        _ => return None,
    };
    Some((FindingFormat::Ruff, findings, warnings))
}

/// A violation names its file in `filename` and its place in `location.row`.
pub(super) fn is_violation(object: &Map<String, Value>) -> bool {
    object.contains_key("filename")
        && object.contains_key("message")
        && fields::dig(object, &["location", "row"]).is_some()
}

pub(super) fn from_violation(object: &Map<String, Value>, at: &str, warnings: &mut Vec<String>) -> Finding {
    let message = fields::string(object, &["message"]).unwrap_or_default();
    // A syntax error has no rule code.
    let text = match fields::string(object, &["code"]) {
        Some(code) => format!("[{code}] {message}"),
        None => message,
    };
    let mut finding = Finding::new(FindingFormat::Ruff, text);
    finding.file = fields::string(object, &["filename"]).map(|path| fields::clean_path(&path));
    finding.line = fields::line_at(object, &["location", "row"], at, warnings);
    finding.severity = fields::string(object, &["severity"]);
    finding
}
