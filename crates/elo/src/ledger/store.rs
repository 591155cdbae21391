//! Storing messages: the rules checked against the ledger's state and the ratings updated,
//! one transaction per batch.

use super::{Ledger, LedgerError};
use crate::engine::{Rejection, RequestView, ScoredReview, check_outcome, check_review};
use crate::identity::AgentId;
use crate::message::{Content, MessageId, OutcomeContent, ReviewContent, Verdict};
use crate::policy::{OutcomeClass, Standing};
use crate::signed::{MessageError, SignedMessage};
use rusqlite::{OptionalExtension, Transaction, TransactionBehavior};
use std::collections::HashMap;
use std::collections::hash_map::Entry;

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
        let path = self.path.clone();
        let sql = |source| LedgerError::Sqlite { path: path.clone(), source };
        let transaction =
            self.connection.transaction_with_behavior(TransactionBehavior::Immediate).map_err(sql)?;
        let mut outcomes = Vec::with_capacity(messages.len());
        let new_rows;
        {
            let mut writer = Writer {
                transaction: &transaction,
                policy: &self.policy,
                seen: &self.seen,
                new: SeenRows::default(),
                standings: HashMap::new(),
            };
            for message in messages {
                outcomes.push(writer.store(message).map_err(sql)?);
            }
            writer.write_standings().map_err(sql)?;
            new_rows = writer.new;
        }
        transaction.commit().map_err(sql)?;
        // Only rows that are now committed may be skipped later.
        self.seen.agents.extend(new_rows.agents);
        self.seen.rated.extend(new_rows.rated);
        Ok(outcomes)
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
    ) -> Result<Vec<LineOutcome>, LedgerError> {
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
        let mut stored = self.ingest_batch(&valid)?.into_iter();
        let mut outcomes = Vec::with_capacity(errors.len());
        for error in errors {
            outcomes.push(match error {
                Some(error) => LineOutcome::Invalid(error),
                None => match stored.next() {
                    Some(Ok(done)) => LineOutcome::Stored(done),
                    Some(Err(rejection)) => LineOutcome::Rejected(rejection),
                    None => return Err(self.corrupt("fewer ingest results than messages")),
                },
            });
        }
        Ok(outcomes)
    }
}

/// Agents whose `agents` row, and reviewers whose `ratings` row, exist.
#[derive(Debug, Default)]
pub(super) struct SeenRows {
    agents: std::collections::HashSet<String>,
    rated: std::collections::HashSet<String>,
}

/// The statements of one ingest transaction.
struct Writer<'a> {
    transaction: &'a Transaction<'a>,
    policy: &'a crate::policy::Policy,
    /// Rows committed before this transaction.
    seen: &'a SeenRows,
    /// Rows this transaction wrote (committed only if it commits).
    new: SeenRows,
    /// The standings of the reviewers this batch touched, read once, updated in memory and
    /// written once by `write_standings` before the commit (the transaction holds the write
    /// lock, so no other writer can change them meanwhile).
    standings: HashMap<String, Standing>,
}

impl Writer<'_> {
    fn store(&mut self, signed: &SignedMessage) -> rusqlite::Result<Result<Stored, Rejection>> {
        let content = &signed.message.content;
        if let Content::Leaderboard(_) | Content::LeaderboardResult(_) = content {
            return Ok(Err(Rejection::NotStored { message_type: signed.message.message_type() }));
        }
        // The insert is the duplicate check (one index search instead of two); a message the
        // rules then refuse is deleted again, so a replay is reported as such whatever the
        // state of its request.
        let Some(seq) = self.insert_message(signed)? else {
            return Ok(Err(Rejection::Replayed { id: signed.id.clone() }));
        };
        let sender = &signed.message.from;
        let scored = match content {
            Content::Review(review) => {
                let request = self.request(&review.request_id)?;
                let view = request.as_ref().map(|(_, view)| view);
                if let Err(rejection) = check_review(&review.request_id, view, sender) {
                    self.unstore(seq)?;
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
                    self.unstore(seq)?;
                    return Ok(Err(rejection));
                }
                let request_seq = request.map_or(0, |(request_seq, _)| request_seq);
                self.score(signed, outcome, request_seq)?
            }
            _ => Vec::new(),
        };
        self.record_agent(signed)?;
        Ok(Ok(Stored { id: signed.id.clone(), scored }))
    }

    /// Inserts the message; its sequence number, or `None` when its id is already stored.
    fn insert_message(&mut self, signed: &SignedMessage) -> rusqlite::Result<Option<i64>> {
        let message = &signed.message;
        let inserted = self
            .transaction
            .prepare_cached(
                "INSERT INTO messages (id, type, sender, ts, body) VALUES (?1, ?2, ?3, ?4, ?5) \
                 ON CONFLICT (id) DO NOTHING",
            )?
            .execute((
                &signed.id.to_bytes()[..],
                message.message_type().as_str(),
                message.from.as_str(),
                i64::try_from(message.ts).unwrap_or(i64::MAX),
                signed.canonical(),
            ))?;
        Ok((inserted == 1).then(|| self.transaction.last_insert_rowid()))
    }

    /// Takes back the message just inserted (the rules refused it).
    fn unstore(&mut self, seq: i64) -> rusqlite::Result<()> {
        self.transaction.prepare_cached("DELETE FROM messages WHERE seq = ?1")?.execute([seq])?;
        Ok(())
    }

    /// Records the sender's public key the first time it sends a stored message.
    fn record_agent(&mut self, signed: &SignedMessage) -> rusqlite::Result<()> {
        let agent = signed.message.from.as_str();
        if !self.seen.agents.contains(agent) && !self.new.agents.contains(agent) {
            self.transaction
                .prepare_cached("INSERT OR IGNORE INTO agents (id, pubkey) VALUES (?1, ?2)")?
                .execute((agent, signed.pubkey.to_base64()))?;
            self.new.agents.insert(agent.to_owned());
        }
        Ok(())
    }

    /// The stored request `request_id` names (its sequence number and what the rules need).
    fn request(&mut self, request_id: &MessageId) -> rusqlite::Result<Option<(i64, RequestView)>> {
        let row: Option<(i64, String, Option<Vec<u8>>)> = self
            .transaction
            .prepare_cached(
                "SELECT seq, sender, closed_by FROM messages WHERE id = ?1 AND type = 'REVIEW_REQUEST'",
            )?
            .query_row([&request_id.to_bytes()[..]], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))
            .optional()?;
        Ok(row.and_then(|(seq, requester, outcome)| {
            let view = RequestView {
                requester: AgentId::parse(&requester)?,
                closed_by: outcome.and_then(|id| MessageId::from_bytes(&id)),
            };
            Some((seq, view))
        }))
    }

    fn record_review(
        &mut self,
        signed: &SignedMessage,
        review: &ReviewContent,
        request_seq: i64,
        seq: i64,
    ) -> rusqlite::Result<()> {
        let reviewer = signed.message.from.as_str();
        self.transaction
            .prepare_cached(
                "INSERT INTO latest_reviews (request_seq, reviewer, review_id, verdict, seq) VALUES (?1, ?2, ?3, ?4, ?5) \
                 ON CONFLICT (request_seq, reviewer) DO UPDATE SET review_id = ?3, verdict = ?4, seq = ?5",
            )?
            .execute((
                request_seq,
                reviewer,
                &signed.id.to_bytes()[..],
                review.verdict.as_str(),
                seq,
            ))?;
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
    fn standing(&mut self, reviewer: &str) -> rusqlite::Result<&mut Standing> {
        let (transaction, policy) = (self.transaction, self.policy);
        match self.standings.entry(reviewer.to_owned()) {
            Entry::Occupied(entry) => Ok(entry.into_mut()),
            Entry::Vacant(entry) => {
                let stored = transaction
                    .prepare_cached(
                        "SELECT rating, reviews, decisive, correct FROM ratings WHERE agent = ?1",
                    )?
                    .query_row([reviewer], |row| {
                        Ok(Standing {
                            rating: row.get(0)?,
                            reviews: u64::try_from(row.get::<_, i64>(1)?).unwrap_or(0),
                            decisive: u64::try_from(row.get::<_, i64>(2)?).unwrap_or(0),
                            correct: u64::try_from(row.get::<_, i64>(3)?).unwrap_or(0),
                        })
                    })
                    .optional()?;
                Ok(entry.insert(stored.unwrap_or_else(|| Standing::new(policy))))
            }
        }
    }

    /// Writes every standing this batch touched, one statement per reviewer.
    fn write_standings(&mut self) -> rusqlite::Result<()> {
        let mut statement = self.transaction.prepare_cached(
            "INSERT INTO ratings (agent, rating, reviews, decisive, correct) VALUES (?1, ?2, ?3, ?4, ?5) \
             ON CONFLICT (agent) DO UPDATE SET rating = ?2, reviews = ?3, decisive = ?4, correct = ?5",
        )?;
        for (reviewer, standing) in &self.standings {
            statement.execute((
                reviewer.as_str(),
                standing.rating,
                to_i64(standing.reviews),
                to_i64(standing.decisive),
                to_i64(standing.correct),
            ))?;
        }
        Ok(())
    }

    fn score(
        &mut self,
        signed: &SignedMessage,
        outcome: &OutcomeContent,
        request_seq: i64,
    ) -> rusqlite::Result<Vec<ScoredReview>> {
        let request_id = outcome.request_id.as_str();
        let request_key = outcome.request_id.to_bytes();
        let outcome_key = signed.id.to_bytes();
        self.transaction
            .prepare_cached("UPDATE messages SET closed_by = ?2 WHERE seq = ?1")?
            .execute((request_seq, &outcome_key[..]))?;
        let latest: Vec<(String, Vec<u8>, String)> = self
            .transaction
            .prepare_cached(
                "SELECT reviewer, review_id, verdict FROM latest_reviews WHERE request_seq = ?1 ORDER BY seq",
            )?
            .query_map([request_seq], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))?
            .collect::<Result<_, _>>()?;
        let mut scored = Vec::with_capacity(latest.len());
        for (reviewer_text, review_key, verdict_text) in latest {
            let (Some(reviewer), Some(review_id), Some(verdict)) = (
                AgentId::parse(&reviewer_text),
                MessageId::from_bytes(&review_key),
                Verdict::from_wire(&verdict_text),
            ) else {
                tracing::warn!(request_id, reviewer_text, "unreadable latest review row; skipped");
                continue;
            };
            let class = OutcomeClass::of(verdict, outcome.incident);
            let policy = self.policy;
            let standing = self.standing(reviewer.as_str())?;
            let elo_delta = standing.score(policy, class);
            let rating_after = standing.rating;
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
            self.transaction
                .prepare_cached(
                    "INSERT INTO scored_reviews (review_id, request_id, outcome_id, reviewer, requester, verdict, \
                     incident, outcome, elo_delta, rating_after, ts) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
                )?
                .execute(rusqlite::params![
                    &review_key[..],
                    &request_key[..],
                    &outcome_key[..],
                    entry.reviewer.as_str(),
                    entry.requester.as_str(),
                    verdict.as_str(),
                    entry.incident,
                    class.as_str(),
                    elo_delta,
                    rating_after,
                    to_i64(entry.ts),
                ])?;
            scored.push(entry);
        }
        Ok(scored)
    }
}

fn to_i64(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}
