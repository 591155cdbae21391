//! Reading loosely named fields out of JSON objects, shared by the structured parsers.

use serde_json::{Map, Value};

/// Keys that name the file a finding points at.
pub(crate) const FILE_KEYS: &[&str] = &["file", "path", "filename", "file_path", "filePath", "uri"];
/// Keys that name the line a finding points at.
pub(crate) const LINE_KEYS: &[&str] =
    &["line", "line_start", "lineNumber", "lineno", "start_line", "startLine"];
/// Keys whose text makes up the finding's text, in the order they are joined.
pub(crate) const TEXT_KEYS: &[&str] =
    &["title", "body", "message", "description", "recommendation", "suggestion", "text", "comment"];
/// Keys for the reviewer's severity.
pub(crate) const SEVERITY_KEYS: &[&str] = &["severity", "level", "priority"];

/// The first of `keys` whose value is a non-empty string (numbers are rendered too).
pub(crate) fn string(object: &Map<String, Value>, keys: &[&str]) -> Option<String> {
    keys.iter().find_map(|key| scalar_text(object.get(*key)?))
}

/// A string or number as text; empty strings and other types are `None`.
pub(crate) fn scalar_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) if !s.trim().is_empty() => Some(s.trim().to_string()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// Every present text field of `keys`, joined by newlines, skipping repeats.
pub(crate) fn joined_text(object: &Map<String, Value>, keys: &[&str]) -> String {
    let mut parts: Vec<String> = Vec::new();
    for key in keys {
        if let Some(text) = object.get(*key).and_then(text_of)
            && !parts.contains(&text)
        {
            parts.push(text);
        }
    }
    parts.join("\n")
}

/// Text of a field that may be a string or an object with `text`/`markdown`/`body`
/// (SARIF messages, GitLab content).
pub(crate) fn text_of(value: &Value) -> Option<String> {
    match value {
        Value::Object(inner) => ["text", "markdown", "body", "message"]
            .iter()
            .find_map(|key| inner.get(*key).and_then(scalar_text)),
        other => scalar_text(other),
    }
}

/// The first of `keys` that holds a line number. A present but unusable value (zero, negative,
/// fractional, not a number) is reported in `warnings` with `at` naming the object.
pub(crate) fn line(
    object: &Map<String, Value>,
    keys: &[&str],
    at: &str,
    warnings: &mut Vec<String>,
) -> Option<u32> {
    for key in keys {
        let Some(value) = object.get(*key) else { continue };
        match line_number(value) {
            Some(line) => return Some(line),
            None if value.is_null() => {}
            None => {
                warnings.push(format!("{at}.{key}: {value} is not a line number (1 or more); line ignored"))
            }
        }
    }
    None
}

/// The line number at `path` under `object`. A present but unusable value (zero, negative,
/// fractional, not a number) is reported in `warnings` as `{at}.{path}`.
pub(crate) fn line_at(
    object: &Map<String, Value>,
    path: &[&str],
    at: &str,
    warnings: &mut Vec<String>,
) -> Option<u32> {
    let value = dig(object, path)?;
    let line = line_number(value);
    if line.is_none() && !value.is_null() {
        warnings
            .push(format!("{at}.{}: {value} is not a line number (1 or more); line ignored", path.join(".")));
    }
    line
}

/// A 1-based line number from a JSON number or numeric string.
pub(crate) fn line_number(value: &Value) -> Option<u32> {
    let number = match value {
        Value::Number(n) => n.as_u64()?,
        Value::String(s) => s.trim().parse::<u64>().ok()?,
        _ => return None,
    };
    u32::try_from(number).ok().filter(|line| *line >= 1)
}

/// Split `file:line` or `file:line:column` into its parts; `None` when it has no line.
pub(crate) fn split_location(location: &str) -> Option<(String, u32)> {
    let location = location.trim();
    let (rest, last) = location.rsplit_once(':')?;
    let last_number = last.trim().parse::<u32>().ok();
    // `file:line:column`: the line is the second number from the end.
    if let Some((file, line)) = rest.rsplit_once(':')
        && let (Some(_), Ok(line)) = (last_number, line.trim().parse::<u32>())
    {
        return (!file.is_empty() && line >= 1).then(|| (file.to_string(), line));
    }
    let line = last_number?;
    (!rest.is_empty() && line >= 1).then(|| (rest.to_string(), line))
}

/// Remove a `file://` scheme and decode `%XX` escapes, as found in SARIF URIs.
pub(crate) fn clean_path(path: &str) -> String {
    let path = path.trim();
    let path = path.strip_prefix("file://").unwrap_or(path);
    if !path.contains('%') {
        return path.to_string();
    }
    let bytes = path.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let escape = bytes.get(i + 1..i + 3).and_then(|hex| std::str::from_utf8(hex).ok());
        match (bytes[i], escape.and_then(|hex| u8::from_str_radix(hex, 16).ok())) {
            (b'%', Some(byte)) => {
                decoded.push(byte);
                i += 3;
            }
            (byte, _) => {
                decoded.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8(decoded).unwrap_or_else(|_| path.to_string())
}

/// The value at a path of keys under an object.
pub(crate) fn dig<'a>(object: &'a Map<String, Value>, path: &[&str]) -> Option<&'a Value> {
    let (first, rest) = path.split_first()?;
    rest.iter().try_fold(object.get(*first)?, |value, key| value.get(*key))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations_split_with_and_without_columns() {
        assert_eq!(split_location("src/a.py:42"), Some(("src/a.py".into(), 42)));
        assert_eq!(split_location("src/a.py:42:7"), Some(("src/a.py".into(), 42)));
        assert_eq!(split_location(r"C:\src\a.py:9"), Some((r"C:\src\a.py".into(), 9)));
        assert_eq!(split_location("src/a.py"), None);
        assert_eq!(split_location("src/a.py:0"), None);
        assert_eq!(split_location(":12"), None);
    }

    #[test]
    fn uris_lose_their_scheme_and_escapes() {
        assert_eq!(clean_path("file:///home/me/my%20app/a.rs"), "/home/me/my app/a.rs");
        assert_eq!(clean_path("src/100%.rs"), "src/100%.rs");
    }

    #[test]
    fn line_numbers_accept_numeric_strings_only() {
        assert_eq!(line_number(&Value::from(3)), Some(3));
        assert_eq!(line_number(&Value::from("17")), Some(17));
        assert_eq!(line_number(&Value::from(0)), None);
        assert_eq!(line_number(&Value::from(-2)), None);
        assert_eq!(line_number(&Value::from(2.5)), None);
        assert_eq!(line_number(&Value::from(u64::MAX)), None);
    }
}
