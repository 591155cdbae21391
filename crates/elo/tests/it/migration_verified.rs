//! A ledger written before verified outcomes (SQLite schema version 3, PostgreSQL version 1)
//! opens with this build: it migrates in place, answers exactly as before, its reported
//! standings are the ones ingesting its messages gives, and calibrations record into it as
//! into a new ledger.

use crate::calibrations::{StandIn, record};
use crate::util::{agent, outcome, request, review};
use revcal_elo::{Ledger, LedgerLocation, Recording, ReviewVerdict, Scope, SignedMessage};
use rusqlite::Connection;
use std::io::{Read, Write};
use std::path::Path;

/// Schema version 3 of the SQLite ledger, as the last build before verified outcomes left it.
const SQLITE_V3: &str = r#"
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
    CREATE TABLE messages (
        seq INTEGER PRIMARY KEY,
        id BLOB NOT NULL UNIQUE,
        type TEXT NOT NULL,
        sender TEXT NOT NULL,
        ts INTEGER NOT NULL,
        body TEXT NOT NULL,
        closed_by BLOB
    );
    CREATE TABLE agents (id TEXT PRIMARY KEY, pubkey TEXT NOT NULL) WITHOUT ROWID;
    CREATE TABLE ratings (
        agent TEXT PRIMARY KEY,
        rating REAL NOT NULL,
        reviews INTEGER NOT NULL,
        decisive INTEGER NOT NULL,
        correct INTEGER NOT NULL
    ) WITHOUT ROWID;
    CREATE INDEX ratings_rank ON ratings (rating DESC, reviews DESC, agent);
    CREATE TABLE latest_reviews (
        request_seq INTEGER NOT NULL,
        reviewer TEXT NOT NULL,
        review_id BLOB NOT NULL,
        verdict TEXT NOT NULL,
        seq INTEGER NOT NULL,
        PRIMARY KEY (request_seq, reviewer)
    ) WITHOUT ROWID;
    CREATE TABLE scored_reviews (
        review_id BLOB NOT NULL,
        request_id BLOB NOT NULL,
        outcome_id BLOB NOT NULL,
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

/// Schema version 1 of the PostgreSQL ledger.
const POSTGRES_V1: &str = r#"
    CREATE TABLE revcal_meta (key TEXT COLLATE "C" PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE revcal_messages (
        seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        id BYTEA NOT NULL UNIQUE,
        type TEXT NOT NULL,
        sender TEXT COLLATE "C" NOT NULL,
        ts BIGINT NOT NULL,
        body TEXT NOT NULL,
        closed_by BYTEA
    );
    CREATE TABLE revcal_agents (id TEXT COLLATE "C" PRIMARY KEY, pubkey TEXT NOT NULL);
    CREATE TABLE revcal_latest_reviews (
        request_seq BIGINT NOT NULL,
        reviewer TEXT COLLATE "C" NOT NULL,
        review_id BYTEA NOT NULL,
        verdict TEXT NOT NULL,
        seq BIGINT NOT NULL,
        PRIMARY KEY (request_seq, reviewer)
    );
    CREATE TABLE revcal_ratings (
        agent TEXT COLLATE "C" PRIMARY KEY,
        rating DOUBLE PRECISION NOT NULL,
        reviews BIGINT NOT NULL,
        decisive BIGINT NOT NULL,
        correct BIGINT NOT NULL
    );
    CREATE INDEX revcal_ratings_rank ON revcal_ratings (rating DESC, reviews DESC, agent);
    CREATE TABLE revcal_scored_reviews (
        pos BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        review_id BYTEA NOT NULL,
        request_id BYTEA NOT NULL,
        outcome_id BYTEA NOT NULL,
        reviewer TEXT COLLATE "C" NOT NULL,
        requester TEXT COLLATE "C" NOT NULL,
        verdict TEXT NOT NULL,
        incident BOOLEAN NOT NULL,
        outcome TEXT NOT NULL,
        elo_delta DOUBLE PRECISION NOT NULL,
        rating_after DOUBLE PRECISION NOT NULL,
        ts BIGINT NOT NULL
    );
    CREATE INDEX revcal_scored_reviews_by_reviewer ON revcal_scored_reviews (reviewer, pos);
"#;

/// Self-reported traffic a ledger of before held: three reviewers, twelve changes, one left
/// open, so that a reviewer is on the board with no scored review.
fn traffic() -> Vec<SignedMessage> {
    let (a, b, c, d) = (agent(1), agent(2), agent(3), agent(4));
    let mut messages = Vec::new();
    for n in 0..12 {
        let change = request(&a, &format!("change #{n}"));
        messages.push(change.clone());
        messages.push(review(&b, &change, [ReviewVerdict::Approve, ReviewVerdict::RequestChanges][n % 2]));
        messages.push(review(&c, &change, ReviewVerdict::Comment));
        if n == 11 {
            messages.push(review(&d, &change, ReviewVerdict::Approve));
        } else {
            messages.push(outcome(&a, &change, n % 3 == 0));
        }
    }
    messages
}

fn filled(location: &LedgerLocation) -> Ledger {
    let mut ledger = Ledger::open_at(location, None).unwrap();
    for message in traffic() {
        ledger.ingest(&message).unwrap().unwrap();
    }
    ledger
}

/// The migrated ledger answers as the one that ingested the same messages with this build,
/// in every scope, and records a calibration the same way.
fn answers_as_current(migrated: &mut Ledger, current: &mut Ledger, backend: &str) {
    assert_eq!(migrated.issuer(), current.issuer(), "{backend}");
    assert_eq!(migrated.leaderboard(None).unwrap(), current.leaderboard(None).unwrap(), "{backend}");
    assert_eq!(migrated.scored_reviews(None).unwrap(), current.scored_reviews(None).unwrap(), "{backend}");
    for scope in [Scope::All, Scope::Verified, Scope::Reported] {
        assert_eq!(
            migrated.leaderboard_in(&scope, None).unwrap(),
            current.leaderboard_in(&scope, None).unwrap(),
            "{backend} {scope}"
        );
    }
    // D's review is not scored yet: D is on the board of all, not on the reported one.
    assert_eq!(migrated.leaderboard(None).unwrap().len(), 3, "{backend}");
    assert_eq!(migrated.leaderboard_in(&Scope::Reported, None).unwrap().len(), 2, "{backend}");
    assert_eq!(
        migrated.receipts(&agent(2).agent_id()).unwrap(),
        current.receipts(&agent(2).agent_id()).unwrap()
    );
    let replay = migrated.replay().unwrap();
    assert!(replay.is_consistent(), "{backend}: {:?}", replay.mismatches);

    let calibration = record(StandIn::Careful, &"ab".repeat(32), 1, 1_767_225_600_000);
    let rounds = calibration.messages(&agent(40), &agent(2)).unwrap();
    for ledger in [&mut *migrated, &mut *current] {
        assert!(ledger.trust(&agent(40).public()).unwrap());
        assert!(matches!(ledger.record_calibration(&rounds).unwrap(), Recording::Recorded(_)), "{backend}");
    }
    for scope in [Scope::All, Scope::Verified, Scope::Reported, Scope::Domain("off-by-one".into())] {
        assert_eq!(
            migrated.standings_in(&scope).unwrap(),
            current.standings_in(&scope).unwrap(),
            "{backend} {scope}"
        );
    }
    assert!(migrated.replay().unwrap().is_consistent(), "{backend}");
}

#[test]
fn an_sqlite_ledger_of_schema_version_3_migrates_and_answers_as_before() {
    let dir = tempfile::tempdir().unwrap();
    let current_path = dir.path().join("current.sqlite");
    let mut current = filled(&LedgerLocation::from(current_path.as_path()));
    let v3_path = dir.path().join("v3.sqlite");
    {
        let connection = Connection::open(&v3_path).unwrap();
        connection.execute_batch(SQLITE_V3).unwrap();
        connection.execute("ATTACH DATABASE ?1 AS current", [current_path.to_str().unwrap()]).unwrap();
        connection
            .execute_batch(
                "BEGIN;
                 INSERT INTO main.meta SELECT key, value FROM current.meta;
                 INSERT INTO main.messages SELECT seq, id, type, sender, ts, body, closed_by FROM current.messages;
                 INSERT INTO main.agents SELECT id, pubkey FROM current.agents;
                 INSERT INTO main.ratings SELECT agent, rating, reviews, decisive, correct FROM current.ratings;
                 INSERT INTO main.latest_reviews SELECT request_seq, reviewer, review_id, verdict, seq
                     FROM current.latest_reviews;
                 INSERT INTO main.scored_reviews (rowid, review_id, request_id, outcome_id, reviewer, requester,
                                                  verdict, incident, outcome, elo_delta, rating_after, ts)
                     SELECT rowid, review_id, request_id, outcome_id, reviewer, requester, verdict, incident,
                            outcome, elo_delta, rating_after, ts FROM current.scored_reviews;
                 COMMIT;
                 DETACH DATABASE current;
                 PRAGMA user_version = 3;",
            )
            .unwrap();
    }
    let tables = |path: &Path| -> Vec<String> {
        Connection::open(path)
            .unwrap()
            .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
            .unwrap()
            .query_map([], |row| row.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    };
    assert!(!tables(&v3_path).contains(&"scoped_ratings".to_owned()), "a file of before");
    let mut migrated = Ledger::open(&v3_path).unwrap();
    assert_eq!(migrated.schema_version(), 5);
    assert_eq!(tables(&v3_path), tables(&current_path));
    assert!(migrated.integrity_check().unwrap().is_empty());
    answers_as_current(&mut migrated, &mut current, "sqlite");
}

#[test]
fn a_postgres_ledger_of_schema_version_1_migrates_and_answers_as_before() {
    let Some(current_database) = revcal_testpg::TestDatabase::create("migration_v1_current") else { return };
    let Some(old_database) = revcal_testpg::TestDatabase::create("migration_v1_old") else { return };
    let mut current = filled(&LedgerLocation::parse(current_database.url()).unwrap());
    let (mut from, mut to) = (current_database.client(), old_database.client());
    to.batch_execute(POSTGRES_V1).unwrap();
    // COPY writes identity columns as given (the sequences are set after).
    let tables = [
        "revcal_meta",
        "revcal_messages",
        "revcal_agents",
        "revcal_latest_reviews",
        "revcal_ratings",
        "revcal_scored_reviews",
    ];
    for table in tables {
        // The columns the old tables have (agents gained its name since).
        let columns = if table == "revcal_agents" { " (id, pubkey)" } else { "" };
        let mut rows = Vec::new();
        from.copy_out(&format!("COPY {table}{columns} TO STDOUT")).unwrap().read_to_end(&mut rows).unwrap();
        let mut writer = to.copy_in(&format!("COPY {table}{columns} FROM STDIN")).unwrap();
        writer.write_all(&rows).unwrap();
        writer.finish().unwrap();
    }
    to.batch_execute(
        "UPDATE revcal_meta SET value = '1' WHERE key = 'schema_version';
         SELECT setval(pg_get_serial_sequence('revcal_messages', 'seq'), (SELECT max(seq) FROM revcal_messages));
         SELECT setval(pg_get_serial_sequence('revcal_scored_reviews', 'pos'), (SELECT max(pos) FROM revcal_scored_reviews));",
    )
    .unwrap();
    let count = |sql: &str| old_database.query_i64(sql);
    assert_eq!(count("SELECT count(*) FROM revcal_scored_reviews"), 22);
    assert_eq!(count("SELECT count(*) FROM pg_tables WHERE tablename = 'revcal_scoped_ratings'"), 0);
    let mut migrated = Ledger::open_at(&LedgerLocation::parse(old_database.url()).unwrap(), None).unwrap();
    assert_eq!(migrated.schema_version(), 3);
    assert_eq!(count("SELECT value::bigint FROM revcal_meta WHERE key = 'schema_version'"), 3);
    assert!(migrated.integrity_check().unwrap().is_empty());
    answers_as_current(&mut migrated, &mut current, "postgres");
}
