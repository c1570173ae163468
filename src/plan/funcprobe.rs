//! A [`PlanContext`] that passes every request through and notes whether
//! compiling a user function's body asked for anything that may differ
//! from one statement to the next: the clock (`now()`, `'now'::date`),
//! tables and views (their definitions and the statement's snapshot), the
//! rows of an uncorrelated subquery or an inspection function, or a
//! session function evaluated at bind time.
//!
//! Invariant: a body compiled under a probe that reports [`Probe::impure`]
//! must not be reused by a later statement; [`super::userfunc`] compiles
//! such a body anew for every statement that calls it, so `now()` inside a
//! function is the calling statement's time, as in PostgreSQL.

use std::cell::Cell;
use std::sync::Arc;

use super::{PlanContext, TableRows};
use crate::catalog::{FunctionDef, TableDef, ViewDef};
use crate::error::Result;
use crate::exec::ExecContext;
use crate::nodes::plannodes::Plan;
use crate::settings::Settings;
use crate::types::{DataType, Value};

/// See the module comment.
pub struct Probe<'a> {
    inner: &'a mut dyn PlanContext,
    impure: Cell<bool>,
}

impl<'a> Probe<'a> {
    /// A probe over `inner`, pure until asked for something statement-bound.
    pub fn new(inner: &'a mut dyn PlanContext) -> Probe<'a> {
        Probe {
            inner,
            impure: Cell::new(false),
        }
    }

    /// Whether anything statement-bound was asked for.
    pub fn impure(&self) -> bool {
        self.impure.get()
    }

    fn mark<T>(&self, v: T) -> T {
        self.impure.set(true);
        v
    }
}

impl PlanContext for Probe<'_> {
    fn table(&self, name: &str) -> Result<Arc<TableDef>> {
        self.mark(self.inner.table(name))
    }
    fn view(&self, name: &str) -> Option<Arc<ViewDef>> {
        self.mark(self.inner.view(name))
    }
    fn children(&self, parent: &TableDef) -> Result<Vec<Arc<TableDef>>> {
        self.mark(self.inner.children(parent))
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
        self.impure.set(true);
        self.inner.run_subquery(plan)
    }
    fn subplan_context(&mut self, plan: &Plan) -> Result<ExecContext> {
        self.impure.set(true);
        self.inner.subplan_context(plan)
    }
    fn settings(&self) -> &Settings {
        self.inner.settings()
    }
    fn statement_timestamp(&self) -> i64 {
        self.mark(self.inner.statement_timestamp())
    }
    fn scalar_function(&mut self, name: &str, args: &[Value]) -> Option<Result<(Value, DataType)>> {
        let r = self.inner.scalar_function(name, args);
        if r.is_some() {
            self.impure.set(true);
        }
        r
    }
    fn inspection_rows(&mut self, name: &str, args: &[Value]) -> Option<Result<TableRows>> {
        let r = self.inner.inspection_rows(name, args);
        if r.is_some() {
            self.impure.set(true);
        }
        r
    }
    fn functions(&self, name: &str) -> Vec<Arc<FunctionDef>> {
        self.inner.functions(name)
    }
    fn sequence_function(&mut self, func: &str, seq: Option<&str>) -> Result<u32> {
        self.impure.set(true);
        self.inner.sequence_function(func, seq)
    }
    fn sequence_rows(&mut self, name: &str) -> Option<Result<TableRows>> {
        let r = self.inner.sequence_rows(name);
        if r.is_some() {
            self.impure.set(true);
        }
        r
    }
    fn domain(&self, name: &str) -> Option<Arc<crate::catalog::DomainDef>> {
        self.inner.domain(name)
    }
    fn operators(&self, name: &str) -> Vec<Arc<crate::catalog::OperatorDef>> {
        self.inner.operators(name)
    }
    fn subqueries_per_call(&self) -> bool {
        self.inner.subqueries_per_call()
    }
}
