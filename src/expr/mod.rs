//! Bound expressions: the typed trees the binder builds and the executor
//! evaluates.
//!
//! An [`Expr`] has its names resolved to column positions of the operator's
//! input batch, carries its result [`DataType`], has its operands already
//! cast to the types their operator takes, and holds functions resolved to a
//! [`Func`] value, so evaluation (the executor's `expr`) never looks anything
//! up by name. This module owns the shape of the tree only; evaluation is
//! the executor's.
//!
//! It sits below the catalog (as PostgreSQL's `primnodes.h` sits below its
//! catalog headers), because the catalog holds bound expressions too: a
//! partial index's predicate. `nodes` re-exports it as `nodes::expr` beside
//! the plan nodes.

pub mod func;

use std::sync::Arc;

use crate::types::{cast::CastContext, BinaryOp, DataType, Value};
use crate::vector::keyset::KeySet;
use func::Func;

/// A bound, typed expression.
#[derive(Debug, Clone)]
pub struct Expr {
    /// What to compute.
    pub kind: ExprKind,
    /// The type of the result.
    pub ty: DataType,
}

/// The node kinds of a bound expression.
#[derive(Debug, Clone)]
pub enum ExprKind {
    /// The input batch's column at this position.
    Column(usize),
    /// A constant (already of type `ty`).
    Const(Value),
    /// `left op right`, operands cast to the operator's input types.
    Binary(BinaryOp, Box<Expr>, Box<Expr>),
    /// Unary minus.
    Neg(Box<Expr>),
    /// `NOT x`.
    Not(Box<Expr>),
    /// `a AND b`.
    And(Box<Expr>, Box<Expr>),
    /// `a OR b`.
    Or(Box<Expr>, Box<Expr>),
    /// `x IS NULL` (or `IS NOT NULL` when the flag is true).
    IsNull(Box<Expr>, bool),
    /// `x IS [NOT] TRUE/FALSE`: (arg, the truth value tested, negated).
    IsBool(Box<Expr>, bool, bool),
    /// `a IS [NOT] DISTINCT FROM b` (negated = `IS NOT DISTINCT FROM`).
    IsDistinct(Box<Expr>, Box<Expr>, bool),
    /// Cast to `ty` in the given context (explicit casts cut strings).
    Cast(Box<Expr>, CastContext),
    /// Searched CASE: `(condition, result)` pairs, then the ELSE result.
    Case(Vec<(Expr, Expr)>, Option<Box<Expr>>),
    /// `x [NOT] IN (list)` with the list's items of `x`'s type.
    InList(Box<Expr>, Vec<Expr>, bool),
    /// `x [NOT] IN (subquery)`, the subquery's rows computed beforehand:
    /// (x, the non-NULL values as a one-column key set of `x`'s type,
    /// whether a NULL was among them, negated).
    InSet(Box<Expr>, Arc<KeySet>, bool, bool),
    /// `x [NOT] LIKE/ILIKE pattern`: (x, pattern, case-insensitive, negated).
    Like(Box<Expr>, Box<Expr>, bool, bool),
    /// A scalar function call.
    Func(Func, Vec<Expr>),
    /// `COALESCE(...)`.
    Coalesce(Vec<Expr>),
    /// `GREATEST(...)` (flag true) or `LEAST(...)`: NULLs are ignored.
    Extreme(Vec<Expr>, bool),
    /// A value of the enclosing query's row, in a correlated subquery's
    /// plan: replaced by a constant before the plan runs (the executor's
    /// `subplan`).
    Param(usize),
    /// A correlated subquery, with its operands: for `x op ANY/ALL` the
    /// tested `x` first, then the values of its parameters, over this
    /// node's input rows.
    SubPlan(SubPlanRef, Vec<Expr>),
}

/// A correlated subquery's executable form, the executor's
/// `exec::subplan::SubPlan` (its plan, its cache, the statement's execution
/// context). Held opaque here so that this module stays below the
/// executor; the executor dereferences it to its own type.
#[derive(Clone)]
pub struct SubPlanRef(pub Arc<dyn std::any::Any + Send + Sync>);

impl std::fmt::Debug for SubPlanRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SubPlan")
    }
}

impl Expr {
    /// A column reference.
    pub fn column(index: usize, ty: DataType) -> Expr {
        Expr {
            kind: ExprKind::Column(index),
            ty,
        }
    }

    /// A constant.
    pub fn constant(value: Value, ty: DataType) -> Expr {
        Expr {
            kind: ExprKind::Const(value),
            ty,
        }
    }

    /// The constant's value, when this node is one.
    pub fn as_const(&self) -> Option<&Value> {
        match &self.kind {
            ExprKind::Const(v) => Some(v),
            _ => None,
        }
    }

    /// Whether the expression calls a function a parallel worker may not
    /// call ([`ScalarFunc::parallel_safe`]). A subquery's own plan is not
    /// looked into.
    ///
    /// [`ScalarFunc::parallel_safe`]: crate::types::funcs::ScalarFunc::parallel_safe
    pub fn calls_parallel_unsafe(&self) -> bool {
        if let ExprKind::Func(f, _) = &self.kind {
            if !f.0.parallel_safe() {
                return true;
            }
        }
        self.children().into_iter().any(Expr::calls_parallel_unsafe)
    }

    /// Whether the expression calls a function whose calls must be made
    /// one row at a time ([`ScalarFunc::per_row`]). A subquery's own plan
    /// is not looked into (it is run by its own operators).
    ///
    /// [`ScalarFunc::per_row`]: crate::types::funcs::ScalarFunc::per_row
    pub fn evaluates_per_row(&self) -> bool {
        if let ExprKind::Func(f, _) = &self.kind {
            if f.0.per_row() {
                return true;
            }
        }
        self.children().into_iter().any(Expr::evaluates_per_row)
    }

    /// Whether the expression calls a volatile function (PostgreSQL's
    /// `contain_volatile_functions`): a select-list column that does, and
    /// is no sort key, is computed after the sort.
    pub fn calls_volatile(&self) -> bool {
        if let ExprKind::Func(f, _) = &self.kind {
            if f.0.volatility() == crate::types::funcs::volatility::Volatility::Volatile {
                return true;
            }
        }
        self.children().into_iter().any(Expr::calls_volatile)
    }

    /// The node's operands, in order.
    pub fn children(&self) -> Vec<&Expr> {
        match &self.kind {
            ExprKind::Column(_) | ExprKind::Const(_) | ExprKind::Param(_) => vec![],
            ExprKind::Binary(_, a, b)
            | ExprKind::And(a, b)
            | ExprKind::Or(a, b)
            | ExprKind::IsDistinct(a, b, _)
            | ExprKind::Like(a, b, _, _) => vec![a, b],
            ExprKind::Neg(a)
            | ExprKind::Not(a)
            | ExprKind::IsNull(a, _)
            | ExprKind::IsBool(a, _, _)
            | ExprKind::Cast(a, _)
            | ExprKind::InSet(a, _, _, _) => vec![a],
            ExprKind::Case(arms, otherwise) => arms
                .iter()
                .flat_map(|(c, r)| [c, r])
                .chain(otherwise.as_deref())
                .collect(),
            ExprKind::InList(a, list, _) => std::iter::once(&**a).chain(list).collect(),
            ExprKind::Func(_, args)
            | ExprKind::Coalesce(args)
            | ExprKind::Extreme(args, _)
            | ExprKind::SubPlan(_, args) => args.iter().collect(),
        }
    }

    /// The node's operands, mutably, in order.
    pub fn children_mut(&mut self) -> Vec<&mut Expr> {
        match &mut self.kind {
            ExprKind::Column(_) | ExprKind::Const(_) | ExprKind::Param(_) => vec![],
            ExprKind::Binary(_, a, b)
            | ExprKind::And(a, b)
            | ExprKind::Or(a, b)
            | ExprKind::IsDistinct(a, b, _)
            | ExprKind::Like(a, b, _, _) => vec![a, b],
            ExprKind::Neg(a)
            | ExprKind::Not(a)
            | ExprKind::IsNull(a, _)
            | ExprKind::IsBool(a, _, _)
            | ExprKind::Cast(a, _)
            | ExprKind::InSet(a, _, _, _) => vec![a],
            ExprKind::Case(arms, otherwise) => arms
                .iter_mut()
                .flat_map(|(c, r)| [c, r])
                .chain(otherwise.as_deref_mut())
                .collect(),
            ExprKind::InList(a, list, _) => {
                std::iter::once(&mut **a).chain(list.iter_mut()).collect()
            }
            ExprKind::Func(_, args)
            | ExprKind::Coalesce(args)
            | ExprKind::Extreme(args, _)
            | ExprKind::SubPlan(_, args) => args.iter_mut().collect(),
        }
    }
}
