//! Pruning: dead versions removed, HOT chains shortened to a redirect, rows
//! still found by their original tuple id, freed space reused.

mod heap_common;

use heap_common::*;
use heapdb::access::heap::{Tid, TmResult};

fn lp_flags(rel: &heapdb::access::heap::HeapRelation, block: u32) -> Vec<&'static str> {
    rel.inspect_page(block)
        .unwrap()
        .1
        .iter()
        .map(|i| i.lp_flags)
        .collect()
}

#[test]
fn hot_chain_collapses_to_a_redirect_and_the_root_tid_still_works() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), 32);
    let rel = db.create(300);
    let a = db.txns.begin().unwrap();
    let root = rel.insert(&row(0), a, 0).unwrap();
    let other = rel.insert(&row(100), a, 0).unwrap();
    db.txns.commit(a).unwrap();
    // A snapshot from before the updates keeps the versions it may see.
    let old = db.snap();
    db.txns.register_snapshot(&old);
    // Three committed HOT updates: versions at lp 3, 4, 5.
    let mut cur = root;
    for v in 1..=3 {
        let u = db.txns.begin().unwrap();
        let (res, new) = rel.update(cur, &row(v * 4), u, 0).unwrap();
        assert_eq!(res, TmResult::Ok);
        cur = new.unwrap();
        db.txns.commit(u).unwrap();
    }
    assert_eq!(
        cur,
        Tid {
            block: 0,
            offset: 5
        }
    );
    let stats = rel.prune_page(0, db.txns.oldest_xmin(), false).unwrap();
    assert_eq!(stats.removed, 0, "{stats:?}");
    assert_eq!(values(&rel, &old), vec![0, 100]);
    db.txns.unregister_snapshot(&old);

    let stats = rel.prune_page(0, db.txns.oldest_xmin(), false).unwrap();
    assert_eq!((stats.removed, stats.redirected, stats.dead), (3, 1, 0));
    assert_eq!(stats.freed, 3 * 40);
    assert_eq!(
        lp_flags(&rel, 0),
        vec!["REDIRECT", "NORMAL", "UNUSED", "UNUSED", "NORMAL"]
    );
    assert_eq!(values(&rel, &db.snap()), vec![12, 100]);
    assert_eq!(rel.fetch(other, &db.snap(), first_col).unwrap(), Some(100));
    // Pruning again finds nothing.
    assert_eq!(
        rel.prune_page(0, db.txns.oldest_xmin(), false)
            .unwrap()
            .removed,
        0
    );
    // Updating the latest version continues the chain; freed slots are reused.
    let u = db.txns.begin().unwrap();
    let (res, new) = rel.update(cur, &row(16), u, 0).unwrap();
    assert_eq!(res, TmResult::Ok);
    assert_eq!(
        new.unwrap(),
        Tid {
            block: 0,
            offset: 3
        },
        "first UNUSED line pointer reused"
    );
    db.txns.commit(u).unwrap();
    assert_eq!(values(&rel, &db.snap()), vec![16, 100]);
    let stats = rel.prune_page(0, db.txns.oldest_xmin(), false).unwrap();
    assert_eq!((stats.removed, stats.redirected), (1, 1));
    let (_, items) = rel.inspect_page(0).unwrap();
    assert_eq!((items[0].lp_flags, items[0].lp_off), ("REDIRECT", 3));
}

#[test]
fn deleted_and_aborted_rows_are_removed() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), 32);
    let rel = db.create(301);
    let a = db.txns.begin().unwrap();
    let tids: Vec<Tid> = (0..4)
        .map(|v| rel.insert(&row(v * 4), a, 0).unwrap())
        .collect();
    db.txns.commit(a).unwrap();
    let d = db.txns.begin().unwrap();
    assert_eq!(rel.delete(tids[1], d, 0).unwrap(), TmResult::Ok);
    db.txns.commit(d).unwrap();
    let b = db.txns.begin().unwrap();
    rel.insert(&row(1000), b, 0).unwrap();
    // An aborted HOT update leaves a dead heap-only tuple no chain reaches.
    assert_eq!(
        rel.update(tids[2], &row(2000), b, 0).unwrap().0,
        TmResult::Ok
    );
    db.txns.abort(b).unwrap();
    // A running deleter keeps its row.
    let r = db.txns.begin().unwrap();
    assert_eq!(rel.delete(tids[3], r, 0).unwrap(), TmResult::Ok);

    let stats = rel.prune_page(0, db.txns.oldest_xmin(), false).unwrap();
    assert_eq!((stats.removed, stats.dead), (3, 2), "{stats:?}");
    assert_eq!(
        lp_flags(&rel, 0),
        vec!["NORMAL", "DEAD", "NORMAL", "NORMAL", "DEAD"]
    );
    db.txns.abort(r).unwrap();
    assert_eq!(values(&rel, &db.snap()), vec![0, 8, 12]);
    // The row whose update aborted can be updated again, across no stale HOT link.
    let u = db.txns.begin().unwrap();
    assert_eq!(rel.update(tids[2], &row(20), u, 0).unwrap().0, TmResult::Ok);
    db.txns.commit(u).unwrap();
    assert_eq!(values(&rel, &db.snap()), vec![0, 12, 20]);

    // Without indexes, dead line pointers become UNUSED (trailing ones trimmed).
    let stats = rel.prune_page(0, db.txns.oldest_xmin(), true).unwrap();
    assert_eq!(stats.removed, 1);
    let flags = lp_flags(&rel, 0);
    assert_eq!(flags[1], "UNUSED");
    assert_eq!(flags[2], "REDIRECT");
    assert_eq!(values(&rel, &db.snap()), vec![0, 12, 20]);
    assert_eq!(rel.count(&db.snap()).unwrap(), 3);
}

/// A golden dump of one page through a small history: the page's story at a
/// glance (line pointers, xmin/xmax, command ids, ctids, hint bits).
#[test]
fn page_dump_through_insert_update_delete_scan_and_prune() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), 16);
    let rel = db.create(302);
    let a = db.txns.begin().unwrap(); // 3
    let t1 = rel.insert(&row(0), a, 0).unwrap();
    let t2 = rel.insert(&row(4), a, 1).unwrap();
    db.txns.commit(a).unwrap();
    let b = db.txns.begin().unwrap(); // 4
    rel.update(t1, &row(8), b, 0).unwrap();
    rel.delete(t2, b, 1).unwrap();
    db.txns.commit(b).unwrap();
    let c = db.txns.begin().unwrap(); // 5
    rel.insert(&row(12), c, 0).unwrap();
    db.txns.abort(c).unwrap();
    // The writers set the xmin hints they needed; the scan sets the rest.
    assert_eq!(
        rel.dump_page(0).unwrap(),
        "page lower=40 upper=8032 flags=- prune_xid=4
  1 NORMAL   off=8152 len=40 xmin=3 xmax=4 cid=0 ctid=(0,3) XMIN_COMMITTED|HOT_UPDATED
  2 NORMAL   off=8112 len=40 xmin=3 xmax=4 cid=1 ctid=(0,2) XMIN_COMMITTED
  3 NORMAL   off=8072 len=40 xmin=4 xmax=0 cid=0 ctid=(0,3) XMAX_INVALID|UPDATED|HEAP_ONLY
  4 NORMAL   off=8032 len=40 xmin=5 xmax=0 cid=0 ctid=(0,4) XMAX_INVALID
"
    );
    assert_eq!(values(&rel, &db.snap()), vec![8]);
    assert_eq!(
        rel.dump_page(0).unwrap(),
        "page lower=40 upper=8032 flags=- prune_xid=4
  1 NORMAL   off=8152 len=40 xmin=3 xmax=4 cid=0 ctid=(0,3) XMIN_COMMITTED|XMAX_COMMITTED|HOT_UPDATED
  2 NORMAL   off=8112 len=40 xmin=3 xmax=4 cid=1 ctid=(0,2) XMIN_COMMITTED|XMAX_COMMITTED
  3 NORMAL   off=8072 len=40 xmin=4 xmax=0 cid=0 ctid=(0,3) XMIN_COMMITTED|XMAX_INVALID|UPDATED|HEAP_ONLY
  4 NORMAL   off=8032 len=40 xmin=5 xmax=0 cid=0 ctid=(0,4) XMIN_INVALID|XMAX_INVALID
"
    );
    rel.prune_page(0, db.txns.oldest_xmin(), false).unwrap();
    assert_eq!(
        rel.dump_page(0).unwrap(),
        "page lower=40 upper=8152 flags=- prune_xid=0
  1 REDIRECT -> 3
  2 DEAD
  3 NORMAL   off=8152 len=40 xmin=4 xmax=0 cid=0 ctid=(0,3) XMIN_COMMITTED|XMAX_INVALID|UPDATED|HEAP_ONLY
  4 DEAD
"
    );
}

/// Pruning keeps the page's prune hint at the oldest xmax of the deleted or
/// updated versions it had to keep (PostgreSQL's `new_prune_xid`), so a
/// later pruning is tried once they are dead, and not before; with none
/// kept the hint is cleared. Redo gives the page the same hint.
#[test]
fn pruning_keeps_the_oldest_xmax_of_the_versions_it_keeps() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), 16);
    let rel = db.create(303);
    let a = db.txns.begin().unwrap();
    let t1 = rel.insert(&row(0), a, 0).unwrap();
    let t2 = rel.insert(&row(4), a, 0).unwrap();
    db.txns.commit(a).unwrap();
    // t1's delete is dead to everyone once committed...
    let d1 = db.txns.begin().unwrap();
    rel.delete(t1, d1, 0).unwrap();
    db.txns.commit(d1).unwrap();
    // ...t2's is seen by a snapshot taken before it committed.
    let old = db.snap();
    db.txns.register_snapshot(&old);
    let d2 = db.txns.begin().unwrap();
    rel.delete(t2, d2, 0).unwrap();
    db.txns.commit(d2).unwrap();
    let header = |rel: &heapdb::access::heap::HeapRelation| rel.inspect_page(0).unwrap().0;
    assert_eq!(header(&rel).prune_xid, d1);
    let stats = rel.prune_page(0, db.txns.oldest_xmin(), false).unwrap();
    assert_eq!(stats.removed, 1, "{stats:?}");
    assert_eq!(header(&rel).prune_xid, d2, "the kept version's xmax");
    assert_eq!(values(&rel, &old), vec![4]);
    db.txns.unregister_snapshot(&old);
    let stats = rel.prune_page(0, db.txns.oldest_xmin(), false).unwrap();
    assert_eq!(stats.removed, 1, "{stats:?}");
    assert_eq!(header(&rel).prune_xid, 0, "nothing left to prune");
}
