//! Object stores written before, lending their pack entries to a new one.
//!
//! Each commit's checkouts get an object store of exactly that commit's objects (see
//! [`crate::objects`]), so a suite over consecutive commits of one repository writes stores
//! that share almost every object. Compressing an object again is most of what writing a
//! store costs; an entry of an earlier store (a pack this module's writer made: every entry
//! whole, never a delta) can be copied as it is. The earlier store lies in the checkout cache
//! or the run directory, where another process may have changed it, so an entry is copied
//! only once its bytes are shown to be the object its id names (inflated and hashed); any
//! entry that is not is compressed afresh from the repository, as it would have been anyway.

use gix::ObjectId;
use std::path::{Path, PathBuf};

/// The most earlier stores one new store borrows from.
pub(crate) const MAX_DONORS: usize = 2;

/// The largest pack read whole into memory to lend from.
const MAX_DONOR_PACK_BYTES: u64 = 512 << 20;

/// The pack of an earlier object store, read into memory, and its index.
pub(crate) struct Donor {
    pack: Vec<u8>,
    /// Ids, sorted (the index's order), with the offset and CRC-32 of each entry.
    ids: Vec<ObjectId>,
    offsets: Vec<u64>,
    crcs: Vec<u32>,
    /// Every entry's offset, sorted: an entry ends where the next one starts.
    starts: Vec<u64>,
}

impl Donor {
    /// The store whose `objects` directory is `objects`, when it holds one pack this module
    /// can read; `None` otherwise (a donor is an optimisation, never required).
    pub(crate) fn open(objects: &Path) -> Option<Donor> {
        let packs = objects.join("pack");
        let mut indexes = std::fs::read_dir(&packs)
            .ok()?
            .flatten()
            .map(|entry| entry.path())
            .filter(|path| path.extension().is_some_and(|ext| ext == "idx"));
        let index = indexes.next()?;
        if indexes.next().is_some() {
            return None;
        }
        let pack_path = index.with_extension("pack");
        if std::fs::symlink_metadata(&pack_path).ok()?.len() > MAX_DONOR_PACK_BYTES {
            return None;
        }
        let pack = std::fs::read(&pack_path).ok()?;
        let index = std::fs::read(&index).ok()?;
        Donor::parse(pack, &index)
    }

    /// A donor of `pack` and its version 2 `index` (gitformat-pack(5)), checked to agree.
    fn parse(pack: Vec<u8>, index: &[u8]) -> Option<Donor> {
        let word = |at: usize| -> Option<u32> {
            Some(u32::from_be_bytes(index.get(at..at.checked_add(4)?)?.try_into().ok()?))
        };
        if index.get(..8)? != [0xff, b't', b'O', b'c', 0, 0, 0, 2] || pack.get(..4)? != b"PACK" {
            return None;
        }
        let count = usize::try_from(word(8 + 255 * 4)?).ok()?;
        let ids_at: usize = 8 + 256 * 4;
        let crcs_at = ids_at.checked_add(count.checked_mul(20)?)?;
        let offsets_at = crcs_at.checked_add(count.checked_mul(4)?)?;
        let large_at = offsets_at.checked_add(count.checked_mul(4)?)?;
        let mut ids = Vec::with_capacity(count);
        let (mut offsets, mut crcs) = (Vec::with_capacity(count), Vec::with_capacity(count));
        for n in 0..count {
            let at = ids_at + n * 20;
            ids.push(ObjectId::try_from(index.get(at..at + 20)?).ok()?);
            crcs.push(word(crcs_at + n * 4)?);
            let small = word(offsets_at + n * 4)?;
            let offset = if small & 0x8000_0000 == 0 {
                u64::from(small)
            } else {
                let at = large_at.checked_add(usize::try_from(small & 0x7fff_ffff).ok()?.checked_mul(8)?)?;
                u64::from_be_bytes(index.get(at..at.checked_add(8)?)?.try_into().ok()?)
            };
            offsets.push(offset);
        }
        if ids.windows(2).any(|pair| pair[0] >= pair[1]) {
            return None;
        }
        let mut starts = offsets.clone();
        starts.sort_unstable();
        Some(Donor { pack, ids, offsets, crcs, starts })
    }

    /// The pack entry of `id` (header, compressed data, CRC-32 of both), when this store holds
    /// it whole, its CRC agrees, it inflates to no more than `max_object_bytes` and hashes to
    /// `id`.
    pub(crate) fn entry(
        &self,
        id: ObjectId,
        max_object_bytes: u64,
        inflate: &mut gix::zlib::Inflate,
    ) -> Option<(Vec<u8>, Vec<u8>, u32)> {
        let at = self.ids.binary_search(&id).ok()?;
        let start = self.offsets[at];
        let next = self.starts.partition_point(|offset| *offset <= start);
        // The pack ends with the 20-byte checksum of what precedes it.
        let end = match self.starts.get(next) {
            Some(end) => *end,
            None => u64::try_from(self.pack.len().checked_sub(20)?).ok()?,
        };
        let bytes = self.pack.get(usize::try_from(start).ok()?..usize::try_from(end).ok()?)?;
        let mut crc = crc32fast::Hasher::new();
        crc.update(bytes);
        if crc.finalize() != self.crcs[at] {
            return None;
        }
        let (kind, size, header) = entry_header(bytes)?;
        if size > max_object_bytes {
            return None;
        }
        let mut data = vec![0u8; usize::try_from(size).ok()?];
        inflate.reset();
        let compressed = &bytes[header..];
        let (status, read, written) = inflate.once(compressed, &mut data).ok()?;
        if status != gix::zlib::Status::StreamEnd || read != compressed.len() || written != data.len() {
            return None;
        }
        let hashed = gix::objs::compute_hash(gix::hash::Kind::Sha1, kind, &data).ok()?;
        (hashed == id).then(|| (bytes[..header].to_vec(), compressed.to_vec(), self.crcs[at]))
    }
}

/// The kind and inflated size of a whole (not deltified) pack entry, and its header's length.
fn entry_header(bytes: &[u8]) -> Option<(gix::object::Kind, u64, usize)> {
    let first = *bytes.first()?;
    let kind = match (first >> 4) & 0x07 {
        1 => gix::object::Kind::Commit,
        2 => gix::object::Kind::Tree,
        3 => gix::object::Kind::Blob,
        4 => gix::object::Kind::Tag,
        _ => return None,
    };
    let mut size = u64::from(first & 0x0f);
    let mut shift = 4u32;
    let mut at = 0usize;
    let mut byte = first;
    while byte & 0x80 != 0 {
        at += 1;
        byte = *bytes.get(at)?;
        if shift > 57 {
            return None;
        }
        size |= u64::from(byte & 0x7f) << shift;
        shift += 7;
    }
    Some((kind, size, at + 1))
}

/// The `objects` directories of the complete stores beside the store directory `store` (in
/// the same directory: the repository's `packs/` in the checkout cache, or the run
/// directory), the most recently completed first, at most [`MAX_DONORS`].
pub(crate) fn beside(store: &Path) -> Vec<PathBuf> {
    let Some(parent) = store.parent() else { return Vec::new() };
    let Ok(entries) = std::fs::read_dir(parent) else { return Vec::new() };
    let mut complete: Vec<(std::time::SystemTime, PathBuf)> = entries
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path != store)
        .filter_map(|path| {
            let done = std::fs::symlink_metadata(path.join("complete")).ok()?.modified().ok()?;
            Some((done, path.join("objects")))
        })
        .collect();
    complete.sort_by_key(|store| std::cmp::Reverse(store.0));
    complete.into_iter().take(MAX_DONORS).map(|(_, objects)| objects).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pack of one blob entry holding `content`, and its index naming it `claimed`.
    fn one_entry(content: &[u8], claimed: ObjectId) -> (Vec<u8>, Vec<u8>) {
        let mut compressed = Vec::new();
        crate::objects::deflate(&mut crate::objects::compressor(), content, &mut compressed).unwrap();
        let mut entry = crate::objects::entry_header(gix::object::Kind::Blob, content.len() as u64);
        entry.extend_from_slice(&compressed);
        let mut pack = b"PACK".to_vec();
        pack.extend_from_slice(&2u32.to_be_bytes());
        pack.extend_from_slice(&1u32.to_be_bytes());
        pack.extend_from_slice(&entry);
        pack.extend_from_slice(&[0u8; 20]);
        let mut index = vec![0xff, b't', b'O', b'c', 0, 0, 0, 2];
        for byte in 0..=255u8 {
            let count = u32::from(byte >= claimed.as_bytes()[0]);
            index.extend_from_slice(&count.to_be_bytes());
        }
        index.extend_from_slice(claimed.as_bytes());
        let mut crc = crc32fast::Hasher::new();
        crc.update(&entry);
        index.extend_from_slice(&crc.finalize().to_be_bytes());
        index.extend_from_slice(&12u32.to_be_bytes());
        (pack, index)
    }

    fn blob_id(content: &[u8]) -> ObjectId {
        gix::objs::compute_hash(gix::hash::Kind::Sha1, gix::object::Kind::Blob, content).unwrap()
    }

    #[test]
    fn an_entry_is_lent_only_when_it_is_the_object_its_id_names() {
        let content = b"fn main() {}\n".repeat(40);
        let id = blob_id(&content);
        let mut inflate = gix::zlib::Inflate::default();
        let (pack, index) = one_entry(&content, id);
        let donor = Donor::parse(pack.clone(), &index).expect("a pack this module writes");
        let (header, compressed, _) = donor.entry(id, 1 << 20, &mut inflate).expect("lent");
        assert_eq!([header, compressed].concat(), pack[12..pack.len() - 20]);
        // Not held; above the size limit.
        assert!(donor.entry(blob_id(b"other"), 1 << 20, &mut inflate).is_none());
        assert!(donor.entry(id, 10, &mut inflate).is_none());
        // Its bytes changed: the CRC disagrees.
        let mut changed = pack.clone();
        changed[30] ^= 1;
        assert!(Donor::parse(changed, &index).unwrap().entry(id, 1 << 20, &mut inflate).is_none());
        // Another object's bytes under this id, CRC and all: the hash disagrees.
        let (forged, forged_index) = one_entry(b"print('pwned')\n", id);
        assert!(Donor::parse(forged, &forged_index).unwrap().entry(id, 1 << 20, &mut inflate).is_none());
        // Not an index, or cut short: no donor.
        assert!(Donor::parse(pack.clone(), b"not an index").is_none());
        assert!(Donor::parse(pack, &index[..index.len() - 3]).is_none());
    }
}
