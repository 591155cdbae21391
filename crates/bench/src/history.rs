//! The facts generation asks of git (a fix's committer date, a target's first parent), read
//! from each repository's local clone or from a clone of its URL (revcal-suite's, once per
//! repository).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::generate::History;
use crate::sources::RepositorySpec;
use crate::{BenchError, repository_source};

/// The id of git's empty tree: the base of a root commit.
pub const EMPTY_TREE: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

/// [`History`] read with git from the repositories: `repos_dir/<name>` when it is a directory,
/// else a clone of the repository's URL made in `repos_dir`.
#[derive(Debug)]
pub struct GitHistory {
    repos_dir: PathBuf,
    located: HashMap<String, PathBuf>,
}

impl GitHistory {
    /// Reads repositories from `repos_dir` (clones of their URLs are made there).
    pub fn new(repos_dir: &Path) -> GitHistory {
        GitHistory { repos_dir: repos_dir.to_path_buf(), located: HashMap::new() }
    }

    /// The local repository holding `commit` of `spec`.
    fn repository(&mut self, spec: &RepositorySpec, commit: &str) -> Result<PathBuf, BenchError> {
        if let Some(path) = self.located.get(&spec.name)
            && git(path, &["cat-file", "-e", &format!("{commit}^{{commit}}")]).is_ok()
        {
            return Ok(path.clone());
        }
        let source = repository_source(&spec.name, &spec.url, &self.repos_dir);
        let (path, _) = revcal_suite::locate_repository(&source, commit, &self.repos_dir)?;
        self.located.insert(spec.name.clone(), path.clone());
        Ok(path)
    }
}

/// git's trimmed output in `dir`, or what it said.
fn git(dir: &Path, args: &[&str]) -> Result<String, String> {
    revcal_process::git(dir, args)
        .map(|out| String::from_utf8_lossy(&out).trim().to_owned())
        .map_err(|error| format!("git {}: {}", error.args, error.message))
}

impl History for GitHistory {
    fn commit_time(&mut self, spec: &RepositorySpec, commit: &str) -> Result<i64, BenchError> {
        let repo = self.repository(spec, commit)?;
        let fail = |message: String| BenchError::Repository { name: spec.name.clone(), message };
        let text = git(&repo, &["show", "-s", "--format=%ct", commit, "--"]).map_err(fail)?;
        text.parse::<i64>().map_err(|_| fail(format!("git gave no committer date for {commit}")))
    }

    fn first_parent(&mut self, spec: &RepositorySpec, commit: &str) -> Result<String, BenchError> {
        let repo = self.repository(spec, commit)?;
        let fail = |message: String| BenchError::Repository { name: spec.name.clone(), message };
        let line = git(&repo, &["rev-list", "--parents", "-n", "1", commit, "--"]).map_err(fail)?;
        Ok(line.split_whitespace().nth(1).unwrap_or(EMPTY_TREE).to_owned())
    }

    fn has_ancestor(
        &mut self,
        spec: &RepositorySpec,
        commit: &str,
        ancestor: &str,
    ) -> Result<bool, BenchError> {
        if commit == EMPTY_TREE {
            return Ok(false);
        }
        let repo = self.repository(spec, commit)?;
        let fail = |message: String| BenchError::Repository { name: spec.name.clone(), message };
        // What of `ancestor`'s history `commit`'s lacks: nothing when it is an ancestor.
        let missing =
            git(&repo, &["rev-list", "-n", "1", ancestor, &format!("^{commit}"), "--"]).map_err(fail)?;
        Ok(missing.is_empty())
    }
}
