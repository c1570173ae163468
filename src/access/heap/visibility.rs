//! Tuple visibility: MVCC rules over a tuple header, reading hint bits first.
//!
//! [`satisfies_mvcc`] decides whether a snapshot sees a tuple. It looks at the
//! hint bits (`XMIN_COMMITTED`, `XMIN_INVALID`, `XMAX_COMMITTED`,
//! `XMAX_INVALID`) before anything else; only when they are unset does it ask
//! the snapshot whether the inserter/deleter was running, and then the commit
//! log. The answer comes with the hint bits the caller should set so the next
//! reader does not ask the commit log again. The function itself only reads
//! the tuple: a scan holds a *shared* content lock while it decides, and sets
//! the collected hints afterwards with [`apply_hints`] under an exclusive lock
//! when it can get one (hints are optional; skipping them is always safe).
//!
//! A hint bit is returned only when the answer is final: a committed or an
//! aborted (or crashed) transaction, never a running one. Because a delayed
//! [`apply_hints`] may run after another transaction set a new xmax, the xmax
//! hints are applied only if the xmax is still the one they were computed for.
//!
//! Command ids: a tuple inserted by the reader's own transaction is visible
//! when its cmin is below the snapshot's `curcid` and it was not deleted by an
//! earlier command of the same transaction. When a transaction deletes its own
//! tuple, the header's `cid` keeps both command ids as `cmin | cmax << 16`
//! with `HEAP_COMBOCID` when both fit in 16 bits (PostgreSQL keeps a combo-id
//! table instead); otherwise `cid` holds cmax alone and cmin is taken to be
//! below it, which holds for every deletion (the deleter saw the tuple).
//!
//! [`satisfies_vacuum`] classifies a tuple for VACUUM against the oldest
//! xmin still needed: dead, recently dead, live, insert or delete in progress.

use super::tuple::{
    infomask, raw_cid, xmax, xmin, HEAP_COMBOCID, HEAP_XMAX_COMMITTED, HEAP_XMAX_INVALID,
    HEAP_XMIN_COMMITTED, HEAP_XMIN_INVALID,
};
use crate::access::heap::tuple::set_infomask;
use crate::error::Result;
use crate::txn::{Clog, Snapshot, TxnManager, Xid};

/// The command ids stored in a tuple's `cid` field: (cmin, cmax), each only
/// when known.
#[inline]
fn cids(t: &[u8], deleted_by_inserter: bool) -> (Option<u32>, u32) {
    let raw = raw_cid(t);
    if infomask(t) & HEAP_COMBOCID != 0 {
        (Some(raw & 0xffff), raw >> 16)
    } else if deleted_by_inserter {
        (None, raw)
    } else {
        (Some(raw), raw)
    }
}

/// Whether `snap` sees tuple `t` (its header bytes), and the hint bits the
/// caller should set on it (0 when none). Consults `clog` only when hint bits
/// are unset and the snapshot does not settle it.
#[inline]
pub fn satisfies_mvcc(t: &[u8], snap: &Snapshot, clog: &Clog) -> Result<(bool, u16)> {
    let mask = infomask(t);
    let mut hints = 0u16;
    let xmin = xmin(t);
    if mask & HEAP_XMIN_COMMITTED == 0 {
        if mask & HEAP_XMIN_INVALID != 0 {
            return Ok((false, 0));
        }
        if snap.is_current(xmin) {
            let deleted_by_me = mask & HEAP_XMAX_INVALID == 0 && snap.is_current(xmax(t));
            let (cmin, cmax) = cids(t, deleted_by_me);
            // Inserted by this or a later command: not yet visible.
            if cmin.is_some_and(|c| c >= snap.curcid) {
                return Ok((false, 0));
            }
            if !deleted_by_me {
                return Ok((true, 0));
            }
            // Deleted by this transaction: visible until the deleting command.
            return Ok((cmax >= snap.curcid, 0));
        }
        if snap.xid_in_progress(xmin) {
            return Ok((false, 0));
        }
        if clog.did_commit(xmin)? {
            if clog.commit_hint_ok(xmin) {
                hints |= HEAP_XMIN_COMMITTED;
            }
        } else {
            // Aborted, or crashed before committing.
            return Ok((false, HEAP_XMIN_INVALID));
        }
    } else if mask & HEAP_XMIN_INVALID == 0 && snap.xid_in_progress(xmin) {
        // Committed, but after this snapshot was taken. (Both bits = frozen.)
        return Ok((false, 0));
    }
    // The inserter is visible; now the deleter.
    if mask & HEAP_XMAX_INVALID != 0 {
        return Ok((true, hints));
    }
    let xmax = xmax(t);
    if mask & HEAP_XMAX_COMMITTED == 0 {
        if snap.is_current(xmax) {
            let (_, cmax) = cids(t, xmin == xmax);
            return Ok((cmax >= snap.curcid, hints));
        }
        if snap.xid_in_progress(xmax) {
            return Ok((true, hints));
        }
        if !clog.did_commit(xmax)? {
            return Ok((true, hints | HEAP_XMAX_INVALID));
        }
        if clog.commit_hint_ok(xmax) {
            hints |= HEAP_XMAX_COMMITTED;
        }
    } else if snap.xid_in_progress(xmax) {
        return Ok((true, hints));
    }
    Ok((false, hints))
}

/// Sets hint bits computed by [`satisfies_mvcc`] or [`satisfies_vacuum`] on
/// tuple `t`, whose xmax was `seen_xmax` when they were computed. The xmax
/// hints are skipped when the xmax has changed since. Returns true when a bit
/// was newly set (the buffer should be marked dirty as a hint-only change).
/// The caller holds the buffer's exclusive content lock.
pub fn apply_hints(t: &mut [u8], hints: u16, seen_xmax: Xid) -> bool {
    let old = infomask(t);
    let mut m = old | (hints & (HEAP_XMIN_COMMITTED | HEAP_XMIN_INVALID));
    if xmax(t) == seen_xmax {
        m |= hints & (HEAP_XMAX_COMMITTED | HEAP_XMAX_INVALID);
    }
    if m != old {
        set_infomask(t, m);
        true
    } else {
        false
    }
}

/// The outcome of checking whether a tuple may be deleted or updated
/// (PostgreSQL's `TM_Result`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TmResult {
    /// The tuple is live for us: go ahead.
    Ok,
    /// The tuple is not visible to this command at all.
    Invisible,
    /// Already deleted or updated by this transaction, in this or a later
    /// command (an UPDATE must not change a row twice).
    SelfModified,
    /// Another running transaction deleted or updated it: wait for that
    /// transaction to end, then check again.
    BeingModified(Xid),
    /// A committed transaction updated it; the new version is at this tid.
    Updated(u32, u16),
    /// A committed transaction deleted it.
    Deleted,
}

/// Whether the transaction `me` at command `curcid` may delete or update
/// tuple `t` stored at `tid` (PostgreSQL's `HeapTupleSatisfiesUpdate`),
/// judged by the transactions' current state, not a snapshot: the caller's
/// isolation level decides what to do with `Updated`/`Deleted` (follow the
/// chain in READ COMMITTED, 40001 in REPEATABLE READ). Returns the result and
/// hint bits to set.
pub fn satisfies_update(
    t: &[u8],
    tid: (u32, u16),
    me: Xid,
    curcid: u32,
    txns: &TxnManager,
) -> Result<(TmResult, u16)> {
    let mask = infomask(t);
    let mut hints = 0u16;
    let xmin = xmin(t);
    let xmax = xmax(t);
    let deleted = |hints: u16| {
        let (b, o) = super::tuple::ctid(t);
        if (b, o) == tid {
            (TmResult::Deleted, hints)
        } else {
            (TmResult::Updated(b, o), hints)
        }
    };
    if mask & HEAP_XMIN_COMMITTED == 0 {
        if mask & HEAP_XMIN_INVALID != 0 {
            return Ok((TmResult::Invisible, 0));
        }
        if xmin == me {
            let deleted_by_me = mask & HEAP_XMAX_INVALID == 0 && xmax == me;
            let (cmin, cmax) = cids(t, deleted_by_me);
            if cmin.is_some_and(|c| c >= curcid) {
                return Ok((TmResult::Invisible, 0));
            }
            if !deleted_by_me {
                return Ok((TmResult::Ok, 0));
            }
            return Ok((
                if cmax >= curcid {
                    TmResult::SelfModified
                } else {
                    TmResult::Invisible
                },
                0,
            ));
        }
        if txns.is_running(xmin) {
            return Ok((TmResult::Invisible, 0));
        }
        if txns.clog().did_commit(xmin)? {
            if txns.clog().commit_hint_ok(xmin) {
                hints |= HEAP_XMIN_COMMITTED;
            }
        } else {
            return Ok((TmResult::Invisible, HEAP_XMIN_INVALID));
        }
    }
    if mask & HEAP_XMAX_INVALID != 0 {
        return Ok((TmResult::Ok, hints));
    }
    if mask & HEAP_XMAX_COMMITTED != 0 {
        return Ok(deleted(hints));
    }
    if xmax == me {
        let (_, cmax) = cids(t, xmin == xmax);
        return Ok((
            if cmax >= curcid {
                TmResult::SelfModified
            } else {
                TmResult::Invisible
            },
            hints,
        ));
    }
    if txns.is_running(xmax) {
        return Ok((TmResult::BeingModified(xmax), hints));
    }
    if txns.clog().did_commit(xmax)? {
        if txns.clog().commit_hint_ok(xmax) {
            hints |= HEAP_XMAX_COMMITTED;
        }
        return Ok(deleted(hints));
    }
    Ok((TmResult::Ok, hints | HEAP_XMAX_INVALID))
}

/// A tuple's state as VACUUM sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VacuumStatus {
    /// Invisible to everyone, now and later: removable.
    Dead,
    /// Deleted by a committed transaction, but some snapshot may still see it.
    RecentlyDead,
    /// Visible to every new snapshot (inserter committed, no valid deleter).
    Live,
    /// The inserting transaction is still running.
    InsertInProgress,
    /// The deleting transaction is still running.
    DeleteInProgress,
}

/// Classifies tuple `t` for VACUUM: rows deleted by a transaction that
/// committed before `oldest_xmin` are dead. Returns the status and the hint
/// bits the caller should set.
pub fn satisfies_vacuum(
    t: &[u8],
    oldest_xmin: Xid,
    txns: &TxnManager,
) -> Result<(VacuumStatus, u16)> {
    let mask = infomask(t);
    let mut hints = 0u16;
    let xmin = xmin(t);
    let xmax = xmax(t);
    if mask & HEAP_XMIN_COMMITTED == 0 {
        if mask & HEAP_XMIN_INVALID != 0 {
            return Ok((VacuumStatus::Dead, 0));
        }
        if txns.is_running(xmin) {
            if mask & HEAP_XMAX_INVALID == 0 && xmax == xmin {
                return Ok((VacuumStatus::DeleteInProgress, 0));
            }
            return Ok((VacuumStatus::InsertInProgress, 0));
        }
        if txns.clog().did_commit(xmin)? {
            if txns.clog().commit_hint_ok(xmin) {
                hints |= HEAP_XMIN_COMMITTED;
            }
        } else {
            return Ok((VacuumStatus::Dead, HEAP_XMIN_INVALID));
        }
    }
    if mask & HEAP_XMAX_INVALID != 0 {
        return Ok((VacuumStatus::Live, hints));
    }
    if mask & HEAP_XMAX_COMMITTED == 0 {
        if txns.is_running(xmax) {
            return Ok((VacuumStatus::DeleteInProgress, hints));
        }
        if txns.clog().did_commit(xmax)? {
            if txns.clog().commit_hint_ok(xmax) {
                hints |= HEAP_XMAX_COMMITTED;
            }
        } else {
            return Ok((VacuumStatus::Live, hints | HEAP_XMAX_INVALID));
        }
    }
    if xmax >= oldest_xmin {
        return Ok((VacuumStatus::RecentlyDead, hints));
    }
    Ok((VacuumStatus::Dead, hints))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access::heap::tuple::{
        form_tuple, set_raw_cid, set_xmax, set_xmin, Attr, TupleDesc,
    };
    use crate::storage::control::ControlFile;
    use crate::txn::XidStatus;
    use std::sync::{Arc, Mutex};

    fn tup(xmin: Xid, cid: u32) -> Vec<u8> {
        let d = TupleDesc::new(vec![Attr::fixed(4, 4)]).unwrap();
        let mut t = Vec::new();
        form_tuple(&d, &[Some(&[0; 4])], &mut t).unwrap();
        set_xmin(&mut t, xmin);
        set_raw_cid(&mut t, cid);
        t
    }

    fn delete(t: &mut [u8], xmax: Xid, raw_cid: u32, combo: bool) {
        set_xmax(t, xmax);
        set_raw_cid(t, raw_cid);
        let mut m = infomask(t) & !(HEAP_XMAX_INVALID | HEAP_XMAX_COMMITTED);
        if combo {
            m |= HEAP_COMBOCID;
        }
        set_infomask(t, m);
    }

    fn snap(xmin: Xid, xmax: Xid, xip: &[Xid], me: Xid, cid: u32) -> Snapshot {
        Snapshot {
            xmin,
            xmax,
            xip: xip.to_vec(),
            current_xid: me,
            curcid: cid,
        }
    }

    /// A commit log with 10 committed, 11 aborted, 12 committed, 13 never finished.
    fn clog(dir: &std::path::Path) -> Clog {
        let c = Clog::open(dir).unwrap();
        c.set_status(10, XidStatus::Committed).unwrap();
        c.set_status(11, XidStatus::Aborted).unwrap();
        c.set_status(12, XidStatus::Committed).unwrap();
        c
    }

    #[test]
    fn inserter_rules() {
        let dir = tempfile::tempdir().unwrap();
        let c = clog(dir.path());
        let later = snap(14, 14, &[], 0, 0);
        // Committed inserter: visible, XMIN_COMMITTED hint.
        assert_eq!(
            satisfies_mvcc(&tup(10, 0), &later, &c).unwrap(),
            (true, HEAP_XMIN_COMMITTED)
        );
        // Aborted inserter: never visible, XMIN_INVALID hint.
        assert_eq!(
            satisfies_mvcc(&tup(11, 0), &later, &c).unwrap(),
            (false, HEAP_XMIN_INVALID)
        );
        // Crashed (in progress in the log, not running for the snapshot): as aborted.
        assert_eq!(
            satisfies_mvcc(&tup(13, 0), &later, &c).unwrap(),
            (false, HEAP_XMIN_INVALID)
        );
        // Inserter running for the snapshot (even if it committed since): invisible, no hint.
        let old = snap(12, 14, &[12], 0, 0);
        assert_eq!(satisfies_mvcc(&tup(12, 0), &old, &c).unwrap(), (false, 0));
        let before = snap(10, 12, &[10], 0, 0);
        assert_eq!(
            satisfies_mvcc(&tup(12, 0), &before, &c).unwrap(),
            (false, 0)
        );
        // With the committed hint set, the snapshot still decides.
        let mut t = tup(12, 0);
        assert!(apply_hints(&mut t, HEAP_XMIN_COMMITTED, 0));
        assert_eq!(satisfies_mvcc(&t, &old, &c).unwrap(), (false, 0));
        assert_eq!(satisfies_mvcc(&t, &later, &c).unwrap(), (true, 0));
    }

    #[test]
    fn own_commands() {
        let dir = tempfile::tempdir().unwrap();
        let c = clog(dir.path());
        let t = tup(20, 2);
        // Same transaction: visible only to later commands.
        assert!(
            !satisfies_mvcc(&t, &snap(20, 21, &[20], 20, 2), &c)
                .unwrap()
                .0
        );
        assert!(
            satisfies_mvcc(&t, &snap(20, 21, &[20], 20, 3), &c)
                .unwrap()
                .0
        );
        // Other transactions never see it while it runs.
        assert!(
            !satisfies_mvcc(&t, &snap(20, 22, &[20], 21, 9), &c)
                .unwrap()
                .0
        );
        // Deleted by the same transaction at command 4 (combo cid 2|4<<16).
        let mut d = t.clone();
        delete(&mut d, 20, 2 | 4 << 16, true);
        for (cid, vis) in [(2, false), (3, true), (4, true), (5, false)] {
            assert_eq!(
                satisfies_mvcc(&d, &snap(20, 21, &[20], 20, cid), &c)
                    .unwrap()
                    .0,
                vis,
                "cid {cid}"
            );
        }
        // Without combo: cid holds cmax alone.
        let mut d = t.clone();
        delete(&mut d, 20, 70000, false);
        assert!(
            satisfies_mvcc(&d, &snap(20, 21, &[20], 20, 70000), &c)
                .unwrap()
                .0
        );
        assert!(
            !satisfies_mvcc(&d, &snap(20, 21, &[20], 20, 70001), &c)
                .unwrap()
                .0
        );
    }

    #[test]
    fn deleter_rules() {
        let dir = tempfile::tempdir().unwrap();
        let c = clog(dir.path());
        let now = snap(14, 14, &[], 0, 0);
        // Deleted by a committed transaction: invisible; hints for both.
        let mut t = tup(10, 0);
        delete(&mut t, 12, 0, false);
        assert_eq!(
            satisfies_mvcc(&t, &now, &c).unwrap(),
            (false, HEAP_XMIN_COMMITTED | HEAP_XMAX_COMMITTED)
        );
        // An older snapshot that saw the deleter running still sees the row.
        let old = snap(12, 13, &[12], 0, 0);
        assert_eq!(
            satisfies_mvcc(&t, &old, &c).unwrap(),
            (true, HEAP_XMIN_COMMITTED)
        );
        apply_hints(&mut t, HEAP_XMIN_COMMITTED | HEAP_XMAX_COMMITTED, 12);
        assert_eq!(satisfies_mvcc(&t, &old, &c).unwrap(), (true, 0));
        assert_eq!(satisfies_mvcc(&t, &now, &c).unwrap(), (false, 0));
        // Aborted deleter: visible, XMAX_INVALID.
        let mut t = tup(10, 0);
        delete(&mut t, 11, 0, false);
        assert_eq!(
            satisfies_mvcc(&t, &now, &c).unwrap(),
            (true, HEAP_XMIN_COMMITTED | HEAP_XMAX_INVALID)
        );
        // Deleter still running: visible to others, no xmax hint.
        let mut t = tup(10, 0);
        delete(&mut t, 15, 0, false);
        assert_eq!(
            satisfies_mvcc(&t, &snap(15, 16, &[15], 0, 0), &c).unwrap(),
            (true, HEAP_XMIN_COMMITTED)
        );
        // ... and invisible to the deleter's later commands.
        assert!(
            !satisfies_mvcc(&t, &snap(15, 16, &[15], 15, 1), &c)
                .unwrap()
                .0
        );
        assert!(
            satisfies_mvcc(&t, &snap(15, 16, &[15], 15, 0), &c)
                .unwrap()
                .0
        );
    }

    #[test]
    fn hints_make_the_commit_log_unnecessary() {
        let dir = tempfile::tempdir().unwrap();
        let c = clog(dir.path());
        let now = snap(14, 14, &[], 0, 0);
        let mut t = tup(10, 0);
        delete(&mut t, 11, 0, false);
        let (vis, hints) = satisfies_mvcc(&t, &now, &c).unwrap();
        assert!(vis);
        assert!(apply_hints(&mut t, hints, 11));
        assert!(!apply_hints(&mut t, hints, 11), "already set");
        // An empty commit log knows nothing of 10 or 11: the hints answer.
        let empty_dir = tempfile::tempdir().unwrap();
        let empty = Clog::open(empty_dir.path()).unwrap();
        assert_eq!(satisfies_mvcc(&t, &now, &empty).unwrap(), (true, 0));
    }

    #[test]
    fn stale_xmax_hints_are_not_applied() {
        let mut t = tup(10, 0);
        delete(&mut t, 11, 0, false);
        // Another transaction set a new xmax since the hint was computed.
        delete(&mut t, 14, 0, false);
        assert!(apply_hints(
            &mut t,
            HEAP_XMIN_COMMITTED | HEAP_XMAX_INVALID,
            11
        ));
        assert_eq!(infomask(&t) & HEAP_XMAX_INVALID, 0);
        assert_ne!(infomask(&t) & HEAP_XMIN_COMMITTED, 0);
    }

    #[test]
    fn update_checks() {
        let dir = tempfile::tempdir().unwrap();
        let (cf, _) = ControlFile::open_or_create(dir.path()).unwrap();
        let m = TxnManager::open(dir.path(), Arc::new(Mutex::new(cf))).unwrap();
        let ins = m.begin().unwrap();
        m.commit(ins).unwrap();
        let other = m.begin().unwrap();
        let me = m.begin().unwrap();
        let tid = (0, 1);
        let t = tup(ins, 0);
        assert_eq!(
            satisfies_update(&t, tid, me, 0, &m).unwrap(),
            (TmResult::Ok, HEAP_XMIN_COMMITTED)
        );
        let mut d = t.clone();
        delete(&mut d, other, 0, false);
        assert_eq!(
            satisfies_update(&d, tid, me, 0, &m).unwrap().0,
            TmResult::BeingModified(other)
        );
        m.commit(other).unwrap();
        crate::access::heap::tuple::set_ctid(&mut d, 0, 1);
        assert_eq!(
            satisfies_update(&d, tid, me, 0, &m).unwrap().0,
            TmResult::Deleted
        );
        crate::access::heap::tuple::set_ctid(&mut d, 3, 4);
        assert_eq!(
            satisfies_update(&d, tid, me, 0, &m).unwrap().0,
            TmResult::Updated(3, 4)
        );
        let mut mine = t.clone();
        delete(&mut mine, me, 2, false);
        assert_eq!(
            satisfies_update(&mine, tid, me, 2, &m).unwrap().0,
            TmResult::SelfModified
        );
        assert_eq!(
            satisfies_update(&mine, tid, me, 3, &m).unwrap().0,
            TmResult::Invisible
        );
        let own = tup(me, 1);
        assert_eq!(
            satisfies_update(&own, tid, me, 1, &m).unwrap().0,
            TmResult::Invisible
        );
        assert_eq!(
            satisfies_update(&own, tid, me, 2, &m).unwrap().0,
            TmResult::Ok
        );
        let aborter = m.begin().unwrap();
        let mut a = t.clone();
        delete(&mut a, aborter, 0, false);
        m.abort(aborter).unwrap();
        assert_eq!(
            satisfies_update(&a, tid, me, 0, &m).unwrap(),
            (TmResult::Ok, HEAP_XMIN_COMMITTED | HEAP_XMAX_INVALID)
        );
    }

    #[test]
    fn vacuum_classification() {
        let dir = tempfile::tempdir().unwrap();
        let (cf, _) = ControlFile::open_or_create(dir.path()).unwrap();
        let m = TxnManager::open(dir.path(), Arc::new(Mutex::new(cf))).unwrap();
        let committed = m.begin().unwrap(); // 3
        let aborted = m.begin().unwrap(); // 4
        let running = m.begin().unwrap(); // 5
        let deleter = m.begin().unwrap(); // 6
        m.commit(committed).unwrap();
        m.abort(aborted).unwrap();
        m.commit(deleter).unwrap();
        let live = tup(committed, 0);
        assert_eq!(
            satisfies_vacuum(&live, 7, &m).unwrap(),
            (VacuumStatus::Live, HEAP_XMIN_COMMITTED)
        );
        assert_eq!(
            satisfies_vacuum(&tup(aborted, 0), 7, &m).unwrap().0,
            VacuumStatus::Dead
        );
        assert_eq!(
            satisfies_vacuum(&tup(running, 0), 7, &m).unwrap().0,
            VacuumStatus::InsertInProgress
        );
        let mut own = tup(running, 0);
        delete(&mut own, running, 0, false);
        assert_eq!(
            satisfies_vacuum(&own, 7, &m).unwrap().0,
            VacuumStatus::DeleteInProgress
        );
        let mut d = tup(committed, 0);
        delete(&mut d, deleter, 0, false);
        assert_eq!(
            satisfies_vacuum(&d, 5, &m).unwrap().0,
            VacuumStatus::RecentlyDead
        );
        assert_eq!(
            satisfies_vacuum(&d, 7, &m).unwrap(),
            (
                VacuumStatus::Dead,
                HEAP_XMIN_COMMITTED | HEAP_XMAX_COMMITTED
            )
        );
        let mut d = tup(committed, 0);
        delete(&mut d, running, 0, false);
        assert_eq!(
            satisfies_vacuum(&d, 7, &m).unwrap().0,
            VacuumStatus::DeleteInProgress
        );
        let mut d = tup(committed, 0);
        delete(&mut d, aborted, 0, false);
        assert_eq!(satisfies_vacuum(&d, 7, &m).unwrap().0, VacuumStatus::Live);
    }
}
