//! One protocol message in, one response out: what a chat server embedding the ledger calls.

use super::{Ledger, LedgerError, Stored};
use revcal_elo_protocol::{
    Content, LeaderboardQuery, LeaderboardResult, Message, MessageError, MessageId, REVIEW_CHANNEL,
    Rejection, Scope, SignedMessage, canonical_text, parse_strict,
};
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
        Response::Rejected {
            code: rejection.code().into(),
            field: rejection.field(),
            reason: rejection.to_string(),
        }
    }
}

impl Ledger {
    /// Handles one message given as JSON text: stores requests, reviews and outcomes, and
    /// answers `REVIEW_LEADERBOARD`, signed or not (`{"type": "REVIEW_LEADERBOARD"}` alone
    /// is a query), with a signed `REVIEW_LEADERBOARD_RESULT`.
    pub fn handle(&mut self, text: &str) -> Result<Response, LedgerError> {
        if let Err(error) = revcal_elo_protocol::check_message_size(text) {
            return Ok(Response::invalid(&error));
        }
        let Ok(value) = parse_strict(text) else {
            // Not JSON: parse again for the error with its position.
            return Ok(match SignedMessage::parse(text) {
                Err(error) => Response::invalid(&error),
                Ok(message) => self.handle_message(&message)?,
            });
        };
        if let Some(query) = revcal_elo_protocol::anonymous_query(&value) {
            return match query {
                Err(error) => Ok(Response::invalid(&MessageError::Field(error))),
                Ok(query) => {
                    // The asker's own name for itself: unverified, but the leaderboard is public.
                    let to = query.from.map_or_else(|| REVIEW_CHANNEL.to_owned(), |from| from.to_string());
                    let id = canonical_text(&value).ok().map(|canonical| MessageId::of_canonical(&canonical));
                    self.reply(to, id, &query.query)
                }
            };
        }
        match SignedMessage::from_value(value) {
            Err(error) => Ok(Response::invalid(&error)),
            Ok(message) => self.handle_message(&message),
        }
    }

    /// As [`Ledger::handle`], for a message already parsed and verified.
    pub fn handle_message(&mut self, message: &SignedMessage) -> Result<Response, LedgerError> {
        match &message.message.content {
            Content::Leaderboard(query) => {
                self.reply(message.message.from.to_string(), Some(message.id.clone()), query)
            }
            _ => Ok(match self.ingest(message)? {
                Ok(stored) => Response::Stored(stored),
                Err(rejection) => Response::rejected(&rejection),
            }),
        }
    }

    /// The signed answer to `query` (whose id is `query_id`), addressed to `to`: the
    /// leaderboard of the outcomes and domain it names (all outcomes when it names none).
    fn reply(
        &self,
        to: String,
        query_id: Option<MessageId>,
        query: &LeaderboardQuery,
    ) -> Result<Response, LedgerError> {
        // The codec refuses a domain with other than verified outcomes; all is the fallback
        // that cannot be reached.
        let scope = Scope::of(query.outcomes, query.domain.as_deref()).unwrap_or(Scope::All);
        let leaderboard =
            self.leaderboard_in(&scope, Some(query.limit.unwrap_or(DEFAULT_LEADERBOARD_LIMIT)))?;
        let result = LeaderboardResult {
            leaderboard,
            in_reply_to: query_id,
            // Named in the answer only when the query asked for other than RFC-001's board.
            outcomes: (scope != Scope::All).then(|| scope.outcomes()),
            domain: scope.domain().map(str::to_owned),
        };
        let answer = Message {
            from: self.key.agent_id(),
            to,
            ts: unix_millis(),
            content: Content::LeaderboardResult(result),
        };
        SignedMessage::sign(&answer, &self.key)
            .map(|reply| Response::Reply(Box::new(reply)))
            .map_err(|cause| LedgerError::Reply { ledger: self.name.clone(), cause })
    }
}

/// Milliseconds since the Unix epoch, as the protocol's examples write `ts`; 0 for a clock
/// set before 1970.
fn unix_millis() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX))
}
