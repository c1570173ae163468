//! Parallel plans: which aggregations run as a [`Node::Gather`].
//!
//! After a query is planned, [`parallelize`] wraps an [`Node::Aggregate`]
//! in a `Gather` when all of these hold:
//! - `max_parallel_workers_per_gather` is above zero;
//! - the aggregation takes the typed path whose partial states combine
//!   exactly ([`crate::exec::fastpath::hash_agg::eligible`]: at most one integer group
//!   key; count, sum, avg, min, max of integers);
//! - its input has a *driving scan* ([`driving_scan`]): a sequential scan
//!   reached from the aggregate through projections, filters and the probe
//!   side of inner hash joins, so that splitting that scan's pages between
//!   participants splits the input rows (every other input, such as a hash
//!   join's build side, is read whole by each participant, as PostgreSQL's
//!   non-shared parallel hash join does);
//! - no expression of its input calls a function a worker may not call
//!   (a user function, `random()`: [`Expr::calls_parallel_unsafe`]), as
//!   PostgreSQL plans no parallel scan under a PARALLEL UNSAFE function;
//! - the driving scan's table has at least `min_parallel_table_scan_size`
//!   pages (8 MB by default, as in PostgreSQL);
//! - it is not a bare `count(*)` of a table whose visibility map marks at
//!   least half the pages all-visible: that count sums the map's live
//!   counts and reads only the other pages, so starting workers would cost
//!   more than the count (milliseconds against a fraction of one);
//! - for the same reason, with `enable_page_summaries` on, it is not an
//!   aggregation without a filter that page summaries answer
//!   ([`crate::exec::fastpath::summaries::usable`]) over such a table:
//!   its all-visible pages are taken a window of 32 at a time from cached
//!   summaries (tens of microseconds for a million rows);
//! - nor, with `enable_page_summaries` on, a filtered or grouped
//!   aggregation that summaries can take pages for (a grouped one takes
//!   the pages whose rows share one key) when a sample of the table's windows
//!   ([`TableShape::summary_decided_fraction`]) shows at least half its
//!   pages answered or skipped from them without being read (a count
//!   under a qualifier every row passes, a range all pages fall in or
//!   out of): the serial scan reads only the boundary pages.
//!
//! The aggregation above the Gather is not parallelized again, and an
//! aggregation inside a Gather's input runs in every participant whole (it
//! never has a driving scan, so it is left alone).
//!
//! A DISTINCT over a sequential scan may instead run as a plain Gather
//! under a final `Unique` or hash DISTINCT, when PostgreSQL's costs make
//! that cheapest ([`distinct`]).

mod distinct;

use super::{Node, Plan};
use crate::catalog::TableDef;
use crate::exec::fastpath::hash_agg;
use crate::exec::fastpath::summaries::{self, SummaryPlan};
use crate::exec::scan::is_count_star;
use crate::nodes::expr::Expr;
pub use crate::nodes::plannodes::driving_scan;
use crate::settings::Settings;

/// What the parallel planner needs to know of a table.
pub trait TableShape {
    /// The table's current size in pages.
    fn pages(&self, table: &TableDef) -> u32;
    /// The fraction (0..=1) of its pages the visibility map marks
    /// all-visible (an estimate is fine).
    fn all_visible_fraction(&self, table: &TableDef) -> f64;
    /// The fraction (0..=1) of its pages `plan` would answer or skip from
    /// page summaries (an estimate is fine; 0 when unknown).
    fn summary_decided_fraction(&self, _table: &TableDef, _plan: &SummaryPlan) -> f64 {
        0.0
    }
}

/// Wraps every aggregation of `plan` that qualifies (module doc) in a
/// [`Node::Gather`].
pub fn parallelize(plan: &mut Plan, settings: &Settings, tables: &dyn TableShape) {
    let workers = settings.max_parallel_workers_per_gather.max(0) as usize;
    if workers == 0 {
        return;
    }
    let min_pages = settings.min_parallel_table_scan_size.max(0) as u64;
    let limits = Limits {
        min_pages,
        summaries: settings.enable_page_summaries,
    };
    let env = distinct::Env {
        settings,
        workers,
        min_pages,
        tables,
    };
    walk(plan, &env, limits, false);
}

/// What keeps an aggregation from running in parallel (module doc).
#[derive(Debug, Clone, Copy)]
struct Limits {
    /// `min_parallel_table_scan_size` in pages.
    min_pages: u64,
    /// `enable_page_summaries`.
    summaries: bool,
}

/// Parallelizes what qualifies in `plan`; `ordered_above` when its parent
/// is a Sort.
fn walk(plan: &mut Plan, env: &distinct::Env<'_>, limits: Limits, ordered_above: bool) {
    let (workers, tables) = (env.workers, env.tables);
    if distinct::rewrite(plan, env, ordered_above) {
        return;
    }
    if qualifies(plan, limits, tables) {
        let fields = plan.fields.clone();
        let rows = plan.rows;
        let placeholder = Plan {
            node: Node::Values { rows: Vec::new() },
            fields: Vec::new(),
            rows: 0.0,
        };
        let aggregate = std::mem::replace(plan, placeholder);
        *plan = Plan {
            node: Node::Gather {
                input: Box::new(aggregate),
                workers,
                finalize: true,
            },
            fields,
            rows,
        };
        return;
    }
    let sort = matches!(plan.node, Node::Sort { .. });
    for child in plan.children_mut() {
        walk(child, env, limits, sort);
    }
}

/// Whether an expression of `plan` or of its inputs calls a function a
/// parallel worker may not call.
fn calls_parallel_unsafe(plan: &Plan) -> bool {
    plan.node
        .exprs()
        .into_iter()
        .any(Expr::calls_parallel_unsafe)
        || plan.children().into_iter().any(calls_parallel_unsafe)
}

fn qualifies(plan: &Plan, limits: Limits, tables: &dyn TableShape) -> bool {
    let Node::Aggregate { input, group, aggs } = &plan.node else {
        return false;
    };
    if !hash_agg::eligible(group, aggs) || calls_parallel_unsafe(plan) {
        return false;
    }
    match driving_scan(input).map(|s| &s.node) {
        Some(Node::SeqScan { table, filter, .. }) => {
            if (tables.pages(table) as u64) < limits.min_pages {
                return false;
            }
            let plan = limits
                .summaries
                .then(|| summaries::plan_of(input, group, aggs))
                .flatten();
            let whole = plan.as_ref().is_some_and(|p| !p.grouped());
            if is_count_star(input, group, aggs) || (filter.is_none() && whole) {
                return tables.all_visible_fraction(table) < 0.5;
            }
            match plan {
                Some(p) => tables.summary_decided_fraction(table, &p) < 0.5,
                None => true,
            }
        }
        _ => false,
    }
}
