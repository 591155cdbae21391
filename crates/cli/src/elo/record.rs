//! `revcal elo record`: a calibration signed and stored as review traffic, all of it or
//! nothing, with the reviewer's rating changes overall and per domain. The calibration is a
//! calibration record, or a calibration report itself (`revcal calibrate --json` or
//! `--save-baseline` output), which is turned into its record here; `calibrate --record-to`
//! records the report it just wrote through the same code.

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
    pub(crate) authority_key: super::authority::KeySource,
    pub(crate) agent: String,
    pub(crate) agent_key: PathBuf,
    pub(crate) json: bool,
}

/// The two keys a calibration is signed with.
pub(crate) struct Signers {
    authority: Keypair,
    reviewer: Keypair,
}

impl Signers {
    /// The authority's key (read from its source, kept from reviewers when `exposure` says
    /// they run), and the reviewer's agent id and key file (which must be the agent's);
    /// flags are named as `elo record` and `calibrate --record-to` spell them. The
    /// reviewer's own key may be a file it can read: it signs its own reviews with it anyway.
    pub(crate) fn load(
        authority_key: &super::authority::KeySource,
        exposure: super::authority::Exposure,
        agent: &str,
        agent_key: &Path,
    ) -> Result<Signers> {
        let authority = super::authority::read(authority_key, exposure)?;
        let reviewer = signing_key(agent_key)?;
        let Some(agent) = AgentId::parse(agent) else {
            anyhow::bail!(
                "--agent: `{agent}` is not an agent id: expected @ and 16 lowercase hex digits, e.g. @3f9a0c1d2e4b5a69"
            );
        };
        if reviewer.agent_id() != agent {
            anyhow::bail!(
                "--agent-key {} is the key of {}, not of --agent {agent}",
                agent_key.display(),
                reviewer.agent_id()
            );
        }
        Ok(Signers { authority, reviewer })
    }
}

/// How the calibration given was checked against its report.
enum Checked {
    /// A record without --report: against itself only.
    Alone,
    /// A record with --report: the report's hash and plants.
    AgainstReport(String),
    /// A report, recorded from its own rounds: its rounds against its plants.
    FromReport(String),
}

/// Whether a JSON document is to be read as a calibration record: anything but an object
/// without `format` that has a report's `recall` and `plants`. (What is not JSON, or is
/// neither, is read as a record, whose reader names the position or the missing field.)
fn is_record(text: &str) -> bool {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(object)) => {
            object.contains_key("format") || !(object.contains_key("recall") && object.contains_key("plants"))
        }
        _ => true,
    }
}

pub(crate) fn run(ledger: &LedgerArg, args: &RecordArgs, style: &Style) -> Result<ExitCode> {
    if args.authority_key.is_stdin()
        && (args.record == Path::new("-") || args.report.as_deref() == Some(Path::new("-")))
    {
        anyhow::bail!("standard input can hold the calibration or the authority's key, not both");
    }
    let exposure = super::authority::Exposure::NoReviewer;
    let signers = Signers::load(&args.authority_key, exposure, &args.agent, &args.agent_key)?;
    let name = display(&args.record);
    let text = read_text(&args.record, MAX_RECORD_BYTES as u64)?;
    let report = args.report.as_deref().map(|path| read_text(path, MAX_RECORD_BYTES as u64)).transpose()?;
    // Everything about the calibration is checked before the ledger is opened.
    let (record, checked) = if is_record(&text) {
        let record = match CalibrationRecord::parse(&text) {
            Ok(record) => record,
            Err(error) => return Ok(refused_input(&name, &error.to_string())),
        };
        match (&report, &args.report) {
            (Some(report), Some(path)) => {
                if let Err(error) = record.check_report(report) {
                    return Ok(refused_input(
                        &name,
                        &format!("{error} (against the report {})", display(path)),
                    ));
                }
                (record, Checked::AgainstReport(display(path)))
            }
            _ => (record, Checked::Alone),
        }
    } else {
        if args.report.is_some() {
            anyhow::bail!(
                "{name} is a calibration report, not a record: --report is for a calibration record (the report is checked by itself)"
            );
        }
        match record_of_report(&text, now_millis()) {
            Ok(record) => (record, Checked::FromReport(name.clone())),
            Err(reason) => return Ok(refused_input(&name, &reason)),
        }
    };
    let (out, code) = store(ledger, &record, &checked, &signers, args.json, style)?;
    emit(&out)?;
    Ok(code)
}

/// Records a report `calibrate --record-to` just wrote (`text`, its JSON as written): the
/// summary to show, and whether it was recorded. A report that cannot become a record is an
/// error.
pub(crate) fn record_report(
    ledger: &LedgerArg,
    text: &str,
    signers: &Signers,
    style: &Style,
) -> Result<(String, bool)> {
    let record =
        record_of_report(text, now_millis()).map_err(|reason| anyhow::anyhow!("the report: {reason}"))?;
    let (out, code) = store(ledger, &record, &Checked::FromReport("written".into()), signers, false, style)?;
    Ok((out, code == ExitCode::SUCCESS))
}

/// Now, in Unix milliseconds: a report holds no time, so its messages are stamped when
/// recorded (recording it again makes other messages, refused as the same calibration).
fn now_millis() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX))
}

/// The calibration record of a calibration report's JSON `text`: its hash, commit, reviewer
/// and rounds, every figure recomputed and checked (`CalibrationRecord::parse`), then the
/// rounds held against the report's own plants (`check_report`), so that a status flipped in
/// either is refused. The reason names the field when it is refused.
pub(crate) fn record_of_report(text: &str, ts: u64) -> std::result::Result<CalibrationRecord, String> {
    let hash = revcal_elo::report_sha256(text).map_err(|error| error.to_string())?;
    let report: revcal_calibrate::Report =
        serde_json::from_str(text).map_err(|error| format!("not a calibration report: {error}"))?;
    if report.rounds.is_empty() {
        return Err("the report lists no `rounds` (a report of an earlier revcal?): run the calibration again to record it".into());
    }
    let reviewer = report.reviewer.clone().ok_or("the report names no `reviewer`")?;
    let rounds: Vec<revcal_elo::Round> =
        report.rounds.iter().map(revcal_calibrate::report::ReviewRound::to_record).collect();
    let record = CalibrationRecord {
        format: revcal_elo::RECORD_FORMAT.into(),
        version: revcal_elo::RECORD_VERSION,
        report_sha256: hash,
        commit: report.commit.clone(),
        repo: None,
        reviewer,
        ts,
        summary: revcal_elo::Summary::of(&rounds),
        rounds,
    };
    // Through the record's own reader: every field's range, and each trial's `flagged`
    // recomputed from its statuses or findings.
    let record = CalibrationRecord::parse(&record.to_json()).map_err(|error| error.to_string())?;
    // The report's own figures must be what its rounds give.
    let summary = &record.summary;
    let figures = [
        ("caught", Some(report.caught as u64), summary.caught),
        ("falseAlarms", report.false_alarms.map(|n| n as u64), summary.flagged_clean),
        (
            "cleanReviews",
            report.clean_reviews.map(|n| n as u64),
            summary.reviews - reviews_of_planted(&record),
        ),
    ];
    for (field, stated, recomputed) in figures {
        if let Some(stated) = stated
            && stated != recomputed
        {
            return Err(format!(
                "`{field}`: the report states {stated}, but its rounds give {recomputed}; refusing an altered or inconsistent report"
            ));
        }
    }
    record.check_report(text).map_err(|error| format!("{error} (the report's rounds against its plants)"))?;
    Ok(record)
}

/// Trials of planted rounds.
fn reviews_of_planted(record: &CalibrationRecord) -> u64 {
    record.rounds.iter().filter(|round| round.is_planted()).map(|round| round.trials.len() as u64).sum()
}

/// Signs and stores `record`: the text to show and the exit code (refusals exit 1).
fn store(
    ledger: &LedgerArg,
    record: &CalibrationRecord,
    checked: &Checked,
    signers: &Signers,
    json: bool,
    style: &Style,
) -> Result<(String, ExitCode)> {
    let name = match checked {
        Checked::FromReport(name) => name.clone(),
        _ => "the record".into(),
    };
    let rounds = match record.messages(&signers.authority, &signers.reviewer) {
        Ok(rounds) => rounds,
        Err(error) => return Ok((String::new(), refused_input(&name, &error.to_string()))),
    };
    let mut ledger = ledger.open_or_create()?;
    let policy = ledger.policy().clone();
    let location = ledger.location().to_string();
    let recording = ledger.record_calibration(&rounds)?;
    let mut out = String::new();
    match recording {
        Recording::Recorded(recorded) => {
            if json {
                let report_checked = !matches!(checked, Checked::Alone);
                let value = recorded_json(&location, record, &recorded, report_checked, &rounds, &policy);
                outln!(out, "{}", serde_json::to_string_pretty(&value)?);
            } else {
                recorded_text(&mut out, &location, record, &recorded, checked, &policy, style);
            }
            Ok((out, ExitCode::SUCCESS))
        }
        Recording::Refused(refusals) => {
            if json {
                let items: Vec<Value> = refusals.iter().map(refusal_json).collect();
                let value = json!({
                    "ledger": location,
                    "recorded": false,
                    "report_sha256": record.report_sha256,
                    "refusals": items,
                });
                outln!(out, "{}", serde_json::to_string_pretty(&value)?);
            } else {
                refused_text(&mut out, &location, record, &refusals, style);
            }
            Ok((out, ExitCode::FAILURE))
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
    checked: &Checked,
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
    match checked {
        Checked::AgainstReport(path) => outln!(out, "  report {path} matches: its hash and its plants"),
        Checked::FromReport(_) => outln!(
            out,
            "  recorded from the report itself: its rounds, clean ones included, checked against its plants"
        ),
        Checked::Alone => outln!(
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
