//! Planning INSERT, UPDATE and DELETE (PostgreSQL's `transformInsertStmt`
//! and `transformUpdateStmt`, `expand_targetlist` and, for `ON CONFLICT`,
//! `infer_arbiter_indexes`): each statement becomes a query producing the
//! rows to write — for INSERT the complete new rows (the columns left out
//! filled from their DEFAULT expressions, everything cast to the columns'
//! types by assignment), for UPDATE and DELETE each target row's tuple id
//! followed by its complete new (or old) row — with its RETURNING list
//! bound over the written row. `exec::modify` writes the rows.
//!
//! The target table comes looked up and locked by the caller. Writes
//! through a view are planned against the table beneath it by [`view`].

use std::collections::HashSet;

use heapdb_grammar::ast;

use super::bind::{at, Binder, Mode};
use super::folded::Clause;
use super::scope::{Scope, ScopeItem};
use crate::catalog::{ColumnDef, TableDef};
use crate::err;
use crate::error::Result;
use crate::exec::expr::Expr;
use crate::exec::modify::upsert::UpdateAction;
use crate::exec::modify::Recheck;
use crate::nodes::{Field, Node, Plan};
use crate::types::cast::{cast_kind, CastContext};
use crate::types::{DataType, Value};

mod recheck;
pub mod view;

/// A planned INSERT, UPDATE or DELETE.
pub struct ModifyPlan {
    /// The rows to write (see the module doc).
    pub plan: Plan,
    /// Write in bulk: an INSERT's rows from a query, many per page through
    /// the bulk-write ring.
    pub bulk: bool,
    /// RETURNING's expressions over a written row (empty: none).
    pub returning: Vec<Expr>,
    /// Their output columns.
    pub returning_fields: Vec<Field>,
    /// The check options of the views written through (empty when the
    /// table was named directly).
    pub checks: Vec<crate::exec::modify::ViewCheck>,
    /// How an UPDATE or DELETE re-checks a row another transaction changed
    /// meanwhile, in READ COMMITTED (`None` for INSERT).
    pub recheck: Option<Recheck>,
}

/// Parses a stored DEFAULT expression.
pub fn parse_default(text: &str) -> Result<ast::Expr> {
    let stmt =
        heapdb_grammar::parse_one(&format!("SELECT {text}")).map_err(crate::error::parse_error)?;
    if let ast::Statement::Query(q) = stmt {
        if let ast::SetExpr::Select(s) = q.body {
            if let Some(ast::SelectItem::Expr { expr, .. }) = s.projection.into_iter().next() {
                return Ok(expr);
            }
        }
    }
    Err(err!(InternalError, "bad stored default expression: {text}"))
}

/// The column positions an INSERT's or COPY's column list names (all
/// columns when it is empty), with PostgreSQL's errors for an unknown or a
/// repeated name.
pub fn target_columns(table: &TableDef, names: &[String]) -> Result<Vec<usize>> {
    if names.is_empty() {
        return Ok((0..table.columns.len()).collect());
    }
    let mut seen = HashSet::new();
    let mut out = Vec::with_capacity(names.len());
    for c in names {
        let i = table.column_index(c).ok_or_else(|| {
            err!(
                UndefinedColumn,
                "column \"{c}\" of relation \"{}\" does not exist",
                table.name
            )
        })?;
        if !seen.insert(i) {
            return Err(err!(
                DuplicateColumn,
                "column \"{c}\" specified more than once"
            ));
        }
        out.push(i);
    }
    Ok(out)
}

/// INSERT (without ON CONFLICT) into `table`, whose columns `targets` its
/// column list names ([`target_columns`]).
pub fn plan_insert(
    binder: &mut Binder<'_>,
    ins: &ast::Insert,
    table: &TableDef,
    targets: &[usize],
) -> Result<ModifyPlan> {
    let (source, bulk) = insert_source(binder, ins, table, targets)?;
    let exprs = complete_row(binder, table, targets, source.fields.len())?;
    let (returning, returning_fields) = returning(binder, &ins.returning, table, &table.name)?;
    Ok(ModifyPlan {
        plan: insert_plan(source, exprs, table),
        bulk,
        returning,
        returning_fields,
        checks: Vec::new(),
        recheck: None,
    })
}

/// `INSERT ... ON CONFLICT` into `table` (`alias`: the name its `DO
/// UPDATE` calls it by): the rows proposed, and the bound `DO UPDATE`
/// (`None` for DO NOTHING).
pub fn plan_upsert(
    binder: &mut Binder<'_>,
    ins: &ast::Insert,
    oc: &ast::OnConflict,
    table: &TableDef,
    targets: &[usize],
) -> Result<(ModifyPlan, Option<UpdateAction>)> {
    let alias = ins.alias.clone().unwrap_or_else(|| table.name.clone());
    let (source, _) = insert_source(binder, ins, table, targets)?;
    let exprs = complete_row(binder, table, targets, source.fields.len())?;
    let action = match &oc.action {
        ast::ConflictAction::Nothing => None,
        ast::ConflictAction::Update {
            assignments,
            where_clause,
        } => {
            let scope = update_scope(table, &alias)?;
            let new_values = bind_assignments(binder, table, assignments, &scope)?;
            let condition = match where_clause {
                Some(w) => {
                    Some(binder.bind_condition(w, &scope, &mut Mode::NoAgg("WHERE"), "WHERE")?)
                }
                None => None,
            };
            Some(UpdateAction {
                new_values,
                condition,
            })
        }
    };
    let (returning, returning_fields) = returning(binder, &ins.returning, table, &alias)?;
    let plan = ModifyPlan {
        plan: insert_plan(source, exprs, table),
        bulk: false,
        returning,
        returning_fields,
        checks: Vec::new(),
        recheck: None,
    };
    Ok((plan, action))
}

/// UPDATE of `table` (a `std::sync::Arc` the planned scan keeps).
pub fn plan_update(
    binder: &mut Binder<'_>,
    u: &ast::Update,
    table: &std::sync::Arc<TableDef>,
) -> Result<ModifyPlan> {
    let alias = u.alias.clone().unwrap_or_else(|| table.name.clone());
    super::folded::clause(Clause::Where);
    let (source, scope, quals) =
        binder.plan_modify_source(table.clone(), &alias, &u.from, u.where_clause.as_ref())?;
    let ncols = table.columns.len();
    // PostgreSQL numbers SET's subqueries (and RETURNING's) before WHERE's.
    super::folded::clause(Clause::Targets);
    let new_values = bind_assignments(binder, table, &u.assignments, &scope)?;
    let (mut returning, returning_fields) = match u.from.is_empty() {
        true => returning(binder, &u.returning, table, &alias)?,
        false => returning_over(binder, &u.returning, &scope)?,
    };
    // Output: the tuple id, then the complete new row.
    let tid_col = ncols;
    let mut exprs = vec![Expr::column(tid_col, DataType::Int8)];
    for (j, v) in new_values.into_iter().enumerate() {
        exprs.push(v.unwrap_or_else(|| Expr::column(j, table.columns[j].ty)));
    }
    let from = (!u.from.is_empty()).then_some(&mut returning);
    let (plan, recheck) = modify_plan(source, exprs, table, quals, from)?;
    Ok(ModifyPlan {
        plan,
        bulk: false,
        returning,
        returning_fields,
        checks: Vec::new(),
        recheck: Some(recheck),
    })
}

/// DELETE from `table`.
pub fn plan_delete(
    binder: &mut Binder<'_>,
    d: &ast::Delete,
    table: &std::sync::Arc<TableDef>,
) -> Result<ModifyPlan> {
    let alias = d.alias.clone().unwrap_or_else(|| table.name.clone());
    super::folded::clause(Clause::Where);
    let (source, scope, quals) =
        binder.plan_modify_source(table.clone(), &alias, &d.using, d.where_clause.as_ref())?;
    super::folded::clause(Clause::Targets);
    let (mut returning, returning_fields) = match d.using.is_empty() {
        true => returning(binder, &d.returning, table, &alias)?,
        false => returning_over(binder, &d.returning, &scope)?,
    };
    let ncols = table.columns.len();
    let mut exprs = vec![Expr::column(ncols, DataType::Int8)];
    for (j, c) in table.columns.iter().enumerate() {
        exprs.push(Expr::column(j, c.ty));
    }
    let using = (!d.using.is_empty()).then_some(&mut returning);
    let (plan, recheck) = modify_plan(source, exprs, table, quals, using)?;
    Ok(ModifyPlan {
        plan,
        bulk: false,
        returning,
        returning_fields,
        checks: Vec::new(),
        recheck: Some(recheck),
    })
}

/// Binds RETURNING items over the table's columns.
fn returning(
    binder: &mut Binder,
    items: &[ast::SelectItem],
    table: &TableDef,
    alias: &str,
) -> Result<(Vec<Expr>, Vec<Field>)> {
    let scope = Scope::of(alias, table.columns.iter().map(|c| (c.name.clone(), c.ty)));
    let mut exprs = Vec::new();
    let mut cols = Vec::new();
    for item in items {
        match item {
            ast::SelectItem::Expr { expr, alias } => {
                let e = binder.bind_expr(expr, &scope, &mut Mode::NoAgg("RETURNING"))?;
                let e = binder.resolve_unknown(e)?;
                cols.push(Field {
                    name: alias
                        .clone()
                        .unwrap_or_else(|| super::select::output_name(expr)),
                    ty: e.ty,
                });
                exprs.push(e);
            }
            ast::SelectItem::Wildcard(_) | ast::SelectItem::QualifiedWildcard(_) => {
                for (i, c) in table.columns.iter().enumerate() {
                    exprs.push(Expr::column(i, c.ty));
                    cols.push(Field {
                        name: c.name.clone(),
                        ty: c.ty,
                    });
                }
            }
        }
    }
    Ok((exprs, cols))
}

/// RETURNING of an UPDATE ... FROM or DELETE ... USING, bound over the
/// source row (`scope`: the target's columns, its tuple id, the FROM /
/// USING items' columns); `*` is every item's columns, as in PostgreSQL.
/// [`modify_plan`] maps them onto the written rows.
fn returning_over(
    binder: &mut Binder,
    items: &[ast::SelectItem],
    scope: &Scope,
) -> Result<(Vec<Expr>, Vec<Field>)> {
    let mut exprs = Vec::new();
    let mut cols = Vec::new();
    for item in items {
        let positions = match item {
            ast::SelectItem::Expr { expr, alias } => {
                let e = binder.bind_expr(expr, scope, &mut Mode::NoAgg("RETURNING"))?;
                let e = binder.resolve_unknown(e)?;
                cols.push(Field {
                    name: alias
                        .clone()
                        .unwrap_or_else(|| super::select::output_name(expr)),
                    ty: e.ty,
                });
                exprs.push(e);
                continue;
            }
            ast::SelectItem::Wildcard(_) => scope.wildcard(None)?,
            ast::SelectItem::QualifiedWildcard(name) => scope.wildcard(Some(&name.name))?,
        };
        for p in positions {
            let c = &scope.columns[p];
            exprs.push(Expr::column(p, c.ty));
            cols.push(Field {
                name: c.name.clone(),
                ty: c.ty,
            });
        }
    }
    Ok((exprs, cols))
}

/// The plan of an INSERT: the complete rows `exprs` over the source.
fn insert_plan(source: Plan, exprs: Vec<Expr>, table: &TableDef) -> Plan {
    Plan {
        rows: source.rows,
        fields: table
            .columns
            .iter()
            .map(|c| Field {
                name: c.name.clone(),
                ty: c.ty,
            })
            .collect(),
        node: Node::Project {
            input: Box::new(source),
            exprs,
        },
    }
}

/// The new values of an UPDATE's (or ON CONFLICT DO UPDATE's) `SET`
/// assignments, bound over `scope` and cast to their columns' types: one
/// per table column, `None` where the column keeps its value.
fn bind_assignments(
    binder: &mut Binder<'_>,
    table: &TableDef,
    assignments: &[ast::Assignment],
    scope: &Scope,
) -> Result<Vec<Option<Expr>>> {
    let ncols = table.columns.len();
    let mut new_values: Vec<Option<Expr>> = vec![None; ncols];
    for a in assignments {
        let j = table.column_index(&a.column).ok_or_else(|| {
            at(
                err!(
                    UndefinedColumn,
                    "column \"{}\" of relation \"{}\" does not exist",
                    a.column,
                    table.name
                ),
                a.offset,
            )
        })?;
        if new_values[j].is_some() {
            return Err(err!(
                SyntaxError,
                "multiple assignments to same column \"{}\"",
                a.column
            ));
        }
        let ty = table.columns[j].ty;
        let e = if matches!(a.value.kind, ast::ExprKind::Default) {
            match column_default(binder, &table.columns[j])? {
                Some(text) => {
                    let d = parse_default(&text)?;
                    binder.bind_expr(
                        &d,
                        &Scope::default(),
                        &mut Mode::NoAgg("DEFAULT expressions"),
                    )?
                }
                None => Expr::constant(Value::Null, DataType::Unknown),
            }
        } else if let (Some(km), ast::ExprKind::Subquery(q)) = (a.multi, &a.value.kind) {
            let mode = &mut Mode::NoAgg("UPDATE");
            binder.bind_multiexpr_subquery(q, km, scope, mode, a.value.offset)?
        } else {
            binder.bind_expr(&a.value, scope, &mut Mode::NoAgg("UPDATE"))?
        };
        if e.ty != DataType::Unknown
            && cast_kind(&e.ty, &ty).map_or(true, |c| c > CastContext::Assignment)
        {
            return Err(at(
                err!(
                    DatatypeMismatch,
                    "column \"{}\" is of type {ty} but expression is of type {}",
                    a.column,
                    e.ty
                )
                .with_hint("You will need to rewrite or cast the expression."),
                a.value.offset,
            ));
        }
        let e = binder.coerce(e, &ty, CastContext::Assignment, a.value.offset)?;
        new_values[j] = Some(to_column(binder, &table.columns[j], e)?);
    }
    Ok(new_values)
}

/// `INSERT has more target columns than expressions`, at the first
/// target column (the `k`-th) without one.
fn more_targets(ins: &ast::Insert, k: usize) -> crate::error::Error {
    let e = err!(
        SyntaxError,
        "INSERT has more target columns than expressions"
    );
    match ins.column_offsets.get(k) {
        Some(off) => at(e, *off),
        None => e,
    }
}

/// The rows an INSERT writes, planned: its VALUES lists (DEFAULT items
/// replaced by the column's default) or its query, cast to the target
/// columns' types; and whether to write them in bulk (a query's rows: many
/// per page, through the bulk-write ring).
fn insert_source(
    binder: &mut Binder<'_>,
    ins: &ast::Insert,
    table: &TableDef,
    targets: &[usize],
) -> Result<(Plan, bool)> {
    let target_types: Vec<DataType> = targets.iter().map(|&i| table.columns[i].ty).collect();
    let source = match &ins.source {
        None => Plan {
            rows: 1.0,
            fields: vec![],
            node: Node::Values { rows: vec![vec![]] },
        },
        Some(q) => match (
            &q.body,
            q.order_by.is_empty() && q.limit.is_none() && q.offset.is_none() && q.with.is_empty(),
        ) {
            (ast::SetExpr::Values(rows), true) => {
                let mut rows = rows.clone();
                for row in &mut rows {
                    if row.len() > targets.len() {
                        return Err(at(
                            err!(
                                SyntaxError,
                                "INSERT has more expressions than target columns"
                            ),
                            super::bind::leftmost(&row[targets.len()]),
                        ));
                    }
                    for (k, e) in row.iter_mut().enumerate() {
                        if matches!(e.kind, ast::ExprKind::Default) {
                            *e = match column_default(binder, &table.columns[targets[k]])? {
                                Some(text) => parse_default(&text)?,
                                None => ast::Expr::new(ast::ExprKind::Literal(ast::Literal::Null)),
                            };
                        }
                    }
                }
                if let [row] = &rows[..] {
                    if row.iter().any(super::select::calls_builtin_srf) {
                        // One VALUES row is a select list to PostgreSQL:
                        // a set-returning function in it expands the rows.
                        let q = values_row_as_select(row);
                        return query_source(binder, ins, table, targets, &q);
                    }
                }
                let width = rows.first().map_or(0, Vec::len);
                if !ins.columns.is_empty() && width < targets.len() {
                    return Err(more_targets(ins, width));
                }
                let names: Vec<String> = targets
                    .iter()
                    .map(|&t| table.columns[t].name.clone())
                    .collect();
                binder.plan_values(&rows, Some(&target_types[..width]), &names)?
            }
            _ => return query_source(binder, ins, table, targets, q),
        },
    };
    Ok((source, false))
}

/// The one VALUES row `row` as the query `SELECT row`.
fn values_row_as_select(row: &[ast::Expr]) -> ast::Query {
    ast::Query::simple(ast::SetExpr::Select(Box::new(ast::Select {
        distinct: false,
        distinct_on: Vec::new(),
        projection: row
            .iter()
            .map(|e| ast::SelectItem::Expr {
                expr: e.clone(),
                alias: None,
            })
            .collect(),
        from: Vec::new(),
        where_clause: None,
        group_by: Vec::new(),
        having: None,
        window: Vec::new(),
    })))
}

/// [`insert_source`] of a query: its rows cast to the target columns'
/// types, written in bulk.
fn query_source(
    binder: &mut Binder<'_>,
    ins: &ast::Insert,
    table: &TableDef,
    targets: &[usize],
    q: &ast::Query,
) -> Result<(Plan, bool)> {
    let target_types: Vec<DataType> = targets.iter().map(|&i| table.columns[i].ty).collect();
    binder.keep_unknown = true;
    let p = binder.plan_query(q)?;
    if !ins.columns.is_empty() && p.fields.len() < targets.len() {
        return Err(more_targets(ins, p.fields.len()));
    }
    if p.fields.len() > targets.len() {
        return Err(err!(
            SyntaxError,
            "INSERT has more expressions than target columns"
        ));
    }
    for (k, f) in p.fields.iter().enumerate() {
        let to = &target_types[k];
        if f.ty != DataType::Unknown
            && cast_kind(&f.ty, to).map_or(true, |c| c > CastContext::Assignment)
        {
            return Err(err!(
                DatatypeMismatch,
                "column \"{}\" is of type {to} but expression is of type {}",
                table.columns[targets[k]].name,
                f.ty
            )
            .with_hint("You will need to rewrite or cast the expression."));
        }
    }
    let width = p.fields.len();
    let source = binder.cast_outputs_in(p, &target_types[..width], CastContext::Assignment)?;
    Ok((source, true))
}

/// The complete row of `table` over the source's `provided` columns: each
/// target column from the source, else the column's default, else NULL.
fn complete_row(
    binder: &mut Binder<'_>,
    table: &TableDef,
    targets: &[usize],
    provided: usize,
) -> Result<Vec<Expr>> {
    // The complete row: provided columns, else defaults, else NULL.
    let mut exprs = Vec::with_capacity(table.columns.len());
    for (j, col) in table.columns.iter().enumerate() {
        match targets.iter().position(|&t| t == j) {
            Some(k) if k < provided => exprs.push(to_column(binder, col, Expr::column(k, col.ty))?),
            _ => {
                let e = match column_default(binder, col)? {
                    Some(text) => {
                        let ast = parse_default(&text)?;
                        let b = binder.bind_expr(
                            &ast,
                            &Scope::default(),
                            &mut Mode::NoAgg("DEFAULT expressions"),
                        )?;
                        binder.coerce(b, &col.ty, CastContext::Assignment, ast.offset)?
                    }
                    None => Expr::constant(Value::Null, col.ty),
                };
                exprs.push(to_column(binder, col, e)?);
            }
        }
    }
    Ok(exprs)
}

/// Column `col`'s new value `e` (already of its type), checked against the
/// column's domain when it has one.
fn to_column(binder: &mut Binder<'_>, col: &ColumnDef, e: Expr) -> Result<Expr> {
    match &col.domain {
        None => Ok(e),
        Some(name) => {
            let d = binder.column_domain(name)?;
            binder.coerce_to_domain(e, &d)
        }
    }
}

/// The DEFAULT expression text of column `col`: its own, else its
/// domain's.
fn column_default(binder: &mut Binder<'_>, col: &ColumnDef) -> Result<Option<String>> {
    match (&col.default, &col.domain) {
        (Some(text), _) => Ok(Some(text.clone())),
        (None, Some(name)) => {
            let d = binder.column_domain(name)?;
            binder.domain_default(&d)
        }
        (None, None) => Ok(None),
    }
}

/// The plan of an UPDATE/DELETE: `exprs` (tid, then a row) over the source
/// (the target's columns, its tuple id, then the FROM / USING items'
/// columns), followed by the FROM / USING columns that `exprs` or WHERE's
/// conjuncts `quals` (over the source) read, which READ COMMITTED's
/// re-check of a changed row holds fixed (or `returning`, bound over the
/// source when the statement has FROM / USING items, reads), then the
/// values the re-check holds as first read ([`recheck`]); and that
/// re-check. `returning` is mapped onto the written rows: the row, then
/// the held columns.
fn modify_plan(
    source: Plan,
    mut exprs: Vec<Expr>,
    table: &TableDef,
    quals: Vec<Expr>,
    mut returning: Option<&mut Vec<Expr>>,
) -> Result<(Plan, Recheck)> {
    let ncols = table.columns.len();
    let width = source.fields.len();
    let (quals, first_read) = recheck::recheck_quals(quals, width);
    let mut held = Vec::new();
    for e in exprs.iter().chain(&quals) {
        super::select::columns_used(e, &mut held);
    }
    let mut read = Vec::new();
    for e in returning.iter().flat_map(|r| r.iter()) {
        super::select::columns_used(e, &mut read);
    }
    if read.contains(&ncols) {
        return Err(err!(
            FeatureNotSupported,
            "RETURNING ctid of an UPDATE or DELETE with FROM or USING is not supported"
        ));
    }
    held.extend(read);
    held.retain(|&c| c > ncols && c < width);
    held.sort_unstable();
    held.dedup();
    if let Some(r) = returning.as_mut() {
        for e in r.iter_mut() {
            onto_written_rows(e, ncols, &held);
        }
    }
    let mut fields = vec![Field {
        name: "ctid".into(),
        ty: DataType::Int8,
    }];
    fields.extend(table.columns.iter().map(|c| Field {
        name: c.name.clone(),
        ty: c.ty,
    }));
    for &k in &held {
        let f = &source.fields[k];
        exprs.push(Expr::column(k, f.ty));
        fields.push(f.clone());
    }
    for e in &first_read {
        fields.push(Field {
            name: "?column?".into(),
            ty: e.ty,
        });
    }
    let recheck = Recheck::of(quals, held).holding(width, first_read.len());
    exprs.extend(first_read);
    let plan = Plan {
        rows: source.rows,
        fields,
        node: Node::Project {
            input: Box::new(source),
            exprs,
        },
    };
    Ok((plan, recheck))
}

/// `e`, over the source row, as over a written row: the row's `ncols`
/// columns, then the `held` source columns.
fn onto_written_rows(e: &mut Expr, ncols: usize, held: &[usize]) {
    if let crate::exec::expr::ExprKind::Column(c) = &mut e.kind {
        if *c > ncols {
            *c = ncols + held.binary_search(c).unwrap_or_default();
        }
        return;
    }
    for child in e.children_mut() {
        onto_written_rows(child, ncols, held);
    }
}

/// The positions of the arbiter indexes of `oc` in `table.indexes`.
/// A partial unique index arbitrates only when the inference clause's
/// `WHERE` implies its predicate; a full one whatever the `WHERE` says
/// (PostgreSQL's `infer_arbiter_indexes`).
pub fn arbiter_indexes(
    table: &TableDef,
    oc: &ast::OnConflict,
    settings: &crate::settings::Settings,
) -> Result<Vec<usize>> {
    let none = || {
        err!(
            InvalidColumnReference,
            "there is no unique or exclusion constraint matching the ON CONFLICT specification"
        )
    };
    match &oc.target {
        ast::ConflictTarget::Any => {
            if matches!(oc.action, ast::ConflictAction::Update { .. }) {
                return Err(at(
                    err!(
                        SyntaxError,
                        "ON CONFLICT DO UPDATE requires inference specification or constraint name"
                    )
                    .with_hint("For example, ON CONFLICT (column_name)."),
                    oc.offset,
                ));
            }
            Ok((0..table.indexes.len())
                .filter(|&p| table.indexes[p].unique)
                .collect())
        }
        ast::ConflictTarget::Columns(elems, predicate) => {
            let quals = match predicate {
                Some(p) => {
                    let e = super::indexpred::bind_inference(settings, table, p)?;
                    let mut parts = Vec::new();
                    super::quals::conjuncts(e, &mut parts);
                    parts
                }
                None => Vec::new(),
            };
            let mut want = Vec::with_capacity(elems.len());
            for e in elems {
                let c = table.column_index(&e.column).ok_or_else(|| {
                    at(
                        err!(UndefinedColumn, "column \"{}\" does not exist", e.column),
                        e.offset,
                    )
                })?;
                want.push(c);
            }
            want.sort_unstable();
            want.dedup();
            let found: Vec<usize> = (0..table.indexes.len())
                .filter(|&p| {
                    let ix = &table.indexes[p];
                    let mut have: Vec<usize> = ix.columns.iter().map(|c| c.column).collect();
                    have.sort_unstable();
                    have.dedup();
                    ix.unique
                        && have == want
                        && ix
                            .predicate
                            .as_ref()
                            .map_or(true, |p| super::indexpred::implied_by(&p.expr, &quals))
                })
                .collect();
            if found.is_empty() {
                return Err(none());
            }
            Ok(found)
        }
        ast::ConflictTarget::Constraint(name) => table
            .indexes
            .iter()
            .position(|ix| ix.constraint && &ix.name == name)
            .map(|p| vec![p])
            .ok_or_else(|| {
                err!(
                    UndefinedObject,
                    "constraint \"{name}\" for table \"{}\" does not exist",
                    table.name
                )
            }),
    }
}

/// The scope of `DO UPDATE`'s expressions: the target (by its alias when
/// it has one), then `excluded`, both with every column of the table.
fn update_scope(table: &TableDef, alias: &str) -> Result<Scope> {
    let cols = || table.columns.iter().map(|c| (c.name.clone(), c.ty));
    let mut target = Scope::of(alias, cols());
    if alias != table.name {
        target.items = vec![ScopeItem {
            name: alias.to_string(),
            hidden_table: Some(table.name.clone()),
        }];
    }
    target.join(&Scope::of("excluded", cols()))
}
