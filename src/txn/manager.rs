//! The transaction manager: hands out transaction ids, records commits and
//! aborts in the commit log, and builds snapshots.
//!
//! Xid allocation: the control file records an upper bound of the ids handed
//! out; ids are reserved [`XID_RESERVE`] at a time so the control file is
//! written (and fsynced: a write, a rename and two fsyncs) once per range,
//! not once per transaction nor once per thousand (a script of 100,000
//! autocommitted INSERTs paid ~100 of them, milliseconds each on a loaded
//! disk). After a
//! crash the next id starts at the recorded bound; the skipped ids stay
//! "in progress" in the commit log, which visibility treats as aborted since
//! no snapshot lists them. A clean [`TxnManager::shutdown`] records the exact
//! next id.
//!
//! Invariants: an xid is entered in the running set under the same lock that
//! advances the counter, so a snapshot can never miss a running transaction;
//! a commit (or abort) is recorded in the commit log *before* the xid leaves
//! the running set, so a reader whose snapshot does not list it always finds
//! its final status.
//!
//! Commits and checkpoints: a session holds [`TxnManager::commit_in_flight`]
//! (a shared lock) from before it inserts its commit record until the
//! commit is in the commit log, and a checkpoint, once its redo point is
//! fixed, waits for every commit in flight
//! ([`TxnManager::wait_for_commits_in_flight`]) before it writes the commit
//! log. So a commit whose record lies before the redo point is in the pages
//! the checkpoint writes, and recovery (which replays from the redo point)
//! needs no commit-log page written since: the commit log's pages stay in
//! memory between checkpoints ([`super::clog`]).
//!
//! Locking: one mutex over the counter, the running set and the registered
//! snapshot xmins; the commit log and control file have their own locks,
//! taken while holding it only for range reservation (control file) and never
//! the other way round.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Condvar, Mutex, RwLock, RwLockReadGuard};

use super::clog::{Clog, XidStatus};
use super::snapshot::Snapshot;
use super::{CommandId, Xid, INVALID_XID};
use crate::err;
use crate::error::Result;
use crate::storage::control::ControlFile;

/// Xids reserved in the control file per write. A crash skips at most this
/// many ids, so 4 billion ids last ~65,000 crashes.
pub const XID_RESERVE: u32 = 1 << 16;

/// State behind the manager's mutex.
#[derive(Debug)]
struct State {
    /// The next xid to hand out.
    next_xid: Xid,
    /// Xids below this are reserved in the control file.
    reserved_until: Xid,
    /// Running transactions (their xids); the value is unused.
    running: BTreeMap<Xid, ()>,
    /// Xmins of registered snapshots, with a count of each.
    snapshot_xmins: BTreeMap<Xid, usize>,
    /// Threads inside [`TxnManager::wait_for`]: a transaction's end
    /// signals `ended` only when some wait (std's `notify_all` is a system
    /// call even with nobody waiting, once per commit otherwise).
    waiters: usize,
}

/// Hands out xids, records outcomes, builds snapshots. Thread-safe.
#[derive(Debug)]
pub struct TxnManager {
    /// The commit log.
    clog: Clog,
    /// The control file (shared with whoever else records things in it).
    control: Arc<Mutex<ControlFile>>,
    /// Counter, running set, registered snapshots.
    state: Mutex<State>,
    /// Signalled whenever a transaction ends (see [`TxnManager::wait_for`]).
    ended: Condvar,
    /// Shared by commits between their commit record and their commit-log
    /// entry, taken exclusively by a checkpoint (see the module doc).
    commit_fence: RwLock<()>,
}

impl TxnManager {
    /// Opens the manager on `data_dir` (the commit log in `xact/`) with the
    /// data directory's control file.
    pub fn open(data_dir: &Path, control: Arc<Mutex<ControlFile>>) -> Result<TxnManager> {
        let clog = Clog::open(data_dir)?;
        let next = control
            .lock()
            .expect("control mutex poisoned")
            .data()
            .next_xid;
        Ok(TxnManager {
            clog,
            control,
            state: Mutex::new(State {
                next_xid: next,
                reserved_until: next,
                running: BTreeMap::new(),
                snapshot_xmins: BTreeMap::new(),
                waiters: 0,
            }),
            ended: Condvar::new(),
            commit_fence: RwLock::new(()),
        })
    }

    /// The commit log.
    pub fn clog(&self) -> &Clog {
        &self.clog
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state
            .lock()
            .expect("transaction manager mutex poisoned")
    }

    /// Starts a transaction: assigns the next xid and marks it running.
    pub fn begin(&self) -> Result<Xid> {
        let mut st = self.state();
        let xid = st.next_xid;
        if xid == u32::MAX {
            return Err(err!(
                ProgramLimitExceeded,
                "database is not accepting commands to avoid wraparound data loss"
            ));
        }
        if xid >= st.reserved_until {
            let until = xid.saturating_add(XID_RESERVE);
            self.control
                .lock()
                .expect("control mutex poisoned")
                .update(|d| d.next_xid = until)?;
            st.reserved_until = until;
        }
        st.next_xid = xid + 1;
        st.running.insert(xid, ());
        Ok(xid)
    }

    fn finish(&self, xid: Xid, status: XidStatus) -> Result<()> {
        if !self.state().running.contains_key(&xid) {
            return Err(err!(InternalError, "transaction {xid} is not running"));
        }
        // Record the outcome before leaving the running set (see module doc).
        let res = self.clog.set_status(xid, status);
        let mut st = self.state();
        st.running.remove(&xid);
        let wake = st.waiters > 0;
        drop(st);
        if wake {
            self.ended.notify_all();
        }
        res
    }

    /// Ends `xid` without recording an outcome: its commit record may or
    /// may not be on disk after a failed log flush, which the instance
    /// does not survive (`wal::writer`). Its rows stay invisible (never
    /// committed here); waiters wake; recovery decides after a reopen.
    pub fn forget(&self, xid: Xid) {
        let mut st = self.state();
        st.running.remove(&xid);
        let wake = st.waiters > 0;
        drop(st);
        if wake {
            self.ended.notify_all();
        }
    }

    /// Blocks until `xid` is no longer running (a writer that found a row
    /// being changed by `xid` waits here, then checks the row again).
    pub fn wait_for(&self, xid: Xid) {
        let mut st = self.state();
        st.waiters += 1;
        while st.running.contains_key(&xid) {
            st = self
                .ended
                .wait(st)
                .expect("transaction manager mutex poisoned");
        }
        st.waiters -= 1;
    }

    /// Held by a committing session from before it inserts its commit
    /// record until [`TxnManager::commit`] returns (see the module doc).
    /// Take it once per commit, never while holding it already.
    pub fn commit_in_flight(&self) -> RwLockReadGuard<'_, ()> {
        self.commit_fence.read().unwrap_or_else(|p| p.into_inner())
    }

    /// Returns once every commit that was in flight when it was called has
    /// reached the commit log: a checkpoint calls it after fixing its redo
    /// point and before writing the commit log.
    pub fn wait_for_commits_in_flight(&self) {
        drop(self.commit_fence.write().unwrap_or_else(|p| p.into_inner()));
    }

    /// Commits `xid`: records it in the commit log, then ends it.
    pub fn commit(&self, xid: Xid) -> Result<()> {
        self.finish(xid, XidStatus::Committed)
    }

    /// Aborts `xid`: records it in the commit log, then ends it. Its rows
    /// become invisible to everyone.
    pub fn abort(&self, xid: Xid) -> Result<()> {
        self.finish(xid, XidStatus::Aborted)
    }

    /// A snapshot for a reader whose own xid is `current_xid` (or
    /// [`INVALID_XID`]) at command `curcid`.
    pub fn snapshot(&self, current_xid: Xid, curcid: CommandId) -> Snapshot {
        let st = self.state();
        let xip: Vec<Xid> = st.running.keys().copied().collect();
        Snapshot {
            xmin: xip.first().copied().unwrap_or(st.next_xid),
            xmax: st.next_xid,
            xip,
            current_xid,
            curcid,
        }
    }

    /// Registers `snap`'s xmin so that [`oldest_xmin`](Self::oldest_xmin)
    /// keeps the rows it may see. Pair with [`unregister_snapshot`](Self::unregister_snapshot).
    pub fn register_snapshot(&self, snap: &Snapshot) {
        *self.state().snapshot_xmins.entry(snap.xmin).or_insert(0) += 1;
    }

    /// Undoes one [`register_snapshot`](Self::register_snapshot) of `snap`.
    pub fn unregister_snapshot(&self, snap: &Snapshot) {
        let mut st = self.state();
        if let Some(n) = st.snapshot_xmins.get_mut(&snap.xmin) {
            *n -= 1;
            if *n == 0 {
                st.snapshot_xmins.remove(&snap.xmin);
            }
        }
    }

    /// The oldest xid any running transaction or registered snapshot may
    /// still consider running: rows deleted by a committed transaction below
    /// this are dead to everyone (VACUUM's horizon).
    pub fn oldest_xmin(&self) -> Xid {
        let st = self.state();
        let mut x = st.next_xid;
        if let Some((&r, _)) = st.running.iter().next() {
            x = x.min(r);
        }
        if let Some((&s, _)) = st.snapshot_xmins.iter().next() {
            x = x.min(s);
        }
        x
    }

    /// True while `xid` is running.
    pub fn is_running(&self, xid: Xid) -> bool {
        xid != INVALID_XID && self.state().running.contains_key(&xid)
    }

    /// The recorded status of `xid` (see [`Clog::status`]).
    pub fn status(&self, xid: Xid) -> Result<XidStatus> {
        self.clog.status(xid)
    }

    /// The next xid that will be handed out.
    pub fn next_xid(&self) -> Xid {
        self.state().next_xid
    }

    /// Flushes the commit log and records the exact next xid in the control
    /// file (clean shutdown and checkpoints).
    pub fn shutdown(&self) -> Result<()> {
        self.clog.flush()?;
        let st = self.state();
        let next = st.next_xid;
        self.control
            .lock()
            .expect("control mutex poisoned")
            .update(|d| d.next_xid = next)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn open(dir: &Path) -> TxnManager {
        let (c, _) = ControlFile::open_or_create(dir).unwrap();
        TxnManager::open(dir, Arc::new(Mutex::new(c))).unwrap()
    }

    #[test]
    fn begin_commit_abort_and_snapshots() {
        let dir = tempfile::tempdir().unwrap();
        let m = open(dir.path());
        let a = m.begin().unwrap();
        let b = m.begin().unwrap();
        assert_eq!((a, b), (3, 4));
        let s = m.snapshot(b, 0);
        assert_eq!((s.xmin, s.xmax, &s.xip[..]), (3, 5, &[3, 4][..]));
        m.commit(a).unwrap();
        m.abort(b).unwrap();
        assert!(m.commit(a).is_err(), "already finished");
        assert_eq!(m.status(a).unwrap(), XidStatus::Committed);
        assert_eq!(m.status(b).unwrap(), XidStatus::Aborted);
        let s2 = m.snapshot(INVALID_XID, 0);
        assert_eq!((s2.xmin, s2.xmax, s2.xip.len()), (5, 5, 0));
        m.register_snapshot(&s);
        assert_eq!(m.oldest_xmin(), 3);
        m.unregister_snapshot(&s);
        assert_eq!(m.oldest_xmin(), 5);
        assert!(!m.is_running(a));
    }

    #[test]
    fn wait_for_returns_when_the_transaction_ends() {
        let dir = tempfile::tempdir().unwrap();
        let m = Arc::new(open(dir.path()));
        let x = m.begin().unwrap();
        let m2 = Arc::clone(&m);
        let waiter = std::thread::spawn(move || {
            m2.wait_for(x);
            m2.status(x).unwrap()
        });
        // Commit only once the waiter is waiting, so that the test shows a
        // wait ending, not a wait never begun.
        let start = std::time::Instant::now();
        while m.state().waiters == 0 {
            assert!(start.elapsed().as_secs() < 60, "the waiter never waited");
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        m.commit(x).unwrap();
        assert_eq!(waiter.join().unwrap(), XidStatus::Committed);
        m.wait_for(x); // not running: returns at once
    }

    #[test]
    fn xids_are_reserved_in_ranges_and_survive_restart() {
        let dir = tempfile::tempdir().unwrap();
        let m = open(dir.path());
        let x = m.begin().unwrap();
        m.commit(x).unwrap();
        let (c, _) = ControlFile::open_or_create(dir.path()).unwrap();
        assert_eq!(c.data().next_xid, 3 + XID_RESERVE);
        drop(m);
        // Without a clean shutdown the next xid jumps past the reserved range.
        let m = open(dir.path());
        assert_eq!(m.begin().unwrap(), 3 + XID_RESERVE);
        assert_eq!(m.status(x).unwrap(), XidStatus::Committed);
        m.shutdown().unwrap();
        drop(m);
        let m = open(dir.path());
        assert_eq!(m.next_xid(), 4 + XID_RESERVE);
    }

    #[test]
    fn concurrent_begin_commit_hands_out_distinct_xids() {
        let dir = tempfile::tempdir().unwrap();
        let m = Arc::new(open(dir.path()));
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let m = Arc::clone(&m);
                std::thread::spawn(move || {
                    (0..500)
                        .map(|_| {
                            let x = m.begin().unwrap();
                            m.commit(x).unwrap();
                            x
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let mut all: Vec<Xid> = handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), 2000);
        assert!(all
            .iter()
            .all(|&x| m.status(x).unwrap() == XidStatus::Committed));
    }
}
