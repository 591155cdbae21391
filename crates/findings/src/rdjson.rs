//! reviewdog Diagnostic Format: rdjson (one `DiagnosticResult` with `diagnostics`) and rdjsonl
//! (one `Diagnostic` per line), each `{message, location: {path, range: {start: {line}}},
//! severity, code: {value}, original_output}`.

use serde_json::{Map, Value};

use super::fields;
use super::{Finding, FindingFormat, generic};

pub(super) fn recognise(value: &Value) -> Option<(FindingFormat, Vec<Finding>, Vec<String>)> {
    let object = value.as_object()?;
    if let Some(diagnostics) = object.get("diagnostics").and_then(Value::as_array) {
        let default_severity = fields::string(object, &["severity"]);
        let mut warnings = Vec::new();
        let mut findings = Vec::new();
        for (index, diagnostic) in diagnostics.iter().enumerate() {
            let at = format!("diagnostics[{index}]");
            match diagnostic.as_object() {
                Some(diagnostic) => {
                    let mut finding = from_diagnostic(diagnostic, FindingFormat::Rdjson, &at, &mut warnings);
                    finding.severity = finding.severity.or_else(|| default_severity.clone());
                    findings.push(finding);
                }
                None => warnings
                    .push(format!("{at}: expected an object, found {}; skipped", generic::kind(diagnostic))),
            }
        }
        return Some((FindingFormat::Rdjson, findings, warnings));
    }
    if is_diagnostic(object) {
        let mut warnings = Vec::new();
        let finding = from_diagnostic(object, FindingFormat::Rdjsonl, "line 1", &mut warnings);
        return Some((FindingFormat::Rdjsonl, vec![finding], warnings));
    }
    None
}

/// A diagnostic has a message and a location with a path.
pub(super) fn is_diagnostic(object: &Map<String, Value>) -> bool {
    object.get("message").is_some_and(Value::is_string)
        && fields::dig(object, &["location", "path"]).is_some_and(Value::is_string)
}

pub(super) fn from_diagnostic(
    diagnostic: &Map<String, Value>,
    source: FindingFormat,
    at: &str,
    warnings: &mut Vec<String>,
) -> Finding {
    let message = fields::string(diagnostic, &["message"]).unwrap_or_default();
    let code = fields::dig(diagnostic, &["code", "value"]).and_then(fields::scalar_text);
    let text = match code {
        Some(code) if message.is_empty() => format!("[{code}]"),
        Some(code) => format!("[{code}] {message}"),
        None => message,
    };
    if text.is_empty() {
        warnings.push(format!("{at}.message: empty; its text is empty"));
    }
    let mut finding = Finding::new(source, text);
    finding.file = fields::dig(diagnostic, &["location", "path"])
        .and_then(fields::scalar_text)
        .map(|p| fields::clean_path(&p));
    finding.line = fields::line_at(diagnostic, &["location", "range", "start", "line"], at, warnings);
    finding.severity = fields::string(diagnostic, &["severity"]);
    finding.evidence = fields::string(diagnostic, &["original_output"]);
    finding
}
