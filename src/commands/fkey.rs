//! Defining and dropping foreign keys (PostgreSQL's `ATAddForeignKeyConstraint`
//! and the foreign-key parts of `RemoveRelations` and `ExecuteTruncate`),
//! given a [`DdlContext`]: a `REFERENCES` clause or `FOREIGN KEY` table
//! constraint of CREATE TABLE or ALTER TABLE becomes a catalog entry
//! ([`crate::catalog::ForeignKeyDef`]) naming the referenced table's
//! unique index its checks probe; DROP TABLE refuses (or with CASCADE
//! drops) the constraints referencing a dropped table; TRUNCATE refuses a
//! referenced table unless its referencing tables go too (CASCADE adds
//! them).
//!
//! The referenced table is locked `Share` while a constraint is added (no
//! rows change under the definition; PostgreSQL takes SHARE ROW
//! EXCLUSIVE). Checking the existing rows of ALTER TABLE ADD FOREIGN KEY
//! and VALIDATE CONSTRAINT is the session's ([`crate::exec::fkey`]), run
//! once the entry is made.

use std::sync::Arc;

use heapdb_grammar::ast;

use super::context::DdlContext;
use super::indexcmds::make_object_name;
use crate::catalog::{FkAction, ForeignKeyDef, TableDef};
use crate::err;
use crate::error::Result;
use crate::txn::LockMode;
use crate::types::cast::{cast_kind, CastContext};
use crate::types::DataType;

/// A foreign key as CREATE TABLE or ALTER TABLE writes it.
#[derive(Debug, Clone)]
pub struct FkSpec {
    /// `CONSTRAINT name`, when written.
    pub name: Option<String>,
    /// The referencing columns.
    pub columns: Vec<String>,
    /// The `REFERENCES` part.
    pub refs: ast::ForeignKeyRef,
}

/// Whether a referencing column of type `fk` can reference one of type
/// `pk`: PostgreSQL asks for an equality operator of the referenced
/// index's operator family taking `fk` as it is or implicitly cast (so
/// integer widths mix, `int` references `numeric` or `real`, not the
/// other way round; the string types mix).
pub(crate) fn comparable(fk: &DataType, pk: &DataType) -> bool {
    let integer = |t: &DataType| matches!(t, DataType::Int2 | DataType::Int4 | DataType::Int8);
    let float = |t: &DataType| matches!(t, DataType::Float4 | DataType::Float8);
    fk.without_typmod() == pk.without_typmod()
        || (fk.is_string() && pk.is_string())
        || (integer(fk) && integer(pk))
        || (float(fk) && float(pk))
        || cast_kind(fk, pk) == Some(CastContext::Implicit)
}

/// Column positions of `names` in `table`, PostgreSQL's error for one that
/// is missing.
fn positions(table: &TableDef, names: &[String]) -> Result<Vec<usize>> {
    names
        .iter()
        .map(|n| {
            table.column_index(n).ok_or_else(|| {
                err!(
                    UndefinedColumn,
                    "column \"{n}\" referenced in foreign key constraint does not exist"
                )
            })
        })
        .collect()
}

impl DdlContext<'_> {
    /// Adds foreign key `spec` to `table` (its current definition):
    /// resolves and locks the referenced table, finds its unique index on
    /// the referenced columns, checks the types and chooses the name.
    /// `taken`: constraint names chosen earlier in the statement. Returns
    /// the constraint (its existing rows not yet checked).
    pub fn add_foreign_key(
        &mut self,
        table: &TableDef,
        spec: &FkSpec,
        validated: bool,
        taken: &mut Vec<String>,
    ) -> Result<Arc<ForeignKeyDef>> {
        let refs = &spec.refs;
        let parent = if refs.table.name == table.name && refs.table.schema.is_none() {
            Arc::new(table.clone())
        } else {
            self.lookup_table(
                &crate::catalog::qualified_name(refs.table.schema.as_deref(), &refs.table.name),
                LockMode::Share,
            )?
        };
        let columns = positions(table, &spec.columns)?;
        let (ref_columns, index) = self.referenced_key(&parent, &refs.columns)?;
        if columns.len() != ref_columns.len() {
            return Err(err!(
                InvalidForeignKey,
                "number of referencing and referenced columns for foreign key disagree"
            ));
        }
        let name = match &spec.name {
            Some(n) => {
                if self.constraint_name_taken(table, n) || taken.contains(n) {
                    return Err(err!(
                        DuplicateObject,
                        "constraint \"{n}\" for relation \"{}\" already exists",
                        table.name
                    ));
                }
                n.clone()
            }
            None => self.choose_fkey_name(table, &columns, taken),
        };
        for (&c, &r) in columns.iter().zip(&ref_columns) {
            let (a, b) = (&table.columns[c], &parent.columns[r]);
            if !comparable(&a.ty, &b.ty) {
                return Err(err!(
                    DatatypeMismatch,
                    "foreign key constraint \"{name}\" cannot be implemented"
                )
                .with_detail(format!(
                    "Key columns \"{}\" and \"{}\" are of incompatible types: {} and {}.",
                    a.name,
                    b.name,
                    a.ty.without_typmod(),
                    b.ty.without_typmod()
                )));
            }
        }
        let action = |a: &ast::FkAction| -> Result<FkAction> {
            Ok(match a {
                ast::FkAction::NoAction => FkAction::NoAction,
                ast::FkAction::Restrict => FkAction::Restrict,
                ast::FkAction::Cascade => FkAction::Cascade,
                ast::FkAction::SetNull(c) => FkAction::SetNull(set_columns(table, &columns, c)?),
                ast::FkAction::SetDefault(c) => {
                    FkAction::SetDefault(set_columns(table, &columns, c)?)
                }
            })
        };
        let (on_delete, on_update) = (action(&refs.on_delete)?, action(&refs.on_update)?);
        let def = ForeignKeyDef {
            comment: None,
            oid: self.catalog.next_oid(),
            name: name.clone(),
            table: table.oid,
            columns,
            ref_table: parent.oid,
            ref_columns,
            ref_index: index,
            on_delete,
            on_update,
            match_full: refs.match_full,
            deferrable: refs.deferrable || refs.initially_deferred,
            deferred: refs.initially_deferred,
            validated,
        };
        taken.push(name);
        let def = Arc::new(def);
        self.catalog.add_foreign_key(self.xid, (*def).clone());
        *self.catalog_changed = true;
        Ok(def)
    }

    /// The referenced columns (the primary key's when none are written)
    /// and the oid of the unique index on exactly them.
    fn referenced_key(&self, parent: &TableDef, names: &[String]) -> Result<(Vec<usize>, u32)> {
        if names.is_empty() {
            let pk = parent.indexes.iter().find(|i| i.primary).ok_or_else(|| {
                err!(
                    UndefinedObject,
                    "there is no primary key for referenced table \"{}\"",
                    parent.name
                )
            })?;
            return Ok((pk.columns.iter().map(|c| c.column).collect(), pk.oid));
        }
        let cols = positions(parent, names)?;
        let mut sorted = cols.clone();
        sorted.sort_unstable();
        if sorted.windows(2).any(|w| w[0] == w[1]) {
            return Err(err!(
                InvalidForeignKey,
                "foreign key referenced-columns list must not contain duplicates"
            ));
        }
        let found = parent.indexes.iter().find(|i| {
            let mut k: Vec<usize> = i.columns.iter().map(|c| c.column).collect();
            k.sort_unstable();
            i.unique && i.predicate.is_none() && k == sorted
        });
        match found {
            Some(ix) => Ok((cols, ix.oid)),
            None => Err(err!(
                InvalidForeignKey,
                "there is no unique constraint matching given keys for referenced table \"{}\"",
                parent.name
            )),
        }
    }

    /// Whether `table` has a constraint (foreign key, or index made by a
    /// constraint) named `name`.
    pub(super) fn constraint_name_taken(&self, table: &TableDef, name: &str) -> bool {
        let (own, _) = self.catalog.foreign_keys_of(&self.view(), table.oid);
        own.iter().any(|f| f.name == name)
            || table.indexes.iter().any(|i| i.constraint && i.name == name)
    }

    /// PostgreSQL's `ChooseConstraintName` for a foreign key:
    /// `table_col1_col2_fkey`, then `..._fkey1`, ...
    fn choose_fkey_name(&self, table: &TableDef, columns: &[usize], taken: &[String]) -> String {
        let cols: Vec<&str> = columns
            .iter()
            .map(|&c| table.columns[c].name.as_str())
            .collect();
        let name2 = cols.join("_");
        for pass in 0.. {
            let label = if pass == 0 {
                "fkey".to_string()
            } else {
                format!("fkey{pass}")
            };
            let name = make_object_name(&table.name, &name2, &label);
            if !taken.contains(&name) && !self.constraint_name_taken(table, &name) {
                return name;
            }
        }
        unreachable!("the name passes are unbounded")
    }

    /// DROP CONSTRAINT of foreign key `name` of `table`: whether there was
    /// one.
    pub fn drop_foreign_key_named(&mut self, table: &TableDef, name: &str) -> bool {
        let (own, _) = self.catalog.foreign_keys_of(&self.view(), table.oid);
        let Some(fk) = own.iter().find(|f| f.name == name) else {
            return false;
        };
        self.catalog
            .drop_foreign_key(&self.view(), self.xid, fk.oid);
        *self.catalog_changed = true;
        true
    }

    /// VALIDATE CONSTRAINT `name` of `table`: marks it validated (the
    /// session then checks the rows); the constraint, or None when `table`
    /// has no foreign key of that name.
    pub fn validate_foreign_key(
        &mut self,
        table: &TableDef,
        name: &str,
    ) -> Option<Arc<ForeignKeyDef>> {
        let (own, _) = self.catalog.foreign_keys_of(&self.view(), table.oid);
        let fk = own.into_iter().find(|f| f.name == name)?;
        if !fk.validated {
            let mut def = (*fk).clone();
            def.validated = true;
            self.catalog
                .drop_foreign_key(&self.view(), self.xid, fk.oid);
            self.catalog.add_foreign_key(self.xid, def);
            *self.catalog_changed = true;
        }
        Some(fk)
    }

    /// DROP TABLE's foreign keys: those of the dropped tables (`oids`) go
    /// with them; one referencing a dropped table from a table that stays
    /// is refused (2BP01) or, with `cascade`, dropped with a NOTICE.
    pub fn drop_table_foreign_keys(
        &mut self,
        tables: &[Arc<TableDef>],
        cascade: bool,
        notices: &mut Vec<String>,
    ) -> Result<()> {
        if !self.catalog.has_foreign_keys() {
            return Ok(());
        }
        let view = self.view();
        let dropped: Vec<u32> = tables.iter().map(|t| t.oid).collect();
        let mut blocking = Vec::new();
        let mut gone = Vec::new();
        for t in tables {
            let (own, referencing) = self.catalog.foreign_keys_of(&view, t.oid);
            gone.extend(own);
            for fk in referencing {
                if dropped.contains(&fk.table) {
                    continue;
                }
                let child = self
                    .catalog
                    .by_oid(&view, fk.table)
                    .map_or_else(String::new, |c| c.name.clone());
                blocking.push((fk, child, t.name.clone()));
            }
        }
        if !blocking.is_empty() && !cascade {
            let message = match tables {
                [one] => format!(
                    "cannot drop table {} because other objects depend on it",
                    one.name
                ),
                _ => "cannot drop desired object(s) because other objects depend on them".into(),
            };
            let detail: Vec<String> = blocking
                .iter()
                .map(|(fk, child, on)| {
                    format!(
                        "constraint {} on table {child} depends on table {on}",
                        fk.name
                    )
                })
                .collect();
            return Err(err!(DependentObjectsStillExist, "{message}")
                .with_detail(detail.join("\n"))
                .with_hint("Use DROP ... CASCADE to drop the dependent objects too."));
        }
        match &blocking[..] {
            [] => {}
            [(fk, child, _)] => notices.push(format!(
                "drop cascades to constraint {} on table {child}",
                fk.name
            )),
            many => notices.push(format!("drop cascades to {} other objects", many.len())),
        }
        let all: Vec<u32> = gone
            .iter()
            .chain(blocking.iter().map(|(fk, _, _)| fk))
            .map(|f| f.oid)
            .collect();
        for oid in &all {
            self.catalog.drop_foreign_key(&view, self.xid, *oid);
        }
        if !all.is_empty() {
            *self.catalog_changed = true;
        }
        Ok(())
    }

    /// TRUNCATE's foreign keys: a truncated table referenced from one that
    /// is not truncated is refused (0A000), or with `cascade` that table is
    /// added (with a NOTICE), and so on. Returns the tables to truncate.
    pub fn truncate_foreign_keys(
        &mut self,
        mut tables: Vec<Arc<TableDef>>,
        cascade: bool,
        notices: &mut Vec<String>,
    ) -> Result<Vec<Arc<TableDef>>> {
        if !self.catalog.has_foreign_keys() {
            return Ok(tables);
        }
        let mut i = 0;
        while i < tables.len() {
            let (_, referencing) = self.catalog.foreign_keys_of(&self.view(), tables[i].oid);
            for fk in referencing {
                if tables.iter().any(|t| t.oid == fk.table) {
                    continue;
                }
                let Some(child) = self.catalog.by_oid(&self.view(), fk.table) else {
                    continue;
                };
                if !cascade {
                    return Err(err!(
                        FeatureNotSupported,
                        "cannot truncate a table referenced in a foreign key constraint"
                    )
                    .with_detail(format!(
                        "Table \"{}\" references \"{}\".",
                        child.name, tables[i].name
                    ))
                    .with_hint(format!(
                        "Truncate table \"{}\" at the same time, or use TRUNCATE ... CASCADE.",
                        child.name
                    )));
                }
                notices.push(format!("truncate cascades to table \"{}\"", child.name));
                let locked =
                    self.lookup_table(&self.catalog.qualified(&child), LockMode::AccessExclusive)?;
                tables.push(locked);
            }
            i += 1;
        }
        Ok(tables)
    }
}

/// The columns of `SET NULL (cols)` / `SET DEFAULT (cols)`: each must be
/// one of the constraint's referencing columns.
fn set_columns(table: &TableDef, columns: &[usize], names: &[String]) -> Result<Vec<usize>> {
    let cols = positions(table, names)?;
    for (c, n) in cols.iter().zip(names) {
        if !columns.contains(c) {
            return Err(err!(
                InvalidForeignKey,
                "column \"{n}\" referenced in ON DELETE SET action must be part of foreign key"
            ));
        }
    }
    Ok(cols)
}

/// PostgreSQL's `pg_get_constraintdef` of foreign key `fk` of `child`
/// referencing `parent`: `FOREIGN KEY (b) REFERENCES p(a) ON DELETE
/// CASCADE`, as psql's `\d` shows it.
pub fn constraint_def(fk: &ForeignKeyDef, child: &TableDef, parent: &TableDef) -> String {
    let names = |t: &TableDef, cols: &[usize]| {
        cols.iter()
            .map(|&c| t.columns[c].name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut s = format!(
        "FOREIGN KEY ({}) REFERENCES {}({})",
        names(child, &fk.columns),
        parent.name,
        names(parent, &fk.ref_columns)
    );
    if fk.match_full {
        s.push_str(" MATCH FULL");
    }
    for (verb, action) in [("UPDATE", &fk.on_update), ("DELETE", &fk.on_delete)] {
        let (word, cols) = match action {
            FkAction::NoAction => continue,
            FkAction::Restrict => ("RESTRICT", &[][..]),
            FkAction::Cascade => ("CASCADE", &[][..]),
            FkAction::SetNull(c) => ("SET NULL", &c[..]),
            FkAction::SetDefault(c) => ("SET DEFAULT", &c[..]),
        };
        s.push_str(&format!(" ON {verb} {word}"));
        if !cols.is_empty() {
            s.push_str(&format!(" ({})", names(child, cols)));
        }
    }
    if fk.deferrable {
        s.push_str(" DEFERRABLE");
    }
    if fk.deferred {
        s.push_str(" INITIALLY DEFERRED");
    }
    if !fk.validated {
        s.push_str(" NOT VALID");
    }
    s
}
