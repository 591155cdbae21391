//! JSON pointers (RFC 6901): building them from path segments and splitting them again.

use std::fmt::Write;

/// Builds a JSON pointer from segments, escaping `~` and `/` as RFC 6901 requires.
///
/// ```
/// use revcal_rubric_model::pointer::build;
/// assert_eq!(build(["criteria", "0", "anchors", "9-10"]), "/criteria/0/anchors/9-10");
/// assert_eq!(build(["a/b", "c~d"]), "/a~1b/c~0d");
/// ```
pub fn build<I, S>(segments: I) -> String
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    let mut out = String::new();
    for segment in segments {
        out.push('/');
        for ch in segment.as_ref().chars() {
            match ch {
                '~' => out.push_str("~0"),
                '/' => out.push_str("~1"),
                other => out.push(other),
            }
        }
    }
    out
}

/// Appends one segment to an existing pointer.
pub fn join(base: &str, segment: impl std::fmt::Display) -> String {
    let mut out = String::from(base);
    out.push_str(&build([segment.to_string()]));
    out
}

/// Splits a pointer into its unescaped segments. `""` (the whole document) has none.
///
/// ```
/// use revcal_rubric_model::pointer::segments;
/// assert_eq!(segments("/a~1b/c~0d/0"), vec!["a/b", "c~d", "0"]);
/// assert!(segments("").is_empty());
/// ```
pub fn segments(pointer: &str) -> Vec<String> {
    if pointer.is_empty() {
        return Vec::new();
    }
    pointer.trim_start_matches('/').split('/').map(|raw| raw.replace("~1", "/").replace("~0", "~")).collect()
}

/// Renders a pointer as a dotted field path for messages: `/criteria/0/threshold`
/// becomes `criteria[0].threshold`.
///
/// ```
/// use revcal_rubric_model::pointer::field_path;
/// assert_eq!(field_path("/criteria/0/threshold"), "criteria[0].threshold");
/// assert_eq!(field_path("/criteria/1/anchors/3"), "criteria[1].anchors.3");
/// assert_eq!(field_path(""), "(document)");
/// ```
pub fn field_path(pointer: &str) -> String {
    let mut out = String::new();
    let mut previous = String::new();
    for segment in segments(pointer) {
        // Anchor and example keys are names even when they are numbers (`anchors.3`).
        let is_key = previous == "anchors" || previous == "examples";
        if !is_key && !segment.is_empty() && segment.bytes().all(|b| b.is_ascii_digit()) {
            let _ = write!(out, "[{segment}]");
        } else {
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(&segment);
        }
        previous = segment;
    }
    if out.is_empty() {
        out.push_str("(document)");
    }
    out
}
