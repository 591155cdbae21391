//! `{"findings": [...]}` or a bare array of findings, with field aliases.

use serde_json::{Map, Value};

use super::fields::{self, FILE_KEYS, LINE_KEYS, SEVERITY_KEYS, TEXT_KEYS};
use super::{Finding, FindingFormat, prose};

/// Keys for supporting evidence.
const EVIDENCE_KEYS: &[&str] = &["evidence", "snippet"];
/// Keys for a reproduction command.
const REPRO_KEYS: &[&str] = &["repro", "repro_cmd", "reproCommand"];

/// A `{"findings": [...]}` object or an array whose items look like findings.
pub(super) fn recognise(value: &Value) -> Option<(FindingFormat, Vec<Finding>, Vec<String>)> {
    let (items, at) = match value {
        Value::Object(object) => (object.get("findings")?.as_array()?, "findings"),
        Value::Array(items) if items.is_empty() || items.iter().any(looks_like_finding) => (items, ""),
        _ => return None,
    };
    let mut warnings = Vec::new();
    let findings = items_to_findings(items, FindingFormat::Findings, at, &mut warnings);
    Some((FindingFormat::Findings, findings, warnings))
}

/// Convert every item of an array; `at` names the array in warnings (`findings[3]`).
pub(super) fn items_to_findings(
    items: &[Value],
    source: FindingFormat,
    at: &str,
    warnings: &mut Vec<String>,
) -> Vec<Finding> {
    items
        .iter()
        .enumerate()
        .filter_map(|(index, item)| from_item(item, source, &format!("{at}[{index}]"), warnings))
        .collect()
}

/// Each object of `items` through `convert` (with `at[index]` naming it in warnings); an item
/// that is not an object is skipped with a warning.
pub(super) fn each_object(
    items: &[Value],
    at: &str,
    warnings: &mut Vec<String>,
    mut convert: impl FnMut(&Map<String, Value>, &str, &mut Vec<String>) -> Finding,
) -> Vec<Finding> {
    let mut findings = Vec::with_capacity(items.len());
    for (index, item) in items.iter().enumerate() {
        let at = format!("{at}[{index}]");
        match item.as_object() {
            Some(object) => findings.push(convert(object, &at, warnings)),
            None => warnings.push(format!("{at}: expected an object, found {}; skipped", kind(item))),
        }
    }
    findings
}

/// Whether a bare array's item looks like a finding: an object that says something (a text
/// key) or points at a line (a line or location key). A file name alone is not enough: logs
/// list files (`[{"path": "src/a.rs", "size": 10}]`) without reporting anything about them.
fn looks_like_finding(value: &Value) -> bool {
    match value {
        Value::Object(object) => {
            LINE_KEYS.iter().chain(TEXT_KEYS).chain(["location"].iter()).any(|key| object.contains_key(*key))
        }
        _ => false,
    }
}

fn has_finding_key(object: &Map<String, Value>) -> bool {
    FILE_KEYS
        .iter()
        .chain(LINE_KEYS)
        .chain(TEXT_KEYS)
        .chain(["location"].iter())
        .any(|key| object.contains_key(*key))
}

/// One finding from an array item; objects use the aliases, strings are read as prose (weak).
pub(super) fn from_item(
    item: &Value,
    source: FindingFormat,
    at: &str,
    warnings: &mut Vec<String>,
) -> Option<Finding> {
    match item {
        Value::Object(object) => from_object(object, source, at, warnings),
        Value::String(text) if !text.trim().is_empty() => {
            let mut finding = Finding::new(source, text.trim().to_string());
            if let Some((file, line)) = prose::first_location(text) {
                finding.file = Some(file);
                finding.line = Some(line);
            }
            finding.weak = true;
            Some(finding)
        }
        other => {
            warnings.push(format!("{at}: expected an object, found {}; skipped", kind(other)));
            None
        }
    }
}

fn from_object(
    object: &Map<String, Value>,
    source: FindingFormat,
    at: &str,
    warnings: &mut Vec<String>,
) -> Option<Finding> {
    if !has_finding_key(object) {
        warnings.push(format!("{at}: no file, line, location or text field; skipped"));
        return None;
    }
    let mut finding = Finding::new(source, fields::joined_text(object, TEXT_KEYS));
    finding.file = fields::string(object, FILE_KEYS).map(|path| fields::clean_path(&path));
    finding.line = fields::line(object, LINE_KEYS, at, warnings);
    match object.get("location") {
        Some(Value::String(location)) => match fields::split_location(location) {
            Some((file, line)) => {
                finding.file.get_or_insert(fields::clean_path(&file));
                finding.line.get_or_insert(line);
            }
            None => {
                finding.file.get_or_insert(fields::clean_path(location));
                warnings.push(format!("{at}.location: {location:?} has no line (expected \"file:line\")"));
            }
        },
        Some(Value::Object(location)) => {
            if finding.file.is_none() {
                finding.file = fields::string(location, FILE_KEYS).map(|path| fields::clean_path(&path));
            }
            if finding.line.is_none() {
                finding.line = nested_line(location, &format!("{at}.location"), warnings);
            }
        }
        _ => {}
    }
    finding.severity = fields::string(object, SEVERITY_KEYS);
    finding.evidence = fields::string(object, EVIDENCE_KEYS);
    finding.repro = fields::string(object, REPRO_KEYS);
    if finding.text.is_empty() {
        warnings
            .push(format!("{at}: no title, body, message, description or recommendation; its text is empty"));
    }
    Some(finding)
}

/// The line of a location object: a line alias, or `range.start.line`, `lines.begin`,
/// `region.startLine`, `positions.begin.line`.
fn nested_line(location: &Map<String, Value>, at: &str, warnings: &mut Vec<String>) -> Option<u32> {
    fields::line(location, LINE_KEYS, at, warnings).or_else(|| {
        [
            &["range", "start", "line"][..],
            &["lines", "begin"],
            &["region", "startLine"],
            &["positions", "begin", "line"],
        ]
        .iter()
        .find_map(|path| fields::line_number(fields::dig(location, path)?))
    })
}

/// A short name for a JSON value's type, for warnings.
pub(super) fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
