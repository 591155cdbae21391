//! Reading the ledger: leaderboard, receipts, the issuer key, the consistency check; and
//! verifying receipts offline.

use super::{LedgerArg, count, display, load_key_file, rating_text, read_text};
use crate::output::{emit, outln};
use crate::style::Style;
use anyhow::{Context, Result};
use revcal_elo::{AgentId, Scope, verify_receipt_value};
use serde_json::{Value, json};
use std::path::Path;
use std::process::ExitCode;

pub(crate) fn leaderboard(
    ledger: &LedgerArg,
    limit: u32,
    scope: &Scope,
    json: bool,
    style: &Style,
) -> Result<ExitCode> {
    let ledger = ledger.open_existing()?;
    let entries = ledger.leaderboard_in(scope, Some(limit))?;
    let mut out = String::new();
    if json {
        outln!(out, "{}", serde_json::to_string_pretty(&entries)?);
    } else if entries.is_empty() {
        match scope {
            Scope::All => outln!(out, "no reviewers yet in {}", ledger.location()),
            Scope::Domain(domain) => {
                let domains = ledger.domains()?;
                let known = if domains.is_empty() { "none yet".to_owned() } else { domains.join(", ") };
                outln!(
                    out,
                    "no verified ratings in domain {domain:?} in {} (domains with verified ratings: {known})",
                    ledger.location()
                );
            }
            other => {
                outln!(out, "no ratings from {} outcomes yet in {}", other.outcomes(), ledger.location())
            }
        }
    } else {
        match scope {
            Scope::All => {}
            Scope::Domain(domain) => outln!(out, "domain {domain}: ratings from verified outcomes"),
            other => outln!(out, "ratings from {} outcomes", other.outcomes()),
        }
        // The name column only when some reviewer has a name, so that a ledger without
        // names reads as it always did.
        let named = entries.iter().any(|entry| entry.name.is_some());
        let name_cell = |name: &str| if named { format!("{name:<NAME_WIDTH$}  ") } else { String::new() };
        outln!(
            out,
            "{}",
            style.bold(&format!(
                "{:>4}  {:<17}  {}{:>7}  {:>7}  {:>8}",
                "rank",
                "agent",
                name_cell("name"),
                "elo",
                "reviews",
                "accuracy"
            ))
        );
        for entry in &entries {
            let accuracy = entry.accuracy.map_or_else(|| "-".to_owned(), |a| format!("{:.1}%", a * 100.0));
            let name = entry.name.as_deref().map(shown_name).unwrap_or_default();
            outln!(
                out,
                "{:>4}  {:<17}  {}{:>7}  {:>7}  {:>8}",
                entry.rank,
                entry.agent,
                name_cell(&name),
                rating_text(entry.elo),
                entry.reviews,
                accuracy
            );
        }
    }
    emit(&out)?;
    Ok(ExitCode::SUCCESS)
}

/// The width of the leaderboard's name column.
const NAME_WIDTH: usize = 24;

/// A reviewer's name as a table shows it: cleaned of control and invisible characters (a
/// ledger edited by hand may hold any text) and cut to [`NAME_WIDTH`] characters, the cut
/// marked.
fn shown_name(name: &str) -> String {
    let clean = revcal_elo::clean_name(name).unwrap_or_default();
    if clean.chars().count() <= NAME_WIDTH {
        return clean;
    }
    let cut: String = clean.chars().take(NAME_WIDTH - 1).collect();
    format!("{}…", cut.trim_end())
}

pub(crate) fn receipts(ledger: &LedgerArg, agent: &str, json: bool, style: &Style) -> Result<ExitCode> {
    let Some(agent) = AgentId::parse(agent) else {
        anyhow::bail!(
            "`{agent}` is not an agent id: expected @ and 16 lowercase hex digits, e.g. @3f9a0c1d2e4b5a69"
        );
    };
    let ledger = ledger.open_existing()?;
    let receipts = ledger.receipts(&agent)?;
    let mut out = String::new();
    if json {
        outln!(out, "{}", serde_json::to_string_pretty(&receipts)?);
    } else if receipts.is_empty() {
        outln!(out, "{agent} has no scored reviews in {}", ledger.location());
    } else {
        outln!(
            out,
            "{}",
            style.bold(&format!(
                "{:<17}  {:<16}  {:>7}  {:<16}  {:<16}  source",
                "outcome", "verdict", "delta", "requester", "review"
            ))
        );
        for receipt in &receipts {
            outln!(
                out,
                "{:<17}  {:<16}  {:>7}  {:<16}  {:<16}  {}",
                receipt.outcome.as_str(),
                receipt.review.verdict.as_str(),
                format!("{:+}", receipt.elo_delta),
                receipt.to,
                &receipt.review.review_id.as_str()[..16],
                source(receipt)
            );
        }
        let whose = match ledger.name_of(&agent)? {
            Some(name) => format!("{agent} ({})", shown_name(&name)),
            None => agent.to_string(),
        };
        outln!(
            out,
            "{} of {whose} signed by {} (`--json` for the receipts themselves)",
            count(receipts.len() as u64, "receipt"),
            ledger.issuer()
        );
    }
    emit(&out)?;
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn verify_receipts(file: &Path, issuer_key: &Path, json: bool, style: &Style) -> Result<ExitCode> {
    let key = load_key_file(issuer_key)?
        .public()
        .map_err(|error| anyhow::anyhow!("{}: {error}", issuer_key.display()))?;
    let text = read_text(file, super::MAX_STREAM_BYTES)?;
    let name = display(file);
    let results: Vec<(String, Result<revcal_elo::Receipt, String>)> = match revcal_elo::parse_strict(&text) {
        Err(error) => vec![(name.clone(), Err(format!("not valid JSON: {error}")))],
        Ok(Value::Array(items)) => items
            .into_iter()
            .enumerate()
            .map(|(index, item)| {
                (format!("{name}[{index}]"), verify_receipt_value(item, &key).map_err(|e| e.to_string()))
            })
            .collect(),
        Ok(value) => vec![(name.clone(), verify_receipt_value(value, &key).map_err(|e| e.to_string()))],
    };
    let failed = results.iter().filter(|(_, result)| result.is_err()).count();
    let mut out = String::new();
    if json {
        let items: Vec<_> = results
            .iter()
            .map(|(place, result)| match result {
                Ok(receipt) => json!({"receipt": place, "valid": true, "from": receipt.from, "outcome": receipt.outcome, "elo_delta": receipt.elo_delta, "verified": receipt.calibration.as_ref().is_some_and(|c| c.verified), "calibration": receipt.calibration}),
                Err(reason) => json!({"receipt": place, "valid": false, "reason": reason}),
            })
            .collect();
        outln!(
            out,
            "{}",
            serde_json::to_string_pretty(
                &json!({"issuer": key.agent_id(), "failed": failed, "receipts": items})
            )?
        );
    } else {
        for (place, result) in &results {
            match result {
                Ok(receipt) => outln!(
                    out,
                    "{place}: {} ({} {} {:+} for {}{})",
                    style.success("valid"),
                    receipt.outcome.as_str(),
                    receipt.review.verdict.as_str(),
                    receipt.elo_delta,
                    receipt.from,
                    // A calibration's receipt says which; a self-reported one reads as before.
                    receipt
                        .calibration
                        .as_ref()
                        .map_or_else(String::new, |_| format!("; {}", source(receipt)))
                ),
                Err(reason) => outln!(out, "{place}: {}: {reason}", style.error("INVALID")),
            }
        }
        outln!(out, "{} valid, {} invalid (issuer {})", results.len() - failed, failed, key.agent_id());
    }
    emit(&out)?;
    Ok(if failed == 0 { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

/// Where a receipt's outcome came from: a calibration round, verified or claimed by an
/// untrusted key, or the requester's own report.
fn source(receipt: &revcal_elo::Receipt) -> String {
    match &receipt.calibration {
        None => "self-reported".to_owned(),
        Some(calibration) => format!(
            "{} calibration {} round {} trial {} by {}",
            if calibration.verified { "verified" } else { "unverified" },
            calibration.report_sha256.get(..16).unwrap_or(&calibration.report_sha256),
            calibration.round,
            calibration.trial,
            calibration.authority
        ),
    }
}

pub(crate) fn issuer_key(ledger: &LedgerArg, out: Option<&Path>) -> Result<ExitCode> {
    let ledger = ledger.open_existing()?;
    let text = serde_json::to_string_pretty(&ledger.issuer_key())? + "\n";
    match out {
        Some(path) => {
            std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))?
        }
        None => emit(&text)?,
    }
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn check(ledger: &LedgerArg, json: bool, style: &Style) -> Result<ExitCode> {
    let ledger = ledger.open_existing()?;
    let integrity = ledger.integrity_check()?;
    let replay = ledger.replay()?;
    let consistent = integrity.is_empty() && replay.is_consistent();
    let mut out = String::new();
    if json {
        let report = json!({
            "ledger": ledger.location().to_string(),
            "schema_version": ledger.schema_version(),
            "integrity": if integrity.is_empty() { vec!["ok".to_owned()] } else { integrity.clone() },
            "replay": replay,
            "consistent": consistent,
        });
        outln!(out, "{}", serde_json::to_string_pretty(&report)?);
    } else {
        for problem in integrity.iter().chain(&replay.mismatches) {
            outln!(out, "{}: {problem}", style.error("problem"));
        }
        let summary = format!(
            "{}: {} replayed, {}, {}; integrity {}",
            ledger.location(),
            super::count(replay.messages, "message"),
            super::count(replay.reviewers, "reviewer"),
            super::count(replay.scored_reviews, "scored review"),
            if integrity.is_empty() { "ok" } else { "FAILED" }
        );
        outln!(
            out,
            "{} {summary}",
            if consistent { style.success("consistent") } else { style.error("INCONSISTENT") }
        );
    }
    emit(&out)?;
    Ok(if consistent { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}
