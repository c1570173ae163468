//! SELECT DISTINCT, DISTINCT ON and `FETCH FIRST ... WITH TIES`: the
//! sorted forms of removing duplicates and of cutting a result.
//!
//! A plain DISTINCT hashes whole rows (`Node::Distinct`) unless
//! `enable_hashagg` is off; then, as PostgreSQL, it sorts on the ORDER BY
//! keys followed by the other output columns and keeps the first of each
//! run of equal rows (`Node::Unique`), which also satisfies the ORDER BY.
//!
//! DISTINCT ON follows PostgreSQL's `transformDistinctOnClause`: the
//! DISTINCT ON expressions must be the leading ORDER BY items (in any
//! order among themselves); the sort is on the ORDER BY items that are
//! DISTINCT ON expressions, then the DISTINCT ON expressions ORDER BY
//! does not name (ascending), then the rest of ORDER BY, and `Unique` keeps
//! the first row of each group — so which row survives is decided by
//! ORDER BY.
//!
//! Invariant: the columns a `Unique` or `LimitTies` node compares are
//! leading sort keys of the Sort below it, so equal rows are adjacent.

use heapdb_grammar::ast;

use super::super::bind::at;
use super::super::{Node, Plan, SortKey};
use crate::err;
use crate::error::Result;

/// How a SELECT removes duplicates.
pub(super) enum DistinctPlan {
    /// It does not (no DISTINCT).
    None,
    /// Hashing whole rows.
    Hash,
    /// Sorting, then `Unique` over all output columns.
    Sorted,
    /// DISTINCT ON these output columns: sorting, then `Unique` over them.
    On(Vec<usize>),
}

/// The sort keys of DISTINCT ON: checks that `on` (the DISTINCT ON
/// expressions' columns, `exprs` their syntax for error positions) lead
/// `order` and returns ORDER BY's leading DISTINCT ON items, the other
/// DISTINCT ON columns ascending, then the rest of ORDER BY.
pub(super) fn distinct_on_keys(
    on: &[usize],
    exprs: &[ast::Expr],
    order: &[SortKey],
) -> Result<Vec<SortKey>> {
    let mismatch = |j: usize| {
        at(
            err!(
                InvalidColumnReference,
                "SELECT DISTINCT ON expressions must match initial ORDER BY expressions"
            ),
            exprs[j].offset,
        )
    };
    let mut keys: Vec<SortKey> = Vec::new();
    let mut skipped = false;
    for k in order {
        match on.iter().position(|&c| c == k.column) {
            Some(j) if skipped => return Err(mismatch(j)),
            Some(_) => {
                if !keys.iter().any(|x| x.column == k.column) {
                    keys.push(k.clone());
                }
            }
            None => skipped = true,
        }
    }
    for (j, &c) in on.iter().enumerate() {
        if keys.iter().any(|x| x.column == c) {
            continue;
        }
        if skipped {
            return Err(mismatch(j));
        }
        keys.push(SortKey {
            column: c,
            descending: false,
            nulls_first: false,
        });
    }
    for k in order {
        if !keys.iter().any(|x| x.column == k.column) {
            keys.push(k.clone());
        }
    }
    Ok(keys)
}

/// The sort keys of a sorted DISTINCT over `width` columns: ORDER BY's,
/// then every other column ascending.
pub(super) fn sorted_distinct_keys(order: Vec<SortKey>, width: usize) -> Vec<SortKey> {
    let mut keys = order;
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

/// `input` sorted on `keys`, then only the first row of each run equal on
/// `columns`.
pub(super) fn sort_unique(input: Plan, keys: Vec<SortKey>, columns: Vec<usize>) -> Plan {
    let fields = input.fields.clone();
    let rows = input.rows;
    let sorted = Plan {
        rows,
        fields: fields.clone(),
        node: Node::Sort {
            input: Box::new(input),
            keys,
        },
    };
    Plan {
        // As PostgreSQL's estimate without statistics on the keys: a tenth.
        rows: (rows / 10.0).max(1.0).min(rows),
        fields,
        node: Node::Unique {
            input: Box::new(sorted),
            columns,
        },
    }
}

/// `FETCH FIRST n ROWS WITH TIES`'s limit and offset.
#[derive(Clone, Copy)]
pub(super) struct Ties {
    /// At most this many rows before ties (None: all).
    pub limit: Option<u64>,
    /// Rows skipped first.
    pub offset: u64,
}

/// The error of WITH TIES without ORDER BY.
pub(super) fn ties_without_order() -> crate::error::Error {
    err!(
        SyntaxError,
        "WITH TIES cannot be specified without ORDER BY clause"
    )
}

/// `plan` cut by `t`, ties compared on `columns`.
pub(super) fn limit_ties(plan: Plan, t: Ties, columns: Vec<usize>) -> Plan {
    let rows = (plan.rows - t.offset as f64).max(0.0);
    Plan {
        rows: t.limit.map_or(rows, |l| rows.min(l as f64)),
        fields: plan.fields.clone(),
        node: Node::LimitTies {
            input: Box::new(plan),
            limit: t.limit,
            offset: t.offset,
            ties: columns,
        },
    }
}

/// WITH TIES over a set operation or VALUES: its ORDER BY is the Sort at
/// the top of `plan`.
pub(super) fn limit_ties_over_sort(plan: Plan, t: Ties) -> Result<Plan> {
    let Node::Sort { keys, .. } = &plan.node else {
        return Err(ties_without_order());
    };
    let columns = keys.iter().map(|k| k.column).collect();
    Ok(limit_ties(plan, t, columns))
}
