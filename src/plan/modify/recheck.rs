//! What READ COMMITTED's re-check of a concurrently updated row evaluates
//! for the sublinks of an UPDATE's or DELETE's WHERE ([`recheck_quals`]).
//!
//! PostgreSQL turns some sublinks of WHERE into joins before planning
//! (`pull_up_sublinks`): a top-level `x IN (uncorrelated query)` (or
//! `= ANY`) becomes a semi-join; a correlated `EXISTS` a semi-join and a
//! correlated `NOT EXISTS` an anti-join when the subquery is simple
//! enough (`plan::exists_shape`: no aggregates, HAVING, OFFSET, WITH,
//! window functions or set operations; correlated in WHERE alone). Its
//! EvalPlanQual re-check then holds the other relations' rows that
//! matched fixed, as it holds a FROM item's (a table's row by its tuple
//! id, a subquery's, VALUES' or a function's row as a copy; on an outer
//! join's nullable side, no row when none joined); a sublink kept as a
//! SubPlan (`NOT IN`, a correlated `IN`, any sublink under `OR`, an EXISTS
//! of another shape) is evaluated again over the new version, under the
//! statement's snapshot. heapdb runs every sublink as an InitPlan or a
//! SubPlan, so the re-check rewrites the conjuncts PostgreSQL would have
//! pulled up:
//!
//! - `x IN (query)`: the semi-join's held row has the value `x` had on the
//!   version first read, so the re-check is `x = (x as first read)`;
//! - `x op ANY (uncorrelated query)` of another operator than `=`: the
//!   semi-join holds the first row whose value `v` matched, so the
//!   re-check is `x op v`, `v` held;
//! - a semi-join `EXISTS (query)` whose outer values are compared by `=`
//!   alone (`where u.k = t.k and u.w > 5`): the held rows matched the
//!   outer values first read, so the re-check is that each is still equal;
//! - another semi-join `EXISTS`: the held values identify the rows the
//!   first match joined (a tuple id per table scanned, a copy of the row
//!   of each other FROM item), and the re-check is that these rows (as the
//!   statement's snapshot sees them) still join and match the new
//!   version's values;
//! - an anti-join `NOT EXISTS (query)`: an anti-join row holds no row of
//!   the other relation, so the re-check finds none: the conjunct holds.
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
use crate::nodes::{Field, JoinKind, Node, Plan};
use crate::plan::cost::plan_volatile;
use crate::plan::quals::conjunction;
use crate::plan::sublink::first_row;
use crate::types::{BinaryOp, DataType, Value};

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
            ExprKind::SubPlan(sp, args) if is_semi_join(sp, args) && equi_only(&sp.plan) => {
                let each: Vec<Expr> = args
                    .iter()
                    .map(|a| equal_as_first_read(a, width, &mut held))
                    .collect();
                out.extend(each);
            }
            ExprKind::SubPlan(sp, args) if is_semi_join(sp, args) => {
                out.push(matched_row_again(sp, args, width, &mut held).unwrap_or(q));
            }
            ExprKind::SubPlan(sp, args)
                if matches!(sp.kind, SubLinkKind::Quantified(_, false)) && args.len() == 1 =>
            {
                out.push(matched_value(sp, &args[0], width, &mut held).unwrap_or(q));
            }
            ExprKind::Not(inner) => match &inner.kind {
                ExprKind::SubPlan(sp, args) if is_semi_join(sp, args) => {}
                _ => out.push(q),
            },
            _ => out.push(q),
        }
    }
    (out, held)
}

/// A correlated EXISTS PostgreSQL makes a semi-join (under NOT, an
/// anti-join).
fn is_semi_join(sp: &SubPlan, args: &[Expr]) -> bool {
    sp.kind == SubLinkKind::Exists && sp.semi_join && !args.is_empty()
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
/// whose plan joins scans ([`with_tids`]): the tuple ids of the rows the
/// first match joined are held, and the re-check runs the subquery again
/// with each scan kept to its held row, over the new version's parameters
/// (PostgreSQL's EvalPlanQual re-fetching each row mark's row and testing
/// the quals again). `None` for other plans.
fn matched_row_again(
    sp: &SubPlan,
    args: &[Expr],
    width: usize,
    held: &mut Vec<Expr>,
) -> Option<Expr> {
    let mut n = 0;
    let tidded = with_tids(&sp.plan, None, &mut n)?;
    let mut pinned = 0;
    let again = first_row(with_tids(&sp.plan, Some(args.len()), &mut pinned)?);
    let ncols = sp.plan.fields.len();
    let j = width + held.len();
    let types: Vec<DataType> = tidded.fields[ncols..].iter().map(|f| f.ty).collect();
    for (k, &ty) in types.iter().enumerate() {
        let find = first_row(Plan {
            fields: vec![tidded.fields[ncols + k].clone()],
            rows: 1.0,
            node: Node::Project {
                input: Box::new(tidded.clone()),
                exprs: vec![Expr::column(ncols + k, ty)],
            },
        });
        let found = sp.sibling(SubLinkKind::Scalar, find, ty);
        held.push(Expr {
            kind: ExprKind::SubPlan(SubPlanRef(Arc::new(found)), args.to_vec()),
            ty,
        });
    }
    let again = sp.sibling(SubLinkKind::Exists, again, DataType::Bool);
    let mut again_args = args.to_vec();
    again_args.extend(
        types
            .iter()
            .enumerate()
            .map(|(k, &ty)| Expr::column(j + k, ty)),
    );
    debug_assert_eq!(types.len(), n);
    Some(Expr {
        kind: ExprKind::SubPlan(SubPlanRef(Arc::new(again)), again_args),
        ty: DataType::Bool,
    })
}

fn tid_field() -> Field {
    Field {
        name: "ctid".into(),
        ty: DataType::Int8,
    }
}

/// `plan` with what identifies each row it joins appended to its output
/// (after its own columns, relations in plan order; `next` counts the
/// held columns so far): a scanned table's row its tuple id, another
/// FROM item's row (a subquery, VALUES, a function) a marker (1) and a
/// copy of its columns, as PostgreSQL's row marks copy such a row. With
/// `pin`, each relation also keeps only the row whose held columns are
/// parameters `pin + k ...` (`k`: their number); a NULL tuple id or
/// marker (no row joined on an outer join's nullable side) keeps none.
/// Joins of any kind (an anti-join's right side holds nothing), filters,
/// projections, sorts, DISTINCT, grouping without aggregates and limits
/// are gone through. `None` for a plan outside these shapes.
fn with_tids(plan: &Plan, pin: Option<usize>, next: &mut usize) -> Option<Plan> {
    let mut keep = |filter: &Option<Expr>, at: usize| -> Option<Expr> {
        let k = *next;
        *next += 1;
        let Some(base) = pin else {
            return filter.clone();
        };
        let same = binary(
            BinaryOp::Eq,
            Expr::column(at, DataType::Int8),
            param(base + k, DataType::Int8),
        );
        conjunction(filter.iter().cloned().chain([same]).collect())
    };
    let mut fields = plan.fields.clone();
    let node = match &plan.node {
        Node::SeqScan {
            table,
            alias,
            columns,
            with_tid: false,
            filter,
        } => {
            fields.push(tid_field());
            Node::SeqScan {
                table: table.clone(),
                alias: alias.clone(),
                columns: columns.clone(),
                with_tid: true,
                filter: keep(filter, columns.len()),
            }
        }
        Node::IndexScan(s) if !s.with_tid => {
            let mut s = s.clone();
            s.with_tid = true;
            s.index_only = false;
            s.filter = keep(&s.filter, s.columns.len());
            fields.push(tid_field());
            Node::IndexScan(s)
        }
        Node::BitmapHeapScan(s) if !s.with_tid => {
            let mut s = s.clone();
            s.with_tid = true;
            s.filter = keep(&s.filter, s.columns.len());
            fields.push(tid_field());
            Node::BitmapHeapScan(s)
        }
        Node::Filter { input, predicate } => {
            let input = with_tids(input, pin, next)?;
            fields = input.fields.clone();
            Node::Filter {
                input: Box::new(input),
                predicate: predicate.clone(),
            }
        }
        Node::Limit {
            input,
            limit,
            offset: offset @ 0,
        } => {
            let input = with_tids(input, pin, next)?;
            fields = input.fields.clone();
            Node::Limit {
                input: Box::new(input),
                limit: *limit,
                offset: *offset,
            }
        }
        Node::Project { input, exprs } => {
            let before = *next;
            let input = with_tids(input, pin, next)?;
            let w = input.fields.len() - (*next - before);
            let mut exprs = exprs.clone();
            for c in w..input.fields.len() {
                exprs.push(Expr::column(c, input.fields[c].ty));
                fields.push(input.fields[c].clone());
            }
            Node::Project {
                input: Box::new(input),
                exprs,
            }
        }
        Node::Sort { input, keys } => {
            let input = with_tids(input, pin, next)?;
            fields = input.fields.clone();
            Node::Sort {
                input: Box::new(input),
                keys: keys.clone(),
            }
        }
        Node::Distinct { input } => {
            let input = with_tids(input, pin, next)?;
            fields = input.fields.clone();
            Node::Distinct {
                input: Box::new(input),
            }
        }
        Node::Unique { input, columns } => {
            let input = with_tids(input, pin, next)?;
            fields = input.fields.clone();
            Node::Unique {
                input: Box::new(input),
                columns: columns.clone(),
            }
        }
        // Grouping alone: grouped by the held columns too.
        Node::Aggregate { input, group, aggs }
        | Node::GroupAggregate {
            input, group, aggs, ..
        } if aggs.is_empty() => {
            let before = *next;
            let input = with_tids(input, pin, next)?;
            let w = input.fields.len() - (*next - before);
            let mut group = group.clone();
            for c in w..input.fields.len() {
                group.push(Expr::column(c, input.fields[c].ty));
                fields.push(input.fields[c].clone());
            }
            Node::Aggregate {
                input: Box::new(input),
                group,
                aggs: Vec::new(),
            }
        }
        Node::HashJoin { .. } | Node::NestedLoop { .. } | Node::IndexNestLoop { .. } => {
            return join_with_tids(plan, pin, next)
        }
        _ => return Some(whole_row(plan, pin, next)),
    };
    Some(Plan {
        fields,
        rows: plan.rows,
        node,
    })
}

/// [`with_tids`] of another FROM item than a table: its rows, pinned to
/// the held one, with the marker and the copy of the row appended.
fn whole_row(plan: &Plan, pin: Option<usize>, next: &mut usize) -> Plan {
    let m = plan.fields.len();
    let k = *next;
    *next += 1 + m;
    let input = match pin {
        None => plan.clone(),
        Some(base) => {
            let mut same = vec![Expr {
                kind: ExprKind::IsNull(Box::new(param(base + k, DataType::Int8)), true),
                ty: DataType::Bool,
            }];
            for (c, f) in plan.fields.iter().enumerate() {
                same.push(Expr {
                    kind: ExprKind::IsDistinct(
                        Box::new(Expr::column(c, f.ty)),
                        Box::new(param(base + k + 1 + c, f.ty)),
                        true,
                    ),
                    ty: DataType::Bool,
                });
            }
            Plan {
                fields: plan.fields.clone(),
                rows: plan.rows,
                node: Node::Filter {
                    input: Box::new(plan.clone()),
                    predicate: conjunction(same).expect("a marker condition"),
                },
            }
        }
    };
    let mut exprs: Vec<Expr> = (0..m).map(|c| Expr::column(c, plan.fields[c].ty)).collect();
    exprs.push(Expr::constant(Value::Int8(1), DataType::Int8));
    exprs.extend((0..m).map(|c| Expr::column(c, plan.fields[c].ty)));
    let mut fields = plan.fields.clone();
    fields.push(tid_field());
    fields.extend(plan.fields.iter().cloned());
    Plan {
        fields,
        rows: plan.rows,
        node: Node::Project {
            input: Box::new(input),
            exprs,
        },
    }
}

/// [`with_tids`] of an anti-join (a hash join): the left input with its
/// held columns, the right as it is (its rows are never output), the
/// residual's right columns moved past the left's held ones.
fn anti_with_tids(plan: &Plan, pin: Option<usize>, next: &mut usize) -> Option<Plan> {
    let Node::HashJoin {
        left,
        right,
        kind: JoinKind::Anti,
        left_keys,
        right_keys,
        residual,
        build_left,
    } = &plan.node
    else {
        return None;
    };
    let nl = left.fields.len();
    let new_left = with_tids(left, pin, next)?;
    let lt = new_left.fields.len() - nl;
    Some(Plan {
        fields: new_left.fields.clone(),
        rows: plan.rows,
        node: Node::HashJoin {
            left: Box::new(new_left),
            right: right.clone(),
            kind: JoinKind::Anti,
            left_keys: left_keys.clone(),
            right_keys: right_keys.clone(),
            residual: residual.clone().map(|e| shift_right(e, nl, lt)),
            build_left: *build_left,
        },
    })
}

/// [`with_tids`] of a join: both inputs with their held columns, the
/// conditions over both sides moved past the left's, and the output put
/// back in order (the join's columns, then the left's held columns, then
/// the right's).
fn join_with_tids(plan: &Plan, pin: Option<usize>, next: &mut usize) -> Option<Plan> {
    let (left, right, kind) = match &plan.node {
        Node::HashJoin {
            left, right, kind, ..
        }
        | Node::NestedLoop {
            left, right, kind, ..
        }
        | Node::IndexNestLoop {
            left, right, kind, ..
        } => (left, right, *kind),
        _ => return None,
    };
    if kind == JoinKind::Anti {
        return anti_with_tids(plan, pin, next);
    }
    let (nl, nr) = (left.fields.len(), right.fields.len());
    let new_left = Box::new(with_tids(left, pin, next)?);
    let new_right = Box::new(with_tids(right, pin, next)?);
    let (lt, rt) = (new_left.fields.len() - nl, new_right.fields.len() - nr);
    let shift = |e: &Option<Expr>| e.clone().map(|e| shift_right(e, nl, lt));
    let joined: Vec<Field> = new_left
        .fields
        .iter()
        .chain(&new_right.fields)
        .cloned()
        .collect();
    let node = match &plan.node {
        Node::HashJoin {
            left_keys,
            right_keys,
            residual,
            build_left,
            ..
        } => Node::HashJoin {
            left: new_left,
            right: new_right,
            kind,
            left_keys: left_keys.clone(),
            right_keys: right_keys.clone(),
            residual: shift(residual),
            build_left: *build_left,
        },
        Node::NestedLoop { condition, .. } => Node::NestedLoop {
            left: new_left,
            right: new_right,
            kind,
            condition: shift(condition),
        },
        Node::IndexNestLoop {
            left_key, residual, ..
        } => Node::IndexNestLoop {
            left: new_left,
            right: new_right,
            kind,
            left_key: left_key.clone(),
            residual: shift(residual),
        },
        _ => return None,
    };
    let order: Vec<usize> = (0..nl)
        .chain(nl + lt..nl + lt + nr)
        .chain(nl..nl + lt)
        .chain(nl + lt + nr..nl + lt + nr + rt)
        .collect();
    Some(Plan {
        fields: order.iter().map(|&c| joined[c].clone()).collect(),
        rows: plan.rows,
        node: Node::Project {
            exprs: order
                .iter()
                .map(|&c| Expr::column(c, joined[c].ty))
                .collect(),
            input: Box::new(Plan {
                fields: joined,
                rows: plan.rows,
                node,
            }),
        },
    })
}

/// `e` (over a join's left ++ right columns) with the right's columns
/// moved `by` places on, past the `left` columns of the left input.
fn shift_right(mut e: Expr, left: usize, by: usize) -> Expr {
    if let ExprKind::Column(i) = e.kind {
        if i >= left {
            e.kind = ExprKind::Column(i + by);
        }
        return e;
    }
    for c in e.children_mut() {
        let taken = std::mem::replace(c, Expr::column(0, DataType::Bool));
        *c = shift_right(taken, left, by);
    }
    e
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
