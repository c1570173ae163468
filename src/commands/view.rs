//! CREATE [OR REPLACE] VIEW, DROP VIEW, and the dependencies of views:
//! what DROP TABLE and DROP VIEW find depending on what they drop
//! (PostgreSQL's `pg_depend` walk, `reportDependentObjects`). A view
//! `WITH CHECK OPTION` must be automatically updatable
//! ([`crate::plan::modify::view`] writes through it).
//!
//! A view is created by binding its query once, as a SELECT would be (which
//! checks every name and fixes the output columns), while recording every
//! table and view the binder opens: those are the view's dependencies. The
//! catalog keeps the query's text (see `catalog::view`). Like every DDL
//! statement here it is transactional: the entry is invisible to others
//! until commit and gone on rollback.
//!
//! Invariant kept: a relation is dropped only together with every view
//! that depends on it, directly or through other views (CASCADE), or not at
//! all (RESTRICT, the default: 2BP01).
//!
//! The query is bound through the caller's planning context
//! ([`view_columns`], before the transaction has an xid); the catalog
//! changes take a [`DdlContext`]. Nothing here prints: NOTICEs are
//! returned as text.

use std::cell::RefCell;
use std::collections::HashSet;
use std::sync::Arc;

use heapdb_grammar::ast;

use super::context::DdlContext;
use crate::catalog::{CatalogView, TableDef, ViewColumn, ViewDef};
use crate::err;
use crate::error::Result;
use crate::plan::bind::Binder;
use crate::plan::modify::view::not_updatable_reason;
use crate::plan::{Plan, PlanContext, TableRows};
use crate::settings::Settings;
use crate::types::{DataType, Value};

/// A planning context that notes every relation the binder opens: the
/// dependencies of the view being created.
struct Recorder<'c> {
    inner: &'c mut dyn PlanContext,
    seen: RefCell<Vec<u32>>,
}

impl Recorder<'_> {
    fn note(&self, oid: u32) {
        let mut seen = self.seen.borrow_mut();
        if !seen.contains(&oid) {
            seen.push(oid);
        }
    }
}

impl PlanContext for Recorder<'_> {
    fn table(&self, name: &str) -> Result<Arc<TableDef>> {
        let t = self.inner.table(name)?;
        self.note(t.oid);
        Ok(t)
    }
    fn view(&self, name: &str) -> Option<Arc<ViewDef>> {
        let v = self.inner.view(name)?;
        self.note(v.oid);
        Some(v)
    }
    fn children(&self, parent: &TableDef) -> Result<Vec<Arc<TableDef>>> {
        self.inner.children(parent)
    }
    fn table_pages(&self, table: &TableDef) -> u32 {
        self.inner.table_pages(table)
    }
    // Binding a view's query must not run what has side effects.
    fn explain_only(&self) -> bool {
        true
    }
    fn run_subquery(&mut self, plan: &Plan) -> Result<Vec<Vec<Value>>> {
        self.inner.run_subquery(plan)
    }
    fn subplan_context(&mut self, plan: &Plan) -> Result<crate::exec::ExecContext> {
        self.inner.subplan_context(plan)
    }
    fn settings(&self) -> &Settings {
        self.inner.settings()
    }
    fn statement_timestamp(&self) -> i64 {
        self.inner.statement_timestamp()
    }
    fn scalar_function(&mut self, name: &str, args: &[Value]) -> Option<Result<(Value, DataType)>> {
        self.inner.scalar_function(name, args)
    }
    fn inspection_rows(&mut self, name: &str, args: &[Value]) -> Option<Result<TableRows>> {
        self.inner.inspection_rows(name, args)
    }
    fn functions(&self, name: &str) -> Vec<Arc<crate::catalog::FunctionDef>> {
        self.inner.functions(name)
    }
    fn domain(&self, name: &str) -> Option<Arc<crate::catalog::DomainDef>> {
        self.inner.domain(name)
    }
    fn operators(&self, name: &str) -> Vec<Arc<crate::catalog::OperatorDef>> {
        self.inner.operators(name)
    }
}

/// A relation being dropped, as PostgreSQL's messages name it.
pub struct DropTarget {
    /// Object id.
    pub oid: u32,
    /// `table t` or `view v`.
    pub described: String,
}

/// Binds CREATE VIEW's query through `ctx`: its output columns (named by
/// the column list where given) and the relations it reads.
pub fn view_columns(
    c: &ast::CreateView,
    ctx: &mut dyn PlanContext,
) -> Result<(Vec<ViewColumn>, Vec<u32>)> {
    let mut rec = Recorder {
        inner: ctx,
        seen: RefCell::new(Vec::new()),
    };
    let plan = Binder::new(&mut rec).plan_query(&c.query)?;
    if c.columns.len() > plan.fields.len() {
        return Err(err!(
            SyntaxError,
            "CREATE VIEW specifies more column names than columns"
        ));
    }
    let mut seen = HashSet::new();
    let mut columns = Vec::with_capacity(plan.fields.len());
    for (i, f) in plan.fields.iter().enumerate() {
        let name = c.columns.get(i).cloned().unwrap_or_else(|| f.name.clone());
        if !seen.insert(name.clone()) {
            return Err(err!(
                DuplicateColumn,
                "column \"{name}\" specified more than once"
            ));
        }
        let ty = match f.ty {
            DataType::Unknown => DataType::Text,
            ty => ty,
        };
        columns.push(ViewColumn {
            name,
            ty,
            comment: None,
        });
    }
    Ok((columns, rec.seen.into_inner()))
}

impl DdlContext<'_> {
    /// CREATE [OR REPLACE] VIEW of `columns` reading `depends_on` (from
    /// [`view_columns`]).
    pub fn create_view(
        &mut self,
        c: &ast::CreateView,
        columns: Vec<ViewColumn>,
        depends_on: Vec<u32>,
    ) -> Result<()> {
        let cv = self.view();
        let name = &c.name.name;
        let existing = self.catalog.lookup_view(&cv, name);
        if self.catalog.lookup(&cv, name).is_some() {
            return Err(if c.or_replace {
                err!(WrongObjectType, "\"{name}\" is not a view")
            } else {
                err!(DuplicateTable, "relation \"{name}\" already exists")
            });
        }
        if c.check_option.is_some() {
            if let Some(reason) = not_updatable_reason(&c.query, true) {
                return Err(err!(
                    FeatureNotSupported,
                    "WITH CHECK OPTION is supported only on automatically updatable views"
                )
                .with_hint(reason));
            }
        }
        let text = c.query.to_string();
        match existing {
            Some(old) if c.or_replace => {
                check_replacement(&old.columns, &columns)?;
                let mut def = ViewDef::new(old.oid, name.clone(), columns, text, depends_on)?
                    .with_check_option(c.check_option);
                // The view and the columns it keeps keep their descriptions.
                def.comment = old.comment.clone();
                for (new, old) in def.columns.iter_mut().zip(&old.columns) {
                    new.comment = old.comment.clone();
                }
                self.catalog
                    .replace_view(&cv, self.xid, old.oid, Some(def))?;
            }
            Some(_) => return Err(err!(DuplicateTable, "relation \"{name}\" already exists")),
            None => {
                let oid = self.catalog.next_oid();
                let def = ViewDef::new(oid, name.clone(), columns, text, depends_on)?
                    .with_check_option(c.check_option);
                self.catalog.create_view(&cv, self.xid, def)?;
            }
        }
        *self.catalog_changed = true;
        Ok(())
    }

    /// DROP VIEW [IF EXISTS] ... [CASCADE]. Returns the NOTICEs.
    pub fn drop_view(&mut self, d: &ast::DropView) -> Result<Vec<String>> {
        let mut notices = Vec::new();
        let mut targets = Vec::new();
        let mut views = Vec::new();
        for name in &d.names {
            let cv = self.view();
            match self.catalog.lookup_view(&cv, &name.name) {
                Some(v) => {
                    targets.push(DropTarget {
                        oid: v.oid,
                        described: format!("view {}", v.name),
                    });
                    views.push(v);
                }
                None if self.catalog.lookup(&cv, &name.name).is_some() => {
                    return Err(err!(WrongObjectType, "\"{}\" is not a view", name.name)
                        .with_hint("Use DROP TABLE to remove a table."));
                }
                None if d.if_exists => {
                    notices.push(format!("view \"{}\" does not exist, skipping", name.name))
                }
                None => {
                    return Err(err!(
                        UndefinedTable,
                        "view \"{}\" does not exist",
                        name.name
                    ))
                }
            }
        }
        self.drop_dependent_views(&targets, d.cascade, &mut notices)?;
        for v in views {
            self.catalog
                .replace_view(&self.view(), self.xid, v.oid, None)?;
            *self.catalog_changed = true;
        }
        Ok(notices)
    }

    /// The views that depend on `targets` (directly or through other
    /// views), which are being dropped: without `cascade` PostgreSQL's
    /// 2BP01 error listing them; with it, they are dropped too, with its
    /// `drop cascades to ...` notice.
    pub fn drop_dependent_views(
        &mut self,
        targets: &[DropTarget],
        cascade: bool,
        notices: &mut Vec<String>,
    ) -> Result<()> {
        let cv = self.view();
        let mut done: HashSet<u32> = targets.iter().map(|t| t.oid).collect();
        let mut found: Vec<(Arc<ViewDef>, String)> = Vec::new();
        for t in targets {
            self.collect_dependents(&cv, t.oid, &t.described, &mut done, &mut found);
        }
        if found.is_empty() {
            return Ok(());
        }
        if !cascade {
            let message = match targets {
                [one] => format!(
                    "cannot drop {} because other objects depend on it",
                    one.described
                ),
                _ => "cannot drop desired object(s) because other objects depend on them".into(),
            };
            let detail: Vec<String> = found
                .iter()
                .map(|(v, on)| format!("view {} depends on {on}", v.name))
                .collect();
            return Err(err!(DependentObjectsStillExist, "{message}")
                .with_detail(detail.join("\n"))
                .with_hint("Use DROP ... CASCADE to drop the dependent objects too."));
        }
        notices.push(match &found[..] {
            [(v, _)] => format!("drop cascades to view {}", v.name),
            _ => format!("drop cascades to {} other objects", found.len()),
        });
        for (v, _) in &found {
            self.catalog.replace_view(&cv, self.xid, v.oid, None)?;
        }
        *self.catalog_changed = true;
        Ok(())
    }

    /// Depth first, in oid order, as PostgreSQL's dependency walk reports
    /// them: each view depending on `oid` with the object it depends on.
    fn collect_dependents(
        &self,
        cv: &CatalogView,
        oid: u32,
        described: &str,
        done: &mut HashSet<u32>,
        found: &mut Vec<(Arc<ViewDef>, String)>,
    ) {
        for v in self.catalog.view_dependents(cv, oid) {
            if done.insert(v.oid) {
                let name = format!("view {}", v.name);
                found.push((v.clone(), described.to_string()));
                self.collect_dependents(cv, v.oid, &name, done, found);
            }
        }
    }

    /// DROP TABLE of a view's name: PostgreSQL's 42809.
    pub fn refuse_drop_table_of_view(&self, name: &ast::ObjectName) -> Result<()> {
        if self.catalog.lookup_view(&self.view(), &name.name).is_some() {
            return Err(err!(WrongObjectType, "\"{}\" is not a table", name.name)
                .with_hint("Use DROP VIEW to remove a view."));
        }
        Ok(())
    }
}

/// The `CREATE OR REPLACE VIEW` rules (PostgreSQL's `checkViewTupleDesc`):
/// columns may only be added at the end.
fn check_replacement(old: &[ViewColumn], new: &[ViewColumn]) -> Result<()> {
    if new.len() < old.len() {
        return Err(err!(
            InvalidTableDefinition,
            "cannot drop columns from view"
        ));
    }
    for (o, n) in old.iter().zip(new) {
        if o.name != n.name {
            return Err(err!(
                InvalidTableDefinition,
                "cannot change name of view column \"{}\" to \"{}\"",
                o.name,
                n.name
            )
            .with_hint(
                "Use ALTER VIEW ... RENAME COLUMN ... to change name of view column instead.",
            ));
        }
        if o.ty != n.ty {
            return Err(err!(
                InvalidTableDefinition,
                "cannot change data type of view column \"{}\" from {} to {}",
                o.name,
                o.ty,
                n.ty
            ));
        }
    }
    Ok(())
}
