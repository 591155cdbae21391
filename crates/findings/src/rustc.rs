//! rustc's and clippy's diagnostics as JSON: cargo's `--message-format=json` (one
//! `{"reason": "compiler-message", "message": {...}}` per line, among `compiler-artifact` and
//! `build-finished` lines) or rustc's own `--error-format=json` (the message alone). The
//! finding is the message at its primary span: `{message, code: {code}, level, spans:
//! [{file_name, line_start, is_primary}], rendered}`.

use serde_json::{Map, Value};

use super::fields;
use super::{Finding, FindingFormat};

/// What one line of cargo's or rustc's JSON output is.
pub(super) enum Line<'a> {
    /// A diagnostic.
    Message(&'a Map<String, Value>),
    /// Another cargo event (an artifact built, the build finished, a build script ran).
    Cargo,
}

/// Classifies one JSON object; `None` when it is neither a diagnostic nor a cargo event.
pub(super) fn classify(object: &Map<String, Value>) -> Option<Line<'_>> {
    match object.get("reason").and_then(Value::as_str) {
        Some("compiler-message") => object.get("message").and_then(Value::as_object).map(Line::Message),
        Some(_) => Some(Line::Cargo),
        None if is_diagnostic(object) => Some(Line::Message(object)),
        None => None,
    }
}

/// A single diagnostic as the whole output (one line of cargo or rustc JSON).
pub(super) fn recognise(value: &Value) -> Option<(FindingFormat, Vec<Finding>, Vec<String>)> {
    match classify(value.as_object()?)? {
        Line::Message(message) => {
            let mut warnings = Vec::new();
            let findings = from_message(message, "", &mut warnings).into_iter().collect();
            Some((FindingFormat::Rustc, findings, warnings))
        }
        Line::Cargo => Some((FindingFormat::Rustc, Vec::new(), Vec::new())),
    }
}

/// A span inside a macro defined outside the project (std's `/rustc/...`, a dependency under
/// an absolute path) is of no use to locate a finding in the project: follow its expansions to
/// the call site in the project's own (relative) files. Spans in the project stay as they are.
fn call_site(mut span: &Map<String, Value>) -> &Map<String, Value> {
    // Expansion chains are short; the bound only guards against a hostile document.
    for _ in 0..64 {
        let outside = fields::string(span, &["file_name"])
            .is_none_or(|file| file.starts_with('/') || file.starts_with('<'));
        match fields::dig(span, &["expansion", "span"]).and_then(Value::as_object) {
            Some(caller) if outside => span = caller,
            _ => break,
        }
    }
    span
}

fn is_diagnostic(object: &Map<String, Value>) -> bool {
    object.get("spans").is_some_and(Value::is_array)
        && object.contains_key("level")
        && object.get("message").is_some_and(Value::is_string)
}

/// The finding of a diagnostic; `None` for a summary with neither a code nor a span
/// (`aborting due to 2 previous errors`, `3 warnings emitted`).
pub(super) fn from_message(
    message: &Map<String, Value>,
    at: &str,
    warnings: &mut Vec<String>,
) -> Option<Finding> {
    let text = fields::string(message, &["message"]).unwrap_or_default();
    let code = fields::dig(message, &["code", "code"]).and_then(fields::scalar_text);
    let spans = message.get("spans").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    if code.is_none() && spans.is_empty() {
        return None;
    }
    let primary = spans
        .iter()
        .filter_map(Value::as_object)
        .find(|span| span.get("is_primary").and_then(Value::as_bool) == Some(true));
    let mut finding = Finding::new(
        FindingFormat::Rustc,
        match code {
            Some(code) => format!("[{code}] {text}"),
            None => text,
        },
    );
    if let Some(span) = primary.map(call_site) {
        finding.file = fields::string(span, &["file_name"]).map(|path| fields::clean_path(&path));
        finding.line = fields::line(span, &["line_start"], &format!("{at}.spans"), warnings);
    }
    finding.severity = fields::string(message, &["level"]);
    finding.evidence = fields::string(message, &["rendered"]);
    Some(finding)
}
