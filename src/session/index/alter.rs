//! `ALTER TABLE ... ADD [CONSTRAINT name] PRIMARY KEY | UNIQUE (cols)`,
//! `ALTER TABLE ... DROP CONSTRAINT [IF EXISTS] name` and `REINDEX INDEX |
//! TABLE`.
//!
//! A constraint's index is made and named as CREATE TABLE's are
//! ([`Session::add_index`]): built from the rows the statement sees under
//! an ACCESS EXCLUSIVE lock, a primary key's columns checked for NULLs and
//! made NOT NULL (which stays when the constraint is dropped, as in
//! PostgreSQL 15). Dropping a constraint drops its index; the file goes at
//! commit. REINDEX builds each index anew into a fresh relation file (the
//! sorted bulk build, every page logged, its create record under the
//! transaction so recovery removes it if the transaction has no outcome)
//! and points the catalog at it; the old file is removed only after commit
//! and the new one at abort, so a crash at any point leaves one whole index.

use heapdb_grammar::ast;

use super::IndexSpec;
use crate::catalog::{IndexColumn, TableDef};
use crate::err;
use crate::error::Result;
use crate::plan::bind::at;
use crate::session::{Notice, QueryResult, Session};
use crate::txn::{LockMode, Snapshot};

impl Session {
    pub(crate) fn alter_table(&mut self, a: &ast::AlterTable) -> Result<QueryResult> {
        let snap = self.statement_snapshot();
        let mut r = QueryResult::empty("ALTER TABLE");
        if a.if_exists
            && self
                .db
                .catalog
                .lookup(&self.catalog_view(&snap), &a.table.name)
                .is_none()
        {
            r.notices.push(Notice::notice(format!(
                "relation \"{}\" does not exist, skipping",
                a.table.name
            )));
            return Ok(r);
        }
        let table = self
            .lookup_table(&snap, &a.table.name, LockMode::AccessExclusive)
            .map_err(|e| at(e, a.table.offset))?;
        let mut def = (*table).clone();
        let mut taken: Vec<String> = Vec::new();
        for action in &a.actions {
            match action {
                ast::AlterTableAction::AddConstraint {
                    name,
                    primary,
                    columns,
                    ..
                } => {
                    def = self.add_constraint(
                        &snap,
                        def,
                        name.as_deref(),
                        *primary,
                        columns,
                        &mut taken,
                    )?;
                }
                ast::AlterTableAction::DropConstraint {
                    if_exists, name, ..
                } => {
                    let Some(pos) = def
                        .indexes
                        .iter()
                        .position(|i| i.constraint && &i.name == name)
                    else {
                        let msg = format!(
                            "constraint \"{name}\" of relation \"{}\" does not exist",
                            def.name
                        );
                        if *if_exists {
                            r.notices.push(Notice::notice(format!("{msg}, skipping")));
                            continue;
                        }
                        return Err(err!(UndefinedObject, "{msg}"));
                    };
                    let xid = self.assign_xid()?;
                    let gone = def.indexes.remove(pos);
                    self.db.catalog.replace(
                        &self.catalog_view(&snap),
                        xid,
                        def.oid,
                        Some(def.clone()),
                    )?;
                    let txn = self.txn_mut();
                    txn.catalog_changed = true;
                    txn.drop_on_commit.push(gone.relfilenode);
                }
            }
        }
        Ok(r)
    }

    /// One `ADD [CONSTRAINT name] PRIMARY KEY | UNIQUE (columns)` of `def`;
    /// `taken`: the index names this statement chose so far.
    fn add_constraint(
        &mut self,
        snap: &Snapshot,
        def: TableDef,
        name: Option<&str>,
        primary: bool,
        columns: &[String],
        taken: &mut Vec<String>,
    ) -> Result<TableDef> {
        if primary && def.indexes.iter().any(|i| i.primary) {
            return Err(err!(
                InvalidTableDefinition,
                "multiple primary keys for table \"{}\" are not allowed",
                def.name
            ));
        }
        let mut cols = Vec::with_capacity(columns.len());
        for n in columns {
            let c = def.column_index(n).ok_or_else(|| {
                err!(
                    UndefinedColumn,
                    "column \"{n}\" named in key does not exist"
                )
            })?;
            cols.push(c);
        }
        let name = match name {
            Some(n) => {
                let view = self.catalog_view(snap);
                if taken.iter().any(|t| t == n) || self.db.catalog.relation_name_taken(&view, n) {
                    return Err(err!(DuplicateTable, "relation \"{n}\" already exists"));
                }
                n.to_string()
            }
            None => {
                let label = if primary { "pkey" } else { "key" };
                self.choose_index_name(snap, &def, &cols, label, taken)
            }
        };
        taken.push(name.clone());
        let spec = IndexSpec {
            name,
            columns: cols
                .iter()
                .map(|&column| IndexColumn {
                    column,
                    desc: false,
                    nulls_first: false,
                })
                .collect(),
            include: Vec::new(),
            unique: true,
            primary,
            constraint: true,
        };
        self.add_index(snap, &def, spec)
    }

    pub(crate) fn reindex(&mut self, r: &ast::Reindex) -> Result<QueryResult> {
        let snap = self.statement_snapshot();
        let view = self.catalog_view(&snap);
        let (table_name, only) = if r.table {
            if self.db.catalog.index_owner(&view, &r.name.name).is_some() {
                return Err(at(
                    err!(
                        WrongObjectType,
                        "\"{}\" is not a table or materialized view",
                        r.name.name
                    ),
                    r.name.offset,
                ));
            }
            (r.name.name.clone(), None)
        } else {
            match self.db.catalog.index_owner(&view, &r.name.name) {
                Some((owner, _)) => (owner.name.clone(), Some(r.name.name.clone())),
                None if self.db.catalog.lookup(&view, &r.name.name).is_some() => {
                    return Err(at(
                        err!(WrongObjectType, "\"{}\" is not an index", r.name.name),
                        r.name.offset,
                    ))
                }
                None => {
                    return Err(at(
                        err!(
                            UndefinedTable,
                            "relation \"{}\" does not exist",
                            r.name.name
                        ),
                        r.name.offset,
                    ))
                }
            }
        };
        // EXCLUSIVE while the new trees are built: writers, VACUUM and other
        // DDL wait, readers go on (with the old files); ACCESS EXCLUSIVE only
        // at the end, below. PostgreSQL takes SHARE on the table and ACCESS
        // EXCLUSIVE on each index, which its planner locks for every query;
        // readers here lock only tables, so the table lock must both serialise
        // rebuilds (SHARE would not) and, before the swap, keep readers out.
        let table = self
            .lookup_table(&snap, &table_name, LockMode::Exclusive)
            .map_err(|e| at(e, r.name.offset))?;
        let xid = self.assign_xid()?;
        let mut def = (*table).clone();
        for i in 0..def.indexes.len() {
            if only.as_ref().is_some_and(|n| n != &def.indexes[i].name) {
                continue;
            }
            let fresh = self.fresh_relfilenode();
            self.db.log_relation_create(xid, fresh)?;
            self.txn_mut().drop_on_abort.push(fresh);
            let mut ix = def.indexes[i].clone();
            ix.relfilenode = fresh;
            self.build_index(&snap, &def, &ix)?;
            let old = std::mem::replace(&mut def.indexes[i], ix).relfilenode;
            self.txn_mut().drop_on_commit.push(old);
        }
        // The old files are removed at commit: wait for the readers that may
        // be in them, and keep new ones out until then.
        let owner = self.txn_ref().owner;
        let tag = crate::txn::lock::LockTag::Relation(def.oid);
        self.db
            .locks
            .acquire(owner, tag, LockMode::AccessExclusive, &self.cancel)?;
        self.db
            .catalog
            .replace(&self.catalog_view(&snap), xid, def.oid, Some(def))?;
        self.txn_mut().catalog_changed = true;
        Ok(QueryResult::empty("REINDEX"))
    }
}
