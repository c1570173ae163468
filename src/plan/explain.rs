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
mod columns;
mod deparse;
mod sections;
mod titles;
mod verbose;

use analyze::{actual, buffers_line, hash_agg_line, hash_join_line, removed_line};
use bitmap::{bitmap_node, table_names};
use columns::{is_scan, output_columns, relations, unique_aliases, width, Par};
use sections::{
    cte_sections, place_in_branches, print_sections, print_sections_at, subqueries, References,
    Section, REFERENCES,
};
use titles::{parameterized_inner, title_and_details};

pub use deparse::deparse;
use deparse::PARAM_NAMES;
pub(crate) use deparse::{literal, operand};

use super::{JoinKind, Node, Plan, TableFunc};
use crate::exec::NodeStats;
use crate::nodes::expr::ExprKind;
use crate::plan::folded::{is_gate, Recorded};

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
    explain_with(plan, flags, stats, &Recorded::default())
}

/// The lines of EXPLAIN output for `plan`, whose planning folded the
/// subqueries `rec` records (and whose constants [`folded::mark`] may
/// have replaced by the folds' parameters).
///
/// [`folded::mark`]: crate::plan::folded::mark
pub fn explain_with(
    plan: &Plan,
    flags: ExplainFlags,
    stats: Option<&[NodeStats]>,
    rec: &Recorded,
) -> Vec<String> {
    explain_parts(plan, flags, stats, rec, false).1
}

/// The lines of EXPLAIN output for `plan` below a node of its own (a
/// ModifyTable's `Update on t`): the statement's InitPlans, to print
/// under that node at two spaces, and the plan's lines.
pub fn explain_below(
    plan: &Plan,
    flags: ExplainFlags,
    stats: Option<&[NodeStats]>,
    rec: &Recorded,
) -> (Vec<String>, Vec<String>) {
    explain_parts(plan, flags, stats, rec, true)
}

/// [`explain_with`]; with `hoist`, the InitPlans apart.
fn explain_parts(
    plan: &Plan,
    flags: ExplainFlags,
    stats: Option<&[NodeStats]>,
    rec: &Recorded,
    hoist: bool,
) -> (Vec<String>, Vec<String>) {
    let mut plan = plan.clone();
    let mut used = std::collections::HashSet::new();
    unique_aliases(&mut plan, &mut used);
    let plan = &plan;
    let mut sections = subqueries(plan, rec, flags, &mut used);
    place_in_branches(plan, &mut sections);
    // A subquery's relations are entries of PostgreSQL's range table too.
    let qualify = relations(plan) > 1 || !sections.is_empty();
    let (hoisted, sections): (Vec<Section>, Vec<Section>) =
        sections.into_iter().partition(|s| hoist && s.is_init());
    let mut head = Vec::new();
    print_sections(&hoisted, true, flags, 2, &mut head);
    let mut out = Vec::new();
    let mut cx = Explainer {
        flags,
        stats,
        out: &mut out,
        cte_root: top_node(plan) as *const Plan as usize,
        out_qualify: qualify,
        sections: &sections,
    };
    let at = At {
        depth: 0,
        top: true,
        extra: &[],
        output: None,
        physical: false,
        par: Par {
            qualify: qualify || flags.verbose,
            ..Par::default()
        },
    };
    node(&mut cx, plan, at, &mut 0);
    print_sections(&sections, false, flags, 2, &mut out);
    REFERENCES.with(|r| *r.borrow_mut() = References::default());
    (head, out)
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
    /// The statement's subqueries: the InitPlans print under `cte_root`.
    sections: &'a [Section],
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
            let line = (cx.flags.verbose && at.output.is_none() && !hidden).then(|| {
                // An empty select list prints no line.
                match exprs.is_empty() {
                    true => String::new(),
                    false => verbose::projection_line(input, exprs, cx.out_qualify),
                }
            });
            let output = at.output.or(line.as_deref());
            node(cx, input, At { output, ..at }, id);
            return;
        }
        // A condition over InitPlans alone: a Result gating its input.
        Node::Filter { input, predicate } if gate_node(plan) => {
            let mut details = vec![format!("One-Time Filter: {}", deparse(predicate, &[]))];
            if cx.flags.verbose {
                // The Result passes its input's columns on.
                let out = match at.output {
                    Some(o) => Some(o.to_string()),
                    None => verbose::output_line(input, cx.out_qualify, at.physical),
                };
                details.splice(0..0, out.filter(|o| !o.is_empty()));
            }
            header(cx, plan, at, my_id, "Result".into(), details);
            inputs(cx, plan, at, my_id, id);
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
    let me = plan as *const Plan as usize;
    let pad = if at.top { 2 } else { at.depth * 6 + 2 };
    if me == cx.cte_root {
        cte_sections(cx, plan, at, inner);
        print_sections_at(cx.sections, 0, cx.flags, pad, cx.out);
    }
    print_sections_at(cx.sections, me, cx.flags, pad, cx.out);
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
        Node::Filter { .. } if gate_node(plan) => plan,
        Node::Project { input, .. } | Node::Filter { input, .. } => top_node(input),
        _ => plan,
    }
}

/// Whether `plan` is a filter over InitPlans alone above its input, which
/// prints as a Result (over a FROM-less Result it gates that one).
fn gate_node(plan: &Plan) -> bool {
    match &plan.node {
        Node::Filter { input, predicate } => {
            is_gate(predicate)
                && !(matches!(input.node, Node::Values { .. }) && input.fields.is_empty())
        }
        _ => false,
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
