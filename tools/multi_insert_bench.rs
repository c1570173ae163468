//! Multi-insert benchmark: rows per second loading a new heap of four int4
//! columns with `HeapRelation::multi_insert` (batches of 1000 rows, one
//! committed transaction; forming the tuples included), without and with
//! the write-ahead log, cached and through the bulk-write ring, in one run:
//! the logging overhead, which must stay under 25%.
//!
//! Run: `cargo run --release --example multi_insert_bench [-- --rows N]`
//! (default 2,000,000 rows). The database is opened with 128 MiB of
//! `shared_buffers`: "cached" loads into the whole pool (the heap stays
//! resident), "ring" goes through the 16 MiB bulk-write ring as COPY does,
//! so pages are written back (with their checksums, after the log is
//! flushed up to their LSN) while the load runs. Logged loads write the
//! compact multi-insert records (see `wal::record`). Best of three runs of
//! each, interleaved, since the machine may be busy; figures per CPU-second
//! of the loading thread are printed too.

#[path = "heap_bench_common/mod.rs"]
mod common;

use std::sync::Arc;

use heapdb::settings::Settings;
use heapdb::storage::RelFileNode;
use heapdb::Database;

fn main() -> heapdb::Result<()> {
    let rows = common::rows_arg(2_000_000);
    let dir = common::TempDir::new("multi-insert-bench");
    let settings = Settings {
        shared_buffers: 16384,
        ..Settings::default()
    };
    let db = Database::open_with(dir.0.join("db"), settings)?;
    let cdb = common::Db {
        pool: Arc::clone(&db.pool),
        txns: Arc::clone(&db.txns),
    };
    let mut n = 900_000;
    for ring in [false, true] {
        // (wall seconds, CPU seconds), best of three, for unlogged / logged.
        let mut best = [(f64::MAX, f64::MAX); 2];
        let mut pages = 0;
        for _ in 0..3 {
            for (k, logged) in [false, true].into_iter().enumerate() {
                n += 1;
                let mut rel = common::create(&cdb, n)?;
                if logged {
                    rel = rel.with_wal(Arc::clone(&db.wal));
                }
                let cpu0 = common::thread_cpu_secs();
                let took = common::load(&cdb, &rel, rows, ring)?.as_secs_f64();
                let cpu = common::thread_cpu_secs() - cpu0;
                best[k] = (best[k].0.min(took), best[k].1.min(cpu));
                pages = rel.nblocks()?;
                db.pool.drop_relation(RelFileNode(rel.rel().0))?;
            }
        }
        let rate = |secs: f64| rows as f64 / secs / 1e6;
        let [(w0, c0), (w1, c1)] = best;
        println!(
            "{} ({rows} rows, {pages} pages): unlogged {:.2} M rows/s, logged {:.2} M rows/s: \
             logging costs {:+.0}% of the time | per CPU-second {:.2} vs {:.2} M rows/s ({:+.0}%)",
            if ring {
                "bulk-write ring"
            } else {
                "cached        "
            },
            rate(w0),
            rate(w1),
            (w1 / w0 - 1.0) * 100.0,
            rate(c0),
            rate(c1),
            (c1 / c0 - 1.0) * 100.0,
        );
    }
    Ok(())
}
