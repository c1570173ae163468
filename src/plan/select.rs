//! Planning queries: SELECT, VALUES, set operations, FROM items and joins,
//! grouping, ORDER BY, LIMIT.
//!
//! A SELECT is built bottom-up the way PostgreSQL evaluates it: FROM items
//! (scans, subqueries, functions) joined left to right — WHERE conjuncts
//! that mention one item are pushed into its scan, equalities between the
//! joined items become hash-join keys, the rest filter the join — then
//! grouping and aggregates, HAVING, the select list (plus hidden columns for
//! ORDER BY expressions not in it), DISTINCT, ORDER BY, and LIMIT/OFFSET.
//!
//! Scans deform only the columns the query mentions: before planning the
//! FROM list, every column reference of the SELECT is collected by name, so
//! `count(*)` reads no attribute at all.

use std::collections::HashSet;

use heapdb_grammar::ast;

use super::bind::{at, contains_aggregate, walk, AggState, Binder, Mode};
use super::scope::{Scope, ScopeColumn};
use super::{Field, JoinKind, Node, Plan, SortKey, TableFunc};
use crate::err;
use crate::error::Result;
use crate::exec::expr::{Expr, ExprKind};
use crate::types::cast::CastContext;
use crate::types::{BinaryOp, DataType, Value};

use super::estimate::{self, EQ_SEL};

/// The columns a query mentions, by name.
#[derive(Default)]
struct Needed {
    /// `[qualifier.]name` references.
    refs: HashSet<(Option<String>, String)>,
    /// `*` appears.
    star: bool,
    /// `q.*` appears, for these qualifiers.
    qualified_stars: HashSet<String>,
}

impl Needed {
    fn add_expr(&mut self, e: &ast::Expr) {
        walk(e, &mut |x| {
            if let ast::ExprKind::Column(c) = &x.kind {
                self.refs.insert((c.table.clone(), c.column.clone()));
            }
        });
    }

    fn wants(&self, qualifier: &str, column: &str) -> bool {
        self.star
            || self.qualified_stars.contains(qualifier)
            || self.refs.contains(&(None, column.to_string()))
            || self
                .refs
                .contains(&(Some(qualifier.to_string()), column.to_string()))
    }
}

/// The name PostgreSQL gives a select-list column without an alias.
pub fn output_name(e: &ast::Expr) -> String {
    use ast::ExprKind as K;
    match &e.kind {
        K::Column(c) => c.column.clone(),
        K::Function(f) => f.name.name.clone(),
        K::Cast { expr, data_type } => match &expr.kind {
            K::Literal(_) => type_name(data_type),
            _ => {
                let inner = output_name(expr);
                if inner == "?column?" {
                    type_name(data_type)
                } else {
                    inner
                }
            }
        },
        K::TypedString { data_type, .. } => type_name(data_type),
        K::Case { .. } => "case".into(),
        K::Exists(_) => "exists".into(),
        K::CurrentValue(v) => match v {
            ast::CurrentValue::CurrentDate => "current_date",
            ast::CurrentValue::CurrentTime => "current_time",
            ast::CurrentValue::CurrentTimestamp => "current_timestamp",
            ast::CurrentValue::LocalTime => "localtime",
            ast::CurrentValue::LocalTimestamp => "localtimestamp",
            ast::CurrentValue::CurrentUser => "current_user",
            ast::CurrentValue::SessionUser => "session_user",
        }
        .into(),
        K::Subquery(q) => match &q.body {
            ast::SetExpr::Select(s) => match s.projection.first() {
                Some(ast::SelectItem::Expr { alias: Some(a), .. }) => a.clone(),
                Some(ast::SelectItem::Expr { expr, .. }) => output_name(expr),
                _ => "?column?".into(),
            },
            _ => "?column?".into(),
        },
        _ => "?column?".into(),
    }
}

fn type_name(t: &ast::DataType) -> String {
    use ast::DataType as A;
    match t {
        A::SmallInt => "int2",
        A::Integer => "int4",
        A::BigInt => "int8",
        A::Real => "float4",
        A::Double => "float8",
        A::Numeric { .. } => "numeric",
        A::Boolean => "bool",
        A::Text => "text",
        A::Varchar(_) => "varchar",
        A::Char(_) => "bpchar",
        A::Date => "date",
        A::Timestamp => "timestamp",
        A::TimestampTz => "timestamptz",
        A::Interval => "interval",
        A::Named(n) => n.as_str(),
    }
    .to_string()
}

/// Splits `a AND b AND c` into its conjuncts.
fn conjuncts(e: &ast::Expr, out: &mut Vec<ast::Expr>) {
    if let ast::ExprKind::Binary {
        op: ast::BinaryOp::And,
        left,
        right,
    } = &e.kind
    {
        conjuncts(left, out);
        conjuncts(right, out);
    } else {
        out.push(e.clone());
    }
}

/// Column positions a bound expression reads.
pub fn columns_used(e: &Expr, out: &mut Vec<usize>) {
    if let ExprKind::Column(i) = &e.kind {
        out.push(*i);
    }
    for c in e.children() {
        columns_used(c, out);
    }
}

/// Rewrites column positions of a bound expression with `f`.
pub fn remap_columns(e: &mut Expr, f: &dyn Fn(usize) -> usize) {
    if let ExprKind::Column(i) = &mut e.kind {
        *i = f(*i);
    }
    for c in e.children_mut() {
        remap_columns(c, f);
    }
}

/// The selectivity of `predicate` over the rows of `input` (statistics
/// where the columns have them, see [`estimate`]).
fn selectivity(input: &Plan, predicate: &Expr) -> f64 {
    estimate::selectivity(predicate, &estimate::column_origins(input))
}

/// A FROM item while joining: its plan and scope.
struct Item {
    plan: Plan,
    scope: Scope,
}

fn project(input: Plan, exprs: Vec<Expr>, names: Vec<String>) -> Plan {
    let fields = exprs
        .iter()
        .zip(names)
        .map(|(e, name)| Field { name, ty: e.ty })
        .collect();
    Plan {
        rows: input.rows,
        fields,
        node: Node::Project {
            input: Box::new(input),
            exprs,
        },
    }
}

fn filter(input: Plan, predicate: Expr) -> Plan {
    Plan {
        rows: (input.rows * selectivity(&input, &predicate)).max(1.0),
        fields: input.fields.clone(),
        node: Node::Filter {
            input: Box::new(input),
            predicate,
        },
    }
}

impl Binder<'_> {
    /// Plans a subquery (in FROM or in an expression).
    pub fn plan_subquery(&mut self, q: &ast::Query) -> Result<Plan> {
        self.plan_query(q)
    }

    /// Plans a whole query: WITH, the body, ORDER BY, LIMIT/OFFSET.
    pub fn plan_query(&mut self, q: &ast::Query) -> Result<Plan> {
        let saved = self.ctes.len();
        for cte in &q.with {
            self.ctes
                .push((cte.name.clone(), cte.columns.clone(), (*cte.query).clone()));
        }
        let result = self.plan_query_body(q);
        self.ctes.truncate(saved);
        result
    }

    fn plan_query_body(&mut self, q: &ast::Query) -> Result<Plan> {
        let mut plan = match &q.body {
            ast::SetExpr::Select(s) => self.plan_select(s, &q.order_by)?,
            body => {
                let plan = self.plan_set_expr(body)?;
                self.sort_by_output(plan, &q.order_by)?
            }
        };
        let limit = self.limit_value(q.limit.as_ref(), "LIMIT")?;
        let offset = self.limit_value(q.offset.as_ref(), "OFFSET")?.unwrap_or(0);
        if limit.is_some() || offset > 0 {
            let rows = (plan.rows - offset as f64).max(0.0);
            plan = Plan {
                rows: limit.map_or(rows, |l| rows.min(l as f64)),
                fields: plan.fields.clone(),
                node: Node::Limit {
                    input: Box::new(plan),
                    limit,
                    offset,
                },
            };
        }
        Ok(plan)
    }

    fn limit_value(&mut self, e: Option<&ast::Expr>, what: &'static str) -> Result<Option<u64>> {
        let Some(e) = e else { return Ok(None) };
        let b = self.bind_expr(e, &Scope::default(), &mut Mode::NoAgg(what))?;
        let b = self.coerce(b, &DataType::Int8, CastContext::Implicit, e.offset)?;
        let v = crate::exec::eval_const(&b)?;
        match v {
            Value::Null => Ok(None),
            Value::Int8(n) if n < 0 => Err(if what == "LIMIT" {
                err!(InvalidRowCountInLimitClause, "LIMIT must not be negative")
            } else {
                err!(
                    InvalidRowCountInResultOffsetClause,
                    "OFFSET must not be negative"
                )
            }),
            Value::Int8(n) => Ok(Some(n as u64)),
            _ => Err(err!(
                DatatypeMismatch,
                "argument of {what} must be type bigint"
            )),
        }
    }

    /// ORDER BY over a plan's output columns only (VALUES, set operations):
    /// positions or output column names.
    fn sort_by_output(&mut self, plan: Plan, order_by: &[ast::OrderBy]) -> Result<Plan> {
        if order_by.is_empty() {
            return Ok(plan);
        }
        let mut keys = Vec::new();
        for o in order_by {
            let column =
                match &o.expr.kind {
                    ast::ExprKind::Literal(ast::Literal::Number(n)) => {
                        let pos: usize = n.parse().unwrap_or(0);
                        if pos == 0 || pos > plan.fields.len() {
                            return Err(at(
                                err!(
                                    InvalidColumnReference,
                                    "ORDER BY position {n} is not in select list"
                                ),
                                o.expr.offset,
                            ));
                        }
                        pos - 1
                    }
                    ast::ExprKind::Column(c) if c.table.is_none() => plan
                        .fields
                        .iter()
                        .position(|f| f.name == c.column)
                        .ok_or_else(|| {
                            at(
                                err!(UndefinedColumn, "column \"{}\" does not exist", c.column),
                                o.expr.offset,
                            )
                        })?,
                    _ => return Err(at(
                        err!(
                            FeatureNotSupported,
                            "invalid UNION/INTERSECT/EXCEPT ORDER BY clause"
                        )
                        .with_detail(
                            "Only result column names can be used, not expressions or functions.",
                        ),
                        o.expr.offset,
                    )),
                };
            keys.push(sort_key(column, o));
        }
        Ok(Plan {
            rows: plan.rows,
            fields: plan.fields.clone(),
            node: Node::Sort {
                input: Box::new(plan),
                keys,
            },
        })
    }

    fn plan_set_expr(&mut self, body: &ast::SetExpr) -> Result<Plan> {
        match body {
            ast::SetExpr::Select(s) => self.plan_select(s, &[]),
            ast::SetExpr::Nested(q) => self.plan_query(q),
            ast::SetExpr::Values(rows) => self.plan_values(rows, None, &[]),
            ast::SetExpr::SetOp {
                op,
                all,
                left,
                right,
            } => {
                self.keep_unknown = true;
                let l = self.plan_set_expr(left)?;
                self.keep_unknown = true;
                let r = self.plan_set_expr(right)?;
                self.keep_unknown = false;
                let name = match op {
                    ast::SetOperator::Union => "UNION",
                    ast::SetOperator::Intersect => "INTERSECT",
                    ast::SetOperator::Except => "EXCEPT",
                };
                if l.fields.len() != r.fields.len() {
                    return Err(err!(
                        SyntaxError,
                        "each {name} query must have the same number of columns"
                    ));
                }
                let mut types = Vec::new();
                for (a, b) in l.fields.iter().zip(&r.fields) {
                    let off = ast::Offset(0);
                    types.push(self.unify(name, &[(a.ty, off), (b.ty, off)])?);
                }
                let l = self.cast_outputs(l, &types)?;
                let r = self.cast_outputs(r, &types)?;
                let fields = l.fields.clone();
                let rows = l.rows + r.rows;
                Ok(match op {
                    ast::SetOperator::Union => {
                        let append = Plan {
                            rows,
                            fields: fields.clone(),
                            node: Node::Append { inputs: vec![l, r] },
                        };
                        if *all {
                            append
                        } else {
                            Plan {
                                rows,
                                fields,
                                node: Node::Distinct {
                                    input: Box::new(append),
                                },
                            }
                        }
                    }
                    _ => Plan {
                        rows: l.rows,
                        fields,
                        node: Node::SetOp {
                            left: Box::new(l),
                            right: Box::new(r),
                            intersect: *op == ast::SetOperator::Intersect,
                            all: *all,
                        },
                    },
                })
            }
        }
    }

    /// Casts a plan's output columns to `types` (set operations).
    pub fn cast_outputs(&mut self, plan: Plan, types: &[DataType]) -> Result<Plan> {
        self.cast_outputs_in(plan, types, CastContext::Implicit)
    }

    /// Casts a plan's output columns to `types` in context `ctx`.
    pub fn cast_outputs_in(
        &mut self,
        plan: Plan,
        types: &[DataType],
        ctx: CastContext,
    ) -> Result<Plan> {
        if plan.fields.iter().zip(types).all(|(f, t)| f.ty == *t) {
            return Ok(plan);
        }
        let names: Vec<String> = plan.fields.iter().map(|f| f.name.clone()).collect();
        let exprs = plan
            .fields
            .iter()
            .enumerate()
            .zip(types)
            .map(|((i, f), t)| self.coerce(Expr::column(i, f.ty), t, ctx, ast::Offset(0)))
            .collect::<Result<Vec<_>>>()?;
        Ok(project(plan, exprs, names))
    }

    /// Plans `VALUES (...), (...)`; with `target_types`, each column is
    /// coerced to that type in assignment context (INSERT), else to the
    /// rows' common type.
    pub fn plan_values(
        &mut self,
        rows: &[Vec<ast::Expr>],
        target_types: Option<&[DataType]>,
        target_names: &[String],
    ) -> Result<Plan> {
        let width = rows.first().map_or(0, Vec::len);
        let mut bound: Vec<Vec<(Expr, ast::Offset)>> = Vec::with_capacity(rows.len());
        for row in rows {
            if row.len() != width {
                return Err(at(
                    err!(SyntaxError, "VALUES lists must all be the same length"),
                    row.first().map_or(ast::Offset(0), |e| e.offset),
                ));
            }
            let mut out = Vec::with_capacity(width);
            for e in row {
                let b = self.bind_expr(e, &Scope::default(), &mut Mode::NoAgg("VALUES"))?;
                out.push((b, e.offset));
            }
            bound.push(out);
        }
        let mut types = Vec::with_capacity(width);
        for c in 0..width {
            let t = match target_types {
                Some(t) => {
                    for row in &bound {
                        let from = row[c].0.ty;
                        if from != DataType::Unknown
                            && crate::types::cast::cast_kind(&from, &t[c])
                                .map_or(true, |k| k > CastContext::Assignment)
                        {
                            return Err(at(
                                err!(
                                    DatatypeMismatch,
                                    "column \"{}\" is of type {} but expression is of type {from}",
                                    target_names.get(c).map_or("?", |n| n.as_str()),
                                    t[c]
                                )
                                .with_hint("You will need to rewrite or cast the expression."),
                                row[c].1,
                            ));
                        }
                    }
                    t[c]
                }
                None => {
                    let all: Vec<(DataType, ast::Offset)> =
                        bound.iter().map(|row| (row[c].0.ty, row[c].1)).collect();
                    self.unify("VALUES", &all)?
                }
            };
            types.push(t);
        }
        let ctx = if target_types.is_some() {
            CastContext::Assignment
        } else {
            CastContext::Implicit
        };
        let mut out_rows = Vec::with_capacity(bound.len());
        for row in bound {
            let mut out = Vec::with_capacity(width);
            for (c, (e, off)) in row.into_iter().enumerate() {
                out.push(self.coerce(e, &types[c], ctx, off)?);
            }
            out_rows.push(out);
        }
        let fields = types
            .iter()
            .enumerate()
            .map(|(i, t)| Field {
                name: format!("column{}", i + 1),
                ty: *t,
            })
            .collect();
        Ok(Plan {
            rows: out_rows.len() as f64,
            fields,
            node: Node::Values { rows: out_rows },
        })
    }

    fn plan_select(&mut self, s: &ast::Select, order_by: &[ast::OrderBy]) -> Result<Plan> {
        if let Some(rewritten) = srf_to_from(s)? {
            return self.plan_select(&rewritten, order_by);
        }
        let keep_unknown = std::mem::take(&mut self.keep_unknown);
        // Which columns the scans must produce.
        let mut needed = Needed::default();
        for item in &s.projection {
            match item {
                ast::SelectItem::Expr { expr, .. } => needed.add_expr(expr),
                ast::SelectItem::Wildcard(_) => needed.star = true,
                ast::SelectItem::QualifiedWildcard(n) => {
                    needed.qualified_stars.insert(n.name.clone());
                }
            }
        }
        for e in s.where_clause.iter().chain(&s.group_by).chain(&s.having) {
            needed.add_expr(e);
        }
        for o in order_by {
            needed.add_expr(&o.expr);
        }
        let (input, scope) = self.plan_from(&s.from, s.where_clause.as_ref(), &mut needed)?;

        // The select list, with wildcards expanded.
        enum Out<'a> {
            Ast(&'a ast::Expr, String),
            Column(usize, String),
        }
        let mut outs: Vec<Out> = Vec::new();
        for item in &s.projection {
            match item {
                ast::SelectItem::Expr { expr, alias } => {
                    let name = alias.clone().unwrap_or_else(|| output_name(expr));
                    outs.push(Out::Ast(expr, name));
                }
                ast::SelectItem::Wildcard(off) => {
                    if s.from.is_empty() {
                        return Err(at(
                            err!(
                                SyntaxError,
                                "SELECT * with no tables specified is not valid"
                            ),
                            *off,
                        ));
                    }
                    for i in scope.wildcard(None)? {
                        outs.push(Out::Column(i, scope.columns[i].name.clone()));
                    }
                }
                ast::SelectItem::QualifiedWildcard(n) => {
                    for i in scope.wildcard(Some(&n.name)).map_err(|e| at(e, n.offset))? {
                        outs.push(Out::Column(i, scope.columns[i].name.clone()));
                    }
                }
            }
        }

        let aggregating = !s.group_by.is_empty()
            || s.having.is_some()
            || s.projection.iter().any(
                |i| matches!(i, ast::SelectItem::Expr { expr, .. } if contains_aggregate(expr)),
            )
            || order_by.iter().any(|o| contains_aggregate(&o.expr));

        let mut state = AggState {
            input: scope.clone(),
            ..AggState::default()
        };
        let mut plan = input;
        if aggregating {
            // GROUP BY items: positions and output names refer to the list.
            for g in &s.group_by {
                let resolved: ast::Expr = match &g.kind {
                    ast::ExprKind::Literal(ast::Literal::Number(n)) => {
                        let pos: usize = n.parse().unwrap_or(0);
                        match outs.get(pos.wrapping_sub(1)) {
                            Some(Out::Ast(e, _)) => (*e).clone(),
                            Some(Out::Column(i, _)) => column_ast(&scope, *i),
                            None => {
                                return Err(at(
                                    err!(
                                        InvalidColumnReference,
                                        "GROUP BY position {n} is not in select list"
                                    ),
                                    g.offset,
                                ))
                            }
                        }
                    }
                    ast::ExprKind::Column(c)
                        if c.table.is_none() && scope.resolve(None, &c.column).is_err() =>
                    {
                        match outs
                            .iter()
                            .find(|o| matches!(o, Out::Ast(_, n) if *n == c.column))
                        {
                            Some(Out::Ast(e, _)) => (*e).clone(),
                            _ => g.clone(),
                        }
                    }
                    _ => g.clone(),
                };
                let b = self.bind_expr(&resolved, &scope, &mut Mode::NoAgg("GROUP BY"))?;
                let b = self.resolve_unknown(b)?;
                state.group_ast.push(resolved);
                state.group.push(b);
            }
        }

        // Bind the select list (and later ORDER BY) above the aggregate.
        let mut exprs = Vec::with_capacity(outs.len());
        let mut names = Vec::with_capacity(outs.len());
        {
            let mut mode = if aggregating {
                Mode::Agg(&mut state)
            } else {
                Mode::NoAgg("WHERE")
            };
            for o in &outs {
                let (e, name) = match o {
                    Out::Ast(e, name) => {
                        let b = if aggregating {
                            self.bind_expr(e, &scope, &mut mode)?
                        } else {
                            self.bind_expr(e, &scope, &mut Mode::NoAgg("WHERE"))?
                        };
                        let b = if keep_unknown {
                            b
                        } else {
                            self.resolve_unknown(b)?
                        };
                        (b, name.clone())
                    }
                    Out::Column(i, name) => {
                        if aggregating {
                            let ast = column_ast(&scope, *i);
                            (self.bind_expr(&ast, &scope, &mut mode)?, name.clone())
                        } else {
                            (Expr::column(*i, scope.columns[*i].ty), name.clone())
                        }
                    }
                };
                exprs.push(e);
                names.push(name);
            }
        }
        let visible = exprs.len();

        // ORDER BY keys: output positions, output names, or expressions
        // (bound like the select list; added as hidden columns).
        let mut keys = Vec::new();
        for o in order_by {
            let by_output = match &o.expr.kind {
                ast::ExprKind::Literal(ast::Literal::Number(n)) => {
                    let pos: usize = n.parse().unwrap_or(0);
                    if pos == 0 || pos > visible {
                        return Err(at(
                            err!(
                                InvalidColumnReference,
                                "ORDER BY position {n} is not in select list"
                            ),
                            o.expr.offset,
                        ));
                    }
                    Some(pos - 1)
                }
                ast::ExprKind::Column(c) if c.table.is_none() => {
                    let matches: Vec<usize> = names[..visible]
                        .iter()
                        .enumerate()
                        .filter(|(_, n)| **n == c.column)
                        .map(|(i, _)| i)
                        .collect();
                    match matches.len() {
                        0 => None,
                        1 => Some(matches[0]),
                        _ => {
                            // Several output columns of that name: fine if
                            // they are the same expression.
                            let first = matches[0];
                            if matches.iter().all(|&m| {
                                format!("{:?}", exprs[m]) == format!("{:?}", exprs[first])
                            }) {
                                Some(first)
                            } else {
                                return Err(at(
                                    err!(AmbiguousColumn, "ORDER BY \"{}\" is ambiguous", c.column),
                                    o.expr.offset,
                                ));
                            }
                        }
                    }
                }
                _ => None,
            };
            let column = match by_output {
                Some(i) => i,
                None => {
                    let b = if aggregating {
                        self.bind_expr(&o.expr, &scope, &mut Mode::Agg(&mut state))?
                    } else {
                        self.bind_expr(&o.expr, &scope, &mut Mode::NoAgg("WHERE"))?
                    };
                    let b = self.resolve_unknown(b)?;
                    let same = format!("{b:?}");
                    match exprs.iter().position(|e| format!("{e:?}") == same) {
                        Some(i) => i,
                        None => {
                            if s.distinct {
                                return Err(at(
                                    err!(
                                        InvalidColumnReference,
                                        "for SELECT DISTINCT, ORDER BY expressions must appear in select list"
                                    ),
                                    o.expr.offset,
                                ));
                            }
                            exprs.push(b);
                            names.push("?order?".into());
                            exprs.len() - 1
                        }
                    }
                }
            };
            keys.push(sort_key(column, o));
        }

        if aggregating {
            let having = match &s.having {
                Some(h) => {
                    Some(self.bind_condition(h, &scope, &mut Mode::Agg(&mut state), "HAVING")?)
                }
                None => None,
            };
            let ngroups = if state.group.is_empty() {
                1.0
            } else {
                (plan.rows / 10.0).clamp(1.0, 200.0)
            };
            let mut fields: Vec<Field> = state
                .group
                .iter()
                .map(|g| Field {
                    name: "?group?".into(),
                    ty: g.ty,
                })
                .collect();
            fields.extend(state.aggs.iter().map(|(c, a)| Field {
                name: c.name.name.clone(),
                ty: a.ty,
            }));
            plan = Plan {
                rows: ngroups,
                fields,
                node: Node::Aggregate {
                    input: Box::new(plan),
                    group: std::mem::take(&mut state.group),
                    aggs: state.aggs.drain(..).map(|(_, a)| a).collect(),
                },
            };
            if let Some(h) = having {
                plan = filter(plan, h);
            }
        }

        plan = project(plan, exprs, names);
        if s.distinct {
            plan = Plan {
                rows: plan.rows,
                fields: plan.fields.clone(),
                node: Node::Distinct {
                    input: Box::new(plan),
                },
            };
        }
        if !keys.is_empty() {
            plan = Plan {
                rows: plan.rows,
                fields: plan.fields.clone(),
                node: Node::Sort {
                    input: Box::new(plan),
                    keys,
                },
            };
        }
        if plan.fields.len() > visible {
            let exprs = plan.fields[..visible]
                .iter()
                .enumerate()
                .map(|(i, f)| Expr::column(i, f.ty))
                .collect();
            let names = plan.fields[..visible]
                .iter()
                .map(|f| f.name.clone())
                .collect();
            plan = project(plan, exprs, names);
        }
        Ok(plan)
    }

    /// Plans the FROM list joined left to right, with WHERE's conjuncts
    /// pushed down as far as they go. Returns the plan and its scope.
    fn plan_from(
        &mut self,
        from: &[ast::TableRef],
        where_clause: Option<&ast::Expr>,
        needed: &mut Needed,
    ) -> Result<(Plan, Scope)> {
        for t in from {
            collect_join_conditions(t, needed);
        }
        let mut items = Vec::with_capacity(from.len());
        for t in from {
            items.push(self.plan_table_ref(t, needed)?);
        }
        if items.is_empty() {
            items.push(Item {
                plan: Plan {
                    rows: 1.0,
                    fields: vec![],
                    node: Node::Values { rows: vec![vec![]] },
                },
                scope: Scope::default(),
            });
        }
        self.join_items(items, where_clause)
    }

    /// The rows UPDATE and DELETE change: the target table (every column,
    /// then its tuple id as a hidden `ctid` column), joined with the FROM /
    /// USING items and filtered by WHERE.
    pub fn plan_modify_source(
        &mut self,
        table: std::sync::Arc<crate::catalog::TableDef>,
        alias: &str,
        from: &[ast::TableRef],
        where_clause: Option<&ast::Expr>,
    ) -> Result<(Plan, Scope)> {
        let all: Vec<usize> = (0..table.columns.len()).collect();
        let mut scope = Scope::of(alias, table.columns.iter().map(|c| (c.name.clone(), c.ty)));
        scope.columns.push(ScopeColumn {
            qualifier: Some(alias.to_string()),
            name: "ctid".into(),
            ty: DataType::Int8,
            hidden: true,
        });
        let plan = self.scan_plan(table, alias, all, true);
        let mut items = vec![Item { plan, scope }];
        let mut needed = Needed {
            star: true,
            ..Needed::default()
        };
        for t in from {
            collect_join_conditions(t, &mut needed);
            items.push(self.plan_table_ref(t, &needed)?);
        }
        self.join_items(items, where_clause)
    }

    fn join_items(
        &mut self,
        mut items: Vec<Item>,
        where_clause: Option<&ast::Expr>,
    ) -> Result<(Plan, Scope)> {
        let mut conds = Vec::new();
        if let Some(w) = where_clause {
            if contains_aggregate(w) {
                return Err(at(
                    err!(
                        GroupingError,
                        "aggregate functions are not allowed in WHERE"
                    ),
                    w.offset,
                ));
            }
            conjuncts(w, &mut conds);
        }
        // The whole scope, to resolve each conjunct's items (and report
        // unknown columns as PostgreSQL does, before anything runs).
        let full = items
            .iter()
            .try_fold(Scope::default(), |acc, it| acc.join(&it.scope))?;
        let bounds: Vec<usize> = items
            .iter()
            .scan(0, |acc, it| {
                *acc += it.scope.len();
                Some(*acc)
            })
            .collect();
        let item_of = |col: usize| {
            bounds
                .iter()
                .position(|&b| col < b)
                .expect("column in scope")
        };
        let mut pending: Vec<(Expr, Vec<usize>)> = Vec::new();
        for c in &conds {
            let b = self.bind_condition(c, &full, &mut Mode::NoAgg("WHERE"), "WHERE")?;
            let mut cols = Vec::new();
            columns_used(&b, &mut cols);
            let mut its: Vec<usize> = cols.iter().map(|&c| item_of(c)).collect();
            its.sort_unstable();
            its.dedup();
            pending.push((b, its));
        }
        // Push single-item conditions into their item.
        let starts: Vec<usize> = std::iter::once(0).chain(bounds.iter().copied()).collect();
        let mut rest = Vec::new();
        for (b, its) in pending {
            if its.len() == 1 {
                let k = its[0];
                let mut e = b;
                let start = starts[k];
                remap_columns(&mut e, &|c| c - start);
                let item = &mut items[k];
                item.plan = push_filter(std::mem::replace(&mut item.plan, dummy()), e);
            } else {
                rest.push((b, its));
            }
        }
        // Join left to right.
        let mut iter = items.into_iter().enumerate();
        let (_, first) = iter.next().expect("at least one item");
        let mut acc = first;
        let mut joined: Vec<usize> = vec![0];
        for (k, item) in iter {
            let left_len = acc.scope.len();
            let start_k = starts[k];
            // Conditions now applicable: every item they use is joined.
            let mut now = Vec::new();
            let mut later = Vec::new();
            for (b, its) in rest {
                if its.iter().all(|i| joined.contains(i) || *i == k) {
                    now.push(b);
                } else {
                    later.push((b, its));
                }
            }
            rest = later;
            // Map full-scope positions to acc ++ item positions.
            let map_full = |c: usize| -> usize {
                let it = item_of(c);
                if it == k {
                    left_len + (c - start_k)
                } else {
                    // Items joined so far are in FROM order, contiguous.
                    c
                }
            };
            let mut conds_now = Vec::new();
            for mut b in now {
                remap_columns(&mut b, &map_full);
                conds_now.push(b);
            }
            acc = self.join(acc, item, JoinKind::Inner, conds_now)?;
            joined.push(k);
        }
        // What is left reads no FROM item (`WHERE 1 = 1`): filter the result.
        for (b, _) in rest {
            acc.plan = filter(acc.plan, b);
        }
        Ok((acc.plan, acc.scope))
    }

    /// Joins two items on `conds` (over left ++ right columns): equalities
    /// between the sides become hash keys, the rest a residual condition.
    fn join(&mut self, left: Item, right: Item, kind: JoinKind, conds: Vec<Expr>) -> Result<Item> {
        let left_len = left.scope.len();
        let mut lkeys = Vec::new();
        let mut rkeys = Vec::new();
        let mut residual: Vec<Expr> = Vec::new();
        for c in conds {
            if let ExprKind::Binary(BinaryOp::Eq, a, b) = &c.kind {
                let side = |e: &Expr| {
                    let mut cols = Vec::new();
                    columns_used(e, &mut cols);
                    if cols.is_empty() {
                        None
                    } else if cols.iter().all(|&c| c < left_len) {
                        Some(true)
                    } else if cols.iter().all(|&c| c >= left_len) {
                        Some(false)
                    } else {
                        None
                    }
                };
                let pair = match (side(a), side(b)) {
                    (Some(true), Some(false)) => Some(((**a).clone(), (**b).clone())),
                    (Some(false), Some(true)) => Some(((**b).clone(), (**a).clone())),
                    _ => None,
                };
                if let Some((l, mut r)) = pair {
                    remap_columns(&mut r, &|c| c - left_len);
                    lkeys.push(l);
                    rkeys.push(r);
                    continue;
                }
            }
            residual.push(c);
        }
        let residual = residual.into_iter().reduce(|a, b| Expr {
            kind: ExprKind::And(Box::new(a), Box::new(b)),
            ty: DataType::Bool,
        });
        let scope = left.scope.join(&right.scope)?;
        let mut fields = left.plan.fields.clone();
        fields.extend(right.plan.fields.iter().cloned());
        let use_hash = !lkeys.is_empty() && self.ctx.settings().enable_hashjoin;
        let plan = if use_hash {
            let key_sel = estimate::join_selectivity(
                &lkeys,
                &rkeys,
                &estimate::column_origins(&left.plan),
                &estimate::column_origins(&right.plan),
            );
            let rows = match (kind, key_sel) {
                (JoinKind::Inner, Some(sel)) => (left.plan.rows * right.plan.rows * sel).max(1.0),
                (JoinKind::Inner, None) => (left.plan.rows * right.plan.rows * EQ_SEL)
                    .max(left.plan.rows.min(right.plan.rows)),
                _ => left.plan.rows.max(right.plan.rows),
            };
            // Build on the smaller input, unless the kind needs a side.
            let build_left = match kind {
                JoinKind::Inner => left.plan.rows < right.plan.rows,
                JoinKind::Left => false,
                JoinKind::Right => true,
                JoinKind::Full => false,
            };
            Plan {
                rows,
                fields,
                node: Node::HashJoin {
                    left: Box::new(left.plan),
                    right: Box::new(right.plan),
                    kind,
                    left_keys: lkeys,
                    right_keys: rkeys,
                    residual,
                    build_left,
                },
            }
        } else {
            if matches!(kind, JoinKind::Right | JoinKind::Full) {
                return Err(err!(
                    FeatureNotSupported,
                    "FULL JOIN is only supported with merge-joinable or hash-joinable join conditions"
                ));
            }
            let mut cond = residual;
            for (l, mut r) in lkeys.into_iter().zip(rkeys) {
                remap_columns(&mut r, &|c| c + left_len);
                let eq = Expr {
                    kind: ExprKind::Binary(BinaryOp::Eq, Box::new(l), Box::new(r)),
                    ty: DataType::Bool,
                };
                cond = Some(match cond {
                    Some(c) => Expr {
                        kind: ExprKind::And(Box::new(c), Box::new(eq)),
                        ty: DataType::Bool,
                    },
                    None => eq,
                });
            }
            let mut origins = estimate::column_origins(&left.plan);
            origins.extend(estimate::column_origins(&right.plan));
            let rows = left.plan.rows
                * right.plan.rows
                * cond
                    .as_ref()
                    .map_or(1.0, |c| estimate::selectivity(c, &origins));
            Plan {
                rows: rows.max(1.0),
                fields,
                node: Node::NestedLoop {
                    left: Box::new(left.plan),
                    right: Box::new(right.plan),
                    kind,
                    condition: cond,
                },
            }
        };
        Ok(Item { plan, scope })
    }

    fn plan_table_ref(&mut self, t: &ast::TableRef, needed: &Needed) -> Result<Item> {
        match t {
            ast::TableRef::Table { name, alias } => {
                if name.schema.is_none() {
                    if let Some(pos) = self.ctes.iter().rposition(|(n, _, _)| *n == name.name) {
                        let (cte_name, cols, q) = self.ctes[pos].clone();
                        // The CTE's own later siblings are not in its scope.
                        let saved = self.ctes.split_off(pos);
                        let plan = self.plan_query(&q);
                        self.ctes.extend(saved);
                        let mut alias = alias.clone().unwrap_or(ast::TableAlias {
                            name: cte_name,
                            columns: vec![],
                        });
                        if alias.columns.is_empty() {
                            alias.columns = cols;
                        }
                        return derived(plan?, &alias);
                    }
                }
                let table = self.ctx.table(&name.name).map_err(|e| at(e, name.offset))?;
                let qualifier = alias
                    .as_ref()
                    .map_or_else(|| name.name.clone(), |a| a.name.clone());
                let mut names: Vec<String> = table.columns.iter().map(|c| c.name.clone()).collect();
                if let Some(a) = alias {
                    if a.columns.len() > names.len() {
                        return Err(err!(
                            InvalidColumnReference,
                            "table \"{}\" has {} columns available but {} columns specified",
                            qualifier,
                            names.len(),
                            a.columns.len()
                        ));
                    }
                    for (n, c) in names.iter_mut().zip(&a.columns) {
                        *n = c.clone();
                    }
                }
                let columns: Vec<usize> = (0..names.len())
                    .filter(|&i| needed.wants(&qualifier, &names[i]))
                    .collect();
                let plan = self.scan_plan(table.clone(), &qualifier, columns.clone(), false);
                let mut scope = Scope::of(
                    &qualifier,
                    columns
                        .iter()
                        .map(|&i| (names[i].clone(), table.columns[i].ty)),
                );
                if alias.is_some() {
                    scope.items[0].hidden_table = Some(name.name.clone());
                }
                Ok(Item { plan, scope })
            }
            ast::TableRef::Subquery { query, alias } => {
                let plan = self.plan_query(query)?;
                let alias = alias.clone().ok_or_else(|| {
                    err!(SyntaxError, "subquery in FROM must have an alias")
                        .with_hint("For example, FROM (SELECT ...) [AS] foo.")
                })?;
                derived(plan, &alias)
            }
            ast::TableRef::Function {
                call,
                alias,
                offset,
            } => self.plan_function(call, alias.as_ref(), *offset),
            ast::TableRef::Join(j) => {
                let left = self.plan_table_ref(&j.left, needed)?;
                let right = self.plan_table_ref(&j.right, needed)?;
                let kind = match j.kind {
                    ast::JoinKind::Inner | ast::JoinKind::Cross => JoinKind::Inner,
                    ast::JoinKind::Left => JoinKind::Left,
                    ast::JoinKind::Right => JoinKind::Right,
                    ast::JoinKind::Full => JoinKind::Full,
                };
                let scope = left.scope.join(&right.scope)?;
                let mut conds = Vec::new();
                let mut right = right;
                match &j.constraint {
                    ast::JoinConstraint::On(e) => {
                        if contains_aggregate(e) {
                            return Err(at(
                                err!(
                                    GroupingError,
                                    "aggregate functions are not allowed in JOIN conditions"
                                ),
                                e.offset,
                            ));
                        }
                        let mut cs = Vec::new();
                        conjuncts(e, &mut cs);
                        for c in cs {
                            conds.push(self.bind_condition(
                                &c,
                                &scope,
                                &mut Mode::NoAgg("JOIN conditions"),
                                "JOIN/ON",
                            )?);
                        }
                    }
                    ast::JoinConstraint::Using(cols) => {
                        for c in cols {
                            let (li, lt) = left.scope.resolve(None, c).map_err(|_| {
                                err!(
                                    UndefinedColumn,
                                    "column \"{c}\" specified in USING clause does not exist in left table"
                                )
                            })?;
                            let (ri, rt) = right.scope.resolve(None, c).map_err(|_| {
                                err!(
                                    UndefinedColumn,
                                    "column \"{c}\" specified in USING clause does not exist in right table"
                                )
                            })?;
                            let (a, b, _) = crate::types::resolve_binary(BinaryOp::Eq, &lt, &rt)
                                .ok_or_else(|| {
                                    crate::types::ops::operator_error(BinaryOp::Eq, &lt, &rt)
                                })?;
                            let l = self.coerce(
                                Expr::column(li, lt),
                                &a,
                                CastContext::Implicit,
                                ast::Offset(0),
                            )?;
                            let r = self.coerce(
                                Expr::column(left.scope.len() + ri, rt),
                                &b,
                                CastContext::Implicit,
                                ast::Offset(0),
                            )?;
                            conds.push(Expr {
                                kind: ExprKind::Binary(BinaryOp::Eq, Box::new(l), Box::new(r)),
                                ty: DataType::Bool,
                            });
                            right.scope.columns[ri].hidden = true;
                        }
                    }
                    ast::JoinConstraint::Natural => {
                        return Err(err!(FeatureNotSupported, "NATURAL JOIN is not supported"))
                    }
                    ast::JoinConstraint::None => {}
                }
                let item = self.join(left, right, kind, conds)?;
                Ok(item)
            }
        }
    }

    /// A sequential scan of `columns` of `table`.
    pub fn scan_plan(
        &mut self,
        table: std::sync::Arc<crate::catalog::TableDef>,
        alias: &str,
        columns: Vec<usize>,
        with_tid: bool,
    ) -> Plan {
        let pages = self.ctx.table_pages(&table) as f64;
        let rows = match &table.stats {
            Some(s) if s.relpages > 0 => s.reltuples / s.relpages as f64 * pages,
            Some(s) => s.reltuples,
            None => {
                let width: usize = table
                    .columns
                    .iter()
                    .map(|c| match c.ty.attlen() {
                        -1 => 32,
                        n => n as usize,
                    })
                    .sum();
                pages * (8168.0 / (width as f64 + 28.0)).floor()
            }
        };
        let mut fields: Vec<Field> = columns
            .iter()
            .map(|&i| Field {
                name: table.columns[i].name.clone(),
                ty: table.columns[i].ty,
            })
            .collect();
        if with_tid {
            fields.push(Field {
                name: "ctid".into(),
                ty: DataType::Int8,
            });
        }
        Plan {
            rows: rows.max(if pages > 0.0 { 1.0 } else { 0.0 }),
            fields,
            node: Node::SeqScan {
                table,
                alias: alias.to_string(),
                columns,
                with_tid,
                filter: None,
            },
        }
    }

    fn plan_function(
        &mut self,
        call: &ast::FunctionCall,
        alias: Option<&ast::TableAlias>,
        offset: ast::Offset,
    ) -> Result<Item> {
        let name = call.name.name.as_str();
        let mut args = Vec::new();
        for a in &call.args {
            let b = self.bind_expr(a, &Scope::default(), &mut Mode::NoAgg("functions in FROM"))?;
            args.push((b, a.offset));
        }
        let qualifier = alias.map_or_else(|| name.to_string(), |a| a.name.clone());
        let (func, fields) = if name == "generate_series" {
            self.series(&args, offset)?
        } else {
            let values = args
                .iter()
                .map(|(e, _)| {
                    let e = self.resolve_unknown(e.clone())?;
                    crate::exec::eval_const(&e)
                })
                .collect::<Result<Vec<_>>>()?;
            match self.ctx.inspection_rows(name, &values) {
                Some(r) => {
                    let (fields, rows) = r?;
                    (TableFunc::Rows(rows), fields)
                }
                None => {
                    let list: Vec<String> = args.iter().map(|(a, _)| a.ty.to_string()).collect();
                    return Err(at(
                        err!(
                            UndefinedFunction,
                            "function {name}({}) does not exist",
                            list.join(", ")
                        )
                        .with_hint("No function matches the given name and argument types. You might need to add explicit type casts."),
                        offset,
                    ));
                }
            }
        };
        let mut fields = fields;
        if let Some(a) = alias {
            if fields.len() == 1 && a.columns.is_empty() && name == "generate_series" {
                fields[0].name = a.name.clone();
            }
            for (f, c) in fields.iter_mut().zip(&a.columns) {
                f.name = c.clone();
            }
        }
        let rows = match &func {
            TableFunc::SeriesInt { start, stop, step } => {
                (((stop - start) / step).max(-1) + 1) as f64
            }
            TableFunc::SeriesTimestamp { .. } => 1000.0,
            TableFunc::Rows(r) => r.len() as f64,
        };
        let scope = Scope::of(&qualifier, fields.iter().map(|f| (f.name.clone(), f.ty)));
        Ok(Item {
            plan: Plan {
                rows,
                fields,
                node: Node::Function {
                    func,
                    name: name.to_string(),
                },
            },
            scope,
        })
    }

    /// `generate_series` over numeric: computed whole (at most ten million
    /// rows, which is far more than a numeric series is ever used for).
    fn numeric_series(&mut self, args: &[(Expr, ast::Offset)]) -> Result<(TableFunc, Vec<Field>)> {
        use crate::types::{compare_typed, eval_binary};
        let ty = DataType::Numeric(None);
        let mut vals = Vec::new();
        for (a, off) in args {
            let e = self.coerce(a.clone(), &ty, CastContext::Implicit, *off)?;
            vals.push(crate::exec::eval_const(&e)?);
        }
        let fields = vec![Field {
            name: "generate_series".into(),
            ty,
        }];
        if vals.iter().any(Value::is_null) {
            return Ok((TableFunc::Rows(vec![]), fields));
        }
        let step = vals
            .get(2)
            .cloned()
            .unwrap_or_else(|| Value::numeric(crate::types::Numeric::from_i64(1)));
        let zero = Value::numeric(crate::types::Numeric::zero());
        let dir = compare_typed(&step, &zero, &ty);
        if dir == std::cmp::Ordering::Equal {
            return Err(err!(InvalidParameterValue, "step size cannot equal zero"));
        }
        let mut rows = Vec::new();
        let mut x = vals[0].clone();
        while compare_typed(&x, &vals[1], &ty) != dir {
            if rows.len() >= 10_000_000 {
                return Err(err!(
                    ProgramLimitExceeded,
                    "generate_series over numeric is limited to 10000000 rows"
                ));
            }
            rows.push(vec![x.clone()]);
            x = eval_binary(BinaryOp::Add, &x, &step)?;
        }
        Ok((TableFunc::Rows(rows), fields))
    }

    fn series(
        &mut self,
        args: &[(Expr, ast::Offset)],
        offset: ast::Offset,
    ) -> Result<(TableFunc, Vec<Field>)> {
        let tys: Vec<DataType> = args.iter().map(|(a, _)| a.ty).collect();
        let is_int = |t: &DataType| {
            matches!(
                t,
                DataType::Int2 | DataType::Int4 | DataType::Int8 | DataType::Unknown
            )
        };
        if (args.len() == 2 || args.len() == 3) && tys.iter().all(is_int) {
            let ty = if tys.contains(&DataType::Int8) {
                DataType::Int8
            } else {
                DataType::Int4
            };
            let mut vals = Vec::new();
            for (a, off) in args {
                let e = self.coerce(a.clone(), &ty, CastContext::Implicit, *off)?;
                vals.push(crate::exec::eval_const(&e)?);
            }
            let get = |i: usize| vals.get(i).and_then(Value::as_i64);
            if vals.iter().any(Value::is_null) {
                return Ok((
                    TableFunc::Rows(vec![]),
                    vec![Field {
                        name: "generate_series".into(),
                        ty,
                    }],
                ));
            }
            let step = get(2).unwrap_or(1);
            if step == 0 {
                return Err(err!(InvalidParameterValue, "step size cannot equal zero"));
            }
            return Ok((
                TableFunc::SeriesInt {
                    start: get(0).unwrap_or(0),
                    stop: get(1).unwrap_or(0),
                    step,
                },
                vec![Field {
                    name: "generate_series".into(),
                    ty,
                }],
            ));
        }
        let is_num = |t: &DataType| t.is_numeric() || *t == DataType::Unknown;
        if (args.len() == 2 || args.len() == 3)
            && tys.iter().all(is_num)
            && tys.iter().any(|t| matches!(t, DataType::Numeric(_)))
        {
            return self.numeric_series(args);
        }
        if args.len() == 3 {
            let mut vals = Vec::new();
            for (i, (a, off)) in args.iter().enumerate() {
                let t = if i == 2 {
                    DataType::Interval
                } else {
                    DataType::Timestamp
                };
                let e = self.coerce(a.clone(), &t, CastContext::Implicit, *off)?;
                vals.push(crate::exec::eval_const(&e)?);
            }
            if let (Value::Timestamp(a), Value::Timestamp(b), Value::Interval(s)) =
                (&vals[0], &vals[1], &vals[2])
            {
                if s.months == 0 && s.days == 0 && s.micros == 0 {
                    return Err(err!(InvalidParameterValue, "step size cannot equal zero"));
                }
                return Ok((
                    TableFunc::SeriesTimestamp {
                        start: *a,
                        stop: *b,
                        step: *s,
                    },
                    vec![Field {
                        name: "generate_series".into(),
                        ty: DataType::Timestamp,
                    }],
                ));
            }
            return Ok((
                TableFunc::Rows(vec![]),
                vec![Field {
                    name: "generate_series".into(),
                    ty: DataType::Timestamp,
                }],
            ));
        }
        let list: Vec<String> = tys.iter().map(|t| t.to_string()).collect();
        Err(at(
            err!(
                UndefinedFunction,
                "function generate_series({}) does not exist",
                list.join(", ")
            )
            .with_hint("No function matches the given name and argument types. You might need to add explicit type casts."),
            offset,
        ))
    }
}

/// A set-returning function in the select list (`select generate_series(1,
/// 3), 7`) becomes a FROM item joined to the rest, as PostgreSQL's
/// ProjectSet gives the same rows for the cases heapdb supports: one such
/// call, at the top of a select item. `None` when there is none.
fn srf_to_from(s: &ast::Select) -> Result<Option<ast::Select>> {
    let is_srf = |e: &ast::Expr| {
        matches!(&e.kind, ast::ExprKind::Function(f)
            if f.name.schema.is_none() && f.name.name == "generate_series")
    };
    let found: Vec<usize> = s
        .projection
        .iter()
        .enumerate()
        .filter(|(_, i)| matches!(i, ast::SelectItem::Expr { expr, .. } if is_srf(expr)))
        .map(|(k, _)| k)
        .collect();
    match found.len() {
        0 => return Ok(None),
        1 => {}
        _ => {
            return Err(err!(
                FeatureNotSupported,
                "more than one set-returning function in a select list is not supported"
            ))
        }
    }
    let mut out = s.clone();
    let k = found[0];
    let alias = "generate_series".to_string();
    if let ast::SelectItem::Expr {
        expr,
        alias: item_alias,
    } = &mut out.projection[k]
    {
        let ast::ExprKind::Function(call) = &expr.kind else {
            unreachable!("is_srf matched a function")
        };
        let call = (**call).clone();
        let offset = expr.offset;
        if item_alias.is_none() {
            *item_alias = Some(alias.clone());
        }
        *expr = ast::Expr {
            kind: ast::ExprKind::Column(ast::ColumnRef {
                schema: None,
                table: Some("\u{1}srf".into()),
                column: alias,
            }),
            offset,
        };
        out.from.push(ast::TableRef::Function {
            call,
            alias: Some(ast::TableAlias {
                name: "\u{1}srf".into(),
                columns: vec!["generate_series".into()],
            }),
            offset,
        });
    }
    Ok(Some(out))
}

/// The AST of a reference to scope column `i` (for `*` under GROUP BY).
fn column_ast(scope: &Scope, i: usize) -> ast::Expr {
    let c: &ScopeColumn = &scope.columns[i];
    ast::Expr::new(ast::ExprKind::Column(ast::ColumnRef {
        schema: None,
        table: c.qualifier.clone(),
        column: c.name.clone(),
    }))
}

fn sort_key(column: usize, o: &ast::OrderBy) -> SortKey {
    SortKey {
        column,
        descending: o.descending,
        nulls_first: o.nulls_first.unwrap_or(o.descending),
    }
}

/// A subquery or CTE in FROM: its output named by the alias.
fn derived(plan: Plan, alias: &ast::TableAlias) -> Result<Item> {
    if alias.columns.len() > plan.fields.len() {
        return Err(err!(
            InvalidColumnReference,
            "table \"{}\" has {} columns available but {} columns specified",
            alias.name,
            plan.fields.len(),
            alias.columns.len()
        ));
    }
    let mut plan = plan;
    for (f, c) in plan.fields.iter_mut().zip(&alias.columns) {
        f.name = c.clone();
    }
    let scope = Scope::of(
        &alias.name,
        plan.fields.iter().map(|f| (f.name.clone(), f.ty)),
    );
    Ok(Item { plan, scope })
}

/// Join conditions mention columns too: collect them for the scans.
fn collect_join_conditions(t: &ast::TableRef, needed: &mut Needed) {
    if let ast::TableRef::Join(j) = t {
        collect_join_conditions(&j.left, needed);
        collect_join_conditions(&j.right, needed);
        match &j.constraint {
            ast::JoinConstraint::On(e) => needed.add_expr(e),
            ast::JoinConstraint::Using(cols) => {
                for c in cols {
                    needed.refs.insert((None, c.clone()));
                }
            }
            _ => {}
        }
    }
}

fn dummy() -> Plan {
    Plan {
        rows: 0.0,
        fields: vec![],
        node: Node::Values { rows: vec![] },
    }
}

/// Adds a filter: into a scan's own filter when the input is a scan.
fn push_filter(plan: Plan, predicate: Expr) -> Plan {
    match plan.node {
        Node::SeqScan {
            table,
            alias,
            columns,
            with_tid,
            filter: f,
        } => {
            // Only the new condition narrows the scan's current estimate.
            let sel = estimate::selectivity(
                &predicate,
                &estimate::column_origins(&Plan {
                    node: Node::SeqScan {
                        table: table.clone(),
                        alias: String::new(),
                        columns: columns.clone(),
                        with_tid,
                        filter: None,
                    },
                    fields: plan.fields.clone(),
                    rows: plan.rows,
                }),
            );
            let predicate = match f {
                Some(old) => Expr {
                    kind: ExprKind::And(Box::new(old), Box::new(predicate)),
                    ty: DataType::Bool,
                },
                None => predicate,
            };
            Plan {
                rows: (plan.rows * sel).max(1.0),
                fields: plan.fields,
                node: Node::SeqScan {
                    table,
                    alias,
                    columns,
                    with_tid,
                    filter: Some(predicate),
                },
            }
        }
        node => filter(
            Plan {
                node,
                fields: plan.fields,
                rows: plan.rows,
            },
            predicate,
        ),
    }
}
