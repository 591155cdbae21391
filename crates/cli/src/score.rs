//! `revcal score`.

use crate::style::Style;
use clap::Args;
use std::process::ExitCode;

/// Arguments of `revcal score`.
#[derive(Debug, Args)]
pub struct ScoreArgs {}

/// Runs `revcal score`.
pub fn run(_args: ScoreArgs, _style: &Style) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`revcal score` is under construction")
}
