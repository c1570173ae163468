//! INSERT, UPDATE and DELETE through automatically updatable views
//! (PostgreSQL's `rewriteTargetView` and `view_query_is_auto_updatable`).
//!
//! A view can be written through when its query is one plain SELECT from
//! a single table or view, without DISTINCT, GROUP BY, HAVING, WITH,
//! LIMIT/OFFSET, set operations, aggregates or set-returning functions;
//! its columns that are plain column references of that relation can be
//! assigned, the others only read. A view over a view is written through
//! both, down to the table ([`view_chain`]); any other view gets
//! PostgreSQL's 55000 naming the reason.
//!
//! The statement is planned against the table: an INSERT's view columns
//! become the table columns they are (the table's other columns get their
//! defaults); an UPDATE's or DELETE's `WHERE` and `SET` values, bound over
//! the view's columns, read the view columns' expressions over the table's
//! row, and every view's `WHERE` is added to it; RETURNING returns the
//! view's columns. The views' `WITH CHECK OPTION` conditions go with the
//! plan for the executor to test on each new row.
//!
//! Invariant: a write through a view changes exactly what the same write
//! on the table, with the views' conditions added to its `WHERE`, changes.

use std::collections::HashSet;
use std::sync::Arc;

use heapdb_grammar::ast;

use super::super::bind::{at, contains_aggregate, walk, Binder, Mode};
use super::super::scope::Scope;
use super::super::select::view::{substitute, to_source, view_scope, NotUpdatable, ViewTarget};
use super::super::PlanContext;
use super::{complete_row, insert_plan, insert_source, modify_plan, ModifyPlan};
use crate::catalog::ViewDef;
use crate::err;
use crate::error::{Error, Result};
use crate::exec::expr::Expr;
use crate::exec::modify::upsert::UpdateAction;
use crate::nodes::Field;
use crate::types::cast::{cast_kind, CastContext};
use crate::types::{DataType, Value};

/// The statement writing through a view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteKind {
    /// INSERT.
    Insert,
    /// UPDATE.
    Update,
    /// DELETE.
    Delete,
}

impl WriteKind {
    /// `insert into`, `update`, `delete from`: the verb of the errors.
    fn verb(self) -> &'static str {
        match self {
            WriteKind::Insert => "insert into",
            WriteKind::Update => "update",
            WriteKind::Delete => "delete from",
        }
    }
}

const SINGLE: &str =
    "Views that do not select from a single table or view are not automatically updatable.";

/// Why a view's query cannot be written through, as PostgreSQL's
/// `view_query_is_auto_updatable` words it (in its order); `None` for a
/// simple view. `check_cols` (INSERT and UPDATE) also wants a column
/// that can be assigned.
pub fn not_updatable_reason(q: &ast::Query, check_cols: bool) -> Option<&'static str> {
    let s = match &q.body {
        ast::SetExpr::Select(s) => s,
        ast::SetExpr::SetOp { .. } => {
            return Some(
                "Views containing UNION, INTERSECT, or EXCEPT are not automatically updatable.",
            )
        }
        _ => return Some(SINGLE),
    };
    if s.distinct {
        return Some("Views containing DISTINCT are not automatically updatable.");
    }
    if !s.group_by.is_empty() {
        return Some("Views containing GROUP BY are not automatically updatable.");
    }
    if s.having.is_some() {
        return Some("Views containing HAVING are not automatically updatable.");
    }
    if !q.with.is_empty() {
        return Some("Views containing WITH are not automatically updatable.");
    }
    if q.limit.is_some() || q.offset.is_some() {
        return Some("Views containing LIMIT or OFFSET are not automatically updatable.");
    }
    let items = || {
        s.projection.iter().filter_map(|item| match item {
            ast::SelectItem::Expr { expr, .. } => Some(expr),
            _ => None,
        })
    };
    if items().any(contains_aggregate) {
        return Some("Views that return aggregate functions are not automatically updatable.");
    }
    if items().any(returns_set) {
        return Some("Views that return set-returning functions are not automatically updatable.");
    }
    if s.from.len() != 1 || !matches!(s.from[0], ast::TableRef::Table { .. }) {
        return Some(SINGLE);
    }
    let plain = |item: &ast::SelectItem| match item {
        ast::SelectItem::Expr { expr, .. } => matches!(expr.kind, ast::ExprKind::Column(_)),
        _ => true,
    };
    if check_cols && !s.projection.iter().any(plain) {
        return Some("Views that have no updatable columns are not automatically updatable.");
    }
    None
}

/// Whether `e` calls a set-returning function (outside subqueries).
fn returns_set(e: &ast::Expr) -> bool {
    let mut found = false;
    walk(e, &mut |x| {
        if let ast::ExprKind::Function(f) = &x.kind {
            if f.name.schema.is_none() && f.name.name == "generate_series" {
                found = true;
            }
        }
    });
    found
}

/// PostgreSQL's error for `kind` on view `view`, which cannot be written
/// through for `reason`.
pub fn not_updatable(view: &str, kind: WriteKind, reason: &str) -> Error {
    let (action, on) = match kind {
        WriteKind::Insert => ("inserting into", "INSERT"),
        WriteKind::Update => ("updating", "UPDATE"),
        WriteKind::Delete => ("deleting from", "DELETE"),
    };
    err!(
        ObjectNotInPrerequisiteState,
        "cannot {} view \"{view}\"",
        kind.verb()
    )
    .with_detail(reason)
    .with_hint(format!(
        "To enable {action} the view, provide an INSTEAD OF {on} trigger or an unconditional ON {on} DO INSTEAD rule."
    ))
}

/// The views a write through `view` passes, `view` first, and the name of
/// the table under the last; PostgreSQL's error for the first that cannot
/// be written through.
pub fn view_chain(
    ctx: &dyn PlanContext,
    view: Arc<ViewDef>,
    kind: WriteKind,
) -> Result<(Vec<Arc<ViewDef>>, String)> {
    let mut chain: Vec<Arc<ViewDef>> = Vec::new();
    let mut v = view;
    loop {
        if chain.iter().any(|c| c.oid == v.oid) {
            return Err(err!(
                InvalidObjectDefinition,
                "infinite recursion detected in rules for relation \"{}\"",
                v.name
            ));
        }
        if let Some(reason) = not_updatable_reason(&v.query, kind != WriteKind::Delete) {
            return Err(not_updatable(&v.name, kind, reason));
        }
        let base = match &v.query.body {
            ast::SetExpr::Select(s) => match &s.from[..] {
                [ast::TableRef::Table { name, .. }] => name.name.clone(),
                _ => return Err(not_updatable(&v.name, kind, SINGLE)),
            },
            _ => return Err(not_updatable(&v.name, kind, SINGLE)),
        };
        chain.push(v);
        match ctx.view(&base) {
            Some(inner) => v = inner,
            None => return Ok((chain, base)),
        }
    }
}

/// PostgreSQL's error for writing view column `c` (`verb`: `insert into`
/// or `update`).
fn column_error(c: &NotUpdatable, verb: &str) -> Error {
    err!(
        FeatureNotSupported,
        "cannot {verb} column \"{}\" of view \"{}\"",
        c.column,
        c.view
    )
    .with_detail(c.detail)
}

/// The positions of the view columns an INSERT's column list names (all
/// of them when it is empty), with PostgreSQL's errors.
fn view_columns(view: &ViewDef, names: &[String]) -> Result<Vec<usize>> {
    if names.is_empty() {
        return Ok((0..view.columns.len()).collect());
    }
    let mut seen = HashSet::new();
    let mut out = Vec::with_capacity(names.len());
    for c in names {
        let i = view
            .columns
            .iter()
            .position(|v| &v.name == c)
            .ok_or_else(|| {
                err!(
                    UndefinedColumn,
                    "column \"{c}\" of relation \"{}\" does not exist",
                    view.name
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

/// How many columns an INSERT's rows have.
fn source_width(binder: &mut Binder<'_>, ins: &ast::Insert) -> Result<usize> {
    let Some(q) = &ins.source else {
        return Ok(0);
    };
    if let ast::SetExpr::Values(rows) = &q.body {
        if q.order_by.is_empty() && q.limit.is_none() && q.offset.is_none() && q.with.is_empty() {
            return Ok(rows.first().map_or(0, Vec::len));
        }
    }
    binder.keep_unknown = true;
    Ok(binder.plan_query(q)?.fields.len())
}

/// The table column of each view column the INSERT writes, checked.
fn insert_targets(
    binder: &mut Binder<'_>,
    ins: &ast::Insert,
    vt: &ViewTarget,
) -> Result<Vec<usize>> {
    let named = view_columns(&vt.view, &ins.columns)?;
    let all_plain = vt.columns.iter().all(|c| c.is_ok());
    let written = if !ins.columns.is_empty() || all_plain {
        named.len()
    } else {
        source_width(binder, ins)?.min(named.len())
    };
    let mut targets = Vec::with_capacity(written);
    for &i in &named[..written] {
        match &vt.columns[i] {
            Ok(j) => {
                if targets.contains(j) {
                    return Err(err!(
                        SyntaxError,
                        "multiple assignments to same column \"{}\"",
                        vt.table.columns[*j].name
                    ));
                }
                targets.push(*j);
            }
            Err(c) => return Err(column_error(c, "insert into")),
        }
    }
    Ok(targets)
}

/// INSERT (without ON CONFLICT) through the view of `vt`.
pub fn plan_insert(
    binder: &mut Binder<'_>,
    ins: &ast::Insert,
    vt: &ViewTarget,
) -> Result<ModifyPlan> {
    let table = &vt.table;
    let targets = insert_targets(binder, ins, vt)?;
    let (source, bulk) = insert_source(binder, ins, table, &targets)?;
    let exprs = complete_row(binder, table, &targets, source.fields.len())?;
    let alias = ins.alias.clone().unwrap_or_else(|| vt.view.name.clone());
    let (returning, returning_fields) = returning(binder, &ins.returning, vt, &alias)?;
    Ok(ModifyPlan {
        plan: insert_plan(source, exprs, table),
        bulk,
        returning,
        returning_fields,
        checks: vt.checks.clone(),
        recheck: None,
    })
}

/// `INSERT ... ON CONFLICT` through the view of `vt`: the rows proposed,
/// the table's arbiter indexes (the conflict target's view columns read
/// as the table's) and the bound `DO UPDATE` (`None` for DO NOTHING),
/// whose expressions see the view's columns of the existing row and of
/// `excluded`.
pub fn plan_upsert(
    binder: &mut Binder<'_>,
    ins: &ast::Insert,
    oc: &ast::OnConflict,
    vt: &ViewTarget,
) -> Result<(ModifyPlan, Vec<usize>, Option<UpdateAction>)> {
    let table = &vt.table;
    let mut target = oc.clone();
    if let ast::ConflictTarget::Columns(elems, _) = &mut target.target {
        for e in elems.iter_mut() {
            let i = vt.view.columns.iter().position(|c| c.name == e.column);
            if let Some(Ok(j)) = i.map(|i| &vt.columns[i]) {
                e.column = table.columns[*j].name.clone();
            } else if i.is_none() {
                return Err(at(
                    err!(UndefinedColumn, "column \"{}\" does not exist", e.column),
                    e.offset,
                ));
            }
        }
    }
    let arbiters = super::arbiter_indexes(table, &target, binder.ctx.settings())?;
    let targets = insert_targets(binder, ins, vt)?;
    let (source, _) = insert_source(binder, ins, table, &targets)?;
    let exprs = complete_row(binder, table, &targets, source.fields.len())?;
    let alias = ins.alias.clone().unwrap_or_else(|| vt.view.name.clone());
    let action = match &oc.action {
        ast::ConflictAction::Nothing => None,
        ast::ConflictAction::Update {
            assignments: sets,
            where_clause,
        } => {
            let cols = vt
                .view
                .columns
                .iter()
                .zip(&vt.exprs)
                .map(|(c, e)| (c.name.clone(), e.ty));
            let scope = view_scope(vt, &alias).join(&Scope::of("excluded", cols))?;
            // The existing row's view columns, then the proposed row's.
            let nbase = table.columns.len();
            let mut by = vt.exprs.clone();
            for e in &vt.exprs {
                let mut e = e.clone();
                super::super::select::remap_columns(&mut e, &|c| c + nbase);
                by.push(e);
            }
            let map = |e: &mut Expr| substitute(e, &by);
            let bound = Bound {
                verb: "insert into",
                map: &map,
            };
            let new_values = assignments(binder, vt, sets, &scope, &bound)?;
            let condition = match where_clause {
                Some(w) => {
                    let mut c =
                        binder.bind_condition(w, &scope, &mut Mode::NoAgg("WHERE"), "WHERE")?;
                    map(&mut c);
                    Some(c)
                }
                None => None,
            };
            Some(UpdateAction {
                new_values,
                condition,
            })
        }
    };
    let (returning, returning_fields) = returning(binder, &ins.returning, vt, &alias)?;
    let plan = ModifyPlan {
        plan: insert_plan(source, exprs, table),
        bulk: false,
        returning,
        returning_fields,
        checks: vt.checks.clone(),
        recheck: None,
    };
    Ok((plan, arbiters, action))
}

/// UPDATE through the view of `vt`.
pub fn plan_update(
    binder: &mut Binder<'_>,
    u: &ast::Update,
    vt: &ViewTarget,
) -> Result<ModifyPlan> {
    let alias = u.alias.clone().unwrap_or_else(|| vt.view.name.clone());
    let (source, scope, quals) =
        binder.plan_view_modify_source(vt, &alias, &u.from, u.where_clause.as_ref())?;
    let table = &vt.table;
    let bound = Bound {
        verb: "update",
        map: &|e| to_source(e, vt),
    };
    let new_values = assignments(binder, vt, &u.assignments, &scope, &bound)?;
    let (returning, returning_fields) = returning(binder, &u.returning, vt, &alias)?;
    let ncols = table.columns.len();
    let mut exprs = vec![Expr::column(ncols, DataType::Int8)];
    for (j, v) in new_values.into_iter().enumerate() {
        exprs.push(v.unwrap_or_else(|| Expr::column(j, table.columns[j].ty)));
    }
    let (plan, recheck) = modify_plan(source, exprs, table, quals, None)?;
    Ok(ModifyPlan {
        plan,
        bulk: false,
        returning,
        returning_fields,
        checks: vt.checks.clone(),
        recheck: Some(recheck),
    })
}

/// DELETE through the view of `vt`.
pub fn plan_delete(
    binder: &mut Binder<'_>,
    d: &ast::Delete,
    vt: &ViewTarget,
) -> Result<ModifyPlan> {
    let alias = d.alias.clone().unwrap_or_else(|| vt.view.name.clone());
    let (source, _, quals) =
        binder.plan_view_modify_source(vt, &alias, &d.using, d.where_clause.as_ref())?;
    let (returning, returning_fields) = returning(binder, &d.returning, vt, &alias)?;
    let table = &vt.table;
    let mut exprs = vec![Expr::column(table.columns.len(), DataType::Int8)];
    for (j, c) in table.columns.iter().enumerate() {
        exprs.push(Expr::column(j, c.ty));
    }
    let (plan, recheck) = modify_plan(source, exprs, table, quals, None)?;
    Ok(ModifyPlan {
        plan,
        bulk: false,
        returning,
        returning_fields,
        checks: Vec::new(),
        recheck: Some(recheck),
    })
}

/// How the values of `SET` are read: the verb of a computed column's
/// error, and the rewriting of an expression bound over the statement's
/// scope into one over the rows it runs on.
struct Bound<'a> {
    verb: &'static str,
    map: &'a dyn Fn(&mut Expr),
}

/// An UPDATE's `SET` through a view: per table column, its new value
/// over the source rows (`None`: unchanged), with PostgreSQL's errors for
/// an unknown, a repeated or a computed view column.
fn assignments(
    binder: &mut Binder<'_>,
    vt: &ViewTarget,
    assignments: &[ast::Assignment],
    scope: &Scope,
    bound: &Bound<'_>,
) -> Result<Vec<Option<Expr>>> {
    let table = &vt.table;
    let mut new_values: Vec<Option<Expr>> = vec![None; table.columns.len()];
    for a in assignments {
        let i = vt
            .view
            .columns
            .iter()
            .position(|c| c.name == a.column)
            .ok_or_else(|| {
                at(
                    err!(
                        UndefinedColumn,
                        "column \"{}\" of relation \"{}\" does not exist",
                        a.column,
                        vt.view.name
                    ),
                    a.offset,
                )
            })?;
        let j = match &vt.columns[i] {
            Ok(j) => *j,
            Err(c) => return Err(column_error(c, bound.verb)),
        };
        if new_values[j].is_some() {
            return Err(err!(
                SyntaxError,
                "multiple assignments to same column \"{}\"",
                table.columns[j].name
            ));
        }
        let ty = table.columns[j].ty;
        // A view column has no default of its own: `SET c = DEFAULT` sets
        // NULL, as PostgreSQL's rewriter does for a view column without one.
        let e = if matches!(a.value.kind, ast::ExprKind::Default) {
            Expr::constant(Value::Null, DataType::Unknown)
        } else {
            let mode = &mut Mode::NoAgg("UPDATE");
            let mut e = match (a.multi, &a.value.kind) {
                (Some(km), ast::ExprKind::Subquery(q)) => {
                    binder.bind_multiexpr_subquery(q, km, scope, mode, a.value.offset)?
                }
                _ => binder.bind_expr(&a.value, scope, mode)?,
            };
            (bound.map)(&mut e);
            e
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
        new_values[j] = Some(binder.coerce(e, &ty, CastContext::Assignment, a.value.offset)?);
    }
    Ok(new_values)
}

/// RETURNING through a view: its items bound over the view's columns,
/// read from the written table row.
fn returning(
    binder: &mut Binder<'_>,
    items: &[ast::SelectItem],
    vt: &ViewTarget,
    alias: &str,
) -> Result<(Vec<Expr>, Vec<Field>)> {
    let scope = view_scope(vt, alias);
    let mut exprs = Vec::new();
    let mut fields = Vec::new();
    for item in items {
        match item {
            ast::SelectItem::Expr { expr, alias } => {
                let e = binder.bind_expr(expr, &scope, &mut Mode::NoAgg("RETURNING"))?;
                let mut e = binder.resolve_unknown(e)?;
                to_source(&mut e, vt);
                fields.push(Field {
                    name: alias
                        .clone()
                        .unwrap_or_else(|| super::super::select::output_name(expr)),
                    ty: e.ty,
                });
                exprs.push(e);
            }
            ast::SelectItem::Wildcard(_) | ast::SelectItem::QualifiedWildcard(_) => {
                for (c, e) in vt.view.columns.iter().zip(&vt.exprs) {
                    fields.push(Field {
                        name: c.name.clone(),
                        ty: e.ty,
                    });
                    exprs.push(e.clone());
                }
            }
        }
    }
    Ok((exprs, fields))
}
