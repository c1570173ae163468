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

use super::btpage::{self as bp, P_NONE};
use super::keys::{prefix_cmp, tid_of, Tid};
use super::tree::{leaf_position, past_high_key, BTree, Descent, Target};
use crate::err;
use crate::error::Result;
use crate::storage::page;
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

/// A scan cursor; an iterator of entries.
pub struct BtScan<'t> {
    tree: &'t BTree,
    lower: Bound<Vec<u8>>,
    upper: Bound<Vec<u8>>,
    dir: Direction,
    started: bool,
    /// Items of the current page not yet returned, in reverse of scan order.
    batch: Vec<Vec<u8>>,
    /// The page the batch came from and the sibling to visit next.
    cur: BlockNumber,
    next: BlockNumber,
    done: bool,
}

impl BTree {
    /// A scan over the entries whose keys lie within the bounds (encoded
    /// search keys, [`super::keys::encode_key`]: an entry matches a bound
    /// when its first columns compare so), in direction `dir`.
    pub fn scan(&self, lower: Bound<Vec<u8>>, upper: Bound<Vec<u8>>, dir: Direction) -> BtScan<'_> {
        BtScan {
            tree: self,
            lower,
            upper,
            dir,
            started: false,
            batch: Vec::new(),
            cur: P_NONE,
            next: P_NONE,
            done: false,
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
            if first && past_high_key(&g, &o, &t)? {
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

impl BtScan<'_> {
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

    /// Copies the matching items of a locked leaf page into the batch.
    /// `from..to` are the offsets to look at. Returns whether a bound was
    /// crossed (the scan ends after this batch).
    fn take(&mut self, p: &[u8], from: u16, to: u16) -> Result<bool> {
        let mut stop = false;
        let mut got = Vec::new();
        for off in from..to {
            let k = bp::item(p, off)?;
            let ok = match self.dir {
                Direction::Forward => self.below_upper(k),
                Direction::Backward => self.above_lower(k),
            };
            if !ok {
                stop = true;
                if self.dir == Direction::Forward {
                    break;
                }
                continue;
            }
            got.push(k.to_vec());
        }
        if self.dir == Direction::Forward {
            got.reverse();
        }
        self.batch = got;
        Ok(stop)
    }

    fn start(&mut self) -> Result<()> {
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
        let Descent::Leaf(mut buf) = self.tree.descend(&t, None)? else {
            return Err(err!(InternalError, "read-only descent restarted"));
        };
        loop {
            let g = buf.read();
            let o = bp::opaque(&g);
            if past_high_key(&g, &o, &t)? {
                let next = o.next;
                drop(g);
                buf = self.tree.pin(next)?;
                continue;
            }
            let pos = leaf_position(&g, &o, &t)?;
            self.cur = buf.block();
            let stop = match self.dir {
                Direction::Forward => {
                    self.next = o.next;
                    self.take(&g, pos, page::max_offset(&g) + 1)?
                        || self.hikey_past_upper(&g, &o)?
                }
                Direction::Backward => {
                    self.next = o.prev;
                    self.take(&g, bp::first_data(&o), pos)?
                }
            };
            self.done = stop || self.next == P_NONE;
            return Ok(());
        }
    }

    /// Reads the next page in scan direction into the batch.
    fn step(&mut self) -> Result<()> {
        let mut blk = self.next;
        loop {
            let buf = self.tree.pin(blk)?;
            let g = buf.read();
            bp::verify(&g, blk)?;
            let o = bp::opaque(&g);
            if self.dir == Direction::Backward && o.next != self.cur {
                // The left page split since we saw its link: walk right to
                // the page that is now our left neighbour.
                if o.next == P_NONE {
                    return Err(err!(
                        DataCorrupted,
                        "could not find left sibling of block {} in index \"{}\"",
                        self.cur,
                        self.tree.rel()
                    ));
                }
                blk = o.next;
                continue;
            }
            let (from, to) = (bp::first_data(&o), page::max_offset(&g) + 1);
            self.cur = blk;
            let stop = self.take(&g, from, to)?
                || (self.dir == Direction::Forward && self.hikey_past_upper(&g, &o)?);
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
        loop {
            if let Some(key) = self.batch.pop() {
                let tid = tid_of(&key);
                return Some(Ok(ScanItem { key, tid }));
            }
            let r = if !self.started {
                self.start()
            } else if self.done {
                return None;
            } else {
                self.step()
            };
            if let Err(e) = r {
                self.done = true;
                self.started = true;
                return Some(Err(e));
            }
        }
    }
}
