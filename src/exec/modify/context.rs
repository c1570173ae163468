//! What a running INSERT, UPDATE, DELETE or `INSERT ... ON CONFLICT`, and
//! the index maintenance under it, takes from the client API that starts it
//! ([`ModifyContext`]): the statement's transaction, command and snapshot,
//! its isolation, the lock manager and owner it waits with, the transaction
//! manager it asks about other transactions, the buffer pool and log the
//! indexes write through, and its cancel flag.
//!
//! Row writing sits below the session: it never looks at a session's state,
//! so any front end (the embedded API, a wire-protocol server) runs it by
//! filling in these values, as COPY runs from its `CopyContext`. The table
//! is looked up and locked by the caller, and the plan made by
//! `plan::modify`.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use crate::error::Result;
use crate::storage::BufferPool;
use crate::txn::lock::Owner;
use crate::txn::{CommandId, LockManager, Snapshot, TxnManager, Xid, XidStatus};
use crate::wal::Wal;

/// The statement a row change runs in, as its caller hands it down.
#[derive(Clone, Copy)]
pub struct ModifyContext<'a> {
    /// The transaction whose rows the statement writes (assigned).
    pub xid: Xid,
    /// The statement's command id within it.
    pub cid: CommandId,
    /// The statement's snapshot.
    pub snapshot: &'a Snapshot,
    /// REPEATABLE READ (else READ COMMITTED): a row changed by a
    /// transaction that committed after the snapshot fails the statement.
    pub repeatable_read: bool,
    /// Who holds the transaction's locks (waits for other transactions are
    /// taken as this owner, so deadlocks are found).
    pub owner: Owner,
    /// The table and transaction locks.
    pub locks: &'a LockManager,
    /// The transactions' states.
    pub txns: &'a TxnManager,
    /// The buffer pool the heap and its indexes live in.
    pub pool: &'a Arc<BufferPool>,
    /// The log the indexes' changes go to.
    pub wal: &'a Arc<Wal>,
    /// Set from another thread to cancel the statement; waits stop on it.
    pub cancel: &'a AtomicBool,
}

impl ModifyContext<'_> {
    /// Waits until transaction `x` ends (on its transaction lock, so a cycle
    /// of such waits is found as a deadlock); true when it committed.
    pub fn wait_for(&self, x: Xid) -> Result<bool> {
        self.locks.wait_for_xact(self.owner, x, self.cancel)?;
        Ok(matches!(self.txns.status(x)?, XidStatus::Committed))
    }
}
