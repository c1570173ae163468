//! Index bounds known only when the scan starts: a plain column compared
//! with an InitPlan (a subquery without parameters the statement runs
//! itself, once, when first evaluated: one calling a volatile function, or
//! any in a VOLATILE function's body) of the column's own type. PostgreSQL
//! shows it as `$0` in the `Index Cond` and computes it as the scan
//! starts; so does `exec::indexscan` from the scan's `runtime` bounds.
//!
//! Invariants: the value's type is the key column's, so the computed value
//! is a key as it is; its slot in the bounds holds a placeholder until the
//! scan starts; bitmap scans never take such a bound (their bounds are
//! constants).

use super::{flip, Qual, QualKind};
use crate::catalog::TableDef;
use crate::nodes::expr::{Expr, ExprKind};
use crate::types::{BinaryOp, DataType, Value};

/// The conjunct `e` as a [`Qual`] whose value is an InitPlan's (`col op
/// (SELECT ...)`, the subquery run with the statement, as in a VOLATILE
/// function's body): PostgreSQL's `$0` in an `Index Cond`, computed when
/// the scan starts. Only a plain column compared with a value of its own
/// type; not for bitmap scans (their bounds are constants).
pub(super) fn runtime_qual(e: &Expr, columns: &[usize], table: &TableDef) -> Option<Qual> {
    let ExprKind::Binary(op, a, b) = &e.kind else {
        return None;
    };
    if !matches!(
        op,
        BinaryOp::Eq | BinaryOp::Lt | BinaryOp::LtEq | BinaryOp::Gt | BinaryOp::GtEq
    ) {
        return None;
    }
    let column = |x: &Expr| match x.kind {
        ExprKind::Column(i) => columns.get(i).copied(),
        _ => None,
    };
    let (col, v, op, shown) = match (column(a), init_value(b)) {
        (Some(c), true) => (c, b, *op, e.clone()),
        _ => {
            let c = column(b).filter(|_| init_value(a))?;
            let op = flip(*op);
            let shown = Expr {
                kind: ExprKind::Binary(op, b.clone(), a.clone()),
                ty: e.ty,
            };
            (c, a, op, shown)
        }
    };
    let ty = table.columns[col].ty;
    if v.ty != ty || matches!(ty, DataType::Char(_)) {
        return None;
    }
    // A placeholder until the scan starts (never `eq`'s NULL of IS NULL
    // at run time: a NULL value selects no row).
    let p = Value::Null;
    let kind = match op {
        BinaryOp::Eq => QualKind::Eq(p),
        BinaryOp::Lt => QualKind::Upper(p, false),
        BinaryOp::LtEq => QualKind::Upper(p, true),
        BinaryOp::Gt => QualKind::Lower(p, false),
        _ => QualKind::Lower(p, true),
    };
    Some(Qual {
        col,
        kind,
        shown,
        runtime: Some((**v).clone()),
    })
}

/// Whether `e` is an InitPlan: a subquery without parameters that runs
/// once, when first evaluated.
fn init_value(e: &Expr) -> bool {
    matches!(&e.kind, ExprKind::SubPlan(sp, args) if args.is_empty() && sp.once)
}
