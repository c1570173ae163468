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
//! Each subquery is recorded with its place ([`Place`]): how deep in other
//! subqueries and in which clause, so that EXPLAIN numbers them as
//! PostgreSQL's planner does and prints each inside the one it was planned
//! in. A WHERE conjunct that reads only folds ([`Gate`], PostgreSQL's
//! one-time filter) is left out of both probes' plans; EXPLAIN then prints
//! the plan without it, planned again with the folds answering as they
//! did, under a Result filtering on the folds' parameters ([`mark_all`]).
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

/// Where the binder met a subquery: how deep in other subqueries, and in
/// which clause of its query block (what PostgreSQL's numbering follows).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Place {
    /// The sublinks around it.
    pub depth: usize,
    /// Its clause, in the order PostgreSQL's planner processes them.
    pub clause: Clause,
}

/// A clause of a query block, in the order PostgreSQL's planner turns its
/// sublinks into subplans (`preprocess_expression`'s calls): the target
/// list (select list, GROUP BY and ORDER BY entries) first, then the join
/// tree's conditions, HAVING, and LIMIT / OFFSET.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum Clause {
    Targets,
    #[default]
    Where,
    Having,
    Limit,
}

/// One folded sublink.
#[derive(Debug, Clone)]
pub struct Fold {
    pub kind: FoldKind,
    pub place: Place,
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
    SubPlan(usize, Place),
}

impl Made {
    /// Where the binder met it.
    pub fn place(&self) -> Place {
        match self {
            Made::Folded(f) => f.place,
            Made::SubPlan(_, p) => *p,
        }
    }
}

/// What EXPLAIN recorded of a statement's subqueries.
#[derive(Debug, Clone, Default)]
pub struct Recorded {
    pub made: Vec<Made>,
    /// The hashed sets of folded `IN` sublinks: the set's address and the
    /// fold's place in `made`.
    pub sets: Vec<(usize, usize)>,
    /// The statement's WHERE conjuncts that read no column, only folds
    /// (PostgreSQL's one-time filter over its InitPlans).
    pub gates: Vec<Gate>,
    /// Where the binder is now.
    at: Place,
    /// The query blocks open at this depth (a clause counts in the
    /// outermost only: a set operation's branches and FROM subqueries keep
    /// their order).
    blocks: usize,
}

/// A WHERE conjunct of the statement that reads only folded subqueries.
#[derive(Debug, Clone)]
pub struct Gate {
    /// The conjunct as bound (over the folds' constants).
    pub expr: Expr,
    /// The ordinals of the folds made while binding its condition.
    pub folds: std::ops::Range<usize>,
}

/// A planning of the statement again, for EXPLAIN only.
struct Probe {
    /// Each fold's answer, by ordinal.
    answers: Vec<Option<Vec<Vec<Value>>>>,
    /// The next fold's ordinal.
    next: usize,
    /// The subquery plan each fold was given.
    plans: Vec<Plan>,
    /// The gates met, left out of the plan (printed as a one-time filter).
    gates: Vec<Expr>,
    at: Place,
    blocks: usize,
}

enum Mode {
    Record(Recorded),
    Probe(Probe),
}

/// What a probe's planning gave: its plan, each fold's subquery plan,
/// and the gates it left out.
type Probed<T> = (T, Vec<Plan>, Vec<Expr>);

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
/// probe value; returns what it gave ([`Probed`]) and the probe values.
fn probing<T>(rec: &Recorded, f: impl FnOnce() -> T) -> (Probed<T>, Vec<Option<Value>>) {
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
    (probe_with(answers, f), probes)
}

/// Runs `f` (planning the statement again) with the folds answering
/// `answers`, by ordinal.
fn probe_with<T>(answers: Vec<Option<Vec<Vec<Value>>>>, f: impl FnOnce() -> T) -> Probed<T> {
    let probe = Probe {
        answers,
        next: 0,
        plans: Vec::new(),
        gates: Vec::new(),
        at: Place::default(),
        blocks: 0,
    };
    let before = LOG.with(|l| l.replace(Some(Mode::Probe(probe))));
    let r = f();
    match LOG.with(|l| l.replace(before)) {
        Some(Mode::Probe(p)) => (r, p.plans, p.gates),
        _ => (r, Vec::new(), Vec::new()),
    }
}

/// The folds of `rec`, in binding order.
pub fn folds(rec: &Recorded) -> impl Iterator<Item = &Fold> {
    rec.made.iter().filter_map(|m| match m {
        Made::Folded(f) => Some(&**f),
        Made::SubPlan(..) => None,
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
                    place: rec.at,
                    plan: plan.clone(),
                    rows: rows.clone(),
                    types: plan.fields.iter().map(|f| f.ty).collect(),
                })));
            }
            (rows, Mode::Record(rec))
        }
        Some(Mode::Probe(mut p)) => {
            let rows = match p.answers.get_mut(p.next) {
                Some(a) => a.take().or_else(run),
                None => run(),
            };
            p.plans.push(plan.clone());
            p.next += 1;
            (rows, Mode::Probe(p))
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
            rec.made.push(Made::SubPlan(at, rec.at));
        }
    });
}

/// Runs `f` (planning a sublink's query) one subquery deeper.
pub fn nested<T>(f: impl FnOnce() -> T) -> T {
    let saved = with_place(|at, blocks| {
        let saved = (*at, *blocks);
        *at = Place {
            depth: at.depth + 1,
            clause: Clause::default(),
        };
        *blocks = 0;
        saved
    });
    let r = f();
    if let Some(saved) = saved {
        with_place(|at, blocks| (*at, *blocks) = saved);
    }
    r
}

/// Runs `f` (planning a query block) as a block of the current subquery.
pub fn block<T>(f: impl FnOnce() -> T) -> T {
    with_place(|_, blocks| *blocks += 1);
    let r = f();
    with_place(|_, blocks| *blocks = blocks.saturating_sub(1));
    r
}

/// The binder now binds `clause` of a query block (counted in the
/// subquery's outermost block only).
pub fn clause(clause: Clause) {
    with_place(|at, blocks| {
        if *blocks <= 1 {
            at.clause = clause;
        }
    });
}

/// `f` on where the binder is, while EXPLAIN records or probes.
fn with_place<T>(f: impl FnOnce(&mut Place, &mut usize) -> T) -> Option<T> {
    LOG.with(|l| match &mut *l.borrow_mut() {
        Some(Mode::Record(rec)) => Some(f(&mut rec.at, &mut rec.blocks)),
        Some(Mode::Probe(p)) => Some(f(&mut p.at, &mut p.blocks)),
        None => None,
    })
}

/// A WHERE condition of the statement's own query block, bound by `f`.
/// While EXPLAIN records, its conjuncts that read no column and only
/// subqueries folded while binding it are recorded as gates; while it
/// probes, they are left out (so the probe's plan is the plan's without
/// them, whatever the folds answer). Otherwise `f`'s result as it is.
pub fn condition(
    clause: &str,
    f: impl FnOnce() -> crate::error::Result<Expr>,
) -> crate::error::Result<Expr> {
    let start = LOG.with(|l| match &*l.borrow() {
        _ if clause != "WHERE" => None,
        Some(Mode::Record(rec)) if rec.at.depth == 0 && rec.blocks <= 1 => Some(folds(rec).count()),
        Some(Mode::Probe(p)) if p.at.depth == 0 && p.blocks <= 1 => Some(p.next),
        _ => None,
    });
    let Some(start) = start else {
        return f();
    };
    let bound = f()?;
    let mut list = Vec::new();
    crate::plan::quals::conjuncts(bound.clone(), &mut list);
    let (gates, rest): (Vec<Expr>, Vec<Expr>) = list.into_iter().partition(reads_no_column);
    LOG.with(|l| match &mut *l.borrow_mut() {
        Some(Mode::Record(rec)) => {
            let end = folds(rec).count();
            if end > start {
                let folds = start..end;
                rec.gates.extend(gates.into_iter().map(|expr| Gate {
                    expr,
                    folds: folds.clone(),
                }));
            }
            Ok(bound)
        }
        Some(Mode::Probe(p)) if p.next > start && !gates.is_empty() => {
            p.gates.extend(gates);
            Ok(crate::plan::quals::conjunction(rest)
                .unwrap_or_else(|| Expr::constant(Value::Bool(true), DataType::Bool)))
        }
        _ => Ok(bound),
    })
}

/// Whether `e` reads no column, parameter or subplan (a constant after
/// folding, unless it calls a volatile function).
fn reads_no_column(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Column(_) | ExprKind::Param(_) | ExprKind::SubPlan(..) => false,
        _ => e.children().into_iter().all(reads_no_column) && !crate::plan::cost::is_volatile(e),
    }
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
            s.limit_hint = None;
        }
        // A LIMIT may be a fold's value too (not printed).
        if let Node::Limit { limit, offset, .. } = &mut p.node {
            (*limit, *offset) = (None, 0);
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

/// `plan` as EXPLAIN prints it, given `replan`, which plans the statement
/// again: the folds' constants marked as their parameters ([`mark`]),
/// in it and in the folds' own plans. With gates (and not `analyze`,
/// whose measurements are the plan's), the plan is the statement's
/// planned without them, its folds answering as they did, under a
/// filter of the gates over the parameters ([`gate`]).
pub fn mark_all(
    plan: &Plan,
    rec: &mut Recorded,
    analyze: bool,
    mut replan: impl FnMut() -> Option<Plan>,
) -> Plan {
    if folds(rec).next().is_none() {
        return plan.clone();
    }
    let ((probe, plans, probe_gates), values) = probing(rec, &mut replan);
    let Some(probe) = probe else {
        return plan.clone();
    };
    let mut k = 0;
    for m in &mut rec.made {
        if let Made::Folded(f) = m {
            if let Some(p) = plans.get(k) {
                f.plan = mark(&f.plan, p, &values);
            }
            k += 1;
        }
    }
    if rec.gates.is_empty() || analyze || probe_gates.len() != rec.gates.len() {
        return mark(plan, &probe, &values);
    }
    let answers = folds(rec).map(|f| Some(f.rows.clone())).collect();
    let (Some(base), _, _) = probe_with(answers, &mut replan) else {
        return mark(plan, &probe, &values);
    };
    let mut out = mark(&base, &probe, &values);
    crate::plan::quals::drop_true(&mut out);
    let gates: Vec<Expr> = rec
        .gates
        .iter()
        .zip(probe_gates)
        .map(|(g, p)| mark_expr(g, &p, &values))
        .collect();
    if let Some(pred) = crate::plan::quals::conjunction(gates) {
        gate(&mut out, pred);
    }
    out
}

/// Gate `g`'s conjunct with its folds' constants (those that differ in
/// the probe's `probe`) as their parameters.
fn mark_expr(g: &Gate, probe: &Expr, probes: &[Option<Value>]) -> Expr {
    fn consts(e: &Expr, out: &mut Vec<Value>) {
        match &e.kind {
            ExprKind::Const(v) => out.push(v.clone()),
            _ => e.children().into_iter().for_each(|c| consts(c, out)),
        }
    }
    fn replace(e: &mut Expr, f: &mut dyn FnMut(&mut Expr)) {
        if let ExprKind::Const(_) = e.kind {
            f(e);
            return;
        }
        for c in e.children_mut() {
            replace(c, f);
        }
    }
    let (mut mine, mut theirs) = (Vec::new(), Vec::new());
    consts(&g.expr, &mut mine);
    consts(probe, &mut theirs);
    let mut out = g.expr.clone();
    if mine.len() != theirs.len() {
        return out;
    }
    let text = |v: &Value| {
        let mut s = String::new();
        crate::types::format_value(v, &mut s);
        s
    };
    let mut i = 0;
    replace(&mut out, &mut |e| {
        let k = if mine[i] == theirs[i] {
            None
        } else if g.folds.len() == 1 {
            Some(g.folds.start)
        } else {
            let seen = text(&theirs[i]);
            g.folds.clone().find(|&k| {
                probes
                    .get(k)
                    .cloned()
                    .flatten()
                    .is_some_and(|p| text(&p) == seen)
            })
        };
        if let Some(k) = k {
            e.kind = ExprKind::Param(FOLD_PARAM + k);
        }
        i += 1;
    });
    out
}

/// `plan` with a filter of `pred` (over folds' parameters only) above its
/// scans and joins: under the nodes that sort, group, limit or project
/// their rows, as PostgreSQL puts its gating Result.
fn gate(plan: &mut Plan, pred: Expr) {
    fn above(n: &Node) -> bool {
        matches!(
            n,
            Node::Project { .. }
                | Node::Limit { .. }
                | Node::LimitTies { .. }
                | Node::Sort { .. }
                | Node::Aggregate { .. }
                | Node::GroupAggregate { .. }
                | Node::Distinct { .. }
                | Node::Unique { .. }
                | Node::WindowAgg { .. }
        )
    }
    let through = match &plan.node {
        // HAVING's filter, not a scan's.
        Node::Filter { input, .. } => {
            above(&input.node) && !matches!(input.node, Node::Project { .. })
        }
        n => above(n),
    };
    if through {
        if let Some(c) = plan.children_mut().into_iter().next() {
            gate(c, pred);
            return;
        }
    }
    let below = std::mem::replace(
        plan,
        Plan {
            rows: 0.0,
            fields: Vec::new(),
            node: Node::Values { rows: Vec::new() },
        },
    );
    *plan = Plan {
        rows: below.rows,
        fields: below.fields.clone(),
        node: Node::Filter {
            input: Box::new(below),
            predicate: pred,
        },
    };
}

/// Whether `e` is a gate's condition: it reads folds' parameters and no
/// column (EXPLAIN prints it as a Result's `One-Time Filter`).
pub fn is_gate(e: &Expr) -> bool {
    fn any_fold(e: &Expr) -> bool {
        matches!(e.kind, ExprKind::Param(i) if i >= FOLD_PARAM)
            || matches!(e.kind, ExprKind::InSet(..))
            || e.children().into_iter().any(any_fold)
    }
    fn no_column(e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Column(_) | ExprKind::SubPlan(..) => false,
            ExprKind::Param(i) => *i >= FOLD_PARAM,
            _ => e.children().into_iter().all(no_column),
        }
    }
    any_fold(e) && no_column(e)
}
