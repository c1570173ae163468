//! A database: one data directory opened by one process.
//!
//! [`Database`] owns the shared state every session uses — the buffer pool,
//! the transaction manager and commit log, the catalog, the control file and
//! a cache of open heap relations — behind an `Arc`, so it is cheap to clone
//! and `Send + Sync`. Sessions ([`Database::session`]) run statements on it
//! from any thread.
//!
//! Opening locks the file `lock` in the data directory
//! ([`crate::storage::dirlock`]), so a second process (or a second open in
//! this one) gets a clear error instead of corrupting the files. A
//! directory is initialised only when it is absent or empty (as initdb
//! decides), or when it holds the marker of a first open that a crash cut
//! short (`init.incomplete`, created first and removed last, so such a
//! directory is initialised again rather than refused); otherwise its control file, catalog, commit log and log are
//! checked before anything is written, and a missing or damaged one stops
//! the open with an error naming it (`src/storage/README.md`, "What an
//! open promises"). Opening replays the write-ahead log when the control
//! file says the last run did not shut down cleanly (see
//! [`crate::wal::recovery`]), before the catalog is read. Dropping the last handle shuts down cleanly
//! with a shutdown checkpoint: every dirty buffer is written and synced, the
//! commit log flushed, the next xid and the clean-shutdown flag recorded.
//!
//! Background threads: the WAL writer (flushes asynchronous commits every
//! 200 ms) and the checkpointer; both stop before the shutdown checkpoint.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::access::heap::HeapRelation;
use crate::catalog::Catalog;
use crate::err;
use crate::error::Result;
use crate::settings::Settings;
use crate::storage::control::ControlFile;
use crate::storage::dirlock::DirLock;
use crate::storage::{BufferPool, BufferPoolConfig, RelFileNode, RingSizes};
use crate::txn::{LockManager, TxnManager};
use crate::wal::{recovery, Checkpointer, Wal, WalRecord};

/// Shared state of an open database.
pub struct DbInner {
    /// The data directory.
    pub dir: PathBuf,
    /// The buffer pool.
    pub pool: Arc<BufferPool>,
    /// Transaction ids, commit log, snapshots.
    pub txns: Arc<TxnManager>,
    /// Table definitions.
    pub catalog: Catalog,
    /// The control file.
    pub control: Arc<Mutex<ControlFile>>,
    /// Settings every new session starts with.
    pub defaults: Settings,
    /// The write-ahead log.
    pub wal: Arc<Wal>,
    /// Runs checkpoints (statement, background, shutdown).
    pub checkpointer: Arc<Checkpointer>,
    /// The WAL writer and checkpointer threads, joined at shutdown.
    threads: Mutex<Vec<JoinHandle<()>>>,
    /// Set by [`Database::crash`]: drop without the shutdown checkpoint.
    crashed: std::sync::atomic::AtomicBool,
    /// Set once the shutdown checkpoint ran ([`Database::close`]).
    closed: std::sync::atomic::AtomicBool,
    /// Table and transaction locks.
    pub locks: LockManager,
    /// The temporary namespaces sessions hold (`pg_temp_N`), by number.
    temp_namespaces: Mutex<std::collections::BTreeSet<u32>>,
    /// Open heaps by relfilenode (each keeps its free-space hints).
    relcache: Mutex<HashMap<u32, Arc<HeapRelation>>>,
    /// The sequences' current values, shared by every session.
    pub sequences: Arc<crate::commands::seqfuncs::SequenceStates>,
    /// Holds the directory's lock for as long as the database is open.
    _lock: DirLock,
}

/// An open database. Cheap to clone; shuts down when the last clone drops.
#[derive(Clone)]
pub struct Database {
    inner: Arc<DbInner>,
}

impl std::ops::Deref for Database {
    type Target = DbInner;
    fn deref(&self) -> &DbInner {
        &self.inner
    }
}

impl Database {
    /// Opens (creating if needed) the database in `dir` with default
    /// settings.
    pub fn open(dir: impl AsRef<Path>) -> Result<Database> {
        Database::open_with(dir, Settings::default())
    }

    /// Opens the database in `dir`; `settings` are the defaults of its
    /// sessions, and `shared_buffers` sizes the pool.
    pub fn open_with(dir: impl AsRef<Path>, settings: Settings) -> Result<Database> {
        let dir = dir.as_ref().to_path_buf();
        fs::create_dir_all(&dir).map_err(|e| {
            err!(
                IoError,
                "could not create data directory \"{}\": {e}",
                dir.display()
            )
        })?;
        // Every file is opened under the absolute path, so the process may
        // change its working directory (the shell's `\cd`) without the
        // database following it.
        let dir = fs::canonicalize(&dir).map_err(|e| {
            err!(
                IoError,
                "could not resolve data directory \"{}\": {e}",
                dir.display()
            )
        })?;
        let lock = DirLock::acquire(&dir)?;
        // New only when absent or empty (now holding just the lock), as
        // initdb decides: a directory with files but no control file is
        // damaged, never initialised again. Decided under the lock, so two
        // first opens cannot both initialise. A first open that a crash
        // cut short is done again from nothing; a new directory is marked
        // until it is complete.
        let new = is_new_directory(&dir)? || clear_interrupted_init(&dir)?;
        if new {
            mark_init(&dir, true)?;
        }
        let control = if new {
            ControlFile::open_or_create(&dir)?.0
        } else {
            ControlFile::open(&dir)?
        };
        let ctl = control.data();
        if !new {
            Catalog::check_file(&dir, &crate::plan::check::bind_stored)?;
        }
        // Temporary files of a process that died mid-statement (after the
        // checks: a refused directory is left exactly as it was).
        crate::exec::spill::clear_temp_dir(&dir)?;
        let control = Arc::new(Mutex::new(control));
        let pool = BufferPool::open_with(
            &dir,
            BufferPoolConfig {
                nbuffers: settings.shared_buffers as usize,
                huge_pages: settings.huge_pages,
            },
        )?;
        let txns = Arc::new(TxnManager::open(&dir, control.clone())?);
        // Recovery comes before the catalog, which reads the commit log.
        let wal_dir = dir.join("wal");
        let recovering = !ctl.clean_shutdown;
        // Read the whole log first, changing nothing: a log damaged in the
        // middle, or one that does not reach the last checkpoint, stops the
        // open before redo touches a page.
        let found = if recovering {
            recovery::find_end(&wal_dir, ctl.redo_lsn)?
        } else {
            recovery::find_end_clean(&wal_dir, ctl.redo_lsn, ctl.checkpoint_lsn)?
        };
        if found.end < ctl.checkpoint_lsn {
            return Err(err!(
                DataCorrupted,
                "could not locate a valid checkpoint record"
            )
            .with_detail(format!(
                "The control file names a checkpoint ending at {}, but the write-ahead log in \"{}\" ends at {}.",
                crate::wal::lsn_text(ctl.checkpoint_lsn),
                wal_dir.display(),
                crate::wal::lsn_text(found.end)
            )));
        }
        let found = if recovering {
            let r = recovery::redo(&wal_dir, ctl.redo_lsn, &pool, txns.clog())?;
            if r.records > 0 {
                eprintln!(
                    "heapdb: database was not shut down cleanly; redo replayed {} WAL records ({} pages) up to {}",
                    r.records,
                    r.applied,
                    crate::wal::lsn_text(r.end)
                );
            }
            r
        } else {
            found
        };
        let wal = if !recovering && found.end == ctl.checkpoint_lsn {
            Wal::open_clean(&wal_dir, found.end, found.prev, ctl.redo_lsn)?
        } else {
            Wal::open(&wal_dir, found.end, found.prev, ctl.redo_lsn, true)?
        };
        wal.set_compression(settings.wal_compression);
        pool.set_wal_flush_hook(wal.clone());
        txns.clog().set_wal_flushed(wal.flushed_handle());
        let checkpointer = Arc::new(Checkpointer::new(
            wal.clone(),
            pool.clone(),
            txns.clone(),
            control.clone(),
            (settings.max_wal_size_mb.max(1) as u64) << 20,
            Duration::from_secs(settings.checkpoint_timeout_s.max(1) as u64),
        ));
        if recovering {
            checkpointer.checkpoint(false)?;
        } else {
            // From now on a crash must be noticed at the next open.
            control
                .lock()
                .expect("control mutex poisoned")
                .update(|d| d.clean_shutdown = false)?;
        }
        let catalog = Catalog::open_with(&dir, &txns, new, &crate::plan::check::bind_stored)?;
        drop_orphan_temp(&catalog, &txns, &wal, &pool)?;
        if new {
            // Control file, commit log, log and catalog are all there.
            mark_init(&dir, false)?;
        }
        let threads = vec![
            wal.start_background_flusher(),
            checkpointer.start_background(),
        ];
        let db = Database {
            inner: Arc::new(DbInner {
                dir,
                pool,
                txns,
                catalog,
                control,
                defaults: settings,
                wal,
                checkpointer,
                threads: Mutex::new(threads),
                crashed: std::sync::atomic::AtomicBool::new(false),
                closed: std::sync::atomic::AtomicBool::new(false),
                locks: LockManager::new(),
                temp_namespaces: Mutex::new(std::collections::BTreeSet::new()),
                relcache: Mutex::new(HashMap::new()),
                sequences: Arc::default(),
                _lock: lock,
            }),
        };
        if ctl.format_version < crate::storage::control::FORMAT_VERSION {
            db.convert_from_format3()?;
        }
        Ok(db)
    }

    /// Makes a data directory of format version 3 one of the current
    /// version (`access::heap::format3`): the HOT marks of every table with
    /// indexes cleared, each changed page logged whole; then a checkpoint
    /// writes them all, and only then does the control file say the new
    /// version. A crash before that converts again at the next open.
    fn convert_from_format3(&self) -> Result<()> {
        let snap = self.txns.snapshot(crate::txn::INVALID_XID, 0);
        let view = crate::catalog::CatalogView {
            snapshot: &snap,
            txns: &self.txns,
            temp_ns: 0,
        };
        for t in self.catalog.tables(&view) {
            if !t.indexes.is_empty() {
                self.relation(t.relfilenode)?.convert_from_format3()?;
            }
        }
        self.checkpoint()?;
        self.control
            .lock()
            .expect("control mutex poisoned")
            .update(|d| d.format_version = crate::storage::control::FORMAT_VERSION)
    }

    /// Ends this handle as a crash would (for tests): when it is the last
    /// one, the background threads stop and nothing more is written — no
    /// checkpoint, no flush of the log's buffer or of dirty pages. The next
    /// open recovers from the log.
    pub fn crash(self) {
        self.crashed
            .store(true, std::sync::atomic::Ordering::Release);
    }

    /// Shuts down cleanly and reports the shutdown's error (dropping the
    /// last handle does the same but can only print it). When other
    /// handles remain, nothing happens yet: the last one shuts down.
    pub fn close(self) -> Result<()> {
        match Arc::try_unwrap(self.inner) {
            Ok(inner) => inner.shutdown(),
            Err(_) => Ok(()),
        }
    }

    /// The open heap of `relfilenode` (opened and cached on first use).
    pub fn relation(&self, relfilenode: u32) -> Result<Arc<HeapRelation>> {
        let mut cache = self.relcache.lock().expect("relcache poisoned");
        if let Some(r) = cache.get(&relfilenode) {
            return Ok(r.clone());
        }
        let rel = Arc::new(
            HeapRelation::open(
                self.pool.clone(),
                self.txns.clone(),
                RelFileNode(relfilenode),
            )?
            .with_wal(self.wal.clone()),
        );
        cache.insert(relfilenode, rel.clone());
        Ok(rel)
    }

    /// Creates the files of a new heap (logged, so redo recreates them)
    /// and caches it.
    pub fn create_relation(&self, relfilenode: u32) -> Result<Arc<HeapRelation>> {
        self.create_logged(relfilenode, 0)
    }

    /// [`Database::create_relation`] with the create record logged under
    /// `xid`: if the log ends with no outcome for `xid`, recovery removes
    /// the files again (`wal::recovery`).
    fn create_logged(&self, relfilenode: u32, xid: u32) -> Result<Arc<HeapRelation>> {
        self.log_relation_create(xid, relfilenode)?;
        let rel = Arc::new(
            HeapRelation::create(
                self.pool.clone(),
                self.txns.clone(),
                RelFileNode(relfilenode),
            )?
            .with_wal(self.wal.clone()),
        );
        self.relcache
            .lock()
            .expect("relcache poisoned")
            .insert(relfilenode, rel.clone());
        Ok(rel)
    }

    /// Logs the creation of relation `relfilenode`'s files under `xid` and
    /// flushes the record, before the caller creates any file: a file on
    /// disk always has its create record in the log, so recovery removes
    /// it when `xid` never committed (PostgreSQL logs `XLOG_SMGR_CREATE`
    /// without the flush, and a crash right after can leave the file
    /// behind). Callers then list the file for removal at abort.
    pub fn log_relation_create(&self, xid: u32, relfilenode: u32) -> Result<()> {
        let lsn = self
            .wal
            .insert(xid, &WalRecord::CreateRel { rel: relfilenode });
        self.wal.flush(lsn)
    }

    /// Creates the files of a new heap for transaction `xid`, whose own
    /// changes to it are not logged: its commit must write and fsync the
    /// relation first ([`HeapRelation::skip_wal_for`]).
    pub fn create_relation_in(&self, relfilenode: u32, xid: u32) -> Result<Arc<HeapRelation>> {
        let rel = self.create_logged(relfilenode, xid)?;
        rel.skip_wal_for(xid);
        Ok(rel)
    }

    /// Removes a heap's buffers and files (the caller logged the removal in
    /// its transaction's commit or abort record).
    pub fn drop_relation(&self, relfilenode: u32) -> Result<()> {
        self.relcache
            .lock()
            .expect("relcache poisoned")
            .remove(&relfilenode);
        self.pool.drop_relation(RelFileNode(relfilenode))
    }

    /// Claims the smallest free temporary namespace number (from 1) for a
    /// session's temporary tables.
    pub fn claim_temp_namespace(&self) -> u32 {
        let mut held = self
            .temp_namespaces
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        let n = (1..).find(|n| !held.contains(n)).unwrap_or(u32::MAX);
        held.insert(n);
        n
    }

    /// Gives temporary namespace `n` back (its session ended with no
    /// temporary table left in it).
    pub fn release_temp_namespace(&self, n: u32) {
        self.temp_namespaces
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&n);
    }

    /// Runs a checkpoint (`CHECKPOINT`): every dirty buffer written and
    /// synced, the commit log flushed, the redo point recorded, old log
    /// segments removed.
    pub fn checkpoint(&self) -> Result<()> {
        self.checkpointer.checkpoint(false).map(|_| ())
    }
}

/// Drops the temporary tables a process that died left in the catalog
/// (PostgreSQL's `RemovePgTempFiles` and its cleanup of a dead backend's
/// temporary namespace): their files are removed by a transaction whose
/// commit record names them, logged and flushed first, so redo after a
/// later crash removes them again; then they leave the catalog file. A
/// crash in between leaves catalog entries whose files are gone, and the
/// next open does it again (removing a missing file is no error).
fn drop_orphan_temp(
    catalog: &Catalog,
    txns: &TxnManager,
    wal: &Arc<Wal>,
    pool: &Arc<BufferPool>,
) -> Result<()> {
    let files = catalog.temp_relation_files();
    if files.is_empty() {
        return Ok(());
    }
    let xid = txns.begin()?;
    let lsn = wal.insert(
        xid,
        &WalRecord::Commit {
            drops: files.clone(),
        },
    );
    wal.flush(lsn)?;
    txns.commit(xid)?;
    for rel in files {
        pool.drop_relation(RelFileNode(rel))?;
    }
    catalog.forget_temp()
}

/// The file that marks a data directory whose first open has not finished
/// initialising it: created first (after the lock), removed last, so a
/// crash in between leaves a directory the next open initialises again
/// instead of refusing it as damaged.
const INIT_MARKER: &str = "init.incomplete";

/// Creates (`on`) or removes the initialisation marker of `dir`, durably
/// (the directory is fsynced).
fn mark_init(dir: &Path, on: bool) -> Result<()> {
    let path = dir.join(INIT_MARKER);
    let res = if on {
        fs::File::create(&path).and_then(|f| f.sync_all())
    } else {
        fs::remove_file(&path)
    };
    res.and_then(|_| fs::File::open(dir)?.sync_all())
        .map_err(|e| {
            err!(
                IoError,
                "could not {} file \"{}\": {e}",
                if on { "create" } else { "remove" },
                path.display()
            )
        })
}

/// When `dir` holds the marker of an interrupted first open, removes
/// everything that open made (all but the lock and the marker) and
/// returns true: the directory is new again.
fn clear_interrupted_init(dir: &Path) -> Result<bool> {
    if !dir.join(INIT_MARKER).exists() {
        return Ok(false);
    }
    let io = |e: std::io::Error| {
        err!(
            IoError,
            "could not clear the interrupted initialisation of \"{}\": {e}",
            dir.display()
        )
    };
    for e in fs::read_dir(dir).map_err(io)? {
        let e = e.map_err(io)?;
        let name = e.file_name();
        if name == "lock" || name == INIT_MARKER {
            continue;
        }
        let path = e.path();
        if e.file_type().map_err(io)?.is_dir() {
            fs::remove_dir_all(&path).map_err(io)?;
        } else {
            fs::remove_file(&path).map_err(io)?;
        }
    }
    Ok(true)
}

/// Whether `dir` is a new data directory: absent, empty, or holding only
/// the lock file (an open that stopped right after locking).
fn is_new_directory(dir: &Path) -> Result<bool> {
    let rd = match fs::read_dir(dir) {
        Ok(rd) => rd,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(true),
        Err(e) => {
            return Err(err!(
                IoError,
                "could not open directory \"{}\": {e}",
                dir.display()
            ))
        }
    };
    for e in rd {
        let e = e.map_err(|e| {
            err!(
                IoError,
                "could not read directory \"{}\": {e}",
                dir.display()
            )
        })?;
        if e.file_name() != "lock" {
            return Ok(false);
        }
    }
    Ok(true)
}

/// A client's ring sizes from its settings (`bulkread_ring_size` and the
/// others), which it passes with each request for a ring: the pool keeps
/// none of its own.
pub fn ring_sizes(s: &Settings) -> RingSizes {
    RingSizes {
        bulk_read: s.bulkread_ring_kb as usize * 1024,
        bulk_write: s.bulkwrite_ring_kb as usize * 1024,
        vacuum: s.vacuum_ring_kb as usize * 1024,
        quarter_rule: s.bulkread_quarter_rule,
    }
}

impl DbInner {
    /// Stops the background threads and runs the shutdown checkpoint (not
    /// after a simulated crash, nor twice).
    fn shutdown(&self) -> Result<()> {
        if self.closed.swap(true, std::sync::atomic::Ordering::AcqRel) {
            return Ok(());
        }
        self.wal.stop_background();
        for t in self
            .threads
            .lock()
            .expect("threads mutex poisoned")
            .drain(..)
        {
            t.thread().unpark();
            let _ = t.join();
        }
        let failed = self.wal.healthy();
        if self.crashed.load(std::sync::atomic::Ordering::Acquire) || failed.is_err() {
            // What a crash leaves: the pool's dirty pages, the log's
            // buffer and the commit log's unwritten pages are simply gone.
            // After a failed log flush the same, and the shutdown fails
            // with its error: the next open runs recovery.
            self.pool.clear_wal_flush_hook();
            self.txns.clog().discard_unwritten();
            return failed;
        }
        let rels = self.relcache.lock().expect("relcache poisoned").clone();
        self.sequences.write_back(|rel| rels.get(&rel).cloned())?;
        self.checkpointer.checkpoint(true).map(|_| ())
    }
}

impl Drop for DbInner {
    fn drop(&mut self) {
        // Errors here can only be reported ([`Database::close`] returns them).
        if let Err(e) = self.shutdown() {
            eprintln!("heapdb: error during shutdown: {e}");
        }
    }
}
