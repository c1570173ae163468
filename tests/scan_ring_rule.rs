//! When a sequential scan goes through the bulk-read ring, end to end: a
//! table over a quarter of `shared_buffers` that fits in the pool's free
//! buffers is cached by its first scan (the second reads nothing); one
//! that would evict pages in use still takes the ring and leaves a hot
//! table cached; `bulkread_quarter_rule` restores PostgreSQL's rule.

use heapdb::{Database, Session};

mod common;

/// 1,024 buffers: 8 MB.
const POOL: i64 = 1024;

fn open(dir: &std::path::Path) -> Database {
    common::open_at(&dir.join("db"), POOL)
}

/// Creates `name` with `rows` pgbench_accounts-like rows (61 a page).
fn load(s: &mut Session, name: &str, rows: i64) {
    s.execute(&format!(
        "CREATE TABLE {name} (aid int, bid int, abalance int, filler char(84))"
    ))
    .unwrap();
    s.execute(&format!(
        "INSERT INTO {name} SELECT g, g % 10, 0, '' FROM generate_series(1, {rows}) g"
    ))
    .unwrap();
}

/// Runs `sum(aid)` over `name`; returns (shared_hit, shared_read).
fn scan(s: &mut Session, name: &str, rows: i64) -> (u64, u64) {
    let r = s.execute(&format!("SELECT sum(aid) FROM {name}")).unwrap();
    assert_eq!(
        r.rows[0][0].to_string(),
        (rows * (rows + 1) / 2).to_string()
    );
    (r.buffers.shared_hit, r.buffers.shared_read)
}

#[test]
fn a_table_that_fits_the_free_pool_is_cached_by_one_scan() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let mut s = db.session();
    // About 770 pages: three quarters of the pool.
    const ROWS: i64 = 47_000;
    load(&mut s, "t", ROWS);

    // PostgreSQL's rule: through the ring every time.
    s.execute("SET bulkread_quarter_rule = on").unwrap();
    scan(&mut s, "t", ROWS);
    let (hit, read) = scan(&mut s, "t", ROWS);
    assert!(hit + read >= 700, "{hit} hits, {read} reads");
    assert!(read >= 500, "quarter rule: the second scan reads ({read})");

    // The default rule: the first scan reads it into the pool.
    s.execute("RESET bulkread_quarter_rule").unwrap();
    scan(&mut s, "t", ROWS);
    let (hit, read) = scan(&mut s, "t", ROWS);
    assert_eq!(read, 0, "cached by one scan ({hit} hits)");
    assert!(hit >= 700, "{hit} hits");
}

#[test]
fn a_table_that_would_evict_pages_in_use_takes_the_ring() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let mut s = db.session();
    // About 330 pages, read often: hot.
    const HOT: i64 = 20_000;
    load(&mut s, "hot", HOT);
    for _ in 0..4 {
        scan(&mut s, "hot", HOT);
    }
    let (_, read) = scan(&mut s, "hot", HOT);
    assert_eq!(read, 0, "hot is cached");
    // About 1,000 pages: under the pool's size, over what is left of it.
    const BIG: i64 = 61_000;
    load(&mut s, "big", BIG);
    for _ in 0..2 {
        let (hit, read) = scan(&mut s, "big", BIG);
        assert!(read >= 500, "through the ring: {hit} hits, {read} reads");
    }
    let (hit, read) = scan(&mut s, "hot", HOT);
    assert_eq!(read, 0, "the big scans evicted none of hot ({hit} hits)");
}

#[test]
fn scans_read_missing_pages_in_runs_and_cached_pages_alone() {
    use heapdb::storage::{BufferPool, BufferUsage, ForkNumber, RelFileNode, READ_RUN};
    const REL: RelFileNode = RelFileNode(7);
    let dir = tempfile::tempdir().unwrap();
    let pool = BufferPool::open(dir.path(), 128).unwrap();
    pool.create_relation(REL, ForkNumber::Main).unwrap();
    for _ in 0..40 {
        let (block, buf) = pool.extend(REL, ForkNumber::Main, None).unwrap();
        let mut g = buf.write();
        g[64..68].copy_from_slice(&block.to_le_bytes());
        g[24] = 1;
        g.mark_dirty();
    }
    pool.flush_all().unwrap();
    pool.evict_relation(REL).unwrap();
    let mut out = Vec::new();
    let before = BufferUsage::current();
    pool.read_buffers_recent(REL, ForkNumber::Main, 0, 32, &[], None, &mut out)
        .unwrap();
    let d = BufferUsage::current().since(&before);
    assert_eq!(out.len(), READ_RUN, "a missing page starts a run");
    assert_eq!((d.shared_read, d.shared_hit), (READ_RUN as u64, 0));
    for (i, b) in out.iter().enumerate() {
        assert_eq!(b.block(), i as u32);
        let g = b.read();
        assert_eq!(u32::from_le_bytes(g[64..68].try_into().unwrap()), i as u32);
    }
    out.clear();
    pool.read_buffers_recent(REL, ForkNumber::Main, 3, 32, &[], None, &mut out)
        .unwrap();
    assert_eq!(out.len(), 1, "a cached page is pinned alone");
    assert_eq!(out[0].block(), 3);
    out.clear();
    // Near the end the run stops at the relation's last block.
    pool.read_buffers_recent(REL, ForkNumber::Main, 36, 32, &[], None, &mut out)
        .unwrap();
    let blocks: Vec<u32> = out.iter().map(|b| b.block()).collect();
    assert_eq!(blocks, [36, 37, 38, 39]);
}
