//! The ledger agent: in the channel, it reads every RFC-001 message posted there, checks it
//! as `revcal elo ingest` does and that the chat sender holds its key, stores it once, and
//! answers in the channel as `revcal elo handle` does, with a receipt for every review an
//! outcome scored.

use crate::answer::{self, Answer};
use crate::frame::ChatMessage;
use crate::identity::{ChatId, ChatIdentity};
use crate::session::{Session, SessionConfig, SessionError, SessionEvent};
use revcal_elo::{
    Content, Ledger, LedgerError, MAX_MESSAGE_BYTES, MessageError, Rejection, Response, SignedMessage, Stored,
};
use serde_json::Value;
use std::collections::{HashSet, VecDeque};
use std::time::{Duration, Instant};

/// The most status answers posted in one message.
const MAX_ANSWERS_PER_POST: usize = 100;
/// How long an agent holds back "already stored" for a message posted live: another agent of
/// the same ledger that stored it answers meanwhile, and then nothing more is said.
const REPLAYED_HOLD: Duration = Duration::from_secs(3);
/// The message ids of answers remembered (seen from other agents of the same ledger).
const REMEMBERED_ANSWERS: usize = 10_000;

/// What the ledger agent did: for its log.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum LedgerEvent {
    /// In the channel (after every connection).
    Joined {
        /// The agent's AgentChat id.
        chat_id: ChatId,
        /// Whether the server treats it as verified.
        verified: bool,
        /// Whether it created the channel.
        created: bool,
    },
    /// The link to the server was lost (the agent reconnects).
    Disconnected {
        /// Why.
        reason: String,
    },
    /// A message stored.
    Stored {
        /// `REVIEW_REQUEST`, `REVIEW` or `REVIEW_OUTCOME`.
        kind: &'static str,
        /// Its RFC-001 id.
        id: String,
        /// The chat sender.
        from: String,
        /// The server's id of the post.
        msg_id: Option<String>,
        /// The reviews it scored.
        scored: usize,
        /// Read from the replay buffer (posted while the agent was away).
        replay: bool,
    },
    /// A message refused.
    Refused {
        /// The code (`invalid`, `altered`, `sender_mismatch`, the ledger's rule codes).
        code: String,
        /// Why.
        reason: String,
        /// The chat sender.
        from: String,
        /// The server's id of the post.
        msg_id: Option<String>,
        /// Read from the replay buffer: refused without an answer (it was answered when
        /// posted, or its poster sends it again).
        replay: bool,
    },
    /// A leaderboard query answered.
    Queried {
        /// The chat sender.
        from: String,
        /// The server's id of the post.
        msg_id: Option<String>,
    },
    /// Something posted in the channel.
    Posted {
        /// `answers` (status answers), `receipt` or `leaderboard`.
        what: &'static str,
        /// How many answers or receipts it carried.
        count: usize,
    },
    /// The ledger failed; the same messages are tried again after `retry_in`.
    LedgerFailed {
        /// The error.
        error: String,
        /// The wait before trying again.
        retry_in: Duration,
    },
}

/// Why a ledger agent stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AgentError {
    /// The chat session cannot go on.
    #[error(transparent)]
    Session(#[from] SessionError),
    /// The ledger failed where nothing can be tried again.
    #[error(transparent)]
    Ledger(#[from] LedgerError),
}

/// A message read in the channel, classified.
enum Inbound {
    /// Not an RFC-001 message (chat, a server notice, an answer).
    Ignore,
    /// Refused before the ledger.
    Refuse { code: &'static str, field: Option<String>, reason: String, id: Option<String> },
    /// An unsigned leaderboard query (its text).
    Query(String),
    /// A signed message whose key is its chat sender's.
    Signed(Box<SignedMessage>),
}

/// A status answer waiting to be posted.
struct HeldAnswer {
    answer: Value,
    msg_id: String,
    not_before: Instant,
}

/// The ledger agent. [`LedgerAgent::run`] is the whole life of `revcal agentchat serve`.
pub struct LedgerAgent {
    session: Session,
    ledger: Ledger,
    issuer: String,
    statuses: VecDeque<HeldAnswer>,
    posts: VecDeque<(String, Option<String>, &'static str, usize)>,
    answered_elsewhere: HashSet<String>,
    answered_order: VecDeque<String>,
    ledger_backoff: Duration,
}

impl std::fmt::Debug for LedgerAgent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LedgerAgent")
            .field("session", &self.session)
            .field("ledger", &self.ledger)
            .finish_non_exhaustive()
    }
}

impl LedgerAgent {
    /// The agent of `ledger`, identified on the chat server by `identity` (receipts stay
    /// signed by the ledger's own key). The channel is created when it does not exist and
    /// the agent may create it.
    pub fn new(
        identity: ChatIdentity,
        ledger: Ledger,
        mut config: SessionConfig,
    ) -> Result<LedgerAgent, AgentError> {
        config.may_create = true;
        let issuer = ledger.issuer().to_string();
        Ok(LedgerAgent {
            session: Session::new(identity, config)?,
            ledger,
            issuer,
            statuses: VecDeque::new(),
            posts: VecDeque::new(),
            answered_elsewhere: HashSet::new(),
            answered_order: VecDeque::new(),
            ledger_backoff: Duration::from_millis(500),
        })
    }

    /// The ledger.
    pub fn ledger(&self) -> &Ledger {
        &self.ledger
    }

    /// Gives the ledger back (the agent ends).
    pub fn into_ledger(self) -> Ledger {
        self.ledger
    }

    /// The chat session.
    pub fn session(&self) -> &Session {
        &self.session
    }

    /// Answers and receipts not yet posted.
    pub fn answers_waiting(&self) -> usize {
        self.statuses.len() + self.posts.len() + self.session.backlog()
    }

    /// Runs until `stop` returns true, reporting what it does to `on_event`.
    pub fn run(
        &mut self,
        stop: &dyn Fn() -> bool,
        on_event: &mut dyn FnMut(&LedgerEvent),
    ) -> Result<(), AgentError> {
        while !stop() {
            self.step(Duration::from_millis(200), on_event)?;
        }
        self.session.close();
        Ok(())
    }

    /// One round: posts what is due, then reads for at most `wait` and handles every
    /// message that has arrived by then (several at once in one transaction).
    pub fn step(&mut self, wait: Duration, on_event: &mut dyn FnMut(&LedgerEvent)) -> Result<(), AgentError> {
        self.pump(on_event)?;
        let Some(first) = self.session.poll(wait)? else { return Ok(()) };
        let mut events = vec![first];
        while events.len() < 1000 {
            match self.session.poll(Duration::ZERO)? {
                Some(event) => events.push(event),
                None => break,
            }
        }
        let mut messages = Vec::new();
        for event in events {
            match event {
                SessionEvent::Joined { chat_id, verified, created } => {
                    on_event(&LedgerEvent::Joined { chat_id, verified, created });
                }
                SessionEvent::Disconnected { reason } => on_event(&LedgerEvent::Disconnected { reason }),
                SessionEvent::Message(message) => messages.push(message),
                SessionEvent::Refused { code, message, .. } => {
                    tracing::warn!(%code, %message, "the server refused an answer");
                }
                SessionEvent::Sent { .. } | SessionEvent::AgentJoined { .. } => {}
            }
        }
        self.handle(&messages, on_event)
    }

    /// Hands the session the next answer when it has none waiting.
    fn pump(&mut self, on_event: &mut dyn FnMut(&LedgerEvent)) -> Result<(), AgentError> {
        if !self.session.is_ready() || self.session.backlog() > 0 {
            return Ok(());
        }
        let now = Instant::now();
        let mut batch: Vec<(Value, String)> = Vec::new();
        let mut kept = VecDeque::new();
        while let Some(held) = self.statuses.pop_front() {
            if self.answered_elsewhere.contains(&held.msg_id) && held.answer["code"] == "replayed" {
                continue;
            }
            if held.not_before > now || batch.len() >= MAX_ANSWERS_PER_POST {
                kept.push_back(held);
            } else {
                batch.push((held.answer, held.msg_id));
            }
        }
        self.statuses = kept;
        if !batch.is_empty() {
            let answers: Vec<Value> = batch.iter().map(|(answer, _)| answer.clone()).collect();
            let content = answer::statuses(Some(&self.issuer), None, &answers);
            // One answer names its message in the frame too; several name theirs inside.
            let reply = (batch.len() == 1).then(|| batch[0].1.clone());
            self.session.send(&content, reply.as_deref())?;
            on_event(&LedgerEvent::Posted { what: "answers", count: answers.len() });
            return Ok(());
        }
        if let Some((content, reply, what, count)) = self.posts.pop_front() {
            self.session.send(&content, reply.as_deref())?;
            on_event(&LedgerEvent::Posted { what, count });
        }
        Ok(())
    }

    fn handle(
        &mut self,
        messages: &[ChatMessage],
        on_event: &mut dyn FnMut(&LedgerEvent),
    ) -> Result<(), AgentError> {
        let own = self.session.identity().chat_id().clone();
        let mut batch: Vec<(&ChatMessage, SignedMessage)> = Vec::new();
        for message in messages {
            if message.from == own.as_str() || message.from == "@server" {
                continue;
            }
            if let Some(Answer::Statuses { ledger: Some(ledger), answers, .. }) =
                Answer::parse(&message.content)
            {
                if ledger == self.issuer {
                    for answered in answers.iter().filter_map(|answer| answer["in_reply_to"].as_str()) {
                        self.remember_answered(answered);
                    }
                }
                continue;
            }
            match classify(message) {
                Inbound::Ignore => {}
                Inbound::Refuse { code, field, reason, id } => {
                    self.refuse(message, code, field.as_deref(), &reason, id.as_deref(), on_event);
                }
                Inbound::Query(text) => {
                    self.store(&mut batch, on_event)?;
                    if message.replay {
                        continue;
                    }
                    let response = self.retrying(on_event, |ledger| ledger.handle(&text))?;
                    self.answer_query(message, response, on_event);
                }
                Inbound::Signed(signed) => match &signed.message.content {
                    Content::LeaderboardResult(_) => {}
                    Content::Leaderboard(_) => {
                        self.store(&mut batch, on_event)?;
                        if message.replay {
                            continue;
                        }
                        let response = self.retrying(on_event, |ledger| ledger.handle_message(&signed))?;
                        self.answer_query(message, response, on_event);
                    }
                    _ => batch.push((message, *signed)),
                },
            }
        }
        self.store(&mut batch, on_event)
    }

    /// Stores `batch` in one transaction (tried again while the ledger fails) and answers.
    fn store(
        &mut self,
        batch: &mut Vec<(&ChatMessage, SignedMessage)>,
        on_event: &mut dyn FnMut(&LedgerEvent),
    ) -> Result<(), AgentError> {
        if batch.is_empty() {
            return Ok(());
        }
        let signed: Vec<SignedMessage> = batch.iter().map(|(_, signed)| signed.clone()).collect();
        let outcomes = self.retrying(on_event, |ledger| ledger.ingest_batch(&signed))?;
        for ((message, signed), outcome) in batch.drain(..).zip(outcomes) {
            let id = signed.id.as_str().to_owned();
            match outcome {
                Ok(stored) => self.stored(message, &signed, &stored, on_event),
                Err(rejection) => self.rejected(message, &rejection, &id, on_event),
            }
        }
        Ok(())
    }

    fn stored(
        &mut self,
        message: &ChatMessage,
        signed: &SignedMessage,
        stored: &Stored,
        on_event: &mut dyn FnMut(&LedgerEvent),
    ) {
        on_event(&LedgerEvent::Stored {
            kind: signed.message.message_type().as_str(),
            id: stored.id.as_str().to_owned(),
            from: message.from.clone(),
            msg_id: message.msg_id.clone(),
            scored: stored.scored.len(),
            replay: message.replay,
        });
        let Some(msg_id) = message.msg_id.clone() else { return };
        let answer = Response::Stored(stored.clone()).to_json();
        self.statuses.push_back(HeldAnswer {
            answer: answer::addressed(answer, &msg_id, None),
            msg_id: msg_id.clone(),
            not_before: Instant::now(),
        });
        if stored.scored.is_empty() {
            return;
        }
        match self.ledger.receipts_for(&stored.scored) {
            Ok(receipts) => {
                for receipt in receipts {
                    self.posts.push_back((receipt.to_canonical(), Some(msg_id.clone()), "receipt", 1));
                }
            }
            Err(error) => tracing::error!(%error, "cannot issue the receipts of an outcome just stored"),
        }
    }

    fn rejected(
        &mut self,
        message: &ChatMessage,
        rejection: &Rejection,
        id: &str,
        on_event: &mut dyn FnMut(&LedgerEvent),
    ) {
        let field = rejection.field();
        let reason = rejection.to_string();
        let code = rejection.code();
        if code == "replayed" && !message.replay {
            // Two agents of one ledger in one channel: the one that stored it answers.
            on_event(&LedgerEvent::Refused {
                code: code.into(),
                reason: reason.clone(),
                from: message.from.clone(),
                msg_id: message.msg_id.clone(),
                replay: false,
            });
            if let Some(msg_id) = &message.msg_id {
                self.statuses.push_back(HeldAnswer {
                    answer: answer::addressed(
                        answer::refusal(code, field.as_deref(), &reason),
                        msg_id,
                        Some(id),
                    ),
                    msg_id: msg_id.clone(),
                    not_before: Instant::now() + REPLAYED_HOLD,
                });
            }
            return;
        }
        self.refuse(message, code, field.as_deref(), &reason, Some(id), on_event);
    }

    fn refuse(
        &mut self,
        message: &ChatMessage,
        code: &str,
        field: Option<&str>,
        reason: &str,
        id: Option<&str>,
        on_event: &mut dyn FnMut(&LedgerEvent),
    ) {
        on_event(&LedgerEvent::Refused {
            code: code.into(),
            reason: reason.into(),
            from: message.from.clone(),
            msg_id: message.msg_id.clone(),
            replay: message.replay,
        });
        if message.replay {
            return;
        }
        if let Some(msg_id) = &message.msg_id {
            self.statuses.push_back(HeldAnswer {
                answer: answer::addressed(answer::refusal(code, field, reason), msg_id, id),
                msg_id: msg_id.clone(),
                not_before: Instant::now(),
            });
        }
    }

    fn answer_query(
        &mut self,
        message: &ChatMessage,
        response: Response,
        on_event: &mut dyn FnMut(&LedgerEvent),
    ) {
        match response {
            Response::Reply(reply) => {
                let text = reply.canonical().to_owned();
                if text.len() > MAX_MESSAGE_BYTES {
                    let reason = format!(
                        "the leaderboard asked for is {} bytes, more than a message may be ({} MiB): ask for fewer rows (`content.limit`)",
                        text.len(),
                        MAX_MESSAGE_BYTES >> 20
                    );
                    self.refuse(message, "answer_too_large", Some("content.limit"), &reason, None, on_event);
                    return;
                }
                on_event(&LedgerEvent::Queried {
                    from: message.from.clone(),
                    msg_id: message.msg_id.clone(),
                });
                self.posts.push_back((text, message.msg_id.clone(), "leaderboard", 1));
            }
            Response::Rejected { code, field, reason } => {
                self.refuse(message, &code, field.as_deref(), &reason, None, on_event);
            }
            Response::Stored(_) => {}
        }
    }

    /// Runs `work` on the ledger, trying again with backoff (the chat session kept alive
    /// meanwhile) while the ledger fails.
    fn retrying<T>(
        &mut self,
        on_event: &mut dyn FnMut(&LedgerEvent),
        mut work: impl FnMut(&mut Ledger) -> Result<T, LedgerError>,
    ) -> Result<T, AgentError> {
        loop {
            match work(&mut self.ledger) {
                Ok(value) => {
                    self.ledger_backoff = Duration::from_millis(500);
                    return Ok(value);
                }
                Err(error) => {
                    let retry_in = self.ledger_backoff;
                    on_event(&LedgerEvent::LedgerFailed { error: error.to_string(), retry_in });
                    self.ledger_backoff = (self.ledger_backoff * 2).min(Duration::from_secs(30));
                    // Keep answering pings while waiting; what arrives waits in the session.
                    self.session.hold(retry_in)?;
                }
            }
        }
    }

    fn remember_answered(&mut self, msg_id: &str) {
        if self.answered_elsewhere.insert(msg_id.to_owned()) {
            self.answered_order.push_back(msg_id.to_owned());
            if self.answered_order.len() > REMEMBERED_ANSWERS
                && let Some(old) = self.answered_order.pop_front()
            {
                self.answered_elsewhere.remove(&old);
            }
        }
    }
}

/// What a channel message is to the ledger.
fn classify(message: &ChatMessage) -> Inbound {
    let text = message.content.trim();
    if !text.starts_with('{') {
        return Inbound::Ignore;
    }
    let masked = text.contains("[REDACTED");
    let note = |reason: String| {
        if masked {
            format!(
                "{reason}; AgentChat masked text it took for a secret ([REDACTED...]) on the way, so the message is not what was signed: sign no secret-like text (a JSON \"token\", \"secret\" or \"password\" value, an API key)"
            )
        } else {
            reason
        }
    };
    let refuse = |error: &MessageError, id: Option<String>| {
        // Masking can break the JSON itself (it replaces `"token": "..."`, key and all):
        // whatever fails in a masked message, the server altered it.
        let code = if masked || matches!(error, MessageError::BadSignature) { "altered" } else { "invalid" };
        let reason = if matches!(error, MessageError::BadSignature) {
            "`sig`: the signature does not verify: the message was changed after it was signed (on the way, or before it was posted) or signed with another key".to_owned()
        } else {
            error.to_string()
        };
        Inbound::Refuse { code, field: error.field(), reason: note(reason), id }
    };
    if text.len() > MAX_MESSAGE_BYTES {
        return refuse(&MessageError::TooLarge { bytes: text.len() }, None);
    }
    let value = match revcal_elo::parse_strict(text) {
        Ok(value) => value,
        Err(_) => {
            // Parsed again for the error with its position.
            return match SignedMessage::parse(text) {
                Err(error) => refuse(&error, None),
                Ok(signed) => Inbound::Signed(Box::new(signed)),
            };
        }
    };
    match value.get("type").and_then(Value::as_str) {
        Some(kind) if answer::is_protocol_type(kind) => {}
        _ => return Inbound::Ignore,
    }
    // An unsigned leaderboard query (no `sig`, no `pubkey`): anyone may ask; the ledger
    // checks its fields.
    if value["type"] == "REVIEW_LEADERBOARD" && value.get("sig").is_none() && value.get("pubkey").is_none() {
        return Inbound::Query(text.to_owned());
    }
    match SignedMessage::from_value(value) {
        Err(error) => refuse(&error, None),
        Ok(signed) => {
            let holder = ChatId::of_key(&signed.pubkey);
            if holder.as_str() != message.from {
                let reason = format!(
                    "`pubkey`: the message is signed by {} (AgentChat id {holder}) but {} posted it: an agent posts only the messages it signed",
                    signed.message.from, message.from
                );
                return Inbound::Refuse {
                    code: "sender_mismatch",
                    field: Some("pubkey".into()),
                    reason,
                    id: Some(signed.id.as_str().to_owned()),
                };
            }
            Inbound::Signed(Box::new(signed))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use revcal_elo::{Keypair, Message, RequestContent};

    fn posted(from: &str, content: &str) -> ChatMessage {
        ChatMessage {
            from: from.into(),
            from_name: None,
            to: "#review".into(),
            content: content.into(),
            msg_id: Some("1-a".into()),
            in_reply_to: None,
            replay: false,
        }
    }

    fn request(key: &Keypair, title: &str) -> SignedMessage {
        let message = Message {
            from: key.agent_id(),
            to: "#review".into(),
            ts: 1_700_000_000_000,
            content: Content::Request(RequestContent { title: Some(title.into()), ..Default::default() }),
        };
        SignedMessage::sign(&message, key).unwrap()
    }

    #[test]
    fn only_the_holder_of_the_key_may_post_a_message() {
        let alice = Keypair::from_seed([1; 32]);
        let signed = request(&alice, "x");
        let alice_chat = ChatId::of_key(&alice.public());
        assert!(matches!(classify(&posted(alice_chat.as_str(), signed.canonical())), Inbound::Signed(_)));
        let mallory = ChatId::of_key(&Keypair::from_seed([2; 32]).public());
        let Inbound::Refuse { code, reason, .. } = classify(&posted(mallory.as_str(), signed.canonical()))
        else {
            panic!("accepted from another agent")
        };
        assert_eq!(code, "sender_mismatch");
        assert!(reason.contains(alice_chat.as_str()) && reason.contains(mallory.as_str()), "{reason}");
    }

    #[test]
    fn a_masked_message_is_refused_as_altered_and_chat_is_ignored() {
        let alice = Keypair::from_seed([1; 32]);
        let signed = request(&alice, "rotate the key abcdefghijklmnop1234");
        let masked = signed.canonical().replace("abcdefghijklmnop1234", "[REDACTED:generic_secret]");
        let chat = ChatId::of_key(&alice.public());
        let Inbound::Refuse { code, reason, .. } = classify(&posted(chat.as_str(), &masked)) else {
            panic!()
        };
        assert_eq!(code, "altered");
        assert!(reason.contains("masked"), "{reason}");
        // Masking can replace a key with its value and break the JSON: still altered.
        let broken = signed.canonical().replace(r#""title":"#, "[REDACTED:generic_secret]");
        let Inbound::Refuse { code, .. } = classify(&posted(chat.as_str(), &broken)) else { panic!() };
        assert_eq!(code, "altered");
        for ignored in ["hello", r#"{"type":"CHAT"}"#, r#"{"no":"type"}"#] {
            assert!(matches!(classify(&posted(chat.as_str(), ignored)), Inbound::Ignore), "{ignored}");
        }
        let Inbound::Refuse { code, reason, .. } = classify(&posted(chat.as_str(), r#"{"type": "REVIEW", "#))
        else {
            panic!()
        };
        assert_eq!(code, "invalid");
        assert!(reason.contains("column"), "{reason}");
        assert!(matches!(
            classify(&posted(chat.as_str(), r#"{"type":"REVIEW_LEADERBOARD"}"#)),
            Inbound::Query(_)
        ));
    }
}
