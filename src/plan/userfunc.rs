//! User-defined functions at plan time: choosing the function a call names
//! (overloads by argument types) and compiling its body into the
//! executor's [`Program`].
//!
//! A call `f(args)` looks at the visible user functions named `f`: the one
//! whose argument types the call's match with the fewest implicit casts is
//! taken (a tie is PostgreSQL's 42725 `function f(unknown) is not
//! unique`); when none fits, a builtin of that name is tried, and without
//! one the error is 42883 `function f(integer) does not exist`. The call
//! becomes `Func(User(id))`, `id` being the entry of that function version
//! in `types::funcs::user`, compiled on first use.
//!
//! Compiling: `$n` in the body is rewritten to the quoted name `"$n"`,
//! then every expression is bound by a [`Binder`] whose parameters are the
//! function's variables (arguments by name and by `$n`, then PL/pgSQL's
//! `DECLARE`d ones), each a `Param` slot. A `LANGUAGE sql` body that is
//! one SELECT of one expression without FROM is that expression (what
//! PostgreSQL would inline); any other body of SELECTs runs each as a
//! query, the last one's first row the result. A PL/pgSQL body is parsed
//! by [`super::plpgsql_parse`] and compiled by [`super::plpgsql_compile`].
//! Anything else is refused with 0A000 naming what is missing.
//! `CREATE FUNCTION` checks a SQL body by compiling it and a PL/pgSQL body
//! by parsing it ([`check_body`]).
//!
//! A user function named in FROM ([`Binder::user_function_in_from`]) is
//! compiled for that plan and owned by it (a `Srf::User` call): a
//! set-returning SQL function (`RETURNS SETOF t`, `RETURNS TABLE (...)`)
//! gives its last query's rows, a scalar one its one value as a row.
//! Called in an expression, a set-returning function is refused (0A000)
//! unless it is a select-list item of one column, which the select
//! planner expands as it does the builtin set-returning functions.
//!
//! A VOLATILE function's body is compiled under [`NextCommand`]: its
//! queries read one command later than the calling statement, so they see
//! the rows it has written so far, as PostgreSQL's do.
//!
//! A body's expressions are bound once per function version and reused by
//! later statements, unless compiling it asked for something bound to the
//! statement (`now()`, a table, a subquery's rows: [`super::funcprobe`]);
//! such a body is compiled anew for each statement that calls it, so
//! `now()` inside a function is the calling statement's time.

use std::sync::Arc;

use heapdb_grammar::ast;
use heapdb_grammar::lexer::{tokenize, TokenKind};

use super::bind::Binder;
use super::nextcmd::NextCommand;
use super::plpgsql_compile::Compiler;
use super::plpgsql_parse::parse_block;
use crate::catalog::{DomainDef, FunctionDef, Language};
use crate::err;
use crate::error::Result;
use crate::exec::plpgsql::{Program, Stmt};
use crate::nodes::expr::{Expr, ExprKind};
use crate::nodes::func::Func;
use crate::nodes::plannodes::UserSet;
use crate::nodes::{Field, Srf, TableFunc};
use crate::types::cast::{cast_kind, CastContext};
use crate::types::funcs::volatility::Volatility;
use crate::types::funcs::{user, ScalarFunc};
use crate::types::DataType;

/// A user function called in FROM: its rows' source, its columns, and
/// whether it returns values of one type (its column then takes the FROM
/// item's alias, as PostgreSQL names it).
pub(super) type UserFromCall = (TableFunc, Vec<Field>, bool);

/// A call's arguments, bound, with where each was written.
type Args = Vec<(Expr, ast::Offset)>;

/// How many implicit casts the call's argument types need to match `def`,
/// or `None` when one cannot be cast implicitly.
fn cost(def: &FunctionDef, types: &[DataType]) -> Option<usize> {
    if def.args.len() != types.len() {
        return None;
    }
    let mut n = 0;
    for (a, t) in def.args.iter().zip(types) {
        if a.ty.without_typmod() == t.without_typmod() {
            continue;
        }
        if cast_kind(t, &a.ty) != Some(CastContext::Implicit) {
            return None;
        }
        n += 1;
    }
    Some(n)
}

fn type_list(types: &[DataType]) -> String {
    let list: Vec<String> = types.iter().map(|t| t.to_string()).collect();
    list.join(", ")
}

impl Binder<'_> {
    /// The call of user function `name` on `args`, or the arguments back
    /// when no user function of that name exists (or none fits and a
    /// builtin of that name does).
    pub fn bind_user_call(
        &mut self,
        name: &str,
        args: Args,
    ) -> Result<std::result::Result<Expr, Args>> {
        let types: Vec<DataType> = args.iter().map(|(a, _)| a.ty).collect();
        let Some(def) = self.choose_user_function(name, &types)? else {
            return Ok(Err(args));
        };
        if def.retset {
            return Err(err!(
                FeatureNotSupported,
                "set-returning function {name}() can only be called in FROM"
            ));
        }
        let (id, fresh) = user::reserve(def.serial, &def.name, def.volatility);
        if fresh {
            user::set_parallel_safe(id, def.parallel_safe);
            let mut probe = super::funcprobe::Probe::new(&mut *self.ctx);
            let compiled = Binder::new(&mut probe).compile_function(&def);
            match compiled {
                Ok(p) => {
                    user::install(id, Arc::new(move |a: &[_]| p.call(a)));
                    if probe.impure() {
                        // Bound to this statement (its clock, snapshot or
                        // tables): the next statement compiles its own.
                        user::forget(def.serial);
                    }
                }
                Err(e) => {
                    user::forget(def.serial);
                    return Err(e);
                }
            }
        }
        let bound = self.bind_user_args(&def, args)?;
        let call = Expr {
            kind: ExprKind::Func(Func(ScalarFunc::User(id)), bound),
            ty: def.ret,
        };
        Ok(Ok(self.check_declared_domain(call, &def.ret_domain)?))
    }

    /// A user function called in FROM (`select * from f(1)`): a
    /// set-returning one's rows, a scalar one's single row (see
    /// [`UserFromCall`]). `None` when no user function of that name fits
    /// the arguments.
    pub(super) fn user_function_in_from(
        &mut self,
        name: &str,
        args: &[(Expr, ast::Offset)],
    ) -> Result<Option<UserFromCall>> {
        let types: Vec<DataType> = args.iter().map(|(a, _)| a.ty).collect();
        let Some(def) = self.choose_user_function(name, &types)? else {
            return Ok(None);
        };
        // Compiled for this plan and owned by it. Its body is planned now,
        // so a body calling its own function in FROM would plan forever.
        if COMPILING_SETS.with(|c| c.borrow().contains(&def.serial)) {
            return Err(err!(
                FeatureNotSupported,
                "set-returning function {}() calls itself in FROM",
                def.name
            ));
        }
        COMPILING_SETS.with(|c| c.borrow_mut().push(def.serial));
        let compiled = self.compile_function(&def);
        COMPILING_SETS.with(|c| c.borrow_mut().pop());
        let p = compiled?;
        let body: user::SetBody = if def.retset {
            let cols = result_types(&def);
            Arc::new(move |a: &[_]| p.rows(a, &cols))
        } else {
            Arc::new(move |a: &[_]| Ok(vec![vec![p.call(a)?]]))
        };
        let bound = self.bind_user_args(&def, args.to_vec())?;
        let fields = if def.out_cols.is_empty() {
            vec![Field {
                name: def.name.clone(),
                ty: def.ret,
            }]
        } else {
            def.out_cols
                .iter()
                .map(|(name, ty)| Field {
                    name: name.clone(),
                    ty: *ty,
                })
                .collect()
        };
        let func = TableFunc::Call {
            srf: Srf::User(UserSet {
                name: def.name.clone(),
                body,
            }),
            args: bound,
        };
        Ok(Some((func, fields, def.out_cols.is_empty())))
    }

    /// The call's arguments cast to `def`'s argument types (and checked
    /// against their declared domains).
    fn bind_user_args(&mut self, def: &FunctionDef, args: Args) -> Result<Vec<Expr>> {
        let mut bound = Vec::with_capacity(args.len());
        for ((a, off), p) in args.into_iter().zip(&def.args) {
            let e = self.coerce(a, &p.ty, CastContext::Implicit, off)?;
            bound.push(self.check_declared_domain(e, &p.domain)?);
        }
        Ok(bound)
    }

    /// The user function named `name` that a call with argument types
    /// `types` means, by PostgreSQL's rules (fewest implicit casts, then a
    /// string type for an `unknown` argument); `None` when there is no user
    /// function of that name, or none fits and a builtin of that name
    /// exists.
    fn choose_user_function(
        &mut self,
        name: &str,
        types: &[DataType],
    ) -> Result<Option<Arc<FunctionDef>>> {
        let defs = self.ctx.functions(name);
        if defs.is_empty() {
            return Ok(None);
        }
        let mut best: Vec<(&Arc<FunctionDef>, usize)> = Vec::new();
        for d in &defs {
            if let Some(c) = cost(d, types) {
                match best.first() {
                    Some((_, b)) if c > *b => {}
                    Some((_, b)) if c < *b => best = vec![(d, c)],
                    _ => best.push((d, c)),
                }
            }
        }
        if best.len() > 1 {
            // PostgreSQL's tie-break: an `unknown` argument (a string
            // literal) prefers a candidate taking a string type there.
            let stringy = |d: &FunctionDef| {
                d.args
                    .iter()
                    .zip(types)
                    .filter(|(a, t)| **t == DataType::Unknown && a.ty.is_string())
                    .count()
            };
            let most = best.iter().map(|(d, _)| stringy(d)).max().unwrap_or(0);
            best.retain(|(d, _)| stringy(d) == most);
        }
        match best.as_slice() {
            [(d, _)] => Ok(Some((*d).clone())),
            [] if ScalarFunc::from_name(name).is_some() || is_table_function(name) => Ok(None),
            [] => Err(err!(
                UndefinedFunction,
                "function {name}({}) does not exist",
                type_list(types)
            )
            .with_hint("No function matches the given name and argument types. You might need to add explicit type casts.")),
            _ => Err(err!(
                AmbiguousFunction,
                "function {name}({}) is not unique",
                type_list(types)
            )
            .with_hint("Could not choose a best candidate function. You might need to add explicit type casts.")),
        }
    }

    /// `e` checked against the domain `name` a function declares, when it
    /// declares one (a domain dropped since is no longer checked).
    fn check_declared_domain(&mut self, e: Expr, name: &Option<String>) -> Result<Expr> {
        match name.as_deref().and_then(|n| self.ctx.domain(n)) {
            Some(d) => self.coerce_to_domain(e, &d),
            None => Ok(e),
        }
    }

    /// `def`'s body compiled (its expressions bound and its queries
    /// planned under a binder of its own over the same planning context).
    pub fn compile_function(&mut self, def: &FunctionDef) -> Result<Program> {
        if def.volatility == Volatility::Volatile {
            // Its queries see what the calling statement wrote so far.
            let mut next = NextCommand::new(&mut *self.ctx);
            return Binder::new(&mut next).compile_body(def);
        }
        self.compile_body(def)
    }

    /// [`Binder::compile_function`] under this binder's planning context.
    fn compile_body(&mut self, def: &FunctionDef) -> Result<Program> {
        let body = rewrite_params(&def.body);
        let mut b = Binder::new(&mut *self.ctx);
        b.params = def
            .args
            .iter()
            .enumerate()
            .flat_map(|(i, a)| {
                let by_pos = Some((format!("${}", i + 1), i, a.ty));
                let by_name = a.name.clone().map(|n| (n, i, a.ty));
                by_pos.into_iter().chain(by_name)
            })
            .collect();
        let arg_types = def.args.iter().map(|a| a.ty).collect();
        let mut c = Compiler::new(b, arg_types, def.ret);
        if def.out_cols.len() > 1 {
            c.set_cols = def.out_cols.iter().map(|(_, t)| *t).collect();
            c.set_name = "record".into();
        }
        let (stmts, found) = match def.language {
            Language::Sql => {
                let stmts = parse_sql_body(&body, &def.ret)?;
                let simple = def.ret != DataType::Unknown && !def.retset;
                match simple_body(&stmts).filter(|_| simple) {
                    // One expression without FROM: no query to run.
                    Some(e) => (vec![Stmt::Return(1, Some(c.bind_as(&e, &def.ret)?))], None),
                    None => (c.sql_body(&stmts)?, None),
                }
            }
            Language::Plpgsql => {
                let block = parse_block(&body)?;
                let (stmts, found) = c.plpgsql_body(&block)?;
                (stmts, Some(found))
            }
        };
        Ok(Program {
            signature: def.signature(),
            nargs: def.args.len(),
            types: c.types,
            body: stmts,
            strict: def.strict,
            plpgsql: def.language == Language::Plpgsql,
            found,
            ret: def.ret,
            void: def.ret == DataType::Unknown,
            volatile: def.volatility == Volatility::Volatile,
        })
    }
}

/// Checks a new function's body as `CREATE FUNCTION` does: a SQL body is
/// compiled (names, types, the result type), a PL/pgSQL body parsed.
pub fn check_body(b: &mut Binder<'_>, def: &FunctionDef) -> Result<()> {
    match def.language {
        Language::Sql => b.compile_function(def).map(|_| ()).map_err(|e| {
            let c = format!("SQL function \"{}\"", def.name);
            e.with_context(c)
        }),
        Language::Plpgsql => {
            let block = parse_block(&rewrite_params(&def.body))?;
            for d in &block.decls {
                let t = d.type_text.trim().to_ascii_lowercase();
                if t != "record" && !t.ends_with("%type") && !t.ends_with("%rowtype") {
                    decl_type_full(b, &d.type_text)?;
                }
            }
            Ok(())
        }
    }
}

thread_local! {
    /// The functions whose bodies are being compiled for a call in FROM.
    static COMPILING_SETS: std::cell::RefCell<Vec<u64>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The types of a set-returning function's result columns.
fn result_types(def: &FunctionDef) -> Vec<DataType> {
    if def.out_cols.is_empty() {
        vec![def.ret]
    } else {
        def.out_cols.iter().map(|(_, t)| *t).collect()
    }
}

/// Whether `name` is a builtin that only FROM calls (a call in FROM falls
/// back to it when no user function of that name fits).
fn is_table_function(name: &str) -> bool {
    matches!(
        name,
        "generate_series"
            | "unnest"
            | "string_to_table"
            | "regexp_matches"
            | "regexp_split_to_table"
    ) || crate::types::json::srf::JsonSrf::from_name(name).is_some()
}

/// `$1` written as the quoted name `"$1"` (outside strings and quoted
/// names), which the parser reads as a column reference.
fn rewrite_params(body: &str) -> String {
    let toks = tokenize(body);
    let mut out = String::with_capacity(body.len() + 8);
    let mut last = 0;
    for (k, t) in toks.iter().enumerate() {
        let next = toks.get(k + 1);
        if t.kind == TokenKind::Other
            && &body[t.start..t.end] == "$"
            && next.is_some_and(|n| n.kind == TokenKind::Number && n.start == t.end)
        {
            let n = next.map(|n| &body[n.start..n.end]).unwrap_or("");
            if n.bytes().all(|b| b.is_ascii_digit()) {
                out.push_str(&body[last..t.start]);
                out.push_str(&format!("\"${n}\""));
                last = t.end + n.len();
            }
        }
    }
    out.push_str(&body[last..]);
    out
}

/// A SQL function body's statements (at least one).
fn parse_sql_body(body: &str, ret: &DataType) -> Result<Vec<ast::Statement>> {
    let stmts = heapdb_grammar::parse(body).map_err(|e| {
        let mut e = crate::error::parse_error(e);
        e.position = None;
        e
    })?;
    if stmts.is_empty() {
        return Err(err!(
            InvalidFunctionDefinition,
            "return type mismatch in function declared to return {ret}"
        )
        .with_detail(
            "Function's final statement must be SELECT or INSERT/UPDATE/DELETE RETURNING.",
        ));
    }
    Ok(stmts)
}

/// The one expression of a body that is just `SELECT expr` without FROM.
fn simple_body(stmts: &[ast::Statement]) -> Option<ast::Expr> {
    match stmts {
        [ast::Statement::Query(q)] => single_expr(q),
        _ => None,
    }
}

/// The expression of `SELECT expr` (no FROM, WHERE, grouping, ordering).
fn single_expr(q: &ast::Query) -> Option<ast::Expr> {
    if !q.with.is_empty() || !q.order_by.is_empty() || q.limit.is_some() || q.offset.is_some() {
        return None;
    }
    let ast::SetExpr::Select(s) = &q.body else {
        return None;
    };
    if !s.from.is_empty()
        || s.where_clause.is_some()
        || !s.group_by.is_empty()
        || s.having.is_some()
        || s.distinct
    {
        return None;
    }
    match s.projection.as_slice() {
        [ast::SelectItem::Expr { expr, .. }] => Some(expr.clone()),
        _ => None,
    }
}

/// One PL/pgSQL expression's text parsed as PostgreSQL runs it: the query
/// `SELECT text`, or the one expression when that query is nothing more.
pub(super) fn parse_value(text: &str) -> Result<std::result::Result<ast::Expr, ast::Query>> {
    let q = match heapdb_grammar::parse_one(&format!("SELECT {text}")) {
        Ok(ast::Statement::Query(q)) => q,
        Ok(_) => return Err(err!(SyntaxError, "syntax error at or near \"{text}\"")),
        Err(e) => {
            let mut e = crate::error::parse_error(e);
            e.position = None;
            return Err(e);
        }
    };
    Ok(single_expr(&q).ok_or(*q))
}

/// One PL/pgSQL expression's text parsed (as `SELECT text`), where only an
/// expression without FROM is taken.
pub(super) fn parse_expr(text: &str) -> Result<ast::Expr> {
    parse_value(text)?.ok().ok_or_else(|| {
        err!(
            FeatureNotSupported,
            "PL/pgSQL expression \"{text}\" is not supported (one expression without FROM only)"
        )
    })
}

/// A declared variable's type, from its text, and the domain it names
/// when it names one.
pub(super) fn decl_type_full(
    b: &mut Binder<'_>,
    text: &str,
) -> Result<(DataType, Option<Arc<DomainDef>>)> {
    match parse_expr(&format!("CAST(NULL AS {text})"))?.kind {
        ast::ExprKind::Cast { data_type: t, .. } => b.resolve_type(&t),
        _ => Err(err!(SyntaxError, "syntax error at or near \"{text}\"")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn params_are_rewritten_outside_strings() {
        assert_eq!(
            rewrite_params("select $1 + $12, '$1'"),
            "select \"$1\" + \"$12\", '$1'"
        );
        assert_eq!(rewrite_params("$$x$$"), "$$x$$");
    }
}
