//! Recording a calibration: its messages stored in one transaction, all or none.

use super::store::{Commit, Stored};
use super::verified::RatingChange;
use super::{Ledger, LedgerError};
use revcal_elo_protocol::{AgentId, MessageId, MessageType, Rejection, RoundMessages, Scope, SignedMessage};

/// What recording a calibration did.
#[derive(Debug, Clone, PartialEq)]
pub enum Recording {
    /// Every message was stored and rated.
    Recorded(Recorded),
    /// A message was refused, so nothing was stored: each refusal, in order.
    Refused(Vec<Refusal>),
}

/// A calibration stored.
#[derive(Debug, Clone, PartialEq)]
pub struct Recorded {
    /// Each message stored, in order (request, review, outcome per trial of each round).
    pub stored: Vec<Stored>,
    /// True when the ledger trusts the authority that signed the outcomes: they count as
    /// verified.
    pub verified: bool,
    /// The authority.
    pub authority: AgentId,
    /// The reviewer.
    pub reviewer: AgentId,
    /// Every standing the recording moved, in every scope (`All`, verified or reported,
    /// each domain), read within its transaction.
    pub changes: Vec<RatingChange>,
}

/// One message of a calibration the ledger refused.
#[derive(Debug, Clone, PartialEq)]
pub struct Refusal {
    /// The round.
    pub round: u64,
    /// The trial.
    pub trial: u64,
    /// Which of the round's messages.
    pub message_type: MessageType,
    /// Its id.
    pub id: MessageId,
    /// Why.
    pub rejection: Rejection,
}

impl Ledger {
    /// Stores a calibration's messages (from [`crate::CalibrationRecord::messages`]) in one
    /// transaction, in order, under the ledger's usual rules: all of them, or none when the
    /// rules refuse any. A calibration recorded before is refused: its messages have the
    /// same ids (`replayed`), and an outcome for a round the same authority recorded already,
    /// however its messages differ, is `calibration_replayed`.
    pub fn record_calibration(&mut self, rounds: &[RoundMessages]) -> Result<Recording, LedgerError> {
        let messages: Vec<SignedMessage> =
            rounds.iter().flat_map(|round| round.messages().into_iter().cloned()).collect();
        let written =
            self.write_transaction_as(&messages, Commit::AllOrNothing).map_err(|failure| failure.error)?;
        if !written.committed {
            let refusals = written
                .outcomes
                .into_iter()
                .zip(&messages)
                .enumerate()
                .filter_map(|(index, (outcome, message))| {
                    let rejection = outcome.err()?;
                    let round = &rounds[index / 3];
                    Some(Refusal {
                        round: round.round,
                        trial: round.trial,
                        message_type: message.message.message_type(),
                        id: message.id.clone(),
                        rejection,
                    })
                })
                .collect();
            return Ok(Recording::Refused(refusals));
        }
        let stored: Vec<Stored> = written.outcomes.into_iter().filter_map(Result::ok).collect();
        let (authority, reviewer) = match rounds.first() {
            Some(round) => (round.request.message.from.clone(), round.review.message.from.clone()),
            None => (self.issuer(), self.issuer()),
        };
        // Decided inside the transaction: each outcome's reviews count in the verified scope
        // exactly when its signer was trusted then.
        let verified = written.changes.iter().any(|change| change.scope == Scope::Verified);
        Ok(Recording::Recorded(Recorded { stored, verified, authority, reviewer, changes: written.changes }))
    }
}
