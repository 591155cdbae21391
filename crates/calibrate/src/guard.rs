//! The workspace guard: planted files are journalled under `.git/` (original bytes and
//! mode bits, fsynced) before their first byte changes, and put back on every way out of a
//! run: normal return, error, panic (the guard restores on drop) and handled signals. After
//! a SIGKILL or a power loss, [`recover`] puts them back from the journal.

use crate::error::{BoxedError, CalibrateError};
use serde::{Deserialize, Serialize};
use std::fs::{self, File, OpenOptions, Permissions};
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// The journal's directory name inside the git directory.
pub(crate) const JOURNAL_DIR: &str = "revcal-calibrate-journal";
const MANIFEST: &str = "journal.json";
/// The file naming the process that holds the journal directory (the lock).
const OWNER: &str = "owner.json";

/// The process that created a journal directory: its pid and its start time (clock ticks
/// since boot, field 22 of proc_pid_stat(5)), so that a recycled pid is not taken for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
struct Owner {
    pid: u32,
    start_time: Option<u64>,
}

impl Owner {
    fn current() -> Owner {
        let pid = std::process::id();
        Owner { pid, start_time: start_time(pid) }
    }

    /// True while the process that wrote this record still runs.
    fn alive(&self) -> bool {
        match (start_time(self.pid), self.start_time) {
            (Some(now), Some(then)) => now == then,
            (Some(_), None) => true,
            (None, _) => false,
        }
    }
}

/// The start time of process `pid` from `/proc/PID/stat` (proc_pid_stat(5): field 22, counted
/// after the parenthesised command name, which may itself hold spaces and parentheses).
fn start_time(pid: u32) -> Option<u64> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(19)?.parse().ok()
}

fn read_owner(journal: &Path) -> Option<Owner> {
    serde_json::from_slice(&fs::read(journal.join(OWNER)).ok()?).ok()
}

/// Why an existing journal directory stops a new run: its owner still runs, or it is left
/// from a run that was killed.
fn present(journal: &Path) -> CalibrateError {
    match read_owner(journal) {
        Some(owner) if owner.alive() && owner.pid != std::process::id() => {
            CalibrateError::Busy { pid: owner.pid, journal: journal.to_path_buf() }
        }
        _ => CalibrateError::JournalPresent { journal: journal.to_path_buf() },
    }
}

/// Removes a journal left by a run that died while journalling: it has no manifest (so no
/// file was planted from it) and its owner is gone. It is moved aside first and removed only
/// if what was moved is still that journal: a racing run's fresh lock goes back.
fn clear_stale(git_dir: &Path, journal: &Path) -> bool {
    if journal.join(MANIFEST).exists() {
        return false;
    }
    let Some(owner) = read_owner(journal) else { return false };
    if owner.alive() {
        return false;
    }
    let aside = git_dir.join(format!("{JOURNAL_DIR}.stale-{}", std::process::id()));
    if fs::rename(journal, &aside).is_err() {
        return false;
    }
    if read_owner(&aside) == Some(owner) && !aside.join(MANIFEST).exists() {
        tracing::info!(pid = owner.pid, "removed a restore journal its run left before planting anything");
        fs::remove_dir_all(&aside).is_ok()
    } else {
        let _ = fs::rename(&aside, journal);
        false
    }
}

/// The lock of a repository: the journal directory, created atomically (`mkdir` fails when it
/// exists) before the tree is checked or any file is read, and named after its owner. While
/// it is held no other run plants, and recovery refuses to touch the files. Dropping it
/// removes the directory unless a manifest is in it (files are planted and not restored).
#[derive(Debug)]
pub(crate) struct Lock {
    journal: PathBuf,
}

impl Lock {
    /// Takes the lock of the repository whose git directory is `git_dir`. The directory is
    /// made under another name with its owner record inside, then renamed into place:
    /// rename(2) onto a directory that is not empty fails, so exactly one run wins, and a
    /// journal directory is never seen without its owner.
    pub(crate) fn acquire(git_dir: &Path) -> Result<Lock, CalibrateError> {
        let journal = journal_dir(git_dir);
        let nonce = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |elapsed| elapsed.subsec_nanos());
        let staged = git_dir.join(format!("{JOURNAL_DIR}.new-{}-{nonce}", std::process::id()));
        let failed = |e| CalibrateError::io("create the restore journal", &journal, e);
        let made = (|| {
            fs::create_dir(&staged)?;
            let owner = serde_json::to_vec(&Owner::current()).map_err(std::io::Error::other)?;
            write_synced(&staged.join(OWNER), &owner)?;
            fsync_dir(&staged)
        })();
        if let Err(error) = made {
            let _ = fs::remove_dir_all(&staged);
            return Err(failed(error));
        }
        for attempt in 0..2 {
            match fs::rename(&staged, &journal) {
                Ok(()) => {
                    fsync_dir(git_dir).map_err(failed)?;
                    return Ok(Lock { journal });
                }
                Err(_) if journal.exists() && attempt == 0 && clear_stale(git_dir, &journal) => {}
                Err(error) => {
                    let _ = fs::remove_dir_all(&staged);
                    return Err(if journal.exists() { present(&journal) } else { failed(error) });
                }
            }
        }
        let _ = fs::remove_dir_all(&staged);
        Err(present(&journal))
    }

    /// The journal directory.
    pub(crate) fn dir(&self) -> &Path {
        &self.journal
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        if self.journal.join(MANIFEST).exists() {
            return;
        }
        if let Err(error) = fs::remove_dir_all(&self.journal) {
            tracing::error!("cannot remove the restore journal {}: {error}", self.journal.display());
        }
    }
}

/// Where the journal of the repository whose git directory is `git_dir` lives.
pub(crate) fn journal_dir(git_dir: &Path) -> PathBuf {
    git_dir.join(JOURNAL_DIR)
}

/// The manifest of a journal: one entry per planted file.
#[derive(Debug, Serialize, Deserialize)]
struct Manifest {
    version: u32,
    /// The work tree the paths are relative to.
    work_tree: PathBuf,
    /// The process that wrote it.
    pid: u32,
    files: Vec<ManifestEntry>,
}

#[derive(Debug, Serialize, Deserialize)]
struct ManifestEntry {
    path: PathBuf,
    mode: u32,
    blob: String,
    len: u64,
    /// SHA-256 of the original bytes, hex: a blob that changed after it was written (even
    /// keeping its length) is refused rather than restored. Absent only in version 1
    /// journals, written before checksums.
    #[serde(default)]
    sha256: Option<String>,
}

/// Hex SHA-256 of `bytes`.
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes).iter().map(|byte| format!("{byte:02x}")).collect()
}

/// The journal format written by this version (2 added `sha256`).
const VERSION: u32 = 2;

/// One guarded file.
#[derive(Debug)]
struct Guarded {
    relative: PathBuf,
    original: Vec<u8>,
    mode: u32,
}

/// Files under guard; restores them when dropped unless [`Guard::restore`] already did.
#[derive(Debug)]
pub(crate) struct Guard {
    work_tree: PathBuf,
    journal: PathBuf,
    files: Vec<Guarded>,
    restored: bool,
}

fn fsync_dir(dir: &Path) -> std::io::Result<()> {
    File::open(dir)?.sync_all()
}

fn write_synced(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut file = File::create(path)?;
    file.write_all(bytes)?;
    file.sync_all()
}

/// The directory `relative`'s file lives in under `work_tree`, made a real directory at every
/// level: a symbolic link a reviewer put in place of a tracked directory is replaced by an
/// empty directory, never followed, so that nothing is written outside the tree.
fn real_parent(work_tree: &Path, relative: &Path) -> std::io::Result<PathBuf> {
    let mut dir = work_tree.to_path_buf();
    let Some(parent) = relative.parent() else { return Ok(dir) };
    for component in parent.components() {
        dir.push(component);
        match fs::symlink_metadata(&dir) {
            Ok(meta) if meta.is_dir() => {}
            Ok(meta) if meta.file_type().is_symlink() => {
                fs::remove_file(&dir)?;
                fs::create_dir(&dir)?;
            }
            Ok(_) => {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::AlreadyExists,
                    format!("{} is not a directory", dir.display()),
                ));
            }
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => fs::create_dir(&dir)?,
            Err(error) => return Err(error),
        }
    }
    Ok(dir)
}

/// Puts `bytes` with `mode` at `relative` under `work_tree` by writing a new file next to it
/// and renaming it over the path (rename(2) replaces the directory entry atomically). Whatever
/// a reviewer left at the path (a hard link to another file, a symbolic link, a read-only
/// file) is replaced, never written through.
fn put_bytes(work_tree: &Path, relative: &Path, bytes: &[u8], mode: u32) -> std::io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let dir = real_parent(work_tree, relative)?;
    let name = relative
        .file_name()
        .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::InvalidInput, "no file name"))?;
    let path = dir.join(name);
    if fs::symlink_metadata(&path).is_ok_and(|meta| meta.is_dir()) {
        // A reviewer replaced the file with a directory: the file wins back its place.
        fs::remove_dir_all(&path)?;
    }
    let mut staged_name = std::ffi::OsString::from(".");
    staged_name.push(name);
    staged_name.push(format!(".revcal-{}.tmp", std::process::id()));
    let staged = dir.join(staged_name);
    let _ = fs::remove_file(&staged);
    // A reviewer may have made the directory read-only: writable for the moment of the
    // rename, then given back the mode it had.
    let dir_mode = fs::metadata(&dir)?.permissions().mode();
    if dir_mode & 0o200 == 0 {
        fs::set_permissions(&dir, Permissions::from_mode((dir_mode | 0o700) & 0o7777))?;
    }
    let written = (|| {
        let mut file = OpenOptions::new().write(true).create_new(true).mode(0o600).open(&staged)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        drop(file);
        fs::set_permissions(&staged, Permissions::from_mode(mode & 0o7777))?;
        fs::rename(&staged, &path)?;
        fsync_dir(&dir)
    })();
    if written.is_err() {
        let _ = fs::remove_file(&staged);
    }
    if dir_mode & 0o200 == 0 {
        fs::set_permissions(&dir, Permissions::from_mode(dir_mode & 0o7777))?;
    }
    written
}

impl Guard {
    /// Reads the files' bytes and modes, writes the journal and fsyncs it. Nothing in the
    /// work tree has changed when this returns. Refuses when a journal is already present.
    pub(crate) fn begin(
        lock: &Lock,
        work_tree: &Path,
        relative_files: &[PathBuf],
    ) -> Result<Guard, CalibrateError> {
        let journal = lock.dir().to_path_buf();
        if journal.join(MANIFEST).exists() {
            return Err(CalibrateError::JournalPresent { journal });
        }
        let mut files = Vec::with_capacity(relative_files.len());
        for relative in relative_files {
            let path = work_tree.join(relative);
            if fs::symlink_metadata(&path).is_ok_and(|meta| meta.file_type().is_symlink()) {
                return Err(CalibrateError::Symlink { path });
            }
            let original = fs::read(&path).map_err(|e| CalibrateError::io("read", &path, e))?;
            let mode = fs::metadata(&path)
                .map_err(|e| CalibrateError::io("read the mode of", &path, e))?
                .permissions()
                .mode();
            files.push(Guarded { relative: relative.clone(), original, mode });
        }
        let failed = |e| CalibrateError::io("write the restore journal in", &journal, e);
        // Complete (every blob, then the manifest, fsynced) or removed: a half-written journal
        // would block every later run for nothing.
        let written = (|| {
            let mut entries = Vec::with_capacity(files.len());
            for (index, file) in files.iter().enumerate() {
                let blob = format!("{index}.orig");
                write_synced(&journal.join(&blob), &file.original)?;
                entries.push(ManifestEntry {
                    path: file.relative.clone(),
                    mode: file.mode,
                    blob,
                    len: file.original.len() as u64,
                    sha256: Some(sha256_hex(&file.original)),
                });
            }
            let manifest = Manifest {
                version: VERSION,
                work_tree: work_tree.to_path_buf(),
                pid: std::process::id(),
                files: entries,
            };
            let text = serde_json::to_vec_pretty(&manifest).map_err(std::io::Error::other)?;
            let staged = journal.join("journal.json.tmp");
            write_synced(&staged, &text)?;
            fs::rename(&staged, journal.join(MANIFEST))?;
            fsync_dir(&journal)
        })();
        if let Err(error) = written {
            let _ = fs::remove_file(journal.join(MANIFEST));
            let _ = fs::remove_file(journal.join("journal.json.tmp"));
            for index in 0..files.len() {
                let _ = fs::remove_file(journal.join(format!("{index}.orig")));
            }
            return Err(failed(error));
        }
        tracing::debug!(files = files.len(), journal = %journal.display(), "restore journal written");
        Ok(Guard { work_tree: work_tree.to_path_buf(), journal, files, restored: false })
    }

    /// Replaces the content of a guarded file (keeping its mode bits).
    pub(crate) fn write(&self, relative: &Path, bytes: &[u8]) -> Result<(), CalibrateError> {
        let Some(file) = self.files.iter().find(|file| file.relative == relative) else {
            return Err(CalibrateError::io(
                "plant into",
                relative,
                std::io::Error::new(std::io::ErrorKind::InvalidInput, "the file is not under guard"),
            ));
        };
        put_bytes(&self.work_tree, relative, bytes, file.mode)
            .map_err(|e| CalibrateError::io("plant into", self.work_tree.join(relative), e))
    }

    /// Puts every file back byte-for-byte with its mode bits, then removes the journal.
    /// On failure the journal stays for `--recover`.
    pub(crate) fn restore(&mut self) -> Result<(), CalibrateError> {
        if self.restored {
            return Ok(());
        }
        // Written, then read back once the reviewer's last process is gone: a file that does
        // not hash to its original is written again, and a second mismatch keeps the journal.
        for round in 0..2 {
            for file in &self.files {
                put_bytes(&self.work_tree, &file.relative, &file.original, file.mode).map_err(|source| {
                    CalibrateError::Restore { path: self.work_tree.join(&file.relative), source }
                })?;
            }
            let Some(changed) = self.files.iter().find(|file| !self.is_original(file)) else { break };
            let path = self.work_tree.join(&changed.relative);
            tracing::warn!(path = %path.display(), "a restored file changed again; restoring once more");
            if round == 1 {
                return Err(CalibrateError::Restore {
                    path,
                    source: std::io::Error::other(
                        "it changed again right after it was restored: something is still writing to it",
                    ),
                });
            }
        }
        // The manifest goes first: a journal without one is never restored from.
        let manifest = self.journal.join(MANIFEST);
        fs::remove_file(&manifest).and_then(|()| fsync_dir(&self.journal)).map_err(|e| {
            CalibrateError::io("remove the restore journal (every file was restored):", &manifest, e)
        })?;
        for index in 0..self.files.len() {
            let _ = fs::remove_file(self.journal.join(format!("{index}.orig")));
        }
        self.restored = true;
        tracing::debug!("planted files restored");
        Ok(())
    }
}

impl Guard {
    /// True when `file` holds its original bytes (by SHA-256) and mode, as a regular file.
    fn is_original(&self, file: &Guarded) -> bool {
        let path = self.work_tree.join(&file.relative);
        let regular = fs::symlink_metadata(&path)
            .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o7777 == file.mode & 0o7777);
        regular && fs::read(&path).is_ok_and(|bytes| sha256_hex(&bytes) == sha256_hex(&file.original))
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        if let Err(error) = self.restore() {
            tracing::error!("{error}");
        }
    }
}

/// What [`recover`](crate::recover) did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Recovered {
    /// There was no journal: nothing to do.
    NothingToRecover,
    /// These files (relative paths) were restored and the journal removed.
    Restored(Vec<PathBuf>),
}

/// Restores the files recorded in the journal of `git_dir`'s repository byte-for-byte with
/// their mode bits, then removes the journal. A journal without a manifest was interrupted
/// before any file changed and is simply removed.
pub(crate) fn recover(work_tree: &Path, git_dir: &Path) -> Result<Recovered, CalibrateError> {
    let journal = journal_dir(git_dir);
    if !journal.exists() {
        return Ok(Recovered::NothingToRecover);
    }
    if let CalibrateError::Busy { pid, journal } = present(&journal) {
        return Err(CalibrateError::Busy { pid, journal });
    }
    let manifest_path = journal.join(MANIFEST);
    if !manifest_path.exists() {
        fs::remove_dir_all(&journal).map_err(|e| CalibrateError::io("remove", &journal, e))?;
        return Ok(Recovered::Restored(Vec::new()));
    }
    let unreadable = |source: BoxedError| CalibrateError::Journal { path: manifest_path.clone(), source };
    let text = fs::read(&manifest_path).map_err(|e| unreadable(e.into()))?;
    let manifest: Manifest = serde_json::from_slice(&text).map_err(|e| unreadable(e.into()))?;
    if manifest.version != VERSION && manifest.version != 1 {
        return Err(unreadable(format!("unknown journal version {}", manifest.version).into()));
    }
    // Read and check every blob before writing anything.
    let mut originals = Vec::with_capacity(manifest.files.len());
    for entry in &manifest.files {
        if entry.path.is_absolute() || entry.path.components().any(|c| c == std::path::Component::ParentDir) {
            return Err(unreadable(format!("path {} leaves the work tree", entry.path.display()).into()));
        }
        let blob = fs::read(journal.join(&entry.blob))
            .map_err(|e| unreadable(format!("cannot read {}: {e}", entry.blob).into()))?;
        if blob.len() as u64 != entry.len {
            return Err(unreadable(
                format!("{} holds {} bytes, {} expected", entry.blob, blob.len(), entry.len).into(),
            ));
        }
        let expected = match (&entry.sha256, manifest.version) {
            (Some(sum), _) => Some(sum),
            (None, 1) => None,
            (None, _) => return Err(unreadable(format!("{} has no checksum", entry.blob).into())),
        };
        if expected.is_some_and(|sum| *sum != sha256_hex(&blob)) {
            return Err(unreadable(
                format!(
                    "{} (the original of {}) does not match its SHA-256 checksum: it changed after it was written, and restoring it would write wrong bytes",
                    entry.blob,
                    entry.path.display()
                )
                .into(),
            ));
        }
        originals.push(blob);
    }
    let mut restored = Vec::with_capacity(originals.len());
    for (entry, original) in manifest.files.iter().zip(originals) {
        put_bytes(work_tree, &entry.path, &original, entry.mode)
            .map_err(|source| CalibrateError::Restore { path: work_tree.join(&entry.path), source })?;
        restored.push(entry.path.clone());
    }
    fs::remove_dir_all(&journal).map_err(|e| CalibrateError::io("remove", &journal, e))?;
    Ok(Recovered::Restored(restored))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup() -> (tempfile::TempDir, PathBuf, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let work = dir.path().to_path_buf();
        let git = work.join(".git");
        fs::create_dir(&git).unwrap();
        fs::create_dir(work.join("src")).unwrap();
        fs::write(work.join("src/a.rs"), b"fn a() {}\r\n").unwrap();
        fs::write(work.join("b.py"), b"x = 1\n").unwrap();
        fs::set_permissions(work.join("b.py"), Permissions::from_mode(0o444)).unwrap();
        (dir, work, git)
    }

    #[test]
    fn drop_restores_bytes_and_modes_and_removes_the_journal() {
        let (_dir, work, git) = setup();
        let files = vec![PathBuf::from("src/a.rs"), PathBuf::from("b.py")];
        {
            let lock = Lock::acquire(&git).unwrap();
            let guard = Guard::begin(&lock, &work, &files).unwrap();
            assert!(journal_dir(&git).join(MANIFEST).exists());
            guard.write(Path::new("src/a.rs"), b"changed").unwrap();
            guard.write(Path::new("b.py"), b"x = 2\n").unwrap();
            assert_eq!(fs::read(work.join("b.py")).unwrap(), b"x = 2\n");
            fs::remove_file(work.join("src/a.rs")).unwrap();
            drop(guard);
        }
        assert_eq!(fs::read(work.join("src/a.rs")).unwrap(), b"fn a() {}\r\n");
        assert_eq!(fs::read(work.join("b.py")).unwrap(), b"x = 1\n");
        assert_eq!(fs::metadata(work.join("b.py")).unwrap().permissions().mode() & 0o777, 0o444);
        assert!(!journal_dir(&git).exists());
    }

    #[test]
    fn a_present_journal_refuses_a_new_run_and_recover_restores_from_it() {
        let (_dir, work, git) = setup();
        let files = vec![PathBuf::from("src/a.rs")];
        let lock = Lock::acquire(&git).unwrap();
        let guard = Guard::begin(&lock, &work, &files).unwrap();
        guard.write(Path::new("src/a.rs"), b"planted").unwrap();
        std::mem::forget(guard); // as if killed
        drop(lock);
        assert!(matches!(Lock::acquire(&git), Err(CalibrateError::JournalPresent { .. })));
        assert_eq!(recover(&work, &git).unwrap(), Recovered::Restored(files));
        assert_eq!(fs::read(work.join("src/a.rs")).unwrap(), b"fn a() {}\r\n");
        assert_eq!(recover(&work, &git).unwrap(), Recovered::NothingToRecover);
    }

    #[test]
    fn a_link_put_in_place_of_a_planted_file_is_replaced_not_written_through() {
        let (dir, work, git) = setup();
        let outside = dir.path().join("outside.txt");
        fs::write(&outside, b"keep me").unwrap();
        {
            let lock = Lock::acquire(&git).unwrap();
            let guard = Guard::begin(&lock, &work, &[PathBuf::from("src/a.rs")]).unwrap();
            guard.write(Path::new("src/a.rs"), b"planted").unwrap();
            fs::remove_file(work.join("src/a.rs")).unwrap();
            std::os::unix::fs::symlink(&outside, work.join("src/a.rs")).unwrap();
            drop(guard);
        }
        assert_eq!(fs::read(&outside).unwrap(), b"keep me");
        assert!(!fs::symlink_metadata(work.join("src/a.rs")).unwrap().file_type().is_symlink());
        assert_eq!(fs::read(work.join("src/a.rs")).unwrap(), b"fn a() {}\r\n");
        std::os::unix::fs::symlink(&outside, work.join("link.rs")).unwrap();
        let lock = Lock::acquire(&git).unwrap();
        assert!(Guard::begin(&lock, &work, &[PathBuf::from("link.rs")]).is_err());
    }

    #[test]
    fn a_directory_replaced_by_a_link_to_outside_is_not_written_through() {
        let (dir, work, git) = setup();
        let outside = dir.path().join("elsewhere");
        fs::create_dir(&outside).unwrap();
        fs::write(outside.join("a.rs"), b"keep me").unwrap();
        {
            let lock = Lock::acquire(&git).unwrap();
            let guard = Guard::begin(&lock, &work, &[PathBuf::from("src/a.rs")]).unwrap();
            guard.write(Path::new("src/a.rs"), b"planted").unwrap();
            fs::remove_dir_all(work.join("src")).unwrap();
            std::os::unix::fs::symlink(&outside, work.join("src")).unwrap();
            drop(guard);
        }
        assert_eq!(fs::read(outside.join("a.rs")).unwrap(), b"keep me");
        assert!(fs::symlink_metadata(work.join("src")).unwrap().is_dir());
        assert_eq!(fs::read(work.join("src/a.rs")).unwrap(), b"fn a() {}\r\n");
    }

    #[test]
    fn a_truncated_blob_is_refused_before_anything_is_written() {
        let (_dir, work, git) = setup();
        let lock = Lock::acquire(&git).unwrap();
        let guard = Guard::begin(&lock, &work, &[PathBuf::from("src/a.rs")]).unwrap();
        guard.write(Path::new("src/a.rs"), b"planted").unwrap();
        std::mem::forget(guard);
        drop(lock);
        fs::write(journal_dir(&git).join("0.orig"), b"fn").unwrap();
        assert!(matches!(recover(&work, &git), Err(CalibrateError::Journal { .. })));
        assert_eq!(fs::read(work.join("src/a.rs")).unwrap(), b"planted");
    }
}
