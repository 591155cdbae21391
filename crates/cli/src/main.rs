//! `revcal`: how good is this code reviewer, and can we prove it?
//!
//! The binary owns argument parsing, output and exit codes; the work happens in the
//! library crates.

mod args;
mod calibrate;
mod demo;
mod elo;
mod library;
mod mutate;
mod output;
mod rubric;
mod score;
mod style;

use args::{Cli, Command};
use clap::Parser;
use std::process::ExitCode;

/// Exit code for usage and I/O errors (clap uses the same for bad arguments).
pub const EXIT_USAGE: u8 = 2;

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_tracing(cli.verbose);
    let style = style::Style::for_stdout(cli.color);
    let outcome = match cli.command {
        Command::Rubric(command) => rubric::run(command, &style),
        Command::Score(args) => score::run(args, &style),
        Command::Mutate(args) => mutate::run(args, &style),
        Command::Calibrate(args) => calibrate::run(args, &style),
        Command::Demo(args) => demo::run(args, &style),
        Command::Elo(args) => elo::run(args, &style),
    };
    match outcome {
        Ok(code) => code,
        Err(error) if output::is_broken_pipe(&error) => ExitCode::SUCCESS,
        Err(error) => {
            let style = style::Style::for_stderr(cli.color);
            eprintln!("{}: {error:#}", style.error("error"));
            ExitCode::from(EXIT_USAGE)
        }
    }
}

/// Logs go to stderr: `RUST_LOG` when set, otherwise warnings, raised by each `-v`.
fn init_tracing(verbose: u8) {
    use tracing_subscriber::EnvFilter;
    let default = match verbose {
        0 => "warn",
        1 => "info",
        2 => "debug",
        _ => "trace",
    };
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .try_init();
}
