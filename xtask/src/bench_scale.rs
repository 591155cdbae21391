//! `cargo xtask bench scale`: what isolation costs on big repositories, side by side in one run.
//!
//! - **babel** (`--babel DIR`, a clone of babel/babel; `--commit`, default `1e5eb959ef`, which
//!   changes `packages/babel-traverse/src/path/family.ts`), 8 plants, the string scorer, a
//!   trivial reviewer (`echo LGTM`), the temporary directory and the checkout cache on the
//!   disk of the scratch directory:
//!   - fresh checkouts (`--no-checkout-cache`: every run writes and removes its checkouts),
//!     a first run (an empty cache) and repeat runs (the cache kept);
//!   - adlc's review-calibration (`--adlc FILE`, its `bin/review-calibration.mjs`), which edits
//!     the work tree in place and restores it, paired with a repeat run: the runs alternate
//!     and the ratio is taken per pair;
//!   - `--jobs 2 --trials 4` against `--jobs 1 --trials 4`, alternating;
//!   - `--baseline FILE`: another revcal binary (an older release), for "today's" first run.
//! - **10,000 files** (generated): a repeat run's overhead against the reviewer alone
//!   (SPEC section 8: under 300 ms).
//! - **A suite of 10 commits** of the generated repository: the whole `calibrate suite` with an
//!   empty cache against one first run.
//!
//! Every report of a kept slot is checked against the report of fresh checkouts (timings
//! aside): they must be identical. The figures are ratios of runs made side by side, so they
//! hold on a busy machine; the wall times move with its load.

use crate::bench_calibrate::{git, release_binary, rust_source, write_tree};
use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Output, Stdio};
use std::time::{Duration, Instant};

const REVIEWER: &str = "echo LGTM";
const BABEL_COMMIT: &str = "1e5eb959ef";
const GENERATED_FILES: usize = 10_000;
const SUITE_COMMITS: usize = 10;

/// The options of `bench scale`.
struct Options {
    babel: Option<PathBuf>,
    adlc: Option<PathBuf>,
    commit: String,
    pairs: usize,
    baseline: Option<PathBuf>,
}

fn options(args: &[&str]) -> Result<Options> {
    let mut options = Options {
        babel: std::env::var_os("REVCAL_BENCH_BABEL").map(PathBuf::from),
        adlc: std::env::var_os("REVCAL_BENCH_ADLC").map(PathBuf::from),
        commit: BABEL_COMMIT.to_owned(),
        pairs: 5,
        baseline: None,
    };
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let mut value = || args.next().copied().with_context(|| format!("{arg} needs a value"));
        match *arg {
            "--babel" => options.babel = Some(PathBuf::from(value()?)),
            "--adlc" => options.adlc = Some(PathBuf::from(value()?)),
            "--commit" => options.commit = value()?.to_owned(),
            "--pairs" => options.pairs = value()?.parse().context("--pairs takes a number")?,
            "--baseline" => options.baseline = Some(PathBuf::from(value()?)),
            other => bail!(
                "unknown option `{other}`: bench scale [--babel DIR] [--adlc FILE] [--commit REV] [--pairs N] [--baseline REVCAL]"
            ),
        }
    }
    Ok(options)
}

/// Runs the benchmark.
pub(crate) fn run(root: &Path, args: &[&str]) -> Result<ExitCode> {
    let options = options(args)?;
    let revcal = release_binary(root)?;
    let scratch = tempfile::Builder::new().prefix("revcal-bench-scale-").tempdir_in(root.join("target"))?;
    let mut met = true;
    match &options.babel {
        Some(babel) => met &= babel_figures(&revcal, babel, &options, scratch.path())?,
        None => println!(
            "babel: skipped (clone https://github.com/babel/babel and give --babel DIR or REVCAL_BENCH_BABEL)"
        ),
    }
    met &= generated_figures(&revcal, scratch.path())?;
    Ok(if met { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

/// A calibration of one repository, with its own temporary directory and cache.
struct Calibrate<'a> {
    revcal: &'a Path,
    repo: &'a Path,
    commit: &'a str,
    tmp: PathBuf,
    cache: PathBuf,
}

impl Calibrate<'_> {
    fn command(&self, extra: &[&str]) -> Command {
        let mut command = Command::new(self.revcal);
        command
            .args(["calibrate", "--review-cmd", REVIEWER, "--scorer", "string", "--plants", "8"])
            .args(["--min-plants", "8", "--min-recall", "0", "--commit", self.commit, "--json", "--quiet"])
            .args(extra)
            .current_dir(self.repo)
            .env("TMPDIR", &self.tmp)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if !extra.contains(&"--no-checkout-cache") {
            command.arg("--checkout-cache").arg(&self.cache);
        }
        command
    }

    /// One run: its wall time and its report without timings.
    fn run(&self, extra: &[&str]) -> Result<(Duration, serde_json::Value)> {
        let started = Instant::now();
        let output = self.command(extra).output().context("cannot run revcal")?;
        let elapsed = started.elapsed();
        Ok((elapsed, checked_report(&output)?))
    }

    fn clear_cache(&self) -> Result<()> {
        match std::fs::remove_dir_all(&self.cache) {
            Err(error) if error.kind() != std::io::ErrorKind::NotFound => Err(error.into()),
            _ => Ok(()),
        }
    }
}

/// The report of a successful run, timings removed.
fn checked_report(output: &Output) -> Result<serde_json::Value> {
    if !output.status.success() {
        bail!(
            "revcal calibrate failed ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).lines().last().unwrap_or_default()
        );
    }
    let mut report: serde_json::Value =
        serde_json::from_slice(&output.stdout).context("revcal printed no JSON report")?;
    strip_timings(&mut report);
    Ok(report)
}

fn strip_timings(value: &mut serde_json::Value) {
    match value {
        serde_json::Value::Object(map) => {
            map.retain(|key, _| !key.to_ascii_lowercase().contains("second") && !key.ends_with("Ms"));
            map.values_mut().for_each(strip_timings);
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(strip_timings),
        _ => {}
    }
}

fn babel_figures(revcal: &Path, babel: &Path, options: &Options, scratch: &Path) -> Result<bool> {
    let commit = resolve(babel, &options.commit)?;
    let tracked = count_tracked(babel, &commit)?;
    println!("babel at {} ({tracked} files), scratch on {}", &commit[..10], scratch.display());
    // revcal reads the clone; adlc edits its work tree, so it gets a clone of its own.
    let adlc_tree = scratch.join("adlc-babel");
    if options.adlc.is_some() {
        let status = Command::new("git")
            .args(["clone", "-q", "--shared", "--no-checkout"])
            .arg(babel)
            .arg(&adlc_tree)
            .status()?;
        if !status.success() {
            bail!("cannot clone {}", babel.display());
        }
        git(&adlc_tree, &["checkout", "-q", "--detach", &commit])?;
    }
    let tmp = scratch.join("tmp");
    std::fs::create_dir_all(&tmp)?;
    let calibrate = Calibrate { revcal, repo: babel, commit: &commit, tmp, cache: scratch.join("cache") };

    // Fresh checkouts, first runs (an empty cache) and repeat runs, alternating.
    let (mut fresh, mut first, mut repeat) = (Vec::new(), Vec::new(), Vec::new());
    let mut expected = None;
    for _ in 0..3 {
        let (elapsed, report) = calibrate.run(&["--no-checkout-cache"])?;
        fresh.push(elapsed);
        let expected = expected.get_or_insert(report.clone());
        calibrate.clear_cache()?;
        let (elapsed, kept) = calibrate.run(&[])?;
        first.push(elapsed);
        let (again, kept_again) = calibrate.run(&[])?;
        repeat.push(again);
        if &kept != expected || &kept_again != expected || &report != expected {
            bail!("a report of kept slots differs from the report of fresh checkouts");
        }
    }
    let mut baseline = Vec::new();
    if let Some(old) = &options.baseline {
        let old = Calibrate { revcal: old, ..calibrate_clone(&calibrate) };
        for _ in 0..3 {
            let started = Instant::now();
            let output = Command::new(old.revcal)
                .args(["calibrate", "--review-cmd", REVIEWER, "--scorer", "string", "--plants", "8"])
                .args(["--min-plants", "8", "--min-recall", "0", "--commit", &commit, "--json", "--quiet"])
                .current_dir(babel)
                .env("TMPDIR", &old.tmp)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .output()?;
            baseline.push(started.elapsed());
            checked_report(&output)?;
        }
    }
    println!("{:<52} {:>9} {:>9} {:>9}", "", "run 1", "run 2", "run 3");
    row("fresh checkouts (--no-checkout-cache)", &fresh);
    row("first run (an empty checkout cache)", &first);
    row("repeat run (the cache kept)", &repeat);
    if !baseline.is_empty() {
        row("baseline binary (--baseline)", &baseline);
    }
    let first_ratio = median_ratio(&first, &fresh);
    println!("first run / fresh checkouts: {first_ratio:.2} (median of the paired ratios)");
    let mut met = true;
    if !baseline.is_empty() {
        let ratio = median_ratio(&first, &baseline);
        println!("first run / baseline binary: {ratio:.2} (target <= 0.5)");
        met &= ratio <= 0.5;
    }

    // Repeat runs paired with adlc's in-place run.
    if let Some(adlc) = &options.adlc {
        let (mut ours, mut theirs) = (Vec::new(), Vec::new());
        for _ in 0..options.pairs {
            ours.push(calibrate.run(&[])?.0);
            let started = Instant::now();
            let output = Command::new("node")
                .arg(adlc)
                .args(["--review-cmd", REVIEWER, "--scorer", "string", "--plants", "8"])
                .args(["--min-recall", "0", "--commit", &commit, "--json"])
                .current_dir(&adlc_tree)
                .env("TMPDIR", &calibrate.tmp)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .output()
                .context("cannot run node")?;
            theirs.push(started.elapsed());
            if !output.status.success() {
                bail!(
                    "adlc's review-calibration failed ({}): {}",
                    output.status,
                    String::from_utf8_lossy(&output.stderr)
                );
            }
        }
        row("repeat run, paired", &ours);
        row("adlc review-calibration (in place), paired", &theirs);
        let ratio = median_ratio(&ours, &theirs);
        println!("repeat run / adlc: {ratio:.2} (median of {} paired ratios; target <= 1.5)", ours.len());
        met &= ratio <= 1.5;
    } else {
        println!("adlc: skipped (give --adlc PATH/bin/review-calibration.mjs or REVCAL_BENCH_ADLC)");
    }

    // --jobs 2 against --jobs 1, four trials each, the cache kept.
    let (mut one, mut two) = (Vec::new(), Vec::new());
    let (_, report_one) = calibrate.run(&["--trials", "4", "--jobs", "1"])?;
    let (_, report_two) = calibrate.run(&["--trials", "4", "--jobs", "2"])?;
    if report_one != report_two {
        bail!("--jobs 2 reports otherwise than --jobs 1");
    }
    for _ in 0..3 {
        one.push(calibrate.run(&["--trials", "4", "--jobs", "1"])?.0);
        two.push(calibrate.run(&["--trials", "4", "--jobs", "2"])?.0);
    }
    row("--trials 4 --jobs 1", &one);
    row("--trials 4 --jobs 2", &two);
    let ratio = median_ratio(&two, &one);
    println!("--jobs 2 / --jobs 1: {ratio:.2} (target <= 1.0, within 10% for noise)");
    met &= ratio <= 1.1;
    Ok(met)
}

fn calibrate_clone<'a>(calibrate: &Calibrate<'a>) -> Calibrate<'a> {
    Calibrate {
        revcal: calibrate.revcal,
        repo: calibrate.repo,
        commit: calibrate.commit,
        tmp: calibrate.tmp.clone(),
        cache: calibrate.cache.clone(),
    }
}

fn generated_figures(revcal: &Path, scratch: &Path) -> Result<bool> {
    let repo = scratch.join("generated");
    generate(&repo)?;
    let head = resolve(&repo, "HEAD")?;
    let tmp = scratch.join("tmp-generated");
    std::fs::create_dir_all(&tmp)?;
    let calibrate =
        Calibrate { revcal, repo: &repo, commit: &head, tmp, cache: scratch.join("cache-generated") };
    let (_, expected) = calibrate.run(&["--no-checkout-cache"])?;
    let mut repeat = Vec::new();
    let mut reviewer = Vec::new();
    for _ in 0..9 {
        let (elapsed, report) = calibrate.run(&[])?;
        if report != expected {
            bail!("a report of kept slots differs from the report of fresh checkouts (generated)");
        }
        repeat.push(elapsed);
        let started = Instant::now();
        Command::new("sh").args(["-c", REVIEWER]).current_dir(&repo).stdout(Stdio::null()).status()?;
        reviewer.push(started.elapsed());
    }
    repeat.sort();
    reviewer.sort();
    let overhead = repeat[repeat.len() / 2].saturating_sub(reviewer[reviewer.len() / 2]);
    println!(
        "{GENERATED_FILES} files, repeat run: {:.0} ms, reviewer alone {:.1} ms: overhead {:.0} ms (target < 300 ms)",
        ms(repeat[repeat.len() / 2]),
        ms(reviewer[reviewer.len() / 2]),
        ms(overhead)
    );
    let mut met = overhead < Duration::from_millis(300);

    // A suite of ten commits against one first run, each with an empty cache.
    let commits = resolve_list(&repo, SUITE_COMMITS)?;
    let suite = scratch.join("suite.yaml");
    let mut text = String::from("defaults:\n  plants: 8\nentries:\n");
    for (index, commit) in commits.iter().enumerate() {
        text.push_str(&format!("  - repo: generated\n    name: change-{index}\n    commit: {commit}\n"));
    }
    std::fs::write(&suite, text)?;
    let (mut suites, mut firsts) = (Vec::new(), Vec::new());
    for _ in 0..3 {
        calibrate.clear_cache()?;
        let started = Instant::now();
        let output = Command::new(revcal)
            .args(["calibrate", "suite"])
            .arg(&suite)
            .args(["--review-cmd", REVIEWER, "--scorer", "string", "--min-plants", "8", "--min-recall", "0"])
            .args(["--json", "--quiet", "--checkout-cache", calibrate.cache.to_str().unwrap_or_default()])
            .current_dir(&repo)
            .env("TMPDIR", &calibrate.tmp)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .output()?;
        suites.push(started.elapsed());
        if !output.status.success() {
            bail!("calibrate suite failed: {}", String::from_utf8_lossy(&output.stderr));
        }
        calibrate.clear_cache()?;
        firsts.push(calibrate.run(&[])?.0);
    }
    row("suite of 10 commits (an empty cache)", &suites);
    row("one first run (an empty cache)", &firsts);
    let ratio = median_ratio(&suites, &firsts);
    println!("suite of {SUITE_COMMITS} commits / one first run: {ratio:.2} (target < 3)");
    met &= ratio < 3.0;
    Ok(met)
}

/// A repository of 10,000 files and ten commits, each changing three Rust files.
fn generate(repo: &Path) -> Result<()> {
    write_tree(repo)?;
    for commit in 0..SUITE_COMMITS {
        for file in 0..3 {
            let i = (commit * 3 + file) * 4 * 31 % GENERATED_FILES;
            let path = repo.join(format!("pkg{:03}/m{i}.rs", i / 100));
            std::fs::write(&path, rust_source(commit * 3 + file))?;
        }
        git(repo, &["commit", "-q", "-a", "-m", &format!("change {commit}")])?;
    }
    Ok(())
}

fn resolve(repo: &Path, rev: &str) -> Result<String> {
    let output = Command::new("git")
        .args(["rev-parse", "--verify", &format!("{rev}^{{commit}}")])
        .current_dir(repo)
        .output()?;
    if !output.status.success() {
        bail!("{}: no commit {rev}", repo.display());
    }
    Ok(String::from_utf8_lossy(&output.stdout).trim().to_owned())
}

fn resolve_list(repo: &Path, count: usize) -> Result<Vec<String>> {
    let output = Command::new("git")
        .args(["rev-list", &format!("--max-count={count}"), "HEAD"])
        .current_dir(repo)
        .output()?;
    Ok(String::from_utf8_lossy(&output.stdout).lines().map(str::to_owned).collect())
}

fn count_tracked(repo: &Path, commit: &str) -> Result<usize> {
    let output =
        Command::new("git").args(["ls-tree", "-r", "--name-only", commit]).current_dir(repo).output()?;
    Ok(output.stdout.iter().filter(|&&byte| byte == b'\n').count())
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

fn row(name: &str, times: &[Duration]) {
    let cells: Vec<String> = times.iter().map(|time| format!("{:>7.0}ms", ms(*time))).collect();
    println!("{name:<52} {}", cells.join(" "));
}

/// The median of the ratios `a[i] / b[i]` of runs made side by side.
fn median_ratio(a: &[Duration], b: &[Duration]) -> f64 {
    let mut ratios: Vec<f64> =
        a.iter().zip(b).map(|(a, b)| a.as_secs_f64() / b.as_secs_f64().max(1e-9)).collect();
    ratios.sort_by(f64::total_cmp);
    ratios.get(ratios.len() / 2).copied().unwrap_or(f64::NAN)
}
