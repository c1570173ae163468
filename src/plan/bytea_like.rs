//! Binding `x [NOT] LIKE p [ESCAPE e]` when an operand is `bytea`.
//!
//! PostgreSQL has `~~` / `!~~` for `(bytea, bytea)` and reads `p ESCAPE e`
//! as `like_escape(p, e)`, which exists for `(text, text)` and `(bytea,
//! bytea)`: so the pattern is bytea when `p` or `e` is, and text when both
//! are untyped literals (then `bytea ~~ text` does not exist). There is no
//! bytea `ILIKE`. The result is a call of
//! [`ByteFunc::Like`](crate::types::funcs::bytes::ByteFunc::Like), which
//! takes the escape at run time.

use heapdb_grammar::ast;

use super::bind::{at, Binder};
use crate::err;
use crate::error::Result;
use crate::nodes::expr::{Expr, ExprKind};
use crate::nodes::func::Func;
use crate::types::cast::CastContext;
use crate::types::funcs::bytes::ByteFunc;
use crate::types::funcs::ScalarFunc;
use crate::types::DataType;

impl Binder<'_> {
    /// Binds a LIKE whose operand, pattern or escape is `bytea`; `ops` are
    /// the bound operand and pattern with their offsets, `offset` is the
    /// operator's (where PostgreSQL reports a missing operator).
    pub(super) fn bind_bytea_like(
        &self,
        [(x, x_at), (p, p_at)]: [(Expr, ast::Offset); 2],
        escape: Option<(Expr, ast::Offset)>,
        [negated, case_insensitive]: [bool; 2],
        offset: ast::Offset,
    ) -> Result<Expr> {
        use DataType::{Bytea, Unknown};
        let untyped_or_bytea = |t: &DataType| matches!(t, Bytea | Unknown);
        // The type `like_escape(p, e)` resolves to (`p` alone without ESCAPE).
        let pattern_ty = match &escape {
            None => p.ty,
            Some((e, _)) if untyped_or_bytea(&p.ty) && untyped_or_bytea(&e.ty) => {
                if p.ty == Bytea || e.ty == Bytea {
                    Bytea
                } else {
                    DataType::Text
                }
            }
            Some((e, _)) => {
                return Err(at(
                    err!(
                        UndefinedFunction,
                        "function like_escape({}, {}) does not exist",
                        p.ty,
                        e.ty
                    )
                    .with_hint(
                        "No function matches the given name and argument types. You might need to add explicit type casts.",
                    ),
                    p_at,
                ))
            }
        };
        let op = match (case_insensitive, negated) {
            (false, false) => "~~",
            (false, true) => "!~~",
            (true, false) => "~~*",
            (true, true) => "!~~*",
        };
        let valid = untyped_or_bytea(&x.ty)
            && untyped_or_bytea(&pattern_ty)
            && (x.ty == Bytea || pattern_ty == Bytea);
        if case_insensitive || !valid {
            return Err(at(
                err!(
                    UndefinedFunction,
                    "operator does not exist: {} {op} {}",
                    x.ty,
                    pattern_ty
                )
                .with_hint(
                    "No operator matches the given name and argument types. You might need to add explicit type casts.",
                ),
                offset,
            ));
        }
        let mut args = vec![
            self.coerce(x, &Bytea, CastContext::Implicit, x_at)?,
            self.coerce(p, &Bytea, CastContext::Implicit, p_at)?,
        ];
        if let Some((e, e_at)) = escape {
            args.push(self.coerce(e, &Bytea, CastContext::Implicit, e_at)?);
        }
        Ok(Expr {
            kind: ExprKind::Func(Func(ScalarFunc::Bytes(ByteFunc::Like(negated))), args),
            ty: DataType::Bool,
        })
    }
}
