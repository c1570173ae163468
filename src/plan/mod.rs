//! Planning: from the parser's AST to a tree of physical operators.
//!
//! The binder ([`bind`], [`select`], [`dml`]) resolves names against the
//! catalog and the scopes of FROM items, types every expression (inserting
//! PostgreSQL's implicit casts), checks GROUP BY rules, and builds a [`Plan`]
//! directly: heapdb has one obvious physical choice for most nodes, and the
//! few real choices (the order of a FROM list's joins, [`joinorder`]; hash
//! join vs nested loop, which join input to build, pushing filters into
//! scans) are made while building.
//!
//! The plan node and expression types live below both the planner and the
//! executor, in [`crate::nodes`]; they are re-exported here under the names
//! the planner has always used.
//!
//! Uncorrelated subqueries (scalar, `IN`, `EXISTS`) are run while binding,
//! through [`PlanContext::run_subquery`], and replaced by their result, as
//! PostgreSQL's InitPlans are computed once before the main plan runs;
//! correlated ones become per-row SubPlans ([`sublink`]).

mod array;
pub mod bind;
pub mod bitmappath;
mod bytea_like;
pub mod check;
pub mod cost;
pub mod domain;
pub mod dummy;
pub mod estimate;
mod exists_shape;
pub mod explain;
pub mod fold;
pub mod folded;
pub mod funcprobe;
pub mod indexpath;
pub mod indexpred;
pub mod insert_row;
pub mod joinorder;
pub mod modify;
pub mod nextcmd;
mod operator;
mod outer_agg;
pub mod parallel;
pub mod plpgsql_compile;
pub mod plpgsql_parse;
pub mod quals;
pub mod scope;
pub mod select;
pub mod seqcall;
pub mod sublink;
pub mod userfunc;
pub mod window;

use std::sync::Arc;

use crate::catalog::TableDef;
use crate::error::Result;
pub use crate::nodes::plannodes::{AggCall, Field, JoinKind, Node, Plan, SortKey, Srf, TableFunc};
use crate::settings::Settings;
use crate::types::{DataType, Value};

/// The columns and rows of a table function computed whole.
pub type TableRows = (Vec<Field>, Vec<Vec<Value>>);

/// What the binder needs from the session that runs the statement.
pub trait PlanContext {
    /// The table `name` as the statement's snapshot sees it (42P01 if none).
    fn table(&self, name: &str) -> Result<Arc<TableDef>>;
    /// The view `name` as the statement's snapshot sees it, if any.
    fn view(&self, _name: &str) -> Option<Arc<crate::catalog::ViewDef>> {
        None
    }
    /// The tables that inherit directly from table `parent` as the
    /// statement's snapshot sees them, in oid order, each locked as
    /// [`PlanContext::table`] locks it. Required: a context that wraps
    /// another must pass it on, or scans of parents miss their children.
    fn children(&self, parent: &TableDef) -> Result<Vec<Arc<TableDef>>>;
    /// Current number of pages of a table (for estimates).
    fn table_pages(&self, table: &TableDef) -> u32;
    /// The estimated fraction of a table's pages whose visibility-map bit
    /// says all-visible (index-only scan costs); 0 when unknown.
    fn all_visible_fraction(&self, _table: &TableDef) -> f64 {
        0.0
    }
    /// Whether the statement is only being explained (EXPLAIN without
    /// ANALYZE): planning must not run what has side effects.
    fn explain_only(&self) -> bool {
        false
    }
    /// Runs an uncorrelated subquery and returns its rows.
    fn run_subquery(&mut self, plan: &Plan) -> Result<Vec<Vec<Value>>>;
    /// The context a correlated subquery's runs of `plan` execute in.
    fn subplan_context(&mut self, plan: &Plan) -> Result<crate::exec::ExecContext>;
    /// The session's settings.
    fn settings(&self) -> &Settings;
    /// The statement's start time (`now()`), microseconds since 2000-01-01.
    fn statement_timestamp(&self) -> i64;
    /// A session-level scalar function evaluated once at bind time
    /// (`relation_size('t')`), or `None` when `name` is not one.
    fn scalar_function(&mut self, name: &str, args: &[Value]) -> Option<Result<(Value, DataType)>>;
    /// Rows of an inspection table function (`heap_page_items` ...), with
    /// its column names and types, or `None` when `name` is not one.
    fn inspection_rows(&mut self, name: &str, args: &[Value]) -> Option<Result<TableRows>>;
    /// The compiled function (its id, [`crate::types::funcs::user`]) that
    /// runs sequence function `func` (`nextval`, `currval`, `setval`) of
    /// the sequence named `seq`, or `lastval` (`seq` `None`).
    fn sequence_function(&mut self, func: &str, _seq: Option<&str>) -> Result<u32> {
        Err(crate::err!(
            FeatureNotSupported,
            "{func}() is not supported in this context"
        ))
    }
    /// The row `SELECT * FROM name` shows when `name` is a sequence.
    fn sequence_rows(&mut self, _name: &str) -> Option<Result<TableRows>> {
        None
    }
    /// The user-defined functions named `name` the statement sees.
    fn functions(&self, _name: &str) -> Vec<Arc<crate::catalog::FunctionDef>> {
        Vec::new()
    }
    /// The domain `name` the statement sees, if any.
    fn domain(&self, _name: &str) -> Option<Arc<crate::catalog::DomainDef>> {
        None
    }
    /// The user-defined operators with symbol `name` the statement sees.
    fn operators(&self, _name: &str) -> Vec<Arc<crate::catalog::OperatorDef>> {
        Vec::new()
    }
    /// Whether subqueries run anew at each call of the function body being
    /// compiled, instead of once per statement (an uncorrelated one while
    /// binding): in a VOLATILE function's body, whose every call reads
    /// anew ([`nextcmd`]). A context that wraps another passes it on.
    fn subqueries_per_call(&self) -> bool {
        false
    }
}
