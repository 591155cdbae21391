//! ESLint's `-f json`: an array of files, `{filePath, messages: [{ruleId, severity, message,
//! line, column}]}`, severity 1 a warning and 2 an error.

use serde_json::{Map, Value};

use super::fields;
use super::{Finding, FindingFormat, generic};

pub(super) fn recognise(value: &Value) -> Option<(FindingFormat, Vec<Finding>, Vec<String>)> {
    let files = value.as_array()?;
    if files.is_empty() || !files.iter().filter_map(Value::as_object).any(is_file_result) {
        return None;
    }
    let mut warnings = Vec::new();
    let mut findings = Vec::new();
    for (index, file) in files.iter().enumerate() {
        let at = format!("[{index}]");
        let Some(file) = file.as_object().filter(|file| is_file_result(file)) else {
            warnings.push(format!("{at}: not an ESLint file result (needs filePath and messages); skipped"));
            continue;
        };
        let path = fields::string(file, &["filePath"]).map(|path| fields::clean_path(&path));
        let Some(messages) = file.get("messages").and_then(Value::as_array) else { continue };
        let at = format!("{at}.messages");
        findings.extend(generic::each_object(messages, &at, &mut warnings, |message, at, warnings| {
            let mut finding = from_message(message, at, warnings);
            finding.file = path.clone();
            finding
        }));
    }
    Some((FindingFormat::Eslint, findings, warnings))
}

fn is_file_result(object: &Map<String, Value>) -> bool {
    object.contains_key("filePath") && object.get("messages").is_some_and(Value::is_array)
}

fn from_message(message: &Map<String, Value>, at: &str, warnings: &mut Vec<String>) -> Finding {
    let text = fields::string(message, &["message"]).unwrap_or_default();
    // A parse error (`fatal: true`) has no rule.
    let text = match fields::string(message, &["ruleId"]) {
        Some(rule) => format!("[{rule}] {text}"),
        None => text,
    };
    let mut finding = Finding::new(FindingFormat::Eslint, text);
    finding.line = fields::line(message, &["line"], at, warnings);
    finding.severity = match message.get("severity").and_then(Value::as_u64) {
        Some(1) => Some("warning".to_owned()),
        Some(2) => Some("error".to_owned()),
        _ => fields::string(message, &["severity"]),
    };
    finding
}
