//! The PostgreSQL backend, for platforms that run more than one server against one ledger.
//!
//! Writers take turns on a transaction-scoped advisory lock, as SQLite's writers do on
//! `BEGIN IMMEDIATE`: ratings are a fold over the message order, so two ingests cannot be
//! interleaved without changing the numbers. The transactions are READ COMMITTED on
//! purpose: each statement sees everything committed before it, including by the writer
//! that held the lock just before. (REPEATABLE READ or SERIALIZABLE would take their
//! snapshot at the first statement, the one that waits for the lock, and so miss that
//! writer's commit.) Sequence numbers come from an identity column while the lock is held,
//! so they increase in commit order and a replay sees the order the ratings were made in.

mod schema;

use super::LedgerError;
use super::storage::{LatestReview, NewMessage, RequestRow, ScoredRow, Storage, to_i64, to_u64};
use crate::policy::Standing;
use postgres::fallible_iterator::FallibleIterator;
use postgres::types::ToSql;
use postgres::{Client, NoTls, Row, Statement};
use std::cell::RefCell;
use std::collections::HashMap;
use std::str::FromStr;
use std::time::Duration;

/// The advisory lock every writer of a revcal ledger takes ("revcalLG" in ASCII).
pub(crate) const WRITE_LOCK: i64 = 0x7265_7663_616c_4c47;

/// How long a writer waits for the lock (or a connection attempt for the server) before
/// giving up, as SQLite's busy timeout.
const WAIT: Duration = Duration::from_secs(60);

/// The connection and its prepared statements.
struct Session {
    client: Client,
    statements: HashMap<&'static str, Statement>,
}

/// An open PostgreSQL ledger.
pub(crate) struct PostgresStorage {
    /// A `RefCell` because the client needs `&mut` for every query while the ledger's read
    /// methods take `&self`; the ledger is `Send` but not `Sync`, so no two borrows overlap.
    session: RefCell<Session>,
    /// The URL without its password, for error messages.
    name: String,
}

impl PostgresStorage {
    /// Connects to `url` and brings the ledger's tables up to date; `initial_meta` is written
    /// when the tables are new, in the transaction that creates them.
    pub(crate) fn open(
        url: &str,
        name: &str,
        initial_meta: &[(&str, String)],
    ) -> Result<PostgresStorage, LedgerError> {
        let error = |source| LedgerError::Postgres { ledger: name.to_owned(), error: source };
        let mut config = postgres::Config::from_str(url).map_err(error)?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(Duration::from_secs(10));
        }
        if config.get_application_name().is_none() {
            config.application_name("revcal");
        }
        let mut client = config.connect(NoTls).map_err(error)?;
        match schema::migrate(&mut client, initial_meta).map_err(error)? {
            schema::Migration::TooNew(found) => {
                return Err(LedgerError::TooNew { ledger: name.to_owned(), found });
            }
            schema::Migration::Created => tracing::info!(ledger = name, "created a new ledger"),
            schema::Migration::Current => {}
        }
        Ok(PostgresStorage {
            session: RefCell::new(Session { client, statements: HashMap::new() }),
            name: name.to_owned(),
        })
    }

    fn error(&self, source: postgres::Error) -> LedgerError {
        LedgerError::Postgres { ledger: self.name.clone(), error: source }
    }

    /// Runs `sql` (prepared once per connection) with `params`, returning its rows.
    fn query(&self, sql: &'static str, params: &[&(dyn ToSql + Sync)]) -> Result<Vec<Row>, LedgerError> {
        let mut session = self.session.borrow_mut();
        let Session { client, statements } = &mut *session;
        let statement = match statements.get(sql) {
            Some(statement) => statement.clone(),
            None => {
                let statement = client.prepare(sql).map_err(|e| self.error(e))?;
                statements.insert(sql, statement.clone());
                statement
            }
        };
        client.query(&statement, params).map_err(|e| self.error(e))
    }

    /// As [`Self::query`], for statements that return nothing.
    fn execute(&self, sql: &'static str, params: &[&(dyn ToSql + Sync)]) -> Result<(), LedgerError> {
        self.query(sql, params).map(drop)
    }

    /// Runs statements without parameters (transaction control).
    fn batch(&self, sql: &str) -> Result<(), LedgerError> {
        self.session.borrow_mut().client.batch_execute(sql).map_err(|e| self.error(e))
    }
}

/// Reads a column, naming the column on a type mismatch (a table changed by hand).
fn get<'a, T: postgres::types::FromSql<'a>>(row: &'a Row, index: usize) -> Result<T, postgres::Error> {
    row.try_get(index)
}

fn standing_at(row: &Row, first: usize) -> Result<Standing, postgres::Error> {
    Ok(Standing {
        rating: get(row, first)?,
        reviews: to_u64(get(row, first + 1)?),
        decisive: to_u64(get(row, first + 2)?),
        correct: to_u64(get(row, first + 3)?),
    })
}

impl PostgresStorage {
    fn decode<T>(
        &self,
        rows: Vec<Row>,
        decode: impl Fn(&Row) -> Result<T, postgres::Error>,
    ) -> Result<Vec<T>, LedgerError> {
        rows.iter().map(|row| decode(row).map_err(|e| self.error(e))).collect()
    }

    fn first<T>(
        &self,
        rows: Vec<Row>,
        decode: impl Fn(&Row) -> Result<T, postgres::Error>,
    ) -> Result<Option<T>, LedgerError> {
        rows.first().map(|row| decode(row).map_err(|e| self.error(e))).transpose()
    }
}

impl Storage for PostgresStorage {
    fn schema_version(&self) -> u32 {
        schema::SCHEMA_VERSION
    }

    fn meta(&self, key: &str) -> Result<Option<String>, LedgerError> {
        let rows = self.query("SELECT value FROM revcal_meta WHERE key = $1", &[&key])?;
        self.first(rows, |row| get(row, 0))
    }

    fn message_count(&self) -> Result<u64, LedgerError> {
        let rows = self.query("SELECT count(*) FROM revcal_messages", &[])?;
        Ok(self.first(rows, |row| get::<i64>(row, 0))?.map_or(0, to_u64))
    }

    fn ranked(&self, limit: Option<u32>) -> Result<Vec<(String, Standing)>, LedgerError> {
        let limit = limit.map(i64::from);
        let rows = self.query(
            "SELECT agent, rating, reviews, decisive, correct FROM revcal_ratings \
             ORDER BY rating DESC, reviews DESC, agent LIMIT $1",
            &[&limit],
        )?;
        self.decode(rows, |row| Ok((get(row, 0)?, standing_at(row, 1)?)))
    }

    fn rating(&self, agent: &str) -> Result<Option<Standing>, LedgerError> {
        let rows = self.query(
            "SELECT rating, reviews, decisive, correct FROM revcal_ratings WHERE agent = $1",
            &[&agent],
        )?;
        self.first(rows, |row| standing_at(row, 0))
    }

    fn ratings(&self) -> Result<Vec<(String, Standing)>, LedgerError> {
        let rows = self.query("SELECT agent, rating, reviews, decisive, correct FROM revcal_ratings", &[])?;
        self.decode(rows, |row| Ok((get(row, 0)?, standing_at(row, 1)?)))
    }

    fn scored_reviews(&self, reviewer: Option<&str>) -> Result<Vec<ScoredRow>, LedgerError> {
        let rows = self.query(
            "SELECT review_id, request_id, outcome_id, reviewer, requester, verdict, incident, outcome, \
             elo_delta, rating_after, ts FROM revcal_scored_reviews \
             WHERE $1::text IS NULL OR reviewer = $1 ORDER BY pos",
            &[&reviewer],
        )?;
        self.decode(rows, |row| {
            Ok(ScoredRow {
                review_id: get(row, 0)?,
                request_id: get(row, 1)?,
                outcome_id: get(row, 2)?,
                reviewer: get(row, 3)?,
                requester: get(row, 4)?,
                verdict: get(row, 5)?,
                incident: get(row, 6)?,
                outcome: get(row, 7)?,
                elo_delta: get(row, 8)?,
                rating_after: get(row, 9)?,
                ts: get(row, 10)?,
            })
        })
    }

    fn message_body(&self, id: &[u8]) -> Result<Option<String>, LedgerError> {
        let rows = self.query("SELECT body FROM revcal_messages WHERE id = $1", &[&id])?;
        self.first(rows, |row| get(row, 0))
    }

    fn each_message(&self, visit: &mut dyn FnMut(i64, Vec<u8>, String)) -> Result<(), LedgerError> {
        let mut session = self.session.borrow_mut();
        // Streamed row by row (a portal), not collected: a ledger may hold millions.
        let no_params: [&(dyn ToSql + Sync); 0] = [];
        let mut rows = session
            .client
            .query_raw("SELECT seq, id, body FROM revcal_messages ORDER BY seq", no_params)
            .map_err(|e| self.error(e))?;
        while let Some(row) = rows.next().map_err(|e| self.error(e))? {
            let decoded: Result<(i64, Vec<u8>, String), _> =
                (|| Ok((get(&row, 0)?, get(&row, 1)?, get(&row, 2)?)))();
            let (seq, id, body) = decoded.map_err(|e| self.error(e))?;
            visit(seq, id, body);
        }
        Ok(())
    }

    fn integrity_check(&self) -> Result<Vec<String>, LedgerError> {
        // PostgreSQL checks its own pages (and `amcheck` is an extension not every server
        // has); what is checked here is what the ledger relies on across its tables.
        let mut problems = Vec::new();
        for (sql, what) in schema::INTEGRITY_CHECKS {
            let rows = self.query(sql, &[])?;
            let count = self.first(rows, |row| get::<i64>(row, 0))?.unwrap_or(0);
            if count > 0 {
                problems.push(format!("{count} {what}"));
            }
        }
        Ok(problems)
    }

    fn begin_write(&self) -> Result<(), LedgerError> {
        let timeout = WAIT.as_millis();
        self.batch(&format!(
            "BEGIN ISOLATION LEVEL READ COMMITTED; SET LOCAL lock_timeout = {timeout}; \
             SELECT pg_advisory_xact_lock({WRITE_LOCK})"
        ))
    }

    fn commit(&self) -> Result<(), LedgerError> {
        self.batch("COMMIT")
    }

    fn rollback(&self) {
        if let Err(error) = self.batch("ROLLBACK") {
            tracing::warn!(ledger = %self.name, %error, "rollback failed");
        }
    }

    fn insert_message(&self, message: NewMessage<'_>) -> Result<Option<i64>, LedgerError> {
        let rows = self.query(
            "INSERT INTO revcal_messages (id, type, sender, ts, body) VALUES ($1, $2, $3, $4, $5) \
             ON CONFLICT (id) DO NOTHING RETURNING seq",
            &[&message.id, &message.kind, &message.sender, &message.ts, &message.body],
        )?;
        self.first(rows, |row| get(row, 0))
    }

    fn delete_message(&self, seq: i64) -> Result<(), LedgerError> {
        self.execute("DELETE FROM revcal_messages WHERE seq = $1", &[&seq])
    }

    fn request(&self, id: &[u8]) -> Result<Option<RequestRow>, LedgerError> {
        let rows = self.query(
            "SELECT seq, sender, closed_by FROM revcal_messages WHERE id = $1 AND type = 'REVIEW_REQUEST'",
            &[&id],
        )?;
        self.first(rows, |row| {
            Ok(RequestRow { seq: get(row, 0)?, requester: get(row, 1)?, closed_by: get(row, 2)? })
        })
    }

    fn insert_agent(&self, agent: &str, pubkey: &str) -> Result<(), LedgerError> {
        self.execute(
            "INSERT INTO revcal_agents (id, pubkey) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING",
            &[&agent, &pubkey],
        )
    }

    fn record_latest_review(
        &self,
        request_seq: i64,
        reviewer: &str,
        review_id: &[u8],
        verdict: &str,
        seq: i64,
    ) -> Result<(), LedgerError> {
        self.execute(
            "INSERT INTO revcal_latest_reviews (request_seq, reviewer, review_id, verdict, seq) \
             VALUES ($1, $2, $3, $4, $5) ON CONFLICT (request_seq, reviewer) \
             DO UPDATE SET review_id = $3, verdict = $4, seq = $5",
            &[&request_seq, &reviewer, &review_id, &verdict, &seq],
        )
    }

    fn close_request(&self, request_seq: i64, outcome_id: &[u8]) -> Result<(), LedgerError> {
        self.execute("UPDATE revcal_messages SET closed_by = $2 WHERE seq = $1", &[&request_seq, &outcome_id])
    }

    fn latest_reviews(&self, request_seq: i64) -> Result<Vec<LatestReview>, LedgerError> {
        let rows = self.query(
            "SELECT reviewer, review_id, verdict FROM revcal_latest_reviews WHERE request_seq = $1 ORDER BY seq",
            &[&request_seq],
        )?;
        self.decode(rows, |row| {
            Ok(LatestReview { reviewer: get(row, 0)?, review_id: get(row, 1)?, verdict: get(row, 2)? })
        })
    }

    fn insert_scored(&self, row: &ScoredRow) -> Result<(), LedgerError> {
        self.execute(
            "INSERT INTO revcal_scored_reviews (review_id, request_id, outcome_id, reviewer, requester, verdict, \
             incident, outcome, elo_delta, rating_after, ts) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
            &[
                &row.review_id,
                &row.request_id,
                &row.outcome_id,
                &row.reviewer,
                &row.requester,
                &row.verdict,
                &row.incident,
                &row.outcome,
                &row.elo_delta,
                &row.rating_after,
                &row.ts,
            ],
        )
    }

    fn write_rating(&self, agent: &str, standing: &Standing) -> Result<(), LedgerError> {
        self.execute(
            "INSERT INTO revcal_ratings (agent, rating, reviews, decisive, correct) VALUES ($1, $2, $3, $4, $5) \
             ON CONFLICT (agent) DO UPDATE SET rating = $2, reviews = $3, decisive = $4, correct = $5",
            &[
                &agent,
                &standing.rating,
                &to_i64(standing.reviews),
                &to_i64(standing.decisive),
                &to_i64(standing.correct),
            ],
        )
    }
}
