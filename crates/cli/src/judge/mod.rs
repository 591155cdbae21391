//! `revcal judge check|calibrate`: try the configured LLM judge, and measure it against the
//! labelled cases shipped with revcal. Also the judge flags `revcal calibrate` shares.

mod select;

pub(crate) use select::{JudgeFlags, ProviderArg, SETUP_HINT};

use crate::output::{emit, outln};
use crate::style::Style;
use clap::{Args, Subcommand};
use std::process::ExitCode;

/// `revcal judge`: 0 done, 1 operational error (no judge, the provider failed).
const JUDGE_ERROR: u8 = 1;

/// Arguments of `revcal judge`.
#[derive(Debug, Args)]
pub(crate) struct JudgeArgs {
    #[command(subcommand)]
    command: JudgeCommand,
}

#[derive(Debug, Subcommand)]
enum JudgeCommand {
    /// One cheap call to the configured judge: prints provider, model, endpoint and latency.
    #[command(
        after_help = "Exit status:\n  0  the judge answered\n  1  no judge is configured, or the call failed\n  2  usage error"
    )]
    Check {
        #[command(flatten)]
        judge: JudgeFlags,
    },
}

/// Runs `revcal judge ...`.
pub(crate) fn run(args: JudgeArgs, style: &Style) -> anyhow::Result<ExitCode> {
    match args.command {
        JudgeCommand::Check { judge } => check(&judge, style),
    }
}

fn check(flags: &JudgeFlags, style: &Style) -> anyhow::Result<ExitCode> {
    let Some(config) = flags.config()? else {
        eprintln!("{}: no LLM judge is configured", style.error("error"));
        eprintln!("{}: {SETUP_HINT}", style.bold("hint"));
        return Ok(ExitCode::from(JUDGE_ERROR));
    };
    let (provider, model, base) =
        (config.provider(), config.model().to_owned(), config.base_url().to_owned());
    let judge = flags.judge(config);
    match judge.check() {
        Ok(latency) => {
            let spent = judge.spent();
            let mut text = String::new();
            outln!(text, "{} {provider} {model}", style.success("ok"));
            outln!(text, "  endpoint  {base}");
            outln!(text, "  latency   {} ms", latency.as_millis());
            outln!(text, "  tokens    {} input / {} output", spent.input_tokens, spent.output_tokens);
            emit(&text)?;
            Ok(ExitCode::SUCCESS)
        }
        Err(error) => {
            eprintln!("{}: {:#}", style.error("error"), anyhow::Error::from(error));
            Ok(ExitCode::from(JUDGE_ERROR))
        }
    }
}
