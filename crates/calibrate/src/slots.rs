//! Job slots: each review runs in a slot's scratch checkout of the commit, never in the
//! user's work tree.
//!
//! A slot is a directory of the run directory with a checkout (`tree/`), a cargo target
//! directory (`target/`, kept from review to review so that builds stay incremental) and a
//! temporary directory (`tmp/`, emptied before each review). Before each review the checkout
//! is brought to the commit with that review's plants, without git: revcal walks it, keeps
//! each file it wrote itself and that is still as it left it (same inode, size, mode and
//! change time), and removes or rewrites everything else, `.git` included, which is copied
//! afresh from metadata revcal wrote itself. No git command ever runs in a directory a
//! reviewer could have written: a reviewer that sets `core.fsmonitor`, hooks or filters in
//! its checkout's `.git/config` changes nothing revcal runs. Files a review did not change
//! keep their modification times, so cargo rebuilds only what the plants touch.

use crate::error::CalibrateError;
use crate::rundir::{open_up, remove_tree};
use crate::tree::{CommitTree, EntryKind};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// What revcal wrote at a path of a checkout.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Content {
    /// An entry of the commit.
    Entry(gix::ObjectId, EntryKind),
    /// A planted file (the SHA-256 of its bytes).
    Planted(String),
}

/// What identifies a file as the one revcal wrote: anything that writes, renames, links or
/// changes the mode of a file changes its change time or inode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    dev: u64,
    ino: u64,
    mode: u32,
    size: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl Stamp {
    fn of(meta: &fs::Metadata) -> Stamp {
        Stamp {
            dev: meta.dev(),
            ino: meta.ino(),
            mode: meta.mode(),
            size: meta.size(),
            mtime: (meta.mtime(), meta.mtime_nsec()),
            ctime: (meta.ctime(), meta.ctime_nsec()),
        }
    }
}

/// One job slot.
#[derive(Debug)]
pub(crate) struct Slot {
    number: usize,
    dir: PathBuf,
    /// What revcal wrote into the checkout, by path, as it left it.
    written: HashMap<String, (Content, Stamp)>,
}

impl Slot {
    /// Slot `number` in the run directory `run`; nothing is made until it is prepared.
    pub(crate) fn new(run: &Path, number: usize) -> Slot {
        Slot { number, dir: run.join(format!("slot-{number}")), written: HashMap::new() }
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

    /// Makes the checkout the commit of `tree` with `planted` files (path -> bytes) in place
    /// of the commit's, and its `.git` a copy of `git` (see [`write_git_template`]); empties
    /// the temporary directory. Must not run while a process of an earlier review may still
    /// write to the slot.
    pub(crate) fn prepare(
        &mut self,
        tree: &CommitTree,
        git: &Path,
        planted: &BTreeMap<String, Vec<u8>>,
    ) -> Result<(), CalibrateError> {
        let root = self.tree();
        let tmp = self.tmp();
        // A reviewer may have put a link in place of its slot or its checkout (pointing at a
        // directory of yours): the link goes, and nothing below is walked or removed through it.
        for dir in [&self.dir, &root] {
            if fs::symlink_metadata(dir).is_ok_and(|meta| !meta.is_dir()) {
                remove_tree(dir).map_err(|e| CalibrateError::io("remove", dir, e))?;
            }
        }
        remove_tree(&tmp).map_err(|e| CalibrateError::io("empty", &tmp, e))?;
        for dir in [&root, &self.target_dir(), &tmp] {
            fs::create_dir_all(dir).map_err(|e| CalibrateError::io("create", dir, e))?;
        }
        let dot_git = root.join(".git");
        remove_tree(&dot_git).map_err(|e| CalibrateError::io("remove", &dot_git, e))?;
        let expected = |path: &str| -> Option<Content> {
            if let Some(bytes) = planted.get(path) {
                return Some(Content::Planted(crate::guard::sha256_hex(bytes)));
            }
            tree.entries().get(path).map(|entry| Content::Entry(entry.id, entry.kind))
        };
        let kept = self.sweep(&root, tree, &expected).map_err(|e| CalibrateError::io("reset", &root, e))?;
        let missing = tree.entries().keys().filter(|path| !kept.contains(path.as_str())).map(String::as_str);
        let written = write_entries(tree, &root, missing, planted)?;
        for (path, meta) in &written {
            if let (Some(meta), Some(content)) = (meta, expected(path)) {
                self.written.insert(path.clone(), (content, Stamp::of(meta)));
            }
        }
        let written = written.len();
        copy_dir(git, &dot_git).map_err(|e| CalibrateError::io("copy git metadata into", &dot_git, e))?;
        tracing::debug!(slot = self.number, kept = kept.len(), written, "checkout prepared");
        Ok(())
    }

    /// Walks the checkout: keeps the files revcal wrote that are still as it left them and
    /// hold what this review needs, removes everything else (anything a reviewer made,
    /// changed, linked or moved), and gives back the kept paths.
    fn sweep(
        &mut self,
        root: &Path,
        tree: &CommitTree,
        expected: &dyn Fn(&str) -> Option<Content>,
    ) -> std::io::Result<HashSet<String>> {
        let mut kept = HashSet::new();
        let mut pending = vec![(root.to_path_buf(), String::new())];
        while let Some((dir, relative)) = pending.pop() {
            open_up_one(&dir)?;
            for entry in fs::read_dir(&dir)? {
                let entry = entry?;
                let path = entry.path();
                let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
                    remove_tree(&path)?;
                    continue;
                };
                let child = if relative.is_empty() { name } else { format!("{relative}/{name}") };
                let meta = fs::symlink_metadata(&path)?;
                let submodule =
                    matches!(tree.entries().get(&child), Some(entry) if entry.kind == EntryKind::Submodule);
                if meta.is_dir() && tree.directories().contains(&child) {
                    pending.push((path, child));
                    continue;
                }
                if meta.is_dir() && submodule {
                    // An uninitialised submodule is an empty directory.
                    open_up(&path);
                    for inner in fs::read_dir(&path)?.flatten() {
                        remove_tree(&inner.path())?;
                    }
                    kept.insert(child);
                    continue;
                }
                let unchanged = match (expected(&child), self.written.get(&child)) {
                    (Some(want), Some((had, stamp))) => want == *had && Stamp::of(&meta) == *stamp,
                    _ => false,
                };
                if unchanged {
                    kept.insert(child);
                } else {
                    self.written.remove(&child);
                    remove_tree(&path)?;
                }
            }
        }
        Ok(kept)
    }
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

/// What `path` of `tree` holds (`planted` bytes in place of a file's own).
fn payload(tree: &CommitTree, path: &str, planted: Option<&[u8]>) -> Result<Option<Payload>, CalibrateError> {
    let Some(entry) = tree.entries().get(path) else { return Ok(None) };
    Ok(Some(match entry.kind {
        EntryKind::Submodule => Payload::Directory,
        EntryKind::Link => Payload::Link(tree.blob(entry.id)?),
        EntryKind::File | EntryKind::Executable => {
            let mode = if entry.kind == EntryKind::Executable { 0o755 } else { 0o644 };
            let bytes = match planted {
                Some(bytes) => bytes.to_vec(),
                None => tree.blob(entry.id)?,
            };
            Payload::File(bytes, mode)
        }
    }))
}

/// Writes `payload` at `path` beneath `root`, making its directories (those in `made` exist
/// already; the ones made are added); the metadata of what was written (none for a
/// directory). Nothing may be at the path: a link there is never written through.
fn write_payload(
    root: &Path,
    path: &str,
    payload: Payload,
    made: &mut HashSet<PathBuf>,
) -> Result<Option<fs::Metadata>, CalibrateError> {
    use std::os::unix::fs::OpenOptionsExt;
    let target = root.join(path);
    if let Some(parent) = target.parent().filter(|parent| !made.contains(*parent)) {
        fs::create_dir_all(parent).map_err(|e| CalibrateError::io("create", parent, e))?;
        made.insert(parent.to_path_buf());
    }
    let failed = |e| CalibrateError::io("write", &target, e);
    match payload {
        Payload::Directory => {
            fs::create_dir_all(&target).map_err(failed)?;
            Ok(None)
        }
        Payload::Link(to) => {
            let link = <std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(&to);
            std::os::unix::fs::symlink(link, &target).map_err(failed)?;
            fs::symlink_metadata(&target).map(Some).map_err(failed)
        }
        Payload::File(bytes, mode) => {
            // One open, write and stat per file; a chmod only when the umask took bits away.
            let mut file = fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(mode)
                .open(&target)
                .map_err(failed)?;
            std::io::Write::write_all(&mut file, &bytes).map_err(failed)?;
            let meta = file.metadata().map_err(failed)?;
            if meta.permissions().mode() & 0o777 == mode {
                return Ok(Some(meta));
            }
            file.set_permissions(fs::Permissions::from_mode(mode)).map_err(failed)?;
            file.metadata().map(Some).map_err(failed)
        }
    }
}

/// Below this many files a batch is written on the calling thread alone.
const PARALLEL_FROM: usize = 256;
/// The most files, and bytes, read into memory before they are written.
const BATCH_FILES: usize = 4096;
const BATCH_BYTES: usize = 64 << 20;

/// Writes the entries of `tree` at `paths` beneath `root` (`planted` bytes in place of the
/// files' own); each path with the metadata of what was written. The commit's objects are read
/// on the calling thread, in order, a batch at a time; each batch is written by up to four
/// threads (on most file systems, creating a file costs more than reading its blob).
pub(crate) fn write_entries<'p>(
    tree: &CommitTree,
    root: &Path,
    paths: impl Iterator<Item = &'p str>,
    planted: &BTreeMap<String, Vec<u8>>,
) -> Result<Vec<(String, Option<fs::Metadata>)>, CalibrateError> {
    let writers = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get).min(4);
    let mut written = Vec::new();
    let mut batch: Vec<(&str, Payload)> = Vec::new();
    let mut bytes = 0usize;
    for path in paths {
        let Some(payload) = payload(tree, path, planted.get(path).map(Vec::as_slice))? else { continue };
        bytes += match &payload {
            Payload::File(content, _) | Payload::Link(content) => content.len(),
            Payload::Directory => 0,
        };
        batch.push((path, payload));
        if batch.len() >= BATCH_FILES || bytes >= BATCH_BYTES {
            written.extend(write_batch(root, std::mem::take(&mut batch), writers)?);
            bytes = 0;
        }
    }
    written.extend(write_batch(root, batch, writers)?);
    Ok(written)
}

/// Writes `batch` beneath `root`, split among `writers` threads when it is large.
fn write_batch(
    root: &Path,
    batch: Vec<(&str, Payload)>,
    writers: usize,
) -> Result<Vec<(String, Option<fs::Metadata>)>, CalibrateError> {
    let write_all =
        |part: Vec<(&str, Payload)>| -> Result<Vec<(String, Option<fs::Metadata>)>, CalibrateError> {
            let mut made = HashSet::new();
            part.into_iter()
                .map(|(path, payload)| Ok((path.to_owned(), write_payload(root, path, payload, &mut made)?)))
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

/// Gives the owner full permission on `dir` itself when a reviewer took it away.
fn open_up_one(dir: &Path) -> std::io::Result<()> {
    let mode = fs::symlink_metadata(dir)?.permissions().mode();
    if mode & 0o700 != 0o700 {
        fs::set_permissions(dir, fs::Permissions::from_mode((mode | 0o700) & 0o7777))?;
    }
    Ok(())
}

/// Copies the directory `from` (regular files and directories only) to `to`.
fn copy_dir(from: &Path, to: &Path) -> std::io::Result<()> {
    fs::create_dir_all(to)?;
    for entry in fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else {
            fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}

/// Writes, at `dir`, the `.git` every checkout of `commit` gets a copy of: HEAD detached at
/// the commit, the objects of the commit and its parents in `objects` (a pack revcal writes
/// there; see [`crate::objects`]), reached through `objects/info/alternates`, with the
/// parents as the history's end, the index of the commit's tree (so that `git diff {base}`
/// and `git status` work), and a minimal config. Written by revcal itself, without running
/// git; nothing in it points at the user's repository.
pub(crate) fn write_git_template(
    repo: &gix::Repository,
    commit: &str,
    tree: gix::ObjectId,
    dir: &Path,
    objects: &Path,
) -> Result<(), CalibrateError> {
    let failed = |e| CalibrateError::io("write git metadata in", dir, e);
    let id = gix::ObjectId::from_hex(commit.as_bytes())
        .map_err(|e| CalibrateError::git("read the commit's id", e))?;
    let parents = crate::objects::write_pack(repo, id, objects)?;
    for sub in ["objects/info", "objects/pack", "refs/heads", "refs/tags"] {
        fs::create_dir_all(dir.join(sub)).map_err(failed)?;
    }
    fs::write(dir.join("HEAD"), format!("{commit}\n")).map_err(failed)?;
    fs::write(
        dir.join("config"),
        "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n",
    )
    .map_err(failed)?;
    let mut alternates = objects.as_os_str().as_encoded_bytes().to_vec();
    alternates.push(b'\n');
    fs::write(dir.join("objects/info/alternates"), alternates).map_err(failed)?;
    if !parents.is_empty() {
        let shallow: String = parents.iter().map(|parent| format!("{parent}\n")).collect();
        fs::write(dir.join("shallow"), shallow).map_err(failed)?;
    }
    let index =
        repo.index_from_tree(&tree).map_err(|e| CalibrateError::git("build the index of the commit", e))?;
    let file = fs::File::create(dir.join("index")).map_err(failed)?;
    let mut out = std::io::BufWriter::new(file);
    index
        .write_to(&mut out, gix::index::write::Options::default())
        .map_err(|e| CalibrateError::git("write the index of the commit", e))?;
    std::io::Write::flush(&mut out).map_err(failed)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

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
        let git_template = dir.path().join("template");
        fs::create_dir_all(git_template.join("objects")).unwrap();
        fs::write(git_template.join("HEAD"), "x\n").unwrap();
        let mut slot = Slot::new(dir.path(), 1);
        let root = slot.tree();
        let planted: BTreeMap<String, Vec<u8>> =
            [("src/a.rs".to_owned(), b"fn a() { panic!() }\n".to_vec())].into();
        slot.prepare(&tree, &git_template, &planted).unwrap();
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
        slot.prepare(&tree, &git_template, &BTreeMap::new()).unwrap();
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
        slot.prepare(&tree, &git_template, &BTreeMap::new()).unwrap();
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
        let template = dir.path().join("template");
        fs::create_dir_all(&template).unwrap();
        let mut slot = Slot::new(dir.path(), 1);
        let planted: BTreeMap<String, Vec<u8>> = [("d3/f10.txt".to_owned(), b"planted\n".to_vec())].into();
        slot.prepare(&tree, &template, &planted).unwrap();
        for i in 0..700 {
            let expected = if i == 10 { "planted\n".to_owned() } else { format!("file {i}\n") };
            assert_eq!(
                fs::read_to_string(slot.tree().join(format!("d{}/f{i}.txt", i % 7))).unwrap(),
                expected
            );
        }
        assert_eq!(slot.written.len(), 700, "every file is known, for the next reset");
    }
}
