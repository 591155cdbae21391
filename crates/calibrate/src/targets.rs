//! The repository side of a calibration: open it with gix, find the files a commit changed
//! against its first parent and keep the ones worth planting in. Only the repository's
//! objects are read; its work tree, index and refs are never written (nor the work tree
//! read: a dirty tree changes nothing).

use crate::error::{BoxedError, CalibrateError};
use crate::tree::CommitTree;
use gix::bstr::ByteSlice;
use std::path::{Path, PathBuf};

/// An opened repository.
pub(crate) struct Repository {
    repo: gix::Repository,
    /// The work tree's root, or the git directory of a bare repository.
    location: PathBuf,
}

impl std::fmt::Debug for Repository {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Repository").field("location", &self.location).finish()
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
    /// Its tree.
    pub(crate) tree: gix::ObjectId,
}

/// A gix failure while doing `operation`.
fn git_error<E: std::error::Error + Send + Sync + 'static>(
    operation: &str,
) -> impl FnOnce(E) -> CalibrateError {
    move |error| CalibrateError::git(operation, error)
}

impl Repository {
    /// Opens the repository that contains `dir` (a bare one too: only its objects are read).
    pub(crate) fn discover(dir: &Path) -> Result<Repository, CalibrateError> {
        let not_a_repo =
            |source: BoxedError| CalibrateError::NotARepository { path: dir.to_path_buf(), source };
        let repo = gix::discover(dir).map_err(|e| not_a_repo(Box::new(e)))?;
        let location = repo.workdir().unwrap_or_else(|| repo.git_dir()).to_path_buf();
        let location = location.canonicalize().unwrap_or(location);
        Ok(Repository { repo, location })
    }

    /// The work tree's root, or the git directory of a bare repository (withheld from the
    /// reviewer, with every variable that names it: `reach`).
    pub(crate) fn location(&self) -> &Path {
        &self.location
    }

    /// The work tree's root, when the repository has one.
    pub(crate) fn work_tree(&self) -> Option<&Path> {
        self.repo.workdir().map(|_| self.location.as_path())
    }

    /// The git directory (where earlier releases kept their restore journal).
    pub(crate) fn git_dir(&self) -> &Path {
        self.repo.git_dir()
    }

    /// The repository as gix opened it.
    pub(crate) fn gix(&self) -> &gix::Repository {
        &self.repo
    }

    /// Every file of `commit`, read from the objects.
    pub(crate) fn commit_tree(&self, commit: &CommitInfo) -> Result<CommitTree, CalibrateError> {
        CommitTree::read(self.repo.clone(), commit.tree)
    }

    /// Resolves `rev` and lists the files it changed against its first parent.
    pub(crate) fn commit(&self, rev: &str) -> Result<CommitInfo, CalibrateError> {
        let id = self
            .repo
            .rev_parse_single(rev)
            .map_err(|e| CalibrateError::git(format!("resolve `{rev}`"), e))?;
        let commit = crate::tree::retrying(|| id.object())
            .map_err(git_error("read the object"))?
            .peel_to_commit()
            .map_err(|e| CalibrateError::git(format!("read `{rev}` as a commit"), e))?;
        let tree = commit.tree_id().map_err(git_error("read the commit's tree"))?.detach();
        let base = commit.parent_ids().next().map(|parent| parent.detach());
        let base_tree = match base {
            Some(parent) => Some(
                crate::tree::retrying(|| self.repo.find_commit(parent))
                    .map_err(git_error("read the first parent"))?
                    .tree_id()
                    .map_err(git_error("read the first parent's tree"))?
                    .detach(),
            ),
            None => None,
        };
        let mut changed = self.changed_files(base_tree, tree)?;
        changed.sort();
        Ok(CommitInfo { id: commit.id().to_string(), base: base.map(|b| b.to_string()), changed, tree })
    }

    /// The files (regular blobs, executable or not: links and submodules are no place to
    /// plant) added or modified from `old` (none: the empty tree) to `new`, by gix's tree
    /// diff, which descends only into subtrees whose ids differ (so a 10,000-file tree with
    /// a small commit reads a few trees). Tried again as a whole, like any object read, while
    /// a `git gc` moves the objects.
    fn changed_files(
        &self,
        old: Option<gix::ObjectId>,
        new: gix::ObjectId,
    ) -> Result<Vec<String>, CalibrateError> {
        use gix::diff::tree::recorder::Change;
        let records = crate::tree::retrying(|| {
            let new_tree = self.repo.find_tree(new).map_err(git_error("read a tree"))?;
            let old_tree = match old {
                Some(old) => Some(self.repo.find_tree(old).map_err(git_error("read a tree"))?),
                None => None,
            };
            let old_entries = old_tree.as_ref().map_or(&[][..], |tree| tree.data.as_slice());
            let hash = self.repo.object_hash();
            let mut recorder = gix::diff::tree::Recorder::default();
            gix::diff::tree(
                gix::objs::TreeRefIter::from_bytes(old_entries, hash),
                gix::objs::TreeRefIter::from_bytes(&new_tree.data, hash),
                gix::diff::tree::State::default(),
                &self.repo.objects,
                &mut recorder,
            )
            .map_err(git_error("compare the commit's tree with its parent's"))?;
            Ok::<_, CalibrateError>(recorder.records)
        })?;
        Ok(records
            .into_iter()
            .filter_map(|change| match change {
                Change::Addition { entry_mode, path, .. } | Change::Modification { entry_mode, path, .. }
                    if entry_mode.is_blob() =>
                {
                    Some(path.to_str_lossy().into_owned())
                }
                _ => None,
            })
            .collect())
    }
}

/// The components of an untrusted relative path, the first half of the one path rule (for
/// files on disk, [`confine`]; for the files of a commit, `CommitTree::check_target`): not
/// absolute, no `..`, valid UTF-8; `.` dropped. The reason names `root_name`.
pub(crate) fn relative_parts<'a>(path: &'a str, root_name: &str) -> Result<Vec<&'a str>, String> {
    let given = Path::new(path);
    if given.is_absolute() {
        return Err(format!("it is an absolute path; name it relative to {root_name}'s root"));
    }
    let mut parts = Vec::new();
    for component in given.components() {
        match component {
            std::path::Component::Normal(part) => {
                parts.push(part.to_str().ok_or_else(|| "it is not valid UTF-8".to_owned())?);
            }
            std::path::Component::CurDir => {}
            _ => return Err(format!("it leaves {root_name}")),
        }
    }
    Ok(parts)
}

/// What a confined path must name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    /// A regular file.
    File,
    /// A directory (the root itself, `.`, included).
    Directory,
}

/// Why a path was not confined to its root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unconfined {
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
pub fn confine(root: &Path, root_name: &str, path: &str, expect: Expect) -> Result<String, Unconfined> {
    let refuse = |reason: String| Unconfined::Refused(reason);
    let parts = relative_parts(path, root_name).map_err(refuse)?;
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
    fn fallback_is_used_only_when_the_commit_has_nothing_eligible() {
        let commit = CommitInfo {
            id: "a".repeat(40),
            base: None,
            changed: vec!["README.md".into()],
            tree: gix::ObjectId::null(gix::hash::Kind::Sha1),
        };
        assert_eq!(choose_targets(&commit, &["src/a.rs".into()]).unwrap(), vec!["src/a.rs"]);
        let error = choose_targets(&commit, &[]).unwrap_err();
        assert!(
            matches!(&error, CalibrateError::NoTargets { fallback, .. } if fallback.is_empty()),
            "{error}"
        );
        assert!(error.to_string().contains("name fallback target files"), "{error}");
    }

    fn git(dir: &Path, args: &[&str]) -> String {
        let output = std::process::Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@t", "-c", "core.symlinks=true"])
            .args(args)
            .current_dir(dir)
            .output()
            .unwrap();
        assert!(output.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&output.stderr));
        String::from_utf8(output.stdout).unwrap()
    }

    /// The files a commit changed are what git itself lists as added or modified regular
    /// files (`git diff-tree -r --no-renames --diff-filter=AMT`, links and submodules left
    /// out), through nested and new directories, a file that became a directory and the
    /// reverse, a mode change, deletions and a first commit.
    #[test]
    fn changed_files_are_what_git_lists_as_added_or_modified() {
        use std::os::unix::fs::{PermissionsExt, symlink};
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path();
        let write = |path: &str, text: &str| {
            let path = repo.join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        git(repo, &["init", "-q"]);
        for path in [
            "a.rs",
            "deep/x/y/kept.rs",
            "deep/x/y/edited.rs",
            "gone.rs",
            "becomes_dir",
            "dir_goes/f.rs",
            "run.sh",
        ] {
            write(path, path);
        }
        symlink("a.rs", repo.join("link_kept")).unwrap();
        git(repo, &["add", "-A"]);
        git(repo, &["commit", "-qm", "first"]);

        write("deep/x/y/edited.rs", "changed");
        write("deep/x/new/z.rs", "new");
        write("fresh/nested/file.py", "new");
        std::fs::remove_file(repo.join("gone.rs")).unwrap();
        std::fs::remove_file(repo.join("becomes_dir")).unwrap();
        write("becomes_dir/inner.rs", "now a file in a directory");
        std::fs::remove_dir_all(repo.join("dir_goes")).unwrap();
        write("dir_goes", "now a file");
        std::fs::set_permissions(repo.join("run.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
        symlink("a.rs", repo.join("new_link")).unwrap();
        git(repo, &["add", "-A"]);
        git(repo, &["commit", "-qm", "second"]);

        let opened = Repository::discover(repo).unwrap();
        for (rev, files) in [("HEAD", 6), ("HEAD~1", 7)] {
            let listed =
                git(repo, &["diff-tree", "-r", "--root", "--no-renames", "--no-commit-id", "--raw", rev]);
            let mut expected: Vec<String> = listed
                .lines()
                .filter_map(|line| {
                    let (meta, path) = line.split_once('\t')?;
                    let fields: Vec<&str> = meta.split(' ').collect();
                    let regular = fields[1].starts_with("100");
                    (regular && !fields[4].starts_with('D')).then(|| path.to_owned())
                })
                .collect();
            expected.sort();
            assert_eq!(expected.len(), files, "{listed}");
            assert_eq!(opened.commit(rev).unwrap().changed, expected, "{rev}");
        }
    }
}
