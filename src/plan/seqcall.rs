//! Binding the sequence functions `nextval(s)`, `currval(s)`,
//! `setval(s, v [, is_called])` and `lastval()`.
//!
//! The sequence is named by a constant (`'s'`, `'s'::regclass`,
//! `'"S"'::text`), resolved now as PostgreSQL's `regclass` input resolves
//! it; the call becomes a volatile compiled function
//! ([`crate::types::funcs::user`]) that the planning context makes for the
//! sequence ([`super::PlanContext::sequence_function`]), so every row's
//! call reaches the sequence's shared state.

use heapdb_grammar::ast;

use super::bind::{Binder, Mode};
use super::scope::Scope;
use crate::err;
use crate::error::Result;
use crate::nodes::expr::{Expr, ExprKind};
use crate::nodes::func::Func;
use crate::types::cast::CastContext;
use crate::types::funcs::ScalarFunc;
use crate::types::DataType;

/// Whether `name` is a sequence function this module binds.
pub fn is_sequence_function(name: &str) -> bool {
    matches!(name, "nextval" | "currval" | "setval" | "lastval")
}

/// The relation name a `regclass` text names: its last dotted part,
/// folded to lower case unless double-quoted.
pub fn regclass_name(text: &str) -> String {
    let mut parts = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut chars = text.trim().chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                chars.next();
                cur.push('"');
            }
            '"' => quoted = !quoted,
            '.' if !quoted => parts.push(std::mem::take(&mut cur)),
            c if quoted => cur.push(c),
            c => cur.push(c.to_ascii_lowercase()),
        }
    }
    parts.push(cur);
    parts.pop().unwrap_or_default()
}

/// The constant sequence name an argument spells, if it is one.
fn constant_name(e: &ast::Expr) -> Option<&str> {
    match &e.kind {
        ast::ExprKind::Literal(ast::Literal::String(s)) => Some(s),
        ast::ExprKind::Cast { expr, .. } => constant_name(expr),
        _ => None,
    }
}

impl Binder<'_> {
    /// Binds a call of sequence function `name` (see the module doc).
    pub fn bind_sequence_call(
        &mut self,
        name: &str,
        call: &ast::FunctionCall,
        scope: &Scope,
        mode: &mut Mode,
    ) -> Result<Expr> {
        let arity_ok = match name {
            "lastval" => call.args.is_empty(),
            "setval" => matches!(call.args.len(), 2 | 3),
            _ => call.args.len() == 1,
        };
        if !arity_ok {
            return Err(err!(
                UndefinedFunction,
                "function {name}({}) does not exist",
                vec!["unknown"; call.args.len()].join(", ")
            )
            .with_hint("No function matches the given name and argument types. You might need to add explicit type casts."));
        }
        let seq = match call.args.first() {
            None => None,
            Some(a) => Some(regclass_name(constant_name(a).ok_or_else(|| {
                err!(
                    FeatureNotSupported,
                    "{name}() of a sequence named by a non-constant expression is not supported"
                )
            })?)),
        };
        let id = self
            .ctx
            .sequence_function(name, seq.as_deref())
            .map_err(|e| match call.args.first() {
                Some(a) => super::bind::at(e, a.offset),
                None => e,
            })?;
        let mut args = Vec::new();
        if name == "setval" {
            let v = self.bind_expr(&call.args[1], scope, mode)?;
            args.push(self.coerce(
                v,
                &DataType::Int8,
                CastContext::Implicit,
                call.args[1].offset,
            )?);
            if let Some(a) = call.args.get(2) {
                let b = self.bind_expr(a, scope, mode)?;
                args.push(self.coerce(b, &DataType::Bool, CastContext::Implicit, a.offset)?);
            }
        }
        Ok(Expr {
            kind: ExprKind::Func(Func(ScalarFunc::User(id)), args),
            ty: DataType::Int8,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::regclass_name;

    #[test]
    fn regclass_names_fold_as_postgresql() {
        assert_eq!(regclass_name("S"), "s");
        assert_eq!(regclass_name("public.Foo"), "foo");
        assert_eq!(regclass_name("\"My.Seq\""), "My.Seq");
        assert_eq!(regclass_name("\"a\"\"b\""), "a\"b");
    }
}
