//! The ledger's PostgreSQL tables and their migrations.
//!
//! Every table is prefixed `revcal_`, so a ledger can share a database with other
//! applications; two ledgers need two databases or two schemas (`?options=-csearch_path=...`
//! in the URL). `revcal_meta.schema_version` holds the version; migrations run under the
//! writers' advisory lock, so concurrent openers of a new database apply them exactly once.
//! Agent ids are compared with the "C" collation, byte by byte as SQLite does, so that the
//! leaderboard's tie-break is the same on both backends whatever the database's locale.

use super::WRITE_LOCK;
use super::session::Session;
use crate::ledger::LedgerError;
use crate::ledger::sqlite::Create;

/// The schema version this build writes.
pub(crate) const SCHEMA_VERSION: u32 = MIGRATIONS.len() as u32;

/// Migration `i` takes the tables from version `i` to `i + 1`.
const MIGRATIONS: &[&str] = &[
    // 1: the shape of SQLite's schema version 3: message ids as 32 bytes, requests in
    // `revcal_messages` with the outcome that closed them, latest reviews keyed by their
    // request's sequence number, ratings materialised, scored reviews in scoring order.
    r#"
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
    "#,
    // 2: verified outcomes, as SQLite's schema version 4: the trusted authorities, the
    // calibration round of each calibration outcome (once per authority), the standings of
    // every scope but all. Every scored review so far is a reported one.
    r#"
    CREATE TABLE revcal_authorities (pubkey TEXT COLLATE "C" PRIMARY KEY, agent TEXT COLLATE "C" NOT NULL);
    CREATE TABLE revcal_calibration_outcomes (
        outcome_id BYTEA PRIMARY KEY,
        authority TEXT COLLATE "C" NOT NULL,
        report BYTEA NOT NULL,
        round BIGINT NOT NULL,
        trial BIGINT NOT NULL,
        domains TEXT NOT NULL,
        UNIQUE (authority, report, round, trial)
    );
    CREATE TABLE revcal_scoped_ratings (
        scope TEXT COLLATE "C" NOT NULL,
        agent TEXT COLLATE "C" NOT NULL,
        rating DOUBLE PRECISION NOT NULL,
        reviews BIGINT NOT NULL,
        decisive BIGINT NOT NULL,
        correct BIGINT NOT NULL,
        PRIMARY KEY (scope, agent)
    );
    CREATE INDEX revcal_scoped_ratings_rank ON revcal_scoped_ratings (scope, rating DESC, reviews DESC, agent);
    INSERT INTO revcal_scoped_ratings (scope, agent, rating, reviews, decisive, correct)
        SELECT 'reported', agent, rating, reviews, decisive, correct FROM revcal_ratings WHERE reviews > 0;
    "#,
    // 3: as SQLite's schema version 5: each calibration round's reviewer and its plants'
    // categories and statuses (domain ratings that follow each plant), each agent's name.
    r#"
    ALTER TABLE revcal_calibration_outcomes ADD COLUMN reviewer TEXT COLLATE "C";
    ALTER TABLE revcal_calibration_outcomes ADD COLUMN plants TEXT;
    ALTER TABLE revcal_agents ADD COLUMN name TEXT;
    "#,
];

/// What the ledger relies on across its tables, as queries counting the rows that break
/// it, and what such a row is (`revcal elo check` lists the non-zero counts).
pub(crate) const INTEGRITY_CHECKS: &[(&str, &str)] = &[
    (
        "SELECT count(*) FROM revcal_messages WHERE length(id) <> 32",
        "stored messages with an id that is not 32 bytes",
    ),
    (
        "SELECT count(*) FROM revcal_latest_reviews AS l WHERE NOT EXISTS \
         (SELECT 1 FROM revcal_messages AS m WHERE m.seq = l.request_seq AND m.type = 'REVIEW_REQUEST')",
        "latest reviews of a request that is not stored",
    ),
    (
        "SELECT count(*) FROM revcal_messages AS r WHERE r.closed_by IS NOT NULL AND NOT EXISTS \
         (SELECT 1 FROM revcal_messages AS o WHERE o.id = r.closed_by AND o.type = 'REVIEW_OUTCOME')",
        "requests closed by an outcome that is not stored",
    ),
    (
        "SELECT count(*) FROM revcal_scored_reviews AS s WHERE NOT EXISTS \
         (SELECT 1 FROM revcal_messages AS m WHERE m.id = s.review_id) \
         OR NOT EXISTS (SELECT 1 FROM revcal_messages AS m WHERE m.id = s.outcome_id)",
        "scored reviews whose review or outcome is not stored",
    ),
    (
        "SELECT count(*) FROM revcal_ratings AS r WHERE r.reviews <> \
         (SELECT count(*) FROM revcal_scored_reviews AS s WHERE s.reviewer = r.agent)",
        "ratings whose review count differs from the reviewer's scored reviews",
    ),
    (
        "SELECT count(*) FROM revcal_calibration_outcomes AS c WHERE NOT EXISTS \
         (SELECT 1 FROM revcal_messages AS m WHERE m.id = c.outcome_id AND m.type = 'REVIEW_OUTCOME')",
        "calibration rounds whose outcome is not stored",
    ),
];

/// What [`migrate`] found and did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Migration {
    /// The tables were created.
    Created,
    /// Already current.
    Current,
    /// The tables are newer than this build.
    TooNew(u32),
}

/// Brings the tables up to [`SCHEMA_VERSION`], creating them (with `initial_meta`) in a
/// schema without tables when `create` allows it. A schema that holds other tables and no
/// ledger is refused before anything is created in it.
pub(crate) fn migrate(
    session: &Session,
    initial_meta: &[(&str, String)],
    create: Create,
) -> Result<Migration, LedgerError> {
    // Nearly every open finds the tables current: that is read without the writers' lock,
    // so that reading the ledger never waits for a writer. Versions only grow, so a current
    // version read without the lock stays current.
    let stored = stored_version(session)?;
    if let Some(found) = stored
        && found >= SCHEMA_VERSION
    {
        return Ok(if found > SCHEMA_VERSION { Migration::TooNew(found) } else { Migration::Current });
    }
    if stored.is_none() {
        refuse_other_tables(session)?;
        if create == Create::No {
            let ledger = session.name().to_owned();
            return Err(LedgerError::NoLedger {
                ledger,
                found: "a schema without the ledger's tables".into(),
            });
        }
    }
    session.begin_locked(WRITE_LOCK)?;
    let migrated = (|| {
        session.batch(
            "CREATE TABLE IF NOT EXISTS revcal_meta (key TEXT COLLATE \"C\" PRIMARY KEY, value TEXT NOT NULL)",
        )?;
        let found = stored_version(session)?.unwrap_or(0);
        if found > SCHEMA_VERSION {
            return Ok(Migration::TooNew(found));
        }
        if found == SCHEMA_VERSION {
            return Ok(Migration::Current);
        }
        for migration in &MIGRATIONS[found as usize..] {
            session.batch(migration)?;
        }
        if found == 0 {
            for (key, value) in initial_meta {
                session.query("INSERT INTO revcal_meta (key, value) VALUES ($1, $2)", &[key, value])?;
            }
        }
        session.query(
            "INSERT INTO revcal_meta (key, value) VALUES ('schema_version', $1) \
             ON CONFLICT (key) DO UPDATE SET value = $1",
            &[&SCHEMA_VERSION.to_string()],
        )?;
        Ok(if found == 0 { Migration::Created } else { Migration::Current })
    })();
    match migrated {
        Ok(Migration::Created | Migration::Current) => {
            session.batch("COMMIT")?;
        }
        Ok(Migration::TooNew(_)) | Err(_) => session.rollback(),
    }
    migrated
}

/// The most table names a refusal lists.
const TABLES_NAMED: usize = 10;

/// Refuses a schema that holds tables but no ledger (another application's), reading only.
pub(crate) fn refuse_foreign(session: &Session) -> Result<(), LedgerError> {
    match stored_version(session)? {
        Some(_) => Ok(()),
        None => refuse_other_tables(session),
    }
}

/// Refuses the schema when it holds any table, naming them.
fn refuse_other_tables(session: &Session) -> Result<(), LedgerError> {
    let tables = other_tables(session)?;
    if tables.is_empty() {
        return Ok(());
    }
    let mut named = tables.iter().take(TABLES_NAMED).cloned().collect::<Vec<_>>().join(", ");
    if tables.len() > TABLES_NAMED {
        named.push_str(&format!(" and {} more", tables.len() - TABLES_NAMED));
    }
    let found = format!("its schema holds other tables ({named})");
    Err(LedgerError::NotALedger { ledger: session.name().to_owned(), found })
}

/// The tables (and views) of the schema the ledger's tables go into (the first of the
/// search path that exists), by name.
fn other_tables(session: &Session) -> Result<Vec<String>, LedgerError> {
    let rows = session.query(
        "SELECT table_name::text FROM information_schema.tables WHERE table_schema = current_schema() \
         ORDER BY table_name",
        &[],
    )?;
    rows.iter().map(|row| row.try_get::<_, String>(0).map_err(|error| session.error(error))).collect()
}

/// The schema version stored in `revcal_meta`, `None` before the table exists. A version
/// that does not parse was not written by revcal: it reads as too new.
fn stored_version(session: &Session) -> Result<Option<u32>, LedgerError> {
    let exists = session.query("SELECT to_regclass('revcal_meta') IS NOT NULL", &[])?;
    let exists: bool = match exists.first() {
        Some(row) => row.try_get(0).map_err(|error| session.error(error))?,
        None => false,
    };
    if !exists {
        return Ok(None);
    }
    let rows = session.query("SELECT value FROM revcal_meta WHERE key = 'schema_version'", &[])?;
    let Some(row) = rows.first() else { return Ok(Some(0)) };
    let text: String = row.try_get(0).map_err(|error| session.error(error))?;
    Ok(Some(text.parse().unwrap_or(u32::MAX)))
}
