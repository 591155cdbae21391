//! A fresh PostgreSQL database for each test that needs one.
//!
//! `REVCAL_TEST_POSTGRES` names a server by the URL of a database on it that the user may
//! create databases from (`.ci/postgres start` makes a throwaway cluster and `.ci/postgres url`
//! prints that URL). [`TestDatabase::create`] makes a database with a new name and drops it
//! again when the value is dropped. Without the variable, it returns `None` after saying on
//! stderr that the test ran on SQLite only, unless `REVCAL_REQUIRE_POSTGRES=1` (as `.ci/run`
//! sets), where it panics: CI never skips the PostgreSQL half silently.
//!
//! ```no_run
//! if let Some(database) = revcal_testpg::TestDatabase::create("example") {
//!     println!("a new ledger at {}", database.url());
//! }
//! ```

use std::sync::atomic::{AtomicU32, Ordering};

/// The variable naming the test server.
pub const SERVER_VARIABLE: &str = "REVCAL_TEST_POSTGRES";
/// Set to `1` to make a missing server an error.
pub const REQUIRE_VARIABLE: &str = "REVCAL_REQUIRE_POSTGRES";

static COUNTER: AtomicU32 = AtomicU32::new(0);

/// A database made for one test, dropped with this value.
#[derive(Debug)]
pub struct TestDatabase {
    admin_url: String,
    name: String,
    url: String,
}

impl TestDatabase {
    /// A new, empty database named after `test` (letters, digits and `_` kept), or `None`
    /// when no server is configured (see the crate documentation).
    pub fn create(test: &str) -> Option<TestDatabase> {
        let Some(admin_url) = std::env::var(SERVER_VARIABLE).ok().filter(|url| !url.is_empty()) else {
            if std::env::var(REQUIRE_VARIABLE).is_ok_and(|value| value == "1") {
                panic!(
                    "{REQUIRE_VARIABLE}=1 but {SERVER_VARIABLE} is not set (start a server with .ci/postgres start)"
                );
            }
            eprintln!(
                "{test}: PostgreSQL part skipped: {SERVER_VARIABLE} is not set (see docs/reputation.md, \"PostgreSQL\")"
            );
            return None;
        };
        let tag: String = test.chars().filter(|c| c.is_ascii_alphanumeric() || *c == '_').take(30).collect();
        let name = format!(
            "revcal_{}_{}_{}",
            tag.to_ascii_lowercase(),
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        );
        let mut admin = postgres::Client::connect(&admin_url, postgres::NoTls)
            .unwrap_or_else(|error| panic!("cannot connect to {SERVER_VARIABLE} ({admin_url}): {error}"));
        admin
            .batch_execute(&format!("CREATE DATABASE \"{name}\""))
            .unwrap_or_else(|error| panic!("cannot create database {name}: {error}"));
        let url = with_database(&admin_url, &name);
        Some(TestDatabase { admin_url, name, url })
    }

    /// The URL of the new database.
    pub fn url(&self) -> &str {
        &self.url
    }
}

impl Drop for TestDatabase {
    fn drop(&mut self) {
        // Best effort: a throwaway cluster is removed whole anyway.
        if let Ok(mut admin) = postgres::Client::connect(&self.admin_url, postgres::NoTls) {
            let _ = admin.batch_execute(&format!("DROP DATABASE IF EXISTS \"{}\" WITH (FORCE)", self.name));
        }
    }
}

/// `url` with its database (the path after the host) replaced by `database`.
fn with_database(url: &str, database: &str) -> String {
    let after_scheme = url.find("://").map_or(0, |at| at + 3);
    let (head, rest) = url.split_at(after_scheme);
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    let query = tail.find('?').map_or("", |at| &tail[at..]);
    format!("{head}{authority}/{database}{query}")
}

#[cfg(test)]
mod tests {
    use super::with_database;

    #[test]
    fn the_database_is_replaced_and_the_rest_kept() {
        assert_eq!(
            with_database("postgresql://u@localhost/postgres?host=/tmp/x", "d"),
            "postgresql://u@localhost/d?host=/tmp/x"
        );
        assert_eq!(with_database("postgres://u:p@h:5432", "d"), "postgres://u:p@h:5432/d");
        assert_eq!(with_database("postgres://h?sslmode=disable", "d"), "postgres://h/d?sslmode=disable");
    }
}
