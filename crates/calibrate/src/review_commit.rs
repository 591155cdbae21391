//! The commit a reviewer finds in its checkout: an ordinary commit under review.
//!
//! Every review's `.git` has HEAD at a commit made for that review's round: the original
//! commit's author, committer and message, its first parent as its only parent, and a tree
//! holding the round's files (the plants, a clean round's neutral edit, or nothing changed).
//! The index is that tree's, so `git status` is clean and `git diff HEAD~1` (or `{base}`) shows
//! the whole change with whatever the round put in it, exactly as for a change that was never
//! planted. Nothing in the checkout tells a planted round from a clean one.
//!
//! The objects are split in two. What every round shares (the first parent with everything
//! its tree reaches, and every tree and blob of the commit's tree that no round changes) is
//! one pack in the run directory, reached through `objects/info/alternates`. What a round
//! changes (its version of every file any round changes, the trees above them, its commit) is
//! written as loose objects into that review's own `.git`. So the original commit, its tree,
//! and the original bytes of every file a round changes are in no checkout's object store
//! unless the round itself holds them: a reviewer cannot find the unplanted files through
//! git, by id or by listing every object.
//!
//! Every file of the `.git` is written by revcal from memory, without running git.

use crate::error::CalibrateError;
use crate::tree::retrying;
use gix::ObjectId;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;

/// A file of a review's `.git`: its path in `.git` and its bytes.
pub(crate) type GitFile = (String, Vec<u8>);

/// What one round's `.git` holds.
#[derive(Debug, Clone)]
pub(crate) struct RoundGit {
    /// The commit under review (HEAD).
    pub(crate) head: ObjectId,
    /// Directories to make in `.git` (empty ones included).
    pub(crate) directories: Vec<String>,
    /// Every file of `.git`, in order.
    pub(crate) files: Vec<GitFile>,
}

/// What every round of one commit shares, and how to make a round's commit.
pub(crate) struct ReviewCommits {
    /// The original commit's raw bytes.
    commit: Vec<u8>,
    /// Its first parent, the only parent of every round's commit.
    first_parent: Option<ObjectId>,
    /// Every file any round changes.
    changed: BTreeSet<String>,
    /// The original trees of the directories above the changed files (`""` for the root),
    /// with their raw bytes.
    trees: BTreeMap<String, (ObjectId, Vec<u8>)>,
    /// The index of the original tree.
    index: gix::index::File,
    /// The `objects` directory holding the shared pack.
    objects: std::path::PathBuf,
}

impl std::fmt::Debug for ReviewCommits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReviewCommits").field("changed", &self.changed).finish_non_exhaustive()
    }
}

/// The directories above `path` (`a/b/c.rs`: `""`, `a`, `a/b`).
fn directories_above(path: &str) -> impl Iterator<Item = &str> {
    std::iter::once("").chain(path.match_indices('/').map(move |(at, _)| &path[..at]))
}

impl ReviewCommits {
    /// Prepares the rounds of `commit` (its tree `tree`, its first parent `first_parent`),
    /// where the rounds change the files `changed`; writes the shared pack into `objects`
    /// unless `written` says an earlier run wrote it there whole.
    pub(crate) fn new(
        repo: &gix::Repository,
        commit: ObjectId,
        tree: ObjectId,
        changed: BTreeSet<String>,
        (objects, written): (&Path, bool),
        max_object_bytes: u64,
    ) -> Result<ReviewCommits, CalibrateError> {
        let git = |operation: &'static str| move |e| CalibrateError::git(operation, e);
        let found = retrying(|| repo.find_commit(commit)).map_err(git("read the commit"))?;
        let raw = found.data.clone();
        let first_parent = found.parent_ids().next().map(|id| id.detach());
        // The original trees of every directory above a changed file.
        let mut trees = BTreeMap::new();
        let wanted: BTreeSet<&str> = changed.iter().flat_map(|path| directories_above(path)).collect();
        let mut pending = vec![(String::new(), tree)];
        while let Some((path, id)) = pending.pop() {
            let found = retrying(|| repo.find_tree(id)).map_err(git("read a tree"))?;
            let decoded = found.decode().map_err(git("decode a tree"))?;
            for entry in &decoded.entries {
                if !entry.mode.is_tree() {
                    continue;
                }
                let name = String::from_utf8_lossy(entry.filename);
                let child = if path.is_empty() { name.into_owned() } else { format!("{path}/{name}") };
                if wanted.contains(child.as_str()) {
                    pending.push((child, entry.oid.to_owned()));
                }
            }
            trees.insert(path, (id, found.data.clone()));
        }
        if !written {
            let excluded_blobs: BTreeSet<&str> = changed.iter().map(String::as_str).collect();
            let shared = crate::objects::Shared {
                first_parent,
                tree,
                on_path: &trees.keys().map(String::as_str).collect(),
                changed: &excluded_blobs,
            };
            write_store(repo, shared, objects, max_object_bytes)?;
        }
        let index = repo
            .index_from_tree(&tree)
            .map_err(|e| CalibrateError::git("build the index of the commit", e))?;
        Ok(ReviewCommits { commit: raw, first_parent, changed, trees, index, objects: objects.to_path_buf() })
    }

    /// Every file any round changes.
    pub(crate) fn changed(&self) -> &BTreeSet<String> {
        &self.changed
    }

    /// The `.git` of a round whose changed files hold `files` (every path of
    /// [`changed`](Self::changed), with its bytes in this round).
    pub(crate) fn round(&self, files: &BTreeMap<String, Vec<u8>>) -> Result<RoundGit, CalibrateError> {
        let mut objects: Vec<(ObjectId, gix::object::Kind, Vec<u8>)> = Vec::new();
        // New ids by path: the round's blobs, then each tree above them, deepest first.
        let mut ids: HashMap<String, ObjectId> = HashMap::new();
        for path in &self.changed {
            let bytes = files.get(path).ok_or_else(|| {
                CalibrateError::io(
                    "write the commit under review for",
                    path,
                    std::io::Error::other("the round does not say what the file holds"),
                )
            })?;
            let id = hash(gix::object::Kind::Blob, bytes)?;
            ids.insert(path.clone(), id);
            objects.push((id, gix::object::Kind::Blob, bytes.clone()));
        }
        let mut directories: Vec<&String> = self.trees.keys().collect();
        directories.sort_by_key(|path| {
            std::cmp::Reverse(if path.is_empty() { 0 } else { path.matches('/').count() + 1 })
        });
        for directory in directories {
            let (_, raw) = &self.trees[directory];
            let replaced = replace_entries(raw, |name| {
                let path = if directory.is_empty() { name.to_owned() } else { format!("{directory}/{name}") };
                ids.get(&path).copied()
            })
            .map_err(|reason| CalibrateError::git("rewrite a tree of the commit", reason))?;
            let id = hash(gix::object::Kind::Tree, &replaced)?;
            ids.insert(directory.clone(), id);
            objects.push((id, gix::object::Kind::Tree, replaced));
        }
        let root = ids.get("").copied().ok_or_else(|| {
            CalibrateError::git("rewrite the tree of the commit", "no root tree was rewritten")
        })?;
        let commit = rewrite_commit(&self.commit, root, self.first_parent)
            .map_err(|reason| CalibrateError::git("rewrite the commit", reason))?;
        let head = hash(gix::object::Kind::Commit, &commit)?;
        objects.push((head, gix::object::Kind::Commit, commit));

        let mut index = self.index.clone();
        for path in &self.changed {
            let position = index.entry_index_by_path(path.as_str().into()).map_err(|_| {
                CalibrateError::git("update the index of the commit", format!("{path} is not in the index"))
            })?;
            index.entries_mut()[position].id = ids[path];
        }
        let mut index_bytes = Vec::new();
        index
            .write_to(&mut index_bytes, gix::index::write::Options::default())
            .map_err(|e| CalibrateError::git("write the index of the commit", e))?;

        let mut git_files: Vec<GitFile> = vec![
            ("HEAD".into(), format!("{head}\n").into_bytes()),
            (
                "config".into(),
                b"[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n"
                    .to_vec(),
            ),
            ("objects/info/alternates".into(), {
                let mut line = self.objects.as_os_str().as_encoded_bytes().to_vec();
                line.push(b'\n');
                line
            }),
            ("index".into(), index_bytes),
        ];
        if let Some(parent) = self.first_parent {
            git_files.push(("shallow".into(), format!("{parent}\n").into_bytes()));
        }
        let mut compressor = crate::objects::compressor();
        let mut seen = BTreeSet::new();
        for (id, kind, data) in objects {
            if !seen.insert(id) {
                continue;
            }
            let hex = id.to_hex().to_string();
            let mut framed = format!("{} {}\0", kind, data.len()).into_bytes();
            framed.extend_from_slice(&data);
            let mut compressed = Vec::new();
            crate::objects::deflate(&mut compressor, &framed, &mut compressed)
                .map_err(|e| CalibrateError::io("compress an object of", "the commit under review", e))?;
            git_files.push((format!("objects/{}/{}", &hex[..2], &hex[2..]), compressed));
        }
        let directories = ["objects/info", "objects/pack", "refs/heads", "refs/tags"]
            .into_iter()
            .map(str::to_owned)
            .collect();
        Ok(RoundGit { head, directories, files: git_files })
    }
}

/// Writes the shared pack into `objects` (the `objects` directory of a store directory), whole
/// or not at all: into a directory beside the store first, renamed into place once complete,
/// so that a run that stops half way, or two runs writing the same store at once, never leave
/// a store that looks whole and is not.
fn write_store(
    repo: &gix::Repository,
    shared: crate::objects::Shared<'_>,
    objects: &Path,
    max_object_bytes: u64,
) -> Result<(), CalibrateError> {
    let store = objects.parent().unwrap_or(objects);
    let beside = store.parent().unwrap_or(store);
    std::fs::create_dir_all(beside).map_err(|e| CalibrateError::io("create", beside, e))?;
    // A staging directory of this call's own: runs (and a suite's units in one process) may
    // write the same store at once.
    let staging = tempfile::Builder::new()
        .prefix(".staging-")
        .tempdir_in(beside)
        .map_err(|e| CalibrateError::io("create a directory in", beside, e))?
        .keep();
    // Consecutive commits share almost every object: the stores written before lend theirs.
    let donors: Vec<crate::donor::Donor> =
        crate::donor::beside(store).iter().filter_map(|objects| crate::donor::Donor::open(objects)).collect();
    crate::objects::write_pack(repo, shared, &staging.join("objects"), max_object_bytes, &donors)?;
    crate::cache::pack_written(&staging.join("objects"))
        .map_err(|e| CalibrateError::io("write", &staging, e))?;
    match std::fs::rename(&staging, store) {
        Ok(()) => Ok(()),
        // Another run wrote the same store meanwhile: theirs is as good.
        Err(_) if store.join("complete").exists() => {
            let _ = crate::beneath::remove_path(&staging);
            Ok(())
        }
        Err(error) => Err(CalibrateError::io("write", store, error)),
    }
}

/// The id of the shared object store of the checkouts of `commit` whose rounds change
/// `changed` (files past `max_object_bytes` are refused, so the limit is part of it).
pub(crate) fn store_id(commit: &str, changed: &BTreeSet<String>, max_object_bytes: u64) -> String {
    use sha2::{Digest, Sha256};
    let mut hasher = Sha256::new();
    hasher.update(commit.as_bytes());
    hasher.update(max_object_bytes.to_le_bytes());
    for path in changed {
        hasher.update(b"\0");
        hasher.update(path.as_bytes());
    }
    hasher.finalize().iter().take(16).map(|byte| format!("{byte:02x}")).collect()
}

/// The SHA-1 id of an object of `kind` holding `data`.
fn hash(kind: gix::object::Kind, data: &[u8]) -> Result<ObjectId, CalibrateError> {
    gix::objs::compute_hash(gix::hash::Kind::Sha1, kind, data)
        .map_err(|e| CalibrateError::git("hash an object of the commit under review", e))
}

/// A raw tree object (entries of `MODE NAME\0ID`) with the id of each entry for which
/// `replacement` gives one replaced; every other byte as it was.
fn replace_entries(raw: &[u8], replacement: impl Fn(&str) -> Option<ObjectId>) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(raw.len());
    let mut rest = raw;
    while !rest.is_empty() {
        let nul = rest.iter().position(|byte| *byte == 0).ok_or("a tree entry without its name's end")?;
        let header = &rest[..nul];
        let space = header.iter().position(|byte| *byte == b' ').ok_or("a tree entry without a mode")?;
        let name = String::from_utf8_lossy(&header[space + 1..]);
        let id_end = nul + 1 + 20;
        let id = rest.get(nul + 1..id_end).ok_or("a tree entry cut short")?;
        out.extend_from_slice(&rest[..=nul]);
        match replacement(&name) {
            Some(new) => out.extend_from_slice(new.as_bytes()),
            None => out.extend_from_slice(id),
        }
        rest = &rest[id_end..];
    }
    Ok(out)
}

/// A raw commit object with its tree replaced by `tree`, its parents by `parent` alone, and
/// its signatures dropped (they would not verify); author, committer, encoding and message
/// byte for byte as they were.
fn rewrite_commit(raw: &[u8], tree: ObjectId, parent: Option<ObjectId>) -> Result<Vec<u8>, String> {
    let end = raw
        .windows(2)
        .position(|pair| pair == b"\n\n")
        .map(|at| at + 1)
        .ok_or("a commit without a message")?;
    let (headers, message) = raw.split_at(end);
    let mut out = Vec::with_capacity(raw.len());
    out.extend_from_slice(format!("tree {tree}\n").as_bytes());
    if let Some(parent) = parent {
        out.extend_from_slice(format!("parent {parent}\n").as_bytes());
    }
    let mut dropping = false;
    for line in headers.split_inclusive(|byte| *byte == b'\n') {
        if line.starts_with(b" ") {
            // A continuation of the header before it.
            if !dropping {
                out.extend_from_slice(line);
            }
            continue;
        }
        let key = line.split(|byte| *byte == b' ').next().unwrap_or_default();
        dropping = matches!(key, b"tree" | b"parent" | b"gpgsig" | b"gpgsig-sha256" | b"mergetag");
        if !dropping {
            out.extend_from_slice(line);
        }
    }
    out.extend_from_slice(message);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rewritten_commit_keeps_everything_but_its_tree_parents_and_signatures() {
        let raw = b"tree 1111111111111111111111111111111111111111\nparent 2222222222222222222222222222222222222222\nparent 3333333333333333333333333333333333333333\nauthor A <a@b> 1 +0000\ncommitter C <c@d> 2 +0100\nencoding latin1\ngpgsig -----BEGIN PGP SIGNATURE-----\n \n abc\n -----END PGP SIGNATURE-----\n\nsubject\n\nbody\n";
        let tree = ObjectId::from_hex(b"4444444444444444444444444444444444444444").unwrap();
        let parent = ObjectId::from_hex(b"2222222222222222222222222222222222222222").unwrap();
        let out = rewrite_commit(raw, tree, Some(parent)).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "tree 4444444444444444444444444444444444444444\nparent 2222222222222222222222222222222222222222\nauthor A <a@b> 1 +0000\ncommitter C <c@d> 2 +0100\nencoding latin1\n\nsubject\n\nbody\n"
        );
        let root = rewrite_commit(b"tree 1111111111111111111111111111111111111111\nauthor A <a@b> 1 +0000\ncommitter A <a@b> 1 +0000\n\nm\n", tree, None).unwrap();
        assert!(root.starts_with(b"tree 4444444444444444444444444444444444444444\nauthor"));
        assert!(rewrite_commit(b"tree x", tree, None).is_err());
    }

    #[test]
    fn a_tree_keeps_its_bytes_but_the_replaced_ids() {
        let a = ObjectId::from_hex(b"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa").unwrap();
        let b = ObjectId::from_hex(b"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb").unwrap();
        let c = ObjectId::from_hex(b"cccccccccccccccccccccccccccccccccccccccc").unwrap();
        let mut raw = b"100644 a.rs\0".to_vec();
        raw.extend_from_slice(a.as_bytes());
        raw.extend_from_slice(b"40000 src\0");
        raw.extend_from_slice(b.as_bytes());
        let out = replace_entries(&raw, |name| (name == "src").then_some(c)).unwrap();
        let mut expected = b"100644 a.rs\0".to_vec();
        expected.extend_from_slice(a.as_bytes());
        expected.extend_from_slice(b"40000 src\0");
        expected.extend_from_slice(c.as_bytes());
        assert_eq!(out, expected);
        assert!(replace_entries(&raw[..raw.len() - 3], |_| None).is_err());
        assert!(replace_entries(b"100644 x", |_| None).is_err());
    }

    #[test]
    fn the_directories_above_a_path_start_at_the_root() {
        assert_eq!(directories_above("a/b/c.rs").collect::<Vec<_>>(), ["", "a", "a/b"]);
        assert_eq!(directories_above("c.rs").collect::<Vec<_>>(), [""]);
    }
}
