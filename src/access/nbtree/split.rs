//! Choosing where a full page splits (PostgreSQL's `_bt_findsplitloc`,
//! simplified): both halves must fit, each with its high key; a page that
//! is the rightmost of its level receiving an item at its end (ascending
//! inserts) keeps the left half full to the fill factor, any other split
//! aims at equal halves. On a leaf, among the split points whose balance is
//! within a window of the best, the one giving the shortest pivot after
//! suffix truncation wins: with many duplicates that puts the split between
//! two distinct values, so the pivot carries no heap TID and upper levels
//! stay small.

use super::btpage::{item_space, PAGE_CAPACITY};
use super::keys::{truncate_pivot, IndexDesc};
use crate::err;
use crate::error::Result;

/// Leaf fill factor for rightmost splits and sorted builds (percent).
pub const LEAF_FILLFACTOR: usize = 90;
/// Internal-page fill factor (percent).
pub const NONLEAF_FILLFACTOR: usize = 70;

/// How many items of `items` (the page's data items with the new one, in
/// order) stay on the left. `hikey` is the page's current high key, which
/// moves to the right half.
pub fn choose_split(
    desc: &IndexDesc,
    items: &[Vec<u8>],
    leaf: bool,
    append: bool,
    hikey: Option<&[u8]>,
) -> Result<usize> {
    let n = items.len();
    let total: usize = items.iter().map(|i| item_space(i.len())).sum();
    let rhk = hikey.map_or(0, |h| item_space(h.len()));
    let target = if append {
        let ff = if leaf {
            LEAF_FILLFACTOR
        } else {
            NONLEAF_FILLFACTOR
        };
        PAGE_CAPACITY * ff / 100
    } else {
        total / 2
    };
    // (split point, distance from target), for every point where both fit.
    let mut cands = Vec::with_capacity(n);
    let mut left = 0;
    for s in 1..n {
        left += item_space(items[s - 1].len());
        // The left high key is at most as long as the first right item's
        // key plus a downlink.
        let lhk = item_space(items[s].len() + 4);
        if left + lhk <= PAGE_CAPACITY && total - left + rhk <= PAGE_CAPACITY {
            cands.push((s, left.abs_diff(target)));
        }
    }
    let best = cands
        .iter()
        .min_by_key(|c| c.1)
        .ok_or_else(|| err!(InternalError, "no split point fits for a page of {n} items"))?
        .1;
    if !leaf || append {
        return Ok(cands.iter().find(|c| c.1 == best).map_or(n / 2, |c| c.0));
    }
    let window = best + PAGE_CAPACITY / 16;
    let mut choice = (usize::MAX, usize::MAX, n / 2);
    for &(s, d) in cands.iter().filter(|c| c.1 <= window) {
        let len = truncate_pivot(desc, &items[s - 1], &items[s])?.len();
        if (len, d) < (choice.0, choice.1) {
            choice = (len, d, s);
        }
    }
    Ok(choice.2)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access::nbtree::keys::{decode_key, leaf_key, KeyColumn};
    use crate::types::{DataType, Value};

    fn desc() -> IndexDesc {
        IndexDesc::new(vec![KeyColumn::asc(DataType::Int8)])
    }

    /// A page's worth of leaf keys: values `0..`, `dups` TIDs each.
    fn page_of(dups: usize) -> Vec<Vec<u8>> {
        let d = desc();
        let mut v = Vec::new();
        let mut used = 0;
        let mut i = 0usize;
        while used <= PAGE_CAPACITY {
            let k = leaf_key(&d, &[Value::Int8((i / dups) as i64)], (i as u32, 1)).unwrap();
            used += item_space(k.len());
            v.push(k);
            i += 1;
        }
        v
    }

    #[test]
    fn duplicates_split_between_distinct_values_without_a_tid() {
        let d = desc();
        let items = page_of(50);
        let s = choose_split(&d, &items, true, false, None).unwrap();
        let pivot = truncate_pivot(&d, &items[s - 1], &items[s]).unwrap();
        assert_eq!(decode_key(&d, &pivot).unwrap().1, None, "pivot kept a TID");
        // Still roughly balanced: within the window of the middle.
        let n = items.len();
        assert!(s > n / 4 && s < 3 * n / 4, "split at {s} of {n}");
    }

    #[test]
    fn all_equal_keys_split_in_the_middle_and_keep_the_tid() {
        let d = desc();
        let items = page_of(100_000);
        let s = choose_split(&d, &items, true, false, None).unwrap();
        let n = items.len();
        assert!(s.abs_diff(n / 2) <= 1, "split at {s} of {n}");
        let pivot = truncate_pivot(&d, &items[s - 1], &items[s]).unwrap();
        assert!(decode_key(&d, &pivot).unwrap().1.is_some());
    }

    #[test]
    fn appending_to_the_rightmost_page_fills_the_left_half() {
        let d = desc();
        let items = page_of(1);
        let s = choose_split(&d, &items, true, true, None).unwrap();
        let left: usize = items[..s].iter().map(|i| item_space(i.len())).sum();
        let target = PAGE_CAPACITY * LEAF_FILLFACTOR / 100;
        assert!(
            left.abs_diff(target) <= 24,
            "left half {left} bytes, target {target}"
        );
        // Internal pages fill to their own factor.
        let s = choose_split(&d, &items, false, true, None).unwrap();
        let left: usize = items[..s].iter().map(|i| item_space(i.len())).sum();
        assert!(left.abs_diff(PAGE_CAPACITY * NONLEAF_FILLFACTOR / 100) <= 24);
    }

    #[test]
    fn both_halves_fit_with_large_items_and_a_high_key() {
        let d = IndexDesc::new(vec![KeyColumn::asc(DataType::Text)]);
        let big = |i: usize| {
            let s = format!("{i:04}{}", "x".repeat(2600));
            leaf_key(&d, &[Value::text(&s)], (i as u32, 1)).unwrap()
        };
        let items: Vec<Vec<u8>> = (0..3).map(big).collect();
        let hk = vec![0u8; 2000];
        let s = choose_split(&d, &items, true, false, Some(&hk)).unwrap();
        let left: usize = items[..s]
            .iter()
            .map(|i| item_space(i.len()))
            .sum::<usize>()
            + item_space(items[s].len() + 4);
        let right: usize = items[s..]
            .iter()
            .map(|i| item_space(i.len()))
            .sum::<usize>()
            + item_space(hk.len());
        assert!(left <= PAGE_CAPACITY && right <= PAGE_CAPACITY);
    }
}
