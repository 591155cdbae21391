//! `revcal calibrate suite` and `revcal calibrate merge` as a user runs them: real git
//! repositories, a real test-suite reviewer (Python's unittest), shards merged back into the
//! unsharded report byte for byte.

use serde_json::Value;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// Three small projects; their tests cover some functions and leave others untested, so a
/// test-suite reviewer catches some plants and misses others.
const PROJECTS: [(&str, &str, &str); 3] = [
    (
        "alpha",
        "def add(a, b):\n    return a + b\n\n\ndef is_even(n):\n    return n % 2 == 0\n\n\ndef clamp(x, lo, hi):\n    if x < lo:\n        return lo\n    if x > hi:\n        return hi\n    return x\n",
        "import unittest\nfrom src.ops import add, is_even\n\n\nclass T(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n\n    def test_even(self):\n        self.assertTrue(is_even(4))\n        self.assertFalse(is_even(3))\n",
    ),
    (
        "beta",
        "def first(items):\n    if not items:\n        return None\n    return items[0]\n\n\ndef total(items):\n    result = 0\n    for item in items:\n        result = result + item\n    return result\n\n\ndef scale(x, k):\n    return x * k\n",
        "import unittest\nfrom src.ops import first\n\n\nclass T(unittest.TestCase):\n    def test_first(self):\n        self.assertEqual(first([7, 8]), 7)\n        self.assertIsNone(first([]))\n",
    ),
    (
        "gamma",
        "def is_adult(age):\n    return age >= 18\n\n\ndef discount(price, member):\n    if member and price > 100:\n        return price - 10\n    return price\n\n\ndef middle(a, b):\n    return (a + b) // 2\n",
        "import unittest\nfrom src.ops import is_adult, middle\n\n\nclass T(unittest.TestCase):\n    def test_adult(self):\n        self.assertTrue(is_adult(18))\n        self.assertFalse(is_adult(17))\n\n    def test_middle(self):\n        self.assertEqual(middle(2, 6), 4)\n",
    ),
];

const TESTS: &str = "python3 -m unittest discover -s tests -t . -q";

/// The test-suite reviewer: when the tests fail, it reports every line of the change under
/// review (`git diff {base}`: each project is one commit, so every line of `src`) with the
/// tests as its repro command; the repro scorer credits a line only when the tests fail with
/// that line's bug alone.
const REVIEWER: &str = r#"import json, re, subprocess, sys
TESTS = "python3 -m unittest discover -s tests -t . -q"
findings = []
if subprocess.run(TESTS.split(), capture_output=True).returncode != 0:
    diff = subprocess.run(["git", "diff", "-U0", sys.argv[1], "--", "src"], capture_output=True, text=True).stdout
    path = None
    for line in diff.splitlines():
        if line.startswith("+++ b/"):
            path = line[6:]
        hunk = re.match(r"@@ -\S+ \+(\d+)(?:,(\d+))? @@", line)
        if hunk and path:
            start, count = int(hunk.group(1)), int(hunk.group(2) or 1)
            for number in range(start, start + max(count, 1)):
                findings.append({"file": path, "line": number, "message": "the tests fail", "repro": TESTS})
print(json.dumps({"findings": findings}))
"#;

struct Corpus {
    root: tempfile::TempDir,
}

fn git(dir: &Path, args: &[&str]) {
    let output = Command::new("git").args(args).current_dir(dir).output().unwrap();
    assert!(output.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&output.stderr));
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn json(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", String::from_utf8_lossy(&output.stdout), stderr(output)))
}

impl Corpus {
    /// The three projects, each a repository with one commit, a suite file naming them
    /// (alpha with two trials), and the reviewer.
    fn new() -> Corpus {
        let root = tempfile::tempdir().unwrap();
        for (name, source, tests) in PROJECTS {
            let repo = root.path().join("repos").join(name);
            std::fs::create_dir_all(repo.join("src")).unwrap();
            std::fs::create_dir_all(repo.join("tests")).unwrap();
            std::fs::write(repo.join("src/__init__.py"), "").unwrap();
            std::fs::write(repo.join("src/ops.py"), source).unwrap();
            std::fs::write(repo.join("tests/__init__.py"), "").unwrap();
            std::fs::write(repo.join("tests/test_ops.py"), tests).unwrap();
            git(&repo, &["init", "-q"]);
            git(&repo, &["add", "."]);
            git(&repo, &["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", name]);
        }
        std::fs::write(
            root.path().join("suite.yaml"),
            "defaults: {plants: 5, seed: 3}\nentries:\n  - {repo: repos/alpha, trials: 2}\n  - repo: repos/beta\n  - repo: repos/gamma\n",
        )
        .unwrap();
        std::fs::write(root.path().join("reviewer.py"), REVIEWER).unwrap();
        Corpus { root }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.root.path().join(name)
    }

    fn revcal(&self, args: &[&str]) -> Output {
        self.calibrate(args).output().unwrap()
    }

    /// `revcal calibrate ARGS` recording with the authority's key `key` (its key file's
    /// text) on standard input, run as a reviewer's user would run it.
    fn revcal_recording(&self, args: &[&str], key: &str) -> Output {
        let mut command = self.calibrate(args);
        command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
        let _hand_back = crate::reviewer_user::as_reviewer_user(&mut command, self.root.path());
        let mut child = command.spawn().unwrap();
        child.stdin.take().unwrap().write_all(key.as_bytes()).unwrap();
        child.wait_with_output().unwrap()
    }

    /// The command of `revcal calibrate ARGS` with the corpus's reviewer and gates.
    fn calibrate(&self, args: &[&str]) -> Command {
        let reviewer = format!("python3 {} {{base}}", self.path("reviewer.py").display());
        let mut command = Command::new(env!("CARGO_BIN_EXE_revcal"));
        command
            .args(["calibrate"])
            .args(args)
            .args([
                "--review-cmd",
                &reviewer,
                "--scorer",
                "repro",
                "--min-recall",
                "0.3",
                "--min-plants",
                "1",
                "-q",
            ])
            .current_dir(self.root.path())
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .env("XDG_CACHE_HOME", self.path("cache"));
        command
    }

    /// Merges `files` with the gate the shards ran with (`--min-recall 0.3`), then `extra`.
    fn merge(&self, files: &[PathBuf], extra: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_revcal"))
            .args(["calibrate", "merge"])
            .args(files)
            .args(if extra.contains(&"--min-recall") { &[][..] } else { &["--min-recall", "0.3"] })
            .args(extra)
            .current_dir(self.root.path())
            .output()
            .unwrap()
    }
}

/// Whether the project's tests fail with `mutated` in place of line `line` (which must read
/// `original`): computed here, apart from revcal, in a copy of the repository.
fn tests_fail_with(repo: &Path, file: &str, line: usize, original: &str, mutated: &str) -> bool {
    let copy = tempfile::tempdir().unwrap();
    for relative in ["src/__init__.py", "src/ops.py", "tests/__init__.py", "tests/test_ops.py"] {
        let target = copy.path().join(relative);
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::fs::copy(repo.join(relative), &target).unwrap();
    }
    let path = copy.path().join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    assert_eq!(lines[line - 1], original, "{file}:{line}");
    lines[line - 1] = mutated.to_owned();
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let status = Command::new("sh")
        .args(["-c", &format!("{TESTS} >/dev/null 2>&1")])
        .current_dir(copy.path())
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .status()
        .unwrap();
    !status.success()
}

fn python_available() -> bool {
    Command::new("python3").arg("--version").output().is_ok_and(|o| o.status.success())
}

#[test]
fn a_suite_pools_recall_over_its_entries_and_merged_shards_print_the_unsharded_report() {
    if !python_available() {
        eprintln!("skipped: python3 is not installed (the reviewer runs Python's unittest)");
        return;
    }
    let corpus = Corpus::new();
    let before: Vec<Vec<u8>> = PROJECTS
        .iter()
        .map(|(name, ..)| std::fs::read(corpus.path("repos").join(name).join("src/ops.py")).unwrap())
        .collect();

    let whole = corpus.revcal(&["suite", "suite.yaml", "--json"]);
    let code = whole.status.code();
    assert!(code == Some(0) || code == Some(2), "{}", stderr(&whole));
    let report = json(&whole);

    // Pooled recall equals the share computed independently: each plant alone, the tests run
    // here, in a copy.
    let plants = report["plants"].as_array().unwrap();
    let mut expected_caught = 0;
    let mut total = 0;
    for plant in plants.iter().filter(|p| p["status"] != "excluded") {
        let entry = plant["entry"].as_str().unwrap();
        let trials = if entry == "alpha" { 2 } else { 1 };
        let fails = tests_fail_with(
            &corpus.path("repos").join(entry),
            plant["file"].as_str().unwrap(),
            plant["line"].as_u64().unwrap() as usize,
            plant["original"].as_str().unwrap(),
            plant["mutated"].as_str().unwrap(),
        );
        assert_eq!(plant["status"] == "caught", fails, "{plant}");
        expected_caught += usize::from(fails) * trials;
        total += trials;
    }
    assert!(total >= 12, "plants in every entry: {report}");
    assert!(expected_caught > 0 && expected_caught < total, "the tests catch some plants and miss others");
    assert_eq!(report["caught"], expected_caught);
    assert_eq!(report["total"], total);
    let recall = report["recall"].as_f64().unwrap();
    assert!((recall - expected_caught as f64 / total as f64).abs() < 1e-12);
    // Per entry, and the interval over plants (not plant x trial).
    let entries = report["entries"].as_array().unwrap();
    assert_eq!(
        entries.iter().map(|e| e["name"].as_str().unwrap()).collect::<Vec<_>>(),
        ["alpha", "beta", "gamma"]
    );
    let summed: u64 = entries.iter().map(|e| e["caught"].as_u64().unwrap()).sum();
    assert_eq!(summed, expected_caught as u64);
    assert_eq!(report["suite"]["units"], 4);
    assert_eq!(report["suite"]["unitErrors"], serde_json::json!([]));
    assert_eq!(report["trials"].as_array().unwrap().len(), 2, "alpha ran twice");

    // Merged shards (n = 1, 2, 3) print the unsharded report, byte for byte.
    for count in 1..=3 {
        let mut files = Vec::new();
        for index in 1..=count {
            let out = corpus.path(&format!("shard-{index}-of-{count}.json"));
            let shard = corpus.revcal(&[
                "suite",
                "suite.yaml",
                "--shard",
                &format!("{index}/{count}"),
                "--out",
                out.to_str().unwrap(),
            ]);
            assert_eq!(shard.status.code(), Some(0), "{}", stderr(&shard));
            files.push(out);
        }
        // Given in any order.
        files.reverse();
        let merged = corpus.merge(&files, &["--json"]);
        assert_eq!(merged.status.code(), whole.status.code(), "{}", stderr(&merged));
        assert_eq!(
            String::from_utf8_lossy(&merged.stdout),
            String::from_utf8_lossy(&whole.stdout),
            "{count} shard(s) merged"
        );
    }

    // The user's repositories are as they were: every unit ran in its own checkout.
    for ((name, ..), bytes) in PROJECTS.iter().zip(&before) {
        let repo = corpus.path("repos").join(name);
        assert_eq!(&std::fs::read(repo.join("src/ops.py")).unwrap(), bytes);
        let status = Command::new("git")
            .args(["status", "--porcelain", "--ignored"])
            .current_dir(&repo)
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&status.stdout), "", "{name} is clean");
        assert!(!repo.join(".git/worktrees").exists(), "no worktree registered in {name}");
    }
}

#[test]
fn merge_refuses_missing_duplicate_and_mismatched_shards() {
    if !python_available() {
        eprintln!("skipped: python3 is not installed (the reviewer runs Python's unittest)");
        return;
    }
    let corpus = Corpus::new();
    let shard = |index: usize, count: usize| {
        let out = corpus.path(&format!("s{index}of{count}.json"));
        let output = corpus.revcal(&[
            "suite",
            "suite.yaml",
            "--shard",
            &format!("{index}/{count}"),
            "--out",
            out.to_str().unwrap(),
        ]);
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        out
    };
    let (one, two) = (shard(1, 2), shard(2, 2));
    let refused = |files: &[PathBuf], needle: &str| {
        let output = corpus.merge(files, &[]);
        assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
        assert!(stderr(&output).contains(needle), "expected `{needle}` in: {}", stderr(&output));
    };
    refused(std::slice::from_ref(&one), "missing shard 2/2 of 2");
    refused(&[one.clone(), one.clone(), two.clone()], "shard 1/2 is given twice");
    let third = shard(1, 3);
    refused(&[one.clone(), third], "differ in shard count");

    // Another reviewer command: other settings.
    let other = corpus.path("other.json");
    let output = Command::new(env!("CARGO_BIN_EXE_revcal"))
        .args([
            "calibrate",
            "suite",
            "suite.yaml",
            "--review-cmd",
            "echo '[]'",
            "--scorer",
            "repro",
            "--min-recall",
            "0.3",
        ])
        .args(["--min-plants", "1", "-q", "--shard", "2/2", "--out", other.to_str().unwrap()])
        .current_dir(corpus.root.path())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    refused(&[one.clone(), other], "differ in settings");

    // A shard file that lost a unit.
    let mut value: Value = serde_json::from_str(&std::fs::read_to_string(&two).unwrap()).unwrap();
    value["units"].as_array_mut().unwrap().pop();
    let cut = corpus.path("cut.json");
    std::fs::write(&cut, value.to_string()).unwrap();
    refused(&[one.clone(), cut], "should hold");
    std::fs::write(corpus.path("junk.json"), "{}").unwrap();
    refused(&[corpus.path("junk.json")], "not a shard result");

    // The suite edited between shards.
    let text = std::fs::read_to_string(corpus.path("suite.yaml")).unwrap();
    std::fs::write(corpus.path("suite.yaml"), text.replace("seed: 3", "seed: 4")).unwrap();
    let edited = shard(2, 2);
    refused(&[one, edited], "differ in their suite");
}

#[test]
fn shard_flags_are_checked_before_anything_runs() {
    let corpus = Corpus::new();
    let cases: [(&[&str], &str); 5] = [
        (&["suite", "suite.yaml", "--shard", "0/3", "--out", "x.json"], "counted from 1"),
        (&["suite", "suite.yaml", "--shard", "4/3", "--out", "x.json"], "K runs from 1 to 3"),
        (&["suite", "suite.yaml", "--shard", "1/3"], "give --out FILE"),
        (&["suite", "suite.yaml", "--shard", "1/3", "--out", "x.json", "--json"], "partial"),
        (&["suite", "missing.yaml"], "cannot read suite file"),
    ];
    for (args, needle) in cases {
        let output = corpus.revcal(args);
        assert_eq!(output.status.code(), Some(1), "{args:?}: {}", stderr(&output));
        assert!(stderr(&output).contains(needle), "{args:?}: expected `{needle}` in {}", stderr(&output));
    }
    assert!(!corpus.path("x.json").exists());
}

/// A reviewer worse on one category than the suite's saved baseline fails naming it; the
/// same reviewer against itself passes.
#[test]
fn a_suite_regression_in_one_category_fails_against_the_baseline() {
    let corpus = Corpus::new();
    // Each entry gets a plants file: four arithmetic plants (`+` -> `-`) and two others.
    let mut suite = String::from("entries:\n");
    for (name, ..) in PROJECTS {
        let repo = corpus.path("repos").join(name);
        let lines: Vec<String> = (0..6).map(|i| format!("def f{i}(a, b):\n    return a + b\n\n\n")).collect();
        std::fs::write(repo.join("src/more.py"), lines.concat()).unwrap();
        git(&repo, &["add", "."]);
        git(&repo, &["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "more"]);
        let plants: String = (0..6)
            .map(|i| {
                let (category, mutated) = if i < 4 { ("arithmetic", "a - b") } else { ("boundary", "a + b + 1") };
                format!("- {{file: src/more.py, line: {}, original: \"a + b\", mutated: \"{mutated}\", category: {category}}}\n", 2 + 4 * i)
            })
            .collect();
        std::fs::write(corpus.path(&format!("{name}-plants.yaml")), plants).unwrap();
        suite.push_str(&format!("  - {{repo: repos/{name}, plants_file: {name}-plants.yaml}}\n"));
    }
    std::fs::write(corpus.path("regress.yaml"), suite).unwrap();
    // Reviewers that read the code and report each wrong sum (`a - b`, `a + b + 1`: the
    // functions all add); the worse one overlooks subtractions.
    let reviewer = |name: &str, wrong: &str| {
        let path = corpus.path(name);
        std::fs::write(
            &path,
            format!("#!/bin/sh\ngrep -n -E '{wrong}' src/more.py | sed 's/^\\([0-9]*\\):.*/src\\/more.py:\\1: wrong result/'\n"),
        )
        .unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path.display().to_string()
    };
    let good = reviewer("good.sh", "a - b|a \\+ b \\+ 1");
    let worse = reviewer("worse.sh", "a \\+ b \\+ 1");
    let baseline = corpus.path("baseline.json");
    let run = |review: &str, extra: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_revcal"))
            .args([
                "calibrate",
                "suite",
                "regress.yaml",
                "--review-cmd",
                review,
                "--scorer",
                "string",
                "--min-recall",
                "0",
                "-q",
            ])
            .args(extra)
            .current_dir(corpus.root.path())
            .output()
            .unwrap()
    };
    let saved = run(&good, &["--save-baseline", baseline.to_str().unwrap(), "--json"]);
    assert_eq!(saved.status.code(), Some(0), "{}", stderr(&saved));
    assert_eq!(json(&saved)["recall"], 1.0, "the good reviewer reports every plant");

    let same = run(&good, &["--baseline", baseline.to_str().unwrap(), "--json"]);
    assert_eq!(same.status.code(), Some(0), "{}", stderr(&same));
    assert_eq!(json(&same)["baseline"]["test"], "mcnemar", "the same plants of the same entries are paired");

    let dropped = run(&worse, &["--baseline", baseline.to_str().unwrap(), "--json"]);
    assert_eq!(dropped.status.code(), Some(2), "{}", stderr(&dropped));
    let comparison = &json(&dropped)["baseline"];
    assert_eq!(comparison["regressed"], serde_json::json!(["arithmetic"]), "{comparison}");
    assert!(stderr(&dropped).contains("REGRESSION in arithmetic"), "{}", stderr(&dropped));
}

/// A unit that fails (here: an entry whose repository is gone) is listed, not counted, and
/// the run exits 1; the other entries still run and are reported.
#[test]
fn a_failed_unit_is_listed_not_counted_and_the_run_exits_1() {
    let corpus = Corpus::new();
    std::fs::write(
        corpus.path("broken.yaml"),
        "defaults: {plants: 3}\nentries:\n  - repo: repos/gamma\n  - {repo: repos/missing, name: gone}\n",
    )
    .unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_revcal"))
        .args(["calibrate", "suite", "broken.yaml", "--review-cmd", "echo '[]'", "--scorer", "repro"])
        .args(["--min-recall", "0", "--min-plants", "1", "-q", "--json"])
        .current_dir(corpus.root.path())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let report = json(&output);
    let errors = report["suite"]["unitErrors"].as_array().unwrap();
    assert_eq!(errors.len(), 1, "{report}");
    assert_eq!(errors[0]["entry"], "gone");
    assert!(errors[0]["error"].as_str().unwrap().contains("no such directory"), "{}", errors[0]);
    assert_eq!(report["entries"][1]["errors"], 1);
    assert_eq!(report["entries"][1]["total"], 0, "nothing of the failed unit is counted");
    assert_eq!(report["total"], report["entries"][0]["total"]);
    assert!(report["total"].as_u64().unwrap() > 0);
    assert!(stderr(&output).contains("1 unit(s) failed"), "{}", stderr(&output));
    assert!(stderr(&output).contains("INCOMPLETE (1 unit failed)"), "{}", stderr(&output));
}

/// An entry given by URL is cloned once into --repos-dir and reused by the next run.
#[test]
fn a_url_entry_is_cloned_once_and_reused() {
    let corpus = Corpus::new();
    let url = format!("file://{}", corpus.path("repos/beta").display());
    std::fs::write(corpus.path("url.yaml"), format!("entries:\n  - {{repo: '{url}', plants: 3}}\n")).unwrap();
    let run = || {
        Command::new(env!("CARGO_BIN_EXE_revcal"))
            .args(["calibrate", "suite", "url.yaml", "--review-cmd", "echo '[]'", "--scorer", "repro"])
            .args(["--min-recall", "0", "--min-plants", "1", "-q", "--json", "--repos-dir", "clones"])
            .current_dir(corpus.root.path())
            .output()
            .unwrap()
    };
    let first = run();
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    assert_eq!(json(&first)["entries"][0]["name"], "beta");
    let clones: Vec<_> =
        std::fs::read_dir(corpus.path("clones")).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(clones.len(), 1, "{clones:?}");
    assert!(clones[0].join("HEAD").is_file(), "a bare clone");
    let marker = clones[0].join("revcal-test-marker");
    std::fs::write(&marker, "").unwrap();
    let second = run();
    assert_eq!(second.status.code(), Some(0), "{}", stderr(&second));
    assert!(marker.exists(), "the clone was reused, not made again");
    assert_eq!(first.stdout, second.stdout);
}

/// An untrusted suite cannot copy readable files into what revcal prints or stores: a plants
/// file outside the suite's directory (`../`, absolute, `/dev/zero`, a symbolic link beside the
/// suite) is refused before anything runs, naming the entry and field; a plants file inside
/// that is not one (a copy of /etc/passwd) fails its unit naming the line and the type
/// expected, and nothing of its content reaches stderr, the report or the shard file.
#[test]
fn a_suite_cannot_copy_a_file_into_reports() {
    let corpus = Corpus::new();
    let secret = "root:x:0:0:TOP-SECRET-LINE:/root:/bin/bash\n";
    let outside =
        corpus.root.path().parent().unwrap().join(format!(
            "revcal-outside-{}.txt",
            corpus.root.path().file_name().unwrap().to_string_lossy()
        ));
    std::fs::write(&outside, secret).unwrap();
    let outside_guard = scopeguard(outside.clone());
    std::os::unix::fs::symlink(&outside, corpus.path("link.yaml")).unwrap();
    let relative_outside = format!("../{}", outside.file_name().unwrap().to_string_lossy());
    for (plants_file, reason) in [
        (relative_outside.as_str(), "leaves the suite's directory"),
        (outside.to_str().unwrap(), "absolute path"),
        ("/dev/zero", "absolute path"),
        ("link.yaml", "link.yaml is a symbolic link"),
    ] {
        std::fs::write(
            corpus.path("hostile.yaml"),
            format!("entries:\n  - {{repo: repos/gamma, plants_file: '{plants_file}'}}\n"),
        )
        .unwrap();
        let output = corpus.revcal(&["suite", "hostile.yaml", "--out", "hostile.json"]);
        let err = stderr(&output);
        assert_eq!(output.status.code(), Some(1), "{plants_file}: {err}");
        assert!(err.contains("entries[1].plants_file") && err.contains(reason), "{plants_file}: {err}");
        assert!(!err.contains("TOP-SECRET"), "{err}");
        assert!(!corpus.path("hostile.json").exists(), "nothing ran");
    }
    std::fs::write(corpus.path("passwd.yaml"), secret).unwrap();
    std::fs::write(
        corpus.path("hostile.yaml"),
        "entries:\n  - {repo: repos/gamma, plants_file: passwd.yaml}\n",
    )
    .unwrap();
    let output = corpus.revcal(&["suite", "hostile.yaml", "--out", "hostile.json", "--json"]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let shard = std::fs::read_to_string(corpus.path("hostile.json")).unwrap();
    for shown in [stderr(&output), String::from_utf8_lossy(&output.stdout).into_owned(), shard] {
        assert!(!shown.contains("TOP-SECRET") && !shown.contains("root:x"), "{shown}");
    }
    let error = json(&output)["suite"]["unitErrors"][0]["error"].as_str().unwrap().to_owned();
    assert!(
        error.contains("passwd.yaml: line 1 column 1: invalid type: a string, expected a sequence"),
        "{error}"
    );
    drop(outside_guard);
}

/// Removes a file when dropped (the test's file beside its temporary directory).
fn scopeguard(path: PathBuf) -> impl Drop {
    struct Remove(PathBuf);
    impl Drop for Remove {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }
    Remove(path)
}

/// `calibrate merge` trusts nothing it can check. A malformed shard (`shard.count: 0`, an
/// extra shard `3/2`, `trials: 2^62`) is an error naming the file and field, never a crash;
/// plant statuses edited to `caught` contradict the unit's own figures and are refused; the
/// gates are merge's own flags, and shards run with others are refused; `--suite` recomputes
/// the suite's hash and refuses a forged one.
#[test]
fn merge_refuses_malformed_forged_and_contradictory_shards() {
    if !python_available() {
        eprintln!("skipped: python3 is not installed (the reviewer runs Python's unittest)");
        return;
    }
    let corpus = Corpus::new();
    let mut genuine = Vec::new();
    for index in 1..=2 {
        let out = corpus.path(&format!("g{index}.json"));
        let output = corpus.revcal(&[
            "suite",
            "suite.yaml",
            "--shard",
            &format!("{index}/2"),
            "--out",
            out.to_str().unwrap(),
        ]);
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        genuine.push(serde_json::from_str::<Value>(&std::fs::read_to_string(&out).unwrap()).unwrap());
    }
    // Writes edited copies of the shards (`edit` gets the shard's number and its JSON) and
    // merges them with `extra`.
    let merge_edited = |name: &str, edit: &dyn Fn(usize, &mut Value), extra: &[&str]| {
        let mut files = Vec::new();
        for (index, shard) in genuine.iter().enumerate() {
            let mut shard = shard.clone();
            edit(index + 1, &mut shard);
            let path = corpus.path(&format!("{name}-{}.json", index + 1));
            std::fs::write(&path, serde_json::to_string_pretty(&shard).unwrap()).unwrap();
            files.push(path);
        }
        let output = corpus.merge(&files, extra);
        assert!(!stderr(&output).contains("panicked"), "{name}: {}", stderr(&output));
        output
    };
    let refused = |name: &str, edit: &dyn Fn(usize, &mut Value), extra: &[&str], needles: &[&str]| {
        let output = merge_edited(name, edit, extra);
        let err = stderr(&output);
        assert_eq!(output.status.code(), Some(1), "{name}: {err}");
        for needle in needles {
            assert!(err.contains(needle), "{name}: expected `{needle}` in: {err}");
        }
    };
    refused("count0", &|_, s| s["shard"]["count"] = 0.into(), &[], &["count0-1.json", "shard.count"]);
    refused(
        "index3",
        &|k, s| {
            if k == 2 {
                s["shard"]["index"] = 3.into()
            }
        },
        &[],
        &["index3-2.json", "shard.index"],
    );
    refused(
        "trials",
        &|_, s| s["entries"][0]["trials"] = (1u64 << 62).into(),
        &[],
        &["trials-1.json", "entries"],
    );
    let all_caught = |_: usize, s: &mut Value| {
        for unit in s["units"].as_array_mut().unwrap() {
            for plant in unit["report"]["plants"].as_array_mut().unwrap() {
                if plant["status"] == "missed" {
                    plant["status"] = "caught".into();
                }
            }
        }
    };
    refused("caught", &all_caught, &[], &["caught-", "caught"]);
    let no_gate = |_: usize, s: &mut Value| s["gates"]["minRecall"] = 0.into();
    refused("gate", &no_gate, &[], &["gate-1.json", "minRecall", "--min-recall 0.3"]);
    let accepted = merge_edited("gate", &no_gate, &["--min-recall", "0"]);
    assert_ne!(accepted.status.code(), Some(1), "the same gate is accepted: {}", stderr(&accepted));
    refused("alpha", &|_, _| {}, &["--regression-alpha", "0.2"], &["--regression-alpha"]);

    let forged = |_: usize, s: &mut Value| s["suiteHash"] = "sha256:forged".into();
    let trusted = merge_edited("forged", &forged, &["--json"]);
    assert_eq!(
        trusted.status.code(),
        Some(0),
        "without --suite the shards are trusted: {}",
        stderr(&trusted)
    );
    refused("forged", &forged, &["--suite", "suite.yaml"], &["suite.yaml", "suiteHash"]);
    let checked = merge_edited("checked", &|_, _| {}, &["--suite", "suite.yaml", "--json"]);
    assert_eq!(checked.status.code(), Some(0), "{}", stderr(&checked));
    assert_eq!(json(&checked)["suite"]["hash"], genuine[0]["suiteHash"]);
}

#[test]
fn a_suite_reports_the_same_for_every_number_of_jobs() {
    if !python_available() {
        eprintln!("skipped: python3 is not installed (the reviewer runs Python's unittest)");
        return;
    }
    let corpus = Corpus::new();
    // One unit at a time, or three at once sharing three job slots: the same report.
    let one = corpus.revcal(&["suite", "suite.yaml", "--json", "--jobs", "1"]);
    assert!(matches!(one.status.code(), Some(0 | 2)), "{}", stderr(&one));
    let three = corpus.revcal(&["suite", "suite.yaml", "--json", "--jobs", "3"]);
    assert_eq!(three.status.code(), one.status.code(), "{}", stderr(&three));
    assert_eq!(String::from_utf8_lossy(&three.stdout), String::from_utf8_lossy(&one.stdout));
    assert_eq!(json(&one)["suite"]["units"], 4);
}

/// A key made by `revcal elo keygen` in the corpus: its file and agent id.
fn keygen(corpus: &Corpus, name: &str) -> (String, String) {
    let key = corpus.path(&format!("{name}.key"));
    let output = Command::new(env!("CARGO_BIN_EXE_revcal"))
        .args(["elo", "keygen", "--out", key.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    (key.to_str().unwrap().to_owned(), String::from_utf8_lossy(&output.stdout).trim().to_owned())
}

#[test]
fn a_suite_with_clean_rounds_is_recorded_from_its_pooled_rounds_and_merged_shards_agree() {
    if !python_available() {
        eprintln!("skipped: python3 is not installed (the reviewer runs Python's unittest)");
        return;
    }
    let corpus = Corpus::new();
    std::fs::write(
        corpus.path("suite.yaml"),
        "defaults: {plants: 2, seed: 3, clean_rounds: 2}\nentries:\n  - {repo: repos/alpha, trials: 2}\n  - repo: repos/beta\n  - repo: repos/gamma\n",
    )
    .unwrap();
    let ((authority, _), (reviewer_key, reviewer)) =
        (keygen(&corpus, "authority"), keygen(&corpus, "reviewer"));
    let record_to = [
        "--record-to",
        "ledger.sqlite",
        "--authority-key",
        &authority,
        "--agent",
        &reviewer,
        "--agent-key",
        &reviewer_key,
    ];
    // While the suite's reviewers run, the authority's key comes on standard input (a file
    // named on the command line is one a reviewer could read, and is refused); merging runs
    // no reviewer and takes the file.
    let authority_text = std::fs::read_to_string(&authority).unwrap();
    let mut args = vec!["suite", "suite.yaml", "--json"];
    args.extend(record_to);
    let at = args.iter().position(|arg| *arg == authority.as_str()).unwrap();
    args[at] = "-";
    let whole = corpus.revcal_recording(&args, &authority_text);
    let code = whole.status.code();
    assert!(code == Some(0) || code == Some(2), "{}", stderr(&whole));
    let report = json(&whole);
    // Two clean rounds asked for per entry; beta holds no comparison of names to mirror.
    assert_eq!(report["cleanRounds"]["requested"], 6, "{report}");
    let rounds = report["rounds"].as_array().unwrap();
    let clean: Vec<&Value> = rounds.iter().filter(|round| round.get("touched").is_some()).collect();
    assert_eq!(report["cleanRounds"]["changes"], clean.len());
    assert!(!clean.is_empty() && clean.iter().all(|round| round["entry"] != "beta"), "{report}");
    for (number, round) in (1..).zip(rounds) {
        assert_eq!(round["round"], number);
        let trials = if round["entry"] == "alpha" { 2 } else { 1 };
        assert_eq!(round["trials"].as_array().unwrap().len(), trials, "{round}");
        assert!(round["commit"].as_str().is_some_and(|commit| commit.len() == 40), "{round}");
    }
    // The tests pass on a behaviour-preserving change: no false alarm.
    let clean_reviews: usize = clean.iter().map(|round| round["trials"].as_array().unwrap().len()).sum();
    assert_eq!(
        (report["falseAlarms"].clone(), report["cleanReviews"].clone()),
        (0.into(), clean_reviews.into())
    );
    let said = stderr(&whole);
    assert!(said.contains("recorded calibration"), "{said}");
    assert!(
        said.contains(&format!(
            "{} reviews by {reviewer}",
            rounds.iter().map(|r| r["trials"].as_array().unwrap().len()).sum::<usize>()
        )),
        "{said}"
    );

    // Shards merged give the same report, and recording it again is refused (exit 1).
    let mut files = Vec::new();
    for index in 1..=2 {
        let out = corpus.path(&format!("shard-{index}.json"));
        let shard = corpus.revcal(&[
            "suite",
            "suite.yaml",
            "--shard",
            &format!("{index}/2"),
            "--out",
            out.to_str().unwrap(),
        ]);
        assert_eq!(shard.status.code(), Some(0), "{}", stderr(&shard));
        files.push(out);
    }
    let mut extra = vec!["--json"];
    extra.extend(record_to);
    let merged = corpus.merge(&files, &extra);
    // stdout holds the report alone, as with --json it always does.
    assert_eq!(String::from_utf8_lossy(&merged.stdout), String::from_utf8_lossy(&whole.stdout));
    assert_eq!(merged.status.code(), Some(1), "{}", stderr(&merged));
    assert!(stderr(&merged).contains("is already recorded"), "{}", stderr(&merged));
    // A shard is no calibration of its own: --record-to goes to merge.
    let mut args = vec!["suite", "suite.yaml", "--shard", "1/2", "--out", "x.json"];
    args.extend(record_to);
    let refused = corpus.revcal(&args);
    assert_eq!(refused.status.code(), Some(1));
    assert!(
        stderr(&refused).contains("give --record-to to `revcal calibrate merge`"),
        "{}",
        stderr(&refused)
    );
}
