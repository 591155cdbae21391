//! The storage seam's part for verified outcomes: the trusted authorities, the calibration
//! round of each calibration outcome, and the standings of every scope but all (verified,
//! reported, one per domain). Every backend implements it beside [`super::storage::Storage`],
//! which requires it.

use super::LedgerError;
use revcal_elo_protocol::Standing;

/// One calibration outcome as stored: which round of which report it reports, who signed
/// it and the domains it counts in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LinkRow {
    /// The outcome's id (32 bytes).
    pub(crate) outcome_id: Vec<u8>,
    /// The outcome's signer: its public key, standard base64.
    pub(crate) authority: String,
    /// The report's SHA-256 (32 bytes).
    pub(crate) report: Vec<u8>,
    pub(crate) round: i64,
    pub(crate) trial: i64,
    /// The domains, as a JSON array of strings.
    pub(crate) domains: String,
}

/// One scored review in scoring order, with what decides its scopes: its class, and its
/// outcome's signer and domains when the outcome reports a calibration round.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ScoredScopeRow {
    pub(crate) reviewer: String,
    /// The class as on the wire (`caught_bug`, ...).
    pub(crate) outcome: String,
    /// The outcome's signer (base64), for a calibration outcome.
    pub(crate) authority: Option<String>,
    /// The outcome's domains (a JSON array), for a calibration outcome.
    pub(crate) domains: Option<String>,
}

/// A standing of one scope, by its storage key (`verified`, `reported`, `domain:<category>`).
pub(crate) type ScopedRow = (String, String, Standing);

/// What a backend stores for verified outcomes. Writes happen inside the write transaction
/// of [`super::storage::Storage`].
pub(crate) trait ScopedStorage {
    /// The trusted authorities: agent id and public key (base64), by agent id.
    fn authorities(&self) -> Result<Vec<(String, String)>, LedgerError>;
    /// Trusts a key; false when it already was.
    fn add_authority(&self, pubkey: &str, agent: &str) -> Result<bool, LedgerError>;
    /// Stops trusting the keys of an agent id; false when none was trusted.
    fn remove_authority(&self, agent: &str) -> Result<bool, LedgerError>;
    /// The outcome stored for a calibration round signed by `authority`, if any.
    fn recorded_round(
        &self,
        authority: &str,
        report: &[u8],
        round: i64,
        trial: i64,
    ) -> Result<Option<Vec<u8>>, LedgerError>;
    /// The stored standings among `keys` (scope key, agent); the others have none yet.
    fn scoped_standings(&self, keys: &[(String, String)]) -> Result<Vec<ScopedRow>, LedgerError>;
    /// The standings of one scope by rank (rating, then review count, descending, then agent
    /// id in byte order), at most `limit` of them.
    fn ranked_in(&self, scope: &str, limit: Option<u32>) -> Result<Vec<(String, Standing)>, LedgerError>;
    /// Every scoped standing, in no particular order.
    fn all_scoped(&self) -> Result<Vec<ScopedRow>, LedgerError>;
    /// The scope keys that have standings, sorted.
    fn scope_keys(&self) -> Result<Vec<String>, LedgerError>;
    /// Stores calibration rounds and replaces scoped standings (just before a commit).
    fn write_scoped(&self, links: &[LinkRow], standings: &[ScopedRow]) -> Result<(), LedgerError>;
    /// Every calibration round stored, in no particular order.
    fn links(&self) -> Result<Vec<LinkRow>, LedgerError>;
    /// Every scored review, in scoring order, with its outcome's calibration.
    fn scored_scopes(&self, visit: &mut dyn FnMut(ScoredScopeRow)) -> Result<(), LedgerError>;
    /// Deletes every scoped standing (before they are computed again).
    fn clear_scoped(&self) -> Result<(), LedgerError>;
}
