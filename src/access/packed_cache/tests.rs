//! The packed column cache's slots, generations and reclamation.

use super::*;

fn put(c: &PackedCache, block: BlockNumber, gen: u64, cols: &[(usize, &[i32])]) -> usize {
    let entries = cols.iter().map(|&(k, v)| (k, Entry::new(1, v))).collect();
    c.put(block, gen, Put::Columns(entries))
}

fn none(r: &Reader<'_>, block: BlockNumber) -> u64 {
    for k in 0..PACKED_MAX {
        assert!(r.get(block, k).is_none(), "block {block} has an entry");
    }
    r.generation(block)
}

#[test]
fn a_change_between_get_and_put_stores_nothing() {
    // The bound is process-wide: another test may have changed it.
    set_limit(1 << 30);
    let c = PackedCache::default();
    let r = c.reader();
    let g = none(&r, 3);
    assert_eq!(put(&c, 3, g, &[(0, &[1, 2]), (2, &[-1, 0])]), 2);
    let p = r.get(3, 0).expect("stored");
    assert_eq!(p.values(), &[1, 2]);
    assert_eq!(r.get(3, 2).expect("stored").values(), &[-1, 0]);
    assert!(r.get(3, 1).is_none(), "only the columns put");
    assert_eq!((p.tag(), p.rows(), p.declined()), (1, 2, false));
    // A second scan's column joins them; a column already held keeps
    // its entry.
    assert_eq!(put(&c, 3, g, &[(1, &[7, 8]), (0, &[9, 9])]), 1);
    assert_eq!(r.get(3, 0).expect("kept").values(), &[1, 2]);
    assert_eq!(r.get(3, 1).expect("added").values(), &[7, 8]);
    c.invalidate(3);
    // Unlinked, but the reader that took it still reads it.
    assert_eq!(p.values(), &[1, 2]);
    let g = none(&r, 3);
    c.invalidate(3);
    assert_eq!(put(&c, 3, g, &[(0, &[2])]), 0, "a writer came between");
    // A block no reader looked at: no chunk, and a reader after the
    // writer sees the writer's change.
    c.invalidate(5000);
    let g = none(&r, 5000);
    assert_eq!(put(&c, 5000, g, &[(3, &[3])]), 1);
    // Past what the cache covers: never stored.
    let far = (CHUNKS * CHUNK) as BlockNumber;
    let g = none(&r, far);
    assert_eq!(put(&c, far, g, &[(0, &[4])]), 0);
    assert_eq!(c.pages(), 1);
    assert_eq!(c.columns(1)[3].0, 1);
    c.clear();
    assert_eq!(c.pages(), 0);
}

#[test]
fn the_declined_mark_fills_every_slot_and_is_never_freed() {
    set_limit(1 << 30);
    let c = PackedCache::default();
    let r = c.reader();
    let g = none(&r, 9);
    assert_eq!(put(&c, 9, g, &[(1, &[5])]), 1);
    // A column already held keeps its entry; the other slots get the
    // mark.
    assert_eq!(c.put(9, g, Put::Declined), PACKED_MAX - 1);
    assert!(r.get(9, 0).expect("marked").declined());
    assert!(!r.get(9, 1).expect("kept").declined());
    assert_eq!(c.columns(1).iter().map(|c| c.0).sum::<u64>(), 1);
    c.invalidate(9);
    drop(r);
    let r = c.reader();
    none(&r, 9);
    assert_eq!(c.put(9, r.generation(9), Put::Declined), PACKED_MAX);
    assert_eq!(
        c.columns(1),
        [(0, 0); PACKED_MAX],
        "the mark is not counted"
    );
    c.invalidate(9);
    // The mark survives any number of unlinkings (it is static).
    for _ in 0..3 {
        let g = r.generation(9);
        assert_eq!(c.put(9, g, Put::Declined), PACKED_MAX);
        c.invalidate(9);
    }
    assert!(DECLINED.iter().all(|&w| w == 0));
}

#[test]
fn unlinked_entries_are_freed_once_their_readers_are_gone() {
    set_limit(1 << 30);
    let c = PackedCache::default();
    let early = c.reader();
    let g = none(&early, 7);
    assert_eq!(put(&c, 7, g, &[(0, &[5; 61])]), 1);
    let p = early.get(7, 0).expect("stored");
    c.invalidate(7);
    // Readers come and go while `early` holds the entry.
    for _ in 0..10 {
        let r = c.reader();
        none(&r, 7);
        c.invalidate(8);
    }
    assert_eq!(c.retired.lock().len(), 1, "held by the early reader");
    assert_eq!(p.values(), &[5; 61][..]);
    drop(early);
    assert_eq!(c.retired.lock().len(), 0, "freed with its last reader");
}

#[test]
fn readers_and_writers_at_once_read_only_live_entries() {
    set_limit(1 << 30);
    let c = PackedCache::default();
    std::thread::scope(|s| {
        for t in 0..3u32 {
            let c = &c;
            s.spawn(move || {
                for round in 0..2000u32 {
                    let r = c.reader();
                    for b in 0..8 {
                        // Each thread reads and builds its own pair of
                        // columns; every entry holds its block.
                        let ks = [t as usize, (t as usize + 1) % PACKED_MAX];
                        let got: Vec<_> = ks.iter().map(|&k| r.get(b, k)).collect();
                        if got.iter().all(|e| e.is_some()) {
                            for e in got.into_iter().flatten() {
                                assert_eq!(e.values(), &[b as i32; 32][..]);
                            }
                        } else {
                            let g = r.generation(b);
                            let v = [b as i32; 32];
                            put(c, b, g, &[(ks[0], &v), (ks[1], &v)]);
                        }
                    }
                    if (round + t) % 3 == 0 {
                        c.invalidate(round % 8);
                    }
                }
            });
        }
    });
    drop(c);
}

#[test]
fn entries_are_counted_until_dropped() {
    // The bound is process-wide: another test may have changed it.
    set_limit(1 << 30);
    let c = PackedCache::default();
    let before = used();
    let e = Entry::new(1, &[7, 8]);
    let bytes = e.bytes();
    assert!(used() >= before + bytes || used() < before, "counted");
    let g = c.reader().generation(0);
    assert_eq!(c.put(0, g, Put::Columns(vec![(0, e)])), 1);
    assert_eq!(c.columns(1)[0], (1, bytes as u64));
    c.invalidate(0);
    assert_eq!(c.pages(), 0);
}
