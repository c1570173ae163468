//! The bounded heap of a sort under a LIMIT: PostgreSQL's top-N heapsort
//! (`tuplesort.c`: `make_bounded_heap`, `tuplesort_heap_insert`,
//! `tuplesort_heap_replace_top`, `sort_bounded_heap`).
//!
//! A sort that knows only its first `bound` rows are wanted keeps the
//! `bound` smallest rows seen so far in a heap whose root is the largest of
//! them, so each further row costs one comparison with the root when it is
//! discarded. PostgreSQL switches to this heap when the input passes twice
//! the bound, and the rows that compare equal come out in the order its heap
//! operations leave them; this module performs the same operations in the
//! same order so that the rows kept, and their order, are PostgreSQL's.
//!
//! Invariant: `heap[0..len]` is a heap under the *reversed* order (the
//! largest row under the sort's order at the root), and holds at most
//! `bound` elements.

use std::cmp::Ordering;

/// A bounded max-heap of row positions under a comparator of positions.
pub struct BoundedHeap {
    /// The rows kept, as positions into the caller's buffered rows.
    pub heap: Vec<u32>,
    bound: usize,
}

impl BoundedHeap {
    /// PostgreSQL's `make_bounded_heap` over the positions `rows`, in input
    /// order; `cmp` is the sort's order (not reversed). `bound` > 0.
    pub fn build<F>(rows: impl Iterator<Item = u32>, bound: usize, cmp: &mut F) -> BoundedHeap
    where
        F: FnMut(u32, u32) -> Ordering,
    {
        debug_assert!(bound > 0);
        let mut h = BoundedHeap {
            heap: Vec::with_capacity(bound),
            bound,
        };
        for r in rows {
            h.push(r, cmp);
        }
        h
    }

    /// One more input row: inserted while the heap is not full, then either
    /// discarded (not smaller than the root) or put in the root's place.
    pub fn push<F>(&mut self, row: u32, cmp: &mut F)
    where
        F: FnMut(u32, u32) -> Ordering,
    {
        // Under the reversed order, `rev(a, b) == cmp(b, a)`.
        if self.heap.len() < self.bound {
            let mut j = self.heap.len();
            self.heap.push(row);
            while j > 0 {
                let i = (j - 1) >> 1;
                if cmp(self.heap[i], row) != Ordering::Less {
                    // rev(row, parent) >= 0
                    break;
                }
                self.heap[j] = self.heap[i];
                j = i;
            }
            self.heap[j] = row;
        } else if cmp(self.heap[0], row) != Ordering::Greater {
            // rev(row, top) <= 0: not smaller than the largest kept row.
        } else {
            let n = self.heap.len();
            replace_top(&mut self.heap, n, row, cmp);
        }
    }

    /// PostgreSQL's `sort_bounded_heap`: the kept rows in sorted order.
    pub fn into_sorted<F>(mut self, cmp: &mut F) -> Vec<u32>
    where
        F: FnMut(u32, u32) -> Ordering,
    {
        let mut n = self.heap.len();
        while n > 1 {
            let top = self.heap[0];
            n -= 1;
            let last = self.heap[n];
            replace_top(&mut self.heap, n, last, cmp);
            self.heap[n] = top;
        }
        self.heap
    }
}

/// `tuplesort_heap_replace_top` over `heap[..n]` under the reversed order.
fn replace_top<F>(heap: &mut [u32], n: usize, row: u32, cmp: &mut F)
where
    F: FnMut(u32, u32) -> Ordering,
{
    let mut i = 0;
    loop {
        let mut j = 2 * i + 1;
        if j >= n {
            break;
        }
        // rev(heap[j], heap[j + 1]) > 0
        if j + 1 < n && cmp(heap[j + 1], heap[j]) == Ordering::Greater {
            j += 1;
        }
        // rev(row, heap[j]) <= 0
        if cmp(heap[j], row) != Ordering::Greater {
            break;
        }
        heap[i] = heap[j];
        i = j;
    }
    heap[i] = row;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_smallest_bound_rows_in_order() {
        let mut seed = 11u64;
        for bound in [1usize, 2, 3, 10, 64] {
            for n in [0usize, 1, 5, 50, 500] {
                let keys: Vec<u64> = (0..n)
                    .map(|_| {
                        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
                        (seed >> 33) % 17
                    })
                    .collect();
                let mut cmp = |a: u32, b: u32| keys[a as usize].cmp(&keys[b as usize]);
                let h = BoundedHeap::build(0..n as u32, bound, &mut cmp);
                let got: Vec<u64> = h
                    .into_sorted(&mut cmp)
                    .iter()
                    .map(|&p| keys[p as usize])
                    .collect();
                let mut want = keys.clone();
                want.sort_unstable();
                want.truncate(bound);
                assert_eq!(got, want, "bound {bound}, n {n}");
            }
        }
    }
}
