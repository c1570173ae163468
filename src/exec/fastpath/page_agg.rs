//! Aggregates without GROUP BY computed on the page: `sum`, `avg`, `min`,
//! `max` and `count` of `int4` columns, and `count(*)`, over the pages the
//! fused column loop accepts.
//!
//! `select sum(aid) from pgbench_accounts` needs of each page only a sum.
//! On an ALL_VISIBLE page whose tuples the fused loop accepts
//! ([`super::fixed_scan::fused_page_values`]: NULL-free, every attribute
//! present, 4-byte columns) the scan loads the aggregates' columns into
//! page-sized arrays, applies the scan's filter as a mask when there is one
//! ([`super::page_pred`]), and folds the page into a [`PagePartial`] while
//! the page is in the cache: no column vectors written to be read back by
//! the aggregate. Every other page reaches the aggregate as rows, as
//! before; the aggregate adds the partial in at the end
//! ([`super::hash_agg::FastAgg::add_partial`]), so the result is the same
//! whichever pages took which path.
//!
//! A [`PageAgg`] compiles only when every aggregate is one of those, plain
//! (no DISTINCT, no FILTER), over an `int4` column the page loop reads. On
//! such pages no value is NULL, so `count(x)` is the row count and every
//! row is an input of every aggregate. Sums are exact: a page's `i32`
//! values sum in `i64` (at most 291 of them), partials in `i128`, as the
//! aggregate's own state.

use super::fixed_scan::MAX_TUPLES;
use crate::exec::expr::{Expr, ExprKind};
use crate::nodes::AggCall;
use crate::types::agg::AggFunc;
use crate::types::DataType;

/// What one aggregate takes from a page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Term {
    /// `count(*)` and `count(x)`: the rows.
    Rows,
    /// `sum(x)`, `avg(x)`: rows and the sum of page column `.0`.
    Sum(usize),
    /// `min(x)` of page column `.0`.
    Min(usize),
    /// `max(x)` of page column `.0`.
    Max(usize),
}

/// The aggregates of one aggregation, compiled for pages.
#[derive(Debug, Clone)]
pub struct PageAgg {
    terms: Vec<Term>,
}

/// What the pages folded in so far contribute, per aggregate: as
/// [`super::hash_agg::FastAgg`]'s state of its one group.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PagePartial {
    /// Input rows per aggregate.
    pub counts: Vec<i64>,
    /// Sums (for `sum` and `avg`).
    pub sums: Vec<i128>,
    /// Extremes (for `min` and `max`; meaningful once the count is above
    /// zero).
    pub extremes: Vec<i64>,
}

impl PageAgg {
    /// Compiles `aggs`, whose argument column `k` of the batch is page
    /// column `col_of(k)`; `None` unless every aggregate fits (module docs).
    pub fn compile(aggs: &[AggCall], col_of: &dyn Fn(usize) -> Option<usize>) -> Option<PageAgg> {
        let column = |e: &Option<Expr>| match e.as_ref().map(|e| (&e.kind, e.ty)) {
            Some((ExprKind::Column(k), DataType::Int4)) => col_of(*k),
            _ => None,
        };
        let terms = aggs
            .iter()
            .map(|a| {
                if a.distinct || a.filter.is_some() || !a.is_plain() {
                    return None;
                }
                Some(match a.func {
                    AggFunc::CountStar => Term::Rows,
                    AggFunc::Count => {
                        column(&a.arg)?;
                        Term::Rows
                    }
                    AggFunc::Sum | AggFunc::Avg => Term::Sum(column(&a.arg)?),
                    AggFunc::Min => Term::Min(column(&a.arg)?),
                    AggFunc::Max => Term::Max(column(&a.arg)?),
                    _ => return None,
                })
            })
            .collect::<Option<Vec<_>>>()?;
        (!terms.is_empty()).then_some(PageAgg { terms })
    }

    /// What each aggregate takes from a page, in order.
    pub(super) fn terms(&self) -> &[Term] {
        &self.terms
    }

    /// A partial with nothing folded in.
    pub fn empty(&self) -> PagePartial {
        let n = self.terms.len();
        PagePartial {
            counts: vec![0; n],
            sums: vec![0; n],
            extremes: vec![0; n],
        }
    }

    /// Folds the first `n` rows of `cols` (page column `j` is `cols[j]`)
    /// into `part`: all of them, or those `mask` (0/1 per row) keeps.
    /// `scratch` holds masked values (reused).
    pub fn add_page(
        &self,
        part: &mut PagePartial,
        cols: &[&[i32]],
        n: usize,
        mask: Option<&[u32]>,
        scratch: &mut [i32; MAX_TUPLES],
    ) {
        let terms = &self.terms[..];
        crate::avx2!(|terms: &[Term],
                      part: &mut PagePartial,
                      cols: &[&[i32]],
                      n: usize,
                      mask: Option<&[u32]>,
                      scratch: &mut [i32; MAX_TUPLES]|
         -> () { add_page(terms, part, cols, n, mask, scratch) })
    }
}

/// [`PageAgg::add_page`]'s body (inlined into its AVX2 copy too).
#[inline(always)]
fn add_page(
    terms: &[Term],
    part: &mut PagePartial,
    cols: &[&[i32]],
    n: usize,
    mask: Option<&[u32]>,
    scratch: &mut [i32; MAX_TUPLES],
) {
    let n = n.min(MAX_TUPLES);
    let rows = mask.map_or(n as i64, |m| i64::from(m[..n].iter().sum::<u32>()));
    if rows == 0 {
        return;
    }
    for (k, t) in terms.iter().enumerate() {
        let extreme = match *t {
            Term::Rows => None,
            Term::Sum(j) => {
                let v = &cols[j][..n];
                let s = match mask {
                    None => page_sum(v),
                    Some(m) => {
                        // A kept value stays, a dropped one becomes 0.
                        for ((o, &x), &keep) in scratch.iter_mut().zip(v).zip(m) {
                            *o = x & (keep as i32).wrapping_neg();
                        }
                        page_sum(&scratch[..n])
                    }
                };
                part.sums[k] += i128::from(s);
                None
            }
            Term::Min(j) => Some(fold(&cols[j][..n], mask, i32::MAX, i32::min)),
            Term::Max(j) => Some(fold(&cols[j][..n], mask, i32::MIN, i32::max)),
        };
        if let Some(e) = extreme {
            let e = i64::from(e);
            let cur = &mut part.extremes[k];
            let better = match *t {
                Term::Min(_) => e < *cur,
                _ => e > *cur,
            };
            if part.counts[k] == 0 || better {
                *cur = e;
            }
        }
        part.counts[k] += rows;
    }
}

/// The exact sum of one page's values (at most [`MAX_TUPLES`]): the sum
/// of their 32-bit patterns, zero-extended (which SSE2 vectorizes, unlike
/// a sign extension), less 2^32 for each negative one.
#[inline(always)]
fn page_sum(v: &[i32]) -> i64 {
    let (mut s, mut neg) = (0u64, 0u32);
    for &x in v {
        s += u64::from(x as u32);
        neg += (x as u32) >> 31;
    }
    s as i64 - (i64::from(neg) << 32)
}

/// `pick` over `v`'s kept values (all when `mask` is `None`), a dropped one
/// read as `neutral`; at least one value is kept. Branch-free: a dropped
/// value is replaced by `neutral` with a mask (`(x & keep) | (neutral &
/// !keep)`), so the loop vectorizes and a sparse mask over shuffled rows
/// costs no mispredicted branches.
#[inline(always)]
fn fold(v: &[i32], mask: Option<&[u32]>, neutral: i32, pick: fn(i32, i32) -> i32) -> i32 {
    match mask {
        None => v.iter().copied().fold(neutral, pick),
        Some(m) => v
            .iter()
            .zip(m)
            .map(|(&x, &keep)| {
                let keep = (keep as i32).wrapping_neg();
                (x & keep) | (neutral & !keep)
            })
            .fold(neutral, pick),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(func: AggFunc, arg: Option<usize>) -> AggCall {
        AggCall {
            func,
            arg: arg.map(|k| Expr {
                kind: ExprKind::Column(k),
                ty: DataType::Int4,
            }),
            more_args: Vec::new(),
            order: Vec::new(),
            distinct: false,
            filter: None,
            ty: DataType::Int8,
        }
    }

    #[test]
    fn pages_fold_like_rows() {
        use AggFunc::*;
        let aggs = [
            call(CountStar, None),
            call(Sum, Some(0)),
            call(Min, Some(1)),
            call(Max, Some(0)),
            call(Avg, Some(1)),
            call(Count, Some(1)),
        ];
        // Batch column 0 is page column 1 and the other way round.
        let p = PageAgg::compile(&aggs, &|k| [Some(1), Some(0)].get(k).copied().flatten())
            .expect("compiles");
        let a: Vec<i32> = (0..200).map(|i| i * 7919 % 1000 - 500).collect();
        let b: Vec<i32> = (0..200)
            .map(|i| if i == 3 { i32::MAX } else { -i })
            .collect();
        let mask: Vec<u32> = (0..200).map(|i| u32::from(i % 3 != 0)).collect();
        let mut part = p.empty();
        let mut scratch = [0; MAX_TUPLES];
        // Two pages: all of `a`/`b`'s first 150 rows, then the masked rest.
        p.add_page(&mut part, &[&b, &a], 150, None, &mut scratch);
        p.add_page(
            &mut part,
            &[&b[150..], &a[150..]],
            50,
            Some(&mask[150..]),
            &mut scratch,
        );
        let kept: Vec<usize> = (0..150)
            .chain((150..200).filter(|i| mask[*i] == 1))
            .collect();
        let n = kept.len() as i64;
        assert_eq!(part.counts, vec![n; 6]);
        let sum_a: i128 = kept.iter().map(|&i| i128::from(a[i])).sum();
        let sum_b: i128 = kept.iter().map(|&i| i128::from(b[i])).sum();
        assert_eq!(part.sums[1], sum_a);
        assert_eq!(part.sums[4], sum_b);
        assert_eq!(
            part.extremes[2],
            kept.iter().map(|&i| i64::from(b[i])).min().unwrap()
        );
        assert_eq!(
            part.extremes[3],
            kept.iter().map(|&i| i64::from(a[i])).max().unwrap()
        );
        assert_eq!(
            page_sum(&[i32::MIN; MAX_TUPLES]),
            i64::from(i32::MIN) * MAX_TUPLES as i64
        );
        assert_eq!(page_sum(&[i32::MAX, -1, i32::MIN, 5]), -1 + 5 - 1);
        // A page whose mask keeps nothing changes nothing.
        let before = part.clone();
        p.add_page(&mut part, &[&b, &a], 200, Some(&[0; 200]), &mut scratch);
        assert_eq!(part, before);
    }

    #[test]
    fn other_aggregates_do_not_compile() {
        use AggFunc::*;
        let page = |k: usize| (k == 0).then_some(0);
        let ok = |a: AggCall| PageAgg::compile(&[a], &page).is_some();
        assert!(ok(call(Sum, Some(0))));
        assert!(!ok(call(Sum, Some(1))), "a column the page does not hold");
        let mut d = call(Count, Some(0));
        d.distinct = true;
        assert!(!ok(d));
        let mut f = call(Sum, Some(0));
        f.filter = Some(Expr {
            kind: ExprKind::Column(0),
            ty: DataType::Bool,
        });
        assert!(!ok(f));
        let mut big = call(Sum, Some(0));
        big.arg.as_mut().unwrap().ty = DataType::Int8;
        assert!(!ok(big), "only int4 columns");
        assert!(PageAgg::compile(&[], &page).is_none());
    }
}
