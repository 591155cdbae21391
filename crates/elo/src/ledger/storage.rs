//! The storage seam: every question the ledger asks of its database, in the ledger's own
//! terms. The rules, the ratings and the receipts live above it and are the same for every
//! backend; SQLite ([`super::sqlite`]) and PostgreSQL ([`super::postgres`]) implement it.
//!
//! Writes happen only between [`Storage::begin_write`] and [`Storage::commit`]. A backend
//! makes write transactions exclusive among all writers of the ledger (every process, every
//! machine), because ratings are a fold over the message order: two writers may not
//! interleave, and each must see what the previous one committed.

use super::LedgerError;
use revcal_elo_protocol::Standing;

/// A stored request, as the rules need it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RequestRow {
    /// Its sequence number.
    pub(crate) seq: i64,
    /// Its sender's agent id.
    pub(crate) requester: String,
    /// The id of the outcome that closed it, if one did.
    pub(crate) closed_by: Option<Vec<u8>>,
}

/// One scored review as stored: ids as 32 bytes, the rest as on the wire.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ScoredRow {
    pub(crate) review_id: Vec<u8>,
    pub(crate) request_id: Vec<u8>,
    pub(crate) outcome_id: Vec<u8>,
    pub(crate) reviewer: String,
    pub(crate) requester: String,
    pub(crate) verdict: String,
    pub(crate) incident: bool,
    pub(crate) outcome: String,
    pub(crate) elo_delta: f64,
    pub(crate) rating_after: f64,
    pub(crate) ts: i64,
}

/// One stored message as its row holds it: the canonical text and the columns the rules
/// read instead of parsing it (what a replay compares with the message itself).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MessageRow {
    pub(crate) seq: i64,
    /// Its id (32 bytes, unless the row was damaged).
    pub(crate) id: Vec<u8>,
    /// Its type as on the wire.
    pub(crate) kind: String,
    pub(crate) sender: String,
    pub(crate) ts: i64,
    /// Its canonical text.
    pub(crate) body: String,
    /// For a request: the id of the outcome that closed it.
    pub(crate) closed_by: Option<Vec<u8>>,
}

/// A message to store.
#[derive(Debug, Clone, Copy)]
pub(crate) struct NewMessage<'a> {
    /// Its id (32 bytes).
    pub(crate) id: &'a [u8],
    /// Its type as on the wire.
    pub(crate) kind: &'a str,
    pub(crate) sender: &'a str,
    pub(crate) ts: i64,
    /// Its canonical text.
    pub(crate) body: &'a str,
}

/// The writes of one batch that nothing in the batch reads back from the database (the
/// rules read them from memory meanwhile), made together before the commit: a backend
/// behind a network sends each kind in one statement instead of one per row.
#[derive(Debug, Default)]
pub(crate) struct BatchWrites {
    /// Agents that sent their first stored message: id and public key (base64).
    pub(crate) agents: Vec<(String, String)>,
    /// Names reviews gave their senders, in order (the last one of an agent stands): agent
    /// id and name. Written after `agents`.
    pub(crate) names: Vec<(String, String)>,
    /// The latest review of each reviewer of each request the batch reviewed, one row per
    /// (request, reviewer), replacing any stored one.
    pub(crate) latest_reviews: Vec<LatestRow>,
    /// Requests the batch closed: the request's sequence number and the outcome's id.
    pub(crate) closed: Vec<(i64, Vec<u8>)>,
    /// Scored reviews, in scoring order.
    pub(crate) scored: Vec<ScoredRow>,
    /// The rating of every reviewer the batch touched, replacing any stored one.
    pub(crate) ratings: Vec<(String, Standing)>,
}

/// One `latest_reviews` row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LatestRow {
    pub(crate) request_seq: i64,
    pub(crate) reviewer: String,
    pub(crate) review_id: Vec<u8>,
    pub(crate) verdict: String,
    /// The review's own sequence number (latest reviews are scored in this order).
    pub(crate) seq: i64,
}

/// What a ledger backend does. Every error names the ledger (its path or its URL without
/// a password).
pub(crate) trait Storage: Send + super::scoped_storage::ScopedStorage {
    /// The version of the backend's schema (after opening: this build's).
    fn schema_version(&self) -> u32;
    /// A value of the ledger's `meta` table (its key, its policy).
    fn meta(&self, key: &str) -> Result<Option<String>, LedgerError>;

    // --- reads, outside or inside a write transaction ---

    /// The number of stored messages.
    fn message_count(&self) -> Result<u64, LedgerError>;
    /// Ratings by rank (rating, then review count, descending, then agent id in byte order),
    /// at most `limit` of them.
    fn ranked(&self, limit: Option<u32>) -> Result<Vec<(String, Standing)>, LedgerError>;
    /// One agent's rating.
    fn rating(&self, agent: &str) -> Result<Option<Standing>, LedgerError>;
    /// Every rating, in no particular order.
    fn ratings(&self) -> Result<Vec<(String, Standing)>, LedgerError>;
    /// Scored reviews of `reviewer` (all when `None`) in the order they were scored.
    fn scored_reviews(&self, reviewer: Option<&str>) -> Result<Vec<ScoredRow>, LedgerError>;
    /// The canonical text of a stored message.
    fn message_body(&self, id: &[u8]) -> Result<Option<String>, LedgerError>;
    /// Every stored message in storing order, as its row holds it.
    fn each_message(&self, visit: &mut dyn FnMut(MessageRow)) -> Result<(), LedgerError>;
    /// Every `latest_reviews` row, in no particular order.
    fn all_latest_reviews(&self) -> Result<Vec<LatestRow>, LedgerError>;
    /// Every `agents` row: agent id, public key (base64) and name, in no particular order.
    fn agents(&self) -> Result<Vec<(String, String, Option<String>)>, LedgerError>;
    /// The names of those of `agents` that have one.
    fn names_of(&self, agents: &[String]) -> Result<Vec<(String, String)>, LedgerError>;
    /// Problems the database finds in its own storage; empty when sound.
    fn integrity_check(&self) -> Result<Vec<String>, LedgerError>;

    // --- the write transaction ---

    /// Starts a write transaction, waiting for any other writer to finish.
    fn begin_write(&self) -> Result<(), LedgerError>;
    /// Commits it.
    fn commit(&self) -> Result<(), LedgerError>;
    /// Abandons it (after an error; a failure to roll back is logged, the first error is
    /// the one that matters).
    fn rollback(&self);

    /// Stores a message; its sequence number, or `None` when its id is already stored.
    fn insert_message(&self, message: NewMessage<'_>) -> Result<Option<i64>, LedgerError>;
    /// Deletes the message just inserted (the rules refused it).
    fn delete_message(&self, seq: i64) -> Result<(), LedgerError>;
    /// The stored request with this id.
    fn request(&self, id: &[u8]) -> Result<Option<RequestRow>, LedgerError>;
    /// The stored latest reviews of a request, in the order they were stored.
    fn latest_reviews(&self, request_seq: i64) -> Result<Vec<LatestRow>, LedgerError>;
    /// Writes what a batch decided, just before its commit (see [`BatchWrites`]).
    fn write_batch(&self, writes: &BatchWrites) -> Result<(), LedgerError>;
}

/// Converts a stored count back; a negative one (a damaged row) reads as 0.
pub(crate) fn to_u64(value: i64) -> u64 {
    u64::try_from(value).unwrap_or(0)
}

/// Converts a count for storing; counts past `i64::MAX` do not occur but saturate.
pub(crate) fn to_i64(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}
