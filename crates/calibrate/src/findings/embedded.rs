//! Findings documents inside something else: log noise around a JSON document, a Markdown
//! fence in an LLM's answer, or a JSON wrapper that carries the answer as a string (as
//! `claude -p --output-format json` does in `result`).

use std::collections::HashSet;

use serde_json::Value;

use super::{Finding, FindingFormat, ParsedFindings, recognise};

/// How many wrappers deep a findings document is looked for (objects, arrays, strings).
pub(super) const NESTING_BUDGET: u8 = 4;
/// After this many failed parse attempts the scan gives up (protects against quadratic time
/// on huge outputs full of unbalanced brackets).
const MAX_FAILED_ATTEMPTS: usize = 2_000;

/// A recognised findings document.
pub(super) struct Document {
    format: FindingFormat,
    findings: Vec<Finding>,
    warnings: Vec<String>,
}

impl Document {
    pub(super) fn into_parsed(self, embedded: bool) -> ParsedFindings {
        ParsedFindings {
            format: Some(self.format),
            findings: self.findings,
            warnings: self.warnings,
            embedded,
        }
    }

    /// Merge documents: the first one's format, every finding once.
    fn merge(documents: Vec<Document>) -> Option<Document> {
        let mut documents = documents.into_iter();
        let mut merged = documents.next()?;
        let mut seen: HashSet<Finding> = merged.findings.iter().cloned().collect();
        for document in documents {
            merged.warnings.extend(document.warnings);
            for finding in document.findings {
                if seen.insert(finding.clone()) {
                    merged.findings.push(finding);
                }
            }
        }
        Some(merged)
    }
}

/// `value` itself if it is a findings document, else the documents found inside it.
pub(super) fn recognise_within(value: &Value, budget: u8) -> Option<Document> {
    if let Some((format, findings, warnings)) = recognise(value) {
        return Some(Document { format, findings, warnings });
    }
    if budget == 0 {
        return None;
    }
    let mut found = Vec::new();
    let mut visit = |child: &Value| match child {
        Value::String(text) if text.contains(['{', '[']) => found.extend(scan_documents(text, budget - 1).0),
        Value::Object(_) | Value::Array(_) => found.extend(recognise_within(child, budget - 1)),
        _ => {}
    };
    match value {
        Value::Object(object) => object.values().for_each(&mut visit),
        Value::Array(items) => items.iter().for_each(&mut visit),
        _ => {}
    }
    Document::merge(found)
}

/// Every findings document embedded in `text`, merged, as a parse result (format `None` when
/// there is none).
pub(super) fn scan(text: &str) -> ParsedFindings {
    let (documents, warnings) = scan_documents(text, NESTING_BUDGET);
    let count = documents.len();
    match Document::merge(documents) {
        Some(document) => {
            let mut parsed = document.into_parsed(true);
            if count > 1 {
                parsed.warnings.push(format!("{count} findings documents found in the output; merged"));
            }
            parsed.warnings.extend(warnings);
            parsed
        }
        None => ParsedFindings { warnings, ..ParsedFindings::default() },
    }
}

/// The documents found at JSON starts in `text`, and warnings about the scan itself.
fn scan_documents(text: &str, budget: u8) -> (Vec<Document>, Vec<String>) {
    let bytes = text.as_bytes();
    let mut documents = Vec::new();
    let mut warnings = Vec::new();
    let mut failed = 0;
    let mut start = 0;
    let mut lines = LineCounter { text: bytes, offset: 0, line: 1 };
    while start < bytes.len() {
        let Some(offset) = bytes[start..].iter().position(|b| *b == b'{' || *b == b'[') else { break };
        let at = start + offset;
        if !plausible_json_start(&bytes[at..]) {
            start = at + 1;
            continue;
        }
        // `at` is the index of an ASCII bracket, so it is a char boundary.
        let mut stream = serde_json::Deserializer::from_str(&text[at..]).into_iter::<Value>();
        match stream.next() {
            Some(Ok(value)) => {
                let end = at + stream.byte_offset();
                let empty_array = value.as_array().is_some_and(Vec::is_empty);
                if !empty_array && let Some(mut document) = recognise_within(&value, budget) {
                    let line = lines.line_of(at);
                    for warning in &mut document.warnings {
                        *warning = format!("JSON at line {line}: {warning}");
                    }
                    documents.push(document);
                }
                start = end.max(at + 1);
            }
            _ => {
                failed += 1;
                if failed >= MAX_FAILED_ATTEMPTS {
                    warnings.push(format!(
                        "stopped looking for embedded JSON after {MAX_FAILED_ATTEMPTS} malformed candidates"
                    ));
                    break;
                }
                start = at + 1;
            }
        }
    }
    (documents, warnings)
}

/// A `{` followed by a key or `}`, or a `[` followed by an object, an array or `]`.
fn plausible_json_start(bytes: &[u8]) -> bool {
    let Some((open, rest)) = bytes.split_first() else { return false };
    let next = rest.iter().find(|b| !b.is_ascii_whitespace());
    matches!((open, next), (b'{', Some(b'"' | b'}')) | (b'[', Some(b'{' | b'[' | b']')))
}

/// 1-based line numbers of increasing byte offsets, counted incrementally (linear overall).
struct LineCounter<'a> {
    text: &'a [u8],
    offset: usize,
    line: usize,
}

impl LineCounter<'_> {
    fn line_of(&mut self, offset: usize) -> usize {
        let offset = offset.min(self.text.len());
        if offset > self.offset {
            self.line += self.text[self.offset..offset].iter().filter(|b| **b == b'\n').count();
            self.offset = offset;
        }
        self.line
    }
}
