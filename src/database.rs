//! A database: one data directory opened by one process.
//!
//! [`Database`] owns the shared state every session uses — the buffer pool,
//! the transaction manager and commit log, the catalog, the control file and
//! a cache of open heap relations — behind an `Arc`, so it is cheap to clone
//! and `Send + Sync`. Sessions ([`Database::session`]) run statements on it
//! from any thread.
//!
//! Opening takes an exclusive `flock` on the file `lock` in the data
//! directory, so a second process gets a clear error instead of corrupting
//! the files. Dropping the last handle shuts down cleanly: every dirty
//! buffer is written and synced, the commit log flushed, and the next xid
//! recorded.

use std::collections::HashMap;
use std::fs::{self, File};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::access::heap::HeapRelation;
use crate::catalog::Catalog;
use crate::err;
use crate::error::Result;
use crate::session::Session;
use crate::settings::Settings;
use crate::storage::control::ControlFile;
use crate::storage::{BufferPool, RelFileNode, RingSizes};
use crate::txn::{LockManager, TxnManager};

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
    /// Table and transaction locks.
    pub locks: LockManager,
    /// Open heaps by relfilenode (each keeps its free-space hints).
    relcache: Mutex<HashMap<u32, Arc<HeapRelation>>>,
    /// Holds the directory's lock for as long as the database is open.
    _lock: File,
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
        let lock = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(dir.join("lock"))?;
        // SAFETY: flock on a file descriptor we own; no memory is involved.
        let rc = unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        if rc != 0 {
            return Err(err!(
                ObjectInUse,
                "data directory \"{}\" is in use by another heapdb process",
                dir.display()
            )
            .with_hint("Close the other heapdb shell or program using it, or choose another directory with --data-dir."));
        }
        let (control, _created) = ControlFile::open_or_create(&dir)?;
        let control = Arc::new(Mutex::new(control));
        let pool = BufferPool::open(&dir, settings.shared_buffers as usize)?;
        pool.set_ring_sizes(ring_sizes(&settings));
        let txns = Arc::new(TxnManager::open(&dir, control.clone())?);
        let catalog = Catalog::open(&dir, &txns)?;
        Ok(Database {
            inner: Arc::new(DbInner {
                dir,
                pool,
                txns,
                catalog,
                control,
                defaults: settings,
                locks: LockManager::new(),
                relcache: Mutex::new(HashMap::new()),
                _lock: lock,
            }),
        })
    }

    /// A new session with the database's default settings.
    pub fn session(&self) -> Session {
        Session::new(self.clone())
    }

    /// The open heap of `relfilenode` (opened and cached on first use).
    pub fn relation(&self, relfilenode: u32) -> Result<Arc<HeapRelation>> {
        let mut cache = self.relcache.lock().expect("relcache poisoned");
        if let Some(r) = cache.get(&relfilenode) {
            return Ok(r.clone());
        }
        let rel = Arc::new(HeapRelation::open(
            self.pool.clone(),
            self.txns.clone(),
            RelFileNode(relfilenode),
        )?);
        cache.insert(relfilenode, rel.clone());
        Ok(rel)
    }

    /// Creates the files of a new heap and caches it.
    pub fn create_relation(&self, relfilenode: u32) -> Result<Arc<HeapRelation>> {
        let rel = Arc::new(HeapRelation::create(
            self.pool.clone(),
            self.txns.clone(),
            RelFileNode(relfilenode),
        )?);
        self.relcache
            .lock()
            .expect("relcache poisoned")
            .insert(relfilenode, rel.clone());
        Ok(rel)
    }

    /// Removes a heap's buffers and files.
    pub fn drop_relation(&self, relfilenode: u32) -> Result<()> {
        self.relcache
            .lock()
            .expect("relcache poisoned")
            .remove(&relfilenode);
        self.pool.drop_relation(RelFileNode(relfilenode))
    }

    /// Writes every dirty buffer and syncs the files and commit log
    /// (`CHECKPOINT` until the write-ahead log takes it over).
    pub fn checkpoint(&self) -> Result<()> {
        self.pool.flush_all()?;
        self.pool.smgr().sync_all()?;
        self.txns.clog().flush()
    }
}

/// The pool's ring sizes from settings.
pub fn ring_sizes(s: &Settings) -> RingSizes {
    RingSizes {
        bulk_read: s.bulkread_ring_kb as usize * 1024,
        bulk_write: s.bulkwrite_ring_kb as usize * 1024,
        vacuum: s.vacuum_ring_kb as usize * 1024,
    }
}

impl Drop for DbInner {
    fn drop(&mut self) {
        // A clean shutdown; errors here can only be reported, not returned.
        let flushed = self
            .pool
            .flush_all()
            .and_then(|_| self.pool.smgr().sync_all())
            .and_then(|_| self.txns.shutdown());
        if let Err(e) = flushed {
            eprintln!("heapdb: error during shutdown: {e}");
        }
    }
}
