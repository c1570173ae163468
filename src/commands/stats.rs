//! The statistics ANALYZE computes from a row sample, and the random
//! choices behind the sample (PostgreSQL's `analyze.c` and `sampling.c`,
//! written anew).
//!
//! - [`Rng`]: a small deterministic generator (SplitMix64), so that the same
//!   seed gives the same sample.
//! - [`BlockSampler`]: Knuth's Algorithm S: `n` of `N` blocks, each subset
//!   equally likely, produced in increasing block order (so reads go forward
//!   and can be prefetched).
//! - [`Reservoir`]: Algorithm R over the rows of those blocks: after the
//!   first `k` rows, row `t` replaces a random slot with probability `k/t`.
//!   The decision comes before the row is decoded, so rows not taken cost
//!   one random number.
//! - [`column_stats`]: null fraction, average width, the number of distinct
//!   values by Haas and Stokes' Duj1 estimator (PostgreSQL's), the most
//!   common values (those clearly more frequent than average), and an
//!   equi-depth histogram of the rest.

use std::cmp::Ordering;

pub use crate::catalog::as_scalar;
use crate::catalog::ColumnStats;
use crate::types::{compare_typed, value_to_string, DataType, Value};

/// SplitMix64: tiny, fast, and good enough for sampling.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A uniform number in `[0, 1)`.
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// A uniform integer in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }
}

/// Knuth's Algorithm S: chooses `n` of `total` blocks in increasing order.
#[derive(Debug)]
pub struct BlockSampler {
    total: u32,
    want: u32,
    next: u32,
    chosen: u32,
}

impl BlockSampler {
    /// A sampler of `min(n, total)` of `total` blocks.
    pub fn new(total: u32, n: u32) -> BlockSampler {
        BlockSampler {
            total,
            want: n.min(total),
            next: 0,
            chosen: 0,
        }
    }

    /// All the chosen blocks, in increasing order.
    pub fn blocks(mut self, rng: &mut Rng) -> Vec<u32> {
        let mut out = Vec::with_capacity(self.want as usize);
        while self.chosen < self.want {
            let left = (self.total - self.next) as f64;
            let need = (self.want - self.chosen) as f64;
            if rng.next_f64() * left < need {
                out.push(self.next);
                self.chosen += 1;
            }
            self.next += 1;
        }
        out
    }
}

/// Algorithm R: which rows to keep, `capacity` at most.
#[derive(Debug)]
pub struct Reservoir {
    capacity: usize,
    seen: u64,
}

impl Reservoir {
    /// An empty reservoir of `capacity` rows.
    pub fn new(capacity: usize) -> Reservoir {
        Reservoir { capacity, seen: 0 }
    }

    /// Offers the next row: `Some(slot)` when it goes into the sample at
    /// that slot (`slot == len` means appended), `None` when it is skipped.
    pub fn offer(&mut self, rng: &mut Rng) -> Option<usize> {
        self.seen += 1;
        if (self.seen as usize) <= self.capacity {
            return Some(self.seen as usize - 1);
        }
        let j = rng.below(self.seen);
        (j < self.capacity as u64).then_some(j as usize)
    }

    /// Rows offered so far.
    pub fn seen(&self) -> u64 {
        self.seen
    }
}

/// The stored width of a value (PostgreSQL's `avg_width` counts a short
/// varlena's 1-byte header).
fn width(v: &Value, ty: &DataType) -> f64 {
    if !ty.is_varlena() {
        return ty.attlen() as f64;
    }
    let len = match v {
        Value::Text(s) => s.len(),
        Value::Numeric(_) => value_to_string(v).len() / 2 + 4,
        _ => 8,
    };
    (len + if len < 127 { 1 } else { 4 }) as f64
}

/// Statistics of one column from its sampled values (`None` = NULL).
/// `total_rows` is the table's estimated row count; `target` the statistics
/// target (the most MCVs and histogram buckets).
pub fn column_stats(
    values: &[Option<Value>],
    ty: &DataType,
    total_rows: f64,
    target: usize,
) -> ColumnStats {
    let n = values.len();
    if n == 0 {
        return ColumnStats::default();
    }
    // With its position among the non-NULL values (the sample is in
    // physical order), for the correlation.
    let mut numbered: Vec<(usize, &Value)> = values.iter().flatten().enumerate().collect();
    let nonnull = numbered.len();
    let null_frac = (n - nonnull) as f64 / n as f64;
    if nonnull == 0 {
        return ColumnStats {
            null_frac,
            ..ColumnStats::default()
        };
    }
    let avg_width = numbered.iter().map(|v| width(v.1, ty)).sum::<f64>() / nonnull as f64;
    // Stable: equal values keep their physical order, as PostgreSQL's
    // `compare_scalars` breaks ties by position.
    numbered.sort_by(|a, b| compare_typed(a.1, b.1, ty));
    let correlation = correlation(numbered.iter().map(|v| v.0));
    let present: Vec<&Value> = numbered.into_iter().map(|v| v.1).collect();
    // Runs of equal values: (first index, count).
    let mut groups: Vec<(usize, usize)> = Vec::new();
    for (i, v) in present.iter().enumerate() {
        match groups.last_mut() {
            Some((s, c)) if compare_typed(present[*s], v, ty) == Ordering::Equal => *c += 1,
            _ => groups.push((i, 1)),
        }
    }
    let d = groups.len() as f64;
    let f1 = groups.iter().filter(|g| g.1 == 1).count() as f64;
    let nn = nonnull as f64;
    let total_nonnull = (total_rows * (1.0 - null_frac)).max(nn);
    // Haas & Stokes' Duj1, as PostgreSQL: n*d / (n - f1 + f1*n/N).
    let mut ndistinct = if nonnull as f64 >= total_nonnull || f1 == 0.0 {
        // The sample is the whole table, or every value repeats: assume we
        // have seen all of them.
        d
    } else if f1 == nn {
        // Every value unique: a unique column.
        total_nonnull
    } else {
        let denom = nn - f1 + f1 * nn / total_nonnull;
        (nn * d / denom).clamp(d, total_nonnull)
    };
    ndistinct = ndistinct.round();
    // Stored negative (a fraction of the rows) when it scales with the table.
    let n_distinct = if ndistinct > 0.1 * total_rows && total_rows > 0.0 {
        -(ndistinct / total_rows).min(1.0)
    } else {
        ndistinct
    };
    // Most common values: all of them when the sample saw every distinct
    // value and they fit; else those clearly above the average frequency.
    let mut by_count: Vec<(usize, usize)> = groups.iter().copied().filter(|g| g.1 > 1).collect();
    by_count.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let all_fit = groups.len() <= target && f1 == 0.0;
    let mcv_groups: Vec<(usize, usize)> = if all_fit {
        by_count.into_iter().take(target).collect()
    } else {
        let avg = nn / ndistinct.max(1.0);
        let min_count = (avg * 1.25).max(2.0);
        by_count
            .into_iter()
            .filter(|g| g.1 as f64 >= min_count)
            .take(target)
            .collect()
    };
    let mcv: Vec<(String, f64)> = mcv_groups
        .iter()
        .map(|&(s, c)| (value_to_string(present[s]), c as f64 / n as f64))
        .collect();
    // Histogram of the values not in the MCV list.
    let mut in_mcv = vec![false; present.len()];
    for &(s, c) in &mcv_groups {
        in_mcv[s..s + c].iter_mut().for_each(|b| *b = true);
    }
    let rest: Vec<&Value> = present
        .iter()
        .zip(&in_mcv)
        .filter(|(_, &m)| !m)
        .map(|(v, _)| *v)
        .collect();
    let rest_distinct = groups.len() - mcv_groups.len();
    let mut histogram = Vec::new();
    if rest_distinct >= 2 {
        let bins = target.min(rest_distinct - 1).max(1);
        for i in 0..=bins {
            let pos = i * (rest.len() - 1) / bins;
            histogram.push(value_to_string(rest[pos]));
        }
        histogram.dedup();
    }
    ColumnStats {
        null_frac,
        avg_width,
        n_distinct,
        mcv,
        histogram,
        correlation,
    }
}

/// PostgreSQL's correlation of `compute_scalar_stats`: the positions of the
/// values in physical order (0..n), listed in the values' sort order; the
/// Pearson correlation of rank and position, with the sums of `0..n` in
/// closed form. `None` for fewer than two values.
fn correlation(positions: impl ExactSizeIterator<Item = usize>) -> Option<f64> {
    let n = positions.len() as f64;
    if n < 2.0 {
        return None;
    }
    let xysum: f64 = positions
        .enumerate()
        .map(|(i, p)| i as f64 * p as f64)
        .sum();
    let xsum = (n - 1.0) * n / 2.0;
    let x2sum = (n - 1.0) * n * (2.0 * n - 1.0) / 6.0;
    Some((n * xysum - xsum * xsum) / (n * x2sum - xsum * xsum))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ints(v: impl IntoIterator<Item = i64>) -> Vec<Option<Value>> {
        v.into_iter().map(|x| Some(Value::Int8(x))).collect()
    }

    #[test]
    fn block_sampler_picks_distinct_sorted_blocks() {
        let mut rng = Rng::new(7);
        let b = BlockSampler::new(1000, 300).blocks(&mut rng);
        assert_eq!(b.len(), 300);
        assert!(b.windows(2).all(|w| w[0] < w[1]));
        assert!(*b.last().unwrap() < 1000);
        assert_eq!(
            BlockSampler::new(5, 300).blocks(&mut rng),
            vec![0, 1, 2, 3, 4]
        );
        // The same seed, the same blocks; another seed, others.
        let again = BlockSampler::new(1000, 300).blocks(&mut Rng::new(7));
        assert_eq!(b, again);
        assert_ne!(b, BlockSampler::new(1000, 300).blocks(&mut Rng::new(8)));
    }

    #[test]
    fn reservoir_is_uniform_enough() {
        let mut rng = Rng::new(1);
        let mut hits = vec![0u32; 10];
        for _ in 0..2000 {
            let mut r = Reservoir::new(3);
            let mut slots = [usize::MAX; 3];
            for row in 0..10 {
                if let Some(s) = r.offer(&mut rng) {
                    slots[s] = row;
                }
            }
            for s in slots {
                hits[s] += 1;
            }
        }
        // Each row is kept with probability 3/10: 600 of 2000 expected.
        assert!(hits.iter().all(|&h| (480..720).contains(&h)), "{hits:?}");
    }

    #[test]
    fn unique_column() {
        let s = column_stats(&ints(0..30_000), &DataType::Int8, 1e6, 100);
        assert_eq!(s.null_frac, 0.0);
        assert_eq!(s.n_distinct, -1.0);
        assert!(s.mcv.is_empty());
        assert_eq!(s.histogram.len(), 101);
        assert_eq!(s.histogram[0], "0");
        assert_eq!(s.histogram[100], "29999");
        assert_eq!(s.avg_width, 8.0);
    }

    #[test]
    fn few_distinct_values_are_all_mcvs() {
        let vals: Vec<Option<Value>> = (0..10_000)
            .map(|i| {
                if i % 4 == 0 {
                    None
                } else {
                    Some(Value::Int4(i % 5))
                }
            })
            .collect();
        let s = column_stats(&vals, &DataType::Int4, 1e6, 100);
        assert!((s.null_frac - 0.25).abs() < 1e-9);
        assert_eq!(s.n_distinct, 5.0);
        assert_eq!(s.mcv.len(), 5);
        let total: f64 = s.mcv.iter().map(|m| m.1).sum();
        assert!((total - 0.75).abs() < 1e-9);
        assert!(s.histogram.is_empty());
    }

    #[test]
    fn skewed_column_has_its_heavy_hitters_as_mcvs() {
        // Value 0 is half the rows; the rest nearly unique.
        let vals = ints((0..20_000).map(|i| if i % 2 == 0 { 0 } else { i }));
        let s = column_stats(&vals, &DataType::Int8, 2e6, 100);
        assert_eq!(s.mcv[0].0, "0");
        assert!((s.mcv[0].1 - 0.5).abs() < 1e-9);
        assert!(
            s.n_distinct.abs() > 10_001.0,
            "more than the sample saw: {}",
            s.n_distinct
        );
        assert!(!s.histogram.is_empty());
    }

    #[test]
    fn correlation_follows_physical_order() {
        let up = column_stats(&ints(0..1000), &DataType::Int8, 1e3, 100);
        assert_eq!(up.correlation, Some(1.0));
        let down = column_stats(&ints((0..1000).rev()), &DataType::Int8, 1e3, 100);
        assert_eq!(down.correlation, Some(-1.0));
        // NULLs are left out; equal values count in physical order.
        let mut vals = ints([5, 5, 5, 5]);
        vals.insert(1, None);
        let eq = column_stats(&vals, &DataType::Int8, 5.0, 100);
        assert_eq!(eq.correlation, Some(1.0));
        let one = column_stats(&ints([1]), &DataType::Int8, 1.0, 100);
        assert_eq!(one.correlation, None);
        // A shuffle is near zero.
        let shuffled = ints((0..10_000).map(|i| (i * 7919) % 10_000));
        let s = column_stats(&shuffled, &DataType::Int8, 1e4, 100);
        assert!(s.correlation.unwrap().abs() < 0.05, "{:?}", s.correlation);
        // Values 3,1,2 at positions 0,1,2: ranks of positions 1,2,0.
        let r = column_stats(&ints([3, 1, 2]), &DataType::Int8, 3.0, 100);
        assert!((r.correlation.unwrap() + 0.5).abs() < 1e-12);
    }

    #[test]
    fn text_widths_count_the_short_header() {
        let vals = vec![Some(Value::text("abc")), Some(Value::text("abcde")), None];
        let s = column_stats(&vals, &DataType::Text, 3.0, 100);
        assert_eq!(s.avg_width, 5.0);
        assert_eq!(s.n_distinct, -(2.0 / 3.0));
    }
}
