//! Test runners: which command runs a repository's tests by default, which tests a run
//! reports as failing, and how to run only some of them (the witness).
//!
//! Failing tests are read from the runners' own plain output (pytest's short summary,
//! unittest's `FAIL:` headers, libtest's `test ... FAILED` lines, TAP's `not ok`); a run whose
//! names cannot be read still counts by its exit code.

use std::collections::BTreeSet;
use std::path::Path;

/// The ecosystem of a repository, from the files at its root. Ecosystems are added as the
/// miner learns their test runners, so a `match` on it needs a wildcard arm.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Ecosystem {
    /// `Cargo.toml`.
    Rust,
    /// `pyproject.toml`, `setup.py`, `setup.cfg`, `pytest.ini` or `tox.ini`.
    Python,
    /// `package.json`.
    JavaScript,
}

impl Ecosystem {
    /// Detects the ecosystem of the tree at `root` (Rust, then Python, then JavaScript).
    pub fn detect(root: &Path) -> Option<Ecosystem> {
        let has = |name: &str| root.join(name).is_file();
        if has("Cargo.toml") {
            Some(Ecosystem::Rust)
        } else if ["pyproject.toml", "setup.py", "setup.cfg", "pytest.ini", "tox.ini"].iter().any(|n| has(n))
        {
            Some(Ecosystem::Python)
        } else if has("package.json") {
            Some(Ecosystem::JavaScript)
        } else {
            None
        }
    }

    /// The default test command: `cargo test`, `python3 -m pytest -q` (or `python3 -m
    /// unittest` when pytest is not installed), `npm test`.
    pub fn default_test_cmd(self) -> String {
        match self {
            Ecosystem::Rust => "cargo test".into(),
            Ecosystem::Python if pytest_installed() => "python3 -m pytest -q -rfE -p no:cacheprovider".into(),
            Ecosystem::Python => "python3 -m unittest".into(),
            Ecosystem::JavaScript => "npm test".into(),
        }
    }

    /// The default build check after the fix is reversed, given the changed source files
    /// (already shell-quoted): a bug that does not build is no review target.
    pub fn default_build_cmd(self, quoted_sources: &str) -> String {
        match self {
            Ecosystem::Rust => "cargo test --no-run --quiet".into(),
            Ecosystem::Python => format!("python3 -m py_compile {quoted_sources}"),
            Ecosystem::JavaScript => {
                format!("for f in {quoted_sources}; do node --check \"$f\" || exit 1; done")
            }
        }
    }
}

/// Whether `python3 -m pytest` can run; asked once per process, not once per candidate.
fn pytest_installed() -> bool {
    static INSTALLED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *INSTALLED.get_or_init(probe_pytest)
}

fn probe_pytest() -> bool {
    std::process::Command::new("python3")
        .args(["-c", "import pytest"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}

/// Which runner printed a test name: it decides how the witness selects that test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Runner {
    /// pytest node ids (`tests/test_a.py::test_x`).
    Pytest,
    /// unittest dotted names (`test_a.T.test_x`).
    Unittest,
    /// libtest names (`tests::x`).
    Libtest,
    /// TAP descriptions (node's test runner).
    Tap,
}

/// A failing test as a runner named it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct TestName {
    /// The runner.
    pub(crate) runner: Runner,
    /// The name as the runner takes it back.
    pub(crate) name: String,
}

/// The failing tests a run's output names.
pub(crate) fn failing_tests(output: &str) -> BTreeSet<TestName> {
    output.lines().filter_map(failure).collect()
}

/// The first line of a run's output that names a failing test, as the runner printed it (at
/// most 300 characters): what a user reads first to see why a run failed.
pub(crate) fn first_failure_line(output: &str) -> Option<String> {
    let line = output.lines().find(|line| failure(line).is_some())?.trim();
    Some(if line.chars().count() > 300 {
        line.chars().take(300).collect::<String>() + "..."
    } else {
        line.to_owned()
    })
}

/// The failing test a line of output names, if it names one.
fn failure(line: &str) -> Option<TestName> {
    let line = line.trim_end();
    if let Some(name) = pytest_failure(line) {
        Some(TestName { runner: Runner::Pytest, name })
    } else if let Some(name) = unittest_failure(line) {
        Some(TestName { runner: Runner::Unittest, name })
    } else if let Some(name) = line.strip_prefix("test ").and_then(|rest| rest.strip_suffix(" ... FAILED")) {
        Some(TestName { runner: Runner::Libtest, name: name.to_owned() })
    } else {
        tap_failure(line).map(|name| TestName { runner: Runner::Tap, name })
    }
}

/// `FAILED tests/test_a.py::test_x - AssertionError` (also `ERROR`), pytest's short summary.
fn pytest_failure(line: &str) -> Option<String> {
    let rest = line.strip_prefix("FAILED ").or_else(|| line.strip_prefix("ERROR "))?;
    let id = rest.split(" - ").next()?.trim();
    // A node id, or a test file that failed to collect (`ERROR tests/test_a.py`).
    (id.contains("::") || (id.ends_with(".py") && !id.contains(' '))).then(|| id.to_owned())
}

/// `FAIL: test_x (test_a.T.test_x)` (Python 3.11+) or `FAIL: test_x (test_a.T)` (older).
fn unittest_failure(line: &str) -> Option<String> {
    let rest = line.strip_prefix("FAIL: ").or_else(|| line.strip_prefix("ERROR: "))?;
    let (method, qualified) = rest.split_once(" (")?;
    let qualified = qualified.strip_suffix(')')?;
    if method.contains(' ') || qualified.contains(' ') {
        return None;
    }
    if qualified.ends_with(&format!(".{method}")) {
        Some(qualified.to_owned())
    } else {
        Some(format!("{qualified}.{method}"))
    }
}

/// `not ok 3 - name` (TAP, any indentation for subtests), without a `# SKIP`/`# TODO`.
fn tap_failure(line: &str) -> Option<String> {
    let rest = line.trim_start().strip_prefix("not ok ")?;
    let (number, name) = rest.split_once(" - ")?;
    if !number.chars().all(|c| c.is_ascii_digit()) || name.contains("# SKIP") || name.contains("# TODO") {
        return None;
    }
    Some(name.trim().to_owned())
}

/// Single-quotes `text` for `sh`.
pub(crate) fn shell_quote(text: &str) -> String {
    if !text.is_empty() && text.chars().all(|c| c.is_ascii_alphanumeric() || "-_./:=@+,".contains(c)) {
        return text.to_owned();
    }
    format!("'{}'", text.replace('\'', "'\\''"))
}

/// The test command restricted to `tests`, where its runner allows it; else the command as
/// it is (its exit code is then the witness).
pub(crate) fn witness(test_cmd: &str, tests: &BTreeSet<TestName>) -> String {
    let trimmed = test_cmd.trim();
    let Some(first) = tests.iter().next() else { return trimmed.to_owned() };
    if tests.iter().any(|test| test.runner != first.runner) {
        return trimmed.to_owned();
    }
    let names = || tests.iter().map(|test| shell_quote(&test.name)).collect::<Vec<_>>().join(" ");
    match first.runner {
        Runner::Pytest if trimmed.contains("pytest") => format!("{trimmed} {}", names()),
        Runner::Unittest if trimmed.ends_with("-m unittest") => format!("{trimmed} {}", names()),
        Runner::Libtest if trimmed.starts_with("cargo test") && !trimmed.contains(" -- ") => {
            format!("{trimmed} -- --exact {}", names())
        }
        _ => trimmed.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(output: &str) -> Vec<String> {
        failing_tests(output).into_iter().map(|t| t.name).collect()
    }

    #[test]
    fn each_runner_s_failures_are_read_from_its_own_output() {
        let pytest = "..F.\n=== short test summary info ===\nFAILED tests/test_a.py::test_x - assert 1 == 2\nERROR tests/test_b.py::test_y[1-2]\nERROR tests/test_c.py\n1 failed, 3 passed\n";
        assert_eq!(
            names(pytest),
            vec!["tests/test_a.py::test_x", "tests/test_b.py::test_y[1-2]", "tests/test_c.py"]
        );
        let unittest = "======\nFAIL: test_bad (test_calc.CalcTest.test_bad)\n------\nERROR: test_old (test_calc.CalcTest)\n";
        assert_eq!(names(unittest), vec!["test_calc.CalcTest.test_bad", "test_calc.CalcTest.test_old"]);
        let libtest = "running 2 tests\ntest tests::ok ... ok\ntest tests::clamps ... FAILED\n";
        assert_eq!(names(libtest), vec!["tests::clamps"]);
        let tap = "TAP version 13\n# Subtest: a\nnot ok 1 - adds numbers\n  ---\nok 2 - b\nnot ok 3 - skipped # SKIP\n";
        assert_eq!(names(tap), vec!["adds numbers"]);
        assert!(names("all good\nFAILED to connect\n").is_empty());
        assert_eq!(
            first_failure_line(
                "collecting\nERROR tests/test_a.py - pytest.PytestRemovedIn10Warning: old\nERROR tests/test_b.py\n"
            ),
            Some("ERROR tests/test_a.py - pytest.PytestRemovedIn10Warning: old".to_owned())
        );
        assert_eq!(first_failure_line("all good\n"), None);
    }

    #[test]
    fn witnesses_select_the_flipped_tests_where_the_runner_can() {
        let set = |runner: Runner, list: &[&str]| -> BTreeSet<TestName> {
            list.iter().map(|name| TestName { runner, name: (*name).to_owned() }).collect()
        };
        assert_eq!(
            witness("python3 -m pytest -q", &set(Runner::Pytest, &["tests/test_a.py::test_x[a b]"])),
            "python3 -m pytest -q 'tests/test_a.py::test_x[a b]'"
        );
        assert_eq!(
            witness("python3 -m unittest", &set(Runner::Unittest, &["t.T.test"])),
            "python3 -m unittest t.T.test"
        );
        assert_eq!(
            witness("cargo test", &set(Runner::Libtest, &["a::b", "c"])),
            "cargo test -- --exact a::b c"
        );
        assert_eq!(
            witness("cargo test -- --nocapture", &set(Runner::Libtest, &["c"])),
            "cargo test -- --nocapture"
        );
        assert_eq!(witness("npm test", &set(Runner::Tap, &["adds"])), "npm test");
        assert_eq!(witness("make check", &BTreeSet::new()), "make check");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
    }
}
