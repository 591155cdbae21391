//! Focus areas and red flags (docs/scoring.md, "Focus areas and red flags"), against the
//! shipped code-review rubric.

use revcal_rubric_model::Rubric;
use revcal_score::{Reason, Review, Reviews, ScoreError, Scorer, Verdict, parse_document};

fn code_review() -> Rubric {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../rubrics/code_review_v1.yaml");
    serde_yaml::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn single(text: &str) -> Review {
    match parse_document(text, None).unwrap().reviews {
        Reviews::Single(review) => review,
        Reviews::Council(_) => panic!("expected one review"),
    }
}

/// All five criteria at 9, confident, with `extra` YAML lines appended.
fn nines(extra: &str) -> String {
    format!(
        "rubric_scores: {{accuracy: 9, completeness: 9, clarity: 9, conciseness: 9, relevance: 9}}\nconfidence: 0.9\n{extra}"
    )
}

#[test]
fn the_shipped_rubric_has_the_three_areas_and_their_red_flags() {
    let rubric = code_review();
    let names: Vec<&str> = rubric.focus_areas.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(names, ["Security", "Performance", "Testing"]);
    let ids = |area: &str| -> Vec<String> {
        rubric.focus_area(area).unwrap().red_flags.iter().map(|f| f.id.clone()).collect()
    };
    assert_eq!(
        ids("security"),
        [
            "hardcoded_secret",
            "sql_injection",
            "xss",
            "insecure_deserialization",
            "missing_authentication",
            "plaintext_password",
            "csrf_csp_disabled"
        ]
    );
    assert_eq!(
        ids("PERFORMANCE"),
        [
            "quadratic_where_linear",
            "n_plus_one_queries",
            "unbounded_memory_growth",
            "missing_pagination",
            "sync_io_in_async",
            "memory_leak"
        ]
    );
    assert_eq!(
        ids("Testing"),
        [
            "no_tests_for_new_code",
            "always_passing_test",
            "hardcoded_sleep",
            "order_dependent_tests",
            "mocking_implementation_details"
        ]
    );
    assert!(rubric.focus_areas.iter().all(|a| !a.checks.is_empty()));
}

#[test]
fn a_security_focused_review_raising_sql_injection_fails_even_with_all_scores_at_9() {
    let rubric = code_review();
    let review = single(&nines("rubric_focus: Security\nred_flags: [sql_injection]\n"));
    let evaluation = Scorer::new(&rubric).unwrap().score(&review, None).unwrap();
    assert_eq!(evaluation.final_score, 9.0);
    assert_eq!(evaluation.verdict(), Verdict::Fail);
    assert_eq!(evaluation.focus, ["Security"]);
    match &evaluation.fail_reasons[..] {
        [Reason::RedFlag { id, area, description }] => {
            assert_eq!((id.as_str(), area.as_str()), ("sql_injection", "Security"));
            assert!(description.contains("SQL"), "{description}");
        }
        other => panic!("expected the red flag as the only reason, got {other:?}"),
    }
    assert!(evaluation.fail_reasons[0].to_string().contains("sql_injection"));
    assert!(evaluation.unclear_reasons.is_empty(), "nothing else stands in the way");
}

#[test]
fn the_same_review_without_focus_passes_and_lists_the_flag() {
    let rubric = code_review();
    let review = single(&nines("red_flags: [sql_injection]\n"));
    let evaluation = Scorer::new(&rubric).unwrap().score(&review, None).unwrap();
    assert_eq!(evaluation.verdict(), Verdict::Pass);
    assert!(evaluation.focus.is_empty());
    assert_eq!(evaluation.red_flags.len(), 1);
    let flag = &evaluation.red_flags[0];
    assert_eq!((flag.id.as_str(), flag.area.as_str(), flag.in_focus), ("sql_injection", "Security", false));

    let json = serde_json::to_value(&evaluation).unwrap();
    assert_eq!(json["verdict"], "pass");
    assert_eq!(json["red_flags"][0]["id"], "sql_injection");
    assert_eq!(json["red_flags"][0]["in_focus"], false);
    assert_eq!(json["rubric_focus"], serde_json::json!([]));
}

#[test]
fn a_red_flag_of_an_area_not_in_focus_is_reported_but_does_not_fail() {
    let rubric = code_review();
    let review = single(&nines("rubric_focus: [performance]\nred_flags: [xss, n_plus_one_queries]\n"));
    let evaluation = Scorer::new(&rubric).unwrap().score(&review, None).unwrap();
    assert_eq!(evaluation.verdict(), Verdict::Fail);
    let flags: Vec<(&str, bool)> = evaluation.red_flags.iter().map(|f| (f.id.as_str(), f.in_focus)).collect();
    assert_eq!(flags, [("xss", false), ("n_plus_one_queries", true)]);
    assert_eq!(evaluation.fail_reasons.len(), 1, "only the focused area's flag fails");
    assert!(matches!(&evaluation.fail_reasons[0], Reason::RedFlag { id, .. } if id == "n_plus_one_queries"));
}

#[test]
fn an_issue_carrying_a_red_flag_raises_it_even_as_a_suggestion() {
    let rubric = code_review();
    let review = single(&nines(
        "rubric_focus: [TESTING, testing]\nissues:\n  - severity: minor\n    location: tests/api_test.py:12\n    message: time.sleep(2) waits for the worker.\n    red_flag: hardcoded_sleep\n",
    ));
    let evaluation = Scorer::new(&rubric).unwrap().score(&review, None).unwrap();
    assert_eq!(evaluation.focus, ["Testing"], "case-insensitive, each area once");
    assert!(evaluation.blocking_issues.is_empty());
    assert_eq!(evaluation.suggestions[0].red_flag.as_deref(), Some("hardcoded_sleep"));
    assert_eq!(evaluation.verdict(), Verdict::Fail);
    assert!(
        matches!(&evaluation.fail_reasons[..], [Reason::RedFlag { id, area, .. }] if id == "hardcoded_sleep" && area == "Testing")
    );
    let json = serde_json::to_value(&evaluation).unwrap();
    assert_eq!(json["suggestions"][0]["red_flag"], "hardcoded_sleep");
    assert_eq!(json["rubric_focus"], serde_json::json!(["Testing"]));
}

#[test]
fn a_flag_raised_twice_is_listed_once() {
    let rubric = code_review();
    let review = single(&nines(
        "rubric_focus: security\nred_flags: [xss]\nissues:\n  - {severity: major, message: innerHTML from the query string, red_flag: xss}\n",
    ));
    let evaluation = Scorer::new(&rubric).unwrap().score(&review, None).unwrap();
    assert_eq!(evaluation.red_flags.len(), 1);
    let red_flag_reasons =
        evaluation.fail_reasons.iter().filter(|r| matches!(r, Reason::RedFlag { .. })).count();
    assert_eq!(red_flag_reasons, 1);
}

#[test]
fn unknown_focus_and_red_flag_ids_are_input_errors_naming_the_field_as_written() {
    let rubric = code_review();
    let text = nines(
        "rubric_focus: Securty\nred_flags: [sql_injection, sqli]\nblocking_issues:\n  - {severity: major, message: a}\n  - {severity: major, message: b, red_flag: n_plus_one}\n",
    );
    let document = parse_document(&text, None).unwrap();
    let Reviews::Single(review) = &document.reviews else { panic!("one review") };
    let error = document.place(Scorer::new(&rubric).unwrap().score(review, None).unwrap_err());
    let ScoreError::Invalid { problems } = &error else { panic!("{error:?}") };
    let found: Vec<(&str, usize, usize)> = problems
        .iter()
        .map(|p| {
            let at = p.position.expect("every problem is placed");
            (p.field.as_str(), at.line, at.column)
        })
        .collect();
    assert_eq!(
        found,
        [("rubric_focus", 3, 15), ("red_flags[1]", 4, 28), ("blocking_issues[1].red_flag", 7, 45)]
    );
    assert!(problems[0].message.contains("did you mean `Security`?"), "{}", problems[0].message);
    assert!(problems[1].message.contains("unknown red flag `sqli`"), "{}", problems[1].message);
    assert!(problems[2].message.contains("did you mean `n_plus_one_queries`?"), "{}", problems[2].message);
}

#[test]
fn a_rubric_without_focus_areas_refuses_a_focus() {
    let mut rubric = code_review();
    rubric.focus_areas.clear();
    let review = single(&nines("rubric_focus: security\n"));
    let error = Scorer::new(&rubric).unwrap().score(&review, None).unwrap_err();
    assert_eq!(error.problems()[0].field, "rubric_focus[0]");
    assert!(error.problems()[0].message.contains("has no focus areas"), "{error}");
}

#[test]
fn a_report_fed_back_keeps_its_focus_and_flags() {
    let rubric = code_review();
    let scorer = Scorer::new(&rubric).unwrap();
    let review = single(&nines("rubric_focus: Security\nred_flags: [hardcoded_secret]\n"));
    let first = scorer.score(&review, None).unwrap();
    let report = serde_json::to_string(&first).unwrap();
    let again = scorer.score(&single(&report), None).unwrap();
    assert_eq!(again.verdict(), Verdict::Fail);
    assert_eq!(again.red_flags, first.red_flags);
    assert_eq!(again.focus, first.focus);
}

#[test]
fn councils_merge_red_flags_and_count_the_members_that_raised_them() {
    let rubric = code_review();
    let text = r#"[
      {"rubric_scores": {"accuracy": 9, "completeness": 9, "clarity": 9, "conciseness": 9, "relevance": 9},
       "confidence": 0.9, "rubric_focus": "security", "red_flags": ["sql_injection"]},
      {"rubric_scores": {"accuracy": 9, "completeness": 9, "clarity": 9, "conciseness": 9, "relevance": 9},
       "confidence": 0.9,
       "issues": [{"severity": "minor", "file": "db.py", "line": 10, "message": "f-string SQL", "red_flag": "sql_injection"},
                  {"severity": "minor", "file": "db.py", "line": 30, "message": "query per row", "red_flag": "n_plus_one_queries"}]},
      {"rubric_scores": {"accuracy": 9, "completeness": 9, "clarity": 9, "conciseness": 9, "relevance": 9},
       "confidence": 0.9}
    ]"#;
    let Reviews::Council(reviews) = parse_document(text, None).unwrap().reviews else { panic!("council") };
    let council = Scorer::new(&rubric).unwrap().score_council(&reviews, None).unwrap();
    let flags: Vec<(&str, bool, Option<usize>)> =
        council.combined.red_flags.iter().map(|f| (f.id.as_str(), f.in_focus, f.raised_by)).collect();
    assert_eq!(flags, [("sql_injection", true, Some(2)), ("n_plus_one_queries", false, Some(1))]);
    assert_eq!(council.combined.focus, ["Security"], "the union of the members' focus");
    assert_eq!(council.verdict(), Verdict::Fail);
    let verdicts: Vec<Verdict> = council.members.iter().map(|m| m.verdict()).collect();
    assert_eq!(verdicts, [Verdict::Fail, Verdict::Pass, Verdict::Pass], "members keep their own focus");
    let json = serde_json::to_value(&council).unwrap();
    assert_eq!(json["red_flags"][0]["raised_by"], 2);
    assert!(json["members"][0]["red_flags"][0].get("raised_by").is_none());
}

#[test]
fn council_members_with_unknown_ids_are_named() {
    let rubric = code_review();
    let text = r#"[{"rubric_scores": {"accuracy": 9, "completeness": 9, "clarity": 9, "conciseness": 9, "relevance": 9}},
                   {"rubric_scores": {"accuracy": 9, "completeness": 9, "clarity": 9, "conciseness": 9, "relevance": 9},
                    "issues": [{"severity": "minor", "message": "m", "red_flag": "nope"}]}]"#;
    let document = parse_document(text, None).unwrap();
    let Reviews::Council(reviews) = &document.reviews else { panic!("council") };
    let error = document.place(Scorer::new(&rubric).unwrap().score_council(reviews, None).unwrap_err());
    let problem = &error.problems()[0];
    assert_eq!((problem.field.as_str(), problem.member), ("[1].issues[0].red_flag", Some(1)));
    assert_eq!(problem.position.map(|p| p.line), Some(3));
}

#[test]
fn red_flags_that_are_not_names_are_type_errors() {
    let error = parse_document(&nines("red_flags: [3]\nrubric_focus: {a: 1}\n"), None).unwrap_err();
    let fields: Vec<&str> = error.problems().iter().map(|p| p.field.as_str()).collect();
    assert_eq!(fields, ["red_flags[0]", "rubric_focus"]);
}
