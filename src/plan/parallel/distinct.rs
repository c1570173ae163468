//! Parallel DISTINCT (PostgreSQL 15's `create_partial_distinct_paths`): a
//! DISTINCT over one table's sequential scan runs under a plain
//! [`Node::Gather`] when that costs least.
//!
//! Beside the serial form the planner made (a hash DISTINCT, or `Unique`
//! over `Sort`), the forms weighed are, over a Parallel Seq Scan:
//! - a partial `HashAggregate` in every participant (`enable_hashagg`),
//!   gathered, then made distinct again by `Unique` over `Sort` or by a
//!   `HashAggregate` (two participants can return the same row);
//! - the scan's rows gathered, then `Unique` over `Sort` or a
//!   `HashAggregate`.
//!
//! Each is costed with PostgreSQL's formulas ([`super::super::cost`]); as
//! `add_path`, a form whose cost is within one percent of another's and
//! whose rows come out sorted beats the unsorted one, and the cheapest
//! remaining form is taken. A `Sort` above the DISTINCT (ORDER BY) makes
//! the sorted forms pointless, so they are not weighed under one.
//!
//! Invariants: only DISTINCT over all output columns is rewritten (never
//! DISTINCT ON); the input is projections and filters over a sequential
//! scan with no call a worker may not make, of a table of at least
//! `min_parallel_table_scan_size` pages; the rewritten plan returns the
//! same rows as the serial one.

use super::super::cost::{self, Cost};
use super::super::estimate::{column_ndistinct, column_origins};
use super::super::{Node, Plan, SortKey};
use super::{calls_parallel_unsafe, TableShape};
use crate::nodes::expr::{Expr, ExprKind};
use crate::settings::Settings;

/// PostgreSQL's number of distinct values of a column without statistics
/// (`DEFAULT_NUM_DISTINCT`).
const DEFAULT_NUM_DISTINCT: f64 = 200.0;

/// What the choice needs of the parallel settings and the table sizes.
pub(super) struct Env<'a> {
    pub settings: &'a Settings,
    pub workers: usize,
    pub min_pages: u64,
    pub tables: &'a dyn TableShape,
}

/// The DISTINCT's rows: hashed, or sorted on these keys.
enum Final {
    Hash,
    Sorted(Vec<SortKey>),
}

/// Below the Gather: the scan's rows, or a partial hash aggregation.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Partial {
    Rows,
    Hash,
}

/// The scan under a DISTINCT's input, and what evaluating the input costs.
struct Input {
    pages: f64,
    tuples: f64,
    /// Qualifier cost per scanned tuple.
    qual: f64,
    /// Target list cost per row.
    target: f64,
    /// The top projection calls user functions declared PARALLEL SAFE,
    /// which the leader computes above the Gather.
    lift: bool,
}

/// One form weighed: its cost, whether its rows come out in the order
/// wanted, and (for the parallel forms) how it is built.
struct Form {
    cost: Cost,
    sorted: bool,
    /// What ORDER BY then adds (a sort of an unsorted form's rows).
    then: f64,
    /// `None` for the serial form.
    build: Option<Build>,
}

/// How to build a parallel form.
#[derive(Clone, Debug)]
struct Build {
    partial: Partial,
    /// The Sort under the final Unique (None: a hash DISTINCT).
    sort: Option<Vec<SortKey>>,
    /// Rows the Gather passes up.
    gathered: f64,
    /// The DISTINCT's rows.
    groups: f64,
    /// The input's top projection goes above the Gather.
    lift: bool,
}

/// Rewrites `plan` — a DISTINCT, or a Sort (ORDER BY) over a hash
/// DISTINCT — into its cheapest parallel form when one costs less than
/// the serial one; `ordered_above` when a Sort is its parent. Returns
/// whether it did.
pub(super) fn rewrite(plan: &mut Plan, env: &Env<'_>, ordered_above: bool) -> bool {
    let Some(b) = decide(plan, env, ordered_above) else {
        return false;
    };
    let sorts_too = b.sort.is_some();
    match &mut plan.node {
        Node::Sort { input, .. } if !sorts_too => build(input, &b, env.workers),
        _ => build(plan, &b, env.workers),
    }
    true
}

/// The parallel form to build instead of `plan`, if one is cheapest.
fn decide(plan: &Plan, env: &Env<'_>, ordered_above: bool) -> Option<Build> {
    let width = plan.fields.len();
    let (input, serial_final, order) = match &plan.node {
        Node::Sort { input, keys } => match &input.node {
            Node::Distinct { input } if keys.iter().all(|k| k.column < width) => {
                (input, Final::Hash, Some(keys.as_slice()))
            }
            _ => return None,
        },
        Node::Distinct { input } => (input, Final::Hash, None),
        Node::Unique { input, columns } if columns.len() == width => match &input.node {
            Node::Sort { input, keys } => (input, Final::Sorted(keys.clone()), None),
            _ => return None,
        },
        _ => return None,
    };
    let sorted_keys = match (&serial_final, order) {
        (_, Some(o)) => Some(sorted_distinct_keys(o, width)),
        _ if ordered_above => None,
        (Final::Sorted(k), None) => Some(k.clone()),
        (Final::Hash, None) => Some(sorted_distinct_keys(&[], width)),
    };
    let shape = input_shape(input, env)?;
    let s = env.settings;
    let n = input.rows.max(1.0);
    let bytes = row_width(plan);
    let groups = group_estimate(input, n);
    let k = width;
    let row = Row {
        columns: k,
        bytes,
        target: shape.target,
    };
    // With ORDER BY above a hash DISTINCT, its groups are sorted after.
    let then = match order {
        Some(_) => {
            let zero = Cost {
                startup: 0.0,
                total: 0.0,
            };
            cost::sort(s, zero, groups, bytes).total
        }
        None => 0.0,
    };
    let serial_scan = cost::seq_scan(s, shape.pages, shape.tuples, n, shape.qual, shape.target, 0);
    let mut forms = vec![Form {
        cost: finish(s, serial_scan, n, row, groups, &serial_final),
        sorted: matches!(serial_final, Final::Sorted(_)),
        then,
        build: None,
    }];
    let partial_scan = cost::seq_scan(
        s,
        shape.pages,
        shape.tuples,
        n,
        shape.qual,
        shape.target,
        env.workers,
    );
    let per_worker = (n / cost::parallel_divisor(env.workers)).round().max(1.0);
    let mut partials = vec![(Partial::Rows, partial_scan, n)];
    if s.enable_hashagg && !shape.lift {
        let g = group_estimate(input, per_worker);
        let agg = cost::hash_distinct(s, partial_scan, per_worker, k, g, shape.target);
        partials.push((Partial::Hash, agg, g * env.workers as f64));
    }
    for (partial, c, gathered) in partials {
        let g = cost::gather(s, c, gathered);
        if s.enable_hashagg {
            forms.push(Form {
                cost: finish(s, g, gathered, row, groups, &Final::Hash),
                sorted: false,
                then,
                build: Some(Build {
                    partial,
                    sort: None,
                    gathered,
                    groups,
                    lift: shape.lift,
                }),
            });
        }
        if let Some(keys) = &sorted_keys {
            let how = Final::Sorted(keys.clone());
            forms.push(Form {
                cost: finish(s, g, gathered, row, groups, &how),
                sorted: true,
                then: 0.0,
                build: Some(Build {
                    partial,
                    sort: Some(keys.clone()),
                    gathered,
                    groups,
                    lift: shape.lift,
                }),
            });
        }
    }
    forms.swap_remove(choose(&forms)).build
}

/// `plan` (a DISTINCT, or a Sort over one when `b` sorts) rebuilt as `b`.
fn build(plan: &mut Plan, b: &Build, workers: usize) {
    let placeholder = Plan {
        node: Node::Values { rows: Vec::new() },
        fields: Vec::new(),
        rows: 0.0,
    };
    let old = std::mem::replace(plan, placeholder);
    let fields = old.fields;
    // The three shapes `decide` accepts: a hash DISTINCT, a Sort over
    // one, and a Unique over a Sort.
    let input = match old.node {
        Node::Distinct { input } => *input,
        Node::Sort { input, .. } => match input.node {
            Node::Distinct { input } => *input,
            _ => unreachable!("a sorted DISTINCT was checked"),
        },
        Node::Unique { input, .. } => match input.node {
            Node::Sort { input, .. } => *input,
            _ => unreachable!("a Unique over a Sort was checked"),
        },
        _ => unreachable!("a DISTINCT was checked"),
    };
    let rows = input.rows;
    let (input, lifted) = if b.lift {
        match input.node {
            Node::Project { input, exprs } => (*input, Some((exprs, rows))),
            _ => unreachable!("a lifted projection was checked"),
        }
    } else {
        (input, None)
    };
    let below = match b.partial {
        Partial::Rows => input,
        Partial::Hash => Plan {
            rows: b.gathered / workers as f64,
            fields: fields.clone(),
            node: Node::Aggregate {
                group: fields
                    .iter()
                    .enumerate()
                    .map(|(i, f)| Expr::column(i, f.ty))
                    .collect(),
                aggs: Vec::new(),
                input: Box::new(input),
            },
        },
    };
    let mut gather = Plan {
        rows: b.gathered,
        fields: below.fields.clone(),
        node: Node::Gather {
            input: Box::new(below),
            workers,
            finalize: false,
        },
    };
    if let Some((exprs, rows)) = lifted {
        gather = Plan {
            rows,
            fields: fields.clone(),
            node: Node::Project {
                input: Box::new(gather),
                exprs,
            },
        };
    }
    let node = match &b.sort {
        Some(keys) => Node::Unique {
            input: Box::new(Plan {
                rows: b.gathered,
                fields: fields.clone(),
                node: Node::Sort {
                    input: Box::new(gather),
                    keys: keys.clone(),
                },
            }),
            columns: (0..fields.len()).collect(),
        },
        None => Node::Distinct {
            input: Box::new(gather),
        },
    };
    *plan = Plan {
        rows: b.groups,
        fields,
        node,
    };
}

/// ORDER BY's keys followed by every other column, ascending.
fn sorted_distinct_keys(order: &[SortKey], width: usize) -> Vec<SortKey> {
    let mut keys = order.to_vec();
    for c in 0..width {
        if !keys.iter().any(|k| k.column == c) {
            keys.push(SortKey {
                column: c,
                descending: false,
                nulls_first: false,
            });
        }
    }
    keys
}

/// The form `add_path` keeps and the final choice takes: a form fuzzily
/// no cheaper than another whose rows are as well ordered is dropped (of
/// two equal ones, the later), then the cheapest total, with what ORDER BY
/// adds, remains.
fn choose(forms: &[Form]) -> usize {
    let dominated = |i: usize| {
        let a = &forms[i];
        forms.iter().enumerate().any(|(j, b)| {
            j != i
                && cost::fuzzily_no_worse(b.cost, a.cost)
                && (b.sorted || !a.sorted)
                && (!cost::fuzzily_no_worse(a.cost, b.cost) || (b.sorted && !a.sorted) || j < i)
        })
    };
    let mut best: Option<usize> = None;
    for i in 0..forms.len() {
        if dominated(i) {
            continue;
        }
        let total = |f: &Form| f.cost.total + f.then;
        if best.map_or(true, |b| total(&forms[i]) < total(&forms[b])) {
            best = Some(i);
        }
    }
    best.unwrap_or(0)
}

/// What a DISTINCT's rows are: columns, bytes, and the cost of computing
/// the target list once (a hash aggregation's output pays it per group).
#[derive(Clone, Copy)]
struct Row {
    columns: usize,
    bytes: usize,
    target: f64,
}

/// The DISTINCT on top of `input`'s `rows` rows.
fn finish(s: &Settings, input: Cost, rows: f64, row: Row, groups: f64, how: &Final) -> Cost {
    let (k, bytes) = (row.columns, row.bytes);
    let disabled = |on: bool| if on { 0.0 } else { 1.0e10 };
    match how {
        Final::Hash => cost::hash_distinct(s, input, rows, k, groups, row.target)
            .then(disabled(s.enable_hashagg), 0.0),
        Final::Sorted(_) => {
            let sorted = cost::sort(s, input, rows, bytes).then(disabled(s.enable_sort), 0.0);
            cost::unique(s, sorted, rows, k)
        }
    }
}

fn row_width(plan: &Plan) -> usize {
    plan.fields
        .iter()
        .map(|f| match f.ty.attlen() {
            -1 => 32,
            n => n as usize,
        })
        .sum()
}

/// The scan below `input` (projections and filters over a sequential scan
/// a worker may run) and its costs, if parallel DISTINCT may be weighed.
fn input_shape(input: &Plan, env: &Env<'_>) -> Option<Input> {
    let mut lift = false;
    if calls_parallel_unsafe(input) {
        let Node::Project { input, exprs } = &input.node else {
            return None;
        };
        if calls_parallel_unsafe(input) || exprs.iter().any(declared_unsafe) {
            return None;
        }
        lift = true;
    }
    let s = env.settings;
    let mut qual = 0.0;
    let mut target = 0.0;
    let mut p = input;
    loop {
        match &p.node {
            Node::Project { input, exprs } => {
                target += exprs.iter().map(|e| cost::expr_cost(s, e)).sum::<f64>();
                p = input;
            }
            Node::Filter { input, predicate } => {
                qual += cost::expr_cost(s, predicate);
                p = input;
            }
            Node::SeqScan {
                table,
                filter,
                with_tid: false,
                ..
            } => {
                let pages = env.tables.pages(table) as u64;
                if pages < env.min_pages {
                    return None;
                }
                qual += filter.as_ref().map_or(0.0, |f| cost::expr_cost(s, f));
                let tuples = table
                    .stats
                    .as_ref()
                    .map_or(p.rows, |t| t.reltuples)
                    .max(p.rows);
                return Some(Input {
                    pages: pages as f64,
                    tuples,
                    qual,
                    target,
                    lift,
                });
            }
            _ => return None,
        }
    }
}

/// PostgreSQL's `estimate_num_groups` for all of `input`'s columns over
/// `rows` input rows, much reduced: a column traced to a table column
/// with statistics counts its distinct values; an expression without
/// columns counts one value, or every row when volatile; anything else
/// counts `DEFAULT_NUM_DISTINCT` (or `rows`, when fewer). The product is
/// clamped to `rows`.
fn group_estimate(input: &Plan, rows: f64) -> f64 {
    let origins = column_origins(input);
    let exprs = match &input.node {
        Node::Project { exprs, .. } => Some(exprs),
        _ => None,
    };
    let mut product = 1.0;
    for i in 0..input.fields.len() {
        let d = match column_ndistinct(&origins, i) {
            Some(d) => d,
            None => match exprs.and_then(|e| e.get(i)) {
                Some(e) if !mentions_column(e) => {
                    if cost::is_volatile(e) {
                        return rows;
                    }
                    1.0
                }
                _ => DEFAULT_NUM_DISTINCT.min(rows),
            },
        };
        product *= d.max(1.0);
    }
    product.min(rows).max(1.0).round()
}

/// Whether `e` calls a function PostgreSQL plans no parallel scan under
/// (one not declared PARALLEL SAFE).
fn declared_unsafe(e: &Expr) -> bool {
    matches!(&e.kind, ExprKind::Func(f, _) if !f.0.declared_parallel_safe())
        || e.children().into_iter().any(declared_unsafe)
}

fn mentions_column(e: &Expr) -> bool {
    matches!(e.kind, ExprKind::Column(_)) || e.children().into_iter().any(mentions_column)
}
