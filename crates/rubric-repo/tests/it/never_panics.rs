//! Property tests: no input makes the loader panic, and every diagnostic it gives points
//! inside the document.

use crate::util::SAMPLE;
use proptest::prelude::*;
use revcal_rubric_repo::{LintReport, Linter};
use std::sync::OnceLock;

fn linter() -> &'static Linter {
    static LINTER: OnceLock<Linter> = OnceLock::new();
    LINTER.get_or_init(|| Linter::new().expect("schema compiles"))
}

fn assert_positions_inside(report: &LintReport, text: &str) {
    let lines = text.lines().count().max(1) + 1;
    for d in &report.diagnostics {
        assert!(d.line >= 1 && d.column >= 1, "{d:#?}");
        assert!(d.line <= lines, "line {} beyond {lines} lines: {d:#?}", d.line);
        assert!(!d.message.is_empty());
    }
}

/// YAML built from the format's own field names, so that generated documents reach the
/// schema and semantic checks rather than stopping at syntax.
fn yamlish() -> impl Strategy<Value = String> {
    let key = prop::sample::select(vec![
        "rubric_id",
        "name",
        "version",
        "artifact_type",
        "scale",
        "min",
        "max",
        "criteria",
        "weight",
        "share",
        "threshold",
        "anchors",
        "examples",
        "score_1",
        "score_5",
        "1",
        "2-4",
        "5",
        "negative_criteria",
        "fail_patterns",
        "literal",
        "ceilings",
        "criterion",
        "below",
        "cap",
        "scoring",
        "pass_threshold",
        "essential_minimum",
        "confidence_threshold",
        "calibration_dataset",
        "description",
    ]);
    let scalar = prop_oneof![
        Just("essential".to_owned()),
        Just("1.0.0".to_owned()),
        Just("'(['".to_owned()),
        Just("etc.".to_owned()),
        Just("~".to_owned()),
        Just(".nan".to_owned()),
        any::<i64>().prop_map(|n| n.to_string()),
        any::<f64>().prop_map(|n| n.to_string()),
        "[a-z_ ]{0,12}",
    ];
    let leaf = scalar.prop_map(|s| format!(" {s}\n"));
    leaf.prop_recursive(5, 64, 6, move |inner| {
        prop_oneof![
            prop::collection::vec((key.clone(), inner.clone()), 1..6).prop_map(|entries| {
                let body: String = entries.iter().map(|(k, v)| format!("{k}:{v}")).collect();
                format!("\n{}", indent_block(&body))
            }),
            prop::collection::vec(inner, 1..4).prop_map(|items| {
                let body: String = items.iter().map(|v| format!("-{v}")).collect();
                format!("\n{}", indent_block(&body))
            }),
        ]
    })
    .prop_map(|doc| format!("rubric_id:{doc}criteria:{}", "\n  - name: x\n"))
}

fn indent_block(body: &str) -> String {
    body.lines().map(|line| format!("  {line}\n")).collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..2048)) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("fuzz.yaml");
        std::fs::write(&path, &bytes).unwrap();
        let report = linter().lint_paths(&[path]).unwrap();
        let text = String::from_utf8_lossy(&bytes);
        assert_positions_inside(&report, &text);
    }

    #[test]
    fn arbitrary_text_never_panics(text in "\\PC{0,400}", json in any::<bool>()) {
        let name = if json { "fuzz.json" } else { "fuzz.yaml" };
        let report = linter().lint_sources(&[(name, text.as_str())]);
        assert_positions_inside(&report, &text);
    }

    #[test]
    fn arbitrary_yaml_never_panics(text in yamlish()) {
        let report = linter().lint_sources(&[("fuzz.yaml", text.as_str())]);
        assert_positions_inside(&report, &text);
    }

    #[test]
    fn mangled_rubrics_never_panic(
        edits in prop::collection::vec((0usize..64, prop::sample::select(vec!["", "  x: 1", "threshold: 99", "- name: y", "  ", "weight: [", "share: -1"])), 1..6)
    ) {
        let mut lines: Vec<String> = SAMPLE.lines().map(str::to_owned).collect();
        for (at, replacement) in edits {
            let at = at % lines.len();
            lines[at] = replacement.to_owned();
        }
        let text = lines.join("\n");
        let report = linter().lint_sources(&[("mangled.yaml", text.as_str())]);
        assert_positions_inside(&report, &text);
    }
}
