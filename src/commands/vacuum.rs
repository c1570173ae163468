//! VACUUM of one heap: the pass over its pages, skipping through the
//! visibility map, then the truncation of empty tail pages.
//!
//! [`vacuum_heap`] computes the horizon once (the oldest xmin of every
//! running transaction and registered snapshot) and visits the heap in
//! chunks of [`CHUNK`] blocks (an eighth of a VM page's range), handed out
//! in block order to the participants: the calling thread and, from the
//! first page that needs a visit on, up to `max_parallel_maintenance_workers`
//! worker threads (at most one participant per core), each with its own
//! vacuum ring. For each chunk a participant reads the one VM page that
//! covers it (shared lock, bits copied out) and skips the blocks whose
//! all-visible bit is set (all-frozen under FREEZE) unless
//! DISABLE_PAGE_SKIPPING: so a VACUUM of a clean table reads only VM pages
//! and starts no worker. Every other block gets
//! [`HeapRelation::vacuum_page`]: hint bits, pruning, freezing, VM bits,
//! free-space map. The live tuples of skipped pages are known exactly from
//! the VM counts, so the report's `live` (the new `reltuples`) is exact.
//!
//! Locking: one heap page (and then its VM page) at a time per participant;
//! readers and writers of the table wait at most for one page. The horizon
//! is taken before the scan, so a snapshot registered later (which can only
//! be newer) never sees a row this VACUUM removes. The participants share
//! nothing but the chunk counter, a stop flag (an error or a cancel in one
//! stops the others) and the pages' own locks; their reports, buffer
//! counters (credited to the statement's thread) and truncation floors are
//! merged at the end, and the tail is cut by the calling thread alone.
//!
//! # What a page costs, and the choices made for speed
//!
//! heapdb checksums every page, and until format version 2 the checksum
//! covered hint bits: the first change to a page after a checkpoint logged
//! a full-page image even when VACUUM only set hint bits and
//! `PD_ALL_VISIBLE`, and a ring buffer could be written only after that
//! log was flushed (PostgreSQL without checksums logs no heap image there;
//! with `data_checksums` it does what heapdb did). Measured on
//! pgbench_accounts, 5M rows, 82,000 pages (`tools/vacuum_bench.rs`):
//! 82,000 images, 73 MB of (LZ4-compressed) WAL, ~320 fsyncs, ~11 µs of
//! CPU per page, LZ4 a quarter of it.
//!
//! Now the checksum leaves hint bits and `PD_ALL_VISIBLE` out
//! (`storage::checksum`), so a torn write of such a page is still valid:
//! VACUUM after a load logs a small `SetAllVisible` per page without an
//! image and without moving the page's LSN (so the next real change still
//! logs the image that protects it), plus the `VmSet` on the map page. Its
//! ring buffers then never wait for the log, and the ring stops asking the
//! WAL writer to flush ahead (`storage::ring`). Same table: 23 images (the
//! map's pages), 5.7 MB of WAL, ~10 fsyncs, ~8.3 µs of CPU per page. The
//! page may reach disk before its `SetAllVisible` record, so the flag must
//! be true whatever the crash: [`vacuum_heap`] first makes durable any
//! asynchronous commit not yet flushed (one flush at most).
//!
//! Then the CPU (callgrind, instructions in `vacuum_page` per page after a
//! load, 200k accounts): 92k with images, 46k without, 17k after four
//! more changes — the checksum's scratch arrays are no longer zeroed (8 kB
//! per call), a page whose only changes are hints keeps the checksum it was
//! read with (`CHECKSUM_OK`, no second CRC on write), pruning decides a
//! run of tuples with the same xmin, xmax and hint bits once and skips the
//! prune plan when nothing is dead, and the free-space map hashes with
//! foldhash and skips unchanged pages. What was left was mostly the
//! kernel's 8 kB `pread` and `pwrite` through the OS cache (~3 µs of the
//! ~6 µs of CPU per page), so a participant now reads the pages it will
//! visit 16 at a time (`BufferPool::read_buffers`, one `preadv`; it holds
//! pins, not locks, on up to 16 pages ahead) and its ring writes the dirty
//! buffers it reuses next 16 at a time (`BufferPool::flush_run`, one
//! `pwrite`): ~20% less CPU again. Single-threaded CPU for the 82,000
//! pages after a load: ~885 ms with images, ~300 ms now (3.7 µs a page).
//! Pages already in the pool are pinned through the relation's
//! recent-buffer hints (`storage::recent`), which the scans and earlier
//! VACUUMs leave, instead of the mapping table: in a 6 GB pool its lookup
//! was two cache misses a page, 8.6% of the samples of a VACUUM after one
//! delete per page, 0.9% with the hints (`perf`, 2M accounts). And while a
//! page is pruned, logged and compressed, the next page's frame is
//! prefetched (all 128 lines at once: the page's work takes microseconds,
//! time enough): pruning's first read of each tuple header was a cache
//! miss. Three sets of alternating runs over 5M accounts after one delete
//! per page: process CPU 939 -> 791, 944 -> 923 and 990 -> 904 ms (medians),
//! wall time within this machine's noise. All at once was not enough:
//! a quarter of pruning's samples still waited on the first load of a
//! tuple header. Spread over the prune loop a few lines per tuple
//! (`Spread`, as the scans do), a dirty VACUUM's process CPU went 651 ->
//! 560 ms (medians of four alternating runs, 5M accounts).
//! With the image gone nothing ties the pages together, so the pass is
//! split over the cores (chunks above): total CPU stays about the same,
//! wall time halves when a core is free.
//!
//! After one delete per page every page is pruned, a real change that logs
//! its image as in PostgreSQL: 82k instructions per page before, 63k now
//! (the image's LZ4 buffers are reused instead of zero-filled per image),
//! ~27k of them LZ4 itself (done on the participants' threads, outside the
//! log's insert lock).
//!
//! Free space: recorded in the relation's in-memory free-space map as each
//! page is vacuumed. The map is not persisted: after a restart it is empty
//! (inserts go to the last page) until the next VACUUM rebuilds it, as
//! DESIGN allows.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::access::heap::PruneScratch;
use crate::access::heap::{HeapRelation, PageVacuumStats, VacuumCutoffs};
use crate::access::vm;
use crate::err;
use crate::error::Result;
use crate::exec::progress::{Progress, ProgressHook, ProgressUnit, SCAN_REPORT_PAGES};
use crate::storage::{BlockNumber, BufferUsage, ForkNumber, PinnedBuffer, Ring, READ_RUN};
use crate::txn::Xid;

/// What VACUUM was asked to do.
#[derive(Debug, Clone, Copy, Default)]
pub struct VacuumOptions {
    /// Freeze every live tuple older than the horizon; skip only all-frozen
    /// pages.
    pub freeze: bool,
    /// Visit every page, whatever the visibility map says.
    pub disable_page_skipping: bool,
    /// Cut empty pages off the end of the relation.
    pub truncate: bool,
}

/// What one VACUUM of one heap found and did (the VERBOSE figures).
#[derive(Debug, Clone, Default)]
pub struct VacuumReport {
    /// Blocks when the pass started.
    pub pages_before: BlockNumber,
    /// Blocks visited.
    pub scanned: BlockNumber,
    /// Blocks skipped through the visibility map.
    pub skipped: BlockNumber,
    /// Empty blocks cut off the end.
    pub pages_removed: BlockNumber,
    /// Tuples removed.
    pub tuples_removed: u64,
    /// Live tuples left (exact: skipped pages count through the VM).
    pub live: u64,
    /// Deleted tuples some snapshot can still see.
    pub recently_dead: u64,
    /// Tuples frozen.
    pub frozen: u64,
    /// Pages in which tuples were frozen.
    pub pages_frozen: BlockNumber,
    /// Pages newly set all-visible.
    pub newly_all_visible: BlockNumber,
    /// Pages newly set all-frozen.
    pub newly_all_frozen: BlockNumber,
    /// Of those newly all-frozen, the ones that were already all-visible.
    pub frozen_were_visible: BlockNumber,
    /// Pages in which tuples were removed.
    pub pages_pruned: BlockNumber,
    /// The horizon used.
    pub oldest_xmin: Xid,
    /// The next xid when the pass ended (for "XIDs old").
    pub next_xid_at_end: Xid,
    /// Buffer counters of the pass.
    pub buffers: BufferUsage,
    /// Wall time.
    pub elapsed: Duration,
}

impl VacuumReport {
    /// Blocks left after the pass.
    pub fn pages_after(&self) -> BlockNumber {
        self.pages_before - self.pages_removed
    }

    /// The report as PostgreSQL 15's `VACUUM VERBOSE` prints it (one INFO
    /// message per element), with PostgreSQL 16's frozen and visibility-map
    /// lines added. `qualified` is the relation's name as shown
    /// (`heapdb.public.t`).
    pub fn verbose_messages(&self, qualified: &str) -> Vec<String> {
        let pct = |n: u64, of: u64| {
            if of == 0 {
                100.0
            } else {
                n as f64 * 100.0 / of as f64
            }
        };
        let total = self.pages_before as u64;
        let secs = self.elapsed.as_secs_f64();
        let mb = |pages: u64| pages as f64 * crate::storage::BLCKSZ as f64 / (1024.0 * 1024.0);
        let rate = |pages: u64| if secs > 0.0 { mb(pages) / secs } else { 0.0 };
        let b = &self.buffers;
        let body = [
            format!("finished vacuuming \"{qualified}\": index scans: 0"),
            format!(
                "pages: {} removed, {} remain, {} scanned ({:.2}% of total), {} skipped using the visibility map",
                self.pages_removed,
                self.pages_after(),
                self.scanned,
                pct(self.scanned as u64, total),
                self.skipped
            ),
            format!(
                "tuples: {} removed, {} remain, {} are dead but not yet removable",
                self.tuples_removed,
                self.live + self.recently_dead,
                self.recently_dead
            ),
            format!(
                "removable cutoff: {}, which was {} XIDs old when operation ended",
                self.oldest_xmin,
                self.next_xid_at_end.saturating_sub(self.oldest_xmin)
            ),
            format!(
                "frozen: {} pages from table ({:.2}% of total) had {} tuples frozen",
                self.pages_frozen,
                pct(self.pages_frozen as u64, total),
                self.frozen
            ),
            format!(
                "visibility map: {} pages set all-visible, {} pages set all-frozen ({} were all-visible)",
                self.newly_all_visible, self.newly_all_frozen, self.frozen_were_visible
            ),
            format!(
                "index scan not needed: {} pages from table ({:.2}% of total) had {} dead item identifiers removed",
                self.pages_pruned,
                pct(self.pages_pruned as u64, total),
                self.tuples_removed
            ),
            format!(
                "avg read rate: {:.3} MB/s, avg write rate: {:.3} MB/s",
                rate(b.shared_read),
                rate(b.shared_written)
            ),
            format!(
                "buffer usage: {} hits, {} misses, {} dirtied",
                b.shared_hit, b.shared_read, b.shared_dirtied
            ),
            format!("system usage: elapsed: {secs:.2} s"),
        ];
        vec![format!("vacuuming \"{qualified}\""), body.join("\n")]
    }

    /// Adds another participant's counts (the per-page figures only).
    fn merge(&mut self, o: &VacuumReport) {
        self.scanned += o.scanned;
        self.skipped += o.skipped;
        self.tuples_removed += o.tuples_removed;
        self.live += o.live;
        self.recently_dead += o.recently_dead;
        self.frozen += o.frozen;
        self.pages_frozen += o.pages_frozen;
        self.newly_all_visible += o.newly_all_visible;
        self.newly_all_frozen += o.newly_all_frozen;
        self.frozen_were_visible += o.frozen_were_visible;
        self.pages_pruned += o.pages_pruned;
    }

    fn add_page(&mut self, p: &PageVacuumStats) {
        self.scanned += 1;
        self.tuples_removed += p.removed as u64;
        self.live += p.live as u64;
        self.recently_dead += p.recently_dead as u64;
        self.frozen += p.frozen as u64;
        self.pages_frozen += (p.frozen > 0) as u32;
        self.pages_pruned += (p.removed > 0) as u32;
        self.newly_all_visible += p.newly_all_visible as u32;
        self.newly_all_frozen += p.newly_all_frozen as u32;
        self.frozen_were_visible += (p.newly_all_frozen && !p.newly_all_visible) as u32;
    }
}

/// The VM bits and counts of heap blocks `first..end` (all on one VM page),
/// copied out under the VM page's shared lock. Blocks past the VM fork read
/// as (0, 0).
fn vm_range(
    rel: &HeapRelation,
    first: BlockNumber,
    end: BlockNumber,
    vm_blocks: BlockNumber,
    out: &mut Vec<(u8, u16)>,
) -> Result<()> {
    out.clear();
    let vb = vm::vm_block(first);
    if vb >= vm_blocks {
        out.resize((end - first) as usize, (0, 0));
        return Ok(());
    }
    let buf = rel
        .pool()
        .read_buffer(rel.rel(), ForkNumber::VisibilityMap, vb, None)?;
    let g = buf.read();
    out.extend((first..end).map(|b| vm::get(&g[..], b)));
    Ok(())
}

/// Heap blocks one participant of the pass takes at a time: an eighth of a
/// visibility-map page's range, so a chunk never spans two map pages (its
/// bits are copied out under one lock).
pub const CHUNK: BlockNumber = vm::HEAPBLOCKS_PER_PAGE / 8;
const _: () = assert!(vm::HEAPBLOCKS_PER_PAGE % CHUNK == 0);

/// What the participants of one pass share.
struct Pass<'a> {
    rel: &'a HeapRelation,
    opts: &'a VacuumOptions,
    cutoffs: VacuumCutoffs,
    nblocks: BlockNumber,
    vm_blocks: BlockNumber,
    /// The relation's recent-buffer hints: pages a scan or an earlier
    /// VACUUM left in the pool are pinned without a mapping lookup.
    recent: std::sync::Arc<[std::sync::atomic::AtomicU32]>,
    /// The first block not handed out yet (64 bits: never wraps).
    next: AtomicU64,
    /// Pages visited by all participants (progress reports).
    visited: AtomicU64,
    /// Set when a participant failed or was canceled: the others stop.
    stop: AtomicBool,
    cancel: &'a AtomicBool,
}

/// One participant's share of the report, and the block below which its
/// pages hold tuples (or were skipped).
#[derive(Default)]
struct Share {
    report: VacuumReport,
    floor: BlockNumber,
}

impl Pass<'_> {
    /// Reports `done` pages of the relation's to `hook`.
    fn report(&self, hook: &ProgressHook, done: u64) {
        hook(&Progress {
            done: done.min(u64::from(self.nblocks)),
            total: Some(u64::from(self.nblocks)),
            unit: ProgressUnit::Pages,
        });
    }

    /// Takes chunks until none is left (or someone stopped), vacuuming their
    /// pages through `ring`. The leader passes `progress` (reports run on
    /// the statement's thread) and `first_work`, called once before its
    /// first page that needs a visit (where the workers are started: a
    /// VACUUM of a clean table reads only the map and starts none).
    fn participate(
        &self,
        mut ring: Option<Ring>,
        progress: Option<&ProgressHook>,
        mut first_work: Option<&mut dyn FnMut()>,
    ) -> Result<Share> {
        let skip_mask = if self.opts.freeze {
            vm::VM_ALL_FROZEN
        } else {
            vm::VM_ALL_VISIBLE
        };
        let mut share = Share::default();
        let mut bits = Vec::with_capacity(CHUNK as usize);
        let mut scratch = PruneScratch::default();
        let mut visited_here = 0u64;
        // Pins of the next pages to visit, read ahead a run at a time.
        let mut ahead: VecDeque<PinnedBuffer<'_>> = VecDeque::new();
        let mut batch = Vec::with_capacity(READ_RUN);
        // The map page this participant set bits on last, kept pinned.
        let mut vm_pin = None;
        loop {
            if self.stop.load(Ordering::Relaxed) {
                break;
            }
            let first = self.next.fetch_add(u64::from(CHUNK), Ordering::Relaxed);
            if first >= u64::from(self.nblocks) {
                break;
            }
            let first = first as BlockNumber;
            let end = (first + CHUNK).min(self.nblocks);
            vm_range(self.rel, first, end, self.vm_blocks, &mut bits)?;
            for (b, &(vbits, count)) in (first..end).zip(&bits) {
                visited_here += 1;
                if visited_here % SCAN_REPORT_PAGES == 0 {
                    let all = self.visited.fetch_add(SCAN_REPORT_PAGES, Ordering::Relaxed);
                    if let Some(hook) = progress {
                        self.report(hook, all + SCAN_REPORT_PAGES);
                    }
                }
                if !self.opts.disable_page_skipping && vbits & skip_mask != 0 {
                    share.report.skipped += 1;
                    share.report.live += count as u64;
                    share.floor = b + 1;
                    continue;
                }
                if self.cancel.load(Ordering::Relaxed) {
                    return Err(err!(
                        QueryCanceled,
                        "canceling statement due to user request"
                    ));
                }
                if let Some(f) = first_work.take() {
                    f();
                }
                if ahead.front().map_or(true, |p| p.block() != b) {
                    // The run of pages to visit from here, read in one go.
                    ahead.clear();
                    let run = (b..end)
                        .zip(&bits[(b - first) as usize..])
                        .take(READ_RUN)
                        .take_while(|(_, &(v, _))| {
                            self.opts.disable_page_skipping || v & skip_mask == 0
                        })
                        .count() as u32;
                    self.rel.pool().read_buffers(
                        self.rel.rel(),
                        ForkNumber::Main,
                        b,
                        run,
                        &self.recent,
                        ring.as_mut(),
                        &mut batch,
                    )?;
                    ahead.extend(batch.drain(..));
                }
                let buf = ahead
                    .pop_front()
                    .expect("read_buffers pins at least its first block");
                // The next page's lines are prefetched a few per tuple over
                // this page's prune loop (`storage::prefetch`). Issued all at
                // once, a quarter of pruning's samples still waited on the
                // first load of a tuple header; spread, a dirty VACUUM took
                // ~14% less CPU (medians of four alternating runs).
                if let Some(next) = ahead.front() {
                    scratch.ahead = next.ahead();
                }
                let p = self
                    .rel
                    .vacuum_pinned_in(buf, self.cutoffs, &mut scratch, &mut vm_pin)?;
                share.report.add_page(&p);
                if !p.empty {
                    share.floor = b + 1;
                }
            }
        }
        Ok(share)
    }
}

/// The participants a VACUUM of `nblocks` blocks may use: one per ring
/// given, at most one per core, and only as many as there are chunks.
fn participants(rings: usize, nblocks: BlockNumber) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    rings
        .min(cores)
        .min(nblocks.div_ceil(CHUNK) as usize)
        .max(1)
}

/// Vacuums `rel` (see the module doc). `rings` are the participants' vacuum
/// rings: with more than one, worker threads share the heap pass with the
/// calling thread, chunk by chunk ([`CHUNK`]; at most one participant per
/// core; started only once a page needs a visit). `cancel` is checked before
/// every page (57014 when set); `progress` hears, on the calling thread, of
/// the pages done by all (skipped ones included) out of the relation's.
pub fn vacuum_heap(
    rel: &HeapRelation,
    opts: &VacuumOptions,
    mut rings: Vec<Ring>,
    cancel: &AtomicBool,
    progress: Option<&ProgressHook>,
) -> Result<VacuumReport> {
    let start = Instant::now();
    let buffers_before = BufferUsage::current();
    let txns = rel.txns();
    let cutoffs = VacuumCutoffs {
        oldest_xmin: txns.oldest_xmin(),
        freeze: opts.freeze,
    };
    // Pages may be set all-visible without a log interlock: the commits
    // that makes them so must be durable first.
    rel.flush_async_commits()?;
    let nblocks = rel.nblocks()?;
    let pass = Pass {
        rel,
        opts,
        cutoffs,
        nblocks,
        vm_blocks: rel.pool().nblocks(rel.rel(), ForkNumber::VisibilityMap)?,
        recent: rel.recent_buffers(nblocks),
        next: AtomicU64::new(0),
        visited: AtomicU64::new(0),
        stop: AtomicBool::new(false),
        cancel,
    };
    rings.truncate(participants(rings.len(), nblocks));
    let leader_ring = if rings.is_empty() {
        None
    } else {
        Some(rings.remove(0))
    };
    let (leader, workers) = std::thread::scope(|s| {
        let mut handles = Vec::new();
        let pass = &pass;
        let mut start_workers = || {
            for ring in rings.drain(..) {
                handles.push(s.spawn(move || {
                    let before = BufferUsage::current();
                    let r = pass.participate(Some(ring), None, None);
                    if r.is_err() {
                        pass.stop.store(true, Ordering::Relaxed);
                    }
                    (r, BufferUsage::current().since(&before))
                }));
            }
        };
        let leader = pass.participate(leader_ring, progress, Some(&mut start_workers));
        if leader.is_err() {
            pass.stop.store(true, Ordering::Relaxed);
        }
        let workers: Vec<_> = handles
            .into_iter()
            .map(|h| h.join().expect("a VACUUM worker panicked"))
            .collect();
        (leader, workers)
    });
    let mut share = leader?;
    if let Some(hook) = progress {
        pass.report(hook, u64::from(nblocks));
    }
    for (r, buffers) in workers {
        // The workers' buffer work counts for this statement too.
        buffers.credit_to_thread();
        let w = r?;
        share.report.merge(&w.report);
        share.floor = share.floor.max(w.floor);
    }
    let mut report = VacuumReport {
        pages_before: nblocks,
        oldest_xmin: cutoffs.oldest_xmin,
        ..share.report
    };
    if opts.truncate && share.floor < nblocks {
        report.pages_removed = rel.truncate_empty_tail(share.floor)?;
    }
    report.next_xid_at_end = txns.next_xid();
    report.buffers = BufferUsage::current().since(&buffers_before);
    report.elapsed = start.elapsed();
    Ok(report)
}
