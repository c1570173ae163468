//! Shared set-up for the heap integration tests: a data directory with a
//! control file, a transaction manager and a buffer pool, plus a table of
//! four int4 columns.

#![allow(dead_code)]

use std::path::Path;
use std::sync::{Arc, Mutex};

use heapdb::access::heap::tuple::{deform, form_tuple, Attr, TupleDesc};
use heapdb::access::heap::HeapRelation;
use heapdb::storage::control::ControlFile;
use heapdb::storage::{BufferPool, RelFileNode};
use heapdb::txn::{Snapshot, TxnManager, Xid, INVALID_XID};

/// One open "database": what the engine's `Database` will own.
pub struct Db {
    pub pool: Arc<BufferPool>,
    pub txns: Arc<TxnManager>,
}

impl Db {
    pub fn open(dir: &Path, nbuffers: usize) -> Db {
        let (control, _) = ControlFile::open_or_create(dir).unwrap();
        let txns = Arc::new(TxnManager::open(dir, Arc::new(Mutex::new(control))).unwrap());
        let pool = BufferPool::open(dir, nbuffers).unwrap();
        Db { pool, txns }
    }

    /// Clean shutdown: every dirty page and the commit log on disk.
    pub fn close(self) {
        self.pool.flush_all().unwrap();
        self.txns.shutdown().unwrap();
    }

    pub fn create(&self, rel: u32) -> HeapRelation {
        HeapRelation::create(
            Arc::clone(&self.pool),
            Arc::clone(&self.txns),
            RelFileNode(rel),
        )
        .unwrap()
    }

    pub fn open_rel(&self, rel: u32) -> HeapRelation {
        HeapRelation::open(
            Arc::clone(&self.pool),
            Arc::clone(&self.txns),
            RelFileNode(rel),
        )
        .unwrap()
    }

    /// A snapshot for a reader outside any transaction.
    pub fn snap(&self) -> Snapshot {
        self.txns.snapshot(INVALID_XID, 0)
    }

    /// A snapshot for transaction `xid` at command `cid`.
    pub fn snap_in(&self, xid: Xid, cid: u32) -> Snapshot {
        self.txns.snapshot(xid, cid)
    }
}

pub fn desc4() -> TupleDesc {
    TupleDesc::new(vec![Attr::fixed(4, 4); 4]).unwrap()
}

/// A row (v, v+1, v+2, v+3) of four int4 columns.
pub fn row(v: i32) -> Vec<u8> {
    let cols: Vec<[u8; 4]> = (0..4).map(|i| (v + i).to_le_bytes()).collect();
    let vals: Vec<Option<&[u8]>> = cols.iter().map(|c| Some(&c[..])).collect();
    let mut t = Vec::new();
    form_tuple(&desc4(), &vals, &mut t).unwrap();
    t
}

/// The first column of a tuple; panics when the tuple is torn.
pub fn first_col(t: &[u8]) -> i32 {
    let d = desc4();
    let mut out = [None; 4];
    deform(t, &d, 4, &mut out).unwrap();
    let v: Vec<i32> = out
        .iter()
        .map(|c| i32::from_le_bytes(c.unwrap().try_into().unwrap()))
        .collect();
    assert_eq!(v, vec![v[0], v[0] + 1, v[0] + 2, v[0] + 3], "torn tuple");
    v[0]
}

/// The first columns of every tuple `snap` sees, sorted.
pub fn values(rel: &HeapRelation, snap: &Snapshot) -> Vec<i32> {
    let mut out = Vec::new();
    let mut scan = rel.scan(snap).unwrap();
    while scan
        .next_page(|_, page, visible| {
            for &o in visible {
                out.push(first_col(heapdb::storage::page::get_item(page, o).unwrap()));
            }
        })
        .unwrap()
        .is_some()
    {}
    out.sort_unstable();
    out
}
