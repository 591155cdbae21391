//! An entry's repository: a path as it is, or a URL cloned once (bare) into the repositories
//! directory. Units read only its objects; each review has a scratch checkout of its own.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::{RepoSource, SuiteError};
use revcal_process::redact_url_credentials as redact;

/// Runs git in `dir` (through `revcal_process::git`, the one runner of git) and returns its
/// trimmed standard output; `Err` holds what it said, with every URL's credentials redacted
/// (git names the URL it failed to reach).
fn git(dir: &Path, args: &[&str]) -> Result<String, String> {
    match revcal_process::git(dir, args) {
        Ok(stdout) => Ok(String::from_utf8_lossy(&stdout).trim().to_owned()),
        Err(error) => Err(format!("git {}: {}", error.args, error.message)),
    }
}

/// The commit id `rev` names in `repo`.
fn resolve(repo: &Path, rev: &str) -> Result<String, String> {
    git(repo, &["rev-parse", "--verify", "--quiet", "--end-of-options", &format!("{rev}^{{commit}}")])
        .map_err(|_| format!("`{rev}` is not a commit of {}", repo.display()))
}

/// Fetches every branch and tag of `url` into the bare repository `repo`, and points its
/// `HEAD` where the remote's does. The URL is passed on the command line each time and never
/// written into the clone (`git clone` would keep it, token and all, in the clone's config,
/// and CI caches the repositories directory); nor is `FETCH_HEAD`, which names it.
fn fetch(repo: &Path, url: &str) -> Result<(), String> {
    git(
        repo,
        &[
            "fetch",
            "--quiet",
            "--no-write-fetch-head",
            "--",
            url,
            "+refs/heads/*:refs/heads/*",
            "+refs/tags/*:refs/tags/*",
        ],
    )?;
    let heads = git(repo, &["ls-remote", "--symref", "--", url, "HEAD"])?;
    let branch = heads.lines().find_map(|line| line.strip_prefix("ref: ")?.split('\t').next());
    if let Some(branch) = branch.filter(|b| b.starts_with("refs/heads/")) {
        git(repo, &["symbolic-ref", "HEAD", branch])?;
    }
    Ok(())
}

/// The local repository of `source`: a path as it is (it must be a git repository), a URL
/// cloned once (bare) into `repos_dir` and reused after, fetched again only when `rev` is not
/// in it. Returns the repository and the commit id of `rev`.
///
/// The URL is never written into the clone (nor its credentials into any message): see
/// docs/suites.md#the-suite-file.
pub fn locate_repository(
    source: &RepoSource,
    rev: &str,
    repos_dir: &Path,
) -> Result<(PathBuf, String), SuiteError> {
    let fail = |message: String| SuiteError::Repository { repo: source.to_string(), message };
    match source {
        RepoSource::Path(path) => {
            if !path.is_dir() {
                return Err(fail("no such directory".into()));
            }
            let repo = path.canonicalize().map_err(|e| fail(e.to_string()))?;
            git(&repo, &["rev-parse", "--git-dir"]).map_err(|_| fail("not a git repository".into()))?;
            let commit = resolve(&repo, rev).map_err(fail)?;
            Ok((repo, commit))
        }
        RepoSource::Url(url) => {
            let digest = Sha256::digest(url.as_bytes());
            let tag: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
            std::fs::create_dir_all(repos_dir)
                .map_err(|e| fail(format!("cannot create {}: {e}", repos_dir.display())))?;
            let repos_dir =
                repos_dir.canonicalize().map_err(|e| fail(format!("{}: {e}", repos_dir.display())))?;
            let repo = repos_dir.join(format!("{tag}.git"));
            if !repo.join("HEAD").is_file() {
                tracing::info!(url = %redact(url), into = %repo.display(), "cloning");
                // Made beside and renamed into place: an interrupted clone leaves no
                // repository that looks whole.
                let staging = tempfile::Builder::new()
                    .prefix(&format!(".{tag}-"))
                    .tempdir_in(&repos_dir)
                    .map_err(|e| fail(format!("cannot create a clone in {}: {e}", repos_dir.display())))?;
                git(staging.path(), &["init", "--quiet", "--bare"]).map_err(fail)?;
                fetch(staging.path(), url).map_err(fail)?;
                let staged = staging.keep();
                if std::fs::rename(&staged, &repo).is_err() {
                    // Another run cloned it meanwhile: use theirs.
                    let _ = std::fs::remove_dir_all(&staged);
                }
            }
            let commit = match resolve(&repo, rev) {
                Ok(commit) => commit,
                Err(_) => {
                    fetch(&repo, url).map_err(fail)?;
                    resolve(&repo, rev).map_err(fail)?
                }
            };
            Ok((repo, commit))
        }
    }
}

/// A clean checkout of one commit, removed when dropped.
#[derive(Debug)]
pub struct Checkout {
    _dir: tempfile::TempDir,
    /// The work tree.
    pub tree: PathBuf,
}

/// Checks `commit` of `repo` out in a new temporary directory: a `git clone --shared`, so
/// that neither the repository's work tree nor its metadata is touched.
pub fn check_out(repo: &Path, commit: &str) -> Result<Checkout, SuiteError> {
    let fail = |message: String| SuiteError::Repository { repo: repo.display().to_string(), message };
    let dir = tempfile::Builder::new()
        .prefix("revcal-suite-")
        .tempdir()
        .map_err(|e| fail(format!("cannot create a checkout directory: {e}")))?;
    let source = repo.display().to_string();
    git(dir.path(), &["clone", "--quiet", "--shared", "--no-checkout", "--", &source, "tree"])
        .map_err(fail)?;
    let tree = dir.path().join("tree");
    git(&tree, &["checkout", "--quiet", "--detach", commit]).map_err(fail)?;
    Ok(Checkout { _dir: dir, tree })
}
