//! B-tree page deletion and recycling against a real buffer pool: a
//! delete-all / reinsert loop over moving key ranges keeps the file
//! bounded (and without page deletion it grows), scans in both directions
//! and the structural checker agree with a model after every round, and
//! every prefix of a deletion's log (a crash there) is a valid tree that
//! the next bulk delete finishes.

use heapdb::access::nbtree::btpage;
use heapdb::access::nbtree::check::bt_index_check;
use heapdb::access::nbtree::keys::leaf_key;
use heapdb::access::nbtree::wal::apply;
use heapdb::access::nbtree::{BTree, BtLog, BtRecord, Direction, IndexDesc, KeyColumn, Tid};
use heapdb::error::Result;
use heapdb::storage::{BlockNumber, BufferPool, ForkNumber, RelFileNode};
use heapdb::types::{DataType, Value};
use std::ops::Bound;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

#[derive(Default)]
struct MemLog {
    recs: Mutex<Vec<(BlockNumber, Vec<u8>)>>,
    lsn: AtomicU32,
}

impl BtLog for MemLog {
    fn log(&self, _: RelFileNode, block: BlockNumber, rec: &BtRecord, _: &[u8]) -> Result<u64> {
        self.recs.lock().unwrap().push((block, rec.encode()));
        Ok(self.lsn.fetch_add(1, Ordering::Relaxed) as u64 + 1)
    }
}

fn desc() -> IndexDesc {
    IndexDesc::new(vec![KeyColumn::asc(DataType::Int8)])
}

fn tid(i: u64) -> Tid {
    ((i / 100) as u32, (i % 100 + 1) as u16)
}

fn all_keys(t: &BTree, dir: Direction) -> Vec<Vec<u8>> {
    let mut v: Vec<Vec<u8>> = t
        .scan(Bound::Unbounded, Bound::Unbounded, dir)
        .map(|r| r.unwrap().key)
        .collect();
    if dir == Direction::Backward {
        v.reverse();
    }
    v
}

/// Inserts keys `from..from + n` in a scrambled order, TIDs from `from`.
fn insert_range(t: &BTree, from: u64, n: u64) -> Vec<Vec<u8>> {
    let mut model = Vec::new();
    for j in 0..n {
        let i = from + (j * 7919) % n;
        t.insert(&[Value::Int8(i as i64)], tid(i)).unwrap();
        model.push(leaf_key(t.desc(), &[Value::Int8(i as i64)], tid(i)).unwrap());
    }
    model.sort();
    model
}

fn flags_count(t: &BTree, flag: u16) -> usize {
    let n = t.pool().nblocks(t.rel(), ForkNumber::Main).unwrap();
    (1..n)
        .filter(|&b| {
            let buf = t
                .pool()
                .read_buffer(t.rel(), ForkNumber::Main, b, None)
                .unwrap();
            let g = buf.read();
            btpage::opaque(&g).flags & flag != 0
        })
        .count()
}

#[test]
fn delete_all_and_reinsert_keeps_the_file_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let p = BufferPool::open(dir.path(), 4096).unwrap();
    let log = Arc::new(MemLog::default());
    let t = BTree::create(p.clone(), RelFileNode(50001), desc(), Some(log)).unwrap();
    // The same loop without page deletion, for comparison.
    let old = BTree::create(p.clone(), RelFileNode(50002), desc(), None).unwrap();
    let xid = AtomicU32::new(100);
    let next_xid = || xid.fetch_add(1, Ordering::Relaxed);
    let n = 30_000;
    let mut sizes = Vec::new();
    for round in 0..10u64 {
        // Each round's keys lie right of the last round's: emptied leaves
        // are never refilled by key.
        let model = insert_range(&t, round * n, n);
        insert_range(&old, round * n, n);
        assert_eq!(all_keys(&t, Direction::Forward), model, "round {round}");
        assert_eq!(all_keys(&t, Direction::Backward), model, "round {round}");
        let k = Value::Int8((round * n + n / 2) as i64);
        let probe = leaf_key(t.desc(), &[k], tid(0)).unwrap();
        let found = t.lookup(&probe[..probe.len() - 6]).unwrap();
        assert_eq!(found, vec![tid(round * n + n / 2)]);
        assert_eq!(bt_index_check(&t).unwrap().leaf_items, n as usize);

        let st = t.bulk_delete_pages(|_| true, &next_xid).unwrap();
        assert_eq!(st.tuples_removed, n);
        assert!(st.pages_deleted > 0, "round {round}");
        old.bulk_delete(|_| true).unwrap();
        let rep = bt_index_check(&t).unwrap();
        assert_eq!(rep.leaf_items, 0);
        assert!(all_keys(&t, Direction::Forward).is_empty());
        assert!(all_keys(&t, Direction::Backward).is_empty());
        assert_eq!(flags_count(&t, btpage::BTP_HALF_DEAD), 0);
        // Every transaction that could see the deleted pages has ended.
        let c = t.vacuum_cleanup(xid.load(Ordering::Relaxed)).unwrap();
        assert_eq!(c.deleted as usize, flags_count(&t, btpage::BTP_DELETED));
        assert!(c.reusable >= st.pages_deleted, "round {round}: {c:?}");
        sizes.push(t.num_pages().unwrap());
    }
    let old_size = old.num_pages().unwrap();
    println!("pages per round {sizes:?}; without page deletion {old_size}");
    // One round's tree is ~150 pages; without deletion each round adds
    // one, with deletion the file settles.
    assert!(sizes[9] <= sizes[0] + sizes[0] / 4, "{sizes:?}");
    assert!(old_size > 5 * sizes[9], "{old_size} vs {sizes:?}");
    // The meta page still reads after the free list's rewrites.
    let m = t.meta().unwrap();
    assert_eq!(m.level, m.fastlevel);
}

/// Replays records into a fresh relation (what recovery rebuilds).
fn replay(p: &Arc<BufferPool>, rel: RelFileNode, recs: &[(BlockNumber, Vec<u8>)]) {
    use heapdb::storage::ReadMode;
    for (blk, bytes) in recs {
        let buf = match p.read_buffer_extended(rel, ForkNumber::Main, *blk, ReadMode::Normal, None)
        {
            Ok(b) => b,
            Err(_) => p
                .read_buffer_extended(rel, ForkNumber::Main, *blk, ReadMode::ZeroPage, None)
                .unwrap(),
        };
        let mut g = buf.write();
        apply(&BtRecord::decode(bytes).unwrap(), &mut g).unwrap();
        g.mark_dirty();
    }
}

/// Leaf entries a log prefix leaves: inserts minus deletions.
fn entries_in(recs: &[(BlockNumber, Vec<u8>)]) -> usize {
    let mut n: i64 = 0;
    for (_, b) in recs {
        match BtRecord::decode(b).unwrap() {
            BtRecord::InsertLeaf { .. } => n += 1,
            BtRecord::SplitLeft(img) if img.opaque.level == 0 => n += 1,
            BtRecord::Delete { offsets } => n -= offsets.len() as i64,
            _ => {}
        }
    }
    n as usize
}

#[test]
fn every_prefix_of_a_page_deletion_log_is_a_valid_tree() {
    let dir = tempfile::tempdir().unwrap();
    let p = BufferPool::open(dir.path(), 8192).unwrap();
    let log = Arc::new(MemLog::default());
    let t = BTree::create(p.clone(), RelFileNode(50010), desc(), Some(log.clone())).unwrap();
    insert_range(&t, 0, 40_000);
    let start = log.recs.lock().unwrap().len();
    let xid = AtomicU32::new(10);
    let next_xid = || xid.fetch_add(1, Ordering::Relaxed);
    // Empty most leaves of the left half, some of the right.
    let st = t
        .bulk_delete_pages(|(b, o)| b < 150 || (b % 3 == 0 && o < 90), &next_xid)
        .unwrap();
    assert!(st.pages_deleted > 10, "{st:?}");
    t.vacuum_cleanup(u32::MAX).unwrap();
    // Reinserts take the deleted pages.
    insert_range(&t, 100_000, 20_000);
    bt_index_check(&t).unwrap();
    let recs = log.recs.lock().unwrap().clone();
    let kinds: Vec<BtRecord> = recs
        .iter()
        .map(|(_, b)| BtRecord::decode(b).unwrap())
        .collect();
    assert!(kinds.iter().any(|r| matches!(r, BtRecord::TakeFree { .. })));
    let mut cuts = Vec::new();
    for (i, r) in kinds.iter().enumerate().skip(start) {
        let deletion = matches!(
            r,
            BtRecord::SetFlags { .. }
                | BtRecord::DeleteDownlink { .. }
                | BtRecord::MarkDeleted { .. }
                | BtRecord::SetPrev { .. }
                | BtRecord::SetNext { .. }
                | BtRecord::FreeList { .. }
                | BtRecord::TakeFree { .. }
        );
        if deletion && i % 5 < 2 {
            cuts.push(i + 1);
        }
    }
    assert!(cuts.len() > 20, "{}", cuts.len());
    let mut finished = 0;
    for (n, &cut) in cuts.iter().enumerate().step_by(4) {
        let rel = RelFileNode(60000 + n as u32);
        replay(&p, rel, &recs[..cut]);
        let r = BTree::open(p.clone(), rel, desc(), None);
        let want = entries_in(&recs[..cut]);
        let rep = bt_index_check(&r).unwrap_or_else(|e| panic!("cut at {cut}: {}", e.message));
        assert_eq!(rep.leaf_items, want, "cut at {cut}");
        let fwd = all_keys(&r, Direction::Forward);
        assert_eq!(fwd.len(), want, "cut at {cut}");
        assert_eq!(all_keys(&r, Direction::Backward), fwd, "cut at {cut}");
        // The next bulk delete finishes what the crash interrupted.
        let half_dead = flags_count(&r, btpage::BTP_HALF_DEAD);
        let st = r.bulk_delete_pages(|_| false, &next_xid).unwrap();
        finished += st.pages_deleted;
        assert!(st.pages_deleted as usize >= half_dead, "cut at {cut}");
        assert_eq!(flags_count(&r, btpage::BTP_HALF_DEAD), 0, "cut at {cut}");
        let rep = bt_index_check(&r).unwrap_or_else(|e| panic!("after cut {cut}: {}", e.message));
        assert_eq!(rep.leaf_items, want);
        let c = r.vacuum_cleanup(u32::MAX).unwrap();
        assert_eq!(c.deleted as usize, flags_count(&r, btpage::BTP_DELETED));
        // Inserts after recovery reuse pages and keep the tree whole.
        insert_range(&r, 500_000, 5_000);
        let rep = bt_index_check(&r).unwrap_or_else(|e| panic!("inserts {cut}: {}", e.message));
        assert_eq!(rep.leaf_items, want + 5_000);
    }
    println!(
        "{} cuts, {finished} deletions finished after a cut",
        cuts.len() / 4
    );
    assert!(finished > 0, "no cut interrupted a deletion");
}
