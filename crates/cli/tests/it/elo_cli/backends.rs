//! The same commands on SQLite and PostgreSQL: a scripted stream ingested by four processes at
//! once gives, on both, exactly the leaderboard of the pure engine over the stream in order.
//! The PostgreSQL half runs when `REVCAL_TEST_POSTGRES` names a server (`.ci/run` starts a
//! throwaway one) and says it was skipped otherwise.

use super::{json_out, revcal, revcal_command, stderr, stdout};
use revcal_elo::{
    Content, Keypair, Message, OutcomeContent, Policy, RequestContent, ReviewContent, ReviewVerdict,
    SignedMessage,
};
use serde_json::{Value, json};
use std::path::Path;
use std::process::Stdio;

fn send(key: &Keypair, ts: u64, content: Content) -> SignedMessage {
    let message = Message { from: key.agent_id(), to: "#review".into(), ts, content };
    SignedMessage::sign(&message, key).unwrap()
}

fn review(key: &Keypair, request: &SignedMessage, verdict: ReviewVerdict, ts: u64) -> SignedMessage {
    let content = Content::Review(ReviewContent {
        request_id: request.id.clone(),
        verdict,
        comments: vec![],
        summary: None,
        name: None,
    });
    send(key, ts, content)
}

fn outcome(key: &Keypair, request: &SignedMessage, incident: bool, ts: u64) -> SignedMessage {
    let content = Content::Outcome(OutcomeContent {
        request_id: request.id.clone(),
        merged: true,
        incident,
        incident_details: incident.then(|| "rollback".to_owned()),
        calibration: None,
    });
    send(key, ts, content)
}

/// 30 changes by one author, each reviewed by three reviewers (30 scored reviews each, so
/// every reviewer crosses the K boundary at 20), with replaced reviews (the latest counts),
/// self-reviews, strangers' outcomes and late reviews (all refused) along the way.
fn scripted_stream() -> Vec<SignedMessage> {
    let author = Keypair::from_seed([1; 32]);
    let reviewers: Vec<Keypair> = (2..5).map(|seed| Keypair::from_seed([seed; 32])).collect();
    let stranger = Keypair::from_seed([9; 32]);
    let verdicts = [ReviewVerdict::Approve, ReviewVerdict::RequestChanges, ReviewVerdict::Comment];
    let mut stream = Vec::new();
    for n in 0..30usize {
        let ts = 1_700_000_000_000 + n as u64 * 1000;
        let content = Content::Request(RequestContent {
            repo: Some("github.com/acme/api".into()),
            change: Some(format!("pull/{n}")),
            ..Default::default()
        });
        let request = send(&author, ts, content);
        stream.push(request.clone());
        for (index, reviewer) in reviewers.iter().enumerate() {
            if n % 5 == 0 && index == 0 {
                // Replaced below by a second review of the same reviewer.
                stream.push(review(reviewer, &request, ReviewVerdict::Approve, ts + 1));
            }
            stream.push(review(reviewer, &request, verdicts[(n * 7 + index) % 3], ts + 2));
        }
        if n % 7 == 3 {
            stream.push(review(&author, &request, ReviewVerdict::Approve, ts + 3));
        }
        if n % 6 == 1 {
            stream.push(outcome(&stranger, &request, true, ts + 4));
        }
        stream.push(outcome(&author, &request, n % 3 == 0 || n % 11 == 4, ts + 5));
        if n % 4 == 2 {
            stream.push(review(&reviewers[1], &request, ReviewVerdict::RequestChanges, ts + 6));
        }
    }
    stream
}

/// The leaderboard as `revcal elo leaderboard --json` prints it, from the pure engine:
/// (agent, elo, reviews, accuracy) by rank.
fn engine_leaderboard(stream: &[SignedMessage]) -> (Vec<Value>, usize) {
    let (standings, rejected) = revcal_elo::rate(stream, Policy::default());
    let mut rows: Vec<_> = standings.into_iter().collect();
    rows.sort_by(|(a, x), (b, y)| {
        y.rating.total_cmp(&x.rating).then(y.reviews.cmp(&x.reviews)).then(a.as_str().cmp(b.as_str()))
    });
    let rows = rows
        .into_iter()
        .map(|(agent, standing)| json!([agent, standing.rating, standing.reviews, standing.accuracy()]))
        .collect();
    (rows, rejected.len())
}

fn leaderboard(dir: &Path, ledger: &str) -> Vec<Value> {
    let output = revcal(dir, &["elo", "leaderboard", "--limit", "100", "--json", "--ledger", ledger]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    json_out(&output)
        .as_array()
        .unwrap()
        .iter()
        .map(|row| json!([row["agent"], row["elo"], row["reviews"], row["accuracy"]]))
        .collect()
}

/// Four `revcal elo ingest` processes at once, each with the whole stream, in batches of 3;
/// returns the messages they stored between them.
fn four_processes(dir: &Path, ledger: &str) -> usize {
    let children: Vec<_> = (0..4)
        .map(|_| {
            revcal_command(
                dir,
                &["elo", "ingest", "stream.jsonl", "--ledger", ledger, "--batch-size", "3", "--json"],
            )
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
        })
        .collect();
    let mut stored = 0;
    for child in children {
        let output = child.wait_with_output().unwrap();
        assert_eq!(output.status.code(), Some(1), "some lines are refused: {}", stderr(&output));
        let report = json_out(&output);
        // Named as messages name it: a URL's password, if any, as `***`.
        assert_eq!(report["ledger"], revcal_elo::LedgerLocation::parse(ledger).unwrap().to_string());
        stored += report["stored"].as_u64().unwrap() as usize;
    }
    stored
}

fn check(dir: &Path, ledger: &str, scored: usize) {
    let output = revcal(dir, &["elo", "check", "--json", "--ledger", ledger]);
    assert_eq!(output.status.code(), Some(0), "{ledger}: {}", stdout(&output));
    let report = json_out(&output);
    assert_eq!(
        (report["consistent"].as_bool(), &report["integrity"]),
        (Some(true), &json!(["ok"])),
        "{report}"
    );
    assert_eq!(report["replay"]["scored_reviews"], scored, "{report}");
}

#[test]
fn four_concurrent_processes_give_the_engines_leaderboard_on_sqlite_and_postgres() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let stream = scripted_stream();
    let lines: String = stream.iter().map(|m| format!("{}\n", m.canonical())).collect();
    std::fs::write(d.join("stream.jsonl"), lines).unwrap();
    let (expected, rejected) = engine_leaderboard(&stream);
    let valid = stream.len() - rejected;
    assert_eq!(expected.len(), 3);
    assert!(rejected >= 10, "the script exercises the refusals: {rejected}");

    // One process: the reference run on SQLite.
    let output = revcal(d, &["elo", "ingest", "stream.jsonl", "--ledger", "one.sqlite", "--json"]);
    assert_eq!(json_out(&output)["stored"], valid, "{}", stderr(&output));
    assert_eq!(leaderboard(d, "one.sqlite"), expected);

    let database = revcal_testpg::TestDatabase::create("cli_four_processes");
    let mut ledgers = vec!["four.sqlite".to_owned()];
    ledgers.extend(database.as_ref().map(|database| database.url().to_owned()));
    for ledger in &ledgers {
        // Every message that passes the rules is stored exactly once between the four;
        // each process stores a message only after every earlier one is in, so the
        // order, and with it every rating, is the stream's.
        assert_eq!(four_processes(d, ledger), valid, "{ledger}");
        assert_eq!(leaderboard(d, ledger), expected, "{ledger}");
        check(d, ledger, 90);
    }
}

#[test]
fn every_command_works_on_postgres_by_flag_or_environment() {
    let Some(database) = revcal_testpg::TestDatabase::create("cli_commands") else { return };
    let url = database.url();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let stream = scripted_stream();
    let lines: String = stream.iter().map(|m| format!("{}\n", m.canonical())).collect();
    std::fs::write(d.join("stream.jsonl"), lines).unwrap();

    // REVCAL_LEDGER_URL names the ledger, and wins over REVCAL_LEDGER.
    let output = revcal_command(d, &["elo", "ingest", "stream.jsonl", "--json"])
        .env("REVCAL_LEDGER_URL", url)
        .env("REVCAL_LEDGER", "not-this.sqlite")
        .output()
        .unwrap();
    let shown = revcal_elo::LedgerLocation::parse(url).unwrap().to_string();
    assert_eq!(json_out(&output)["ledger"], shown, "{}", stderr(&output));
    assert!(!d.join("not-this.sqlite").exists() && !d.join("revcal-ledger.sqlite").exists());

    // Receipts from PostgreSQL verify offline with the issuer key.
    let reviewer = Keypair::from_seed([3; 32]).agent_id().to_string();
    let output = revcal(d, &["elo", "receipts", &reviewer, "--json", "--ledger", url]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    std::fs::write(d.join("receipts.json"), &output.stdout).unwrap();
    assert_eq!(json_out(&output).as_array().map(Vec::len), Some(30));
    let output = revcal(d, &["elo", "issuer-key", "--out", "ledger.pub", "--ledger", url]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let output = revcal(d, &["elo", "verify-receipt", "receipts.json", "--issuer-key", "ledger.pub"]);
    assert_eq!(output.status.code(), Some(0), "{}{}", stdout(&output), stderr(&output));

    // `handle` answers the protocol's unsigned query from PostgreSQL.
    let mut child = revcal_command(d, &["elo", "handle", "--ledger", url])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), br#"{"type": "REVIEW_LEADERBOARD"}"#)
        .unwrap();
    let reply = child.wait_with_output().unwrap();
    let value = json_out(&reply);
    let (expected, _) = engine_leaderboard(&stream);
    // Canonical JSON writes 1670.0 as 1670.
    assert_eq!(value["content"]["leaderboard"][0]["elo"].as_f64(), expected[0][1].as_f64(), "{value}");

    // A server that is not there: exit 2, the URL named without its password.
    let gone = "postgres://revcal:hunter2@127.0.0.1:1/ledger?connect_timeout=5";
    let output = revcal(d, &["elo", "leaderboard", "--ledger", gone]);
    assert_eq!(output.status.code(), Some(2));
    let message = stderr(&output);
    assert!(message.contains("postgresql://revcal:***@127.0.0.1:1/ledger"), "{message}");
    assert!(!message.contains("hunter2"), "{message}");
}

/// Four processes with four different streams (the same reviewers in all of them) at once,
/// one message per transaction: whatever order their transactions take, each rating is
/// the fold of the scored reviews in the order the ledger stored them, as `elo check`
/// recomputes from the messages. Two writers reading the same rating before either
/// writes it back would lose an update, and the check would say so.
#[test]
fn four_processes_with_different_streams_keep_every_rating_exact() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let author = Keypair::from_seed([1; 32]);
    let reviewers: Vec<Keypair> = (2..5).map(|seed| Keypair::from_seed([seed; 32])).collect();
    let verdicts = [ReviewVerdict::Approve, ReviewVerdict::RequestChanges, ReviewVerdict::Comment];
    let mut parts = vec![String::new(); 4];
    for n in 0..160usize {
        let ts = 1_700_000_000_000 + n as u64;
        let content =
            Content::Request(RequestContent { change: Some(format!("c{n}")), ..Default::default() });
        let request = send(&author, ts, content);
        let mut story = vec![request.clone()];
        for (index, reviewer) in reviewers.iter().enumerate() {
            story.push(review(reviewer, &request, verdicts[(n + index) % 3], ts));
        }
        story.push(outcome(&author, &request, n % 3 == 0, ts));
        parts[n % 4].extend(story.iter().map(|m| format!("{}\n", m.canonical())));
    }
    for (index, part) in parts.iter().enumerate() {
        std::fs::write(d.join(format!("part{index}.jsonl")), part).unwrap();
    }
    let database = revcal_testpg::TestDatabase::create("cli_different_streams");
    let mut ledgers = vec!["parts.sqlite".to_owned()];
    ledgers.extend(database.as_ref().map(|database| database.url().to_owned()));
    for ledger in &ledgers {
        let children: Vec<_> = (0..4)
            .map(|index| {
                let file = format!("part{index}.jsonl");
                revcal_command(
                    d,
                    &["elo", "ingest", &file, "--ledger", ledger, "--batch-size", "1", "--json"],
                )
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
            })
            .collect();
        for child in children {
            let output = child.wait_with_output().unwrap();
            assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
            assert_eq!(json_out(&output)["stored"], 200);
        }
        check(d, ledger, 480);
    }
}
