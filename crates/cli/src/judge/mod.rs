//! `revcal judge check|calibrate`: try the configured LLM judge, and measure it against the
//! labelled cases shipped with revcal. Also the judge flags `revcal calibrate` shares.

mod rubric;
mod select;

pub(crate) use rubric::{RubricCalibrateArgs, run as rubric_calibrate};

/// The largest judge-cases file `revcal judge calibrate --cases` reads.
const MAX_CASES_FILE_BYTES: u64 = 16 << 20;

pub(crate) use select::{JudgeFlags, ProviderArg, SETUP_HINT, SETUP_HINT_BUILT_IN, StructuredOutputArg};

use crate::output::{emit, outln};
use crate::style::Style;
use anyhow::Context;
use clap::{Args, Subcommand};
use revcal_calibrate::Progress;
use revcal_judge::{
    CommandJudge, Judge, JudgeCalibration, JudgeCase, calibrate_judge, parse_judge_cases, sample_judge_cases,
    shipped_judge_cases,
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
        "Examples:\n  revcal judge calibrate\n  revcal judge calibrate --sample 12 --seed 1     # a quick look: 12 cases, spread over the kinds\n  OPENAI_BASE_URL=http://localhost:11434/v1 REVCAL_JUDGE_MODEL=qwen2.5-coder:14b revcal judge calibrate\n  revcal judge calibrate --judge-cmd ./judge.sh --json\n\nWhen the --max-judge-calls budget or an error that every further case would meet (a refused key, a\nserver that keeps failing) stops the run, what was measured so far is printed, marked PARTIAL, and\nthe run exits 1.",
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
    /// Ask only N of the cases: a deterministic sample for --seed, spread over the kinds of
    /// case (the report says it is a sample, and of how many).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    sample: Option<u64>,
    /// Seed of the --sample (same seed, same cases).
    #[arg(long, value_name = "S", default_value_t = 0, requires = "sample")]
    seed: u64,
    /// An external judge instead of the built-in one (the --judge-cmd protocol).
    #[arg(long, value_name = "CMD", conflicts_with_all = ["judge_provider", "judge_model", "structured_output"])]
    judge_cmd: Option<String>,
    /// No progress on stderr.
    #[arg(long, short)]
    quiet: bool,
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
        // `judge check` tries the built-in judge only: a --judge-cmd command is tried with
        // `revcal judge calibrate --judge-cmd CMD`.
        eprintln!("{}: {SETUP_HINT_BUILT_IN}", style.bold("hint"));
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
    let all = cases.len();
    let sample = args.sample.map(|n| Sample {
        cases: usize::try_from(n).unwrap_or(usize::MAX).min(all),
        of: all,
        seed: args.seed,
    });
    let cases = match &sample {
        Some(sample) => sample_judge_cases(&cases, sample.cases, sample.seed),
        None => cases,
    };
    let progress = crate::calibrate::progress_bar(args.quiet);
    let of =
        sample.as_ref().map(|s| format!(" (a sample of {} with seed {})", s.of, s.seed)).unwrap_or_default();
    progress(Progress::Stage {
        label: format!("judging {} cases{of} with {}", cases.len(), judge.name()),
        total: Some(cases.len() as u64),
    });
    let measured = calibrate_judge(judge.as_ref(), &cases, |_| progress(Progress::Step));
    progress(Progress::Done);
    let measured = match measured {
        Ok(measured) => measured,
        Err(error) => {
            eprintln!("{}: {:#}", style.error("error"), anyhow::Error::from(error));
            return Ok(ExitCode::from(JUDGE_ERROR));
        }
    };
    let passed = !measured.is_partial()
        && measured.agreement >= args.min_agreement
        && measured.false_match_rate.unwrap_or(0.0) <= args.max_false_match;
    let summary = render(&measured, judge.as_ref(), args, sample.as_ref(), passed, style);
    if let Some(stopped_by) = &measured.stopped_by {
        eprintln!("{}: {stopped_by}", style.error("error"));
    }
    if args.json {
        eprint!("{summary}");
        let mut document = serde_json::to_value(&measured).context("cannot serialise the measurement")?;
        if let Some(object) = document.as_object_mut() {
            if let Some(sample) = &sample {
                object.insert(
                    "sample".into(),
                    serde_json::json!({"cases": sample.cases, "of": sample.of, "seed": sample.seed}),
                );
            }
            // What the judge spent (a --judge-cmd command keeps no count).
            if let Some(usage) = judge.usage() {
                object.insert(
                    "judge".into(),
                    serde_json::to_value(usage).context("cannot serialise the usage")?,
                );
            }
        }
        let mut text = serde_json::to_string_pretty(&document).context("cannot serialise the measurement")?;
        text.push('\n');
        emit(&text)?;
    } else {
        emit(&summary)?;
    }
    Ok(ExitCode::from(match (measured.errors, measured.is_partial(), passed) {
        (0, false, true) => 0,
        (0, false, false) => JUDGE_BELOW_BAR,
        _ => JUDGE_ERROR,
    }))
}

/// The sample `--sample N --seed S` asked for: N of how many cases.
struct Sample {
    cases: usize,
    of: usize,
    seed: u64,
}

fn render(
    measured: &JudgeCalibration,
    judge: &dyn Judge,
    args: &CalibrateJudgeArgs,
    sample: Option<&Sample>,
    passed: bool,
    style: &Style,
) -> String {
    let rate = |r: Option<f64>| r.map_or_else(|| "n/a".to_owned(), |r| format!("{r:.2}"));
    let verdict = if measured.is_partial() {
        style.error("PARTIAL")
    } else if passed && measured.errors == 0 {
        style.success("PASS")
    } else {
        style.error("FAIL")
    };
    let mut text = String::new();
    outln!(text, "{} {verdict}  judge {}", style.bold("revcal judge calibrate"), judge.name());
    if let Some(stopped_by) = &measured.stopped_by {
        outln!(
            text,
            "  partial      the run stopped after {} of {} cases ({stopped_by}); the figures below are of those {} cases only",
            measured.cases,
            measured.cases + measured.unasked,
            measured.cases
        );
    }
    if let Some(sample) = sample {
        outln!(
            text,
            "  sample       {} of {} cases, seed {} (--sample {} --seed {} asks the same ones)",
            sample.cases,
            sample.of,
            sample.seed,
            sample.cases,
            sample.seed
        );
    }
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
