//! Findings documents inside something else: log noise around a JSON document, a Markdown
//! fence in an LLM's answer, or a JSON wrapper that carries the answer as a string (as
//! `claude -p --output-format json` does in `result`).

use std::collections::HashSet;

use serde_json::Value;

use super::{Finding, FindingFormat, ParsedFindings, recognise};

/// How many wrappers deep a findings document is looked for (objects, arrays, strings).
pub(super) const NESTING_BUDGET: u8 = 4;

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
        Value::String(text) if text.contains(['{', '[']) => found.extend(scan_documents(text, budget - 1)),
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
    let documents = scan_documents(text, NESTING_BUDGET);
    let count = documents.len();
    match Document::merge(documents) {
        Some(document) => {
            let mut parsed = document.into_parsed(true);
            if count > 1 {
                parsed.warnings.push(format!("{count} findings documents found in the output; merged"));
            }
            parsed
        }
        None => ParsedFindings::default(),
    }
}

/// The documents found at JSON starts in `text`.
///
/// Every `{` or `[` that plausibly starts a document is parsed from there. A parse that fails
/// has read a valid JSON prefix up to its error; every bracket inside that prefix either
/// fails at the same place (it is still open there, or it sits inside a string) or starts a
/// value that closes within it. So after a failure only the outermost closed values of the
/// prefix are tried ([`Prefix`]): each byte is read by at most one failed attempt and one
/// successful one, and the scan is linear in the size of `text`, however the brackets nest.
fn scan_documents(text: &str, budget: u8) -> Vec<Document> {
    let bytes = text.as_bytes();
    let mut documents = Vec::new();
    let mut start = 0;
    let mut prefix: Option<Prefix<'_>> = None;
    let mut lines = LineCounter { text: bytes, offset: 0, line: 1 };
    while start < bytes.len() {
        let at = match prefix.as_mut() {
            Some(walk) => match walk.next_candidate() {
                Some(candidate) => candidate,
                None => {
                    start = start.max(walk.end);
                    prefix = None;
                    continue;
                }
            },
            None => match bytes[start..].iter().position(|b| *b == b'{' || *b == b'[') {
                Some(offset) => start + offset,
                None => break,
            },
        };
        if at < start || !plausible_json_start(&bytes[at..]) {
            start = start.max(at + 1);
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
            Some(Err(error)) if prefix.is_none() => {
                let end = match error.classify() {
                    serde_json::error::Category::Eof => bytes.len(),
                    _ => at + offset_of(&bytes[at..], error.line(), error.column()),
                };
                prefix = Some(Prefix::new(bytes, at, end.clamp(at + 1, bytes.len())));
                start = at + 1;
            }
            // Inside a failed attempt's prefix every candidate closes, so this does not happen;
            // if it does, the candidate costs no more than its own length.
            _ => start = at + 1,
        }
    }
    documents
}

/// The byte offset of serde_json's 1-based `line` and `column` (the byte at fault) in `bytes`.
fn offset_of(bytes: &[u8], line: usize, column: usize) -> usize {
    let mut line_start = 0;
    for _ in 1..line {
        match bytes[line_start..].iter().position(|b| *b == b'\n') {
            Some(newline) => line_start += newline + 1,
            None => return bytes.len(),
        }
    }
    (line_start + column.saturating_sub(1)).min(bytes.len())
}

/// The part of the text a failed parse read, `bytes[start..end]`: a valid JSON prefix that
/// begins with the bracket at `start`. Yields the brackets in it worth trying: those that
/// open a value closing before `end` and are not inside another such value.
struct Prefix<'a> {
    bytes: &'a [u8],
    end: usize,
    /// Brackets still open at `end` (they would fail where the first attempt failed), in order.
    unclosed: Vec<usize>,
    /// The walk: position, the open brackets, and whether it is inside a string.
    position: usize,
    open: Vec<usize>,
    in_string: bool,
}

impl<'a> Prefix<'a> {
    fn new(bytes: &'a [u8], start: usize, end: usize) -> Self {
        let mut walk =
            Prefix { bytes, end, unclosed: Vec::new(), position: start, open: Vec::new(), in_string: false };
        while walk.step().is_some() {}
        let unclosed = std::mem::take(&mut walk.open);
        Prefix { unclosed, position: start, in_string: false, ..walk }
    }

    /// The next bracket that opens a value whose parent is still open at `end`.
    fn next_candidate(&mut self) -> Option<usize> {
        loop {
            let opened = self.step()?;
            let parent = self.open.len().checked_sub(2).map(|index| self.open[index]);
            let outermost_closed = parent.is_some_and(|parent| self.unclosed.binary_search(&parent).is_ok());
            if outermost_closed && self.unclosed.binary_search(&opened).is_err() {
                return Some(opened);
            }
        }
    }

    /// Walks to the next bracket that opens outside a string and returns its position, keeping
    /// `open` current; `None` at `end`.
    fn step(&mut self) -> Option<usize> {
        let mut escaped = false;
        while self.position < self.end {
            let at = self.position;
            let byte = self.bytes[at];
            self.position += 1;
            if self.in_string {
                match byte {
                    _ if escaped => escaped = false,
                    b'\\' => escaped = true,
                    b'"' => self.in_string = false,
                    _ => {}
                }
                continue;
            }
            match byte {
                b'"' => self.in_string = true,
                b'{' | b'[' => {
                    self.open.push(at);
                    return Some(at);
                }
                b'}' | b']' => {
                    self.open.pop();
                }
                _ => {}
            }
        }
        None
    }
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
