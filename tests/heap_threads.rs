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

/// Four threads updating the same 20 rows: conflicts are detected (wait for
/// the other writer, then follow the new version), no update is lost, and
/// the heap spills onto new pages (cross-page updates lock two pages).
#[test]
fn four_threads_updating_the_same_rows_lose_no_update() {
    use heapdb::access::heap::{Tid, TmResult};
    use std::sync::Mutex;
    let dir = tempfile::tempdir().unwrap();
    let db = Arc::new(Db::open(dir.path(), 32));
    let rel = Arc::new(db.create(201));
    let a = db.txns.begin().unwrap();
    let tids: Vec<Tid> = (0..20)
        .map(|_| rel.insert(&row(0), a, 0).unwrap())
        .collect();
    db.txns.commit(a).unwrap();
    let latest = Arc::new(Mutex::new(tids));
    // A transaction running throughout holds the horizon back, so no
    // update prunes the page (every old version stays recently dead) and
    // the versions spill onto other pages.
    let hold = db.txns.begin().unwrap();
    const UPDATES: u32 = 150;
    let handles: Vec<_> = (0..4u32)
        .map(|t| {
            let (db, rel, latest) = (Arc::clone(&db), Arc::clone(&rel), Arc::clone(&latest));
            std::thread::spawn(move || {
                for i in 0..UPDATES {
                    let slot = ((i * 7 + t * 3) % 20) as usize;
                    let x = db.txns.begin().unwrap();
                    let mut tid = latest.lock().unwrap()[slot];
                    loop {
                        // Read the version we are replacing (any committed state is fine
                        // for the check below: it only needs the value).
                        let cur = rel.fetch(tid, &db.snap_in(x, 0), first_col).unwrap();
                        let (res, new) = match cur {
                            Some(v) => rel.update(tid, &row(v + 4), x, 0).unwrap(),
                            None => (TmResult::Invisible, None),
                        };
                        match res {
                            TmResult::Ok => {
                                db.txns.commit(x).unwrap();
                                let mut l = latest.lock().unwrap();
                                let new = new.unwrap();
                                // Keep the newest tid: another thread may have published a later one.
                                if l[slot] == tid {
                                    l[slot] = new;
                                }
                                break;
                            }
                            TmResult::BeingModified(other) => db.txns.wait_for(other),
                            TmResult::Updated(b, o) => {
                                tid = Tid {
                                    block: b,
                                    offset: o,
                                }
                            }
                            TmResult::Invisible => {
                                // Our fresh snapshot no longer sees this version: a
                                // committed update replaced it; follow its ctid.
                                let (_, items) = rel.inspect_page(tid.block).unwrap();
                                let h = items[tid.offset as usize - 1].tuple.clone().unwrap();
                                assert_ne!(h.ctid, tid.pair(), "rows are never deleted here");
                                tid = Tid {
                                    block: h.ctid.0,
                                    offset: h.ctid.1,
                                };
                            }
                            other => panic!("unexpected {other:?}"),
                        }
                    }
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    db.txns.commit(hold).unwrap();
    let vals = values(&rel, &db.snap());
    assert_eq!(vals.len(), 20, "one live version per row");
    let total: i32 = vals.iter().map(|v| v / 4).sum();
    assert_eq!(total, 4 * UPDATES as i32, "an update was lost");
    assert!(
        rel.nblocks().unwrap() > 1,
        "versions spilled onto more pages"
    );
}

#[test]
fn threads_setting_map_bits_of_a_relation_without_a_map_add_one_map_page() {
    // VACUUM's participants set their first map bits at about the same
    // moment, on a table whose map fork does not exist yet: the fork must
    // come out one page long (two racing extensions made it two, and
    // VERBOSE's "dirtied" one higher than a serial pass's).
    use heapdb::storage::ForkNumber;
    let dir = tempfile::tempdir().unwrap();
    let db = Arc::new(Db::open(dir.path(), 256));
    for round in 0..40u32 {
        let rel = Arc::new(db.create(300 + round));
        let x = db.txns.begin().unwrap();
        // Four pages of rows.
        let mut v = 0;
        while rel.nblocks().unwrap() < 4 {
            rel.insert(&row(v * 4), x, 0).unwrap();
            v += 1;
        }
        db.txns.commit(x).unwrap();
        let horizon = db.txns.oldest_xmin();
        let start = Arc::new(std::sync::Barrier::new(4));
        let handles: Vec<_> = (0..4u32)
            .map(|b| {
                let (rel, start) = (Arc::clone(&rel), Arc::clone(&start));
                std::thread::spawn(move || {
                    start.wait();
                    rel.set_all_visible_if(b, horizon).unwrap()
                })
            })
            .collect();
        for h in handles {
            assert!(h.join().unwrap().is_some(), "every page is all-visible");
        }
        assert_eq!(
            db.pool
                .nblocks(rel.rel(), ForkNumber::VisibilityMap)
                .unwrap(),
            1,
            "round {round}: one map page"
        );
    }
}
