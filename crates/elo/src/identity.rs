//! Ed25519 identities: agent ids, key pairs, key files, signing and verification.

use crate::canonical::{hex, sha256_hex};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use ed25519_dalek::{Signature, Signer, SigningKey, VerifyingKey};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::fmt;

/// Why a key, key file or signature could not be used.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum KeyError {
    /// Not standard base64.
    #[error("`{field}` is not standard base64: {reason}")]
    Base64 {
        /// The field holding the text.
        field: &'static str,
        /// What the decoder said.
        reason: String,
    },
    /// Decoded to the wrong number of bytes.
    #[error("`{field}` must decode to {expected} bytes, found {found}")]
    Length {
        /// The field holding the text.
        field: &'static str,
        /// Bytes required.
        expected: usize,
        /// Bytes found.
        found: usize,
    },
    /// Not a point on the curve, or a weak (small-order) key.
    #[error("`{field}` is not a usable Ed25519 public key")]
    BadPublicKey {
        /// The field holding the key.
        field: &'static str,
    },
    /// A key file whose `agent` does not belong to its `public_key`.
    #[error("key file: `agent` {found} does not match its public key (expected {expected})")]
    AgentMismatch {
        /// The id the key gives.
        expected: String,
        /// The id the file states.
        found: String,
    },
    /// A key file whose secret and public halves disagree.
    #[error("key file: `public_key` is not the public half of `secret_key`")]
    PairMismatch,
    /// A key file without `secret_key` where one is needed.
    #[error("key file has no `secret_key`: it can verify but not sign")]
    NoSecret,
    /// Not a key file at all.
    #[error("not a key file: {0}")]
    Format(String),
    /// The operating system's random source failed.
    #[error("the operating system's random source failed: {0}")]
    Random(String),
}

/// An agent id: `@` followed by the first 16 hex digits of SHA-256 of the raw public key.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct AgentId(String);

impl AgentId {
    /// The id that belongs to `key`.
    pub fn of(key: &PublicKey) -> AgentId {
        let digest = Sha256::digest(key.0.as_bytes());
        AgentId(format!("@{}", &hex(&digest)[..16]))
    }

    /// Accepts text of the form `@` + 16 lowercase hex digits.
    pub fn parse(text: &str) -> Option<AgentId> {
        let digits = text.strip_prefix('@')?;
        let well_formed =
            digits.len() == 16 && digits.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        well_formed.then(|| AgentId(text.to_owned()))
    }

    /// The id as text, `@` included.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for AgentId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// An Ed25519 public key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PublicKey(VerifyingKey);

impl PublicKey {
    /// Decodes standard base64 of the raw 32 bytes; weak keys are refused. `field` names the
    /// field in errors.
    pub fn from_base64(text: &str, field: &'static str) -> Result<PublicKey, KeyError> {
        let bytes: [u8; 32] = decode_exact(text, field)?;
        let key = VerifyingKey::from_bytes(&bytes).map_err(|_| KeyError::BadPublicKey { field })?;
        if key.is_weak() {
            return Err(KeyError::BadPublicKey { field });
        }
        Ok(PublicKey(key))
    }

    /// Standard base64 of the raw 32 bytes.
    pub fn to_base64(&self) -> String {
        BASE64.encode(self.0.as_bytes())
    }

    /// The id of the agent holding this key.
    pub fn agent_id(&self) -> AgentId {
        AgentId::of(self)
    }

    /// True when `signature` is this key's strict Ed25519 signature over `bytes`.
    pub fn verifies(&self, bytes: &[u8], signature: &SignatureBytes) -> bool {
        self.0.verify_strict(bytes, &Signature::from_bytes(&signature.0)).is_ok()
    }
}

/// A 64-byte Ed25519 signature.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SignatureBytes(pub [u8; 64]);

impl SignatureBytes {
    /// Decodes standard base64 of the 64 bytes.
    pub fn from_base64(text: &str, field: &'static str) -> Result<SignatureBytes, KeyError> {
        decode_exact(text, field).map(SignatureBytes)
    }

    /// Standard base64.
    pub fn to_base64(&self) -> String {
        BASE64.encode(self.0)
    }
}

fn decode_exact<const N: usize>(text: &str, field: &'static str) -> Result<[u8; N], KeyError> {
    let bytes = BASE64.decode(text).map_err(|error| KeyError::Base64 { field, reason: error.to_string() })?;
    let found = bytes.len();
    bytes.try_into().map_err(|_| KeyError::Length { field, expected: N, found })
}

/// An Ed25519 key pair: an agent's (or a ledger's) signing identity.
#[derive(Clone)]
pub struct Keypair {
    signing: SigningKey,
}

impl fmt::Debug for Keypair {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Keypair").field("agent", &self.agent_id()).finish_non_exhaustive()
    }
}

impl Keypair {
    /// A new key from the operating system's random source.
    pub fn generate() -> Result<Keypair, KeyError> {
        let mut seed = [0u8; 32];
        getrandom::fill(&mut seed).map_err(|error| KeyError::Random(error.to_string()))?;
        Ok(Keypair::from_seed(seed))
    }

    /// The key for a 32-byte seed (deterministic: for tests and fixtures).
    pub fn from_seed(seed: [u8; 32]) -> Keypair {
        Keypair { signing: SigningKey::from_bytes(&seed) }
    }

    /// The 32-byte seed (the secret).
    pub fn seed(&self) -> [u8; 32] {
        self.signing.to_bytes()
    }

    /// The public half.
    pub fn public(&self) -> PublicKey {
        PublicKey(self.signing.verifying_key())
    }

    /// The agent id of the public half.
    pub fn agent_id(&self) -> AgentId {
        self.public().agent_id()
    }

    /// Signs `bytes`.
    pub fn sign(&self, bytes: &[u8]) -> SignatureBytes {
        SignatureBytes(self.signing.sign(bytes).to_bytes())
    }

    /// The key file holding both halves.
    pub fn to_key_file(&self) -> KeyFile {
        KeyFile {
            agent: self.agent_id(),
            public_key: self.public().to_base64(),
            secret_key: Some(BASE64.encode(self.seed())),
        }
    }
}

/// The JSON key file written by `revcal elo keygen`; without `secret_key` it is a public key
/// file (what `verify-receipt --issuer-key` needs).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KeyFile {
    /// The agent id of the key (checked against `public_key` on load).
    pub agent: AgentId,
    /// Standard base64 of the raw 32-byte public key.
    pub public_key: String,
    /// Standard base64 of the 32-byte secret seed; absent in a public key file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_key: Option<String>,
}

impl KeyFile {
    /// Parses and checks a key file's text.
    pub fn parse(text: &str) -> Result<KeyFile, KeyError> {
        let file: KeyFile =
            serde_json::from_str(text).map_err(|error| KeyError::Format(error.to_string()))?;
        let public = file.public()?;
        if public.agent_id() != file.agent {
            return Err(KeyError::AgentMismatch {
                expected: public.agent_id().to_string(),
                found: file.agent.to_string(),
            });
        }
        if file.secret_key.is_some() && file.keypair()?.public() != public {
            return Err(KeyError::PairMismatch);
        }
        Ok(file)
    }

    /// The public key.
    pub fn public(&self) -> Result<PublicKey, KeyError> {
        PublicKey::from_base64(&self.public_key, "public_key")
    }

    /// The key pair, when the file holds the secret.
    pub fn keypair(&self) -> Result<Keypair, KeyError> {
        let secret = self.secret_key.as_deref().ok_or(KeyError::NoSecret)?;
        decode_exact(secret, "secret_key").map(Keypair::from_seed)
    }

    /// The same file without the secret.
    pub fn public_only(&self) -> KeyFile {
        KeyFile { secret_key: None, ..self.clone() }
    }
}

/// Lowercase hex SHA-256 of a public key's raw bytes (for logs and docs).
pub fn key_fingerprint(key: &PublicKey) -> String {
    sha256_hex(key.0.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_id_is_the_first_16_hex_digits_of_the_key_hash() {
        let key = Keypair::from_seed([7; 32]);
        let full = key_fingerprint(&key.public());
        assert_eq!(key.agent_id().as_str(), format!("@{}", &full[..16]));
        assert!(AgentId::parse(key.agent_id().as_str()).is_some());
        assert!(AgentId::parse("@ABCDEF0123456789").is_none());
        assert!(AgentId::parse("abcdef0123456789").is_none());
        assert!(AgentId::parse("@abcdef012345678").is_none());
    }

    #[test]
    fn signatures_verify_only_with_their_key_and_bytes() {
        let alice = Keypair::from_seed([1; 32]);
        let bob = Keypair::from_seed([2; 32]);
        let signature = alice.sign(b"hello");
        assert!(alice.public().verifies(b"hello", &signature));
        assert!(!bob.public().verifies(b"hello", &signature));
        assert!(!alice.public().verifies(b"hellO", &signature));
    }

    #[test]
    fn key_files_round_trip_and_are_checked() {
        let key = Keypair::from_seed([3; 32]);
        let text = serde_json::to_string(&key.to_key_file()).unwrap();
        let file = KeyFile::parse(&text).unwrap();
        assert_eq!(file.keypair().unwrap().agent_id(), key.agent_id());
        let public = file.public_only();
        assert_eq!(public.keypair().unwrap_err(), KeyError::NoSecret);

        let mut wrong_agent = key.to_key_file();
        wrong_agent.agent = Keypair::from_seed([4; 32]).agent_id();
        let error = KeyFile::parse(&serde_json::to_string(&wrong_agent).unwrap()).unwrap_err();
        assert!(matches!(error, KeyError::AgentMismatch { .. }), "{error}");

        let mut wrong_pair = key.to_key_file();
        wrong_pair.secret_key = Keypair::from_seed([4; 32]).to_key_file().secret_key;
        assert_eq!(KeyFile::parse(&serde_json::to_string(&wrong_pair).unwrap()), Err(KeyError::PairMismatch));

        assert!(matches!(KeyFile::parse("{}"), Err(KeyError::Format(_))));
    }

    #[test]
    fn generated_keys_differ() {
        assert_ne!(Keypair::generate().unwrap().seed(), Keypair::generate().unwrap().seed());
    }

    #[test]
    fn bad_base64_and_lengths_are_named() {
        let error = PublicKey::from_base64("not base64!", "pubkey").unwrap_err();
        assert!(error.to_string().contains("`pubkey`"), "{error}");
        let error = PublicKey::from_base64(&BASE64.encode([1u8; 31]), "pubkey").unwrap_err();
        assert_eq!(error, KeyError::Length { field: "pubkey", expected: 32, found: 31 });
        // The identity point is a weak key.
        let mut identity = [0u8; 32];
        identity[0] = 1;
        let error = PublicKey::from_base64(&BASE64.encode(identity), "pubkey").unwrap_err();
        assert_eq!(error, KeyError::BadPublicKey { field: "pubkey" });
    }
}
