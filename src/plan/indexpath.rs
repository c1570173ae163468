//! Index paths: where a B-tree index answers a scan better than reading the
//! whole heap (PostgreSQL's `indxpath.c` and `costsize.c`'s `cost_index`,
//! much reduced).
//!
//! The binder builds sequential scans with their WHERE conjuncts pushed in;
//! [`use_indexes`] then walks the finished plan and, per scan of a table
//! with indexes:
//!
//! - matches the scan's conjuncts to each index's key columns: `col =
//!   const`, `col IN (consts)` and `col IS NULL` on leading columns, then
//!   at most one range (`<`, `<=`, `>`, `>=`, BETWEEN's pair) on the next
//!   one ([`match_index`]); the matched conjuncts become the scan's bounds
//!   and `Index Cond`, the others stay its filter; a plain column compared
//!   with an InitPlan of its type (`id = (SELECT max(id) ...)` the
//!   statement runs itself) is a bound computed when the scan starts
//!   ([`runtime::runtime_qual`]; not for bitmap scans);
//! - costs each candidate as `cost_index` does (index pages and tuples;
//!   the heap pages between the random reads of Mackert and Lohman's
//!   formula and an in-order read of the selected share of the heap, by
//!   the square of ANALYZE's correlation of the index's first column;
//!   an index-only scan skips the share of heap pages the visibility map
//!   says are all-visible) against the sequential scan, and keeps the
//!   cheapest; `enable_seqscan` / `enable_indexscan` / `enable_indexonlyscan`
//!   add PostgreSQL's `disable_cost` or rule the path out as it does;
//!   bitmap heap scans ([`super::bitmappath`]) compete in the same choice;
//! - makes an index scan index-only when every column the consumer needs
//!   is stored in the index and decodes to its stored value (not `numeric`,
//!   `interval`, `char(n)` or floats), pruning the columns only a matched
//!   condition read (`count(*) ... where k between ...` reads no column);
//! - drops a Sort whose keys the chosen index returns in order (forward or
//!   backward), and under a LIMIT considers a scan in index order against
//!   sequential scan + top-N sort (the index path costed for the fraction
//!   of rows the LIMIT reads), passing the LIMIT down as a batch-size hint;
//! - turns an inner or left hash join whose inner side is a scan with an
//!   index on the join key into a nested loop over a parameterized index
//!   scan when the outer side is small enough that its probes cost less.
//!
//! A partial index is a candidate only where the scan's conjuncts imply its
//! predicate (`plan::indexpred`); the conjuncts the predicate implies in
//! turn are not tested again (PostgreSQL drops them the same way).
//!
//! Tables without indexes leave the walk at once: statements over them
//! plan exactly as before, at the cost of one pass over the plan.

mod runtime;

use super::estimate::{self, column_origins};
use super::indexpred;
use super::quals::{conjunction, conjuncts};
use super::select::{columns_used, remap_columns};
use super::{JoinKind, Node, Plan, PlanContext, SortKey};
use crate::catalog::{IndexDef, TableDef};
use crate::nodes::expr::{Expr, ExprKind};
use crate::nodes::plannodes::{BoundSlot, IndexBounds, IndexScan, RuntimeBound};
use crate::types::cast::CastContext;
use crate::types::{BinaryOp, DataType, Value};

/// PostgreSQL's planner cost constants (their defaults).
pub(super) const SEQ_PAGE_COST: f64 = 1.0;
pub(super) const RANDOM_PAGE_COST: f64 = 4.0;
pub(super) const CPU_TUPLE_COST: f64 = 0.01;
const CPU_INDEX_TUPLE_COST: f64 = 0.005;
pub(super) const CPU_OPERATOR_COST: f64 = 0.0025;
/// `effective_cache_size` in pages (4GB).
const EFFECTIVE_CACHE_PAGES: f64 = 524_288.0;
/// What a disabled path costs extra (`disable_cost`).
pub(super) const DISABLE_COST: f64 = 1.0e10;
/// At most this many key ranges (combinations of IN values) per scan.
const MAX_RANGES: usize = 10_000;

/// Replaces sequential scans by index scans where cheaper (see the module
/// doc). Leaves at once when no scan in `plan` has an index to use.
pub fn use_indexes(plan: &mut Plan, ctx: &dyn PlanContext) {
    if any_indexed_scan(plan) {
        visit(plan, ctx);
    }
}

fn any_indexed_scan(plan: &Plan) -> bool {
    match &plan.node {
        Node::SeqScan { table, .. } => !table.indexes.is_empty(),
        _ => plan.children().into_iter().any(any_indexed_scan),
    }
}

fn visit(plan: &mut Plan, ctx: &dyn PlanContext) {
    match &mut plan.node {
        Node::SeqScan { .. } => {
            if let Some(p) = choose(plan, None, ctx) {
                *plan = p;
            }
            return;
        }
        Node::Limit {
            input,
            limit: Some(n),
            offset,
        } => {
            let want = n.saturating_add(*offset);
            ordered_under_limit(input, want, ctx);
            visit(input, ctx);
            if let Some(scan) = unfiltered_scan_below(input) {
                scan.limit_hint = Some(want);
            }
            return;
        }
        Node::Project { input, exprs } if is_seq_scan(input) => {
            let mut used = Vec::new();
            for e in exprs.iter() {
                columns_used(e, &mut used);
            }
            if let Some((p, map)) = choose_pruned(input, &used, ctx) {
                **input = p;
                for e in exprs.iter_mut() {
                    remap_columns(e, &|c| map[c]);
                }
            }
            return;
        }
        Node::Aggregate { input, group, aggs } if is_seq_scan(input) => {
            let mut used = Vec::new();
            for e in group.iter() {
                columns_used(e, &mut used);
            }
            for a in aggs.iter() {
                for e in a.exprs() {
                    columns_used(e, &mut used);
                }
            }
            if let Some((p, map)) = choose_pruned(input, &used, ctx) {
                **input = p;
                for e in group.iter_mut() {
                    remap_columns(e, &|c| map[c]);
                }
                for a in aggs.iter_mut() {
                    for e in a.exprs_mut() {
                        remap_columns(e, &|c| map[c]);
                    }
                }
            }
            return;
        }
        _ => {}
    }
    for c in plan.children_mut() {
        visit(c, ctx);
    }
    match &mut plan.node {
        Node::Sort { input, keys } => {
            let keys = keys.clone();
            if index_order_matches(input, &keys) {
                let Node::Sort { input, .. } = std::mem::replace(&mut plan.node, dummy_node())
                else {
                    unreachable!("matched above")
                };
                *plan = *input;
            }
        }
        Node::HashJoin { .. } => index_nest_loop(plan, ctx),
        _ => {}
    }
}

fn dummy_node() -> Node {
    Node::Values { rows: vec![] }
}

fn is_seq_scan(p: &Plan) -> bool {
    matches!(
        &p.node,
        Node::SeqScan {
            with_tid: false,
            table,
            ..
        } if !table.indexes.is_empty()
    )
}

/// The index scan under `plan` (through projections) when nothing between
/// drops rows and it has no filter: a LIMIT above bounds what it must read.
fn unfiltered_scan_below(plan: &mut Plan) -> Option<&mut IndexScan> {
    match &mut plan.node {
        Node::Project { input, .. } => unfiltered_scan_below(input),
        Node::IndexScan(s) if s.filter.is_none() => Some(s),
        _ => None,
    }
}

/// One WHERE conjunct an index can use: its table column, what it says,
/// and the condition as EXPLAIN's `Index Cond` prints it (column left).
#[derive(Debug, Clone)]
pub(super) struct Qual {
    col: usize,
    kind: QualKind,
    shown: Expr,
    /// The value is this InitPlan's, known when the scan starts (the
    /// kind's value is a placeholder).
    runtime: Option<Expr>,
}

#[derive(Debug, Clone)]
enum QualKind {
    Eq(Value),
    In(Vec<Value>),
    IsNull,
    Lower(Value, bool),
    Upper(Value, bool),
}

/// The table column an expression is, through casts that keep the order
/// (integer widenings, varchar or name to text).
fn scan_column(e: &Expr, columns: &[usize], table: &TableDef) -> Option<usize> {
    match &e.kind {
        ExprKind::Column(i) => columns.get(*i).copied(),
        ExprKind::Cast(inner, CastContext::Implicit) => {
            let c = scan_column(inner, columns, table)?;
            let from = table.columns[c].ty;
            let int = |t: &DataType| matches!(t, DataType::Int2 | DataType::Int4 | DataType::Int8);
            let ok = (int(&from) && int(&e.ty))
                || (matches!(from, DataType::Varchar(_) | DataType::Name)
                    && e.ty == DataType::Text);
            ok.then_some(c)
        }
        _ => None,
    }
}

fn constant(e: &Expr) -> Option<&Value> {
    match &e.kind {
        ExprKind::Const(v) => Some(v),
        _ => None,
    }
}

/// `v` as a value of key column type `ty`, when it is exactly one; `None`
/// when the index cannot take it (the condition then stays a filter).
fn key_value(v: &Value, ty: &DataType) -> Option<Value> {
    use DataType as T;
    match (ty, v) {
        (_, Value::Null) => None,
        (T::Int2, _) => i16::try_from(v.as_i64()?).ok().map(Value::Int2),
        (T::Int4, _) => i32::try_from(v.as_i64()?).ok().map(Value::Int4),
        (T::Int8, _) => v.as_i64().map(Value::Int8),
        (T::Text | T::Varchar(_) | T::Name, Value::Text(_)) => Some(v.clone()),
        (T::Char(_), _) => None,
        (T::Numeric(_), Value::Numeric(_)) => Some(v.clone()),
        _ if v.data_type().as_ref() == Some(ty) => Some(v.clone()),
        _ => None,
    }
}

fn flip(op: BinaryOp) -> BinaryOp {
    match op {
        BinaryOp::Lt => BinaryOp::Gt,
        BinaryOp::LtEq => BinaryOp::GtEq,
        BinaryOp::Gt => BinaryOp::Lt,
        BinaryOp::GtEq => BinaryOp::LtEq,
        o => o,
    }
}

/// The conjunct `e` as a [`Qual`] over the scan's columns, if an index
/// could use it.
pub(super) fn qual_of(e: &Expr, columns: &[usize], table: &TableDef) -> Option<Qual> {
    match &e.kind {
        ExprKind::Binary(op, a, b)
            if matches!(
                op,
                BinaryOp::Eq | BinaryOp::Lt | BinaryOp::LtEq | BinaryOp::Gt | BinaryOp::GtEq
            ) =>
        {
            let (col, v, op, shown) = match (scan_column(a, columns, table), constant(b)) {
                (Some(c), Some(v)) => (c, v, *op, e.clone()),
                _ => {
                    let c = scan_column(b, columns, table)?;
                    let v = constant(a)?;
                    let op = flip(*op);
                    let shown = Expr {
                        kind: ExprKind::Binary(op, b.clone(), a.clone()),
                        ty: e.ty,
                    };
                    (c, v, op, shown)
                }
            };
            let v = key_value(v, &table.columns[col].ty)?;
            let kind = match op {
                BinaryOp::Eq => QualKind::Eq(v),
                BinaryOp::Lt => QualKind::Upper(v, false),
                BinaryOp::LtEq => QualKind::Upper(v, true),
                BinaryOp::Gt => QualKind::Lower(v, false),
                _ => QualKind::Lower(v, true),
            };
            Some(Qual {
                col,
                kind,
                shown,
                runtime: None,
            })
        }
        ExprKind::InList(a, list, false) => {
            let col = scan_column(a, columns, table)?;
            let ty = table.columns[col].ty;
            let mut vals = Vec::with_capacity(list.len());
            for item in list {
                let v = constant(item)?;
                if v.is_null() {
                    continue; // never equal
                }
                vals.push(key_value(v, &ty)?);
            }
            if vals.is_empty() {
                return None;
            }
            Some(Qual {
                col,
                kind: QualKind::In(vals),
                shown: e.clone(),
                runtime: None,
            })
        }
        ExprKind::IsNull(a, false) => {
            let col = scan_column(a, columns, table)?;
            Some(Qual {
                col,
                kind: QualKind::IsNull,
                shown: e.clone(),
                runtime: None,
            })
        }
        _ => None,
    }
}

/// What an index can do for a scan's conjuncts.
pub(super) struct Matched {
    pub(super) bounds: IndexBounds,
    /// Positions of the conjuncts the bounds stand for.
    pub(super) used: Vec<usize>,
    /// Those conjuncts as `Index Cond` prints them, in key column order.
    pub(super) cond: Vec<Expr>,
    /// Key ranges the scan walks.
    pub(super) nscans: usize,
    /// The bounds known when the scan starts.
    pub(super) runtime: Vec<RuntimeBound>,
}

/// Matches the conjuncts (`quals[i]` for conjunct `i`) to the key columns
/// of `ix`: equalities on a prefix, then one range.
pub(super) fn match_index(ix: &IndexDef, quals: &[Option<Qual>]) -> Matched {
    let mut m = Matched {
        bounds: IndexBounds::default(),
        used: Vec::new(),
        cond: Vec::new(),
        nscans: 1,
        runtime: Vec::new(),
    };
    for kc in &ix.columns {
        let on_col = || {
            quals
                .iter()
                .enumerate()
                .filter_map(|(i, q)| q.as_ref().map(|q| (i, q)))
                .filter(|(_, q)| q.col == kc.column)
        };
        let eq = on_col().find(|(_, q)| matches!(q.kind, QualKind::Eq(_) | QualKind::IsNull));
        let eq = eq.or_else(|| {
            on_col().find(
                |(_, q)| matches!(&q.kind, QualKind::In(v) if m.nscans * v.len() <= MAX_RANGES),
            )
        });
        if let Some((i, q)) = eq {
            if let Some(e) = &q.runtime {
                m.runtime.push(RuntimeBound {
                    slot: BoundSlot::Eq(m.bounds.eq.len()),
                    expr: e.clone(),
                });
            }
            let vals = match &q.kind {
                QualKind::Eq(v) => vec![v.clone()],
                QualKind::IsNull => vec![Value::Null],
                QualKind::In(v) => v.clone(),
                _ => unreachable!("equality kinds only"),
            };
            m.nscans *= vals.len();
            m.bounds.eq.push(vals);
            m.used.push(i);
            m.cond.push(q.shown.clone());
            continue;
        }
        for (i, q) in on_col() {
            let slot = match &q.kind {
                QualKind::Lower(v, inc) if m.bounds.lower.is_none() => {
                    m.bounds.lower = Some((v.clone(), *inc));
                    BoundSlot::Lower
                }
                QualKind::Upper(v, inc) if m.bounds.upper.is_none() => {
                    m.bounds.upper = Some((v.clone(), *inc));
                    BoundSlot::Upper
                }
                _ => continue,
            };
            if let Some(e) = &q.runtime {
                m.runtime.push(RuntimeBound {
                    slot,
                    expr: e.clone(),
                });
            }
            m.used.push(i);
            m.cond.push(q.shown.clone());
        }
        break;
    }
    m
}

/// Whether an index-only scan may return a column of type `ty` from its
/// key (PostgreSQL's `amcanreturn`, per column; see the nbtree README).
fn returnable(ty: &DataType) -> bool {
    matches!(
        ty,
        DataType::Bool
            | DataType::Int2
            | DataType::Int4
            | DataType::Int8
            | DataType::Date
            | DataType::Timestamp(_)
            | DataType::TimestampTz(_)
            | DataType::Text
            | DataType::Varchar(_)
            | DataType::Name
    )
}

/// The heap pages the planner assumes `table` has: its size, but at least
/// 10 while it was never vacuumed or analyzed (PostgreSQL's
/// `estimate_rel_size`: a table just created and filled may grow before
/// anyone looks at it again, so small counts are not trusted).
pub(super) fn planned_pages(table: &TableDef, ctx: &dyn PlanContext) -> f64 {
    let pages = ctx.table_pages(table) as f64;
    if table.stats.is_none() {
        pages.max(10.0)
    } else {
        pages
    }
}

/// Live rows of a table now (`reltuples` scaled to the current size, as
/// the binder's scan estimate).
pub(super) fn table_rows(table: &TableDef, pages: f64, fallback: f64) -> f64 {
    match &table.stats {
        Some(s) if s.relpages > 0 => s.reltuples / s.relpages as f64 * pages,
        Some(s) => s.reltuples,
        None => fallback,
    }
    .max(1.0)
}

/// Pages of `ix` holding `tuples` entries, as PostgreSQL's B-tree would
/// have them after a build (the planner reads its actual size): leaf
/// tuples laid out as `index_form_tuple` does (8-byte header, values
/// aligned by type, a short varlena with its 1-byte header unaligned, the
/// whole rounded to 8) plus a line pointer, leaves filled to 90% (8152
/// usable bytes less 819 left free), the levels above, and the meta page.
fn index_pages(table: &TableDef, ix: &IndexDef, tuples: f64) -> f64 {
    let mut size = 8.0f64;
    for c in ix.stored_columns() {
        let ty = &table.columns[c].ty;
        match ty.attlen() {
            -1 => {
                let stat = table
                    .stats
                    .as_ref()
                    .and_then(|s| s.columns.get(c))
                    .and_then(|c| c.as_ref())
                    .map(|c| c.avg_width);
                size += stat.unwrap_or(32.0);
            }
            n => {
                let align = ty.attalign() as f64;
                size = (size / align).ceil() * align + n as f64;
            }
        }
    }
    let per_page = (7333.0 / ((size / 8.0).ceil() * 8.0 + 4.0))
        .floor()
        .max(2.0);
    let leaves = (tuples / per_page).ceil().max(1.0);
    let (mut pages, mut level) = (leaves + 1.0, leaves);
    while level > 1.0 {
        level = (level / per_page).ceil();
        pages += level;
    }
    pages
}

/// Heap pages a scan fetching `n` tuples of a `t`-page table reads
/// (Mackert and Lohman, as PostgreSQL's `index_pages_fetched`).
fn pages_fetched(n: f64, t: f64) -> f64 {
    let b = EFFECTIVE_CACHE_PAGES;
    let t = t.max(1.0);
    if t <= b {
        (2.0 * t * n / (2.0 * t + n)).min(t)
    } else {
        let lim = 2.0 * t * b / (2.0 * t - b);
        if n <= lim {
            2.0 * t * n / (2.0 * t + n)
        } else {
            b + (n - lim) * (t - b) / t
        }
    }
    .ceil()
}

/// What one candidate costs: (startup, total), PostgreSQL's units.
pub(super) struct Cost {
    pub(super) startup: f64,
    pub(super) total: f64,
}

/// `cost_index` for an index scan reading `sel` of the table's `tuples`
/// rows from an index holding `ix_frac` of them (below 1 for a partial
/// index) through `nscans` descents, with `nquals` index conditions and a
/// filter costing `filter_ops` operators per row.
#[allow(clippy::too_many_arguments)]
fn index_cost(
    table: &TableDef,
    ix: &IndexDef,
    ix_frac: f64,
    tuples: f64,
    pages: f64,
    sel: f64,
    nscans: usize,
    nquals: usize,
    filter_ops: f64,
    allvis: Option<f64>,
) -> Cost {
    let fetched = (sel * tuples).max(1.0).round();
    let Cost {
        startup,
        total: index_total,
    } = index_part_cost(table, ix, ix_frac, tuples, sel, nscans, nquals);
    let index_run = index_total - startup;
    let visible = |p: f64| allvis.map_or(p, |v| (p * (1.0 - v)).ceil());
    // Uncorrelated: every fetched tuple's page read at random, the repeats
    // cached (Mackert and Lohman). Perfectly correlated: the selected
    // share of the heap read in order, the first page at random.
    let max_io = visible(pages_fetched(fetched, pages)) * RANDOM_PAGE_COST;
    let ordered = visible((sel * pages).ceil());
    let min_io = if ordered > 0.0 {
        RANDOM_PAGE_COST + (ordered - 1.0).max(0.0) * SEQ_PAGE_COST
    } else {
        0.0
    };
    let c = index_correlation(table, ix);
    let heap = max_io + c * c * (min_io - max_io);
    let cpu = fetched * (CPU_TUPLE_COST + filter_ops * CPU_OPERATOR_COST);
    Cost {
        startup,
        total: startup + index_run + heap + cpu,
    }
}

/// The correlation of the index's order with the heap's (`btcostestimate`):
/// ANALYZE's correlation of the first key column, times 0.75 when there are
/// more key columns; 0 without statistics.
fn index_correlation(table: &TableDef, ix: &IndexDef) -> f64 {
    let Some(first) = ix.columns.first() else {
        return 0.0;
    };
    let c = table
        .stats
        .as_ref()
        .and_then(|s| s.columns.get(first.column))
        .and_then(|c| c.as_ref())
        .and_then(|c| c.correlation)
        .unwrap_or(0.0);
    if ix.columns.len() > 1 {
        c * 0.75
    } else {
        c
    }
}

/// The index's own part of [`index_cost`] (PostgreSQL's
/// `genericcostestimate` with `btcostestimate`'s descent costs): startup
/// and total, without the heap.
pub(super) fn index_part_cost(
    table: &TableDef,
    ix: &IndexDef,
    ix_frac: f64,
    tuples: f64,
    sel: f64,
    nscans: usize,
    nquals: usize,
) -> Cost {
    let pages = index_pages(table, ix, tuples * ix_frac);
    let fetched = (sel * tuples).max(1.0).round();
    let height = (pages.ln() / 300f64.ln()).ceil().max(0.0) + 1.0;
    let descent = (tuples.max(2.0).log2().ceil() + (height + 1.0) * 50.0) * CPU_OPERATOR_COST;
    let index_pages_read = (fetched / (tuples * ix_frac).max(1.0) * pages)
        .ceil()
        .clamp(nscans as f64, pages.max(nscans as f64));
    let index_run = index_pages_read * RANDOM_PAGE_COST
        + fetched * (CPU_INDEX_TUPLE_COST + nquals as f64 * CPU_OPERATOR_COST)
        + descent * (nscans as f64 - 1.0);
    Cost {
        startup: descent,
        total: descent + index_run,
    }
}

/// A sequential scan's cost with a filter of `filter_ops` operators.
fn seq_cost(pages: f64, tuples: f64, filter_ops: f64) -> f64 {
    pages * SEQ_PAGE_COST + tuples * (CPU_TUPLE_COST + filter_ops * CPU_OPERATOR_COST)
}

/// The candidate index scans of one sequential scan.
pub(super) struct Candidate {
    pub(super) plan: Plan,
    pub(super) cost: Cost,
}

/// The cheapest index scan for the sequential scan `scan` (a
/// [`Node::SeqScan`]) whose output columns `needed` says the consumer reads
/// (all when `None`), if one beats the scan; `order`: only indexes that
/// return these keys in order (the scan's table columns with direction),
/// returned with whether it must walk backward.
fn candidates(
    scan: &Plan,
    needed: Option<&[usize]>,
    order: Option<&[(usize, bool, bool)]>,
    ctx: &dyn PlanContext,
) -> Vec<Candidate> {
    let Node::SeqScan {
        table,
        alias,
        columns,
        with_tid,
        filter,
    } = &scan.node
    else {
        return Vec::new();
    };
    let settings = ctx.settings();
    let mut parts = Vec::new();
    if let Some(f) = filter {
        conjuncts(f.clone(), &mut parts);
    }
    let quals: Vec<Option<Qual>> = parts
        .iter()
        .map(|p| qual_of(p, columns, table).or_else(|| runtime::runtime_qual(p, columns, table)))
        .collect();
    let pages = planned_pages(table, ctx);
    let tuples = table_rows(table, pages, scan.rows);
    let origins = column_origins(scan);
    let mut out = Vec::new();
    for ix in &table.indexes {
        let Some((implied, pred)) = partial_usable(ix, columns, &parts) else {
            continue;
        };
        // Conjuncts the predicate implies are neither index conditions
        // nor filters of this scan (PostgreSQL's `indrestrictinfo`).
        let own_quals: Vec<Option<Qual>>;
        let quals = if implied.is_empty() {
            &quals
        } else {
            own_quals = (0..quals.len())
                .map(|i| (!implied.contains(&i)).then(|| quals[i].clone()).flatten())
                .collect();
            &own_quals
        };
        let m = match_index(ix, quals);
        let backward = match order {
            Some(keys) => match order_direction(ix, &m.bounds, keys) {
                Some(b) => b,
                None => continue,
            },
            // A partial index is worth a full scan (PostgreSQL's
            // `useful_predicate`).
            None if m.used.is_empty() && pred.is_none() => continue,
            None => false,
        };
        let rest: Vec<Expr> = parts
            .iter()
            .enumerate()
            .filter(|(i, _)| !m.used.contains(i) && !implied.contains(i))
            .map(|(_, p)| p.clone())
            .collect();
        let mut sel = index_selectivity(&m, quals, &parts, &origins);
        // A partial index holds the predicate's share of the rows; the
        // scan visits those of them the index conditions select
        // (`add_predicate_to_index_quals`).
        let mut ix_frac = 1.0;
        if let Some(p) = &pred {
            ix_frac = estimate::selectivity(p, &origins).clamp(0.0, 1.0);
            let used: Vec<Expr> = m.used.iter().map(|&i| parts[i].clone()).collect();
            if !indexpred::implied_by(p, &used) {
                sel *= ix_frac;
            }
        }
        let filter_ops: f64 = rest.iter().map(super::quals::cost).sum();
        let rest_sel =
            conjunction(rest.clone()).map_or(1.0, |e| estimate::selectivity(&e, &origins));
        // The binder's estimate has no IN lists; the index's count has.
        let rows = if m.used.is_empty() && pred.is_none() {
            scan.rows
        } else {
            (tuples * sel * rest_sel).max(1.0)
        };
        // Columns the scan must produce: what the consumer reads and what
        // the remaining filter reads.
        let mut keep: Vec<usize> = match needed {
            Some(n) => n.to_vec(),
            None => (0..columns.len()).collect(),
        };
        for r in &rest {
            columns_used(r, &mut keep);
        }
        keep.sort_unstable();
        keep.dedup();
        let stored: Vec<usize> = ix.stored_columns().collect();
        let index_only = !*with_tid
            && settings.enable_indexonlyscan
            && keep.iter().all(|&k| {
                let c = columns[k];
                stored.contains(&c) && returnable(&table.columns[c].ty)
            });
        let allvis = index_only.then(|| ctx.all_visible_fraction(table));
        let mut cost = index_cost(
            table,
            ix,
            ix_frac,
            tuples,
            pages,
            sel,
            m.nscans,
            m.used.len(),
            filter_ops,
            allvis,
        );
        if !settings.enable_indexscan {
            cost.startup += DISABLE_COST;
            cost.total += DISABLE_COST;
        }
        let spec = IndexScan {
            table: table.clone(),
            alias: alias.clone(),
            index: ix.clone(),
            columns: columns.clone(),
            with_tid: *with_tid,
            bounds: m.bounds,
            index_cond: m.cond,
            filter: conjunction(rest),
            backward,
            index_only,
            limit_hint: None,
            outer_names: Vec::new(),
            runtime: m.runtime,
        };
        out.push(Candidate {
            plan: Plan {
                node: Node::IndexScan(Box::new(spec)),
                fields: scan.fields.clone(),
                rows,
            },
            cost,
        });
    }
    out
}

/// Whether index `ix` may serve a scan of the table columns `columns`
/// filtered by the conjuncts `parts`: a full index always, a partial one
/// when `parts` imply its predicate (PostgreSQL's `check_index_predicates`).
/// Returns the positions of the conjuncts the predicate implies in turn,
/// which the scan need not test again (`create_indexscan_plan`), and the
/// predicate over the scan's columns.
pub(super) fn partial_usable(
    ix: &IndexDef,
    columns: &[usize],
    parts: &[Expr],
) -> Option<(Vec<usize>, Option<Expr>)> {
    let Some(p) = &ix.predicate else {
        return Some((Vec::new(), None));
    };
    let pred = indexpred::over_scan(&p.expr, columns);
    if !indexpred::implied_by(&pred, parts) {
        return None;
    }
    let whole = [pred];
    let implied = (0..parts.len())
        .filter(|&i| indexpred::implied_by(&parts[i], &whole))
        .collect();
    let [pred] = whole;
    Some((implied, Some(pred)))
}

/// The fraction of the table the index conditions select.
pub(super) fn index_selectivity(
    m: &Matched,
    quals: &[Option<Qual>],
    parts: &[Expr],
    origins: &[Option<estimate::ColumnRef>],
) -> f64 {
    let mut sel = 1.0;
    let mut plain = Vec::new();
    for &i in &m.used {
        match (&quals[i], &parts[i].kind) {
            (
                Some(Qual {
                    kind: QualKind::In(_),
                    ..
                }),
                ExprKind::InList(a, list, _),
            ) => {
                let s: f64 = list
                    .iter()
                    .map(|item| {
                        let eq = Expr {
                            kind: ExprKind::Binary(BinaryOp::Eq, a.clone(), Box::new(item.clone())),
                            ty: DataType::Bool,
                        };
                        estimate::selectivity(&eq, origins)
                    })
                    .sum();
                sel *= s.min(1.0);
            }
            _ => plain.push(parts[i].clone()),
        }
    }
    if let Some(e) = conjunction(plain) {
        sel *= estimate::selectivity(&e, origins);
    }
    sel.clamp(0.0, 1.0)
}

/// Whether index `ix` scanned within `bounds` returns rows ordered by
/// `keys` (table column, descending, nulls first): forward (`false`),
/// backward (`true`) or not at all. Key columns fixed by an equality may
/// be skipped or named.
fn order_direction(
    ix: &IndexDef,
    bounds: &IndexBounds,
    keys: &[(usize, bool, bool)],
) -> Option<bool> {
    let fixed = |p: usize| bounds.eq.get(p).is_some_and(|v| v.len() == 1);
    let fixed_col = |c: usize| {
        ix.columns
            .iter()
            .enumerate()
            .any(|(p, k)| k.column == c && fixed(p))
    };
    let mut p = 0;
    let mut dir: Option<bool> = None;
    for &(col, desc, nulls_first) in keys {
        while p < ix.columns.len() && ix.columns[p].column != col && fixed(p) {
            p += 1;
        }
        if p < ix.columns.len() && ix.columns[p].column == col {
            let k = &ix.columns[p];
            let this = if k.desc == desc && k.nulls_first == nulls_first {
                false
            } else if k.desc != desc && k.nulls_first != nulls_first {
                true
            } else {
                return None;
            };
            if dir.is_some_and(|d| d != this) {
                return None;
            }
            dir = Some(this);
            p += 1;
        } else if !fixed_col(col) {
            return None;
        }
    }
    Some(dir.unwrap_or(false))
}

/// The cheapest candidate for a scan's conditions alone, if it beats the
/// sequential scan.
fn choose(scan: &Plan, needed: Option<&[usize]>, ctx: &dyn PlanContext) -> Option<Plan> {
    let mut all = candidates(scan, needed, None, ctx);
    all.extend(super::bitmappath::candidates(scan, ctx));
    let best = all
        .into_iter()
        .min_by(|a, b| a.cost.total.total_cmp(&b.cost.total))?;
    (best.cost.total < seq_scan_cost(scan, ctx)).then_some(best.plan)
}

fn seq_scan_cost(scan: &Plan, ctx: &dyn PlanContext) -> f64 {
    let Node::SeqScan { table, filter, .. } = &scan.node else {
        return f64::INFINITY;
    };
    let pages = planned_pages(table, ctx);
    let tuples = table_rows(table, pages, scan.rows);
    let ops = filter.as_ref().map_or(0.0, |f| {
        let mut parts = Vec::new();
        conjuncts(f.clone(), &mut parts);
        parts.iter().map(super::quals::cost).sum()
    });
    let mut c = seq_cost(pages, tuples, ops);
    if !ctx.settings().enable_seqscan {
        c += DISABLE_COST;
    }
    c
}

/// [`choose`] for a scan whose consumer reads only the output columns
/// `used`: an index-only scan drops the others. Returns the scan and the
/// map from old to new column positions.
fn choose_pruned(scan: &Plan, used: &[usize], ctx: &dyn PlanContext) -> Option<(Plan, Vec<usize>)> {
    let mut p = choose(scan, Some(used), ctx)?;
    let n = p.fields.len();
    let identity: Vec<usize> = (0..n).collect();
    if matches!(p.node, Node::BitmapHeapScan(_)) {
        let map = super::bitmappath::prune(&mut p, used);
        return Some((p, map));
    }
    let Node::IndexScan(spec) = &mut p.node else {
        return Some((p, identity));
    };
    if !spec.index_only {
        return Some((p, identity));
    }
    let mut keep: Vec<usize> = used.to_vec();
    if let Some(f) = &spec.filter {
        columns_used(f, &mut keep);
    }
    keep.sort_unstable();
    keep.dedup();
    let mut map = vec![usize::MAX; n];
    for (new, &old) in keep.iter().enumerate() {
        map[old] = new;
    }
    if let Some(f) = &mut spec.filter {
        remap_columns(f, &|c| map[c]);
    }
    // The index conditions name pruned columns: print them over the old
    // columns, kept as names for EXPLAIN.
    let old_names: Vec<String> = p.fields.iter().map(|f| f.name.clone()).collect();
    let k = keep.len();
    for c in &mut spec.index_cond {
        remap_columns(c, &|i| if map[i] == usize::MAX { k + i } else { map[i] });
    }
    spec.outer_names = old_names;
    spec.columns = keep.iter().map(|&i| spec.columns[i]).collect();
    p.fields = keep.iter().map(|&i| p.fields[i].clone()).collect();
    Some((p, map))
}

/// The scan under `plan` through projections of plain columns, with the
/// map from `plan`'s columns to the scan's (None where not a column).
fn scan_below(plan: &mut Plan) -> Option<(&mut Plan, Vec<Option<usize>>)> {
    if matches!(plan.node, Node::SeqScan { .. } | Node::IndexScan(_)) {
        let n = plan.fields.len();
        return Some((plan, (0..n).map(Some).collect()));
    }
    match &mut plan.node {
        Node::Project { input, exprs } => {
            let outer: Vec<Option<usize>> = exprs
                .iter()
                .map(|e| match e.kind {
                    ExprKind::Column(i) => Some(i),
                    _ => None,
                })
                .collect();
            let (scan, inner) = scan_below(input)?;
            let map = outer
                .into_iter()
                .map(|o| o.and_then(|i| inner.get(i).copied().flatten()))
                .collect();
            Some((scan, map))
        }
        _ => None,
    }
}

/// Sort keys as (table column, descending, nulls first) of the scan below
/// `input`, when every key is a scan column.
fn sort_columns(input: &mut Plan, keys: &[SortKey]) -> Option<Vec<(usize, bool, bool)>> {
    let (scan, map) = scan_below(input)?;
    let columns = match &scan.node {
        Node::SeqScan { columns, .. } => columns,
        Node::IndexScan(s) => &s.columns,
        _ => return None,
    };
    keys.iter()
        .map(|k| {
            let c = map.get(k.column).copied().flatten()?;
            Some((columns[c], k.descending, k.nulls_first))
        })
        .collect()
}

/// Whether the index scan under a Sort's input returns its keys' order
/// (turning it backward when that is the order wanted: an index scan
/// returns exactly the reverse order backward).
fn index_order_matches(input: &mut Plan, keys: &[SortKey]) -> bool {
    let Some(cols) = sort_columns(input, keys) else {
        return false;
    };
    let Some((scan, _)) = scan_below(input) else {
        return false;
    };
    let Node::IndexScan(s) = &mut scan.node else {
        return false;
    };
    match order_direction(&s.index, &s.bounds, &cols) {
        Some(b) => {
            s.backward = b;
            true
        }
        None => false,
    }
}

/// Under `LIMIT want`: a Sort over a sequential scan may be replaced by a
/// scan in index order when reading `want` rows that way costs less than
/// the whole scan and a top-N sort.
fn ordered_under_limit(input: &mut Plan, want: u64, ctx: &dyn PlanContext) {
    if let Node::Project { input, .. } = &mut input.node {
        return ordered_under_limit(input, want, ctx);
    }
    let Node::Sort { input: below, keys } = &mut input.node else {
        return;
    };
    let Some(cols) = sort_columns(below, keys) else {
        return;
    };
    let Some((scan, _)) = scan_below(below) else {
        return;
    };
    if !is_seq_scan(scan) {
        return;
    }
    let rows = scan.rows.max(1.0);
    let n = rows;
    let sort = 2.0 * CPU_OPERATOR_COST * n * (2.0 * want as f64).max(2.0).log2();
    let seq = seq_scan_cost(scan, ctx) + sort;
    let frac = (want as f64 / rows).min(1.0);
    let best = candidates(scan, None, Some(&cols), ctx)
        .into_iter()
        .map(|c| {
            let limited = c.cost.startup + frac * (c.cost.total - c.cost.startup);
            (limited, c.plan)
        })
        .min_by(|a, b| a.0.total_cmp(&b.0));
    if let Some((cost, plan)) = best {
        if cost < seq {
            *scan = plan;
            // The Sort goes: its input now comes in order.
            let Node::Sort { input: below, .. } = std::mem::replace(&mut input.node, dummy_node())
            else {
                unreachable!("matched above")
            };
            *input = *below;
        }
    }
}

/// A hash join whose inner side is a scan with an index on the join key
/// becomes a nested loop of index probes when the outer side's rows times a
/// probe's cost is below reading and hashing the inner side.
fn index_nest_loop(plan: &mut Plan, ctx: &dyn PlanContext) {
    let Node::HashJoin {
        left,
        right,
        kind,
        left_keys,
        right_keys,
        ..
    } = &plan.node
    else {
        return;
    };
    if !matches!(kind, JoinKind::Inner | JoinKind::Left) || left_keys.len() != 1 {
        return;
    }
    let Node::SeqScan {
        table,
        columns,
        with_tid: false,
        filter,
        ..
    } = &right.node
    else {
        return;
    };
    let mut parts = Vec::new();
    if let Some(f) = filter {
        conjuncts(f.clone(), &mut parts);
    }
    let Some(col) = (match right_keys[0].kind {
        ExprKind::Column(i) => Some(columns[i]),
        _ => None,
    }) else {
        return;
    };
    let col_ty = table.columns[col].ty;
    let key_ty = left_keys[0].ty;
    let int = |t: &DataType| matches!(t, DataType::Int2 | DataType::Int4 | DataType::Int8);
    if !(key_ty == col_ty || (int(&key_ty) && int(&col_ty))) || matches!(col_ty, DataType::Char(_))
    {
        return;
    }
    let Some(ix) = table
        .indexes
        .iter()
        .find(|ix| ix.columns[0].column == col && partial_usable(ix, columns, &parts).is_some())
        .cloned()
    else {
        return;
    };
    // enable_nestloop = off: the hash join it would replace is cheaper.
    if !ctx.settings().enable_indexscan || !ctx.settings().enable_nestloop {
        return;
    }
    // Hash join: read the inner side whole; nested loop: one probe per
    // outer row.
    let pages = planned_pages(table, ctx);
    let tuples = table_rows(table, pages, right.rows);
    let per_key = estimate::join_selectivity(
        left_keys,
        right_keys,
        &column_origins(left),
        &column_origins(right),
    )
    .map_or(1.0 / tuples, |s| s.max(1.0 / tuples));
    let probe = index_cost(table, &ix, 1.0, tuples, pages, per_key, 1, 1, 0.0, None).total;
    let hash = seq_scan_cost(right, ctx) + tuples * CPU_OPERATOR_COST * 2.0;
    if left.rows * probe >= hash {
        return;
    }
    let Node::HashJoin {
        left,
        right,
        kind,
        mut left_keys,
        residual,
        ..
    } = std::mem::replace(&mut plan.node, dummy_node())
    else {
        unreachable!("matched above")
    };
    let Node::SeqScan {
        table,
        alias,
        columns,
        filter,
        ..
    } = right.node
    else {
        unreachable!("matched above")
    };
    let spec = IndexScan {
        table: table.clone(),
        alias,
        index: ix,
        columns,
        with_tid: false,
        bounds: IndexBounds {
            eq: vec![Vec::new()],
            lower: None,
            upper: None,
        },
        index_cond: Vec::new(),
        filter,
        backward: false,
        index_only: false,
        limit_hint: None,
        outer_names: Vec::new(),
        runtime: Vec::new(),
    };
    plan.node = Node::IndexNestLoop {
        left,
        right: Box::new(Plan {
            node: Node::IndexScan(Box::new(spec)),
            fields: right.fields,
            rows: (per_key * tuples).max(1.0),
        }),
        kind,
        left_key: left_keys.remove(0),
        residual,
    };
}
