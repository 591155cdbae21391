//! `revcal mutate`.

use crate::style::Style;
use clap::Args;
use std::process::ExitCode;

/// Arguments of `revcal mutate`.
#[derive(Debug, Args)]
pub struct MutateArgs {}

/// Runs `revcal mutate`.
pub fn run(_args: MutateArgs, _style: &Style) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`revcal mutate` is under construction")
}
