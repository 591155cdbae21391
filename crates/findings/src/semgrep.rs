//! semgrep's `--json`: `{results: [{check_id, path, start: {line}, extra: {message, severity,
//! lines}}], errors: [...]}`.

use serde_json::{Map, Value};

use super::fields;
use super::{Finding, FindingFormat, generic};

pub(super) fn recognise(value: &Value) -> Option<(FindingFormat, Vec<Finding>, Vec<String>)> {
    let object = value.as_object()?;
    let results = object.get("results")?.as_array()?;
    let is_semgrep = results.iter().filter_map(Value::as_object).any(|r| r.contains_key("check_id"))
        || (results.is_empty() && object.contains_key("errors") && object.contains_key("paths"));
    if !is_semgrep {
        return None;
    }
    let mut warnings = Vec::new();
    let findings = generic::each_object(results, "results", &mut warnings, from_result);
    if let Some(errors) = object.get("errors").and_then(Value::as_array).filter(|e| !e.is_empty()) {
        warnings.push(format!(
            "semgrep reported {} error(s) of its own (files it could not scan, rules it could not run)",
            errors.len()
        ));
    }
    Some((FindingFormat::Semgrep, findings, warnings))
}

fn from_result(result: &Map<String, Value>, at: &str, warnings: &mut Vec<String>) -> Finding {
    let message =
        fields::dig(result, &["extra", "message"]).and_then(fields::scalar_text).unwrap_or_default();
    let text = match fields::string(result, &["check_id"]) {
        Some(rule) => format!("[{rule}] {message}"),
        None => message,
    };
    let mut finding = Finding::new(FindingFormat::Semgrep, text);
    finding.file = fields::string(result, &["path"]).map(|path| fields::clean_path(&path));
    finding.line = fields::line_at(result, &["start", "line"], at, warnings);
    finding.severity = fields::dig(result, &["extra", "severity"]).and_then(fields::scalar_text);
    // Without a login semgrep prints "requires login" where the matched lines would be.
    finding.evidence = fields::dig(result, &["extra", "lines"])
        .and_then(fields::scalar_text)
        .filter(|lines| lines != "requires login");
    finding
}
