//! Sorted bulk build (PostgreSQL's `nbtsort.c`): leaf keys arrive in
//! ascending order and are packed left to right into leaves filled to
//! [`LEAF_FILLFACTOR`] percent; each finished page's high key (suffix
//! truncated against the next page's first key) becomes a downlink on the
//! level above, whose pages fill to [`NONLEAF_FILLFACTOR`] percent. Only the
//! page being filled at each level is held (pinned, unlocked, invisible to
//! anyone: the index is not yet in use), its items packed in one buffer;
//! each page is written once, whole, and logged as its full image
//! ([`BtLog::log_image`], PostgreSQL's `log_newpage`), the meta page last.

use super::btpage::{self as bp, MetaData, Opaque, BTP_LEAF, BTP_ROOT, PAGE_CAPACITY, P_NONE};
use super::keys::{self, IndexDesc, Tid};
use super::split::{LEAF_FILLFACTOR, NONLEAF_FILLFACTOR};
use super::tree::{BTree, META_BLOCK};
use super::wal::{BtLog, BtRecord};
use crate::err;
use crate::error::Result;
use crate::storage::{BlockNumber, BufferPool, PinnedBuffer, RelFileNode};
use crate::types::Value;
use std::sync::Arc;

/// The page being filled on one level: its items packed into one buffer
/// (no allocation per item), written to the page only when it is full.
struct Level<'a> {
    buf: PinnedBuffer<'a>,
    prev: BlockNumber,
    /// The items, concatenated.
    data: Vec<u8>,
    /// Where each item of `data` ends.
    ends: Vec<usize>,
    used: usize,
}

impl Level<'_> {
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
    log: Option<Arc<dyn BtLog>>,
    levels: Vec<Level<'a>>,
}

impl<'a> Builder<'a> {
    fn new_level(&mut self, prev: BlockNumber) -> Result<Level<'a>> {
        let (_, buf) = self.tree.extend()?;
        Ok(Level {
            buf,
            prev,
            data: Vec::with_capacity(PAGE_CAPACITY),
            ends: Vec::with_capacity(PAGE_CAPACITY / 16),
            used: 0,
        })
    }

    /// Writes the finished page of `lv` into its buffer and logs it whole.
    fn write(
        &self,
        lv: Level<'_>,
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
        let mut g = lv.buf.write();
        bp::init(&mut g, &opaque);
        let items = hikey
            .iter()
            .map(Vec::as_slice)
            .chain((0..lv.ends.len()).map(|i| lv.item(i)));
        for (off, item) in (1..).zip(items) {
            bp::insert_item(&mut g, off, item)?;
        }
        g.mark_dirty();
        if let Some(log) = &self.log {
            let lsn = log.log_image(self.tree.rel(), g.block(), &g[..])?;
            if lsn != 0 {
                g.set_lsn(lsn);
            }
        }
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
            let sep = match (level, lv.last()) {
                (0, Some(last)) => keys::truncate_pivot(self.tree.desc(), last, item)?,
                _ => bp::pivot_key(item).to_vec(),
            };
            let left = lv.buf.block();
            let fresh = self.new_level(left)?;
            let right = fresh.buf.block();
            let old = std::mem::replace(&mut self.levels[level], fresh);
            self.write(
                old,
                level as u32,
                right,
                Some(bp::make_pivot(P_NONE, &sep)),
                false,
            )?;
            if self.levels.len() == level + 1 {
                self.add(level + 1, &bp::make_pivot(left, &[]))?;
            }
            self.add(level + 1, &bp::make_pivot(right, &sep))?;
        }
        let lv = &mut self.levels[level];
        if level > 0 && lv.ends.is_empty() {
            // The first pivot of an internal page is minus infinity.
            lv.push(&bp::make_pivot(bp::downlink(item), &[]));
        } else {
            lv.push(item);
        }
        Ok(())
    }

    /// Writes the last page of every level; the top one is the root.
    fn finish(mut self) -> Result<MetaData> {
        if self.levels.is_empty() {
            let lv = self.new_level(P_NONE)?;
            self.levels.push(lv);
        }
        let top = self.levels.len() - 1;
        let root = self.levels[top].buf.block();
        for (i, lv) in std::mem::take(&mut self.levels).into_iter().enumerate() {
            self.write(lv, i as u32, P_NONE, None, i == top)?;
        }
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
                log,
                levels: Vec::new(),
            };
            fill(&mut |key: &[u8]| {
                if key.len() > bp::MAX_TUPLE_SIZE {
                    return Err(err!(
                        ProgramLimitExceeded,
                        "index row size {} exceeds btree version 4 maximum {} for index \"{rel}\"",
                        key.len(),
                        bp::MAX_TUPLE_SIZE
                    ));
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
