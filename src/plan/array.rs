//! Binding the array forms of expressions: `ARRAY[...]` and
//! `ARRAY(subquery)`, subscripts and slices, `x op ANY/ALL (array)`, `||`
//! with an array operand, and calls with a `VARIADIC` argument.
//!
//! Each becomes a call of a [`ArrayFunc`] (the evaluator needs nothing of
//! its own for arrays); types follow PostgreSQL: the elements of
//! `ARRAY[...]` unify as a `CASE`'s results do, an untyped literal beside
//! an array is an array, and an uncorrelated `ARRAY(subquery)` runs once
//! while binding, as an InitPlan.

use heapdb_grammar::ast;

use super::bind::{at, leftmost, Binder, Mode};
use super::scope::Scope;
use crate::err;
use crate::error::Result;
use crate::nodes::expr::{Expr, ExprKind};
use crate::nodes::func::Func;
use crate::types::array::Array;
use crate::types::array_funcs::{ArrayFunc, Variadic};
use crate::types::cast::CastContext;
use crate::types::funcs::ScalarFunc;
use crate::types::{self, BinaryOp, DataType, Value};

/// A call of `f` on `args`, of type `ty`.
fn call(f: ArrayFunc, args: Vec<Expr>, ty: DataType) -> Expr {
    Expr {
        kind: ExprKind::Func(Func(ScalarFunc::Array(f)), args),
        ty,
    }
}

impl Binder<'_> {
    /// `ARRAY[a, b, ...]`.
    pub(super) fn bind_array(
        &mut self,
        items: &[ast::Expr],
        scope: &Scope,
        mode: &mut Mode,
    ) -> Result<Expr> {
        if items.is_empty() {
            return Err(err!(
                IndeterminateDatatype,
                "cannot determine type of empty array"
            )
            .with_hint("Explicitly cast to the desired type, for example ARRAY[]::integer[]."));
        }
        let mut bound = Vec::with_capacity(items.len());
        for e in items {
            bound.push((self.bind_expr(e, scope, mode)?, leftmost(e)));
        }
        let all: Vec<(DataType, ast::Offset)> = bound.iter().map(|(e, off)| (e.ty, *off)).collect();
        let elem = self.unify("ARRAY", &all)?;
        if let DataType::Array(_) = elem {
            return Err(err!(
                FeatureNotSupported,
                "multidimensional arrays are not supported"
            ));
        }
        let args = bound
            .into_iter()
            .map(|(e, off)| self.coerce(e, &elem, CastContext::Implicit, off))
            .collect::<Result<Vec<_>>>()?;
        let ty = DataType::array_of(elem);
        if args.iter().all(|a| a.as_const().is_some()) {
            let values = args.iter().filter_map(|a| a.as_const().cloned()).collect();
            return Ok(Expr::constant(Array::new(elem, values).into_value(), ty));
        }
        Ok(call(ArrayFunc::Construct(elem), args, ty))
    }

    /// `ARRAY[]::type[]`: the empty array of the cast's type; `None` when
    /// `expr` is not an empty `ARRAY[]` or `ty` not an array type.
    pub(super) fn empty_array_cast(&self, expr: &ast::Expr, ty: &DataType) -> Option<Expr> {
        match (&expr.kind, ty) {
            (ast::ExprKind::Array(items), DataType::Array(elem)) if items.is_empty() => Some(
                Expr::constant(Array::new(**elem, Vec::new()).into_value(), *ty),
            ),
            _ => None,
        }
    }

    /// `ARRAY(subquery)`: the subquery's values, in its order, as an array
    /// (empty when it returns no rows).
    pub(super) fn bind_array_subquery(
        &mut self,
        query: &ast::Query,
        scope: &Scope,
        mode: &mut Mode,
    ) -> Result<Expr> {
        let (plan, args) = self.plan_sublink(query, scope, mode)?;
        if plan.fields.len() != 1 {
            return Err(err!(SyntaxError, "subquery must return only one column"));
        }
        if !args.is_empty() {
            return Err(err!(
                FeatureNotSupported,
                "ARRAY(subquery) referring to the outer query is not supported"
            ));
        }
        let elem = plan.fields[0].ty;
        if let DataType::Array(_) = elem {
            return Err(err!(
                FeatureNotSupported,
                "multidimensional arrays are not supported"
            ));
        }
        let elem = if elem == DataType::Unknown {
            DataType::Text
        } else {
            elem
        };
        let rows = self.ctx.run_subquery(&plan)?;
        let values = rows
            .into_iter()
            .map(|mut r| {
                if r.is_empty() {
                    Value::Null
                } else {
                    r.swap_remove(0)
                }
            })
            .collect();
        Ok(Expr::constant(
            Array::new(elem, values).into_value(),
            DataType::array_of(elem),
        ))
    }

    /// `x[i]` and the slices `x[a:b]`, `x[a:]`, `x[:b]`, `x[:]`.
    pub(super) fn bind_subscript(
        &mut self,
        expr: &ast::Expr,
        lower: Option<&ast::Expr>,
        upper: Option<&ast::Expr>,
        slice: bool,
        scope: &Scope,
        mode: &mut Mode,
    ) -> Result<Expr> {
        let x = self.bind_expr(expr, scope, mode)?;
        let DataType::Array(elem) = x.ty else {
            return Err(at(
                err!(
                    DatatypeMismatch,
                    "cannot subscript type {} because it does not support subscripting",
                    x.ty
                ),
                leftmost(expr),
            ));
        };
        let ty = x.ty;
        let mut args = vec![x];
        for e in [lower, upper].into_iter().flatten() {
            let b = self.bind_expr(e, scope, mode)?;
            let b = match b.ty {
                DataType::Int2 | DataType::Int4 | DataType::Unknown => b,
                DataType::Int8 => b,
                _ => {
                    return Err(at(
                        err!(DatatypeMismatch, "array subscript must have type integer"),
                        leftmost(e),
                    ))
                }
            };
            args.push(self.coerce(b, &DataType::Int4, CastContext::Assignment, leftmost(e))?);
        }
        if slice {
            Ok(call(
                ArrayFunc::Slice(lower.is_some(), upper.is_some()),
                args,
                ty,
            ))
        } else {
            Ok(call(ArrayFunc::Subscript, args, *elem))
        }
    }

    /// `x op ANY (array)` / `x op ALL (array)`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn bind_any_array(
        &mut self,
        expr: &ast::Expr,
        op: ast::BinaryOp,
        all: bool,
        array: &ast::Expr,
        scope: &Scope,
        mode: &mut Mode,
        offset: ast::Offset,
    ) -> Result<Expr> {
        let bop = match op {
            ast::BinaryOp::Eq => BinaryOp::Eq,
            ast::BinaryOp::NotEq => BinaryOp::NotEq,
            ast::BinaryOp::Lt => BinaryOp::Lt,
            ast::BinaryOp::LtEq => BinaryOp::LtEq,
            ast::BinaryOp::Gt => BinaryOp::Gt,
            ast::BinaryOp::GtEq => BinaryOp::GtEq,
            _ => {
                return Err(at(
                    err!(
                        FeatureNotSupported,
                        "operator {op} ANY/ALL (array) is not supported"
                    ),
                    offset,
                ))
            }
        };
        let x = self.bind_expr(expr, scope, mode)?;
        let a = self.bind_expr(array, scope, mode)?;
        let elem = match a.ty {
            DataType::Array(e) => *e,
            DataType::Unknown if x.ty == DataType::Unknown => DataType::Text,
            DataType::Unknown => x.ty,
            _ => {
                return Err(at(
                    err!(
                        WrongObjectType,
                        "op ANY/ALL (array) requires array on right side"
                    ),
                    offset,
                ))
            }
        };
        let (lt, rt, _) = types::resolve_binary(bop, &x.ty, &elem)
            .ok_or_else(|| at(types::ops::operator_error(bop, &x.ty, &elem), offset))?;
        let x = self.coerce(x, &lt, CastContext::Implicit, leftmost(expr))?;
        let a = self.coerce(
            a,
            &DataType::array_of(rt),
            CastContext::Implicit,
            leftmost(array),
        )?;
        Ok(call(
            ArrayFunc::Quantified(bop, all),
            vec![x, a],
            DataType::Bool,
        ))
    }

    /// `x [NOT] LIKE | ILIKE ANY | ALL (array)`; `flags` are ALL, NOT and
    /// ILIKE.
    pub(super) fn bind_like_any(
        &mut self,
        expr: &ast::Expr,
        array: &ast::Expr,
        flags: [bool; 3],
        scope: &Scope,
        mode: &mut Mode,
    ) -> Result<Expr> {
        let [all, negated, ci] = flags;
        let x = self.bind_expr(expr, scope, mode)?;
        let a = self.bind_expr(array, scope, mode)?;
        let text_array = DataType::array_of(DataType::Text);
        if !(x.ty.is_string() || x.ty == DataType::Unknown)
            || !(matches!(a.ty, DataType::Array(e) if e.is_string()) || a.ty == DataType::Unknown)
        {
            let op = match (negated, ci) {
                (false, false) => "~~",
                (true, false) => "!~~",
                (false, true) => "~~*",
                (true, true) => "!~~*",
            };
            let elem = a.ty.element().unwrap_or(a.ty);
            return Err(at(
                err!(UndefinedFunction, "operator does not exist: {} {op} {elem}", x.ty)
                    .with_hint("No operator matches the given name and argument types. You might need to add explicit type casts."),
                leftmost(expr),
            ));
        }
        let x = self.coerce(x, &DataType::Text, CastContext::Implicit, leftmost(expr))?;
        let a = self.coerce(a, &text_array, CastContext::Implicit, leftmost(array))?;
        Ok(call(
            ArrayFunc::LikeQuantified(all, negated, ci),
            vec![x, a],
            DataType::Bool,
        ))
    }

    /// `a || b` where either side is an array: `array_cat`, `array_append`
    /// or `array_prepend`; `None` when neither side is an array.
    pub(super) fn bind_array_concat(
        &mut self,
        l: Expr,
        r: Expr,
        offsets: (ast::Offset, ast::Offset),
        offset: ast::Offset,
    ) -> Result<std::result::Result<Expr, (Expr, Expr)>> {
        let is_array = |t: &DataType| matches!(t, DataType::Array(_));
        let f = match (&l.ty, &r.ty) {
            (a, b) if is_array(a) && (is_array(b) || *b == DataType::Unknown) => {
                ArrayFunc::Cat(DataType::Unknown)
            }
            (a, b) if is_array(b) && *a == DataType::Unknown => ArrayFunc::Cat(DataType::Unknown),
            (a, _) if is_array(a) => ArrayFunc::Append(DataType::Unknown),
            (_, b) if is_array(b) => ArrayFunc::Prepend(DataType::Unknown),
            _ => return Ok(Err((l, r))),
        };
        let resolved = f.resolve(&[l.ty, r.ty]).map_err(|_| {
            at(
                types::ops::operator_error(BinaryOp::Concat, &l.ty, &r.ty),
                offset,
            )
        })?;
        let l = self.coerce(l, &resolved.arg_types[0], CastContext::Implicit, offsets.0)?;
        let r = self.coerce(r, &resolved.arg_types[1], CastContext::Implicit, offsets.1)?;
        Ok(Ok(Expr {
            kind: ExprKind::Func(Func(resolved.func), vec![l, r]),
            ty: resolved.result,
        }))
    }

    /// A call whose last argument is marked `VARIADIC`: `concat`,
    /// `concat_ws` and `format` take the array's elements as their
    /// trailing arguments.
    pub(super) fn bind_variadic(
        &mut self,
        name: &str,
        mut args: Vec<(Expr, ast::Offset)>,
    ) -> Result<Expr> {
        let Some((last, last_off)) = args.last() else {
            return Err(err!(SyntaxError, "VARIADIC requires an argument"));
        };
        let last_off = *last_off;
        if !matches!(last.ty, DataType::Array(_)) {
            return Err(at(
                err!(DatatypeMismatch, "VARIADIC argument must be an array"),
                last_off,
            ));
        }
        let v = match (name, args.len()) {
            ("concat", _) => Variadic::Concat,
            ("concat_ws", n) if n >= 2 => Variadic::ConcatWs,
            ("format", n) if n >= 2 => Variadic::Format,
            _ => {
                let list: Vec<String> = args
                    .iter()
                    .enumerate()
                    .map(|(k, (a, _))| {
                        if k + 1 == args.len() {
                            format!("VARIADIC {}", a.ty)
                        } else {
                            a.ty.to_string()
                        }
                    })
                    .collect();
                return Err(err!(
                    UndefinedFunction,
                    "function {name}({}) does not exist",
                    list.join(", ")
                )
                .with_hint("No function matches the given name and argument types. You might need to add explicit type casts."));
            }
        };
        let mut bound = Vec::with_capacity(args.len());
        let n = args.len();
        for (k, (a, off)) in args.drain(..).enumerate() {
            let a = if k == 0 && v != Variadic::Concat && k + 1 < n {
                self.coerce(a, &DataType::Text, CastContext::Implicit, off)?
            } else {
                self.resolve_unknown(a)?
            };
            bound.push(a);
        }
        Ok(call(ArrayFunc::Variadic(v), bound, DataType::Text))
    }
}
