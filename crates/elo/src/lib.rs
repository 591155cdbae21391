//! Review reputation: signed review messages (the formats are in docs/reputation.md,
//! section 2), Ed25519 signatures over RFC 8785 canonical JSON, an ELO rating engine, an
//! SQLite or PostgreSQL ledger, and signed receipts.
//!
//! This crate is the ledger; the protocol (messages, signatures, the rating rules,
//! calibration records, receipts) is `revcal-elo-protocol`, re-exported here under the same
//! names. An embedder that only signs, verifies or rates messages can depend on
//! `revcal-elo-protocol` alone and build no database client.
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
//!     request_id: request.id.clone(), verdict: ReviewVerdict::RequestChanges, comments: vec![], summary: None, name: None }));
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

mod ledger;

#[cfg(feature = "postgres")]
pub use ledger::PostgresLocation;
pub use ledger::{
    DEFAULT_LEDGER_FILE, Ledger, LedgerError, LedgerLocation, LineOutcome, LocationError, RatingChange,
    Recorded, Recording, Refusal, ReplayReport, Response, Stored,
};
pub use revcal_elo_protocol::{
    AgentId, CalibrationLink, CalibrationRecord, CategoryFigures, ChangedFiles, Comment, Content,
    DomainScoring, Engine, FieldError, Finding, JsonError, KeyError, KeyFile, Keypair, LOCATE_TOLERANCE,
    LeaderboardEntry, LeaderboardQuery, LeaderboardResult, LinkedPlant, MAX_CATEGORY_BYTES,
    MAX_COMMENT_CHARS, MAX_LINK_DOMAINS, MAX_MESSAGE_BYTES, MAX_NAME_CHARS, MAX_PLANT_PATH_BYTES,
    MAX_RECORD_BYTES, MAX_REVIEW_COMMENTS, MAX_ROUND_PLANTS, MAX_TRIALS, MILLISECONDS_FROM, Message,
    MessageError, MessageId, MessageType, OutcomeClass, OutcomeContent, Outcomes, Plant, PlantStatus, Policy,
    PolicyError, PublicKey, RECORD_FORMAT, RECORD_VERSION, REVIEW_CHANNEL, Receipt, ReceiptCalibration,
    ReceiptError, ReceiptReview, RecordError, Rejection, RequestContent, ReviewContent, ReviewVerdict, Round,
    RoundMessages, Scope, ScopeError, ScoredReview, SignatureBytes, SignedMessage, Standing, Summary,
    TouchedLines, Trial, clean_name, flagged, locates, name_problem, normalise_path, parse_strict, rate,
    report_sha256, sign_value, ts_millis, verify_receipt, verify_receipt_value,
};
