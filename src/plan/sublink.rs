//! Subqueries used as expressions (PostgreSQL's sublinks): scalar
//! `(SELECT ...)`, `EXISTS`, `x [NOT] IN (...)` and `x op ANY/SOME/ALL
//! (...)`, and the outer references that make them correlated.
//!
//! While a sublink's query is planned, the query around it is pushed as an
//! [`OuterLevel`]: a column name that resolves in no scope of the subquery
//! is looked up there (innermost level first, as PostgreSQL does). A match
//! becomes an [`ExprKind::Param`] of the subquery and the outer column an
//! operand of its [`ExprKind::SubPlan`] node; a reference two levels out is
//! passed down through the level between, as a parameter of each.
//!
//! A sublink without outer references is run once while binding and
//! replaced by its result (PostgreSQL's InitPlan), unless it calls a
//! volatile function or fails: then it is an InitPlan the statement runs
//! once, when it first evaluates it ([`SubPlan::init`]). A correlated one
//! becomes a [`SubPlan`] run per distinct outer value
//! ([`crate::exec::subplan`]).
//! In an aggregating query, an outer reference must be a GROUP BY column
//! (42803 `subquery uses ungrouped column ... from outer query`).

use std::sync::Arc;

use heapdb_grammar::ast;

use super::bind::{walk, Binder, Mode};
use super::folded::FoldKind;
use super::scope::Scope;
use super::{Field, Node, Plan};
use crate::err;
use crate::error::{Error, Result, SqlState};
use crate::exec::expr::{Expr, ExprKind};
use crate::exec::subplan::{SubLinkKind, SubPlan};
use crate::types::cast::CastContext;
use crate::types::{self, BinaryOp, DataType, Value};

/// A query whose sublink is being planned, as its subquery sees it.
#[derive(Debug)]
pub struct OuterLevel {
    /// The names its rows offer.
    pub(super) scope: Scope,
    /// When it aggregates: its GROUP BY keys (over `scope`), the only
    /// columns an outer reference may read.
    group: Option<Vec<Expr>>,
    /// The operands of the sublink's subplan so far: one per parameter.
    args: Vec<Expr>,
    /// Set for FROM items the query may not read (left of a subquery not
    /// marked LATERAL, or across a RIGHT or FULL join): a reference that
    /// resolves nowhere else and only here is PostgreSQL's error.
    pub(super) hidden: Option<Hidden>,
    /// For a sublink's enclosing query: the aggregates it computes, with
    /// their output columns (empty when it does not aggregate). `None` for
    /// a LATERAL item's left side, where no aggregate of the item belongs
    /// ([`super::outer_agg`]).
    pub(super) aggs: Option<Vec<super::outer_agg::AggOutput>>,
    /// The clause the sublink stands in when its query cannot aggregate
    /// there (WHERE, JOIN conditions): the error's words.
    pub(super) clause: Option<&'static str>,
}

/// Why a level's FROM items are out of reach.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Hidden {
    /// The item is not LATERAL.
    NotLateral,
    /// The item joins them by RIGHT or FULL JOIN.
    JoinType,
}

impl OuterLevel {
    /// The error for `c`, which resolves in this hidden level at `i`.
    fn hidden_error(&self, c: &ast::ColumnRef, i: usize, why: Hidden) -> Error {
        let table = c
            .table
            .clone()
            .or_else(|| self.scope.columns[i].qualifier.clone())
            .unwrap_or_default();
        match (why, &c.table) {
            (Hidden::JoinType, _) => err!(
                InvalidColumnReference,
                "invalid reference to FROM-clause entry for table \"{table}\""
            )
            .with_detail("The combining JOIN type must be INNER or LEFT for a LATERAL reference."),
            (Hidden::NotLateral, Some(_)) => err!(
                UndefinedTable,
                "invalid reference to FROM-clause entry for table \"{table}\""
            )
            .with_hint(format!(
                "There is an entry for table \"{table}\", but it cannot be referenced from this part of the query."
            )),
            (Hidden::NotLateral, None) => err!(
                UndefinedColumn,
                "column \"{}\" does not exist",
                c.column
            )
            .with_hint(format!(
                "There is a column named \"{}\" in table \"{table}\", but it cannot be referenced from this part of the query.",
                c.column
            )),
        }
    }
}

/// Whether resolving a name failed because the name is not there (so an
/// enclosing query may have it), not because it is ambiguous.
fn unresolved(e: &Error) -> bool {
    matches!(e.code, SqlState::UndefinedColumn | SqlState::UndefinedTable)
}

/// Calls `f` on every column reference anywhere in `q`, subqueries
/// included.
pub fn query_columns(q: &ast::Query, f: &mut dyn FnMut(&ast::ColumnRef)) {
    let mut exprs: Vec<&ast::Expr> = Vec::new();
    let mut queries: Vec<&ast::Query> = vec![q];
    while let Some(q) = queries.pop() {
        queries.extend(q.with.iter().map(|c| &*c.query));
        exprs.extend(q.order_by.iter().map(|o| &o.expr));
        exprs.extend(q.limit.iter().chain(&q.offset));
        let mut bodies = vec![&q.body];
        while let Some(b) = bodies.pop() {
            match b {
                ast::SetExpr::Select(s) => {
                    for item in &s.projection {
                        if let ast::SelectItem::Expr { expr, .. } = item {
                            exprs.push(expr);
                        }
                    }
                    exprs.extend(s.where_clause.iter().chain(&s.group_by).chain(&s.having));
                    let mut refs: Vec<&ast::TableRef> = s.from.iter().collect();
                    while let Some(r) = refs.pop() {
                        match r {
                            ast::TableRef::Subquery { query, .. } => queries.push(query),
                            ast::TableRef::Join(j) => {
                                refs.push(&j.left);
                                refs.push(&j.right);
                                if let ast::JoinConstraint::On(e) = &j.constraint {
                                    exprs.push(e);
                                }
                            }
                            ast::TableRef::Function { call, .. } => exprs.extend(&call.args),
                            ast::TableRef::Table { .. } => {}
                        }
                    }
                }
                ast::SetExpr::Values(rows) => exprs.extend(rows.iter().flatten()),
                ast::SetExpr::Nested(q) => queries.push(q),
                ast::SetExpr::SetOp { left, right, .. } => {
                    bodies.push(left);
                    bodies.push(right);
                }
            }
        }
        while let Some(e) = exprs.pop() {
            walk(e, &mut |x| match &x.kind {
                ast::ExprKind::Column(c) => f(c),
                ast::ExprKind::Exists(sub)
                | ast::ExprKind::Subquery(sub)
                | ast::ExprKind::InSubquery { query: sub, .. }
                | ast::ExprKind::Quantified { query: sub, .. } => query_columns(sub, f),
                _ => {}
            });
        }
    }
}

/// `plan` with its one output column cast to `ty` (when it is not of it).
fn cast_output(plan: Plan, ty: DataType) -> Plan {
    let from = plan.fields[0].ty;
    if from == ty {
        return plan;
    }
    let cast = Expr {
        kind: ExprKind::Cast(Box::new(Expr::column(0, from)), CastContext::Implicit),
        ty,
    };
    Plan {
        rows: plan.rows,
        fields: vec![Field {
            name: plan.fields[0].name.clone(),
            ty,
        }],
        node: Node::Project {
            input: Box::new(plan),
            exprs: vec![cast],
        },
    }
}

/// `plan` stopping after its first row.
pub(crate) fn first_row(plan: Plan) -> Plan {
    Plan {
        fields: plan.fields.clone(),
        rows: plan.rows.min(1.0),
        node: Node::Limit {
            input: Box::new(plan),
            limit: Some(1),
            offset: 0,
        },
    }
}

impl Binder<'_> {
    /// Resolves a column reference in `scope`, else in the enclosing
    /// queries of the sublinks being planned.
    pub(super) fn bind_column(
        &mut self,
        c: &ast::ColumnRef,
        scope: &Scope,
        mode: &mut Mode,
    ) -> Result<Expr> {
        let local = match mode {
            Mode::Agg(state) => match state.input.resolve(c.table.as_deref(), &c.column) {
                // Not a group key (checked by the caller): an error.
                Ok((i, _)) => {
                    let q = state.input.columns[i].qualifier.clone().unwrap_or_default();
                    return Err(err!(
                        GroupingError,
                        "column \"{}{}\" must appear in the GROUP BY clause or be used in an aggregate function",
                        if q.is_empty() { String::new() } else { format!("{q}.") },
                        c.column
                    ));
                }
                Err(e) => Err(e),
            },
            Mode::NoAgg(_) => scope
                .resolve(c.table.as_deref(), &c.column)
                .map(|(i, ty)| Expr::column(i, ty)),
        };
        let local = match local {
            Err(e) if unresolved(&e) && !self.params.is_empty() => match self.param_ref(c) {
                Some(x) => Ok(x),
                None => Err(e),
            },
            r => r,
        };
        match local {
            Err(e) if unresolved(&e) && !self.outer.is_empty() => match self.outer_ref(c)? {
                Some(x) => Ok(x),
                None => Err(e),
            },
            r => r,
        }
    }

    /// `c` as a function body's variable (`rec.field` names a record's
    /// field): its slot at the body's level, passed down as a parameter
    /// of each sublink being planned.
    fn param_ref(&mut self, c: &ast::ColumnRef) -> Option<Expr> {
        let name = match &c.table {
            Some(t) => format!("{t}.{}", c.column),
            None => c.column.clone(),
        };
        let (_, slot, ty) = self.params.iter().find(|p| p.0 == name)?;
        let ty = *ty;
        let mut e = Expr {
            kind: ExprKind::Param(*slot),
            ty,
        };
        for level in self.outer.iter_mut().filter(|l| l.hidden.is_none()) {
            let key = format!("{e:?}");
            let p = match level.args.iter().position(|a| format!("{a:?}") == key) {
                Some(p) => p,
                None => {
                    level.args.push(e);
                    level.args.len() - 1
                }
            };
            e = Expr {
                kind: ExprKind::Param(p),
                ty,
            };
        }
        Some(e)
    }

    /// `e`, a value of the enclosing level `l`, passed down level by level
    /// as a parameter of each sublink to the innermost query.
    pub(super) fn pass_down(&mut self, l: usize, mut e: Expr, ty: DataType) -> Expr {
        for m in l..self.outer.len() {
            if self.outer[m].hidden.is_some() {
                continue;
            }
            let args = &mut self.outer[m].args;
            let key = format!("{e:?}");
            let p = match args.iter().position(|a| format!("{a:?}") == key) {
                Some(p) => p,
                None => {
                    args.push(e);
                    args.len() - 1
                }
            };
            e = Expr {
                kind: ExprKind::Param(p),
                ty,
            };
        }
        e
    }

    /// `c` resolved in an enclosing query, as a parameter of the innermost
    /// subquery (`None`: no enclosing query has it).
    fn outer_ref(&mut self, c: &ast::ColumnRef) -> Result<Option<Expr>> {
        for l in (0..self.outer.len()).rev() {
            let level = &self.outer[l];
            if level.hidden.is_some() {
                continue;
            }
            let (i, ty) = match level.scope.resolve(c.table.as_deref(), &c.column) {
                Ok(found) => found,
                // The table is there, the column not: PostgreSQL's error
                // names it so.
                Err(e)
                    if c.table
                        .as_deref()
                        .is_some_and(|q| level.scope.has_qualifier(q)) =>
                {
                    return Err(e)
                }
                Err(e) if unresolved(&e) => continue,
                Err(e) => return Err(e),
            };
            let e = match &level.group {
                None => Expr::column(i, ty),
                Some(group) => {
                    let key = group
                        .iter()
                        .position(|g| matches!(g.kind, ExprKind::Column(j) if j == i));
                    let Some(k) = key else {
                        let q = level.scope.columns[i].qualifier.clone();
                        return Err(err!(
                            GroupingError,
                            "subquery uses ungrouped column \"{}{}\" from outer query",
                            q.map(|q| format!("{q}.")).unwrap_or_default(),
                            c.column
                        ));
                    };
                    Expr::column(k, ty)
                }
            };
            return Ok(Some(self.pass_down(l, e, ty)));
        }
        for level in self.outer.iter().rev() {
            if let (Some(why), Ok((i, _))) = (
                level.hidden,
                level.scope.resolve(c.table.as_deref(), &c.column),
            ) {
                return Err(level.hidden_error(c, i, why));
            }
        }
        Ok(None)
    }

    /// Plans a sublink's query with the query around it (`scope`, `mode`)
    /// as its enclosing level; returns the plan and the outer values it
    /// reads (empty: uncorrelated).
    pub(super) fn plan_sublink(
        &mut self,
        q: &ast::Query,
        scope: &Scope,
        mode: &Mode,
    ) -> Result<(Plan, Vec<Expr>)> {
        let level = match mode {
            Mode::Agg(state) => OuterLevel {
                scope: state.input.clone(),
                group: Some(state.group.clone()),
                args: Vec::new(),
                hidden: None,
                aggs: Some(
                    state
                        .aggs
                        .iter()
                        .enumerate()
                        .map(|(k, (call, a))| (call.clone(), state.group.len() + k, a.ty))
                        .collect(),
                ),
                clause: None,
            },
            Mode::NoAgg(clause) => OuterLevel {
                scope: scope.clone(),
                group: None,
                args: Vec::new(),
                hidden: None,
                aggs: Some(Vec::new()),
                clause: Some(clause),
            },
        };
        self.outer.push(level);
        let planned = super::folded::nested(|| self.plan_subquery(q));
        let level = self.outer.pop();
        let plan = planned?;
        Ok((plan, level.map(|l| l.args).unwrap_or_default()))
    }

    /// Runs `f` with `scope` (the FROM items left of a lateral item) as
    /// the innermost enclosing level; returns its result and the values
    /// of `scope` it read, its parameters (empty: it read none).
    /// With `hidden`, the columns are out of reach instead, and reading one
    /// is the error `hidden` says.
    pub(super) fn with_outer_scope<T>(
        &mut self,
        scope: &Scope,
        hidden: Option<Hidden>,
        f: impl FnOnce(&mut Self) -> Result<T>,
    ) -> Result<(T, Vec<Expr>)> {
        self.outer.push(OuterLevel {
            scope: scope.clone(),
            group: None,
            args: Vec::new(),
            hidden,
            aggs: None,
            clause: None,
        });
        let r = f(self);
        let level = self.outer.pop();
        Ok((r?, level.map(|l| l.args).unwrap_or_default()))
    }

    /// A subplan node over `args`: correlated when the subquery has
    /// parameters (`params`), else an InitPlan run once when first
    /// evaluated ([`SubPlan::init`]).
    fn subplan(
        &mut self,
        kind: SubLinkKind,
        plan: Plan,
        cmp_ty: DataType,
        (args, params): (Vec<Expr>, usize),
        ty: DataType,
    ) -> Result<Expr> {
        let ctx = self.ctx.subplan_context(&plan)?;
        let mut sp = if params == 0 {
            SubPlan::init(kind, plan, cmp_ty, ctx)
        } else {
            SubPlan::new(kind, plan, cmp_ty, ctx)
        };
        if self.ctx.subqueries_per_call() {
            sp = sp.per_call();
        }
        sp.semi_join = std::mem::take(&mut self.semi_join_made);
        let sp = crate::nodes::expr::SubPlanRef(Arc::new(sp));
        super::folded::note_subplan(&sp);
        Ok(Expr {
            kind: ExprKind::SubPlan(sp, args),
            ty,
        })
    }

    /// An uncorrelated sublink's rows, run now (PostgreSQL's InitPlan,
    /// folded into a constant), or `None` when the statement must run it
    /// itself, once, when it first evaluates it: its plan calls a volatile
    /// function (whose calls then come in the statement's order, and which
    /// a plain EXPLAIN never makes), or running it failed (an error
    /// PostgreSQL raises only if the statement evaluates the sublink).
    /// Several rows are no result for a scalar or row sublink (their
    /// error is raised only when the statement evaluates it). EXPLAIN
    /// records what was folded ([`super::folded`]).
    fn run_now(&mut self, plan: &Plan, kind: FoldKind) -> Option<Vec<Vec<Value>>> {
        // In a VOLATILE function's body it reads anew at each call.
        if super::cost::plan_volatile(plan) || self.ctx.subqueries_per_call() {
            return None;
        }
        let one = matches!(kind, FoldKind::Scalar | FoldKind::Row(_));
        super::folded::fold(kind, plan, || {
            let rows = self.ctx.run_subquery(plan).ok();
            rows.filter(|r| !one || r.len() <= 1)
        })
    }

    /// `EXISTS (query)`.
    pub(super) fn bind_exists(
        &mut self,
        query: &ast::Query,
        scope: &Scope,
        mode: &mut Mode,
    ) -> Result<Expr> {
        // Only the statement's own WHERE is asked about, not sublinks
        // within this one.
        let mark = std::mem::take(&mut self.mark_semi_joins);
        let planned = self.plan_sublink(query, scope, mode);
        let semi_join = match &planned {
            Ok((_, args)) if mark && !args.is_empty() => {
                super::folded::unrecorded(|| self.exists_is_semi_join(query, scope, mode))
            }
            _ => false,
        };
        self.mark_semi_joins = mark;
        let (plan, args) = planned?;
        let plan = first_row(plan);
        if args.is_empty() {
            if let Some(rows) = self.run_now(&plan, FoldKind::Exists) {
                return Ok(Expr::constant(
                    Value::Bool(!rows.is_empty()),
                    DataType::Bool,
                ));
            }
        }
        let params = args.len();
        self.semi_join_made = semi_join;
        self.subplan(
            SubLinkKind::Exists,
            plan,
            DataType::Bool,
            (args, params),
            DataType::Bool,
        )
    }

    /// A scalar subquery `(query)`.
    pub(super) fn bind_scalar_subquery(
        &mut self,
        query: &ast::Query,
        scope: &Scope,
        mode: &mut Mode,
    ) -> Result<Expr> {
        let (plan, args) = self.plan_sublink(query, scope, mode)?;
        if plan.fields.len() != 1 {
            return Err(err!(SyntaxError, "subquery must return only one column"));
        }
        let ty = plan.fields[0].ty;
        let rows = match args.is_empty() {
            // Several rows are the 21000 error when the statement evaluates
            // the subquery, if it does.
            true => self.run_now(&plan, FoldKind::Scalar),
            false => None,
        };
        let Some(rows) = rows else {
            let params = args.len();
            return self.subplan(SubLinkKind::Scalar, plan, ty, (args, params), ty);
        };
        let v = rows
            .into_iter()
            .next()
            .map_or(Value::Null, |mut r| r.remove(0));
        Ok(Expr::constant(v, ty))
    }

    /// Column `k` of `SET (c1, ..., cm) = (query)`'s `m` columns. The
    /// subquery is bound when its first column is (`k` = 0) and the
    /// group's other columns share it: uncorrelated, it runs once now (an
    /// InitPlan); correlated, it is one subplan run once per row, whatever
    /// the number of columns (PostgreSQL's MULTIEXPR SubPlan).
    pub(crate) fn bind_multiexpr_subquery(
        &mut self,
        query: &ast::Query,
        (k, m): (usize, usize),
        scope: &Scope,
        mode: &mut Mode,
        offset: ast::Offset,
    ) -> Result<Expr> {
        if k == 0 {
            self.multiexpr = None;
            let columns = self.bind_multiexpr_columns(query, m, scope, mode, offset)?;
            self.multiexpr = Some((offset, columns));
        }
        match &self.multiexpr {
            Some((at, columns)) if at.0 == offset.0 && k < columns.len() => Ok(columns[k].clone()),
            _ => Err(err!(
                InternalError,
                "a multiple-column assignment's column bound before its first"
            )),
        }
    }

    /// The `m` columns of a multiple-column assignment's subquery `query`
    /// (see [`Binder::bind_multiexpr_subquery`]).
    fn bind_multiexpr_columns(
        &mut self,
        query: &ast::Query,
        m: usize,
        scope: &Scope,
        mode: &mut Mode,
        offset: ast::Offset,
    ) -> Result<Vec<Expr>> {
        let (plan, args) = self.plan_sublink(query, scope, mode)?;
        if plan.fields.len() != m {
            return Err(super::bind::at(
                err!(
                    SyntaxError,
                    "number of columns does not match number of values"
                ),
                offset,
            ));
        }
        let types: Vec<DataType> = plan.fields.iter().map(|f| f.ty).collect();
        let rows = match args.is_empty() {
            true => self.run_now(&plan, FoldKind::Row(m)),
            false => None,
        };
        if let Some(rows) = rows {
            let mut row = rows.into_iter().next();
            return Ok(types
                .into_iter()
                .enumerate()
                .map(|(k, ty)| {
                    let v = row
                        .as_mut()
                        .map_or(Value::Null, |r| std::mem::replace(&mut r[k], Value::Null));
                    Expr::constant(v, ty)
                })
                .collect());
        }
        let ctx = self.ctx.subplan_context(&plan)?;
        let mut sp = match args.is_empty() {
            true => SubPlan::init(SubLinkKind::Row(m), plan, DataType::Unknown, ctx),
            false => SubPlan::new(SubLinkKind::Row(m), plan, DataType::Unknown, ctx),
        };
        if self.ctx.subqueries_per_call() {
            sp = sp.per_call();
        }
        let sp = crate::nodes::expr::SubPlanRef(Arc::new(sp));
        super::folded::note_subplan(&sp);
        Ok(types
            .into_iter()
            .enumerate()
            .map(|(k, ty)| {
                let column = Expr::constant(Value::Int4(k as i32), DataType::Int4);
                let operands = std::iter::once(column)
                    .chain(args.iter().cloned())
                    .collect();
                Expr {
                    kind: ExprKind::SubPlan(sp.clone(), operands),
                    ty,
                }
            })
            .collect())
    }

    /// `x [NOT] IN (query)`: uncorrelated, a hashed set of the subquery's
    /// values; correlated, `[NOT] (x = ANY (query))`.
    pub(super) fn bind_in_subquery(
        &mut self,
        expr: &ast::Expr,
        query: &ast::Query,
        negated: bool,
        scope: &Scope,
        mode: &mut Mode,
    ) -> Result<Expr> {
        let x = self.bind_expr(expr, scope, mode)?;
        let (plan, args) = self.plan_sublink(query, scope, mode)?;
        if plan.fields.len() != 1 {
            return Err(err!(SyntaxError, "subquery has too many columns"));
        }
        let sub_ty = plan.fields[0].ty;
        let ty = types::cast::common_type(&x.ty, &sub_ty).ok_or_else(|| {
            err!(
                UndefinedFunction,
                "operator does not exist: {} = {}",
                x.ty,
                sub_ty
            )
        })?;
        let ty = match ty {
            DataType::Unknown | DataType::Varchar(_) => DataType::Text,
            ty => ty,
        };
        let x = self.coerce(x, &ty, CastContext::Implicit, expr.offset)?;
        let rows = match args.is_empty() {
            true => self.run_now(&plan, FoldKind::In),
            false => None,
        };
        let Some(rows) = rows else {
            let plan = cast_output(plan, ty);
            let params = args.len();
            let mut all_args = vec![x];
            all_args.extend(args);
            let any = self.subplan(
                SubLinkKind::Quantified(BinaryOp::Eq, false),
                plan,
                ty,
                (all_args, params),
                DataType::Bool,
            )?;
            return Ok(if negated {
                super::quals::negate(any)
            } else {
                any
            });
        };
        let mut values = crate::exec::vector::Vector::with_capacity(ty, rows.len());
        let mut has_null = false;
        for row in rows {
            let v = types::cast_from(&row[0], &sub_ty, &ty, CastContext::Implicit)?;
            if v.is_null() {
                has_null = true;
            } else {
                values.push(&v);
            }
        }
        let mut set = crate::exec::keyset::KeySet::new(&[ty]);
        for i in 0..values.len() {
            set.insert(&[&values], i);
        }
        let set = Arc::new(set);
        super::folded::note_set(&set);
        Ok(Expr {
            kind: ExprKind::InSet(Box::new(x), set, has_null, negated),
            ty: DataType::Bool,
        })
    }

    /// `x op ANY | SOME | ALL (query)`. `= ANY` is `IN` and `<> ALL` is
    /// `NOT IN`; the other forms compare `x` with each row in
    /// three-valued logic.
    pub(super) fn bind_quantified(
        &mut self,
        expr: &ast::Expr,
        op: ast::BinaryOp,
        all: bool,
        query: &ast::Query,
        scope: &Scope,
        mode: &mut Mode,
    ) -> Result<Expr> {
        let bop = match op {
            ast::BinaryOp::Eq => BinaryOp::Eq,
            ast::BinaryOp::NotEq => BinaryOp::NotEq,
            ast::BinaryOp::Lt => BinaryOp::Lt,
            ast::BinaryOp::LtEq => BinaryOp::LtEq,
            ast::BinaryOp::Gt => BinaryOp::Gt,
            ast::BinaryOp::GtEq => BinaryOp::GtEq,
            _ => {
                return Err(err!(
                    FeatureNotSupported,
                    "operator {op} ANY/ALL (subquery) is not supported"
                ))
            }
        };
        match (bop, all) {
            (BinaryOp::Eq, false) => return self.bind_in_subquery(expr, query, false, scope, mode),
            (BinaryOp::NotEq, true) => {
                return self.bind_in_subquery(expr, query, true, scope, mode)
            }
            _ => {}
        }
        let x = self.bind_expr(expr, scope, mode)?;
        let (plan, args) = self.plan_sublink(query, scope, mode)?;
        if plan.fields.len() != 1 {
            return Err(err!(SyntaxError, "subquery has too many columns"));
        }
        let sub_ty = plan.fields[0].ty;
        let (lt, rt, _) = types::resolve_binary(bop, &x.ty, &sub_ty)
            .ok_or_else(|| types::ops::operator_error(bop, &x.ty, &sub_ty))?;
        let x = self.coerce(x, &lt, CastContext::Implicit, expr.offset)?;
        let plan = cast_output(plan, rt);
        let params = args.len();
        let mut all_args = vec![x];
        all_args.extend(args);
        self.subplan(
            SubLinkKind::Quantified(bop, all),
            plan,
            lt,
            (all_args, params),
            DataType::Bool,
        )
    }
}
