//! What READ COMMITTED's re-check of a concurrently updated row evaluates
//! for the sublinks of an UPDATE's or DELETE's WHERE ([`recheck_quals`]).
//!
//! PostgreSQL turns some sublinks of WHERE into joins before planning
//! (`pull_up_sublinks`): a top-level `x IN (uncorrelated query)` (or
//! `= ANY`) and a correlated `EXISTS` become semi-joins, a correlated `NOT
//! EXISTS` an anti-join. Its EvalPlanQual re-check then holds the other
//! relation's row that matched fixed, as it holds a FROM item's; a sublink
//! kept as a SubPlan (`NOT IN`, a correlated `IN`, any sublink under `OR`)
//! is evaluated again over the new version, under the statement's
//! snapshot. heapdb runs every sublink as an InitPlan or a SubPlan, so the
//! re-check rewrites the conjuncts PostgreSQL would have pulled up:
//!
//! - `x IN (query)`: the semi-join's held row has the value `x` had on the
//!   version first read, so the re-check is `x = (x as first read)`;
//! - correlated `EXISTS (query)` whose outer values are compared by `=`
//!   alone (`where u.k = t.k and u.w > 5`): the held row matched the outer
//!   values first read, so the re-check is that each is still equal;
//!   other correlated EXISTS are evaluated again;
//! - correlated `NOT EXISTS (query)`: an anti-join row holds no row of the
//!   other relation, so the re-check finds none: the conjunct holds.
//!
//! "As first read" values are held expressions: the plan computes them over
//! the row it found and outputs them after the held columns; the re-check's
//! source row has them past the source's own columns.
//!
//! Invariant: a conjunct not of these shapes is left as it is.

use crate::exec::expr::{Expr, ExprKind};
use crate::exec::subplan::SubLinkKind;
use crate::nodes::Plan;
use crate::types::{BinaryOp, DataType};

/// WHERE's conjuncts `quals` (over a source row of `width` columns) as the
/// re-check evaluates them, and the held expressions they read (over the
/// source row; the `j`-th is read as column `width + j`).
pub(super) fn recheck_quals(quals: Vec<Expr>, width: usize) -> (Vec<Expr>, Vec<Expr>) {
    let mut held = Vec::new();
    let mut out = Vec::with_capacity(quals.len());
    for q in quals {
        match &q.kind {
            ExprKind::InSet(x, _, _, false) if reads_columns(x) && !x.calls_volatile() => {
                out.push(equal_as_first_read(x, width, &mut held));
            }
            ExprKind::SubPlan(sp, args)
                if sp.kind == SubLinkKind::Exists && !args.is_empty() && equi_only(&sp.plan) =>
            {
                let each: Vec<Expr> = args
                    .iter()
                    .map(|a| equal_as_first_read(a, width, &mut held))
                    .collect();
                out.extend(each);
            }
            ExprKind::Not(inner) => match &inner.kind {
                ExprKind::SubPlan(sp, args)
                    if sp.kind == SubLinkKind::Exists && !args.is_empty() => {}
                _ => out.push(q),
            },
            _ => out.push(q),
        }
    }
    (out, held)
}

/// `e = (e as first read)`, the latter a new held expression.
fn equal_as_first_read(e: &Expr, width: usize, held: &mut Vec<Expr>) -> Expr {
    let first = Expr::column(width + held.len(), e.ty);
    held.push(e.clone());
    Expr {
        kind: ExprKind::Binary(BinaryOp::Eq, Box::new(e.clone()), Box::new(first)),
        ty: DataType::Bool,
    }
}

fn reads_columns(e: &Expr) -> bool {
    matches!(e.kind, ExprKind::Column(_)) || e.children().into_iter().any(reads_columns)
}

/// Whether every outer value (parameter) the subquery `plan` reads is read
/// only as one side of a top-level `=` conjunct of a condition, whose other
/// side reads none; and it reads one.
fn equi_only(plan: &Plan) -> bool {
    fn walk(plan: &Plan, found: &mut bool) -> bool {
        for e in plan.node.exprs() {
            let mut parts = Vec::new();
            super::super::quals::conjuncts(e.clone(), &mut parts);
            for c in &parts {
                if !has_param(c) {
                    continue;
                }
                match &c.kind {
                    ExprKind::Binary(BinaryOp::Eq, a, b)
                        if (is_param(a) && !has_param(b)) || (is_param(b) && !has_param(a)) =>
                    {
                        *found = true;
                    }
                    _ => return false,
                }
            }
        }
        plan.children().into_iter().all(|c| walk(c, found))
    }
    let mut found = false;
    walk(plan, &mut found) && found
}

/// A parameter, possibly cast.
fn is_param(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Param(_) => true,
        ExprKind::Cast(inner, _) => is_param(inner),
        _ => false,
    }
}

fn has_param(e: &Expr) -> bool {
    matches!(e.kind, ExprKind::Param(_) | ExprKind::SubPlan(..))
        || e.children().into_iter().any(has_param)
}
