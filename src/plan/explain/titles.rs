//! Each node's title (`Index Only Scan Backward using i on t x`, `Hash
//! Left Join`) and its own detail lines (`Index Cond:`, `Hash Cond:`,
//! `Sort Key:`, `Filter:`), as PostgreSQL's `ExplainNode` prints them.
//!
//! Invariants: a title never carries indentation or estimates (the caller
//! adds both); detail lines come in PostgreSQL's order for the node and
//! name columns as [`super::columns`] does; Project and Filter nodes never
//! reach here (they fold into the node below).

use super::analyze::removed_line;
use super::bitmap::bitmap_heap_title;
use super::columns::{aggregate_title, key_columns, output_columns, Par};
use super::deparse::deparse;
use super::Explainer;
use crate::catalog::TableDef;
use crate::nodes::expr::{Expr, ExprKind};
use crate::plan::{JoinKind, Node, Plan, TableFunc};
use crate::types::{BinaryOp, DataType};

/// A node's title (`Seq Scan on t`) and its own detail lines (keys,
/// conditions, filters).
pub(super) fn title_and_details(
    cx: &Explainer<'_>,
    plan: &Plan,
    my_id: usize,
    par: Par,
) -> (String, Vec<String>) {
    match &plan.node {
        Node::SeqScan {
            table,
            alias,
            filter,
            ..
        } => seq_scan_title(cx, plan, my_id, par, table, alias, filter.as_ref()),
        Node::IndexScan(spec) => index_scan_title(cx, plan, my_id, spec),
        Node::BitmapHeapScan(spec) => bitmap_heap_title(cx, plan, my_id, spec),
        Node::IndexNestLoop { .. } | Node::HashJoin { .. } | Node::NestedLoop { .. } => {
            join_title(plan, par)
        }
        Node::Lateral { kind, .. } => (
            if *kind == JoinKind::Left {
                "Nested Loop Left Join".into()
            } else {
                "Nested Loop".into()
            },
            vec![],
        ),
        // PostgreSQL plans a one-row VALUES as a Result too.
        Node::Values { rows } if plan.fields.is_empty() || rows.len() == 1 => {
            ("Result".into(), vec![])
        }
        Node::Values { .. } => ("Values Scan on \"*VALUES*\"".into(), vec![]),
        Node::Function { name, func, alias } => match func {
            TableFunc::Rows(_)
            | TableFunc::SeriesInt { .. }
            | TableFunc::SeriesTimestamp { .. }
            | TableFunc::Call { .. } => {
                let mut t = format!("Function Scan on {name}");
                if let Some(a) = alias {
                    t.push(' ');
                    t.push_str(a);
                }
                (t, vec![])
            }
        },
        Node::Aggregate { input, group, aggs } => {
            let (t, mut d) = aggregate_title(plan, par.qualify);
            // Not with COSTS OFF: that output is PostgreSQL's.
            if cx.flags.costs
                && cx.flags.summaries
                && crate::exec::fastpath::summaries::usable(input, group, aggs)
            {
                d.push("Page Summaries: all-visible pages".into());
            }
            (
                if par.partial {
                    format!("Partial {t}")
                } else {
                    t
                },
                d,
            )
        }
        Node::GroupAggregate { .. } => aggregate_title(plan, par.qualify),
        Node::Gather {
            workers,
            finalize: false,
            ..
        } => ("Gather".into(), gather_workers(cx, my_id, *workers)),
        Node::Gather { input, .. } => {
            let (t, d) = aggregate_title(input, par.qualify);
            (format!("Finalize {t}"), d)
        }
        Node::Distinct { input } => (
            "HashAggregate".into(),
            vec![format!(
                "Group Key: {}",
                key_columns(input, par.qualify, false).join(", ")
            )],
        ),
        Node::Sort { input, keys } => {
            let n = key_columns(input, par.qualify, true);
            let ks: Vec<String> = keys
                .iter()
                .map(|k| {
                    let mut s = n[k.column].clone();
                    if k.descending {
                        s.push_str(" DESC");
                    }
                    if k.nulls_first != k.descending {
                        s.push_str(if k.nulls_first {
                            " NULLS FIRST"
                        } else {
                            " NULLS LAST"
                        });
                    }
                    s
                })
                .collect();
            ("Sort".into(), vec![format!("Sort Key: {}", ks.join(", "))])
        }
        Node::Limit { .. } | Node::LimitTies { .. } => ("Limit".into(), vec![]),
        Node::Unique { .. } => ("Unique".into(), vec![]),
        Node::WindowAgg { .. } => ("WindowAgg".into(), vec![]),
        Node::Append { .. } => ("Append".into(), vec![]),
        Node::CteScan { name, alias, .. } => (scan_on("CTE Scan", name, alias), vec![]),
        Node::RecursiveUnion { .. } => ("Recursive Union".into(), vec![]),
        Node::WorkTableScan { name, alias, .. } => (scan_on("WorkTable Scan", name, alias), vec![]),
        Node::SetOp { intersect, all, .. } => (
            format!(
                "HashSetOp {}{}",
                if *intersect { "Intersect" } else { "Except" },
                if *all { " All" } else { "" }
            ),
            vec![],
        ),
        Node::Project { .. } | Node::Filter { .. } => unreachable!("folded above"),
    }
}

/// A join node's title (`Hash Left Join`, `Nested Loop`) and its condition
/// lines.
pub(super) fn join_title(plan: &Plan, par: Par) -> (String, Vec<String>) {
    match &plan.node {
        // An index nested loop prints as PostgreSQL's Nested Loop over a
        // parameterized scan: the same title and join filter.
        Node::IndexNestLoop {
            left,
            right,
            kind,
            residual: condition,
            ..
        }
        | Node::NestedLoop {
            left,
            right,
            kind,
            condition,
        } => {
            let mut all = output_columns(left, par.qualify);
            all.extend(output_columns(right, par.qualify));
            (
                if *kind == JoinKind::Left {
                    "Nested Loop Left Join".into()
                } else {
                    "Nested Loop".into()
                },
                condition
                    .iter()
                    .map(|c| format!("Join Filter: {}", deparse(c, &all)))
                    .collect(),
            )
        }
        Node::HashJoin {
            left,
            right,
            kind,
            left_keys,
            right_keys,
            residual,
            ..
        } => {
            let kind_s = match kind {
                JoinKind::Inner => "",
                JoinKind::Left => " Left",
                JoinKind::Right => " Right",
                JoinKind::Full => " Full",
                JoinKind::Anti => " Anti",
            };
            let (ln, rn) = (
                output_columns(left, par.qualify),
                output_columns(right, par.qualify),
            );
            // The probe (outer) side's key first, as PostgreSQL switches
            // hash clauses to (outer = inner).
            let build_left = matches!(
                plan.node,
                Node::HashJoin {
                    build_left: true,
                    ..
                }
            );
            let conds: Vec<String> = left_keys
                .iter()
                .zip(right_keys)
                .map(|(l, r)| {
                    let (l, r) = (deparse(l, &ln), deparse(r, &rn));
                    if build_left {
                        format!("({r} = {l})")
                    } else {
                        format!("({l} = {r})")
                    }
                })
                .collect();
            let mut d = vec![format!("Hash Cond: {}", conds.join(" AND "))];
            if let Some(r) = residual {
                let mut all = ln.clone();
                all.extend(rn);
                d.push(format!("Join Filter: {}", deparse(r, &all)));
            }
            (format!("Hash{kind_s} Join"), d)
        }
        other => unreachable!("not a join: {other:?}"),
    }
}

/// A sequential scan's title (`Parallel Seq Scan on t x`) and filter lines.
pub(super) fn seq_scan_title(
    cx: &Explainer<'_>,
    plan: &Plan,
    my_id: usize,
    par: Par,
    table: &TableDef,
    alias: &str,
    filter: Option<&Expr>,
) -> (String, Vec<String>) {
    let parallel = std::ptr::eq(plan, par.scan as *const Plan);
    let mut t = format!(
        "{}Seq Scan on {}",
        if parallel { "Parallel " } else { "" },
        table.name
    );
    if alias != table.name {
        t.push(' ');
        t.push_str(alias);
    }
    // A scan's own filter names its columns bare, as PostgreSQL's
    // scan quals do.
    let cols = output_columns(plan, cx.flags.verbose);
    let mut d: Vec<String> = filter
        .iter()
        .map(|f| format!("Filter: {}", deparse(f, &cols)))
        .collect();
    if filter.is_some() {
        d.extend(removed_line(cx.flags, cx.stats, my_id));
    }
    // Not with COSTS OFF: that output is PostgreSQL's.
    let counts = cx.stats.filter(|_| cx.flags.analyze && cx.flags.costs);
    if let Some(c) = counts.and_then(|s| s.get(my_id)?.summaries) {
        d.push(format!(
            "Summaries: answered={} skipped={} scanned={} windows={}",
            c.answered, c.skipped, c.scanned, c.windows
        ));
    }
    if let Some((hits, built)) = counts.and_then(|s| s.get(my_id)?.packed) {
        d.push(format!("Packed Cache: hits={hits} built={built}"));
    }
    (t, d)
}

/// An index scan's title (`Index Only Scan Backward using i on t x`) and
/// its `Index Cond:`, `Filter:` and, with ANALYZE, `Heap Fetches:` lines.
pub(super) fn index_scan_title(
    cx: &Explainer<'_>,
    plan: &Plan,
    my_id: usize,
    spec: &crate::nodes::plannodes::IndexScan,
) -> (String, Vec<String>) {
    let mut t = format!(
        "Index {}Scan{} using {} on {}",
        if spec.index_only { "Only " } else { "" },
        if spec.backward { " Backward" } else { "" },
        spec.index.name,
        spec.table.name
    );
    if spec.alias != spec.table.name {
        t.push(' ');
        t.push_str(&spec.alias);
    }
    let mut cols = output_columns(plan, cx.flags.verbose);
    let mut d = Vec::new();
    if !spec.index_cond.is_empty() {
        cols.extend(spec.outer_names.iter().cloned());
        let conds: Vec<String> = spec.index_cond.iter().map(|c| deparse(c, &cols)).collect();
        d.push(if conds.len() == 1 {
            format!("Index Cond: {}", conds[0])
        } else {
            format!("Index Cond: ({})", conds.join(" AND "))
        });
    }
    if let Some(f) = &spec.filter {
        d.push(format!("Filter: {}", deparse(f, &cols)));
        d.extend(removed_line(cx.flags, cx.stats, my_id));
    }
    if spec.index_only {
        if let Some(st) = cx
            .stats
            .filter(|_| cx.flags.analyze)
            .and_then(|s| s.get(my_id))
        {
            let per = st.heap_fetches.unwrap_or(0) as f64 / st.loops.max(1) as f64;
            d.push(format!("Heap Fetches: {per:.0}"));
        }
    }
    (t, d)
}

/// The inner index scan of an index nested loop, its `Index Cond` naming
/// the outer value (`(id = d.mgr)`).
pub(super) fn parameterized_inner(plan: &Plan, qualify: bool) -> Plan {
    let Node::IndexNestLoop {
        left,
        right,
        left_key,
        ..
    } = &plan.node
    else {
        return plan.clone();
    };
    let mut inner = (**right).clone();
    if let Node::IndexScan(spec) = &mut inner.node {
        let n = right.fields.len();
        let key_col = spec.index.columns[0].column;
        if let Some(k) = spec.columns.iter().position(|&c| c == key_col) {
            let mut outer = left_key.clone();
            crate::plan::select::remap_columns(&mut outer, &|c| c + n);
            let ty = right.fields[k].ty;
            spec.index_cond.insert(
                0,
                Expr {
                    kind: ExprKind::Binary(
                        BinaryOp::Eq,
                        Box::new(Expr::column(k, ty)),
                        Box::new(outer),
                    ),
                    ty: DataType::Bool,
                },
            );
            spec.outer_names = output_columns(left, qualify);
        }
    }
    inner
}

/// `Title on name [alias]`, as PostgreSQL names a scan of a CTE.
pub(super) fn scan_on(title: &str, name: &str, alias: &str) -> String {
    if alias == name {
        format!("{title} on {name}")
    } else {
        format!("{title} on {name} {alias}")
    }
}

/// A plain Gather's worker lines (`Workers Launched` with ANALYZE).
pub(super) fn gather_workers(cx: &Explainer<'_>, my_id: usize, workers: usize) -> Vec<String> {
    let mut d = vec![format!("Workers Planned: {workers}")];
    if let (true, Some(s)) = (cx.flags.analyze, cx.stats) {
        if s.get(my_id).is_some_and(|g| g.calls > 0) {
            d.push(format!("Workers Launched: {workers}"));
        }
    }
    d
}
