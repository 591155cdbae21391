//! The files of the commit under calibration, read from the repository's objects with gix.
//!
//! Everything a run reads of the code comes from here, never from the user's work tree: the
//! targets, the lines plants are checked against, and the bytes written into every scratch
//! checkout. A dirty work tree therefore changes nothing, and the work tree itself is never
//! opened.

use crate::error::CalibrateError;
use crate::input::InputError;

/// `read`, tried again after a pause when it fails, up to four more times (about 1.5 s in
/// all): a `git gc` running in the repository (git starts one in the background after a
/// commit that leaves many loose objects) packs loose objects and removes them, and an object
/// looked for at that moment is found again once gix sees the new pack.
pub(crate) fn retrying<T, E: std::fmt::Display>(mut read: impl FnMut() -> Result<T, E>) -> Result<T, E> {
    let mut pause = std::time::Duration::from_millis(100);
    for _ in 0..4 {
        match read() {
            Ok(value) => return Ok(value),
            Err(error) => tracing::debug!("reading git's objects failed, trying again: {error}"),
        }
        std::thread::sleep(pause);
        pause *= 2;
    }
    read()
}

/// What a path of the commit holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EntryKind {
    /// A regular file.
    File,
    /// A regular file with the executable bit.
    Executable,
    /// A symbolic link (the blob holds its target).
    Link,
    /// A submodule's commit: an empty directory in a checkout.
    Submodule,
}

/// The words for a kind of tree entry, in a message.
fn kind_words(kind: gix::object::tree::EntryKind) -> &'static str {
    match kind {
        gix::object::tree::EntryKind::Tree => "a directory",
        gix::object::tree::EntryKind::Blob | gix::object::tree::EntryKind::BlobExecutable => "a file",
        gix::object::tree::EntryKind::Link => "a symbolic link",
        gix::object::tree::EntryKind::Commit => "a submodule",
    }
}

/// Refuses the object `id` of `repo`, without reading it, when it is larger than `limit`
/// bytes.
pub(crate) fn check_object_size(
    repo: &gix::Repository,
    id: gix::ObjectId,
    limit: u64,
) -> Result<(), CalibrateError> {
    let header =
        retrying(|| repo.find_header(id)).map_err(|e| CalibrateError::git(format!("read object {id}"), e))?;
    if header.size() > limit {
        return Err(CalibrateError::TooLarge { what: format!("object {id}"), size: header.size(), limit });
    }
    Ok(())
}

/// An entry's place in git's order of a tree: its name, a directory's read as if it ended
/// with `/`.
fn order_key<'a>(entry: &gix::objs::tree::EntryRef<'a>) -> impl Iterator<Item = &'a u8> + use<'a> {
    let slash: &'static [u8] = if entry.mode.is_tree() { b"/" } else { b"" };
    entry.filename.iter().chain(slash)
}

/// One path of the commit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Entry {
    /// Its kind.
    pub(crate) kind: EntryKind,
    /// Its object id (a blob, or a submodule's commit).
    pub(crate) id: gix::ObjectId,
}

/// Every file, link and submodule of one commit, by `/`-separated relative path, and the
/// object database they are read from.
pub(crate) struct CommitTree {
    repo: gix::Repository,
    // Hashed (a sweep of a kept checkout looks up every path it finds, tens of thousands);
    // anything that goes through them in order sorts first (`sorted_paths`).
    entries: foldhash::HashMap<String, Entry>,
    directories: foldhash::HashSet<String>,
    limits: CheckoutLimits,
}

impl std::fmt::Debug for CommitTree {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CommitTree").field("entries", &self.entries.len()).finish_non_exhaustive()
    }
}

/// True for a tree entry name git would check out: not empty, `.`, `..` or `.git` (in any
/// case), and without a separator or NUL. A tree that holds another name (git's fsck refuses
/// them; a crafted repository may not) must not make a checkout write outside its directory.
fn safe_name(name: &str) -> bool {
    !(name.is_empty()
        || name == "."
        || name == ".."
        || name.eq_ignore_ascii_case(".git")
        || name.contains(['/', '\\', '\0']))
}

/// The most directories a path of a checkout may lie beneath. Real repositories stay far
/// below it; a crafted one may nest thousands deep to make every path operation fail.
pub const MAX_PATH_DEPTH: usize = 100;

/// How much a commit may make a run write: the largest file, and all the files of one
/// checkout together. A crafted commit (a blob of gigabytes, a tree of a million files) is
/// refused before it fills the disk or the memory, once per checkout of every job slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CheckoutLimits {
    /// The largest blob a checkout may hold, in bytes.
    pub max_file_bytes: u64,
    /// The most bytes all the files of one checkout may hold together.
    pub max_checkout_bytes: u64,
}

impl CheckoutLimits {
    /// The default largest file: 100 MiB, the most GitHub accepts in one file.
    pub const DEFAULT_MAX_FILE_BYTES: u64 = 100 << 20;
    /// The default checkout: 2 GiB of files.
    pub const DEFAULT_MAX_CHECKOUT_BYTES: u64 = 2 << 30;
}

impl Default for CheckoutLimits {
    fn default() -> Self {
        CheckoutLimits {
            max_file_bytes: Self::DEFAULT_MAX_FILE_BYTES,
            max_checkout_bytes: Self::DEFAULT_MAX_CHECKOUT_BYTES,
        }
    }
}

/// `path`, shortened for a message when it is long (a crafted path may be kilobytes).
pub(crate) fn shown(path: &str) -> String {
    const SHOWN: usize = 120;
    if path.len() <= SHOWN {
        return path.to_owned();
    }
    let mut end = SHOWN;
    while !path.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}... ({} bytes)", &path[..end], path.len())
}

impl CommitTree {
    /// Reads every entry of `tree` (a tree id of `repo`), recursively. A tree that holds a
    /// name twice (a link and a directory `evil`, say: git's fsck refuses such a tree, but
    /// `git hash-object --literally` writes one) is refused, naming the path: a checkout of
    /// it would write the directory's files through the link. So is a path nested deeper
    /// than [`MAX_PATH_DEPTH`].
    pub(crate) fn read(repo: gix::Repository, tree: gix::ObjectId) -> Result<CommitTree, CalibrateError> {
        let mut entries = foldhash::HashMap::default();
        let mut directories = foldhash::HashSet::default();
        let mut pending = vec![(String::new(), tree, 0usize)];
        while let Some((prefix, id, depth)) = pending.pop() {
            let tree = retrying(|| repo.find_tree(id)).map_err(|e| CalibrateError::git("read a tree", e))?;
            let decoded = tree.decode().map_err(|e| CalibrateError::git("decode a tree", e))?;
            let mut names: foldhash::HashMap<&[u8], gix::object::tree::EntryKind> =
                foldhash::HashMap::with_capacity_and_hasher(decoded.entries.len(), Default::default());
            for entry in &decoded.entries {
                let name: &[u8] = entry.filename;
                if let Some(first) = names.insert(name, entry.mode.kind()) {
                    let name = String::from_utf8_lossy(name);
                    let path = if prefix.is_empty() { name.into_owned() } else { format!("{prefix}/{name}") };
                    return Err(CalibrateError::CraftedTree {
                        path: shown(&path),
                        reason: format!(
                            "the tree holds this name twice ({} and {}); git refuses such a tree, and a checkout of it could write outside its directory",
                            kind_words(first),
                            kind_words(entry.mode.kind())
                        ),
                    });
                }
            }
            if let Some(pair) =
                decoded.entries.windows(2).find(|pair| order_key(&pair[0]).ge(order_key(&pair[1])))
            {
                let name = String::from_utf8_lossy(pair[1].filename);
                let path = if prefix.is_empty() { name.into_owned() } else { format!("{prefix}/{name}") };
                return Err(CalibrateError::CraftedTree {
                    path: shown(&path),
                    reason: "the tree's entries are out of order; git refuses such a tree".into(),
                });
            }
            for entry in &decoded.entries {
                let Ok(name) = std::str::from_utf8(entry.filename) else {
                    tracing::warn!(directory = %prefix, "a file name that is not UTF-8 is left out of the checkouts");
                    continue;
                };
                if !safe_name(name) {
                    tracing::warn!(directory = %prefix, name, "an unsafe file name is left out of the checkouts");
                    continue;
                }
                let path = if prefix.is_empty() { name.to_owned() } else { format!("{prefix}/{name}") };
                let id = entry.oid.to_owned();
                let kind = match entry.mode.kind() {
                    gix::object::tree::EntryKind::Tree => {
                        if depth + 1 > MAX_PATH_DEPTH {
                            return Err(CalibrateError::CraftedTree {
                                path: shown(&path),
                                reason: format!("it is nested deeper than {MAX_PATH_DEPTH} directories"),
                            });
                        }
                        directories.insert(path.clone());
                        pending.push((path, id, depth + 1));
                        continue;
                    }
                    gix::object::tree::EntryKind::Blob => EntryKind::File,
                    gix::object::tree::EntryKind::BlobExecutable => EntryKind::Executable,
                    gix::object::tree::EntryKind::Link => EntryKind::Link,
                    gix::object::tree::EntryKind::Commit => EntryKind::Submodule,
                };
                entries.insert(path, Entry { kind, id });
            }
        }
        Ok(CommitTree { repo, entries, directories, limits: CheckoutLimits::default() })
    }

    /// The same tree, its files read within `limits`.
    pub(crate) fn with_limits(mut self, limits: CheckoutLimits) -> CommitTree {
        self.limits = limits;
        self
    }

    /// The limits its files are read within.
    pub(crate) fn limits(&self) -> CheckoutLimits {
        self.limits
    }

    /// Every entry, by path, in path order.
    pub(crate) fn entries(&self) -> &foldhash::HashMap<String, Entry> {
        &self.entries
    }

    /// Every path of [`Self::entries`], sorted.
    pub(crate) fn sorted_paths(&self) -> Vec<&str> {
        let mut paths: Vec<&str> = self.entries.keys().map(String::as_str).collect();
        paths.sort_unstable();
        paths
    }

    /// Every directory (a path some entry lies beneath), without the root.
    pub(crate) fn directories(&self) -> &foldhash::HashSet<String> {
        &self.directories
    }

    /// The bytes of the blob `id`, refused without being read when it is larger than the
    /// limit for one file.
    pub(crate) fn blob(&self, id: gix::ObjectId) -> Result<Vec<u8>, CalibrateError> {
        check_object_size(&self.repo, id, self.limits.max_file_bytes)?;
        let blob = retrying(|| self.repo.find_blob(id))
            .map_err(|e| CalibrateError::git(format!("read blob {id}"), e))?;
        Ok(blob.data.clone())
    }

    /// The bytes of the regular file at `path`.
    pub(crate) fn file(&self, path: &str) -> Result<Vec<u8>, CalibrateError> {
        match self.entries.get(path) {
            Some(Entry { kind: EntryKind::File | EntryKind::Executable, id }) => self.blob(*id),
            _ => Err(CalibrateError::io(
                "read",
                path,
                std::io::Error::new(std::io::ErrorKind::NotFound, "not a file of the commit"),
            )),
        }
    }

    /// The one rule for every file a run plants in, whichever way it was named (a commit's
    /// changed files, fallback targets, a plants file): a relative path that stays inside the
    /// repository, with no symbolic link in any component, to a regular file of the commit.
    /// Returns the path normalised (`/`-separated, no `.`).
    pub(crate) fn check_target(&self, path: &str) -> Result<String, CalibrateError> {
        let refuse = |reason: String| CalibrateError::Untargetable { path: path.to_owned(), reason };
        let parts = crate::targets::relative_parts(path, "the repository").map_err(refuse)?;
        if parts.is_empty() {
            return Err(refuse("it names no file".into()));
        }
        for end in 1..parts.len() {
            let prefix = parts[..end].join("/");
            if matches!(self.entries.get(&prefix), Some(Entry { kind: EntryKind::Link, .. })) {
                return Err(refuse(format!("{prefix} is a symbolic link")));
            }
        }
        let relative = parts.join("/");
        match self.entries.get(&relative) {
            Some(Entry { kind: EntryKind::File | EntryKind::Executable, .. }) => Ok(relative),
            Some(Entry { kind: EntryKind::Link, .. }) => {
                Err(refuse(format!("{relative} is a symbolic link")))
            }
            Some(Entry { kind: EntryKind::Submodule, .. }) => Err(refuse("it is a submodule".into())),
            None if self.directories.contains(&relative) => Err(refuse("it is not a regular file".into())),
            None => Err(refuse("it is not tracked in the commit".into())),
        }
    }
}

impl crate::plants::Sources for CommitTree {
    fn read_text(&self, relative: &str, limit: u64) -> Result<String, InputError> {
        let entry = match self.check_target(relative).map(|path| self.entries.get(&path)) {
            Ok(Some(entry)) => entry,
            Ok(None) => return Err(InputError::Io(std::io::ErrorKind::NotFound.into())),
            Err(CalibrateError::Untargetable { reason, .. }) => {
                return Err(InputError::Io(std::io::Error::new(std::io::ErrorKind::NotFound, reason)));
            }
            Err(error) => return Err(InputError::Io(std::io::Error::other(error.to_string()))),
        };
        let header = retrying(|| self.repo.find_header(entry.id))
            .map_err(|e| InputError::Io(std::io::Error::other(e.to_string())))?;
        if header.size() > limit {
            return Err(InputError::TooLarge { limit });
        }
        let bytes = self.blob(entry.id).map_err(|e| InputError::Io(std::io::Error::other(e.to_string())))?;
        String::from_utf8(bytes)
            .map_err(|error| InputError::NotUtf8 { offset: error.utf8_error().valid_up_to() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_could_leave_a_checkout_are_unsafe() {
        for name in ["", ".", "..", ".git", ".GIT", "a/b", "a\\b", "nul\0"] {
            assert!(!safe_name(name), "{name:?}");
        }
        for name in ["a", ".gitignore", "..a", "x.git"] {
            assert!(safe_name(name), "{name:?}");
        }
    }
}
