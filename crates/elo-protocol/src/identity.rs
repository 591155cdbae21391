//! Ed25519 identities: agent ids, key pairs, key files, signing and verification.

use crate::canonical::{JsonError, hex};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use ed25519_dalek::{Signature, Signer, SigningKey, VerifyingKey};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::fmt;

/// Why a key, key file or signature could not be used.
///
/// Each message is complete on its own (it is reported as one line per message or file);
/// the typed cause, where there is one, is a field of the variant, said in the message and
/// not returned again by `source`, so that a printed chain says it once.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum KeyError {
    /// Not standard base64.
    #[error("`{field}` is not standard base64: {cause}")]
    Base64 {
        /// The field holding the text.
        field: &'static str,
        /// What the decoder said (said in the message, so it is not also the error's `source`: a chain says it once).
        cause: base64::DecodeError,
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
    Format(#[source] JsonError),
    /// The operating system's random source failed.
    #[error("the operating system's random source failed")]
    Random(#[source] getrandom::Error),
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

    /// True when `signature` is this key's Ed25519 signature over `bytes` under
    /// ed25519-dalek's `verify_strict`: a non-canonical `s`, a small-order `R` or key, and
    /// any `R` other than the encoding of `[s]B - [k]A` are refused (docs/reputation.md,
    /// section 4).
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
    let bytes = BASE64.decode(text).map_err(|cause| KeyError::Base64 { field, cause })?;
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
        getrandom::fill(&mut seed).map_err(KeyError::Random)?;
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
        let file: KeyFile = serde_json::from_str(text).map_err(|error| KeyError::Format(error.into()))?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::canonical::sha256_hex;

    /// The decoder's complaint is in the message and not repeated as the error's source.
    #[test]
    fn bad_base64_says_the_cause_once() {
        let error = decode_exact::<32>("not base64!", "pubkey").unwrap_err();
        assert!(matches!(error, KeyError::Base64 { field: "pubkey", .. }), "{error:?}");
        assert!(std::error::Error::source(&error).is_none(), "{error:?}");
        assert!(error.to_string().starts_with("`pubkey` is not standard base64: "), "{error}");
    }

    /// Decodes a hex test vector.
    fn unhex<const N: usize>(text: &str) -> [u8; N] {
        let bytes: Vec<u8> = (0..text.len())
            .step_by(2)
            .map(|i| {
                u8::from_str_radix(&text[i..i + 2], 16).unwrap_or_else(|error| panic!("{text}: {error}"))
            })
            .collect();
        bytes.try_into().unwrap_or_else(|_| panic!("{text}: not {N} bytes"))
    }

    /// The encodings of the eight small-order points (curve25519-dalek's `EIGHT_TORSION`).
    const SMALL_ORDER: [&str; 8] = [
        "0100000000000000000000000000000000000000000000000000000000000000",
        "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a",
        "0000000000000000000000000000000000000000000000000000000000000080",
        "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05",
        "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
        "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85",
        "0000000000000000000000000000000000000000000000000000000000000000",
        "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa",
    ];

    /// Signatures by the key of seed `[5; 32]` over [`NONCE_MESSAGE`] whose nonce point is
    /// `[r]B + T` for each small-order `T` above, in that order (made with curve arithmetic
    /// when the test was written: `s = r + SHA-512(R || A || M) a`). The first (`T` the
    /// identity) is an ordinary signature; the others satisfy the cofactored equation only,
    /// which a batch or cofactored check would accept and `verify_strict` refuses.
    const SMALL_ORDER_NONCE: [&str; 8] = [
        "4faa93763d0702316ddef05a7921b30b30e81530b44cf9f35773ffee16f68638ba29417e000fa5ff7b5a232bfe36c35571b1ed8b7a8595dd55eb8bd2fe57320e",
        "c57077b154392b0b71e903bd8831bf29222550dad8280c56d2b0cc32ee16ee1f619354ae76a9610ab55553caa29d5259ac09a63615ccbf4903e4aa25e9fe010b",
        "f758556248064643c2712a92d9d92293bcd2ca4443661ab798518b231062370feba37a810fd8e3d6c0610d4cadf08774c757220f144dfcf3886fdc36e35e2900",
        "44a52728cd9c3df80510753964383a7c351899c27d2f2798e391b7b200c68a9c2ecec796d0acac69f4134b6dc84000d1c3bd4f918555c3f7ed9cb30d074f5003",
        "9e556c89c2f8fdce92210fa586de4cf4cf17eacf4bb3060ca88c0011e90979c7bd531e515be43dcea0053c5e75c622215b68e60b3088c85b984f3a68a18b8707",
        "288f884eabc6d4f48e16fc4277ce40d6dddaaf2527d7f3a92d4f33cd11e911e00cc66a6507ff4ab689eddc01bca41048d10bdc4539d64c83c70c5f6c2c6edd0e",
        "f6a6aa9db7f9b9bc3d8ed56d2626dd6c432d35bbbc99e54867ae74dcef9dc8f01462233c12d709447d46abaa3147348574f3fc9525bbaf086c6fdbb2a02ed008",
        "a95ad8d73263c207faef8ac69bc7c583cae7663d82d0d8671c6e484dff397563611f95b7e1b671bf6f5be3ca61f415ce77c25ebf0fd54a51c4e7e7d874ca780f",
    ];

    /// The message of [`SMALL_ORDER_NONCE`].
    const NONCE_MESSAGE: &[u8] = b"a review, signed with a nonce point that carries a small-order part";

    /// `PublicKey::verifies` is `verify_strict`: it accepts each valid signature and refuses
    /// every one-bit change of signature or message, another key, a non-canonical `s`
    /// (`s + l`), every small-order `R` in its canonical and non-canonical encodings, and
    /// signatures whose nonce point carries a small-order part; small-order keys never
    /// become a `PublicKey`.
    #[test]
    fn verification_is_ed25519_dalek_verify_strict() {
        let mut state = 0x9E37_79B9_7F4A_7C15_u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut cases = 0;
        let mut accepted = 0;
        let mut check = |key: &PublicKey, message: &[u8], signature: &[u8; 64]| {
            let ours = key.verifies(message, &SignatureBytes(*signature));
            let strict = key.0.verify_strict(message, &Signature::from_bytes(signature)).is_ok();
            assert_eq!(ours, strict, "{message:?} {signature:?}");
            cases += 1;
            accepted += usize::from(ours);
        };
        for round in 0..12u8 {
            let signing = Keypair::from_seed([round.wrapping_mul(37).wrapping_add(1); 32]);
            let key = signing.public();
            let message: Vec<u8> = (0..(next() % 300)).map(|_| next() as u8).collect();
            let signature = signing.sign(&message).0;
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
            let other = Keypair::from_seed([round.wrapping_add(100); 32]).public();
            check(&other, &message, &signature);
            // `s + l`: the same point equation, a non-canonical scalar.
            let s: [u8; 32] = signature[32..].try_into().unwrap_or([0; 32]);
            let l_plus_s = big_add(&s, &L);
            if l_plus_s[31] & 0xe0 == 0 {
                let mut wide = signature;
                wide[32..].copy_from_slice(&l_plus_s);
                check(&key, &message, &wide);
            }
            // Every small-order point as `R`, in its canonical and (where it exists) its
            // non-canonical encoding.
            for encoded in SMALL_ORDER.map(unhex::<32>) {
                let mut small = signature;
                small[..32].copy_from_slice(&encoded);
                check(&key, &message, &small);
                if let Some(non_canonical) = plus_p(&encoded) {
                    small[..32].copy_from_slice(&non_canonical);
                    check(&key, &message, &small);
                }
            }
        }
        // A nonce point with a small-order part, from a signer who knows the secret.
        let signer = Keypair::from_seed([5; 32]).public();
        for (index, signature) in SMALL_ORDER_NONCE.map(unhex::<64>).iter().enumerate() {
            check(&signer, NONCE_MESSAGE, signature);
            assert_eq!(signer.verifies(NONCE_MESSAGE, &SignatureBytes(*signature)), index == 0, "{index}");
        }
        // Small-order keys (weak keys) are refused before any signature is checked.
        for encoded in SMALL_ORDER {
            let text = BASE64.encode(unhex::<32>(encoded));
            assert!(PublicKey::from_base64(&text, "pubkey").is_err(), "{encoded}");
        }
        assert!(cases > 6_000, "{cases} cases");
        assert_eq!(accepted, 12 + 1, "each valid signature and the torsion-free hand-made one");
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
        let full = sha256_hex(key.public().0.as_bytes());
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
