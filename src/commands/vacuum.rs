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
//! VACUUM after a load logs no image of the heap page and does not move
//! its LSN (so the next real change still logs the image that protects
//! it): the flag rides in the `VmSet` on the map page (with the page's
//! summary slot, `access::sumfork`: one record per page). Its
//! ring buffers then never wait for the log, and the ring stops asking the
//! WAL writer to flush ahead (`storage::ring`). Same table: 23 images (the
//! map's pages), 5.7 MB of WAL, ~10 fsyncs, ~8.3 µs of CPU per page. The
//! page may reach disk before the record that logs its flag, so the flag must
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
//! # Tables with indexes
//!
//! PostgreSQL's two passes. Pass one (above) leaves the line pointers of
//! removed tuples DEAD and each participant collects their TIDs; when they
//! fill `dead_items_bytes` (`maintenance_work_mem`), the participants stop
//! (the rest of a chunk is kept for the next round), the TIDs are sorted
//! and bulk-deleted from every index, and pass two frees them page by page
//! and sets the pages' VM bits; then pass one goes on. Each round is one
//! of VERBOSE's "index scans". The order of the log records (every
//! index's deletions, then the heap's `VacuumDead`) is what keeps a crash
//! from freeing a slot an index names.
//!
//! Free space: recorded in the relation's in-memory free-space map as each
//! page is vacuumed. The map is not persisted: after a restart it is empty
//! (inserts go to the last page) until the next VACUUM rebuilds it, as
//! DESIGN allows.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::access::heap::PruneScratch;
use crate::access::heap::{HeapRelation, PageVacuumStats, VacuumCutoffs};
use crate::access::nbtree::BTree;
use crate::access::vm;
use crate::err;
use crate::error::Result;
use crate::exec::progress::{Progress, ProgressHook, ProgressUnit, SCAN_REPORT_PAGES};
use crate::storage::page::{OffsetNumber, MAX_HEAP_TUPLES_PER_PAGE};
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
    /// Bytes for the dead TIDs of a table with indexes
    /// (`maintenance_work_mem`; 0 = its default, 64 MB). When they are
    /// full, the indexes and then the heap are vacuumed before the first
    /// pass goes on (another "index scan").
    pub dead_items_bytes: usize,
}

/// One index of the table being vacuumed: its name (for VERBOSE) and tree.
pub struct VacuumIndex {
    /// The index's name.
    pub name: String,
    /// The open tree.
    pub tree: BTree,
}

/// What VACUUM did to one index (VERBOSE's `index "name": ...` line).
#[derive(Debug, Clone, Default)]
pub struct IndexVacuumReport {
    /// The index's name.
    pub name: String,
    /// Pages in the index after the pass.
    pub pages: u32,
    /// Entries removed by the bulk deletes.
    pub tuples_removed: u64,
    /// Pages this VACUUM deleted.
    pub pages_newly_deleted: u32,
    /// Deleted pages in the index after the pass.
    pub pages_deleted: u32,
    /// Deleted pages listed as reusable.
    pub pages_free: u32,
}

/// A dead TID as stored for the index pass: block and offset in one
/// sortable word (8 bytes; PostgreSQL's `ItemPointerData` is 6).
type DeadTid = u64;

fn pack(block: BlockNumber, offset: OffsetNumber) -> DeadTid {
    u64::from(block) << 16 | u64::from(offset)
}

const DEAD_TID_BYTES: usize = std::mem::size_of::<DeadTid>();

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
    /// The table has indexes (VERBOSE's index lines).
    pub has_indexes: bool,
    /// Rounds of index pass + second heap pass ("index scans: N").
    pub index_scans: u32,
    /// Pages that had DEAD line pointers for the index pass.
    pub dead_item_pages: BlockNumber,
    /// DEAD line pointers removed from the indexes and then freed.
    pub dead_items: u64,
    /// Each index's figures (when `index_scans > 0`).
    pub indexes: Vec<IndexVacuumReport>,
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
        let mut body = vec![
            format!(
                "finished vacuuming \"{qualified}\": index scans: {}",
                self.index_scans
            ),
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
        ];
        let (pages, items) = if self.has_indexes {
            (self.dead_item_pages, self.dead_items)
        } else {
            (self.pages_pruned, self.tuples_removed)
        };
        body.push(format!(
            "index scan {}needed: {} pages from table ({:.2}% of total) had {} dead item identifiers removed",
            if self.index_scans == 0 { "not " } else { "" },
            pages,
            pct(pages as u64, total),
            items
        ));
        if self.index_scans > 0 {
            // PostgreSQL 15's `btvacuumcleanup` figures.
            body.extend(self.indexes.iter().map(|ix| {
                format!(
                    "index \"{}\": pages: {} in total, {} newly deleted, {} currently deleted, {} reusable",
                    ix.name, ix.pages, ix.pages_newly_deleted, ix.pages_deleted, ix.pages_free
                )
            }));
        }
        body.extend([
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
        ]);
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
        self.dead_item_pages += o.dead_item_pages;
        self.dead_items += o.dead_items;
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
        self.dead_item_pages += (p.dead_items > 0) as u32;
        self.dead_items += u64::from(p.dead_items);
    }

    /// Adds what the second heap pass did to a page (its flags and
    /// freezing; its tuples were counted by the first pass).
    fn add_second_pass(&mut self, p: &PageVacuumStats) {
        self.frozen += p.frozen as u64;
        self.pages_frozen += (p.frozen > 0) as u32;
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
    /// The table has indexes: dead TIDs are collected, and the round ends
    /// when they fill `dead_max`.
    indexed: bool,
    /// Dead TIDs a round may collect.
    dead_max: u64,
    /// Dead TIDs collected in this round by all participants.
    dead_count: AtomicU64,
    /// Room kept free for the pages the participants are visiting (one
    /// page's worst case each).
    margin: u64,
    /// Ranges of chunks whose pages a participant left for the next round
    /// when the dead TIDs were full (each within one chunk).
    resume: Mutex<Vec<(BlockNumber, BlockNumber)>>,
}

/// One participant's share of the report, the block below which its
/// pages hold tuples (or were skipped), and the dead TIDs it found.
#[derive(Default)]
struct Share {
    report: VacuumReport,
    floor: BlockNumber,
    dead: Vec<DeadTid>,
}

impl Pass<'_> {
    /// The next blocks to visit, all on one VM page: a range left over by
    /// the last round first, then the next chunk.
    fn take_range(&self) -> Option<(BlockNumber, BlockNumber)> {
        if self.indexed {
            let left = self.resume().pop();
            if left.is_some() {
                return left;
            }
        }
        let first = self.next.fetch_add(u64::from(CHUNK), Ordering::Relaxed);
        if first >= u64::from(self.nblocks) {
            return None;
        }
        let first = first as BlockNumber;
        Some((first, (first + CHUNK).min(self.nblocks)))
    }

    /// Whether the round's dead TIDs are full: a page more might not fit
    /// (PostgreSQL's check before each page, with room for every
    /// participant's page in flight).
    fn dead_items_full(&self) -> bool {
        let n = self.dead_count.load(Ordering::Relaxed);
        n > 0 && n + self.margin > self.dead_max
    }

    /// The ranges left for the next round (a poisoned lock still holds
    /// them: a participant that panicked fails the whole VACUUM anyway).
    fn resume(&self) -> std::sync::MutexGuard<'_, Vec<(BlockNumber, BlockNumber)>> {
        self.resume.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether blocks remain for another round.
    fn work_left(&self) -> bool {
        !self.resume().is_empty() || self.next.load(Ordering::Relaxed) < u64::from(self.nblocks)
    }

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
        ring: &mut Option<Ring>,
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
            let Some((first, end)) = self.take_range() else {
                break;
            };
            vm_range(self.rel, first, end, self.vm_blocks, &mut bits)?;
            for (b, &(vbits, count)) in (first..end).zip(&bits) {
                let skip = !self.opts.disable_page_skipping && vbits & skip_mask != 0;
                if !skip && self.indexed && self.dead_items_full() {
                    // The rest of this range waits for the next round.
                    self.resume().push((b, end));
                    return Ok(share);
                }
                visited_here += 1;
                if visited_here % SCAN_REPORT_PAGES == 0 {
                    let all = self.visited.fetch_add(SCAN_REPORT_PAGES, Ordering::Relaxed);
                    if let Some(hook) = progress {
                        self.report(hook, all + SCAN_REPORT_PAGES);
                    }
                }
                if skip {
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
                if !scratch.dead_items.is_empty() {
                    share
                        .dead
                        .extend(scratch.dead_items.iter().map(|&o| pack(b, o)));
                    self.dead_count
                        .fetch_add(scratch.dead_items.len() as u64, Ordering::Relaxed);
                }
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

/// Vacuums `rel` (see the module doc) and, when `indexes` are given (every
/// index of the table), removes the index entries of the dead tuples before
/// freeing their line pointers. `rings` are the participants' vacuum
/// rings: with more than one, worker threads share the heap pass with the
/// calling thread, chunk by chunk ([`CHUNK`]; at most one participant per
/// core; started only once a page needs a visit). `cancel` is checked before
/// every page (57014 when set); `progress` hears, on the calling thread, of
/// the pages done by all (skipped ones included) out of the relation's.
pub fn vacuum_heap(
    rel: &HeapRelation,
    indexes: &[VacuumIndex],
    opts: &VacuumOptions,
    rings: Vec<Ring>,
    cancel: &AtomicBool,
    progress: Option<&ProgressHook>,
) -> Result<VacuumReport> {
    let start = Instant::now();
    let buffers_before = BufferUsage::current();
    let txns = rel.txns();
    let cutoffs = VacuumCutoffs {
        oldest_xmin: txns.oldest_xmin(),
        freeze: opts.freeze,
        indexes: !indexes.is_empty(),
    };
    // Pages may be set all-visible without a log interlock: the commits
    // that makes them so must be durable first.
    rel.flush_async_commits()?;
    let nblocks = rel.nblocks()?;
    let mut rings: Vec<Option<Ring>> = rings.into_iter().map(Some).collect();
    rings.truncate(participants(rings.len(), nblocks));
    if rings.is_empty() {
        rings.push(None);
    }
    let bytes = if opts.dead_items_bytes == 0 {
        64 << 20
    } else {
        opts.dead_items_bytes
    };
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
        indexed: cutoffs.indexes,
        dead_max: (bytes / DEAD_TID_BYTES) as u64,
        dead_count: AtomicU64::new(0),
        margin: (MAX_HEAP_TUPLES_PER_PAGE * rings.len()) as u64,
        resume: Mutex::new(Vec::new()),
    };
    let mut report = VacuumReport {
        pages_before: nblocks,
        oldest_xmin: cutoffs.oldest_xmin,
        has_indexes: cutoffs.indexes,
        indexes: indexes
            .iter()
            .map(|ix| IndexVacuumReport {
                name: ix.name.clone(),
                ..IndexVacuumReport::default()
            })
            .collect(),
        ..VacuumReport::default()
    };
    let mut floor = 0;
    loop {
        let mut share = pass.round(&mut rings, progress)?;
        report.merge(&share.report);
        floor = floor.max(share.floor);
        if !share.dead.is_empty() {
            // Chunks were handed out out of order: sort for the lookups.
            share.dead.sort_unstable();
            vacuum_indexes(indexes, &share.dead, &mut report.indexes, &|| {
                txns.next_xid()
            })?;
            let leader_ring = rings.first_mut().and_then(|r| r.as_mut());
            pass.second_heap_pass(&share.dead, leader_ring, &mut report)?;
            report.index_scans += 1;
        }
        pass.dead_count.store(0, Ordering::Relaxed);
        if !pass.indexed || !pass.work_left() {
            break;
        }
    }
    if let Some(hook) = progress {
        pass.report(hook, u64::from(nblocks));
    }
    for (ix, r) in indexes.iter().zip(&mut report.indexes) {
        r.pages = ix.tree.num_pages()?;
        if report.index_scans > 0 || ix.tree.cleanup_needed(r.pages)? {
            // Pages deleted above become reusable once every transaction
            // that could still be on them has ended (nbtree's pagedel.rs).
            let c = ix.tree.vacuum_cleanup(txns.oldest_xmin())?;
            (r.pages, r.pages_deleted, r.pages_free) = (c.pages, c.deleted, c.reusable);
        }
    }
    if opts.truncate && floor < nblocks {
        report.pages_removed = rel.truncate_empty_tail(floor)?;
    }
    report.next_xid_at_end = txns.next_xid();
    report.buffers = BufferUsage::current().since(&buffers_before);
    report.elapsed = start.elapsed();
    Ok(report)
}

/// The index pass: removes the entries of the dead TIDs `dead` (sorted)
/// from every index, each page's removals logged (PostgreSQL's
/// `lazy_vacuum_all_indexes` with `btbulkdelete`).
fn vacuum_indexes(
    indexes: &[VacuumIndex],
    dead: &[DeadTid],
    reports: &mut [IndexVacuumReport],
    next_xid: &dyn Fn() -> Xid,
) -> Result<()> {
    for (ix, r) in indexes.iter().zip(reports) {
        let st = ix
            .tree
            .bulk_delete_pages(|(b, o)| dead.binary_search(&pack(b, o)).is_ok(), next_xid)?;
        r.tuples_removed += st.tuples_removed;
        r.pages_newly_deleted += st.pages_deleted;
    }
    Ok(())
}

impl Pass<'_> {
    /// One round of the first pass: the participants visit pages until none
    /// is left or the dead TIDs are full. Workers start only once a page
    /// needs a visit; `rings` (one per participant, the leader's first) are
    /// lent to them and given back.
    fn round(&self, rings: &mut [Option<Ring>], progress: Option<&ProgressHook>) -> Result<Share> {
        let (leader_ring, worker_rings) = rings.split_first_mut().expect("one ring at least");
        let (leader, workers) = std::thread::scope(|s| {
            let mut handles = Vec::new();
            let mut worker_rings = worker_rings.iter_mut();
            let mut start_workers = || {
                for ring in worker_rings.by_ref() {
                    handles.push(s.spawn(move || {
                        let before = BufferUsage::current();
                        let r = self.participate(ring, None, None);
                        if r.is_err() {
                            self.stop.store(true, Ordering::Relaxed);
                        }
                        (r, BufferUsage::current().since(&before))
                    }));
                }
            };
            let leader = self.participate(leader_ring, progress, Some(&mut start_workers));
            if leader.is_err() {
                self.stop.store(true, Ordering::Relaxed);
            }
            let workers: Vec<_> = handles
                .into_iter()
                .map(|h| h.join().expect("a VACUUM worker panicked"))
                .collect();
            (leader, workers)
        });
        let mut share = leader?;
        for (r, buffers) in workers {
            // The workers' buffer work counts for this statement too.
            buffers.credit_to_thread();
            let w = r?;
            share.report.merge(&w.report);
            share.floor = share.floor.max(w.floor);
            share.dead.extend(w.dead);
        }
        Ok(share)
    }

    /// The second heap pass over the pages of `dead` (sorted; their index
    /// entries are gone): frees the DEAD line pointers and sets the pages'
    /// visibility-map bits ([`HeapRelation::vacuum_dead_items`]).
    fn second_heap_pass(
        &self,
        dead: &[DeadTid],
        mut ring: Option<&mut Ring>,
        report: &mut VacuumReport,
    ) -> Result<()> {
        let mut vm_pin = None;
        let mut offsets: Vec<OffsetNumber> = Vec::new();
        for page in dead.chunk_by(|a, b| a >> 16 == b >> 16) {
            if self.cancel.load(Ordering::Relaxed) {
                return Err(err!(
                    QueryCanceled,
                    "canceling statement due to user request"
                ));
            }
            let block = (page[0] >> 16) as BlockNumber;
            offsets.clear();
            offsets.extend(page.iter().map(|&t| t as OffsetNumber));
            let buf = self.rel.pool().read_buffer(
                self.rel.rel(),
                ForkNumber::Main,
                block,
                ring.as_deref_mut(),
            )?;
            let p = self
                .rel
                .vacuum_dead_items(buf, &offsets, self.cutoffs, &mut vm_pin)?;
            report.add_second_pass(&p);
        }
        Ok(())
    }
}
