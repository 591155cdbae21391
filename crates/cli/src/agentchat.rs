//! `revcal agentchat serve|post|review`: the ledger agent, the poster and the reviewer agent
//! on an AgentChat server (docs/agentchat.md); each a thin layer over revcal-agentchat.

mod reviewers;

use crate::elo::{LedgerArg, display, load_key_file};
use crate::output::emit;
use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use revcal_agentchat::{
    ChatIdentity, LedgerAgent, LedgerEvent, PostConfig, PostEvent, PostOutcome, ReviewerAgent, ReviewerEvent,
    SessionConfig, ToPost,
};
use revcal_elo::{MAX_MESSAGE_BYTES, SignedMessage, sign_value};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

/// `revcal agentchat serve`'s and `review`'s exit-code table, for `--help`.
pub(crate) const AGENT_TABLE: &str = "\
Exit status:
  0  stopped by SIGINT or SIGTERM (the connection closed, nothing half-stored)
  2  could not run: usage error, an unreadable key, a ledger that does not open,
     a channel that does not exist and this key may not create, an identity the
     server refuses, no LLM provider configured for --reviewer";

/// `revcal agentchat post`'s exit-code table, for `--help`.
pub(crate) const POST_TABLE: &str = "\
Exit status:
  0  every message answered: stored (now, or before: replayed), or a leaderboard result
  1  a refusal: the ledger refused a message (the answer says why), the server refused
     it, or it is not a valid message (then nothing is posted)
  3  no answer within --wait for some message (post it again: it is stored once)
  2  usage or I/O error (unknown flag, unreadable key or message file, bad server URL)";

/// `revcal agentchat post`: a message refused.
const POST_REFUSED: u8 = 1;
/// `revcal agentchat post`: some message got no answer in time.
const POST_NO_ANSWER: u8 = 3;

/// Arguments of `revcal agentchat`.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  revcal agentchat serve --server ws://127.0.0.1:6667 --key ledger-agent.key --ledger team.sqlite\n  revcal agentchat post --server ws://127.0.0.1:6667 --key alice.key request.json\n  revcal agentchat review --server ws://127.0.0.1:6667 --key bob.key --reviewer openai:gpt-4o-mini\n\nRFC-001's messages ride as JSON text in AgentChat MSGs in #review; keys are `revcal elo\nkeygen` keys. Setup, the wire and what is guaranteed: docs/agentchat.md."
)]
pub(crate) struct AgentchatArgs {
    #[command(subcommand)]
    command: AgentchatCommand,
}

/// Where and as whom: the flags every agent takes.
#[derive(Debug, Clone, Args)]
struct ChatFlags {
    /// The AgentChat server (plain WebSocket; for TLS, a local tunnel).
    #[arg(long, value_name = "ws://HOST:PORT")]
    server: String,
    /// The agent's key (`revcal elo keygen`): its AgentChat identity and, for post and
    /// review, what it signs with.
    #[arg(long, value_name = "FILE")]
    key: PathBuf,
    /// The channel.
    #[arg(long, value_name = "#NAME", default_value = "#review")]
    channel: String,
    /// The name shown in the channel (1 to 32 of A-Z a-z 0-9 _ -) [default: revcal-ledger,
    /// revcal-post, revcal-reviewer].
    #[arg(long, value_name = "NAME", value_parser = parse_name)]
    name: Option<String>,
}

fn parse_name(text: &str) -> std::result::Result<String, String> {
    let valid = (1..=32).contains(&text.len())
        && text.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if valid { Ok(text.to_owned()) } else { Err("1 to 32 of A-Z a-z 0-9 _ -".to_owned()) }
}

fn parse_channel(text: &str) -> Result<()> {
    let name = text.strip_prefix('#').unwrap_or_default();
    let valid = (1..=31).contains(&name.len())
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    anyhow::ensure!(valid, "--channel {text}: a channel is # and 1 to 31 of A-Z a-z 0-9 _ -");
    Ok(())
}

impl ChatFlags {
    fn identity(&self) -> Result<ChatIdentity> {
        let keypair = load_key_file(&self.key)?
            .keypair()
            .map_err(|error| anyhow::anyhow!("{}: {error}", display(&self.key)))?;
        Ok(ChatIdentity::new(keypair))
    }

    fn session(&self, default_name: &str) -> Result<SessionConfig> {
        parse_channel(&self.channel)?;
        Ok(SessionConfig::new(&self.server, self.name.as_deref().unwrap_or(default_name), &self.channel))
    }
}

#[derive(Debug, Subcommand)]
enum AgentchatCommand {
    /// The ledger agent: stores every RFC-001 message posted in the channel once, refuses
    /// what is invalid, altered or posted by another agent than its signer, and answers in
    /// the channel (status, leaderboard result, a signed receipt per scored review).
    ///
    /// It identifies with --key (creating the channel when it does not exist and the server
    /// treats that key as verified), reconnects with backoff, posts at most one message a
    /// second (answers queue; several go out together), and logs each message it handles on
    /// stderr (--json: JSON lines on stdout). Receipts are signed by the ledger's own key,
    /// as `revcal elo receipts` signs them. Runs until SIGINT or SIGTERM.
    #[command(after_help = crate::exit::with_table(
        "Examples:\n  revcal agentchat serve --server ws://127.0.0.1:6667 --key ledger-agent.key --ledger team.sqlite\n  revcal agentchat serve --server ws://10.0.0.5:6667 --key agent.key --ledger postgres://revcal@db/reviews --json\n\nThe ledger is --ledger PATH|URL, else $REVCAL_LEDGER_URL, else $REVCAL_LEDGER, else\n./revcal-ledger.sqlite; two agents on two servers sharing one PostgreSQL ledger rate\nevery reviewer as one. Only a verified agent may create a channel: start the server\nwith GENESIS_AGENT_ID set to this key's AgentChat id (docs/agentchat.md).",
        AGENT_TABLE,
    ))]
    Serve {
        #[command(flatten)]
        chat: ChatFlags,
        /// The ledger: an SQLite file, or a PostgreSQL database (postgres:// URL or key=value
        /// string) [default: $REVCAL_LEDGER_URL, else $REVCAL_LEDGER, else ./revcal-ledger.sqlite].
        #[arg(long, value_name = "PATH|URL")]
        ledger: Option<String>,
        /// Log what the agent does as JSON lines on stdout.
        #[arg(long)]
        json: bool,
    },
    /// Sign RFC-001 messages (as `revcal elo sign`), post them in the channel, and wait for
    /// the ledger agent's answers: stored (with a receipt per review an outcome scored), a
    /// leaderboard result, or a refusal with its reason.
    ///
    /// The file holds one message, or several as JSON lines, posted in order at one a second.
    /// A message is posted again after each reconnection, when an agent joins the channel and
    /// every 30 s until answered: at least once on the wire, once in the ledger (a copy is
    /// answered `replayed`, read as "already stored").
    #[command(after_help = crate::exit::with_table(
        "Examples:\n  revcal agentchat post --server ws://127.0.0.1:6667 --key alice.key request.json\n  revcal agentchat post --server ws://127.0.0.1:6667 --key bob.key review.json --request-id 212b3203…\n  echo '{\"type\":\"REVIEW_LEADERBOARD\",\"content\":{\"limit\":5}}' | revcal agentchat post --server ws://127.0.0.1:6667 --key alice.key - --json\n  revcal elo sign outcome.json --key alice.key > signed.jsonl && revcal agentchat post --server ws://127.0.0.1:6667 --key alice.key --signed signed.jsonl",
        POST_TABLE,
    ))]
    Post {
        #[command(flatten)]
        chat: ChatFlags,
        /// The message (JSON), or several (JSON lines); `-` reads standard input.
        #[arg(value_name = "MESSAGE.json|-")]
        message: PathBuf,
        /// Set `content.request_id` of each message (a review or an outcome answers this
        /// request).
        #[arg(long, value_name = "ID", conflicts_with = "signed")]
        request_id: Option<String>,
        /// The messages are signed already (`revcal elo sign`): post them as they are. The
        /// ledger agent refuses a message posted by another key than its signer's.
        #[arg(long)]
        signed: bool,
        /// Seconds to wait for every answer.
        #[arg(long, value_name = "SECS", default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..))]
        wait: u64,
        /// Count only answers from this ledger: its issuer's agent id (`revcal elo
        /// issuer-key` shows it).
        #[arg(long, value_name = "@AGENT")]
        issuer: Option<String>,
        /// Print one JSON object per message: {index, type, id, outcome, answer, receipts}.
        #[arg(long)]
        json: bool,
    },
    /// A reviewer agent: reviews each REVIEW_REQUEST that carries its unified diff in
    /// `content.diff` and posts a signed REVIEW; a request without a diff is answered with
    /// a refusal saying so.
    ///
    /// The verdict follows the findings' severities as `revcal score` reads them:
    /// REQUEST_CHANGES when any finding is critical, major or of a severity it does not know,
    /// else APPROVE; located findings (blocking first, at most 50) become the comments.
    /// --reviewer asks the built-in reviewer (`revcal review`'s models, prompt and rubric);
    /// --review-cmd runs `sh -c CMD` in a scratch directory holding change.diff (also on its
    /// stdin, and named by $REVCAL_DIFF) and reads its findings from stdout in any format
    /// `revcal calibrate` reads. Runs until SIGINT or SIGTERM.
    #[command(after_help = crate::exit::with_table(
        "Examples:\n  revcal agentchat review --server ws://127.0.0.1:6667 --key bob.key --reviewer openai:gpt-4o-mini\n  revcal agentchat review --server ws://127.0.0.1:6667 --key carol.key --review-cmd 'semgrep --config auto --sarif .'",
        AGENT_TABLE,
    ))]
    Review {
        #[command(flatten)]
        chat: ChatFlags,
        /// The built-in reviewer's model: PROVIDER:MODEL, or PROVIDER for its default model.
        #[arg(
            long,
            value_name = "P:M",
            required_unless_present = "review_cmd",
            conflicts_with = "review_cmd"
        )]
        reviewer: Option<crate::review::ModelSpec>,
        /// A reviewer command, run by `sh -c` in a scratch directory holding change.diff.
        #[arg(long, value_name = "CMD")]
        review_cmd: Option<String>,
        /// The rubric the built-in reviewer's prompt is built from.
        #[arg(long, value_name = "ID", default_value = "code_review_v1")]
        rubric: String,
        #[command(flatten)]
        library: crate::args::LibraryArgs,
        #[command(flatten)]
        ask: crate::review::AskFlags,
        /// Log what the agent does as JSON lines on stdout.
        #[arg(long)]
        json: bool,
    },
}

/// Runs `revcal agentchat ...`.
pub(crate) fn run(args: AgentchatArgs) -> Result<ExitCode> {
    match args.command {
        AgentchatCommand::Serve { chat, ledger, json } => serve(&chat, &LedgerArg::resolve(ledger), json),
        AgentchatCommand::Post { chat, message, request_id, signed, wait, issuer, json } => {
            post(&chat, &message, request_id.as_deref(), signed, wait, issuer, json)
        }
        AgentchatCommand::Review { chat, reviewer, review_cmd, rubric, library, ask, json } => {
            let reviewer: Arc<dyn revcal_agentchat::DiffReviewer> = match (reviewer, review_cmd) {
                (_, Some(command)) => {
                    Arc::new(reviewers::CommandReviewer::new(command, ask.limits(1).timeout))
                }
                (Some(spec), None) => Arc::new(reviewers::BuiltIn::new(&spec, &rubric, &library, &ask)?),
                (None, None) => anyhow::bail!("--reviewer P:M or --review-cmd CMD is required"),
            };
            review(&chat, reviewer, json)
        }
    }
}

/// A signal watch: the agents stop at their next round after SIGINT or SIGTERM.
fn stop_watch() -> Result<revcal_process::SignalWatch> {
    revcal_process::SignalWatch::install().context("cannot install the signal handlers")
}

/// One log line: a JSON object on stdout with --json, else words on stderr.
fn log(json: bool, value: Value, words: String) {
    if json {
        // A closed stdout ends nothing here: the agent goes on storing.
        let _ = emit(&format!("{value}\n"));
    } else {
        eprintln!("{words}");
    }
}

fn serve(chat: &ChatFlags, ledger: &LedgerArg, json: bool) -> Result<ExitCode> {
    let identity = chat.identity()?;
    let config = chat.session("revcal-ledger")?;
    let ledger = ledger.open_or_create()?;
    let watch = stop_watch()?;
    eprintln!(
        "ledger agent {} (AgentChat {}, key {}) for {} on {} {}; receipts signed by {}",
        identity.agent_id(),
        identity.chat_id(),
        display(&chat.key),
        ledger.location(),
        chat.server,
        chat.channel,
        ledger.issuer()
    );
    let mut agent = LedgerAgent::new(identity, ledger, config)?;
    agent.run(&|| watch.received().is_some(), &mut |event| log_ledger_event(json, event))?;
    eprintln!("stopped");
    Ok(ExitCode::SUCCESS)
}

fn log_ledger_event(json: bool, event: &LedgerEvent) {
    let (value, words) = match event {
        LedgerEvent::Joined { chat_id, verified, created } => (
            json!({"event": "joined", "agent": chat_id.as_str(), "verified": verified, "created": created}),
            format!("in the channel as {chat_id}{}", if *created { " (created it)" } else { "" }),
        ),
        LedgerEvent::Disconnected { reason } => (
            json!({"event": "disconnected", "reason": reason}),
            format!("disconnected: {reason}; reconnecting"),
        ),
        LedgerEvent::Stored { kind, id, from, msg_id, scored, replay } => (
            json!({"event": "stored", "type": kind, "id": id, "from": from, "msg_id": msg_id, "scored": scored, "replay": replay}),
            format!(
                "stored {kind} {id} from {from}{}{}",
                if *scored > 0 { format!(", scored {scored} review(s)") } else { String::new() },
                if *replay { " (from the replay buffer)" } else { "" }
            ),
        ),
        LedgerEvent::Refused { code, reason, from, msg_id, replay } => (
            json!({"event": "refused", "code": code, "reason": reason, "from": from, "msg_id": msg_id, "replay": replay}),
            format!("refused ({code}) a message from {from}: {reason}"),
        ),
        LedgerEvent::Queried { from, msg_id } => (
            json!({"event": "queried", "from": from, "msg_id": msg_id}),
            format!("answering a leaderboard query from {from}"),
        ),
        LedgerEvent::Posted { what, count } => {
            (json!({"event": "posted", "what": what, "count": count}), format!("posted {what} ({count})"))
        }
        LedgerEvent::LedgerFailed { error, retry_in } => (
            json!({"event": "ledger_failed", "error": error, "retry_in_ms": retry_in.as_millis() as u64}),
            format!("the ledger failed: {error}; trying again in {} ms", retry_in.as_millis()),
        ),
        other => (json!({"event": format!("{other:?}")}), format!("{other:?}")),
    };
    log(json, value, words);
}

/// The messages of `path`: one JSON object, or JSON lines.
fn read_messages(path: &Path) -> Result<Vec<(usize, String)>> {
    let text = crate::input::read_text(path, crate::elo::MAX_STREAM_BYTES)?;
    let trimmed = text.trim();
    anyhow::ensure!(!trimmed.is_empty(), "{}: no message", display(path));
    // A whole file that is one JSON value (even pretty-printed) is one message.
    if revcal_elo::parse_strict(trimmed).is_ok() {
        return Ok(vec![(1, trimmed.to_owned())]);
    }
    Ok((1..)
        .zip(text.lines())
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(number, line)| (number, line.trim().to_owned()))
        .collect())
}

/// Signs (or checks, with --signed) every message; an invalid one is named and nothing is
/// posted.
fn prepare(
    path: &Path,
    keypair: &revcal_elo::Keypair,
    request_id: Option<&str>,
    signed: bool,
) -> Result<std::result::Result<Vec<SignedMessage>, Vec<String>>> {
    let mut messages = Vec::new();
    let mut errors = Vec::new();
    for (line, text) in read_messages(path)? {
        let at = format!("{}:{line}", display(path));
        if text.len() > MAX_MESSAGE_BYTES {
            errors.push(format!(
                "{at}: the message is {} bytes, more than the protocol's limit of {} MiB",
                text.len(),
                MAX_MESSAGE_BYTES >> 20
            ));
            continue;
        }
        if signed {
            match SignedMessage::parse(&text) {
                Ok(message) => messages.push(message),
                Err(error) => errors.push(format!("{at}: {error}")),
            }
            continue;
        }
        let mut value = match revcal_elo::parse_strict(&text) {
            Ok(value) => value,
            Err(error) => {
                errors.push(format!("{at}: not valid JSON: {error}"));
                continue;
            }
        };
        if let Some(id) = request_id {
            match value.get_mut("content").and_then(Value::as_object_mut) {
                Some(content) => {
                    content.insert("request_id".into(), id.trim().into());
                }
                None => {
                    errors
                        .push(format!("{at}: `content`: --request-id needs a message with a content object"));
                    continue;
                }
            }
        }
        if let Some(object) = value.as_object_mut()
            && !object.contains_key("ts")
        {
            object.insert("ts".into(), crate::elo::now_millis().into());
        }
        match sign_value(value, keypair) {
            Ok(message) if message.canonical().len() > MAX_MESSAGE_BYTES => errors.push(format!(
                "{at}: the signed message is {} bytes, more than the protocol's limit of {} MiB",
                message.canonical().len(),
                MAX_MESSAGE_BYTES >> 20
            )),
            Ok(message) => messages.push(message),
            Err(error) => errors.push(format!("{at}: {error}")),
        }
    }
    Ok(if errors.is_empty() { Ok(messages) } else { Err(errors) })
}

fn post(
    chat: &ChatFlags,
    path: &Path,
    request_id: Option<&str>,
    signed: bool,
    wait: u64,
    issuer: Option<String>,
    json: bool,
) -> Result<ExitCode> {
    let identity = chat.identity()?;
    let session = chat.session("revcal-post")?;
    let messages = match prepare(path, identity.keypair(), request_id, signed)? {
        Ok(messages) => messages,
        Err(errors) => {
            for error in errors {
                eprintln!("error: {error}");
            }
            eprintln!("nothing posted");
            return Ok(ExitCode::from(POST_REFUSED));
        }
    };
    let config = PostConfig {
        session,
        wait: Duration::from_secs(wait),
        resend_every: Duration::from_secs(30),
        issuer: issuer.map(|issuer| issuer.trim().to_owned()),
    };
    let to_post: Vec<ToPost> = messages.iter().map(ToPost::signed).collect();
    let mut last_trouble: Option<String> = None;
    let outcomes = revcal_agentchat::post(identity, &config, &to_post, &mut |event| match event {
        PostEvent::Disconnected { reason } => {
            tracing::info!(%reason, "disconnected; posting again after reconnecting");
            last_trouble = Some(reason.clone());
        }
        PostEvent::Sent { index, msg_id, times } => {
            tracing::info!(index, msg_id = msg_id.as_deref().unwrap_or(""), times, "posted");
        }
        _ => {}
    })?;
    let mut out = String::new();
    let (mut refused, mut unanswered) = (false, false);
    for (index, (message, outcome)) in to_post.iter().zip(&outcomes).enumerate() {
        refused |= matches!(outcome, PostOutcome::Refused { .. } | PostOutcome::RefusedByServer { .. });
        unanswered |= matches!(outcome, PostOutcome::NoAnswer);
        if json {
            out.push_str(&format!("{}\n", outcome_json(index, message, outcome)));
        } else {
            out.push_str(&outcome_words(message, outcome, wait, last_trouble.as_deref()));
        }
    }
    emit(&out)?;
    Ok(if refused {
        ExitCode::from(POST_REFUSED)
    } else if unanswered {
        ExitCode::from(POST_NO_ANSWER)
    } else {
        ExitCode::SUCCESS
    })
}

fn outcome_json(index: usize, message: &ToPost, outcome: &PostOutcome) -> Value {
    let (name, answer, receipts) = match outcome {
        PostOutcome::Stored { answer, receipts } => ("stored", answer.clone(), receipts.clone()),
        PostOutcome::AlreadyStored { answer } => ("already_stored", answer.clone(), vec![]),
        PostOutcome::Result { result } => ("result", result.clone(), vec![]),
        PostOutcome::Refused { answer } => ("refused", answer.clone(), vec![]),
        PostOutcome::RefusedByServer { code, message } => {
            ("refused_by_server", json!({"code": code, "reason": message}), vec![])
        }
        PostOutcome::NoAnswer => ("no_answer", Value::Null, vec![]),
    };
    json!({"index": index, "type": message.kind, "id": message.id.as_str(), "outcome": name, "answer": answer, "receipts": receipts})
}

fn outcome_words(message: &ToPost, outcome: &PostOutcome, wait: u64, trouble: Option<&str>) -> String {
    let head = format!("{} {}", message.kind, message.id.as_str());
    match outcome {
        PostOutcome::Stored { answer, receipts } => {
            let scored = answer["scored"].as_array().map_or(0, Vec::len);
            let mut text = if scored > 0 {
                format!("{head}: stored, scored {scored} review(s)\n")
            } else {
                format!("{head}: stored\n")
            };
            for receipt in receipts {
                text.push_str(&format!(
                    "  receipt: {} {} {:+} for {}\n  {receipt}\n",
                    receipt["outcome"].as_str().unwrap_or_default(),
                    receipt["review"]["verdict"].as_str().unwrap_or_default(),
                    receipt["elo_delta"].as_f64().unwrap_or_default(),
                    receipt["from"].as_str().unwrap_or_default()
                ));
            }
            text
        }
        PostOutcome::AlreadyStored { .. } => format!("{head}: already in the ledger (replayed)\n"),
        PostOutcome::Result { result } => format!("{head}: answered\n{result}\n"),
        PostOutcome::Refused { answer } => format!(
            "{head}: refused ({}): {}\n",
            answer["code"].as_str().unwrap_or_default(),
            answer["reason"].as_str().unwrap_or_default()
        ),
        PostOutcome::RefusedByServer { code, message } => {
            format!("{head}: refused by the server ({code}): {message}\n")
        }
        PostOutcome::NoAnswer => format!(
            "{head}: no answer within {wait} s{}; post it again (the ledger stores it once)\n",
            trouble.map(|reason| format!(" (last trouble: {reason})")).unwrap_or_default()
        ),
    }
}

fn review(
    chat: &ChatFlags,
    reviewer: Arc<dyn revcal_agentchat::DiffReviewer>,
    json: bool,
) -> Result<ExitCode> {
    let identity = chat.identity()?;
    let config = chat.session("revcal-reviewer")?;
    let watch = stop_watch()?;
    eprintln!(
        "reviewer agent {} (AgentChat {}) with {} on {} {}",
        identity.agent_id(),
        identity.chat_id(),
        reviewer.name(),
        chat.server,
        chat.channel
    );
    let mut agent = ReviewerAgent::new(identity, config, reviewer)?;
    agent.run(&|| watch.received().is_some(), &mut |event| {
        let (value, words) = match event {
            ReviewerEvent::Joined => (json!({"event": "joined"}), "in the channel".to_owned()),
            ReviewerEvent::Disconnected { reason } => (
                json!({"event": "disconnected", "reason": reason}),
                format!("disconnected: {reason}; reconnecting"),
            ),
            ReviewerEvent::Reviewing { request_id } => {
                (json!({"event": "reviewing", "request_id": request_id}), format!("reviewing {request_id}"))
            }
            ReviewerEvent::Reviewed { request_id, review_id, verdict, comments } => (
                json!({"event": "reviewed", "request_id": request_id, "review_id": review_id, "verdict": verdict.as_str(), "comments": comments}),
                format!("reviewed {request_id}: {} with {comments} comment(s), REVIEW {review_id}", verdict.as_str()),
            ),
            ReviewerEvent::Declined { request_id, reason } => (
                json!({"event": "declined", "request_id": request_id, "reason": reason}),
                format!("declined {request_id}: {reason}"),
            ),
            ReviewerEvent::LedgerAnswer { answer } => (
                json!({"event": "ledger_answer", "answer": answer}),
                format!("the ledger answered: {answer}"),
            ),
            other => (json!({"event": format!("{other:?}")}), format!("{other:?}")),
        };
        log(json, value, words);
    })?;
    eprintln!("stopped");
    Ok(ExitCode::SUCCESS)
}
