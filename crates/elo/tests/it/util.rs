//! Builders for signed test messages (fixed seeds: deterministic ids).
use revcal_elo::{
    Comment, Content, Keypair, Message, OutcomeContent, RequestContent, ReviewContent, SignedMessage, Verdict,
};

pub(crate) const TS: u64 = 1_700_000_000;

pub(crate) fn agent(seed: u8) -> Keypair {
    Keypair::from_seed([seed; 32])
}

pub(crate) fn send(key: &Keypair, content: Content) -> SignedMessage {
    let message = Message { from: key.agent_id(), to: "#review".into(), ts: TS, content };
    SignedMessage::sign(&message, key).unwrap()
}

pub(crate) fn request(key: &Keypair, change: &str) -> SignedMessage {
    send(
        key,
        Content::Request(RequestContent {
            repo: Some("github.com/acme/api".into()),
            change: Some(change.into()),
            ..Default::default()
        }),
    )
}

pub(crate) fn review(key: &Keypair, request: &SignedMessage, verdict: Verdict) -> SignedMessage {
    send(
        key,
        Content::Review(ReviewContent {
            request_id: request.id.clone(),
            verdict,
            comments: vec![Comment { file: "src/lib.rs".into(), line: 12, body: "check the bounds".into() }],
            summary: None,
        }),
    )
}

pub(crate) fn outcome(key: &Keypair, request: &SignedMessage, incident: bool) -> SignedMessage {
    send(
        key,
        Content::Outcome(OutcomeContent {
            request_id: request.id.clone(),
            merged: true,
            incident,
            incident_details: incident.then(|| "outage in checkout".to_owned()),
        }),
    )
}
