//! Another application's database is never a ledger: `Ledger::open_at` and
//! `Ledger::refuse_foreign` refuse it before writing anything, and `Ledger::open_existing_at`
//! (what reading commands use) creates nothing where there is no ledger yet.

use revcal_elo::{Ledger, LedgerError, LedgerLocation};
use std::path::Path;

fn foreign_database(path: &Path) {
    let connection = rusqlite::Connection::open(path).unwrap();
    connection
        .execute_batch(
            "CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL);
             CREATE TABLE meta (key TEXT, value TEXT);
             INSERT INTO invoices (total) VALUES (12.5);",
        )
        .unwrap();
}

#[test]
fn another_applications_database_is_refused_and_left_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("app.sqlite");
    foreign_database(&path);
    let before = std::fs::read(&path).unwrap();
    let location = LedgerLocation::from(path.as_path());
    for result in [
        Ledger::open_at(&location, None).map(drop),
        Ledger::open_existing_at(&location).map(drop),
        Ledger::refuse_foreign(&location),
    ] {
        let error = result.expect_err("refused");
        assert!(matches!(error, LedgerError::NotALedger { .. }), "{error:?}");
        let message = error.to_string();
        assert!(message.contains("not a revcal ledger: it holds other tables (invoices, meta)"), "{message}");
        assert!(message.contains("app.sqlite"), "{message}");
        assert_eq!(std::fs::read(&path).unwrap(), before);
    }
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1, "nothing beside it");
}

#[test]
fn reading_creates_no_ledger_and_writing_makes_one_of_an_empty_file() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.sqlite");
    let location = LedgerLocation::from(missing.as_path());
    let error = Ledger::open_existing_at(&location).expect_err("no ledger");
    assert!(matches!(error, LedgerError::NoLedger { .. }), "{error:?}");
    assert!(!missing.exists());
    Ledger::refuse_foreign(&location).expect("a missing file would become a ledger");
    assert!(!missing.exists());

    let empty = dir.path().join("empty.sqlite");
    std::fs::write(&empty, b"").unwrap();
    let location = LedgerLocation::from(empty.as_path());
    let error = Ledger::open_existing_at(&location).expect_err("no ledger");
    assert!(error.to_string().contains("an empty database"), "{error}");
    assert_eq!(std::fs::metadata(&empty).unwrap().len(), 0);
    let ledger = Ledger::open_at(&location, None).expect("a new ledger");
    let issuer = ledger.issuer();
    drop(ledger);
    let reopened = Ledger::open_existing_at(&location).expect("a ledger now");
    assert_eq!(reopened.issuer(), issuer);

    let text = dir.path().join("notes.sqlite");
    std::fs::write(&text, "plain text, not a database\n").unwrap();
    let error = Ledger::open_at(&LedgerLocation::from(text.as_path()), None).expect_err("refused");
    assert!(error.to_string().contains("not an SQLite database"), "{error}");
    assert_eq!(std::fs::read_to_string(&text).unwrap(), "plain text, not a database\n");
}

#[test]
fn a_postgres_schema_with_other_tables_is_refused() {
    let Some(database) = revcal_testpg::TestDatabase::create("elo_foreign_schema") else { return };
    let location = LedgerLocation::parse(database.url()).unwrap();
    let error = Ledger::open_existing_at(&location).expect_err("no ledger yet");
    assert!(matches!(error, LedgerError::NoLedger { .. }), "{error:?}");
    database.client().batch_execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY)").unwrap();
    for result in [
        Ledger::open_at(&location, None).map(drop),
        Ledger::open_existing_at(&location).map(drop),
        Ledger::refuse_foreign(&location),
    ] {
        let error = result.expect_err("refused");
        assert!(error.to_string().contains("its schema holds other tables (invoices)"), "{error}");
    }
    let tables =
        database.query_i64("SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'");
    assert_eq!(tables, 1);
    // In a schema of its own, beside the application's, the ledger is at home.
    database.client().batch_execute("CREATE SCHEMA ledger").unwrap();
    let own = format!("{}&options=-c%20search_path%3Dledger", database.url());
    let own = if database.url().contains('?') { own } else { own.replacen('&', "?", 1) };
    let ledger =
        Ledger::open_at(&LedgerLocation::parse(&own).unwrap(), None).expect("a ledger in its own schema");
    drop(ledger);
    let revcal_tables =
        database.query_i64("SELECT count(*) FROM information_schema.tables WHERE table_schema = 'ledger'");
    assert!(revcal_tables > 5, "{revcal_tables}");
}
