//! The reviewer agent: it reads `REVIEW_REQUEST`s in the channel, reviews the unified diff
//! a request carries in `content.diff` (revcal's addition to RFC-001: reviewers get the
//! change itself, not a URL to fetch), and posts a signed `REVIEW`.

use crate::answer::{self, Answer};
use crate::identity::{ChatId, ChatIdentity};
use crate::session::{Session, SessionConfig, SessionError, SessionEvent, unix_millis};
use revcal_elo::{
    Comment, Content, MAX_COMMENT_CHARS, MAX_REVIEW_COMMENTS, Message, MessageId, REVIEW_CHANNEL,
    ReviewContent, ReviewVerdict, SignedMessage,
};
use serde_json::{Value, json};
use std::collections::{HashSet, VecDeque};
use std::sync::Arc;
use std::sync::mpsc;
use std::time::Duration;

/// One finding of a reviewer about a diff.
#[derive(Debug, Clone, PartialEq)]
pub struct DiffFinding {
    /// The file, as the diff names it (`None` when the reviewer gave none).
    pub file: Option<String>,
    /// The line in the new file (`None` when the reviewer gave none).
    pub line: Option<u64>,
    /// What the reviewer said.
    pub body: String,
    /// Whether the finding blocks the change (its severity is critical or major, or one the
    /// scorer does not know: `revcal score`'s rule).
    pub blocking: bool,
}

/// Something that reviews a unified diff. It runs on a thread of its own, so a review may
/// take minutes while the agent stays connected.
pub trait DiffReviewer: Send + Sync {
    /// The reviewer's name, for the review's summary.
    fn name(&self) -> String;
    /// Reviews `diff`; the error is said in words.
    fn review(&self, diff: &str) -> Result<Vec<DiffFinding>, String>;
}

/// The verdict of `findings`: `REQUEST_CHANGES` when any blocks, else `APPROVE` (minor
/// findings are suggestions; they go in as comments).
pub fn verdict_of(findings: &[DiffFinding]) -> ReviewVerdict {
    if findings.iter().any(|finding| finding.blocking) {
        ReviewVerdict::RequestChanges
    } else {
        ReviewVerdict::Approve
    }
}

/// The content of the review of `request_id` with `findings` by `reviewer`: located
/// findings (blocking first) become comments, within the protocol's limits.
pub fn review_content(request_id: MessageId, reviewer: &str, findings: &[DiffFinding]) -> ReviewContent {
    let mut located: Vec<&DiffFinding> =
        findings.iter().filter(|finding| finding.file.as_deref().is_some_and(|f| !f.is_empty())).collect();
    located.sort_by_key(|finding| !finding.blocking);
    let comments: Vec<Comment> = located
        .iter()
        .take(MAX_REVIEW_COMMENTS)
        .map(|finding| {
            let body: String = finding.body.trim().chars().take(MAX_COMMENT_CHARS).collect();
            Comment {
                file: finding.file.clone().unwrap_or_default(),
                line: finding.line.unwrap_or(1).max(1),
                body: if body.trim().is_empty() { "(no text)".to_owned() } else { body },
            }
        })
        .collect();
    let blocking = findings.iter().filter(|finding| finding.blocking).count();
    let summary = format!(
        "{} finding(s), {blocking} blocking, {} located; reviewed by {reviewer}",
        findings.len(),
        located.len()
    );
    ReviewContent { request_id, verdict: verdict_of(findings), comments, summary: Some(summary), name: None }
}

/// What the reviewer agent did: for its log.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ReviewerEvent {
    /// In the channel.
    Joined,
    /// The link was lost (the agent reconnects).
    Disconnected {
        /// Why.
        reason: String,
    },
    /// A request is being reviewed.
    Reviewing {
        /// Its id.
        request_id: String,
    },
    /// A review was posted.
    Reviewed {
        /// The request.
        request_id: String,
        /// The review's id.
        review_id: String,
        /// Its verdict.
        verdict: ReviewVerdict,
        /// Its comments.
        comments: usize,
    },
    /// A request was declined (no diff) or its review failed; the requester is told.
    Declined {
        /// The request.
        request_id: String,
        /// Why.
        reason: String,
    },
    /// The ledger answered a review this agent posted.
    LedgerAnswer {
        /// The answer (`stored`, or `rejected` with its code and reason).
        answer: Value,
    },
}

/// A request to review, as the worker gets it.
struct Job {
    request_id: MessageId,
    msg_id: Option<String>,
    diff: String,
}

/// The reviewer agent.
pub struct ReviewerAgent {
    session: Session,
    reviewer: Arc<dyn DiffReviewer>,
    seen: HashSet<String>,
    queue: VecDeque<Job>,
    busy: bool,
    results: mpsc::Receiver<(Job, Result<Vec<DiffFinding>, String>)>,
    results_sender: mpsc::Sender<(Job, Result<Vec<DiffFinding>, String>)>,
    posted: HashSet<String>,
    tokens: Vec<(u64, String)>,
}

impl std::fmt::Debug for ReviewerAgent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReviewerAgent").field("session", &self.session).finish_non_exhaustive()
    }
}

impl ReviewerAgent {
    /// The agent of `identity`, reviewing with `reviewer`.
    pub fn new(
        identity: ChatIdentity,
        mut config: SessionConfig,
        reviewer: Arc<dyn DiffReviewer>,
    ) -> Result<ReviewerAgent, SessionError> {
        // The ledger agent may create the channel after this agent starts.
        config.wait_for_channel = true;
        let (results_sender, results) = mpsc::channel();
        Ok(ReviewerAgent {
            session: Session::new(identity, config)?,
            reviewer,
            seen: HashSet::new(),
            queue: VecDeque::new(),
            busy: false,
            results,
            results_sender,
            posted: HashSet::new(),
            tokens: Vec::new(),
        })
    }

    /// Runs until `stop` returns true.
    pub fn run(
        &mut self,
        stop: &dyn Fn() -> bool,
        on_event: &mut dyn FnMut(&ReviewerEvent),
    ) -> Result<(), SessionError> {
        while !stop() {
            self.step(Duration::from_millis(200), on_event)?;
        }
        self.session.close();
        Ok(())
    }

    /// One round: reads what has come (all of it, so that the replay a join brings is seen
    /// whole before any review starts), posts finished reviews, starts the next one.
    pub fn step(
        &mut self,
        wait: Duration,
        on_event: &mut dyn FnMut(&ReviewerEvent),
    ) -> Result<(), SessionError> {
        let mut next = self.session.poll(wait)?;
        while let Some(event) = next {
            self.on_session_event(event, on_event)?;
            next = self.session.poll(Duration::ZERO)?;
        }
        while let Ok((job, result)) = self.results.try_recv() {
            self.busy = false;
            self.finish(job, result, on_event)?;
        }
        if !self.busy
            && let Some(job) = self.queue.pop_front()
        {
            if self.posted.contains(job.request_id.as_str()) {
                return Ok(());
            }
            on_event(&ReviewerEvent::Reviewing { request_id: job.request_id.as_str().to_owned() });
            self.busy = true;
            let reviewer = Arc::clone(&self.reviewer);
            let sender = self.results_sender.clone();
            std::thread::spawn(move || {
                let result = reviewer.review(&job.diff);
                let _ = sender.send((job, result));
            });
        }
        Ok(())
    }

    fn on_session_event(
        &mut self,
        event: SessionEvent,
        on_event: &mut dyn FnMut(&ReviewerEvent),
    ) -> Result<(), SessionError> {
        match event {
            SessionEvent::Joined { .. } => on_event(&ReviewerEvent::Joined),
            SessionEvent::Disconnected { reason } => on_event(&ReviewerEvent::Disconnected { reason }),
            SessionEvent::Sent { token, msg_id, .. } => {
                if let (Some(position), Some(msg_id)) =
                    (self.tokens.iter().position(|(sent, _)| *sent == token), msg_id)
                {
                    self.tokens[position].1 = msg_id;
                }
            }
            SessionEvent::Message(message) => {
                let own = self.session.identity().chat_id().clone();
                if let Some(Answer::Statuses { ledger: Some(_), answers, .. }) =
                    Answer::parse(&message.content)
                {
                    for answer in answers {
                        let reply = answer["in_reply_to"].as_str().unwrap_or_default();
                        if self.tokens.iter().any(|(_, msg_id)| msg_id == reply) {
                            on_event(&ReviewerEvent::LedgerAnswer { answer });
                        }
                    }
                    return Ok(());
                }
                let Ok(signed) = SignedMessage::parse(message.content.trim()) else { return Ok(()) };
                let sender = ChatId::of_key(&signed.pubkey);
                match &signed.message.content {
                    // Its own reviews, seen again in the replay after a reconnection.
                    Content::Review(review) if message.from == own.as_str() => {
                        self.posted.insert(review.request_id.as_str().to_owned());
                    }
                    Content::Request(request) if sender.as_str() == message.from => {
                        if signed.message.from == self.session.identity().agent_id()
                            || !self.seen.insert(signed.id.as_str().to_owned())
                        {
                            return Ok(());
                        }
                        match request
                            .extra
                            .get("diff")
                            .and_then(Value::as_str)
                            .filter(|d| !d.trim().is_empty())
                        {
                            Some(diff) => self.queue.push_back(Job {
                                request_id: signed.id.clone(),
                                msg_id: message.msg_id.clone(),
                                diff: diff.to_owned(),
                            }),
                            None if !message.replay => {
                                let reason = "`content.diff`: the request carries no diff; this reviewer reviews the change itself (a unified diff in `content.diff`), never a URL it would have to fetch";
                                self.decline(
                                    &signed.id,
                                    message.msg_id.as_deref(),
                                    "no_diff",
                                    reason,
                                    on_event,
                                )?;
                            }
                            None => {}
                        }
                    }
                    _ => {}
                }
            }
            SessionEvent::Refused { code, message, .. } => {
                tracing::warn!(%code, %message, "the server refused a review");
            }
            SessionEvent::AgentJoined { .. } => {}
        }
        Ok(())
    }

    fn finish(
        &mut self,
        job: Job,
        result: Result<Vec<DiffFinding>, String>,
        on_event: &mut dyn FnMut(&ReviewerEvent),
    ) -> Result<(), SessionError> {
        let findings = match result {
            Ok(findings) => findings,
            Err(error) => {
                let reason = format!("the review failed: {error}");
                return self.decline(
                    &job.request_id,
                    job.msg_id.as_deref(),
                    "review_failed",
                    &reason,
                    on_event,
                );
            }
        };
        let content = review_content(job.request_id.clone(), &self.reviewer.name(), &findings);
        let verdict = content.verdict;
        let comments = content.comments.len();
        let identity = self.session.identity();
        let message = Message {
            from: identity.agent_id(),
            to: REVIEW_CHANNEL.to_owned(),
            ts: unix_millis(),
            content: Content::Review(content),
        };
        let signed = match SignedMessage::sign(&message, identity.keypair()) {
            Ok(signed) => signed,
            Err(error) => {
                let reason = format!("the review does not make a valid message: {error}");
                return self.decline(
                    &job.request_id,
                    job.msg_id.as_deref(),
                    "review_failed",
                    &reason,
                    on_event,
                );
            }
        };
        let token = self.session.send(signed.canonical(), job.msg_id.as_deref())?;
        self.tokens.push((token, String::new()));
        self.posted.insert(job.request_id.as_str().to_owned());
        on_event(&ReviewerEvent::Reviewed {
            request_id: job.request_id.as_str().to_owned(),
            review_id: signed.id.as_str().to_owned(),
            verdict,
            comments,
        });
        Ok(())
    }

    fn decline(
        &mut self,
        request_id: &MessageId,
        msg_id: Option<&str>,
        code: &str,
        reason: &str,
        on_event: &mut dyn FnMut(&ReviewerEvent),
    ) -> Result<(), SessionError> {
        let me = self.session.identity().agent_id().to_string();
        let mut refusal = answer::refusal(code, Some("content.diff"), reason);
        if let Some(map) = refusal.as_object_mut() {
            map.insert("id".into(), json!(request_id.as_str()));
            if let Some(msg_id) = msg_id {
                map.insert("in_reply_to".into(), json!(msg_id));
            }
        }
        self.session.send(&answer::statuses(None, Some(&me), &[refusal]), msg_id)?;
        on_event(&ReviewerEvent::Declined {
            request_id: request_id.as_str().to_owned(),
            reason: reason.to_owned(),
        });
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finding(file: Option<&str>, blocking: bool) -> DiffFinding {
        DiffFinding { file: file.map(str::to_owned), line: Some(3), body: "b".into(), blocking }
    }

    #[test]
    fn the_verdict_follows_the_most_serious_finding() {
        assert_eq!(verdict_of(&[]), ReviewVerdict::Approve);
        assert_eq!(verdict_of(&[finding(Some("a"), false)]), ReviewVerdict::Approve);
        assert_eq!(
            verdict_of(&[finding(Some("a"), false), finding(None, true)]),
            ReviewVerdict::RequestChanges
        );
    }

    #[test]
    fn located_findings_become_comments_within_the_limits() {
        let id = MessageId::of_canonical("x");
        let mut findings: Vec<DiffFinding> = (0..60).map(|_| finding(Some("a.rs"), false)).collect();
        findings.push(finding(Some("b.rs"), true));
        findings.push(finding(None, false));
        findings.push(DiffFinding {
            file: Some("c.rs".into()),
            line: None,
            body: "x".repeat(5000),
            blocking: false,
        });
        let content = review_content(id, "r", &findings);
        assert_eq!(content.comments.len(), MAX_REVIEW_COMMENTS);
        assert_eq!(content.comments[0].file, "b.rs");
        assert_eq!(content.verdict, ReviewVerdict::RequestChanges);
        assert!(content.summary.unwrap().starts_with("63 finding(s), 1 blocking, 62 located"));
    }
}
