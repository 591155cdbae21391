//! Properties of the scoring algorithm over generated rubrics and reviews, and of the
//! review parser over arbitrary input.

use proptest::prelude::*;
use revcal_rubric_model::{Ceiling, Rubric, Scale};
use revcal_score::{Issue, Review, Scorer, Severity, Verdict, parse_document};

fn base() -> Rubric {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../rubrics/code_review_v1.yaml");
    serde_yaml::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// A rubric and a review that fits it: a scale, 1..6 criteria with or without shares,
/// thresholds, up to three ceilings, a pass threshold, and scores on the scale.
#[derive(Debug, Clone)]
struct Case {
    rubric: Rubric,
    review: Review,
}

fn case() -> impl Strategy<Value = Case> {
    (0u32..3, 1u32..10, 1usize..7, any::<bool>())
        .prop_flat_map(|(min, span, count, shared)| {
            let max = min + span;
            let point = move || f64::from(min)..=f64::from(max);
            (
                Just((min, max, shared)),
                prop::collection::vec((point(), point(), 0.05f64..1.0), count),
                prop::collection::vec((0..count, point(), point()), 0..4),
                point(),
                prop::option::of(point()),
                prop::option::of(0.0f64..=1.0),
            )
        })
        .prop_map(|((min, max, shared), criteria, ceilings, pass, essential_minimum, confidence)| {
            let template = base();
            let mut rubric = template.clone();
            rubric.scale = Scale { min, max };
            let total: f64 = criteria.iter().map(|(_, _, share)| share).sum();
            rubric.criteria = criteria
                .iter()
                .enumerate()
                .map(|(index, (threshold, _, share))| {
                    let mut criterion = template.criteria[index % template.criteria.len()].clone();
                    criterion.name = format!("c{index}");
                    criterion.threshold = *threshold;
                    criterion.share = shared.then_some(share / total);
                    criterion
                })
                .collect();
            rubric.ceilings = ceilings
                .into_iter()
                .map(|(index, below, cap)| Ceiling { criterion: format!("c{index}"), below, cap })
                .collect();
            rubric.scoring.pass_threshold = pass;
            rubric.scoring.essential_minimum = essential_minimum;
            let review = Review {
                rubric_scores: criteria
                    .iter()
                    .enumerate()
                    .map(|(index, (_, score, _))| (format!("c{index}"), *score))
                    .collect(),
                confidence,
                ..Review::default()
            };
            Case { rubric, review }
        })
}

fn severity() -> impl Strategy<Value = Severity> {
    prop_oneof![
        Just(Severity::Critical),
        Just(Severity::Major),
        Just(Severity::Minor),
        Just(Severity::Missing),
        "[a-z]{1,8}".prop_map(|text| Severity::parse(Some(&text))),
    ]
}

fn issues() -> impl Strategy<Value = Vec<Issue>> {
    prop::collection::vec(
        (
            severity(),
            prop::option::of(1u64..60),
            prop::option::of("[ab]\\.rs"),
            prop::option::of("bug|style"),
        ),
        0..5,
    )
    .prop_map(|raw| {
        raw.into_iter()
            .map(|(severity, line, file, category)| Issue {
                line,
                file,
                category,
                ..Issue::new(severity, "finding")
            })
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn the_final_score_never_exceeds_the_weighted_score(case in case()) {
        let evaluation = Scorer::new(&case.rubric).unwrap().score(&case.review, None).unwrap();
        prop_assert!(evaluation.final_score <= evaluation.weighted_score);
        let lowest_cap = evaluation.ceilings_applied.iter().map(|c| c.cap).fold(f64::INFINITY, f64::min);
        prop_assert_eq!(evaluation.final_score, evaluation.weighted_score.min(lowest_cap));
    }

    #[test]
    fn raising_one_score_never_lowers_the_final_score(case in case(), pick in any::<prop::sample::Index>(), steps in 1u32..10) {
        let scorer = Scorer::new(&case.rubric).unwrap();
        let before = scorer.score(&case.review, None).unwrap();
        let names: Vec<String> = case.review.rubric_scores.keys().cloned().collect();
        let name = pick.get(&names);
        let mut raised = case.review.clone();
        let score = raised.rubric_scores[name];
        let new_score = (score + f64::from(steps)).min(f64::from(case.rubric.scale.max));
        raised.rubric_scores.insert(name.clone(), new_score);
        let after = scorer.score(&raised, None).unwrap();
        prop_assert!(after.final_score >= before.final_score, "{} -> {}", before.final_score, after.final_score);
        prop_assert!(after.weighted_score >= before.weighted_score);
    }

    #[test]
    fn no_evaluation_with_a_blocking_issue_passes(case in case(), issues in issues()) {
        let mut review = case.review.clone();
        review.issues = issues;
        let blocking = review.issues.iter().any(|issue| issue.severity.is_blocking());
        let evaluation = Scorer::new(&case.rubric).unwrap().score(&review, None).unwrap();
        prop_assert_eq!(evaluation.blocking_issues.len(), review.issues.iter().filter(|i| i.severity.is_blocking()).count());
        if blocking {
            prop_assert_eq!(evaluation.verdict(), Verdict::Fail);
        }
        if evaluation.verdict() == Verdict::Pass {
            prop_assert!(evaluation.blocking_issues.is_empty());
        }
    }

    #[test]
    fn a_council_of_one_is_the_single_review(case in case(), issues in issues(), rationale in prop::option::of(".{0,20}")) {
        let mut review = case.review.clone();
        review.issues = issues;
        review.rationale = rationale;
        let scorer = Scorer::new(&case.rubric).unwrap();
        let single = scorer.score(&review, Some("artifact text")).unwrap();
        let council = scorer.score_council(std::slice::from_ref(&review), Some("artifact text")).unwrap();
        prop_assert_eq!(council.agreement, 1.0);
        prop_assert_eq!(&council.members[0], &single);
        let mut combined = council.combined.clone();
        for issue in combined.blocking_issues.iter_mut().chain(combined.suggestions.iter_mut()) {
            prop_assert_eq!(issue.raised_by, Some(1));
            issue.raised_by = None;
        }
        prop_assert_eq!(combined, single);
    }

    #[test]
    fn a_red_flag_fails_exactly_when_its_area_is_in_focus(
        case in case(),
        area in 0usize..3,
        other in 0usize..3,
        flag in any::<prop::sample::Index>(),
    ) {
        let scorer = Scorer::new(&case.rubric).unwrap();
        let plain = scorer.score(&case.review, None).unwrap();
        let focused = &case.rubric.focus_areas[area];
        let raised = &case.rubric.focus_areas[other];
        let mut review = case.review.clone();
        // Focus names are case-insensitive.
        review.rubric_focus = vec![focused.name.to_uppercase()];
        review.red_flags = vec![flag.get(&raised.red_flags).id.clone()];
        let evaluation = scorer.score(&review, None).unwrap();
        // Red flags change no number, and are always listed.
        prop_assert_eq!(evaluation.final_score, plain.final_score);
        prop_assert_eq!(&evaluation.unclear_reasons, &plain.unclear_reasons);
        prop_assert_eq!(evaluation.red_flags.len(), 1);
        if area == other {
            prop_assert_eq!(evaluation.verdict(), Verdict::Fail);
            prop_assert_eq!(evaluation.fail_reasons.len(), plain.fail_reasons.len() + 1);
        } else {
            prop_assert_eq!(evaluation.verdict(), plain.verdict());
            prop_assert_eq!(&evaluation.fail_reasons, &plain.fail_reasons);
        }
    }

    #[test]
    fn the_parser_never_panics_on_arbitrary_text(text in ".{0,200}") {
        let _ = parse_document(&text, None);
    }

    #[test]
    fn the_parser_never_panics_on_review_shaped_noise(
        keys in prop::collection::vec("rubric_scores|confidence|issues|suggestions|severity|line|location|message|rubric_focus|red_flags|red_flag|id|[a-z]{1,5}", 0..8),
        values in prop::collection::vec(r#"-?[0-9]{1,3}(\.[0-9])?|"[a-z:0-9.]{0,8}"|null|true|\[\]|\{\}|\[\{"line": ?-?[0-9]\}\]"#, 0..8),
    ) {
        let body: Vec<String> = keys.iter().zip(&values).map(|(k, v)| format!("\"{k}\": {v}")).collect();
        let text = format!("{{{}}}", body.join(", "));
        let _ = parse_document(&text, None);
        let council = format!("[{text}, {text}]");
        let _ = parse_document(&council, None);
        let yaml: Vec<String> = keys.iter().zip(&values).map(|(k, v)| format!("{k}: {v}")).collect();
        let _ = parse_document(&yaml.join("\n"), None);
    }
}
