//! `revcal judge check|calibrate`: try the configured LLM judge, and measure it against the
//! labelled cases shipped with revcal. Also the judge flags `revcal calibrate` shares.

mod rubric;
mod select;

pub(crate) use rubric::{RubricCalibrateArgs, run as rubric_calibrate};

/// The largest judge-cases file `revcal judge calibrate --cases` reads.
const MAX_CASES_FILE_BYTES: u64 = 16 << 20;

pub(crate) use select::{JudgeFlags, ProviderArg, SETUP_HINT};

use crate::output::{emit, outln};
use crate::style::Style;
use anyhow::Context;
use clap::{Args, Subcommand};
use revcal_judge::{
    CommandJudge, Judge, JudgeCalibration, JudgeCase, calibrate_judge, parse_judge_cases, shipped_judge_cases,
};
use std::path::PathBuf;
use std::process::ExitCode;

/// `revcal judge`: operational or usage error (no judge, the provider failed).
const JUDGE_ERROR: u8 = 1;
/// `revcal judge calibrate`: the judge is below the bar.
const JUDGE_BELOW_BAR: u8 = 2;

/// Arguments of `revcal judge`.
#[derive(Debug, Args)]
pub(crate) struct JudgeArgs {
    #[command(subcommand)]
    command: JudgeCommand,
}

#[derive(Debug, Subcommand)]
enum JudgeCommand {
    /// One cheap call to the configured judge: prints provider, model, endpoint and latency.
    #[command(
        after_help = "Exit status:\n  0  the judge answered\n  1  no judge is configured, or the call failed\n  2  usage error"
    )]
    Check {
        #[command(flatten)]
        judge: JudgeFlags,
    },
    /// Run the configured judge over a labelled set of (planted defect, finding, expected
    /// match) cases and print its agreement, false-match and false-miss rates.
    ///
    /// The set shipped with revcal covers every bug category in Rust, JavaScript and Python,
    /// with echoes of the changed line, right-location-wrong-defect findings, vague findings,
    /// prompt injections in the finding and in the code, and correct findings in plain words.
    #[command(after_help = crate::exit::with_table(
        "Examples:\n  revcal judge calibrate\n  OPENAI_BASE_URL=http://localhost:11434/v1 REVCAL_JUDGE_MODEL=qwen2.5-coder:14b revcal judge calibrate\n  revcal judge calibrate --judge-cmd ./judge.sh --json",
        crate::exit::JUDGE_TABLE,
    ))]
    Calibrate(CalibrateJudgeArgs),
}

/// Arguments of `revcal judge calibrate`.
#[derive(Debug, Args)]
struct CalibrateJudgeArgs {
    /// A labelled set (YAML or JSON list of cases) instead of the one shipped with revcal.
    #[arg(long, value_name = "FILE")]
    cases: Option<PathBuf>,
    /// The lowest agreement that passes.
    #[arg(long, value_name = "F", default_value_t = 0.9)]
    min_agreement: f64,
    /// The highest false-match rate that passes (a false match inflates recall).
    #[arg(long, value_name = "F", default_value_t = 0.05)]
    max_false_match: f64,
    /// An external judge instead of the built-in one (the --judge-cmd protocol).
    #[arg(long, value_name = "CMD", conflicts_with_all = ["judge_provider", "judge_model"])]
    judge_cmd: Option<String>,
    /// Print the measurement as JSON on stdout.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    judge: JudgeFlags,
}

/// Runs `revcal judge ...`.
pub(crate) fn run(args: JudgeArgs, style: &Style) -> anyhow::Result<ExitCode> {
    match args.command {
        JudgeCommand::Check { judge } => check(&judge, style),
        JudgeCommand::Calibrate(args) => calibrate(&args, style),
    }
}

fn check(flags: &JudgeFlags, style: &Style) -> anyhow::Result<ExitCode> {
    let Some(config) = flags.config()? else {
        eprintln!("{}: no LLM judge is configured", style.error("error"));
        eprintln!("{}: {SETUP_HINT}", style.bold("hint"));
        return Ok(ExitCode::from(JUDGE_ERROR));
    };
    let (provider, model, base) =
        (config.provider(), config.model().to_owned(), config.base_url().to_owned());
    let judge = flags.judge(config);
    match judge.check() {
        Ok(latency) => {
            let spent = judge.spent();
            let mut text = String::new();
            outln!(text, "{} {provider} {model}", style.success("ok"));
            outln!(text, "  endpoint  {base}");
            outln!(text, "  latency   {} ms", latency.as_millis());
            outln!(text, "  tokens    {} input / {} output", spent.input_tokens, spent.output_tokens);
            emit(&text)?;
            Ok(ExitCode::SUCCESS)
        }
        Err(error) => {
            eprintln!("{}: {:#}", style.error("error"), anyhow::Error::from(error));
            Ok(ExitCode::from(JUDGE_ERROR))
        }
    }
}

fn calibrate(args: &CalibrateJudgeArgs, style: &Style) -> anyhow::Result<ExitCode> {
    for (name, value) in
        [("--min-agreement", args.min_agreement), ("--max-false-match", args.max_false_match)]
    {
        if !(0.0..=1.0).contains(&value) {
            anyhow::bail!("{name} must be between 0 and 1, got {value}");
        }
    }
    let cases: Vec<JudgeCase> = match &args.cases {
        Some(path) => {
            let text = crate::input::read_text(path, MAX_CASES_FILE_BYTES)?;
            parse_judge_cases(&text)
                .with_context(|| format!("{} is not a list of judge cases", path.display()))?
        }
        None => shipped_judge_cases().context("the shipped judge cases are unreadable")?,
    };
    let judge: Box<dyn Judge> = match &args.judge_cmd {
        Some(command) => Box::new(CommandJudge::new(command.clone())),
        None => match args.judge.config()? {
            Some(config) => Box::new(args.judge.judge(config)),
            None => {
                eprintln!("{}: no LLM judge is configured", style.error("error"));
                eprintln!("{}: {SETUP_HINT}", style.bold("hint"));
                return Ok(ExitCode::from(JUDGE_ERROR));
            }
        },
    };
    eprintln!("judging {} cases with {}", cases.len(), judge.name());
    let measured = match calibrate_judge(judge.as_ref(), &cases, |_| {}) {
        Ok(measured) => measured,
        Err(error) => {
            eprintln!("{}: {:#}", style.error("error"), anyhow::Error::from(error));
            return Ok(ExitCode::from(JUDGE_ERROR));
        }
    };
    let passed = measured.agreement >= args.min_agreement
        && measured.false_match_rate.unwrap_or(0.0) <= args.max_false_match;
    let summary = render(&measured, judge.as_ref(), args, passed, style);
    if args.json {
        eprint!("{summary}");
        let mut text = serde_json::to_string_pretty(&measured).context("cannot serialise the measurement")?;
        text.push('\n');
        emit(&text)?;
    } else {
        emit(&summary)?;
    }
    Ok(ExitCode::from(match (measured.errors, passed) {
        (0, true) => 0,
        (0, false) => JUDGE_BELOW_BAR,
        _ => JUDGE_ERROR,
    }))
}

fn render(
    measured: &JudgeCalibration,
    judge: &dyn Judge,
    args: &CalibrateJudgeArgs,
    passed: bool,
    style: &Style,
) -> String {
    let rate = |r: Option<f64>| r.map_or_else(|| "n/a".to_owned(), |r| format!("{r:.2}"));
    let verdict = if passed && measured.errors == 0 { style.success("PASS") } else { style.error("FAIL") };
    let mut text = String::new();
    outln!(text, "{} {verdict}  judge {}", style.bold("revcal judge calibrate"), judge.name());
    outln!(
        text,
        "  agreement    {:.2}  {}/{} cases  (needs >= {:.2})",
        measured.agreement,
        measured.agreed,
        measured.cases,
        args.min_agreement
    );
    outln!(
        text,
        "  false match  {}  {} non-identifying findings matched  (needs <= {:.2})",
        rate(measured.false_match_rate),
        measured.false_matches,
        args.max_false_match
    );
    outln!(
        text,
        "  false miss   {}  {} correct findings missed",
        rate(measured.false_miss_rate),
        measured.false_misses
    );
    if measured.errors > 0 {
        outln!(text, "  errors       {}  cases without a verdict (not counted as misses)", measured.errors);
    }
    if let Some(usage) = judge.usage() {
        outln!(
            text,
            "  spent        {} calls · {} cache hits · {} input / {} output tokens",
            usage.calls,
            usage.cache_hits,
            usage.input_tokens,
            usage.output_tokens
        );
    }
    outln!(text);
    outln!(text, "  {}", style.bold("kind                 agreed  cases"));
    for (kind, score) in &measured.per_kind {
        outln!(text, "  {kind:<20} {:>6}  {:>5}", score.agreed, score.cases);
    }
    let wrong: Vec<_> = measured.outcomes.iter().filter(|o| !o.agrees()).collect();
    if !wrong.is_empty() {
        outln!(text);
        for outcome in wrong {
            let got = match (outcome.verdict, &outcome.error) {
                (Some(verdict), _) => format!("said {verdict}"),
                (None, Some(error)) => format!("error: {error}"),
                (None, None) => "no verdict".to_owned(),
            };
            outln!(text, "  {}  {}  expected {}, {got}", style.error("wrong"), outcome.id, outcome.expected);
        }
    }
    text
}
