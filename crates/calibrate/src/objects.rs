//! The object store every checkout's git shares: one pack, written by revcal into the run
//! directory, holding the first parent of the commit under calibration with everything its
//! tree reaches, and the part of the commit's tree no review round changes (see
//! [`crate::review_commit`] for the rest); the parent is the history's end (git's `shallow`
//! file).
//!
//! The checkouts do not borrow the user's objects (`objects/info/alternates` into the user's
//! repository would do): git "freshens" an object it is asked to write when it finds it in an
//! alternate, by setting the file's modification time, so a reviewer's `git stash` or
//! `git commit` in its checkout would change files of the user's `.git`.

use crate::error::CalibrateError;
use crate::tree::retrying;
use gix::ObjectId;
use gix::zlib::stream::deflate::{Compress, FlushCompress};
use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::fs;
use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;

/// git's pack object types (gitformat-pack(5)).
fn type_code(kind: gix::object::Kind) -> u8 {
    match kind {
        gix::object::Kind::Commit => 1,
        gix::object::Kind::Tree => 2,
        gix::object::Kind::Blob => 3,
        gix::object::Kind::Tag => 4,
    }
}

/// The header of a packed object: its type and inflated size, 7 bits per byte after the
/// first 4, each byte but the last with its top bit set.
pub(crate) fn entry_header(kind: gix::object::Kind, size: u64) -> Vec<u8> {
    let mut header = Vec::with_capacity(10);
    let mut byte = (type_code(kind) << 4) | (size & 0x0f) as u8;
    let mut rest = size >> 4;
    while rest > 0 {
        header.push(byte | 0x80);
        byte = (rest & 0x7f) as u8;
        rest >>= 7;
    }
    header.push(byte);
    header
}

/// A SHA-1 over what is written through it (the pack's and the index's trailers).
struct Summed<W: Write> {
    inner: W,
    hasher: gix::hash::Hasher,
    written: u64,
}

impl<W: Write> Summed<W> {
    fn new(inner: W) -> Summed<W> {
        Summed { inner, hasher: gix::hash::hasher(gix::hash::Kind::Sha1), written: 0 }
    }

    fn put(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.hasher.update(bytes);
        self.written += bytes.len() as u64;
        self.inner.write_all(bytes)
    }

    /// Writes the checksum of everything written so far and gives it back.
    fn finish(mut self) -> std::io::Result<(W, ObjectId)> {
        let sum = self.hasher.try_finalize().map_err(std::io::Error::other)?;
        self.inner.write_all(sum.as_bytes())?;
        self.inner.flush()?;
        Ok((self.inner, sum))
    }
}

/// What the shared pack holds: the first parent with every object its tree reaches, and the
/// commit's tree without the trees above the files a round changes (`on_path`, `""` for the
/// root) and without those files' blobs (`changed`). An object that is also reached another
/// way (the parent holds the same file) is in.
pub(crate) struct Shared<'a> {
    /// The commit's first parent.
    pub(crate) first_parent: Option<ObjectId>,
    /// The commit's tree.
    pub(crate) tree: ObjectId,
    /// The directories above a changed file.
    pub(crate) on_path: &'a BTreeSet<&'a str>,
    /// The changed files.
    pub(crate) changed: &'a BTreeSet<&'a str>,
}

/// The ids of the objects of `shared`, in the order they are found.
fn objects_of(repo: &gix::Repository, shared: &Shared<'_>) -> Result<Vec<ObjectId>, CalibrateError> {
    let git = |operation: &'static str| move |e| CalibrateError::git(operation, e);
    let mut seen: HashSet<ObjectId> = HashSet::new();
    let mut order = Vec::new();
    // (tree, its path when it lies on the commit's side, where some entries are left out)
    let mut trees: Vec<(ObjectId, Option<String>)> = Vec::new();
    if let Some(parent) = shared.first_parent {
        let tree = retrying(|| repo.find_commit(parent))
            .map_err(git("read the parent commit"))?
            .tree_id()
            .map_err(git("read a commit's tree"))?;
        seen.insert(parent);
        order.push(parent);
        trees.push((tree.detach(), None));
    }
    trees.push((shared.tree, Some(String::new())));
    while let Some((tree, path)) = trees.pop() {
        let on_path = path.as_deref().filter(|path| shared.on_path.contains(path));
        if on_path.is_none() {
            if !seen.insert(tree) {
                continue;
            }
            order.push(tree);
        }
        let found = retrying(|| repo.find_tree(tree)).map_err(git("read a tree"))?;
        let decoded = found.decode().map_err(git("decode a tree"))?;
        for entry in &decoded.entries {
            let id = entry.oid.to_owned();
            let child = on_path.map(|dir| {
                let name = String::from_utf8_lossy(entry.filename);
                if dir.is_empty() { name.into_owned() } else { format!("{dir}/{name}") }
            });
            if entry.mode.is_tree() {
                trees.push((id, child));
            } else if entry.mode.is_blob_or_symlink()
                && !child.as_deref().is_some_and(|child| shared.changed.contains(child))
                && seen.insert(id)
            {
                order.push(id);
            }
        }
    }
    Ok(order)
}

/// A compressor for objects: one for many, since setting one up zeroes a few hundred KiB.
pub(crate) fn compressor() -> Compress {
    Compress::new(gix::zlib::Compression::BEST_SPEED)
}

/// Writes `objects/pack/pack-*.{pack,idx}` under `objects` holding the objects of `shared`;
/// an object larger than `max_object_bytes` is refused without being read. An object one of
/// `donors` holds (checked) is copied from it instead of being read and compressed again.
pub(crate) fn write_pack(
    repo: &gix::Repository,
    shared: Shared<'_>,
    objects: &Path,
    max_object_bytes: u64,
    donors: &[crate::donor::Donor],
) -> Result<(), CalibrateError> {
    let ids = objects_of(repo, &shared)?;
    let packs = objects.join("pack");
    fs::create_dir_all(&packs).map_err(|e| CalibrateError::io("create", &packs, e))?;
    let staged = packs.join("tmp.pack");
    let failed = |e| CalibrateError::io("write", &staged, e);
    let file = fs::File::create(&staged).map_err(failed)?;
    let mut pack = Summed::new(std::io::BufWriter::with_capacity(1 << 20, file));
    pack.put(b"PACK").map_err(failed)?;
    pack.put(&2u32.to_be_bytes()).map_err(failed)?;
    let count = u32::try_from(ids.len())
        .map_err(|_| failed(std::io::Error::other("more objects than a pack holds")))?;
    pack.put(&count.to_be_bytes()).map_err(failed)?;
    // (id, offset, crc32) of each entry.
    let mut entries: Vec<(ObjectId, u64, u32)> = Vec::with_capacity(ids.len());
    let mut lent = 0usize;
    // Reading and compressing the objects (inflating them from the repository's packs, deltas
    // resolved, and deflating them again) is most of the time: it runs on worker threads, a
    // chunk of objects at a time, and this thread writes the chunks in order.
    let chunks: Vec<&[ObjectId]> = ids.chunks(OBJECTS_PER_CHUNK).collect();
    // Each worker opens the repository for itself, as this one was opened (a repository
    // handle is not shared between threads).
    let (git_dir, options) = (repo.git_dir().to_path_buf(), repo.open_options().clone());
    let next = AtomicUsize::new(0);
    let workers =
        std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get).min(MAX_PACKERS);
    std::thread::scope(|scope| -> Result<(), CalibrateError> {
        let (sender, receiver) =
            mpsc::sync_channel::<(usize, Result<Vec<Packed>, CalibrateError>)>(2 * workers);
        for _ in 0..workers {
            let sender = sender.clone();
            let (chunks, next, git_dir, options) = (&chunks, &next, &git_dir, &options);
            scope.spawn(move || {
                let repo = match gix::open_opts(git_dir, options.clone()) {
                    Ok(repo) => repo,
                    Err(error) => {
                        let _ =
                            sender.send((usize::MAX, Err(CalibrateError::git("open the repository", error))));
                        return;
                    }
                };
                let mut compressor = compressor();
                let mut inflate = gix::zlib::Inflate::default();
                loop {
                    let index = next.fetch_add(1, Ordering::SeqCst);
                    let Some(chunk) = chunks.get(index) else { break };
                    let packed = chunk
                        .iter()
                        .map(|id| {
                            let lent = donors
                                .iter()
                                .find_map(|donor| donor.entry(*id, max_object_bytes, &mut inflate));
                            match lent {
                                Some((header, compressed, crc)) => {
                                    Ok(Packed { id: *id, header, compressed, crc, lent: true })
                                }
                                None => pack_object(&repo, *id, max_object_bytes, &mut compressor),
                            }
                        })
                        .collect::<Result<Vec<_>, _>>();
                    // The writer is gone (it met an error): nothing more is wanted.
                    if sender.send((index, packed)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(sender);
        // The receiver goes with this closure, so that workers blocked on a full channel stop
        // when it returns early.
        let total = chunks.len();
        let mut write_all = |receiver: mpsc::Receiver<(usize, Result<Vec<Packed>, CalibrateError>)>| {
            let mut waiting: BTreeMap<usize, Vec<Packed>> = BTreeMap::new();
            for wanted in 0..total {
                while !waiting.contains_key(&wanted) {
                    let Ok((index, packed)) = receiver.recv() else {
                        return Err(failed(std::io::Error::other("a worker compressing objects stopped")));
                    };
                    waiting.insert(index, packed?);
                }
                for object in waiting.remove(&wanted).unwrap_or_default() {
                    lent += usize::from(object.lent);
                    entries.push((object.id, pack.written, object.crc));
                    pack.put(&object.header).map_err(failed)?;
                    pack.put(&object.compressed).map_err(failed)?;
                }
            }
            Ok(())
        };
        write_all(receiver)
    })?;
    let (_, checksum) = pack.finish().map_err(failed)?;
    entries.sort_by_key(|entry| entry.0);
    let name = format!("pack-{}", checksum.to_hex());
    write_index(&packs.join(format!("{name}.idx")), &entries, checksum)?;
    let final_pack = packs.join(format!("{name}.pack"));
    fs::rename(&staged, &final_pack).map_err(|e| CalibrateError::io("write", &final_pack, e))?;
    tracing::debug!(objects = entries.len(), lent, pack = %final_pack.display(), "object store of the checkouts written");
    Ok(())
}

/// Objects read and compressed by one worker at a time.
const OBJECTS_PER_CHUNK: usize = 256;
/// The most threads compressing objects.
const MAX_PACKERS: usize = 4;

/// One object as a pack entry: its header, its data compressed, and their CRC-32.
struct Packed {
    id: ObjectId,
    header: Vec<u8>,
    compressed: Vec<u8>,
    crc: u32,
    /// Copied from an earlier store.
    lent: bool,
}

/// Reads the object `id` of `repo` (refused above `max_object_bytes` without being read) and
/// makes its pack entry.
fn pack_object(
    repo: &gix::Repository,
    id: ObjectId,
    max_object_bytes: u64,
    compressor: &mut Compress,
) -> Result<Packed, CalibrateError> {
    crate::tree::check_object_size(repo, id, max_object_bytes)?;
    let object =
        retrying(|| repo.find_object(id)).map_err(|e| CalibrateError::git(format!("read object {id}"), e))?;
    let mut compressed = Vec::new();
    deflate(compressor, &object.data, &mut compressed)
        .map_err(|e| CalibrateError::git(format!("compress object {id}"), e))?;
    let header = entry_header(object.kind, object.data.len() as u64);
    let mut crc = crc32fast::Hasher::new();
    crc.update(&header);
    crc.update(&compressed);
    Ok(Packed { id, header, compressed, crc: crc.finalize(), lent: false })
}

/// `input` as one zlib stream in `out`, by `compressor` (reset first).
pub(crate) fn deflate(compressor: &mut Compress, input: &[u8], out: &mut Vec<u8>) -> std::io::Result<()> {
    compressor.reset();
    out.clear();
    let mut buffer = [0u8; 32 * 1024];
    let mut consumed = 0usize;
    loop {
        let (read, written) = (compressor.total_in(), compressor.total_out());
        let status = compressor
            .compress(&input[consumed..], &mut buffer, FlushCompress::Finish)
            .map_err(std::io::Error::other)?;
        consumed += usize::try_from(compressor.total_in() - read).map_err(std::io::Error::other)?;
        let produced = usize::try_from(compressor.total_out() - written).map_err(std::io::Error::other)?;
        out.extend_from_slice(&buffer[..produced]);
        match status {
            gix::zlib::Status::StreamEnd => return Ok(()),
            _ if produced == 0 && consumed >= input.len() && compressor.total_in() == read => {
                return Err(std::io::Error::other("the compressor made no progress"));
            }
            _ => {}
        }
    }
}

/// Writes a version 2 pack index (gitformat-pack(5)) of `entries`, sorted by id.
fn write_index(path: &Path, entries: &[(ObjectId, u64, u32)], pack: ObjectId) -> Result<(), CalibrateError> {
    let failed = |e| CalibrateError::io("write", path, e);
    let file = fs::File::create(path).map_err(failed)?;
    let mut index = Summed::new(std::io::BufWriter::new(file));
    let mut write = || -> std::io::Result<()> {
        index.put(&[0xff, b't', b'O', b'c'])?;
        index.put(&2u32.to_be_bytes())?;
        let mut fanout = [0u32; 256];
        for (id, _, _) in entries {
            fanout[usize::from(id.as_bytes()[0])] += 1;
        }
        let mut running = 0u32;
        for count in fanout {
            running += count;
            index.put(&running.to_be_bytes())?;
        }
        for (id, _, _) in entries {
            index.put(id.as_bytes())?;
        }
        for (_, _, crc) in entries {
            index.put(&crc.to_be_bytes())?;
        }
        // Offsets past 2^31 go into a table of 64-bit offsets, pointed to by index.
        let mut large = Vec::new();
        for (_, offset, _) in entries {
            match u32::try_from(*offset).ok().filter(|small| *small < 0x8000_0000) {
                Some(small) => index.put(&small.to_be_bytes())?,
                None => {
                    let position = u32::try_from(large.len()).map_err(std::io::Error::other)?;
                    index.put(&(position | 0x8000_0000).to_be_bytes())?;
                    large.push(*offset);
                }
            }
        }
        for offset in large {
            index.put(&offset.to_be_bytes())?;
        }
        index.put(pack.as_bytes())
    };
    write().map_err(failed)?;
    index.finish().map_err(failed)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_compressor_gives_a_whole_zlib_stream_per_object() {
        let mut compressor = Compress::new(gix::zlib::Compression::BEST_SPEED);
        let mut out = Vec::new();
        for input in [b"".to_vec(), b"hello hello hello".to_vec(), vec![7u8; 200_000]] {
            deflate(&mut compressor, &input, &mut out).unwrap();
            let mut inflated = vec![0u8; input.len() + 16];
            let mut state = gix::zlib::Decompress::new();
            let status = state.decompress(&out, &mut inflated, gix::zlib::FlushDecompress::Finish).unwrap();
            assert_eq!(status, gix::zlib::Status::StreamEnd);
            assert_eq!(&inflated[..state.total_out() as usize], &input[..]);
        }
    }

    #[test]
    fn entry_headers_carry_type_and_size_seven_bits_at_a_time() {
        assert_eq!(entry_header(gix::object::Kind::Blob, 5), vec![0x35]);
        assert_eq!(entry_header(gix::object::Kind::Commit, 16), vec![0x90, 0x01]);
        assert_eq!(entry_header(gix::object::Kind::Tree, 0x1234), vec![0xa4, 0xa3, 0x02]);
    }
}
