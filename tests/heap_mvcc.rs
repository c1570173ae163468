//! MVCC through the heap access methods on a real buffer pool: who sees
//! which rows across inserts, deletes, updates, commits and aborts.

mod heap_common;

use heap_common::*;
use heapdb::access::heap::{HeapRelation, Tid, TmResult};
use heapdb::storage::page;

fn insert_rows(
    rel: &HeapRelation,
    xid: u32,
    cid: u32,
    vals: impl IntoIterator<Item = i32>,
) -> Vec<Tid> {
    vals.into_iter()
        .map(|v| rel.insert(&row(v), xid, cid).unwrap())
        .collect()
}

#[test]
fn uncommitted_rows_are_invisible_to_others_and_aborted_ones_forever() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), 64);
    let rel = db.create(16384);
    let a = db.txns.begin().unwrap();
    insert_rows(&rel, a, 0, 0..10);
    assert_eq!(values(&rel, &db.snap()), Vec::<i32>::new());
    // The inserter sees them from its next command on, not in the same one.
    assert_eq!(values(&rel, &db.snap_in(a, 0)), Vec::<i32>::new());
    assert_eq!(values(&rel, &db.snap_in(a, 1)), (0..10).collect::<Vec<_>>());
    let before_commit = db.snap();
    db.txns.commit(a).unwrap();
    assert_eq!(values(&rel, &db.snap()).len(), 10);
    assert_eq!(
        values(&rel, &before_commit).len(),
        0,
        "an older snapshot keeps not seeing them"
    );

    let b = db.txns.begin().unwrap();
    insert_rows(&rel, b, 0, 100..105);
    db.txns.abort(b).unwrap();
    assert_eq!(values(&rel, &db.snap()), (0..10).collect::<Vec<_>>());
    assert_eq!(rel.count(&db.snap()).unwrap(), 10);
}

#[test]
fn insert_select_doubles_exactly_once() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), 64);
    let rel = db.create(1);
    let x = db.txns.begin().unwrap();
    insert_rows(&rel, x, 0, 0..500);
    // Command 1: INSERT INTO t SELECT * FROM t: reads under cid 1, writes with cid 1.
    let snap = db.snap_in(x, 1);
    let mut scan = rel.scan(&snap).unwrap();
    let mut batch = Vec::new();
    while let Some(rows) = scan
        .next_page(|_, p, vis| {
            vis.iter()
                .map(|&o| page::get_item(p, o).unwrap().to_vec())
                .collect::<Vec<_>>()
        })
        .unwrap()
    {
        // Insert while scanning: new rows land on pages the scan visits later.
        for r in rows {
            batch.push(rel.insert(&r, x, 1).unwrap());
        }
    }
    assert_eq!(batch.len(), 500);
    assert_eq!(rel.count(&db.snap_in(x, 2)).unwrap(), 1000);
    db.txns.commit(x).unwrap();
    assert_eq!(rel.count(&db.snap()).unwrap(), 1000);
}

#[test]
fn deletes_are_seen_by_new_snapshots_only_after_commit() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), 64);
    let rel = db.create(2);
    let a = db.txns.begin().unwrap();
    let tids = insert_rows(&rel, a, 0, 0..5);
    db.txns.commit(a).unwrap();

    let old = db.snap();
    let d = db.txns.begin().unwrap();
    assert_eq!(rel.delete(tids[1], d, 0).unwrap(), TmResult::Ok);
    assert_eq!(rel.delete(tids[1], d, 0).unwrap(), TmResult::SelfModified);
    assert_eq!(
        values(&rel, &db.snap_in(d, 1)),
        vec![0, 2, 3, 4],
        "own delete visible to later commands"
    );
    assert_eq!(
        values(&rel, &db.snap()),
        vec![0, 1, 2, 3, 4],
        "others still see it"
    );
    // A second writer finds the row being deleted.
    let w = db.txns.begin().unwrap();
    assert_eq!(
        rel.delete(tids[1], w, 0).unwrap(),
        TmResult::BeingModified(d)
    );
    db.txns.commit(d).unwrap();
    assert_eq!(values(&rel, &db.snap()), vec![0, 2, 3, 4]);
    assert_eq!(
        values(&rel, &old),
        vec![0, 1, 2, 3, 4],
        "older snapshot still sees it"
    );
    assert_eq!(rel.delete(tids[1], w, 0).unwrap(), TmResult::Deleted);
    db.txns.abort(w).unwrap();

    // An aborted delete leaves the row alive.
    let e = db.txns.begin().unwrap();
    assert_eq!(rel.delete(tids[2], e, 0).unwrap(), TmResult::Ok);
    db.txns.abort(e).unwrap();
    assert_eq!(values(&rel, &db.snap()), vec![0, 2, 3, 4]);
    let f = db.txns.begin().unwrap();
    assert_eq!(
        rel.delete(tids[2], f, 0).unwrap(),
        TmResult::Ok,
        "the aborted xmax is overwritten"
    );
    db.txns.commit(f).unwrap();
    assert_eq!(values(&rel, &db.snap()), vec![0, 3, 4]);
}

#[test]
fn updates_make_a_version_chain_hot_on_the_same_page() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), 64);
    let rel = db.create(3);
    let a = db.txns.begin().unwrap();
    let tids = insert_rows(&rel, a, 0, [10, 20]);
    db.txns.commit(a).unwrap();
    let old = db.snap();

    let u = db.txns.begin().unwrap();
    let (res, new) = rel.update(tids[0], &row(11), u, 0).unwrap();
    assert_eq!(res, TmResult::Ok);
    let new = new.unwrap();
    assert_eq!(new.block, tids[0].block, "fits on the same page: HOT");
    // Updating the same row again in the same command is refused; in a later one it follows the chain.
    assert_eq!(
        rel.update(tids[0], &row(12), u, 0).unwrap().0,
        TmResult::SelfModified
    );
    assert_eq!(values(&rel, &db.snap_in(u, 1)), vec![11, 20]);
    assert_eq!(values(&rel, &db.snap()), vec![10, 20]);
    db.txns.commit(u).unwrap();
    assert_eq!(values(&rel, &db.snap()), vec![11, 20]);
    assert_eq!(values(&rel, &old), vec![10, 20]);

    let (_, items) = rel.inspect_page(tids[0].block).unwrap();
    let old_t = items[tids[0].offset as usize - 1].tuple.clone().unwrap();
    assert_eq!(old_t.ctid, new.pair());
    assert_eq!(old_t.xmax, u);
    assert!(
        old_t.flag_names.contains("HOT_UPDATED"),
        "{}",
        old_t.flag_names
    );
    let new_t = items[new.offset as usize - 1].tuple.clone().unwrap();
    assert!(new_t.flag_names.contains("UPDATED") && new_t.flag_names.contains("HEAP_ONLY"));

    // A concurrent updater sees the row updated, with the new tid.
    let w = db.txns.begin().unwrap();
    assert_eq!(
        rel.update(tids[0], &row(13), w, 0).unwrap().0,
        TmResult::Updated(new.block, new.offset)
    );
    assert_eq!(rel.update(new, &row(13), w, 0).unwrap().0, TmResult::Ok);
    db.txns.commit(w).unwrap();
    assert_eq!(values(&rel, &db.snap()), vec![13, 20]);
    // Fetch by tid honours the snapshot.
    assert_eq!(rel.fetch(tids[0], &db.snap(), first_col).unwrap(), None);
    assert_eq!(rel.fetch(tids[0], &old, first_col).unwrap(), Some(10));
}

#[test]
fn updates_move_to_another_page_when_full() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), 64);
    let rel = db.create(4);
    let a = db.txns.begin().unwrap();
    // Fill more than one page: 40-byte rows + 4-byte line pointers, 185 per page.
    let tids = insert_rows(&rel, a, 0, 0..200);
    db.txns.commit(a).unwrap();
    assert_eq!(rel.nblocks().unwrap(), 2);
    assert_eq!(tids[184].block, 0);
    assert_eq!(tids[185].block, 1);
    let u = db.txns.begin().unwrap();
    let (res, new) = rel.update(tids[0], &row(1000), u, 0).unwrap();
    assert_eq!(res, TmResult::Ok);
    assert_eq!(new.unwrap().block, 1, "page 0 is full");
    db.txns.commit(u).unwrap();
    let vals = values(&rel, &db.snap());
    assert_eq!(vals.len(), 200);
    assert!(vals.contains(&1000) && !vals.contains(&0));
    let (_, items) = rel.inspect_page(0).unwrap();
    let t = items[0].tuple.clone().unwrap();
    assert_eq!(t.ctid, new.unwrap().pair());
    assert!(!t.flag_names.contains("HOT_UPDATED"));
}

#[test]
fn multi_insert_fills_whole_pages() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), 64);
    let rel = db.create(5);
    let x = db.txns.begin().unwrap();
    let mut data = Vec::new();
    let mut lens = Vec::new();
    for v in 0..1000 {
        let r = row(v);
        lens.push(r.len() as u16);
        data.extend_from_slice(&r);
    }
    let mut ring = db.pool.ring(heapdb::storage::StrategyKind::BulkWrite);
    let mut tids = Vec::new();
    rel.multi_insert(&data, &lens, x, 0, Some(&mut ring), Some(&mut tids))
        .unwrap();
    assert_eq!(tids.len(), 1000);
    assert_eq!(rel.nblocks().unwrap(), 1000u32.div_ceil(185));
    assert!(tids[..185].iter().all(|t| t.block == 0));
    assert_eq!(rel.count(&db.snap()).unwrap(), 0);
    db.txns.commit(x).unwrap();
    assert_eq!(values(&rel, &db.snap()), (0..1000).collect::<Vec<_>>());
    // A second batch first fills the room left on the last page.
    let y = db.txns.begin().unwrap();
    rel.multi_insert(
        &data[..lens[0] as usize * 10],
        &lens[..10],
        y,
        0,
        None,
        None,
    )
    .unwrap();
    db.txns.commit(y).unwrap();
    assert_eq!(rel.nblocks().unwrap(), 6);
    assert_eq!(rel.count(&db.snap()).unwrap(), 1010);
}

#[test]
fn rows_too_big_for_a_page_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), 16);
    let rel = db.create(6);
    let e = rel.insert(&vec![0u8; 9000], 3, 0).unwrap_err();
    assert_eq!(e.code, heapdb::SqlState::ProgramLimitExceeded);
    assert_eq!(e.message, "row is too big: size 9000, maximum size 8160");
}
