//! `revcal elo ...` run as a user runs it: real processes, real SQLite files, a real
//! PostgreSQL server when `REVCAL_TEST_POSTGRES` names one, real signals.

use revcal_elo::{
    Content, KeyFile, Keypair, Ledger, Message, OutcomeContent, RequestContent, ReviewContent, ReviewVerdict,
    SignedMessage,
};
use serde_json::{Value, json};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

mod backends;
mod calibrated;
mod domains;
mod faults;
mod foreign;
mod key_theft;
mod limits;
mod names;
mod rfc;
mod secrets;
mod tampered;
mod verified;

fn revcal_command(dir: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_revcal"));
    command
        .args(args)
        .current_dir(dir)
        .env_remove("REVCAL_LEDGER")
        .env_remove("REVCAL_LEDGER_URL")
        .env_remove("NO_COLOR")
        .env_remove("RUST_LOG");
    command
}

fn revcal(dir: &Path, args: &[&str]) -> Output {
    revcal_command(dir, args).output().expect("revcal runs")
}

fn revcal_stdin(dir: &Path, args: &[&str], input: &str) -> Output {
    let mut child = revcal_command(dir, args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("revcal runs");
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).unwrap()
}

fn stderr(output: &Output) -> String {
    String::from_utf8(output.stderr.clone()).unwrap()
}

fn json_out(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}{}", stdout(output), stderr(output)))
}

/// An agent made by `revcal elo keygen`: its key file and id.
struct CliAgent {
    key: PathBuf,
    id: String,
}

fn keygen(dir: &Path, name: &str) -> CliAgent {
    let key = dir.join(format!("{name}.key"));
    let output = revcal(dir, &["elo", "keygen", "--out", key.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let id = stdout(&output).trim().to_owned();
    let file = KeyFile::parse(&std::fs::read_to_string(&key).unwrap()).unwrap();
    assert_eq!(file.agent.as_str(), id);
    CliAgent { key, id }
}

/// Signs `message` with `revcal elo sign - --key`, returning the signed line and its id.
fn sign(dir: &Path, agent: &CliAgent, message: Value) -> (String, String) {
    let output =
        revcal_stdin(dir, &["elo", "sign", "-", "--key", agent.key.to_str().unwrap()], &message.to_string());
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let line = stdout(&output).trim().to_owned();
    // The printed line is the canonical form, so its id is the SHA-256 of the line.
    let id = SignedMessage::parse(&line).unwrap().id.to_string();
    (line, id)
}

fn request_json(change: &str) -> Value {
    json!({"type": "REVIEW_REQUEST", "to": "#review", "ts": 1_700_000_000,
           "content": {"repo": "github.com/acme/api", "change": change}})
}

fn review_json(request_id: &str, verdict: &str) -> Value {
    json!({"type": "REVIEW", "to": "#review", "ts": 1_700_000_100,
           "content": {"request_id": request_id, "verdict": verdict,
                       "comments": [{"file": "src/pay.rs", "line": 42, "body": "unchecked overflow"}]}})
}

fn outcome_json(request_id: &str, incident: bool) -> Value {
    let mut content = json!({"request_id": request_id, "merged": true, "incident": incident});
    if incident {
        content["incident_details"] = json!("checkout outage");
    }
    json!({"type": "REVIEW_OUTCOME", "to": "#review", "ts": 1_700_000_200, "content": content})
}

/// The acceptance scenario through the CLI: keys from `keygen`, messages from `sign`, one
/// `ingest`, and the leaderboard equal to the hand computation below.
#[test]
fn scripted_three_agent_sequence_matches_the_hand_computation() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (a, b, c) = (keygen(d, "a"), keygen(d, "b"), keygen(d, "c"));
    let mut lines: Vec<(String, Option<&str>)> = Vec::new();
    let mut push = |line: String, expected: Option<&'static str>| lines.push((line, expected));
    // Warm-up: 17 requests by A, each approved by B, no incident: B = 1200 + 17 x (+5 x 40/20) = 1370.
    for n in 0..17 {
        let (request, id) = sign(d, &a, request_json(&format!("routine {n}")));
        push(request, None);
        push(sign(d, &b, review_json(&id, "APPROVE")).0, None);
        push(sign(d, &a, outcome_json(&id, false)).0, None);
    }
    // R1 (A): B RC, C APPROVE, incident. B +25x2 = +50 -> 1420 (18); C -30x2 = -60 -> 1140.
    let (r1, r1_id) = sign(d, &a, request_json("R1"));
    push(r1, None);
    push(sign(d, &b, review_json(&r1_id, "REQUEST_CHANGES")).0, None);
    push(sign(d, &c, review_json(&r1_id, "APPROVE")).0, None);
    push(sign(d, &a, outcome_json(&r1_id, true)).0, None);
    // R2 (A): B COMMENT, C RC, no incident. B +0 -> 1420 (19); C -5x2 = -10 -> 1130.
    let (r2, r2_id) = sign(d, &a, request_json("R2"));
    push(r2, None);
    push(sign(d, &b, review_json(&r2_id, "COMMENT")).0, None);
    push(sign(d, &c, review_json(&r2_id, "REQUEST_CHANGES")).0, None);
    push(sign(d, &a, outcome_json(&r2_id, false)).0, None);
    // R3 (C): B APPROVE, A RC, incident; C's self-review and A's outcome refused.
    // B: 19 before, K 40: -30x2 = -60 -> 1360 (20). A: +25x2 = +50 -> 1250 (1).
    let (r3, r3_id) = sign(d, &c, request_json("R3"));
    push(r3, None);
    push(sign(d, &b, review_json(&r3_id, "APPROVE")).0, None);
    push(sign(d, &a, review_json(&r3_id, "REQUEST_CHANGES")).0, None);
    push(sign(d, &c, review_json(&r3_id, "APPROVE")).0, Some("self_review"));
    push(sign(d, &a, outcome_json(&r3_id, false)).0, Some("outcome_not_from_requester"));
    push(sign(d, &c, outcome_json(&r3_id, true)).0, None);
    // R4 (A): B APPROVE then RC (latest counts), C COMMENT, incident.
    // B: 20 before, K 20: +25 -> 1385 (21). C: 0 -> 1130 (3).
    let (r4, r4_id) = sign(d, &a, request_json("R4"));
    push(r4, None);
    push(sign(d, &b, review_json(&r4_id, "APPROVE")).0, None);
    push(sign(d, &c, review_json(&r4_id, "COMMENT")).0, None);
    push(sign(d, &b, review_json(&r4_id, "REQUEST_CHANGES")).0, None);
    push(sign(d, &a, outcome_json(&r4_id, true)).0, None);
    // R5 (A): B APPROVE, C APPROVE, no incident. B: K 20: +5 -> 1390 (22). C: +5x2 = +10 -> 1140 (4).
    // Then a late review, a second outcome and a replay, all refused.
    let (r5, r5_id) = sign(d, &a, request_json("R5"));
    push(r5, None);
    push(sign(d, &b, review_json(&r5_id, "APPROVE")).0, None);
    push(sign(d, &c, review_json(&r5_id, "APPROVE")).0, None);
    let (first_outcome, _) = sign(d, &a, outcome_json(&r5_id, false));
    push(first_outcome.clone(), None);
    push(sign(d, &c, review_json(&r5_id, "REQUEST_CHANGES")).0, Some("review_after_outcome"));
    push(sign(d, &a, outcome_json(&r5_id, true)).0, Some("second_outcome"));
    push(first_outcome, Some("replayed"));

    let text: String = lines.iter().map(|(line, _)| format!("{line}\n")).collect();
    std::fs::write(d.join("script.jsonl"), text).unwrap();
    let output = revcal(d, &["elo", "ingest", "script.jsonl", "--json"]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let report = json_out(&output);
    let expected_rejections: Vec<(usize, &str)> = lines
        .iter()
        .enumerate()
        .filter_map(|(index, (_, expected))| expected.map(|code| (index + 1, code)))
        .collect();
    let found: Vec<(usize, String)> = report["rejections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["line"].as_u64().unwrap() as usize, r["code"].as_str().unwrap().to_owned()))
        .collect();
    assert_eq!(found.iter().map(|(l, c)| (*l, c.as_str())).collect::<Vec<_>>(), expected_rejections);
    assert_eq!(report["stored"], lines.len() - expected_rejections.len());
    // The default ledger is ./revcal-ledger.sqlite.
    assert!(d.join("revcal-ledger.sqlite").exists());

    // Hand computation (docs/reputation.md, section 3): delta = base x K / 20, K 40 below 20 scored reviews, else 20.
    let b_rating = 1200.0 + 17.0 * 10.0 + 50.0 + 0.0 - 60.0 + 25.0 + 5.0; // 1390
    let a_rating = 1200.0 + 50.0; // 1250
    let c_rating = 1200.0 - 60.0 - 10.0 + 0.0 + 10.0; // 1140
    // Accuracy: B 20 correct of 21 decisive (R3 missed); A 1 of 1; C 1 of 3 (R5 only).
    let expected = json!([
        {"rank": 1, "agent": b.id, "elo": b_rating, "reviews": 22, "accuracy": 20.0 / 21.0},
        {"rank": 2, "agent": a.id, "elo": a_rating, "reviews": 1, "accuracy": 1.0},
        {"rank": 3, "agent": c.id, "elo": c_rating, "reviews": 4, "accuracy": 1.0 / 3.0},
    ]);
    let board = revcal(d, &["elo", "leaderboard", "--json"]);
    assert_eq!(board.status.code(), Some(0), "{}", stderr(&board));
    assert_eq!(json_out(&board), expected);
    let human = stdout(&revcal(d, &["elo", "leaderboard", "--limit", "2"]));
    assert!(human.contains(&format!("   1  {}     1390       22     95.2%", b.id)), "{human}");
    assert!(!human.contains(&c.id), "{human}");

    // B's receipts: the K boundary at its 21st scored review.
    let receipts = json_out(&revcal(d, &["elo", "receipts", &b.id, "--json"]));
    let deltas: Vec<f64> =
        receipts.as_array().unwrap().iter().map(|r| r["elo_delta"].as_f64().unwrap()).collect();
    assert_eq!(deltas.len(), 22);
    assert_eq!(deltas[17..], [50.0, 0.0, -60.0, 25.0, 5.0]);

    let check = revcal(d, &["elo", "check"]);
    assert_eq!(check.status.code(), Some(0), "{}", stdout(&check));
    assert!(stdout(&check).starts_with("consistent"), "{}", stdout(&check));
}

/// Messages made with the library (fixed seeds) for the bulk tests.
fn story(author: &Keypair, reviewers: &[Keypair], n: usize) -> Vec<SignedMessage> {
    let send = |key: &Keypair, content| {
        let message =
            Message { from: key.agent_id(), to: "#review".into(), ts: 1_700_000_000 + n as u64, content };
        SignedMessage::sign(&message, key).unwrap()
    };
    let request = send(
        author,
        Content::Request(RequestContent {
            repo: Some("r".into()),
            change: Some(format!("change {n}")),
            ..Default::default()
        }),
    );
    let mut messages = vec![request.clone()];
    for (index, reviewer) in reviewers.iter().enumerate() {
        let verdict =
            [ReviewVerdict::Approve, ReviewVerdict::RequestChanges, ReviewVerdict::Comment][(n + index) % 3];
        messages.push(send(
            reviewer,
            Content::Review(ReviewContent {
                request_id: request.id.clone(),
                verdict,
                comments: vec![],
                summary: None,
                name: None,
            }),
        ));
    }
    let incident = n.is_multiple_of(3);
    messages.push(send(
        author,
        Content::Outcome(OutcomeContent {
            request_id: request.id.clone(),
            merged: true,
            incident,
            incident_details: incident.then(|| "rollback".to_owned()),
            calibration: None,
        }),
    ));
    messages
}

fn stories(count: usize) -> Vec<Vec<SignedMessage>> {
    let author = Keypair::from_seed([1; 32]);
    let reviewers: Vec<Keypair> = (2..5).map(|seed| Keypair::from_seed([seed; 32])).collect();
    (0..count).map(|n| story(&author, &reviewers, n)).collect()
}

fn jsonl(messages: impl IntoIterator<Item = SignedMessage>) -> String {
    messages.into_iter().map(|m| format!("{}\n", m.canonical())).collect()
}

#[test]
fn four_processes_ingesting_overlapping_files_store_each_message_once() {
    let dir = tempfile::tempdir().unwrap();
    let all = stories(48);
    let total: usize = all.iter().map(Vec::len).sum();
    // File k holds every story s with (s + k) % 4 in {0, 1}: each story is in two files.
    for file in 0..4 {
        let picked =
            all.iter().enumerate().filter(|(s, _)| (s + file) % 4 < 2).flat_map(|(_, story)| story.clone());
        std::fs::write(dir.path().join(format!("part{file}.jsonl")), jsonl(picked)).unwrap();
    }
    let ledger = dir.path().join("shared.sqlite");
    let children: Vec<_> = (0..4)
        .map(|file| {
            revcal_command(
                dir.path(),
                &[
                    "elo",
                    "ingest",
                    &format!("part{file}.jsonl"),
                    "--ledger",
                    ledger.to_str().unwrap(),
                    "--batch-size",
                    "4",
                    "--json",
                ],
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
        assert!(matches!(output.status.code(), Some(0 | 1)), "{}", stderr(&output));
        let report = json_out(&output);
        for rejection in report["rejections"].as_array().unwrap() {
            assert_eq!(rejection["code"], "replayed", "{rejection}");
        }
        stored += report["stored"].as_u64().unwrap() as usize;
    }
    assert_eq!(stored, total, "every valid message stored exactly once across the four processes");
    let opened = Ledger::open(&ledger).unwrap();
    assert_eq!(opened.message_count().unwrap(), total as u64);
    let check = revcal(dir.path(), &["elo", "check", "--json", "--ledger", ledger.to_str().unwrap()]);
    assert_eq!(check.status.code(), Some(0), "{}", stdout(&check));
    let report = json_out(&check);
    assert_eq!(report["consistent"], true);
    assert_eq!(report["integrity"], json!(["ok"]));
    assert_eq!(report["replay"]["scored_reviews"], 48 * 3);
}

#[cfg(unix)]
#[test]
fn a_process_killed_during_ingest_leaves_a_consistent_ledger() {
    use std::os::unix::process::ExitStatusExt;
    let dir = tempfile::tempdir().unwrap();
    let all: Vec<SignedMessage> = stories(90).into_iter().flatten().collect();
    std::fs::write(dir.path().join("big.jsonl"), jsonl(all.clone())).unwrap();
    let ledger = dir.path().join("killed.sqlite");
    let ledger_arg = ledger.to_str().unwrap();
    let mut child = revcal_command(
        dir.path(),
        &["elo", "ingest", "big.jsonl", "--ledger", ledger_arg, "--batch-size", "5"],
    )
    .stdout(Stdio::null())
    .stderr(Stdio::null())
    .spawn()
    .unwrap();
    // Wait until some batches are committed, then SIGKILL mid-ingest.
    let started = std::time::Instant::now();
    loop {
        let count = ledger
            .exists()
            .then(|| Ledger::open(&ledger).ok())
            .flatten()
            .and_then(|l| l.message_count().ok());
        if count.is_some_and(|count| count >= 20) {
            break;
        }
        assert!(started.elapsed().as_secs() < 60, "ingest never committed");
        assert!(child.try_wait().unwrap().is_none(), "ingest finished before it could be killed");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    child.kill().unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.signal(), Some(9));

    let opened = Ledger::open(&ledger).unwrap();
    let count = opened.message_count().unwrap();
    assert!(count >= 20 && count < all.len() as u64, "killed with {count} of {} stored", all.len());
    assert!(opened.integrity_check().unwrap().is_empty());
    assert!(opened.replay().unwrap().is_consistent());
    let check = revcal(dir.path(), &["elo", "check", "--ledger", ledger_arg]);
    assert_eq!(check.status.code(), Some(0), "{}", stdout(&check));

    // Ingesting again completes the ledger: the stored lines come back as replays.
    let again = revcal(dir.path(), &["elo", "ingest", "big.jsonl", "--ledger", ledger_arg, "--json"]);
    let report = json_out(&again);
    assert_eq!(report["stored"].as_u64().unwrap() + count, all.len() as u64);
    assert_eq!(report["rejected"].as_u64().unwrap(), count);
    assert_eq!(Ledger::open(&ledger).unwrap().message_count().unwrap(), all.len() as u64);
    assert_eq!(revcal(dir.path(), &["elo", "check", "--ledger", ledger_arg]).status.code(), Some(0));
}

#[test]
fn forged_altered_and_misattributed_lines_are_reported_with_their_reason() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (a, b) = (keygen(d, "a"), keygen(d, "b"));
    let (request, request_id) = sign(d, &a, request_json("PR 1"));
    let (review, _) = sign(d, &b, review_json(&request_id, "APPROVE"));
    let value: Value = serde_json::from_str(&review).unwrap();

    let mut altered = value.clone();
    altered["content"]["verdict"] = json!("REQUEST_CHANGES");
    let mut forged = value.clone();
    forged["sig"] = json!(revcal_elo::SignatureBytes([9; 64]).to_base64());
    let mut other_key = value.clone();
    let a_key = KeyFile::parse(&std::fs::read_to_string(&a.key).unwrap()).unwrap().keypair().unwrap();
    // The bytes B signed (the canonical review without `sig`), signed by A instead.
    let signed_bytes = SignedMessage::parse(&review).unwrap().signed_bytes().to_vec();
    other_key["sig"] = json!(a_key.sign(&signed_bytes).to_base64());
    let mut misattributed = value.clone();
    misattributed["from"] = json!(a.id);
    let lines = [
        request.clone(),
        altered.to_string(),
        forged.to_string(),
        other_key.to_string(),
        misattributed.to_string(),
        review.clone(),
        review.clone(),
        "{\"type\": \"REVIEW\",".to_owned(),
    ];
    std::fs::write(d.join("mixed.jsonl"), lines.join("\n")).unwrap();
    let output = revcal(d, &["elo", "ingest", "mixed.jsonl"]);
    assert_eq!(output.status.code(), Some(1));
    let text = stdout(&output);
    for expected in [
        "mixed.jsonl:2: rejected (invalid): `sig`: the signature does not verify",
        "mixed.jsonl:3: rejected (invalid): `sig`: the signature does not verify",
        "mixed.jsonl:4: rejected (invalid): `sig`: the signature does not verify",
        &format!("mixed.jsonl:5: rejected (invalid): `from`: {} is not the id of `pubkey`", a.id),
        "mixed.jsonl:7: rejected (replayed): message ",
        "mixed.jsonl:8: rejected (invalid): column 18: not valid JSON: EOF while parsing",
        "stored 2, rejected 6",
    ] {
        assert!(text.contains(expected), "missing {expected:?} in\n{text}");
    }
    assert!(!text.contains("(replayed): replayed:"), "the code is not repeated: {text}");
    let check = stdout(&revcal(d, &["elo", "check"]));
    assert!(check.contains(" 1 reviewer, 0 scored reviews;"), "counted nouns agree: {check}");
    // Nothing invalid changed a rating: B has one pending review and no score.
    let board = json_out(&revcal(d, &["elo", "leaderboard", "--json"]));
    assert_eq!(board, json!([{"rank": 1, "agent": b.id, "elo": 1200.0, "reviews": 0, "accuracy": null}]));
}

#[test]
fn sign_validates_every_field_and_refuses_another_sender() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (a, b) = (keygen(d, "a"), keygen(d, "b"));
    let id = "0".repeat(64);
    let cases = [
        (json!({"type": "REVIEW_PLEASE", "to": "#review", "content": {}}), "`type`: unknown message type"),
        (review_json(&id, "LGTM"), "`content.verdict`: unknown verdict \"LGTM\""),
        (
            json!({"type": "REVIEW", "to": "#review", "content": {"verdict": "APPROVE"}}),
            "`content.request_id`: missing",
        ),
        (
            json!({"type": "REVIEW", "to": "#review", "content": {"request_id": id, "verdict": "APPROVE",
                   "comments": [{"file": "a", "line": 0, "body": "b"}]}}),
            "`content.comments[0].line`: must be 1 or more, found 0",
        ),
        (
            json!({"type": "REVIEW", "to": "#review", "content": {"request_id": id, "verdict": "APPROVE",
                   "comments": [{"file": "a", "line": -2, "body": "b"}]}}),
            "`content.comments[0].line`: must be 1 or more, found -2",
        ),
        (
            json!({"type": "REVIEW", "to": "#review", "content": {"request_id": id, "verdict": "APPROVE",
                   "comments": [{"file": "a", "line": 1, "body": ""}]}}),
            "`content.comments[0].body`: must not be empty",
        ),
        (
            json!({"type": "REVIEW", "to": "@0123456789abcdef", "content": {"request_id": id, "verdict": "APPROVE"}}),
            "`to`: a REVIEW must be sent to \"#review\"",
        ),
        (
            json!({"type": "REVIEW_REQUEST", "to": "#random", "content": {"repo": "r", "change": "c"}}),
            "`to`: a REVIEW_REQUEST must be sent to \"#review\"",
        ),
        (
            json!({"type": "REVIEW_REQUEST", "from": b.id, "to": "#review", "content": {"repo": "r", "change": "c"}}),
            "is not the id of `pubkey`",
        ),
    ];
    for (message, expected) in cases {
        let output =
            revcal_stdin(d, &["elo", "sign", "-", "--key", a.key.to_str().unwrap()], &message.to_string());
        assert_eq!(output.status.code(), Some(1), "{message}");
        assert!(stderr(&output).contains(expected), "{message}: {}", stderr(&output));
        assert!(stdout(&output).is_empty());
    }
    // `from` and `ts` are filled; the output is one canonical line that verifies.
    std::fs::write(d.join("req.json"), request_json("PR 2").to_string()).unwrap();
    let output = revcal(d, &["elo", "sign", "req.json", "--key", a.key.to_str().unwrap()]);
    let signed = SignedMessage::parse(stdout(&output).trim()).unwrap();
    assert_eq!(signed.message.from.as_str(), a.id);
    assert_eq!(stdout(&output).lines().count(), 1);
    // A missing key file is an I/O error.
    assert_eq!(revcal(d, &["elo", "sign", "req.json", "--key", "nope.key"]).status.code(), Some(2));
}

#[test]
fn receipts_verify_with_the_issuer_key_and_fail_with_another_key_or_any_change() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (a, b) = (keygen(d, "a"), keygen(d, "b"));
    let (request, id) = sign(d, &a, request_json("PR 3"));
    let lines =
        [request, sign(d, &b, review_json(&id, "REQUEST_CHANGES")).0, sign(d, &a, outcome_json(&id, true)).0];
    std::fs::write(d.join("m.jsonl"), lines.join("\n")).unwrap();
    assert_eq!(revcal(d, &["elo", "ingest", "m.jsonl", "--ledger", "l.sqlite"]).status.code(), Some(0));
    let receipts = revcal(d, &["elo", "receipts", &b.id, "--json", "--ledger", "l.sqlite"]);
    std::fs::write(d.join("receipts.json"), &receipts.stdout).unwrap();
    let listed = json_out(&receipts);
    assert_eq!(listed[0]["outcome"], "caught_bug");
    assert_eq!(listed[0]["elo_delta"], 50.0);
    assert_eq!(
        revcal(d, &["elo", "issuer-key", "--out", "ledger.pub", "--ledger", "l.sqlite"]).status.code(),
        Some(0)
    );
    let public = KeyFile::parse(&std::fs::read_to_string(d.join("ledger.pub")).unwrap()).unwrap();
    assert!(public.secret_key.is_none());

    // Verifies with the issuer's public key alone (no ledger present).
    std::fs::remove_file(d.join("l.sqlite")).unwrap();
    let ok = revcal(d, &["elo", "verify-receipt", "receipts.json", "--issuer-key", "ledger.pub"]);
    assert_eq!(ok.status.code(), Some(0), "{}", stdout(&ok));
    assert!(stdout(&ok).contains("1 valid, 0 invalid"), "{}", stdout(&ok));

    // Another key: an agent's, or another ledger's.
    let other = dir.path().join("other");
    std::fs::create_dir(&other).unwrap();
    std::fs::write(other.join("m.jsonl"), &lines[0]).unwrap();
    revcal(&other, &["elo", "ingest", "m.jsonl"]);
    revcal(&other, &["elo", "issuer-key", "--out", "../other.pub"]);
    for key in ["a.key", "b.key", "other.pub"] {
        let output = revcal(d, &["elo", "verify-receipt", "receipts.json", "--issuer-key", key]);
        assert_eq!(output.status.code(), Some(1), "{key}: {}", stdout(&output));
        assert!(stdout(&output).contains("INVALID"), "{}", stdout(&output));
    }

    // Byte changes: one single receipt in canonical form, changed at positions spread over
    // every field.
    let canonical =
        serde_json::from_value::<revcal_elo::Receipt>(listed[0].clone()).unwrap().to_canonical().into_bytes();
    std::fs::write(d.join("one.json"), &canonical).unwrap();
    assert_eq!(
        revcal(d, &["elo", "verify-receipt", "one.json", "--issuer-key", "ledger.pub"]).status.code(),
        Some(0)
    );
    let step = canonical.len() / 24;
    for position in (0..canonical.len()).step_by(step.max(1)) {
        let mut changed = canonical.clone();
        changed[position] = if changed[position] == b'1' { b'2' } else { b'1' };
        std::fs::write(d.join("changed.json"), &changed).unwrap();
        let output =
            revcal(d, &["elo", "verify-receipt", "changed.json", "--issuer-key", "ledger.pub", "--json"]);
        assert_eq!(output.status.code(), Some(1), "byte {position}: {}", String::from_utf8_lossy(&changed));
        assert_eq!(json_out(&output)["failed"], 1);
    }
}

#[test]
fn handle_answers_a_leaderboard_query_and_stores_other_messages() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let a = keygen(d, "a");
    let (request, _) = sign(d, &a, request_json("PR 4"));
    let stored = revcal_stdin(d, &["elo", "handle"], &request);
    assert_eq!(stored.status.code(), Some(0), "{}", stderr(&stored));
    assert_eq!(json_out(&stored)["status"], "stored");
    let again = revcal_stdin(d, &["elo", "handle"], &request);
    assert_eq!(again.status.code(), Some(1));
    assert_eq!(json_out(&again)["code"], "replayed");

    let (query, query_id) =
        sign(d, &a, json!({"type": "REVIEW_LEADERBOARD", "to": "#review", "content": {"limit": 3}}));
    let reply = revcal_stdin(d, &["elo", "handle"], &query);
    assert_eq!(reply.status.code(), Some(0), "{}", stderr(&reply));
    let message = SignedMessage::parse(stdout(&reply).trim()).unwrap();
    assert_eq!(message.message.to, a.id);
    let issuer = json_out(&revcal(d, &["elo", "issuer-key"]));
    assert_eq!(message.message.from.as_str(), issuer["agent"]);
    let value = json_out(&reply);
    assert_eq!(value["type"], "REVIEW_LEADERBOARD_RESULT");
    assert_eq!(value["content"]["in_reply_to"], query_id.as_str());

    let broken = revcal_stdin(d, &["elo", "handle"], "{\"type\": 1}");
    assert_eq!(broken.status.code(), Some(1));
    assert_eq!(json_out(&broken)["field"], "type");
}

#[test]
fn ledger_location_flag_environment_and_io_errors() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let a = keygen(d, "a");
    let (request, _) = sign(d, &a, request_json("PR 5"));
    std::fs::write(d.join("m.jsonl"), &request).unwrap();
    // $REVCAL_LEDGER, overridden by --ledger.
    let output =
        revcal_command(d, &["elo", "ingest", "m.jsonl"]).env("REVCAL_LEDGER", "env.sqlite").output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(d.join("env.sqlite").exists() && !d.join("revcal-ledger.sqlite").exists());
    let output = revcal_command(d, &["elo", "ingest", "m.jsonl", "--ledger", "flag.sqlite"])
        .env("REVCAL_LEDGER", "env.sqlite")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    assert!(d.join("flag.sqlite").exists());
    // Reading commands do not create a ledger.
    let output = revcal(d, &["elo", "leaderboard"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("no ledger at revcal-ledger.sqlite"), "{}", stderr(&output));
    assert!(!d.join("revcal-ledger.sqlite").exists());
    // I/O errors: a missing input, a ledger path that is a directory.
    let output = revcal(d, &["elo", "ingest", "missing.jsonl"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("missing.jsonl"), "{}", stderr(&output));
    std::fs::create_dir(d.join("dir.sqlite")).unwrap();
    assert_eq!(revcal(d, &["elo", "ingest", "m.jsonl", "--ledger", "dir.sqlite"]).status.code(), Some(2));
    // keygen refuses to overwrite a key.
    let output = revcal(d, &["elo", "keygen", "--out", "a.key"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("--force"), "{}", stderr(&output));
    // Non-UTF-8 and blank lines: reported with their number / skipped.
    std::fs::write(d.join("bytes.jsonl"), b"\n\xff\xfe\n").unwrap();
    let output = revcal(d, &["elo", "ingest", "bytes.jsonl", "--ledger", "flag.sqlite"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(stdout(&output).contains("bytes.jsonl:2: rejected (invalid): not UTF-8"), "{}", stdout(&output));
}

#[test]
fn help_teaches_with_examples() {
    let dir = tempfile::tempdir().unwrap();
    let help = stdout(&revcal(dir.path(), &["elo", "--help"]));
    for word in
        ["keygen", "sign", "ingest", "leaderboard", "receipts", "verify-receipt", "handle", "Examples:"]
    {
        assert!(help.contains(word), "{word} missing from\n{help}");
    }
    let help = stdout(&revcal(dir.path(), &["elo", "ingest", "--help"]));
    assert!(help.contains("Exit status: 0 every line stored, 1 some line rejected, 2 I/O error"), "{help}");
}

#[test]
fn sign_names_the_id_it_made_and_id_reads_it_back() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    assert_eq!(revcal(d, &["elo", "keygen", "--out", "a.key"]).status.code(), Some(0));
    let request = r##"{"type": "REVIEW_REQUEST", "to": "#review", "content": {"title": "t", "diff_url": "u", "diff_summary": "s", "files_changed": ["a.rs"], "lines_added": 1, "lines_removed": 0}}"##;
    let signed = revcal_stdin(d, &["elo", "sign", "-", "--key", "a.key"], request);
    assert_eq!(signed.status.code(), Some(0), "{}", stderr(&signed));
    std::fs::write(d.join("one.jsonl"), &signed.stdout).unwrap();
    let id = revcal(d, &["elo", "id", "one.jsonl"]);
    let id = stdout(&id).trim().to_owned();
    assert_eq!(id.len(), 64, "{id}");
    assert!(stderr(&signed).starts_with(&format!("REVIEW_REQUEST {id} signed by @")), "{}", stderr(&signed));

    // A review answering it, with the id set by --request-id.
    let review = r##"{"type": "REVIEW", "to": "#review", "content": {"request_id": "x", "verdict": "APPROVE", "summary": "ok"}}"##;
    let answer = revcal_stdin(d, &["elo", "sign", "-", "--key", "a.key", "--request-id", &id], review);
    let answer: serde_json::Value = serde_json::from_slice(&answer.stdout).unwrap();
    assert_eq!(answer["content"]["request_id"], id.as_str());

    // Errors name what is wrong.
    let no_content = revcal_stdin(
        d,
        &["elo", "sign", "-", "--key", "a.key", "--request-id", &id],
        r#"{"type": "REVIEW_LEADERBOARD"}"#,
    );
    assert_eq!(no_content.status.code(), Some(1));
    assert!(stderr(&no_content).contains("`content`: --request-id needs a message with a content object"));
    std::fs::write(d.join("mixed.jsonl"), format!("{}not json\n", stdout(&signed))).unwrap();
    let mixed = revcal(d, &["elo", "id", "mixed.jsonl"]);
    assert_eq!(mixed.status.code(), Some(1));
    assert_eq!(stdout(&mixed).trim(), id, "the good line still prints");
    assert!(stderr(&mixed).contains("mixed.jsonl:2:"), "{}", stderr(&mixed));
}
