//! RFC-001's own example messages (tests/fixtures/rfc-001, placeholders filled in), signed,
//! through `Ledger::handle` and `Ledger::ingest_lines`; receipts against the RFC's example.

use crate::util::agent;
use revcal_elo::{
    Keypair, Ledger, LineOutcome, MessageError, Response, SignedMessage, sign_value, verify_receipt,
};
use serde_json::{Value, json};

/// A fixture as the RFC writes it.
fn fixture(name: &str) -> Value {
    let path = format!("{}/tests/fixtures/rfc-001/{name}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

/// Fills the RFC's placeholders (`from` and `sig` come from signing; `request_id` is the
/// request's real id) and signs with `key`. `ts` is set when the example has none, as
/// `revcal elo sign` does.
fn signed(mut value: Value, key: &Keypair, request_id: Option<&str>) -> SignedMessage {
    let object = value.as_object_mut().unwrap();
    object.remove("sig");
    object.remove("from");
    object.entry("ts").or_insert(json!(1_709_500_000_000_u64));
    if let Some(id) = request_id {
        value["content"]["request_id"] = json!(id);
    }
    sign_value(value, key).unwrap_or_else(|error| panic!("the RFC's example is refused: {error}"))
}

/// The RFC's messages, in order: request, review, outcome (no incident); a second request
/// with the same review and an outcome with `incident_details`.
fn stream() -> Vec<SignedMessage> {
    let (requester, reviewer) = (agent(1), agent(2));
    let first = signed(fixture("request.json"), &requester, None);
    let mut again = fixture("request.json");
    again["ts"] = json!(1_706_889_600_001_u64);
    let second = signed(again, &requester, None);
    let mut messages = Vec::new();
    for (request, outcome) in [(first, "outcome.json"), (second, "outcome-incident.json")] {
        let id = request.id.to_string();
        messages.push(request);
        messages.push(signed(fixture("review.json"), &reviewer, Some(&id)));
        messages.push(signed(fixture(outcome), &requester, Some(&id)));
    }
    messages
}

/// The RFC's result example with real agent ids in place of `@agent1` and `@agent2`.
fn result_example() -> SignedMessage {
    let text = fixture("leaderboard-result.json")
        .to_string()
        .replace("@agent1", agent(3).agent_id().as_str())
        .replace("@agent2", agent(4).agent_id().as_str());
    signed(serde_json::from_str(&text).unwrap(), &agent(5), None)
}

#[test]
fn every_example_of_the_protocol_is_accepted_by_handle() {
    for backend in crate::util::backends("conformance_handle") {
        accepted_by_handle(&mut backend.open());
    }
}

fn accepted_by_handle(ledger: &mut Ledger) {
    let mut scored = Vec::new();
    for message in stream() {
        match ledger.handle(message.canonical()).unwrap() {
            Response::Stored(stored) => scored.extend(stored.scored),
            other => panic!("{}: {:?}", message.canonical(), other.to_json()),
        }
    }
    let outcomes: Vec<&str> = scored.iter().map(|s| s.outcome.as_str()).collect();
    assert_eq!(outcomes, ["false_positive", "caught_bug"]);

    // The query exactly as the RFC writes it, unsigned, and the same query signed.
    let rfc_query = fixture("leaderboard.json").to_string();
    let asker = agent(6);
    let signed_query = signed(fixture("leaderboard.json"), &asker, None);
    for (query, to) in
        [(rfc_query.as_str(), "#review".to_owned()), (signed_query.canonical(), asker.agent_id().to_string())]
    {
        let Response::Reply(reply) = ledger.handle(query).unwrap() else { panic!("{query}: no reply") };
        let value: Value = serde_json::from_str(reply.canonical()).unwrap();
        assert_eq!(value["type"], "REVIEW_LEADERBOARD_RESULT");
        assert_eq!(value["to"], to.as_str());
        // -5 and +25 at K 40: 1200 - 10 + 50.
        let row = &value["content"]["leaderboard"][0];
        assert_eq!(
            (&row["agent"], &row["elo"], &row["reviews"], &row["accuracy"]),
            (&json!(agent(2).agent_id()), &json!(1240), &json!(2), &json!(0.5))
        );
    }

    // The RFC's result is a valid message; the ledger neither stores nor answers one.
    let result = result_example();
    let revcal_elo::Content::LeaderboardResult(content) = &result.message.content else { panic!() };
    assert_eq!(
        content.leaderboard.iter().map(|row| (row.rank, row.elo, row.reviews)).collect::<Vec<_>>(),
        [(1, 1847.0, 156), (2, 1623.0, 89)]
    );
    let json = ledger.handle(result.canonical()).unwrap().to_json();
    assert_eq!((json["status"].as_str(), json["code"].as_str()), (Some("rejected"), Some("not_stored")));
}

#[test]
fn every_example_of_the_protocol_goes_through_ingest_with_the_same_leaderboard() {
    let [sqlite, rest @ ..] = &crate::util::backends("conformance_ingest")[..] else { unreachable!() };
    let mut by_handle = sqlite.open();
    for message in stream() {
        by_handle.handle(message.canonical()).unwrap();
    }
    let mut lines: Vec<String> = stream().iter().map(|m| m.canonical().to_owned()).collect();
    let rfc_query = fixture("leaderboard.json").to_string();
    lines.push(rfc_query);
    lines.push(signed(fixture("leaderboard.json"), &agent(6), None).canonical().to_owned());
    lines.push(result_example().canonical().to_owned());
    let texts: Vec<&str> = lines.iter().map(String::as_str).collect();
    // Ingested into a second SQLite ledger, and into PostgreSQL when there is a server.
    let second = crate::util::backends("conformance_ingest_sqlite");
    for backend in rest.iter().chain(&second[..1]) {
        ingested_as_handled(&mut backend.open(), &texts, &by_handle);
    }
}

fn ingested_as_handled(ledger: &mut Ledger, texts: &[&str], by_handle: &Ledger) {
    let outcomes = ledger.ingest_lines(texts).unwrap();
    let stored = outcomes.iter().filter(|(_, o)| o.is_stored()).count();
    assert_eq!(stored, 6);
    assert!(matches!(outcomes[6].1, LineOutcome::Invalid(MessageError::UnsignedQuery)), "{:?}", outcomes[6]);
    for (_, outcome) in &outcomes[7..] {
        let LineOutcome::Rejected(rejection) = outcome else { panic!("{outcome:?}") };
        assert_eq!(rejection.code(), "not_stored");
    }
    assert_eq!(ledger.leaderboard(None).unwrap(), by_handle.leaderboard(None).unwrap());
    assert!(ledger.replay().unwrap().is_consistent());
}

#[test]
fn receipts_carry_every_field_of_the_protocols_receipt() {
    for backend in crate::util::backends("conformance_receipts") {
        receipts_with_every_field(&mut backend.open());
    }
}

fn receipts_with_every_field(ledger: &mut Ledger) {
    for message in stream() {
        ledger.ingest(&message).unwrap().unwrap();
    }
    let receipts = ledger.receipts(&agent(2).agent_id()).unwrap();
    let example = fixture("receipt.json");
    let issuer = ledger.issuer_key().public().unwrap();
    for receipt in &receipts {
        let text = receipt.to_canonical();
        let value: Value = serde_json::from_str(&text).unwrap();
        for (field, rfc_value) in example.as_object().unwrap() {
            let ours = &value[field.as_str()];
            let same_kind = std::mem::discriminant(ours) == std::mem::discriminant(rfc_value);
            assert!(same_kind, "`{field}`: the RFC has {rfc_value}, the receipt {ours}");
        }
        assert!(verify_receipt(&text, &issuer).is_ok());
    }
    let lines: Vec<(&str, &str, f64, u64)> =
        receipts.iter().map(|r| (r.content.as_str(), r.outcome.as_str(), r.elo_delta, r.ts)).collect();
    assert_eq!(
        lines,
        [
            (
                "REVIEW:REQUEST_CHANGES on Fix null pointer in auth handler",
                "false_positive",
                -10.0,
                1_709_481_600_000
            ),
            (
                "REVIEW:REQUEST_CHANGES on Fix null pointer in auth handler",
                "caught_bug",
                50.0,
                1_709_481_600_000
            ),
        ]
    );
}
