//! One connection to the server, with every wait on it bounded.
//!
//! The driver's `connect_timeout` covers opening the socket only: a server whose processes
//! are stopped (SIGSTOP) or a host that vanished mid-session leaves the kernel accepting the
//! connection and the bytes, and nothing answers. So every wait here has a deadline of its
//! own, on the client: connecting (socket, startup, authentication, the session's settings)
//! within `connect_timeout`, and every statement within the session's `statement_timeout`
//! or `lock_timeout`, whichever is longer, plus [`ANSWER_GRACE`] for the server's own
//! error to arrive first. The server enforces those two limits itself while it runs; TCP
//! keepalives and a TCP user timeout close a connection to a host that no longer answers
//! at all (they apply to TCP only, not to a Unix socket). A connection that missed a
//! deadline is given up: its state is unknown, and the server rolls its transaction back
//! when it notices the socket closed.

use crate::ledger::LedgerError;
use crate::ledger::location::PostgresLocation;
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::future::Future;
use std::time::Duration;
use tokio_postgres::error::SqlState;
use tokio_postgres::types::ToSql;
use tokio_postgres::{Client, NoTls, Row, Statement};

/// How long connecting may take when the URL sets no `connect_timeout`.
pub(crate) const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// The session's `statement_timeout` unless the URL's `options` or the server sets one.
pub(crate) const STATEMENT_TIMEOUT: Duration = Duration::from_secs(120);
/// The session's `lock_timeout` (how long a writer waits for another to finish) unless the
/// URL's `options` or the server sets one; as SQLite's busy timeout.
pub(crate) const LOCK_TIMEOUT: Duration = Duration::from_secs(60);
/// How long past those limits the client still waits for the server's answer (its error,
/// when a limit is reached) before giving the connection up.
pub(crate) const ANSWER_GRACE: Duration = Duration::from_secs(10);
/// TCP keepalives: first probe after this long without traffic ...
const KEEPALIVES_IDLE: Duration = Duration::from_secs(30);
/// ... then one every 10 s, and the connection is closed after 3 unanswered probes.
const KEEPALIVES_INTERVAL: Duration = Duration::from_secs(10);
const KEEPALIVES_RETRIES: u32 = 3;
/// TCP user timeout: sent data unacknowledged this long closes the connection.
const TCP_USER_TIMEOUT: Duration = Duration::from_secs(60);
/// The driver's keepalive idle time when the URL sets none (two hours).
const DRIVER_KEEPALIVES_IDLE: Duration = Duration::from_secs(2 * 60 * 60);

/// An open connection and its prepared statements.
pub(crate) struct Session {
    /// Runs the connection's I/O while a statement is awaited (current thread only).
    runtime: tokio::runtime::Runtime,
    client: Client,
    statements: RefCell<HashMap<&'static str, Statement>>,
    /// The ledger as messages name it.
    ledger: String,
    /// The session's `lock_timeout`.
    lock_wait: Duration,
    /// How long to wait for the answer to any statement.
    answer_wait: Duration,
    /// Set when a deadline passed: what was being waited for. The connection is not used
    /// again.
    given_up: Cell<Option<(Duration, &'static str)>>,
}

impl Session {
    /// Connects, authenticates and sets the session's limits, all within the URL's
    /// `connect_timeout` (else [`CONNECT_TIMEOUT`]).
    pub(crate) fn connect(location: &PostgresLocation, ledger: &str) -> Result<Session, LedgerError> {
        let mut config = location.config().clone();
        let connect_wait = config.get_connect_timeout().copied().unwrap_or(CONNECT_TIMEOUT);
        config.connect_timeout(connect_wait);
        if config.get_application_name().is_none() {
            config.application_name("revcal");
        }
        if config.get_tcp_user_timeout().is_none() {
            config.tcp_user_timeout(TCP_USER_TIMEOUT);
        }
        if config.get_keepalives_idle() == DRIVER_KEEPALIVES_IDLE {
            config.keepalives_idle(KEEPALIVES_IDLE);
        }
        if config.get_keepalives_interval().is_none() {
            config.keepalives_interval(KEEPALIVES_INTERVAL);
        }
        if config.get_keepalives_retries().is_none() {
            config.keepalives_retries(KEEPALIVES_RETRIES);
        }
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|cause| LedgerError::Io { ledger: ledger.to_owned(), cause })?;
        let deadline = tokio::time::Instant::now() + connect_wait;
        let connected = block_within(&runtime, deadline, async {
            config
                .connect(NoTls)
                .await
                .map_err(|error| LedgerError::Postgres { ledger: ledger.to_owned(), error })
        });
        let (client, connection) = connected.unwrap_or_else(|| {
            Err(LedgerError::NoAnswer { ledger: ledger.to_owned(), waited: connect_wait, doing: CONNECTING })
        })?;
        runtime.spawn(async move {
            if let Err(error) = connection.await {
                tracing::debug!(%error, "the connection to the ledger's server ended");
            }
        });
        let session = Session {
            runtime,
            client,
            statements: RefCell::new(HashMap::new()),
            ledger: ledger.to_owned(),
            lock_wait: LOCK_TIMEOUT,
            answer_wait: connect_wait,
            given_up: Cell::new(None),
        };
        session.set_limits(deadline, connect_wait)
    }

    /// Awaits `future` until `deadline`; past it, a [`LedgerError::NoAnswer`] while
    /// connecting (which took up to `waited`).
    fn connecting<T>(
        &self,
        deadline: tokio::time::Instant,
        waited: Duration,
        future: impl Future<Output = Result<T, tokio_postgres::Error>>,
    ) -> Result<T, LedgerError> {
        let result = block_within(&self.runtime, deadline, future);
        match result {
            Some(result) => result.map_err(|error| self.error(error)),
            None => Err(LedgerError::NoAnswer { ledger: self.ledger.clone(), waited, doing: CONNECTING }),
        }
    }

    /// Reads the session's `statement_timeout` and `lock_timeout` (the URL's `options` or
    /// the server's settings), sets revcal's where they are 0 (no limit), and derives how
    /// long to wait for any answer.
    fn set_limits(
        mut self,
        deadline: tokio::time::Instant,
        connect_wait: Duration,
    ) -> Result<Session, LedgerError> {
        let rows = self.connecting(
            deadline,
            connect_wait,
            self.client.query(
                "SELECT name, setting::bigint FROM pg_settings WHERE name IN ('statement_timeout', 'lock_timeout')",
                &[],
            ),
        )?;
        let mut limits = HashMap::new();
        for row in &rows {
            let name: String = row.try_get(0).map_err(|error| self.error(error))?;
            let millis: i64 = row.try_get(1).map_err(|error| self.error(error))?;
            limits.insert(name, Duration::from_millis(u64::try_from(millis).unwrap_or(0)));
        }
        let mut settings = String::new();
        let mut limit =
            |name: &str, default: Duration| match limits.get(name).copied().filter(|set| !set.is_zero()) {
                Some(set) => set,
                None => {
                    settings.push_str(&format!("SET {name} = {}; ", default.as_millis()));
                    default
                }
            };
        let statement_wait = limit("statement_timeout", STATEMENT_TIMEOUT);
        let lock_wait = limit("lock_timeout", LOCK_TIMEOUT);
        if !settings.is_empty() {
            self.connecting(deadline, connect_wait, self.client.batch_execute(&settings))?;
        }
        self.lock_wait = lock_wait;
        self.answer_wait = statement_wait.max(lock_wait) + ANSWER_GRACE;
        tracing::debug!(
            ledger = self.ledger,
            ?statement_wait,
            ?lock_wait,
            answer_wait = ?self.answer_wait,
            "PostgreSQL session limits"
        );
        Ok(self)
    }

    /// The ledger's error for a driver's error.
    /// The ledger as messages name it.
    pub(crate) fn name(&self) -> &str {
        &self.ledger
    }

    pub(crate) fn error(&self, error: tokio_postgres::Error) -> LedgerError {
        LedgerError::Postgres { ledger: self.ledger.clone(), error }
    }

    /// Awaits `future` (a statement) within the answer deadline; past it, the connection
    /// is given up.
    fn run<T>(
        &self,
        future: impl Future<Output = Result<T, tokio_postgres::Error>>,
    ) -> Result<T, LedgerError> {
        if let Some((waited, doing)) = self.given_up.get() {
            return Err(LedgerError::NoAnswer { ledger: self.ledger.clone(), waited, doing });
        }
        let deadline = tokio::time::Instant::now() + self.answer_wait;
        match block_within(&self.runtime, deadline, future) {
            Some(result) => result.map_err(|error| self.error(error)),
            None => {
                let waited = (self.answer_wait, WAITING_FOR_A_STATEMENT);
                self.given_up.set(Some(waited));
                Err(LedgerError::NoAnswer { ledger: self.ledger.clone(), waited: waited.0, doing: waited.1 })
            }
        }
    }

    /// True once a deadline passed (nothing more is sent on the connection).
    pub(crate) fn is_given_up(&self) -> bool {
        self.given_up.get().is_some()
    }

    /// Runs `sql` (prepared once per connection) with `params`, returning its rows.
    pub(crate) fn query(
        &self,
        sql: &'static str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Vec<Row>, LedgerError> {
        let cached = self.statements.borrow().get(sql).cloned();
        let statement = match cached {
            Some(statement) => statement,
            None => {
                let statement = self.run(self.client.prepare(sql))?;
                self.statements.borrow_mut().insert(sql, statement.clone());
                statement
            }
        };
        self.run(self.client.query(&statement, params))
    }

    /// Runs statements without parameters (transaction control, migrations).
    pub(crate) fn batch(&self, sql: &str) -> Result<(), LedgerError> {
        self.run(self.client.batch_execute(sql))
    }

    /// Starts a READ COMMITTED transaction holding the writers' advisory `lock`, waiting at
    /// most `lock_timeout` for another writer to finish. On failure nothing is left open.
    pub(crate) fn begin_locked(&self, lock: i64) -> Result<(), LedgerError> {
        let begun = self
            .batch(&format!("BEGIN ISOLATION LEVEL READ COMMITTED; SELECT pg_advisory_xact_lock({lock})"));
        if let Err(error) = begun {
            self.rollback();
            return Err(match error {
                LedgerError::Postgres { ledger, error }
                    if error.code() == Some(&SqlState::LOCK_NOT_AVAILABLE) =>
                {
                    LedgerError::Busy { ledger, waited: self.lock_wait }
                }
                other => other,
            });
        }
        Ok(())
    }

    /// Abandons the open transaction, if the connection is still in use.
    pub(crate) fn rollback(&self) {
        if self.is_given_up() {
            return;
        }
        if let Err(error) = self.batch("ROLLBACK") {
            tracing::warn!(ledger = %self.ledger, %error, "rollback failed");
        }
    }
}

/// Runs `future` on `runtime` until it completes (`Some`) or `deadline` passes (`None`).
/// The timer is made inside the runtime, which drives the clock.
fn block_within<T>(
    runtime: &tokio::runtime::Runtime,
    deadline: tokio::time::Instant,
    future: impl Future<Output = T>,
) -> Option<T> {
    runtime.block_on(async { tokio::time::timeout_at(deadline, future).await.ok() })
}

/// What a [`LedgerError::NoAnswer`] was waiting for.
const CONNECTING: &str = "connecting";
const WAITING_FOR_A_STATEMENT: &str = "waiting for a statement's result";
