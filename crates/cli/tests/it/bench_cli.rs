//! `revcal bench` as a maintainer and a user run it, on a small stand-in for the standard
//! benchmark built here: two repositories with real histories (a Python package tested with
//! unittest in a virtualenv its setup makes, and a Go module), each with two bugs fixed by
//! commits whose dates the test sets, their bugs files written from those fixes, and a
//! benchmark directory of `repos/` and `bugs/` from which `revcal bench generate` makes the
//! suite and manifest. Everything runs for real: git, the setup commands, the witnesses, the
//! repositories' test suites as a reviewer.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

const REVCAL: &str = env!("CARGO_BIN_EXE_revcal");

/// The Python package at its target: `clamp` and `mean` as fixed, `total` tested,
/// `is_adult` not.
const CALC: &str = "def clamp(x, lo, hi):
    if x < lo:
        return lo
    if x > hi:
        return hi
    return x


def total(items):
    result = 0
    for item in items:
        result = result + item
    return result


def mean(items):
    if not items:
        return 0
    return total(items) / len(items)


def is_adult(age):
    return age >= 18
";

const CALC_TESTS: &str = "import unittest
from calc.ops import clamp, mean, total


class T(unittest.TestCase):
    def test_clamp_low(self):
        self.assertEqual(clamp(-5, 0, 10), 0)

    def test_total(self):
        self.assertEqual(total([1, 2, 3]), 6)

    def test_mean(self):
        self.assertEqual(mean([2, 4]), 3)
";

const CALC_CLAMP_TEST: &str = "
    def test_clamp_high(self):
        self.assertEqual(clamp(15, 0, 10), 10)
";

const CALC_MEAN_TEST: &str = "
    def test_mean_empty(self):
        self.assertEqual(mean([]), 0)
";

/// The Go module at its target.
const SHOP: &str = "package price

// Discount is the price after a member's discount of a tenth from 100 on.
func Discount(total int, member bool) int {
\tif member && total >= 100 {
\t\treturn total - total/10
\t}
\treturn total
}

// Clamp keeps n within lo and hi.
func Clamp(n, lo, hi int) int {
\tif n < lo {
\t\treturn lo
\t}
\tif n > hi {
\t\treturn hi
\t}
\treturn n
}
";

const SHOP_TESTS: &str = "package price

import \"testing\"

func TestDiscount(t *testing.T) {
\tif got := Discount(200, true); got != 180 {
\t\tt.Fatalf(\"Discount(200, true) = %d\", got)
\t}
}
";

const SHOP_HUNDRED_TEST: &str = "
func TestDiscountAtHundred(t *testing.T) {
\tif got := Discount(100, true); got != 90 {
\t\tt.Fatalf(\"Discount(100, true) = %d\", got)
\t}
}
";

const SHOP_CLAMP_TEST: &str = "
func TestClampHigh(t *testing.T) {
\tif got := Clamp(15, 0, 10); got != 10 {
\t\tt.Fatalf(\"Clamp(15, 0, 10) = %d\", got)
\t}
}
";

const CALC_TEST_CMD: &str =
    "PYTHONPATH=. \"$REVCAL_BENCH_ENVS/calc/bin/python\" -m unittest discover -s tests -t . -q";
const SHOP_TEST_CMD: &str = "go test -count=1 ./...";

fn run_git(dir: &Path, args: &[&str], date: Option<&str>) -> String {
    git_output(dir, args, date).trim().to_owned()
}

/// git's whole standard output (a diff keeps its trailing spaces and newline).
fn git_output(dir: &Path, args: &[&str], date: Option<&str>) -> String {
    let mut command = Command::new("git");
    command.args(["-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]).args(args);
    if let Some(date) = date {
        command.env("GIT_AUTHOR_DATE", date).env("GIT_COMMITTER_DATE", date);
    }
    let output = command.current_dir(dir).output().unwrap();
    assert!(output.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// Commits everything in `repo` at `date` (author and committer) and returns the commit id.
fn commit(repo: &Path, message: &str, date: &str) -> String {
    run_git(repo, &["add", "-A"], None);
    run_git(repo, &["commit", "-qm", message], Some(date));
    run_git(repo, &["rev-parse", "HEAD"], None)
}

/// The patch that puts the bug fixed by `fix` back into `target`: the fix's source part
/// reversed and applied to a checkout of the target, diffed against it (what the miner does).
fn bug_patch(repo: &Path, fix: &str, source: &str) -> String {
    let scratch = tempfile::tempdir().unwrap();
    let clone = scratch.path().join("clone");
    run_git(scratch.path(), &["clone", "-q", repo.to_str().unwrap(), "clone"], None);
    let reversed = git_output(&clone, &["diff", fix, &format!("{fix}^"), "--", source], None);
    write(&clone.join("reverse.diff"), &reversed);
    run_git(&clone, &["apply", "reverse.diff"], None);
    std::fs::remove_file(clone.join("reverse.diff")).unwrap();
    git_output(&clone, &["diff"], None)
}

/// One bug of a bugs file.
fn bug_entry(
    file: &str,
    line: u32,
    category: &str,
    defect: &str,
    witness: &str,
    patch: &str,
    fix: &str,
) -> String {
    let patch: String = patch.lines().map(|line| format!("    {line}\n")).collect();
    format!(
        "- file: {file}\n  line: {line}\n  category: {category}\n  defect: {defect}\n  witness: '{}'\n  patch: |2\n{patch}  fix_commit: {fix}\n  fix_subject: {defect}\n",
        witness.replace('\'', "''")
    )
}

/// The stand-in benchmark: the repositories, and the benchmark's sources.
struct Standin {
    root: tempfile::TempDir,
    /// Fix commits: calc's clamp and mean, shop's hundred and clamp.
    fixes: [String; 4],
    targets: [String; 2],
}

impl Standin {
    fn new() -> Standin {
        let root = tempfile::tempdir().unwrap();
        let calc = root.path().join("origin/calc");
        std::fs::create_dir_all(&calc).unwrap();
        run_git(&calc, &["init", "-q"], None);
        write(&calc.join("calc/__init__.py"), "");
        write(&calc.join("tests/__init__.py"), "");
        let buggy = CALC
            .replace("    if x > hi:\n        return hi\n", "    if x > hi:\n        return hi - 1\n")
            .replace("    if not items:\n        return 0\n", "");
        write(&calc.join("calc/ops.py"), &buggy);
        write(&calc.join("tests/test_ops.py"), CALC_TESTS);
        commit(&calc, "calc", "2019-03-01T09:00:00Z");
        write(&calc.join("calc/ops.py"), &CALC.replace("    if not items:\n        return 0\n", ""));
        write(&calc.join("tests/test_ops.py"), &format!("{CALC_TESTS}{CALC_CLAMP_TEST}"));
        let calc_clamp = commit(&calc, "Fix clamp above the upper bound", "2020-06-15T10:00:00Z");
        write(&calc.join("calc/ops.py"), CALC);
        write(&calc.join("tests/test_ops.py"), &format!("{CALC_TESTS}{CALC_CLAMP_TEST}{CALC_MEAN_TEST}"));
        let calc_mean = commit(&calc, "Fix the mean of no items", "2023-09-01T08:30:00Z");
        write(&calc.join("README.md"), "calc\n");
        let calc_target = commit(&calc, "Say what calc is", "2024-01-10T12:00:00Z");

        let shop = root.path().join("origin/shop");
        std::fs::create_dir_all(&shop).unwrap();
        run_git(&shop, &["init", "-q"], None);
        write(&shop.join("go.mod"), "module example.com/shop\n\ngo 1.19\n");
        let buggy = SHOP.replace("total >= 100", "total > 100").replace("\t\treturn hi\n", "\t\treturn n\n");
        write(&shop.join("price/price.go"), &buggy);
        write(&shop.join("price/price_test.go"), SHOP_TESTS);
        commit(&shop, "shop", "2018-01-01T00:00:00Z");
        write(&shop.join("price/price.go"), &SHOP.replace("\t\treturn hi\n", "\t\treturn n\n"));
        write(&shop.join("price/price_test.go"), &format!("{SHOP_TESTS}{SHOP_HUNDRED_TEST}"));
        let shop_hundred = commit(&shop, "Fix the discount at exactly 100", "2021-02-02T02:02:02Z");
        write(&shop.join("price/price.go"), SHOP);
        write(
            &shop.join("price/price_test.go"),
            &format!("{SHOP_TESTS}{SHOP_HUNDRED_TEST}{SHOP_CLAMP_TEST}"),
        );
        let shop_clamp = commit(&shop, "Fix Clamp above hi", "2024-11-11T11:11:11Z");
        write(&shop.join("NOTES.md"), "shop\n");
        let shop_target = commit(&shop, "Notes", "2025-01-01T00:00:00Z");

        let standin = Standin {
            root,
            fixes: [calc_clamp, calc_mean, shop_hundred, shop_clamp],
            targets: [calc_target, shop_target],
        };
        standin.write_sources();
        standin
    }

    fn path(&self, name: &str) -> PathBuf {
        self.root.path().join(name)
    }

    /// The benchmark's directory.
    fn bench(&self) -> PathBuf {
        self.path("bench/standard")
    }

    /// `repos/*.yaml` and `bugs/*.yaml`.
    fn write_sources(&self) {
        let [calc_clamp, calc_mean, shop_hundred, shop_clamp] = &self.fixes;
        let (calc, shop) = (self.path("origin/calc"), self.path("origin/shop"));
        let url = |repo: &Path| format!("file://{}", repo.display());
        write(
            &self.bench().join("repos/calc.yaml"),
            &format!(
                "name: calc\nurl: {}\nlanguage: python\ntarget: {}\nsetup: 'python3 -m venv --without-pip \"$ENV\" && git rev-parse HEAD > \"$ENV/target\" && echo set up >> \"$REVCAL_BENCH_ENVS/../setups\"'\ntest_cmd: '{}'\nmined: by hand, in the test\n",
                url(&calc),
                self.targets[0],
                CALC_TEST_CMD.replace('\'', "''")
            ),
        );
        write(
            &self.bench().join("repos/shop.yaml"),
            &format!(
                "name: shop\nurl: {}\nlanguage: go\ntarget: {}\nsetup: ''\ntest_cmd: '{SHOP_TEST_CMD}'\n",
                url(&shop),
                self.targets[1]
            ),
        );
        let python = |test: &str| {
            format!(
                "PYTHONPATH=. \"$REVCAL_BENCH_ENVS/calc/bin/python\" -m unittest -q tests.test_ops.T.{test}"
            )
        };
        let calc_bugs = [
            bug_entry(
                "calc/ops.py",
                5,
                "off-by-one",
                "clamp returns one less than the upper bound above it",
                &python("test_clamp_high"),
                &bug_patch(&calc, calc_clamp, "calc"),
                calc_clamp,
            ),
            bug_entry(
                "calc/ops.py",
                17,
                "null-handling",
                "mean divides by zero for no items",
                &python("test_mean_empty"),
                &bug_patch(&calc, calc_mean, "calc"),
                calc_mean,
            ),
        ];
        write(&self.bench().join("bugs/calc.yaml"), &format!("# by hand\n{}", calc_bugs.concat()));
        let shop_bugs = [
            bug_entry(
                "price/price.go",
                5,
                "off-by-one",
                "a member's order of exactly 100 gets no discount",
                "go test -count=1 -run '^TestDiscountAtHundred$' ./price",
                &bug_patch(&shop, shop_hundred, "price/price.go"),
                shop_hundred,
            ),
            bug_entry(
                "price/price.go",
                17,
                "boundary",
                "Clamp returns n above hi instead of hi",
                "go test -count=1 -run '^TestClampHigh$' ./price",
                &bug_patch(&shop, shop_clamp, "price/price.go"),
                shop_clamp,
            ),
        ];
        write(&self.bench().join("bugs/shop.yaml"), &shop_bugs.concat());
    }

    /// `revcal ARGS` with this stand-in's environments (`envs`), clones and caches.
    fn revcal(&self, envs: &str, args: &[&str]) -> Output {
        Command::new(REVCAL)
            .args(args)
            .env("REVCAL_BENCH_ENVS", self.path(envs))
            .env_remove("REVCAL_BENCH_SUITE")
            .env("XDG_CACHE_HOME", self.path("cache"))
            .env("NO_COLOR", "1")
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .current_dir(self.root.path())
            .output()
            .unwrap()
    }

    /// `revcal bench generate` of the stand-in, from `repos` (a directory of clones by name).
    fn generate(&self, repos: &str, extra: &[&str]) -> Output {
        let bench = self.bench();
        let repos = self.path(repos);
        let mut args = vec![
            "bench",
            "generate",
            "--suite",
            bench.to_str().unwrap(),
            "--repos-dir",
            repos.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        self.revcal("envs", &args)
    }
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn json(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", String::from_utf8_lossy(&output.stdout), stderr(output)))
}

/// Whether the Go toolchain can run here (the Go repository needs it).
fn have_go() -> bool {
    Command::new("go").arg("version").output().is_ok_and(|o| o.status.success())
}

#[test]
fn generate_writes_the_suite_and_the_manifest_from_the_sources_and_the_same_bytes_again() {
    let standin = Standin::new();
    // calc is read from a clone under its name in --repos-dir; shop is cloned from its URL.
    std::fs::create_dir_all(standin.path("repos")).unwrap();
    run_git(
        &standin.path("repos"),
        &["clone", "-q", "--bare", standin.path("origin/calc").to_str().unwrap(), "calc"],
        None,
    );
    let output = standin.generate("repos", &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        stderr(&output).contains(
            "2 repositories, 4 bugs (0 verified), 2 languages (go 2 bugs in 1, python 2 bugs in 1)"
        ),
        "{}",
        stderr(&output)
    );
    let cloned: Vec<String> = std::fs::read_dir(standin.path("repos"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        cloned.iter().any(|name| name.ends_with(".git")),
        "shop cloned from its URL into --repos-dir: {cloned:?}"
    );

    let suite = std::fs::read_to_string(standin.bench().join("suite.yaml")).unwrap();
    let manifest = std::fs::read_to_string(standin.bench().join("manifest.yaml")).unwrap();
    let parsed: serde_yaml::Value = serde_yaml::from_str(&manifest).unwrap();
    let bugs = parsed["bugs"].as_sequence().unwrap();
    let dates: Vec<&str> = bugs.iter().map(|bug| bug["fix_date"].as_str().unwrap()).collect();
    // The committer dates the commits were made with, in UTC, by repository then date.
    assert_eq!(
        dates,
        ["2020-06-15T10:00:00Z", "2023-09-01T08:30:00Z", "2021-02-02T02:02:02Z", "2024-11-11T11:11:11Z"]
    );
    assert_eq!(bugs[0]["id"].as_str().unwrap(), format!("calc-{}", &standin.fixes[0][..12]));
    assert_eq!(bugs[0]["language"], "python");
    assert_eq!(bugs[3]["category"], "boundary");
    assert_eq!(bugs[3]["files"][0], "price/price.go");
    assert_eq!(bugs[3]["verified"], serde_yaml::Value::Null);
    assert!(bugs[2]["witness"].as_str().unwrap().contains("TestDiscountAtHundred"));
    let calc_base =
        run_git(&standin.path("origin/calc"), &["rev-parse", &format!("{}^", standin.targets[0])], None);
    assert_eq!(parsed["repositories"][0]["base"].as_str(), Some(calc_base.as_str()));
    assert!(suite.contains(&format!("commit: {}", standin.targets[1])), "{suite}");
    assert!(
        suite.contains("plants_file: bugs/shop.yaml") && suite.contains("one_at_a_time: true"),
        "{suite}"
    );

    // Again: the same bytes; --check agrees, and finds a changed source.
    let again = standin.generate("repos", &[]);
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
    assert_eq!(std::fs::read_to_string(standin.bench().join("suite.yaml")).unwrap(), suite);
    assert_eq!(std::fs::read_to_string(standin.bench().join("manifest.yaml")).unwrap(), manifest);
    let check = standin.generate("repos", &["--check"]);
    assert_eq!(check.status.code(), Some(0), "{}", stderr(&check));
    let bugs_file = standin.bench().join("bugs/calc.yaml");
    let text = std::fs::read_to_string(&bugs_file).unwrap();
    std::fs::write(&bugs_file, text.replace("category: null-handling", "category: arithmetic")).unwrap();
    let check = standin.generate("repos", &["--check"]);
    assert_eq!(check.status.code(), Some(2), "{}", stderr(&check));
    assert!(
        stderr(&check).contains("manifest.yaml not what `revcal bench generate` writes"),
        "{}",
        stderr(&check)
    );
    assert_eq!(
        std::fs::read_to_string(standin.bench().join("manifest.yaml")).unwrap(),
        manifest,
        "--check writes nothing"
    );

    // A mistake in the sources names the file and the field.
    std::fs::write(
        standin.bench().join("repos/shop.yaml"),
        "name: shop\nurl: x\nlanguage: cobol\ntarget: HEAD\ntest_cmd: t\n",
    )
    .unwrap();
    let refused = standin.generate("repos", &[]);
    assert_eq!(refused.status.code(), Some(1), "{}", stderr(&refused));
    assert!(stderr(&refused).contains("shop.yaml: language: `cobol` is not one of"), "{}", stderr(&refused));
}

#[test]
fn setup_makes_each_environment_once_in_a_checkout_of_its_target() {
    let standin = Standin::new();
    assert_eq!(standin.generate("repos", &[]).status.code(), Some(0));
    let bench = standin.bench();
    let setup = |extra: &[&str]| {
        let mut args = vec!["bench", "setup", "--suite", bench.to_str().unwrap(), "--repos-dir"];
        let repos = standin.path("repos");
        args.push(repos.to_str().unwrap());
        args.extend_from_slice(extra);
        standin.revcal("envs/all", &args)
    };
    let output = setup(&[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    // calc's setup ran in a checkout of its target, with ENV naming its directory.
    let target = std::fs::read_to_string(standin.path("envs/all/calc/target")).unwrap();
    assert_eq!(target.trim(), standin.targets[0]);
    assert!(standin.path("envs/all/calc/bin/python").exists());
    assert!(standin.path("envs/all/shop").is_dir(), "an empty setup leaves an empty directory");
    let runs = || std::fs::read_to_string(standin.path("envs/setups")).unwrap().lines().count();
    assert_eq!(runs(), 1);
    // Present: skipped. --force: made again.
    assert_eq!(setup(&[]).status.code(), Some(0));
    assert_eq!(runs(), 1, "skipped when present");
    assert_eq!(setup(&["--force", "--language", "python"]).status.code(), Some(0));
    assert_eq!(runs(), 2, "--force sets up again");

    // A setup that fails says so, exits 1 and leaves no directory for the next run to skip.
    let repo_file = bench.join("repos/calc.yaml");
    let text = std::fs::read_to_string(&repo_file).unwrap();
    std::fs::write(
        &repo_file,
        text.replace("python3 -m venv", "mkdir \"$ENV\" && echo broken >&2 && false && python3 -m venv"),
    )
    .unwrap();
    assert_eq!(standin.generate("repos", &[]).status.code(), Some(0));
    let failed = setup(&["--force"]);
    assert_eq!(failed.status.code(), Some(1), "{}", stderr(&failed));
    assert!(
        stderr(&failed).contains("repository calc: its setup") && stderr(&failed).contains("broken"),
        "{}",
        stderr(&failed)
    );
    assert!(!standin.path("envs/all/calc").exists());
}

/// The runs the benchmark's tests read: the stand-in, and its reports.
struct Runs {
    standin: Standin,
    /// `bench standard` with the test suites as the reviewer, twice.
    tests: [Output; 2],
    /// With a reviewer that approves everything.
    approve: Output,
    /// The test suites again, as two shards, merged.
    merged: Output,
}

/// `bench standard ARGS` on the stand-in, with the repro scorer and `--after 2022-01-01`.
fn standard(standin: &Standin, review: &str, extra: &[&str]) -> Output {
    let bench = standin.bench();
    let repos = standin.path("repos");
    let mut args = vec![
        "bench",
        "standard",
        "--suite",
        bench.to_str().unwrap(),
        "--repos-dir",
        repos.to_str().unwrap(),
        "--review-cmd",
        review,
        "--scorer",
        "repro",
        "-q",
    ];
    args.extend_from_slice(extra);
    standin.revcal("envs/run", &args)
}

fn runs() -> &'static Runs {
    static RUNS: OnceLock<Runs> = OnceLock::new();
    RUNS.get_or_init(|| {
        let standin = Standin::new();
        let generated = standin.generate("repos", &[]);
        assert_eq!(generated.status.code(), Some(0), "{}", stderr(&generated));
        let tests = format!("{REVCAL} bench test-reviewer");
        let first = standard(&standin, &tests, &["--after", "2022-01-01", "--json"]);
        let second = standard(&standin, &tests, &["--after", "2022-01-01", "--json"]);
        let approve = standard(&standin, "echo '[]'", &["--after", "2022-01-01", "--json"]);
        let shards: Vec<PathBuf> = (1..=2).map(|k| standin.path(&format!("shard-{k}.json"))).collect();
        for (k, shard) in shards.iter().enumerate() {
            let spec = format!("{}/2", k + 1);
            let output = standard(&standin, &tests, &["--shard", &spec, "--out", shard.to_str().unwrap()]);
            assert_eq!(output.status.code(), Some(0), "shard {spec}: {}", stderr(&output));
        }
        let bench = standin.bench();
        let mut merge =
            vec!["bench", "merge", "--suite", bench.to_str().unwrap(), "--after", "2022-01-01", "--json"];
        merge.extend(shards.iter().map(|s| s.to_str().unwrap()));
        let merged = standin.revcal("envs/run", &merge);
        Runs { standin, tests: [first, second], approve, merged }
    })
}

#[test]
fn two_runs_of_the_same_reviewer_give_the_same_report_byte_for_byte_and_merged_shards_too() {
    if !have_go() {
        eprintln!("skipped: no Go toolchain here (the stand-in benchmark holds a Go module)");
        return;
    }
    let runs = runs();
    for output in runs.tests.iter().chain([&runs.approve, &runs.merged]) {
        assert_eq!(output.status.code(), Some(0), "{}", stderr(output));
    }
    assert_eq!(runs.tests[0].stdout, runs.tests[1].stdout, "the same reviewer twice: the same bytes");
    assert_eq!(runs.merged.stdout, runs.tests[0].stdout, "two shards merged: the unsharded report");
    let report = json(&runs.tests[0]);
    let text = String::from_utf8_lossy(&runs.tests[0].stdout);
    let root = runs.standin.root.path().to_str().unwrap();
    assert!(!text.contains(root), "no path of the run in the report");
    assert_eq!(report["suite"]["units"], 2);
    assert_eq!(report["benchmark"]["name"], "standard");
    assert_eq!(report["benchmark"]["languages"], serde_json::json!(["go", "python"]));
    // The environments were made first (the witnesses need calc's virtualenv).
    assert!(runs.standin.path("envs/run/calc/bin/python").exists());
    assert!(stderr(&runs.tests[0]).contains("environment calc: set up"), "{}", stderr(&runs.tests[0]));
    assert!(
        stderr(&runs.tests[0]).contains("benchmark standard"),
        "the human summary: {}",
        stderr(&runs.tests[0])
    );
}

/// Applies a plant of the report to a fresh clone of its repository at the target and runs
/// `command` there: true when it fails (the plant is caught).
fn fails_with(standin: &Standin, plant: &Value, bugs: &[(String, String)], command: &str) -> bool {
    let entry = plant["entry"].as_str().unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let origin = standin.path(&format!("origin/{entry}"));
    run_git(scratch.path(), &["clone", "-q", origin.to_str().unwrap(), "tree"], None);
    let tree = scratch.path().join("tree");
    let target = if entry == "calc" { &standin.targets[0] } else { &standin.targets[1] };
    run_git(&tree, &["checkout", "-q", target], None);
    let run = |command: &str| {
        Command::new("sh")
            .args(["-c", command])
            .current_dir(&tree)
            .env("REVCAL_BENCH_ENVS", standin.path("envs/run"))
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .output()
            .unwrap()
            .status
            .success()
    };
    assert!(run(command), "{command} passes at the target");
    if plant["kind"] == "real" {
        let fix = plant["fixCommit"].as_str().unwrap();
        let (_, patch) = bugs.iter().find(|(commit, _)| commit == fix).unwrap();
        write(&tree.join("bug.diff"), patch);
        run_git(&tree, &["apply", "bug.diff"], None);
    } else {
        let path = tree.join(plant["file"].as_str().unwrap());
        let text = std::fs::read_to_string(&path).unwrap();
        let index = plant["line"].as_u64().unwrap() as usize - 1;
        let mut lines: Vec<&str> = text.split('\n').collect();
        assert_eq!(lines[index], plant["original"].as_str().unwrap());
        lines[index] = plant["mutated"].as_str().unwrap();
        std::fs::write(&path, lines.join("\n")).unwrap();
    }
    !run(command)
}

#[test]
fn the_test_suites_recall_is_the_share_of_plants_their_tests_and_witnesses_catch() {
    if !have_go() {
        eprintln!("skipped: no Go toolchain here (the stand-in benchmark holds a Go module)");
        return;
    }
    let runs = runs();
    let standin = &runs.standin;
    let report = json(&runs.tests[0]);
    let manifest: serde_yaml::Value =
        serde_yaml::from_str(&std::fs::read_to_string(standin.bench().join("manifest.yaml")).unwrap())
            .unwrap();
    let mut bugs: Vec<(String, String)> = Vec::new();
    for name in ["calc", "shop"] {
        let file: serde_yaml::Value = serde_yaml::from_str(
            &std::fs::read_to_string(standin.bench().join(format!("bugs/{name}.yaml"))).unwrap(),
        )
        .unwrap();
        for bug in file.as_sequence().unwrap() {
            bugs.push((
                bug["fix_commit"].as_str().unwrap().to_owned(),
                bug["patch"].as_str().unwrap().to_owned(),
            ));
        }
    }
    // Recomputed here, plant by plant, without revcal: a real bug is caught when its witness
    // fails with it; a mutant when the repository's test command does.
    let (mut real, mut synthetic) = ((0, 0), (0, 0));
    for plant in report["plants"].as_array().unwrap() {
        if plant["status"] == "excluded" {
            continue;
        }
        let entry = plant["entry"].as_str().unwrap();
        let command = if plant["kind"] == "real" {
            let fix = plant["fixCommit"].as_str().unwrap();
            let bug =
                manifest["bugs"].as_sequence().unwrap().iter().find(|b| b["fix_commit"] == fix).unwrap();
            bug["witness"].as_str().unwrap().to_owned()
        } else if entry == "calc" {
            CALC_TEST_CMD.to_owned()
        } else {
            SHOP_TEST_CMD.to_owned()
        };
        let caught = fails_with(standin, plant, &bugs, &command);
        assert_eq!(caught, plant["status"] == "caught", "{plant}");
        let count = if plant["kind"] == "real" { &mut real } else { &mut synthetic };
        count.0 += usize::from(caught);
        count.1 += 1;
    }
    assert_eq!(real, (4, 4), "every bug's witness catches it");
    assert!(synthetic.1 >= 4, "the mutants of both repositories: {synthetic:?}");
    assert!(synthetic.0 < synthetic.1, "is_adult is untested: some mutant is missed ({synthetic:?})");
    let kinds = &report["benchmark"]["perKind"];
    assert_eq!((kinds["real"]["caught"].as_u64(), kinds["real"]["total"].as_u64()), (Some(4), Some(4)));
    assert_eq!(
        (kinds["synthetic"]["caught"].as_u64(), kinds["synthetic"]["plants"].as_u64()),
        (Some(synthetic.0 as u64), Some(synthetic.1 as u64))
    );
    let recall = report["recall"].as_f64().unwrap();
    let share = (real.0 + synthetic.0) as f64 / (real.1 + synthetic.1) as f64;
    assert!((recall - share).abs() < 1e-12, "{recall} vs {share}");
    // Its tests pass on every clean change: no false alarm.
    assert_eq!(report["falseAlarms"], 0);
    assert!(report["cleanReviews"].as_u64().unwrap() >= 2);
    // Per language, over the bugs, with Wilson's interval at two bugs.
    let python = &report["benchmark"]["perLanguage"]["python"];
    assert_eq!((python["plants"].as_u64(), python["caught"].as_u64()), (Some(2), Some(2)));
    let interval = &python["recallInterval"];
    assert!((interval["low"].as_f64().unwrap() - 0.342_37).abs() < 1e-4, "{interval}");
    assert_eq!(interval["high"], 1.0);
}

#[test]
fn after_splits_the_bugs_at_the_date_their_fix_was_committed() {
    if !have_go() {
        eprintln!("skipped: no Go toolchain here (the stand-in benchmark holds a Go module)");
        return;
    }
    let runs = runs();
    let tests = json(&runs.tests[0]);
    let approve = json(&runs.approve);
    // Fixed 2020-06-15 and 2021-02-02 before; 2023-09-01 and 2024-11-11 after.
    for (report, caught) in [(&tests, 2), (&approve, 0)] {
        let benchmark = &report["benchmark"];
        assert_eq!(benchmark["after"], "2022-01-01");
        for half in ["fixedBefore", "fixedAfter"] {
            assert_eq!(benchmark[half]["plants"], 2, "{half}: {benchmark}");
            assert_eq!(benchmark[half]["caught"], caught, "{half}: {benchmark}");
        }
    }
    // A date that is not one is refused before anything runs.
    let refused = standard(&runs.standin, "echo '[]'", &["--after", "2022-13-01"]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(stderr(&refused).contains("`2022-13-01` is not a date"), "{}", stderr(&refused));
}

/// P(X >= k) for X ~ Binomial(n, 1/2), by hand.
fn upper_tail(k: u64, n: u64) -> f64 {
    let choose = |n: u64, k: u64| (0..k).fold(1.0, |acc, i| acc * (n - i) as f64 / (i + 1) as f64);
    (k..=n).map(|i| choose(n, i)).sum::<f64>() / 2f64.powi(n as i32)
}

#[test]
fn compare_pairs_two_reviewers_plant_by_plant_with_mcnemars_exact_p_value() {
    if !have_go() {
        eprintln!("skipped: no Go toolchain here (the stand-in benchmark holds a Go module)");
        return;
    }
    let runs = runs();
    let standin = &runs.standin;
    let (a, b) = (standin.path("tests.json"), standin.path("approve.json"));
    std::fs::write(&a, &runs.tests[0].stdout).unwrap();
    std::fs::write(&b, &runs.approve.stdout).unwrap();
    let compared =
        standin.revcal("envs/run", &["bench", "compare", a.to_str().unwrap(), b.to_str().unwrap(), "--json"]);
    assert_eq!(compared.status.code(), Some(0), "{}", stderr(&compared));
    let comparison = json(&compared);
    let tests = json(&runs.tests[0]);
    let caught = tests["caught"].as_u64().unwrap();
    let all = &comparison["kinds"]["all"];
    assert_eq!(all["test"], "mcnemar");
    assert_eq!(
        all["aOnly"].as_u64(),
        Some(caught),
        "every plant the tests caught, approve-everything missed"
    );
    assert_eq!(all["bOnly"], 0);
    // Two-sided exact McNemar: twice P(X >= caught), X ~ Binomial(caught, 1/2), at most 1.
    let by_hand = (2.0 * upper_tail(caught, caught)).min(1.0);
    assert!((all["pValue"].as_f64().unwrap() - by_hand).abs() < 1e-12, "{all} vs {by_hand}");
    assert!((all["pABetter"].as_f64().unwrap() - upper_tail(caught, caught)).abs() < 1e-12);
    assert!((all["pBBetter"].as_f64().unwrap() - 1.0).abs() < 1e-12, "{all}");
    let real = &comparison["kinds"]["real"];
    assert_eq!(real["aOnly"].as_u64(), Some(4));
    assert!((real["pValue"].as_f64().unwrap() - 2.0 * 0.5f64.powi(4)).abs() < 1e-12, "{real}");
    // The human form says which is better.
    let human = standin.revcal("envs/run", &["bench", "compare", a.to_str().unwrap(), b.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&human.stdout);
    assert!(text.contains("A is better (two-sided p="), "{text}");

    // Reports of another suite (here: its hash edited) are refused.
    let mut other = json(&runs.approve);
    other["suite"]["hash"] = Value::from("sha256:0000");
    let c = standin.path("other.json");
    std::fs::write(&c, serde_json::to_string(&other).unwrap()).unwrap();
    let refused = standin.revcal("envs/run", &["bench", "compare", a.to_str().unwrap(), c.to_str().unwrap()]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(stderr(&refused).contains("the reports are of different suites"), "{}", stderr(&refused));
}

#[test]
fn verify_lists_the_bugs_that_no_longer_reproduce_and_write_records_the_others() {
    let standin = Standin::new();
    // A third bug of calc whose witness does not fail with it: `is_adult` is untested.
    let calc = standin.path("origin/calc");
    let patch = "--- a/calc/ops.py\n+++ b/calc/ops.py\n@@ -22,2 +22,2 @@\n def is_adult(age):\n-    return age >= 18\n+    return age > 18\n";
    // Its "fix" is calc's first commit (a commit of the repository, and no other bug's fix).
    let fix = run_git(&calc, &["rev-list", "--max-parents=0", "HEAD"], None);
    let bogus = bug_entry(
        "calc/ops.py",
        23,
        "off-by-one",
        "an 18-year-old is no adult",
        "PYTHONPATH=. \"$REVCAL_BENCH_ENVS/calc/bin/python\" -m unittest -q tests.test_ops.T.test_total",
        patch,
        &fix,
    );
    let bugs_file = standin.bench().join("bugs/calc.yaml");
    let text = std::fs::read_to_string(&bugs_file).unwrap();
    std::fs::write(&bugs_file, format!("{text}{bogus}")).unwrap();
    // Only the Python repository: no Go toolchain needed.
    let bench = standin.bench();
    let repos = standin.path("repos");
    let verify = |extra: &[&str]| {
        let mut args = vec![
            "bench",
            "verify",
            "--suite",
            bench.to_str().unwrap(),
            "--repos-dir",
            repos.to_str().unwrap(),
            "--language",
            "python",
            "-q",
        ];
        args.extend_from_slice(extra);
        standin.revcal("envs/verify", &args)
    };
    let written = verify(&["--write"]);
    assert_eq!(written.status.code(), Some(2), "{}", stderr(&written));
    let said = stderr(&written);
    let bogus_id = format!("calc-{}", &fix[..12]);
    assert!(said.contains(&format!("does not reproduce: {bogus_id} (calc): its witness no longer passes at the target and fails with the bug")), "{said}");
    assert!(said.contains("2 of 3 bugs reproduce"), "{said}");
    let manifest: serde_yaml::Value =
        serde_yaml::from_str(&std::fs::read_to_string(standin.bench().join("manifest.yaml")).unwrap())
            .unwrap();
    for bug in manifest["bugs"].as_sequence().unwrap() {
        let verified = &bug["verified"];
        if bug["repository"] == "shop" || bug["id"] == bogus_id.as_str() {
            assert_eq!(verified, &serde_yaml::Value::Null, "{bug:?}");
        } else {
            assert_eq!(verified["revcal"].as_str(), Some(env!("CARGO_PKG_VERSION")), "{bug:?}");
            assert_eq!(verified["date"].as_str().map(str::len), Some(10), "{bug:?}");
        }
    }
    // Without the bogus bug, every bug of calc reproduces, and verify exits 0.
    std::fs::write(&bugs_file, &text).unwrap();
    let written = verify(&["--write"]);
    assert_eq!(written.status.code(), Some(0), "{}", stderr(&written));
    assert!(stderr(&written).contains("2 of 2 bugs reproduce"), "{}", stderr(&written));
    let check = verify(&[]);
    assert_eq!(check.status.code(), Some(0), "{}", stderr(&check));
}

/// The repositories' test suites as a reviewer blame the code a failing test checks, never the
/// test: undoing a test the change adds makes the suite pass too, and would hide the bug.
#[test]
fn the_test_reviewer_blames_the_code_and_never_a_test_the_change_adds() {
    let standin = Standin::new();
    let generated = standin.generate("repos", &[]);
    assert_eq!(generated.status.code(), Some(0), "{}", stderr(&generated));
    // calc at its target, changed as a target commit may be: a new test of `is_adult`, and a
    // bug in `is_adult` that only that test sees.
    let scratch = tempfile::tempdir().unwrap();
    run_git(scratch.path(), &["clone", "-q", standin.path("origin/calc").to_str().unwrap(), "tree"], None);
    let tree = scratch.path().join("tree");
    run_git(&tree, &["checkout", "-q", &standin.targets[0]], None);
    let base = run_git(&tree, &["rev-parse", "HEAD^"], None);
    let tests = format!(
        "{}\n    def test_adult_at_18(self):\n        self.assertTrue(is_adult(18))\n",
        std::fs::read_to_string(tree.join("tests/test_ops.py"))
            .unwrap()
            .replace("import clamp, mean, total", "import clamp, is_adult, mean, total")
    );
    write(&tree.join("tests/test_ops.py"), &tests);
    write(&tree.join("calc/ops.py"), &CALC.replace("return age >= 18", "return age > 18"));
    // The environment the test command names: this machine's python3.
    let python = Command::new("python3").args(["-c", "import sys; print(sys.executable)"]).output().unwrap();
    let envs = scratch.path().join("envs");
    std::fs::create_dir_all(envs.join("calc/bin")).unwrap();
    std::os::unix::fs::symlink(String::from_utf8_lossy(&python.stdout).trim(), envs.join("calc/bin/python"))
        .unwrap();
    let output = Command::new(REVCAL)
        .args(["bench", "test-reviewer", "--suite", standin.bench().to_str().unwrap()])
        .current_dir(&tree)
        .env("REVCAL_BASE", &base)
        .env("REVCAL_BENCH_ENVS", &envs)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let findings: Value = serde_json::from_slice(&output.stdout).unwrap();
    let located: Vec<(&str, u64)> = findings["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|finding| (finding["file"].as_str().unwrap(), finding["line"].as_u64().unwrap()))
        .collect();
    assert_eq!(located, vec![("calc/ops.py", 23)], "{findings:#}");
    assert_eq!(findings["findings"][0]["repro"], CALC_TEST_CMD);
}
