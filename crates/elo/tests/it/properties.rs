//! No input makes the parsers panic, and every message survives a round trip through its
//! canonical form with the same id.

use crate::util::{agent, request, review};
use proptest::prelude::*;
use revcal_elo::{KeyFile, ReviewVerdict, SignedMessage, parse_strict, sign_value, verify_receipt};

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_text_never_panics(text in any::<String>()) {
        let _ = parse_strict(&text);
        let _ = SignedMessage::parse(&text);
        let _ = KeyFile::parse(&text);
        let _ = verify_receipt(&text, &agent(1).public());
    }

    #[test]
    fn json_shaped_text_never_panics(text in r#"\{("[a-z_]{1,8}":(-?[0-9]{1,3}|"[a-z#@ ]{0,6}"|\[\]|\{\}|true|null),?){0,6}\}"#) {
        let _ = SignedMessage::parse(&text);
        let _ = verify_receipt(&text, &agent(1).public());
    }

    #[test]
    fn signed_messages_round_trip(change in "[a-zA-Z0-9#][ -~]{0,39}", line in 1u64..100_000, body in "[a-zA-Z0-9 ]{1,30}") {
        let author = agent(1);
        let request = request(&author, &change);
        let review = review(&agent(2), &request, ReviewVerdict::Comment);
        for message in [&request, &review] {
            let again = SignedMessage::parse(message.canonical()).unwrap();
            prop_assert_eq!(&again.id, &message.id);
            let pretty = serde_json::to_string_pretty(&serde_json::from_str::<serde_json::Value>(message.canonical()).unwrap()).unwrap();
            prop_assert_eq!(&SignedMessage::parse(&pretty).unwrap().id, &message.id);
        }
        // The signed bytes are exactly what the RFC 8785 canonicalizer writes for the message
        // without its top-level `sig`, even when the content carries a `sig` field of its own.
        let nested = sign_value(
            serde_json::json!({"type": "REVIEW_REQUEST", "to": "#review", "ts": line,
                               "content": {"repo": "r", "change": change, "sig": body}}),
            &author,
        )
        .unwrap();
        for message in [&request, &review, &nested] {
            let mut value: serde_json::Value = serde_json::from_str(message.canonical()).unwrap();
            value.as_object_mut().unwrap().remove("sig");
            prop_assert_eq!(message.signed_bytes(), &serde_json_canonicalizer::to_vec(&value).unwrap()[..]);
            prop_assert!(SignedMessage::parse(message.canonical()).is_ok());
        }
        // Any content change breaks the signature.
        let mut value: serde_json::Value = serde_json::from_str(review.canonical()).unwrap();
        value["content"]["comments"][0]["line"] = serde_json::json!(line + 1_000_000);
        value["content"]["comments"][0]["body"] = serde_json::json!(body);
        prop_assert!(SignedMessage::from_value(value).is_err());
    }
}

/// A random stream: each step sends a new request, a review (by one of four agents, the
/// author included) of one of the requests so far, an outcome (by the author or a stranger),
/// or a copy of an earlier message. Open, closed, unknown-to-the-batch and replaced all
/// happen, in any order.
fn random_stream(steps: &[(u8, u8, u8)]) -> Vec<revcal_elo::SignedMessage> {
    use crate::util::{agent, outcome, request, review};
    let author = agent(1);
    let others: Vec<_> = (2..6).map(agent).collect();
    let verdicts = [
        revcal_elo::ReviewVerdict::Approve,
        revcal_elo::ReviewVerdict::RequestChanges,
        revcal_elo::ReviewVerdict::Comment,
    ];
    let mut requests: Vec<revcal_elo::SignedMessage> = Vec::new();
    let mut stream: Vec<revcal_elo::SignedMessage> = Vec::new();
    for (index, &(kind, pick, choice)) in steps.iter().enumerate() {
        let target = (!requests.is_empty()).then(|| requests[pick as usize % requests.len()].clone());
        match (kind % 8, target) {
            (0 | 1, _) | (_, None) => {
                let made = request(&author, &format!("change {index}"));
                requests.push(made.clone());
                stream.push(made);
            }
            (2..=4, Some(target)) => {
                let reviewer =
                    if choice % 9 == 0 { &author } else { &others[choice as usize % others.len()] };
                // A second review of the same verdict by the same reviewer is the same message
                // (a replay); the index in the comment makes each one new.
                let mut message = review(reviewer, &target, verdicts[choice as usize % 3]);
                if let revcal_elo::Content::Review(content) = &mut message.message.content {
                    content.comments[0].line = index as u64 + 1;
                }
                stream.push(revcal_elo::SignedMessage::sign(&message.message, reviewer).unwrap());
            }
            (5 | 6, Some(target)) => {
                let sender = if choice % 5 == 0 { &others[0] } else { &author };
                stream.push(outcome(sender, &target, choice % 3 == 0));
            }
            (_, Some(_)) => {
                let copy = stream[pick as usize % stream.len()].clone();
                stream.push(copy);
            }
        }
    }
    stream
}

/// The ledger, fed the stream in batches of any size, rates and refuses exactly as the pure
/// engine over the stream in order.
fn ledger_agrees_with_the_engine(
    ledger: &mut revcal_elo::Ledger,
    stream: &[revcal_elo::SignedMessage],
    batch: usize,
) {
    let mut codes = Vec::new();
    for chunk in stream.chunks(batch) {
        for outcome in ledger.ingest_batch(chunk).unwrap() {
            codes.push(outcome.err().map(|rejection| rejection.code()));
        }
    }
    let mut engine = revcal_elo::Engine::new(revcal_elo::Policy::default());
    let expected: Vec<_> =
        stream.iter().map(|message| engine.apply(message).err().map(|r| r.code())).collect();
    assert_eq!(codes, expected);
    assert_eq!(&ledger.standings().unwrap(), engine.standings());
    assert_eq!(ledger.scored_reviews(None).unwrap(), engine.scored());
    assert!(ledger.replay().unwrap().is_consistent());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn any_stream_in_any_batches_is_rated_as_the_engine_rates_it_on_sqlite(
        steps in proptest::collection::vec((any::<u8>(), any::<u8>(), any::<u8>()), 1..60),
        batch in 1usize..25,
    ) {
        let stream = random_stream(&steps);
        let dir = tempfile::tempdir().unwrap();
        let mut ledger = revcal_elo::Ledger::open(dir.path().join("l.sqlite")).unwrap();
        ledger_agrees_with_the_engine(&mut ledger, &stream, batch);
    }
}

proptest! {
    // A database per case: fewer cases than on SQLite.
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    #[test]
    fn any_stream_in_any_batches_is_rated_as_the_engine_rates_it_on_postgres(
        steps in proptest::collection::vec((any::<u8>(), any::<u8>(), any::<u8>()), 1..60),
        batch in 1usize..25,
    ) {
        let Some(database) = revcal_testpg::TestDatabase::create("property") else { return Ok(()) };
        let stream = random_stream(&steps);
        let location = revcal_elo::LedgerLocation::parse(database.url()).unwrap();
        let mut ledger = revcal_elo::Ledger::open_at(&location, None).unwrap();
        ledger_agrees_with_the_engine(&mut ledger, &stream, batch);
    }
}
