//! Scoring reviews through the library: one review, a council, an artifact checked against
//! a rubric's negative criteria, and an input error that names its field and position.
//!
//! Run: `cargo run -p revcal-examples --example score_review`

use revcal_rubric_repo::Repository;
use revcal_score::{Evaluation, Reviews, Scorer, format_score, parse_document};
use std::error::Error;
use std::path::Path;

fn main() -> Result<(), Box<dyn Error>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let repo = Repository::load(root.join("rubrics"))?;
    let reviews = root.join("examples/reviews");

    // Every number comes from the rubric file: shares, ceilings, thresholds.
    let code_review = repo.get("code_review_v1").ok_or("code_review_v1 is missing")?;
    let scorer = Scorer::new(&code_review)?;

    for file in ["pass.yaml", "unclear.json", "spec_4_3_fail.json"] {
        let text = std::fs::read_to_string(reviews.join(file))?;
        let document = parse_document(&text, None)?;
        let Reviews::Single(review) = &document.reviews else { return Err("expected one review".into()) };
        let evaluation = scorer.score(review, None)?;
        print_evaluation(file, &evaluation);
    }

    // The JSON report (docs/scoring.md), as `revcal score --json` prints it (first keys only).
    let text = std::fs::read_to_string(reviews.join("spec_4_3_fail.json"))?;
    let Reviews::Single(review) = parse_document(&text, None)?.reviews else {
        return Err("one review".into());
    };
    let report = serde_json::to_value(scorer.score(&review, None)?)?;
    for key in ["verdict", "weighted_score", "accuracy_ceiling_applied", "final_score"] {
        println!("  report.{key} = {}", report[key]);
    }

    // A council: per-criterion medians, merged issues, confidence discounted by disagreement.
    let text = std::fs::read_to_string(reviews.join("council.json"))?;
    let Reviews::Council(members) = parse_document(&text, None)?.reviews else {
        return Err("a council".into());
    };
    let council = scorer.score_council(&members, None)?;
    println!(
        "\ncouncil of {}: agreement {}, confidence {} x {} = {}",
        members.len(),
        format_score(council.agreement),
        council.mean_confidence.map(format_score).unwrap_or_default(),
        format_score(council.agreement),
        council.combined.confidence.map(format_score).unwrap_or_default(),
    );
    print_evaluation("council.json (combined)", &council.combined);

    // Another rubric, with negative criteria checked against the artifact's text.
    let stories = repo.get("user_story_quality_v1").ok_or("user_story_quality_v1 is missing")?;
    let story_scorer = Scorer::new(&stories)?;
    let text = std::fs::read_to_string(reviews.join("story_review.json"))?;
    let Reviews::Single(review) = parse_document(&text, None)?.reviews else {
        return Err("one review".into());
    };
    let story = std::fs::read_to_string(reviews.join("story.md"))?;
    print_evaluation("story_review.json + story.md", &story_scorer.score(&review, Some(&story))?);

    // Bad input is an error naming the field and its position, never a clamped score.
    let text = std::fs::read_to_string(reviews.join("out_of_scale.yaml"))?;
    let document = parse_document(&text, None)?;
    let Reviews::Single(review) = &document.reviews else { return Err("one review".into()) };
    let error = document.place(scorer.score(review, None).expect_err("11 is outside 1..10"));
    println!("\nout_of_scale.yaml is refused:");
    for problem in error.problems() {
        println!("  {problem}");
    }
    Ok(())
}

fn print_evaluation(name: &str, evaluation: &Evaluation) {
    println!(
        "\n{name}: weighted {}, final {}, {}",
        format_score(evaluation.weighted_score),
        format_score(evaluation.final_score),
        evaluation.verdict(),
    );
    for ceiling in &evaluation.ceilings_applied {
        println!(
            "  ceiling: {} below {} caps at {}",
            ceiling.criterion,
            ceiling.below,
            format_score(ceiling.cap)
        );
    }
    for reason in evaluation.deciding_reasons() {
        println!("  - {reason}");
    }
}
