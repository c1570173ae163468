//! Model-based test: long random sequences of buffer-pool operations on a
//! tiny pool (so nearly every access evicts something), checked against a
//! plain in-memory model of what every page must contain. Operations: extend,
//! read and write (with and without rings), truncate, drop and recreate,
//! flush, evict, and clean reopen.

use std::collections::HashMap;
use std::sync::Arc;

use heapdb::storage::{BufferPool, ForkNumber, ReadMode, RelFileNode, Ring, StrategyKind, BLCKSZ};

/// xorshift64*: deterministic and dependency-free.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

const RELS: [RelFileNode; 3] = [RelFileNode(1), RelFileNode(2), RelFileNode(3)];

fn forks(rng: &mut Rng) -> ForkNumber {
    if rng.below(4) == 0 {
        ForkNumber::VisibilityMap
    } else {
        ForkNumber::Main
    }
}

/// Reads the stamp at 100 and checks the page's filler bytes agree with it.
fn read_stamp(page: &[u8]) -> u64 {
    let stamp = u64::from_le_bytes(page[100..108].try_into().unwrap());
    for i in (200..BLCKSZ).step_by(409) {
        assert_eq!(page[i], (stamp as usize + i) as u8, "torn page");
    }
    stamp
}

fn write_stamp(page: &mut [u8], stamp: u64) {
    page[24] = 1;
    page[100..108].copy_from_slice(&stamp.to_le_bytes());
    for i in (200..BLCKSZ).step_by(409) {
        page[i] = (stamp as usize + i) as u8;
    }
}

fn ring_for(pool: &BufferPool, rng: &mut Rng) -> Option<Ring> {
    match rng.below(4) {
        0 => Some(pool.ring(StrategyKind::BulkRead)),
        1 => Some(pool.ring(StrategyKind::BulkWrite)),
        2 => Some(pool.ring(StrategyKind::Vacuum)),
        _ => None,
    }
}

fn run(seed: u64, steps: usize) {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng(seed);
    let mut pool: Arc<BufferPool> = BufferPool::open(dir.path(), 16).unwrap();
    pool.set_fsync(false);
    // (rel, fork) -> stamps of its pages (0 = never written: a zero page).
    let mut model: HashMap<(RelFileNode, ForkNumber), Vec<u64>> = HashMap::new();
    for rel in RELS {
        for fork in ForkNumber::ALL {
            pool.create_relation(rel, fork).unwrap();
            model.insert((rel, fork), Vec::new());
        }
    }
    let mut next_stamp = 1u64;
    for step in 0..steps {
        let rel = RELS[rng.below(3) as usize];
        let fork = forks(&mut rng);
        let pages = model.get_mut(&(rel, fork)).unwrap();
        let ctx = format!("seed {seed} step {step} {rel:?} {fork:?}");
        let op = rng.below(100);
        if std::env::var("MODEL_TRACE").is_ok() {
            eprintln!("{ctx} op {op} len {}", pages.len());
        }
        match op {
            0..=24 => {
                let mut ring = ring_for(&pool, &mut rng);
                let (b, buf) = pool.extend(rel, fork, ring.as_mut()).unwrap();
                assert_eq!(b as usize, pages.len(), "{ctx}");
                if rng.below(4) > 0 {
                    write_stamp(&mut buf.write(), next_stamp);
                    buf.write().mark_dirty();
                    pages.push(next_stamp);
                    next_stamp += 1;
                } else {
                    pages.push(0);
                }
            }
            25..=54 if !pages.is_empty() => {
                let b = rng.below(pages.len() as u64) as u32;
                let mut ring = ring_for(&pool, &mut rng);
                let buf = pool
                    .read_buffer(rel, fork, b, ring.as_mut())
                    .unwrap_or_else(|e| panic!("{ctx} read {b}: {e}"));
                let g = buf.read();
                let want = pages[b as usize];
                if want == 0 {
                    assert!(g.iter().all(|&x| x == 0), "{ctx} block {b} not zero");
                } else {
                    assert_eq!(read_stamp(&g), want, "{ctx} block {b}");
                }
            }
            55..=79 if !pages.is_empty() => {
                let b = rng.below(pages.len() as u64) as u32;
                let mut ring = ring_for(&pool, &mut rng);
                let buf = pool.read_buffer(rel, fork, b, ring.as_mut()).unwrap();
                let mut g = buf.write();
                write_stamp(&mut g, next_stamp);
                g.mark_dirty();
                pages[b as usize] = next_stamp;
                next_stamp += 1;
            }
            80..=83 => {
                let n = rng.below(pages.len() as u64 + 1) as u32;
                pool.truncate_relation(rel, fork, n).unwrap();
                pages.truncate(n as usize);
            }
            84..=85 => {
                // Redo-style overwrite of a page, possibly beyond the end.
                let b = rng.below(pages.len() as u64 + 3) as u32;
                let buf = pool
                    .read_buffer_extended(rel, fork, b, ReadMode::ZeroPage, None)
                    .unwrap();
                let mut g = buf.write();
                write_stamp(&mut g, next_stamp);
                g.mark_dirty();
                if pages.len() <= b as usize {
                    pages.resize(b as usize + 1, 0);
                }
                pages[b as usize] = next_stamp;
                next_stamp += 1;
            }
            86..=88 => pool.flush_all().unwrap(),
            89..=90 => pool.evict_relation(rel).unwrap(),
            91 => {
                pool.drop_relation(rel).unwrap();
                for f in ForkNumber::ALL {
                    pool.create_relation(rel, f).unwrap();
                    model.insert((rel, f), Vec::new());
                }
            }
            92..=93 => {
                pool.flush_all().unwrap();
                drop(pool);
                pool = BufferPool::open(dir.path(), 16).unwrap();
                pool.set_fsync(false);
            }
            _ => {
                assert_eq!(
                    pool.nblocks(rel, fork).unwrap() as usize,
                    pages.len(),
                    "{ctx}"
                );
            }
        }
    }
    // Final check of every page, after a clean reopen.
    pool.flush_all().unwrap();
    drop(pool);
    let pool = BufferPool::open(dir.path(), 16).unwrap();
    for ((rel, fork), pages) in &model {
        assert_eq!(pool.nblocks(*rel, *fork).unwrap() as usize, pages.len());
        for (b, &want) in pages.iter().enumerate() {
            let buf = pool.read_buffer(*rel, *fork, b as u32, None).unwrap();
            let g = buf.read();
            if want == 0 {
                assert!(g.iter().all(|&x| x == 0));
            } else {
                assert_eq!(
                    read_stamp(&g),
                    want,
                    "seed {seed} final {rel:?} {fork:?} {b}"
                );
            }
        }
    }
    for info in pool.buffer_summary() {
        assert_eq!(info.pin_count, 0, "no pin leaked");
    }
}

#[test]
fn random_operation_sequences_match_the_model() {
    for seed in 1..=12 {
        run(seed * 0x9E37_79B9, 3000);
    }
}
