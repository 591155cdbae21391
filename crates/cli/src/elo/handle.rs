//! `revcal elo handle`: one protocol message on stdin, the response on stdout.

use super::{LedgerPath, read_text};
use crate::output::emit;
use anyhow::Result;
use revcal_elo::Response;
use std::path::Path;
use std::process::ExitCode;

pub(crate) fn run(ledger: &LedgerPath) -> Result<ExitCode> {
    let text = read_text(Path::new("-"))?;
    let mut ledger = ledger.open_or_create()?;
    let response = ledger.handle(text.trim())?;
    let body = match &response {
        Response::Reply(message) => message.canonical().to_owned(),
        other => serde_json::to_string(&other.to_json())?,
    };
    emit(&format!("{body}\n"))?;
    Ok(if matches!(response, Response::Rejected { .. }) { ExitCode::FAILURE } else { ExitCode::SUCCESS })
}
