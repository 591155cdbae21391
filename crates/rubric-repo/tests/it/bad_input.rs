//! Bad input of every kind gives a clear diagnostic with a position; nothing panics.

use crate::util::*;
use revcal_rubric_repo::{LintReport, Linter, MAX_FILE_BYTES, RepoError, Repository};
use std::path::{Path, PathBuf};

fn lint_file(name: &str, bytes: &[u8]) -> (tempfile::TempDir, LintReport) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(name), bytes).unwrap();
    let report = Linter::new().unwrap().lint_paths(&[dir.path().to_path_buf()]).unwrap();
    (dir, report)
}

#[test]
fn empty_file() {
    let (_dir, report) = lint_file("empty.yaml", b"");
    let d = single(&report.diagnostics);
    assert_eq!((d.rule.id(), d.line, d.column), ("FILE", 1, 1));
    assert!(d.message.contains("empty"), "{}", d.message);
    let (_dir, report) = lint_file("comments.yaml", b"# only a comment\n\n");
    assert!(single(&report.diagnostics).message.contains("empty"));
}

#[test]
fn invalid_utf8_names_the_byte_and_its_position() {
    let (_dir, report) = lint_file("latin1.yaml", b"rubric_id: a\nname: caf\xe9\n");
    let d = single(&report.diagnostics);
    assert_eq!((d.rule.id(), d.line, d.column), ("FILE", 2, 10));
    assert!(d.message.contains("UTF-8") && d.message.contains("0xe9"), "{}", d.message);
}

#[test]
fn binary_file() {
    let (_dir, report) = lint_file("image.yaml", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR");
    let d = single(&report.diagnostics);
    assert_eq!(d.rule.id(), "FILE");
    assert!(d.message.contains("binary"), "{}", d.message);
    assert_eq!(report.io_failures, 0, "a binary file is a content problem, not an I/O failure");
}

#[test]
fn yaml_syntax_error_points_at_the_problem() {
    let text = "rubric_id: a\nname: \"unterminated\nversion: 1.0.0\n";
    let (_dir, report) = lint_file("syntax.yaml", text.as_bytes());
    let d = single(&report.diagnostics);
    assert_eq!(d.rule.id(), "YAML");
    assert!(d.line >= 2, "{d:#?}");
    let tabs = "rubric_id: a\ncriteria:\n\t- name: x\n";
    let (_dir, report) = lint_file("tabs.yaml", tabs.as_bytes());
    let d = single(&report.diagnostics);
    assert_eq!((d.rule.id(), d.line), ("YAML", 3), "{d:#?}");
}

#[test]
fn duplicate_keys_at_any_depth() {
    let text = broken(
        "    threshold: 3\n    anchors:\n      1:",
        "    threshold: 3\n    threshold: 4\n    anchors:\n      1:",
    );
    let d = single(lint(&text));
    assert_eq!(d.rule.id(), "YAML");
    assert_eq!(d.pointer, "/criteria/0/threshold");
    assert_eq!((d.line, d.column), position_of(&text, "threshold: 4"));
}

#[test]
fn json_rubrics_load_and_are_located() {
    let rubric: revcal_rubric_model::Rubric = serde_yaml::from_str(SAMPLE).unwrap();
    let mut value = serde_json::to_value(&rubric).unwrap();
    value.as_object_mut().unwrap().remove("calibration_dataset");
    let json = serde_json::to_string_pretty(&value).unwrap();
    assert!(lint_named("sample.json", &json).is_empty(), "{:#?}", lint_named("sample.json", &json));

    // JSON cannot carry the YAML schema comment, so `$schema` is allowed.
    let with_schema = json.replacen('{', "{\n  \"$schema\": \"../rubrics/schema.json\",", 1);
    assert!(
        lint_named("sample.json", &with_schema).is_empty(),
        "{:#?}",
        lint_named("sample.json", &with_schema)
    );

    let broken_json = json.replace("\"version\": \"1.0.0\"", "\"version\": \"1.0\"");
    let d = single(lint_named("sample.json", &broken_json));
    assert_eq!(d.rule.id(), "RL-04");
    assert_eq!((d.line, d.column), position_in(&broken_json, "\"version\": \"1.0\"", "\"1.0\""));

    let d = single(lint_named("sample.json", "{\"rubric_id\": \"x\",}"));
    assert_eq!((d.rule.id(), d.line), ("YAML", 1));
}

#[test]
fn a_ten_megabyte_file_is_refused_without_parsing() {
    let big = "# padding\n".repeat(1024 * 1024);
    assert!(big.len() as u64 > MAX_FILE_BYTES);
    let (_dir, report) = lint_file("huge.yaml", big.as_bytes());
    let d = single(&report.diagnostics);
    assert_eq!((d.rule.id(), d.line, d.column), ("FILE", 1, 1));
    assert!(d.message.contains("10.0 MiB") && d.message.contains("limited"), "{}", d.message);
}

#[test]
fn deep_nesting_is_an_error_not_a_stack_overflow() {
    for depth in [200, 100_000] {
        let yaml = format!("rubric_id: {}{}", "[".repeat(depth), "]".repeat(depth));
        let d = single(lint(&yaml));
        assert_eq!(d.rule.id(), "YAML", "{d:#?}");
        let json = format!("{{\"rubric_id\": {}{}}}", "[".repeat(depth), "]".repeat(depth));
        let d = single(lint_named("deep.json", &json));
        assert_eq!(d.rule.id(), "YAML", "{d:#?}");
    }
    let block: String = (0..300).map(|depth| format!("{}k{depth}:\n", "  ".repeat(depth))).collect();
    assert_eq!(single(lint(&block)).rule.id(), "YAML");
}

#[test]
fn a_directory_without_rubrics_is_empty_not_an_error() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "not a rubric").unwrap();
    std::fs::write(dir.path().join("schema.json"), "{}").unwrap();
    let report = Linter::new().unwrap().lint_paths(&[dir.path().to_path_buf()]).unwrap();
    assert!(report.files.is_empty() && report.diagnostics.is_empty());
    assert!(Repository::load(dir.path()).unwrap().is_empty());
}

#[test]
fn a_missing_path_is_named() {
    let missing = PathBuf::from("/definitely/not/here");
    match Linter::new().unwrap().lint_paths(std::slice::from_ref(&missing)) {
        Err(RepoError::NotFound { path }) => assert_eq!(path, missing),
        other => panic!("expected NotFound, got {other:?}"),
    }
    let error = Repository::load(&missing).unwrap_err().to_string();
    assert!(error.contains("/definitely/not/here"), "{error}");
}

#[test]
fn an_unreadable_file_is_reported_and_counted_as_an_io_failure() {
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(dir.path().join("gone.yaml"), dir.path().join("link.yaml")).unwrap();
    std::fs::write(dir.path().join("ok.yaml"), broken("calibration_dataset: calibration/sample.jsonl\n", ""))
        .unwrap();
    let report = Linter::new().unwrap().lint_paths(&[dir.path().to_path_buf()]).unwrap();
    let d = single(&report.diagnostics);
    assert_eq!(d.rule.id(), "FILE");
    assert!(d.file.ends_with("link.yaml"));
    assert!(d.message.contains("cannot open"), "{}", d.message);
    assert_eq!(report.io_failures, 1);
    // The readable file was still checked and loaded.
    assert_eq!(report.rubrics.len(), 1);
}

#[test]
fn invalid_libraries_fail_to_load_with_every_diagnostic() {
    let error = Repository::from_sources(&[
        (Path::new("a.yaml"), broken("version: 1.0.0", "version: 1")),
        (
            Path::new("b.yaml"),
            broken("pass_threshold: 3.5", "pass_threshold: 7").replace("sample_v1", "other_v1"),
        ),
    ])
    .unwrap_err();
    let RepoError::Invalid { report } = &error else { panic!("{error:?}") };
    let rules: Vec<&str> = report.diagnostics.iter().map(|d| d.rule.id()).collect();
    assert_eq!(rules, ["RL-04", "RL-05"]);
    assert!(error.to_string().contains("2 errors"), "{error}");
}

#[test]
fn one_file_named_two_ways_is_checked_once() {
    let dir = tempfile::tempdir().unwrap();
    let text = broken("calibration_dataset: calibration/sample.jsonl\n", "");
    std::fs::write(dir.path().join("a.yaml"), text).unwrap();
    let plain = dir.path().join("a.yaml");
    let dotted = dir.path().join(".").join("a.yaml");
    let report = Linter::new().unwrap().lint_paths(&[plain, dotted, dir.path().to_path_buf()]).unwrap();
    assert_eq!(report.files.len(), 1);
    assert!(report.diagnostics.is_empty(), "{:#?}", report.diagnostics);
}
