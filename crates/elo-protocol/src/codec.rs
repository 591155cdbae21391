//! JSON <-> typed messages, with validation that names the offending field.

use crate::identity::AgentId;
use crate::link::{
    CalibrationLink, LinkedPlant, MAX_LINK_DOMAINS, MAX_PLANT_PATH_BYTES, MAX_ROUND_PLANTS, category_problem,
    is_sha256_hex,
};
use crate::message::{
    Comment, Content, LeaderboardEntry, LeaderboardQuery, LeaderboardResult, Message, MessageId, MessageType,
    OutcomeContent, REVIEW_CHANNEL, RequestContent, ReviewContent, ReviewVerdict, name_problem,
};
use crate::scope::{Outcomes, Scope};
use revcal_record::PlantStatus;
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

    /// An optional string that, when present, is not blank.
    fn optional_nonblank(&mut self, name: &'static str) -> Result<Option<String>, FieldError> {
        match self.optional_text(name)? {
            Some(text) if text.trim().is_empty() => fail(self.path(name), "must not be empty when present"),
            other => Ok(other),
        }
    }

    /// An optional integer from 0 to 2^53-1.
    fn optional_count(&mut self, name: &'static str) -> Result<Option<u64>, FieldError> {
        match self.optional(name) {
            None => Ok(None),
            Some(value) => match value.as_u64() {
                Some(n) if n <= MAX_SAFE_INTEGER => Ok(Some(n)),
                _ => fail(self.path(name), format!("must be an integer >= 0, found {value}")),
            },
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
pub struct Envelope {
    /// The validated message.
    pub message: Message,
    /// `pubkey`, still base64 (decoded by the signature check).
    pub pubkey: String,
    /// `sig`, still base64; `None` for a message not yet signed.
    pub sig: Option<String>,
}

/// Validates a parsed message: every field present, typed and in range, no unknown fields.
pub fn decode_envelope(value: &Value) -> Result<Envelope, FieldError> {
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
    // The protocol's own examples of a query and its result name no addressee: the query
    // goes to whichever ledger the sender is connected to, the result back to the asker.
    let leaderboard =
        matches!(message_type, MessageType::ReviewLeaderboard | MessageType::ReviewLeaderboardResult);
    let to =
        if leaderboard && fields.optional("to").is_none() { String::new() } else { fields.text("to")? };
    if matches!(message_type, MessageType::ReviewRequest | MessageType::Review) && to != REVIEW_CHANNEL {
        return fail("to", format!("a {message_type} must be sent to {REVIEW_CHANNEL:?}, found {to:?}"));
    }
    let ts = decode_ts(fields.required("ts")?)?;
    let pubkey = fields.string("pubkey")?.to_owned();
    let sig = match fields.optional("sig") {
        None => None,
        Some(value) => Some(fields.as_text("sig", value)?.to_owned()),
    };
    let empty = Value::Object(Map::new());
    let content_value = match fields.optional("content") {
        None if message_type == MessageType::ReviewLeaderboard => &empty,
        _ => fields.required("content")?,
    };
    fields.deny_unknown()?;
    let content = decode_content(message_type, content_value)?;
    if let Content::LeaderboardResult(_) = &content
        && AgentId::parse(&to).is_none()
        && !to.is_empty()
        && to != REVIEW_CHANNEL
    {
        return fail(
            "to",
            format!(
                "a REVIEW_LEADERBOARD_RESULT is sent to the asking agent's id, or to {REVIEW_CHANNEL:?} \
                 for a query that names none; found {to:?}"
            ),
        );
    }
    Ok(Envelope { message: Message { from, to, ts, content }, pubkey, sig })
}

/// `ts`: Unix time in milliseconds, or in seconds (told apart by size, see
/// [`crate::message::ts_millis`]); stored as written.
fn decode_ts(value: &Value) -> Result<u64, FieldError> {
    match value.as_u64() {
        Some(ts) if ts <= MAX_SAFE_INTEGER => Ok(ts),
        _ => fail(
            "ts",
            format!(
                "must be Unix time as an integer >= 0 (milliseconds, or seconds below 100000000000), found {value}"
            ),
        ),
    }
}

/// A `REVIEW_LEADERBOARD` sent without `sig` and `pubkey`: anyone may ask for the
/// leaderboard, so the query needs no signature. Every field but `type` is optional.
#[derive(Debug, Clone, PartialEq)]
pub struct AnonymousQuery {
    /// The query's content (`{}` when absent).
    pub query: LeaderboardQuery,
    /// The asker as it names itself (unverified; the answer is addressed to it).
    pub from: Option<AgentId>,
}

/// `Some` when `value` is an unsigned `REVIEW_LEADERBOARD` (no `sig`, no `pubkey`): the
/// query, or what is wrong with it. `None` for anything else, which [`decode_envelope`] checks.
pub fn anonymous_query(value: &Value) -> Option<Result<AnonymousQuery, FieldError>> {
    let object = value.as_object()?;
    if object.get("type").and_then(Value::as_str) != Some(MessageType::ReviewLeaderboard.as_str())
        || object.contains_key("sig")
        || object.contains_key("pubkey")
    {
        return None;
    }
    Some(decode_anonymous_query(value))
}

fn decode_anonymous_query(value: &Value) -> Result<AnonymousQuery, FieldError> {
    let mut fields = Fields::new("", value)?;
    fields.string("type")?;
    let from = match fields.optional("from") {
        None => None,
        Some(value) => {
            let text = fields.as_text("from", value)?;
            Some(AgentId::parse(text).map_or_else(
                || {
                    fail(
                        "from",
                        format!("must be an agent id (@ and 16 lowercase hex digits), found {text:?}"),
                    )
                },
                Ok,
            )?)
        }
    };
    fields.optional_text("to")?;
    if let Some(ts) = fields.optional("ts") {
        decode_ts(ts)?;
    }
    let content = fields.optional("content").cloned().unwrap_or_else(|| json!({}));
    fields.deny_unknown()?;
    let query = match decode_content(MessageType::ReviewLeaderboard, &content)? {
        Content::Leaderboard(query) => query,
        _ => LeaderboardQuery::default(),
    };
    Ok(AnonymousQuery { query, from })
}

fn decode_content(message_type: MessageType, value: &Value) -> Result<Content, FieldError> {
    let mut fields = Fields::new("content", value)?;
    let content = match message_type {
        MessageType::ReviewRequest => {
            let request = RequestContent {
                title: fields.optional_nonblank("title")?,
                diff_url: fields.optional_nonblank("diff_url")?,
                diff_summary: fields.optional_nonblank("diff_summary")?,
                files_changed: decode_files(fields.optional("files_changed"))?,
                lines_added: fields.optional_count("lines_added")?,
                lines_removed: fields.optional_count("lines_removed")?,
                repo: fields.optional_nonblank("repo")?,
                change: fields.optional_nonblank("change")?,
                extra: Map::new(),
            };
            if request.subject().is_none() {
                return fail(
                    "content.title",
                    "missing: a request names its change with at least one of `title`, `diff_url`, \
                     `diff_summary` or `change`",
                );
            }
            return Ok(Content::Request(RequestContent { extra: fields.rest(), ..request }));
        }
        MessageType::Review => {
            let request_id = fields.message_id("request_id")?;
            let verdict_text = fields.string("verdict")?;
            let verdict = ReviewVerdict::from_wire(verdict_text).map_or_else(
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
            let name = fields.optional_text("name")?;
            if let Some(problem) = name.as_deref().and_then(name_problem) {
                return fail("content.name", problem);
            }
            Content::Review(ReviewContent { request_id, verdict, comments, summary, name })
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
            let calibration = match fields.optional("calibration") {
                None => None,
                Some(value) => Some(decode_calibration(value, incident)?),
            };
            Content::Outcome(OutcomeContent { request_id, merged, incident, incident_details, calibration })
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
            let outcomes = decode_outcomes(&mut fields)?;
            let domain = decode_domain(&mut fields)?;
            if let Err(error) = Scope::of(outcomes, domain.as_deref()) {
                return fail("content.outcomes", error.to_string());
            }
            Content::Leaderboard(LeaderboardQuery { limit, outcomes, domain })
        }
        MessageType::ReviewLeaderboardResult => {
            let leaderboard = match fields.required("leaderboard")? {
                Value::Array(rows) => rows
                    .iter()
                    .enumerate()
                    .map(|(index, row)| decode_entry(index, row))
                    .collect::<Result<_, _>>()?,
                other => {
                    return fail("content.leaderboard", format!("must be an array, found {}", kind(other)));
                }
            };
            let in_reply_to = match fields.optional("in_reply_to") {
                None => None,
                Some(_) => Some(fields.message_id("in_reply_to")?),
            };
            let outcomes = decode_outcomes(&mut fields)?;
            let domain = decode_domain(&mut fields)?;
            Content::LeaderboardResult(LeaderboardResult { leaderboard, in_reply_to, outcomes, domain })
        }
    };
    fields.deny_unknown()?;
    Ok(content)
}

/// `files_changed`: an array of non-empty paths, when present.
fn decode_files(value: Option<&Value>) -> Result<Option<Vec<String>>, FieldError> {
    let Some(value) = value else { return Ok(None) };
    let Value::Array(items) = value else {
        return fail("content.files_changed", format!("must be an array of paths, found {}", kind(value)));
    };
    items
        .iter()
        .enumerate()
        .map(|(index, item)| match item.as_str() {
            Some(path) if !path.trim().is_empty() => Ok(path.to_owned()),
            Some(_) => fail(format!("content.files_changed[{index}]"), "must not be empty"),
            None => fail(
                format!("content.files_changed[{index}]"),
                format!("must be a string, found {}", kind(item)),
            ),
        })
        .collect::<Result<_, _>>()
        .map(Some)
}

/// One leaderboard row: `agent`, `elo`, `reviews`, `accuracy`, and an optional `rank`
/// (the row's position when absent).
fn decode_entry(index: usize, value: &Value) -> Result<LeaderboardEntry, FieldError> {
    let path = format!("content.leaderboard[{index}]");
    let mut fields = Fields::new(&path, value)?;
    let agent_text = fields.string("agent")?;
    let agent = AgentId::parse(agent_text).map_or_else(
        || fail(format!("{path}.agent"), format!("must be an agent id, found {agent_text:?}")),
        Ok,
    )?;
    let elo_value = fields.required("elo")?;
    let elo = elo_value.as_f64().map_or_else(
        || fail(format!("{path}.elo"), format!("must be a number, found {}", kind(elo_value))),
        Ok,
    )?;
    let reviews = fields
        .optional_count("reviews")?
        .map_or_else(|| fail(format!("{path}.reviews"), "missing required field"), Ok)?;
    let accuracy = match fields.optional("accuracy") {
        None => None,
        Some(value) => match value.as_f64() {
            Some(accuracy) if (0.0..=1.0).contains(&accuracy) => Some(accuracy),
            _ => {
                return fail(
                    format!("{path}.accuracy"),
                    format!("must be a number from 0 to 1 or null, found {value}"),
                );
            }
        },
    };
    let position = u32::try_from(index + 1).unwrap_or(u32::MAX);
    let rank = match fields.optional("rank") {
        None => position,
        Some(value) => {
            let rank = fields.positive("rank", value)?;
            u32::try_from(rank)
                .map_or_else(|_| fail(format!("{path}.rank"), "must be at most 4294967295"), Ok)?
        }
    };
    let name = fields.optional_text("name")?;
    if let Some(problem) = name.as_deref().and_then(name_problem) {
        return fail(format!("{path}.name"), problem);
    }
    fields.deny_unknown()?;
    Ok(LeaderboardEntry { rank, agent, elo, reviews, accuracy, name })
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
            let texts = [
                ("title", &request.title),
                ("diff_url", &request.diff_url),
                ("diff_summary", &request.diff_summary),
                ("repo", &request.repo),
                ("change", &request.change),
            ];
            for (name, text) in texts {
                if let Some(text) = text {
                    object.insert(name.into(), json!(text));
                }
            }
            if let Some(files) = &request.files_changed {
                object.insert("files_changed".into(), json!(files));
            }
            for (name, count) in
                [("lines_added", request.lines_added), ("lines_removed", request.lines_removed)]
            {
                if let Some(count) = count {
                    object.insert(name.into(), json!(count));
                }
            }
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
            if let Some(name) = &review.name {
                object.insert("name".into(), json!(name));
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
            if let Some(link) = &outcome.calibration {
                object.insert("calibration".into(), encode_calibration(link));
            }
            Value::Object(object)
        }
        Content::Leaderboard(query) => {
            let mut object = Map::new();
            if let Some(limit) = query.limit {
                object.insert("limit".into(), json!(limit));
            }
            encode_scope(&mut object, query.outcomes, query.domain.as_deref());
            Value::Object(object)
        }
        Content::LeaderboardResult(result) => {
            let mut object = Map::new();
            object.insert("leaderboard".into(), json!(result.leaderboard));
            if let Some(query) = &result.in_reply_to {
                object.insert("in_reply_to".into(), json!(query));
            }
            encode_scope(&mut object, result.outcomes, result.domain.as_deref());
            Value::Object(object)
        }
    };
    let mut value = json!({
        "type": message.message_type().as_str(),
        "from": message.from,
        "to": message.to,
        "ts": message.ts,
        "content": content,
    });
    // An empty `to` is a query that named no addressee: leave it out, as it came.
    if message.to.is_empty()
        && let Value::Object(object) = &mut value
    {
        object.remove("to");
    }
    value
}

/// `outcomes` of a leaderboard query or result: `all`, `verified` or `reported`.
fn decode_outcomes(fields: &mut Fields<'_>) -> Result<Option<Outcomes>, FieldError> {
    let Some(value) = fields.optional("outcomes") else { return Ok(None) };
    let text = fields.as_text("outcomes", value)?;
    Outcomes::from_wire(text).map(Some).map_or_else(
        || fail("content.outcomes", format!("must be \"all\", \"verified\" or \"reported\", found {text:?}")),
        Ok,
    )
}

/// `domain` of a leaderboard query or result: a bug category.
fn decode_domain(fields: &mut Fields<'_>) -> Result<Option<String>, FieldError> {
    let Some(value) = fields.optional("domain") else { return Ok(None) };
    let text = fields.as_text("domain", value)?;
    match category_problem(text) {
        Some(problem) => fail("content.domain", problem),
        None => Ok(Some(text.to_owned())),
    }
}

/// Writes `outcomes` and `domain` into a query's or result's content, each when present.
fn encode_scope(object: &mut Map<String, Value>, outcomes: Option<Outcomes>, domain: Option<&str>) {
    if let Some(outcomes) = outcomes {
        object.insert("outcomes".into(), json!(outcomes.as_str()));
    }
    if let Some(domain) = domain {
        object.insert("domain".into(), json!(domain));
    }
}

/// `content.calibration` of an outcome (docs/reputation.md, "Verified outcomes"): the
/// report's hash, the round and trial, the plants and the domains; `incident` must be true
/// exactly when the round carried a plant.
fn decode_calibration(value: &Value, incident: bool) -> Result<CalibrationLink, FieldError> {
    const PATH: &str = "content.calibration";
    let mut fields = Fields::new(PATH, value)?;
    let report_sha256 = fields.string("report_sha256")?;
    if !is_sha256_hex(report_sha256) {
        return fail(
            format!("{PATH}.report_sha256"),
            format!("must be a SHA-256 as 64 lowercase hex digits, found {report_sha256:?}"),
        );
    }
    let round_value = fields.required("round")?;
    let round = fields.positive("round", round_value)?;
    let trial_value = fields.required("trial")?;
    let trial = fields.positive("trial", trial_value)?;
    let entry = fields.optional_nonblank("entry")?;
    let reviewer = match fields.optional("agent") {
        None => None,
        Some(value) => {
            let text = value.as_str().unwrap_or_default();
            match AgentId::parse(text) {
                Some(agent) => Some(agent),
                None => return fail(format!("{PATH}.agent"), format!("must be an agent id, found {value}")),
            }
        }
    };
    let plants = match fields.required("plants")? {
        Value::Array(items) if items.len() > MAX_ROUND_PLANTS => {
            return fail(
                format!("{PATH}.plants"),
                format!("at most {MAX_ROUND_PLANTS} plants in one round, found {}", items.len()),
            );
        }
        Value::Array(items) => items
            .iter()
            .enumerate()
            .map(|(index, item)| decode_linked_plant(index, item))
            .collect::<Result<Vec<_>, _>>()?,
        other => return fail(format!("{PATH}.plants"), format!("must be an array, found {}", kind(other))),
    };
    let domains = match fields.required("domains")? {
        Value::Array(items) if items.len() > MAX_LINK_DOMAINS => {
            return fail(
                format!("{PATH}.domains"),
                format!("at most {MAX_LINK_DOMAINS} domains, found {}", items.len()),
            );
        }
        Value::Array(items) => items
            .iter()
            .enumerate()
            .map(|(index, item)| {
                let place = format!("{PATH}.domains[{index}]");
                let Some(text) = item.as_str() else {
                    return fail(place, format!("must be a string, found {}", kind(item)));
                };
                match category_problem(text) {
                    Some(problem) => fail(place, problem),
                    None => Ok(text.to_owned()),
                }
            })
            .collect::<Result<Vec<_>, _>>()?,
        other => return fail(format!("{PATH}.domains"), format!("must be an array, found {}", kind(other))),
    };
    fields.deny_unknown()?;
    if domains.windows(2).any(|pair| pair[0] >= pair[1]) {
        return fail(format!("{PATH}.domains"), "must be sorted and distinct");
    }
    if incident == plants.is_empty() {
        let reason = if incident {
            "a calibration outcome reports an incident only for a round that carried a plant, and this one lists none"
        } else {
            "a calibration round that carried a plant is an incident: `incident` must be true"
        };
        return fail(format!("{PATH}.plants"), reason);
    }
    // Statuses go with the reviewer they describe: every plant has one, or none does.
    let with_status = plants.iter().filter(|plant| plant.status.is_some()).count();
    if with_status > 0 && reviewer.is_none() {
        return fail(
            format!("{PATH}.agent"),
            "required when the plants carry a `status`: the reviewer they describe",
        );
    }
    if reviewer.is_some() && with_status < plants.len() {
        let index = plants.iter().position(|plant| plant.status.is_none()).unwrap_or(0);
        return fail(
            format!("{PATH}.plants[{index}].status"),
            "required with `agent`: every plant says whether that reviewer caught it (`caught` or `missed`)",
        );
    }
    if !plants.is_empty() && domains != CalibrationLink::categories_of(&plants) {
        return fail(
            format!("{PATH}.domains"),
            "a planted round counts in the categories of its plants: must be their sorted, distinct categories",
        );
    }
    Ok(CalibrationLink {
        report_sha256: report_sha256.to_owned(),
        round,
        trial,
        entry,
        plants,
        domains,
        reviewer,
    })
}

fn decode_linked_plant(index: usize, value: &Value) -> Result<LinkedPlant, FieldError> {
    let path = format!("content.calibration.plants[{index}]");
    let mut fields = Fields::new(&path, value)?;
    let file = fields.text("file")?;
    if file.len() > MAX_PLANT_PATH_BYTES {
        return fail(format!("{path}.file"), format!("must be at most {MAX_PLANT_PATH_BYTES} bytes"));
    }
    let line_value = fields.required("line")?;
    let line = fields.positive("line", line_value)?;
    let category = fields.string("category")?.to_owned();
    if let Some(problem) = category_problem(&category) {
        return fail(format!("{path}.category"), problem);
    }
    let status = match fields.optional("status") {
        None => None,
        Some(value) => match value.as_str().and_then(PlantStatus::from_wire) {
            Some(status) => Some(status),
            None => {
                return fail(
                    format!("{path}.status"),
                    format!("must be `caught` or `missed`, found {value}"),
                );
            }
        },
    };
    fields.deny_unknown()?;
    Ok(LinkedPlant { file, line, category, status })
}

fn encode_calibration(link: &CalibrationLink) -> Value {
    let mut object = Map::new();
    object.insert("report_sha256".into(), json!(link.report_sha256));
    object.insert("round".into(), json!(link.round));
    object.insert("trial".into(), json!(link.trial));
    if let Some(entry) = &link.entry {
        object.insert("entry".into(), json!(entry));
    }
    object.insert("plants".into(), json!(link.plants));
    object.insert("domains".into(), json!(link.domains));
    if let Some(reviewer) = &link.reviewer {
        object.insert("agent".into(), json!(reviewer));
    }
    Value::Object(object)
}
