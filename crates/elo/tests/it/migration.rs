//! A ledger written by schema version 1 (ids as 64 hex digits) opens with this build: it
//! migrates to the current schema and answers exactly as before. A ledger whose stored
//! policy predates a field of `Policy` opens too.

use crate::util::{agent, outcome, request, review};
use revcal_elo::{Ledger, Rejection, ReviewVerdict, SignedMessage};
use rusqlite::Connection;
use std::path::Path;

/// Schema version 1, as the first release created it.
const V1_SCHEMA: &str = r#"
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
    CREATE TABLE messages (
        seq INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        type TEXT NOT NULL,
        sender TEXT NOT NULL,
        ts INTEGER NOT NULL,
        body TEXT NOT NULL
    );
    CREATE TABLE agents (id TEXT PRIMARY KEY, pubkey TEXT NOT NULL) WITHOUT ROWID;
    CREATE TABLE requests (
        id TEXT PRIMARY KEY,
        requester TEXT NOT NULL,
        outcome_id TEXT
    ) WITHOUT ROWID;
    CREATE TABLE latest_reviews (
        request_id TEXT NOT NULL,
        reviewer TEXT NOT NULL,
        review_id TEXT NOT NULL,
        verdict TEXT NOT NULL,
        seq INTEGER NOT NULL,
        PRIMARY KEY (request_id, reviewer)
    ) WITHOUT ROWID;
    CREATE TABLE ratings (
        agent TEXT PRIMARY KEY,
        rating REAL NOT NULL,
        reviews INTEGER NOT NULL,
        decisive INTEGER NOT NULL,
        correct INTEGER NOT NULL
    ) WITHOUT ROWID;
    CREATE INDEX ratings_rank ON ratings (rating DESC, reviews DESC, agent);
    CREATE TABLE scored_reviews (
        review_id TEXT NOT NULL UNIQUE,
        request_id TEXT NOT NULL,
        outcome_id TEXT NOT NULL,
        reviewer TEXT NOT NULL,
        requester TEXT NOT NULL,
        verdict TEXT NOT NULL,
        incident INTEGER NOT NULL,
        outcome TEXT NOT NULL,
        elo_delta REAL NOT NULL,
        rating_after REAL NOT NULL,
        ts INTEGER NOT NULL
    );
    CREATE INDEX scored_reviews_by_reviewer ON scored_reviews (reviewer);
"#;

/// Writes, at `v1`, the version-1 file holding what the current ledger at `current` holds:
/// the v1 schema, every row with its ids as lowercase hex text, `user_version` 1.
fn write_v1_copy(current: &Path, v1: &Path) {
    let connection = Connection::open(v1).unwrap();
    connection.execute_batch(V1_SCHEMA).unwrap();
    connection.execute("ATTACH DATABASE ?1 AS current", [current.to_str().unwrap()]).unwrap();
    connection
        .execute_batch(
            "BEGIN;
             INSERT INTO main.meta SELECT key, value FROM current.meta;
             INSERT INTO main.agents SELECT id, pubkey FROM current.agents;
             INSERT INTO main.ratings SELECT agent, rating, reviews, decisive, correct FROM current.ratings;
             INSERT INTO main.messages SELECT seq, lower(hex(id)), type, sender, ts, body
                 FROM current.messages ORDER BY seq;
             INSERT INTO main.requests
                 SELECT lower(hex(id)), sender, CASE WHEN closed_by IS NULL THEN NULL
                                                      ELSE lower(hex(closed_by)) END
                 FROM current.messages WHERE type = 'REVIEW_REQUEST';
             INSERT INTO main.latest_reviews
                 SELECT lower(hex(requests.id)), latest.reviewer, lower(hex(latest.review_id)),
                        latest.verdict, latest.seq
                 FROM current.latest_reviews AS latest
                 JOIN current.messages AS requests ON requests.seq = latest.request_seq;
             INSERT INTO main.scored_reviews (rowid, review_id, request_id, outcome_id, reviewer, requester,
                                              verdict, incident, outcome, elo_delta, rating_after, ts)
                 SELECT rowid, lower(hex(review_id)), lower(hex(request_id)), lower(hex(outcome_id)),
                        reviewer, requester, verdict, incident, outcome, elo_delta, rating_after, ts
                 FROM current.scored_reviews ORDER BY rowid;
             COMMIT;
             DETACH DATABASE current;
             PRAGMA user_version = 1;",
        )
        .unwrap();
    // The copy really is a version-1 file with text ids.
    let id_type: String =
        connection.query_row("SELECT typeof(id) FROM messages LIMIT 1", [], |row| row.get(0)).unwrap();
    assert_eq!(id_type, "text");
    let count = |table: &str| -> i64 {
        connection.query_row(&format!("SELECT count(*) FROM {table}"), [], |row| row.get(0)).unwrap()
    };
    assert_eq!((count("requests"), count("latest_reviews"), count("scored_reviews")), (12, 24, 22));
}

fn user_version(path: &Path) -> u32 {
    Connection::open(path).unwrap().query_row("PRAGMA user_version", [], |row| row.get(0)).unwrap()
}

#[test]
fn a_version_1_ledger_migrates_and_answers_as_before() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b, c) = (agent(1), agent(2), agent(3));
    let mut messages: Vec<SignedMessage> = Vec::new();
    let mut open_request = None;
    for n in 0..12 {
        let change = request(&a, &format!("change #{n}"));
        messages.push(change.clone());
        messages.push(review(&b, &change, [ReviewVerdict::Approve, ReviewVerdict::RequestChanges][n % 2]));
        messages.push(review(&c, &change, ReviewVerdict::Comment));
        if n == 11 {
            open_request = Some(change); // left open: closed after the migration
        } else {
            messages.push(outcome(&a, &change, n % 3 == 0));
        }
    }
    let open_request = open_request.unwrap();

    let current_path = dir.path().join("current.sqlite");
    let mut current = Ledger::open(&current_path).unwrap();
    for message in &messages {
        current.ingest(message).unwrap().unwrap();
    }
    let v1_path = dir.path().join("v1.sqlite");
    write_v1_copy(&current_path, &v1_path);

    let mut migrated = Ledger::open(&v1_path).unwrap();
    assert_eq!(user_version(&v1_path), migrated.schema_version());
    let id_type: String = Connection::open(&v1_path)
        .unwrap()
        .query_row("SELECT DISTINCT typeof(id) FROM messages", [], |row| row.get(0))
        .unwrap();
    assert_eq!(id_type, "blob", "the migration stores ids as bytes");
    assert!(migrated.integrity_check().unwrap().is_empty());
    assert_eq!(migrated.issuer(), current.issuer());
    assert_eq!(migrated.message_count().unwrap(), messages.len() as u64);
    assert_eq!(migrated.leaderboard(None).unwrap(), current.leaderboard(None).unwrap());
    assert_eq!(migrated.standings().unwrap(), current.standings().unwrap());
    let scored = migrated.scored_reviews(None).unwrap();
    assert_eq!(scored.len(), 11 * 2);
    assert_eq!(scored, current.scored_reviews(None).unwrap());
    assert_eq!(migrated.receipts(&b.agent_id()).unwrap(), current.receipts(&b.agent_id()).unwrap());
    let replay = migrated.replay().unwrap();
    assert!(replay.is_consistent(), "{:?}", replay.mismatches);
    assert_eq!(replay, current.replay().unwrap());

    // The migrated ledger still knows every id: a replay, a review of a closed request and
    // the open request's outcome are judged as before the migration.
    let replayed = migrated.ingest(&messages[0]).unwrap().unwrap_err();
    assert!(matches!(replayed, Rejection::Replayed { .. }), "{replayed:?}");
    let late = migrated.ingest(&review(&c, &messages[0], ReviewVerdict::Approve)).unwrap().unwrap_err();
    assert!(matches!(late, Rejection::ReviewAfterOutcome { .. }), "{late:?}");
    let closing = outcome(&a, &open_request, true);
    let stored = migrated.ingest(&closing).unwrap().unwrap();
    assert_eq!(stored.scored.len(), 2);
    assert_eq!(current.ingest(&closing).unwrap().unwrap(), stored);
    assert_eq!(migrated.leaderboard(None).unwrap(), current.leaderboard(None).unwrap());
    assert!(migrated.replay().unwrap().is_consistent());

    // Opening again changes nothing.
    drop(migrated);
    let reopened = Ledger::open(&v1_path).unwrap();
    assert_eq!(reopened.scored_reviews(None).unwrap(), current.scored_reviews(None).unwrap());
}

fn stored_policy(path: &Path) -> String {
    Connection::open(path)
        .unwrap()
        .query_row("SELECT value FROM meta WHERE key = 'policy'", [], |row| row.get(0))
        .unwrap()
}

/// Each ledger stores its rating policy once, at creation, as JSON: a field `Policy` gains
/// later is missing from it, and the ledger must still open, the field read as its default.
#[test]
fn a_ledger_whose_stored_policy_lacks_a_field_opens_with_that_fields_default() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ledger.sqlite");
    let policy = revcal_elo::Policy { caught_bug: 30.0, ..revcal_elo::Policy::default() };
    drop(Ledger::open_with_policy(&path, policy.clone()).unwrap());
    // The form ledgers have stored from the start, byte for byte.
    assert_eq!(
        stored_policy(&path),
        r#"{"start_rating":1200.0,"caught_bug":30.0,"missed_bug":-30.0,"false_positive":-5.0,"correct_approval":5.0,"neutral":0.0,"k_new":40.0,"k_established":20.0,"k_threshold":20,"k_scale":20.0}"#
    );
    let older = r#"{"start_rating":1200.0,"caught_bug":30.0,"missed_bug":-30.0,"false_positive":-5.0,"correct_approval":5.0,"neutral":0.0,"k_new":40.0,"k_established":20.0,"k_threshold":20}"#;
    Connection::open(&path)
        .unwrap()
        .execute("UPDATE meta SET value = ?1 WHERE key = 'policy'", [older])
        .unwrap();
    let reopened = Ledger::open(&path).unwrap_or_else(|error| panic!("{error}"));
    assert_eq!(reopened.policy(), &policy);
}
