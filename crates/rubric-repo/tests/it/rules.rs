//! One broken rubric per rule of the format: each test asserts the rule id, the line and
//! column of the offending node (not of the document start), and the field.

use crate::util::*;
use revcal_rubric_model::LintSeverity;
use revcal_rubric_repo::Linter;

#[test]
fn the_sample_is_clean() {
    assert!(lint(SAMPLE).is_empty(), "{:#?}", lint(SAMPLE));
}

#[test]
fn rl01_duplicate_rubric_id_names_both_files_and_lines() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("calibration")).unwrap();
    std::fs::write(dir.path().join("calibration/sample.jsonl"), "").unwrap();
    std::fs::write(dir.path().join("a.yaml"), SAMPLE).unwrap();
    std::fs::write(dir.path().join("b.yaml"), format!("# copy\n\n{SAMPLE}")).unwrap();
    let report = Linter::new().unwrap().lint_paths(&[dir.path().to_path_buf()]).unwrap();
    let d = single(&report.diagnostics);
    assert_at(&d, "RL-01", (4, 12), "/rubric_id");
    assert!(d.file.ends_with("b.yaml"));
    assert!(d.message.contains("a.yaml:2"), "{}", d.message);
    assert_eq!(d.related.len(), 1);
    assert!(d.related[0].file.ends_with("a.yaml"));
    assert_eq!((d.related[0].line, d.related[0].column), (2, 12));
    // Both rubrics parsed, but the duplicate is not valid.
    assert_eq!(report.rubrics.iter().filter(|r| r.valid).count(), 1);
}

#[test]
fn rl02_anchor_gap_overlap_range_and_malformed_keys() {
    let text = broken("      4: Clear\n", "");
    let d = single(lint(&text));
    assert_at(&d, "RL-02", position_of(&text, "anchors:"), "/criteria/0/anchors");
    assert!(d.message.contains("point 4"), "{}", d.message);

    let text = broken("      3: Mostly focused", "      3-4: Mostly focused");
    let d = single(lint(&text));
    assert_at(&d, "RL-02", position_of(&text, "4-5: Focused"), "/criteria/1/anchors/4-5");
    // The key (not its text) is underlined.
    assert_eq!(d.end_column - d.column, 3);
    assert!(d.message.contains("point 4 is covered twice"), "{}", d.message);
    let related = &d.related[0];
    assert_eq!((related.line, related.column), position_of(&text, "3-4: Mostly"));

    let text = broken("      5: Crisp", "      5: Crisp\n      6: Beyond");
    let d = single(lint(&text));
    assert_at(&d, "RL-02", position_of(&text, "6: Beyond"), "/criteria/0/anchors/6");
    assert!(d.message.contains("outside the scale 1..5"), "{}", d.message);

    let text = broken("      5: Crisp", "      five: Crisp");
    let diagnostics = lint(&text);
    let d =
        diagnostics.iter().find(|d| d.pointer == "/criteria/0/anchors/five").expect("malformed key reported");
    assert_at(d, "RL-02", position_of(&text, "five"), "/criteria/0/anchors/five");
    // And the point it failed to cover.
    assert!(
        diagnostics.iter().any(|d| d.rule.id() == "RL-02" && d.message.contains("point 5")),
        "{diagnostics:#?}"
    );
}

#[test]
fn rl03_examples_for_min_and_max() {
    let text = broken("      score_5: One change.\n", "");
    let d = single(lint(&text));
    assert_at(
        &d,
        "RL-03",
        position_of(&text, "examples:\n      score_1: Everything"),
        "/criteria/1/examples",
    );
    assert!(d.message.contains("score_5"), "{}", d.message);

    let text = broken("      score_1: stuff", "      score_1: stuff\n      score_9: nine");
    let d = single(lint(&text));
    assert_at(&d, "RL-03", position_of(&text, "score_9"), "/criteria/0/examples/score_9");
}

#[test]
fn rl04_version_format() {
    for (written, hint) in
        [("1.0", "1.0.0"), ("v1.0.0", "1.0.0"), ("1.0.0-beta", "1.0.0"), ("\"1.0\"", "1.0.0")]
    {
        let text = broken("version: 1.0.0", &format!("version: {written}"));
        let d = single(lint(&text));
        assert_at(&d, "RL-04", position_of(&text, written), "/version");
        assert!(d.hint.as_deref().unwrap_or_default().contains(hint), "{written}: {d:#?}");
    }
}

#[test]
fn rl05_thresholds_inside_the_scale() {
    let text =
        broken("    threshold: 3\n    anchors:\n      1-2", "    threshold: 11\n    anchors:\n      1-2");
    let d = single(lint(&text));
    assert_at(&d, "RL-05", position_in(&text, "threshold: 11", "11"), "/criteria/1/threshold");

    let text = broken("pass_threshold: 3.5", "pass_threshold: 0");
    assert_at(
        &single(lint(&text)),
        "RL-05",
        position_in(&text, "pass_threshold: 0", "0"),
        "/scoring/pass_threshold",
    );

    let text = broken("essential_minimum: 3", "essential_minimum: 6");
    assert_at(
        &single(lint(&text)),
        "RL-05",
        position_in(&text, "minimum: 6", "6"),
        "/scoring/essential_minimum",
    );
}

#[test]
fn rl06_weight_is_essential_or_important() {
    let text = broken("weight: important", "weight: importnt");
    let diagnostics = lint(&text);
    let d = single(&diagnostics);
    assert_at(&d, "RL-06", position_of(&text, "importnt"), "/criteria/1/weight");
    assert_eq!(d.hint.as_deref(), Some("did you mean `important`?"));
}

#[test]
fn rl09_calibration_dataset_is_a_uri_reference() {
    let text = broken("calibration/sample.jsonl", "calibration/my sample.jsonl");
    let d = single(lint(&text));
    assert_at(&d, "RL-09", position_of(&text, "calibration/my"), "/calibration_dataset");
    let text = broken("calibration/sample.jsonl", "\"1http://example.com/x\"");
    assert_at(&single(lint(&text)), "RL-09", position_of(&text, "\"1http"), "/calibration_dataset");
}

#[test]
fn rl09_a_missing_local_dataset_is_a_warning_on_disk() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("sample.yaml"), SAMPLE).unwrap();
    let report = Linter::new().unwrap().lint_paths(&[dir.path().to_path_buf()]).unwrap();
    let d = single(&report.diagnostics);
    assert_eq!((d.rule.id(), d.severity), ("RL-09", LintSeverity::Warning));
    assert!(d.message.contains("does not exist"), "{}", d.message);
    std::fs::create_dir(dir.path().join("calibration")).unwrap();
    std::fs::write(dir.path().join("calibration/sample.jsonl"), "").unwrap();
    let report = Linter::new().unwrap().lint_paths(&[dir.path().to_path_buf()]).unwrap();
    assert!(report.diagnostics.is_empty(), "{:#?}", report.diagnostics);
}

#[test]
fn schema_types_required_and_unknown_fields() {
    // Type.
    let text = broken("threshold: 3", "threshold: high");
    let d = single(lint(&text));
    assert_at(&d, "SCHEMA", position_in(&text, "threshold: high", "high"), "/criteria/0/threshold");
    assert!(d.message.contains("must be a number"), "{}", d.message);
    // Required: the pointer names the missing field; the position is its mapping.
    let text = broken("    description: Is it about one thing?\n", "");
    let d = single(lint(&text));
    assert_at(&d, "SCHEMA", position_of(&text, "name: scope"), "/criteria/1/description");
    assert!(d.message.contains("`description`"), "{}", d.message);
    // Unknown, with a "did you mean".
    let text = broken("    share: 0.4", "    share: 0.4\n    treshold: 4");
    let d = single(lint(&text));
    assert_at(&d, "SCHEMA", position_of(&text, "treshold"), "/criteria/1/treshold");
    assert_eq!(
        d.hint.as_deref(),
        Some("`threshold` is already set here; remove `treshold` or merge it into `threshold`")
    );
    // When the intended field is not there yet, the hint names it.
    let text = broken("    share: 0.4\n    threshold: 3", "    share: 0.4\n    treshold: 3");
    let d = single(lint(&text));
    assert_at(&d, "SCHEMA", position_of(&text, "treshold"), "/criteria/1/treshold");
    assert_eq!(d.hint.as_deref(), Some("did you mean `threshold`?"));
    // A scalar where the rubric mapping should be.
    let d = single(lint("just a sentence\n"));
    assert_at(&d, "SCHEMA", (1, 1), "");
}

#[test]
fn scale_must_be_an_ascending_range() {
    let text = broken("scale: {min: 1, max: 5}", "scale: {min: 5, max: 5}");
    let diagnostics = lint(&text);
    let d = diagnostics.iter().find(|d| d.rule.id() == "SCALE").expect("scale reported");
    assert_at(d, "SCALE", position_of(&text, "scale"), "/scale");
}

#[test]
fn names_are_unique() {
    let text = broken("name: scope", "name: clarity");
    let d = single(lint(&text));
    assert_at(
        &d,
        "NAME",
        position_in(&text, "name: clarity\n    description: Is it", "clarity"),
        "/criteria/1/name",
    );
    assert_eq!((d.related[0].line, d.related[0].column), position_in(&text, "name: clarity", "clarity"));
}

#[test]
fn shares_all_or_none_in_range_and_summing_to_one() {
    let text = broken("    share: 0.4\n", "");
    let d = single(lint(&text));
    assert_at(&d, "SHARE", position_of(&text, "name: scope"), "/criteria/1");

    let text = broken("share: 0.4", "share: 0.3");
    let d = single(lint(&text));
    assert_at(&d, "SHARE", position_of(&text, "criteria:"), "/criteria");
    assert!(d.message.contains("0.9"), "{}", d.message);

    let text = broken("share: 0.6", "share: 0").replacen("share: 0.4", "share: 1.0", 1);
    let d = single(lint(&text));
    assert_at(&d, "SHARE", position_in(&text, "share: 0\n", "0"), "/criteria/0/share");

    // Within the 0.001 tolerance.
    let text = broken("share: 0.4", "share: 0.4005");
    assert!(lint(&text).is_empty());
}

#[test]
fn ceilings_name_a_criterion_and_stay_in_the_scale() {
    let text = broken("criterion: clarity", "criterion: clarty");
    let d = single(lint(&text));
    assert_at(&d, "CEILING", position_of(&text, "clarty"), "/ceilings/0/criterion");
    assert_eq!(d.hint.as_deref(), Some("did you mean `clarity`?"));

    let text = broken("cap: 2.0", "cap: 12");
    assert_at(&single(lint(&text)), "CEILING", position_in(&text, "cap: 12", "12"), "/ceilings/0/cap");
}

#[test]
fn patterns_compile_and_bare_dots_warn() {
    let text = broken("\"and so on\"", "\"(and so on\"");
    let d = single(lint(&text));
    assert_at(&d, "PATTERN", position_of(&text, "\"(and"), "/negative_criteria/0/fail_patterns/1");
    assert_eq!(d.severity, LintSeverity::Error);

    let text = broken(r"'etc\.'", "\"etc.\"");
    let d = single(lint(&text));
    assert_at(&d, "PATTERN", position_of(&text, "\"etc.\""), "/negative_criteria/0/fail_patterns/0");
    assert_eq!(d.severity, LintSeverity::Warning);

    // A literal criterion may say `etc.`.
    let text = broken(r"fail_patterns: ['etc\.', ", "literal: true\n    fail_patterns: ['etc.', ");
    assert!(lint(&text).is_empty(), "{:#?}", lint(&text));
}

#[test]
fn yaml_syntax_errors_and_duplicate_keys() {
    // The parser's own position: the second `:` on the line.
    let text = broken("name: Sample", "name: Sample: extra");
    let d = single(lint(&text));
    assert_at(&d, "YAML", position_in(&text, "Sample: extra", ": extra"), "");
    assert!(d.message.contains("mapping values are not allowed"), "{}", d.message);
    // An unclosed bracket is found where the parser gives up, on the next key.
    let text = broken("name: Sample", "name: [Sample");
    let d = single(lint(&text));
    assert_at(&d, "YAML", position_in(&text, "version: 1.0.0", ": 1.0.0"), "");

    let text = broken("name: Sample", "name: Sample\nname: Other");
    let d = single(lint(&text));
    assert_at(&d, "YAML", position_of(&text, "name: Other"), "/name");
    assert_eq!((d.related[0].line, d.related[0].column), position_of(&text, "name: Sample"));
}

#[test]
fn every_problem_in_a_file_is_reported_in_one_run() {
    let text = SAMPLE
        .replacen("version: 1.0.0", "version: 1.0", 1)
        .replacen("weight: important", "weight: heavy", 1)
        .replacen("      4: Clear\n", "", 1)
        .replacen("pass_threshold: 3.5", "pass_threshold: 9", 1)
        .replacen("    threshold: 3\n", "    threshold: 3\n    colour: red\n", 1);
    let rules: Vec<&str> = lint(&text).iter().map(|d| d.rule.id()).collect();
    for expected in ["RL-04", "RL-06", "RL-02", "RL-05", "SCHEMA"] {
        assert!(rules.contains(&expected), "{expected} missing from {rules:?}");
    }
}

#[test]
fn a_value_of_the_wrong_kind_hides_no_other_problem_of_its_item() {
    // One criterion with a bad weight and a share written as text, an overlapping anchor in
    // the same criterion, and a second criterion of the same name: all four in one run.
    let text = SAMPLE
        .replacen("weight: essential", "weight: critical", 1)
        .replacen("share: 0.6", "share: \"0.6\"", 1)
        .replacen("      2: Vague\n", "      1-2: Vague\n", 1)
        .replacen("name: scope", "name: clarity", 1);
    let found = lint(&text);
    let rules: Vec<(&str, &str)> = found.iter().map(|d| (d.rule.id(), d.pointer.as_str())).collect();
    for expected in [
        ("RL-06", "/criteria/0/weight"),
        ("SHARE", "/criteria/0/share"),
        ("RL-02", "/criteria/0/anchors/1-2"),
        ("NAME", "/criteria/1/name"),
    ] {
        assert!(rules.contains(&expected), "{expected:?} missing from {rules:?}");
    }
    // Nothing is said about the list as a whole from a repaired item: the shares still sum
    // to 1, and nothing else is reported.
    assert_eq!(found.len(), 4, "{rules:?}");
}

#[test]
fn the_rubric_library_spec_example_passes_with_one_warning() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/rubrics/user_story_spec_example.yaml");
    let report = Linter::new().unwrap().lint_paths(&[path.into()]).unwrap();
    assert_eq!(report.error_count(), 0, "{:#?}", report.diagnostics);
    let d = single(&report.diagnostics);
    assert_eq!((d.rule.id(), d.severity), ("PATTERN", LintSeverity::Warning));
    assert!(d.message.contains("`etc.`"), "{}", d.message);
    let rubric = &report.rubrics[0].rubric;
    assert_eq!(rubric.rubric_id, "user_story_quality_v1");
    let names: Vec<&str> = rubric.criteria.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["clarity", "testability"]);
    let negatives: Vec<&str> = rubric.negative_criteria.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(negatives, ["no_assumptions", "no_vague_language"]);
}

#[test]
fn a_misspelt_required_field_is_one_error_and_checking_goes_on() {
    // `wieght` for `weight`, in a criterion that also has a threshold outside the scale.
    let text = broken(
        "    weight: important\n    share: 0.4\n    threshold: 3",
        "    wieght: important\n    share: 0.4\n    threshold: 9",
    );
    let diagnostics = lint(&text);
    let rules: Vec<(&str, &str)> = diagnostics.iter().map(|d| (d.rule.id(), d.pointer.as_str())).collect();
    assert_eq!(
        rules,
        [("SCHEMA", "/criteria/1/wieght"), ("RL-05", "/criteria/1/threshold")],
        "{diagnostics:#?}"
    );
    assert_eq!(diagnostics[0].hint.as_deref(), Some("did you mean `weight`?"));
}

#[test]
fn a_broken_scale_is_reported_once_not_per_threshold() {
    let text = broken("scale: {min: 1, max: 5}", "scale: {min: 5, max: 1}");
    let diagnostics = lint(&text);
    let rules: Vec<&str> = diagnostics.iter().map(|d| d.rule.id()).collect();
    assert_eq!(rules, ["SCALE"], "{diagnostics:#?}");
}

#[test]
fn empty_anchor_text_names_the_anchor_and_criterion() {
    let text = broken("      3: Usable", "      3: \"\"");
    let d = single(lint(&text));
    assert_at(&d, "RL-02", position_in(&text, "3: \"\"", "3"), "/criteria/0/anchors/3");
    assert_eq!(d.message, "anchor `3` of `clarity` is empty");
    assert_eq!(d.field(), "criteria[0].anchors.3");
}

#[test]
fn a_number_where_a_pattern_belongs_gets_a_quoting_hint() {
    let text = broken("\"and so on\"]", "42]");
    let d = single(lint(&text));
    assert_at(&d, "PATTERN", position_in(&text, "42]", "42"), "/negative_criteria/0/fail_patterns/1");
    assert_eq!(d.hint.as_deref(), Some("quote it: `\"42\"`"));
}

#[test]
fn the_dot_hint_escapes_every_literal_dot() {
    let text = broken(r"'etc\.'", "\"e.g. minor\"");
    let d = single(lint(&text));
    assert_eq!(d.rule.id(), "PATTERN");
    assert!(d.hint.as_deref().unwrap().starts_with(r"write `e\.g\. minor`"), "{d:#?}");
}

#[test]
fn content_errors_get_their_own_hints() {
    let text = broken("threshold: 3", "threshold: .nan");
    let d = single(lint(&text));
    assert_eq!(d.rule.id(), "YAML");
    assert!(d.message.contains("not a finite number"), "{}", d.message);
    assert!(d.hint.as_deref().unwrap().contains("`.nan`"), "{d:#?}");
}

#[test]
fn a_bad_dataset_reference_is_not_also_reported_missing() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("sample.yaml"), broken("calibration/sample.jsonl", "\"my data.jsonl\""))
        .unwrap();
    let report = Linter::new().unwrap().lint_paths(&[dir.path().to_path_buf()]).unwrap();
    let d = single(&report.diagnostics);
    assert_eq!((d.rule.id(), d.severity), ("RL-09", LintSeverity::Error));
}

#[test]
fn problems_under_a_misspelt_key_are_placed_at_the_key_as_written() {
    let text = broken("version: 1.0.0", "vesion: 1.0");
    let diagnostics = lint(&text);
    let found: Vec<(&str, &str)> = diagnostics.iter().map(|d| (d.rule.id(), d.pointer.as_str())).collect();
    assert_eq!(found, [("SCHEMA", "/vesion"), ("RL-04", "/vesion")], "{diagnostics:#?}");
    assert_eq!((diagnostics[1].line, diagnostics[1].column), position_in(&text, "vesion: 1.0", "1.0"));
}

#[test]
fn entry_checks_run_even_while_the_scale_is_broken() {
    let text = broken("scale: {min: 1, max: 5}", "scale: {min: 1, max: 1000}").replacen(
        "      3: Usable",
        "      3: \"\"",
        1,
    );
    let diagnostics = lint(&text);
    let found: Vec<(&str, &str)> = diagnostics.iter().map(|d| (d.rule.id(), d.message.as_str())).collect();
    assert_eq!(
        found,
        [
            ("SCALE", "scale 1..1000 has 1000 points; at most 101 are allowed"),
            ("RL-02", "anchor `3` of `clarity` is empty")
        ]
    );
}

#[test]
fn share_ranges_read_the_same_whether_or_not_every_criterion_has_a_share() {
    for text in [
        broken("share: 0.6", "share: 0"),
        broken("share: 0.6", "share: 0").replacen("    share: 0.4\n", "", 1),
    ] {
        let diagnostics = lint(&text);
        let d = diagnostics.iter().find(|d| d.pointer == "/criteria/0/share").expect("share reported");
        assert_eq!(d.message, "share 0 of `clarity` is outside (0, 1]");
    }
}

#[test]
fn an_unreadable_criteria_list_does_not_fail_the_ceilings() {
    let start = SAMPLE.find("criteria:\n").unwrap();
    let end = SAMPLE.find("negative_criteria:").unwrap();
    let text = format!("{}criteria: 5\n{}", &SAMPLE[..start], &SAMPLE[end..]);
    let d = single(lint(&text));
    assert_at(&d, "SCHEMA", position_in(&text, "criteria: 5", "5"), "/criteria");
}

#[test]
fn a_ceiling_hint_considers_criteria_that_did_not_parse() {
    let text =
        broken("weight: essential", "weight: heavy").replacen("criterion: clarity", "criterion: clarty", 1);
    let diagnostics = lint(&text);
    let d = diagnostics.iter().find(|d| d.rule.id() == "CEILING").expect("ceiling reported");
    assert_eq!(d.hint.as_deref(), Some("did you mean `clarity`?"));
}

/// `SAMPLE` with two focus areas (docs/rubric-format.md, "focus_areas").
const FOCUS: &str = "focus_areas:
  - name: Security
    description: Leaks and injections.
    checks: [Queries use parameters.]
    red_flags:
      - {id: sql_injection, description: SQL built from input.}
      - {id: hardcoded_secret, description: A key in the code.}
  - name: Testing
    description: Tests that catch regressions.
    checks: [New code has tests.]
    red_flags:
      - {id: hardcoded_sleep, description: A fixed sleep in a test.}
scoring:";

/// `SAMPLE` with `FOCUS`, then the first `from` replaced by `to`.
fn focused(from: &str, to: &str) -> String {
    let text = broken("scoring:", FOCUS);
    assert!(text.contains(from), "fixture has no `{from}`");
    text.replacen(from, to, 1)
}

#[test]
fn focus_areas_lint_clean() {
    let text = focused("", "");
    assert!(lint(&text).is_empty(), "{:#?}", lint(&text));
}

#[test]
fn focus_a_duplicate_red_flag_id_in_one_area_points_at_both() {
    let text = focused("{id: hardcoded_secret", "{id: sql_injection");
    let d = single(lint(&text));
    let second = "{id: sql_injection, description: A key";
    assert_at(&d, "FOCUS", position_in(&text, second, "sql_injection"), "/focus_areas/0/red_flags/1/id");
    assert!(d.message.contains("red flag `sql_injection` is already defined in this area"), "{}", d.message);
    assert_eq!((d.related[0].line, d.related[0].column), position_of(&text, "sql_injection"));
    assert!(d.is_error());
}

#[test]
fn focus_red_flag_ids_are_unique_across_areas() {
    let text = focused("{id: hardcoded_sleep", "{id: hardcoded_secret");
    let d = single(lint(&text));
    let second = "{id: hardcoded_secret, description: A fixed";
    assert_at(&d, "FOCUS", position_in(&text, second, "hardcoded_secret"), "/focus_areas/1/red_flags/0/id");
    assert!(d.message.contains("in focus area `Security`"), "{}", d.message);
}

#[test]
fn focus_area_names_are_unique_regardless_of_case() {
    let text = focused("name: Testing", "name: SECURITY");
    let d = single(lint(&text));
    assert_at(&d, "FOCUS", position_in(&text, "name: SECURITY", "SECURITY"), "/focus_areas/1/name");
    assert_eq!((d.related[0].line, d.related[0].column), position_in(&text, "name: Security", "Security"));
}

#[test]
fn focus_ids_and_names_follow_their_syntax_once_each() {
    let text = focused("{id: hardcoded_sleep", "{id: Hardcoded-Sleep");
    let d = single(lint(&text));
    assert_at(&d, "SCHEMA", position_of(&text, "Hardcoded-Sleep"), "/focus_areas/1/red_flags/0/id");
    assert!(d.hint.as_deref().is_some_and(|h| h.contains("`hardcoded_sleep`")), "{d:#?}");

    let text = focused("name: Testing", "name: 2 Testing");
    let d = single(lint(&text));
    assert_at(&d, "SCHEMA", position_of(&text, "2 Testing"), "/focus_areas/1/name");
}

#[test]
fn focus_every_problem_is_reported_when_one_area_does_not_parse() {
    // The Testing area's flag lacks its description, so that area cannot be read; the
    // Security area's duplicate id is still found.
    let text = focused("{id: hardcoded_secret", "{id: sql_injection").replacen(
        "{id: hardcoded_sleep, description: A fixed sleep in a test.}",
        "{id: hardcoded_sleep}",
        1,
    );
    let diagnostics = lint(&text);
    let rules: Vec<(&str, &str)> = diagnostics.iter().map(|d| (d.rule.id(), d.pointer.as_str())).collect();
    assert_eq!(
        rules,
        [("FOCUS", "/focus_areas/0/red_flags/1/id"), ("SCHEMA", "/focus_areas/1/red_flags/0/description")],
        "{diagnostics:#?}"
    );
    assert!(diagnostics[1].message.contains("description"), "{}", diagnostics[1].message);
}

#[test]
fn focus_unknown_and_empty_fields_are_schema_errors() {
    let text = focused("checks: [New code has tests.]", "check: [New code has tests.]");
    let diagnostics = lint(&text);
    let d = diagnostics.iter().find(|d| d.pointer == "/focus_areas/1/check").expect("unknown field");
    assert_at(d, "SCHEMA", position_of(&text, "check: [New"), "/focus_areas/1/check");
    assert_eq!(d.hint.as_deref(), Some("did you mean `checks`?"));

    let text = focused("checks: [New code has tests.]", "checks: []");
    let d = single(lint(&text));
    assert_at(&d, "SCHEMA", position_of(&text, "checks: []"), "/focus_areas/1/checks");
    assert!(d.message.contains("focus area `Testing` has no checks"), "{}", d.message);
}

/// `salvage` reads a scalar written where a top-level text belongs as its text, so that the
/// rest of the file is still checked. Its list of those fields is kept by hand: every text
/// field of the schema must be on it, or a `version: 1.0`-style slip in a new field would hide
/// every semantic problem of the file.
#[test]
fn a_number_in_any_top_level_text_field_leaves_the_rest_checked() {
    let schema = revcal_rubric_model::json_schema();
    let text_fields: Vec<&str> = schema["properties"]
        .as_object()
        .expect("the schema lists its properties")
        .iter()
        .filter(|(_, property)| property["type"] == "string")
        .map(|(name, _)| name.as_str())
        .collect();
    assert!(
        text_fields.contains(&"rubric_id") && text_fields.contains(&"calibration_dataset"),
        "{text_fields:?}"
    );
    for field in text_fields {
        let kept: String = broken("    threshold: 3\n", "    threshold: 9\n")
            .lines()
            .filter(|line| !line.starts_with(&format!("{field}:")))
            .map(|line| format!("{line}\n"))
            .collect();
        let text = format!("{kept}\"{field}\": 5\n");
        let diagnostics = lint(&text);
        let found: Vec<(&str, &str)> =
            diagnostics.iter().map(|d| (d.rule.id(), d.pointer.as_str())).collect();
        assert!(found.iter().any(|(_, pointer)| *pointer == format!("/{field}")), "{field}: {found:?}");
        assert!(
            found.contains(&("RL-05", "/criteria/0/threshold")),
            "{field}: the rest is checked: {found:?}"
        );
    }
}
