//! `revcal elo ingest`: JSONL files into the ledger, each rejected line reported.

use super::{LedgerArg, display, read_input};
use crate::output::{emit, outln};
use crate::style::Style;
use anyhow::Result;
use revcal_elo::{LedgerError, LineOutcome, MessageError};
use serde_json::json;
use std::path::PathBuf;
use std::process::ExitCode;

/// One rejected line.
struct Rejected {
    file: String,
    line: usize,
    code: String,
    field: Option<String>,
    reason: String,
}

pub(crate) fn run(
    ledger: &LedgerArg,
    files: &[PathBuf],
    json: bool,
    batch_size: usize,
    style: &Style,
) -> Result<ExitCode> {
    // Read every file first: a missing file is an I/O error (exit 2) before anything is stored.
    let inputs: Vec<(String, Vec<u8>)> = files
        .iter()
        .map(|path| Ok((display(path), read_input(path, super::MAX_STREAM_BYTES)?)))
        .collect::<Result<_>>()?;
    let mut ledger = ledger.open_or_create()?;
    let mut stored = 0usize;
    let mut scored = 0usize;
    let mut rejected = Vec::new();
    for (name, bytes) in &inputs {
        // Line numbers of the UTF-8 lines handed to the ledger; other lines are rejected here.
        let mut numbers = Vec::new();
        let mut texts = Vec::new();
        for (index, line) in bytes.split(|byte| *byte == b'\n').enumerate() {
            match std::str::from_utf8(line.strip_suffix(b"\r").unwrap_or(line)) {
                Ok(text) if text.trim().is_empty() => {}
                Ok(text) => {
                    numbers.push(index + 1);
                    texts.push(text);
                }
                Err(error) => rejected.push(Rejected {
                    file: name.clone(),
                    line: index + 1,
                    code: "invalid".into(),
                    field: None,
                    reason: format!("not UTF-8 text (byte {})", error.valid_up_to() + 1),
                }),
            }
        }
        let ingested = ledger.ingest_lines_pipelined(&texts, batch_size, |outcomes| {
            for (index, outcome) in outcomes {
                let number = numbers.get(index).copied().unwrap_or_default();
                match outcome {
                    LineOutcome::Stored(done) => {
                        stored += 1;
                        scored += done.scored.len();
                    }
                    LineOutcome::Invalid(error) => rejected.push(invalid(name, number, &error)),
                    LineOutcome::Rejected(rejection) => rejected.push(Rejected {
                        file: name.clone(),
                        line: number,
                        code: rejection.code().into(),
                        field: None,
                        reason: rejection.to_string(),
                    }),
                }
            }
        });
        // The library counts what this file stored; the user ran one ingest of every file.
        ingested.map_err(|error| match error {
            LedgerError::Interrupted { unconfirmed, error, .. } => {
                LedgerError::Interrupted { stored: stored as u64, unconfirmed, error }
            }
            other => other,
        })?;
    }
    // Files in the order given, lines in order.
    let order: Vec<&String> = inputs.iter().map(|(name, _)| name).collect();
    rejected.sort_by_key(|r| (order.iter().position(|name| **name == r.file), r.line));
    report(ledger.location(), stored, scored, &rejected, json, style)?;
    Ok(if rejected.is_empty() { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

fn invalid(file: &str, line: usize, error: &MessageError) -> Rejected {
    // A JSON error's position is within the line; report it as line:column of the file.
    let (line, reason) = match error {
        MessageError::Json { column, source, .. } => {
            (line, format!("column {column}: not valid JSON: {}", source.reason()))
        }
        MessageError::Unsigned => (line, format!("{error} (`revcal elo sign`)")),
        other => (line, other.to_string()),
    };
    // A well-formed unsigned query is no fault of the line: like a signed one, it is simply
    // not something the ledger stores.
    let code = if matches!(error, MessageError::UnsignedQuery) { "not_stored" } else { "invalid" };
    Rejected { file: file.to_owned(), line, code: code.into(), field: error.field(), reason }
}

fn report(
    location: &revcal_elo::LedgerLocation,
    stored: usize,
    scored: usize,
    rejected: &[Rejected],
    json: bool,
    style: &Style,
) -> Result<()> {
    let mut out = String::new();
    if json {
        let lines: Vec<_> = rejected
            .iter()
            .map(|r| json!({"file": r.file, "line": r.line, "code": r.code, "field": r.field, "reason": r.reason}))
            .collect();
        let report = json!({
            "ledger": location.to_string(),
            "stored": stored,
            "scored_reviews": scored,
            "rejected": rejected.len(),
            "rejections": lines,
        });
        outln!(out, "{}", serde_json::to_string_pretty(&report)?);
    } else {
        for r in rejected {
            outln!(out, "{}:{}: {} ({}): {}", r.file, r.line, style.error("rejected"), r.code, r.reason);
        }
        let summary = format!(
            "stored {stored}, rejected {}, scored {}",
            rejected.len(),
            super::count(scored as u64, "review")
        );
        let summary = if rejected.is_empty() { style.success(&summary) } else { style.warning(&summary) };
        outln!(out, "{summary} in {}", location);
    }
    emit(&out)?;
    Ok(())
}
