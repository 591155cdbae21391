//! The SQLite backend: one file in WAL mode that several processes may write at once
//! (`BEGIN IMMEDIATE` makes writers take turns; readers never wait).

pub(crate) mod schema;
mod scoped;

use super::LedgerError;
use super::storage::{
    BatchWrites, LatestRow, MessageRow, NewMessage, RequestRow, ScoredRow, Storage, to_i64, to_u64,
};
use revcal_elo_protocol::Standing;
use rusqlite::{Connection, ErrorCode, OptionalExtension};
use std::path::Path;
use std::time::{Duration, Instant};

/// How long a writer waits for another process's transaction before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(60);

/// WAL pages (4 KiB each) after which a commit checkpoints the WAL into the file: 128 MiB.
const WAL_CHECKPOINT_PAGES: i64 = 32_768;

/// An open SQLite ledger file.
pub(crate) struct SqliteStorage {
    connection: Connection,
    /// The path, for error messages.
    name: String,
    /// How long a writer waits for another (the connection's busy timeout).
    busy_timeout: Duration,
}

impl SqliteStorage {
    /// Opens the file and brings its schema up to date; `initial_meta` is written when the
    /// ledger is new, in the transaction that creates the schema. With [`Create::No`], a
    /// missing or empty file is refused rather than made a ledger; another application's
    /// database is always refused, before anything is written to it.
    pub(crate) fn open(
        path: &Path,
        initial_meta: &[(&str, String)],
        create: Create,
    ) -> Result<SqliteStorage, LedgerError> {
        let name = path.display().to_string();
        let sql = |source| LedgerError::Sqlite { ledger: name.clone(), error: source };
        if create == Create::No && !path.exists() {
            return Err(LedgerError::NoLedger { ledger: name, found: "no such file".into() });
        }
        let mut connection = Connection::open(path).map_err(sql)?;
        match inspect(&connection).map_err(sql)? {
            Found::Ledger => {}
            Found::Empty if create == Create::Yes => {}
            Found::Empty => {
                return Err(LedgerError::NoLedger { ledger: name, found: "an empty database".into() });
            }
            Found::Foreign(found) => return Err(LedgerError::NotALedger { ledger: name, found }),
        }
        connection.busy_timeout(BUSY_TIMEOUT).map_err(sql)?;
        set_wal(&connection).map_err(sql)?;
        // WAL with synchronous=NORMAL: a killed process loses nothing committed; a power cut
        // may lose the last transactions but never leaves a torn ledger.
        connection.pragma_update(None, "synchronous", "NORMAL").map_err(sql)?;
        // Ids are SHA-256 hashes, so index inserts land on random pages: keep more in memory.
        connection.pragma_update(None, "cache_size", -65_536).map_err(sql)?;
        // Checkpoint every WAL_CHECKPOINT_PAGES instead of SQLite's 1,000: an ingest batch
        // dirties thousands of index pages (ids are random), so the default checkpointed
        // after every batch and copied the same hot pages into the file (and fsynced) again.
        connection.pragma_update(None, "wal_autocheckpoint", WAL_CHECKPOINT_PAGES).map_err(sql)?;
        connection.set_prepared_statement_cache_capacity(64);
        let migration = schema::migrate(&mut connection, |transaction| {
            let mut insert = transaction.prepare("INSERT INTO meta (key, value) VALUES (?1, ?2)")?;
            for (key, value) in initial_meta {
                insert.execute((key, value))?;
            }
            tracing::info!(ledger = %path.display(), "created a new ledger");
            Ok(())
        })
        .map_err(sql)?;
        if let schema::Migration::TooNew(found) = migration {
            return Err(LedgerError::TooNew { ledger: name, found });
        }
        Ok(SqliteStorage { connection, name, busy_timeout: BUSY_TIMEOUT })
    }

    /// Refuses a file that holds another application's database, writing nothing (a
    /// missing file is fine: it would become a new ledger).
    pub(crate) fn refuse_foreign(path: &Path) -> Result<(), LedgerError> {
        let name = path.display().to_string();
        if !path.exists() {
            return Ok(());
        }
        let sql = |source| LedgerError::Sqlite { ledger: name.clone(), error: source };
        let connection = Connection::open(path).map_err(sql)?;
        match inspect(&connection).map_err(sql)? {
            Found::Foreign(found) => Err(LedgerError::NotALedger { ledger: name, found }),
            Found::Ledger | Found::Empty => Ok(()),
        }
    }

    fn sql(&self, source: rusqlite::Error) -> LedgerError {
        LedgerError::Sqlite { ledger: self.name.clone(), error: source }
    }

    /// Runs `work`, naming the ledger on error.
    fn run<T>(&self, work: impl FnOnce(&Connection) -> rusqlite::Result<T>) -> Result<T, LedgerError> {
        work(&self.connection).map_err(|source| self.sql(source))
    }
}

/// Whether opening a ledger may make one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Create {
    /// A missing or empty database becomes a new ledger (commands that write).
    Yes,
    /// Only an existing ledger opens (commands that only read).
    No,
}

/// What an SQLite file holds, as read before anything is written to it.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Found {
    /// A revcal ledger (of any schema version).
    Ledger,
    /// No table and no schema version: a new file.
    Empty,
    /// Something else, described.
    Foreign(String),
}

/// The tables every revcal ledger has had since its first schema version.
const LEDGER_TABLES: [&str; 3] = ["meta", "messages", "ratings"];
/// The most table names a refusal lists.
const TABLES_NAMED: usize = 10;

/// Reads what the database holds, with reads only: its tables, its schema version, and
/// whether its `meta` has the ledger's key. A file that is not an SQLite database is
/// foreign too.
fn inspect(connection: &Connection) -> rusqlite::Result<Found> {
    let tables: Vec<String> = match connection
        .prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name")
        .and_then(|mut statement| statement.query_map([], |row| row.get(0))?.collect())
    {
        Ok(tables) => tables,
        Err(rusqlite::Error::SqliteFailure(failure, _)) if failure.code == ErrorCode::NotADatabase => {
            return Ok(Found::Foreign("the file is not an SQLite database".into()));
        }
        Err(error) => return Err(error),
    };
    let version = schema::version(connection)?;
    if tables.is_empty() {
        return Ok(if version == 0 {
            Found::Empty
        } else {
            Found::Foreign(format!("an SQLite database without tables, of schema version {version}"))
        });
    }
    let has_tables = LEDGER_TABLES.iter().all(|table| tables.iter().any(|found| found == table));
    if version > 0 && has_tables {
        let key: Option<i64> = connection
            .query_row("SELECT 1 FROM meta WHERE key = 'ledger_key'", [], |row| row.get(0))
            .optional()
            .unwrap_or(None);
        if key.is_some() {
            return Ok(Found::Ledger);
        }
    }
    let mut named = tables.iter().take(TABLES_NAMED).cloned().collect::<Vec<_>>().join(", ");
    if tables.len() > TABLES_NAMED {
        named.push_str(&format!(" and {} more", tables.len() - TABLES_NAMED));
    }
    let version = if version == 0 { String::new() } else { format!(", schema version {version}") };
    Ok(Found::Foreign(format!("it holds other tables ({named}{version})")))
}

fn standing_at(row: &rusqlite::Row, first: usize) -> rusqlite::Result<Standing> {
    Ok(Standing {
        rating: row.get(first)?,
        reviews: to_u64(row.get(first + 1)?),
        decisive: to_u64(row.get(first + 2)?),
        correct: to_u64(row.get(first + 3)?),
    })
}

impl Storage for SqliteStorage {
    fn schema_version(&self) -> u32 {
        schema::SCHEMA_VERSION
    }

    fn meta(&self, key: &str) -> Result<Option<String>, LedgerError> {
        self.run(|c| c.query_row("SELECT value FROM meta WHERE key = ?1", [key], |row| row.get(0)).optional())
    }

    fn message_count(&self) -> Result<u64, LedgerError> {
        self.run(|c| c.query_row("SELECT count(*) FROM messages", [], |row| row.get::<_, i64>(0))).map(to_u64)
    }

    fn ranked(&self, limit: Option<u32>) -> Result<Vec<(String, Standing)>, LedgerError> {
        let limit = limit.map_or(-1, i64::from);
        self.run(|c| {
            c.prepare_cached(
                "SELECT agent, rating, reviews, decisive, correct FROM ratings \
                 ORDER BY rating DESC, reviews DESC, agent LIMIT ?1",
            )?
            .query_map([limit], |row| Ok((row.get(0)?, standing_at(row, 1)?)))?
            .collect()
        })
    }

    fn rating(&self, agent: &str) -> Result<Option<Standing>, LedgerError> {
        self.run(|c| {
            c.prepare_cached("SELECT rating, reviews, decisive, correct FROM ratings WHERE agent = ?1")?
                .query_row([agent], |row| standing_at(row, 0))
                .optional()
        })
    }

    fn ratings(&self) -> Result<Vec<(String, Standing)>, LedgerError> {
        self.run(|c| {
            c.prepare_cached("SELECT agent, rating, reviews, decisive, correct FROM ratings")?
                .query_map([], |row| Ok((row.get(0)?, standing_at(row, 1)?)))?
                .collect()
        })
    }

    fn scored_reviews(&self, reviewer: Option<&str>) -> Result<Vec<ScoredRow>, LedgerError> {
        self.run(|c| {
            c.prepare_cached(
                "SELECT review_id, request_id, outcome_id, reviewer, requester, verdict, incident, outcome, \
                 elo_delta, rating_after, ts FROM scored_reviews WHERE ?1 IS NULL OR reviewer = ?1 ORDER BY rowid",
            )?
            .query_map([reviewer], |row| {
                Ok(ScoredRow {
                    review_id: row.get(0)?,
                    request_id: row.get(1)?,
                    outcome_id: row.get(2)?,
                    reviewer: row.get(3)?,
                    requester: row.get(4)?,
                    verdict: row.get(5)?,
                    incident: row.get::<_, i64>(6)? != 0,
                    outcome: row.get(7)?,
                    elo_delta: row.get(8)?,
                    rating_after: row.get(9)?,
                    ts: row.get(10)?,
                })
            })?
            .collect()
        })
    }

    fn message_body(&self, id: &[u8]) -> Result<Option<String>, LedgerError> {
        self.run(|c| {
            c.prepare_cached("SELECT body FROM messages WHERE id = ?1")?
                .query_row([id], |row| row.get(0))
                .optional()
        })
    }

    fn each_message(&self, visit: &mut dyn FnMut(MessageRow)) -> Result<(), LedgerError> {
        self.run(|c| {
            let mut statement =
                c.prepare("SELECT seq, id, type, sender, ts, body, closed_by FROM messages ORDER BY seq")?;
            let mut rows = statement.query([])?;
            while let Some(row) = rows.next()? {
                visit(MessageRow {
                    seq: row.get(0)?,
                    id: row.get(1)?,
                    kind: row.get(2)?,
                    sender: row.get(3)?,
                    ts: row.get(4)?,
                    body: row.get(5)?,
                    closed_by: row.get(6)?,
                });
            }
            Ok(())
        })
    }

    fn all_latest_reviews(&self) -> Result<Vec<LatestRow>, LedgerError> {
        self.run(|c| {
            c.prepare("SELECT request_seq, reviewer, review_id, verdict, seq FROM latest_reviews")?
                .query_map([], |row| {
                    Ok(LatestRow {
                        request_seq: row.get(0)?,
                        reviewer: row.get(1)?,
                        review_id: row.get(2)?,
                        verdict: row.get(3)?,
                        seq: row.get(4)?,
                    })
                })?
                .collect()
        })
    }

    fn agents(&self) -> Result<Vec<(String, String, Option<String>)>, LedgerError> {
        self.run(|c| {
            c.prepare("SELECT id, pubkey, name FROM agents")?
                .query_map([], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))?
                .collect()
        })
    }

    fn names_of(&self, agents: &[String]) -> Result<Vec<(String, String)>, LedgerError> {
        self.run(|c| {
            let mut statement =
                c.prepare_cached("SELECT name FROM agents WHERE id = ?1 AND name IS NOT NULL")?;
            let mut names = Vec::new();
            for agent in agents {
                if let Some(name) = statement.query_row([agent], |row| row.get::<_, String>(0)).optional()? {
                    names.push((agent.clone(), name));
                }
            }
            Ok(names)
        })
    }
    fn integrity_check(&self) -> Result<Vec<String>, LedgerError> {
        let lines: Vec<String> = self.run(|c| {
            c.prepare("PRAGMA integrity_check")?.query_map([], |row| row.get::<_, String>(0))?.collect()
        })?;
        Ok(lines.into_iter().filter(|line| line != "ok").collect())
    }

    fn begin_write(&self) -> Result<(), LedgerError> {
        // IMMEDIATE takes the write lock now: the reads of this transaction then see what
        // the previous writer committed and nobody can change it before the commit.
        self.run(|c| c.execute_batch("BEGIN IMMEDIATE")).map_err(|error| match error {
            LedgerError::Sqlite { ledger, error: rusqlite::Error::SqliteFailure(failure, _) }
                if failure.code == ErrorCode::DatabaseBusy =>
            {
                LedgerError::Busy { ledger, waited: self.busy_timeout }
            }
            other => other,
        })
    }

    fn commit(&self) -> Result<(), LedgerError> {
        self.run(|c| c.execute_batch("COMMIT"))
    }

    fn rollback(&self) {
        if !self.connection.is_autocommit()
            && let Err(error) = self.connection.execute_batch("ROLLBACK")
        {
            tracing::warn!(ledger = %self.name, %error, "rollback failed");
        }
    }

    fn insert_message(&self, message: NewMessage<'_>) -> Result<Option<i64>, LedgerError> {
        self.run(|c| {
            // The insert is the duplicate check: one index search instead of two.
            let inserted = c
                .prepare_cached(
                    "INSERT INTO messages (id, type, sender, ts, body) VALUES (?1, ?2, ?3, ?4, ?5) \
                     ON CONFLICT (id) DO NOTHING",
                )?
                .execute((message.id, message.kind, message.sender, message.ts, message.body))?;
            Ok((inserted == 1).then(|| c.last_insert_rowid()))
        })
    }

    fn delete_message(&self, seq: i64) -> Result<(), LedgerError> {
        self.run(|c| c.prepare_cached("DELETE FROM messages WHERE seq = ?1")?.execute([seq]).map(drop))
    }

    fn request(&self, id: &[u8]) -> Result<Option<RequestRow>, LedgerError> {
        self.run(|c| {
            c.prepare_cached(
                "SELECT seq, sender, closed_by FROM messages WHERE id = ?1 AND type = 'REVIEW_REQUEST'",
            )?
            .query_row([id], |row| {
                Ok(RequestRow { seq: row.get(0)?, requester: row.get(1)?, closed_by: row.get(2)? })
            })
            .optional()
        })
    }

    fn latest_reviews(&self, request_seq: i64) -> Result<Vec<LatestRow>, LedgerError> {
        self.run(|c| {
            c.prepare_cached(
                "SELECT reviewer, review_id, verdict, seq FROM latest_reviews WHERE request_seq = ?1 ORDER BY seq",
            )?
            .query_map([request_seq], |row| {
                Ok(LatestRow {
                    request_seq,
                    reviewer: row.get(0)?,
                    review_id: row.get(1)?,
                    verdict: row.get(2)?,
                    seq: row.get(3)?,
                })
            })?
            .collect()
        })
    }

    fn write_batch(&self, writes: &BatchWrites) -> Result<(), LedgerError> {
        // In-process: a statement per row costs no round trip.
        self.run(|c| {
            let mut agents = c.prepare_cached("INSERT OR IGNORE INTO agents (id, pubkey) VALUES (?1, ?2)")?;
            for (agent, pubkey) in &writes.agents {
                agents.execute((agent, pubkey))?;
            }
            let mut name = c.prepare_cached("UPDATE agents SET name = ?2 WHERE id = ?1")?;
            for (agent, given) in &writes.names {
                name.execute((agent, given))?;
            }
            let mut latest = c.prepare_cached(
                "INSERT INTO latest_reviews (request_seq, reviewer, review_id, verdict, seq) VALUES (?1, ?2, ?3, ?4, ?5) \
                 ON CONFLICT (request_seq, reviewer) DO UPDATE SET review_id = ?3, verdict = ?4, seq = ?5",
            )?;
            for row in &writes.latest_reviews {
                latest.execute((row.request_seq, &row.reviewer, &row.review_id, &row.verdict, row.seq))?;
            }
            let mut close = c.prepare_cached("UPDATE messages SET closed_by = ?2 WHERE seq = ?1")?;
            for (request_seq, outcome_id) in &writes.closed {
                close.execute((request_seq, outcome_id))?;
            }
            let mut scored = c.prepare_cached(
                "INSERT INTO scored_reviews (review_id, request_id, outcome_id, reviewer, requester, verdict, \
                 incident, outcome, elo_delta, rating_after, ts) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
            )?;
            for row in &writes.scored {
                scored.execute(rusqlite::params![
                    row.review_id,
                    row.request_id,
                    row.outcome_id,
                    row.reviewer,
                    row.requester,
                    row.verdict,
                    row.incident,
                    row.outcome,
                    row.elo_delta,
                    row.rating_after,
                    row.ts,
                ])?;
            }
            let mut rating = c.prepare_cached(
                "INSERT INTO ratings (agent, rating, reviews, decisive, correct) VALUES (?1, ?2, ?3, ?4, ?5) \
                 ON CONFLICT (agent) DO UPDATE SET rating = ?2, reviews = ?3, decisive = ?4, correct = ?5",
            )?;
            for (agent, standing) in &writes.ratings {
                rating.execute((
                    agent,
                    standing.rating,
                    to_i64(standing.reviews),
                    to_i64(standing.decisive),
                    to_i64(standing.correct),
                ))?;
            }
            Ok(())
        })
    }
}

/// Switches to WAL. Two processes creating the same file at once can see SQLITE_BUSY here
/// without the busy handler being consulted, so retry for a while.
fn set_wal(connection: &Connection) -> rusqlite::Result<()> {
    let started = Instant::now();
    loop {
        match connection.pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get::<_, String>(0)) {
            Ok(_) => return Ok(()),
            Err(rusqlite::Error::SqliteFailure(error, _))
                if matches!(error.code, ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
                    && started.elapsed() < BUSY_TIMEOUT =>
            {
                std::thread::sleep(Duration::from_millis(10));
            }
            Err(error) => return Err(error),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A writer that cannot get the file's write lock within the busy timeout is told that
    /// another writer holds the ledger.
    #[test]
    fn a_writer_kept_waiting_is_told_another_writer_holds_the_ledger() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let path = dir.path().join("ledger.sqlite");
        let mut storage = SqliteStorage::open(&path, &[], Create::Yes).expect("a new ledger");
        storage.busy_timeout = Duration::from_millis(100);
        storage.connection.busy_timeout(storage.busy_timeout).expect("busy timeout");
        let other = Connection::open(&path).expect("a second connection");
        other.execute_batch("BEGIN IMMEDIATE").expect("the other writer's lock");
        let error = storage.begin_write().expect_err("the lock is held");
        assert!(
            matches!(error, LedgerError::Busy { waited, .. } if waited == Duration::from_millis(100)),
            "{error:?}"
        );
        let message = error.to_string();
        assert_eq!(
            message,
            format!(
                "ledger {}: another writer holds the ledger: waited 100 ms for it to finish and gave up; \
                 try again when it has finished",
                path.display()
            )
        );
        other.execute_batch("COMMIT").expect("the other writer finishes");
        storage.begin_write().expect("the lock is free");
    }
}
