//! The checkout cache: job slots kept between runs, per repository, so that a calibration of
//! a repository it has seen writes only what differs instead of a whole checkout, and removes
//! nothing at the end.
//!
//! Layout, under the cache's directory (`$XDG_CACHE_HOME/revcal/checkouts` by default):
//!
//! ```text
//! <key>/                 one repository: the key is a hash of its git directory's path
//!   slot-N/              a job slot: tree/ (the checkout), target/, caches/, tmp/
//!     manifest.json      what revcal wrote into tree/ (path, object, file status), so that
//!                        the next run keeps what is still as it left it
//!   packs/<id>/objects/  the object store checkouts of one commit share (see review_commit)
//!   used                 touched by every run: the least recently used repository goes first
//! ```
//!
//! A run locks each slot it uses (`flock` on the slot's directory), so two runs never share a
//! slot; a slot another run holds is skipped. The cache is bounded: before a run, the least
//! recently used repositories are removed until the sizes the manifests record fit the bound.
//! The key is a one-way hash: the cache names no repository a reviewer could read the
//! unplanted files of.

use crate::error::CalibrateError;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The file of a kept slot recording what revcal wrote into its checkout.
pub(crate) const MANIFEST: &str = "manifest.json";
/// The file of a kept slot recording the bytes it held when its run ended (read without the
/// manifest, which is large).
const SIZE: &str = "size";
/// The format of the manifest; a manifest of another format is not read (the slot is
/// rewritten).
const MANIFEST_FORMAT: u32 = 1;
/// The file touched by every run of a repository.
const USED: &str = "used";
/// The shared object stores kept per repository (the most recent ones).
const KEPT_PACKS: usize = 4;

/// Where kept job slots live, and how much they may hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckoutCache {
    dir: PathBuf,
    max_bytes: u64,
}

/// One repository's part of the cache, as [`CheckoutCache::list`] shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CachedRepository {
    /// Its key (a hash of the repository's git directory).
    pub key: String,
    /// Its directory in the cache.
    pub path: PathBuf,
    /// Its job slots.
    pub slots: usize,
    /// The bytes its checkouts and build directories held when their runs ended.
    pub bytes: u64,
    /// When a run last used it, in seconds since the epoch.
    pub last_used: Option<u64>,
}

/// What a kept slot's manifest records of one file of its checkout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Recorded {
    /// The object written there (hex).
    #[serde(with = "hex_id")]
    pub(crate) id: gix::ObjectId,
    /// 0 a file, 1 an executable, 2 a link, 3 a submodule.
    pub(crate) kind: u8,
    /// The file's status when revcal left it: dev, ino, mode, size, mtime s/ns, ctime s/ns.
    pub(crate) stamp: [i64; 9],
}

/// A kept slot's manifest.
#[derive(Debug, Default, Serialize, Deserialize)]
pub(crate) struct Manifest {
    format: u32,
    /// The bytes the slot held when its run ended (checkout, build and cache directories).
    pub(crate) bytes: u64,
    /// What revcal wrote, by path (hashed: read whole into the slot's own map; written sorted).
    #[serde(serialize_with = "sorted")]
    pub(crate) written: foldhash::HashMap<String, Recorded>,
}

/// `map` serialized in the order of its keys, so that one slot's manifest is the same file
/// whatever the order its entries were recorded in.
fn sorted<S: serde::Serializer>(
    map: &foldhash::HashMap<String, Recorded>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.collect_map(map.iter().collect::<BTreeMap<_, _>>())
}

mod hex_id {
    pub(super) fn serialize<S: serde::Serializer>(
        id: &gix::ObjectId,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&id.to_hex().to_string())
    }

    pub(super) fn deserialize<'de, D: serde::Deserializer<'de>>(
        deserializer: D,
    ) -> Result<gix::ObjectId, D::Error> {
        let text: String = serde::Deserialize::deserialize(deserializer)?;
        gix::ObjectId::from_hex(text.as_bytes()).map_err(serde::de::Error::custom)
    }
}

impl Manifest {
    /// The manifest of the slot at `dir`, or an empty one when it is missing, unreadable or of
    /// another format: the slot's files are then rewritten, never trusted.
    pub(crate) fn read(dir: &Path) -> Manifest {
        let path = dir.join(MANIFEST);
        let manifest =
            std::fs::read(&path).ok().and_then(|bytes| serde_json::from_slice::<Manifest>(&bytes).ok());
        match manifest {
            Some(manifest) if manifest.format == MANIFEST_FORMAT => manifest,
            _ => Manifest::default(),
        }
    }

    /// A manifest of `written`, the slot holding `bytes`.
    pub(crate) fn new(written: foldhash::HashMap<String, Recorded>, bytes: u64) -> Manifest {
        Manifest { format: MANIFEST_FORMAT, bytes, written }
    }

    /// Writes it into the slot at `dir`, whole or not at all (a new file renamed into place),
    /// and the slot's size beside it.
    pub(crate) fn write(&self, dir: &Path) -> std::io::Result<()> {
        let staged = dir.join(format!(".{MANIFEST}.{}", std::process::id()));
        std::fs::write(&staged, serde_json::to_vec(self).map_err(std::io::Error::other)?)?;
        std::fs::rename(&staged, dir.join(MANIFEST))?;
        Manifest::write_size(dir, self.bytes)
    }

    /// Records that the slot at `dir` holds `bytes`, its manifest left as it is.
    pub(crate) fn write_size(dir: &Path, bytes: u64) -> std::io::Result<()> {
        std::fs::write(dir.join(SIZE), bytes.to_string())
    }
}

/// The bytes the slot at `dir` held when its last run ended (0 when unknown).
fn slot_bytes(dir: &Path) -> u64 {
    std::fs::read_to_string(dir.join(SIZE)).ok().and_then(|text| text.trim().parse().ok()).unwrap_or(0)
}

/// The bytes of the files beneath `dir` (links not followed); 0 when it cannot be read.
pub(crate) fn bytes_beneath(dir: &Path) -> u64 {
    let mut total = 0u64;
    let mut pending = vec![dir.to_path_buf()];
    while let Some(at) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&at) else { continue };
        for entry in entries.flatten() {
            let Ok(meta) = entry.path().symlink_metadata() else { continue };
            if meta.is_dir() {
                pending.push(entry.path());
            } else {
                total += meta.len();
            }
        }
    }
    total
}

/// The key of the repository whose git directory is `git_dir`: the first 16 hex digits of the
/// SHA-256 of its canonical path.
pub(crate) fn repository_key(git_dir: &Path) -> String {
    let path = git_dir.canonicalize().unwrap_or_else(|_| git_dir.to_path_buf());
    let digest = Sha256::digest(path.as_os_str().as_encoded_bytes());
    digest.iter().take(8).map(|byte| format!("{byte:02x}")).collect()
}

/// Seconds since the epoch of `path`'s modification time.
fn modified_secs(path: &Path) -> Option<u64> {
    let modified = std::fs::metadata(path).ok()?.modified().ok()?;
    modified.duration_since(std::time::UNIX_EPOCH).ok().map(|elapsed| elapsed.as_secs())
}

impl CheckoutCache {
    /// The default bound: 20 GiB of checkouts and build directories over all repositories.
    pub const DEFAULT_MAX_BYTES: u64 = 20 << 30;

    /// A cache in `dir`, holding at most [`Self::DEFAULT_MAX_BYTES`].
    pub fn at(dir: impl Into<PathBuf>) -> CheckoutCache {
        CheckoutCache { dir: dir.into(), max_bytes: Self::DEFAULT_MAX_BYTES }
    }

    /// The user's cache: `$XDG_CACHE_HOME/revcal/checkouts`, else `~/.cache/revcal/checkouts`;
    /// `None` when neither variable is set.
    pub fn user_default() -> Option<CheckoutCache> {
        let set = |name: &str| std::env::var_os(name).filter(|value| !value.is_empty()).map(PathBuf::from);
        let base = set("XDG_CACHE_HOME").or_else(|| set("HOME").map(|home| home.join(".cache")))?;
        Some(CheckoutCache::at(base.join("revcal").join("checkouts")))
    }

    /// The same cache, bounded to `bytes`.
    pub fn max_bytes(mut self, bytes: u64) -> CheckoutCache {
        self.max_bytes = bytes;
        self
    }

    /// Its directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The bound.
    pub fn bound(&self) -> u64 {
        self.max_bytes
    }

    /// The directory of the repository whose key is `key`, made when missing and marked as
    /// used now.
    pub(crate) fn repository(&self, key: &str) -> Result<PathBuf, CalibrateError> {
        let dir = self.dir.join(key);
        std::fs::create_dir_all(&dir).map_err(|e| CalibrateError::io("create", &dir, e))?;
        let used = dir.join(USED);
        std::fs::write(&used, b"").map_err(|e| CalibrateError::io("write", &used, e))?;
        Ok(dir)
    }

    /// Every repository in the cache, the most recently used first.
    pub fn list(&self) -> std::io::Result<Vec<CachedRepository>> {
        let mut found = Vec::new();
        let entries = match std::fs::read_dir(&self.dir) {
            Ok(entries) => entries,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(found),
            Err(error) => return Err(error),
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let Some(key) = entry.file_name().to_str().map(str::to_owned) else { continue };
            if !entry.file_type().is_ok_and(|kind| kind.is_dir()) || key.starts_with('.') {
                continue;
            }
            let slots: Vec<PathBuf> = std::fs::read_dir(&path)
                .map(|inner| {
                    inner
                        .flatten()
                        .filter(|slot| {
                            slot.file_name().to_str().is_some_and(|name| name.starts_with("slot-"))
                        })
                        .map(|slot| slot.path())
                        .collect()
                })
                .unwrap_or_default();
            let bytes = slots.iter().map(|slot| slot_bytes(slot)).sum();
            found.push(CachedRepository {
                key,
                last_used: modified_secs(&path.join(USED)),
                path,
                slots: slots.len(),
                bytes,
            });
        }
        found.sort_by(|a, b| b.last_used.cmp(&a.last_used).then_with(|| a.key.cmp(&b.key)));
        Ok(found)
    }

    /// Removes the repository `key` (or every repository) from the cache, but for the slots a
    /// run holds now; gives back how many slots were removed.
    pub fn clear(&self, key: Option<&str>) -> std::io::Result<usize> {
        let mut removed = 0;
        for repository in self.list()? {
            if key.is_some_and(|key| key != repository.key) {
                continue;
            }
            removed += remove_repository(&repository.path)?;
        }
        Ok(removed)
    }

    /// Removes the least recently used repositories (never `keep`) until the others fit the
    /// bound; gives back the keys removed.
    pub(crate) fn prune(&self, keep: &str) -> Vec<String> {
        let Ok(repositories) = self.list() else { return Vec::new() };
        let mut total: u64 = repositories.iter().map(|repository| repository.bytes).sum();
        let mut removed = Vec::new();
        for repository in repositories.iter().rev() {
            if total <= self.max_bytes {
                break;
            }
            if repository.key == keep {
                continue;
            }
            match remove_repository(&repository.path) {
                Ok(_) => {
                    total = total.saturating_sub(repository.bytes);
                    tracing::info!(key = %repository.key, bytes = repository.bytes, "removed a repository's checkouts from the cache (least recently used)");
                    removed.push(repository.key.clone());
                }
                Err(error) => {
                    tracing::warn!(key = %repository.key, "cannot remove from the checkout cache: {error}")
                }
            }
        }
        removed
    }
}

/// Removes a repository's slots that no run holds, then the repository's directory when
/// nothing is left in use; gives back how many slots were removed.
fn remove_repository(path: &Path) -> std::io::Result<usize> {
    let mut removed = 0;
    let mut busy = false;
    for entry in std::fs::read_dir(path)?.flatten() {
        let name = entry.file_name();
        let is_slot = name.to_str().is_some_and(|name| name.starts_with("slot-"));
        if is_slot {
            match SlotLock::take(&entry.path()) {
                Ok(Some(_lock)) => {
                    crate::beneath::remove_path(&entry.path())?;
                    removed += 1;
                }
                Ok(None) => busy = true,
                Err(error) => return Err(error),
            }
        }
    }
    if !busy {
        crate::beneath::remove_path(path)?;
    }
    Ok(removed)
}

/// A lock a run holds on a kept slot while it uses it (`flock` on the slot's directory):
/// released when dropped, or when the run dies.
#[derive(Debug)]
pub(crate) struct SlotLock {
    _handle: std::os::fd::OwnedFd,
}

impl Drop for SlotLock {
    fn drop(&mut self) {
        // Released explicitly, not by closing the handle alone: a process another thread is
        // starting meanwhile holds a copy of the handle until it executes its program, and
        // the lock would last as long as that copy (a later run, or a suite's next unit,
        // would then find the slot taken and open another).
        let _ = rustix::fs::flock(&self._handle, rustix::fs::FlockOperation::Unlock);
    }
}

impl SlotLock {
    /// Locks the slot directory `dir` (made when missing); `None` when another run holds it.
    pub(crate) fn take(dir: &Path) -> std::io::Result<Option<SlotLock>> {
        std::fs::create_dir_all(dir)?;
        let handle = crate::beneath::open_root(dir)?;
        match rustix::fs::flock(&handle, rustix::fs::FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => Ok(Some(SlotLock { _handle: handle })),
            Err(rustix::io::Errno::WOULDBLOCK) => Ok(None),
            Err(error) => Err(error.into()),
        }
    }
}

/// The shared object store for one set of checkouts (one commit, one set of changed files) in
/// the repository's cache directory `repository`: its `objects` directory, and whether it is
/// complete (written by an earlier run). Keeps the [`KEPT_PACKS`] most recently used stores.
pub(crate) fn pack_dir(repository: &Path, id: &str) -> (PathBuf, bool) {
    let packs = repository.join("packs");
    let dir = packs.join(id);
    let complete = dir.join("complete").exists();
    if complete {
        // Marks it as used now.
        let _ = std::fs::write(dir.join("complete"), b"");
    }
    if let Ok(entries) = std::fs::read_dir(&packs) {
        // A staging directory (`.staging-*`) is a store another unit or run is writing now:
        // never a stale one.
        let mut stores: Vec<(Option<u64>, PathBuf)> = entries
            .flatten()
            .filter(|entry| !entry.file_name().to_string_lossy().starts_with('.'))
            .map(|entry| (modified_secs(&entry.path().join("complete")), entry.path()))
            .collect();
        stores.sort_by_key(|store| std::cmp::Reverse(store.0));
        for (_, stale) in stores.into_iter().skip(KEPT_PACKS) {
            if stale != dir {
                let _ = crate::beneath::remove_path(&stale);
            }
        }
    }
    (dir.join("objects"), complete)
}

/// Marks the object store whose `objects` directory is `objects` as complete.
pub(crate) fn pack_written(objects: &Path) -> std::io::Result<()> {
    match objects.parent() {
        Some(dir) => std::fs::write(dir.join("complete"), b""),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slot_is_held_by_one_run_at_a_time_and_released_when_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let slot = dir.path().join("slot-1");
        let first = SlotLock::take(&slot).unwrap();
        assert!(first.is_some());
        assert!(SlotLock::take(&slot).unwrap().is_none(), "held: a second lock is refused");
        drop(first);
        assert!(SlotLock::take(&slot).unwrap().is_some());
    }

    #[test]
    fn a_copy_of_the_handle_does_not_keep_the_slot_locked() {
        // As a process being started by another thread holds one until it runs its program.
        let dir = tempfile::tempdir().unwrap();
        let slot = dir.path().join("slot-1");
        let lock = SlotLock::take(&slot).unwrap().unwrap();
        let copy = rustix::io::dup(&lock._handle).unwrap();
        drop(lock);
        assert!(SlotLock::take(&slot).unwrap().is_some(), "released although a copy is open");
        drop(copy);
    }

    #[test]
    fn a_manifest_of_another_format_or_unreadable_is_empty() {
        let dir = tempfile::tempdir().unwrap();
        let id = gix::ObjectId::from_hex(b"0123456789012345678901234567890123456789").unwrap();
        let record = Recorded { id, kind: 1, stamp: [1, 2, 3, 4, 5, 6, 7, 8, 9] };
        let names = ["zeta", "a", "m/b", "m", "b"];
        let written: foldhash::HashMap<String, Recorded> =
            names.iter().map(|name| ((*name).to_owned(), record)).collect();
        Manifest::new(written.clone(), 42).write(dir.path()).unwrap();
        let read = Manifest::read(dir.path());
        assert_eq!((read.written, read.bytes), (written, 42));
        // Written in the order of the paths, whatever the map's.
        let text = std::fs::read_to_string(dir.path().join(MANIFEST)).unwrap();
        let at: Vec<usize> = ["a", "b", "m", "m/b", "zeta"]
            .iter()
            .map(|name| text.find(&format!("\"{name}\":")).unwrap())
            .collect();
        assert!(at.windows(2).all(|pair| pair[0] < pair[1]), "{text}");
        assert_eq!(slot_bytes(dir.path()), 42);
        std::fs::write(dir.path().join(MANIFEST), b"{\"format\": 99, \"bytes\": 1, \"written\": {}}")
            .unwrap();
        assert_eq!(Manifest::read(dir.path()).bytes, 0);
        std::fs::write(dir.path().join(MANIFEST), b"not json").unwrap();
        assert!(Manifest::read(dir.path()).written.is_empty());
    }

    #[test]
    fn pruning_removes_the_least_recently_used_repositories_past_the_bound() {
        let dir = tempfile::tempdir().unwrap();
        let cache = CheckoutCache::at(dir.path()).max_bytes(250);
        for (key, bytes) in [("aaaa", 100u64), ("bbbb", 100), ("cccc", 100)] {
            let repository = cache.repository(key).unwrap();
            let slot = repository.join("slot-1");
            std::fs::create_dir_all(&slot).unwrap();
            Manifest::new(foldhash::HashMap::default(), bytes).write(&slot).unwrap();
            // Distinct modification times, oldest first.
            let when = std::time::SystemTime::UNIX_EPOCH
                + std::time::Duration::from_secs(
                    1_000_000 + bytes * key.len() as u64 + u64::from(key.as_bytes()[0]),
                );
            std::fs::File::options()
                .write(true)
                .open(repository.join(USED))
                .unwrap()
                .set_modified(when)
                .unwrap();
        }
        let listed: Vec<String> = cache.list().unwrap().into_iter().map(|r| r.key).collect();
        assert_eq!(listed, ["cccc", "bbbb", "aaaa"], "the most recently used first");
        assert_eq!(cache.prune("aaaa"), ["bbbb"], "the oldest other than the one in use");
        let left: Vec<String> = cache.list().unwrap().into_iter().map(|r| r.key).collect();
        assert_eq!(left, ["cccc", "aaaa"]);
        // A slot another run holds is not removed.
        let held = SlotLock::take(&dir.path().join("cccc/slot-1")).unwrap();
        assert_eq!(cache.clear(None).unwrap(), 1, "aaaa's slot");
        assert!(dir.path().join("cccc/slot-1").exists());
        drop(held);
        assert_eq!(cache.clear(Some("cccc")).unwrap(), 1);
        assert!(cache.list().unwrap().is_empty());
    }

    #[test]
    fn the_key_is_a_hash_of_the_canonical_path() {
        let dir = tempfile::tempdir().unwrap();
        let key = repository_key(dir.path());
        assert_eq!(key.len(), 16);
        assert_eq!(key, repository_key(&dir.path().join(".")));
        assert!(!key.contains(dir.path().file_name().unwrap().to_str().unwrap()));
    }

    /// Keeping the most recent stores never removes one being written (a staging directory
    /// of another unit or run).
    #[test]
    fn stores_being_written_are_never_evicted() {
        let dir = tempfile::tempdir().unwrap();
        let packs = dir.path().join("packs");
        for n in 0..KEPT_PACKS + 2 {
            let store = packs.join(format!("store-{n}"));
            std::fs::create_dir_all(store.join("objects")).unwrap();
            std::fs::write(store.join("complete"), b"").unwrap();
        }
        let staging = packs.join(".staging-abc/objects/pack");
        std::fs::create_dir_all(&staging).unwrap();
        let (objects, complete) = pack_dir(dir.path(), "new");
        assert!(!complete && objects.ends_with("new/objects"));
        assert!(staging.is_dir(), "the staging directory is left alone");
        let kept = std::fs::read_dir(&packs)
            .unwrap()
            .flatten()
            .filter(|entry| entry.file_name().to_string_lossy().starts_with("store-"))
            .count();
        assert_eq!(kept, KEPT_PACKS, "the others beyond the most recent are removed");
    }
}
