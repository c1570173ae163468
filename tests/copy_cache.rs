//! A COPY of a table four times `shared_buffers` goes through the
//! bulk-write ring, so the pages of another, cached table stay cached.

use std::io::Write;

use heapdb::settings::Settings;
use heapdb::Database;

#[test]
fn large_copy_leaves_other_tables_cached() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open_with(
        dir.path().join("db"),
        Settings {
            shared_buffers: 256,
            bulkwrite_ring_kb: 256,
            ..Settings::default()
        },
    )
    .unwrap();
    let mut s = db.session();
    s.execute("CREATE TABLE hot (a int, b text)").unwrap();
    s.execute("INSERT INTO hot SELECT g, 'row ' || g FROM generate_series(1, 2000) g")
        .unwrap();
    s.execute("SELECT sum(a) FROM hot").unwrap();
    let warm = s.execute("SELECT sum(a) FROM hot").unwrap();
    assert_eq!(warm.buffers.shared_read, 0, "hot is cached");
    assert!(warm.buffers.shared_hit > 0);

    // About 1100 pages of pgbench_accounts rows: over four times the pool.
    let path = dir.path().join("big.tsv");
    let mut w = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    for i in 0..72_000 {
        writeln!(w, "{i}\t1\t0\t").unwrap();
    }
    w.flush().unwrap();
    drop(w);
    s.execute("CREATE TABLE big (aid int, bid int, abalance int, filler char(84))")
        .unwrap();
    let r = s
        .execute(&format!("COPY big FROM '{}'", path.display()))
        .unwrap();
    assert_eq!(r.tag, "COPY 72000");
    let pages = s.execute("SELECT count(*) FROM big").unwrap();
    assert_eq!(pages.rows[0][0].to_string(), "72000");

    let after = s.execute("SELECT sum(a) FROM hot").unwrap();
    assert_eq!(after.rows[0][0].to_string(), "2001000");
    assert_eq!(
        after.buffers.shared_read, 0,
        "the COPY evicted none of hot's pages"
    );
}
