//! JSON <-> typed messages, with validation that names the offending field.

use crate::identity::AgentId;
use crate::message::{
    Comment, Content, LeaderboardEntry, LeaderboardQuery, LeaderboardResult, Message, MessageId, MessageType,
    OutcomeContent, REVIEW_CHANNEL, RequestContent, ReviewContent, Verdict,
};
use serde_json::{Map, Value, json};

/// Largest integer JSON carries exactly (RFC 8785 numbers are IEEE 754 doubles).
const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;

/// A field that is missing, mistyped or out of range.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{field}`: {reason}")]
#[non_exhaustive]
pub struct FieldError {
    /// Dotted path of the field, e.g. `content.comments[1].line`.
    pub field: String,
    /// What is wrong, in words a user can act on.
    pub reason: String,
}

fn fail<T>(field: impl Into<String>, reason: impl Into<String>) -> Result<T, FieldError> {
    Err(FieldError { field: field.into(), reason: reason.into() })
}

/// Reads the fields of one JSON object, remembering which were read so that unknown ones
/// can be reported.
struct Fields<'a> {
    path: String,
    object: &'a Map<String, Value>,
    read: Vec<&'static str>,
}

impl<'a> Fields<'a> {
    fn new(path: &str, value: &'a Value) -> Result<Fields<'a>, FieldError> {
        match value {
            Value::Object(object) => Ok(Fields { path: path.to_owned(), object, read: Vec::new() }),
            other => fail(display_path(path), format!("must be an object, found {}", kind(other))),
        }
    }

    fn path(&self, name: &str) -> String {
        if self.path.is_empty() { name.to_owned() } else { format!("{}.{name}", self.path) }
    }

    fn optional(&mut self, name: &'static str) -> Option<&'a Value> {
        self.read.push(name);
        self.object.get(name).filter(|value| !value.is_null())
    }

    fn required(&mut self, name: &'static str) -> Result<&'a Value, FieldError> {
        match self.optional(name) {
            Some(value) => Ok(value),
            None => fail(self.path(name), "missing required field"),
        }
    }

    fn string(&mut self, name: &'static str) -> Result<&'a str, FieldError> {
        let value = self.required(name)?;
        self.as_text(name, value)
    }

    fn text(&mut self, name: &'static str) -> Result<String, FieldError> {
        let text = self.string(name)?;
        if text.trim().is_empty() {
            return fail(self.path(name), "must not be empty");
        }
        Ok(text.to_owned())
    }

    fn optional_text(&mut self, name: &'static str) -> Result<Option<String>, FieldError> {
        match self.optional(name) {
            None => Ok(None),
            Some(value) => self.as_text(name, value).map(|text| Some(text.to_owned())),
        }
    }

    fn as_text(&self, name: &str, value: &'a Value) -> Result<&'a str, FieldError> {
        value
            .as_str()
            .map_or_else(|| fail(self.path(name), format!("must be a string, found {}", kind(value))), Ok)
    }

    fn boolean(&mut self, name: &'static str) -> Result<bool, FieldError> {
        let value = self.required(name)?;
        value.as_bool().map_or_else(
            || fail(self.path(name), format!("must be true or false, found {}", kind(value))),
            Ok,
        )
    }

    fn positive(&mut self, name: &'static str, value: &Value) -> Result<u64, FieldError> {
        match value.as_u64() {
            Some(0) => fail(self.path(name), "must be 1 or more, found 0"),
            Some(n) if n <= MAX_SAFE_INTEGER => Ok(n),
            _ => fail(self.path(name), format!("must be a positive integer, found {value}")),
        }
    }

    fn message_id(&mut self, name: &'static str) -> Result<MessageId, FieldError> {
        let text = self.string(name)?;
        MessageId::parse(text).map_or_else(
            || {
                fail(
                    self.path(name),
                    format!("must be a message id (64 lowercase hex digits), found {text:?}"),
                )
            },
            Ok,
        )
    }

    /// Errors on the first field that was never read.
    fn deny_unknown(&self) -> Result<(), FieldError> {
        match self.object.keys().find(|key| !self.read.contains(&key.as_str())) {
            Some(key) => {
                fail(self.path(key), format!("unknown field; expected one of {}", self.read.join(", ")))
            }
            None => Ok(()),
        }
    }

    /// The fields never read, for objects that allow extensions.
    fn rest(&self) -> Map<String, Value> {
        self.object
            .iter()
            .filter(|(key, _)| !self.read.contains(&key.as_str()))
            .map(|(key, value)| (key.clone(), value.clone()))
            .collect()
    }
}

fn display_path(path: &str) -> String {
    if path.is_empty() { "(message)".to_owned() } else { path.to_owned() }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The envelope fields every signed message carries besides its typed body.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Envelope {
    /// The validated message.
    pub(crate) message: Message,
    /// `pubkey`, still base64 (decoded by the signature check).
    pub(crate) pubkey: String,
    /// `sig`, still base64; `None` for a message not yet signed.
    pub(crate) sig: Option<String>,
}

/// Validates a parsed message: every field present, typed and in range, no unknown fields.
pub(crate) fn decode(value: &Value) -> Result<Envelope, FieldError> {
    let mut fields = Fields::new("", value)?;
    let type_name = fields.string("type")?;
    let Some(message_type) = MessageType::from_wire(type_name) else {
        let known: Vec<&str> = MessageType::ALL.iter().map(|kind| kind.as_str()).collect();
        return fail(
            "type",
            format!("unknown message type {type_name:?}; expected one of {}", known.join(", ")),
        );
    };
    let from_text = fields.string("from")?;
    let from = AgentId::parse(from_text).map_or_else(
        || fail("from", format!("must be an agent id (@ and 16 lowercase hex digits), found {from_text:?}")),
        Ok,
    )?;
    let to = fields.text("to")?;
    if matches!(message_type, MessageType::ReviewRequest | MessageType::Review) && to != REVIEW_CHANNEL {
        return fail("to", format!("a {message_type} must be sent to {REVIEW_CHANNEL:?}, found {to:?}"));
    }
    let ts_value = fields.required("ts")?;
    let ts = match ts_value.as_u64() {
        Some(ts) if ts <= MAX_SAFE_INTEGER => ts,
        _ => {
            return fail(
                "ts",
                format!("must be Unix time in whole seconds (an integer >= 0), found {ts_value}"),
            );
        }
    };
    let pubkey = fields.string("pubkey")?.to_owned();
    let sig = match fields.optional("sig") {
        None => None,
        Some(value) => Some(fields.as_text("sig", value)?.to_owned()),
    };
    let content_value = fields.required("content")?;
    fields.deny_unknown()?;
    let content = decode_content(message_type, content_value)?;
    if let Content::LeaderboardResult(_) = &content
        && AgentId::parse(&to).is_none()
    {
        return fail(
            "to",
            format!("a REVIEW_LEADERBOARD_RESULT is sent to the asking agent's id, found {to:?}"),
        );
    }
    Ok(Envelope { message: Message { from, to, ts, content }, pubkey, sig })
}

fn decode_content(message_type: MessageType, value: &Value) -> Result<Content, FieldError> {
    let mut fields = Fields::new("content", value)?;
    let content = match message_type {
        MessageType::ReviewRequest => {
            let repo = fields.text("repo")?;
            let change = fields.text("change")?;
            return Ok(Content::Request(RequestContent { repo, change, extra: fields.rest() }));
        }
        MessageType::Review => {
            let request_id = fields.message_id("request_id")?;
            let verdict_text = fields.string("verdict")?;
            let verdict = Verdict::from_wire(verdict_text).map_or_else(
                || {
                    fail(
                        "content.verdict",
                        format!(
                            "unknown verdict {verdict_text:?}; expected APPROVE, REQUEST_CHANGES or COMMENT"
                        ),
                    )
                },
                Ok,
            )?;
            let comments = match fields.optional("comments") {
                None => Vec::new(),
                Some(Value::Array(items)) => items
                    .iter()
                    .enumerate()
                    .map(|(index, item)| decode_comment(index, item))
                    .collect::<Result<_, _>>()?,
                Some(other) => {
                    return fail("content.comments", format!("must be an array, found {}", kind(other)));
                }
            };
            let summary = fields.optional_text("summary")?;
            Content::Review(ReviewContent { request_id, verdict, comments, summary })
        }
        MessageType::ReviewOutcome => {
            let request_id = fields.message_id("request_id")?;
            let merged = fields.boolean("merged")?;
            let incident = fields.boolean("incident")?;
            let incident_details = fields.optional_text("incident_details")?;
            match (incident, &incident_details) {
                (true, None) => return fail("content.incident_details", "required when `incident` is true"),
                (true, Some(details)) if details.trim().is_empty() => {
                    return fail("content.incident_details", "must not be empty when `incident` is true");
                }
                _ => {}
            }
            Content::Outcome(OutcomeContent { request_id, merged, incident, incident_details })
        }
        MessageType::ReviewLeaderboard => {
            let limit = match fields.optional("limit") {
                None => None,
                Some(value) => {
                    let limit = fields.positive("limit", value)?;
                    Some(
                        u32::try_from(limit)
                            .map_or_else(|_| fail("content.limit", "must be at most 4294967295"), Ok)?,
                    )
                }
            };
            Content::Leaderboard(LeaderboardQuery { limit })
        }
        MessageType::ReviewLeaderboardResult => {
            let in_reply_to = fields.message_id("in_reply_to")?;
            let entries_value = fields.required("entries")?;
            let entries = serde_json::from_value::<Vec<LeaderboardEntry>>(entries_value.clone())
                .map_or_else(|error| fail("content.entries", error.to_string()), Ok)?;
            Content::LeaderboardResult(LeaderboardResult { in_reply_to, entries })
        }
    };
    fields.deny_unknown()?;
    Ok(content)
}

fn decode_comment(index: usize, value: &Value) -> Result<Comment, FieldError> {
    let path = format!("content.comments[{index}]");
    let mut fields = Fields::new(&path, value)?;
    let file = fields.text("file")?;
    let line_value = fields.required("line")?;
    let line = match line_value.as_i64() {
        Some(line) if line <= 0 => {
            return fail(format!("{path}.line"), format!("must be 1 or more, found {line}"));
        }
        _ => fields.positive("line", line_value)?,
    };
    let body = fields.string("body")?;
    if body.trim().is_empty() {
        return fail(format!("{path}.body"), "must not be empty: say what is wrong");
    }
    let body = body.to_owned();
    fields.deny_unknown()?;
    Ok(Comment { file, line, body })
}

/// The JSON of `message` without `pubkey` and `sig` (what a sender writes before signing).
pub(crate) fn encode(message: &Message) -> Value {
    let content = match &message.content {
        Content::Request(request) => {
            let mut object = request.extra.clone();
            object.insert("repo".into(), json!(request.repo));
            object.insert("change".into(), json!(request.change));
            Value::Object(object)
        }
        Content::Review(review) => {
            let mut object = Map::new();
            object.insert("request_id".into(), json!(review.request_id));
            object.insert("verdict".into(), json!(review.verdict));
            object.insert("comments".into(), json!(review.comments));
            if let Some(summary) = &review.summary {
                object.insert("summary".into(), json!(summary));
            }
            Value::Object(object)
        }
        Content::Outcome(outcome) => {
            let mut object = Map::new();
            object.insert("request_id".into(), json!(outcome.request_id));
            object.insert("merged".into(), json!(outcome.merged));
            object.insert("incident".into(), json!(outcome.incident));
            if let Some(details) = &outcome.incident_details {
                object.insert("incident_details".into(), json!(details));
            }
            Value::Object(object)
        }
        Content::Leaderboard(query) => match query.limit {
            Some(limit) => json!({ "limit": limit }),
            None => json!({}),
        },
        Content::LeaderboardResult(result) => {
            json!({ "in_reply_to": result.in_reply_to, "entries": result.entries })
        }
    };
    json!({
        "type": message.message_type().as_str(),
        "from": message.from,
        "to": message.to,
        "ts": message.ts,
        "content": content,
    })
}
