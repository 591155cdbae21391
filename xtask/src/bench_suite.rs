//! `cargo xtask bench suite`: what sharding costs. A suite of 50 entries (50 small git
//! repositories made in a temporary directory, 3 plants each, a reviewer that prints `[]`) run
//! side by side in one run: unsharded, as 50 shards of one unit each (one process per shard,
//! one after another), and as 5 shards of 10; then `calibrate merge` of the 50 results. The
//! start-up overhead of a shard is (the 50 shards' time - the unsharded time) / 50; the merged
//! report is checked to be byte-identical to the unsharded one.

use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

const ENTRIES: usize = 50;
const ROUNDS: usize = 3;
const FLAGS: [&str; 9] =
    ["--review-cmd", "echo '[]'", "--scorer", "repro", "--min-recall", "0", "--min-plants", "1", "-q"];

/// Runs the benchmark.
pub(crate) fn run(root: &Path) -> Result<ExitCode> {
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
    let dir = tempfile::tempdir().context("cannot create a temporary directory")?;
    generate(dir.path())?;
    measure(&target_dir.join("release/revcal"), dir.path())
}

fn git(dir: &Path, args: &[&str]) -> Result<()> {
    let status = Command::new("git").args(args).current_dir(dir).stdout(Stdio::null()).status()?;
    if !status.success() {
        bail!("git {args:?} failed in {}", dir.display());
    }
    Ok(())
}

/// 50 repositories with one commit each, and the suite naming them.
fn generate(dir: &Path) -> Result<()> {
    let mut suite = String::from("defaults: {plants: 3}\nentries:\n");
    for i in 1..=ENTRIES {
        let repo = dir.join(format!("repos/p{i}"));
        std::fs::create_dir_all(repo.join("src"))?;
        std::fs::write(
            repo.join("src/ops.py"),
            format!(
                "def add(a, b):\n    return a + b + {i}\n\n\ndef is_even(n):\n    return n % 2 == 0\n\n\ndef lt(a, b):\n    return a < b\n"
            ),
        )?;
        git(&repo, &["init", "-q"])?;
        git(&repo, &["add", "."])?;
        git(&repo, &["-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "ops"])?;
        suite.push_str(&format!("  - repo: repos/p{i}\n"));
    }
    std::fs::write(dir.join("suite.yaml"), suite)?;
    Ok(())
}

fn revcal(revcal: &Path, dir: &Path, args: &[&str]) -> Result<Vec<u8>> {
    let output = Command::new(revcal)
        .args(["calibrate"])
        .args(args)
        .current_dir(dir)
        .stderr(Stdio::null())
        .output()
        .context("cannot run revcal")?;
    if !output.status.success() {
        bail!("revcal calibrate {args:?} exited {:?}", output.status.code());
    }
    Ok(output.stdout)
}

fn shards(bin: &Path, dir: &Path, count: usize) -> Result<Vec<String>> {
    let mut files = Vec::with_capacity(count);
    for index in 1..=count {
        let file = format!("shard-{index}-of-{count}.json");
        let shard = format!("{index}/{count}");
        let mut args = vec!["suite", "suite.yaml", "--shard", &shard, "--out", &file];
        args.extend(FLAGS);
        revcal(bin, dir, &args)?;
        files.push(file);
    }
    Ok(files)
}

fn measure(bin: &Path, dir: &Path) -> Result<ExitCode> {
    let mut whole_times = Vec::new();
    let mut fifty_times = Vec::new();
    let mut five_times = Vec::new();
    let mut merge_times = Vec::new();
    let mut identical = true;
    for _ in 0..ROUNDS {
        let started = Instant::now();
        let mut args = vec!["suite", "suite.yaml", "--json"];
        args.extend(FLAGS);
        let whole = revcal(bin, dir, &args)?;
        whole_times.push(started.elapsed());

        let started = Instant::now();
        let files = shards(bin, dir, ENTRIES)?;
        fifty_times.push(started.elapsed());

        let started = Instant::now();
        shards(bin, dir, 5)?;
        five_times.push(started.elapsed());

        let started = Instant::now();
        let mut args = vec!["merge"];
        args.extend(files.iter().map(String::as_str));
        // The gate the shards ran with (FLAGS).
        args.extend(["--min-recall", "0", "--json"]);
        let merged = revcal(bin, dir, &args)?;
        merge_times.push(started.elapsed());
        identical &= merged == whole;
    }
    let median = |times: &mut Vec<Duration>| {
        times.sort();
        times[times.len() / 2]
    };
    let (whole, fifty, five, merge) = (
        median(&mut whole_times),
        median(&mut fifty_times),
        median(&mut five_times),
        median(&mut merge_times),
    );
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!("suite of {ENTRIES} entries, 3 plants each, reviewer `echo '[]'`; medians of {ROUNDS} rounds");
    println!(
        "  unsharded (one process)      {:>8.0} ms  ({:.1} ms per unit)",
        ms(whole),
        ms(whole) / ENTRIES as f64
    );
    println!(
        "  50 shards of 1 unit          {:>8.0} ms  ({:.2}x unsharded)",
        ms(fifty),
        ms(fifty) / ms(whole)
    );
    println!("  5 shards of 10 units         {:>8.0} ms  ({:.2}x unsharded)", ms(five), ms(five) / ms(whole));
    println!(
        "  start-up overhead per shard  {:>8.1} ms  ((50 shards - unsharded) / 50)",
        (ms(fifty) - ms(whole)) / ENTRIES as f64
    );
    println!("  merge of 50 shard results    {:>8.1} ms", ms(merge));
    println!("  merged report == unsharded report, byte for byte: {}", if identical { "yes" } else { "NO" });
    Ok(if identical { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}
