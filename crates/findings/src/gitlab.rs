//! GitLab Code Quality reports: an array of CodeClimate-style issues,
//! `{description, check_name, fingerprint, severity, location: {path, lines: {begin}}}`
//! (or `location.positions.begin.line`).

use serde_json::{Map, Value};

use super::fields::{self, SEVERITY_KEYS};
use super::{Finding, FindingFormat, generic};

pub(super) fn recognise(value: &Value) -> Option<(FindingFormat, Vec<Finding>, Vec<String>)> {
    let items = value.as_array()?;
    if !items.iter().filter_map(Value::as_object).any(is_code_quality_issue) {
        return None;
    }
    let mut warnings = Vec::new();
    let mut findings = Vec::new();
    for (index, item) in items.iter().enumerate() {
        let at = format!("[{index}]");
        let Some(issue) = item.as_object() else {
            warnings.push(format!("{at}: expected an object, found {}; skipped", generic::kind(item)));
            continue;
        };
        findings.push(from_issue(issue, &at, &mut warnings));
    }
    Some((FindingFormat::GitlabCodeQuality, findings, warnings))
}

/// CodeClimate issues carry a fingerprint or check name, or a location with `lines`/`positions`.
fn is_code_quality_issue(object: &Map<String, Value>) -> bool {
    object.contains_key("fingerprint")
        || object.contains_key("check_name")
        || fields::dig(object, &["location", "lines"]).is_some()
        || fields::dig(object, &["location", "positions"]).is_some()
}

fn from_issue(issue: &Map<String, Value>, at: &str, warnings: &mut Vec<String>) -> Finding {
    let mut parts = Vec::new();
    if let Some(check) = fields::string(issue, &["check_name"]) {
        parts.push(format!("[{check}]"));
    }
    if let Some(description) = fields::string(issue, &["description"]) {
        parts.push(description);
    }
    let mut text = parts.join(" ");
    if let Some(body) = issue.get("content").and_then(fields::text_of) {
        text = if text.is_empty() { body } else { format!("{text}\n{body}") };
    }
    if text.is_empty() {
        warnings.push(format!("{at}: no description; its text is empty"));
    }
    let mut finding = Finding::new(FindingFormat::GitlabCodeQuality, text);
    finding.file = fields::dig(issue, &["location", "path"])
        .and_then(fields::scalar_text)
        .map(|p| fields::clean_path(&p));
    let line = fields::dig(issue, &["location", "lines", "begin"])
        .or_else(|| fields::dig(issue, &["location", "positions", "begin", "line"]));
    finding.line = line.and_then(fields::line_number);
    if finding.line.is_none()
        && let Some(bad) = line
    {
        warnings
            .push(format!("{at}.location: begin line {bad} is not a line number (1 or more); line ignored"));
    }
    finding.severity = fields::string(issue, SEVERITY_KEYS);
    finding
}
