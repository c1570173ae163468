//! Templates of UPDATE statements ([`super`]): a piped script of
//! `update a set abalance = abalance + 5 where aid = 42;` plans once per
//! shape. Only an UPDATE of a table named directly (not through a view)
//! without RETURNING gets one; its target is locked `RowExclusive` before
//! the other tables, as the statement locks it, and its definition is
//! checked like theirs. The template holds the plan of the rows to write
//! (the new rows and their tuple ids); the writing itself, with its
//! foreign-key, uniqueness and constraint checks, runs as for any UPDATE.
//! The WHERE that READ COMMITTED re-checks on a row another transaction
//! changed meanwhile is not in the template: it is planned from the
//! statement's text when a row first needs it, so a template costs nothing
//! for it.

use std::sync::Arc;
use std::time::Instant;

use heapdb_grammar::ast;

use super::Shape;
use crate::catalog::TableDef;
use crate::error::Result;
use crate::exec::modify::Recheck;
use crate::plan::bind::Binder;
use crate::plan::modify::{self, ModifyPlan};
use crate::plan::Plan;
use crate::session::{Column, QueryResult, Session};
use crate::txn::Snapshot;
use crate::vector::Batch;

impl Session {
    /// Plans the UPDATE `u` of `shape` (`sql`'s text) into `table` and
    /// makes the shape's template, or refuses the shape.
    pub(in crate::session) fn plan_update_with_template(
        &mut self,
        u: &ast::Update,
        table: &Arc<TableDef>,
        snap: &Snapshot,
        shape: Shape,
        sql: &str,
    ) -> Result<ModifyPlan> {
        let (planned, tables) = self.record(snap, |b| modify::plan_update(b, u, table))?;
        let target = (u.table.name.clone(), table.clone());
        let replan = |s: &Self, text: &str| {
            let stmts = heapdb_grammar::parse(text).ok()?;
            let [ast::Statement::Update(other)] = stmts.as_slice() else {
                return None;
            };
            if other.table != u.table || !other.returning.is_empty() {
                return None;
            }
            let (m, opened) = s
                .record(snap, |b| modify::plan_update(b, other, table))
                .ok()?;
            Some((m.plan, opened))
        };
        let refuse = !planned.returning.is_empty() || !planned.checks.is_empty() || planned.bulk;
        let template = tables.filter(|_| !refuse).and_then(|tables| {
            self.template(
                &planned.plan,
                tables,
                Some(target),
                snap,
                &shape,
                sql,
                &replan,
            )
        });
        self.plan_cache.settle(&shape, template);
        Ok(planned)
    }

    /// Writes the rows of a templated UPDATE's `plan`, the statement `sql`,
    /// into `table` (locked by [`Session::instantiate`]). Its READ
    /// COMMITTED re-check of a row changed meanwhile is planned from `sql`
    /// when a row first needs it.
    pub(in crate::session) fn update_planned(
        &mut self,
        snap: &Snapshot,
        table: &Arc<TableDef>,
        plan: Plan,
        sql: &str,
        t0: Instant,
        sink: &mut dyn FnMut(&[Column], &Batch) -> Result<()>,
    ) -> Result<QueryResult> {
        let planned = ModifyPlan {
            plan,
            bulk: false,
            returning: Vec::new(),
            returning_fields: Vec::new(),
            checks: Vec::new(),
            recheck: None,
        };
        self.write_update(snap, &table.clone(), planned, Some(sql), t0, sink)
    }

    /// The READ COMMITTED re-check of the UPDATE `sql` of `table`, planned
    /// under `snap`.
    pub(in crate::session) fn replan_recheck(
        &self,
        snap: &Snapshot,
        table: &Arc<TableDef>,
        sql: &str,
    ) -> Result<Recheck> {
        let stmts = heapdb_grammar::parse(sql).map_err(crate::session::parse_error)?;
        let [ast::Statement::Update(u)] = stmts.as_slice() else {
            return Err(crate::error::Error::internal(
                "a templated UPDATE did not parse as one UPDATE",
            ));
        };
        let mut ctx = self.stmt_ctx(snap);
        let planned = modify::plan_update(&mut Binder::new(&mut ctx), u, table)?;
        planned
            .recheck
            .ok_or_else(|| crate::error::Error::internal("an UPDATE planned without its re-check"))
    }
}
