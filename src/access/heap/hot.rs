//! HOT chains as readers follow them (PostgreSQL's
//! `heap_hot_search_buffer` and `heap_get_root_tuples`), and the test an
//! update passes to be heap-only.
//!
//! An index entry names a chain *root*: a tuple that is not heap-only, or
//! the REDIRECT line pointer pruning left in its place. The versions of the
//! row follow the root through ctid links on the same page, each a
//! heap-only tuple whose xmin is the previous version's xmax. Every reader
//! that goes from an index tuple id to the heap walks the chain with
//! [`walk_chain`] (through [`HeapRelation::fetch_hot`],
//! [`HeapRelation::search_chain`] or [`HeapRelation::chain_dead_to_all`]):
//! index scans, bitmap heap scans, uniqueness and foreign-key checks,
//! `ON CONFLICT`'s arbiter look-up.
//!
//! Invariants:
//! - a walk starts only at a root: a REDIRECT is followed at the start
//!   only, and a heap-only tuple at the start ends the walk (an entry never
//!   names one);
//! - each step checks `xmin == prior xmax`, stays on the page and accepts
//!   only NORMAL heap-only tuples, so a slot pruning freed and an insert
//!   reused is never taken for a chain member;
//! - an update is heap-only only when it stays on its page and no column
//!   any index uses (key, INCLUDE, expression or predicate column) changed
//!   its stored bytes ([`HotRule`]): every member of a chain has the
//!   root's index keys, so the entries of the root serve them all.

use super::heapam::{HeapRelation, Tid};
use super::pageops::{apply_page_hints, Hint};
use super::tuple::{self, TupleDesc};
use super::visibility::{satisfies_mvcc, satisfies_vacuum, VacuumStatus};
use crate::error::Result;
use crate::storage::page::{self, OffsetNumber, LP_DEAD, LP_REDIRECT};
use crate::storage::{BlockNumber, ForkNumber};
use crate::txn::{Snapshot, Xid};

/// What an update may do about HOT.
#[derive(Debug, Clone, Copy)]
pub enum HotRule<'a> {
    /// The table has no index: an update that fits on its page is
    /// heap-only, and pruning frees line pointers at once.
    NoIndexes,
    /// The table has indexes using the columns `columns` (of tuples
    /// described by `desc`): heap-only only when none of them changed.
    Indexed {
        /// The table's tuple descriptor.
        desc: &'a TupleDesc,
        /// The columns (0-based) any index uses, ascending.
        columns: &'a [usize],
    },
}

impl HotRule<'_> {
    /// Whether new version `new` of tuple `old` may be heap-only (it fits
    /// on the page: the caller checks that). PostgreSQL's
    /// `HeapDetermineColumnsInfo`: the stored bytes are compared, so a
    /// value stored differently (another compression) counts as changed.
    pub(super) fn allows(&self, old: &[u8], new: &[u8]) -> Result<bool> {
        let HotRule::Indexed { desc, columns } = self else {
            return Ok(true);
        };
        let Some(&last) = columns.last() else {
            return Ok(true);
        };
        // A tuple written before a column was added has fewer attributes:
        // a missing one is not known to equal the other's, so it counts as
        // changed.
        if tuple::natts(old) != tuple::natts(new) {
            return Ok(false);
        }
        let upto = last + 1;
        let mut a = vec![None; upto];
        let mut b = vec![None; upto];
        tuple::deform(old, desc, upto, &mut a)?;
        tuple::deform(new, desc, upto, &mut b)?;
        Ok(columns.iter().all(|&c| a[c] == b[c]))
    }

    /// Whether pruning must leave freed roots DEAD for VACUUM's index pass.
    pub(super) fn indexed(&self) -> bool {
        matches!(self, HotRule::Indexed { .. })
    }
}

/// Calls `visit` with each member of the HOT chain whose root is line
/// pointer `root` of page `p` (block `block`), in chain order, until it
/// returns `Some`, which is returned. The caller holds at least a shared
/// content lock.
pub fn walk_chain<T>(
    p: &[u8],
    block: BlockNumber,
    root: OffsetNumber,
    mut visit: impl FnMut(OffsetNumber, &[u8]) -> Result<Option<T>>,
) -> Result<Option<T>> {
    let max = page::max_offset(p);
    if root == 0 || root > max {
        return Ok(None);
    }
    let id = page::item_id(p, root);
    let mut off = if id.flags == LP_REDIRECT {
        id.off
    } else {
        root
    };
    let mut prior: Option<Xid> = None;
    for _ in 0..=max {
        if off == 0 || off > max {
            break;
        }
        let Some(t) = page::get_item(p, off).filter(|t| t.len() >= tuple::HEADER_SIZE) else {
            break;
        };
        let heap_only = tuple::infomask2(t) & tuple::HEAP_ONLY_TUPLE != 0;
        let fits = match prior {
            // The root itself is not heap-only; a redirect's target is.
            None => heap_only == (off != root),
            Some(x) => heap_only && tuple::xmin(t) == x,
        };
        if !fits {
            break;
        }
        if let Some(r) = visit(off, t)? {
            return Ok(Some(r));
        }
        if tuple::infomask2(t) & tuple::HEAP_HOT_UPDATED == 0 {
            break;
        }
        let (b, next) = tuple::ctid(t);
        if b != block {
            break;
        }
        prior = Some(tuple::xmax(t));
        off = next;
    }
    Ok(None)
}

/// Each line pointer's chain root on page `p` (index = offset; 0 when no
/// chain reaches it): PostgreSQL's `heap_get_root_tuples`, for an index
/// build and `bt_index_check`, which meet heap-only tuples in page order.
pub fn root_offsets(p: &[u8], block: BlockNumber) -> Result<Vec<OffsetNumber>> {
    let max = page::max_offset(p);
    let mut roots = vec![0; max as usize + 1];
    for o in 1..=max {
        let id = page::item_id(p, o);
        let root = match id.flags {
            LP_REDIRECT => true,
            page::LP_NORMAL => page::get_item(p, o).is_some_and(|t| {
                t.len() >= tuple::HEADER_SIZE && tuple::infomask2(t) & tuple::HEAP_ONLY_TUPLE == 0
            }),
            _ => false,
        };
        if root {
            walk_chain(p, block, o, |m, _| -> Result<Option<()>> {
                roots[m as usize] = o;
                Ok(None)
            })?;
        }
    }
    Ok(roots)
}

/// The tuple id an index entry gives the tuple at line pointer `off` of
/// page `p` (block `block`): `off` itself, or for a heap-only tuple its
/// chain's root (`roots`: the page's [`root_offsets`], computed at the
/// first heap-only tuple the caller meets on the page). A heap-only tuple
/// no chain reaches is PostgreSQL's XX001 `failed to find parent tuple`.
pub fn entry_offset(
    roots: &mut Option<Vec<OffsetNumber>>,
    p: &[u8],
    block: BlockNumber,
    off: OffsetNumber,
    table: &str,
) -> Result<OffsetNumber> {
    let heap_only = page::get_item(p, off).is_some_and(|t| {
        t.len() >= tuple::HEADER_SIZE && tuple::infomask2(t) & tuple::HEAP_ONLY_TUPLE != 0
    });
    if !heap_only {
        return Ok(off);
    }
    if roots.is_none() {
        *roots = Some(root_offsets(p, block)?);
    }
    match roots.as_ref().and_then(|r| r.get(off as usize)) {
        Some(&root) if root != 0 => Ok(root),
        _ => Err(crate::err!(
            DataCorrupted,
            "failed to find parent tuple for heap-only tuple at ({block},{off}) in table \"{table}\""
        )),
    }
}

/// Whether tuple `t` at (`block`, `off`), which an index build's snapshot
/// sees, was updated by a transaction that has committed since that
/// snapshot was taken: its newer version is one the build cannot see, so
/// an entry made from `t`'s key would lead later readers to a version with
/// other values (PostgreSQL's broken HOT chain). The build refuses
/// (`commands::index_build`).
pub fn updated_since(
    rel: &HeapRelation,
    t: &[u8],
    block: BlockNumber,
    off: OffsetNumber,
) -> Result<bool> {
    let mask = tuple::infomask(t);
    let xmax = tuple::xmax(t);
    if mask & tuple::HEAP_XMAX_INVALID != 0 || xmax == 0 || tuple::ctid(t) == (block, off) {
        return Ok(false);
    }
    if mask & tuple::HEAP_XMAX_COMMITTED != 0 {
        return Ok(true);
    }
    Ok(rel.txns().clog().status(xmax)? == crate::txn::XidStatus::Committed)
}

/// The member of the chain rooted at `root` that `snap` sees, with the hint
/// bits the walk found (pushed onto `hints`). On an ALL_VISIBLE page every
/// tuple is live to every snapshot, so a chain there has one member.
pub fn visible_member(
    p: &[u8],
    block: BlockNumber,
    root: OffsetNumber,
    snap: &Snapshot,
    clog: &crate::txn::Clog,
    hints: &mut Vec<Hint>,
) -> Result<Option<OffsetNumber>> {
    let all_visible = page::is_all_visible(p);
    walk_chain(p, block, root, |o, t| {
        if all_visible {
            return Ok(Some(o));
        }
        let (vis, bits) = satisfies_mvcc(t, snap, clog)?;
        if bits != 0 {
            hints.push(Hint {
                offset: o,
                bits,
                xmax: tuple::xmax(t),
            });
        }
        Ok(vis.then_some(o))
    })
}

impl HeapRelation {
    /// The version of the row whose chain root is `tid` (an index entry's
    /// tuple id) that `snap` sees: calls `f` with its tuple id and bytes
    /// under the page's shared lock. `None` when the snapshot sees no
    /// member. PostgreSQL's `heap_hot_search_buffer` with an MVCC snapshot.
    pub fn fetch_hot<R>(
        &self,
        tid: Tid,
        snap: &Snapshot,
        f: impl FnOnce(Tid, &[u8]) -> R,
    ) -> Result<Option<R>> {
        let _size = self.hold_size();
        if tid.block >= self.nblocks()? {
            return Ok(None);
        }
        let buf = self
            .pool()
            .read_buffer(self.rel(), ForkNumber::Main, tid.block, None)?;
        let mut hints = Vec::new();
        let mut g = buf.read();
        // PostgreSQL prunes here too (`heap_page_prune_opt`), so that the
        // UPDATE that fetched the row finds room for its new version.
        if let Some(px) = super::prune_opt::reader_may_prune(&g[..], self.fill_reserve()) {
            drop(g);
            self.prune_opt(&buf, px, super::prune::PruneMode::RootsIndexed)?;
            g = buf.read();
        }
        let found = visible_member(
            &g[..],
            tid.block,
            tid.offset,
            snap,
            self.txns().clog(),
            &mut hints,
        )?;
        let g = if hints.is_empty() {
            g
        } else {
            // Hints under the exclusive lock; the pin keeps pruning away,
            // so the member stays where it was found.
            drop(g);
            {
                let mut w = buf.write();
                if apply_page_hints(&mut w[..], &hints) {
                    w.mark_dirty_hint();
                }
            }
            buf.read()
        };
        Ok(found.and_then(|o| {
            let t = page::get_item(&g[..], o)?;
            Some(f(
                Tid {
                    block: tid.block,
                    offset: o,
                },
                t,
            ))
        }))
    }

    /// Calls `f` with each member of the chain whose root is `tid`, under
    /// the page's shared lock, until it returns `Some`: the walk of checks
    /// that decide by transaction status rather than by a snapshot
    /// (uniqueness, foreign keys, `ON CONFLICT`).
    pub fn search_chain<T>(
        &self,
        tid: Tid,
        mut f: impl FnMut(Tid, &[u8]) -> Result<Option<T>>,
    ) -> Result<Option<T>> {
        let _size = self.hold_size();
        if tid.block >= self.nblocks()? {
            return Ok(None);
        }
        let buf = self
            .pool()
            .read_buffer(self.rel(), ForkNumber::Main, tid.block, None)?;
        let g = buf.read();
        walk_chain(&g[..], tid.block, tid.offset, |o, t| {
            f(
                Tid {
                    block: tid.block,
                    offset: o,
                },
                t,
            )
        })
    }

    /// Whether every version reached from root `tid` is dead to every
    /// transaction now and later (its line pointer is DEAD, or every member
    /// is `Dead` against `horizon`): its index entries may be marked dead.
    pub fn chain_dead_to_all(&self, tid: Tid, horizon: Xid) -> Result<bool> {
        let _size = self.hold_size();
        if tid.block >= self.nblocks()? {
            return Ok(false);
        }
        let buf = self
            .pool()
            .read_buffer(self.rel(), ForkNumber::Main, tid.block, None)?;
        let g = buf.read();
        let p = &g[..];
        if tid.offset == 0 || tid.offset > page::max_offset(p) {
            return Ok(false);
        }
        if page::item_id(p, tid.offset).flags == LP_DEAD {
            return Ok(true);
        }
        let mut members = 0u32;
        let live = walk_chain(p, tid.block, tid.offset, |_, t| {
            members += 1;
            let (status, _) = satisfies_vacuum(t, horizon, self.txns())?;
            Ok((status != VacuumStatus::Dead).then_some(()))
        })?;
        Ok(live.is_none() && members > 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access::heap::pageops::{choose_offset, prepare_new_tuple, xmax_set_for};
    use crate::access::heap::record::{apply, HeapRecord};
    use crate::access::heap::tuple::{form_tuple, Attr};
    use crate::storage::BLCKSZ;

    fn tup(v: u32) -> Vec<u8> {
        let d = TupleDesc::new(vec![Attr::fixed(4, 4)]).unwrap();
        let mut t = Vec::new();
        form_tuple(&d, &[Some(&v.to_le_bytes())], &mut t).unwrap();
        t
    }

    fn insert(p: &mut [u8], xid: Xid, v: u32) -> OffsetNumber {
        let mut t = tup(v);
        let off = choose_offset(p, t.len()).unwrap();
        prepare_new_tuple(&mut t, xid, 0, 0, off, false, false);
        let rec = HeapRecord::Insert {
            offset: off,
            init_page: false,
            clear_all_visible: true,
            tuple: t,
        };
        apply(&rec, p).unwrap();
        off
    }

    fn hot_update(p: &mut [u8], from: OffsetNumber, xid: Xid, v: u32, hot: bool) -> OffsetNumber {
        let mut t = tup(v);
        let off = choose_offset(p, t.len()).unwrap();
        let set = xmax_set_for(page::get_item(p, from).unwrap(), from, xid, 0, (0, off));
        prepare_new_tuple(&mut t, xid, 0, 0, off, true, hot);
        let rec = HeapRecord::HotUpdate {
            set,
            new_offset: off,
            hot,
            clear_all_visible: true,
            tuple: t,
        };
        apply(&rec, p).unwrap();
        off
    }

    fn members(p: &[u8], root: OffsetNumber) -> Vec<OffsetNumber> {
        let mut out = Vec::new();
        walk_chain(p, 0, root, |o, _| -> Result<Option<()>> {
            out.push(o);
            Ok(None)
        })
        .unwrap();
        out
    }

    #[test]
    fn chains_are_walked_from_roots_only() {
        let mut p = vec![0u8; BLCKSZ];
        page::init(&mut p, 0);
        let a = insert(&mut p, 10, 1);
        let b = hot_update(&mut p, a, 11, 2, true);
        let c = hot_update(&mut p, b, 12, 3, true);
        let d = hot_update(&mut p, c, 13, 4, false); // a new root
        assert_eq!(members(&p, a), vec![a, b, c]);
        assert_eq!(
            members(&p, b),
            Vec::<OffsetNumber>::new(),
            "heap-only start"
        );
        assert_eq!(members(&p, d), vec![d]);
        assert_eq!(members(&p, 99), Vec::<OffsetNumber>::new());
        let roots = root_offsets(&p, 0).unwrap();
        assert_eq!(&roots[1..], &[a, a, a, d]);
        // Prune a and b away: a redirects to c.
        apply(
            &HeapRecord::Prune {
                redirected: vec![(a, c)],
                dead: vec![],
                unused: vec![b],
                prune_xid: 0,
            },
            &mut p,
        )
        .unwrap();
        assert_eq!(members(&p, a), vec![c]);
        assert_eq!(members(&p, c), Vec::<OffsetNumber>::new());
        // The freed slot reused by an unrelated insert is no member.
        let e = insert(&mut p, 20, 9);
        assert_eq!(e, b);
        assert_eq!(members(&p, a), vec![c]);
        assert_eq!(members(&p, e), vec![e]);
    }

    #[test]
    fn a_broken_link_ends_the_chain() {
        let mut p = vec![0u8; BLCKSZ];
        page::init(&mut p, 0);
        let a = insert(&mut p, 10, 1);
        let b = hot_update(&mut p, a, 11, 2, true);
        // Rewrite b's xmin: the link no longer holds.
        let t = page::get_item_mut(&mut p, b).unwrap();
        tuple::set_xmin(t, 77);
        assert_eq!(members(&p, a), vec![a]);
    }

    #[test]
    fn the_rule_compares_stored_bytes_of_indexed_columns() {
        let d = TupleDesc::new(vec![Attr::fixed(4, 4), Attr::fixed(4, 4)]).unwrap();
        let row = |x: u32, y: u32| {
            let mut t = Vec::new();
            form_tuple(
                &d,
                &[Some(&x.to_le_bytes()), Some(&y.to_le_bytes())],
                &mut t,
            )
            .unwrap();
            t
        };
        let cols = [0usize];
        let rule = HotRule::Indexed {
            desc: &d,
            columns: &cols,
        };
        assert!(rule.allows(&row(1, 2), &row(1, 3)).unwrap());
        assert!(!rule.allows(&row(1, 2), &row(5, 2)).unwrap());
        let mut nul = Vec::new();
        form_tuple(&d, &[None, Some(&2u32.to_le_bytes())], &mut nul).unwrap();
        assert!(!rule.allows(&row(0, 2), &nul).unwrap(), "NULL differs");
        assert!(HotRule::NoIndexes.allows(&row(1, 2), &row(5, 2)).unwrap());
    }
}
