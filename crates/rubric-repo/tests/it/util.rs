//! Shared fixtures for the rubric-repo tests.
#![allow(dead_code)]

use revcal_rubric_repo::{Diagnostic, Linter};

/// A valid rubric that exercises every part of the format. Tests break one line of it.
pub(crate) const SAMPLE: &str = r#"# yaml-language-server: $schema=./schema.json
rubric_id: sample_v1
name: Sample
version: 1.0.0
artifact_type: notes
scale: {min: 1, max: 5}
criteria:
  - name: clarity
    description: Can a reader act on it?
    weight: essential
    share: 0.6
    threshold: 3
    anchors:
      1: Unreadable
      2: Vague
      3: Usable
      4: Clear
      5: Crisp
    examples:
      score_1: stuff
      score_5: Rename id to user_id in api.rs line 12.
  - name: scope
    description: Is it about one thing?
    weight: important
    share: 0.4
    threshold: 3
    anchors:
      1-2: Sprawling
      3: Mostly focused
      4-5: Focused
    examples:
      score_1: Everything at once.
      score_5: One change.
negative_criteria:
  - name: no_vague_language
    fail_patterns: ['etc\.', "and so on"]
ceilings:
  - {criterion: clarity, below: 2, cap: 2.0}
scoring:
  pass_threshold: 3.5
  essential_minimum: 3
  confidence_threshold: 0.7
calibration_dataset: calibration/sample.jsonl
"#;

/// `SAMPLE` with the first occurrence of `from` replaced by `to` (which must exist).
pub(crate) fn broken(from: &str, to: &str) -> String {
    assert!(SAMPLE.contains(from), "fixture has no `{from}`");
    SAMPLE.replacen(from, to, 1)
}

/// Lints one in-memory document named `sample.yaml`.
pub(crate) fn lint(text: &str) -> Vec<Diagnostic> {
    lint_named("sample.yaml", text)
}

/// Lints one in-memory document under a given name (the extension picks YAML or JSON).
pub(crate) fn lint_named(name: &str, text: &str) -> Vec<Diagnostic> {
    Linter::new().expect("schema compiles").lint_sources(&[(name, text)]).diagnostics
}

/// 1-based (line, column) of the first occurrence of `needle` in `text`.
pub(crate) fn position_of(text: &str, needle: &str) -> (usize, usize) {
    let offset = text.find(needle).unwrap_or_else(|| panic!("`{needle}` not in text"));
    let line = text[..offset].matches('\n').count() + 1;
    let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    (line, text[line_start..offset].chars().count() + 1)
}

/// 1-based (line, column) of `needle` inside the first occurrence of `context`.
pub(crate) fn position_in(text: &str, context: &str, needle: &str) -> (usize, usize) {
    let start = text.find(context).unwrap_or_else(|| panic!("`{context}` not in text"));
    let inner = context.find(needle).unwrap_or_else(|| panic!("`{needle}` not in `{context}`"));
    let offset = start + inner;
    let line = text[..offset].matches('\n').count() + 1;
    let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    (line, text[line_start..offset].chars().count() + 1)
}

/// The only diagnostic, asserting there is exactly one.
#[track_caller]
pub(crate) fn single(diagnostics: impl AsRef<[Diagnostic]>) -> Diagnostic {
    let diagnostics = diagnostics.as_ref();
    assert_eq!(diagnostics.len(), 1, "expected one diagnostic, got {diagnostics:#?}");
    diagnostics[0].clone()
}

/// Asserts rule, position and pointer of a diagnostic.
#[track_caller]
pub(crate) fn assert_at(d: &Diagnostic, rule: &str, at: (usize, usize), pointer: &str) {
    assert_eq!(d.rule.id(), rule, "{d:#?}");
    assert_eq!((d.line, d.column), at, "{d:#?}");
    assert_eq!(d.pointer, pointer, "{d:#?}");
}
