//! The acceptance scenario: three agents, a scripted sequence of requests, reviews of every
//! verdict, outcomes with and without incidents, one reviewer crossing the 20-review K
//! boundary. Every expected number is worked out by hand below from the rules of
//! docs/reputation.md (section 3), not by the engine.

use crate::util::{agent, outcome, request, review};
use revcal_elo::{Engine, Policy, Rejection, ReviewVerdict, SignedMessage};

/// The script: `(message, expected rejection code or None)`.
fn script() -> (Vec<(SignedMessage, Option<&'static str>)>, [revcal_elo::AgentId; 3]) {
    let a = agent(1); // mostly the author
    let b = agent(2); // the veteran reviewer
    let c = agent(3); // a new reviewer
    let mut steps = Vec::new();
    // Warm-up: 17 routine requests by A, each approved by B, no incident.
    for n in 0..17 {
        let routine = request(&a, &format!("routine #{n}"));
        steps.push((review(&b, &routine, ReviewVerdict::Approve), None));
        steps.insert(steps.len() - 1, (routine.clone(), None));
        steps.push((outcome(&a, &routine, false), None));
    }
    // R1 (A): B REQUEST_CHANGES, C APPROVE; incident.
    let r1 = request(&a, "R1");
    steps.push((r1.clone(), None));
    steps.push((review(&b, &r1, ReviewVerdict::RequestChanges), None));
    steps.push((review(&c, &r1, ReviewVerdict::Approve), None));
    steps.push((outcome(&a, &r1, true), None));
    // R2 (A): B COMMENT, C REQUEST_CHANGES; no incident.
    let r2 = request(&a, "R2");
    steps.push((r2.clone(), None));
    steps.push((review(&b, &r2, ReviewVerdict::Comment), None));
    steps.push((review(&c, &r2, ReviewVerdict::RequestChanges), None));
    steps.push((outcome(&a, &r2, false), None));
    // R3 (C): B APPROVE, A REQUEST_CHANGES; incident. C may not review its own request.
    let r3 = request(&c, "R3");
    steps.push((r3.clone(), None));
    steps.push((review(&b, &r3, ReviewVerdict::Approve), None));
    steps.push((review(&a, &r3, ReviewVerdict::RequestChanges), None));
    steps.push((review(&c, &r3, ReviewVerdict::Approve), Some("self_review")));
    steps.push((outcome(&a, &r3, false), Some("outcome_not_from_requester")));
    steps.push((outcome(&c, &r3, true), None));
    // R4 (A): B APPROVE then changes its mind to REQUEST_CHANGES (the latest counts);
    // C COMMENT; incident.
    let r4 = request(&a, "R4");
    steps.push((r4.clone(), None));
    steps.push((review(&b, &r4, ReviewVerdict::Approve), None));
    steps.push((review(&c, &r4, ReviewVerdict::Comment), None));
    steps.push((review(&b, &r4, ReviewVerdict::RequestChanges), None));
    steps.push((outcome(&a, &r4, true), None));
    // R5 (A): B APPROVE, C APPROVE; no incident. Then a late review, a second outcome and a
    // replay of the first outcome, all refused.
    let r5 = request(&a, "R5");
    steps.push((r5.clone(), None));
    steps.push((review(&b, &r5, ReviewVerdict::Approve), None));
    steps.push((review(&c, &r5, ReviewVerdict::Approve), None));
    let first = outcome(&a, &r5, false);
    steps.push((first.clone(), None));
    steps.push((review(&c, &r5, ReviewVerdict::RequestChanges), Some("review_after_outcome")));
    steps.push((outcome(&a, &r5, true), Some("second_outcome")));
    steps.push((first, Some("replayed")));
    let unknown = request(&a, "never sent");
    steps.push((review(&b, &unknown, ReviewVerdict::Approve), Some("unknown_request")));
    (steps, [a.agent_id(), b.agent_id(), c.agent_id()])
}

/// (agent, rating, reviews, accuracy), worked out by hand:
///
/// Applied delta = base x K / 20; K = 40 below 20 scored reviews, else 20. So with K 40:
/// caught +50, missed -60, false positive -10, correct approval +10, comment 0; with K 20
/// the bases themselves: +25, -30, -5, +5, 0.
///
/// B: warm-up 17 correct approvals at K 40 (0..16 reviews before): 1200 + 17 x 10 = 1370.
///    R1 RC + incident, 17 before, K 40: +50 -> 1420 (18 reviews).
///    R2 COMMENT: +0 -> 1420 (19).
///    R3 APPROVE + incident, 19 before, K 40: -60 -> 1360 (20).
///    R4 latest is RC + incident, 20 before, K 20: +25 -> 1385 (21).  <- the K boundary
///    R5 APPROVE + no incident, 21 before, K 20: +5 -> 1390 (22).
///    Decisive: 17 + R1 + R3 + R4 + R5 = 21; correct: 17 + R1 + R4 + R5 = 20. Accuracy 20/21.
/// C: R1 APPROVE + incident: -60 -> 1140; R2 RC + no incident: -10 -> 1130; R4 COMMENT: 0;
///    R5 APPROVE + no incident: +10 -> 1140. Reviews 4; decisive 3 (R1, R2, R5), correct 1
///    (R5). Accuracy 1/3.
/// A: R3 RC + incident, first review, K 40: +50 -> 1250. Reviews 1, accuracy 1/1.
fn expected(agents: &[revcal_elo::AgentId; 3]) -> Vec<(revcal_elo::AgentId, f64, u64, Option<f64>)> {
    let [a, b, c] = agents.clone();
    let b_rating = 1200.0 + 17.0 * 10.0 + 50.0 + 0.0 - 60.0 + 25.0 + 5.0;
    let c_rating = 1200.0 - 60.0 - 10.0 + 0.0 + 10.0;
    let a_rating = 1200.0 + 50.0;
    assert_eq!((b_rating, c_rating, a_rating), (1390.0, 1140.0, 1250.0));
    vec![(b, b_rating, 22, Some(20.0 / 21.0)), (a, a_rating, 1, Some(1.0)), (c, c_rating, 4, Some(1.0 / 3.0))]
}

#[test]
fn the_ledger_leaderboard_equals_the_hand_computation() {
    let (steps, agents) = script();
    for backend in crate::util::backends("scenario") {
        the_ledger_on(&backend, &steps, &agents);
    }
}

/// The scripted stream through `backend`'s ledger, one message at a time.
fn the_ledger_on(
    backend: &crate::util::Backend,
    steps: &[(SignedMessage, Option<&'static str>)],
    agents: &[revcal_elo::AgentId; 3],
) {
    let name = backend.name;
    let mut ledger = backend.open();
    for (index, (message, rejection)) in steps.iter().enumerate() {
        let before = ledger.standings().unwrap();
        match (ledger.ingest(message).unwrap(), rejection) {
            (Ok(_), None) => {}
            (Err(found), Some(code)) => {
                assert_eq!(found.code(), *code, "{name} step {index}: {found}");
                assert_eq!(
                    ledger.standings().unwrap(),
                    before,
                    "{name} step {index}: a rejected message changed a rating"
                );
            }
            (outcome, expected) => panic!("step {index}: expected {expected:?}, got {outcome:?}"),
        }
    }
    let board = ledger.leaderboard(None).unwrap();
    let found: Vec<_> = board.iter().map(|e| (e.agent.clone(), e.elo, e.reviews, e.accuracy)).collect();
    assert_eq!(found, expected(agents), "{name}");
    assert_eq!(board.iter().map(|e| e.rank).collect::<Vec<_>>(), [1, 2, 3]);
    assert_eq!(ledger.leaderboard(Some(1)).unwrap().len(), 1);

    // B's 21st scored review (R4) was the first at K 20.
    let receipts = ledger.receipts(&agents[1]).unwrap();
    let deltas: Vec<f64> = receipts.iter().map(|r| r.elo_delta).collect();
    assert_eq!(deltas[17..], [50.0, 0.0, -60.0, 25.0, 5.0]);
    let outcomes: Vec<&str> = receipts[17..].iter().map(|r| r.outcome.as_str()).collect();
    assert_eq!(outcomes, ["caught_bug", "neutral", "missed_bug", "caught_bug", "correct_approval"]);

    let replay = ledger.replay().unwrap();
    assert!(replay.is_consistent(), "{name}: {:?}", replay.mismatches);
    assert_eq!(replay.reviewers, 3);
    assert_eq!(replay.scored_reviews, 17 + 2 + 2 + 2 + 2 + 2);
}

#[test]
fn the_pure_engine_agrees_with_the_hand_computation() {
    let (steps, agents) = script();
    let mut engine = Engine::new(Policy::default());
    for (index, (message, rejection)) in steps.iter().enumerate() {
        let result = engine.apply(message);
        assert_eq!(result.as_ref().err().map(Rejection::code), *rejection, "step {index}");
    }
    for (agent, rating, reviews, accuracy) in expected(&agents) {
        let standing = engine.standings()[&agent];
        assert_eq!(
            (standing.rating, standing.reviews, standing.accuracy()),
            (rating, reviews, accuracy),
            "{agent}"
        );
    }
}

#[test]
fn a_policy_changes_the_numbers() {
    let (steps, agents) = script();
    // Flat K: every delta is its base.
    let flat = Policy { k_new: 20.0, ..Policy::default() };
    let (standings, _) = revcal_elo::rate(steps.iter().map(|(m, _)| m), flat);
    // B: 17 x 5 + 25 + 0 - 30 + 25 + 5.
    assert_eq!(standings[&agents[1]].rating, 1200.0 + 85.0 + 25.0 - 30.0 + 25.0 + 5.0);
}
