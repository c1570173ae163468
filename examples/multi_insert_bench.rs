//! Multi-insert benchmark: rows per second loading a new heap of four int4
//! columns with `HeapRelation::multi_insert` (batches of 1000 rows, a
//! bulk-write ring, one committed transaction; forming the tuples included).
//!
//! Run: `cargo run --release --example multi_insert_bench [-- --rows N]`
//! (default 2,000,000 rows; the figure is for `--rows 20000000`).
//! The buffer pool is 128 MiB (the default `shared_buffers`), and the load
//! goes through the 16 MiB bulk-write ring, so pages are written back (with
//! their checksums) as PostgreSQL's COPY does; `NO_RING=1` loads into the
//! whole pool instead, to see the cost of that write-back.

#[path = "heap_bench_common/mod.rs"]
mod common;

fn main() -> heapdb::Result<()> {
    let rows = common::rows_arg(2_000_000);
    let dir = common::TempDir::new("multi-insert-bench");
    let db = common::open(&dir.0, 16384)?;
    let mut best = f64::MAX;
    for run in 0..3u32 {
        let rel = common::create(&db, 16384 + run)?;
        let cpu0 = common::thread_cpu_secs();
        let took = common::load(&db, &rel, rows, std::env::var("NO_RING").is_err())?.as_secs_f64();
        let cpu = common::thread_cpu_secs() - cpu0;
        let pages = rel.nblocks()?;
        println!(
            "run {run}: {rows} rows into {pages} pages in {took:.3} s: {:.2} M rows/s, {:.0} MB/s of heap \
             | per CPU-second: {:.2} M rows/s",
            rows as f64 / took / 1e6,
            pages as f64 * 8192.0 / took / 1e6,
            rows as f64 / cpu.max(1e-9) / 1e6
        );
        best = best.min(took);
        db.pool.drop_relation(rel.rel())?;
    }
    println!("best: {:.2} M rows/s", rows as f64 / best / 1e6);
    Ok(())
}
