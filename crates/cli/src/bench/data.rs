//! `revcal bench generate` and `revcal bench verify`: the benchmark's generated files from its
//! sources, and every bug's witness checked again on a clean clone.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use revcal_bench::{Benchmark, BugCheck, Generated, GitHistory, Manifest, Sources, Verified, generate};
use revcal_calibrate::{BuildCheck, Calibration};
use revcal_suite::SuiteEvent;

use super::{BenchFlags, ReposFlags, locate};
use crate::exit::{CALIBRATE_GATE_FAIL, CALIBRATE_PASS};
use crate::style::Style;

/// Arguments of `revcal bench generate`.
#[derive(Debug, Args)]
pub(crate) struct GenerateArgs {
    #[command(flatten)]
    pub(crate) bench: BenchFlags,
    #[command(flatten)]
    pub(crate) repos: ReposFlags,
    /// Write nothing: exit 2 when suite.yaml or manifest.yaml is not what generation gives
    /// (the sources changed since), 0 when both are.
    #[arg(long)]
    pub(crate) check: bool,
}

/// Arguments of `revcal bench verify`.
#[derive(Debug, Args)]
pub(crate) struct VerifyArgs {
    #[command(flatten)]
    pub(crate) bench: BenchFlags,
    #[command(flatten)]
    pub(crate) repos: ReposFlags,
    /// Only the repositories of this language (repeatable, or comma-separated).
    #[arg(long, value_name = "LANG", value_delimiter = ',')]
    pub(crate) language: Vec<String>,
    /// Generate suite.yaml and manifest.yaml from the sources first, then record today's date
    /// and this revcal's version in the manifest for every bug that reproduces.
    #[arg(long)]
    pub(crate) write: bool,
    /// Seconds a repository's setup command may run (environments not made yet are made
    /// first).
    #[arg(long, value_name = "SECS", default_value_t = 1800)]
    pub(crate) setup_timeout: u64,
    /// Seconds before a witness or build command is killed (with the bug applied: five times
    /// its time at the target, at least 20 s).
    #[arg(long, value_name = "SECS", default_value_t = 300)]
    pub(crate) repro_timeout: u64,
    /// MiB of resident memory a witness's process group may use (0: no cap).
    #[arg(long, value_name = "MIB", default_value_t = revcal_calibrate::DEFAULT_REPRO_MEMORY >> 20)]
    pub(crate) repro_memory: u64,
    /// Repositories checked at once [default: the number of cores].
    #[arg(long, short = 'j', value_name = "N")]
    pub(crate) jobs: Option<usize>,
    /// No progress lines.
    #[arg(long, short)]
    pub(crate) quiet: bool,
}

/// Generates the files of the benchmark in `dir` (`stamps`: verifications to record, by bug
/// id), keeping what the manifest there says of the commits it knows.
fn generated(dir: &Path, repos_dir: &Path, stamps: &BTreeMap<String, Verified>) -> anyhow::Result<Generated> {
    let sources = Sources::read(dir)?;
    if sources.repositories.is_empty() {
        anyhow::bail!("{} holds no repository (repos/*.yaml)", dir.join("repos").display());
    }
    let manifest_path = dir.join("manifest.yaml");
    let previous = if manifest_path.is_file() { Some(Manifest::read(&manifest_path)?) } else { None };
    let name = dir.file_name().and_then(|name| name.to_str()).unwrap_or("standard");
    let mut history = GitHistory::new(repos_dir);
    Ok(generate(name, &sources, previous.as_ref(), &mut history, stamps)?)
}

/// Writes the generated files into `dir` and says what the benchmark holds.
fn write_generated(dir: &Path, generated: &Generated) -> anyhow::Result<()> {
    for (name, text) in [("suite.yaml", &generated.suite), ("manifest.yaml", &generated.manifest)] {
        let path = dir.join(name);
        std::fs::write(&path, text)
            .map_err(|error| anyhow::anyhow!("cannot write {}: {error}", path.display()))?;
    }
    // What was written must read back as a benchmark.
    Benchmark::open(dir)?;
    let manifest = &generated.record;
    let mut per_language: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for repo in &manifest.repositories {
        let count = per_language.entry(repo.language.as_str()).or_default();
        count.0 += 1;
        count.1 += repo.bugs;
    }
    let languages: Vec<String> = per_language
        .iter()
        .map(|(language, (repos, bugs))| format!("{language} {bugs} bugs in {repos}"))
        .collect();
    let verified = manifest.bugs.iter().filter(|bug| bug.verified.is_some()).count();
    eprintln!(
        "wrote {} and {}: {} repositories, {} bugs ({verified} verified), {} languages ({})",
        dir.join("suite.yaml").display(),
        dir.join("manifest.yaml").display(),
        manifest.repositories.len(),
        manifest.bugs.len(),
        per_language.len(),
        languages.join(", ")
    );
    Ok(())
}

/// Runs `revcal bench generate`.
pub(crate) fn generate_files(args: &GenerateArgs) -> anyhow::Result<ExitCode> {
    let dir = locate::writable_bench_dir(args.bench.suite.as_deref())?;
    let repos_dir = locate::repos_dir(args.repos.repos_dir.as_deref(), &dir);
    let generated = generated(&dir, &repos_dir, &BTreeMap::new())?;
    if args.check {
        let stale: Vec<&str> = [("suite.yaml", &generated.suite), ("manifest.yaml", &generated.manifest)]
            .into_iter()
            .filter(|(name, text)| {
                std::fs::read_to_string(dir.join(name)).ok().as_deref() != Some(text.as_str())
            })
            .map(|(name, _)| name)
            .collect();
        if stale.is_empty() {
            eprintln!("{}: suite.yaml and manifest.yaml are current", dir.display());
            return Ok(ExitCode::from(CALIBRATE_PASS));
        }
        eprintln!(
            "{}: {} not what `revcal bench generate` writes from repos/ and bugs/: generate again and commit the result",
            dir.display(),
            stale.join(" and ")
        );
        return Ok(ExitCode::from(CALIBRATE_GATE_FAIL));
    }
    write_generated(&dir, &generated)?;
    Ok(ExitCode::from(CALIBRATE_PASS))
}

/// Runs `revcal bench verify`.
pub(crate) fn verify(args: &VerifyArgs, err_style: &Style) -> anyhow::Result<ExitCode> {
    let envs = locate::envs_dir();
    // Without --write, the benchmark may be the embedded one: its temporary directory lives
    // as long as `_found`.
    let (bench, _found) = if args.write {
        let dir = locate::writable_bench_dir(args.bench.suite.as_deref())?;
        (dir, None)
    } else {
        let found = locate::bench_dir(args.bench.suite.as_deref())?;
        (found.path.clone(), Some(found))
    };
    locate::export(&envs, Some(&bench));
    let repos_dir = locate::repos_dir(args.repos.repos_dir.as_deref(), &bench);
    if args.write {
        // The files to verify are those of today's sources.
        write_generated(&bench, &generated(&bench, &repos_dir, &BTreeMap::new())?)?;
    }
    let benchmark = Benchmark::open(&bench)?;
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

    let jobs =
        args.jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from)).max(1);
    let base = || {
        Calibration::builder()
            .jobs(jobs)
            .repro_timeout(Duration::from_secs(args.repro_timeout))
            .repro_memory((args.repro_memory > 0).then(|| args.repro_memory.saturating_mul(1 << 20)))
            .build_check(BuildCheck::Auto)
            .on_progress(crate::calibrate::progress_bar(args.quiet))
    };
    let quiet = args.quiet;
    let mut on_event = |event: SuiteEvent| match event {
        SuiteEvent::UnitStarted { number, of, entry, .. } if !quiet => {
            eprintln!("repository {number}/{of}: {entry}");
        }
        SuiteEvent::UnitFailed { entry, error, .. } => {
            eprintln!("{}: {entry}: {error}", err_style.error("check failed"));
        }
        _ => {}
    };
    let checks = revcal_bench::verify(&benchmark, &suite, &repos_dir, &base, &mut on_event)?;
    report(&checks, err_style);
    let failed = checks.iter().filter(|check| !check.reproduces).count();
    if args.write {
        let stamp =
            Verified { date: revcal_bench::date::today(), revcal: env!("CARGO_PKG_VERSION").to_owned() };
        let stamps: BTreeMap<String, Verified> = checks
            .iter()
            .filter(|check| check.reproduces)
            .map(|check| (check.id.clone(), stamp.clone()))
            .collect();
        write_generated(&bench, &generated(&bench, &repos_dir, &stamps)?)?;
    }
    Ok(ExitCode::from(if failed > 0 { CALIBRATE_GATE_FAIL } else { CALIBRATE_PASS }))
}

/// Lists the bugs that no longer reproduce, and the count of those that do.
fn report(checks: &[BugCheck], err_style: &Style) {
    for check in checks.iter().filter(|check| !check.reproduces) {
        eprintln!(
            "{} {} ({}): {}",
            err_style.error("does not reproduce:"),
            check.id,
            check.repository,
            check.reason.as_deref().unwrap_or("no reason given")
        );
    }
    let reproduce = checks.iter().filter(|check| check.reproduces).count();
    let mut by_repository: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for check in checks {
        let count = by_repository.entry(check.repository.as_str()).or_default();
        count.0 += usize::from(check.reproduces);
        count.1 += 1;
    }
    let repositories: Vec<String> =
        by_repository.iter().map(|(name, (good, all))| format!("{name} {good}/{all}")).collect();
    eprintln!(
        "{reproduce} of {} bugs reproduce (their witness passes at the target and fails with the bug): {}",
        checks.len(),
        repositories.join(", ")
    );
}
