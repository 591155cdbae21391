//! The storage seam's part for verified outcomes: the trusted authorities, the calibration
//! round of each calibration outcome, and the standings of every scope but all (verified,
//! reported, one per domain). Every backend implements it beside [`super::storage::Storage`],
//! which requires it.

use super::LedgerError;
use revcal_elo_protocol::{CalibrationLink, DomainScoring, MessageId, Standing};

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
    /// The reviewer the link's plant statuses describe (links of this release).
    pub(crate) reviewer: Option<String>,
    /// Each plant's category and whether that reviewer caught it, as a JSON array of
    /// `[category, caught]` pairs (links of this release with plants).
    pub(crate) plants: Option<String>,
}

impl LinkRow {
    /// The row of the calibration link of outcome `outcome_id`, signed by `authority`
    /// (its public key, base64).
    pub(crate) fn of(outcome_id: &[u8], authority: String, link: &CalibrationLink) -> LinkRow {
        let scoring = DomainScoring::of(link);
        let report =
            MessageId::parse(&link.report_sha256).map(|id| id.to_bytes().to_vec()).unwrap_or_default();
        LinkRow {
            outcome_id: outcome_id.to_vec(),
            authority,
            report,
            round: i64::try_from(link.round).unwrap_or(i64::MAX),
            trial: i64::try_from(link.trial).unwrap_or(i64::MAX),
            domains: serde_json::to_string(&scoring.domains).unwrap_or_else(|_| "[]".to_owned()),
            plants: (!scoring.plants.is_empty())
                .then(|| serde_json::to_string(&scoring.plants).unwrap_or_default()),
            reviewer: scoring.reviewer,
        }
    }
}

/// The domain scoring a calibration round's stored columns hold; `None` when a column does
/// not read back (a hand-edited row).
pub(crate) fn stored_scoring(
    domains: &str,
    reviewer: Option<&str>,
    plants: Option<&str>,
) -> Option<DomainScoring> {
    Some(DomainScoring {
        domains: serde_json::from_str(domains).ok()?,
        reviewer: reviewer.map(str::to_owned),
        plants: match plants {
            None => Vec::new(),
            Some(plants) => serde_json::from_str(plants).ok()?,
        },
    })
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
    /// The reviewer its plant statuses describe, for a calibration outcome of this release.
    pub(crate) link_reviewer: Option<String>,
    /// Its plants' categories and statuses (JSON, as [`LinkRow::plants`]).
    pub(crate) plants: Option<String>,
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
