//! The judge's labelled set: what it covers, and judges measured against it (one that answers
//! from the labels through the HTTP test server, one that always says match, one that fails).

use std::collections::{BTreeSet, HashMap};

use revcal_judge::{
    Judge, JudgeConfig, JudgeError, JudgeRequest, LlmJudge, Provider, calibrate_judge, parse_judge_cases,
    shipped_judge_cases,
};

use crate::http_server::{Reply, TestServer, defect_and_finding, openai_answer, prompt_of, verdict_text};

#[test]
fn the_shipped_set_covers_every_category_language_and_trap() {
    let cases = shipped_judge_cases().unwrap();
    assert!(cases.len() >= 60, "{} cases", cases.len());
    let ids: BTreeSet<&str> = cases.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids.len(), cases.len(), "ids are unique");
    let categories: BTreeSet<&str> = cases.iter().map(|c| c.plant.category.as_str()).collect();
    for category in revcal_mutate::Category::ALL {
        assert!(categories.contains(category.as_str()), "no case of {category:?}");
    }
    let languages: BTreeSet<&str> = cases.iter().map(|c| c.language.as_str()).collect();
    assert_eq!(languages, BTreeSet::from(["javascript", "python", "rust"]));
    let kinds: BTreeSet<&str> = cases.iter().map(|c| c.kind.as_str()).collect();
    for kind in
        ["correct", "plain-words", "echo", "wrong-defect", "vague", "injection-finding", "injection-code"]
    {
        assert!(kinds.contains(kind), "no {kind} case");
    }
    // Every echo, vague, wrong-defect and code-injection case is a non-match.
    for case in &cases {
        if ["echo", "vague", "wrong-defect", "injection-code"].contains(&case.kind.as_str()) {
            assert!(!case.expected, "{}", case.id);
        }
    }
    assert!(cases.iter().any(|c| c.finding.text.to_lowercase().contains("ignore previous instructions")));
    assert!(cases.iter().any(|c| c.finding.text.contains("</data-")), "a forged fence tag");
    assert!(cases.iter().filter(|c| c.expected).count() >= 20);
}

/// The label of each (defect, finding text) pair of the shipped set.
fn labels() -> HashMap<(String, String), bool> {
    shipped_judge_cases()
        .unwrap()
        .into_iter()
        .map(|case| ((case.plant.defect.clone(), case.finding.text.clone()), case.expected))
        .collect()
}

#[test]
fn a_judge_that_answers_from_the_labels_agrees_fully_through_the_http_judge() {
    let labels = labels();
    let server = TestServer::start(move |_, request| {
        let key = defect_and_finding(&prompt_of(request)).expect("the prompt has both blocks");
        let verdict = *labels.get(&key).unwrap_or_else(|| panic!("unlabelled question {key:?}"));
        Reply::new(200, openai_answer(&verdict_text(verdict), "stop"))
    });
    let config = JudgeConfig::new(Provider::OpenAi, None).with_base_url(format!("{}/v1", server.url()));
    let judge = LlmJudge::new(config);
    let cases = shipped_judge_cases().unwrap();
    let mut seen = 0;
    let measured = calibrate_judge(&judge, &cases, |_| seen += 1).unwrap();
    assert_eq!(seen, cases.len());
    assert_eq!(measured.agreement, 1.0);
    assert_eq!((measured.false_matches, measured.false_misses, measured.errors), (0, 0, 0));
    assert_eq!(measured.false_match_rate, Some(0.0));
    assert_eq!(server.requests().len(), cases.len());
}

struct Always(bool);
impl Judge for Always {
    fn name(&self) -> &str {
        "always"
    }
    fn judge(&self, _: &JudgeRequest) -> Result<bool, JudgeError> {
        Ok(self.0)
    }
}

#[test]
fn a_judge_that_always_says_match_has_a_false_match_rate_of_one() {
    let cases = shipped_judge_cases().unwrap();
    let negatives = cases.iter().filter(|c| !c.expected).count();
    let measured = calibrate_judge(&Always(true), &cases, |_| {}).unwrap();
    assert_eq!(measured.false_matches, negatives);
    assert_eq!(measured.false_match_rate, Some(1.0));
    assert_eq!(measured.false_miss_rate, Some(0.0));
    assert!(measured.agreement < 0.5, "{}", measured.agreement);
    assert_eq!(measured.per_kind["echo"].agreed, 0);
    let measured = calibrate_judge(&Always(false), &cases, |_| {}).unwrap();
    assert_eq!((measured.false_match_rate, measured.false_miss_rate), (Some(0.0), Some(1.0)));
}

struct Broken;
impl Judge for Broken {
    fn name(&self) -> &str {
        "broken"
    }
    fn judge(&self, _: &JudgeRequest) -> Result<bool, JudgeError> {
        Err(JudgeError::Backend { judge: "broken".into(), message: "down".into() })
    }
}

#[test]
fn judge_errors_are_counted_apart_never_as_matches_and_a_spent_budget_stops() {
    let cases = shipped_judge_cases().unwrap();
    let measured = calibrate_judge(&Broken, &cases, |_| {}).unwrap();
    assert_eq!(
        (measured.errors, measured.agreed, measured.false_matches, measured.false_misses),
        (cases.len(), 0, 0, 0)
    );
    assert!(
        measured
            .outcomes
            .iter()
            .all(|o| o.verdict.is_none() && o.error.as_deref().is_some_and(|e| e.contains("down")))
    );

    let server = TestServer::start(|_, _| Reply::new(200, openai_answer(&verdict_text(true), "stop")));
    let mut config = JudgeConfig::new(Provider::OpenAi, None).with_base_url(format!("{}/v1", server.url()));
    config.max_calls = Some(3);
    let measured = calibrate_judge(&LlmJudge::new(config), &cases, |_| {}).unwrap();
    assert!(measured.is_partial());
    assert_eq!((measured.cases, measured.unasked), (3, cases.len() - 3), "what was measured is kept");
    assert_eq!(measured.outcomes.len(), 3);
    assert!(measured.stopped_by.as_deref().is_some_and(|e| e.contains("budget of 3 calls")), "{measured:?}");
    assert_eq!(server.requests().len(), 3);
}

#[test]
fn an_error_every_further_question_would_meet_stops_the_run_at_once() {
    let cases = shipped_judge_cases().unwrap();
    let server = TestServer::start(|_, _| Reply::new(401, r#"{"error": {"message": "bad key"}}"#));
    let config = JudgeConfig::new(Provider::OpenAi, None).with_base_url(format!("{}/v1", server.url()));
    let measured = calibrate_judge(&LlmJudge::new(config), &cases, |_| {}).unwrap();
    assert_eq!((measured.cases, measured.unasked), (0, cases.len()));
    assert!(
        measured.stopped_by.as_deref().is_some_and(|e| e.contains("refused the API key")),
        "{measured:?}"
    );
    assert_eq!(server.requests().len(), 1, "not asked 103 times");
    let json = serde_json::to_value(&measured).unwrap();
    assert_eq!(json["unasked"].as_u64(), Some(cases.len() as u64));
    assert!(json["stoppedBy"].is_string());
}

#[test]
fn a_labelled_set_file_is_checked_when_read() {
    assert!(parse_judge_cases("- id: x\n  kind: echo\n").is_err());
    let one = "- id: x\n  kind: echo\n  language: rust\n  expected: false\n  plant: {file: a.rs, line: 1, category: c, operator: o, defect: d, original: a, mutated: b}\n  finding: {file: a.rs, line: 1, text: t, evidence: null}\n";
    assert_eq!(parse_judge_cases(one).unwrap()[0].plant.line, 1);
}
