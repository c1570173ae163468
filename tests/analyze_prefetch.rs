//! ANALYZE's read-ahead changes how the sample's pages are read, never
//! which: for one seed, every `maintenance_io_concurrency` (0, small, the
//! default, more blocks than the table has) gives the same blocks, the same
//! rows in the same reservoir slots and the same statistics, and reads each
//! sampled block exactly once (the buffer counters of a cold pool), for a
//! dense sample (a third of the pages, the default sample's density on 5M
//! pgbench rows), a sparse one and one larger than the table.

use std::sync::atomic::AtomicBool;

use heapdb::catalog::{CatalogView, TableDef};
use heapdb::commands::analyze::{compute_stats, sample_rows, Sample, SampleOptions};
use heapdb::storage::{RelFileNode, StrategyKind};
use heapdb::types::Value;
use heapdb::{Database, Session};

mod common;
use common::run;

const DISTANCES: [usize; 8] = [0, 1, 2, 3, 7, 10, 64, 100_000];

/// pgbench_accounts' shape, 61 rows per page; some NULLs and a deleted
/// row per 50 so the snapshot's judgement matters.
fn load(s: &mut Session, rows: i64) {
    run(
        s,
        "create table acc (aid int, bid int, abalance int, filler char(84))",
    );
    run(
        s,
        &format!(
            "insert into acc select g, (g - 1) / 1000 + 1, \
               case when g % 7 = 0 then null else g % 1000 end, 'f' || (g % 13) \
             from generate_series(1, {rows}) g"
        ),
    );
    run(s, "delete from acc where aid % 50 = 0");
}

fn table(db: &Database, name: &str) -> std::sync::Arc<TableDef> {
    let snap = db.txns.snapshot(0, 0);
    db.catalog
        .tables(&CatalogView {
            snapshot: &snap,
            txns: &db.txns,
            temp_ns: 0,
        })
        .into_iter()
        .find(|t| t.name == name)
        .expect("the table")
}

/// The sample at `distance`, read from a cold pool and OS cache, with the
/// pool's counters of that read.
fn sample(
    db: &Database,
    def: &TableDef,
    targrows: usize,
    distance: usize,
) -> (Sample, heapdb::storage::BufferUsage) {
    db.pool
        .evict_relation(RelFileNode(def.relfilenode))
        .expect("evict");
    let rel = db.relation(def.relfilenode).expect("the heap");
    let snap = db.txns.snapshot(0, 0);
    let ring = db
        .pool
        .ring_with(StrategyKind::Vacuum, &heapdb::storage::RingSizes::default());
    let columns: Vec<usize> = (0..def.columns.len()).collect();
    let opts = SampleOptions {
        targrows,
        prefetch_distance: distance,
        seed: 0x5eed_0a4a,
    };
    let before = db.pool.stats();
    let s = sample_rows(
        &rel,
        def,
        &columns,
        &snap,
        &opts,
        Some(ring),
        &AtomicBool::new(false),
    )
    .expect("sample");
    (s, db.pool.stats().since(&before))
}

fn same_rows(a: &[Vec<Option<Value>>], b: &[Vec<Option<Value>>]) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| {
            x.len() == y.len()
                && x.iter().zip(y).all(|(p, q)| match (p, q) {
                    (None, None) => true,
                    (Some(p), Some(q)) => p == q,
                    _ => false,
                })
        })
}

#[test]
fn every_distance_reads_the_same_sample_once_per_block() {
    let (_d, db) = common::open(4096);
    let mut s = db.session();
    load(&mut s, 48_000);
    let def = table(&db, "acc");
    let nblocks = int(&mut s, "select relation_pages('acc')") as u32;
    assert!(nblocks > 700, "{nblocks} pages");
    let columns: Vec<usize> = (0..def.columns.len()).collect();
    // Dense (one page in 2.6), sparse (one in 26), the whole table.
    for targrows in [300, 30, 5_000] {
        let (first, _) = sample(&db, &def, targrows, 0);
        let want_blocks = (targrows as u32).min(nblocks);
        assert_eq!(first.blocks_read, want_blocks);
        assert_eq!(first.rows, targrows.min(first.live_seen as usize));
        assert!(first.dead_seen > 0, "the deleted rows are seen as dead");
        let first_stats = compute_stats(&first, &def, &columns, 10);
        for d in DISTANCES {
            let (other, io) = sample(&db, &def, targrows, d);
            assert_eq!(
                (
                    other.blocks_read,
                    other.live_seen,
                    other.dead_seen,
                    other.rows
                ),
                (
                    first.blocks_read,
                    first.live_seen,
                    first.dead_seen,
                    first.rows
                ),
                "targrows {targrows}, distance {d}"
            );
            assert_eq!(other.total_rows, first.total_rows);
            assert!(
                same_rows(&other.columns, &first.columns),
                "the same rows in the same slots: targrows {targrows}, distance {d}"
            );
            assert_eq!(compute_stats(&other, &def, &columns, 10), first_stats);
            // Cold pool: every sampled block read once, nothing else.
            assert_eq!(
                (io.shared_read, io.shared_hit),
                (want_blocks as u64, 0),
                "targrows {targrows}, distance {d}"
            );
            // How many requests, and how many reads came before their
            // announcement, depend on the threads' timing; only their bounds
            // do not (a request covers at least one block not in the pool).
            if d == 0 {
                assert_eq!((other.prefetched, other.unannounced), (0, 0), "0: off");
            } else {
                assert!(other.prefetched <= other.blocks_read as u64);
                assert!(other.unannounced <= other.blocks_read as u64);
            }
        }
    }
}

fn int(s: &mut Session, sql: &str) -> i64 {
    let r = run(s, sql);
    let mut out = String::new();
    heapdb::types::format_value(&r.rows[0][0], &mut out);
    out.parse().expect("an integer")
}

/// Through SQL: `ANALYZE VERBOSE` reports the same scan and stores the
/// same statistics at every setting, and its buffer counters count each
/// sampled page once.
#[test]
fn analyze_statements_agree_across_settings() {
    let (_d, db) = common::open(4096);
    let mut s = db.session();
    load(&mut s, 30_000);
    run(&mut s, "set default_statistics_target = 1");
    let all = "select attname, null_frac, avg_width, n_distinct, most_common_vals, \
               most_common_freqs, histogram_bounds from pg_stats('acc') order by attname";
    let mut first: Option<(Vec<String>, Vec<Vec<String>>)> = None;
    // The setting's range ends at 1000 (as PostgreSQL's).
    for d in DISTANCES.map(|d| d.min(1000)) {
        run(&mut s, &format!("set maintenance_io_concurrency = {d}"));
        let r = run(&mut s, "analyze verbose acc");
        let scanned = r
            .notices
            .iter()
            .map(|n| n.message.clone())
            .find(|n| n.contains("scanned"))
            .expect("the VERBOSE scan line");
        // "scanned 300 of 492 pages": the sample is 300 pages.
        assert!(scanned.contains("scanned 300 of "), "{scanned}");
        let io = r.buffers.shared_hit + r.buffers.shared_read;
        assert!(
            (300..=302).contains(&io),
            "each sampled page once (plus the catalog's): {io} at {d}"
        );
        let stats: Vec<Vec<String>> = run(&mut s, all)
            .rows
            .iter()
            .map(|row| {
                row.iter()
                    .map(|v| {
                        let mut out = String::new();
                        heapdb::types::format_value(v, &mut out);
                        out
                    })
                    .collect()
            })
            .collect();
        assert_eq!(stats.len(), 4);
        let now = (r.notices.iter().map(|n| n.message.clone()).collect(), stats);
        match &first {
            None => first = Some(now),
            Some(f) => assert_eq!(&now, f, "distance {d}"),
        }
    }
}
