//! `revcal elo ...`: keys, signing, the ledger, the leaderboard and receipts.

pub(crate) mod authority;
mod handle;
mod ingest;
mod keys;
mod query;
pub(crate) mod record;
mod trust;

use crate::style::Style;
use clap::{Args, Subcommand};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Arguments of `revcal elo`.
#[derive(Debug, Args)]
#[command(after_help = crate::exit::with_table(
    "Examples:\n  revcal elo keygen --out alice.key\n  revcal elo sign request.json --key alice.key >> messages.jsonl\n  revcal elo ingest messages.jsonl\n  revcal elo leaderboard --limit 10\n  revcal elo record calibration.json --report report.json --authority-key authority.key --agent @19cb9eb76121ee32 --agent-key reviewer.key\n  revcal elo leaderboard --domain off-by-one\n  revcal elo receipts @3f9a0c1d2e4b5a69 --json > receipts.json\n  revcal elo issuer-key --out ledger.pub\n  revcal elo verify-receipt receipts.json --issuer-key ledger.pub\n\nThe ledger is --ledger PATH|URL, else $REVCAL_LEDGER_URL, else $REVCAL_LEDGER,\nelse ./revcal-ledger.sqlite. A postgres:// URL (or a key=value connection string such as\n'host=db.internal dbname=reviews') names a PostgreSQL database, shown without its\npassword (docs/reputation.md, \"PostgreSQL\"); other URL schemes are refused.\nMessage formats, rating rules and guarantees: docs/reputation.md.",
    crate::exit::ELO_TABLE,
))]
pub(crate) struct EloArgs {
    #[command(subcommand)]
    command: EloCommand,

    /// The ledger: an SQLite file, or a PostgreSQL database as a postgres:// URL or a
    /// key=value connection string
    /// [default: $REVCAL_LEDGER_URL, else $REVCAL_LEDGER, else ./revcal-ledger.sqlite].
    #[arg(long, global = true, value_name = "PATH|URL")]
    ledger: Option<String>,
}

#[derive(Debug, Subcommand)]
enum EloCommand {
    /// Make a new Ed25519 identity (from the OS random source) and print its agent id.
    ///
    /// The key file is JSON: {agent, public_key, secret_key}, standard base64, written with
    /// mode 0600. Keep it secret; `jq 'del(.secret_key)'` makes a public key file.
    #[command(after_help = "Examples:\n  revcal elo keygen --out alice.key")]
    Keygen {
        /// Where to write the key file.
        #[arg(long, value_name = "FILE")]
        out: PathBuf,
        /// Replace an existing file.
        #[arg(long)]
        force: bool,
    },
    /// Sign a message: fill `from` (and `ts`, now in milliseconds, when absent), add `pubkey`
    /// and `sig`, check every field, print the signed message as one canonical JSON line on
    /// stdout and its type, id and sender on stderr.
    ///
    /// Exit status: 0 signed, 1 the message is invalid (the field is named), 2 I/O error.
    #[command(
        after_help = "Examples:\n  revcal elo sign request.json --key alice.key >> messages.jsonl\n  revcal elo sign review.json --key bob.key --request-id \"$(revcal elo id messages.jsonl)\" >> messages.jsonl\n  echo '{\"type\":\"REVIEW_LEADERBOARD\"}' | revcal elo sign - --key alice.key"
    )]
    Sign {
        /// The message (JSON); `-` reads standard input.
        #[arg(value_name = "MSG.json")]
        message: PathBuf,
        /// The signer's key file (from `keygen`).
        #[arg(long, value_name = "FILE")]
        key: PathBuf,
        /// Set `content.request_id` (a review or an outcome answers this request; `revcal
        /// elo id` prints a signed request's id).
        #[arg(long, value_name = "ID")]
        request_id: Option<String>,
    },
    /// Print the id of each signed message in a JSONL file, one per line (the id a review or
    /// an outcome names in `request_id`).
    ///
    /// Exit status: 0 every line is a signed message, 1 a line is not (named on stderr),
    /// 2 I/O error.
    #[command(
        after_help = "Examples:\n  revcal elo id messages.jsonl\n  revcal elo sign request.json --key alice.key | revcal elo id -"
    )]
    Id {
        /// The messages (JSONL); `-` reads standard input.
        #[arg(value_name = "FILE.jsonl")]
        file: PathBuf,
    },
    /// Store signed messages from JSONL files; report each rejected line with its reason.
    ///
    /// Each line is checked (fields, sender, signature) and then the rules (replays,
    /// self-reviews, outcomes only from the requester, once, ...). Valid lines are stored
    /// and rated in transactions of --batch-size lines; several processes may ingest into
    /// one ledger at once.
    ///
    /// Exit status: 0 every line stored, 1 some line rejected, 2 I/O error.
    #[command(
        after_help = "Examples:\n  revcal elo ingest messages.jsonl\n  revcal elo ingest --ledger team.sqlite a.jsonl b.jsonl --json"
    )]
    Ingest {
        /// JSONL files, one signed message per line; `-` reads standard input.
        #[arg(value_name = "FILE.jsonl", required = true)]
        files: Vec<PathBuf>,
        /// Print a JSON report.
        #[arg(long)]
        json: bool,
        /// Lines per transaction.
        #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u32).range(1..), value_name = "N")]
        batch_size: u32,
    },
    /// Print the reviewers by rating: over every outcome (RFC-001's leaderboard), the
    /// verified ones (calibrations signed by a trusted authority), the self-reported ones,
    /// or one bug category's verified ones (--domain).
    #[command(
        after_help = "Examples:\n  revcal elo leaderboard\n  revcal elo leaderboard --limit 5 --json\n  revcal elo leaderboard --outcomes verified\n  revcal elo leaderboard --domain off-by-one"
    )]
    Leaderboard {
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// At most N reviewers.
        #[arg(long, default_value_t = 20, value_name = "N")]
        limit: u32,
        /// Which outcomes the ratings count [default: all; verified with --domain].
        #[arg(long, value_enum, value_name = "OUTCOMES")]
        outcomes: Option<OutcomesArg>,
        /// One bug category's ratings, from verified outcomes (e.g. off-by-one).
        #[arg(long, value_name = "CATEGORY")]
        domain: Option<String>,
    },
    /// Record a calibration as review traffic: sign its rounds as RFC-001 messages and
    /// store them, all or none, with the reviewer's rating changes overall and per domain.
    ///
    /// Per trial of each round: a REVIEW_REQUEST and a REVIEW_OUTCOME signed with
    /// --authority-key (the outcome an incident exactly when the round carried a plant,
    /// naming the calibration), and the reviewer's REVIEW signed with --agent-key
    /// (REQUEST_CHANGES with its located findings when it flagged the change, else APPROVE).
    /// The outcomes are verified when the ledger trusts the authority (`revcal elo trust`).
    /// The calibration is a report of `revcal calibrate` (--json or --save-baseline output,
    /// recorded from its rounds, clean ones included) or a calibration record. It is refused
    /// when its figures are not what its rounds give, a report's rounds disagree with its
    /// plants, or, for a record with --report, when the report does not hash to its
    /// report_sha256 or tells its plants otherwise. Recording a calibration twice is refused.
    /// The forms: docs/reputation.md, "Verified outcomes".
    ///
    /// Exit status: 0 recorded, 1 refused (an altered or invalid record, a calibration
    /// recorded before), 2 usage or I/O error.
    #[command(
        after_help = "Examples:\n  revcal elo record report.json --authority-key authority.key --agent @19cb9eb76121ee32 --agent-key reviewer.key\n  revcal elo record calibration.json --report report.json --authority-key authority.key --agent @19cb9eb76121ee32 --agent-key reviewer.key\n  revcal elo record calibration.json --ledger postgres://revcal@db/reviews --authority-key authority.key --agent @19cb9eb76121ee32 --agent-key reviewer.key --json"
    )]
    Record {
        /// A calibration report (`revcal calibrate --json` or --save-baseline output), or a
        /// calibration record (JSON, `revcal-calibration-record` version 1).
        #[arg(value_name = "REPORT.json|CALIBRATION.json")]
        record: PathBuf,
        /// For a calibration record: the calibration report it names, whose hash and plants
        /// are checked against the record.
        #[arg(long, value_name = "REPORT.json")]
        report: Option<PathBuf>,
        /// The calibrating authority's key file (signs requests and outcomes); `-` reads it
        /// from standard input [default: $REVCAL_AUTHORITY_KEY, the key file's text].
        #[arg(long, value_name = "FILE|-")]
        authority_key: Option<PathBuf>,
        /// Read the authority's key file from this inherited file descriptor (then closed).
        #[arg(long, value_name = "N", conflicts_with = "authority_key")]
        authority_key_fd: Option<i32>,
        /// The reviewer's agent id (the key of --agent-key must be its).
        #[arg(long, value_name = "@AGENT")]
        agent: String,
        /// The reviewer's key file (signs its reviews).
        #[arg(long, value_name = "FILE")]
        agent_key: PathBuf,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Trust a calibrating authority: its calibration outcomes count as verified in this
    /// ledger, the stored ones included (--revoke undoes it, --list shows them).
    ///
    /// The whole public key is compared, not only the agent id.
    #[command(
        after_help = "Examples:\n  revcal elo trust @da3d70b3a95b3686 --key-file authority.pub\n  revcal elo trust --list\n  revcal elo trust @da3d70b3a95b3686 --revoke"
    )]
    Trust {
        /// The authority's agent id.
        #[arg(value_name = "@AGENT", required_unless_present = "list")]
        agent: Option<String>,
        /// The authority's public key file (a key file without its secret half does).
        #[arg(long, value_name = "FILE", required_unless_present_any = ["revoke", "list"], conflicts_with_all = ["revoke", "list"])]
        key_file: Option<PathBuf>,
        /// No longer trust the authority.
        #[arg(long, conflicts_with = "list")]
        revoke: bool,
        /// List the trusted authorities.
        #[arg(long)]
        list: bool,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Print signed receipts for every scored review of an agent.
    ///
    /// `--json` prints a JSON array that `verify-receipt` checks offline.
    #[command(
        after_help = "Examples:\n  revcal elo receipts @3f9a0c1d2e4b5a69\n  revcal elo receipts @3f9a0c1d2e4b5a69 --json > receipts.json"
    )]
    Receipts {
        /// The reviewer's agent id.
        #[arg(value_name = "@AGENT")]
        agent: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Verify receipts (one JSON receipt, or an array) with the issuing ledger's public key.
    ///
    /// Needs no ledger. Exit status: 0 every receipt verifies, 1 one does not, 2 I/O error.
    #[command(after_help = "Examples:\n  revcal elo verify-receipt receipts.json --issuer-key ledger.pub")]
    VerifyReceipt {
        /// The receipt file; `-` reads standard input.
        #[arg(value_name = "FILE")]
        file: PathBuf,
        /// The issuer's key file (`revcal elo issuer-key`); a secret half is ignored.
        #[arg(long, value_name = "FILE")]
        issuer_key: PathBuf,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Print (or write) the ledger's public key file: what verifiers of its receipts need.
    IssuerKey {
        /// Write it to FILE instead of standard output.
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
    /// Answer one protocol message read from standard input, as a chat server would.
    ///
    /// REVIEW_LEADERBOARD, signed or not, gets a REVIEW_LEADERBOARD_RESULT signed by the
    /// ledger; requests, reviews and outcomes are stored and acknowledged with
    /// {"status": "stored", ...}.
    ///
    /// Exit status: 0 answered or stored, 1 rejected, 2 I/O error.
    #[command(
        after_help = "Examples:\n  echo '{\"type\": \"REVIEW_LEADERBOARD\"}' | revcal elo handle\n  revcal elo sign review.json --key bob.key | revcal elo handle"
    )]
    Handle,
    /// Check the ledger: SQLite integrity, and a replay of every stored message that must
    /// reproduce the stored ratings.
    ///
    /// Exit status: 0 consistent, 1 a problem found, 2 I/O error.
    Check {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

/// Runs `revcal elo`.
pub(crate) fn run(args: EloArgs, style: &Style) -> anyhow::Result<ExitCode> {
    let ledger = LedgerArg::resolve(args.ledger);
    match args.command {
        EloCommand::Keygen { out, force } => keys::keygen(&out, force),
        EloCommand::Sign { message, key, request_id } => keys::sign(&message, &key, request_id.as_deref()),
        EloCommand::Id { file } => keys::ids(&file),
        EloCommand::Ingest { files, json, batch_size } => {
            ingest::run(&ledger, &files, json, batch_size as usize, style)
        }
        EloCommand::Leaderboard { json, limit, outcomes, domain } => {
            let scope = revcal_elo::Scope::of(outcomes.map(OutcomesArg::outcomes), domain.as_deref())
                .map_err(|error| anyhow::anyhow!("--domain with --outcomes: {error}"))?;
            query::leaderboard(&ledger, limit, &scope, json, style)
        }
        EloCommand::Record { record, report, authority_key, authority_key_fd, agent, agent_key, json } => {
            let authority_key = authority::KeySource::of(authority_key.as_deref(), authority_key_fd)?;
            let args = record::RecordArgs { record, report, authority_key, agent, agent_key, json };
            record::run(&ledger, &args, style)
        }
        EloCommand::Trust { agent, key_file, revoke, list, json } => {
            let action = match (agent.as_deref(), key_file.as_deref()) {
                _ if list => trust::TrustAction::List,
                (Some(agent), _) if revoke => trust::TrustAction::Revoke(agent),
                (Some(agent), Some(key_file)) => trust::TrustAction::Add(agent, key_file),
                _ => {
                    anyhow::bail!("revcal elo trust: give @AGENT --key-file FILE, @AGENT --revoke, or --list")
                }
            };
            trust::run(&ledger, action, json, style)
        }
        EloCommand::Receipts { agent, json } => query::receipts(&ledger, &agent, json, style),
        EloCommand::VerifyReceipt { file, issuer_key, json } => {
            query::verify_receipts(&file, &issuer_key, json, style)
        }
        EloCommand::IssuerKey { out } => query::issuer_key(&ledger, out.as_deref()),
        EloCommand::Handle => handle::run(&ledger),
        EloCommand::Check { json } => query::check(&ledger, json, style),
    }
}

/// `--outcomes` of `revcal elo leaderboard`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum OutcomesArg {
    /// Every outcome (RFC-001's leaderboard).
    All,
    /// Calibration outcomes signed by an authority the ledger trusts.
    Verified,
    /// Every other outcome.
    Reported,
}

impl OutcomesArg {
    fn outcomes(self) -> revcal_elo::Outcomes {
        match self {
            OutcomesArg::All => revcal_elo::Outcomes::All,
            OutcomesArg::Verified => revcal_elo::Outcomes::Verified,
            OutcomesArg::Reported => revcal_elo::Outcomes::Reported,
        }
    }
}

/// The variables a ledger is named by, first to last: a URL (or path), then a path.
pub(crate) const LEDGER_VARIABLES: [&str; 2] = ["REVCAL_LEDGER_URL", "REVCAL_LEDGER"];

/// The ledger the command names (`--ledger`, the environment or the default file), read
/// when a command opens it: commands without a ledger never fail on a bad one.
pub(crate) struct LedgerArg {
    text: String,
    /// Where `text` came from, for errors: `--ledger` or the variable's name.
    source: &'static str,
}

impl LedgerArg {
    /// `--ledger`, else `$REVCAL_LEDGER_URL`, else `$REVCAL_LEDGER`, else the default file.
    pub(crate) fn resolve(flag: Option<String>) -> LedgerArg {
        let from_env = |name: &'static str| {
            std::env::var(name).ok().filter(|value| !value.is_empty()).map(|text| (text, name))
        };
        let (text, source) = flag
            .map(|text| (text, "--ledger"))
            .or_else(|| from_env(LEDGER_VARIABLES[0]))
            .or_else(|| from_env(LEDGER_VARIABLES[1]))
            .unwrap_or_else(|| (revcal_elo::DEFAULT_LEDGER_FILE.to_owned(), "the default ledger"));
        LedgerArg { text, source }
    }

    /// The location; the error quotes no part of a URL (it may hold a password).
    fn location(&self) -> anyhow::Result<revcal_elo::LedgerLocation> {
        revcal_elo::LedgerLocation::parse(&self.text)
            .map_err(|error| anyhow::anyhow!("{}: {error}", self.source))
    }

    /// Opens the ledger, creating it when absent (for commands that write).
    pub(crate) fn open_or_create(&self) -> anyhow::Result<revcal_elo::Ledger> {
        revcal_elo::Ledger::open_at(&self.location()?, None).map_err(with_hint)
    }

    /// Opens an existing ledger, for commands that only read: a typo in a path, an empty
    /// file or an empty PostgreSQL schema does not become an empty ledger.
    fn open_existing(&self) -> anyhow::Result<revcal_elo::Ledger> {
        let location = self.location()?;
        if let Some(path) = location.path()
            && !path.exists()
        {
            anyhow::bail!("no ledger at {} ({CREATE_ONE})", path.display());
        }
        revcal_elo::Ledger::open_existing_at(&location).map_err(|error| match error {
            revcal_elo::LedgerError::NoLedger { .. } => anyhow::anyhow!("{error} ({CREATE_ONE})"),
            other => with_hint(other),
        })
    }

    /// Refuses the ledger when it is another application's database, before long work
    /// whose result goes there (`calibrate --record-to`). A ledger that cannot be reached
    /// now is not refused: recording says so once the work is done, its result written.
    pub(crate) fn refuse_foreign(&self) -> anyhow::Result<()> {
        match revcal_elo::Ledger::refuse_foreign(&self.location()?) {
            Err(error @ revcal_elo::LedgerError::NotALedger { .. }) => Err(with_hint(error)),
            Err(error) => {
                tracing::debug!(%error, "the ledger could not be checked before the run");
                Ok(())
            }
            Ok(()) => Ok(()),
        }
    }
}

/// How to make a ledger, for a command that only reads.
const CREATE_ONE: &str =
    "create one with `revcal elo ingest FILE.jsonl`, or pass --ledger PATH|URL / set REVCAL_LEDGER_URL";

/// A ledger error, with what to do about another application's database in this
/// command's flags.
fn with_hint(error: revcal_elo::LedgerError) -> anyhow::Error {
    match error {
        revcal_elo::LedgerError::NotALedger { .. } => anyhow::anyhow!(
            "{error} (--ledger PATH names a new file; a PostgreSQL ledger can have a schema of its own: \
             CREATE SCHEMA revcal, and `options=-c search_path=revcal` in the URL)"
        ),
        other => other.into(),
    }
}

/// The largest file `revcal elo ingest` reads (and the largest receipts file it verifies):
/// 512 MiB, about 850,000 signed messages. Split a larger stream into several files.
/// Milliseconds since the Unix epoch: the `ts` revcal fills in.
pub(crate) fn now_millis() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

pub(crate) const MAX_STREAM_BYTES: u64 = 512 << 20;
/// The largest key file.
const MAX_KEY_FILE_BYTES: u64 = 64 << 10;

/// Reads a file, or standard input for `-`, refusing it past `limit` bytes.
fn read_input(path: &Path, limit: u64) -> anyhow::Result<Vec<u8>> {
    crate::input::read_bounded(path, limit)
}

/// Reads a UTF-8 text input of at most `limit` bytes, naming the file on error.
fn read_text(path: &Path, limit: u64) -> anyhow::Result<String> {
    crate::input::read_text(path, limit)
}

/// A path as users typed it, `-` shown as standard input.
pub(crate) fn display(path: &Path) -> String {
    if path == Path::new("-") { "<stdin>".to_owned() } else { path.display().to_string() }
}

/// Loads a key file, naming it on error.
pub(crate) fn load_key_file(path: &Path) -> anyhow::Result<revcal_elo::KeyFile> {
    let text = read_text(path, MAX_KEY_FILE_BYTES)?;
    revcal_elo::KeyFile::parse(&text).map_err(|error| anyhow::anyhow!("{}: {error}", display(path)))
}

/// `1 receipt`, `2 receipts`.
fn count(n: u64, noun: &str) -> String {
    if n == 1 { format!("1 {noun}") } else { format!("{n} {noun}s") }
}

/// A rating as people read it: whole numbers without decimals.
fn rating_text(rating: f64) -> String {
    if rating.fract() == 0.0 { format!("{rating:.0}") } else { format!("{rating:.1}") }
}
