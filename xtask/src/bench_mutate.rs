//! `cargo xtask bench mutate [PATH]`: time `revcal mutate --json` over a source tree
//! (every mutant re-parse-checked) and, when cargo-mutants is installed, `cargo mutants
//! --list --workspace` on the same tree, in alternation, and print the ratio (SPEC 8: revcal
//! must be faster). Stryker and mutmut have no list-only mode to time; their comparison is
//! reported as skipped.

use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

const ROUNDS: usize = 3;

pub fn run(root: &Path, args: &[&str]) -> Result<ExitCode> {
    let tree = match args.first() {
        Some(path) => PathBuf::from(path),
        None => root.join("crates"),
    };
    let tree = tree.canonicalize().with_context(|| format!("{}: no such directory", tree.display()))?;
    let counts = count_lines(&tree);
    println!(
        "tree: {} ({} Rust, {} JavaScript, {} Python lines)",
        tree.display(),
        counts.rust,
        counts.javascript,
        counts.python
    );

    println!("building revcal (release)...");
    let built = Command::new("cargo")
        .args(["build", "--release", "-q", "-p", "revcal-cli", "--bin", "revcal"])
        .current_dir(root)
        .status()
        .context("cannot run cargo")?;
    if !built.success() {
        bail!("cargo build --release -p revcal-cli failed");
    }
    let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), PathBuf::from);
    let revcal = target.join("release/revcal");

    let output_file = std::env::temp_dir().join(format!("revcal-bench-mutate-{}.json", std::process::id()));
    let revcal_command = || -> Result<Duration> {
        let file = std::fs::File::create(&output_file)?;
        let start = Instant::now();
        let status = Command::new(&revcal)
            .args(["mutate", "--json"])
            .arg(&tree)
            .stdout(file)
            .stderr(Stdio::null())
            .status()
            .with_context(|| format!("cannot run {}", revcal.display()))?;
        let elapsed = start.elapsed();
        if !status.success() {
            bail!("revcal mutate failed on {}", tree.display());
        }
        Ok(elapsed)
    };

    let cargo_mutants = Command::new("cargo")
        .args(["mutants", "--version"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success());
    let has_manifest = tree.join("Cargo.toml").is_file();
    let compare = cargo_mutants && has_manifest;
    if !cargo_mutants {
        println!("cargo-mutants is not installed (`cargo install cargo-mutants`): comparison skipped");
    } else if !has_manifest {
        println!("{} has no Cargo.toml: the cargo-mutants comparison is skipped", tree.display());
    }
    let mut theirs_count = 0;
    let mut mutants_command = || -> Result<Duration> {
        let start = Instant::now();
        let output = Command::new("cargo")
            .args(["mutants", "--list", "--workspace", "--dir"])
            .arg(&tree)
            .stderr(Stdio::null())
            .output()
            .context("cannot run cargo mutants")?;
        let elapsed = start.elapsed();
        if !output.status.success() {
            bail!("cargo mutants --list failed on {}", tree.display());
        }
        theirs_count = String::from_utf8_lossy(&output.stdout).lines().count();
        Ok(elapsed)
    };

    let mut ours = Vec::new();
    let mut theirs = Vec::new();
    for round in 0..ROUNDS {
        ours.push(revcal_command()?);
        if compare {
            theirs.push(mutants_command()?);
        }
        println!(
            "round {}: revcal {:.3} s{}",
            round + 1,
            secs(ours[round]),
            theirs.get(round).map_or(String::new(), |t| format!(", cargo mutants --list {:.3} s", secs(*t)))
        );
    }
    let json = std::fs::read_to_string(&output_file).unwrap_or_default();
    let _ = std::fs::remove_file(&output_file);
    let our_count = json.matches("\n    \"id\": ").count();
    let our_median = median(&mut ours);
    let lines = counts.rust + counts.javascript + counts.python;
    println!(
        "revcal mutate --json: {our_count} mutants, median {:.3} s ({:.0} lines/s, every mutant re-parse-checked)",
        secs(our_median),
        lines as f64 / secs(our_median).max(1e-9)
    );
    if compare {
        let their_median = median(&mut theirs);
        println!(
            "cargo mutants --list --workspace: {theirs_count} mutants, median {:.3} s",
            secs(their_median)
        );
        println!(
            "ratio: revcal is {:.2}x the speed of cargo-mutants (target: > 1)",
            secs(their_median) / secs(our_median).max(1e-9)
        );
    }
    for (tool, language, lines) in
        [("stryker", "JavaScript", counts.javascript), ("mutmut", "Python", counts.python)]
    {
        if lines > 0 {
            let present = Command::new(tool)
                .arg("--version")
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok();
            let why = if present { "it has no list-only mode to time" } else { "it is not installed" };
            println!("{language}: the {tool} comparison is skipped: {why}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn secs(duration: Duration) -> f64 {
    duration.as_secs_f64()
}

fn median(times: &mut [Duration]) -> Duration {
    times.sort();
    times.get(times.len() / 2).copied().unwrap_or_default()
}

#[derive(Default)]
struct Lines {
    rust: usize,
    javascript: usize,
    python: usize,
}

/// Source lines per language, skipping `target` and hidden directories.
fn count_lines(dir: &Path) -> Lines {
    let mut lines = Lines::default();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if name.starts_with('.') || name == "target" {
                continue;
            }
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let slot = match path.extension().and_then(|ext| ext.to_str()) {
                Some("rs") => &mut lines.rust,
                Some("js" | "mjs" | "cjs" | "jsx") => &mut lines.javascript,
                Some("py") => &mut lines.python,
                _ => continue,
            };
            *slot += std::fs::read_to_string(&path).map_or(0, |text| text.lines().count());
        }
    }
    lines
}
