//! The two bundled model-free reviewers.
//!
//! The test-suite reviewer runs the project's unit tests. When some fail, it reports every
//! line the change under review touched (`git diff {base}`, test files aside), each with the
//! failing tests as its `repro` command; the repro scorer then credits a line only when those
//! tests pass on the original code and fail with that line's bug alone. Its recall is the share
//! of planted bugs the tests kill: a real measurement of the test suite as a reviewer.

use anyhow::{Context, bail};
use serde_json::json;
use std::path::Path;
use std::process::{Command, ExitCode};

/// Runs `reviewer` in the current directory and prints its findings.
pub(crate) fn run(reviewer: super::DemoReviewer, base: &str, target: &Path) -> anyhow::Result<ExitCode> {
    let text = match reviewer {
        super::DemoReviewer::Approve => "LGTM: looks good to me, ship it.\n".to_owned(),
        super::DemoReviewer::TestSuite => test_suite(base, target)?,
    };
    crate::output::emit(&text)?;
    Ok(ExitCode::SUCCESS)
}

fn test_suite(base: &str, target: &Path) -> anyhow::Result<String> {
    // Its own tests build where revcal points CARGO_TARGET_DIR (its job slot's target
    // directory, kept from review to review); its repro commands build in the demo's shared
    // target directory, as the witnesses do, where revcal runs them.
    let own_target = std::env::var_os("CARGO_TARGET_DIR")
        .filter(|dir| !dir.is_empty())
        .map_or_else(|| target.to_path_buf(), std::path::PathBuf::from);
    let output = Command::new("cargo")
        .args(["test", "--offline", "--lib", "--no-fail-fast", "--target-dir"])
        .arg(&own_target)
        .output()
        .context("cannot run cargo")?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let failing = failing_tests(&stdout);
    if failing.is_empty() {
        if !output.status.success() {
            bail!("cargo test failed without a failing test:\n{}", String::from_utf8_lossy(&output.stderr));
        }
        return Ok("{\"findings\": []}\n".to_owned());
    }
    let diff = Command::new("git")
        .args(["diff", "-U0", "--no-color", "--no-ext-diff", base, "--", "*.rs"])
        .output()
        .context("cannot run git diff")?;
    if !diff.status.success() {
        bail!("git diff {base}: {}", String::from_utf8_lossy(&diff.stderr).trim());
    }
    let repro = format!(
        "cargo test --offline -q --lib --target-dir {} -- --exact {}",
        shell_quote(&target.display().to_string()),
        failing.join(" ")
    );
    let findings: Vec<serde_json::Value> = changed_lines(&String::from_utf8_lossy(&diff.stdout))
        .into_iter()
        .filter(|(file, _)| !revcal_mutate::is_test_path(Path::new(file)))
        .map(|(file, line)| {
            json!({
                "file": file,
                "line": line,
                "title": "this changed line is implicated by failing tests",
                "body": format!("failing: {}", failing.join(", ")),
                "severity": "error",
                "repro": repro,
            })
        })
        .collect();
    let mut text = serde_json::to_string_pretty(&json!({ "findings": findings }))?;
    text.push('\n');
    Ok(text)
}

/// Names of the tests libtest reports as failed (`test NAME ... FAILED`).
fn failing_tests(stdout: &str) -> Vec<String> {
    stdout
        .lines()
        .filter_map(|line| line.strip_prefix("test ")?.strip_suffix(" ... FAILED"))
        .map(str::to_owned)
        .collect()
}

/// `(file, line)` of every line added or changed in a `-U0` unified diff; a pure deletion
/// counts as the line after it.
fn changed_lines(diff: &str) -> Vec<(String, u32)> {
    let mut file = String::new();
    let mut lines = Vec::new();
    for line in diff.lines() {
        if let Some(path) = line.strip_prefix("+++ b/") {
            file = path.to_owned();
        } else if let Some(hunk) = line.strip_prefix("@@ ") {
            let Some(new) = hunk.split(' ').find_map(|part| part.strip_prefix('+')) else { continue };
            let mut numbers = new.split(',');
            let start: u32 = numbers.next().and_then(|n| n.parse().ok()).unwrap_or(0);
            let count: u32 = numbers.next().and_then(|n| n.parse().ok()).unwrap_or(1);
            if count == 0 {
                lines.push((file.clone(), start.max(1)));
            }
            lines.extend((start..start + count).map(|n| (file.clone(), n)));
        }
    }
    lines
}

/// `text` quoted for `sh`.
pub(crate) fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diff_hunks_give_changed_lines() {
        let diff = "diff --git a/src/lib.rs b/src/lib.rs\n--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -6 +6 @@ fn a\n-x\n+y\n@@ -20,0 +21,2 @@\n+a\n+b\n@@ -30,2 +31,0 @@\n-c\n";
        assert_eq!(
            changed_lines(diff),
            vec![
                ("src/lib.rs".into(), 6),
                ("src/lib.rs".into(), 21),
                ("src/lib.rs".into(), 22),
                ("src/lib.rs".into(), 31)
            ]
        );
    }

    #[test]
    fn failing_tests_come_from_libtest_lines() {
        let out =
            "running 3 tests\ntest tests::a ... ok\ntest tests::b ... FAILED\ntest tests::c ... FAILED\n";
        assert_eq!(failing_tests(out), vec!["tests::b", "tests::c"]);
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
    }
}
