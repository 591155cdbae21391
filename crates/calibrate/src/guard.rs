//! Restore journals left by earlier releases of revcal, which planted in the user's work
//! tree: they journalled the original bytes and mode bits of each planted file under
//! `.git/revcal-calibrate-journal/` before changing it. A run killed with SIGKILL left the
//! plants and the journal behind; [`recover`] (`revcal calibrate --recover`) puts the files
//! back from it. This release plants only in scratch checkouts and writes no journal.

use crate::error::{BoxedError, CalibrateError};
use crate::rundir::Owner;
use serde::{Deserialize, Serialize};
use std::fs::{self, File, OpenOptions, Permissions};
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// The journal's directory name inside the git directory.
pub(crate) const JOURNAL_DIR: &str = "revcal-calibrate-journal";
const MANIFEST: &str = "journal.json";
/// The file naming the process that made the journal directory.
const OWNER: &str = "owner.json";

fn read_owner(journal: &Path) -> Option<Owner> {
    serde_json::from_slice(&fs::read(journal.join(OWNER)).ok()?).ok()
}

/// The process (of an earlier release) that still holds the journal directory, if one does:
/// its run restores the files itself.
fn holder(journal: &Path) -> Option<u32> {
    read_owner(journal)
        .filter(|owner| owner.alive() && owner.pid != std::process::id())
        .map(|owner| owner.pid)
}

/// Where an earlier release kept the journal of the repository whose git directory is
/// `git_dir`.
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

/// The newest journal format (2 added `sha256`).
const VERSION: u32 = 2;

fn fsync_dir(dir: &Path) -> std::io::Result<()> {
    File::open(dir)?.sync_all()
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
    if let Some(pid) = holder(&journal) {
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

    /// A work tree whose `src/a.rs` an earlier release planted in and journalled, as if that
    /// run had been killed: the journal holds `original`, the file holds `planted`.
    fn killed_run(original: &[u8], planted: &[u8], owner: Owner) -> (tempfile::TempDir, PathBuf, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let work = dir.path().to_path_buf();
        let git = work.join(".git");
        fs::create_dir_all(work.join("src")).unwrap();
        fs::write(work.join("src/a.rs"), planted).unwrap();
        let journal = journal_dir(&git);
        fs::create_dir_all(&journal).unwrap();
        fs::write(journal.join(OWNER), serde_json::to_vec(&owner).unwrap()).unwrap();
        fs::write(journal.join("0.orig"), original).unwrap();
        let manifest = Manifest {
            version: VERSION,
            work_tree: work.clone(),
            pid: owner.pid,
            files: vec![ManifestEntry {
                path: PathBuf::from("src/a.rs"),
                mode: 0o100640,
                blob: "0.orig".into(),
                len: original.len() as u64,
                sha256: Some(sha256_hex(original)),
            }],
        };
        fs::write(journal.join(MANIFEST), serde_json::to_vec(&manifest).unwrap()).unwrap();
        (dir, work, git)
    }

    fn gone() -> Owner {
        let mut dead = std::process::Command::new("true").spawn().unwrap();
        dead.wait().unwrap();
        Owner { pid: dead.id(), start_time: Some(1) }
    }

    #[test]
    fn recover_restores_bytes_and_mode_then_finds_nothing_to_do() {
        let (_dir, work, git) = killed_run(b"fn a() {}\r\n", b"planted", gone());
        assert_eq!(recover(&work, &git).unwrap(), Recovered::Restored(vec![PathBuf::from("src/a.rs")]));
        assert_eq!(fs::read(work.join("src/a.rs")).unwrap(), b"fn a() {}\r\n");
        assert_eq!(fs::metadata(work.join("src/a.rs")).unwrap().permissions().mode() & 0o777, 0o640);
        assert!(!journal_dir(&git).exists());
        assert_eq!(recover(&work, &git).unwrap(), Recovered::NothingToRecover);
    }

    #[test]
    fn a_journal_whose_owner_is_alive_or_whose_blob_changed_is_refused_before_anything_is_written() {
        let mut alive = std::process::Command::new("sleep").arg("30").spawn().unwrap();
        let (_dir, work, git) = killed_run(b"fn a() {}\n", b"planted", Owner::of(alive.id()));
        let busy = recover(&work, &git);
        alive.kill().unwrap();
        alive.wait().unwrap();
        assert!(matches!(busy, Err(CalibrateError::Busy { .. })), "{busy:?}");
        assert_eq!(fs::read(work.join("src/a.rs")).unwrap(), b"planted");
        let (_dir, work, git) = killed_run(b"fn a() {}\n", b"planted", gone());
        fs::write(journal_dir(&git).join("0.orig"), b"fn b() {}\n").unwrap();
        assert!(matches!(recover(&work, &git), Err(CalibrateError::Journal { .. })));
        assert_eq!(fs::read(work.join("src/a.rs")).unwrap(), b"planted");
    }

    #[test]
    fn a_link_put_in_place_of_a_journalled_file_is_replaced_not_written_through() {
        let (dir, work, git) = killed_run(b"fn a() {}\n", b"planted", gone());
        let outside = dir.path().join("outside.txt");
        fs::write(&outside, b"keep me").unwrap();
        fs::remove_file(work.join("src/a.rs")).unwrap();
        std::os::unix::fs::symlink(&outside, work.join("src/a.rs")).unwrap();
        recover(&work, &git).unwrap();
        assert_eq!(fs::read(&outside).unwrap(), b"keep me");
        assert!(!fs::symlink_metadata(work.join("src/a.rs")).unwrap().file_type().is_symlink());
        assert_eq!(fs::read(work.join("src/a.rs")).unwrap(), b"fn a() {}\n");
    }
}
