//! JUnit XML: one test case per plant, for CI systems that display test results.

use std::fmt::Write;

use crate::escape::markup;
use crate::{PlantStatus, Report};

/// JUnit XML with one test case per plant: caught passes, missed fails, excluded is skipped.
/// Suite properties carry the headline numbers. Every piece of text is escaped.
pub fn render_junit(report: &Report) -> String {
    let tests = report.plants.len();
    let failures = report.plants.iter().filter(|p| p.status == PlantStatus::Missed).count();
    let skipped = report.plants.iter().filter(|p| p.status == PlantStatus::Excluded).count();
    let suite = markup(&format!("revcal calibrate ({}, scorer {})", report.commit, report.scorer));
    let counts = format!(r#"tests="{tests}" failures="{failures}" errors="0" skipped="{skipped}""#);

    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(xml, r#"<testsuites name="revcal calibrate" {counts}>"#);
    let _ = writeln!(xml, r#"  <testsuite name="{suite}" {counts}>"#);
    let _ = writeln!(xml, "    <properties>");
    let optional = |value: Option<f64>| value.map_or_else(|| "null".to_string(), |v| v.to_string());
    let mut properties = vec![
        ("recall", report.recall.to_string()),
        ("precision", optional(report.precision)),
        ("minRecall", report.min_recall.to_string()),
        ("minPrecision", optional(report.min_precision)),
        ("gatePass", report.gate_pass.to_string()),
        ("trustworthy", report.trustworthy.to_string()),
        ("equivalentExcluded", report.equivalent_excluded.to_string()),
        ("runawayExcluded", report.runaway_excluded.to_string()),
        ("buildExcluded", report.build_excluded.to_string()),
        ("caughtByTimeout", report.caught_by_timeout.to_string()),
    ];
    if report.clean_rounds.is_some() {
        properties.push(("falseAlarmRate", optional(report.false_alarm_rate)));
        properties.push(("falseAlarms", report.false_alarms.unwrap_or(0).to_string()));
        properties.push(("cleanReviews", report.clean_reviews.unwrap_or(0).to_string()));
    }
    for (name, value) in properties {
        let _ = writeln!(xml, r#"      <property name="{name}" value="{}"/>"#, markup(&value));
    }
    let _ = writeln!(xml, "    </properties>");
    for plant in &report.plants {
        let classname = markup(&format!("calibrate.{}", plant.category));
        let entry = plant.entry.as_deref().map(|e| format!("{e}: ")).unwrap_or_default();
        let name = markup(&format!("{entry}{}:{} {}", plant.file, plant.line, plant.operator));
        let _ = write!(xml, r#"    <testcase classname="{classname}" name="{name}""#);
        let defect = plant.defect.clone().unwrap_or_else(|| {
            format!("{} plant ({}) at {}:{}", plant.category, plant.operator, plant.file, plant.line)
        });
        match plant.status {
            PlantStatus::Caught => {
                let _ = writeln!(xml, ">");
                let caught_by = plant.caught_by.as_deref().unwrap_or_default();
                let _ = writeln!(xml, "      <system-out>caught by: {}</system-out>", markup(caught_by));
            }
            PlantStatus::Missed => {
                let _ = writeln!(xml, ">");
                let message = markup(&format!("missed: {defect}"));
                let _ = writeln!(
                    xml,
                    r#"      <failure type="missed" message="{message}">{}</failure>"#,
                    markup(&plant.diff)
                );
            }
            PlantStatus::Excluded => {
                let _ = writeln!(xml, ">");
                // `runaway: ...` or `build: ...`; without a reason, an equivalent mutant.
                let message = plant
                    .excluded_reason
                    .as_deref()
                    .map_or_else(|| "equivalent mutant: its witness did not discriminate".to_owned(), markup);
                let _ = writeln!(xml, r#"      <skipped message="{message}"/>"#);
            }
        }
        let _ = writeln!(xml, "    </testcase>");
    }
    let _ = writeln!(xml, "  </testsuite>");
    let _ = writeln!(xml, "</testsuites>");
    xml
}
