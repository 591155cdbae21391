//! `content.calibration` of a `REVIEW_OUTCOME`: revcal's addition to RFC-001 that ties an
//! outcome to the calibration run it reports (docs/reputation.md, "Verified outcomes").
//!
//! A calibration knows for certain which changes carry a bug: the ones it planted. The
//! outcome of a calibration round says so (`incident` true exactly when the round carried a
//! plant) and names the report, the round and trial, and the plants with their bug
//! categories. Anyone holding the report can recompute its hash and find the round; the
//! ledger counts such an outcome as *verified* only when it is also signed by an authority
//! the ledger trusts.

use crate::identity::AgentId;
use revcal_record::PlantStatus;
use serde::{Deserialize, Serialize};

/// The longest bug category (a domain name), in bytes.
pub const MAX_CATEGORY_BYTES: usize = 100;
/// The most plants one calibration round may carry (a round plants a few bugs at once).
pub const MAX_ROUND_PLANTS: usize = 100;
/// The longest path of a plant, in bytes.
pub const MAX_PLANT_PATH_BYTES: usize = 1024;
/// The most domains one calibration outcome counts in (a clean round counts in every
/// category its calibration planted).
pub const MAX_LINK_DOMAINS: usize = 1000;

/// One planted bug named by a calibration outcome.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkedPlant {
    /// The planted file, relative to the repository root.
    pub file: String,
    /// The planted line (1-based).
    pub line: u64,
    /// The bug category, e.g. `off-by-one`: the domain the plant counts in.
    pub category: String,
    /// Whether the link's `reviewer` caught the plant in this trial (revcal's addition of
    /// this release: links recorded before carry none, and the reviewer's one verdict then
    /// counts in every domain of the round).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<PlantStatus>,
}

/// `content.calibration`: which calibration round an outcome reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CalibrationLink {
    /// Lowercase hex SHA-256 of the calibration report's RFC 8785 canonical JSON.
    pub report_sha256: String,
    /// The review round (1-based, as the calibration numbers them).
    pub round: u64,
    /// The trial of that round (1-based).
    pub trial: u64,
    /// The suite entry the round belongs to, for a suite's report.
    pub entry: Option<String>,
    /// The plants the round carried; empty for a clean round (a change without a plant).
    pub plants: Vec<LinkedPlant>,
    /// The domains (bug categories) the round's verified outcome counts in, sorted and
    /// distinct: a planted round's own plant categories; for a clean round, every category
    /// the calibration planted (a false alarm is a false alarm in each domain tested).
    pub domains: Vec<String>,
    /// `agent` on the wire: the reviewer the calibration ran, whose review the plants'
    /// `status` describe: its review alone counts in the domains, each plant in its own
    /// category by its own status. `None` in links recorded before this release (no plant
    /// has a status).
    pub reviewer: Option<AgentId>,
}

impl CalibrationLink {
    /// The distinct categories of `plants`, sorted: a planted round's domains.
    pub fn categories_of(plants: &[LinkedPlant]) -> Vec<String> {
        let mut categories: Vec<String> = plants.iter().map(|plant| plant.category.clone()).collect();
        categories.sort();
        categories.dedup();
        categories
    }

    /// The first 16 hex digits of the report's hash, as messages and receipts show it.
    pub fn short_report(&self) -> &str {
        self.report_sha256.get(..16).unwrap_or(&self.report_sha256)
    }
}

/// Why a bug category cannot name a domain; `None` when it can: not blank, at most
/// [`MAX_CATEGORY_BYTES`], no control characters, no leading or trailing space.
pub(crate) fn category_problem(category: &str) -> Option<String> {
    if category.trim().is_empty() {
        Some("must not be empty".to_owned())
    } else if category.len() > MAX_CATEGORY_BYTES {
        Some(format!("must be at most {MAX_CATEGORY_BYTES} bytes, found {}", category.len()))
    } else if category.chars().any(char::is_control) {
        Some("must not contain control characters".to_owned())
    } else if category.trim() != category {
        Some(format!("must not start or end with a space, found {category:?}"))
    } else {
        None
    }
}

/// True for 64 lowercase hex digits (a SHA-256 written as hex).
pub(crate) fn is_sha256_hex(text: &str) -> bool {
    text.len() == 64 && text.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// What makes a calibration round's outcome unique in a ledger: the authority that signed
/// it (its public key, base64), the report, the round and the trial. A second outcome for
/// the same round from the same authority is refused, however its messages differ (another
/// `ts`, another reviewer key): a calibration is counted once.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RoundKey {
    /// The authority's public key, in base64.
    pub authority: String,
    /// The hash of the calibration report.
    pub report_sha256: String,
    /// The round of the report.
    pub round: u64,
    /// The trial of the round.
    pub trial: u64,
}

impl RoundKey {
    /// The key of `link` signed by `authority` (base64).
    pub fn of(authority: String, link: &CalibrationLink) -> RoundKey {
        RoundKey {
            authority,
            report_sha256: link.report_sha256.clone(),
            round: link.round,
            trial: link.trial,
        }
    }
}
