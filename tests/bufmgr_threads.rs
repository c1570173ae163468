//! The buffer pool under threads: many threads pinning, reading, changing and
//! extending the same and different pages of relations larger than the pool,
//! so that eviction, write-back and read-in race with each other.

use std::collections::HashSet;
use std::sync::Arc;

use heapdb::storage::{BufferPool, ForkNumber, RelFileNode};

const MAIN: ForkNumber = ForkNumber::Main;
const THREADS: usize = 4;

/// A small deterministic random number generator (xorshift).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn get(page: &[u8], off: usize) -> u64 {
    u64::from_le_bytes(page[off..off + 8].try_into().unwrap())
}

fn set(page: &mut [u8], off: usize, v: u64) {
    page[off..off + 8].copy_from_slice(&v.to_le_bytes());
}

/// Each page holds one counter per thread at 64 + 8*t and their sum at 32.
#[test]
fn concurrent_increments_are_never_lost_or_torn() {
    let dir = tempfile::tempdir().unwrap();
    let rel = RelFileNode(10);
    let pages = 48u32;
    let iters = 4000u64;
    {
        let pool = BufferPool::open(dir.path(), 16).unwrap();
        pool.create_relation(rel, MAIN).unwrap();
        for _ in 0..pages {
            let (_, buf) = pool.extend(rel, MAIN, None).unwrap();
            let mut g = buf.write();
            g[24] = 1;
            g.mark_dirty();
        }
        pool.set_fsync(false);
        let done = std::sync::atomic::AtomicUsize::new(0);
        std::thread::scope(|s| {
            // A checkpointer flushing everything while the others work.
            let (pool, done) = (&pool, &done);
            s.spawn(move || {
                while done.load(std::sync::atomic::Ordering::Acquire) < THREADS {
                    pool.flush_all().unwrap();
                    std::thread::yield_now();
                }
            });
            for t in 0..THREADS {
                s.spawn(move || {
                    let mut rng = Rng(t as u64 * 7919 + 1);
                    for i in 0..iters {
                        let block = (rng.next() % pages as u64) as u32;
                        let buf = pool.read_buffer(rel, MAIN, block, None).unwrap();
                        if i % 3 == 0 {
                            // A reader: the sum always matches the parts.
                            let g = buf.read();
                            let parts: u64 = (0..THREADS).map(|k| get(&g, 64 + 8 * k)).sum();
                            assert_eq!(parts, get(&g, 32), "torn page {block}");
                        } else {
                            let mut g = buf.write();
                            let mine = get(&g, 64 + 8 * t) + 1;
                            set(&mut g, 64 + 8 * t, mine);
                            let sum = get(&g, 32) + 1;
                            set(&mut g, 32, sum);
                            g.mark_dirty();
                        }
                    }
                    done.fetch_add(1, std::sync::atomic::Ordering::Release);
                });
            }
        });
        pool.flush_all().unwrap();
    }
    // Reopen: every increment reached the disk.
    let pool = BufferPool::open(dir.path(), 16).unwrap();
    let mut per_thread = [0u64; THREADS];
    let mut total = 0;
    for b in 0..pages {
        let buf = pool.read_buffer(rel, MAIN, b, None).unwrap();
        let g = buf.read();
        for (t, n) in per_thread.iter_mut().enumerate() {
            *n += get(&g, 64 + 8 * t);
        }
        total += get(&g, 32);
    }
    let writes_per_thread = (0..iters).filter(|i| i % 3 != 0).count() as u64;
    assert_eq!(per_thread, [writes_per_thread; THREADS]);
    assert_eq!(total, writes_per_thread * THREADS as u64);
}

#[test]
fn concurrent_extension_hands_out_distinct_blocks() {
    let dir = tempfile::tempdir().unwrap();
    let pool = BufferPool::open(dir.path(), 32).unwrap();
    let rel = RelFileNode(11);
    pool.create_relation(rel, MAIN).unwrap();
    let per = 100u64;
    let blocks: Vec<Vec<u32>> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..THREADS as u64)
            .map(|t| {
                let pool = &pool;
                s.spawn(move || {
                    let mut mine = Vec::new();
                    let mut ring =
                        (t % 2 == 0).then(|| pool.ring(heapdb::storage::StrategyKind::BulkWrite));
                    for i in 0..per {
                        let (block, buf) = pool.extend(rel, MAIN, ring.as_mut()).unwrap();
                        let mut g = buf.write();
                        assert!(g.iter().all(|&b| b == 0), "a new page is zero");
                        set(&mut g, 40, t * 1000 + i + 1);
                        g.mark_dirty();
                        mine.push(block);
                    }
                    mine
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let all: HashSet<u32> = blocks.iter().flatten().copied().collect();
    assert_eq!(all.len(), THREADS * per as usize);
    assert_eq!(
        pool.nblocks(rel, MAIN).unwrap(),
        (THREADS as u64 * per) as u32
    );
    for (t, mine) in blocks.iter().enumerate() {
        for (i, &b) in mine.iter().enumerate() {
            let buf = pool.read_buffer(rel, MAIN, b, None).unwrap();
            assert_eq!(get(&buf.read(), 40), t as u64 * 1000 + i as u64 + 1);
        }
    }
}

#[test]
fn racing_misses_on_the_same_pages_return_correct_data() {
    let dir = tempfile::tempdir().unwrap();
    let pool: Arc<BufferPool> = BufferPool::open(dir.path(), 16).unwrap();
    let rel = RelFileNode(12);
    pool.create_relation(rel, MAIN).unwrap();
    for _ in 0..200 {
        let (b, buf) = pool.extend(rel, MAIN, None).unwrap();
        let mut g = buf.write();
        set(&mut g, 48, b as u64 + 1);
        g.mark_dirty();
    }
    pool.flush_all().unwrap();
    std::thread::scope(|s| {
        for t in 0..THREADS {
            let pool = &pool;
            s.spawn(move || {
                for round in 0..5 {
                    // All threads walk the same blocks: their misses collide.
                    for b in 0..200u32 {
                        let b = if (t + round) % 2 == 0 { b } else { 199 - b };
                        let buf = pool.read_buffer(rel, MAIN, b, None).unwrap();
                        assert_eq!(get(&buf.read(), 48), b as u64 + 1);
                        // Hold a second pin now and then.
                        if b % 17 == 0 {
                            let again = buf.clone();
                            assert_eq!(again.block(), b);
                        }
                    }
                }
            });
        }
    });
}

#[test]
fn a_pinned_page_stays_while_others_churn() {
    let dir = tempfile::tempdir().unwrap();
    let pool = BufferPool::open(dir.path(), 16).unwrap();
    let rel = RelFileNode(13);
    pool.create_relation(rel, MAIN).unwrap();
    for _ in 0..100 {
        let (b, buf) = pool.extend(rel, MAIN, None).unwrap();
        let mut g = buf.write();
        set(&mut g, 48, b as u64 + 1);
        g.mark_dirty();
    }
    let held = pool.read_buffer(rel, MAIN, 0, None).unwrap();
    let id = held.buffer_id();
    std::thread::scope(|s| {
        for t in 0..3u32 {
            let pool = &pool;
            s.spawn(move || {
                for i in 0..600u32 {
                    let b = 1 + (i * 7 + t * 13) % 99;
                    let buf = pool.read_buffer(rel, MAIN, b, None).unwrap();
                    assert_eq!(get(&buf.read(), 48), b as u64 + 1);
                }
            });
        }
        let pool = &pool;
        s.spawn(move || {
            for _ in 0..2000 {
                let buf = pool.read_buffer(rel, MAIN, 0, None).unwrap();
                assert_eq!(buf.buffer_id(), id, "the pinned page never moves");
            }
        });
    });
    assert_eq!(get(&held.read(), 48), 1);
}

#[test]
fn truncating_one_relation_leaves_others_intact_under_load() {
    let dir = tempfile::tempdir().unwrap();
    let pool = BufferPool::open(dir.path(), 24).unwrap();
    let (churn, steady) = (RelFileNode(14), RelFileNode(15));
    pool.create_relation(churn, MAIN).unwrap();
    pool.create_relation(steady, MAIN).unwrap();
    for _ in 0..60 {
        let (b, buf) = pool.extend(steady, MAIN, None).unwrap();
        let mut g = buf.write();
        set(&mut g, 48, b as u64 + 7);
        g.mark_dirty();
    }
    std::thread::scope(|s| {
        let pool = &pool;
        s.spawn(move || {
            for round in 0..150u64 {
                for _ in 0..6 {
                    let (b, buf) = pool.extend(churn, MAIN, None).unwrap();
                    let mut g = buf.write();
                    set(&mut g, 48, round * 100 + b as u64);
                    g.mark_dirty();
                }
                // Truncate may race with our own pins only: none are held.
                pool.truncate_relation(churn, MAIN, (round % 3) as u32)
                    .unwrap();
                let n = pool.nblocks(churn, MAIN).unwrap();
                assert_eq!(n, (round % 3) as u32);
            }
        });
        for t in 0..2u32 {
            s.spawn(move || {
                for i in 0..3000u32 {
                    let b = (i * 11 + t * 5) % 60;
                    let buf = pool.read_buffer(steady, MAIN, b, None).unwrap();
                    assert_eq!(get(&buf.read(), 48), b as u64 + 7);
                }
            });
        }
    });
    for info in pool.buffer_summary() {
        assert_eq!(info.pin_count, 0);
        if let Some(tag) = info.tag {
            assert!(tag.rel == steady || tag.block < 2, "stale buffer {tag:?}");
        }
    }
}
