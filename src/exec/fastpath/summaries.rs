//! Aggregates answered from page summaries: a sequential scan under an
//! aggregation without GROUP BY takes whole all-visible pages from their
//! summaries ([`crate::access::sumfork`]) instead of reading them; under
//! one grouped by a plain `int2`/`int4`/`int8` column, the pages whose
//! rows all share one (non-NULL) key ([`SummaryPlan::compile_grouped`]).
//!
//! A [`SummaryPlan`] compiles when every aggregate is `count(*)`, or a plain
//! (no DISTINCT, no FILTER) `sum`, `avg`, `min` or `max` of an
//! `int2`/`int4`/`int8` column or `count` of any summarised column, and the
//! scan's filter is absent or an AND of comparisons (`=`, `<`, `<=`, `>`,
//! `>=`, so also BETWEEN) of a summarised column with a non-NULL constant:
//! an integer one for `int2`/`int4`/`int8`, one of the column's own type
//! for `date`, `float4` and `float8`. Per column the comparisons make an
//! interval: `lo..=hi` for integers and dates, bounds in PostgreSQL's
//! float order (NaN above everything, `-0 = 0`) for floats. A filtered
//! `count(*)` (a rows-only scan) compiles with no aggregates. Per block,
//! before the page is read ([`SummaryScan::visit`]):
//!
//! - no valid summary (the validity rule of `sumfork`: the page's
//!   all-visible bit, read under the map page's lock, a written slot whose
//!   live count is the map's, the table's column count and each needed
//!   column's kind): the page is read (**scanned**);
//! - some interval excludes the page (its values all NULL, or its min/max
//!   outside): no row passes, the page is **skipped**;
//! - every interval holds the page's min..max and the column has no NULL
//!   there: every row passes, the page is **answered**: its live count, the
//!   columns' non-null counts, sums and extremes are folded into a
//!   [`PagePartial`], in the shape of [`super::page_agg`]'s, which the
//!   aggregate adds in at the end ([`super::hash_agg::FastAgg::add_partial`]);
//! - otherwise (a boundary page) it is read.
//!
//! Before its blocks, a window of 32 (one summary page) is decided whole
//! from the merge of its blocks' summaries when every block has one of
//! the same columns ([`crate::access::sumfork::Slot::merged`]): its
//! extremes bound each block's and its non-null count equals its live
//! count only when each block's does, so *answered* or *skipped* on the
//! merge is that decision for every block, and the answered window folds
//! as its blocks would. The merges are cached per relation and dropped by
//! any change to a window's map bits or slots
//! ([`crate::access::summary_cache`]), so a scan of a table whose pages
//! are all-visible costs one cache look-up per 32 pages: no pin of the
//! map or summary page, no slot decoded. The heap scan is told to leave
//! the whole window unread (its block filter returns how many blocks).
//! Above the windows, a span of 32 windows (1,024 blocks) is decided the
//! same way from the merge of its windows' merges, also cached
//! ([`crate::access::summary_cache`]'s spans), when the table and the
//! scan's range hold it whole: one look-up per 1,024 pages.
//!
//! Grouped: a page (or window) is answered only when, beyond the above,
//! the key column's summary has min = max and no NULL; its partial goes to
//! that key's group ([`SummaryScan::take_groups`]), which the aggregate
//! adds in before it folds the next batch. Once the aggregate spills
//! (a new key's rows may then sit in a partition file) it stops the scan
//! answering ([`SummaryScan::stop_grouping`]), so a key never has a
//! group both in memory and in a file.
//!
//! A scan that has read 8 windows in a row block by block, each block
//! with a valid summary and none decided, stops reading blocks' own
//! summaries (it still takes whole windows from the cache): on data the
//! summaries cannot decide (a shuffled table) that decoding would cost
//! about a third of reading the pages.
//!
//! The planner asks [`decided_fraction`] (a sample of windows) whether
//! most pages will be answered or skipped, and then plans no workers.
//!
//! MVCC: a set all-visible bit means every tuple on the page is visible to
//! every snapshot still running (VACUUM set it under a horizon older than
//! any of them), so the summary is the page's answer for the query's
//! snapshot too: the rule `count(*)` follows with the map's counts. The
//! map is read before the slot, and a slot rewritten in between belongs to
//! a later all-visible state of the page, which the snapshot (taken before
//! both reads) also sees whole.
//!
//! Exactness: integer sums are exact (`i128`, as the aggregate's state),
//! so a sum overflowing its result type fails in the aggregate as on the
//! general path; floats are never taken from summaries.

use std::cell::RefCell;
use std::cmp::Ordering;
use std::rc::Rc;

use super::page_agg::PagePartial;
use crate::access::heap::HeapRelation;
use crate::access::sumfork::{self, Slot};
use crate::access::summary::{float_cmp, ColumnSummary, SummaryKind};
use crate::access::summary_cache::BLOCKS_PER_SPAN;
use crate::catalog::TableDef;
use crate::error::Result;
use crate::exec::expr::{Expr, ExprKind};
use crate::nodes::AggCall;
use crate::storage::BlockNumber;
use crate::types::agg::AggFunc;
use crate::types::{BinaryOp, DataType, Value};

/// What one aggregate takes from an answered page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Term {
    /// `count(*)`: the live tuples.
    Rows,
    /// `count(x)`: the column's non-null values.
    Count(usize, SummaryKind),
    /// `sum(x)`, `avg(x)`: non-null values and their sum.
    Sum(usize, SummaryKind),
    /// `min(x)`.
    Min(usize, SummaryKind),
    /// `max(x)`.
    Max(usize, SummaryKind),
}

/// One column's interval from the filter.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Range {
    attno: usize,
    kind: SummaryKind,
    iv: Interval,
}

/// The values a column's comparisons let pass.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Interval {
    /// Integers and dates: `lo..=hi` (empty when `lo > hi`).
    Int { lo: i64, hi: i64 },
    /// Floats, in PostgreSQL's order (NaN above everything, `-0 = 0`):
    /// each bound and whether it is included; `None`: unbounded.
    Float {
        lo: Option<(f64, bool)>,
        hi: Option<(f64, bool)>,
    },
}

/// Whether `v` is at or above the lower bound `lo`.
fn above(v: f64, lo: Option<(f64, bool)>) -> bool {
    lo.map_or(true, |(c, incl)| match float_cmp(v, c) {
        Ordering::Greater => true,
        Ordering::Equal => incl,
        Ordering::Less => false,
    })
}

/// Whether `v` is at or below the upper bound `hi`.
fn below(v: f64, hi: Option<(f64, bool)>) -> bool {
    hi.map_or(true, |(c, incl)| match float_cmp(v, c) {
        Ordering::Less => true,
        Ordering::Equal => incl,
        Ordering::Greater => false,
    })
}

/// The tighter of two lower (`upper` false) or upper bounds.
fn tighter(a: Option<(f64, bool)>, b: Option<(f64, bool)>, upper: bool) -> Option<(f64, bool)> {
    match (a, b) {
        (None, x) | (x, None) => x,
        (Some(x), Some(y)) => Some(match float_cmp(x.0, y.0) {
            Ordering::Equal => (x.0, x.1 && y.1),
            Ordering::Less if upper => x,
            Ordering::Greater if !upper => x,
            _ => y,
        }),
    }
}

impl Interval {
    /// Both intervals at once.
    fn and(self, other: Interval) -> Option<Interval> {
        Some(match (self, other) {
            (Interval::Int { lo, hi }, Interval::Int { lo: l, hi: h }) => Interval::Int {
                lo: lo.max(l),
                hi: hi.min(h),
            },
            (Interval::Float { lo, hi }, Interval::Float { lo: l, hi: h }) => Interval::Float {
                lo: tighter(lo, l, false),
                hi: tighter(hi, h, true),
            },
            _ => return None,
        })
    }

    /// Whether no value passes.
    fn is_empty(&self) -> bool {
        match *self {
            Interval::Int { lo, hi } => lo > hi,
            Interval::Float {
                lo: Some((a, ai)),
                hi: Some((b, bi)),
            } => match float_cmp(a, b) {
                Ordering::Greater => true,
                Ordering::Equal => !(ai && bi),
                Ordering::Less => false,
            },
            Interval::Float { .. } => false,
        }
    }
}

/// What to do with one page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PageUse {
    /// Every row passes: take the page from its summary.
    Answer,
    /// No row passes: skip the page.
    Skip,
    /// Read the page.
    Scan,
}

/// An aggregation (and filter) compiled for summaries.
#[derive(Debug, Clone)]
pub struct SummaryPlan {
    terms: Vec<Term>,
    ranges: Vec<Range>,
    natts: u16,
    /// The GROUP BY column of a grouped aggregation: a page is answered
    /// only when this column holds one value on every live tuple.
    key: Option<(usize, SummaryKind)>,
}

fn int_kind(ty: &DataType) -> Option<SummaryKind> {
    match ty {
        DataType::Int2 | DataType::Int4 | DataType::Int8 => Some(SummaryKind::of(ty)),
        _ => None,
    }
}

impl SummaryPlan {
    /// Compiles `aggs` (over the scan's output columns; table column
    /// `columns[k]` is output column `k`) and the scan's `filter` for
    /// `table`; `None` unless everything fits (module docs).
    pub fn compile(
        aggs: &[AggCall],
        filter: Option<&Expr>,
        columns: &[usize],
        table: &TableDef,
    ) -> Option<SummaryPlan> {
        let natts = u16::try_from(table.columns.len()).ok()?;
        let column = |e: &Option<Expr>| -> Option<(usize, SummaryKind)> {
            match e.as_ref().map(|e| &e.kind) {
                Some(ExprKind::Column(k)) => {
                    let attno = *columns.get(*k)?;
                    Some((attno, int_kind(&table.columns.get(attno)?.ty)?))
                }
                _ => None,
            }
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
                        // Any summarised column keeps its non-null count.
                        let (c, k) = match a.arg.as_ref().map(|e| &e.kind) {
                            Some(ExprKind::Column(k)) => {
                                let attno = *columns.get(*k)?;
                                let kind = SummaryKind::of(&table.columns.get(attno)?.ty);
                                (kind != SummaryKind::None).then_some((attno, kind))?
                            }
                            _ => return None,
                        };
                        Term::Count(c, k)
                    }
                    AggFunc::Sum | AggFunc::Avg => {
                        let (c, k) = column(&a.arg)?;
                        Term::Sum(c, k)
                    }
                    AggFunc::Min => {
                        let (c, k) = column(&a.arg)?;
                        Term::Min(c, k)
                    }
                    AggFunc::Max => {
                        let (c, k) = column(&a.arg)?;
                        Term::Max(c, k)
                    }
                    _ => return None,
                })
            })
            .collect::<Option<Vec<_>>>()?;
        let mut ranges: Vec<Range> = Vec::new();
        if let Some(f) = filter {
            let mut leaves = Vec::new();
            conjuncts(f, &mut leaves);
            for leaf in leaves {
                let r = range_of(leaf, columns, table)?;
                match ranges.iter_mut().find(|x| x.attno == r.attno) {
                    Some(x) => x.iv = x.iv.and(r.iv)?,
                    None => ranges.push(r),
                }
            }
        }
        Some(SummaryPlan {
            terms,
            ranges,
            natts,
            key: None,
        })
    }

    /// [`SummaryPlan::compile`] for an aggregation grouped by `key`, a
    /// plain `int2`/`int4`/`int8` column of the scan: a page is answered
    /// for the one group of its key when the key is the same non-NULL
    /// value on every live tuple (its summary's min equals its max and it
    /// has no NULL there); any other page is read.
    pub fn compile_grouped(
        key: &Expr,
        aggs: &[AggCall],
        filter: Option<&Expr>,
        columns: &[usize],
        table: &TableDef,
    ) -> Option<SummaryPlan> {
        let ExprKind::Column(k) = key.kind else {
            return None;
        };
        let attno = *columns.get(k)?;
        let kind = int_kind(&table.columns.get(attno)?.ty)?;
        let mut plan = SummaryPlan::compile(aggs, filter, columns, table)?;
        plan.key = Some((attno, kind));
        Some(plan)
    }

    /// Whether answered pages belong to groups ([`SummaryPlan::key_of`]).
    pub fn grouped(&self) -> bool {
        self.key.is_some()
    }

    /// The group key of a page (or merged window) whose rows all share
    /// one non-NULL key, for a grouped plan; `None` otherwise.
    pub fn key_of(&self, slot: &Slot) -> Option<i64> {
        let (attno, kind) = self.key?;
        match slot.column(attno, kind)? {
            &ColumnSummary::Int {
                count, min, max, ..
            } if count > 0 && count == u64::from(slot.live) && min == max => Some(min),
            _ => None,
        }
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

    /// What to do with a page whose valid summary is `slot`.
    pub fn decide(&self, slot: &Slot) -> PageUse {
        if slot.natts != self.natts {
            return PageUse::Scan;
        }
        let mut inside = true;
        for r in &self.ranges {
            let (skip, within, count) = match (r.iv, slot.column(r.attno, r.kind)) {
                (
                    Interval::Int { lo, hi },
                    Some(&ColumnSummary::Int {
                        count, min, max, ..
                    }),
                ) => (max < lo || min > hi, lo <= min && max <= hi, count),
                (Interval::Float { lo, hi }, Some(&ColumnSummary::Float { count, min, max })) => (
                    !above(max, lo) || !below(min, hi),
                    above(min, lo) && below(max, hi),
                    count,
                ),
                _ => return PageUse::Scan,
            };
            if count == 0 || skip || r.iv.is_empty() {
                return PageUse::Skip;
            }
            inside &= within && count == u64::from(slot.live);
        }
        if !inside {
            return PageUse::Scan;
        }
        if self.key.is_some() {
            if slot.live == 0 {
                // No live tuple: no row, and no group to make.
                return PageUse::Skip;
            }
            if self.key_of(slot).is_none() {
                return PageUse::Scan;
            }
        }
        let has = |c: usize, k: SummaryKind| slot.column(c, k).is_some();
        let all = self.terms.iter().all(|t| match *t {
            Term::Rows => true,
            Term::Count(c, k) | Term::Sum(c, k) | Term::Min(c, k) | Term::Max(c, k) => has(c, k),
        });
        if all {
            PageUse::Answer
        } else {
            PageUse::Scan
        }
    }

    /// Folds an answered page's summary into `part`.
    pub fn fold(&self, slot: &Slot, part: &mut PagePartial) {
        for (k, t) in self.terms.iter().enumerate() {
            let (c, kind) = match *t {
                Term::Rows => {
                    part.counts[k] += i64::from(slot.live);
                    continue;
                }
                Term::Count(c, kind)
                | Term::Sum(c, kind)
                | Term::Min(c, kind)
                | Term::Max(c, kind) => (c, kind),
            };
            let Some(col) = slot.column(c, kind) else {
                continue;
            };
            let count = col.count();
            if count == 0 {
                continue;
            }
            // Sums and extremes are compiled for integer columns only.
            if let ColumnSummary::Int { min, max, sum, .. } = *col {
                let first = part.counts[k] == 0;
                match *t {
                    Term::Sum(..) => part.sums[k] += sum,
                    Term::Min(..) if first || min < part.extremes[k] => part.extremes[k] = min,
                    Term::Max(..) if first || max > part.extremes[k] => part.extremes[k] = max,
                    _ => {}
                }
            }
            part.counts[k] += count as i64;
        }
    }

    /// Adds `from` (another partial of the same aggregates) into `into`.
    pub fn merge(&self, into: &mut PagePartial, from: &PagePartial) {
        for (k, t) in self.terms.iter().enumerate() {
            if from.counts[k] == 0 {
                continue;
            }
            let (e, v) = (&mut into.extremes[k], from.extremes[k]);
            let better = match t {
                Term::Min(..) => v < *e,
                Term::Max(..) => v > *e,
                _ => false,
            };
            if into.counts[k] == 0 || better {
                *e = v;
            }
            into.counts[k] += from.counts[k];
            into.sums[k] += from.sums[k];
        }
    }
}

/// Whether the aggregation `group`/`aggs` over `input` takes pages from
/// summaries when `enable_page_summaries` is on (EXPLAIN's `Page
/// Summaries:` line): as the executor decides, an aggregation without
/// GROUP BY right over a sequential scan (a bare `count(*)` of a whole
/// table counts through the visibility map instead).
pub fn usable(input: &crate::nodes::Plan, group: &[Expr], aggs: &[AggCall]) -> bool {
    plan_of(input, group, aggs).is_some()
}

/// The [`SummaryPlan`] the executor compiles for the aggregation
/// `group`/`aggs` over `input`, if any ([`usable`]).
pub fn plan_of(
    input: &crate::nodes::Plan,
    group: &[Expr],
    aggs: &[AggCall],
) -> Option<SummaryPlan> {
    use crate::exec::scan::{is_count_star, scan_use, ScanUse};
    let crate::nodes::Node::SeqScan {
        table,
        columns,
        with_tid: false,
        filter,
        ..
    } = &input.node
    else {
        return None;
    };
    if is_count_star(input, group, aggs) {
        return None;
    }
    match scan_use(group, aggs) {
        ScanUse::RowsOnly => SummaryPlan::compile(&[], filter.as_ref(), columns, table),
        ScanUse::Aggregates(aggs) => SummaryPlan::compile(aggs, filter.as_ref(), columns, table),
        ScanUse::Grouped(key, aggs) => {
            SummaryPlan::compile_grouped(key, aggs, filter.as_ref(), columns, table)
        }
        ScanUse::Rows | ScanUse::Bounded(_) => None,
    }
}

/// The fraction (0..=1) of `rel`'s pages `plan` decides from summaries
/// (answers or skips without reading them), estimated from up to
/// `samples` windows of 32 blocks spread evenly over the relation, as a
/// scan decides them ([`SummaryScan::visit`]): the window's merged summary
/// when there is one (cached, so a look-up), else each block's own. The
/// planner's look at whether a filtered aggregation will read so few
/// pages that starting workers would cost more than the scan. Reading the
/// samples fills the summary cache the scan then uses.
pub fn decided_fraction(rel: &HeapRelation, plan: &SummaryPlan, samples: u32) -> Result<f64> {
    let nblocks = rel.nblocks()?;
    let windows = nblocks.div_ceil(sumfork::BLOCKS_PER_PAGE);
    let n = samples.min(windows);
    if n == 0 {
        return Ok(0.0);
    }
    let mut slots = Vec::new();
    let (mut decided, mut total) = (0u64, 0u64);
    for i in 0..n {
        let w = (u64::from(i) * u64::from(windows) / u64::from(n)) as BlockNumber;
        let first = w * sumfork::BLOCKS_PER_PAGE;
        let end = nblocks.min(first + sumfork::BLOCKS_PER_PAGE);
        total += u64::from(end - first);
        match rel.window_summary(first, end, &mut slots)? {
            Some(m) if plan.decide(&m) != PageUse::Scan => decided += u64::from(end - first),
            _ => {
                if slots.is_empty() {
                    rel.read_summaries(first, end, &mut slots)?;
                }
                decided += slots
                    .iter()
                    .flatten()
                    .filter(|s| plan.decide(s) != PageUse::Scan)
                    .count() as u64;
            }
        }
    }
    Ok(decided as f64 / total as f64)
}

/// The AND-ed leaves of `e`.
fn conjuncts<'e>(e: &'e Expr, out: &mut Vec<&'e Expr>) {
    match &e.kind {
        ExprKind::And(a, b) => {
            conjuncts(a, out);
            conjuncts(b, out);
        }
        _ => out.push(e),
    }
}

/// The interval of a leaf `column op constant` (either way round).
fn range_of(leaf: &Expr, columns: &[usize], table: &TableDef) -> Option<Range> {
    let ExprKind::Binary(op, l, r) = &leaf.kind else {
        return None;
    };
    let (col, c, flipped) = match (&l.kind, &r.kind) {
        (ExprKind::Column(k), ExprKind::Const(v)) => (*k, v, false),
        (ExprKind::Const(v), ExprKind::Column(k)) => (*k, v, true),
        _ => return None,
    };
    let attno = *columns.get(col)?;
    let ty = table.columns.get(attno)?.ty;
    let kind = SummaryKind::of(&ty);
    // Integers with integer constants; a date, a float4 or a float8 only
    // with a constant of its own type (compared as PostgreSQL compares it).
    let c = match (kind, c) {
        (
            SummaryKind::Int2 | SummaryKind::Int4 | SummaryKind::Int8,
            Value::Int2(_) | Value::Int4(_) | Value::Int8(_),
        ) => c.as_i64()?,
        (SummaryKind::Date, Value::Date(d)) => i64::from(*d),
        (SummaryKind::Float4, Value::Float4(f)) => {
            return float_range(attno, kind, *op, flipped, f64::from(*f))
        }
        (SummaryKind::Float8, Value::Float8(f)) => {
            return float_range(attno, kind, *op, flipped, *f)
        }
        _ => return None,
    };
    let op = oriented(*op, flipped)?;
    let (lo, hi) = match op {
        BinaryOp::Eq => (c, c),
        // An empty interval (lo > hi) skips every page: no value passes.
        BinaryOp::Lt => (i64::MIN, c.saturating_sub(1)),
        BinaryOp::LtEq => (i64::MIN, c),
        BinaryOp::Gt => match c.checked_add(1) {
            Some(x) => (x, i64::MAX),
            None => (1, 0),
        },
        _ => (c, i64::MAX),
    };
    let (lo, hi) = if op == BinaryOp::Lt && c == i64::MIN {
        (1, 0)
    } else {
        (lo, hi)
    };
    Some(Range {
        attno,
        kind,
        iv: Interval::Int { lo, hi },
    })
}

/// The operator of `column op constant` (`flipped`: written the other way
/// round), as `<`, `<=`, `=`, `>=` or `>` with the column on the left.
fn oriented(op: BinaryOp, flipped: bool) -> Option<BinaryOp> {
    Some(match (op, flipped) {
        (BinaryOp::Eq, _) => BinaryOp::Eq,
        (BinaryOp::Lt, false) | (BinaryOp::Gt, true) => BinaryOp::Lt,
        (BinaryOp::LtEq, false) | (BinaryOp::GtEq, true) => BinaryOp::LtEq,
        (BinaryOp::Gt, false) | (BinaryOp::Lt, true) => BinaryOp::Gt,
        (BinaryOp::GtEq, false) | (BinaryOp::LtEq, true) => BinaryOp::GtEq,
        _ => return None,
    })
}

/// The interval of a float column's comparison with constant `c`.
fn float_range(
    attno: usize,
    kind: SummaryKind,
    op: BinaryOp,
    flipped: bool,
    c: f64,
) -> Option<Range> {
    let (lo, hi) = match oriented(op, flipped)? {
        BinaryOp::Eq => (Some((c, true)), Some((c, true))),
        BinaryOp::Lt => (None, Some((c, false))),
        BinaryOp::LtEq => (None, Some((c, true))),
        BinaryOp::Gt => (Some((c, false)), None),
        _ => (Some((c, true)), None),
    };
    Some(Range {
        attno,
        kind,
        iv: Interval::Float { lo, hi },
    })
}

mod scan;
pub use scan::{SummaryCounts, SummaryScan};

#[cfg(test)]
mod tests;
