//! AgentChat's frames, as its server speaks them: one JSON object per WebSocket text frame,
//! with `type`. What the agents send, and what they read of what the server sends.

use serde_json::{Value, json};

/// The largest frame the server accepts (its `maxPayload`): a bigger one closes the
/// connection (1009), so none is ever sent.
pub const MAX_FRAME_BYTES: usize = 2 * 1024 * 1024;

/// `IDENTIFY` with a public key (the server then sends a `CHALLENGE`).
pub(crate) fn identify(name: &str, pem: &str) -> String {
    json!({"type": "IDENTIFY", "name": name, "pubkey": pem}).to_string()
}

/// `VERIFY_IDENTITY`: the answer to a challenge.
pub(crate) fn verify_identity(challenge_id: &str, signature: &str, timestamp: u64) -> String {
    json!({"type": "VERIFY_IDENTITY", "challenge_id": challenge_id, "signature": signature, "timestamp": timestamp})
        .to_string()
}

/// `JOIN`.
pub(crate) fn join(channel: &str) -> String {
    json!({"type": "JOIN", "channel": channel}).to_string()
}

/// `CREATE_CHANNEL` (a public channel).
pub(crate) fn create_channel(channel: &str) -> String {
    json!({"type": "CREATE_CHANNEL", "channel": channel}).to_string()
}

/// `PING` (answered `PONG`).
pub(crate) fn ping() -> String {
    json!({"type": "PING"}).to_string()
}

/// `MSG` to a channel; `in_reply_to` is relayed by the server as it is.
pub(crate) fn msg(channel: &str, content: &str, in_reply_to: Option<&str>) -> String {
    let mut frame = json!({"type": "MSG", "to": channel, "content": content});
    if let (Some(id), Some(map)) = (in_reply_to, frame.as_object_mut()) {
        map.insert("in_reply_to".into(), json!(id));
    }
    frame.to_string()
}

/// A channel message as the server relays it.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatMessage {
    /// The sender's AgentChat id (`@server` for the server's own notices).
    pub from: String,
    /// The sender's name.
    pub from_name: Option<String>,
    /// The channel.
    pub to: String,
    /// The text, as the server passed it on (possibly masked).
    pub content: String,
    /// The server's id of the message.
    pub msg_id: Option<String>,
    /// The `msg_id` the sender said it answers.
    pub in_reply_to: Option<String>,
    /// Sent again from the channel's replay buffer on join.
    pub replay: bool,
}

/// What the agents read of a server frame.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ServerFrame {
    Challenge {
        challenge_id: String,
        nonce: String,
    },
    Welcome {
        agent_id: String,
        verified: bool,
    },
    Joined {
        channel: String,
    },
    Msg(ChatMessage),
    AgentJoined {
        channel: String,
        agent: String,
    },
    Error {
        code: String,
        message: String,
    },
    Pong,
    SessionDisplaced {
        reason: String,
    },
    /// Any other frame (presence, typing, ...), by type.
    Other(String),
}

impl ServerFrame {
    /// Reads one frame; `None` for text that is not a JSON object with a `type`.
    pub(crate) fn parse(text: &str) -> Option<ServerFrame> {
        let value: Value = serde_json::from_str(text).ok()?;
        let kind = value.get("type")?.as_str()?;
        let text_of = |field: &str| value.get(field).and_then(Value::as_str).map(str::to_owned);
        let string = |field: &str| text_of(field).unwrap_or_default();
        Some(match kind {
            "CHALLENGE" => {
                ServerFrame::Challenge { challenge_id: string("challenge_id"), nonce: string("nonce") }
            }
            "WELCOME" => ServerFrame::Welcome {
                agent_id: string("agent_id"),
                verified: value.get("verified").and_then(Value::as_bool).unwrap_or(false),
            },
            "JOINED" => ServerFrame::Joined { channel: string("channel") },
            "MSG" => match value.get("content").and_then(Value::as_str) {
                Some(content) => ServerFrame::Msg(ChatMessage {
                    from: string("from"),
                    from_name: text_of("from_name"),
                    to: string("to"),
                    content: content.to_owned(),
                    msg_id: text_of("msg_id"),
                    in_reply_to: text_of("in_reply_to"),
                    replay: value.get("replay").and_then(Value::as_bool).unwrap_or(false),
                }),
                None => ServerFrame::Other("MSG".into()),
            },
            "AGENT_JOINED" => ServerFrame::AgentJoined { channel: string("channel"), agent: string("agent") },
            "ERROR" => ServerFrame::Error { code: string("code"), message: string("message") },
            "PONG" => ServerFrame::Pong,
            "SESSION_DISPLACED" => ServerFrame::SessionDisplaced { reason: string("reason") },
            other => ServerFrame::Other(other.to_owned()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_relayed_message_is_read_with_its_reply_and_replay_marks() {
        let text = r##"{"type":"MSG","ts":1,"from":"@0123456789abcdef","from_name":"a","to":"#review","content":"{\"type\":\"REVIEW\"}","msg_id":"1-x","verified":false,"in_reply_to":"0-y","replay":true}"##;
        let Some(ServerFrame::Msg(message)) = ServerFrame::parse(text) else { panic!("not a MSG") };
        assert_eq!(message.content, r#"{"type":"REVIEW"}"#);
        assert_eq!((message.msg_id.as_deref(), message.in_reply_to.as_deref()), (Some("1-x"), Some("0-y")));
        assert!(message.replay);
        assert_eq!(ServerFrame::parse("not json"), None);
        assert_eq!(
            ServerFrame::parse(r#"{"type":"MSG","content":{}}"#),
            Some(ServerFrame::Other("MSG".into()))
        );
    }

    #[test]
    fn a_reply_is_sent_only_when_there_is_one() {
        let frame: Value = serde_json::from_str(&msg("#review", "x", Some("7"))).unwrap();
        assert_eq!(frame["in_reply_to"], "7");
        let frame: Value = serde_json::from_str(&msg("#review", "x", None)).unwrap();
        assert!(frame.get("in_reply_to").is_none());
    }
}
