//! Row estimates from ANALYZE's statistics (PostgreSQL's `selfuncs.c`,
//! much reduced).
//!
//! [`column_origins`] traces each output column of a plan back to a table
//! column where it is one unchanged (through filters, projections of plain
//! columns, sorts, limits and joins). [`selectivity`] then estimates the
//! fraction of rows a condition keeps:
//!
//! - `col = const`: the constant's frequency when it is a most common value;
//!   otherwise the rows outside the MCVs spread evenly over the other
//!   distinct values;
//! - `col < const` (and `<=`, `>`, `>=`, either side): the MCVs that qualify
//!   plus the histogram's fraction below the constant, interpolated linearly
//!   inside its bucket for numeric, date and timestamp columns;
//! - a lower and an upper bound on the same column in one AND are one range
//!   (`P(x > a) + P(x < b) - 1`), not two independent conditions;
//! - `IS [NOT] NULL` from the null fraction; AND multiplies, OR adds minus
//!   the overlap, NOT complements;
//! - anything else, or a column without statistics, falls back to
//!   PostgreSQL's defaults (0.005 for equality, 1/3 otherwise).
//!
//! [`join_selectivity`] estimates an equi-join as PostgreSQL's `eqjoinsel`
//! without MCV matching: `(1 - nullfrac1)(1 - nullfrac2) / max(nd1, nd2)`.

use std::cmp::Ordering;
use std::sync::Arc;

use super::{Node, Plan};
use crate::catalog::as_scalar;
use crate::catalog::{ColumnStats, TableDef};
use crate::nodes::expr::{Expr, ExprKind};
use crate::types::{cast, compare_typed, parse_value, BinaryOp, DataType, Value};

/// Default selectivity of an equality without statistics (`DEFAULT_EQ_SEL`).
pub const EQ_SEL: f64 = 0.005;
/// Default selectivity of other conditions (`DEFAULT_INEQ_SEL`).
pub const INEQ_SEL: f64 = 0.3333;
/// PostgreSQL's `DEFAULT_UNK_SEL`: `x IS NULL` with no statistics on `x`.
pub const UNK_SEL: f64 = 0.005;

/// A plan column that is a table column, unchanged.
#[derive(Debug, Clone)]
pub struct ColumnRef {
    /// The table (with its statistics).
    pub table: Arc<TableDef>,
    /// The column's position in the table.
    pub column: usize,
}

impl ColumnRef {
    fn stats(&self) -> Option<(&ColumnStats, f64, DataType)> {
        let ts = self.table.stats.as_ref()?;
        let cs = ts.columns.get(self.column)?.as_ref()?;
        Some((cs, ts.reltuples, self.table.columns[self.column].ty))
    }
}

/// For each output column of `plan`, the table column it is, if any.
pub fn column_origins(plan: &Plan) -> Vec<Option<ColumnRef>> {
    let n = plan.fields.len();
    let mut out = match &plan.node {
        Node::SeqScan { table, columns, .. } => columns
            .iter()
            .map(|&c| {
                Some(ColumnRef {
                    table: table.clone(),
                    column: c,
                })
            })
            .collect(),
        Node::BitmapHeapScan(s) => s
            .columns
            .iter()
            .map(|&c| {
                Some(ColumnRef {
                    table: s.table.clone(),
                    column: c,
                })
            })
            .collect(),
        Node::IndexScan(s) => s
            .columns
            .iter()
            .map(|&c| {
                Some(ColumnRef {
                    table: s.table.clone(),
                    column: c,
                })
            })
            .collect(),
        Node::Filter { input, .. }
        | Node::Sort { input, .. }
        | Node::Limit { input, .. }
        | Node::Distinct { input }
        | Node::Unique { input, .. }
        | Node::LimitTies { input, .. } => column_origins(input),
        Node::Project { input, exprs } => {
            let inner = column_origins(input);
            exprs
                .iter()
                .map(|e| match e.kind {
                    ExprKind::Column(i) => inner.get(i).cloned().flatten(),
                    _ => None,
                })
                .collect()
        }
        Node::HashJoin { left, right, .. }
        | Node::NestedLoop { left, right, .. }
        | Node::IndexNestLoop { left, right, .. }
        | Node::Lateral { left, right, .. } => {
            let mut v = column_origins(left);
            v.extend(column_origins(right));
            v
        }
        _ => Vec::new(),
    };
    out.resize(n, None);
    out
}

/// The column a side of a comparison is (through casts), if any.
fn column_of<'a>(e: &Expr, origins: &'a [Option<ColumnRef>]) -> Option<&'a ColumnRef> {
    match &e.kind {
        ExprKind::Column(i) => origins.get(*i)?.as_ref(),
        ExprKind::Cast(inner, _) => column_of(inner, origins),
        _ => None,
    }
}

fn const_of(e: &Expr) -> Option<&Value> {
    match &e.kind {
        ExprKind::Const(v) => Some(v),
        ExprKind::Cast(inner, _) => const_of(inner),
        _ => None,
    }
}

/// The number of distinct non-null values.
fn ndistinct(cs: &ColumnStats, reltuples: f64) -> f64 {
    if cs.n_distinct < 0.0 {
        (-cs.n_distinct * reltuples).max(1.0)
    } else {
        cs.n_distinct.max(1.0)
    }
}

/// Compares `a` and `b` (a value of the column's type `ty`).
fn cmp(a: &Value, b: &Value, ty: &DataType) -> Ordering {
    match (as_scalar(a), as_scalar(b)) {
        (Some(x), Some(y)) => x.partial_cmp(&y).unwrap_or(Ordering::Equal),
        _ => compare_typed(a, b, ty),
    }
}

/// The constant as a value of the column's type, when it can be one.
fn to_column_type(v: &Value, ty: &DataType) -> Option<Value> {
    if as_scalar(v).is_some() {
        return Some(v.clone());
    }
    cast(v, ty).ok()
}

fn eq_sel(cs: &ColumnStats, reltuples: f64, ty: &DataType, v: &Value) -> f64 {
    if v.is_null() {
        return 0.0;
    }
    let Some(v) = to_column_type(v, ty) else {
        return EQ_SEL;
    };
    let mut mcv_total = 0.0;
    let mut least = 1.0f64;
    for (text, freq) in &cs.mcv {
        mcv_total += freq;
        least = least.min(*freq);
        if let Ok(m) = parse_value(text, ty) {
            if cmp(&m, &v, ty) == Ordering::Equal {
                return *freq;
            }
        }
    }
    let others = (ndistinct(cs, reltuples) - cs.mcv.len() as f64).max(1.0);
    let rest = (1.0 - cs.null_frac - mcv_total).max(0.0);
    let sel = rest / others;
    if cs.mcv.is_empty() {
        sel
    } else {
        sel.min(least)
    }
}

/// Fraction of rows with `col < v` (`or_equal`: `<=`).
fn below_sel(cs: &ColumnStats, ty: &DataType, v: &Value, or_equal: bool) -> f64 {
    let Some(v) = to_column_type(v, ty) else {
        return INEQ_SEL;
    };
    let below = |x: &Value| match cmp(x, &v, ty) {
        Ordering::Less => true,
        Ordering::Equal => or_equal,
        Ordering::Greater => false,
    };
    let mut mcv_total = 0.0;
    let mut mcv_sel = 0.0;
    for (text, freq) in &cs.mcv {
        mcv_total += freq;
        if parse_value(text, ty).is_ok_and(|m| below(&m)) {
            mcv_sel += freq;
        }
    }
    let rest = (1.0 - cs.null_frac - mcv_total).max(0.0);
    let bounds: Vec<Value> = cs
        .histogram
        .iter()
        .filter_map(|t| parse_value(t, ty).ok())
        .collect();
    let hist_frac = if bounds.len() >= 2 {
        let buckets = (bounds.len() - 1) as f64;
        if cmp(&v, &bounds[0], ty) != Ordering::Greater {
            0.0
        } else if cmp(&v, &bounds[bounds.len() - 1], ty) != Ordering::Less {
            1.0
        } else {
            // The bucket [lo, hi) holding v.
            let i = bounds
                .windows(2)
                .position(|w| cmp(&w[1], &v, ty) != Ordering::Less)
                .unwrap_or(bounds.len() - 2);
            let (lo, hi) = (&bounds[i], &bounds[i + 1]);
            let within = match (as_scalar(lo), as_scalar(hi), as_scalar(&v)) {
                (Some(l), Some(h), Some(x)) if h > l => ((x - l) / (h - l)).clamp(0.0, 1.0),
                _ => 0.5,
            };
            (i as f64 + within) / buckets
        }
    } else if rest > 0.0 {
        INEQ_SEL
    } else {
        0.0
    };
    (mcv_sel + rest * hist_frac).clamp(0.0, 1.0)
}

/// A comparison `column op constant` with the column on the left.
fn normalise(
    op: BinaryOp,
    a: &Expr,
    b: &Expr,
    origins: &[Option<ColumnRef>],
) -> Option<(BinaryOp, ColumnRef, Value)> {
    if let (Some(c), Some(v)) = (column_of(a, origins), const_of(b)) {
        return Some((op, c.clone(), v.clone()));
    }
    if let (Some(v), Some(c)) = (const_of(a), column_of(b, origins)) {
        let flipped = match op {
            BinaryOp::Lt => BinaryOp::Gt,
            BinaryOp::LtEq => BinaryOp::GtEq,
            BinaryOp::Gt => BinaryOp::Lt,
            BinaryOp::GtEq => BinaryOp::LtEq,
            o => o,
        };
        return Some((flipped, c.clone(), v.clone()));
    }
    None
}

/// The selectivity of one comparison, or `None` without statistics.
fn comparison_sel(op: BinaryOp, c: &ColumnRef, v: &Value) -> Option<f64> {
    let (cs, reltuples, ty) = c.stats()?;
    let nonnull = 1.0 - cs.null_frac;
    Some(match op {
        BinaryOp::Eq => eq_sel(cs, reltuples, &ty, v),
        BinaryOp::NotEq => (nonnull - eq_sel(cs, reltuples, &ty, v)).max(0.0),
        BinaryOp::Lt => below_sel(cs, &ty, v, false),
        BinaryOp::LtEq => below_sel(cs, &ty, v, true),
        BinaryOp::Gt => (nonnull - below_sel(cs, &ty, v, true)).max(0.0),
        BinaryOp::GtEq => (nonnull - below_sel(cs, &ty, v, false)).max(0.0),
        _ => return None,
    })
}

fn conjuncts<'e>(e: &'e Expr, out: &mut Vec<&'e Expr>) {
    match &e.kind {
        ExprKind::And(a, b) => {
            conjuncts(a, out);
            conjuncts(b, out);
        }
        _ => out.push(e),
    }
}

/// Bounds on one column within an AND list: ((table oid, column), the
/// selectivity of its lower bound, of its upper bound).
type Range = ((u32, usize), Option<f64>, Option<f64>);

/// The selectivity of an AND list: range pairs on one column combined.
fn and_sel(e: &Expr, origins: &[Option<ColumnRef>]) -> f64 {
    let mut parts = Vec::new();
    conjuncts(e, &mut parts);
    let mut ranges: Vec<Range> = Vec::new();
    let mut sel = 1.0;
    for p in parts {
        if let ExprKind::Binary(op, a, b) = &p.kind {
            if let Some((op, c, v)) = normalise(*op, a, b, origins) {
                let lower = matches!(op, BinaryOp::Gt | BinaryOp::GtEq);
                let upper = matches!(op, BinaryOp::Lt | BinaryOp::LtEq);
                if let (true, Some(s)) = (lower || upper, comparison_sel(op, &c, &v)) {
                    let key = (c.table.oid, c.column);
                    let slot = match ranges.iter().position(|r| r.0 == key) {
                        Some(i) => i,
                        None => {
                            ranges.push((key, None, None));
                            ranges.len() - 1
                        }
                    };
                    let r = &mut ranges[slot];
                    let side = if lower { &mut r.1 } else { &mut r.2 };
                    *side = Some(side.map_or(s, |old: f64| old.min(s)));
                    continue;
                }
            }
        }
        sel *= selectivity(p, origins);
    }
    for (_, lo, hi) in ranges {
        sel *= match (lo, hi) {
            (Some(l), Some(h)) => {
                let s = l + h - 1.0;
                if s > 0.0 {
                    s
                } else {
                    // Empty or nearly: PostgreSQL's small positive guess.
                    1.0e-4
                }
            }
            (Some(s), None) | (None, Some(s)) => s,
            (None, None) => 1.0,
        };
    }
    sel
}

/// The fraction of its input's rows that condition `e` keeps; `origins`
/// are the input's columns as [`column_origins`] traced them.
pub fn selectivity(e: &Expr, origins: &[Option<ColumnRef>]) -> f64 {
    let s = match &e.kind {
        ExprKind::Binary(op, a, b) => match normalise(*op, a, b, origins) {
            Some((op, c, v)) => comparison_sel(op, &c, &v).unwrap_or(match op {
                BinaryOp::Eq => EQ_SEL,
                _ => INEQ_SEL,
            }),
            None if *op == BinaryOp::Eq => EQ_SEL,
            None => INEQ_SEL,
        },
        ExprKind::And(..) => and_sel(e, origins),
        ExprKind::Or(a, b) => {
            let (x, y) = (selectivity(a, origins), selectivity(b, origins));
            x + y - x * y
        }
        ExprKind::Not(a) => 1.0 - selectivity(a, origins),
        ExprKind::IsNull(a, negated) => match column_of(a, origins).and_then(|c| c.stats()) {
            Some((cs, _, _)) if *negated => 1.0 - cs.null_frac,
            Some((cs, _, _)) => cs.null_frac,
            // PostgreSQL's nulltestsel without statistics: DEFAULT_UNK_SEL.
            None if *negated => 1.0 - UNK_SEL,
            None => UNK_SEL,
        },
        _ => INEQ_SEL,
    };
    s.clamp(0.0, 1.0)
}

/// The selectivity of an equi-join on the key pairs `left[i] = right[i]`
/// (expressions over each side's own columns), when statistics cover a
/// pair; `None` otherwise.
pub fn join_selectivity(
    left_keys: &[Expr],
    right_keys: &[Expr],
    left: &[Option<ColumnRef>],
    right: &[Option<ColumnRef>],
) -> Option<f64> {
    let mut sel: Option<f64> = None;
    for (l, r) in left_keys.iter().zip(right_keys) {
        let (Some(lc), Some(rc)) = (column_of(l, left), column_of(r, right)) else {
            continue;
        };
        let (Some((ls, lt, _)), Some((rs, rt, _))) = (lc.stats(), rc.stats()) else {
            continue;
        };
        let s =
            (1.0 - ls.null_frac) * (1.0 - rs.null_frac) / ndistinct(ls, lt).max(ndistinct(rs, rt));
        sel = Some(sel.map_or(s, |x| x * s));
    }
    sel
}

/// The number of distinct non-null values of output column `i`, from
/// ANALYZE's statistics of the table column it is (`origins` as
/// [`column_origins`] traced them); `None` without statistics.
pub fn column_ndistinct(origins: &[Option<ColumnRef>], i: usize) -> Option<f64> {
    let (cs, reltuples, _) = origins.get(i)?.as_ref()?.stats()?;
    Some(ndistinct(cs, reltuples))
}
