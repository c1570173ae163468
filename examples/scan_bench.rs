//! Scan benchmark: a page-at-a-time count of the visible tuples of a cached
//! heap of four int4 columns, on one core.
//!
//! Three figures, each the best of several runs over the whole heap:
//! - the first scan after loading (consults the commit log, sets hint bits);
//! - hint bits set, no page ALL_VISIBLE (per-tuple visibility checks);
//! - every page ALL_VISIBLE (counts line pointers, no tuple touched);
//!
//! plus `count` through the visibility map (sums VM counts, reads no heap
//! page). Throughput is heap bytes (pages x 8 KiB) per second.
//!
//! Run: `cargo run --release --example scan_bench [-- --rows N]` (default
//! 2,000,000 rows; the figures are for `--rows 20000000`, which needs
//! a ~900 MB buffer pool, sized automatically).

#[path = "heap_bench_common/mod.rs"]
mod common;

use std::time::Instant;

use heapdb::access::heap::HeapRelation;
use heapdb::txn::{Snapshot, INVALID_XID};

fn count_scan(rel: &HeapRelation, snap: &Snapshot) -> heapdb::Result<(u64, f64)> {
    let t = Instant::now();
    let mut scan = rel.scan(snap)?;
    let mut n = 0;
    while let Some(c) = scan.count_next_page()? {
        n += c;
    }
    Ok((n, t.elapsed().as_secs_f64()))
}

fn report(label: &str, rows: u64, n: u64, secs: f64, pages: u32) {
    assert_eq!(n, rows, "{label}: wrong count");
    println!(
        "{label:<40} {secs:8.4} s  {:7.2} GB/s  {:7.1} M rows/s",
        pages as f64 * 8192.0 / secs / 1e9,
        rows as f64 / secs / 1e6
    );
}

fn main() -> heapdb::Result<()> {
    let rows = common::rows_arg(2_000_000);
    let dir = common::TempDir::new("scan-bench");
    let nbuffers = common::pages_for(rows) + 1024;
    let db = common::open(&dir.0, nbuffers)?;
    let rel = common::create(&db, 16384)?;
    let load = common::load(&db, &rel, rows, false)?;
    let pages = rel.nblocks()?;
    println!(
        "loaded {rows} rows, {pages} pages ({:.0} MB) in {:.2} s; buffer pool {} pages",
        pages as f64 * 8192.0 / 1e6,
        load.as_secs_f64(),
        nbuffers
    );
    let snap = db.txns.snapshot(INVALID_XID, 0);

    let (n, secs) = count_scan(&rel, &snap)?;
    report("first scan (sets hint bits)", rows, n, secs, pages);
    let mut best = f64::MAX;
    for _ in 0..5 {
        let (n, secs) = count_scan(&rel, &snap)?;
        assert_eq!(n, rows);
        best = best.min(secs);
    }
    report("hint bits set, not all-visible", rows, rows, best, pages);

    let horizon = db.txns.oldest_xmin();
    for b in 0..pages {
        rel.set_all_visible_if(b, horizon)?;
    }
    let mut best = f64::MAX;
    for _ in 0..5 {
        let (n, secs) = count_scan(&rel, &snap)?;
        assert_eq!(n, rows);
        best = best.min(secs);
    }
    report("all-visible pages", rows, rows, best, pages);

    let t = Instant::now();
    let n = rel.count(&snap)?;
    report(
        "count via visibility map",
        rows,
        n,
        t.elapsed().as_secs_f64(),
        pages,
    );
    Ok(())
}
