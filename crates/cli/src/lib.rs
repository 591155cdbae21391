//! The `revcal` command line, as a library that both binaries of this crate call.
//!
//! `revcal` and `review-calibration` (the name of the tool `revcal calibrate` replaces) are
//! two thin `main`s over [`revcal`] and [`review_calibration`], so the same flags, output
//! and exit codes come from one place. The library crates do the work; this crate owns
//! argument parsing, printing and exit codes.
//!
//! Usage errors never share an exit code with a result: `revcal calibrate` exits 1 on an
//! unknown flag (its 2 means "the gate failed") and `revcal score` exits 3 (its 2 means
//! UNCLEAR). Every command's `--help` ends with its exit-code table.
//!
//! ```
//! use std::process::ExitCode;
//!
//! // A mistyped flag: calibrate's operational-error code, and score's invalid-input code.
//! assert_eq!(revcal_cli::revcal(["revcal", "calibrate", "--min-recal", "0.6"]), ExitCode::from(1));
//! assert_eq!(revcal_cli::review_calibration(["review-calibration", "--min-recal", "0.6"]), ExitCode::from(1));
//! assert_eq!(revcal_cli::revcal(["revcal", "score", "--rubirc", "x"]), ExitCode::from(3));
//! ```

// Every message revcal prints to stderr goes through `secrets::redact`: these
// shadow the standard macros in the whole crate (they are defined before any module), so
// that no message, whoever writes it, prints a judge's API key or a URL's credentials.
// Standard output goes through `output::emit`, and report files through `output::write`,
// which redact the same way.
macro_rules! eprintln {
    () => { ::std::eprintln!() };
    ($($arg:tt)*) => { ::std::eprintln!("{}", $crate::secrets::redact(&::std::format!($($arg)*))) };
}
macro_rules! eprint {
    ($($arg:tt)*) => { ::std::eprint!("{}", $crate::secrets::redact(&::std::format!($($arg)*))) };
}

mod agentchat;
pub mod allocator;
mod args;
mod bench;
mod bugs;
mod cache;
mod calibrate;
mod completions;
mod demo;
mod elo;
mod exit;
mod input;
mod judge;
mod library;
mod mutate;
mod output;
mod review;
mod rubric;
mod score;
mod secrets;
mod style;

use args::{Cli, Command, ReviewCalibrationCli};
use clap::Parser;
use std::ffi::OsString;
use std::process::ExitCode;

/// The `revcal` command line as clap sees it: every command, flag and help text, for tools
/// that generate documentation from it (`cargo xtask man` writes the man pages).
pub fn command() -> clap::Command {
    use clap::CommandFactory;
    Cli::command()
}

/// Runs `revcal` with these arguments (the first is the program name) and returns its exit
/// code. Output goes to stdout and stderr as in the binary.
pub fn revcal<I, T>(args: I) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    protect_process();
    let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
    let cli = match Cli::try_parse_from(&args) {
        Ok(cli) => cli,
        Err(error) => return usage_error(&error, exit::for_error_in(subcommand_name(&args).as_deref())),
    };
    secrets::register_secrets_from_env();
    init_tracing(cli.verbose, style::Style::for_stderr(cli.color).enabled());
    let style = style::Style::for_stdout(cli.color);
    let error_code = exit::for_error_in(Some(cli.command.name()));
    let outcome = match cli.command {
        Command::Rubric(command) => rubric::run(command, &style),
        Command::Score(args) => score::run(args, &style),
        Command::Review(args) => review::run(*args, &style),
        Command::Mutate(args) => mutate::run(args, &style),
        Command::Bugs(args) => bugs::run(args, &style),
        Command::Bench(args) => bench::run(*args, &style),
        Command::Calibrate(args) => calibrate::run(*args, &style),
        Command::Demo(args) => demo::run(args, &style),
        Command::Elo(args) => elo::run(args, &style),
        Command::Agentchat(args) => agentchat::run(args),
        Command::Judge(args) => judge::run(args, &style),
        Command::Cache(args) => cache::run(args),
        Command::Completions(args) => completions::run(&args),
    };
    finish(outcome, cli.color, error_code)
}

/// Runs `review-calibration` (the same command as `revcal calibrate`, same flags and exit
/// codes) with these arguments, the first being the program name.
pub fn review_calibration<I, T>(args: I) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    protect_process();
    let cli = match ReviewCalibrationCli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(error) => return usage_error(&error, exit::CALIBRATE_ERROR),
    };
    secrets::register_secrets_from_env();
    init_tracing(cli.verbose, style::Style::for_stderr(cli.color).enabled());
    let style = style::Style::for_stdout(cli.color);
    finish(calibrate::run(cli.calibrate, &style), cli.color, exit::CALIBRATE_ERROR)
}

/// What every run of the binaries does first, before any thread starts: makes the process
/// non-dumpable, so that the commands it runs as the same user (a reviewer) cannot read its
/// environment, descriptors or memory through `/proc`, and takes the authority's key out of
/// its environment (`$REVCAL_AUTHORITY_KEY`), so that none of them inherits it. A system
/// that refuses the first is found out where it matters (`calibrate --record-to` checks).
fn protect_process() {
    let _ = revcal_process::make_undumpable();
    elo::authority::take_from_environment();
}

/// The exit code of a finished command; an error is printed and exits with `error_code`.
fn finish(outcome: anyhow::Result<ExitCode>, color: args::ColorChoice, error_code: u8) -> ExitCode {
    match outcome {
        Ok(code) => code,
        Err(error) if output::is_broken_pipe(&error) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("{}: {error:#}", style::Style::for_stderr(color).error("error"));
            ExitCode::from(error_code)
        }
    }
}

/// Prints clap's message; `--help` and `--version` exit 0, a usage error exits `code`.
fn usage_error(error: &clap::Error, code: u8) -> ExitCode {
    // Printing can only fail on a closed stream, and there is nowhere left to report that.
    let _ = error.print();
    if error.use_stderr() { ExitCode::from(code) } else { ExitCode::SUCCESS }
}

/// The subcommand a command line names, found without clap (which has just refused it):
/// the first argument that is neither an option nor the value of `--color`.
fn subcommand_name(args: &[OsString]) -> Option<String> {
    let mut rest = args.iter().skip(1).filter_map(|arg| arg.to_str());
    while let Some(arg) = rest.next() {
        match arg {
            "--color" => {
                rest.next();
            }
            // Other options (`-v`, `--color=never`, a mistyped one) name no command.
            _ if arg.starts_with('-') => {}
            _ => return Some(arg.to_string()),
        }
    }
    None
}

/// Logs go to stderr: `RUST_LOG` when set, otherwise warnings, raised by each `-v`; in colour
/// only when stderr is coloured (a terminal, no `NO_COLOR`, not `--color never`), so that CI
/// logs and files carry no escape codes.
fn init_tracing(verbose: u8, colour: bool) {
    use tracing_subscriber::EnvFilter;
    let default = match verbose {
        0 => "warn",
        1 => "info",
        2 => "debug",
        _ => "trace",
    };
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default));
    // A second call (the library used twice in one process) keeps the first subscriber.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(output::RedactingStderr::default)
        .with_ansi(colour)
        .with_target(false)
        .try_init();
}

#[cfg(test)]
mod tests {
    use super::subcommand_name;
    use std::ffi::OsString;

    fn name(args: &[&str]) -> Option<String> {
        let args: Vec<OsString> = args.iter().map(OsString::from).collect();
        subcommand_name(&args)
    }

    #[test]
    fn the_subcommand_is_found_after_global_options() {
        assert_eq!(name(&["revcal", "score", "--rubirc"]).as_deref(), Some("score"));
        assert_eq!(name(&["revcal", "-vv", "--color", "never", "calibrate"]).as_deref(), Some("calibrate"));
        assert_eq!(name(&["revcal", "--color=always", "--verbose", "mutate"]).as_deref(), Some("mutate"));
        assert_eq!(name(&["revcal", "--bogus", "score"]).as_deref(), Some("score"));
        assert_eq!(name(&["revcal", "-v"]), None);
    }
}
