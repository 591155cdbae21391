//! Posting RFC-001 messages and waiting for the ledger agent's answers: each message is
//! sent again after every reconnection, when an agent joins the channel, and every
//! `resend_every` until answered, so that it reaches a ledger agent at least once (the
//! ledger stores it once: a copy is refused as `replayed`, which the poster reads as
//! "already stored").

use crate::answer::Answer;
use crate::identity::ChatIdentity;
use crate::session::{Session, SessionConfig, SessionError, SessionEvent};
use revcal_elo::{MessageId, SignedMessage};
use serde_json::Value;
use std::collections::HashSet;
use std::time::{Duration, Instant};

/// A signed message to post.
#[derive(Debug, Clone)]
pub struct ToPost {
    /// The text posted (the message's canonical JSON).
    pub text: String,
    /// Its RFC-001 id.
    pub id: MessageId,
    /// Its type.
    pub kind: &'static str,
}

impl ToPost {
    /// A signed message.
    pub fn signed(message: &SignedMessage) -> ToPost {
        ToPost {
            text: message.canonical().to_owned(),
            id: message.id.clone(),
            kind: message.message.message_type().as_str(),
        }
    }
}

/// What became of one posted message.
#[derive(Debug, Clone, PartialEq)]
pub enum PostOutcome {
    /// Stored by the ledger: its answer (`{"status": "stored", "id", "scored", ...}`) and,
    /// for an outcome, the receipt of every review it scored.
    Stored {
        /// The answer.
        answer: Value,
        /// The receipts, as posted.
        receipts: Vec<Value>,
    },
    /// The ledger had it already (`replayed`): stored by an earlier posting.
    AlreadyStored {
        /// The answer.
        answer: Value,
    },
    /// The ledger's `REVIEW_LEADERBOARD_RESULT`.
    Result {
        /// The signed result.
        result: Value,
    },
    /// Refused by the ledger: the answer names the code, the field and the reason.
    Refused {
        /// The answer.
        answer: Value,
    },
    /// Refused by the chat server (too large for it, ...).
    RefusedByServer {
        /// The server's code.
        code: String,
        /// Its words.
        message: String,
    },
    /// No answer within the wait.
    NoAnswer,
}

impl PostOutcome {
    /// True for an answer the message's poster wanted: stored (now or before) or a result.
    pub fn is_answered(&self) -> bool {
        matches!(
            self,
            PostOutcome::Stored { .. } | PostOutcome::AlreadyStored { .. } | PostOutcome::Result { .. }
        )
    }
}

/// How the poster waits.
#[derive(Debug, Clone)]
pub struct PostConfig {
    /// The session.
    pub session: SessionConfig,
    /// The longest wait for all the answers.
    pub wait: Duration,
    /// An unanswered message is sent again after this long.
    pub resend_every: Duration,
    /// Only answers from this ledger (its issuer's RFC-001 id) count; any ledger's when `None`.
    pub issuer: Option<String>,
}

/// What the poster tells while it works: for its log.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum PostEvent {
    /// In the channel.
    Joined,
    /// The link was lost; the poster reconnects and sends again what is unanswered.
    Disconnected {
        /// Why.
        reason: String,
    },
    /// A message was relayed by the server.
    Sent {
        /// Its index in the list posted.
        index: usize,
        /// The server's id of the post.
        msg_id: Option<String>,
        /// How many times it has been relayed so far.
        times: usize,
    },
}

#[derive(Default)]
struct Tracked {
    tokens: Vec<u64>,
    msg_ids: HashSet<String>,
    last_queued: Option<Instant>,
    relayed: usize,
    outcome: Option<PostOutcome>,
    expected_receipts: usize,
    receipts: Vec<Value>,
}

impl Tracked {
    fn done(&self) -> bool {
        match &self.outcome {
            Some(PostOutcome::Stored { .. }) => self.receipts.len() >= self.expected_receipts,
            Some(_) => true,
            None => false,
        }
    }
}

/// Posts `messages` as `identity` and waits for their answers; one outcome per message, in
/// order.
pub fn post(
    identity: ChatIdentity,
    config: &PostConfig,
    messages: &[ToPost],
    on_event: &mut dyn FnMut(&PostEvent),
) -> Result<Vec<PostOutcome>, SessionError> {
    let mut session_config = config.session.clone();
    session_config.wait_for_channel = true;
    let mut session = Session::new(identity, session_config)?;
    let mut tracked: Vec<Tracked> = messages.iter().map(|_| Tracked::default()).collect();
    for (index, message) in messages.iter().enumerate() {
        queue(&mut session, &mut tracked[index], message)?;
    }
    let deadline = Instant::now() + config.wait;
    let mut joined_once = false;
    while !tracked.iter().all(Tracked::done) {
        let now = Instant::now();
        if now >= deadline {
            break;
        }
        // Sent again on a timer too: a ledger agent that was away has missed it.
        for (index, message) in messages.iter().enumerate() {
            let state = &mut tracked[index];
            if state.outcome.is_none()
                && !state.tokens.iter().any(|token| session.is_pending(*token))
                && state.last_queued.is_some_and(|at| now.duration_since(at) >= config.resend_every)
            {
                queue(&mut session, state, message)?;
            }
        }
        let Some(event) = session.poll((deadline - now).min(Duration::from_millis(500)))? else { continue };
        match event {
            SessionEvent::Joined { .. } => {
                on_event(&PostEvent::Joined);
                if joined_once {
                    resend_unanswered(&mut session, &mut tracked, messages, Duration::ZERO)?;
                }
                joined_once = true;
            }
            SessionEvent::AgentJoined { .. } => {
                // Perhaps a ledger agent back from a restart.
                resend_unanswered(&mut session, &mut tracked, messages, Duration::from_secs(2))?;
            }
            SessionEvent::Disconnected { reason } => on_event(&PostEvent::Disconnected { reason }),
            SessionEvent::Sent { token, msg_id, .. } => {
                if let Some(index) = tracked.iter().position(|state| state.tokens.contains(&token)) {
                    let state = &mut tracked[index];
                    state.relayed += 1;
                    if let Some(id) = &msg_id {
                        state.msg_ids.insert(id.clone());
                    }
                    on_event(&PostEvent::Sent { index, msg_id, times: state.relayed });
                }
            }
            SessionEvent::Refused { token, code, message } => {
                if let Some(state) = tracked.iter_mut().find(|state| state.tokens.contains(&token)) {
                    state.outcome.get_or_insert(PostOutcome::RefusedByServer { code, message });
                }
            }
            SessionEvent::Message(message) => {
                let Some(answer) = Answer::parse(&message.content) else { continue };
                read_answer(&mut tracked, messages, &answer, &message, config.issuer.as_deref());
            }
        }
    }
    session.close();
    Ok(tracked.into_iter().map(|state| state.outcome.unwrap_or(PostOutcome::NoAnswer)).collect())
}

fn queue(session: &mut Session, state: &mut Tracked, message: &ToPost) -> Result<(), SessionError> {
    state.tokens.push(session.send(&message.text, None)?);
    state.last_queued = Some(Instant::now());
    Ok(())
}

/// Queues again every unanswered message not already waiting and not queued in the last
/// `quiet` (an agent joining and leaving does not make a flood).
fn resend_unanswered(
    session: &mut Session,
    tracked: &mut [Tracked],
    messages: &[ToPost],
    quiet: Duration,
) -> Result<(), SessionError> {
    let now = Instant::now();
    for (state, message) in tracked.iter_mut().zip(messages) {
        if state.outcome.is_none()
            && !state.tokens.iter().any(|token| session.is_pending(*token))
            && state.last_queued.is_none_or(|at| now.duration_since(at) >= quiet)
        {
            queue(session, state, message)?;
        }
    }
    Ok(())
}

/// Records what `answer` says about the messages it answers.
fn read_answer(
    tracked: &mut [Tracked],
    messages: &[ToPost],
    answer: &Answer,
    posted: &crate::frame::ChatMessage,
    issuer: Option<&str>,
) {
    let ours = |state: &Tracked, message: &ToPost, in_reply_to: Option<&str>, id: Option<&str>| {
        in_reply_to.is_some_and(|reply| state.msg_ids.contains(reply))
            || (!posted.replay && id == Some(message.id.as_str()))
    };
    match answer {
        Answer::Statuses { ledger: Some(ledger), answers, .. } => {
            if issuer.is_some_and(|issuer| issuer != ledger) {
                return;
            }
            for answer in answers {
                let reply = answer["in_reply_to"].as_str();
                let id = answer["id"].as_str();
                for (state, message) in tracked.iter_mut().zip(messages) {
                    if !ours(state, message, reply, id) {
                        continue;
                    }
                    let status = answer["status"].as_str().unwrap_or_default();
                    match (status, answer["code"].as_str(), &state.outcome) {
                        ("stored", _, None | Some(PostOutcome::AlreadyStored { .. })) => {
                            state.expected_receipts = answer["scored"].as_array().map_or(0, Vec::len);
                            state.outcome =
                                Some(PostOutcome::Stored { answer: answer.clone(), receipts: Vec::new() });
                        }
                        ("rejected", Some("replayed"), None) => {
                            state.outcome = Some(PostOutcome::AlreadyStored { answer: answer.clone() });
                        }
                        ("rejected", Some(code), None) if code != "replayed" => {
                            state.outcome = Some(PostOutcome::Refused { answer: answer.clone() });
                        }
                        _ => {}
                    }
                }
            }
        }
        Answer::Statuses { .. } => {}
        Answer::Receipt(receipt) => {
            if issuer.is_some_and(|issuer| receipt["issuer"].as_str() != Some(issuer)) {
                return;
            }
            let outcome_id = receipt["review"]["outcome_id"].as_str();
            for (state, message) in tracked.iter_mut().zip(messages) {
                if outcome_id == Some(message.id.as_str()) && !state.receipts.contains(receipt) {
                    state.receipts.push(receipt.clone());
                }
            }
        }
        Answer::LeaderboardResult(result) => {
            if issuer.is_some_and(|issuer| result["from"].as_str() != Some(issuer)) {
                return;
            }
            let id = result["content"]["in_reply_to"].as_str();
            for (state, message) in tracked.iter_mut().zip(messages) {
                if state.outcome.is_none() && ours(state, message, posted.in_reply_to.as_deref(), id) {
                    state.outcome = Some(PostOutcome::Result { result: result.clone() });
                }
            }
        }
    }
    // Receipts gathered before the stored answer came are kept in `receipts`; move them.
    for state in tracked.iter_mut() {
        if let Some(PostOutcome::Stored { receipts, .. }) = &mut state.outcome {
            receipts.clone_from(&state.receipts);
        }
    }
}
