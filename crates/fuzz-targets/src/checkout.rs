//! The `checkout` target: a commit whose trees are made from the fuzzer's bytes (any names,
//! modes, duplicates, links, gitlinks, in any order) is checked out the way a review's
//! checkout is, twice; whatever happens, nothing is created, changed or removed outside the
//! checkout's directory.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Reads the fuzzer's bytes one at a time.
struct Bytes<'a>(&'a [u8]);

impl Bytes<'_> {
    fn byte(&mut self) -> Option<u8> {
        let (first, rest) = self.0.split_first()?;
        self.0 = rest;
        Some(*first)
    }

    fn take(&mut self, count: usize) -> Vec<u8> {
        let count = count.min(self.0.len());
        let (taken, rest) = self.0.split_at(count);
        self.0 = rest;
        taken.to_vec()
    }
}

/// A loose object written into the bare repository `git`; its id.
fn object(git: &Path, kind: gix::object::Kind, data: &[u8]) -> gix::ObjectId {
    let id = gix::objs::compute_hash(gix::hash::Kind::Sha1, kind, data).expect("SHA-1 hashes");
    let hex = id.to_hex().to_string();
    let dir = git.join("objects").join(&hex[..2]);
    std::fs::create_dir_all(&dir).expect("the object directory is made");
    let mut framed = format!("{kind} {}\0", data.len()).into_bytes();
    framed.extend_from_slice(data);
    let mut out = gix::zlib::stream::deflate::Write::new(Vec::new(), gix::zlib::Compression::BEST_SPEED);
    out.write_all(&framed).expect("deflates");
    out.flush().expect("deflates");
    std::fs::write(dir.join(&hex[2..]), out.into_inner()).expect("the object is written");
    id
}

/// A tree made from the bytes (at most `depth` levels below it); its id.
fn tree(git: &Path, bytes: &mut Bytes<'_>, depth: usize) -> gix::ObjectId {
    let mut data = Vec::new();
    let mut last_name: Vec<u8> = b"a".to_vec();
    let count = bytes.byte().map_or(0, |count| count % 8);
    for _ in 0..count {
        let Some(kind) = bytes.byte() else { break };
        let name = match bytes.byte() {
            // Often the name before: duplicates of every kind.
            Some(length) if length >= 200 => last_name.clone(),
            Some(length) => {
                bytes.take(usize::from(length % 12)).into_iter().filter(|byte| *byte != 0).collect()
            }
            None => break,
        };
        last_name = name.clone();
        let (mode, id): (&[u8], gix::ObjectId) = match kind % 7 {
            0 => (b"100644", object(git, gix::object::Kind::Blob, &bytes.take(usize::from(kind / 7)))),
            1 => (b"100755", object(git, gix::object::Kind::Blob, b"#!/bin/sh\n")),
            2 => {
                // A link: to `..`s and names, or to an absolute path.
                let target = bytes.take(usize::from(kind / 7 % 24));
                (b"120000", object(git, gix::object::Kind::Blob, &target))
            }
            3 if depth > 0 => (b"40000", tree(git, bytes, depth - 1)),
            4 => (b"160000", gix::ObjectId::from_bytes_or_panic(&[kind; 20])),
            5 => {
                // An odd mode, as written in the tree.
                let odd: &[u8] = match kind / 7 % 5 {
                    0 => b"100664",
                    1 => b"644",
                    2 => b"40755",
                    3 => b"120777",
                    _ => b"0",
                };
                (odd, object(git, gix::object::Kind::Blob, b"odd\n"))
            }
            _ => (b"40000", object(git, gix::object::Kind::Tree, b"")),
        };
        data.extend_from_slice(mode);
        data.push(b' ');
        data.extend_from_slice(&name);
        data.push(0);
        data.extend_from_slice(id.as_bytes());
    }
    object(git, gix::object::Kind::Tree, &data)
}

/// Every path beneath `dir` with what it holds (links not followed).
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut found = BTreeMap::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(at) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&at) else { continue };
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(meta) = std::fs::symlink_metadata(&path) else { continue };
            let content = if meta.is_dir() {
                pending.push(path.clone());
                b"/".to_vec()
            } else if meta.file_type().is_symlink() {
                std::fs::read_link(&path).map(|t| t.into_os_string().into_encoded_bytes()).unwrap_or_default()
            } else {
                std::fs::read(&path).unwrap_or_default()
            };
            found.insert(path, content);
        }
    }
    found
}

/// The target: see the module's docs.
pub fn checkout(data: &[u8]) {
    let Ok(place) = tempfile::tempdir() else { panic!("no temporary directory") };
    // The repository, the directory the checkout goes into, and one beside them that links
    // in the trees may point at (`../../../outside`, `../../outside`, ...).
    let repo = place.path().join("repo");
    let git = repo.join(".git");
    let into = place.path().join("checkout");
    let outside = place.path().join("outside");
    for dir in [git.join("objects"), git.join("refs/heads"), into.clone(), outside.clone()] {
        std::fs::create_dir_all(dir).expect("the directories are made");
    }
    std::fs::write(outside.join("keep"), b"keep").expect("written");
    std::fs::write(git.join("HEAD"), b"ref: refs/heads/main\n").expect("written");
    std::fs::write(git.join("config"), b"[core]\n\trepositoryformatversion = 0\n\tbare = false\n")
        .expect("written");
    let mut bytes = Bytes(data);
    let root = tree(&git, &mut bytes, 4);
    let commit = format!("tree {root}\nauthor a <a@b> 1 +0000\ncommitter a <a@b> 1 +0000\n\nfuzz\n");
    let commit = object(&git, gix::object::Kind::Commit, commit.as_bytes());
    std::fs::write(git.join("refs/heads/main"), format!("{commit}\n")).expect("written");

    let before_repo = snapshot(&repo);
    let before_outside = snapshot(&outside);
    let limits = revcal_calibrate::CheckoutLimits { max_file_bytes: 1 << 20, max_checkout_bytes: 8 << 20 };
    for _ in 0..2 {
        let _ = revcal_calibrate::write_checkout(&repo, "HEAD", &into, limits);
    }
    assert_eq!(snapshot(&outside), before_outside, "something was written outside the checkout");
    assert_eq!(snapshot(&repo), before_repo, "the repository was written");
    let mut top: Vec<_> =
        std::fs::read_dir(place.path()).expect("listed").flatten().map(|entry| entry.file_name()).collect();
    top.sort();
    assert_eq!(top, ["checkout", "outside", "repo"], "something was created beside the checkout");
}
