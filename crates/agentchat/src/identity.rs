//! An `elo keygen` key as an AgentChat identity: the public key as the PEM text AgentChat
//! hashes into an agent id, and the answer to the server's login challenge.
//!
//! The same Ed25519 key has two ids. RFC-001's (revcal's `from`) is `@` and the first 16
//! hex digits of SHA-256 of the raw 32-byte key; AgentChat's (`MSG.from`) is `@` and the
//! first 16 hex digits of SHA-256 of the key's SPKI PEM **text**, exactly as Node writes it.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use revcal_elo::{AgentId, Keypair, PublicKey};
use sha2::{Digest, Sha256};

/// The DER prefix of an Ed25519 SubjectPublicKeyInfo (RFC 8410): the 32 key bytes follow.
const ED25519_SPKI_PREFIX: [u8; 12] =
    [0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00];

/// An AgentChat agent id: `@` and 16 lowercase hex digits.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ChatId(String);

impl ChatId {
    /// The id of the agent that identified with `pem` (the text as sent, byte for byte).
    pub fn of_pem(pem: &str) -> ChatId {
        let digest = Sha256::digest(pem.as_bytes());
        let hex: String = digest.iter().take(8).map(|byte| format!("{byte:02x}")).collect();
        ChatId(format!("@{hex}"))
    }

    /// The id AgentChat gives `key` when its holder identifies as Node writes the key
    /// ([`public_key_pem`]).
    pub fn of_key(key: &PublicKey) -> ChatId {
        ChatId::of_pem(&public_key_pem(key))
    }

    /// Reads an id as AgentChat writes it (`@` and 16 lowercase hex digits); `None` otherwise.
    pub fn parse(text: &str) -> Option<ChatId> {
        let hex = text.strip_prefix('@')?;
        (hex.len() == 16 && hex.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)))
            .then(|| ChatId(text.to_owned()))
    }

    /// The id with its `@`.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The 16 hex digits without `@` (what the server's `GENESIS_AGENT_ID` names).
    pub fn hex(&self) -> &str {
        &self.0[1..]
    }
}

impl std::fmt::Display for ChatId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The SPKI PEM text of `key` exactly as Node's `KeyObject.export({type: 'spki', format:
/// 'pem'})` writes it: the header line, the base64 of the 44 DER bytes on one line, the
/// footer line, each ended by `\n`.
pub fn public_key_pem(key: &PublicKey) -> String {
    let mut der = ED25519_SPKI_PREFIX.to_vec();
    der.extend_from_slice(&raw_key(key));
    format!("-----BEGIN PUBLIC KEY-----\n{}\n-----END PUBLIC KEY-----\n", BASE64.encode(der))
}

/// The raw 32 bytes of `key`.
fn raw_key(key: &PublicKey) -> [u8; 32] {
    // `to_base64` is the standard base64 of exactly 32 bytes, so it decodes to 32 bytes.
    let bytes = BASE64.decode(key.to_base64()).unwrap_or_default();
    let mut raw = [0u8; 32];
    if bytes.len() == 32 {
        raw.copy_from_slice(&bytes);
    }
    raw
}

/// An agent's key with both of its ids: what it signs RFC-001 messages with and how it
/// identifies on AgentChat.
pub struct ChatIdentity {
    keypair: Keypair,
    pem: String,
    chat_id: ChatId,
}

impl std::fmt::Debug for ChatIdentity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChatIdentity")
            .field("agent", &self.keypair.agent_id())
            .field("chat_id", &self.chat_id)
            .finish_non_exhaustive()
    }
}

impl ChatIdentity {
    /// The identity of `keypair` (an `elo keygen` key).
    pub fn new(keypair: Keypair) -> ChatIdentity {
        let pem = public_key_pem(&keypair.public());
        let chat_id = ChatId::of_pem(&pem);
        ChatIdentity { keypair, pem, chat_id }
    }

    /// The key.
    pub fn keypair(&self) -> &Keypair {
        &self.keypair
    }

    /// The public key as `IDENTIFY` sends it.
    pub fn pem(&self) -> &str {
        &self.pem
    }

    /// The AgentChat id (`MSG.from` of what this agent posts).
    pub fn chat_id(&self) -> &ChatId {
        &self.chat_id
    }

    /// The RFC-001 id (`from` of the messages this agent signs).
    pub fn agent_id(&self) -> AgentId {
        self.keypair.agent_id()
    }

    /// `VERIFY_IDENTITY`'s `signature`: standard base64 of the Ed25519 signature of
    /// `AGENTCHAT_AUTH|<nonce>|<challenge_id>|<timestamp>`.
    pub fn answer_challenge(&self, nonce: &str, challenge_id: &str, timestamp: u64) -> String {
        let text = format!("AGENTCHAT_AUTH|{nonce}|{challenge_id}|{timestamp}");
        self.keypair.sign(text.as_bytes()).to_base64()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pem_is_nodes_and_the_ids_differ() {
        // Seed 1's key, checked against Node: crypto.createPublicKey({key: <PKCS8 of the
        // seed>, format: 'der', type: 'pkcs8'}).export({type: 'spki', format: 'pem'}).
        let identity = ChatIdentity::new(Keypair::from_seed([1; 32]));
        let pem = identity.pem();
        assert!(pem.starts_with("-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEA"), "{pem}");
        assert!(pem.ends_with("\n-----END PUBLIC KEY-----\n"));
        assert_eq!(pem.lines().count(), 3);
        assert_ne!(identity.chat_id().as_str(), identity.agent_id().as_str());
        assert!(ChatId::parse(identity.chat_id().as_str()).is_some());
        assert_eq!(ChatId::of_key(&identity.keypair().public()), *identity.chat_id());
    }

    #[test]
    fn ids_parse_only_as_agentchat_writes_them() {
        assert!(ChatId::parse("@0123456789abcdef").is_some());
        for bad in ["0123456789abcdef", "@0123456789ABCDEF", "@0123", "@0123456789abcdefg", "@server"] {
            assert!(ChatId::parse(bad).is_none(), "{bad}");
        }
    }
}
