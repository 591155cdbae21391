//! The ledger: every accepted message stored once, ratings materialised beside them, on one
//! SQLite file in WAL mode that several processes may write at once.

mod handle;
mod pipeline;
mod replay;
mod schema;
mod store;

pub use handle::Response;
pub use replay::ReplayReport;
use schema::SCHEMA_VERSION;
pub use store::{LineOutcome, Stored};

use crate::canonical::{JsonError, parse_strict};
use crate::codec;
use crate::engine::ScoredReview;
use crate::identity::{AgentId, KeyError, KeyFile, Keypair};
use crate::message::LeaderboardEntry;
use crate::message::{Content, MessageId, Verdict};
use crate::policy::{OutcomeClass, Policy, PolicyError, Standing};
use crate::receipt::Receipt;
use crate::signed::MessageError;
use rusqlite::{Connection, ErrorCode, OptionalExtension};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How long a writer waits for another process's transaction before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(60);

/// WAL pages (4 KiB each) after which a commit checkpoints the WAL into the file: 128 MiB.
const WAL_CHECKPOINT_PAGES: i64 = 32_768;

/// The file name of the default ledger.
pub const DEFAULT_LEDGER_FILE: &str = "revcal-ledger.sqlite";

/// Why the ledger could not do what was asked.
///
/// Each message names the ledger file and is complete on its own; the typed cause, where
/// there is one, is also the error's `source`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LedgerError {
    /// SQLite failed (I/O, a locked file past the timeout, a corrupt file).
    #[error("ledger {path}: {source}")]
    Sqlite {
        /// The ledger file.
        path: PathBuf,
        /// SQLite's error.
        #[source]
        source: rusqlite::Error,
    },
    /// The file's schema is newer than this build understands.
    #[error(
        "ledger {path}: schema version {found} is newer than this revcal understands ({SCHEMA_VERSION}); upgrade revcal"
    )]
    TooNew {
        /// The ledger file.
        path: PathBuf,
        /// The file's version.
        found: u32,
    },
    /// Stored data that this build cannot read back (a hand-edited or damaged file).
    #[error("ledger {path}: {what}")]
    Corrupt {
        /// The ledger file.
        path: PathBuf,
        /// What is wrong.
        what: String,
    },
    /// The ledger's own key, stored in the file, does not load.
    #[error("ledger {path}: ledger key: {source}")]
    LedgerKey {
        /// The ledger file.
        path: PathBuf,
        /// Why the key file does not load.
        #[source]
        source: KeyError,
    },
    /// The rating policy stored in the file does not parse.
    #[error("ledger {path}: policy: {source}")]
    StoredPolicy {
        /// The ledger file.
        path: PathBuf,
        /// What serde_json said.
        #[source]
        source: JsonError,
    },
    /// The ledger could not sign its answer to a query.
    #[error("ledger {path}: could not sign the leaderboard reply: {source}")]
    Reply {
        /// The ledger file.
        path: PathBuf,
        /// Why signing failed.
        #[source]
        source: MessageError,
    },
    /// The ledger was created with another policy than the one asked for.
    #[error("ledger {path}: created with a different rating policy; open it without one to use its own")]
    PolicyMismatch {
        /// The ledger file.
        path: PathBuf,
    },
    /// The policy asked for cannot rate.
    #[error(transparent)]
    Policy(#[from] PolicyError),
}

/// An open ledger.
pub struct Ledger {
    connection: Connection,
    path: PathBuf,
    policy: Policy,
    key: Keypair,
    /// Agents known to have an `agents` row and reviewers known to have a `ratings` row
    /// (rows are never deleted, so this only saves statements; filled after each commit).
    seen: store::SeenRows,
}

impl std::fmt::Debug for Ledger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ledger")
            .field("path", &self.path)
            .field("issuer", &self.key.agent_id())
            .finish_non_exhaustive()
    }
}

impl Ledger {
    /// Opens the ledger at `path`, creating it (with the default policy and a new ledger key
    /// from the OS random source) when it does not exist.
    pub fn open(path: impl AsRef<Path>) -> Result<Ledger, LedgerError> {
        Ledger::open_inner(path.as_ref(), None)
    }

    /// Opens or creates the ledger at `path` with `policy`. An existing ledger must have been
    /// created with the same policy.
    pub fn open_with_policy(path: impl AsRef<Path>, policy: Policy) -> Result<Ledger, LedgerError> {
        policy.validate()?;
        Ledger::open_inner(path.as_ref(), Some(policy))
    }

    fn open_inner(path: &Path, wanted: Option<Policy>) -> Result<Ledger, LedgerError> {
        let sql = |source| LedgerError::Sqlite { path: path.to_owned(), source };
        let mut connection = Connection::open(path).map_err(sql)?;
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
        let new_policy = wanted.clone().unwrap_or_default();
        let migration = schema::migrate(&mut connection, |transaction| {
            let key = Keypair::generate()
                .map_err(|error| rusqlite::Error::ToSqlConversionFailure(Box::new(error)))?;
            transaction.execute(
                "INSERT INTO meta (key, value) VALUES ('ledger_key', ?1), ('policy', ?2)",
                (
                    serde_json::to_string(&key.to_key_file()).unwrap_or_default(),
                    serde_json::to_string(&new_policy).unwrap_or_default(),
                ),
            )?;
            tracing::info!(issuer = %key.agent_id(), "created a new ledger");
            Ok(())
        })
        .map_err(sql)?;
        if let schema::Migration::TooNew(found) = migration {
            return Err(LedgerError::TooNew { path: path.to_owned(), found });
        }
        let corrupt = |what: String| LedgerError::Corrupt { path: path.to_owned(), what };
        let meta = |key: &str| -> Result<String, LedgerError> {
            connection
                .query_row("SELECT value FROM meta WHERE key = ?1", [key], |row| row.get::<_, String>(0))
                .optional()
                .map_err(sql)?
                .ok_or_else(|| corrupt(format!("meta has no `{key}`")))
        };
        let key = KeyFile::parse(&meta("ledger_key")?)
            .and_then(|file| file.keypair())
            .map_err(|source| LedgerError::LedgerKey { path: path.to_owned(), source })?;
        let policy: Policy = serde_json::from_str(&meta("policy")?)
            .map_err(|error| LedgerError::StoredPolicy { path: path.to_owned(), source: error.into() })?;
        if wanted.is_some_and(|wanted| wanted != policy) {
            return Err(LedgerError::PolicyMismatch { path: path.to_owned() });
        }
        Ok(Ledger { connection, path: path.to_owned(), policy, key, seen: store::SeenRows::default() })
    }

    /// The ledger file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The schema version of the file, which opening brought up to this build's
    /// (docs/reputation.md, section 6).
    pub fn schema_version(&self) -> u32 {
        SCHEMA_VERSION
    }

    /// The rating policy the ledger was created with.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// The ledger's own agent id (the `issuer` of its receipts).
    pub fn issuer(&self) -> AgentId {
        self.key.agent_id()
    }

    /// The ledger's public key file: what a verifier of its receipts needs.
    pub fn issuer_key(&self) -> KeyFile {
        self.key.to_key_file().public_only()
    }

    fn sql(&self, source: rusqlite::Error) -> LedgerError {
        LedgerError::Sqlite { path: self.path.clone(), source }
    }

    fn corrupt(&self, what: impl Into<String>) -> LedgerError {
        LedgerError::Corrupt { path: self.path.clone(), what: what.into() }
    }

    /// The number of stored messages.
    pub fn message_count(&self) -> Result<u64, LedgerError> {
        self.connection
            .query_row("SELECT count(*) FROM messages", [], |row| row.get::<_, i64>(0))
            .map(to_u64)
            .map_err(|e| self.sql(e))
    }

    /// The best `limit` reviewers (all when `None`): rating, then review count, then id.
    pub fn leaderboard(&self, limit: Option<u32>) -> Result<Vec<LeaderboardEntry>, LedgerError> {
        let limit = limit.map_or(-1, i64::from);
        let mut statement = self
            .connection
            .prepare_cached(
                "SELECT agent, rating, reviews, decisive, correct FROM ratings \
                 ORDER BY rating DESC, reviews DESC, agent LIMIT ?1",
            )
            .map_err(|e| self.sql(e))?;
        let rows = statement
            .query_map([limit], |row| {
                Ok((
                    row.get::<_, String>(0)?,
                    row.get::<_, f64>(1)?,
                    row.get::<_, i64>(2)?,
                    row.get::<_, i64>(3)?,
                    row.get::<_, i64>(4)?,
                ))
            })
            .map_err(|e| self.sql(e))?;
        let mut entries = Vec::new();
        for (index, row) in rows.enumerate() {
            let (agent, rating, reviews, decisive, correct) = row.map_err(|e| self.sql(e))?;
            let agent = AgentId::parse(&agent)
                .ok_or_else(|| self.corrupt(format!("ratings: bad agent id {agent:?}")))?;
            let standing = Standing {
                rating,
                reviews: to_u64(reviews),
                decisive: to_u64(decisive),
                correct: to_u64(correct),
            };
            entries.push(LeaderboardEntry {
                rank: u32::try_from(index + 1).unwrap_or(u32::MAX),
                agent,
                elo: rating,
                reviews: standing.reviews,
                accuracy: standing.accuracy(),
            });
        }
        Ok(entries)
    }

    /// One reviewer's standing, `None` for an agent that never reviewed.
    pub fn standing(&self, agent: &AgentId) -> Result<Option<Standing>, LedgerError> {
        self.connection
            .query_row(
                "SELECT rating, reviews, decisive, correct FROM ratings WHERE agent = ?1",
                [agent.as_str()],
                |row| {
                    Ok(Standing {
                        rating: row.get(0)?,
                        reviews: to_u64(row.get(1)?),
                        decisive: to_u64(row.get(2)?),
                        correct: to_u64(row.get(3)?),
                    })
                },
            )
            .optional()
            .map_err(|e| self.sql(e))
    }

    /// Every stored rating, by agent.
    pub fn standings(&self) -> Result<std::collections::BTreeMap<AgentId, Standing>, LedgerError> {
        let mut statement = self
            .connection
            .prepare_cached("SELECT agent, rating, reviews, decisive, correct FROM ratings")
            .map_err(|e| self.sql(e))?;
        let rows = statement
            .query_map([], |row| {
                let standing = Standing {
                    rating: row.get(1)?,
                    reviews: to_u64(row.get(2)?),
                    decisive: to_u64(row.get(3)?),
                    correct: to_u64(row.get(4)?),
                };
                Ok((row.get::<_, String>(0)?, standing))
            })
            .map_err(|e| self.sql(e))?;
        let mut standings = std::collections::BTreeMap::new();
        for row in rows {
            let (agent, standing) = row.map_err(|e| self.sql(e))?;
            let agent = AgentId::parse(&agent)
                .ok_or_else(|| self.corrupt(format!("ratings: bad agent id {agent:?}")))?;
            standings.insert(agent, standing);
        }
        Ok(standings)
    }

    /// Every scored review of `reviewer` (every reviewer when `None`), in scoring order.
    pub fn scored_reviews(&self, reviewer: Option<&AgentId>) -> Result<Vec<ScoredReview>, LedgerError> {
        let mut statement = self
            .connection
            .prepare_cached(
                "SELECT review_id, request_id, outcome_id, reviewer, requester, verdict, incident, outcome, \
                 elo_delta, rating_after, ts FROM scored_reviews WHERE ?1 IS NULL OR reviewer = ?1 ORDER BY rowid",
            )
            .map_err(|e| self.sql(e))?;
        let rows =
            statement.query_map([reviewer.map(AgentId::as_str)], decode_scored).map_err(|e| self.sql(e))?;
        let mut scored = Vec::new();
        for (index, row) in rows.enumerate() {
            let row = row.map_err(|e| self.sql(e))?;
            scored.push(
                row.ok_or_else(|| self.corrupt(format!("scored_reviews: unreadable row {}", index + 1)))?,
            );
        }
        Ok(scored)
    }

    /// Signed receipts for every scored review of `reviewer`, oldest first.
    pub fn receipts(&self, reviewer: &AgentId) -> Result<Vec<Receipt>, LedgerError> {
        let mut subjects: HashMap<MessageId, Option<String>> = HashMap::new();
        let mut receipts = Vec::new();
        for scored in self.scored_reviews(Some(reviewer))? {
            if !subjects.contains_key(&scored.request_id) {
                let subject = self.request_subject(&scored.request_id)?;
                subjects.insert(scored.request_id.clone(), subject);
            }
            let subject = subjects.get(&scored.request_id).and_then(Option::as_deref);
            receipts.push(Receipt::issue(&scored, subject, &self.key));
        }
        Ok(receipts)
    }

    /// How a stored request names its change (`None` when it is not stored or names none).
    fn request_subject(&self, request: &MessageId) -> Result<Option<String>, LedgerError> {
        let body: Option<String> = self
            .connection
            .prepare_cached("SELECT body FROM messages WHERE id = ?1")
            .and_then(|mut statement| {
                statement.query_row([request.to_bytes().as_slice()], |row| row.get(0)).optional()
            })
            .map_err(|e| self.sql(e))?;
        let envelope =
            body.and_then(|body| parse_strict(&body).ok()).and_then(|value| codec::decode(&value).ok());
        Ok(match envelope.map(|envelope| envelope.message.content) {
            Some(Content::Request(request)) => request.subject().map(str::to_owned),
            _ => None,
        })
    }

    /// Runs SQLite's `PRAGMA integrity_check`; an empty list means the file is sound.
    pub fn integrity_check(&self) -> Result<Vec<String>, LedgerError> {
        let mut statement = self.connection.prepare("PRAGMA integrity_check").map_err(|e| self.sql(e))?;
        let rows = statement.query_map([], |row| row.get::<_, String>(0)).map_err(|e| self.sql(e))?;
        let problems: Vec<String> = rows.collect::<Result<_, _>>().map_err(|e| self.sql(e))?;
        Ok(problems.into_iter().filter(|line| line != "ok").collect())
    }
}

/// One `scored_reviews` row; `None` when a stored value does not parse back.
fn decode_scored(row: &rusqlite::Row) -> rusqlite::Result<Option<ScoredReview>> {
    let text = |index: usize| row.get::<_, String>(index);
    let blob = |index: usize| row.get::<_, Vec<u8>>(index);
    let (review, request, outcome_id) = (blob(0)?, blob(1)?, blob(2)?);
    let (reviewer, requester, verdict, outcome) = (text(3)?, text(4)?, text(5)?, text(7)?);
    let (incident, elo_delta, rating_after, ts) =
        (row.get::<_, i64>(6)?, row.get::<_, f64>(8)?, row.get::<_, f64>(9)?, row.get::<_, i64>(10)?);
    Ok((|| {
        Some(ScoredReview {
            review_id: MessageId::from_bytes(&review)?,
            request_id: MessageId::from_bytes(&request)?,
            outcome_id: MessageId::from_bytes(&outcome_id)?,
            reviewer: AgentId::parse(&reviewer)?,
            requester: AgentId::parse(&requester)?,
            verdict: Verdict::from_wire(&verdict)?,
            incident: incident != 0,
            outcome: OutcomeClass::from_wire(&outcome)?,
            elo_delta,
            rating_after,
            ts: u64::try_from(ts).ok()?,
        })
    })())
}

fn to_u64(value: i64) -> u64 {
    u64::try_from(value).unwrap_or(0)
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
