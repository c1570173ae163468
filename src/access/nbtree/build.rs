//! Sorted bulk build (PostgreSQL's `nbtsort.c`): leaf keys arrive in
//! ascending order and are packed left to right into leaves filled to
//! [`LEAF_FILLFACTOR`] percent; each finished page's high key (suffix
//! truncated against the next page's first key) becomes a downlink on the
//! level above, whose pages fill to [`NONLEAF_FILLFACTOR`] percent. Every
//! written page holds its high key: one as long as the largest item does
//! not fit in the room a fill factor leaves, so then the page's last item
//! moves right and the high key is cut from it (PostgreSQL's rule). Only the
//! page being filled at each level is held, its items packed in one buffer,
//! under the block number it was given when it was started; each page is
//! made once, whole, logged as its full image ([`BtLog::log_image`],
//! PostgreSQL's `log_newpage`) and written straight to the file
//! ([`super::buildout`]); the meta page is written last, through the pool.

use super::btpage::{self as bp, MetaData, Opaque, BTP_LEAF, BTP_ROOT, PAGE_CAPACITY, P_NONE};
use super::buildout::PageOut;
use super::keys::{self, IndexDesc, Tid};
use super::split::{LEAF_FILLFACTOR, NONLEAF_FILLFACTOR};
use super::tree::{BTree, META_BLOCK};
use super::wal::{BtLog, BtRecord};
use crate::err;
use crate::error::Result;
use crate::storage::{BlockNumber, BufferPool, RelFileNode};
use crate::types::Value;
use std::sync::Arc;

/// The page being filled on one level: its items packed into one buffer
/// (no allocation per item), written to the page only when it is full.
struct Level {
    /// The page's block.
    block: BlockNumber,
    prev: BlockNumber,
    /// The items, concatenated.
    data: Vec<u8>,
    /// Where each item of `data` ends.
    ends: Vec<usize>,
    used: usize,
}

impl Level {
    fn item(&self, i: usize) -> &[u8] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.data[start..self.ends[i]]
    }

    fn last(&self) -> Option<&[u8]> {
        self.ends.len().checked_sub(1).map(|i| self.item(i))
    }

    fn push(&mut self, item: &[u8]) {
        self.used += bp::item_space(item.len());
        self.data.extend_from_slice(item);
        self.ends.push(self.data.len());
    }
}

struct Builder<'a> {
    tree: &'a BTree,
    out: PageOut,
    levels: Vec<Level>,
    /// The block the next started page gets (pages are numbered as they
    /// are started, as extending the relation would number them).
    next_block: BlockNumber,
    /// Buffers of written pages, for the next pages started.
    spare: Vec<(Vec<u8>, Vec<usize>)>,
}

impl<'a> Builder<'a> {
    fn new_level(&mut self, prev: BlockNumber) -> Result<Level> {
        let block = self.next_block;
        if block >= crate::storage::MAX_BLOCKS {
            return Err(err!(
                ProgramLimitExceeded,
                "cannot extend relation {} beyond {} blocks",
                self.tree.rel(),
                crate::storage::MAX_BLOCKS
            ));
        }
        self.next_block += 1;
        let (data, ends) = self.spare.pop().unwrap_or_else(|| {
            (
                Vec::with_capacity(PAGE_CAPACITY),
                Vec::with_capacity(PAGE_CAPACITY / 16),
            )
        });
        Ok(Level {
            block,
            prev,
            data,
            ends,
            used: 0,
        })
    }

    /// Makes the finished page of `lv` and hands it to the output, which
    /// logs it whole.
    fn write(
        &mut self,
        mut lv: Level,
        level: u32,
        next: BlockNumber,
        hikey: Option<Vec<u8>>,
        root: bool,
    ) -> Result<()> {
        let mut flags = if level == 0 { BTP_LEAF } else { 0 };
        if root {
            flags |= BTP_ROOT;
        }
        let opaque = Opaque {
            prev: lv.prev,
            next,
            level,
            flags,
            cycle: 0,
        };
        self.out.page(lv.block, |p| {
            bp::init(p, &opaque);
            let items = hikey
                .iter()
                .map(Vec::as_slice)
                .chain((0..lv.ends.len()).map(|i| lv.item(i)));
            for item in items {
                bp::append_item(p, item)?;
            }
            Ok(())
        })?;
        lv.data.clear();
        lv.ends.clear();
        self.spare.push((lv.data, lv.ends));
        Ok(())
    }

    /// Adds `item` (a leaf key, or a pivot on internal levels) to `level`.
    fn add(&mut self, level: usize, item: &[u8]) -> Result<()> {
        if self.levels.len() == level {
            let lv = self.new_level(P_NONE)?;
            self.levels.push(lv);
        }
        let ff = if level == 0 {
            LEAF_FILLFACTOR
        } else {
            NONLEAF_FILLFACTOR
        };
        let space = bp::item_space(item.len());
        let lv = &self.levels[level];
        if level == 0 && lv.last().is_some_and(|l| l >= item) {
            return Err(err!(
                InternalError,
                "bulk build input is not in ascending order"
            ));
        }
        if !lv.ends.is_empty() && lv.used + space > PAGE_CAPACITY * ff / 100 {
            let carried = self.finish_page(level, item)?;
            if let Some(last) = carried {
                self.push(level, &last);
            }
        }
        self.push(level, item);
        Ok(())
    }

    /// Appends `item` to the page being filled on `level` (once per key:
    /// kept inline).
    #[inline(always)]
    fn push(&mut self, level: usize, item: &[u8]) {
        let lv = &mut self.levels[level];
        if level > 0 && lv.ends.is_empty() {
            // The first pivot of an internal page is minus infinity.
            lv.push(&bp::make_pivot(bp::downlink(item), &[]));
        } else {
            lv.push(item);
        }
    }

    /// The separator between `lastleft` and `firstright` on `level`: a
    /// suffix-truncated leaf key, or the key of an internal pivot.
    fn separator(&self, level: usize, lastleft: &[u8], firstright: &[u8]) -> Result<Vec<u8>> {
        if level == 0 {
            keys::truncate_pivot(self.tree.desc(), lastleft, firstright)
        } else {
            Ok(bp::pivot_key(firstright).to_vec())
        }
    }

    /// Writes the full page of `level`, whose right sibling begins with
    /// `item`, and links a fresh page in its place. The high key is the
    /// separator between the page's last item and `item`; when that does
    /// not fit beside the items (a long key after a page filled to its
    /// fill factor), the last item moves to the fresh page and the high key
    /// separates it from the one before, as PostgreSQL's `_bt_buildadd`
    /// does: that separator is no longer than the item it replaces (plus
    /// alignment), so it always fits. Returns the moved item, which the
    /// caller pushes on the fresh page before `item`.
    fn finish_page(&mut self, level: usize, item: &[u8]) -> Result<Option<Vec<u8>>> {
        let lv = &self.levels[level];
        let n = lv.ends.len();
        let last = lv.item(n - 1);
        let mut sep = self.separator(level, last, item)?;
        let mut hikey = bp::make_pivot(P_NONE, &sep);
        let mut carried = None;
        if n >= 2 && lv.used + bp::item_space(hikey.len()) > PAGE_CAPACITY {
            let moved = last.to_vec();
            sep = self.separator(level, lv.item(n - 2), &moved)?;
            hikey = bp::make_pivot(P_NONE, &sep);
            let lv = &mut self.levels[level];
            lv.used -= bp::item_space(moved.len());
            lv.ends.pop();
            lv.data.truncate(lv.ends.last().copied().unwrap_or(0));
            carried = Some(moved);
        }
        let left = self.levels[level].block;
        let fresh = self.new_level(left)?;
        let right = fresh.block;
        let old = std::mem::replace(&mut self.levels[level], fresh);
        self.write(old, level as u32, right, Some(hikey), false)?;
        if self.levels.len() == level + 1 {
            self.add(level + 1, &bp::make_pivot(left, &[]))?;
        }
        self.add(level + 1, &bp::make_pivot(right, &sep))?;
        Ok(carried)
    }

    /// Writes the last page of every level; the top one is the root.
    fn finish(mut self) -> Result<MetaData> {
        if self.levels.is_empty() {
            let lv = self.new_level(P_NONE)?;
            self.levels.push(lv);
        }
        let top = self.levels.len() - 1;
        let root = self.levels[top].block;
        for (i, lv) in std::mem::take(&mut self.levels).into_iter().enumerate() {
            self.write(lv, i as u32, P_NONE, None, i == top)?;
        }
        self.out.finish(self.next_block)?;
        Ok(MetaData {
            root,
            level: top as u32,
            fastroot: root,
            fastlevel: top as u32,
        })
    }
}

impl BTree {
    /// Builds an index in a new relation from full leaf keys
    /// ([`keys::leaf_key`]) in strictly ascending order.
    pub fn build_sorted(
        pool: Arc<BufferPool>,
        rel: RelFileNode,
        desc: IndexDesc,
        log: Option<Arc<dyn BtLog>>,
        sorted: impl IntoIterator<Item = Vec<u8>>,
    ) -> Result<BTree> {
        BTree::build_with(pool, rel, desc, log, |add| {
            sorted.into_iter().try_for_each(|k| add(&k))
        })
    }

    /// Builds an index in a new relation from the leaf keys `fill` hands to
    /// its argument, in strictly ascending order (the merge of an external
    /// sort, `sortbuild.rs`, feeds it without collecting the keys).
    pub fn build_with(
        pool: Arc<BufferPool>,
        rel: RelFileNode,
        desc: IndexDesc,
        log: Option<Arc<dyn BtLog>>,
        fill: impl FnOnce(&mut dyn FnMut(&[u8]) -> Result<()>) -> Result<()>,
    ) -> Result<BTree> {
        let tree = BTree::open(pool, rel, desc, log.clone());
        tree.pool()
            .create_relation(rel, crate::storage::ForkNumber::Main)?;
        let (b0, mbuf) = tree.extend()?;
        if b0 != META_BLOCK {
            return Err(err!(ObjectInUse, "index relation {rel} is not empty"));
        }
        let meta = {
            let mut b = Builder {
                tree: &tree,
                out: PageOut::new(tree.pool().clone(), rel, log),
                levels: Vec::new(),
                next_block: META_BLOCK + 1,
                spare: Vec::new(),
            };
            fill(&mut |key: &[u8]| {
                if super::rowsize::may_exceed(tree.desc(), key.len()) {
                    tree.check_row_size(key)?;
                }
                b.add(0, key)
            })?;
            b.finish()?
        };
        tree.log_apply(&mut mbuf.write(), &BtRecord::Meta(meta))?;
        drop(mbuf);
        Ok(tree)
    }

    /// Builds an index from unsorted `(values, tid)` pairs: encodes, sorts
    /// and calls [`BTree::build_sorted`].
    pub fn build(
        pool: Arc<BufferPool>,
        rel: RelFileNode,
        desc: IndexDesc,
        log: Option<Arc<dyn BtLog>>,
        rows: impl IntoIterator<Item = (Vec<Value>, Tid)>,
    ) -> Result<BTree> {
        let mut ks = rows
            .into_iter()
            .map(|(v, t)| keys::leaf_key(&desc, &v, t))
            .collect::<Result<Vec<_>>>()?;
        ks.sort_unstable();
        BTree::build_sorted(pool, rel, desc, log, ks)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access::nbtree::check::bt_index_check;
    use crate::access::nbtree::{Direction, KeyColumn, ScanPos};
    use crate::types::DataType;
    use std::ops::Bound;

    fn all_keys(t: &BTree) -> Vec<Vec<u8>> {
        let mut pos = ScanPos::new(Bound::Unbounded, Bound::Unbounded, Direction::Forward);
        let mut out = Vec::new();
        while let Some(k) = pos.next_key(t).expect("next") {
            out.push(k.to_vec());
        }
        out
    }

    /// Text keys of random lengths up to the largest accepted, many near
    /// it, with shared prefixes and duplicates (so high keys are long, some
    /// carrying the heap TID), built sorted and inserted one by one: both
    /// trees pass the checker and hold the keys in order.
    #[test]
    fn keys_up_to_the_maximum_size_build_and_insert() {
        let desc = IndexDesc::new(vec![KeyColumn::asc(DataType::Text)]);
        let alphabet = b"0123456789abcdef";
        let base: String = (0..4000)
            .map(|i| alphabet[(i * 7 + i / 16) % 16] as char)
            .collect();
        for seed in [1u64, 7, 42] {
            let mut x = 0x9E37_79B9_7F4A_7C15u64 ^ seed;
            let mut rnd = move |n: u64| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x % n
            };
            let mut ks = Vec::new();
            let mut tid = 0u32;
            while ks.len() < 1500 {
                let len = match rnd(4) {
                    0 => 1 + rnd(3000) as usize,
                    1 => 1000 + rnd(1700) as usize,
                    _ => 2600 + rnd(200) as usize,
                };
                // A shared prefix, then a random tail: neighbours differ late.
                let cut = len.saturating_sub(1 + rnd(3) as usize);
                let mut s = base[..cut].to_string();
                while s.len() < len {
                    s.push(alphabet[rnd(16) as usize] as char);
                }
                let copies = if rnd(5) == 0 { 3 } else { 1 };
                for _ in 0..copies {
                    tid += 1;
                    let k = keys::leaf_key(&desc, &[Value::text(&s)], (tid, 1)).expect("key");
                    if super::super::rowsize::check(&desc, &k, None, RelFileNode(0)).is_ok() {
                        ks.push(k);
                    }
                }
            }
            // A text of 2692 bytes is PostgreSQL's largest row (2704).
            assert!(
                ks.iter().any(|k| k.len() > 2680 + 9),
                "keys reach the maximum"
            );
            let mut sorted = ks.clone();
            sorted.sort();
            let dir = tempfile::tempdir().expect("dir");
            let pool = BufferPool::open(dir.path(), 4000).expect("pool");
            let built = BTree::build_sorted(
                pool.clone(),
                RelFileNode(710),
                desc.clone(),
                None,
                sorted.clone(),
            )
            .expect("sorted build");
            let r = bt_index_check(&built).expect("check built");
            assert_eq!(r.leaf_items, sorted.len());
            assert!(r.pages_per_level.len() >= 3, "{:?}", r.pages_per_level);
            assert!(
                all_keys(&built) == sorted,
                "built tree holds the keys in order"
            );
            let inserted =
                BTree::create(pool, RelFileNode(711), desc.clone(), None).expect("create");
            for k in &ks {
                inserted.insert_key(k).expect("insert");
            }
            let r = bt_index_check(&inserted).expect("check inserted");
            assert_eq!(r.leaf_items, sorted.len());
            assert!(
                all_keys(&inserted) == sorted,
                "inserted tree holds the keys in order"
            );
        }
    }

    /// A log that keeps the images of a build's pages, numbers them, and
    /// moves its redo point (a checkpoint beginning) after `move_redo_at`
    /// images.
    struct ImageLog {
        images: std::sync::Mutex<Vec<(BlockNumber, Vec<u8>, u64)>>,
        lsn: std::sync::atomic::AtomicU64,
        redo: std::sync::atomic::AtomicU64,
        move_redo_at: usize,
    }

    impl BtLog for ImageLog {
        fn log(&self, _: RelFileNode, _: BlockNumber, _: &BtRecord, _: &[u8]) -> Result<u64> {
            Ok(self.lsn.fetch_add(8, std::sync::atomic::Ordering::Relaxed))
        }

        fn log_image(&self, _: RelFileNode, block: BlockNumber, page: &[u8]) -> Result<u64> {
            let lsn = self.lsn.fetch_add(8, std::sync::atomic::Ordering::Relaxed);
            let mut images = self.images.lock().expect("images");
            images.push((block, page.to_vec(), lsn));
            if images.len() == self.move_redo_at {
                self.redo.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
            Ok(lsn)
        }

        fn redo_point(&self) -> Option<u64> {
            Some(self.redo.load(std::sync::atomic::Ordering::Relaxed))
        }
    }

    /// The pages a build writes around the pool are its logged images with
    /// their LSNs and checksums (read back through the pool, which checks
    /// them), one per block after the meta page, whether or not a
    /// checkpoint begins during the build (then the file is fsynced).
    #[test]
    fn built_pages_on_disk_are_their_logged_images() {
        let desc = IndexDesc::new(vec![KeyColumn::asc(DataType::Int8)]);
        let keys: Vec<Vec<u8>> = (0..40_000u32)
            .map(|i| keys::leaf_key(&desc, &[Value::Int8(i64::from(i / 3))], (i, 1)).expect("key"))
            .collect();
        for (n, move_redo_at) in [(0u32, 0usize), (1, 7)] {
            let dir = tempfile::tempdir().expect("dir");
            let pool = BufferPool::open(dir.path(), 256).expect("pool");
            let log = Arc::new(ImageLog {
                images: std::sync::Mutex::new(Vec::new()),
                lsn: std::sync::atomic::AtomicU64::new(1000),
                redo: std::sync::atomic::AtomicU64::new(0),
                move_redo_at,
            });
            let rel = RelFileNode(720 + n);
            let built = BTree::build_sorted(
                pool.clone(),
                rel,
                desc.clone(),
                Some(log.clone()),
                keys.clone(),
            )
            .expect("build");
            let images = log.images.lock().expect("images");
            let nblocks = pool
                .smgr()
                .nblocks(rel, crate::storage::ForkNumber::Main)
                .expect("nblocks");
            assert_eq!(nblocks as usize, images.len() + 1);
            let mut blocks: Vec<BlockNumber> = images.iter().map(|i| i.0).collect();
            blocks.sort_unstable();
            assert_eq!(blocks, (1..nblocks).collect::<Vec<_>>());
            for (block, image, lsn) in images.iter() {
                let buf = built.pin(*block).expect("read");
                let g = buf.read();
                assert_eq!(crate::storage::page::lsn(&g[..]), *lsn, "block {block}");
                assert_eq!(&g[10..], &image[10..], "block {block}");
            }
            drop(images);
            assert_eq!(
                bt_index_check(&built).expect("check").leaf_items,
                keys.len()
            );
            assert!(all_keys(&built) == keys);
        }
    }
}
