//! `revcal bugs mine` as a run: what it says about the range before mining, what it prints
//! while a candidate is verified, when it stops and why, and that nothing it started outlives
//! it.

use super::{commit, git, revcal, stderr};
use serde_json::Value;
use std::path::Path;

/// True while process `pid` exists and is not a zombie (proc_pid_stat(5), field 3).
fn alive(pid: i32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { return false };
    let state = stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().next());
    state.is_some_and(|state| state != "Z")
}

/// A Python project with one tested fix.
fn one_fix(repo: &Path) -> String {
    git(repo, &["init", "-q", "-b", "main"]);
    commit(repo, &[("setup.py", "\n"), ("calc.py", "def double(x):\n    return x + x + 1\n")], "Start");
    let test = "import unittest\nimport calc\n\n\nclass CalcTest(unittest.TestCase):\n    def test_double(self):\n        self.assertEqual(calc.double(2), 4)\n";
    commit(
        repo,
        &[("calc.py", "def double(x):\n    return x + x\n"), ("test_calc.py", test)],
        "Double without the extra one",
    );
    git(repo, &["rev-parse", "HEAD"])
}

#[test]
fn grandchildren_a_test_command_starts_with_setsid_end_with_revcal_and_phases_are_printed() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("calc");
    std::fs::create_dir_all(&repo).unwrap();
    let fix = one_fix(&repo);
    let pids = dir.path().join("daemons");
    let beat = dir.path().join("heartbeat");
    // Each test run leaves a daemon in a session of its own that keeps writing a heartbeat,
    // and lasts past a second, so that its phase is announced.
    let test_cmd = format!(
        "setsid sh -c 'echo $$ >> {}; while :; do date > {}; sleep 0.2; done' >/dev/null 2>&1 </dev/null & sleep 1.2; python3 -m unittest",
        pids.display(),
        beat.display()
    );
    let mined = revcal(&repo, &["bugs", "mine", "--test-cmd", &test_cmd, "--json"]);
    let daemons: Vec<i32> = std::fs::read_to_string(&pids)
        .unwrap_or_default()
        .lines()
        .map(|line| line.trim().parse().unwrap())
        .collect();
    let left: Vec<i32> = daemons.iter().copied().filter(|pid| alive(*pid)).collect();
    for pid in &left {
        // SAFETY: kill only sends a signal, to a daemon this test's command started.
        unsafe { libc::kill(*pid, libc::SIGKILL) };
    }
    assert_eq!(mined.status.code(), Some(0), "{}", stderr(&mined));
    let report: Value = serde_json::from_slice(&mined.stdout).unwrap();
    assert_eq!(report["verified"].as_array().unwrap().len(), 1, "{report:#}");
    // Tests at the fix, with the bug, the witness twice at the fix and twice at the target;
    // the build checks do not start one.
    assert_eq!(daemons.len(), 6, "{daemons:?}");
    assert!(left.is_empty(), "daemons left running after revcal exited: {left:?} of {daemons:?}");

    // Off a terminal, each long phase is a line, before the candidate's verdict.
    let log = stderr(&mined);
    let short = &fix[..10];
    let at = |needle: &str| log.find(needle).unwrap_or_else(|| panic!("no {needle:?} in:\n{log}"));
    let phases = [
        format!("{short} tests at the fix"),
        format!("{short} tests with the bug"),
        format!("{short} witness rerun at the fix"),
        format!("{short} witness rerun with the bug"),
        format!("{short} witness at the target"),
        format!("{short} witness with the bug at the target"),
        format!("[1/1] {short} verified"),
    ];
    let positions: Vec<usize> = phases.iter().map(|phase| at(phase)).collect();
    assert!(positions.windows(2).all(|w| w[0] < w[1]), "{log}");
    let line = log.lines().find(|line| line.contains("tests at the fix")).unwrap();
    assert!(line.starts_with("revcal: ") && line.contains("s candidate 1 of 1: "), "{line}");
}

#[test]
fn a_range_says_how_many_commits_it_holds_and_first_parent_reads_only_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("merged");
    std::fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    commit(&repo, &[("a.txt", "1\n")], "Start");
    git(&repo, &["checkout", "-q", "-b", "side"]);
    for n in 1..=3 {
        commit(&repo, &[("side.txt", &format!("{n}\n"))], &format!("Side {n}"));
    }
    git(&repo, &["checkout", "-q", "main"]);
    commit(&repo, &[("a.txt", "2\n")], "Main 2");
    git(
        &repo,
        &["-c", "user.name=t", "-c", "user.email=t@t", "merge", "-q", "--no-ff", "side", "-m", "Merge side"],
    );
    commit(&repo, &[("a.txt", "3\n")], "Main 3");

    let mined = revcal(&repo, &["bugs", "mine", "--rev", "HEAD~2..HEAD", "--json"]);
    assert_eq!(mined.status.code(), Some(0), "{}", stderr(&mined));
    let log = stderr(&mined);
    assert!(
        log.contains("revcal: HEAD~2..HEAD holds 5 commits (2 on its first-parent line; a range also holds the commits merged in from side branches, --first-parent reads only that line), 0 fix candidates to verify"),
        "{log}"
    );
    let report: Value = serde_json::from_slice(&mined.stdout).unwrap();
    assert_eq!(
        (report["scanned"].as_u64(), report["range"].as_str(), report["firstParentCommits"].as_u64()),
        (Some(5), Some("HEAD~2..HEAD"), Some(2)),
        "{report:#}"
    );
    assert_eq!(report["firstParent"], false);

    let mined = revcal(&repo, &["bugs", "mine", "--rev", "HEAD~2..HEAD", "--first-parent", "--json"]);
    assert_eq!(mined.status.code(), Some(0), "{}", stderr(&mined));
    assert!(
        stderr(&mined)
            .contains("revcal: HEAD~2..HEAD holds 2 commits on its first-parent line, 0 fix candidates"),
        "{}",
        stderr(&mined)
    );
    let report: Value = serde_json::from_slice(&mined.stdout).unwrap();
    assert_eq!((report["scanned"].as_u64(), report["firstParent"].as_bool()), (Some(2), Some(true)));

    let help = revcal(&repo, &["bugs", "mine", "--help"]);
    // Words as clap wraps them to the terminal's width.
    let help = String::from_utf8_lossy(&help.stdout).split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(help.contains("merged in from side branches") && help.contains("--first-parent"), "{help}");
    assert!(help.contains("--keep-going"), "{help}");
}

#[test]
fn a_test_command_broken_at_the_fixes_is_named_after_the_first_candidate_and_stops_mining() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("needs");
    std::fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    // The tests import a package that is not installed: they cannot run at any commit.
    let buggy = |n: usize| {
        (1..=4)
            .map(|i| format!("def f{i}():\n    return {}\n\n\n", if i <= n { i } else { 0 }))
            .collect::<String>()
    };
    commit(&repo, &[("setup.py", "\n"), ("m.py", &buggy(0))], "Start");
    let mut tests = String::from(
        "import unittest\nimport not_installed_here\nimport m\n\n\nclass MTest(unittest.TestCase):\n",
    );
    for n in 1..=4 {
        tests.push_str(&format!("    def test_f{n}(self):\n        self.assertEqual(m.f{n}(), {n})\n\n"));
        commit(&repo, &[("m.py", &buggy(n)), ("test_m.py", &tests)], &format!("Fix f{n}"));
    }

    let mined = revcal(&repo, &["bugs", "mine", "--test-cmd", "python3 -m unittest", "--json"]);
    let log = stderr(&mined);
    assert_eq!(mined.status.code(), Some(1), "{log}");
    // The verdicts and the warning, without the phase lines (a phase that runs a second on a
    // busy machine is a line of its own: "candidate 2 of 4: ... tests at the fix").
    let lines: Vec<&str> = log.lines().filter(|line| !line.contains(" of 4: ")).collect();
    let first = lines.iter().position(|line| line.contains("[1/4]")).unwrap_or_else(|| panic!("{log}"));
    assert!(lines[first].contains("rejected"), "{log}");
    assert_eq!(
        lines[first + 1],
        "revcal: warning: 1 test already fails at the fix: your test command is broken here, for example: ERROR: test_m (unittest.loader._FailedTest.test_m); mining stops after 3 such candidates in a row (--keep-going goes on)",
        "{log}"
    );
    assert!(lines[first + 2].contains("[2/4]"), "the warning is said once: {log}");
    assert!(!log.contains("[4/4]"), "{log}");
    assert!(
        log.contains("revcal: stopped: the tests already fail at the fix of 3 candidates in a row, so the test command does not work on this history (for example: ERROR: test_m (unittest.loader._FailedTest.test_m)); fix --test-cmd, or verify the rest anyway with --keep-going"),
        "{log}"
    );
    let report: Value = serde_json::from_slice(&mined.stdout).unwrap();
    assert_eq!(
        (report["stopped"]["reason"].as_str(), report["stopped"]["inARow"].as_u64()),
        (Some("tests-fail-at-fix"), Some(3)),
        "{report:#}"
    );
    assert_eq!(report["rejected"][0]["reason"], "tests-fail-at-fix");
    assert_eq!(report["unverified"], 1);

    let mined =
        revcal(&repo, &["bugs", "mine", "--test-cmd", "python3 -m unittest", "--keep-going", "--json"]);
    assert_eq!(mined.status.code(), Some(0), "{}", stderr(&mined));
    let report: Value = serde_json::from_slice(&mined.stdout).unwrap();
    assert_eq!((report["rejected"].as_array().unwrap().len(), report["stopped"].is_null()), (4, true));
}

#[test]
fn a_bare_mirror_is_mined_as_its_work_tree_is_and_left_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("calc");
    std::fs::create_dir_all(&repo).unwrap();
    let fix = one_fix(&repo);
    git(dir.path(), &["clone", "-q", "--mirror", repo.to_str().unwrap(), "calc.git"]);
    let mirror = dir.path().join("calc.git");
    let listing = |dir: &Path| {
        let mut names: Vec<String> = walk(dir);
        names.sort();
        names
    };
    let (refs, files) = (git(&mirror, &["for-each-ref"]), listing(&mirror));
    let args = ["bugs", "mine", "--test-cmd", "python3 -m unittest", "--json"];
    let from_tree = revcal(&repo, &args);
    let from_mirror = revcal(dir.path(), &[&["bugs", "mine", "calc.git"], &args[2..]].concat());
    assert_eq!(from_tree.status.code(), Some(0), "{}", stderr(&from_tree));
    assert_eq!(from_mirror.status.code(), Some(0), "{}", stderr(&from_mirror));
    let verified = |output: &std::process::Output| {
        let report: Value = serde_json::from_slice(&output.stdout).unwrap();
        report["verified"].clone()
    };
    assert_eq!(verified(&from_mirror)[0]["fix_commit"], fix.as_str());
    assert_eq!(verified(&from_mirror), verified(&from_tree), "the same bugs, patches and witnesses");
    assert_eq!((git(&mirror, &["for-each-ref"]), listing(&mirror)), (refs, files), "the mirror is untouched");
}

/// Every path under `dir`, relative to it.
fn walk(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(next) = stack.pop() {
        for entry in std::fs::read_dir(&next).unwrap() {
            let path = entry.unwrap().path();
            found.push(path.strip_prefix(dir).unwrap().display().to_string());
            if path.is_dir() {
                stack.push(path);
            }
        }
    }
    found
}
