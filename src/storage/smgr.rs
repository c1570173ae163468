//! Relation segment files: a relation fork's blocks on disk.
//!
//! Each fork of a relation is a sequence of 1 GiB segment files
//! ([`RELSEG_SIZE`] blocks each) under `<data_dir>/base/`: `base/<n>`,
//! `base/<n>.1`, `base/<n>.2`, ... for the main fork and `base/<n>_vm`,
//! `base/<n>_vm.1`, ... for the visibility map. Blocks are read and written
//! whole with `pread`/`pwrite` at `(block % RELSEG_SIZE) * BLCKSZ` in segment
//! `block / RELSEG_SIZE`.
//!
//! # Logical size
//!
//! The storage manager keeps each open fork's size in blocks (`nblocks`). It
//! starts as the size found on disk and grows when the buffer pool extends
//! the fork; the file itself grows only when the new block is written (the
//! buffer pool marks extended blocks dirty, so they are written at eviction
//! or at the next flush). A block below `nblocks` that is not (yet) in the
//! file reads as zeros: a valid new page. Not writing zeros at extension
//! halves the I/O of bulk loads, whose pages are written once, full.
//! On reopening, the size is recomputed from the segment files: the index of
//! the last existing segment times [`RELSEG_SIZE`] plus its length.
//!
//! # Directory entries
//!
//! A file's creation or removal is durable only once its directory is
//! fsynced (PostgreSQL's `fsync_fname` on the parent). [`Smgr::create`],
//! [`Smgr::unlink`] and a [`Smgr::truncate`] that removes segments fsync
//! `base/` before they return (with `fsync` on), so a crash cannot bring
//! back an unlinked file or lose a created one whose unlogged contents a
//! commit relies on; a segment file created by a write makes the next sync
//! of its fork fsync the directory as well.
//!
//! # Locking
//!
//! `Smgr::forks` (the open-file table) is a read-mostly `RwLock`; each fork's
//! segment list has its own `RwLock`, taken for writing only to open or
//! create a segment or to truncate. `nblocks` is atomic; callers that extend
//! a fork serialise among themselves (the buffer pool's extension lock).
//! Reads and writes of different blocks proceed in parallel (`pread` and
//! `pwrite` take no file-position lock).

use std::collections::HashMap;
use std::fs::{self, File, OpenOptions};
use std::io::ErrorKind;
use std::os::unix::fs::FileExt;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::RwLock;

use super::{relpath, BlockNumber, ForkNumber, RelFileNode, BLCKSZ};
use crate::error::{Error, Result, SqlState};

/// Blocks per segment file: 131072 blocks of 8 KiB = 1 GiB, as PostgreSQL.
pub const RELSEG_SIZE: u32 = 131072;

/// One open segment file.
struct Segment {
    /// The open file (read-write).
    file: File,
    /// Set by every write, cleared by fsync: whether the segment needs one.
    needs_sync: AtomicBool,
}

/// One open relation fork: its segments and its logical size.
struct RelFork {
    /// Path relative to the data directory, for messages (`base/16384`).
    name: String,
    /// Absolute path of the first segment; segment `i > 0` adds `.i`.
    path: PathBuf,
    /// Open segments, index = segment number. May be shorter than the
    /// logical size needs (blocks in missing segments read as zeros).
    segs: RwLock<Vec<Arc<Segment>>>,
    /// The fork's size in blocks (see the module doc).
    nblocks: AtomicU32,
    /// Blocks whose space is allocated on disk (file length, plus what
    /// [`Smgr::reserve`] allocated beyond it).
    reserved: AtomicU32,
    /// A segment file was created since the last sync: the next sync
    /// fsyncs the directory too.
    new_segment: AtomicBool,
}

impl RelFork {
    /// The file name of segment `segno`, relative to the data directory.
    fn seg_name(&self, segno: u32) -> String {
        if segno == 0 {
            self.name.clone()
        } else {
            format!("{}.{}", self.name, segno)
        }
    }

    /// The absolute path of segment `segno`.
    fn seg_path(&self, segno: u32) -> PathBuf {
        if segno == 0 {
            self.path.clone()
        } else {
            let mut p = self.path.clone().into_os_string();
            p.push(format!(".{segno}"));
            PathBuf::from(p)
        }
    }

    /// The open segment `segno`, if it exists (opening it if it exists on disk
    /// but is not open yet).
    fn segment(&self, segno: u32) -> Result<Option<Arc<Segment>>> {
        if let Some(seg) = self.segs.read().get(segno as usize) {
            return Ok(Some(seg.clone()));
        }
        let mut segs = self.segs.write();
        while segs.len() <= segno as usize {
            let n = segs.len() as u32;
            match OpenOptions::new()
                .read(true)
                .write(true)
                .open(self.seg_path(n))
            {
                Ok(file) => segs.push(Arc::new(Segment {
                    file,
                    needs_sync: AtomicBool::new(false),
                })),
                Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
                Err(e) => {
                    return Err(io_error(
                        e,
                        &format!("could not open file \"{}\"", self.seg_name(n)),
                    ))
                }
            }
        }
        Ok(Some(segs[segno as usize].clone()))
    }

    /// Segment `segno`, creating it and any missing segments before it.
    fn segment_for_write(&self, segno: u32) -> Result<Arc<Segment>> {
        if let Some(seg) = self.segment(segno)? {
            return Ok(seg);
        }
        let mut segs = self.segs.write();
        while segs.len() <= segno as usize {
            let n = segs.len() as u32;
            let file = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(self.seg_path(n))
                .map_err(|e| {
                    io_error(
                        e,
                        &format!("could not create file \"{}\"", self.seg_name(n)),
                    )
                })?;
            segs.push(Arc::new(Segment {
                file,
                needs_sync: AtomicBool::new(true),
            }));
            self.new_segment.store(true, Ordering::Release);
        }
        Ok(segs[segno as usize].clone())
    }
}

/// Wraps an I/O error with PostgreSQL's wording: `could not ...: <os message>`.
fn io_error(e: std::io::Error, what: &str) -> Error {
    let code = super::reserve::code_of(&e);
    Error::new(code, format!("{what}: {}", super::reserve::os_text(&e)))
}

/// The fork map's hasher: its keys are a relation number and a fork, so a
/// multiply-rotate mix (FxHash's) spreads them; SipHash, which resists
/// chosen keys no user picks here, was a sixth of a buffer read's lookup.
type ForkKeys = std::hash::BuildHasherDefault<ForkKeyHasher>;

/// The hasher of [`ForkKeys`].
#[derive(Default)]
struct ForkKeyHasher(u64);

impl std::hash::Hasher for ForkKeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u8(&mut self, n: u8) {
        self.write_u64(u64::from(n));
    }

    fn write_u32(&mut self, n: u32) {
        self.write_u64(u64::from(n));
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }

    fn write_isize(&mut self, n: isize) {
        self.write_u64(n as u64);
    }
}

/// The storage manager: the open relation files of one data directory.
pub struct Smgr {
    /// `<data_dir>/base`.
    base: PathBuf,
    /// Whether to fsync at all (PostgreSQL's `fsync` setting; off only for
    /// tests and benchmarks that do not care about surviving an OS crash).
    fsync: AtomicBool,
    /// Open forks by relation and fork.
    forks: RwLock<HashMap<(RelFileNode, ForkNumber), Arc<RelFork>, ForkKeys>>,
    /// fsyncs of `base/` so far (see the module doc; for tests).
    dir_syncs: AtomicU64,
}

impl Smgr {
    /// Opens the storage manager over `data_dir`, creating `data_dir/base`.
    pub fn open(data_dir: &Path) -> Result<Smgr> {
        let base = data_dir.join("base");
        fs::create_dir_all(&base).map_err(|e| {
            io_error(
                e,
                &format!("could not create directory \"{}\"", base.display()),
            )
        })?;
        Ok(Smgr {
            base,
            fsync: AtomicBool::new(true),
            forks: RwLock::new(HashMap::default()),
            dir_syncs: AtomicU64::new(0),
        })
    }

    /// The absolute path of a fork's first segment.
    fn path(&self, rel: RelFileNode, fork: ForkNumber) -> PathBuf {
        self.base.join(format!("{}{}", rel.0, fork.suffix()))
    }

    /// The open fork, opening it (and measuring its size) on first use.
    fn fork(&self, rel: RelFileNode, fork: ForkNumber) -> Result<Arc<RelFork>> {
        if let Some(f) = self.forks.read().get(&(rel, fork)) {
            return Ok(f.clone());
        }
        let mut forks = self.forks.write();
        if let Some(f) = forks.get(&(rel, fork)) {
            return Ok(f.clone());
        }
        let rf = RelFork {
            name: relpath(rel, fork),
            path: self.path(rel, fork),
            segs: RwLock::new(Vec::new()),
            nblocks: AtomicU32::new(0),
            reserved: AtomicU32::new(0),
            new_segment: AtomicBool::new(false),
        };
        let Some(_) = rf.segment(0)? else {
            return Err(Error::new(
                SqlState::UndefinedFile,
                format!(
                    "could not open file \"{}\": No such file or directory",
                    rf.name
                ),
            ));
        };
        // Open every existing segment; the size is that of the last one.
        let mut segno = 1;
        while rf.segment(segno)?.is_some() {
            segno += 1;
        }
        let last = rf.segs.read()[segno as usize - 1].clone();
        let len = last
            .file
            .metadata()
            .map_err(|e| {
                io_error(
                    e,
                    &format!("could not stat file \"{}\"", rf.seg_name(segno - 1)),
                )
            })?
            .len();
        let blocks = (segno as u64 - 1) * RELSEG_SIZE as u64 + len.div_ceil(BLCKSZ as u64);
        let blocks = blocks.min(super::MAX_BLOCKS as u64) as u32;
        rf.nblocks.store(blocks, Ordering::Release);
        rf.reserved.store(blocks, Ordering::Release);
        let rf = Arc::new(rf);
        forks.insert((rel, fork), rf.clone());
        Ok(rf)
    }

    /// Whether the fork's first segment exists.
    pub fn exists(&self, rel: RelFileNode, fork: ForkNumber) -> bool {
        self.forks.read().contains_key(&(rel, fork)) || self.path(rel, fork).exists()
    }

    /// Creates an empty fork. Fails if its file exists already.
    pub fn create(&self, rel: RelFileNode, fork: ForkNumber) -> Result<()> {
        let path = self.path(rel, fork);
        OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(|e| {
                io_error(
                    e,
                    &format!("could not create file \"{}\"", relpath(rel, fork)),
                )
            })?;
        self.forks.write().remove(&(rel, fork));
        self.sync_dir()
    }

    /// fsyncs `base/` (with `fsync` on), making file creations and
    /// removals in it durable (see the module doc).
    fn sync_dir(&self) -> Result<()> {
        if !self.fsync_on() {
            return Ok(());
        }
        self.dir_syncs.fetch_add(1, Ordering::Relaxed);
        sync_directory(&self.base)
    }

    /// How many times `base/` was fsynced (tests check that creations and
    /// removals do it).
    pub fn dir_syncs(&self) -> u64 {
        self.dir_syncs.load(Ordering::Relaxed)
    }

    /// The fork's size in blocks.
    pub fn nblocks(&self, rel: RelFileNode, fork: ForkNumber) -> Result<BlockNumber> {
        Ok(self.fork(rel, fork)?.nblocks.load(Ordering::Acquire))
    }

    /// Raises the fork's logical size to at least `nblocks` (extension; see the
    /// module doc). The caller serialises extensions of one fork.
    pub fn set_nblocks_at_least(
        &self,
        rel: RelFileNode,
        fork: ForkNumber,
        nblocks: BlockNumber,
    ) -> Result<()> {
        self.fork(rel, fork)?
            .nblocks
            .fetch_max(nblocks, Ordering::AcqRel);
        Ok(())
    }

    /// Makes sure the disk has space for the fork's first `nblocks` blocks
    /// before the buffer pool extends it (PostgreSQL's `mdzeroextend`):
    /// allocates it beyond the file's end without changing the file's
    /// length (`storage::reserve`), a run ahead at a time (an eighth of
    /// the fork, 8 to 128 blocks) so bulk loads make one call per run. A
    /// full disk fails here, in the statement that needs the space, with
    /// `could not extend file "...": No space left on device` (53100),
    /// never later when the dirty page is written. The caller serialises
    /// extensions of the fork.
    pub fn reserve(&self, rel: RelFileNode, fork: ForkNumber, nblocks: BlockNumber) -> Result<()> {
        let rf = self.fork(rel, fork)?;
        let have = rf.reserved.load(Ordering::Acquire);
        if nblocks <= have {
            return Ok(());
        }
        let ahead = (nblocks / 8).clamp(8, 128);
        let want = nblocks.saturating_add(ahead).min(super::MAX_BLOCKS);
        if allocate_blocks(&rf, have, want).is_err() {
            // Not room for the run ahead: for what is needed now, then.
            allocate_blocks(&rf, have, nblocks).map_err(|(segno, e)| {
                io_error(
                    e,
                    &format!("could not extend file \"{}\"", rf.seg_name(segno)),
                )
                .with_hint("Check free disk space.")
            })?;
            rf.reserved.fetch_max(nblocks, Ordering::AcqRel);
            return Ok(());
        }
        rf.reserved.fetch_max(want, Ordering::AcqRel);
        Ok(())
    }

    /// Grows the fork to at least `nblocks` blocks *on disk* (sparsely: the
    /// new blocks read as zeros), for extensions not backed by a dirty buffer
    /// (redo writing beyond the end). The caller serialises extensions.
    pub fn extend_file_to(
        &self,
        rel: RelFileNode,
        fork: ForkNumber,
        nblocks: BlockNumber,
    ) -> Result<()> {
        let rf = self.fork(rel, fork)?;
        if nblocks > rf.nblocks.load(Ordering::Acquire) {
            set_physical_size(&rf, nblocks)?;
            rf.nblocks.fetch_max(nblocks, Ordering::AcqRel);
        }
        Ok(())
    }

    /// Reads block `block` into `buf` (BLCKSZ bytes). A block below the fork's
    /// size that is not in the file reads as zeros; a block at or beyond the
    /// size is an error.
    pub fn read(
        &self,
        rel: RelFileNode,
        fork: ForkNumber,
        block: BlockNumber,
        buf: &mut [u8],
    ) -> Result<()> {
        debug_assert_eq!(buf.len(), BLCKSZ);
        let rf = self.fork(rel, fork)?;
        let nblocks = rf.nblocks.load(Ordering::Acquire);
        let segno = block / RELSEG_SIZE;
        let mut done = 0;
        if let Some(seg) = rf.segment(segno)? {
            let off = (block % RELSEG_SIZE) as u64 * BLCKSZ as u64;
            while done < BLCKSZ {
                match seg.file.read_at(&mut buf[done..], off + done as u64) {
                    Ok(0) => break,
                    Ok(n) => done += n,
                    Err(e) if e.kind() == ErrorKind::Interrupted => {}
                    Err(e) => {
                        return Err(io_error(
                            e,
                            &format!(
                                "could not read block {block} in file \"{}\"",
                                rf.seg_name(segno)
                            ),
                        ))
                    }
                }
            }
        }
        if done < BLCKSZ {
            if block >= nblocks {
                return Err(Error::new(
                    SqlState::DataCorrupted,
                    format!(
                        "could not read block {block} in file \"{}\": read only {done} of {BLCKSZ} bytes",
                        rf.seg_name(segno)
                    ),
                ));
            }
            buf[done..].fill(0);
        }
        Ok(())
    }

    /// Reads consecutive blocks from `block` on into `pages` (each BLCKSZ
    /// bytes) with one `preadv`, all in one segment (the caller stops a run
    /// at a segment boundary). What the one call does not deliver (a file
    /// shorter than the fork, an interrupted or short read) is read block by
    /// block through [`Smgr::read`], with its zeros and errors.
    pub fn read_blocks(
        &self,
        rel: RelFileNode,
        fork: ForkNumber,
        block: BlockNumber,
        pages: &mut [&mut [u8]],
    ) -> Result<()> {
        let n = pages.len() as BlockNumber;
        assert!(
            (1..=64).contains(&n)
                && block % RELSEG_SIZE + n <= RELSEG_SIZE
                && pages.iter().all(|p| p.len() == BLCKSZ),
            "a read of whole pages within one segment"
        );
        let rf = self.fork(rel, fork)?;
        let mut done = 0usize;
        if let Some(seg) = rf.segment(block / RELSEG_SIZE)? {
            let mut iov = [libc::iovec {
                iov_base: std::ptr::null_mut(),
                iov_len: 0,
            }; 64];
            for (v, p) in iov.iter_mut().zip(pages.iter_mut()) {
                v.iov_base = p.as_mut_ptr().cast();
                v.iov_len = BLCKSZ;
            }
            let off = (block % RELSEG_SIZE) as i64 * BLCKSZ as i64;
            // SAFETY: the iovecs point at `n` live, exclusively borrowed
            // pages of BLCKSZ bytes; the descriptor is open.
            let r = unsafe { libc::preadv(seg.file.as_raw_fd(), iov.as_ptr(), n as i32, off) };
            done = r.max(0) as usize;
        }
        let whole = done / BLCKSZ;
        for (k, page) in pages.iter_mut().enumerate().skip(whole) {
            self.read(rel, fork, block + k as BlockNumber, page)?;
        }
        Ok(())
    }

    /// Writes `buf` (BLCKSZ bytes) as block `block`, growing the file (and the
    /// fork's size) as needed.
    pub fn write(
        &self,
        rel: RelFileNode,
        fork: ForkNumber,
        block: BlockNumber,
        buf: &[u8],
    ) -> Result<()> {
        debug_assert_eq!(buf.len(), BLCKSZ);
        self.write_blocks(rel, fork, block, buf)
    }

    /// Writes consecutive blocks from `block` on with one `pwrite`: `buf`
    /// is a whole number of pages, all in one segment (the caller stops a
    /// run at a segment boundary).
    pub fn write_blocks(
        &self,
        rel: RelFileNode,
        fork: ForkNumber,
        block: BlockNumber,
        buf: &[u8],
    ) -> Result<()> {
        let n = (buf.len() / BLCKSZ) as BlockNumber;
        assert!(
            n >= 1 && buf.len() % BLCKSZ == 0 && block % RELSEG_SIZE + n <= RELSEG_SIZE,
            "a write of whole pages within one segment"
        );
        let rf = self.fork(rel, fork)?;
        let segno = block / RELSEG_SIZE;
        let seg = rf.segment_for_write(segno)?;
        let off = (block % RELSEG_SIZE) as u64 * BLCKSZ as u64;
        seg.file.write_all_at(buf, off).map_err(|e| {
            io_error(
                e,
                &format!(
                    "could not write block {block} in file \"{}\"",
                    rf.seg_name(segno)
                ),
            )
        })?;
        seg.needs_sync.store(true, Ordering::Release);
        rf.nblocks.fetch_max(block + n, Ordering::AcqRel);
        Ok(())
    }

    /// Writes consecutive blocks from `block` on from `pages` (each BLCKSZ
    /// bytes, anywhere in memory) with one `pwritev`, all in one segment
    /// (the caller stops a run at a segment boundary): [`Smgr::write_blocks`]
    /// without first gathering the pages into one buffer. What the call
    /// does not write (a short or interrupted write) is written after it
    /// with [`Smgr::write_blocks`], page by page.
    pub fn write_pages(
        &self,
        rel: RelFileNode,
        fork: ForkNumber,
        block: BlockNumber,
        pages: &[&[u8]],
    ) -> Result<()> {
        let n = pages.len();
        assert!(
            (1..=64).contains(&n)
                && block % RELSEG_SIZE + n as BlockNumber <= RELSEG_SIZE
                && pages.iter().all(|p| p.len() == BLCKSZ),
            "a write of whole pages within one segment"
        );
        let rf = self.fork(rel, fork)?;
        let segno = block / RELSEG_SIZE;
        let seg = rf.segment_for_write(segno)?;
        let mut iov = [libc::iovec {
            iov_base: std::ptr::null_mut(),
            iov_len: 0,
        }; 64];
        for (v, p) in iov.iter_mut().zip(pages) {
            v.iov_base = p.as_ptr() as *mut libc::c_void;
            v.iov_len = BLCKSZ;
        }
        let off = (block % RELSEG_SIZE) as i64 * BLCKSZ as i64;
        // SAFETY: the iovecs point at `n` live pages of BLCKSZ bytes, which
        // `pwritev` only reads; the descriptor is open.
        let r = unsafe { libc::pwritev(seg.file.as_raw_fd(), iov.as_ptr(), n as i32, off) };
        let done = r.max(0) as usize;
        seg.needs_sync.store(true, Ordering::Release);
        rf.nblocks
            .fetch_max(block + (done / BLCKSZ) as BlockNumber, Ordering::AcqRel);
        if done < n * BLCKSZ {
            // The rest, a page at a time (a partly written page again
            // whole), with write_blocks' errors.
            for (k, page) in pages.iter().enumerate().skip(done / BLCKSZ) {
                self.write_blocks(rel, fork, block + k as BlockNumber, page)?;
            }
        }
        Ok(())
    }

    /// Cuts the fork down to `nblocks` blocks: later segments are removed and
    /// the last one shortened. The caller has discarded the buffers of the
    /// removed blocks first.
    pub fn truncate(&self, rel: RelFileNode, fork: ForkNumber, nblocks: BlockNumber) -> Result<()> {
        let rf = self.fork(rel, fork)?;
        let mut segs = rf.segs.write();
        // Open every segment on disk, so none is left behind.
        drop(segs);
        let mut segno = 0;
        while rf.segment(segno)?.is_some() {
            segno += 1;
        }
        segs = rf.segs.write();
        let keep_segs = if nblocks == 0 {
            1
        } else {
            nblocks.div_ceil(RELSEG_SIZE)
        } as usize;
        let removed = segs.len() > keep_segs;
        while segs.len() > keep_segs {
            let n = segs.len() as u32 - 1;
            segs.pop();
            fs::remove_file(rf.seg_path(n)).map_err(|e| {
                io_error(e, &format!("could not remove file \"{}\"", rf.seg_name(n)))
            })?;
        }
        drop(segs);
        if removed {
            self.sync_dir()?;
        }
        set_physical_size(&rf, nblocks)?;
        rf.nblocks.store(nblocks, Ordering::Release);
        rf.reserved.store(nblocks, Ordering::Release);
        Ok(())
    }

    /// Removes every segment of every fork of `rel` and forgets the open files.
    pub fn unlink(&self, rel: RelFileNode) -> Result<()> {
        let mut removed = false;
        let mut forks = self.forks.write();
        for fork in ForkNumber::ALL {
            forks.remove(&(rel, fork));
            let first = self.path(rel, fork);
            let mut segno = 0u32;
            loop {
                let path = if segno == 0 {
                    first.clone()
                } else {
                    let mut p = first.clone().into_os_string();
                    p.push(format!(".{segno}"));
                    PathBuf::from(p)
                };
                match fs::remove_file(&path) {
                    Ok(()) => {
                        removed = true;
                        segno += 1;
                    }
                    Err(e) if e.kind() == ErrorKind::NotFound => break,
                    Err(e) => {
                        return Err(io_error(
                            e,
                            &format!("could not remove file \"{}\"", path.display()),
                        ));
                    }
                }
            }
        }
        drop(forks);
        if removed {
            self.sync_dir()?;
        }
        Ok(())
    }

    /// Turns fsync on or off (see the `fsync` field).
    pub fn set_fsync(&self, on: bool) {
        self.fsync.store(on, Ordering::Relaxed);
    }

    /// Whether fsync is on.
    fn fsync_on(&self) -> bool {
        self.fsync.load(Ordering::Relaxed)
    }

    /// fsyncs the segments of one fork that were written since their last sync.
    pub fn sync(&self, rel: RelFileNode, fork: ForkNumber) -> Result<()> {
        if !self.fsync_on() {
            return Ok(());
        }
        let rf = self.fork(rel, fork)?;
        sync_fork(&rf)?;
        if rf.new_segment.swap(false, Ordering::AcqRel) {
            self.sync_dir()?;
        }
        Ok(())
    }

    /// fsyncs every written segment of every open fork, then the `base`
    /// directory (so newly created files are durable too).
    pub fn sync_all(&self) -> Result<()> {
        if !self.fsync_on() {
            return Ok(());
        }
        let forks: Vec<Arc<RelFork>> = self.forks.read().values().cloned().collect();
        for rf in &forks {
            sync_fork(rf)?;
            rf.new_segment.store(false, Ordering::Release);
        }
        if let Ok(dir) = File::open(&self.base) {
            // Directory fsync is best effort: not every filesystem supports it.
            let _ = dir.sync_all();
        }
        Ok(())
    }

    /// Asks the OS to start writing back blocks `block..block + count` of a
    /// fork, written earlier and still dirty in its cache
    /// (`sync_file_range(SYNC_FILE_RANGE_WRITE)`, as PostgreSQL's
    /// `checkpoint_flush_after`), so that the disk works while the caller
    /// writes on and the fsync after finds less to wait for. A hint only:
    /// nothing is done with fsync off, and errors are ignored (the fsync
    /// reports any that matter).
    pub fn writeback(&self, rel: RelFileNode, fork: ForkNumber, block: BlockNumber, count: u32) {
        if !self.fsync_on() {
            return;
        }
        let Ok(rf) = self.fork(rel, fork) else {
            return;
        };
        let end = block.saturating_add(count);
        let mut b = block;
        while b < end {
            let segno = b / RELSEG_SIZE;
            let seg_end = ((segno as u64 + 1) * RELSEG_SIZE as u64).min(end as u64) as u32;
            if let Ok(Some(seg)) = rf.segment(segno) {
                let off = (b % RELSEG_SIZE) as i64 * BLCKSZ as i64;
                let len = (seg_end - b) as i64 * BLCKSZ as i64;
                // SAFETY: plain syscall on an open descriptor; it starts
                // write-back and changes no contents.
                unsafe {
                    libc::sync_file_range(
                        seg.file.as_raw_fd(),
                        off,
                        len,
                        libc::SYNC_FILE_RANGE_WRITE,
                    );
                }
            }
            b = seg_end;
        }
    }

    /// Asks the OS to read `count` blocks from `block` on into its cache
    /// (`posix_fadvise(WILLNEED)`), so a later read does not wait for the disk.
    pub fn prefetch(
        &self,
        rel: RelFileNode,
        fork: ForkNumber,
        block: BlockNumber,
        count: u32,
    ) -> Result<()> {
        let rf = self.fork(rel, fork)?;
        let end = block.saturating_add(count);
        let mut b = block;
        while b < end {
            let segno = b / RELSEG_SIZE;
            let seg_end = ((segno as u64 + 1) * RELSEG_SIZE as u64).min(end as u64) as u32;
            if let Some(seg) = rf.segment(segno)? {
                let off = (b % RELSEG_SIZE) as i64 * BLCKSZ as i64;
                let len = (seg_end - b) as i64 * BLCKSZ as i64;
                // SAFETY: plain syscall on an open descriptor; advice only.
                unsafe {
                    libc::posix_fadvise(seg.file.as_raw_fd(), off, len, libc::POSIX_FADV_WILLNEED);
                }
            }
            b = seg_end;
        }
        Ok(())
    }

    /// Asks the OS to drop the fork's pages from its cache
    /// (`posix_fadvise(DONTNEED)`, after an fsync so dirty pages can go too;
    /// with fsync off, only the clean ones go), so benchmarks can start cold
    /// without root.
    pub fn evict_os_cache(&self, rel: RelFileNode, fork: ForkNumber) -> Result<()> {
        let rf = self.fork(rel, fork)?;
        let segs: Vec<Arc<Segment>> = rf.segs.read().clone();
        for seg in segs {
            // With fsync off, dirty OS pages may survive the advice.
            if self.fsync_on() {
                seg.file
                    .sync_data()
                    .map_err(|e| io_error(e, &format!("could not fsync file \"{}\"", rf.name)))?;
                seg.needs_sync.store(false, Ordering::Release);
            }
            // SAFETY: plain syscall on an open descriptor; advice only.
            unsafe {
                libc::posix_fadvise(seg.file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED);
            }
        }
        Ok(())
    }
}

/// Allocates blocks `from..to` of the fork without changing file lengths,
/// segment by segment; the error names the segment that failed.
fn allocate_blocks(
    rf: &RelFork,
    from: BlockNumber,
    to: BlockNumber,
) -> std::result::Result<(), (u32, std::io::Error)> {
    let mut b = from;
    while b < to {
        let segno = b / RELSEG_SIZE;
        let seg_end = (segno + 1).saturating_mul(RELSEG_SIZE).min(to);
        let seg = rf
            .segment_for_write(segno)
            .map_err(|e| (segno, std::io::Error::other(e.message)))?;
        let off = (b % RELSEG_SIZE) as u64 * BLCKSZ as u64;
        let len = (seg_end - b) as u64 * BLCKSZ as u64;
        super::reserve::allocate_keep_size(&seg.file, off, len).map_err(|e| (segno, e))?;
        b = seg_end;
    }
    Ok(())
}

/// Sets the fork's file size to exactly `nblocks` blocks: shortens or
/// (sparsely) lengthens the segment holding the last block, creating missing
/// segments before it. Later segments must already be gone.
fn set_physical_size(rf: &RelFork, nblocks: BlockNumber) -> Result<()> {
    let (segno, len) = if nblocks == 0 {
        (0, 0)
    } else {
        let last = nblocks - 1;
        (
            last / RELSEG_SIZE,
            ((last % RELSEG_SIZE) as u64 + 1) * BLCKSZ as u64,
        )
    };
    let seg = rf.segment_for_write(segno)?;
    let what = || format!("could not truncate file \"{}\"", rf.seg_name(segno));
    let now = seg.file.metadata().map_err(|e| io_error(e, &what()))?.len();
    if now != len {
        seg.file.set_len(len).map_err(|e| io_error(e, &what()))?;
        seg.needs_sync.store(true, Ordering::Release);
    }
    Ok(())
}

/// fsyncs the directory `dir`. File systems that cannot fsync a directory
/// (`EINVAL`, `EBADF`) are let be, as PostgreSQL's `fsync_fname` lets them.
fn sync_directory(dir: &Path) -> Result<()> {
    let res = File::open(dir).and_then(|d| d.sync_all());
    match res {
        Err(e) if !matches!(e.raw_os_error(), Some(libc::EINVAL) | Some(libc::EBADF)) => Err(
            io_error(e, &format!("could not fsync file \"{}\"", dir.display())),
        ),
        _ => Ok(()),
    }
}

/// fsyncs the segments of `rf` that need it.
fn sync_fork(rf: &RelFork) -> Result<()> {
    let segs: Vec<Arc<Segment>> = rf.segs.read().clone();
    for (i, seg) in segs.iter().enumerate() {
        if seg.needs_sync.swap(false, Ordering::AcqRel) {
            if let Err(e) = seg.file.sync_data() {
                seg.needs_sync.store(true, Ordering::Release);
                return Err(io_error(
                    e,
                    &format!("could not fsync file \"{}\"", rf.seg_name(i as u32)),
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(fill: u8) -> Vec<u8> {
        vec![fill; BLCKSZ]
    }

    #[test]
    fn create_write_read_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let rel = RelFileNode(100);
        {
            let smgr = Smgr::open(dir.path()).unwrap();
            smgr.create(rel, ForkNumber::Main).unwrap();
            assert!(smgr.create(rel, ForkNumber::Main).is_err());
            assert_eq!(smgr.nblocks(rel, ForkNumber::Main).unwrap(), 0);
            smgr.write(rel, ForkNumber::Main, 0, &page(1)).unwrap();
            smgr.write(rel, ForkNumber::Main, 2, &page(3)).unwrap();
            assert_eq!(smgr.nblocks(rel, ForkNumber::Main).unwrap(), 3);
            smgr.sync_all().unwrap();
        }
        let smgr = Smgr::open(dir.path()).unwrap();
        assert_eq!(smgr.nblocks(rel, ForkNumber::Main).unwrap(), 3);
        let mut buf = page(9);
        smgr.read(rel, ForkNumber::Main, 2, &mut buf).unwrap();
        assert_eq!(buf, page(3));
        smgr.read(rel, ForkNumber::Main, 1, &mut buf).unwrap();
        assert_eq!(buf, page(0), "a hole reads as zeros");
        let e = smgr.read(rel, ForkNumber::Main, 3, &mut buf).unwrap_err();
        assert!(
            e.message.contains("could not read block 3"),
            "{}",
            e.message
        );
        let e = smgr.nblocks(RelFileNode(5), ForkNumber::Main).unwrap_err();
        assert_eq!(e.code, SqlState::UndefinedFile);
    }

    #[test]
    fn pages_from_separate_buffers_are_written_in_one_call_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let rel = RelFileNode(101);
        let smgr = Smgr::open(dir.path()).unwrap();
        smgr.create(rel, ForkNumber::Main).unwrap();
        smgr.write(rel, ForkNumber::Main, 0, &page(1)).unwrap();
        let (a, b, c) = (page(4), page(5), page(6));
        smgr.write_pages(rel, ForkNumber::Main, 2, &[&a, &b, &c])
            .unwrap();
        assert_eq!(smgr.nblocks(rel, ForkNumber::Main).unwrap(), 5);
        // Over existing blocks too.
        smgr.write_pages(rel, ForkNumber::Main, 0, &[&c]).unwrap();
        let mut got: Vec<Vec<u8>> = (0..5).map(|_| page(9)).collect();
        let mut refs: Vec<&mut [u8]> = got.iter_mut().map(|p| &mut p[..]).collect();
        smgr.read_blocks(rel, ForkNumber::Main, 0, &mut refs)
            .unwrap();
        assert_eq!(got, vec![page(6), page(0), page(4), page(5), page(6)]);
        assert_eq!(
            std::fs::metadata(dir.path().join("base/101"))
                .unwrap()
                .len(),
            5 * BLCKSZ as u64
        );
    }

    #[test]
    fn truncate_and_extend_file_to_fix_the_size_on_disk() {
        let dir = tempfile::tempdir().unwrap();
        let rel = RelFileNode(3);
        {
            let smgr = Smgr::open(dir.path()).unwrap();
            smgr.create(rel, ForkNumber::Main).unwrap();
            smgr.set_nblocks_at_least(rel, ForkNumber::Main, 5).unwrap();
            // Logical blocks 0..5 are holes; truncating to 3 makes 3 durable.
            smgr.truncate(rel, ForkNumber::Main, 3).unwrap();
            smgr.extend_file_to(rel, ForkNumber::VisibilityMap, 1)
                .unwrap_err();
            smgr.create(rel, ForkNumber::VisibilityMap).unwrap();
            smgr.extend_file_to(rel, ForkNumber::VisibilityMap, RELSEG_SIZE + 2)
                .unwrap();
        }
        let smgr = Smgr::open(dir.path()).unwrap();
        assert_eq!(smgr.nblocks(rel, ForkNumber::Main).unwrap(), 3);
        assert_eq!(
            smgr.nblocks(rel, ForkNumber::VisibilityMap).unwrap(),
            RELSEG_SIZE + 2
        );
        let mut buf = page(1);
        smgr.read(rel, ForkNumber::VisibilityMap, RELSEG_SIZE + 1, &mut buf)
            .unwrap();
        assert_eq!(buf, page(0));
    }

    #[test]
    fn logical_extension_reads_zeros() {
        let dir = tempfile::tempdir().unwrap();
        let smgr = Smgr::open(dir.path()).unwrap();
        let rel = RelFileNode(1);
        smgr.create(rel, ForkNumber::VisibilityMap).unwrap();
        smgr.set_nblocks_at_least(rel, ForkNumber::VisibilityMap, 2)
            .unwrap();
        let mut buf = page(7);
        smgr.read(rel, ForkNumber::VisibilityMap, 1, &mut buf)
            .unwrap();
        assert_eq!(buf, page(0));
        assert!(dir.path().join("base/1_vm").exists());
    }

    #[test]
    fn writeback_is_a_hint_that_changes_no_page() {
        let dir = tempfile::tempdir().unwrap();
        let rel = RelFileNode(8);
        let smgr = Smgr::open(dir.path()).unwrap();
        smgr.create(rel, ForkNumber::Main).unwrap();
        for b in 0..4 {
            smgr.write(rel, ForkNumber::Main, b, &page(b as u8 + 1))
                .unwrap();
        }
        // Past the end, across a segment boundary, of a fork never opened:
        // nothing fails.
        smgr.writeback(rel, ForkNumber::Main, 0, 4);
        smgr.writeback(rel, ForkNumber::Main, 2, RELSEG_SIZE + 10);
        smgr.writeback(RelFileNode(99), ForkNumber::Main, 0, 1);
        smgr.set_fsync(false);
        smgr.writeback(rel, ForkNumber::Main, 0, 4);
        smgr.sync_all().unwrap();
        let mut buf = vec![0u8; BLCKSZ];
        for b in 0..4 {
            smgr.read(rel, ForkNumber::Main, b, &mut buf).unwrap();
            assert_eq!(buf, page(b as u8 + 1));
        }
    }

    #[test]
    fn segments_split_at_one_gibibyte_and_truncate() {
        let dir = tempfile::tempdir().unwrap();
        let rel = RelFileNode(7);
        let smgr = Smgr::open(dir.path()).unwrap();
        smgr.create(rel, ForkNumber::Main).unwrap();
        // Sparse: only two blocks are really written.
        smgr.write(rel, ForkNumber::Main, RELSEG_SIZE - 1, &page(1))
            .unwrap();
        smgr.write(rel, ForkNumber::Main, RELSEG_SIZE, &page(2))
            .unwrap();
        let seg0 = dir.path().join("base/7");
        let seg1 = dir.path().join("base/7.1");
        assert_eq!(fs::metadata(&seg0).unwrap().len(), 1 << 30);
        assert_eq!(fs::metadata(&seg1).unwrap().len(), BLCKSZ as u64);
        drop(smgr);
        let smgr = Smgr::open(dir.path()).unwrap();
        assert_eq!(
            smgr.nblocks(rel, ForkNumber::Main).unwrap(),
            RELSEG_SIZE + 1
        );
        let mut buf = page(0);
        smgr.read(rel, ForkNumber::Main, RELSEG_SIZE, &mut buf)
            .unwrap();
        assert_eq!(buf, page(2));
        smgr.truncate(rel, ForkNumber::Main, 10).unwrap();
        assert!(!seg1.exists());
        assert_eq!(fs::metadata(&seg0).unwrap().len(), 10 * BLCKSZ as u64);
        assert_eq!(smgr.nblocks(rel, ForkNumber::Main).unwrap(), 10);
        smgr.truncate(rel, ForkNumber::Main, 0).unwrap();
        assert_eq!(fs::metadata(&seg0).unwrap().len(), 0);
        smgr.prefetch(rel, ForkNumber::Main, 0, 4).unwrap();
        smgr.evict_os_cache(rel, ForkNumber::Main).unwrap();
        smgr.unlink(rel).unwrap();
        assert!(!seg0.exists());
        assert!(!smgr.exists(rel, ForkNumber::Main));
    }

    #[test]
    fn creating_and_removing_files_fsyncs_the_directory() {
        let dir = tempfile::tempdir().unwrap();
        let rel = RelFileNode(8);
        let smgr = Smgr::open(dir.path()).unwrap();
        assert_eq!(smgr.dir_syncs(), 0);
        smgr.create(rel, ForkNumber::Main).unwrap();
        assert_eq!(smgr.dir_syncs(), 1, "create");
        smgr.write(rel, ForkNumber::Main, 0, &page(1)).unwrap();
        smgr.sync(rel, ForkNumber::Main).unwrap();
        assert_eq!(smgr.dir_syncs(), 1, "a write into an existing segment");
        // A write that creates segment 1: its sync fsyncs the directory.
        smgr.write(rel, ForkNumber::Main, RELSEG_SIZE, &page(2))
            .unwrap();
        smgr.sync(rel, ForkNumber::Main).unwrap();
        assert_eq!(smgr.dir_syncs(), 2, "a new segment");
        smgr.sync(rel, ForkNumber::Main).unwrap();
        assert_eq!(smgr.dir_syncs(), 2, "only once");
        smgr.truncate(rel, ForkNumber::Main, 1).unwrap();
        assert_eq!(smgr.dir_syncs(), 3, "a truncate that removes a segment");
        smgr.truncate(rel, ForkNumber::Main, 0).unwrap();
        assert_eq!(smgr.dir_syncs(), 3, "a truncate within the segment");
        smgr.unlink(rel).unwrap();
        assert_eq!(smgr.dir_syncs(), 4, "unlink");
        smgr.unlink(rel).unwrap();
        assert_eq!(smgr.dir_syncs(), 4, "nothing removed");
        smgr.set_fsync(false);
        smgr.create(rel, ForkNumber::Main).unwrap();
        smgr.unlink(rel).unwrap();
        assert_eq!(smgr.dir_syncs(), 4, "fsync off");
    }
}
