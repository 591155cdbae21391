//! A crafted commit against every writer of files from git objects that the commands run: a
//! tree with a symbolic link `evil` to the user's `.git/hooks` (or to a directory outside)
//! and a directory `evil` holding an executable `pre-commit`. `git fsck` refuses such a tree;
//! `git hash-object --literally` writes one. Whatever runs it, nothing is created outside
//! the scratch directories.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn git(dir: &Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(output.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8_lossy(&output.stdout).trim().to_owned()
}

/// `data` as an object of `kind`, written exactly as given.
fn object(repo: &Path, kind: &str, data: &[u8]) -> String {
    let mut child = Command::new("git")
        .args(["hash-object", "-t", kind, "--literally", "-w", "--stdin"])
        .current_dir(repo)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(data).unwrap();
    String::from_utf8(child.wait_with_output().unwrap().stdout).unwrap().trim().to_owned()
}

/// A tree of (mode, name, id) entries in the order given.
fn tree(repo: &Path, entries: &[(&str, &str, &str)]) -> String {
    let mut data = Vec::new();
    for (mode, name, id) in entries {
        data.extend_from_slice(format!("{mode} {name}\0").as_bytes());
        data.extend((0..id.len()).step_by(2).map(|at| u8::from_str_radix(&id[at..at + 2], 16).unwrap()));
    }
    object(repo, "tree", &data)
}

/// Every path beneath `dir`, links not followed.
fn listing(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(at) = pending.pop() {
        for entry in std::fs::read_dir(&at).unwrap().flatten() {
            if entry.file_type().unwrap().is_dir() {
                pending.push(entry.path());
            }
            found.push(entry.path());
        }
    }
    found.sort();
    found
}

/// A repository with a tested fix of `calc.py` (a bug the miner can verify) and, on top, a
/// commit whose tree adds the link and directory `evil`, pointing at `target`; the crafted
/// commit is HEAD.
fn crafted_repository(repo: &Path, target: &Path) -> String {
    std::fs::create_dir_all(repo).unwrap();
    git(repo, &["init", "-q"]);
    std::fs::write(repo.join("calc.py"), "def last(items):\n    return items[len(items)]\n").unwrap();
    git(repo, &["add", "."]);
    git(repo, &["commit", "-qm", "calc"]);
    std::fs::write(repo.join("calc.py"), "def last(items):\n    return items[len(items) - 1]\n").unwrap();
    std::fs::write(
        repo.join("test_calc.py"),
        "import unittest\nfrom calc import last\n\n\nclass T(unittest.TestCase):\n    def test_last(self):\n        self.assertEqual(last([1, 2]), 2)\n",
    )
    .unwrap();
    git(repo, &["add", "."]);
    git(repo, &["commit", "-qm", "fix: last returns the last item"]);
    let hook = object(repo, "blob", b"#!/bin/sh\necho pwned\n");
    let inner = tree(repo, &[("100755", "pre-commit", &hook)]);
    let link = object(repo, "blob", target.display().to_string().as_bytes());
    let mut entries: Vec<(String, String, String)> = git(repo, &["ls-tree", "HEAD"])
        .lines()
        .map(|line| {
            let (meta, name) = line.split_once('\t').unwrap();
            let parts: Vec<&str> = meta.split(' ').collect();
            (parts[0].trim_start_matches('0').to_owned(), name.to_owned(), parts[2].to_owned())
        })
        .collect();
    entries.push(("120000".into(), "evil".into(), link));
    entries.push(("40000".into(), "evil".into(), inner));
    let borrowed: Vec<(&str, &str, &str)> =
        entries.iter().map(|(m, n, i)| (m.as_str(), n.as_str(), i.as_str())).collect();
    let root = tree(repo, &borrowed);
    let commit = git(repo, &["commit-tree", &root, "-p", "HEAD", "-m", "crafted"]);
    git(repo, &["update-ref", "HEAD", &commit]);
    commit
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn a_suite_entry_at_a_crafted_commit_writes_nothing_outside_its_checkouts() {
    let dir = tempfile::tempdir().unwrap();
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let repo = dir.path().join("repos/calc");
    let hooks = repo.join(".git/hooks");
    for target in [hooks.clone(), outside.clone()] {
        let _ = std::fs::remove_dir_all(&repo);
        let commit = crafted_repository(&repo, &target);
        let hooks_before = listing(&hooks);
        std::fs::write(
            dir.path().join("suite.yaml"),
            format!("entries:\n  - {{repo: repos/calc, commit: {commit}, files: [calc.py]}}\n"),
        )
        .unwrap();
        let output = Command::new(env!("CARGO_BIN_EXE_revcal"))
            .args(["calibrate", "suite", "suite.yaml", "--review-cmd", "echo '[]'", "--scorer", "string"])
            .args(["--min-recall", "0", "--min-plants", "1", "-q", "--json"])
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
        let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
        let error = report["suite"]["unitErrors"][0]["error"].as_str().unwrap_or_default().to_owned();
        assert!(error.contains("evil") && error.contains("twice"), "{report}");
        assert_eq!(listing(&hooks), hooks_before, "no hook was made in the repository");
        assert!(listing(&outside).is_empty(), "nothing was made outside: {:?}", listing(&outside));
    }
}

#[test]
fn mining_a_history_that_ends_in_a_crafted_commit_writes_nothing_outside_its_clones() {
    if Command::new("python3").arg("--version").output().is_err() {
        eprintln!("notice: python3 is missing; the miner's crafted-commit test is skipped");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let repo = dir.path().join("repo");
    let hooks = repo.join(".git/hooks");
    for target in [hooks.clone(), outside.clone()] {
        let _ = std::fs::remove_dir_all(&repo);
        crafted_repository(&repo, &target);
        let hooks_before = listing(&hooks);
        // The crafted commit is the target every clone checks out; the fix before it is mined.
        let output = Command::new(env!("CARGO_BIN_EXE_revcal"))
            .args(["bugs", "mine", "repo", "--test-cmd", "python3 -m unittest", "-o", "bugs.yaml"])
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert_eq!(listing(&hooks), hooks_before, "no hook was made in the repository: {}", stderr(&output));
        assert!(listing(&outside).is_empty(), "nothing was made outside: {:?}", listing(&outside));
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        let bugs = std::fs::read_to_string(dir.path().join("bugs.yaml")).unwrap();
        assert!(bugs.contains("calc.py"), "the fix was mined all the same: {bugs}");
    }
}
