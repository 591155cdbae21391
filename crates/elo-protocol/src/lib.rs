//! Review reputation without storage: RFC-001's signed review messages (the formats are in
//! docs/reputation.md, section 2), Ed25519 signatures over RFC 8785 canonical JSON, the ELO
//! rating rules, calibration records as review traffic, and signed receipts.
//!
//! Everything here is pure: no file, database or network. The ledger that stores messages
//! and ratings (SQLite or PostgreSQL) is `revcal-elo`, which re-exports this crate's
//! protocol under the same names; depend on this crate alone to sign, verify or rate
//! messages without building a database client.
//!
//! - [`SignedMessage::parse`] validates one message (every field, named on error), checks
//!   that `from` is the id of `pubkey` and that `sig` verifies, and computes its id.
//! - [`Engine`] (and [`rate`]) apply the rating rules to an ordered stream.
//! - [`Receipt::issue`] signs the receipt of a scored review; [`verify_receipt`] checks one
//!   with the issuer's public key alone.
//! - [`CalibrationRecord`] is a calibration as review traffic, its figures checked against
//!   its report.
//!
//! ```
//! use revcal_elo_protocol::{Content, Engine, Keypair, Message, OutcomeContent, Policy, Receipt,
//!                           RequestContent, ReviewContent, ReviewVerdict, SignedMessage, verify_receipt};
//!
//! let author = Keypair::from_seed([1; 32]);
//! let reviewer = Keypair::from_seed([2; 32]);
//! let send = |key: &Keypair, content| {
//!     let message = Message { from: key.agent_id(), to: "#review".into(), ts: 1_700_000_000, content };
//!     SignedMessage::sign(&message, key).unwrap()
//! };
//! let request = send(&author, Content::Request(RequestContent {
//!     repo: Some("github.com/acme/api".into()), change: Some("PR #7".into()), ..Default::default() }));
//! let review = send(&reviewer, Content::Review(ReviewContent {
//!     request_id: request.id.clone(), verdict: ReviewVerdict::RequestChanges, comments: vec![], summary: None, name: None }));
//! let outcome = send(&author, Content::Outcome(OutcomeContent {
//!     request_id: request.id.clone(), merged: true, incident: true,
//!     incident_details: Some("nil deref in prod".into()), calibration: None }));
//!
//! // What arrives as text is parsed and verified again, with the same id.
//! let received = SignedMessage::parse(review.canonical()).unwrap();
//! assert_eq!(received.id, review.id);
//!
//! // REQUEST_CHANGES + incident: base +25, K 40 for a new reviewer: +25 x 40 / 20 = +50.
//! let mut engine = Engine::new(Policy::default());
//! engine.apply(&request).unwrap();
//! engine.apply(&received).unwrap();
//! let scored = engine.apply(&outcome).unwrap();
//! assert_eq!(engine.standings()[&reviewer.agent_id()].rating, 1250.0);
//! // A second copy of a message changes nothing.
//! assert!(engine.apply(&outcome).is_err());
//!
//! // A receipt verifies offline with its issuer's public key alone.
//! let issuer = Keypair::from_seed([9; 32]);
//! let receipt = Receipt::issue(&scored[0], Some("PR #7"), &issuer);
//! assert!(verify_receipt(&receipt.to_canonical(), &issuer.public()).is_ok());
//! assert!(verify_receipt(&receipt.to_canonical().replace("50", "51"), &issuer.public()).is_err());
//! ```

mod calibration;
mod canonical;
mod codec;
mod engine;
mod identity;
mod link;
mod message;
mod policy;
mod receipt;
mod scope;
mod signed;

pub use calibration::{
    CalibrationRecord, CategoryFigures, ChangedFiles, Finding, LOCATE_TOLERANCE, MAX_COMMENT_CHARS,
    MAX_RECORD_BYTES, MAX_REVIEW_COMMENTS, MAX_TRIALS, Plant, PlantStatus, RECORD_FORMAT, RECORD_VERSION,
    RecordError, Round, RoundMessages, Summary, TouchedLines, Trial, flagged, locates, normalise_path,
    report_sha256,
};
pub use canonical::{JsonError, parse_strict};
pub use codec::FieldError;
pub use engine::{Engine, Rejection, ScoredReview, rate};
pub use identity::{AgentId, KeyError, KeyFile, Keypair, PublicKey, SignatureBytes};
pub use link::{
    CalibrationLink, LinkedPlant, MAX_CATEGORY_BYTES, MAX_LINK_DOMAINS, MAX_PLANT_PATH_BYTES,
    MAX_ROUND_PLANTS,
};
pub use message::{
    Comment, Content, LeaderboardEntry, LeaderboardQuery, LeaderboardResult, MAX_NAME_CHARS,
    MILLISECONDS_FROM, Message, MessageId, MessageType, OutcomeContent, REVIEW_CHANNEL, RequestContent,
    ReviewContent, ReviewVerdict, clean_name, name_problem, ts_millis,
};
pub use policy::{OutcomeClass, Policy, PolicyError, Standing};
pub use receipt::{
    Receipt, ReceiptCalibration, ReceiptError, ReceiptReview, verify_receipt, verify_receipt_value,
};
pub use scope::{DomainScoring, Outcomes, Scope, ScopeError};
pub use signed::{MAX_MESSAGE_BYTES, MessageError, SignedMessage, sign_value};

// The parts a ledger builds on (revcal-elo's): the rules one message at a time against the
// stored state, the per-scope standings and trusted authorities, a stored body read back
// without checking its signature again, and the hashes and hex the ledger keys rows with.
// revcal-elo does not re-export them.
pub use canonical::{canonical_text, hex, sha256_hex};
pub use codec::{AnonymousQuery, Envelope, anonymous_query, decode_envelope};
pub use engine::{RequestView, calibration_replayed, check_calibration_review, check_outcome, check_review};
pub use link::RoundKey;
pub use scope::{ScopedStandings, TrustSet, outcome_scopes, reported_scores};
pub use signed::{KeyCache, check_message_size};
