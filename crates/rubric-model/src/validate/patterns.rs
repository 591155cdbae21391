//! Negative-criteria checks: names, patterns that compile, and the bare-dot warning.

use super::document::{check_identifier, check_unique_names};
use crate::pointer;
use crate::rule::{LintIssue, Rule};
use crate::types::Rubric;

pub(super) fn check(rubric: &Rubric, issues: &mut Vec<LintIssue>) {
    check_unique_names(
        rubric.negative_criteria.iter().map(|n| n.name.as_str()),
        "negative_criteria",
        "negative criterion",
        "merge the two pattern lists under one name",
        issues,
    );
    for (index, negative) in rubric.negative_criteria.iter().enumerate() {
        let at = pointer::build(["negative_criteria".to_owned(), index.to_string()]);
        check_identifier(&negative.name, &pointer::join(&at, "name"), "negative criterion name", issues);
        let patterns_at = pointer::join(&at, "fail_patterns");
        if negative.fail_patterns.is_empty() {
            issues.push(
                LintIssue::error(
                    Rule::Pattern,
                    patterns_at.clone(),
                    format!("`{}` has no fail_patterns", negative.name),
                )
                .with_hint("list at least one pattern, or remove the negative criterion"),
            );
        }
        for (position, pattern) in negative.fail_patterns.iter().enumerate() {
            let pattern_at = pointer::join(&patterns_at, position);
            if pattern.is_empty() {
                issues.push(
                    LintIssue::error(Rule::Pattern, pattern_at, "empty pattern matches every artifact")
                        .with_hint("remove it, or write the text that must not appear"),
                );
                continue;
            }
            if let Err(error) = check_syntax(pattern, negative.literal) {
                let detail = error;
                let last_line = detail.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or(&detail);
                issues.push(
                    LintIssue::error(
                        Rule::Pattern,
                        pattern_at,
                        format!(
                            "pattern `{pattern}` does not compile: {}",
                            last_line.trim().trim_start_matches("error: ")
                        ),
                    )
                    .with_hint(
                        "escape regex metacharacters with `\\`, or set `literal: true` to match plain text",
                    ),
                );
                continue;
            }
            if !negative.literal && literal_dot_warning(pattern).is_some() {
                let escaped = escape_literal_dots(pattern);
                issues.push(
                    LintIssue::warning(
                        Rule::Pattern,
                        pattern_at,
                        format!("`.` in pattern `{pattern}` matches any character, not only a dot"),
                    )
                    .with_hint(format!(
                        "write `{escaped}` (in double-quoted YAML: `{}`) to match a literal dot, or set `literal: true`",
                        escaped.replace('\\', "\\\\")
                    )),
                );
            }
        }
    }
}

/// Parses a pattern the way scoring will compile it, without building the matcher:
/// parsing finds every syntax error and costs a fraction of a compile.
fn check_syntax(pattern: &str, literal: bool) -> Result<(), String> {
    if literal {
        return Ok(());
    }
    let parsed = regex_syntax::ParserBuilder::new().case_insensitive(true).build().parse(pattern);
    parsed.map(drop).map_err(|error| error.to_string())
}

/// The byte offset of the first `.` in `pattern` that was most likely meant as a literal
/// dot: unescaped, outside a character class, not followed by a quantifier, and right
/// after a letter or digit (as in `etc.` or `e.g.`). `.*` and `\.` are not flagged.
///
/// ```
/// use revcal_rubric_model::validate::literal_dot_warning;
/// assert_eq!(literal_dot_warning("etc."), Some(3));
/// assert_eq!(literal_dot_warning(r"etc\."), None);
/// assert_eq!(literal_dot_warning("TODO.*later"), None);
/// assert_eq!(literal_dot_warning("[.]"), None);
/// ```
pub fn literal_dot_warning(pattern: &str) -> Option<usize> {
    literal_dots(pattern).into_iter().next()
}

/// `pattern` with every dot that [`literal_dot_warning`] would flag escaped.
///
/// ```
/// use revcal_rubric_model::validate::escape_literal_dots;
/// assert_eq!(escape_literal_dots("e.g. etc."), r"e\.g\. etc\.");
/// assert_eq!(escape_literal_dots("v1.*"), "v1.*");
/// ```
pub fn escape_literal_dots(pattern: &str) -> String {
    let dots = literal_dots(pattern);
    let mut out = String::with_capacity(pattern.len() + dots.len());
    for (index, ch) in pattern.char_indices() {
        if dots.contains(&index) {
            out.push('\\');
        }
        out.push(ch);
    }
    out
}

/// Byte offsets of the dots that were most likely meant literally.
fn literal_dots(pattern: &str) -> Vec<usize> {
    let bytes = pattern.as_bytes();
    let mut found = Vec::new();
    let mut class_depth = 0usize;
    let mut index = 0;
    while index < bytes.len() {
        match bytes[index] {
            b'\\' => {
                index += 2;
                continue;
            }
            b'[' => class_depth += 1,
            b']' if class_depth > 0 => class_depth -= 1,
            b'.' if class_depth == 0 => {
                let after_word = index > 0 && bytes[index - 1].is_ascii_alphanumeric();
                let quantified = matches!(bytes.get(index + 1), Some(b'*' | b'+' | b'?' | b'{'));
                if after_word && !quantified {
                    found.push(index);
                }
            }
            _ => {}
        }
        index += 1;
    }
    found
}
