//! Compiling a function body into the executor's [`Program`]: binding
//! every expression and planning every query of a `LANGUAGE sql` body or
//! of a parsed PL/pgSQL block ([`super::plpgsql_parse`]).
//!
//! Variables are `Param` slots: the arguments first, then each declared
//! variable, loop variable, record field (`rec.field`, made when a query
//! first fills the record), `FOUND`, the last query's row count and a
//! handler's `SQLSTATE` / `SQLERRM`. A name is looked up innermost scope
//! first (the binder's `params` list, newest in front); leaving a block
//! restores the list. A query's plan keeps its slots as `Param`s and runs
//! in the calling statement's execution context (so a body with a query
//! is compiled anew per calling statement, see [`super::funcprobe`]).
//! A `RETURN` or assignment whose expression is a query (`RETURN max(a)
//! FROM t`) runs it first into a slot of its own ([`Stmt::Value`]).
//!
//! Invariant: every slot made here has its type in `types`.

use std::sync::Arc;

use heapdb_grammar::ast;

use super::bind::{Binder, Mode};
use super::plpgsql_parse::{self as parse, LoopKind, RawRaise, RawStmt};
use super::scope::Scope;
use super::userfunc::{decl_type_full, parse_expr, parse_value};
use crate::catalog::DomainDef;
use crate::err;
use crate::error::{Result, SqlState};
use crate::exec::plpgsql::{self as pl, Handler, LoopOver, QueryPlan, Raise, Stmt};
use crate::exec::plpgsql_cond::{self as cond, Condition};
use crate::exec::plpgsql_value::QueryValue;
use crate::nodes::expr::{Expr, ExprKind};
use crate::nodes::plannodes::Plan;
use crate::types::cast::{cast_kind, CastContext};
use crate::types::DataType;

/// Binds a body's expressions and plans its queries.
pub struct Compiler<'c> {
    /// The binder, its `params` the variables in scope.
    pub b: Binder<'c>,
    /// Every slot's type.
    pub types: Vec<DataType>,
    /// The function's result type.
    pub ret: DataType,
    /// Record variables in scope (their fields appear as `rec.field`).
    records: Vec<String>,
    /// The row count slot.
    row_count: usize,
    /// The slots declared with a domain type, whose constraints every
    /// value assigned to them passes.
    domains: Vec<(usize, Arc<DomainDef>)>,
    /// A set-returning SQL function's result columns when it returns rows
    /// of more than one column (empty otherwise), and the name of that row
    /// type for errors (`record` for `RETURNS TABLE`).
    pub set_cols: Vec<DataType>,
    /// See `set_cols`.
    pub set_name: String,
}

impl<'c> Compiler<'c> {
    /// A compiler over `b`, whose `params` hold the arguments (slots
    /// `0..arg_types.len()`).
    pub fn new(b: Binder<'c>, arg_types: Vec<DataType>, ret: DataType) -> Compiler<'c> {
        Compiler {
            b,
            types: arg_types,
            ret,
            records: Vec::new(),
            row_count: 0,
            domains: Vec::new(),
            set_cols: Vec::new(),
            set_name: String::new(),
        }
    }

    /// A new slot of type `ty`, visible as `name` when given.
    fn slot(&mut self, name: Option<&str>, ty: DataType) -> usize {
        let s = self.types.len();
        self.types.push(ty);
        if let Some(n) = name {
            self.b.params.insert(0, (n.to_string(), s, ty));
        }
        s
    }

    fn var(&self, name: &str) -> Result<(usize, DataType)> {
        match self.b.params.iter().find(|p| p.0 == name) {
            Some((_, s, t)) => Ok((*s, *t)),
            None => Err(err!(SyntaxError, "\"{name}\" is not a known variable")),
        }
    }

    /// `e` bound over the variables, cast to `ty` as an assignment would.
    pub fn bind_as(&mut self, e: &ast::Expr, ty: &DataType) -> Result<Expr> {
        let x = self.bind(e)?;
        let from = x.ty;
        self.b
            .coerce(x, ty, CastContext::Assignment, e.offset)
            .map_err(|err| {
                if err.code == SqlState::CannotCoerce || err.code == SqlState::DatatypeMismatch {
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
        let x = self
            .b
            .bind_expr(e, &Scope::default(), &mut Mode::NoAgg("functions"))?;
        self.b.resolve_unknown(x)
    }

    fn expr_as(&mut self, text: &str, ty: &DataType) -> Result<Expr> {
        self.bind_as(&parse_expr(text)?, ty)
    }

    /// `text` as `RETURN` or an assignment (`what`) takes it, cast to
    /// `ty`: an expression, or a query with FROM whose value a
    /// [`Stmt::Value`] (returned too, to run first) puts in a slot of its
    /// own, `shown` naming it in errors.
    fn value_as(
        &mut self,
        line: u32,
        text: &str,
        ty: &DataType,
        what: &'static str,
        shown: String,
    ) -> Result<(Option<Stmt>, Expr)> {
        let q = match parse_value(text)? {
            Ok(e) => return Ok((None, self.bind_as(&e, ty)?)),
            Err(q) => q,
        };
        let query = self.query(&q)?;
        let from = query
            .plan
            .fields
            .first()
            .map_or(DataType::Unknown, |f| f.ty);
        let slot = self.slot(None, from);
        let param = Expr {
            kind: ExprKind::Param(slot),
            ty: from,
        };
        let e = self
            .b
            .coerce(param, ty, CastContext::Assignment, ast::Offset(0))?;
        let value = QueryValue {
            query,
            slot,
            what,
            text: shown,
        };
        Ok((Some(Stmt::Value(line, Box::new(value))), e))
    }

    fn expr(&mut self, text: &str) -> Result<Expr> {
        self.bind(&parse_expr(text)?)
    }

    /// A query planned over the variables, to run in the calling
    /// statement's context.
    fn query(&mut self, q: &ast::Query) -> Result<Arc<QueryPlan>> {
        let plan: Plan = self.b.plan_query(q)?;
        let ctx = self.b.ctx.subplan_context(&plan)?;
        Ok(Arc::new(QueryPlan { plan, ctx }))
    }

    fn query_text(&mut self, text: &str) -> Result<Arc<QueryPlan>> {
        let q = match heapdb_grammar::parse_one(text) {
            Ok(ast::Statement::Query(q)) => q,
            Ok(_) => return Err(err!(SyntaxError, "syntax error at or near \"{text}\"")),
            Err(e) => {
                let mut e = crate::error::parse_error(e);
                e.position = None;
                return Err(e);
            }
        };
        self.query(&q)
    }

    /// A `LANGUAGE sql` body of several statements or of a query with
    /// FROM: each statement planned, the last one's first row the result.
    pub fn sql_body(&mut self, stmts: &[ast::Statement]) -> Result<Vec<Stmt>> {
        let mut out = Vec::with_capacity(stmts.len());
        // A function returning void returns no statement's row.
        let void = self.ret == DataType::Unknown;
        for (k, s) in stmts.iter().enumerate() {
            let last = k + 1 == stmts.len() && !void;
            let ast::Statement::Query(q) = s else {
                if last {
                    return Err(mismatch(&self.ret).with_detail(
                        "Function's final statement must be SELECT or INSERT/UPDATE/DELETE RETURNING.",
                    ));
                }
                return Err(err!(
                    FeatureNotSupported,
                    "SQL functions with statements other than SELECT are not supported"
                ));
            };
            let q = self.query(q)?;
            if last && !self.set_cols.is_empty() {
                check_set_columns(&q.plan.fields, &self.set_cols, &self.set_name)?;
            } else if last {
                let fields = &q.plan.fields;
                if fields.len() != 1 {
                    return Err(mismatch(&self.ret)
                        .with_detail("Final statement must return exactly one column."));
                }
                let from = fields[0].ty;
                if from.without_typmod() != self.ret.without_typmod()
                    && !matches!(
                        cast_kind(&from, &self.ret),
                        Some(CastContext::Implicit | CastContext::Assignment)
                    )
                {
                    return Err(
                        mismatch(&self.ret).with_detail(format!("Actual return type is {from}."))
                    );
                }
            }
            let into = if last { None } else { Some(Vec::new()) };
            out.push(Stmt::Query(1, q, into, false));
        }
        Ok(out)
    }

    /// A PL/pgSQL body: its block, with `FOUND` and the row count slots.
    pub fn plpgsql_body(&mut self, block: &parse::Block) -> Result<(Vec<Stmt>, (usize, usize))> {
        let found = self.slot(Some("found"), DataType::Bool);
        self.row_count = self.slot(None, DataType::Int8);
        let top = self.block(1, block)?;
        Ok((vec![top], (found, self.row_count)))
    }

    fn block(&mut self, line: u32, raw: &parse::Block) -> Result<Stmt> {
        let saved = (self.b.params.clone(), self.records.clone());
        let r = self.block_in_scope(line, raw);
        (self.b.params, self.records) = saved;
        r
    }

    fn block_in_scope(&mut self, line: u32, raw: &parse::Block) -> Result<Stmt> {
        let mut inits = Vec::with_capacity(raw.decls.len());
        for d in &raw.decls {
            if let Some(x) = self.declare(d)? {
                inits.push(x);
            }
        }
        let body = self.stmts(&raw.body)?;
        let mut handlers = Vec::with_capacity(raw.handlers.len());
        for (conds, stmts) in &raw.handlers {
            let mut conditions = Vec::with_capacity(conds.len());
            for c in conds {
                conditions.push(Condition::parse(c).ok_or_else(|| {
                    err!(UndefinedObject, "unrecognized exception condition \"{c}\"")
                })?);
            }
            let saved = self.b.params.clone();
            let sqlstate = self.slot(Some("sqlstate"), DataType::Text);
            let sqlerrm = self.slot(Some("sqlerrm"), DataType::Text);
            let body = self.stmts(stmts);
            self.b.params = saved;
            handlers.push(Handler {
                conditions,
                sqlstate,
                sqlerrm,
                body: body?,
            });
        }
        Ok(Stmt::Block(
            line,
            Box::new(pl::Block {
                label: raw.label.clone(),
                inits,
                body,
                handlers,
            }),
        ))
    }

    /// Declares `d`: its slot and initial value (`None` for a record,
    /// which has no slot of its own).
    fn declare(&mut self, d: &parse::Decl) -> Result<Option<(usize, Option<Expr>)>> {
        let t = d.type_text.trim();
        if t.eq_ignore_ascii_case("record") {
            self.records.retain(|r| r != &d.name);
            self.records.push(d.name.clone());
            return Ok(None);
        }
        let lower = t.to_ascii_lowercase();
        if let Some(table) = lower.strip_suffix("%rowtype") {
            let def = self.b.ctx.table(table.trim())?;
            for c in &def.columns {
                self.slot(Some(&format!("{}.{}", d.name, c.name)), c.ty);
            }
            self.records.retain(|r| r != &d.name);
            return Ok(None);
        }
        let (ty, domain) = match lower.strip_suffix("%type") {
            Some(of) => (self.type_of(of.trim())?, None),
            None => decl_type_full(&mut self.b, t)?,
        };
        let init = match &d.default {
            Some(text) => Some(self.expr_as(text, &ty)?),
            None => None,
        };
        let init = match (init, &domain) {
            (Some(e), Some(dom)) => Some(self.b.coerce_to_domain(e, dom)?),
            (init, _) => init,
        };
        let s = self.slot(Some(&d.name), ty);
        if let Some(dom) = domain {
            self.domains.push((s, dom));
        }
        Ok(Some((s, init)))
    }

    /// The type `name%TYPE` stands for: a variable's, or `table.column`'s.
    fn type_of(&mut self, name: &str) -> Result<DataType> {
        if let Ok((_, ty)) = self.var(name) {
            return Ok(ty);
        }
        if let Some((t, c)) = name.split_once('.') {
            let def = self.b.ctx.table(t)?;
            if let Some(col) = def.columns.iter().find(|x| x.name == c) {
                return Ok(col.ty);
            }
            return Err(err!(
                UndefinedColumn,
                "column \"{c}\" of relation \"{t}\" does not exist"
            ));
        }
        Err(err!(UndefinedObject, "variable \"{name}\" does not exist"))
    }

    fn stmts(&mut self, stmts: &[RawStmt]) -> Result<Vec<Stmt>> {
        stmts.iter().map(|s| self.stmt(s)).collect()
    }

    fn stmt(&mut self, s: &RawStmt) -> Result<Stmt> {
        Ok(match s {
            RawStmt::Assign(line, name, text) => {
                let (slot, ty) = self.var(name)?;
                let shown = format!("{name} := {}", text.trim());
                let (value, mut e) = self.value_as(*line, text, &ty, "assignment", shown)?;
                if let Some((_, dom)) = self.domains.iter().find(|(s, _)| *s == slot) {
                    let dom = dom.clone();
                    e = self.b.coerce_to_domain(e, &dom)?;
                }
                after_value(*line, value, Stmt::Assign(*line, slot, e))
            }
            RawStmt::Return(line, None) => Stmt::Return(*line, None),
            RawStmt::Return(_, Some(_)) if self.ret == DataType::Unknown => {
                return Err(err!(
                    DatatypeMismatch,
                    "RETURN cannot have a parameter in function returning void"
                ))
            }
            RawStmt::Return(line, Some(text)) => {
                let ret = self.ret;
                let shown = text.trim().to_string();
                let (value, e) = self.value_as(*line, text, &ret, "RETURN", shown)?;
                after_value(*line, value, Stmt::Return(*line, Some(e)))
            }
            RawStmt::If(line, arms, otherwise) => {
                let mut out = Vec::with_capacity(arms.len());
                for (c, body) in arms {
                    let c = self.expr_as(c, &DataType::Bool)?;
                    out.push((c, self.stmts(body)?));
                }
                Stmt::If(*line, out, self.stmts(otherwise)?)
            }
            RawStmt::Raise(line, r) => Stmt::Raise(*line, Box::new(self.raise(r)?)),
            RawStmt::Null => Stmt::Null,
            RawStmt::Loop(line, label, kind, body) => self.loop_stmt(*line, label, kind, body)?,
            RawStmt::Exit(line, cont, label, c) => {
                let c = match c {
                    Some(c) => Some(self.expr_as(c, &DataType::Bool)?),
                    None => None,
                };
                Stmt::Exit(*line, *cont, label.clone(), c)
            }
            RawStmt::Sql(_, _, None, false) => {
                return Err(
                    err!(SyntaxError, "query has no destination for result data").with_hint(
                        "If you want to discard the results of a SELECT, use PERFORM instead.",
                    ),
                )
            }
            RawStmt::Sql(line, text, into, _) => {
                let q = self.query_text(text)?;
                match into {
                    None => Stmt::Query(*line, q, None, false),
                    Some(into) => {
                        let slots = self.targets(&into.targets, &q.plan)?;
                        Stmt::Query(*line, q, Some(slots), into.strict)
                    }
                }
            }
            RawStmt::Block(line, b) => self.block(*line, b)?,
            RawStmt::Assert(line, c, message) => {
                let c = self.expr_as(c, &DataType::Bool)?;
                let m = match message {
                    Some(m) => Some(self.expr(m)?),
                    None => None,
                };
                Stmt::Assert(*line, c, m)
            }
            RawStmt::GetDiagnostics(line, items) => {
                let mut out = Vec::with_capacity(items.len());
                for (var, item) in items {
                    if item != "row_count" {
                        return Err(err!(
                            FeatureNotSupported,
                            "GET DIAGNOSTICS {} is not supported",
                            item.to_uppercase()
                        ));
                    }
                    let (slot, ty) = self.var(var)?;
                    let count = Expr {
                        kind: ExprKind::Param(self.row_count),
                        ty: DataType::Int8,
                    };
                    let e = self
                        .b
                        .coerce(count, &ty, CastContext::Assignment, ast::Offset(0))?;
                    out.push(Stmt::Assign(*line, slot, e));
                }
                // The assignments, as a block of their own.
                Stmt::Block(
                    *line,
                    Box::new(pl::Block {
                        label: None,
                        inits: Vec::new(),
                        body: out,
                        handlers: Vec::new(),
                    }),
                )
            }
        })
    }

    /// The slots `INTO` / a `FOR` loop fills from a query's columns: one
    /// record (its fields made from the query's columns) or variables.
    fn targets(&mut self, names: &[String], plan: &Plan) -> Result<Vec<usize>> {
        if let [one] = names {
            if self.records.contains(one) {
                let rec = one.clone();
                return Ok(plan
                    .fields
                    .iter()
                    .map(|f| self.slot(Some(&format!("{rec}.{}", f.name)), f.ty))
                    .collect());
            }
            let prefix = format!("{one}.");
            // A %ROWTYPE variable: its fields' slots, in column order.
            let mut fields: Vec<usize> = self
                .b
                .params
                .iter()
                .filter(|p| p.0.starts_with(&prefix))
                .map(|p| p.1)
                .collect();
            fields.sort_unstable();
            fields.dedup();
            if !fields.is_empty() && self.var(one).is_err() {
                return Ok(fields);
            }
        }
        names.iter().map(|n| self.var(n).map(|(s, _)| s)).collect()
    }

    fn loop_stmt(
        &mut self,
        line: u32,
        label: &Option<String>,
        kind: &LoopKind,
        body: &[RawStmt],
    ) -> Result<Stmt> {
        let saved = (self.b.params.clone(), self.records.clone());
        let r = self.loop_in_scope(line, label, kind, body);
        (self.b.params, self.records) = saved;
        r
    }

    fn loop_in_scope(
        &mut self,
        line: u32,
        label: &Option<String>,
        kind: &LoopKind,
        body: &[RawStmt],
    ) -> Result<Stmt> {
        let over = match kind {
            LoopKind::Plain => LoopOver::Plain,
            LoopKind::While(c) => LoopOver::While(self.expr_as(c, &DataType::Bool)?),
            LoopKind::Range {
                var,
                reverse,
                lo,
                hi,
                step,
            } => {
                let int = DataType::Int4;
                let lo = self.expr_as(lo, &int)?;
                let hi = self.expr_as(hi, &int)?;
                let step = match step {
                    Some(s) => Some(self.expr_as(s, &int)?),
                    None => None,
                };
                // The loop variable is an integer of the loop's own.
                let slot = self.slot(Some(var), int);
                LoopOver::Range {
                    slot,
                    reverse: *reverse,
                    lo,
                    hi,
                    step,
                }
            }
            LoopKind::Query { var, query } => {
                let q = self.query_text(query)?;
                let slots = self.targets(std::slice::from_ref(var), &q.plan)?;
                LoopOver::Query(slots, q)
            }
            LoopKind::Foreach { var, array } => {
                let (slot, _) = self.var(var)?;
                let a = self.expr(array)?;
                if a.ty.element().is_none() && a.ty != DataType::Unknown {
                    return Err(err!(
                        DatatypeMismatch,
                        "FOREACH expression must yield an array, not type {}",
                        a.ty
                    ));
                }
                LoopOver::Foreach(slot, a)
            }
        };
        Ok(Stmt::Loop(
            line,
            label.clone(),
            Box::new(over),
            self.stmts(body)?,
        ))
    }

    fn raise(&mut self, r: &RawRaise) -> Result<Raise> {
        let format = match &r.format {
            Some(f) => {
                let mut args = Vec::with_capacity(r.args.len());
                for a in &r.args {
                    args.push(self.expr(a)?);
                }
                Some((f.clone(), args))
            }
            None => None,
        };
        let (mut code, mut condition) = (None, None);
        if let Some(c) = &r.condition {
            let (name, text) = match c.strip_prefix("sqlstate ") {
                Some(code) => (code.to_string(), code.to_string()),
                None => {
                    if cond::code_of(c).is_none() {
                        return Err(err!(
                            UndefinedObject,
                            "unrecognized exception condition \"{c}\""
                        ));
                    }
                    (c.clone(), c.clone())
                }
            };
            code = Some(cond::raisable(&name).ok_or_else(|| {
                err!(
                    FeatureNotSupported,
                    "RAISE of condition \"{name}\" is not supported"
                )
            })?);
            condition = Some(text);
        }
        let mut options = Vec::with_capacity(r.options.len());
        for (name, e) in &r.options {
            if !["message", "detail", "hint", "errcode"].contains(&name.as_str()) {
                return Err(err!(
                    SyntaxError,
                    "unrecognized RAISE statement option \"{name}\""
                ));
            }
            options.push((name.clone(), self.expr(e)?));
        }
        Ok(Raise {
            level: r.level,
            format,
            code,
            condition,
            options,
            rethrow: r.format.is_none() && r.condition.is_none() && r.options.is_empty(),
        })
    }
}

/// A set-returning function's last query against its declared columns
/// (PostgreSQL's `check_sql_fn_retval` for a row type): as many columns,
/// each castable by assignment.
fn check_set_columns(fields: &[crate::nodes::Field], cols: &[DataType], name: &str) -> Result<()> {
    let bad = || {
        err!(
            InvalidFunctionDefinition,
            "return type mismatch in function declared to return {name}"
        )
    };
    if fields.len() < cols.len() {
        return Err(bad().with_detail("Final statement returns too few columns."));
    }
    if fields.len() > cols.len() {
        return Err(bad().with_detail("Final statement returns too many columns."));
    }
    for (k, (f, to)) in fields.iter().zip(cols).enumerate() {
        let fits = f.ty.without_typmod() == to.without_typmod()
            || matches!(
                cast_kind(&f.ty, to),
                Some(CastContext::Implicit | CastContext::Assignment)
            );
        if !fits {
            return Err(bad().with_detail(format!(
                "Final statement returns {} instead of {to} at column {}.",
                f.ty,
                k + 1
            )));
        }
    }
    Ok(())
}

/// `stmt`, preceded by the statement computing its value when its
/// expression is a query (the two as a block of their own).
fn after_value(line: u32, value: Option<Stmt>, stmt: Stmt) -> Stmt {
    match value {
        None => stmt,
        Some(v) => Stmt::Block(
            line,
            Box::new(pl::Block {
                label: None,
                inits: Vec::new(),
                body: vec![v, stmt],
                handlers: Vec::new(),
            }),
        ),
    }
}

fn mismatch(ret: &DataType) -> crate::error::Error {
    err!(
        InvalidFunctionDefinition,
        "return type mismatch in function declared to return {ret}"
    )
}
