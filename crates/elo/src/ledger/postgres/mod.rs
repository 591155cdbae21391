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
mod scoped;
mod session;

use super::LedgerError;
use super::location::PostgresLocation;
use super::sqlite::Create;
use super::storage::{
    BatchWrites, LatestRow, MessageRow, NewMessage, RequestRow, ScoredRow, Storage, to_i64, to_u64,
};
use revcal_elo_protocol::Standing;
use session::Session;
use tokio_postgres::Row;
use tokio_postgres::types::ToSql;

/// The advisory lock every writer of a revcal ledger takes ("revcalLG" in ASCII).
pub(crate) const WRITE_LOCK: i64 = 0x7265_7663_616c_4c47;

/// Messages per statement when every stored message is read back (replay): pages keep
/// each statement short and the memory bounded, whatever the size of the ledger.
const REPLAY_PAGE: i64 = 512;

/// An open PostgreSQL ledger.
pub(crate) struct PostgresStorage {
    session: Session,
}

impl PostgresStorage {
    /// Connects to `location` and brings the ledger's tables up to date; `initial_meta` is
    /// written when the tables are new, in the transaction that creates them. `name` is the
    /// location as messages show it.
    ///
    /// A schema that holds other tables and no ledger is refused before anything is
    /// written; with [`Create::No`] so is one that holds no ledger yet.
    pub(crate) fn open(
        location: &PostgresLocation,
        name: &str,
        initial_meta: &[(&str, String)],
        create: Create,
    ) -> Result<PostgresStorage, LedgerError> {
        let session = Session::connect(location, name)?;
        match schema::migrate(&session, initial_meta, create)? {
            schema::Migration::TooNew(found) => {
                return Err(LedgerError::TooNew { ledger: name.to_owned(), found });
            }
            schema::Migration::Created => tracing::info!(ledger = name, "created a new ledger"),
            schema::Migration::Current => {}
        }
        Ok(PostgresStorage { session })
    }

    /// Refuses `location` when its schema holds another application's tables, writing
    /// nothing.
    pub(crate) fn refuse_foreign(location: &PostgresLocation, name: &str) -> Result<(), LedgerError> {
        schema::refuse_foreign(&Session::connect(location, name)?)
    }

    fn error(&self, source: tokio_postgres::Error) -> LedgerError {
        self.session.error(source)
    }

    /// Runs `sql` (prepared once per connection) with `params`, returning its rows.
    fn query(&self, sql: &'static str, params: &[&(dyn ToSql + Sync)]) -> Result<Vec<Row>, LedgerError> {
        self.session.query(sql, params)
    }

    /// As [`Self::query`], for statements that return nothing.
    fn execute(&self, sql: &'static str, params: &[&(dyn ToSql + Sync)]) -> Result<(), LedgerError> {
        self.query(sql, params).map(drop)
    }
}

/// Reads a column, naming the column on a type mismatch (a table changed by hand).
fn get<'a, T: tokio_postgres::types::FromSql<'a>>(
    row: &'a Row,
    index: usize,
) -> Result<T, tokio_postgres::Error> {
    row.try_get(index)
}

fn standing_at(row: &Row, first: usize) -> Result<Standing, tokio_postgres::Error> {
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
        decode: impl Fn(&Row) -> Result<T, tokio_postgres::Error>,
    ) -> Result<Vec<T>, LedgerError> {
        rows.iter().map(|row| decode(row).map_err(|e| self.error(e))).collect()
    }

    fn first<T>(
        &self,
        rows: Vec<Row>,
        decode: impl Fn(&Row) -> Result<T, tokio_postgres::Error>,
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

    fn each_message(&self, visit: &mut dyn FnMut(MessageRow)) -> Result<(), LedgerError> {
        // Page by page in storing order: each statement short (within statement_timeout
        // however long the replay takes), at most a page in memory.
        let mut after = i64::MIN;
        loop {
            let rows = self.query(
                "SELECT seq, id, type, sender, ts, body, closed_by FROM revcal_messages WHERE seq > $1 \
                 ORDER BY seq LIMIT $2",
                &[&after, &REPLAY_PAGE],
            )?;
            let full = rows.len() as i64 == REPLAY_PAGE;
            for row in rows {
                let decoded: Result<MessageRow, _> = (|| {
                    Ok(MessageRow {
                        seq: get(&row, 0)?,
                        id: get(&row, 1)?,
                        kind: get(&row, 2)?,
                        sender: get(&row, 3)?,
                        ts: get(&row, 4)?,
                        body: get(&row, 5)?,
                        closed_by: get(&row, 6)?,
                    })
                })();
                let message = decoded.map_err(|e| self.error(e))?;
                after = message.seq;
                visit(message);
            }
            if !full {
                return Ok(());
            }
        }
    }

    fn all_latest_reviews(&self) -> Result<Vec<LatestRow>, LedgerError> {
        let rows = self
            .query("SELECT request_seq, reviewer, review_id, verdict, seq FROM revcal_latest_reviews", &[])?;
        self.decode(rows, |row| {
            Ok(LatestRow {
                request_seq: get(row, 0)?,
                reviewer: get(row, 1)?,
                review_id: get(row, 2)?,
                verdict: get(row, 3)?,
                seq: get(row, 4)?,
            })
        })
    }

    fn agents(&self) -> Result<Vec<(String, String, Option<String>)>, LedgerError> {
        let rows = self.query("SELECT id, pubkey, name FROM revcal_agents", &[])?;
        self.decode(rows, |row| Ok((get(row, 0)?, get(row, 1)?, get(row, 2)?)))
    }

    fn names_of(&self, agents: &[String]) -> Result<Vec<(String, String)>, LedgerError> {
        if agents.is_empty() {
            return Ok(Vec::new());
        }
        let rows = self.query(
            "SELECT id, name FROM revcal_agents WHERE id = ANY($1) AND name IS NOT NULL",
            &[&agents],
        )?;
        self.decode(rows, |row| Ok((get(row, 0)?, get(row, 1)?)))
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
        self.session.begin_locked(WRITE_LOCK)
    }

    fn commit(&self) -> Result<(), LedgerError> {
        self.session.batch("COMMIT")
    }

    fn rollback(&self) {
        self.session.rollback();
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

    fn latest_reviews(&self, request_seq: i64) -> Result<Vec<LatestRow>, LedgerError> {
        let rows = self.query(
            "SELECT reviewer, review_id, verdict, seq FROM revcal_latest_reviews WHERE request_seq = $1 ORDER BY seq",
            &[&request_seq],
        )?;
        self.decode(rows, |row| {
            Ok(LatestRow {
                request_seq,
                reviewer: get(row, 0)?,
                review_id: get(row, 1)?,
                verdict: get(row, 2)?,
                seq: get(row, 3)?,
            })
        })
    }

    fn write_batch(&self, writes: &BatchWrites) -> Result<(), LedgerError> {
        // One statement per kind of row, each row a position in parallel arrays: a batch
        // costs five round trips to the server instead of one per row.
        if !writes.agents.is_empty() {
            let ids: Vec<&str> = writes.agents.iter().map(|(id, _)| id.as_str()).collect();
            let keys: Vec<&str> = writes.agents.iter().map(|(_, key)| key.as_str()).collect();
            self.execute(
                "INSERT INTO revcal_agents (id, pubkey) SELECT * FROM unnest($1::text[], $2::text[]) \
                 ON CONFLICT (id) DO NOTHING",
                &[&ids, &keys],
            )?;
        }
        if !writes.names.is_empty() {
            // The last name of each agent stands: one row per agent for the update.
            let last: std::collections::BTreeMap<&str, &str> =
                writes.names.iter().map(|(agent, name)| (agent.as_str(), name.as_str())).collect();
            let (ids, names): (Vec<&str>, Vec<&str>) = last.into_iter().unzip();
            self.execute(
                "UPDATE revcal_agents SET name = given.name FROM unnest($1::text[], $2::text[]) AS given (id, name) \
                 WHERE revcal_agents.id = given.id",
                &[&ids, &names],
            )?;
        }
        if !writes.latest_reviews.is_empty() {
            let rows = &writes.latest_reviews;
            let request_seqs: Vec<i64> = rows.iter().map(|row| row.request_seq).collect();
            let reviewers: Vec<&str> = rows.iter().map(|row| row.reviewer.as_str()).collect();
            let review_ids: Vec<&[u8]> = rows.iter().map(|row| row.review_id.as_slice()).collect();
            let verdicts: Vec<&str> = rows.iter().map(|row| row.verdict.as_str()).collect();
            let seqs: Vec<i64> = rows.iter().map(|row| row.seq).collect();
            self.execute(
                "INSERT INTO revcal_latest_reviews (request_seq, reviewer, review_id, verdict, seq) \
                 SELECT * FROM unnest($1::bigint[], $2::text[], $3::bytea[], $4::text[], $5::bigint[]) \
                 ON CONFLICT (request_seq, reviewer) DO UPDATE \
                 SET review_id = excluded.review_id, verdict = excluded.verdict, seq = excluded.seq",
                &[&request_seqs, &reviewers, &review_ids, &verdicts, &seqs],
            )?;
        }
        if !writes.closed.is_empty() {
            let seqs: Vec<i64> = writes.closed.iter().map(|(seq, _)| *seq).collect();
            let outcomes: Vec<&[u8]> = writes.closed.iter().map(|(_, id)| id.as_slice()).collect();
            self.execute(
                "UPDATE revcal_messages AS m SET closed_by = v.outcome \
                 FROM unnest($1::bigint[], $2::bytea[]) AS v(seq, outcome) WHERE m.seq = v.seq",
                &[&seqs, &outcomes],
            )?;
        }
        if !writes.scored.is_empty() {
            let rows = &writes.scored;
            let bytes = |pick: fn(&ScoredRow) -> &[u8]| -> Vec<&[u8]> { rows.iter().map(pick).collect() };
            let text = |pick: fn(&ScoredRow) -> &str| -> Vec<&str> { rows.iter().map(pick).collect() };
            let (review_ids, request_ids, outcome_ids) =
                (bytes(|r| &r.review_id), bytes(|r| &r.request_id), bytes(|r| &r.outcome_id));
            let (reviewers, requesters, verdicts, outcomes) =
                (text(|r| &r.reviewer), text(|r| &r.requester), text(|r| &r.verdict), text(|r| &r.outcome));
            let incidents: Vec<bool> = rows.iter().map(|row| row.incident).collect();
            let deltas: Vec<f64> = rows.iter().map(|row| row.elo_delta).collect();
            let after: Vec<f64> = rows.iter().map(|row| row.rating_after).collect();
            let ts: Vec<i64> = rows.iter().map(|row| row.ts).collect();
            // WITH ORDINALITY and ORDER BY: the identity column `pos` keeps scoring order.
            self.execute(
                "INSERT INTO revcal_scored_reviews (review_id, request_id, outcome_id, reviewer, requester, \
                 verdict, incident, outcome, elo_delta, rating_after, ts) \
                 SELECT review_id, request_id, outcome_id, reviewer, requester, verdict, incident, outcome, \
                 elo_delta, rating_after, ts FROM unnest($1::bytea[], $2::bytea[], $3::bytea[], $4::text[], \
                 $5::text[], $6::text[], $7::boolean[], $8::text[], $9::float8[], $10::float8[], $11::bigint[]) \
                 WITH ORDINALITY AS v(review_id, request_id, outcome_id, reviewer, requester, verdict, incident, \
                 outcome, elo_delta, rating_after, ts, position) ORDER BY position",
                &[
                    &review_ids,
                    &request_ids,
                    &outcome_ids,
                    &reviewers,
                    &requesters,
                    &verdicts,
                    &incidents,
                    &outcomes,
                    &deltas,
                    &after,
                    &ts,
                ],
            )?;
        }
        if !writes.ratings.is_empty() {
            let rows = &writes.ratings;
            let agents: Vec<&str> = rows.iter().map(|(agent, _)| agent.as_str()).collect();
            let ratings: Vec<f64> = rows.iter().map(|(_, standing)| standing.rating).collect();
            let count = |pick: fn(&Standing) -> u64| -> Vec<i64> {
                rows.iter().map(|(_, s)| to_i64(pick(s))).collect()
            };
            let (reviews, decisive, correct) =
                (count(|s| s.reviews), count(|s| s.decisive), count(|s| s.correct));
            self.execute(
                "INSERT INTO revcal_ratings (agent, rating, reviews, decisive, correct) \
                 SELECT * FROM unnest($1::text[], $2::float8[], $3::bigint[], $4::bigint[], $5::bigint[]) \
                 ON CONFLICT (agent) DO UPDATE SET rating = excluded.rating, reviews = excluded.reviews, \
                 decisive = excluded.decisive, correct = excluded.correct",
                &[&agents, &ratings, &reviews, &decisive, &correct],
            )?;
        }
        Ok(())
    }
}
