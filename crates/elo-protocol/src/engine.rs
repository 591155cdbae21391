//! The rating engine: a pure function over an ordered stream of signed messages.
//!
//! The ledger (revcal-elo's `Ledger`) applies the same rules ([`check_review`],
//! [`check_outcome`], [`Standing::score`]) against its stored state; `Ledger::replay` runs
//! this engine over the stored messages and compares.

use crate::identity::{AgentId, PublicKey};
use crate::link::RoundKey;
use crate::message::{Content, MessageId, MessageType, OutcomeContent, ReviewVerdict};
use crate::policy::{OutcomeClass, Policy, Standing};
use crate::scope::{DomainScoring, Scope, ScopedStandings, TrustSet, reported_scores};
use crate::signed::SignedMessage;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap, HashSet};

/// Why a well-formed, correctly signed message was not accepted (or not scored).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Rejection {
    /// The same message (same id) was accepted before.
    #[error("message {id} is already in the ledger")]
    Replayed {
        /// The message id.
        id: MessageId,
    },
    /// `content.request_id` names no known `REVIEW_REQUEST`.
    #[error("`content.request_id`: no REVIEW_REQUEST with id {request_id} is known")]
    UnknownRequest {
        /// The id named.
        request_id: MessageId,
    },
    /// A reviewer reviewing its own request.
    #[error("self-review: {reviewer} cannot review its own request {request_id}")]
    SelfReview {
        /// The request.
        request_id: MessageId,
        /// The reviewer (and requester).
        reviewer: AgentId,
    },
    /// A review sent after the request's outcome.
    #[error("review after the outcome: request {request_id} was closed by outcome {outcome_id}")]
    ReviewAfterOutcome {
        /// The request.
        request_id: MessageId,
        /// The outcome that closed it.
        outcome_id: MessageId,
    },
    /// An outcome from someone other than the request's sender.
    #[error(
        "`from`: only the requester {requester} may report the outcome of request {request_id}, not {sender}"
    )]
    OutcomeNotFromRequester {
        /// The request.
        request_id: MessageId,
        /// Who sent the request.
        requester: AgentId,
        /// Who sent the outcome.
        sender: AgentId,
    },
    /// A second outcome for one request.
    #[error("second outcome: request {request_id} already has outcome {outcome_id}")]
    SecondOutcome {
        /// The request.
        request_id: MessageId,
        /// The outcome accepted first.
        outcome_id: MessageId,
    },
    /// A query or an answer, which the ledger answers or sends but does not store.
    #[error("`type`: {message_type} is not stored in the ledger (send REVIEW_LEADERBOARD to `handle`)")]
    NotStored {
        /// The type.
        message_type: MessageType,
    },
    /// A calibration outcome whose plant statuses contradict the verdict of the reviewer
    /// they describe: a review that caught a plant requests changes, one that caught none
    /// approves.
    #[error(
        "`content.calibration.plants`: the statuses say {reviewer} caught {caught} of {plants} plants, but its \
         review's verdict is {verdict}: a review that caught a plant requests changes, one that caught none approves",
        verdict = .verdict.as_str()
    )]
    CalibrationContradictsReview {
        /// The reviewer the link names.
        reviewer: AgentId,
        /// Its latest review's verdict.
        verdict: ReviewVerdict,
        /// Plants the statuses say it caught.
        caught: usize,
        /// Plants of the round.
        plants: usize,
    },
    /// A calibration round whose outcome, from the same authority, is already stored: a
    /// calibration counts once, whatever else differs in its messages.
    #[error(
        "`content.calibration`: round {round}, trial {trial} of calibration report {report_sha256} is already \
         recorded by the same authority (outcome {outcome_id}); a calibration counts once"
    )]
    CalibrationReplayed {
        /// The report's hash.
        report_sha256: String,
        /// The round.
        round: u64,
        /// The trial.
        trial: u64,
        /// The outcome stored for it.
        outcome_id: MessageId,
    },
}

impl Rejection {
    /// A short, stable code for the reason (`replayed`, `unknown_request`, ...).
    pub fn code(&self) -> &'static str {
        match self {
            Rejection::Replayed { .. } => "replayed",
            Rejection::UnknownRequest { .. } => "unknown_request",
            Rejection::SelfReview { .. } => "self_review",
            Rejection::ReviewAfterOutcome { .. } => "review_after_outcome",
            Rejection::OutcomeNotFromRequester { .. } => "outcome_not_from_requester",
            Rejection::SecondOutcome { .. } => "second_outcome",
            Rejection::NotStored { .. } => "not_stored",
            Rejection::CalibrationReplayed { .. } => "calibration_replayed",
            Rejection::CalibrationContradictsReview { .. } => "calibration_contradicts_review",
        }
    }

    /// The field of the message at fault, when there is one (`content.request_id`, `from`,
    /// `type`, `content.calibration`; none for a replayed message).
    pub fn field(&self) -> Option<String> {
        let field = match self {
            Rejection::UnknownRequest { .. }
            | Rejection::ReviewAfterOutcome { .. }
            | Rejection::SecondOutcome { .. } => "content.request_id",
            Rejection::SelfReview { .. } | Rejection::OutcomeNotFromRequester { .. } => "from",
            Rejection::NotStored { .. } => "type",
            Rejection::CalibrationReplayed { .. } => "content.calibration",
            Rejection::CalibrationContradictsReview { .. } => "content.calibration.plants",
            Rejection::Replayed { .. } => return None,
        };
        Some(field.to_owned())
    }
}

/// What the rules need to know about a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestView {
    /// Who sent it.
    pub requester: AgentId,
    /// The outcome that closed it, if any.
    pub closed_by: Option<MessageId>,
}

/// May `reviewer` review this request now?
pub fn check_review(
    request_id: &MessageId,
    request: Option<&RequestView>,
    reviewer: &AgentId,
) -> Result<(), Rejection> {
    let request = request.ok_or_else(|| Rejection::UnknownRequest { request_id: request_id.clone() })?;
    if let Some(outcome_id) = &request.closed_by {
        return Err(Rejection::ReviewAfterOutcome {
            request_id: request_id.clone(),
            outcome_id: outcome_id.clone(),
        });
    }
    if &request.requester == reviewer {
        return Err(Rejection::SelfReview { request_id: request_id.clone(), reviewer: reviewer.clone() });
    }
    Ok(())
}

/// May `sender` report this request's outcome now?
pub fn check_outcome(
    request_id: &MessageId,
    request: Option<&RequestView>,
    sender: &AgentId,
) -> Result<(), Rejection> {
    let request = request.ok_or_else(|| Rejection::UnknownRequest { request_id: request_id.clone() })?;
    if &request.requester != sender {
        return Err(Rejection::OutcomeNotFromRequester {
            request_id: request_id.clone(),
            requester: request.requester.clone(),
            sender: sender.clone(),
        });
    }
    if let Some(outcome_id) = &request.closed_by {
        return Err(Rejection::SecondOutcome {
            request_id: request_id.clone(),
            outcome_id: outcome_id.clone(),
        });
    }
    Ok(())
}

/// May this calibration outcome score the request's latest reviews (reviewer and verdict)?
/// When its link names the reviewer the calibration ran and says which plants it caught,
/// that reviewer's latest review must agree: `REQUEST_CHANGES` when it caught any,
/// `APPROVE` when it caught none. (Without a review of that reviewer nothing is scored for
/// it, and nothing contradicts.)
pub fn check_calibration_review(
    outcome: &OutcomeContent,
    latest: &[(AgentId, ReviewVerdict)],
) -> Result<(), Rejection> {
    let Some(link) = &outcome.calibration else { return Ok(()) };
    let Some(reviewer) = &link.reviewer else { return Ok(()) };
    if link.plants.is_empty() {
        return Ok(());
    }
    let caught =
        link.plants.iter().filter(|plant| plant.status == Some(revcal_record::PlantStatus::Caught)).count();
    let Some((_, verdict)) = latest.iter().find(|(agent, _)| agent == reviewer) else { return Ok(()) };
    let agrees = match verdict {
        ReviewVerdict::RequestChanges => caught > 0,
        ReviewVerdict::Approve => caught == 0,
        ReviewVerdict::Comment => false,
    };
    if agrees {
        return Ok(());
    }
    Err(Rejection::CalibrationContradictsReview {
        reviewer: reviewer.clone(),
        verdict: *verdict,
        caught,
        plants: link.plants.len(),
    })
}

/// One review scored by an outcome: what a receipt certifies.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScoredReview {
    /// The review.
    pub review_id: MessageId,
    /// The request reviewed.
    pub request_id: MessageId,
    /// The outcome that scored it.
    pub outcome_id: MessageId,
    /// The reviewer.
    pub reviewer: AgentId,
    /// The requester.
    pub requester: AgentId,
    /// The verdict scored.
    pub verdict: ReviewVerdict,
    /// Whether the change caused an incident.
    pub incident: bool,
    /// The class of the verdict against the outcome.
    pub outcome: OutcomeClass,
    /// The applied delta.
    pub elo_delta: f64,
    /// The reviewer's rating after this review.
    pub rating_after: f64,
    /// The outcome's `ts`.
    pub ts: u64,
}

#[derive(Debug, Clone)]
struct RequestState {
    view: RequestView,
    /// Each reviewer's latest review: (reviewer, review id, verdict), in arrival order.
    latest: Vec<(AgentId, MessageId, ReviewVerdict)>,
}

/// The engine's state after a prefix of the stream.
#[derive(Debug, Clone)]
pub struct Engine {
    policy: Policy,
    seen: HashSet<MessageId>,
    requests: HashMap<MessageId, RequestState>,
    standings: BTreeMap<AgentId, Standing>,
    scored: Vec<ScoredReview>,
    /// The authorities whose calibration outcomes are verified.
    trusted: TrustSet,
    /// The standings of each scope but `All` (verified, reported, domains).
    scoped: ScopedStandings,
    /// The calibration rounds recorded, with their outcome.
    rounds: HashMap<RoundKey, MessageId>,
    /// Each reviewer's name, from its latest accepted review that gave one.
    names: BTreeMap<AgentId, String>,
}

impl Engine {
    /// An engine with no messages yet.
    pub fn new(policy: Policy) -> Engine {
        Engine {
            policy,
            seen: HashSet::new(),
            requests: HashMap::new(),
            standings: BTreeMap::new(),
            scored: Vec::new(),
            trusted: TrustSet::default(),
            scoped: ScopedStandings::default(),
            rounds: HashMap::new(),
            names: BTreeMap::new(),
        }
    }

    /// Trusts `authority`: its calibration outcomes (`content.calibration`) are verified.
    /// Trust holds for the whole stream, earlier messages included, as in a ledger.
    pub fn trust(&mut self, authority: &PublicKey) {
        self.trusted.insert(authority);
    }

    /// Applies the next message; on success returns the reviews it scored (outcomes only).
    pub fn apply(&mut self, signed: &SignedMessage) -> Result<Vec<ScoredReview>, Rejection> {
        if self.seen.contains(&signed.id) {
            return Err(Rejection::Replayed { id: signed.id.clone() });
        }
        let sender = &signed.message.from;
        let scored = match &signed.message.content {
            Content::Request(_) => {
                let view = RequestView { requester: sender.clone(), closed_by: None };
                self.requests.insert(signed.id.clone(), RequestState { view, latest: Vec::new() });
                Vec::new()
            }
            Content::Review(review) => {
                let request = self.requests.get_mut(&review.request_id);
                check_review(&review.request_id, request.as_ref().map(|r| &r.view), sender)?;
                if let Some(request) = request {
                    request.latest.retain(|(reviewer, _, _)| reviewer != sender);
                    request.latest.push((sender.clone(), signed.id.clone(), review.verdict));
                }
                self.standings.entry(sender.clone()).or_insert_with(|| Standing::new(&self.policy));
                if let Some(name) = &review.name {
                    self.names.insert(sender.clone(), name.clone());
                }
                Vec::new()
            }
            Content::Outcome(outcome) => {
                let request = self.requests.get_mut(&outcome.request_id);
                check_outcome(&outcome.request_id, request.as_ref().map(|r| &r.view), sender)?;
                let Some(request) = request else { return Ok(Vec::new()) };
                // As a ledger checks them: the statuses against the review first, then the
                // round against those recorded.
                let latest: Vec<(AgentId, ReviewVerdict)> = request
                    .latest
                    .iter()
                    .map(|(reviewer, _, verdict)| (reviewer.clone(), *verdict))
                    .collect();
                check_calibration_review(outcome, &latest)?;
                let authority = signed.pubkey.to_base64();
                let round = outcome.calibration.as_ref().map(|link| RoundKey::of(authority.clone(), link));
                if let Some(outcome_id) = round.as_ref().and_then(|round| self.rounds.get(round)) {
                    return Err(calibration_replayed(outcome, outcome_id));
                }
                let verified = round.is_some() && self.trusted.contains(&authority);
                let scoring = outcome.calibration.as_ref().filter(|_| verified).map(DomainScoring::of);
                request.view.closed_by = Some(signed.id.clone());
                let mut scored = Vec::with_capacity(request.latest.len());
                for (reviewer, review_id, verdict) in &request.latest {
                    let standing =
                        self.standings.entry(reviewer.clone()).or_insert_with(|| Standing::new(&self.policy));
                    let class = OutcomeClass::of(*verdict, outcome.incident);
                    let elo_delta = standing.score(&self.policy, class);
                    let scores = match &scoring {
                        Some(scoring) => scoring.scores(reviewer.as_str(), class),
                        None => reported_scores(class),
                    };
                    self.scoped.score_each(&self.policy, &scores, reviewer.as_str());
                    scored.push(ScoredReview {
                        review_id: review_id.clone(),
                        request_id: outcome.request_id.clone(),
                        outcome_id: signed.id.clone(),
                        reviewer: reviewer.clone(),
                        requester: sender.clone(),
                        verdict: *verdict,
                        incident: outcome.incident,
                        outcome: class,
                        elo_delta,
                        rating_after: standing.rating,
                        ts: signed.message.ts,
                    });
                }
                self.scored.extend(scored.iter().cloned());
                if let Some(round) = round {
                    self.rounds.insert(round, signed.id.clone());
                }
                scored
            }
            Content::Leaderboard(_) | Content::LeaderboardResult(_) => {
                return Err(Rejection::NotStored { message_type: signed.message.message_type() });
            }
        };
        self.seen.insert(signed.id.clone());
        Ok(scored)
    }

    /// Every request accepted so far: its id, what the rules know of it (its requester and
    /// the outcome that closed it), and each reviewer's latest review of it (reviewer,
    /// review id, verdict) in the order they came. What a ledger materialises beside its
    /// messages, for a replay to compare.
    pub fn requests(
        &self,
    ) -> impl Iterator<Item = (&MessageId, &RequestView, &[(AgentId, MessageId, ReviewVerdict)])> {
        self.requests.iter().map(|(id, state)| (id, &state.view, state.latest.as_slice()))
    }

    /// Every reviewer's standing (reviewers appear with their first accepted review).
    pub fn standings(&self) -> &BTreeMap<AgentId, Standing> {
        &self.standings
    }

    /// Every reviewer's standing in `scope` (in a scope other than `All`, reviewers appear
    /// with their first review scored in it).
    pub fn standings_in(&self, scope: &Scope) -> BTreeMap<AgentId, Standing> {
        match scope.key() {
            None => self.standings.clone(),
            Some(key) => self.scoped.of_scope(&key),
        }
    }

    /// The standings of every scope but `All`.
    pub fn scoped(&self) -> &ScopedStandings {
        &self.scoped
    }

    /// Every scored review so far, in scoring order.
    pub fn scored(&self) -> &[ScoredReview] {
        &self.scored
    }

    /// Each reviewer's name, from its latest accepted review that gave one.
    pub fn names(&self) -> &BTreeMap<AgentId, String> {
        &self.names
    }

    /// The policy in force.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }
}

/// The refusal of a calibration round already recorded as `outcome_id`.
pub fn calibration_replayed(outcome: &OutcomeContent, outcome_id: &MessageId) -> Rejection {
    let link = outcome.calibration.as_ref();
    Rejection::CalibrationReplayed {
        report_sha256: link.map(|link| link.report_sha256.clone()).unwrap_or_default(),
        round: link.map_or(0, |link| link.round),
        trial: link.map_or(0, |link| link.trial),
        outcome_id: outcome_id.clone(),
    }
}

/// Rates a whole stream: every reviewer's standing, and each rejected message with its
/// position in the stream and the reason.
pub fn rate<'a>(
    messages: impl IntoIterator<Item = &'a SignedMessage>,
    policy: Policy,
) -> (BTreeMap<AgentId, Standing>, Vec<(usize, Rejection)>) {
    let mut engine = Engine::new(policy);
    let mut rejected = Vec::new();
    for (index, message) in messages.into_iter().enumerate() {
        if let Err(rejection) = engine.apply(message) {
            rejected.push((index, rejection));
        }
    }
    (engine.standings, rejected)
}
