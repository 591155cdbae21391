//! Go's linters: `go vet` and staticcheck, in their JSON and their plain text.
//!
//! - `staticcheck -f json`: one problem per line, `{code, severity, location: {file, line,
//!   column}, end, message}`;
//! - `go vet -json` (its `# package` header lines on stderr, so read with `2>&1`): one object
//!   keyed by package, then by analyzer, each a list of `{posn: "file:line:col", message}`;
//! - the plain text of both: `file.go:line:col: message`, staticcheck's with its check's code
//!   at the end (`(SA4018)`), under `# package` header lines (go vet's) or `-: ...` lines for
//!   problems without a place.

use serde_json::{Map, Value};

use super::{Finding, FindingFormat, ParsedFindings, fields};

/// A staticcheck problem: `code`, `message` and `location.file` with `location.line`.
pub(super) fn is_problem(object: &Map<String, Value>) -> bool {
    object.contains_key("code")
        && object.contains_key("message")
        && fields::dig(object, &["location", "file"]).is_some()
        && fields::dig(object, &["location", "line"]).is_some()
}

/// One staticcheck problem as a finding: `[code] message`.
pub(super) fn from_problem(object: &Map<String, Value>, at: &str, warnings: &mut Vec<String>) -> Finding {
    let message = fields::string(object, &["message"]).unwrap_or_default();
    let text = match fields::string(object, &["code"]) {
        Some(code) if !code.is_empty() => format!("[{code}] {message}"),
        _ => message,
    };
    let mut finding = Finding::new(FindingFormat::Staticcheck, text);
    finding.file = fields::string(object, &["location", "file"])
        .or_else(|| fields::dig(object, &["location", "file"]).and_then(fields::scalar_text))
        .map(|path| fields::clean_path(&path));
    finding.line = fields::line_at(object, &["location", "line"], at, warnings);
    finding.severity = fields::string(object, &["severity"]);
    finding
}

/// A whole document: one staticcheck problem, or `go vet -json`'s object.
pub(super) fn recognise(value: &Value) -> Option<(FindingFormat, Vec<Finding>, Vec<String>)> {
    let object = value.as_object()?;
    let mut warnings = Vec::new();
    if is_problem(object) {
        return Some((FindingFormat::Staticcheck, vec![from_problem(object, "", &mut warnings)], warnings));
    }
    vet_json(object).map(|findings| (FindingFormat::GoVet, findings, warnings))
}

/// `go vet -json`: `{package: {analyzer: [{posn, message}]}}`. `None` unless every value is
/// shaped so and at least one diagnostic is there.
fn vet_json(object: &Map<String, Value>) -> Option<Vec<Finding>> {
    let mut findings = Vec::new();
    for analyzers in object.values() {
        for (analyzer, diagnostics) in analyzers.as_object()? {
            for diagnostic in diagnostics.as_array()? {
                let diagnostic = diagnostic.as_object()?;
                let position = fields::string(diagnostic, &["posn"])?;
                let message = fields::string(diagnostic, &["message"])?;
                let mut finding = Finding::new(FindingFormat::GoVet, format!("[{analyzer}] {message}"));
                if let Some((file, line)) = place(&position) {
                    finding.file = Some(file);
                    finding.line = Some(line);
                }
                findings.push(finding);
            }
        }
    }
    (!findings.is_empty()).then_some(findings)
}

/// `path/file.go:12:5` (or without the column): the file and the line.
fn place(position: &str) -> Option<(String, u32)> {
    let mut parts = position.rsplitn(3, ':');
    let last = parts.next()?;
    let middle = parts.next()?;
    let (file, line) = match parts.next() {
        Some(file) if middle.parse::<u32>().is_ok() && last.parse::<u32>().is_ok() => (file, middle),
        _ => (middle, last),
    };
    let line: u32 = line.parse().ok().filter(|line| *line > 0)?;
    file.ends_with(".go").then(|| (fields::clean_path(file), line))
}

/// The plain text of `go vet` or staticcheck: every non-empty line is a diagnostic
/// (`file.go:line:col: message`), a `# package` header, a `-: ...` problem without a place,
/// or an indented continuation. `None` unless every line is, and one is a diagnostic.
pub(super) fn parse_text(text: &str) -> Option<ParsedFindings> {
    let mut parsed = ParsedFindings::default();
    let mut staticcheck = false;
    for line in text.lines() {
        if line.trim().is_empty()
            || line.starts_with("# ")
            || line.starts_with("-: ")
            || line.starts_with([' ', '\t'])
        {
            continue;
        }
        let (position, message) = split_diagnostic(line)?;
        let (file, line_number) = place(position)?;
        // staticcheck ends each message with its check's code: `(SA4018)`.
        let coded = message.rsplit_once(" (").and_then(|(head, code)| {
            let code = code.strip_suffix(')')?;
            let is_code = code.len() >= 3
                && code.chars().take_while(char::is_ascii_uppercase).count() >= 1
                && code.chars().skip_while(char::is_ascii_uppercase).all(|c| c.is_ascii_digit());
            is_code.then_some((head, code))
        });
        let text = match coded {
            Some((head, code)) => {
                staticcheck = true;
                format!("[{code}] {head}")
            }
            None => message.to_owned(),
        };
        let mut finding = Finding::new(FindingFormat::GoVet, text);
        finding.file = Some(file);
        finding.line = Some(line_number);
        parsed.findings.push(finding);
    }
    if parsed.findings.is_empty() {
        return None;
    }
    let format = if staticcheck { FindingFormat::Staticcheck } else { FindingFormat::GoVet };
    for finding in &mut parsed.findings {
        finding.source = format;
    }
    parsed.format = Some(format);
    Some(parsed)
}

/// `file.go:12:5: message` split at the `: ` after the position.
fn split_diagnostic(line: &str) -> Option<(&str, &str)> {
    let at = line.find(".go:")? + ".go:".len();
    let rest = &line[at..];
    let end = rest.find(": ")?;
    let position = &line[..at + end];
    // Only digits and one colon between `.go:` and the message.
    rest[..end].chars().all(|c| c.is_ascii_digit() || c == ':').then(|| (position, &rest[end + 2..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn places_and_diagnostic_lines_are_split_where_go_puts_the_colons() {
        assert_eq!(place("/tmp/q/ring.go:17:2"), Some(("/tmp/q/ring.go".to_owned(), 17)));
        assert_eq!(place("ring.go:17"), Some(("ring.go".to_owned(), 17)));
        assert_eq!(place("ring.py:17:2"), None);
        assert_eq!(split_diagnostic("a/b.go:3:4: x: y"), Some(("a/b.go:3:4", "x: y")));
        assert_eq!(split_diagnostic("see a/b.go:three: x"), None);
        assert!(parse_text("queue/ring.go:17:2: self-assignment\nsomething else entirely\n").is_none());
    }
}
