//! One protocol message in, one response out: what a chat server embedding the ledger calls.

use super::{Ledger, LedgerError, Stored};
use crate::engine::Rejection;
use crate::message::{Content, LeaderboardResult, Message, MessageId};
use crate::signed::{MessageError, SignedMessage};
use serde_json::{Value, json};

/// Entries in a `REVIEW_LEADERBOARD_RESULT` when the query names no `limit`.
pub(crate) const DEFAULT_LEADERBOARD_LIMIT: u32 = 20;

/// The ledger's answer to one message.
#[derive(Debug, Clone, PartialEq)]
pub enum Response {
    /// The message was stored (and scored what it scored).
    Stored(Stored),
    /// The message was refused: invalid, badly signed, or against the rules.
    Rejected {
        /// A stable code (`invalid`, `replayed`, `self_review`, ...).
        code: String,
        /// The field at fault, when there is one.
        field: Option<String>,
        /// Why, in words.
        reason: String,
    },
    /// A protocol message in reply (`REVIEW_LEADERBOARD_RESULT`), signed by the ledger.
    Reply(Box<SignedMessage>),
}

impl Response {
    /// The response as JSON: the reply message itself, or a status object.
    pub fn to_json(&self) -> Value {
        match self {
            Response::Stored(stored) => {
                json!({ "status": "stored", "id": stored.id, "scored": stored.scored })
            }
            Response::Rejected { code, field, reason } => {
                json!({ "status": "rejected", "code": code, "field": field, "reason": reason })
            }
            Response::Reply(message) => serde_json::from_str(message.canonical()).unwrap_or(Value::Null),
        }
    }

    fn invalid(error: &MessageError) -> Response {
        Response::Rejected { code: "invalid".into(), field: error.field(), reason: error.to_string() }
    }

    fn rejected(rejection: &Rejection) -> Response {
        let field = match rejection {
            Rejection::UnknownRequest { .. }
            | Rejection::ReviewAfterOutcome { .. }
            | Rejection::SecondOutcome { .. } => Some("content.request_id".to_owned()),
            Rejection::SelfReview { .. } | Rejection::OutcomeNotFromRequester { .. } => {
                Some("from".to_owned())
            }
            Rejection::NotStored { .. } => Some("type".to_owned()),
            Rejection::Replayed { .. } => None,
        };
        Response::Rejected { code: rejection.code().into(), field, reason: rejection.to_string() }
    }
}

impl Ledger {
    /// Handles one message given as JSON text: stores requests, reviews and outcomes, and
    /// answers `REVIEW_LEADERBOARD` with a signed `REVIEW_LEADERBOARD_RESULT`.
    pub fn handle(&mut self, text: &str) -> Result<Response, LedgerError> {
        match SignedMessage::parse(text) {
            Err(error) => Ok(Response::invalid(&error)),
            Ok(message) => self.handle_message(&message),
        }
    }

    /// As [`Ledger::handle`], for a message already parsed and verified.
    pub fn handle_message(&mut self, message: &SignedMessage) -> Result<Response, LedgerError> {
        match &message.message.content {
            Content::Leaderboard(query) => {
                let entries = self.leaderboard(Some(query.limit.unwrap_or(DEFAULT_LEADERBOARD_LIMIT)))?;
                self.reply(message, entries)
            }
            _ => Ok(match self.ingest(message)? {
                Ok(stored) => Response::Stored(stored),
                Err(rejection) => Response::rejected(&rejection),
            }),
        }
    }

    fn reply(
        &self,
        query: &SignedMessage,
        entries: Vec<crate::message::LeaderboardEntry>,
    ) -> Result<Response, LedgerError> {
        let answer = Message {
            from: self.key.agent_id(),
            to: query.message.from.to_string(),
            ts: unix_now().unwrap_or(query.message.ts),
            content: Content::LeaderboardResult(LeaderboardResult {
                in_reply_to: MessageId(query.id.0.clone()),
                entries,
            }),
        };
        SignedMessage::sign(&answer, &self.key)
            .map(|reply| Response::Reply(Box::new(reply)))
            .map_err(|source| LedgerError::Reply { path: self.path.clone(), source })
    }
}

/// Seconds since the Unix epoch, `None` for a clock set before 1970.
fn unix_now() -> Option<u64> {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).ok().map(|elapsed| elapsed.as_secs())
}
