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
//! announced to the OS ahead of the reads (`posix_fadvise(WILLNEED)` of
//! each run of adjacent sampled blocks, `maintenance_io_concurrency` 128 kB
//! stretches ahead) by a helper thread that follows the reader
//! ([`super::readahead`] says what is announced and why). With the setting
//! at 0 nothing is announced and each read that misses the OS cache waits
//! for the disk, or for the kernel's own read-ahead (8 MB on this VM, which
//! turns an ascending dense sample into a sequential read of the whole
//! table). The blocks read, the rows kept and the statistics do not depend
//! on the setting (tests/analyze_prefetch.rs). Measured in README's VACUUM
//! and ANALYZE section.
//!
//! The reservoir keeps its rows as tuple bytes ([`KeptTuples`]) and decodes
//! them once at the end: a replaced row then costs a copy, not a decode
//! and the drop of cold values.
//!
//! Live and dead rows are judged by the statement's snapshot: rows it sees
//! are live and may enter the sample; the other NORMAL tuples count as dead
//! for the report. The table's row estimate is the live rows per sampled
//! page times the pages (PostgreSQL's, when it samples every page it is
//! exact).
//!
//! Locking: one page at a time under its shared content lock; the rows taken
//! are copied out under that lock and the lock is released before the next
//! page. The read-ahead thread takes no lock (advice only; it looks up the
//! pool's mapping to skip pages the pool holds).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::readahead::{announce, FinishOnDrop, ReadAhead, ReadProgress, COMBINE_BLOCKS};
use super::stats::{column_stats, BlockSampler, Reservoir, Rng};
use crate::access::heap::pageops::{apply_page_hints, collect_visible, Hint};
use crate::access::heap::{tuple, HeapRelation};
use crate::catalog::{ColumnStats, TableDef};
use crate::err;
use crate::error::Result;
use crate::exec::scan::tuple_desc;
use crate::storage::page::{self, LP_NORMAL};
use crate::storage::{BlockNumber, ForkNumber, Ring};
use crate::txn::Snapshot;
use crate::types::Value;

/// The reservoir's rows as raw tuple bytes, slot by slot, decoded once
/// the sample is final.
///
/// Why bytes: a row replaced in the reservoir (about `k ln(rows seen / k)`
/// times: ~120,000 for the default 30,000-row sample of 5M rows) cost a
/// decode into values and the drop of the values it replaced, whose
/// memory was cold by then (a fifth of a warm ANALYZE's CPU). Here a taken
/// row is one copy onto the end of an arena and a slot update; the bytes
/// it replaced become garbage, reclaimed by compacting once as many rows
/// were put as there are slots (so the arena stays within about twice the
/// live bytes). The old slot is never read on replacement: that load
/// missed the cache on most replacements.
#[derive(Debug, Default)]
pub struct KeptTuples {
    /// Tuples, each at an 8-byte aligned start (the alignment they had on
    /// their page), live and replaced ones.
    arena: Vec<u8>,
    /// Per reservoir slot: the start and length of its tuple in `arena`,
    /// and its physical position (block and line pointer).
    slots: Vec<(usize, usize, u64)>,
    /// Rows put since the arena was last compacted.
    since_compact: usize,
}

impl KeptTuples {
    /// Stores `tuple`, found at physical position `pos` (block and line
    /// pointer, `block << 16 | offset`), as the row of `slot` (`slot ==
    /// len()` appends).
    pub fn put(&mut self, slot: usize, pos: u64, tuple: &[u8]) {
        if self.since_compact >= self.slots.len().max(4096) {
            self.compact();
        }
        self.since_compact += 1;
        let start = self.arena.len().next_multiple_of(8);
        self.arena.resize(start, 0);
        self.arena.extend_from_slice(tuple);
        let entry = (start, tuple.len(), pos);
        if slot == self.slots.len() {
            self.slots.push(entry);
        } else {
            self.slots[slot] = entry;
        }
    }

    /// Rows kept.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// Whether no row is kept.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// The kept tuples in slot order.
    pub fn iter(&self) -> impl Iterator<Item = &[u8]> {
        self.slots.iter().map(|&(s, n, _)| &self.arena[s..s + n])
    }

    /// The kept tuples in physical order (PostgreSQL sorts its sample by
    /// tuple id, which the correlation statistic relies on).
    pub fn in_physical_order(&self) -> impl Iterator<Item = &[u8]> {
        let mut order: Vec<&(usize, usize, u64)> = self.slots.iter().collect();
        order.sort_unstable_by_key(|e| e.2);
        order.into_iter().map(|&(s, n, _)| &self.arena[s..s + n])
    }

    /// Copies the live tuples into a new arena, in slot order.
    fn compact(&mut self) {
        let live: usize = self
            .slots
            .iter()
            .map(|&(_, n, _)| n.next_multiple_of(8))
            .sum();
        let mut arena = Vec::with_capacity(2 * live + 4096);
        for (s, n, _) in &mut self.slots {
            let start = arena.len().next_multiple_of(8);
            arena.resize(start, 0);
            arena.extend_from_slice(&self.arena[*s..*s + *n]);
            *s = start;
        }
        self.arena = arena;
        self.since_compact = 0;
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
    /// Blocks read before the read-ahead thread had announced them (it
    /// was behind the reader); 0 without read-ahead.
    pub unannounced: u64,
    /// Wall time of the sampling.
    pub elapsed: Duration,
}

/// The per-page work of the sample: read a block through the ring, judge
/// its tuples by the snapshot, offer the visible ones to the reservoir.
struct PageReader<'a> {
    rel: &'a HeapRelation,
    snap: &'a Snapshot,
    ring: Option<&'a mut Ring>,
    cancel: &'a AtomicBool,
    reservoir: Reservoir,
    /// Scratch: the page's visible line pointers and hint bits to set.
    visible: Vec<page::OffsetNumber>,
    hints: Vec<Hint>,
}

impl PageReader<'_> {
    /// Reads `block` into the sample.
    fn read(
        &mut self,
        block: BlockNumber,
        rng: &mut Rng,
        sample: &mut Sample,
        kept: &mut KeptTuples,
    ) -> Result<()> {
        if self.cancel.load(Ordering::Relaxed) {
            return Err(err!(
                QueryCanceled,
                "canceling statement due to user request"
            ));
        }
        let pool = self.rel.pool();
        let buf = pool.read_buffer(
            self.rel.rel(),
            ForkNumber::Main,
            block,
            self.ring.as_deref_mut(),
        )?;
        let g = buf.read();
        self.visible.clear();
        self.hints.clear();
        collect_visible(
            &g[..],
            self.snap,
            self.rel.txns().clog(),
            &mut self.visible,
            &mut self.hints,
        )?;
        sample.blocks_read += 1;
        let normal = (1..=page::max_offset(&g[..]))
            .filter(|&o| page::item_id(&g[..], o).flags == LP_NORMAL)
            .count();
        sample.live_seen += self.visible.len() as u64;
        sample.dead_seen += (normal - self.visible.len()) as u64;
        for &o in &self.visible {
            let Some(slot) = self.reservoir.offer(rng) else {
                continue;
            };
            let t = page::get_item(&g[..], o).expect("a visible line pointer holds a tuple");
            kept.put(slot, (u64::from(block) << 16) | u64::from(o), t);
        }
        drop(g);
        if !self.hints.is_empty() {
            let mut w = buf.write();
            if apply_page_hints(&mut w[..], &self.hints) {
                w.mark_dirty_hint();
            }
        }
        Ok(())
    }
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
    let mut sample = Sample {
        columns: vec![Vec::new(); columns.len()],
        nblocks,
        ..Sample::default()
    };
    let mut kept = KeptTuples::default();
    let mut reader = PageReader {
        rel,
        snap,
        ring: ring.as_mut(),
        cancel,
        reservoir: Reservoir::new(opts.targrows),
        visible: Vec::new(),
        hints: Vec::new(),
    };
    let depth = opts.prefetch_distance;
    let pool = rel.pool();
    let relnode = rel.rel();
    let issue = |first, count| pool.prefetch_range(relnode, ForkNumber::Main, first, count);
    if depth == 0 {
        for &block in &blocks {
            reader.read(block, &mut rng, &mut sample, &mut kept)?;
        }
    } else {
        // The requests are issued by a helper thread following the reader
        // (see `readahead`); if no thread can be started, by the reader.
        let progress = ReadProgress::default();
        std::thread::scope(|s| -> Result<()> {
            let helper = std::thread::Builder::new()
                .name("analyze read-ahead".into())
                .spawn_scoped(s, || announce(&blocks, depth, &progress, issue));
            let Ok(helper) = helper else {
                let mut ahead = ReadAhead::new(depth);
                for (i, &block) in blocks.iter().enumerate() {
                    sample.prefetched += ahead.advance(&blocks, i, issue)?;
                    reader.read(block, &mut rng, &mut sample, &mut kept)?;
                }
                return Ok(());
            };
            let done = (|| {
                let _finish = FinishOnDrop(&progress);
                for (i, &block) in blocks.iter().enumerate() {
                    if !progress.reading(i) {
                        // The helper is behind: ask for this block's run
                        // now, or the read's miss starts the kernel's own
                        // read-ahead (bytes nobody asked for) and waits.
                        sample.unannounced += 1;
                        let run = run_len(&blocks[i..]);
                        let _ = issue(block, run);
                    }
                    reader.read(block, &mut rng, &mut sample, &mut kept)?;
                }
                Ok(())
            })();
            sample.prefetched = helper.join().expect("the read-ahead thread does not panic");
            done
        })?;
    }
    sample.rows = kept.len();
    // Decoded once, in physical order, now that the reservoir is final.
    let mut datums: Vec<Option<&[u8]>> = vec![None; upto];
    for t in kept.in_physical_order() {
        datums.iter_mut().for_each(|d| *d = None);
        tuple::deform(t, &desc, upto, &mut datums)?;
        for (k, &c) in columns.iter().enumerate() {
            sample.columns[k].push(datums[c].map(|b| Value::decode(&types[k], b)));
        }
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

/// How many blocks from `blocks[0]` on are consecutive in the list, at
/// most [`COMBINE_BLOCKS`].
fn run_len(blocks: &[BlockNumber]) -> u32 {
    let mut n = 1;
    while (n as usize) < blocks.len() && n < COMBINE_BLOCKS && blocks[n as usize] == blocks[0] + n {
        n += 1;
    }
    n
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

    #[test]
    fn run_len_counts_consecutive_listed_blocks_up_to_a_stretch() {
        assert_eq!(run_len(&[5, 6, 7, 9]), 3);
        assert_eq!(run_len(&[5]), 1);
        assert_eq!(run_len(&[5, 7]), 1);
        let long: Vec<BlockNumber> = (100..140).collect();
        assert_eq!(run_len(&long), COMBINE_BLOCKS);
    }

    #[test]
    fn kept_tuples_keep_the_last_row_put_in_each_slot_across_compactions() {
        let mut k = KeptTuples::default();
        let row = |slot: usize, gen: usize| -> Vec<u8> {
            let len = 23 + (slot * 7 + gen) % 90;
            (0..len).map(|b| (b + slot + gen) as u8).collect()
        };
        for slot in 0..100 {
            k.put(slot, slot as u64, &row(slot, 0));
        }
        // Enough replacements for several compactions (one per 4096 puts).
        let mut last = vec![0; 100];
        for gen in 1..=20_000 {
            let slot = (gen * 37) % 100;
            k.put(slot, (100 - slot) as u64, &row(slot, gen));
            last[slot] = gen;
        }
        assert_eq!(k.len(), 100);
        for (slot, t) in k.iter().enumerate() {
            assert_eq!(t, &row(slot, last[slot])[..], "slot {slot}");
        }
        assert!(
            k.arena.len() < 3 * 100 * 120 + 4096 * 120,
            "garbage is reclaimed"
        );
        // Physical order: the last positions given, descending slots.
        let phys: Vec<&[u8]> = k.in_physical_order().collect();
        for (i, t) in phys.iter().enumerate() {
            let slot = 99 - i;
            assert_eq!(*t, &row(slot, last[slot])[..], "position {i}");
        }
    }
}
