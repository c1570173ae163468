//! The log writer: inserting records into an in-memory buffer, writing and
//! flushing it to the segment files with group commit, and the background
//! flusher for asynchronous commits.
//!
//! # Inserting
//!
//! [`Wal::insert`], [`Wal::insert_page_change`] and
//! [`Wal::insert_page_image`] append one framed record
//! to the insert buffer under the insert mutex and return the record's end
//! LSN. Nothing is written to disk there. The caller then calls
//! [`Wal::write_if_full`]: past [`WRITE_AHEAD_BYTES`] it wakes the background
//! writer, which writes the buffer out (no sync) on the other core while the
//! caller goes on (a bulk load does not wait for `pwrite`); past
//! [`WRITE_SELF_BYTES`] the caller writes it out itself. Its page lock may
//! still be held: the writer never takes a page lock.
//!
//! The full-page-image decision is made under the insert mutex, against the
//! redo pointer that a checkpoint moves under the same mutex: a record
//! inserted after the redo point for a page whose LSN is at or before it
//! carries the page's image instead of the change, so a page torn by a crash
//! is restored whole by redo.
//!
//! # Flushing and group commit
//!
//! [`Wal::flush`]`(upto)` returns once the log is durable up to `upto`. One
//! caller at a time is the *leader*: it takes the whole insert buffer,
//! writes it and fdatasyncs the files, then wakes everyone; callers that
//! arrive while a leader works wait on a condition variable and, when woken,
//! are usually already covered by that flush. So N sessions committing at
//! once share about two fdatasyncs instead of N.
//!
//! # A failed flush stops the instance
//!
//! A write or sync that fails while flushing (a commit, a page write's
//! write-ahead rule, a checkpoint, the background flusher) puts the log in
//! the failed state for good, as PostgreSQL PANICs there: whether the bytes
//! reached the disk is unknown (a failed fsync may have dropped them), so
//! no later flush may claim they did, and no page may be written after
//! them. Every later flush and write fails with the first error, the
//! session layer refuses every later statement ([`Wal::healthy`]), and only
//! reopening the directory (recovery, deciding from what is on disk) goes
//! on. A failed write without a sync (a full insert buffer written ahead)
//! is only the statement's error: its records stay buffered.
//!
//! # Locking order
//!
//! I/O mutex (segment files) -> insert mutex; the flush-state mutex is never
//! held with either. A page content lock may be held by callers of insert
//! and of [`Wal::write_if_full`], never by the writer itself.

// foldhash rather than SipHash: `logged` changes twice per transaction.
use hashbrown::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::time::Duration;

use super::record::{self, Lsn, WalRecord};
use super::segment::SegmentFiles;
use crate::access::heap::record::{HeapRecord, PageRef};
use crate::error::{Error, Result};
use crate::storage::buffer::page_lsn;
use crate::storage::WalFlushHook;
use crate::txn::Xid;

/// Insert-buffer size past which the background writer is woken to write
/// it out (without syncing), so bulk loads do not wait for `pwrite`.
pub const WRITE_AHEAD_BYTES: usize = 2 << 20;

/// Insert-buffer size past which inserters write it out themselves (the
/// background writer is not keeping up, or not running).
pub const WRITE_SELF_BYTES: usize = 16 << 20;

/// How often the background flusher flushes asynchronous commits
/// (PostgreSQL's `wal_writer_delay`).
pub const BACKGROUND_FLUSH_INTERVAL: Duration = Duration::from_millis(200);

/// State behind the insert mutex.
#[derive(Debug)]
struct Insert {
    /// Records inserted but not yet handed to the I/O side.
    buf: Vec<u8>,
    /// The LSN of `buf[0]`.
    buf_start: Lsn,
    /// Where the next record starts (end of the last one).
    pos: Lsn,
    /// Where the last record starts.
    prev: Lsn,
    /// The redo point of the running or last checkpoint (see module doc).
    redo: Lsn,
    /// Transactions that inserted a record and not yet their commit or
    /// abort record (a transaction that logged nothing needs neither). A
    /// checkpoint lists them, since their outcome may come only after its
    /// redo point (see [`Wal::begin_checkpoint`]).
    logged: HashSet<Xid>,
    /// Relation files created under a transaction (its create records)
    /// that has no commit or abort record yet: `(xid, relfilenode)`. A
    /// checkpoint logs their create records again after its redo point,
    /// so that recovery from it still knows which files to remove when the
    /// transaction turns out to have no outcome (see
    /// [`Wal::begin_checkpoint`]).
    created: Vec<(Xid, u32)>,
}

/// State behind the I/O mutex.
#[derive(Debug)]
struct Io {
    /// The segment files.
    files: SegmentFiles,
    /// An empty buffer swapped with the insert buffer (keeps its capacity).
    spare: Vec<u8>,
    /// Everything before this is written (not necessarily synced).
    written: Lsn,
}

/// State behind the flush mutex.
#[derive(Debug)]
struct FlushState {
    /// A leader is writing and syncing.
    leader: bool,
    /// The log is durable up to here.
    flushed: Lsn,
}

/// Counters for `wal_stats()` and `\conninfo`.
#[derive(Debug, Default)]
pub struct WalCounters {
    /// Records inserted.
    pub records: AtomicU64,
    /// Full-page images among them.
    pub fpis: AtomicU64,
    /// Bytes inserted.
    pub bytes: AtomicU64,
    /// fdatasync rounds (group flushes).
    pub flushes: AtomicU64,
    /// Checkpoints completed.
    pub checkpoints: AtomicU64,
}

/// A snapshot of the counters and positions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WalStats {
    /// Where the next record goes.
    pub insert_lsn: Lsn,
    /// Durable up to here.
    pub flush_lsn: Lsn,
    /// The redo point of the last checkpoint.
    pub redo_lsn: Lsn,
    /// Records inserted since open.
    pub records: u64,
    /// Full-page images among them.
    pub fpis: u64,
    /// Bytes inserted since open.
    pub bytes: u64,
    /// fdatasync rounds since open.
    pub flushes: u64,
    /// Checkpoints since open.
    pub checkpoints: u64,
}

/// The write-ahead log of one data directory.
#[derive(Debug)]
pub struct Wal {
    /// `<data dir>/wal`.
    dir: PathBuf,
    /// The insert buffer and positions.
    insert: Mutex<Insert>,
    /// The segment files (held while writing and syncing).
    io: Mutex<Io>,
    /// Leader election and the flushed position.
    flush: Mutex<FlushState>,
    /// Signalled when a leader finishes.
    flushed_cv: Condvar,
    /// Mirror of the flushed position, for lock-free checks (shared with
    /// the commit log's hint rule).
    flushed: Arc<AtomicU64>,
    /// Mirror of the insert position.
    insert_pos: AtomicU64,
    /// Mirror of the insert buffer's length.
    buffered: AtomicUsize,
    /// Mirror of the redo pointer, read without the insert lock (whether to
    /// compress a page's image before taking it).
    redo_ptr: AtomicU64,
    /// Counters.
    pub counters: WalCounters,
    /// Tells the background flusher to stop.
    stop: AtomicBool,
    /// The background writer thread, to wake when the buffer fills.
    writer_thread: Mutex<Option<std::thread::Thread>>,
    /// The background writer flushes up to here when it wakes
    /// ([`Wal::request_flush`]).
    flush_request: AtomicU64,
    /// Full-page images are LZ4-compressed (`wal_compression`).
    compress_fpi: AtomicBool,
    /// Set once a flush failed (see the module doc).
    failed: AtomicBool,
    /// The error of the flush that failed.
    failure: OnceLock<Error>,
}

impl Wal {
    /// Opens the writer on `dir` (`<data dir>/wal`) continuing the stream at
    /// `end` (after the record starting at `prev`), with redo point `redo`.
    /// Bytes after `end` are discarded.
    pub fn open(dir: &Path, end: Lsn, prev: Lsn, redo: Lsn, fsync: bool) -> Result<Arc<Wal>> {
        Wal::open_with(dir, end, prev, redo, fsync, true)
    }

    /// [`Wal::open`] after a clean shutdown that ended the log at `end`:
    /// the bytes after it are not zeroed (nothing was written past the
    /// shutdown checkpoint, so what follows is zeros or a recycled
    /// segment's stale records, which running already writes over), which
    /// saves reading the rest of the segment at every open.
    pub fn open_clean(dir: &Path, end: Lsn, prev: Lsn, redo: Lsn) -> Result<Arc<Wal>> {
        Wal::open_with(dir, end, prev, redo, true, false)
    }

    fn open_with(
        dir: &Path,
        end: Lsn,
        prev: Lsn,
        redo: Lsn,
        fsync: bool,
        zero_tail: bool,
    ) -> Result<Arc<Wal>> {
        std::fs::create_dir_all(dir).map_err(|e| {
            crate::err!(
                IoError,
                "could not create directory \"{}\": {e}",
                dir.display()
            )
        })?;
        let mut files = SegmentFiles::new(dir);
        files.fsync = fsync;
        files.cut_at(end, zero_tail)?;
        Ok(Arc::new(Wal {
            dir: dir.to_path_buf(),
            insert: Mutex::new(Insert {
                buf: Vec::with_capacity(1 << 20),
                buf_start: end,
                pos: end,
                prev,
                redo,
                logged: HashSet::new(),
                created: Vec::new(),
            }),
            io: Mutex::new(Io {
                files,
                spare: Vec::with_capacity(1 << 20),
                written: end,
            }),
            flush: Mutex::new(FlushState {
                leader: false,
                flushed: end,
            }),
            flushed_cv: Condvar::new(),
            flushed: Arc::new(AtomicU64::new(end)),
            insert_pos: AtomicU64::new(end),
            buffered: AtomicUsize::new(0),
            redo_ptr: AtomicU64::new(redo),
            counters: WalCounters::default(),
            stop: AtomicBool::new(false),
            writer_thread: Mutex::new(None),
            flush_request: AtomicU64::new(0),
            compress_fpi: AtomicBool::new(false),
            failed: AtomicBool::new(false),
            failure: OnceLock::new(),
        }))
    }

    /// Turns LZ4 compression of full-page images on or off
    /// (`wal_compression`; off when the log is opened). Either kind of image
    /// is read back by recovery whatever the setting.
    pub fn set_compression(&self, on: bool) {
        self.compress_fpi.store(on, Ordering::Relaxed);
    }

    /// The `wal/` directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn ins(&self) -> MutexGuard<'_, Insert> {
        self.insert.lock().expect("WAL insert mutex poisoned")
    }

    fn io(&self) -> MutexGuard<'_, Io> {
        self.io.lock().expect("WAL I/O mutex poisoned")
    }

    fn count(&self, len: usize, fpi: bool) {
        self.counters.records.fetch_add(1, Ordering::Relaxed);
        self.counters.bytes.fetch_add(len as u64, Ordering::Relaxed);
        if fpi {
            self.counters.fpis.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Finishes an insert: advances the positions; returns the end LSN.
    fn advance(&self, ins: &mut Insert, len: usize, xid: Xid) -> Lsn {
        ins.prev = ins.pos;
        ins.pos += len as u64;
        if xid != 0 && !ins.logged.contains(&xid) {
            ins.logged.insert(xid);
        }
        self.insert_pos.store(ins.pos, Ordering::Relaxed);
        self.buffered.store(ins.buf.len(), Ordering::Relaxed);
        ins.pos
    }

    /// Inserts `rec` written by `xid` (0: none); returns its end LSN.
    pub fn insert(&self, xid: Xid, rec: &WalRecord) -> Lsn {
        let mut ins = self.ins();
        let prev = ins.prev;
        let len = record::encode(&mut ins.buf, prev, xid, rec);
        let end = self.advance(&mut ins, len, xid);
        match rec {
            WalRecord::Commit { .. } | WalRecord::Abort { .. } => {
                // Its outcome is in the log from here on.
                ins.logged.remove(&xid);
                if !ins.created.is_empty() {
                    ins.created.retain(|&(x, _)| x != xid);
                }
            }
            WalRecord::CreateRel { rel } if xid != 0 => ins.created.push((xid, *rel)),
            _ => {}
        }
        drop(ins);
        self.count(len, matches!(rec, WalRecord::Fpi { .. }));
        end
    }

    /// Logs change `rec` (already applied) to page `page` whose current
    /// bytes are `p` (its LSN still the one before the change). When the
    /// page's LSN is at or before the redo point and the record does not
    /// initialise the page, the page's image is logged instead. Returns the
    /// LSN to set on the page.
    pub fn insert_page_change(&self, xid: Xid, page: PageRef, p: &[u8], rec: &HeapRecord) -> Lsn {
        let will_init = matches!(
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
        );
        // The image is compressed before taking the insert lock (other
        // inserters do not wait for LZ4): the redo point only moves forward,
        // so a page at or before the one read here still needs its image.
        let compress = !will_init
            && self.compress_fpi.load(Ordering::Relaxed)
            && page_lsn(p) <= self.redo_ptr.load(Ordering::Acquire);
        thread_local! {
            static PACKED: std::cell::RefCell<record::CompressedFpi> = Default::default();
        }
        PACKED.with_borrow_mut(|packed| {
            if compress {
                record::compress_fpi(page, p, packed);
            }
            self.insert_page_change_locked(xid, page, p, rec, will_init, compress.then_some(packed))
        })
    }

    /// [`Wal::insert_page_change`] for a record that also carries changes
    /// to pages never logged as images (a `VmSet` carrying its heap page's
    /// `PD_ALL_VISIBLE` and its summary slot, `access::sumfork`). When
    /// `page` needs its image, the image would drop what the record
    /// carries, so `alone()` gives those changes as records of their own,
    /// which are logged first, and then the image, all under one hold of
    /// the insert lock (the decision is made under it, so a checkpoint
    /// cannot begin in between). Returns the end of the last record: the
    /// LSN for `page` and for the carried pages that take one.
    pub fn insert_page_change_carrying(
        &self,
        xid: Xid,
        page: PageRef,
        p: &[u8],
        rec: &HeapRecord,
        alone: &dyn Fn() -> Vec<(PageRef, HeapRecord)>,
    ) -> Lsn {
        let mut ins = self.ins();
        if page_lsn(p) > ins.redo {
            let prev = ins.prev;
            let len = record::encode_heap(&mut ins.buf, prev, xid, page, rec);
            let end = self.advance(&mut ins, len, xid);
            drop(ins);
            self.count(len, false);
            return end;
        }
        for (pg, r) in alone() {
            let prev = ins.prev;
            let len = record::encode_heap(&mut ins.buf, prev, xid, pg, &r);
            self.advance(&mut ins, len, xid);
            self.count(len, false);
        }
        let prev = ins.prev;
        let len = if self.compress_fpi.load(Ordering::Relaxed) {
            let mut c = record::CompressedFpi::default();
            record::compress_fpi(page, p, &mut c);
            record::encode_fpi_compressed(&mut ins.buf, prev, xid, page, p, &c)
        } else {
            record::encode_fpi(&mut ins.buf, prev, xid, page, p)
        };
        let end = self.advance(&mut ins, len, xid);
        drop(ins);
        self.count(len, true);
        end
    }

    /// Logs change `rec` to page `page` as the record itself, never as an
    /// image, whatever the page's LSN, and returns its end LSN, which the
    /// caller does *not* set on the page: for a change the page checksum
    /// leaves out (`PD_ALL_VISIBLE`; see `storage::checksum`), whose torn
    /// write needs no repair. The page's LSN then still says whether its
    /// next real change needs an image.
    pub fn insert_page_change_no_image(&self, xid: Xid, page: PageRef, rec: &HeapRecord) -> Lsn {
        let mut ins = self.ins();
        let prev = ins.prev;
        let len = record::encode_heap(&mut ins.buf, prev, xid, page, rec);
        let end = self.advance(&mut ins, len, xid);
        drop(ins);
        self.count(len, false);
        end
    }

    /// Logs B-tree change `rec` (already applied) to index page `page`
    /// whose bytes are `p` (its LSN still the one before the change): as
    /// [`Wal::insert_page_change`], the page's image instead when its LSN is
    /// at or before the redo point and the record does not rewrite the
    /// whole page. Returns the LSN to set on the page.
    pub fn insert_btree_change(
        &self,
        xid: Xid,
        page: PageRef,
        p: &[u8],
        rec: &crate::access::nbtree::BtRecord,
    ) -> Lsn {
        let mut ins = self.ins();
        let prev = ins.prev;
        let fpi = !super::btree::rewrites_page(rec) && page_lsn(p) <= ins.redo;
        let len = if fpi {
            record::encode_fpi(&mut ins.buf, prev, xid, page, p)
        } else {
            record::encode_btree(&mut ins.buf, prev, xid, page, rec)
        };
        let end = self.advance(&mut ins, len, xid);
        drop(ins);
        self.count(len, fpi);
        end
    }

    /// Logs the whole of page `page`, whose bytes are `p`, as a full-page
    /// image (LZ4-compressed with `wal_compression`, outside the insert
    /// lock), PostgreSQL's `log_newpage`: for a page built whole off the
    /// buffer pool and copied in (COPY's new pages), whose redo is the
    /// image itself. `packed`, when given, is `p` already compressed by
    /// [`record::compress_fpi`] (on another thread). Returns the LSN to set
    /// on the page.
    pub fn insert_page_image(
        &self,
        xid: Xid,
        page: PageRef,
        p: &[u8],
        packed: Option<&record::CompressedFpi>,
    ) -> Lsn {
        thread_local! {
            static PACKED: std::cell::RefCell<record::CompressedFpi> = Default::default();
        }
        let compress = packed.is_some() || self.compresses_images();
        PACKED.with_borrow_mut(|own| {
            let packed = match packed {
                Some(c) => c,
                None => {
                    if compress {
                        record::compress_fpi(page, p, own);
                    }
                    &*own
                }
            };
            let mut ins = self.ins();
            let prev = ins.prev;
            let len = if compress {
                record::encode_fpi_compressed(&mut ins.buf, prev, xid, page, p, packed)
            } else {
                record::encode_fpi(&mut ins.buf, prev, xid, page, p)
            };
            let end = self.advance(&mut ins, len, xid);
            drop(ins);
            self.count(len, true);
            end
        })
    }

    /// [`Wal::insert_page_image`] without compression, whatever
    /// `wal_compression` says: for pages whose image is cheaper to log
    /// whole than to compress (a B-tree build's pages: written once, read
    /// back only by redo; the hole between items and line pointers is left
    /// out as for every image).
    pub fn insert_page_image_plain(&self, xid: Xid, page: PageRef, p: &[u8]) -> Lsn {
        let mut ins = self.ins();
        let prev = ins.prev;
        let len = record::encode_fpi(&mut ins.buf, prev, xid, page, p);
        let end = self.advance(&mut ins, len, xid);
        drop(ins);
        self.count(len, true);
        end
    }

    /// Whether full-page images are compressed (`wal_compression`).
    pub fn compresses_images(&self) -> bool {
        self.compress_fpi.load(Ordering::Relaxed)
    }

    /// [`Wal::insert_page_change`] under the insert lock, with the page's
    /// image already compressed when `packed` is given.
    fn insert_page_change_locked(
        &self,
        xid: Xid,
        page: PageRef,
        p: &[u8],
        rec: &HeapRecord,
        will_init: bool,
        packed: Option<&mut record::CompressedFpi>,
    ) -> Lsn {
        let mut ins = self.ins();
        let prev = ins.prev;
        let fpi = !will_init && page_lsn(p) <= ins.redo;
        let len = if fpi {
            match packed {
                Some(c) => record::encode_fpi_compressed(&mut ins.buf, prev, xid, page, p, c),
                // A checkpoint began since the check above, or compression is off.
                None if self.compress_fpi.load(Ordering::Relaxed) => {
                    let mut c = record::CompressedFpi::default();
                    record::compress_fpi(page, p, &mut c);
                    record::encode_fpi_compressed(&mut ins.buf, prev, xid, page, p, &c)
                }
                None => record::encode_fpi(&mut ins.buf, prev, xid, page, p),
            }
        } else {
            record::encode_heap(&mut ins.buf, prev, xid, page, rec)
        };
        let end = self.advance(&mut ins, len, xid);
        drop(ins);
        self.count(len, fpi);
        end
    }

    /// Called after an insert: past [`WRITE_AHEAD_BYTES`] wakes the
    /// background writer to write the buffer out; past [`WRITE_SELF_BYTES`]
    /// (or with no background writer) writes it out itself.
    pub fn write_if_full(&self) -> Result<()> {
        let buffered = self.buffered.load(Ordering::Relaxed);
        if buffered < WRITE_AHEAD_BYTES {
            return Ok(());
        }
        if buffered < WRITE_SELF_BYTES {
            if let Some(t) = &*self
                .writer_thread
                .lock()
                .expect("WAL writer mutex poisoned")
            {
                t.unpark();
                return Ok(());
            }
        }
        self.write_out(false).map(|_| ())
    }

    /// Puts the log in the failed state with `e` (the first error is kept:
    /// see the module doc) and returns it.
    pub fn fail(&self, e: Error) -> Error {
        let _ = self.failure.set(e.clone());
        self.failed.store(true, Ordering::Release);
        e
    }

    /// Whether a flush failed: every later statement is refused.
    #[inline]
    pub fn is_failed(&self) -> bool {
        self.failed.load(Ordering::Acquire)
    }

    /// `Ok` unless a flush failed; then the error every later write,
    /// flush and statement gets: the failure's own text and SQLSTATE.
    #[inline]
    pub fn healthy(&self) -> Result<()> {
        if !self.is_failed() {
            return Ok(());
        }
        let mut e = self
            .failure
            .get()
            .cloned()
            .unwrap_or_else(|| Error::internal("the write-ahead log failed"));
        e.detail = Some(
            "A write of the write-ahead log failed; this database instance stopped, \
             so that nothing can see changes whose commit record may not be on disk."
                .into(),
        );
        e.hint = Some("Reopen the database: recovery decides from what is on disk.".into());
        Err(e)
    }

    /// Writes everything inserted so far and, with `sync`, makes it
    /// durable. Returns the position written up to.
    fn write_out(&self, sync: bool) -> Result<Lsn> {
        self.healthy()?;
        let mut io = self.io();
        let io = &mut *io;
        let start = {
            let mut ins = self.ins();
            std::mem::swap(&mut ins.buf, &mut io.spare);
            let start = ins.buf_start;
            ins.buf_start = ins.pos;
            self.buffered.store(0, Ordering::Relaxed);
            start
        };
        debug_assert_eq!(start, io.written);
        let mut data = std::mem::take(&mut io.spare);
        let res = io.files.write(start, &data);
        if let Err(e) = res {
            // Put the bytes back in front of whatever was inserted since.
            let mut ins = self.ins();
            data.extend_from_slice(&ins.buf);
            ins.buf = data;
            ins.buf_start = start;
            return Err(e);
        }
        io.written = start + data.len() as u64;
        data.clear();
        io.spare = data;
        if sync {
            io.files.sync()?;
            self.counters.flushes.fetch_add(1, Ordering::Relaxed);
        }
        Ok(io.written)
    }

    /// Makes the log durable up to `upto` (group commit: see module doc).
    pub fn flush(&self, upto: Lsn) -> Result<()> {
        // Failed: not even a page whose LSN is flushed may be written (its
        // hint bits may come from a transaction whose commit failed).
        self.healthy()?;
        if self.flushed.load(Ordering::Acquire) >= upto {
            return Ok(());
        }
        let mut fs = self.flush.lock().expect("WAL flush mutex poisoned");
        loop {
            if fs.flushed >= upto {
                return Ok(());
            }
            if fs.leader {
                fs = self.flushed_cv.wait(fs).expect("WAL flush mutex poisoned");
                continue;
            }
            fs.leader = true;
            drop(fs);
            // A failed flush stops the instance before any waiter can
            // retry it (see the module doc).
            let res = self.write_out(true).map_err(|e| match self.is_failed() {
                true => e,
                false => self.fail(e),
            });
            fs = self.flush.lock().expect("WAL flush mutex poisoned");
            fs.leader = false;
            self.flushed_cv.notify_all();
            let done = res?;
            if done > fs.flushed {
                fs.flushed = done;
                self.flushed.store(done, Ordering::Release);
            }
        }
    }

    /// Asks the background writer to flush everything inserted so far, and
    /// returns at once (without a background writer: does nothing). The
    /// buffer pool's bulk-write and vacuum rings ask ahead, so the pages they
    /// are about to write need no flush by then (`storage::ring`).
    pub fn request_flush(&self) {
        let upto = self.insert_lsn();
        if self.flushed_lsn() >= upto
            || self.flush_request.fetch_max(upto, Ordering::AcqRel) >= upto
        {
            return;
        }
        if let Some(t) = &*self
            .writer_thread
            .lock()
            .expect("WAL writer mutex poisoned")
        {
            t.unpark();
        }
    }

    /// Flushes everything inserted so far.
    pub fn flush_all(&self) -> Result<()> {
        self.flush(self.insert_lsn())
    }

    /// Where the next record goes.
    pub fn insert_lsn(&self) -> Lsn {
        self.insert_pos.load(Ordering::Relaxed)
    }

    /// Durable up to here.
    pub fn flushed_lsn(&self) -> Lsn {
        self.flushed.load(Ordering::Acquire)
    }

    /// The shared flushed position (for the commit log's hint rule).
    pub fn flushed_handle(&self) -> Arc<AtomicU64> {
        Arc::clone(&self.flushed)
    }

    /// The redo pointer in effect.
    pub fn redo_lsn(&self) -> Lsn {
        self.redo_ptr.load(Ordering::Acquire)
    }

    /// Starts a checkpoint: the current insert position becomes the redo
    /// point (first changes after it log full pages). Returns it and the
    /// transactions that logged changes before it but no outcome yet, in
    /// order: redo from this point cannot tell they wrote anything, so the
    /// checkpoint record names them and recovery aborts those whose commit
    /// never reached the log (an asynchronous commit's commit-log entry can
    /// reach disk before its commit record does).
    ///
    /// The files such transactions created are named by create records
    /// before the redo point, which recovery from it never reads: each is
    /// logged again right after the redo point, under its transaction, so
    /// that recovery removes the file when the transaction has no outcome
    /// (a CREATE INDEX or REINDEX cut off by a crash after a checkpoint
    /// began during it), as the first record would have.
    pub fn begin_checkpoint(&self) -> (Lsn, Vec<Xid>) {
        let mut ins = self.ins();
        ins.redo = ins.pos;
        let redo = ins.pos;
        self.redo_ptr.store(redo, Ordering::Release);
        let mut open: Vec<Xid> = ins.logged.iter().copied().collect();
        open.sort_unstable();
        for (xid, rel) in std::mem::take(&mut ins.created) {
            let prev = ins.prev;
            let len = record::encode(&mut ins.buf, prev, xid, &WalRecord::CreateRel { rel });
            self.advance(&mut ins, len, xid);
            ins.created.push((xid, rel));
            self.count(len, false);
        }
        (redo, open)
    }

    /// Removes segment files no longer needed once `redo` is the recorded
    /// redo point.
    pub fn remove_old_segments(&self, redo: Lsn) -> Result<usize> {
        self.io().files.remove_before(redo)
    }

    /// Whether `xid` inserted a record and not yet its commit or abort
    /// record (asked at its end: it then needs one). [`Wal::insert`] of that
    /// record forgets it.
    pub fn has_logged(&self, xid: Xid) -> bool {
        self.ins().logged.contains(&xid)
    }

    /// The counters and positions.
    pub fn stats(&self) -> WalStats {
        let c = &self.counters;
        WalStats {
            insert_lsn: self.insert_lsn(),
            flush_lsn: self.flushed_lsn(),
            redo_lsn: self.redo_lsn(),
            records: c.records.load(Ordering::Relaxed),
            fpis: c.fpis.load(Ordering::Relaxed),
            bytes: c.bytes.load(Ordering::Relaxed),
            flushes: c.flushes.load(Ordering::Relaxed),
            checkpoints: c.checkpoints.load(Ordering::Relaxed),
        }
    }

    /// Starts the background writer: it writes the insert buffer out when
    /// inserters wake it (the buffer passed [`WRITE_AHEAD_BYTES`]), and every
    /// [`BACKGROUND_FLUSH_INTERVAL`] flushes whatever asynchronous commits
    /// left unflushed; and it flushes as far as [`Wal::request_flush`] asked.
    /// It stops when [`Wal::stop_background`] is called.
    pub fn start_background_flusher(self: &Arc<Wal>) -> std::thread::JoinHandle<()> {
        let wal = Arc::clone(self);
        let handle = std::thread::Builder::new()
            .name("heapdb-walwriter".into())
            .spawn(move || {
                let mut last_flush = std::time::Instant::now();
                while !wal.stop.load(Ordering::Acquire) {
                    if wal.is_failed() {
                        // Nothing may be written any more (module doc).
                        std::thread::park_timeout(BACKGROUND_FLUSH_INTERVAL);
                        continue;
                    }
                    if wal.flush_request.load(Ordering::Acquire) <= wal.flushed_lsn() {
                        std::thread::park_timeout(BACKGROUND_FLUSH_INTERVAL);
                    }
                    let requested = wal.flush_request.load(Ordering::Acquire);
                    let res = if requested > wal.flushed_lsn() {
                        wal.flush(requested)
                    } else if last_flush.elapsed() >= BACKGROUND_FLUSH_INTERVAL {
                        last_flush = std::time::Instant::now();
                        if wal.flushed_lsn() < wal.insert_lsn() {
                            wal.flush_all()
                        } else {
                            Ok(())
                        }
                    } else if wal.buffered.load(Ordering::Relaxed) >= WRITE_AHEAD_BYTES {
                        wal.write_out(false).map(|_| ())
                    } else {
                        Ok(())
                    };
                    if let Err(e) = res {
                        eprintln!("heapdb: WAL writer: {e}");
                    }
                }
            })
            .expect("spawning the WAL writer thread");
        *self
            .writer_thread
            .lock()
            .expect("WAL writer mutex poisoned") = Some(handle.thread().clone());
        handle
    }

    /// Asks background threads to stop (they notice within their interval;
    /// unpark them to stop at once).
    pub fn stop_background(&self) {
        self.stop.store(true, Ordering::Release);
        *self
            .writer_thread
            .lock()
            .expect("WAL writer mutex poisoned") = None;
    }

    /// Whether background threads were asked to stop.
    pub fn stopping(&self) -> bool {
        self.stop.load(Ordering::Acquire)
    }
}

/// The buffer pool's write-ahead rule: flush the log up to a page's LSN
/// before writing the page.
impl WalFlushHook for Wal {
    fn flush(&self, lsn: u64) -> Result<()> {
        Wal::flush(self, lsn)
    }

    fn flushed_lsn(&self) -> u64 {
        Wal::flushed_lsn(self)
    }

    fn request_flush(&self) {
        Wal::request_flush(self)
    }
}
