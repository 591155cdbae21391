//! Verified outcomes: calibrations recorded as RFC-001 traffic, rated overall, verified,
//! self-reported and per bug category, on SQLite and PostgreSQL, against ratings computed
//! here from the RFC's table (`calibrations::Expected`), not by the crate's engine.

use crate::calibrations::{Expectations, Expected, ROUNDS, StandIn, expect_record, record};
use crate::util::{agent, outcome, request, review};
use revcal_elo::{
    CalibrationRecord, Content, Keypair, LeaderboardResult, Ledger, Outcomes, Recorded, Recording, Rejection,
    Response, ReviewVerdict, Scope, verify_receipt,
};
use serde_json::{Value, json};

/// The hash of the stand-in careful reviewer's report (any 64 hex digits: the ledger does
/// not read reports).
pub(crate) const CAREFUL_REPORT: &str = "3f9a0c1d2e4b5a6978695a4b3c2d1e0f00112233445566778899aabbccddeeff";
const RUBBER_REPORT: &str = "81bc0d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b7c";
const CALIBRATED_AT: u64 = 1_767_225_600_000;

fn authority() -> Keypair {
    agent(40)
}

fn careful() -> Keypair {
    agent(41)
}

fn rubber() -> Keypair {
    agent(42)
}

fn recorded(ledger: &mut Ledger, record: &CalibrationRecord, reviewer: &Keypair) -> Recorded {
    let rounds = record.messages(&authority(), reviewer).unwrap();
    match ledger.record_calibration(&rounds).unwrap() {
        Recording::Recorded(recorded) => recorded,
        Recording::Refused(refusals) => panic!("refused: {refusals:?}"),
    }
}

/// Plain, self-reported traffic: `author` asks, `reviewer` reviews with these verdicts, and
/// `author` reports these incidents. Scores the expectation's `all` and `reported`.
fn plain_traffic(
    ledger: &mut Ledger,
    expected: &mut Expectations,
    reviewer: &Keypair,
    verdicts: &[(ReviewVerdict, bool)],
    tag: &str,
) {
    let author = agent(1);
    for (n, (verdict, incident)) in verdicts.iter().enumerate() {
        let change = request(&author, &format!("{tag} {n}"));
        ledger.ingest(&change).unwrap().unwrap();
        ledger.ingest(&review(reviewer, &change, *verdict)).unwrap().unwrap();
        ledger.ingest(&outcome(&author, &change, *incident)).unwrap().unwrap();
        for scope in ["all", "reported"] {
            expected
                .entry(scope.to_owned())
                .or_insert_with(Expected::start)
                .score(*verdict == ReviewVerdict::RequestChanges, *incident);
        }
    }
}

fn scope_named(name: &str) -> Scope {
    match name {
        "all" => Scope::All,
        "verified" => Scope::Verified,
        "reported" => Scope::Reported,
        other => Scope::Domain(other.strip_prefix("domain:").unwrap().to_owned()),
    }
}

/// Every expectation of every agent equals the ledger's standing, and the leaderboards of
/// every scope list exactly the expected agents, in the expected order.
fn assert_standings(ledger: &Ledger, expected: &[(&Keypair, &Expectations)], backend: &str) {
    let mut scopes: Vec<&String> = expected.iter().flat_map(|(_, by_scope)| by_scope.keys()).collect();
    scopes.sort();
    scopes.dedup();
    for scope_name in scopes {
        let scope = scope_named(scope_name);
        let standings = ledger.standings_in(&scope).unwrap();
        let mut rows: Vec<(String, f64, u64, Option<f64>)> = Vec::new();
        for (key, by_scope) in expected {
            let agent = key.agent_id();
            let Some(want) = by_scope.get(scope_name.as_str()) else {
                assert!(
                    !standings.contains_key(&agent),
                    "{backend} {scope_name}: {agent} should not be rated"
                );
                continue;
            };
            let found =
                standings.get(&agent).unwrap_or_else(|| panic!("{backend} {scope_name}: {agent} unrated"));
            assert_eq!(
                (found.rating, found.reviews, found.decisive, found.correct),
                (want.rating, want.reviews, want.decisive, want.correct),
                "{backend} {scope_name}: {agent}"
            );
            rows.push((agent.to_string(), want.rating, want.reviews, want.accuracy()));
        }
        rows.sort_by(|a, b| b.1.total_cmp(&a.1).then(b.2.cmp(&a.2)).then(a.0.cmp(&b.0)));
        let board: Vec<(String, f64, u64, Option<f64>)> = ledger
            .leaderboard_in(&scope, None)
            .unwrap()
            .into_iter()
            .map(|entry| (entry.agent.to_string(), entry.elo, entry.reviews, entry.accuracy))
            .collect();
        assert_eq!(board, rows, "{backend}: leaderboard of {scope_name}");
    }
}

#[test]
fn two_stand_in_reviewers_give_the_rfc_ratings_overall_verified_and_per_domain() {
    for backend in crate::util::backends("two_stand_in_reviewers") {
        let mut ledger = backend.open();
        assert!(ledger.trust(&authority().public()).unwrap());
        let (mut careful_expected, mut rubber_expected) = (Expectations::new(), Expectations::new());

        // Some self-reported traffic first, so that all, verified and reported differ.
        plain_traffic(
            &mut ledger,
            &mut careful_expected,
            &careful(),
            &[
                (ReviewVerdict::Approve, false),
                (ReviewVerdict::RequestChanges, true),
                (ReviewVerdict::RequestChanges, false),
            ],
            "plain",
        );
        let careful_record = record(StandIn::Careful, CAREFUL_REPORT, 1, CALIBRATED_AT);
        let done = recorded(&mut ledger, &careful_record, &careful());
        expect_record(&mut careful_expected, &careful_record, true);
        assert!(done.verified, "{}", backend.name);
        assert_eq!(done.stored.len(), 3 * ROUNDS.len());
        plain_traffic(
            &mut ledger,
            &mut rubber_expected,
            &rubber(),
            &[(ReviewVerdict::Approve, true)],
            "late",
        );
        let rubber_record = record(StandIn::Rubber, RUBBER_REPORT, 1, CALIBRATED_AT);
        recorded(&mut ledger, &rubber_record, &rubber());
        expect_record(&mut rubber_expected, &rubber_record, true);

        // The hand-made numbers, so that a reader can check the computation itself: the
        // careful reviewer's 14 catches (the first 20 reviews at K 40), 9 correct
        // approvals and one false alarm.
        let careful_verified = careful_expected["verified"];
        assert_eq!((careful_verified.reviews, careful_verified.correct), (24, 23));
        assert_eq!(
            careful_verified.rating,
            1200.0 + 12.0 * 50.0 + 7.0 * 10.0 - 10.0 + 2.0 * 25.0 + 2.0 * 5.0
        );
        assert_eq!(
            rubber_expected["verified"].rating,
            1200.0 + 12.0 * -60.0 + 8.0 * 10.0 + 2.0 * -30.0 + 2.0 * 5.0
        );
        assert_eq!(careful_expected["domain:boundary"].reviews, 4 + 10);

        assert_standings(
            &ledger,
            &[(&careful(), &careful_expected), (&rubber(), &rubber_expected)],
            backend.name,
        );
        assert_eq!(ledger.domains().unwrap(), ["boundary", "null-handling", "off-by-one"]);
        // RFC-001's own leaderboard is the `all` one.
        assert_eq!(ledger.leaderboard(None).unwrap(), ledger.leaderboard_in(&Scope::All, None).unwrap());
        let replay = ledger.replay().unwrap();
        assert!(replay.is_consistent(), "{}: {:?}", backend.name, replay.mismatches);

        // Receipts of verified outcomes name their calibration and verify offline; the
        // self-reported ones carry no calibration.
        let issuer = ledger.issuer_key().public().unwrap();
        let receipts = ledger.receipts(&careful().agent_id()).unwrap();
        assert_eq!(receipts.len(), 3 + ROUNDS.len());
        assert!(receipts[..3].iter().all(|receipt| receipt.calibration.is_none()));
        for (receipt, round) in receipts[3..].iter().zip(&careful_record.rounds) {
            let calibration = receipt.calibration.as_ref().unwrap();
            assert!(calibration.verified);
            assert_eq!(
                (calibration.report_sha256.as_str(), calibration.round, calibration.trial),
                (CAREFUL_REPORT, round.round, 1)
            );
            assert_eq!(calibration.authority, authority().agent_id());
            assert_eq!(receipt.review.incident, !round.plants.is_empty());
            assert!(receipt.content.contains(&format!(
                "calibration {} round {} trial 1",
                &CAREFUL_REPORT[..16],
                round.round
            )));
            assert_eq!(verify_receipt(&receipt.to_canonical(), &issuer).unwrap(), *receipt);
            // Claiming the other way breaks the signature.
            let flipped = receipt.to_canonical().replace("\"verified\":true", "\"verified\":false");
            assert!(verify_receipt(&flipped, &issuer).is_err());
        }
    }
}

#[test]
fn recording_a_calibration_twice_is_refused_and_stores_nothing() {
    for backend in crate::util::backends("recording_twice_is_refused") {
        let mut ledger = backend.open();
        ledger.trust(&authority().public()).unwrap();
        let first = record(StandIn::Careful, CAREFUL_REPORT, 1, CALIBRATED_AT);
        recorded(&mut ledger, &first, &careful());
        let count = ledger.message_count().unwrap();
        let standings = ledger.standings_in(&Scope::Verified).unwrap();

        // The same record and keys: the same messages, every one a replay.
        let again = first.messages(&authority(), &careful()).unwrap();
        let Recording::Refused(refusals) = ledger.record_calibration(&again).unwrap() else {
            panic!("{}: recorded twice", backend.name)
        };
        assert_eq!(refusals.len(), 3 * ROUNDS.len());
        assert!(refusals.iter().all(|refusal| refusal.rejection.code() == "replayed"), "{refusals:?}");
        assert_eq!((refusals[0].round, refusals[0].trial), (1, 1));

        // Dated otherwise, every message is new, but each round was recorded already.
        let later = record(StandIn::Careful, CAREFUL_REPORT, 1, CALIBRATED_AT + 1);
        let Recording::Refused(refusals) =
            ledger.record_calibration(&later.messages(&authority(), &careful()).unwrap()).unwrap()
        else {
            panic!("{}: recorded twice with another ts", backend.name)
        };
        assert_eq!(refusals.len(), ROUNDS.len(), "{refusals:?}");
        for (refusal, round) in refusals.iter().zip(&first.rounds) {
            assert_eq!(refusal.round, round.round);
            match &refusal.rejection {
                Rejection::CalibrationReplayed { report_sha256, round, trial, .. } => {
                    assert_eq!((report_sha256.as_str(), *round, *trial), (CAREFUL_REPORT, refusal.round, 1));
                }
                other => panic!("{}: {other:?}", backend.name),
            }
        }
        // With another reviewer key, the authority's requests are the same messages.
        let Recording::Refused(refusals) =
            ledger.record_calibration(&first.messages(&authority(), &rubber()).unwrap()).unwrap()
        else {
            panic!("{}: recorded for a second reviewer", backend.name)
        };
        assert_eq!(refusals[0].rejection.code(), "replayed");

        // Refused means nothing stored: no message, no rating moved.
        assert_eq!(ledger.message_count().unwrap(), count);
        assert_eq!(ledger.standings_in(&Scope::Verified).unwrap(), standings);
        assert!(ledger.standing(&rubber().agent_id()).unwrap().is_none());
        assert!(ledger.replay().unwrap().is_consistent());

        // Another key claiming the same report is a claim of its own: stored, self-reported.
        let rounds = later.messages(&agent(43), &careful()).unwrap();
        let Recording::Recorded(claimed) = ledger.record_calibration(&rounds).unwrap() else {
            panic!("{}: an untrusted claim refused", backend.name)
        };
        assert!(!claimed.verified);
        assert_eq!(ledger.standings_in(&Scope::Verified).unwrap(), standings);
        assert_eq!(ledger.standings_in(&Scope::Reported).unwrap()[&careful().agent_id()].reviews, 24);
    }
}

#[test]
fn trust_decides_what_is_verified_and_a_change_of_trust_recomputes_every_scope() {
    for backend in crate::util::backends("trust_decides_verified") {
        let mut ledger = backend.open();
        let mut expected = Expectations::new();
        plain_traffic(
            &mut ledger,
            &mut expected,
            &careful(),
            &[(ReviewVerdict::RequestChanges, true)],
            "plain",
        );
        let careful_record = record(StandIn::Careful, CAREFUL_REPORT, 1, CALIBRATED_AT);
        let done = recorded(&mut ledger, &careful_record, &careful());
        assert!(!done.verified, "{}: an untrusted authority's outcomes are self-reported", backend.name);
        let mut untrusted = expected.clone();
        expect_record(&mut untrusted, &careful_record, false);
        assert_standings(&ledger, &[(&careful(), &untrusted)], backend.name);
        assert!(ledger.domains().unwrap().is_empty());
        let receipts = ledger.receipts(&careful().agent_id()).unwrap();
        assert!(!receipts[1].calibration.as_ref().unwrap().verified);

        // Trusted afterwards: the stored calibration counts as verified, as if trusted from the start.
        assert!(ledger.trust(&authority().public()).unwrap());
        assert!(!ledger.trust(&authority().public()).unwrap(), "trusting twice changes nothing");
        assert_eq!(ledger.authorities().unwrap(), [(authority().agent_id(), authority().public())]);
        let mut trusted = expected.clone();
        expect_record(&mut trusted, &careful_record, true);
        assert_standings(&ledger, &[(&careful(), &trusted)], backend.name);
        assert!(ledger.replay().unwrap().is_consistent());
        assert!(ledger.receipts(&careful().agent_id()).unwrap()[1].calibration.as_ref().unwrap().verified);

        // No longer trusted: back to self-reported.
        assert!(ledger.distrust(&authority().agent_id()).unwrap());
        assert!(!ledger.distrust(&authority().agent_id()).unwrap());
        assert_standings(&ledger, &[(&careful(), &untrusted)], backend.name);
        assert!(ledger.replay().unwrap().is_consistent());
        // The overall rating never moved.
        assert_eq!(ledger.standings().unwrap()[&careful().agent_id()].rating, trusted["all"].rating);
    }
}

#[test]
fn without_a_verified_outcome_all_is_the_leaderboard_of_before() {
    for backend in crate::util::backends("without_a_verified_outcome") {
        let mut ledger = backend.open();
        let mut expected = Expectations::new();
        plain_traffic(
            &mut ledger,
            &mut expected,
            &careful(),
            &[
                (ReviewVerdict::Approve, false),
                (ReviewVerdict::RequestChanges, true),
                (ReviewVerdict::Approve, true),
            ],
            "plain",
        );
        assert_standings(&ledger, &[(&careful(), &expected)], backend.name);
        // A reviewer whose review is not scored yet: on the `all` board at 1200, as before.
        let open = request(&agent(1), "open");
        ledger.ingest(&open).unwrap().unwrap();
        ledger.ingest(&review(&rubber(), &open, ReviewVerdict::Comment)).unwrap().unwrap();
        let all = ledger.leaderboard_in(&Scope::All, None).unwrap();
        assert_eq!(all, ledger.leaderboard(None).unwrap());
        assert_eq!(all.len(), 2);
        assert!(ledger.leaderboard_in(&Scope::Verified, None).unwrap().is_empty());
        let reported = ledger.leaderboard_in(&Scope::Reported, None).unwrap();
        assert_eq!(reported, all[..1], "{}: reported lists the scored reviewers of all", backend.name);
    }
}

#[test]
fn handle_answers_leaderboard_queries_by_outcomes_and_domain() {
    for backend in crate::util::backends("handle_answers_domain") {
        let mut ledger = backend.open();
        ledger.trust(&authority().public()).unwrap();
        recorded(&mut ledger, &record(StandIn::Careful, CAREFUL_REPORT, 1, CALIBRATED_AT), &careful());
        recorded(&mut ledger, &record(StandIn::Rubber, RUBBER_REPORT, 1, CALIBRATED_AT), &rubber());
        let answer = |ledger: &mut Ledger, query: Value| -> (LeaderboardResult, Value) {
            match ledger.handle(&query.to_string()).unwrap() {
                Response::Reply(reply) => match &reply.message.content {
                    Content::LeaderboardResult(result) => {
                        (result.clone(), serde_json::from_str(reply.canonical()).unwrap())
                    }
                    other => panic!("{}: {other:?}", backend.name),
                },
                other => panic!("{}: {other:?}", backend.name),
            }
        };

        let (plain, wire) = answer(&mut ledger, json!({"type": "REVIEW_LEADERBOARD"}));
        assert_eq!(plain.leaderboard, ledger.leaderboard_in(&Scope::All, Some(20)).unwrap());
        // RFC-001's answer, with no addition it did not ask for.
        assert_eq!((plain.outcomes, plain.domain), (None, None));
        assert!(wire["content"].get("domain").is_none() && wire["content"].get("outcomes").is_none());

        let query = json!({"type": "REVIEW_LEADERBOARD", "content": {"domain": "off-by-one"}});
        let (domain, wire) = answer(&mut ledger, query);
        let off_by_one = Scope::Domain("off-by-one".into());
        assert_eq!(domain.leaderboard, ledger.leaderboard_in(&off_by_one, Some(20)).unwrap());
        assert_eq!(
            (domain.outcomes, domain.domain.as_deref()),
            (Some(Outcomes::Verified), Some("off-by-one"))
        );
        assert_eq!(
            (&wire["content"]["domain"], &wire["content"]["outcomes"]),
            (&json!("off-by-one"), &json!("verified"))
        );
        assert_eq!(domain.leaderboard[0].agent, careful().agent_id());
        assert_eq!(domain.leaderboard.len(), 2);

        // A signed query asks the same.
        let asker = agent(7);
        let signed = revcal_elo::sign_value(
            json!({"type": "REVIEW_LEADERBOARD", "ts": 1, "content": {"outcomes": "reported", "limit": 1}}),
            &asker,
        )
        .unwrap();
        let (reported, _) = answer(&mut ledger, serde_json::from_str(signed.canonical()).unwrap());
        assert!(reported.leaderboard.is_empty());
        assert_eq!(reported.outcomes, Some(Outcomes::Reported));
        let signed = revcal_elo::sign_value(
            json!({"type": "REVIEW_LEADERBOARD", "ts": 1, "content": {"outcomes": "verified", "limit": 1}}),
            &asker,
        )
        .unwrap();
        let (verified, _) = answer(&mut ledger, serde_json::from_str(signed.canonical()).unwrap());
        assert_eq!(verified.leaderboard, ledger.leaderboard_in(&Scope::Verified, Some(1)).unwrap());

        // A domain counts verified outcomes only; a domain that is not a category is refused.
        for (content, field) in [
            (json!({"domain": "off-by-one", "outcomes": "reported"}), "content.outcomes"),
            (json!({"domain": "  "}), "content.domain"),
            (json!({"outcomes": "most"}), "content.outcomes"),
        ] {
            let query = json!({"type": "REVIEW_LEADERBOARD", "content": content});
            match ledger.handle(&query.to_string()).unwrap() {
                Response::Rejected { code, field: Some(named), .. } => {
                    assert_eq!((code.as_str(), named.as_str()), ("invalid", field), "{query}");
                }
                other => panic!("{query}: {other:?}"),
            }
        }
    }
}
