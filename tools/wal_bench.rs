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
//! `cargo run --release --example wal_bench [-- --rows N] [--bulk M]` (N
//! scales 1 to 3, M is 4's row count).

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

/// `--bulk N` from the command line, else 1,000,000.
fn bulk_arg() -> u64 {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == "--bulk")
        .and_then(|i| args.get(i + 1))
        .and_then(|s| s.replace('_', "").parse().ok())
        .unwrap_or(1_000_000)
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

    // Bulk load through multi-insert, logged and not: the load itself, then
    // making it durable (unlogged: fsync the heap; logged: flush the log).
    let bulk = bulk_arg();
    let cdb = common::Db {
        pool: Arc::clone(&db.pool),
        txns: Arc::clone(&db.txns),
    };
    // Best of three runs each: the machine may be busy.
    let mut n = 900_000;
    for ring in [false, true] {
        let (mut t_plain, mut t_logged, mut d_plain, mut d_logged, mut bytes) =
            (f64::MAX, f64::MAX, f64::MAX, f64::MAX, 0);
        let mut t_fresh = f64::MAX;
        for _ in 0..3 {
            n += 2;
            let plain = common::create(&cdb, n).expect("create");
            let logged = common::create(&cdb, n + 1)
                .expect("create")
                .with_wal(Arc::clone(&db.wal));
            let t = common::load(&cdb, &plain, bulk, ring).expect("load");
            t_plain = t_plain.min(t.as_secs_f64());
            let t = Instant::now();
            db.pool.flush_relation(plain.rel()).expect("flush");
            d_plain = d_plain.min(t.elapsed().as_secs_f64());
            let b0 = db.wal.stats().bytes;
            let t = common::load(&cdb, &logged, bulk, ring).expect("load");
            t_logged = t_logged.min(t.as_secs_f64());
            let t = Instant::now();
            db.wal.flush_all().expect("flush");
            d_logged = d_logged.min(t.elapsed().as_secs_f64());
            bytes = db.wal.stats().bytes - b0;
            // Created in the loading transaction: not logged, fsynced at commit.
            let fresh = common::create(&cdb, n + 2)
                .expect("create")
                .with_wal(Arc::clone(&db.wal));
            fresh.skip_wal_for(db.txns.next_xid());
            let t = Instant::now();
            common::load(&cdb, &fresh, bulk, ring).expect("load");
            db.pool.flush_relation(fresh.rel()).expect("flush");
            t_fresh = t_fresh.min(t.elapsed().as_secs_f64());
            for r in [plain.rel(), logged.rel(), fresh.rel()] {
                let _ = db.pool.drop_relation(RelFileNode(r.0));
            }
            n += 1;
        }
        println!(
            "multi_insert of {bulk} rows ({}, best of 3): unlogged {t_plain:.3} s, logged {t_logged:.3} s \
             (+{:.0}%), {:.1} MB of WAL; then durable: heap fsync {d_plain:.3} s, WAL flush {d_logged:.3} s",
            if ring { "bulk-write ring" } else { "cached" },
            (t_logged / t_plain - 1.0) * 100.0,
            bytes as f64 / 1e6
        );
        println!(
            "  into a table created in the same transaction (no WAL, fsync at commit): {t_fresh:.3} s \
             load + fsync, vs {:.3} s unlogged and {:.3} s logged (load + making it durable)",
            t_plain + d_plain,
            t_logged + d_logged
        );
    }
}
