//! Constant folding of bound expressions, as PostgreSQL's
//! `eval_const_expressions` does at plan time.
//!
//! An operator whose operands are all constants is evaluated once, here,
//! and replaced by its value; an error it raises (an integer overflow, a
//! division by zero) fails the statement at plan time, even when the
//! operator sits in a CASE arm that no row would reach, as in PostgreSQL
//! (its documentation's "a constant division by zero in CASE" caveat).
//! The walk follows PostgreSQL's order so that the same errors are raised
//! and the same ones are not:
//!
//! - AND/OR fold their operands left to right and stop at a constant
//!   `false`/`true`, leaving the rest unfolded;
//! - CASE folds each condition; an arm whose condition folds to `false` or
//!   NULL is dropped without folding its result, and a `true` condition
//!   makes its result the ELSE, dropping (unfolded) everything after it;
//! - COALESCE drops constant NULLs and stops at its first non-NULL constant;
//! - a strict operator with a constant NULL operand is NULL, its other
//!   operands never evaluated, even when they read columns;
//! - a WHERE clause's conjuncts fold in order up to a constant `false`.
//!
//! Only immutable operations fold (never a volatile function such as
//! `random()`, nor a stable one, see `ScalarFunc::volatility`): arithmetic, comparisons, casts and the
//! math functions over numeric and boolean types (PostgreSQL does not fold
//! stable ones, such as a text-to-date cast that reads `DateStyle`).
//! Evaluation is the executor's (`exec::eval_const`), so a folded value is
//! exactly what the row-by-row evaluation would have computed.

use crate::error::Result;
use crate::exec::eval_const;
use crate::nodes::expr::{Expr, ExprKind};
use crate::types::funcs::volatility::Volatility;
use crate::types::funcs::ScalarFunc;
use crate::types::{DataType, Value};

/// `e` with its constant subexpressions folded.
pub fn fold(e: Expr) -> Result<Expr> {
    let Expr { kind, ty } = e;
    let boxed = |x: Box<Expr>| -> Result<Box<Expr>> { Ok(Box::new(fold(*x)?)) };
    let kind = match kind {
        ExprKind::Binary(op, l, r) => {
            let l = boxed(l)?;
            ExprKind::Binary(op, l, boxed(r)?)
        }
        ExprKind::Neg(x) => ExprKind::Neg(boxed(x)?),
        ExprKind::Not(x) => ExprKind::Not(boxed(x)?),
        ExprKind::And(a, b) => return fold_bool(*a, *b, ty, false),
        ExprKind::Or(a, b) => return fold_bool(*a, *b, ty, true),
        ExprKind::IsNull(x, negated) => ExprKind::IsNull(boxed(x)?, negated),
        ExprKind::IsBool(x, value, negated) => ExprKind::IsBool(boxed(x)?, value, negated),
        ExprKind::IsDistinct(l, r, negated) => {
            let l = boxed(l)?;
            ExprKind::IsDistinct(l, boxed(r)?, negated)
        }
        ExprKind::Cast(x, ctx) => ExprKind::Cast(boxed(x)?, ctx),
        ExprKind::Case(arms, otherwise) => return fold_case(arms, otherwise, ty),
        ExprKind::Coalesce(args) => return fold_coalesce(args, ty),
        ExprKind::Extreme(args, greatest) => {
            ExprKind::Extreme(args.into_iter().map(fold).collect::<Result<_>>()?, greatest)
        }
        ExprKind::InList(x, list, negated) => {
            let x = boxed(x)?;
            ExprKind::InList(
                x,
                list.into_iter().map(fold).collect::<Result<_>>()?,
                negated,
            )
        }
        ExprKind::Func(f, args) => {
            ExprKind::Func(f, args.into_iter().map(fold).collect::<Result<_>>()?)
        }
        ExprKind::Like(x, pattern, ci, negated) => {
            let x = boxed(x)?;
            ExprKind::Like(x, boxed(pattern)?, ci, negated)
        }
        other => other,
    };
    let e = Expr { kind, ty };
    if strict_on_null(&e) {
        raise_from_constant_operands(&e)?;
        return Ok(Expr::constant(Value::Null, ty));
    }
    if immutable_on_constants(&e) {
        let v = eval_const(&e)?;
        return Ok(Expr::constant(v, ty));
    }
    Ok(e)
}

/// WHERE's conjuncts (and the conditions of flattened joins) folded in
/// order; those after one that folds to `false` are left as they are, as
/// PostgreSQL stops folding an AND there.
pub fn fold_conjuncts(conds: Vec<Expr>) -> Result<Vec<Expr>> {
    let mut out = Vec::with_capacity(conds.len());
    let mut decided = false;
    for c in conds {
        if decided {
            out.push(c);
            continue;
        }
        let c = fold(c)?;
        decided = is_bool(&c, false);
        out.push(c);
    }
    Ok(out)
}

/// Whether `e` is an immutable operation whose operands are all constants.
fn immutable_on_constants(e: &Expr) -> bool {
    let c = |x: &Expr| x.as_const().is_some();
    let plain = |x: &Expr| c(x) && (x.ty.is_numeric() || x.ty == DataType::Bool);
    let out = e.ty.is_numeric() || e.ty == DataType::Bool;
    match &e.kind {
        ExprKind::Binary(_, l, r) | ExprKind::IsDistinct(l, r, _) => out && plain(l) && plain(r),
        ExprKind::Neg(x) | ExprKind::Cast(x, _) => out && plain(x),
        ExprKind::Not(x) | ExprKind::IsNull(x, _) | ExprKind::IsBool(x, _, _) => c(x),
        ExprKind::Extreme(args, _) => out && args.iter().all(plain),
        ExprKind::InList(x, list, _) => plain(x) && list.iter().all(plain),
        ExprKind::Func(f, args) => {
            out && math(f.0) && f.0.volatility() == Volatility::Immutable && args.iter().all(plain)
        }
        _ => false,
    }
}

/// Whether `e` is a strict operation with a constant NULL operand: it is
/// NULL whatever its other operands are, which are then never evaluated
/// (`col / 0 = NULL` is NULL and divides nothing), as PostgreSQL's
/// `evaluate_function` replaces such a call.
fn strict_on_null(e: &Expr) -> bool {
    let null = |x: &Expr| matches!(x.as_const(), Some(Value::Null));
    match &e.kind {
        ExprKind::Binary(_, l, r) | ExprKind::Like(l, r, _, _) => null(l) || null(r),
        ExprKind::Neg(x) | ExprKind::Cast(x, _) => null(x),
        ExprKind::Func(f, args) => math(f.0) && args.iter().any(null),
        // PostgreSQL compares the tested value with each list item that
        // reads a column by its own strict `=` (`<>` for NOT IN), and with
        // the rest through one strict `= ANY`: a NULL tested value makes
        // every part NULL, as does a single NULL item.
        ExprKind::InList(x, list, _) => null(x) || list.len() == 1 && null(&list[0]),
        _ => false,
    }
}

/// Evaluates, for its errors only, each operand of `e` (a strict operation
/// with a NULL operand) that PostgreSQL would have folded before it saw
/// the NULL: `eval_const_expressions` simplifies every argument first, so
/// `(0 / 0) <> (x * (13 / NULL))` and `NULL IN (1, 300000::int2)` fail
/// there, even though the operation's value is NULL. Only operands built
/// of constants by immutable operations over numbers, booleans and text
/// and dates are evaluated (those heapdb does not fold itself, such as
/// `#`, `length` or `date - date`), so no stable or volatile function runs
/// at plan time.
fn raise_from_constant_operands(e: &Expr) -> Result<()> {
    let operands: Vec<&Expr> = match &e.kind {
        ExprKind::Binary(_, l, r) | ExprKind::Like(l, r, _, _) => vec![l, r],
        ExprKind::Neg(x) | ExprKind::Cast(x, _) => vec![x],
        ExprKind::Func(_, args) => args.iter().collect(),
        ExprKind::InList(x, list, _) => std::iter::once(&**x).chain(list).collect(),
        _ => Vec::new(),
    };
    for x in operands {
        if x.as_const().is_none() && immutable_constant_tree(x) {
            eval_const(x)?;
        }
    }
    Ok(())
}

/// Whether `e` reads no column, parameter or subquery and every node of it
/// is an immutable operation over numbers, booleans, text or dates (a cast
/// from or to a date reads `DateStyle`: stable, so not one of them).
fn immutable_constant_tree(e: &Expr) -> bool {
    let ty_ok = |t: &DataType| {
        t.is_numeric() || matches!(t, DataType::Bool | DataType::Text | DataType::Date)
    };
    if !ty_ok(&e.ty) {
        return false;
    }
    let all = |xs: &[Expr]| xs.iter().all(immutable_constant_tree);
    match &e.kind {
        ExprKind::Const(_) => true,
        ExprKind::Binary(_, l, r)
        | ExprKind::And(l, r)
        | ExprKind::Or(l, r)
        | ExprKind::IsDistinct(l, r, _)
        | ExprKind::Like(l, r, _, _) => immutable_constant_tree(l) && immutable_constant_tree(r),
        ExprKind::Neg(x)
        | ExprKind::Not(x)
        | ExprKind::IsNull(x, _)
        | ExprKind::IsBool(x, _, _) => immutable_constant_tree(x),
        ExprKind::Cast(x, _) => {
            x.ty != DataType::Date && e.ty != DataType::Date && immutable_constant_tree(x)
        }
        ExprKind::Case(arms, otherwise) => {
            arms.iter()
                .all(|(c, r)| immutable_constant_tree(c) && immutable_constant_tree(r))
                && otherwise.as_deref().map_or(true, immutable_constant_tree)
        }
        ExprKind::InList(x, list, _) => immutable_constant_tree(x) && all(list),
        ExprKind::Coalesce(args) | ExprKind::Extreme(args, _) => all(args),
        ExprKind::Func(f, args) => f.0.volatility() == Volatility::Immutable && all(args),
        _ => false,
    }
}

/// The math functions (all immutable in PostgreSQL).
fn math(f: ScalarFunc) -> bool {
    use ScalarFunc as F;
    matches!(
        f,
        F::Abs
            | F::Round
            | F::Ceil
            | F::Floor
            | F::Trunc
            | F::Mod
            | F::Power
            | F::Sqrt
            | F::Sign
            | F::Exp
            | F::Ln
            | F::Log10
            | F::Pi
            | F::Div
            | F::Scale
            | F::MinScale
            | F::TrimScale
            | F::Factorial
            | F::Hyperbolic(_)
    )
}

fn is_bool(e: &Expr, b: bool) -> bool {
    matches!(e.as_const(), Some(Value::Bool(v)) if *v == b)
}

/// `a AND b` (`or` false) or `a OR b`: the operands folded left to right,
/// stopping at the constant that decides the result (`false` for AND,
/// `true` for OR); the other constant drops out.
fn fold_bool(a: Expr, b: Expr, ty: DataType, or: bool) -> Result<Expr> {
    let (decisive, neutral) = (or, !or);
    let a = fold(a)?;
    if is_bool(&a, decisive) {
        return Ok(a);
    }
    if is_bool(&a, neutral) {
        return fold(b);
    }
    let b = fold(b)?;
    if is_bool(&b, decisive) {
        return Ok(b);
    }
    if is_bool(&b, neutral) {
        return Ok(a);
    }
    if a.as_const().is_some() && b.as_const().is_some() {
        // Both NULL.
        return Ok(Expr::constant(Value::Null, ty));
    }
    let kind = if or {
        ExprKind::Or(Box::new(a), Box::new(b))
    } else {
        ExprKind::And(Box::new(a), Box::new(b))
    };
    Ok(Expr { kind, ty })
}

/// A searched CASE, folded as PostgreSQL folds it (see the module doc).
fn fold_case(arms: Vec<(Expr, Expr)>, otherwise: Option<Box<Expr>>, ty: DataType) -> Result<Expr> {
    let mut kept = Vec::with_capacity(arms.len());
    let mut default = None;
    let mut decided = false;
    for (cond, result) in arms {
        let cond = fold(cond)?;
        match cond.as_const() {
            Some(Value::Bool(true)) => {
                default = Some(fold(result)?);
                decided = true;
                break;
            }
            Some(_) => continue,
            None => kept.push((cond, fold(result)?)),
        }
    }
    if !decided {
        default = otherwise.map(|e| fold(*e)).transpose()?;
    }
    if kept.is_empty() {
        return Ok(default.unwrap_or_else(|| Expr::constant(Value::Null, ty)));
    }
    Ok(Expr {
        kind: ExprKind::Case(kept, default.map(Box::new)),
        ty,
    })
}

/// COALESCE without its constant NULLs, ending at its first non-NULL
/// constant (the arguments after it are neither folded nor kept).
fn fold_coalesce(args: Vec<Expr>, ty: DataType) -> Result<Expr> {
    let mut kept = Vec::with_capacity(args.len());
    for a in args {
        let a = fold(a)?;
        match a.as_const() {
            Some(Value::Null) => continue,
            Some(_) => {
                kept.push(a);
                break;
            }
            None => kept.push(a),
        }
    }
    Ok(match kept.len() {
        0 => Expr::constant(Value::Null, ty),
        1 if kept[0].ty == ty => kept.pop().expect("one argument"),
        _ => Expr {
            kind: ExprKind::Coalesce(kept),
            ty,
        },
    })
}
