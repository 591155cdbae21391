//! Escaping untrusted text (findings, source lines, file names) for XML and HTML.

/// Escape text for XML or HTML content and attribute values. Characters XML 1.0 forbids
/// (control characters other than tab, newline and carriage return) become U+FFFD, so hostile
/// reviewer output cannot produce a malformed document.
pub(crate) fn markup(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => escaped.push_str("&amp;"),
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            '"' => escaped.push_str("&quot;"),
            '\'' => escaped.push_str("&#39;"),
            '\t' | '\n' | '\r' => escaped.push(c),
            c if c.is_control() || matches!(c, '\u{FFFE}' | '\u{FFFF}') => escaped.push('\u{FFFD}'),
            c => escaped.push(c),
        }
    }
    escaped
}

#[cfg(test)]
mod tests {
    #[test]
    fn escapes_markup_and_replaces_forbidden_characters() {
        assert_eq!(
            super::markup("<a href=\"x\">&'\u{0}\u{1b}\n"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;\u{FFFD}\u{FFFD}\n"
        );
    }
}
