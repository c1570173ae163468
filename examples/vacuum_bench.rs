//! VACUUM and ANALYZE figures on a pgbench_accounts-like table (issue 7's
//! speed targets; a benchmark that prints, never a test):
//!
//! - `vacuum_fresh`: VACUUM right after the load and a CHECKPOINT (every
//!   page gets hint bits and its visibility-map bit);
//! - `vacuum_clean`: VACUUM again (every page skipped through the VM);
//! - `vacuum_dirty`: VACUUM after deleting one row per page and a
//!   CHECKPOINT (every page pruned, then all-visible again);
//! - `analyze_cold_prefetch` / `analyze_cold_no_prefetch`: ANALYZE after
//!   the table was evicted from the buffer pool and the OS cache, with
//!   `maintenance_io_concurrency` 10 and 0.
//!
//! Usage: `cargo run --release --example vacuum_bench -- [ROWS] [DIR]`
//! (default 1,000,000 rows, about 16,400 pages, in a temporary directory;
//! the figures are for 5,000,000). The PostgreSQL 15 figures the
//! issue quotes for 5M rows: 0.76 s after load, 1.44 s after one delete per
//! page, 1.8 ms clean.

use std::time::Instant;

use heapdb::settings::Settings;
use heapdb::storage::RelFileNode;
use heapdb::types::Value;
use heapdb::{Database, Session};

fn run(s: &mut Session, sql: &str) -> heapdb::QueryResult {
    s.execute(sql).unwrap_or_else(|e| panic!("{sql}: {e}"))
}

fn timed(s: &mut Session, name: &str, sql: &str) {
    let t = Instant::now();
    let r = run(s, sql);
    let el = t.elapsed();
    println!(
        "{name:<26} {:>10.3} ms   hits {:>7} reads {:>7} dirtied {:>7}",
        el.as_secs_f64() * 1000.0,
        r.buffers.shared_hit,
        r.buffers.shared_read,
        r.buffers.shared_dirtied
    );
}

fn int(s: &mut Session, sql: &str) -> i64 {
    match &run(s, sql).rows[0][0] {
        Value::Int8(v) => *v,
        Value::Int4(v) => *v as i64,
        v => panic!("{sql}: {v:?}"),
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let rows: i64 = args
        .next()
        .map(|a| a.parse().expect("ROWS is a number"))
        .unwrap_or(1_000_000);
    let tmp = tempfile::tempdir().expect("temp dir");
    let dir = args
        .next()
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| tmp.path().to_path_buf());
    let db = Database::open_with(
        &dir,
        Settings {
            shared_buffers: 131_072,
            ..Settings::default()
        },
    )
    .expect("open");
    let mut s = db.session();
    run(&mut s, "drop table if exists accounts");
    run(
        &mut s,
        "create table accounts (aid int, bid int, abalance int, filler text)",
    );
    let t = Instant::now();
    run(
        &mut s,
        &format!(
            "insert into accounts select g, (g - 1) / 100000 + 1, 0, repeat(' ', 84) \
             from generate_series(1, {rows}) g"
        ),
    );
    let pages = int(&mut s, "select relation_pages('accounts')");
    println!(
        "loaded {rows} rows, {pages} pages in {:.2} s",
        t.elapsed().as_secs_f64()
    );
    if let Ok(ring) = std::env::var("VACUUM_RING") {
        run(&mut s, &format!("set vacuum_ring_size = '{ring}'"));
    }
    run(&mut s, "checkpoint");
    timed(&mut s, "vacuum_fresh", "vacuum accounts");
    timed(&mut s, "vacuum_clean", "vacuum accounts");
    let per_page = int(
        &mut s,
        "select count(*) from heap_page_items('accounts', 0) where lp_flags = 'NORMAL'",
    );
    run(
        &mut s,
        &format!("delete from accounts where aid % {per_page} = 1"),
    );
    run(&mut s, "checkpoint");
    timed(&mut s, "vacuum_dirty", "vacuum accounts");

    let relfilenode = {
        db.catalog
            .tables(&heapdb::catalog::CatalogView {
                snapshot: &db.txns.snapshot(0, 0),
                txns: &db.txns,
            })
            .into_iter()
            .find(|t| t.name == "accounts")
            .expect("the table")
            .relfilenode
    };
    for (name, distance) in [
        ("analyze_cold_prefetch", 10),
        ("analyze_cold_no_prefetch", 0),
    ] {
        run(&mut s, "checkpoint");
        db.pool
            .evict_relation(RelFileNode(relfilenode))
            .expect("evict");
        run(
            &mut s,
            &format!("set maintenance_io_concurrency = {distance}"),
        );
        timed(&mut s, name, "analyze accounts");
    }
}
