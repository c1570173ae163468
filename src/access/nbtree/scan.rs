//! Index scans: a cursor over the leaf items between two bounds, forward or
//! backward, returning each item's key and heap TID.
//!
//! Page at a time, as PostgreSQL's `_bt_readpage`: the cursor locks a leaf
//! shared, copies out the matching items and the sibling link it will
//! follow, and releases the page before returning any of them. Forward, it
//! follows the right-link it saw: a page split after the copy only moves
//! items it already has onto pages between it and that link. Backward, it
//! goes to the left-link it saw; if that page has split since (its
//! right-link no longer points back), it moves right until the page whose
//! right-link does (PostgreSQL's `_bt_walk_left`). No more than one page is
//! locked at any time. Items inserted during the scan may or may not be
//! returned; items present when the scan started and not removed are
//! returned exactly once.
//!
//! Items marked `LP_DEAD` are skipped. The caller may report the entry it
//! got last as dead to everyone ([`ScanPos::kill_last`]); leaving the page,
//! the position marks such items (`BTree::kill_items`) if the page's LSN is
//! still the one it copied them at.
//!
//! An index-only scan asks, for each item it copies, whether the heap page
//! the item points to is all-visible, and asks while the leaf is still
//! locked ([`ScanPos::next_key_checked`]). VACUUM removes an entry under
//! the leaf's exclusive lock before it frees the heap slot and sets the
//! page all-visible again, so a page found all-visible while the entry is
//! on the locked leaf holds that entry's own tuple, visible to every
//! snapshot. Asked later, after the lock is gone, the answer could belong
//! to a page VACUUM has since cleaned of the entry's dead tuple.

use super::btpage::{self as bp, P_NONE};
use super::keys::{prefix_cmp, tid_of, Tid};
use super::tree::{leaf_position, past_high_key, BTree, Descent, Target};
use crate::err;
use crate::error::Result;
use crate::storage::page::{self, OffsetNumber};
use crate::storage::BlockNumber;
use std::cmp::Ordering;
use std::ops::Bound;

/// Scan direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Ascending key order.
    Forward,
    /// Descending key order.
    Backward,
}

/// One returned index entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScanItem {
    /// The full leaf key (columns and TID).
    pub key: Vec<u8>,
    /// The heap tuple.
    pub tid: Tid,
}

/// The position of a scan: bounds, direction, and the matching items of
/// the page read last, copied into one reused buffer (no allocation per
/// item). It names no tree: each call is given one, so an executor can own
/// both side by side and restart the position over new bounds
/// ([`ScanPos::reset`]) without allocating.
#[derive(Debug)]
pub struct ScanPos {
    lower: Bound<Vec<u8>>,
    upper: Bound<Vec<u8>>,
    dir: Direction,
    started: bool,
    /// The current page's matching items, concatenated.
    buf: Vec<u8>,
    /// Their `(start, end)` in `buf`, in scan order.
    items: Vec<(u32, u32)>,
    /// The next item of `items` to return.
    at: usize,
    /// Per item of `items`, the answer of the caller's page check asked
    /// under the leaf's lock ([`ScanPos::next_key_checked`]).
    checked: Vec<bool>,
    /// The page the items came from and the sibling to visit next.
    cur: BlockNumber,
    next: BlockNumber,
    done: bool,
    /// The page's LSN when the items were copied, and each item's offset:
    /// items the caller found dead ([`ScanPos::kill_last`]) are marked on
    /// the page only if it has not changed since.
    lsn: u64,
    offs: Vec<OffsetNumber>,
    /// Positions in `items` of the items found dead.
    killed: Vec<u32>,
    /// Count, rather than copy, the items the check answers true for
    /// ([`ScanPos::next_counted`]).
    count_only: bool,
    /// Items counted and not yet handed out.
    counted: u64,
}

/// What [`ScanPos::next_counted`] hands out.
#[derive(Debug, PartialEq, Eq)]
pub enum Counted<'a> {
    /// This many entries whose check answered true (not copied).
    Checked(u64),
    /// An entry whose check answered false: its full leaf key.
    Entry(&'a [u8]),
    /// The scan is over.
    End,
}

/// A scan cursor over one tree; an iterator of entries.
pub struct BtScan<'t> {
    tree: &'t BTree,
    pos: ScanPos,
}

impl BTree {
    /// A scan over the entries whose keys lie within the bounds (encoded
    /// search keys, [`super::keys::encode_key`]: an entry matches a bound
    /// when its first columns compare so), in direction `dir`.
    pub fn scan(&self, lower: Bound<Vec<u8>>, upper: Bound<Vec<u8>>, dir: Direction) -> BtScan<'_> {
        BtScan {
            tree: self,
            pos: ScanPos::new(lower, upper, dir),
        }
    }

    /// The heap TIDs of every entry equal to `key` (an encoded search key,
    /// all columns or a prefix), in index order: an equality scan without
    /// a cursor's copies.
    pub fn lookup(&self, key: &[u8]) -> Result<Vec<Tid>> {
        let t = Target::AtOrAfter(key);
        let Descent::Leaf(mut buf) = self.descend(&t, None)? else {
            return Err(err!(InternalError, "read-only descent restarted"));
        };
        let mut out = Vec::new();
        let mut first = true;
        loop {
            let g = buf.read();
            let o = bp::opaque(&g);
            if (first || o.is_ignorable()) && past_high_key(&g, &o, &t)? {
                let next = o.next;
                drop(g);
                buf = self.pin(next)?;
                continue;
            }
            let start = match first {
                true => leaf_position(&g, &o, &t)?,
                false => bp::first_data(&o),
            };
            first = false;
            for off in start..=page::max_offset(&g) {
                let it = bp::item(&g, off)?;
                if prefix_cmp(it, key) != Ordering::Equal {
                    return Ok(out);
                }
                out.push(tid_of(it));
            }
            if o.is_rightmost()
                || prefix_cmp(bp::pivot_key(bp::item(&g, bp::P_HIKEY)?), key) == Ordering::Greater
            {
                return Ok(out);
            }
            let next = o.next;
            drop(g);
            buf = self.pin(next)?;
        }
    }
}

impl ScanPos {
    /// A position before the first entry within the bounds (see
    /// [`BTree::scan`]).
    pub fn new(lower: Bound<Vec<u8>>, upper: Bound<Vec<u8>>, dir: Direction) -> ScanPos {
        ScanPos {
            lower,
            upper,
            dir,
            started: false,
            buf: Vec::new(),
            items: Vec::new(),
            at: 0,
            checked: Vec::new(),
            cur: P_NONE,
            next: P_NONE,
            done: false,
            count_only: false,
            counted: 0,
            lsn: 0,
            offs: Vec::new(),
            killed: Vec::new(),
        }
    }

    /// Starts over with new bounds, keeping the buffers.
    pub fn reset(&mut self, lower: Bound<Vec<u8>>, upper: Bound<Vec<u8>>, dir: Direction) {
        self.lower = lower;
        self.upper = upper;
        self.dir = dir;
        self.started = false;
        self.buf.clear();
        self.items.clear();
        self.at = 0;
        self.cur = P_NONE;
        self.next = P_NONE;
        self.done = false;
        self.count_only = false;
        self.counted = 0;
        self.killed.clear();
    }

    /// The entries of the position's range, where only those whose heap
    /// page `check` finds not all-visible are wanted one by one: for the
    /// others (an index-only scan that returns no column, as `count(*)`)
    /// only their number is, and their keys are not copied. The answers
    /// are asked as in [`ScanPos::next_key_checked`], under the leaf's lock.
    /// Reads at most one leaf per call; the order of counts and entries is
    /// not the index order. Every call of one position (until
    /// [`ScanPos::reset`]) must use this method.
    pub fn next_counted(
        &mut self,
        tree: &BTree,
        check: &mut dyn FnMut(BlockNumber) -> Result<bool>,
    ) -> Result<Counted<'_>> {
        self.count_only = true;
        if self.counted > 0 {
            return Ok(Counted::Checked(std::mem::take(&mut self.counted)));
        }
        if self.at >= self.items.len() {
            let r = if !self.started {
                self.start(tree, Some(check))
            } else if self.done {
                return Ok(Counted::End);
            } else {
                self.step(tree, Some(check))
            };
            if let Err(e) = r {
                self.done = true;
                self.started = true;
                self.items.clear();
                self.counted = 0;
                return Err(e);
            }
            if self.counted > 0 {
                return Ok(Counted::Checked(std::mem::take(&mut self.counted)));
            }
            if self.at >= self.items.len() {
                // A page with no matching item: the end, or the next page.
                return Ok(if self.done {
                    Counted::End
                } else {
                    Counted::Checked(0)
                });
            }
        }
        let (a, b) = self.items[self.at];
        self.at += 1;
        Ok(Counted::Entry(&self.buf[a as usize..b as usize]))
    }

    /// Notes that the heap tuple of the entry returned last is dead to
    /// every transaction: its item is marked `LP_DEAD` when the scan
    /// leaves the page (PostgreSQL's `_bt_killitems`), if the page is
    /// unchanged, so that an insert needing room removes it instead of
    /// splitting the page.
    pub fn kill_last(&mut self) {
        if self.at > 0 && self.at <= self.items.len() {
            self.killed.push((self.at - 1) as u32);
        }
    }

    /// Marks the killed items of the current page (see [`ScanPos::kill_last`]).
    fn flush_kills(&mut self, tree: &BTree) -> Result<()> {
        if self.killed.is_empty() {
            return Ok(());
        }
        let mut marks: Vec<(OffsetNumber, &[u8])> = Vec::with_capacity(self.killed.len());
        for &i in &self.killed {
            let (a, b) = self.items[i as usize];
            marks.push((self.offs[i as usize], &self.buf[a as usize..b as usize]));
        }
        let r = tree.kill_items(self.cur, self.lsn, &marks);
        self.killed.clear();
        r
    }

    /// The next entry's full leaf key (columns and TID) in `tree`, or
    /// `None` at the end. The slice lives until the next call.
    pub fn next_key(&mut self, tree: &BTree) -> Result<Option<&[u8]>> {
        Ok(self.next_inner(tree, None)?.map(|(k, _)| k))
    }

    /// As [`ScanPos::next_key`], with `check(block)` asked for each item's
    /// heap block while its leaf is locked, and its answer returned beside
    /// the key (see the module doc). Every call of one position should
    /// pass a check, or none; `check` must not answer from anything it
    /// learnt before it was called.
    pub fn next_key_checked(
        &mut self,
        tree: &BTree,
        check: &mut dyn FnMut(BlockNumber) -> Result<bool>,
    ) -> Result<Option<(&[u8], bool)>> {
        self.next_inner(tree, Some(check))
    }

    fn next_inner(
        &mut self,
        tree: &BTree,
        mut check: Option<&mut dyn FnMut(BlockNumber) -> Result<bool>>,
    ) -> Result<Option<(&[u8], bool)>> {
        while self.at >= self.items.len() {
            self.flush_kills(tree)?;
            let r = if !self.started {
                self.start(tree, check.as_mut().map(|c| &mut **c as _))
            } else if self.done {
                return Ok(None);
            } else {
                self.step(tree, check.as_mut().map(|c| &mut **c as _))
            };
            if let Err(e) = r {
                self.done = true;
                self.started = true;
                self.items.clear();
                return Err(e);
            }
        }
        let (a, b) = self.items[self.at];
        let seen = self.checked.get(self.at).copied().unwrap_or(false);
        self.at += 1;
        Ok(Some((&self.buf[a as usize..b as usize], seen)))
    }

    fn below_upper(&self, k: &[u8]) -> bool {
        match &self.upper {
            Bound::Unbounded => true,
            Bound::Included(u) => prefix_cmp(k, u) != Ordering::Greater,
            Bound::Excluded(u) => k < u.as_slice(),
        }
    }

    fn above_lower(&self, k: &[u8]) -> bool {
        match &self.lower {
            Bound::Unbounded => true,
            Bound::Included(l) => k >= l.as_slice(),
            Bound::Excluded(l) => prefix_cmp(k, l) == Ordering::Greater,
        }
    }

    /// Whether every item right of this page is past the upper bound: the
    /// high key is (items to the right are at least the high key).
    fn hikey_past_upper(&self, p: &[u8], o: &bp::Opaque) -> Result<bool> {
        if o.is_rightmost() || self.upper == Bound::Unbounded {
            return Ok(false);
        }
        Ok(!self.below_upper(bp::pivot_key(bp::item(p, bp::P_HIKEY)?)))
    }

    /// Whether every item of a page is below the upper bound: the bound is
    /// open, or the page has a high key that is not `past` it (keys below
    /// the bound form a prefix of the key order, and items are below the
    /// high key).
    fn all_below(&self, o: &bp::Opaque, past: bool) -> bool {
        self.upper == Bound::Unbounded || (!o.is_rightmost() && !past)
    }

    /// Copies the matching items of a locked leaf page into the batch.
    /// `from..to` are the offsets to look at. Returns whether a bound was
    /// crossed (the scan ends after this batch).
    /// `all_below`: every item of the page is known to be below the upper
    /// bound (its high key is), so a forward scan need not compare each.
    fn take(
        &mut self,
        p: &[u8],
        (from, to): (u16, u16),
        all_below: bool,
        mut check: Option<&mut dyn FnMut(BlockNumber) -> Result<bool>>,
    ) -> Result<bool> {
        let mut stop = false;
        let mut last: Option<(BlockNumber, bool)> = None;
        self.buf.clear();
        self.items.clear();
        self.checked.clear();
        self.offs.clear();
        self.killed.clear();
        self.at = 0;
        for off in from..to {
            // Items marked dead are dead to every snapshot: skipped.
            let Some(k) = bp::live_item(p, off)? else {
                continue;
            };
            let ok = match self.dir {
                Direction::Forward => all_below || self.below_upper(k),
                Direction::Backward => self.above_lower(k),
            };
            if !ok {
                stop = true;
                if self.dir == Direction::Forward {
                    break;
                }
                continue;
            }
            if let Some(c) = check.as_deref_mut() {
                // Consecutive items of one heap page share an answer, and
                // only within this locked page: an answer is never kept
                // past the lock it was asked under.
                let block = tid_of(k).0;
                let seen = match last {
                    Some((b, v)) if b == block => v,
                    _ => c(block)?,
                };
                last = Some((block, seen));
                if seen && self.count_only {
                    self.counted += 1;
                    continue;
                }
                self.checked.push(seen);
            }
            let a = self.buf.len() as u32;
            self.buf.extend_from_slice(k);
            self.items.push((a, self.buf.len() as u32));
            self.offs.push(off);
        }
        if self.dir == Direction::Backward {
            self.items.reverse();
            self.checked.reverse();
            self.offs.reverse();
        }
        Ok(stop)
    }

    fn start(
        &mut self,
        tree: &BTree,
        check: Option<&mut dyn FnMut(BlockNumber) -> Result<bool>>,
    ) -> Result<()> {
        self.started = true;
        let (bound, after) = match self.dir {
            Direction::Forward => (&self.lower, false),
            Direction::Backward => (&self.upper, true),
        };
        let key;
        let t = match bound {
            Bound::Unbounded if self.dir == Direction::Forward => Target::AtOrAfter(&[]),
            Bound::Unbounded => Target::End,
            Bound::Included(k) if after => {
                key = k.clone();
                Target::After(&key)
            }
            Bound::Excluded(k) if !after => {
                key = k.clone();
                Target::After(&key)
            }
            Bound::Included(k) | Bound::Excluded(k) => {
                key = k.clone();
                Target::AtOrAfter(&key)
            }
        };
        let Descent::Leaf(mut buf) = tree.descend(&t, None)? else {
            return Err(err!(InternalError, "read-only descent restarted"));
        };
        loop {
            let g = buf.read();
            let o = bp::opaque(&g);
            if past_high_key(&g, &o, &t)? {
                let next = o.next;
                drop(g);
                buf = tree.pin(next)?;
                continue;
            }
            let pos = leaf_position(&g, &o, &t)?;
            self.cur = buf.block();
            self.lsn = g.lsn();
            let stop = match self.dir {
                Direction::Forward => {
                    self.next = o.next;
                    let past = self.hikey_past_upper(&g, &o)?;
                    let all_below = self.all_below(&o, past);
                    let to = page::max_offset(&g) + 1;
                    self.take(&g, (pos, to), all_below, check)? || past
                }
                Direction::Backward => {
                    self.next = o.prev;
                    self.take(&g, (bp::first_data(&o), pos), false, check)?
                }
            };
            self.done = stop || self.next == P_NONE;
            return Ok(());
        }
    }

    /// Reads the next page in scan direction into the batch.
    fn step(
        &mut self,
        tree: &BTree,
        check: Option<&mut dyn FnMut(BlockNumber) -> Result<bool>>,
    ) -> Result<()> {
        let mut blk = self.next;
        // Backward: half-dead or deleted pages passed on the way left. A
        // page whose right-link names one of them is our left neighbour as
        // well (they hold nothing), as PostgreSQL's `_bt_walk_left`.
        let mut passed: Vec<BlockNumber> = Vec::new();
        loop {
            let buf = tree.pin(blk)?;
            let g = buf.read();
            bp::verify(&g, blk)?;
            let o = bp::opaque(&g);
            if o.is_ignorable() {
                // Its links stay valid until no scan can be here (the page
                // is not reused before), so go on past it.
                if o.is_rightmost() || passed.len() > 1_000_000 {
                    return Err(err!(
                        DataCorrupted,
                        "index \"{}\" has a deleted page {blk} at the end of a level",
                        tree.rel()
                    ));
                }
                match self.dir {
                    Direction::Forward => blk = o.next,
                    Direction::Backward => {
                        passed.push(blk);
                        if o.prev == P_NONE {
                            self.done = true;
                            self.items.clear();
                            self.at = 0;
                            return Ok(());
                        }
                        blk = o.prev;
                    }
                }
                continue;
            }
            if self.dir == Direction::Backward && o.next != self.cur && !passed.contains(&o.next) {
                // The left page split since we saw its link: walk right to
                // the page that is now our left neighbour.
                if o.next == P_NONE {
                    return Err(err!(
                        DataCorrupted,
                        "could not find left sibling of block {} in index \"{}\"",
                        self.cur,
                        tree.rel()
                    ));
                }
                blk = o.next;
                continue;
            }
            let (from, to) = (bp::first_data(&o), page::max_offset(&g) + 1);
            self.cur = blk;
            self.lsn = g.lsn();
            let past = self.dir == Direction::Forward && self.hikey_past_upper(&g, &o)?;
            let all_below = self.dir == Direction::Forward && self.all_below(&o, past);
            let stop = self.take(&g, (from, to), all_below, check)? || past;
            self.next = match self.dir {
                Direction::Forward => o.next,
                Direction::Backward => o.prev,
            };
            self.done = stop || self.next == P_NONE;
            return Ok(());
        }
    }
}

impl Iterator for BtScan<'_> {
    type Item = Result<ScanItem>;

    fn next(&mut self) -> Option<Result<ScanItem>> {
        match self.pos.next_key(self.tree) {
            Ok(Some(k)) => Some(Ok(ScanItem {
                tid: tid_of(k),
                key: k.to_vec(),
            })),
            Ok(None) => None,
            Err(e) => Some(Err(e)),
        }
    }
}
