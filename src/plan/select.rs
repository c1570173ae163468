//! Planning queries: SELECT, VALUES, set operations, FROM items and joins,
//! grouping, ORDER BY, LIMIT.
//!
//! A SELECT is built bottom-up the way PostgreSQL evaluates it: FROM items
//! (scans, subqueries, functions) joined in a searched order — WHERE conjuncts
//! that mention one item are pushed into its scan, equalities between the
//! joined items become hash-join keys, the rest filter the join — then
//! grouping and aggregates, HAVING, the select list (plus hidden columns for
//! ORDER BY expressions not in it), DISTINCT, ORDER BY, and LIMIT/OFFSET.
//!
//! Scans deform only the columns the query mentions: before planning the
//! FROM list, every column reference of the SELECT is collected by name, so
//! `count(*)` reads no attribute at all.
//!
//! This file plans the query and the SELECT itself; its submodules plan the
//! parts: [`from`] (FROM items, joins, filter pushdown), [`reorder`] (the
//! order a FROM list is joined in), [`setops`] (UNION /
//! INTERSECT / EXCEPT and VALUES) and [`functions`] (set-returning functions
//! in FROM and in the select list).

use std::collections::HashSet;

use heapdb_grammar::ast;

use super::bind::{at, contains_aggregate_except, contains_subquery, walk, AggState, Binder, Mode};
use super::folded::Clause;
use super::scope::{Scope, ScopeColumn};
use super::{Field, Node, Plan, SortKey};
use crate::err;
use crate::error::Result;
use crate::nodes::expr::{Expr, ExprKind};
use crate::types::cast::CastContext;
use crate::types::{DataType, Value};

use super::estimate::{self, EQ_SEL};

pub mod cte;
mod distinct;
mod from;
mod functions;
mod inherit;
mod lateral;
mod postpone;
mod pullup;
mod reorder;
mod sequence_rel;
mod setops;
mod sorted_agg;
mod srf_order;
pub mod view;

use distinct::{DistinctPlan, Ties};
use functions::srf_to_from;

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
        let refs = &mut self.refs;
        walk(e, &mut |x| match &x.kind {
            ast::ExprKind::Column(c) => {
                refs.insert((c.table.clone(), c.column.clone()));
            }
            // A subquery may read this query's columns (correlation).
            ast::ExprKind::Exists(q)
            | ast::ExprKind::Subquery(q)
            | ast::ExprKind::InSubquery { query: q, .. }
            | ast::ExprKind::Quantified { query: q, .. } => {
                super::sublink::query_columns(q, &mut |c| {
                    refs.insert((c.table.clone(), c.column.clone()));
                });
            }
            _ => {}
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
        // As FigureColname: a cast names the column after its type unless
        // the operand has a stronger name (a column, a function, ...);
        // another cast's type name is not stronger.
        K::Cast { expr, data_type } => {
            if weak_name(expr) {
                type_name(data_type)
            } else {
                output_name(expr)
            }
        }
        K::TypedString { data_type, .. } => type_name(data_type),
        K::Case { .. } => "case".into(),
        K::Array(_) | K::ArraySubquery(_) => "array".into(),
        K::Subscript { expr, .. } => output_name(expr),
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

/// Whether a cast around `e` names the column after the cast's type
/// (FigureColname's strength of at most 1: constants, casts of them,
/// expressions without a name).
fn weak_name(e: &ast::Expr) -> bool {
    use ast::ExprKind as K;
    match &e.kind {
        K::Literal(_) | K::TypedString { .. } => true,
        K::Cast { expr, .. } => weak_name(expr),
        _ => output_name(e) == "?column?",
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
        A::Timestamp(_) => "timestamp",
        A::TimestampTz(_) => "timestamptz",
        A::Interval => "interval",
        A::Named(n) => n.as_str(),
        A::Array(e) => return type_name(e),
        A::Time(_) => "time",
        A::TimeTz(_) => "timetz",
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

/// Splits a HAVING condition over `agg` (an Aggregate) into its conjuncts
/// that read only group keys — rewritten over the aggregate's input, to
/// run before grouping — and the rest, which stay above it.
fn split_having(agg: &Plan, having: Expr) -> (Option<Expr>, Option<Expr>) {
    let Node::Aggregate { group, .. } = &agg.node else {
        return (None, Some(having));
    };
    fn substitute(e: &mut Expr, group: &[Expr]) {
        if let ExprKind::Column(i) = e.kind {
            *e = group[i].clone();
            return;
        }
        for c in e.children_mut() {
            substitute(c, group);
        }
    }
    let mut list = Vec::new();
    super::quals::conjuncts(having, &mut list);
    let (mut down, mut up) = (Vec::new(), Vec::new());
    for mut c in list {
        let mut cols = Vec::new();
        columns_used(&c, &mut cols);
        if !cols.is_empty() && cols.iter().all(|&i| i < group.len()) {
            substitute(&mut c, group);
            down.push(c);
        } else {
            up.push(c);
        }
    }
    (
        super::quals::conjunction(down),
        super::quals::conjunction(up),
    )
}

/// Whether `e` is a call of a builtin set-returning function that a
/// select list expands into rows (`generate_series(1, 3)`).
pub(crate) fn calls_builtin_srf(e: &ast::Expr) -> bool {
    functions::is_select_srf(e, &functions::UserSrfs::new())
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
        self.ctes.extend(cte::CteEntry::of_query(q));
        let mut result = super::folded::block(|| self.plan_query_body(q));
        self.ctes.truncate(saved);
        if let Ok(plan) = &mut result {
            super::dummy::prune_empty_scans(plan);
            super::quals::drop_true(plan);
            super::quals::order_quals(plan);
            super::indexpath::use_indexes(plan, &*self.ctx);
        }
        result
    }

    fn plan_query_body(&mut self, q: &ast::Query) -> Result<Plan> {
        if q.with_ties && q.order_by.is_empty() {
            return Err(distinct::ties_without_order());
        }
        super::folded::clause(Clause::Limit);
        let limit = self.limit_value(q.limit.as_ref(), "LIMIT")?;
        let offset = self.limit_value(q.offset.as_ref(), "OFFSET")?.unwrap_or(0);
        let ties = q.with_ties.then_some(Ties { limit, offset });
        let mut plan = match &q.body {
            ast::SetExpr::Select(s) => self.plan_select(s, &q.order_by, ties)?,
            body => {
                let plan = super::folded::block(|| self.plan_set_expr(body))?;
                let plan = self.sort_by_output(plan, &q.order_by)?;
                match ties {
                    Some(t) => distinct::limit_ties_over_sort(plan, t)?,
                    None => plan,
                }
            }
        };
        if ties.is_none() && (limit.is_some() || offset > 0) {
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

    /// Plans one SELECT block; again, aggregating, when a sublink in it
    /// holds an aggregate of this level ([`super::outer_agg`]).
    fn plan_select(
        &mut self,
        s: &ast::Select,
        order_by: &[ast::OrderBy],
        ties: Option<Ties>,
    ) -> Result<Plan> {
        let depth = self.outer.len();
        let forced = self.forced_aggs.len();
        let keep_unknown = self.keep_unknown;
        let planned = loop {
            self.keep_unknown = keep_unknown;
            match self.plan_select_once(s, order_by, ties) {
                Err(e) if self.take_pending_aggregate(depth, &e) => continue,
                r => break r,
            }
        };
        self.forced_aggs.truncate(forced);
        planned
    }

    fn plan_select_once(
        &mut self,
        s: &ast::Select,
        order_by: &[ast::OrderBy],
        ties: Option<Ties>,
    ) -> Result<Plan> {
        let user = self.user_srfs(s);
        srf_order::reject_misplaced_srfs(s, &user)?;
        if ties.is_none() {
            if let Some(rewritten) = srf_order::srf_after_sort(s, order_by, &user) {
                return self.plan_select(&rewritten, &[], None);
            }
        }
        if let Some(rewritten) = srf_to_from(s, &user)? {
            return self.plan_select(&rewritten, order_by, ties);
        }
        let keep_unknown = std::mem::take(&mut self.keep_unknown);
        super::folded::clause(Clause::Where);
        let mut needed = needed_columns(s, order_by);
        // `[NOT] EXISTS` conjuncts correlated by equalities become joins.
        let rest;
        let (where_clause, pullups) = match &s.where_clause {
            Some(w) if contains_subquery(w) => {
                let (r, p) = self.split_pullups(w);
                rest = r;
                (rest.as_ref(), p)
            }
            w => (w.as_ref(), Vec::new()),
        };
        let (input, scope) = self.plan_from(&s.from, where_clause, &mut needed)?;
        let input = if pullups.is_empty() {
            input
        } else {
            self.apply_pullups(input, &scope, pullups)?
        };
        let outs = select_outputs(s, &scope)?;
        let depth = self.outer.len();
        let forced = self.forced_at(depth);
        let aggregating =
            !forced.is_empty() || is_aggregating(s, order_by, &|c| self.forced_outside(depth, c));
        let mut state = AggState {
            input: scope.clone(),
            ..AggState::default()
        };
        super::folded::clause(Clause::Targets);
        if aggregating {
            self.bind_group_by(s, &outs, &scope, &mut state)?;
            for call in &forced {
                self.bind_aggregate(call, &scope, &mut Mode::Agg(&mut state))?;
            }
        }
        let mut windows = if super::window::has_windows(s, order_by) {
            let st = aggregating.then_some(&mut state);
            Some(self.prepare_windows(s, order_by, &scope, st)?)
        } else {
            None
        };
        let (mut exprs, mut names) =
            self.bind_outputs(&outs, &scope, aggregating, &mut state, keep_unknown)?;
        let visible = exprs.len();
        let keys = self.bind_order_keys(
            s,
            order_by,
            &scope,
            aggregating,
            &mut state,
            (&mut exprs, &mut names),
            visible,
        )?;
        let distinct = if !s.distinct_on.is_empty() {
            let on_items: Vec<ast::OrderBy> = s
                .distinct_on
                .iter()
                .map(|e| ast::OrderBy {
                    expr: e.clone(),
                    descending: false,
                    nulls_first: None,
                })
                .collect();
            let on = self.bind_order_keys(
                s,
                &on_items,
                &scope,
                aggregating,
                &mut state,
                (&mut exprs, &mut names),
                visible,
            )?;
            DistinctPlan::On(on.iter().map(|k| k.column).collect())
        } else if !s.distinct {
            DistinctPlan::None
        } else if self.ctx.settings().enable_hashagg {
            DistinctPlan::Hash
        } else {
            DistinctPlan::Sorted
        };
        let mut plan = input;
        let mut grouped_in_order = false;
        if aggregating {
            // The windows' expressions read the aggregates too.
            let n = exprs.len();
            if let Some(w) = &mut windows {
                exprs.append(w.pre_mut());
            }
            let sorted;
            super::folded::clause(Clause::Having);
            (plan, sorted) = self.plan_aggregate(s, plan, &scope, &mut state, &mut exprs, &keys)?;
            grouped_in_order = sorted && windows.is_none();
            if let Some(w) = &mut windows {
                *w.pre_mut() = exprs.split_off(n);
            }
        }
        if let Some(w) = windows {
            plan = w.apply(self, plan, &mut exprs)?;
        }
        let shape = Shape {
            // The groups already come out in ORDER BY's order.
            keys: if grouped_in_order && matches!(distinct, DistinctPlan::None) {
                Vec::new()
            } else {
                keys
            },
            distinct,
            visible,
            ties,
        };
        finish_select(plan, exprs, names, shape, &s.distinct_on)
    }

    /// GROUP BY items, bound over the FROM scope into `state`: positions
    /// and output names refer to the select list.
    fn bind_group_by(
        &mut self,
        s: &ast::Select,
        outs: &[Out],
        scope: &Scope,
        state: &mut AggState,
    ) -> Result<()> {
        // GROUP BY items: positions and output names refer to the list.
        for g in &s.group_by {
            let resolved: ast::Expr = match group_target(g) {
                GroupTarget::Position(pos) => {
                    let found = usize::try_from(pos)
                        .ok()
                        .and_then(|p| outs.get(p.wrapping_sub(1)));
                    match found {
                        Some(Out::Ast(e, _)) => (*e).clone(),
                        Some(Out::Column(i, _)) => column_ast(scope, *i),
                        None => {
                            return Err(at(
                                err!(
                                    InvalidColumnReference,
                                    "GROUP BY position {pos} is not in select list"
                                ),
                                g.offset,
                            ))
                        }
                    }
                }
                GroupTarget::NonInteger => {
                    return Err(at(
                        err!(SyntaxError, "non-integer constant in GROUP BY"),
                        g.offset,
                    ))
                }
                GroupTarget::Other => match &g.kind {
                    // A bare name: an input column first, else an
                    // output column's name (PostgreSQL's SQL92 rule).
                    ast::ExprKind::Column(c)
                        if c.table.is_none()
                            && matches!(
                                scope.resolve(None, &c.column),
                                Err(ref e) if e.code == crate::error::SqlState::UndefinedColumn
                            ) =>
                    {
                        let mut found: Option<&ast::Expr> = None;
                        for o in outs {
                            if let Out::Ast(e, n) = o {
                                if *n != c.column {
                                    continue;
                                }
                                match found {
                                    Some(f) if f != *e => {
                                        return Err(at(
                                            err!(
                                                AmbiguousColumn,
                                                "GROUP BY \"{}\" is ambiguous",
                                                c.column
                                            ),
                                            g.offset,
                                        ))
                                    }
                                    _ => found = Some(e),
                                }
                            }
                        }
                        found.cloned().unwrap_or_else(|| g.clone())
                    }
                    _ => g.clone(),
                },
            };
            let b = self.bind_expr(&resolved, scope, &mut Mode::NoAgg("GROUP BY"))?;
            let b = self.resolve_unknown(b)?;
            state.group_ast.push(resolved);
            state.group.push(b);
        }
        Ok(())
    }

    /// Binds the select list (above the aggregate when aggregating).
    fn bind_outputs(
        &mut self,
        outs: &[Out],
        scope: &Scope,
        aggregating: bool,
        state: &mut AggState,
        keep_unknown: bool,
    ) -> Result<(Vec<Expr>, Vec<String>)> {
        let mut exprs = Vec::with_capacity(outs.len());
        let mut names = Vec::with_capacity(outs.len());
        {
            let mut mode = if aggregating {
                Mode::Agg(state)
            } else {
                Mode::NoAgg("WHERE")
            };
            for o in outs {
                let (e, name) = match o {
                    Out::Ast(e, name) => {
                        let b = if aggregating {
                            self.bind_expr(e, scope, &mut mode)?
                        } else {
                            self.bind_expr(e, scope, &mut Mode::NoAgg("WHERE"))?
                        };
                        let b = if keep_unknown {
                            b
                        } else {
                            self.resolve_unknown(b)?
                        };
                        (super::fold::fold(b)?, name.clone())
                    }
                    Out::Column(i, name) => {
                        if aggregating {
                            let ast = column_ast(scope, *i);
                            (self.bind_expr(&ast, scope, &mut mode)?, name.clone())
                        } else {
                            (Expr::column(*i, scope.columns[*i].ty), name.clone())
                        }
                    }
                };
                exprs.push(e);
                names.push(name);
            }
        }
        Ok((exprs, names))
    }

    /// ORDER BY keys: output positions, output names, or expressions
    /// (bound like the select list; added to `out` as hidden columns).
    #[allow(clippy::too_many_arguments)]
    fn bind_order_keys(
        &mut self,
        s: &ast::Select,
        order_by: &[ast::OrderBy],
        scope: &Scope,
        aggregating: bool,
        state: &mut AggState,
        out: (&mut Vec<Expr>, &mut Vec<String>),
        visible: usize,
    ) -> Result<Vec<SortKey>> {
        let (exprs, names) = out;
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
                        self.bind_expr(&o.expr, scope, &mut Mode::Agg(state))?
                    } else {
                        self.bind_expr(&o.expr, scope, &mut Mode::NoAgg("WHERE"))?
                    };
                    let b = self.resolve_unknown(b)?;
                    let same = format!("{b:?}");
                    match exprs.iter().position(|e| format!("{e:?}") == same) {
                        Some(i) => i,
                        None => {
                            if s.distinct && s.distinct_on.is_empty() {
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
        Ok(keys)
    }

    /// The Aggregate node over `plan` and the HAVING filter.
    fn plan_aggregate(
        &mut self,
        s: &ast::Select,
        mut plan: Plan,
        scope: &Scope,
        state: &mut AggState,
        outputs: &mut [Expr],
        order: &[SortKey],
    ) -> Result<(Plan, bool)> {
        let having = match &s.having {
            Some(h) => Some(super::fold::fold(self.bind_condition(
                h,
                scope,
                &mut Mode::Agg(state),
                "HAVING",
            )?)?),
            None => None,
        };
        let mut having = having;
        if state.group.is_empty() && state.aggs.is_empty() {
            // Degenerate grouping (HAVING without GROUP BY or aggregates):
            // exactly one group whatever the input, so the input is never
            // read, as PostgreSQL's create_degenerate_grouping_paths.
            plan = Plan {
                rows: 1.0,
                fields: vec![],
                node: Node::Values { rows: vec![vec![]] },
            };
            let plan = match having {
                Some(h) if !matches!(h.as_const(), Some(Value::Bool(true))) => filter(plan, h),
                _ => plan,
            };
            return Ok((plan, false));
        }
        drop_unused_aggregates(state, outputs, having.as_mut())?;
        let ngroup = state.group.len();
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
        let mut up = if let Some(h) = having {
            let (down, up) = split_having(&plan, h);
            if let (Some(d), Node::Aggregate { input, .. }) = (down, &mut plan.node) {
                // HAVING conditions on the group keys alone filter rows
                // before grouping, as PostgreSQL moves them into WHERE.
                let inner = std::mem::replace(&mut **input, from::dummy());
                **input = from::push_filter(inner, d);
            }
            up
        } else {
            None
        };
        let mut in_order = false;
        if !self.ctx.settings().enable_hashagg && ngroup > 0 {
            let how = sorted_agg::group_order(ngroup, outputs, order);
            in_order = how.satisfies_order;
            let mut above: Vec<&mut Expr> = outputs.iter_mut().chain(up.as_mut()).collect();
            plan = sorted_agg::sorted(plan, &how, &mut above);
        }
        if let Some(u) = up {
            plan = filter(plan, u);
        }
        Ok((plan, in_order))
    }
}

/// Drops the aggregates that no output or HAVING reads any more (those
/// only in CASE arms that constant folding removed), renumbering the
/// aggregate's columns, then folds the remaining aggregates' arguments: as
/// in PostgreSQL, an aggregate in a dead arm is never computed, and a live
/// one's constant argument folds at plan time.
fn drop_unused_aggregates(
    state: &mut AggState,
    outputs: &mut [Expr],
    having: Option<&mut Expr>,
) -> Result<()> {
    let ngroup = state.group.len();
    let mut used = Vec::new();
    for e in outputs.iter().chain(having.as_deref()) {
        columns_used(e, &mut used);
    }
    let keep: Vec<bool> = (0..state.aggs.len())
        .map(|k| used.contains(&(ngroup + k)))
        .collect();
    if keep.contains(&false) {
        let mut new_pos = Vec::with_capacity(keep.len());
        let mut next = ngroup;
        for &k in &keep {
            new_pos.push(next);
            next += usize::from(k);
        }
        let mut k = 0;
        state.aggs.retain(|_| {
            k += 1;
            keep[k - 1]
        });
        // Window placeholders (past every aggregate) stay as they are.
        let f = |c: usize| {
            if c < ngroup {
                c
            } else {
                new_pos.get(c - ngroup).copied().unwrap_or(c)
            }
        };
        for e in outputs.iter_mut().chain(having) {
            remap_columns(e, &f);
        }
    }
    for (_, a) in state.aggs.iter_mut() {
        for e in a.exprs_mut() {
            let taken = std::mem::replace(e, Expr::constant(Value::Null, DataType::Unknown));
            *e = super::fold::fold(taken)?;
        }
    }
    Ok(())
}

/// What a SELECT does after its select list: DISTINCT, ORDER BY, WITH
/// TIES.
struct Shape {
    distinct: DistinctPlan,
    /// ORDER BY's keys over the select list and its hidden columns.
    keys: Vec<SortKey>,
    /// The select list's width (columns after it are hidden ones).
    visible: usize,
    ties: Option<Ties>,
}

/// Projects the select list over `plan`, then DISTINCT, ORDER BY, WITH
/// TIES and the projection that drops ORDER BY's hidden columns.
/// `distinct_on` is the DISTINCT ON syntax, for error positions.
fn finish_select(
    mut plan: Plan,
    exprs: Vec<Expr>,
    names: Vec<String>,
    shape: Shape,
    distinct_on: &[ast::Expr],
) -> Result<Plan> {
    let Shape {
        distinct,
        keys,
        visible,
        ties,
    } = shape;
    if matches!(distinct, DistinctPlan::None)
        && ties.is_none()
        && !keys.is_empty()
        && postpone::any_postponed(&exprs, &keys, visible)
    {
        return Ok(postpone::sort_then_volatile(
            plan, &exprs, &names, &keys, visible,
        ));
    }
    plan = project(plan, exprs, names);
    let order: Vec<usize> = keys.iter().map(|k| k.column).collect();
    match distinct {
        DistinctPlan::On(on) => {
            let sort = distinct::distinct_on_keys(&on, distinct_on, &keys)?;
            plan = distinct::sort_unique(plan, sort, on);
        }
        DistinctPlan::Sorted => {
            let sort = distinct::sorted_distinct_keys(keys, visible);
            plan = distinct::sort_unique(plan, sort, (0..visible).collect());
        }
        DistinctPlan::Hash | DistinctPlan::None => {
            if matches!(distinct, DistinctPlan::Hash) {
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
        }
    }
    if let Some(t) = ties {
        plan = distinct::limit_ties(plan, t, order);
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

/// One select-list column: an expression, or a column a wildcard expanded.
enum Out<'a> {
    Ast(&'a ast::Expr, String),
    Column(usize, String),
}

/// The select list, with wildcards expanded.
fn select_outputs<'a>(s: &'a ast::Select, scope: &Scope) -> Result<Vec<Out<'a>>> {
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
    Ok(outs)
}

/// Whether the SELECT aggregates (GROUP BY, HAVING, or an aggregate call).
/// Whether the block aggregates: GROUP BY, HAVING, or an aggregate call
/// in its select list or ORDER BY that is not `outer`'s (one belonging to
/// an enclosing query, [`super::outer_agg`]).
fn is_aggregating(
    s: &ast::Select,
    order_by: &[ast::OrderBy],
    outer: &dyn Fn(&ast::FunctionCall) -> bool,
) -> bool {
    let has = |e: &ast::Expr| contains_aggregate_except(e, outer);
    !s.group_by.is_empty()
        || s.having.is_some()
        || s.projection
            .iter()
            .any(|i| matches!(i, ast::SelectItem::Expr { expr, .. } if has(expr)))
        || order_by.iter().any(|o| has(&o.expr))
}

/// Which columns the scans must produce.
fn needed_columns(s: &ast::Select, order_by: &[ast::OrderBy]) -> Needed {
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
    for e in s
        .where_clause
        .iter()
        .chain(&s.group_by)
        .chain(&s.having)
        .chain(&s.distinct_on)
    {
        needed.add_expr(e);
    }
    for o in order_by {
        needed.add_expr(&o.expr);
    }
    for w in &s.window {
        super::window::walk_spec(&w.spec, &mut |e| needed.add_expr(e));
    }
    needed
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

/// What a GROUP BY item written as a constant means.
enum GroupTarget {
    /// An integer: a select-list position (checked by the caller).
    Position(i64),
    /// Another constant: an error in PostgreSQL.
    NonInteger,
    /// An expression.
    Other,
}

/// Classifies a GROUP BY item as PostgreSQL's `findTargetlistEntrySQL92`:
/// integer constants (`-1` too) are positions, other constants errors.
fn group_target(g: &ast::Expr) -> GroupTarget {
    let number = |n: &str, neg: bool| match n.parse::<i32>() {
        Ok(v) if !n.contains(['.', 'e', 'E']) => {
            GroupTarget::Position(if neg { -i64::from(v) } else { i64::from(v) })
        }
        _ => GroupTarget::NonInteger,
    };
    match &g.kind {
        ast::ExprKind::Literal(ast::Literal::Number(n)) => number(n, false),
        ast::ExprKind::Literal(
            ast::Literal::String(_) | ast::Literal::Null | ast::Literal::Boolean(_),
        ) => GroupTarget::NonInteger,
        ast::ExprKind::Unary {
            op: ast::UnaryOp::Minus,
            expr,
        } => match &expr.kind {
            ast::ExprKind::Literal(ast::Literal::Number(n)) => number(n, true),
            _ => GroupTarget::Other,
        },
        _ => GroupTarget::Other,
    }
}
