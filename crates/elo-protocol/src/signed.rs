//! Signed messages: parse, check the signature and the sender, compute the id; and sign.

use crate::canonical::{JsonError, canonical_text, parse_strict};
use crate::codec::{self, FieldError};
use crate::identity::{AgentId, KeyError, Keypair, PublicKey, SignatureBytes};
use crate::message::{Message, MessageId};
use serde_json::Value;

/// Why a message was refused before it reached the ledger.
///
/// Each message is complete on its own (ingest reports one per line); the typed cause, where
/// there is one, is also the error's `source`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MessageError {
    /// Not JSON (or duplicate keys, or nested too deep).
    #[error("not valid JSON at line {line}, column {column}: {}", source.reason())]
    Json {
        /// 1-based line within the text parsed.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What the parser said.
        #[source]
        source: JsonError,
    },
    /// A field is missing, mistyped, out of range or unknown.
    #[error(transparent)]
    Field(#[from] FieldError),
    /// `pubkey` or `sig` cannot be decoded.
    #[error(transparent)]
    Key(#[from] KeyError),
    /// A message without `sig`.
    #[error("`sig`: missing; sign the message first")]
    Unsigned,
    /// A well-formed `REVIEW_LEADERBOARD` without `sig` and `pubkey`: a query anyone may
    /// send, which `Ledger::handle` answers; it is never stored.
    #[error("`sig`: an unsigned REVIEW_LEADERBOARD is a query to answer (`handle`), not a message to store")]
    UnsignedQuery,
    /// `from` is not the id of `pubkey`.
    #[error("`from`: {from} is not the id of `pubkey` (which is {expected})")]
    WrongSender {
        /// The id stated in `from`.
        from: AgentId,
        /// The id of the key.
        expected: AgentId,
    },
    /// The message is longer than [`MAX_MESSAGE_BYTES`]; it was not parsed.
    #[error("the message is {bytes} bytes, more than the limit of {} MiB", MAX_MESSAGE_BYTES >> 20)]
    TooLarge {
        /// The message's length in bytes.
        bytes: usize,
    },
    /// The signature does not verify over the canonical message.
    #[error("`sig`: the signature does not verify: the message was altered or signed with another key")]
    BadSignature,
}

impl MessageError {
    /// The field at fault, when there is one.
    pub fn field(&self) -> Option<String> {
        match self {
            MessageError::Json { .. } | MessageError::TooLarge { .. } => None,
            MessageError::Field(error) => Some(error.field.clone()),
            MessageError::Key(KeyError::Base64 { field, .. } | KeyError::Length { field, .. })
            | MessageError::Key(KeyError::BadPublicKey { field }) => Some((*field).to_owned()),
            MessageError::Key(_) => None,
            MessageError::Unsigned | MessageError::UnsignedQuery | MessageError::BadSignature => {
                Some("sig".to_owned())
            }
            MessageError::WrongSender { .. } => Some("from".to_owned()),
        }
    }
}

/// A message whose fields, sender and signature have been checked.
#[derive(Debug, Clone, PartialEq)]
pub struct SignedMessage {
    /// The typed message.
    pub message: Message,
    /// The sender's public key.
    pub pubkey: PublicKey,
    /// The signature over [`SignedMessage::signed_bytes`].
    pub sig: SignatureBytes,
    /// Lowercase hex SHA-256 of [`SignedMessage::canonical`].
    pub id: MessageId,
    canonical: String,
    signed_bytes: Vec<u8>,
}

/// The longest protocol message revcal reads, in bytes: 1 MiB. A longer line is refused
/// before it is parsed (RFC-001's messages are a few hundred bytes; a review's text rarely
/// passes a few kilobytes).
pub const MAX_MESSAGE_BYTES: usize = 1 << 20;

/// Refuses a text longer than [`MAX_MESSAGE_BYTES`].
pub fn check_message_size(text: &str) -> Result<(), MessageError> {
    if text.len() > MAX_MESSAGE_BYTES { Err(MessageError::TooLarge { bytes: text.len() }) } else { Ok(()) }
}

impl SignedMessage {
    /// Parses one message (one JSONL line) and checks everything about it that does not
    /// depend on the ledger: JSON, fields, `from` against `pubkey`, and the signature.
    pub fn parse(text: &str) -> Result<SignedMessage, MessageError> {
        SignedMessage::parse_with(text, &mut KeyCache::default())
    }

    /// As [`SignedMessage::parse`], reusing public keys already decoded in `keys` (decoding
    /// a key is a square root on the curve; a stream of messages has few distinct senders).
    pub fn parse_with(text: &str, keys: &mut KeyCache) -> Result<SignedMessage, MessageError> {
        check_message_size(text)?;
        let value = parse_strict(text).map_err(MessageError::json)?;
        SignedMessage::checked(value, Check::Signature, keys)
    }

    /// As [`SignedMessage::parse`], from a parsed value.
    pub fn from_value(value: Value) -> Result<SignedMessage, MessageError> {
        SignedMessage::checked(value, Check::Signature, &mut KeyCache::default())
    }

    fn checked(mut value: Value, check: Check, keys: &mut KeyCache) -> Result<SignedMessage, MessageError> {
        if let Some(query) = codec::anonymous_query(&value) {
            query?;
            return Err(MessageError::UnsignedQuery);
        }
        let envelope = codec::decode_envelope(&value)?;
        let sig_text = envelope.sig.ok_or(MessageError::Unsigned)?;
        let (pubkey, expected) = keys.decode(&envelope.pubkey)?;
        let sig = SignatureBytes::from_base64(&sig_text, "sig")?;
        if envelope.message.from != expected {
            return Err(MessageError::WrongSender { from: envelope.message.from, expected });
        }
        let canonical = canonical_of(&value)?;
        let signed_bytes = match without_top_level_sig(&canonical, &sig_text) {
            Some(bytes) => bytes,
            None => {
                if let Value::Object(object) = &mut value {
                    object.remove("sig");
                }
                canonical_of(&value)?.into_bytes()
            }
        };
        if check == Check::Signature && !pubkey.verifies(&signed_bytes, &sig) {
            return Err(MessageError::BadSignature);
        }
        Ok(SignedMessage {
            message: envelope.message,
            pubkey,
            sig,
            id: MessageId::of_canonical(&canonical),
            canonical,
            signed_bytes,
        })
    }

    /// Signs `message` with `key`. `message.from` must be the key's id.
    pub fn sign(message: &Message, key: &Keypair) -> Result<SignedMessage, MessageError> {
        sign_value(codec::encode(message), key)
    }

    /// The RFC 8785 canonical JSON of the whole signed message (what the id hashes and the
    /// ledger stores).
    pub fn canonical(&self) -> &str {
        &self.canonical
    }

    /// The bytes the signature covers: canonical JSON of the message without `sig`.
    pub fn signed_bytes(&self) -> &[u8] {
        &self.signed_bytes
    }
}

/// Signs a message given as JSON: fills `from` when it is absent (and refuses a different
/// one), sets `pubkey`, validates every field, and adds `sig`. Any old `sig` is replaced.
pub fn sign_value(mut value: Value, key: &Keypair) -> Result<SignedMessage, MessageError> {
    let agent = key.agent_id();
    let Value::Object(object) = &mut value else {
        return Err(FieldError { field: "(message)".into(), reason: "must be an object".into() }.into());
    };
    object.remove("sig");
    match object.get("from") {
        None | Some(Value::Null) => {
            object.insert("from".into(), Value::String(agent.to_string()));
        }
        Some(Value::String(from)) if from == agent.as_str() => {}
        Some(other) => {
            let from = other.as_str().and_then(AgentId::parse);
            return Err(match from {
                Some(from) => MessageError::WrongSender { from, expected: agent },
                None => FieldError {
                    field: "from".into(),
                    reason: format!("must be the signing key's id {agent}, found {other}"),
                }
                .into(),
            });
        }
    }
    object.insert("pubkey".into(), Value::String(key.public().to_base64()));
    codec::decode_envelope(&value)?;
    let signature = key.sign(canonical_of(&value)?.as_bytes());
    if let Value::Object(object) = &mut value {
        object.insert("sig".into(), Value::String(signature.to_base64()));
    }
    // Just signed with this key over these bytes: verifying again would only cost time.
    SignedMessage::checked(value, Check::Fields, &mut KeyCache::default())
}

/// Public keys already decoded, by their base64 text (bounded: cleared when full).
#[derive(Debug, Default)]
pub struct KeyCache {
    keys: std::collections::HashMap<String, (PublicKey, AgentId)>,
}

impl KeyCache {
    /// At most this many keys are kept.
    const CAPACITY: usize = 4096;

    /// The key written as `text` and its agent id (a hash of the key, also kept).
    fn decode(&mut self, text: &str) -> Result<(PublicKey, AgentId), MessageError> {
        if let Some(known) = self.keys.get(text) {
            return Ok(known.clone());
        }
        let key = PublicKey::from_base64(text, "pubkey")?;
        if self.keys.len() >= KeyCache::CAPACITY {
            self.keys.clear();
        }
        let known = (key, key.agent_id());
        self.keys.insert(text.to_owned(), known.clone());
        Ok(known)
    }
}

/// How much `SignedMessage::checked` verifies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Check {
    /// Fields, sender and signature: for anything received.
    Signature,
    /// Fields and sender only: for a message this process has just signed.
    Fields,
}

/// The canonical text without its top-level `sig` member: the bytes the signature covers,
/// without canonicalising a second time. In canonical form the top-level keys are sorted
/// (`content`, `from`, `pubkey`, `sig`, `to`, `ts`, `type`), so `,"sig":"..."` follows
/// `pubkey`; any earlier occurrence of the same text lies inside `content`, and none can
/// follow it (quotes inside strings are escaped), hence the search from the end.
fn without_top_level_sig(canonical: &str, sig: &str) -> Option<Vec<u8>> {
    let member = format!(",\"sig\":{}", serde_json::to_string(sig).ok()?);
    let start = canonical.rfind(&member)?;
    let mut bytes = Vec::with_capacity(canonical.len() - member.len());
    bytes.extend_from_slice(&canonical.as_bytes()[..start]);
    bytes.extend_from_slice(&canonical.as_bytes()[start + member.len()..]);
    Some(bytes)
}

impl MessageError {
    /// The error for JSON that does not parse (or, never for a parsed value, does not
    /// canonicalise), with serde_json's position.
    fn json(error: serde_json::Error) -> MessageError {
        MessageError::Json { line: error.line(), column: error.column(), source: error.into() }
    }
}

/// The canonical form of a message as text.
fn canonical_of(value: &Value) -> Result<String, MessageError> {
    canonical_text(value).map_err(MessageError::json)
}
