//! Verified outcomes in the ledger: the authorities it trusts, the standings of every scope
//! (verified, reported, one per domain) kept beside the ratings, and what a write batch does
//! for them (docs/reputation.md, "Verified outcomes").
//!
//! An outcome is *verified* when it carries `content.calibration` and its signer's public
//! key is one the ledger trusts. The scoped standings are a function of the stored messages
//! in order and of the trusted keys: trusting or no longer trusting a key computes them
//! again from the scored reviews, in the same transaction.

use super::scoped_storage::{LinkRow, ScopedRow, stored_scoring};
use super::storage::Storage;
use super::{Ledger, LedgerError};
use revcal_elo_protocol::{
    AgentId, Content, DomainScoring, Engine, LeaderboardEntry, MessageId, OutcomeClass, OutcomeContent,
    Policy, PublicKey, ReceiptCalibration, Rejection, RoundKey, Scope, ScopedStandings, SignedMessage,
    Standing, TrustSet, calibration_replayed, parse_strict, reported_scores,
};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

/// How one reviewer's standing in one scope moved in a write batch.
#[derive(Debug, Clone, PartialEq)]
pub struct RatingChange {
    /// The scope.
    pub scope: Scope,
    /// The reviewer.
    pub agent: AgentId,
    /// The standing before the batch; `None` for a reviewer new to the scope.
    pub before: Option<Standing>,
    /// The standing after it.
    pub after: Standing,
}

impl RatingChange {
    /// The rating's change (from the start rating for a reviewer new to the scope).
    pub fn delta(&self, policy: &Policy) -> f64 {
        self.after.rating - self.before.map_or(policy.start_rating, |before| before.rating)
    }
}

/// Which standings an accepted outcome's scored reviews move: the reported scope, or, for a
/// verified calibration outcome, the verified scope and the domains as its link says.
pub(super) enum Scoring {
    /// A self-reported outcome (an untrusted authority's calibration included).
    Reported,
    /// A calibration outcome signed by a trusted authority.
    Verified(DomainScoring),
}

impl Scoring {
    /// The standings (scope key, class) a review of `reviewer` classed `class` moves.
    pub(super) fn scores(&self, reviewer: &str, class: OutcomeClass) -> Vec<(String, OutcomeClass)> {
        match self {
            Scoring::Reported => reported_scores(class),
            Scoring::Verified(scoring) => scoring.scores(reviewer, class),
        }
    }
}

/// What one write batch does for the scopes: which calibration rounds it records and, in
/// scoring order, which review counted in which scopes. The scoped standings are read once,
/// folded and written once, at the end of the batch (one statement each on PostgreSQL).
#[derive(Default)]
pub(super) struct BatchScopes {
    /// The trusted keys, read when the batch meets its first calibration outcome (inside
    /// the write transaction, so a trust change by another process is seen).
    trusted: Option<TrustSet>,
    /// Rounds the batch recorded, with their outcome.
    rounds: HashMap<RoundKey, MessageId>,
    links: Vec<LinkRow>,
    /// Each scored review: the standings it moves (scope key, class) and its reviewer.
    scores: Vec<(Vec<(String, OutcomeClass)>, String)>,
    /// The `All` standing of each reviewer the batch read, as it was before the batch.
    all_before: HashMap<String, Standing>,
}

impl BatchScopes {
    /// How an outcome the request rules accepted scores, or the refusal of a calibration
    /// round already recorded by the same authority.
    pub(super) fn outcome(
        &mut self,
        storage: &dyn Storage,
        signed: &SignedMessage,
        outcome: &OutcomeContent,
    ) -> Result<Result<Arc<Scoring>, Rejection>, LedgerError> {
        let Some(link) = &outcome.calibration else {
            return Ok(Ok(Arc::new(Scoring::Reported)));
        };
        let authority = signed.pubkey.to_base64();
        let key = RoundKey::of(authority.clone(), link);
        if let Some(outcome_id) = self.rounds.get(&key) {
            return Ok(Err(calibration_replayed(outcome, outcome_id)));
        }
        let report = MessageId::parse(&link.report_sha256).map(|id| id.to_bytes()).unwrap_or_default();
        let (round, trial) = (to_i64(link.round), to_i64(link.trial));
        if let Some(stored) = storage.recorded_round(&authority, &report, round, trial)? {
            let outcome_id = MessageId::from_stored_bytes(&stored);
            return Ok(Err(calibration_replayed(outcome, &outcome_id)));
        }
        if self.trusted.is_none() {
            let keys = storage.authorities()?.into_iter().map(|(_, key)| key);
            self.trusted = Some(TrustSet::from_keys(keys));
        }
        let verified = self.trusted.as_ref().is_some_and(|trusted| trusted.contains(&authority));
        self.rounds.insert(key, signed.id.clone());
        self.links.push(LinkRow::of(&signed.id.to_bytes(), authority, link));
        Ok(Ok(Arc::new(if verified {
            Scoring::Verified(DomainScoring::of(link))
        } else {
            Scoring::Reported
        })))
    }

    /// Counts one scored review of `reviewer`, classed `class`, as `scoring` says.
    pub(super) fn score(&mut self, scoring: &Scoring, reviewer: &str, class: OutcomeClass) {
        self.scores.push((scoring.scores(reviewer, class), reviewer.to_owned()));
    }

    /// Remembers a reviewer's `All` standing as the batch first read it.
    pub(super) fn loaded(&mut self, reviewer: &str, standing: Standing) {
        self.all_before.entry(reviewer.to_owned()).or_insert(standing);
    }

    /// Reads the scoped standings the batch touched, folds its scored reviews into them in
    /// order and writes them, with the calibration rounds it recorded. Returns every
    /// standing that moved, `All` included (`all_after`: the batch's `All` standings).
    pub(super) fn finish(
        &mut self,
        storage: &dyn Storage,
        policy: &Policy,
        all_after: &HashMap<String, Standing>,
    ) -> Result<Vec<RatingChange>, LedgerError> {
        let mut changes = Vec::new();
        for (reviewer, after) in all_after {
            let before = self.all_before.get(reviewer).copied();
            if let Some(agent) = AgentId::parse(reviewer)
                && before != Some(*after)
            {
                changes.push(RatingChange { scope: Scope::All, agent, before, after: *after });
            }
        }
        if self.scores.is_empty() && self.links.is_empty() {
            return Ok(changes);
        }
        let mut seen = HashSet::new();
        let mut keys = Vec::new();
        for (scores, reviewer) in &self.scores {
            for (scope, _) in scores {
                if seen.insert((scope.as_str(), reviewer.as_str())) {
                    keys.push((scope.clone(), reviewer.clone()));
                }
            }
        }
        let mut standings = ScopedStandings::default();
        for (scope, agent, standing) in storage.scoped_standings(&keys)? {
            standings.set(scope, agent, standing);
        }
        let before = standings.clone();
        for (scores, reviewer) in &self.scores {
            standings.score_each(policy, scores, reviewer);
        }
        let mut rows: Vec<ScopedRow> = Vec::with_capacity(keys.len());
        for (key, reviewer) in keys {
            let Some(after) = standings.get(&key, &reviewer).copied() else { continue };
            if let (Some(scope), Some(agent)) = (Scope::from_key(&key), AgentId::parse(&reviewer)) {
                changes.push(RatingChange {
                    scope,
                    agent,
                    before: before.get(&key, &reviewer).copied(),
                    after,
                });
            }
            rows.push((key, reviewer, after));
        }
        storage.write_scoped(&self.links, &rows)?;
        Ok(changes)
    }
}

/// Converts a count for storing; rounds and trials past `i64::MAX` do not occur but saturate.
fn to_i64(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

impl Ledger {
    /// The best `limit` reviewers (all when `None`) in `scope`: rating, then review count,
    /// then id. In a scope other than `All`, a reviewer appears once a review of it was
    /// scored there.
    pub fn leaderboard_in(
        &self,
        scope: &Scope,
        limit: Option<u32>,
    ) -> Result<Vec<LeaderboardEntry>, LedgerError> {
        let rows = match scope.key() {
            None => self.storage.ranked(limit)?,
            Some(key) => self.storage.ranked_in(&key, limit)?,
        };
        self.entries(rows)
    }

    /// Leaderboard rows from ranked standings.
    pub(super) fn entries(
        &self,
        rows: Vec<(String, Standing)>,
    ) -> Result<Vec<LeaderboardEntry>, LedgerError> {
        let agents: Vec<String> = rows.iter().map(|(agent, _)| agent.clone()).collect();
        let mut names: HashMap<String, String> = self.storage.names_of(&agents)?.into_iter().collect();
        let mut entries = Vec::with_capacity(rows.len());
        for (index, (agent, standing)) in rows.into_iter().enumerate() {
            let name = names.remove(&agent);
            entries.push(LeaderboardEntry {
                rank: u32::try_from(index + 1).unwrap_or(u32::MAX),
                agent: self.agent(agent)?,
                elo: standing.rating,
                reviews: standing.reviews,
                accuracy: standing.accuracy(),
                name,
            });
        }
        Ok(entries)
    }

    /// The name `agent`'s latest review that gave one gave it (a name is only ever the one
    /// an agent's own signed reviews give), `None` when none did.
    pub fn name_of(&self, agent: &AgentId) -> Result<Option<String>, LedgerError> {
        Ok(self.storage.names_of(&[agent.to_string()])?.into_iter().next().map(|(_, name)| name))
    }

    /// Every stored standing in `scope`, by agent.
    pub fn standings_in(&self, scope: &Scope) -> Result<BTreeMap<AgentId, Standing>, LedgerError> {
        let Some(key) = scope.key() else { return self.standings() };
        let mut standings = BTreeMap::new();
        for (agent, standing) in self.storage.ranked_in(&key, None)? {
            standings.insert(self.agent(agent)?, standing);
        }
        Ok(standings)
    }

    /// The domains (bug categories) with verified standings, sorted.
    pub fn domains(&self) -> Result<Vec<String>, LedgerError> {
        Ok(self
            .storage
            .scope_keys()?
            .iter()
            .filter_map(|key| Scope::from_key(key)?.domain().map(str::to_owned))
            .collect())
    }

    /// The authorities the ledger trusts, by agent id.
    pub fn authorities(&self) -> Result<Vec<(AgentId, PublicKey)>, LedgerError> {
        let mut authorities = Vec::new();
        for (agent, key) in self.storage.authorities()? {
            let key = PublicKey::from_base64(&key, "pubkey").map_err(|error| {
                self.corrupt(format!("authorities: the key of {agent} does not load: {error}"))
            })?;
            authorities.push((self.agent(agent)?, key));
        }
        Ok(authorities)
    }

    /// Trusts `authority`: its calibration outcomes, stored and to come, are verified. The
    /// scoped standings are computed again in the same transaction. False when the key was
    /// trusted already (nothing changes).
    pub fn trust(&mut self, authority: &PublicKey) -> Result<bool, LedgerError> {
        let (key, agent) = (authority.to_base64(), authority.agent_id());
        self.change_trust(|storage| storage.add_authority(&key, agent.as_str()))
    }

    /// Stops trusting the keys of `authority`: its calibration outcomes count as reported
    /// from now on, the stored ones included. False when it was not trusted.
    pub fn distrust(&mut self, authority: &AgentId) -> Result<bool, LedgerError> {
        self.change_trust(|storage| storage.remove_authority(authority.as_str()))
    }

    /// Runs `change` and, when it changed the trusted keys, computes the scoped standings
    /// again: one write transaction.
    fn change_trust(
        &mut self,
        change: impl FnOnce(&dyn Storage) -> Result<bool, LedgerError>,
    ) -> Result<bool, LedgerError> {
        self.storage.begin_write()?;
        let done = (|| {
            let changed = change(&*self.storage)?;
            if changed {
                let rows = self.rebuilt_scopes()?;
                self.storage.clear_scoped()?;
                self.storage.write_scoped(&[], &rows)?;
            }
            self.storage.commit()?;
            Ok(changed)
        })();
        if done.is_err() {
            self.storage.rollback();
        }
        done
    }

    /// The scoped standings folded again from every scored review, in scoring order, under
    /// the trusted keys as stored now.
    fn rebuilt_scopes(&self) -> Result<Vec<ScopedRow>, LedgerError> {
        let trusted = TrustSet::from_keys(self.storage.authorities()?.into_iter().map(|(_, key)| key));
        let mut standings = ScopedStandings::default();
        let mut unreadable = None;
        self.storage.scored_scopes(&mut |row| {
            let Some(class) = OutcomeClass::from_wire(&row.outcome) else {
                unreadable
                    .get_or_insert_with(|| format!("scored_reviews: unreadable outcome {:?}", row.outcome));
                return;
            };
            let scores = match (&row.authority, &row.domains) {
                (Some(authority), Some(domains)) if trusted.contains(authority) => {
                    match stored_scoring(domains, row.link_reviewer.as_deref(), row.plants.as_deref()) {
                        Some(scoring) => scoring.scores(&row.reviewer, class),
                        None => {
                            unreadable.get_or_insert_with(|| {
                                format!(
                                    "calibration_outcomes: unreadable domains {domains:?} or plants {:?}",
                                    row.plants
                                )
                            });
                            return;
                        }
                    }
                }
                _ => reported_scores(class),
            };
            standings.score_each(&self.policy, &scores, &row.reviewer);
        })?;
        match unreadable {
            Some(what) => Err(self.corrupt(what)),
            None => Ok(standings.into_rows()),
        }
    }

    /// Differences between the scoped standings stored and those of `engine` (a replay).
    pub(super) fn scoped_mismatches(&self, engine: &Engine) -> Result<Vec<String>, LedgerError> {
        let mut stored = ScopedStandings::default();
        for (scope, agent, standing) in self.storage.all_scoped()? {
            stored.set(scope, agent, standing);
        }
        let replayed = engine.scoped();
        let mut mismatches = Vec::new();
        let text = |standing: &Standing| {
            format!(
                "rating {}, {} reviews, {} of {} decisive correct",
                standing.rating, standing.reviews, standing.correct, standing.decisive
            )
        };
        for ((scope, agent), standing) in replayed.iter() {
            let place = format!("scoped_ratings row ({scope}, {agent})");
            match stored.get(scope, agent) {
                None => mismatches.push(format!("{place}: missing; replay gives {}", text(standing))),
                Some(found) if found != standing => {
                    mismatches.push(format!(
                        "{place}: stored {}; replay gives {}",
                        text(found),
                        text(standing)
                    ));
                }
                Some(_) => {}
            }
        }
        for ((scope, agent), _) in stored.iter() {
            if replayed.get(scope, agent).is_none() {
                mismatches.push(format!(
                    "scoped_ratings row ({scope}, {agent}): replay rates no such reviewer there"
                ));
            }
        }
        Ok(mismatches)
    }

    /// An engine that trusts what the ledger trusts (for a replay).
    pub(super) fn trusting_engine(&self) -> Result<Engine, LedgerError> {
        let mut engine = Engine::new(self.policy.clone());
        for (_, key) in self.authorities()? {
            engine.trust(&key);
        }
        Ok(engine)
    }

    /// What a receipt of `reviewer`'s review says of the outcome `outcome_id` when it
    /// reports a calibration round; `None` for a self-reported outcome. Its domains are those
    /// the review counted in: none for a review of another agent than the one the link names.
    pub(super) fn receipt_calibration(
        &self,
        outcome_id: &MessageId,
        reviewer: &AgentId,
        trusted: &TrustSet,
    ) -> Result<Option<ReceiptCalibration>, LedgerError> {
        let Some(body) = self.storage.message_body(&outcome_id.to_bytes())? else { return Ok(None) };
        let envelope = parse_strict(&body)
            .ok()
            .and_then(|value| revcal_elo_protocol::decode_envelope(&value).ok())
            .ok_or_else(|| {
                self.corrupt(format!("message {outcome_id}: the stored body does not read back"))
            })?;
        let Content::Outcome(OutcomeContent { calibration: Some(link), .. }) = &envelope.message.content
        else {
            return Ok(None);
        };
        Ok(Some(ReceiptCalibration {
            verified: trusted.contains(&envelope.pubkey),
            authority: envelope.message.from.clone(),
            report_sha256: link.report_sha256.clone(),
            round: link.round,
            trial: link.trial,
            domains: match &link.reviewer {
                Some(calibrated) if calibrated != reviewer => Vec::new(),
                _ => link.domains.clone(),
            },
        }))
    }

    /// The trusted keys as a set.
    pub(super) fn trust_set(&self) -> Result<TrustSet, LedgerError> {
        Ok(TrustSet::from_keys(self.storage.authorities()?.into_iter().map(|(_, key)| key)))
    }
}
