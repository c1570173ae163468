//! `ALTER TABLE ... ADD [CONSTRAINT name] PRIMARY KEY | UNIQUE (cols)`,
//! `ALTER TABLE ... DROP CONSTRAINT [IF EXISTS] name` and `REINDEX INDEX |
//! TABLE` (the CHECK and NOT NULL actions are in `checkcmds`).
//!
//! A constraint's index is made and named as CREATE TABLE's are
//! ([`DdlContext::add_index`]): built from the rows the statement sees under
//! an ACCESS EXCLUSIVE lock, a primary key's columns checked for NULLs and
//! made NOT NULL (which stays when the constraint is dropped, as in
//! PostgreSQL 15). Dropping a constraint drops its index; the file goes at
//! commit. REINDEX builds each index anew into a fresh relation file (the
//! sorted bulk build, every page logged, its create record under the
//! transaction so recovery removes it if the transaction has no outcome)
//! and points the catalog at it; the old file is removed only after commit
//! and the new one at abort, so a crash at any point leaves one whole index.

use heapdb_grammar::ast;

use super::context::DdlContext;
use super::indexcmds::IndexSpec;
use crate::catalog::TableDef;
use crate::err;
use crate::error::Result;
use crate::plan::bind::at;
use crate::txn::LockMode;

impl DdlContext<'_> {
    /// DROP CONSTRAINT `name` of `def` when it is the unique index foreign
    /// keys reference: refused, or with `cascade` those keys go too.
    fn refuse_drop_referenced_key(
        &mut self,
        def: &TableDef,
        name: &str,
        cascade: bool,
        notices: &mut Vec<String>,
    ) -> Result<()> {
        let Some(ix) = def.indexes.iter().find(|i| i.constraint && i.name == name) else {
            return Ok(());
        };
        let (_, referencing) = self.catalog.foreign_keys_of(&self.view(), def.oid);
        let deps: Vec<_> = referencing
            .into_iter()
            .filter(|f| f.ref_index == ix.oid)
            .collect();
        if deps.is_empty() {
            return Ok(());
        }
        let child = |oid: u32| {
            self.catalog
                .by_oid(&self.view(), oid)
                .map_or_else(String::new, |c| c.name.clone())
        };
        if !cascade {
            let detail: Vec<String> = deps
                .iter()
                .map(|f| {
                    format!(
                        "constraint {} on table {} depends on index {}",
                        f.name,
                        child(f.table),
                        ix.name
                    )
                })
                .collect();
            return Err(err!(
                DependentObjectsStillExist,
                "cannot drop constraint {} on table {} because other objects depend on it",
                ix.name,
                def.name
            )
            .with_detail(detail.join("\n"))
            .with_hint("Use DROP ... CASCADE to drop the dependent objects too."));
        }
        for f in &deps {
            notices.push(format!(
                "drop cascades to constraint {} on table {}",
                f.name,
                child(f.table)
            ));
            self.catalog.drop_foreign_key(&self.view(), self.xid, f.oid);
        }
        *self.catalog_changed = true;
        Ok(())
    }

    /// ALTER TABLE ADD/DROP CONSTRAINT, RENAME CONSTRAINT, SET/DROP NOT
    /// NULL, SET/RESET (storage parameters); the NOTICEs it raises.
    pub fn alter_table(&mut self, a: &ast::AlterTable) -> Result<Vec<String>> {
        let mut notices = Vec::new();
        if a.if_exists && self.catalog.lookup(&self.view(), &a.table.name).is_none() {
            notices.push(format!(
                "relation \"{}\" does not exist, skipping",
                a.table.name
            ));
            return Ok(notices);
        }
        let table = self
            .lookup_table(&a.table.name, LockMode::AccessExclusive)
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
                    def =
                        self.add_constraint(def, name.as_deref(), *primary, columns, &mut taken)?;
                }
                ast::AlterTableAction::AddForeignKey {
                    name,
                    columns,
                    refs,
                    not_valid,
                    ..
                } => {
                    let spec = super::fkey::FkSpec {
                        name: name.clone(),
                        columns: columns.clone(),
                        refs: (**refs).clone(),
                    };
                    self.add_foreign_key(&def, &spec, !*not_valid, &mut taken)?;
                }
                ast::AlterTableAction::AddCheck(k) => {
                    let spec = super::checkcmds::CheckSpec::bind(
                        self.settings,
                        &def.name,
                        &def.columns,
                        k,
                        false,
                    )?;
                    def = self.alter_add_check(def, spec)?;
                }
                ast::AlterTableAction::RenameConstraint { old, new } => {
                    self.rename_constraint(&mut def, old, new)?;
                }
                ast::AlterTableAction::SetNotNull { column, set } => {
                    self.set_not_null(&mut def, column, *set)?;
                }
                ast::AlterTableAction::ValidateConstraint { name } => {
                    if self.validate_check(&mut def, name)? {
                        continue;
                    }
                    if self.validate_foreign_key(&def, name).is_none() {
                        return Err(err!(
                            UndefinedObject,
                            "constraint \"{name}\" of relation \"{}\" does not exist",
                            def.name
                        ));
                    }
                }
                ast::AlterTableAction::DropConstraint {
                    if_exists,
                    name,
                    cascade,
                } => {
                    if self.drop_foreign_key_named(&def, name) || self.drop_check(&mut def, name)? {
                        continue;
                    }
                    self.refuse_drop_referenced_key(&def, name, *cascade, &mut notices)?;
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
                            notices.push(format!("{msg}, skipping"));
                            continue;
                        }
                        return Err(err!(UndefinedObject, "{msg}"));
                    };
                    let xid = self.xid;
                    let gone = def.indexes.remove(pos);
                    self.catalog
                        .replace(&self.view(), xid, def.oid, Some(def.clone()))?;
                    *self.catalog_changed = true;
                    self.drop_on_commit.push(gone.relfilenode);
                }
                ast::AlterTableAction::SetOptions { reset, options } => {
                    let given = super::createtable::option_texts(
                        options.iter().map(|(n, v)| (n, v.as_ref())),
                    );
                    def.options =
                        crate::catalog::reloptions::transform(&def.options, &given, *reset)?;
                    let xid = self.xid;
                    self.catalog
                        .replace(&self.view(), xid, def.oid, Some(def.clone()))?;
                    *self.catalog_changed = true;
                }
                // The column forms: `commands::altercol`, run by the
                // caller one by one.
                ast::AlterTableAction::AddColumn { .. }
                | ast::AlterTableAction::DropColumn { .. }
                | ast::AlterTableAction::RenameColumn { .. }
                | ast::AlterTableAction::RenameTable { .. }
                | ast::AlterTableAction::SetDefault { .. }
                | ast::AlterTableAction::AlterType { .. } => {
                    return Err(err!(
                        InternalError,
                        "ALTER TABLE {action} ran as a constraint action"
                    ));
                }
            }
        }
        Ok(notices)
    }

    /// One `ADD [CONSTRAINT name] PRIMARY KEY | UNIQUE (columns)` of `def`;
    /// `taken`: the index names this statement chose so far.
    fn add_constraint(
        &mut self,
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
                if primary {
                    crate::commands::altercol::no_such_column(&def, n)
                } else {
                    err!(
                        UndefinedColumn,
                        "column \"{n}\" named in key does not exist"
                    )
                }
            })?;
            cols.push(c);
        }
        let name = self.constraint_index_name(&def, name, &cols, primary, taken)?;
        let spec = IndexSpec::constraint(name, &cols, primary);
        self.add_index(&def, spec)
    }

    /// REINDEX INDEX | TABLE.
    pub fn reindex(&mut self, r: &ast::Reindex) -> Result<()> {
        // PostgreSQL reports no position for REINDEX's object errors.
        let view = self.view();
        let (table_name, only) = if r.table {
            if self.catalog.index_owner(&view, &r.name.name).is_some() {
                return Err(err!(
                    WrongObjectType,
                    "\"{}\" is not a table or materialized view",
                    r.name.name
                ));
            }
            (r.name.name.clone(), None)
        } else {
            match self.catalog.index_owner(&view, &r.name.name) {
                Some((owner, _)) => (self.catalog.qualified(&owner), Some(r.name.name.clone())),
                None if self.catalog.lookup(&view, &r.name.name).is_some() => {
                    return Err(err!(WrongObjectType, "\"{}\" is not an index", r.name.name))
                }
                None => {
                    return Err(err!(
                        UndefinedTable,
                        "relation \"{}\" does not exist",
                        r.name.name
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
        let table = self.lookup_table(&table_name, LockMode::Exclusive)?;
        let xid = self.xid;
        let mut def = (*table).clone();
        for i in 0..def.indexes.len() {
            if only.as_ref().is_some_and(|n| n != &def.indexes[i].name) {
                continue;
            }
            let fresh = self.fresh_relfilenode();
            self.log_relation_create(fresh)?;
            self.drop_on_abort.push(fresh);
            let mut ix = def.indexes[i].clone();
            ix.relfilenode = fresh;
            self.build_index(&def, &ix)?;
            let old = std::mem::replace(&mut def.indexes[i], ix).relfilenode;
            self.drop_on_commit.push(old);
        }
        // The old files are removed at commit: wait for the readers that may
        // be in them, and keep new ones out until then.
        self.lookup_table(&table_name, LockMode::AccessExclusive)?;
        self.catalog
            .replace(&self.view(), xid, def.oid, Some(def))?;
        *self.catalog_changed = true;
        Ok(())
    }
}
