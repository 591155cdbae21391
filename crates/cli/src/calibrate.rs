//! `revcal calibrate`.

use crate::style::Style;
use clap::Args;
use std::process::ExitCode;

/// Arguments of `revcal calibrate`.
#[derive(Debug, Args)]
pub struct CalibrateArgs {}

/// Runs `revcal calibrate`.
pub fn run(_args: CalibrateArgs, _style: &Style) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`revcal calibrate` is under construction")
}
