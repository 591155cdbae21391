//! Job slots: each review runs in a slot's scratch checkout of the commit, never in the
//! user's work tree.
//!
//! A slot is a directory of the run directory with a checkout (`tree/`), a cargo target
//! directory (`target/`, kept from review to review so that builds stay incremental) and a
//! temporary directory (`tmp/`, emptied before each review). Before each review the checkout
//! is brought to that review's round without git: revcal walks it, keeps each file it wrote
//! itself and that is still as it left it (same inode, size, mode and change time), and
//! removes or rewrites everything else; the files any round changes are rewritten for every
//! review, so that which files are new says nothing of the round; `.git` is written afresh
//! from memory ([`crate::review_commit`]). No git command ever runs in a directory a reviewer
//! could have written: a reviewer that sets `core.fsmonitor`, hooks or filters in its
//! checkout's `.git/config` changes nothing revcal runs. Files a review did not change keep
//! their modification times, so cargo rebuilds only what the plants touch.
//!
//! Every write, walk and removal goes through directory handles and never follows a symbolic
//! link ([`crate::beneath`]): whatever a reviewer (or one in another slot) leaves in place of a
//! directory, nothing outside the checkout is written or removed.

use crate::beneath::{self, Verdict, Writer};
use crate::error::CalibrateError;
use crate::review_commit::RoundGit;
use crate::tree::{CommitTree, EntryKind};
use rustix::fs::{FileType, Stat};
use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What identifies a file as the one revcal wrote: anything that writes, renames, links or
/// changes the mode of a file changes its change time or inode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    dev: u64,
    ino: u64,
    mode: u32,
    size: i64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl Stamp {
    fn of(stat: &Stat) -> Stamp {
        Stamp {
            dev: stat.st_dev,
            ino: stat.st_ino,
            mode: stat.st_mode,
            size: stat.st_size,
            mtime: (stat.st_mtime, stat.st_mtime_nsec as i64),
            ctime: (stat.st_ctime, stat.st_ctime_nsec as i64),
        }
    }
}

/// The longest a review waits for the clock of file times to pass the files just written.
const MAX_RACY_WAIT: Duration = Duration::from_millis(100);

/// Waits until the clock file times are taken from has passed `newest` (seconds and
/// nanoseconds), so that any later change to a file written before gives it a newer time.
/// That clock advances in ticks of a few milliseconds: a reviewer that rewrote a file (same
/// size, in place) within the tick revcal wrote it in would otherwise leave every field of its
/// recorded status as it was, and the file would be kept for the next review ("racy git").
/// `false` when the clock is still behind after [`MAX_RACY_WAIT`] (it was set back).
fn wait_past(newest: (i64, i64)) -> bool {
    let started = std::time::Instant::now();
    loop {
        let now = rustix::time::clock_gettime(rustix::time::ClockId::RealtimeCoarse);
        if (now.tv_sec, now.tv_nsec as i64) > newest {
            return true;
        }
        if started.elapsed() >= MAX_RACY_WAIT {
            return false;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// What one review's checkout holds: the commit's files with `files` in place of theirs
/// (every file any round changes, with this round's bytes), and `git` as its `.git`.
#[derive(Debug)]
pub(crate) struct Round {
    /// The bytes of every changed file in this round.
    pub(crate) files: BTreeMap<String, Vec<u8>>,
    /// Its `.git`.
    pub(crate) git: RoundGit,
}

/// One job slot.
#[derive(Debug)]
pub(crate) struct Slot {
    number: usize,
    dir: PathBuf,
    /// What revcal wrote into the checkout (an entry of the commit), by path, as it left it.
    written: foldhash::HashMap<String, ((gix::ObjectId, EntryKind), Stamp)>,
    /// For a slot kept in the checkout cache: this run's lock on it. Its manifest is saved when
    /// the run gives it up.
    lock: Option<crate::cache::SlotLock>,
    /// Bytes the last checkout holds beyond what `written` records: the round's own files
    /// and its `.git`, rewritten for every review.
    unrecorded_bytes: u64,
    /// Whether `written` changed since the slot was taken: its manifest is rewritten only then.
    changed: bool,
}

/// An entry kind as a kept slot's manifest records it.
fn kind_code(kind: EntryKind) -> u8 {
    match kind {
        EntryKind::File => 0,
        EntryKind::Executable => 1,
        EntryKind::Link => 2,
        EntryKind::Submodule => 3,
    }
}

/// The entry kind a manifest's code names.
fn kind_of(code: u8) -> Option<EntryKind> {
    Some(match code {
        0 => EntryKind::File,
        1 => EntryKind::Executable,
        2 => EntryKind::Link,
        3 => EntryKind::Submodule,
        _ => return None,
    })
}

impl Stamp {
    /// As a manifest records it.
    fn to_record(self) -> [i64; 9] {
        [
            self.dev as i64,
            self.ino as i64,
            i64::from(self.mode),
            self.size,
            self.mtime.0,
            self.mtime.1,
            self.ctime.0,
            self.ctime.1,
            0,
        ]
    }

    /// From a manifest's record.
    fn from_record(record: [i64; 9]) -> Stamp {
        Stamp {
            dev: record[0] as u64,
            ino: record[1] as u64,
            mode: u32::try_from(record[2]).unwrap_or(0),
            size: record[3],
            mtime: (record[4], record[5]),
            ctime: (record[6], record[7]),
        }
    }
}

/// The directory `name` of `parent`, made when missing; anything else in its place (a link a
/// reviewer left, a file) is removed first.
fn directory_in(parent: BorrowedFd<'_>, name: &str) -> std::io::Result<OwnedFd> {
    beneath::make_directory(parent, OsStr::new(name))
}

impl Slot {
    /// Slot `number` in the run directory `run`, thrown away with it; nothing is made until
    /// it is prepared.
    pub(crate) fn new(run: &Path, number: usize) -> Slot {
        Slot {
            number,
            dir: run.join(format!("slot-{number}")),
            written: foldhash::HashMap::default(),
            lock: None,
            unrecorded_bytes: 0,
            changed: false,
        }
    }

    /// Kept slot `number` of a repository's directory in the checkout cache, locked for this
    /// run, knowing what its manifest says an earlier run wrote (each file kept only while it
    /// is still as that run left it); `None` when another run holds it.
    pub(crate) fn kept(repository: &Path, number: usize) -> Result<Option<Slot>, CalibrateError> {
        let dir = repository.join(format!("slot-{number}"));
        let Some(lock) =
            crate::cache::SlotLock::take(&dir).map_err(|e| CalibrateError::io("lock", &dir, e))?
        else {
            return Ok(None);
        };
        let manifest = crate::cache::Manifest::read(&dir);
        let written = manifest
            .written
            .into_iter()
            .filter_map(|(path, recorded)| {
                let kind = kind_of(recorded.kind)?;
                Some((path, ((recorded.id, kind), Stamp::from_record(recorded.stamp))))
            })
            .collect();
        tracing::debug!(slot = number, dir = %dir.display(), "kept slot taken");
        Ok(Some(Slot { number, dir, written, lock: Some(lock), unrecorded_bytes: 0, changed: false }))
    }

    /// The slot's cache directories (Go's build cache, npm's cache), kept from review to review.
    pub(crate) fn caches(&self) -> PathBuf {
        self.dir.join("caches")
    }

    /// Saves a kept slot's manifest: what revcal wrote, as it left it, and the bytes the slot
    /// holds (its checkout, build and cache directories).
    fn save(&self) -> std::io::Result<()> {
        let tree_bytes: u64 =
            self.written.values().map(|(_, stamp)| u64::try_from(stamp.size).unwrap_or(0)).sum();
        let bytes = tree_bytes
            + self.unrecorded_bytes
            + crate::cache::bytes_beneath(&self.target_dir())
            + crate::cache::bytes_beneath(&self.caches());
        if !self.changed {
            // What the manifest on disk records still holds: only the size moved.
            return crate::cache::Manifest::write_size(&self.dir, bytes);
        }
        let written = self
            .written
            .iter()
            .map(|(path, ((id, kind), stamp))| {
                (
                    path.clone(),
                    crate::cache::Recorded { id: *id, kind: kind_code(*kind), stamp: stamp.to_record() },
                )
            })
            .collect();
        crate::cache::Manifest::new(written, bytes).write(&self.dir)
    }

    /// Its number, from 1.
    pub(crate) fn number(&self) -> usize {
        self.number
    }

    /// The checkout's root: the reviewer's working directory.
    pub(crate) fn tree(&self) -> PathBuf {
        self.dir.join("tree")
    }

    /// The slot's cargo target directory.
    pub(crate) fn target_dir(&self) -> PathBuf {
        self.dir.join("target")
    }

    /// The slot's temporary directory.
    pub(crate) fn tmp(&self) -> PathBuf {
        self.dir.join("tmp")
    }

    /// Makes the checkout the commit of `tree` with `round`'s files and `.git`; empties the
    /// temporary directory. Must not run while a process of an earlier review may still write
    /// to the slot.
    pub(crate) fn prepare(&mut self, tree: &CommitTree, round: &Round) -> Result<(), CalibrateError> {
        let failed = |action: &'static str, path: PathBuf| move |e| CalibrateError::io(action, path, e);
        let run = self.dir.parent().unwrap_or(Path::new("/"));
        let run_fd = beneath::open_root(run).map_err(failed("open", run.to_path_buf()))?;
        let name = format!("slot-{}", self.number);
        let slot = directory_in(run_fd.as_fd(), &name).map_err(failed("create", self.dir.clone()))?;
        beneath::remove_entry(slot.as_fd(), OsStr::new("tmp")).map_err(failed("empty", self.tmp()))?;
        for dir in ["target", "tmp", "caches"] {
            directory_in(slot.as_fd(), dir).map_err(failed("create", self.dir.join(dir)))?;
        }
        let root = directory_in(slot.as_fd(), "tree").map_err(failed("create", self.tree()))?;
        let (kept, kept_bytes) =
            self.sweep(root.as_fd(), tree, round).map_err(failed("reset", self.tree()))?;
        // Sorted, so that the checkout is written directory by directory (most are kept).
        let mut missing: Vec<&str> =
            tree.entries().keys().map(String::as_str).filter(|path| !kept.contains(*path)).collect();
        missing.sort_unstable();
        let missing = missing.into_iter();
        let written = write_entries(tree, root.as_fd(), &self.tree(), missing, &round.files, kept_bytes)?;
        self.unrecorded_bytes = round.git.files.iter().map(|(_, bytes)| bytes.len() as u64).sum();
        let mut newest = None;
        for (path, stat) in &written {
            match (stat, tree.entries().get(path)) {
                (Some(stat), Some(entry)) if !round.files.contains_key(path) => {
                    let stamp = Stamp::of(stat);
                    newest = newest.max(Some(stamp.mtime.max(stamp.ctime)));
                    self.written.insert(path.clone(), ((entry.id, entry.kind), stamp));
                    self.changed = true;
                }
                (Some(stat), _) => self.unrecorded_bytes += u64::try_from(stat.st_size).unwrap_or(0),
                (None, _) => {}
            }
        }
        if let Some(newest) = newest
            && !wait_past(newest)
        {
            // The clock stays behind the files' times: trust none of the files written now.
            for (path, _) in &written {
                self.written.remove(path);
            }
        }
        write_git(root.as_fd(), &round.git)
            .map_err(failed("write git metadata in", self.tree().join(".git")))?;
        tracing::debug!(slot = self.number, kept = kept.len(), written = written.len(), "checkout prepared");
        Ok(())
    }

    /// Takes out of the checkout, once its review has ended, what tells rounds apart: every
    /// file any round changes and `.git` (which holds this round's objects). A reviewer that
    /// runs meanwhile in another slot, or in a later run, and reads this one finds only what
    /// every round has in common. The next review writes them again, as it always does.
    pub(crate) fn put_away(&mut self, round: &Round) -> Result<(), CalibrateError> {
        let tree = self.tree();
        let root = match beneath::open_root(&tree) {
            Ok(root) => root,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(error) => return Err(CalibrateError::io("open", tree, error)),
        };
        let failed = |path: &str, error| CalibrateError::io("remove", tree.join(path), error);
        beneath::remove_entry(root.as_fd(), OsStr::new(".git")).map_err(|e| failed(".git", e))?;
        for path in round.files.keys() {
            let mut parts: Vec<&str> = path.split('/').collect();
            let Some(name) = parts.pop() else { continue };
            let mut dir = None::<OwnedFd>;
            let mut reachable = true;
            for part in parts {
                let parent = dir.as_ref().map_or(root.as_fd(), |fd| fd.as_fd());
                match beneath::open_directory(parent, OsStr::new(part)) {
                    Ok(next) => dir = Some(next),
                    // Not a directory any more (a reviewer replaced it): the next sweep
                    // removes whatever is there.
                    Err(_) => {
                        reachable = false;
                        break;
                    }
                }
            }
            if reachable {
                let parent = dir.as_ref().map_or(root.as_fd(), |fd| fd.as_fd());
                beneath::remove_entry(parent, OsStr::new(name)).map_err(|e| failed(path, e))?;
            }
            self.changed |= self.written.remove(path).is_some();
        }
        Ok(())
    }

    /// Walks the checkout: keeps the files revcal wrote that are still as it left them and
    /// that this round does not change, removes everything else (anything a reviewer made,
    /// changed, linked or moved, `.git`, every file a round changes), and gives back the kept
    /// paths and the bytes they hold.
    fn sweep<'t>(
        &mut self,
        root: BorrowedFd<'_>,
        tree: &'t CommitTree,
        round: &Round,
    ) -> std::io::Result<(foldhash::HashSet<&'t str>, u64)> {
        // The kept paths borrow the tree's: a big checkout keeps tens of thousands.
        let mut kept = foldhash::HashSet::default();
        let mut kept_bytes = 0u64;
        let written = &mut self.written;
        let changed = &mut self.changed;
        // The directories the walk lists: the commit's, but `.git` and what the round writes.
        let (directories, files) = (tree.directories(), &round.files);
        let descends =
            |path: &str, _: &Stat| path != ".git" && !files.contains_key(path) && directories.contains(path);
        beneath::sweep(root, &descends, &mut |path, stat| {
            let Some(path) = path else { return Verdict::Remove };
            let is_directory = FileType::from_raw_mode(stat.st_mode) == FileType::Directory;
            if path == ".git" || files.contains_key(path) {
                *changed |= written.remove(path).is_some();
                return Verdict::Remove;
            }
            // The walk listed exactly the directories `descends` names: decided by the same
            // test. Anything else at a directory's path is no entry of the commit: removed.
            if is_directory && descends(path, stat) {
                return Verdict::Descend;
            }
            match tree.entries().get_key_value(path) {
                Some((path, entry)) if entry.kind == EntryKind::Submodule && is_directory => {
                    // An uninitialised submodule is an empty directory.
                    kept.insert(path.as_str());
                    Verdict::Empty
                }
                Some((path, entry))
                    if written.get(path).is_some_and(|(content, stamp)| {
                        *content == (entry.id, entry.kind) && Stamp::of(stat) == *stamp
                    }) =>
                {
                    kept.insert(path.as_str());
                    kept_bytes += u64::try_from(stat.st_size).unwrap_or(0);
                    Verdict::Keep
                }
                _ => {
                    *changed |= written.remove(path).is_some();
                    Verdict::Remove
                }
            }
        })?;
        Ok((kept, kept_bytes))
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        if self.lock.is_some()
            && let Err(error) = self.save()
        {
            tracing::warn!(dir = %self.dir.display(), "cannot save the manifest of a kept slot: {error}; its files are rewritten next time");
        }
    }
}

/// Writes `git`'s directories and files as `.git` beneath `root`.
fn write_git(root: BorrowedFd<'_>, git: &RoundGit) -> std::io::Result<()> {
    let mut writer = Writer::new(root);
    writer.directory(".git")?;
    for directory in &git.directories {
        writer.directory(&format!(".git/{directory}"))?;
    }
    for (path, bytes) in &git.files {
        writer.file(&format!(".git/{path}"), bytes, 0o644)?;
    }
    Ok(())
}

/// What is written at a path of a checkout.
enum Payload {
    /// An empty directory (a submodule).
    Directory,
    /// A symbolic link to this target.
    Link(Vec<u8>),
    /// A regular file with these bytes and mode.
    File(Vec<u8>, u32),
}

/// The mode a file of `kind` is written with.
pub(crate) fn mode_of(kind: EntryKind) -> u32 {
    if kind == EntryKind::Executable { 0o755 } else { 0o644 }
}

/// What `path` of `tree` holds (`replaced` bytes in place of a file's own).
fn payload(
    tree: &CommitTree,
    path: &str,
    replaced: Option<&[u8]>,
) -> Result<Option<Payload>, CalibrateError> {
    let Some(entry) = tree.entries().get(path) else { return Ok(None) };
    let at_path = |error: CalibrateError| match error {
        CalibrateError::TooLarge { size, limit, .. } => {
            CalibrateError::TooLarge { what: format!("{path} in the commit"), size, limit }
        }
        other => other,
    };
    Ok(Some(match entry.kind {
        EntryKind::Submodule => Payload::Directory,
        EntryKind::Link => Payload::Link(tree.blob(entry.id).map_err(at_path)?),
        EntryKind::File | EntryKind::Executable => {
            let bytes = match replaced {
                Some(bytes) => bytes.to_vec(),
                None => tree.blob(entry.id).map_err(at_path)?,
            };
            Payload::File(bytes, mode_of(entry.kind))
        }
    }))
}

/// Writes `payload` at `path` with `writer`; the status of what was written (none for a
/// directory). Nothing may be at the path, and no link is ever written through.
fn write_payload(writer: &mut Writer<'_>, path: &str, payload: Payload) -> std::io::Result<Option<Stat>> {
    match payload {
        Payload::Directory => writer.directory(path).map(|()| None),
        Payload::Link(to) => writer.link(path, &to).map(Some),
        Payload::File(bytes, mode) => writer.file(path, &bytes, mode).map(Some),
    }
}

/// Below this many files a batch is written on the calling thread alone.
const PARALLEL_FROM: usize = 256;
/// The most files, and bytes, read into memory before they are written.
const BATCH_FILES: usize = 4096;
const BATCH_BYTES: usize = 64 << 20;

/// Writes the entries of `tree` at `paths` beneath the directory `root` (named `shown` in
/// messages), `replaced` bytes in place of the files' own; each path with the status of what
/// was written. The checkout may hold [`CheckoutLimits::max_checkout_bytes`](crate::CheckoutLimits)
/// in all, of which `already` are there. The commit's objects are read on the calling
/// thread, in order, a batch at a time; each batch is written by up to four threads (on most
/// file systems, creating a file costs more than reading its blob).
pub(crate) fn write_entries<'p>(
    tree: &CommitTree,
    root: BorrowedFd<'_>,
    shown: &Path,
    paths: impl Iterator<Item = &'p str>,
    replaced: &BTreeMap<String, Vec<u8>>,
    already: u64,
) -> Result<Vec<(String, Option<Stat>)>, CalibrateError> {
    let writers = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get).min(4);
    let limit = tree.limits().max_checkout_bytes;
    let mut total = already;
    let mut written = Vec::new();
    let mut batch: Vec<(&str, Payload)> = Vec::new();
    let mut bytes = 0usize;
    for path in paths {
        let Some(payload) = payload(tree, path, replaced.get(path).map(Vec::as_slice))? else { continue };
        let size = match &payload {
            Payload::File(content, _) | Payload::Link(content) => content.len(),
            Payload::Directory => 0,
        };
        bytes += size;
        total += size as u64;
        if total > limit {
            return Err(CalibrateError::TooLarge {
                what: "the files of the commit's checkout".into(),
                size: total,
                limit,
            });
        }
        batch.push((path, payload));
        if batch.len() >= BATCH_FILES || bytes >= BATCH_BYTES {
            written.extend(write_batch(root, shown, std::mem::take(&mut batch), writers)?);
            bytes = 0;
        }
    }
    written.extend(write_batch(root, shown, batch, writers)?);
    Ok(written)
}

/// Writes `batch` beneath `root`, split among `writers` threads when it is large.
fn write_batch(
    root: BorrowedFd<'_>,
    shown: &Path,
    batch: Vec<(&str, Payload)>,
    writers: usize,
) -> Result<Vec<(String, Option<Stat>)>, CalibrateError> {
    let write_all = |part: Vec<(&str, Payload)>| -> Result<Vec<(String, Option<Stat>)>, CalibrateError> {
        let mut writer = Writer::new(root);
        part.into_iter()
            .map(|(path, payload)| {
                let stat = write_payload(&mut writer, path, payload)
                    .map_err(|e| CalibrateError::io("write", shown.join(path), e))?;
                Ok((path.to_owned(), stat))
            })
            .collect()
    };
    if batch.len() < PARALLEL_FROM || writers < 2 {
        return write_all(batch);
    }
    let size = batch.len().div_ceil(writers);
    let mut parts: Vec<Vec<(&str, Payload)>> = Vec::with_capacity(writers);
    let mut rest = batch.into_iter();
    loop {
        let part: Vec<(&str, Payload)> = rest.by_ref().take(size).collect();
        if part.is_empty() {
            break;
        }
        parts.push(part);
    }
    std::thread::scope(|scope| {
        let handles: Vec<_> = parts.into_iter().map(|part| scope.spawn(|| write_all(part))).collect();
        let mut written = Vec::new();
        for handle in handles {
            match handle.join() {
                Ok(result) => written.extend(result?),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        Ok(written)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::os::unix::fs::PermissionsExt;
    use std::process::Command;

    fn coarse_now() -> (i64, i64) {
        let now = rustix::time::clock_gettime(rustix::time::ClockId::RealtimeCoarse);
        (now.tv_sec, now.tv_nsec as i64)
    }

    #[test]
    fn a_review_starts_only_once_file_times_can_tell_a_later_write() {
        // A file written now: its times are of the current tick.
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        fs::write(&file, "a").unwrap();
        let stat = rustix::fs::stat(&file).unwrap();
        let stamp = Stamp::of(&stat);
        let newest = stamp.mtime.max(stamp.ctime);
        assert!(wait_past(newest));
        assert!(coarse_now() > newest, "the clock has passed the file's times");
        // A write now gives the file a later time than the one recorded.
        fs::write(&file, "b").unwrap();
        let again = Stamp::of(&rustix::fs::stat(&file).unwrap());
        assert!(again.ctime > stamp.ctime && again.mtime > stamp.mtime);
        // Times ahead of the clock (a clock set back): it gives up, and says so.
        let (seconds, nanos) = coarse_now();
        assert!(!wait_past((seconds + 3600, nanos)));
    }

    /// A round whose changed files hold `files`, with a `.git` of one file.
    fn round(files: &[(&str, &[u8])], head: &str) -> Round {
        Round {
            files: files.iter().map(|(path, bytes)| ((*path).to_owned(), bytes.to_vec())).collect(),
            git: RoundGit {
                head: gix::ObjectId::null(gix::hash::Kind::Sha1),
                directories: vec!["objects/info".into()],
                files: vec![("HEAD".into(), head.as_bytes().to_vec())],
            },
        }
    }

    fn git(dir: &Path, args: &[&str]) {
        let status = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"])
            .args(args)
            .current_dir(dir)
            .status()
            .unwrap();
        assert!(status.success(), "git {args:?}");
    }

    /// A repository with a few files, a link and an executable; its HEAD's tree.
    fn repository() -> (tempfile::TempDir, CommitTree) {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("repo");
        fs::create_dir_all(repo.join("src/deep")).unwrap();
        fs::write(repo.join("src/a.rs"), "fn a() {}\n").unwrap();
        fs::write(repo.join("src/deep/b.rs"), "fn b() {}\n").unwrap();
        fs::write(repo.join("run.sh"), "#!/bin/sh\n").unwrap();
        fs::set_permissions(repo.join("run.sh"), fs::Permissions::from_mode(0o755)).unwrap();
        std::os::unix::fs::symlink("src/a.rs", repo.join("link")).unwrap();
        git(&repo, &["init", "-q"]);
        git(&repo, &["add", "."]);
        git(&repo, &["commit", "-qm", "one"]);
        let opened = gix::open(&repo).unwrap();
        let tree = opened.head_commit().unwrap().tree_id().unwrap().detach();
        (dir, CommitTree::read(opened, tree).unwrap())
    }

    fn modified(path: &Path) -> std::time::SystemTime {
        fs::symlink_metadata(path).unwrap().modified().unwrap()
    }

    #[test]
    fn a_reset_undoes_what_a_review_did_and_keeps_the_files_it_did_not_touch() {
        let (dir, tree) = repository();
        let mut slot = Slot::new(dir.path(), 1);
        let root = slot.tree();
        slot.prepare(&tree, &round(&[("src/a.rs", b"fn a() { panic!() }\n")], "x\n")).unwrap();
        assert_eq!(fs::read(root.join("src/a.rs")).unwrap(), b"fn a() { panic!() }\n");
        assert_eq!(fs::read_link(root.join("link")).unwrap(), Path::new("src/a.rs"));
        assert_eq!(fs::metadata(root.join("run.sh")).unwrap().permissions().mode() & 0o777, 0o755);
        assert_eq!(fs::read(root.join(".git/HEAD")).unwrap(), b"x\n");
        let untouched = modified(&root.join("src/deep/b.rs"));

        // What a hostile review leaves: an edit, a new file, a link in a file's place, a
        // locked directory, a changed `.git`; and the checkout itself replaced by a link to a
        // directory that must not be touched.
        fs::write(root.join("run.sh"), "rm -rf /\n").unwrap();
        fs::write(root.join("src/new.rs"), "new").unwrap();
        fs::remove_file(root.join("src/a.rs")).unwrap();
        std::os::unix::fs::symlink("/etc/passwd", root.join("src/a.rs")).unwrap();
        fs::write(root.join(".git/HEAD"), "ref: refs/heads/evil\n").unwrap();
        fs::set_permissions(root.join("src/deep"), fs::Permissions::from_mode(0o000)).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));

        // The next review, with no plant.
        let clean = round(&[("src/a.rs", b"fn a() {}\n")], "x\n");
        slot.prepare(&tree, &clean).unwrap();
        assert_eq!(fs::read(root.join("src/a.rs")).unwrap(), b"fn a() {}\n");
        assert!(!fs::symlink_metadata(root.join("src/a.rs")).unwrap().file_type().is_symlink());
        assert_eq!(fs::read(root.join("run.sh")).unwrap(), b"#!/bin/sh\n");
        assert!(!root.join("src/new.rs").exists());
        assert_eq!(fs::read(root.join(".git/HEAD")).unwrap(), b"x\n");
        assert_eq!(fs::read(root.join("src/deep/b.rs")).unwrap(), b"fn b() {}\n");
        assert_eq!(
            modified(&root.join("src/deep/b.rs")),
            untouched,
            "an untouched file keeps its time (builds stay incremental)"
        );
        assert!(
            modified(&root.join("src/a.rs")) > untouched,
            "a file that changed gets a new time (builds see it)"
        );

        let precious = dir.path().join("precious");
        fs::create_dir_all(precious.join(".git")).unwrap();
        fs::write(precious.join("keep"), "keep").unwrap();
        let moved = dir.path().join("moved");
        fs::rename(&root, &moved).unwrap();
        std::os::unix::fs::symlink(&precious, &root).unwrap();
        slot.prepare(&tree, &clean).unwrap();
        assert_eq!(fs::read_to_string(precious.join("keep")).unwrap(), "keep");
        assert!(precious.join(".git").is_dir(), "nothing is removed through a link");
        assert!(fs::symlink_metadata(&root).unwrap().is_dir());
        crate::rundir::remove_tree(&moved).unwrap();
    }

    #[test]
    fn a_large_checkout_is_written_whole_by_several_threads() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("repo");
        for i in 0..700 {
            let file = repo.join(format!("d{}/f{i}.txt", i % 7));
            fs::create_dir_all(file.parent().unwrap()).unwrap();
            fs::write(&file, format!("file {i}\n")).unwrap();
        }
        git(&repo, &["init", "-q"]);
        git(&repo, &["add", "."]);
        git(&repo, &["commit", "-qm", "many"]);
        let opened = gix::open(&repo).unwrap();
        let tree_id = opened.head_commit().unwrap().tree_id().unwrap().detach();
        let tree = CommitTree::read(opened, tree_id).unwrap();
        let mut slot = Slot::new(dir.path(), 1);
        slot.prepare(&tree, &round(&[("d3/f10.txt", b"planted\n")], "x\n")).unwrap();
        for i in 0..700 {
            let expected = if i == 10 { "planted\n".to_owned() } else { format!("file {i}\n") };
            assert_eq!(
                fs::read_to_string(slot.tree().join(format!("d{}/f{i}.txt", i % 7))).unwrap(),
                expected
            );
        }
        assert_eq!(slot.written.len(), 699, "every file but the changed one is known, for the next reset");
    }
}
