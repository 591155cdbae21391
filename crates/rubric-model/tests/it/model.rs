//! The typed model: serde round trips, the schema's shape, and property tests on the
//! small parsers the checks use.

use proptest::prelude::*;
use revcal_rubric_model::validate::{literal_dot_warning, uri_reference_problem, version_problem};
use revcal_rubric_model::{AnchorKey, LintSeverity, Rubric, Rule, json_schema, validate};

const RUBRIC: &str = r#"
rubric_id: sample_v1
name: Sample
version: 2.3.4
artifact_type: notes
scale: {min: 0, max: 3}
criteria:
  - name: clarity
    description: Can a reader act on it?
    weight: essential
    threshold: 2
    anchors: {0: None, 1-2: Some, 3: All}
    examples: {score_0: "...", score_3: "Rename `id` to `user_id`."}
scoring: {pass_threshold: 2}
"#;

#[test]
fn yaml_and_json_round_trips_keep_every_field_and_the_anchor_order() {
    let rubric: Rubric = serde_yaml::from_str(RUBRIC).unwrap();
    assert_eq!(rubric.scoring.confidence_threshold, 0.7, "default applies");
    let keys: Vec<&str> = rubric.criteria[0].anchors.iter().map(|(k, _)| k).collect();
    assert_eq!(keys, ["0", "1-2", "3"]);
    let json = serde_json::to_string(&rubric).unwrap();
    assert_eq!(serde_json::from_str::<Rubric>(&json).unwrap(), rubric);
    let yaml = serde_yaml::to_string(&rubric).unwrap();
    assert_eq!(serde_yaml::from_str::<Rubric>(&yaml).unwrap(), rubric);
    assert!(validate(&rubric).is_empty(), "{:#?}", validate(&rubric));
}

#[test]
fn unknown_fields_are_rejected_by_serde_too() {
    let text = RUBRIC.replace("name: Sample", "name: Sample\ncolour: blue");
    let error = serde_yaml::from_str::<Rubric>(&text).unwrap_err().to_string();
    assert!(error.contains("colour"), "{error}");
}

#[test]
fn the_schema_forbids_unknown_fields_everywhere() {
    let schema = json_schema();
    assert_eq!(schema["additionalProperties"], false);
    for definition in ["Criterion", "NegativeCriterion", "Ceiling", "Scoring", "Scale"] {
        assert_eq!(schema["$defs"][definition]["additionalProperties"], false, "{definition}");
    }
    assert_eq!(schema["properties"]["version"]["pattern"], r"^\d+\.\d+\.\d+$");
    assert_eq!(schema["properties"]["calibration_dataset"]["format"], "uri-reference");
    let text = schema.to_string();
    assert!(
        !text.contains("\"double\"") && !text.contains("\"null\""),
        "Rust-only details leak into the schema"
    );
}

#[test]
fn a_rubric_built_in_code_is_held_to_the_same_rules() {
    let mut rubric: Rubric = serde_yaml::from_str(RUBRIC).unwrap();
    rubric.rubric_id = "Sample".into();
    rubric.criteria[0].threshold = f64::NAN;
    rubric.scoring.confidence_threshold = 1.5;
    rubric.criteria.push(rubric.criteria[0].clone());
    let issues = validate(&rubric);
    let rules: Vec<(Rule, &str)> = issues.iter().map(|i| (i.rule, i.pointer.as_str())).collect();
    assert!(rules.contains(&(Rule::Schema, "/rubric_id")), "{rules:?}");
    assert!(
        rules.contains(&(Rule::Threshold, "/criteria/0/threshold")),
        "NaN is outside every scale: {rules:?}"
    );
    assert!(rules.contains(&(Rule::Name, "/criteria/1/name")), "{rules:?}");
    assert!(rules.contains(&(Rule::Schema, "/scoring/confidence_threshold")), "{rules:?}");
}

#[test]
fn warnings_are_not_errors() {
    let text = RUBRIC
        .replace("scoring:", "negative_criteria:\n  - name: vague\n    fail_patterns: [\"e.g.\"]\nscoring:");
    let rubric: Rubric = serde_yaml::from_str(&text).unwrap();
    let issues = validate(&rubric);
    assert_eq!(issues.len(), 1);
    assert_eq!((issues[0].rule, issues[0].severity), (Rule::Pattern, LintSeverity::Warning));
}

const FOCUS: &str = "focus_areas:
  - name: Security
    description: Leaks and injections.
    checks: [Queries use parameters.]
    red_flags:
      - {id: sql_injection, description: SQL built from input.}
      - {id: sql_injection, description: The same id again.}
  - name: security
    description: The same area again.
    checks: ['  ']
    red_flags:
      - {id: sql_injection, description: In another area.}
      - {id: Bad-Id, description: Not snake case.}
scoring:";

#[test]
fn focus_areas_round_trip_are_found_regardless_of_case_and_are_validated() {
    let text = RUBRIC.replace("scoring:", FOCUS);
    let rubric: Rubric = serde_yaml::from_str(&text).unwrap();
    let json = serde_json::to_string(&rubric).unwrap();
    assert_eq!(serde_json::from_str::<Rubric>(&json).unwrap(), rubric);
    assert_eq!(
        rubric.focus_area(" SECURITY ").map(|a| a.description.as_str()),
        Some("Leaks and injections.")
    );
    assert_eq!(rubric.red_flag("sql_injection").map(|(area, _)| area.name.as_str()), Some("Security"));
    assert!(rubric.red_flag("xss").is_none());

    let found: Vec<(Rule, String)> = validate(&rubric).into_iter().map(|i| (i.rule, i.pointer)).collect();
    assert_eq!(
        found,
        [
            (Rule::Focus, "/focus_areas/0/red_flags/1/id".to_owned()),
            (Rule::Focus, "/focus_areas/1/name".to_owned()),
            (Rule::Schema, "/focus_areas/1/checks/0".to_owned()),
            (Rule::Focus, "/focus_areas/1/red_flags/0/id".to_owned()),
            (Rule::Schema, "/focus_areas/1/red_flags/1/id".to_owned()),
        ]
    );
    // A rubric without focus areas writes none.
    let plain: Rubric = serde_yaml::from_str(RUBRIC).unwrap();
    assert!(!serde_json::to_string(&plain).unwrap().contains("focus_areas"));
}

#[test]
fn the_schema_describes_focus_areas() {
    let schema = json_schema();
    let text = serde_json::to_string(&schema).unwrap();
    for needle in ["focus_areas", "red_flags", "^[A-Za-z][A-Za-z0-9_-]*$"] {
        assert!(text.contains(needle), "schema lacks {needle}");
    }
}

#[test]
fn rule_ids_are_stable_and_unique() {
    let ids: Vec<&str> = Rule::ALL.iter().map(|r| r.id()).collect();
    let mut unique = ids.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), ids.len());
    assert_eq!(Rule::from_id("rl-05"), Some(Rule::Threshold));
    assert_eq!(Rule::from_id("RL-08"), Some(Rule::DuplicateId));
    assert_eq!(Rule::from_id("RL-99"), None);
    assert_eq!(Rule::from_id("focus"), Some(Rule::Focus));
}

proptest! {
    #[test]
    fn anchor_keys_parse_or_fail_cleanly(text in "\\PC{0,12}") {
        if let Ok(key) = AnchorKey::parse(&text) {
            let points = key.points();
            prop_assert!(points.start() <= points.end());
            prop_assert_eq!(AnchorKey::parse(&key.to_string()), Ok(key));
        }
    }

    #[test]
    fn bands_round_trip(low in 0u32..1000, span in 0u32..1000) {
        let high = low + span;
        let key = AnchorKey::parse(&format!("{low}-{high}")).unwrap();
        prop_assert_eq!(key.points(), low..=high);
    }

    #[test]
    fn small_parsers_never_panic(text in "\\PC{0,40}") {
        let _ = version_problem(&text);
        let _ = uri_reference_problem(&text);
        if let Some(at) = literal_dot_warning(&text) {
            prop_assert_eq!(text.as_bytes()[at], b'.');
        }
    }

    #[test]
    fn valid_versions_have_no_problem(a in 0u32..1000, b in 0u32..1000, c in 0u32..1000) {
        let version = format!("{a}.{b}.{c}");
        prop_assert!(version_problem(&version).is_none());
    }
}

#[test]
fn the_prompt_text_lists_every_criterion_with_its_anchors_and_examples_only_when_asked() {
    let rubric: Rubric = serde_yaml::from_str(RUBRIC).unwrap();
    let with = rubric.prompt_text(true);
    let without = rubric.prompt_text(false);
    assert!(with.starts_with(&format!("RUBRIC {} ({})", rubric.rubric_id, rubric.name)), "{with}");
    for criterion in &rubric.criteria {
        assert!(without.contains(&format!("CRITERION {}: ", criterion.name)), "{without}");
        for (key, anchor) in criterion.anchors.iter() {
            assert!(without.contains(&format!("  anchor {key}: {}", anchor.trim())), "{without}");
        }
        for (key, example) in criterion.examples.iter() {
            let line = format!("  example {key}: {}", example.trim());
            assert!(with.contains(&line) && !without.contains(&line), "{line}");
        }
    }
}
