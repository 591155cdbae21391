//! `revcal bench test-reviewer`: a repository's own test suite as a reviewer, the benchmark's
//! oracle. Run by a calibration in the checkout of a change under review, it knows the
//! repository by the base it is told (`REVCAL_BASE`, the target's first parent, which the
//! manifest records), runs the repository's test command there, and when the tests fail,
//! reports the hunks of the change whose reversal alone makes them pass (every hunk when no
//! single one does), each with the test command as its repro. Only hunks of code are tried
//! and reported: a test the change adds or changes fails because of the code it tests, and
//! undoing the test would hide the failure, not explain it. It reports nothing when the
//! tests pass: a clean change is never flagged.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use clap::Args;
use revcal_bench::Benchmark;
use revcal_calibrate::bugs::{Hunk, hunks};
use revcal_process::{ShellCommand, SignalWatch};

use super::{BenchFlags, locate};
use crate::exit::CALIBRATE_PASS;

/// Arguments of `revcal bench test-reviewer`.
#[derive(Debug, Args)]
pub(crate) struct TestReviewerArgs {
    #[command(flatten)]
    pub(crate) bench: BenchFlags,
    /// Seconds each run of the test command may take.
    #[arg(long, value_name = "SECS", default_value_t = 600)]
    pub(crate) timeout: u64,
    /// The most hunks tried one by one when the tests fail; past it every hunk is reported.
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub(crate) max_hunks: usize,
}

/// The test command's outcome: whether it passed, and the first line that says why not.
fn run_tests(
    command: &str,
    dir: &Path,
    timeout: Duration,
    signals: &SignalWatch,
) -> anyhow::Result<(bool, String)> {
    let finished =
        revcal_process::run(&ShellCommand::new(command, dir, timeout).output_cap(1 << 20), signals)
            .with_context(|| format!("cannot run the test command `{command}`"))?;
    if let Some(signal) = signals.received() {
        anyhow::bail!("stopped by {}", revcal_process::signal_name(signal));
    }
    let output =
        String::from_utf8_lossy(&finished.stdout).into_owned() + &String::from_utf8_lossy(&finished.stderr);
    let why = output
        .lines()
        .map(str::trim)
        .find(|line| {
            let lower = line.to_ascii_lowercase();
            lower.starts_with("fail")
                || lower.contains("error")
                || lower.contains("assert")
                || lower.contains("panicked")
        })
        .unwrap_or_default()
        .chars()
        .take(300)
        .collect::<String>();
    Ok((finished.exit.success(), why))
}

/// `text` with `hunk` (of a diff from the base to `text`, without context lines) undone.
fn reverse(text: &str, hunk: &Hunk) -> String {
    let ends_with_newline = text.ends_with('\n');
    let mut lines: Vec<&str> = text.split('\n').collect();
    if ends_with_newline {
        lines.pop();
    }
    let (removed, added) = hunk.changes();
    let start = hunk.new_start as usize;
    // A hunk that adds lines starts at its first added line; one that only removes lines
    // names the line after which they were.
    let from = if added.is_empty() { start } else { start.saturating_sub(1) }.min(lines.len());
    let to = (from + added.len()).min(lines.len());
    lines.splice(from..to, removed);
    let mut out = lines.join("\n");
    if ends_with_newline {
        out.push('\n');
    }
    out
}

/// Runs `revcal bench test-reviewer` in the current directory (a review's checkout).
pub(crate) fn run(args: &TestReviewerArgs) -> anyhow::Result<ExitCode> {
    let base = std::env::var("REVCAL_BASE").ok().filter(|base| !base.is_empty()).context(
        "REVCAL_BASE is not set: this is a reviewer, run by a calibration (revcal bench standard --review-cmd 'revcal bench test-reviewer')",
    )?;
    let bench = locate::bench_dir(args.bench.suite.as_deref())?;
    let benchmark = Benchmark::open(&bench.path)?;
    let repository =
        benchmark.manifest.repositories.iter().find(|repo| repo.base == base).with_context(|| {
            format!("no repository of the benchmark has the base {base} (the first parent of its target)")
        })?;
    let dir: PathBuf = std::env::current_dir().context("cannot read the current directory")?;
    let timeout = Duration::from_secs(args.timeout);
    let signals = SignalWatch::install()?;
    let tests = repository.test_cmd.as_str();
    let (passed, why) = run_tests(tests, &dir, timeout, &signals)?;
    let mut findings = Vec::new();
    if !passed {
        let diff = revcal_process::git(&dir, &["diff", "-U0", "--no-color", "--no-ext-diff", &base, "--"])
            .map_err(|error| anyhow::anyhow!("git {}: {}", error.args, error.message))?;
        let changed: Vec<Hunk> = hunks(&String::from_utf8_lossy(&diff))
            .into_iter()
            .filter(|hunk| !revcal_mutate::is_test_path(Path::new(&hunk.file)))
            .collect();
        let mut culprits: Vec<&Hunk> = Vec::new();
        if changed.len() <= args.max_hunks {
            for hunk in &changed {
                let path = dir.join(&hunk.file);
                let Ok(original) = std::fs::read_to_string(&path) else { continue };
                std::fs::write(&path, reverse(&original, hunk))
                    .with_context(|| format!("cannot write {}", path.display()))?;
                let outcome = run_tests(tests, &dir, timeout, &signals);
                std::fs::write(&path, &original)
                    .with_context(|| format!("cannot write {}", path.display()))?;
                if outcome?.0 {
                    culprits.push(hunk);
                }
            }
        }
        if culprits.is_empty() {
            culprits = changed.iter().collect();
        }
        let message = if why.is_empty() {
            "the repository's tests fail with this change".to_owned()
        } else {
            format!("the repository's tests fail with this change: {why}")
        };
        for hunk in culprits {
            findings.push(serde_json::json!({
                "file": hunk.file,
                "line": hunk.new_span().0.max(1),
                "message": message,
                "repro": tests,
            }));
        }
    }
    let mut text = serde_json::to_string_pretty(&serde_json::json!({ "findings": findings }))?;
    text.push('\n');
    crate::output::emit(&text)?;
    Ok(ExitCode::from(CALIBRATE_PASS))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hunk_is_undone_where_it_stands() {
        let base = "a\nb\nc\nd\n";
        let diff = |new: &str| {
            let dir = tempfile::tempdir().unwrap();
            std::fs::write(dir.path().join("old"), base).unwrap();
            std::fs::write(dir.path().join("new"), new).unwrap();
            let out = std::process::Command::new("git")
                .args(["diff", "--no-index", "-U0", "--no-color", "old", "new"])
                .current_dir(dir.path())
                .output()
                .unwrap();
            hunks(&String::from_utf8(out.stdout).unwrap())
        };
        for new in
            ["a\nB\nc\nd\n", "a\nc\nd\n", "a\nb\nx\ny\nc\nd\n", "b\nc\nd\n", "a\nb\nc\n", "z\na\nb\nc\nd\n"]
        {
            let changed = diff(new);
            assert_eq!(changed.len(), 1, "{new:?}");
            assert_eq!(reverse(new, &changed[0]), base, "{new:?}");
        }
        // Two hunks: each undone alone leaves the other.
        let new = "A\nb\nc\nD\n";
        let changed = diff(new);
        assert_eq!(changed.len(), 2);
        assert_eq!(reverse(new, &changed[0]), "a\nb\nc\nD\n");
        assert_eq!(reverse(new, &changed[1]), "A\nb\nc\nd\n");
    }
}
