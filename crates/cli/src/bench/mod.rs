//! `revcal bench`: the standard benchmark for code reviewers (docs/benchmark.md). Real bugs of
//! public repositories and mutants on the same commits, run through the machinery of
//! `calibrate suite`, with recall per language, category, kind and date of fix; a paired
//! comparison of two reports; the repositories' environments; the bugs' witnesses checked
//! again; and the generated suite and manifest.

mod compare;
mod data;
mod locate;
mod run;
mod setup;
mod test_reviewer;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};

use crate::style::Style;

const BENCH_HELP: &str = "\
The standard benchmark: real bugs mined from public repositories, each pinned to the commit its
patch applies to and verified by its witness, with mutants planted on the same commits
(docs/benchmark.md). Every reviewer gets the same bugs, plants and seeds, so two reports compare
bug by bug. The benchmark is the one built into this revcal (suites/standard/ of its source),
or --suite DIR / $REVCAL_BENCH_SUITE; each repository's environment (a virtualenv, node_modules)
is $REVCAL_BENCH_ENVS/<name> [default: ~/.cache/revcal/bench-envs/<name>].

Examples:
  revcal bench standard --review-cmd ./review.sh --scorer judge --json > mine.json
  revcal bench standard --reviewer anthropic:claude-sonnet-4-5 --judge-provider openai --after 2025-01-01
  revcal bench standard --language python --review-cmd 'ruff check --output-format json .' --ok-exit-codes 0,1 --scorer string
  revcal bench standard --review-cmd ./review.sh --shard 2/4 --out shard-2.json
  revcal bench merge shard-*.json --json > mine.json
  revcal bench compare mine.json theirs.json
  revcal bench verify --repos-dir ~/src";

/// `revcal bench`.
#[derive(Debug, Args)]
#[command(after_help = crate::exit::with_table(BENCH_HELP, crate::exit::BENCH_TABLE))]
pub(crate) struct BenchArgs {
    #[command(subcommand)]
    action: BenchAction,
}

/// Which benchmark to read.
#[derive(Debug, Args)]
pub(crate) struct BenchFlags {
    /// The benchmark's directory (suite.yaml, manifest.yaml, repos/, bugs/) [default:
    /// $REVCAL_BENCH_SUITE, else the standard benchmark built into this revcal; generate and
    /// verify --write: suites/standard under the current directory].
    #[arg(long, value_name = "DIR")]
    pub(crate) suite: Option<PathBuf>,
}

/// Where the benchmark's repositories are.
#[derive(Debug, Args)]
pub(crate) struct ReposFlags {
    /// Repositories: a clone of repository NAME may be DIR/NAME (a work tree or a bare
    /// mirror); any other is cloned from its URL into DIR once and reused
    /// [default: $XDG_CACHE_HOME/revcal/repos or ~/.cache/revcal/repos].
    #[arg(long, value_name = "DIR")]
    pub(crate) repos_dir: Option<PathBuf>,
}

/// The subcommands of `revcal bench`.
#[derive(Debug, Subcommand)]
enum BenchAction {
    /// Calibrate a reviewer on the standard benchmark: recall per language, category and kind
    /// with intervals over bugs, precision, false alarms (the same machinery as `calibrate suite`).
    #[command(after_help = crate::exit::BENCH_TABLE)]
    Standard(Box<run::StandardArgs>),
    /// Merge the shard results of `bench standard --shard K/N --out FILE` into its report.
    #[command(after_help = crate::exit::BENCH_TABLE)]
    Merge(Box<run::MergeArgs>),
    /// Compare two reviewers' reports of the benchmark bug by bug: both recalls, the
    /// discordant plants and McNemar's exact p-value.
    #[command(after_help = crate::exit::BENCH_TABLE)]
    Compare(compare::CompareArgs),
    /// Make each repository's environment directory ($REVCAL_BENCH_ENVS/<name>) with its
    /// setup command, in a fresh checkout of its target; skipped when present.
    #[command(after_help = crate::exit::BENCH_TABLE)]
    Setup(setup::SetupArgs),
    /// Check every bug's witness on a clean clone at its target: it must pass there and fail
    /// with the bug; list those that no longer reproduce.
    #[command(after_help = crate::exit::BENCH_TABLE)]
    Verify(Box<data::VerifyArgs>),
    /// Write suite.yaml and manifest.yaml from repos/*.yaml and bugs/*.yaml.
    #[command(after_help = crate::exit::BENCH_TABLE)]
    Generate(data::GenerateArgs),
    /// A repository's own test suite as a reviewer (the benchmark's oracle), run by a
    /// calibration in each review's checkout: `--review-cmd 'revcal bench test-reviewer'`.
    #[command(after_help = crate::exit::BENCH_TABLE)]
    TestReviewer(test_reviewer::TestReviewerArgs),
}

/// Runs `revcal bench`: errors exit 1 (or 128+N after a signal), as calibrate's do.
pub(crate) fn run(args: BenchArgs, style: &Style) -> anyhow::Result<ExitCode> {
    let err_style = crate::calibrate::stderr_style(style);
    let (outcome, json) = match &args.action {
        BenchAction::Standard(args) => (run::standard(args, style, &err_style), args.report.json),
        BenchAction::Merge(args) => (run::merge(args, style, &err_style), args.merge.report.json),
        BenchAction::Compare(args) => (compare::run(args), args.json),
        BenchAction::Setup(args) => {
            let envs = locate::envs_dir();
            locate::export(&envs, None);
            let outcome = locate::bench_dir(args.bench.suite.as_deref()).and_then(|bench| {
                let repos = locate::repos_dir(args.repos.repos_dir.as_deref(), &bench.path);
                setup::run(args, &envs, &bench.path, &repos)
            });
            (outcome, false)
        }
        BenchAction::Verify(args) => (data::verify(args, &err_style), false),
        BenchAction::Generate(args) => (data::generate_files(args), false),
        BenchAction::TestReviewer(args) => (test_reviewer::run(args), false),
    };
    Ok(crate::calibrate::report_failure(outcome, json, &err_style))
}
