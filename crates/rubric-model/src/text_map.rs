//! An ordered map of text keyed by short strings, used for anchors and examples.
//!
//! Authors write `1: ...` (an integer key) and `"9-10": ...` (a string key) side by side,
//! and expect `revcal rubric get` to print them back in the order they wrote them, so this
//! is a list of pairs rather than a sorted map, and integer keys are read as their text.

use serde::de::{self, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// Ordered `key -> text` pairs as written in the rubric. Keys are kept verbatim; the
/// semantic checks decide whether they are valid anchor or example keys.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TextMap(Vec<(String, String)>);

impl TextMap {
    /// An empty map.
    pub fn new() -> TextMap {
        TextMap(Vec::new())
    }

    /// The pairs in authoring order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// The text for `key`; with duplicate keys, the last one wins (as in YAML loaders).
    pub fn get(&self, key: &str) -> Option<&str> {
        self.0.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }

    /// Number of pairs.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True when there are no pairs.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Appends a pair.
    pub fn push(&mut self, key: impl Into<String>, text: impl Into<String>) {
        self.0.push((key.into(), text.into()));
    }
}

impl<K: Into<String>, V: Into<String>> FromIterator<(K, V)> for TextMap {
    fn from_iter<T: IntoIterator<Item = (K, V)>>(iter: T) -> Self {
        TextMap(iter.into_iter().map(|(k, v)| (k.into(), v.into())).collect())
    }
}

impl Serialize for TextMap {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (key, text) in &self.0 {
            map.serialize_entry(key, text)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for TextMap {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(TextMapVisitor)
    }
}

struct TextMapVisitor;

impl<'de> Visitor<'de> for TextMapVisitor {
    type Value = TextMap;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a mapping from keys to text")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<TextMap, A::Error> {
        let mut pairs = Vec::with_capacity(access.size_hint().unwrap_or(0));
        while let Some(key) = access.next_key::<Key>()? {
            pairs.push((key.0, access.next_value::<String>()?));
        }
        Ok(TextMap(pairs))
    }
}

/// A map key that may be written as a string or as an integer.
struct Key(String);

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(KeyVisitor)
    }
}

struct KeyVisitor;

impl Visitor<'_> for KeyVisitor {
    type Value = Key;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string or integer key")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Key, E> {
        Ok(Key(v.to_owned()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Key, E> {
        Ok(Key(v))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Key, E> {
        Ok(Key(v.to_string()))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Key, E> {
        Ok(Key(v.to_string()))
    }
}
