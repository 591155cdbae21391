//! A ledger agent, posters and a reviewer agent in `#review` of a real server: stored once,
//! answered, rated as RFC-001 says, receipts that verify with the ledger's key.

use crate::server::AgentChatServer;
use revcal_agentchat::{
    ChatIdentity, DiffFinding, DiffReviewer, LedgerAgent, LedgerEvent, PostConfig, PostOutcome,
    ReviewerAgent, ReviewerEvent, SessionConfig, ToPost, post,
};
use revcal_elo::{
    Content, Keypair, Ledger, Message, OutcomeContent, RequestContent, ReviewContent, ReviewVerdict,
    SignedMessage, verify_receipt,
};
use serde_json::json;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// A ledger agent on its own thread, stopped and joined on drop.
pub(crate) struct RunningAgent {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<Ledger>>,
    pub(crate) events: Arc<Mutex<Vec<LedgerEvent>>>,
}

impl RunningAgent {
    pub(crate) fn start(url: &str, key: Keypair, ledger: Ledger) -> RunningAgent {
        let stop = Arc::new(AtomicBool::new(false));
        let events = Arc::new(Mutex::new(Vec::new()));
        let config = SessionConfig::new(url, "ledger", "#review");
        let mut agent = LedgerAgent::new(ChatIdentity::new(key), ledger, config).unwrap();
        let (flag, log) = (Arc::clone(&stop), Arc::clone(&events));
        let thread = std::thread::spawn(move || {
            agent
                .run(&|| flag.load(Ordering::SeqCst), &mut |event| log.lock().unwrap().push(event.clone()))
                .unwrap();
            agent.into_ledger()
        });
        RunningAgent { stop, thread: Some(thread), events }
    }

    /// Stops the agent and gives its ledger back.
    pub(crate) fn stop(mut self) -> Ledger {
        self.stop.store(true, Ordering::SeqCst);
        self.thread.take().unwrap().join().unwrap()
    }
}

impl Drop for RunningAgent {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

pub(crate) fn sign(key: &Keypair, content: Content) -> SignedMessage {
    let message = Message { from: key.agent_id(), to: "#review".into(), ts: 1_700_000_000_000, content };
    SignedMessage::sign(&message, key).unwrap()
}

pub(crate) fn post_as(url: &str, key: &Keypair, messages: &[SignedMessage]) -> Vec<PostOutcome> {
    let config = PostConfig {
        session: SessionConfig::new(url, "poster", "#review"),
        wait: Duration::from_secs(120),
        resend_every: Duration::from_secs(30),
        issuer: None,
    };
    let to_post: Vec<ToPost> = messages.iter().map(ToPost::signed).collect();
    post(ChatIdentity::new(key.clone()), &config, &to_post, &mut |_| {}).unwrap()
}

#[test]
fn a_request_a_review_and_an_outcome_are_stored_once_answered_and_receipted() {
    let ledger_key = Keypair::from_seed([10; 32]);
    let genesis = ChatIdentity::new(ledger_key.clone()).chat_id().hex().to_owned();
    let Some(server) = AgentChatServer::start("a_request_a_review_and_an_outcome", Some(&genesis)) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let ledger = Ledger::open(dir.path().join("ledger.sqlite")).unwrap();
    let issuer = ledger.issuer_key().public().unwrap();
    let agent = RunningAgent::start(&server.url(), ledger_key, ledger);

    let (author, reviewer) = (Keypair::from_seed([1; 32]), Keypair::from_seed([2; 32]));
    let request = sign(
        &author,
        Content::Request(RequestContent { title: Some("Fix it".into()), ..Default::default() }),
    );
    let outcomes = post_as(&server.url(), &author, std::slice::from_ref(&request));
    let PostOutcome::Stored { answer, receipts } = &outcomes[0] else { panic!("{outcomes:?}") };
    assert_eq!(answer["id"], request.id.as_str());
    assert!(receipts.is_empty());

    let review = sign(
        &reviewer,
        Content::Review(ReviewContent {
            request_id: request.id.clone(),
            verdict: ReviewVerdict::RequestChanges,
            comments: vec![],
            summary: None,
            name: None,
        }),
    );
    assert!(matches!(post_as(&server.url(), &reviewer, &[review])[0], PostOutcome::Stored { .. }));

    let outcome = sign(
        &author,
        Content::Outcome(OutcomeContent {
            request_id: request.id.clone(),
            merged: true,
            incident: true,
            incident_details: Some("INC-1".into()),
            calibration: None,
        }),
    );
    let outcomes = post_as(&server.url(), &author, &[outcome.clone(), request.clone()]);
    let PostOutcome::Stored { receipts, .. } = &outcomes[0] else { panic!("{outcomes:?}") };
    assert_eq!(receipts.len(), 1);
    let receipt = verify_receipt(&receipts[0].to_string(), &issuer).unwrap();
    assert_eq!((receipt.elo_delta, receipt.outcome.as_str()), (50.0, "caught_bug"));
    assert!(matches!(outcomes[1], PostOutcome::AlreadyStored { .. }), "{:?}", outcomes[1]);

    let stored = agent
        .events
        .lock()
        .unwrap()
        .iter()
        .filter(|event| matches!(event, LedgerEvent::Stored { .. }))
        .count();
    assert_eq!(stored, 3);
    let ledger = agent.stop();
    assert_eq!(ledger.message_count().unwrap(), 3);
    assert_eq!(ledger.leaderboard(None).unwrap()[0].elo, 1250.0);
}

/// Flags every added line that calls `unwrap()`, as blocking.
struct UnwrapReviewer;

impl DiffReviewer for UnwrapReviewer {
    fn name(&self) -> String {
        "unwrap-finder".into()
    }

    fn review(&self, diff: &str) -> Result<Vec<DiffFinding>, String> {
        Ok(diff
            .lines()
            .filter(|line| line.starts_with('+') && line.contains("unwrap()"))
            .map(|line| DiffFinding {
                file: Some("src/lib.rs".into()),
                line: Some(2),
                body: format!("panics: {line}"),
                blocking: true,
            })
            .collect())
    }
}

#[test]
fn a_reviewer_agent_reviews_a_diff_and_declines_a_request_without_one() {
    let ledger_key = Keypair::from_seed([11; 32]);
    let genesis = ChatIdentity::new(ledger_key.clone()).chat_id().hex().to_owned();
    let Some(server) = AgentChatServer::start("a_reviewer_agent_reviews_a_diff", Some(&genesis)) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let agent =
        RunningAgent::start(&server.url(), ledger_key, Ledger::open(dir.path().join("l.sqlite")).unwrap());
    let reviewer_key = Keypair::from_seed([12; 32]);
    let config = SessionConfig::new(&server.url(), "reviewer", "#review");
    let mut reviewer =
        ReviewerAgent::new(ChatIdentity::new(reviewer_key.clone()), config, Arc::new(UnwrapReviewer))
            .unwrap();
    let author = Keypair::from_seed([13; 32]);
    let diff = "diff --git a/src/lib.rs b/src/lib.rs\n--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -1 +1,2 @@\n fn f() {}\n+let x = y.unwrap();\n";
    let mut with_diff = RequestContent { title: Some("with".into()), ..Default::default() };
    with_diff.extra.insert("diff".into(), json!(diff));
    let with_diff = sign(&author, Content::Request(with_diff));
    let url_only = sign(
        &author,
        Content::Request(RequestContent {
            diff_url: Some("https://example.org/pr/1".into()),
            ..Default::default()
        }),
    );

    let events = Arc::new(Mutex::new(Vec::new()));
    let stop = Arc::new(AtomicBool::new(false));
    let (flag, log) = (Arc::clone(&stop), Arc::clone(&events));
    let thread = std::thread::spawn(move || {
        reviewer
            .run(&|| flag.load(Ordering::SeqCst), &mut |event| log.lock().unwrap().push(event.clone()))
            .unwrap();
    });
    let outcomes = post_as(&server.url(), &author, &[with_diff.clone(), url_only.clone()]);
    assert!(outcomes.iter().all(|outcome| matches!(outcome, PostOutcome::Stored { .. })), "{outcomes:?}");
    let started = std::time::Instant::now();
    let (review, declined) = loop {
        let seen = events.lock().unwrap().clone();
        let review = seen.iter().find_map(|event| match event {
            ReviewerEvent::Reviewed { request_id, verdict, comments, .. }
                if request_id == with_diff.id.as_str() =>
            {
                Some((*verdict, *comments))
            }
            _ => None,
        });
        let declined = seen.iter().find_map(|event| match event {
            ReviewerEvent::Declined { request_id, reason } if request_id == url_only.id.as_str() => {
                Some(reason.clone())
            }
            _ => None,
        });
        let answered = seen.iter().any(
            |event| matches!(event, ReviewerEvent::LedgerAnswer { answer } if answer["status"] == "stored"),
        );
        if let (Some(review), Some(declined), true) = (review, declined.clone(), answered) {
            break (review, declined);
        }
        assert!(started.elapsed() < Duration::from_secs(120), "{seen:?}");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(review, (ReviewVerdict::RequestChanges, 1));
    assert!(declined.contains("content.diff"), "{declined}");
    stop.store(true, Ordering::SeqCst);
    thread.join().unwrap();
    let ledger = agent.stop();
    // The two requests and the one review, which names its request and the finding.
    assert_eq!(ledger.message_count().unwrap(), 3);
    assert_eq!(ledger.standings().unwrap().keys().next().unwrap().as_str(), reviewer_key.agent_id().as_str());
}

#[test]
fn a_session_keeps_a_quiet_link_with_pings_and_leaves_a_frozen_server_for_a_fresh_link() {
    let key = Keypair::from_seed([14; 32]);
    let Some(server) = AgentChatServer::start("a_session_keeps_a_quiet_link", None) else { return };
    let mut config = SessionConfig::new(&server.url(), "pinger", "#general");
    config.keepalive = Duration::from_millis(200);
    // Generous: a loaded machine may delay a PONG, never by 10 s.
    config.dead_after = Duration::from_secs(10);
    config.backoff_initial = Duration::from_millis(100);
    let mut session = revcal_agentchat::Session::new(ChatIdentity::new(key), config).unwrap();
    let next = |session: &mut revcal_agentchat::Session, what: &str| {
        let started = std::time::Instant::now();
        loop {
            if let Some(event) = session.poll(Duration::from_millis(100)).unwrap() {
                return event;
            }
            assert!(started.elapsed() < Duration::from_secs(120), "no {what}");
        }
    };
    while !matches!(next(&mut session, "join"), revcal_agentchat::SessionEvent::Joined { .. }) {}
    // Quiet for many keepalive periods: each PING is answered, so the link stays.
    let quiet = std::time::Instant::now();
    while quiet.elapsed() < Duration::from_secs(3) {
        if let Some(event) = session.poll(Duration::from_millis(100)).unwrap() {
            assert!(!matches!(event, revcal_agentchat::SessionEvent::Disconnected { .. }), "{event:?}");
        }
    }
    // Frozen: nothing answers the PING; the link is given up, and a new one made once the
    // server runs again.
    // SAFETY: signals to the server this test started.
    unsafe { libc::kill(server.pid() as i32, libc::SIGSTOP) };
    let event = loop {
        match next(&mut session, "disconnection") {
            revcal_agentchat::SessionEvent::Message(_) => {}
            other => break other,
        }
    };
    unsafe { libc::kill(server.pid() as i32, libc::SIGCONT) };
    let revcal_agentchat::SessionEvent::Disconnected { reason } = event else { panic!("{event:?}") };
    assert!(reason.contains("no answer to PING"), "{reason}");
    loop {
        match next(&mut session, "a new join") {
            revcal_agentchat::SessionEvent::Joined { .. } => break,
            revcal_agentchat::SessionEvent::Disconnected { .. }
            | revcal_agentchat::SessionEvent::Message(_) => {}
            other => panic!("{other:?}"),
        }
    }
}
