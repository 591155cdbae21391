//! A ledger edited behind revcal's back (anyone who can write the file or the database can
//! do it: a reviewer runs as the user): `elo check` finds each edit, exits 1 and names the
//! row. Each edit is made with SQL on a real ledger (an SQLite file through rusqlite, a
//! PostgreSQL database when `REVCAL_TEST_POSTGRES` names a server), built by `elo trust`,
//! `elo record` and `elo ingest` as a user builds one.

use super::{CliAgent, keygen, revcal, stderr, stdout};
use revcal_elo::{Content, KeyFile, Message, RequestContent, ReviewContent, ReviewVerdict, SignedMessage};
use std::path::Path;

/// The ledger's tables as each backend names them.
fn table(name: &str, postgres: bool) -> String {
    if postgres { format!("revcal_{name}") } else { name.to_owned() }
}

/// A ledger at `ledger` holding the example calibration (verified: its authority is
/// trusted) and an open request with one review: 14 messages. Returns the reviewer.
fn build(d: &Path, ledger: &str) -> CliAgent {
    let (authority, reviewer) = (keygen(d, "authority"), keygen(d, "reviewer"));
    let file = KeyFile::parse(&std::fs::read_to_string(&authority.key).unwrap()).unwrap();
    std::fs::write(d.join("authority.pub"), serde_json::to_string(&file.public_only()).unwrap()).unwrap();
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/elo");
    let run = |args: &[&str]| {
        let mut all = args.to_vec();
        all.extend(["--ledger", ledger]);
        let output = revcal(d, &all);
        assert_eq!(output.status.code(), Some(0), "{args:?}: {}{}", stdout(&output), stderr(&output));
    };
    run(&["elo", "trust", &authority.id, "--key-file", "authority.pub"]);
    let record = examples.join("calibration.json");
    let report = examples.join("calibration-report.json");
    run(&[
        "elo",
        "record",
        record.to_str().unwrap(),
        "--report",
        report.to_str().unwrap(),
        "--authority-key",
        authority.key.to_str().unwrap(),
        "--agent",
        &reviewer.id,
        "--agent-key",
        reviewer.key.to_str().unwrap(),
    ]);
    let (author, critic) = (file.keypair().unwrap(), {
        let text = std::fs::read_to_string(&reviewer.key).unwrap();
        KeyFile::parse(&text).unwrap().keypair().unwrap()
    });
    let sign = |key: &revcal_elo::Keypair, content: Content| {
        let message = Message { from: key.agent_id(), to: "#review".into(), ts: 1_800_000_000_000, content };
        SignedMessage::sign(&message, key).unwrap()
    };
    let request = sign(
        &author,
        Content::Request(RequestContent { change: Some("pull/9".into()), ..Default::default() }),
    );
    let review = sign(
        &critic,
        Content::Review(ReviewContent {
            request_id: request.id.clone(),
            verdict: ReviewVerdict::RequestChanges,
            comments: vec![],
            summary: None,
            name: None,
        }),
    );
    std::fs::write(d.join("open.jsonl"), format!("{}\n{}\n", request.canonical(), review.canonical()))
        .unwrap();
    run(&["elo", "ingest", "open.jsonl"]);
    reviewer
}

/// `elo check` on `ledger`: its exit code and what it printed.
fn check(d: &Path, ledger: &str) -> (Option<i32>, String) {
    let output = revcal(d, &["elo", "check", "--ledger", ledger]);
    (output.status.code(), format!("{}{}", stdout(&output), stderr(&output)))
}

/// Each edit (SQL, with `{t:NAME}` for a table and `{reviewer}` for the reviewer's id) and
/// what `elo check` must say of it.
const EDITS: &[(&str, &str, &[&str])] = &[
    (
        "a review's stored text, a word changed",
        "UPDATE {t:messages} SET body = replace(body, 'one past the last', 'two past the last') WHERE seq = 2",
        &["messages row 2 (", "the signature does not verify"],
    ),
    (
        "a request's stored text, written with spaces",
        "UPDATE {t:messages} SET body = replace(body, '{\"content\":', '{ \"content\": ') WHERE seq = 1",
        &["messages row 1 (", "not the canonical form"],
    ),
    (
        "a request's sender column",
        "UPDATE {t:messages} SET sender = '@0000000000000000' WHERE seq = 1",
        &["messages row 1 (", "`sender` is @0000000000000000, the message's `from` is"],
    ),
    (
        "a request's outcome link",
        "UPDATE {t:messages} SET closed_by = NULL WHERE seq = 1",
        &["messages row 1 (", "`closed_by` is empty, replay closes it with"],
    ),
    (
        "a rating",
        "UPDATE {t:ratings} SET rating = 2695 WHERE agent = '{reviewer}'",
        &["ratings row {reviewer}: stored rating 2695"],
    ),
    (
        "a verified rating",
        "UPDATE {t:scoped_ratings} SET rating = 2695, reviews = 40 WHERE scope = 'verified'",
        &["scoped_ratings row (verified, {reviewer}): stored rating 2695, 40 reviews"],
    ),
    (
        "a scored review's delta",
        "UPDATE {t:scored_reviews} SET elo_delta = 99 WHERE {first_scored}",
        &["scored_reviews row 1 (review ", "`elo_delta` is 99, replay gives 50"],
    ),
    (
        "an open request's latest review",
        "UPDATE {t:latest_reviews} SET verdict = 'APPROVE' WHERE request_seq = 13",
        &["latest_reviews row (13, {reviewer}): stored verdict APPROVE, replay gives REQUEST_CHANGES"],
    ),
    (
        "a calibration outcome's domains",
        "UPDATE {t:calibration_outcomes} SET domains = '[\"off-by-one\"]' WHERE round = 2",
        &[
            "calibration_outcomes row (",
            "round 2 trial 1): stored domains [\"off-by-one\"], its outcome names [\"null-handling\", \"off-by-one\"]",
        ],
    ),
    (
        "an agent's name",
        "UPDATE {t:agents} SET name = 'Mallory' WHERE id = '{reviewer}'",
        &["agents row {reviewer}: stored name \"Mallory\", its own reviews give \"review-bot --strict\""],
    ),
    (
        "a calibration round's plant statuses",
        "UPDATE {t:calibration_outcomes} SET plants = '[[\"off-by-one\",true]]' WHERE round = 3",
        &[
            "calibration_outcomes row (",
            "round 3 trial 1): stored reviewer {reviewer} and plants [[\"off-by-one\",true]]",
        ],
    ),
];

/// The SQL of `edit` for a backend.
fn sql(edit: &str, postgres: bool, reviewer: &str) -> String {
    let mut sql = edit.replace("{reviewer}", reviewer);
    let first = if postgres { "pos = (SELECT min(pos) FROM revcal_scored_reviews)" } else { "rowid = 1" };
    sql = sql.replace("{first_scored}", first);
    while let Some(start) = sql.find("{t:") {
        let end = start + sql[start..].find('}').unwrap();
        let name = table(&sql[start + 3..end], postgres);
        sql.replace_range(start..=end, &name);
    }
    sql
}

fn assert_found(backend: &str, what: &str, code: Option<i32>, said: &str, expected: &[&str], reviewer: &str) {
    assert_eq!(code, Some(1), "{backend}: {what}: {said}");
    assert!(said.contains("INCONSISTENT"), "{backend}: {what}: {said}");
    for text in expected {
        let text = text.replace("{reviewer}", reviewer);
        assert!(said.contains(&text), "{backend}: {what}: expected {text:?} in:\n{said}");
    }
}

#[test]
fn every_edit_of_an_sqlite_ledger_is_found_and_its_row_named() {
    for (what, edit, expected) in EDITS {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let reviewer = build(d, "ledger.sqlite");
        assert_eq!(check(d, "ledger.sqlite").0, Some(0), "{what}: consistent before the edit");
        let connection = rusqlite::Connection::open(d.join("ledger.sqlite")).unwrap();
        let changed = connection.execute(&sql(edit, false, &reviewer.id), []).unwrap();
        assert_eq!(changed, 1, "{what}: one row edited");
        drop(connection);
        let (code, said) = check(d, "ledger.sqlite");
        assert_found("sqlite", what, code, &said, expected, &reviewer.id);
    }
}

#[test]
fn every_edit_of_a_postgres_ledger_is_found_and_its_row_named() {
    for (index, (what, edit, expected)) in EDITS.iter().enumerate() {
        let Some(database) = revcal_testpg::TestDatabase::create(&format!("cli_tampered_{index}")) else {
            return;
        };
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let reviewer = build(d, database.url());
        assert_eq!(check(d, database.url()).0, Some(0), "{what}: consistent before the edit");
        let changed = database.client().execute(&sql(edit, true, &reviewer.id), &[]).unwrap();
        assert_eq!(changed, 1, "{what}: one row edited");
        let (code, said) = check(d, database.url());
        assert_found("postgres", what, code, &said, expected, &reviewer.id);
    }
}
