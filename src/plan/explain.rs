//! EXPLAIN: a plan tree printed in PostgreSQL's text shape.
//!
//! ```text
//! HashAggregate  (rows=50 width=12)
//!   Group Key: bid
//!   ->  Seq Scan on pgbench_accounts  (rows=5000000 width=8)
//! ```
//!
//! Node names, the `->` indentation and the detail lines (`Filter:`, `Group
//! Key:`, `Hash Cond:`, `Sort Key:`) are PostgreSQL's. Where PostgreSQL
//! prints `(cost=... rows=... width=...)`, heapdb prints only its row
//! estimate and width: it has no cost model, and made-up costs would invite
//! comparisons that mean nothing. Projection nodes are folded into the node
//! below, as PostgreSQL folds projection into every node. Column names in
//! the detail lines are qualified by their relation's alias (`Hash Cond:
//! (a.bid = b.bid)`, `Group Key: b.bid`) when the query reads more than
//! one relation, as PostgreSQL qualifies them when its range table has more
//! than one entry ([`output_columns`]); a scan's own `Filter:` stays bare,
//! as PostgreSQL prints scan quals. Conditions print as PostgreSQL's
//! `ruleutils` prints them ([`deparse`]): constants as `get_const_expr`
//! does (`'10'::double precision`, `'t1'::bpchar`, `'-1'::integer`), casts
//! PostgreSQL would not have (integer and float widenings, which it has
//! cross-type operators for) left out, `IN` lists as `= ANY ('{...}'::type[])`,
//! AND / OR chains flattened, CASE and NULLIF spelled out; their order is the
//! planner's ([`super::quals`]). With ANALYZE each
//! line gets `(actual time=first..total rows=N loops=L)` and, with BUFFERS,
//! a `Buffers: shared hit=N read=N dirtied=N written=N` line. Under a
//! Gather, L is the participants that ran the node and rows and times are
//! per-loop averages, as PostgreSQL prints them; buffers are totals.

mod analyze;
mod bitmap;
mod deparse;
mod verbose;

use analyze::{actual, buffers_line, hash_agg_line, hash_join_line, removed_line};
use bitmap::{bitmap_heap_title, bitmap_node, table_names};

pub use deparse::deparse;
use deparse::PARAM_NAMES;
pub(crate) use deparse::{literal, operand};

use super::{JoinKind, Node, Plan, TableFunc};
use crate::catalog::TableDef;
use crate::exec::subplan::SubLinkKind;
use crate::exec::NodeStats;
use crate::nodes::expr::{Expr, ExprKind};
use crate::types::{BinaryOp, DataType};

/// What to print beside the plan.
#[derive(Debug, Clone, Copy, Default)]
pub struct ExplainFlags {
    /// Print row estimates.
    pub costs: bool,
    /// Print measured figures (the stats slice is present).
    pub analyze: bool,
    /// Print buffer counters.
    pub buffers: bool,
    /// Print times.
    pub timing: bool,
    /// `enable_page_summaries` is on: aggregations that may take pages
    /// from summaries say so (`Page Summaries:`, and with ANALYZE the scan's
    /// `Summaries:` figures), unless COSTS OFF asks for PostgreSQL's own
    /// lines.
    pub summaries: bool,
    /// VERBOSE: every node's `Output:` line, schema-qualified relations,
    /// qualified column names in every condition and key ([`verbose`]).
    pub verbose: bool,
}

/// The lines of EXPLAIN output for `plan`.
pub fn explain(plan: &Plan, flags: ExplainFlags, stats: Option<&[NodeStats]>) -> Vec<String> {
    let mut plan = plan.clone();
    unique_aliases(&mut plan, &mut std::collections::HashSet::new());
    let plan = &plan;
    let mut out = Vec::new();
    let mut cx = Explainer {
        flags,
        stats,
        out: &mut out,
        cte_root: top_node(plan) as *const Plan as usize,
        out_qualify: relations(plan) > 1,
    };
    let at = At {
        depth: 0,
        top: true,
        extra: &[],
        output: None,
        physical: false,
        par: Par {
            qualify: relations(plan) > 1 || flags.verbose,
            ..Par::default()
        },
    };
    node(&mut cx, plan, at, &mut 0);
    subplan_sections(plan, flags, &mut out);
    out
}

/// The correlated subqueries of `plan`, each as a `SubPlan N` section
/// after the main tree: its plan and, with ANALYZE, how often it ran and
/// how many rows its result cache answered.
fn subplan_sections(plan: &Plan, flags: ExplainFlags, out: &mut Vec<String>) {
    fn collect<'p>(plan: &'p Plan, found: &mut Vec<&'p crate::nodes::expr::SubPlanRef>) {
        for e in plan.node.exprs() {
            crate::exec::subplan::subplans(e, found);
        }
        for c in plan.children() {
            collect(c, found);
        }
    }
    let mut found = Vec::new();
    collect(plan, &mut found);
    // A multiple-column assignment's columns share one subplan.
    let mut seen: Vec<&crate::nodes::expr::SubPlanRef> = Vec::new();
    found.retain(|sp| {
        let first = !seen.iter().any(|s| std::sync::Arc::ptr_eq(&s.0, &sp.0));
        seen.push(sp);
        first
    });
    let mut params = 0;
    for (k, sp) in found.into_iter().enumerate() {
        // An InitPlan returns parameters (one per column of a multiple-
        // column assignment), numbered across the statement's InitPlans.
        let init = sp.once && !matches!(sp.kind, SubLinkKind::Quantified(..));
        if init {
            let n = match sp.kind {
                SubLinkKind::Row(m) => m,
                _ => 1,
            };
            let returns: Vec<String> = (params..params + n).map(|p| format!("${p}")).collect();
            params += n;
            out.push(format!(
                "  InitPlan {} (returns {})",
                k + 1,
                returns.join(",")
            ));
        } else {
            out.push(format!("  SubPlan {}", k + 1));
        }
        if flags.analyze {
            out.push(format!(
                "    Runs: {}  Cache Hits: {}",
                sp.runs.load(std::sync::atomic::Ordering::Relaxed),
                sp.hits.load(std::sync::atomic::Ordering::Relaxed)
            ));
        }
        let mut lines = Vec::new();
        let mut id = 0;
        let inner = ExplainFlags {
            analyze: false,
            ..flags
        };
        let mut cx = Explainer {
            flags: inner,
            stats: None,
            out: &mut lines,
            cte_root: top_node(&sp.plan) as *const Plan as usize,
            out_qualify: relations(&sp.plan) > 1,
        };
        let at = At {
            depth: 1,
            top: false,
            extra: &[],
            output: None,
            physical: false,
            par: Par {
                qualify: relations(&sp.plan) > 1 || flags.verbose,
                ..Par::default()
            },
        };
        node(&mut cx, &sp.plan, at, &mut id);
        // PostgreSQL indents an InitPlan's tree under its title.
        let indent = if init { "  " } else { "" };
        out.extend(lines.into_iter().map(|l| format!("{indent}{l}")));
    }
}

/// Gives every scanned relation a name of its own, as PostgreSQL's EXPLAIN
/// does: the second scan of `et` (a self-join, both sides of a UNION)
/// is `et et_1`, and its columns `et_1.a`. Scans are named in plan order
/// (a join's left input first), which is the order they appear in the
/// query.
fn unique_aliases(plan: &mut Plan, used: &mut std::collections::HashSet<String>) {
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
fn is_scan(plan: &Plan) -> bool {
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
fn relations(plan: &Plan) -> usize {
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
fn output_columns(plan: &Plan, qualify: bool) -> Vec<String> {
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
struct Par {
    /// The node is the aggregate every participant runs: "Partial ...".
    partial: bool,
    /// Address of the Gather's driving scan ("Parallel Seq Scan"), 0 when
    /// not under a Gather.
    scan: usize,
    /// Qualify column names with their relation (the whole plan reads
    /// more than one).
    qualify: bool,
}

/// The title and detail lines of an aggregate node.
/// The names a node's keys give its input's columns: as
/// [`output_columns`], except that a column a projection computes is
/// deparsed, as PostgreSQL names a key by its expression. `wrap` adds the
/// parentheses PostgreSQL puts around an expression its input computed
/// (a Sort's keys; a hash DISTINCT computes its own).
fn key_columns(plan: &Plan, qualify: bool, wrap: bool) -> Vec<String> {
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
fn computed_columns(plan: &Plan) -> Vec<bool> {
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
fn sorted_columns(plan: &Plan, qualify: bool, wrap: bool) -> Vec<String> {
    match &plan.node {
        Node::Sort { input, .. } => key_columns(input, qualify, wrap),
        _ => key_columns(plan, qualify, wrap),
    }
}

fn aggregate_title(plan: &Plan, qualify: bool) -> (String, Vec<String>) {
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

fn width(plan: &Plan) -> usize {
    plan.fields
        .iter()
        .map(|f| match f.ty.attlen() {
            -1 => 32,
            n => n as usize,
        })
        .sum()
}

fn names(plan: &Plan) -> Vec<String> {
    plan.fields.iter().map(|f| f.name.clone()).collect()
}

/// What every node's lines share while EXPLAIN walks the plan: the options,
/// EXPLAIN ANALYZE's measurements (indexed by node id, pre-order) and the
/// lines written so far.
struct Explainer<'a> {
    flags: ExplainFlags,
    stats: Option<&'a [NodeStats]>,
    out: &'a mut Vec<String>,
    /// The node (by address) under whose title the plan's recursive CTEs
    /// are printed as `CTE name` sections: the tree's top node.
    cte_root: usize,
    /// VERBOSE's `Output:` lines qualify their columns (the query reads
    /// more than one relation).
    out_qualify: bool,
}

/// Where one node is printed: its indentation depth, whether it is the
/// plan's top line, the detail lines of the nodes folded into it (a
/// projection's or a filter's), and its place in a parallel plan.
#[derive(Clone, Copy)]
struct At<'e> {
    depth: usize,
    top: bool,
    extra: &'e [String],
    /// VERBOSE: the `Output:` line of a projection folded into the node.
    output: Option<&'e str>,
    /// VERBOSE: the node above takes a scan's whole row
    /// ([`verbose::physical_below`]).
    physical: bool,
    par: Par,
}

impl At<'_> {
    /// A child `levels` deeper, with nothing folded into it.
    fn below(&self, levels: usize, par: Par) -> At<'static> {
        At {
            depth: self.depth + levels,
            top: false,
            extra: &[],
            output: None,
            physical: false,
            par,
        }
    }

    /// The same place, for input `child` of `parent`.
    fn input_of(self, parent: &Plan, child: usize) -> Self {
        At {
            physical: verbose::physical_below(parent, child),
            ..self
        }
    }
}

/// Prints `plan` and its inputs; `id` is the node's number (pre-order, as
/// EXPLAIN ANALYZE numbers its measurements) and is advanced past the
/// subtree.
fn node(cx: &mut Explainer<'_>, plan: &Plan, at: At<'_>, id: &mut usize) {
    let my_id = *id;
    *id += 1;
    // Projections and filters fold into the node below them.
    match &plan.node {
        Node::Project { input, exprs } => {
            let plain = exprs.iter().all(|e| matches!(e.kind, ExprKind::Column(_)));
            let hidden = verbose::transparent(input, exprs)
                || (at.physical && plain && verbose::scan_below(input));
            let line = (cx.flags.verbose && at.output.is_none() && !hidden)
                .then(|| verbose::projection_line(input, exprs, cx.out_qualify));
            let output = at.output.or(line.as_deref());
            node(cx, input, At { output, ..at }, id);
            return;
        }
        Node::Filter { input, predicate } => {
            // Over a FROM-less Result the condition gates it once.
            let one_time = matches!(input.node, Node::Values { .. }) && input.fields.is_empty();
            let mut more = vec![format!(
                "{}Filter: {}",
                if one_time { "One-Time " } else { "" },
                deparse(
                    predicate,
                    &output_columns(
                        input,
                        at.par.qualify && (cx.flags.verbose || !is_scan(input))
                    )
                )
            )];
            more.extend(removed_line(cx.flags, cx.stats, my_id));
            more.extend(at.extra.iter().cloned());
            node(cx, input, At { extra: &more, ..at }, id);
            return;
        }
        _ => {}
    }
    if let Some((input, srf)) = project_set(plan) {
        header(cx, plan, at, my_id, "ProjectSet".into(), Vec::new());
        node(cx, input, at.below(1, at.par), id);
        count(srf, id);
        return;
    }
    let (mut title, mut details) = title_and_details(cx, plan, my_id, at.par);
    if cx.flags.verbose {
        title = verbose::qualify_title(title, plan);
        let mut first: Vec<String> = match at.output {
            Some("") => vec![],
            Some(o) => vec![o.to_string()],
            None => verbose::output_line(plan, cx.out_qualify, at.physical)
                .into_iter()
                .collect(),
        };
        first.extend(verbose::function_call(plan));
        details.splice(0..0, first);
    }
    header(cx, plan, at, my_id, title, details);
    inputs(cx, plan, at, my_id, id);
}

/// A select-list set-returning function, which the planner joins to the
/// rows it expands ([`super::select`]'s `srf_to_from`), as PostgreSQL's
/// ProjectSet over those rows: the rows' plan and the function's.
fn project_set(plan: &Plan) -> Option<(&Plan, &Plan)> {
    let (left, right) = match &plan.node {
        Node::NestedLoop {
            left,
            right,
            kind: JoinKind::Inner,
            condition: None,
        }
        | Node::Lateral {
            left,
            right,
            kind: JoinKind::Inner,
            ..
        } => (left, right),
        _ => return None,
    };
    match &top_node(right).node {
        Node::Function { alias: Some(a), .. } if a == "\u{1}srf" => Some((left, right)),
        _ => None,
    }
}

/// A node's title (`Seq Scan on t`) and its own detail lines (keys,
/// conditions, filters).
fn title_and_details(
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
fn join_title(plan: &Plan, par: Par) -> (String, Vec<String>) {
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
fn seq_scan_title(
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
fn index_scan_title(
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
fn parameterized_inner(plan: &Plan, qualify: bool) -> Plan {
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
            super::select::remap_columns(&mut outer, &|c| c + n);
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

/// A node's own lines: the title with its estimates and measurements, the
/// detail lines (the node's, then those folded into it), and buffers.
fn header(
    cx: &mut Explainer<'_>,
    plan: &Plan,
    at: At<'_>,
    my_id: usize,
    title: String,
    mut details: Vec<String>,
) {
    let (flags, stats) = (cx.flags, cx.stats);
    details.extend(at.extra.iter().cloned());
    if matches!(
        plan.node,
        Node::Aggregate { .. } | Node::Gather { .. } | Node::Distinct { .. }
    ) {
        details.extend(hash_agg_line(flags, stats, my_id));
    }
    let mut line = String::new();
    if !at.top {
        line.push_str(&" ".repeat(at.depth.saturating_sub(1) * 6 + 2));
        line.push_str("->  ");
    }
    line.push_str(&title);
    if flags.costs {
        line.push_str(&format!(
            "  (rows={:.0} width={})",
            plan.rows.max(0.0),
            width(plan)
        ));
    }
    if let (true, Some(s)) = (flags.analyze, stats) {
        line.push_str(&actual(&s[my_id], flags));
    }
    cx.out.push(line);
    let pad = if at.top { 2 } else { at.depth * 6 + 2 };
    for d in details {
        cx.out.push(format!("{}{d}", " ".repeat(pad)));
    }
    if let (true, true, Some(s)) = (flags.analyze, flags.buffers, stats) {
        cx.out.extend(buffers_line(&s[my_id], pad));
    }
}

/// Prints a node's inputs, with the nodes PostgreSQL shows between them and
/// it: a Gather's line, a hash join's Hash, a set operation's Append of
/// subquery scans, a nested loop's Materialize.
fn inputs(cx: &mut Explainer<'_>, plan: &Plan, at: At<'_>, my_id: usize, id: &mut usize) {
    let depth = at.depth;
    let children = plan.children();
    let inner = Par {
        partial: false,
        ..at.par
    };
    if plan as *const Plan as usize == cx.cte_root {
        cte_sections(cx, plan, at, inner);
    }
    match &plan.node {
        // The CTE's plan was printed in its section.
        Node::CteScan { input, .. } => count(input, id),
        // The right side's parameters print as the left's columns they
        // stand for (`t.a`), as PostgreSQL prints an outer reference.
        Node::Lateral {
            left,
            right,
            params,
            ..
        } => {
            node(cx, left, at.below(1, inner).input_of(plan, 0), id);
            let cols = output_columns(left, true);
            let names = params.iter().map(|p| deparse(p, &cols)).collect();
            PARAM_NAMES.with(|n| n.borrow_mut().push(names));
            node(cx, right, at.below(1, inner).input_of(plan, 1), id);
            PARAM_NAMES.with(|n| n.borrow_mut().pop());
        }
        Node::Gather {
            input,
            finalize: false,
            ..
        } => {
            let scan = crate::nodes::gather_scan(input);
            let par = Par {
                partial: false,
                scan: scan.map_or(0, |s| s as *const Plan as usize),
                qualify: at.par.qualify,
            };
            node(cx, input, at.below(1, par).input_of(plan, 0), id);
        }
        Node::Gather { input, workers, .. } => {
            let start = cx.out.len();
            gather_lines(input, *workers, depth, cx.flags, cx.stats, my_id, cx.out);
            // The Gather's Output line goes right under its title.
            let mut lines = Vec::new();
            std::mem::swap(cx.out, &mut lines);
            verbose_passed(cx, input, depth + 1);
            let output = std::mem::replace(cx.out, lines);
            cx.out.splice(start + 1..start + 1, output);
            let scan = match &input.node {
                Node::Aggregate { input, .. } => super::parallel::driving_scan(input),
                _ => None,
            };
            let par = Par {
                partial: true,
                scan: scan.map_or(0, |s| s as *const Plan as usize),
                qualify: at.par.qualify,
            };
            node(cx, input, at.below(2, par).input_of(plan, 0), id);
        }
        Node::HashJoin { build_left, .. } => {
            hash_join_inputs(cx, plan, *build_left, at, my_id, id, inner);
        }
        Node::BitmapHeapScan(spec) => {
            let names = table_names(&spec.table, &spec.alias, cx.flags.verbose);
            bitmap_node(cx, &spec.bitmap, &names, depth + 1, id);
        }
        Node::IndexNestLoop { left, .. } => {
            node(cx, left, at.below(1, inner).input_of(plan, 0), id);
            let right = parameterized_inner(plan, at.par.qualify);
            node(cx, &right, at.below(1, inner).input_of(plan, 1), id);
        }
        // A set operation reads its inputs through PostgreSQL's Append of
        // "*SELECT* n" subquery scans (the rows tagged by their side).
        Node::SetOp { .. } => {
            let pad = |d: usize| " ".repeat(d * 6 + 2);
            cx.out.push(format!("{}->  Append", pad(depth)));
            for (k, c) in children.into_iter().enumerate() {
                cx.out.push(format!(
                    "{}->  Subquery Scan on \"*SELECT* {}\"",
                    pad(depth + 1),
                    k + 1
                ));
                node(cx, c, at.below(3, inner), id);
            }
        }
        _ => {
            for (k, c) in children.into_iter().enumerate() {
                // A nested loop holds its inner input in memory:
                // PostgreSQL's Materialize above it (a function scan or
                // VALUES is kept by itself).
                let inner_kept = matches!(plan.node, Node::NestedLoop { .. })
                    && k == 1
                    && !matches!(c.node, Node::Function { .. } | Node::Values { .. });
                if inner_kept {
                    let mut m = format!("{}->  Materialize", " ".repeat(depth * 6 + 2));
                    if cx.flags.costs {
                        m.push_str(&format!(
                            "  (rows={:.0} width={})",
                            c.rows.max(0.0),
                            width(c)
                        ));
                    }
                    cx.out.push(m);
                    verbose_passed(cx, c, depth + 1);
                    node(cx, c, at.below(2, inner), id);
                } else {
                    let line = cx
                        .flags
                        .verbose
                        .then(|| verbose::join_under_aggregate(plan, c, cx.out_qualify))
                        .flatten();
                    let below = At {
                        output: line.as_deref(),
                        ..at.below(1, inner).input_of(plan, k)
                    };
                    node(cx, c, below, id);
                }
            }
        }
    }
}

/// VERBOSE: the `Output:` line of a node EXPLAIN adds above `input` (a
/// Hash, a Materialize), which returns `input`'s rows as they are.
fn verbose_passed(cx: &mut Explainer<'_>, input: &Plan, depth: usize) {
    if cx.flags.verbose {
        let refs = verbose::references(input, cx.out_qualify);
        if !refs.is_empty() {
            cx.out.push(format!(
                "{}Output: {}",
                " ".repeat(depth * 6 + 2),
                refs.join(", ")
            ));
        }
    }
}

/// The node printed first for `plan`: projections and filters fold into
/// the node below them.
fn top_node(plan: &Plan) -> &Plan {
    match &plan.node {
        Node::Project { input, .. } | Node::Filter { input, .. } => top_node(input),
        _ => plan,
    }
}

/// `Title on name [alias]`, as PostgreSQL names a scan of a CTE.
fn scan_on(title: &str, name: &str, alias: &str) -> String {
    if alias == name {
        format!("{title} on {name}")
    } else {
        format!("{title} on {name} {alias}")
    }
}

/// The recursive CTEs `root`'s tree reads, each once, as PostgreSQL's
/// `CTE name` sections under the query's top node: the label at the top
/// node's detail indentation, the CTE's plan below it. Node ids are the
/// CTE plan's pre-order positions (EXPLAIN ANALYZE's figures).
fn cte_sections(cx: &mut Explainer<'_>, root: &Plan, at: At<'_>, par: Par) {
    fn collect<'p>(plan: &'p Plan, start: usize, found: &mut Vec<(&'p Plan, &'p str, usize)>) {
        let mut id = start + 1;
        for c in plan.children() {
            if let Node::CteScan { input, name, .. } = &c.node {
                let same = |f: &(&Plan, &str, usize)| {
                    matches!(
                        (&f.0.node, &input.node),
                        (
                            Node::RecursiveUnion { worktable: a, .. },
                            Node::RecursiveUnion { worktable: b, .. }
                        ) if a == b
                    )
                };
                if !found.iter().any(same) {
                    found.push((input, name, id + 1));
                }
            }
            collect(c, id, found);
            count(c, &mut id);
        }
    }
    let mut found = Vec::new();
    if let Node::CteScan { input, name, .. } = &root.node {
        found.push((&**input, name.as_str(), 1));
    }
    collect(root, 0, &mut found);
    let pad = if at.top { 2 } else { at.depth * 6 + 2 };
    for (plan, name, start) in found {
        cx.out.push(format!("{}CTE {name}", " ".repeat(pad)));
        let mut lines = Vec::new();
        let mut sub = Explainer {
            flags: cx.flags,
            stats: cx.stats,
            out: &mut lines,
            cte_root: 0,
            out_qualify: cx.out_qualify,
        };
        let mut id = start;
        node(&mut sub, plan, at.below(1, par), &mut id);
        // The section's plan is indented two past the label.
        cx.out.extend(lines.into_iter().map(|l| format!("  {l}")));
    }
}

/// A hash join's inputs: the probe side, then its build side under a
/// "Hash" node. Node ids follow execution's numbering (the build side's
/// subtree first when the left input is built), so each side is printed
/// with its own counter and `id` ends past both.
fn hash_join_inputs(
    cx: &mut Explainer<'_>,
    at_plan: &Plan,
    build_left: bool,
    at: At<'_>,
    my_id: usize,
    id: &mut usize,
    inner: Par,
) {
    let depth = at.depth;
    let (flags, stats) = (cx.flags, cx.stats);
    let children = at_plan.children();
    let (probe, build) = if build_left {
        (children[1], children[0])
    } else {
        (children[0], children[1])
    };
    let (probe_id, build_id) = if build_left {
        let b = *id;
        let mut c = 0;
        count(build, &mut c);
        (b + c, b)
    } else {
        let p = *id;
        let mut c = 0;
        count(probe, &mut c);
        (p, p + c)
    };
    let mut pid = probe_id;
    let probe_k = usize::from(build_left);
    node(
        cx,
        probe,
        at.below(1, inner).input_of(at_plan, probe_k),
        &mut pid,
    );
    let mut hash_line = format!("{}->  Hash", " ".repeat(depth * 6 + 2));
    if flags.costs {
        hash_line.push_str(&format!(
            "  (rows={:.0} width={})",
            build.rows.max(0.0),
            width(build)
        ));
    }
    // The Hash holds what its input returned, and returns it (to the
    // join) once that input is done, as PostgreSQL's does.
    if let (true, Some(b)) = (flags.analyze, stats.and_then(|s| s.get(build_id))) {
        hash_line.push_str(&actual(
            &NodeStats {
                first: b.total,
                ..*b
            },
            flags,
        ));
    }
    cx.out.push(hash_line);
    verbose_passed(cx, build, depth + 1);
    if let Some(l) = hash_join_line(flags, stats, my_id) {
        cx.out
            .push(format!("{}{l}", " ".repeat((depth + 1) * 6 + 2)));
    }
    let mut bid = build_id;
    node(cx, build, at.below(2, inner), &mut bid);
    *id = pid.max(bid);
}

/// A plain Gather's worker lines (`Workers Launched` with ANALYZE).
fn gather_workers(cx: &Explainer<'_>, my_id: usize, workers: usize) -> Vec<String> {
    let mut d = vec![format!("Workers Planned: {workers}")];
    if let (true, Some(s)) = (cx.flags.analyze, cx.stats) {
        if s.get(my_id).is_some_and(|g| g.calls > 0) {
            d.push(format!("Workers Launched: {workers}"));
        }
    }
    d
}

/// The `Gather` line between a Finalize and a Partial aggregate. With
/// ANALYZE it shows, as PostgreSQL's does, the rows the participants passed
/// up (the partial aggregate's, node `id + 1`, summed over them), the time
/// and buffers of the whole parallel run (the Finalize node's, `id`: the
/// workers' buffer work is credited to the leader).
fn gather_lines(
    partial: &Plan,
    workers: usize,
    depth: usize,
    flags: ExplainFlags,
    stats: Option<&[NodeStats]>,
    id: usize,
    out: &mut Vec<String>,
) {
    let mut line = format!("{}->  Gather", " ".repeat(depth * 6 + 2));
    if flags.costs {
        line.push_str(&format!(
            "  (rows={:.0} width={})",
            (partial.rows * (workers + 1) as f64).max(0.0),
            width(partial)
        ));
    }
    let run = match (flags.analyze, stats) {
        (true, Some(s)) => s.get(id).zip(s.get(id + 1)).map(|(g, p)| NodeStats {
            rows: p.rows,
            loops: 1,
            ..*g
        }),
        _ => None,
    };
    if let Some(g) = &run {
        line.push_str(&actual(g, flags));
    }
    out.push(line);
    let pad = (depth + 1) * 6 + 2;
    out.push(format!("{}Workers Planned: {workers}", " ".repeat(pad)));
    if let Some(g) = &run {
        out.push(format!("{}Workers Launched: {workers}", " ".repeat(pad)));
        if flags.buffers {
            out.extend(buffers_line(g, pad));
        }
    }
}

fn count(plan: &Plan, n: &mut usize) {
    *n += 1;
    for c in plan.children() {
        count(c, n);
    }
}
