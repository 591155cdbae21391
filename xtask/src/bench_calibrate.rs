//! `cargo xtask bench calibrate`: the overhead of `revcal calibrate` (everything but the
//! reviewer and the judge) on a repository of 10,000 files with 8 plants, target < 300 ms.
//!
//! It builds the release binary, generates the repository in a temporary directory (a commit
//! of 10,000 files, then a commit that changes three Rust files: the targets), and times, in
//! one run and side by side: the whole `revcal calibrate` with a reviewer that prints `[]` (a
//! repeat run: its job slots kept in a checkout cache of its own),
//! that reviewer alone, and `git status` on the same tree for scale.

use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

const FILES: usize = 10_000;
const RUNS: usize = 15;
const TARGET: Duration = Duration::from_millis(300);
const REVIEWER: &str = "echo '[]'";
/// The files the commit under calibration changes.
const CHANGED: [&str; 3] = ["pkg001/m100.rs", "pkg050/m5000.rs", "pkg099/m9900.rs"];

/// Builds the release binary of `revcal` and gives its path.
pub(crate) fn release_binary(root: &Path) -> Result<PathBuf> {
    let status = Command::new(env!("CARGO"))
        .args(["build", "--release", "-q", "-p", "revcal-cli", "--bin", "revcal"])
        .current_dir(root)
        .status()
        .context("cannot run cargo build")?;
    if !status.success() {
        bail!("cargo build --release failed");
    }
    let target_dir =
        std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| root.join("target"));
    Ok(target_dir.join("release/revcal"))
}

/// Runs the benchmark.
pub(crate) fn run(root: &Path) -> Result<ExitCode> {
    let revcal = release_binary(root)?;
    let repo = std::env::temp_dir().join(format!("revcal-bench-calibrate-{}", std::process::id()));
    let outcome = measure(&revcal, &repo);
    let _ = std::fs::remove_dir_all(&repo);
    let _ = std::fs::remove_dir_all(repo.with_extension("cache"));
    outcome
}

fn measure(revcal: &Path, repo: &Path) -> Result<ExitCode> {
    let started = Instant::now();
    generate(repo)?;
    println!(
        "repository: {FILES} files, 3 changed in HEAD ({:.1}s to generate)",
        started.elapsed().as_secs_f64()
    );
    let calibrate_with = |reviewer: &str, scorer: &str| {
        Command::new(revcal)
            .args([
                "calibrate",
                "--review-cmd",
                reviewer,
                "--scorer",
                scorer,
                "--plants",
                "8",
                "--min-plants",
                "8",
            ])
            .args(["--min-recall", "0", "--json", "--quiet"])
            // Kept checkouts in the benchmark's own cache, never the user's: the timed runs
            // are repeat runs (`bench scale` times first runs and fresh checkouts too).
            .arg("--checkout-cache")
            .arg(repo.with_extension("cache"))
            .current_dir(repo)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .output()
    };
    let calibrate = || calibrate_with(REVIEWER, "string");
    // One checked run: 8 plants, the tree restored.
    let output = calibrate().context("cannot run revcal")?;
    let report: serde_like::Report = serde_like::parse(&output.stdout)?;
    if report.total != 8 || !output.status.success() {
        bail!("the calibration did not plant 8 bugs: {}", String::from_utf8_lossy(&output.stdout));
    }
    let calibrate_times = time(RUNS, || calibrate().map(|_| ()))?;
    // The repro scorer with a finding on every line of the changed files, each with a repro
    // (`true`: it never discriminates): the scratch copy of all 10,000 files is made and the
    // repro runs on the original and on each of the 8 plants.
    let findings = repo.with_extension("findings.json");
    std::fs::write(&findings, every_line_findings())?;
    let repro_reviewer = format!("cat '{}'", findings.display());
    let repro_times = time(3, || calibrate_with(&repro_reviewer, "repro").map(|_| ()))?;
    let copy = repo.with_extension("copy");
    let copy_times = time(3, || {
        let status = Command::new("cp").arg("-a").arg(repo).arg(&copy).status();
        let _ = std::fs::remove_dir_all(&copy);
        status.map(|_| ())
    })?;
    let _ = std::fs::remove_file(&findings);
    let reviewer_times = time(RUNS, || {
        Command::new("sh").args(["-c", REVIEWER]).current_dir(repo).stdout(Stdio::null()).status().map(|_| ())
    })?;
    let status_times = time(RUNS, || {
        Command::new("git")
            .args(["status", "--porcelain"])
            .current_dir(repo)
            .stdout(Stdio::null())
            .status()
            .map(|_| ())
    })?;
    let clean = Command::new("git").args(["status", "--porcelain"]).current_dir(repo).output()?;
    if !clean.stdout.is_empty() {
        bail!("the tree is not clean after the runs");
    }
    let (calibrate_median, reviewer_median, status_median) =
        (median(&calibrate_times), median(&reviewer_times), median(&status_times));
    let overhead = calibrate_median.saturating_sub(reviewer_median);
    println!("{:<44} {:>10} {:>10}", "", "median", "p90");
    for (name, times) in [
        ("revcal calibrate (8 plants, whole process)", &calibrate_times),
        ("revcal calibrate --scorer repro, repros run", &repro_times),
        ("cp -a of the whole tree (for scale)", &copy_times),
        ("the reviewer alone (sh -c \"echo '[]'\")", &reviewer_times),
        ("git status --porcelain (for scale)", &status_times),
    ] {
        println!("{name:<44} {:>8.1}ms {:>8.1}ms", ms(median(times)), ms(percentile(times, 0.9)));
    }
    println!(
        "with the repro scorer and repros to run (copying the 10,000 tracked files once, 9 runs of `true`): {:.1} ms",
        ms(median(&repro_times).saturating_sub(reviewer_median))
    );
    println!(
        "calibrate overhead: {:.1} ms (target < {} ms: {:.2}x the budget); {:.1}x a git status",
        ms(overhead),
        TARGET.as_millis(),
        overhead.as_secs_f64() / TARGET.as_secs_f64(),
        overhead.as_secs_f64() / status_median.as_secs_f64().max(1e-9)
    );
    Ok(if overhead < TARGET { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

fn time(runs: usize, mut run: impl FnMut() -> std::io::Result<()>) -> Result<Vec<Duration>> {
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let started = Instant::now();
        run()?;
        times.push(started.elapsed());
    }
    times.sort();
    Ok(times)
}

fn median(sorted: &[Duration]) -> Duration {
    sorted.get(sorted.len() / 2).copied().unwrap_or_default()
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted.get(index).copied().unwrap_or_default()
}

/// A Rust source file with plenty of mutable code.
pub(crate) fn rust_source(seed: usize) -> String {
    let mut text = String::new();
    for f in 0..12 {
        text.push_str(&format!(
            "pub fn f{seed}_{f}(items: &[i64], limit: usize) -> i64 {{\n    let mut total = 0;\n    for i in 0..items.len() {{\n        if i < limit && items[i] > 0 {{\n            total += items[i] * 2;\n        }}\n    }}\n    if total == 0 {{\n        return -1;\n    }}\n    total\n}}\n\n"
        ));
    }
    text
}

/// A findings document with one finding per line of the three changed files.
fn every_line_findings() -> String {
    let lines = rust_source(0).lines().count();
    let findings: Vec<String> = CHANGED
        .iter()
        .flat_map(|file| {
            (1..=lines).map(move |line| {
                format!(r#"{{"file": "{file}", "line": {line}, "message": "m", "repro": "true"}}"#)
            })
        })
        .collect();
    format!("[{}]", findings.join(",\n"))
}

fn generate(repo: &Path) -> Result<()> {
    write_tree(repo)?;
    for (index, path) in CHANGED.iter().enumerate() {
        std::fs::write(repo.join(path), rust_source(index))?;
    }
    git(repo, &["commit", "-q", "-a", "-m", "three changed Rust files"])
}

/// A new repository at `repo` with one commit of 10,000 small files (Rust, Python,
/// JavaScript and Markdown) in 100 directories.
pub(crate) fn write_tree(repo: &Path) -> Result<()> {
    std::fs::create_dir_all(repo)?;
    for i in 0..FILES {
        let dir = repo.join(format!("pkg{:03}", i / 100));
        std::fs::create_dir_all(&dir)?;
        let (name, text) = match i % 4 {
            0 => (format!("m{i}.rs"), format!("pub fn v{i}() -> u32 {{ {i} }}\n")),
            1 => (format!("m{i}.py"), format!("def v{i}():\n    return {i}\n")),
            2 => (format!("m{i}.js"), format!("export const v{i} = () => {i};\n")),
            _ => (format!("n{i}.md"), format!("# note {i}\n")),
        };
        std::fs::write(dir.join(name), text)?;
    }
    git(repo, &["init", "-q"])?;
    git(repo, &["add", "."])?;
    git(repo, &["commit", "-q", "-m", "10,000 files"])
}

/// Runs git in `repo` with a fixed identity and no signing.
pub(crate) fn git(repo: &Path, args: &[&str]) -> Result<()> {
    let status = Command::new("git")
        .args([
            "-c",
            "user.name=bench",
            "-c",
            "user.email=bench@revcal.invalid",
            "-c",
            "commit.gpgsign=false",
            // No `git gc --auto` in the background (10,000 loose objects start one): it would
            // pack the objects while they are read, and write after the repository is removed.
            "-c",
            "gc.auto=0",
        ])
        .args(args)
        .current_dir(repo)
        .stdout(Stdio::null())
        .status()?;
    if !status.success() {
        bail!("git {} failed", args.join(" "));
    }
    Ok(())
}

/// The one number the benchmark reads from the JSON report, without a JSON dependency.
mod serde_like {
    use anyhow::{Result, anyhow};

    pub(super) struct Report {
        pub total: u64,
    }

    pub(super) fn parse(json: &[u8]) -> Result<Report> {
        let text = String::from_utf8_lossy(json);
        let after =
            text.split("\"total\":").nth(1).ok_or_else(|| anyhow!("no total in the report: {text}"))?;
        let digits: String = after.trim_start().chars().take_while(char::is_ascii_digit).collect();
        Ok(Report { total: digits.parse()? })
    }
}
