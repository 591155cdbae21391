//! Review reputation: signed review messages (the formats are in docs/reputation.md,
//! section 2), Ed25519 signatures over RFC 8785 canonical JSON, an ELO rating engine, an
//! SQLite or PostgreSQL ledger, and signed receipts.
//!
//! - [`SignedMessage::parse`] validates one message (every field, named on error), checks
//!   that `from` is the id of `pubkey` and that `sig` verifies, and computes its id.
//! - [`Engine`] (and [`rate`]) apply the rating rules to an ordered stream, purely.
//! - [`Ledger`] stores messages once by id in SQLite (WAL) or PostgreSQL ([`LedgerLocation`]),
//!   safe under concurrent writers,
//!   keeps ratings materialised in the same transaction, replays, and issues [`Receipt`]s
//!   signed with its own key. [`Ledger::handle`] answers one protocol message.
//!
//! ```
//! use revcal_elo::{Content, Keypair, Ledger, Message, OutcomeContent, RequestContent,
//!                  ReviewContent, SignedMessage, ReviewVerdict, verify_receipt};
//!
//! let author = Keypair::from_seed([1; 32]);
//! let reviewer = Keypair::from_seed([2; 32]);
//! let send = |key: &Keypair, to: &str, content| {
//!     let message = Message { from: key.agent_id(), to: to.into(), ts: 1_700_000_000, content };
//!     SignedMessage::sign(&message, key).unwrap()
//! };
//! let request = send(&author, "#review", Content::Request(RequestContent {
//!     repo: Some("github.com/acme/api".into()), change: Some("PR #7".into()), ..Default::default() }));
//! let review = send(&reviewer, "#review", Content::Review(ReviewContent {
//!     request_id: request.id.clone(), verdict: ReviewVerdict::RequestChanges, comments: vec![], summary: None }));
//! let outcome = send(&author, "#review", Content::Outcome(OutcomeContent {
//!     request_id: request.id.clone(), merged: true, incident: true,
//!     incident_details: Some("nil deref in prod".into()), calibration: None }));
//!
//! let dir = tempfile::tempdir().unwrap();
//! let mut ledger = Ledger::open(dir.path().join("ledger.sqlite")).unwrap();
//! for message in [&request, &review, &outcome] {
//!     ledger.ingest(message).unwrap().unwrap();
//! }
//! // REQUEST_CHANGES + incident: base +25, K 40 for a new reviewer: +25 x 40 / 20 = +50.
//! let board = ledger.leaderboard(None).unwrap();
//! assert_eq!((board[0].elo, board[0].reviews, board[0].accuracy), (1250.0, 1, Some(1.0)));
//! assert!(ledger.replay().unwrap().is_consistent());
//!
//! // A second copy of a message changes nothing.
//! assert!(ledger.ingest(&outcome).unwrap().is_err());
//!
//! // Receipts verify offline with the ledger's public key alone.
//! let receipt = &ledger.receipts(&reviewer.agent_id()).unwrap()[0];
//! let issuer = ledger.issuer_key().public().unwrap();
//! assert!(verify_receipt(&receipt.to_canonical(), &issuer).is_ok());
//! assert!(verify_receipt(&receipt.to_canonical().replace("50", "51"), &issuer).is_err());
//! ```

mod calibration;
mod canonical;
mod codec;
mod engine;
mod identity;
mod ledger;
mod link;
mod message;
mod policy;
mod receipt;
mod scope;
mod signed;

pub use calibration::{
    CalibrationRecord, CategoryFigures, Finding, LOCATE_TOLERANCE, MAX_COMMENT_CHARS, MAX_RECORD_BYTES,
    MAX_REVIEW_COMMENTS, MAX_TRIALS, Plant, PlantStatus, RECORD_FORMAT, RECORD_VERSION, RecordError, Round,
    RoundMessages, Summary, TouchedLines, Trial, flagged, locates, report_sha256,
};
pub use canonical::{JsonError, parse_strict};
pub use codec::FieldError;
pub use engine::{Engine, Rejection, ScoredReview, rate};
pub use identity::{AgentId, KeyError, KeyFile, Keypair, PublicKey, SignatureBytes};
#[cfg(feature = "postgres")]
pub use ledger::PostgresLocation;
pub use ledger::{
    DEFAULT_LEDGER_FILE, Ledger, LedgerError, LedgerLocation, LineOutcome, LocationError, RatingChange,
    Recorded, Recording, Refusal, ReplayReport, Response, Stored,
};
pub use link::{
    CalibrationLink, LinkedPlant, MAX_CATEGORY_BYTES, MAX_LINK_DOMAINS, MAX_PLANT_PATH_BYTES,
    MAX_ROUND_PLANTS,
};
pub use message::{
    Comment, Content, LeaderboardEntry, LeaderboardQuery, LeaderboardResult, MILLISECONDS_FROM, Message,
    MessageId, MessageType, OutcomeContent, REVIEW_CHANNEL, RequestContent, ReviewContent, ReviewVerdict,
    ts_millis,
};
pub use policy::{OutcomeClass, Policy, PolicyError, Standing};
pub use receipt::{
    Receipt, ReceiptCalibration, ReceiptError, ReceiptReview, verify_receipt, verify_receipt_value,
};
pub use scope::{Outcomes, Scope, ScopeError};
pub use signed::{MAX_MESSAGE_BYTES, MessageError, SignedMessage, sign_value};
