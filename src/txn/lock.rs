//! Heavyweight locks: table locks held to the end of a transaction, and
//! transaction locks through which a writer waits for another transaction
//! to end — with deadlock detection over both, as PostgreSQL's `lock.c` and
//! `deadlock.c` do (much simplified).
//!
//! - A lock is a ([`LockTag`], [`LockMode`]) held by an [`Owner`] (one
//!   transaction of one session; read-only transactions have no xid, so
//!   owners are their own counter, PostgreSQL's "virtual transaction id").
//! - Modes conflict as PostgreSQL's table (`AccessShare` only with
//!   `AccessExclusive`, and so on); an owner never conflicts with itself.
//! - Waiters queue per tag: a new request that conflicts with an earlier
//!   waiter waits behind it (so a stream of readers cannot starve a
//!   `DROP TABLE`), unless the owner already holds a lock on that tag.
//! - Every transaction with an xid holds `Exclusive` on
//!   `Transaction(xid)` until it ends; waiting for a transaction is taking
//!   `Share` on it and letting go at once ([`LockManager::wait_for_xact`]).
//! - A waiter that has waited [`DEADLOCK_TIMEOUT`] looks for a cycle in the
//!   wait-for graph (edges from each waiter to the owners that hold or queue
//!   ahead with a conflicting mode); when it is on one, it gives up with
//!   40P01 `deadlock detected`, which breaks the cycle.
//! - Waits check the statement's cancel flag every few milliseconds.
//!
//! Locks are released all at once when the transaction ends
//! ([`LockManager::release_all`]), after its outcome is in the commit log.
//!
//! [`LockManager::status`] is a read-only view of the table, as
//! PostgreSQL's `pg_locks`: one row per held lock (`granted`) and per
//! waiting request (not `granted`). It is how a caller or a test sees that
//! a transaction has reached its wait, and what it waits for.

// hashbrown's default hasher (foldhash): the lock table is hashed several
// times per statement, and SipHash's DoS resistance buys nothing here.
use hashbrown::{HashMap, HashSet};
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::Xid;
use crate::err;
use crate::error::Result;

/// How long a waiter waits before it checks for a deadlock (PostgreSQL's
/// `deadlock_timeout` default).
pub const DEADLOCK_TIMEOUT: Duration = Duration::from_secs(1);

/// How often a waiter wakes to look at its cancel flag.
const POLL: Duration = Duration::from_millis(20);

/// Who holds or waits for a lock: one transaction of one session.
pub type Owner = u64;

/// What is locked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LockTag {
    /// A table, by its object id.
    Relation(u32),
    /// A transaction, by its xid (held `Exclusive` by the transaction).
    Transaction(Xid),
}

impl fmt::Display for LockTag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LockTag::Relation(oid) => write!(f, "relation {oid}"),
            LockTag::Transaction(xid) => write!(f, "transaction {xid}"),
        }
    }
}

/// Lock modes, the subset of PostgreSQL's that heapdb takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LockMode {
    /// Reading a table (SELECT).
    AccessShare,
    /// Changing rows (INSERT, UPDATE, DELETE, COPY FROM).
    RowExclusive,
    /// VACUUM and ANALYZE: conflict with each other and with DDL, not with
    /// readers or writers.
    ShareUpdateExclusive,
    /// Waiting for a transaction to end.
    Share,
    /// Held by a transaction on its own xid.
    Exclusive,
    /// DROP TABLE, TRUNCATE: conflicts with everything.
    AccessExclusive,
}

impl LockMode {
    /// Whether `self` and `other`, held by different owners, conflict.
    pub fn conflicts(self, other: LockMode) -> bool {
        use LockMode::*;
        // PostgreSQL's LockConflicts table, restricted to these modes.
        let conflicting: &[LockMode] = match self {
            AccessShare => &[AccessExclusive],
            RowExclusive => &[Share, Exclusive, AccessExclusive],
            ShareUpdateExclusive => &[ShareUpdateExclusive, Share, Exclusive, AccessExclusive],
            Share => &[
                RowExclusive,
                ShareUpdateExclusive,
                Exclusive,
                AccessExclusive,
            ],
            Exclusive => &[
                RowExclusive,
                ShareUpdateExclusive,
                Share,
                Exclusive,
                AccessExclusive,
            ],
            AccessExclusive => &[
                AccessShare,
                RowExclusive,
                ShareUpdateExclusive,
                Share,
                Exclusive,
                AccessExclusive,
            ],
        };
        conflicting.contains(&other)
    }

    /// PostgreSQL's name for the mode, as in `deadlock detected` details.
    pub fn name(self) -> &'static str {
        match self {
            LockMode::AccessShare => "AccessShareLock",
            LockMode::RowExclusive => "RowExclusiveLock",
            LockMode::ShareUpdateExclusive => "ShareUpdateExclusiveLock",
            LockMode::Share => "ShareLock",
            LockMode::Exclusive => "ExclusiveLock",
            LockMode::AccessExclusive => "AccessExclusiveLock",
        }
    }
}

/// One row of [`LockManager::status`]: a lock held, or a request waiting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LockStatus {
    /// What is locked.
    pub tag: LockTag,
    /// The holder or waiter.
    pub owner: Owner,
    /// The mode held or asked for.
    pub mode: LockMode,
    /// Held (true) or waited for (false).
    pub granted: bool,
}

/// Holders and the queue of waiters of one tag.
#[derive(Default)]
struct Entry {
    /// Granted locks (an owner appears once per mode it holds).
    holders: Vec<(Owner, LockMode)>,
    /// Waiters in arrival order.
    queue: Vec<(Owner, LockMode)>,
}

impl Entry {
    fn holds_any(&self, owner: Owner) -> bool {
        self.holders.iter().any(|&(o, _)| o == owner)
    }

    /// The owners that keep `owner` from getting `mode` now: conflicting
    /// holders, then conflicting waiters queued ahead of it (those only when
    /// it holds nothing on the tag yet).
    fn blockers(&self, owner: Owner, mode: LockMode) -> Vec<Owner> {
        let mut out: Vec<Owner> = self
            .holders
            .iter()
            .filter(|&&(o, m)| o != owner && m.conflicts(mode))
            .map(|&(o, _)| o)
            .collect();
        if !self.holds_any(owner) {
            for &(o, m) in &self.queue {
                if o == owner {
                    break;
                }
                if m.conflicts(mode) {
                    out.push(o);
                }
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }
}

#[derive(Default)]
struct State {
    /// Every tag anyone holds or waits for.
    locks: HashMap<LockTag, Entry>,
    /// What each waiting owner waits for.
    waiting: HashMap<Owner, (LockTag, LockMode)>,
    /// The tags each owner holds something on (a transaction holds a few).
    held: HashMap<Owner, Vec<LockTag>>,
    /// Emptied vectors of `held` and of entries' holders, kept for the next
    /// transaction: each autocommitted statement takes two locks under a
    /// new owner and a new transaction tag, and would otherwise allocate
    /// and free both vectors every time.
    spare_tags: Vec<Vec<LockTag>>,
    /// See `spare_tags`.
    spare_holders: Vec<Vec<(Owner, LockMode)>>,
}

/// How many emptied vectors of each kind [`State`] keeps.
const SPARE: usize = 16;

impl State {
    /// Removes `tag`'s entry (no holder, no waiter left), keeping its
    /// holder vector for reuse.
    fn remove_entry(&mut self, tag: LockTag) {
        if let Some(e) = self.locks.remove(&tag) {
            if self.spare_holders.len() < SPARE && e.holders.capacity() > 0 {
                self.spare_holders.push(e.holders);
            }
        }
    }
}

/// The lock table of one database.
#[derive(Default)]
pub struct LockManager {
    state: Mutex<State>,
    changed: Condvar,
    next_owner: AtomicU64,
}

impl LockManager {
    /// An empty lock table.
    pub fn new() -> LockManager {
        LockManager {
            next_owner: AtomicU64::new(1),
            ..LockManager::default()
        }
    }

    /// A fresh owner id for a new transaction.
    pub fn new_owner(&self) -> Owner {
        self.next_owner.fetch_add(1, Ordering::Relaxed)
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().expect("lock manager mutex poisoned")
    }

    /// Takes `mode` on `tag` for `owner`, waiting while others hold or
    /// queue for conflicting modes. Returns whether it had to wait. Fails
    /// with 57014 when `cancel` is set while waiting, and with 40P01 when
    /// the wait closes a cycle of waiters.
    pub fn acquire(
        &self,
        owner: Owner,
        tag: LockTag,
        mode: LockMode,
        cancel: &AtomicBool,
    ) -> Result<bool> {
        let mut st = self.state();
        let entry = st.locks.entry(tag).or_default();
        if entry.holders.contains(&(owner, mode)) {
            return Ok(false);
        }
        if entry.blockers(owner, mode).is_empty() {
            grant(&mut st, owner, tag, mode);
            return Ok(false);
        }
        entry.queue.push((owner, mode));
        st.waiting.insert(owner, (tag, mode));
        let start = Instant::now();
        let mut checked = false;
        loop {
            st = self
                .changed
                .wait_timeout(st, POLL)
                .expect("lock manager mutex poisoned")
                .0;
            let entry = st.locks.get(&tag).expect("a waited-for tag stays");
            if entry.blockers(owner, mode).is_empty() {
                dequeue(&mut st, owner, tag);
                grant(&mut st, owner, tag, mode);
                // Others queued behind this waiter may now go too.
                self.changed.notify_all();
                return Ok(true);
            }
            if cancel.load(Ordering::Relaxed) {
                dequeue(&mut st, owner, tag);
                self.changed.notify_all();
                return Err(err!(
                    QueryCanceled,
                    "canceling statement due to user request"
                ));
            }
            if !checked && start.elapsed() >= DEADLOCK_TIMEOUT {
                checked = true;
                if let Some(cycle) = find_cycle(&st, owner) {
                    let detail = describe_cycle(&st, &cycle);
                    dequeue(&mut st, owner, tag);
                    self.changed.notify_all();
                    return Err(err!(DeadlockDetected, "deadlock detected").with_detail(detail));
                }
            }
        }
    }

    /// Waits until transaction `xid` ends (taking and dropping `Share` on
    /// it). Returns at once when it is not running.
    pub fn wait_for_xact(&self, owner: Owner, xid: Xid, cancel: &AtomicBool) -> Result<()> {
        let tag = LockTag::Transaction(xid);
        self.acquire(owner, tag, LockMode::Share, cancel)?;
        let mut st = self.state();
        release_one(&mut st, owner, tag, LockMode::Share);
        drop(st);
        self.changed.notify_all();
        Ok(())
    }

    /// Releases `mode` on `tag` held by `owner` before its transaction
    /// ends: for a lock needed only for a moment, as PostgreSQL's
    /// `UnlockRelationOid` after VACUUM has looked a name up. Nothing
    /// happens when it is not held.
    pub fn release(&self, owner: Owner, tag: LockTag, mode: LockMode) {
        let mut st = self.state();
        release_one(&mut st, owner, tag, mode);
        let wake = !st.waiting.is_empty();
        drop(st);
        if wake {
            self.changed.notify_all();
        }
    }

    /// Releases every lock `owner` holds (at the end of its transaction).
    pub fn release_all(&self, owner: Owner) {
        let mut st = self.state();
        let Some(mut tags) = st.held.remove(&owner) else {
            return;
        };
        for &tag in &tags {
            if let Some(e) = st.locks.get_mut(&tag) {
                e.holders.retain(|&(o, _)| o != owner);
                if e.holders.is_empty() && e.queue.is_empty() {
                    st.remove_entry(tag);
                }
            }
        }
        if st.spare_tags.len() < SPARE {
            tags.clear();
            st.spare_tags.push(tags);
        }
        // Waiters register in `waiting` under the mutex before they sleep:
        // with none, skip the wake-up (a system call per transaction end).
        let wake = !st.waiting.is_empty();
        drop(st);
        if wake {
            self.changed.notify_all();
        }
    }

    /// The modes `owner` holds on `tag` (for tests and inspection).
    pub fn held_modes(&self, owner: Owner, tag: LockTag) -> Vec<LockMode> {
        let st = self.state();
        st.locks.get(&tag).map_or(Vec::new(), |e| {
            e.holders
                .iter()
                .filter(|&&(o, _)| o == owner)
                .map(|&(_, m)| m)
                .collect()
        })
    }

    /// Every lock held and every request waiting, at one instant: per tag,
    /// its holders then its waiters in queue order (tags in no particular
    /// order). Changes nothing.
    pub fn status(&self) -> Vec<LockStatus> {
        let st = self.state();
        let mut out = Vec::new();
        for (&tag, e) in &st.locks {
            let row = |granted| {
                move |&(owner, mode): &(Owner, LockMode)| LockStatus {
                    tag,
                    owner,
                    mode,
                    granted,
                }
            };
            out.extend(e.holders.iter().map(row(true)));
            out.extend(e.queue.iter().map(row(false)));
        }
        out
    }

    /// The requests waiting now (the rows of [`LockManager::status`] not
    /// granted).
    pub fn waiters(&self) -> Vec<LockStatus> {
        let st = self.state();
        st.waiting
            .iter()
            .map(|(&owner, &(tag, mode))| LockStatus {
                tag,
                owner,
                mode,
                granted: false,
            })
            .collect()
    }

    /// Number of tags with holders or waiters (for tests: nothing leaks).
    pub fn len(&self) -> usize {
        self.state().locks.len()
    }

    /// Whether no lock is held or awaited.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

fn grant(st: &mut State, owner: Owner, tag: LockTag, mode: LockMode) {
    let State {
        locks,
        held,
        spare_tags,
        spare_holders,
        ..
    } = st;
    let e = locks.entry(tag).or_insert_with(|| Entry {
        holders: spare_holders.pop().unwrap_or_default(),
        queue: Vec::new(),
    });
    e.holders.push((owner, mode));
    let tags = held
        .entry(owner)
        .or_insert_with(|| spare_tags.pop().unwrap_or_default());
    if !tags.contains(&tag) {
        tags.push(tag);
    }
}

fn dequeue(st: &mut State, owner: Owner, tag: LockTag) {
    st.waiting.remove(&owner);
    if let Some(e) = st.locks.get_mut(&tag) {
        e.queue.retain(|&(o, _)| o != owner);
        if e.holders.is_empty() && e.queue.is_empty() {
            st.remove_entry(tag);
        }
    }
}

fn release_one(st: &mut State, owner: Owner, tag: LockTag, mode: LockMode) {
    let Some(e) = st.locks.get_mut(&tag) else {
        return;
    };
    if let Some(i) = e.holders.iter().position(|&h| h == (owner, mode)) {
        e.holders.swap_remove(i);
    }
    let still = e.holds_any(owner);
    if e.holders.is_empty() && e.queue.is_empty() {
        st.remove_entry(tag);
    }
    if !still {
        if let Some(tags) = st.held.get_mut(&owner) {
            tags.retain(|&t| t != tag);
        }
    }
}

/// The owners `w` waits for, or nothing when it is not waiting.
fn edges(st: &State, w: Owner) -> Vec<Owner> {
    match st.waiting.get(&w) {
        Some(&(tag, mode)) => st
            .locks
            .get(&tag)
            .map_or(Vec::new(), |e| e.blockers(w, mode)),
        None => Vec::new(),
    }
}

/// A cycle of waiters through `me` (`me` first), if there is one.
fn find_cycle(st: &State, me: Owner) -> Option<Vec<Owner>> {
    let mut path = vec![me];
    let mut seen = HashSet::new();
    fn dfs(st: &State, me: Owner, path: &mut Vec<Owner>, seen: &mut HashSet<Owner>) -> bool {
        let at = *path.last().expect("the path starts at me");
        for next in edges(st, at) {
            if next == me {
                return true;
            }
            if seen.insert(next) {
                path.push(next);
                if dfs(st, me, path, seen) {
                    return true;
                }
                path.pop();
            }
        }
        false
    }
    dfs(st, me, &mut path, &mut seen).then_some(path)
}

/// PostgreSQL's DETAIL lines for a deadlock: who waits for what, blocked
/// by whom.
fn describe_cycle(st: &State, cycle: &[Owner]) -> String {
    let mut lines = Vec::new();
    for (i, &w) in cycle.iter().enumerate() {
        let next = cycle[(i + 1) % cycle.len()];
        if let Some(&(tag, mode)) = st.waiting.get(&w) {
            lines.push(format!(
                "Process {w} waits for {} on {tag}; blocked by process {next}.",
                mode.name()
            ));
        }
    }
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::thread;

    fn no_cancel() -> AtomicBool {
        AtomicBool::new(false)
    }

    /// Waits until `owner` is queued for `mode` on `tag` (the thread that
    /// asked has reached its wait); fails the test after ten seconds.
    fn await_waiter(lm: &LockManager, owner: Owner, tag: LockTag, mode: LockMode) {
        let want = LockStatus {
            tag,
            owner,
            mode,
            granted: false,
        };
        let start = Instant::now();
        while !lm.waiters().contains(&want) {
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "timed out waiting for {owner} to wait for {mode:?} on {tag}"
            );
            thread::sleep(Duration::from_millis(1));
        }
        assert!(lm.status().contains(&want), "status shows the waiter");
    }

    #[test]
    fn conflict_table_matches_postgresql() {
        use LockMode::*;
        let all = [
            AccessShare,
            RowExclusive,
            ShareUpdateExclusive,
            Share,
            Exclusive,
            AccessExclusive,
        ];
        // PostgreSQL's conflict table, row by row (lock.c LockConflicts).
        let expected: [[bool; 6]; 6] = [
            [false, false, false, false, false, true],
            [false, false, false, true, true, true],
            [false, false, true, true, true, true],
            [false, true, true, false, true, true],
            [false, true, true, true, true, true],
            [true, true, true, true, true, true],
        ];
        for (i, a) in all.iter().enumerate() {
            for (j, b) in all.iter().enumerate() {
                assert_eq!(a.conflicts(*b), expected[i][j], "{a:?} vs {b:?}");
            }
        }
    }

    #[test]
    fn compatible_locks_are_granted_and_released() {
        let lm = LockManager::new();
        let c = no_cancel();
        let (a, b) = (lm.new_owner(), lm.new_owner());
        let t = LockTag::Relation(10);
        assert!(!lm.acquire(a, t, LockMode::AccessShare, &c).unwrap());
        assert!(!lm.acquire(b, t, LockMode::RowExclusive, &c).unwrap());
        let v = lm.new_owner();
        assert!(!lm
            .acquire(v, t, LockMode::ShareUpdateExclusive, &c)
            .unwrap());
        assert_eq!(lm.held_modes(v, t), vec![LockMode::ShareUpdateExclusive]);
        lm.release_all(a);
        lm.release_all(b);
        lm.release_all(v);
        assert!(lm.is_empty());
    }

    #[test]
    fn exclusive_waits_for_readers_and_readers_queue_behind_it() {
        let lm = Arc::new(LockManager::new());
        let t = LockTag::Relation(7);
        let reader = lm.new_owner();
        lm.acquire(reader, t, LockMode::AccessShare, &no_cancel())
            .unwrap();
        let dropper = lm.new_owner();
        let lm2 = lm.clone();
        let h = thread::spawn(move || {
            lm2.acquire(dropper, t, LockMode::AccessExclusive, &no_cancel())
                .unwrap()
        });
        await_waiter(&lm, dropper, t, LockMode::AccessExclusive);
        assert!(!h.is_finished(), "AccessExclusive must wait for the reader");
        // A new reader queues behind the waiting AccessExclusive.
        let late = lm.new_owner();
        let lm3 = lm.clone();
        let h2 = thread::spawn(move || {
            lm3.acquire(late, t, LockMode::AccessShare, &no_cancel())
                .unwrap();
            lm3.held_modes(dropper, t)
        });
        await_waiter(&lm, late, t, LockMode::AccessShare);
        assert!(!h2.is_finished(), "a later reader waits behind the queue");
        let held = |owner, mode| LockStatus {
            tag: t,
            owner,
            mode,
            granted: true,
        };
        let status = lm.status();
        assert_eq!(status.len(), 3, "{status:?}");
        assert!(status.contains(&held(reader, LockMode::AccessShare)));
        lm.release_all(reader);
        assert!(h.join().unwrap(), "the dropper waited");
        // The dropper holds its lock now; the late reader still waits.
        assert!(lm
            .status()
            .contains(&held(dropper, LockMode::AccessExclusive)));
        await_waiter(&lm, late, t, LockMode::AccessShare);
        assert!(!h2.is_finished(), "the late reader waits for the dropper");
        lm.release_all(dropper);
        assert!(h2.join().unwrap().is_empty(), "the dropper had let go");
        lm.release_all(late);
        assert!(lm.is_empty());
    }

    #[test]
    fn an_owner_never_waits_for_itself() {
        let lm = LockManager::new();
        let c = no_cancel();
        let a = lm.new_owner();
        let t = LockTag::Relation(1);
        lm.acquire(a, t, LockMode::AccessShare, &c).unwrap();
        assert!(!lm.acquire(a, t, LockMode::AccessExclusive, &c).unwrap());
        assert_eq!(lm.held_modes(a, t).len(), 2);
        lm.release_all(a);
        assert!(lm.is_empty());
    }

    #[test]
    fn waiting_for_a_transaction_ends_when_it_does() {
        let lm = Arc::new(LockManager::new());
        let writer = lm.new_owner();
        lm.acquire(
            writer,
            LockTag::Transaction(100),
            LockMode::Exclusive,
            &no_cancel(),
        )
        .unwrap();
        let waiter = lm.new_owner();
        let lm2 = lm.clone();
        let h = thread::spawn(move || lm2.wait_for_xact(waiter, 100, &no_cancel()));
        await_waiter(&lm, waiter, LockTag::Transaction(100), LockMode::Share);
        assert!(!h.is_finished());
        lm.release_all(writer);
        h.join().unwrap().unwrap();
        assert!(lm.is_empty(), "the waiter let go of its Share lock");
        // Not running: returns at once.
        lm.wait_for_xact(waiter, 100, &no_cancel()).unwrap();
        assert!(lm.is_empty());
    }

    #[test]
    fn cancel_stops_a_wait_and_leaves_no_trace() {
        let lm = Arc::new(LockManager::new());
        let t = LockTag::Relation(3);
        let a = lm.new_owner();
        lm.acquire(a, t, LockMode::AccessExclusive, &no_cancel())
            .unwrap();
        let cancel = Arc::new(AtomicBool::new(false));
        let (lm2, c2) = (lm.clone(), cancel.clone());
        let b = lm.new_owner();
        let h = thread::spawn(move || lm2.acquire(b, t, LockMode::AccessShare, &c2));
        await_waiter(&lm, b, t, LockMode::AccessShare);
        cancel.store(true, Ordering::Relaxed);
        let e = h.join().unwrap().unwrap_err();
        assert_eq!(e.code.code(), "57014");
        assert!(
            lm.waiters().is_empty(),
            "the cancelled request left the queue"
        );
        lm.release_all(a);
        assert!(lm.is_empty());
    }

    #[test]
    fn a_deadlock_is_detected_and_broken() {
        let lm = Arc::new(LockManager::new());
        let (a, b) = (lm.new_owner(), lm.new_owner());
        let (t1, t2) = (LockTag::Transaction(501), LockTag::Transaction(502));
        lm.acquire(a, t1, LockMode::Exclusive, &no_cancel())
            .unwrap();
        lm.acquire(b, t2, LockMode::Exclusive, &no_cancel())
            .unwrap();
        let lm2 = lm.clone();
        let ha = thread::spawn(move || {
            let r = lm2.wait_for_xact(a, 502, &no_cancel());
            lm2.release_all(a);
            r
        });
        let lm3 = lm.clone();
        let hb = thread::spawn(move || {
            let r = lm3.wait_for_xact(b, 501, &no_cancel());
            lm3.release_all(b);
            r
        });
        let (ra, rb) = (ha.join().unwrap(), hb.join().unwrap());
        let errors: Vec<_> = [&ra, &rb]
            .into_iter()
            .filter_map(|r| r.as_ref().err())
            .collect();
        assert_eq!(errors.len(), 1, "exactly one side gives up: {ra:?} {rb:?}");
        assert_eq!(errors[0].code.code(), "40P01");
        assert_eq!(errors[0].message, "deadlock detected");
        let detail = errors[0].detail.as_deref().unwrap();
        assert!(
            detail.contains("waits for ShareLock on transaction"),
            "{detail}"
        );
        assert_eq!(detail.lines().count(), 2, "{detail}");
        assert!(lm.is_empty());
    }
}
