//! The review protocol's messages as typed values; their formats and rules are in
//! docs/reputation.md, section 2.

use crate::identity::AgentId;
use crate::link::CalibrationLink;
use crate::scope::Outcomes;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::fmt;

/// The channel that review requests and reviews are addressed to.
pub const REVIEW_CHANNEL: &str = "#review";

/// A message id: lowercase hex SHA-256 of the canonical signed message.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct MessageId(pub(crate) String);

impl MessageId {
    /// Accepts 64 lowercase hex digits.
    pub fn parse(text: &str) -> Option<MessageId> {
        let well_formed =
            text.len() == 64 && text.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        well_formed.then(|| MessageId(text.to_owned()))
    }

    /// The 64 hex digits.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The id of the message whose RFC 8785 canonical text is `canonical`: its SHA-256.
    pub fn of_canonical(canonical: &str) -> MessageId {
        MessageId(crate::canonical::sha256_hex(canonical.as_bytes()))
    }

    /// The 32 bytes the hex digits spell (how the ledger stores ids: half the index pages).
    pub fn to_bytes(&self) -> [u8; 32] {
        let mut bytes = [0u8; 32];
        for (byte, pair) in bytes.iter_mut().zip(self.0.as_bytes().chunks_exact(2)) {
            *byte = (hex_value(pair[0]) << 4) | hex_value(pair[1]);
        }
        bytes
    }

    /// The id whose bytes are `bytes`; `None` unless there are exactly 32.
    pub fn from_bytes(bytes: &[u8]) -> Option<MessageId> {
        (bytes.len() == 32).then(|| MessageId::from_stored_bytes(bytes))
    }

    /// The bytes a ledger stored as an id, in hex, however many there are: what a refusal
    /// names as the stored id (a damaged row shows as it is stored; [`MessageId::from_bytes`]
    /// refuses it).
    pub fn from_stored_bytes(bytes: &[u8]) -> MessageId {
        MessageId(crate::canonical::hex(bytes))
    }
}

/// The value of one lowercase hex digit (a `MessageId` holds nothing else).
fn hex_value(digit: u8) -> u8 {
    match digit {
        b'0'..=b'9' => digit - b'0',
        _ => digit.wrapping_sub(b'a').wrapping_add(10) & 0x0f,
    }
}

impl fmt::Display for MessageId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The `type` of a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MessageType {
    /// Asks `#review` to review a change.
    ReviewRequest,
    /// A reviewer's verdict on a request.
    Review,
    /// What happened to the change: merged, and whether it caused an incident.
    ReviewOutcome,
    /// Asks the ledger for its leaderboard.
    ReviewLeaderboard,
    /// The ledger's answer to `REVIEW_LEADERBOARD`, signed by the ledger.
    ReviewLeaderboardResult,
}

impl MessageType {
    /// Every type, in protocol order.
    pub const ALL: [MessageType; 5] = [
        MessageType::ReviewRequest,
        MessageType::Review,
        MessageType::ReviewOutcome,
        MessageType::ReviewLeaderboard,
        MessageType::ReviewLeaderboardResult,
    ];

    /// The wire name, e.g. `REVIEW_REQUEST`.
    pub fn as_str(self) -> &'static str {
        match self {
            MessageType::ReviewRequest => "REVIEW_REQUEST",
            MessageType::Review => "REVIEW",
            MessageType::ReviewOutcome => "REVIEW_OUTCOME",
            MessageType::ReviewLeaderboard => "REVIEW_LEADERBOARD",
            MessageType::ReviewLeaderboardResult => "REVIEW_LEADERBOARD_RESULT",
        }
    }

    /// The type with this wire name.
    pub fn from_wire(name: &str) -> Option<MessageType> {
        MessageType::ALL.into_iter().find(|kind| kind.as_str() == name)
    }
}

impl fmt::Display for MessageType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A reviewer's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ReviewVerdict {
    /// The change is fine to merge.
    Approve,
    /// The change must not be merged as it is.
    RequestChanges,
    /// Remarks without a decision (scores 0, counts as a review).
    Comment,
}

impl ReviewVerdict {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            ReviewVerdict::Approve => "APPROVE",
            ReviewVerdict::RequestChanges => "REQUEST_CHANGES",
            ReviewVerdict::Comment => "COMMENT",
        }
    }

    /// The verdict with this wire name.
    pub fn from_wire(name: &str) -> Option<ReviewVerdict> {
        [ReviewVerdict::Approve, ReviewVerdict::RequestChanges, ReviewVerdict::Comment]
            .into_iter()
            .find(|v| v.as_str() == name)
    }
}

/// One review comment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Comment {
    /// Path of the file commented on.
    pub file: String,
    /// 1-based line.
    pub line: u64,
    /// The comment (not blank).
    pub body: String,
}

/// `REVIEW_REQUEST` content: what to review. Every field is optional, but a request names
/// its change with at least one of `title`, `diff_url`, `diff_summary` and `change`; fields
/// beyond these are kept and signed.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RequestContent {
    /// A one-line title, e.g. `Fix null pointer in auth handler`.
    pub title: Option<String>,
    /// Where the diff is, e.g. a pull request's URL.
    pub diff_url: Option<String>,
    /// What the change does, in a few words (for reviewers who cannot open the URL).
    pub diff_summary: Option<String>,
    /// The paths the change touches.
    pub files_changed: Option<Vec<String>>,
    /// Lines added by the change.
    pub lines_added: Option<u64>,
    /// Lines removed by the change.
    pub lines_removed: Option<u64>,
    /// The repository, e.g. `github.com/acme/api` (a revcal addition).
    pub repo: Option<String>,
    /// The change: a pull request, a commit range, a patch name (a revcal addition).
    pub change: Option<String>,
    /// Any other fields the requester sent.
    pub extra: Map<String, Value>,
}

impl RequestContent {
    /// How receipts name the change: `change`, else `title`, else `diff_url`, else
    /// `diff_summary` (a request has at least one of them).
    pub fn subject(&self) -> Option<&str> {
        [&self.change, &self.title, &self.diff_url, &self.diff_summary]
            .into_iter()
            .find_map(|field| field.as_deref())
    }
}

/// `REVIEW` content.
#[derive(Debug, Clone, PartialEq)]
pub struct ReviewContent {
    /// The id of the `REVIEW_REQUEST` reviewed.
    pub request_id: MessageId,
    /// The verdict.
    pub verdict: ReviewVerdict,
    /// Line comments (may be empty).
    pub comments: Vec<Comment>,
    /// An optional overall remark.
    pub summary: Option<String>,
    /// The reviewer's name as it wants it shown beside its agent id (a revcal addition): the
    /// ledger keeps the latest name each agent's own signed reviews give, so no one names
    /// another agent. See [`name_problem`] for what a name may hold.
    pub name: Option<String>,
}

/// The longest name a review may give its reviewer, in characters.
pub const MAX_NAME_CHARS: usize = 64;

/// Characters a name may not hold beyond the control characters: those that reorder or
/// hide text (bidirectional overrides and isolates, zero-width characters), which would let
/// a name show as something else.
fn is_invisible(c: char) -> bool {
    matches!(c, '\u{061C}' | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{2069}' | '\u{FEFF}')
}

/// Why `name` cannot be a reviewer's name; `None` when it can: not blank, at most
/// [`MAX_NAME_CHARS`] characters, no control or invisible formatting character, no leading
/// or trailing space.
pub fn name_problem(name: &str) -> Option<String> {
    if name.trim().is_empty() {
        Some("must not be blank".to_owned())
    } else if name.chars().count() > MAX_NAME_CHARS {
        Some(format!("must be at most {MAX_NAME_CHARS} characters, found {}", name.chars().count()))
    } else if name.chars().any(|c| c.is_control() || is_invisible(c)) {
        Some("must not contain control characters or invisible formatting characters".to_owned())
    } else if name.trim() != name {
        Some("must not start or end with a space".to_owned())
    } else {
        None
    }
}

/// `text` made a name that [`name_problem`] accepts: control and invisible characters
/// become spaces, runs of white space one space, the ends trimmed, and the whole cut to
/// [`MAX_NAME_CHARS`] characters; `None` when nothing is left. For names taken from
/// elsewhere (a calibration's reviewer command) and for showing a stored name.
pub fn clean_name(text: &str) -> Option<String> {
    let spaced: String =
        text.chars().map(|c| if c.is_control() || is_invisible(c) { ' ' } else { c }).collect();
    let joined = spaced.split_whitespace().collect::<Vec<_>>().join(" ");
    let cut: String = joined.chars().take(MAX_NAME_CHARS).collect();
    let cut = cut.trim_end().to_owned();
    (!cut.is_empty()).then_some(cut)
}

/// `REVIEW_OUTCOME` content.
#[derive(Debug, Clone, PartialEq)]
pub struct OutcomeContent {
    /// The id of the `REVIEW_REQUEST` this outcome closes.
    pub request_id: MessageId,
    /// Whether the change was merged (recorded; scoring looks at `incident` only).
    pub merged: bool,
    /// Whether the change caused an incident.
    pub incident: bool,
    /// What happened, required when `incident` is true.
    pub incident_details: Option<String>,
    /// The calibration round this outcome reports (revcal's addition: docs/reputation.md,
    /// "Verified outcomes"); `None` for an outcome reported by the requester.
    pub calibration: Option<CalibrationLink>,
}

/// `REVIEW_LEADERBOARD` content.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LeaderboardQuery {
    /// At most this many entries (the ledger's default when absent).
    pub limit: Option<u32>,
    /// Which outcomes the standings count (a revcal addition; all when absent).
    pub outcomes: Option<Outcomes>,
    /// One bug category's standings, from verified outcomes (a revcal addition: RFC-001's
    /// "domain badges").
    pub domain: Option<String>,
}

/// One leaderboard row: `{agent, elo, reviews, accuracy}` and revcal's `rank`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LeaderboardEntry {
    /// 1-based position (a revcal addition; a row without it is ranked by its position).
    pub rank: u32,
    /// The reviewer.
    pub agent: AgentId,
    /// Current rating.
    pub elo: f64,
    /// Scored reviews (COMMENT included).
    pub reviews: u64,
    /// Correct decisive verdicts / decisive verdicts; `None` before the first decisive one.
    pub accuracy: Option<f64>,
    /// The name the reviewer's own reviews gave it, when one did (a revcal addition).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// `REVIEW_LEADERBOARD_RESULT` content.
#[derive(Debug, Clone, PartialEq)]
pub struct LeaderboardResult {
    /// The rows, best first.
    pub leaderboard: Vec<LeaderboardEntry>,
    /// The id of the `REVIEW_LEADERBOARD` answered (a revcal addition: the SHA-256 of the
    /// query's canonical form, signed or not).
    pub in_reply_to: Option<MessageId>,
    /// The outcomes counted, when the query asked for other than all (a revcal addition).
    pub outcomes: Option<Outcomes>,
    /// The domain, when the query named one (a revcal addition).
    pub domain: Option<String>,
}

/// The typed content of a message.
#[derive(Debug, Clone, PartialEq)]
pub enum Content {
    /// `REVIEW_REQUEST`.
    Request(RequestContent),
    /// `REVIEW`.
    Review(ReviewContent),
    /// `REVIEW_OUTCOME`.
    Outcome(OutcomeContent),
    /// `REVIEW_LEADERBOARD`.
    Leaderboard(LeaderboardQuery),
    /// `REVIEW_LEADERBOARD_RESULT`.
    LeaderboardResult(LeaderboardResult),
}

impl Content {
    /// The message type this content belongs to.
    pub fn message_type(&self) -> MessageType {
        match self {
            Content::Request(_) => MessageType::ReviewRequest,
            Content::Review(_) => MessageType::Review,
            Content::Outcome(_) => MessageType::ReviewOutcome,
            Content::Leaderboard(_) => MessageType::ReviewLeaderboard,
            Content::LeaderboardResult(_) => MessageType::ReviewLeaderboardResult,
        }
    }
}

/// A validated message (its signature is checked separately, see [`crate::SignedMessage`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    /// The sender: the id of `pubkey`.
    pub from: AgentId,
    /// The addressee: `#review` for requests and reviews, otherwise a channel or an agent id;
    /// empty for a `REVIEW_LEADERBOARD` or `REVIEW_LEADERBOARD_RESULT` that names none.
    pub to: String,
    /// Unix time as the sender wrote it: milliseconds, or seconds for a value below
    /// [`MILLISECONDS_FROM`] ([`Message::ts_millis`] tells them apart).
    pub ts: u64,
    /// The typed content; its variant is the message's `type`.
    pub content: Content,
}

impl Message {
    /// The message's `type`.
    pub fn message_type(&self) -> MessageType {
        self.content.message_type()
    }

    /// `ts` in milliseconds since the Unix epoch, whichever unit the sender wrote.
    pub fn ts_millis(&self) -> u64 {
        ts_millis(self.ts)
    }
}

/// The smallest `ts` read as milliseconds: 10^11, which as milliseconds is 1973-03-03 and
/// as seconds the year 5138, so no time a sender means is ambiguous.
pub const MILLISECONDS_FROM: u64 = 100_000_000_000;

/// A `ts` as written (seconds below [`MILLISECONDS_FROM`], milliseconds from it) in
/// milliseconds since the Unix epoch.
pub fn ts_millis(ts: u64) -> u64 {
    if ts < MILLISECONDS_FROM { ts.saturating_mul(1000) } else { ts }
}

#[cfg(test)]
mod tests {
    use super::MessageId;

    #[test]
    fn an_id_round_trips_through_its_32_bytes() {
        let text = "00ff10a9b8c7d6e5f4031224354657687980abcdef0123456789fedcba98765f";
        let id = MessageId::parse(text).unwrap();
        let bytes = id.to_bytes();
        assert_eq!(&bytes[..4], &[0x00, 0xff, 0x10, 0xa9]);
        assert_eq!(bytes[31], 0x5f);
        assert_eq!(MessageId::from_bytes(&bytes), Some(id));
        assert_eq!(MessageId::from_bytes(&bytes[..31]), None);
    }
}
