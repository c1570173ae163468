//! Crash recovery: replaying the log from the last checkpoint's redo point
//! to the end of valid log.
//!
//! Each record is replayed through the same function that made the change
//! at run time (`record::apply`), so run time and redo cannot diverge:
//!
//! - a page change is skipped when the page's LSN is already at or past the
//!   record's end (it reached disk before the crash), which makes redo
//!   idempotent: a crash during recovery followed by another recovery gives
//!   the same pages;
//! - a full-page image, or a record that initialises its page, overwrites
//!   the page without reading it, so a page torn by the crash (its checksum
//!   fails) is never read before it is restored;
//! - a change to a relation whose file no longer exists (dropped later in
//!   the log) or to a block past its end (truncated later) is skipped;
//! - commit and abort records set the commit log and remove the relation
//!   files dropped with them; relation create and truncate records are
//!   replayed on the files.
//!
//! At the end, every transaction that wrote a record but has neither a
//! commit nor an abort record is marked aborted in the commit log (its
//! commit-log entry may say committed when an asynchronous commit's record
//! never reached disk: the log wins). "Wrote a record" counts the records
//! replayed and the transactions a checkpoint record lists as having
//! logged changes before its redo point with no outcome yet: such a
//! transaction may have nothing after the redo point but its lost commit
//! record, and its commit-log entry must not make it half committed (the
//! changes after the redo point gone with the log's tail, those before it
//! on disk).
//!
//! Callers: `Database::open_with` runs this before opening the catalog (which
//! reads the commit log), then writes a checkpoint.

use std::collections::HashSet;
use std::path::Path;

use super::record::{Lsn, WalRecord, ANY_PREV};
use super::segment::SegmentReader;
use crate::access::heap::record::{apply, HeapRecord, PageRef};
use crate::access::vm;
use crate::err;
use crate::error::Result;
use crate::storage::bufmgr::ReadMode;
use crate::storage::{BufferPool, ForkNumber, RelFileNode};
use crate::txn::clog::{Clog, XidStatus};

/// What a pass over the log found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LogEnd {
    /// Where the next record goes.
    pub end: Lsn,
    /// Where the last valid record starts.
    pub prev: Lsn,
    /// Records read.
    pub records: u64,
    /// Page changes applied (not skipped).
    pub applied: u64,
    /// Transactions marked aborted because the log has no outcome for them.
    pub in_doubt_aborted: u64,
}

/// Reads the log from `start` to its end without replaying anything (a
/// clean shutdown): finds where writing continues.
pub fn find_end(wal_dir: &Path, start: Lsn) -> Result<LogEnd> {
    let mut rd = SegmentReader::new(wal_dir, start, ANY_PREV);
    let mut records = 0;
    while rd.next_record()?.is_some() {
        records += 1;
    }
    Ok(LogEnd {
        end: rd.pos,
        prev: if records == 0 { start } else { rd.prev },
        records,
        ..LogEnd::default()
    })
}

fn fork_of(f: u8) -> ForkNumber {
    if f == 0 {
        ForkNumber::Main
    } else {
        ForkNumber::VisibilityMap
    }
}

fn will_init(rec: &HeapRecord) -> bool {
    matches!(
        rec,
        HeapRecord::Insert {
            init_page: true,
            ..
        } | HeapRecord::MultiInsert {
            init_page: true,
            ..
        } | HeapRecord::UpdateNew {
            init_page: true,
            ..
        }
    )
}

/// Replays one page change ending at `end`. Returns whether it was applied.
fn redo_page(pool: &BufferPool, page: PageRef, rec: &HeapRecord, end: Lsn) -> Result<bool> {
    let rel = RelFileNode(page.rel);
    let fork = fork_of(page.fork);
    let init = will_init(rec);
    if !pool.relation_exists(rel, ForkNumber::Main) && !init {
        return Ok(false);
    }
    let exists = pool.relation_exists(rel, fork);
    let beyond = !exists || page.block >= pool.nblocks(rel, fork)?;
    let mode = if init || (beyond && matches!(rec, HeapRecord::VmSet { .. })) {
        ReadMode::ZeroPage
    } else if beyond {
        return Ok(false);
    } else {
        ReadMode::Normal
    };
    let buf = pool
        .read_buffer_extended(rel, fork, page.block, mode, None)
        .map_err(|e| {
            err!(
                DataCorrupted,
                "could not replay WAL record ending at {}: {}",
                super::lsn_text(end),
                e.message
            )
            .with_hint("The page has no full-page image in the log to restore it from.")
        })?;
    let mut g = buf.write();
    if !init && g.lsn() >= end {
        return Ok(false);
    }
    if fork == ForkNumber::VisibilityMap {
        vm::init_if_new(&mut g[..]);
    }
    apply(rec, &mut g[..])?;
    g.set_lsn(end);
    g.mark_dirty();
    Ok(true)
}

/// Replays the log from `start` (a checkpoint's redo point) into `pool`
/// and `clog`; see the module doc.
pub fn redo(wal_dir: &Path, start: Lsn, pool: &BufferPool, clog: &Clog) -> Result<LogEnd> {
    let mut rd = SegmentReader::new(wal_dir, start, ANY_PREV);
    let mut out = LogEnd::default();
    let mut wrote = HashSet::new();
    let mut ended = HashSet::new();
    while let Some(r) = rd.next_record()? {
        out.records += 1;
        if r.xid != 0 {
            wrote.insert(r.xid);
        }
        match &r.rec {
            WalRecord::Heap { page, rec } => {
                out.applied += redo_page(pool, *page, rec, r.end)? as u64;
            }
            WalRecord::Fpi { page, image } => {
                let buf = pool.read_buffer_extended(
                    RelFileNode(page.rel),
                    fork_of(page.fork),
                    page.block,
                    ReadMode::ZeroPage,
                    None,
                )?;
                let mut g = buf.write();
                g.copy_from_slice(&image[..]);
                g.set_lsn(r.end);
                g.mark_dirty();
                out.applied += 1;
            }
            WalRecord::Commit { drops } | WalRecord::Abort { drops } => {
                let status = if matches!(r.rec, WalRecord::Commit { .. }) {
                    XidStatus::Committed
                } else {
                    XidStatus::Aborted
                };
                clog.set_status(r.xid, status)?;
                ended.insert(r.xid);
                // The files dropped with the transaction go with it.
                for &d in drops {
                    if pool.relation_exists(RelFileNode(d), ForkNumber::Main) {
                        pool.drop_relation(RelFileNode(d))?;
                    }
                }
            }
            WalRecord::CreateRel { rel } => {
                for fork in ForkNumber::ALL {
                    if !pool.relation_exists(RelFileNode(*rel), fork) {
                        pool.create_relation(RelFileNode(*rel), fork)?;
                    }
                }
            }
            WalRecord::TruncateRel { rel, fork, nblocks } => {
                let (rel, fork) = (RelFileNode(*rel), fork_of(*fork));
                if pool.relation_exists(rel, fork) && pool.nblocks(rel, fork)? > *nblocks {
                    pool.truncate_relation(rel, fork, *nblocks)?;
                }
            }
            // Transactions that wrote before the redo point and had no
            // outcome then: without a commit record below they are in doubt.
            WalRecord::Checkpoint { open_xids, .. } => wrote.extend(open_xids.iter().copied()),
        }
    }
    for x in wrote.difference(&ended) {
        clog.set_status(*x, XidStatus::Aborted)?;
        out.in_doubt_aborted += 1;
    }
    out.end = rd.pos;
    out.prev = if out.records == 0 { start } else { rd.prev };
    Ok(out)
}
