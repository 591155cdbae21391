//! The acceptance cases of issue 3, against the shipped rubric files.

use revcal_rubric_model::Rubric;
use revcal_score::{
    Format, Issue, Reason, Review, Reviews, ScoreError, Scorer, Severity, Verdict, parse_document, score,
    score_council,
};

fn rubric(file: &str) -> Rubric {
    let path = format!("{}/../../rubrics/{file}", env!("CARGO_MANIFEST_DIR"));
    serde_yaml::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn code_review() -> Rubric {
    rubric("code_review_v1.yaml")
}

fn single(text: &str) -> Review {
    match parse_document(text, None).unwrap().reviews {
        Reviews::Single(review) => review,
        Reviews::Council(_) => panic!("expected one review"),
    }
}

fn all(score: f64, confidence: Option<f64>) -> Review {
    let names = ["accuracy", "completeness", "clarity", "conciseness", "relevance"];
    Review {
        rubric_scores: names.iter().map(|n| ((*n).to_owned(), score)).collect(),
        confidence,
        ..Review::default()
    }
}

const REFERENCE_FAIL: &str = r#"{"rubric_scores": {"accuracy": 6.5, "completeness": 7.0, "clarity": 8.5, "conciseness": 8.0, "relevance": 9.0},
 "confidence": 0.78,
 "issues": [{"severity": "major", "category": "bug", "file": "src/api.py", "line": 42,
             "message": "Missing null check before accessing user.email",
             "suggestion": "Add: if user is None: return None"}],
 "rationale": "..."}"#;

#[test]
fn the_spec_example_scores_7_475_capped_to_7_and_fails() {
    let evaluation = score(&code_review(), &single(REFERENCE_FAIL)).unwrap();
    assert_eq!(evaluation.weighted_score, 7.475);
    assert_eq!(evaluation.final_score, 7.0);
    assert!(evaluation.ceiling_applied());
    assert_eq!(evaluation.ceilings_applied.len(), 1);
    assert_eq!((evaluation.ceilings_applied[0].below, evaluation.ceilings_applied[0].cap), (7.0, 7.0));
    assert_eq!(evaluation.verdict(), Verdict::Fail);
    assert_eq!(evaluation.blocking_issues.len(), 1);
    assert_eq!(evaluation.blocking_issues[0].location().as_deref(), Some("src/api.py:42"));
    assert!(matches!(
        &evaluation.fail_reasons[..],
        [Reason::BlockingIssue { severity: Severity::Major, .. }]
    ));

    let json = serde_json::to_value(&evaluation).unwrap();
    let keys: Vec<&str> = json.as_object().unwrap().keys().map(String::as_str).take(13).collect();
    assert_eq!(
        keys,
        [
            "verdict",
            "confidence",
            "rubric",
            "rubric_scores",
            "weighted_score",
            "accuracy_ceiling_applied",
            "ceilings_applied",
            "final_score",
            "blocking_issues",
            "suggestions",
            "unclear_reasons",
            "rationale",
            "fail_reasons"
        ]
    );
    assert_eq!(json["verdict"], "fail");
    assert_eq!(json["rubric"], "code_review_v1@1.0.0");
    assert_eq!(json["weighted_score"], 7.475);
    assert_eq!(json["final_score"], 7.0);
    assert_eq!(json["accuracy_ceiling_applied"], true);
    assert_eq!(
        json["ceilings_applied"],
        serde_json::json!([{"criterion": "accuracy", "below": 7.0, "cap": 7.0}])
    );
    assert_eq!(json["unclear_reasons"], serde_json::json!([]));
    assert_eq!(json["blocking_issues"][0]["severity"], "major");
    assert_eq!(json["blocking_issues"][0]["line"], 42);
}

#[test]
fn low_accuracy_caps_at_4_and_is_unclear_for_two_named_reasons() {
    let mut review = all(9.0, Some(0.9));
    review.rubric_scores.insert("accuracy".into(), 4.0);
    let evaluation = score(&code_review(), &review).unwrap();
    assert_eq!(evaluation.weighted_score, 7.25); // 0.35 x 4 + 0.65 x 9
    assert_eq!(evaluation.final_score, 4.0, "the lowest cap wins");
    assert_eq!(evaluation.ceilings_applied.len(), 2);
    assert_eq!(evaluation.verdict(), Verdict::Unclear);
    let reasons: Vec<String> = evaluation.unclear_reasons.iter().map(ToString::to_string).collect();
    assert_eq!(
        reasons,
        ["final score 4.0 is below the pass threshold 7.0", "`accuracy` scored 4.0, below its threshold 7.0"]
    );
}

#[test]
fn a_minor_issue_is_a_suggestion_and_passes() {
    let mut review = all(9.0, Some(0.9));
    review.issues.push(Issue::new(Severity::parse(Some("minor")), "Rename tmp").at("a.rs", 3));
    let evaluation = score(&code_review(), &review).unwrap();
    assert_eq!(evaluation.verdict(), Verdict::Pass);
    assert_eq!(evaluation.suggestions.len(), 1);
    assert!(evaluation.blocking_issues.is_empty());
    assert!(evaluation.fail_reasons.is_empty() && evaluation.unclear_reasons.is_empty());
}

#[test]
fn nits_and_other_non_blocking_words_are_suggestions() {
    for word in ["nit", "NIT", "nitpick", "info", "trivial", "suggestion", "Style", "low"] {
        let mut review = all(9.0, Some(0.9));
        review.issues.push(Issue::new(Severity::parse(Some(word)), "Rename tmp").at("a.rs", 3));
        let evaluation = score(&code_review(), &review).unwrap();
        assert_eq!(evaluation.verdict(), Verdict::Pass, "{word}");
        assert_eq!(evaluation.suggestions.len(), 1, "{word}");
    }
    let mut review = all(9.0, Some(0.9));
    review.issues.push(Issue::new(Severity::parse(Some("nitty")), "Rename tmp"));
    assert_eq!(
        score(&code_review(), &review).unwrap().verdict(),
        Verdict::Fail,
        "an unknown word still blocks"
    );
}

#[test]
fn a_criterion_written_in_another_form_of_its_word_gets_a_suggestion() {
    let text = r#"{"rubric_scores": {"accuracy": 9, "completeness": 9, "clarity": 9, "concision": 9, "relevance": 9},
                  "confidence": 0.9}"#;
    let error = score(&code_review(), &single(text)).unwrap_err().to_string();
    assert!(
        error.contains("unknown criterion `concision`") && error.contains("did you mean `conciseness`?"),
        "{error}"
    );
}

#[test]
fn low_or_missing_confidence_is_unclear() {
    let low = score(&code_review(), &all(9.0, Some(0.5))).unwrap();
    assert_eq!(low.verdict(), Verdict::Unclear);
    assert_eq!(low.unclear_reasons, [Reason::ConfidenceLow { confidence: 0.5, threshold: 0.7 }]);
    assert!(low.unclear_reasons[0].to_string().starts_with("low confidence"));

    let missing = score(&code_review(), &all(9.0, None)).unwrap();
    assert_eq!(missing.verdict(), Verdict::Unclear);
    assert_eq!(missing.unclear_reasons, [Reason::ConfidenceMissing { threshold: 0.7 }]);
    assert!(missing.unclear_reasons[0].to_string().starts_with("missing confidence"));
}

#[test]
fn unknown_or_missing_severity_fails_closed() {
    for severity in ["\"weird\"", "null"] {
        let text = format!(
            r#"{{"rubric_scores": {{"accuracy": 9, "completeness": 9, "clarity": 9, "conciseness": 9, "relevance": 9}},
                "confidence": 0.9, "issues": [{{"severity": {severity}, "message": "Look here"}}]}}"#
        );
        let evaluation = score(&code_review(), &single(&text)).unwrap();
        assert_eq!(evaluation.verdict(), Verdict::Fail, "{severity}");
        assert_eq!(evaluation.blocking_issues.len(), 1);
    }
    let no_field = single(
        r#"{"rubric_scores": {"accuracy": 9, "completeness": 9, "clarity": 9, "conciseness": 9, "relevance": 9},
            "confidence": 0.9, "issues": [{"message": "No severity at all"}]}"#,
    );
    assert_eq!(score(&code_review(), &no_field).unwrap().verdict(), Verdict::Fail);
}

#[test]
fn blocking_issues_and_suggestions_arrays_and_locations_are_accepted() {
    let review = single(
        "rubric_scores: {accuracy: 9, completeness: 9, clarity: 9, conciseness: 9, relevance: 9}\n\
         confidence: 0.9\n\
         blocking_issues:\n  - {location: \"src/db.rs:88\", message: SQL built by format!}\n\
         suggestions:\n  - {location: \"src/db.rs:12\", message: Name the constant}\n",
    );
    let evaluation = score(&code_review(), &review).unwrap();
    assert_eq!(evaluation.verdict(), Verdict::Fail);
    assert_eq!(evaluation.blocking_issues[0].file.as_deref(), Some("src/db.rs"));
    assert_eq!(evaluation.blocking_issues[0].line, Some(88));
    assert_eq!(evaluation.suggestions[0].severity, Severity::Minor);
    assert_eq!(evaluation.suggestions[0].line, Some(12));
}

#[test]
fn scores_outside_the_scale_and_wrong_criteria_are_errors_that_name_them() {
    let mut eleven = all(9.0, Some(0.9));
    eleven.rubric_scores.insert("clarity".into(), 11.0);
    let error = score(&code_review(), &eleven).unwrap_err();
    assert_eq!(error.problems().len(), 1);
    assert_eq!(error.problems()[0].field, "rubric_scores.clarity");
    let message = error.to_string();
    assert!(message.contains("score 11") && message.contains("1..10"), "{message}");

    let mut missing = all(9.0, Some(0.9));
    missing.rubric_scores.remove("relevance");
    let error = score(&code_review(), &missing).unwrap_err();
    assert_eq!(error.problems()[0].field, "rubric_scores.relevance");
    assert!(error.to_string().contains("missing"), "{error}");

    let mut unknown = all(9.0, Some(0.9));
    unknown.rubric_scores.insert("acuracy".into(), 9.0);
    let error = score(&code_review(), &unknown).unwrap_err();
    assert_eq!(error.problems()[0].field, "rubric_scores.acuracy");
    assert!(error.to_string().contains("did you mean `accuracy`"), "{error}");

    let error = score(&code_review(), &all(9.0, Some(1.5))).unwrap_err();
    assert_eq!(error.problems()[0].field, "confidence");

    let error = score(&code_review(), &all(f64::NAN, Some(0.9))).unwrap_err();
    assert_eq!(error.problems().len(), 5, "NaN is on no scale");
}

#[test]
fn problems_in_a_document_carry_their_position() {
    let text = "{\n  \"rubric_scores\": {\"accuracy\": 11, \"completeness\": 9, \"clarity\": 9,\n    \"conciseness\": 9, \"relevance\": 9},\n  \"confidence\": 0.9\n}";
    let document = parse_document(text, None).unwrap();
    let Reviews::Single(review) = &document.reviews else { panic!() };
    let error = document.place(score(&code_review(), review).unwrap_err());
    let problem = &error.problems()[0];
    assert_eq!(problem.position.map(|p| (p.line, p.column)), Some((2, 33)));

    let typed = parse_document("rubric_scores:\n  accuracy: high\nconfidence: [1]\n", None).unwrap_err();
    let fields: Vec<(&str, usize)> =
        typed.problems().iter().map(|p| (p.field.as_str(), p.position.unwrap().line)).collect();
    assert_eq!(fields, [("rubric_scores.accuracy", 2), ("confidence", 3)]);
    assert!(typed.to_string().contains("expected a number, found the string \"high\""), "{typed}");

    let ScoreError::Parse(syntax) =
        parse_document("{\"rubric_scores\": {,}}", Some(Format::Json)).unwrap_err()
    else {
        panic!("a syntax error")
    };
    assert_eq!(syntax.position.map(|p| (p.line, p.column)), Some((1, 20)));
}

#[test]
fn unknown_top_level_fields_are_warnings_with_a_hint() {
    let document =
        parse_document("rubric_scores: {accuracy: 9}\nconfidense: 0.9\nverdict: pass\n", None).unwrap();
    assert_eq!(document.warnings.len(), 1, "report fields are accepted silently");
    assert_eq!(document.warnings[0].field, "confidense");
    assert!(document.warnings[0].message.contains("did you mean `confidence`"));
}

#[test]
fn a_negative_pattern_in_the_artifact_fails_with_criterion_pattern_and_line() {
    let stories = rubric("user_story_quality_v1.yaml");
    let names: Vec<String> = stories.criteria.iter().map(|c| c.name.clone()).collect();
    let review = Review {
        rubric_scores: names.iter().map(|n| (n.clone(), 5.0)).collect(),
        confidence: Some(0.9),
        ..Review::default()
    };
    let artifact = "As a shopper I want to filter by size\nso that I find shoes, boots and so on.\n";
    let scorer = Scorer::new(&stories).unwrap();
    let evaluation = scorer.score(&review, Some(artifact)).unwrap();
    assert_eq!(evaluation.verdict(), Verdict::Fail);
    let found = &evaluation.negative_matches[0];
    assert_eq!(
        (found.criterion.as_str(), found.pattern.as_str(), found.line, found.column),
        ("no_vague_language", "and so on", 2, 29)
    );
    let reason = evaluation.fail_reasons[0].to_string();
    assert!(
        reason.contains("no_vague_language") && reason.contains("and so on") && reason.contains("line 2")
    );

    let clean = scorer.score(&review, Some("As a shopper I want to filter by size.")).unwrap();
    assert_eq!(clean.verdict(), Verdict::Pass);
    assert!(clean.artifact_checked);
    assert!(!scorer.score(&review, None).unwrap().artifact_checked);
}

#[test]
fn an_essential_criterion_below_the_essential_minimum_fails() {
    let stories = rubric("user_story_quality_v1.yaml");
    let mut review = Review {
        rubric_scores: stories.criteria.iter().map(|c| (c.name.clone(), 5.0)).collect(),
        confidence: Some(0.9),
        ..Review::default()
    };
    let essential =
        stories.criteria.iter().find(|c| c.weight == revcal_rubric_model::Weight::Essential).unwrap();
    review.rubric_scores.insert(essential.name.clone(), 2.0);
    let evaluation = score(&stories, &review).unwrap();
    assert_eq!(evaluation.verdict(), Verdict::Fail);
    assert!(
        matches!(&evaluation.fail_reasons[0], Reason::EssentialBelowMinimum { minimum, .. } if *minimum == 3.0)
    );
}

#[test]
fn a_rubric_without_shares_uses_the_mean() {
    let mut rubric = code_review();
    for criterion in &mut rubric.criteria {
        criterion.share = None;
    }
    let mut review = all(8.0, Some(0.9));
    review.rubric_scores.insert("relevance".into(), 6.0);
    let evaluation = score(&rubric, &review).unwrap();
    assert_eq!(evaluation.weighted_score, 7.6);
    assert_eq!(evaluation.criteria[4].contribution, 1.2);
}

#[test]
fn a_council_takes_medians_merges_issues_and_discounts_disagreement() {
    let text = r#"[
      {"rubric_scores": {"accuracy": 8, "completeness": 8, "clarity": 8, "conciseness": 8, "relevance": 8},
       "confidence": 0.9,
       "issues": [{"severity": "minor", "category": "bug", "location": "src/api.py:42", "message": "null check"}]},
      {"rubric_scores": {"accuracy": 9, "completeness": 7, "clarity": 8, "conciseness": 9, "relevance": 8},
       "confidence": 0.8,
       "issues": [{"severity": "major", "category": "bug", "location": "src/api.py:44", "message": "user may be None"}]},
      {"rubric_scores": {"accuracy": 6, "completeness": 6, "clarity": 6, "conciseness": 6, "relevance": 6},
       "confidence": 0.7}
    ]"#;
    let Reviews::Council(reviews) = parse_document(text, None).unwrap().reviews else { panic!("council") };
    let council = score_council(&code_review(), &reviews).unwrap();
    assert_eq!(council.members.len(), 3);
    assert_eq!(council.combined.score_of("accuracy"), Some(8.0));
    assert_eq!(council.combined.score_of("completeness"), Some(7.0));
    let finals: Vec<f64> = council.members.iter().map(|m| m.final_score).collect();
    assert_eq!(finals, [8.0, 8.3, 6.0]); // member 3: 6.0, unclear
    // mean |diff| = (0.3 + 2 + 2.3) / 3; agreement = 1 - that / (10 - 1).
    assert_eq!(council.agreement, 0.82962963);
    assert_eq!(council.mean_confidence, Some(0.8));
    assert_eq!(council.combined.confidence, Some(0.663703704)); // 0.8 x agreement
    assert_eq!(council.combined.blocking_issues.len(), 1);
    assert_eq!(council.combined.blocking_issues[0].severity, Severity::Major);
    assert_eq!(council.combined.blocking_issues[0].raised_by, Some(2));
    assert_eq!(council.verdict(), Verdict::Fail);

    let json = serde_json::to_value(&council).unwrap();
    assert_eq!(json["members"].as_array().unwrap().len(), 3);
    assert_eq!(json["members"][2]["verdict"], "unclear");
    assert_eq!(json["blocking_issues"][0]["raised_by"], 2);
}

#[test]
fn council_errors_name_the_member() {
    let text = r#"[{"rubric_scores": {"accuracy": 8, "completeness": 8, "clarity": 8, "conciseness": 8, "relevance": 8}},
                   {"rubric_scores": {"accuracy": 0, "completeness": 8, "clarity": 8, "conciseness": 8, "relevance": 8}}]"#;
    let document = parse_document(text, None).unwrap();
    let Reviews::Council(reviews) = &document.reviews else { panic!() };
    let error = document.place(score_council(&code_review(), reviews).unwrap_err());
    let problem = &error.problems()[0];
    assert_eq!((problem.member, problem.field.as_str()), (Some(1), "[1].rubric_scores.accuracy"));
    assert_eq!(problem.position.map(|p| p.line), Some(2));
    assert!(error.to_string().contains("council member 1"), "{error}");
    assert!(matches!(parse_document("[]", None), Err(ScoreError::EmptyCouncil)));
}

#[test]
fn non_finite_yaml_numbers_are_refused_not_clamped() {
    let review = single(
        "rubric_scores: {accuracy: .nan, completeness: .inf, clarity: 9, conciseness: 9, relevance: 9}\nconfidence: .nan\n",
    );
    let error = score(&code_review(), &review).unwrap_err();
    let fields: Vec<&str> = error.problems().iter().map(|p| p.field.as_str()).collect();
    assert_eq!(fields, ["rubric_scores.accuracy", "rubric_scores.completeness", "confidence"]);
}
