//! Review reputation from Rust: sign review messages, ingest them into a ledger, read the
//! leaderboard, answer a REVIEW_LEADERBOARD query, and verify a receipt offline.
//!
//! Run: `cargo run -p revcal-examples --example elo_reputation`

use revcal_elo::{
    Comment, Content, Keypair, Ledger, Message, OutcomeContent, RequestContent, Response, ReviewContent,
    ReviewVerdict, SignedMessage, sign_value, verify_receipt,
};
use serde_json::json;
use std::error::Error;

fn main() -> Result<(), Box<dyn Error>> {
    // Identities: fixed seeds keep the example's ids stable; `Keypair::generate()` (what
    // `revcal elo keygen` uses) draws from the OS random source.
    let author = Keypair::from_seed([1; 32]);
    let careful = Keypair::from_seed([2; 32]);
    let hasty = Keypair::from_seed([3; 32]);
    println!(
        "author {}, reviewers {} (careful) and {} (hasty)",
        author.agent_id(),
        careful.agent_id(),
        hasty.agent_id()
    );

    let send = |key: &Keypair, content: Content| -> Result<SignedMessage, Box<dyn Error>> {
        let message = Message { from: key.agent_id(), to: "#review".into(), ts: 1_700_000_000, content };
        Ok(SignedMessage::sign(&message, key)?)
    };

    let path = std::env::temp_dir().join(format!("revcal-elo-example-{}.sqlite", std::process::id()));
    let mut ledger = Ledger::open(&path)?;
    println!("ledger {} (issuer {})", path.display(), ledger.issuer());

    // Three changes; the careful reviewer asks for changes on the two that break.
    for (change, breaks) in [("PR #101", true), ("PR #102", false), ("PR #103", true)] {
        let request = send(
            &author,
            Content::Request(RequestContent {
                repo: Some("github.com/acme/payments".into()),
                change: Some(change.into()),
                ..Default::default()
            }),
        )?;
        let careful_verdict = if breaks { ReviewVerdict::RequestChanges } else { ReviewVerdict::Approve };
        let reviews = [(&careful, careful_verdict), (&hasty, ReviewVerdict::Approve)];
        let mut batch = vec![request.clone()];
        for (reviewer, verdict) in reviews {
            batch.push(send(
                reviewer,
                Content::Review(ReviewContent {
                    request_id: request.id.clone(),
                    verdict,
                    comments: vec![Comment {
                        file: "src/charge.rs".into(),
                        line: 88,
                        body: "amount can overflow".into(),
                    }],
                    summary: None,
                    name: None,
                }),
            )?);
        }
        batch.push(send(
            &author,
            Content::Outcome(OutcomeContent {
                request_id: request.id.clone(),
                merged: true,
                incident: breaks,
                incident_details: breaks.then(|| "double charge in production".to_owned()),
                calibration: None,
            }),
        )?);
        // One transaction per batch; each message gets its own verdict.
        for result in ledger.ingest_batch(&batch)? {
            if let Err(rejection) = result {
                println!("rejected: {rejection}");
            }
        }
    }

    // Ingesting a message twice, or a forged one, changes nothing.
    let again = send(
        &author,
        Content::Request(RequestContent {
            repo: Some("github.com/acme/payments".into()),
            change: Some("PR #101".into()),
            ..Default::default()
        }),
    )?;
    if let Err(rejection) = ledger.ingest(&again)? {
        println!("ingest again: {rejection}");
    }
    let forged = again.canonical().replace("PR #101", "PR #999");
    if let Err(error) = SignedMessage::parse(&forged) {
        println!("altered after signing: {error}");
    }

    println!("\nleaderboard:");
    for entry in ledger.leaderboard(None)? {
        let accuracy = entry.accuracy.map_or("-".to_owned(), |a| format!("{:.0}%", a * 100.0));
        println!(
            "  {}. {}  elo {}  reviews {}  accuracy {accuracy}",
            entry.rank, entry.agent, entry.elo, entry.reviews
        );
    }

    // What a chat server does with a REVIEW_LEADERBOARD: a signed REVIEW_LEADERBOARD_RESULT.
    let query = sign_value(
        json!({"type": "REVIEW_LEADERBOARD", "to": "#review", "ts": 1_700_000_500, "content": {"limit": 1}}),
        &hasty,
    )?;
    if let Response::Reply(reply) = ledger.handle(query.canonical())? {
        println!("\nhandle(REVIEW_LEADERBOARD) -> {}", reply.canonical());
    }
    // Anyone may ask without signing: the query as the protocol's own example writes it.
    if let Response::Reply(reply) = ledger.handle(r#"{"type": "REVIEW_LEADERBOARD"}"#)? {
        println!("\nhandle(unsigned REVIEW_LEADERBOARD) -> {}", reply.canonical());
    }

    // Receipts: portable, verifiable with the ledger's public key alone.
    let issuer = ledger.issuer_key().public()?;
    let receipts = ledger.receipts(&careful.agent_id())?;
    let first = receipts.first().ok_or("no receipts")?.to_canonical();
    println!("\nreceipt: {first}");
    println!("verifies with the issuer key: {}", verify_receipt(&first, &issuer).is_ok());
    println!("verifies with the author's key: {}", verify_receipt(&first, &author.public()).is_ok());
    let tampered = first.replace("\"elo_delta\":50", "\"elo_delta\":500");
    println!("verifies after raising elo_delta: {}", verify_receipt(&tampered, &issuer).is_ok());

    let replayed = ledger.replay()?;
    println!("\nreplay: {} messages, consistent: {}", replayed.messages, replayed.is_consistent());
    drop(ledger);
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
    }
    Ok(())
}
