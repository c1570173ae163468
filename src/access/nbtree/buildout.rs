//! Where a sorted bulk build's pages go (PostgreSQL's `nbtsort.c` with
//! `bulk_write.c`): straight to the relation's file, not through the
//! buffer pool. A built page is written once, whole, and nobody reads the
//! index before the build's transaction commits, so the pool would only
//! add a frame per page (in a pool not yet full, memory the kernel must
//! zero on first touch: the larger part of a build's serial time) and a
//! later write of the same bytes.
//!
//! Pages are made in a batch of [`BATCH`] consecutive blocks, reused for
//! the whole build, and written with one `pwrite` per run of consecutive
//! blocks. Each page is logged whole ([`BtLog::log_image`]) before it is
//! written, carries the record's LSN and its checksum: the file holds the
//! bytes the pool path would write.
//!
//! Durability (PostgreSQL 17's rule for bulk writes): a written block
//! marks its segment for the next checkpoint's fsync (`Smgr::write`), so a
//! checkpoint that begins after the build's writes makes them durable
//! before its redo point passes their log records. Only a checkpoint that
//! began *during* the build may have set its redo point after some of the
//! page images and fsynced the file before the pages after them were
//! written: then [`PageOut::finish`] fsyncs the file itself. Without a log
//! the relation is not crash-safe anyway, and nothing is fsynced here.
//! The log need not be flushed before a page is written (the rule a pool
//! follows): the relation file is new, and removed if the transaction
//! never commits.

use std::sync::Arc;

use super::wal::BtLog;
use crate::error::Result;
use crate::storage::checksum::set_page_checksum;
use crate::storage::smgr::RELSEG_SIZE;
use crate::storage::{page, BlockNumber, BufferPool, ForkNumber, RelFileNode, BLCKSZ};

/// Pages written with one `pwrite` at most.
const BATCH: usize = 32;

/// The build's output: a batch of pages being made.
pub(super) struct PageOut {
    pool: Arc<BufferPool>,
    rel: RelFileNode,
    log: Option<Arc<dyn BtLog>>,
    /// The log's redo point when the build began.
    redo_at_start: Option<u64>,
    /// `BATCH` pages; the first `n` are made, for blocks `first..first + n`.
    batch: Vec<u8>,
    first: BlockNumber,
    n: usize,
}

impl PageOut {
    /// Output to `rel`, logging through `log`.
    pub(super) fn new(
        pool: Arc<BufferPool>,
        rel: RelFileNode,
        log: Option<Arc<dyn BtLog>>,
    ) -> PageOut {
        let redo_at_start = log.as_ref().and_then(|l| l.redo_point());
        PageOut {
            pool,
            rel,
            log,
            redo_at_start,
            batch: Vec::new(),
            first: 0,
            n: 0,
        }
    }

    /// Makes block `block` with `fill`, which gets an all-zero page, then
    /// logs it whole and sets its LSN and checksum. Written at the latest
    /// by [`PageOut::finish`].
    pub(super) fn page(
        &mut self,
        block: BlockNumber,
        fill: impl FnOnce(&mut [u8]) -> Result<()>,
    ) -> Result<()> {
        let follows = self.n > 0
            && self.n < BATCH
            && block == self.first + self.n as BlockNumber
            && block % RELSEG_SIZE != 0;
        if !follows {
            self.flush()?;
            self.first = block;
        }
        if self.batch.is_empty() {
            self.batch = vec![0; BATCH * BLCKSZ];
        }
        let p = &mut self.batch[self.n * BLCKSZ..(self.n + 1) * BLCKSZ];
        p.fill(0);
        fill(p)?;
        if let Some(log) = &self.log {
            let lsn = log.log_image(self.rel, block, p)?;
            if lsn != 0 {
                page::set_lsn(p, lsn);
            }
        }
        set_page_checksum(p, block);
        self.n += 1;
        Ok(())
    }

    /// Writes the pages made so far.
    fn flush(&mut self) -> Result<()> {
        if self.n > 0 {
            self.pool.smgr().write_blocks(
                self.rel,
                ForkNumber::Main,
                self.first,
                &self.batch[..self.n * BLCKSZ],
            )?;
            self.n = 0;
        }
        Ok(())
    }

    /// Writes the last pages; the fork then counts `nblocks` blocks. If a
    /// checkpoint began since the build did, fsyncs the file (see the
    /// module doc).
    pub(super) fn finish(mut self, nblocks: BlockNumber) -> Result<()> {
        self.flush()?;
        let smgr = self.pool.smgr();
        smgr.set_nblocks_at_least(self.rel, ForkNumber::Main, nblocks)?;
        if let Some(log) = &self.log {
            let now = log.redo_point();
            if now.is_none() || now != self.redo_at_start {
                smgr.sync(self.rel, ForkNumber::Main)?;
            }
        }
        Ok(())
    }
}
