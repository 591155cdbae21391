//! Replay: recompute every rating from the stored messages with the pure engine and compare
//! with what the ledger materialised.

use super::{Ledger, LedgerError};
use revcal_elo_protocol::{KeyCache, SignedMessage};
use serde::Serialize;

/// What a replay found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReplayReport {
    /// Messages replayed.
    pub messages: u64,
    /// Reviewers rated.
    pub reviewers: u64,
    /// Reviews scored.
    pub scored_reviews: u64,
    /// Every difference between the replay and the stored state; empty when they agree.
    pub mismatches: Vec<String>,
}

impl ReplayReport {
    /// True when the stored ratings equal the replayed ones.
    pub fn is_consistent(&self) -> bool {
        self.mismatches.is_empty()
    }
}

impl Ledger {
    /// Recomputes every rating from the stored messages (signatures checked again) in the
    /// order they were stored, and compares with the materialised ratings and scored reviews.
    pub fn replay(&self) -> Result<ReplayReport, LedgerError> {
        let mut engine = self.trusting_engine()?;
        let mut mismatches = Vec::new();
        let mut messages = 0u64;
        let mut keys = KeyCache::default();
        self.storage.each_message(&mut |seq, id_bytes, body| {
            // Stored as 32 bytes; shown as hex in mismatches.
            let id = revcal_elo_protocol::hex(&id_bytes);
            messages += 1;
            match SignedMessage::parse_with(&body, &mut keys) {
                Err(error) => {
                    mismatches.push(format!("message {seq} ({id}): stored body is invalid: {error}"))
                }
                Ok(signed) if signed.id.as_str() != id => {
                    mismatches
                        .push(format!("message {seq}: stored id {id} but its body hashes to {}", signed.id));
                }
                Ok(signed) => {
                    if let Err(rejection) = engine.apply(&signed) {
                        mismatches.push(format!(
                            "message {seq} ({id}): the rules reject it on replay: {rejection}"
                        ));
                    }
                }
            }
        })?;
        let stored = self.standings()?;
        let replayed = engine.standings();
        for (agent, standing) in replayed {
            match stored.get(agent) {
                None => mismatches.push(format!("{agent}: replay rates it, the ledger has no rating")),
                Some(found) if found != standing => {
                    mismatches.push(format!("{agent}: stored {found:?}, replayed {standing:?}"));
                }
                Some(_) => {}
            }
        }
        for agent in stored.keys().filter(|agent| !replayed.contains_key(*agent)) {
            mismatches.push(format!("{agent}: the ledger rates it, replay does not"));
        }
        mismatches.extend(self.scoped_mismatches(&engine)?);
        let stored_scored = self.scored_reviews(None)?;
        if stored_scored != engine.scored() {
            mismatches.push(format!(
                "scored reviews differ: {} stored, {} replayed",
                stored_scored.len(),
                engine.scored().len()
            ));
        }
        Ok(ReplayReport {
            messages,
            reviewers: replayed.len() as u64,
            scored_reviews: engine.scored().len() as u64,
            mismatches,
        })
    }
}
