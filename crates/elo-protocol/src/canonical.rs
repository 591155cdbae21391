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
use std::sync::Arc;

/// Nesting deeper than this is refused (a message needs four levels; this bounds the work a
/// hostile line can cause).
pub(crate) const MAX_DEPTH: usize = 32;

/// The RFC 8785 canonical form of `value`, as `serde_json_canonicalizer` writes it.
///
/// Fails only for numbers JCS cannot represent (NaN and infinities, which `Value` cannot hold),
/// so callers holding a parsed `Value` can rely on it.
pub(crate) fn canonical_bytes(value: &Value) -> Result<Vec<u8>, serde_json::Error> {
    serde_json_canonicalizer::to_vec(value)
}

/// The canonical form of `value` as text (RFC 8785 output is UTF-8).
pub fn canonical_text(value: &Value) -> Result<String, serde_json::Error> {
    serde_json_canonicalizer::to_string(value)
}

/// JSON that did not parse, or did not have the shape asked for: serde_json's error, shared
/// so that the errors holding it can be cloned and compared.
#[derive(Debug, Clone)]
pub struct JsonError(Arc<serde_json::Error>);

impl JsonError {
    /// 1-based line of the error within the text parsed; 0 when it has no position.
    pub fn line(&self) -> usize {
        self.0.line()
    }

    /// 1-based column of the error; 0 when it has no position.
    pub fn column(&self) -> usize {
        self.0.column()
    }

    /// What the parser said, without serde_json's trailing " at line L column C".
    pub fn reason(&self) -> String {
        let text = self.0.to_string();
        match text.rfind(" at line ") {
            Some(index) => text[..index].to_owned(),
            None => text,
        }
    }

    /// serde_json's error.
    pub fn get_ref(&self) -> &serde_json::Error {
        &self.0
    }
}

impl From<serde_json::Error> for JsonError {
    fn from(error: serde_json::Error) -> JsonError {
        JsonError(Arc::new(error))
    }
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// Transparent: the same message and the same source as serde_json's error.
impl std::error::Error for JsonError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0.source()
    }
}

impl PartialEq for JsonError {
    fn eq(&self, other: &JsonError) -> bool {
        self.0.classify() == other.0.classify() && self.0.to_string() == other.0.to_string()
    }
}

impl Eq for JsonError {}

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

/// Parses one JSON document, refusing duplicate keys and nesting deeper than 32 levels, as
/// the ledger does with every message and receipt. Parse JSON text with this before
/// [`crate::sign_value`], so that what is signed is what a verifier will read. The error
/// carries serde_json's line and column.
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
        /// The canonical form of any value (control, non-ASCII and astral characters, integers
        /// around 2^53, floats, nesting) is the canonicalizer's, byte for byte.
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
