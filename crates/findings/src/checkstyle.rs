//! Checkstyle XML, reviewdog's other input and the output of ESLint (`-f checkstyle` with
//! `eslint-formatter-checkstyle`), golangci-lint, ktlint, PHP_CodeSniffer and Checkstyle
//! itself: `<checkstyle><file name="..."><error line="3" severity="warning" message="..."
//! source="..."/></file></checkstyle>`.

use super::{Finding, FindingFormat, ParsedFindings, fields};

/// The findings of a Checkstyle document; `None` when `text` is not one.
pub(super) fn parse(text: &str) -> Option<ParsedFindings> {
    let start = text.find("<checkstyle")?;
    // The whole output, after an optional XML declaration; or a document among log lines,
    // which is read only when it parses.
    let head = text[..start].trim();
    let whole = head.is_empty() || (head.starts_with("<?xml") && head.ends_with("?>"));
    let body = if whole {
        text
    } else {
        let end = text[start..].rfind("</checkstyle>")? + "</checkstyle>".len();
        &text[start..start + end]
    };
    let mut parsed = ParsedFindings {
        format: Some(FindingFormat::Checkstyle),
        embedded: !whole,
        ..ParsedFindings::default()
    };
    let document = match roxmltree::Document::parse(body) {
        Ok(document) => document,
        Err(error) if whole => {
            parsed.warnings.push(format!("Checkstyle XML does not parse ({error}); nothing read from it"));
            return Some(parsed);
        }
        Err(_) => return None,
    };
    let root = document.root_element();
    if root.tag_name().name() != "checkstyle" {
        return None;
    }
    for (file_index, file) in root.children().filter(|node| node.has_tag_name("file")).enumerate() {
        let path = file.attribute("name").map(fields::clean_path);
        for (index, error) in file.children().filter(|node| node.has_tag_name("error")).enumerate() {
            let at = format!("file[{file_index}].error[{index}]");
            let message = error.attribute("message").unwrap_or_default().trim();
            let text = match error.attribute("source").map(str::trim).filter(|s| !s.is_empty()) {
                Some(source) => format!("[{source}] {message}"),
                None => message.to_owned(),
            };
            let mut finding = Finding::new(FindingFormat::Checkstyle, text);
            finding.file = path.clone();
            let line = error.attribute("line");
            finding.line = line.and_then(|line| line.trim().parse::<u32>().ok()).filter(|line| *line >= 1);
            if let (None, Some(bad)) = (finding.line, line) {
                parsed
                    .warnings
                    .push(format!("{at}: line {bad:?} is not a line number (1 or more); line ignored"));
            }
            finding.severity = error.attribute("severity").map(str::to_owned);
            parsed.findings.push(finding);
        }
    }
    Some(parsed)
}
