//! A calibration record as RFC-001 messages. Per trial of each round, in the record's
//! order: a `REVIEW_REQUEST` from the calibrating authority, the reviewer's `REVIEW` signed
//! with the reviewer's own key (`REQUEST_CHANGES` with its located findings as comments
//! when it flagged the change, else `APPROVE`), and a `REVIEW_OUTCOME` from the authority
//! with `incident` true exactly when the round carried a plant and `content.calibration`
//! naming the round. Every `ts` is the record's: the same record and keys always give the
//! same messages, and so the same ids.

use super::{CalibrationRecord, MAX_COMMENT_CHARS, MAX_REVIEW_COMMENTS, RecordError, Round, Trial};
use crate::identity::{AgentId, Keypair};
use crate::link::{CalibrationLink, LinkedPlant, MAX_PLANT_PATH_BYTES};
use crate::message::{
    Comment, Content, Message, OutcomeContent, REVIEW_CHANNEL, RequestContent, ReviewContent, ReviewVerdict,
    clean_name,
};
use crate::signed::{MAX_MESSAGE_BYTES, MessageError, SignedMessage};
use serde_json::{Map, json};

/// Plants an outcome's `incident_details` names before it says how many more there are.
const DETAILED_PLANTS: usize = 10;

/// The three messages of one trial of one round.
#[derive(Debug, Clone, PartialEq)]
pub struct RoundMessages {
    /// The round.
    pub round: u64,
    /// The trial.
    pub trial: u64,
    /// True when the round carried a plant.
    pub planted: bool,
    /// The authority's `REVIEW_REQUEST`.
    pub request: SignedMessage,
    /// The reviewer's `REVIEW`.
    pub review: SignedMessage,
    /// The authority's `REVIEW_OUTCOME`, with `content.calibration`.
    pub outcome: SignedMessage,
}

impl RoundMessages {
    /// The three messages, in the order they are stored.
    pub fn messages(&self) -> [&SignedMessage; 3] {
        [&self.request, &self.review, &self.outcome]
    }
}

impl CalibrationRecord {
    /// The record as signed messages: `authority` signs requests and outcomes, `reviewer`
    /// the reviews. Deterministic: Ed25519 signatures are, and every `ts` is the record's.
    pub fn messages(
        &self,
        authority: &Keypair,
        reviewer: &Keypair,
    ) -> Result<Vec<RoundMessages>, RecordError> {
        if authority.agent_id() == reviewer.agent_id() {
            return Err(RecordError::SameKey { agent: authority.agent_id().to_string() });
        }
        let categories = self.categories();
        let mut rounds = Vec::with_capacity(self.summary.reviews as usize);
        for round in &self.rounds {
            for trial in &round.trials {
                let sign = |key: &Keypair, content: Content| {
                    let message =
                        Message { from: key.agent_id(), to: REVIEW_CHANNEL.into(), ts: self.ts, content };
                    let signed = SignedMessage::sign(&message, key).map_err(|source| {
                        RecordError::Message { round: round.round, trial: trial.trial, source }
                    })?;
                    if signed.canonical().len() > MAX_MESSAGE_BYTES {
                        let bytes = signed.canonical().len();
                        let source = MessageError::TooLarge { bytes };
                        return Err(RecordError::Message { round: round.round, trial: trial.trial, source });
                    }
                    Ok(signed)
                };
                let request = sign(authority, Content::Request(self.request(round, trial)))?;
                // A reviewer's findings are its own text, however long; the review keeps at
                // most MAX_REVIEW_COMMENTS of them, each path and text cut, so that even
                // text escaped six times over in JSON (control characters) stays far within
                // the message limit: 50 x (1024 + 1000) x 6 bytes is about 600 KiB.
                let mut content = review(round, trial, &request);
                // The name is the reviewer's own to give: its review, signed with its key,
                // carries the calibration's name for it.
                content.name = clean_name(&self.reviewer);
                let review = sign(reviewer, Content::Review(content))?;
                let link = self.link(round, trial, &categories, reviewer.agent_id());
                let outcome = sign(authority, Content::Outcome(outcome(round, &request, link)))?;
                rounds.push(RoundMessages {
                    round: round.round,
                    trial: trial.trial,
                    planted: round.is_planted(),
                    request,
                    review,
                    outcome,
                });
            }
        }
        Ok(rounds)
    }

    /// The request: the change to review, named by the calibration, round and trial. It
    /// says nothing of plants: that is the outcome's to say.
    fn request(&self, round: &Round, trial: &Trial) -> RequestContent {
        let short = &self.report_sha256[..16];
        let commit = round.commit.as_deref().unwrap_or(&self.commit);
        let mut calibration = Map::new();
        calibration.insert("report_sha256".into(), json!(self.report_sha256));
        calibration.insert("round".into(), json!(round.round));
        calibration.insert("trial".into(), json!(trial.trial));
        calibration.insert("commit".into(), json!(commit));
        calibration.insert("reviewer".into(), json!(self.reviewer));
        if let Some(entry) = &round.entry {
            calibration.insert("entry".into(), json!(entry));
        }
        let mut extra = Map::new();
        extra.insert("calibration".into(), calibration.into());
        RequestContent {
            title: Some(format!(
                "Calibration of {}: round {}, trial {}",
                self.reviewer, round.round, trial.trial
            )),
            change: Some(format!(
                "calibration {short} round {} trial {} (commit {commit})",
                round.round, trial.trial
            )),
            repo: self.repo.clone(),
            extra,
            ..RequestContent::default()
        }
    }

    /// The outcome's link to the round: a planted round counts in its plants' categories,
    /// each plant by its status in this trial; a clean round in every category the
    /// calibration planted. `reviewer` is the reviewer the statuses describe.
    fn link(
        &self,
        round: &Round,
        trial: &Trial,
        categories: &[String],
        reviewer: AgentId,
    ) -> CalibrationLink {
        let plants: Vec<LinkedPlant> = round
            .plants
            .iter()
            .zip(&trial.statuses)
            .map(|(plant, status)| LinkedPlant {
                file: plant.file.clone(),
                line: plant.line,
                category: plant.category.clone(),
                status: Some(*status),
            })
            .collect();
        let domains =
            if plants.is_empty() { categories.to_vec() } else { CalibrationLink::categories_of(&plants) };
        CalibrationLink {
            report_sha256: self.report_sha256.clone(),
            round: round.round,
            trial: trial.trial,
            entry: round.entry.clone(),
            plants,
            domains,
            reviewer: Some(reviewer),
        }
    }
}

/// The reviewer's verdict: `REQUEST_CHANGES` with its located findings when it flagged the
/// change, `APPROVE` otherwise.
fn review(round: &Round, trial: &Trial, request: &SignedMessage) -> ReviewContent {
    let count = trial.findings.len();
    if !trial.flagged {
        let place = if round.is_planted() {
            "none caught a planted bug"
        } else {
            "none on a line the change touched"
        };
        return ReviewContent {
            request_id: request.id.clone(),
            verdict: ReviewVerdict::Approve,
            comments: Vec::new(),
            summary: Some(format!("{} located, {place}", findings(count))),
            name: None,
        };
    }
    let comments: Vec<Comment> = trial
        .findings
        .iter()
        .take(MAX_REVIEW_COMMENTS)
        .map(|finding| Comment {
            file: cut_path(&finding.file),
            line: finding.line,
            body: cut(&finding.body),
        })
        .collect();
    let kept = if count > MAX_REVIEW_COMMENTS {
        format!(" (the first {MAX_REVIEW_COMMENTS} as comments)")
    } else {
        String::new()
    };
    ReviewContent {
        request_id: request.id.clone(),
        verdict: ReviewVerdict::RequestChanges,
        comments,
        summary: Some(format!("{} located{kept}", findings(count))),
        name: None,
    }
}

/// The authority's outcome: an incident exactly when the round carried a plant, never
/// merged (a calibration's change is not).
fn outcome(round: &Round, request: &SignedMessage, link: CalibrationLink) -> OutcomeContent {
    let incident_details = round.is_planted().then(|| {
        let mut named: Vec<String> = round
            .plants
            .iter()
            .take(DETAILED_PLANTS)
            .map(|plant| format!("{} at {}:{}", plant.category, plant.file, plant.line))
            .collect();
        if round.plants.len() > DETAILED_PLANTS {
            named.push(format!("and {} more", round.plants.len() - DETAILED_PLANTS));
        }
        format!("planted by calibration {}: {}", link.short_report(), named.join(", "))
    });
    OutcomeContent {
        request_id: request.id.clone(),
        merged: false,
        incident: round.is_planted(),
        incident_details,
        calibration: Some(link),
    }
}

fn findings(count: usize) -> String {
    if count == 1 { "1 finding".to_owned() } else { format!("{count} findings") }
}

/// A finding's text cut to [`MAX_COMMENT_CHARS`] characters, saying so (`(no text)` for a
/// blank one: a comment's body is never blank).
fn cut(body: &str) -> String {
    if body.trim().is_empty() {
        return "(no text)".to_owned();
    }
    match body.char_indices().nth(MAX_COMMENT_CHARS) {
        None => body.to_owned(),
        Some((end, _)) => format!("{} [cut at {MAX_COMMENT_CHARS} characters]", &body[..end]),
    }
}

/// A finding's path cut to [`MAX_PLANT_PATH_BYTES`] (on a character boundary), and never
/// blank.
fn cut_path(path: &str) -> String {
    if path.trim().is_empty() {
        return "(no file)".to_owned();
    }
    let mut end = path.len().min(MAX_PLANT_PATH_BYTES);
    while !path.is_char_boundary(end) {
        end -= 1;
    }
    path[..end].to_owned()
}
