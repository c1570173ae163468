//! UPDATE and DELETE of a table that other tables inherit from: without
//! `ONLY`, the statement applies to the table and to every table that
//! inherits from it (PostgreSQL's inherited target relations).
//!
//! Each table is written by the same statement aimed at it alone (`ONLY`),
//! in the order a scan of the parent lists them, under the parent's name
//! (its alias, or its name as an alias) so that qualified column
//! references still resolve; the counts add up and RETURNING rows follow
//! each other. A child has every column of its parents, so whatever binds
//! over the parent binds over each child.

use std::sync::Arc;

use heapdb_grammar::ast;

use super::super::{Column, QueryResult, Session};
use crate::catalog::TableDef;
use crate::error::Result;
use crate::plan::PlanContext;
use crate::txn::Snapshot;
use crate::vector::Batch;

impl Session {
    /// `parent` and the tables inheriting from it, each once, breadth
    /// first with each table's children in oid order.
    fn inheritors(
        &mut self,
        parent: &Arc<TableDef>,
        snap: &Snapshot,
    ) -> Result<Vec<Arc<TableDef>>> {
        let ctx = self.stmt_ctx(snap);
        let mut out = vec![parent.clone()];
        let mut i = 0;
        while i < out.len() {
            let t = out[i].clone();
            i += 1;
            for c in ctx.children(&t)? {
                if !out.iter().any(|o| o.oid == c.oid) {
                    out.push(c);
                }
            }
        }
        Ok(out)
    }

    pub(super) fn update_inherited(
        &mut self,
        u: &ast::Update,
        parent: &Arc<TableDef>,
        snap: &Snapshot,
        sink: &mut dyn FnMut(&[Column], &Batch) -> Result<()>,
    ) -> Result<QueryResult> {
        let tables = self.inheritors(parent, snap)?;
        let mut each = u.clone();
        each.only = true;
        each.alias = Some(u.alias.clone().unwrap_or_else(|| u.table.name.clone()));
        let mut results = Vec::with_capacity(tables.len());
        for t in &tables {
            each.table.name = t.name.clone();
            each.table.schema = None;
            results.push(self.update(&each, sink)?);
        }
        Ok(combined("UPDATE", results))
    }

    pub(super) fn delete_inherited(
        &mut self,
        d: &ast::Delete,
        parent: &Arc<TableDef>,
        snap: &Snapshot,
        sink: &mut dyn FnMut(&[Column], &Batch) -> Result<()>,
    ) -> Result<QueryResult> {
        let tables = self.inheritors(parent, snap)?;
        let mut each = d.clone();
        each.only = true;
        each.alias = Some(d.alias.clone().unwrap_or_else(|| d.table.name.clone()));
        let mut results = Vec::with_capacity(tables.len());
        for t in &tables {
            each.table.name = t.name.clone();
            each.table.schema = None;
            results.push(self.delete(&each, sink)?);
        }
        Ok(combined("DELETE", results))
    }
}

/// One result of the per-table results of a statement: the first's
/// columns, the counts added up under `verb`.
fn combined(verb: &str, results: Vec<QueryResult>) -> QueryResult {
    let count: u64 = results
        .iter()
        .filter_map(|r| r.tag.rsplit(' ').next()?.parse::<u64>().ok())
        .sum();
    let mut it = results.into_iter();
    let mut first = it.next().unwrap_or_default();
    for r in it {
        first.rows.extend(r.rows);
        first.notices.extend(r.notices);
        first.timing.plan += r.timing.plan;
        first.timing.execute += r.timing.execute;
    }
    first.tag = format!("{verb} {count}");
    first
}
