//! Aggregates that belong to an enclosing query (PostgreSQL's
//! `agglevelsup`).
//!
//! An aggregate call's level is the innermost query level any of its
//! column references (arguments, FILTER, ORDER BY) comes from, not the
//! level it is written in: in `select (select max(o.x)) from o`, `max`
//! reads only `o`, so it aggregates the outer query (one row), and the
//! sublink reads its result as an outer value. A call without column
//! references belongs where it is written.
//!
//! Binding finds such a call only inside the sublink, after the enclosing
//! query has chosen whether it aggregates. So the sublink's binder records
//! the call as pending and fails; the enclosing [`Binder::plan_select`]
//! catches that failure, adds the call to its forced aggregates and plans
//! itself again, now aggregating, with the call bound over its own rows.
//! On the second pass the sublink finds the call among its enclosing
//! level's aggregates and reads that output column as a parameter.
//! Invariants:
//! - a pending call is taken by exactly the query level it names (the
//!   level index in [`Binder::outer`] equals that query's depth);
//! - a forced call is planned again at most once per level, so planning
//!   ends: a second request for the same call where the level cannot
//!   aggregate (WHERE, JOIN conditions) is PostgreSQL's 42803 error.

use heapdb_grammar::ast;

use super::bind::{walk, Binder};
use super::scope::Scope;
use crate::err;
use crate::error::{Error, Result};
use crate::exec::expr::Expr;
use crate::types::DataType;

/// The message of the failure that carries a pending call upward; never
/// shown, as the level it names always catches it.
const PENDING: &str = "aggregate belongs to an enclosing query";

/// Calls `f` on every column reference of `call`'s arguments, FILTER and
/// ORDER BY (not inside nested subqueries).
fn call_columns(call: &ast::FunctionCall, f: &mut dyn FnMut(&ast::ColumnRef)) {
    let exprs = call
        .args
        .iter()
        .chain(call.filter.as_deref())
        .chain(call.order_by.iter().map(|o| &o.expr));
    for e in exprs {
        walk(e, &mut |x| {
            if let ast::ExprKind::Column(c) = &x.kind {
                f(c)
            }
        });
    }
}

impl Binder<'_> {
    /// The enclosing level `call` aggregates, if it is not the local one:
    /// every column reference resolves outside `local`, and the innermost
    /// of them at a sublink's enclosing level.
    fn outer_level_of(&self, call: &ast::FunctionCall, local: &Scope) -> Option<usize> {
        let mut level: Option<usize> = None;
        let mut is_local = false;
        let mut unknown = false;
        call_columns(call, &mut |c| {
            if local.resolve(c.table.as_deref(), &c.column).is_ok() {
                is_local = true;
                return;
            }
            let found = (0..self.outer.len()).rev().find(|&l| {
                let o = &self.outer[l];
                o.hidden.is_none() && o.scope.resolve(c.table.as_deref(), &c.column).is_ok()
            });
            match found {
                Some(l) => level = Some(level.map_or(l, |m| m.max(l))),
                None => unknown = true,
            }
        });
        if is_local || unknown {
            return None;
        }
        level.filter(|&l| self.outer[l].aggs.is_some())
    }

    /// `call` bound as a reference to an enclosing query's aggregate, when
    /// it belongs to one (`None`: it aggregates here). When that query
    /// does not compute it yet, records it as pending and fails, for the
    /// query to plan itself again with it.
    pub(super) fn outer_aggregate(
        &mut self,
        call: &ast::FunctionCall,
        local: &Scope,
    ) -> Result<Option<Expr>> {
        if self.outer.is_empty() {
            return Ok(None);
        }
        let Some(l) = self.outer_level_of(call, local) else {
            return Ok(None);
        };
        let level = &self.outer[l];
        let known = level
            .aggs
            .as_ref()
            .and_then(|aggs| aggs.iter().find(|(c, _, _)| c == call));
        if let Some((_, column, ty)) = known {
            let (column, ty) = (*column, *ty);
            return Ok(Some(self.pass_down(l, Expr::column(column, ty), ty)));
        }
        let forced = self.forced_aggs.iter().any(|(d, c)| *d == l && c == call);
        if let (true, Some(clause)) = (forced, level.clause) {
            return Err(err!(
                GroupingError,
                "aggregate functions are not allowed in {clause}"
            ));
        }
        self.pending_outer_agg = Some((l, call.clone()));
        Err(err!(InternalError, "{PENDING}"))
    }

    /// Takes the pending call if it belongs to the query at `depth` and is
    /// not forced there yet; true when the query must be planned again.
    pub(super) fn take_pending_aggregate(&mut self, depth: usize, err: &Error) -> bool {
        if err.message != PENDING {
            return false;
        }
        match self.pending_outer_agg.take() {
            Some((l, call)) if l == depth => {
                if self.forced_aggs.iter().any(|(d, c)| *d == l && *c == call) {
                    return false;
                }
                self.forced_aggs.push((depth, call));
                true
            }
            other => {
                self.pending_outer_agg = other;
                false
            }
        }
    }

    /// The calls forced to aggregate at `depth`.
    pub(super) fn forced_at(&self, depth: usize) -> Vec<ast::FunctionCall> {
        self.forced_aggs
            .iter()
            .filter(|(d, _)| *d == depth)
            .map(|(_, c)| c.clone())
            .collect()
    }

    /// Whether `call` is forced to aggregate at a level enclosing `depth`
    /// (so it does not make the query at `depth` aggregate).
    pub(super) fn forced_outside(&self, depth: usize, call: &ast::FunctionCall) -> bool {
        self.forced_aggs
            .iter()
            .any(|(d, c)| *d < depth && c == call)
    }
}

/// The type a level's aggregate output has, for [`super::sublink`].
pub type AggOutput = (ast::FunctionCall, usize, DataType);
