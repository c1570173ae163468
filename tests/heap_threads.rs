//! Four threads inserting and scanning one heap at once: no row lost, no
//! torn tuple, each scan sees a consistent set of committed rows.

mod heap_common;

use std::sync::Arc;

use heap_common::*;

#[test]
fn four_threads_insert_and_scan_concurrently() {
    let dir = tempfile::tempdir().unwrap();
    // A small pool so pages are evicted and re-read while threads work.
    let db = Arc::new(Db::open(dir.path(), 32));
    let rel = Arc::new(db.create(200));
    const PER_THREAD: i32 = 3000;
    const BATCH: i32 = 100;
    let handles: Vec<_> = (0..4)
        .map(|t| {
            let (db, rel) = (Arc::clone(&db), Arc::clone(&rel));
            std::thread::spawn(move || {
                let mut last_seen = 0usize;
                for batch in 0..PER_THREAD / BATCH {
                    let x = db.txns.begin().unwrap();
                    for i in 0..BATCH {
                        // Rows are multiples of 4 so the four columns stay distinct.
                        let v = (t * PER_THREAD + batch * BATCH + i) * 4;
                        rel.insert(&row(v), x, 0).unwrap();
                    }
                    db.txns.commit(x).unwrap();
                    // Scan: every row seen is whole (first_col checks), and the
                    // count never goes down and includes our own commits.
                    let seen = values(&rel, &db.snap());
                    assert!(seen.len() >= last_seen, "rows disappeared");
                    assert!(seen.len() >= ((batch + 1) * BATCH) as usize);
                    let mut dedup = seen.clone();
                    dedup.dedup();
                    assert_eq!(dedup.len(), seen.len(), "a row seen twice");
                    last_seen = seen.len();
                    if batch % 5 == 0 {
                        assert!(rel.count(&db.snap()).unwrap() as usize >= last_seen);
                    }
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let all = values(&rel, &db.snap());
    assert_eq!(all, (0..4 * PER_THREAD).map(|v| v * 4).collect::<Vec<_>>());
}
