//! Volatile select-list columns computed after ORDER BY's sort, as
//! PostgreSQL's `make_sort_input_target` postpones them.
//!
//! `SELECT nextval(..), f(a) FROM t ORDER BY b LIMIT 2` calls the volatile
//! functions for the sorted rows, in sorted order, and only for the rows
//! the LIMIT keeps. So when a select list has a column that calls a
//! volatile function and is no sort key, the plan becomes: a projection
//! of the input's columns and the other select-list columns, the sort
//! over it, then a projection computing the postponed columns (the LIMIT
//! goes above that one, and its per-row evaluation stops with the LIMIT).
//!
//! Only plain ORDER BY takes this shape: with DISTINCT, DISTINCT ON or
//! WITH TIES the columns are computed before the sort, as before.

use super::super::{Node, Plan, SortKey};
use super::project;
use crate::nodes::expr::Expr;

/// Whether select-list column `i` (of `exprs`, `visible` wide) is computed
/// after the sort on `keys`.
fn postponed(exprs: &[Expr], keys: &[SortKey], visible: usize, i: usize) -> bool {
    i < visible && exprs[i].calls_volatile() && !keys.iter().any(|k| k.column == i)
}

/// Whether a column of the select list `exprs` (`visible` wide, then
/// ORDER BY's hidden columns) is computed after the sort on `keys`.
pub(super) fn any_postponed(exprs: &[Expr], keys: &[SortKey], visible: usize) -> bool {
    (0..visible).any(|i| postponed(exprs, keys, visible, i))
}

/// The sort of `plan`'s select list `exprs` on `keys` with the volatile
/// columns computed after it (module doc). The result has the `visible`
/// select-list columns only.
pub(super) fn sort_then_volatile(
    plan: Plan,
    exprs: &[Expr],
    names: &[String],
    keys: &[SortKey],
    visible: usize,
) -> Plan {
    let mut below: Vec<Expr> = plan
        .fields
        .iter()
        .enumerate()
        .map(|(i, f)| Expr::column(i, f.ty))
        .collect();
    let mut below_names: Vec<String> = plan.fields.iter().map(|f| f.name.clone()).collect();
    // Where each select-list column that is not postponed lands below.
    let mut at: Vec<Option<usize>> = vec![None; exprs.len()];
    for (i, (e, n)) in exprs.iter().zip(names).enumerate() {
        if !postponed(exprs, keys, visible, i) {
            at[i] = Some(below.len());
            below.push(e.clone());
            below_names.push(n.clone());
        }
    }
    let below = project(plan, below, below_names);
    let keys = keys
        .iter()
        .map(|k| SortKey {
            column: at[k.column].expect("a sort key is computed below"),
            ..k.clone()
        })
        .collect();
    let sorted = Plan {
        rows: below.rows,
        fields: below.fields.clone(),
        node: Node::Sort {
            input: Box::new(below),
            keys,
        },
    };
    let above: Vec<Expr> = (0..visible)
        .map(|i| match at[i] {
            Some(pos) => Expr::column(pos, exprs[i].ty),
            None => exprs[i].clone(),
        })
        .collect();
    project(sorted, above, names[..visible].to_vec())
}
