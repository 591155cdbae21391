//! Linting: every check of the format, on every file, with every problem reported.

use crate::diagnostic::{Diagnostic, RelatedLocation};
use crate::error::RepoError;
use crate::marks::{Marks, Span, Target};
use crate::salvage::salvage;
use crate::schema_check::{SchemaChecker, SchemaIssue};
use crate::source::{FileProblem, read_text};
use crate::walk::discover;
use crate::yaml::{self, Syntax, SyntaxError};
use revcal_rubric_model::{LintIssue, LintSeverity, Rubric, Rule, pointer, validate};
use serde::Deserialize;
use serde_json::Value;
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Checks rubric files. Build one and reuse it: it holds the compiled schema.
pub struct Linter {
    schema: SchemaChecker,
}

/// A rubric that parsed into the typed model, with the file it came from.
#[derive(Debug, Clone)]
pub struct LoadedRubric {
    /// The rubric.
    pub rubric: Arc<Rubric>,
    /// Where it was read from.
    pub file: PathBuf,
    /// False when its file has errors (the rubric parsed but breaks a rule).
    pub valid: bool,
    /// Where its `rubric_id` is written.
    id_span: Span,
}

/// Everything a lint run found.
#[derive(Debug, Clone, Default)]
pub struct LintReport {
    /// Every file checked, sorted.
    pub files: Vec<PathBuf>,
    /// The rubrics that parsed, in file order.
    pub rubrics: Vec<LoadedRubric>,
    /// Every diagnostic, by file, then line and column.
    pub diagnostics: Vec<Diagnostic>,
    /// Files that could not be read at all (an operating-system failure).
    pub io_failures: usize,
}

impl LintReport {
    /// Number of errors.
    pub fn error_count(&self) -> usize {
        self.diagnostics.iter().filter(|d| d.is_error()).count()
    }

    /// Number of warnings.
    pub fn warning_count(&self) -> usize {
        self.diagnostics.len() - self.error_count()
    }

    /// True when nothing fails: no errors, and no warnings either when `deny_warnings`.
    pub fn passes(&self, deny_warnings: bool) -> bool {
        self.error_count() == 0 && (!deny_warnings || self.warning_count() == 0)
    }
}

/// The outcome of checking one document.
struct FileLint {
    diagnostics: Vec<Diagnostic>,
    rubric: Option<(Rubric, Span)>,
    io_failure: bool,
}

impl Linter {
    /// A linter with the schema of this build compiled.
    pub fn new() -> Result<Linter, RepoError> {
        Ok(Linter { schema: SchemaChecker::new()? })
    }

    /// Lints files and directories (directories are walked for `*.yaml`, `*.yml`, `*.json`).
    /// Fails only when a path does not exist or a directory cannot be listed; every
    /// problem inside a file is a diagnostic in the report.
    pub fn lint_paths(&self, paths: &[PathBuf]) -> Result<LintReport, RepoError> {
        let files = discover(paths)?;
        let results = parallel_map(&files, |file| self.lint_file(file));
        Ok(self.assemble(files, results))
    }

    /// Lints in-memory documents, each named by a path (its extension picks YAML or JSON).
    pub fn lint_sources<P: AsRef<Path>, S: AsRef<str>>(&self, sources: &[(P, S)]) -> LintReport {
        let files: Vec<PathBuf> = sources.iter().map(|(path, _)| path.as_ref().to_path_buf()).collect();
        let results =
            sources.iter().map(|(path, text)| self.lint_text(path.as_ref(), text.as_ref(), false)).collect();
        self.assemble(files, results)
    }

    fn assemble(&self, files: Vec<PathBuf>, results: Vec<FileLint>) -> LintReport {
        let mut report = LintReport { files, ..LintReport::default() };
        for (file, result) in report.files.iter().zip(results) {
            let valid = !result.diagnostics.iter().any(Diagnostic::is_error);
            report.io_failures += usize::from(result.io_failure);
            report.diagnostics.extend(result.diagnostics);
            if let Some((rubric, id_span)) = result.rubric {
                report.rubrics.push(LoadedRubric {
                    rubric: Arc::new(rubric),
                    file: file.clone(),
                    valid,
                    id_span,
                });
            }
        }
        check_duplicate_ids(&mut report);
        tracing::debug!(
            files = report.files.len(),
            rubrics = report.rubrics.len(),
            errors = report.error_count(),
            warnings = report.warning_count(),
            "linted rubrics"
        );
        report
    }

    fn lint_file(&self, path: &Path) -> FileLint {
        match read_text(path) {
            Ok(text) => self.lint_text(path, &text, true),
            Err(problem) => FileLint {
                io_failure: problem.io,
                diagnostics: vec![file_diagnostic(path, problem)],
                rubric: None,
            },
        }
    }

    /// Every check on one document. `on_disk` enables checks that look at neighbouring
    /// files (the calibration dataset's existence).
    fn lint_text(&self, path: &Path, text: &str, on_disk: bool) -> FileLint {
        let mut out = FileLint { diagnostics: Vec::new(), rubric: None, io_failure: false };
        if !on_disk && let Err(problem) = crate::source::check_text(text) {
            // Files on disk were checked when read; in-memory sources are checked here.
            out.diagnostics.push(file_diagnostic(path, problem));
            return out;
        }
        let syntax = if path.extension().is_some_and(|e| e.eq_ignore_ascii_case("json")) {
            Syntax::Json
        } else {
            Syntax::Yaml
        };
        let (marks, value) = match parse_document(text, syntax) {
            Ok(parsed) => parsed,
            Err(error) => {
                let start = crate::marks::Position { line: error.line, column: error.column };
                let span = Span { start, end: crate::marks::Position { column: error.column + 1, ..start } };
                out.diagnostics.push(
                    Diagnostic::new(
                        path,
                        span,
                        String::new(),
                        Rule::Yaml,
                        LintSeverity::Error,
                        error.message,
                    )
                    .with_hint(error.hint),
                );
                return out;
            }
        };
        for duplicate in marks.duplicate_keys() {
            let mut diagnostic = Diagnostic::new(
                path,
                duplicate.second,
                duplicate.pointer.clone(),
                Rule::Yaml,
                LintSeverity::Error,
                format!("duplicate key `{}`", duplicate.key),
            )
            .with_hint(Some(
                "a key may appear once per mapping; the later value would silently win".to_owned(),
            ));
            diagnostic.related.push(RelatedLocation {
                file: path.to_path_buf(),
                line: duplicate.first.start.line,
                column: duplicate.first.start.column,
                note: "first written here".to_owned(),
            });
            out.diagnostics.push(diagnostic);
        }

        let schema_issues = self.schema.check(&value);
        let value = without_unknown_fields(value, &schema_issues);
        // Semantic checks, on the typed rubric or on whatever of it still parses.
        let mut semantic: Vec<LintIssue> = Vec::new();
        match Rubric::deserialize(&value) {
            Ok(rubric) => {
                semantic = validate(&rubric);
                if on_disk {
                    semantic.extend(missing_dataset(path, &rubric));
                }
                out.rubric = Some((rubric, marks.locate("/rubric_id", Target::Auto)));
            }
            Err(error) if schema_issues.is_empty() => {
                let message = format!("the document does not fit the rubric format: {error}");
                semantic.push(LintIssue::error(Rule::Schema, "", message));
            }
            Err(_) => {
                // The schema already explained why; check whatever still parses.
                if let Some(salvaged) = salvage(&value) {
                    semantic = validate(&salvaged.rubric)
                        .into_iter()
                        .filter_map(|i| salvaged.translate(i))
                        .collect();
                    out.rubric = Some((salvaged.rubric, marks.locate("/rubric_id", Target::Auto)));
                }
            }
        }
        // A problem both checks found is reported once, in the semantic check's words
        // (it knows the criterion's name and the scale).
        let semantic_found: HashSet<(&str, Rule)> =
            semantic.iter().map(|i| (i.pointer.as_str(), i.rule)).collect();
        let mut issues: Vec<(LintIssue, Target)> = schema_issues
            .iter()
            .filter(|found| !semantic_found.contains(&(found.issue.pointer.as_str(), found.issue.rule)))
            .map(|found| (found.issue.clone(), found.target))
            .collect();
        issues.extend(semantic.into_iter().map(|issue| (issue, Target::Auto)));
        // Issues found under a misspelt key (read as the name the author meant) are placed
        // at the key as written.
        let renames: Vec<(String, String)> = schema_issues
            .iter()
            .filter_map(|found| {
                let meant = found.rename_to.as_ref()?;
                let mut segments = pointer::segments(&found.issue.pointer);
                segments.pop();
                Some((pointer::join(&pointer::build(&segments), meant), found.issue.pointer.clone()))
            })
            .collect();
        for (issue, _) in &mut issues {
            issue.pointer = as_written(&issue.pointer, &renames);
            if let Some(related) = issue.related.as_mut() {
                related.pointer = as_written(&related.pointer, &renames);
            }
        }
        for (issue, target) in issues {
            let target = if names_a_key(&issue.pointer) { Target::Key } else { target };
            out.diagnostics.push(place(path, &marks, issue, target));
        }
        out.diagnostics.sort_by_key(|d| (d.line, d.column, d.rule));
        out
    }
}

/// Parses positions and value.
fn parse_document(text: &str, syntax: Syntax) -> Result<(Marks, Value), SyntaxError> {
    match syntax {
        Syntax::Yaml => {
            let marks = Marks::parse(text).map_err(|error| SyntaxError {
                hint: Some(yaml::hint_for(&error.message, syntax)),
                message: error.message,
                line: error.position.line,
                column: error.position.column,
            })?;
            Ok((marks, yaml::parse(text, syntax)?))
        }
        // serde_json is the authority on JSON syntax; positions are best effort.
        Syntax::Json => Ok((Marks::parse(text).unwrap_or_default(), yaml::parse(text, syntax)?)),
    }
}

/// The document without the unknown fields the schema reported (a misspelt required
/// field is read under its intended name), so that the rest of it is still checked.
fn without_unknown_fields(mut value: Value, schema_issues: &[SchemaIssue]) -> Value {
    for found in schema_issues.iter().filter(|found| found.unknown_field) {
        let mut segments = pointer::segments(&found.issue.pointer);
        let Some(key) = segments.pop() else { continue };
        if let Some(Value::Object(parent)) = value.pointer_mut(&pointer::build(&segments))
            && let Some(field) = parent.remove(&key)
            && let Some(meant) = &found.rename_to
        {
            parent.insert(meant.clone(), field);
        }
    }
    value
}

/// `at` with a renamed prefix (`/criteria/1/weight`) turned back into the key the document
/// really has (`/criteria/1/wieght`).
fn as_written(at: &str, renames: &[(String, String)]) -> String {
    for (meant, written) in renames {
        if let Some(rest) = at.strip_prefix(meant.as_str())
            && (rest.is_empty() || rest.starts_with('/'))
        {
            return format!("{written}{rest}");
        }
    }
    at.to_owned()
}

/// Anchor and example entries are judged by their keys (`4-5`, `score_9`): a caret under
/// the key says which entry is meant.
fn names_a_key(at: &str) -> bool {
    matches!(
        pointer::segments(at).as_slice(),
        [criteria, _, map, _] if criteria == "criteria" && (map == "anchors" || map == "examples")
    )
}

fn place(path: &Path, marks: &Marks, issue: LintIssue, target: Target) -> Diagnostic {
    let span = marks.locate(&issue.pointer, target);
    let mut diagnostic =
        Diagnostic::new(path, span, issue.pointer, issue.rule, issue.severity, issue.message)
            .with_hint(issue.hint);
    if let Some(related) = issue.related {
        let target = if names_a_key(&related.pointer) { Target::Key } else { Target::Auto };
        let at = marks.locate(&related.pointer, target);
        diagnostic.related.push(RelatedLocation {
            file: path.to_path_buf(),
            line: at.start.line,
            column: at.start.column,
            note: related.note,
        });
    }
    diagnostic
}

fn file_diagnostic(path: &Path, problem: FileProblem) -> Diagnostic {
    let position = crate::marks::Position { line: problem.line, column: problem.column };
    Diagnostic::new(
        path,
        Span { start: position, end: position },
        String::new(),
        Rule::File,
        LintSeverity::Error,
        problem.message,
    )
    .with_hint(problem.hint)
}

/// A warning when `calibration_dataset` is a relative path to a file that is not there.
fn missing_dataset(path: &Path, rubric: &Rubric) -> Option<LintIssue> {
    let reference = rubric.calibration_dataset.as_deref()?;
    if revcal_rubric_model::validate::uri_reference_problem(reference).is_some() {
        return None; // RL-09 already reports the reference itself.
    }
    let local = crate::dataset::local_path(path, reference)?;
    (!local.exists()).then(|| {
        LintIssue::warning(
            Rule::CalibrationDataset,
            "/calibration_dataset",
            format!("calibration dataset `{}` does not exist", local.display()),
        )
        .with_hint("paths are relative to the rubric file; create the JSONL file or fix the path")
    })
}

/// RL-01: one error per repeated `rubric_id`, at the later file, naming the first.
fn check_duplicate_ids(report: &mut LintReport) {
    let mut first: BTreeMap<&str, &LoadedRubric> = BTreeMap::new();
    let mut found = Vec::new();
    for loaded in &report.rubrics {
        match first.get(loaded.rubric.rubric_id.as_str()) {
            None => {
                first.insert(&loaded.rubric.rubric_id, loaded);
            }
            Some(original) => {
                let mut diagnostic = Diagnostic::new(
                    &loaded.file,
                    loaded.id_span,
                    "/rubric_id".to_owned(),
                    Rule::DuplicateId,
                    LintSeverity::Error,
                    format!(
                        "rubric_id `{}` is already defined in {}:{}",
                        loaded.rubric.rubric_id,
                        original.file.display(),
                        original.id_span.start.line
                    ),
                )
                .with_hint(Some(format!(
                    "rubric ids are unique across the library; bump the id (e.g. `{}_v2`) or remove one file",
                    loaded
                        .rubric
                        .rubric_id
                        .trim_end_matches(|c: char| c.is_ascii_digit())
                        .trim_end_matches("_v")
                )));
                diagnostic.related.push(RelatedLocation {
                    file: original.file.clone(),
                    line: original.id_span.start.line,
                    column: original.id_span.start.column,
                    note: "first defined here".to_owned(),
                });
                found.push((loaded.file.clone(), diagnostic));
            }
        }
    }
    let duplicated: HashSet<PathBuf> = found.iter().map(|(file, _)| file.clone()).collect();
    for loaded in &mut report.rubrics {
        if duplicated.contains(&loaded.file) {
            loaded.valid = false;
        }
    }
    for (_, diagnostic) in found {
        report.diagnostics.push(diagnostic);
    }
    report.diagnostics.sort_by(|a, b| (&a.file, a.line, a.column).cmp(&(&b.file, b.line, b.column)));
}

/// Maps `work` over `items` on all cores, keeping the order.
fn parallel_map<T: Sync, R: Send>(items: &[T], work: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(items.len() / 8).max(1);
    if threads == 1 {
        return items.iter().map(&work).collect();
    }
    let chunk = items.len().div_ceil(threads);
    std::thread::scope(|scope| {
        let handles: Vec<_> = items
            .chunks(chunk)
            .map(|part| scope.spawn(|| part.iter().map(&work).collect::<Vec<R>>()))
            .collect();
        handles
            .into_iter()
            .flat_map(|handle| match handle.join() {
                Ok(results) => results,
                Err(panic) => std::panic::resume_unwind(panic),
            })
            .collect()
    })
}
