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
//! `DECLARE`d ones), each a `Param` slot. A `LANGUAGE sql` body is one
//! SELECT of one expression without FROM (what PostgreSQL would inline);
//! a PL/pgSQL body is parsed here ([`parse_block`]) into assignments,
//! `IF`, `RETURN`, `RAISE` and `NULL`. Anything else is refused with
//! 0A000 naming what is missing. `CREATE FUNCTION` checks a SQL body by
//! compiling it and a PL/pgSQL body by parsing it ([`check_body`]).
//!
//! A body's expressions are bound once per function version and reused by
//! later statements, unless compiling it asked for something bound to the
//! statement (`now()`, a table, a subquery's rows: [`super::funcprobe`]);
//! such a body is compiled anew for each statement that calls it, so
//! `now()` inside a function is the calling statement's time.

use std::sync::Arc;

use heapdb_grammar::ast;
use heapdb_grammar::lexer::{tokenize, Token, TokenKind};

use super::bind::{data_type, Binder, Mode};
use super::scope::Scope;
use crate::catalog::{FunctionDef, Language};
use crate::err;
use crate::error::{Error, Result};
use crate::exec::plpgsql::{Program, RaiseLevel, Stmt};
use crate::nodes::expr::{Expr, ExprKind};
use crate::nodes::func::Func;
use crate::types::cast::{cast_kind, CastContext};
use crate::types::funcs::{user, ScalarFunc};
use crate::types::DataType;

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
        let defs = self.ctx.functions(name);
        if defs.is_empty() {
            return Ok(Err(args));
        }
        let types: Vec<DataType> = args.iter().map(|(a, _)| a.ty).collect();
        let mut best: Vec<(&Arc<FunctionDef>, usize)> = Vec::new();
        for d in &defs {
            if let Some(c) = cost(d, &types) {
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
                    .zip(&types)
                    .filter(|(a, t)| **t == DataType::Unknown && a.ty.is_string())
                    .count()
            };
            let most = best.iter().map(|(d, _)| stringy(d)).max().unwrap_or(0);
            best.retain(|(d, _)| stringy(d) == most);
        }
        let def = match best.as_slice() {
            [(d, _)] => (*d).clone(),
            [] if ScalarFunc::from_name(name).is_some() => return Ok(Err(args)),
            [] => {
                return Err(err!(
                    UndefinedFunction,
                    "function {name}({}) does not exist",
                    type_list(&types)
                )
                .with_hint("No function matches the given name and argument types. You might need to add explicit type casts."))
            }
            _ => {
                return Err(err!(
                    AmbiguousFunction,
                    "function {name}({}) is not unique",
                    type_list(&types)
                )
                .with_hint("Could not choose a best candidate function. You might need to add explicit type casts."))
            }
        };
        let (id, fresh) = user::reserve(def.serial, &def.name, def.volatility);
        if fresh {
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
        let mut bound = Vec::with_capacity(args.len());
        for ((a, off), p) in args.into_iter().zip(&def.args) {
            bound.push(self.coerce(a, &p.ty, CastContext::Implicit, off)?);
        }
        Ok(Ok(Expr {
            kind: ExprKind::Func(Func(ScalarFunc::User(id)), bound),
            ty: def.ret,
        }))
    }

    /// `def`'s body compiled (its expressions bound under a binder of its
    /// own over the same planning context).
    pub fn compile_function(&mut self, def: &FunctionDef) -> Result<Program> {
        let body = rewrite_params(&def.body);
        let mut vars: Vec<(String, DataType)> = Vec::new();
        for (i, a) in def.args.iter().enumerate() {
            vars.push((format!("${}", i + 1), a.ty));
        }
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
        let mut c = Compiler {
            b,
            nargs: def.args.len(),
            ret: def.ret,
        };
        match def.language {
            Language::Sql => {
                let e = sql_body_expr(&body, &def.ret)?;
                let e = c.bind_as(&e, &def.ret)?;
                Ok(Program {
                    signature: def.signature(),
                    nargs: def.args.len(),
                    inits: Vec::new(),
                    body: vec![Stmt::Return(1, Some(e))],
                    strict: def.strict,
                    plpgsql: false,
                })
            }
            Language::Plpgsql => {
                let block = parse_block(&body)?;
                let mut inits = Vec::with_capacity(block.decls.len());
                for d in &block.decls {
                    let ty = decl_type(&d.type_text)?;
                    let init = match &d.default {
                        Some(text) => Some(c.bind_as(&parse_expr(text)?, &ty)?),
                        None => None,
                    };
                    inits.push(init);
                    let slot = c.nargs + inits.len() - 1;
                    c.b.params.insert(0, (d.name.clone(), slot, ty));
                }
                let body = c.stmts(&block.body)?;
                Ok(Program {
                    signature: def.signature(),
                    nargs: def.args.len(),
                    inits,
                    body,
                    strict: def.strict,
                    plpgsql: true,
                })
            }
        }
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
                decl_type(&d.type_text)?;
            }
            Ok(())
        }
    }
}

/// Binds a body's expressions.
struct Compiler<'c> {
    b: Binder<'c>,
    nargs: usize,
    ret: DataType,
}

impl Compiler<'_> {
    /// `e` bound over the variables, cast to `ty` as an assignment would.
    fn bind_as(&mut self, e: &ast::Expr, ty: &DataType) -> Result<Expr> {
        let x = self.bind(e)?;
        let from = x.ty;
        self.b
            .coerce(x, ty, CastContext::Assignment, e.offset)
            .map_err(|err| {
                if err.code == crate::error::SqlState::CannotCoerce
                    || err.code == crate::error::SqlState::DatatypeMismatch
                {
                    err!(
                        InvalidFunctionDefinition,
                        "return type mismatch in function declared to return {ty}"
                    )
                    .with_detail(format!("Actual return type is {from}."))
                } else {
                    err
                }
            })
    }

    fn bind(&mut self, e: &ast::Expr) -> Result<Expr> {
        if super::bind::contains_subquery(e) {
            return Err(err!(
                FeatureNotSupported,
                "subqueries in function bodies are not supported"
            ));
        }
        let x = self
            .b
            .bind_expr(e, &Scope::default(), &mut Mode::NoAgg("functions"))?;
        self.b.resolve_unknown(x)
    }

    fn stmts(&mut self, stmts: &[RawStmt]) -> Result<Vec<Stmt>> {
        stmts.iter().map(|s| self.stmt(s)).collect()
    }

    fn stmt(&mut self, s: &RawStmt) -> Result<Stmt> {
        Ok(match s {
            RawStmt::Assign(line, name, text) => {
                let Some((_, slot, ty)) = self.b.params.iter().find(|p| &p.0 == name).cloned()
                else {
                    return Err(err!(SyntaxError, "\"{name}\" is not a known variable"));
                };
                Stmt::Assign(*line, slot, self.bind_as(&parse_expr(text)?, &ty)?)
            }
            RawStmt::Return(line, None) => Stmt::Return(*line, None),
            RawStmt::Return(line, Some(text)) => {
                let ret = self.ret;
                Stmt::Return(*line, Some(self.bind_as(&parse_expr(text)?, &ret)?))
            }
            RawStmt::If(line, arms, otherwise) => {
                let mut out = Vec::with_capacity(arms.len());
                for (cond, body) in arms {
                    let c = self.bind_as(&parse_expr(cond)?, &DataType::Bool)?;
                    out.push((c, self.stmts(body)?));
                }
                Stmt::If(*line, out, self.stmts(otherwise)?)
            }
            RawStmt::Raise(line, level, format, args) => {
                let mut bound = Vec::with_capacity(args.len());
                for a in args {
                    bound.push(self.bind(&parse_expr(a)?)?);
                }
                Stmt::Raise(*line, *level, format.clone(), bound)
            }
            RawStmt::Null => Stmt::Null,
        })
    }
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

/// A SQL function body's one expression: `SELECT expr` without FROM.
fn sql_body_expr(body: &str, ret: &DataType) -> Result<ast::Expr> {
    let stmts = heapdb_grammar::parse(body).map_err(|e| {
        let mut e = crate::error::parse_error(e);
        e.position = None;
        e
    })?;
    let Some(last) = stmts.last() else {
        return Err(err!(
            InvalidFunctionDefinition,
            "return type mismatch in function declared to return {ret}"
        )
        .with_detail(
            "Function's final statement must be SELECT or INSERT/UPDATE/DELETE RETURNING.",
        ));
    };
    if stmts.len() > 1 {
        return Err(err!(
            FeatureNotSupported,
            "SQL functions of more than one statement are not supported"
        ));
    }
    let ast::Statement::Query(q) = last else {
        return Err(err!(
            InvalidFunctionDefinition,
            "return type mismatch in function declared to return {ret}"
        )
        .with_detail(
            "Function's final statement must be SELECT or INSERT/UPDATE/DELETE RETURNING.",
        ));
    };
    single_expr(q).ok_or_else(|| {
        err!(
            FeatureNotSupported,
            "SQL function bodies other than one SELECT of one expression without FROM are not supported"
        )
    })
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

/// One PL/pgSQL expression's text parsed (as `SELECT text`).
fn parse_expr(text: &str) -> Result<ast::Expr> {
    let q = match heapdb_grammar::parse_one(&format!("SELECT {text}")) {
        Ok(ast::Statement::Query(q)) => q,
        Ok(_) => return Err(err!(SyntaxError, "syntax error at or near \"{text}\"")),
        Err(e) => {
            let mut e = crate::error::parse_error(e);
            e.position = None;
            return Err(e);
        }
    };
    single_expr(&q).ok_or_else(|| {
        err!(
            FeatureNotSupported,
            "PL/pgSQL expression \"{text}\" is not supported (one expression without FROM only)"
        )
    })
}

/// A declared variable's type, from its text.
fn decl_type(text: &str) -> Result<DataType> {
    match parse_expr(&format!("CAST(NULL AS {text})"))?.kind {
        ast::ExprKind::Cast { data_type: t, .. } => data_type(&t),
        _ => Err(err!(SyntaxError, "syntax error at or near \"{text}\"")),
    }
}

/// A PL/pgSQL block as parsed, its expressions still text.
#[derive(Debug, Default)]
struct Block {
    decls: Vec<Decl>,
    body: Vec<RawStmt>,
}

#[derive(Debug)]
struct Decl {
    name: String,
    type_text: String,
    default: Option<String>,
}

#[derive(Debug)]
enum RawStmt {
    Assign(u32, String, String),
    Return(u32, Option<String>),
    If(u32, Vec<(String, Vec<RawStmt>)>, Vec<RawStmt>),
    Raise(u32, RaiseLevel, String, Vec<String>),
    Null,
}

/// The tokens of a PL/pgSQL body and a cursor over them.
struct Lexed<'s> {
    src: &'s str,
    toks: Vec<Token>,
    pos: usize,
}

fn syntax(near: &str) -> Error {
    if near.is_empty() {
        err!(SyntaxError, "syntax error at end of input")
    } else {
        err!(SyntaxError, "syntax error at or near \"{near}\"")
    }
}

impl<'s> Lexed<'s> {
    fn text(&self, k: usize) -> &'s str {
        self.toks
            .get(k)
            .map(|t| &self.src[t.start..t.end])
            .unwrap_or("")
    }
    fn peek_is(&self, w: &str) -> bool {
        self.text(self.pos).eq_ignore_ascii_case(w)
            && matches!(
                self.toks.get(self.pos).map(|t| t.kind),
                Some(TokenKind::Word(_))
            )
    }
    fn eat(&mut self, w: &str) -> bool {
        if self.peek_is(w) {
            self.pos += 1;
            true
        } else {
            false
        }
    }
    fn expect(&mut self, w: &str) -> Result<()> {
        if self.eat(w) {
            Ok(())
        } else {
            Err(syntax(self.text(self.pos)))
        }
    }
    fn semicolon(&mut self) -> Result<()> {
        match self.toks.get(self.pos).map(|t| t.kind) {
            Some(TokenKind::Semicolon) => {
                self.pos += 1;
                Ok(())
            }
            _ => Err(syntax(self.text(self.pos))),
        }
    }
    /// The body line of the token at the cursor (1 is the first).
    fn line(&self) -> u32 {
        let at = self
            .toks
            .get(self.pos)
            .map(|t| t.start)
            .unwrap_or(self.src.len());
        self.src[..at].bytes().filter(|&b| b == b'\n').count() as u32 + 1
    }
    fn at_end(&self) -> bool {
        matches!(
            self.toks.get(self.pos).map(|t| t.kind),
            None | Some(TokenKind::Eof)
        )
    }

    /// The source text from the cursor up to (not including) the first
    /// token at parenthesis depth 0 that `stop` accepts; the cursor is
    /// left on that token. `CASE ... END` pairs are skipped whole.
    fn until(&mut self, stop: &dyn Fn(&Lexed<'s>, usize) -> bool) -> Result<String> {
        let start = self.pos;
        let (mut depth, mut cases) = (0usize, 0usize);
        while !self.at_end() {
            let k = self.pos;
            match self.toks[k].kind {
                TokenKind::LParen => depth += 1,
                TokenKind::RParen => depth = depth.saturating_sub(1),
                _ if depth == 0 && cases == 0 && stop(self, k) => break,
                TokenKind::Word(_) if self.text(k).eq_ignore_ascii_case("case") => cases += 1,
                TokenKind::Word(_) if self.text(k).eq_ignore_ascii_case("end") && cases > 0 => {
                    cases -= 1
                }
                _ => {}
            }
            self.pos += 1;
        }
        if self.pos == start {
            return Err(syntax(self.text(self.pos)));
        }
        let (a, b) = (self.toks[start].start, self.toks[self.pos - 1].end);
        Ok(self.src[a..b].to_string())
    }
}

/// How many tokens the assignment operator at `k` spans (`:=` is lexed
/// as `:` and `=`; a lone `=` is PL/pgSQL's other spelling), or 0.
fn assign_op(l: &Lexed<'_>, k: usize) -> usize {
    match l.text(k) {
        ":=" => 1,
        "=" => 1,
        ":" if l.text(k + 1) == "="
            && l.toks.get(k + 1).map(|t| t.start) == l.toks.get(k).map(|t| t.end) =>
        {
            2
        }
        _ => 0,
    }
}

fn is_semicolon(l: &Lexed<'_>, k: usize) -> bool {
    l.toks[k].kind == TokenKind::Semicolon
}

/// Parses `[DECLARE decl...] BEGIN stmt... END [;]`.
fn parse_block(body: &str) -> Result<Block> {
    let mut l = Lexed {
        src: body,
        toks: tokenize(body),
        pos: 0,
    };
    if let Some(t) = l
        .toks
        .iter()
        .find(|t| matches!(t.kind, TokenKind::Error(_)))
    {
        return Err(syntax(&body[t.start..t.end]));
    }
    let mut block = Block::default();
    if l.eat("declare") {
        while !l.peek_is("begin") && !l.at_end() {
            block.decls.push(parse_decl(&mut l)?);
        }
    }
    l.expect("begin")?;
    block.body = parse_stmts(&mut l, &["end"])?;
    l.expect("end")?;
    if !l.at_end() {
        l.semicolon()?;
    }
    if !l.at_end() {
        return Err(syntax(l.text(l.pos)));
    }
    Ok(block)
}

fn parse_decl(l: &mut Lexed<'_>) -> Result<Decl> {
    let name = ident(l)?;
    l.eat("constant");
    let type_text = l.until(&|l, k| {
        is_semicolon(l, k)
            || assign_op(l, k) > 0
            || ["default", "not"]
                .iter()
                .any(|w| l.text(k).eq_ignore_ascii_case(w))
    })?;
    if l.eat("not") {
        l.expect("null")?;
    }
    let op = assign_op(l, l.pos);
    let default = if op > 0 || l.eat("default") {
        l.pos += op;
        Some(l.until(&is_semicolon)?)
    } else {
        None
    };
    l.semicolon()?;
    Ok(Decl {
        name,
        type_text,
        default,
    })
}

/// A variable's name (folded to lower case unless quoted).
fn ident(l: &mut Lexed<'_>) -> Result<String> {
    let k = l.pos;
    let t = l.toks.get(k).ok_or_else(|| syntax(""))?;
    let text = l.text(k);
    let name = match t.kind {
        TokenKind::Word(_) => text.to_lowercase(),
        TokenKind::QuotedIdent(_) => text[1..text.len() - 1].replace("\"\"", "\""),
        _ => return Err(syntax(text)),
    };
    l.pos += 1;
    Ok(name)
}

/// Statements up to (not including) one of the words `ends`.
fn parse_stmts(l: &mut Lexed<'_>, ends: &[&str]) -> Result<Vec<RawStmt>> {
    let mut out = Vec::new();
    loop {
        if l.at_end() {
            return Err(syntax(""));
        }
        if ends.iter().any(|w| l.peek_is(w)) {
            return Ok(out);
        }
        out.push(parse_stmt(l)?);
    }
}

fn parse_stmt(l: &mut Lexed<'_>) -> Result<RawStmt> {
    let line = l.line();
    if l.eat("return") {
        if matches!(
            l.toks.get(l.pos).map(|t| t.kind),
            Some(TokenKind::Semicolon)
        ) {
            l.pos += 1;
            return Ok(RawStmt::Return(line, None));
        }
        let e = l.until(&is_semicolon)?;
        l.semicolon()?;
        return Ok(RawStmt::Return(line, Some(e)));
    }
    if l.eat("null") {
        l.semicolon()?;
        return Ok(RawStmt::Null);
    }
    if l.eat("if") {
        return parse_if(l, line);
    }
    if l.eat("raise") {
        return parse_raise(l, line);
    }
    let first = l.text(l.pos).to_string();
    let op = assign_op(l, l.pos + 1);
    if op > 0 {
        let name = ident(l)?;
        l.pos += op;
        let e = l.until(&is_semicolon)?;
        l.semicolon()?;
        return Ok(RawStmt::Assign(line, name, e));
    }
    Err(err!(
        FeatureNotSupported,
        "PL/pgSQL statement \"{}\" is not supported",
        first.to_uppercase()
    ))
}

fn parse_if(l: &mut Lexed<'_>, line: u32) -> Result<RawStmt> {
    let then = |l: &Lexed<'_>, k: usize| l.text(k).eq_ignore_ascii_case("then");
    let mut arms = Vec::new();
    let cond = l.until(&then)?;
    l.expect("then")?;
    arms.push((cond, parse_stmts(l, &["elsif", "elseif", "else", "end"])?));
    let mut otherwise = Vec::new();
    loop {
        if l.eat("elsif") || l.eat("elseif") {
            let cond = l.until(&then)?;
            l.expect("then")?;
            arms.push((cond, parse_stmts(l, &["elsif", "elseif", "else", "end"])?));
        } else if l.eat("else") {
            otherwise = parse_stmts(l, &["end"])?;
        } else {
            l.expect("end")?;
            l.expect("if")?;
            l.semicolon()?;
            return Ok(RawStmt::If(line, arms, otherwise));
        }
    }
}

fn parse_raise(l: &mut Lexed<'_>, line: u32) -> Result<RawStmt> {
    let level = if l.eat("exception") {
        RaiseLevel::Exception
    } else if l.eat("warning") {
        RaiseLevel::Warning
    } else if l.eat("notice") {
        RaiseLevel::Notice
    } else if l.eat("info") {
        RaiseLevel::Info
    } else if l.eat("log") || l.eat("debug") {
        RaiseLevel::Log
    } else {
        RaiseLevel::Exception
    };
    let k = l.pos;
    let format = match l.toks.get(k).map(|t| t.kind) {
        Some(TokenKind::String(..)) => match parse_expr(l.text(k))?.kind {
            ast::ExprKind::Literal(ast::Literal::String(s)) => s,
            _ => return Err(syntax(l.text(k))),
        },
        _ => {
            return Err(err!(
                FeatureNotSupported,
                "RAISE without a format string is not supported"
            ))
        }
    };
    l.pos += 1;
    let mut args = Vec::new();
    while matches!(l.toks.get(l.pos).map(|t| t.kind), Some(TokenKind::Comma)) {
        l.pos += 1;
        args.push(l.until(&|l, k| is_semicolon(l, k) || l.toks[k].kind == TokenKind::Comma)?);
    }
    if l.peek_is("using") {
        return Err(err!(
            FeatureNotSupported,
            "RAISE ... USING is not supported"
        ));
    }
    l.semicolon()?;
    let wanted = format.matches('%').count() - 2 * format.matches("%%").count();
    if wanted != args.len() {
        return Err(err!(
            SyntaxError,
            "too {} parameters specified for RAISE",
            if args.len() > wanted { "many" } else { "few" }
        ));
    }
    Ok(RawStmt::Raise(line, level, format, args))
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

    #[test]
    fn blocks_parse_into_statements() {
        let b = parse_block(
            "declare x int := 1; y text; begin if a > 0 then x := case when a = 1 then 2 end; \
             elsif a < 0 then raise notice 'neg % %', a, x; else null; end if; return x; end;",
        )
        .unwrap();
        assert_eq!(b.decls.len(), 2);
        assert_eq!(b.decls[0].default.as_deref(), Some("1"));
        assert_eq!(b.decls[1].type_text, "text");
        assert_eq!(b.body.len(), 2);
        let RawStmt::If(_, arms, otherwise) = &b.body[0] else {
            panic!("not an if")
        };
        assert_eq!(arms.len(), 2);
        assert!(
            matches!(&arms[0].1[0], RawStmt::Assign(_, n, e) if n == "x" && e == "case when a = 1 then 2 end")
        );
        assert!(matches!(otherwise[0], RawStmt::Null));
        assert!(parse_block("begin return 1; end").is_ok());
        assert!(parse_block("begin return 1;").is_err());
        assert!(parse_block("begin loop end loop; end").is_err());
        let e = parse_block("begin raise notice 'a %'; end").unwrap_err();
        assert_eq!(e.message, "too few parameters specified for RAISE");
    }
}
