//! `revcal elo record`: a calibration record signed and stored as review traffic, all of it
//! or nothing, with the reviewer's rating changes overall and per domain.

use super::{LedgerArg, display, load_key_file, rating_text, read_text};
use crate::output::{emit, outln};
use crate::style::Style;
use anyhow::Result;
use revcal_elo::{
    AgentId, CalibrationRecord, Keypair, MAX_RECORD_BYTES, Policy, RatingChange, Recorded, Recording,
    Refusal, Scope, Standing,
};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// What `revcal elo record` was given.
pub(crate) struct RecordArgs {
    pub(crate) record: PathBuf,
    pub(crate) report: Option<PathBuf>,
    pub(crate) authority_key: PathBuf,
    pub(crate) agent: String,
    pub(crate) agent_key: PathBuf,
    pub(crate) json: bool,
}

pub(crate) fn run(ledger: &LedgerArg, args: &RecordArgs, style: &Style) -> Result<ExitCode> {
    let authority = signing_key(&args.authority_key)?;
    let reviewer = signing_key(&args.agent_key)?;
    let Some(agent) = AgentId::parse(&args.agent) else {
        anyhow::bail!(
            "--agent: `{}` is not an agent id: expected @ and 16 lowercase hex digits, e.g. @3f9a0c1d2e4b5a69",
            args.agent
        );
    };
    if reviewer.agent_id() != agent {
        anyhow::bail!(
            "--agent-key {} is the key of {}, not of --agent {agent}",
            args.agent_key.display(),
            reviewer.agent_id()
        );
    }
    let name = display(&args.record);
    let text = read_text(&args.record, MAX_RECORD_BYTES as u64)?;
    let report = args.report.as_deref().map(|path| read_text(path, MAX_RECORD_BYTES as u64)).transpose()?;
    // Everything about the record is checked before the ledger is opened.
    let record = match CalibrationRecord::parse(&text) {
        Ok(record) => record,
        Err(error) => return Ok(refused_input(&name, &error.to_string())),
    };
    if let (Some(report), Some(path)) = (&report, &args.report)
        && let Err(error) = record.check_report(report)
    {
        return Ok(refused_input(&name, &format!("{error} (against the report {})", display(path))));
    }
    let rounds = match record.messages(&authority, &reviewer) {
        Ok(rounds) => rounds,
        Err(error) => return Ok(refused_input(&name, &error.to_string())),
    };
    let mut ledger = ledger.open_or_create()?;
    let policy = ledger.policy().clone();
    let location = ledger.location().to_string();
    let recording = ledger.record_calibration(&rounds)?;
    let mut out = String::new();
    let report_checked = args.report.is_some();
    match recording {
        Recording::Recorded(recorded) => {
            if args.json {
                let value = recorded_json(&location, &record, &recorded, report_checked, &rounds, &policy);
                outln!(out, "{}", serde_json::to_string_pretty(&value)?);
            } else {
                recorded_text(&mut out, &location, &record, &recorded, &args.report, &policy, style);
            }
            emit(&out)?;
            Ok(ExitCode::SUCCESS)
        }
        Recording::Refused(refusals) => {
            if args.json {
                let items: Vec<Value> = refusals.iter().map(refusal_json).collect();
                let value = json!({
                    "ledger": location,
                    "recorded": false,
                    "report_sha256": record.report_sha256,
                    "refusals": items,
                });
                outln!(out, "{}", serde_json::to_string_pretty(&value)?);
            } else {
                refused_text(&mut out, &location, &record, &refusals, style);
            }
            emit(&out)?;
            Ok(ExitCode::FAILURE)
        }
    }
}

/// A key file with its secret half, naming the file on error.
fn signing_key(path: &Path) -> Result<Keypair> {
    load_key_file(path)?.keypair().map_err(|error| anyhow::anyhow!("{}: {error}", path.display()))
}

/// A record refused before the ledger: exit status 1, the reason on stderr.
fn refused_input(name: &str, reason: &str) -> ExitCode {
    eprintln!("error: {name}: {reason}; nothing was recorded");
    ExitCode::FAILURE
}

fn scope_name(scope: &Scope) -> String {
    match scope {
        Scope::Domain(domain) => format!("domain {domain}"),
        other => other.outcomes().to_string(),
    }
}

/// The reviewer's changes, `all` first, then verified or reported, then domains by name.
fn reviewer_changes(recorded: &Recorded) -> Vec<&RatingChange> {
    let mut changes: Vec<&RatingChange> =
        recorded.changes.iter().filter(|change| change.agent == recorded.reviewer).collect();
    changes.sort_by(|a, b| a.scope.cmp(&b.scope));
    changes
}

fn standing_json(standing: Option<&Standing>) -> Value {
    match standing {
        None => Value::Null,
        Some(standing) => json!({
            "elo": standing.rating,
            "reviews": standing.reviews,
            "accuracy": standing.accuracy(),
        }),
    }
}

fn recorded_json(
    location: &str,
    record: &CalibrationRecord,
    recorded: &Recorded,
    report_checked: bool,
    rounds: &[revcal_elo::RoundMessages],
    policy: &Policy,
) -> Value {
    let reviews: Vec<Value> = rounds
        .iter()
        .zip(recorded.stored.chunks(3))
        .map(|(round, stored)| {
            let scored = stored.get(2).and_then(|outcome| outcome.scored.first());
            json!({
                "round": round.round,
                "trial": round.trial,
                "planted": round.planted,
                "request_id": round.request.id,
                "review_id": round.review.id,
                "outcome_id": round.outcome.id,
                "verdict": scored.map(|s| s.verdict.as_str()),
                "outcome": scored.map(|s| s.outcome.as_str()),
                "elo_delta": scored.map(|s| s.elo_delta),
            })
        })
        .collect();
    let changes: Vec<Value> = reviewer_changes(recorded)
        .into_iter()
        .map(|change| {
            json!({
                "outcomes": change.scope.outcomes().as_str(),
                "domain": change.scope.domain(),
                "before": standing_json(change.before.as_ref()),
                "after": standing_json(Some(&change.after)),
                "elo_delta": change.delta(policy),
            })
        })
        .collect();
    json!({
        "ledger": location,
        "recorded": true,
        "report_sha256": record.report_sha256,
        "report_checked": report_checked,
        "commit": record.commit,
        "authority": recorded.authority,
        "reviewer": recorded.reviewer,
        "verified": recorded.verified,
        "messages": recorded.stored.len(),
        "reviews": reviews,
        "changes": changes,
    })
}

fn recorded_text(
    out: &mut String,
    location: &str,
    record: &CalibrationRecord,
    recorded: &Recorded,
    report: &Option<PathBuf>,
    policy: &Policy,
    style: &Style,
) {
    let summary = &record.summary;
    outln!(
        out,
        "{} calibration {} of {} (commit {}) in {location}",
        style.success("recorded"),
        &record.report_sha256[..16],
        record.reviewer,
        record.commit
    );
    outln!(
        out,
        "  {} messages: {} reviews by {}, requests and outcomes by {}",
        recorded.stored.len(),
        summary.reviews,
        recorded.reviewer,
        recorded.authority
    );
    outln!(
        out,
        "  flagged {} of {} planted and {} of {} clean reviews",
        summary.flagged_planted,
        summary.reviews - clean_reviews(record),
        summary.flagged_clean,
        clean_reviews(record)
    );
    if recorded.verified {
        outln!(
            out,
            "  outcomes {}: {} is a trusted authority of this ledger",
            style.success("verified"),
            recorded.authority
        );
    } else {
        outln!(
            out,
            "  outcomes {}: this ledger does not trust {} (`revcal elo trust {} --key-file AUTHORITY.pub`)",
            style.warning("self-reported"),
            recorded.authority,
            recorded.authority
        );
    }
    match report {
        Some(path) => outln!(out, "  report {} matches: its hash and its plants", display(path)),
        None => outln!(
            out,
            "  report not checked (no --report): the record's figures were checked against its own rounds only"
        ),
    }
    outln!(
        out,
        "{}",
        style.bold(&format!(
            "{:<28}  {:>7}  {:>7}  {:>7}  {:>7}",
            "rating", "before", "after", "delta", "reviews"
        ))
    );
    for change in reviewer_changes(recorded) {
        let before = change.before.map_or_else(|| "-".to_owned(), |before| rating_text(before.rating));
        outln!(
            out,
            "{:<28}  {:>7}  {:>7}  {:>7}  {:>7}",
            scope_name(&change.scope),
            before,
            rating_text(change.after.rating),
            format!("{:+}", change.delta(policy)),
            change.after.reviews
        );
    }
}

/// Trials of clean rounds.
fn clean_reviews(record: &CalibrationRecord) -> u64 {
    record.rounds.iter().filter(|round| !round.is_planted()).map(|round| round.trials.len() as u64).sum()
}

fn refusal_json(refusal: &Refusal) -> Value {
    json!({
        "round": refusal.round,
        "trial": refusal.trial,
        "type": refusal.message_type.as_str(),
        "id": refusal.id,
        "code": refusal.rejection.code(),
        "reason": refusal.rejection.to_string(),
    })
}

fn refused_text(
    out: &mut String,
    location: &str,
    record: &CalibrationRecord,
    refusals: &[Refusal],
    style: &Style,
) {
    let replayed = refusals.iter().all(|r| matches!(r.rejection.code(), "replayed" | "calibration_replayed"));
    if replayed {
        outln!(
            out,
            "{}: calibration {} is already recorded in {location} (its messages, or its rounds from the same \
             authority, are stored); nothing was stored",
            style.error("refused"),
            &record.report_sha256[..16]
        );
    } else {
        outln!(out, "{}: the ledger refused the calibration; nothing was stored", style.error("refused"));
    }
    const SHOWN: usize = 5;
    for refusal in refusals.iter().take(SHOWN) {
        outln!(
            out,
            "  round {} trial {} {} ({}): {}",
            refusal.round,
            refusal.trial,
            refusal.message_type,
            refusal.rejection.code(),
            refusal.rejection
        );
    }
    if refusals.len() > SHOWN {
        outln!(out, "  and {} more (`--json` lists them all)", refusals.len() - SHOWN);
    }
}
