//! The repository side of a calibration: open it with gix, refuse a dirty tree, find the
//! files a commit changed against its first parent and keep the ones worth planting in.

use crate::error::{BoxedError, CalibrateError};
use gix::bstr::ByteSlice;
use std::path::{Path, PathBuf};
use std::process::Command;

/// An opened repository with a work tree.
pub(crate) struct Repository {
    repo: gix::Repository,
    work_tree: PathBuf,
}

impl std::fmt::Debug for Repository {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Repository").field("work_tree", &self.work_tree).finish()
    }
}

/// The commit under calibration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CommitInfo {
    /// Its full hex id.
    pub(crate) id: String,
    /// Its first parent's full hex id (what `{base}` becomes), if it has one.
    pub(crate) base: Option<String>,
    /// Files it added or modified against its first parent (all of them, before filtering),
    /// relative to the work tree with `/` separators.
    pub(crate) changed: Vec<String>,
}

/// HEAD, the index and the stash at one moment (see [`Repository::state`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RepoState {
    head: String,
    branch: String,
    index: String,
    stash: Vec<String>,
}

impl RepoState {
    /// What changed from `self` to `now`, each with the git command that undoes it (the work
    /// tree is already restored when these are read, so the undo leaves it alone).
    pub(crate) fn changes(&self, now: &RepoState) -> Vec<String> {
        let mut changes = Vec::new();
        if self.head != now.head {
            changes.push(format!(
                "HEAD moved from {} to {} (a commit of the planted files?); undo with `git reset {}`",
                self.head, now.head, self.head
            ));
        }
        if self.branch != now.branch && !self.branch.is_empty() {
            changes.push(format!(
                "HEAD named {} and now names {}; undo with `git symbolic-ref HEAD {}`",
                self.branch,
                if now.branch.is_empty() { "no branch" } else { now.branch.as_str() },
                self.branch
            ));
        }
        if self.index != now.index {
            changes.push(
                "the index changed (planted files staged?); undo with `git reset` (after any HEAD undo above)"
                    .to_owned(),
            );
        }
        let added: Vec<&String> = now.stash.iter().filter(|id| !self.stash.contains(id)).collect();
        let removed: Vec<&String> = self.stash.iter().filter(|id| !now.stash.contains(id)).collect();
        if !added.is_empty() {
            changes.push(format!(
                "the stash gained {} entr{} holding the plants ({}); undo with `git stash drop` once per entry",
                added.len(),
                if added.len() == 1 { "y" } else { "ies" },
                added.iter().map(|id| short(id)).collect::<Vec<_>>().join(", ")
            ));
        }
        for id in removed {
            changes.push(format!(
                "the stash lost entry {id}; bring it back with `git stash store -m restored {id}`"
            ));
        }
        changes
    }
}

/// A gix failure while doing `operation`.
fn git_error<E: std::error::Error + Send + Sync + 'static>(
    operation: &str,
) -> impl FnOnce(E) -> CalibrateError {
    move |error| CalibrateError::git(operation, error)
}

impl Repository {
    /// Opens the repository that contains `dir`.
    pub(crate) fn discover(dir: &Path) -> Result<Repository, CalibrateError> {
        let not_a_repo =
            |source: BoxedError| CalibrateError::NotARepository { path: dir.to_path_buf(), source };
        let repo = gix::discover(dir).map_err(|e| not_a_repo(Box::new(e)))?;
        let work_tree = repo
            .workdir()
            .ok_or_else(|| not_a_repo("a bare repository has no work tree".into()))?
            .to_path_buf();
        let work_tree = work_tree.canonicalize().unwrap_or(work_tree);
        Ok(Repository { repo, work_tree })
    }

    /// The work tree's root.
    pub(crate) fn work_tree(&self) -> &Path {
        &self.work_tree
    }

    /// The git directory (where the restore journal lives).
    pub(crate) fn git_dir(&self) -> &Path {
        self.repo.git_dir()
    }

    /// Tracked files whose content differs from the index or HEAD (at most `limit` names).
    /// Untracked files do not count: calibration never touches them.
    pub(crate) fn dirty_files(&self, limit: usize) -> Result<Vec<String>, CalibrateError> {
        let output = Command::new("git")
            .args(["status", "--porcelain=v1", "-z", "--untracked-files=no", "--ignore-submodules=dirty"])
            .current_dir(&self.work_tree)
            .output()
            .map_err(|e| CalibrateError::git("run `git status`", e))?;
        if !output.status.success() {
            let stderr = String::from_utf8_lossy(&output.stderr).trim().to_owned();
            return Err(CalibrateError::git("list uncommitted changes with `git status`", stderr));
        }
        Ok(output
            .stdout
            .split(|byte| *byte == 0)
            .filter(|entry| entry.len() > 3)
            .map(|entry| String::from_utf8_lossy(&entry[3..]).into_owned())
            .take(limit)
            .collect())
    }

    /// Refuses a tree with uncommitted changes to tracked files.
    pub(crate) fn ensure_clean(&self) -> Result<(), CalibrateError> {
        let files = self.dirty_files(5)?;
        if files.is_empty() { Ok(()) } else { Err(CalibrateError::DirtyTree { files }) }
    }

    /// Runs `git ARGS` in the work tree and returns its standard output.
    fn git_output(&self, args: &[&str]) -> Result<Vec<u8>, CalibrateError> {
        let output = Command::new("git")
            .args(args)
            .current_dir(&self.work_tree)
            .output()
            .map_err(|e| CalibrateError::git(format!("run `git {}`", args.join(" ")), e))?;
        if !output.status.success() {
            let stderr = String::from_utf8_lossy(&output.stderr).trim().to_owned();
            return Err(CalibrateError::git(format!("run `git {}`", args.join(" ")), stderr));
        }
        Ok(output.stdout)
    }

    /// What a reviewer could change besides the work tree: HEAD (the commit and the branch it
    /// names), the index (its entries, not its stat cache, which `git status` rewrites) and
    /// the stash.
    pub(crate) fn state(&self) -> Result<RepoState, CalibrateError> {
        let text = |bytes: Vec<u8>| String::from_utf8_lossy(&bytes).trim().to_owned();
        let head = text(self.git_output(&["rev-parse", "--verify", "-q", "HEAD"]).unwrap_or_default());
        let branch = text(self.git_output(&["symbolic-ref", "-q", "HEAD"]).unwrap_or_default());
        let index = crate::guard::sha256_hex(&self.git_output(&["ls-files", "-s", "-z"])?);
        let stash =
            text(self.git_output(&["stash", "list", "--format=%H"])?).lines().map(str::to_owned).collect();
        Ok(RepoState { head, branch, index, stash })
    }

    /// Resolves `rev` and lists the files it changed against its first parent.
    pub(crate) fn commit(&self, rev: &str) -> Result<CommitInfo, CalibrateError> {
        let id = self
            .repo
            .rev_parse_single(rev)
            .map_err(|e| CalibrateError::git(format!("resolve `{rev}`"), e))?;
        let commit = id
            .object()
            .map_err(git_error("read the object"))?
            .peel_to_commit()
            .map_err(|e| CalibrateError::git(format!("read `{rev}` as a commit"), e))?;
        let tree = commit.tree_id().map_err(git_error("read the commit's tree"))?.detach();
        let base = commit.parent_ids().next().map(|parent| parent.detach());
        let base_tree = match base {
            Some(parent) => Some(
                self.repo
                    .find_commit(parent)
                    .map_err(git_error("read the first parent"))?
                    .tree_id()
                    .map_err(git_error("read the first parent's tree"))?
                    .detach(),
            ),
            None => None,
        };
        let mut changed = Vec::new();
        self.diff_trees(base_tree, tree, "", &mut changed)?;
        changed.sort();
        Ok(CommitInfo { id: commit.id().to_string(), base: base.map(|b| b.to_string()), changed })
    }

    /// Collects blobs added or modified from `old` to `new`, descending only into subtrees
    /// whose ids differ (so a 10,000-file tree with a small commit reads a few trees).
    fn diff_trees(
        &self,
        old: Option<gix::ObjectId>,
        new: gix::ObjectId,
        prefix: &str,
        out: &mut Vec<String>,
    ) -> Result<(), CalibrateError> {
        let new_entries = self.tree_entries(new)?;
        let old_entries = match old {
            Some(old) => self.tree_entries(old)?,
            None => Vec::new(),
        };
        for (name, mode, oid) in new_entries {
            let previous = old_entries.iter().find(|(old_name, _, _)| *old_name == name);
            if previous.is_some_and(|(_, old_mode, old_oid)| *old_oid == oid && *old_mode == mode) {
                continue;
            }
            let path = if prefix.is_empty() { name.clone() } else { format!("{prefix}/{name}") };
            if mode.is_tree() {
                let old_subtree = previous.filter(|(_, m, _)| m.is_tree()).map(|(_, _, o)| *o);
                self.diff_trees(old_subtree, oid, &path, out)?;
            } else if mode.is_blob() {
                out.push(path);
            }
        }
        Ok(())
    }

    fn tree_entries(
        &self,
        id: gix::ObjectId,
    ) -> Result<Vec<(String, gix::object::tree::EntryMode, gix::ObjectId)>, CalibrateError> {
        let tree = self.repo.find_tree(id).map_err(git_error("read a tree"))?;
        let decoded = tree.decode().map_err(git_error("decode a tree"))?;
        Ok(decoded
            .entries
            .iter()
            .map(|entry| (entry.filename.to_str_lossy().into_owned(), entry.mode, entry.oid.to_owned()))
            .collect())
    }

    /// Every tracked file (from the index), relative, `/`-separated; gitlinks skipped.
    pub(crate) fn tracked_files(&self) -> Result<Vec<String>, CalibrateError> {
        let index = self.repo.index_or_empty().map_err(git_error("read the index"))?;
        Ok(index
            .entries()
            .iter()
            .filter(|entry| entry.mode != gix::index::entry::Mode::COMMIT)
            .map(|entry| entry.path(&index).to_str_lossy().into_owned())
            .collect())
    }
}

/// The one rule for every file calibration may write to, whichever way it was named (a
/// commit's changed files, fallback targets, a plants file): a relative path that stays inside
/// the work tree, reached without a symbolic link in any component, to a regular file git
/// tracks. Returns the path normalised (`/`-separated, no `.`). Anything else could make a
/// plant (and its restore) write outside what git can show and put back.
pub(crate) fn check_target(
    work_tree: &Path,
    tracked: &std::collections::HashSet<String>,
    path: &str,
) -> Result<String, CalibrateError> {
    let refuse = |reason: String| CalibrateError::Untargetable { path: path.to_owned(), reason };
    let relative = confine(work_tree, "the work tree", path, Expect::File)
        .map_err(|refusal| refuse(refusal.to_string()))?;
    if !tracked.contains(&relative) {
        return Err(refuse(
            "it is not tracked by git, and calibration never writes to untracked files".into(),
        ));
    }
    Ok(relative)
}

/// What a confined path must name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Expect {
    /// A regular file.
    File,
    /// A directory (the root itself, `.`, included).
    Directory,
}

/// Why a path was not confined to its root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Unconfined {
    /// It stays inside, but a component does not exist (the reason names it).
    Missing(String),
    /// It leaves the root, goes through a link, or names the wrong kind of thing.
    Refused(String),
}

impl std::fmt::Display for Unconfined {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unconfined::Missing(reason) | Unconfined::Refused(reason) => f.write_str(reason),
        }
    }
}

/// The one path rule for whatever an untrusted name may reach under a root (a work tree's
/// files, a suite's plants files and repositories): a relative path without `..`, reached
/// from `root` without a symbolic link in any component (even one that points back inside:
/// a link is checked where it is, never followed), to a `expect` kind of thing. Returns the
/// path normalised (`/`-separated, no `.`). `root_name` names the root in the reasons.
pub(crate) fn confine(
    root: &Path,
    root_name: &str,
    path: &str,
    expect: Expect,
) -> Result<String, Unconfined> {
    let refuse = |reason: String| Unconfined::Refused(reason);
    let given = Path::new(path);
    if given.is_absolute() {
        return Err(refuse(format!("it is an absolute path; name it relative to {root_name}'s root")));
    }
    let mut parts: Vec<&str> = Vec::new();
    for component in given.components() {
        match component {
            std::path::Component::Normal(part) => {
                parts.push(part.to_str().ok_or_else(|| refuse("it is not valid UTF-8".into()))?);
            }
            std::path::Component::CurDir => {}
            _ => return Err(refuse(format!("it leaves {root_name}"))),
        }
    }
    if parts.is_empty() && expect == Expect::File {
        return Err(refuse("it names no file".into()));
    }
    let mut walked = root.to_path_buf();
    for (index, part) in parts.iter().enumerate() {
        walked.push(part);
        let last = index + 1 == parts.len();
        match std::fs::symlink_metadata(&walked) {
            Ok(meta) if meta.file_type().is_symlink() => {
                return Err(refuse(format!("{} is a symbolic link", parts[..=index].join("/"))));
            }
            Ok(meta) if last && expect == Expect::File && !meta.is_file() => {
                return Err(refuse("it is not a regular file".into()));
            }
            Ok(meta) if last && expect == Expect::Directory && !meta.is_dir() => {
                return Err(refuse("it is not a directory".into()));
            }
            Ok(_) => {}
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                let missing = parts[..=index].join("/");
                return Err(Unconfined::Missing(format!("{missing} does not exist in {root_name}")));
            }
            Err(error) => return Err(refuse(format!("it cannot be read: {error}"))),
        }
    }
    Ok(parts.join("/"))
}

/// True for a file calibration may plant in: a language the mutation engine parses, not a
/// test file, not a build or tool configuration file.
pub(crate) fn is_eligible(path: &str) -> bool {
    let path = Path::new(path);
    if revcal_mutate::Language::from_path(path).is_none() || revcal_mutate::is_test_path(path) {
        return false;
    }
    let name = path.file_name().and_then(|name| name.to_str()).unwrap_or("");
    !is_config_name(name)
}

/// Build scripts and tool configuration written in a supported language.
fn is_config_name(name: &str) -> bool {
    const NAMES: [&str; 5] = ["build.rs", "setup.py", "conftest.py", "noxfile.py", "manage.py"];
    if NAMES.contains(&name) || name.starts_with('.') {
        return true;
    }
    // webpack.config.js, vite.config.mjs, jest.config.cjs, babel.config.js, ...
    let mut parts = name.rsplitn(3, '.');
    let _extension = parts.next();
    matches!(parts.next(), Some("config" | "conf")) || name.ends_with("rc.js") || name.ends_with("rc.cjs")
}

/// The targets of a calibration: the commit's eligible changed files, else the eligible
/// `fallback` files. Both empty is an error that says what was looked at.
pub(crate) fn choose_targets(
    commit: &CommitInfo,
    fallback: &[String],
) -> Result<Vec<String>, CalibrateError> {
    let from_commit: Vec<String> = commit.changed.iter().filter(|path| is_eligible(path)).cloned().collect();
    if !from_commit.is_empty() {
        return Ok(from_commit);
    }
    let from_fallback: Vec<String> = fallback.iter().filter(|path| is_eligible(path)).cloned().collect();
    if !from_fallback.is_empty() {
        return Ok(from_fallback);
    }
    Err(CalibrateError::NoTargets {
        commit: commit.id.clone(),
        changed: commit.changed.len(),
        fallback: fallback.to_vec(),
    })
}

/// The first 12 characters of an id.
pub(crate) fn short(id: &str) -> &str {
    id.get(..12).unwrap_or(id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eligibility_keeps_sources_and_drops_tests_and_configuration() {
        for path in ["src/lib.rs", "app/main.py", "web/index.js", "lib/x.mjs"] {
            assert!(is_eligible(path), "{path}");
        }
        for path in [
            "tests/it.rs",
            "src/test_parse.py",
            "web/app.test.js",
            "build.rs",
            "setup.py",
            "webpack.config.js",
            ".eslintrc.js",
            "README.md",
            "Cargo.toml",
        ] {
            assert!(!is_eligible(path), "{path}");
        }
    }

    #[test]
    fn every_change_to_head_index_and_stash_is_named_with_its_undo() {
        let state = |head: &str, branch: &str, index: &str, stash: &[&str]| RepoState {
            head: head.into(),
            branch: branch.into(),
            index: index.into(),
            stash: stash.iter().map(|s| (*s).to_owned()).collect(),
        };
        let before = state("a1", "refs/heads/main", "i1", &["s1"]);
        assert!(before.changes(&before.clone()).is_empty());
        let after = state("b2", "", "i2", &["s2", "s3"]);
        let changes = before.changes(&after).join("\n");
        for expected in [
            "undo with `git reset a1`",
            "undo with `git symbolic-ref HEAD refs/heads/main`",
            "undo with `git reset`",
            "the stash gained 2 entries",
            "`git stash store -m restored s1`",
        ] {
            assert!(changes.contains(expected), "{expected}: {changes}");
        }
    }

    #[test]
    fn fallback_is_used_only_when_the_commit_has_nothing_eligible() {
        let commit = CommitInfo { id: "a".repeat(40), base: None, changed: vec!["README.md".into()] };
        assert_eq!(choose_targets(&commit, &["src/a.rs".into()]).unwrap(), vec!["src/a.rs"]);
        let error = choose_targets(&commit, &[]).unwrap_err();
        assert!(
            matches!(&error, CalibrateError::NoTargets { fallback, .. } if fallback.is_empty()),
            "{error}"
        );
        assert!(error.to_string().contains("name fallback target files"), "{error}");
    }
}
