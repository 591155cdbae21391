//! What the agents post in answer, and how an answer is recognised.
//!
//! The ledger agent posts three kinds of `MSG.content`, each one JSON object:
//!
//! - **status answers**: `{"ledger": "@ISSUER", "answers": [ANSWER, ...]}`, each `ANSWER`
//!   what `revcal elo handle` prints for a message (`{"status": "stored", "id", "scored"}` or
//!   `{"status": "rejected", "code", "field", "reason"}`) with `in_reply_to`, the server's
//!   `msg_id` of the message answered, and `id`, the message's RFC-001 id when it has one.
//!   Answers waiting while the agent may not post (one message a second) go out together.
//! - **receipts**: one RFC-001 receipt per scored review (`{"type": "review", ...}`, signed
//!   by the ledger's key), `in_reply_to` the outcome.
//! - **leaderboard results**: the signed `REVIEW_LEADERBOARD_RESULT`, `in_reply_to` the query.
//!
//! The reviewer agent's refusal of a request it cannot review has the status shape with
//! `reviewer` in place of `ledger`.

use revcal_elo::MessageType;
use serde_json::{Value, json};

/// The RFC-001 types a ledger agent reads in the channel.
pub(crate) fn is_protocol_type(kind: &str) -> bool {
    MessageType::from_wire(kind).is_some()
}

/// A refusal, in `revcal elo handle`'s shape.
pub(crate) fn refusal(code: &str, field: Option<&str>, reason: &str) -> Value {
    json!({"status": "rejected", "code": code, "field": field, "reason": reason})
}

/// `answer` (an `elo handle` status object) marked with the message it answers.
pub(crate) fn addressed(mut answer: Value, msg_id: &str, id: Option<&str>) -> Value {
    if let Some(map) = answer.as_object_mut() {
        map.insert("in_reply_to".into(), json!(msg_id));
        if let Some(id) = id {
            map.insert("id".into(), json!(id));
        }
    }
    answer
}

/// One posted answer, as a reader of the channel sees it.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// Status answers from a ledger (by its issuer id) or a reviewer (by its agent id).
    Statuses {
        /// `@ISSUER` of the ledger, or `None` for a reviewer's.
        ledger: Option<String>,
        /// The reviewer's RFC-001 id, for a reviewer's.
        reviewer: Option<String>,
        /// Each answer object.
        answers: Vec<Value>,
    },
    /// A receipt (the object as posted).
    Receipt(Value),
    /// A `REVIEW_LEADERBOARD_RESULT` (the signed message as posted).
    LeaderboardResult(Value),
}

impl Answer {
    /// Reads `content` as an answer; `None` when it is none of the three.
    pub fn parse(content: &str) -> Option<Answer> {
        let value: Value = serde_json::from_str(content.trim()).ok()?;
        let object = value.as_object()?;
        if let Some(answers) = object.get("answers").and_then(Value::as_array) {
            let ledger = object.get("ledger").and_then(Value::as_str).map(str::to_owned);
            let reviewer = object.get("reviewer").and_then(Value::as_str).map(str::to_owned);
            if ledger.is_some() || reviewer.is_some() {
                return Some(Answer::Statuses { ledger, reviewer, answers: answers.clone() });
            }
            return None;
        }
        match object.get("type").and_then(Value::as_str) {
            Some("review") if object.contains_key("issuer") => Some(Answer::Receipt(value)),
            Some(kind) if kind == MessageType::ReviewLeaderboardResult.as_str() => {
                Some(Answer::LeaderboardResult(value))
            }
            _ => None,
        }
    }
}

/// The status-answers content of `ledger` (or of a reviewer, `reviewer`).
pub(crate) fn statuses(ledger: Option<&str>, reviewer: Option<&str>, answers: &[Value]) -> String {
    let mut object = serde_json::Map::new();
    if let Some(ledger) = ledger {
        object.insert("ledger".into(), json!(ledger));
    }
    if let Some(reviewer) = reviewer {
        object.insert("reviewer".into(), json!(reviewer));
    }
    object.insert("answers".into(), Value::Array(answers.to_vec()));
    Value::Object(object).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_of_answer_is_recognised_and_nothing_else() {
        let stored = addressed(json!({"status": "stored", "id": "ab", "scored": []}), "1-x", None);
        let text = statuses(Some("@0123456789abcdef"), None, std::slice::from_ref(&stored));
        let Some(Answer::Statuses { ledger, answers, .. }) = Answer::parse(&text) else { panic!("{text}") };
        assert_eq!((ledger.as_deref(), answers), (Some("@0123456789abcdef"), vec![stored]));
        assert!(matches!(Answer::parse(r#"{"type":"review","issuer":"@a"}"#), Some(Answer::Receipt(_))));
        assert!(matches!(
            Answer::parse(r#"{"type":"REVIEW_LEADERBOARD_RESULT","content":{}}"#),
            Some(Answer::LeaderboardResult(_))
        ));
        for other in [r#"{"type":"REVIEW"}"#, r#"{"answers":[]}"#, "hello", r#"{"type":"review"}"#] {
            assert_eq!(Answer::parse(other), None, "{other}");
        }
    }
}
