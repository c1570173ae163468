//! The commit log: two bits of status per transaction id, in `xact/`.
//!
//! Status is one of in progress (0, also what a never-written page reads as),
//! committed (1), aborted (2) and sub-committed (3, reserved; unused since
//! there are no subtransactions). Four xids share a byte, so one 8 KiB page
//! covers [`XIDS_PER_PAGE`] = 32768 xids; pages are grouped in segment files
//! of [`PAGES_PER_SEGMENT`] = 32 pages (1 Mi xids, 256 KiB) named by the
//! segment number in four or more hex digits (`xact/0000`, `xact/0001`, ...),
//! as PostgreSQL's SLRU does.
//!
//! A small cache ([`CACHE_PAGES`] pages, least recently used evicted) keeps
//! the pages in memory, as PostgreSQL's SLRU buffers do. [`Clog::set_status`]
//! changes the cached page only and marks it dirty: no system call per
//! commit. A dirty page is written when it is evicted and by
//! [`Clog::flush`], which writes every dirty page and fsyncs the segments
//! written since the last flush (checkpoints and clean shutdown call it).
//!
//! Durability of a status between two checkpoints is the write-ahead log's
//! job, as in PostgreSQL: every commit and abort has a log record, and
//! recovery replays those after the last checkpoint's redo point into this
//! cache (`wal::recovery`), then checkpoints. A commit whose record lies
//! before the redo point must therefore be in the pages that checkpoint
//! writes: the session holds [`TxnManager::commit_in_flight`] from before
//! its commit record is inserted until its status is set here, and the
//! checkpointer waits for those in flight once its redo point is fixed
//! ([`TxnManager::wait_for_commits_in_flight`]), PostgreSQL's
//! `DELAY_CHKPT_START` for the same race. (Aborts need no such care: an xid
//! left "in progress" by a crash reads as aborted.) A torn page write mixes
//! sectors of two versions, both at least as new as the last checkpoint, and
//! redo sets everything after it again.
//!
//! [`TxnManager::commit_in_flight`]: super::TxnManager::commit_in_flight
//! [`TxnManager::wait_for_commits_in_flight`]: super::TxnManager::wait_for_commits_in_flight
//!
//! # Damage detection
//!
//! A status only ever goes from "in progress" to final (committed or
//! aborted), so the number of final statuses on a page only grows. After
//! every flush the count of each page written is recorded in the summary
//! (`xact/summary.0` and `xact/summary.1`, written in turn in place, each
//! with a sequence number and a CRC-32C; the newer valid one counts).
//! Opening checks every page the summary names against the files: a
//! missing segment file or a page with fewer final statuses than recorded
//! (zeroed, truncated, overwritten) stops the open with an error naming the
//! file. A torn page write or a torn summary write cannot fail the check:
//! both versions of a page are at least as full as the recorded count, and
//! an older summary holds lower counts. Segment files are allocated whole
//! when first written (`fallocate`), so a full disk never fails a commit
//! log write. A missing page reads as zeros only when the summary does not
//! name it (never written by a flush).
//!
//! An xid whose status stays "in progress" after its transaction is gone
//! (the process crashed) is treated as aborted by the visibility rules, since
//! a snapshot never lists it as running.
//!
//! Locking: one mutex over the cache and the open files. Readers hold it only
//! for a lookup; hint bits on tuples keep most readers away from here.

// foldhash (hashbrown's default) rather than SipHash: looked up per commit.
use hashbrown::{HashMap, HashSet};
use std::fs::{self, File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use super::{Xid, FIRST_NORMAL_XID, INVALID_XID};
use crate::err;
use crate::error::Result;

/// Bytes per commit-log page.
pub const CLOG_PAGE_SIZE: usize = 8192;
/// Transaction ids per commit-log page.
pub const XIDS_PER_PAGE: u32 = (CLOG_PAGE_SIZE * 4) as u32;
/// Pages per segment file.
pub const PAGES_PER_SEGMENT: u32 = 32;
/// Pages kept in memory.
pub const CACHE_PAGES: usize = 64;

/// The recorded outcome of a transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum XidStatus {
    /// Running, or never finished (crashed).
    InProgress,
    /// Committed.
    Committed,
    /// Aborted.
    Aborted,
    /// Reserved for subtransactions.
    SubCommitted,
}

impl XidStatus {
    fn from_bits(b: u8) -> XidStatus {
        match b & 3 {
            0 => XidStatus::InProgress,
            1 => XidStatus::Committed,
            2 => XidStatus::Aborted,
            _ => XidStatus::SubCommitted,
        }
    }
    fn bits(self) -> u8 {
        match self {
            XidStatus::InProgress => 0,
            XidStatus::Committed => 1,
            XidStatus::Aborted => 2,
            XidStatus::SubCommitted => 3,
        }
    }
}

/// One cached page.
struct CachedPage {
    /// The page bytes.
    data: Box<[u8; CLOG_PAGE_SIZE]>,
    /// Tick of last use, for LRU eviction.
    used: u64,
    /// Changed since it was last written to its segment file.
    dirty: bool,
}

/// State behind the mutex.
struct Inner {
    /// Cached pages by page number.
    pages: HashMap<u32, CachedPage>,
    /// Use counter.
    tick: u64,
    /// Open segment files by segment number.
    files: HashMap<u32, File>,
    /// Segments written since the last flush.
    unsynced: HashSet<u32>,
    /// Final statuses per page as last written (see "Damage detection").
    counts: std::collections::BTreeMap<u32, u32>,
    /// `counts` changed since the summary was last written.
    counts_changed: bool,
    /// Sequence number of the last summary written (or read).
    summary_seq: u64,
    /// A summary file exists (written before the first segment file is
    /// created, so segment files never exist without one).
    summary_exists: bool,
}

/// Asynchronous commits whose commit record may not be flushed yet.
struct AsyncCommits {
    /// xid -> end LSN of its commit record.
    map: HashMap<Xid, u64>,
    /// Size at which the entries already flushed are pruned next. Doubled
    /// past what a prune leaves, so pruning stays amortized O(1) per commit
    /// while the log is not flushed (`synchronous_commit = off` flushes
    /// every 200 ms: a fixed threshold of 4,096 made every commit after the
    /// 4,096th walk the whole map, 64% of a 100,000-INSERT script's time).
    prune_at: usize,
}

/// Entries below which [`AsyncCommits`] is never pruned.
const ASYNC_PRUNE_MIN: usize = 4096;

/// The commit log of one data directory.
pub struct Clog {
    /// `<data dir>/xact`.
    dir: PathBuf,
    /// Cache and files.
    inner: Mutex<Inner>,
    /// The last final status looked up: `xid << 32 | 0x80 | status bits`
    /// (0 when empty).
    last: AtomicU64,
    /// Asynchronous commits whose commit record may not be flushed yet:
    /// xid -> end LSN of its commit record (see [`Clog::commit_hint_ok`]).
    async_commits: Mutex<AsyncCommits>,
    /// Number of entries in `async_commits` (read without its lock).
    async_count: AtomicUsize,
    /// The WAL's flushed position, once a log is attached.
    wal_flushed: OnceLock<Arc<AtomicU64>>,
}

impl std::fmt::Debug for Clog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Clog").field("dir", &self.dir).finish()
    }
}

fn segment_name(seg: u32) -> String {
    format!("{seg:04X}")
}

/// The number of final (non-zero) statuses on a page.
fn final_count(data: &[u8; CLOG_PAGE_SIZE]) -> u32 {
    data.chunks_exact(8)
        .map(|c| {
            let w = u64::from_le_bytes(c.try_into().expect("8 bytes"));
            ((w | (w >> 1)) & 0x5555_5555_5555_5555).count_ones()
        })
        .sum()
}

impl Inner {
    /// The open file of segment `seg`; with `create`, created (allocated
    /// whole) when missing, else `None` when missing.
    fn file_opt(&mut self, dir: &Path, seg: u32, create: bool) -> Result<Option<&File>> {
        use hashbrown::hash_map::Entry;
        if create && !self.summary_exists && !self.files.contains_key(&seg) {
            write_summary(dir, self.summary_seq + 1, &self.counts)?;
            self.summary_seq += 1;
            self.summary_exists = true;
        }
        match self.files.entry(seg) {
            Entry::Occupied(e) => Ok(Some(e.into_mut())),
            Entry::Vacant(e) => {
                let path = dir.join(segment_name(seg));
                let f = match OpenOptions::new().read(true).write(true).open(&path) {
                    Ok(f) => f,
                    Err(err) if err.kind() == std::io::ErrorKind::NotFound && !create => {
                        return Ok(None)
                    }
                    Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                        let f = OpenOptions::new()
                            .read(true)
                            .write(true)
                            .create(true)
                            .truncate(false)
                            .open(&path)
                            .map_err(|e| {
                                err!(IoError, "could not create file \"{}\": {e}", path.display())
                            })?;
                        let len = PAGES_PER_SEGMENT as u64 * CLOG_PAGE_SIZE as u64;
                        crate::storage::reserve::allocate(&f, 0, len).map_err(|e| {
                            let _ = fs::remove_file(&path);
                            crate::error::Error::new(
                                crate::storage::reserve::code_of(&e),
                                format!("could not extend file \"{}\": {e}", path.display()),
                            )
                        })?;
                        f
                    }
                    Err(e) => {
                        return Err(err!(
                            IoError,
                            "could not open file \"{}\": {e}",
                            path.display()
                        ))
                    }
                };
                Ok(Some(e.insert(f)))
            }
        }
    }

    fn file(&mut self, dir: &Path, seg: u32) -> Result<&File> {
        Ok(self
            .file_opt(dir, seg, true)?
            .expect("created when missing"))
    }

    /// Writes page `pageno` to its segment file (no fsync: [`Clog::flush`]).
    fn write_page(&mut self, dir: &Path, pageno: u32, data: &[u8; CLOG_PAGE_SIZE]) -> Result<()> {
        let seg = pageno / PAGES_PER_SEGMENT;
        let off = (pageno % PAGES_PER_SEGMENT) as u64 * CLOG_PAGE_SIZE as u64;
        self.file(dir, seg)?
            .write_all_at(&data[..], off)
            .map_err(|e| {
                crate::error::Error::new(
                    crate::storage::reserve::code_of(&e),
                    format!(
                        "could not write commit log page {pageno} in file \"xact/{}\": {e}",
                        segment_name(seg)
                    ),
                )
            })?;
        self.unsynced.insert(seg);
        let n = final_count(data);
        let c = self.counts.entry(pageno).or_insert(0);
        if n > *c {
            *c = n;
            self.counts_changed = true;
        }
        Ok(())
    }

    /// Reads page `pageno` from its file into `data` (zeros past the end
    /// of the file or when the file is missing); returns whether the file
    /// exists.
    fn read_page(
        &mut self,
        dir: &Path,
        pageno: u32,
        data: &mut [u8; CLOG_PAGE_SIZE],
    ) -> Result<bool> {
        let seg = pageno / PAGES_PER_SEGMENT;
        let off = (pageno % PAGES_PER_SEGMENT) as u64 * CLOG_PAGE_SIZE as u64;
        let Some(f) = self.file_opt(dir, seg, false)? else {
            return Ok(false);
        };
        let mut got = 0;
        while got < CLOG_PAGE_SIZE {
            let n = f
                .read_at(&mut data[got..], off + got as u64)
                .map_err(|e| err!(IoError, "could not read commit log page {pageno}: {e}"))?;
            if n == 0 {
                break; // past the end of the file: never written, all in progress
            }
            got += n;
        }
        Ok(true)
    }

    fn page(&mut self, dir: &Path, pageno: u32) -> Result<&mut CachedPage> {
        self.tick += 1;
        let tick = self.tick;
        if !self.pages.contains_key(&pageno) {
            if self.pages.len() >= CACHE_PAGES {
                let victim = *self
                    .pages
                    .iter()
                    .min_by_key(|(_, p)| p.used)
                    .map(|(k, _)| k)
                    .expect("cache is full so not empty");
                // Written before it leaves the cache: a failed write keeps it.
                if self.pages[&victim].dirty {
                    let data = self.pages[&victim].data.clone();
                    self.write_page(dir, victim, &data)?;
                }
                self.pages.remove(&victim);
            }
            let mut data = Box::new([0u8; CLOG_PAGE_SIZE]);
            self.read_page(dir, pageno, &mut data)?;
            self.pages.insert(
                pageno,
                CachedPage {
                    data,
                    used: tick,
                    dirty: false,
                },
            );
        }
        let p = self.pages.get_mut(&pageno).expect("present");
        p.used = tick;
        Ok(p)
    }
}

impl Clog {
    /// Opens the commit log in `<data_dir>/xact`, creating the directory.
    pub fn open(data_dir: &Path) -> Result<Clog> {
        let dir = data_dir.join("xact");
        fs::create_dir_all(&dir).map_err(|e| {
            err!(
                IoError,
                "could not create directory \"{}\": {e}",
                dir.display()
            )
        })?;
        let mut inner = Inner {
            pages: HashMap::new(),
            tick: 0,
            files: HashMap::new(),
            unsynced: HashSet::new(),
            counts: std::collections::BTreeMap::new(),
            counts_changed: false,
            summary_seq: 0,
            summary_exists: false,
        };
        if let Some((seq, counts)) = read_summary(&dir)? {
            inner.summary_seq = seq;
            inner.summary_exists = true;
            verify(&dir, &mut inner, &counts)?;
            inner.counts = counts;
        } else if !list_segments(&dir)?.is_empty() {
            return Err(err!(
                DataCorrupted,
                "could not open file \"xact/summary.0\": No such file or directory"
            )
            .with_detail("The commit log has segment files but no summary of them."));
        }
        Ok(Clog {
            dir,
            inner: Mutex::new(inner),
            last: AtomicU64::new(0),
            async_commits: Mutex::new(AsyncCommits {
                map: HashMap::new(),
                prune_at: ASYNC_PRUNE_MIN,
            }),
            async_count: AtomicUsize::new(0),
            wal_flushed: OnceLock::new(),
        })
    }

    /// The recorded status of `xid`. The special ids below the first normal
    /// one are committed (bootstrap, frozen), except the invalid id, aborted.
    pub fn status(&self, xid: Xid) -> Result<XidStatus> {
        if xid < FIRST_NORMAL_XID {
            return Ok(if xid == INVALID_XID {
                XidStatus::Aborted
            } else {
                XidStatus::Committed
            });
        }
        // One-entry cache of the last final status looked up: a scan of
        // unhinted rows asks about the same few xids over and over.
        let last = self.last.load(Ordering::Relaxed);
        if last & 0x80 != 0 && (last >> 32) as Xid == xid {
            return Ok(XidStatus::from_bits(last as u8));
        }
        let mut inner = self.inner.lock().expect("clog mutex poisoned");
        let p = inner.page(&self.dir, xid / XIDS_PER_PAGE)?;
        let i = (xid % XIDS_PER_PAGE) as usize;
        let status = XidStatus::from_bits(p.data[i / 4] >> (2 * (i % 4)));
        if matches!(status, XidStatus::Committed | XidStatus::Aborted) {
            // Final statuses never change, so the cache never goes stale.
            self.last.store(
                ((xid as u64) << 32) | 0x80 | status.bits() as u64,
                Ordering::Relaxed,
            );
        }
        Ok(status)
    }

    /// True when `xid` is recorded as committed.
    pub fn did_commit(&self, xid: Xid) -> Result<bool> {
        Ok(self.status(xid)? == XidStatus::Committed)
    }

    /// Records `status` for `xid` in the cached page (written at eviction
    /// or by [`Clog::flush`]; see the module doc for why that is durable).
    pub fn set_status(&self, xid: Xid, status: XidStatus) -> Result<()> {
        if xid < FIRST_NORMAL_XID {
            return Err(err!(
                InternalError,
                "cannot set the status of special transaction id {xid}"
            ));
        }
        let pageno = xid / XIDS_PER_PAGE;
        let mut inner = self.inner.lock().expect("clog mutex poisoned");
        let p = inner.page(&self.dir, pageno)?;
        let i = (xid % XIDS_PER_PAGE) as usize;
        let shift = 2 * (i % 4);
        p.data[i / 4] = (p.data[i / 4] & !(3 << shift)) | (status.bits() << shift);
        p.dirty = true;
        drop(inner);
        // Recovery may turn a committed-looking xid into an aborted one.
        self.last.store(0, Ordering::Relaxed);
        Ok(())
    }

    /// Attaches the WAL's flushed position (for [`Clog::commit_hint_ok`]).
    pub fn set_wal_flushed(&self, flushed: Arc<AtomicU64>) {
        let _ = self.wal_flushed.set(flushed);
    }

    /// Remembers that `xid` commits asynchronously with its commit record
    /// ending at `lsn`; call before recording the commit.
    pub fn note_async_commit(&self, xid: Xid, lsn: u64) {
        let mut a = self
            .async_commits
            .lock()
            .expect("async commit map poisoned");
        if a.map.len() >= a.prune_at {
            let flushed = self.flushed_lsn();
            a.map.retain(|_, l| *l > flushed);
            a.prune_at = (a.map.len() * 2).max(ASYNC_PRUNE_MIN);
        }
        a.map.insert(xid, lsn);
        self.async_count.store(a.map.len(), Ordering::Release);
    }

    fn flushed_lsn(&self) -> u64 {
        self.wal_flushed
            .get()
            .map_or(u64::MAX, |f| f.load(Ordering::Acquire))
    }

    /// The end LSN of the latest asynchronous commit record not yet
    /// flushed, if any (VACUUM flushes up to it before setting pages
    /// all-visible). Forgets the entries already flushed.
    pub fn pending_async_commit_lsn(&self) -> Option<u64> {
        if self.async_count.load(Ordering::Acquire) == 0 {
            return None;
        }
        let flushed = self.flushed_lsn();
        let mut a = self
            .async_commits
            .lock()
            .expect("async commit map poisoned");
        a.map.retain(|_, l| *l > flushed);
        a.prune_at = (a.map.len() * 2).max(ASYNC_PRUNE_MIN);
        self.async_count.store(a.map.len(), Ordering::Release);
        a.map.values().copied().max()
    }

    /// Whether a committed `xid` may be hinted `XMIN/XMAX_COMMITTED` on
    /// tuples: only once its commit record is flushed (PostgreSQL's
    /// `SetHintBits` rule). A page carrying the hint could otherwise reach
    /// disk while the commit is lost in a crash. Cheap when no asynchronous
    /// commit is pending.
    #[inline]
    pub fn commit_hint_ok(&self, xid: Xid) -> bool {
        if self.async_count.load(Ordering::Acquire) == 0 {
            return true;
        }
        let mut a = self
            .async_commits
            .lock()
            .expect("async commit map poisoned");
        let Some(&lsn) = a.map.get(&xid) else {
            return true;
        };
        if lsn > self.flushed_lsn() {
            return false;
        }
        a.map.remove(&xid);
        self.async_count.store(a.map.len(), Ordering::Release);
        true
    }

    /// Writes every dirty page, then fsyncs every segment written since the
    /// last flush.
    pub fn flush(&self) -> Result<()> {
        let mut inner = self.inner.lock().expect("clog mutex poisoned");
        let mut dirty: Vec<u32> = inner
            .pages
            .iter()
            .filter(|(_, p)| p.dirty)
            .map(|(&n, _)| n)
            .collect();
        dirty.sort_unstable();
        for pageno in dirty {
            let page = inner.pages.get_mut(&pageno).expect("listed just above");
            page.dirty = false;
            let data = page.data.clone();
            if let Err(e) = inner.write_page(&self.dir, pageno, &data) {
                // Still to be written by the next flush or eviction.
                inner.pages.get_mut(&pageno).expect("still cached").dirty = true;
                return Err(e);
            }
        }
        let segs: Vec<u32> = inner.unsynced.iter().copied().collect();
        for seg in segs {
            inner.file(&self.dir, seg)?.sync_data().map_err(|e| {
                err!(
                    IoError,
                    "could not fsync commit log segment {}: {e}",
                    segment_name(seg)
                )
            })?;
            inner.unsynced.remove(&seg);
        }
        if inner.counts_changed {
            let seq = inner.summary_seq + 1;
            write_summary(&self.dir, seq, &inner.counts)?;
            inner.summary_seq = seq;
            inner.summary_exists = true;
            inner.counts_changed = false;
        }
        Ok(())
    }
}

const SUMMARY_MAGIC: u32 = u32::from_le_bytes(*b"HPDX");

fn summary_path(dir: &Path, seq: u64) -> PathBuf {
    dir.join(format!("summary.{}", seq % 2))
}

/// The segment numbers present in `dir`.
fn list_segments(dir: &Path) -> Result<Vec<u32>> {
    let rd = fs::read_dir(dir).map_err(|e| {
        err!(
            IoError,
            "could not read directory \"{}\": {e}",
            dir.display()
        )
    })?;
    let mut segs: Vec<u32> = rd
        .flatten()
        .filter_map(|e| {
            let name = e.file_name();
            let name = name.to_str()?;
            (name.len() >= 4 && name.bytes().all(|b| b.is_ascii_hexdigit()))
                .then(|| u32::from_str_radix(name, 16).ok())?
        })
        .collect();
    segs.sort_unstable();
    Ok(segs)
}

/// Writes summary number `seq` in place over the older of the two files
/// (padded to 4 KiB steps, so the file rarely needs new space), fsynced.
fn write_summary(
    dir: &Path,
    seq: u64,
    counts: &std::collections::BTreeMap<u32, u32>,
) -> Result<()> {
    let mut b = Vec::with_capacity(20 + 8 * counts.len());
    b.extend_from_slice(&SUMMARY_MAGIC.to_le_bytes());
    b.extend_from_slice(&seq.to_le_bytes());
    b.extend_from_slice(&(counts.len() as u32).to_le_bytes());
    for (&page, &n) in counts {
        b.extend_from_slice(&page.to_le_bytes());
        b.extend_from_slice(&n.to_le_bytes());
    }
    let crc = crc32c::crc32c(&b);
    b.extend_from_slice(&crc.to_le_bytes());
    b.resize(b.len().div_ceil(4096) * 4096, 0);
    let path = summary_path(dir, seq);
    let io = |path: &Path, what: &str, e: std::io::Error| {
        crate::error::Error::new(
            crate::storage::reserve::code_of(&e),
            format!(
                "could not {what} file \"{}\": {}",
                path.display(),
                crate::storage::reserve::os_text(&e)
            ),
        )
    };
    if path.exists() {
        let f = OpenOptions::new()
            .write(true)
            .open(&path)
            .map_err(|e| io(&path, "open", e))?;
        f.write_all_at(&b, 0).map_err(|e| io(&path, "write", e))?;
        f.sync_data().map_err(|e| io(&path, "fsync", e))?;
    } else {
        create_whole(dir, &path, &b).map_err(|e| io(&path, "create", e))?;
    }
    // The other file exists from the first write on, so later writes only
    // overwrite allocated space.
    let other = summary_path(dir, seq + 1);
    if !other.exists() {
        create_whole(dir, &other, &b).map_err(|e| io(&other, "create", e))?;
    }
    Ok(())
}

/// Puts a new summary file in place whole: written and fsynced under a
/// temporary name, renamed, the directory fsynced. A crash leaves either
/// no file or a valid one, never an empty or short file that would make the
/// open refuse the commit log (a torn in-place write is covered by the other
/// file; a torn first creation had no other file to fall back on).
fn create_whole(dir: &Path, path: &Path, b: &[u8]) -> std::io::Result<()> {
    let tmp = dir.join("summary.tmp");
    let f = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(&tmp)?;
    f.write_all_at(b, 0)?;
    f.sync_data()?;
    fs::rename(&tmp, path)?;
    File::open(dir)?.sync_all()
}

/// Decodes one summary file; `None` when it is missing or not valid.
fn decode_summary(b: &[u8]) -> Option<(u64, std::collections::BTreeMap<u32, u32>)> {
    let u32_at = |at: usize| Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?));
    if u32_at(0)? != SUMMARY_MAGIC {
        return None;
    }
    let seq = u64::from_le_bytes(b.get(4..12)?.try_into().ok()?);
    let n = u32_at(12)? as usize;
    let end = 16usize.checked_add(n.checked_mul(8)?)?;
    if crc32c::crc32c(b.get(..end)?) != u32_at(end)? {
        return None;
    }
    let counts = (0..n)
        .map(|i| Some((u32_at(16 + 8 * i)?, u32_at(20 + 8 * i)?)))
        .collect::<Option<_>>()?;
    Some((seq, counts))
}

/// The newer valid summary, `None` when neither file exists; an error when
/// files exist but none is valid.
#[allow(clippy::type_complexity)]
fn read_summary(dir: &Path) -> Result<Option<(u64, std::collections::BTreeMap<u32, u32>)>> {
    let mut best: Option<(u64, std::collections::BTreeMap<u32, u32>)> = None;
    let mut found = false;
    for i in 0..2u64 {
        let path = summary_path(dir, i);
        match fs::read(&path) {
            Ok(b) => {
                found = true;
                if let Some((seq, c)) = decode_summary(&b) {
                    if best.as_ref().map_or(true, |(s, _)| seq > *s) {
                        best = Some((seq, c));
                    }
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(err!(
                    IoError,
                    "could not read file \"{}\": {e}",
                    path.display()
                ))
            }
        }
    }
    if found && best.is_none() {
        return Err(err!(
            DataCorrupted,
            "incorrect checksum in commit log summary \"xact/summary.0\" and \"xact/summary.1\""
        ));
    }
    Ok(best)
}

/// Checks every page `counts` names against the files (module doc).
fn verify(
    dir: &Path,
    inner: &mut Inner,
    counts: &std::collections::BTreeMap<u32, u32>,
) -> Result<()> {
    let mut data = Box::new([0u8; CLOG_PAGE_SIZE]);
    for (&pageno, &want) in counts {
        data.fill(0);
        let seg = pageno / PAGES_PER_SEGMENT;
        if !inner.read_page(dir, pageno, &mut data)? {
            return Err(err!(
                DataCorrupted,
                "could not open file \"xact/{}\": No such file or directory",
                segment_name(seg)
            )
            .with_detail(format!(
                "The commit log page {pageno} was written by an earlier run and is missing."
            )));
        }
        let got = final_count(&data);
        if got < want {
            return Err(err!(
                DataCorrupted,
                "commit log file \"xact/{}\" is damaged",
                segment_name(seg)
            )
            .with_detail(format!(
                "Page {pageno} holds {got} finished transactions; {want} were written to it."
            )));
        }
    }
    Ok(())
}

impl Clog {
    /// Forgets every change not yet written to the files, as a crash would
    /// (for [`crate::Database::crash`]): the next open rebuilds them from
    /// the write-ahead log.
    pub fn discard_unwritten(&self) {
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        inner.pages.retain(|_, p| !p.dirty);
    }
}

/// A commit log dropped in an orderly way (not a crash) writes its dirty
/// pages, as flushing before a clean shutdown would (without the fsync).
impl Drop for Clog {
    fn drop(&mut self) {
        let inner = self.inner.get_mut().unwrap_or_else(|p| p.into_inner());
        let dirty: Vec<u32> = inner
            .pages
            .iter()
            .filter(|(_, p)| p.dirty)
            .map(|(&n, _)| n)
            .collect();
        for pageno in dirty {
            let data = inner.pages[&pageno].data.clone();
            let _ = inner.write_page(&self.dir, pageno, &data);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_persist_across_reopen_and_cache_eviction() {
        let dir = tempfile::tempdir().unwrap();
        let clog = Clog::open(dir.path()).unwrap();
        assert_eq!(clog.status(0).unwrap(), XidStatus::Aborted);
        assert_eq!(clog.status(2).unwrap(), XidStatus::Committed);
        assert_eq!(clog.status(3).unwrap(), XidStatus::InProgress);
        // Xids on more pages than the cache holds, in two segments.
        let xids: Vec<Xid> = (0..(CACHE_PAGES as u32 + 40))
            .map(|i| 3 + i * XIDS_PER_PAGE + i)
            .collect();
        for (n, &x) in xids.iter().enumerate() {
            let s = if n % 2 == 0 {
                XidStatus::Committed
            } else {
                XidStatus::Aborted
            };
            clog.set_status(x, s).unwrap();
        }
        clog.set_status(4, XidStatus::Committed).unwrap();
        for (n, &x) in xids.iter().enumerate() {
            let s = if n % 2 == 0 {
                XidStatus::Committed
            } else {
                XidStatus::Aborted
            };
            assert_eq!(clog.status(x).unwrap(), s);
            assert_eq!(
                clog.status(x + 1).unwrap(),
                if x + 1 == 4 {
                    XidStatus::Committed
                } else {
                    XidStatus::InProgress
                }
            );
        }
        clog.flush().unwrap();
        drop(clog);
        assert!(dir.path().join("xact/0000").exists());
        assert!(dir.path().join("xact/0002").exists());
        let clog = Clog::open(dir.path()).unwrap();
        assert!(clog.did_commit(3).unwrap());
        assert!(clog.did_commit(4).unwrap());
        assert_eq!(clog.status(xids[1]).unwrap(), XidStatus::Aborted);
        assert!(clog.set_status(1, XidStatus::Aborted).is_err());
    }

    #[test]
    fn statuses_reach_the_files_at_flush_or_eviction_not_per_change() {
        let dir = tempfile::tempdir().unwrap();
        // A crash (forget: no Drop) loses statuses set since the last flush:
        // the write-ahead log's commit records bring them back.
        let clog = Clog::open(dir.path()).unwrap();
        clog.set_status(3, XidStatus::Committed).unwrap();
        std::mem::forget(clog);
        let clog = Clog::open(dir.path()).unwrap();
        assert_eq!(clog.status(3).unwrap(), XidStatus::InProgress);
        // Flushed: kept by a crash.
        clog.set_status(3, XidStatus::Committed).unwrap();
        clog.flush().unwrap();
        clog.set_status(4, XidStatus::Aborted).unwrap();
        std::mem::forget(clog);
        let clog = Clog::open(dir.path()).unwrap();
        assert_eq!(clog.status(3).unwrap(), XidStatus::Committed);
        assert_eq!(clog.status(4).unwrap(), XidStatus::InProgress);
        // Evicted: written on its way out of the cache.
        clog.set_status(5, XidStatus::Aborted).unwrap();
        for i in 1..=CACHE_PAGES as u32 {
            clog.status(i * XIDS_PER_PAGE).unwrap();
        }
        std::mem::forget(clog);
        let clog = Clog::open(dir.path()).unwrap();
        assert_eq!(clog.status(5).unwrap(), XidStatus::Aborted);
        // An orderly drop writes what is dirty.
        clog.set_status(6, XidStatus::Committed).unwrap();
        drop(clog);
        let clog = Clog::open(dir.path()).unwrap();
        assert_eq!(clog.status(6).unwrap(), XidStatus::Committed);
    }

    /// A zeroed or missing segment is refused; a page with more final
    /// statuses than recorded (written after the flush) and one damaged
    /// summary file are not.
    #[test]
    fn lost_statuses_are_refused_and_later_ones_accepted() {
        let dir = tempfile::tempdir().unwrap();
        let seg0 = dir.path().join("xact/0000");
        {
            let clog = Clog::open(dir.path()).unwrap();
            for x in 3..100 {
                clog.set_status(x, XidStatus::Committed).unwrap();
            }
            clog.flush().unwrap();
            // Written (by eviction or an orderly drop) after the flush.
            clog.set_status(100, XidStatus::Aborted).unwrap();
        }
        let good = fs::read(&seg0).unwrap();
        drop(Clog::open(dir.path()).unwrap());
        // One summary file damaged: the other one counts.
        let s1 = dir.path().join("xact/summary.1");
        let keep = fs::read(&s1).unwrap();
        fs::write(&s1, b"garbage").unwrap();
        assert!(Clog::open(dir.path()).unwrap().did_commit(50).unwrap());
        fs::write(&s1, &keep).unwrap();
        // Part of the statuses lost: refused, naming the file.
        let mut b = good.clone();
        b[10] = 0;
        fs::write(&seg0, &b).unwrap();
        let e = Clog::open(dir.path()).unwrap_err();
        assert_eq!(e.code, crate::SqlState::DataCorrupted);
        assert_eq!(e.message, "commit log file \"xact/0000\" is damaged");
        fs::write(&seg0, vec![0u8; good.len()]).unwrap();
        assert!(Clog::open(dir.path()).is_err());
        fs::remove_file(&seg0).unwrap();
        let e = Clog::open(dir.path()).unwrap_err();
        assert!(e.message.contains("xact/0000"), "{}", e.message);
        assert!(!seg0.exists(), "a refused open created the file");
        fs::write(&seg0, &good).unwrap();
        assert!(Clog::open(dir.path()).unwrap().did_commit(99).unwrap());
    }

    #[test]
    fn a_crash_during_the_first_summary_write_leaves_an_openable_log() {
        let dir = tempfile::tempdir().unwrap();
        let xact = dir.path().join("xact");
        fs::create_dir_all(&xact).unwrap();
        let counts: std::collections::BTreeMap<u32, u32> = [(0, 7)].into_iter().collect();
        // A kill between creating the temporary file and renaming it: an
        // empty or short leftover under the temporary name only.
        fs::write(xact.join("summary.tmp"), b"").unwrap();
        assert!(read_summary(&xact).unwrap().is_none());
        write_summary(&xact, 1, &counts).unwrap();
        // Both files are whole from the first write on; the leftover is gone.
        assert!(!xact.join("summary.tmp").exists());
        for i in 0..2 {
            let b = fs::read(xact.join(format!("summary.{i}"))).unwrap();
            assert_eq!(decode_summary(&b).unwrap().1, counts);
        }
        // A kill after the first rename and before the second file: one
        // valid file alone counts, and the next write creates the other.
        fs::remove_file(xact.join("summary.0")).unwrap();
        assert_eq!(read_summary(&xact).unwrap().unwrap().0, 1);
        write_summary(&xact, 2, &counts).unwrap();
        assert_eq!(read_summary(&xact).unwrap().unwrap().0, 2);
        assert!(xact.join("summary.0").exists() && xact.join("summary.1").exists());
    }

    #[test]
    fn asynchronous_commits_wait_for_their_flush_before_hints() {
        let dir = tempfile::tempdir().unwrap();
        let clog = Clog::open(dir.path()).unwrap();
        let flushed = Arc::new(AtomicU64::new(0));
        clog.set_wal_flushed(flushed.clone());
        // More than a prune's worth, with nothing flushed: none is lost.
        let n = 3 * ASYNC_PRUNE_MIN as u32;
        for x in 3..3 + n {
            clog.note_async_commit(x, u64::from(x) * 10);
        }
        assert!(clog.async_commits.lock().unwrap().map.len() == n as usize);
        assert!(!clog.commit_hint_ok(3));
        assert!(!clog.commit_hint_ok(2 + n));
        // Flushed up to xid 1000's record: those up to it may be hinted.
        flushed.store(10_000, Ordering::Release);
        assert!(clog.commit_hint_ok(1000));
        assert!(!clog.commit_hint_ok(1001));
        // The next prune drops what is flushed and keeps the rest.
        for x in 3 + n..3 + 2 * n {
            clog.note_async_commit(x, u64::from(x) * 10);
        }
        let left = clog.async_commits.lock().unwrap().map.len();
        assert!(left < 2 * n as usize, "{left}");
        assert!(!clog.commit_hint_ok(1001));
        assert!(clog.commit_hint_ok(999));
        assert!(clog.commit_hint_ok(2)); // never noted
    }
}
