//! Grouped aggregates computed on the page: `select k, sum(v) ... group by
//! k` with a small non-negative `int4` key, folded into per-key
//! accumulators indexed by the key itself (no hash, no group numbers, no
//! column vectors written and read back).
//!
//! Applies to a scan without a filter feeding the typed aggregation of
//! one plain `int4` group key, when every aggregate is one
//! [`super::page_agg::PageAgg`] compiles (`count`, `sum`, `avg`, `min`,
//! `max` of `int4` columns, `count(*)`) and the key and the arguments are
//! columns the fused page loop reads. Per page: on the pages the fused
//! loop accepts (or their packed entries), when every key of the page is
//! in `0..MAX_KEY`; any other page reaches the aggregate as rows.
//!
//! Exactness: such pages hold no NULL, so every row is an input of every
//! aggregate. Sums are kept in `i64` per key and handed over before
//! 2^31 rows have been folded since the last hand-over (2^31 values of at
//! most 2^31 in magnitude stay within `i64`); the aggregate adds them to
//! its `i128` state ([`super::hash_agg::FastAgg::add_group_partial`]),
//! which is what the rows would have summed to.
//!
//! Invariant: [`PageGroups::take`] hands over every row folded since the
//! last call, and nothing is folded once [`PageGroups::stop`] was called
//! (the aggregate then spills, and every key's rows must reach it as
//! rows from then on).

use super::fixed_scan::MAX_TUPLES;
use super::page_agg::{PageAgg, PagePartial, Term};
use crate::exec::expr::{Expr, ExprKind};
use crate::nodes::AggCall;
use crate::types::DataType;

/// Keys `0..MAX_KEY` are folded on the page (the accumulators grow to the
/// largest key seen).
pub const MAX_KEY: i32 = 1 << 16;

/// Rows folded between hand-overs at most (module docs: exact `i64` sums).
const FLUSH_ROWS: u64 = 1 << 31;

/// A grouped aggregation compiled for pages, and its per-key
/// accumulators.
#[derive(Debug)]
pub struct PageGroups {
    /// The page column of the group key.
    key: usize,
    terms: Vec<Term>,
    /// Rows per key.
    rows: Vec<i64>,
    /// Per term, per key: the sum (`Sum`) or the extreme (`Min`/`Max`,
    /// starting at the neutral value).
    acc: Vec<Vec<i64>>,
    /// Rows folded since the last hand-over.
    since: u64,
    /// Whether pages are still folded ([`PageGroups::stop`]).
    active: bool,
}

impl PageGroups {
    /// Compiles `key` and `aggs`, whose batch column `k` is page column
    /// `col_of(k)`; `None` unless all fit (module docs).
    pub fn compile(
        key: &Expr,
        aggs: &[AggCall],
        col_of: &dyn Fn(usize) -> Option<usize>,
    ) -> Option<PageGroups> {
        let key = match (&key.kind, key.ty) {
            (ExprKind::Column(k), DataType::Int4) => col_of(*k)?,
            _ => return None,
        };
        let terms = PageAgg::compile(aggs, col_of)?.terms().to_vec();
        Some(PageGroups {
            key,
            acc: vec![Vec::new(); terms.len()],
            terms,
            rows: Vec::new(),
            since: 0,
            active: true,
        })
    }

    /// Folds the first `n` rows of `cols` (page column `j` is `cols[j]`)
    /// into the per-key accumulators; false (nothing folded) when the
    /// page has a key outside `0..MAX_KEY` or folding was stopped.
    pub fn add_page(&mut self, cols: &[&[i32]], n: usize) -> bool {
        let n = n.min(MAX_TUPLES);
        if !self.active {
            return false;
        }
        let keys = &cols[self.key][..n];
        let (lo, hi) = crate::avx2!(|keys: &[i32]| -> (i32, i32) {
            keys.iter()
                .fold((i32::MAX, i32::MIN), |(l, h), &k| (l.min(k), h.max(k)))
        });
        if n == 0 {
            return true;
        }
        if lo < 0 || hi >= MAX_KEY {
            return false;
        }
        if self.since + n as u64 > FLUSH_ROWS {
            // Handed over at the next `take`; kept here meanwhile.
            return false;
        }
        self.since += n as u64;
        let top = hi as usize + 1;
        if self.rows.len() < top {
            self.grow(top);
        }
        // The unchecked folds below rely on every key of the page being
        // below every accumulator's length (`grow` keeps them equal).
        assert!(self.acc.iter().all(|a| a.len() == self.rows.len()) && top <= self.rows.len());
        fold_rows(&mut self.rows, keys);
        for (t, acc) in self.terms.iter().zip(&mut self.acc) {
            match *t {
                Term::Rows => {}
                Term::Sum(j) => fold_by_key(acc, keys, &cols[j][..n], |a, v| a + v),
                Term::Min(j) => fold_by_key(acc, keys, &cols[j][..n], i64::min),
                Term::Max(j) => fold_by_key(acc, keys, &cols[j][..n], i64::max),
            }
        }
        true
    }

    /// Makes room for keys below `top`.
    fn grow(&mut self, top: usize) {
        self.rows.resize(top, 0);
        for (t, acc) in self.terms.iter().zip(&mut self.acc) {
            acc.resize(top, neutral(*t));
        }
    }

    /// Every key's rows folded since the last call, as the partial of
    /// that key's group, in key order; the accumulators start over.
    pub fn take(&mut self) -> Vec<(i64, PagePartial)> {
        let mut out = Vec::new();
        if self.since == 0 {
            return out;
        }
        let na = self.terms.len();
        for (key, rows) in self.rows.iter_mut().enumerate() {
            if *rows == 0 {
                continue;
            }
            let mut p = PagePartial {
                counts: vec![*rows; na],
                sums: vec![0; na],
                extremes: vec![0; na],
            };
            for (k, t) in self.terms.iter().enumerate() {
                let a = std::mem::replace(&mut self.acc[k][key], neutral(*t));
                match t {
                    Term::Rows => {}
                    Term::Sum(_) => p.sums[k] = i128::from(a),
                    Term::Min(_) | Term::Max(_) => p.extremes[k] = a,
                }
            }
            *rows = 0;
            out.push((key as i64, p));
        }
        self.since = 0;
        out
    }

    /// Folds no more pages (the aggregate spills).
    pub fn stop(&mut self) {
        self.active = false;
    }
}

/// A term's accumulator before any row.
fn neutral(t: Term) -> i64 {
    match t {
        Term::Min(_) => i64::MAX,
        Term::Max(_) => i64::MIN,
        Term::Rows | Term::Sum(_) => 0,
    }
}

/// `rows[k] += 1` for each key `k`; every key is in `0..rows.len()`
/// (checked by the caller: the page's smallest key is at least 0 and its
/// largest below the accumulators' length).
#[inline]
fn fold_rows(rows: &mut [i64], keys: &[i32]) {
    for &k in keys {
        debug_assert!((k as usize) < rows.len());
        // SAFETY: `0 <= k < rows.len()` (the caller's check above).
        unsafe { *rows.get_unchecked_mut(k as usize) += 1 };
    }
}

/// `acc[k] = f(acc[k], v)` for each key `k` and value `v`; every key is in
/// `0..acc.len()`, as for [`fold_rows`].
#[inline]
fn fold_by_key(acc: &mut [i64], keys: &[i32], vals: &[i32], f: impl Fn(i64, i64) -> i64) {
    for (&k, &v) in keys.iter().zip(vals) {
        debug_assert!((k as usize) < acc.len());
        // SAFETY: `0 <= k < acc.len()` (the caller's check).
        let a = unsafe { acc.get_unchecked_mut(k as usize) };
        *a = f(*a, i64::from(v));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::fastpath::hash_agg::FastAgg;
    use crate::exec::vector::{Batch, Data, Vector};
    use crate::types::agg::AggFunc;

    fn col(k: usize) -> Expr {
        Expr {
            kind: ExprKind::Column(k),
            ty: DataType::Int4,
        }
    }

    fn call(func: AggFunc, arg: Option<usize>) -> AggCall {
        AggCall {
            func,
            arg: arg.map(col),
            more_args: Vec::new(),
            order: Vec::new(),
            distinct: false,
            filter: None,
            ty: DataType::Int8,
        }
    }

    fn batch(cols: &[Vec<i32>]) -> Batch {
        Batch {
            columns: cols
                .iter()
                .map(|c| Vector::from_data(DataType::Int4, Data::I32(c.clone())))
                .collect(),
            len: cols[0].len(),
        }
    }

    /// Seeded pages of keys (small, some out of range) and values (the
    /// edges mixed in) folded on the page, against the same rows through
    /// the typed aggregation: the same groups and values.
    #[test]
    fn pages_fold_like_rows() {
        use AggFunc::*;
        let aggs = [
            call(Sum, Some(1)),
            call(CountStar, None),
            call(Min, Some(2)),
            call(Max, Some(1)),
            call(Avg, Some(2)),
            call(Count, Some(1)),
        ];
        let key = col(0);
        let mut s = 12345u32;
        let mut next = || {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            s
        };
        for round in 0..20 {
            let mut groups =
                PageGroups::compile(&key, &aggs, &|k| (k < 3).then_some(k)).expect("compiles");
            let mut by_page = FastAgg::new(std::slice::from_ref(&key), &aggs);
            let mut by_rows = FastAgg::new(std::slice::from_ref(&key), &aggs);
            for page in 0..8 {
                let n = (next() % 200) as usize + usize::from(page % 3 == 0);
                let wide = round % 4 == 3 && page == 5;
                let cols: Vec<Vec<i32>> = (0..3)
                    .map(|c| {
                        (0..n)
                            .map(|i| match (c, next() % 7) {
                                (0, _) if wide && i == 0 => -1,
                                (0, _) => (next() % 40) as i32,
                                (_, 0) => i32::MIN,
                                (_, 1) => i32::MAX,
                                _ => next() as i32,
                            })
                            .collect()
                    })
                    .collect();
                let slices: Vec<&[i32]> = cols.iter().map(|c| &c[..]).collect();
                let b = batch(&cols);
                by_rows.consume(&b).unwrap();
                if !groups.add_page(&slices, n) {
                    assert!(wide, "only a page with a key out of range declines");
                    by_page.consume(&b).unwrap();
                }
                if page % 3 == 2 {
                    for (k, p) in groups.take() {
                        by_page.add_group_partial(k, &p);
                    }
                }
            }
            for (k, p) in groups.take() {
                by_page.add_group_partial(k, &p);
            }
            let mut a = by_page.finish().unwrap();
            let mut b = by_rows.finish().unwrap();
            let show = |r: &mut Vec<Vec<crate::types::Value>>| {
                let mut s: Vec<String> = r.iter().map(|x| format!("{x:?}")).collect();
                s.sort();
                s
            };
            assert_eq!(show(&mut a), show(&mut b), "round {round}");
        }
    }

    #[test]
    fn a_stopped_fold_declines_and_other_shapes_do_not_compile() {
        let aggs = [call(AggFunc::Sum, Some(1))];
        let at = |k: usize| (k < 2).then_some(k);
        let mut g = PageGroups::compile(&col(0), &aggs, &at).expect("compiles");
        assert!(g.add_page(&[&[1, 2], &[5, 6]], 2));
        g.stop();
        assert!(!g.add_page(&[&[1, 2], &[5, 6]], 2));
        assert_eq!(g.take().len(), 2, "what was folded before is handed over");
        let mut key8 = col(0);
        key8.ty = DataType::Int8;
        assert!(PageGroups::compile(&key8, &aggs, &at).is_none());
        assert!(PageGroups::compile(&col(5), &aggs, &at).is_none());
        let bool_agg = [call(AggFunc::BoolAnd, Some(1))];
        assert!(PageGroups::compile(&col(0), &bool_agg, &at).is_none());
    }
}
