//! `review-calibration`: the command name of the tool `revcal calibrate` replaces. Same
//! flags, same code (the calibrate module is compiled into both binaries), same exit codes.

#[allow(dead_code)]
#[path = "../calibrate/mod.rs"]
mod calibrate;
#[allow(dead_code, unused_imports)]
#[path = "../output.rs"]
mod output;
#[allow(dead_code)]
#[path = "../style.rs"]
mod style;

/// The one argument type the shared modules need from the `revcal` binary's `args`.
mod args {
    /// When to colour output: auto colours a terminal unless NO_COLOR is set.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
    pub enum ColorChoice {
        Auto,
        Always,
        Never,
    }
}

use clap::Parser;
use std::process::ExitCode;

/// Measure a code reviewer: plant bugs in a commit, run the reviewer, restore the tree and
/// score what it caught (the same command as `revcal calibrate`).
#[derive(Debug, Parser)]
#[command(name = "review-calibration", version, max_term_width = 100)]
struct Cli {
    #[command(flatten)]
    calibrate: calibrate::CalibrateArgs,
    /// When to colour output: auto colours a terminal unless NO_COLOR is set.
    #[arg(long, value_enum, default_value_t = args::ColorChoice::Auto, value_name = "WHEN")]
    color: args::ColorChoice,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let style = style::Style::for_stdout(cli.color);
    match calibrate::run(cli.calibrate, &style) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("{}: {error:#}", style::Style::for_stderr(cli.color).error("error"));
            ExitCode::from(1)
        }
    }
}
