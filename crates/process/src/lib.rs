//! Running the commands revcal does not trust, in one place: the reviewer, witness and repro
//! scripts, the tests the bug miner runs, the `--judge-cmd` judge and `git`.
//!
//! - [`run`] starts `sh -c SCRIPT` ([`ShellCommand`]) in its own process group, with a
//!   timeout, optional stdin, stdout and stderr capped, a memory cap, an optional Landlock
//!   [`Sandbox`], variables withheld from it, and the group killed on every way out;
//!   [`run_isolated`] also drops the variables that point git at a repository
//!   ([`GIT_LOCATION_VARIABLES`]).
//! - [`SignalWatch`] turns every signal that would end the process into a flag that [`run`]
//!   polls, so a Ctrl-C stops the command and the caller cleans up on its ordinary path.
//! - [`run_token`], [`command_token`] and [`RUN_TOKEN_VARIABLE`] mark every process a run
//!   starts; [`Subreaper`] keeps orphaned descendants attached to this process,
//!   [`end_descendants`] ends every process that carries a command's token, wherever it
//!   moved, and [`end_run`] every process of a run (one killed with SIGKILL, say).
//! - [`Watchdog`] is a process of its own that ends a run's processes once revcal is gone,
//!   however it died.
//! - [`git`] runs the `git` program with one error shape, [`GitError`].
//! - [`redact`] and [`redact_url_credentials`] keep secrets out of what is shown;
//!   [`make_undumpable`], [`ptrace_capable`], [`ancestors_exposing`] and [`reopenable_path`]
//!   keep a secret this process holds out of the commands' reach.
//!
//! Linux only (process groups, `/proc`, `prctl`, Landlock).
//!
//! ```
//! use revcal_process::{Exit, ShellCommand, SignalWatch, run};
//! use std::time::Duration;
//!
//! let dir = std::env::temp_dir();
//! // A command that would run for a minute, and leaves a grandchild behind: both are killed.
//! let command = ShellCommand::new("sleep 60 & sleep 60", &dir, Duration::from_millis(200));
//! let done = run(&command, &SignalWatch::inert()).unwrap();
//! assert_eq!(done.exit, Exit::TimedOut);
//! ```

mod command;
mod exposure;
mod git;
mod reap;
mod redact;
mod sandbox;
mod signals;
mod watchdog;

pub use command::{Exit, Finished, GIT_LOCATION_VARIABLES, ShellCommand, run, run_isolated};
pub use exposure::{
    Exposure, ancestors_exposing, is_dumpable, make_undumpable, ptrace_capable, reopenable_path,
    take_secret_fd,
};
pub use git::{GitError, git};
pub use reap::{RUN_TOKEN_VARIABLE, Subreaper, command_token, end_descendants, end_run, run_token};
pub use redact::{MIN_SECRET_CHARS, REDACTED, redact, redact_url_credentials};
pub use sandbox::{Enforcement, Sandbox};
pub use signals::{SignalWatch, handled_signals, signal_name};
pub use watchdog::{WATCHDOG_NAME, Watchdog};
