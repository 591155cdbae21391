//! The rubric library from Rust: load it, look rubrics up, search, lint a broken rubric,
//! and check a judge against human-labelled calibration data.
//!
//! Run: `cargo run -p revcal-examples --example rubric_library`

use revcal_rubric_repo::{CORRELATION_TARGET, Linter, Query, Repository, calibration_correlation};
use std::error::Error;
use std::path::Path;

fn main() -> Result<(), Box<dyn Error>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");

    // Load: every file is checked; any error fails the load with the full report.
    let repo = Repository::load(root.join("rubrics"))?;
    println!("loaded {} rubrics", repo.len());

    // Look up by id: a hash lookup, cheap enough to call per review.
    let rubric = repo.get("code_review_v1").ok_or("code_review_v1 is missing")?;
    println!("\n{} ({}), scale {}..{}:", rubric.name, rubric.key(), rubric.scale.min, rubric.scale.max);
    for criterion in &rubric.criteria {
        println!(
            "  {:<13} {:?}, share {:.2}, threshold {}",
            criterion.name,
            criterion.weight,
            criterion.share.unwrap_or_default(),
            criterion.threshold
        );
    }

    // Search by artifact type and by text.
    for query in [Query::artifact_type("jira_tickets"), Query::text("test plan")] {
        let ids: Vec<String> = repo.search(&query).iter().map(|r| r.rubric_id.clone()).collect();
        println!("\nsearch {query:?}: {ids:?}");
    }

    // Lint: every problem in every file, each placed at file:line:col.
    let report = Linter::new()?.lint_paths(&[root.join("examples/broken")])?;
    println!("\nlint examples/broken: {} errors, {} warnings", report.error_count(), report.warning_count());
    for d in &report.diagnostics {
        let file = d.file.file_name().unwrap_or_default().to_string_lossy();
        println!("  {file}:{}:{} {}[{}] {}", d.line, d.column, d.severity, d.rule, d.message);
    }

    // Calibration: does a judge rank artifacts the way people do? Here the "judge" is a
    // model-free heuristic for testability: the more concrete acceptance criteria a story
    // has, the higher it scores.
    let examples = repo.calibration_dataset("user_story_quality_v1")?;
    let judge: Vec<f64> = examples.iter().map(|e| heuristic_testability(&e.artifact)).collect();
    let human: Vec<f64> = examples.iter().map(|e| e.scores["testability"]).collect();
    let rho = calibration_correlation(&judge, &human)?;
    let verdict = if rho >= CORRELATION_TARGET { "meets" } else { "misses" };
    println!(
        "\nheuristic testability judge vs {} human labels: Spearman {rho:.2} ({verdict} the {CORRELATION_TARGET} target)",
        examples.len()
    );

    // Telemetry: every `get` was counted and timed.
    let stats = repo.stats();
    println!("\nlookups: {}, code_review_v1 used {} time(s)", stats.lookups, stats.usage["code_review_v1"]);
    Ok(())
}

/// 1 + one point per acceptance criterion written as a checkable statement, up to 5.
fn heuristic_testability(story: &str) -> f64 {
    let checkable = story
        .lines()
        .map(str::trim)
        .filter(|line| {
            let lower = line.to_lowercase();
            lower.starts_with("ac") || lower.starts_with("given") || lower.contains(" then ")
        })
        .count();
    (1 + checkable).min(5) as f64
}
