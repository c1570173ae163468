//! The snapshots a VOLATILE function's queries read with under READ
//! COMMITTED: one taken when each query runs.
//!
//! PostgreSQL runs every query of a VOLATILE SQL or PL/pgSQL function with
//! a new snapshot (`GetTransactionSnapshot()`; under REPEATABLE READ that
//! is the transaction's one), so a commit made while the calling statement
//! runs is seen by the function's later queries. A function's body shares
//! one [`QuerySnapshots`]: a query of the body [`enter`](QuerySnapshots::enter)s
//! a snapshot taken as it starts, and what runs inside it (its subqueries,
//! a STABLE function it calls) reads with that [`current`](QuerySnapshots::current)
//! one; an expression of the body evaluated outside any query (PL/pgSQL's
//! `n := (SELECT ...)`, itself a query in PostgreSQL) finds none current
//! and reads with a new one.
//!
//! Invariants: a taken snapshot keeps the reader's xid and command id (of
//! the snapshot it replaces); entering and leaving nest (a recursive call
//! of the body restores the outer query's snapshot when it returns). The
//! calling statement's snapshot stays registered while the new ones are
//! used, and a later snapshot's xmin is never below an earlier one's, so
//! VACUUM's horizon keeps every row they may see.

use std::sync::{Arc, Mutex};

use super::{Snapshot, TxnManager};

/// See the module comment.
#[derive(Debug)]
pub struct QuerySnapshots {
    txns: Arc<TxnManager>,
    /// The snapshot of the body's query running now, innermost.
    current: Mutex<Option<Snapshot>>,
}

impl QuerySnapshots {
    /// Snapshots of `txns` for one function body.
    pub fn new(txns: Arc<TxnManager>) -> Arc<QuerySnapshots> {
        Arc::new(QuerySnapshots {
            txns,
            current: Mutex::new(None),
        })
    }

    /// A snapshot taken now for the reader of `like` (its xid and command id).
    pub fn take(&self, like: &Snapshot) -> Snapshot {
        self.txns.snapshot(like.current_xid, like.curcid)
    }

    /// The snapshot of the query running now, if one runs.
    pub fn current(&self) -> Option<Snapshot> {
        self.lock().clone()
    }

    /// Runs `f` as a query of the body reading with `snap`, then restores
    /// the snapshot current before.
    pub fn enter<T>(&self, snap: Snapshot, f: impl FnOnce(&Snapshot) -> T) -> T {
        let before = self.lock().replace(snap.clone());
        let out = f(&snap);
        *self.lock() = before;
        out
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Snapshot>> {
        // Only whole values are stored: a poisoned lock is still consistent.
        self.current.lock().unwrap_or_else(|p| p.into_inner())
    }
}
