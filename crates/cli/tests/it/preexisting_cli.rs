//! A real linter's warnings that were in the code before the plants (ruff's, when it is
//! installed): set aside by default, neither catches nor false positives.

use std::path::Path;
use std::process::{Command, Output};

const CALC: &str = "import os


def check(a, b):
    if a == None:
        return 0
    total = a + b
    return total


def other(x):
    if x == None:
        return 1
    return 1


def third(y):
    if y is None:
        return 0
    return y * 2
";

/// One plant two lines below an old warning (E711 on line 5), one that makes a warning of its
/// own (E711 on line 18).
const PLANTS: &str = "\
- {file: calc.py, line: 7, original: 'a + b', mutated: 'a - b', category: arithmetic}
- {file: calc.py, line: 18, original: 'y is None', mutated: 'y == None', category: null-handling}
";

fn git(dir: &Path, args: &[&str]) {
    let status = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"])
        .args(args)
        .current_dir(dir)
        .status()
        .unwrap();
    assert!(status.success(), "git {args:?}");
}

fn calibrate(repo: &Path, extra: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_revcal"))
        .args(["calibrate", "--review-cmd", "ruff check --output-format json --isolated --select E,F,W ."])
        .args(["--ok-exit-codes", "0,1", "--scorer", "string", "--plants-file", "../plants.yaml"])
        .args(["--min-recall", "0", "--min-plants", "1", "--json"])
        .args(extra)
        .current_dir(repo)
        .output()
        .unwrap()
}

#[test]
fn findings_the_reviewer_made_on_the_unplanted_change_are_set_aside() {
    if Command::new("ruff").arg("--version").output().is_err() {
        eprintln!(
            "notice: ruff is not installed (pip install ruff); the test of old warnings set aside is skipped"
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    std::fs::write(repo.join("calc.py"), CALC).unwrap();
    std::fs::write(dir.path().join("plants.yaml"), PLANTS).unwrap();
    git(&repo, &["init", "-q"]);
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-qm", "calc"]);
    let report = |output: &Output| -> serde_json::Value {
        assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
        serde_json::from_slice(&output.stdout).unwrap()
    };

    // Every warning counted: the old E711 on line 5 "catches" the plant on line 7, and the
    // old F401 and E711 elsewhere are false positives.
    let counted = report(&calibrate(&repo, &["--no-preexisting-filter"]));
    assert_eq!(
        (counted["caught"].as_u64(), counted["falsePositives"].as_u64()),
        (Some(2), Some(2)),
        "{counted}"
    );
    assert!(counted.get("preexisting").is_none());

    // By default the three old warnings are set aside; the plant that made a warning of its
    // own is the one caught.
    let output = calibrate(&repo, &[]);
    let filtered = report(&output);
    assert_eq!(
        (filtered["caught"].as_u64(), filtered["falsePositives"].as_u64()),
        (Some(1), Some(0)),
        "{filtered}"
    );
    assert_eq!(filtered["preexisting"], 3);
    assert_eq!(filtered["findings"], 4);
    let caught: Vec<&serde_json::Value> =
        filtered["plants"].as_array().unwrap().iter().filter(|plant| plant["status"] == "caught").collect();
    assert_eq!(caught.len(), 1);
    assert_eq!(caught[0]["line"], 18);
    let summary = String::from_utf8_lossy(&output.stderr);
    assert!(
        summary.contains("set aside  3 findings the reviewer also made on the unplanted change"),
        "{summary}"
    );
}
