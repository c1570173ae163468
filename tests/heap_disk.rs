//! What the heap leaves on disk: hint bits written after the first scan, the
//! visibility map cleared by an insert, files surviving a clean close and
//! reopen, and a flipped byte detected as XX001 naming the block.

mod heap_common;

use std::fs::OpenOptions;
use std::os::unix::fs::FileExt;

use heap_common::*;
use heapdb::access::vm;
use heapdb::storage::BLCKSZ;

#[test]
fn hint_bits_reach_disk_after_the_first_scan() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), 32);
    let rel = db.create(100);
    let a = db.txns.begin().unwrap();
    for v in 0..50 {
        rel.insert(&row(v), a, 0).unwrap();
    }
    db.txns.commit(a).unwrap();
    let b = db.txns.begin().unwrap();
    rel.insert(&row(99), b, 0).unwrap();
    db.txns.abort(b).unwrap();
    let (_, items) = rel.inspect_page(0).unwrap();
    assert!(items
        .iter()
        .all(|i| !i.tuple.as_ref().unwrap().flag_names.contains("XMIN_")));
    assert_eq!(rel.count(&db.snap()).unwrap(), 50);
    db.close();

    // Reopen: the bits come back from the file, not from memory.
    let db = Db::open(dir.path(), 32);
    let rel = db.open_rel(100);
    let (_, items) = rel.inspect_page(0).unwrap();
    for i in &items[..50] {
        let t = i.tuple.as_ref().unwrap();
        assert_eq!(t.flag_names, "XMIN_COMMITTED|XMAX_INVALID", "lp {}", i.lp);
    }
    assert_eq!(
        items[50].tuple.as_ref().unwrap().flag_names,
        "XMIN_INVALID|XMAX_INVALID"
    );
    assert_eq!(values(&rel, &db.snap()), (0..50).collect::<Vec<_>>());
}

#[test]
fn visibility_map_set_by_vacuum_step_and_cleared_by_insert() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), 32);
    let rel = db.create(101);
    let a = db.txns.begin().unwrap();
    for v in 0..200 {
        rel.insert(&row(v), a, 0).unwrap();
    }
    // Not all-visible while the inserter runs.
    assert_eq!(
        rel.set_all_visible_if(0, db.txns.oldest_xmin()).unwrap(),
        None
    );
    db.txns.commit(a).unwrap();
    let horizon = db.txns.oldest_xmin();
    assert_eq!(rel.set_all_visible_if(0, horizon).unwrap(), Some(185));
    assert_eq!(rel.set_all_visible_if(1, horizon).unwrap(), Some(15));
    assert_eq!(
        rel.inspect_vm().unwrap(),
        vec![(0, vm::VM_ALL_VISIBLE, 185), (1, vm::VM_ALL_VISIBLE, 15)]
    );
    let (hdr, _) = rel.inspect_page(1).unwrap();
    assert_eq!(hdr.flag_names, "ALL_VISIBLE");
    // count(*) uses the VM counts; a scan skips per-tuple checks.
    assert_eq!(rel.count(&db.snap()).unwrap(), 200);
    assert_eq!(values(&rel, &db.snap()).len(), 200);

    // An insert into page 1 clears its bit and flag, not page 0's.
    let b = db.txns.begin().unwrap();
    let tid = rel.insert(&row(500), b, 0).unwrap();
    assert_eq!(tid.block, 1);
    assert_eq!(
        rel.inspect_vm().unwrap(),
        vec![(0, vm::VM_ALL_VISIBLE, 185), (1, 0, 0)]
    );
    let (hdr, _) = rel.inspect_page(1).unwrap();
    assert_eq!(hdr.flag_names, "");
    assert_eq!(
        rel.count(&db.snap()).unwrap(),
        200,
        "the uncommitted row is not counted"
    );
    db.txns.commit(b).unwrap();
    assert_eq!(rel.count(&db.snap()).unwrap(), 201);
    // A delete on page 0 clears page 0's bit.
    let c = db.txns.begin().unwrap();
    assert_eq!(
        rel.delete(
            heapdb::access::heap::Tid {
                block: 0,
                offset: 3
            },
            c,
            0
        )
        .unwrap(),
        heapdb::access::heap::TmResult::Ok
    );
    assert_eq!(rel.inspect_vm().unwrap()[0], (0, 0, 0));
    db.txns.commit(c).unwrap();
    assert_eq!(rel.count(&db.snap()).unwrap(), 200);
    // Page 0 now has a dead row: vacuum's step refuses to mark it.
    assert_eq!(
        rel.set_all_visible_if(0, db.txns.oldest_xmin()).unwrap(),
        None
    );
    db.close();
    let db = Db::open(dir.path(), 32);
    let rel = db.open_rel(101);
    assert_eq!(rel.inspect_vm().unwrap(), vec![(0, 0, 0), (1, 0, 0)]);
    assert_eq!(rel.count(&db.snap()).unwrap(), 200);
}

#[test]
fn heap_survives_close_and_reopen_and_xids_continue() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), 16);
    let rel = db.create(102);
    let a = db.txns.begin().unwrap();
    // 40 pages through a 16-buffer pool: most are written by eviction.
    for v in 0..(185 * 40) {
        rel.insert(&row(v), a, 0).unwrap();
    }
    db.txns.commit(a).unwrap();
    let last = db.txns.next_xid();
    db.close();
    let db = Db::open(dir.path(), 16);
    let rel = db.open_rel(102);
    assert_eq!(rel.nblocks().unwrap(), 40);
    assert_eq!(values(&rel, &db.snap()), (0..185 * 40).collect::<Vec<_>>());
    assert_eq!(
        db.txns.begin().unwrap(),
        last,
        "clean shutdown records the exact next xid"
    );
    // Inserts continue on the last page after reopening.
    let tid = rel.insert(&row(-1), last, 0).unwrap();
    assert_eq!(tid.block, 40);
}

#[test]
fn a_flipped_byte_on_disk_is_detected_with_its_block() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), 16);
    let rel = db.create(103);
    let a = db.txns.begin().unwrap();
    for v in 0..(185 * 3) {
        rel.insert(&row(v), a, 0).unwrap();
    }
    db.txns.commit(a).unwrap();
    db.close();
    // Flip one byte in the middle of block 2's tuple data.
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .open(dir.path().join("base/103"))
        .unwrap();
    let at = (2 * BLCKSZ + 5000) as u64;
    let mut b = [0u8; 1];
    f.read_at(&mut b, at).unwrap();
    f.write_at(&[b[0] ^ 0x10], at).unwrap();
    drop(f);
    let db = Db::open(dir.path(), 16);
    let rel = db.open_rel(103);
    let mut scan = rel.scan(&db.snap()).unwrap();
    assert!(scan.count_next_page().unwrap().is_some());
    assert!(scan.count_next_page().unwrap().is_some());
    let e = scan.count_next_page().unwrap_err();
    assert_eq!(e.code, heapdb::SqlState::DataCorrupted);
    assert!(e.message.contains("block 2"), "{}", e.message);
    assert!(e.message.contains("base/103"), "{}", e.message);
}

#[test]
fn a_corrupt_header_with_a_valid_checksum_is_an_error_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), 16);
    let rel = db.create(104);
    let a = db.txns.begin().unwrap();
    for v in 0..(185 * 2) {
        rel.insert(&row(v), a, 0).unwrap();
    }
    db.txns.commit(a).unwrap();
    db.close();
    // Point block 1's `lower` past `upper`, then fix up the checksum.
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .open(dir.path().join("base/104"))
        .unwrap();
    let mut page = vec![0u8; BLCKSZ];
    f.read_exact_at(&mut page, BLCKSZ as u64).unwrap();
    page[12..14].copy_from_slice(&8000u16.to_le_bytes());
    heapdb::storage::checksum::set_page_checksum(&mut page, 1);
    f.write_all_at(&page, BLCKSZ as u64).unwrap();
    drop(f);
    let db = Db::open(dir.path(), 16);
    let rel = db.open_rel(104);
    let e = rel.count(&db.snap()).unwrap_err();
    assert_eq!(e.code, heapdb::SqlState::DataCorrupted);
    assert_eq!(e.message, "invalid page in block 1 of relation base/104");
    let mut scan = rel.scan(&db.snap()).unwrap();
    assert!(scan.next_page(|_, _, v| v.len()).unwrap().is_some());
    assert!(scan.next_page(|_, _, v| v.len()).is_err());
}
