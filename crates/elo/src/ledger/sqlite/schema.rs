//! The ledger's SQLite schema and its migrations.
//!
//! `PRAGMA user_version` holds the schema version. Each migration runs in the same
//! `BEGIN IMMEDIATE` transaction that bumps the version, so concurrent openers of a new file
//! apply it exactly once.

use rusqlite::{Connection, TransactionBehavior};

/// The schema version this build writes.
pub(crate) const SCHEMA_VERSION: u32 = MIGRATIONS.len() as u32;

/// Migration `i` takes the schema from version `i` to `i + 1`.
const MIGRATIONS: &[&str] = &[
    // 1: messages stored once by id; what the rules need, materialised.
    r#"
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
    "#,
    // 2: message ids as 32-byte blobs instead of 64 hex digits, which halves the pages of
    // every index keyed by them (ids are random, so an ingest batch dirties index pages all
    // over the file and writes each at commit); `scored_reviews.review_id` loses its UNIQUE
    // index, which no query read (the rules already score a review at most once).
    r#"
    ALTER TABLE messages RENAME TO messages_v1;
    ALTER TABLE requests RENAME TO requests_v1;
    ALTER TABLE latest_reviews RENAME TO latest_reviews_v1;
    ALTER TABLE scored_reviews RENAME TO scored_reviews_v1;
    DROP INDEX scored_reviews_by_reviewer;
    CREATE TABLE messages (
        seq INTEGER PRIMARY KEY,
        id BLOB NOT NULL UNIQUE,
        type TEXT NOT NULL,
        sender TEXT NOT NULL,
        ts INTEGER NOT NULL,
        body TEXT NOT NULL
    );
    INSERT INTO messages (seq, id, type, sender, ts, body)
        SELECT seq, unhex(id), type, sender, ts, body FROM messages_v1 ORDER BY seq;
    CREATE TABLE requests (
        id BLOB PRIMARY KEY,
        requester TEXT NOT NULL,
        outcome_id BLOB
    ) WITHOUT ROWID;
    INSERT INTO requests (id, requester, outcome_id)
        SELECT unhex(id), requester, unhex(outcome_id) FROM requests_v1;
    CREATE TABLE latest_reviews (
        request_id BLOB NOT NULL,
        reviewer TEXT NOT NULL,
        review_id BLOB NOT NULL,
        verdict TEXT NOT NULL,
        seq INTEGER NOT NULL,
        PRIMARY KEY (request_id, reviewer)
    ) WITHOUT ROWID;
    INSERT INTO latest_reviews (request_id, reviewer, review_id, verdict, seq)
        SELECT unhex(request_id), reviewer, unhex(review_id), verdict, seq FROM latest_reviews_v1;
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
    INSERT INTO scored_reviews (rowid, review_id, request_id, outcome_id, reviewer, requester, verdict,
                                incident, outcome, elo_delta, rating_after, ts)
        SELECT rowid, unhex(review_id), unhex(request_id), unhex(outcome_id), reviewer, requester, verdict,
               incident, outcome, elo_delta, rating_after, ts
        FROM scored_reviews_v1 ORDER BY rowid;
    CREATE INDEX scored_reviews_by_reviewer ON scored_reviews (reviewer);
    DROP TABLE messages_v1;
    DROP TABLE requests_v1;
    DROP TABLE latest_reviews_v1;
    DROP TABLE scored_reviews_v1;
    "#,
    // 3: requests live in `messages` (`closed_by`: the outcome that closed one) and latest
    // reviews are keyed by their request's sequence number: the only index on random keys
    // left is `messages.id`; the others take inserts near their end, a few pages per batch.
    r#"
    ALTER TABLE messages ADD COLUMN closed_by BLOB;
    UPDATE messages SET closed_by = (SELECT outcome_id FROM requests WHERE requests.id = messages.id)
        WHERE type = 'REVIEW_REQUEST';
    ALTER TABLE latest_reviews RENAME TO latest_reviews_v2;
    CREATE TABLE latest_reviews (
        request_seq INTEGER NOT NULL,
        reviewer TEXT NOT NULL,
        review_id BLOB NOT NULL,
        verdict TEXT NOT NULL,
        seq INTEGER NOT NULL,
        PRIMARY KEY (request_seq, reviewer)
    ) WITHOUT ROWID;
    INSERT INTO latest_reviews (request_seq, reviewer, review_id, verdict, seq)
        SELECT requests.seq, latest.reviewer, latest.review_id, latest.verdict, latest.seq
        FROM latest_reviews_v2 AS latest JOIN messages AS requests ON requests.id = latest.request_id;
    DROP TABLE latest_reviews_v2;
    DROP TABLE requests;
    "#,
    // 4: verified outcomes. The authorities the ledger trusts; the calibration round each
    // calibration outcome reports (a round is recorded once per authority); the standings of
    // every scope but all (verified, reported, one per domain). No outcome carried a
    // calibration before, so every scored review so far is a reported one.
    r#"
    CREATE TABLE authorities (pubkey TEXT PRIMARY KEY, agent TEXT NOT NULL) WITHOUT ROWID;
    CREATE TABLE calibration_outcomes (
        outcome_id BLOB PRIMARY KEY,
        authority TEXT NOT NULL,
        report BLOB NOT NULL,
        round INTEGER NOT NULL,
        trial INTEGER NOT NULL,
        domains TEXT NOT NULL,
        UNIQUE (authority, report, round, trial)
    ) WITHOUT ROWID;
    CREATE TABLE scoped_ratings (
        scope TEXT NOT NULL,
        agent TEXT NOT NULL,
        rating REAL NOT NULL,
        reviews INTEGER NOT NULL,
        decisive INTEGER NOT NULL,
        correct INTEGER NOT NULL,
        PRIMARY KEY (scope, agent)
    ) WITHOUT ROWID;
    CREATE INDEX scoped_ratings_rank ON scoped_ratings (scope, rating DESC, reviews DESC, agent);
    INSERT INTO scoped_ratings (scope, agent, rating, reviews, decisive, correct)
        SELECT 'reported', agent, rating, reviews, decisive, correct FROM ratings WHERE reviews > 0;
    "#,
    // 5: domain ratings that follow each plant, and names. A calibration round keeps the
    // reviewer its plant statuses describe and each plant's category and status (rounds
    // recorded before have none, and keep the rule they were rated by); an agent keeps the
    // name its latest review gave (no review gave one before).
    r#"
    ALTER TABLE calibration_outcomes ADD COLUMN reviewer TEXT;
    ALTER TABLE calibration_outcomes ADD COLUMN plants TEXT;
    ALTER TABLE agents ADD COLUMN name TEXT;
    "#,
];

/// The schema version of an open connection.
pub(crate) fn version(connection: &Connection) -> rusqlite::Result<u32> {
    connection.query_row("PRAGMA user_version", [], |row| row.get(0))
}

/// What `migrate` found and did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Migration {
    /// Applied migrations from the first version to the second.
    Applied(u32, u32),
    /// Already current.
    Current,
    /// The file is newer than this build.
    TooNew(u32),
}

/// Brings the schema up to [`SCHEMA_VERSION`]; `initialise` runs in the same transaction
/// (it seeds the ledger key and policy on a new file).
pub(crate) fn migrate(
    connection: &mut Connection,
    initialise: impl FnOnce(&rusqlite::Transaction) -> rusqlite::Result<()>,
) -> rusqlite::Result<Migration> {
    if version(connection)? == SCHEMA_VERSION {
        return Ok(Migration::Current);
    }
    let transaction = connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let found = version(&transaction)?;
    if found > SCHEMA_VERSION {
        return Ok(Migration::TooNew(found));
    }
    for migration in &MIGRATIONS[found as usize..] {
        transaction.execute_batch(migration)?;
    }
    if found == 0 {
        initialise(&transaction)?;
    }
    transaction.pragma_update(None, "user_version", SCHEMA_VERSION)?;
    transaction.commit()?;
    if found == SCHEMA_VERSION {
        Ok(Migration::Current)
    } else {
        Ok(Migration::Applied(found, SCHEMA_VERSION))
    }
}
