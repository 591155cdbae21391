//! The ledger: every accepted message stored once, ratings materialised beside them, in an
//! SQLite file (WAL mode, several processes may write at once) or a PostgreSQL database
//! (several processes on several machines). The rules live here; the databases live behind
//! the [`storage::Storage`] seam.

mod handle;
mod location;
mod pipeline;
#[cfg(feature = "postgres")]
mod postgres;
mod record;
mod replay;
mod scoped_storage;
mod sqlite;
mod storage;
mod store;
mod verified;

pub use handle::Response;
#[cfg(feature = "postgres")]
pub use location::PostgresLocation;
pub use location::{LedgerLocation, LocationError};
pub use record::{Recorded, Recording, Refusal};
pub use replay::ReplayReport;
pub use store::{LineOutcome, Stored};
pub use verified::RatingChange;

use revcal_elo_protocol::{
    AgentId, Content, JsonError, KeyError, KeyFile, Keypair, LeaderboardEntry, MessageError, MessageId,
    OutcomeClass, Policy, PolicyError, Receipt, ReviewVerdict, ScoredReview, Standing, parse_strict,
};
use sqlite::Create;
use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;
use storage::{ScoredRow, Storage};

/// The file name of the default ledger.
pub const DEFAULT_LEDGER_FILE: &str = "revcal-ledger.sqlite";

/// Why the ledger could not do what was asked.
///
/// Each message names the ledger (its file, or its URL without the password) and is complete
/// on its own; the typed cause, where there is one, is also the error's `source`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LedgerError {
    /// SQLite failed (I/O, a locked file past the timeout, a corrupt file).
    ///
    /// The message carries SQLite's whole explanation, so `error` is not also the
    /// `source` (a chain printer would say it twice).
    #[error("ledger {ledger}: {}", with_causes(error))]
    Sqlite {
        /// The ledger file.
        ledger: String,
        /// SQLite's error.
        error: rusqlite::Error,
    },
    /// PostgreSQL failed (no server, refused credentials, a statement refused, the
    /// connection lost). The message carries the server's own, as `Sqlite`'s does.
    #[cfg(feature = "postgres")]
    #[error("ledger {ledger}: {}", with_causes(error))]
    Postgres {
        /// The ledger's URL, without its password.
        ledger: String,
        /// The client's error (with the server's message and SQLSTATE, when the server sent
        /// one).
        error: tokio_postgres::Error,
    },
    /// The PostgreSQL server did not answer in time: stopped or frozen, overloaded, or
    /// unreachable. The connection is given up (the server rolls back its transaction).
    #[error(
        "ledger {ledger}: the server did not answer within {} while {doing}; it may be stopped, frozen, \
         overloaded or unreachable (connect_timeout, statement_timeout and lock_timeout set how long \
         revcal waits: docs/reputation.md, \"PostgreSQL\")",
        seconds(*waited)
    )]
    NoAnswer {
        /// The ledger's URL, without its password.
        ledger: String,
        /// How long revcal waited.
        waited: Duration,
        /// What it was waiting for: `connecting`, or a statement's result.
        doing: &'static str,
    },
    /// Another writer held the ledger (an ingest in another process or on another machine)
    /// for longer than a writer waits for its turn.
    #[error(
        "ledger {ledger}: another writer holds the ledger: waited {} for it to finish and gave up; \
         try again when it has finished",
        seconds(*waited)
    )]
    Busy {
        /// The ledger.
        ledger: String,
        /// How long this writer waited (SQLite's busy timeout, PostgreSQL's `lock_timeout`).
        waited: Duration,
    },
    /// An ingest of several transactions failed after committing some of them: what was
    /// committed stays stored (and rated); ingesting the same lines again stores the rest.
    #[error("{error}; {}", stored_before_failure(*stored, *unconfirmed))]
    Interrupted {
        /// Messages stored (committed) by this ingest before the failure.
        stored: u64,
        /// Messages of the batch whose commit got no answer: stored or not, the server
        /// alone knows (0 when the failure came before a commit, or the server refused it).
        unconfirmed: u64,
        /// What failed (its message names the ledger).
        error: Box<LedgerError>,
    },
    /// The ledger could not start the machinery it needs (a thread, a timer).
    #[error("ledger {ledger}: {cause}")]
    Io {
        /// The ledger.
        ledger: String,
        /// What the operating system said (said in the message, so it is not also the error's `source`: a chain says it once).
        cause: std::io::Error,
    },
    /// The database holds something other than a revcal ledger (another application's
    /// tables, or a file that is not an SQLite database): it is refused before anything is
    /// written to it.
    #[error(
        "ledger {ledger}: not a revcal ledger: {found}; revcal neither reads nor changes another \
         application's database, so give the ledger a database (or a PostgreSQL schema) of its own"
    )]
    NotALedger {
        /// The ledger.
        ledger: String,
        /// What the database holds instead (its tables, by name).
        found: String,
    },
    /// There is no ledger yet, and the ledger was opened only to read it
    /// ([`Ledger::open_existing_at`]): reading never creates one.
    #[error("ledger {ledger}: no ledger there yet ({found}); reading does not create one")]
    NoLedger {
        /// The ledger.
        ledger: String,
        /// What is there: no file, an empty database.
        found: String,
    },
    /// The ledger's schema is newer than this build understands.
    #[error("ledger {ledger}: schema version {found} is newer than this revcal understands; upgrade revcal")]
    TooNew {
        /// The ledger.
        ledger: String,
        /// Its schema version.
        found: u32,
    },
    /// Stored data that this build cannot read back (a hand-edited or damaged ledger).
    #[error("ledger {ledger}: {what}")]
    Corrupt {
        /// The ledger.
        ledger: String,
        /// What is wrong.
        what: String,
    },
    /// The ledger's own key, stored in it, does not load.
    #[error("ledger {ledger}: ledger key: {cause}")]
    LedgerKey {
        /// The ledger.
        ledger: String,
        /// Why the key file does not load (said in the message, so it is not also the error's `source`: a chain says it once).
        cause: KeyError,
    },
    /// The rating policy stored in the ledger does not parse.
    #[error("ledger {ledger}: policy: {cause}")]
    StoredPolicy {
        /// The ledger.
        ledger: String,
        /// What serde_json said (said in the message, so it is not also the error's `source`: a chain says it once).
        cause: JsonError,
    },
    /// The ledger could not sign its answer to a query.
    #[error("ledger {ledger}: could not sign the leaderboard reply: {cause}")]
    Reply {
        /// The ledger.
        ledger: String,
        /// Why signing failed (said in the message, so it is not also the error's `source`: a chain says it once).
        cause: MessageError,
    },
    /// The ledger was created with another policy than the one asked for.
    #[error("ledger {ledger}: created with a different rating policy; open it without one to use its own")]
    PolicyMismatch {
        /// The ledger.
        ledger: String,
    },
    /// The policy asked for cannot rate.
    #[error(transparent)]
    Policy(#[from] PolicyError),
}

/// An open ledger.
pub struct Ledger {
    storage: Box<dyn Storage>,
    location: LedgerLocation,
    /// `location` as messages show it (no password).
    name: String,
    policy: Policy,
    key: Keypair,
    /// Agents known to have an `agents` row and reviewers known to have a `ratings` row
    /// (rows are never deleted, so this only saves statements; filled after each commit).
    seen: store::SeenRows,
}

impl std::fmt::Debug for Ledger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ledger")
            .field("location", &self.location)
            .field("issuer", &self.key.agent_id())
            .finish_non_exhaustive()
    }
}

impl Ledger {
    /// Opens the SQLite ledger at `path`, creating it (with the default policy and a new
    /// ledger key from the OS random source) when it does not exist.
    pub fn open(path: impl AsRef<Path>) -> Result<Ledger, LedgerError> {
        Ledger::open_at(&LedgerLocation::from(path.as_ref()), None)
    }

    /// Opens or creates the SQLite ledger at `path` with `policy`. An existing ledger must
    /// have been created with the same policy.
    pub fn open_with_policy(path: impl AsRef<Path>, policy: Policy) -> Result<Ledger, LedgerError> {
        Ledger::open_at(&LedgerLocation::from(path.as_ref()), Some(policy))
    }

    /// Opens the ledger at `location` (an SQLite file or a PostgreSQL database), creating
    /// it when it does not exist: with `policy`, else the default one. An existing ledger
    /// must have been created with `policy` when one is given.
    ///
    /// A database that holds something else (another application's tables) is refused
    /// with [`LedgerError::NotALedger`], and nothing is written to it.
    pub fn open_at(location: &LedgerLocation, policy: Option<Policy>) -> Result<Ledger, LedgerError> {
        Ledger::open_as(location, policy, Create::Yes)
    }

    /// Opens the ledger at `location` only when one is there: a missing file, an empty
    /// database or an empty PostgreSQL schema is refused with [`LedgerError::NoLedger`]
    /// (and stays as it was), another application's database with
    /// [`LedgerError::NotALedger`]. For what only reads a ledger. An older ledger is still
    /// brought up to this build's schema.
    pub fn open_existing_at(location: &LedgerLocation) -> Result<Ledger, LedgerError> {
        Ledger::open_as(location, None, Create::No)
    }

    /// Refuses a `location` that holds something other than a ledger (another
    /// application's database, as [`Ledger::open_at`] would refuse it), reading only: a
    /// missing or empty database, which a writer would make a ledger, passes. For checking a
    /// ledger before long work whose result goes there.
    pub fn refuse_foreign(location: &LedgerLocation) -> Result<(), LedgerError> {
        match location {
            LedgerLocation::Sqlite(path) => sqlite::SqliteStorage::refuse_foreign(path),
            #[cfg(feature = "postgres")]
            LedgerLocation::Postgres(server) => {
                postgres::PostgresStorage::refuse_foreign(server, &location.to_string())
            }
        }
    }

    fn open_as(
        location: &LedgerLocation,
        policy: Option<Policy>,
        create: Create,
    ) -> Result<Ledger, LedgerError> {
        if let Some(policy) = &policy {
            policy.validate()?;
        }
        let name = location.to_string();
        // What a new ledger starts with, written in the transaction that creates it (so two
        // processes creating one at once agree on its key). Made on every open: a key costs
        // tens of microseconds next to the milliseconds of opening a database, and a failing
        // random source is then reported here, not from inside a backend's transaction.
        let key =
            Keypair::generate().map_err(|cause| LedgerError::LedgerKey { ledger: name.clone(), cause })?;
        let initial_meta = [
            ("ledger_key", serde_json::to_string(&key.to_key_file()).unwrap_or_default()),
            ("policy", serde_json::to_string(&policy.clone().unwrap_or_default()).unwrap_or_default()),
        ];
        let storage: Box<dyn Storage> = match location {
            LedgerLocation::Sqlite(path) => {
                Box::new(sqlite::SqliteStorage::open(path, &initial_meta, create)?)
            }
            #[cfg(feature = "postgres")]
            LedgerLocation::Postgres(server) => {
                Box::new(postgres::PostgresStorage::open(server, &name, &initial_meta, create)?)
            }
        };
        let corrupt = |what: String| LedgerError::Corrupt { ledger: name.clone(), what };
        let meta = |key: &str| -> Result<String, LedgerError> {
            storage.meta(key)?.ok_or_else(|| corrupt(format!("meta has no `{key}`")))
        };
        let key = KeyFile::parse(&meta("ledger_key")?)
            .and_then(|file| file.keypair())
            .map_err(|cause| LedgerError::LedgerKey { ledger: name.clone(), cause })?;
        let stored_policy: Policy = serde_json::from_str(&meta("policy")?)
            .map_err(|error| LedgerError::StoredPolicy { ledger: name.clone(), cause: error.into() })?;
        if policy.is_some_and(|wanted| wanted != stored_policy) {
            return Err(LedgerError::PolicyMismatch { ledger: name });
        }
        Ok(Ledger {
            storage,
            location: location.clone(),
            name,
            policy: stored_policy,
            key,
            seen: store::SeenRows::default(),
        })
    }

    /// Where the ledger lives.
    pub fn location(&self) -> &LedgerLocation {
        &self.location
    }

    /// The schema version of the ledger, which opening brought up to this build's
    /// (docs/reputation.md, section 6; SQLite and PostgreSQL count separately).
    pub fn schema_version(&self) -> u32 {
        self.storage.schema_version()
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

    fn corrupt(&self, what: impl Into<String>) -> LedgerError {
        LedgerError::Corrupt { ledger: self.name.clone(), what: what.into() }
    }

    /// The number of stored messages.
    pub fn message_count(&self) -> Result<u64, LedgerError> {
        self.storage.message_count()
    }

    fn agent(&self, text: String) -> Result<AgentId, LedgerError> {
        AgentId::parse(&text).ok_or_else(|| self.corrupt(format!("ratings: bad agent id {text:?}")))
    }

    /// The best `limit` reviewers (all when `None`): rating, then review count, then id.
    pub fn leaderboard(&self, limit: Option<u32>) -> Result<Vec<LeaderboardEntry>, LedgerError> {
        self.entries(self.storage.ranked(limit)?)
    }

    /// One reviewer's standing, `None` for an agent that never reviewed.
    pub fn standing(&self, agent: &AgentId) -> Result<Option<Standing>, LedgerError> {
        self.storage.rating(agent.as_str())
    }

    /// Every stored rating, by agent.
    pub fn standings(&self) -> Result<std::collections::BTreeMap<AgentId, Standing>, LedgerError> {
        let mut standings = std::collections::BTreeMap::new();
        for (agent, standing) in self.storage.ratings()? {
            standings.insert(self.agent(agent)?, standing);
        }
        Ok(standings)
    }

    /// Every scored review of `reviewer` (every reviewer when `None`), in scoring order.
    pub fn scored_reviews(&self, reviewer: Option<&AgentId>) -> Result<Vec<ScoredReview>, LedgerError> {
        let rows = self.storage.scored_reviews(reviewer.map(AgentId::as_str))?;
        let mut scored = Vec::with_capacity(rows.len());
        for (index, row) in rows.into_iter().enumerate() {
            scored.push(
                decode_scored(row)
                    .ok_or_else(|| self.corrupt(format!("scored_reviews: unreadable row {}", index + 1)))?,
            );
        }
        Ok(scored)
    }

    /// Signed receipts for every scored review of `reviewer`, oldest first.
    pub fn receipts(&self, reviewer: &AgentId) -> Result<Vec<Receipt>, LedgerError> {
        self.receipts_for(&self.scored_reviews(Some(reviewer))?)
    }

    /// Signed receipts for `scored` (what [`Stored::scored`] lists for an outcome just
    /// stored), each the same receipt [`Ledger::receipts`] issues for that review: what a
    /// chat server posts when an outcome scores reviews, without reading every review of
    /// each reviewer again.
    pub fn receipts_for(&self, scored: &[ScoredReview]) -> Result<Vec<Receipt>, LedgerError> {
        let mut subjects: HashMap<MessageId, Option<String>> = HashMap::new();
        let trusted = self.trust_set()?;
        let mut receipts = Vec::with_capacity(scored.len());
        for scored in scored {
            if !subjects.contains_key(&scored.request_id) {
                let subject = self.request_subject(&scored.request_id)?;
                subjects.insert(scored.request_id.clone(), subject);
            }
            let subject = subjects.get(&scored.request_id).and_then(Option::as_deref);
            let calibration = self.receipt_calibration(&scored.outcome_id, &scored.reviewer, &trusted)?;
            receipts.push(Receipt::issue_with(scored, subject, calibration, &self.key));
        }
        Ok(receipts)
    }

    /// How a stored request names its change (`None` when it is not stored or names none).
    fn request_subject(&self, request: &MessageId) -> Result<Option<String>, LedgerError> {
        let body = self.storage.message_body(&request.to_bytes())?;
        let envelope = body
            .and_then(|body| parse_strict(&body).ok())
            .and_then(|value| revcal_elo_protocol::decode_envelope(&value).ok());
        Ok(match envelope.map(|envelope| envelope.message.content) {
            Some(Content::Request(request)) => request.subject().map(str::to_owned),
            _ => None,
        })
    }

    /// Asks the database to check its storage: SQLite's `PRAGMA integrity_check`; on
    /// PostgreSQL, the references between the ledger's tables. Empty when sound.
    pub fn integrity_check(&self) -> Result<Vec<String>, LedgerError> {
        self.storage.integrity_check()
    }
}

impl LedgerError {
    /// True when the error leaves unknown whether the statement that failed took effect:
    /// the server never answered, or the connection was lost (as opposed to the server
    /// refusing it, or a local failure).
    pub(crate) fn outcome_unknown(&self) -> bool {
        match self {
            LedgerError::NoAnswer { .. } => true,
            #[cfg(feature = "postgres")]
            LedgerError::Postgres { error, .. } => error.as_db_error().is_none(),
            _ => false,
        }
    }
}

/// `2 s`, `1.5 s`, `250 ms`.
fn seconds(duration: Duration) -> String {
    if duration < Duration::from_secs(1) {
        format!("{} ms", duration.as_millis())
    } else if duration.subsec_millis() == 0 {
        format!("{} s", duration.as_secs())
    } else {
        format!("{:.1} s", duration.as_secs_f64())
    }
}

/// How much of an interrupted ingest is stored, and what to do about the rest.
fn stored_before_failure(stored: u64, unconfirmed: u64) -> String {
    let stored = match stored {
        0 => "nothing was stored before the failure".to_owned(),
        1 => "stored 1 message before the failure".to_owned(),
        n => format!("stored {n} messages before the failure"),
    };
    let unconfirmed = match unconfirmed {
        0 => String::new(),
        n => format!(", and the last batch of {n} may be stored too (its commit got no answer)"),
    };
    format!(
        "{stored}{unconfirmed}; ingesting the same lines again stores the rest (the stored ones are refused as replayed)"
    )
}

/// An error's message followed by those of its causes, each once.
fn with_causes(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(next) = cause {
        let line = next.to_string();
        if !text.contains(&line) {
            text.push_str(": ");
            text.push_str(&line);
        }
        cause = next.source();
    }
    text
}

/// One scored review read back; `None` when a stored value does not parse.
fn decode_scored(row: ScoredRow) -> Option<ScoredReview> {
    Some(ScoredReview {
        review_id: MessageId::from_bytes(&row.review_id)?,
        request_id: MessageId::from_bytes(&row.request_id)?,
        outcome_id: MessageId::from_bytes(&row.outcome_id)?,
        reviewer: AgentId::parse(&row.reviewer)?,
        requester: AgentId::parse(&row.requester)?,
        verdict: ReviewVerdict::from_wire(&row.verdict)?,
        incident: row.incident,
        outcome: OutcomeClass::from_wire(&row.outcome)?,
        elo_delta: row.elo_delta,
        rating_after: row.rating_after,
        ts: u64::try_from(row.ts).ok()?,
    })
}
