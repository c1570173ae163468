//! Views in FROM, expanded as PostgreSQL's rewriter expands them: the
//! view's stored query takes the place of its name, planned as a subquery
//! in FROM (`SELECT ... FROM v` plans as `SELECT ... FROM (query) v`).
//!
//! A view written through (INSERT, UPDATE, DELETE on an automatically
//! updatable view, PostgreSQL's `rewriteTargetView`) is bound here too, down
//! to the table beneath it ([`ViewTarget`]): each view column as an
//! expression over the table's row and the table column it is (if it is
//! one), every view's `WHERE` over the table's row, and the check options
//! that apply. The statement's source rows for UPDATE and DELETE are the
//! table's, filtered by the views' conditions and the statement's own
//! `WHERE` bound over the view's columns
//! ([`Binder::plan_view_modify_source`]).
//!
//! The query is bound afresh at every use, in a scope of its own: the
//! statement's CTEs and outer queries are not visible inside it (a view's
//! names were resolved when it was created, against the catalog alone).
//! Its output columns take the view's column names; an alias and alias
//! column list apply on top, as for a table.

use std::sync::Arc;

use heapdb_grammar::ast;

use super::super::bind::{at, contains_aggregate, Binder, Mode};
use super::super::scope::{Scope, ScopeColumn, ScopeItem};
use super::from::{collect_join_conditions, derived};
use super::{conjuncts, Item, Needed};
use crate::catalog::{TableDef, ViewDef};
use crate::err;
use crate::error::Result;
use crate::exec::modify::ViewCheck;
use crate::nodes::expr::{Expr, ExprKind};
use crate::nodes::Plan;
use crate::types::DataType;

/// Why a view column cannot be written: PostgreSQL's `cannot insert into
/// column "c" of view "v"` names this view and column, with `detail`.
#[derive(Debug, Clone, PartialEq)]
pub struct NotUpdatable {
    /// The view whose column it is (the outermost one that is not a plain
    /// column of the relation beneath).
    pub view: String,
    /// The column's name in that view.
    pub column: String,
    /// PostgreSQL's DETAIL line.
    pub detail: &'static str,
}

/// A view an INSERT, UPDATE or DELETE writes through, bound down to the
/// table beneath it (through any views in between).
pub struct ViewTarget {
    /// The view the statement names.
    pub view: Arc<ViewDef>,
    /// The table the rows are written to.
    pub table: Arc<TableDef>,
    /// Each view column, over the table's row.
    pub exprs: Vec<Expr>,
    /// Each view column's table column, or why it cannot be written.
    pub columns: Vec<std::result::Result<usize, NotUpdatable>>,
    /// Every view's `WHERE` on the way down, over the table's row: an
    /// UPDATE or DELETE sees only the rows they admit.
    pub quals: Vec<Expr>,
    /// The check options a written row must pass, innermost view first
    /// (the order PostgreSQL tests them in).
    pub checks: Vec<ViewCheck>,
}

/// The name the table scan of a write through a view goes by in the
/// statement's scope: no SQL name reaches it.
const TARGET_ITEM: &str = "\u{1}view target";

/// Rewrites `e`, bound over the view's columns, to read the table's row:
/// each column reference becomes the view column's expression.
pub fn substitute(e: &mut Expr, by: &[Expr]) {
    if let ExprKind::Column(i) = e.kind {
        if let Some(x) = by.get(i) {
            *e = x.clone();
        }
        return;
    }
    for c in e.children_mut() {
        substitute(c, by);
    }
}

/// Rewrites `e`, bound over `[view columns, tuple id, other FROM items]`,
/// to read the source `[table columns, tuple id, other FROM items]`.
pub fn to_source(e: &mut Expr, vt: &ViewTarget) {
    let (nview, nbase) = (vt.exprs.len(), vt.table.columns.len());
    if let ExprKind::Column(i) = e.kind {
        if i < nview {
            *e = vt.exprs[i].clone();
        } else {
            e.kind = ExprKind::Column(i - nview + nbase);
        }
        return;
    }
    for c in e.children_mut() {
        to_source(c, vt);
    }
}

/// The scope a write through `vt` binds its expressions in: the view's
/// columns under `alias` (the view's name hidden behind an alias, as for
/// a table).
pub fn view_scope(vt: &ViewTarget, alias: &str) -> Scope {
    let cols = vt
        .view
        .columns
        .iter()
        .zip(&vt.exprs)
        .map(|(c, e)| (c.name.clone(), e.ty));
    let mut scope = Scope::of(alias, cols);
    if alias != vt.view.name {
        scope.items = vec![ScopeItem {
            name: alias.to_string(),
            hidden_table: Some(vt.view.name.clone()),
        }];
    }
    scope
}

impl Binder<'_> {
    /// The FROM item of view `view` named as `name` (with `alias`).
    pub(super) fn plan_view(
        &mut self,
        view: &ViewDef,
        name: &ast::ObjectName,
        alias: Option<&ast::TableAlias>,
    ) -> Result<Item> {
        let _expanding = Expanding::enter(view)?;
        let ctes = std::mem::take(&mut self.ctes);
        let outer = std::mem::take(&mut self.outer);
        let keep_unknown = std::mem::replace(&mut self.keep_unknown, false);
        let planned = self.plan_query(&view.query);
        self.ctes = ctes;
        self.outer = outer;
        self.keep_unknown = keep_unknown;
        // A position would point into the view's text, not the statement's.
        let mut plan = planned.map_err(|mut e| {
            e.position = None;
            e
        })?;
        if plan.fields.len() < view.columns.len() {
            return Err(err!(
                InternalError,
                "view \"{}\" returns fewer columns than it defines",
                view.name
            ));
        }
        // A view's columns are those it was created with (a wildcard was
        // expanded then).
        if plan.fields.len() > view.columns.len() {
            let exprs = (0..view.columns.len())
                .map(|i| crate::nodes::expr::Expr::column(i, plan.fields[i].ty))
                .collect();
            let names = view.columns.iter().map(|c| c.name.clone()).collect();
            plan = super::project(plan, exprs, names);
        }
        let qualifier = alias.map_or_else(|| name.name.clone(), |a| a.name.clone());
        let mut columns: Vec<String> = view.columns.iter().map(|c| c.name.clone()).collect();
        if let Some(a) = alias {
            if a.columns.len() > columns.len() {
                return Err(err!(
                    InvalidColumnReference,
                    "table \"{}\" has {} columns available but {} columns specified",
                    qualifier,
                    columns.len(),
                    a.columns.len()
                ));
            }
            for (c, a) in columns.iter_mut().zip(&a.columns) {
                *c = a.clone();
            }
        }
        let mut item = derived(
            plan,
            &ast::TableAlias {
                name: qualifier,
                columns,
            },
        )?;
        if alias.is_some() {
            item.scope.items[0].hidden_table = Some(name.name.clone());
        }
        Ok(item)
    }
}

impl Binder<'_> {
    /// Binds the views of `chain` (the view written through first, each
    /// reading the next, the last reading `table`) down to `table`.
    pub fn bind_view_target(
        &mut self,
        chain: &[Arc<ViewDef>],
        table: Arc<TableDef>,
    ) -> Result<ViewTarget> {
        let ctes = std::mem::take(&mut self.ctes);
        let outer = std::mem::take(&mut self.outer);
        let keep_unknown = std::mem::replace(&mut self.keep_unknown, false);
        let bound = self.bind_chain(chain, table);
        self.ctes = ctes;
        self.outer = outer;
        self.keep_unknown = keep_unknown;
        // A position would point into a view's text, not the statement's.
        bound.map_err(|mut e| {
            e.position = None;
            e
        })
    }

    fn bind_chain(&mut self, chain: &[Arc<ViewDef>], table: Arc<TableDef>) -> Result<ViewTarget> {
        let Some(first) = chain.first() else {
            return Err(err!(InternalError, "a write through no view"));
        };
        let mut names: Vec<String> = table.columns.iter().map(|c| c.name.clone()).collect();
        let mut exprs: Vec<Expr> = (table.columns.iter().enumerate())
            .map(|(j, c)| Expr::column(j, c.ty))
            .collect();
        let mut columns: Vec<std::result::Result<usize, NotUpdatable>> =
            (0..table.columns.len()).map(Ok).collect();
        // Each view's condition over the table's row, innermost first.
        let mut quals: Vec<Option<Expr>> = Vec::with_capacity(chain.len());
        for view in chain.iter().rev() {
            let _expanding = Expanding::enter(view)?;
            let level = self.bind_level(view, &names, &exprs, &columns)?;
            names = view.columns.iter().map(|c| c.name.clone()).collect();
            exprs = level.0;
            columns = level.1;
            quals.push(level.2);
        }
        // Outermost first: a CASCADED check option makes every view beneath
        // check its own condition too; LOCAL only the view's own.
        let mut checks = Vec::new();
        let mut cascaded = false;
        for (view, qual) in chain.iter().zip(quals.iter().rev()) {
            let has = cascaded || view.check_option.is_some();
            cascaded |= view.check_option == Some(ast::CheckOption::Cascaded);
            if let (true, Some(q)) = (has, qual) {
                checks.insert(
                    0,
                    ViewCheck {
                        view: view.name.clone(),
                        condition: q.clone(),
                    },
                );
            }
        }
        Ok(ViewTarget {
            view: first.clone(),
            table,
            exprs,
            columns,
            quals: quals.into_iter().flatten().collect(),
            checks,
        })
    }

    /// One view of a chain over the relation beneath it (its columns
    /// `names`, read as `below` from the table's row, each the table column
    /// `below_cols`): the view's columns over the table's row, the table
    /// column each is, and its condition over the table's row.
    #[allow(clippy::type_complexity)]
    fn bind_level(
        &mut self,
        view: &ViewDef,
        names: &[String],
        below: &[Expr],
        below_cols: &[std::result::Result<usize, NotUpdatable>],
    ) -> Result<(
        Vec<Expr>,
        Vec<std::result::Result<usize, NotUpdatable>>,
        Option<Expr>,
    )> {
        let bad = || err!(InternalError, "view \"{}\" is not a simple view", view.name);
        let ast::SetExpr::Select(s) = &view.query.body else {
            return Err(bad());
        };
        let [ast::TableRef::Table { name, alias, .. }] = &s.from[..] else {
            return Err(bad());
        };
        let qualifier = alias.as_ref().map_or(&name.name, |a| &a.name);
        let mut scope_names = names.to_vec();
        if let Some(a) = alias {
            for (n, c) in scope_names.iter_mut().zip(&a.columns) {
                *n = c.clone();
            }
        }
        let scope = Scope::of(
            qualifier,
            scope_names.into_iter().zip(below.iter().map(|e| e.ty)),
        );
        let mut exprs = Vec::with_capacity(view.columns.len());
        let mut columns = Vec::with_capacity(view.columns.len());
        for item in &s.projection {
            match item {
                ast::SelectItem::Expr { expr, .. } => {
                    let b = self.bind_expr(expr, &scope, &mut Mode::NoAgg("a view"))?;
                    let mut b = self.resolve_unknown(b)?;
                    let column = match (&expr.kind, &b.kind) {
                        (ast::ExprKind::Column(_), ExprKind::Column(k)) => below_cols[*k].clone(),
                        _ => Err(NotUpdatable {
                            view: view.name.clone(),
                            column: view
                                .columns
                                .get(exprs.len())
                                .map_or_else(String::new, |c| c.name.clone()),
                            detail: "View columns that are not columns of their base relation are not updatable.",
                        }),
                    };
                    substitute(&mut b, below);
                    exprs.push(b);
                    columns.push(column);
                }
                ast::SelectItem::Wildcard(_) | ast::SelectItem::QualifiedWildcard(_) => {
                    exprs.extend(below.iter().cloned());
                    columns.extend(below_cols.iter().cloned());
                }
            }
        }
        if exprs.len() < view.columns.len() {
            return Err(err!(
                InternalError,
                "view \"{}\" returns fewer columns than it defines",
                view.name
            ));
        }
        exprs.truncate(view.columns.len());
        columns.truncate(view.columns.len());
        let qual = match &s.where_clause {
            Some(w) => {
                let mut q = self.bind_condition(w, &scope, &mut Mode::NoAgg("WHERE"), "WHERE")?;
                substitute(&mut q, below);
                Some(q)
            }
            None => None,
        };
        Ok((exprs, columns, qual))
    }

    /// The rows an UPDATE or DELETE through `vt` changes, planned: the
    /// table's rows (its columns, then the tuple id, then the columns of
    /// the other FROM items) that the views' conditions and the
    /// statement's `where_clause` admit. Also the scope the statement's
    /// expressions bind in: the view's columns under `alias`, an
    /// unreachable tuple id, then the other FROM items; [`to_source`]
    /// turns what is bound in it into expressions over the rows. And the
    /// conditions (the views' and WHERE's) over the rows, for READ
    /// COMMITTED's re-check of a row's newest version.
    pub fn plan_view_modify_source(
        &mut self,
        vt: &ViewTarget,
        alias: &str,
        from: &[ast::TableRef],
        where_clause: Option<&ast::Expr>,
    ) -> Result<(Plan, Scope, Vec<Expr>)> {
        let table = vt.table.clone();
        let all: Vec<usize> = (0..table.columns.len()).collect();
        let tid = || ScopeColumn {
            qualifier: Some(TARGET_ITEM.to_string()),
            name: "\u{1}ctid".into(),
            ty: DataType::Int8,
            hidden: true,
            merged: false,
        };
        let mut base = Scope::of(
            TARGET_ITEM,
            table.columns.iter().map(|c| (c.name.clone(), c.ty)),
        );
        base.columns.push(tid());
        let plan = self.scan_plan(table.clone(), &table.name, all, true);
        let mut items = vec![Item { plan, scope: base }];
        let mut needed = Needed {
            star: true,
            ..Needed::default()
        };
        for t in from {
            collect_join_conditions(t, &mut needed);
            items.push(self.plan_table_ref(t, &needed)?);
        }
        let mut scope = view_scope(vt, alias);
        scope.columns.push(tid());
        for it in &items[1..] {
            scope = scope.join(&it.scope)?;
        }
        let mut on = vt.quals.clone();
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
            let mut conds = Vec::new();
            conjuncts(w, &mut conds);
            for c in &conds {
                self.mark_semi_joins = true;
                let b = self.bind_condition(c, &scope, &mut Mode::NoAgg("WHERE"), "WHERE");
                self.mark_semi_joins = false;
                let mut b = b?;
                to_source(&mut b, vt);
                on.push(b);
            }
        }
        let quals = on.clone();
        let (mut plan, _) = self.join_items(items, None, on)?;
        super::super::quals::order_quals(&mut plan);
        super::super::indexpath::use_indexes(&mut plan, &*self.ctx);
        Ok((plan, scope, quals))
    }
}

thread_local! {
    /// The views being expanded by this thread's planner, outermost first.
    static EXPANDING: std::cell::RefCell<Vec<u32>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// A view's place on the expansion stack, taken off when dropped. A view
/// met again inside its own expansion (views may be replaced into a cycle,
/// as PostgreSQL allows) is PostgreSQL's 42P17 at use.
struct Expanding(u32);

impl Expanding {
    fn enter(view: &ViewDef) -> Result<Expanding> {
        EXPANDING.with(|s| {
            let mut s = s.borrow_mut();
            if s.contains(&view.oid) {
                return Err(err!(
                    InvalidObjectDefinition,
                    "infinite recursion detected in rules for relation \"{}\"",
                    view.name
                ));
            }
            s.push(view.oid);
            Ok(Expanding(view.oid))
        })
    }
}

impl Drop for Expanding {
    fn drop(&mut self) {
        EXPANDING.with(|s| {
            let mut s = s.borrow_mut();
            if let Some(pos) = s.iter().rposition(|&o| o == self.0) {
                s.truncate(pos);
            }
        });
    }
}
