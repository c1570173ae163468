//! The buffer pool end to end through the public API: a 16-frame pool serves
//! a 1,000-page relation correctly; pins keep pages in place and running out
//! of unpinned buffers is an error, not a hang; everything written survives
//! a clean shutdown and reopening; counters tell hits from reads.

use heapdb::storage::{BufferPool, BufferUsage, ForkNumber, RelFileNode, BLCKSZ};

const REL: RelFileNode = RelFileNode(20000);
const MAIN: ForkNumber = ForkNumber::Main;

fn page_value(block: u32, i: usize) -> u8 {
    (block as usize * 31 + i * 7) as u8
}

#[test]
fn sixteen_frames_serve_a_thousand_pages_across_reopen() {
    let dir = tempfile::tempdir().unwrap();
    {
        let pool = BufferPool::open(dir.path(), 16).unwrap();
        pool.create_relation(REL, MAIN).unwrap();
        for _ in 0..1000 {
            let (block, buf) = pool.extend(REL, MAIN, None).unwrap();
            let mut g = buf.write();
            for i in 24..BLCKSZ {
                g[i] = page_value(block, i);
            }
            g.mark_dirty();
        }
        // Read back in a scattered order while everything churns.
        for k in 0..1000u32 {
            let b = (k * 617) % 1000;
            let buf = pool.read_buffer(REL, MAIN, b, None).unwrap();
            let g = buf.read();
            assert!(
                (24..BLCKSZ).step_by(97).all(|i| g[i] == page_value(b, i)),
                "block {b}"
            );
        }
        pool.flush_all().unwrap();
    }
    assert_eq!(
        std::fs::metadata(dir.path().join("base/20000"))
            .unwrap()
            .len(),
        1000 * BLCKSZ as u64
    );
    let pool = BufferPool::open(dir.path(), 16).unwrap();
    assert_eq!(pool.nblocks(REL, MAIN).unwrap(), 1000);
    let before = BufferUsage::current();
    for b in 0..1000 {
        let buf = pool.read_buffer(REL, MAIN, b, None).unwrap();
        let g = buf.read();
        assert!((24..BLCKSZ).all(|i| g[i] == page_value(b, i)), "block {b}");
    }
    let d = BufferUsage::current().since(&before);
    assert_eq!((d.shared_read, d.shared_hit), (1000, 0));
    assert_eq!(d.evicted, 1000 - 16);
    assert_eq!(
        d.shared_written, 0,
        "clean pages are evicted without writing"
    );
}

#[test]
fn pins_hold_pages_and_exhaustion_is_a_clean_error() {
    let dir = tempfile::tempdir().unwrap();
    let pool = BufferPool::open(dir.path(), 16).unwrap();
    pool.create_relation(REL, MAIN).unwrap();
    for _ in 0..100 {
        let (b, buf) = pool.extend(REL, MAIN, None).unwrap();
        let mut g = buf.write();
        g[40] = b as u8;
        g.mark_dirty();
    }
    let pinned: Vec<_> = (50..65)
        .map(|b| pool.read_buffer(REL, MAIN, b, None).unwrap())
        .collect();
    // One frame left: reading many other pages cycles through it alone.
    for b in 0..50 {
        let buf = pool.read_buffer(REL, MAIN, b, None).unwrap();
        assert_eq!(buf.read()[40], b as u8);
    }
    for (k, p) in pinned.iter().enumerate() {
        assert_eq!(p.read()[40], 50 + k as u8);
        assert!(pool.is_cached(REL, MAIN, 50 + k as u32));
    }
    let last = pool.read_buffer(REL, MAIN, 99, None).unwrap();
    let e = pool.read_buffer(REL, MAIN, 98, None).unwrap_err();
    assert_eq!(e.message, "no unpinned buffers available");
    drop(last);
    assert_eq!(
        pool.read_buffer(REL, MAIN, 98, None).unwrap().read()[40],
        98
    );
}
