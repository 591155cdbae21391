//! Helpers shared by the integration tests.

use std::path::Path;
use std::process::Command;

/// Runs git in `dir` with a fixed identity and no signing; its trimmed stdout.
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

/// Writes `data` as an object of `kind` into `repo` exactly as given (`--literally`: git's
/// own commands refuse a tree with a name twice; this does not check); its id.
pub(crate) fn write_object(repo: &Path, kind: &str, data: &[u8]) -> String {
    use std::io::Write;
    let mut child = Command::new("git")
        .args(["hash-object", "-t", kind, "--literally", "-w", "--stdin"])
        .current_dir(repo)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(data).unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success());
    String::from_utf8(output.stdout).unwrap().trim().to_owned()
}

/// A tree object of `entries` (mode, name, id), in the order given.
pub(crate) fn write_tree(repo: &Path, entries: &[(&str, &str, &str)]) -> String {
    let mut data = Vec::new();
    for (mode, name, id) in entries {
        data.extend_from_slice(format!("{mode} {name}\0").as_bytes());
        data.extend((0..id.len()).step_by(2).map(|at| u8::from_str_radix(&id[at..at + 2], 16).unwrap()));
    }
    write_object(repo, "tree", &data)
}

/// A commit of `tree` with `parent`, checked out nowhere; its id.
pub(crate) fn commit_tree(repo: &Path, tree: &str, parent: &str, message: &str) -> String {
    git(repo, &["commit-tree", tree, "-p", parent, "-m", message])
}
