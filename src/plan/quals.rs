//! Conditions as PostgreSQL's planner leaves them: NOT pushed into the
//! operators below it, and a node's conjuncts in PostgreSQL's order.
//!
//! [`negate`] is PostgreSQL's `negate_clause`: `NOT (a = 1)` becomes
//! `a <> 1`, `NOT (x IS NULL)` becomes `x IS NOT NULL`, `NOT (a AND b)`
//! becomes `(NOT a) OR (NOT b)`, and so on — the same truth value for every
//! input (NULL included), and what EXPLAIN then prints.
//!
//! [`order_quals`] puts the top-level conjuncts (the implicit-AND list) of
//! every scan filter, Filter node and join condition into the order
//! PostgreSQL evaluates and prints them:
//!
//! 1. an equality `x = constant` (or between two expressions of the
//!    relation) is a member of an *equivalence class* in PostgreSQL, and
//!    the planner re-derives those clauses after the others, so they move
//!    to the end, in their written order, normalized with the constant on
//!    the right;
//! 2. then a stable sort by estimated per-row cost, PostgreSQL's
//!    `order_qual_clauses`: each operator and function call costs one
//!    `cpu_operator_cost` (every built-in function heapdb has has
//!    `procost` 1), a cast through text input/output two, a binary-
//!    compatible relabeling nothing, `x IN (constants)` half an operator
//!    per element, columns, constants and AND / OR / NOT nothing.
//!
//! heapdb's AND evaluates its right side only over the rows its left side
//! did not reject ([`crate::exec::expr`]), so this order is also the order
//! of evaluation, as in PostgreSQL: `10 / a > 1 and a <> 0` never divides
//! by zero, the cheaper `a <> 0` running first. Not done: the equivalence
//! classes' transitivity (`a = b and b = 3` deriving `a = 3`).

use super::{Node, Plan};
use crate::nodes::expr::{Expr, ExprKind};
use crate::types::cast::CastContext;
use crate::types::{BinaryOp, DataType, Value};

/// `NOT e`, pushed into `e` where an operator has a negator (see the module
/// doc); a plain `NOT` node where none has.
pub fn negate(e: Expr) -> Expr {
    let bool_expr = |kind| Expr {
        kind,
        ty: DataType::Bool,
    };
    match e.kind {
        ExprKind::Binary(op, a, b) if op.is_comparison() => {
            let neg = match op {
                BinaryOp::Eq => BinaryOp::NotEq,
                BinaryOp::NotEq => BinaryOp::Eq,
                BinaryOp::Lt => BinaryOp::GtEq,
                BinaryOp::LtEq => BinaryOp::Gt,
                BinaryOp::Gt => BinaryOp::LtEq,
                _ => BinaryOp::Lt,
            };
            bool_expr(ExprKind::Binary(neg, a, b))
        }
        ExprKind::Not(a) => *a,
        ExprKind::And(a, b) => bool_expr(ExprKind::Or(Box::new(negate(*a)), Box::new(negate(*b)))),
        ExprKind::Or(a, b) => bool_expr(ExprKind::And(Box::new(negate(*a)), Box::new(negate(*b)))),
        ExprKind::IsNull(a, n) => bool_expr(ExprKind::IsNull(a, !n)),
        ExprKind::IsBool(a, t, n) => bool_expr(ExprKind::IsBool(a, t, !n)),
        ExprKind::IsDistinct(a, b, n) => bool_expr(ExprKind::IsDistinct(a, b, !n)),
        ExprKind::InList(a, l, n) => bool_expr(ExprKind::InList(a, l, !n)),
        ExprKind::InSet(a, s, h, n) => bool_expr(ExprKind::InSet(a, s, h, !n)),
        ExprKind::Like(a, p, ci, n) => bool_expr(ExprKind::Like(a, p, ci, !n)),
        kind => bool_expr(ExprKind::Not(Box::new(Expr { kind, ty: e.ty }))),
    }
}

/// The conjuncts of `e` (its AND tree flattened), in order.
pub fn conjuncts(e: Expr, out: &mut Vec<Expr>) {
    match e.kind {
        ExprKind::And(a, b) => {
            conjuncts(*a, out);
            conjuncts(*b, out);
        }
        kind => out.push(Expr { kind, ty: e.ty }),
    }
}

/// The conjunction of `list` (left-deep), `None` when empty.
pub fn conjunction(list: Vec<Expr>) -> Option<Expr> {
    list.into_iter().reduce(|a, b| Expr {
        kind: ExprKind::And(Box::new(a), Box::new(b)),
        ty: DataType::Bool,
    })
}

/// Whether a cast from `from` to `to` is a binary-compatible relabeling in
/// PostgreSQL (free), or is not shown at all because PostgreSQL has a
/// cross-type operator instead (integers of different widths, float4 and
/// float8, date and timestamp).
pub fn invisible_cast(from: &DataType, to: &DataType, ctx: CastContext) -> bool {
    use DataType::*;
    let int = |t: &DataType| matches!(t, Int2 | Int4 | Int8);
    ctx == CastContext::Implicit
        && ((int(from) && int(to)) || matches!((from, to), (Float4, Float8) | (Date, Timestamp(_))))
}

/// The per-row cost of `e` in units of `cpu_operator_cost` (see the module
/// doc).
pub fn cost(e: &Expr) -> f64 {
    let own = match &e.kind {
        ExprKind::Column(_)
        | ExprKind::Const(_)
        | ExprKind::And(..)
        | ExprKind::Or(..)
        | ExprKind::Not(_)
        | ExprKind::IsNull(..)
        | ExprKind::IsBool(..)
        | ExprKind::Case(..)
        | ExprKind::Coalesce(_)
        | ExprKind::Param(_)
        | ExprKind::Extreme(..) => 0.0,
        // A subquery costs far more than any operator: test it last.
        ExprKind::SubPlan(..) => 1000.0,
        ExprKind::Cast(a, ctx) => {
            let (from, to) = (&a.ty, &e.ty);
            if from == to
                || (from.is_string() && matches!(to, DataType::Text | DataType::Varchar(_)))
                || invisible_cast(from, to, *ctx)
            {
                0.0
            } else if from.is_string() != to.is_string() {
                // CoerceViaIO: the input and the output function.
                2.0
            } else {
                1.0
            }
        }
        ExprKind::InList(_, items, _) => {
            if items.iter().all(|i| i.as_const().is_some()) {
                0.5 * items.len() as f64
            } else {
                items.len() as f64
            }
        }
        ExprKind::Binary(..)
        | ExprKind::Neg(_)
        | ExprKind::IsDistinct(..)
        | ExprKind::InSet(..)
        | ExprKind::Like(..)
        | ExprKind::Func(..) => 1.0,
    };
    own + e.children().into_iter().map(cost).sum::<f64>()
}

/// `Ok` when `e` is an equality PostgreSQL makes an equivalence-class
/// member (`x = constant`, or `x = y` with both sides reading columns),
/// normalized with the constant on the right; `Err(e)` otherwise.
fn equivalence(e: Expr) -> Result<Expr, Expr> {
    let ExprKind::Binary(BinaryOp::Eq, a, b) = e.kind else {
        return Err(e);
    };
    let reads = |x: &Expr| {
        let mut cols = Vec::new();
        super::select::columns_used(x, &mut cols);
        !cols.is_empty()
    };
    let bool_eq = |a, b| Expr {
        kind: ExprKind::Binary(BinaryOp::Eq, a, b),
        ty: DataType::Bool,
    };
    match (a.as_const().is_some(), b.as_const().is_some()) {
        (false, true) if reads(&a) => Ok(bool_eq(a, b)),
        (true, false) if reads(&b) => Ok(bool_eq(b, a)),
        (false, false) if reads(&a) && reads(&b) => Ok(bool_eq(a, b)),
        _ => Err(bool_eq(a, b)),
    }
}

/// `e`'s conjuncts in PostgreSQL's order (see the module doc); `scan`:
/// they are a scan's restrictions, where equalities are equivalence-class
/// members (a join's or an aggregate's conditions are not).
pub fn order(e: Expr, scan: bool) -> Expr {
    let mut list = Vec::new();
    conjuncts(e, &mut list);
    let (mut plain, mut classes) = (Vec::new(), Vec::new());
    for c in list {
        if !scan {
            plain.push(c);
            continue;
        }
        match equivalence(c) {
            Ok(eq) => classes.push(eq),
            Err(other) => plain.push(other),
        }
    }
    plain.append(&mut classes);
    // Stable: equal costs keep their order.
    plain.sort_by(|a, b| cost(a).total_cmp(&cost(b)));
    conjunction(plain).expect("at least one conjunct")
}

/// Orders the conditions of every node of `plan` (see the module doc).
pub fn order_quals(plan: &mut Plan) {
    let (slot, scan) = match &mut plan.node {
        Node::SeqScan { filter, .. } => (filter.as_mut(), true),
        Node::Filter { predicate, .. } => (Some(predicate), false),
        Node::HashJoin { residual, .. } => (residual.as_mut(), false),
        Node::NestedLoop { condition, .. } => (condition.as_mut(), false),
        _ => (None, false),
    };
    if let Some(e) = slot {
        let taken = std::mem::replace(e, Expr::constant(crate::types::Value::Null, DataType::Bool));
        *e = order(taken, scan);
    }
    for c in plan.children_mut() {
        order_quals(c);
    }
}

/// `plan` without conditions that are the constant `true` (written so, or
/// folded from constants, or left by a gate whose subqueries folded):
/// each such conjunct leaves its scan's filter, and a `Filter` node left
/// with none is replaced by its input, as PostgreSQL drops them
/// (`WHERE true` prints no `Filter:` line and costs no evaluation).
pub fn drop_true(plan: &mut Plan) {
    fn is_true(e: &Expr) -> bool {
        matches!(e.kind, ExprKind::Const(Value::Bool(true)))
    }
    fn strip(f: &mut Option<Expr>) {
        if let Some(e) = f.take() {
            let mut list = Vec::new();
            conjuncts(e, &mut list);
            list.retain(|c| !is_true(c));
            *f = conjunction(list);
        }
    }
    match &mut plan.node {
        Node::SeqScan { filter, .. } => strip(filter),
        Node::IndexScan(s) => strip(&mut s.filter),
        Node::BitmapHeapScan(s) => strip(&mut s.filter),
        Node::Filter { predicate, input } => {
            let mut kept = Some(predicate.clone());
            strip(&mut kept);
            match kept {
                Some(p) => *predicate = p,
                None => {
                    let empty = Plan {
                        rows: 0.0,
                        fields: Vec::new(),
                        node: Node::Values { rows: Vec::new() },
                    };
                    *plan = std::mem::replace(&mut **input, empty);
                    drop_true(plan);
                    return;
                }
            }
        }
        _ => {}
    }
    for c in plan.children_mut() {
        drop_true(c);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::Value;

    fn col(i: usize) -> Expr {
        Expr::column(i, DataType::Int4)
    }
    fn int(v: i32) -> Expr {
        Expr::constant(Value::Int4(v), DataType::Int4)
    }
    fn bin(op: BinaryOp, a: Expr, b: Expr) -> Expr {
        let ty = if op.is_comparison() {
            DataType::Bool
        } else {
            DataType::Int4
        };
        Expr {
            kind: ExprKind::Binary(op, Box::new(a), Box::new(b)),
            ty,
        }
    }
    fn shape(e: &Expr) -> String {
        let cols: Vec<String> = (0..4).map(|i| format!("c{i}")).collect();
        super::super::explain::deparse(e, &cols)
    }

    #[test]
    fn cheap_conditions_first_equalities_last() {
        // (c0 % 3) = 0 AND c1 > 2 AND 5 = c2 AND c3 < 4
        let e = conjunction(vec![
            bin(BinaryOp::Eq, bin(BinaryOp::Mod, col(0), int(3)), int(0)),
            bin(BinaryOp::Gt, col(1), int(2)),
            bin(BinaryOp::Eq, int(5), col(2)),
            bin(BinaryOp::Lt, col(3), int(4)),
        ])
        .unwrap();
        assert_eq!(
            shape(&order(e, true)),
            "((c1 > 2) AND (c3 < 4) AND (c2 = 5) AND ((c0 % 3) = 0))"
        );
    }

    #[test]
    fn negation_reaches_the_operators() {
        let e = conjunction(vec![
            bin(BinaryOp::Lt, col(0), int(3)),
            Expr {
                kind: ExprKind::IsNull(Box::new(col(1)), false),
                ty: DataType::Bool,
            },
        ])
        .unwrap();
        assert_eq!(shape(&negate(e)), "((c0 >= 3) OR (c1 IS NOT NULL))");
        assert_eq!(
            shape(&negate(negate(bin(BinaryOp::Eq, col(0), int(1))))),
            "(c0 = 1)"
        );
    }
}
