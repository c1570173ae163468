//! The planning context a VOLATILE user function's body is compiled under:
//! its queries read at the command id after the calling statement's.
//!
//! A statement writes its rows with its command id `c`, and its own
//! snapshot (at `curcid = c`) does not see them, so `UPDATE t SET a = a + 1`
//! changes each row once. PostgreSQL runs each statement of a VOLATILE SQL
//! or PL/pgSQL function after a command-counter increment, with a snapshot
//! at the new command id: the function sees what the calling statement has
//! written so far. STABLE and IMMUTABLE functions read with the caller's
//! snapshot. Function bodies write nothing, so reading at `c + 1` is that
//! rule exactly: every row the transaction wrote before the call (the
//! calling statement's included) has a command id of at most `c`, and the
//! calling statement keeps writing at `c`, so its later rows are seen by
//! later calls. The transaction's counter need not move: the next
//! statement's id is already `c + 1`, and it sees what the function saw.
//!
//! [`NextCommand`] passes every request through to the statement's context
//! and changes only the snapshot of what runs: the contexts of the body's
//! queries (and of anything nested in them: subqueries, other functions'
//! bodies) and the subqueries run while binding. Scalar, `EXISTS` and
//! `IN` subqueries of the body become subplans whose cache lasts one call
//! ([`PlanContext::subqueries_per_call`]): one computed while binding, or
//! cached for the statement, would give every call the first call's rows.
//! Such a subquery is no constant when the body's queries are planned: an
//! index scan takes its value as a bound computed when the scan starts
//! (`WHERE id = (SELECT max(id) ...)`, `plan::indexpath`), while
//! `WHERE id = $1` there still scans.
//!
//! Under READ COMMITTED PostgreSQL also gives each of those queries a new
//! snapshot. The contexts made here carry the body's
//! [`QuerySnapshots`]: the body's queries read with a snapshot taken as
//! each runs (at this command id), what runs inside one with that query's
//! (`exec::plpgsql::QueryPlan::rows`, `exec::subplan`). Under REPEATABLE
//! READ they keep the transaction's snapshot.
//!
//! Nothing here runs for a statement that calls no volatile function with
//! a query: only compiling such a body builds this context.

use std::sync::Arc;

use super::{PlanContext, TableRows};
use crate::catalog::{FunctionDef, TableDef, ViewDef};
use crate::error::Result;
use crate::exec::ExecContext;
use crate::nodes::plannodes::Plan;
use crate::settings::Settings;
use crate::txn::QuerySnapshots;
use crate::types::{DataType, Value};

/// See the module comment.
pub struct NextCommand<'a> {
    inner: &'a mut dyn PlanContext,
    /// The body's query snapshots, made with its first context.
    snapshots: Option<Arc<QuerySnapshots>>,
}

impl<'a> NextCommand<'a> {
    /// The context over `inner` whose queries read one command later.
    pub fn new(inner: &'a mut dyn PlanContext) -> NextCommand<'a> {
        NextCommand {
            inner,
            snapshots: None,
        }
    }
}

impl PlanContext for NextCommand<'_> {
    fn table(&self, name: &str) -> Result<Arc<TableDef>> {
        self.inner.table(name)
    }
    fn view(&self, name: &str) -> Option<Arc<ViewDef>> {
        self.inner.view(name)
    }
    fn children(&self, parent: &TableDef) -> Result<Vec<Arc<TableDef>>> {
        self.inner.children(parent)
    }
    fn table_pages(&self, table: &TableDef) -> u32 {
        self.inner.table_pages(table)
    }
    fn all_visible_fraction(&self, table: &TableDef) -> f64 {
        self.inner.all_visible_fraction(table)
    }
    fn explain_only(&self) -> bool {
        self.inner.explain_only()
    }
    fn run_subquery(&mut self, plan: &Plan) -> Result<Vec<Vec<Value>>> {
        let ctx = self.subplan_context(plan)?;
        crate::exec::collect_rows(plan, &ctx)
    }
    fn subplan_context(&mut self, plan: &Plan) -> Result<ExecContext> {
        let mut ctx = self.inner.subplan_context(plan)?;
        ctx.snapshot = ctx.snapshot.next_command();
        if let Some(txns) = &ctx.read_committed {
            let shared = self
                .snapshots
                .get_or_insert_with(|| QuerySnapshots::new(txns.clone()));
            ctx.query_snapshots = Some(shared.clone());
        }
        Ok(ctx)
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
    fn functions(&self, name: &str) -> Vec<Arc<FunctionDef>> {
        self.inner.functions(name)
    }
    fn sequence_function(&mut self, func: &str, seq: Option<&str>) -> Result<u32> {
        self.inner.sequence_function(func, seq)
    }
    fn sequence_rows(&mut self, name: &str) -> Option<Result<TableRows>> {
        self.inner.sequence_rows(name)
    }
    fn domain(&self, name: &str) -> Option<Arc<crate::catalog::DomainDef>> {
        self.inner.domain(name)
    }
    fn operators(&self, name: &str) -> Vec<Arc<crate::catalog::OperatorDef>> {
        self.inner.operators(name)
    }
    fn subqueries_per_call(&self) -> bool {
        true
    }
}
