//! The buffer mapping table: which buffer holds which page.
//!
//! 128 partitions, each a `hashbrown` table of `(tag, buffer id)` under its
//! own reader-writer lock, chosen by bits 40..47 of the tag's hash (hashbrown
//! itself uses the low bits for the bucket and the top 7 for its control
//! bytes, so the three uses do not overlap).
//!
//! A partition starts with room for at most [`INITIAL_PER_PARTITION`]
//! entries and grows as buffers are tagged (hashbrown doubles it under the
//! exclusive lock), instead of being sized for the whole pool up front: with
//! 6 GB of buffers that sizing wrote each partition's control bytes at
//! start-up and made every process fault in ~48 MiB of fresh memory, most
//! of it never used by a process that reads a few thousand pages.
//!
//! # Locking rules (as PostgreSQL's `BufMappingLock` partitions)
//!
//! - Looking a tag up and pinning the buffer found happen under the
//!   partition's shared lock, so the buffer cannot be retagged in between.
//! - Inserting or removing an entry takes the exclusive lock. A thread that
//!   retags a buffer holds the exclusive locks of both the old and the new
//!   tag's partitions, taken in partition order (no deadlock).
//! - A partition lock is never taken while holding a header lock; header
//!   locks may be taken while holding partition locks.

use hashbrown::HashTable;
use parking_lot::{RwLock, RwLockReadGuard, RwLockWriteGuard};

use super::desc::BufferTag;

/// Number of partitions (a power of two).
pub(crate) const PARTITIONS: usize = 128;

/// One partition, on its own cache line(s).
#[repr(align(64))]
pub(crate) struct Partition {
    /// The entries of this partition.
    pub(crate) map: RwLock<HashTable<(BufferTag, u32)>>,
}

/// Entries a partition has room for before its first growth: 32,768
/// buffers (256 MiB of pages) over the 128 partitions.
pub(crate) const INITIAL_PER_PARTITION: usize = 256;

/// The partitioned mapping table.
pub(crate) struct MappingTable {
    /// The partitions.
    parts: Box<[Partition]>,
}

impl MappingTable {
    /// A table for up to `nbuffers` entries (room for a few of them at
    /// first; see the module doc).
    pub(crate) fn new(nbuffers: usize) -> MappingTable {
        let per = ((nbuffers / PARTITIONS + 1) * 2).min(INITIAL_PER_PARTITION);
        MappingTable {
            parts: (0..PARTITIONS)
                .map(|_| Partition {
                    map: RwLock::new(HashTable::with_capacity(per)),
                })
                .collect(),
        }
    }

    /// The partition number of a tag hash.
    #[inline]
    pub(crate) fn partition_of(hash: u64) -> usize {
        ((hash >> 40) as usize) & (PARTITIONS - 1)
    }

    /// Shared lock on partition `p`.
    #[inline]
    pub(crate) fn read(&self, p: usize) -> RwLockReadGuard<'_, HashTable<(BufferTag, u32)>> {
        self.parts[p].map.read()
    }

    /// Exclusive lock on partition `p`.
    #[inline]
    pub(crate) fn write(&self, p: usize) -> RwLockWriteGuard<'_, HashTable<(BufferTag, u32)>> {
        self.parts[p].map.write()
    }
}

/// The buffer holding `tag`, if any.
#[inline]
pub(crate) fn lookup(map: &HashTable<(BufferTag, u32)>, hash: u64, tag: &BufferTag) -> Option<u32> {
    map.find(hash, |e| e.0 == *tag).map(|e| e.1)
}

/// Makes room for one more entry, so that [`insert`] does not grow the
/// partition (called before a buffer header is locked: a growth rehashes
/// the partition, which must not happen under a header lock).
#[inline]
pub(crate) fn reserve_one(map: &mut HashTable<(BufferTag, u32)>) {
    map.reserve(1, |e| e.0.hash());
}

/// Records that buffer `id` holds `tag` (which must not be present).
pub(crate) fn insert(map: &mut HashTable<(BufferTag, u32)>, hash: u64, tag: BufferTag, id: u32) {
    map.insert_unique(hash, (tag, id), |e| e.0.hash());
}

/// Forgets `tag`; returns whether it was present.
pub(crate) fn remove(map: &mut HashTable<(BufferTag, u32)>, hash: u64, tag: &BufferTag) -> bool {
    match map.find_entry(hash, |e| e.0 == *tag) {
        Ok(entry) => {
            entry.remove();
            true
        }
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::super::{ForkNumber, RelFileNode};
    use super::*;

    #[test]
    fn insert_lookup_remove() {
        let t = MappingTable::new(16);
        let tag = BufferTag {
            rel: RelFileNode(3),
            fork: ForkNumber::Main,
            block: 9,
        };
        let h = tag.hash();
        let p = MappingTable::partition_of(h);
        assert_eq!(lookup(&t.read(p), h, &tag), None);
        insert(&mut t.write(p), h, tag, 5);
        assert_eq!(lookup(&t.read(p), h, &tag), Some(5));
        assert!(remove(&mut t.write(p), h, &tag));
        assert!(!remove(&mut t.write(p), h, &tag));
    }
}
