//! `revcal bench standard` and `revcal bench merge`: the benchmark's suite run through the
//! machinery of `calibrate suite` and `calibrate merge` (the same units, shards, pooled report,
//! baseline and ledger), with the benchmark's figures added to the report.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use revcal_bench::{Benchmark, benchmark_figures};
use revcal_calibrate::Report;
use revcal_suite::Shard;

use super::{BenchFlags, ReposFlags, locate};
use crate::calibrate::suite::{MergeFlags, SuiteRun, merge_files};
use crate::calibrate::{RecordFlags, ReportFlags, RunFlags};
use crate::style::Style;

/// `--after DATE`: the date as given and its seconds since the epoch.
#[derive(Debug, Clone)]
pub(crate) struct After {
    text: String,
    seconds: i64,
}

/// Reads `--after`.
fn after_date(text: &str) -> Result<After, String> {
    revcal_bench::date::parse_utc(text).map(|seconds| After { text: text.trim().to_owned(), seconds })
}

/// Arguments of `revcal bench standard`.
#[derive(Debug, Args)]
#[command(mut_arg("min_recall", |arg| arg.default_value("0")))]
pub(crate) struct StandardArgs {
    #[command(flatten)]
    pub(crate) bench: BenchFlags,
    #[command(flatten)]
    pub(crate) repos: ReposFlags,
    /// Only the repositories of this language (repeatable, or comma-separated: python, go):
    /// a suite of its own, whose reports compare only with reports of the same selection.
    #[arg(long, value_name = "LANG", value_delimiter = ',')]
    pub(crate) language: Vec<String>,
    /// Split the real bugs' recall at DATE (YYYY-MM-DD, UTC): the bugs fixed before it, which
    /// a model trained on later code may have seen, and those fixed on or after it, which a
    /// model trained earlier cannot have.
    #[arg(long, value_name = "DATE", value_parser = after_date)]
    pub(crate) after: Option<After>,
    /// Reviewer shell command, run in a scratch checkout of each review's change; `{base}` is
    /// replaced by the base commit (first parent).
    #[arg(long, value_name = "CMD", required_unless_present = "reviewer", conflicts_with = "reviewer")]
    pub(crate) review_cmd: Option<String>,
    /// Run only shard K of N (counted from 1); needs --out. Merge with `revcal bench merge`.
    #[arg(long, value_name = "K/N", value_parser = clap::value_parser!(Shard))]
    pub(crate) shard: Option<Shard>,
    /// Write the units' results to FILE for `revcal bench merge` (needed with --shard).
    #[arg(long, value_name = "FILE")]
    pub(crate) out: Option<PathBuf>,
    /// Seconds a repository's setup command may run (environments not made yet are made
    /// first).
    #[arg(long, value_name = "SECS", default_value_t = 1800)]
    pub(crate) setup_timeout: u64,
    #[command(flatten)]
    pub(crate) run: RunFlags,
    #[command(flatten)]
    pub(crate) report: ReportFlags,
    #[command(flatten)]
    pub(crate) record: RecordFlags,
}

/// Arguments of `revcal bench merge`.
#[derive(Debug, Args)]
#[command(mut_arg("min_recall", |arg| arg.default_value("0")))]
pub(crate) struct MergeArgs {
    #[command(flatten)]
    pub(crate) bench: BenchFlags,
    /// The languages the shards ran (`bench standard --language`).
    #[arg(long, value_name = "LANG", value_delimiter = ',')]
    pub(crate) language: Vec<String>,
    /// Split the real bugs' recall at DATE (YYYY-MM-DD, UTC), as `bench standard --after`.
    #[arg(long, value_name = "DATE", value_parser = after_date)]
    pub(crate) after: Option<After>,
    #[command(flatten)]
    pub(crate) merge: MergeFlags,
}

/// The benchmark's figures added to a suite's report.
fn annotate<'a>(
    benchmark: &'a Benchmark,
    languages: Vec<String>,
    after: Option<&'a After>,
) -> impl Fn(Report) -> Report + 'a {
    move |mut report: Report| {
        let after = after.map(|after| (after.text.as_str(), after.seconds));
        report.benchmark = Some(benchmark_figures(&report, &benchmark.manifest, &languages, after));
        report
    }
}

/// Runs `revcal bench standard`.
pub(crate) fn standard(args: &StandardArgs, style: &Style, err_style: &Style) -> anyhow::Result<ExitCode> {
    let bench = locate::bench_dir(args.bench.suite.as_deref())?;
    let envs = locate::envs_dir();
    locate::export(&envs, Some(&bench.path));
    let run = SuiteRun {
        review_cmd: args.review_cmd.as_deref(),
        shard: args.shard,
        out: args.out.as_deref(),
        run: &args.run,
        report: &args.report,
        record: &args.record,
        merge_command: "revcal bench merge",
    };
    let prepared = run.prepare()?;
    let benchmark = Benchmark::open(&bench.path)?;
    let repos_dir = locate::repos_dir(args.repos.repos_dir.as_deref(), &bench.path);
    let suite = benchmark.suite_for(&args.language, &repos_dir)?;
    let names: Vec<String> = suite.entries.iter().map(|entry| entry.name.clone()).collect();
    super::setup::ensure(
        &benchmark,
        &names,
        &envs,
        &repos_dir,
        false,
        Duration::from_secs(args.setup_timeout),
    )?;
    let annotate = annotate(&benchmark, benchmark.languages_of(&suite), args.after.as_ref());
    let label = format!("{} ({})", benchmark.manifest.name, bench.origin);
    run.execute(&prepared, &suite, &label, &repos_dir, &annotate, style, err_style)
}

/// Runs `revcal bench merge`: the shards are checked against the benchmark's suite (of the
/// same languages).
pub(crate) fn merge(args: &MergeArgs, style: &Style, err_style: &Style) -> anyhow::Result<ExitCode> {
    let bench = locate::bench_dir(args.bench.suite.as_deref())?;
    let benchmark = Benchmark::open(&bench.path)?;
    let suite = benchmark.suite_for(&args.language, &bench.path)?;
    let annotate = annotate(&benchmark, benchmark.languages_of(&suite), args.after.as_ref());
    merge_files(&args.merge, Some(&suite), &annotate, style, err_style)
}
