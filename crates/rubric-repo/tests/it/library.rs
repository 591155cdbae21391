//! The shipped rubric library: it loads clean, carries the numbers the scoring contract
//! depends on, and supports lookup, search, telemetry and calibration data.

use revcal_rubric_model::{Weight, validate};
use revcal_rubric_repo::{Query, Repository, criterion_correlations};
use std::collections::BTreeMap;
use std::path::PathBuf;

fn rubrics_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../rubrics"))
}

fn library() -> Repository {
    Repository::load(rubrics_dir()).expect("the shipped library loads")
}

#[test]
fn four_rubrics_load_without_warnings() {
    let repo = library();
    let ids: Vec<String> = repo.list().iter().map(|r| r.rubric_id.clone()).collect();
    assert_eq!(ids, ["code_review_v1", "prd_quality_v1", "test_plan_quality_v1", "user_story_quality_v1"]);
    assert!(repo.warnings().is_empty(), "{:#?}", repo.warnings());
    for rubric in repo.list() {
        assert!(validate(&rubric).is_empty(), "{}", rubric.rubric_id);
    }
}

#[test]
fn every_shipped_file_declares_the_schema_for_editors() {
    for entry in std::fs::read_dir(rubrics_dir()).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "yaml") {
            let text = std::fs::read_to_string(&path).unwrap();
            assert!(
                text.starts_with("# yaml-language-server: $schema=./schema.json\n"),
                "{} lacks the schema comment",
                path.display()
            );
        }
    }
}

#[test]
fn code_review_v1_carries_the_scoring_contract() {
    let rubric = library().get("code_review_v1").unwrap();
    assert_eq!((rubric.scale.min, rubric.scale.max), (1, 10));
    let criteria: Vec<(&str, f64, Weight, f64)> =
        rubric.criteria.iter().map(|c| (c.name.as_str(), c.share.unwrap(), c.weight, c.threshold)).collect();
    assert_eq!(
        criteria,
        [
            ("accuracy", 0.35, Weight::Essential, 7.0),
            ("completeness", 0.20, Weight::Important, 5.0),
            ("clarity", 0.20, Weight::Important, 5.0),
            ("conciseness", 0.15, Weight::Important, 5.0),
            ("relevance", 0.10, Weight::Important, 5.0),
        ]
    );
    let ceilings: Vec<(&str, f64, f64)> =
        rubric.ceilings.iter().map(|c| (c.criterion.as_str(), c.below, c.cap)).collect();
    assert_eq!(ceilings, [("accuracy", 5.0, 4.0), ("accuracy", 7.0, 7.0)]);
    assert_eq!(rubric.scoring.pass_threshold, 7.0);
    assert_eq!(rubric.scoring.confidence_threshold, 0.7);
    assert_eq!(rubric.scoring.essential_minimum, None);
    for criterion in &rubric.criteria {
        let keys: Vec<&str> = criterion.anchors.iter().map(|(k, _)| k).collect();
        assert_eq!(keys, ["9-10", "7-8", "5-6", "3-4", "1-2"], "{}", criterion.name);
    }
}

#[test]
fn the_other_rubrics_have_the_specified_criteria() {
    let repo = library();
    let names =
        |id: &str| -> Vec<String> { repo.get(id).unwrap().criteria.iter().map(|c| c.name.clone()).collect() };
    assert_eq!(
        names("user_story_quality_v1"),
        ["clarity", "specificity", "scope", "testability", "independence"]
    );
    assert_eq!(names("test_plan_quality_v1"), ["coverage", "reproducibility", "completeness", "isolation"]);
    assert_eq!(
        names("prd_quality_v1"),
        ["problem_definition", "success_metrics", "scope_boundaries", "technical_feasibility", "user_impact"]
    );
    let story = repo.get("user_story_quality_v1").unwrap();
    assert_eq!(story.artifact_type, "jira_tickets");
    let vague = story.negative_criteria.iter().find(|n| n.name == "no_vague_language").unwrap();
    let matchers = vague.matchers().unwrap();
    assert!(matchers.iter().any(|m| m.is_match("Support CSV, XLSX and so on.")));
    assert!(matchers.iter().any(|m| m.is_match("Supports CSV, ETC.")));
    assert!(!matchers.iter().any(|m| m.is_match("Supports CSV exports for each account")));
}

#[test]
fn search_by_artifact_type_and_text() {
    let repo = library();
    let ids =
        |query: Query| -> Vec<String> { repo.search(&query).iter().map(|r| r.rubric_id.clone()).collect() };
    assert_eq!(ids(Query::artifact_type("jira_tickets")), ["user_story_quality_v1"]);
    assert_eq!(ids(Query::artifact_type("prd")), ["prd_quality_v1"]);
    assert!(ids(Query::artifact_type("nothing_like_this")).is_empty());
    assert_eq!(ids(Query::text("CODE review")), ["code_review_v1"]);
    assert_eq!(ids(Query::text("test plan")), ["test_plan_quality_v1"]);
    let both = Query { artifact_type: Some("prd".into()), text: Some("user story".into()) };
    assert!(ids(both).is_empty());
}

#[test]
fn telemetry_counts_uses_misses_and_latency() {
    let repo = library();
    for _ in 0..3 {
        repo.get("code_review_v1").unwrap();
    }
    repo.get("prd_quality_v1").unwrap();
    assert!(repo.get("no_such_rubric").is_none());
    let stats = repo.stats();
    assert_eq!((stats.rubrics, stats.lookups, stats.misses), (4, 5, 1));
    assert_eq!(stats.usage["code_review_v1"], 3);
    assert_eq!(stats.usage["prd_quality_v1"], 1);
    assert_eq!(stats.usage["test_plan_quality_v1"], 0);
    assert_eq!(stats.latency.buckets.iter().map(|(_, n)| n).sum::<u64>(), 5);
    assert!(stats.latency.p99_ns.is_some());
}

#[test]
fn gets_share_one_rubric_across_threads() {
    let repo = library();
    let first = repo.get("code_review_v1").unwrap();
    std::thread::scope(|scope| {
        for _ in 0..4 {
            scope.spawn(|| {
                for _ in 0..1000 {
                    assert!(std::sync::Arc::ptr_eq(&repo.get("code_review_v1").unwrap(), &first));
                }
            });
        }
    });
    assert_eq!(repo.stats().usage["code_review_v1"], 4001);
}

#[test]
fn the_user_story_calibration_dataset_loads_and_fits_its_rubric() {
    let repo = library();
    let examples = repo.calibration_dataset("user_story_quality_v1").unwrap();
    assert!(examples.len() >= 10, "{} examples", examples.len());
    let rubric = repo.get("user_story_quality_v1").unwrap();
    for example in &examples {
        assert_eq!(example.scores.len(), rubric.criteria.len(), "line {}", example.line);
        assert!(!example.artifact.trim().is_empty());
    }
    // Labels must spread across the scale, or no judge could be checked against them.
    let clarity: Vec<f64> = examples.iter().map(|e| e.scores["clarity"]).collect();
    assert!(clarity.contains(&1.0) && clarity.contains(&5.0), "{clarity:?}");

    // A judge that agrees on the order of artifacts correlates perfectly even when it is
    // harsher by one point; one that reverses the order correlates at -1.
    let harsher: Vec<BTreeMap<String, f64>> =
        examples.iter().map(|e| e.scores.iter().map(|(k, v)| (k.clone(), v - 1.0)).collect()).collect();
    let correlations = criterion_correlations(&examples, &harsher).unwrap();
    assert_eq!(correlations.len(), 5);
    for (criterion, rho) in &correlations {
        assert!((rho.as_ref().unwrap() - 1.0).abs() < 1e-12, "{criterion}: {rho:?}");
    }
    let reversed: Vec<BTreeMap<String, f64>> =
        examples.iter().map(|e| e.scores.iter().map(|(k, v)| (k.clone(), 6.0 - v)).collect()).collect();
    let correlations = criterion_correlations(&examples, &reversed).unwrap();
    assert!((correlations["clarity"].as_ref().unwrap() + 1.0).abs() < 1e-12);

    let missing = repo.calibration_dataset("code_review_v1").unwrap_err().to_string();
    assert!(missing.contains("no calibration_dataset"), "{missing}");
}
