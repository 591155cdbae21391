//! `revcal rubric lint`.

use super::render;
use crate::args::LintFormat;
use crate::exit::USAGE as EXIT_USAGE;
use crate::output::emit;
use crate::style::Style;
use anyhow::{Context, Result};
use revcal_rubric_repo::{Linter, RepoError};
use std::path::PathBuf;
use std::process::ExitCode;

pub(crate) fn run(
    paths: &[PathBuf],
    format: LintFormat,
    deny_warnings: bool,
    style: &Style,
) -> Result<ExitCode> {
    let linter = Linter::new()?;
    let report = match linter.lint_paths(paths) {
        Ok(report) => report,
        Err(RepoError::NotFound { path }) => {
            let hint = if path.as_os_str() == "rubrics" {
                " (lint looks in ./rubrics by default; name the files or directories to check)"
            } else {
                ""
            };
            anyhow::bail!("`{}` does not exist{hint}", path.display());
        }
        Err(other) => return Err(other.into()),
    };
    if report.files.is_empty() {
        let shown: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
        anyhow::bail!("no rubric files (*.yaml, *.yml, *.json) under {}", shown.join(", "));
    }
    let text = match format {
        LintFormat::Human => render::human(&report, style),
        LintFormat::Json => render::json(&report)?,
        LintFormat::Github => render::github(&report),
    };
    emit(&text).context("cannot write the lint report")?;
    Ok(if report.io_failures > 0 {
        ExitCode::from(EXIT_USAGE)
    } else if report.passes(deny_warnings) {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
