//! A PostgreSQL ledger when the server misbehaves, as an operator would see it: frozen
//! (SIGSTOP), crashed and restarted (`pg_ctl restart -m immediate`), stopped, its writers
//! SIGKILLed, its lock held by another writer. Each command ends with an error that names the
//! ledger and says what happened, and the ledger stays consistent.
//!
//! The tests that crash, freeze or stop the server start a cluster of their own
//! (`revcal_testpg::TestCluster`); none of their oracles is a time: each run of revcal has
//! a generous limit that only stops a hang from hanging the test run.

use super::{jsonl, revcal, revcal_command, stderr, stdout, stories};
use std::io::Read;
use std::path::Path;
use std::process::{Child, Output, Stdio};
use std::time::{Duration, Instant};

/// Far above any wait revcal is meant to make here: reached only by a hang.
const HANG: Duration = Duration::from_secs(240);

/// Waits for `child`, killing it (and failing the test) if it is still running after
/// [`HANG`].
fn finish(mut child: Child, what: &str) -> Output {
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut text = Vec::new();
        out.read_to_end(&mut text).unwrap();
        text
    });
    let error_reader = std::thread::spawn(move || {
        let mut text = Vec::new();
        err.read_to_end(&mut text).unwrap();
        text
    });
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > HANG {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("{what}: still waiting after {HANG:?}: revcal hangs");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    Output { status, stdout: reader.join().unwrap(), stderr: error_reader.join().unwrap() }
}

fn spawn(dir: &Path, args: &[&str]) -> Child {
    revcal_command(dir, args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap()
}

fn guarded(dir: &Path, args: &[&str]) -> Output {
    finish(spawn(dir, args), &args.join(" "))
}

/// The messages a failed ingest says it stored before the failure, and how many more may
/// be stored (a batch whose commit got no answer).
fn stored_before_failure(message: &str) -> (i64, i64) {
    let number = |after: &str| -> Option<i64> {
        let at = message.find(after)? + after.len();
        message[at..].split(|c: char| !c.is_ascii_digit()).next()?.parse().ok()
    };
    let stored = if message.contains("; nothing was stored before the failure") {
        0
    } else {
        number("; stored ").unwrap_or_else(|| panic!("no count of stored messages in: {message}"))
    };
    (stored, number("the last batch of ").unwrap_or(0))
}

fn count(database: &revcal_testpg::TestDatabase) -> i64 {
    database.query_i64("SELECT count(*) FROM revcal_messages")
}

/// Waits until the server has no other session on the database (a backend left by a
/// client that gave up finishes what it had read, then rolls back or commits).
fn wait_for_other_sessions(database: &revcal_testpg::TestDatabase) {
    let started = Instant::now();
    while database.query_i64(
        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() \
         AND pid <> pg_backend_pid() AND backend_type = 'client backend'",
    ) > 0
    {
        assert!(started.elapsed() < HANG, "the server kept the ingest's session");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Waits until the ledger holds at least `at_least` messages, while `child` is still running.
fn wait_for_messages(database: &revcal_testpg::TestDatabase, child: &mut Child, at_least: i64) {
    let started = Instant::now();
    loop {
        let created =
            database.query_i64("SELECT count(*) FROM pg_tables WHERE tablename = 'revcal_messages'");
        let stored = if created > 0 { count(database) } else { 0 };
        if stored >= at_least {
            return;
        }
        assert!(child.try_wait().unwrap().is_none(), "ingest ended before {at_least} messages were stored");
        assert!(started.elapsed() < HANG, "ingest never stored {at_least} messages");
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn check_consistent(dir: &Path, ledger: &str) {
    let output = guarded(dir, &["elo", "check", "--ledger", ledger]);
    assert_eq!(output.status.code(), Some(0), "{}{}", stdout(&output), stderr(&output));
    assert!(stdout(&output).starts_with("consistent"), "{}", stdout(&output));
}

/// `pg_ctl restart -m immediate` in the middle of an ingest: the ingest fails naming the
/// ledger and saying how many messages it stored, which is what the restarted server holds;
/// the ledger is consistent and a second ingest completes it. Then, the server stopped:
/// every command fails with an error naming the ledger.
#[test]
fn a_server_crashed_during_ingest_keeps_a_consistent_ledger_and_a_stopped_one_is_named() {
    let Some(mut cluster) = revcal_testpg::TestCluster::start("cli_crash_restart") else { return };
    let database = cluster.database("crash");
    let ledger = database.url().to_owned();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let all: Vec<_> = stories(1000).into_iter().flatten().collect();
    std::fs::write(d.join("big.jsonl"), jsonl(all.clone())).unwrap();

    let mut child = spawn(d, &["elo", "ingest", "big.jsonl", "--ledger", &ledger, "--batch-size", "64"]);
    wait_for_messages(&database, &mut child, 20);
    cluster.crash_restart();
    let output = finish(child, "ingest during a crash");
    let message = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{message}");
    // Named as the URL is written: it has no password.
    let shown = format!("ledger {ledger}");
    assert!(message.contains(&shown), "{message}");
    let (stored, unconfirmed) = stored_before_failure(&message);
    let held = count(&database);
    assert!(
        held >= stored && held <= stored + unconfirmed,
        "said {stored}(+{unconfirmed}), holds {held}: {message}"
    );
    assert!(held < all.len() as i64, "the crash came in the middle of the ingest");
    check_consistent(d, &ledger);

    let again = guarded(d, &["elo", "ingest", "big.jsonl", "--ledger", &ledger, "--json"]);
    let report: serde_json::Value = serde_json::from_slice(&again.stdout).unwrap();
    assert_eq!(report["stored"].as_i64().unwrap() + held, all.len() as i64, "{report}");
    assert_eq!(report["rejected"].as_i64(), Some(held), "the stored lines come back as replays");
    check_consistent(d, &ledger);

    cluster.stop();
    for args in [
        vec!["elo", "leaderboard", "--ledger", &ledger],
        vec!["elo", "ingest", "big.jsonl", "--ledger", &ledger],
        vec!["elo", "check", "--ledger", &ledger],
    ] {
        let output = guarded(d, &args);
        let message = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {message}");
        assert!(message.contains(&shown) && message.contains("error connecting to server"), "{message}");
    }
}

/// A frozen server (every process SIGSTOPped; the kernel still accepts the connection):
/// connecting gives up after `connect_timeout` (the URL's, else revcal's 10 s) and a
/// statement after the session's limits, each with an error naming the ledger; an ingest
/// says how many messages it stored before.
#[test]
fn a_frozen_server_fails_every_command_with_an_error_naming_the_ledger() {
    let Some(mut cluster) = revcal_testpg::TestCluster::start("cli_frozen") else { return };
    let database = cluster.database("frozen");
    let ledger = database.url().to_owned();
    let shown = format!("ledger {ledger}");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let all: Vec<_> = stories(1000).into_iter().flatten().collect();
    std::fs::write(d.join("big.jsonl"), jsonl(all)).unwrap();
    std::fs::write(d.join("small.jsonl"), jsonl(stories(2).into_iter().flatten())).unwrap();
    let output = revcal(d, &["elo", "ingest", "small.jsonl", "--ledger", &ledger]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));

    // Frozen before connecting: with the URL's connect_timeout, and with revcal's own.
    cluster.freeze();
    let quick = format!("{ledger}&connect_timeout=2");
    for args in [
        vec!["elo", "leaderboard", "--ledger", &quick],
        vec!["elo", "ingest", "small.jsonl", "--ledger", &ledger],
        vec!["elo", "check", "--ledger", &quick],
    ] {
        let output = guarded(d, &args);
        let message = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {message}");
        assert!(message.contains(&shown), "{message}");
        assert!(message.contains("did not answer") && message.contains("while connecting"), "{message}");
    }
    cluster.thaw();

    // Frozen in the middle of an ingest, with short limits set in the URL as libpq's
    // `options` (the server's settings for the session).
    let limited = format!("{ledger}&options=-c%20statement_timeout%3D2s%20-c%20lock_timeout%3D1s");
    let mut child = spawn(d, &["elo", "ingest", "big.jsonl", "--ledger", &limited, "--batch-size", "64"]);
    wait_for_messages(&database, &mut child, 40);
    cluster.freeze();
    let output = finish(child, "ingest into a frozen server");
    cluster.thaw();
    let message = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{message}");
    assert!(message.contains(&shown), "{message}");
    assert!(
        message.contains("did not answer") && message.contains("while waiting for a statement"),
        "{message}"
    );
    let (stored, unconfirmed) = stored_before_failure(&message);
    wait_for_other_sessions(&database);
    let held = count(&database);
    // 10 messages came from small.jsonl.
    assert!(
        held - 10 >= stored && held - 10 <= stored + unconfirmed && held - 10 < 5000,
        "said {stored}(+{unconfirmed}), holds {held} - 10: {message}"
    );
    check_consistent(d, &ledger);
}

/// Writers SIGKILLed in the middle of their transactions leave a consistent ledger, which a
/// later ingest completes.
#[test]
fn writers_killed_during_ingest_leave_a_consistent_postgres_ledger() {
    let Some(database) = revcal_testpg::TestDatabase::create("cli_killed_writers") else { return };
    let ledger = database.url().to_owned();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let all: Vec<_> = stories(600).into_iter().flatten().collect();
    std::fs::write(d.join("big.jsonl"), jsonl(all.clone())).unwrap();
    std::fs::write(d.join("empty.jsonl"), "").unwrap();
    let output = revcal(d, &["elo", "ingest", "--ledger", &ledger, "empty.jsonl"]);
    assert_eq!(output.status.code(), Some(0), "the ledger is created: {}", stderr(&output));
    let mut children: Vec<Child> = (0..3)
        .map(|_| spawn(d, &["elo", "ingest", "big.jsonl", "--ledger", &ledger, "--batch-size", "2"]))
        .collect();
    wait_for_messages(&database, &mut children[0], 30);
    for child in &mut children {
        child.kill().unwrap();
    }
    for child in children {
        let output = finish(child, "a killed writer");
        assert!(output.status.code().is_none(), "killed by SIGKILL");
    }
    wait_for_other_sessions(&database);
    let held = count(&database);
    assert!(held >= 30 && held < all.len() as i64, "{held}");
    check_consistent(d, &ledger);
    let again = guarded(d, &["elo", "ingest", "big.jsonl", "--ledger", &ledger, "--json"]);
    let report: serde_json::Value = serde_json::from_slice(&again.stdout).unwrap();
    assert_eq!(report["stored"].as_i64().unwrap() + held, all.len() as i64, "{report}");
    check_consistent(d, &ledger);
}

/// Another writer holding the ledger's lock past `lock_timeout`: the ingest says so, and
/// that nothing was stored.
#[test]
fn a_writer_that_waits_too_long_for_the_lock_is_told_another_writer_holds_it() {
    let Some(database) = revcal_testpg::TestDatabase::create("cli_lock_timeout") else { return };
    let ledger = database.url().to_owned();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("m.jsonl"), jsonl(stories(2).into_iter().flatten())).unwrap();
    std::fs::write(d.join("empty.jsonl"), "").unwrap();
    let output = revcal(d, &["elo", "ingest", "--ledger", &ledger, "empty.jsonl"]);
    assert_eq!(output.status.code(), Some(0), "the ledger is created: {}", stderr(&output));
    // The advisory lock every writer of a revcal ledger takes ("revcalLG").
    let mut holder = database.client();
    holder.batch_execute("SELECT pg_advisory_lock(8243124862179888199)").unwrap();
    let limited = format!("{ledger}&options=-c%20lock_timeout%3D1s");
    // Reading does not wait for writers.
    let output = guarded(d, &["elo", "leaderboard", "--ledger", &limited]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let output = guarded(d, &["elo", "ingest", "m.jsonl", "--ledger", &limited]);
    let message = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{message}");
    assert!(message.contains("another writer holds the ledger"), "{message}");
    assert_eq!(stored_before_failure(&message), (0, 0), "{message}");
    assert_eq!(count(&database), 0);
    drop(holder);
    let output = guarded(d, &["elo", "ingest", "m.jsonl", "--ledger", &limited]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
}
