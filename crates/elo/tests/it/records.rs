//! Calibration records: read back as written, refused when altered (a status flipped, a
//! figure edited, a hash changed, a round dropped), and mapped to the same signed messages
//! for the same record and keys.

use crate::calibrations::{ROUNDS, StandIn, record};
use crate::util::agent;
use revcal_elo::{
    CalibrationRecord, Content, Finding, MAX_MESSAGE_BYTES, MessageType, PlantStatus, RecordError,
    ReviewVerdict, Summary, report_sha256,
};
use serde_json::{Value, json};

const TS: u64 = 1_767_225_600_000;

/// A calibration report as `revcal calibrate --json` writes the fields a record is checked
/// against (SPEC section 6), for the stand-in calibration of `stand_in`.
fn report(stand_in: StandIn, trials: u64) -> String {
    let mut plants = Vec::new();
    for (index, kinds) in ROUNDS.iter().enumerate() {
        for (n, category) in kinds.unwrap_or(&[]).iter().enumerate() {
            let caught = stand_in == StandIn::Careful;
            let mut plant = json!({
                "file": format!("src/module_{}.rs", index + 1), "line": 10 + 20 * n, "category": category,
                "operator": "swap", "status": if caught { "caught" } else { "missed" },
                "original": "a", "mutated": "b", "diff": "-a\n+b\n", "kind": "synthetic",
            });
            if trials > 1 {
                plant["caughtInTrials"] = json!(if caught { trials } else { 0 });
            }
            plants.push(plant);
        }
    }
    // An excluded plant is in no round.
    plants.push(json!({"file": "src/other.rs", "line": 3, "category": "boundary", "status": "excluded",
                       "operator": "swap", "original": "a", "mutated": "a", "diff": "", "kind": "synthetic"}));
    json!({"recall": 1.0, "caught": 18, "total": 18, "commit": "9fceb02d0ae598e95dc970b74767f19372d61af8",
           "scorer": "judge", "plants": plants})
    .to_string()
}

fn careful_with_report(trials: u64) -> (CalibrationRecord, String) {
    let report = report(StandIn::Careful, trials);
    (record(StandIn::Careful, &report_sha256(&report).unwrap(), trials, TS), report)
}

/// Parses `record` after `alter` changed its JSON.
fn altered(
    record: &CalibrationRecord,
    alter: impl FnOnce(&mut Value),
) -> Result<CalibrationRecord, RecordError> {
    let mut value: Value = serde_json::from_str(&record.to_json()).unwrap();
    alter(&mut value);
    CalibrationRecord::parse(&value.to_string())
}

fn figure_field(error: RecordError) -> String {
    match error {
        RecordError::Figure { field, .. } => field,
        other => panic!("not a figure error: {other:?}"),
    }
}

#[test]
fn a_record_reads_back_and_the_same_keys_give_the_same_messages() {
    let (careful, report) = careful_with_report(2);
    careful.check_report(&report).unwrap();
    assert_eq!(CalibrationRecord::parse(&careful.to_json()).unwrap(), careful);
    let (authority, reviewer) = (agent(40), agent(41));
    let rounds = careful.messages(&authority, &reviewer).unwrap();
    assert_eq!(rounds, careful.messages(&authority, &reviewer).unwrap(), "deterministic");
    assert_eq!(rounds.len(), 2 * ROUNDS.len());
    let mut ids = std::collections::HashSet::new();
    let categories = ["boundary", "null-handling", "off-by-one"];
    for (messages, (round, trial)) in rounds
        .iter()
        .zip(careful.rounds.iter().flat_map(|round| round.trials.iter().map(move |t| (round, t))))
    {
        assert_eq!(
            (messages.round, messages.trial, messages.planted),
            (round.round, trial.trial, !round.plants.is_empty())
        );
        for message in messages.messages() {
            assert!(ids.insert(message.id.clone()), "every message is new");
            assert_eq!(message.message.ts, TS);
        }
        assert_eq!(messages.request.message.from, authority.agent_id());
        assert_eq!(messages.outcome.message.from, authority.agent_id());
        assert_eq!(messages.review.message.from, reviewer.agent_id());
        let Content::Request(request) = &messages.request.message.content else { panic!() };
        assert_eq!(
            request.change.as_deref(),
            Some(
                format!(
                    "calibration {} round {} trial {} (commit {})",
                    &careful.report_sha256[..16],
                    round.round,
                    trial.trial,
                    careful.commit
                )
                .as_str()
            )
        );
        assert_eq!(request.extra["calibration"]["report_sha256"], json!(careful.report_sha256));
        let Content::Review(review) = &messages.review.message.content else { panic!() };
        assert_eq!(review.request_id, messages.request.id);
        assert_eq!(review.verdict == ReviewVerdict::RequestChanges, trial.flagged);
        if trial.flagged {
            let comments: Vec<(&str, u64)> =
                review.comments.iter().map(|c| (c.file.as_str(), c.line)).collect();
            let findings: Vec<(&str, u64)> =
                trial.findings.iter().map(|f| (f.file.as_str(), f.line)).collect();
            assert_eq!(comments, findings);
        } else {
            assert!(review.comments.is_empty());
        }
        let Content::Outcome(outcome) = &messages.outcome.message.content else { panic!() };
        assert_eq!(outcome.incident, !round.plants.is_empty());
        assert!(!outcome.merged);
        let link = outcome.calibration.as_ref().unwrap();
        assert_eq!(
            (link.report_sha256.as_str(), link.round, link.trial),
            (careful.report_sha256.as_str(), round.round, trial.trial)
        );
        assert_eq!(link.plants.len(), round.plants.len());
        if round.plants.is_empty() {
            assert_eq!(link.domains, categories, "a clean round counts in every category planted");
        } else {
            let mut own: Vec<&str> = round.plants.iter().map(|plant| plant.category.as_str()).collect();
            own.sort();
            own.dedup();
            assert_eq!(link.domains, own);
        }
    }
    // Another reviewer key signs other reviews, and so other ids.
    let other = careful.messages(&authority, &agent(42)).unwrap();
    assert_eq!(other[0].request, rounds[0].request);
    assert_ne!(other[0].review.id, rounds[0].review.id);
    // An authority cannot calibrate itself.
    assert!(matches!(careful.messages(&authority, &authority), Err(RecordError::SameKey { .. })));
}

#[test]
fn a_flipped_status_or_an_edited_figure_is_refused_naming_it() {
    let (careful, report) = careful_with_report(1);
    // A catch turned into a miss, by itself: the trial's `flagged` no longer follows.
    let error =
        altered(&careful, |v| v["rounds"][0]["trials"][0]["statuses"][0] = json!("missed")).unwrap_err();
    assert_eq!(figure_field(error.clone()), "rounds[0].trials[0].flagged");
    assert!(error.to_string().contains("no plant of the round is caught in this trial"), "{error}");
    // ... with `flagged` edited too: the summary no longer follows.
    let error = altered(&careful, |v| {
        v["rounds"][0]["trials"][0]["statuses"][0] = json!("missed");
        v["rounds"][0]["trials"][0]["flagged"] = json!(false);
    })
    .unwrap_err();
    assert_eq!(figure_field(error), "summary.caught");
    // A false alarm erased.
    let clean =
        careful.rounds.iter().position(|round| round.trials[0].flagged && round.plants.is_empty()).unwrap();
    let error = altered(&careful, |v| v["rounds"][clean]["trials"][0]["flagged"] = json!(false)).unwrap_err();
    assert_eq!(figure_field(error), format!("rounds[{clean}].trials[0].flagged"));
    // ... with its finding moved off the change: the summary still counts it.
    let error = altered(&careful, |v| {
        v["rounds"][clean]["trials"][0]["flagged"] = json!(false);
        v["rounds"][clean]["trials"][0]["findings"][0]["line"] = json!(300);
    })
    .unwrap_err();
    assert_eq!(figure_field(error), "summary.flagged_clean");
    let error =
        altered(&careful, |v| v["summary"]["per_category"]["boundary"]["caught"] = json!(1)).unwrap_err();
    assert_eq!(figure_field(error), "summary.per_category");

    // Altered consistently (every figure recomputed), the record reads; the report it names
    // tells the flip.
    let mut flipped = careful.clone();
    flipped.rounds[0].trials[0].statuses[0] = PlantStatus::Missed;
    flipped.rounds[0].trials[0].flagged = false;
    flipped.summary = Summary::of(&flipped.rounds);
    let flipped = CalibrationRecord::parse(&flipped.to_json()).unwrap();
    let error = flipped.check_report(&report).unwrap_err();
    assert_eq!(error.field(), Some("rounds[0].plants[0]"), "{error}");
    assert!(error.to_string().contains("caught in 0 trial(s) here and in 1 in the report"), "{error}");

    // A missed round dropped: the report's plant is in no round.
    let mut dropped = careful.clone();
    dropped.rounds.remove(1);
    dropped.summary = Summary::of(&dropped.rounds);
    let error = CalibrationRecord::parse(&dropped.to_json()).unwrap().check_report(&report).unwrap_err();
    assert!(
        error.to_string().contains("src/module_2.rs:10 (null-handling)")
            && error.to_string().contains("in no round"),
        "{error}"
    );

    // Another report, or a changed hash.
    let error = careful.check_report(&report.replace("\"judge\"", "\"string\"")).unwrap_err();
    assert_eq!(error.field(), Some("report_sha256"));
    let mut rehashed = careful.clone();
    rehashed.report_sha256 = "0".repeat(64);
    assert_eq!(rehashed.check_report(&report).unwrap_err().field(), Some("report_sha256"));
    // Another commit, stated in a report of that hash.
    let mut moved = careful.clone();
    moved.commit = "HEAD~1".into();
    assert_eq!(moved.check_report(&report).unwrap_err().field(), Some("commit"));

    // The hash is of the canonical form: whitespace and key order do not change it.
    let value: Value = serde_json::from_str(&report).unwrap();
    assert_eq!(report_sha256(&serde_json::to_string_pretty(&value).unwrap()).unwrap(), careful.report_sha256);
    assert!(report_sha256("{\"a\": 1, \"a\": 2}").is_err(), "a key twice is refused");
}

#[test]
fn a_malformed_record_is_refused_with_the_field_or_position() {
    let (careful, _) = careful_with_report(1);
    let text = careful.to_json();
    let unknown = text.replacen("\"commit\"", "\"comit\": 1, \"commit\"", 1);
    match CalibrationRecord::parse(&unknown).unwrap_err() {
        RecordError::Json { line, reason, .. } => {
            assert!(reason.contains("unknown field `comit`"), "{reason}");
            assert_eq!(line, 5);
        }
        other => panic!("{other:?}"),
    }
    let twice = text.replacen("\"commit\"", "\"ts\": 1, \"commit\"", 1);
    assert!(CalibrationRecord::parse(&twice).unwrap_err().to_string().contains("duplicate"), "a key twice");
    let field = |alter: &dyn Fn(&mut Value)| -> String {
        match altered(&careful, alter).unwrap_err() {
            RecordError::Field { field, .. } => field,
            other => panic!("{other:?}"),
        }
    };
    assert_eq!(field(&|v| v["format"] = json!("something-else")), "format");
    assert_eq!(field(&|v| v["version"] = json!(2)), "version");
    assert_eq!(field(&|v| v["report_sha256"] = json!("ABC")), "report_sha256");
    assert_eq!(field(&|v| v["rounds"] = json!([])), "rounds");
    assert_eq!(field(&|v| v["rounds"][1]["round"] = json!(1)), "rounds[1].round");
    assert_eq!(
        field(&|v| v["rounds"][0]["trials"][0]["statuses"] = json!([])),
        "rounds[0].trials[0].statuses"
    );
    assert_eq!(field(&|v| v["rounds"][0]["trials"][0]["trial"] = json!(2)), "rounds[0].trials[0].trial");
    assert_eq!(
        field(&|v| v["rounds"][0]["touched"] = json!([{"file": "a", "first": 1, "last": 2}])),
        "rounds[0].touched"
    );
    assert_eq!(field(&|v| v["rounds"][2]["touched"] = json!([])), "rounds[2].touched");
    assert_eq!(field(&|v| v["rounds"][2]["touched"][0]["last"] = json!(1)), "rounds[2].touched[0].last");
    assert_eq!(
        field(&|v| v["rounds"][0]["plants"][0]["category"] = json!("a\u{7}b")),
        "rounds[0].plants[0].category"
    );
    assert_eq!(field(&|v| v["rounds"][0]["plants"][0]["line"] = json!(0)), "rounds[0].plants[0].line");
    assert_eq!(
        field(&|v| v["rounds"][0]["trials"][0]["findings"][0]["line"] = json!(0)),
        "rounds[0].trials[0].findings[0].line"
    );
    let huge = " ".repeat(revcal_elo::MAX_RECORD_BYTES + 1);
    assert!(matches!(CalibrationRecord::parse(&huge), Err(RecordError::TooLarge { .. })));
}

#[test]
fn whatever_a_reviewer_writes_its_calibration_becomes_messages_within_the_limit() {
    let (mut careful, _) = careful_with_report(1);
    // A flood of findings on the clean round the reviewer flags: long paths and long text,
    // all of it escaped six times over in JSON, and blank bodies.
    let clean =
        careful.rounds.iter().position(|round| round.trials[0].flagged && round.plants.is_empty()).unwrap();
    let path = format!("{}/a.rs", "\u{1}\"".repeat(3000));
    let body = "\u{2}".repeat(5000);
    let flood: Vec<Finding> = (0..400)
        .map(|n| Finding {
            file: path.clone(),
            line: n + 1,
            body: if n % 2 == 0 { body.clone() } else { " ".into() },
        })
        .collect();
    careful.rounds[clean].trials[0].findings.extend(flood);
    careful.summary = Summary::of(&careful.rounds);
    let careful = CalibrationRecord::parse(&careful.to_json()).unwrap();
    let rounds = careful.messages(&agent(40), &agent(41)).unwrap();
    let flagged = &rounds[clean];
    let Content::Review(review) = &flagged.review.message.content else { panic!() };
    assert_eq!(review.verdict, ReviewVerdict::RequestChanges);
    assert_eq!(review.comments.len(), revcal_elo::MAX_REVIEW_COMMENTS);
    assert_eq!(review.summary.as_deref(), Some("401 findings located (the first 50 as comments)"));
    assert!(review.comments.iter().any(|comment| comment.body == "(no text)"));
    assert!(review.comments.iter().all(|comment| comment.file.len() <= revcal_elo::MAX_PLANT_PATH_BYTES));
    assert!(
        flagged.review.canonical().len() > 300_000,
        "the flood is in the review: {}",
        flagged.review.canonical().len()
    );
    for message in rounds.iter().flat_map(|round| round.messages()) {
        assert!(message.canonical().len() <= MAX_MESSAGE_BYTES);
        // What the ledger reads back: parsed and verified like any message.
        assert_eq!(revcal_elo::SignedMessage::parse(message.canonical()).unwrap(), *message);
    }
    assert_eq!(flagged.review.message.message_type(), MessageType::Review);
}

#[test]
fn a_calibration_link_that_contradicts_its_outcome_is_refused_naming_the_field() {
    let authority = agent(40);
    let link = json!({"report_sha256": "ab".repeat(32), "round": 3, "trial": 1,
                      "plants": [{"file": "src/a.rs", "line": 7, "category": "off-by-one"}],
                      "domains": ["off-by-one"]});
    let outcome = |incident: bool, link: Value| {
        let mut content = json!({"request_id": "cd".repeat(32), "merged": false, "incident": incident,
                                 "calibration": link});
        if incident {
            content["incident_details"] = json!("planted");
        }
        revcal_elo::sign_value(
            json!({"type": "REVIEW_OUTCOME", "to": "#review", "ts": TS, "content": content}),
            &authority,
        )
    };
    outcome(true, link.clone()).unwrap();
    let refused = |incident: bool, alter: &dyn Fn(&mut Value)| -> String {
        let mut changed = link.clone();
        alter(&mut changed);
        match outcome(incident, changed).unwrap_err() {
            revcal_elo::MessageError::Field(error) => error.field,
            other => panic!("{other:?}"),
        }
    };
    // A planted round is an incident; a clean round is not.
    assert_eq!(refused(false, &|_| {}), "content.calibration.plants");
    assert_eq!(refused(true, &|l| l["plants"] = json!([])), "content.calibration.plants");
    // A planted round counts in its plants' categories, sorted, once each.
    assert_eq!(refused(true, &|l| l["domains"] = json!(["boundary"])), "content.calibration.domains");
    assert_eq!(
        refused(false, &|l| {
            l["plants"] = json!([]);
            l["domains"] = json!(["off-by-one", "boundary"]);
        }),
        "content.calibration.domains"
    );
    assert_eq!(refused(true, &|l| l["round"] = json!(0)), "content.calibration.round");
    assert_eq!(refused(true, &|l| l["report_sha256"] = json!("report")), "content.calibration.report_sha256");
    assert_eq!(
        refused(true, &|l| l["plants"][0]["category"] = json!("")),
        "content.calibration.plants[0].category"
    );
    assert_eq!(refused(true, &|l| l["verified"] = json!(true)), "content.calibration.verified");
    // A clean round may count in any categories the calibration planted.
    let mut clean = link.clone();
    clean["plants"] = json!([]);
    clean["domains"] = json!(["boundary", "off-by-one"]);
    outcome(false, clean).unwrap();
}
