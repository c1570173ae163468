//! Checkpoints: bounding recovery time and the size of `wal/`.
//!
//! A checkpoint (1) moves the redo pointer to the current insert position
//! (from then on, the first change to each page logs the page's image),
//! notes the transactions with logged changes but no outcome yet and waits
//! for the commits whose record is in the log but not yet in the commit log,
//! (2) writes every dirty buffer and the commit log's pages and fsyncs
//! them, (3) inserts and flushes a checkpoint record (naming those
//! transactions, for recovery's in-doubt rule), (4) records the
//! redo point in the control file, and (5) removes or recycles the segment
//! files wholly before the redo point. Everything changed before the redo
//! point is then on disk, so recovery starts there.
//!
//! Hint-only changes (hint bits, VACUUM's `PD_ALL_VISIBLE`) need nothing
//! from a checkpoint: the page checksum leaves them out, so a page whose
//! only changes since its last logged state are hints is valid however its
//! write tears, with or without an image after the redo point (until
//! format version 2 a "hint floor" kept such pages clean around the redo
//! point instead).
//!
//! A shutdown checkpoint also records the exact next xid and sets the
//! control file's clean-shutdown flag, so the next open skips recovery.
//!
//! The [`Checkpointer`] runs checkpoints one at a time (its mutex), from the
//! `CHECKPOINT` statement, from its background thread (after `max_wal_size`
//! bytes of log or `checkpoint_timeout`), after recovery and at shutdown.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::record::{Lsn, WalRecord};
use super::writer::Wal;
use crate::error::Result;
use crate::storage::control::ControlFile;
use crate::storage::BufferPool;
use crate::txn::TxnManager;

/// How often the background thread checks whether a checkpoint is due.
const POLL: Duration = Duration::from_millis(100);

/// Runs checkpoints; shared by the database and its background thread.
#[derive(Debug)]
pub struct Checkpointer {
    /// The log.
    pub wal: Arc<Wal>,
    /// The buffer pool whose dirty pages are written.
    pool: Arc<BufferPool>,
    /// The transaction manager (commit log, next xid).
    txns: Arc<TxnManager>,
    /// Where the redo point is recorded.
    control: Arc<Mutex<ControlFile>>,
    /// Held while a checkpoint runs; holds when the last one finished.
    running: Mutex<Instant>,
    /// Log volume between automatic checkpoints (`max_wal_size`).
    max_wal_bytes: u64,
    /// Time between automatic checkpoints (`checkpoint_timeout`).
    timeout: Duration,
}

impl Checkpointer {
    /// A checkpointer over the database's parts.
    pub fn new(
        wal: Arc<Wal>,
        pool: Arc<BufferPool>,
        txns: Arc<TxnManager>,
        control: Arc<Mutex<ControlFile>>,
        max_wal_bytes: u64,
        timeout: Duration,
    ) -> Checkpointer {
        Checkpointer {
            wal,
            pool,
            txns,
            control,
            running: Mutex::new(Instant::now()),
            max_wal_bytes,
            timeout,
        }
    }

    /// Runs one checkpoint (see the module doc); `shutdown` marks the
    /// database cleanly shut down. Returns the redo point.
    pub fn checkpoint(&self, shutdown: bool) -> Result<Lsn> {
        let mut last = self.running.lock().expect("checkpoint mutex poisoned");
        // After a failed log flush nothing more is written (`writer`).
        self.wal.healthy()?;
        let (redo, open_xids) = self.wal.begin_checkpoint();
        // A commit whose record is before `redo` must be in the commit-log
        // pages flushed below (they are not written per commit).
        self.txns.wait_for_commits_in_flight();
        self.pool.flush_all()?;
        self.txns.clog().flush()?;
        if shutdown {
            // Records the exact next xid (and fsyncs the commit log again).
            self.txns.shutdown()?;
        }
        let next_oid = self
            .control
            .lock()
            .expect("control mutex poisoned")
            .data()
            .next_oid;
        let end = self.wal.insert(
            0,
            &WalRecord::Checkpoint {
                redo,
                next_xid: self.txns.next_xid(),
                next_oid,
                open_xids,
            },
        );
        self.wal.flush(end)?;
        self.control
            .lock()
            .expect("control mutex poisoned")
            .update(|d| {
                d.checkpoint_lsn = end;
                d.redo_lsn = redo;
                d.clean_shutdown = shutdown;
            })?;
        self.wal.remove_old_segments(redo)?;
        self.wal
            .counters
            .checkpoints
            .fetch_add(1, Ordering::Relaxed);
        *last = Instant::now();
        Ok(redo)
    }

    /// Whether an automatic checkpoint is due: `max_wal_size` bytes of log
    /// since the last redo point, or `checkpoint_timeout` since the last
    /// checkpoint with some log written since.
    pub fn due(&self) -> bool {
        let since = self.wal.insert_lsn() - self.wal.redo_lsn();
        if since >= self.max_wal_bytes {
            return true;
        }
        let last = *self.running.lock().expect("checkpoint mutex poisoned");
        // The checkpoint record itself is about 40 bytes.
        since > 64 && last.elapsed() >= self.timeout
    }

    /// Starts the background thread that runs automatic checkpoints until
    /// the log is asked to stop.
    pub fn start_background(self: &Arc<Checkpointer>) -> std::thread::JoinHandle<()> {
        let cp = Arc::clone(self);
        std::thread::Builder::new()
            .name("heapdb-checkpointer".into())
            .spawn(move || {
                while !cp.wal.stopping() {
                    std::thread::park_timeout(POLL);
                    // A failed log writes nothing more (`writer`).
                    if !cp.wal.stopping() && !cp.wal.is_failed() && cp.due() {
                        if let Err(e) = cp.checkpoint(false) {
                            eprintln!("heapdb: checkpoint failed: {e}");
                        }
                    }
                }
            })
            .expect("spawning the checkpointer thread")
    }
}
