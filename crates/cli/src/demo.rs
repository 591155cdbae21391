//! `revcal demo`.

use crate::style::Style;
use clap::Args;
use std::process::ExitCode;

/// Arguments of `revcal demo`.
#[derive(Debug, Args)]
pub struct DemoArgs {}

/// Runs `revcal demo`.
pub fn run(_args: DemoArgs, _style: &Style) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`revcal demo` is under construction")
}
