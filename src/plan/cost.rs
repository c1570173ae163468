//! Plan costs in PostgreSQL's units (`costsize.c`, reduced to what the
//! choices between DISTINCT's forms compare): a sequential scan, serial or
//! parallel, a Gather, a sort, a hash aggregation, a Unique, and the
//! per-row cost of evaluating an expression.
//!
//! The figures are PostgreSQL's formulas over the settings of the same
//! names (`seq_page_cost`, `cpu_tuple_cost`, `cpu_operator_cost`,
//! `parallel_setup_cost`, `parallel_tuple_cost`, `work_mem`), so that the
//! cheapest form here is the one PostgreSQL picks on the same estimates.
//! Only differences between forms over the same input matter to their
//! callers; nothing here is shown to users.

use crate::nodes::expr::{Expr, ExprKind};
use crate::settings::Settings;
use crate::types::funcs::volatility::Volatility;
use crate::types::funcs::ScalarFunc;

/// A path's startup and total cost.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cost {
    /// Before the first row.
    pub startup: f64,
    /// For all rows.
    pub total: f64,
}

impl Cost {
    /// `self` followed by a node that adds `startup` before its first row
    /// and `run` after it.
    pub fn then(self, startup: f64, run: f64) -> Cost {
        Cost {
            startup: self.startup + startup,
            total: self.total + startup + run,
        }
    }

    /// A node that reads all of `self` before its first row, then adds
    /// `run`.
    pub fn blocking(self, startup: f64, run: f64) -> Cost {
        Cost {
            startup: self.total + startup,
            total: self.total + startup + run,
        }
    }
}

/// PostgreSQL's default `procost` of a function written in SQL or PL/pgSQL.
const USER_FUNCTION_COST: f64 = 100.0;

/// The cost of evaluating `e` once (`cost_qual_eval`): `cpu_operator_cost`
/// per operator and built-in function call, a hundred times that per user
/// function call.
pub fn expr_cost(s: &Settings, e: &Expr) -> f64 {
    let own = match &e.kind {
        ExprKind::Func(f, _) if matches!(f.0, ScalarFunc::User(_)) => USER_FUNCTION_COST,
        ExprKind::Func(..)
        | ExprKind::Binary(..)
        | ExprKind::Neg(_)
        | ExprKind::Like(..)
        | ExprKind::IsDistinct(..)
        | ExprKind::InList(..)
        | ExprKind::InSet(..) => 1.0,
        _ => 0.0,
    };
    own * s.cpu_operator_cost
        + e.children()
            .into_iter()
            .map(|c| expr_cost(s, c))
            .sum::<f64>()
}

/// Whether `e` calls a volatile function.
pub fn is_volatile(e: &Expr) -> bool {
    matches!(&e.kind, ExprKind::Func(f, _) if f.0.volatility() == Volatility::Volatile)
        || e.children().into_iter().any(is_volatile)
}

/// Whether any expression of `plan` or of its inputs calls a volatile
/// function.
pub fn plan_volatile(plan: &crate::nodes::Plan) -> bool {
    plan.node.exprs().into_iter().any(is_volatile) || plan.children().into_iter().any(plan_volatile)
}

/// PostgreSQL's share of a parallel scan's rows one participant is
/// expected to take with `workers` workers and the leader taking part
/// (`get_parallel_divisor`).
pub fn parallel_divisor(workers: usize) -> f64 {
    let w = workers as f64;
    let leader = 1.0 - 0.3 * w;
    if leader > 0.0 {
        w + leader
    } else {
        w
    }
}

/// A sequential scan of `pages` pages and `tuples` tuples, checking a
/// qualifier costing `qual` per tuple and computing a target list costing
/// `target` per returned row (`rows`); with `workers`, the CPU part is
/// divided among the participants (`cost_seqscan`).
pub fn seq_scan(
    s: &Settings,
    pages: f64,
    tuples: f64,
    rows: f64,
    qual: f64,
    target: f64,
    workers: usize,
) -> Cost {
    let disk = s.seq_page_cost * pages;
    let mut cpu = (s.cpu_tuple_cost + qual) * tuples + target * rows;
    if workers > 0 {
        cpu /= parallel_divisor(workers);
    }
    Cost {
        startup: 0.0,
        total: disk + cpu,
    }
}

/// A Gather passing up `rows` rows of `input` (`cost_gather`).
pub fn gather(s: &Settings, input: Cost, rows: f64) -> Cost {
    input.then(s.parallel_setup_cost, s.parallel_tuple_cost * rows)
}

/// A sort of `input`'s `rows` rows of `width` bytes (`cost_sort`: an
/// in-memory quicksort, or an external merge sort past `work_mem`).
pub fn sort(s: &Settings, input: Cost, rows: f64, width: usize) -> Cost {
    let tuples = rows.max(2.0);
    let comparison = 2.0 * s.cpu_operator_cost;
    let bytes = tuples * (align8(width) + 24.0);
    let mem = (s.work_mem_kb.max(64) * 1024) as f64;
    let mut startup = comparison * tuples * tuples.log2();
    if bytes > mem {
        let pages = (bytes / 8192.0).ceil();
        let runs = bytes / mem;
        // `tuplesort_merge_order`: one tape buffer (and its overhead) per
        // input run, at least six.
        let order = (mem / (3.0 * 8192.0 + 256.0 * 1024.0)).floor().max(6.0);
        let log_runs = if runs > order {
            (runs.ln() / order.ln()).ceil()
        } else {
            1.0
        };
        let accesses = 2.0 * pages * log_runs;
        startup += accesses * (s.seq_page_cost * 0.75 + s.random_page_cost * 0.25);
    }
    input.blocking(startup, s.cpu_operator_cost * tuples)
}

/// A Unique comparing `columns` columns of `input`'s `rows` rows
/// (`create_upper_unique_path`).
pub fn unique(s: &Settings, input: Cost, rows: f64, columns: usize) -> Cost {
    input.then(0.0, s.cpu_operator_cost * rows * columns as f64)
}

/// A hash aggregation without aggregate calls of `input`'s `rows` rows on
/// `columns` keys into `groups` groups, whose output target list costs
/// `target` per group (`cost_agg` for `AGG_HASHED`, then
/// `create_agg_path`'s target cost; spilling is not costed).
pub fn hash_distinct(
    s: &Settings,
    input: Cost,
    rows: f64,
    columns: usize,
    groups: f64,
    target: f64,
) -> Cost {
    input.blocking(
        s.cpu_operator_cost * columns as f64 * rows,
        (s.cpu_tuple_cost + target) * groups,
    )
}

fn align8(width: usize) -> f64 {
    width.div_ceil(8) as f64 * 8.0
}

/// PostgreSQL's `add_path` fuzz: costs within one percent are equal.
pub const FUZZ: f64 = 1.01;

/// Whether `a` costs fuzzily no more than `b`, total then startup
/// (`compare_path_costs_fuzzily`).
pub fn fuzzily_no_worse(a: Cost, b: Cost) -> bool {
    if a.total > b.total * FUZZ {
        return false;
    }
    if b.total > a.total * FUZZ {
        return true;
    }
    a.startup <= b.startup * FUZZ
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The costs PostgreSQL 15 prints for `SELECT DISTINCT four FROM tenk1`
    /// (345 pages, 10,000 rows) with free parallelism: a Parallel Seq Scan
    /// of 0.00..386.67, a HashAggregate of 397.08..397.12 over it, and a
    /// serial HashAggregate of 470.00..470.04 over a 445.00 scan.
    #[test]
    fn matches_postgresql_figures() {
        let s = Settings::default();
        let pss = seq_scan(&s, 345.0, 10000.0, 10000.0, 0.0, 0.0, 2);
        assert!((pss.total - 386.67).abs() < 0.01, "{pss:?}");
        let partial = hash_distinct(&s, pss, 4166.67, 1, 4.0, 0.0);
        assert!((partial.startup - 397.08).abs() < 0.01, "{partial:?}");
        assert!((partial.total - 397.12).abs() < 0.01, "{partial:?}");
        let scan = seq_scan(&s, 345.0, 10000.0, 10000.0, 0.0, 0.0, 0);
        let serial = hash_distinct(&s, scan, 10000.0, 1, 4.0, 0.0);
        assert_eq!((serial.startup, serial.total), (470.0, 470.04));
        // Unique over Sort over the 2,945.00 scan computing a PL/pgSQL
        // function: 3609.39..3659.39.
        let scan = seq_scan(&s, 345.0, 10000.0, 10000.0, 0.0, 0.25, 0);
        let sorted = unique(&s, sort(&s, scan, 10000.0, 4), 10000.0, 1);
        assert!((sorted.startup - 3609.39).abs() < 0.01, "{sorted:?}");
        assert!((sorted.total - 3659.39).abs() < 0.01, "{sorted:?}");
    }
}
