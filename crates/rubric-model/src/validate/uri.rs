//! RFC 3986 URI-reference syntax, enough to reject what authors actually get wrong:
//! spaces and other characters that must be percent-encoded, bad escapes, bad schemes.

/// Why `text` is not an RFC 3986 URI reference (with a fix hint), or `None` when it is.
///
/// ```
/// use revcal_rubric_model::validate::uri_reference_problem;
/// assert!(uri_reference_problem("calibration/user_story_quality_v1.jsonl").is_none());
/// assert!(uri_reference_problem("https://example.com/data.jsonl").is_none());
/// assert!(uri_reference_problem("my data.jsonl").is_some());
/// assert!(uri_reference_problem("1http://x").is_some());
/// ```
pub fn uri_reference_problem(text: &str) -> Option<(String, String)> {
    if text.is_empty() {
        return Some((
            "it is empty".to_owned(),
            "give a relative path or a URL, or remove the field".to_owned(),
        ));
    }
    let first_delimiter = text.find([':', '/', '?', '#']);
    if let Some(colon) = first_delimiter.filter(|&i| text.as_bytes()[i] == b':') {
        let scheme = &text[..colon];
        let valid_scheme = scheme.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
            && scheme.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
        if !valid_scheme {
            return Some((
                format!("`{scheme}` is not a valid scheme"),
                "a scheme starts with a letter (`https:`, `file:`); for a relative path with a colon, write `./` first"
                    .to_owned(),
            ));
        }
    }
    let mut fragments = 0;
    let bytes = text.as_bytes();
    let mut index = 0;
    while index < bytes.len() {
        let byte = bytes[index];
        match byte {
            b'%' => {
                let valid =
                    bytes.get(index + 1..index + 3).is_some_and(|hex| hex.iter().all(u8::is_ascii_hexdigit));
                if !valid {
                    return Some((
                        format!("`%` at position {} does not start a %XX escape", index + 1),
                        "write `%25` for a literal percent sign".to_owned(),
                    ));
                }
                index += 3;
                continue;
            }
            b'#' => {
                fragments += 1;
                if fragments > 1 {
                    return Some((
                        format!("second `#` at position {}", index + 1),
                        "only one fragment is allowed; percent-encode `#` as `%23`".to_owned(),
                    ));
                }
            }
            b if b.is_ascii_alphanumeric() => {}
            b'-' | b'.' | b'_' | b'~' | b':' | b'/' | b'?' | b'[' | b']' | b'@' | b'!' | b'$' | b'&'
            | b'\'' | b'(' | b')' | b'*' | b'+' | b',' | b';' | b'=' => {}
            _ => {
                let shown =
                    text[index..].chars().next().map_or_else(String::new, |c| c.escape_debug().to_string());
                let what = if byte == b' ' { "a space".to_owned() } else { format!("`{shown}`") };
                return Some((
                    format!("{what} at position {} is not allowed in a URI", index + 1),
                    if byte == b' ' {
                        "rename the file without spaces, or percent-encode them as `%20`".to_owned()
                    } else {
                        "percent-encode the character (e.g. a space is `%20`)".to_owned()
                    },
                ));
            }
        }
        index += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::uri_reference_problem;

    #[test]
    fn accepts_relative_and_absolute_references() {
        for ok in [
            "a.jsonl",
            "./x/y.jsonl",
            "../data/set.jsonl",
            "file:///tmp/a.jsonl",
            "https://h/p?q=1#f",
            "a%20b",
        ] {
            assert!(uri_reference_problem(ok).is_none(), "{ok}");
        }
    }

    #[test]
    fn rejects_what_rfc_3986_forbids() {
        for bad in ["a b.jsonl", "a%2", "a%zz", "1abc:def", "x#y#z", "tab\there", "ünï.jsonl", "a\\b", ""] {
            assert!(uri_reference_problem(bad).is_some(), "{bad}");
        }
    }
}
