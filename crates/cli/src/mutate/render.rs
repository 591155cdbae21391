//! The outputs of `revcal mutate`: text, stats, Stryker's report schema, one mutant's diff,
//! the operator list.

use super::files::Scan;
use crate::output::{outln, plural};
use crate::style::Style;
use anyhow::Result;
use revcal_mutate::{Category, Language, Mutant};
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// `file:line:col [category/operator] original -> replacement`, one line per mutant.
pub(crate) fn text(mutants: &[Mutant], style: &Style) -> String {
    let mut out = String::new();
    for mutant in mutants {
        outln!(
            out,
            "{} {} {} -> {}",
            style.bold(&mutant.location()),
            style.dim(&format!("[{}/{}]", mutant.category, mutant.operator)),
            one_line(&mutant.original),
            one_line(&mutant.replacement),
        );
    }
    out
}

/// Code on one line: whitespace runs collapsed, long text cut, empty text shown as `(removed)`.
fn one_line(code: &str) -> String {
    let collapsed = code.split_whitespace().collect::<Vec<_>>().join(" ");
    if collapsed.is_empty() {
        return "(removed)".into();
    }
    if collapsed.chars().count() > 70 {
        format!("{}...", collapsed.chars().take(67).collect::<String>())
    } else {
        collapsed
    }
}

/// Counts per language, category and operator, and what was skipped.
pub(crate) fn stats(scan: &Scan, mutants: &[Mutant], json: bool, style: &Style) -> Result<String> {
    let mut per_language: BTreeMap<Language, usize> = BTreeMap::new();
    let mut grid: BTreeMap<(Category, Language), usize> = BTreeMap::new();
    let mut per_operator: BTreeMap<(Language, &str), usize> = BTreeMap::new();
    for mutant in mutants {
        *per_language.entry(mutant.language).or_default() += 1;
        *grid.entry((mutant.category, mutant.language)).or_default() += 1;
        *per_operator.entry((mutant.language, mutant.operator.as_str())).or_default() += 1;
    }
    let mut files_per_language: BTreeMap<Language, usize> = BTreeMap::new();
    for (_, language) in &scan.mutated_files {
        *files_per_language.entry(*language).or_default() += 1;
    }
    let skipped: BTreeMap<&str, usize> = scan.skipped.iter().map(|(skip, n)| (skip.as_str(), *n)).collect();
    if json {
        let languages: BTreeMap<&str, Value> = Language::ALL
            .iter()
            .map(|language| {
                let categories: BTreeMap<&str, usize> = Category::ALL
                    .iter()
                    .map(|category| {
                        (category.as_str(), grid.get(&(*category, *language)).copied().unwrap_or(0))
                    })
                    .collect();
                let operators: BTreeMap<&str, usize> = per_operator
                    .iter()
                    .filter(|((lang, _), _)| lang == language)
                    .map(|((_, name), n)| (*name, *n))
                    .collect();
                let value = json!({
                    "files": files_per_language.get(language).copied().unwrap_or(0),
                    "mutants": per_language.get(language).copied().unwrap_or(0),
                    "categories": categories,
                    "operators": operators,
                });
                (language.as_str(), value)
            })
            .collect();
        let value = json!({
            "files": scan.mutated_files.len(),
            "lines": scan.lines,
            "mutants": mutants.len(),
            "rejected_by_reparse": scan.rejected,
            "skipped": skipped,
            "languages": languages,
        });
        return Ok(serde_json::to_string_pretty(&value)? + "\n");
    }
    let mut out = String::new();
    outln!(
        out,
        "{} file{}, {} lines, {} mutant{} ({} candidate{} failed the re-parse check and {} dropped)",
        scan.mutated_files.len(),
        plural(scan.mutated_files.len()),
        scan.lines,
        mutants.len(),
        plural(mutants.len()),
        scan.rejected,
        plural(scan.rejected),
        if scan.rejected == 1 { "was" } else { "were" }
    );
    if skipped.is_empty() {
        outln!(out, "skipped: none");
    } else {
        let parts: Vec<String> = skipped.iter().map(|(why, n)| format!("{n} {why}")).collect();
        outln!(out, "skipped: {}", parts.join(", "));
    }
    outln!(out);
    let header: String = Language::ALL.iter().map(|language| format!(" {:>10}", language.as_str())).collect();
    outln!(out, "{}", style.bold(&format!("{:<20}{header}", "category")));
    for category in Category::ALL {
        let cells: String = Language::ALL
            .iter()
            .map(|language| format!(" {:>10}", grid.get(&(category, *language)).copied().unwrap_or(0)))
            .collect();
        outln!(out, "{:<20}{cells}", category.as_str());
    }
    let totals: String = Language::ALL
        .iter()
        .map(|language| format!(" {:>10}", per_language.get(language).copied().unwrap_or(0)))
        .collect();
    outln!(out, "{:<20}{totals}", "total");
    outln!(out);
    outln!(out, "{}", style.bold("operator"));
    for ((language, name), n) in &per_operator {
        outln!(out, "  {:<12} {:<28} {n:>8}", language.as_str(), name);
    }
    Ok(out)
}

/// The mutation-testing-report-schema document (schema version 2); every mutant `Pending`,
/// its defect sentence in `description`.
pub(crate) fn stryker(mutants: &[Mutant], sources: &BTreeMap<String, String>) -> Result<String> {
    let mut files: BTreeMap<&str, Vec<Value>> = BTreeMap::new();
    for mutant in mutants {
        files.entry(mutant.file.as_str()).or_default().push(json!({
            "id": mutant.id,
            "mutatorName": mutant.operator,
            "replacement": mutant.replacement,
            "description": mutant.description,
            "location": {
                "start": {"line": mutant.line, "column": mutant.column},
                "end": {"line": mutant.end_line, "column": mutant.end_column},
            },
            "status": "Pending",
        }));
    }
    let files: serde_json::Map<String, Value> = files
        .into_iter()
        .map(|(file, entries)| {
            let language = Language::from_path(std::path::Path::new(file)).map_or("text", Language::as_str);
            let source = sources.get(file).cloned().unwrap_or_default();
            (file.to_string(), json!({"language": language, "source": source, "mutants": entries}))
        })
        .collect();
    let report = json!({
        "schemaVersion": "2",
        "thresholds": {"high": 80, "low": 60},
        "framework": {"name": "revcal", "version": env!("CARGO_PKG_VERSION")},
        "files": files,
    });
    Ok(serde_json::to_string_pretty(&report)? + "\n")
}

/// A unified diff of one mutant, preceded by its id and defect sentence (as `#` lines,
/// which `git apply` and `patch` ignore).
pub(crate) fn show(mutant: &Mutant, source: &str, style: &Style) -> Result<String> {
    let mutated = revcal_mutate::apply(source, std::slice::from_ref(mutant))?;
    let mut out = String::new();
    outln!(
        out,
        "{}",
        style.dim(&format!(
            "# {} {} [{}/{}]",
            mutant.id,
            mutant.location(),
            mutant.category,
            mutant.operator
        ))
    );
    outln!(out, "{}", style.dim(&format!("# {}", mutant.description)));
    let unified = super::line_diff::unified(
        source,
        &mutated,
        &format!("a/{}", mutant.file),
        &format!("b/{}", mutant.file),
    );
    for line in unified.lines() {
        let painted = if line.starts_with('+') && !line.starts_with("+++") {
            style.success(line)
        } else if line.starts_with('-') && !line.starts_with("---") {
            style.error(line)
        } else {
            line.to_string()
        };
        outln!(out, "{painted}");
    }
    Ok(out)
}

/// Every operator of every language, by category.
pub(crate) fn operators(json: bool, style: &Style) -> Result<String> {
    let mut all: Vec<&revcal_mutate::Operator> = revcal_mutate::operators().collect();
    all.sort_by_key(|op| (op.category, op.name, op.language));
    if json {
        let list: Vec<Value> = all
            .iter()
            .map(|op| {
                json!({"name": op.name, "category": op.category, "language": op.language,
                       "summary": op.summary, "before": op.before, "after": op.after})
            })
            .collect();
        return Ok(serde_json::to_string_pretty(&list)? + "\n");
    }
    let mut out = String::new();
    let mut current = None;
    for op in all {
        if current != Some(op.category) {
            outln!(out, "{}", style.bold(op.category.as_str()));
            current = Some(op.category);
        }
        let after = if op.after.is_empty() { "(removed)" } else { op.after };
        outln!(
            out,
            "  {:<26} {:<11} {}   {} -> {}",
            op.name,
            op.language.as_str(),
            op.summary,
            style.dim(op.before),
            after
        );
    }
    Ok(out)
}
