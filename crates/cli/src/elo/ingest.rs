//! `revcal elo ingest`: JSONL files into the ledger, each rejected line reported.

use super::{LedgerPath, display, read_input};
use crate::output::{emit, outln};
use crate::style::Style;
use anyhow::Result;
use revcal_elo::{LineOutcome, MessageError};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// One rejected line.
struct Rejected {
    file: String,
    line: usize,
    code: String,
    field: Option<String>,
    reason: String,
}

pub fn run(
    ledger: &LedgerPath,
    files: &[PathBuf],
    json: bool,
    batch_size: usize,
    style: &Style,
) -> Result<ExitCode> {
    // Read every file first: a missing file is an I/O error (exit 2) before anything is stored.
    let inputs: Vec<(String, Vec<u8>)> =
        files.iter().map(|path| Ok((display(path), read_input(path)?))).collect::<Result<_>>()?;
    let mut ledger = ledger.open_or_create()?;
    let mut stored = 0usize;
    let mut scored = 0usize;
    let mut rejected = Vec::new();
    for (name, bytes) in &inputs {
        let lines: Vec<(usize, Result<&str, std::str::Utf8Error>)> = bytes
            .split(|byte| *byte == b'\n')
            .enumerate()
            .map(|(index, line)| (index + 1, std::str::from_utf8(line.strip_suffix(b"\r").unwrap_or(line))))
            .filter(|(_, line)| line.as_ref().map_or(true, |text| !text.trim().is_empty()))
            .collect();
        for batch in lines.chunks(batch_size) {
            let texts: Vec<&str> = batch.iter().filter_map(|(_, line)| line.as_ref().ok().copied()).collect();
            let mut outcomes = ledger.ingest_lines(&texts)?.into_iter();
            for (number, line) in batch {
                let outcome = match line {
                    Err(error) => {
                        rejected.push(Rejected {
                            file: name.clone(),
                            line: *number,
                            code: "invalid".into(),
                            field: None,
                            reason: format!("not UTF-8 text (byte {})", error.valid_up_to() + 1),
                        });
                        continue;
                    }
                    Ok(_) => outcomes.next().map(|(_, outcome)| outcome),
                };
                match outcome {
                    Some(LineOutcome::Stored(done)) => {
                        stored += 1;
                        scored += done.scored.len();
                    }
                    Some(LineOutcome::Invalid(error)) => rejected.push(invalid(name, *number, &error)),
                    Some(LineOutcome::Rejected(rejection)) => rejected.push(Rejected {
                        file: name.clone(),
                        line: *number,
                        code: rejection.code().into(),
                        field: None,
                        reason: rejection.to_string(),
                    }),
                    None => anyhow::bail!("{name}:{number}: the ledger returned no result for this line"),
                }
            }
        }
    }
    report(ledger.path(), stored, scored, &rejected, json, style)?;
    Ok(if rejected.is_empty() { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

fn invalid(file: &str, line: usize, error: &MessageError) -> Rejected {
    // A JSON error's position is within the line; report it as line:column of the file.
    let (line, reason) = match error {
        MessageError::Json { column, reason, .. } => {
            (line, format!("column {column}: not valid JSON: {reason}"))
        }
        other => (line, other.to_string()),
    };
    Rejected { file: file.to_owned(), line, code: "invalid".into(), field: error.field(), reason }
}

fn report(
    path: &Path,
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
            "ledger": path.display().to_string(),
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
        let summary = format!("stored {stored}, rejected {}, scored {scored} reviews", rejected.len());
        let summary = if rejected.is_empty() { style.success(&summary) } else { style.warning(&summary) };
        outln!(out, "{summary} in {}", path.display());
    }
    emit(&out)?;
    Ok(())
}
