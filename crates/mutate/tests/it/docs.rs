//! docs/mutation.md's operator tables against the operator tables of the code
//! (`revcal_mutate::operators()`): the page is written by hand, so this keeps it true.

use revcal_mutate::{Language, operators};
use std::path::Path;

/// One row of a table, as its cells read: category (the `###` heading above the table),
/// operator, language, summary, before, after.
type Row = [String; 6];

/// The rows of the tables under "## Categories and operators".
fn documented_rows() -> Vec<Row> {
    let page = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/mutation.md");
    let text = std::fs::read_to_string(&page).unwrap();
    let start = text.find("\n## Categories and operators\n").expect("the section is on the page");
    let section = &text[start + 1..];
    let section = &section[..section[1..].find("\n## ").map_or(section.len(), |end| end + 1)];
    let mut category = String::new();
    let mut rows = Vec::new();
    for line in section.lines() {
        if let Some(heading) = line.strip_prefix("### ") {
            category = heading.to_owned();
        } else if line.starts_with("| `") {
            let cells = cells(line);
            assert_eq!(cells.len(), 5, "a row of five cells: {line}");
            let [operator, language, summary, before, after] = <[String; 5]>::try_from(cells).unwrap();
            rows.push([category.clone(), operator, language, summary, before, after]);
        }
    }
    rows
}

/// The cells of a table row, `\|` read as a `|` inside a cell.
fn cells(line: &str) -> Vec<String> {
    let inner = line.trim().trim_start_matches('|').trim_end_matches('|');
    let mut cells = vec![String::new()];
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'|') => {
                cells.last_mut().unwrap().push('|');
                chars.next();
            }
            '|' => cells.push(String::new()),
            _ => cells.last_mut().unwrap().push(c),
        }
    }
    cells.into_iter().map(|cell| cell.trim().to_owned()).collect()
}

/// An example as the page writes it: in backquotes, a line break as `⏎ `, a deletion as
/// `(removed)`.
fn example(code: &str) -> String {
    if code.is_empty() { "(removed)".to_owned() } else { format!("`{}`", code.replace('\n', "⏎ ")) }
}

/// The rows the code's operator tables call for. TypeScript and TSX have JavaScript's
/// operators, which the page says once rather than repeating the rows.
fn operator_rows() -> Vec<Row> {
    operators()
        .filter(|operator| !matches!(operator.language, Language::TypeScript | Language::Tsx))
        .map(|operator| {
            [
                operator.category.as_str().to_owned(),
                format!("`{}`", operator.name),
                operator.language.as_str().to_owned(),
                operator.summary.to_owned(),
                example(operator.before),
                example(operator.after),
            ]
        })
        .collect()
}

#[test]
fn the_operator_tables_of_docs_mutation_md_are_the_operators() {
    let documented = documented_rows();
    let operators = operator_rows();
    let missing: Vec<&Row> = operators.iter().filter(|row| !documented.contains(row)).collect();
    let extra: Vec<&Row> = documented.iter().filter(|row| !operators.contains(row)).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "docs/mutation.md's tables differ from the operators.\nnot on the page (as it should read): \
         {missing:#?}\non the page but not an operator (or not as written): {extra:#?}"
    );
    assert_eq!(documented.len(), operators.len(), "a row is on the page twice");
}

#[test]
fn typescript_and_tsx_have_javascripts_operators_as_the_page_says() {
    let names = |language: Language| -> Vec<(&str, &str)> {
        operators()
            .filter(|operator| operator.language == language)
            .map(|operator| (operator.name, operator.category.as_str()))
            .collect()
    };
    assert_eq!(names(Language::TypeScript), names(Language::JavaScript));
    assert_eq!(names(Language::Tsx), names(Language::JavaScript));
}

#[test]
fn the_page_counts_the_operator_variants() {
    let page = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/mutation.md");
    let text = std::fs::read_to_string(page).unwrap();
    let count = operator_rows().len();
    let claim = format!("({count} operator variants over Rust, JavaScript,");
    assert!(text.contains(&claim), "docs/mutation.md should say {claim:?}");
}
