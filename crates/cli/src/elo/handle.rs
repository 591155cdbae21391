//! `revcal elo handle`: one protocol message on stdin, the response on stdout.

use super::LedgerArg;
use crate::output::emit;
use anyhow::{Context, Result};
use revcal_elo::{MAX_MESSAGE_BYTES, Response};
use std::io::Read;
use std::process::ExitCode;

pub(crate) fn run(ledger: &LedgerArg) -> Result<ExitCode> {
    // Read no more than one byte past the limit (plus a line end): the ledger answers a
    // message over the limit with a rejection that names it, as it answers any bad message.
    let mut bytes = Vec::new();
    std::io::stdin()
        .lock()
        .take(MAX_MESSAGE_BYTES as u64 + 3)
        .read_to_end(&mut bytes)
        .context("cannot read standard input")?;
    let text = match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(error) if error.as_bytes().len() > MAX_MESSAGE_BYTES => {
            String::from_utf8_lossy(error.as_bytes()).into_owned()
        }
        Err(error) => anyhow::bail!("<stdin>: not UTF-8 text (byte {})", error.utf8_error().valid_up_to()),
    };
    let mut ledger = ledger.open_or_create()?;
    let response = ledger.handle(text.trim())?;
    let body = match &response {
        Response::Reply(message) => message.canonical().to_owned(),
        other => serde_json::to_string(&other.to_json())?,
    };
    emit(&format!("{body}\n"))?;
    Ok(if matches!(response, Response::Rejected { .. }) { ExitCode::FAILURE } else { ExitCode::SUCCESS })
}
