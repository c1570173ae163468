#![allow(dead_code)] // each benchmark uses a different part
                     // Shared by the heap benchmarks (included with `#[path]`): a throwaway data
                     // directory with a transaction manager and a buffer pool, and a loader that
                     // multi-inserts rows of four int4 columns.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use heapdb::access::heap::tuple::{form_tuple_append, Attr, TupleDesc};
use heapdb::access::heap::HeapRelation;
use heapdb::storage::control::ControlFile;
use heapdb::storage::{BufferPool, BufferPoolConfig, RelFileNode, StrategyKind};
use heapdb::txn::TxnManager;

/// CPU time this thread has used so far, in seconds
/// (`CLOCK_THREAD_CPUTIME_ID`). On a busy machine the wall clock overstates
/// the cost; figures per CPU-second show the code's own speed.
pub fn thread_cpu_secs() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec into the pointer we pass.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return 0.0;
    }
    ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9
}

/// Wall and CPU seconds of `f`.
pub fn timed<T>(f: impl FnOnce() -> T) -> (T, f64, f64) {
    let (w, c) = (Instant::now(), thread_cpu_secs());
    let r = f();
    (r, w.elapsed().as_secs_f64(), thread_cpu_secs() - c)
}

/// `--rows N` from the command line, else `default`.
pub fn rows_arg(default: u64) -> u64 {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == "--rows")
        .and_then(|i| args.get(i + 1))
        .and_then(|s| s.replace('_', "").parse().ok())
        .unwrap_or(default)
}

/// A data directory removed on drop.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(name: &str) -> TempDir {
        let d = std::env::temp_dir().join(format!("heapdb-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&d).expect("create bench directory");
        TempDir(d)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub struct Db {
    pub pool: Arc<BufferPool>,
    pub txns: Arc<TxnManager>,
}

pub fn open(dir: &Path, nbuffers: usize) -> heapdb::Result<Db> {
    let (control, _) = ControlFile::open_or_create(dir)?;
    let txns = Arc::new(TxnManager::open(dir, Arc::new(Mutex::new(control)))?);
    let pool = BufferPool::open_with(
        dir,
        BufferPoolConfig {
            nbuffers,
            ..BufferPoolConfig::default()
        },
    )?;
    Ok(Db { pool, txns })
}

/// Pages a heap of `rows` four-int4 rows needs (185 rows per page).
pub fn pages_for(rows: u64) -> usize {
    rows.div_ceil(185) as usize
}

/// Loads `rows` rows (v, v+1, v+2, v+3) in batches of 1000 with
/// multi-insert, through a bulk-write ring when `ring` (as COPY) or into the
/// whole pool otherwise (so the heap stays cached), in one committed
/// transaction. Returns the time taken (forming the tuples included).
pub fn load(db: &Db, rel: &HeapRelation, rows: u64, use_ring: bool) -> heapdb::Result<Duration> {
    let desc = TupleDesc::new(vec![Attr::fixed(4, 4); 4])?;
    let xid = db.txns.begin()?;
    let mut ring = db.pool.ring(StrategyKind::BulkWrite);
    let (mut data, mut lens) = (Vec::with_capacity(64 * 1024), Vec::with_capacity(1024));
    let start = Instant::now();
    let mut v = 0u64;
    while v < rows {
        data.clear();
        lens.clear();
        let end = (v + 1000).min(rows);
        for i in v..end {
            let x = i as i32;
            let (a, b, c, d) = (
                x.to_le_bytes(),
                (x + 1).to_le_bytes(),
                (x + 2).to_le_bytes(),
                (x + 3).to_le_bytes(),
            );
            let len =
                form_tuple_append(&desc, &[Some(&a), Some(&b), Some(&c), Some(&d)], &mut data)?;
            lens.push(len as u16);
        }
        rel.multi_insert(
            &data,
            &lens,
            xid,
            0,
            if use_ring { Some(&mut ring) } else { None },
            None,
        )?;
        v = end;
    }
    let took = start.elapsed();
    db.txns.commit(xid)?;
    Ok(took)
}

pub fn create(db: &Db, n: u32) -> heapdb::Result<HeapRelation> {
    HeapRelation::create(Arc::clone(&db.pool), Arc::clone(&db.txns), RelFileNode(n))
}
