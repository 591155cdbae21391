//! Scoring benchmarks. No speed target is set for scoring (docs/ARCHITECTURE.md#speed); these show what a review costs,
//! next to a baseline, so a regression shows as a ratio:
//!
//! - `parse`: reading the FAIL review of docs/scoring.md#33-fail-the-reference-example with positions for every field, next to
//!   `serde_json::from_str::<Value>` of the same text (no positions, no checks);
//! - `score`: scoring it against `code_review_v1` (weights, ceilings, reasons);
//! - `council`: a council of 5 such reviews.
//!
//! Run: `cargo bench -p revcal-score --bench score`.

use criterion::Criterion;
use revcal_rubric_model::Rubric;
use revcal_score::{Review, Reviews, Scorer, parse_document};
use std::hint::black_box;
use std::time::Instant;

const REVIEW: &str = include_str!("../../../examples/reviews/spec_4_3_fail.json");

fn rubric() -> Rubric {
    let text = include_str!("../../../rubrics/code_review_v1.yaml");
    serde_yaml::from_str(text).expect("the shipped rubric parses")
}

fn review() -> Review {
    match parse_document(REVIEW, None).expect("the example parses").reviews {
        Reviews::Single(review) => review,
        Reviews::Council(_) => unreachable!("one review"),
    }
}

/// Mean time per call over `runs` calls, in microseconds.
fn mean_micros(runs: u32, mut f: impl FnMut()) -> f64 {
    let start = Instant::now();
    for _ in 0..runs {
        f();
    }
    start.elapsed().as_secs_f64() * 1e6 / f64::from(runs)
}

fn benches(c: &mut Criterion) {
    let rubric = rubric();
    let scorer = Scorer::new(&rubric).expect("patterns compile");
    let review = review();
    let council: Vec<Review> = (0..5).map(|_| review.clone()).collect();

    c.bench_function("parse review (positions)", |b| b.iter(|| parse_document(black_box(REVIEW), None)));
    c.bench_function("parse review (serde_json::Value)", |b| {
        b.iter(|| serde_json::from_str::<serde_json::Value>(black_box(REVIEW)))
    });
    c.bench_function("score review", |b| b.iter(|| scorer.score(black_box(&review), None)));
    c.bench_function("score council of 5", |b| b.iter(|| scorer.score_council(black_box(&council), None)));

    // Side by side in one run, so a noisy machine does not skew the ratio.
    let runs = 20_000;
    let ours = mean_micros(runs, || drop(black_box(parse_document(REVIEW, None))));
    let baseline = mean_micros(runs, || drop(black_box(serde_json::from_str::<serde_json::Value>(REVIEW))));
    let score = mean_micros(runs, || drop(black_box(scorer.score(&review, None))));
    let five = mean_micros(runs / 5, || drop(black_box(scorer.score_council(&council, None))));
    println!(
        "\nparse with positions {ours:.2} us vs serde_json::Value {baseline:.2} us: {:.1}x; \
         score {score:.2} us; council of 5 {five:.2} us",
        ours / baseline
    );
}

/// Runs the benchmarks and prints Criterion's summary: what `criterion_group!` and
/// `criterion_main!` generate, written out because the function they generate has no
/// documentation.
fn main() {
    let mut criterion = Criterion::default().configure_from_args();
    benches(&mut criterion);
    criterion.final_summary();
}
