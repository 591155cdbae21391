//! Without a PostgreSQL server the PostgreSQL half of the ledger tests cannot run; a plain
//! `cargo test` must say so where a user looks (not in the captured output of passing
//! tests), with the number of tests that skipped it, and `.ci/run`'s
//! `REVCAL_REQUIRE_POSTGRES=1` must turn a skip into a failure. This runs this very test
//! binary again, on chosen tests, without a server.

use std::process::{Command, Output};

/// Tests that run on SQLite and PostgreSQL (the conformance one asks for ledgers twice, and
/// still counts once), and one that needs no ledger.
const BOTH_BACKENDS: [&str; 3] = [
    "refusals::a_refused_message_is_not_kept_and_is_judged_again_when_resent",
    "scenario::the_ledger_leaderboard_equals_the_hand_computation",
    "conformance::every_example_of_the_protocol_goes_through_ingest_with_the_same_leaderboard",
];
const NO_LEDGER: &str = "scenario::the_pure_engine_agrees_with_the_hand_computation";

fn run_tests(tests: &[&str], require: bool) -> Output {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command.arg("--exact").args(tests).env_remove(revcal_testpg::SERVER_VARIABLE);
    if require {
        command.env(revcal_testpg::REQUIRE_VARIABLE, "1");
    } else {
        command.env_remove(revcal_testpg::REQUIRE_VARIABLE);
    }
    command.output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn a_run_without_a_server_counts_the_skipped_postgres_tests_where_the_user_sees_it() {
    let mut tests = BOTH_BACKENDS.to_vec();
    tests.push(NO_LEDGER);
    let output = run_tests(&tests, false);
    let (out, err) = (text(&output.stdout), text(&output.stderr));
    assert_eq!(output.status.code(), Some(0), "{out}{err}");
    assert!(out.contains("test result: ok. 4 passed"), "{out}");
    // One line, after the harness's summary, on the terminal's stream.
    let notes: Vec<&str> = err.lines().filter(|line| line.starts_with("note: ")).collect();
    assert_eq!(notes, [revcal_testpg::skip_note(3)], "{err}");
    assert!(notes[0].contains("REVCAL_TEST_POSTGRES") && notes[0].contains(".ci/postgres start"), "{err}");

    // The count is the number of tests that skipped: one here.
    let output = run_tests(&[BOTH_BACKENDS[0], NO_LEDGER], false);
    let err = text(&output.stderr);
    assert!(err.lines().any(|line| line == revcal_testpg::skip_note(1)), "{err}");
    // No skip, no note.
    let output = run_tests(&[NO_LEDGER], false);
    assert!(!text(&output.stderr).contains("note:"), "{}", text(&output.stderr));
}

#[test]
fn ci_requiring_postgres_fails_instead_of_skipping() {
    let output = run_tests(&[BOTH_BACKENDS[0]], true);
    let (out, err) = (text(&output.stdout), text(&output.stderr));
    assert_eq!(output.status.code(), Some(101), "{out}{err}");
    assert!(out.contains("REVCAL_REQUIRE_POSTGRES=1 but REVCAL_TEST_POSTGRES is not set"), "{out}");
    assert!(!err.contains("note:"), "{err}");
}
