//! What EXPLAIN needs to know of the subqueries the binder folded into
//! constants (PostgreSQL's InitPlans, which it prints as `$0` and an
//! `InitPlan 1 (returns $0)` section).
//!
//! The binder runs an uncorrelated, non-volatile sublink while planning
//! and puts its result in the plan ([`super::sublink`]); the plan, its
//! index bounds and the plan cache's templates use that constant, and
//! nothing here changes them. While EXPLAIN plans a statement it records
//! each fold in binding order ([`recording`]): the subquery's plan, its
//! kind, its rows. To find where each constant went, EXPLAIN plans the
//! statement a second time with every fold answering a different value
//! ([`probing`]) and compares the two plans: a constant that differs, and
//! differs by exactly a fold's probe value, is that fold's `$N`
//! ([`mark`]). When the probe's plan has another shape (a value that
//! decides a path), the constants stay as they are and only the sections
//! are printed.
//!
//! Invariants: outside EXPLAIN nothing is recorded and every call passes
//! straight through; the probe never runs a subquery it answers; the
//! plan marked is a copy that is printed, never run.

use std::cell::RefCell;

use crate::nodes::expr::{Expr, ExprKind, SubPlanRef};
use crate::nodes::{Node, Plan};
use crate::types::cast::CastContext;
use crate::types::{DataType, Value};

/// The kind of a folded sublink: what PostgreSQL's plan would return.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum FoldKind {
    /// `(SELECT ...)`: an InitPlan returning one parameter.
    Scalar,
    /// `EXISTS (...)`: an InitPlan returning one boolean parameter.
    Exists,
    /// `x [NOT] IN (...)`: a hashed SubPlan.
    In,
    /// `SET (a, b) = (SELECT ...)`: an InitPlan returning `m` parameters.
    Row(usize),
}

/// One folded sublink.
#[derive(Debug, Clone)]
pub struct Fold {
    pub kind: FoldKind,
    /// The subquery's plan.
    pub plan: Plan,
    /// What it returned.
    pub rows: Vec<Vec<Value>>,
    /// Its output types.
    pub types: Vec<DataType>,
}

/// A subquery of the statement, in the order the binder made them.
#[derive(Debug, Clone)]
pub enum Made {
    /// Folded into the plan.
    Folded(Box<Fold>),
    /// Left as a subplan node, by address of its [`SubPlanRef`].
    SubPlan(usize),
}

/// What EXPLAIN recorded of a statement's subqueries.
#[derive(Debug, Clone, Default)]
pub struct Recorded {
    pub made: Vec<Made>,
    /// The hashed sets of folded `IN` sublinks: the set's address and the
    /// fold's place in `made`.
    pub sets: Vec<(usize, usize)>,
}

enum Mode {
    Record(Recorded),
    /// The probe's answer for each fold, by fold ordinal; the next one.
    Probe(Vec<Option<Vec<Vec<Value>>>>, usize),
}

thread_local! {
    static LOG: RefCell<Option<Mode>> = const { RefCell::new(None) };
}

/// Runs `f` (planning a statement) recording its folds and subplans.
pub fn recording<T>(f: impl FnOnce() -> T) -> (T, Recorded) {
    let before = LOG.with(|l| l.replace(Some(Mode::Record(Recorded::default()))));
    let r = f();
    let log = LOG.with(|l| l.replace(before));
    match log {
        Some(Mode::Record(rec)) => (r, rec),
        _ => (r, Recorded::default()),
    }
}

/// Runs `f` (planning the statement again) with each fold answering its
/// probe value; returns `f`'s result and the probe values.
pub fn probing<T>(rec: &Recorded, f: impl FnOnce() -> T) -> (T, Vec<Option<Value>>) {
    let mut answers = Vec::new();
    let mut probes: Vec<Option<Value>> = Vec::new();
    let mut k = 0;
    for fold in folds(rec) {
        // Each fold's probe value its own, so a changed constant names
        // one fold.
        let (rows, probe) = loop {
            let (rows, probe) = probe_rows(fold, k);
            k += 1;
            match &probe {
                Some(p) if fold.kind != FoldKind::Exists && probes.contains(&Some(p.clone())) => {}
                _ => break (rows, probe),
            }
        };
        answers.push(rows);
        probes.push(probe);
    }
    let before = LOG.with(|l| l.replace(Some(Mode::Probe(answers, 0))));
    let r = f();
    LOG.with(|l| l.replace(before));
    (r, probes)
}

/// The folds of `rec`, in binding order.
fn folds(rec: &Recorded) -> impl Iterator<Item = &Fold> {
    rec.made.iter().filter_map(|m| match m {
        Made::Folded(f) => Some(&**f),
        Made::SubPlan(_) => None,
    })
}

/// Runs `f` with nothing recorded or probed: planning done only to
/// inspect a query, whose folds are not the statement's.
pub fn unrecorded<T>(f: impl FnOnce() -> T) -> T {
    let saved = LOG.with(|l| l.borrow_mut().take());
    let r = f();
    LOG.with(|l| *l.borrow_mut() = saved);
    r
}

/// A sublink folded (or about to be): `run` runs it now. While EXPLAIN
/// records, the run is recorded (and made with recording suspended, so
/// that what it plans is not the statement's); while it probes, the
/// fold's probe rows are returned and nothing runs.
pub fn fold(
    kind: FoldKind,
    plan: &Plan,
    run: impl FnOnce() -> Option<Vec<Vec<Value>>>,
) -> Option<Vec<Vec<Value>>> {
    let mode = LOG.with(|l| l.borrow_mut().take());
    let (rows, mode) = match mode {
        None => return run(),
        Some(Mode::Record(mut rec)) => {
            let rows = run();
            if let Some(rows) = &rows {
                rec.made.push(Made::Folded(Box::new(Fold {
                    kind,
                    plan: plan.clone(),
                    rows: rows.clone(),
                    types: plan.fields.iter().map(|f| f.ty).collect(),
                })));
            }
            (rows, Mode::Record(rec))
        }
        Some(Mode::Probe(mut answers, next)) => {
            let rows = match answers.get_mut(next) {
                Some(a) => a.take().or_else(run),
                None => run(),
            };
            (rows, Mode::Probe(answers, next + 1))
        }
    };
    LOG.with(|l| *l.borrow_mut() = Some(mode));
    rows
}

/// A subplan the binder made (not folded).
pub fn note_subplan(sp: &SubPlanRef) {
    LOG.with(|l| {
        if let Some(Mode::Record(rec)) = &mut *l.borrow_mut() {
            let at = std::sync::Arc::as_ptr(&sp.0) as *const () as usize;
            rec.made.push(Made::SubPlan(at));
        }
    });
}

/// The hashed set the last fold (an `IN`) became.
pub fn note_set<T>(set: &std::sync::Arc<T>) {
    LOG.with(|l| {
        if let Some(Mode::Record(rec)) = &mut *l.borrow_mut() {
            let at = std::sync::Arc::as_ptr(set) as *const () as usize;
            rec.sets.push((at, rec.made.len().saturating_sub(1)));
        }
    });
}

/// The rows fold `k` answers in the probe, and the value its constant
/// takes (`None`: not probed, its constant not located).
fn probe_rows(fold: &Fold, k: usize) -> (Option<Vec<Vec<Value>>>, Option<Value>) {
    match fold.kind {
        FoldKind::Scalar => {
            let ty = fold.types[0];
            let v = fold.rows.first().map_or(Value::Null, |r| r[0].clone());
            match other_value(&v, &ty, k) {
                Some(p) => (Some(vec![vec![p.clone()]]), Some(p)),
                None => (None, None),
            }
        }
        FoldKind::Exists => {
            let rows = if fold.rows.is_empty() {
                vec![vec![Value::Null]]
            } else {
                Vec::new()
            };
            (Some(rows), Some(Value::Bool(fold.rows.is_empty())))
        }
        FoldKind::In | FoldKind::Row(_) => (None, None),
    }
}

/// A value of `ty` other than `v` and near it (so that estimates, and
/// with them the plan's shape, stay as they were), distinct for each fold
/// `k`.
fn other_value(v: &Value, ty: &DataType, k: usize) -> Option<Value> {
    let step = k as i64 + 1;
    let int = |x: i64, lo: i64, hi: i64| -> i64 {
        if x + step <= hi {
            x + step
        } else if x - step >= lo {
            x - step
        } else {
            x ^ 1
        }
    };
    Some(match (v, ty) {
        (Value::Int2(x), _) => Value::Int2(int(*x as i64, -32768, 32767) as i16),
        (Value::Int4(x), _) => Value::Int4(int(*x as i64, i32::MIN as i64, i32::MAX as i64) as i32),
        (Value::Int8(x), _) => Value::Int8(int(*x, i64::MIN / 2, i64::MAX / 2)),
        (Value::Float8(x), _) if x.is_finite() => Value::Float8(x + step as f64),
        (Value::Float4(x), _) if x.is_finite() => Value::Float4(x + step as f32),
        (Value::Text(s), _) => Value::text(&format!("{s}\u{1}{k}")),
        (Value::Numeric(_), _) => {
            // One more digit past the last one.
            let mut s = String::new();
            crate::types::format_value(v, &mut s);
            let s = format!(
                "{s}{}{step}",
                if s.contains(['.', 'e', 'E', 'N', 'n']) {
                    ""
                } else {
                    "."
                }
            );
            let text = Value::text(&s);
            crate::types::cast_from(&text, &DataType::Text, ty, CastContext::Explicit).ok()?
        }
        (Value::Date(x), _) => Value::Date(int(*x as i64, -1_000_000, 1_000_000) as i32),
        (Value::Null, DataType::Int2) => Value::Int2(step as i16),
        (Value::Null, DataType::Int4) => Value::Int4(step as i32),
        (Value::Null, DataType::Int8) => Value::Int8(step),
        (Value::Null, DataType::Float8) => Value::Float8(step as f64),
        _ => return None,
    })
}

/// Calls `f` on every constant EXPLAIN prints of `plan` (the nodes'
/// expressions, an index scan's conditions), in a fixed order.
fn for_each_const(plan: &mut Plan, f: &mut dyn FnMut(&mut Expr)) {
    fn expr(e: &mut Expr, f: &mut dyn FnMut(&mut Expr)) {
        if let ExprKind::Const(_) = e.kind {
            f(e);
            return;
        }
        for c in e.children_mut() {
            expr(c, f);
        }
    }
    if let Node::IndexScan(s) = &mut plan.node {
        for e in &mut s.index_cond {
            expr(e, f);
        }
    }
    for e in plan.node.exprs_mut() {
        expr(e, f);
    }
    for c in plan.children_mut() {
        for_each_const(c, f);
    }
}

/// The constants of `plan`, and its text with them and its estimates
/// blanked.
fn consts_and_frame(plan: &Plan) -> (Vec<Value>, String) {
    fn blank_rows(p: &mut Plan) {
        p.rows = 0.0;
        // An index scan's bounds are its conditions' values again.
        if let Node::IndexScan(s) = &mut p.node {
            s.bounds = Default::default();
        }
        for c in p.children_mut() {
            blank_rows(c);
        }
    }
    let mut copy = plan.clone();
    let mut values = Vec::new();
    for_each_const(&mut copy, &mut |e| {
        if let ExprKind::Const(v) = std::mem::replace(&mut e.kind, ExprKind::Const(Value::Null)) {
            values.push(v);
        }
    });
    blank_rows(&mut copy);
    (values, format!("{copy:?}"))
}

/// Parameters at and above this number stand, in a marked plan, for the
/// output of fold `n - FOLD_PARAM`.
pub const FOLD_PARAM: usize = 1 << 24;

/// `plan` (the statement's) with each constant located as a fold's output
/// replaced by a parameter [`FOLD_PARAM`] + the fold's ordinal, given the
/// probe's plan and probe values; `plan` itself when the two plans differ
/// in more than those values.
pub fn mark(plan: &Plan, probe: &Plan, probes: &[Option<Value>]) -> Plan {
    let (mine, frame) = consts_and_frame(plan);
    let (theirs, probe_frame) = consts_and_frame(probe);
    if frame != probe_frame || mine.len() != theirs.len() {
        return plan.clone();
    }
    let mut out = plan.clone();
    let mut i = 0;
    for_each_const(&mut out, &mut |e| {
        // The constant may have been cast since (an `integer` fold compared
        // with a `bigint`): compared as text.
        let text = |v: &Value| {
            let mut s = String::new();
            crate::types::format_value(v, &mut s);
            s
        };
        let k = (mine[i] != theirs[i])
            .then(|| {
                let seen = text(&theirs[i]);
                probes
                    .iter()
                    .position(|p| p.as_ref().is_some_and(|p| text(p) == seen))
            })
            .flatten();
        if let Some(k) = k {
            e.kind = ExprKind::Param(FOLD_PARAM + k);
        }
        i += 1;
    });
    out
}
