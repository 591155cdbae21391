//! The change a reviewer is shown, read from real git repositories made in a temporary
//! directory: a commit against its parent, a root commit, a work tree against a base, and
//! whatever the user's git configuration says about diff prefixes.

use std::path::Path;
use std::process::Command;

use revcal_review::{Change, ReviewError};

fn git(dir: &Path, args: &[&str]) {
    let output = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(output.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&output.stderr));
}

/// A repository with two commits: `a.py` created, then its second line changed and `b/c.py`
/// added (a directory named `b`, which a careless prefix strip would eat).
fn repository() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path();
    std::fs::write(repo.join("a.py"), "x = 1\ny = 2\nz = 3\n").unwrap();
    git(repo, &["init", "-q"]);
    git(repo, &["add", "."]);
    git(repo, &["commit", "-qm", "one"]);
    std::fs::write(repo.join("a.py"), "x = 1\ny = 20\nz = 3\n").unwrap();
    std::fs::create_dir(repo.join("b")).unwrap();
    std::fs::write(repo.join("b/c.py"), "print(1)\n").unwrap();
    git(repo, &["add", "."]);
    git(repo, &["commit", "-qm", "two"]);
    dir
}

#[test]
fn a_commit_is_its_change_against_its_parent_whatever_the_users_prefix_settings() {
    let dir = repository();
    let repo = dir.path();
    for (key, value) in
        [("diff.noprefix", "false"), ("diff.noprefix", "true"), ("diff.mnemonicPrefix", "true")]
    {
        git(repo, &["config", key, value]);
        let change = Change::of_commit(repo, "HEAD", 3, 100_000).unwrap();
        let paths: Vec<&str> = change.files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, ["a.py", "b/c.py"], "{key}={value}");
        assert_eq!(change.files[0].changed_lines, vec![2]);
        assert!(change.files[0].excerpt.contains("     2 + y = 20\n"), "{}", change.files[0].excerpt);
        assert!(change.files[0].excerpt.contains("       - y = 2\n"), "{}", change.files[0].excerpt);
    }
    // The root commit against the empty tree: every line added.
    let root = Change::of_commit(repo, "HEAD~1", 3, 100_000).unwrap();
    assert_eq!(root.files[0].changed_lines, vec![1, 2, 3]);
}

#[test]
fn a_work_tree_is_read_against_its_base_and_nothing_is_written() {
    let dir = repository();
    let repo = dir.path();
    std::fs::write(repo.join("a.py"), "x = 1\ny = 20\nz = 30\n").unwrap();
    let index = std::fs::read(repo.join(".git/index")).unwrap();
    let change = Change::of_work_tree(repo, "HEAD~1", 3, 100_000).unwrap();
    assert_eq!(change.files[0].changed_lines, vec![2, 3]);
    assert_eq!(std::fs::read(repo.join(".git/index")).unwrap(), index, "the index is not refreshed");
}

#[test]
fn bad_revisions_large_changes_and_empty_changes_are_errors() {
    let dir = repository();
    let repo = dir.path();
    assert!(matches!(Change::of_commit(repo, "--output=/tmp/x", 3, 100_000), Err(ReviewError::Rev { .. })));
    match Change::of_commit(repo, "no-such-rev", 3, 100_000) {
        Err(ReviewError::Git { message, .. }) => assert!(message.contains("no-such-rev"), "{message}"),
        other => panic!("{other:?}"),
    }
    assert!(matches!(Change::of_commit(repo, "HEAD", 3, 10), Err(ReviewError::TooLarge { max: 10, .. })));
    assert!(matches!(Change::of_work_tree(repo, "HEAD", 3, 100_000), Err(ReviewError::Empty)));
}
