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
    #[command(flatten)]
    merge: MergeFlags,
    /// The suite file the shards ran: its hash (over the file and its plants files) is
    /// recomputed, and shards of another (or a forged `suiteHash`) are refused. Without it
    /// the shard files are trusted to say which suite they ran.
    #[arg(long, value_name = "SUITE.yaml")]
    suite: Option<PathBuf>,
}

/// The shards to merge, the gates and where the report goes: the flags `calibrate merge` and
/// `bench merge` share.
#[derive(Debug, Args)]
pub(crate) struct MergeFlags {
    /// Shard result files (`--shard K/N --out FILE`), every shard once.
    #[arg(value_name = "SHARD.json", required = true)]
    files: Vec<PathBuf>,
    /// Recall gate; shards run with another are refused.
    #[arg(long, value_name = "F", default_value_t = super::DEFAULT_MIN_RECALL)]
    pub(crate) min_recall: f64,
    /// Precision gate (unset: precision does not gate); shards run with another are refused.
    #[arg(long, value_name = "F")]
    min_precision: Option<f64>,
    #[command(flatten)]
    pub(crate) report: ReportFlags,
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
            report_failure(merge_shards(&args, style, err_style), args.merge.report.json, err_style)
        }
    }
}

/// The user's cache directory for cloned repositories.
pub(crate) fn default_repos_dir(suite: &Path) -> PathBuf {
    let env = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    env("XDG_CACHE_HOME")
        .or_else(|| env("HOME").map(|home| home.join(".cache")))
        .map(|base| base.join("revcal").join("repos"))
        .unwrap_or_else(|| suite.parent().unwrap_or(Path::new(".")).join(".revcal-repos"))
}

fn suite(args: &SuiteArgs, style: &Style, err_style: &Style) -> anyhow::Result<ExitCode> {
    let run = SuiteRun {
        review_cmd: args.review_cmd.as_deref(),
        shard: args.shard,
        out: args.out.as_deref(),
        run: &args.run,
        report: &args.report,
        record: &args.record,
        merge_command: "revcal calibrate merge",
    };
    let prepared = run.prepare()?;
    let suite = Suite::read(&args.suite)?;
    let repos_dir = args.repos_dir.clone().unwrap_or_else(|| default_repos_dir(&args.suite));
    run.execute(
        &prepared,
        &suite,
        &args.suite.display().to_string(),
        &repos_dir,
        &|report| report,
        style,
        err_style,
    )
}

/// A run of a suite's units, as `calibrate suite` and `bench standard` make it: the reviewer
/// and how it is scored, which units (a shard) and where their results go.
pub(crate) struct SuiteRun<'a> {
    /// `--review-cmd` (none with `--reviewer`).
    pub(crate) review_cmd: Option<&'a str>,
    /// `--shard K/N`.
    pub(crate) shard: Option<Shard>,
    /// `--out FILE`.
    pub(crate) out: Option<&'a Path>,
    /// How each review is run, scored and gated.
    pub(crate) run: &'a RunFlags,
    /// Where the report goes.
    pub(crate) report: &'a ReportFlags,
    /// `--record-to` and its keys.
    pub(crate) record: &'a RecordFlags,
    /// The command that merges this run's shards (`revcal calibrate merge`).
    pub(crate) merge_command: &'static str,
}

/// What a suite run reads before anything runs: a bad flag, baseline or key costs nothing.
pub(crate) struct Prepared<'a> {
    baseline: Option<Report>,
    recorder: Option<Recorder>,
    reviewer: Reviewer<'a>,
}

impl<'a> SuiteRun<'a> {
    /// Checks the flags a shard refuses, reads the baseline and the keys, and sets the reviewer
    /// up.
    pub(crate) fn prepare(&self) -> anyhow::Result<Prepared<'a>> {
        if self.shard.is_some() {
            if self.out.is_none() {
                anyhow::bail!(
                    "--shard runs part of the suite and writes its results for `{}`: give --out FILE",
                    self.merge_command
                );
            }
            let flags = self.report;
            if flags.json
                || flags.junit.is_some()
                || flags.html.is_some()
                || flags.baseline.is_some()
                || flags.save_baseline.is_some()
            {
                anyhow::bail!(
                    "a shard's report would be partial: give --json, --junit, --html, --baseline and --save-baseline to `{}`",
                    self.merge_command
                );
            }
            if self.record.record_to.is_some() {
                anyhow::bail!(
                    "a shard is part of a calibration: give --record-to to `{}`",
                    self.merge_command
                );
            }
        }
        let baseline = read_baseline(self.report)?;
        let recorder = Recorder::load(self.record, crate::elo::authority::Exposure::ReviewersRun)?;
        let reviewer = Reviewer::new(self.review_cmd.unwrap_or_default(), self.run)?;
        Ok(Prepared { baseline, recorder, reviewer })
    }

    /// Runs the units of `suite` (named `label` in messages) this run selects, writes `--out`,
    /// and, unsharded, prints the pooled report once `annotate` has added to it.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn execute(
        &self,
        prepared: &Prepared<'_>,
        suite: &Suite,
        label: &str,
        repos_dir: &Path,
        annotate: &dyn Fn(Report) -> Report,
        style: &Style,
        err_style: &Style,
    ) -> anyhow::Result<ExitCode> {
        let reviewer = &prepared.reviewer;
        let shard = self.shard.unwrap_or(Shard::WHOLE);
        let units = shard.select(&suite.units());
        let all = suite.units().len();
        if self.shard.is_some() {
            eprintln!(
                "suite {label}: {} entries, {all} units; shard {shard} runs {} of them",
                suite.entries.len(),
                units.len()
            );
        } else {
            eprintln!("suite {label}: {} entries, {all} units", suite.entries.len());
        }
        let quiet = self.run.quiet;
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
        let results = run_units(suite, &units, repos_dir, &configure, &mut on_event)?;
        let failed = results.iter().filter(|unit| unit.error.is_some()).count();

        if let Some(out) = self.out {
            let mut result = ShardResult::new(
                suite,
                shard,
                reviewer.settings(),
                reviewer.gates(),
                reviewer.scorer,
                results.clone(),
            );
            result.regression_alpha = Some(self.report.regression_alpha);
            write_atomically(out, &result)?;
            if self.shard.is_some() {
                eprintln!(
                    "shard {shard}: {} unit{}, {failed} failed; written to {} (merge the {} shards with `{}`)",
                    results.len(),
                    crate::output::plural(results.len()),
                    out.display(),
                    shard.count,
                    self.merge_command
                );
                return Ok(ExitCode::from(if failed > 0 { CALIBRATE_ERROR } else { CALIBRATE_PASS }));
            }
        }
        let report = annotate(suite_report(suite, &results, reviewer.gates(), reviewer.scorer));
        conclude(
            self.report,
            report,
            prepared.baseline.as_ref(),
            prepared.recorder.as_ref(),
            style,
            err_style,
        )
    }
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
    let suite = args.suite.as_deref().map(Suite::read).transpose()?;
    merge_files(&args.merge, suite.as_ref(), &|report| report, style, err_style)
}

/// Merges the shard files of `flags`, checked against `suite` when given, and prints the
/// pooled report once `annotate` has added to it: `calibrate merge` and `bench merge`.
pub(crate) fn merge_files(
    flags: &MergeFlags,
    suite: Option<&Suite>,
    annotate: &dyn Fn(Report) -> Report,
    style: &Style,
    err_style: &Style,
) -> anyhow::Result<ExitCode> {
    for (name, value) in [("--min-recall", Some(flags.min_recall)), ("--min-precision", flags.min_precision)]
    {
        if let Some(value) = value.filter(|v| !(0.0..=1.0).contains(v)) {
            anyhow::bail!("{name} must be between 0 and 1, got {value}");
        }
    }
    let baseline = read_baseline(&flags.report)?;
    // Merging runs no reviewer: the authority's key may come from a file.
    let recorder = Recorder::load(&flags.record, crate::elo::authority::Exposure::NoReviewer)?;
    let mut shards = Vec::with_capacity(flags.files.len());
    for path in &flags.files {
        shards.push((path.clone(), ShardResult::read(path)?));
    }
    let merged = merge(shards)?;
    let gates = revcal_calibrate::Gates { min_recall: flags.min_recall, min_precision: flags.min_precision };
    merged.require_gates(gates, flags.report.regression_alpha)?;
    if let Some(suite) = suite {
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
    conclude(&flags.report, annotate(merged.report()), baseline.as_ref(), recorder.as_ref(), style, err_style)
}
