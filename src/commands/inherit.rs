//! Table inheritance in CREATE TABLE and DROP TABLE (PostgreSQL's
//! `MergeAttributes` and the `pg_inherits` dependencies of tablecmds.c).
//!
//! `CREATE TABLE c (...) INHERITS (p, q)` gives `c` the columns of `p`
//! then those of `q` (a name met twice is one column, when the types
//! agree), then its own (a name already inherited merges into it), and the
//! parents' CHECK constraints that are not `NO INHERIT`. The child records
//! its parents ([`TableDef::parents`]); each parent is marked as having
//! children ([`TableDef::has_subclass`]) so that scans of it, and plans
//! cached for them, know to look.
//!
//! Invariants: a parent is a permanent table unless the child is
//! temporary; no parent appears twice; inherited columns keep their
//! parents' order, so a parent's columns appear in every child in the
//! same relative order.

use std::sync::Arc;

use heapdb_grammar::ast;

use super::checkcmds::CheckSpec;
use super::context::DdlContext;
use crate::catalog::{qualified_name, ColumnDef, TableDef};
use crate::err;
use crate::error::Result;
use crate::plan::bind::at;
use crate::plan::PlanContext;

/// What a CREATE TABLE inherits.
#[derive(Debug, Default)]
pub struct Inherited {
    /// The parents, in the order written.
    pub parents: Vec<Arc<TableDef>>,
    /// The inherited columns, merged.
    pub columns: Vec<ColumnDef>,
    /// The parents' inheritable CHECK constraints (named, not yet bound to
    /// the child: their text), each once.
    pub checks: Vec<(String, String)>,
    /// NOTICEs about merged columns.
    pub notices: Vec<String>,
}

/// The parents of `c` and what it inherits from them, with PostgreSQL's
/// errors for a missing, repeated or unsuitable parent and for columns
/// whose types conflict.
pub fn inherited(c: &ast::CreateTable, ctx: &mut dyn PlanContext) -> Result<Inherited> {
    let mut out = Inherited::default();
    for name in &c.inherits {
        let qualified = qualified_name(name.schema.as_deref(), &name.name);
        let parent = match ctx.table(&qualified) {
            Ok(t) => t,
            Err(_) if ctx.view(&name.name).is_some() => {
                return Err(at(
                    err!(
                        WrongObjectType,
                        "inherited relation \"{}\" is not a table or foreign table",
                        name.name
                    ),
                    name.offset,
                ));
            }
            Err(e) => return Err(at(e, name.offset)),
        };
        if out.parents.iter().any(|p| p.oid == parent.oid) {
            return Err(at(
                err!(
                    DuplicateTable,
                    "relation \"{}\" would be inherited from more than once",
                    name.name
                ),
                name.offset,
            ));
        }
        for col in &parent.columns {
            merge_parent_column(&mut out, col)?;
        }
        for k in parent.checks.iter().filter(|k| !k.no_inherit) {
            if !out.checks.iter().any(|(n, t)| *n == k.name && *t == k.text) {
                out.checks.push((k.name.clone(), k.text.clone()));
            }
        }
        out.parents.push(parent);
    }
    Ok(out)
}

/// Adds a parent's column `col`, merging it with an earlier parent's
/// column of the same name.
fn merge_parent_column(out: &mut Inherited, col: &ColumnDef) -> Result<()> {
    let Some(have) = out.columns.iter_mut().find(|c| c.name == col.name) else {
        // The default is inherited, and NOT NULL too (PostgreSQL 15
        // copies attnotnull).
        out.columns.push(col.clone());
        return Ok(());
    };
    out.notices.push(format!(
        "merging multiple inherited definitions of column \"{}\"",
        col.name
    ));
    if have.ty != col.ty || have.domain != col.domain {
        return Err(err!(
            DatatypeMismatch,
            "inherited column \"{}\" has a type conflict",
            col.name
        )
        .with_detail(format!("{} versus {}", type_name(have), type_name(col))));
    }
    have.not_null |= col.not_null;
    if have.default.is_none() {
        have.default = col.default.clone();
    }
    Ok(())
}

/// Merges the CREATE TABLE's own column `col` (the `local_pos`-th of its
/// list) into the inherited column `have` (at `inherited_pos`) of the same
/// name, with PostgreSQL's notice, or its error when the types differ.
pub fn merge_local_column(
    have: &mut ColumnDef,
    col: ColumnDef,
    (local_pos, inherited_pos): (usize, usize),
    notices: &mut Vec<String>,
) -> Result<()> {
    notices.push(if local_pos == inherited_pos {
        format!("merging column \"{}\" with inherited definition", col.name)
    } else {
        format!(
            "moving and merging column \"{}\" with inherited definition\nDETAIL:  User-specified column moved to the position of the inherited column.",
            col.name
        )
    });
    if have.ty != col.ty || have.domain != col.domain {
        return Err(err!(
            DatatypeMismatch,
            "column \"{}\" has a type conflict",
            col.name
        )
        .with_detail(format!("{} versus {}", type_name(have), type_name(&col))));
    }
    have.not_null |= col.not_null;
    if col.default.is_some() {
        have.default = col.default;
    }
    Ok(())
}

fn type_name(c: &ColumnDef) -> String {
    c.domain.clone().unwrap_or_else(|| c.ty.to_string())
}

/// The inherited CHECK constraints bound over the child's `columns`.
pub fn inherited_checks(
    inh: &Inherited,
    table: &str,
    columns: &[ColumnDef],
) -> Result<Vec<CheckSpec>> {
    inh.checks
        .iter()
        .map(|(name, text)| {
            Ok(CheckSpec {
                name: Some(name.clone()),
                expr: crate::plan::check::bind_columns(table, columns, text)?,
                text: text.clone(),
                no_inherit: false,
                validated: true,
            })
        })
        .collect()
}

impl DdlContext<'_> {
    /// Marks each of `parents` as having children (a new catalog version
    /// when it was not yet marked). `temp`: the child is temporary.
    pub(super) fn mark_parents(&mut self, parents: &[u32], temp: bool) -> Result<()> {
        for &oid in parents {
            let parent = self
                .catalog
                .by_oid(&self.view(), oid)
                .ok_or_else(|| err!(InternalError, "parent table {oid} not found"))?;
            if !temp && self.catalog.is_temp(oid) {
                return Err(err!(
                    WrongObjectType,
                    "cannot inherit from temporary relation \"{}\"",
                    parent.name
                ));
            }
            if parent.has_subclass {
                continue;
            }
            let mut def = (*parent).clone();
            def.has_subclass = true;
            self.catalog
                .replace(&self.view(), self.xid, oid, Some(def))?;
            *self.catalog_changed = true;
        }
        Ok(())
    }

    /// The tables that inherit from `oid` directly, by oid.
    pub(super) fn children_of(&self, oid: u32) -> Vec<Arc<TableDef>> {
        let mut out: Vec<_> = self
            .catalog
            .tables(&self.view())
            .into_iter()
            .filter(|t| t.parents.contains(&oid))
            .collect();
        out.sort_by_key(|t| t.oid);
        out
    }

    /// `tables` followed by the tables inheriting from each that was not
    /// written `ONLY` (`only`, by position), each once, locked as the
    /// others (TRUNCATE's recursion).
    pub(super) fn with_inheritors(
        &mut self,
        mut tables: Vec<Arc<TableDef>>,
        only: &[bool],
    ) -> Result<Vec<Arc<TableDef>>> {
        let mut i = 0;
        let written = tables.len();
        while i < tables.len() {
            let t = tables[i].clone();
            let recurse = i >= written || !only.get(i).copied().unwrap_or(false);
            i += 1;
            if !recurse || !t.has_subclass {
                continue;
            }
            for child in self.children_of(t.oid) {
                if !tables.iter().any(|q| q.oid == child.oid) {
                    let locked =
                        self.lookup_table(&child.name, crate::txn::LockMode::AccessExclusive)?;
                    tables.push(locked);
                }
            }
        }
        Ok(tables)
    }

    /// DROP TABLE of `tables`: their children must be dropped too (with
    /// CASCADE, each named in a NOTICE, and returned) or the drop fails
    /// as PostgreSQL's dependency check does.
    pub(super) fn drop_children(
        &mut self,
        tables: &[Arc<TableDef>],
        cascade: bool,
        notices: &mut Vec<String>,
    ) -> Result<Vec<Arc<TableDef>>> {
        let mut extra: Vec<Arc<TableDef>> = Vec::new();
        let mut details = Vec::new();
        let mut i = 0;
        let mut queue: Vec<Arc<TableDef>> = tables.to_vec();
        while i < queue.len() {
            let t = queue[i].clone();
            i += 1;
            if !t.has_subclass {
                continue;
            }
            for child in self.children_of(t.oid) {
                if queue.iter().any(|q| q.oid == child.oid) {
                    continue;
                }
                details.push(format!("table {} depends on table {}", child.name, t.name));
                queue.push(child.clone());
                extra.push(child);
            }
        }
        if extra.is_empty() {
            return Ok(extra);
        }
        if !cascade {
            let what = &tables[0].name;
            return Err(err!(
                DependentObjectsStillExist,
                "cannot drop table {what} because other objects depend on it"
            )
            .with_detail(details.join("\n"))
            .with_hint("Use DROP ... CASCADE to drop the dependent objects too."));
        }
        let lines: Vec<String> = extra
            .iter()
            .map(|t| format!("drop cascades to table {}", t.name))
            .collect();
        notices.push(match &lines[..] {
            [one] => one.clone(),
            _ => format!(
                "drop cascades to {} other objects\nDETAIL:  {}",
                lines.len(),
                lines.join("\n")
            ),
        });
        let mut locked = Vec::new();
        for t in extra {
            locked.push(self.lookup_table(&t.name, crate::txn::LockMode::AccessExclusive)?);
        }
        Ok(locked)
    }
}
