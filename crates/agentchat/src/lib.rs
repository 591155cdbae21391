//! revcal on an AgentChat server (docs/agentchat.md): RFC-001's review requests, reviews,
//! outcomes and leaderboard queries posted in a channel (`#review`), each riding as its JSON
//! text in an AgentChat `MSG`.
//!
//! - [`LedgerAgent`] reads every RFC-001 message in the channel, checks it as `revcal elo
//!   ingest` does **and** that the chat sender holds the message's key, stores it once in a
//!   [`revcal_elo::Ledger`] (SQLite or PostgreSQL), and answers in the channel: `revcal elo
//!   handle`'s status or leaderboard result, and the signed receipt of every review an
//!   outcome scores.
//! - [`post`] posts signed messages and waits for the ledger agent's answers, sending each
//!   again until answered (after a reconnection, when an agent joins, on a timer).
//! - [`ReviewerAgent`] reviews the unified diff a request carries (`content.diff`) with any
//!   [`DiffReviewer`] and posts a signed `REVIEW`.
//! - [`Session`] is what the three share: connected with a key (AgentChat's Ed25519
//!   challenge), in the channel, reconnecting with backoff, at most one message a second
//!   (queued, never dropped), pings answered.
//!
//! An `elo keygen` key is an AgentChat identity as it is: [`ChatIdentity`] writes its
//! public key as the PEM text AgentChat hashes into its agent id, a different id from
//! RFC-001's for the same key.
//!
//! ```
//! use revcal_agentchat::{ChatId, ChatIdentity, DiffFinding, verdict_of, public_key_pem};
//! use revcal_elo::{Keypair, ReviewVerdict};
//!
//! let identity = ChatIdentity::new(Keypair::from_seed([7; 32]));
//! // RFC-001's id hashes the raw key; AgentChat's hashes the PEM text Node writes.
//! assert_eq!(identity.pem(), public_key_pem(&identity.keypair().public()));
//! assert_eq!(*identity.chat_id(), ChatId::of_pem(identity.pem()));
//! assert_ne!(identity.chat_id().as_str(), identity.agent_id().as_str());
//!
//! // A reviewer's verdict: any blocking finding requests changes.
//! let nit = DiffFinding { file: Some("a.rs".into()), line: Some(3), body: "naming".into(), blocking: false };
//! assert_eq!(verdict_of(&[nit.clone()]), ReviewVerdict::Approve);
//! let bug = DiffFinding { blocking: true, ..nit };
//! assert_eq!(verdict_of(&[bug]), ReviewVerdict::RequestChanges);
//! ```

mod answer;
mod frame;
mod identity;
mod ledger_agent;
mod poster;
mod reviewer;
mod session;

pub use answer::Answer;
pub use frame::{ChatMessage, MAX_FRAME_BYTES};
pub use identity::{ChatId, ChatIdentity, public_key_pem};
pub use ledger_agent::{AgentError, LedgerAgent, LedgerEvent};
pub use poster::{PostConfig, PostEvent, PostOutcome, ToPost, post};
pub use reviewer::{DiffFinding, DiffReviewer, ReviewerAgent, ReviewerEvent, review_content, verdict_of};
pub use session::{Session, SessionConfig, SessionError, SessionEvent};
