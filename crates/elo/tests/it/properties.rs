//! No input makes the parsers panic, and every message survives a round trip through its
//! canonical form with the same id.

use crate::util::{agent, request, review};
use proptest::prelude::*;
use revcal_elo::{KeyFile, SignedMessage, Verdict, parse_strict, sign_value, verify_receipt};

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
        let review = review(&agent(2), &request, Verdict::Comment);
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
