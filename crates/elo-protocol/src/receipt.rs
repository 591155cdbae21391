//! Receipts: a ledger's signed statement that a review was scored, verifiable offline with
//! the ledger's public key alone.

use crate::canonical::{JsonError, canonical_bytes, canonical_text, parse_strict};
use crate::engine::ScoredReview;
use crate::identity::{AgentId, KeyError, Keypair, PublicKey, SignatureBytes};
use crate::message::{MessageId, ReviewVerdict, ts_millis};
use crate::policy::OutcomeClass;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The value of a receipt's `type`.
pub(crate) const RECEIPT_TYPE: &str = "review";

/// The review a receipt certifies, by id (a revcal addition beside the protocol's `content`
/// line, which names the review for people).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReceiptReview {
    /// The request reviewed.
    pub request_id: MessageId,
    /// The review scored.
    pub review_id: MessageId,
    /// The outcome that scored it.
    pub outcome_id: MessageId,
    /// The verdict.
    pub verdict: ReviewVerdict,
    /// Whether the change caused an incident.
    pub incident: bool,
}

/// The calibration round a receipt's outcome reported (a revcal addition, present only
/// for an outcome that carries `content.calibration`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReceiptCalibration {
    /// True when the ledger trusted the outcome's signer when it issued the receipt: the
    /// outcome is verified. False for a calibration claimed by a key the ledger does not
    /// trust, which counts as self-reported.
    pub verified: bool,
    /// The outcome's signer: the calibrating authority.
    pub authority: AgentId,
    /// Lowercase hex SHA-256 of the calibration report's canonical JSON.
    pub report_sha256: String,
    /// The review round.
    pub round: u64,
    /// The trial of the round.
    pub trial: u64,
    /// The domains (bug categories) the round counts in.
    pub domains: Vec<String>,
}

/// A signed receipt: `{type: "review", from, to, content, outcome, elo_delta, ts, sig}` as
/// the protocol has it, with revcal's `issuer` and `review` added (and `calibration` for
/// the outcome of a calibration round).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Receipt {
    /// Always `review`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The reviewer.
    pub from: AgentId,
    /// The requester whose change was reviewed.
    pub to: AgentId,
    /// The review in words: `REVIEW:<verdict> on <the change>`, e.g.
    /// `REVIEW:REQUEST_CHANGES on PR #412`.
    pub content: String,
    /// The review, request and outcome by id, the verdict and the incident flag.
    pub review: ReceiptReview,
    /// What the verdict turned out to be.
    pub outcome: OutcomeClass,
    /// The rating change applied.
    pub elo_delta: f64,
    /// When the review was scored: the outcome's `ts`, in milliseconds since the Unix epoch
    /// (an outcome dated in seconds is converted).
    pub ts: u64,
    /// The ledger's agent id.
    pub issuer: AgentId,
    /// The calibration round the outcome reported, and whether the ledger counts it as
    /// verified; absent for an outcome reported by the requester.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calibration: Option<ReceiptCalibration>,
    /// Standard base64 Ed25519 signature over the canonical receipt without `sig`.
    pub sig: String,
}

/// Why a receipt did not verify.
///
/// Each message is complete on its own (one is reported per receipt); the typed cause, where
/// there is one, is also the error's `source`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ReceiptError {
    /// Not a receipt: bad JSON, a missing, mistyped or unknown field.
    #[error("not a receipt: {0}")]
    Format(#[source] JsonError),
    /// `type` is not `review`.
    #[error("not a receipt: `type` must be {RECEIPT_TYPE:?}, found {found:?}")]
    WrongType {
        /// The `type` found.
        found: String,
    },
    /// `outcome` is not the class of `verdict` and `incident`.
    #[error("not a receipt: `outcome` does not follow from `verdict` and `incident`")]
    InconsistentOutcome,
    /// `issuer` is not the id of the key given.
    #[error("`issuer`: {issuer} is not the id of the issuer key given ({expected})")]
    WrongIssuer {
        /// The receipt's issuer.
        issuer: AgentId,
        /// The id of the key given.
        expected: AgentId,
    },
    /// The signature is malformed.
    #[error(transparent)]
    Key(#[from] KeyError),
    /// The signature does not verify: altered, or signed by another key.
    #[error("`sig`: the signature does not verify: the receipt was altered or issued by another ledger")]
    BadSignature,
}

impl Receipt {
    /// Builds and signs the receipt for a scored review of the change named `subject` (see
    /// [`crate::RequestContent::subject`]; the request's id when `None`).
    pub fn issue(scored: &ScoredReview, subject: Option<&str>, key: &Keypair) -> Receipt {
        Receipt::issue_with(scored, subject, None, key)
    }

    /// As [`Receipt::issue`], for the outcome of a calibration round.
    pub fn issue_with(
        scored: &ScoredReview,
        subject: Option<&str>,
        calibration: Option<ReceiptCalibration>,
        key: &Keypair,
    ) -> Receipt {
        let content = match subject {
            Some(subject) => format!("REVIEW:{} on {subject}", scored.verdict.as_str()),
            None => format!("REVIEW:{} on request {}", scored.verdict.as_str(), scored.request_id),
        };
        let mut receipt = Receipt {
            kind: RECEIPT_TYPE.to_owned(),
            from: scored.reviewer.clone(),
            to: scored.requester.clone(),
            content,
            review: ReceiptReview {
                request_id: scored.request_id.clone(),
                review_id: scored.review_id.clone(),
                outcome_id: scored.outcome_id.clone(),
                verdict: scored.verdict,
                incident: scored.incident,
            },
            outcome: scored.outcome,
            elo_delta: scored.elo_delta,
            ts: ts_millis(scored.ts),
            issuer: key.agent_id(),
            calibration,
            sig: String::new(),
        };
        receipt.sig = key.sign(&receipt.signed_bytes()).to_base64();
        receipt
    }

    /// The bytes the signature covers: RFC 8785 canonical JSON of the receipt without `sig`.
    pub fn signed_bytes(&self) -> Vec<u8> {
        let mut value = serde_json::to_value(self).unwrap_or(Value::Null);
        if let Value::Object(object) = &mut value {
            object.remove("sig");
        }
        canonical_bytes(&value).unwrap_or_default()
    }

    /// The canonical JSON of the whole receipt (one line).
    pub fn to_canonical(&self) -> String {
        let value = serde_json::to_value(self).unwrap_or(Value::Null);
        canonical_text(&value).unwrap_or_default()
    }

    /// Checks the receipt against the issuer's public key.
    pub fn verify(&self, issuer_key: &PublicKey) -> Result<(), ReceiptError> {
        if self.kind != RECEIPT_TYPE {
            return Err(ReceiptError::WrongType { found: self.kind.clone() });
        }
        let expected = issuer_key.agent_id();
        if self.issuer != expected {
            return Err(ReceiptError::WrongIssuer { issuer: self.issuer.clone(), expected });
        }
        if OutcomeClass::of(self.review.verdict, self.review.incident) != self.outcome {
            return Err(ReceiptError::InconsistentOutcome);
        }
        let signature = SignatureBytes::from_base64(&self.sig, "sig")?;
        if issuer_key.verifies(&self.signed_bytes(), &signature) {
            Ok(())
        } else {
            Err(ReceiptError::BadSignature)
        }
    }
}

/// Parses a receipt (strictly: duplicate keys and unknown fields refused) and verifies it.
pub fn verify_receipt(text: &str, issuer_key: &PublicKey) -> Result<Receipt, ReceiptError> {
    let value = parse_strict(text).map_err(|error| ReceiptError::Format(error.into()))?;
    verify_receipt_value(value, issuer_key)
}

/// As [`verify_receipt`], for a parsed value.
pub fn verify_receipt_value(value: Value, issuer_key: &PublicKey) -> Result<Receipt, ReceiptError> {
    let receipt: Receipt =
        serde_json::from_value(value).map_err(|error| ReceiptError::Format(error.into()))?;
    receipt.verify(issuer_key)?;
    Ok(receipt)
}
