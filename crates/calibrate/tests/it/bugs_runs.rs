//! How a mining run goes: what is checked before any test runs, when it stops (`--max`, a
//! test command that does not work at the fixes), what it leaves running (nothing), and the
//! phases it announces while a candidate is verified.

use crate::bugs::{commit, python_history};
use crate::util::git;
use revcal_calibrate::bugs::{BugMiner, MineEvent, Phase, RejectReason, Stop};
use std::path::Path;

/// True while process `pid` exists and is not a zombie (proc_pid_stat(5), field 3).
fn alive(pid: i32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { return false };
    let state = stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().next());
    state.is_some_and(|state| state != "Z")
}

#[test]
fn the_reversal_is_checked_against_the_target_before_any_test_runs() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    let ids = python_history(&repo);
    // The "Pad cents" fix: its line was rewritten since, so it cannot be put back into HEAD.
    let moved_on = &ids["moved-on"];
    let log = dir.path().join("runs.log");
    let report = BugMiner::new(&repo)
        .test_cmd(format!("echo ran >> {}; python3 -m unittest", log.display()))
        .build_cmd(format!("echo built >> {}", log.display()))
        .range(format!("{moved_on}~1..{moved_on}"))
        .mine(&mut |_| {})
        .unwrap();
    assert_eq!(report.rejected.len(), 1, "{report:#?}");
    assert_eq!(report.rejected[0].reason.name(), "reversal-does-not-apply");
    assert!(!log.exists(), "commands ran for a fix that cannot apply: {:?}", std::fs::read_to_string(&log));
}

/// A history of two fixes, the newer one's test slow (it records its pid in `started` and
/// sleeps a minute), the older one's test waiting until the slow one has started: with two
/// jobs both are in flight when the older fix is verified.
fn slow_and_quick(repo: &Path) {
    git(repo, &["init", "-q", "-b", "main"]);
    commit(
        repo,
        &[
            ("setup.cfg", "[metadata]\nname = pair\n"),
            ("quick.py", "def f():\n    return 1\n"),
            ("slow.py", "X = 1\n"),
        ],
        "Start",
    );
    let quick_test = "import os, time, unittest\nimport quick\n\n\nclass QuickTest(unittest.TestCase):\n    def test_f(self):\n        if not os.path.exists('test_slow.py'):\n            for _ in range(1200):\n                if os.path.exists(os.environ['SLOW_STARTED']):\n                    break\n                time.sleep(0.05)\n        self.assertEqual(quick.f(), 2)\n";
    commit(repo, &[("quick.py", "def f():\n    return 2\n"), ("test_quick.py", quick_test)], "Fix f");
    let slow_test = "import os, time, unittest\nimport slow\n\n\nclass SlowTest(unittest.TestCase):\n    def test_x(self):\n        with open(os.environ['SLOW_STARTED'], 'w') as f:\n            f.write(str(os.getpid()))\n        time.sleep(60)\n        self.assertEqual(slow.X, 2)\n";
    commit(repo, &[("slow.py", "X = 2\n"), ("test_slow.py", slow_test)], "Fix X");
}

#[test]
fn max_ends_the_verifications_in_flight_and_leaves_nothing_running() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    slow_and_quick(&repo);
    // The run under way is ended from another thread than its own, which races with the
    // thread's wait for it (both may reap it): a few rounds, so that either side wins once.
    for round in 0..3 {
        let started = dir.path().join(format!("started-{round}"));
        let mut events = Vec::new();
        let report = BugMiner::new(&repo)
            .test_cmd(format!("SLOW_STARTED={} python3 -m unittest", started.display()))
            .jobs(2)
            .max_bugs(1)
            .mine(&mut |event| events.push(event))
            .unwrap_or_else(|error| panic!("round {round}: {error}"));
        let verified: Vec<&str> = report.verified.iter().map(|bug| bug.fix_subject.as_str()).collect();
        assert_eq!(verified, vec!["Fix f"], "{report:#?}");
        assert!(report.rejected.is_empty(), "the slow fix was stopped, not judged: {report:#?}");
        assert_eq!((report.unverified, report.cut_short), (1, 1), "{report:#?}");
        assert!(matches!(report.stopped, Some(Stop::MaxReached { bugs: 1 })), "{report:#?}");
        assert!(
            events.iter().any(|e| matches!(e, MineEvent::Stopped { in_flight: 1, .. })),
            "the stop was announced: {events:#?}"
        );
        let pid: i32 = std::fs::read_to_string(&started).unwrap().trim().parse().unwrap();
        let left = alive(pid);
        if left {
            // SAFETY: kill only sends a signal, to the test process this test started.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        assert!(!left, "the slow test (pid {pid}) was left running");
    }
}

/// A history of four fixes whose tests import a module that warns on import: under `-W
/// error` every test module fails to load, at every fix; without it all four fixes verify.
fn warning_on_import(repo: &Path) {
    git(repo, &["init", "-q", "-b", "main"]);
    let buggy = |n: usize| {
        (1..=4)
            .map(|i| format!("def f{i}():\n    return {}\n\n\n", if i <= n { i } else { 0 }))
            .collect::<String>()
    };
    commit(repo, &[("setup.cfg", "[metadata]\nname = warns\n"), ("m.py", &buggy(0))], "Start");
    let mut tests = String::from(
        "import unittest\nimport warnings\nimport m\n\nwarnings.warn('an old API', DeprecationWarning)\n\n\nclass MTest(unittest.TestCase):\n",
    );
    for n in 1..=4 {
        tests.push_str(&format!("    def test_f{n}(self):\n        self.assertEqual(m.f{n}(), {n})\n\n"));
        commit(repo, &[("m.py", &buggy(n)), ("test_m.py", &tests)], &format!("Fix f{n}"));
    }
}

#[test]
fn a_test_command_that_fails_at_every_fix_stops_mining_after_three_in_a_row() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    warning_on_import(&repo);
    let broken = "python3 -W error::DeprecationWarning -m unittest";
    let mut events = Vec::new();
    let report = BugMiner::new(&repo).test_cmd(broken).mine(&mut |event| events.push(event)).unwrap();
    assert_eq!((report.candidates, report.rejected.len(), report.unverified), (4, 3, 1), "{report:#?}");
    for rejection in &report.rejected {
        let RejectReason::TestsFailAtFix { failing, example } = &rejection.reason else {
            panic!("{rejection:#?}")
        };
        assert_eq!(*failing, 1);
        assert!(example.starts_with("ERROR: test_m ("), "{example}");
    }
    assert_eq!(report.rejected[0].reason.name(), "tests-fail-at-fix");
    match &report.stopped {
        Some(Stop::TestsFailAtFix { in_a_row: 3, example }) => {
            assert!(example.starts_with("ERROR: test_m ("), "{example}")
        }
        other => panic!("{other:#?}"),
    }
    let checked = events.iter().filter(|e| matches!(e, MineEvent::Checked { .. })).count();
    assert_eq!(checked, 3);

    // Told to go on, it verifies every candidate; with a working command, all four verify.
    let report = BugMiner::new(&repo).test_cmd(broken).keep_going(true).mine(&mut |_| {}).unwrap();
    assert_eq!((report.rejected.len(), report.unverified), (4, 0), "{report:#?}");
    assert!(report.stopped.is_none(), "{report:#?}");
    let report = BugMiner::new(&repo).test_cmd("python3 -m unittest").mine(&mut |_| {}).unwrap();
    assert_eq!(report.verified.len(), 4, "{report:#?}");
}

#[test]
fn the_phases_of_a_candidate_that_last_a_second_are_announced_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    warning_on_import(&repo);
    let mut events = Vec::new();
    // Every test run sleeps past a second first; the builds (py_compile) are quick.
    let report = BugMiner::new(&repo)
        .test_cmd("sleep 1.2; python3 -m unittest")
        .range("HEAD~1..HEAD")
        .mine(&mut |event| events.push(event))
        .unwrap();
    assert_eq!(report.verified.len(), 1, "{report:#?}");
    // The phases announced, then `None` for the verdict.
    let mut phases: Vec<Option<Phase>> = Vec::new();
    for event in &events {
        match event {
            MineEvent::Phase { number, total, fix_commit, phase } => {
                assert_eq!(
                    (*number, *total, fix_commit.as_str()),
                    (1, 1, report.verified[0].fix_commit.as_str())
                );
                phases.push(Some(*phase));
            }
            MineEvent::Checked { .. } => phases.push(None),
            _ => {}
        }
    }
    // The four test runs always last a second; a build may too on a busy machine.
    let runs: Vec<Option<Phase>> = phases
        .iter()
        .copied()
        .filter(|p| !matches!(p, Some(Phase::BuildAtFix | Phase::BuildWithBug | Phase::BuildWithBugAtTarget)))
        .collect();
    assert_eq!(
        runs,
        vec![
            Some(Phase::TestsAtFix),
            Some(Phase::TestsWithBug),
            Some(Phase::WitnessAtFix),
            Some(Phase::WitnessWithBug),
            Some(Phase::WitnessAtTarget),
            Some(Phase::WitnessWithBugAtTarget),
            None
        ],
        "{events:#?}"
    );
    let canonical = [
        Phase::BuildAtFix,
        Phase::TestsAtFix,
        Phase::BuildWithBug,
        Phase::TestsWithBug,
        Phase::WitnessAtFix,
        Phase::WitnessWithBug,
        Phase::WitnessAtTarget,
        Phase::BuildWithBugAtTarget,
        Phase::WitnessWithBugAtTarget,
    ];
    let order =
        |p: &Option<Phase>| p.map_or(canonical.len(), |p| canonical.iter().position(|q| *q == p).unwrap());
    assert!(phases.windows(2).all(|w| order(&w[0]) < order(&w[1])), "{phases:?}");
    assert_eq!(Phase::TestsAtFix.to_string(), "tests at the fix");
}

/// A project whose `charge` calls `fee`, with the fix of `fee` tested through `charge`, and
/// after it `later` (files to commit): returns the fix's id.
fn fee_fixed_then(repo: &Path, later: &[(&str, &str)], message: &str) -> String {
    git(repo, &["init", "-q", "-b", "main"]);
    let test = "import unittest\nimport api\n\n\nclass ApiTest(unittest.TestCase):\n    def test_zero(self):\n        self.assertEqual(api.charge(0), 0)\n";
    commit(
        repo,
        &[
            ("setup.cfg", "[metadata]\nname = fees\n"),
            ("calc.py", "def fee(n):\n    return n * 2\n"),
            ("api.py", "import calc\n\n\ndef charge(n):\n    return calc.fee(n)\n"),
            ("test_api.py", test),
        ],
        "Start",
    );
    let test_one = format!("{test}\n    def test_one(self):\n        self.assertEqual(api.charge(1), 3)\n");
    let fix = commit(
        repo,
        &[("calc.py", "def fee(n):\n    return n * 3\n"), ("test_api.py", &test_one)],
        "Fix the fee",
    );
    commit(repo, later, message);
    fix
}

#[test]
fn a_bug_whose_witness_does_not_reproduce_at_the_target_is_not_kept() {
    let dir = tempfile::tempdir().unwrap();

    // A later change stops calling the code the fix changed: with the bug put back at the
    // target, the witness passes. At the fix it failed, so only a run at the target tells.
    let hidden = dir.path().join("hidden");
    std::fs::create_dir_all(&hidden).unwrap();
    let fix = fee_fixed_then(&hidden, &[("api.py", "def charge(n):\n    return n * 3\n")], "Inline the fee");
    let report = BugMiner::new(&hidden).test_cmd("python3 -m unittest").mine(&mut |_| {}).unwrap();
    assert_eq!((report.candidates, report.verified.len()), (1, 0), "{report:#?}");
    match &report.rejected[0].reason {
        RejectReason::NotAtTarget { detail } => {
            assert!(detail.contains("passes at the target with the bug"), "{detail}");
            assert!(detail.contains("test_api.ApiTest.test_one"), "{detail}");
        }
        other => panic!("{other:#?}"),
    }
    assert_eq!(report.rejected[0].reason.name(), "not-at-target");
    // The same fix, mined with the fix itself as the target, is a bug.
    let report =
        BugMiner::new(&hidden).test_cmd("python3 -m unittest").target(&fix).mine(&mut |_| {}).unwrap();
    assert_eq!(report.verified.len(), 1, "{report:#?}");

    // A later change renames the witness's test: at the target the witness fails without the
    // bug, so the bugs file would hold a witness that cannot tell.
    let renamed = dir.path().join("renamed");
    std::fs::create_dir_all(&renamed).unwrap();
    let test_renamed = "import unittest\nimport api\n\n\nclass ApiTest(unittest.TestCase):\n    def test_zero(self):\n        self.assertEqual(api.charge(0), 0)\n\n    def test_charge_one(self):\n        self.assertEqual(api.charge(1), 3)\n";
    fee_fixed_then(&renamed, &[("test_api.py", test_renamed)], "Name the test after what it checks");
    let report = BugMiner::new(&renamed).test_cmd("python3 -m unittest").mine(&mut |_| {}).unwrap();
    assert_eq!((report.candidates, report.verified.len()), (1, 0), "{report:#?}");
    match &report.rejected[0].reason {
        RejectReason::NotAtTarget { detail } => {
            assert!(detail.contains("fails at the target without the bug"), "{detail}")
        }
        other => panic!("{other:#?}"),
    }
    assert_eq!(git(&renamed, &["status", "--porcelain"]), "");
}

#[test]
fn a_fix_whose_file_was_renamed_since_is_followed_to_its_name_at_the_target() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    let test = "import unittest\nimport pkg\n\n\nclass PkgTest(unittest.TestCase):\n    def test_int(self):\n        self.assertIsInstance(pkg.double(1), int)\n";
    commit(
        &repo,
        &[
            ("setup.cfg", "[metadata]\nname = pkg\n"),
            ("pkg/__init__.py", "from .impl import double\n"),
            ("pkg/impl.py", "def double(x):\n    return x + x + 1\n"),
            ("test_pkg.py", test),
        ],
        "Start",
    );
    let test_double =
        format!("{test}\n    def test_double(self):\n        self.assertEqual(pkg.double(2), 4)\n");
    let fix = commit(
        &repo,
        &[("pkg/impl.py", "def double(x):\n    return x + x\n"), ("test_pkg.py", &test_double)],
        "Double without the extra one",
    );
    git(&repo, &["mv", "pkg/impl.py", "pkg/core.py"]);
    commit(&repo, &[("pkg/__init__.py", "from .core import double\n")], "Call the module core");

    let report = BugMiner::new(&repo).test_cmd("python3 -m unittest").mine(&mut |_| {}).unwrap();
    assert_eq!((report.candidates, report.verified.len()), (1, 1), "{report:#?}");
    let bug = &report.verified[0];
    assert_eq!((bug.fix_commit.as_str(), bug.file.as_str()), (fix.as_str(), "pkg/core.py"));
    assert!(bug.patch.contains("--- a/pkg/core.py\n+++ b/pkg/core.py\n"), "{}", bug.patch);
    assert!(bug.patch.contains("+    return x + x + 1\n"), "{}", bug.patch);
}
