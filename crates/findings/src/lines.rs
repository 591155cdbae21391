//! Output with one JSON object per line: reviewdog's rdjsonl, ruff's `json-lines`,
//! staticcheck's `-f json`, and cargo's or rustc's `--message-format=json` (clippy's too).

use serde_json::Value;

use super::{FindingFormat, ParsedFindings, go, rdjson, ruff, rustc};

/// Every non-empty line is a JSON object of one of the line formats. `None` when a line is
/// not JSON (the embedded scanner then takes over) or when no line is of a known format.
pub(super) fn parse(text: &str) -> Option<ParsedFindings> {
    let mut parsed = ParsedFindings::default();
    let mut lines = 0;
    // cargo reports a diagnostic once per target that compiles the file (the library and its
    // tests): the same warning is one finding, not one per target.
    let mut diagnostics_seen = std::collections::HashSet::new();
    for (index, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        lines += 1;
        let value: Value = serde_json::from_str(line).ok()?;
        let at = format!("line {}", index + 1);
        let Some(object) = value.as_object() else {
            parsed.warnings.push(format!("{at}: not a JSON object; skipped"));
            continue;
        };
        let format = if rdjson::is_diagnostic(object) {
            parsed.findings.push(rdjson::from_diagnostic(
                object,
                FindingFormat::Rdjsonl,
                &at,
                &mut parsed.warnings,
            ));
            FindingFormat::Rdjsonl
        } else if ruff::is_violation(object) {
            parsed.findings.push(ruff::from_violation(object, &at, &mut parsed.warnings));
            FindingFormat::Ruff
        } else if go::is_problem(object) {
            parsed.findings.push(go::from_problem(object, &at, &mut parsed.warnings));
            FindingFormat::Staticcheck
        } else if let Some(kind) = rustc::classify(object) {
            if let rustc::Line::Message(message) = kind
                && let Some(finding) = rustc::from_message(message, &at, &mut parsed.warnings)
                && diagnostics_seen.insert((
                    finding.file.clone(),
                    finding.line,
                    finding.text.clone(),
                    finding.evidence.clone(),
                ))
            {
                parsed.findings.push(finding);
            }
            FindingFormat::Rustc
        } else {
            parsed.warnings.push(format!(
                "{at}: not a reviewdog diagnostic, ruff violation, staticcheck problem or cargo/rustc message; skipped"
            ));
            continue;
        };
        parsed.format.get_or_insert(format);
    }
    (lines >= 2 && parsed.format.is_some()).then_some(parsed)
}
