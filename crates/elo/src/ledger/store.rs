//! Storing messages: the rules checked against the ledger's state and the ratings updated,
//! one transaction per batch.

use super::storage::{BatchWrites, LatestRow, NewMessage, ScoredRow, Storage};
use super::verified::{BatchScopes, RatingChange, Scoring};
use super::{Ledger, LedgerError};
use revcal_elo_protocol::{
    AgentId, Content, MessageError, MessageId, OutcomeClass, OutcomeContent, Rejection, RequestView,
    ReviewContent, ReviewVerdict, ScoredReview, SignedMessage, Standing, check_calibration_review,
    check_outcome, check_review,
};
use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::sync::Arc;

/// A message the ledger stored.
#[derive(Debug, Clone, PartialEq)]
pub struct Stored {
    /// Its id.
    pub id: MessageId,
    /// The reviews it scored (outcomes only).
    pub scored: Vec<ScoredReview>,
}

/// What became of one input line.
#[derive(Debug, Clone, PartialEq)]
pub enum LineOutcome {
    /// Stored.
    Stored(Stored),
    /// Refused before the ledger: bad JSON, a bad field, a bad signature.
    Invalid(MessageError),
    /// Well-formed and signed, but refused by the rules (replay, self-review, ...).
    Rejected(Rejection),
}

impl LineOutcome {
    /// True when the line was stored.
    pub fn is_stored(&self) -> bool {
        matches!(self, LineOutcome::Stored(_))
    }
}

impl Ledger {
    /// Stores one message (its own transaction).
    pub fn ingest(&mut self, message: &SignedMessage) -> Result<Result<Stored, Rejection>, LedgerError> {
        let mut outcomes = self.ingest_batch(std::slice::from_ref(message))?;
        outcomes.pop().ok_or_else(|| self.corrupt("ingest_batch returned nothing"))
    }

    /// Stores a batch of checked messages in one transaction, in order. A rejected message
    /// changes nothing; the others are stored and rated.
    pub fn ingest_batch(
        &mut self,
        messages: &[SignedMessage],
    ) -> Result<Vec<Result<Stored, Rejection>>, LedgerError> {
        self.write_transaction(messages).map_err(|failure| failure.error)
    }

    /// [`Ledger::ingest_batch`], saying on failure whether the batch may be stored anyway.
    fn write_transaction(
        &mut self,
        messages: &[SignedMessage],
    ) -> Result<Vec<Result<Stored, Rejection>>, BatchFailure> {
        self.write_transaction_as(messages, Commit::Accepted).map(|written| written.outcomes)
    }

    /// Stores `messages` in one transaction; with [`Commit::AllOrNothing`] a batch with any
    /// refused message is rolled back whole (its outcomes are then what the rules said, and
    /// nothing is stored).
    pub(super) fn write_transaction_as(
        &mut self,
        messages: &[SignedMessage],
        commit: Commit,
    ) -> Result<Written, BatchFailure> {
        let failed = |error| BatchFailure { error, unconfirmed: 0 };
        self.storage.begin_write().map_err(failed)?;
        let mut writer = Writer {
            storage: &*self.storage,
            policy: &self.policy,
            seen: &self.seen,
            new: SeenRows::default(),
            standings: HashMap::new(),
            requests: HashMap::new(),
            latest: HashMap::new(),
            writes: BatchWrites::default(),
            scopes: BatchScopes::default(),
            changes: Vec::new(),
        };
        let written = (|| {
            let mut outcomes = Vec::with_capacity(messages.len());
            for message in messages {
                outcomes.push(writer.store(message).map_err(failed)?);
            }
            if commit == Commit::AllOrNothing && outcomes.iter().any(Result::is_err) {
                return Ok((outcomes, false));
            }
            writer.finish().map_err(failed)?;
            if let Err(error) = self.storage.commit() {
                // A commit the server never confirmed may have happened all the same.
                let stored = outcomes.iter().filter(|outcome| outcome.is_ok()).count();
                let unconfirmed = if error.outcome_unknown() { stored as u64 } else { 0 };
                return Err(BatchFailure { error, unconfirmed });
            }
            Ok((outcomes, true))
        })();
        let (new_rows, changes) = (writer.new, writer.changes);
        match written {
            Ok((outcomes, true)) => {
                // Only rows that are now committed may be skipped later.
                self.seen.agents.extend(new_rows.agents);
                self.seen.rated.extend(new_rows.rated);
                Ok(Written { outcomes, committed: true, changes })
            }
            Ok((outcomes, false)) => {
                self.storage.rollback();
                Ok(Written { outcomes, committed: false, changes: Vec::new() })
            }
            Err(failure) => {
                self.storage.rollback();
                Err(failure)
            }
        }
    }

    /// Parses, verifies and stores lines of JSONL (blank lines skipped): one transaction for
    /// all of them, through the same pipeline as [`Ledger::ingest_lines_pipelined`]. Returns
    /// one outcome per non-blank line, with its index in `lines`.
    pub fn ingest_lines(&mut self, lines: &[&str]) -> Result<Vec<(usize, LineOutcome)>, LedgerError> {
        let mut outcomes = Vec::with_capacity(lines.len());
        self.ingest_lines_pipelined(lines, lines.len(), |batch| outcomes.extend(batch))?;
        Ok(outcomes)
    }

    /// Stores parsed and verified messages (in one transaction); the invalid ones come back
    /// as [`LineOutcome::Invalid`], in place.
    pub(crate) fn ingest_parsed(
        &mut self,
        parsed: Vec<Result<SignedMessage, MessageError>>,
    ) -> Result<Vec<LineOutcome>, BatchFailure> {
        let mut valid = Vec::with_capacity(parsed.len());
        let mut errors = Vec::with_capacity(parsed.len());
        for result in parsed {
            match result {
                Ok(message) => {
                    valid.push(message);
                    errors.push(None);
                }
                Err(error) => errors.push(Some(error)),
            }
        }
        let mut stored = self.write_transaction(&valid)?.into_iter();
        let mut outcomes = Vec::with_capacity(errors.len());
        for error in errors {
            outcomes.push(match error {
                Some(error) => LineOutcome::Invalid(error),
                None => match stored.next() {
                    Some(Ok(done)) => LineOutcome::Stored(done),
                    Some(Err(rejection)) => LineOutcome::Rejected(rejection),
                    None => {
                        let error = self.corrupt("fewer ingest results than messages");
                        return Err(BatchFailure { error, unconfirmed: 0 });
                    }
                },
            });
        }
        Ok(outcomes)
    }
}

/// Whether a write transaction commits what the rules accepted, or nothing unless they
/// accepted everything.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Commit {
    /// Store what the rules accept (ingest).
    Accepted,
    /// Store everything or nothing (a calibration record).
    AllOrNothing,
}

/// What a write transaction did.
pub(super) struct Written {
    /// Each message's outcome, in order.
    pub(super) outcomes: Vec<Result<Stored, Rejection>>,
    /// False when the transaction was rolled back (a refusal under [`Commit::AllOrNothing`]).
    pub(super) committed: bool,
    /// Every standing the committed transaction moved, in every scope.
    pub(super) changes: Vec<RatingChange>,
}

/// Why a write transaction failed, and how many of its messages may be stored all the same
/// (a commit that got no answer).
pub(crate) struct BatchFailure {
    pub(crate) error: LedgerError,
    pub(crate) unconfirmed: u64,
}

/// Agents whose `agents` row, and reviewers whose `ratings` row, exist.
#[derive(Debug, Default)]
pub(super) struct SeenRows {
    agents: std::collections::HashSet<String>,
    rated: std::collections::HashSet<String>,
}

/// The rules applied to one write transaction.
struct Writer<'a> {
    storage: &'a dyn Storage,
    policy: &'a revcal_elo_protocol::Policy,
    /// Rows committed before this transaction.
    seen: &'a SeenRows,
    /// Rows this transaction wrote (committed only if it commits).
    new: SeenRows,
    /// The standings of the reviewers this batch touched, read once, updated in memory and
    /// written once by `finish` before the commit (the transaction holds the writers' lock,
    /// so no other writer can change them meanwhile).
    standings: HashMap<String, Standing>,
    /// The requests this batch stored or read, as the rules see them now (a request the
    /// batch closed is closed here before it is in the database).
    requests: HashMap<[u8; 32], BatchRequest>,
    /// The latest review of each reviewer of each request, from this batch, by the
    /// request's sequence number: what `latest_reviews` will hold after `finish`.
    latest: HashMap<i64, Vec<LatestRow>>,
    /// What `finish` writes.
    writes: BatchWrites,
    /// The batch's calibration rounds and scoped standings.
    scopes: BatchScopes,
    /// Every standing the batch moved (filled by `finish`).
    changes: Vec<RatingChange>,
}

/// A request as the current batch sees it.
struct BatchRequest {
    seq: i64,
    view: RequestView,
    /// Stored by this batch: no latest review of it is in the database yet.
    new: bool,
}

impl Writer<'_> {
    fn store(&mut self, signed: &SignedMessage) -> Result<Result<Stored, Rejection>, LedgerError> {
        let content = &signed.message.content;
        if let Content::Leaderboard(_) | Content::LeaderboardResult(_) = content {
            return Ok(Err(Rejection::NotStored { message_type: signed.message.message_type() }));
        }
        // The insert is the duplicate check (one index search instead of two); a message the
        // rules then refuse is deleted again, so a replay is reported as such whatever the
        // state of its request.
        let message = &signed.message;
        let id = signed.id.to_bytes();
        let new = NewMessage {
            id: &id,
            kind: message.message_type().as_str(),
            sender: message.from.as_str(),
            ts: i64::try_from(message.ts).unwrap_or(i64::MAX),
            body: signed.canonical(),
        };
        let Some(seq) = self.storage.insert_message(new)? else {
            return Ok(Err(Rejection::Replayed { id: signed.id.clone() }));
        };
        let sender = &signed.message.from;
        let scored = match content {
            Content::Review(review) => {
                let request = self.request(&review.request_id)?;
                let view = request.as_ref().map(|(_, view)| view);
                if let Err(rejection) = check_review(&review.request_id, view, sender) {
                    self.storage.delete_message(seq)?;
                    return Ok(Err(rejection));
                }
                // The check refuses an unknown request: `request` is there, 0 is never used.
                let request_seq = request.map_or(0, |(request_seq, _)| request_seq);
                self.record_review(signed, review, request_seq, seq)?;
                Vec::new()
            }
            Content::Outcome(outcome) => {
                let request = self.request(&outcome.request_id)?;
                let view = request.as_ref().map(|(_, view)| view);
                if let Err(rejection) = check_outcome(&outcome.request_id, view, sender) {
                    self.storage.delete_message(seq)?;
                    return Ok(Err(rejection));
                }
                let request_seq = request.map_or(0, |(request_seq, _)| request_seq);
                let latest = self.latest_of(&outcome.request_id, request_seq)?;
                let verdicts: Vec<(AgentId, ReviewVerdict)> = latest
                    .iter()
                    .filter_map(|row| {
                        Some((AgentId::parse(&row.reviewer)?, ReviewVerdict::from_wire(&row.verdict)?))
                    })
                    .collect();
                if let Err(rejection) = check_calibration_review(outcome, &verdicts) {
                    self.storage.delete_message(seq)?;
                    return Ok(Err(rejection));
                }
                let scoring = match self.scopes.outcome(self.storage, signed, outcome)? {
                    Ok(scoring) => scoring,
                    Err(rejection) => {
                        self.storage.delete_message(seq)?;
                        return Ok(Err(rejection));
                    }
                };
                self.score(signed, outcome, request_seq, latest, &scoring)?
            }
            Content::Request(_) => {
                let view = RequestView { requester: sender.clone(), closed_by: None };
                self.requests.insert(id, BatchRequest { seq, view, new: true });
                Vec::new()
            }
            _ => Vec::new(),
        };
        self.record_agent(signed);
        Ok(Ok(Stored { id: signed.id.clone(), scored }))
    }

    /// Records the sender's public key the first time it sends a stored message.
    fn record_agent(&mut self, signed: &SignedMessage) {
        let agent = signed.message.from.as_str();
        if !self.seen.agents.contains(agent) && !self.new.agents.contains(agent) {
            self.writes.agents.push((agent.to_owned(), signed.pubkey.to_base64()));
            self.new.agents.insert(agent.to_owned());
        }
    }

    /// The request `request_id` names as the rules see it now: its sequence number and
    /// what the rules need. Read from the database once per batch.
    fn request(&mut self, request_id: &MessageId) -> Result<Option<(i64, RequestView)>, LedgerError> {
        let key = request_id.to_bytes();
        if let Some(known) = self.requests.get(&key) {
            return Ok(Some((known.seq, known.view.clone())));
        }
        let Some(row) = self.storage.request(&key)? else { return Ok(None) };
        let Some(requester) = AgentId::parse(&row.requester) else { return Ok(None) };
        let view =
            RequestView { requester, closed_by: row.closed_by.and_then(|id| MessageId::from_bytes(&id)) };
        self.requests.insert(key, BatchRequest { seq: row.seq, view: view.clone(), new: false });
        Ok(Some((row.seq, view)))
    }

    fn record_review(
        &mut self,
        signed: &SignedMessage,
        review: &ReviewContent,
        request_seq: i64,
        seq: i64,
    ) -> Result<(), LedgerError> {
        let reviewer = signed.message.from.as_str();
        let row = LatestRow {
            request_seq,
            reviewer: reviewer.to_owned(),
            review_id: signed.id.to_bytes().to_vec(),
            verdict: review.verdict.as_str().to_owned(),
            seq,
        };
        let latest = self.latest.entry(request_seq).or_default();
        match latest.iter_mut().find(|known| known.reviewer == row.reviewer) {
            Some(known) => *known = row,
            None => latest.push(row),
        }
        if let Some(name) = &review.name {
            self.writes.names.push((reviewer.to_owned(), name.clone()));
        }
        if !self.seen.rated.contains(reviewer) && !self.new.rated.contains(reviewer) {
            // Loading the standing makes `write_standings` write its row (a new reviewer
            // appears on the leaderboard at the start rating).
            self.standing(reviewer)?;
            self.new.rated.insert(reviewer.to_owned());
        }
        Ok(())
    }

    /// The reviewer's standing as of this point of the batch: from the batch's own updates,
    /// else from the ledger (read once), else the policy's start.
    fn standing(&mut self, reviewer: &str) -> Result<&mut Standing, LedgerError> {
        let (storage, policy) = (self.storage, self.policy);
        match self.standings.entry(reviewer.to_owned()) {
            Entry::Occupied(entry) => Ok(entry.into_mut()),
            Entry::Vacant(entry) => {
                let stored = storage.rating(reviewer)?;
                if let Some(stored) = stored {
                    self.scopes.loaded(reviewer, stored);
                }
                Ok(entry.insert(stored.unwrap_or_else(|| Standing::new(policy))))
            }
        }
    }

    /// Writes what the batch decided: its latest reviews, closed requests, scored reviews,
    /// new agents and every standing it touched.
    fn finish(&mut self) -> Result<(), LedgerError> {
        let mut writes = std::mem::take(&mut self.writes);
        writes.latest_reviews = self.latest.drain().flat_map(|(_, rows)| rows).collect();
        self.changes = self.scopes.finish(self.storage, self.policy, &self.standings)?;
        writes.ratings = self.standings.drain().collect();
        self.storage.write_batch(&writes)
    }

    /// The latest reviews of a request as this point of the batch sees them: the stored
    /// ones (none for a request this batch stored), replaced by this batch's of the same
    /// reviewer, in the order they were stored.
    fn latest_of(&mut self, request_id: &MessageId, request_seq: i64) -> Result<Vec<LatestRow>, LedgerError> {
        let is_new = self.requests.get(&request_id.to_bytes()).is_some_and(|known| known.new);
        let mut latest = if is_new { Vec::new() } else { self.storage.latest_reviews(request_seq)? };
        for row in self.latest.get(&request_seq).into_iter().flatten() {
            match latest.iter_mut().find(|known| known.reviewer == row.reviewer) {
                Some(known) => *known = row.clone(),
                None => latest.push(row.clone()),
            }
        }
        latest.sort_by_key(|row| row.seq);
        Ok(latest)
    }

    fn score(
        &mut self,
        signed: &SignedMessage,
        outcome: &OutcomeContent,
        request_seq: i64,
        latest: Vec<LatestRow>,
        scoring: &Arc<Scoring>,
    ) -> Result<Vec<ScoredReview>, LedgerError> {
        let request_id = outcome.request_id.as_str();
        let request_key = outcome.request_id.to_bytes();
        let outcome_key = signed.id.to_bytes();
        self.writes.closed.push((request_seq, outcome_key.to_vec()));
        if let Some(known) = self.requests.get_mut(&request_key) {
            known.view.closed_by = Some(signed.id.clone());
        }
        let mut scored = Vec::with_capacity(latest.len());
        for row in latest {
            let (Some(reviewer), Some(review_id), Some(verdict)) = (
                AgentId::parse(&row.reviewer),
                MessageId::from_bytes(&row.review_id),
                ReviewVerdict::from_wire(&row.verdict),
            ) else {
                tracing::warn!(request_id, reviewer = row.reviewer, "unreadable latest review row; skipped");
                continue;
            };
            let class = OutcomeClass::of(verdict, outcome.incident);
            let policy = self.policy;
            let standing = self.standing(reviewer.as_str())?;
            let elo_delta = standing.score(policy, class);
            let rating_after = standing.rating;
            self.scopes.score(scoring, &row.reviewer, class);
            let entry = ScoredReview {
                review_id,
                request_id: outcome.request_id.clone(),
                outcome_id: signed.id.clone(),
                reviewer,
                requester: signed.message.from.clone(),
                verdict,
                incident: outcome.incident,
                outcome: class,
                elo_delta,
                rating_after,
                ts: signed.message.ts,
            };
            self.writes.scored.push(ScoredRow {
                review_id: row.review_id,
                request_id: request_key.to_vec(),
                outcome_id: outcome_key.to_vec(),
                reviewer: row.reviewer,
                requester: entry.requester.to_string(),
                verdict: verdict.as_str().to_owned(),
                incident: entry.incident,
                outcome: class.as_str().to_owned(),
                elo_delta,
                rating_after,
                ts: i64::try_from(entry.ts).unwrap_or(i64::MAX),
            });
            scored.push(entry);
        }
        Ok(scored)
    }
}
