//! `revcal calibrate` (and the `review-calibration` binary, which shares this module):
//! plant bugs in a commit, run the reviewer in scratch checkouts, score what it caught.

mod progress;
pub(crate) mod suite;

pub(crate) use progress::{bar as progress_bar, lines as progress_lines};

use crate::output::{emit, outln};
use crate::style::Style;
use anyhow::Context;
use clap::{Args, ValueEnum};
use revcal_calibrate::{BuildCheck, CalibrateError, Calibration, Recovered, Report, ScorerKind};
use revcal_judge::{CommandJudge, JudgeError, Provider};
use revcal_report::{render_html, render_human, render_junit};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use crate::exit::{
    CALIBRATE_ERROR as EXIT_ERROR, CALIBRATE_GATE_FAIL as EXIT_GATE_FAIL, CALIBRATE_PASS as EXIT_PASS,
};

/// The scorer, as chosen on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ScorerArg {
    /// A judge decides whether a finding describes the planted defect: the built-in LLM judge
    /// (an API key in the environment) or --judge-cmd.
    Judge,
    /// A finding's `repro` command must pass on the original and fail on the plant.
    Repro,
    /// Location only: NOT trustworthy (an echo of the diff scores 1.0).
    String,
}

impl From<ScorerArg> for ScorerKind {
    fn from(arg: ScorerArg) -> ScorerKind {
        match arg {
            ScorerArg::Judge => ScorerKind::Judge,
            ScorerArg::Repro => ScorerKind::Repro,
            ScorerArg::String => ScorerKind::String,
        }
    }
}

/// Plants selected when neither --plants nor --plants-file says otherwise (SPEC section 6).
const DEFAULT_PLANTS: usize = 8;

const AFTER_HELP: &str = "\
Flow: targets (the commit's changed source files, read from git's objects) -> plants ->
drop plants that break the build (--build-cmd) -> drop equivalent and runaway plants
(witness check) -> echo and oracle controls -> every review (rounds x trials) in a scratch
checkout of the commit with its plants, --jobs at once -> parse findings -> score -> report.
Your work tree, index, HEAD, refs and stash are never written; a dirty tree is fine.

Examples:
  ANTHROPIC_API_KEY=... revcal calibrate --review-cmd 'my-reviewer --base {base}'
  revcal calibrate --review-cmd ./review.sh --review-provider anthropic --judge-provider openai
  revcal calibrate --review-cmd 'my-reviewer --base {base}' --judge-cmd ./judge.sh
  revcal calibrate --review-cmd ./review.sh --scorer repro --plants-file plants.yaml --min-recall 0.6
  revcal calibrate --review-cmd ./review.sh --scorer repro --json --junit calib.xml --html calib.html
  revcal calibrate --recover          put back files an earlier release left planted";

/// Arguments of `revcal calibrate`.
#[derive(Debug, Args)]
#[command(
    after_help = crate::exit::with_table(AFTER_HELP, crate::exit::CALIBRATE_TABLE),
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true
)]
pub(crate) struct CalibrateArgs {
    /// Many commits and repositories at once, spread over machines.
    #[command(subcommand)]
    pub(crate) action: Option<suite::SuiteAction>,
    /// Reviewer shell command; `{base}` is replaced by the base commit (first parent). It
    /// runs in a scratch checkout of the commit with the plants in place, with build and cache
    /// directories of its slot's and no path to your repository (see --reviewer-env), and
    /// must exit with one of --ok-exit-codes. A program given as a relative path
    /// (./review.sh) is found from the current directory.
    #[arg(long, value_name = "CMD", required_unless_present_any = ["recover", "reviewer"], conflicts_with = "reviewer")]
    pub(crate) review_cmd: Option<String>,
    /// Commit whose changed files (against its first parent), minus tests and configuration,
    /// are the targets.
    #[arg(long, value_name = "REF", default_value = "HEAD")]
    pub(crate) commit: String,
    /// Fallback targets when the commit touches no eligible file (comma-separated).
    #[arg(long, value_name = "A,B", value_delimiter = ',')]
    pub(crate) files: Vec<String>,
    /// Plants to select (at least 1) [default: 8]. With --plants-file, this many mutants are
    /// planted too, beside the file's entries: real and synthetic bugs in one run, with recall
    /// per kind.
    #[arg(long, value_name = "N", value_parser = at_least_one)]
    pub(crate) plants: Option<usize>,
    /// Seed for plant selection (same seed, same plants).
    #[arg(long, value_name = "S", default_value_t = 0)]
    pub(crate) seed: u64,
    /// JSON/YAML plants `[{file, line, original, mutated, category?, defect?, witness?}]`
    /// instead of the mutation engine, or a bugs file from `revcal bugs mine` (entries with a
    /// `patch`: real bugs).
    #[arg(long, value_name = "FILE")]
    pub(crate) plants_file: Option<PathBuf>,
    /// Plant each bug alone, one review per plant, instead of all at once: for a bugs file
    /// whose bugs change the same lines (otherwise those are left out with a warning).
    #[arg(long)]
    pub(crate) one_at_a_time: bool,
    /// Run the review K times; report mean recall and a Wilson 95% interval.
    #[arg(long, value_name = "K", default_value_t = 1, value_parser = at_least_one)]
    pub(crate) trials: usize,
    /// Also review N clean changes: each a behaviour-preserving edit (a comparison written
    /// mirrored, `a < b` as `b > a`) on a line without a plant, chosen from --seed and
    /// reviewed exactly as a planted change is. A finding within 3 lines of the edit is a
    /// false alarm: the report gains the false-alarm rate with its interval.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub(crate) clean_rounds: usize,
    #[command(flatten)]
    pub(crate) record: RecordFlags,
    #[command(flatten)]
    pub(crate) run: RunFlags,
    #[command(flatten)]
    pub(crate) report: ReportFlags,
    /// Repository to calibrate in (default: the current directory).
    #[arg(long, short = 'C', value_name = "DIR", default_value = ".")]
    pub(crate) dir: PathBuf,
    /// Restore the files an interrupted run of an earlier revcal release left planted (from
    /// its journal under .git/), then exit; this release never plants in your tree.
    #[arg(long, conflicts_with_all = ["review_cmd", "plants_file", "json"])]
    pub(crate) recover: bool,
}

/// Recording the run as review traffic in a reputation ledger (`revcal elo record`).
#[derive(Debug, Args)]
pub(crate) struct RecordFlags {
    /// Record the calibration in this ledger (a file or a PostgreSQL URL) once its report is
    /// written, as `revcal elo record REPORT.json` does: every round as signed RFC-001
    /// requests, reviews and outcomes. A refusal exits 1. The authority's key must stay out
    /// of the reviewer's reach: see --authority-key.
    #[arg(long, value_name = "LEDGER", requires_all = ["agent", "agent_key"])]
    pub(crate) record_to: Option<String>,
    /// With --record-to: the calibrating authority's key file (signs requests and outcomes),
    /// `-` for standard input [default: $REVCAL_AUTHORITY_KEY, the key file's text]. While
    /// reviewers run, only `-`, --authority-key-fd or the variable: a file's path on the
    /// command line is one a reviewer can read (docs/reputation.md, "Who must be kept apart").
    #[arg(long, value_name = "FILE|-", requires = "record_to")]
    pub(crate) authority_key: Option<PathBuf>,
    /// With --record-to: read the authority's key file from this inherited file descriptor
    /// (then closed), e.g. `--authority-key-fd 3 3< <(secret-tool lookup revcal authority)`.
    #[arg(long, value_name = "N", requires = "record_to", conflicts_with = "authority_key")]
    pub(crate) authority_key_fd: Option<i32>,
    /// With --record-to: the reviewer's agent id.
    #[arg(long, value_name = "@AGENT", requires = "record_to")]
    pub(crate) agent: Option<String>,
    /// With --record-to: the reviewer's key file (signs its reviews).
    #[arg(long, value_name = "FILE", requires = "record_to")]
    pub(crate) agent_key: Option<PathBuf>,
}

/// Where and with which keys a run is recorded (`--record-to`); read before the run, so that
/// a bad key costs no calibration.
pub(crate) struct Recorder {
    ledger: crate::elo::LedgerArg,
    signers: crate::elo::record::Signers,
}

impl Recorder {
    /// The recorder of the flags, when --record-to is given (clap requires the reviewer's
    /// key with it); `exposure` says whether reviewers run while revcal holds the
    /// authority's key (then it must be kept from them, or the run is refused here, before
    /// anything runs).
    pub(crate) fn load(
        flags: &RecordFlags,
        exposure: crate::elo::authority::Exposure,
    ) -> anyhow::Result<Option<Recorder>> {
        let (Some(ledger), Some(agent), Some(agent_key)) = (&flags.record_to, &flags.agent, &flags.agent_key)
        else {
            return Ok(None);
        };
        // Another application's database is refused before anything runs, and before the
        // keys are asked for.
        let ledger = crate::elo::LedgerArg::resolve(Some(ledger.clone()));
        ledger.refuse_foreign()?;
        let source =
            crate::elo::authority::KeySource::of(flags.authority_key.as_deref(), flags.authority_key_fd)?;
        Ok(Some(Recorder {
            ledger,
            signers: crate::elo::record::Signers::load(&source, exposure, agent, agent_key)?,
        }))
    }

    /// Records `report` (written just before, as `flags` say) the way `revcal elo record
    /// REPORT.json` does; what the ledger said goes to stdout, or to stderr with --json
    /// (stdout then holds the JSON report alone). Returns whether it was recorded; a refusal,
    /// or a ledger that cannot be opened, is said on stderr (the caller exits 1: the report
    /// is printed already, so the error is not a JSON document of its own).
    pub(crate) fn record(
        &self,
        flags: &ReportFlags,
        report: &Report,
        err_style: &Style,
    ) -> anyhow::Result<bool> {
        // The report as written (--json, --save-baseline): its hash is the one recorded.
        let mut text = serde_json::to_string_pretty(report).context("cannot serialise the report")?;
        text.push('\n');
        let (out, recorded) =
            match crate::elo::record::record_report(&self.ledger, &text, &self.signers, err_style) {
                Ok(outcome) => outcome,
                Err(error) => (format!("{}: {error:#}\n", err_style.error("error")), false),
            };
        if flags.json || !recorded {
            eprint!("{out}");
        } else {
            emit(&out)?;
        }
        if !recorded {
            eprintln!(
                "{}: the calibration was not recorded in the ledger (--record-to); the report above stands",
                err_style.error("error")
            );
        }
        Ok(recorded)
    }
}

/// How each review is run, scored and gated: the flags `calibrate` and `calibrate suite`
/// share.
/// The recall gate of a run (and of `calibrate merge`) when none is given.
pub(crate) const DEFAULT_MIN_RECALL: f64 = 0.5;

#[derive(Debug, Args)]
pub(crate) struct RunFlags {
    /// Recall gate.
    #[arg(long, value_name = "F", default_value_t = DEFAULT_MIN_RECALL)]
    pub(crate) min_recall: f64,
    /// Precision gate (unset: precision does not gate).
    #[arg(long, value_name = "F")]
    pub(crate) min_precision: Option<f64>,
    /// Fewer valid plants is an operational error, never a pass.
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub(crate) min_plants: usize,
    /// How a finding is judged to identify the plant it points at.
    #[arg(long, value_enum, default_value_t = ScorerArg::Judge)]
    pub(crate) scorer: ScorerArg,
    /// External judge: one JSON request on stdin, `{"match": true|false}` on stdout
    /// (instead of the built-in LLM judge).
    #[arg(long, value_name = "CMD", conflicts_with_all = ["judge_provider", "judge_model"])]
    pub(crate) judge_cmd: Option<String>,
    #[command(flatten)]
    pub(crate) judge: crate::judge::JudgeFlags,
    /// The provider the reviewer itself uses: a judge of the same provider is refused (a
    /// model family judging its own findings inflates recall) unless --allow-same-provider.
    #[arg(long, value_enum, value_name = "NAME")]
    pub(crate) review_provider: Option<crate::judge::ProviderArg>,
    /// Let a judge of the reviewer's own provider judge it.
    #[arg(long)]
    pub(crate) allow_same_provider: bool,
    /// The built-in LLM reviewer instead of --review-cmd: PROVIDER:MODEL (openai:gpt-4o-mini;
    /// several, comma-separated, make a council whose findings are pooled). It reviews each
    /// checkout's change against the base with the code_review_v1 rubric (docs/review.md);
    /// its answers are cached beside the judge's verdicts (--judge-cache, --no-judge-cache),
    /// and a judge of its provider is refused unless --allow-same-provider.
    #[arg(long, value_name = "P:M", value_delimiter = ',', num_args = 1..)]
    pub(crate) reviewer: Vec<crate::review::ModelSpec>,
    /// Stop (exit 1) rather than send more than N requests to each model of --reviewer.
    #[arg(long, value_name = "N", requires = "reviewer")]
    pub(crate) max_review_calls: Option<u64>,
    /// With --reviewer: the most findings each review may report (the most serious first; a
    /// small cap keeps a small local model's answer short).
    #[arg(long, value_name = "N", requires = "reviewer", default_value_t = revcal_review::MAX_FINDINGS, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub(crate) max_review_findings: usize,
    /// Exit codes that mean the reviewer finished; any other is a crash. Linters exit 1 when
    /// they find something (ruff, ESLint: `0,1`); pylint's code is a bit mask (`0-31`).
    #[arg(long, value_name = "LIST", default_value = "0,2", value_parser = parse_exit_codes)]
    pub(crate) ok_exit_codes: ExitCodes,
    /// Build command run once on the original and once per plant in a scratch copy, as
    /// your witnesses are: with your environment, network and download caches, outside the
    /// sandbox (build output stays in the copy); a plant whose build fails is excluded with
    /// the reason (a compiler-backed reviewer would "catch" it unread). Default: `cargo check
    /// --all-targets` when a Cargo.toml is at the repository root, none otherwise;
    /// `--build-cmd ''` turns it off.
    #[arg(long, value_name = "CMD")]
    pub(crate) build_cmd: Option<String>,
    /// Seconds before the reviewer's whole process group is killed.
    #[arg(long, value_name = "SECS", default_value_t = 1800)]
    pub(crate) review_timeout: u64,
    /// Seconds before a witness, build or repro command is killed.
    #[arg(long, value_name = "SECS", default_value_t = 300)]
    pub(crate) repro_timeout: u64,
    /// MiB of resident memory a witness, build or repro command's process group may use before it
    /// is killed (a plant whose witness is killed for it is excluded as a runaway); 0: no cap.
    #[arg(long, value_name = "MIB", default_value_t = revcal_calibrate::DEFAULT_REPRO_MEMORY >> 20)]
    pub(crate) repro_memory: u64,
    /// Count every finding, also those the reviewer made on the unplanted change too. By
    /// default (for --review-cmd) each trial also reviews the unplanted change, and a finding
    /// made there too (the same file and message, its line moved by the plants) is set aside:
    /// neither a catch nor a false positive nor a false alarm (a linter's old warnings).
    #[arg(long, overrides_with = "preexisting_filter")]
    pub(crate) no_preexisting_filter: bool,
    /// Set aside the findings made on the unplanted change with --reviewer too (off by default
    /// there: a model words its findings differently each time, and each trial costs one more
    /// review).
    #[arg(long, overrides_with = "no_preexisting_filter")]
    pub(crate) preexisting_filter: bool,
    /// MiB the largest file of the commit may hold: a commit with a larger one is refused
    /// before anything is written (GitHub takes no file over 100 MiB).
    #[arg(long, value_name = "MIB", default_value_t = revcal_calibrate::CheckoutLimits::DEFAULT_MAX_FILE_BYTES >> 20)]
    pub(crate) max_file_size: u64,
    /// MiB all the files of one scratch checkout may hold together (each job slot writes
    /// one): a commit past it is refused before it fills the disk.
    #[arg(long, value_name = "MIB", default_value_t = revcal_calibrate::CheckoutLimits::DEFAULT_MAX_CHECKOUT_BYTES >> 20)]
    pub(crate) max_checkout_size: u64,
    /// Where the job slots' checkouts are kept between runs, per repository, so that a run
    /// writes only the files that differ from what the last one left [default:
    /// $XDG_CACHE_HOME/revcal/checkouts or ~/.cache/revcal/checkouts]. `revcal cache` lists
    /// and clears it.
    #[arg(long, value_name = "DIR", conflicts_with = "no_checkout_cache")]
    pub(crate) checkout_cache: Option<PathBuf>,
    /// Keep no checkout: each run writes fresh checkouts in its temporary directory and removes
    /// them at its end.
    #[arg(long)]
    pub(crate) no_checkout_cache: bool,
    /// MiB the checkout cache may hold over all repositories (checkouts and their build
    /// directories): past it, the least recently used repositories are removed before a run.
    #[arg(long, value_name = "MIB", default_value_t = revcal_calibrate::CheckoutCache::DEFAULT_MAX_BYTES >> 20)]
    pub(crate) checkout_cache_size: u64,
    /// Run the reviewer's repro commands without the sandbox (Linux Landlock: writes only to
    /// their scratch copy and temporary directories, no TCP). A reviewer prints its repro
    /// commands: unsandboxed, a hostile reviewer runs any command as you. Your build and
    /// witness commands always run outside it.
    #[arg(long)]
    pub(crate) unsandboxed_repro: bool,
    /// Pass variable NAME of your environment on to the reviewer and its repro commands
    /// (repeatable). Otherwise they never get: ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL,
    /// OPENAI_API_KEY, OPENAI_BASE_URL, GEMINI_API_KEY, GOOGLE_API_KEY, GEMINI_BASE_URL,
    /// REVCAL_JUDGE_PROVIDER, REVCAL_JUDGE_MODEL, REVCAL_LEDGER, REVCAL_LEDGER_URL,
    /// REVCAL_AUTHORITY_KEY, REVCAL_TEST_POSTGRES (a provider's key or address, the judge's
    /// choice, a ledger, a key), OLDPWD, and any variable whose value names your repository
    /// (PATH and HOME aside). A --judge-cmd judge and your build and witness commands get
    /// your whole environment.
    #[arg(long, value_name = "NAME", value_parser = variable_name)]
    pub(crate) reviewer_env: Vec<String>,
    /// Choose mutants from the realistic profile: the operators studies found coupled to
    /// real faults, no logging lines, one per line (docs/mutation.md#profiles). The default
    /// plants every category.
    #[arg(long)]
    pub(crate) realistic: bool,
    /// No progress. Otherwise a bar on a terminal, and one plain line per stage and step
    /// (with the elapsed time) when stderr is not a terminal, as in a CI log.
    #[arg(long, short)]
    pub(crate) quiet: bool,
    /// Reviews (each in a scratch checkout of its own) and judge questions run at once
    /// [default: the number of cores]. Reviewers mostly wait on a model, so N may exceed the
    /// cores. The report is the same for every N.
    #[arg(long, short = 'j', value_name = "N", value_parser = at_least_one)]
    pub(crate) jobs: Option<usize>,
}

/// Where the report goes and what it is compared with: the flags `calibrate`, `calibrate
/// suite` and `calibrate merge` share.
#[derive(Debug, Args)]
pub(crate) struct ReportFlags {
    /// Compare with an earlier JSON report of this reviewer (`--json` or --save-baseline
    /// output): a significant drop in recall, overall or in a category, fails the gate (exit 2)
    /// naming the categories. Paired (McNemar) on the same plants, else Fisher's exact test.
    #[arg(long, value_name = "REPORT.json")]
    pub(crate) baseline: Option<PathBuf>,
    /// Significance level of the baseline comparison (categories at alpha / k).
    #[arg(long, value_name = "F", default_value_t = 0.05)]
    pub(crate) regression_alpha: f64,
    /// Write the JSON report to FILE, to serve as a later run's --baseline.
    #[arg(long, value_name = "FILE")]
    pub(crate) save_baseline: Option<PathBuf>,
    /// Print the JSON report on stdout (the human summary goes to stderr).
    #[arg(long)]
    pub(crate) json: bool,
    /// Write a JUnit report (one test case per plant).
    #[arg(long, value_name = "FILE")]
    pub(crate) junit: Option<PathBuf>,
    /// Write a self-contained HTML report.
    #[arg(long, value_name = "FILE")]
    pub(crate) html: Option<PathBuf>,
}

/// The default of --jobs: the number of cores.
fn default_jobs() -> usize {
    std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
}

/// An environment variable's name: letters, digits and `_`, not starting with a digit.
fn variable_name(text: &str) -> Result<String, String> {
    let mut chars = text.chars();
    let valid = chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    if valid {
        Ok(text.to_owned())
    } else {
        Err(format!("`{text}` is not a variable name (letters, digits and _, as in OPENAI_API_KEY)"))
    }
}

/// A count of at least one.
fn at_least_one(text: &str) -> Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(0) => Err("must be at least 1".to_owned()),
        Ok(n) => Ok(n),
        Err(_) => Err(format!("`{text}` is not a whole number")),
    }
}

/// A list of exit codes: `0,1`, `0-31`, or both (`0,2,4-7`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ExitCodes(pub(crate) Vec<i32>);

fn parse_exit_codes(text: &str) -> Result<ExitCodes, String> {
    let mut codes = Vec::new();
    for part in text.split(',').map(str::trim) {
        let code = |word: &str| {
            word.trim()
                .parse::<i32>()
                .ok()
                .filter(|code| (0..=255).contains(code))
                .ok_or_else(|| format!("`{word}` is not an exit code (0 to 255)"))
        };
        match part.split_once('-') {
            Some((low, high)) => {
                let (low, high) = (code(low)?, code(high)?);
                if low > high {
                    return Err(format!("`{part}`: the range runs backwards"));
                }
                codes.extend(low..=high);
            }
            None => codes.push(code(part)?),
        }
    }
    codes.sort_unstable();
    codes.dedup();
    Ok(ExitCodes(codes))
}

/// Runs `revcal calibrate`; handles its own errors to return exit status 1 (operational)
/// rather than the generic usage status.
pub(crate) fn run(args: CalibrateArgs, style: &Style) -> anyhow::Result<ExitCode> {
    let err_style = stderr_style(style);
    if let Some(action) = args.action {
        return Ok(suite::run(action, style, &err_style));
    }
    if args.recover {
        return Ok(recover(&args, &err_style));
    }
    let outcome = calibrate(&args, style, &err_style);
    Ok(report_failure(outcome, args.report.json, &err_style))
}

/// The exit code of a run's outcome; an error is printed (with its hint, and as JSON on
/// stdout with --json) and exits 1, or 128+N after signal N.
pub(crate) fn report_failure(outcome: anyhow::Result<ExitCode>, json: bool, err_style: &Style) -> ExitCode {
    match outcome {
        Ok(code) => code,
        Err(error) if crate::output::is_broken_pipe(&error) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("{}: {error:#}", err_style.error("error"));
            let calibrate_error = error.downcast_ref::<CalibrateError>();
            let hint = calibrate_error.and_then(hint);
            if let Some(hint) = &hint {
                eprintln!("{}: {hint}", err_style.bold("hint"));
            }
            // With --json, stdout always holds one JSON document: the report (also written
            // when the judge failed on some questions), or the error.
            if json && !matches!(calibrate_error, Some(CalibrateError::JudgeErrors { .. })) {
                let document = serde_json::json!({"error": format!("{error:#}"), "hint": hint});
                let text = format!("{}\n", serde_json::to_string_pretty(&document).unwrap_or_default());
                if let Err(error) = emit(&text)
                    && error.kind() != std::io::ErrorKind::BrokenPipe
                {
                    eprintln!("{}: cannot write the error as JSON: {error}", err_style.error("error"));
                }
            }
            let signal = calibrate_error.and_then(|e| match e {
                CalibrateError::Interrupted { signal, .. } => u8::try_from(128 + signal).ok(),
                _ => None,
            });
            ExitCode::from(signal.unwrap_or(EXIT_ERROR))
        }
    }
}

/// What to do about an error, in this command's flags (the library's messages name none).
fn hint(error: &CalibrateError) -> Option<String> {
    const RECOVER: &str = "fix what stops the write, then run `revcal calibrate --recover` again";
    Some(match error {
        CalibrateError::NoReviewer => "give the reviewer's shell command with --review-cmd CMD".to_owned(),
        CalibrateError::NoTargets { fallback, .. } if fallback.is_empty() => {
            "name fallback targets with --files a,b".to_owned()
        }
        CalibrateError::NoTargets { fallback, .. } => {
            format!("none of --files {} is eligible; name source files of the project", fallback.join(","))
        }
        CalibrateError::TooFewPlants { min, .. } => format!(
            "the minimum is --min-plants {min}; give more plants (--plants N, or more entries in --plants-file) rather than lowering it"
        ),
        CalibrateError::NoJudge => format!("{} (or choose --scorer repro)", crate::judge::SETUP_HINT),
        CalibrateError::Judge(JudgeError::Budget { max })
        | CalibrateError::JudgeErrors { source: JudgeError::Budget { max }, .. } => {
            format!("the budget is --max-judge-calls {max}; raise it, or rerun: cached verdicts cost no call")
        }
        CalibrateError::Judge(JudgeError::GaveUp { .. } | JudgeError::Transport { .. })
        | CalibrateError::JudgeErrors {
            source: JudgeError::GaveUp { .. } | JudgeError::Transport { .. },
            ..
        } => "the judge's provider kept failing; see --judge-timeout and --judge-retries, or try again later"
            .to_owned(),
        CalibrateError::ControlFailed { control: "echo", scorer: ScorerKind::Judge, .. } => {
            "the judge matched findings that only quote the changed line: measure it with `revcal judge calibrate` (its false-match rate) and use a stronger judge model (--judge-model, or another --judge-provider)".to_owned()
        }
        CalibrateError::ControlFailed { control: "oracle", scorer: ScorerKind::Judge, .. } => {
            "the judge did not match findings that state each defect: measure it with `revcal judge calibrate` and use a stronger judge model (--judge-model, or another --judge-provider)".to_owned()
        }
        CalibrateError::ReviewerCouldNotRun { code: 127, .. } => {
            "check the command: is the program installed, on PATH (or a path relative to where revcal starts), and spelt right?".to_owned()
        }
        CalibrateError::ReviewerCouldNotRun { .. } => {
            "check the command: make the program executable (chmod +x), or run it through its interpreter (python3 review.py)".to_owned()
        }
        CalibrateError::ReviewerCrashed { code: Some(code), .. } => format!(
            "if exit code {code} means the reviewer finished (linters exit 1 when they find something), accept it with --ok-exit-codes, e.g. --ok-exit-codes 0,{code}"
        ),
        CalibrateError::BuildFails { .. } => {
            "fix the build, give the command that builds this project with --build-cmd CMD, or turn the check off with --build-cmd ''".to_owned()
        }
        CalibrateError::ReviewerTimedOut { seconds, .. } => {
            format!("the limit is --review-timeout {seconds}; raise it if the reviewer needs longer")
        }
        CalibrateError::Restore { .. } => RECOVER.to_owned(),
        CalibrateError::TooLarge { what, .. } if what.contains("checkout") => {
            "a checkout may hold --max-checkout-size MIB of files (2048 by default); raise it for a commit you trust".to_owned()
        }
        CalibrateError::TooLarge { .. } => {
            "one file may hold --max-file-size MIB (100 by default); raise it for a commit you trust".to_owned()
        }
        CalibrateError::CraftedTree { .. } => {
            "git itself refuses this tree (git fsck); calibrate a commit made by git".to_owned()
        }
        CalibrateError::Untargetable { .. } => {
            "--files and the entries of --plants-file name files of the commit (--commit), relative to the repository root"
                .to_owned()
        }
        _ => return None,
    })
}

fn recover(args: &CalibrateArgs, err_style: &Style) -> ExitCode {
    match revcal_calibrate::recover(&args.dir) {
        Ok(Recovered::NothingToRecover) => {
            eprintln!(
                "nothing to recover: no restore journal in this repository (revcal plants only in scratch checkouts; --recover is for journals earlier releases left)"
            );
            ExitCode::from(EXIT_PASS)
        }
        Ok(Recovered::Restored(files)) => {
            for file in &files {
                eprintln!("restored {}", file.display());
            }
            eprintln!(
                "{} {} file(s) restored byte-for-byte; the journal is removed",
                err_style.success("recovered:"),
                files.len()
            );
            ExitCode::from(EXIT_PASS)
        }
        Err(error) => {
            // The whole chain: the library keeps the I/O error or the journal's fault as a source.
            eprintln!("{}: {:#}", err_style.error("error"), anyhow::Error::from(error));
            ExitCode::from(EXIT_ERROR)
        }
    }
}

fn calibrate(args: &CalibrateArgs, style: &Style, err_style: &Style) -> anyhow::Result<ExitCode> {
    // The baseline is read before anything is planted: a bad file stops the run early.
    let baseline = read_baseline(&args.report)?;
    // The keys are read before anything runs too: a bad key must not cost a calibration, and
    // the authority's must be out of the reviewer's reach before the first review.
    let recorder = Recorder::load(&args.record, crate::elo::authority::Exposure::ReviewersRun)?;
    let reviewer = Reviewer::new(args.review_cmd.as_deref().unwrap_or_default(), &args.run)?;
    let mut calibration = reviewer
        .calibration()
        .commit(&args.commit)
        .files(args.files.clone())
        .plants(args.plants.unwrap_or(DEFAULT_PLANTS))
        .also_synthetic(args.plants_file.is_some() && args.plants.is_some())
        .one_at_a_time(args.one_at_a_time)
        .seed(args.seed)
        .trials(args.trials)
        .clean_rounds(args.clean_rounds)
        .dir(&args.dir);
    if let Some(file) = &args.plants_file {
        calibration = calibration.plants_file(file);
    }
    let report = match calibration.run() {
        Ok(report) => report,
        Err(error) => {
            // The judge failed on some of the review's questions: the report is still written
            // (it counts them apart from misses), and the run exits 1.
            if let CalibrateError::JudgeErrors { report, .. } = &error {
                print_report(&args.report, report, style, err_style)?;
            }
            // A failed control stops the run before any report: say what the judge cost.
            if let (CalibrateError::ControlFailed { .. }, Some(spent)) = (&error, reviewer.judge_spent()) {
                eprintln!(
                    "judge {}:{} spent {} calls · {} cache hits · {} input / {} output tokens",
                    spent.provider,
                    spent.model,
                    spent.calls,
                    spent.cache_hits,
                    spent.input_tokens,
                    spent.output_tokens
                );
            }
            return Err(error.into());
        }
    };
    let report = finish_report(&args.report, report, baseline.as_ref(), style, err_style)?;
    if let Some(recorder) = &recorder
        && !recorder.record(&args.report, &report, err_style)?
    {
        return Ok(ExitCode::from(EXIT_ERROR));
    }
    Ok(ExitCode::from(if report.gate_pass { EXIT_PASS } else { EXIT_GATE_FAIL }))
}

/// The --baseline report, read (and --regression-alpha checked) before anything runs.
pub(crate) fn read_baseline(flags: &ReportFlags) -> anyhow::Result<Option<Report>> {
    if !(flags.regression_alpha > 0.0 && flags.regression_alpha < 1.0) {
        anyhow::bail!(
            "--regression-alpha must be between 0 and 1 (exclusive), got {}",
            flags.regression_alpha
        );
    }
    let Some(path) = &flags.baseline else { return Ok(None) };
    let text = crate::input::read_text(path, 256 << 20)?;
    let report: Report = serde_json::from_str(&text).with_context(|| {
        format!("{}: not a calibration report (write one with --save-baseline or --json)", path.display())
    })?;
    Ok(Some(report))
}

/// Compares with the baseline, prints and writes the report, and saves it as a baseline when
/// asked; returns it (its gate decides the exit code).
pub(crate) fn finish_report(
    flags: &ReportFlags,
    mut report: Report,
    baseline: Option<&Report>,
    style: &Style,
    err_style: &Style,
) -> anyhow::Result<Report> {
    if let Some(baseline) = baseline {
        report.compare_with(baseline, flags.regression_alpha);
    }
    print_report(flags, &report, style, err_style)?;
    if let Some(path) = &flags.save_baseline {
        let mut text = serde_json::to_string_pretty(&report).context("cannot serialise the report")?;
        text.push('\n');
        crate::output::write(path, &text).with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(report)
}

/// The judge a run uses, as chosen by the flags.
#[derive(Clone)]
enum JudgeChoice {
    /// `--judge-cmd`.
    Command(String),
    /// The built-in LLM judge.
    Llm(revcal_judge::JudgeConfig),
    /// None (a repro or string scorer, or no provider: the library fails closed).
    None,
}

/// The reviewer and how its reviews are run and scored: everything but where and what to
/// plant, from the flags `calibrate` and `calibrate suite` share.
pub(crate) struct Reviewer<'a> {
    review_cmd: String,
    /// `--reviewer`: the built-in reviewer's models.
    builtin: Option<crate::review::CalibrationReviewer>,
    flags: &'a RunFlags,
    judge: JudgeChoice,
    pub(crate) scorer: ScorerKind,
    /// The built-in judge of the last calibration set up, kept to tell what it spent when the
    /// run ends in an error that carries no report.
    llm_judge: std::sync::Mutex<Option<std::sync::Arc<revcal_judge::LlmJudge>>>,
}

impl<'a> Reviewer<'a> {
    /// Checks the gates and the judge choice (a judge of the reviewer's own provider is
    /// refused unless allowed) and says which judge runs.
    pub(crate) fn new(review_cmd: &str, flags: &'a RunFlags) -> anyhow::Result<Reviewer<'a>> {
        for (name, value) in
            [("--min-recall", Some(flags.min_recall)), ("--min-precision", flags.min_precision)]
        {
            if let Some(value) = value.filter(|v| !(0.0..=1.0).contains(v)) {
                anyhow::bail!("{name} must be between 0 and 1, got {value}");
            }
        }
        let scorer = ScorerKind::from(flags.scorer);
        let builtin = if flags.reviewer.is_empty() {
            None
        } else {
            let cache = if flags.judge.no_judge_cache {
                None
            } else {
                flags.judge.judge_cache.clone().or_else(revcal_judge::VerdictCache::default_dir)
            };
            let limits = crate::review::Limits {
                timeout: Duration::from_secs(flags.review_timeout),
                retries: flags.judge.judge_retries,
                max_calls: flags.max_review_calls,
                structured_output: flags.judge.structured_output.into(),
                max_findings: flags.max_review_findings,
                offline: false,
            };
            let builtin = crate::review::CalibrationReviewer::new(&flags.reviewer, limits, cache)?;
            eprintln!(
                "reviewer: {} (built in)",
                flags.reviewer.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
            );
            Some(builtin)
        };
        // The reviewer's own providers: named with --review-provider, and those --reviewer asks.
        let mut review_providers: Vec<Provider> =
            flags.review_provider.map(Provider::from).into_iter().collect();
        review_providers.extend(builtin.iter().flat_map(|builtin| builtin.providers()));
        let judge = if let Some(command) = &flags.judge_cmd {
            JudgeChoice::Command(command.clone())
        } else if scorer == ScorerKind::Judge || flags.judge.judge_provider.is_some() {
            // The built-in judge is looked for only when it will judge (or was asked for): a
            // key in the environment must not make a repro run spend money.
            match flags.judge.config()? {
                Some(config) => {
                    if let Some(review) = review_providers.iter().find(|review| **review == config.provider())
                        && !flags.allow_same_provider
                    {
                        let flag = if builtin.is_some() { "--reviewer" } else { "--review-provider" };
                        anyhow::bail!(
                            "the judge ({}) is of the reviewer's own provider ({flag} {review}): a model family judging its own findings inflates recall; choose another --judge-provider, or pass --allow-same-provider",
                            config.provider()
                        );
                    }
                    eprintln!("judge: {} {} at {}", config.provider(), config.model(), config.base_url());
                    JudgeChoice::Llm(config)
                }
                None => JudgeChoice::None,
            }
        } else {
            JudgeChoice::None
        };
        Ok(Reviewer {
            review_cmd: review_cmd.to_owned(),
            builtin,
            flags,
            judge,
            scorer,
            llm_judge: Default::default(),
        })
    }

    /// A calibration set up with the reviewer, scorer, judge, gates and limits.
    pub(crate) fn calibration(&self) -> Calibration {
        let flags = self.flags;
        let mut calibration = Calibration::builder()
            .review_cmd(self.review_cmd.clone())
            .min_recall(flags.min_recall)
            .min_precision(flags.min_precision)
            .min_plants(flags.min_plants)
            .scorer(self.scorer)
            .review_timeout(Duration::from_secs(flags.review_timeout))
            .repro_timeout(Duration::from_secs(flags.repro_timeout))
            .sandbox_repro(!flags.unsandboxed_repro)
            .reviewer_env(flags.reviewer_env.clone())
            .repro_memory((flags.repro_memory > 0).then(|| flags.repro_memory.saturating_mul(1 << 20)))
            .checkout_limits(revcal_calibrate::CheckoutLimits {
                max_file_bytes: flags.max_file_size.saturating_mul(1 << 20),
                max_checkout_bytes: flags.max_checkout_size.saturating_mul(1 << 20),
            })
            .ok_exit_codes(flags.ok_exit_codes.0.clone())
            .build_check(match &flags.build_cmd {
                None => BuildCheck::Auto,
                Some(command) if command.trim().is_empty() => BuildCheck::Off,
                Some(command) => BuildCheck::Command(command.clone()),
            })
            .profile(if flags.realistic {
                revcal_mutate::Profile::Realistic
            } else {
                revcal_mutate::Profile::Default
            })
            .jobs(flags.jobs.unwrap_or_else(default_jobs))
            .on_progress(progress_bar(flags.quiet));
        if flags.preexisting_filter || flags.no_preexisting_filter {
            calibration = calibration.preexisting_filter(flags.preexisting_filter);
        }
        if !flags.no_checkout_cache {
            let cache = match &flags.checkout_cache {
                Some(dir) => Some(revcal_calibrate::CheckoutCache::at(dir)),
                None => revcal_calibrate::CheckoutCache::user_default(),
            };
            calibration = calibration.checkout_cache(
                cache.map(|cache| cache.max_bytes(flags.checkout_cache_size.saturating_mul(1 << 20))),
            );
        }
        if let Some(builtin) = &self.builtin {
            calibration = calibration.in_process_reviewer(builtin.fresh());
        }
        match &self.judge {
            JudgeChoice::Command(command) => calibration
                .judge(Box::new(CommandJudge::new(command.clone()).max_calls(flags.judge.max_judge_calls))),
            JudgeChoice::Llm(config) => {
                let judge = std::sync::Arc::new(flags.judge.judge(config.clone()));
                *self.llm_judge.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) =
                    Some(std::sync::Arc::clone(&judge));
                calibration.judge(Box::new(judge))
            }
            JudgeChoice::None => calibration,
        }
    }

    /// What the built-in judge of the last calibration set up has spent, if there is one.
    pub(crate) fn judge_spent(&self) -> Option<revcal_judge::JudgeUsage> {
        let judge = self.llm_judge.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        judge.as_ref().map(|judge| judge.spent())
    }

    /// What shards of one suite run must agree on besides the gates: the reviewer, the
    /// judge and every limit that can change an outcome.
    pub(crate) fn settings(&self) -> serde_json::Value {
        let flags = self.flags;
        let judge = match &self.judge {
            JudgeChoice::Command(command) => serde_json::json!({"command": command}),
            JudgeChoice::Llm(config) => serde_json::json!({
                "provider": config.provider().to_string(),
                "model": config.model(),
                "baseUrl": config.base_url(),
            }),
            JudgeChoice::None => serde_json::Value::Null,
        };
        let mut settings = serde_json::json!({
            "reviewCmd": self.review_cmd,
            "judge": judge,
            "minPlants": flags.min_plants,
            "okExitCodes": flags.ok_exit_codes.0,
            "buildCmd": flags.build_cmd,
            "reviewTimeout": flags.review_timeout,
            "reproTimeout": flags.repro_timeout,
            "reproMemory": flags.repro_memory,
            "sandboxRepro": !flags.unsandboxed_repro,
            "maxJudgeCalls": flags.judge.max_judge_calls,
            "profile": if flags.realistic { "realistic" } else { "default" },
        });
        // Only when changed, so that shards written before these limits existed read as they did.
        if let Some(map) = settings.as_object_mut() {
            if flags.preexisting_filter || flags.no_preexisting_filter {
                map.insert("preexistingFilter".into(), serde_json::json!(flags.preexisting_filter));
            }
            let defaults = revcal_calibrate::CheckoutLimits::default();
            if flags.max_file_size != defaults.max_file_bytes >> 20 {
                map.insert("maxFileSize".into(), serde_json::json!(flags.max_file_size));
            }
            if flags.max_checkout_size != defaults.max_checkout_bytes >> 20 {
                map.insert("maxCheckoutSize".into(), serde_json::json!(flags.max_checkout_size));
            }
        }
        // Only when given, so that shards written without the flag read as they did.
        if let (false, Some(map)) = (flags.reviewer_env.is_empty(), settings.as_object_mut()) {
            map.insert("reviewerEnv".into(), serde_json::json!(flags.reviewer_env));
        }
        // Only with --reviewer, so that shards of a reviewer command read as they did.
        if let (Some(builtin), Some(map)) = (&self.builtin, settings.as_object_mut()) {
            map.insert("reviewer".into(), builtin.settings());
            map.insert("maxReviewCalls".into(), serde_json::json!(flags.max_review_calls));
            map.insert("maxReviewFindings".into(), serde_json::json!(flags.max_review_findings));
        }
        settings
    }

    /// The gates.
    pub(crate) fn gates(&self) -> revcal_calibrate::Gates {
        revcal_calibrate::Gates { min_recall: self.flags.min_recall, min_precision: self.flags.min_precision }
    }
}

/// Writes the JUnit and HTML files and prints the summary and (with --json) the JSON report.
pub(crate) fn print_report(
    flags: &ReportFlags,
    report: &Report,
    style: &Style,
    err_style: &Style,
) -> anyhow::Result<()> {
    write_reports(flags, report)?;
    let summary = render_human(report, if flags.json { colour(err_style) } else { colour(style) });
    if flags.json {
        eprint!("{summary}");
        let mut text = serde_json::to_string_pretty(report).context("cannot serialise the report")?;
        text.push('\n');
        emit(&text)?;
    } else {
        let mut text = String::new();
        outln!(text, "{}", summary.trim_end());
        emit(&text)?;
    }
    Ok(())
}

fn write_reports(flags: &ReportFlags, report: &Report) -> anyhow::Result<()> {
    if let Some(path) = &flags.junit {
        crate::output::write(path, &render_junit(report))
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    if let Some(path) = &flags.html {
        crate::output::write(path, &render_html(report))
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(())
}

/// The stdout style, or none when stderr is not a terminal.
pub(crate) fn stderr_style(style: &Style) -> Style {
    use std::io::IsTerminal;
    if std::io::stderr().is_terminal() { *style } else { Style::for_stdout(crate::args::ColorChoice::Never) }
}

/// Whether `style` paints (the report renderers take a plain flag).
fn colour(style: &Style) -> bool {
    !style.bold("").is_empty()
}

#[cfg(test)]
mod tests {
    use revcal_calibrate::WITHHELD_VARIABLES;
    use revcal_judge::{MODEL_VARIABLE, PROVIDER_VARIABLE, Provider};

    #[test]
    fn every_variable_revcal_reads_a_provider_judge_or_ledger_from_is_withheld() {
        let mut read: Vec<&str> = vec![PROVIDER_VARIABLE, MODEL_VARIABLE];
        for provider in Provider::ALL {
            read.extend(provider.key_variables());
            read.push(provider.base_url_variable());
        }
        read.extend(crate::elo::LEDGER_VARIABLES);
        for variable in read {
            assert!(WITHHELD_VARIABLES.contains(&variable), "{variable} reaches the reviewer");
        }
    }

    #[test]
    fn calibrate_help_names_every_withheld_variable() {
        let mut command = crate::command();
        let help = command
            .find_subcommand_mut("calibrate")
            .expect("the calibrate command")
            .render_long_help()
            .to_string();
        for variable in WITHHELD_VARIABLES {
            assert!(help.contains(variable), "--help does not name {variable}");
        }
    }

    #[test]
    fn a_variable_to_pass_on_is_a_name() {
        assert_eq!(super::variable_name("OPENAI_API_KEY"), Ok("OPENAI_API_KEY".to_owned()));
        assert_eq!(super::variable_name("_x1"), Ok("_x1".to_owned()));
        for bad in ["", "1ABC", "A=B", "A B", "A-B"] {
            assert!(super::variable_name(bad).is_err(), "{bad:?}");
        }
    }
}
