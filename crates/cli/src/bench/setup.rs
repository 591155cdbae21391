//! `revcal bench setup`, and the set-up `standard` and `verify` do first: each repository's
//! environment directory, made by its `setup` command unless it is there.

use std::path::Path;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Args;
use revcal_bench::{Benchmark, SetupOutcome, set_up};
use revcal_process::SignalWatch;

use super::{BenchFlags, ReposFlags};
use crate::exit::CALIBRATE_PASS;

/// Arguments of `revcal bench setup`.
#[derive(Debug, Args)]
pub(crate) struct SetupArgs {
    #[command(flatten)]
    pub(crate) bench: BenchFlags,
    #[command(flatten)]
    pub(crate) repos: ReposFlags,
    /// Only the repositories of this language (repeatable, or comma-separated).
    #[arg(long, value_name = "LANG", value_delimiter = ',')]
    pub(crate) language: Vec<String>,
    /// Make every environment directory again, also those that are there.
    #[arg(long)]
    pub(crate) force: bool,
    /// Seconds a repository's setup command may run before its process group is killed.
    #[arg(long, value_name = "SECS", default_value_t = 1800)]
    pub(crate) setup_timeout: u64,
}

/// Makes the environment directories of the repositories `names` of `benchmark` under
/// `envs` (`force`: again, also those present), one after the other, saying what each did.
pub(crate) fn ensure(
    benchmark: &Benchmark,
    names: &[String],
    envs: &Path,
    repos_dir: &Path,
    force: bool,
    timeout: Duration,
) -> anyhow::Result<()> {
    let signals = SignalWatch::install()?;
    for name in names {
        let Some(repository) = benchmark.manifest.repository(name) else { continue };
        let started = Instant::now();
        let outcome = set_up(repository, envs, repos_dir, force, timeout, &signals);
        if let Some(signal) = signals.received() {
            return Err(revcal_calibrate::CalibrateError::Interrupted {
                signal,
                name: revcal_process::signal_name(signal),
            }
            .into());
        }
        match outcome? {
            SetupOutcome::Present => {}
            SetupOutcome::Made => eprintln!(
                "environment {}: set up in {:.1} s ({})",
                name,
                started.elapsed().as_secs_f64(),
                envs.join(name).display()
            ),
        }
    }
    Ok(())
}

/// Runs `revcal bench setup`.
pub(crate) fn run(args: &SetupArgs, envs: &Path, bench: &Path, repos_dir: &Path) -> anyhow::Result<ExitCode> {
    let benchmark = Benchmark::open(bench)?;
    let names = benchmark.repositories_in(&args.language)?;
    ensure(&benchmark, &names, envs, repos_dir, args.force, Duration::from_secs(args.setup_timeout))?;
    eprintln!("{} environment(s) ready in {}", names.len(), envs.display());
    Ok(ExitCode::from(CALIBRATE_PASS))
}
