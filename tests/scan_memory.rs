//! The scan's memory target (its ring, no more), by its mechanism: under
//! `bulkread_quarter_rule`, a parallel sequential scan of a table over a
//! quarter of a fresh buffer pool (default
//! `huge_pages = on`) uses one bulk-read ring's worth of buffers in all,
//! split between its participants, and leaves only those frames resident:
//! the frames of a small ring are not huge-paged (a 2 MiB huge page for a
//! 256 kB ring was the whole growth), while frames taken for normal reads
//! are. Measured on the pool itself (`mincore` over its mapping, the
//! descriptors' tags), not on a process's RSS.

use heapdb::storage::{ForkNumber, StrategyKind, BLCKSZ};
use heapdb::types::Value;
use heapdb::{Database, Session};

mod common;

/// 16 MiB of frames: a 256 kB ring is 32 of them, at most an eighth.
const NBUFFERS: i64 = 2048;
/// 60 accounts rows fill a page: this makes 1,200 pages, over a quarter
/// of the pool (so the scan takes a ring) and over
/// `min_parallel_table_scan_size` (so it runs in parallel).
const ROWS: i64 = 72_000;

fn open(dir: &std::path::Path) -> Database {
    common::open_at(dir, NBUFFERS)
}

fn run(s: &mut Session, sql: &str) -> Vec<Vec<Value>> {
    s.execute(sql).unwrap_or_else(|e| panic!("{sql}: {e}")).rows
}

/// Buffers holding a valid main-fork page.
fn main_fork_buffers(db: &Database) -> usize {
    db.pool
        .buffer_summary()
        .iter()
        .filter(|b| b.valid && b.tag.is_some_and(|t| t.fork == ForkNumber::Main))
        .count()
}

#[test]
fn a_parallel_ring_scan_of_four_times_the_pool_keeps_one_ring_resident() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = open(dir.path());
        let mut s = db.session();
        run(
            &mut s,
            "create table acc (aid int not null, bid int, abalance int, filler char(84))",
        );
        run(
            &mut s,
            &format!(
                "insert into acc select g, (g - 1) / 100000 + 1, 0, '' \
                 from generate_series(1, {ROWS}) g"
            ),
        );
        run(&mut s, "create table small (a int)");
        run(&mut s, "insert into small values (1), (2)");
        run(&mut s, "vacuum acc");
        db.checkpoint().unwrap();
    }
    // A fresh pool: nothing resident, no region advised.
    let db = open(dir.path());
    let ring = db.pool.ring(StrategyKind::BulkRead).len();
    assert_eq!(ring, 32);
    let fresh = db.pool.resident_frame_bytes();
    if let Some(r) = fresh {
        assert_eq!(r, 0, "a fresh pool has no frame resident");
    }
    let mut s = db.session();
    // The table (1,200 pages) fits the fresh pool's free buffers, so by
    // default it is read into the pool; this test is about the ring, so it
    // takes PostgreSQL's rule (a ring for anything over a quarter).
    run(&mut s, "set bulkread_quarter_rule = on");
    // Every page is all-visible and inside `aid > 0`: its page summary
    // would answer it unread.
    run(&mut s, "set enable_page_summaries = off");
    let plan = run(
        &mut s,
        "explain (costs off) select count(*) from acc where aid > 0",
    );
    assert!(
        plan.iter()
            .any(|r| matches!(&r[0], Value::Text(t) if t.contains("Parallel Seq Scan on acc"))),
        "{plan:?}"
    );
    assert_eq!(
        run(&mut s, "select count(*) from acc where aid > 0"),
        [[Value::Int8(ROWS)]]
    );
    // Three participants (the leader and two workers) took a third of the
    // ring each, not a ring each: every buffer the scan used still holds
    // its last page.
    let used = main_fork_buffers(&db);
    assert!(used <= ring, "{used} buffers used by the scan, ring {ring}");
    assert!(used >= 10, "{used}: at least one participant's share");
    if let Some(r) = db.pool.resident_frame_bytes() {
        assert!(
            r <= ring * BLCKSZ,
            "{r} bytes of frames resident after the scan, ring {} bytes",
            ring * BLCKSZ
        );
        assert!(r >= used * BLCKSZ, "{r} bytes resident, {used} frames used");
    }
    assert_eq!(
        db.pool.huge_regions_advised(),
        0,
        "ring frames only: no region asks for huge pages"
    );
    // The next scans' rings start from the buffers the last one left, so
    // what is resident stays within one ring however the participants
    // share the work. (Not "the same buffers again": a participant that
    // found no chunk left in one scan took no buffers, and may need its
    // share in the next; the ring as a whole stays the bound. Without the
    // hand-back each scan took at least a share of fresh frames.)
    for _ in 0..3 {
        assert_eq!(
            run(&mut s, "select count(*) from acc where aid > 0"),
            [[Value::Int8(ROWS)]]
        );
        let now = main_fork_buffers(&db);
        assert!(now <= ring, "{now} buffers used by the scans, ring {ring}");
        if let Some(r) = db.pool.resident_frame_bytes() {
            assert!(r <= ring * BLCKSZ, "{r} bytes resident after the scans");
        }
    }
    let used = main_fork_buffers(&db);
    // A bare count(*) of the vacuumed table reads only visibility-map
    // pages: they take frames but ask for no huge page either.
    let before = db.pool.resident_frame_bytes();
    assert_eq!(
        run(&mut s, "select count(*) from acc"),
        [[Value::Int8(ROWS)]]
    );
    assert_eq!(main_fork_buffers(&db), used, "no heap page read");
    assert_eq!(db.pool.huge_regions_advised(), 0);
    if let (Some(a), Some(b)) = (before, db.pool.resident_frame_bytes()) {
        assert!(b - a <= 2 * BLCKSZ, "{} bytes for the map pages", b - a);
    }
    // A normal read (a table under a quarter of the pool: no ring) takes a
    // frame for good and asks for huge pages for its region.
    assert_eq!(
        run(&mut s, "select count(*) from small where a > 0"),
        [[Value::Int8(2)]]
    );
    assert_eq!(db.pool.huge_regions_advised(), 1);
}

/// Ring sizes are each session's own: two sessions of one database with
/// different `bulkread_ring_size`s, statements interleaved, each scan
/// leaves at most its own session's ring of the table in the pool (a
/// setting changed or committed by one session never resizes the other's
/// rings).
#[test]
fn sessions_sharing_a_pool_scan_through_their_own_ring_sizes() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = open(dir.path());
        let mut s = db.session();
        run(
            &mut s,
            "create table acc (aid int not null, bid int, abalance int, filler char(84))",
        );
        run(
            &mut s,
            &format!("insert into acc select g, 1, 0, '' from generate_series(1, {ROWS}) g"),
        );
        db.checkpoint().unwrap();
    }
    let db = open(dir.path());
    let (mut a, mut b) = (db.session(), db.session());
    for (s, ring) in [(&mut a, "64kB"), (&mut b, "1MB")] {
        run(s, "set bulkread_quarter_rule = on");
        run(s, "set max_parallel_workers_per_gather = 0");
        run(s, "set enable_page_summaries = off");
        run(s, &format!("set bulkread_ring_size = '{ring}'"));
    }
    let sum = [[Value::Int8(ROWS * (ROWS + 1) / 2)]];
    let sum_sql = "select sum(aid) from acc";
    // `a` scans after `b` last changed and committed its settings: 8
    // buffers of its own ring, not `b`'s 128.
    assert_eq!(run(&mut a, sum_sql), sum);
    let small = main_fork_buffers(&db);
    assert!(small <= 8, "{small} buffers after a 64kB-ring scan");
    assert!(small >= 4, "{small}: the ring was used");
    assert_eq!(run(&mut b, sum_sql), sum);
    let big = main_fork_buffers(&db);
    assert!(
        (100..=128 + 8).contains(&big),
        "{big} buffers after a 1MB-ring scan"
    );
    // And back: `a` reuses buffers the big ring gave back, taking none
    // beyond them.
    assert_eq!(run(&mut a, sum_sql), sum);
    let after = main_fork_buffers(&db);
    assert!(
        after <= big,
        "{after} buffers after `a` again, {big} before"
    );
}
