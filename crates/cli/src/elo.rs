//! `revcal elo`.

use crate::style::Style;
use clap::Args;
use std::process::ExitCode;

/// Arguments of `revcal elo`.
#[derive(Debug, Args)]
pub struct EloArgs {}

/// Runs `revcal elo`.
pub fn run(_args: EloArgs, _style: &Style) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`revcal elo` is under construction")
}
