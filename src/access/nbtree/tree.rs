//! The B-tree over the buffer pool: creating an index, descending from the
//! root to a leaf (Lehman–Yao: move right past a concurrent split by the
//! high key), and inserting with page splits (leaf and internal) and new
//! roots, finishing any split a crash left without its downlink.
//!
//! Locking: a descent holds one content lock at a time (shared), releasing
//! a page before locking its child or right sibling. An inserter locks the
//! leaf exclusively; a split keeps the left page locked while it locks the
//! new right page and then the old right sibling (always left to right),
//! and keeps the left page locked while it locks the parent to insert the
//! downlink (always upwards). The root split also holds the right page and
//! then the meta page. So locks are ordered by (level up, then left to
//! right), and no cycle can form. Readers lock the meta page alone.
//!
//! Invariants (checked by [`super::check`]): within a page keys ascend
//! strictly; a page's keys are at least its downlink's key and below its
//! high key; the high key of a page equals the key of the next downlink in
//! the parent unless the page is `INCOMPLETE_SPLIT`.

use super::btpage::{
    self as bp, MetaData, Opaque, BTP_INCOMPLETE_SPLIT, BTP_LEAF, BTP_ROOT, P_HIKEY, P_NONE,
};
use super::keys::{self, prefix_cmp, IndexDesc, Tid};
use super::split::choose_split;
use super::wal::{apply, BtLog, BtRecord, PageImage};
use crate::err;
use crate::error::Result;
use crate::storage::page::{self, OffsetNumber};
use crate::storage::{
    BlockNumber, BufferPool, BufferWriteGuard, ForkNumber, PinnedBuffer, RelFileNode,
};
use crate::types::Value;
use std::cmp::Ordering;
use std::sync::atomic::{AtomicU32, Ordering as AtomicOrdering};
use std::sync::Arc;

/// Block number of the meta page.
pub const META_BLOCK: BlockNumber = 0;

/// How a search key positions a search.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target<'k> {
    /// The first item `>= key` (byte order).
    AtOrAfter(&'k [u8]),
    /// The first item past every item that starts with `key`.
    After(&'k [u8]),
    /// Past the last item of the index.
    End,
}

impl Target<'_> {
    /// Whether a leaf item's key is before the target position.
    #[inline]
    pub fn is_before(&self, item: &[u8]) -> bool {
        match self {
            Target::AtOrAfter(k) => item < *k,
            Target::After(k) => prefix_cmp(item, k) != Ordering::Greater,
            Target::End => true,
        }
    }

    /// Whether the target lies at or right of a pivot (a downlink's key or
    /// a high key), so that a descent follows that downlink or moves right
    /// past that high key. A pivot `P` is a strict upper bound of the page
    /// left of it and the least key of the one right of it (`lastleft < P
    /// <= firstright`), so a key *equal* to a pivot belongs right of it:
    /// `P <= k`, not `P < k` as for leaf items. (A full leaf key can equal
    /// a pivot that kept its heap TID when VACUUM removed that entry and the
    /// heap reused the TID for a version with the same key.)
    #[inline]
    pub fn at_or_past_pivot(&self, pivot: &[u8]) -> bool {
        match self {
            Target::AtOrAfter(k) => pivot <= *k,
            Target::After(k) => prefix_cmp(pivot, k) != Ordering::Greater,
            Target::End => true,
        }
    }
}

/// A downlink followed by a descent: the parent page and the offset.
#[derive(Debug, Clone, Copy)]
pub struct StackEntry {
    /// The internal page.
    pub block: BlockNumber,
    /// The downlink's offset in it when it was read.
    pub offset: OffsetNumber,
}

/// An open B-tree index.
pub struct BTree {
    pool: Arc<BufferPool>,
    rel: RelFileNode,
    desc: IndexDesc,
    pub(crate) log: Option<Arc<dyn BtLog>>,
    /// The fast root as last read from the meta page (0: not read yet), so
    /// a descent need not lock the meta page (PostgreSQL caches it in the
    /// relcache). A stale value is safe: an old root still covers the whole
    /// key space through right-links, and an insert whose stack misses the
    /// new upper levels finds its parent from the meta page.
    root_cache: AtomicU32,
    /// The index's and its table's names, for errors that name them.
    names: Option<Arc<(String, String)>>,
}

impl std::fmt::Debug for BTree {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "BTree({})", self.rel)
    }
}

pub(crate) enum Descent<'a> {
    Leaf(PinnedBuffer<'a>),
    Restart,
}

/// Whether the target lies at or beyond the page's high key (move right).
#[inline]
/// A half-dead or deleted page is always passed: its key range belongs to
/// its right sibling (see `pagedel.rs`).
pub(crate) fn past_high_key(p: &[u8], o: &Opaque, t: &Target) -> Result<bool> {
    if o.is_rightmost() {
        if o.is_ignorable() {
            return Err(err!(
                DataCorrupted,
                "rightmost index page is half-dead or deleted"
            ));
        }
        return Ok(false);
    }
    if o.is_ignorable() {
        return Ok(true);
    }
    Ok(t.at_or_past_pivot(bp::pivot_key(bp::item(p, P_HIKEY)?)))
}

/// On an internal page, the offset of the downlink to follow: the last
/// pivot the target is at or past (the first data item, minus infinity,
/// always is).
pub(crate) fn choose_child(p: &[u8], o: &Opaque, t: &Target) -> Result<OffsetNumber> {
    let (mut l, mut h) = (bp::first_data(o) + 1, page::max_offset(p) + 1);
    while l < h {
        let m = l + (h - l) / 2;
        if t.at_or_past_pivot(bp::pivot_key(bp::item(p, m)?)) {
            l = m + 1;
        } else {
            h = m;
        }
    }
    Ok(l - 1)
}

/// On a leaf, the offset of the first item not before the target
/// (`max_offset + 1` when there is none).
pub(crate) fn leaf_position(p: &[u8], o: &Opaque, t: &Target) -> Result<OffsetNumber> {
    let (mut l, mut h) = (bp::first_data(o), page::max_offset(p) + 1);
    while l < h {
        let m = l + (h - l) / 2;
        if t.is_before(bp::item(p, m)?) {
            l = m + 1;
        } else {
            h = m;
        }
    }
    Ok(l)
}

impl BTree {
    /// Creates an empty index in a new relation: the meta page (block 0)
    /// and an empty root leaf (block 1).
    pub fn create(
        pool: Arc<BufferPool>,
        rel: RelFileNode,
        desc: IndexDesc,
        log: Option<Arc<dyn BtLog>>,
    ) -> Result<BTree> {
        let tree = BTree::open(pool, rel, desc, log);
        tree.init_empty()?;
        Ok(tree)
    }

    fn init_empty(&self) -> Result<()> {
        let (tree, rel) = (self, self.rel);
        tree.pool.create_relation(rel, ForkNumber::Main)?;
        let (b0, mbuf) = tree.extend()?;
        let (b1, rbuf) = tree.extend()?;
        if (b0, b1) != (0, 1) {
            return Err(err!(ObjectInUse, "index relation {rel} is not empty"));
        }
        let root = PageImage {
            opaque: Opaque {
                flags: BTP_LEAF | BTP_ROOT,
                ..Opaque::default()
            },
            items: Vec::new(),
        };
        tree.log_apply(&mut rbuf.write(), &BtRecord::BuildPage(root))?;
        drop(rbuf);
        let meta = MetaData {
            root: 1,
            level: 0,
            fastroot: 1,
            fastlevel: 0,
        };
        let mut g = mbuf.write();
        tree.log_apply(&mut g, &BtRecord::Meta(meta))
    }

    /// Opens an existing index (nothing is read until it is used).
    pub fn open(
        pool: Arc<BufferPool>,
        rel: RelFileNode,
        desc: IndexDesc,
        log: Option<Arc<dyn BtLog>>,
    ) -> BTree {
        BTree {
            pool,
            rel,
            desc,
            log,
            root_cache: AtomicU32::new(0),
            names: None,
        }
    }

    /// The same tree, naming index `index` of table `table` in its errors
    /// (the index row size limit's).
    pub fn with_names(mut self, index: &str, table: &str) -> BTree {
        self.names = Some(Arc::new((index.to_string(), table.to_string())));
        self
    }

    /// Fails when `key` is over PostgreSQL's index row size limit.
    #[inline]
    pub(crate) fn check_row_size(&self, key: &[u8]) -> Result<()> {
        let names = self.names.as_deref().map(|(i, t)| (i.as_str(), t.as_str()));
        super::rowsize::check(&self.desc, key, names, self.rel)
    }

    /// The key columns.
    pub fn desc(&self) -> &IndexDesc {
        &self.desc
    }
    /// The index relation.
    pub fn rel(&self) -> RelFileNode {
        self.rel
    }
    /// The buffer pool.
    pub fn pool(&self) -> &Arc<BufferPool> {
        &self.pool
    }

    pub(crate) fn pin(&self, block: BlockNumber) -> Result<PinnedBuffer<'_>> {
        self.pool
            .read_buffer(self.rel, ForkNumber::Main, block, None)
    }

    pub(crate) fn extend(&self) -> Result<(BlockNumber, PinnedBuffer<'_>)> {
        self.pool.extend(self.rel, ForkNumber::Main, None)
    }

    /// Applies `rec` to the locked page, marks it dirty and logs it.
    pub(crate) fn log_apply(&self, g: &mut BufferWriteGuard<'_>, rec: &BtRecord) -> Result<()> {
        apply(rec, &mut g[..])?;
        g.mark_dirty();
        if let Some(log) = &self.log {
            let lsn = log.log(self.rel, g.block(), rec, &g[..])?;
            if lsn != 0 {
                g.set_lsn(lsn);
            }
        }
        Ok(())
    }

    /// The meta page's contents.
    pub fn meta(&self) -> Result<MetaData> {
        let buf = self.pin(META_BLOCK)?;
        let g = buf.read();
        bp::read_meta(&g)
    }

    /// Descends from the fast root to the leaf where `t` lies, moving right
    /// where a concurrent split moved keys. With a stack (inserts) the
    /// downlinks followed are recorded, and a page found `INCOMPLETE_SPLIT`
    /// is finished first (then the caller restarts).
    pub(crate) fn descend(
        &self,
        t: &Target,
        mut stack: Option<&mut Vec<StackEntry>>,
    ) -> Result<Descent<'_>> {
        let mut blk = match self.root_cache.load(AtomicOrdering::Relaxed) {
            0 => {
                let r = self.meta()?.fastroot;
                self.root_cache.store(r, AtomicOrdering::Relaxed);
                r
            }
            r => r,
        };
        loop {
            let buf = self.pin(blk)?;
            let g = buf.read();
            bp::verify(&g, blk)?;
            let o = bp::opaque(&g);
            if o.incomplete_split() {
                if let Some(s) = stack.as_deref_mut() {
                    drop(g);
                    let wg = buf.write();
                    if bp::opaque(&wg).incomplete_split() {
                        self.finish_split(&buf, wg, &mut s.clone())?;
                    }
                    return Ok(Descent::Restart);
                }
            }
            if past_high_key(&g, &o, t)? {
                blk = o.next;
                continue;
            }
            if o.is_leaf() {
                drop(g);
                return Ok(Descent::Leaf(buf));
            }
            let off = choose_child(&g, &o, t)?;
            if let Some(s) = stack.as_deref_mut() {
                s.push(StackEntry {
                    block: blk,
                    offset: off,
                });
            }
            blk = bp::downlink(bp::item(&g, off)?);
        }
    }

    /// Inserts the entry for heap tuple `tid` with key `values`.
    pub fn insert(&self, values: &[Value], tid: Tid) -> Result<()> {
        let key = keys::leaf_key(&self.desc, values, tid)?;
        self.insert_key(&key)
    }

    /// Inserts an encoded leaf key ([`keys::leaf_key`]).
    pub fn insert_key(&self, key: &[u8]) -> Result<()> {
        self.check_row_size(key)?;
        loop {
            let mut stack = Vec::new();
            let buf = match self.descend(&Target::AtOrAfter(key), Some(&mut stack))? {
                Descent::Leaf(b) => b,
                Descent::Restart => continue,
            };
            if self.insert_on_leaf(buf, key, &mut stack)? {
                return Ok(());
            }
        }
    }

    /// Locks the leaf exclusively, moves right as needed and inserts.
    /// Returns false when the insert must restart from the root.
    fn insert_on_leaf<'a>(
        &'a self,
        mut buf: PinnedBuffer<'a>,
        key: &[u8],
        stack: &mut Vec<StackEntry>,
    ) -> Result<bool> {
        let t = Target::AtOrAfter(key);
        loop {
            let mut g = buf.write();
            let o = bp::opaque(&g);
            if o.incomplete_split() {
                self.finish_split(&buf, g, stack)?;
                return Ok(false);
            }
            if past_high_key(&g, &o, &t)? {
                let next = o.next;
                drop(g);
                buf = self.pin(next)?;
                continue;
            }
            let off = leaf_position(&g, &o, &t)?;
            if off <= page::max_offset(&g) && bp::item(&g, off)? == key {
                return Err(err!(
                    InternalError,
                    "duplicate entry for heap tuple {} in index \"{}\"",
                    bp::tid_text(keys::tid_of(key)),
                    self.rel
                ));
            }
            if bp::item_space(key.len()) <= bp::free_space(&g) {
                let rec = BtRecord::InsertLeaf {
                    offset: off,
                    tuple: key.to_vec(),
                };
                self.log_apply(&mut g, &rec)?;
                return Ok(true);
            }
            // Before splitting, remove the items scans marked dead
            // (PostgreSQL's simple deletion), then try again.
            let dead = bp::dead_offsets(&g, &o);
            if !dead.is_empty() {
                self.log_apply(&mut g, &BtRecord::Delete { offsets: dead })?;
                drop(g);
                continue;
            }
            self.split(&buf, g, off, key.to_vec(), stack, None)?;
            return Ok(true);
        }
    }

    /// Splits the locked page `lbuf` while inserting `newitem` at `newoff`,
    /// then inserts the downlink into the parent. `child` is the page whose
    /// split put `newitem` here (an internal split): its `INCOMPLETE_SPLIT`
    /// is cleared once the downlink is on a page.
    pub(crate) fn split(
        &self,
        lbuf: &PinnedBuffer<'_>,
        mut lg: BufferWriteGuard<'_>,
        newoff: OffsetNumber,
        newitem: Vec<u8>,
        stack: &mut Vec<StackEntry>,
        child: Option<BufferWriteGuard<'_>>,
    ) -> Result<()> {
        let o = bp::opaque(&lg);
        let leaf = o.is_leaf();
        let first = bp::first_data(&o);
        let max = page::max_offset(&lg);
        let append = o.is_rightmost() && newoff == max + 1;
        let hikey = match o.is_rightmost() {
            true => None,
            false => Some(bp::item(&lg, P_HIKEY)?.to_vec()),
        };
        let mut items = (first..=max)
            .map(|off| bp::item(&lg, off).map(|t| t.to_vec()))
            .collect::<Result<Vec<_>>>()?;
        items.insert((newoff - first) as usize, newitem);
        let s = choose_split(&self.desc, &items, leaf, append, hikey.as_deref())?;
        let sep = match leaf {
            true => keys::truncate_pivot(&self.desc, &items[s - 1], &items[s])?,
            false => bp::pivot_key(&items[s]).to_vec(),
        };
        let mut right = Vec::with_capacity(items.len() - s + 1);
        right.extend(hikey);
        for (i, it) in items[s..].iter().enumerate() {
            match !leaf && i == 0 {
                true => right.push(bp::make_pivot(bp::downlink(it), &[])),
                false => right.push(it.clone()),
            }
        }
        self.with_new_page(move |rblk, mut rg| {
            let ropaque = Opaque {
                prev: lbuf.block(),
                next: o.next,
                level: o.level,
                flags: o.flags & BTP_LEAF,
                cycle: 0,
            };
            let img = PageImage {
                opaque: ropaque,
                items: right,
            };
            self.log_apply(&mut rg, &BtRecord::SplitRight(img))?;
            items.truncate(s);
            items.insert(0, bp::make_pivot(P_NONE, &sep));
            let lopaque = Opaque {
                next: rblk,
                flags: o.flags | BTP_INCOMPLETE_SPLIT,
                ..o
            };
            let img = PageImage {
                opaque: lopaque,
                items,
            };
            self.log_apply(&mut lg, &BtRecord::SplitLeft(img))?;
            if o.next != P_NONE {
                let nbuf = self.pin(o.next)?;
                let mut ng = nbuf.write();
                self.log_apply(&mut ng, &BtRecord::SetPrev { prev: rblk })?;
            }
            if let Some(mut cg) = child {
                let rec = BtRecord::SetFlags {
                    set: 0,
                    clear: BTP_INCOMPLETE_SPLIT,
                };
                self.log_apply(&mut cg, &rec)?;
            }
            self.insert_parent(lbuf, lg, Some(rg), stack)
        })
    }

    /// Runs `f` on a page for a split's right half, exclusively locked: a
    /// deleted page taken from the meta page's free list (VACUUM lists
    /// only pages no scan can still reach, see `pagedel.rs`), checked to
    /// be still deleted under the lock `f` keeps, or else a new block. The
    /// listed page is only try-locked: two splitters that took the same
    /// page (listed twice) could otherwise each wait for the other's left
    /// or right page.
    fn with_new_page<R>(
        &self,
        f: impl for<'g> FnOnce(BlockNumber, BufferWriteGuard<'g>) -> Result<R>,
    ) -> Result<R> {
        while let Some(blk) = self.take_free_page()? {
            let buf = self.pin(blk)?;
            // Never wait here (the page being split is locked): a page
            // someone else holds is left for the next cleanup to list.
            let Some(g) = buf.try_write() else {
                continue;
            };
            if !page::is_new(&g) && bp::verify(&g, blk).is_ok() && bp::opaque(&g).is_deleted() {
                return f(blk, g);
            }
        }
        let (blk, buf) = self.extend()?;
        let g = buf.write();
        f(blk, g)
    }

    /// Takes the last page off the meta page's free list (logged), if any.
    fn take_free_page(&self) -> Result<Option<BlockNumber>> {
        let mbuf = self.pin(META_BLOCK)?;
        if bp::free_list_is_empty(&mbuf.read()) {
            return Ok(None);
        }
        let mut mg = mbuf.write();
        let Some(blk) = bp::free_list(&mg).last().copied() else {
            return Ok(None);
        };
        self.log_apply(&mut mg, &BtRecord::TakeFree { block: blk })?;
        Ok(Some(blk))
    }

    /// Finishes the split of the locked page `lbuf` (flag set, downlink to
    /// its right sibling possibly missing).
    pub(crate) fn finish_split(
        &self,
        lbuf: &PinnedBuffer<'_>,
        lg: BufferWriteGuard<'_>,
        stack: &mut Vec<StackEntry>,
    ) -> Result<()> {
        self.insert_parent(lbuf, lg, None, stack)
    }

    /// Puts the downlink to the right half of the split page `lbuf` into the
    /// parent (making a new root when `lbuf` is the root), unless it is
    /// there already (a split finished after a crash), and clears the
    /// page's `INCOMPLETE_SPLIT`.
    fn insert_parent(
        &self,
        lbuf: &PinnedBuffer<'_>,
        mut lg: BufferWriteGuard<'_>,
        rg: Option<BufferWriteGuard<'_>>,
        stack: &mut Vec<StackEntry>,
    ) -> Result<()> {
        let o = bp::opaque(&lg);
        let (lblk, rblk) = (lbuf.block(), o.next);
        let sep = bp::pivot_key(bp::item(&lg, P_HIKEY)?).to_vec();
        let meta = self.meta()?;
        if meta.level == o.level {
            if !o.is_root() || meta.root != lblk {
                return Err(err!(
                    DataCorrupted,
                    "block {lblk} of index \"{}\" is at the root level but is not the root",
                    self.rel
                ));
            }
            let rbuf;
            let mut rg = match rg {
                Some(g) => g,
                None => {
                    rbuf = self.pin(rblk)?;
                    rbuf.write()
                }
            };
            return self.new_root(lblk, &mut lg, rblk, &mut rg, &sep, o.level);
        }
        drop(rg);
        let clear = BtRecord::SetFlags {
            set: 0,
            clear: BTP_INCOMPLETE_SPLIT,
        };
        let mut pblk = match stack.pop() {
            Some(e) => e.block,
            None => self.leftmost_at_level(o.level + 1)?,
        };
        loop {
            let pbuf = self.pin(pblk)?;
            let mut pg = pbuf.write();
            let po = bp::opaque(&pg);
            if po.incomplete_split() {
                self.finish_split(&pbuf, pg, &mut stack.clone())?;
                continue;
            }
            let max = page::max_offset(&pg);
            let mut found = None;
            for off in bp::first_data(&po)..=max {
                if bp::downlink(bp::item(&pg, off)?) == lblk {
                    found = Some(off);
                    break;
                }
            }
            let Some(off) = found else {
                if po.is_rightmost() {
                    return Err(err!(
                        DataCorrupted,
                        "failed to re-find parent key in index \"{}\" for split pages {lblk}/{rblk}",
                        self.rel
                    ));
                }
                pblk = po.next;
                continue;
            };
            if self.downlink_follows(&pg, &po, off, rblk)? {
                drop(pg);
                return self.log_apply(&mut lg, &clear);
            }
            let newitem = bp::make_pivot(rblk, &sep);
            if bp::item_space(newitem.len()) <= bp::free_space(&pg) {
                let rec = BtRecord::InsertInner {
                    offset: off + 1,
                    tuple: newitem,
                };
                self.log_apply(&mut pg, &rec)?;
                return self.log_apply(&mut lg, &clear);
            }
            return self.split(&pbuf, pg, off + 1, newitem, stack, Some(lg));
        }
    }

    /// Whether the downlink after `off` (on this page or first on the right
    /// sibling) already points at `rblk`.
    fn downlink_follows(
        &self,
        p: &[u8],
        o: &Opaque,
        off: OffsetNumber,
        rblk: BlockNumber,
    ) -> Result<bool> {
        if off < page::max_offset(p) {
            return Ok(bp::downlink(bp::item(p, off + 1)?) == rblk);
        }
        if o.is_rightmost() {
            return Ok(false);
        }
        let nbuf = self.pin(o.next)?;
        let ng = nbuf.read();
        let no = bp::opaque(&ng);
        let first = bp::first_data(&no);
        Ok(first <= page::max_offset(&ng) && bp::downlink(bp::item(&ng, first)?) == rblk)
    }

    /// Makes a new root above the split root `lblk` and its right half.
    fn new_root(
        &self,
        lblk: BlockNumber,
        lg: &mut BufferWriteGuard<'_>,
        rblk: BlockNumber,
        _rg: &mut BufferWriteGuard<'_>,
        sep: &[u8],
        level: u32,
    ) -> Result<()> {
        let mbuf = self.pin(META_BLOCK)?;
        let mut mg = mbuf.write();
        let (nblk, nbuf) = self.extend()?;
        let mut ng = nbuf.write();
        let img = PageImage {
            opaque: Opaque {
                level: level + 1,
                flags: BTP_ROOT,
                ..Opaque::default()
            },
            items: vec![bp::make_pivot(lblk, &[]), bp::make_pivot(rblk, sep)],
        };
        self.log_apply(&mut ng, &BtRecord::NewRoot(img))?;
        let meta = MetaData {
            root: nblk,
            level: level + 1,
            fastroot: nblk,
            fastlevel: level + 1,
        };
        self.log_apply(&mut mg, &BtRecord::Meta(meta))?;
        self.root_cache.store(nblk, AtomicOrdering::Relaxed);
        let rec = BtRecord::SetFlags {
            set: 0,
            clear: BTP_ROOT | BTP_INCOMPLETE_SPLIT,
        };
        self.log_apply(lg, &rec)
    }

    /// The leftmost page of `level`, reached from the root by first
    /// downlinks.
    pub(crate) fn leftmost_at_level(&self, level: u32) -> Result<BlockNumber> {
        let meta = self.meta()?;
        if level > meta.level {
            return Err(err!(
                DataCorrupted,
                "index \"{}\" has no level {level} (root level {})",
                self.rel,
                meta.level
            ));
        }
        let mut blk = meta.root;
        loop {
            let buf = self.pin(blk)?;
            let g = buf.read();
            bp::verify(&g, blk)?;
            let o = bp::opaque(&g);
            if o.level == level {
                return Ok(blk);
            }
            if o.is_leaf() || o.level < level {
                return Err(err!(
                    DataCorrupted,
                    "index \"{}\" levels are inconsistent",
                    self.rel
                ));
            }
            blk = bp::downlink(bp::item(&g, bp::first_data(&o))?);
        }
    }
}
