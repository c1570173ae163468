//! The names EXPLAIN gives a plan's relations and columns: every scanned
//! relation its own alias (`et`, `et_1`), and every output column the name
//! PostgreSQL prints for it in conditions and keys (`a.bid`, `count(*)`,
//! `(sum(x))`).
//!
//! Invariants: a node's names are as many as its output fields, in field
//! order; a column that comes straight from a scan keeps its scan's name
//! through every node above it; nothing here prints a line.

use super::deparse::deparse;
use super::project_set;
use crate::nodes::expr::ExprKind;
use crate::plan::{Node, Plan};

/// Gives every scanned relation a name of its own, as PostgreSQL's EXPLAIN
/// does: the second scan of `et` (a self-join, both sides of a UNION)
/// is `et et_1`, and its columns `et_1.a`. Scans are named in plan order
/// (a join's left input first), which is the order they appear in the
/// query.
pub(super) fn unique_aliases(plan: &mut Plan, used: &mut std::collections::HashSet<String>) {
    // A CTE referenced twice is one CTE: its plan is named once.
    let first_cte = match &plan.node {
        Node::CteScan { input, .. } => match &input.node {
            Node::RecursiveUnion { worktable, .. } => used.insert(format!("\0cte {worktable}")),
            _ => true,
        },
        _ => true,
    };
    let alias = match &mut plan.node {
        Node::SeqScan { alias, .. } => Some(alias),
        Node::IndexScan(s) => Some(&mut s.alias),
        Node::BitmapHeapScan(s) => Some(&mut s.alias),
        Node::CteScan { alias, .. } | Node::WorkTableScan { alias, .. } => Some(alias),
        _ => None,
    };
    if let Some(alias) = alias {
        if !used.insert(alias.clone()) {
            let unique = (1..)
                .map(|n| format!("{alias}_{n}"))
                .find(|a| !used.contains(a))
                .expect("some suffix is free");
            used.insert(unique.clone());
            *alias = unique;
        }
    }
    if !first_cte {
        return;
    }
    for c in plan.children_mut() {
        unique_aliases(c, used);
    }
}

/// Whether `plan` is a scan (whose filter PostgreSQL prints unqualified).
pub(super) fn is_scan(plan: &Plan) -> bool {
    matches!(
        plan.node,
        Node::SeqScan { .. }
            | Node::IndexScan(_)
            | Node::BitmapHeapScan(_)
            | Node::Function { .. }
            | Node::CteScan { .. }
            | Node::WorkTableScan { .. }
    )
}

/// How many relations (tables, functions in FROM) `plan` reads.
pub(super) fn relations(plan: &Plan) -> usize {
    if let Some((input, _)) = project_set(plan) {
        return relations(input);
    }
    usize::from(is_scan(plan)) + plan.children().into_iter().map(relations).sum::<usize>()
}

/// The names EXPLAIN gives `plan`'s output columns: a column that comes
/// straight from a scan keeps its name wherever it travels (through
/// projections, filters, sorts, joins, grouping) — `alias.column` with
/// `qualify`; an aggregate's outputs are its group keys' expressions and
/// its calls (`count(*)`); every other column is its field name.
pub(super) fn output_columns(plan: &Plan, qualify: bool) -> Vec<String> {
    let grouping = match &plan.node {
        Node::Aggregate { input, group, aggs } => {
            Some((output_columns(input, qualify), group, aggs))
        }
        Node::GroupAggregate {
            input, group, aggs, ..
        } => Some((sorted_columns(input, qualify, false), group, aggs)),
        _ => None,
    };
    if let Some((inner, group, aggs)) = grouping {
        // A condition above the aggregate (HAVING) names its columns as
        // PostgreSQL does: the group key's expression, the aggregate call.
        let mut out: Vec<String> = group.iter().map(|g| deparse(g, &inner)).collect();
        out.extend(aggs.iter().map(|a| {
            let mut arg = match &a.arg {
                None => "*".to_string(),
                Some(x) if a.distinct => format!("DISTINCT {}", deparse(x, &inner)),
                Some(x) => deparse(x, &inner),
            };
            for x in &a.more_args {
                arg.push_str(", ");
                arg.push_str(&deparse(x, &inner));
            }
            for (k, o) in a.order.iter().enumerate() {
                arg.push_str(if k == 0 { " ORDER BY " } else { ", " });
                arg.push_str(&deparse(&o.expr, &inner));
                if o.descending {
                    arg.push_str(" DESC");
                }
                if o.nulls_first != o.descending {
                    arg.push_str(if o.nulls_first {
                        " NULLS FIRST"
                    } else {
                        " NULLS LAST"
                    });
                }
            }
            let call = format!("{}({arg})", a.func.name());
            match &a.filter {
                Some(f) => format!("{call} FILTER (WHERE {})", deparse(f, &inner)),
                None => call,
            }
        }));
        return out;
    }
    let mut out = names(plan);
    match &plan.node {
        Node::CteScan { alias, .. } | Node::WorkTableScan { alias, .. } if qualify => {
            out = plan
                .fields
                .iter()
                .map(|f| format!("{alias}.{}", f.name))
                .collect();
        }
        Node::SeqScan {
            table,
            alias,
            columns,
            ..
        } if qualify => {
            for (k, &c) in columns.iter().enumerate() {
                out[k] = format!("{alias}.{}", table.columns[c].name);
            }
        }
        Node::IndexScan(s) if qualify => {
            for (k, &c) in s.columns.iter().enumerate() {
                out[k] = format!("{}.{}", s.alias, s.table.columns[c].name);
            }
        }
        Node::BitmapHeapScan(s) if qualify => {
            for (k, &c) in s.columns.iter().enumerate() {
                out[k] = format!("{}.{}", s.alias, s.table.columns[c].name);
            }
        }
        Node::Project { input, exprs } => {
            let inner = output_columns(input, qualify);
            for (k, e) in exprs.iter().enumerate() {
                if let ExprKind::Column(i) = e.kind {
                    if let Some(n) = inner.get(i) {
                        out[k] = n.clone();
                    }
                }
            }
        }
        // A gating Result that replaced an empty scan keeps the scan's
        // column names.
        Node::Filter { input, .. } if input.fields.len() != plan.fields.len() => {}
        Node::Filter { input, .. }
        | Node::Limit { input, .. }
        | Node::Sort { input, .. }
        | Node::Distinct { input }
        | Node::Unique { input, .. }
        | Node::LimitTies { input, .. }
        | Node::Gather { input, .. } => out = output_columns(input, qualify),
        // A set operation's columns are named after its first input's.
        Node::Append { inputs } => {
            if let Some(first) = inputs.first() {
                out = output_columns(first, qualify);
            }
        }
        Node::SetOp { left, .. } => out = output_columns(left, qualify),
        Node::WindowAgg { input, .. } => {
            let mut cols = output_columns(input, qualify);
            cols.extend(out.drain(input.fields.len()..));
            out = cols;
        }
        Node::HashJoin { left, right, .. }
        | Node::NestedLoop { left, right, .. }
        | Node::IndexNestLoop { left, right, .. }
        | Node::Lateral { left, right, .. } => {
            out = output_columns(left, qualify);
            out.extend(output_columns(right, qualify));
        }
        _ => {}
    }
    out
}

/// Where a node sits in a parallel plan (see [`Node::Gather`]), and how
/// columns are named.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Par {
    /// The node is the aggregate every participant runs: "Partial ...".
    pub(super) partial: bool,
    /// Address of the Gather's driving scan ("Parallel Seq Scan"), 0 when
    /// not under a Gather.
    pub(super) scan: usize,
    /// Qualify column names with their relation (the whole plan reads
    /// more than one).
    pub(super) qualify: bool,
}

/// The names a node's keys give its input's columns: as
/// [`output_columns`], except that a column a projection computes is
/// deparsed, as PostgreSQL names a key by its expression. `wrap` adds the
/// parentheses PostgreSQL puts around an expression its input computed
/// (a Sort's keys; a hash DISTINCT computes its own).
pub(super) fn key_columns(plan: &Plan, qualify: bool, wrap: bool) -> Vec<String> {
    let mut out = output_columns(plan, qualify);
    if let Node::Project { input, exprs } = &plan.node {
        let inner = output_columns(input, qualify);
        let computed = computed_columns(input);
        for (k, e) in exprs.iter().enumerate() {
            match e.kind {
                // An aggregate's call or computed key, named by a key
                // above it, is wrapped as any expression its input
                // computed (`Sort Key: (count(*))`).
                ExprKind::Column(i) if wrap && computed.get(i) == Some(&true) => {
                    out[k] = format!("({})", out[k]);
                }
                ExprKind::Column(_) => {}
                _ => {
                    let d = deparse(e, &inner);
                    out[k] = if wrap { format!("({d})") } else { d };
                }
            }
        }
    }
    out
}

/// Which output columns of `plan` an aggregation computes (its calls, and
/// group keys that are not plain columns), looking through a HAVING
/// filter; none for other nodes.
pub(super) fn computed_columns(plan: &Plan) -> Vec<bool> {
    match &plan.node {
        Node::Filter { input, .. } => computed_columns(input),
        Node::Aggregate { group, aggs, .. } => group
            .iter()
            .map(|g| !matches!(g.kind, ExprKind::Column(_)))
            .chain(aggs.iter().map(|_| true))
            .collect(),
        Node::GroupAggregate {
            input, group, aggs, ..
        } => {
            let below = match &input.node {
                Node::Sort { input, .. } => input,
                _ => input,
            };
            let inner: Vec<bool> = match &below.node {
                Node::Project { exprs, .. } => exprs
                    .iter()
                    .map(|e| !matches!(e.kind, ExprKind::Column(_)))
                    .collect(),
                _ => Vec::new(),
            };
            group
                .iter()
                .map(|g| match g.kind {
                    ExprKind::Column(c) => inner.get(c) == Some(&true),
                    _ => true,
                })
                .chain(aggs.iter().map(|_| true))
                .collect()
        }
        _ => Vec::new(),
    }
}

/// [`key_columns`] of a Sort's input (the names of a sorted grouping's
/// keys), else of `plan` itself.
pub(super) fn sorted_columns(plan: &Plan, qualify: bool, wrap: bool) -> Vec<String> {
    match &plan.node {
        Node::Sort { input, .. } => key_columns(input, qualify, wrap),
        _ => key_columns(plan, qualify, wrap),
    }
}

/// The title and detail lines of an aggregate node.
pub(super) fn aggregate_title(plan: &Plan, qualify: bool) -> (String, Vec<String>) {
    if let Node::GroupAggregate { input, group, .. } = &plan.node {
        let n = sorted_columns(input, qualify, true);
        let keys: Vec<String> = group.iter().map(|g| deparse(g, &n)).collect();
        return (
            "GroupAggregate".into(),
            vec![format!("Group Key: {}", keys.join(", "))],
        );
    }
    let Node::Aggregate { input, group, .. } = &plan.node else {
        return ("Aggregate".into(), vec![]);
    };
    if group.is_empty() {
        ("Aggregate".into(), vec![])
    } else {
        let n = output_columns(input, qualify);
        let keys: Vec<String> = group.iter().map(|g| deparse(g, &n)).collect();
        (
            "HashAggregate".into(),
            vec![format!("Group Key: {}", keys.join(", "))],
        )
    }
}

pub(super) fn width(plan: &Plan) -> usize {
    plan.fields
        .iter()
        .map(|f| match f.ty.attlen() {
            -1 => 32,
            n => n as usize,
        })
        .sum()
}

pub(super) fn names(plan: &Plan) -> Vec<String> {
    plan.fields.iter().map(|f| f.name.clone()).collect()
}
