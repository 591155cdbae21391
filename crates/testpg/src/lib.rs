//! PostgreSQL for the tests: a fresh database on a shared server, or a cluster of its own.
//!
//! `REVCAL_TEST_POSTGRES` names a server by the URL of a database on it that the user may
//! create databases from (`.ci/postgres start` makes a throwaway cluster and `.ci/postgres url`
//! prints that URL). [`TestDatabase::create`] makes a database with a new name and drops it
//! again when the value is dropped. [`TestCluster::start`] starts a throwaway cluster for one
//! test, for tests that crash, freeze or stop the server (which would break every other test
//! sharing it).
//!
//! Without the variable both return `None`, unless `REVCAL_REQUIRE_POSTGRES=1` (as `.ci/run`
//! sets), where they panic: CI never skips the PostgreSQL half silently. Every test that
//! skipped its PostgreSQL part is counted, and when the test binary exits it writes one line to
//! the terminal (the process's stderr, which the test harness does not capture once the
//! tests are done), for example:
//!
//! ```text
//! note: 23 tests skipped their PostgreSQL part (REVCAL_TEST_POSTGRES is not set); to run them: ...
//! ```
//!
//! ```no_run
//! if let Some(database) = revcal_testpg::TestDatabase::create("example") {
//!     println!("a new ledger at {}", database.url());
//! }
//! ```

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, Once, PoisonError};

/// The variable naming the test server.
pub const SERVER_VARIABLE: &str = "REVCAL_TEST_POSTGRES";
/// Set to `1` to make a missing server an error.
pub const REQUIRE_VARIABLE: &str = "REVCAL_REQUIRE_POSTGRES";

static COUNTER: AtomicU32 = AtomicU32::new(0);

/// The tests of this process that skipped their PostgreSQL part (by test name).
static SKIPPED: Mutex<BTreeSet<String>> = Mutex::new(BTreeSet::new());
static NOTE_AT_EXIT: Once = Once::new();

/// The server's URL, or `None` (the skip recorded) when none is configured; panics when one
/// is required.
fn server_or_skip(test: &str) -> Option<String> {
    if let Some(url) = std::env::var(SERVER_VARIABLE).ok().filter(|url| !url.is_empty()) {
        return Some(url);
    }
    if std::env::var(REQUIRE_VARIABLE).is_ok_and(|value| value == "1") {
        panic!(
            "{REQUIRE_VARIABLE}=1 but {SERVER_VARIABLE} is not set (start a server with .ci/postgres start)"
        );
    }
    // Shown with the test's output if it fails.
    eprintln!(
        "{test}: PostgreSQL part skipped: {SERVER_VARIABLE} is not set (see docs/reputation.md, \"PostgreSQL\")"
    );
    record_skip(test);
    None
}

/// Counts the running test as one that skipped its PostgreSQL part, once per test.
fn record_skip(tag: &str) {
    // The test harness names each test's thread after the test; `tag` stands in where it
    // does not (a test run on the main thread).
    let current = std::thread::current();
    let test = current.name().filter(|name| *name != "main").unwrap_or(tag).to_owned();
    SKIPPED.lock().unwrap_or_else(PoisonError::into_inner).insert(test);
    NOTE_AT_EXIT.call_once(|| {
        // SAFETY: `note_skipped` is a plain function that lives as long as the process.
        // When registration fails the note is missing, nothing else.
        unsafe {
            libc::atexit(note_skipped);
        }
    });
}

/// The note a test binary prints as it exits when some tests skipped their PostgreSQL part.
pub fn skip_note(count: usize) -> String {
    let tests =
        if count == 1 { "1 test skipped its".to_owned() } else { format!("{count} tests skipped their") };
    format!(
        "note: {tests} PostgreSQL part ({SERVER_VARIABLE} is not set); to run them: \
         dir=$(.ci/postgres start) && {SERVER_VARIABLE}=$(.ci/postgres url \"$dir\") cargo test ...; \
         .ci/postgres stop \"$dir\" (docs/reputation.md, \"PostgreSQL\")"
    )
}

/// Runs at process exit: the harness has printed its summary and captures nothing any more,
/// so the note goes to the terminal (or CI log) right below the summary.
extern "C" fn note_skipped() {
    let count = SKIPPED.lock().unwrap_or_else(PoisonError::into_inner).len();
    if count > 0 {
        // Nothing can be done about a closed stderr at exit.
        let _ = writeln!(std::io::stderr(), "{}", skip_note(count));
    }
}

/// A database made for one test, dropped with this value.
#[derive(Debug)]
pub struct TestDatabase {
    admin_url: String,
    name: String,
    url: String,
    /// False on a [`TestCluster`], which is removed whole (and may be frozen or stopped).
    drop_database: bool,
}

impl TestDatabase {
    /// A new, empty database named after `test` (letters, digits and `_` kept), or `None`
    /// when no server is configured (see the crate documentation).
    pub fn create(test: &str) -> Option<TestDatabase> {
        let admin_url = server_or_skip(test)?;
        Some(TestDatabase::create_on(&admin_url, test, true))
    }

    fn create_on(admin_url: &str, test: &str, drop_database: bool) -> TestDatabase {
        let tag: String = test.chars().filter(|c| c.is_ascii_alphanumeric() || *c == '_').take(30).collect();
        let name = format!(
            "revcal_{}_{}_{}",
            tag.to_ascii_lowercase(),
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        );
        let mut admin = postgres::Client::connect(admin_url, postgres::NoTls)
            .unwrap_or_else(|error| panic!("cannot connect to {SERVER_VARIABLE} ({admin_url}): {error}"));
        admin
            .batch_execute(&format!("CREATE DATABASE \"{name}\""))
            .unwrap_or_else(|error| panic!("cannot create database {name}: {error}"));
        let url = with_database(admin_url, &name);
        TestDatabase { admin_url: admin_url.to_owned(), name, url, drop_database }
    }

    /// The URL of the new database.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The database's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The first column of the first row of `sql`, run on the new database (a count).
    pub fn query_i64(&self, sql: &str) -> i64 {
        let row = self.client().query_one(sql, &[]).unwrap_or_else(|error| panic!("{sql}: {error}"));
        row.try_get(0).unwrap_or_else(|error| panic!("{sql}: {error}"))
    }

    /// A client connected to the new database as the server's administrator (to look at or
    /// lock what the ledger wrote).
    pub fn client(&self) -> postgres::Client {
        postgres::Client::connect(&self.url, postgres::NoTls)
            .unwrap_or_else(|error| panic!("cannot connect to {}: {error}", self.name))
    }
}

impl Drop for TestDatabase {
    fn drop(&mut self) {
        if !self.drop_database {
            return;
        }
        // Best effort: a throwaway cluster is removed whole anyway.
        if let Ok(mut admin) = postgres::Client::connect(&self.admin_url, postgres::NoTls) {
            let _ = admin.batch_execute(&format!("DROP DATABASE IF EXISTS \"{}\" WITH (FORCE)", self.name));
        }
    }
}

/// A throwaway cluster for one test (`.ci/postgres start`), stopped and removed on drop.
///
/// It listens on a Unix socket in its directory (role `revcal`, trusted) and on 127.0.0.1 at
/// a free port (password roles only). Tests use it to crash, freeze or stop a server without
/// touching the one other tests share.
#[derive(Debug)]
pub struct TestCluster {
    dir: PathBuf,
    frozen: bool,
    stopped: bool,
}

/// The script that makes throwaway clusters.
fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.ci/postgres")
}

/// Runs `.ci/postgres ARGS`, returning its standard output; panics with its stderr on failure.
fn run_script(args: &[&str]) -> String {
    let output = Command::new(script())
        .args(args)
        .output()
        .unwrap_or_else(|error| panic!("cannot run .ci/postgres: {error}"));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), ".ci/postgres {}: {stderr}", args.join(" "));
    String::from_utf8_lossy(&output.stdout).trim().to_owned()
}

impl TestCluster {
    /// Starts a cluster for `test`, or `None` when PostgreSQL tests are not configured (as
    /// [`TestDatabase::create`]: `REVCAL_TEST_POSTGRES` unset, `REVCAL_REQUIRE_POSTGRES`
    /// not 1). The server binaries must be installed; this never installs them.
    pub fn start(test: &str) -> Option<TestCluster> {
        server_or_skip(test)?;
        let dir = PathBuf::from(run_script(&["start", "--no-install"]));
        Some(TestCluster { dir, frozen: false, stopped: false })
    }

    fn dir(&self) -> &str {
        self.dir.to_str().unwrap_or_else(|| panic!("cluster directory {} is not UTF-8", self.dir.display()))
    }

    /// The URL of its `postgres` database over the Unix socket, as the trusted role `revcal`.
    pub fn url(&self) -> String {
        run_script(&["url", self.dir()])
    }

    /// Its TCP port on 127.0.0.1 (password roles only).
    pub fn port(&self) -> u16 {
        let port = run_script(&["port", self.dir()]);
        port.parse().unwrap_or_else(|_| panic!("bad port {port:?}"))
    }

    /// A new database on the cluster (see [`TestDatabase`]), dropped with the value.
    pub fn database(&self, test: &str) -> TestDatabase {
        TestDatabase::create_on(&self.url(), test, false)
    }

    /// Runs SQL as the administrator, in the `postgres` database.
    pub fn execute(&self, sql: &str) {
        let mut admin = postgres::Client::connect(&self.url(), postgres::NoTls)
            .unwrap_or_else(|error| panic!("cannot connect to the test cluster: {error}"));
        admin.batch_execute(sql).unwrap_or_else(|error| panic!("{sql}: {error}"));
    }

    /// Freezes the whole server: SIGSTOP to the postmaster and every process it started.
    /// The kernel still accepts connections and data for it; nothing answers.
    pub fn freeze(&mut self) {
        run_script(&["signal", self.dir(), "STOP"]);
        self.frozen = true;
    }

    /// Thaws a frozen server (SIGCONT).
    pub fn thaw(&mut self) {
        run_script(&["signal", self.dir(), "CONT"]);
        self.frozen = false;
    }

    /// `pg_ctl restart -m immediate`: every server process killed without a checkpoint, then
    /// crash recovery, as after the server's own crash.
    pub fn crash_restart(&self) {
        run_script(&["restart", self.dir()]);
    }

    /// Stops the server and removes the cluster now (the URL then names a server that is
    /// not there).
    pub fn stop(&mut self) {
        if self.frozen {
            self.thaw();
        }
        if !self.stopped {
            run_script(&["stop", self.dir()]);
            self.stopped = true;
        }
    }
}

impl Drop for TestCluster {
    fn drop(&mut self) {
        if self.stopped {
            return;
        }
        // Best effort, and never a panic while a failed test unwinds: a frozen server must
        // be thawed before it can stop.
        let dir = self.dir.clone();
        if self.frozen {
            let _ = Command::new(script()).arg("signal").arg(&dir).arg("CONT").output();
        }
        let _ = Command::new(script()).arg("stop").arg(&dir).output();
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
    use super::{skip_note, with_database};

    #[test]
    fn the_database_is_replaced_and_the_rest_kept() {
        assert_eq!(
            with_database("postgresql://u@localhost/postgres?host=/tmp/x", "d"),
            "postgresql://u@localhost/d?host=/tmp/x"
        );
        assert_eq!(with_database("postgres://u:p@h:5432", "d"), "postgres://u:p@h:5432/d");
        assert_eq!(with_database("postgres://h?sslmode=disable", "d"), "postgres://h/d?sslmode=disable");
    }

    #[test]
    fn the_note_counts_and_says_how_to_run_them() {
        assert!(skip_note(1).starts_with("note: 1 test skipped its PostgreSQL part (REVCAL_TEST_POSTGRES"));
        assert!(skip_note(23).starts_with("note: 23 tests skipped their PostgreSQL part"));
        assert!(skip_note(2).contains(".ci/postgres start"));
    }
}
