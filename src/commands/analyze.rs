//! ANALYZE of one heap: PostgreSQL's two-stage sample with read-ahead, then
//! per-column statistics ([`super::stats`]).
//!
//! Stage one chooses `min(targrows, nblocks)` blocks at random
//! ([`BlockSampler`], increasing order); stage two keeps a uniform
//! reservoir of `targrows` rows among the live rows of those blocks
//! ([`Reservoir`]). So the work grows with the sample, not with the table:
//! 30,000 rows (the default target 100 x 300) read at most 30,000 pages.
//!
//! Read-ahead: the blocks are known before the first read, so while block
//! `i` is read, block `i + maintenance_io_concurrency` is announced to the
//! OS (`posix_fadvise(WILLNEED)` through [`BufferPool::prefetch`], which
//! skips pages already in the pool). A block that directly follows the one
//! before it is left to the kernel's sequential read-ahead. With the setting
//! at 0 nothing is prefetched and every read of a cold table waits for the
//! disk.
//!
//! Live and dead rows are judged by the statement's snapshot: rows it sees
//! are live and may enter the sample; the other NORMAL tuples count as dead
//! for the report. The table's row estimate is the live rows per sampled
//! page times the pages (PostgreSQL's, when it samples every page it is
//! exact).
//!
//! Locking: one page at a time under its shared content lock; the rows taken
//! are decoded into values under that lock and the lock is released before
//! the next page.
//!
//! [`BufferPool::prefetch`]: crate::storage::BufferPool::prefetch

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::stats::{column_stats, BlockSampler, Reservoir, Rng};
use crate::access::heap::pageops::{apply_page_hints, collect_visible};
use crate::access::heap::{tuple, HeapRelation};
use crate::catalog::{ColumnStats, TableDef};
use crate::err;
use crate::error::Result;
use crate::exec::scan::tuple_desc;
use crate::storage::page::{self, LP_NORMAL};
use crate::storage::{BlockNumber, ForkNumber, Ring};
use crate::txn::Snapshot;
use crate::types::Value;

/// How to sample.
#[derive(Debug, Clone, Copy)]
pub struct SampleOptions {
    /// Rows wanted (300 x the statistics target).
    pub targrows: usize,
    /// Blocks to prefetch ahead (`maintenance_io_concurrency`; 0: none).
    pub prefetch_distance: usize,
    /// Seed of the block and row choices.
    pub seed: u64,
}

/// A sample of a table's rows and what reading it found.
#[derive(Debug, Clone, Default)]
pub struct Sample {
    /// The sampled rows: for each column asked for, its values (in the
    /// order of `columns` given to [`sample_rows`]).
    pub columns: Vec<Vec<Option<Value>>>,
    /// Rows in the sample.
    pub rows: usize,
    /// Blocks in the table.
    pub nblocks: BlockNumber,
    /// Blocks read.
    pub blocks_read: BlockNumber,
    /// Live rows seen in the blocks read.
    pub live_seen: u64,
    /// Dead (invisible) tuples seen in the blocks read.
    pub dead_seen: u64,
    /// Estimated live rows of the whole table.
    pub total_rows: f64,
    /// Estimated dead tuples of the whole table.
    pub total_dead: f64,
    /// Prefetch requests issued.
    pub prefetched: u64,
    /// Wall time of the sampling.
    pub elapsed: Duration,
}

/// Samples the rows of `rel` (the heap of `table`) that `snap` sees, keeping
/// the values of `columns` (table column positions). `ring` is the buffer
/// ring for the reads; `cancel` is checked before every block.
pub fn sample_rows(
    rel: &HeapRelation,
    table: &TableDef,
    columns: &[usize],
    snap: &Snapshot,
    opts: &SampleOptions,
    mut ring: Option<Ring>,
    cancel: &AtomicBool,
) -> Result<Sample> {
    let start = Instant::now();
    let desc = tuple_desc(table)?;
    let upto = columns.iter().map(|&c| c + 1).max().unwrap_or(0);
    let types: Vec<_> = columns.iter().map(|&c| table.columns[c].ty).collect();
    let _size = rel.hold_size();
    let nblocks = rel.nblocks()?;
    // Identical seeds give identical choices (the reproducibility tests).
    let mut rng = Rng::new(opts.seed);
    let blocks = BlockSampler::new(nblocks, opts.targrows as u32).blocks(&mut rng);
    let mut reservoir = Reservoir::new(opts.targrows);
    let mut sample = Sample {
        columns: vec![Vec::new(); columns.len()],
        nblocks,
        ..Sample::default()
    };
    let pool = rel.pool();
    let (mut visible, mut hints) = (Vec::new(), Vec::new());
    let mut prefetched_to = 0usize;
    for (i, &block) in blocks.iter().enumerate() {
        if cancel.load(Ordering::Relaxed) {
            return Err(err!(
                QueryCanceled,
                "canceling statement due to user request"
            ));
        }
        // Keep the next `prefetch_distance` blocks announced to the OS.
        if opts.prefetch_distance > 0 {
            let ahead = (i + opts.prefetch_distance).min(blocks.len() - 1);
            prefetched_to = prefetched_to.max(i + 1);
            while prefetched_to <= ahead {
                let b = blocks[prefetched_to];
                // A block right after the previous one is the kernel's own
                // read-ahead's business: advice would only cost a syscall.
                let follows = blocks[prefetched_to - 1] + 1 == b;
                if !follows && pool.prefetch(rel.rel(), ForkNumber::Main, b)? {
                    sample.prefetched += 1;
                }
                prefetched_to += 1;
            }
        }
        let buf = pool.read_buffer(rel.rel(), ForkNumber::Main, block, ring.as_mut())?;
        let g = buf.read();
        visible.clear();
        hints.clear();
        collect_visible(&g[..], snap, rel.txns().clog(), &mut visible, &mut hints)?;
        sample.blocks_read += 1;
        let normal = (1..=page::max_offset(&g[..]))
            .filter(|&o| page::item_id(&g[..], o).flags == LP_NORMAL)
            .count();
        sample.live_seen += visible.len() as u64;
        sample.dead_seen += (normal - visible.len()) as u64;
        // Slices into this page: one small vector per page read.
        let mut datums: Vec<Option<&[u8]>> = vec![None; upto];
        for &o in &visible {
            let Some(slot) = reservoir.offer(&mut rng) else {
                continue;
            };
            let t = page::get_item(&g[..], o).expect("a visible line pointer holds a tuple");
            datums.iter_mut().for_each(|d| *d = None);
            tuple::deform(t, &desc, upto, &mut datums)?;
            for (k, &c) in columns.iter().enumerate() {
                let v = datums[c].map(|b| Value::decode(&types[k], b));
                let col = &mut sample.columns[k];
                if slot == col.len() {
                    col.push(v);
                } else {
                    col[slot] = v;
                }
            }
            if columns.is_empty() && slot == sample.rows {
                sample.rows += 1;
            }
        }
        drop(g);
        if !hints.is_empty() {
            let mut w = buf.write();
            if apply_page_hints(&mut w[..], &hints) {
                w.mark_dirty_hint();
            }
        }
    }
    if !columns.is_empty() {
        sample.rows = sample.columns[0].len();
    }
    let read = sample.blocks_read.max(1) as f64;
    sample.total_rows = if sample.blocks_read == nblocks {
        sample.live_seen as f64
    } else {
        (sample.live_seen as f64 / read * nblocks as f64).round()
    };
    sample.total_dead = if sample.blocks_read == nblocks {
        sample.dead_seen as f64
    } else {
        (sample.dead_seen as f64 / read * nblocks as f64).round()
    };
    sample.elapsed = start.elapsed();
    Ok(sample)
}

/// Statistics of each sampled column (same order as `sample.columns`),
/// with `target` MCVs and histogram buckets at most.
pub fn compute_stats(
    sample: &Sample,
    table: &TableDef,
    columns: &[usize],
    target: usize,
) -> Vec<ColumnStats> {
    columns
        .iter()
        .zip(&sample.columns)
        .map(|(&c, values)| column_stats(values, &table.columns[c].ty, sample.total_rows, target))
        .collect()
}

/// The INFO lines of `ANALYZE VERBOSE` for table `name`, as PostgreSQL 15.
pub fn verbose_messages(name: &str, sample: &Sample) -> Vec<String> {
    vec![
        format!("analyzing \"public.{name}\""),
        format!(
            "\"{name}\": scanned {} of {} pages, containing {} live rows and {} dead rows; {} rows in sample, {} estimated total rows",
            sample.blocks_read,
            sample.nblocks,
            sample.live_seen,
            sample.dead_seen,
            sample.rows,
            sample.total_rows
        ),
    ]
}
