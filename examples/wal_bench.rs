//! Write-ahead log benchmark (prints figures; not a test).
//!
//! 1. 100,000 single-row autocommit INSERTs from one session with
//!    `synchronous_commit = on` (every commit waits for its fdatasync);
//! 2. 8 sessions in threads × 10,000 such INSERTs: group commit lets one
//!    fdatasync serve several commits; compared with what 80,000 serial
//!    fdatasyncs on this disk would take;
//! 3. the same with `synchronous_commit = off`;
//! 4. multi-insert bulk load of 1,000,000 rows into a heap with and without
//!    logging (cached pool, then through the bulk-write ring).
//!
//! `cargo run --release --example wal_bench [-- --rows N]` (N scales 1 and 2).

#[path = "heap_bench_common/mod.rs"]
mod common;

use std::io::Write;
use std::sync::Arc;
use std::time::Instant;

use heapdb::storage::RelFileNode;
use heapdb::Database;

/// Seconds per fdatasync of a small append on this disk (median of 200).
fn fdatasync_secs(dir: &std::path::Path) -> f64 {
    let path = dir.join("fsync-probe");
    let mut f = std::fs::File::create(&path).expect("create probe file");
    f.write_all(&vec![0u8; 1 << 20]).expect("preallocate");
    f.sync_all().expect("sync");
    let mut times = Vec::new();
    for i in 0..200u64 {
        use std::os::unix::fs::FileExt;
        f.write_all_at(&[1u8; 100], i * 100).expect("write");
        let t = Instant::now();
        f.sync_data().expect("fdatasync");
        times.push(t.elapsed().as_secs_f64());
    }
    times.sort_by(|a, b| a.partial_cmp(b).expect("no NaN"));
    times[times.len() / 2]
}

fn inserts(db: &Database, n: u64, sync: bool, base: u64) {
    let mut s = db.session();
    if !sync {
        s.execute("SET synchronous_commit = off").expect("set");
    }
    for i in 0..n {
        s.execute(&format!("INSERT INTO t VALUES ({}, 'row')", base + i))
            .expect("insert");
    }
}

fn main() {
    let rows = common::rows_arg(100_000);
    let dir = common::TempDir::new("wal-bench");
    let db = Database::open(&dir.0).expect("open");
    db.session()
        .execute("CREATE TABLE t (id int, v text)")
        .expect("create");
    let fsync = fdatasync_secs(&dir.0);
    println!(
        "fdatasync of a small append: {:.3} ms (about {:.0} per second)",
        fsync * 1e3,
        1.0 / fsync
    );

    let w0 = db.wal.stats();
    let t = Instant::now();
    inserts(&db, rows, true, 0);
    let secs = t.elapsed().as_secs_f64();
    let w1 = db.wal.stats();
    println!(
        "{rows} autocommit INSERTs, 1 session, synchronous_commit=on: {secs:.2} s, {:.0} commits/s, {} flushes",
        rows as f64 / secs,
        w1.flushes - w0.flushes
    );

    let per = rows / 10;
    let t = Instant::now();
    let threads: Vec<_> = (0..8u64)
        .map(|i| {
            let db = db.clone();
            std::thread::spawn(move || inserts(&db, per, true, 1_000_000 * (i + 1)))
        })
        .collect();
    for th in threads {
        th.join().expect("thread");
    }
    let secs = t.elapsed().as_secs_f64();
    let w2 = db.wal.stats();
    let serial = 8.0 * per as f64 * fsync;
    println!(
        "8 sessions x {per} autocommit INSERTs, synchronous_commit=on: {secs:.2} s, {:.0} commits/s, \
         {} flushes ({:.1} commits per flush); {:.1}x faster than {} serial fdatasyncs ({serial:.2} s)",
        8.0 * per as f64 / secs,
        w2.flushes - w1.flushes,
        8.0 * per as f64 / (w2.flushes - w1.flushes).max(1) as f64,
        serial / secs,
        8 * per
    );

    let t = Instant::now();
    inserts(&db, rows, false, 50_000_000);
    let secs = t.elapsed().as_secs_f64();
    println!(
        "{rows} autocommit INSERTs, 1 session, synchronous_commit=off: {secs:.2} s, {:.0} commits/s",
        rows as f64 / secs
    );

    // Bulk load through multi-insert, logged and not.
    let bulk = rows * 10;
    let cdb = common::Db {
        pool: Arc::clone(&db.pool),
        txns: Arc::clone(&db.txns),
    };
    for ring in [false, true] {
        let plain = common::create(&cdb, 900_001 + ring as u32).expect("create");
        let logged = common::create(&cdb, 900_011 + ring as u32)
            .expect("create")
            .with_wal(Arc::clone(&db.wal));
        let t_plain = common::load(&cdb, &plain, bulk, ring)
            .expect("load")
            .as_secs_f64();
        let b0 = db.wal.stats().bytes;
        let t = Instant::now();
        common::load(&cdb, &logged, bulk, ring).expect("load");
        db.wal.flush_all().expect("flush");
        let t_logged = t.elapsed().as_secs_f64();
        let bytes = db.wal.stats().bytes - b0;
        println!(
            "multi_insert of {bulk} rows ({}): unlogged {t_plain:.2} s, logged {t_logged:.2} s \
             (+{:.0}%), {:.1} MB of WAL",
            if ring { "bulk-write ring" } else { "cached" },
            (t_logged / t_plain - 1.0) * 100.0,
            bytes as f64 / 1e6
        );
        for r in [plain.rel(), logged.rel()] {
            let _ = db.pool.drop_relation(RelFileNode(r.0));
        }
    }
}
