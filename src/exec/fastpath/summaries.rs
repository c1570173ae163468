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

/// Pages answered from summaries, skipped, and read, for EXPLAIN ANALYZE.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SummaryCounts {
    /// Taken whole from their summaries.
    pub answered: u64,
    /// Left out: their summaries exclude every row.
    pub skipped: u64,
    /// Read (no valid summary, or a boundary page).
    pub scanned: u64,
    /// Windows of pages (one summary page's worth) answered or skipped
    /// whole from their merged summary, without a look at each page.
    pub windows: u64,
}

/// One scan's use of summaries: the plan, the window of slots read last,
/// and what the answered pages contribute. A page it reads for want of a
/// valid summary that turns out all-visible gets its summary written
/// ([`SummaryScan::fill`]), so the next scan takes it whole: "set by VACUUM
/// or by the first full scan that finds the page all-visible".
pub struct SummaryScan<'r> {
    rel: &'r HeapRelation,
    plan: SummaryPlan,
    nblocks: BlockNumber,
    /// First block of the window in `slots` (`u32::MAX`: none yet).
    window: BlockNumber,
    /// The blocks' own summaries of the current window, once read.
    slots: Vec<Option<Slot>>,
    /// Whether `slots` holds the current window's summaries.
    have_slots: bool,
    /// The plan's decision for each of `slots` (`None`: no summary), made
    /// once per window by [`SummaryScan::note_window`] and read by each
    /// block's visit (the plan does not change during a scan).
    decisions: Vec<Option<PageUse>>,
    /// The answered pages' aggregates.
    pub part: PagePartial,
    /// The answered pages' live tuples not yet taken by a rows-only scan.
    pub rows: u64,
    /// Pages answered, skipped, scanned.
    pub counts: SummaryCounts,
    /// The block last visited, when it has no valid summary: the scan
    /// reads it, and [`SummaryScan::fill`] writes its summary if the page
    /// is all-visible.
    unsummarised: Option<BlockNumber>,
    /// All-visible pages without a summary read so far.
    missing: u64,
    /// A grouped plan's answered pages, per group key, in the order met
    /// (consecutive pages of one key share an entry); taken by the
    /// aggregate as it goes ([`SummaryScan::take_groups`]).
    pub groups: Vec<(i64, PagePartial)>,
    /// Whether a grouped plan may still answer pages: the aggregate turns
    /// it off when it starts spilling, as from then on a new key's group
    /// may already be in a partition file.
    grouping: bool,
    /// Windows in a row whose blocks all had valid summaries, too few of
    /// which decided their pages to pay for reading them
    /// ([`SummaryScan::note_window`]): past [`BARREN_WINDOWS`] the data
    /// does not line up with the plan (a shuffled table), and the scan
    /// stops reading blocks' own summaries (it still takes whole windows).
    barren: u32,
}

/// Windows in a row read block by block for (next to) nothing before a
/// scan stops reading blocks' own summaries: decoding a window's 32 slots
/// costs about a third of reading its pages, so a scan of data the
/// summaries cannot decide would otherwise pay that on every page.
const BARREN_WINDOWS: u32 = 8;

/// A scan fills in one in this many of the summaries it finds missing: a
/// page's summary costs about as much as reading it again, and a WAL
/// record, so filling every page would make that scan twice as slow;
/// one in 32 keeps it within a few percent, and each later scan fills in
/// another share of the pages still missing.
const FILL_EVERY: u64 = 32;

impl<'r> SummaryScan<'r> {
    /// A scan of `rel`'s first `nblocks` blocks with `plan`, shared between
    /// the heap scan's block filter and the operator.
    pub fn shared(
        rel: &'r HeapRelation,
        plan: SummaryPlan,
        nblocks: BlockNumber,
    ) -> Rc<RefCell<SummaryScan<'r>>> {
        Rc::new(RefCell::new(SummaryScan {
            rel,
            part: plan.empty(),
            plan,
            nblocks,
            window: BlockNumber::MAX,
            slots: Vec::new(),
            have_slots: false,
            decisions: Vec::new(),
            rows: 0,
            counts: SummaryCounts::default(),
            unsummarised: None,
            missing: 0,
            groups: Vec::new(),
            grouping: true,
            barren: 0,
        }))
    }

    /// The compiled plan.
    pub fn plan(&self) -> &SummaryPlan {
        &self.plan
    }

    /// Decides block `block` before it is read, the scan holding the
    /// blocks up to `limit`: returns how many blocks from `block` are
    /// answered or skipped (the scan leaves them unread), 0 to read it.
    ///
    /// At the start of a window (the blocks of one summary page) the
    /// window's merged summary ([`HeapRelation::window_summary`], cached
    /// per relation) decides all its blocks at once when it can: a
    /// decision on the merge holds for every block (`Slot::merged`). Else
    /// each block is decided from its own summary.
    pub fn visit(&mut self, block: BlockNumber, limit: BlockNumber) -> Result<BlockNumber> {
        if block % BLOCKS_PER_SPAN == 0 {
            let n = self.visit_span(block, limit)?;
            if n > 0 {
                return Ok(n);
            }
        }
        let start = block - block % sumfork::BLOCKS_PER_PAGE;
        if self.window != start {
            let end = self
                .nblocks
                .min(start + sumfork::BLOCKS_PER_PAGE)
                .max(block + 1);
            self.window = start;
            let merged = self.rel.window_summary(start, end, &mut self.slots)?;
            self.have_slots = !self.slots.is_empty();
            if let (Some(m), true) = (merged, block == start && limit >= end) {
                let n = end - start;
                match self.plan.decide(&m) {
                    PageUse::Answer if self.answerable() => {
                        self.answer(&m);
                        self.counts.answered += u64::from(n);
                        self.counts.windows += 1;
                        // A window decided whole is no barren one.
                        self.barren = 0;
                        return Ok(n);
                    }
                    PageUse::Skip => {
                        self.counts.skipped += u64::from(n);
                        self.counts.windows += 1;
                        self.barren = 0;
                        return Ok(n);
                    }
                    PageUse::Answer | PageUse::Scan => {}
                }
            }
            // Decided block by block: each block's decision, once.
            if self.have_slots {
                self.note_window();
            }
        }
        if !self.have_slots {
            if self.barren >= BARREN_WINDOWS {
                self.unsummarised = None;
                self.counts.scanned += 1;
                return Ok(0);
            }
            let end = self
                .nblocks
                .min(start + sumfork::BLOCKS_PER_PAGE)
                .max(block + 1);
            self.rel.read_summaries(start, end, &mut self.slots)?;
            self.have_slots = true;
            self.note_window();
        }
        // By reference: a slot is a few hundred bytes.
        let slot = self
            .slots
            .get((block - start) as usize)
            .and_then(Option::as_ref);
        let decision = self
            .decisions
            .get((block - start) as usize)
            .copied()
            .flatten()
            .unwrap_or(PageUse::Scan);
        self.unsummarised = slot.is_none().then_some(block);
        match (decision, slot) {
            (PageUse::Answer, Some(s)) if self.answerable() => {
                let s = *s;
                self.answer(&s);
                self.counts.answered += 1;
                Ok(1)
            }
            (PageUse::Skip, _) => {
                self.counts.skipped += 1;
                Ok(1)
            }
            _ => {
                self.counts.scanned += 1;
                Ok(0)
            }
        }
    }
}

impl SummaryScan<'_> {
    /// At the first block of a span of [`BLOCKS_PER_SPAN`] blocks that
    /// the table and the scan's range hold whole: the span's merged
    /// summary ([`HeapRelation::span_summary`], cached per relation)
    /// decides all its blocks at once when it can (a decision on the
    /// merge holds for each window, and so for each block). Returns the
    /// blocks answered or skipped, 0 when the span is left to its windows.
    fn visit_span(&mut self, block: BlockNumber, limit: BlockNumber) -> Result<BlockNumber> {
        let end = block.saturating_add(BLOCKS_PER_SPAN);
        if end > limit || end > self.nblocks {
            return Ok(0);
        }
        let Some(m) = self.rel.span_summary(block, end)? else {
            return Ok(0);
        };
        let windows = u64::from(BLOCKS_PER_SPAN / sumfork::BLOCKS_PER_PAGE);
        match self.plan.decide(&m) {
            PageUse::Answer if self.answerable() => {
                self.answer(&m);
                self.counts.answered += u64::from(BLOCKS_PER_SPAN);
            }
            PageUse::Skip => self.counts.skipped += u64::from(BLOCKS_PER_SPAN),
            PageUse::Answer | PageUse::Scan => return Ok(0),
        }
        self.counts.windows += windows;
        self.barren = 0;
        Ok(BLOCKS_PER_SPAN)
    }

    /// Counts the window whose blocks' summaries were just read towards
    /// [`BARREN_WINDOWS`] when fewer than a third of its blocks are decided
    /// (answered or skipped): decoding the window costs about a third of
    /// reading its pages from the heap, and more than that of taking them
    /// from the packed column cache, so a smaller share saves less than it
    /// costs (shuffled accounts at 20M rows under a 2.5% range of `aid`:
    /// a fifth of the pages skipped, and the summaries cost as much as
    /// folding every page). A block without one (to be filled in) resets
    /// the count.
    fn note_window(&mut self) {
        self.decisions.clear();
        let plan = &self.plan;
        self.decisions.extend(
            self.slots
                .iter()
                .map(|s| s.as_ref().map(|s| plan.decide(s))),
        );
        let mut decided = 0;
        for d in &self.decisions {
            match d {
                None => {
                    self.barren = 0;
                    return;
                }
                Some(d) => decided += usize::from(*d != PageUse::Scan),
            }
        }
        let barren = decided * 3 < self.slots.len();
        self.barren = if barren { self.barren + 1 } else { 0 };
    }

    /// Whether an answered page may be taken: always, but for a grouped
    /// plan once the aggregate has stopped taking groups.
    fn answerable(&self) -> bool {
        self.grouping || !self.plan.grouped()
    }

    /// Folds an answered page (or window) in: into the one partial, or
    /// into its key's partial for a grouped plan.
    fn answer(&mut self, slot: &Slot) {
        self.rows += u64::from(slot.live);
        let Some(key) = self.plan.key_of(slot) else {
            self.plan.fold(slot, &mut self.part);
            return;
        };
        if self.groups.last().map(|g| g.0) != Some(key) {
            self.groups.push((key, self.plan.empty()));
        }
        if let Some((_, part)) = self.groups.last_mut() {
            self.plan.fold(slot, part);
        }
    }

    /// The answered pages' partials per group key since the last call.
    pub fn take_groups(&mut self) -> Vec<(i64, PagePartial)> {
        std::mem::take(&mut self.groups)
    }

    /// Stops answering pages of a grouped plan (they are read instead).
    pub fn stop_grouping(&mut self) {
        self.grouping = false;
    }

    /// Whether block `block`, about to be answered without reading its
    /// page (the packed column cache), should be read instead because
    /// [`SummaryScan::fill`] would write its summary now; when not, the
    /// block counts as a page left without one, as if read.
    pub fn fill_wanted(&mut self, block: BlockNumber) -> bool {
        if self.unsummarised != Some(block) {
            return false;
        }
        if self.missing % FILL_EVERY == 0 {
            return true;
        }
        self.unsummarised = None;
        self.missing += 1;
        false
    }

    /// Called with each ALL_VISIBLE page the scan reads, under its lock:
    /// writes the summary of the block last visited when it had none and
    /// its all-visible bit is set (`HeapRelation::fill_summary`), for the
    /// first such page and one in [`FILL_EVERY`] after it.
    pub fn fill(&mut self, block: BlockNumber, page: &[u8]) -> Result<()> {
        if self.unsummarised.take() == Some(block) {
            self.missing += 1;
            if self.missing % FILL_EVERY == 1 {
                self.rel.fill_summary(block, page)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::ColumnDef;

    fn table(types: &[DataType]) -> TableDef {
        TableDef {
            oid: 1,
            name: "t".into(),
            relfilenode: 1,
            columns: types
                .iter()
                .enumerate()
                .map(|(i, t)| ColumnDef {
                    name: format!("c{i}"),
                    ty: *t,
                    not_null: false,
                    default: None,
                    domain: None,
                })
                .collect(),
            stats: None,
            indexes: Vec::new(),
            checks: Vec::new(),
            parents: Vec::new(),
            has_subclass: false,
            options: Vec::new(),
        }
    }

    fn col(k: usize, ty: DataType) -> Expr {
        Expr {
            kind: ExprKind::Column(k),
            ty,
        }
    }

    fn cmp(op: BinaryOp, k: usize, c: i32) -> Expr {
        Expr {
            kind: ExprKind::Binary(
                op,
                Box::new(col(k, DataType::Int4)),
                Box::new(Expr {
                    kind: ExprKind::Const(Value::Int4(c)),
                    ty: DataType::Int4,
                }),
            ),
            ty: DataType::Bool,
        }
    }

    fn call(func: AggFunc, arg: Option<usize>) -> AggCall {
        AggCall {
            func,
            arg: arg.map(|k| col(k, DataType::Int4)),
            more_args: Vec::new(),
            order: Vec::new(),
            distinct: false,
            filter: None,
            ty: DataType::Int8,
        }
    }

    /// A page's values (None: NULL) as a slot, and as rows.
    fn slot_of(vals: &[Option<i32>], natts: usize) -> Slot {
        let nn: Vec<i64> = vals.iter().flatten().map(|&v| i64::from(v)).collect();
        let c = ColumnSummary::Int {
            count: nn.len() as u64,
            min: nn.iter().copied().min().unwrap_or(0),
            max: nn.iter().copied().max().unwrap_or(0),
            sum: nn.iter().map(|&v| i128::from(v)).sum(),
        };
        let mut kinds = vec![SummaryKind::None; natts];
        kinds[0] = SummaryKind::Int4;
        let mut cols = vec![ColumnSummary::None; natts];
        cols[0] = c;
        Slot::decode(&Slot::encode(vals.len() as u16, natts, &kinds, &cols)).unwrap()
    }

    /// Seeded random pages: a page answered from its summary folds to what
    /// its rows give; a skipped page has no passing row; a boundary page is
    /// never answered.
    #[test]
    fn decisions_and_folds_match_the_rows() {
        use AggFunc::*;
        let t = table(&[DataType::Int4, DataType::Text]);
        let aggs = [
            call(CountStar, None),
            call(Count, Some(0)),
            call(Sum, Some(0)),
            call(Min, Some(0)),
            call(Max, Some(0)),
        ];
        let mut seed = 0x1234_5678_u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for round in 0..400 {
            let (lo, hi) = ((next() % 200) as i32 - 100, (next() % 200) as i32 - 100);
            let filter = match round % 4 {
                0 => None,
                1 => Some(cmp(BinaryOp::GtEq, 0, lo)),
                2 => Some(Expr {
                    kind: ExprKind::And(
                        Box::new(cmp(BinaryOp::GtEq, 0, lo)),
                        Box::new(cmp(BinaryOp::LtEq, 0, hi)),
                    ),
                    ty: DataType::Bool,
                }),
                _ => Some(cmp(BinaryOp::Eq, 0, lo)),
            };
            let plan = SummaryPlan::compile(&aggs, filter.as_ref(), &[0], &t).unwrap();
            let n = (next() % 20) as usize;
            let base = (next() % 200) as i32 - 100;
            let vals: Vec<Option<i32>> = (0..n)
                .map(|_| (next() % 5 != 0).then(|| base + (next() % 30) as i32))
                .collect();
            let slot = slot_of(&vals, 2);
            let pass = |v: &Option<i32>| match (v, round % 4) {
                (_, 0) => true,
                (None, _) => false,
                (Some(v), 1) => *v >= lo,
                (Some(v), 2) => *v >= lo && *v <= hi,
                (Some(v), _) => *v == lo,
            };
            let passing: Vec<&Option<i32>> = vals.iter().filter(|v| pass(v)).collect();
            match plan.decide(&slot) {
                PageUse::Skip => assert!(passing.is_empty(), "round {round}"),
                PageUse::Answer => {
                    assert_eq!(passing.len(), vals.len(), "round {round}");
                    let mut part = plan.empty();
                    plan.fold(&slot, &mut part);
                    let nn: Vec<i64> = vals.iter().flatten().map(|&v| i64::from(v)).collect();
                    assert_eq!(part.counts[0], vals.len() as i64);
                    assert_eq!(part.counts[1..], [nn.len() as i64; 4]);
                    assert_eq!(part.sums[2], nn.iter().map(|&v| i128::from(v)).sum());
                    if !nn.is_empty() {
                        assert_eq!(part.extremes[3], *nn.iter().min().unwrap());
                        assert_eq!(part.extremes[4], *nn.iter().max().unwrap());
                    }
                }
                PageUse::Scan => assert!(
                    round % 4 != 0,
                    "an unfiltered page with a summary is answered"
                ),
            }
        }
        // Another column count (the table changed) is never answered.
        let plan = SummaryPlan::compile(&aggs, None, &[0], &t).unwrap();
        assert_eq!(plan.decide(&slot_of(&[Some(1)], 3)), PageUse::Scan);
    }

    /// Seeded random pages under an aggregation grouped by the summarised
    /// column: a page is answered only when every row passes and has one
    /// non-NULL key (`key_of`), folded as its rows would be; an unfiltered
    /// page is read exactly when its rows hold two keys or a NULL.
    #[test]
    fn grouped_decisions_match_the_rows() {
        use AggFunc::*;
        let t = table(&[DataType::Int4, DataType::Text]);
        let key = col(0, DataType::Int4);
        let aggs = [
            call(CountStar, None),
            call(Sum, Some(0)),
            call(Max, Some(0)),
        ];
        let mut seed = 0x0bad_cafe_u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for round in 0..400 {
            let lo = (next() % 8) as i32;
            let filter = (round % 2 == 1).then(|| cmp(BinaryOp::GtEq, 0, lo));
            let plan =
                SummaryPlan::compile_grouped(&key, &aggs, filter.as_ref(), &[0], &t).unwrap();
            assert!(plan.grouped());
            let n = (next() % 6) as usize;
            let base = (next() % 8) as i32;
            let spread = (next() % 3) as i32;
            let vals: Vec<Option<i32>> = (0..n)
                .map(|_| (next() % 9 != 0).then(|| base + (next() % 3) as i32 * spread))
                .collect();
            let slot = slot_of(&vals, 2);
            let pass = |v: &Option<i32>| filter.is_none() || v.is_some_and(|v| v >= lo);
            let keys: std::collections::BTreeSet<Option<i32>> = vals.iter().copied().collect();
            match plan.decide(&slot) {
                PageUse::Skip => assert!(!vals.iter().any(pass), "round {round}"),
                PageUse::Answer => {
                    assert!(vals.iter().all(pass), "round {round}");
                    assert_eq!(keys.len(), 1, "round {round}: {vals:?}");
                    let k = vals[0].expect("a non-NULL key");
                    assert_eq!(plan.key_of(&slot), Some(i64::from(k)));
                    let mut part = plan.empty();
                    plan.fold(&slot, &mut part);
                    assert_eq!(part.counts, [n as i64; 3]);
                    assert_eq!(part.sums[1], i128::from(k) * n as i128);
                    assert_eq!(part.extremes[2], i64::from(k));
                }
                PageUse::Scan => assert!(
                    filter.is_some() || keys.len() > 1 || keys.contains(&None),
                    "round {round}: {vals:?}"
                ),
            }
        }
    }

    /// Seeded random windows of pages: when the merge of their summaries
    /// is answered, every page is answered and the merge folds as the
    /// pages do one by one; when it is skipped, every page is skipped.
    #[test]
    fn window_decisions_hold_for_each_page() {
        use AggFunc::*;
        let t = table(&[DataType::Int4, DataType::Text]);
        let aggs = [
            call(CountStar, None),
            call(Count, Some(0)),
            call(Sum, Some(0)),
            call(Min, Some(0)),
            call(Max, Some(0)),
        ];
        let mut seed = 0x005e_ed0f_0032_u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let (mut answered, mut skipped) = (0, 0);
        for round in 0..600 {
            let lo = (next() % 400) as i32 - 200;
            let filter = match round % 3 {
                0 => None,
                1 => Some(cmp(BinaryOp::GtEq, 0, lo)),
                _ => Some(Expr {
                    kind: ExprKind::And(
                        Box::new(cmp(BinaryOp::GtEq, 0, lo)),
                        Box::new(cmp(BinaryOp::Lt, 0, lo + (next() % 300) as i32)),
                    ),
                    ty: DataType::Bool,
                }),
            };
            let plan = SummaryPlan::compile(&aggs, filter.as_ref(), &[0], &t).unwrap();
            // Ordered-ish pages: each page's values around a rising base,
            // NULLs on some rounds only.
            let nulls = next() % 4 == 0;
            let mut base = (next() % 400) as i32 - 200;
            let slots: Vec<Option<Slot>> = (0..1 + next() % 32)
                .map(|_| {
                    base += (next() % 20) as i32;
                    let n = 1 + (next() % 12) as usize;
                    let vals: Vec<Option<i32>> = (0..n)
                        .map(|_| (!nulls || next() % 6 != 0).then(|| base + (next() % 15) as i32))
                        .collect();
                    Some(slot_of(&vals, 2))
                })
                .collect();
            let merged = Slot::merged(&slots).expect("same columns");
            let mut one_by_one = plan.empty();
            for s in slots.iter().flatten() {
                plan.fold(s, &mut one_by_one);
            }
            match plan.decide(&merged) {
                PageUse::Answer => {
                    answered += 1;
                    for s in slots.iter().flatten() {
                        assert_eq!(plan.decide(s), PageUse::Answer, "round {round}");
                    }
                    let mut part = plan.empty();
                    plan.fold(&merged, &mut part);
                    assert_eq!(part.counts, one_by_one.counts, "round {round}");
                    assert_eq!(part.sums, one_by_one.sums, "round {round}");
                    assert_eq!(part.extremes, one_by_one.extremes, "round {round}");
                }
                PageUse::Skip => {
                    skipped += 1;
                    for s in slots.iter().flatten() {
                        assert_eq!(plan.decide(s), PageUse::Skip, "round {round}");
                    }
                }
                PageUse::Scan => {}
            }
        }
        assert!(answered > 50 && skipped > 20, "{answered} {skipped}");
    }

    /// A span's merge, made as `HeapRelation::span_summary` makes it (its
    /// windows' merges merged in turn), decides as each of its pages: an
    /// answer or a skip on the span is that of every page, and the
    /// answered span folds as its pages do, with live counts past `u16`.
    #[test]
    fn span_decisions_hold_for_each_page() {
        use AggFunc::*;
        let t = table(&[DataType::Int4, DataType::Text]);
        let aggs = [
            call(CountStar, None),
            call(Count, Some(0)),
            call(Sum, Some(0)),
            call(Min, Some(0)),
            call(Max, Some(0)),
        ];
        let mut seed = 0x0005_9a40_77e1_u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let (mut answered, mut skipped, mut big) = (0, 0, 0);
        for round in 0..90 {
            let lo = (next() % 40_000) as i32 - 1_000;
            let filter = match round % 3 {
                0 => None,
                1 => Some(cmp(BinaryOp::GtEq, 0, lo)),
                _ => Some(cmp(BinaryOp::Lt, 0, lo)),
            };
            let plan = SummaryPlan::compile(&aggs, filter.as_ref(), &[0], &t).unwrap();
            let nulls = next() % 4 == 0;
            let mut base = (next() % 400) as i32 - 200;
            let mut pages: Vec<Slot> = Vec::new();
            let mut span: Option<Slot> = None;
            for _ in 0..16 + next() % 17 {
                let window: Vec<Option<Slot>> = (0..32)
                    .map(|_| {
                        base += (next() % 20) as i32;
                        let n = 1 + (next() % 250) as usize;
                        let vals: Vec<Option<i32>> = (0..n)
                            .map(|_| {
                                (!nulls || next() % 6 != 0).then(|| base + (next() % 15) as i32)
                            })
                            .collect();
                        Some(slot_of(&vals, 2))
                    })
                    .collect();
                pages.extend(window.iter().flatten().copied());
                let w = Slot::merged(&window).expect("same columns");
                span = match span {
                    None => Some(w),
                    Some(acc) => Slot::merged(&[Some(acc), Some(w)]),
                };
            }
            let span = span.expect("same columns");
            let live: u32 = pages.iter().map(|p| p.live).sum();
            assert_eq!(span.live, live, "round {round}");
            big += usize::from(live > u32::from(u16::MAX));
            let mut one_by_one = plan.empty();
            for p in &pages {
                plan.fold(p, &mut one_by_one);
            }
            match plan.decide(&span) {
                PageUse::Answer => {
                    answered += 1;
                    for p in &pages {
                        assert_eq!(plan.decide(p), PageUse::Answer, "round {round}");
                    }
                    let mut part = plan.empty();
                    plan.fold(&span, &mut part);
                    assert_eq!(part.counts, one_by_one.counts, "round {round}");
                    assert_eq!(part.sums, one_by_one.sums, "round {round}");
                    assert_eq!(part.extremes, one_by_one.extremes, "round {round}");
                }
                PageUse::Skip => {
                    skipped += 1;
                    for p in &pages {
                        assert_eq!(plan.decide(p), PageUse::Skip, "round {round}");
                    }
                }
                PageUse::Scan => {}
            }
        }
        assert!(
            answered > 10 && skipped > 5 && big > 5,
            "{answered} {skipped} {big}"
        );
    }

    /// A float8 column compared with a float8 constant.
    fn fcmp(op: BinaryOp, c: f64) -> Expr {
        Expr {
            kind: ExprKind::Binary(
                op,
                Box::new(col(0, DataType::Float8)),
                Box::new(Expr {
                    kind: ExprKind::Const(Value::Float8(c)),
                    ty: DataType::Float8,
                }),
            ),
            ty: DataType::Bool,
        }
    }

    /// PostgreSQL's float comparison `v op c` (NaN above everything).
    fn pg_float(op: BinaryOp, v: f64, c: f64) -> bool {
        let o = float_cmp(v, c);
        match op {
            BinaryOp::Eq => o == Ordering::Equal,
            BinaryOp::Lt => o == Ordering::Less,
            BinaryOp::LtEq => o != Ordering::Greater,
            BinaryOp::Gt => o == Ordering::Greater,
            _ => o != Ordering::Less,
        }
    }

    /// Seeded random float pages (NaN, infinities, -0 and 0 mixed in) and
    /// filters of one or two comparisons: a skipped page has no passing
    /// row, an answered one only passing rows, and `count(f)` folds the
    /// non-null count.
    #[test]
    fn float_intervals_decide_as_the_rows() {
        let t = table(&[DataType::Float8]);
        let specials = [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -0.0, 0.0, 1.5];
        let ops = [
            BinaryOp::Eq,
            BinaryOp::Lt,
            BinaryOp::LtEq,
            BinaryOp::Gt,
            BinaryOp::GtEq,
        ];
        let mut seed = 0x0bad_cafe_u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let pick = |next: &mut dyn FnMut() -> u64| {
            let x = next();
            if x % 4 == 0 {
                specials[(x / 4 % specials.len() as u64) as usize]
            } else {
                (x % 9) as f64 - 4.0
            }
        };
        let (mut skipped, mut answered) = (0, 0);
        for round in 0..2000 {
            let n1 = (ops[(next() % 5) as usize], pick(&mut next));
            let n2 = (ops[(next() % 5) as usize], pick(&mut next));
            let two = round % 2 == 0;
            let filter = if two {
                Expr {
                    kind: ExprKind::And(Box::new(fcmp(n1.0, n1.1)), Box::new(fcmp(n2.0, n2.1))),
                    ty: DataType::Bool,
                }
            } else {
                fcmp(n1.0, n1.1)
            };
            let mut cnt = call(AggFunc::Count, Some(0));
            cnt.arg = Some(col(0, DataType::Float8));
            let aggs = [call(AggFunc::CountStar, None), cnt];
            let plan = SummaryPlan::compile(&aggs, Some(&filter), &[0], &t).unwrap();
            let vals: Vec<Option<f64>> = (0..1 + next() % 6)
                .map(|_| (next() % 6 != 0).then(|| pick(&mut next)))
                .collect();
            let nn: Vec<f64> = vals.iter().flatten().copied().collect();
            let mut c = ColumnSummary::empty(SummaryKind::Float8);
            for &v in &nn {
                c.merge(&ColumnSummary::Float {
                    count: 1,
                    min: v,
                    max: v,
                });
            }
            let slot = Slot::decode(&Slot::encode(
                vals.len() as u16,
                1,
                &[SummaryKind::Float8],
                &[c],
            ))
            .unwrap();
            let pass = |v: &Option<f64>| {
                v.is_some_and(|v| pg_float(n1.0, v, n1.1) && (!two || pg_float(n2.0, v, n2.1)))
            };
            let passing = vals.iter().filter(|v| pass(v)).count();
            match plan.decide(&slot) {
                PageUse::Skip => {
                    skipped += 1;
                    assert_eq!(passing, 0, "round {round}: {vals:?} {n1:?} {n2:?}");
                }
                PageUse::Answer => {
                    answered += 1;
                    assert_eq!(passing, vals.len(), "round {round}: {vals:?} {n1:?} {n2:?}");
                    let mut part = plan.empty();
                    plan.fold(&slot, &mut part);
                    assert_eq!(part.counts, vec![vals.len() as i64, nn.len() as i64]);
                }
                PageUse::Scan => {}
            }
        }
        assert!(skipped > 100 && answered > 100, "{skipped} {answered}");
    }

    /// A date column compiles with date constants only, as an integer
    /// interval of days.
    #[test]
    fn date_comparisons_compile_with_date_constants() {
        let t = table(&[DataType::Date]);
        let date_cmp = |op, v: Value| Expr {
            kind: ExprKind::Binary(
                op,
                Box::new(col(0, DataType::Date)),
                Box::new(Expr {
                    ty: v.data_type().unwrap(),
                    kind: ExprKind::Const(v),
                }),
            ),
            ty: DataType::Bool,
        };
        let f = date_cmp(BinaryOp::GtEq, Value::Date(10));
        let plan = SummaryPlan::compile(&[], Some(&f), &[0], &t).unwrap();
        let slot = |lo: i64, hi: i64| {
            let c = ColumnSummary::Int {
                count: 2,
                min: lo,
                max: hi,
                sum: 0,
            };
            Slot::decode(&Slot::encode(2, 1, &[SummaryKind::Date], &[c])).unwrap()
        };
        assert_eq!(plan.decide(&slot(10, 20)), PageUse::Answer);
        assert_eq!(plan.decide(&slot(0, 9)), PageUse::Skip);
        assert_eq!(plan.decide(&slot(5, 15)), PageUse::Scan);
        let g = date_cmp(BinaryOp::GtEq, Value::Int4(10));
        assert!(SummaryPlan::compile(&[], Some(&g), &[0], &t).is_none());
    }

    #[test]
    fn what_does_not_compile() {
        let t = table(&[DataType::Int4, DataType::Float8]);
        let mut fsum = call(AggFunc::Sum, Some(1));
        fsum.arg = Some(col(1, DataType::Float8));
        assert!(SummaryPlan::compile(&[fsum], None, &[0, 1], &t).is_none());
        let mut d = call(AggFunc::Sum, Some(0));
        d.distinct = true;
        assert!(SummaryPlan::compile(&[d], None, &[0, 1], &t).is_none());
        let ne = cmp(BinaryOp::NotEq, 0, 3);
        let s = call(AggFunc::Sum, Some(0));
        assert!(SummaryPlan::compile(std::slice::from_ref(&s), Some(&ne), &[0, 1], &t).is_none());
        let or = Expr {
            kind: ExprKind::Or(
                Box::new(cmp(BinaryOp::Eq, 0, 1)),
                Box::new(cmp(BinaryOp::Eq, 0, 2)),
            ),
            ty: DataType::Bool,
        };
        assert!(SummaryPlan::compile(&[s], Some(&or), &[0, 1], &t).is_none());
    }
}
