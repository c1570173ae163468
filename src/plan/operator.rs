//! Binding a user-defined operator (`CREATE OPERATOR`): PostgreSQL's
//! `oper()` over the operators the catalog holds beside the built-in ones.
//!
//! Built-in operators are searched first (they are `pg_catalog`'s, which
//! PostgreSQL's search path puts first); a user operator is considered
//! when no built-in one takes the operands' types. Among the user
//! operators with the symbol, one taking exactly the operands' types is
//! chosen; failing that, the only one both operands cast to implicitly
//! (an untyped literal casts to any type). A domain operand is its base
//! type here. The chosen operator is a call of its function, with that
//! function's argument and result domains checked.

use heapdb_grammar::ast;

use super::bind::Binder;
use crate::catalog::OperatorDef;
use crate::error::Result;
use crate::exec::expr::Expr;
use crate::types::cast::{cast_kind, CastContext};
use crate::types::DataType;

/// How many implicit casts `types` need to be `def`'s operands, or `None`.
fn cost(def: &OperatorDef, left: Option<DataType>, right: DataType) -> Option<usize> {
    let mut n = 0;
    let pairs = [(def.left, left), (Some(def.right), Some(right))];
    for (want, have) in pairs {
        match (want, have) {
            (None, None) => {}
            (Some(w), Some(h)) if w.without_typmod() == h.without_typmod() => {}
            (Some(w), Some(h)) if cast_kind(&h, &w) == Some(CastContext::Implicit) => n += 1,
            _ => return None,
        }
    }
    Some(n)
}

impl Binder<'_> {
    /// `l sym r` (`sym r` without `l`) as a user operator's function call,
    /// or `None` when no user operator `sym` takes those operands.
    pub(super) fn try_user_operator(
        &mut self,
        sym: &str,
        l: Option<(&Expr, ast::Offset)>,
        r: (&Expr, ast::Offset),
    ) -> Result<Option<Expr>> {
        let ops = self.ctx.operators(sym);
        if ops.is_empty() {
            return Ok(None);
        }
        let (lt, rt) = (l.map(|x| x.0.ty), r.0.ty);
        let mut best: Vec<(&OperatorDef, usize)> = Vec::new();
        for o in &ops {
            if let Some(c) = cost(o, lt, rt) {
                match best.first() {
                    Some((_, b)) if c > *b => {}
                    Some((_, b)) if c < *b => best = vec![(o, c)],
                    _ => best.push((o, c)),
                }
            }
        }
        let [(op, _)] = best.as_slice() else {
            return Ok(None);
        };
        let args = l
            .into_iter()
            .chain(std::iter::once(r))
            .map(|(e, off)| (e.clone(), off))
            .collect();
        let function = op.function.clone();
        match self.bind_user_call(&function, args)? {
            Ok(e) => Ok(Some(e)),
            Err(_) => Ok(None),
        }
    }
}
