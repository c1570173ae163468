//! Sorted bulk build (PostgreSQL's `nbtsort.c`): leaf keys arrive in
//! ascending order and are packed left to right into leaves filled to
//! [`LEAF_FILLFACTOR`] percent; each finished page's high key (suffix
//! truncated against the next page's first key) becomes a downlink on the
//! level above, whose pages fill to [`NONLEAF_FILLFACTOR`] percent. Only the
//! page being filled at each level is held (pinned, unlocked, invisible to
//! anyone: the index is not yet in use); each is written once, whole, as a
//! [`BtRecord::BuildPage`], and the meta page last.

use super::btpage::{self as bp, MetaData, Opaque, BTP_LEAF, BTP_ROOT, PAGE_CAPACITY, P_NONE};
use super::keys::{self, IndexDesc, Tid};
use super::split::{LEAF_FILLFACTOR, NONLEAF_FILLFACTOR};
use super::tree::{BTree, META_BLOCK};
use super::wal::{BtLog, BtRecord, PageImage};
use crate::err;
use crate::error::Result;
use crate::storage::{BlockNumber, BufferPool, PinnedBuffer, RelFileNode};
use crate::types::Value;
use std::sync::Arc;

struct Level<'a> {
    buf: PinnedBuffer<'a>,
    prev: BlockNumber,
    items: Vec<Vec<u8>>,
    used: usize,
}

struct Builder<'a> {
    tree: &'a BTree,
    levels: Vec<Level<'a>>,
}

impl<'a> Builder<'a> {
    fn new_level(&mut self, prev: BlockNumber) -> Result<Level<'a>> {
        let (_, buf) = self.tree.extend()?;
        Ok(Level {
            buf,
            prev,
            items: Vec::new(),
            used: 0,
        })
    }

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
        let mut items = lv.items;
        if let Some(h) = hikey {
            items.insert(0, h);
        }
        let img = PageImage {
            opaque: Opaque {
                prev: lv.prev,
                next,
                level,
                flags,
                cycle: 0,
            },
            items,
        };
        let mut g = lv.buf.write();
        self.tree.log_apply(&mut g, &BtRecord::BuildPage(img))
    }

    /// Adds `item` (a leaf key, or a pivot on internal levels) to `level`.
    fn add(&mut self, level: usize, item: Vec<u8>) -> Result<()> {
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
        if level == 0 && lv.items.last().is_some_and(|l| *l >= item) {
            return Err(err!(
                InternalError,
                "bulk build input is not in ascending order"
            ));
        }
        if !lv.items.is_empty() && lv.used + space > PAGE_CAPACITY * ff / 100 {
            let sep = match level {
                0 => keys::truncate_pivot(self.tree.desc(), &lv.items[lv.items.len() - 1], &item)?,
                _ => bp::pivot_key(&item).to_vec(),
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
                self.add(level + 1, bp::make_pivot(left, &[]))?;
            }
            self.add(level + 1, bp::make_pivot(right, &sep))?;
        }
        let item = match level > 0 && self.levels[level].items.is_empty() {
            true => bp::make_pivot(bp::downlink(&item), &[]),
            false => item,
        };
        let lv = &mut self.levels[level];
        lv.used += bp::item_space(item.len());
        lv.items.push(item);
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
        let tree = BTree::open(pool, rel, desc, log);
        tree.pool()
            .create_relation(rel, crate::storage::ForkNumber::Main)?;
        let (b0, mbuf) = tree.extend()?;
        if b0 != META_BLOCK {
            return Err(err!(ObjectInUse, "index relation {rel} is not empty"));
        }
        let meta = {
            let mut b = Builder {
                tree: &tree,
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
                b.add(0, key.to_vec())
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
