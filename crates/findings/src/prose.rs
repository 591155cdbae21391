//! The last resort: free text that mentions `path/file.ext:LINE`. Every finding found this way
//! is weak (its location was guessed from prose), and its text is the line it appeared on.

use std::collections::HashSet;

use super::{Finding, FindingFormat};

/// What the prose reader found.
pub(super) struct Prose {
    pub(super) findings: Vec<Finding>,
    pub(super) warnings: Vec<String>,
}

/// One weak finding per distinct `file:line` mention.
pub(super) fn parse(text: &str) -> Prose {
    let lines: Vec<&str> = text.lines().collect();
    let mut findings: Vec<Finding> = Vec::new();
    let mut seen: HashSet<(String, u32)> = HashSet::new();
    for (index, line) in lines.iter().enumerate() {
        for (file, number, span) in locations(line) {
            if !seen.insert((file.clone(), number)) {
                continue;
            }
            let mut finding = Finding::new(FindingFormat::Prose, describe(&lines, index, span));
            finding.file = Some(file);
            finding.line = Some(number);
            finding.weak = true;
            findings.push(finding);
        }
    }
    let warnings = if findings.is_empty() {
        Vec::new()
    } else {
        vec![format!(
            "no structured findings; {} location(s) read from prose (weak: locations guessed from text)",
            findings.len()
        )]
    };
    Prose { findings, warnings }
}

/// The first `file.ext:LINE` mention in `text`.
pub(super) fn first_location(text: &str) -> Option<(String, u32)> {
    text.lines().find_map(|line| locations(line).into_iter().next().map(|(file, number, _)| (file, number)))
}

/// The longest text a prose finding keeps from its line, in bytes. A line longer than this
/// (a reviewer that prints thousands of locations on one line) contributes an excerpt around
/// each location, so time and memory stay linear in the output's size.
const MAX_LINE_TEXT: usize = 400;

/// The finding's text: its line, plus the next non-empty line when the line holds little
/// besides the location (`src/a.rs:12:` followed by the explanation).
fn describe(lines: &[&str], index: usize, span: (usize, usize)) -> String {
    let (line, span) = excerpt(lines[index], span);
    let words = line[..span.0].chars().chain(line[span.1..].chars()).filter(|c| c.is_alphabetic());
    let text = line.trim();
    if words.take(3).count() >= 3 {
        return text.to_string();
    }
    match lines[index + 1..].iter().map(|l| l.trim()).find(|l| !l.is_empty()) {
        Some(next) => {
            let (next, _) = excerpt(next, (0, 0));
            format!("{text}\n{}", next.trim())
        }
        None => text.to_string(),
    }
}

/// At most [`MAX_LINE_TEXT`] bytes of `line` around `span`, and `span` within the excerpt.
fn excerpt(line: &str, span: (usize, usize)) -> (&str, (usize, usize)) {
    if line.len() <= MAX_LINE_TEXT {
        return (line, span);
    }
    let before = (MAX_LINE_TEXT.saturating_sub(span.1 - span.0)) / 3;
    let mut start = span.0.saturating_sub(before);
    while !line.is_char_boundary(start) {
        start -= 1;
    }
    let mut end = (start + MAX_LINE_TEXT).max(span.1).min(line.len());
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    (&line[start..end], (span.0 - start, span.1 - start))
}

/// Every `path.ext:LINE` in one line: the path, the line number and the byte span of both.
fn locations(line: &str) -> Vec<(String, u32, (usize, usize))> {
    let bytes = line.as_bytes();
    let mut found = Vec::new();
    for (colon, _) in line.match_indices(':') {
        let digits = bytes[colon + 1..].iter().take_while(|b| b.is_ascii_digit()).count();
        if digits == 0 || digits > 9 {
            continue;
        }
        let start = bytes[..colon].iter().rposition(|b| !is_path_byte(*b)).map_or(0, |p| p + 1);
        let path = &line[start..colon];
        if !has_extension(path) || path.starts_with("//") {
            continue;
        }
        let Ok(number) = line[colon + 1..colon + 1 + digits].parse::<u32>() else { continue };
        if number == 0 {
            continue;
        }
        found.push((path.to_string(), number, (start, colon + 1 + digits)));
    }
    found
}

/// Bytes that may appear in a path written in prose.
fn is_path_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || matches!(byte, b'_' | b'-' | b'.' | b'/' | b'\\' | b'+' | b'@')
}

/// A file name with an extension that starts with a letter (`a.rs`, `x.test.js`; not `1.5`).
fn has_extension(path: &str) -> bool {
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    let Some((stem, extension)) = name.rsplit_once('.') else { return false };
    !stem.is_empty()
        && (1..=10).contains(&extension.len())
        && extension.starts_with(|c: char| c.is_ascii_alphabetic())
        && extension.chars().all(|c| c.is_ascii_alphanumeric())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_paths_with_lines_and_skips_urls_and_numbers() {
        let found = locations("see src/lib.rs:42:7 and https://example.com:443 at 12.5:30 or x.py:0");
        let simple: Vec<_> = found.iter().map(|(f, l, _)| (f.as_str(), *l)).collect();
        assert_eq!(simple, [("src/lib.rs", 42)]);
    }

    #[test]
    fn a_long_line_gives_each_location_a_bounded_excerpt_of_it() {
        let line: String = (1..=3000).map(|n| format!("x.py:{n} ")).collect();
        let parsed = parse(&line);
        assert_eq!(parsed.findings.len(), 3000);
        assert!(
            parsed.findings.iter().all(|f| f.text.len() <= MAX_LINE_TEXT + 40),
            "every text is an excerpt"
        );
        let last = parsed.findings.last().unwrap();
        assert_eq!(last.line, Some(3000));
        assert!(last.text.contains("x.py:3000"), "the excerpt holds its own location: {}", last.text);
        assert!(parsed.findings[0].text.starts_with("x.py:1 x.py:2"));
    }

    #[test]
    fn an_excerpt_never_splits_a_character() {
        let line = format!("{}a.rs:7 {}", "é".repeat(500), "ü".repeat(500));
        let (text, span) = excerpt(&line, (1000, 1006));
        assert!(text.len() <= MAX_LINE_TEXT);
        assert_eq!(&text[span.0..span.1], "a.rs:7");
    }

    #[test]
    fn a_bare_location_takes_the_next_line_as_text() {
        let parsed = parse("src/a.rs:3:\n\n   `<` should be `<=`\n");
        assert_eq!(parsed.findings[0].text, "src/a.rs:3:\n`<` should be `<=`");
        assert!(parsed.findings[0].weak);
    }
}
