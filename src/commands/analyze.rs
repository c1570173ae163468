//! ANALYZE of one heap: PostgreSQL's two-stage sample with read-ahead, then
//! per-column statistics ([`super::stats`]).
//!
//! Stage one chooses `min(targrows, nblocks)` blocks at random
//! ([`BlockSampler`], increasing order); stage two keeps a uniform
//! reservoir of `targrows` rows among the live rows of those blocks
//! ([`Reservoir`]). So the work grows with the sample, not with the table:
//! 30,000 rows (the default target 100 x 300) read at most 30,000 pages.
//!
//! Read-ahead: the blocks are known before the first read, so they are
//! announced to the OS ahead of the reads (`posix_fadvise(WILLNEED)` through
//! [`BufferPool::prefetch_range`]), `maintenance_io_concurrency` 128 kB
//! *stretches* ahead ([`ReadAhead`], [`COMBINE_BLOCKS`]: PostgreSQL 17's
//! `io_combine_limit`). Within a stretch each run of consecutive sampled
//! blocks is one request, and the blocks between them are not asked for: a
//! dense sample (the default 30,000 blocks of an 82,000-page table, one in
//! 2.7) then reads 240 MB instead of the table's 640 MB, with a few dozen
//! requests in flight, where one 8 kB request per block a few ahead kept
//! the kernel's own read-ahead from starting and was slower than nothing,
//! and whole-stretch requests read every byte as the kernel's read-ahead
//! does. With the setting at 0 nothing is announced and each read waits for
//! the disk or the kernel's read-ahead (8 MB on this VM, which makes an
//! ascending dense sample nearly a sequential read of the whole table).
//! Measured in README's VACUUM and ANALYZE section.
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
//! [`BufferPool::prefetch_range`]: crate::storage::BufferPool::prefetch_range

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

/// Most blocks one read-ahead request covers: 128 kB.
pub const COMBINE_BLOCKS: BlockNumber = 16;

/// Read-ahead over a sorted list of blocks (see the module doc): before
/// block `i` of the list is read, [`ReadAhead::advance`] keeps `depth`
/// stretches announced that cover blocks from `i` on, each stretch at most
/// [`COMBINE_BLOCKS`] blocks holding one or more of the list's blocks, and
/// announced as one request per run of consecutive listed blocks in it.
#[derive(Debug)]
pub struct ReadAhead {
    /// Requests to keep in flight (`maintenance_io_concurrency`).
    depth: usize,
    /// The first list index not announced yet.
    next: usize,
    /// For each request in flight, the last list index it covers.
    ends: std::collections::VecDeque<usize>,
}

impl ReadAhead {
    /// Read-ahead keeping `depth` requests in flight (0: none).
    pub fn new(depth: usize) -> ReadAhead {
        ReadAhead {
            depth,
            next: 0,
            ends: std::collections::VecDeque::with_capacity(depth),
        }
    }

    /// Called before reading `blocks[i]`: forgets the stretches whose blocks
    /// are all read and announces new ones until `depth` are in flight, each
    /// as one request (`issue(first block, count)`) per run of consecutive
    /// blocks of the list in it. Returns the number of requests issued.
    pub fn advance(
        &mut self,
        blocks: &[BlockNumber],
        i: usize,
        mut issue: impl FnMut(BlockNumber, u32) -> Result<()>,
    ) -> Result<u64> {
        while self.ends.front().is_some_and(|&e| e < i) {
            self.ends.pop_front();
        }
        self.next = self.next.max(i);
        let mut issued = 0;
        while self.ends.len() < self.depth && self.next < blocks.len() {
            let first = blocks[self.next];
            let mut last = self.next;
            while last + 1 < blocks.len() && blocks[last + 1] < first + COMBINE_BLOCKS {
                last += 1;
            }
            // One request per run of consecutive sampled blocks: the blocks
            // in between are not read (a whole-stretch request read 2.7x
            // the bytes of a dense sample).
            let mut k = self.next;
            while k <= last {
                let run = k;
                while k < last && blocks[k + 1] == blocks[k] + 1 {
                    k += 1;
                }
                issue(blocks[run], blocks[k] - blocks[run] + 1)?;
                issued += 1;
                k += 1;
            }
            self.ends.push_back(last);
            self.next = last + 1;
        }
        Ok(issued)
    }
}

/// How to sample.
#[derive(Debug, Clone, Copy)]
pub struct SampleOptions {
    /// Rows wanted (300 x the statistics target).
    pub targrows: usize,
    /// Read-ahead requests to keep in flight (`maintenance_io_concurrency`;
    /// 0: none).
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
    /// Read-ahead requests issued.
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
    let mut ahead = ReadAhead::new(opts.prefetch_distance);
    for (i, &block) in blocks.iter().enumerate() {
        if cancel.load(Ordering::Relaxed) {
            return Err(err!(
                QueryCanceled,
                "canceling statement due to user request"
            ));
        }
        sample.prefetched += ahead.advance(&blocks, i, |first, count| {
            pool.prefetch_range(rel.rel(), ForkNumber::Main, first, count)
                .map(|_| ())
        })?;
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The requests a read of `blocks` issues, as (first block, count) per
    /// list index at which they were issued.
    fn requests(depth: usize, blocks: &[BlockNumber]) -> Vec<(usize, BlockNumber, u32)> {
        let mut ra = ReadAhead::new(depth);
        let mut out = Vec::new();
        for i in 0..blocks.len() {
            ra.advance(blocks, i, |b, n| {
                out.push((i, b, n));
                Ok(())
            })
            .unwrap();
        }
        out
    }

    #[test]
    fn dense_samples_are_read_ahead_by_128_kb_stretch_sampled_blocks_only() {
        // Runs of 2 listed blocks 4 apart: 0-1, 4-5, ... (a stretch of 16
        // blocks holds 4 runs, 8 listed blocks).
        let blocks: Vec<BlockNumber> = (0..100).map(|k| (k / 2) * 4 + k % 2).collect();
        let r = requests(2, &blocks);
        // The first two stretches are announced at once, run by run.
        assert_eq!(r[0], (0, 0, 2));
        assert_eq!(r[1], (0, 4, 2));
        assert!(r.iter().all(|&(_, _, n)| n == 2), "runs, never gaps");
        let first_lap = r.iter().filter(|&&(i, _, _)| i == 0).count();
        assert_eq!(first_lap, 8, "two stretches of 4 runs");
        assert_eq!(
            r[first_lap],
            (8, 32, 2),
            "the third stretch once the first is read"
        );
        assert_eq!(r.len(), 50, "every run once");
        for b in &blocks {
            let n = r
                .iter()
                .filter(|&&(_, first, count)| (first..first + count).contains(b))
                .count();
            assert_eq!(n, 1, "block {b} announced once");
        }
    }

    #[test]
    fn sparse_samples_get_one_request_per_block_depth_ahead() {
        let blocks: Vec<BlockNumber> = (0..50).map(|k| k * 100).collect();
        let r = requests(10, &blocks);
        assert_eq!(r.len(), 50);
        assert!(r.iter().all(|&(_, _, n)| n == 1));
        assert_eq!(r.iter().filter(|&&(i, _, _)| i == 0).count(), 10);
        // Later, one new request per block read, always 10 ahead.
        assert_eq!(r[10], (1, 1000, 1));
        assert!(requests(0, &blocks).is_empty(), "0 turns read-ahead off");
    }
}
