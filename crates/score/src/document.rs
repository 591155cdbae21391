//! A review document read into a tree that remembers where every node starts.
//!
//! JSON and YAML both go through one YAML 1.2 event parser (JSON is YAML's flow style), so
//! every value, in either format, carries its line and column. Input errors can then name
//! the position of a bad score as precisely as a syntax error's.

use crate::error::{ParseError, Position};
use saphyr_parser::{Event, Parser, ScalarStyle};

/// Documents nested deeper than this are refused (a review is four levels deep).
const MAX_DEPTH: usize = 64;

/// The syntax a review document is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// JSON.
    Json,
    /// YAML.
    Yaml,
}

impl std::fmt::Display for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Format::Json => "JSON",
            Format::Yaml => "YAML",
        })
    }
}

impl Format {
    /// Guesses the format from the text: a document whose first non-blank character opens
    /// a JSON object or array is JSON, anything else YAML.
    pub fn detect(text: &str) -> Format {
        match text.trim_start_matches('\u{feff}').trim_start().chars().next() {
            Some('{' | '[') => Format::Json,
            _ => Format::Yaml,
        }
    }
}

/// A scalar or collection, with the position where it starts.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Node {
    pub position: Position,
    pub value: Value,
}

/// The value of a node, with YAML 1.2 core-schema typing of plain scalars.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value {
    Null,
    Bool(bool),
    Number(f64),
    String(String),
    Seq(Vec<Node>),
    /// Entries in document order; keys are the key text and where it is written.
    Map(Vec<(String, Position, Node)>),
}

impl Value {
    /// What a user would call this kind of value, for "expected a number, found ..." messages.
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "a boolean",
            Value::Number(_) => "a number",
            Value::String(_) => "a string",
            Value::Seq(_) => "a list",
            Value::Map(_) => "a mapping",
        }
    }
}

enum Frame {
    Seq(Position, Vec<Node>),
    Map(Position, Vec<(String, Position, Node)>, Option<(String, Position)>),
}

/// Parses `text` in `format` into a positioned tree. An empty document is an error.
pub(crate) fn parse(text: &str, format: Format) -> Result<Node, ParseError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if format == Format::Json {
        // serde_json's messages and positions are the ones a JSON author expects.
        if let Err(error) = serde_json::from_str::<serde_json::Value>(text) {
            return Err(ParseError {
                format,
                position: Some(Position { line: error.line(), column: error.column() }),
                message: strip_position(&error.to_string()),
            });
        }
    }
    // Valid JSON has tabs only between tokens, where YAML's flow style may reject them as
    // indentation; a space in their place keeps every column.
    let owned;
    let source = if format == Format::Json && text.contains('\t') {
        owned = text.replace('\t', " ");
        owned.as_str()
    } else {
        text
    };
    read_tree(source).map_err(|(message, position)| ParseError { format, position, message })
}

fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(at) => message[..at].to_owned(),
        None => message.to_owned(),
    }
}

fn read_tree(text: &str) -> Result<Node, (String, Option<Position>)> {
    let mut parser = Parser::new_from_str(text);
    let mut stack: Vec<Frame> = Vec::new();
    while let Some(event) = parser.next_event() {
        let (event, span) = event.map_err(|error| {
            let marker = error.marker();
            (error.info().to_owned(), Some(Position { line: marker.line().max(1), column: marker.col() + 1 }))
        })?;
        let position = Position { line: span.start.line().max(1), column: span.start.col() + 1 };
        let finished = match event {
            Event::Scalar(text, style, _, tag) => {
                Some(Node { position, value: scalar(&text, style, tag.is_some()) })
            }
            Event::Alias(_) => {
                return Err((
                    "YAML aliases (`*name`) are not supported in reviews".to_owned(),
                    Some(position),
                ));
            }
            Event::SequenceStart(..) | Event::MappingStart(..) => {
                if stack.len() >= MAX_DEPTH {
                    return Err((
                        format!("document is nested deeper than {MAX_DEPTH} levels"),
                        Some(position),
                    ));
                }
                stack.push(match event {
                    Event::SequenceStart(..) => Frame::Seq(position, Vec::new()),
                    _ => Frame::Map(position, Vec::new(), None),
                });
                None
            }
            Event::SequenceEnd | Event::MappingEnd => match stack.pop() {
                Some(Frame::Seq(start, items)) => Some(Node { position: start, value: Value::Seq(items) }),
                Some(Frame::Map(start, entries, _)) => {
                    Some(Node { position: start, value: Value::Map(entries) })
                }
                None => None,
            },
            Event::DocumentEnd | Event::StreamEnd => break,
            _ => None,
        };
        let Some(node) = finished else { continue };
        match stack.last_mut() {
            None => return Ok(node),
            Some(Frame::Seq(_, items)) => items.push(node),
            Some(Frame::Map(_, entries, pending)) => match pending.take() {
                Some((key, key_position)) => entries.push((key, key_position, node)),
                None => match node.value {
                    Value::String(key) => *pending = Some((key, node.position)),
                    Value::Number(_) | Value::Bool(_) | Value::Null => {
                        // A plain key such as `1:` or `true:` is still a name here.
                        *pending = Some((key_text(&node.value), node.position));
                    }
                    Value::Seq(_) | Value::Map(_) => {
                        return Err(("a mapping key must be a plain name".to_owned(), Some(node.position)));
                    }
                },
            },
        }
    }
    Err(("the document is empty".to_owned(), None))
}

fn key_text(value: &Value) -> String {
    match value {
        Value::Number(n) => n.to_string(),
        Value::Bool(b) => b.to_string(),
        _ => String::new(),
    }
}

/// Types a scalar the way YAML 1.2's core schema does; quoted scalars are always strings.
fn scalar(text: &str, style: ScalarStyle, tagged: bool) -> Value {
    if style != ScalarStyle::Plain || tagged {
        return Value::String(text.to_owned());
    }
    match text {
        "" | "~" | "null" | "Null" | "NULL" => return Value::Null,
        "true" | "True" | "TRUE" => return Value::Bool(true),
        "false" | "False" | "FALSE" => return Value::Bool(false),
        ".nan" | ".NaN" | ".NAN" => return Value::Number(f64::NAN),
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => return Value::Number(f64::INFINITY),
        "-.inf" | "-.Inf" | "-.INF" => return Value::Number(f64::NEG_INFINITY),
        _ => {}
    }
    if looks_numeric(text)
        && let Ok(number) = text.parse::<f64>()
    {
        return Value::Number(number);
    }
    Value::String(text.to_owned())
}

/// Decimal numbers only: `parse::<f64>` alone would also take `inf` and `NaN`, which YAML
/// reads as strings.
fn looks_numeric(text: &str) -> bool {
    let body = text.strip_prefix(['-', '+']).unwrap_or(text);
    body.starts_with(|c: char| c.is_ascii_digit() || c == '.')
        && body.chars().all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '-' | '+'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root(text: &str) -> Node {
        parse(text, Format::detect(text)).unwrap()
    }

    #[test]
    fn json_and_yaml_give_the_same_values_with_positions() {
        let json = root("{\"a\": 6.5, \"b\": [\"x\", null]}");
        let yaml = root("a: 6.5\nb:\n  - x\n  - null\n");
        let (Value::Map(j), Value::Map(y)) = (&json.value, &yaml.value) else { panic!("maps") };
        assert_eq!(j[0].2.value, Value::Number(6.5));
        assert_eq!(y[0].2.value, Value::Number(6.5));
        assert_eq!(j[0].2.position, Position { line: 1, column: 7 });
        assert_eq!(y[1].1, Position { line: 2, column: 1 });
        assert_eq!(
            y[1].2.value,
            Value::Seq(vec![
                Node { position: Position { line: 3, column: 5 }, value: Value::String("x".into()) },
                Node { position: Position { line: 4, column: 5 }, value: Value::Null },
            ])
        );
    }

    #[test]
    fn quoted_numbers_stay_strings() {
        let node = root("a: \"7\"\nb: inf\n");
        let Value::Map(entries) = node.value else { panic!("map") };
        assert_eq!(entries[0].2.value, Value::String("7".into()));
        assert_eq!(entries[1].2.value, Value::String("inf".into()));
    }

    #[test]
    fn json_syntax_errors_carry_line_and_column() {
        let error = parse("{\n  \"a\": 1,\n}", Format::Json).unwrap_err();
        assert_eq!(error.position, Some(Position { line: 3, column: 1 }));
        assert!(error.message.contains("trailing comma"), "{}", error.message);
    }

    #[test]
    fn tabs_in_json_keep_columns() {
        let node = root("{\n\t\"a\":\t7\n}");
        let Value::Map(entries) = node.value else { panic!("map") };
        assert_eq!(entries[0].2.position, Position { line: 2, column: 7 });
    }

    #[test]
    fn yaml_syntax_errors_carry_line_and_column() {
        let error = parse("a: [1, 2\nb: 3\n", Format::Yaml).unwrap_err();
        assert!(error.position.is_some(), "{error:?}");
    }

    #[test]
    fn empty_and_deep_documents_are_errors() {
        assert!(parse("", Format::Yaml).is_err());
        assert!(parse("# only a comment\n", Format::Yaml).is_err());
        let deep = "[".repeat(100) + &"]".repeat(100);
        assert!(parse(&deep, Format::Json).unwrap_err().message.contains("nested deeper"));
    }
}
