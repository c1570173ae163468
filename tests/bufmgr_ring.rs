//! Access strategies end to end: a sequential scan of a relation four times
//! the size of the pool, through the bulk-read ring, leaves another
//! relation's cached pages cached; the same scan without a ring evicts them.
//! Shown with the per-statement hit/read counters.

use heapdb::storage::{BufferPool, BufferUsage, ForkNumber, RelFileNode, RingSizes};

const NBUFFERS: usize = 64;
const HOT: RelFileNode = RelFileNode(1);
const BIG: RelFileNode = RelFileNode(2);
const HOT_PAGES: u32 = 16;
const BIG_PAGES: u32 = 4 * NBUFFERS as u32;

fn setup() -> (tempfile::TempDir, std::sync::Arc<BufferPool>) {
    let dir = tempfile::tempdir().unwrap();
    let pool = BufferPool::open(dir.path(), NBUFFERS).unwrap();
    for (rel, n) in [(BIG, BIG_PAGES), (HOT, HOT_PAGES)] {
        pool.create_relation(rel, ForkNumber::Main).unwrap();
        for _ in 0..n {
            let (block, buf) = pool.extend(rel, ForkNumber::Main, None).unwrap();
            let mut g = buf.write();
            g[64..68].copy_from_slice(&block.to_le_bytes());
            g[24] = rel.0 as u8;
            g.mark_dirty();
        }
    }
    pool.flush_all().unwrap();
    // The big relation starts out of the pool (the hot one stays).
    pool.evict_relation(BIG).unwrap();
    // Warm the hot relation: read it a few times so its usage counts are high.
    for _ in 0..3 {
        read_all(&pool, HOT, HOT_PAGES, false);
    }
    (dir, pool)
}

/// Reads every page of `rel` (checking its contents); returns the counters.
fn read_all(pool: &BufferPool, rel: RelFileNode, n: u32, with_ring: bool) -> BufferUsage {
    read_all_sized(pool, rel, n, with_ring, &RingSizes::default())
}

/// [`read_all`] with the ring sized by `sizes`.
fn read_all_sized(
    pool: &BufferPool,
    rel: RelFileNode,
    n: u32,
    with_ring: bool,
    sizes: &RingSizes,
) -> BufferUsage {
    let before = BufferUsage::current();
    let mut ring = if with_ring {
        pool.scan_ring(rel, n, sizes)
    } else {
        None
    };
    assert_eq!(
        ring.is_some(),
        with_ring,
        "a relation 4x the pool gets a bulk-read ring"
    );
    for b in 0..n {
        let buf = pool
            .read_buffer(rel, ForkNumber::Main, b, ring.as_mut())
            .unwrap();
        let g = buf.read();
        assert_eq!(u32::from_le_bytes(g[64..68].try_into().unwrap()), b);
        assert_eq!(g[24], rel.0 as u8);
    }
    BufferUsage::current().since(&before)
}

#[test]
fn bulk_read_ring_keeps_other_pages_cached() {
    let (_dir, pool) = setup();
    let scan = read_all(&pool, BIG, BIG_PAGES, true);
    assert_eq!(scan.shared_read + scan.shared_hit, BIG_PAGES as u64);
    assert!(
        scan.shared_read >= (BIG_PAGES - NBUFFERS as u32) as u64,
        "{scan:?}"
    );
    let hot = read_all(&pool, HOT, HOT_PAGES, false);
    assert_eq!(hot.shared_hit, HOT_PAGES as u64, "{hot:?}");
    assert_eq!(hot.shared_read, 0, "{hot:?}");
    // The scan used few buffers: most of the big relation is not cached.
    let cached = (0..BIG_PAGES)
        .filter(|&b| pool.is_cached(BIG, ForkNumber::Main, b))
        .count();
    let ring_len = pool.ring(heapdb::storage::StrategyKind::BulkRead).len();
    assert_eq!(ring_len, NBUFFERS / 8);
    assert!(cached <= ring_len, "{cached} pages of the scan cached");
    // A second scan through a ring reads again: it was not cached wholesale.
    let again = read_all(&pool, BIG, BIG_PAGES, true);
    assert!(
        again.shared_read >= (BIG_PAGES - NBUFFERS as u32) as u64,
        "{again:?}"
    );
    assert_eq!(read_all(&pool, HOT, HOT_PAGES, false).shared_read, 0);
}

#[test]
fn without_a_ring_the_scan_evicts_other_pages() {
    let (_dir, pool) = setup();
    // Scan twice without a ring: usage counts of the hot pages run down and
    // the scan takes their buffers.
    read_all(&pool, BIG, BIG_PAGES, false);
    read_all(&pool, BIG, BIG_PAGES, false);
    let hot = read_all(&pool, HOT, HOT_PAGES, false);
    assert!(hot.shared_read > 0, "{hot:?}");
}

#[test]
fn ring_size_setting_changes_the_footprint() {
    let (_dir, pool) = setup();
    let sizes = RingSizes {
        bulk_read: 2 * heapdb::storage::BLCKSZ,
        ..Default::default()
    };
    read_all_sized(&pool, BIG, BIG_PAGES, true, &sizes);
    let cached = (0..BIG_PAGES)
        .filter(|&b| pool.is_cached(BIG, ForkNumber::Main, b))
        .count();
    assert!(
        cached <= 2,
        "a 2-page ring caches at most 2 pages of the scan: {cached}"
    );
}
