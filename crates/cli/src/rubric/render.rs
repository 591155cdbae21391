//! Printing lint reports: compiler-style for people, JSON for tools, workflow commands
//! for GitHub Actions.

use crate::output::{outln, plural};
use crate::style::Style;
use anyhow::Result;
use revcal_rubric_model::LintSeverity;
use revcal_rubric_repo::{Diagnostic, LintReport};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// `path:LINE:COL: error[RULE]: message`, the source line with a caret under the node,
/// the field, the hint, and related places.
pub(crate) fn human(report: &LintReport, style: &Style) -> String {
    let mut out = String::new();
    let mut sources = SourceCache::default();
    for diagnostic in &report.diagnostics {
        out.push_str(&format_human(diagnostic, sources.line(&diagnostic.file, diagnostic.line), style));
    }
    let (errors, warnings) = (report.error_count(), report.warning_count());
    let files = report.files.len();
    let rubrics = report.rubrics.len();
    let checked = format!("{rubrics} rubric{} in {files} file{}", plural(rubrics), plural(files));
    if errors == 0 && warnings == 0 {
        outln!(out, "{}: checked {checked}: no problems", style.success("ok"));
    } else {
        let mut parts = Vec::new();
        if errors > 0 {
            parts.push(style.error(&format!("{errors} error{}", plural(errors))));
        }
        if warnings > 0 {
            parts.push(style.warning(&format!("{warnings} warning{}", plural(warnings))));
        }
        let troubled =
            report.diagnostics.iter().map(|d| &d.file).collect::<std::collections::HashSet<_>>().len();
        outln!(out, "checked {checked}: {} in {troubled} file{}", parts.join(" and "), plural(troubled));
    }
    out
}

/// One diagnostic in compiler style.
pub(crate) fn format_human(d: &Diagnostic, source_line: Option<&str>, style: &Style) -> String {
    let label = match d.severity {
        LintSeverity::Error => style.error(&format!("error[{}]", d.rule)),
        LintSeverity::Warning => style.warning(&format!("warning[{}]", d.rule)),
    };
    let mut out = format!(
        "{}: {label}: {}\n",
        style.bold(&format!("{}:{}:{}", d.file.display(), d.line, d.column)),
        style.bold(&d.message)
    );
    let number = d.line.to_string();
    let pad = " ".repeat(number.len());
    // A file-level problem (binary, not UTF-8, unreadable) has no line worth showing.
    let source_line = source_line.filter(|_| d.rule != revcal_rubric_model::Rule::File);
    if let Some(line) = source_line {
        let line = line.trim_end_matches('\r').replace('\t', " ");
        let width = if d.end_line == d.line && d.end_column > d.column {
            (d.end_column - d.column).min(line.chars().count().saturating_sub(d.column - 1)).max(1)
        } else {
            1
        };
        let caret_pad = " ".repeat(d.column.saturating_sub(1));
        let caret = match d.severity {
            LintSeverity::Error => style.error(&"^".repeat(width)),
            LintSeverity::Warning => style.warning(&"^".repeat(width)),
        };
        out.push_str(&format!("{pad} {}\n", style.gutter("|")));
        out.push_str(&format!("{} {line}\n", style.gutter(&format!("{number} |"))));
        out.push_str(&format!("{pad} {} {caret_pad}{caret}\n", style.gutter("|")));
    }
    if !d.pointer.is_empty() {
        out.push_str(&format!("{pad} {} field: {}\n", style.gutter("="), d.field()));
    }
    if let Some(hint) = &d.hint {
        out.push_str(&format!("{pad} {} {} {hint}\n", style.gutter("="), style.bold("hint:")));
    }
    for related in &d.related {
        out.push_str(&format!(
            "{pad} {} note: {}: {}:{}:{}\n",
            style.gutter("="),
            related.note,
            related.file.display(),
            related.line,
            related.column
        ));
    }
    out.push('\n');
    out
}

/// One JSON document: a summary and every diagnostic.
pub(crate) fn json(report: &LintReport) -> Result<String> {
    let document = serde_json::json!({
        "files": report.files.len(),
        "rubrics": report.rubrics.len(),
        "errors": report.error_count(),
        "warnings": report.warning_count(),
        "diagnostics": report.diagnostics,
    });
    Ok(serde_json::to_string_pretty(&document)? + "\n")
}

/// GitHub Actions workflow commands, one per diagnostic, then a plain summary.
pub(crate) fn github(report: &LintReport) -> String {
    let mut out = String::new();
    for d in &report.diagnostics {
        let command = match d.severity {
            LintSeverity::Error => "error",
            LintSeverity::Warning => "warning",
        };
        let mut message = d.message.clone();
        if !d.pointer.is_empty() {
            message.push_str(&format!(" (field: {})", d.field()));
        }
        if let Some(hint) = &d.hint {
            message.push_str(&format!("\nhint: {hint}"));
        }
        outln!(
            out,
            "::{command} file={},line={},col={},endLine={},endColumn={},title={}::{}",
            escape_property(&d.file.to_string_lossy()),
            d.line,
            d.column,
            d.end_line,
            d.end_column,
            escape_property(&format!("{} {}", d.rule, d.rule.summary())),
            escape_data(&message)
        );
    }
    outln!(
        out,
        "revcal rubric lint: {} error(s), {} warning(s) in {} file(s)",
        report.error_count(),
        report.warning_count(),
        report.files.len()
    );
    out
}

/// Escapes a workflow-command message.
pub(crate) fn escape_data(text: &str) -> String {
    text.replace('%', "%25").replace('\r', "%0D").replace('\n', "%0A")
}

/// Escapes a workflow-command property value.
pub(crate) fn escape_property(text: &str) -> String {
    escape_data(text).replace(':', "%3A").replace(',', "%2C")
}

/// Source files read once each, for printing the offending line.
#[derive(Default)]
struct SourceCache {
    files: HashMap<PathBuf, Option<Vec<String>>>,
}

impl SourceCache {
    fn line(&mut self, file: &Path, line: usize) -> Option<&str> {
        let lines = self.files.entry(file.to_path_buf()).or_insert_with(|| {
            // No more than the linter read: a file past its limit has no lines to show.
            use std::io::Read;
            let mut bytes = Vec::new();
            let limit = revcal_rubric_repo::MAX_FILE_BYTES;
            std::fs::File::open(file).ok()?.take(limit + 1).read_to_end(&mut bytes).ok()?;
            if bytes.len() as u64 > limit {
                return None;
            }
            let text = String::from_utf8(bytes).ok()?;
            Some(text.lines().map(str::to_owned).collect())
        });
        lines.as_ref()?.get(line.checked_sub(1)?).map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workflow_commands_escape_what_github_parses() {
        assert_eq!(escape_data("50% done\nnext"), "50%25 done%0Anext");
        assert_eq!(escape_property("a:b,c"), "a%3Ab%2Cc");
    }
}
