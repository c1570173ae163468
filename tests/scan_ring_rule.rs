//! When a sequential scan goes through the bulk-read ring, end to end: a
//! table over a quarter of `shared_buffers` that fits in the pool's free
//! buffers is cached by its first scan (the second reads nothing); one
//! that would evict pages in use still takes the ring and leaves a hot
//! table cached; `bulkread_quarter_rule` restores PostgreSQL's rule.

use heapdb::settings::Settings;
use heapdb::{Database, Session};

/// 1,024 buffers: 8 MB.
const POOL: i64 = 1024;

fn open(dir: &std::path::Path) -> Database {
    Database::open_with(
        dir.join("db"),
        Settings {
            shared_buffers: POOL,
            ..Settings::default()
        },
    )
    .unwrap()
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
