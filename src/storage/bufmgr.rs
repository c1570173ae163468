//! The shared buffer pool: a fixed set of 8 KiB frames caching relation pages.
//!
//! # What it owns
//!
//! - `nbuffers` frames in one anonymous mapping (`frames.rs`: huge pages
//!   per 2 MiB region as regions come into use), and one
//!   `BufferDesc` per frame (tag, pin count, usage count, flags, content
//!   lock; see `desc.rs`);
//! - the partitioned mapping table from page to frame (`mapping.rs`);
//! - the clock sweep (`clock.rs`) and the ring strategies
//!   ([`super::ring`]);
//! - the storage manager ([`super::smgr`]) through which pages are read and
//!   written, with page checksums ([`super::checksum`]) verified after every
//!   read and set just before every write;
//! - the pool's counters ([`super::stats`]).
//!
//! # Using it
//!
//! [`BufferPool::read_buffer`] returns a [`PinnedBuffer`]: while it lives the
//! frame keeps its page (it cannot be evicted); dropping it unpins. To look at
//! the page take its content lock: [`PinnedBuffer::read`] (shared) or
//! [`PinnedBuffer::write`] (exclusive); the guards deref to the page bytes.
//! A change made under the exclusive lock must be followed by
//! [`BufferWriteGuard::mark_dirty`] before the lock is released, and (once the
//! WAL exists) by setting the page LSN ([`BufferWriteGuard::set_lsn`]).
//!
//! Hint bits (PostgreSQL sets them under a shared lock) are set here under an
//! exclusive lock taken *conditionally*: a reader that found hint bits to set
//! drops its shared guard, calls [`PinnedBuffer::try_write`] and, if it gets
//! the lock, sets them (re-deriving offsets from the page, which may have
//! changed in between) and calls [`BufferWriteGuard::mark_dirty_hint`]. If it
//! does not get the lock, the hint is simply not set this time. This keeps
//! the page bytes free of data races without costing readers anything. Hint
//! bits are written out like any change and need no log record: the page
//! checksum leaves them out ([`super::checksum`]), so a torn write of a
//! hint-only change is still a valid page.
//!
//! A page's tuples may be read under the pin alone after the shared lock is
//! released (page-at-a-time scans), provided the page is only *rearranged*
//! (pruning, compaction) under a cleanup lock:
//! [`PinnedBuffer::try_cleanup_lock`] (exclusive lock and the only pin).
//!
//! # Write-back and the WAL
//!
//! A dirty page is written when its frame is chosen as a victim, by
//! [`BufferPool::flush_all`] (checkpoint, clean shutdown) and by
//! [`BufferPool::flush_relation`]. Before every write the pool calls the WAL
//! flush hook ([`BufferPool::set_wal_flush_hook`]) with the page's LSN (bytes
//! 0..8), so a page never reaches disk before the log describing it. The page
//! is copied (under the shared content lock) and the checksum set in the
//! copy: the frame's checksum bytes are never touched.
//!
//! Dropping the pool does **not** write dirty pages (that is what a crash
//! looks like); call [`BufferPool::flush_all`] for a clean shutdown.
//!
//! # Locking order
//!
//! mapping partition locks (in partition order) -> header lock; content
//! locks are taken only with a pin and never while holding a partition or
//! header lock; the relation extension lock comes before all of these.

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::Arc;

use parking_lot::lock_api::RawRwLock as _;
use parking_lot::{Mutex, RwLock};

use super::clock::ClockSweep;
use super::desc::*;
use super::frames::{Frames, HUGE_PAGE};
use super::mapping::{self, MappingTable};
use super::ring::{Ring, RingSizes, SpareBuffers, StrategyKind};
use super::smgr::Smgr;
use super::stats::{BufferUsage, Counter, PoolCounters};
use super::{relpath, BlockNumber, ForkNumber, RelFileNode, BLCKSZ, MAX_BLOCKS};
use crate::error::{Error, Result, SqlState};

/// Most buffer descriptors [`BufferPool::reusable_buffers`] looks at.
pub const REUSABLE_SAMPLES: usize = 4096;

/// Blocks of a relation [`BufferPool::scan_needs_ring`] looks up to estimate
/// how much of it is cached.
const CACHED_SAMPLES: usize = 64;

pub use super::buffer::{page_lsn, BufferReadGuard, BufferTag, BufferWriteGuard, PinnedBuffer};

/// Makes the write-ahead log durable up to a page's LSN before the page is
/// written (set with [`BufferPool::set_wal_flush_hook`]).
///
/// Closures `Fn(u64) -> Result<()>` implement it (with the default
/// [`WalFlushHook::flushed_lsn`]).
pub trait WalFlushHook: Send + Sync {
    /// Makes the log durable up to and including `lsn`.
    fn flush(&self, lsn: u64) -> Result<()>;

    /// The LSN up to which the log is known to be durable: a dirty bulk-read
    /// ring buffer whose page LSN is beyond it is handed back to the clock
    /// sweep instead of being flushed by the scan (see [`super::ring`]).
    ///
    /// The default, `u64::MAX`, says "everything": scans then write their
    /// own dirty ring buffers (calling [`WalFlushHook::flush`] first, as every
    /// write does). A WAL that can tell should override it, so read-only
    /// scans never wait for a log flush.
    fn flushed_lsn(&self) -> u64 {
        u64::MAX
    }

    /// Asks for everything logged so far to be made durable soon, without
    /// waiting: a bulk-write or vacuum ring asks every half lap, so its
    /// buffers need no flush by the time they come round (see
    /// [`super::ring`]). The default does nothing (the flush then happens
    /// when the buffer is written).
    fn request_flush(&self) {}
}

impl<F: Fn(u64) -> Result<()> + Send + Sync> WalFlushHook for F {
    fn flush(&self, lsn: u64) -> Result<()> {
        self(lsn)
    }
}

/// Settings fixed when the pool opens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BufferPoolConfig {
    /// Number of 8 KiB frames (`shared_buffers`); default 16384 (128 MiB).
    pub nbuffers: usize,
    /// Ask for transparent huge pages for the frames (`huge_pages`).
    pub huge_pages: bool,
}

impl Default for BufferPoolConfig {
    fn default() -> BufferPoolConfig {
        BufferPoolConfig {
            nbuffers: 16384,
            huge_pages: true,
        }
    }
}

impl std::fmt::Debug for BufferPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BufferPool")
            .field("data_dir", &self.data_dir)
            .field("nbuffers", &self.nbuffers())
            .finish_non_exhaustive()
    }
}

/// What [`BufferPool::read_buffer_extended`] does with a page that is not
/// in the pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadMode {
    /// Read it from its file and verify its checksum.
    Normal,
    /// Do not read it: hand out an all-zero page, for a caller that is about
    /// to overwrite the whole page (WAL redo of a full-page image, or of a
    /// record that initialises the page). A page already in the pool is
    /// returned as it is. A block beyond the end of the fork extends it (and
    /// a missing fork is created), as PostgreSQL's redo does.
    ZeroPage,
}

/// One buffer's state, from [`BufferPool::buffer_summary`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BufferInfo {
    /// The buffer's id.
    pub buffer_id: u32,
    /// The page it holds, if any.
    pub tag: Option<BufferTag>,
    /// Whether the frame holds the page's contents (false while being read,
    /// or after a failed read).
    pub valid: bool,
    /// Whether the page must be written before the frame is reused.
    pub dirty: bool,
    /// The clock-sweep usage count (0..=5).
    pub usage_count: u32,
    /// The number of pins.
    pub pin_count: u32,
}

/// The smallest pool, as PostgreSQL's minimum `shared_buffers`.
pub const MIN_BUFFERS: usize = 16;

/// Number of relation extension locks (striped by relation and fork).
const EXTENSION_LOCKS: usize = 64;

/// The buffer pool of one data directory. See the module doc.
pub struct BufferPool {
    /// The data directory.
    data_dir: PathBuf,
    /// The frames.
    frames: Frames,
    /// One descriptor per frame.
    pub(super) descs: Box<[BufferDesc]>,
    /// Page -> frame.
    pub(super) mapping: MappingTable,
    /// Victim selection.
    pub(super) clock: ClockSweep,
    /// The files.
    pub(super) smgr: Smgr,
    /// Serialises extensions of a fork (striped).
    pub(super) extension_locks: Box<[Mutex<()>]>,
    /// Called before writing a dirty page.
    pub(super) wal_hook: RwLock<Option<Arc<dyn WalFlushHook>>>,
    /// Buffers bulk-read rings gave back, for the next ones (`ring.rs`).
    spare_ring_buffers: Arc<SpareBuffers>,
    /// The database's counters.
    pub(super) counters: PoolCounters,
}

impl BufferPool {
    /// Opens a pool of `nbuffers` frames over `data_dir` (its `base/`
    /// directory is created if missing), with default ring sizes.
    pub fn open(data_dir: &Path, nbuffers: usize) -> Result<Arc<BufferPool>> {
        BufferPool::open_with(
            data_dir,
            BufferPoolConfig {
                nbuffers,
                ..BufferPoolConfig::default()
            },
        )
    }

    /// Opens a pool with explicit settings.
    pub fn open_with(data_dir: &Path, config: BufferPoolConfig) -> Result<Arc<BufferPool>> {
        let n = config.nbuffers;
        if !(MIN_BUFFERS..=(1 << 30)).contains(&n) {
            return Err(Error::new(
                SqlState::InvalidParameterValue,
                format!("{n} is outside the valid range for parameter \"shared_buffers\" ({MIN_BUFFERS} .. 1073741823)"),
            ));
        }
        let smgr = Smgr::open(data_dir)?;
        let frames = Frames::map(n, config.huge_pages)?;
        Ok(Arc::new(BufferPool {
            data_dir: data_dir.to_path_buf(),
            frames,
            descs: BufferDesc::new_slice(n),
            mapping: MappingTable::new(n),
            clock: ClockSweep::new(),
            smgr,
            extension_locks: (0..EXTENSION_LOCKS).map(|_| Mutex::new(())).collect(),
            wal_hook: RwLock::new(None),
            spare_ring_buffers: Arc::new(SpareBuffers::new(n / 8)),
            counters: PoolCounters::default(),
        }))
    }

    /// The data directory the pool's files live in.
    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    /// The number of frames.
    pub fn nbuffers(&self) -> usize {
        self.descs.len()
    }

    /// The storage manager (segment files) under the pool.
    pub fn smgr(&self) -> &Smgr {
        &self.smgr
    }

    /// Turns fsync on (the default) or off, as PostgreSQL's `fsync` setting:
    /// off is only for tests and benchmarks that need not survive an OS crash.
    pub fn set_fsync(&self, on: bool) {
        self.smgr.set_fsync(on);
    }

    /// Installs the hook called with a page's LSN before the page is written.
    pub fn set_wal_flush_hook(&self, hook: Arc<dyn WalFlushHook>) {
        *self.wal_hook.write() = Some(hook);
    }

    /// Removes the WAL flush hook.
    pub fn clear_wal_flush_hook(&self) {
        *self.wal_hook.write() = None;
    }

    /// A new ring of `kind` of the default size ([`RingSizes::default`];
    /// at most an eighth of the pool).
    pub fn ring(&self, kind: StrategyKind) -> Ring {
        self.ring_with(kind, &RingSizes::default())
    }

    /// A new ring of `kind` sized by `sizes`, the requesting client's
    /// settings (`bulkread_ring_size` and the others): the pool keeps no
    /// sizes of its own, so clients sharing it never change each other's
    /// rings. Still at most an eighth of the pool.
    pub fn ring_with(&self, kind: StrategyKind, sizes: &RingSizes) -> Ring {
        let n = self.nbuffers();
        self.new_ring(kind, sizes.buffers(kind, n), sizes.max_buffers(kind, n))
    }

    fn new_ring(&self, kind: StrategyKind, len: usize, max_len: usize) -> Ring {
        let mut ring = Ring::new(kind, len, max_len);
        if kind == StrategyKind::BulkRead {
            ring.set_spare(Arc::clone(&self.spare_ring_buffers));
        }
        if let Some(hook) = self.wal_hook.read().as_ref() {
            ring.set_base_lsn(hook.flushed_lsn());
        }
        ring
    }

    /// The ring a sequential scan of `rel`'s main fork, `nblocks` blocks,
    /// should use: a bulk-read ring sized by `sizes` (the client's settings)
    /// when reading the relation into the pool would evict pages in use
    /// ([`BufferPool::scan_needs_ring`]), else none.
    pub fn scan_ring(
        &self,
        rel: RelFileNode,
        nblocks: BlockNumber,
        sizes: &RingSizes,
    ) -> Option<Ring> {
        self.scan_needs_ring(rel, nblocks, sizes)
            .then(|| self.ring_with(StrategyKind::BulkRead, sizes))
    }

    /// The ring of one of `participants` threads scanning a relation of
    /// `nblocks` blocks together (a parallel scan): [`BufferPool::scan_ring`]'s
    /// buffers split between them, at least one each, so that the scan as a
    /// whole stays within the bulk-read ring's size. (PostgreSQL gives each
    /// parallel worker a whole ring; here `bulkread_ring_size` bounds the
    /// statement's memory, whatever its number of workers.)
    pub fn scan_ring_shared(
        &self,
        rel: RelFileNode,
        nblocks: BlockNumber,
        participants: usize,
        sizes: &RingSizes,
    ) -> Option<Ring> {
        self.scan_needs_ring(rel, nblocks, sizes).then(|| {
            let kind = StrategyKind::BulkRead;
            let len = (sizes.buffers(kind, self.nbuffers()) / participants.max(1)).max(1);
            self.new_ring(kind, len, len)
        })
    }

    /// Whether a sequential scan of `rel` (`nblocks` blocks of its main
    /// fork) goes through a bulk-read ring (see `ring.rs`, "When a scan
    /// uses a ring"): never for a relation of at most a quarter of the
    /// pool; for a larger one always under the quarter rule
    /// ([`RingSizes::quarter_rule`], PostgreSQL's), else only when the pages
    /// it would bring in outnumber the buffers it can take without evicting
    /// a page in use ([`BufferPool::reusable_buffers`]).
    pub fn scan_needs_ring(
        &self,
        rel: RelFileNode,
        nblocks: BlockNumber,
        sizes: &RingSizes,
    ) -> bool {
        let n = self.nbuffers();
        if nblocks as usize <= n / 4 {
            return false;
        }
        if sizes.quarter_rule || nblocks as usize > n {
            return true;
        }
        let missing = nblocks as usize - self.cached_estimate(rel, nblocks);
        missing > self.reusable_buffers()
    }

    /// An estimate of how many buffers a read could take without evicting a
    /// page in use: the unpinned buffers that hold no page or whose usage
    /// count is zero (the clock sweep's next victims). Counted over at most
    /// [`REUSABLE_SAMPLES`] descriptors spread evenly over the pool (exact
    /// for a pool no larger), so it costs a few microseconds whatever the
    /// pool's size; a snapshot, not atomic.
    pub fn reusable_buffers(&self) -> usize {
        let n = self.descs.len();
        let samples = n.min(REUSABLE_SAMPLES);
        let cold = (0..samples)
            .filter(|&i| {
                let s = self.descs[i * n / samples].state.load(Ordering::Relaxed);
                refcount(s) == 0 && (s & TAG_VALID == 0 || usage(s) == 0)
            })
            .count();
        cold * n / samples
    }

    /// An estimate of how many of `rel`'s first `nblocks` main-fork blocks
    /// the pool holds, from [`CACHED_SAMPLES`] blocks spread evenly over
    /// them (one mapping lookup each).
    fn cached_estimate(&self, rel: RelFileNode, nblocks: BlockNumber) -> usize {
        let n = nblocks as usize;
        let samples = n.min(CACHED_SAMPLES);
        if samples == 0 {
            return 0;
        }
        let hits = (0..samples)
            .filter(|&i| self.is_cached(rel, ForkNumber::Main, (i * n / samples) as BlockNumber))
            .count();
        hits * n / samples
    }

    /// The database's counters since the pool opened.
    pub fn stats(&self) -> BufferUsage {
        self.counters.snapshot()
    }

    /// Pointer to frame `id`.
    #[inline]
    pub(super) fn frame(&self, id: u32) -> *mut u8 {
        self.frames.frame(id)
    }

    /// How many 2 MiB regions of the frames have been advised to use huge
    /// pages so far (see [`super::frames`]).
    pub fn huge_regions_advised(&self) -> usize {
        self.frames.regions_advised()
    }

    /// Bytes of the frames resident in memory now (`mincore`; `None` if the
    /// kernel does not say): what the pool costs the process so far.
    pub fn resident_frame_bytes(&self) -> Option<usize> {
        self.frames.resident_bytes()
    }

    /// The descriptor of buffer `id`.
    #[inline]
    pub(super) fn desc(&self, id: u32) -> &BufferDesc {
        &self.descs[id as usize]
    }

    // ----- relations -----------------------------------------------------

    /// Creates an empty fork of a relation (its first segment file).
    pub fn create_relation(&self, rel: RelFileNode, fork: ForkNumber) -> Result<()> {
        self.smgr.create(rel, fork)
    }

    /// Whether a fork of a relation exists on disk.
    pub fn relation_exists(&self, rel: RelFileNode, fork: ForkNumber) -> bool {
        self.smgr.exists(rel, fork)
    }

    /// The size of a fork in blocks.
    pub fn nblocks(&self, rel: RelFileNode, fork: ForkNumber) -> Result<BlockNumber> {
        self.smgr.nblocks(rel, fork)
    }

    /// Drops a relation: discards its buffers (dirty ones unwritten) and
    /// removes all its files. Fails with `ObjectInUse` if one of its buffers
    /// is pinned.
    pub fn drop_relation(&self, rel: RelFileNode) -> Result<()> {
        self.discard_buffers(rel, None, 0)?;
        self.smgr.unlink(rel)
    }

    /// Truncates a fork to `nblocks` blocks, discarding the buffers of the
    /// blocks cut off. Fails with `ObjectInUse` if one of them is pinned.
    pub fn truncate_relation(
        &self,
        rel: RelFileNode,
        fork: ForkNumber,
        nblocks: BlockNumber,
    ) -> Result<()> {
        let _x = self.extension_lock(rel, fork).lock();
        self.discard_buffers(rel, Some(fork), nblocks)?;
        self.smgr.truncate(rel, fork, nblocks)
    }

    /// Writes the relation's dirty buffers (all forks) and fsyncs its files.
    pub fn flush_relation(&self, rel: RelFileNode) -> Result<()> {
        self.flush_matching(|t| t.rel == rel)?;
        for fork in ForkNumber::ALL {
            if self.smgr.exists(rel, fork) {
                self.smgr.sync(rel, fork)?;
            }
        }
        Ok(())
    }

    /// Makes the next reads of a relation cold: writes its dirty buffers,
    /// drops its pages from the pool and asks the OS to drop them from its
    /// cache. For benchmarks that must start cold without root.
    pub fn evict_relation(&self, rel: RelFileNode) -> Result<()> {
        self.flush_relation(rel)?;
        self.discard_buffers(rel, None, 0)?;
        for fork in ForkNumber::ALL {
            if self.smgr.exists(rel, fork) {
                self.smgr.evict_os_cache(rel, fork)?;
            }
        }
        Ok(())
    }

    /// Asks the OS to drop a fork's pages from its cache (the pool's copies
    /// stay; see [`BufferPool::evict_relation`] for both).
    pub fn evict_os_cache(&self, rel: RelFileNode, fork: ForkNumber) -> Result<()> {
        self.smgr.evict_os_cache(rel, fork)
    }

    /// Starts reading a block into the OS cache if it is not in the pool, so a
    /// later [`BufferPool::read_buffer`] does not wait for the disk. Returns
    /// whether advice was issued (false: the page is in the pool already).
    pub fn prefetch(&self, rel: RelFileNode, fork: ForkNumber, block: BlockNumber) -> Result<bool> {
        if self.is_cached(rel, fork, block) {
            return Ok(false);
        }
        self.smgr.prefetch(rel, fork, block, 1)?;
        Ok(true)
    }

    /// Starts reading `count` consecutive blocks from `block` on into the OS
    /// cache, for a reader that will read them soon: one request (one
    /// syscall, one I/O) per run of those blocks the pool does not hold, as
    /// PostgreSQL's `PrefetchBuffer` skips buffers it has. Returns the
    /// number of requests issued (0: all in the pool).
    pub fn prefetch_range(
        &self,
        rel: RelFileNode,
        fork: ForkNumber,
        block: BlockNumber,
        count: u32,
    ) -> Result<u32> {
        let end = block.saturating_add(count);
        let mut issued = 0;
        let mut b = block;
        while b < end {
            if self.is_cached(rel, fork, b) {
                b += 1;
                continue;
            }
            let first = b;
            while b < end && !self.is_cached(rel, fork, b) {
                b += 1;
            }
            self.smgr.prefetch(rel, fork, first, b - first)?;
            issued += 1;
        }
        Ok(issued)
    }

    /// Whether the pool holds a valid copy of the page.
    pub fn is_cached(&self, rel: RelFileNode, fork: ForkNumber, block: BlockNumber) -> bool {
        let tag = BufferTag { rel, fork, block };
        let hash = tag.hash();
        let map = self.mapping.read(MappingTable::partition_of(hash));
        mapping::lookup(&map, hash, &tag)
            .is_some_and(|id| self.desc(id).state.load(Ordering::Acquire) & VALID != 0)
    }

    /// One line per buffer, for inspection (as PostgreSQL's
    /// `pg_buffercache`): what the buffer holds and its state. A snapshot:
    /// each buffer is read under its header lock, the whole not atomically.
    pub fn buffer_summary(&self) -> Vec<BufferInfo> {
        (0..self.descs.len() as u32)
            .map(|id| {
                let d = self.desc(id);
                let s = d.lock_header();
                let tag = d.tag();
                d.unlock_header(s);
                BufferInfo {
                    buffer_id: id,
                    tag: (s & TAG_VALID != 0).then_some(tag),
                    valid: s & VALID != 0,
                    dirty: s & DIRTY != 0,
                    usage_count: usage(s),
                    pin_count: refcount(s),
                }
            })
            .collect()
    }

    /// The extension lock of a fork.
    pub(super) fn extension_lock(&self, rel: RelFileNode, fork: ForkNumber) -> &Mutex<()> {
        let h = BufferTag {
            rel,
            fork,
            block: 0,
        }
        .hash();
        &self.extension_locks[(h as usize) % EXTENSION_LOCKS]
    }

    // ----- pinning -------------------------------------------------------

    /// Pins the page `block` of a fork, reading it in if it is not cached.
    ///
    /// With a ring, a page not cached is read into a ring buffer, and a cached
    /// page's usage count is not raised above 1. Errors: the block is beyond
    /// the end of the fork; the page fails its checksum (`DataCorrupted`,
    /// `invalid page in block N of relation base/R`); no unpinned buffer is
    /// left; I/O errors.
    #[inline]
    pub fn read_buffer(
        &self,
        rel: RelFileNode,
        fork: ForkNumber,
        block: BlockNumber,
        strategy: Option<&mut Ring>,
    ) -> Result<PinnedBuffer<'_>> {
        let tag = BufferTag { rel, fork, block };
        let (id, valid) = self.pin_tag(tag, strategy)?;
        let buf = PinnedBuffer {
            pool: self,
            id,
            tag,
        };
        if valid {
            self.counters.count(Counter::Hit);
        } else {
            self.read_in(&buf)?;
        }
        Ok(buf)
    }

    /// Pins a page like [`BufferPool::read_buffer`], with a choice of what to
    /// do when it is not cached ([`ReadMode`]).
    pub fn read_buffer_extended(
        &self,
        rel: RelFileNode,
        fork: ForkNumber,
        block: BlockNumber,
        mode: ReadMode,
        strategy: Option<&mut Ring>,
    ) -> Result<PinnedBuffer<'_>> {
        match mode {
            ReadMode::Normal => self.read_buffer(rel, fork, block, strategy),
            ReadMode::ZeroPage => {
                if !self.smgr.exists(rel, fork) {
                    // Redo may meet a fork before the record that created it.
                    let _x = self.extension_lock(rel, fork).lock();
                    if !self.smgr.exists(rel, fork) {
                        self.smgr.create(rel, fork)?;
                    }
                }
                if block >= self.smgr.nblocks(rel, fork)? {
                    let _x = self.extension_lock(rel, fork).lock();
                    // On disk at once: no dirty buffer may back the blocks
                    // in between, and the size must survive a reopen.
                    self.smgr.extend_file_to(rel, fork, block + 1)?;
                }
                let tag = BufferTag { rel, fork, block };
                let (id, _) = self.pin_tag(tag, strategy)?;
                let buf = PinnedBuffer {
                    pool: self,
                    id,
                    tag,
                };
                if self.start_io(id, true) {
                    // SAFETY: we own the I/O of a not-valid buffer.
                    unsafe { std::ptr::write_bytes(self.frame(id), 0, BLCKSZ) };
                    self.terminate_io(id, false, VALID);
                } else {
                    self.counters.count(Counter::Hit);
                }
                Ok(buf)
            }
        }
    }

    /// Adds a new all-zero page at the end of a fork and returns its block
    /// number and the pinned buffer (already dirty; the file grows when the
    /// page is written).
    pub fn extend(
        &self,
        rel: RelFileNode,
        fork: ForkNumber,
        strategy: Option<&mut Ring>,
    ) -> Result<(BlockNumber, PinnedBuffer<'_>)> {
        let _x = self.extension_lock(rel, fork).lock();
        let block = self.smgr.nblocks(rel, fork)?;
        if block >= MAX_BLOCKS {
            return Err(Error::new(
                SqlState::ProgramLimitExceeded,
                format!(
                    "cannot extend relation {} beyond {MAX_BLOCKS} blocks",
                    relpath(rel, fork)
                ),
            ));
        }
        // Space on disk first: a full disk fails this statement, not the
        // later write of the dirty page.
        self.smgr.reserve(rel, fork, block + 1)?;
        let tag = BufferTag { rel, fork, block };
        let (id, _) = self.pin_tag(tag, strategy)?;
        let buf = PinnedBuffer {
            pool: self,
            id,
            tag,
        };
        if !self.start_io(id, true) {
            return Err(Error::internal(format!(
                "unexpected data beyond EOF in block {block} of relation {}",
                relpath(rel, fork)
            )));
        }
        // SAFETY: we own the buffer's I/O and it is not valid: nobody else
        // touches the frame until we set VALID.
        unsafe { std::ptr::write_bytes(self.frame(id), 0, BLCKSZ) };
        self.terminate_io(id, false, VALID | DIRTY);
        self.counters.count(Counter::Dirtied);
        self.smgr.set_nblocks_at_least(rel, fork, block + 1)?;
        Ok((block, buf))
    }

    /// Finds or allocates the buffer for `tag` and pins it. Returns the buffer
    /// and whether it is valid (holds the page); if not, the caller reads it
    /// in (or initialises it) through `start_io`.
    #[inline]
    pub(super) fn pin_tag(
        &self,
        tag: BufferTag,
        strategy: Option<&mut Ring>,
    ) -> Result<(u32, bool)> {
        let hash = tag.hash();
        let part = MappingTable::partition_of(hash);
        {
            let map = self.mapping.read(part);
            if let Some(id) = mapping::lookup(&map, hash, &tag) {
                // Pinned under the partition lock: it cannot be retagged.
                let valid = self.pin(id, strategy.is_some());
                return Ok((id, valid));
            }
        }
        self.alloc_buffer(tag, hash, strategy)
    }

    /// Pins buffer `id` (known to be mapped, or header-checked by the
    /// caller). Raises the usage count: by one, up to 5; with a ring only to 1.
    /// Returns whether the buffer is valid.
    #[inline]
    pub(super) fn pin(&self, id: u32, strategy: bool) -> bool {
        let d = self.desc(id);
        let mut s = d.state.load(Ordering::Relaxed);
        loop {
            if s & LOCKED != 0 {
                s = d.wait_unlocked();
                continue;
            }
            assert!(refcount(s) < REFCOUNT_MASK, "too many pins on one buffer");
            let mut n = s + REFCOUNT_ONE;
            if strategy {
                if usage(s) == 0 {
                    n += USAGE_ONE;
                }
            } else if usage(s) < MAX_USAGE {
                n += USAGE_ONE;
            }
            match d
                .state
                .compare_exchange_weak(s, n, Ordering::Acquire, Ordering::Relaxed)
            {
                Ok(_) => return n & VALID != 0,
                Err(now) => s = now,
            }
        }
    }

    /// Drops one pin of buffer `id`.
    #[inline]
    pub(super) fn unpin(&self, id: u32) {
        let d = self.desc(id);
        let mut s = d.state.load(Ordering::Relaxed);
        loop {
            if s & LOCKED != 0 {
                s = d.wait_unlocked();
                continue;
            }
            debug_assert!(refcount(s) > 0);
            match d.state.compare_exchange_weak(
                s,
                s - REFCOUNT_ONE,
                Ordering::Release,
                Ordering::Relaxed,
            ) {
                Ok(_) => return,
                Err(now) => s = now,
            }
        }
    }

    /// Takes a victim buffer for `tag`, writing it out first if dirty, retags
    /// it and returns it pinned and not valid. If another thread mapped `tag`
    /// meanwhile, returns that buffer pinned instead (with its validity).
    #[cold]
    fn alloc_buffer(
        &self,
        tag: BufferTag,
        hash: u64,
        mut strategy: Option<&mut Ring>,
    ) -> Result<(u32, bool)> {
        let new_part = MappingTable::partition_of(hash);
        let with_ring = strategy.is_some();
        // Huge pages for the frame's region when a table's pages fill it:
        // not for a ring smaller than a huge page, nor for a visibility-map
        // page, a few of which a `count(*)` reads (see `frames.rs`: one 8 kB
        // page in an untouched region must not fault in 2 MiB).
        let huge = tag.fork == ForkNumber::Main
            && strategy
                .as_deref()
                .map_or(true, |r| r.max_len() * BLCKSZ >= HUGE_PAGE);
        loop {
            let (id, s) = self.clock.victim(&self.descs, strategy.as_deref_mut())?;
            if huge {
                self.frames.prepare(id);
            }
            let d = self.desc(id);
            // Pin it and release the header lock in one store.
            d.unlock_header(s + REFCOUNT_ONE);

            if let Some(ring) = strategy.as_deref_mut() {
                if ring.flush_ahead_due() {
                    self.request_wal_flush();
                }
            }
            if s & DIRTY != 0 {
                if let Some(ring) = strategy.as_deref_mut() {
                    if self.ring_passes_over(ring, id) {
                        self.unpin(id);
                        continue;
                    }
                }
                // Someone may hold it exclusively now; rather than wait, try
                // another victim (as PostgreSQL's conditional lock).
                if !d.try_lock_shared() {
                    self.unpin(id);
                    continue;
                }
                // A write ring writes the buffers it reuses next with this
                // one when they hold the following blocks.
                let res = match strategy.as_deref() {
                    Some(ring) if ring.kind() != StrategyKind::BulkRead => {
                        self.flush_run(id, d.tag(), ring)
                    }
                    _ => self.flush_buffer(id, d.tag()),
                };
                // SAFETY: taken just above.
                unsafe { d.content.unlock_shared() };
                if let Err(e) = res {
                    self.unpin(id);
                    return Err(e);
                }
            }

            // Lock the old and new partitions in order.
            let s = d.state.load(Ordering::Acquire);
            let old_tag = (s & TAG_VALID != 0).then(|| d.tag());
            let old = old_tag.map(|t| {
                let h = t.hash();
                (t, h, MappingTable::partition_of(h))
            });
            let old_part = old.map(|o| o.2).filter(|&p| p != new_part);
            let (mut new_map, mut old_map) = match old_part {
                Some(op) if op < new_part => {
                    let o = self.mapping.write(op);
                    (self.mapping.write(new_part), Some(o))
                }
                Some(op) => {
                    let n = self.mapping.write(new_part);
                    (n, Some(self.mapping.write(op)))
                }
                None => (self.mapping.write(new_part), None),
            };

            mapping::reserve_one(&mut new_map);
            if let Some(existing) = mapping::lookup(&new_map, hash, &tag) {
                // Lost the race: someone else mapped the page. Use theirs.
                let valid = self.pin(existing, with_ring);
                drop(old_map);
                drop(new_map);
                self.unpin(id);
                return Ok((existing, valid));
            }

            let s = d.lock_header();
            if refcount(s) != 1 || s & (DIRTY | IO_IN_PROGRESS) != 0 {
                // Someone pinned or dirtied it meanwhile: pick another.
                d.unlock_header(s);
                drop(old_map);
                drop(new_map);
                self.unpin(id);
                continue;
            }
            mapping::insert(&mut new_map, hash, tag, id);
            d.set_tag(tag);
            let was_valid = s & VALID != 0;
            let n = (s & REFCOUNT_MASK) | TAG_VALID | USAGE_ONE;
            d.unlock_header(n);
            if let Some((t, h, p)) = old {
                let map = if p == new_part {
                    &mut new_map
                } else {
                    old_map.as_mut().expect("old partition locked")
                };
                let removed = mapping::remove(map, h, &t);
                debug_assert!(removed, "old tag was mapped");
            }
            drop(old_map);
            drop(new_map);
            if was_valid {
                self.counters.count(Counter::Evicted);
            }
            return Ok((id, false));
        }
    }
}

#[cfg(test)]
#[path = "bufmgr_tests.rs"]
mod tests;
