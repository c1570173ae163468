//! Bitmap paths: a scan's indexable conditions answered through a bitmap
//! of tuple ids, the heap then read in block order (PostgreSQL's
//! `indxpath.c` bitmap paths, `choose_bitmap_and`, `generate_bitmap_or_paths`
//! and `costsize.c`'s `cost_bitmap_heap_scan`).
//!
//! For one sequential scan with conjuncts, [`candidates`] builds:
//!
//! - one Bitmap Index Scan per index the conjuncts match ([`indexpath`]'s
//!   matching: equalities, `IN`, `IS NULL`, then one range), a partial
//!   index only where the conjuncts imply its predicate;
//! - for a conjunct `x OR y OR ...` whose every arm is answered whole by
//!   one index (all of the arm's conjuncts become its index conditions), a
//!   BitmapOr of the arms' scans (`a = 1 OR a = 7` on one index too);
//! - a BitmapAnd of such paths on different conjuncts where it lowers the
//!   heap scan's cost (greedily from each start, cheapest first, as
//!   `choose_bitmap_and`).
//!
//! Each is costed as `cost_bitmap_heap_scan`: the bitmap tree's cost
//! (`cost_bitmap_tree_node`: an index path's own cost plus 0.1 operator per
//! row; AND and OR add 100 operators per extra input that is not an index
//! scan), then the heap pages Mackert and Lohman's formula gives for the
//! tuples the bitmap selects, at a per-page cost between random and
//! sequential by the square root of the fraction of the table read, lossy
//! pages (past `work_mem`) reading their every tuple, and every tuple's
//! conditions. `enable_bitmapscan = off` adds `disable_cost`, not a ban.
//!
//! The conjuncts a bitmap stands for become the scan's `Recheck Cond`
//! (tested only on lossy pages), the others its filter; conjuncts a
//! partial index's predicate implies are dropped, as for index scans.

use super::estimate::{self, column_origins};
use super::indexpath::{
    index_part_cost, index_selectivity, match_index, partial_usable, qual_of, table_rows,
    Candidate, Cost, Qual, CPU_OPERATOR_COST, CPU_TUPLE_COST, DISABLE_COST, RANDOM_PAGE_COST,
    SEQ_PAGE_COST,
};
use super::quals::{conjunction, conjuncts};
use super::select::{columns_used, remap_columns};
use super::{Node, Plan, PlanContext};
use std::sync::Arc;

use crate::catalog::TableDef;
use crate::exec::tidbitmap::max_entries;
use crate::nodes::expr::{Expr, ExprKind};
use crate::nodes::plannodes::{BitmapHeapScan, BitmapIndexScan, BitmapQual};

/// A bitmap tree in the making, with what it costs and selects.
#[derive(Clone)]
struct BPath {
    qual: BitmapQual,
    /// `cost_bitmap_tree_node`'s cost.
    cost: f64,
    /// Fraction of the table's tuples it selects.
    sel: f64,
    /// Whether the tree is a single index scan (for AND / OR costing).
    is_index: bool,
    /// Positions of the conjuncts it answers, in recheck order.
    covers: Vec<usize>,
    /// Conjuncts a partial index's predicate implies (neither rechecked
    /// nor filtered).
    implied: Vec<usize>,
}

/// What the costing of one scan's paths needs.
struct Scan<'a> {
    table: &'a Arc<TableDef>,
    columns: &'a [usize],
    parts: Vec<Expr>,
    quals: Vec<Option<Qual>>,
    origins: Vec<Option<estimate::ColumnRef>>,
    pages: f64,
    tuples: f64,
    /// The scan's estimated output rows (an index path's `rows`).
    rows: f64,
    /// Operators per tuple of all the scan's conditions.
    qual_ops: f64,
    work_mem: usize,
}

/// The candidate bitmap heap scans of the sequential scan `scan`.
pub(super) fn candidates(scan: &Plan, ctx: &dyn PlanContext) -> Vec<Candidate> {
    let Node::SeqScan {
        table,
        alias,
        columns,
        with_tid,
        filter: Some(filter),
    } = &scan.node
    else {
        return Vec::new();
    };
    let mut parts = Vec::new();
    conjuncts(filter.clone(), &mut parts);
    let pages = super::indexpath::planned_pages(table, ctx);
    let s = Scan {
        table,
        columns,
        quals: parts.iter().map(|p| qual_of(p, columns, table)).collect(),
        qual_ops: parts.iter().map(super::quals::cost).sum(),
        parts,
        origins: column_origins(scan),
        pages,
        tuples: table_rows(table, pages, scan.rows),
        rows: scan.rows.max(1.0),
        work_mem: ctx.settings().work_mem_kb.max(64) as usize * 1024,
    };
    let mut paths = index_paths(&s);
    paths.extend(or_paths(&s));
    if paths.is_empty() {
        return Vec::new();
    }
    let mut trees = paths.clone();
    if let Some(and) = best_and(&s, &paths) {
        trees.push(and);
    }
    let disabled = !ctx.settings().enable_bitmapscan;
    trees
        .into_iter()
        .map(|p| {
            let mut cost = heap_cost(&s, &p);
            if disabled {
                cost.startup += DISABLE_COST;
                cost.total += DISABLE_COST;
            }
            let plan = make_plan(&s, scan, alias, *with_tid, p);
            Candidate { plan, cost }
        })
        .collect()
}

/// One bitmap index path per index matching the scan's conjuncts.
fn index_paths(s: &Scan<'_>) -> Vec<BPath> {
    let mut out = Vec::new();
    for ix in &s.table.indexes {
        let Some((implied, pred)) = partial_usable(ix, s.columns, &s.parts) else {
            continue;
        };
        let own: Vec<Option<Qual>> = (0..s.quals.len())
            .map(|i| {
                (!implied.contains(&i))
                    .then(|| s.quals[i].clone())
                    .flatten()
            })
            .collect();
        let m = match_index(ix, &own);
        if m.used.is_empty() {
            continue;
        }
        let mut sel = index_selectivity(&m, &own, &s.parts, &s.origins);
        let mut ix_frac = 1.0;
        if let Some(p) = &pred {
            ix_frac = estimate::selectivity(p, &s.origins).clamp(0.0, 1.0);
            let used: Vec<Expr> = m.used.iter().map(|&i| s.parts[i].clone()).collect();
            if !super::indexpred::implied_by(p, &used) {
                sel *= ix_frac;
            }
        }
        let ix_cost = index_part_cost(s.table, ix, ix_frac, s.tuples, sel, m.nscans, m.used.len());
        let mut cond = m.cond.clone();
        for c in &mut cond {
            remap_columns(c, &|i| s.columns[i]);
        }
        let rows = (sel * s.tuples).max(1.0);
        out.push(BPath {
            qual: BitmapQual::Index(Box::new(BitmapIndexScan {
                index: ix.clone(),
                bounds: m.bounds,
                index_cond: cond,
                rows,
            })),
            // The scan's rows, as PostgreSQL's index path has them (the
            // binder's estimate knows no IN list: never above the index's).
            cost: ix_cost.total + 0.1 * CPU_OPERATOR_COST * s.rows.min(rows),
            sel,
            is_index: true,
            covers: m.used,
            implied,
        });
    }
    out
}

/// The arms of an OR, flattened.
fn or_arms(e: &Expr, out: &mut Vec<Expr>) {
    match &e.kind {
        ExprKind::Or(a, b) => {
            or_arms(a, out);
            or_arms(b, out);
        }
        _ => out.push(e.clone()),
    }
}

/// A BitmapOr per OR conjunct whose every arm one index answers whole.
fn or_paths(s: &Scan<'_>) -> Vec<BPath> {
    let mut out = Vec::new();
    for (i, part) in s.parts.iter().enumerate() {
        if !matches!(part.kind, ExprKind::Or(..)) {
            continue;
        }
        let mut arms = Vec::new();
        or_arms(part, &mut arms);
        let mut subs = Vec::new();
        for arm in &arms {
            let mut arm_parts = Vec::new();
            conjuncts(arm.clone(), &mut arm_parts);
            let sub = Scan {
                table: s.table,
                columns: s.columns,
                quals: arm_parts
                    .iter()
                    .map(|p| qual_of(p, s.columns, s.table))
                    .collect(),
                qual_ops: s.qual_ops,
                origins: s.origins.clone(),
                pages: s.pages,
                tuples: s.tuples,
                rows: s.rows,
                work_mem: s.work_mem,
                parts: arm_parts,
            };
            let n = sub.parts.len();
            let best = index_paths(&sub)
                .into_iter()
                .filter(|p| p.covers.len() + p.implied.len() == n)
                .min_by(|a, b| a.cost.total_cmp(&b.cost));
            match best {
                Some(p) => subs.push(p),
                None => break,
            }
        }
        if subs.len() != arms.len() {
            continue;
        }
        let mut cost = 0.0;
        let mut sel = 0.0;
        for (k, p) in subs.iter().enumerate() {
            cost += p.cost;
            sel += p.sel;
            if k > 0 && !p.is_index {
                cost += 100.0 * CPU_OPERATOR_COST;
            }
        }
        out.push(BPath {
            qual: BitmapQual::Or(subs.into_iter().map(|p| p.qual).collect()),
            cost,
            sel: sel.min(1.0),
            is_index: false,
            covers: vec![i],
            implied: Vec::new(),
        });
    }
    out
}

/// The cheapest BitmapAnd of paths answering different conjuncts, if one
/// beats every single path (PostgreSQL's `choose_bitmap_and`, greedy from
/// each start).
fn best_and(s: &Scan<'_>, paths: &[BPath]) -> Option<BPath> {
    let mut order: Vec<&BPath> = paths.iter().collect();
    order.sort_by(|a, b| heap_cost(s, a).total.total_cmp(&heap_cost(s, b).total));
    let mut best: Option<(f64, BPath)> = None;
    for start in 0..order.len() {
        let mut inputs = vec![order[start].clone()];
        let mut cur = and_of(&inputs);
        let mut cur_cost = heap_cost(s, &cur).total;
        for (k, p) in order.iter().enumerate() {
            if k == start
                || inputs
                    .iter()
                    .any(|q| q.covers.iter().any(|c| p.covers.contains(c)))
            {
                continue;
            }
            let mut tried = inputs.clone();
            tried.push((*p).clone());
            let t = and_of(&tried);
            let c = heap_cost(s, &t).total;
            if c < cur_cost {
                (inputs, cur, cur_cost) = (tried, t, c);
            }
        }
        if inputs.len() > 1 && best.as_ref().map_or(true, |(b, _)| cur_cost < *b) {
            best = Some((cur_cost, cur));
        }
    }
    best.map(|(_, p)| p)
}

/// The BitmapAnd of `inputs` (`cost_bitmap_and_node`).
fn and_of(inputs: &[BPath]) -> BPath {
    let mut cost = 0.0;
    let mut sel = 1.0;
    let mut covers = Vec::new();
    let mut implied = Vec::new();
    for (k, p) in inputs.iter().enumerate() {
        cost += p.cost;
        sel *= p.sel;
        if k > 0 {
            cost += 100.0 * CPU_OPERATOR_COST;
        }
        covers.extend(p.covers.iter().copied());
        implied.extend(p.implied.iter().copied());
    }
    if inputs.len() == 1 {
        return inputs[0].clone();
    }
    BPath {
        qual: BitmapQual::And(inputs.iter().map(|p| p.qual.clone()).collect()),
        cost,
        sel,
        is_index: false,
        covers,
        implied,
    }
}

/// `cost_bitmap_heap_scan` of a bitmap tree.
fn heap_cost(s: &Scan<'_>, p: &BPath) -> Cost {
    let t = s.pages.max(1.0);
    let mut tuples = (p.sel * s.tuples).max(1.0).round();
    let fetched = 2.0 * t * tuples / (2.0 * t + tuples);
    let pages = if fetched >= t { t } else { fetched.ceil() };
    let maxentries = max_entries(s.work_mem) as f64;
    if maxentries < pages {
        let lossy = (pages - maxentries / 2.0).max(0.0);
        let exact = pages - lossy;
        if lossy > 0.0 {
            tuples = (p.sel * (exact / pages) * s.tuples + (lossy / pages) * s.tuples)
                .max(1.0)
                .round();
        }
    }
    let per_page = if pages >= 2.0 {
        RANDOM_PAGE_COST - (RANDOM_PAGE_COST - SEQ_PAGE_COST) * (pages / t).sqrt()
    } else {
        RANDOM_PAGE_COST
    };
    let cpu = tuples * (CPU_TUPLE_COST + s.qual_ops * CPU_OPERATOR_COST);
    Cost {
        startup: p.cost,
        total: p.cost + pages * per_page + cpu,
    }
}

/// The Bitmap Heap Scan plan of path `p` over the scan's columns.
fn make_plan(s: &Scan<'_>, scan: &Plan, alias: &str, with_tid: bool, p: BPath) -> Plan {
    let recheck_parts: Vec<Expr> = p.covers.iter().map(|&i| s.parts[i].clone()).collect();
    let rest: Vec<Expr> = (0..s.parts.len())
        .filter(|i| !p.covers.contains(i) && !p.implied.contains(i))
        .map(|i| s.parts[i].clone())
        .collect();
    let rest_sel = conjunction(rest.clone()).map_or(1.0, |e| estimate::selectivity(&e, &s.origins));
    let rows = (s.tuples * p.sel * rest_sel).max(1.0);
    let (recheck, recheck_columns, recheck_shown) = match conjunction(recheck_parts) {
        None => (None, Vec::new(), None),
        Some(e) => {
            let mut used = Vec::new();
            columns_used(&e, &mut used);
            used.sort_unstable();
            used.dedup();
            let mut own = e.clone();
            remap_columns(&mut own, &|c| {
                used.iter().position(|u| *u == c).unwrap_or(0)
            });
            let mut shown = e;
            remap_columns(&mut shown, &|c| s.columns[c]);
            let cols = used.iter().map(|&c| s.columns[c]).collect();
            (Some(own), cols, Some(shown))
        }
    };
    let spec = BitmapHeapScan {
        table: s.table.clone(),
        alias: alias.to_string(),
        columns: s.columns.to_vec(),
        with_tid,
        bitmap: p.qual,
        recheck,
        recheck_columns,
        recheck_shown,
        filter: conjunction(rest),
    };
    Plan {
        node: Node::BitmapHeapScan(Box::new(spec)),
        fields: scan.fields.clone(),
        rows,
    }
}

/// Drops the output columns of a bitmap heap scan `plan` that neither its
/// consumer (`used`) nor its filter reads; returns the map from old to new
/// column positions (`usize::MAX`: dropped).
pub(super) fn prune(plan: &mut Plan, used: &[usize]) -> Vec<usize> {
    let n = plan.fields.len();
    let Node::BitmapHeapScan(spec) = &mut plan.node else {
        return (0..n).collect();
    };
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
    spec.columns = keep.iter().map(|&i| spec.columns[i]).collect();
    plan.fields = keep.iter().map(|&i| plan.fields[i].clone()).collect();
    map
}
