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
//! 2,000,000 rows; the targets' figures are for `--rows 20000000`, which needs
//! a ~900 MB buffer pool, sized automatically).

#[path = "heap_bench_common/mod.rs"]
mod common;

use heapdb::access::heap::HeapRelation;
use heapdb::txn::{Snapshot, INVALID_XID};

fn count_scan(rel: &HeapRelation, snap: &Snapshot) -> heapdb::Result<(u64, f64, f64)> {
    let (n, wall, cpu) = common::timed(|| -> heapdb::Result<u64> {
        let mut scan = rel.scan(snap)?;
        let mut n = 0;
        while let Some(c) = scan.count_next_page()? {
            n += c;
        }
        Ok(n)
    });
    Ok((n?, wall, cpu))
}

/// Best wall and CPU time of `runs` scans.
fn best_of(
    rel: &HeapRelation,
    snap: &Snapshot,
    rows: u64,
    runs: u32,
) -> heapdb::Result<(f64, f64)> {
    let (mut wall, mut cpu) = (f64::MAX, f64::MAX);
    for _ in 0..runs {
        let (n, w, c) = count_scan(rel, snap)?;
        assert_eq!(n, rows, "wrong count");
        wall = wall.min(w);
        cpu = cpu.min(c);
    }
    Ok((wall, cpu))
}

fn report(label: &str, rows: u64, wall: f64, cpu: f64, pages: u32) {
    let bytes = pages as f64 * 8192.0;
    println!(
        "{label:<34} wall {wall:8.4} s {:7.2} GB/s {:7.1} M rows/s | per CPU-second {:7.2} GB/s",
        bytes / wall / 1e9,
        rows as f64 / wall / 1e6,
        bytes / cpu.max(1e-9) / 1e9
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

    let (wall, cpu) = best_of(&rel, &snap, rows, 1)?;
    report("first scan (sets hint bits)", rows, wall, cpu, pages);
    let (wall, cpu) = best_of(&rel, &snap, rows, 5)?;
    report("hint bits set, not all-visible", rows, wall, cpu, pages);

    let horizon = db.txns.oldest_xmin();
    for b in 0..pages {
        rel.set_all_visible_if(b, horizon)?;
    }
    let (wall, cpu) = best_of(&rel, &snap, rows, 5)?;
    report("all-visible pages", rows, wall, cpu, pages);

    let (n, wall, cpu) = common::timed(|| rel.count(&snap));
    assert_eq!(n?, rows);
    report("count via visibility map", rows, wall, cpu, pages);
    Ok(())
}
