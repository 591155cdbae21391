//! Which outcomes a standing counts: all of them (RFC-001's one rating), the verified ones
//! (calibration outcomes signed by an authority the ledger trusts), the self-reported ones,
//! or the verified ones of one bug category (a domain).
//!
//! Each scope is a rating of its own: every reviewer starts at the policy's start rating in
//! it and its K follows the reviews scored *in that scope*, exactly as if the ledger held
//! only those outcomes (docs/reputation.md, "Verified outcomes").

use crate::identity::{AgentId, PublicKey};
use crate::link::CalibrationLink;
use crate::policy::{OutcomeClass, Policy, Standing};
use revcal_record::PlantStatus;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

/// The outcomes a leaderboard counts (`--outcomes`, and a leaderboard query's `outcomes`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcomes {
    /// Every outcome: RFC-001's rating, as the ledger has always kept it.
    #[default]
    All,
    /// Outcomes of calibration rounds signed by a trusted authority.
    Verified,
    /// Every other outcome: reported by the requester (an untrusted authority's claim to
    /// a calibration included).
    Reported,
}

impl Outcomes {
    /// `all`, `verified` or `reported`.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcomes::All => "all",
            Outcomes::Verified => "verified",
            Outcomes::Reported => "reported",
        }
    }

    /// The value named `name`.
    pub fn from_wire(name: &str) -> Option<Outcomes> {
        [Outcomes::All, Outcomes::Verified, Outcomes::Reported].into_iter().find(|o| o.as_str() == name)
    }
}

impl fmt::Display for Outcomes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One set of standings the ledger keeps.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scope {
    /// Every outcome (the `ratings` the leaderboard has always shown).
    All,
    /// Verified outcomes only.
    Verified,
    /// Self-reported outcomes only.
    Reported,
    /// Verified outcomes of rounds that count in this bug category.
    Domain(String),
}

/// A domain leaderboard asked for over outcomes other than the verified ones.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a domain's ratings count verified outcomes only; `{outcomes}` outcomes have no domains")]
#[non_exhaustive]
pub struct ScopeError {
    /// What was asked for.
    pub outcomes: Outcomes,
}

impl Scope {
    /// The scope of `outcomes`, narrowed to `domain` when one is named. A domain counts
    /// verified outcomes only, so `domain` goes with `Verified` (or `None`, read as
    /// verified) and nothing else.
    pub fn of(outcomes: Option<Outcomes>, domain: Option<&str>) -> Result<Scope, ScopeError> {
        match (outcomes, domain) {
            (None | Some(Outcomes::Verified), Some(domain)) => Ok(Scope::Domain(domain.to_owned())),
            (Some(outcomes), Some(_)) => Err(ScopeError { outcomes }),
            (None | Some(Outcomes::All), None) => Ok(Scope::All),
            (Some(Outcomes::Verified), None) => Ok(Scope::Verified),
            (Some(Outcomes::Reported), None) => Ok(Scope::Reported),
        }
    }

    /// How the ledger stores the scope's standings (`All` lives in `ratings` and has none).
    pub fn key(&self) -> Option<String> {
        match self {
            Scope::All => None,
            Scope::Verified => Some(VERIFIED.to_owned()),
            Scope::Reported => Some(REPORTED.to_owned()),
            Scope::Domain(domain) => Some(format!("{DOMAIN_PREFIX}{domain}")),
        }
    }

    /// The scope stored as `key`; `None` for a key this build does not write.
    pub fn from_key(key: &str) -> Option<Scope> {
        match key {
            VERIFIED => Some(Scope::Verified),
            REPORTED => Some(Scope::Reported),
            _ => key.strip_prefix(DOMAIN_PREFIX).map(|domain| Scope::Domain(domain.to_owned())),
        }
    }

    /// The outcomes the scope counts.
    pub fn outcomes(&self) -> Outcomes {
        match self {
            Scope::All => Outcomes::All,
            Scope::Verified | Scope::Domain(_) => Outcomes::Verified,
            Scope::Reported => Outcomes::Reported,
        }
    }

    /// The domain, for a domain's scope.
    pub fn domain(&self) -> Option<&str> {
        match self {
            Scope::Domain(domain) => Some(domain),
            _ => None,
        }
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Scope::Domain(domain) => write!(f, "domain {domain}"),
            other => f.write_str(other.outcomes().as_str()),
        }
    }
}

const VERIFIED: &str = "verified";
const REPORTED: &str = "reported";
const DOMAIN_PREFIX: &str = "domain:";

/// The authorities a ledger trusts, by public key (base64). The whole key is compared, not
/// the 64-bit agent id, which a determined forger could match by trying keys.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrustSet {
    keys: BTreeSet<String>,
}

impl TrustSet {
    /// A set holding `keys` (standard base64 of raw public keys).
    pub fn from_keys(keys: impl IntoIterator<Item = String>) -> TrustSet {
        TrustSet { keys: keys.into_iter().collect() }
    }

    /// Adds a key.
    pub fn insert(&mut self, key: &PublicKey) {
        self.keys.insert(key.to_base64());
    }

    /// True when the key (base64) is trusted.
    pub fn contains(&self, key: &str) -> bool {
        self.keys.contains(key)
    }
}

/// What a verified calibration outcome counts in its domains (RFC-001's "domain badges"):
/// its domains, and, for links of this release, the reviewer the calibration ran and each
/// plant's category and status. A ledger keeps it beside the outcome to compute the domain
/// standings again when the trusted authorities change.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DomainScoring {
    /// The domains the outcome names: a planted round's plant categories, a clean round's
    /// every category its calibration planted.
    pub domains: Vec<String>,
    /// The reviewer the plants' statuses describe; `None` for a link of an earlier release.
    pub reviewer: Option<String>,
    /// Each plant's category and whether `reviewer` caught it, in the round's order; empty
    /// for a clean round and for a link of an earlier release.
    pub plants: Vec<(String, bool)>,
}

impl DomainScoring {
    /// What `link` counts in its domains.
    pub fn of(link: &CalibrationLink) -> DomainScoring {
        let with_status = link.reviewer.is_some() && link.plants.iter().all(|plant| plant.status.is_some());
        DomainScoring {
            domains: link.domains.clone(),
            reviewer: link.reviewer.as_ref().map(ToString::to_string),
            plants: if with_status {
                link.plants
                    .iter()
                    .map(|plant| (plant.category.clone(), plant.status == Some(PlantStatus::Caught)))
                    .collect()
            } else {
                Vec::new()
            },
        }
    }

    /// The standings (by scope key) one review of `reviewer`, classed `class` overall,
    /// moves, each with the class it scores there: the verified scope with `class`; then the
    /// domains. A link of this release counts its own reviewer's review alone in the
    /// domains: in a planted round each plant in its category, `caught_bug` when caught and
    /// `missed_bug` when missed, so that a domain rating follows that domain's plants; in a
    /// clean round `class` in every domain tested. A link of an earlier release counts
    /// every review with `class` in each of its domains, as it was rated then.
    pub fn scores(&self, reviewer: &str, class: OutcomeClass) -> Vec<(String, OutcomeClass)> {
        let mut scores = vec![(VERIFIED.to_owned(), class)];
        let domain = |name: &str| format!("{DOMAIN_PREFIX}{name}");
        match &self.reviewer {
            None => scores.extend(self.domains.iter().map(|name| (domain(name), class))),
            Some(calibrated) if calibrated != reviewer => {}
            Some(_) if self.plants.is_empty() => {
                scores.extend(self.domains.iter().map(|name| (domain(name), class)));
            }
            Some(_) => scores.extend(self.plants.iter().map(|(category, caught)| {
                (domain(category), if *caught { OutcomeClass::CaughtBug } else { OutcomeClass::MissedBug })
            })),
        }
        scores
    }
}

/// The standings (by scope key) a review classed `class` moves for a self-reported
/// outcome: the reported scope alone.
pub fn reported_scores(class: OutcomeClass) -> Vec<(String, OutcomeClass)> {
    vec![(REPORTED.to_owned(), class)]
}

/// The scopes (by storage key) an outcome's scored reviews count in: for a verified
/// outcome (`Some` of the domains its calibration link names) the verified scope and those
/// domains, else the reported scope. (The rule of links without statuses; see
/// [`DomainScoring::scores`].)
pub fn outcome_scopes(verified_domains: Option<&[String]>) -> Vec<String> {
    match verified_domains {
        Some(domains) => std::iter::once(VERIFIED.to_owned())
            .chain(domains.iter().map(|domain| format!("{DOMAIN_PREFIX}{domain}")))
            .collect(),
        None => vec![REPORTED.to_owned()],
    }
}

/// Standings by (scope key, agent): the scoped folds of the rating rules.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ScopedStandings {
    standings: BTreeMap<(String, String), Standing>,
}

impl ScopedStandings {
    /// Scores one review of `reviewer` in each of `scopes`, starting a reviewer new to a
    /// scope at the policy's start.
    pub fn score(&mut self, policy: &Policy, scopes: &[String], reviewer: &str, class: OutcomeClass) {
        for scope in scopes {
            self.standings
                .entry((scope.clone(), reviewer.to_owned()))
                .or_insert_with(|| Standing::new(policy))
                .score(policy, class);
        }
    }

    /// Scores one review of `reviewer` in each scope of `scores` with the class given
    /// there, in order ([`DomainScoring::scores`]), starting a reviewer new to a scope at the
    /// policy's start.
    pub fn score_each(&mut self, policy: &Policy, scores: &[(String, OutcomeClass)], reviewer: &str) {
        for (scope, class) in scores {
            self.standings
                .entry((scope.clone(), reviewer.to_owned()))
                .or_insert_with(|| Standing::new(policy))
                .score(policy, *class);
        }
    }

    /// Sets a standing (one read back from the ledger).
    pub fn set(&mut self, scope: String, reviewer: String, standing: Standing) {
        self.standings.insert((scope, reviewer), standing);
    }

    /// One standing.
    pub fn get(&self, scope: &str, reviewer: &str) -> Option<&Standing> {
        self.standings.get(&(scope.to_owned(), reviewer.to_owned()))
    }

    /// Every standing, by (scope key, agent).
    pub fn iter(&self) -> impl Iterator<Item = (&(String, String), &Standing)> {
        self.standings.iter()
    }

    /// The standings of one scope, by agent (agents that do not parse are left out: this
    /// build writes none).
    pub fn of_scope(&self, scope: &str) -> BTreeMap<AgentId, Standing> {
        self.standings
            .iter()
            .filter(|((key, _), _)| key == scope)
            .filter_map(|((_, agent), standing)| Some((AgentId::parse(agent)?, *standing)))
            .collect()
    }

    /// Takes every standing out.
    pub fn into_rows(self) -> Vec<(String, String, Standing)> {
        self.standings.into_iter().map(|((scope, agent), standing)| (scope, agent, standing)).collect()
    }
}
