//! The B-tree access method end to end against a real buffer pool in a
//! temporary directory: random inserts with many duplicates against a
//! sorted model (lookups, range scans both ways, the structural checker,
//! splits at every level), bulk build against incremental inserts, redo of
//! the logged records giving the same pages, multi-column keys with DESC
//! and NULLs, bulk delete, inspection rows, a random-operations property
//! test against a `BTreeSet`, replay of log prefixes (crash points),
//! inserts racing scans and point lookups on four threads, and a key equal
//! to a pivot (a vacuumed entry's TID reused) going right of it.

use heapdb::access::nbtree::btpage::{self, P_HIKEY};
use heapdb::access::nbtree::check::bt_index_check;
use heapdb::access::nbtree::inspect::{bt_metap, bt_page_items, bt_page_stats};
use heapdb::access::nbtree::keys::{encode_key, leaf_key};
use heapdb::access::nbtree::wal::apply;
use heapdb::access::nbtree::{BTree, BtLog, BtRecord, Direction, IndexDesc, KeyColumn, Tid};
use heapdb::error::Result;
use heapdb::storage::{BlockNumber, BufferPool, RelFileNode, BLCKSZ};
use heapdb::types::{DataType, Value};
use std::collections::{BTreeSet, HashMap};
use std::ops::Bound;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn shuffle<T>(v: &mut [T], r: &mut Rng) {
    for i in (1..v.len()).rev() {
        v.swap(i, r.below(i as u64 + 1) as usize);
    }
}

fn pool(dir: &tempfile::TempDir, nbuffers: usize) -> Arc<BufferPool> {
    BufferPool::open(dir.path(), nbuffers).unwrap()
}

fn int8_desc() -> IndexDesc {
    IndexDesc::new(vec![KeyColumn::asc(DataType::Int8)])
}

fn tid_of(i: usize) -> Tid {
    ((i / 100) as u32, (i % 100 + 1) as u16)
}

fn search_key(desc: &IndexDesc, vals: &[Value]) -> Vec<u8> {
    let mut k = Vec::new();
    encode_key(desc, vals, &mut k).unwrap();
    k
}

fn scan_all(t: &BTree, lo: Bound<Vec<u8>>, hi: Bound<Vec<u8>>, dir: Direction) -> Vec<Vec<u8>> {
    t.scan(lo, hi, dir).map(|r| r.unwrap().key).collect()
}

/// The model's answer to a scan: keys within the bounds (prefix semantics as
/// the index: a key matches a bound when its first columns compare so).
fn model_range(model: &[Vec<u8>], lo: &Bound<Vec<u8>>, hi: &Bound<Vec<u8>>) -> Vec<Vec<u8>> {
    let pre = |k: &[u8], b: &[u8]| k.len() >= b.len() && &k[..b.len()] == b;
    model
        .iter()
        .filter(|k| match lo {
            Bound::Unbounded => true,
            Bound::Included(b) => k.as_slice() >= b.as_slice(),
            Bound::Excluded(b) => k.as_slice() > b.as_slice() && !pre(k, b),
        })
        .filter(|k| match hi {
            Bound::Unbounded => true,
            Bound::Included(b) => k.as_slice() <= b.as_slice() || pre(k, b),
            Bound::Excluded(b) => k.as_slice() < b.as_slice(),
        })
        .cloned()
        .collect()
}

fn check_ranges(t: &BTree, model: &[Vec<u8>], r: &mut Rng, range: i64, n: usize) {
    let d = t.desc().clone();
    for _ in 0..n {
        let mk = |r: &mut Rng| -> Bound<Vec<u8>> {
            let k = search_key(&d, &[Value::Int8(r.below(range as u64 + 2) as i64 - 1)]);
            match r.below(3) {
                0 => Bound::Unbounded,
                1 => Bound::Included(k),
                _ => Bound::Excluded(k),
            }
        };
        let (lo, hi) = (mk(r), mk(r));
        let want = model_range(model, &lo, &hi);
        let fwd = scan_all(t, lo.clone(), hi.clone(), Direction::Forward);
        assert_eq!(fwd, want, "forward {lo:?}..{hi:?}");
        let mut back = scan_all(t, lo.clone(), hi.clone(), Direction::Backward);
        back.reverse();
        assert_eq!(back, want, "backward {lo:?}..{hi:?}");
    }
}

/// Inserts `n` int8 keys drawn from `0..range` in random order; returns the
/// sorted model of leaf keys.
fn fill(t: &BTree, n: usize, range: u64, seed: u64) -> Vec<Vec<u8>> {
    let mut r = Rng(seed);
    let mut rows: Vec<(i64, Tid)> = (0..n).map(|i| (r.below(range) as i64, tid_of(i))).collect();
    shuffle(&mut rows, &mut r);
    let mut model = Vec::with_capacity(n);
    for (v, tid) in rows {
        t.insert(&[Value::Int8(v)], tid).unwrap();
        model.push(leaf_key(t.desc(), &[Value::Int8(v)], tid).unwrap());
    }
    model.sort();
    model
}

#[test]
fn random_inserts_with_duplicates_match_a_sorted_model() {
    let dir = tempfile::tempdir().unwrap();
    let t = BTree::create(pool(&dir, 4096), RelFileNode(30000), int8_desc(), None).unwrap();
    let range = 20_000;
    let model = fill(&t, 200_000, range, 7);
    let rep = bt_index_check(&t).unwrap();
    assert_eq!(rep.leaf_items, model.len());
    // Leaf, internal and root levels: splits happened at every level.
    let meta = t.meta().unwrap();
    assert!(meta.level >= 2, "levels: {:?}", rep.pages_per_level);
    assert_eq!(rep.pages_per_level.len() as u32, meta.level + 1);
    assert!(rep.pages_per_level[1] > 1);
    // Every key is found with exactly its TIDs.
    let mut by_key: HashMap<i64, Vec<Tid>> = HashMap::new();
    for k in &model {
        let (v, tid) = heapdb::access::nbtree::keys::decode_key(t.desc(), k).unwrap();
        by_key
            .entry(v[0].as_i64().unwrap())
            .or_default()
            .push(tid.unwrap());
    }
    for v in -1..=range as i64 {
        let got = t.lookup(&search_key(t.desc(), &[Value::Int8(v)])).unwrap();
        assert_eq!(got, by_key.get(&v).cloned().unwrap_or_default(), "key {v}");
    }
    assert_eq!(
        scan_all(&t, Bound::Unbounded, Bound::Unbounded, Direction::Forward),
        model
    );
    check_ranges(&t, &model, &mut Rng(99), range as i64, 60);
}

#[test]
fn ascending_and_descending_inserts_split_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let p = pool(&dir, 2048);
    let up = BTree::create(p.clone(), RelFileNode(30001), int8_desc(), None).unwrap();
    let down = BTree::create(p, RelFileNode(30002), int8_desc(), None).unwrap();
    for i in 0..100_000usize {
        up.insert(&[Value::Int8(i as i64)], tid_of(i)).unwrap();
        down.insert(&[Value::Int8(-(i as i64))], tid_of(i)).unwrap();
    }
    let ru = bt_index_check(&up).unwrap();
    let rd = bt_index_check(&down).unwrap();
    assert_eq!((ru.leaf_items, rd.leaf_items), (100_000, 100_000));
    // Ascending inserts leave leaves 90% full, descending ones half full.
    assert!(
        ru.pages_per_level[0] * 3 < rd.pages_per_level[0] * 2,
        "{ru:?} {rd:?}"
    );
    assert!(
        ru.pages_per_level[0] < 100_000 / 300,
        "{:?}",
        ru.pages_per_level
    );
}

#[test]
fn bulk_build_equals_incremental_inserts() {
    let dir = tempfile::tempdir().unwrap();
    let p = pool(&dir, 4096);
    let inc = BTree::create(p.clone(), RelFileNode(30010), int8_desc(), None).unwrap();
    let model = fill(&inc, 60_000, 5_000, 3);
    let mut r = Rng(3);
    let mut rows: Vec<(i64, Tid)> = (0..60_000)
        .map(|i| (r.below(5_000) as i64, tid_of(i)))
        .collect();
    shuffle(&mut rows, &mut r);
    let rows = rows.into_iter().map(|(v, t)| (vec![Value::Int8(v)], t));
    let bulk = BTree::build(p.clone(), RelFileNode(30011), int8_desc(), None, rows).unwrap();
    let rep = bt_index_check(&bulk).unwrap();
    assert_eq!(rep.leaf_items, 60_000);
    assert!(rep.pages_per_level.len() >= 2);
    let all = |t: &BTree| scan_all(t, Bound::Unbounded, Bound::Unbounded, Direction::Forward);
    assert_eq!(all(&bulk), model);
    assert_eq!(all(&inc), model);
    check_ranges(&bulk, &model, &mut Rng(5), 5_000, 30);
    // A built index takes inserts like any other.
    for i in 0..20_000usize {
        bulk.insert(&[Value::Int8((i % 7) as i64)], (1_000_000 + i as u32, 1))
            .unwrap();
    }
    assert_eq!(bt_index_check(&bulk).unwrap().leaf_items, 80_000);
    // Empty input gives an empty root leaf.
    let empty = BTree::build(p, RelFileNode(30012), int8_desc(), None, Vec::new()).unwrap();
    assert_eq!(bt_index_check(&empty).unwrap().leaf_items, 0);
}

/// A log that keeps every record, to replay them.
#[derive(Default)]
struct MemLog {
    recs: Mutex<Vec<(BlockNumber, Vec<u8>)>>,
    lsn: AtomicU32,
}

impl BtLog for MemLog {
    fn log(
        &self,
        _rel: RelFileNode,
        block: BlockNumber,
        rec: &BtRecord,
        _page: &[u8],
    ) -> Result<u64> {
        self.recs.lock().unwrap().push((block, rec.encode()));
        Ok(self.lsn.fetch_add(1, Ordering::Relaxed) as u64 + 1)
    }
}

#[test]
fn redo_of_the_logged_records_rebuilds_every_page() {
    let dir = tempfile::tempdir().unwrap();
    let p = pool(&dir, 4096);
    let log = Arc::new(MemLog::default());
    let t = BTree::create(
        p.clone(),
        RelFileNode(30020),
        int8_desc(),
        Some(log.clone()),
    )
    .unwrap();
    fill(&t, 80_000, 3_000, 11);
    let removed = t.bulk_delete(|tid| tid.1 % 3 == 0).unwrap();
    assert!(removed > 20_000);
    let b = BTree::build(
        p.clone(),
        RelFileNode(30021),
        int8_desc(),
        Some(log.clone()),
        (0..30_000usize).map(|i| (vec![Value::Int8(i as i64 / 3)], tid_of(i))),
    )
    .unwrap();
    bt_index_check(&t).unwrap();
    bt_index_check(&b).unwrap();
    let recs = log.recs.lock().unwrap();
    let mut pages: HashMap<BlockNumber, Vec<u8>> = HashMap::new();
    // Replay the first tree's records (they come before the build's).
    let nblocks = p
        .nblocks(RelFileNode(30020), heapdb::storage::ForkNumber::Main)
        .unwrap();
    for (count, (blk, bytes)) in recs.iter().enumerate() {
        let rec = BtRecord::decode(bytes).unwrap();
        if matches!(rec, BtRecord::BuildPage(_)) && count > 2 {
            break;
        }
        apply(&rec, pages.entry(*blk).or_insert_with(|| vec![0; BLCKSZ])).unwrap();
    }
    assert_eq!(pages.len() as u32, nblocks);
    for (blk, page) in &pages {
        let buf = p
            .read_buffer(
                RelFileNode(30020),
                heapdb::storage::ForkNumber::Main,
                *blk,
                None,
            )
            .unwrap();
        let g = buf.read();
        assert_eq!(&g[10..], &page[10..], "block {blk} differs after redo");
    }
}

#[test]
fn multi_column_keys_with_desc_and_nulls() {
    let dir = tempfile::tempdir().unwrap();
    let desc = IndexDesc::new(vec![
        KeyColumn::asc(DataType::Text),
        KeyColumn::desc(DataType::Int4),
    ]);
    let t = BTree::create(pool(&dir, 1024), RelFileNode(30030), desc.clone(), None).unwrap();
    let mut r = Rng(17);
    let mut model = Vec::new();
    for i in 0..40_000usize {
        let a = match r.below(20) {
            0 => Value::Null,
            n => Value::text(&format!(
                "k{:03}{}",
                n * 7 % 13,
                "x".repeat((n % 4) as usize * 30)
            )),
        };
        let b = if r.below(9) == 0 {
            Value::Null
        } else {
            Value::Int4(r.below(50) as i32 - 25)
        };
        t.insert(&[a.clone(), b.clone()], tid_of(i)).unwrap();
        model.push(((a, b), tid_of(i)));
    }
    let keys: Vec<Vec<u8>> = {
        let mut k: Vec<_> = model
            .iter()
            .map(|((a, b), t)| leaf_key(&desc, &[a.clone(), b.clone()], *t).unwrap())
            .collect();
        k.sort();
        k
    };
    bt_index_check(&t).unwrap();
    let got = scan_all(&t, Bound::Unbounded, Bound::Unbounded, Direction::Forward);
    assert_eq!(got, keys);
    // Decoded order: text ascending with NULLs last, then int4 descending
    // with NULLs first.
    let dec: Vec<Vec<Value>> = got
        .iter()
        .map(|k| {
            heapdb::access::nbtree::keys::decode_key(&desc, k)
                .unwrap()
                .0
        })
        .collect();
    for w in dec.windows(2) {
        let (x, y) = (&w[0], &w[1]);
        match (&x[0], &y[0]) {
            (Value::Text(a), Value::Text(b)) => {
                assert!(a <= b);
                if a == b {
                    match (&x[1], &y[1]) {
                        (Value::Int4(p), Value::Int4(q)) => assert!(p >= q),
                        (Value::Int4(_), Value::Null) => {
                            panic!("NULL after a value in a DESC column")
                        }
                        _ => {}
                    }
                }
            }
            (Value::Null, Value::Text(_)) => panic!("NULL before text in an ASC column"),
            _ => {}
        }
    }
    // Equality on the first column only, and on both.
    for name in ["k000", "k007", "k003xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"] {
        let k = search_key(&desc, &[Value::text(name)]);
        let want = model_range(
            &keys,
            &Bound::Included(k.clone()),
            &Bound::Included(k.clone()),
        );
        assert_eq!(
            scan_all(
                &t,
                Bound::Included(k.clone()),
                Bound::Included(k.clone()),
                Direction::Forward
            ),
            want
        );
        let k2 = search_key(&desc, &[Value::text(name), Value::Int4(3)]);
        let n = model
            .iter()
            .filter(|((a, b), _)| *a == Value::text(name) && *b == Value::Int4(3))
            .count();
        assert_eq!(t.lookup(&k2).unwrap().len(), n);
    }
    let nulls = search_key(&desc, &[Value::Null]);
    let n = model.iter().filter(|((a, _), _)| a.is_null()).count();
    assert_eq!(t.lookup(&nulls).unwrap().len(), n);
}

#[test]
fn inspection_rows_describe_the_pages() {
    let dir = tempfile::tempdir().unwrap();
    let t = BTree::create(pool(&dir, 1024), RelFileNode(30040), int8_desc(), None).unwrap();
    for i in 0..2000usize {
        t.insert(&[Value::Int8(i as i64)], tid_of(i)).unwrap();
    }
    let meta = bt_metap(&t).unwrap();
    let get =
        |row: &[(&str, Value)], name: &str| row.iter().find(|c| c.0 == name).unwrap().1.clone();
    assert_eq!(get(&meta, "level").as_i64(), Some(1));
    let root = get(&meta, "root").as_i64().unwrap() as u32;
    let st = bt_page_stats(&t, root).unwrap();
    assert_eq!(get(&st, "type"), Value::text("r"));
    let leaf = bt_page_stats(&t, 1).unwrap();
    assert_eq!(get(&leaf, "type"), Value::text("l"));
    let items = bt_page_items(&t, 1).unwrap();
    // Block 1 is the leftmost leaf: a high key, then keys 0, 1, ...
    assert_eq!(get(&items[0], "itemoffset").as_i64(), Some(P_HIKEY as i64));
    assert_eq!(get(&items[1], "ctid"), Value::text("(0,1)"));
    assert_eq!(get(&items[2], "keys"), Value::text("Int8(1)"));
    assert_eq!(
        get(&leaf, "live_items").as_i64(),
        Some(items.len() as i64 - 1)
    );
    assert!(bt_page_stats(&t, 0).is_err());
    assert!(bt_page_items(&t, 999).is_err());
}

#[test]
fn oversized_keys_and_corruption_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let p = pool(&dir, 256);
    let desc = IndexDesc::new(vec![KeyColumn::asc(DataType::Text)]);
    let t = BTree::create(p.clone(), RelFileNode(30050), desc, None).unwrap();
    let e = t
        .insert(&[Value::text(&"x".repeat(3000))], (0, 1))
        .unwrap_err();
    assert_eq!(e.code.code(), "54000");
    for i in 0..500usize {
        t.insert(&[Value::text(&format!("{i:05}"))], tid_of(i))
            .unwrap();
    }
    bt_index_check(&t).unwrap();
    // Swap two items on the leaf: the checker must notice.
    let buf = p
        .read_buffer(
            RelFileNode(30050),
            heapdb::storage::ForkNumber::Main,
            1,
            None,
        )
        .unwrap();
    {
        let mut g = buf.write();
        let mut items = btpage::items(&g).unwrap();
        let o = btpage::opaque(&g);
        items.swap(3, 4);
        btpage::rebuild(&mut g, &o, &items).unwrap();
    }
    drop(buf);
    let e = bt_index_check(&t).unwrap_err();
    assert!(e.message.contains("order"), "{}", e.message);
}

#[test]
fn random_operations_match_a_btreeset_model() {
    let dir = tempfile::tempdir().unwrap();
    let desc = IndexDesc::new(vec![KeyColumn::asc(DataType::Int2)]);
    let t = BTree::create(pool(&dir, 1024), RelFileNode(30060), desc.clone(), None).unwrap();
    let mut model: BTreeSet<Vec<u8>> = BTreeSet::new();
    let mut r = Rng(4242);
    let mut next_tid = 0usize;
    for round in 0..40 {
        for _ in 0..r.below(3000) {
            let v = Value::Int2(r.below(300) as i16 - 150);
            let tid = tid_of(next_tid);
            next_tid += 1;
            t.insert(std::slice::from_ref(&v), tid).unwrap();
            model.insert(leaf_key(&desc, &[v], tid).unwrap());
        }
        if round % 5 == 4 {
            let m = r.below(7) as u16 + 2;
            t.bulk_delete(|tid| tid.1 % m == 0).unwrap();
            model.retain(|k| heapdb::access::nbtree::keys::tid_of(k).1 % m != 0);
        }
        let flat: Vec<Vec<u8>> = model.iter().cloned().collect();
        for _ in 0..10 {
            let mk = |r: &mut Rng| {
                let k = search_key(&desc, &[Value::Int2(r.below(320) as i16 - 160)]);
                match r.below(3) {
                    0 => Bound::Unbounded,
                    1 => Bound::Included(k),
                    _ => Bound::Excluded(k),
                }
            };
            let (lo, hi) = (mk(&mut r), mk(&mut r));
            let want = model_range(&flat, &lo, &hi);
            assert_eq!(
                scan_all(&t, lo.clone(), hi.clone(), Direction::Forward),
                want
            );
            let mut back = scan_all(&t, lo, hi, Direction::Backward);
            back.reverse();
            assert_eq!(back, want);
        }
        assert_eq!(bt_index_check(&t).unwrap().leaf_items, model.len());
    }
}

#[test]
fn concurrent_inserts_and_scans_see_what_they_should() {
    let dir = tempfile::tempdir().unwrap();
    let t =
        Arc::new(BTree::create(pool(&dir, 4096), RelFileNode(30070), int8_desc(), None).unwrap());
    // Preloaded even keys every scan must see, in order, exactly once.
    let pre = 20_000usize;
    for i in 0..pre {
        t.insert(&[Value::Int8(2 * i as i64)], tid_of(i)).unwrap();
    }
    let per = 150_000usize;
    let progress: Arc<[AtomicU32; 2]> = Arc::new([AtomicU32::new(0), AtomicU32::new(0)]);
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    // Inserter w inserts odd keys 4j+2w+1 in a scrambled order.
    let key_of = move |w: usize, j: usize| -> i64 {
        let j = (j * 7919) % per;
        (4 * j + 2 * w + 1) as i64
    };
    let mut handles = Vec::new();
    for w in 0..2 {
        let (t, progress) = (t.clone(), progress.clone());
        handles.push(std::thread::spawn(move || {
            for j in 0..per {
                t.insert(
                    &[Value::Int8(key_of(w, j))],
                    ((1_000_000 + w * per + j) as u32, 1),
                )
                .unwrap();
                progress[w].store(j as u32 + 1, Ordering::Release);
            }
        }));
    }
    let mut scanners = Vec::new();
    for s in 0..2 {
        let (t, progress, stop) = (t.clone(), progress.clone(), stop.clone());
        scanners.push(std::thread::spawn(move || {
            let mut rounds = 0;
            while !stop.load(Ordering::Acquire) || rounds < 2 {
                let dir = if (s + rounds) % 2 == 0 {
                    Direction::Forward
                } else {
                    Direction::Backward
                };
                let mut keys: Vec<i64> = t
                    .scan(Bound::Unbounded, Bound::Unbounded, dir)
                    .map(|r| {
                        heapdb::access::nbtree::keys::decode_key(t.desc(), &r.unwrap().key)
                            .unwrap()
                            .0[0]
                            .as_i64()
                            .unwrap()
                    })
                    .collect();
                if dir == Direction::Backward {
                    keys.reverse();
                }
                assert!(
                    keys.windows(2).all(|w| w[0] < w[1]),
                    "scan out of order or repeated"
                );
                let evens = keys.iter().filter(|k| *k % 2 == 0).count();
                assert_eq!(evens, pre, "a preloaded key was missed");
                // Point lookups and short ranges of preloaded keys while
                // leaves split under them: a descent that lands left of a
                // concurrent split must move right.
                let mut r = Rng(77 + s as u64 + rounds as u64);
                for _ in 0..5_000 {
                    let k = 2 * r.below(pre as u64) as i64;
                    let sk = search_key(t.desc(), &[Value::Int8(k)]);
                    assert_eq!(
                        t.lookup(&sk).unwrap().len(),
                        1,
                        "preloaded key {k} not found"
                    );
                    let hi = search_key(t.desc(), &[Value::Int8(k + 1)]);
                    let n = t
                        .scan(Bound::Included(sk), Bound::Excluded(hi), Direction::Forward)
                        .count();
                    assert_eq!(n, 1, "range from preloaded key {k}");
                }
                // Keys an inserter finished before this lookup are found.
                for w in 0..2 {
                    let done = progress[w].load(Ordering::Acquire) as usize;
                    if done > 0 {
                        let k = key_of(w, done - 1);
                        let sk = search_key(t.desc(), &[Value::Int8(k)]);
                        assert_eq!(
                            t.lookup(&sk).unwrap().len(),
                            1,
                            "inserted key {k} not found"
                        );
                    }
                }
                rounds += 1;
            }
            rounds
        }));
    }
    for h in handles {
        h.join().unwrap();
    }
    stop.store(true, Ordering::Release);
    for s in scanners {
        assert!(s.join().unwrap() >= 2);
    }
    let rep = bt_index_check(&t).unwrap();
    assert_eq!(rep.leaf_items, pre + 2 * per);
    assert!(rep.pages_per_level.len() >= 2);
}

/// Throughput figures on 1M int4 keys (run by hand:
/// `cargo test --release --test nbtree -- --ignored --nocapture`). Prints,
/// asserts only correctness.
#[test]
#[ignore]
fn measure_int4_throughput() {
    let n = 1_000_000usize;
    let dir = tempfile::tempdir().unwrap();
    let p = pool(&dir, 16384);
    let desc = IndexDesc::new(vec![KeyColumn::asc(DataType::Int4)]);
    let mut r = Rng(1);
    let mut vals: Vec<i32> = (0..n as i32).collect();
    shuffle(&mut vals, &mut r);
    // CPU time of this thread, so that other load on the machine does not
    // show in the figures.
    let cpu = || {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: a valid clock id and a pointer to a timespec.
        unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
        ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
    };
    let rate = |what: &str, t: (std::time::Instant, f64)| {
        let (s, c) = (t.0.elapsed().as_secs_f64(), cpu() - t.1);
        println!(
            "{what}: {:.0}/s CPU, {:.0}/s wall ({c:.3} s CPU)",
            n as f64 / c,
            n as f64 / s
        );
    };
    let rnd = BTree::create(p.clone(), RelFileNode(31000), desc.clone(), None).unwrap();
    let t0 = (std::time::Instant::now(), cpu());
    for (i, v) in vals.iter().enumerate() {
        rnd.insert(&[Value::Int4(*v)], tid_of(i)).unwrap();
    }
    rate("random inserts", t0);
    let asc = BTree::create(p.clone(), RelFileNode(31001), desc.clone(), None).unwrap();
    let t0 = (std::time::Instant::now(), cpu());
    for i in 0..n {
        asc.insert(&[Value::Int4(i as i32)], tid_of(i)).unwrap();
    }
    rate("ascending inserts", t0);
    let t0 = (std::time::Instant::now(), cpu());
    let mut found = 0;
    let mut k = Vec::with_capacity(8);
    for v in &vals {
        k.clear();
        encode_key(&desc, &[Value::Int4(*v)], &mut k).unwrap();
        found += rnd.lookup(&k).unwrap().len();
    }
    rate("random lookups", t0);
    assert_eq!(found, n);
    let t0 = (std::time::Instant::now(), cpu());
    let rows = vals
        .iter()
        .enumerate()
        .map(|(i, v)| (vec![Value::Int4(*v)], tid_of(i)));
    let b = BTree::build(p.clone(), RelFileNode(31002), desc.clone(), None, rows).unwrap();
    println!("bulk build incl. encode+sort: {:.3} s CPU", cpu() - t0.1);
    let mut sorted: Vec<Vec<u8>> = vals
        .iter()
        .enumerate()
        .map(|(i, v)| leaf_key(&desc, &[Value::Int4(*v)], tid_of(i)).unwrap())
        .collect();
    sorted.sort_unstable();
    let t0 = (std::time::Instant::now(), cpu());
    let b2 =
        BTree::build_sorted(p.clone(), RelFileNode(31003), desc.clone(), None, sorted).unwrap();
    println!("bulk build of sorted keys: {:.3} s CPU", cpu() - t0.1);
    for (name, t) in [
        ("random", &rnd),
        ("ascending", &asc),
        ("bulk", &b),
        ("bulk sorted", &b2),
    ] {
        let rep = bt_index_check(t).unwrap();
        assert_eq!(rep.leaf_items, n);
        println!("{name}: pages per level {:?}", rep.pages_per_level);
    }
}

/// Replays a prefix of a tree's records into a fresh relation (what crash
/// recovery would rebuild from a log cut there).
fn replay(p: &Arc<BufferPool>, rel: RelFileNode, recs: &[(BlockNumber, Vec<u8>)]) {
    use heapdb::storage::{ForkNumber, ReadMode};
    for (blk, bytes) in recs {
        let buf = p.read_buffer_extended(rel, ForkNumber::Main, *blk, ReadMode::Normal, None);
        let buf = match buf {
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

#[test]
fn every_prefix_of_the_log_is_a_valid_tree_and_inserts_finish_splits() {
    let dir = tempfile::tempdir().unwrap();
    let p = pool(&dir, 4096);
    let log = Arc::new(MemLog::default());
    let t = BTree::create(
        p.clone(),
        RelFileNode(30080),
        int8_desc(),
        Some(log.clone()),
    )
    .unwrap();
    fill(&t, 60_000, 1_000, 21);
    let recs = log.recs.lock().unwrap().clone();
    // Cut right after each record kind of a split, at several places.
    let mut cuts: Vec<usize> = Vec::new();
    for (i, (_, b)) in recs.iter().enumerate() {
        let rec = BtRecord::decode(b).unwrap();
        let split = matches!(
            rec,
            BtRecord::SplitRight(_) | BtRecord::SplitLeft(_) | BtRecord::SetPrev { .. }
        );
        let root = matches!(rec, BtRecord::NewRoot(_) | BtRecord::Meta(_));
        if (split && i % 97 < 3) || root {
            cuts.push(i + 1);
        }
    }
    assert!(cuts.len() > 20);
    let (mut incomplete_before, mut incomplete_after) = (0, 0);
    for (n, &cut) in cuts.iter().enumerate().step_by(3) {
        let rel = RelFileNode(40000 + n as u32);
        replay(&p, rel, &recs[..cut]);
        // An insert is logged as InsertLeaf, or inside the split it causes
        // (the left half's record makes it reachable).
        let inserted = recs[..cut]
            .iter()
            .filter(|(_, b)| match BtRecord::decode(b).unwrap() {
                BtRecord::InsertLeaf { .. } => true,
                BtRecord::SplitLeft(img) => img.opaque.level == 0,
                _ => false,
            })
            .count();
        let r = BTree::open(p.clone(), rel, int8_desc(), None);
        let before = incomplete_splits(&r);
        incomplete_before += before;
        let rep = bt_index_check(&r).unwrap_or_else(|e| panic!("cut at {cut}: {}", e.message));
        assert_eq!(rep.leaf_items, inserted, "cut at {cut}");
        let fwd = scan_all(&r, Bound::Unbounded, Bound::Unbounded, Direction::Forward);
        let mut back = scan_all(&r, Bound::Unbounded, Bound::Unbounded, Direction::Backward);
        back.reverse();
        assert_eq!(fwd.len(), inserted);
        assert_eq!(fwd, back);
        // Later inserts finish any incomplete split and the tree stays whole.
        for i in 0..3_000usize {
            r.insert(
                &[Value::Int8((i * 37 % 1_000) as i64)],
                (2_000_000 + i as u32, 1),
            )
            .unwrap();
        }
        let rep =
            bt_index_check(&r).unwrap_or_else(|e| panic!("after cut at {cut}: {}", e.message));
        assert_eq!(rep.leaf_items, inserted + 3_000);
        incomplete_after += incomplete_splits(&r);
    }
    // Some cuts left a split without its downlink, and inserts finished them.
    assert!(incomplete_before > 5, "{incomplete_before}");
    assert!(
        incomplete_after < incomplete_before / 2,
        "{incomplete_after}"
    );
}

/// Pages whose split has no downlink yet.
fn incomplete_splits(t: &BTree) -> usize {
    let n = t
        .pool()
        .nblocks(t.rel(), heapdb::storage::ForkNumber::Main)
        .unwrap();
    (1..n)
        .filter(|&b| {
            let row = bt_page_stats(t, b).unwrap();
            let f = row
                .iter()
                .find(|c| c.0 == "btpo_flags")
                .unwrap()
                .1
                .as_i64()
                .unwrap();
            f as u16 & btpage::BTP_INCOMPLETE_SPLIT != 0
        })
        .count()
}

#[test]
fn bulk_build_rejects_unsorted_or_duplicate_input() {
    let dir = tempfile::tempdir().unwrap();
    let p = pool(&dir, 256);
    let d = int8_desc();
    let k = |v: i64, t: Tid| leaf_key(&d, &[Value::Int8(v)], t).unwrap();
    let e = BTree::build_sorted(
        p.clone(),
        RelFileNode(30090),
        d.clone(),
        None,
        vec![k(2, (0, 1)), k(1, (0, 2))],
    );
    assert!(e.is_err());
    let e = BTree::build_sorted(
        p,
        RelFileNode(30091),
        d.clone(),
        None,
        vec![k(1, (0, 1)), k(1, (0, 1))],
    );
    assert!(e.is_err());
}

/// The first leaf (left to right) whose high key kept a heap TID (a split
/// between equal key columns), with that key's value and TID.
fn leaf_with_tid_high_key(t: &BTree) -> Option<(BlockNumber, i64, Tid)> {
    // Block 1, the first root leaf, stays the leftmost leaf: a split keeps
    // the left half in place.
    let mut blk: BlockNumber = 1;
    loop {
        let buf = t
            .pool()
            .read_buffer(t.rel(), heapdb::storage::ForkNumber::Main, blk, None)
            .unwrap();
        let g = buf.read();
        let o = btpage::opaque(&g);
        if o.is_rightmost() {
            return None;
        }
        let hk = btpage::pivot_key(btpage::item(&g, P_HIKEY).unwrap());
        let (vals, tid) = heapdb::access::nbtree::keys::decode_key(t.desc(), hk).unwrap();
        if let Some(tid) = tid {
            return Some((blk, vals[0].as_i64().unwrap(), tid));
        }
        blk = o.next;
    }
}

/// A pivot that kept a TID is the full key of the split's first right
/// item. VACUUM can remove that entry and the heap can reuse its line
/// pointer for a new version with the same key (an UPDATE of another
/// column), so an insert can bring exactly the pivot's key back. It belongs
/// right of the pivot (keys below a page's high key, strictly); a descent
/// that went left on equality put it on the left page, at its high key,
/// which `bt_index_check` reports as "high key invariant violated".
#[test]
fn a_key_equal_to_a_pivot_goes_right_of_it() {
    let dir = tempfile::tempdir().unwrap();
    let t = BTree::create(pool(&dir, 512), RelFileNode(30100), int8_desc(), None).unwrap();
    // Few distinct values in random order: leaves split between equal
    // keys, so pivots keep the TID of their first right item.
    let n = 6000;
    let model = fill(&t, n, 5, 31);
    let (blk, v, tid) = leaf_with_tid_high_key(&t).expect("a pivot with a TID");
    assert_eq!(t.bulk_delete(|x| x == tid).unwrap(), 1);
    t.insert(&[Value::Int8(v)], tid).unwrap();
    let rep = bt_index_check(&t).unwrap_or_else(|e| panic!("re-insert right of {blk}: {e}"));
    assert_eq!(rep.leaf_items, n);
    // Found, once, by a lookup and by scans both ways.
    let tids = t.lookup(&search_key(t.desc(), &[Value::Int8(v)])).unwrap();
    assert_eq!(tids.iter().filter(|&&x| x == tid).count(), 1);
    let all = scan_all(&t, Bound::Unbounded, Bound::Unbounded, Direction::Forward);
    assert_eq!(all, model);
    let mut back = scan_all(&t, Bound::Unbounded, Bound::Unbounded, Direction::Backward);
    back.reverse();
    assert_eq!(back, model);
    // Inserting it again is refused as a duplicate: the descent reaches
    // the page that holds it.
    assert!(t.insert(&[Value::Int8(v)], tid).is_err());
}
