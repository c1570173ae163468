//! Running user-defined functions: the compiled form of a function body
//! ([`Program`]) and its interpreter ([`Program::call`]).
//!
//! The planner (`plan::userfunc`) compiles both languages to the same
//! tree: a `LANGUAGE sql` body is one `RETURN` of its one expression, or a
//! [`Stmt::Query`] per statement whose last one's first row is the result;
//! a PL/pgSQL block keeps its statements (assignment, `IF`, loops, `EXIT` /
//! `CONTINUE`, queries with `INTO`, `PERFORM`, nested blocks with
//! exception handlers, `RETURN`, `RAISE`, `ASSERT`, `GET DIAGNOSTICS`;
//! a `RETURN` or assignment whose expression is a query is preceded by a
//! [`Stmt::Value`] computing it, [`super::plpgsql_value`]).
//! Every expression is bound beforehand with the function's variables
//! (arguments first, then the declared and hidden ones) as `Param` slots;
//! the interpreter replaces each slot by the variable's current value and
//! evaluates the expression as a constant, through the same evaluator
//! rows use. A query ([`QueryPlan`]) is a plan over the same slots, run
//! with them substituted in the calling statement's execution context.
//!
//! An exception handler catches an error of the block's statements by its
//! SQLSTATE ([`super::plpgsql_cond`]). Bodies change no data (they hold no
//! INSERT / UPDATE / DELETE), so the block's subtransaction has nothing to
//! roll back but the variables, which PostgreSQL keeps as well.
//!
//! Notices a `RAISE NOTICE` (or `WARNING`, `INFO`) sends are queued per
//! thread for the session to print after the statement ([`take_notices`]).
//!
//! Invariants: a slot index is below [`Program::nvars`]; `types` has one
//! entry per slot; `EXIT` / `CONTINUE` never leave the body (the compiler
//! checks their labels).

use std::cell::RefCell;
use std::sync::Arc;

use super::plpgsql_cond::Condition;
use super::plpgsql_value::QueryValue;
use super::{eval_const, ExecContext};
use crate::err;
use crate::error::{Error, Result, SqlState};
use crate::nodes::expr::{Expr, ExprKind};
use crate::nodes::plannodes::Plan;
use crate::types::cast::cast_assign;
use crate::types::io::format_value;
use crate::types::{DataType, Value};

/// The level of a `RAISE`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RaiseLevel {
    /// `RAISE EXCEPTION` (the default): fails the statement.
    Exception,
    /// `RAISE WARNING`.
    Warning,
    /// `RAISE NOTICE`.
    Notice,
    /// `RAISE INFO`.
    Info,
    /// `RAISE LOG` / `RAISE DEBUG`: not shown to the client.
    Log,
}

/// A query of a body: its plan (with `Param` slots for the variables) and
/// the calling statement's execution context it runs in.
pub struct QueryPlan {
    /// The plan.
    pub plan: Plan,
    /// Where it runs.
    pub ctx: ExecContext,
}

impl std::fmt::Debug for QueryPlan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "QueryPlan({:?})", self.plan)
    }
}

impl QueryPlan {
    /// The query's rows with the variables `vars` substituted. In a body
    /// with query snapshots (a VOLATILE one under READ COMMITTED) it reads
    /// with a snapshot taken now when `fresh` (its body is VOLATILE), else
    /// with the running query's, if one runs.
    pub fn rows(&self, vars: &[Value], fresh: bool) -> Result<Vec<Vec<Value>>> {
        let mut plan = self.plan.clone();
        super::subplan::substitute_plan(&mut plan, vars);
        let Some(q) = &self.ctx.query_snapshots else {
            return super::collect_rows(&plan, &self.ctx);
        };
        let snap = match q.current() {
            Some(s) if !fresh => s,
            _ => q.take(&self.ctx.snapshot),
        };
        // What the body's subqueries cached read with another snapshot.
        super::subplan::new_call();
        q.enter(snap, |s| {
            super::collect_rows(&plan, &self.ctx.with_snapshot(s.clone()))
        })
    }
}

/// What `RAISE` raises.
#[derive(Debug, Clone)]
pub struct Raise {
    /// Its level.
    pub level: RaiseLevel,
    /// The format and its arguments (`None`: the message is the
    /// condition's name or `USING MESSAGE`).
    pub format: Option<(String, Vec<Expr>)>,
    /// The SQLSTATE (`RAISE name`, `USING ERRCODE`); P0001 by default.
    pub code: Option<SqlState>,
    /// The condition's name, the message of `RAISE name`.
    pub condition: Option<String>,
    /// `USING MESSAGE / DETAIL / HINT / ERRCODE = expr` (ERRCODE known
    /// only when it runs).
    pub options: Vec<(String, Expr)>,
    /// Bare `RAISE;`: re-throws the error being handled.
    pub rethrow: bool,
}

/// What a loop runs over.
#[derive(Debug, Clone)]
pub enum LoopOver {
    /// `LOOP`.
    Plain,
    /// `WHILE cond`.
    While(Expr),
    /// `FOR slot IN [REVERSE] lo..hi [BY step]` (integers).
    Range {
        slot: usize,
        reverse: bool,
        lo: Expr,
        hi: Expr,
        step: Option<Expr>,
    },
    /// `FOR target IN query`: each row's columns into the slots.
    Query(Vec<usize>, Arc<QueryPlan>),
    /// `FOREACH slot IN ARRAY expr`.
    Foreach(usize, Expr),
}

/// An exception handler: its conditions, where the error's SQLSTATE and
/// message go, and its statements.
#[derive(Debug, Clone)]
pub struct Handler {
    /// What it catches.
    pub conditions: Vec<Condition>,
    /// The slots of `SQLSTATE` and `SQLERRM` in its statements.
    pub sqlstate: usize,
    /// See `sqlstate`.
    pub sqlerrm: usize,
    /// Its statements.
    pub body: Vec<Stmt>,
}

/// One statement of a compiled body; the first field of each is its line
/// in the body (1 is the body's first line), for error contexts.
#[derive(Debug, Clone)]
pub enum Stmt {
    /// `var := expr` (the expression already cast to the variable's type).
    Assign(u32, usize, Expr),
    /// `RETURN [expr]` (cast to the result type).
    Return(u32, Option<Expr>),
    /// `IF c THEN ... {ELSIF c THEN ...} [ELSE ...] END IF`.
    If(u32, Vec<(Expr, Vec<Stmt>)>, Vec<Stmt>),
    /// `RAISE ...`.
    Raise(u32, Box<Raise>),
    /// `NULL;`
    Null,
    /// A loop: its label, what it runs over, its body.
    Loop(u32, Option<String>, Box<LoopOver>, Vec<Stmt>),
    /// `EXIT` (false) / `CONTINUE` (true) [label] [WHEN cond].
    Exit(u32, bool, Option<String>, Option<Expr>),
    /// A query: `SELECT ... INTO [STRICT] slots` (`Some`), `PERFORM`
    /// (`None`), or a SQL function's statement. The flag is STRICT.
    Query(u32, Arc<QueryPlan>, Option<Vec<usize>>, bool),
    /// A nested block: its label, its variables' initial values, its
    /// statements and handlers.
    Block(u32, Box<Block>),
    /// `ASSERT cond [, message]`.
    Assert(u32, Expr, Option<Expr>),
    /// An expression that is a query (`RETURN max(a) FROM t`): its value
    /// into a slot, for the statement after it.
    Value(u32, Box<QueryValue>),
}

/// A nested `[DECLARE] BEGIN ... [EXCEPTION ...] END` block.
#[derive(Debug, Clone)]
pub struct Block {
    /// `<<label>>`.
    pub label: Option<String>,
    /// Its variables' slots and initial values (NULL when `None`), set
    /// each time the block is entered.
    pub inits: Vec<(usize, Option<Expr>)>,
    /// Its statements.
    pub body: Vec<Stmt>,
    /// Its exception handlers.
    pub handlers: Vec<Handler>,
}

/// A compiled function body.
#[derive(Debug, Clone)]
pub struct Program {
    /// The function's name and argument types (`f(integer)`), for error
    /// contexts.
    pub signature: String,
    /// How many arguments it takes (the first slots).
    pub nargs: usize,
    /// Every slot's type.
    pub types: Vec<DataType>,
    /// The statements.
    pub body: Vec<Stmt>,
    /// `STRICT`: any NULL argument gives NULL without running the body.
    pub strict: bool,
    /// A `LANGUAGE sql` body that returns no row (`None` from no RETURN)
    /// gives NULL; a PL/pgSQL one reaching its end fails with 2F005.
    pub plpgsql: bool,
    /// The slots of `FOUND` and of the last query's row count.
    pub found: Option<(usize, usize)>,
    /// The result type (a SQL function's last query's first column is
    /// cast to it).
    pub ret: DataType,
    /// A function returning `void`: reaching the end returns NULL.
    pub void: bool,
    /// VOLATILE: each call's subqueries read anew
    /// ([`super::subplan::new_call`]).
    pub volatile: bool,
}

/// How a statement list ended.
enum Flow {
    Normal,
    Return(Value),
    Exit(Option<String>),
    Continue(Option<String>),
}

/// A running call: the variables and the errors being handled.
struct Frame {
    vars: Vec<Value>,
    handling: Vec<Error>,
}

impl Program {
    /// How many variable slots the body uses.
    pub fn nvars(&self) -> usize {
        self.types.len()
    }

    /// Runs the body on `args` (already cast to the argument types).
    pub fn call(&self, args: &[Value]) -> Result<Value> {
        if self.strict && args.iter().any(Value::is_null) {
            return Ok(Value::Null);
        }
        if self.volatile {
            super::subplan::new_call();
        }
        let mut vars: Vec<Value> = Vec::with_capacity(self.nvars());
        vars.extend(args.iter().cloned());
        vars.resize(self.nvars(), Value::Null);
        if let Some((found, _)) = self.found {
            vars[found] = Value::Bool(false);
        }
        let mut f = Frame {
            vars,
            handling: Vec::new(),
        };
        match self.run(&self.body, &mut f)? {
            Flow::Return(v) => Ok(v),
            _ if self.plpgsql && !self.void => Err(err!(
                FunctionExecutedNoReturnStatement,
                "control reached end of function without RETURN"
            )
            .with_context(format!("PL/pgSQL function {}", self.signature))),
            _ => Ok(Value::Null),
        }
    }

    /// Runs a set-returning SQL body on `args`: every statement but the
    /// last as usual, then the last query's rows, each column cast to
    /// `cols` (the declared result columns). A strict function gives no
    /// row for a NULL argument.
    pub fn rows(&self, args: &[Value], cols: &[DataType]) -> Result<Vec<Vec<Value>>> {
        if self.strict && args.iter().any(Value::is_null) {
            return Ok(Vec::new());
        }
        if self.volatile {
            super::subplan::new_call();
        }
        let mut vars: Vec<Value> = Vec::with_capacity(self.nvars());
        vars.extend(args.iter().cloned());
        vars.resize(self.nvars(), Value::Null);
        let mut f = Frame {
            vars,
            handling: Vec::new(),
        };
        let Some((Stmt::Query(line, q, None, _), before)) = self.body.split_last() else {
            return Err(err!(InternalError, "a set-returning body ends in a query"));
        };
        self.run(before, &mut f)?;
        let rows = q
            .rows(&f.vars, self.volatile)
            .map_err(|e| self.at(e, *line, "SQL statement"))?;
        rows.into_iter()
            .map(|r| {
                r.iter()
                    .zip(&q.plan.fields)
                    .zip(cols)
                    .map(|((v, from), to)| cast_assign(v, &from.ty, to))
                    .collect()
            })
            .collect()
    }

    /// Runs `stmts`.
    fn run(&self, stmts: &[Stmt], f: &mut Frame) -> Result<Flow> {
        for s in stmts {
            let flow = self.step(s, f)?;
            if !matches!(flow, Flow::Normal) {
                return Ok(flow);
            }
        }
        Ok(Flow::Normal)
    }

    fn step(&self, s: &Stmt, f: &mut Frame) -> Result<Flow> {
        match s {
            Stmt::Assign(line, slot, e) => {
                let v = eval_with(e, &f.vars).map_err(|e| self.at(e, *line, "assignment"))?;
                f.vars[*slot] = v;
            }
            Stmt::Return(line, e) => {
                return Ok(Flow::Return(match e {
                    Some(e) => eval_with(e, &f.vars).map_err(|e| self.at(e, *line, "RETURN"))?,
                    None => Value::Null,
                }))
            }
            Stmt::If(line, arms, otherwise) => {
                let mut taken = None;
                for (cond, body) in arms {
                    if self.test(cond, f, *line, "IF")? {
                        taken = Some(body);
                        break;
                    }
                }
                return self.run(taken.unwrap_or(otherwise), f);
            }
            Stmt::Raise(line, r) => {
                return self
                    .raise(r, f)
                    .map(|()| Flow::Normal)
                    .map_err(|e| self.at(e, *line, "RAISE"))
            }
            Stmt::Null => {}
            Stmt::Loop(line, label, over, body) => {
                return self.run_loop(*line, label, over, body, f)
            }
            Stmt::Exit(line, cont, label, cond) => {
                let what = if *cont { "CONTINUE" } else { "EXIT" };
                if let Some(c) = cond {
                    if !self.test(c, f, *line, what)? {
                        return Ok(Flow::Normal);
                    }
                }
                return Ok(if *cont {
                    Flow::Continue(label.clone())
                } else {
                    Flow::Exit(label.clone())
                });
            }
            Stmt::Query(line, q, into, strict) => {
                return self
                    .query(q, into.as_deref(), *strict, f)
                    .map_err(|e| self.at(e, *line, self.query_what(into.is_some())))
            }
            Stmt::Block(_, b) => return self.run_block(b, f),
            Stmt::Value(line, v) => {
                let (value, n) = v
                    .eval(&f.vars, self.volatile)
                    .map_err(|e| self.at(e, *line, v.what))?;
                f.vars[v.slot] = value;
                if let Some((_, row_count)) = self.found {
                    f.vars[row_count] = Value::Int8(n as i64);
                }
            }
            Stmt::Assert(line, cond, message) => {
                if !self.test(cond, f, *line, "ASSERT")? {
                    let text = match message {
                        Some(m) => match eval_with(m, &f.vars) {
                            Ok(Value::Null) => "assertion failed".to_string(),
                            Ok(v) => value_text(&v),
                            Err(e) => return Err(self.at(e, *line, "ASSERT")),
                        },
                        None => "assertion failed".to_string(),
                    };
                    return Err(self.at(
                        Error::new(SqlState::AssertFailure, text),
                        *line,
                        "ASSERT",
                    ));
                }
            }
        }
        Ok(Flow::Normal)
    }

    fn query_what(&self, into: bool) -> &'static str {
        match (self.plpgsql, into) {
            (_, true) => "SQL statement",
            (true, false) => "PERFORM",
            (false, false) => "SQL statement",
        }
    }

    /// Evaluates a condition: only true is true.
    fn test(&self, cond: &Expr, f: &Frame, line: u32, what: &str) -> Result<bool> {
        let c = eval_with(cond, &f.vars).map_err(|e| self.at(e, line, what))?;
        Ok(matches!(c, Value::Bool(true)))
    }

    /// Runs a query statement: `INTO` slots get the first row's columns
    /// (NULLs without a row); sets `FOUND` and the row count.
    fn query(
        &self,
        q: &QueryPlan,
        into: Option<&[usize]>,
        strict: bool,
        f: &mut Frame,
    ) -> Result<Flow> {
        let rows = q.rows(&f.vars, self.volatile)?;
        if strict {
            match rows.len() {
                0 => return Err(err!(NoDataFound, "query returned no rows")),
                1 => {}
                _ => {
                    return Err(err!(TooManyRows, "query returned more than one row")
                        .with_hint("Make sure the query returns a single row, or use LIMIT 1."))
                }
            }
        }
        if let Some(slots) = into {
            let row = rows.first();
            for (k, slot) in slots.iter().enumerate() {
                let v = row.and_then(|r| r.get(k)).cloned().unwrap_or(Value::Null);
                let from = q
                    .plan
                    .fields
                    .get(k)
                    .map(|c| c.ty)
                    .unwrap_or(DataType::Unknown);
                f.vars[*slot] = cast_assign(&v, &from, &self.types[*slot])?;
            }
        }
        let count = if into.is_some() {
            rows.len().min(1)
        } else {
            rows.len()
        };
        if let Some((found, row_count)) = self.found {
            f.vars[found] = Value::Bool(!rows.is_empty());
            f.vars[row_count] = Value::Int8(count as i64);
        }
        if !self.plpgsql && into.is_none() {
            // A SQL function's last statement: its first row is the
            // result (NULL without one).
            let v = rows.into_iter().next().and_then(|r| r.into_iter().next());
            let from = q
                .plan
                .fields
                .first()
                .map(|c| c.ty)
                .unwrap_or(DataType::Unknown);
            return Ok(Flow::Return(match v {
                Some(v) => cast_assign(&v, &from, &self.ret)?,
                None => Value::Null,
            }));
        }
        Ok(Flow::Normal)
    }

    fn set_found(&self, f: &mut Frame, any: bool) {
        if let Some((found, _)) = self.found {
            f.vars[found] = Value::Bool(any);
        }
    }

    fn run_loop(
        &self,
        line: u32,
        label: &Option<String>,
        over: &LoopOver,
        body: &[Stmt],
        f: &mut Frame,
    ) -> Result<Flow> {
        // What one pass of the body means for the loop: go on, or leave
        // it with this flow.
        let pass = |f: &mut Frame| -> Result<Option<Flow>> {
            match self.run(body, f)? {
                Flow::Normal => Ok(None),
                Flow::Exit(None) => Ok(Some(Flow::Normal)),
                Flow::Exit(Some(l)) if label.as_deref() == Some(l.as_str()) => {
                    Ok(Some(Flow::Normal))
                }
                Flow::Continue(None) => Ok(None),
                Flow::Continue(Some(l)) if label.as_deref() == Some(l.as_str()) => Ok(None),
                other => Ok(Some(other)),
            }
        };
        match over {
            LoopOver::Plain => loop {
                if let Some(flow) = pass(f)? {
                    return Ok(flow);
                }
            },
            LoopOver::While(cond) => {
                while self.test(cond, f, line, "WHILE")? {
                    if let Some(flow) = pass(f)? {
                        return Ok(flow);
                    }
                }
            }
            LoopOver::Range {
                slot,
                reverse,
                lo,
                hi,
                step,
            } => {
                let int = |e: &Expr, what: &str, f: &Frame| -> Result<Option<i64>> {
                    match eval_with(e, &f.vars)
                        .map_err(|e| self.at(e, line, "FOR with integer loop variable"))?
                    {
                        Value::Null => Err(self.at(
                            err!(NullValueNotAllowed, "{what} of FOR loop cannot be null"),
                            line,
                            "FOR with integer loop variable",
                        )),
                        v => Ok(v.as_i64()),
                    }
                };
                let lo = int(lo, "lower bound", f)?.unwrap_or(0);
                let hi = int(hi, "upper bound", f)?.unwrap_or(0);
                let by = match step {
                    Some(s) => int(s, "BY value", f)?.unwrap_or(1),
                    None => 1,
                };
                if by <= 0 {
                    return Err(self.at(
                        err!(
                            InvalidParameterValue,
                            "BY value of FOR loop must be greater than zero"
                        ),
                        line,
                        "FOR with integer loop variable",
                    ));
                }
                let mut i = lo;
                let mut any = false;
                while (!reverse && i <= hi) || (*reverse && i >= hi) {
                    any = true;
                    f.vars[*slot] = Value::Int4(i as i32);
                    if let Some(flow) = pass(f)? {
                        self.set_found(f, true);
                        return Ok(flow);
                    }
                    i = if *reverse { i - by } else { i + by };
                }
                self.set_found(f, any);
            }
            LoopOver::Query(slots, q) => {
                let rows = q
                    .rows(&f.vars, self.volatile)
                    .map_err(|e| self.at(e, line, "FOR over SELECT rows"))?;
                let any = !rows.is_empty();
                for row in rows {
                    for (k, slot) in slots.iter().enumerate() {
                        let v = row.get(k).cloned().unwrap_or(Value::Null);
                        let from = q
                            .plan
                            .fields
                            .get(k)
                            .map(|c| c.ty)
                            .unwrap_or(DataType::Unknown);
                        f.vars[*slot] = cast_assign(&v, &from, &self.types[*slot])
                            .map_err(|e| self.at(e, line, "FOR over SELECT rows"))?;
                    }
                    if let Some(flow) = pass(f)? {
                        self.set_found(f, true);
                        return Ok(flow);
                    }
                }
                self.set_found(f, any);
            }
            LoopOver::Foreach(slot, array) => {
                let what = "FOREACH over array";
                let items = match eval_with(array, &f.vars).map_err(|e| self.at(e, line, what))? {
                    Value::Array(a) => a.items.clone(),
                    Value::Null => {
                        return Err(self.at(
                            err!(NullValueNotAllowed, "FOREACH expression must not be null"),
                            line,
                            what,
                        ))
                    }
                    _ => {
                        return Err(self.at(
                            err!(
                                DatatypeMismatch,
                                "FOREACH expression must yield an array, not type {}",
                                array.ty
                            ),
                            line,
                            what,
                        ))
                    }
                };
                let from = array.ty.element().unwrap_or(DataType::Unknown);
                let any = !items.is_empty();
                for v in items {
                    f.vars[*slot] = cast_assign(&v, &from, &self.types[*slot])
                        .map_err(|e| self.at(e, line, what))?;
                    if let Some(flow) = pass(f)? {
                        self.set_found(f, true);
                        return Ok(flow);
                    }
                }
                self.set_found(f, any);
            }
        }
        Ok(Flow::Normal)
    }

    /// Runs a nested block; an error its handlers catch runs the handler
    /// instead.
    fn run_block(&self, b: &Block, f: &mut Frame) -> Result<Flow> {
        for (slot, init) in &b.inits {
            f.vars[*slot] = match init {
                Some(e) => eval_with(e, &f.vars).map_err(|e| {
                    self.context(e, "during statement block local variable initialization")
                })?,
                None => Value::Null,
            };
        }
        let flow = match self.run(&b.body, f) {
            Ok(flow) => flow,
            Err(e) => {
                let code = e.code.code();
                let Some(h) = b
                    .handlers
                    .iter()
                    .find(|h| h.conditions.iter().any(|c| c.catches(code)))
                else {
                    return Err(e);
                };
                f.vars[h.sqlstate] = Value::Text(code.into());
                f.vars[h.sqlerrm] = Value::Text(e.message.clone().into());
                f.handling.push(e);
                let r = self.run(&h.body, f);
                f.handling.pop();
                r?
            }
        };
        Ok(match flow {
            Flow::Exit(Some(l)) if b.label.as_deref() == Some(l.as_str()) => Flow::Normal,
            other => other,
        })
    }

    /// `e` with this function's statement added to its context.
    fn at(&self, e: Error, line: u32, what: &str) -> Error {
        if !self.plpgsql {
            return e;
        }
        self.context(e, &format!("line {line} at {what}"))
    }

    fn context(&self, e: Error, place: &str) -> Error {
        let here = format!("PL/pgSQL function {} {place}", self.signature);
        let context = match e.context.clone() {
            Some(inner) => format!("{inner}\n{here}"),
            None => here,
        };
        e.with_context(context)
    }

    fn raise(&self, r: &Raise, f: &Frame) -> Result<()> {
        if r.rethrow {
            return match f.handling.last() {
                Some(e) => Err(e.clone()),
                None => Err(err!(
                    SyntaxError,
                    "RAISE without parameters cannot be used outside an exception handler"
                )),
            };
        }
        let mut message = match &r.format {
            Some((format, args)) => {
                let mut values = Vec::with_capacity(args.len());
                for a in args {
                    values.push(eval_with(a, &f.vars)?);
                }
                substitute(format, &values)
            }
            None => r
                .condition
                .clone()
                .unwrap_or_else(|| "raise_exception".into()),
        };
        let mut code = r.code;
        let (mut detail, mut hint) = (None, None);
        for (name, e) in &r.options {
            let v = eval_with(e, &f.vars)?;
            if v.is_null() {
                return Err(err!(
                    NullValueNotAllowed,
                    "RAISE statement option cannot be null"
                ));
            }
            let text = value_text(&v);
            match name.as_str() {
                "message" => message = text,
                "detail" => detail = Some(text),
                "hint" => hint = Some(text),
                "errcode" => {
                    code = Some(super::plpgsql_cond::raisable(&text).ok_or_else(|| {
                        if text.len() == 5 {
                            err!(
                                FeatureNotSupported,
                                "RAISE with SQLSTATE \"{text}\" is not supported"
                            )
                        } else {
                            err!(
                                UndefinedObject,
                                "unrecognized exception condition \"{text}\""
                            )
                        }
                    })?)
                }
                other => {
                    return Err(err!(
                        FeatureNotSupported,
                        "RAISE option {} is not supported",
                        other.to_uppercase()
                    ))
                }
            }
        }
        let severity = match r.level {
            RaiseLevel::Exception => {
                let mut e = Error::new(code.unwrap_or(SqlState::RaiseException), message);
                if let Some(d) = detail {
                    e = e.with_detail(d);
                }
                if let Some(h) = hint {
                    e = e.with_hint(h);
                }
                return Err(e);
            }
            RaiseLevel::Warning => "WARNING",
            RaiseLevel::Notice => "NOTICE",
            RaiseLevel::Info => "INFO",
            RaiseLevel::Log => return Ok(()),
        };
        NOTICES.with(|n| n.borrow_mut().push((severity, message)));
        Ok(())
    }
}

/// A value's text form.
fn value_text(v: &Value) -> String {
    let mut s = String::new();
    format_value(v, &mut s);
    s
}

/// `RAISE`'s format: each `%` takes the next argument's text (`<NULL>`
/// for NULL), `%%` is a `%`.
fn substitute(format: &str, values: &[Value]) -> String {
    let mut out = String::with_capacity(format.len());
    let mut next = values.iter();
    let mut chars = format.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
        } else if chars.peek() == Some(&'%') {
            chars.next();
            out.push('%');
        } else {
            match next.next() {
                Some(Value::Null) => out.push_str("<NULL>"),
                Some(v) => format_value(v, &mut out),
                None => out.push('%'),
            }
        }
    }
    out
}

/// `e` with each variable slot replaced by its value, evaluated.
fn eval_with(e: &Expr, vars: &[Value]) -> Result<Value> {
    let mut e = e.clone();
    bind_slots(&mut e, vars);
    eval_const(&e)
}

fn bind_slots(e: &mut Expr, vars: &[Value]) {
    if let ExprKind::Param(i) = e.kind {
        e.kind = ExprKind::Const(vars.get(i).cloned().unwrap_or(Value::Null));
        return;
    }
    for c in e.children_mut() {
        bind_slots(c, vars);
    }
}

thread_local! {
    static NOTICES: RefCell<Vec<(&'static str, String)>> = const { RefCell::new(Vec::new()) };
}

/// The notices `RAISE` queued on this thread since the last call, oldest
/// first: (severity, message).
pub fn take_notices() -> Vec<(&'static str, String)> {
    NOTICES.with(|n| std::mem::take(&mut *n.borrow_mut()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raise_format_substitutes_arguments() {
        let vals = [Value::Int4(3), Value::Null];
        assert_eq!(substitute("a % b % c %% %", &vals), "a 3 b <NULL> c % %");
    }

    fn slot(i: usize, ty: DataType) -> Expr {
        Expr {
            kind: ExprKind::Param(i),
            ty,
        }
    }

    fn k(v: i32) -> Expr {
        Expr::constant(Value::Int4(v), DataType::Int4)
    }

    fn program(body: Vec<Stmt>) -> Program {
        Program {
            signature: "f(boolean)".into(),
            nargs: 1,
            types: vec![DataType::Bool, DataType::Int4, DataType::Int4],
            body,
            strict: true,
            plpgsql: true,
            found: None,
            ret: DataType::Int4,
            void: false,
            volatile: false,
        }
    }

    /// A strict program gives NULL for a NULL argument; IF picks its arm;
    /// a PL/pgSQL body without RETURN fails with 2F005.
    #[test]
    fn programs_run_their_statements() {
        let p = program(vec![
            Stmt::Assign(1, 1, k(7)),
            Stmt::If(
                1,
                vec![(slot(0, DataType::Bool), vec![Stmt::Return(2, Some(k(1)))])],
                vec![Stmt::Return(3, Some(slot(1, DataType::Int4)))],
            ),
        ]);
        assert_eq!(p.call(&[Value::Bool(true)]).unwrap(), Value::Int4(1));
        assert_eq!(p.call(&[Value::Bool(false)]).unwrap(), Value::Int4(7));
        assert_eq!(p.call(&[Value::Null]).unwrap(), Value::Null);
        let empty = Program {
            body: vec![Stmt::Null],
            ..p
        };
        let e = empty.call(&[Value::Bool(true)]).unwrap_err();
        assert_eq!(e.code.code(), "2F005");
    }

    /// A range loop sums with EXIT WHEN, and a handler catches division
    /// by zero raised inside its block, with SQLSTATE in its slot.
    #[test]
    fn loops_exit_and_handlers_catch() {
        use crate::types::BinaryOp;
        let bin = |op, a, b| Expr {
            kind: ExprKind::Binary(op, Box::new(a), Box::new(b)),
            ty: DataType::Int4,
        };
        let sum = Stmt::Loop(
            1,
            None,
            Box::new(LoopOver::Range {
                slot: 2,
                reverse: false,
                lo: k(1),
                hi: k(10),
                step: None,
            }),
            vec![
                Stmt::Exit(
                    2,
                    false,
                    None,
                    Some(Expr {
                        kind: ExprKind::Binary(
                            BinaryOp::Gt,
                            Box::new(slot(2, DataType::Int4)),
                            Box::new(k(4)),
                        ),
                        ty: DataType::Bool,
                    }),
                ),
                Stmt::Assign(
                    3,
                    1,
                    bin(
                        BinaryOp::Add,
                        slot(1, DataType::Int4),
                        slot(2, DataType::Int4),
                    ),
                ),
            ],
        );
        let p = program(vec![
            Stmt::Assign(1, 1, k(0)),
            sum,
            Stmt::Return(4, Some(slot(1, DataType::Int4))),
        ]);
        assert_eq!(p.call(&[Value::Bool(true)]).unwrap(), Value::Int4(10));
        let mut p = program(vec![Stmt::Block(
            1,
            Box::new(Block {
                label: None,
                inits: Vec::new(),
                body: vec![Stmt::Return(2, Some(bin(BinaryOp::Div, k(1), k(0))))],
                handlers: vec![Handler {
                    conditions: vec![Condition::parse("division_by_zero").unwrap()],
                    sqlstate: 1,
                    sqlerrm: 2,
                    body: vec![Stmt::Return(3, Some(k(-1)))],
                }],
            }),
        )]);
        p.types = vec![DataType::Bool, DataType::Text, DataType::Text];
        assert_eq!(p.call(&[Value::Bool(true)]).unwrap(), Value::Int4(-1));
    }
}
