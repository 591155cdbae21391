//! Ed25519 identities: agent ids, key pairs, key files, signing and verification.

use crate::canonical::{hex, sha256_hex};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use ed25519_dalek::{Signer, SigningKey, VerifyingKey};
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
        // A `PublicKey` is never of small order: `from_base64` refuses one, and a key pair's
        // public half is a multiple of the base point.
        verify_strict_strong_key(&self.0, bytes, &signature.0)
    }
}

/// Ed25519 verification that accepts exactly what `VerifyingKey::verify_strict` accepts
/// (kept for the tests, which compare the two; [`PublicKey::verifies`] skips the key check),
/// without decompressing `R` (a tenth of the instructions of a check).
///
/// `verify_strict` refuses a non-canonical `s`, a small-order key, an `R` that does not
/// decode or decodes to a small-order point, and otherwise accepts when the encoding of
/// `[s]B - [k]A` (with `k = SHA-512(R || A || M)`) is the bytes of `R`. Here the last test
/// comes first: when the encodings are equal, `R` decodes to that point (an encoding made by
/// `compress` always decodes to the point it was made from), so asking whether that point
/// is of small order is asking whether `R` is; when they differ, both refuse. The tests
/// compare the two on valid, altered and crafted signatures.
#[cfg(test)]
fn verify_strict(key: &VerifyingKey, message: &[u8], signature: &[u8; 64]) -> bool {
    !key.is_weak() && verify_strict_strong_key(key, message, signature)
}

/// [`verify_strict`] for a key known not to be of small order (the check costs a twentieth
/// of a verification, and every [`PublicKey`] has passed it).
fn verify_strict_strong_key(key: &VerifyingKey, message: &[u8], signature: &[u8; 64]) -> bool {
    use curve25519_dalek::{EdwardsPoint, Scalar};
    use sha2::Sha512;
    let (r, s) = signature.split_at(32);
    let Ok(s) = <[u8; 32]>::try_from(s) else { return false };
    let Some(s) = Option::<Scalar>::from(Scalar::from_canonical_bytes(s)) else { return false };
    let mut hash = Sha512::new();
    hash.update(r);
    hash.update(key.as_bytes());
    hash.update(message);
    let wide: [u8; 64] = hash.finalize().into();
    let k = Scalar::from_bytes_mod_order_wide(&wide);
    let expected = EdwardsPoint::vartime_double_scalar_mul_basepoint(&k, &-key.to_edwards(), &s);
    expected.compress().as_bytes() == r && !expected.is_small_order()
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
    use curve25519_dalek::constants::{ED25519_BASEPOINT_POINT, EIGHT_TORSION};
    use curve25519_dalek::{EdwardsPoint, Scalar};
    use ed25519_dalek::Signature;

    /// What `ed25519-dalek`'s own strict verification says.
    fn dalek_strict(key: &VerifyingKey, message: &[u8], signature: &[u8; 64]) -> bool {
        key.verify_strict(message, &Signature::from_bytes(signature)).is_ok()
    }

    /// A signature made by hand with nonce point `r_point` (which may carry a small-order
    /// part the signer added) for the secret scalar `a`.
    fn signed_with_nonce(key: &SigningKey, r: Scalar, torsion: EdwardsPoint, message: &[u8]) -> [u8; 64] {
        let r_point = (ED25519_BASEPOINT_POINT * r) + torsion;
        let r_bytes = r_point.compress().to_bytes();
        let mut hash = sha2::Sha512::new();
        hash.update(r_bytes);
        hash.update(key.verifying_key().as_bytes());
        hash.update(message);
        let wide: [u8; 64] = hash.finalize().into();
        let s = r + Scalar::from_bytes_mod_order_wide(&wide) * key.to_scalar();
        let mut signature = [0u8; 64];
        signature[..32].copy_from_slice(&r_bytes);
        signature[32..].copy_from_slice(s.as_bytes());
        signature
    }

    /// The fast check agrees with `verify_strict` on valid signatures, on every one-bit
    /// change of signature, message or key, on small-order and non-canonical `R`, on
    /// non-canonical `s`, on small-order keys, and on signatures whose nonce point carries a
    /// small-order part (which a cofactored or batch check would accept).
    #[test]
    fn fast_strict_verification_agrees_with_ed25519_dalek() {
        let mut state = 0x9E37_79B9_7F4A_7C15_u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut cases = 0;
        let mut accepted = 0;
        let mut check = |key: &VerifyingKey, message: &[u8], signature: &[u8; 64]| {
            let dalek = dalek_strict(key, message, signature);
            assert_eq!(verify_strict(key, message, signature), dalek, "{message:?} {signature:?}");
            cases += 1;
            accepted += usize::from(dalek);
        };
        for round in 0..12u8 {
            let signing = SigningKey::from_bytes(&[round.wrapping_mul(37).wrapping_add(1); 32]);
            let key = signing.verifying_key();
            let message: Vec<u8> = (0..(next() % 300)).map(|_| next() as u8).collect();
            let signature = signing.sign(&message).to_bytes();
            check(&key, &message, &signature);
            for bit in 0..512 {
                let mut altered = signature;
                altered[bit / 8] ^= 1 << (bit % 8);
                check(&key, &message, &altered);
            }
            if !message.is_empty() {
                let mut altered = message.clone();
                let at = (next() as usize) % altered.len();
                altered[at] ^= 1 << (next() % 8);
                check(&key, &altered, &signature);
            }
            let other = SigningKey::from_bytes(&[round.wrapping_add(100); 32]).verifying_key();
            check(&other, &message, &signature);
            // `s + l`: the same point equation, a non-canonical scalar.
            let mut wide = signature;
            let s = Scalar::from_canonical_bytes(signature[32..].try_into().unwrap_or([0; 32]));
            if let Some(s) = Option::<Scalar>::from(s) {
                let l_plus_s = big_add(s.as_bytes(), &L);
                if l_plus_s[31] & 0xe0 == 0 {
                    wide[32..].copy_from_slice(&l_plus_s);
                    check(&key, &message, &wide);
                }
            }
            // Every small-order point as `R`, in its canonical and (where it exists) its
            // non-canonical encoding.
            for torsion in EIGHT_TORSION {
                let mut small = signature;
                let encoded = torsion.compress().to_bytes();
                small[..32].copy_from_slice(&encoded);
                check(&key, &message, &small);
                if let Some(non_canonical) = plus_p(&encoded) {
                    small[..32].copy_from_slice(&non_canonical);
                    check(&key, &message, &small);
                }
            }
            // A nonce point with a small-order part, from a signer who knows the secret.
            let nonce = Scalar::from_bytes_mod_order([round.wrapping_add(9); 32]);
            for torsion in EIGHT_TORSION {
                check(&key, &message, &signed_with_nonce(&signing, nonce, torsion, &message));
            }
        }
        // Small-order keys (weak keys), with any signature.
        for torsion in EIGHT_TORSION {
            if let Ok(weak) = VerifyingKey::from_bytes(&torsion.compress().to_bytes()) {
                check(&weak, b"m", &[0u8; 64]);
                let mut signature = [0u8; 64];
                signature[..32].copy_from_slice(&torsion.compress().to_bytes());
                check(&weak, b"m", &signature);
            }
        }
        assert!(cases > 6_000, "{cases} cases");
        assert_eq!(accepted, 12 + 12, "each valid signature and each torsion-free hand-made one");
    }

    /// The group order l, little-endian.
    const L: [u8; 32] = [
        0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58, 0xd6, 0x9c, 0xf7, 0xa2, 0xde, 0xf9, 0xde, 0x14, 0, 0,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10,
    ];

    /// `a + b` on 256-bit little-endian numbers (no overflow in the cases used).
    fn big_add(a: &[u8; 32], b: &[u8; 32]) -> [u8; 32] {
        let mut sum = [0u8; 32];
        let mut carry = 0u16;
        for i in 0..32 {
            let total = u16::from(a[i]) + u16::from(b[i]) + carry;
            sum[i] = total as u8;
            carry = total >> 8;
        }
        sum
    }

    /// The encoding with `y + p` in place of `y`, when that still fits in 255 bits.
    fn plus_p(encoded: &[u8; 32]) -> Option<[u8; 32]> {
        let sign = encoded[31] & 0x80;
        let mut y = *encoded;
        y[31] &= 0x7f;
        let mut p = [0xffu8; 32];
        p[0] = 0xed;
        p[31] = 0x7f;
        let sum = big_add(&y, &p);
        let fits = y.iter().rev().skip(1).all(|&b| b == 0) && y[31] == 0 && y[0] < 19;
        fits.then(|| {
            let mut out = sum;
            out[31] |= sign;
            out
        })
    }

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
