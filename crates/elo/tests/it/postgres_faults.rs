//! A PostgreSQL ledger when the server stops answering or another writer holds the ledger:
//! every call returns an error that names the ledger, within the session's limits. None of
//! these tests' oracles is a time (a frozen server is thawed when the test ends, whatever
//! happens).

use crate::util::{agent, outcome, request, review};
use revcal_elo::{Ledger, LedgerError, LedgerLocation, ReviewVerdict};

/// The writers' advisory lock ("revcalLG").
const WRITE_LOCK: i64 = 0x7265_7663_616c_4c47;

fn lines(count: usize) -> Vec<String> {
    let (author, reviewer) = (agent(1), agent(2));
    let mut lines = Vec::new();
    for n in 0..count {
        let asked = request(&author, &format!("PR {n}"));
        lines.push(asked.canonical().to_owned());
        lines.push(review(&reviewer, &asked, ReviewVerdict::Approve).canonical().to_owned());
        lines.push(outcome(&author, &asked, false).canonical().to_owned());
    }
    lines
}

/// A server frozen (SIGSTOP) under an open ledger: the next statement gives up after the
/// session's limits with an error naming the ledger, later calls fail at once, and opening
/// it again gives up after `connect_timeout`.
#[test]
fn a_frozen_server_gives_an_error_naming_the_ledger_instead_of_a_hang() {
    let Some(mut cluster) = revcal_testpg::TestCluster::start("frozen_library") else { return };
    let database = cluster.database("frozen");
    // Limits in the URL, as libpq's `options`: 1 s for a statement and for the lock.
    let url = format!("{}&options=-c%20statement_timeout%3D1s%20-c%20lock_timeout%3D1s", database.url());
    let location = LedgerLocation::parse(&url).unwrap();
    let mut ledger = Ledger::open_at(&location, None).unwrap();
    let texts = lines(3);
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    ledger.ingest_lines(&refs).unwrap();
    assert_eq!(ledger.leaderboard(None).unwrap().len(), 1);

    cluster.freeze();
    let error = ledger.leaderboard(None).expect_err("a frozen server answers nothing");
    let LedgerError::NoAnswer { ledger: name, waited, doing } = &error else { panic!("{error:?}") };
    assert_eq!(name, &location.to_string());
    // The longer of the two limits, and 10 s for the server's own error to arrive.
    assert_eq!(*waited, std::time::Duration::from_secs(11), "{error}");
    assert_eq!(*doing, "waiting for a statement's result");
    assert!(
        error.to_string().starts_with(&format!("ledger {location}: the server did not answer within 11 s"))
    );
    // The connection is given up: the next call fails without waiting again.
    assert!(matches!(ledger.message_count(), Err(LedgerError::NoAnswer { .. })));
    let error = ledger.ingest_lines(&refs).expect_err("given up");
    assert!(
        matches!(&error, LedgerError::Interrupted { stored: 0, unconfirmed: 0, error } if matches!(**error, LedgerError::NoAnswer { .. })),
        "{error:?}"
    );
    drop(ledger);

    let quick = LedgerLocation::parse(&format!("{url}&connect_timeout=1")).unwrap();
    let error = Ledger::open_at(&quick, None).expect_err("a frozen server never authenticates");
    assert!(matches!(&error, LedgerError::NoAnswer { doing: "connecting", .. }), "{error:?}");
    assert_eq!(
        error.to_string().split(';').next().unwrap(),
        format!("ledger {quick}: the server did not answer within 1 s while connecting")
    );
    cluster.thaw();
    let ledger = Ledger::open_at(&location, None).unwrap();
    assert_eq!(ledger.message_count().unwrap(), 9);
    assert!(ledger.replay().unwrap().is_consistent());
}

/// Another writer takes the ledger's lock between two batches of an ingest (of 64 lines, a
/// chunk of the pipeline, each): the next batch
/// waits `lock_timeout`, and the error says that another writer holds the ledger and how
/// many messages the ingest stored before; those stay stored.
#[test]
fn an_ingest_that_cannot_get_the_lock_says_who_holds_it_and_what_it_stored() {
    let Some(database) = revcal_testpg::TestDatabase::create("busy_library") else { return };
    let url = format!("{}&options=-c%20lock_timeout%3D200ms", database.url());
    let location = LedgerLocation::parse(&url).unwrap();
    let mut ledger = Ledger::open_at(&location, None).unwrap();
    let texts = lines(100);
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let mut other_writer = database.client();
    let mut batches = 0;
    let error = ledger
        .ingest_lines_pipelined(&refs, 64, |_| {
            batches += 1;
            if batches == 2 {
                other_writer.batch_execute(&format!("SELECT pg_advisory_lock({WRITE_LOCK})")).unwrap();
            }
        })
        .expect_err("the third batch cannot get the lock");
    let LedgerError::Interrupted { stored, unconfirmed, error: cause } = &error else { panic!("{error:?}") };
    assert_eq!((*stored, *unconfirmed), (128, 0));
    assert!(
        matches!(**cause, LedgerError::Busy { waited, .. } if waited == std::time::Duration::from_millis(200)),
        "{cause:?}"
    );
    assert_eq!(
        error.to_string(),
        format!(
            "ledger {location}: another writer holds the ledger: waited 200 ms for it to finish and gave up; \
             try again when it has finished; stored 128 messages before the failure; ingesting the same lines \
             again stores the rest (the stored ones are refused as replayed)"
        )
    );
    assert_eq!(database.query_i64("SELECT count(*) FROM revcal_messages"), 128);
    // Reading does not wait for the writer; once it is gone, the rest goes in.
    assert_eq!(ledger.message_count().unwrap(), 128);
    other_writer.batch_execute(&format!("SELECT pg_advisory_unlock({WRITE_LOCK})")).unwrap();
    let outcomes = ledger.ingest_lines(&refs).unwrap();
    assert_eq!(outcomes.iter().filter(|(_, outcome)| outcome.is_stored()).count(), 300 - 128);
    assert!(ledger.replay().unwrap().is_consistent());
}
