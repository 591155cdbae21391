//! Source positions for every node of a YAML (or JSON) document.
//!
//! The value parser knows what a document means but not where each part is. This module
//! reads the same text as a stream of spanned parser events and keeps a tree of spans, so
//! a JSON pointer such as `/criteria/2/threshold` maps back to the line and column of the
//! node it names. It also finds duplicate keys, which value parsers silently collapse.

use revcal_rubric_model::pointer;
use saphyr_parser::{Event, Parser, Span as RawSpan};
use std::collections::HashMap;

/// Deeper documents than this are refused (a rubric is four levels deep).
const MAX_DEPTH: usize = 128;

/// A 1-based line and column (in characters).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Position {
    /// Line, from 1.
    pub line: usize,
    /// Column in characters, from 1.
    pub column: usize,
}

/// The start and (exclusive) end of a node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    /// Where the node starts.
    pub start: Position,
    /// Where it ends.
    pub end: Position,
}

impl Span {
    const DOCUMENT_START: Span =
        Span { start: Position { line: 1, column: 1 }, end: Position { line: 1, column: 1 } };

    fn from_raw(raw: RawSpan, lines: &LineIndex) -> Span {
        Span { start: lines.position(raw.start.index()), end: lines.position(raw.end.index()) }
    }
}

/// Where each line of a text starts, in characters: positions are placed from the parser's
/// character offset, not its own line count, which also breaks lines at a lone `\r` and runs
/// one line past the end of a text without a final newline.
struct LineIndex {
    /// The character offset of each line's first character; lines end at `\n`.
    starts: Vec<usize>,
}

impl LineIndex {
    fn new(text: &str) -> LineIndex {
        let mut starts = vec![0];
        starts.extend(text.chars().enumerate().filter(|(_, c)| *c == '\n').map(|(i, _)| i + 1));
        LineIndex { starts }
    }

    /// The 1-based line and column of the character at `index` (clamped to the text).
    fn position(&self, index: usize) -> Position {
        let line = self.starts.partition_point(|&start| start <= index).max(1);
        let start = self.starts[line - 1];
        Position { line, column: index - start + 1 }
    }
}

/// Which part of a mapping entry a diagnostic should point at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Target {
    /// The key (for an unknown or duplicated field).
    Key,
    /// The value when it is a scalar; the key that introduces it when it is a mapping or
    /// a list (a caret under `anchors:` reads better than one under its first child).
    Auto,
}

#[derive(Debug)]
enum Kind {
    Scalar(String),
    Seq(Vec<Node>),
    Map(Vec<(Node, Node)>),
}

#[derive(Debug)]
struct Node {
    span: Span,
    kind: Kind,
}

/// A duplicated mapping key: where it was first written and where again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DuplicateKey {
    pub pointer: String,
    pub key: String,
    pub first: Span,
    pub second: Span,
}

/// The position tree of one document.
#[derive(Debug, Default)]
pub(crate) struct Marks {
    root: Option<Node>,
}

/// A syntax error found while reading positions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MarkError {
    pub message: String,
    pub position: Position,
}

enum Frame {
    Seq(Span, Vec<Node>),
    Map(Span, Vec<(Node, Node)>, Option<Node>),
}

impl Marks {
    /// Reads the first document of `text`.
    pub(crate) fn parse(text: &str) -> Result<Marks, MarkError> {
        let mut parser = Parser::new_from_str(text);
        let lines = LineIndex::new(text);
        let mut stack: Vec<Frame> = Vec::new();
        while let Some(event) = parser.next_event() {
            let (event, raw_span) = event.map_err(|error| MarkError {
                message: error.info().to_owned(),
                position: lines.position(error.marker().index()),
            })?;
            let span = Span::from_raw(raw_span, &lines);
            let finished = match event {
                Event::Scalar(value, ..) => Some(Node { span, kind: Kind::Scalar(value.into_owned()) }),
                Event::Alias(_) => Some(Node { span, kind: Kind::Scalar(String::new()) }),
                Event::SequenceStart(..) | Event::MappingStart(..) => {
                    if stack.len() >= MAX_DEPTH {
                        return Err(MarkError {
                            message: format!("document is nested deeper than {MAX_DEPTH} levels"),
                            position: span.start,
                        });
                    }
                    stack.push(match event {
                        Event::SequenceStart(..) => Frame::Seq(span, Vec::new()),
                        _ => Frame::Map(span, Vec::new(), None),
                    });
                    None
                }
                Event::SequenceEnd | Event::MappingEnd => match stack.pop() {
                    Some(Frame::Seq(start, items)) => Some(Node {
                        span: Span { start: start.start, end: span.end },
                        kind: Kind::Seq(items),
                    }),
                    Some(Frame::Map(start, entries, _)) => Some(Node {
                        span: Span { start: start.start, end: span.end },
                        kind: Kind::Map(entries),
                    }),
                    None => None,
                },
                Event::DocumentEnd | Event::StreamEnd => break,
                _ => None,
            };
            if let Some(node) = finished {
                match stack.last_mut() {
                    None => return Ok(Marks { root: Some(node) }),
                    Some(Frame::Seq(_, items)) => items.push(node),
                    Some(Frame::Map(_, entries, pending)) => match pending.take() {
                        None => *pending = Some(node),
                        Some(key) => entries.push((key, node)),
                    },
                }
            }
        }
        Ok(Marks { root: None })
    }

    /// Every key that appears twice in one mapping, with both places.
    pub(crate) fn duplicate_keys(&self) -> Vec<DuplicateKey> {
        let mut found = Vec::new();
        if let Some(root) = &self.root {
            collect_duplicates(root, "", &mut found);
        }
        found
    }

    /// The span of the node at `pointer`. When the pointer goes deeper than the document
    /// (a missing field), the deepest existing node on its path is returned.
    pub(crate) fn locate(&self, pointer: &str, target: Target) -> Span {
        let Some(mut node) = self.root.as_ref() else {
            return Span::DOCUMENT_START;
        };
        let mut key_span: Option<Span> = None;
        for segment in pointer::segments(pointer) {
            let next = match &node.kind {
                Kind::Map(entries) => entries
                    .iter()
                    .rev()
                    .find(|(key, _)| matches!(&key.kind, Kind::Scalar(text) if *text == segment))
                    .map(|(key, value)| (Some(key.span), value)),
                Kind::Seq(items) => {
                    segment.parse::<usize>().ok().and_then(|i| items.get(i)).map(|item| (None, item))
                }
                Kind::Scalar(_) => None,
            };
            match next {
                Some((key, value)) => {
                    key_span = key;
                    node = value;
                }
                None => break,
            }
        }
        match (target, &node.kind, key_span) {
            (Target::Key, _, Some(key)) => key,
            (Target::Auto, Kind::Map(_) | Kind::Seq(_), Some(key)) => key,
            _ => node.span,
        }
    }
}

fn collect_duplicates(node: &Node, at: &str, found: &mut Vec<DuplicateKey>) {
    match &node.kind {
        Kind::Scalar(_) => {}
        Kind::Seq(items) => {
            for (index, item) in items.iter().enumerate() {
                collect_duplicates(item, &pointer::join(at, index), found);
            }
        }
        Kind::Map(entries) => {
            let mut first: HashMap<&str, Span> = HashMap::new();
            for (key, value) in entries {
                if let Kind::Scalar(text) = &key.kind {
                    if let Some(&earlier) = first.get(text.as_str()) {
                        found.push(DuplicateKey {
                            pointer: pointer::join(at, text),
                            key: text.clone(),
                            first: earlier,
                            second: key.span,
                        });
                    } else {
                        first.insert(text, key.span);
                    }
                    collect_duplicates(value, &pointer::join(at, text), found);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str =
        "rubric_id: x\ncriteria:\n  - name: a\n    threshold: 11\n  - name: b\n    anchors:\n      1: one\n";

    fn at(marks: &Marks, pointer: &str, target: Target) -> (usize, usize) {
        let span = marks.locate(pointer, target);
        (span.start.line, span.start.column)
    }

    #[test]
    fn pointers_map_to_their_nodes() {
        let marks = Marks::parse(DOC).unwrap();
        assert_eq!(at(&marks, "/rubric_id", Target::Auto), (1, 12));
        assert_eq!(at(&marks, "/rubric_id", Target::Key), (1, 1));
        assert_eq!(at(&marks, "/criteria/0/threshold", Target::Auto), (4, 16));
        // A collection points at the key that introduces it.
        assert_eq!(at(&marks, "/criteria/1/anchors", Target::Auto), (6, 5));
        assert_eq!(at(&marks, "/criteria/1/anchors/1", Target::Auto), (7, 10));
        // A missing field points at the deepest node that exists.
        assert_eq!(at(&marks, "/criteria/1/weight", Target::Auto), (5, 5));
        assert_eq!(at(&marks, "", Target::Auto), (1, 1));
    }

    #[test]
    fn duplicate_keys_name_both_places() {
        let marks = Marks::parse("a: 1\nb:\n  c: 2\n  c: 3\na: 4\n").unwrap();
        let duplicates = marks.duplicate_keys();
        assert_eq!(duplicates.len(), 2);
        let inner = duplicates.iter().find(|d| d.pointer == "/b/c").unwrap();
        assert_eq!((inner.first.start.line, inner.second.start.line), (3, 4));
        assert!(duplicates.iter().any(|d| d.pointer == "/a" && d.second.start.line == 5));
    }

    #[test]
    fn json_documents_are_located_too() {
        let marks = Marks::parse("{\n  \"version\": \"1.0\",\n  \"scale\": {\"min\": 1}\n}").unwrap();
        assert_eq!(at(&marks, "/version", Target::Auto), (2, 14));
        assert_eq!(at(&marks, "/scale/min", Target::Auto), (3, 20));
    }

    #[test]
    fn an_error_at_the_end_of_a_text_without_a_final_newline_is_on_its_last_line() {
        // Found by the `rubric` fuzz target: the parser's own line count put this at 5:1 in
        // a text of four lines.
        let error = Marks::parse("a:\n  b: >-\n    x\nssi  fng SRs").unwrap_err();
        assert_eq!(error.message, "simple key expected");
        assert_eq!((error.position.line, error.position.column), (4, 13), "{error:?}");
    }

    #[test]
    fn deep_nesting_is_refused_not_overflowed() {
        let text = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
        let error = Marks::parse(&text).unwrap_err();
        // The parser's own recursion limit or ours, whichever comes first: never a crash.
        assert!(error.message.contains("nested") || error.message.contains("recursion"), "{}", error.message);
    }
}
