//! EXPLAIN VERBOSE's additions, as PostgreSQL 15's `explain.c` prints
//! them: an `Output:` line on every node but an Append (its target list,
//! deparsed as `ruleutils.c` does), relations named with their schema
//! (`Seq Scan on public.t`, `Function Scan on pg_catalog.generate_series`)
//! and a function scan's `Function Call:` line.
//!
//! A node's output is a list of entries, each an expression's text and
//! whether it is a plain column. A node that computes an expression (a
//! scan's or a join's projection, an aggregate's calls) prints it bare; a
//! node that passes its input's rows up (Sort, Limit, Hash, Gather) prints
//! the input's computed entries in parentheses, as `ruleutils` wraps a
//! reference to a child's non-Var target entry (`Output: (count(*))`).
//! Output lists qualify columns (`t.a`) only when the query reads more than
//! one relation; the conditions and keys of a VERBOSE plan are always
//! qualified (the callers' concern).
//!
//! A scan that feeds an aggregate or a join without a sort in between
//! returns its table's whole row (PostgreSQL's "physical target list",
//! `Output: a, b, c`); an index-only scan returns its index's columns.

use super::{deparse, output_columns, Node, Plan, TableFunc};
use crate::nodes::expr::{Expr, ExprKind};

/// One output column of a node: its text, and whether it is a plain
/// column (printed bare when a node above refers to it).
#[derive(Debug, Clone)]
pub(super) struct Entry {
    text: String,
    var: bool,
}

impl Entry {
    /// How a node above names this entry: a computed one in parentheses.
    fn reference(&self) -> String {
        if self.var {
            self.text.clone()
        } else {
            format!("({})", self.text)
        }
    }
}

/// The names a node above `plan` uses for its columns.
pub(super) fn references(plan: &Plan, qualify: bool) -> Vec<String> {
    entries(plan, qualify, false)
        .iter()
        .map(Entry::reference)
        .collect()
}

/// The `Output: ...` line of `plan`, `None` for nodes PostgreSQL prints
/// none for (an Append, a node returning no columns). `physical`: the
/// node above takes a scan's whole row.
pub(super) fn output_line(plan: &Plan, qualify: bool, physical: bool) -> Option<String> {
    if matches!(plan.node, Node::Append { .. }) {
        return None;
    }
    let e = entries(plan, qualify, physical);
    if e.is_empty() {
        return None;
    }
    let texts: Vec<&str> = e.iter().map(|x| x.text.as_str()).collect();
    Some(format!("Output: {}", texts.join(", ")))
}

/// The output line of a projection folded into the node below it: its
/// expressions over that node's columns.
pub(super) fn projection_line(input: &Plan, exprs: &[Expr], qualify: bool) -> String {
    let inner = entries(input, qualify, false);
    let texts: Vec<String> = exprs.iter().map(|e| project(e, &inner).text).collect();
    format!("Output: {}", texts.join(", "))
}

/// One projected expression over its input's entries.
fn project(e: &Expr, inner: &[Entry]) -> Entry {
    if let ExprKind::Column(i) = e.kind {
        if let Some(x) = inner.get(i) {
            return x.clone();
        }
    }
    let refs: Vec<String> = inner.iter().map(Entry::reference).collect();
    Entry {
        text: deparse(e, &refs),
        var: false,
    }
}

fn vars(names: impl IntoIterator<Item = String>) -> Vec<Entry> {
    names
        .into_iter()
        .map(|text| Entry { text, var: true })
        .collect()
}

/// A scanned table's columns `cols`, qualified by `alias` when asked.
fn columns<'a>(names: impl IntoIterator<Item = &'a str>, alias: &str, qualify: bool) -> Vec<Entry> {
    vars(names.into_iter().map(|n| {
        if qualify {
            format!("{alias}.{n}")
        } else {
            n.to_string()
        }
    }))
}

/// The output entries of `plan` (see the module's documentation).
fn entries(plan: &Plan, qualify: bool, physical: bool) -> Vec<Entry> {
    match &plan.node {
        Node::SeqScan {
            table,
            alias,
            columns: cols,
            ..
        } => {
            let all: Vec<usize> = (0..table.columns.len()).collect();
            let cols = if physical { &all } else { cols };
            columns(
                cols.iter().map(|&c| table.columns[c].name.as_str()),
                alias,
                qualify,
            )
        }
        Node::IndexScan(s) => {
            let all: Vec<usize> = if s.index_only {
                s.index.columns.iter().map(|c| c.column).collect()
            } else {
                (0..s.table.columns.len()).collect()
            };
            let cols = if physical { &all } else { &s.columns };
            columns(
                cols.iter().map(|&c| s.table.columns[c].name.as_str()),
                &s.alias,
                qualify,
            )
        }
        Node::BitmapHeapScan(s) => {
            let all: Vec<usize> = (0..s.table.columns.len()).collect();
            let cols = if physical { &all } else { &s.columns };
            columns(
                cols.iter().map(|&c| s.table.columns[c].name.as_str()),
                &s.alias,
                qualify,
            )
        }
        Node::Project { input, exprs } if !transparent(input, exprs) => {
            let inner = entries(input, qualify, false);
            exprs.iter().map(|e| project(e, &inner)).collect()
        }
        Node::Project { input, .. } => entries(input, qualify, physical),
        Node::Values { rows } if rows.len() == 1 => {
            rows[0].iter().map(|e| project(e, &[])).collect()
        }
        Node::Values { .. } => {
            vars((1..=plan.fields.len()).map(|k| format!("\"*VALUES*\".column{k}")))
        }
        Node::Function { name, alias, .. } => {
            let a = alias.as_deref().unwrap_or(name);
            columns(plan.fields.iter().map(|f| f.name.as_str()), a, qualify)
        }
        Node::Aggregate { group, .. } | Node::GroupAggregate { group, .. } => {
            let n = group.len();
            output_columns(plan, qualify)
                .into_iter()
                .enumerate()
                .map(|(k, text)| Entry {
                    text,
                    var: k < n && matches!(group[k].kind, ExprKind::Column(_)),
                })
                .collect()
        }
        Node::Filter { input, .. } => entries(input, qualify, physical),
        Node::Limit { input, .. }
        | Node::Sort { input, .. }
        | Node::Unique { input, .. }
        | Node::LimitTies { input, .. }
        | Node::Distinct { input }
        | Node::Gather { input, .. } => passed(input, qualify),
        Node::HashJoin { left, right, .. }
        | Node::NestedLoop { left, right, .. }
        | Node::IndexNestLoop { left, right, .. }
        | Node::Lateral { left, right, .. } => {
            let mut out = passed(left, qualify);
            out.extend(passed(right, qualify));
            out
        }
        Node::Append { inputs } => inputs
            .first()
            .map_or_else(Vec::new, |first| passed(first, qualify)),
        Node::SetOp { left, .. } => passed(left, qualify),
        Node::WindowAgg { input, .. } => {
            let mut out = passed(input, qualify);
            out.extend(plan.fields[input.fields.len()..].iter().map(|f| Entry {
                text: f.name.clone(),
                var: false,
            }));
            out
        }
        _ => columns(plan.fields.iter().map(|f| f.name.as_str()), "", false),
    }
}

/// An input's entries as a node that passes its rows up names them.
fn passed(input: &Plan, qualify: bool) -> Vec<Entry> {
    vars(references(input, qualify))
}

/// Whether a projection of plain columns over `input` is not a node of
/// PostgreSQL's plan: it drops a Sort's or Limit's sort columns, which
/// PostgreSQL keeps to the top, as junk.
pub(super) fn transparent(input: &Plan, exprs: &[Expr]) -> bool {
    exprs.iter().all(|e| matches!(e.kind, ExprKind::Column(_)))
        && matches!(
            input.node,
            Node::Sort { .. } | Node::Limit { .. } | Node::LimitTies { .. } | Node::Unique { .. }
        )
}

/// Whether `plan`, below any filters, is a table scan.
pub(super) fn scan_below(plan: &Plan) -> bool {
    match &plan.node {
        Node::Filter { input, .. } => scan_below(input),
        Node::SeqScan { .. } | Node::IndexScan(_) | Node::BitmapHeapScan(_) => true,
        _ => false,
    }
}

/// The output line of a join below an aggregate: only the columns the
/// aggregate reads, as PostgreSQL's join returns what the level above
/// needs.
pub(super) fn join_under_aggregate(parent: &Plan, child: &Plan, qualify: bool) -> Option<String> {
    let (group, aggs) = match &parent.node {
        Node::Aggregate { group, aggs, .. } | Node::GroupAggregate { group, aggs, .. } => {
            (group, aggs)
        }
        _ => return None,
    };
    let mut join = child;
    while let Node::Filter { input, .. } = &join.node {
        join = input;
    }
    if !matches!(
        join.node,
        Node::HashJoin { .. } | Node::NestedLoop { .. } | Node::IndexNestLoop { .. }
    ) {
        return None;
    }
    let mut used = Vec::new();
    let mut read = |e: &Expr| crate::plan::select::columns_used(e, &mut used);
    group.iter().for_each(&mut read);
    for a in aggs {
        a.arg.iter().chain(&a.more_args).for_each(&mut read);
        a.filter.iter().for_each(&mut read);
        a.order.iter().for_each(|o| read(&o.expr));
    }
    let mut seen = std::collections::HashSet::new();
    used.retain(|c| seen.insert(*c));
    let all = entries(child, qualify, false);
    let texts: Vec<&str> = used
        .iter()
        .filter_map(|&c| all.get(c))
        .map(|e| e.text.as_str())
        .collect();
    // An empty line: the join returns no columns, and prints no Output.
    Some(if texts.is_empty() {
        String::new()
    } else {
        format!("Output: {}", texts.join(", "))
    })
}

/// A scan's title with its relation schema-qualified, as VERBOSE prints
/// it: `on t` becomes `on public.t`.
pub(super) fn qualify_title(title: String, plan: &Plan) -> String {
    let (table, schema) = match &plan.node {
        Node::SeqScan { table, .. } => (table.name.as_str(), "public"),
        Node::IndexScan(s) => (s.table.name.as_str(), "public"),
        Node::BitmapHeapScan(s) => (s.table.name.as_str(), "public"),
        Node::Function { name, .. } => (name.as_str(), "pg_catalog"),
        _ => return title,
    };
    match title.find(&format!(" on {table}")) {
        Some(at) if title[at + 4..].split(' ').next() == Some(table) => {
            format!("{}{schema}.{}", &title[..at + 4], &title[at + 4..])
        }
        _ => title,
    }
}

/// A function scan's `Function Call:` line.
pub(super) fn function_call(plan: &Plan) -> Option<String> {
    let Node::Function { name, func, .. } = &plan.node else {
        return None;
    };
    let args = match func {
        TableFunc::SeriesInt { start, stop, step } if *step == 1 => format!("{start}, {stop}"),
        TableFunc::SeriesInt { start, stop, step } => format!("{start}, {stop}, {step}"),
        TableFunc::Call { args, .. } => args
            .iter()
            .map(|a| deparse(a, &[]))
            .collect::<Vec<_>>()
            .join(", "),
        TableFunc::SeriesTimestamp { .. } | TableFunc::Rows(_) => return None,
    };
    Some(format!("Function Call: {name}({args})"))
}

/// Whether a scan below `parent` (its `child`th input) returns its whole
/// row: under an aggregate or a join that does not sort or hash that
/// input.
pub(super) fn physical_below(parent: &Plan, child: usize) -> bool {
    match &parent.node {
        Node::Distinct { .. } => true,
        Node::Aggregate { group, .. } | Node::GroupAggregate { group, .. } => {
            group.iter().all(|g| matches!(g.kind, ExprKind::Column(_)))
        }
        Node::HashJoin { build_left, .. } => (child == 1) == *build_left,
        Node::IndexNestLoop { .. } => true,
        Node::NestedLoop { .. } | Node::Lateral { .. } => child == 0,
        _ => false,
    }
}
