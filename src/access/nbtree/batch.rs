//! Batched insertion: many leaf keys, sorted, put in with one descent per
//! leaf they land on instead of one per key (COPY and INSERT ... SELECT
//! into an indexed table collect their entries and hand them over sorted).
//!
//! [`BTree::insert_sorted`] descends to the leaf of the first key, locks it
//! exclusively and inserts that key and every following one that belongs
//! on the same page (below its high key, or any key on the rightmost leaf)
//! while they fit, one `InsertLeaf` record each, exactly as single inserts
//! would log them. A key that does not fit, or a leaf with an unfinished
//! split, goes through [`BTree::insert_key`] (which splits or finishes the
//! split); the next key descends again. Locking is that of a single insert
//! (one leaf lock, taken after the descent, no lock coupling), so readers
//! and other inserters see a valid tree between any two keys. The result
//! is the same set of entries as inserting the keys one by one; only page
//! boundaries may differ.

use super::btpage as bp;
use super::tree::{leaf_position, past_high_key, BTree, Descent, Target};
use super::wal::BtRecord;
use super::{keys, Tid};
use crate::err;
use crate::error::Result;
use crate::storage::page;

impl BTree {
    /// Inserts full leaf keys ([`keys::leaf_key`]), given in ascending
    /// order, descending once per leaf they land on (see the module doc).
    pub fn insert_sorted<K: AsRef<[u8]>>(&self, sorted: &[K]) -> Result<()> {
        let mut i = 0;
        while i < sorted.len() {
            let first = sorted[i].as_ref();
            if super::rowsize::may_exceed(self.desc(), first.len()) {
                // The single insert checks the size (and fails or inserts).
                self.insert_key(first)?;
                i += 1;
                continue;
            }
            let buf = match self.descend(&Target::AtOrAfter(first), None)? {
                Descent::Leaf(b) => b,
                Descent::Restart => continue,
            };
            let mut g = buf.write();
            let o = bp::opaque(&g);
            let mut done = 0;
            if !o.incomplete_split() {
                while let Some(key) = sorted.get(i).map(AsRef::as_ref) {
                    let t = Target::AtOrAfter(key);
                    if super::rowsize::may_exceed(self.desc(), key.len())
                        || past_high_key(&g, &o, &t)?
                        || bp::item_space(key.len()) > bp::free_space(&g)
                    {
                        break;
                    }
                    let off = leaf_position(&g, &o, &t)?;
                    if off <= page::max_offset(&g) && bp::item(&g, off)? == key {
                        return Err(duplicate_entry(keys::tid_of(key), self));
                    }
                    let rec = BtRecord::InsertLeaf {
                        offset: off,
                        tuple: key.to_vec(),
                    };
                    self.log_apply(&mut g, &rec)?;
                    done += 1;
                    i += 1;
                }
            }
            drop(g);
            if done == 0 {
                // Full, moved right, or an unfinished split: the single
                // insert splits, moves right or finishes it.
                self.insert_key(first)?;
                i += 1;
            }
        }
        Ok(())
    }
}

fn duplicate_entry(tid: Tid, tree: &BTree) -> crate::error::Error {
    err!(
        InternalError,
        "duplicate entry for heap tuple {} in index \"{}\"",
        bp::tid_text(tid),
        tree.rel()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access::nbtree::check::bt_index_check;
    use crate::access::nbtree::{IndexDesc, KeyColumn};
    use crate::storage::{BufferPool, RelFileNode};
    use crate::types::{DataType, Value};

    fn tree(dir: &tempfile::TempDir) -> BTree {
        let pool = BufferPool::open(dir.path(), 2000).expect("pool");
        let desc = IndexDesc::new(vec![KeyColumn::asc(DataType::Int8)]);
        BTree::create(pool, RelFileNode(700), desc, None).expect("create")
    }

    fn all_keys(t: &BTree) -> Vec<Vec<u8>> {
        use crate::access::nbtree::{Direction, ScanPos};
        use std::ops::Bound;
        let mut pos = ScanPos::new(Bound::Unbounded, Bound::Unbounded, Direction::Forward);
        let mut out = Vec::new();
        while let Some(k) = pos.next_key(t).expect("next") {
            out.push(k.to_vec());
        }
        out
    }

    #[test]
    fn sorted_batches_give_the_entries_of_single_inserts() {
        let mut x: u64 = 88172645463325252;
        let mut rnd = move |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        let (d1, d2) = (
            tempfile::tempdir().expect("dir"),
            tempfile::tempdir().expect("dir"),
        );
        let (single, batched) = (tree(&d1), tree(&d2));
        let mut tid = 0u32;
        // Batches of varied sizes and key spreads, over a growing tree:
        // ascending runs, duplicates, keys landing between existing ones.
        for round in 0..40u64 {
            let n = 1 + rnd(3000) as usize;
            let spread = [10, 1000, 1_000_000][round as usize % 3];
            let mut batch: Vec<Vec<u8>> = (0..n)
                .map(|_| {
                    tid += 1;
                    let v = Value::Int8(rnd(spread) as i64);
                    keys::leaf_key(single.desc(), &[v], (tid / 100, (tid % 100) as u16 + 1))
                        .expect("key")
                })
                .collect();
            for k in &batch {
                single.insert_key(k).expect("single");
            }
            batch.sort();
            batched.insert_sorted(&batch).expect("batched");
        }
        let (a, b) = (all_keys(&single), all_keys(&batched));
        assert_eq!(a.len(), tid as usize);
        assert!(a == b, "same entries in the same order");
        let r = bt_index_check(&batched).expect("check");
        assert_eq!(r.leaf_items, tid as usize);
        assert!(r.pages_per_level.len() >= 2, "splits happened");
        // A key already present is refused as a single insert refuses it.
        let again = [b[b.len() / 2].clone()];
        let e = batched.insert_sorted(&again).unwrap_err();
        assert!(e.message.contains("duplicate entry"), "{}", e.message);
    }
}
