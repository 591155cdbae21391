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
    /// `go.mod`.
    Go,
    /// `pom.xml` (Maven).
    Maven,
    /// `build.gradle`, `build.gradle.kts` or `settings.gradle(.kts)` (Gradle; its wrapper
    /// `./gradlew` when the tree has one).
    Gradle,
}

impl Ecosystem {
    /// Detects the ecosystem of the tree at `root` (Rust, then Go, Maven, Gradle, Python,
    /// JavaScript).
    pub fn detect(root: &Path) -> Option<Ecosystem> {
        let has = |name: &str| root.join(name).is_file();
        if has("Cargo.toml") {
            Some(Ecosystem::Rust)
        } else if has("go.mod") {
            Some(Ecosystem::Go)
        } else if has("pom.xml") {
            Some(Ecosystem::Maven)
        } else if ["build.gradle", "build.gradle.kts", "settings.gradle", "settings.gradle.kts"]
            .iter()
            .any(|n| has(n))
        {
            Some(Ecosystem::Gradle)
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
    /// unittest` when pytest is not installed), `npm test`, `go test -count=1 ./...`,
    /// `mvn -q -B test`, `./gradlew test` (or `gradle test` without a wrapper, judged at
    /// `root`).
    pub fn default_test_cmd(self, root: &Path) -> String {
        match self {
            Ecosystem::Rust => "cargo test".into(),
            Ecosystem::Python if pytest_installed() => "python3 -m pytest -q -rfE -p no:cacheprovider".into(),
            Ecosystem::Python => "python3 -m unittest".into(),
            Ecosystem::JavaScript => "npm test".into(),
            Ecosystem::Go => "go test -count=1 ./...".into(),
            Ecosystem::Maven => "mvn -q -B test".into(),
            Ecosystem::Gradle => format!("{} test", gradle(root)),
        }
    }

    /// The default build check after the fix is reversed, given the changed source files
    /// (already shell-quoted) and the test command: a bug that does not build is no review
    /// target. Go, Maven and Gradle compile the tests too (a fix whose test calls an API it
    /// adds does not build reversed), with the test command's own options where it is the
    /// tool's (`mvn -o ... test` checks with `mvn -o ... test-compile`).
    pub fn default_build_cmd(self, quoted_sources: &str, test_cmd: &str, root: &Path) -> String {
        let test_cmd = test_cmd.trim();
        match self {
            Ecosystem::Rust => "cargo test --no-run --quiet".into(),
            Ecosystem::Python => format!("python3 -m py_compile {quoted_sources}"),
            Ecosystem::JavaScript => {
                format!("for f in {quoted_sources}; do node --check \"$f\" || exit 1; done")
            }
            Ecosystem::Go => "go test -count=1 -run '^$' ./...".into(),
            Ecosystem::Maven => match test_cmd.strip_suffix(" test") {
                Some(head) if head.starts_with("mvn") => format!("{head} test-compile"),
                _ => "mvn -q -B test-compile".into(),
            },
            Ecosystem::Gradle => match test_cmd.strip_suffix(" test") {
                Some(head) if head.contains("gradle") => format!("{head} testClasses"),
                _ => format!("{} testClasses", gradle(root)),
            },
        }
    }
}

/// Gradle's wrapper when the tree has one, else `gradle`.
fn gradle(root: &Path) -> &'static str {
    if root.join("gradlew").is_file() { "./gradlew" } else { "gradle" }
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
    /// Go test functions, with their package's import path (`go test -run`).
    GoTest,
    /// JUnit test methods as Surefire names them (`Class#method`, `mvn -Dtest=`).
    Surefire,
    /// JUnit test methods as Gradle names them (`Class.method`, `gradle test --tests`).
    Gradle,
}

/// A failing test as a runner named it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct TestName {
    /// The runner.
    pub(crate) runner: Runner,
    /// The name as the runner takes it back.
    pub(crate) name: String,
    /// Go: the import path of the test's package (empty for the other runners).
    pub(crate) package: String,
}

/// The failing tests a run's output names.
pub(crate) fn failing_tests(output: &str) -> BTreeSet<TestName> {
    let mut found = BTreeSet::new();
    // `go test` names a failing test first and its package after its output, in the
    // package's `FAIL\timport/path\t0.01s` line.
    let mut go_pending: Vec<String> = Vec::new();
    for line in output.lines() {
        let line = strip_ansi(line);
        if let Some(name) = go_failure(&line) {
            // Subtests (`TestA/case`) fail with their parent, which `-run` selects.
            let top = name.split('/').next().unwrap_or(name).to_owned();
            if !go_pending.contains(&top) {
                go_pending.push(top);
            }
        } else if let Some(package) = go_failed_package(&line) {
            for name in go_pending.drain(..) {
                found.insert(TestName { runner: Runner::GoTest, name, package: package.to_owned() });
            }
        } else if let Some(test) = failure(&line) {
            found.insert(test);
        }
    }
    found
}

/// The line without terminal colour codes (Maven writes `\x1b[0m` even in batch mode).
fn strip_ansi(line: &str) -> std::borrow::Cow<'_, str> {
    if !line.contains('\u{1b}') {
        return std::borrow::Cow::Borrowed(line);
    }
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            // CSI: ESC [ parameters, ending with a letter.
            if chars.next() == Some('[') {
                for c in chars.by_ref() {
                    if c.is_ascii_alphabetic() {
                        break;
                    }
                }
            }
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// `--- FAIL: TestName (0.00s)` (any indentation for subtests).
fn go_failure(line: &str) -> Option<&str> {
    let rest = line.trim_start().strip_prefix("--- FAIL: ")?;
    let name = rest.split(" (").next()?.trim();
    (name.starts_with("Test") || name.starts_with("Example") || name.starts_with("Fuzz")).then_some(name)
}

/// `FAIL\texample.com/mod/pkg\t0.003s` (or `[build failed]`): the package of the failures
/// named before it.
fn go_failed_package(line: &str) -> Option<&str> {
    let mut fields = line.strip_prefix("FAIL\t")?.split('\t');
    let package = fields.next()?.trim();
    (!package.is_empty() && !package.contains(' ')).then_some(package)
}

/// The first line of a run's output that names a failing test, as the runner printed it (at
/// most 300 characters): what a user reads first to see why a run failed.
pub(crate) fn first_failure_line(output: &str) -> Option<String> {
    let line = output
        .lines()
        .map(strip_ansi)
        .find(|line| failure(line).is_some() || go_failure(line).is_some())?
        .trim()
        .to_owned();
    Some(if line.chars().count() > 300 { line.chars().take(300).collect::<String>() + "..." } else { line })
}

/// The failing test a line of output names, if it names one (`go test`'s need the lines
/// after them: [`failing_tests`]).
fn failure(line: &str) -> Option<TestName> {
    let line = line.trim_end();
    let named = |runner: Runner, name: String| Some(TestName { runner, name, package: String::new() });
    if let Some(name) = pytest_failure(line) {
        named(Runner::Pytest, name)
    } else if let Some(name) = unittest_failure(line) {
        named(Runner::Unittest, name)
    } else if let Some(name) = line.strip_prefix("test ").and_then(|rest| rest.strip_suffix(" ... FAILED")) {
        named(Runner::Libtest, name.to_owned())
    } else if let Some(name) = surefire_failure(line) {
        named(Runner::Surefire, name)
    } else if let Some(name) = gradle_failure(line) {
        named(Runner::Gradle, name)
    } else {
        tap_failure(line).and_then(|name| named(Runner::Tap, name))
    }
}

/// Surefire's line for one failing test: `[ERROR] method(pkg.Class)  Time elapsed: 0.01 s
/// <<< FAILURE!` (Surefire 2) or `[ERROR] pkg.Class.method -- Time elapsed: 0.01 s <<<
/// FAILURE!` (Surefire 3), `<<< ERROR!` alike; as `pkg.Class#method`. The class's own
/// summary line (`Tests run: ... <<< FAILURE! - in pkg.Class`) names no test.
fn surefire_failure(line: &str) -> Option<String> {
    if !(line.contains("<<< FAILURE!") || line.contains("<<< ERROR!")) {
        return None;
    }
    let rest = line.strip_prefix("[ERROR] ").unwrap_or(line).trim_start();
    if rest.starts_with("Tests run:") {
        return None;
    }
    let head = rest.split("Time elapsed").next()?.trim().trim_end_matches("--").trim();
    let (class, method) = match head.split_once('(') {
        Some((method, class)) => (class.strip_suffix(')')?, method),
        None => head.rsplit_once('.')?,
    };
    // JUnit 4 parameters (`method[0]`) are run by the method's name.
    let method = method.split('[').next()?.trim();
    let plain = |text: &str| {
        !text.is_empty() && text.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '.' || c == '$')
    };
    (plain(class) && plain(method) && !method.contains('.')).then(|| format!("{class}#{method}"))
}

/// Gradle's line for one failing test: `pkg.CalcTest > addsNumbers FAILED` (JUnit 5:
/// `addsNumbers() FAILED`); as `pkg.CalcTest.addsNumbers`.
fn gradle_failure(line: &str) -> Option<String> {
    let rest = line.trim().strip_suffix(" FAILED")?;
    let (class, method) = rest.split_once(" > ")?;
    let method = method.trim().trim_end_matches("()");
    let plain = |text: &str| {
        !text.is_empty() && text.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '.' || c == '$')
    };
    (plain(class.trim()) && plain(method) && !method.contains('.'))
        .then(|| format!("{}.{method}", class.trim()))
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
/// it is (its exit code is then the witness). `go_module` is the module path of the tree's
/// `go.mod`, so that a Go package is named as a directory (`./price`).
pub(crate) fn witness(test_cmd: &str, tests: &BTreeSet<TestName>, go_module: Option<&str>) -> String {
    let trimmed = test_cmd.trim();
    let Some(first) = tests.iter().next() else { return trimmed.to_owned() };
    if tests.iter().any(|test| test.runner != first.runner) {
        return trimmed.to_owned();
    }
    let names = || tests.iter().map(|test| shell_quote(&test.name)).collect::<Vec<_>>().join(" ");
    match first.runner {
        Runner::Pytest if trimmed.contains("pytest") => {
            format!("{} {}", pytest_without_paths(trimmed), names())
        }
        Runner::Unittest if trimmed.ends_with("-m unittest") => format!("{trimmed} {}", names()),
        Runner::Libtest if trimmed.starts_with("cargo test") && !trimmed.contains(" -- ") => {
            format!("{trimmed} -- --exact {}", names())
        }
        Runner::GoTest if trimmed.starts_with("go test") && !trimmed.contains(" -run") => {
            go_witness(trimmed, tests, go_module).unwrap_or_else(|| trimmed.to_owned())
        }
        Runner::Surefire if trimmed.starts_with("mvn") && !trimmed.contains("-Dtest=") => {
            // `-Dtest=pkg.A#m1+m2,pkg.B#m3`.
            let mut by_class: std::collections::BTreeMap<&str, Vec<&str>> = Default::default();
            for test in tests {
                if let Some((class, method)) = test.name.split_once('#') {
                    by_class.entry(class).or_default().push(method);
                }
            }
            let selector: Vec<String> =
                by_class.iter().map(|(class, methods)| format!("{class}#{}", methods.join("+"))).collect();
            format!("{trimmed} {}", shell_quote(&format!("-Dtest={}", selector.join(","))))
        }
        Runner::Gradle if trimmed.contains("gradle") && trimmed.ends_with(" test") => {
            let filters: Vec<String> =
                tests.iter().map(|test| format!("--tests {}", shell_quote(&test.name))).collect();
            format!("{trimmed} {}", filters.join(" "))
        }
        _ => trimmed.to_owned(),
    }
}

/// pytest's options that take their value as the next word (`-k EXPR`, `-p no:cacheprovider`);
/// written `--opt=value` they are one word.
const PYTEST_VALUED: &[&str] = &[
    "-k",
    "-m",
    "-c",
    "-p",
    "-o",
    "-W",
    "-r",
    "-n",
    "--rootdir",
    "--ignore",
    "--ignore-glob",
    "--deselect",
    "--maxfail",
    "--tb",
    "--junitxml",
    "--junit-xml",
    "--confcutdir",
    "--basetemp",
    "--import-mode",
    "--durations",
    "--log-level",
    "--override-ini",
    "--config-file",
    "--timeout",
    "--cov",
    "--cov-report",
];

/// The pytest command without the paths it names (`pytest -q tests` -> `pytest -q`): a witness
/// adds the flipped tests' node ids, and with a directory still named, pytest would run every
/// test under it besides them. Left whole when a word after `pytest` is more than a plain word
/// (quotes, variables, redirections, a second command): only what is plainly a path is dropped.
fn pytest_without_paths(test_cmd: &str) -> String {
    let words: Vec<&str> = test_cmd.split_whitespace().collect();
    let Some(at) =
        words.iter().position(|word| *word == "pytest" || word.ends_with("/pytest") || *word == "py.test")
    else {
        return test_cmd.to_owned();
    };
    let plain = |word: &&str| !word.contains(['\'', '"', '$', '`', ';', '&', '|', '<', '>', '(', ')', '\\']);
    if !words[at + 1..].iter().all(plain) {
        return test_cmd.to_owned();
    }
    let mut kept: Vec<&str> = words[..=at].to_vec();
    let mut rest = words[at + 1..].iter();
    while let Some(word) = rest.next() {
        if word.starts_with('-') {
            kept.push(word);
            if PYTEST_VALUED.contains(word)
                && let Some(value) = rest.next()
            {
                kept.push(value);
            }
        }
        // Else a path (or node id) the command narrows to: dropped.
    }
    if kept.len() == words.len() { test_cmd.to_owned() } else { kept.join(" ") }
}

/// `go test ... -run '^(TestA|TestB)$' ./pkg ./other`: the command's package patterns
/// (`./...`) replaced by the failing tests' packages, as directories of the module where
/// their import paths are under it.
fn go_witness(test_cmd: &str, tests: &BTreeSet<TestName>, go_module: Option<&str>) -> Option<String> {
    let mut words: Vec<&str> = test_cmd.split_whitespace().collect();
    // The package patterns are the last words that are not flags.
    while words.last().is_some_and(|word| !word.starts_with('-') && *word != "test") {
        words.pop();
    }
    let mut names: Vec<&str> = tests.iter().map(|test| test.name.as_str()).collect();
    names.dedup();
    let pattern =
        if names.len() == 1 { format!("^{}$", names[0]) } else { format!("^({})$", names.join("|")) };
    let mut packages: Vec<String> = tests
        .iter()
        .map(|test| match go_module {
            Some(module) if test.package == module => ".".to_owned(),
            Some(module) => test
                .package
                .strip_prefix(module)
                .and_then(|rest| rest.strip_prefix('/'))
                .map_or_else(|| test.package.clone(), |dir| format!("./{dir}")),
            None => test.package.clone(),
        })
        .collect();
    packages.sort();
    packages.dedup();
    (!packages.is_empty())
        .then(|| format!("{} -run {} {}", words.join(" "), shell_quote(&pattern), packages.join(" ")))
}

/// The Go packages of `tests` that `go test` named in GOPATH mode, renamed as directories
/// of `root`, the tree the tests ran in. Outside a module and outside GOPATH (a commit from
/// before the project had a `go.mod`, tested with `GO111MODULE=auto`), `go test` names a
/// package `_` and its absolute directory: a witness naming it would run only in that
/// scratch clone, gone once mining ends, so it names `.` or `./dir` instead.
pub(crate) fn gopath_packages_as_directories(tests: BTreeSet<TestName>, root: &Path) -> BTreeSet<TestName> {
    // The tree as given and as the system resolves it (`go` reads the working directory
    // the kernel reports, which has no symbolic link in it).
    let roots: Vec<std::path::PathBuf> =
        [Some(root.to_path_buf()), root.canonicalize().ok()].into_iter().flatten().collect();
    tests
        .into_iter()
        .map(|mut test| {
            let directory = test.package.strip_prefix('_').filter(|_| test.runner == Runner::GoTest);
            let relative = directory.and_then(|dir| {
                roots.iter().find_map(|root| Path::new(dir).strip_prefix(root).ok().map(Path::to_path_buf))
            });
            if let Some(relative) = relative {
                test.package = match relative.to_str() {
                    Some("") => ".".to_owned(),
                    Some(dir) => format!("./{dir}"),
                    None => test.package,
                };
            }
            test
        })
        .collect()
}

/// The module path a `go.mod` declares (`module example.com/shop`).
pub(crate) fn go_module(go_mod: &str) -> Option<String> {
    go_mod.lines().find_map(|line| {
        let path = line.trim().strip_prefix("module")?.trim();
        let path = path.trim_matches('"');
        (!path.is_empty() && !path.contains(' ')).then(|| path.to_owned())
    })
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

    /// Output of `go test -count=1 ./...` (Go 1.19) on a module with a failing test at its
    /// root and a failing subtest in `pkg/a`, as printed.
    const GO_TEST: &str = "--- FAIL: TestRoot (0.00s)\n    s_test.go:5: bad\nFAIL\nFAIL\texample.com/s\t0.005s\n--- FAIL: TestX (0.00s)\n    --- FAIL: TestX/case_one (0.00s)\n        a_test.go:5: no\nFAIL\nFAIL\texample.com/s/pkg/a\t0.009s\nFAIL\n";

    /// Output of `mvn -o -q -B test` (Maven 3.8.7, Surefire 2.22.3, JUnit 4.13.2), colour codes
    /// and all.
    const SUREFIRE: &str = "\u{1b}[0m\u{1b}[0m[ERROR] Tests run: 2, Failures: 1, Errors: 0, Skipped: 0, Time elapsed: 0.149 s <<< FAILURE! - in acme.CalcTest\n[ERROR] doubles(acme.CalcTest)  Time elapsed: 0.01 s  <<< FAILURE!\njava.lang.AssertionError: expected:<4> but was:<5>\n\tat acme.CalcTest.doubles(CalcTest.java:4)\n\n[ERROR] Failures: \n[ERROR]   CalcTest.doubles:4 expected:<4> but was:<5>\n[ERROR] Tests run: 2, Failures: 1, Errors: 0, Skipped: 0\n";

    #[test]
    fn go_maven_and_gradle_failures_are_read_with_what_selects_them() {
        let go: Vec<(String, String)> =
            failing_tests(GO_TEST).into_iter().map(|t| (t.package, t.name)).collect();
        assert_eq!(
            go,
            [
                ("example.com/s".to_owned(), "TestRoot".to_owned()),
                ("example.com/s/pkg/a".to_owned(), "TestX".to_owned())
            ]
        );
        assert_eq!(first_failure_line(GO_TEST).as_deref(), Some("--- FAIL: TestRoot (0.00s)"));
        assert_eq!(names(SUREFIRE), ["acme.CalcTest#doubles"]);
        // Surefire 3's form, and an error rather than a failure.
        assert_eq!(
            names("[ERROR] acme.CalcTest.totals -- Time elapsed: 0.02 s <<< ERROR!\n"),
            ["acme.CalcTest#totals"]
        );
        let gradle = "> Task :test FAILED\n\nacme.CalcTest > doubles FAILED\n    java.lang.AssertionError at CalcTest.java:4\n\nacme.CalcTest > totals() FAILED\n";
        assert_eq!(names(gradle), ["acme.CalcTest.doubles", "acme.CalcTest.totals"]);
    }

    #[test]
    fn go_maven_and_gradle_witnesses_run_only_the_flipped_tests() {
        let go = failing_tests(GO_TEST);
        assert_eq!(
            witness("go test -count=1 ./...", &go, Some("example.com/s")),
            "go test -count=1 -run '^(TestRoot|TestX)$' . ./pkg/a"
        );
        let one: BTreeSet<TestName> = go.iter().filter(|t| t.name == "TestX").cloned().collect();
        assert_eq!(witness("go test ./...", &one, None), "go test -run '^TestX$' example.com/s/pkg/a");
        assert_eq!(witness("go test -run Foo ./...", &one, None), "go test -run Foo ./...");
        assert_eq!(go_module("// c\nmodule example.com/s\n\ngo 1.19\n").as_deref(), Some("example.com/s"));

        let surefire = failing_tests(&format!(
            "{SUREFIRE}[ERROR] totals(acme.CalcTest)  Time elapsed: 0 s  <<< ERROR!\n[ERROR] parses(acme.ParserTest)  Time elapsed: 0 s  <<< FAILURE!\n"
        ));
        assert_eq!(
            witness("mvn -o -q -B test", &surefire, None),
            "mvn -o -q -B test '-Dtest=acme.CalcTest#doubles+totals,acme.ParserTest#parses'"
        );
        let gradle = failing_tests("acme.CalcTest > doubles FAILED\n");
        assert_eq!(witness("./gradlew test", &gradle, None), "./gradlew test --tests acme.CalcTest.doubles");
    }

    /// Output of `go test -count=1 ./...` in GOPATH mode (`GO111MODULE=auto` on a commit
    /// without a `go.mod`), outside GOPATH: packages are named `_` and their directory.
    const GO_TEST_GOPATH: &str = "--- FAIL: TestRoot (0.00s)\n    s_test.go:5: bad\nFAIL\nFAIL\t_/tmp/revcal-bugs-Ab12/tree\t0.005s\n--- FAIL: TestX (0.00s)\n        a_test.go:5: no\nFAIL\nFAIL\t_/tmp/revcal-bugs-Ab12/tree/pkg/a\t0.009s\nFAIL\n";

    #[test]
    fn go_packages_outside_a_module_are_named_by_their_directory_in_the_tree() {
        let root = Path::new("/tmp/revcal-bugs-Ab12/tree");
        let tests = gopath_packages_as_directories(failing_tests(GO_TEST_GOPATH), root);
        assert_eq!(
            witness("go test -count=1 ./...", &tests, None),
            "go test -count=1 -run '^(TestRoot|TestX)$' . ./pkg/a"
        );
        // A package of another tree, or a module's import path, is left as it is.
        let other = gopath_packages_as_directories(
            failing_tests(GO_TEST_GOPATH),
            Path::new("/tmp/revcal-bugs-Ab12/tre"),
        );
        assert_eq!(
            witness("go test ./...", &other, None),
            "go test -run '^(TestRoot|TestX)$' _/tmp/revcal-bugs-Ab12/tree _/tmp/revcal-bugs-Ab12/tree/pkg/a"
        );
        let module = gopath_packages_as_directories(failing_tests(GO_TEST), root);
        assert_eq!(module, failing_tests(GO_TEST));
    }

    /// A package without a `go.mod` tested by the real `go test` in GOPATH mode: the witness
    /// made from its output runs the failing test in another copy of the tree too, where the
    /// first copy's directory is gone.
    #[test]
    fn a_gopath_mode_witness_runs_in_another_copy_of_the_tree() {
        let go = |dir: &Path, script: &str| {
            std::process::Command::new("sh")
                .args(["-c", script])
                .current_dir(dir)
                .env("GO111MODULE", "auto")
                .output()
        };
        let scratch = tempfile::tempdir().unwrap();
        if go(scratch.path(), "go version").map_or(true, |out| !out.status.success()) {
            eprintln!("skipped: Go is not installed (apt-get install golang-go)");
            return;
        }
        let files = [
            ("calc.go", "package calc\n\nfunc Double(n int) int { return n + n + 1 }\n"),
            (
                "calc_test.go",
                "package calc\n\nimport \"testing\"\n\nfunc TestDouble(t *testing.T) {\n\tif Double(2) != 4 {\n\t\tt.Fatal(\"Double(2)\")\n\t}\n}\n\nfunc TestOther(t *testing.T) {}\n",
            ),
            ("sub/sub.go", "package sub\n"),
            ("sub/sub_test.go", "package sub\n\nimport \"testing\"\n\nfunc TestSub(t *testing.T) {}\n"),
        ];
        let first = scratch.path().join("first");
        let second = scratch.path().join("second");
        for tree in [&first, &second] {
            for (name, text) in files {
                let path = tree.join(name);
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::write(path, text).unwrap();
            }
        }
        let run = go(&first, "go test -count=1 ./...").unwrap();
        let output = String::from_utf8_lossy(&run.stdout).into_owned();
        assert!(output.contains("FAIL\t_/"), "{output}");
        let tests = gopath_packages_as_directories(failing_tests(&output), &first);
        let witness = witness("go test -count=1 ./...", &tests, None);
        assert_eq!(witness, "go test -count=1 -run '^TestDouble$' .", "{output}");
        std::fs::remove_dir_all(&first).unwrap();
        let rerun = go(&second, &witness).unwrap();
        let output = String::from_utf8_lossy(&rerun.stdout).into_owned();
        assert!(!rerun.status.success(), "{output}");
        assert!(output.contains("--- FAIL: TestDouble"), "{output}");
        assert!(!output.contains("sub"), "only the failing test's package runs: {output}");
        std::fs::write(second.join("calc.go"), "package calc\n\nfunc Double(n int) int { return n + n }\n")
            .unwrap();
        assert!(go(&second, &witness).unwrap().status.success());
    }

    #[test]
    fn go_maven_and_gradle_trees_get_their_tools_commands() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join("go.mod"), "module m\n").unwrap();
        assert_eq!(Ecosystem::detect(root), Some(Ecosystem::Go));
        assert_eq!(Ecosystem::Go.default_test_cmd(root), "go test -count=1 ./...");
        assert_eq!(
            Ecosystem::Go.default_build_cmd("x.go", "go test ./...", root),
            "go test -count=1 -run '^$' ./..."
        );
        std::fs::remove_file(root.join("go.mod")).unwrap();
        std::fs::write(root.join("pom.xml"), "<project/>").unwrap();
        assert_eq!(Ecosystem::detect(root), Some(Ecosystem::Maven));
        assert_eq!(
            Ecosystem::Maven.default_build_cmd("A.java", "mvn -o -Dmaven.repo.local=/r test", root),
            "mvn -o -Dmaven.repo.local=/r test-compile"
        );
        std::fs::remove_file(root.join("pom.xml")).unwrap();
        std::fs::write(root.join("build.gradle.kts"), "").unwrap();
        assert_eq!(Ecosystem::detect(root), Some(Ecosystem::Gradle));
        assert_eq!(Ecosystem::Gradle.default_test_cmd(root), "gradle test");
        std::fs::write(root.join("gradlew"), "").unwrap();
        assert_eq!(Ecosystem::Gradle.default_test_cmd(root), "./gradlew test");
        assert_eq!(
            Ecosystem::Gradle.default_build_cmd("A.java", "./gradlew test", root),
            "./gradlew testClasses"
        );
    }

    #[test]
    fn witnesses_select_the_flipped_tests_where_the_runner_can() {
        let set = |runner: Runner, list: &[&str]| -> BTreeSet<TestName> {
            list.iter()
                .map(|name| TestName { runner, name: (*name).to_owned(), package: String::new() })
                .collect()
        };
        assert_eq!(
            witness("python3 -m pytest -q", &set(Runner::Pytest, &["tests/test_a.py::test_x[a b]"]), None),
            "python3 -m pytest -q 'tests/test_a.py::test_x[a b]'"
        );
        // The paths the test command narrows to are left out: the witness runs its tests only.
        let flipped = set(Runner::Pytest, &["tests/unit/test_a.py::test_x"]);
        assert_eq!(
            witness(
                "PYTHONPATH=src python3 -m pytest -q tests -p no:cacheprovider tests/unit",
                &flipped,
                None
            ),
            "PYTHONPATH=src python3 -m pytest -q -p no:cacheprovider tests/unit/test_a.py::test_x"
        );
        assert_eq!(
            witness("pytest -W ignore::DeprecationWarning -k 'not slow' tests", &flipped, None),
            "pytest -W ignore::DeprecationWarning -k 'not slow' tests tests/unit/test_a.py::test_x",
            "quoted words: left whole"
        );
        assert_eq!(
            witness(".venv/bin/pytest --maxfail 1 -x --tb=short tests", &flipped, None),
            ".venv/bin/pytest --maxfail 1 -x --tb=short tests/unit/test_a.py::test_x"
        );
        assert_eq!(
            witness("python3 -m unittest", &set(Runner::Unittest, &["t.T.test"]), None),
            "python3 -m unittest t.T.test"
        );
        assert_eq!(
            witness("cargo test", &set(Runner::Libtest, &["a::b", "c"]), None),
            "cargo test -- --exact a::b c"
        );
        assert_eq!(
            witness("cargo test -- --nocapture", &set(Runner::Libtest, &["c"]), None),
            "cargo test -- --nocapture"
        );
        assert_eq!(witness("npm test", &set(Runner::Tap, &["adds"]), None), "npm test");
        assert_eq!(witness("make check", &BTreeSet::new(), None), "make check");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
    }
}
