//! Tests of the external sort of a bulk build (`sortbuild.rs`).

use super::*;

fn keys_of(n: usize, seed: u64) -> Vec<Vec<u8>> {
    let mut x = seed;
    (0..n)
        .map(|i| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Up to 40 + 4 bytes: keys held in their entries and longer
            // ones in the arena, many with zero bytes.
            let len = (x % 41) as usize;
            let mut k: Vec<u8> = (0..len).map(|j| (x >> (j % 8 * 8)) as u8 % 4).collect();
            k.extend_from_slice(&(i as u32).to_be_bytes());
            k
        })
        .collect()
}

fn sorted_through(keys: &[Vec<u8>], budget: usize, parts: usize) -> (Vec<Vec<u8>>, usize) {
    let dir = std::env::temp_dir().join(format!("heapdb-btsort-{}", std::process::id()));
    let mut sorters: Vec<KeySorter> = (0..parts)
        .map(|_| KeySorter::new(budget, dir.clone()))
        .collect();
    for (i, k) in keys.iter().enumerate() {
        sorters[i % parts].push(k).expect("push");
    }
    let spilled = sorters.iter().map(KeySorter::spilled_runs).sum();
    let runs: Vec<SortedRuns> = sorters.into_iter().map(KeySorter::finish).collect();
    let files: usize = runs.iter().map(|r| r.files.len()).sum();
    assert!(files <= parts * MAX_FANIN, "runs are merged down ({files})");
    assert_eq!(
        runs.iter().map(SortedRuns::keys).sum::<u64>(),
        keys.len() as u64
    );
    let mut out = Vec::new();
    merge(&runs, &mut |k| {
        out.push(k.to_vec());
        Ok(())
    })
    .expect("merge");
    (out, spilled)
}

#[test]
fn external_sort_equals_in_memory_sort_at_any_budget_and_split() {
    for (n, seed) in [(0, 1), (1, 2), (5000, 3), (20000, 4)] {
        let keys = keys_of(n, seed);
        let mut want = keys.clone();
        want.sort();
        for budget in [1, 100, 4096, 1 << 20] {
            if budget == 1 && n > 5000 {
                continue; // a file per key: slow, and 5000 shows it
            }
            for parts in [1, 2, 3] {
                let (got, spilled) = sorted_through(&keys, budget, parts);
                assert_eq!(got, want, "n {n} budget {budget} parts {parts}");
                if n == 20000 && budget == 4096 {
                    assert!(spilled > 10, "a small budget spills ({spilled} runs)");
                }
                if budget == 1 << 20 {
                    assert_eq!(spilled, 0, "a large budget keeps all in memory");
                }
            }
        }
    }
}

#[test]
fn radix_sort_orders_ties_of_the_abbreviation_by_the_whole_key() {
    // Many keys share their first sixteen bytes (and some are that
    // prefix alone, or shorter), in scrambled order: the radix pass
    // groups them, the fix-up orders each group.
    let mut keys = keys_of(30000, 7);
    for (i, k) in keys.iter_mut().enumerate() {
        if i % 3 == 0 {
            let mut long = vec![1u8; 16];
            long.extend_from_slice(&k[k.len().saturating_sub(5)..]);
            *k = long;
        } else if i % 5 == 0 {
            // The same 24 bytes (an entry's whole head), then a tail
            // in the arena, or nothing, or zero bytes.
            let mut long = vec![2u8; 24];
            long.extend_from_slice(&k[k.len().saturating_sub(i % 9)..]);
            if i % 4 == 0 {
                long.push(0);
            }
            *k = long;
        } else if i % 7 == 0 {
            k.truncate(i % 17);
            k.resize(i % 17, 1);
        }
    }
    let mut want = keys.clone();
    want.sort();
    let (got, spilled) = sorted_through(&keys, 1 << 24, 1);
    assert_eq!(spilled, 0);
    assert_eq!(got, want);
}

#[test]
fn radix_sort_orders_keys_of_integer_columns_and_tids() {
    // The shape of a three-column integer key: constant marker and high
    // bytes, few distinct leading values (buckets of every size down to
    // one entry), duplicated column values ordered by the heap TID.
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    let mut keys: Vec<Vec<u8>> = Vec::new();
    for i in 0..50_000u32 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let mut k = Vec::new();
        for (v, m) in [
            ((x % 1000) as u32, 1u8),
            ((x >> 20) as u32 % 97, 1),
            (i % 7, 1),
        ] {
            k.push(m);
            k.extend_from_slice(&(v ^ 0x8000_0000).to_be_bytes());
        }
        k.extend_from_slice(&((x >> 40) as u32 % 300).to_be_bytes());
        k.extend_from_slice(&(i as u16).to_be_bytes());
        keys.push(k);
    }
    let mut want = keys.clone();
    want.sort();
    let (got, spilled) = sorted_through(&keys, 1 << 24, 2);
    assert_eq!(spilled, 0);
    assert_eq!(got, want);
}

#[test]
fn run_files_are_removed_when_dropped() {
    let dir = std::env::temp_dir().join(format!("heapdb-btsort-rm-{}", std::process::id()));
    let mut s = KeySorter::new(64, dir.clone());
    for k in keys_of(1000, 9) {
        s.push(&k).expect("push");
    }
    let runs = s.finish();
    let files = || std::fs::read_dir(&dir).map(|d| d.count()).unwrap_or(0);
    assert!(files() > 0);
    drop(runs);
    assert_eq!(files(), 0);
}
