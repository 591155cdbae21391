//! Mining real bugs from real git histories: fixes that came with a test are verified by
//! re-introducing them and running the tests; everything else is rejected with its reason.

use crate::util::git;
use revcal_calibrate::bugs::{BugMiner, MineEvent, RejectReason, read_bugs_file, write_bugs_yaml};
use std::collections::BTreeMap;
use std::path::Path;

/// Writes `files` (path, content; empty content deletes) and commits them with `message`;
/// returns the commit id.
pub(crate) fn commit(repo: &Path, files: &[(&str, &str)], message: &str) -> String {
    for (path, content) in files {
        let full = repo.join(path);
        if content.is_empty() {
            std::fs::remove_file(&full).unwrap();
            continue;
        }
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(&full, content).unwrap();
    }
    git(repo, &["add", "-A"]);
    git(repo, &["commit", "-qm", message]);
    git(repo, &["rev-parse", "HEAD"])
}

const CALC_BUGGY: &str =
    "def last_index(items):\n    return len(items)\n\n\ndef is_adult(age):\n    return age > 18\n";
const CALC_FIXED: &str =
    "def last_index(items):\n    return len(items) - 1\n\n\ndef is_adult(age):\n    return age > 18\n";
const CALC_BOTH: &str =
    "def last_index(items):\n    return len(items) - 1\n\n\ndef is_adult(age):\n    return age >= 18\n";
const TEST_BASE: &str = "import unittest\nimport calc\n\n\nclass CalcTest(unittest.TestCase):\n    def test_adult(self):\n        self.assertTrue(calc.is_adult(30))\n";

/// A Python project whose history holds, newest first: a flaky fix, a refactor that rewrote
/// a fixed line, a fix whose test does not flip, a docs commit, a fix that only touches tests,
/// the fix of `is_adult` (boundary), the fix of `last_index` (off-by-one), and the start.
pub(crate) fn python_history(repo: &Path) -> BTreeMap<&'static str, String> {
    git(repo, &["init", "-q", "-b", "main"]);
    let mut ids = BTreeMap::new();
    commit(
        repo,
        &[
            ("pyproject.toml", "[project]\nname = \"calc\"\n"),
            ("calc.py", CALC_BUGGY),
            ("test_calc.py", TEST_BASE),
        ],
        "Start",
    );
    let test_last = format!(
        "{TEST_BASE}\n    def test_last_index(self):\n        self.assertEqual(calc.last_index([1, 2, 3]), 2)\n"
    );
    ids.insert(
        "off-by-one",
        commit(
            repo,
            &[("calc.py", CALC_FIXED), ("test_calc.py", &test_last)],
            "Fix last_index off by one\n\nlast_index returned the length, one past the end.",
        ),
    );
    let test_adult =
        format!("{test_last}\n    def test_adult_at_18(self):\n        self.assertTrue(calc.is_adult(18))\n");
    ids.insert(
        "boundary",
        commit(
            repo,
            &[
                ("calc.py", CALC_BOTH),
                ("test_calc.py", &test_adult),
                ("CHANGES.md", "- is_adult(18) is true\n"),
            ],
            "Fix is_adult at exactly 18",
        ),
    );
    let test_more = format!(
        "{test_adult}\n    def test_adult_at_40(self):\n        self.assertTrue(calc.is_adult(40))\n"
    );
    commit(repo, &[("test_calc.py", &test_more)], "Test more ages");
    commit(repo, &[("README.md", "calc\n")], "Docs");
    // A "fix" whose new test passes with or without it.
    let names = "def greet(name):\n    return 'hello ' + name\n";
    let names_fixed = "def greet(name):\n    return 'hello ' + str(name)\n";
    let test_names = "import unittest\nimport names\n\n\nclass NamesTest(unittest.TestCase):\n    def test_greet(self):\n        self.assertEqual(names.greet('bo'), 'hello bo')\n";
    commit(repo, &[("names.py", names)], "Add names");
    ids.insert(
        "no-flip",
        commit(repo, &[("names.py", names_fixed), ("test_names.py", test_names)], "Accept any name"),
    );
    // A fix whose line a later refactor rewrote: its reversal cannot apply to HEAD.
    let fmt = "def money(cents):\n    return '%d.%d' % (cents // 100, cents % 100)\n";
    let fmt_fixed = "def money(cents):\n    return '%d.%02d' % (cents // 100, cents % 100)\n";
    let fmt_refactored =
        "def money(cents):\n    whole, part = divmod(cents, 100)\n    return f'{whole}.{part:02d}'\n";
    let test_fmt = "import unittest\nimport fmt\n\n\nclass FmtTest(unittest.TestCase):\n    def test_pads(self):\n        self.assertEqual(fmt.money(105), '1.05')\n";
    commit(repo, &[("fmt.py", fmt)], "Add money formatting");
    ids.insert("moved-on", commit(repo, &[("fmt.py", fmt_fixed), ("test_fmt.py", test_fmt)], "Pad cents"));
    commit(repo, &[("fmt.py", fmt_refactored)], "Use divmod");
    // A flaky test: it passes only on its first run (a marker file outside the tree).
    let flaky = "def ping():\n    return 'pong'\n";
    let flaky_fixed = "def ping():\n    return 'pong'  # always\n";
    let test_flaky = "import os, unittest\nimport flaky\n\n\nclass FlakyTest(unittest.TestCase):\n    def test_ping(self):\n        marker = os.environ['FLAKY_MARKER']\n        first = not os.path.exists(marker)\n        open(marker, 'w').close()\n        self.assertTrue(first)\n        self.assertEqual(flaky.ping(), 'pong')\n";
    commit(repo, &[("flaky.py", flaky)], "Add ping");
    ids.insert(
        "flaky",
        commit(repo, &[("flaky.py", flaky_fixed), ("test_flaky.py", test_flaky)], "Make ping explicit"),
    );
    ids
}

#[test]
fn a_python_history_yields_its_tested_fixes_and_rejects_the_rest_with_reasons() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    let ids = python_history(&repo);
    let head_before = git(&repo, &["rev-parse", "HEAD"]);
    let status_before = git(&repo, &["status", "--porcelain", "--ignored"]);
    let marker = dir.path().join("flaky-marker");
    let mut events = Vec::new();
    let report = BugMiner::new(&repo)
        .test_cmd(format!("FLAKY_MARKER={} python3 -m unittest", marker.display()))
        .mine(&mut |event| events.push(event))
        .unwrap();

    assert_eq!(report.scanned, 12);
    // The two fixes, the no-flip and moved-on and flaky ones: "Test more ages" touches only
    // tests, "Docs" only docs, the "Add ..." commits no test.
    assert_eq!(report.candidates, 5, "{report:#?}");
    let verified: Vec<&str> = report.verified.iter().map(|bug| bug.fix_commit.as_str()).collect();
    assert_eq!(verified, vec![ids["boundary"].as_str(), ids["off-by-one"].as_str()]);
    let rejected: BTreeMap<&str, &str> =
        report.rejected.iter().map(|r| (r.fix_commit.as_str(), r.reason.name())).collect();
    assert_eq!(rejected[ids["no-flip"].as_str()], "no-test-flips");
    assert_eq!(rejected[ids["moved-on"].as_str()], "reversal-does-not-apply");
    assert_eq!(rejected[ids["flaky"].as_str()], "flaky");
    assert!(
        matches!(&report.rejected[0].reason, RejectReason::Flaky { detail } if detail.contains("fails on a rerun at the fix"))
    );

    let boundary = &report.verified[0];
    assert_eq!(
        (boundary.file.as_str(), boundary.line, boundary.category.as_str()),
        ("calc.py", 6, "off-by-one")
    );
    assert!(boundary.patch.contains("-    return age >= 18\n+    return age > 18\n"), "{}", boundary.patch);
    assert!(
        boundary
            .witness
            .as_deref()
            .unwrap()
            .ends_with("python3 -m unittest test_calc.CalcTest.test_adult_at_18")
    );
    assert_eq!(
        boundary.defect,
        "The bug fixed by \"Fix is_adult at exactly 18\" is back: calc.py:6 reads `return age > 18` where the fix has `return age >= 18`."
    );
    let off_by_one = &report.verified[1];
    assert_eq!((off_by_one.line, off_by_one.category.as_str()), (2, "off-by-one"));
    assert!(
        off_by_one.defect.ends_with("(last_index returned the length, one past the end)."),
        "{}",
        off_by_one.defect
    );

    // Each patch, applied to HEAD, makes its witness fail; without it the witness passes.
    for bug in &report.verified {
        let witness = bug.witness.as_deref().unwrap();
        let run = |dir: &Path| {
            std::process::Command::new("sh").args(["-c", witness]).current_dir(dir).output().unwrap()
        };
        assert!(run(&repo).status.success(), "{witness} fails on HEAD");
        let copy = dir.path().join("copy");
        git(dir.path(), &["clone", "-q", repo.to_str().unwrap(), "copy"]);
        std::fs::write(dir.path().join("bug.diff"), &bug.patch).unwrap();
        git(&copy, &["apply", "../bug.diff"]);
        assert!(!run(&copy).status.success(), "{witness} passes with the bug");
        std::fs::remove_dir_all(&copy).unwrap();
    }

    // The user's repository is as it was; progress named every candidate.
    assert_eq!(git(&repo, &["rev-parse", "HEAD"]), head_before);
    assert_eq!(git(&repo, &["status", "--porcelain", "--ignored"]), status_before);
    assert_eq!(git(&repo, &["worktree", "list"]).lines().count(), 1);
    let checked = events.iter().filter(|e| matches!(e, MineEvent::Checked { .. })).count();
    assert_eq!(checked, 5);

    // The bugs file reads back.
    let file = dir.path().join("bugs.yaml");
    std::fs::write(&file, write_bugs_yaml(&report.verified, "test").unwrap()).unwrap();
    assert_eq!(read_bugs_file(&file).unwrap(), report.verified);
}

#[test]
fn max_stops_after_enough_bugs_and_a_broken_build_is_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    python_history(&repo);
    let marker = dir.path().join("flaky-marker");
    let test_cmd = format!("FLAKY_MARKER={} python3 -m unittest", marker.display());
    let report = BugMiner::new(&repo).test_cmd(&test_cmd).max_bugs(1).mine(&mut |_| {}).unwrap();
    assert_eq!(report.verified.len(), 1);
    assert_eq!(report.unverified, 1, "the older fix was left: {report:#?}");

    // A build check that fails whenever `calc.py` lacks `>=` rejects the boundary fix only.
    let report = BugMiner::new(&repo)
        .test_cmd(&test_cmd)
        .build_cmd("grep -q '>=' calc.py")
        .range("HEAD~11..HEAD~9")
        .mine(&mut |_| {})
        .unwrap();
    assert_eq!(report.candidates, 2);
    assert!(report.verified.is_empty());
    let reasons: Vec<String> = report.rejected.iter().map(|r| r.reason.to_string()).collect();
    // The boundary fix builds at the fix (`>=`) and not reversed; the older off-by-one fix
    // predates `>=` and fails the check at the fix already.
    assert!(reasons[0].starts_with("the build breaks with the fix reversed (exit code 1)"), "{reasons:?}");
    assert!(reasons[1].starts_with("the build breaks at the fix already (exit code 1)"), "{reasons:?}");

    // A bad range is an error that names it.
    let error = BugMiner::new(&repo).range("nonsense..HEAD").mine(&mut |_| {}).unwrap_err().to_string();
    assert!(error.contains("nonsense"), "{error}");
}

/// A reviewer that reads the change under review (`git diff -U0 {base}`: the commit with the
/// bugs in it, which touches no other file) and reports each hunk outside the tests with the
/// test suite as its repro: it catches exactly the bugs the suite catches.
const SUITE_REVIEWER: &str = r#"python3 -c '
import json, re, subprocess
diff = subprocess.run(["git", "diff", "-U0", "{base}"], capture_output=True, text=True).stdout
findings, path = [], None
for line in diff.splitlines():
    if line.startswith("+++ "):
        path = line[6:] if line.startswith("+++ b/") else None
    m = re.match(r"@@ -\d+(?:,\d+)? \+(\d+)", line)
    if m and path and not path.startswith("test_"):
        findings.append({"file": path, "line": int(m.group(1)), "message": "the tests fail here", "repro": "python3 -m unittest"})
print(json.dumps(findings))
'"#;

#[test]
fn calibrating_on_mined_bugs_scores_a_test_suite_reviewer_by_the_bugs_its_tests_catch() {
    use revcal_calibrate::{Calibration, ScorerKind};
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    python_history(&repo);
    // The flaky test goes (it fails without its marker): the suite passes on HEAD.
    commit(&repo, &[("test_flaky.py", "")], "Drop the flaky test");
    let marker = dir.path().join("flaky-marker");
    let mut bugs = BugMiner::new(&repo)
        .test_cmd(format!("FLAKY_MARKER={} python3 -m unittest", marker.display()))
        .mine(&mut |_| {})
        .unwrap()
        .verified;
    assert_eq!(bugs.len(), 2);
    // A third, hand-written real bug that no test catches (and so has no witness): a
    // two-line change to `greet`.
    bugs.push(revcal_calibrate::bugs::Bug {
        file: "names.py".into(),
        line: 1,
        category: "real".into(),
        defect: "greet drops its argument's text".into(),
        witness: None,
        patch: "--- a/names.py\n+++ b/names.py\n@@ -1,2 +1,3 @@\n def greet(name):\n-    return 'hello ' + str(name)\n+    name = str(name).strip()\n+    return 'hello ' + name\n".into(),
        fix_commit: "0000000".into(),
        fix_subject: "hand-written".into(),
    });
    let bugs_file = dir.path().join("bugs.yaml");
    std::fs::write(&bugs_file, write_bugs_yaml(&bugs, "test").unwrap()).unwrap();
    let before: Vec<(String, Vec<u8>)> = ["calc.py", "names.py"]
        .iter()
        .map(|f| ((*f).to_owned(), std::fs::read(repo.join(f)).unwrap()))
        .collect();

    // Independently: which bugs make the test suite fail, each alone on HEAD.
    let mut suite_fails = 0;
    for bug in &bugs {
        let copy = dir.path().join("copy");
        git(dir.path(), &["clone", "-q", repo.to_str().unwrap(), "copy"]);
        std::fs::write(dir.path().join("bug.diff"), &bug.patch).unwrap();
        git(&copy, &["apply", "../bug.diff"]);
        let status = std::process::Command::new("python3")
            .args(["-m", "unittest", "-q"])
            .current_dir(&copy)
            .output()
            .unwrap()
            .status;
        suite_fails += usize::from(!status.success());
        std::fs::remove_dir_all(&copy).unwrap();
    }
    assert_eq!(suite_fails, 2);

    let report = Calibration::builder()
        .dir(&repo)
        .review_cmd(SUITE_REVIEWER)
        .plants_file(&bugs_file)
        .scorer(ScorerKind::Repro)
        .min_plants(1)
        .run()
        .unwrap();
    assert_eq!((report.caught, report.total), (suite_fails, bugs.len()), "{report:#?}");
    assert_eq!(report.per_kind["real"].total, 3);
    assert!(report.plants.iter().all(|p| p.kind == "real" && p.fix_commit.is_some()));
    let multi = report.plants.iter().find(|p| p.file == "names.py").unwrap();
    assert_eq!((multi.line, multi.end_line), (2, Some(3)));
    assert_eq!(multi.mutated, "    name = str(name).strip()\n    return 'hello ' + name");
    let controls = report.controls.as_ref().unwrap();
    assert!(controls.echo.recall.unwrap() <= 0.2, "{controls:?}");
    assert_eq!(controls.oracle.recall, Some(1.0), "{controls:?}");
    for (file, bytes) in &before {
        assert_eq!(&std::fs::read(repo.join(file)).unwrap(), bytes, "{file} restored");
    }

    // One review per bug scores the same: each review's findings against its one bug.
    let alone = Calibration::builder()
        .dir(&repo)
        .review_cmd(SUITE_REVIEWER)
        .plants_file(&bugs_file)
        .scorer(ScorerKind::Repro)
        .one_at_a_time(true)
        .min_plants(1)
        .run()
        .unwrap();
    assert_eq!((alone.caught, alone.total), (report.caught, report.total));
    assert_eq!(
        (alone.true_positives, alone.false_positives),
        (report.true_positives, report.false_positives)
    );
    let caught = |r: &revcal_calibrate::Report| -> Vec<(String, u32, bool)> {
        r.plants.iter().map(|p| (p.file.clone(), p.line, p.caught_by.is_some())).collect()
    };
    assert_eq!(caught(&alone), caught(&report));

    // Under a judge (here one that matches a finding stating the defect), the echo control,
    // which quotes each multi-line change at its place, still catches nothing.
    let judge = revcal_judge::CommandJudge::new(
        r#"req=$(cat); case "$req" in *'is back'*'is back'*|*'drops its argument'*'drops its argument'*) echo '{"match": true}';; *) echo '{"match": false}';; esac"#,
    );
    let report = Calibration::builder()
        .dir(&repo)
        .review_cmd(SUITE_REVIEWER)
        .plants_file(&bugs_file)
        .scorer(ScorerKind::Judge)
        .judge(Box::new(judge))
        .min_plants(1)
        .min_recall(0.0)
        .run()
        .unwrap();
    let controls = report.controls.as_ref().unwrap();
    assert_eq!((controls.echo.recall, controls.echo.total), (Some(0.0), 3), "{controls:?}");
    assert_eq!(controls.oracle.recall, Some(1.0), "{controls:?}");
    assert_eq!(report.caught, 0, "the suite reviewer's findings do not state the defects");
}

#[test]
fn a_javascript_history_is_mined_with_npm_test_and_node_s_runner() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    let package = r#"{"name": "range", "version": "1.0.0", "scripts": {"test": "node --test test/"}}"#;
    let lib =
        "function inRange(x, lo, hi) {\n  return x >= lo && x < hi;\n}\nmodule.exports = { inRange };\n";
    let test = "const test = require('node:test');\nconst assert = require('node:assert');\nconst { inRange } = require('../lib/range.js');\n\ntest('inside', () => assert.ok(inRange(2, 1, 3)));\n";
    commit(&repo, &[("package.json", package), ("lib/range.js", lib), ("test/range.test.js", test)], "Start");
    let fixed = lib.replace("x < hi", "x <= hi");
    let tested = format!("{test}test('upper bound is inside', () => assert.ok(inRange(3, 1, 3)));\n");
    let fix = commit(
        &repo,
        &[("lib/range.js", &fixed), ("test/range.test.js", &tested)],
        "Include the upper bound",
    );

    let report = BugMiner::new(&repo).mine(&mut |_| {}).unwrap();
    assert_eq!(report.candidates, 1);
    assert_eq!(report.verified.len(), 1, "{report:#?}");
    let bug = &report.verified[0];
    assert_eq!((bug.fix_commit.as_str(), bug.file.as_str(), bug.line), (fix.as_str(), "lib/range.js", 2));
    assert_eq!(bug.category, "off-by-one");
    // node's runner cannot be narrowed through `npm test`: the whole suite is the witness.
    assert_eq!(bug.witness.as_deref(), Some("npm test"));
}

#[test]
fn a_rust_history_is_mined_with_cargo_and_a_fix_that_adds_api_breaks_the_build() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    let manifest = "[package]\nname = \"window\"\nversion = \"0.1.0\"\nedition = \"2021\"\n";
    let lib = "pub fn last(xs: &[u32]) -> Option<u32> {\n    xs.get(xs.len()).copied()\n}\n";
    let test = "#[test]\nfn empty() {\n    assert_eq!(window::last(&[]), None);\n}\n";
    commit(
        &repo,
        &[
            ("Cargo.toml", manifest),
            ("src/lib.rs", lib),
            ("tests/last.rs", test),
            (".gitignore", "/target\nCargo.lock\n"),
        ],
        "Start",
    );
    let fixed = lib.replace("xs.get(xs.len())", "xs.get(xs.len().wrapping_sub(1))");
    let tested =
        format!("{test}\n#[test]\nfn three() {{\n    assert_eq!(window::last(&[1, 2, 3]), Some(3));\n}}\n");
    let fix = commit(
        &repo,
        &[("src/lib.rs", &fixed), ("tests/last.rs", &tested)],
        "Fix last: the index is len - 1",
    );
    let with_api =
        format!("{fixed}\npub fn first(xs: &[u32]) -> Option<u32> {{\n    xs.first().copied()\n}}\n");
    let api_test =
        format!("{tested}\n#[test]\nfn first() {{\n    assert_eq!(window::first(&[4]), Some(4));\n}}\n");
    let api = commit(&repo, &[("src/lib.rs", &with_api), ("tests/last.rs", &api_test)], "Add first");

    // "Add first" reads as a feature (its message, and a reversal that only removes a function
    // its test calls): set aside, not verified.
    let report = BugMiner::new(&repo).mine(&mut |_| {}).unwrap();
    assert_eq!(report.candidates, 1);
    assert_eq!(report.features.len(), 1, "{report:#?}");
    assert_eq!(report.features[0].fix_commit, api);
    assert_eq!(report.verified.len(), 1, "{report:#?}");
    assert!(report.rejected.is_empty(), "{report:#?}");

    // Told to verify features too, it is a candidate whose reversal does not build: the
    // test calls the API the fix added.
    let report = BugMiner::new(&repo).include_features(true).mine(&mut |_| {}).unwrap();
    assert_eq!(report.candidates, 2);
    assert_eq!(report.verified.len(), 1, "{report:#?}");
    let bug = &report.verified[0];
    assert_eq!((bug.fix_commit.as_str(), bug.line), (fix.as_str(), 2));
    assert_eq!(bug.witness.as_deref(), Some("cargo test -- --exact three"));
    assert_eq!(report.rejected.len(), 1);
    assert_eq!(
        (report.rejected[0].fix_commit.as_str(), report.rejected[0].reason.name()),
        (api.as_str(), "build-breaks")
    );
}

#[test]
fn a_bug_that_hangs_its_tests_is_rejected_for_time() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    let spin = "def countdown(n):\n    while n != 0:\n        n -= 2\n    return n\n";
    commit(&repo, &[("setup.cfg", "[metadata]\nname = spin\n"), ("spin.py", spin)], "Start");
    let fixed = spin.replace("while n != 0:", "while n > 0:");
    let test = "import unittest\nimport spin\n\n\nclass SpinTest(unittest.TestCase):\n    def test_odd(self):\n        self.assertEqual(spin.countdown(3), -1)\n";
    commit(&repo, &[("spin.py", &fixed), ("test_spin.py", test)], "Stop at odd numbers");
    let started = std::time::Instant::now();
    let report =
        BugMiner::new(&repo).test_timeout(std::time::Duration::from_secs(3)).mine(&mut |_| {}).unwrap();
    assert_eq!(report.rejected.len(), 1, "{report:#?}");
    assert!(
        matches!(&report.rejected[0].reason, RejectReason::TimedOut { detail } if detail == "the tests with the bug ran past 3 s"),
        "{report:#?}"
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
}
