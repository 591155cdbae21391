//! Writing, walking and removing files beneath a directory without ever following a symbolic
//! link, so that nothing is created, changed or removed outside it.
//!
//! Everything goes through directory handles: each component of a path is opened relative to
//! the handle of its parent with `O_NOFOLLOW | O_DIRECTORY`, files are created with `O_CREAT |
//! O_EXCL | O_NOFOLLOW`, and entries are removed with `unlinkat`. A link where a directory is
//! expected is an error, never a way out, whoever put it there: a crafted commit (a link and a
//! directory of the same name), a repro command that replaced a directory of its scratch copy,
//! or a reviewer in another slot racing this one. A path resolved by the kernel from its start
//! (`std::fs::write(root.join(path))`) would follow such a link.

use rustix::fs::{self as rfs, AtFlags, FileType, Mode, OFlags, Stat};
use rustix::io::Errno;
use std::ffi::{OsStr, OsString};
use std::io::Write;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::Path;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

/// How a directory is opened: for reading its entries, never through a link.
const DIRECTORY: OFlags =
    OFlags::RDONLY.union(OFlags::DIRECTORY).union(OFlags::NOFOLLOW).union(OFlags::CLOEXEC);

/// The most directories a removal holds open at once; deeper ones are moved up first.
const MAX_OPEN_DIRECTORIES: usize = 64;

/// The error for a path component that is not a directory (a link, a file) where one is
/// needed.
fn not_a_directory(name: &OsStr) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::NotADirectory,
        format!(
            "{} is not a directory (a symbolic link or a file stands where a directory belongs; it is never followed)",
            Path::new(name).display()
        ),
    )
}

/// Opens the directory `name` of `parent`, never through a link; a directory its owner took
/// permissions from (`chmod 000`) gets them back first.
pub(crate) fn open_directory(parent: BorrowedFd<'_>, name: &OsStr) -> std::io::Result<OwnedFd> {
    let opened = match rfs::openat(parent, name, DIRECTORY, Mode::empty()) {
        Err(Errno::ACCESS) => {
            // Not readable: open it for its path alone (which needs no permission on it),
            // restore the owner's permissions through that handle, and open it again.
            let path_only = OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
            let handle =
                rfs::openat(parent, name, path_only, Mode::empty()).map_err(|e| kind_error(e, name))?;
            let mode = rfs::fstat(&handle)?.st_mode;
            // The handle's own entry in /proc names exactly this directory, whatever happens to
            // `name` meanwhile.
            rfs::chmod(
                format!("/proc/self/fd/{}", std::os::fd::AsRawFd::as_raw_fd(&handle)).as_str(),
                Mode::from_raw_mode((mode | 0o700) & 0o7777),
            )?;
            rfs::openat(parent, name, DIRECTORY, Mode::empty())
        }
        other => other,
    };
    let fd = opened.map_err(|e| kind_error(e, name))?;
    let mode = rfs::fstat(&fd)?.st_mode;
    if mode & 0o700 != 0o700 {
        rfs::fchmod(&fd, Mode::from_raw_mode((mode | 0o700) & 0o7777))?;
    }
    Ok(fd)
}

/// The directory `name` of `parent`, made when missing; anything else in its place (a link,
/// a file) is removed first, never followed.
pub(crate) fn make_directory(parent: BorrowedFd<'_>, name: &OsStr) -> std::io::Result<OwnedFd> {
    match rfs::statat(parent, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(stat) if FileType::from_raw_mode(stat.st_mode) == FileType::Directory => {}
        Ok(_) => remove_entry(parent, name)?,
        Err(Errno::NOENT) => {}
        Err(error) => return Err(error.into()),
    }
    match rfs::mkdirat(parent, name, Mode::from_raw_mode(0o755)) {
        Ok(()) | Err(Errno::EXIST) => {}
        Err(error) => return Err(error.into()),
    }
    open_directory(parent, name)
}

/// `ELOOP` (a link under `O_NOFOLLOW`) and `ENOTDIR` as "not a directory", naming `name`.
fn kind_error(errno: Errno, name: &OsStr) -> std::io::Error {
    match errno {
        Errno::LOOP | Errno::NOTDIR => not_a_directory(name),
        other => other.into(),
    }
}

/// Opens `path` itself as a directory, refusing a link at its last component (its parents
/// are the caller's own: the run directory, a cache directory).
pub(crate) fn open_root(path: &Path) -> std::io::Result<OwnedFd> {
    let parent = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name = path.file_name().ok_or_else(|| not_a_directory(path.as_os_str()))?;
    let parent = rfs::open(parent, DIRECTORY.difference(OFlags::NOFOLLOW), Mode::empty())?;
    open_directory(parent.as_fd(), name)
}

/// A `/`-separated relative path split into its directories and its name.
fn split(path: &str) -> std::io::Result<(Vec<&str>, &str)> {
    let mut parts: Vec<&str> = path.split('/').collect();
    let name = parts.pop().unwrap_or_default();
    if name.is_empty() || parts.iter().chain([&name]).any(|part| matches!(*part, "" | "." | "..")) {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("{path} is not a relative path of plain names"),
        ));
    }
    Ok((parts, name))
}

/// Writes entries beneath one root directory, keeping the handles of the directories along
/// the last path written open (paths written in order share most of them).
pub(crate) struct Writer<'r> {
    root: BorrowedFd<'r>,
    /// The directories from the root down to the last one written in: (name, handle).
    open: Vec<(String, OwnedFd)>,
}

impl<'r> Writer<'r> {
    /// A writer beneath the directory `root`.
    pub(crate) fn new(root: BorrowedFd<'r>) -> Writer<'r> {
        Writer { root, open: Vec::new() }
    }

    /// The handle of the directory made of `dirs` (components from the root), each made
    /// where it is missing; a link or file in the way is an error.
    fn directory_of(&mut self, dirs: &[&str]) -> std::io::Result<BorrowedFd<'_>> {
        let common = self.open.iter().zip(dirs).take_while(|((open, _), dir)| open == *dir).count();
        self.open.truncate(common);
        for dir in &dirs[common..] {
            let parent = self.open.last().map_or(self.root, |(_, fd)| fd.as_fd());
            let name = OsStr::new(dir);
            match rfs::mkdirat(parent, name, Mode::from_raw_mode(0o755)) {
                Ok(()) | Err(Errno::EXIST) => {}
                Err(error) => return Err(error.into()),
            }
            let fd = open_directory(parent, name)?;
            self.open.push(((*dir).to_owned(), fd));
        }
        Ok(self.open.last().map_or(self.root, |(_, fd)| fd.as_fd()))
    }

    /// Makes the directory `path` (and its parents).
    pub(crate) fn directory(&mut self, path: &str) -> std::io::Result<()> {
        let (mut dirs, name) = split(path)?;
        dirs.push(name);
        self.directory_of(&dirs).map(|_| ())
    }

    /// Creates the regular file `path` with `bytes` and `mode`; nothing may be there.
    /// Returns what the file system holds for it now.
    pub(crate) fn file(&mut self, path: &str, bytes: &[u8], mode: u32) -> std::io::Result<Stat> {
        let (dirs, name) = split(path)?;
        let dir = self.directory_of(&dirs)?;
        let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let fd = rfs::openat(dir, name, flags, Mode::from_raw_mode(mode))?;
        let mut file = std::fs::File::from(fd);
        file.write_all(bytes)?;
        let stat = rfs::fstat(&file)?;
        if stat.st_mode & 0o7777 == mode {
            return Ok(stat);
        }
        // The umask took bits away.
        rfs::fchmod(&file, Mode::from_raw_mode(mode))?;
        Ok(rfs::fstat(&file)?)
    }

    /// Replaces whatever is at `path` (a file, a link, a directory) by a new regular file:
    /// never writes into the file that was there, which may be a hard link to one elsewhere.
    pub(crate) fn replace_file(&mut self, path: &str, bytes: &[u8], mode: u32) -> std::io::Result<Stat> {
        let (dirs, name) = split(path)?;
        let dir = self.directory_of(&dirs)?;
        remove_entry(dir, OsStr::new(name))?;
        self.file(path, bytes, mode)
    }

    /// Creates the symbolic link `path` pointing at `target`; nothing may be there.
    pub(crate) fn link(&mut self, path: &str, target: &[u8]) -> std::io::Result<Stat> {
        let (dirs, name) = split(path)?;
        let dir = self.directory_of(&dirs)?;
        rfs::symlinkat(OsStr::from_bytes(target), dir, name)?;
        Ok(rfs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)?)
    }
}

/// Removes the entry `name` of `parent` and everything beneath it; a missing entry is fine.
/// Links are removed, never followed; directories a reviewer locked (`chmod 000`) are opened
/// up; a tree nested deeper than [`MAX_OPEN_DIRECTORIES`] is taken apart from the bottom up
/// without holding a handle per level.
pub(crate) fn remove_entry(parent: BorrowedFd<'_>, name: &OsStr) -> std::io::Result<()> {
    let stat = match rfs::statat(parent, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(stat) => stat,
        Err(Errno::NOENT) => return Ok(()),
        Err(error) => return Err(error.into()),
    };
    if FileType::from_raw_mode(stat.st_mode) != FileType::Directory {
        return unlink(parent, name, AtFlags::empty());
    }
    // Directories still to remove, each a name in `parent`: the one asked for, and any deep
    // subtree moved up beside it.
    let mut pending: Vec<OsString> = vec![name.to_owned()];
    let mut moved = 0usize;
    while let Some(top) = pending.pop() {
        // Each frame: a directory's handle, its name in the frame below (or in `parent`), and
        // the subdirectories of it still to visit.
        let mut frames: Vec<(OwnedFd, OsString, Vec<OsString>)> = Vec::new();
        let fd = open_directory(parent, &top)?;
        let children = clear_files(&fd)?;
        frames.push((fd, top, children));
        loop {
            let depth = frames.len();
            let Some((fd, _, children)) = frames.last_mut() else { break };
            match children.pop() {
                Some(child) if depth >= MAX_OPEN_DIRECTORIES => {
                    // Too deep to hold another handle: move the subtree up into `parent` and
                    // remove it from there later.
                    let here = fd.as_fd();
                    let parked = loop {
                        moved += 1;
                        let candidate =
                            OsString::from(format!(".revcal-removing-{}-{moved}", std::process::id()));
                        match rfs::renameat_with(
                            here,
                            &child,
                            parent,
                            &candidate,
                            rfs::RenameFlags::NOREPLACE,
                        ) {
                            Ok(()) => break candidate,
                            Err(Errno::EXIST) => continue,
                            Err(error) => return Err(error.into()),
                        }
                    };
                    pending.push(parked);
                }
                Some(child) => {
                    let child_fd = open_directory(fd.as_fd(), &child)?;
                    let grandchildren = clear_files(&child_fd)?;
                    frames.push((child_fd, child, grandchildren));
                }
                None => {
                    let Some((done, name, _)) = frames.pop() else { break };
                    drop(done);
                    let above = frames.last().map_or(parent, |(fd, _, _)| fd.as_fd());
                    unlink(above, &name, AtFlags::REMOVEDIR)?;
                }
            }
        }
    }
    Ok(())
}

/// `unlinkat`, with a missing entry counted as removed.
fn unlink(dir: BorrowedFd<'_>, name: &OsStr, flags: AtFlags) -> std::io::Result<()> {
    match rfs::unlinkat(dir, name, flags) {
        Ok(()) | Err(Errno::NOENT) => Ok(()),
        Err(error) => Err(error.into()),
    }
}

/// Removes every entry of the directory `dir` that is not a directory, and names the
/// directories left.
fn clear_files(dir: &OwnedFd) -> std::io::Result<Vec<OsString>> {
    let mut directories = Vec::new();
    for (name, kind) in entries(dir.as_fd())? {
        match kind {
            Some(FileType::Directory) => directories.push(name),
            Some(_) => unlink(dir.as_fd(), &name, AtFlags::empty())?,
            None => match rfs::statat(dir, &name, AtFlags::SYMLINK_NOFOLLOW) {
                Ok(stat) if FileType::from_raw_mode(stat.st_mode) == FileType::Directory => {
                    directories.push(name);
                }
                Ok(_) => unlink(dir.as_fd(), &name, AtFlags::empty())?,
                Err(Errno::NOENT) => {}
                Err(error) => return Err(error.into()),
            },
        }
    }
    Ok(directories)
}

/// The entries of the directory `dir` (without `.` and `..`), each with its type when the
/// file system gives it in the listing.
pub(crate) fn entries(dir: BorrowedFd<'_>) -> std::io::Result<Vec<(OsString, Option<FileType>)>> {
    let mut listing = rfs::Dir::read_from(dir)?;
    let mut entries = Vec::new();
    while let Some(entry) = listing.read() {
        let entry = entry?;
        let name = entry.file_name().to_bytes();
        if name == b"." || name == b".." {
            continue;
        }
        let kind = match entry.file_type() {
            FileType::Unknown => None,
            known => Some(known),
        };
        entries.push((OsStr::from_bytes(name).to_owned(), kind));
    }
    Ok(entries)
}

/// What [`sweep`] does with an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// A directory to walk into.
    Descend,
    /// Leave it as it is.
    Keep,
    /// Keep the directory itself, empty.
    Empty,
    /// Remove it and everything beneath it.
    Remove,
}

/// One entry a walk found: its `/`-separated path (or its name, when that is not UTF-8), the
/// path of its directory (`""`: the root; shared by the directory's entries), and its status
/// (links not followed).
struct Found {
    path: Result<String, OsString>,
    parent: Arc<str>,
    stat: Stat,
}

impl Found {
    /// Its path, when its name is UTF-8.
    fn path(&self) -> Option<&str> {
        self.path.as_deref().ok()
    }

    /// Its name in its directory.
    fn name(&self) -> &OsStr {
        match &self.path {
            // The path is the directory's path, a `/` unless that is the root, and the name.
            Ok(path) => OsStr::new(&path[if self.parent.is_empty() { 0 } else { self.parent.len() + 1 }..]),
            Err(name) => name,
        }
    }
}

/// The most threads one walk lists directories on.
const MAX_WALKERS: usize = 4;

/// Walks everything beneath `root` and asks `decide` about each entry (its `/`-separated path
/// from the root, or `None` for a name that is not UTF-8, and its status, links not
/// followed), then does what it answered. `descends` says, before `decide` is asked, which
/// directories the walk lists (it must agree with `decide`'s [`Verdict::Descend`]): the
/// listing runs on several threads (a big checkout has tens of thousands of directories,
/// each a handful of system calls), the decisions on this one, in no set order.
pub(crate) fn sweep(
    root: BorrowedFd<'_>,
    descends: &(dyn Fn(&str, &Stat) -> bool + Sync),
    decide: &mut dyn FnMut(Option<&str>, &Stat) -> Verdict,
) -> std::io::Result<()> {
    let found = walk(root, descends)?;
    // The directory the last removals happened in, kept open for the next ones.
    let mut open: Option<(Arc<str>, OwnedFd)> = None;
    for entry in found {
        let is_directory = FileType::from_raw_mode(entry.stat.st_mode) == FileType::Directory;
        let verdict = decide(entry.path(), &entry.stat);
        match verdict {
            Verdict::Keep => continue,
            Verdict::Descend if is_directory && entry.path().is_some_and(|p| descends(p, &entry.stat)) => {
                continue;
            }
            _ => {}
        }
        if open.as_ref().is_none_or(|(path, _)| **path != *entry.parent) {
            open = Some((Arc::clone(&entry.parent), open_beneath(root, &entry.parent)?));
        }
        let parent = open.as_ref().map(|(_, fd)| fd.as_fd()).unwrap_or(root);
        if verdict == Verdict::Empty && is_directory {
            let inner = open_directory(parent, entry.name())?;
            for (child, _) in entries(inner.as_fd())? {
                remove_entry(inner.as_fd(), &child)?;
            }
        } else {
            remove_entry(parent, entry.name())?;
        }
    }
    Ok(())
}

/// The directory at `relative` (`/`-separated, `""`: `root` itself) beneath `root`, opened
/// one component at a time, never through a link.
fn open_beneath(root: BorrowedFd<'_>, relative: &str) -> std::io::Result<OwnedFd> {
    let mut dir = rfs::openat(root, c".", DIRECTORY, Mode::empty())?;
    for part in relative.split('/').filter(|part| !part.is_empty()) {
        dir = open_directory(dir.as_fd(), OsStr::new(part))?;
    }
    Ok(dir)
}

/// The directories a walk has still to list, and how many walkers are listing one.
struct Pending {
    dirs: Vec<(OwnedFd, Arc<str>)>,
    busy: usize,
    failed: Option<std::io::Error>,
}

/// Every entry beneath `root`, listing the directories `descends` names, on up to
/// [`MAX_WALKERS`] threads.
fn walk(
    root: BorrowedFd<'_>,
    descends: &(dyn Fn(&str, &Stat) -> bool + Sync),
) -> std::io::Result<Vec<Found>> {
    let pending = Mutex::new(Pending { dirs: Vec::new(), busy: 0, failed: None });
    let more = Condvar::new();
    let mut found = Vec::new();
    let names = entries(root)?.into_iter().map(|(name, _)| name).collect();
    list(root, names, &Arc::from(""), descends, &mut found, &mut |dir| lock(&pending).dirs.push(dir))?;
    let walkers =
        std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get).min(MAX_WALKERS);
    let walker = || -> Vec<Found> {
        let mut found = Vec::new();
        loop {
            let (dir, relative) = {
                let mut state = lock(&pending);
                loop {
                    if state.failed.is_some() {
                        return found;
                    }
                    if let Some(next) = state.dirs.pop() {
                        state.busy += 1;
                        break next;
                    }
                    if state.busy == 0 {
                        return found;
                    }
                    state = more.wait(state).unwrap_or_else(std::sync::PoisonError::into_inner);
                }
            };
            let listed = names_in(dir).and_then(|(listing, names)| {
                list(listing.fd()?, names, &relative, descends, &mut found, &mut |dir| {
                    lock(&pending).dirs.push(dir);
                    more.notify_one();
                })
            });
            let mut state = lock(&pending);
            state.busy -= 1;
            if let Err(error) = listed {
                state.failed.get_or_insert(error);
            }
            more.notify_all();
        }
    };
    std::thread::scope(|scope| {
        let handles: Vec<_> = (1..walkers).map(|_| scope.spawn(walker)).collect();
        found.extend(walker());
        for handle in handles {
            // A walker that panicked is a bug here, not a fault of the checkout.
            found.extend(handle.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)));
        }
    });
    match pending.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner).failed {
        Some(error) => Err(error),
        None => Ok(found),
    }
}

/// Reads the status of each of `names` in `dir` (at `relative`) into `found`, and hands
/// `push` the directories among them that `descends` names, opened.
fn list(
    dir: BorrowedFd<'_>,
    names: Vec<OsString>,
    relative: &Arc<str>,
    descends: &(dyn Fn(&str, &Stat) -> bool + Sync),
    found: &mut Vec<Found>,
    push: &mut dyn FnMut((OwnedFd, Arc<str>)),
) -> std::io::Result<()> {
    for name in names {
        let stat = match rfs::statat(dir, &name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(stat) => stat,
            Err(Errno::NOENT) => continue,
            Err(error) => return Err(std::io::Error::from(error)),
        };
        let path = match name.to_str() {
            Some(text) if relative.is_empty() => Ok(text.to_owned()),
            Some(text) => Ok(format!("{relative}/{text}")),
            None => Err(name),
        };
        let entry = Found { path, parent: Arc::clone(relative), stat };
        if let Some(path) = entry.path()
            && FileType::from_raw_mode(entry.stat.st_mode) == FileType::Directory
            && descends(path, &entry.stat)
        {
            push((open_listed_directory(dir, entry.name(), entry.stat.st_mode)?, Arc::from(path)));
        }
        found.push(entry);
    }
    Ok(())
}

/// Locks `mutex`, also after a walker panicked while holding it (the panic is raised again
/// when the walkers are joined).
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The names in the directory `dir` (`.` and `..` left out), and the listing that now owns
/// the handle.
fn names_in(dir: OwnedFd) -> std::io::Result<(rfs::Dir, Vec<OsString>)> {
    let mut listing = rfs::Dir::new(dir)?;
    let mut names = Vec::new();
    while let Some(entry) = listing.read() {
        let name = entry?.file_name().to_bytes().to_owned();
        if name != b"." && name != b".." {
            names.push(OsString::from_vec(name));
        }
    }
    Ok((listing, names))
}

/// [`open_directory`] of an entry whose status was just read (`mode`): when that says the
/// owner may read, write and enter it, the handle is opened without reading it again.
fn open_listed_directory(parent: BorrowedFd<'_>, name: &OsStr, mode: u32) -> std::io::Result<OwnedFd> {
    if mode & 0o700 == 0o700
        && let Ok(fd) = rfs::openat(parent, name, DIRECTORY, Mode::empty())
    {
        return Ok(fd);
    }
    open_directory(parent, name)
}

/// Removes `path` and everything beneath it, never following a link (a link at `path` itself
/// is removed, not what it points at); a missing path is fine.
pub(crate) fn remove_path(path: &Path) -> std::io::Result<()> {
    let Some(name) = path.file_name() else {
        return Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, "no file name to remove"));
    };
    let parent = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let parent = match rfs::open(parent, DIRECTORY.difference(OFlags::NOFOLLOW), Mode::empty()) {
        Ok(fd) => fd,
        Err(Errno::NOENT) => return Ok(()),
        Err(error) => return Err(error.into()),
    };
    remove_entry(parent.as_fd(), name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::os::unix::fs::PermissionsExt;

    /// A scratch root and, beside it, a directory that must stay untouched.
    fn places() -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        let outside = dir.path().join("outside");
        fs::create_dir_all(&root).unwrap();
        fs::create_dir_all(&outside).unwrap();
        fs::write(outside.join("keep"), "keep").unwrap();
        (dir, root, outside)
    }

    fn listing(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn a_link_where_a_directory_belongs_is_never_written_through() {
        let (_dir, root, outside) = places();
        std::os::unix::fs::symlink(&outside, root.join("evil")).unwrap();
        let fd = open_root(&root).unwrap();
        let mut writer = Writer::new(fd.as_fd());
        let error = writer.file("evil/pre-commit", b"#!/bin/sh\n", 0o755).unwrap_err();
        assert_eq!(error.kind(), std::io::ErrorKind::NotADirectory, "{error}");
        assert!(error.to_string().contains("evil is not a directory"), "{error}");
        assert!(writer.link("evil/x", b"/etc").is_err());
        assert!(writer.directory("evil/sub").is_err());
        assert_eq!(listing(&outside), ["keep"], "nothing was created outside the root");
        // A file in the way of a directory is refused too.
        fs::write(root.join("plain"), "x").unwrap();
        assert!(writer.file("plain/inner", b"", 0o644).is_err());
    }

    #[test]
    fn files_are_created_never_written_into_and_replacing_never_writes_through_a_hard_link() {
        let (_dir, root, outside) = places();
        let fd = open_root(&root).unwrap();
        let mut writer = Writer::new(fd.as_fd());
        let stat = writer.file("a/b/c.txt", b"hello", 0o640).unwrap();
        assert_eq!(stat.st_mode & 0o7777, 0o640);
        assert_eq!(fs::read(root.join("a/b/c.txt")).unwrap(), b"hello");
        assert_eq!(
            writer.file("a/b/c.txt", b"again", 0o644).unwrap_err().kind(),
            std::io::ErrorKind::AlreadyExists
        );
        // A hard link to a file outside, planted where a file will be replaced.
        fs::hard_link(outside.join("keep"), root.join("a/b/linked")).unwrap();
        writer.replace_file("a/b/linked", b"planted", 0o644).unwrap();
        assert_eq!(fs::read_to_string(outside.join("keep")).unwrap(), "keep");
        assert_eq!(fs::read(root.join("a/b/linked")).unwrap(), b"planted");
        // A link in a file's place is replaced, its target untouched.
        std::os::unix::fs::symlink(outside.join("keep"), root.join("a/l")).unwrap();
        writer.replace_file("a/l", b"x", 0o755).unwrap();
        assert_eq!(fs::read_to_string(outside.join("keep")).unwrap(), "keep");
        assert!(fs::symlink_metadata(root.join("a/l")).unwrap().is_file());
        for bad in ["", "/abs", "a/../b", "./a", "a//b", "a/"] {
            assert!(writer.file(bad, b"", 0o644).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn removal_opens_locked_directories_removes_links_without_following_and_survives_depth() {
        let (_dir, root, outside) = places();
        let tree = root.join("tree");
        fs::create_dir_all(tree.join("a/b")).unwrap();
        fs::write(tree.join("a/b/f"), "x").unwrap();
        std::os::unix::fs::symlink(&outside, tree.join("a/out")).unwrap();
        fs::set_permissions(tree.join("a/b"), fs::Permissions::from_mode(0o000)).unwrap();
        fs::set_permissions(tree.join("a"), fs::Permissions::from_mode(0o500)).unwrap();
        // Deeper than the handles a removal holds at once.
        let mut deep = tree.join("deep");
        for _ in 0..(MAX_OPEN_DIRECTORIES * 3) {
            deep = deep.join("d");
        }
        fs::create_dir_all(&deep).unwrap();
        fs::write(deep.join("leaf"), "leaf").unwrap();
        remove_path(&tree).unwrap();
        assert!(!tree.exists());
        assert_eq!(listing(&root), Vec::<String>::new(), "no moved subtree is left behind");
        assert_eq!(listing(&outside), ["keep"]);
        remove_path(&tree).unwrap();
        // A link given as the path is removed itself.
        std::os::unix::fs::symlink(&outside, root.join("link")).unwrap();
        remove_path(&root.join("link")).unwrap();
        assert_eq!(listing(&outside), ["keep"]);
    }

    #[test]
    fn a_sweep_walks_keeps_empties_and_removes_as_told() {
        let (_dir, root, outside) = places();
        fs::create_dir_all(root.join("src/deep")).unwrap();
        fs::create_dir_all(root.join("sub/inner")).unwrap();
        fs::write(root.join("src/a"), "a").unwrap();
        fs::write(root.join("src/deep/b"), "b").unwrap();
        fs::write(root.join("sub/inner/x"), "x").unwrap();
        std::os::unix::fs::symlink(&outside, root.join("src/link")).unwrap();
        let fd = open_root(&root).unwrap();
        let mut seen = Vec::new();
        let descends = |path: &str, _: &Stat| matches!(path, "src" | "src/deep");
        sweep(fd.as_fd(), &descends, &mut |path, _| {
            let path = path.unwrap().to_owned();
            seen.push(path.clone());
            match path.as_str() {
                "src" | "src/deep" => Verdict::Descend,
                "sub" => Verdict::Empty,
                "src/a" => Verdict::Keep,
                _ => Verdict::Remove,
            }
        })
        .unwrap();
        seen.sort();
        assert_eq!(seen, ["src", "src/a", "src/deep", "src/deep/b", "src/link", "sub"]);
        assert!(root.join("src/a").exists() && root.join("src/deep").is_dir());
        assert!(!root.join("src/deep/b").exists() && !root.join("src/link").exists());
        assert_eq!(listing(&root.join("sub")), Vec::<String>::new());
        assert_eq!(listing(&outside), ["keep"]);
    }
}
