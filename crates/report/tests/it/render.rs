//! The renderings of a report: the human summary's table, bars and warnings, JUnit XML with
//! one case per plant, a self-contained HTML page, and hostile text escaped in both.

use crate::fixtures::{gates, report, three_trials};
use revcal_report::CleanRounds;
use revcal_report::{BenchmarkFigures, group_score, group_scores};
use revcal_report::{FindingOutcome, Interval, Plant, Report, ScorerKind, TrialRecord};
use revcal_report::{render_html, render_human, render_junit};

#[test]
fn the_human_summary_has_the_table_bars_and_warnings() {
    let mut report = report();
    let plain = render_human(&report, false);
    assert!(!plain.contains('\x1b'), "no colour when asked for none");
    assert!(plain.contains("PASS"));
    assert!(plain.contains("recall     0.67  2/3 plants caught  (95% CI"), "{plain}");
    assert!(
        plain.contains("precision  0.67  2 true / 1 false positive findings (1.33 per plant)"),
        "precision counts findings, recall plants: {plain}"
    );
    let off_by_one = plain.lines().find(|l| l.trim_start().starts_with("off-by-one")).unwrap();
    assert!(
        off_by_one.contains("0.50")
            && off_by_one.contains(&"█".repeat(10))
            && off_by_one.contains(&"░".repeat(10))
    );
    assert!(plain.contains("missed   src/a.rs:40"), "{plain}");
    assert!(plain.contains("1 equivalent plant excluded"));
    assert!(plain.contains("commit 0123456789ab "), "long hashes are shortened: {plain}");
    assert!(!plain.contains("NOT trustworthy"));

    report.trustworthy = false;
    report.scorer = ScorerKind::String;
    report.gate_pass = false;
    let coloured = render_human(&report, true);
    assert!(coloured.contains("\x1b[31mFAIL\x1b[0m"));
    assert!(coloured.contains("NOT trustworthy"));
}

#[test]
fn the_human_summary_reports_each_trial_and_their_agreement() {
    let human = render_human(&three_trials(), false);
    assert!(human.contains("3 plants x 3 trials: 5/9 caught  (95% CI over 3 plants"), "{human}");
    assert!(human.contains("same outcome in every run for 33% of the plants"), "{human}");
}

/// A benchmark's groups are rendered with their plants and intervals, and read back from JSON.
#[test]
fn a_benchmarks_groups_are_rendered_with_their_intervals() {
    let mut report = report();
    report.benchmark = Some(BenchmarkFigures {
        name: "standard".into(),
        languages: vec!["go".into(), "python".into()],
        per_language: group_scores([
            ("python".to_owned(), 1, 1),
            ("python".to_owned(), 0, 1),
            ("go".to_owned(), 1, 1),
        ]),
        per_category: group_scores([("off-by-one".to_owned(), 2, 3)]),
        per_kind: group_scores([("real".to_owned(), 2, 3), ("synthetic".to_owned(), 0, 1)]),
        false_alarms: Some(group_score(4, 1, 4)),
        after: Some("2024-01-01".into()),
        fixed_before: Some(group_score(1, 1, 1)),
        fixed_after: Some(group_score(2, 1, 2)),
    });
    let human = render_human(&report, false);
    assert!(human.contains("benchmark standard       plants  caught  total  recall  95% CI"), "{human}");
    assert!(human.contains("language python               2       1      2    0.50  0.09-0.91"), "{human}");
    assert!(human.contains("fixed before 2024-01-01       1       1      1    1.00  0.21-1.00"), "{human}");
    assert!(human.contains("fixed from 2024-01-01"), "{human}");
    assert!(human.contains("false alarms                  4       1      4    0.25"), "{human}");
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["benchmark"]["perLanguage"]["go"]["plants"], 1);
    assert_eq!(json["benchmark"]["fixedAfter"]["total"], 2);
    let back: Report = serde_json::from_value(json).unwrap();
    assert_eq!(back, report);
    // Without a benchmark, no such block and no such key.
    report.benchmark = None;
    assert!(!render_human(&report, false).contains("benchmark"));
    assert!(serde_json::to_value(&report).unwrap().get("benchmark").is_none());
}

/// The false-alarm rate of clean rounds is shown beside recall and precision.
#[test]
fn the_false_alarm_rate_is_rendered_beside_recall_and_precision() {
    let mut report = report();
    report.clean_rounds = Some(CleanRounds { requested: 5, changes: 2, excluded: Vec::new() });
    report.false_alarms = Some(2);
    report.clean_reviews = Some(4);
    report.false_alarm_rate = Some(0.5);
    report.false_alarm_interval = Some(Interval { low: 0.1, high: 0.9 });
    let human = render_human(&report, false);
    assert!(human.contains("false alarms 0.50  2/4 clean reviews flagged (2 changes)  (95% CI"), "{human}");
    assert!(human.contains("5 asked for"), "{human}");
    let junit = render_junit(&report);
    assert!(junit.contains(r#"<property name="falseAlarmRate" value="0.5"/>"#), "{junit}");
    assert!(junit.contains(r#"<property name="falseAlarms" value="2"/>"#), "{junit}");
    assert!(render_html(&report).contains("False alarms"));
    assert!(!render_html(&crate::fixtures::report()).contains("False alarms"), "shown only when asked for");
}

#[test]
fn junit_has_one_case_per_plant_with_the_right_counts_and_escaping() {
    let mut report = report();
    report.plants[0].caught_by = Some("<b>bold</b> & \"quoted\" \u{1b}[31m".into());
    report.plants[1].category = "cat\"<&>".into();
    let xml = render_junit(&report);
    let document = roxmltree::Document::parse(&xml).unwrap_or_else(|e| panic!("{e}\n{xml}"));
    let suite = document.descendants().find(|n| n.has_tag_name("testsuite")).unwrap();
    assert_eq!(suite.attribute("tests"), Some("4"));
    assert_eq!(suite.attribute("failures"), Some("1"));
    assert_eq!(suite.attribute("skipped"), Some("1"));
    let cases: Vec<_> = document.descendants().filter(|n| n.has_tag_name("testcase")).collect();
    assert_eq!(cases.len(), 4);
    assert_eq!(cases.iter().filter(|c| c.children().any(|n| n.has_tag_name("failure"))).count(), 1);
    assert_eq!(cases.iter().filter(|c| c.children().any(|n| n.has_tag_name("skipped"))).count(), 1);
    assert_eq!(cases[1].attribute("classname"), Some("calibrate.cat\"<&>"), "attributes round-trip");
    assert_eq!(cases[0].attribute("name"), Some("src/a.rs:10 relational-boundary"));
    let out = cases[0].children().find(|n| n.has_tag_name("system-out")).unwrap().text().unwrap();
    assert_eq!(
        out, "caught by: <b>bold</b> & \"quoted\" \u{FFFD}[31m",
        "text round-trips, control characters replaced"
    );
    let failure = cases[1].children().find(|n| n.has_tag_name("failure")).unwrap();
    assert!(failure.text().unwrap().contains("+let end = start + 1;"));
    assert_eq!(failure.attribute("message"), Some("missed: cat\"<&> plant (plus-one) at src/a.rs:40"));
    let properties: Vec<_> = document.descendants().filter(|n| n.has_tag_name("property")).collect();
    assert!(
        properties
            .iter()
            .any(|p| p.attribute("name") == Some("gatePass") && p.attribute("value") == Some("true"))
    );
}

#[test]
fn html_is_self_contained_and_escapes_hostile_text() {
    let hostile = "<script>alert('x')</script>";
    let mut report = report();
    report.plants[0].caught_by = Some(format!("finding {hostile}"));
    report.plants[0].file = format!("src/{hostile}.rs");
    report.plants[1].defect = Some(hostile.into());
    report.plants[1].diff = format!("-{hostile}\n+\"><img src=x onerror=alert(1)>\n");
    report.commit = hostile.into();
    // The scorer is a ScorerKind: no hostile text can reach the page through it.
    report.scorer = ScorerKind::String;
    report.trustworthy = false;
    let mut categories = std::mem::take(&mut report.per_category);
    let score = categories.remove("off-by-one").unwrap();
    categories.insert(hostile.into(), score);
    report.per_category = categories;

    let html = render_html(&report);
    assert!(!html.contains("<script"), "unescaped script tag");
    assert!(!html.contains("<img"), "unescaped img tag");
    assert!(html.contains("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;"));
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert_eq!(html.matches("<section class=\"plant").count(), 4);
    assert_eq!(html.matches("<svg").count(), 1);
    assert_eq!(
        html.matches("<rect").count(),
        2 * report.per_category.len(),
        "a track and a bar per category"
    );
    assert!(html.contains("Caught by:"));
    let label_x: usize = html.split("<text x=\"").nth(1).unwrap().split('"').next().unwrap().parse().unwrap();
    assert!(label_x >= hostile.len() * 7, "the longest label fits left of the bars (x = {label_x})");
    assert!(html.contains("<span class=\"add\">+&quot;&gt;&lt;img"), "diff lines are classed and escaped");
    for external in ["<link", "src=\"http", "<script", "@import"] {
        assert!(!html.contains(external), "external resource {external}");
    }
}

#[test]
fn runaway_and_unbuildable_plants_are_named_so_in_junit_and_html_not_equivalent() {
    let plant = |line| Plant::new("src/lib.rs", line, "arithmetic", "op", "a + b", "a - b");
    let mut trial = TrialRecord::new(Some(0));
    trial.caught_by.insert(0, "wrong sum".into());
    trial.caught_by_timeout.insert(0);
    trial.findings = vec![FindingOutcome::TruePositive(0)];
    let report = Report::builder("c", ScorerKind::Repro, gates(0.5))
        .plant(plant(1))
        .runaway_plant(plant(2), "its witness ran past its time limit with the plant applied, twice")
        .unbuildable_plant(plant(3), "`cargo check` fails with the plant applied (exit code 101)")
        .excluded_plant(plant(4))
        .trial(trial)
        .build()
        .unwrap();
    let xml = render_junit(&report);
    assert_eq!(xml.matches("equivalent mutant").count(), 1, "{xml}");
    assert!(xml.contains(r#"<skipped message="runaway: its witness ran past its time limit"#), "{xml}");
    assert!(xml.contains(r#"<skipped message="build: `cargo check` fails"#), "{xml}");
    for property in
        ["runawayExcluded\" value=\"1", "buildExcluded\" value=\"1", "caughtByTimeout\" value=\"1"]
    {
        assert!(xml.contains(property), "{property}: {xml}");
    }
    let html = render_html(&report);
    assert_eq!(html.matches("an equivalent mutant").count(), 1, "{html}");
    assert!(html.contains("Excluded as a runaway: its witness ran past its time limit"), "{html}");
    assert!(html.contains("Excluded for breaking the build: `cargo check` fails"), "{html}");
    assert!(html.contains("Runaway plants excluded") && html.contains("Caught by timeout"), "{html}");
}
