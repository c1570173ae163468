//! Pruning: reclaiming the space of tuples that are dead to everyone on one
//! heap page, and shortening HOT chains (PostgreSQL's `heap_page_prune`).
//!
//! A HOT chain starts at a *root* line pointer (a tuple that is not
//! heap-only, or a REDIRECT left by an earlier pruning) and follows the ctids
//! of HOT-updated tuples through heap-only versions on the same page, each
//! link checked by `xmin == previous xmax`. Pruning walks every chain:
//!
//! - the dead prefix of a chain (versions deleted or updated by transactions
//!   that committed before the oldest xmin still needed) is removed: its
//!   heap-only members become UNUSED;
//! - the root then REDIRECTs to the first surviving version, or, when the
//!   whole chain is dead, becomes DEAD (UNUSED when the table has no
//!   indexes, since nothing can point at it);
//! - heap-only tuples that no chain reaches and that are dead (the new
//!   version of an aborted update) become UNUSED.
//!
//! With indexes ([`PruneMode::RootsIndexed`], PostgreSQL's rule) an index
//! entry names only a chain's root (`access::heap::hot`), so heap-only
//! members are freed at once, a root with a survivor becomes its REDIRECT,
//! and a root whose whole chain is dead stays DEAD until VACUUM has removed
//! the entries naming it (`access::heap::vacuum`, `HeapRecord::VacuumDead`).
//! VACUUM's first pass and an update's opportunistic pruning
//! (`access::heap::update`) both prune this way.
//!
//! A root line pointer never moves, so a tuple id handed out for a row keeps
//! leading to its live version. The changes are one `Prune` record, applied
//! like every other change; it compacts the page afterwards.
//!
//! Locking: the caller of [`HeapRelation::prune_page`] holds no lock; it
//! takes a *cleanup* lock (exclusive, no other pin) because tuples move.

use super::heapam::HeapRelation;
use super::record::HeapRecord;
use super::tuple;
use super::visibility::{apply_hints, satisfies_vacuum, VacuumStatus};
use crate::access::sumbuild::SlotBuilder;
use crate::error::Result;
use crate::storage::page::{self, OffsetNumber, LP_DEAD, LP_NORMAL, LP_REDIRECT};
use crate::storage::prefetch::Ahead;
use crate::storage::{BlockNumber, BufferWriteGuard};
use crate::txn::Xid;

/// What may still point at a line pointer pruning frees.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PruneMode {
    /// No index: freed line pointers become UNUSED at once.
    NoIndexes,
    /// PostgreSQL's rule: indexes name only chain roots, so heap-only
    /// members become UNUSED and a dead root with a survivor a REDIRECT;
    /// wholly dead roots stay DEAD.
    RootsIndexed,
}

/// The header fields `satisfies_vacuum` decides by: xmin, xmax, hint bits.
type HeaderKey = (Xid, Xid, u16);

/// How many recent decisions [`PruneScratch`] remembers.
const REMEMBERED: usize = 4;

/// A caller's reusable state for [`HeapRelation::prune_locked`] over many
/// pages: the line pointers' statuses of the last page, and the last few
/// visibility decisions.
///
/// Why remember decisions across tuples and pages: the outcome of
/// `satisfies_vacuum` depends only on the header's xmin, xmax and hint bits
/// (and on the transactions' states, which only move forward), and on the
/// horizon, which is part of the key. A page after one delete holds two
/// kinds of header (its live rows, its deleted one); a table after a bulk
/// load or delete holds few kinds in all. Every deleted tuple's decision
/// asked the transaction manager under its mutex (is the deleter still
/// running?), once per page and worker. Reusing an earlier answer is what
/// a slightly earlier look would have given, so it is as safe: it can only
/// keep a tuple that a fresh look would already remove, never remove one a
/// fresh look would keep.
#[derive(Debug)]
pub struct PruneScratch {
    /// Each line pointer's status as found before pruning (index =
    /// offset; `None` for line pointers without a tuple).
    pub status: Vec<Option<VacuumStatus>>,
    /// Recent decisions.
    decided: Decisions,
    /// The frame the caller visits next, prefetched a few lines per tuple
    /// over this page's loop (`storage::prefetch`); taken by each call.
    pub ahead: Ahead,
    /// What the page holds, when pruning left its line pointers as they
    /// were (nothing to remove: every page after a load); `None` when it
    /// pruned. Gathered in the same loop that classifies the tuples, so
    /// that VACUUM need not walk the page a second time.
    pub unpruned: Option<PageSummary>,
    /// Whether the page had DEAD line pointers before pruning (left by an
    /// earlier VACUUM that did not finish its index pass).
    pub saw_dead: bool,
    /// With indexes: the page's DEAD line pointers after pruning (filled by
    /// `vacuum_pinned_in` for VACUUM's index pass and second heap pass).
    pub dead_items: Vec<OffsetNumber>,
    /// The page's summary slot, built from the live tuples as they are
    /// classified (`access::sumbuild`) when the caller started it: VACUUM
    /// does, before each page, so that a page it makes all-visible is not
    /// read again for its summary.
    pub slot: SlotBuilder,
}

/// The tuples of a page as VACUUM's visibility-map decision needs them
/// (see `access::heap::vacuum`), against the horizon pruning was given.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PageSummary {
    /// Live tuples, and tuples whose inserter or deleter is still running.
    pub live: u32,
    /// Deleted tuples some snapshot may still see.
    pub recently_dead: u32,
    /// Every tuple is live and older than the horizon, and no line
    /// pointer is DEAD.
    pub all_visible: bool,
    /// Live tuples older than the horizon whose xmin is not frozen.
    pub unfrozen: u32,
}

impl Default for PruneScratch {
    fn default() -> PruneScratch {
        PruneScratch {
            status: Vec::new(),
            decided: Decisions::default(),
            ahead: Ahead::NONE,
            unpruned: None,
            saw_dead: false,
            dead_items: Vec::new(),
            slot: SlotBuilder::default(),
        }
    }
}

/// `satisfies_vacuum`'s answer: the status and the hint bits to set.
type Decision = (VacuumStatus, u16);

/// Recent decisions, most recent first, by (horizon, header key).
#[derive(Debug, Default)]
struct Decisions([Option<((Xid, HeaderKey), Decision)>; REMEMBERED]);

impl Decisions {
    /// The remembered decision for `key` under horizon `oldest_xmin`, else
    /// `decide()`'s, which is then remembered (the oldest one forgotten).
    fn decide(
        &mut self,
        oldest_xmin: Xid,
        key: HeaderKey,
        decide: impl FnOnce() -> Result<Decision>,
    ) -> Result<Decision> {
        let k = (oldest_xmin, key);
        let d = &mut self.0;
        if let Some(i) = d.iter().position(|e| e.is_some_and(|(ek, _)| ek == k)) {
            let hit = d[i];
            d[..=i].rotate_right(1);
            return Ok(hit.expect("found above").1);
        }
        let out = decide()?;
        d.rotate_right(1);
        d[0] = Some((k, out));
        Ok(out)
    }
}

/// What pruning one page did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PruneStats {
    /// Tuples removed (their line pointers made UNUSED or DEAD).
    pub removed: u32,
    /// Root line pointers turned into redirects.
    pub redirected: u32,
    /// Line pointers left DEAD.
    pub dead: u32,
    /// Bytes of free space gained.
    pub freed: usize,
}

/// The plan for one page: which line pointers change how.
#[derive(Debug, Default)]
struct Plan {
    redirected: Vec<(OffsetNumber, OffsetNumber)>,
    dead: Vec<OffsetNumber>,
    unused: Vec<OffsetNumber>,
    removed: u32,
}

impl Plan {
    /// A heap-only version that is gone: no index entry names it, so its
    /// line pointer is free at once.
    fn member_gone(&mut self, m: OffsetNumber) {
        self.unused.push(m);
    }

    /// The root of a chain whose versions are all gone.
    fn root_gone(&mut self, root: OffsetNumber, mode: PruneMode) {
        if mode == PruneMode::NoIndexes {
            self.unused.push(root);
        } else {
            self.dead.push(root);
        }
    }
}

/// The older of two xids, 0 standing for none.
fn older_xid(a: Xid, b: Xid) -> Xid {
    match (a, b) {
        (0, x) | (x, 0) => x,
        (a, b) => a.min(b),
    }
}

/// Decides what to prune on page `p` given each NORMAL tuple's status.
fn plan(
    p: &[u8],
    this_block: BlockNumber,
    status: &[Option<VacuumStatus>],
    mode: PruneMode,
) -> Plan {
    let max = page::max_offset(p);
    let mut visited = vec![false; max as usize + 1];
    let mut plan = Plan::default();
    let mut chain: Vec<OffsetNumber> = Vec::new();
    for root in 1..=max {
        let id = page::item_id(p, root);
        let start = match id.flags {
            LP_REDIRECT => id.off,
            LP_NORMAL => {
                let Some(t) = page::get_item(p, root).filter(|t| t.len() >= tuple::HEADER_SIZE)
                else {
                    continue;
                };
                if tuple::infomask2(t) & tuple::HEAP_ONLY_TUPLE != 0 {
                    continue; // a chain member, reached from its root
                }
                root
            }
            _ => {
                if id.flags == LP_DEAD && mode == PruneMode::NoIndexes {
                    plan.unused.push(root);
                }
                continue;
            }
        };
        chain.clear();
        let mut latest_dead: Option<usize> = None;
        let mut prior_xmax: Option<Xid> = None;
        let mut off = start;
        loop {
            if off == 0 || off > max || visited[off as usize] {
                break;
            }
            let Some(t) = page::get_item(p, off).filter(|t| t.len() >= tuple::HEADER_SIZE) else {
                break;
            };
            if prior_xmax.is_some_and(|x| x != tuple::xmin(t)) {
                break;
            }
            if off != root && tuple::infomask2(t) & tuple::HEAP_ONLY_TUPLE == 0 {
                break;
            }
            visited[off as usize] = true;
            chain.push(off);
            match status[off as usize] {
                Some(VacuumStatus::Dead) => latest_dead = Some(chain.len() - 1),
                Some(VacuumStatus::RecentlyDead) => {}
                _ => break, // live or in progress: the chain survives from here
            }
            if tuple::infomask2(t) & tuple::HEAP_HOT_UPDATED == 0 {
                break;
            }
            let (b, next) = tuple::ctid(t);
            if b != this_block {
                break;
            }
            prior_xmax = Some(tuple::xmax(t));
            off = next;
        }
        let Some(ld) = latest_dead else { continue };
        // Heap-only members of the dead prefix go; the root line pointer
        // (which may itself be chain[0]) stays as a redirect or DEAD.
        for &m in &chain[..=ld] {
            if m != root {
                plan.member_gone(m);
            }
        }
        plan.removed += ld as u32 + 1;
        match chain.get(ld + 1) {
            Some(&survivor) => plan.redirected.push((root, survivor)),
            None => plan.root_gone(root, mode),
        }
    }
    // Dead heap-only tuples no chain reaches (e.g. an aborted update's new version).
    for o in 1..=max {
        if !visited[o as usize] && status[o as usize] == Some(VacuumStatus::Dead) {
            let Some(t) = page::get_item(p, o) else {
                continue;
            };
            if tuple::infomask2(t) & tuple::HEAP_ONLY_TUPLE != 0 {
                plan.member_gone(o);
                plan.removed += 1;
            }
        }
    }
    plan
}

impl HeapRelation {
    /// Prunes heap page `block`: removes tuples dead to every transaction
    /// (deleted by transactions that committed before `oldest_xmin`, or
    /// inserted by aborted ones), shortens HOT chains, and compacts the page.
    /// With `no_indexes`, line pointers of wholly dead chains become UNUSED
    /// at once (nothing can refer to them); otherwise they stay DEAD for
    /// VACUUM's index pass ([`PruneMode::RootsIndexed`]). Waits for a
    /// cleanup lock.
    pub fn prune_page(
        &self,
        block: BlockNumber,
        oldest_xmin: Xid,
        no_indexes: bool,
    ) -> Result<PruneStats> {
        let buf = self.read_main(block)?;
        let mut g = buf.cleanup_lock();
        let mut scratch = PruneScratch::default();
        let mode = if no_indexes {
            PruneMode::NoIndexes
        } else {
            PruneMode::RootsIndexed
        };
        self.prune_locked(block, &mut g, oldest_xmin, mode, &mut scratch)
    }

    /// [`prune_page`](Self::prune_page) on a page whose cleanup lock the
    /// caller holds (`g`). Leaves in `scratch.status` each line pointer's
    /// [`VacuumStatus`] as found before pruning (index = offset; `None` for
    /// line pointers without a tuple), so that VACUUM can go on to decide
    /// the page's visibility-map bits under the same lock.
    pub(super) fn prune_locked(
        &self,
        block: BlockNumber,
        g: &mut BufferWriteGuard<'_>,
        oldest_xmin: Xid,
        mode: PruneMode,
        scratch: &mut PruneScratch,
    ) -> Result<PruneStats> {
        let no_indexes = mode == PruneMode::NoIndexes;
        let PruneScratch {
            status,
            decided,
            ahead,
            unpruned,
            saw_dead,
            slot,
            ..
        } = scratch;
        *saw_dead = false;
        let mut spread = std::mem::replace(ahead, Ahead::NONE).spread();
        *unpruned = None;
        status.clear();
        self.check_page(block, &g[..])?;
        if page::is_new(&g[..]) {
            return Ok(PruneStats::default());
        }
        let max = page::max_offset(&g[..]);
        status.resize(max as usize + 1, None);
        // The outcome depends only on the header's xmin, xmax and hint bits
        // (and on the transactions' states, which only move forward): a run
        // of tuples with the same three — every tuple of a freshly loaded
        // page — costs one decision, and other keys are looked up among
        // the recent decisions first ([`PruneScratch`] says why that is as
        // safe).
        let mut last: Option<(HeaderKey, Decision)> = None;
        let mut hinted = false;
        // Whether `plan` can find anything to do (a dead tuple, or a DEAD
        // line pointer to free): if not, it is skipped.
        let mut prunable = false;
        let mut sum = PageSummary {
            all_visible: true,
            ..PageSummary::default()
        };
        // PostgreSQL's `prstate.new_prune_xid`: the oldest xmax of the
        // deleted or updated versions that stay (recently dead, or whose
        // deleter is running), the page's prune hint afterwards.
        let mut keep_xmax: Xid = 0;
        for o in 1..=max {
            spread.step::<4>();
            let id = page::item_id(&g[..], o);
            if id.flags == LP_DEAD {
                prunable |= no_indexes;
                *saw_dead = true;
                sum.all_visible = false;
                continue;
            }
            let Some(t) =
                page::get_item_mut(&mut g[..], o).filter(|t| t.len() >= tuple::HEADER_SIZE)
            else {
                // A NORMAL line pointer without a whole tuple header.
                sum.all_visible &= id.flags != LP_NORMAL;
                continue;
            };
            let key = (
                tuple::xmin(t),
                tuple::xmax(t),
                tuple::infomask(t) & tuple::HEAP_HINT_BITS,
            );
            let (st, bits) = match last {
                Some((k, out)) if k == key => out,
                _ => {
                    let out = decided.decide(oldest_xmin, key, || {
                        satisfies_vacuum(t, oldest_xmin, self.txns())
                    })?;
                    last = Some((key, out));
                    out
                }
            };
            status[o as usize] = Some(st);
            prunable |= st == VacuumStatus::Dead;
            // Under the cleanup lock the xmax cannot have changed: set the
            // hints at once.
            if bits != 0 {
                hinted |= apply_hints(t, bits, key.1);
            }
            match st {
                VacuumStatus::Live => {
                    sum.live += 1;
                    let frozen =
                        tuple::infomask(t) & tuple::HEAP_XMIN_FROZEN == tuple::HEAP_XMIN_FROZEN;
                    if !frozen {
                        if key.0 < oldest_xmin {
                            sum.unfrozen += 1;
                        } else {
                            // Committed, but some snapshot may not see it yet.
                            sum.all_visible = false;
                            slot.stop();
                        }
                    }
                    // Live to everyone (or the builder stopped): a value of
                    // the page's summary if it ends all-visible.
                    slot.add(t);
                }
                VacuumStatus::RecentlyDead => {
                    sum.recently_dead += 1;
                    sum.all_visible = false;
                    slot.stop();
                    keep_xmax = older_xid(keep_xmax, key.1);
                }
                VacuumStatus::DeleteInProgress => {
                    sum.live += 1;
                    sum.all_visible = false;
                    slot.stop();
                    keep_xmax = older_xid(keep_xmax, key.1);
                }
                VacuumStatus::InsertInProgress => {
                    sum.live += 1;
                    sum.all_visible = false;
                    slot.stop();
                }
                VacuumStatus::Dead => sum.all_visible = false,
            }
        }
        spread.finish();
        if hinted {
            g.mark_dirty_hint();
        }
        if !prunable {
            *unpruned = Some(sum);
            return Ok(PruneStats::default());
        }
        match self.write_prune(block, g, status, mode, keep_xmax)? {
            Some(stats) => Ok(stats),
            None => {
                *unpruned = Some(sum);
                Ok(PruneStats::default())
            }
        }
    }

    /// Plans the prune of the page under `g` from `status` and, when it
    /// changes anything, logs and applies it with `prune_xid` as the
    /// page's new prune hint (`None`: nothing to do).
    fn write_prune(
        &self,
        block: BlockNumber,
        g: &mut BufferWriteGuard<'_>,
        status: &[Option<VacuumStatus>],
        mode: PruneMode,
        prune_xid: Xid,
    ) -> Result<Option<PruneStats>> {
        let plan = plan(&g[..], block, status, mode);
        if plan.redirected.is_empty() && plan.dead.is_empty() && plan.unused.is_empty() {
            return Ok(None);
        }
        let before = page::free_space(&g[..]);
        let stats = PruneStats {
            removed: plan.removed,
            redirected: plan.redirected.len() as u32,
            dead: plan.dead.len() as u32,
            freed: 0,
        };
        let rec = HeapRecord::Prune {
            redirected: plan.redirected,
            dead: plan.dead,
            unused: plan.unused,
            prune_xid,
        };
        self.log_apply(crate::storage::ForkNumber::Main, block, g, &rec, 0)?;
        let after = page::free_space(&g[..]);
        self.note_free_space(block, page::heap_free_space(&g[..]));
        Ok(Some(PruneStats {
            freed: after.saturating_sub(before),
            ..stats
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decisions_are_asked_once_per_key_and_horizon_and_the_oldest_goes_first() {
        let mut d = Decisions::default();
        let asked = std::cell::Cell::new(0);
        let ask = |d: &mut Decisions, horizon: Xid, key: HeaderKey, st: VacuumStatus| {
            d.decide(horizon, key, || {
                asked.set(asked.get() + 1);
                Ok((st, 7))
            })
            .unwrap()
        };
        let (a, b) = ((5, 0, 0), (5, 9, 0));
        assert_eq!(
            ask(&mut d, 100, a, VacuumStatus::Live),
            (VacuumStatus::Live, 7)
        );
        assert_eq!(
            ask(&mut d, 100, b, VacuumStatus::Dead).0,
            VacuumStatus::Dead
        );
        // Remembered: the closure's answer would differ, and is not asked.
        assert_eq!(
            ask(&mut d, 100, a, VacuumStatus::Dead).0,
            VacuumStatus::Live
        );
        assert_eq!(
            ask(&mut d, 100, b, VacuumStatus::Live).0,
            VacuumStatus::Dead
        );
        assert_eq!(asked.get(), 2);
        // Another horizon is another question.
        assert_eq!(
            ask(&mut d, 200, b, VacuumStatus::RecentlyDead).0,
            VacuumStatus::RecentlyDead
        );
        assert_eq!(asked.get(), 3);
        // Fill past REMEMBERED: the least recently used (a under 100) goes.
        ask(&mut d, 100, b, VacuumStatus::Dead);
        for x in 0..REMEMBERED as Xid - 2 {
            ask(&mut d, 100, (x + 1000, 0, 0), VacuumStatus::Live);
        }
        let before = asked.get();
        assert_eq!(
            ask(&mut d, 100, a, VacuumStatus::Dead).0,
            VacuumStatus::Dead
        );
        assert_eq!(asked.get(), before + 1, "a was forgotten and asked again");
        assert_eq!(
            ask(&mut d, 100, a, VacuumStatus::Live).0,
            VacuumStatus::Dead
        );
        assert_eq!(asked.get(), before + 1);
    }

    #[test]
    fn a_failed_decision_is_not_remembered() {
        let mut d = Decisions::default();
        let key = (5, 9, 0);
        assert!(d
            .decide(100, key, || Err(crate::err!(InternalError, "clog")))
            .is_err());
        assert_eq!(
            d.decide(100, key, || Ok((VacuumStatus::Dead, 0)))
                .unwrap()
                .0,
            VacuumStatus::Dead
        );
    }
}
