//! A message the rules refuse leaves no trace: sent again, it is judged again (not taken
//! for a replay), and the ledger holds only what it accepted.

use crate::util::{agent, outcome, request, review};
use revcal_elo::{Ledger, Rejection, ReviewVerdict};

#[test]
fn a_refused_message_is_not_kept_and_is_judged_again_when_resent() {
    for backend in crate::util::backends("refusals") {
        refused_and_judged_again(backend.open());
    }
}

fn refused_and_judged_again(mut ledger: Ledger) {
    let (a, b) = (agent(1), agent(2));
    let change = request(&a, "change");
    let own = review(&a, &change, ReviewVerdict::Approve);
    let foreign_outcome = outcome(&b, &change, false);
    ledger.ingest(&change).unwrap().unwrap();
    for _ in 0..2 {
        let refused = ledger.ingest(&own).unwrap().unwrap_err();
        assert!(matches!(refused, Rejection::SelfReview { .. }), "{refused:?}");
        let refused = ledger.ingest(&foreign_outcome).unwrap().unwrap_err();
        assert!(matches!(refused, Rejection::OutcomeNotFromRequester { .. }), "{refused:?}");
    }
    // In one batch too: the refused review is not there for its twin to collide with.
    let batch = ledger
        .ingest_batch(&[own.clone(), own.clone(), review(&b, &change, ReviewVerdict::Approve)])
        .unwrap();
    assert!(matches!(batch[0], Err(Rejection::SelfReview { .. })), "{:?}", batch[0]);
    assert!(matches!(batch[1], Err(Rejection::SelfReview { .. })), "{:?}", batch[1]);
    assert!(batch[2].is_ok(), "{:?}", batch[2]);
    assert_eq!(ledger.message_count().unwrap(), 2);
    // B never sent a stored message before its review: only now is it a rated reviewer.
    assert_eq!(ledger.leaderboard(None).unwrap().len(), 1);
    let closing = outcome(&a, &change, false);
    assert_eq!(ledger.ingest(&closing).unwrap().unwrap().scored.len(), 1);
    assert!(ledger.replay().unwrap().is_consistent());
    assert!(ledger.integrity_check().unwrap().is_empty());
}
