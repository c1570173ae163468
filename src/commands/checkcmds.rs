//! CHECK constraints' DDL (PostgreSQL's `AddRelationNewConstraints` and
//! the CHECK parts of `tablecmds.c`): a new check bound and named, ALTER
//! TABLE's ADD, VALIDATE, RENAME and DROP CONSTRAINT of a check, SET/DROP
//! NOT NULL, given a [`DdlContext`].
//!
//! A table's checks live in its definition ([`crate::catalog::CheckConstraint`]),
//! so every change here is a new table version, written to the catalog
//! file with the transaction's commit. Existing rows are checked by the
//! session after the change (ADD without NOT VALID, VALIDATE, SET NOT
//! NULL): it scans the table with the statement's snapshot.

use heapdb_grammar::ast;

use super::context::DdlContext;
use super::indexcmds::make_object_name;
use crate::catalog::{CheckConstraint, ColumnDef, TableDef};
use crate::err;
use crate::error::Result;
use crate::nodes::expr::Expr;
use crate::settings::Settings;

/// A check about to be added: bound, its name when one was written.
#[derive(Debug, Clone)]
pub struct CheckSpec {
    /// The written name.
    pub name: Option<String>,
    /// The condition over the table's columns.
    pub expr: Expr,
    /// Its text, as stored.
    pub text: String,
    /// `NO INHERIT`.
    pub no_inherit: bool,
    /// Existing rows are to be checked (CREATE TABLE, or ADD without NOT
    /// VALID).
    pub validated: bool,
}

impl CheckSpec {
    /// Binds `k` over `columns` of table `table` under `settings`;
    /// `create`: in CREATE TABLE (where NOT VALID is ignored, the table
    /// being new).
    pub fn bind(
        settings: &Settings,
        table: &str,
        columns: &[ColumnDef],
        k: &ast::CheckConstraint,
        create: bool,
    ) -> Result<CheckSpec> {
        let (expr, text) = crate::plan::check::bind_new(settings, table, columns, &k.expr)?;
        Ok(CheckSpec {
            name: k.name.clone(),
            expr,
            text,
            no_inherit: k.no_inherit,
            validated: create || !k.not_valid,
        })
    }
}

/// PostgreSQL's `ChooseConstraintName` for a check on `table` with
/// condition `e`: `table_col_check` when it reads one column, else
/// `table_check`, then `..._check1`, ..., the first `taken` refuses.
fn choose_name(table: &TableDef, e: &Expr, taken: &dyn Fn(&str) -> bool) -> String {
    let col = match crate::plan::check::columns_read(e)[..] {
        [c] => table.columns[c].name.clone(),
        _ => String::new(),
    };
    for pass in 0.. {
        let label = if pass == 0 {
            "check".to_string()
        } else {
            format!("check{pass}")
        };
        let name = make_object_name(&table.name, &col, &label);
        if !taken(&name) {
            return name;
        }
    }
    unreachable!("the name passes are unbounded")
}

impl DdlContext<'_> {
    /// Whether `table` has a constraint named `name`: a check, a foreign
    /// key or an index made by a constraint.
    pub(super) fn any_constraint_named(&self, table: &TableDef, name: &str) -> bool {
        table.checks.iter().any(|c| c.name == name) || self.constraint_name_taken(table, name)
    }

    /// `def` with the checks `specs` added (named, or given PostgreSQL's
    /// names); `create`: in CREATE TABLE, whose error for a repeated name
    /// differs.
    pub(super) fn add_checks(
        &self,
        mut def: TableDef,
        specs: &[CheckSpec],
        create: bool,
    ) -> Result<TableDef> {
        for s in specs {
            let name = match &s.name {
                Some(n) => {
                    if self.any_constraint_named(&def, n) {
                        return Err(if create {
                            err!(DuplicateObject, "check constraint \"{n}\" already exists")
                        } else {
                            err!(
                                DuplicateObject,
                                "constraint \"{n}\" for relation \"{}\" already exists",
                                def.name
                            )
                        });
                    }
                    n.clone()
                }
                None => choose_name(&def, &s.expr, &|n| self.any_constraint_named(&def, n)),
            };
            def.checks.push(CheckConstraint {
                comment: None,
                name,
                text: s.text.clone(),
                expr: s.expr.clone(),
                validated: s.validated,
                no_inherit: s.no_inherit,
            });
            def.checks.sort_by(|a, b| a.name.cmp(&b.name));
        }
        Ok(def)
    }

    /// Writes `def` as table `def.oid`'s new version.
    fn replace_table(&mut self, def: &TableDef) -> Result<()> {
        self.catalog
            .replace(&self.view(), self.xid, def.oid, Some(def.clone()))?;
        *self.catalog_changed = true;
        Ok(())
    }

    /// ALTER TABLE ADD CHECK `spec` to `def`; the new definition.
    pub(super) fn alter_add_check(&mut self, def: TableDef, spec: CheckSpec) -> Result<TableDef> {
        let def = self.add_checks(def, std::slice::from_ref(&spec), false)?;
        self.replace_table(&def)?;
        Ok(def)
    }

    /// VALIDATE CONSTRAINT of check `name`: whether `def` has one (marked
    /// validated; the session then checks the rows).
    pub(super) fn validate_check(&mut self, def: &mut TableDef, name: &str) -> Result<bool> {
        let Some(c) = def.checks.iter_mut().find(|c| c.name == name) else {
            return Ok(false);
        };
        if !c.validated {
            c.validated = true;
            self.replace_table(def)?;
        }
        Ok(true)
    }

    /// DROP CONSTRAINT of check `name`: whether `def` had one.
    pub(super) fn drop_check(&mut self, def: &mut TableDef, name: &str) -> Result<bool> {
        let Some(pos) = def.checks.iter().position(|c| c.name == name) else {
            return Ok(false);
        };
        def.checks.remove(pos);
        self.replace_table(def)?;
        Ok(true)
    }

    /// RENAME CONSTRAINT `old` TO `new` of `def`, a check's or an index
    /// constraint's (whose index takes the name).
    pub(super) fn rename_constraint(
        &mut self,
        def: &mut TableDef,
        old: &str,
        new: &str,
    ) -> Result<()> {
        let is_check = def.checks.iter().any(|c| c.name == old);
        let is_index = def.indexes.iter().any(|i| i.constraint && i.name == old);
        if !is_check && !is_index {
            return Err(err!(
                UndefinedObject,
                "constraint \"{old}\" for table \"{}\" does not exist",
                def.name
            ));
        }
        if self.any_constraint_named(def, new) {
            return Err(err!(
                DuplicateObject,
                "constraint \"{new}\" for relation \"{}\" already exists",
                def.name
            ));
        }
        if is_index {
            if self.catalog.relation_name_taken(&self.view(), new) {
                return Err(err!(DuplicateTable, "relation \"{new}\" already exists"));
            }
            for i in def.indexes.iter_mut().filter(|i| i.name == old) {
                i.name = new.to_string();
            }
        }
        for c in def.checks.iter_mut().filter(|c| c.name == old) {
            c.name = new.to_string();
        }
        def.checks.sort_by(|a, b| a.name.cmp(&b.name));
        self.replace_table(def)
    }

    /// ALTER COLUMN `column` SET (`set`) or DROP NOT NULL of `def` (the
    /// session then checks the rows for NULLs after SET).
    pub(super) fn set_not_null(
        &mut self,
        def: &mut TableDef,
        column: &str,
        set: bool,
    ) -> Result<()> {
        let Some(c) = def.column_index(column) else {
            return Err(err!(
                UndefinedColumn,
                "column \"{column}\" of relation \"{}\" does not exist",
                def.name
            ));
        };
        let in_primary_key = def
            .indexes
            .iter()
            .any(|i| i.primary && i.columns.iter().any(|k| k.column == c));
        if !set && in_primary_key {
            return Err(err!(
                InvalidTableDefinition,
                "column \"{column}\" is in a primary key"
            ));
        }
        if def.columns[c].not_null != set {
            def.columns[c].not_null = set;
            self.replace_table(def)?;
        }
        Ok(())
    }
}
