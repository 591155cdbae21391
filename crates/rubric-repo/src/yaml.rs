//! The one place that parses and writes YAML documents.
//!
//! serde_yaml is the parser (it is archived upstream, so everything YAML-specific stays
//! behind this module's three functions). Documents become `serde_json::Value`, the form
//! the JSON Schema validator and the typed model both read. JSON files take serde_json's
//! stricter path here too, so the caller never needs to know which format a file is in.

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};
use std::fmt;

/// A syntax error with its 1-based position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SyntaxError {
    pub message: String,
    pub line: usize,
    pub column: usize,
    pub hint: Option<String>,
}

/// Messages for documents that parse but hold what a rubric cannot (see [`JsonVisitor`]).
const NOT_FINITE: &str = "is not a finite number";
const TAGS: &str = "YAML tags (`!name`) are not supported in rubrics";
const COLLECTION_KEY: &str = "cannot be a mapping key";

/// The fix hint for a parser message: content problems get their own, syntax errors the
/// usual suspects of their format.
pub(crate) fn hint_for(message: &str, syntax: Syntax) -> String {
    if message.contains(NOT_FINITE) {
        "write a number such as 3 or 2.5 (`.nan` and `.inf` are not scores)".to_owned()
    } else if message.contains(TAGS) {
        "remove the `!tag`; rubric values are plain strings, numbers and lists".to_owned()
    } else if message.contains(COLLECTION_KEY) {
        "keys are plain names such as `threshold` or `3`".to_owned()
    } else if message.contains("recursion limit") || message.contains("nested deeper") {
        "a rubric is four levels deep; this document nests far deeper".to_owned()
    } else {
        match syntax {
            Syntax::Yaml => {
                "check indentation (spaces, not tabs), colons after keys, and closing brackets and quotes"
            }
            Syntax::Json => "check commas between entries, double quotes around keys, and closing brackets",
        }
        .to_owned()
    }
}

/// The document syntax of a file, chosen by its extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Syntax {
    Yaml,
    Json,
}

/// Parses one document into a JSON value.
pub(crate) fn parse(text: &str, syntax: Syntax) -> Result<Value, SyntaxError> {
    match syntax {
        Syntax::Json => serde_json::from_str(text).map_err(|error| {
            let message = strip_position(&error.to_string());
            SyntaxError {
                hint: Some(hint_for(&message, syntax)),
                message,
                line: error.line().max(1),
                column: error.column().max(1),
            }
        }),
        Syntax::Yaml => {
            let deserializer = serde_yaml::Deserializer::from_str(text);
            JsonSeed.deserialize(deserializer).map_err(|error| {
                // Placed from the byte offset, not libyaml's own line count: libyaml (YAML 1.1)
                // also breaks lines at U+2028, U+2029 and U+0085, which editors and every
                // other position revcal reports do not.
                let (line, column) = error
                    .location()
                    .map_or((1, 1), |l| crate::source::byte_position(text.as_bytes(), l.index()));
                let message = strip_position(&error.to_string());
                SyntaxError { hint: Some(hint_for(&message, syntax)), message, line, column }
            })
        }
    }
}

/// Writes a value as a YAML document.
pub fn to_yaml_string<T: serde::Serialize>(value: &T) -> Result<String, String> {
    serde_yaml::to_string(value).map_err(|error| error.to_string())
}

/// Drops the " at line X column Y" tail that parsers append: the diagnostic carries the
/// position in its own fields.
fn strip_position(message: &str) -> String {
    let cut = message.find(" at line ").unwrap_or(message.len());
    let head = &message[..cut];
    // serde_yaml appends context after the position ("..., while parsing a flow sequence").
    let tail = message[cut..].find(", while ").map(|i| &message[cut + i..]).unwrap_or("");
    let tail = match tail.find(" at line ") {
        Some(i) => &tail[..i],
        None => tail,
    };
    format!("{head}{tail}")
}

/// Builds a `serde_json::Value` from any self-describing deserializer, refusing what JSON
/// cannot hold (non-finite numbers, YAML tags, non-scalar keys) with a message instead of
/// silently changing it.
struct JsonSeed;

impl<'de> DeserializeSeed<'de> for JsonSeed {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(JsonVisitor)
    }
}

struct JsonVisitor;

impl<'de> Visitor<'de> for JsonVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a YAML value")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        Number::from_f64(v).map(Value::Number).ok_or_else(|| {
            E::custom(format!("`{v}` is not a finite number; scores and thresholds must be finite"))
        })
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(JsonVisitor)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(JsonSeed)? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut object = Map::new();
        // A duplicate key keeps the last value, as YAML loaders do; the position tree
        // reports every duplicate with both places.
        while let Some(key) = map.next_key_seed(KeySeed)? {
            let value = map.next_value_seed(JsonSeed)?;
            object.insert(key, value);
        }
        Ok(Value::Object(object))
    }

    fn visit_enum<A: de::EnumAccess<'de>>(self, _data: A) -> Result<Value, A::Error> {
        Err(de::Error::custom(TAGS))
    }
}

/// Map keys: scalars become their text (`1:` is the key "1"); collections are refused.
struct KeySeed;

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = String;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<String, D::Error> {
        deserializer.deserialize_any(KeyVisitor)
    }
}

struct KeyVisitor;

impl<'de> Visitor<'de> for KeyVisitor {
    type Value = String;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a scalar mapping key")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<String, E> {
        Ok(v.to_string())
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<String, E> {
        Ok(v.to_string())
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<String, E> {
        Ok(v.to_string())
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<String, E> {
        Ok(v.to_string())
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<String, E> {
        Ok(v.to_owned())
    }

    fn visit_unit<E: de::Error>(self) -> Result<String, E> {
        Ok("null".to_owned())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, _seq: A) -> Result<String, A::Error> {
        Err(de::Error::custom(format!("a list {COLLECTION_KEY}")))
    }

    fn visit_map<A: MapAccess<'de>>(self, _map: A) -> Result<String, A::Error> {
        Err(de::Error::custom(format!("a mapping {COLLECTION_KEY}")))
    }

    fn visit_enum<A: de::EnumAccess<'de>>(self, _data: A) -> Result<String, A::Error> {
        Err(de::Error::custom(TAGS))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_keys_become_text_and_numbers_stay_numbers() {
        let value = parse("anchors:\n  1: one\n  9-10: top\nversion: 1.0\n", Syntax::Yaml).unwrap();
        assert_eq!(value["anchors"]["1"], "one");
        assert_eq!(value["anchors"]["9-10"], "top");
        assert!(value["version"].is_f64());
    }

    #[test]
    fn what_json_cannot_hold_is_refused_with_a_position() {
        let error = parse("a: 1\nb: .nan\n", Syntax::Yaml).unwrap_err();
        assert!(error.message.contains("finite"), "{}", error.message);
        assert_eq!(error.line, 2);
        let error = parse("a: !custom 3\n", Syntax::Yaml).unwrap_err();
        assert!(error.message.contains("tags"), "{}", error.message);
        let error = parse("? [a, b]\n: c\n", Syntax::Yaml).unwrap_err();
        assert!(error.message.contains("key"), "{}", error.message);
    }

    #[test]
    fn syntax_errors_are_placed_by_newlines_alone() {
        // U+2028 is a line break to libyaml but not to an editor: the error stays on line 1.
        let error = parse("0:\u{2028}\"\"x", Syntax::Yaml).unwrap_err();
        assert_eq!((error.line, error.column), (1, 7));
        let error = parse("a: b\nééé: c: d\n", Syntax::Yaml).unwrap_err();
        assert_eq!((error.line, error.column), (2, 7));
    }

    #[test]
    fn syntax_errors_carry_positions_without_repeating_them() {
        let error = parse("a: [1, 2\nb: c\n", Syntax::Yaml).unwrap_err();
        assert_eq!(error.line, 2);
        assert!(!error.message.contains(" at line "), "{}", error.message);
        let error = parse("{\"a\": 1,\n \"b\": }", Syntax::Json).unwrap_err();
        assert_eq!((error.line, error.column), (2, 7));
    }
}
