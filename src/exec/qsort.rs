//! PostgreSQL's in-memory sort (`src/include/lib/sort_template.h`): a
//! Bentley–McIlroy three-way quicksort with a presorted check, insertion
//! sort below seven elements and Tukey's ninther above forty.
//!
//! Why not the standard library's sort: SQL leaves the order of rows that
//! compare equal unspecified, and PostgreSQL's answer is whatever this
//! algorithm does with them. A stable sort gives a different, equally valid
//! order, which reads as a different answer to anyone comparing output
//! with PostgreSQL's (window functions over peers, `ORDER BY` on a column
//! with duplicates). Given the same input order and a comparator with the
//! same signs, this function performs the same swaps as PostgreSQL's
//! `qsort_tuple`, so ties come out as PostgreSQL's do.
//!
//! Invariant: the result is sorted by `cmp` (it is a correct sort for any
//! total order); only the placement of equal elements is PostgreSQL's.

use std::cmp::Ordering;

/// Sorts `a` by `cmp` exactly as PostgreSQL's `qsort` arranges it.
pub fn pg_qsort<T, F>(a: &mut [T], cmp: &mut F)
where
    F: FnMut(&T, &T) -> Ordering,
{
    let mut a = a;
    loop {
        let n = a.len();
        if n < 7 {
            for m in 1..n {
                let mut l = m;
                while l > 0 && cmp(&a[l - 1], &a[l]) == Ordering::Greater {
                    a.swap(l, l - 1);
                    l -= 1;
                }
            }
            return;
        }
        if (1..n).all(|m| cmp(&a[m - 1], &a[m]) != Ordering::Greater) {
            return;
        }
        let mut pm = n / 2;
        if n > 7 {
            let mut pl = 0;
            let mut pn = n - 1;
            if n > 40 {
                let d = n / 8;
                pl = med3(a, pl, pl + d, pl + 2 * d, cmp);
                pm = med3(a, pm - d, pm, pm + d, cmp);
                pn = med3(a, pn - 2 * d, pn - d, pn, cmp);
            }
            pm = med3(a, pl, pm, pn, cmp);
        }
        a.swap(0, pm);
        // Partition around a[0]: [equal | less | ... | greater | equal].
        let (mut pa, mut pb) = (1usize, 1usize);
        let (mut pc, mut pd) = (n as isize - 1, n as isize - 1);
        loop {
            while pb as isize <= pc {
                let r = cmp(&a[pb], &a[0]);
                if r == Ordering::Greater {
                    break;
                }
                if r == Ordering::Equal {
                    a.swap(pa, pb);
                    pa += 1;
                }
                pb += 1;
            }
            while pb as isize <= pc {
                let r = cmp(&a[pc as usize], &a[0]);
                if r == Ordering::Less {
                    break;
                }
                if r == Ordering::Equal {
                    a.swap(pc as usize, pd as usize);
                    pd -= 1;
                }
                pc -= 1;
            }
            if pb as isize > pc {
                break;
            }
            a.swap(pb, pc as usize);
            pb += 1;
            pc -= 1;
        }
        let (pc, pd) = (pc + 1, pd + 1); // as one-past indices: pc = start of greater
                                         // Move the equal runs to the middle (PostgreSQL's `vecswap`s).
        let d1 = pa.min(pb - pa);
        swap_n(a, 0, pb - d1, d1);
        let d1 = ((pd - pc) as usize).min(n - pd as usize);
        swap_n(a, pb, n - d1, d1);
        let left = pb - pa;
        let right = (pd - pc) as usize;
        let whole = std::mem::take(&mut a);
        let (lo, rest) = whole.split_at_mut(left);
        let skip = rest.len() - right;
        let hi = &mut rest[skip..];
        if left <= right {
            if left > 1 {
                pg_qsort(lo, cmp);
            }
            if right <= 1 {
                return;
            }
            a = hi;
        } else {
            if right > 1 {
                pg_qsort(hi, cmp);
            }
            if left <= 1 {
                return;
            }
            a = lo;
        }
    }
}

/// The index of the median of `a[i]`, `a[j]`, `a[k]` (PostgreSQL's `med3`).
fn med3<T, F>(a: &[T], i: usize, j: usize, k: usize, cmp: &mut F) -> usize
where
    F: FnMut(&T, &T) -> Ordering,
{
    if cmp(&a[i], &a[j]) == Ordering::Less {
        if cmp(&a[j], &a[k]) == Ordering::Less {
            j
        } else if cmp(&a[i], &a[k]) == Ordering::Less {
            k
        } else {
            i
        }
    } else if cmp(&a[j], &a[k]) == Ordering::Greater {
        j
    } else if cmp(&a[i], &a[k]) == Ordering::Less {
        i
    } else {
        k
    }
}

/// Swaps the `n` elements at `i..` with those at `j..`, pairwise in order.
fn swap_n<T>(a: &mut [T], i: usize, j: usize, n: usize) {
    for x in 0..n {
        a.swap(i + x, j + x);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small deterministic generator (no dependency for a unit test).
    fn lcg(seed: &mut u64) -> u64 {
        *seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        *seed >> 33
    }

    #[test]
    fn sorts_like_the_standard_library_on_keys() {
        let mut seed = 7;
        for n in [0, 1, 2, 6, 7, 8, 39, 40, 41, 100, 1000, 5000] {
            for distinct in [1u64, 3, 50, 1 << 30] {
                let v: Vec<(u64, usize)> = (0..n).map(|i| (lcg(&mut seed) % distinct, i)).collect();
                let mut ours = v.clone();
                pg_qsort(&mut ours, &mut |x, y| x.0.cmp(&y.0));
                let mut keys: Vec<u64> = v.iter().map(|x| x.0).collect();
                keys.sort_unstable();
                assert_eq!(ours.iter().map(|x| x.0).collect::<Vec<_>>(), keys);
                // Every element is still there once.
                let mut ids: Vec<usize> = ours.iter().map(|x| x.1).collect();
                ids.sort_unstable();
                assert_eq!(ids, (0..n).collect::<Vec<_>>());
            }
        }
    }
}
