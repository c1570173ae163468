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
//! - `x op ANY (uncorrelated query)` of another operator than `=`: the
//!   semi-join holds the first row whose value `v` matched, so the
//!   re-check is `x op v`, `v` held;
//! - correlated `EXISTS (query)` whose outer values are compared by `=`
//!   alone (`where u.k = t.k and u.w > 5`): the held row matched the outer
//!   values first read, so the re-check is that each is still equal;
//! - other correlated `EXISTS` over one table's sequential scan: the held
//!   value is the tuple id of the first row that matched, and the re-check
//!   is that this row (as the statement's snapshot sees it) matches the new
//!   version's values; EXISTS over other plans is evaluated again;
//! - correlated `NOT EXISTS (query)`: an anti-join row holds no row of the
//!   other relation, so the re-check finds none: the conjunct holds.
//!
//! "As first read" values are held expressions: the plan computes them over
//! the row it found and outputs them after the held columns; the re-check's
//! source row has them past the source's own columns.
//!
//! Invariant: a conjunct not of these shapes is left as it is.

use std::sync::Arc;

use crate::exec::expr::{Expr, ExprKind};
use crate::exec::subplan::{SubLinkKind, SubPlan};
use crate::nodes::expr::SubPlanRef;
use crate::nodes::{Field, Node, Plan};
use crate::plan::cost::plan_volatile;
use crate::plan::quals::conjunction;
use crate::plan::sublink::first_row;
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
            ExprKind::SubPlan(sp, args) if sp.kind == SubLinkKind::Exists && !args.is_empty() => {
                out.push(matched_row_again(sp, args, width, &mut held).unwrap_or(q));
            }
            ExprKind::SubPlan(sp, args)
                if matches!(sp.kind, SubLinkKind::Quantified(_, false)) && args.len() == 1 =>
            {
                out.push(matched_value(sp, &args[0], width, &mut held).unwrap_or(q));
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

/// For `x op ANY (query)` (`sp`, uncorrelated): `x op v`, `v` the first
/// value of the subquery `x` matched, held; `None` when the conjunct must
/// be evaluated again instead (`x` volatile or reading no column, the
/// subquery volatile, or the comparison across types).
fn matched_value(sp: &SubPlan, x: &Expr, width: usize, held: &mut Vec<Expr>) -> Option<Expr> {
    let SubLinkKind::Quantified(op, false) = sp.kind else {
        return None;
    };
    let ty = sp.plan.fields.first()?.ty;
    if x.ty != ty || sp.cmp_ty != ty || !reads_columns(x) || x.calls_volatile() {
        return None;
    }
    if plan_volatile(&sp.plan) {
        return None;
    }
    let test = binary(op, param(0, ty), Expr::column(0, ty));
    let plan = first_row(Plan {
        fields: sp.plan.fields.clone(),
        rows: sp.plan.rows,
        node: Node::Filter {
            input: Box::new(sp.plan.clone()),
            predicate: test,
        },
    });
    let matched = sp.sibling(SubLinkKind::Scalar, plan, ty);
    let first = Expr::column(width + held.len(), ty);
    held.push(Expr {
        kind: ExprKind::SubPlan(SubPlanRef(Arc::new(matched)), vec![x.clone()]),
        ty,
    });
    Some(binary(op, x.clone(), first))
}

/// For a correlated `EXISTS (query)` (`sp` over the parameters `args`)
/// whose plan is one table's sequential scan: the tuple id of the first row
/// that matched is held, and the re-check runs the scan again for that row
/// alone, over the new version's parameters. `None` for other plans.
fn matched_row_again(
    sp: &SubPlan,
    args: &[Expr],
    width: usize,
    held: &mut Vec<Expr>,
) -> Option<Expr> {
    let scan = lone_scan(&sp.plan)?;
    let Node::SeqScan {
        table,
        alias,
        columns,
        with_tid: false,
        filter: Some(filter),
    } = &scan.node
    else {
        return None;
    };
    let tid = Expr::column(columns.len(), DataType::Int8);
    let scan_with_tid = |filter: Expr| {
        let mut fields = scan.fields.clone();
        fields.push(Field {
            name: "ctid".into(),
            ty: DataType::Int8,
        });
        Plan {
            fields,
            rows: scan.rows,
            node: Node::SeqScan {
                table: table.clone(),
                alias: alias.clone(),
                columns: columns.clone(),
                with_tid: true,
                filter: Some(filter),
            },
        }
    };
    let find = first_row(Plan {
        fields: vec![Field {
            name: "ctid".into(),
            ty: DataType::Int8,
        }],
        rows: 1.0,
        node: Node::Project {
            input: Box::new(scan_with_tid(filter.clone())),
            exprs: vec![tid.clone()],
        },
    });
    let found = sp.sibling(SubLinkKind::Scalar, find, DataType::Int8);
    let j = width + held.len();
    held.push(Expr {
        kind: ExprKind::SubPlan(SubPlanRef(Arc::new(found)), args.to_vec()),
        ty: DataType::Int8,
    });
    let same_row = binary(BinaryOp::Eq, tid, param(args.len(), DataType::Int8));
    let again = first_row(scan_with_tid(conjunction(vec![filter.clone(), same_row])?));
    let again = sp.sibling(SubLinkKind::Exists, again, DataType::Bool);
    let mut again_args = args.to_vec();
    again_args.push(Expr::column(j, DataType::Int8));
    Some(Expr {
        kind: ExprKind::SubPlan(SubPlanRef(Arc::new(again)), again_args),
        ty: DataType::Bool,
    })
}

/// The sequential scan under `plan`'s LIMITs and projections, when that is
/// all it is and only the scan's filter reads parameters.
fn lone_scan(plan: &Plan) -> Option<&Plan> {
    match &plan.node {
        Node::SeqScan { .. } => Some(plan),
        Node::Limit { input, .. } => lone_scan(input),
        Node::Project { input, exprs } if !exprs.iter().any(has_param) => lone_scan(input),
        _ => None,
    }
}

fn binary(op: BinaryOp, a: Expr, b: Expr) -> Expr {
    Expr {
        kind: ExprKind::Binary(op, Box::new(a), Box::new(b)),
        ty: DataType::Bool,
    }
}

fn param(i: usize, ty: DataType) -> Expr {
    Expr {
        kind: ExprKind::Param(i),
        ty,
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
