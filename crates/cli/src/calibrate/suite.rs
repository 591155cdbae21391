//! `revcal calibrate suite` and `revcal calibrate merge`: one reviewer over many commits,
//! spread over machines by shards and merged into the report the unsharded run prints.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, Subcommand};
use revcal_calibrate::Report;
use revcal_suite::{Shard, ShardResult, Suite, SuiteEvent, merge, run_units, suite_report};

use super::{
    RecordFlags, Recorder, ReportFlags, Reviewer, RunFlags, finish_report, read_baseline, report_failure,
};
use crate::exit::{CALIBRATE_ERROR, CALIBRATE_GATE_FAIL, CALIBRATE_PASS};
use crate::style::Style;

const SUITE_HELP: &str = "\
A suite file lists the entries (docs/suites.md#the-suite-file):

  defaults: {plants: 8, trials: 3, clean_rounds: 5}
  entries:
    - repo: ../calc            # a repository (relative to the suite file) or a URL
      commit: HEAD~1           # default HEAD
    - {repo: ../web, plants_file: bugs.yaml, trials: 1}

Each entry x trial is a work unit, run in a fresh checkout of the entry's commit (a shared
clone in a temporary directory: your work tree and repository are never touched). The report
pools every unit: recall per category and per entry, an interval over plants, precision, and
with clean_rounds the false-alarm rate; --record-to records it in a reputation ledger.

Shards (1-based: --shard 1/3 is the first of three) run a deterministic slice of the units
and write it with --out; `revcal calibrate merge` checks that the shards make up the suite
and prints exactly the report the unsharded run prints.

Examples:
  revcal calibrate suite suite.yaml --review-cmd ./review.sh --scorer repro
  revcal calibrate suite suite.yaml --review-cmd ./review.sh --shard 2/3 --out shard-2.json
  revcal calibrate merge shard-*.json --html report.html --baseline last.json";

const MERGE_HELP: &str = "\
Refuses shards of another suite (the suite file or a plants file changed), of other settings
(reviewer command, scorer, judge) or of another revcal, a shard given twice, a missing shard,
a shard file that does not hold exactly its units, and a unit whose report contradicts its own
plant records. Every figure is recomputed from the units' records. The gates are merge's own
flags (--min-recall, --min-precision, --regression-alpha, with a run's defaults): shards run
with other gates are refused. --suite FILE recomputes the suite's hash; without it, the shard
files are trusted to say which suite they ran (keep them as artifacts of the same CI run).
The report and the exit code are those of the unsharded run: 0 pass, 2 gate failed (or a
significant drop against --baseline), 1 a unit failed or the shards do not fit.

Example:
  revcal calibrate merge shard-1.json shard-2.json shard-3.json --suite suite.yaml --json";

/// `revcal calibrate suite` and `merge`.
#[derive(Debug, Subcommand)]
pub(crate) enum SuiteAction {
    /// Calibrate one reviewer on every entry of a suite file (many commits, repositories,
    /// trials), or on one shard of it.
    #[command(after_help = crate::exit::with_table(SUITE_HELP, crate::exit::CALIBRATE_TABLE))]
    Suite(Box<SuiteArgs>),
    /// Merge the shard results of a suite into the report the unsharded run prints.
    #[command(after_help = crate::exit::with_table(MERGE_HELP, crate::exit::CALIBRATE_TABLE))]
    Merge(Box<MergeArgs>),
}

/// Arguments of `revcal calibrate suite`.
#[derive(Debug, Args)]
pub(crate) struct SuiteArgs {
    /// The suite file (YAML or JSON).
    #[arg(value_name = "SUITE.yaml")]
    suite: PathBuf,
    /// Reviewer shell command, run in each entry's checkout; `{base}` is replaced by the
    /// base commit (first parent).
    #[arg(long, value_name = "CMD", required_unless_present = "reviewer", conflicts_with = "reviewer")]
    review_cmd: Option<String>,
    /// Run only shard K of N (counted from 1: 1/3 is the first of three); needs --out.
    #[arg(long, value_name = "K/N", value_parser = clap::value_parser!(Shard))]
    shard: Option<Shard>,
    /// Write the units' results to FILE for `revcal calibrate merge` (needed with --shard;
    /// without it, the whole suite as its only shard).
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Where repositories given by URL are cloned once and reused
    /// [default: $XDG_CACHE_HOME/revcal/repos or ~/.cache/revcal/repos].
    #[arg(long, value_name = "DIR")]
    repos_dir: Option<PathBuf>,
    #[command(flatten)]
    run: RunFlags,
    #[command(flatten)]
    report: ReportFlags,
    #[command(flatten)]
    record: RecordFlags,
}

/// Arguments of `revcal calibrate merge`.
#[derive(Debug, Args)]
pub(crate) struct MergeArgs {
    /// Shard result files (`calibrate suite --shard K/N --out FILE`), every shard once.
    #[arg(value_name = "SHARD.json", required = true)]
    files: Vec<PathBuf>,
    /// Recall gate; shards run with another are refused.
    #[arg(long, value_name = "F", default_value_t = super::DEFAULT_MIN_RECALL)]
    min_recall: f64,
    /// Precision gate (unset: precision does not gate); shards run with another are refused.
    #[arg(long, value_name = "F")]
    min_precision: Option<f64>,
    /// The suite file the shards ran: its hash (over the file and its plants files) is
    /// recomputed, and shards of another (or a forged `suiteHash`) are refused. Without it
    /// the shard files are trusted to say which suite they ran.
    #[arg(long, value_name = "SUITE.yaml")]
    suite: Option<PathBuf>,
    #[command(flatten)]
    report: ReportFlags,
    #[command(flatten)]
    record: RecordFlags,
}

/// Runs `calibrate suite` or `calibrate merge`; errors exit 1 (or 128+N after a signal).
pub(crate) fn run(action: SuiteAction, style: &Style, err_style: &Style) -> ExitCode {
    match action {
        SuiteAction::Suite(args) => {
            report_failure(suite(&args, style, err_style), args.report.json, err_style)
        }
        SuiteAction::Merge(args) => {
            report_failure(merge_shards(&args, style, err_style), args.report.json, err_style)
        }
    }
}

/// The user's cache directory for cloned repositories.
fn default_repos_dir(suite: &Path) -> PathBuf {
    let env = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    env("XDG_CACHE_HOME")
        .or_else(|| env("HOME").map(|home| home.join(".cache")))
        .map(|base| base.join("revcal").join("repos"))
        .unwrap_or_else(|| suite.parent().unwrap_or(Path::new(".")).join(".revcal-repos"))
}

fn suite(args: &SuiteArgs, style: &Style, err_style: &Style) -> anyhow::Result<ExitCode> {
    if args.shard.is_some() {
        if args.out.is_none() {
            anyhow::bail!(
                "--shard runs part of the suite and writes its results for `revcal calibrate merge`: give --out FILE"
            );
        }
        let flags = &args.report;
        if flags.json
            || flags.junit.is_some()
            || flags.html.is_some()
            || flags.baseline.is_some()
            || flags.save_baseline.is_some()
        {
            anyhow::bail!(
                "a shard's report would be partial: give --json, --junit, --html, --baseline and --save-baseline to `revcal calibrate merge`"
            );
        }
        if args.record.record_to.is_some() {
            anyhow::bail!("a shard is part of a calibration: give --record-to to `revcal calibrate merge`");
        }
    }
    let baseline = read_baseline(&args.report)?;
    let recorder = Recorder::load(&args.record, crate::elo::authority::Exposure::ReviewersRun)?;
    let suite = Suite::read(&args.suite)?;
    let reviewer = Reviewer::new(args.review_cmd.as_deref().unwrap_or_default(), &args.run)?;
    let shard = args.shard.unwrap_or(Shard::WHOLE);
    let units = shard.select(&suite.units());
    let all = suite.units().len();
    if args.shard.is_some() {
        eprintln!(
            "suite {}: {} entries, {all} units; shard {shard} runs {} of them",
            args.suite.display(),
            suite.entries.len(),
            units.len()
        );
    } else {
        eprintln!("suite {}: {} entries, {all} units", args.suite.display(), suite.entries.len());
    }
    let repos_dir = args.repos_dir.clone().unwrap_or_else(|| default_repos_dir(&args.suite));
    let quiet = args.run.quiet;
    let mut on_event = |event: SuiteEvent| match event {
        SuiteEvent::UnitStarted { number, of, entry, trial } if !quiet => {
            eprintln!("unit {number}/{of}: {entry}, trial {trial}");
        }
        SuiteEvent::UnitFailed { entry, trial, error } => {
            eprintln!("{}: {entry}, trial {trial}: {error}", err_style.error("unit failed"));
        }
        _ => {}
    };
    let configure = || reviewer.calibration();
    let results = run_units(&suite, &units, &repos_dir, &configure, &mut on_event)?;
    let failed = results.iter().filter(|unit| unit.error.is_some()).count();

    if let Some(out) = &args.out {
        let mut result = ShardResult::new(
            &suite,
            shard,
            reviewer.settings(),
            reviewer.gates(),
            reviewer.scorer,
            results.clone(),
        );
        result.regression_alpha = Some(args.report.regression_alpha);
        write_atomically(out, &result)?;
        if args.shard.is_some() {
            eprintln!(
                "shard {shard}: {} unit{}, {failed} failed; written to {} (merge the {} shards with `revcal calibrate merge`)",
                results.len(),
                crate::output::plural(results.len()),
                out.display(),
                shard.count
            );
            return Ok(ExitCode::from(if failed > 0 { CALIBRATE_ERROR } else { CALIBRATE_PASS }));
        }
    }
    let report = suite_report(&suite, &results, reviewer.gates(), reviewer.scorer);
    conclude(&args.report, report, baseline.as_ref(), recorder.as_ref(), style, err_style)
}

/// Prints the pooled report and chooses the exit code: 1 when a unit failed (its plants are
/// not counted, so the numbers are not the suite's; nothing is recorded), else the gate's,
/// once `recorder` (--record-to) has recorded the report (a refusal exits 1).
fn conclude(
    flags: &ReportFlags,
    report: Report,
    baseline: Option<&Report>,
    recorder: Option<&Recorder>,
    style: &Style,
    err_style: &Style,
) -> anyhow::Result<ExitCode> {
    let report = finish_report(flags, report, baseline, style, err_style)?;
    let failed = report.suite.as_ref().map_or(0, |suite| suite.unit_errors.len());
    if failed > 0 {
        eprintln!(
            "{}: {failed} unit(s) failed (listed in the report under suite.unitErrors); their plants are not counted, so the numbers above are not the whole suite's",
            err_style.error("error")
        );
        if recorder.is_some() {
            eprintln!(
                "{}: the calibration was not recorded (--record-to): units failed",
                err_style.error("error")
            );
        }
        return Ok(ExitCode::from(CALIBRATE_ERROR));
    }
    if let Some(recorder) = recorder
        && !recorder.record(flags, &report, err_style)?
    {
        return Ok(ExitCode::from(CALIBRATE_ERROR));
    }
    Ok(ExitCode::from(if report.gate_pass { CALIBRATE_PASS } else { CALIBRATE_GATE_FAIL }))
}

/// Writes `value` as JSON to `path` through a temporary file beside it, so that a killed run
/// leaves no half-written result for merge to trip on.
fn write_atomically(path: &Path, value: &impl serde::Serialize) -> anyhow::Result<()> {
    let mut text = serde_json::to_string_pretty(value).context("cannot serialise the shard result")?;
    text.push('\n');
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let mut file =
        tempfile::NamedTempFile::new_in(dir).with_context(|| format!("cannot write in {}", dir.display()))?;
    // A shard file is stored (a CI artifact): unit errors hold what reviewers said.
    std::io::Write::write_all(&mut file, crate::secrets::redact(&text).as_bytes())
        .with_context(|| format!("cannot write {}", path.display()))?;
    file.persist(path).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

fn merge_shards(args: &MergeArgs, style: &Style, err_style: &Style) -> anyhow::Result<ExitCode> {
    for (name, value) in [("--min-recall", Some(args.min_recall)), ("--min-precision", args.min_precision)] {
        if let Some(value) = value.filter(|v| !(0.0..=1.0).contains(v)) {
            anyhow::bail!("{name} must be between 0 and 1, got {value}");
        }
    }
    let baseline = read_baseline(&args.report)?;
    // Merging runs no reviewer: the authority's key may come from a file.
    let recorder = Recorder::load(&args.record, crate::elo::authority::Exposure::NoReviewer)?;
    let suite = args.suite.as_deref().map(Suite::read).transpose()?;
    let mut shards = Vec::with_capacity(args.files.len());
    for path in &args.files {
        shards.push((path.clone(), ShardResult::read(path)?));
    }
    let merged = merge(shards)?;
    let gates = revcal_calibrate::Gates { min_recall: args.min_recall, min_precision: args.min_precision };
    merged.require_gates(gates, args.report.regression_alpha)?;
    if let Some(suite) = &suite {
        merged.require_suite(suite)?;
    }
    if merged.revcal_version != env!("CARGO_PKG_VERSION") {
        eprintln!(
            "{}: the shards were run by revcal {}; this is {}",
            err_style.warning("warning"),
            merged.revcal_version,
            env!("CARGO_PKG_VERSION")
        );
    }
    conclude(&args.report, merged.report(), baseline.as_ref(), recorder.as_ref(), style, err_style)
}
