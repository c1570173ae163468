//! When a client learns that its commit happened: at once, or at the
//! client's next observable act ("external synchrony").
//!
//! With `synchronous_commit = on`, a commit returns only once its commit
//! record is flushed to disk ([`CommitAck::Immediate`], the default). The
//! promise behind that wait is that a commit anyone has been told about
//! survives a crash. For a client whose only way of telling anyone is its
//! own output, the same promise can be kept more cheaply (Nightingale et
//! al., *Rethink the Sync*, OSDI 2006): with [`CommitAck::Deferred`] a
//! commit records its commit LSN in the session's [`CommitGate`] and returns
//! without waiting, and the client calls [`CommitGate::sync`] before any
//! act that could reveal a commit: writing output, reading more input
//! from a person, writing a file, exiting. One fdatasync then covers every
//! commit since the last one (group commit within one session).
//!
//! A deferred commit is recorded in the commit log at once, like an
//! asynchronous one, and its hint bits wait for the flush
//! ([`crate::txn::clog::Clog::note_async_commit`]). So other sessions of
//! the same [`Database`](crate::database::Database) could see its rows
//! before they are durable: a session should defer only when it is the
//! database's only client, as the `heapdb` shell running a script is. The
//! library's sessions never defer unless asked
//! ([`Session::set_commit_ack`](super::Session::set_commit_ack)).
//!
//! A crash loses only deferred commits that no output reported.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::error::Result;
use crate::wal::Wal;

/// When a `synchronous_commit = on` commit returns to the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CommitAck {
    /// After its commit record is flushed (PostgreSQL's behaviour).
    #[default]
    Immediate,
    /// At once; the client flushes through the [`CommitGate`] before it
    /// reveals anything.
    Deferred,
}

/// The flush a deferring client owes before its next observable act.
/// Cheap to clone; every clone shares the same pending position.
#[derive(Clone)]
pub struct CommitGate {
    /// The log the commits went to.
    wal: Arc<Wal>,
    /// End LSN of the last deferred commit record (0: none yet).
    pending: Arc<AtomicU64>,
}

impl std::fmt::Debug for CommitGate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CommitGate")
            .field("pending", &self.pending.load(Ordering::Relaxed))
            .finish()
    }
}

impl CommitGate {
    pub(crate) fn new(wal: Arc<Wal>) -> CommitGate {
        CommitGate {
            wal,
            pending: Arc::new(AtomicU64::new(0)),
        }
    }

    /// Records a deferred commit whose record ends at `lsn`.
    pub(crate) fn defer(&self, lsn: u64) {
        self.pending.fetch_max(lsn, Ordering::Release);
    }

    /// Whether some deferred commit is not yet known to be flushed.
    pub fn pending(&self) -> bool {
        self.pending.load(Ordering::Acquire) > self.wal.flushed_lsn()
    }

    /// Makes every deferred commit so far durable: one WAL flush (shared
    /// with any other flush under way), nothing when they already are.
    pub fn sync(&self) -> Result<()> {
        let upto = self.pending.load(Ordering::Acquire);
        if upto == 0 {
            return Ok(());
        }
        self.wal.flush(upto)
    }
}
