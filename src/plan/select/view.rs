//! Views in FROM, expanded as PostgreSQL's rewriter expands them: the
//! view's stored query takes the place of its name, planned as a subquery
//! in FROM (`SELECT ... FROM v` plans as `SELECT ... FROM (query) v`).
//!
//! The query is bound afresh at every use, in a scope of its own: the
//! statement's CTEs and outer queries are not visible inside it (a view's
//! names were resolved when it was created, against the catalog alone).
//! Its output columns take the view's column names; an alias and alias
//! column list apply on top, as for a table.

use heapdb_grammar::ast;

use super::super::bind::Binder;
use super::from::derived;
use super::Item;
use crate::catalog::ViewDef;
use crate::err;
use crate::error::Result;

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
