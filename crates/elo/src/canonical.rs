//! RFC 8785 (JCS) canonical JSON, strict parsing and message ids.
//!
//! Signatures and ids are computed over canonical bytes, so the same message written with
//! different whitespace or key order signs and hashes the same. Parsing refuses duplicate
//! object keys: two parsers that keep different duplicates would see different messages
//! behind one signature.

use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use std::fmt;
use std::fmt::Write as _;

/// Nesting deeper than this is refused (a message needs four levels; this bounds the work a
/// hostile line can cause).
pub const MAX_DEPTH: usize = 32;

/// The RFC 8785 canonical form of `value`.
///
/// Fails only for numbers JCS cannot represent (NaN and infinities, which `Value` cannot hold),
/// so callers holding a parsed `Value` can rely on it.
pub fn canonical_bytes(value: &Value) -> Result<Vec<u8>, serde_json::Error> {
    let mut text = String::with_capacity(512);
    if write_simple(value, &mut text) {
        return Ok(text.into_bytes());
    }
    serde_json_canonicalizer::to_vec(value)
}

/// The largest integer every JSON number parser holds exactly (2^53): up to it, JCS writes an
/// integer as its decimal digits, as serde_json holds it.
const EXACT_INTEGER: u64 = 1 << 53;

/// Writes the canonical form of a value whose numbers are all integers up to
/// [`EXACT_INTEGER`] in size (every message and receipt: a fifth of the time of the general
/// canonicalizer, which ingest pays once per message); false, with `out` in an unspecified
/// state, for any other number, which only the general canonicalizer formats as JCS says.
fn write_simple(value: &Value, out: &mut String) -> bool {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Number(number) => {
            // Writing to a String cannot fail.
            let _ = match (number.as_u64(), number.as_i64()) {
                (Some(n), _) if n <= EXACT_INTEGER => write!(out, "{n}"),
                (None, Some(n)) if n.unsigned_abs() <= EXACT_INTEGER => write!(out, "{n}"),
                _ => return false,
            };
        }
        Value::String(text) => write_string(text, out),
        Value::Array(items) => {
            out.push('[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                if !write_simple(item, out) {
                    return false;
                }
            }
            out.push(']');
        }
        Value::Object(object) => {
            // Keys sort by their UTF-16 code units (RFC 8785 section 3.2.3); for ASCII keys
            // that is byte order.
            let mut members: Vec<(&String, &Value)> = object.iter().collect();
            members.sort_by(|(a, _), (b, _)| {
                if a.is_ascii() && b.is_ascii() { a.cmp(b) } else { a.encode_utf16().cmp(b.encode_utf16()) }
            });
            out.push('{');
            for (index, (key, member)) in members.into_iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                write_string(key, out);
                out.push(':');
                if !write_simple(member, out) {
                    return false;
                }
            }
            out.push('}');
        }
    }
    true
}

/// A JSON string as RFC 8785 section 3.2.2.2 writes it: `"` and `\` escaped, the five
/// control characters with a short escape written so, the other control characters as
/// `\u00xx` in lowercase hex, everything else as itself.
fn write_string(text: &str, out: &mut String) {
    out.push('"');
    let mut plain = 0;
    for (index, byte) in text.bytes().enumerate() {
        let escape = match byte {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            0x08 => "\\b",
            0x09 => "\\t",
            0x0a => "\\n",
            0x0c => "\\f",
            0x0d => "\\r",
            0x00..=0x1f => "",
            _ => continue,
        };
        out.push_str(&text[plain..index]);
        if escape.is_empty() {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.push_str("\\u00");
            out.push(char::from(HEX[usize::from(byte >> 4)]));
            out.push(char::from(HEX[usize::from(byte & 0x0f)]));
        } else {
            out.push_str(escape);
        }
        plain = index + 1;
    }
    out.push_str(&text[plain..]);
    out.push('"');
}

/// Lowercase hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// Lowercase hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        out.push(char::from(DIGITS[usize::from(byte >> 4)]));
        out.push(char::from(DIGITS[usize::from(byte & 0x0f)]));
    }
    out
}

/// Parses one JSON document, refusing duplicate keys and nesting deeper than 32 levels.
/// The error carries serde_json's line and column.
pub fn parse_strict(text: &str) -> Result<Value, serde_json::Error> {
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let value = StrictValue::deserialize_at(&mut deserializer, 0)?;
    deserializer.end()?;
    Ok(value)
}

/// A `Value` deserializer that errors on duplicate keys and deep nesting.
struct StrictValue;

impl StrictValue {
    fn deserialize_at<'de, D: Deserializer<'de>>(deserializer: D, depth: usize) -> Result<Value, D::Error> {
        if depth > MAX_DEPTH {
            return Err(de::Error::custom(format!("nesting deeper than {MAX_DEPTH} levels")));
        }
        deserializer.deserialize_any(StrictVisitor { depth })
    }
}

struct StrictVisitor {
    depth: usize,
}

/// Seed that carries the depth into nested values.
struct Nested {
    depth: usize,
}

impl<'de> de::DeserializeSeed<'de> for Nested {
    type Value = Value;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        StrictValue::deserialize_at(deserializer, self.depth)
    }
}

impl<'de> Visitor<'de> for StrictVisitor {
    type Value = Value;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("a JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        serde_json::Number::from_f64(v).map(Value::Number).ok_or_else(|| E::custom("number out of range"))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(Nested { depth: self.depth + 1 })? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut object = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if object.contains_key(&key) {
                return Err(de::Error::custom(format!("duplicate key `{key}`")));
            }
            let value = map.next_value_seed(Nested { depth: self.depth + 1 })?;
            object.insert(key, value);
        }
        Ok(Value::Object(object))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jcs(text: &str) -> String {
        String::from_utf8(canonical_bytes(&parse_strict(text).unwrap()).unwrap()).unwrap()
    }

    /// Any JSON value: strings with control, non-ASCII and astral characters (as keys too),
    /// integers around the 2^53 limit, floats, nesting.
    fn any_value() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let text = || {
            prop::string::string_regex(
                "[\\x00-\\x1f\"\\\\a-z0-9\u{7f}\u{80}\u{e9}\u{20ac}\u{fb33}\u{1f600}]{0,8}",
            )
            .unwrap_or_else(|error| panic!("regex: {error}"))
        };
        let limit = 1i64 << 53;
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            (-limit - 3..limit + 3).prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            (-1e30f64..1e30).prop_map(Value::from),
            text().prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 48, 6, move |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                prop::collection::vec((text(), inner), 0..6)
                    .prop_map(|members| Value::Object(members.into_iter().collect())),
            ]
        })
    }

    proptest::proptest! {
        /// The canonicalizer used for messages writes byte for byte what the general RFC 8785
        /// implementation writes, and hands it every value it does not cover.
        #[test]
        fn canonical_form_matches_the_general_canonicalizer(value in any_value()) {
            let general = serde_json_canonicalizer::to_vec(&value).unwrap_or_else(|error| panic!("{error}"));
            proptest::prop_assert_eq!(canonical_bytes(&value).ok(), Some(general));
        }
    }

    /// RFC 8785 section 3.2.2, the example input and its canonical output.
    #[test]
    fn rfc8785_section_3_2_2_example() {
        let input = r#"{
          "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
          "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
          "literals": [null, true, false]
        }"#;
        let expected = concat!(
            r#"{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"#,
            r#""string":"€$\u000f\nA'B\"\\\\\"/"}"#
        );
        assert_eq!(jcs(input), expected);
    }

    /// RFC 8785 section 3.2.3, property sorting by UTF-16 code units.
    #[test]
    fn rfc8785_section_3_2_3_sorting() {
        let input = r#"{
          "\u20ac": "Euro Sign",
          "\r": "Carriage Return",
          "\ufb33": "Hebrew Letter Dalet With Dagesh",
          "1": "One",
          "\ud83d\ude00": "Emoji: Grinning Face",
          "\u0080": "Control",
          "\u00f6": "Latin Small Letter O With Diaeresis"
        }"#;
        let keys: Vec<String> = match serde_json::from_str::<Value>(&jcs(input)).unwrap() {
            Value::Object(map) => map.keys().cloned().collect(),
            other => panic!("not an object: {other}"),
        };
        let expected = ["\r", "1", "\u{80}", "\u{f6}", "\u{20ac}", "\u{1f600}", "\u{fb33}"];
        assert_eq!(keys, expected);
        assert!(jcs(input).starts_with("{\"\\r\":\"Carriage Return\",\"1\":\"One\""));
    }

    /// RFC 8785 appendix B: IEEE 754 values and their canonical text.
    #[test]
    fn rfc8785_appendix_b_numbers() {
        let cases = [
            ("0", "0"),
            ("-0.0", "0"),
            ("5e-324", "5e-324"),
            ("1.7976931348623157e308", "1.7976931348623157e+308"),
            ("9007199254740992", "9007199254740992"),
            ("295147905179352830000", "295147905179352830000"),
            ("1e+21", "1e+21"),
            ("1e+20", "100000000000000000000"),
            ("0.000001", "0.000001"),
            ("1e-7", "1e-7"),
            ("333333333.3333332", "333333333.3333332"),
            ("-1e-7", "-1e-7"),
        ];
        for (input, expected) in cases {
            assert_eq!(jcs(input), expected, "input {input}");
        }
    }

    #[test]
    fn whitespace_and_key_order_do_not_change_the_canonical_form() {
        assert_eq!(jcs(r#"{ "b" : 1, "a" : [ 1 , 2 ] }"#), r#"{"a":[1,2],"b":1}"#);
        assert_eq!(jcs(r#"{"a":[1,2],"b":1}"#), jcs("{\n\"b\":1.0,\n\"a\":[1,2]}"));
    }

    #[test]
    fn duplicate_keys_are_refused_at_any_depth() {
        let error = parse_strict(r#"{"a":1,"a":2}"#).unwrap_err().to_string();
        assert!(error.contains("duplicate key `a`"), "{error}");
        let error = parse_strict(r#"{"x":{"y":[{"k":1,"k":1}]}}"#).unwrap_err().to_string();
        assert!(error.contains("duplicate key `k`"), "{error}");
    }

    #[test]
    fn deep_nesting_is_refused() {
        let deep = format!("{}{}", "[".repeat(100), "]".repeat(100));
        let error = parse_strict(&deep).unwrap_err().to_string();
        assert!(error.contains("nesting deeper"), "{error}");
        let shallow = format!("{}{}", "[".repeat(10), "]".repeat(10));
        assert!(parse_strict(&shallow).is_ok());
    }

    #[test]
    fn trailing_content_is_refused() {
        assert!(parse_strict(r#"{"a":1} {"b":2}"#).is_err());
    }

    #[test]
    fn sha256_of_abc() {
        assert_eq!(sha256_hex(b"abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    }
}
