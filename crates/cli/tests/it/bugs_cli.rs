//! `revcal bugs mine`, `revcal bugs list` and calibration on the bugs file, as a user runs
//! them: on a real Python history with two tested fixes and a fix whose test never flips.

mod languages;
mod runs;
mod skips;

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

pub(crate) fn git(dir: &Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(output.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8_lossy(&output.stdout).trim().to_owned()
}

pub(crate) fn commit(repo: &Path, files: &[(&str, &str)], message: &str) {
    for (path, content) in files {
        std::fs::write(repo.join(path), content).unwrap();
    }
    git(repo, &["add", "-A"]);
    git(repo, &["commit", "-qm", message]);
}

pub(crate) fn revcal(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_revcal"))
        .args(args)
        .current_dir(dir)
        .env_remove("RUST_LOG")
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .output()
        .unwrap()
}

pub(crate) fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

const TEST: &str = "import unittest\nimport shop\n\n\nclass ShopTest(unittest.TestCase):\n    def test_total(self):\n        self.assertEqual(shop.total([1, 2]), 3)\n";

#[test]
fn mined_bugs_are_listed_and_an_lgtm_reviewer_scores_zero_on_them() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("shop");
    std::fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    let v1 = "def total(prices):\n    return sum(prices)\n\n\ndef discount(price, percent):\n    return price * percent / 100\n\n\ndef free_shipping(total):\n    return total > 50\n";
    commit(
        &repo,
        &[
            ("setup.py", "from setuptools import setup\nsetup(name='shop')\n"),
            ("shop.py", v1),
            ("test_shop.py", TEST),
        ],
        "Start",
    );
    let v2 = v1.replace("return price * percent / 100", "return price - price * percent / 100");
    let t2 = format!(
        "{TEST}\n    def test_discount(self):\n        self.assertEqual(shop.discount(200, 10), 180)\n"
    );
    commit(&repo, &[("shop.py", &v2), ("test_shop.py", &t2)], "Fix discount: subtract it from the price");
    let v3 = v2.replace("return total > 50", "return total >= 50");
    let t3 = format!(
        "{t2}\n    def test_free_shipping_at_50(self):\n        self.assertTrue(shop.free_shipping(50))\n"
    );
    commit(&repo, &[("shop.py", &v3), ("test_shop.py", &t3)], "Ship free from 50 on");
    let v4 = v3.replace("return sum(prices)", "return sum(prices, 0)");
    let t4 = format!("{t3}\n    def test_total_empty(self):\n        self.assertEqual(shop.total([]), 0)\n");
    commit(&repo, &[("shop.py", &v4), ("test_shop.py", &t4)], "Total of nothing");

    let mined =
        revcal(&repo, &["bugs", "mine", "--test-cmd", "python3 -m unittest", "-o", "../bugs.yaml", "--json"]);
    assert_eq!(mined.status.code(), Some(0), "{}", stderr(&mined));
    let report: Value = serde_json::from_slice(&mined.stdout).unwrap();
    assert_eq!((report["scanned"].as_u64(), report["candidates"].as_u64()), (Some(4), Some(3)));
    assert_eq!(report["verified"].as_array().unwrap().len(), 2);
    assert_eq!(report["rejected"][0]["reason"], "no-test-flips");
    let log = stderr(&mined);
    assert!(log.contains("[3/3]") && log.contains("2 verified, 1 rejected (1 no-test-flips)"), "{log}");
    let yaml = std::fs::read_to_string(dir.path().join("bugs.yaml")).unwrap();
    assert!(yaml.contains("  patch: |2\n    diff --git a/shop.py b/shop.py\n"), "{yaml}");

    let listed = revcal(dir.path(), &["bugs", "list", "bugs.yaml"]);
    assert_eq!(listed.status.code(), Some(0), "{}", stderr(&listed));
    let text = String::from_utf8_lossy(&listed.stdout);
    assert!(text.contains("fix:     Ship free from 50 on") && text.contains("2 bugs in bugs.yaml"), "{text}");
    // Which line the list shows, and why a calibration report may show another.
    assert!(text.contains("first line a bug changes with it alone applied to the target"), "{text}");
    assert!(
        text.contains("witness: python3 -m unittest test_shop.ShopTest.test_free_shipping_at_50"),
        "{text}"
    );

    let before = std::fs::read(repo.join("shop.py")).unwrap();
    let lgtm = revcal(
        &repo,
        &[
            "calibrate",
            "--review-cmd",
            "echo LGTM",
            "--plants-file",
            "../bugs.yaml",
            "--scorer",
            "repro",
            "--min-plants",
            "1",
            "--json",
        ],
    );
    assert_eq!(lgtm.status.code(), Some(2), "{}", stderr(&lgtm));
    let calibration: Value = serde_json::from_slice(&lgtm.stdout).unwrap();
    assert_eq!((calibration["recall"].as_f64(), calibration["total"].as_u64()), (Some(0.0), Some(2)));
    assert_eq!(calibration["perKind"]["real"]["total"], 2);
    assert!(calibration["plants"].as_array().unwrap().iter().all(|p| p["kind"] == "real"));
    assert!(stderr(&lgtm).contains("by kind: real 0/2"), "{}", stderr(&lgtm));
    assert_eq!(std::fs::read(repo.join("shop.py")).unwrap(), before);

    // Both kinds in one run: mutants of HEAD's change beside the two real bugs, each kind with
    // its own recall, never on a line a real bug changes: of shop.py's three lines with
    // mutants (2, 6, 10), the bugs hold 6 and 10, so one mutant of the two asked for fits.
    let both = revcal(
        &repo,
        &[
            "calibrate",
            "--review-cmd",
            "echo LGTM",
            "--plants-file",
            "../bugs.yaml",
            "--plants",
            "2",
            "--scorer",
            "repro",
            "--min-plants",
            "1",
            "--json",
        ],
    );
    assert_eq!(both.status.code(), Some(2), "{}", stderr(&both));
    let calibration: Value = serde_json::from_slice(&both.stdout).unwrap();
    assert_eq!(calibration["perKind"]["real"]["total"], 2);
    assert_eq!(calibration["perKind"]["synthetic"]["total"], 1, "{calibration:#}");
    let plants = calibration["plants"].as_array().unwrap();
    let real_lines: Vec<u64> =
        plants.iter().filter(|p| p["kind"] == "real").map(|p| p["line"].as_u64().unwrap()).collect();
    assert!(
        plants
            .iter()
            .filter(|p| p["kind"] == "synthetic")
            .all(|p| !real_lines.contains(&p["line"].as_u64().unwrap()))
    );
    assert_eq!(std::fs::read(repo.join("shop.py")).unwrap(), before);

    // A hand-written bug on the line of "Ship free from 50 on": left out with a warning when
    // all are planted at once, planted alone with --one-at-a-time (one review per bug).
    let overlapping = format!(
        "{yaml}- file: shop.py\n  line: 10\n  category: boundary\n  defect: free shipping starts at 500\n  patch: |\n    --- a/shop.py\n    +++ b/shop.py\n    @@ -10 +10 @@\n    -    return total >= 50\n    +    return total >= 500\n  fix_commit: hand\n  fix_subject: hand-written\n"
    );
    std::fs::write(dir.path().join("overlap.yaml"), overlapping).unwrap();
    // The reviewer runs in a scratch checkout: it logs its runs by absolute path.
    let reviewer = format!("echo run >> '{}'; echo LGTM", dir.path().join("runs.log").display());
    let reviewer = reviewer.as_str();
    let together = revcal(
        &repo,
        &[
            "calibrate",
            "--review-cmd",
            reviewer,
            "--plants-file",
            "../overlap.yaml",
            "--scorer",
            "repro",
            "--min-plants",
            "1",
            "--json",
        ],
    );
    let calibration: Value = serde_json::from_slice(&together.stdout).unwrap();
    assert_eq!(calibration["total"], 2, "{}", stderr(&together));
    assert!(
        stderr(&together)
            .contains("plant 3 (shop.py:10) left out: it changes lines that shop.py:10 also changes"),
        "{}",
        stderr(&together)
    );
    let alone = revcal(
        &repo,
        &[
            "calibrate",
            "--review-cmd",
            reviewer,
            "--plants-file",
            "../overlap.yaml",
            "--one-at-a-time",
            "--scorer",
            "repro",
            "--min-plants",
            "1",
            "--json",
        ],
    );
    assert_eq!(alone.status.code(), Some(2), "{}", stderr(&alone));
    let calibration: Value = serde_json::from_slice(&alone.stdout).unwrap();
    assert_eq!((calibration["total"].as_u64(), calibration["caught"].as_u64()), (Some(3), Some(0)));
    let runs = std::fs::read_to_string(dir.path().join("runs.log")).unwrap();
    assert_eq!(
        runs.lines().count(),
        (1 + 1) + (3 + 1),
        "one review together, then one per bug, each run with one of the unplanted change"
    );
    assert_eq!(std::fs::read(repo.join("shop.py")).unwrap(), before);

    let missing = revcal(dir.path(), &["bugs", "list", "nope.yaml"]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(stderr(&missing).contains("nope.yaml"), "{}", stderr(&missing));
}

#[test]
fn ctrl_c_while_mining_exits_130_keeps_the_bugs_verified_before_it_and_removes_the_scratch_clones() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("slow");
    let tmp = dir.path().join("tmp");
    std::fs::create_dir_all(&repo).unwrap();
    std::fs::create_dir_all(&tmp).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    commit(&repo, &[("setup.py", "\n"), ("slow.py", "X = 1\n"), ("quick.py", "Y = 1\n")], "Start");
    // With its bug, the older fix's test says it started, sleeps a minute, then says it ended.
    let slow_test = "import os, time, unittest\nimport slow\n\n\nclass SlowTest(unittest.TestCase):\n    def test_x(self):\n        if slow.X != 2:\n            open(os.environ['SLOW_STARTED'], 'w').close()\n            time.sleep(60)\n            open(os.environ['SLOW_ENDED'], 'w').close()\n        self.assertEqual(slow.X, 2)\n";
    commit(&repo, &[("slow.py", "X = 2\n"), ("test_slow.py", slow_test)], "Fix X");
    let quick_test = "import unittest\nimport quick\n\n\nclass QuickTest(unittest.TestCase):\n    def test_y(self):\n        self.assertEqual(quick.Y, 2)\n";
    commit(&repo, &[("quick.py", "Y = 2\n"), ("test_quick.py", quick_test)], "Fix Y");
    let fix_y = git(&repo, &["rev-parse", "HEAD"]);
    let (started, ended) = (dir.path().join("started"), dir.path().join("ended"));
    let test_cmd =
        format!("SLOW_STARTED={} SLOW_ENDED={} python3 -m unittest", started.display(), ended.display());
    // Newest fix first: Y is verified, then X's test sleeps with its bug.
    let child = Command::new(env!("CARGO_BIN_EXE_revcal"))
        .args(["bugs", "mine", "--test-cmd", &test_cmd, "-o", "../bugs.yaml", "--json"])
        .current_dir(&repo)
        .env("TMPDIR", &tmp)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(300);
    while !started.exists() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(started.exists(), "the slow test never started");
    // SAFETY: kill only sends a signal to the child we started.
    unsafe {
        libc::kill(child.id() as libc::pid_t, libc::SIGINT);
    }
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(130), "{}", stderr(&output));
    assert!(!ended.exists(), "the test that sleeps a minute was waited for");
    let log = stderr(&output);
    assert!(log.contains("stopped by SIGINT: 1 bug verified before it (written to ../bugs.yaml)"), "{log}");
    // The report and the bugs file hold the bug verified before the signal.
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["stopped"]["reason"], "signal", "{report:#}");
    assert_eq!(report["stopped"]["name"], "SIGINT", "{report:#}");
    assert_eq!((report["candidates"].as_u64(), report["unverified"].as_u64()), (Some(2), Some(1)));
    assert_eq!(report["cutShort"], 1);
    assert_eq!(report["verified"][0]["fix_commit"], fix_y.as_str(), "{report:#}");
    let listed = revcal(dir.path(), &["bugs", "list", "bugs.yaml", "--json"]);
    assert_eq!(listed.status.code(), Some(0), "{}", stderr(&listed));
    let bugs: Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(bugs.as_array().map(Vec::len), Some(1), "{bugs:#}");
    let left: Vec<_> = std::fs::read_dir(&tmp).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert!(left.is_empty(), "scratch clones left behind: {left:?}");
    assert_eq!(git(&repo, &["status", "--porcelain"]), "");
}

#[test]
fn no_process_of_the_tests_outlives_revcal_killed_with_sigkill_while_mining() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("leaver");
    let tmp = dir.path().join("tmp");
    std::fs::create_dir_all(&repo).unwrap();
    std::fs::create_dir_all(&tmp).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    commit(&repo, &[("setup.py", "\n"), ("leaver.py", "X = 1\n")], "Start");
    commit(&repo, &[("leaver.py", "X = 2\n"), ("test_leaver.py", "import leaver\n")], "Fix X");
    // The test command leaves `sleep 619` behind in a session of its own (a double fork: its
    // parent exits at once), then takes its time.
    let pidfile = dir.path().join("sleeper");
    let tests = dir.path().join("tests.sh");
    std::fs::write(
        &tests,
        format!(
            "( setsid sh -c 'echo $$ > {0}.tmp; mv {0}.tmp {0}; exec sleep 619' </dev/null >/dev/null 2>&1 & )\nsleep 60\n",
            pidfile.display()
        ),
    )
    .unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_revcal"))
        .args(["bugs", "mine", "--test-cmd", &format!("sh {}", tests.display())])
        .current_dir(&repo)
        .env("TMPDIR", &tmp)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let sleeping = |pid: i32| {
        std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|line| line == b"sleep\x00619\x00")
            && std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .is_ok_and(|stat| stat.rsplit_once(") ").is_some_and(|(_, rest)| !rest.starts_with('Z')))
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let pid = loop {
        if let Some(pid) = std::fs::read_to_string(&pidfile).ok().and_then(|text| text.trim().parse().ok())
            && sleeping(pid)
        {
            break pid;
        }
        assert!(std::time::Instant::now() < deadline, "the test command's grandchild never started");
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    // SAFETY: kill only sends a signal to the child we started.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGKILL) };
    child.wait().unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while sleeping(pid) && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let outlived = sleeping(pid);
    if outlived {
        // SAFETY: the test's own `sleep 619`: no failing run leaves it behind.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
    assert!(!outlived, "the tests' grandchild (pid {pid}) still runs 5 s after revcal was killed");
}
