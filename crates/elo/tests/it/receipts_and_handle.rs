//! Receipts verify with the issuer's key alone and fail with any other key or after any
//! byte changes; `handle` answers a leaderboard query with a signed reply.

use crate::util::{TS, agent, outcome, request, review};
use revcal_elo::{Ledger, Response, ReviewVerdict, SignedMessage, sign_value, verify_receipt};
use serde_json::json;

fn scored_ledger(backend: &crate::util::Backend) -> Ledger {
    let author = agent(1);
    let reviewer = agent(2);
    let mut ledger = backend.open();
    for n in 0..3 {
        let target = request(&author, &format!("PR {n}"));
        ledger.ingest(&target).unwrap().unwrap();
        ledger.ingest(&review(&reviewer, &target, ReviewVerdict::RequestChanges)).unwrap().unwrap();
        ledger.ingest(&outcome(&author, &target, n == 1)).unwrap().unwrap();
    }
    ledger
}

#[test]
fn receipts_verify_with_the_issuer_key_only_and_break_on_any_byte_change() {
    for backend in crate::util::backends("receipts_verify_with_the") {
        receipts_verify_with_the_issuer_key_only_and_break_on_any_byte_change_on(scored_ledger(&backend));
    }
}

fn receipts_verify_with_the_issuer_key_only_and_break_on_any_byte_change_on(ledger: Ledger) {
    let receipts = ledger.receipts(&agent(2).agent_id()).unwrap();
    assert_eq!(receipts.len(), 3);
    let classes: Vec<&str> = receipts.iter().map(|r| r.outcome.as_str()).collect();
    assert_eq!(classes, ["false_positive", "caught_bug", "false_positive"]);
    assert_eq!(receipts.iter().map(|r| r.elo_delta).collect::<Vec<_>>(), [-10.0, 50.0, -10.0]);
    // The protocol's `content` line names the review; the ids are in revcal's `review`; `ts`
    // is the outcome's, in milliseconds (the test outcomes are dated in seconds).
    assert_eq!(receipts[1].content, "REVIEW:REQUEST_CHANGES on PR 1");
    assert_eq!(receipts[1].review.verdict, ReviewVerdict::RequestChanges);
    assert!(receipts[1].review.incident);
    assert_eq!(receipts[1].ts, TS * 1000);

    let issuer = ledger.issuer_key().public().unwrap();
    let text = receipts[1].to_canonical();
    assert_eq!(verify_receipt(&text, &issuer).unwrap(), receipts[1]);
    assert_eq!(receipts[1].issuer, ledger.issuer());

    // Any other key: the author's, the reviewer's, another ledger's.
    let dir = tempfile::tempdir().unwrap();
    let other_ledger = Ledger::open(dir.path().join("other.sqlite")).unwrap();
    for key in [agent(1).public(), agent(2).public(), other_ledger.issuer_key().public().unwrap()] {
        assert!(verify_receipt(&text, &key).is_err());
    }

    // Every single-byte change of the canonical receipt fails.
    let bytes = text.as_bytes();
    for position in 0..bytes.len() {
        for replacement in [b'"', bytes[position] ^ 0x01, bytes[position] ^ 0x20] {
            if replacement == bytes[position] {
                continue;
            }
            let mut changed = bytes.to_vec();
            changed[position] = replacement;
            let Ok(changed) = String::from_utf8(changed) else { continue };
            assert!(
                verify_receipt(&changed, &issuer).is_err(),
                "byte {position} changed to {:?} still verifies: {changed}",
                replacement as char
            );
        }
    }
}

#[test]
fn the_receipts_of_an_outcome_just_stored_are_the_ones_receipts_issues() {
    for backend in crate::util::backends("the_receipts_of_an_outcome") {
        let author = agent(1);
        let mut ledger = backend.open();
        let target = request(&author, "PR 9");
        ledger.ingest(&target).unwrap().unwrap();
        for (n, verdict) in [(2, ReviewVerdict::RequestChanges), (3, ReviewVerdict::Approve)] {
            ledger.ingest(&review(&agent(n), &target, verdict)).unwrap().unwrap();
        }
        let stored = ledger.ingest(&outcome(&author, &target, true)).unwrap().unwrap();
        assert_eq!(stored.scored.len(), 2);
        let receipts = ledger.receipts_for(&stored.scored).unwrap();
        let classes: Vec<&str> = receipts.iter().map(|r| r.outcome.as_str()).collect();
        assert_eq!(classes, ["caught_bug", "missed_bug"]);
        for (receipt, n) in receipts.iter().zip([2, 3]) {
            assert_eq!(ledger.receipts(&agent(n).agent_id()).unwrap(), std::slice::from_ref(receipt));
            assert_eq!(receipt.content, format!("REVIEW:{} on PR 9", receipt.review.verdict.as_str()));
        }
        assert!(ledger.receipts_for(&[]).unwrap().is_empty());
    }
}

#[test]
fn handle_stores_rejects_and_answers_leaderboard_queries() {
    for backend in crate::util::backends("handle_stores_rejects_an") {
        handle_stores_rejects_and_answers_leaderboard_queries_on(scored_ledger(&backend));
    }
}

fn handle_stores_rejects_and_answers_leaderboard_queries_on(mut ledger: Ledger) {
    let asker = agent(7);
    let query = sign_value(
        json!({"type": "REVIEW_LEADERBOARD", "to": "#review", "ts": TS, "content": {"limit": 5}}),
        &asker,
    )
    .unwrap();
    let Response::Reply(reply) = ledger.handle(query.canonical()).unwrap() else { panic!("no reply") };
    // The reply is a valid, signed protocol message from the ledger to the asker.
    let reparsed = SignedMessage::parse(reply.canonical()).unwrap();
    assert_eq!(reparsed.message.from, ledger.issuer());
    assert_eq!(reparsed.message.to, asker.agent_id().to_string());
    let revcal_elo::Content::LeaderboardResult(result) = &reparsed.message.content else { panic!() };
    assert_eq!(result.in_reply_to.as_ref(), Some(&query.id));
    assert_eq!(result.leaderboard.len(), 1);
    assert_eq!((result.leaderboard[0].elo, result.leaderboard[0].reviews), (1200.0 - 10.0 + 50.0 - 10.0, 3));

    // Queries are answered, not stored.
    let count = ledger.message_count().unwrap();
    ledger.handle(query.canonical()).unwrap();
    assert_eq!(ledger.message_count().unwrap(), count);

    // A new request is stored; a broken one is rejected with the field.
    let fresh = request(&agent(1), "PR 99");
    assert!(matches!(ledger.handle(fresh.canonical()).unwrap(), Response::Stored(_)));
    let Response::Rejected { code, .. } = ledger.handle(fresh.canonical()).unwrap() else { panic!() };
    assert_eq!(code, "replayed");
    let broken = fresh.canonical().replace("PR 99", "PR 98");
    let Response::Rejected { code, field, .. } = ledger.handle(&broken).unwrap() else { panic!() };
    assert_eq!((code.as_str(), field.as_deref()), ("invalid", Some("sig")));
    let json = ledger.handle("{}").unwrap().to_json();
    assert_eq!(json["status"], "rejected");
    assert_eq!(json["field"], "type");
}

#[test]
fn an_unsigned_query_gets_the_leaderboard_in_the_protocols_shape() {
    for backend in crate::util::backends("an_unsigned_query_gets_t") {
        an_unsigned_query_gets_the_leaderboard_in_the_protocols_shape_on(scored_ledger(&backend));
    }
}

fn an_unsigned_query_gets_the_leaderboard_in_the_protocols_shape_on(mut ledger: Ledger) {
    let count = ledger.message_count().unwrap();
    let query = r#"{"type": "REVIEW_LEADERBOARD"}"#;
    let Response::Reply(reply) = ledger.handle(query).unwrap() else { panic!("no reply") };
    let value: serde_json::Value = serde_json::from_str(reply.canonical()).unwrap();
    assert_eq!(value["type"], "REVIEW_LEADERBOARD_RESULT");
    let rows = value["content"]["leaderboard"].as_array().unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["agent"], agent(2).agent_id().as_str());
    assert_eq!(rows[0]["elo"], 1230);
    assert_eq!(rows[0]["reviews"], 3);
    assert_eq!(rows[0]["accuracy"], 1.0 / 3.0);
    // Addressed to the review channel (the query names no asker), signed by the ledger,
    // and in reply to the query's canonical form.
    assert_eq!((value["to"].as_str(), &reply.message.from), (Some("#review"), &ledger.issuer()));
    assert_eq!(value["content"]["in_reply_to"].as_str().map(str::len), Some(64));
    assert!(SignedMessage::parse(reply.canonical()).is_ok());
    assert_eq!(ledger.message_count().unwrap(), count, "a query is never stored");

    // A name and a limit are honoured; anything else is refused with the field named.
    let asker = agent(9).agent_id();
    let named = format!(r#"{{"type": "REVIEW_LEADERBOARD", "from": "{asker}", "content": {{"limit": 1}}}}"#);
    let Response::Reply(reply) = ledger.handle(&named).unwrap() else { panic!("no reply") };
    assert_eq!(reply.message.to, asker.to_string());
    for (bad, field) in [
        (r#"{"type": "REVIEW_LEADERBOARD", "content": {"limit": 0}}"#, "content.limit"),
        (r#"{"type": "REVIEW_LEADERBOARD", "from": "me"}"#, "from"),
        (r#"{"type": "REVIEW_LEADERBOARD", "colour": "red"}"#, "colour"),
    ] {
        let json = ledger.handle(bad).unwrap().to_json();
        assert_eq!(
            (json["status"].as_str(), json["field"].as_str()),
            (Some("rejected"), Some(field)),
            "{bad}"
        );
    }
    // Ingest does not store it, and says so without calling it malformed.
    let error = SignedMessage::parse(query).unwrap_err();
    assert!(matches!(error, revcal_elo::MessageError::UnsignedQuery), "{error}");
}
