//! Running user-defined functions: the compiled form of a function body
//! ([`Program`]) and its interpreter ([`Program::call`]).
//!
//! The planner (`plan::userfunc`) compiles both languages to the same
//! tree: a `LANGUAGE sql` body is one `RETURN` of its last SELECT's
//! expression; a PL/pgSQL block keeps its statements (assignment, `IF` /
//! `ELSIF` / `ELSE`, `RETURN`, `RAISE`, `NULL`). Every expression is bound
//! beforehand with the function's variables (arguments first, then the
//! `DECLARE`d ones) as `Param` slots; the interpreter replaces each slot by
//! the variable's current value and evaluates the expression as a
//! constant, through the same evaluator rows use.
//!
//! Notices a `RAISE NOTICE` (or `WARNING`, `INFO`) sends are queued per
//! thread for the session to print after the statement ([`take_notices`]).
//!
//! Invariants: a slot index is below [`Program::nvars`]; expressions hold
//! no correlated subquery of their own (the compiler refuses them).

use std::cell::RefCell;

use super::eval_const;
use crate::err;
use crate::error::{Error, Result};
use crate::nodes::expr::{Expr, ExprKind};
use crate::types::io::format_value;
use crate::types::Value;

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
    /// `RAISE level 'format' [, expr ...]`.
    Raise(u32, RaiseLevel, String, Vec<Expr>),
    /// `NULL;`
    Null,
}

/// A compiled function body.
#[derive(Debug, Clone)]
pub struct Program {
    /// The function's name and argument types (`f(integer)`), for error
    /// contexts.
    pub signature: String,
    /// How many arguments it takes (the first slots).
    pub nargs: usize,
    /// Every slot's initial value expression after the arguments (`None`:
    /// NULL), in declaration order.
    pub inits: Vec<Option<Expr>>,
    /// The statements.
    pub body: Vec<Stmt>,
    /// `STRICT`: any NULL argument gives NULL without running the body.
    pub strict: bool,
    /// A `LANGUAGE sql` body that returns no row (`None` from no RETURN)
    /// gives NULL; a PL/pgSQL one reaching its end fails with 2F005.
    pub plpgsql: bool,
}

impl Program {
    /// How many variable slots the body uses.
    pub fn nvars(&self) -> usize {
        self.nargs + self.inits.len()
    }

    /// Runs the body on `args` (already cast to the argument types).
    pub fn call(&self, args: &[Value]) -> Result<Value> {
        if self.strict && args.iter().any(Value::is_null) {
            return Ok(Value::Null);
        }
        let mut vars: Vec<Value> = Vec::with_capacity(self.nvars());
        vars.extend(args.iter().cloned());
        vars.resize(self.nargs, Value::Null);
        for init in &self.inits {
            let v = match init {
                Some(e) => eval_with(e, &vars).map_err(|e| {
                    self.context(e, "during statement block local variable initialization")
                })?,
                None => Value::Null,
            };
            vars.push(v);
        }
        match self.run(&self.body, &mut vars)? {
            Some(v) => Ok(v),
            None if self.plpgsql => Err(err!(
                FunctionExecutedNoReturnStatement,
                "control reached end of function without RETURN"
            )
            .with_context(format!("PL/pgSQL function {}", self.signature))),
            None => Ok(Value::Null),
        }
    }

    /// Runs `stmts`; `Some(result)` once a RETURN ran.
    fn run(&self, stmts: &[Stmt], vars: &mut Vec<Value>) -> Result<Option<Value>> {
        for s in stmts {
            match s {
                Stmt::Assign(line, slot, e) => {
                    let v = eval_with(e, vars).map_err(|e| self.at(e, *line, "assignment"))?;
                    vars[*slot] = v;
                }
                Stmt::Return(line, e) => {
                    return Ok(Some(match e {
                        Some(e) => eval_with(e, vars).map_err(|e| self.at(e, *line, "RETURN"))?,
                        None => Value::Null,
                    }))
                }
                Stmt::If(line, arms, otherwise) => {
                    let mut taken = None;
                    for (cond, body) in arms {
                        let c = eval_with(cond, vars).map_err(|e| self.at(e, *line, "IF"))?;
                        if matches!(c, Value::Bool(true)) {
                            taken = Some(body);
                            break;
                        }
                    }
                    if let Some(r) = self.run(taken.unwrap_or(otherwise), vars)? {
                        return Ok(Some(r));
                    }
                }
                Stmt::Raise(line, level, format, args) => self
                    .raise(*level, format, args, vars)
                    .map_err(|e| self.at(e, *line, "RAISE"))?,
                Stmt::Null => {}
            }
        }
        Ok(None)
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

    fn raise(&self, level: RaiseLevel, format: &str, args: &[Expr], vars: &[Value]) -> Result<()> {
        let mut values = Vec::with_capacity(args.len());
        for a in args {
            values.push(eval_with(a, vars)?);
        }
        let message = substitute(format, &values);
        let severity = match level {
            RaiseLevel::Exception => {
                return Err(Error::new(crate::error::SqlState::RaiseException, message))
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
    use crate::types::DataType;

    #[test]
    fn raise_format_substitutes_arguments() {
        let vals = [Value::Int4(3), Value::Null];
        assert_eq!(substitute("a % b % c %% %", &vals), "a 3 b <NULL> c % %");
    }

    /// A strict program gives NULL for a NULL argument; IF picks its arm;
    /// a PL/pgSQL body without RETURN fails with 2F005.
    #[test]
    fn programs_run_their_statements() {
        let slot = Expr {
            kind: ExprKind::Param(0),
            ty: DataType::Bool,
        };
        let k = |v: i32| Expr::constant(Value::Int4(v), DataType::Int4);
        let p = Program {
            signature: "f(boolean)".into(),
            nargs: 1,
            inits: vec![Some(k(7))],
            body: vec![Stmt::If(
                1,
                vec![(slot, vec![Stmt::Return(2, Some(k(1)))])],
                vec![Stmt::Return(
                    3,
                    Some(Expr {
                        kind: ExprKind::Param(1),
                        ty: DataType::Int4,
                    }),
                )],
            )],
            strict: true,
            plpgsql: true,
        };
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
}
