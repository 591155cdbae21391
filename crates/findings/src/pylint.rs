//! pylint's `--output-format=json` (an array of messages) and `json2` (`{messages, statistics}`):
//! `{type, path, line, column, symbol, message, message-id}` (`messageId` in json2).

use serde_json::{Map, Value};

use super::fields;
use super::{Finding, FindingFormat, generic};

/// A pylint json array or a json2 document.
pub(super) fn recognise(value: &Value) -> Option<(FindingFormat, Vec<Finding>, Vec<String>)> {
    let (items, at) = match value {
        Value::Array(items) => (items, ""),
        Value::Object(object) if object.contains_key("statistics") => {
            (object.get("messages")?.as_array()?, "messages")
        }
        _ => return None,
    };
    if !items.iter().filter_map(Value::as_object).any(is_message) {
        return None;
    }
    let mut warnings = Vec::new();
    let findings = generic::each_object(items, at, &mut warnings, from_message);
    Some((FindingFormat::Pylint, findings, warnings))
}

/// A pylint message carries its id and symbol besides the text.
fn is_message(object: &Map<String, Value>) -> bool {
    (object.contains_key("message-id") || object.contains_key("messageId"))
        && object.contains_key("symbol")
        && object.contains_key("message")
}

fn from_message(object: &Map<String, Value>, at: &str, warnings: &mut Vec<String>) -> Finding {
    let message = fields::string(object, &["message"]).unwrap_or_default();
    let id = fields::string(object, &["message-id", "messageId"]);
    let symbol = fields::string(object, &["symbol"]);
    let label: Vec<String> = id.into_iter().chain(symbol).collect();
    let text = if label.is_empty() { message } else { format!("[{}] {message}", label.join(" ")) };
    let mut finding = Finding::new(FindingFormat::Pylint, text);
    finding.file = fields::string(object, &["path", "absolutePath"]).map(|path| fields::clean_path(&path));
    finding.line = fields::line(object, &["line"], at, warnings);
    finding.severity = fields::string(object, &["type"]);
    finding
}
