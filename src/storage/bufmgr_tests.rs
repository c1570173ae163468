//! Unit tests of the buffer pool (the integration tests are `tests/bufmgr_*.rs`).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::*;
use crate::err;
use crate::storage::checksum::CHECKSUM_OFFSET;

const REL: RelFileNode = RelFileNode(16384);
const MAIN: ForkNumber = ForkNumber::Main;

fn pool(n: usize) -> (tempfile::TempDir, Arc<BufferPool>) {
    let dir = tempfile::tempdir().expect("tempdir");
    let pool = BufferPool::open(dir.path(), n).expect("open pool");
    (dir, pool)
}

/// Extends `rel` by `n` pages, writing the block number at offset 100.
fn fill(pool: &BufferPool, rel: RelFileNode, n: u32) {
    for i in 0..n {
        let (block, buf) = pool.extend(rel, MAIN, None).unwrap();
        assert_eq!(block, i);
        let mut g = buf.write();
        g[100..104].copy_from_slice(&block.to_le_bytes());
        g[24] = 1; // a non-zero header byte, so the page carries a checksum
        g.mark_dirty();
    }
}

fn stamp(pool: &BufferPool, rel: RelFileNode, block: u32) -> u32 {
    let buf = pool.read_buffer(rel, MAIN, block, None).unwrap();
    let g = buf.read();
    u32::from_le_bytes(g[100..104].try_into().unwrap())
}

#[test]
fn pool_size_is_checked() {
    let dir = tempfile::tempdir().unwrap();
    let e = BufferPool::open(dir.path(), 8).expect_err("too small");
    assert_eq!(e.code, SqlState::InvalidParameterValue);
}

#[test]
fn small_pool_serves_a_large_relation() {
    let (_dir, pool) = pool(16);
    pool.create_relation(REL, MAIN).unwrap();
    fill(&pool, REL, 1000);
    assert_eq!(pool.nblocks(REL, MAIN).unwrap(), 1000);
    let before = pool.stats();
    for b in (0..1000).rev().step_by(3).chain(0..1000) {
        assert_eq!(stamp(&pool, REL, b), b);
    }
    let d = pool.stats().since(&before);
    assert!(d.shared_read >= 1000, "{d:?}");
    assert!(d.evicted >= 1000, "{d:?}");
    assert!(pool.stats().shared_written >= 1000 - 16);
}

#[test]
fn hits_raise_usage_and_are_counted() {
    let (_dir, pool) = pool(16);
    pool.create_relation(REL, MAIN).unwrap();
    fill(&pool, REL, 4);
    let before = BufferUsage::current();
    for _ in 0..10 {
        stamp(&pool, REL, 2);
    }
    let d = BufferUsage::current().since(&before);
    assert_eq!((d.shared_hit, d.shared_read), (10, 0));
    let buf = pool.read_buffer(REL, MAIN, 2, None).unwrap();
    let s = pool.desc(buf.buffer_id()).state.load(Ordering::Relaxed);
    assert_eq!(usage(s), MAX_USAGE);
    assert_eq!(refcount(s), 1);
}

#[test]
fn pins_prevent_eviction_and_exhaustion_is_an_error() {
    let (_dir, pool) = pool(16);
    pool.create_relation(REL, MAIN).unwrap();
    fill(&pool, REL, 40);
    let pins: Vec<_> = (0..16)
        .map(|b| pool.read_buffer(REL, MAIN, b, None).unwrap())
        .collect();
    let e = pool.read_buffer(REL, MAIN, 30, None).unwrap_err();
    assert_eq!(e.message, "no unpinned buffers available");
    for (b, p) in pins.iter().enumerate() {
        assert_eq!(p.block(), b as u32);
        assert_eq!(
            u32::from_le_bytes(p.read()[100..104].try_into().unwrap()),
            b as u32
        );
        assert!(pool.is_cached(REL, MAIN, b as u32));
    }
    drop(pins);
    assert_eq!(stamp(&pool, REL, 30), 30);
}

#[test]
fn a_large_flush_writes_every_dirty_page_of_every_relation_once() {
    // Over the two-thread threshold, across two relations (the halves of
    // the tag order split inside the first one).
    const PAGES: u32 = 1300;
    const OTHER: RelFileNode = RelFileNode(16385);
    assert!(2 * PAGES as usize >= crate::storage::bufio::PARALLEL_FLUSH);
    let dir = tempfile::tempdir().unwrap();
    {
        let pool = BufferPool::open(dir.path(), 4096).unwrap();
        pool.create_relation(REL, MAIN).unwrap();
        pool.create_relation(OTHER, MAIN).unwrap();
        fill(&pool, REL, PAGES);
        fill(&pool, OTHER, PAGES);
        pool.flush_all().unwrap();
        assert_eq!(pool.stats().shared_written, 2 * u64::from(PAGES));
        pool.flush_all().unwrap();
        assert_eq!(pool.stats().shared_written, 2 * u64::from(PAGES));
    }
    let pool = BufferPool::open(dir.path(), 4096).unwrap();
    for rel in [REL, OTHER] {
        for b in 0..PAGES {
            assert_eq!(stamp(&pool, rel, b), b, "{rel:?} block {b}");
        }
    }
}

#[test]
fn flush_all_writes_checksummed_pages_that_survive_reopen() {
    let dir = tempfile::tempdir().unwrap();
    {
        let pool = BufferPool::open(dir.path(), 16).unwrap();
        pool.create_relation(REL, MAIN).unwrap();
        fill(&pool, REL, 3);
        // An extended page left all zero stays all zero on disk.
        pool.extend(REL, MAIN, None).unwrap();
        pool.flush_all().unwrap();
        assert_eq!(pool.stats().shared_written, 4);
        pool.flush_all().unwrap();
        assert_eq!(
            pool.stats().shared_written,
            4,
            "clean pages are not rewritten"
        );
    }
    let bytes = std::fs::read(dir.path().join("base/16384")).unwrap();
    assert_eq!(bytes.len(), 4 * BLCKSZ);
    let page1 = &bytes[BLCKSZ..2 * BLCKSZ];
    assert_ne!(
        u16::from_le_bytes([page1[CHECKSUM_OFFSET], page1[CHECKSUM_OFFSET + 1]]),
        0
    );
    assert!(bytes[3 * BLCKSZ..].iter().all(|&b| b == 0));
    let pool = BufferPool::open(dir.path(), 16).unwrap();
    assert_eq!(pool.nblocks(REL, MAIN).unwrap(), 4);
    for b in 0..3 {
        assert_eq!(stamp(&pool, REL, b), b);
    }
    assert_eq!(stamp(&pool, REL, 3), 0);
}

#[test]
fn dropping_the_pool_discards_dirty_pages() {
    let dir = tempfile::tempdir().unwrap();
    {
        let pool = BufferPool::open(dir.path(), 16).unwrap();
        pool.create_relation(REL, MAIN).unwrap();
        fill(&pool, REL, 2);
    }
    let pool = BufferPool::open(dir.path(), 16).unwrap();
    assert_eq!(pool.nblocks(REL, MAIN).unwrap(), 0);
}

#[test]
fn wal_hook_gets_the_page_lsn_before_the_write() {
    let dir = tempfile::tempdir().unwrap();
    let pool = BufferPool::open(dir.path(), 16).unwrap();
    pool.create_relation(REL, MAIN).unwrap();
    fill(&pool, REL, 2);
    pool.flush_all().unwrap();
    {
        let buf = pool.read_buffer(REL, MAIN, 1, None).unwrap();
        let mut g = buf.write();
        g[200] = 0xEE;
        g.set_lsn(0x0102_0304_0506);
        g.mark_dirty();
        assert_eq!(g.lsn(), 0x0102_0304_0506);
    }
    let seen = Arc::new(parking_lot::Mutex::new(Vec::new()));
    let seen2 = seen.clone();
    let file = dir.path().join("base/16384");
    pool.set_wal_flush_hook(Arc::new(move |lsn: u64| {
        let on_disk = std::fs::read(&file).unwrap();
        seen2.lock().push((lsn, on_disk[BLCKSZ + 200]));
        Ok(())
    }));
    pool.flush_all().unwrap();
    assert_eq!(
        *seen.lock(),
        vec![(0x0102_0304_0506, 0)],
        "hook ran before the page was written"
    );
    let on_disk = std::fs::read(dir.path().join("base/16384")).unwrap();
    assert_eq!(on_disk[BLCKSZ + 200], 0xEE);

    // A failing hook keeps the page dirty and unwritten.
    {
        let buf = pool.read_buffer(REL, MAIN, 0, None).unwrap();
        let mut g = buf.write();
        g.set_lsn(77);
        g.mark_dirty();
    }
    pool.set_wal_flush_hook(Arc::new(|lsn: u64| {
        Err(err!(IoError, "wal not durable up to {lsn}"))
    }));
    let e = pool.flush_all().unwrap_err();
    assert_eq!(e.message, "wal not durable up to 77");
    pool.clear_wal_flush_hook();
    let written = pool.stats().shared_written;
    pool.flush_all().unwrap();
    assert_eq!(pool.stats().shared_written, written + 1);
}

#[test]
fn closure_hooks_let_bulk_reads_write_their_own_buffers() {
    let (dir, pool) = pool(64);
    assert_eq!(pool.data_dir(), dir.path());
    assert!(format!("{pool:?}").contains("nbuffers: 64"));
    pool.create_relation(REL, MAIN).unwrap();
    fill(&pool, REL, 20);
    pool.evict_relation(REL).unwrap();
    let lsns = Arc::new(parking_lot::Mutex::new(Vec::new()));
    let l2 = lsns.clone();
    pool.set_wal_flush_hook(Arc::new(move |lsn: u64| {
        l2.lock().push(lsn);
        Ok(())
    }));
    let mut ring = pool.ring(StrategyKind::BulkRead);
    for b in 0..16 {
        let buf = pool.read_buffer(REL, MAIN, b, Some(&mut ring)).unwrap();
        if b < 8 {
            let mut g = buf.write();
            g.set_lsn(1000 + b as u64);
            g.mark_dirty_hint();
        }
    }
    // The second lap of the ring wrote the 8 dirty pages, flushing first.
    assert_eq!(*lsns.lock(), (1000..1008).collect::<Vec<u64>>());
    assert!((0..8).all(|b| !pool.is_cached(REL, MAIN, b)));
}

#[test]
fn cleanup_lock_needs_the_only_pin() {
    let (_dir, pool) = pool(16);
    pool.create_relation(REL, MAIN).unwrap();
    fill(&pool, REL, 1);
    let a = pool.read_buffer(REL, MAIN, 0, None).unwrap();
    let b = a.clone();
    assert!(a.try_cleanup_lock().is_none());
    drop(b);
    let g = a.try_cleanup_lock().expect("only pin");
    assert!(a.try_read().is_none());
    drop(g);
    let r = a.read();
    assert!(a.try_write().is_none());
    assert!(a.try_read().is_some());
    drop(r);
}

#[test]
fn truncate_and_drop_discard_buffers() {
    let (dir, pool) = pool(32);
    pool.create_relation(REL, MAIN).unwrap();
    pool.create_relation(REL, ForkNumber::VisibilityMap)
        .unwrap();
    fill(&pool, REL, 10);
    pool.extend(REL, ForkNumber::VisibilityMap, None).unwrap();
    {
        let _pin = pool.read_buffer(REL, MAIN, 8, None).unwrap();
        let e = pool.truncate_relation(REL, MAIN, 5).unwrap_err();
        assert_eq!(e.code, SqlState::ObjectInUse);
    }
    pool.truncate_relation(REL, MAIN, 5).unwrap();
    assert_eq!(pool.nblocks(REL, MAIN).unwrap(), 5);
    assert!(!pool.is_cached(REL, MAIN, 7));
    assert!(pool.is_cached(REL, MAIN, 4));
    assert!(pool.read_buffer(REL, MAIN, 7, None).is_err());
    assert_eq!(stamp(&pool, REL, 4), 4);
    // Truncated pages are never written back.
    pool.flush_all().unwrap();
    assert_eq!(
        std::fs::metadata(dir.path().join("base/16384"))
            .unwrap()
            .len(),
        5 * BLCKSZ as u64
    );
    // Extending again yields fresh zero pages.
    let (b, buf) = pool.extend(REL, MAIN, None).unwrap();
    assert_eq!(b, 5);
    assert!(buf.read().iter().all(|&x| x == 0));
    drop(buf);
    pool.drop_relation(REL).unwrap();
    assert!(!pool.is_cached(REL, MAIN, 0));
    assert!(!pool.relation_exists(REL, MAIN));
    assert!(!pool.relation_exists(REL, ForkNumber::VisibilityMap));
    assert!(!dir.path().join("base/16384_vm").exists());
    pool.flush_all().unwrap();
}

#[test]
fn evict_relation_makes_reads_cold() {
    let (_dir, pool) = pool(64);
    pool.create_relation(REL, MAIN).unwrap();
    fill(&pool, REL, 8);
    pool.evict_relation(REL).unwrap();
    let before = pool.stats();
    assert!(pool.prefetch(REL, MAIN, 3).unwrap());
    for b in 0..8 {
        assert_eq!(stamp(&pool, REL, b), b);
    }
    let d = pool.stats().since(&before);
    assert_eq!((d.shared_read, d.shared_hit), (8, 0));
    assert!(!pool.prefetch(REL, MAIN, 3).unwrap(), "cached: no advice");
}

#[test]
fn prefetch_range_advises_the_runs_the_pool_lacks() {
    let (_dir, pool) = pool(64);
    pool.create_relation(REL, MAIN).unwrap();
    fill(&pool, REL, 12);
    pool.evict_relation(REL).unwrap();
    assert_eq!(pool.prefetch_range(REL, MAIN, 0, 12).unwrap(), 1, "one run");
    // Blocks 3 and 7..=8 in the pool: the rest in three runs.
    for b in [3, 7, 8] {
        assert_eq!(stamp(&pool, REL, b), b);
    }
    assert_eq!(pool.prefetch_range(REL, MAIN, 0, 12).unwrap(), 3);
    assert_eq!(
        pool.prefetch_range(REL, MAIN, 7, 2).unwrap(),
        0,
        "all cached"
    );
    assert_eq!(pool.prefetch_range(REL, MAIN, 2, 2).unwrap(), 1);
    // Advice changes no contents and counts no buffer access.
    let before = pool.stats();
    assert_eq!(pool.prefetch_range(REL, MAIN, 9, 3).unwrap(), 1);
    let d = pool.stats().since(&before);
    assert_eq!((d.shared_read, d.shared_hit), (0, 0));
    for b in 0..12 {
        assert_eq!(stamp(&pool, REL, b), b);
    }
}

#[test]
fn bulk_write_ring_confines_a_load() {
    let (_dir, pool) = pool(128);
    let other = RelFileNode(1);
    pool.create_relation(other, MAIN).unwrap();
    pool.create_relation(REL, MAIN).unwrap();
    fill(&pool, other, 32);
    let mut ring = pool.ring(StrategyKind::BulkWrite);
    assert_eq!(ring.len(), 16, "capped at an eighth of the pool");
    for _ in 0..500 {
        let (_, buf) = pool.extend(REL, MAIN, Some(&mut ring)).unwrap();
        let mut g = buf.write();
        g[50] = 9;
        g.mark_dirty();
    }
    for b in 0..32 {
        assert!(
            pool.is_cached(other, MAIN, b),
            "block {b} of the other relation evicted"
        );
    }
    pool.flush_all().unwrap();
    let buf = pool.read_buffer(REL, MAIN, 3, None).unwrap();
    assert_eq!(buf.read()[50], 9);
}

#[test]
fn bulk_read_rejects_dirty_buffers_needing_a_wal_flush() {
    struct Wal(AtomicU64);
    impl WalFlushHook for Wal {
        fn flush(&self, lsn: u64) -> Result<()> {
            self.0.fetch_max(lsn, Ordering::SeqCst);
            Ok(())
        }
        fn flushed_lsn(&self) -> u64 {
            self.0.load(Ordering::SeqCst)
        }
    }
    let (_dir, pool) = pool(64);
    pool.create_relation(REL, MAIN).unwrap();
    fill(&pool, REL, 40);
    pool.flush_all().unwrap();
    let wal = Arc::new(Wal(AtomicU64::new(10)));
    pool.set_wal_flush_hook(wal.clone());
    pool.evict_relation(REL).unwrap();
    let mut ring = pool.ring(StrategyKind::BulkRead);
    assert_eq!(ring.len(), 8);
    // Scan the first 8 pages through the ring, dirtying each with an LSN the
    // WAL has not flushed yet.
    for b in 0..8 {
        let buf = pool.read_buffer(REL, MAIN, b, Some(&mut ring)).unwrap();
        let mut g = buf.write();
        g.set_lsn(100 + b as u64);
        g.mark_dirty();
    }
    let written = pool.stats().shared_written;
    for b in 8..16 {
        pool.read_buffer(REL, MAIN, b, Some(&mut ring)).unwrap();
    }
    assert_eq!(
        pool.stats().shared_written,
        written,
        "rejected, not written by the scan"
    );
    assert_eq!(wal.flushed_lsn(), 10, "the scan never flushed the WAL");
    for b in 0..8 {
        assert!(
            pool.is_cached(REL, MAIN, b),
            "rejected buffers stay for the sweep"
        );
    }
    // Once the WAL is flushed far enough, the scan writes its own buffers.
    wal.0.store(1000, Ordering::SeqCst);
    for b in 16..24 {
        let buf = pool.read_buffer(REL, MAIN, b, Some(&mut ring)).unwrap();
        let mut g = buf.write();
        g.set_lsn(500);
        g.mark_dirty();
    }
    for b in 24..32 {
        pool.read_buffer(REL, MAIN, b, Some(&mut ring)).unwrap();
    }
    assert_eq!(pool.stats().shared_written, written + 8);
}

#[test]
fn write_rings_grow_instead_of_waiting_for_the_wal_up_to_their_bound() {
    /// A log that counts the flushes that had to wait (made it advance).
    struct Wal {
        flushed: AtomicU64,
        flushes: AtomicU64,
        requests: AtomicU64,
    }
    impl WalFlushHook for Wal {
        fn flush(&self, lsn: u64) -> Result<()> {
            if self.flushed.fetch_max(lsn, Ordering::SeqCst) < lsn {
                self.flushes.fetch_add(1, Ordering::SeqCst);
            }
            Ok(())
        }
        fn flushed_lsn(&self) -> u64 {
            self.flushed.load(Ordering::SeqCst)
        }
        fn request_flush(&self) {
            self.requests.fetch_add(1, Ordering::SeqCst);
        }
    }
    let (_dir, pool) = pool(1024);
    pool.create_relation(REL, MAIN).unwrap();
    fill(&pool, REL, 400);
    pool.flush_all().unwrap();
    pool.evict_relation(REL).unwrap();
    let wal = Arc::new(Wal {
        flushed: AtomicU64::new(10),
        flushes: AtomicU64::new(0),
        requests: AtomicU64::new(0),
    });
    pool.set_wal_flush_hook(wal.clone());
    let mut ring = pool.ring(StrategyKind::Vacuum);
    assert_eq!(
        (ring.len(), ring.max_len()),
        (32, 128),
        "an eighth of the pool"
    );
    let dirty = |ring: &mut Ring, blocks: std::ops::Range<u32>| {
        for b in blocks {
            let buf = pool.read_buffer(REL, MAIN, b, Some(&mut *ring)).unwrap();
            let mut g = buf.write();
            g.set_lsn(100 + b as u64);
            g.mark_dirty();
        }
    };
    // While the log lags, the ring keeps its dirty buffers and grows.
    dirty(&mut ring, 0..128);
    assert_eq!(ring.len(), 128);
    assert_eq!(wal.flushes.load(Ordering::SeqCst), 0, "nobody waited");
    assert!(
        wal.requests.load(Ordering::SeqCst) >= 4,
        "asked ahead each half lap"
    );
    // At its bound it waits for the flush, and stays at its bound.
    let written = pool.stats().shared_written;
    dirty(&mut ring, 128..200);
    assert!(wal.flushes.load(Ordering::SeqCst) >= 1);
    assert_eq!(ring.len(), 128);
    assert!(pool.stats().shared_written > written);
    // Once the log keeps up, buffers are written without any flush.
    wal.flushed.store(1_000_000, Ordering::SeqCst);
    let flushes = wal.flushes.load(Ordering::SeqCst);
    dirty(&mut ring, 200..400);
    assert_eq!(wal.flushes.load(Ordering::SeqCst), flushes);
    let resident = (0..400).filter(|&b| pool.is_cached(REL, MAIN, b)).count();
    assert!(
        resident <= 128,
        "{resident} pages resident beyond the ring's bound"
    );
}

#[test]
fn scan_ring_over_a_quarter_only_when_it_would_evict_pages_in_use() {
    let (_dir, pool) = pool(64);
    const OTHER: RelFileNode = RelFileNode(16385);
    assert_eq!(pool.reusable_buffers(), 64, "an empty pool is all free");
    assert!(
        pool.scan_ring(REL, 16, &RingSizes::default()).is_none(),
        "a quarter: no ring"
    );
    assert!(
        pool.scan_ring(REL, 17, &RingSizes::default()).is_none(),
        "fits the free pool"
    );
    assert!(
        pool.scan_ring(REL, 64, &RingSizes::default()).is_none(),
        "fits the free pool"
    );
    assert_eq!(
        pool.scan_ring(REL, 65, &RingSizes::default())
            .map(|r| r.kind()),
        Some(StrategyKind::BulkRead),
        "larger than the pool"
    );
    // 40 buffers in use (usage counts above zero): 24 are left.
    pool.create_relation(OTHER, MAIN).unwrap();
    fill(&pool, OTHER, 40);
    assert_eq!(pool.reusable_buffers(), 24);
    assert!(pool.scan_ring(REL, 24, &RingSizes::default()).is_none());
    assert!(
        pool.scan_ring(REL, 25, &RingSizes::default()).is_some(),
        "would evict pages in use"
    );
    // A relation's own cached pages need no buffer: OTHER's 40 fit.
    assert!(pool.scan_ring(OTHER, 40, &RingSizes::default()).is_none());
    // Usage counts worn down to zero by the clock sweep are cold again.
    for id in 0..pool.nbuffers() as u32 {
        let d = pool.desc(id);
        let s = d.lock_header();
        d.unlock_header(s & !USAGE_MASK);
    }
    assert_eq!(pool.reusable_buffers(), 64);
    assert!(pool.scan_ring(REL, 64, &RingSizes::default()).is_none());

    // PostgreSQL's rule on demand: a ring for everything over a quarter.
    let pg = RingSizes {
        quarter_rule: true,
        ..RingSizes::default()
    };
    assert!(pool.scan_ring(REL, 16, &pg).is_none());
    assert_eq!(
        pool.scan_ring(REL, 17, &pg).map(|r| r.kind()),
        Some(StrategyKind::BulkRead)
    );
    // Each request carries its sizes: one ring to the next.
    assert!(pool.scan_ring(REL, 16, &pg).is_none());
    assert!(pool.scan_ring(REL, 17, &pg).is_some());
    assert!(pool.scan_ring_shared(REL, 17, 2, &pg).is_some());
    let small = RingSizes {
        bulk_read: 4 * BLCKSZ,
        ..RingSizes::default()
    };
    assert!(
        pool.scan_ring(REL, 17, &small).is_none(),
        "back to the default rule"
    );
    assert_eq!(pool.ring_with(StrategyKind::BulkRead, &small).len(), 4);
    assert_eq!(pool.ring(StrategyKind::BulkRead).len(), 8, "the default");
    let sizes = RingSizes {
        vacuum: 3 * BLCKSZ,
        quarter_rule: true,
        ..RingSizes::default()
    };
    assert_eq!(pool.ring_with(StrategyKind::Vacuum, &sizes).len(), 3);
    assert_eq!(pool.ring_with(StrategyKind::BulkWrite, &sizes).len(), 8);
    assert_eq!(pool.scan_ring(REL, 17, &sizes).map(|r| r.len()), Some(8));
    assert!(pool.scan_ring(REL, 16, &sizes).is_none());
}

#[test]
fn parallel_participants_split_one_bulk_read_ring() {
    let (_dir, pool) = pool(16384);
    let pg = RingSizes {
        quarter_rule: true,
        ..RingSizes::default()
    };
    assert!(
        pool.scan_ring_shared(REL, 4096, 3, &pg).is_none(),
        "a quarter: no ring"
    );
    let whole = pool.scan_ring(REL, 4097, &pg).unwrap().len();
    assert_eq!(whole, 32);
    let shares: Vec<usize> = [1, 2, 3, 64]
        .iter()
        .map(|&p| pool.scan_ring_shared(REL, 4097, p, &pg).unwrap().len())
        .collect();
    assert_eq!(shares, [32, 16, 10, 1], "at least one buffer each");
    let r = pool.scan_ring_shared(REL, 4097, 3, &pg).unwrap();
    assert_eq!((r.kind(), r.max_len()), (StrategyKind::BulkRead, 10));
}

#[test]
fn small_rings_leave_regions_without_huge_pages_and_normal_reads_advise_them() {
    // 32 MiB of frames; 1,100 pages are over a quarter of them.
    const N: usize = 4096;
    const PAGES: u32 = 1100;
    let dir = tempfile::tempdir().unwrap();
    let config = BufferPoolConfig {
        nbuffers: N,
        ..BufferPoolConfig::default()
    };
    {
        let pool = BufferPool::open_with(dir.path(), config).unwrap();
        pool.create_relation(REL, MAIN).unwrap();
        fill(&pool, REL, PAGES);
        pool.flush_all().unwrap();
        assert!(pool.huge_regions_advised() >= 1, "extension is normal use");
    }
    let pool = BufferPool::open_with(dir.path(), config).unwrap();
    assert_eq!(pool.huge_regions_advised(), 0);
    // PostgreSQL's rule: the relation would fit the empty pool.
    let pg = RingSizes {
        quarter_rule: true,
        ..RingSizes::default()
    };
    let mut ring = pool
        .scan_ring(REL, PAGES, &pg)
        .expect("over a quarter of the pool");
    assert_eq!(ring.len(), 32);
    for b in 0..PAGES {
        assert_eq!(stamp_with(&pool, b, Some(&mut ring)), b);
    }
    if let Some(r) = pool.resident_frame_bytes() {
        assert!(r <= 32 * BLCKSZ, "{r} bytes resident for a 32-buffer ring");
        assert!(r >= 16 * BLCKSZ, "{r} bytes: the ring's frames are");
    }
    assert_eq!(pool.huge_regions_advised(), 0, "a 256 kB ring: 4 kB pages");
    // The next scan's ring starts from the buffers this one leaves: no new
    // frame is touched.
    let resident = pool.resident_frame_bytes();
    drop(ring);
    let mut again = pool.scan_ring(REL, PAGES, &pg).unwrap();
    for b in 0..PAGES {
        assert_eq!(stamp_with(&pool, b, Some(&mut again)), b);
    }
    assert_eq!(pool.resident_frame_bytes(), resident);
    let holding = pool
        .buffer_summary()
        .iter()
        .filter(|b| b.tag.is_some())
        .count();
    assert_eq!(holding, 32, "the same 32 frames");
    drop(again);
    // A normal read takes the frame under the clock hand (after the
    // ring's) for good: its region is advised.
    assert_eq!(stamp(&pool, REL, 7), 7);
    assert_eq!(pool.huge_regions_advised(), 1, "a normal read advises");
    // A ring of a huge page or more is pool-sized use too: the regions of
    // its 256 frames, the next ones under the hand, are advised.
    let huge = RingSizes {
        bulk_read: HUGE_PAGE,
        quarter_rule: true,
        ..RingSizes::default()
    };
    let mut big = pool.scan_ring(REL, PAGES, &huge).unwrap();
    assert_eq!(big.len(), HUGE_PAGE / BLCKSZ);
    for b in 0..PAGES {
        assert_eq!(stamp_with(&pool, b, Some(&mut big)), b);
    }
    let advised = pool.huge_regions_advised();
    assert!((2..=3).contains(&advised), "{advised} regions");
}

fn stamp_with(pool: &BufferPool, block: u32, ring: Option<&mut Ring>) -> u32 {
    let buf = pool.read_buffer(REL, MAIN, block, ring).unwrap();
    let g = buf.read();
    u32::from_le_bytes(g[100..104].try_into().unwrap())
}

#[test]
fn reading_beyond_the_end_fails_cleanly_and_leaves_no_pin() {
    let (_dir, pool) = pool(16);
    pool.create_relation(REL, MAIN).unwrap();
    fill(&pool, REL, 2);
    for _ in 0..40 {
        let e = pool.read_buffer(REL, MAIN, 5, None).unwrap_err();
        assert!(
            e.message.contains("could not read block 5"),
            "{}",
            e.message
        );
    }
    let e = pool
        .read_buffer(RelFileNode(99), MAIN, 0, None)
        .unwrap_err();
    assert_eq!(e.code, SqlState::UndefinedFile);
    // No pins leaked: every buffer is still usable.
    for b in 0..2 {
        assert_eq!(stamp(&pool, REL, b), b);
    }
    for d in pool.descs.iter() {
        assert_eq!(refcount(d.state.load(Ordering::Relaxed)), 0);
    }
}

#[test]
fn zero_page_mode_skips_the_read_and_extends() {
    let dir = tempfile::tempdir().unwrap();
    {
        let pool = BufferPool::open(dir.path(), 16).unwrap();
        pool.create_relation(REL, MAIN).unwrap();
        fill(&pool, REL, 2);
        pool.flush_all().unwrap();
    }
    // Corrupt block 1 on disk: a normal read fails, a zero-page read does not.
    let path = dir.path().join("base/16384");
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[BLCKSZ + 300] ^= 0xFF;
    std::fs::write(&path, &bytes).unwrap();
    let pool = BufferPool::open(dir.path(), 16).unwrap();
    assert_eq!(
        pool.read_buffer(REL, MAIN, 1, None).unwrap_err().code,
        SqlState::DataCorrupted
    );
    {
        let buf = pool
            .read_buffer_extended(REL, MAIN, 1, ReadMode::ZeroPage, None)
            .unwrap();
        let mut g = buf.write();
        assert!(g.iter().all(|&b| b == 0));
        g[24] = 1;
        g[100] = 42;
        g.mark_dirty();
    }
    // A cached page is handed out as it is.
    let buf = pool
        .read_buffer_extended(REL, MAIN, 1, ReadMode::ZeroPage, None)
        .unwrap();
    assert_eq!(buf.read()[100], 42);
    drop(buf);
    // Beyond the end: the fork grows; a missing fork is created.
    let buf = pool
        .read_buffer_extended(REL, MAIN, 5, ReadMode::ZeroPage, None)
        .unwrap();
    drop(buf);
    assert_eq!(pool.nblocks(REL, MAIN).unwrap(), 6);
    let vm = ForkNumber::VisibilityMap;
    drop(
        pool.read_buffer_extended(REL, vm, 0, ReadMode::ZeroPage, None)
            .unwrap(),
    );
    assert_eq!(pool.nblocks(REL, vm).unwrap(), 1);
    assert_eq!(pool.read_buffer(REL, MAIN, 4, None).unwrap().read()[100], 0);
    pool.flush_all().unwrap();
    drop(pool);
    let pool = BufferPool::open(dir.path(), 16).unwrap();
    assert_eq!(
        pool.read_buffer(REL, MAIN, 1, None).unwrap().read()[100],
        42
    );
    // The size reached by the zero-page read survived, though nothing dirtied
    // blocks 2..=5; and truncating into such holes keeps the size too.
    assert_eq!(pool.nblocks(REL, MAIN).unwrap(), 6);
    pool.truncate_relation(REL, MAIN, 4).unwrap();
    drop(pool);
    let pool = BufferPool::open(dir.path(), 16).unwrap();
    assert_eq!(pool.nblocks(REL, MAIN).unwrap(), 4);
    let buf = pool.read_buffer(REL, MAIN, 3, None).unwrap();
    assert!(buf.read().iter().all(|&b| b == 0));
}

#[test]
fn cleanup_lock_waits_for_other_pins() {
    let (_dir, pool) = pool(16);
    pool.create_relation(REL, MAIN).unwrap();
    fill(&pool, REL, 1);
    let other = pool.read_buffer(REL, MAIN, 0, None).unwrap();
    let id = other.buffer_id();
    let released = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            // Let go only once the other thread holds its own pin (so its
            // cleanup lock has to wait for this one to go).
            let start = std::time::Instant::now();
            while pool
                .buffer_summary()
                .iter()
                .find(|b| b.buffer_id == id)
                .map_or(0, |b| b.pin_count)
                < 2
            {
                assert!(start.elapsed().as_secs() < 60, "the second pin never came");
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            released.store(true, Ordering::SeqCst);
            drop(other);
        });
        let mine = pool.read_buffer(REL, MAIN, 0, None).unwrap();
        let g = mine.cleanup_lock();
        assert!(
            released.load(Ordering::SeqCst),
            "got the lock only after the other pin went"
        );
        drop(g);
    });
}

#[test]
fn buffer_summary_shows_tags_and_state() {
    let (_dir, pool) = pool(16);
    pool.create_relation(REL, MAIN).unwrap();
    fill(&pool, REL, 3);
    let pin = pool.read_buffer(REL, MAIN, 1, None).unwrap();
    let info = pool.buffer_summary();
    assert_eq!(info.len(), 16);
    let used: Vec<_> = info.iter().filter(|i| i.tag.is_some()).collect();
    assert_eq!(used.len(), 3);
    assert!(used
        .iter()
        .all(|i| i.valid && i.dirty && i.tag.unwrap().rel == REL));
    let b1 = info
        .iter()
        .find(|i| i.buffer_id == pin.buffer_id())
        .unwrap();
    assert_eq!(
        (b1.pin_count, b1.usage_count, b1.tag.unwrap().block),
        (1, 2, 1)
    );
}

#[test]
fn failed_try_locks_leave_the_holders_lock_alone() {
    // A failed try_read/try_write must not release the lock someone else
    // holds (it once dropped a guard it never owned).
    let (_d, pool) = pool(16);
    let rel = RelFileNode(1);
    pool.create_relation(rel, MAIN).unwrap();
    fill(&pool, rel, 1);
    let buf = pool.read_buffer(rel, MAIN, 0, None).unwrap();
    let w = buf.write();
    for _ in 0..3 {
        assert!(buf.try_read().is_none());
        assert!(buf.try_write().is_none());
    }
    assert!(buf.try_cleanup_lock().is_none());
    drop(w);
    let r = buf.read();
    assert!(buf.try_write().is_none(), "a reader still holds the lock");
    assert!(buf.try_read().is_some());
    drop(r);
    assert!(buf.try_write().is_some());
}

fn flip_on_disk(dir: &std::path::Path, block: u32, at: usize) {
    use std::os::unix::fs::FileExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(dir.join("base/16384"))
        .unwrap();
    let pos = block as u64 * BLCKSZ as u64 + at as u64;
    let mut b = [0u8];
    f.read_exact_at(&mut b, pos).unwrap();
    f.write_all_at(&[b[0] ^ 0x40], pos).unwrap();
}

#[test]
fn read_buffers_reads_runs_keeps_cached_pages_and_stops_at_a_bad_page() {
    let (dir, pool) = pool(128);
    pool.create_relation(REL, MAIN).unwrap();
    fill(&pool, REL, 40);
    pool.evict_relation(REL).unwrap();
    assert_eq!(stamp(&pool, REL, 5), 5, "one page cached before");
    let mut ring = pool.ring(StrategyKind::Vacuum);
    let mut out = Vec::new();
    let before = BufferUsage::current();
    pool.read_buffers(REL, MAIN, 0, 16, &[], Some(&mut ring), &mut out)
        .unwrap();
    let d = BufferUsage::current().since(&before);
    assert_eq!((d.shared_read, d.shared_hit), (15, 1), "{d:?}");
    let blocks: Vec<u32> = out.iter().map(|b| b.block()).collect();
    assert_eq!(blocks, (0..16).collect::<Vec<_>>());
    assert!(out.iter().all(|b| {
        let g = b.read();
        u32::from_le_bytes(g[100..104].try_into().unwrap()) == b.block()
    }));
    out.clear();
    // Clamped to the fork's end.
    pool.read_buffers(REL, MAIN, 35, 16, &[], Some(&mut ring), &mut out)
        .unwrap();
    assert_eq!(out.len(), 5);
    out.clear();
    // A page failing its checksum ends the run before it, stays invalid,
    // and reads as the usual error.
    pool.evict_relation(REL).unwrap();
    flip_on_disk(dir.path(), 22, 3000);
    pool.read_buffers(REL, MAIN, 20, 8, &[], Some(&mut ring), &mut out)
        .unwrap();
    assert_eq!(out.iter().map(|b| b.block()).collect::<Vec<_>>(), [20, 21]);
    out.clear();
    let e = pool.read_buffer(REL, MAIN, 22, None).unwrap_err();
    assert_eq!(e.code, SqlState::DataCorrupted);
    let e = pool
        .read_buffers(REL, MAIN, 22, 4, &[], Some(&mut ring), &mut out)
        .unwrap_err();
    assert_eq!(e.message, "invalid page in block 22 of relation base/16384");
    assert!(out.is_empty());
    // Past the end: the usual error too.
    assert!(pool
        .read_buffers(REL, MAIN, 40, 4, &[], None, &mut out)
        .is_err());
}

#[test]
fn read_buffers_records_and_trusts_only_right_hints() {
    let (_dir, pool) = pool(128);
    pool.create_relation(REL, MAIN).unwrap();
    fill(&pool, REL, 20);
    pool.evict_relation(REL).unwrap();
    let hints: Vec<std::sync::atomic::AtomicU32> = (0..20)
        .map(|_| std::sync::atomic::AtomicU32::new(u32::MAX))
        .collect();
    let mut out = Vec::new();
    pool.read_buffers(REL, MAIN, 0, 16, &hints, None, &mut out)
        .unwrap();
    // Every page's buffer is recorded, past the run nothing.
    for b in &out {
        assert_eq!(hints[b.block() as usize].load(Ordering::Relaxed), b.id);
    }
    assert_eq!(hints[16].load(Ordering::Relaxed), u32::MAX);
    let ids: Vec<u32> = out.iter().map(|b| b.id).collect();
    out.clear();
    // Wrong hints (another page's buffer, an id past the pool) are checked
    // and fall back to the mapping table; the right ones pin their buffer.
    hints[3].store(ids[4], Ordering::Relaxed);
    hints[5].store(u32::MAX - 1, Ordering::Relaxed);
    let before = BufferUsage::current();
    pool.read_buffers(REL, MAIN, 0, 16, &hints, None, &mut out)
        .unwrap();
    let d = BufferUsage::current().since(&before);
    assert_eq!((d.shared_read, d.shared_hit), (0, 16), "{d:?}");
    assert_eq!(out.iter().map(|b| b.id).collect::<Vec<_>>(), ids);
    for b in &out {
        assert_eq!(b.tag.block, b.block());
        let g = b.read();
        assert_eq!(
            u32::from_le_bytes(g[100..104].try_into().unwrap()),
            b.block()
        );
    }
    assert_eq!(
        hints[3].load(Ordering::Relaxed),
        ids[3],
        "wrong hint corrected"
    );
    assert_eq!(hints[5].load(Ordering::Relaxed), ids[5]);
}

#[test]
fn a_write_ring_writes_the_buffers_it_reuses_next_in_one_go() {
    let (_dir, pool) = pool(256);
    pool.create_relation(REL, MAIN).unwrap();
    fill(&pool, REL, 64);
    pool.evict_relation(REL).unwrap();
    let mut ring = pool.ring(StrategyKind::Vacuum);
    assert_eq!(ring.len(), 32);
    let dirty = |pool: &BufferPool, b: u32| {
        pool.buffer_summary()
            .iter()
            .any(|i| i.dirty && i.tag.is_some_and(|t| t.rel == REL && t.block == b))
    };
    for b in 0..33 {
        let buf = pool.read_buffer(REL, MAIN, b, Some(&mut ring)).unwrap();
        let mut g = buf.write();
        g[200] = g[200].wrapping_add(7);
        g.mark_dirty();
    }
    // Reading block 32 reused block 0's buffer: blocks 0..16 went out in
    // one write, the rest of the first lap is still dirty.
    assert!((1..16).all(|b| !dirty(&pool, b)), "written with block 0");
    assert!((16..32).all(|b| dirty(&pool, b)));
    for b in 33..64 {
        let buf = pool.read_buffer(REL, MAIN, b, Some(&mut ring)).unwrap();
        let mut g = buf.write();
        g[200] = g[200].wrapping_add(7);
        g.mark_dirty();
    }
    pool.flush_all().unwrap();
    pool.evict_relation(REL).unwrap();
    for b in 0..64 {
        let buf = pool.read_buffer(REL, MAIN, b, None).unwrap();
        let g = buf.read();
        assert_eq!(g[200], 7, "block {b}");
        assert_eq!(u32::from_le_bytes(g[100..104].try_into().unwrap()), b);
    }
}
