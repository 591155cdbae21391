//! Replay: recompute everything the ledger keeps from the stored messages with the pure
//! engine and compare with what the ledger holds, row by row.
//!
//! The messages are the record; every other row follows from them (and from the trusted
//! keys). Whoever can write the database can change any row behind revcal's back: a
//! message's text (its signature then fails, or it is no longer the canonical text that was
//! signed), the columns the rules read instead of the text (a request's sender, the outcome
//! that closed it), a rating, a scored review, a latest review, a calibration round. Each such
//! edit is reported naming its table and row. What replay cannot see is a rewrite that keeps
//! everything consistent: messages signed anew by keys the editor holds, or a trusted
//! authority added (docs/reputation.md, "What `elo check` finds").

use super::scoped_storage::LinkRow;
use super::storage::{LatestRow, MessageRow, ScoredRow};
use super::{Ledger, LedgerError};
use revcal_elo_protocol::{AgentId, Content, KeyCache, OutcomeContent, SignedMessage, Standing, hex};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};

/// What a replay found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReplayReport {
    /// Messages replayed.
    pub messages: u64,
    /// Reviewers rated.
    pub reviewers: u64,
    /// Reviews scored.
    pub scored_reviews: u64,
    /// Every difference between the replay and the stored state, each naming its table and
    /// row; empty when they agree.
    pub mismatches: Vec<String>,
}

impl ReplayReport {
    /// True when the stored ratings equal the replayed ones.
    pub fn is_consistent(&self) -> bool {
        self.mismatches.is_empty()
    }
}

/// The most differences reported per table; the rest are counted.
const SHOWN_PER_TABLE: usize = 50;

/// Differences, by table, each table's list cut at [`SHOWN_PER_TABLE`].
#[derive(Default)]
struct Findings {
    by_table: BTreeMap<&'static str, (Vec<String>, usize)>,
    order: Vec<&'static str>,
}

impl Findings {
    fn push(&mut self, table: &'static str, text: String) {
        if !self.by_table.contains_key(table) {
            self.order.push(table);
        }
        let (shown, more) = self.by_table.entry(table).or_default();
        if shown.len() < SHOWN_PER_TABLE {
            shown.push(text);
        } else {
            *more += 1;
        }
    }

    fn into_list(mut self) -> Vec<String> {
        let mut list = Vec::new();
        for table in self.order {
            let Some((shown, more)) = self.by_table.remove(table) else { continue };
            list.extend(shown);
            if more > 0 {
                list.push(format!("{table}: {more} more rows differ"));
            }
        }
        list
    }
}

/// A standing as a mismatch shows it.
fn standing_text(standing: &Standing) -> String {
    format!(
        "rating {}, {} reviews, {} of {} decisive correct",
        standing.rating, standing.reviews, standing.correct, standing.decisive
    )
}

/// The first 16 hex digits of an id (32 bytes, or what a damaged row holds).
fn short(id: &[u8]) -> String {
    let text = hex(id);
    text.get(..16).map_or(text.clone(), str::to_owned)
}

/// What replay expects of the rows beside the messages, gathered while it reads them.
#[derive(Default)]
struct Expected {
    /// Sequence number of each accepted message, by id.
    seq_of: HashMap<[u8; 32], i64>,
    /// The `closed_by` each stored request row holds, by its id.
    stored_closed: Vec<([u8; 32], i64, Option<Vec<u8>>)>,
    /// The public key of each sender, from its first accepted message.
    agents: BTreeMap<String, String>,
    /// Each accepted calibration outcome's round, by outcome id.
    links: BTreeMap<Vec<u8>, LinkRow>,
}

impl Ledger {
    /// Recomputes everything from the stored messages (signatures checked again) in the
    /// order they were stored, and compares with what the ledger holds: each message's row
    /// with the message, the ratings of every scope, the scored reviews, the requests'
    /// latest reviews and outcomes, the senders' keys and the calibration rounds.
    pub fn replay(&self) -> Result<ReplayReport, LedgerError> {
        let mut engine = self.trusting_engine()?;
        let mut findings = Findings::default();
        let mut expected = Expected::default();
        let mut messages = 0u64;
        let mut keys = KeyCache::default();
        self.storage.each_message(&mut |row: MessageRow| {
            messages += 1;
            let place = format!("messages row {} ({})", row.seq, hex(&row.id));
            let signed = match SignedMessage::parse_with(&row.body, &mut keys) {
                Err(error) => {
                    findings.push("messages", format!("{place}: the stored text is not a valid signed message: {error}"));
                    return;
                }
                Ok(signed) => signed,
            };
            if signed.id.to_bytes().as_slice() != row.id.as_slice() {
                findings.push("messages", format!("{place}: its text hashes to {}, not to the stored id", signed.id));
                return;
            }
            if signed.canonical() != row.body {
                findings.push(
                    "messages",
                    format!("{place}: the stored text is not the canonical form of the signed message (it was rewritten)"),
                );
            }
            let message = &signed.message;
            if row.kind != message.message_type().as_str() {
                findings.push("messages", format!("{place}: `type` is {}, the message is a {}", row.kind, message.message_type()));
            }
            if row.sender != message.from.as_str() {
                findings.push("messages", format!("{place}: `sender` is {}, the message's `from` is {}", row.sender, message.from));
            }
            if u64::try_from(row.ts).ok() != Some(message.ts) {
                findings.push("messages", format!("{place}: `ts` is {}, the message's is {}", row.ts, message.ts));
            }
            if let Err(rejection) = engine.apply(&signed) {
                findings.push("messages", format!("{place}: the rules reject it on replay: {rejection}"));
                return;
            }
            let id = signed.id.to_bytes();
            expected.seq_of.insert(id, row.seq);
            expected.agents.entry(message.from.to_string()).or_insert_with(|| signed.pubkey.to_base64());
            match &message.content {
                Content::Request(_) => expected.stored_closed.push((id, row.seq, row.closed_by)),
                _ if row.closed_by.is_some() => findings.push(
                    "messages",
                    format!("{place}: `closed_by` is set on a {}, which is not a request", message.message_type()),
                ),
                _ => {}
            }
            if let Content::Outcome(OutcomeContent { calibration: Some(link), .. }) = &message.content {
                expected.links.insert(id.to_vec(), LinkRow::of(&id, signed.pubkey.to_base64(), link));
            }
        })?;
        self.compare_requests(&engine, &expected, &mut findings)?;
        self.compare_ratings(&engine, &mut findings)?;
        for mismatch in self.scoped_mismatches(&engine)? {
            findings.push("scoped_ratings", mismatch);
        }
        self.compare_scored(&engine, &mut findings)?;
        self.compare_agents(&engine, &expected, &mut findings)?;
        self.compare_links(&expected, &mut findings)?;
        Ok(ReplayReport {
            messages,
            reviewers: engine.standings().len() as u64,
            scored_reviews: engine.scored().len() as u64,
            mismatches: findings.into_list(),
        })
    }

    /// Each request's outcome (`closed_by` of its row) and latest reviews.
    fn compare_requests(
        &self,
        engine: &revcal_elo_protocol::Engine,
        expected: &Expected,
        findings: &mut Findings,
    ) -> Result<(), LedgerError> {
        let mut replayed_latest: HashMap<(i64, String), LatestRow> = HashMap::new();
        let mut closed_by: HashMap<[u8; 32], Option<[u8; 32]>> = HashMap::new();
        for (request_id, view, latest) in engine.requests() {
            let id = request_id.to_bytes();
            closed_by.insert(id, view.closed_by.as_ref().map(|outcome| outcome.to_bytes()));
            let Some(&request_seq) = expected.seq_of.get(&id) else { continue };
            for (reviewer, review_id, verdict) in latest {
                let review = review_id.to_bytes();
                let row = LatestRow {
                    request_seq,
                    reviewer: reviewer.to_string(),
                    review_id: review.to_vec(),
                    verdict: verdict.as_str().to_owned(),
                    seq: expected.seq_of.get(&review).copied().unwrap_or(0),
                };
                replayed_latest.insert((request_seq, reviewer.to_string()), row);
            }
        }
        for (id, seq, stored) in &expected.stored_closed {
            let place = format!("messages row {seq} ({})", hex(id));
            let replayed = closed_by.get(id).copied().flatten();
            match (stored, replayed) {
                (None, None) => {}
                (Some(stored), Some(replayed)) if stored.as_slice() == replayed.as_slice() => {}
                (None, Some(replayed)) => findings.push(
                    "messages",
                    format!(
                        "{place}: `closed_by` is empty, replay closes it with outcome {}",
                        hex(&replayed)
                    ),
                ),
                (Some(stored), None) => findings.push(
                    "messages",
                    format!("{place}: `closed_by` is {}, replay leaves it open", hex(stored)),
                ),
                (Some(stored), Some(replayed)) => findings.push(
                    "messages",
                    format!(
                        "{place}: `closed_by` is {}, replay closes it with outcome {}",
                        hex(stored),
                        hex(&replayed)
                    ),
                ),
            }
        }
        let mut stored_rows = self.storage.all_latest_reviews()?;
        stored_rows.sort_by(|a, b| (a.request_seq, &a.reviewer).cmp(&(b.request_seq, &b.reviewer)));
        for stored in &stored_rows {
            let place = format!("latest_reviews row ({}, {})", stored.request_seq, stored.reviewer);
            match replayed_latest.remove(&(stored.request_seq, stored.reviewer.clone())) {
                None => findings.push("latest_reviews", format!("{place}: replay has no such latest review")),
                Some(replayed) => {
                    if stored.verdict != replayed.verdict {
                        findings.push(
                            "latest_reviews",
                            format!(
                                "{place}: stored verdict {}, replay gives {}",
                                stored.verdict, replayed.verdict
                            ),
                        );
                    }
                    if stored.review_id != replayed.review_id || stored.seq != replayed.seq {
                        findings.push(
                            "latest_reviews",
                            format!(
                                "{place}: stored review {} (message {}), replay gives {} (message {})",
                                short(&stored.review_id),
                                stored.seq,
                                short(&replayed.review_id),
                                replayed.seq
                            ),
                        );
                    }
                }
            }
        }
        let mut missing: Vec<&(i64, String)> = replayed_latest.keys().collect();
        missing.sort();
        for (request_seq, reviewer) in missing {
            findings.push(
                "latest_reviews",
                format!(
                    "latest_reviews row ({request_seq}, {reviewer}): missing; replay has this latest review"
                ),
            );
        }
        Ok(())
    }

    /// The `All` ratings.
    fn compare_ratings(
        &self,
        engine: &revcal_elo_protocol::Engine,
        findings: &mut Findings,
    ) -> Result<(), LedgerError> {
        let stored: BTreeMap<String, Standing> = self.storage.ratings()?.into_iter().collect();
        let replayed: BTreeMap<String, Standing> =
            engine.standings().iter().map(|(agent, standing)| (agent.to_string(), *standing)).collect();
        for (agent, standing) in &replayed {
            match stored.get(agent) {
                None => findings.push(
                    "ratings",
                    format!("ratings row {agent}: missing; replay gives {}", standing_text(standing)),
                ),
                Some(found) if found != standing => findings.push(
                    "ratings",
                    format!(
                        "ratings row {agent}: stored {}; replay gives {}",
                        standing_text(found),
                        standing_text(standing)
                    ),
                ),
                Some(_) => {}
            }
        }
        for agent in stored.keys().filter(|agent| !replayed.contains_key(*agent)) {
            findings.push("ratings", format!("ratings row {agent}: replay rates no such reviewer"));
        }
        Ok(())
    }

    /// The scored reviews, position by position.
    fn compare_scored(
        &self,
        engine: &revcal_elo_protocol::Engine,
        findings: &mut Findings,
    ) -> Result<(), LedgerError> {
        let stored = self.storage.scored_reviews(None)?;
        let replayed: Vec<ScoredRow> = engine
            .scored()
            .iter()
            .map(|scored| ScoredRow {
                review_id: scored.review_id.to_bytes().to_vec(),
                request_id: scored.request_id.to_bytes().to_vec(),
                outcome_id: scored.outcome_id.to_bytes().to_vec(),
                reviewer: scored.reviewer.to_string(),
                requester: scored.requester.to_string(),
                verdict: scored.verdict.as_str().to_owned(),
                incident: scored.incident,
                outcome: scored.outcome.as_str().to_owned(),
                elo_delta: scored.elo_delta,
                rating_after: scored.rating_after,
                ts: i64::try_from(scored.ts).unwrap_or(i64::MAX),
            })
            .collect();
        for (index, (stored, replayed)) in stored.iter().zip(&replayed).enumerate() {
            let place = format!("scored_reviews row {} (review {})", index + 1, short(&stored.review_id));
            let fields: [(&str, String, String); 11] = [
                ("review_id", short(&stored.review_id), short(&replayed.review_id)),
                ("request_id", short(&stored.request_id), short(&replayed.request_id)),
                ("outcome_id", short(&stored.outcome_id), short(&replayed.outcome_id)),
                ("reviewer", stored.reviewer.clone(), replayed.reviewer.clone()),
                ("requester", stored.requester.clone(), replayed.requester.clone()),
                ("verdict", stored.verdict.clone(), replayed.verdict.clone()),
                ("incident", stored.incident.to_string(), replayed.incident.to_string()),
                ("outcome", stored.outcome.clone(), replayed.outcome.clone()),
                ("elo_delta", stored.elo_delta.to_string(), replayed.elo_delta.to_string()),
                ("rating_after", stored.rating_after.to_string(), replayed.rating_after.to_string()),
                ("ts", stored.ts.to_string(), replayed.ts.to_string()),
            ];
            let differ: Vec<String> = fields
                .into_iter()
                .filter(|(_, found, wanted)| found != wanted)
                .map(|(field, found, wanted)| format!("`{field}` is {found}, replay gives {wanted}"))
                .collect();
            if !differ.is_empty() {
                findings.push("scored_reviews", format!("{place}: {}", differ.join("; ")));
            }
        }
        if stored.len() != replayed.len() {
            findings.push(
                "scored_reviews",
                format!(
                    "scored_reviews: {} rows stored, replay scores {} reviews",
                    stored.len(),
                    replayed.len()
                ),
            );
        }
        Ok(())
    }

    /// Each sender's public key, as its first stored message gave it, and its name, as its
    /// latest review that gave one gave it.
    fn compare_agents(
        &self,
        engine: &revcal_elo_protocol::Engine,
        expected: &Expected,
        findings: &mut Findings,
    ) -> Result<(), LedgerError> {
        let rows = self.storage.agents()?;
        let names: BTreeMap<String, Option<String>> =
            rows.iter().map(|(agent, _, name)| (agent.clone(), name.clone())).collect();
        let stored: BTreeMap<String, String> = rows.into_iter().map(|(agent, key, _)| (agent, key)).collect();
        let replayed_names: BTreeMap<String, String> =
            engine.names().iter().map(|(agent, name)| (agent.to_string(), name.clone())).collect();
        for (agent, name) in &names {
            let wanted = replayed_names.get(agent);
            if name.as_ref() != wanted {
                let shown = |name: Option<&String>| {
                    name.map_or_else(|| "none".to_owned(), |name| format!("{name:?}"))
                };
                findings.push(
                    "agents",
                    format!(
                        "agents row {agent}: stored name {}, its own reviews give {}",
                        shown(name.as_ref()),
                        shown(wanted)
                    ),
                );
            }
        }
        for (agent, key) in &expected.agents {
            match stored.get(agent) {
                None => findings.push("agents", format!("agents row {agent}: missing")),
                Some(found) if found != key => {
                    findings.push(
                        "agents",
                        format!("agents row {agent}: stored key {found}, its messages are signed by {key}"),
                    );
                }
                Some(_) => {}
            }
        }
        for agent in stored.keys().filter(|agent| !expected.agents.contains_key(*agent)) {
            findings.push("agents", format!("agents row {agent}: no stored message was sent by it"));
        }
        for (agent, key) in self.storage.authorities()? {
            let id = revcal_elo_protocol::PublicKey::from_base64(&key, "pubkey").map(|key| key.agent_id());
            if id.as_ref().map(AgentId::as_str).ok() != Some(agent.as_str()) {
                findings.push(
                    "authorities",
                    format!("authorities row {agent}: the key {key} is not that agent's"),
                );
            }
        }
        Ok(())
    }

    /// Each calibration round against the outcome it came from.
    fn compare_links(&self, expected: &Expected, findings: &mut Findings) -> Result<(), LedgerError> {
        let mut stored = self.storage.links()?;
        stored.sort_by(|a, b| a.outcome_id.cmp(&b.outcome_id));
        let domains = |text: &str| serde_json::from_str::<Vec<String>>(text).ok();
        let mut seen = std::collections::HashSet::new();
        for row in &stored {
            seen.insert(row.outcome_id.clone());
            let place = format!(
                "calibration_outcomes row ({}, round {} trial {})",
                short(&row.outcome_id),
                row.round,
                row.trial
            );
            let Some(wanted) = expected.links.get(&row.outcome_id) else {
                findings
                    .push("calibration_outcomes", format!("{place}: no stored outcome reports this round"));
                continue;
            };
            if (&row.authority, &row.report, row.round, row.trial)
                != (&wanted.authority, &wanted.report, wanted.round, wanted.trial)
            {
                findings.push(
                    "calibration_outcomes",
                    format!(
                        "{place}: stored authority, report, round or trial differ from its outcome's (report {}, round {} trial {})",
                        short(&wanted.report),
                        wanted.round,
                        wanted.trial
                    ),
                );
            }
            let (found, named) = (domains(&row.domains), domains(&wanted.domains));
            if found != named {
                let found = found.map_or_else(|| row.domains.clone(), |d| format!("{d:?}"));
                let named = named.map_or_else(|| wanted.domains.clone(), |d| format!("{d:?}"));
                findings.push(
                    "calibration_outcomes",
                    format!("{place}: stored domains {found}, its outcome names {named}"),
                );
            }
            let plants =
                |text: Option<&str>| text.map(|text| serde_json::from_str::<Vec<(String, bool)>>(text).ok());
            if row.reviewer != wanted.reviewer
                || plants(row.plants.as_deref()) != plants(wanted.plants.as_deref())
            {
                let shown = |text: &Option<String>| text.clone().unwrap_or_else(|| "none".to_owned());
                findings.push(
                    "calibration_outcomes",
                    format!(
                        "{place}: stored reviewer {} and plants {}, its outcome says reviewer {} and plants {}",
                        shown(&row.reviewer),
                        shown(&row.plants),
                        shown(&wanted.reviewer),
                        shown(&wanted.plants)
                    ),
                );
            }
        }
        for (outcome, wanted) in &expected.links {
            if !seen.contains(outcome) {
                findings.push(
                    "calibration_outcomes",
                    format!(
                        "calibration_outcomes row ({}, round {} trial {}): missing; its outcome is stored",
                        short(outcome),
                        wanted.round,
                        wanted.trial
                    ),
                );
            }
        }
        Ok(())
    }
}
