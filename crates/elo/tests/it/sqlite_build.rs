//! The bundled SQLite is built without the extensions the ledger never uses: the workspace's
//! `.cargo/config.toml` hands libsqlite3-sys's build `LIBSQLITE3_FLAGS`, which undoes its
//! `-DSQLITE_ENABLE_...` for them (a third less C to compile). This checks, in the SQLite the
//! tests link, that every flag took effect; every other ledger test runs on that SQLite.

use std::path::Path;

/// The flags as this build saw them (Cargo's `[env]` sets them for the build scripts and for
/// rustc alike).
const FLAGS: Option<&str> = option_env!("LIBSQLITE3_FLAGS");

fn compile_option_used(connection: &rusqlite::Connection, option: &str) -> bool {
    connection
        .query_row("SELECT sqlite_compileoption_used(?1)", [option], |row| row.get::<_, i64>(0))
        .unwrap()
        == 1
}

#[test]
fn the_bundled_sqlite_is_built_without_the_extensions_the_ledger_does_not_use() {
    let Some(flags) = FLAGS else {
        // Outside this repository (the crate as published) nothing sets the flags and the
        // full bundled SQLite is built, which is as intended; in the repository, a failure.
        let config = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.cargo/config.toml");
        assert!(
            !config.exists(),
            "LIBSQLITE3_FLAGS is not set although {} sets it in [env]",
            config.display()
        );
        return;
    };
    let connection = rusqlite::Connection::open_in_memory().unwrap();
    let mut checked = 0;
    for flag in flags.split_whitespace() {
        if let Some(option) = flag.strip_prefix("-USQLITE_") {
            assert!(
                !compile_option_used(&connection, option),
                "{option} is still compiled in ({flag} did not take effect)"
            );
            checked += 1;
        } else if let Some(option) = flag.strip_prefix("-DSQLITE_") {
            assert!(
                compile_option_used(&connection, option),
                "{option} is not compiled in ({flag} did not take effect)"
            );
            checked += 1;
        }
    }
    // the two largest extensions are among the ones left out
    assert!(
        !compile_option_used(&connection, "ENABLE_FTS5") && !compile_option_used(&connection, "ENABLE_FTS3")
    );
    assert!(checked >= 8, "only {checked} flags in {flags:?}");
    // what the ledger relies on is still there: thread safety, the write-ahead log
    assert!(compile_option_used(&connection, "THREADSAFE=1"));
    assert!(!compile_option_used(&connection, "OMIT_WAL"));
    // and the SQL functions of the left-out extensions are gone
    let error = connection.query_row("SELECT json('{}')", [], |row| row.get::<_, String>(0)).unwrap_err();
    assert!(error.to_string().contains("no such function: json"), "{error}");
}
